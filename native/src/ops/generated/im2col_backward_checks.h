/* GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
 * do not edit by hand. The phase-1 checks of im2col_backward.c's described operators,
 * in the op_api's order (ascend_aclnn/ops/rules.py). */
#ifndef ACLSIM_GENERATED_IM2COL_BACKWARD_C
#define ACLSIM_GENERATED_IM2COL_BACKWARD_C

#include "../op_common.h"
#include <inttypes.h>

/* aclnnIm2colBackward: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc gradOutput;
    opc_ints inputSize;
    opc_ints kernelSize;
    opc_ints dilation;
    opc_ints padding;
    opc_ints stride;
    aclsim_tensor_desc out;
} aclnnIm2colBackward_args;
static const opc_dtypes aclnnIm2colBackward_dtypes_0 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};
static const opc_dtypes aclnnIm2colBackward_dtypes_1 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};

static int aclnnIm2colBackward_checks(const char *api, const aclTensor *gradOutput, const aclIntArray *inputSize, const aclIntArray *kernelSize, const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out, aclnnIm2colBackward_args *a)
{
    const opc_arg args[] = {{"gradOutput", gradOutput, &a->gradOutput, NULL}, {"inputSize", inputSize, NULL, &a->inputSize}, {"kernelSize", kernelSize, NULL, &a->kernelSize}, {"dilation", dilation, NULL, &a->dilation}, {"padding", padding, NULL, &a->padding}, {"stride", stride, NULL, &a->stride}, {"out", out, &a->out, NULL}};
    int rc = opc_args(api, args, 7, NULL);
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->gradOutput, &aclnnIm2colBackward_dtypes_0))) return rc;
    if ((rc = opc_check_dtype(api, &a->out, &aclnnIm2colBackward_dtypes_1))) return rc;
    if (!(((((__int128)a->gradOutput.ndim) == ((__int128)2)) || (((__int128)a->gradOutput.ndim) == ((__int128)3)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must be 2-D (C*kH*kW, L) or 3-D (N, C*kH*kW, L), got %" PRId64 "-D %s", a->gradOutput.ndim, opc_shape(&a->gradOutput));
    if (!((((__int128)a->out.ndim) == (((__int128)a->gradOutput.ndim) + ((__int128)1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must have one dimension more than gradOutput (%" PRId64 "), got %" PRId64 "-D %s", a->gradOutput.ndim, a->out.ndim, opc_shape(&a->out));
    if (!((((__int128)a->inputSize.n) == ((__int128)2))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize must have 2 elements (H, W), got %" PRIu64 "", a->inputSize.n);
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
    if (!(((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %" PRId64 " on axis 0 makes the padded size %" PRId64 " + 2*padding overflow int64", a->padding.v[0], (int64_t)((__int128)a->inputSize.v[0]));
    if (!((opc_sat(opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1))) + ((__int128)1)) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize %" PRId64 " with dilation %" PRId64 " spans more than INT64_MAX on axis 1", a->kernelSize.v[1], a->dilation.v[1]);
    if (!(((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) <= ((__int128)9223372036854775807))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %" PRId64 " on axis 1 makes the padded size %" PRId64 " + 2*padding overflow int64", a->padding.v[1], (int64_t)((__int128)a->inputSize.v[1]));
    if (!((opc_mul_sat(((__int128)a->kernelSize.v[0]), ((__int128)a->kernelSize.v[1])) < (((__int128)1ULL << 64) + (__int128)0ULL))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize is too large");
    if (!((opc_floormod(((__int128)a->gradOutput.shape[a->gradOutput.ndim - 2]), opc_mul_sat(((__int128)a->kernelSize.v[0]), ((__int128)a->kernelSize.v[1]))) == ((__int128)0))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput.shape[-2] = %" PRId64 " must be divisible by kernelSize[0]*kernelSize[1] = %" PRIu64 "", (int64_t)((__int128)a->gradOutput.shape[a->gradOutput.ndim - 2]), (uint64_t)((__int128)((uint64_t)((__int128)a->kernelSize.v[0]) * (uint64_t)((__int128)a->kernelSize.v[1]))));
    if (!(((((opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])) >= (-((__int128)9223372036854775808ULL))) && (opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])) <= ((__int128)9223372036854775807))) && (opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])) >= (-((__int128)9223372036854775808ULL)))) && (opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])) <= ((__int128)9223372036854775807)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize or the arrays are too large");
    if (!((((__int128)a->gradOutput.shape[a->gradOutput.ndim - 1]) == ((__int128)((uint64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])) * (uint64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput.shape[-1] = %" PRId64 " must be %" PRIu64 " (%" PRId64 " x %" PRId64 " blocks from inputSize (%" PRId64 ", %" PRId64 "))", (int64_t)((__int128)a->gradOutput.shape[a->gradOutput.ndim - 1]), (uint64_t)((__int128)((uint64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])) * (uint64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])))), (int64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])), (int64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])), a->inputSize.v[0], a->inputSize.v[1]);
    if (!((!((opc_mul_sat(opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])), opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1]))) != ((__int128)0)) && ((opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])) < ((__int128)0)) || (opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])) < ((__int128)0)))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize (%" PRId64 ", %" PRId64 ") fits no block: %" PRId64 " x %" PRId64 " blocks", a->inputSize.v[0], a->inputSize.v[1], (int64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])), (int64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])));
    if (!((opc_lead_is(&a->out, &a->gradOutput, -2, 3) && ((__int128)a->out.shape[a->out.ndim - 3] == opc_floordiv(((__int128)a->gradOutput.shape[a->gradOutput.ndim - 2]), opc_mul_sat(((__int128)a->kernelSize.v[0]), ((__int128)a->kernelSize.v[1])))) && ((__int128)a->out.shape[a->out.ndim - 2] == ((__int128)a->inputSize.v[0])) && ((__int128)a->out.shape[a->out.ndim - 1] == ((__int128)a->inputSize.v[1]))))) {
        int64_t dims_want[ACLSIM_MAX_DIMS + 3], n_want = opc_lead(dims_want, &a->gradOutput, -2);
        dims_want[n_want++] = (int64_t)opc_floordiv(((__int128)a->gradOutput.shape[a->gradOutput.ndim - 2]), opc_mul_sat(((__int128)a->kernelSize.v[0]), ((__int128)a->kernelSize.v[1])));
        dims_want[n_want++] = (int64_t)((__int128)a->inputSize.v[0]);
        dims_want[n_want++] = (int64_t)((__int128)a->inputSize.v[1]);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s, got %s", opc_dims(dims_want, n_want), opc_shape(&a->out));
    }
    return 0;
}

static inline int64_t aclnnIm2colBackward_ho(const aclnnIm2colBackward_args *a) { return (int64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[0]) + (((__int128)2) * ((__int128)a->padding.v[0]))) - opc_mul_sat(((__int128)a->dilation.v[0]), (((__int128)a->kernelSize.v[0]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[0])), ((__int128)a->stride.v[0])); }

static inline int64_t aclnnIm2colBackward_wo(const aclnnIm2colBackward_args *a) { return (int64_t)opc_truncdiv(opc_sat(opc_sat(opc_sat((((__int128)a->inputSize.v[1]) + (((__int128)2) * ((__int128)a->padding.v[1]))) - opc_mul_sat(((__int128)a->dilation.v[1]), (((__int128)a->kernelSize.v[1]) - ((__int128)1)))) - ((__int128)1)) + ((__int128)a->stride.v[1])), ((__int128)a->stride.v[1])); }

#endif
