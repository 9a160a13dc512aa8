/* GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
 * do not edit by hand. The phase-1 checks of replication_pad2d.c's described operators,
 * in the op_api's order (ascend_aclnn/ops/rules.py). */
#ifndef ACLSIM_GENERATED_REPLICATION_PAD2D_C
#define ACLSIM_GENERATED_REPLICATION_PAD2D_C

#include "../op_common.h"
#include <inttypes.h>

/* aclnnReplicationPad2d: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc self;
    opc_ints padding;
    aclsim_tensor_desc out;
} aclnnReplicationPad2d_args;
static const opc_dtypes aclnnReplicationPad2d_dtypes_1 = {11, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_INT32, ACL_INT64}, NULL};
static const opc_dtypes aclnnReplicationPad2d_dtypes_2 = {11, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_INT32, ACL_INT64}, NULL};

static int aclnnReplicationPad2d_checks(const char *api, const aclTensor *self, const aclIntArray *padding, const aclTensor *out, aclnnReplicationPad2d_args *a)
{
    const opc_arg args[] = {{"self", self, &a->self, NULL}, {"padding", padding, NULL, &a->padding}, {"out", out, &a->out, NULL}};
    int rc = opc_args(api, args, 3, NULL);
    if (rc) return rc;
    if ((rc = opc_check_same_format(api, &a->self, &a->out))) return rc;
    if ((rc = opc_check_dtype(api, &a->self, &aclnnReplicationPad2d_dtypes_1))) return rc;
    if ((rc = opc_check_dtype(api, &a->out, &aclnnReplicationPad2d_dtypes_2))) return rc;
    if ((rc = opc_check_same_dtype(api, &a->out, &a->self))) return rc;
    if (!(((((__int128)a->self.ndim) == ((__int128)3)) || (((__int128)a->self.ndim) == ((__int128)4)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D or 4-D, got %" PRId64 "-D %s", a->self.ndim, opc_shape(&a->self));
    if (!((((__int128)a->out.ndim) == ((__int128)a->self.ndim))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must have self's rank %" PRId64 ", got %" PRId64 "-D %s", a->self.ndim, a->out.ndim, opc_shape(&a->out));
    if (!((((__int128)a->padding.n) == ((__int128)4))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding length should be 4, got %" PRIu64 "", a->padding.n);
    if (!((opc_dims_agree(&a->out, &a->self, 0, -2) && ((((__int128)a->out.shape[a->out.ndim - 2]) == ((((__int128)a->self.shape[a->self.ndim - 2]) + ((__int128)a->padding.v[2])) + ((__int128)a->padding.v[3]))) && (((__int128)a->out.shape[a->out.ndim - 1]) == ((((__int128)a->self.shape[a->self.ndim - 1]) + ((__int128)a->padding.v[0])) + ((__int128)a->padding.v[1])))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape %s must be self's leading dims then H + top + bottom, W + left + right (self %s, padding %s)", opc_shape(&a->out), opc_shape(&a->self), opc_dims(a->padding.v, (int64_t)a->padding.n));
    if (!(((((((__int128)a->self.shape[a->self.ndim - 2]) + ((__int128)a->padding.v[2])) + ((__int128)a->padding.v[3])) >= ((__int128)0)) && (((((__int128)a->self.shape[a->self.ndim - 1]) + ((__int128)a->padding.v[0])) + ((__int128)a->padding.v[1])) >= ((__int128)0)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %s leaves a negative H or W for self %s", opc_dims(a->padding.v, (int64_t)a->padding.n), opc_shape(&a->self));
    if (!((!((opc_zero_from(&a->self, 0) || opc_zero_from(&a->out, 0)) && (((__int128)a->self.ndim) == ((__int128)3))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "empty tensors are only accepted with a 4-D self whose N is 0 (self is 3-D, %s)", opc_shape(&a->self));
    if (!((!((opc_zero_from(&a->self, 0) || opc_zero_from(&a->out, 0)) && opc_zero_from(&a->self, 1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must have C, H, W > 0 (only N may be 0), got %s", opc_shape(&a->self));
    return 0;
}

/* aclnnReplicationPad2dBackward: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc gradOutput;
    aclsim_tensor_desc self;
    opc_ints padding;
    aclsim_tensor_desc gradInput;
} aclnnReplicationPad2dBackward_args;
static const opc_dtypes aclnnReplicationPad2dBackward_dtypes_0 = {6, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128}, NULL};
static const opc_dtypes aclnnReplicationPad2dBackward_dtypes_1 = {6, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128}, NULL};
static const opc_dtypes aclnnReplicationPad2dBackward_dtypes_2 = {6, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128}, NULL};

static int aclnnReplicationPad2dBackward_checks(const char *api, const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding, const aclTensor *gradInput, aclnnReplicationPad2dBackward_args *a)
{
    const opc_arg args[] = {{"gradOutput", gradOutput, &a->gradOutput, NULL}, {"self", self, &a->self, NULL}, {"padding", padding, NULL, &a->padding}, {"gradInput", gradInput, &a->gradInput, NULL}};
    int rc = opc_args(api, args, 4, OPC_ORDER("self", "gradOutput", "gradInput", "padding"));
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->gradInput, &aclnnReplicationPad2dBackward_dtypes_0))) return rc;
    if ((rc = opc_check_dtype(api, &a->gradOutput, &aclnnReplicationPad2dBackward_dtypes_1))) return rc;
    if ((rc = opc_check_dtype(api, &a->self, &aclnnReplicationPad2dBackward_dtypes_2))) return rc;
    if ((rc = opc_check_same_dtype(api, &a->gradInput, &a->self))) return rc;
    if ((rc = opc_check_same_dtype(api, &a->gradOutput, &a->self))) return rc;
    if (!(!opc_is_private_format(a->gradOutput.format) && !opc_is_private_format(a->self.format) && !opc_is_private_format(a->gradInput.format)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "format only supports ND (gradOutput, self and gradInput use no private layout)");
    if (!(a->gradOutput.format == a->self.format && a->gradInput.format == a->self.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "formats of gradOutput %s (%d), self %s (%d) and gradInput %s (%d) must be equal", aclsim_format_name(a->gradOutput.format), (int)a->gradOutput.format, aclsim_format_name(a->self.format), (int)a->self.format, aclsim_format_name(a->gradInput.format), (int)a->gradInput.format);
    if (!(opc_dims_agree(&a->gradInput, &a->self, 0, 0)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradInput shape %s must equal self shape %s", opc_shape(&a->gradInput), opc_shape(&a->self));
    if (!(((((__int128)a->self.ndim) == ((__int128)3)) || (((__int128)a->self.ndim) == ((__int128)4)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D or 4-D, got %" PRId64 "-D %s", a->self.ndim, opc_shape(&a->self));
    if (!((((__int128)a->gradOutput.ndim) == ((__int128)a->self.ndim))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must have self's rank %" PRId64 ", got %" PRId64 "-D %s", a->self.ndim, a->gradOutput.ndim, opc_shape(&a->gradOutput));
    if (!((((__int128)a->padding.n) == ((__int128)4))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding length should be 4, got %" PRIu64 "", a->padding.n);
    if (!(((!(a->gradOutput.dtype == ACL_BF16)) || (((((((__int128)a->padding.v[0]) >= ((__int128)0)) && (((__int128)a->padding.v[1]) >= ((__int128)0))) && (((__int128)a->padding.v[2]) >= ((__int128)0))) && (((__int128)a->padding.v[3]) >= ((__int128)0))) && (((((__int128)a->padding.v[2]) == ((__int128)0)) && (((__int128)a->padding.v[3]) == ((__int128)0))) || ((((((__int128)a->padding.v[0]) <= ((__int128)7)) && (((__int128)a->padding.v[1]) <= ((__int128)7))) && (((__int128)a->padding.v[2]) <= ((__int128)7))) && (((__int128)a->padding.v[3]) <= ((__int128)7))))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "bf16 needs padding >= 0 and either top = bottom = 0 or every pad <= 7, got %s", opc_dims(a->padding.v, (int64_t)a->padding.n));
    if (!(((((__int128)a->gradOutput.shape[a->gradOutput.ndim - 2]) == ((((__int128)a->self.shape[a->self.ndim - 2]) + ((__int128)a->padding.v[2])) + ((__int128)a->padding.v[3]))) && (((__int128)a->gradOutput.shape[a->gradOutput.ndim - 1]) == ((((__int128)a->self.shape[a->self.ndim - 1]) + ((__int128)a->padding.v[0])) + ((__int128)a->padding.v[1]))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput shape %s must end with H + top + bottom, W + left + right (self %s, padding %s)", opc_shape(&a->gradOutput), opc_shape(&a->self), opc_dims(a->padding.v, (int64_t)a->padding.n));
    if (!((!(((opc_zero_from(&a->self, 0) || opc_zero_from(&a->gradOutput, 0)) || opc_zero_from(&a->gradInput, 0)) && (((__int128)a->self.ndim) == ((__int128)3))))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "empty tensors are only accepted with a 4-D self whose N is 0 (self is 3-D, %s)", opc_shape(&a->self));
    if (!((!(((opc_zero_from(&a->self, 0) || opc_zero_from(&a->gradOutput, 0)) || opc_zero_from(&a->gradInput, 0)) && opc_zero_from(&a->self, 1)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must have C, H, W > 0 (only N may be 0), got %s", opc_shape(&a->self));
    if (!(opc_dims_agree(&a->gradOutput, &a->self, 0, -2)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput %s and self %s must have the same leading dims", opc_shape(&a->gradOutput), opc_shape(&a->self));
    return 0;
}

#endif
