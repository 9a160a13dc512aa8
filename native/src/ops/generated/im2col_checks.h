/* GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
 * do not edit by hand. The phase-1 checks of im2col.c's described operators,
 * in the op_api's order (ascend_aclnn/ops/rules.py). */
#ifndef ACLSIM_GENERATED_IM2COL_C
#define ACLSIM_GENERATED_IM2COL_C

#include "../op_common.h"
#include <inttypes.h>

/* aclnnIm2col: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc self;
    opc_ints kernelSize;
    opc_ints dilation;
    opc_ints padding;
    opc_ints stride;
    aclsim_tensor_desc out;
} aclnnIm2col_args;
static const opc_dtypes aclnnIm2col_dtypes_0 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};
static const opc_dtypes aclnnIm2col_dtypes_19 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};

static int aclnnIm2col_checks(const char *api, const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out, aclnnIm2col_args *a)
{
    const opc_arg args[] = {{"self", self, &a->self, NULL}, {"kernelSize", kernelSize, NULL, &a->kernelSize}, {"dilation", dilation, NULL, &a->dilation}, {"padding", padding, NULL, &a->padding}, {"stride", stride, NULL, &a->stride}, {"out", out, &a->out, NULL}};
    int rc = opc_args(api, args, 6, NULL);
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->self, &aclnnIm2col_dtypes_0))) return rc;
    if (!(((((__int128)a->self.ndim) == ((__int128)3)) || (((__int128)a->self.ndim) == ((__int128)4)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got %" PRId64 "-D %s", a->self.ndim, opc_shape(&a->self));
    if (!((((((__int128)a->self.shape[a->self.ndim - 3]) > ((__int128)0)) && (((__int128)a->self.shape[a->self.ndim - 2]) > ((__int128)0))) && (((__int128)a->self.shape[a->self.ndim - 1]) > ((__int128)0)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dims C, H, W must be > 0, got %s", opc_shape(&a->self));
    if (!((((__int128)a->kernelSize.n) == ((__int128)2))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize must have 2 elements (H, W), got %" PRIu64 "", a->kernelSize.n);
    if (!((((__int128)a->dilation.n) == ((__int128)2))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dilation must have 2 elements (H, W), got %" PRIu64 "", a->dilation.n);
    if (!((((__int128)a->padding.n) == ((__int128)2))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding must have 2 elements (H, W), got %" PRIu64 "", a->padding.n);
    if (!((((__int128)a->stride.n) == ((__int128)2))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "stride must have 2 elements (H, W), got %" PRIu64 "", a->stride.n);
    if (!(((((__int128)a->kernelSize.v[0]) >= ((__int128)1)) && (((__int128)a->kernelSize.v[1]) >= ((__int128)1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize must be >= 1, got (%" PRId64 ", %" PRId64 ")", a->kernelSize.v[0], a->kernelSize.v[1]);
    if (!(((((__int128)a->stride.v[0]) >= ((__int128)1)) && (((__int128)a->stride.v[1]) >= ((__int128)1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "stride must be >= 1, got (%" PRId64 ", %" PRId64 ")", a->stride.v[0], a->stride.v[1]);
    if (!(((((__int128)a->dilation.v[0]) >= ((__int128)1)) && (((__int128)a->dilation.v[1]) >= ((__int128)1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dilation must be >= 1, got (%" PRId64 ", %" PRId64 ")", a->dilation.v[0], a->dilation.v[1]);
    if (!(((((__int128)a->padding.v[0]) >= ((__int128)0)) && (((__int128)a->padding.v[1]) >= ((__int128)0)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding must be >= 0, got (%" PRId64 ", %" PRId64 ")", a->padding.v[0], a->padding.v[1]);
    if (!((opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1)) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize %" PRId64 " with dilation %" PRId64 " spans more than INT64_MAX on axis 0", a->kernelSize.v[0], a->dilation.v[0]);
    if (!(((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %" PRId64 " on axis 0 makes the padded size %" PRId64 " + 2*padding overflow int64", a->padding.v[0], (int64_t)((__int128)a->self.shape[a->self.ndim - 2]));
    if (!((opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1)) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize %" PRId64 " with dilation %" PRId64 " spans more than INT64_MAX on axis 1", a->kernelSize.v[1], a->dilation.v[1]);
    if (!(((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %" PRId64 " on axis 1 makes the padded size %" PRId64 " + 2*padding overflow int64", a->padding.v[1], (int64_t)((__int128)a->self.shape[a->self.ndim - 1]));
    if (!(((opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)) < ((__int128)9223372036854775807)) && (opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1)) < ((__int128)9223372036854775807)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize, dilation, padding or stride is too large");
    if (!(((opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)) >= ((__int128)1)) && (opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1)) >= ((__int128)1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self %s fits no block: the block counts (%" PRId64 ", %" PRId64 ") computed from its H, W and the arrays must be at least one", opc_shape(&a->self), (int64_t)opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)), (int64_t)opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1)));
    if (!(((opc_mul_sat(opc_mul_sat(((__int128)a->self.shape[a->self.ndim - 3]), ((__int128)a->kernelSize.v[0])), ((__int128)a->kernelSize.v[1])) <= ((__int128)9223372036854775807)) && (opc_mul_sat(opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)), opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1))) <= ((__int128)9223372036854775807)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out would be too large");
    if (!((opc_lead_is(&a->out, &a->self, -3, 2) && ((__int128)a->out.shape[a->out.ndim - 2] == opc_mul_sat(opc_mul_sat(((__int128)a->self.shape[a->self.ndim - 3]), ((__int128)a->kernelSize.v[0])), ((__int128)a->kernelSize.v[1]))) && ((__int128)a->out.shape[a->out.ndim - 1] == opc_mul_sat(opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)), opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1))))))) {
        int64_t dims_want[ACLSIM_MAX_DIMS + 2], n_want = opc_lead(dims_want, &a->self, -3);
        dims_want[n_want++] = (int64_t)opc_mul_sat(opc_mul_sat(((__int128)a->self.shape[a->self.ndim - 3]), ((__int128)a->kernelSize.v[0])), ((__int128)a->kernelSize.v[1]));
        dims_want[n_want++] = (int64_t)opc_mul_sat(opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)), opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1)));
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s, got %s", opc_dims(dims_want, n_want), opc_shape(&a->out));
    }
    if ((rc = opc_check_dtype(api, &a->out, &aclnnIm2col_dtypes_19))) return rc;
    return 0;
}

static inline int64_t aclnnIm2col_ho(const aclnnIm2col_args *a) { return (int64_t)opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 2]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[0])) + ((__int128)1)); }

static inline int64_t aclnnIm2col_wo(const aclnnIm2col_args *a) { return (int64_t)opc_sat(opc_floordiv(opc_sat((((__int128)a->self.shape[a->self.ndim - 1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1))), ((__int128)a->stride.v[1])) + ((__int128)1)); }

#endif
