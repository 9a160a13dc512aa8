/* GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
 * do not edit by hand. The phase-1 checks of upsample_nearest_exact1d.c's described operators,
 * in the op_api's order (ascend_aclnn/ops/rules.py). */
#ifndef ACLSIM_GENERATED_UPSAMPLE_NEAREST_EXACT1D_C
#define ACLSIM_GENERATED_UPSAMPLE_NEAREST_EXACT1D_C

#include "../op_common.h"
#include <inttypes.h>

/* aclnnUpsampleNearestExact1d: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc self;
    opc_ints outputSize;
    double scales;
    aclsim_tensor_desc out;
} aclnnUpsampleNearestExact1d_args;
static const opc_dtypes aclnnUpsampleNearestExact1d_dtypes_0 = {4, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_UINT8}, NULL};

static int aclnnUpsampleNearestExact1d_checks(const char *api, const aclTensor *self, const aclIntArray *outputSize, double scales, const aclTensor *out, aclnnUpsampleNearestExact1d_args *a)
{
    a->scales = scales;
    const opc_arg args[] = {{"self", self, &a->self, NULL}, {"outputSize", outputSize, NULL, &a->outputSize}, {"out", out, &a->out, NULL}};
    int rc = opc_args(api, args, 3, NULL);
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->self, &aclnnUpsampleNearestExact1d_dtypes_0))) return rc;
    if ((rc = opc_check_same_dtype(api, &a->out, &a->self))) return rc;
    if (!((a->self.format == ACL_FORMAT_NCL || a->self.format == ACL_FORMAT_ND)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2)");
    if (!((a->out.format == ACL_FORMAT_NCL || a->out.format == ACL_FORMAT_ND)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2)");
    if (!((((__int128)a->self.ndim) == ((__int128)3))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (N, C, L), got %" PRId64 "-D %s", a->self.ndim, opc_shape(&a->self));
    if (!((((__int128)a->outputSize.n) == ((__int128)1))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize must have exactly 1 element, got %" PRIu64 "", a->outputSize.n);
    if (!((!opc_zero_from(&a->self, 0))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dims N, C, L must all be > 0, got %s", opc_shape(&a->self));
    if (!((((__int128)a->outputSize.v[0]) > ((__int128)0))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize[0] must be > 0, got %" PRId64 "", a->outputSize.v[0]);
    if (!((((((__int128)a->out.ndim) == ((__int128)3)) && opc_dims_agree(&a->out, &a->self, 0, 2)) && (((__int128)a->out.shape[2]) == ((__int128)a->outputSize.v[0])))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must have shape [%" PRId64 ", %" PRId64 ", %" PRId64 "] (N, C, outputSize[0]), got %s", a->self.shape[0], a->self.shape[1], a->outputSize.v[0], opc_shape(&a->out));
    return 0;
}

/* aclnnUpsampleNearestExact1dBackward: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc gradOutput;
    opc_ints outputSize;
    opc_ints inputSize;
    double scales;
    aclsim_tensor_desc out;
} aclnnUpsampleNearestExact1dBackward_args;
static const opc_dtypes aclnnUpsampleNearestExact1dBackward_dtypes_0 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};

static int aclnnUpsampleNearestExact1dBackward_checks(const char *api, const aclTensor *gradOutput, const aclIntArray *outputSize, const aclIntArray *inputSize, double scales, const aclTensor *out, aclnnUpsampleNearestExact1dBackward_args *a)
{
    a->scales = scales;
    const opc_arg args[] = {{"gradOutput", gradOutput, &a->gradOutput, NULL}, {"outputSize", outputSize, NULL, &a->outputSize}, {"inputSize", inputSize, NULL, &a->inputSize}, {"out", out, &a->out, NULL}};
    int rc = opc_args(api, args, 4, OPC_ORDER("gradOutput", "inputSize", "out", "outputSize"));
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->gradOutput, &aclnnUpsampleNearestExact1dBackward_dtypes_0))) return rc;
    if ((rc = opc_check_same_dtype(api, &a->out, &a->gradOutput))) return rc;
    if ((rc = opc_check_same_format(api, &a->gradOutput, &a->out))) return rc;
    if (!((a->gradOutput.format == ACL_FORMAT_NCL || a->gradOutput.format == ACL_FORMAT_ND)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2)");
    if (!((((__int128)a->gradOutput.ndim) == ((__int128)3))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must be 3-D (N, C, L), got %" PRId64 "-D %s", a->gradOutput.ndim, opc_shape(&a->gradOutput));
    if (!((((__int128)a->out.ndim) == ((__int128)3))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be 3-D (N, C, L), got %" PRId64 "-D %s", a->out.ndim, opc_shape(&a->out));
    if (!((((__int128)a->inputSize.n) == ((__int128)3))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize must have 3 elements (N, C, L), got %" PRIu64 "", a->inputSize.n);
    if (!((((__int128)a->outputSize.n) == ((__int128)1))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize must have exactly 1 element, got %" PRIu64 "", a->outputSize.n);
    if (!(opc_dims_agree(&a->out, &a->gradOutput, 0, 2)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput %s and out %s must have the same N and C", opc_shape(&a->gradOutput), opc_shape(&a->out));
    if (!((!(a->scales < ((__int128)0)))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scales must be >= 0 (0 = derive from sizes), got %g", a->scales);
    if (!((((a->scales > ((__int128)0)) ? ((double)1.0 / (double)a->scales) : ((((__int128)a->gradOutput.shape[2]) != ((__int128)0)) ? ((double)((__int128)a->inputSize.v[2]) / (double)((__int128)a->gradOutput.shape[2])) : 0.0)) >= 0.02)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scales is too large: the input/output length ratio is below 0.02 (more than 50x magnification; scales=%g, inputSize %s, gradOutput %s)", a->scales, opc_dims(a->inputSize.v, (int64_t)a->inputSize.n), opc_shape(&a->gradOutput));
    if (!((!opc_zero_from(&a->gradOutput, 0))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput dims N, C, L must all be > 0, got %s", opc_shape(&a->gradOutput));
    if (!((((__int128)a->inputSize.v[2]) > ((__int128)0))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize[2] must be > 0, got %s", opc_dims(a->inputSize.v, (int64_t)a->inputSize.n));
    if (!((((((__int128)a->out.shape[0]) == ((__int128)a->inputSize.v[0])) && (((__int128)a->out.shape[1]) == ((__int128)a->inputSize.v[1]))) && (((__int128)a->out.shape[2]) == ((__int128)a->inputSize.v[2])))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape %s must equal inputSize %s", opc_shape(&a->out), opc_dims(a->inputSize.v, (int64_t)a->inputSize.n));
    return 0;
}

#endif
