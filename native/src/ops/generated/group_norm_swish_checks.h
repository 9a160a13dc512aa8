/* GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
 * do not edit by hand. The phase-1 checks of group_norm_swish.c's described operators,
 * in the op_api's order (ascend_aclnn/ops/rules.py). */
#ifndef ACLSIM_GENERATED_GROUP_NORM_SWISH_C
#define ACLSIM_GENERATED_GROUP_NORM_SWISH_C

#include "../op_common.h"
#include <inttypes.h>

/* aclnnGroupNormSwish: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc x;
    aclsim_tensor_desc gamma;
    aclsim_tensor_desc beta;
    int64_t numGroups;
    double eps;
    bool activateSwish;
    double swishScale;
    aclsim_tensor_desc yOut;
    aclsim_tensor_desc meanOut;
    aclsim_tensor_desc rstdOut;
} aclnnGroupNormSwish_args;
static const opc_dtypes aclnnGroupNormSwish_dtypes_0 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};

static int aclnnGroupNormSwish_checks(const char *api, const aclTensor *x, const aclTensor *gamma, const aclTensor *beta, int64_t numGroups, const char *dataFormatOptional, double eps, bool activateSwish, double swishScale, const aclTensor *yOut, const aclTensor *meanOut, const aclTensor *rstdOut, aclnnGroupNormSwish_args *a)
{
    a->numGroups = numGroups;
    (void)dataFormatOptional; /* no rule reads it */
    a->eps = eps;
    a->activateSwish = activateSwish;
    a->swishScale = swishScale;
    const opc_arg args[] = {{"x", x, &a->x, NULL}, {"gamma", gamma, &a->gamma, NULL}, {"beta", beta, &a->beta, NULL}, {"yOut", yOut, &a->yOut, NULL}, {"meanOut", meanOut, &a->meanOut, NULL}, {"rstdOut", rstdOut, &a->rstdOut, NULL}};
    int rc = opc_args(api, args, 6, NULL);
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->x, &aclnnGroupNormSwish_dtypes_0))) return rc;
    if (!(((a->gamma.dtype == ACL_FLOAT) || (a->gamma.dtype == a->x.dtype))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gamma dtype %s (%d) is not allowed with x dtype %s: it must be x's dtype or ACL_FLOAT (ACL_FLOAT only, for an ACL_FLOAT x)", aclsim_dtype_name(a->gamma.dtype), (int)a->gamma.dtype, aclsim_dtype_name(a->x.dtype));
    if (!((a->beta.dtype == a->gamma.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "beta dtype %s (%d) must equal gamma dtype %s", aclsim_dtype_name(a->beta.dtype), (int)a->beta.dtype, aclsim_dtype_name(a->gamma.dtype));
    if (!((a->yOut.dtype == a->x.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "yOut dtype %s (%d) must be %s (the dtype of x)", aclsim_dtype_name(a->yOut.dtype), (int)a->yOut.dtype, aclsim_dtype_name(a->x.dtype));
    if (!((a->meanOut.dtype == a->gamma.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "meanOut dtype %s (%d) must be %s (the dtype of gamma)", aclsim_dtype_name(a->meanOut.dtype), (int)a->meanOut.dtype, aclsim_dtype_name(a->gamma.dtype));
    if (!((a->rstdOut.dtype == a->gamma.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "rstdOut dtype %s (%d) must be %s (the dtype of gamma)", aclsim_dtype_name(a->rstdOut.dtype), (int)a->rstdOut.dtype, aclsim_dtype_name(a->gamma.dtype));
    if (!((((__int128)a->x.ndim) >= ((__int128)2))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "x must be 2-D to 8-D (N, C, *), got %" PRId64 "-D %s", a->x.ndim, opc_shape(&a->x));
    if (!(((a->gamma.ndim == 1) && ((__int128)a->gamma.shape[a->gamma.ndim - 1] == ((__int128)a->x.shape[1])))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "gamma must be 1-D of length C = %" PRId64 ", got %s", a->x.shape[1], opc_shape(&a->gamma));
    if (!(((a->beta.ndim == 1) && ((__int128)a->beta.shape[a->beta.ndim - 1] == ((__int128)a->x.shape[1])))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "beta must be 1-D of length C = %" PRId64 ", got %s", a->x.shape[1], opc_shape(&a->beta));
    if (!((((__int128)a->numGroups) > ((__int128)0))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "numGroups must be > 0, got %" PRId64 "", a->numGroups);
    if (!((opc_floormod(((__int128)a->x.shape[1]), ((__int128)a->numGroups)) == ((__int128)0))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "numGroups %" PRId64 " must divide the channel count C = %" PRId64 "", a->numGroups, a->x.shape[1]);
    if (!((((__int128)a->x.ndim) <= ((__int128)8))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "x must be 2-D to 8-D (N, C, *), got %" PRId64 "-D %s", a->x.ndim, opc_shape(&a->x));
    if (!((!opc_zero_from(&a->x, 0))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "x must not be empty, got %s", opc_shape(&a->x));
    if (!(opc_dims_agree(&a->yOut, &a->x, 0, 0)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "yOut must have shape x's, got %s", opc_shape(&a->yOut));
    if (!(opc_is_contiguous(&a->yOut)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "yOut must be contiguous (non-contiguous outputs are not supported)");
    if (!(((a->meanOut.ndim == 2) && ((__int128)a->meanOut.shape[a->meanOut.ndim - 2] == ((__int128)a->x.shape[0])) && ((__int128)a->meanOut.shape[a->meanOut.ndim - 1] == ((__int128)a->numGroups))))) {
        int64_t dims_want[ACLSIM_MAX_DIMS + 2], n_want = 0;
        dims_want[n_want++] = (int64_t)((__int128)a->x.shape[0]);
        dims_want[n_want++] = (int64_t)((__int128)a->numGroups);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "meanOut must have shape %s (N, numGroups), got %s", opc_dims(dims_want, n_want), opc_shape(&a->meanOut));
    }
    if (!(opc_is_contiguous(&a->meanOut)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "meanOut must be contiguous (non-contiguous outputs are not supported)");
    if (!(((a->rstdOut.ndim == 2) && ((__int128)a->rstdOut.shape[a->rstdOut.ndim - 2] == ((__int128)a->x.shape[0])) && ((__int128)a->rstdOut.shape[a->rstdOut.ndim - 1] == ((__int128)a->numGroups))))) {
        int64_t dims_want[ACLSIM_MAX_DIMS + 2], n_want = 0;
        dims_want[n_want++] = (int64_t)((__int128)a->x.shape[0]);
        dims_want[n_want++] = (int64_t)((__int128)a->numGroups);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "rstdOut must have shape %s (N, numGroups), got %s", opc_dims(dims_want, n_want), opc_shape(&a->rstdOut));
    }
    if (!(opc_is_contiguous(&a->rstdOut)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "rstdOut must be contiguous (non-contiguous outputs are not supported)");
    return 0;
}

/* aclnnGroupNormSwishGrad: its arguments after phase 1's pointer checks. */
typedef struct {
    aclsim_tensor_desc dy;
    aclsim_tensor_desc mean;
    aclsim_tensor_desc rstd;
    aclsim_tensor_desc x;
    aclsim_tensor_desc gamma;
    aclsim_tensor_desc beta;
    int64_t numGroups;
    double swishScale;
    bool dgammaIsRequire;
    bool dbetaIsRequire;
    aclsim_tensor_desc dxOut;
    aclsim_tensor_desc dgammaOut;
    aclsim_tensor_desc dbetaOut;
} aclnnGroupNormSwishGrad_args;
static const opc_dtypes aclnnGroupNormSwishGrad_dtypes_0 = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};

static int aclnnGroupNormSwishGrad_checks(const char *api, const aclTensor *dy, const aclTensor *mean, const aclTensor *rstd, const aclTensor *x, const aclTensor *gamma, const aclTensor *beta, int64_t numGroups, const char *dataFormatOptional, double swishScale, bool dgammaIsRequire, bool dbetaIsRequire, const aclTensor *dxOut, const aclTensor *dgammaOut, const aclTensor *dbetaOut, aclnnGroupNormSwishGrad_args *a)
{
    a->numGroups = numGroups;
    (void)dataFormatOptional; /* no rule reads it */
    a->swishScale = swishScale;
    a->dgammaIsRequire = dgammaIsRequire;
    a->dbetaIsRequire = dbetaIsRequire;
    const opc_arg args[] = {{"dy", dy, &a->dy, NULL}, {"mean", mean, &a->mean, NULL}, {"rstd", rstd, &a->rstd, NULL}, {"x", x, &a->x, NULL}, {"gamma", gamma, &a->gamma, NULL}, {"beta", beta, &a->beta, NULL}, {"dxOut", dxOut, &a->dxOut, NULL}, {"dgammaOut", dgammaOut, &a->dgammaOut, NULL}, {"dbetaOut", dbetaOut, &a->dbetaOut, NULL}};
    int rc = opc_args(api, args, 9, NULL);
    if (rc) return rc;
    if ((rc = opc_check_dtype(api, &a->dy, &aclnnGroupNormSwishGrad_dtypes_0))) return rc;
    if (!((a->mean.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mean dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->mean.dtype), (int)a->mean.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->rstd.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "rstd dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->rstd.dtype), (int)a->rstd.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->x.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "x dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->x.dtype), (int)a->x.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->gamma.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gamma dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->gamma.dtype), (int)a->gamma.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->beta.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "beta dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->beta.dtype), (int)a->beta.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->dxOut.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dxOut dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->dxOut.dtype), (int)a->dxOut.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->dgammaOut.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dgammaOut dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->dgammaOut.dtype), (int)a->dgammaOut.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!((a->dbetaOut.dtype == a->dy.dtype)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dbetaOut dtype %s (%d) must equal dy dtype %s (all tensors share one dtype)", aclsim_dtype_name(a->dbetaOut.dtype), (int)a->dbetaOut.dtype, aclsim_dtype_name(a->dy.dtype));
    if (!(opc_dims_agree(&a->x, &a->dy, 0, 0)))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "x shape %s must equal dy shape %s", opc_shape(&a->x), opc_shape(&a->dy));
    if (!(((((((__int128)a->dy.ndim) >= ((__int128)1)) && (((__int128)a->mean.ndim) >= ((__int128)2))) && (((__int128)a->mean.shape[1]) == ((__int128)a->numGroups))) && (((__int128)a->mean.shape[0]) == ((__int128)a->dy.shape[0])))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "mean must have shape [N, numGroups], N dy's first dim, numGroups %" PRId64 " (dy %s), got %s", a->numGroups, opc_shape(&a->dy), opc_shape(&a->mean));
    if (!(opc_dims_agree(&a->rstd, &a->mean, 0, 0)))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "rstd shape %s must equal mean shape %s", opc_shape(&a->rstd), opc_shape(&a->mean));
    if (!((((__int128)a->mean.ndim) == ((__int128)2))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "mean and rstd must be 2-D [N, numGroups], got %s", opc_shape(&a->mean));
    if (!((((__int128)a->dy.ndim) >= ((__int128)2))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "gamma must be 1-D of length C, but dy %s has no channel dimension (N, C, *)", opc_shape(&a->dy));
    if (!(((a->gamma.ndim == 1) && ((__int128)a->gamma.shape[a->gamma.ndim - 1] == ((__int128)a->dy.shape[1])))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "gamma must be 1-D of length C = %" PRId64 ", got %s", a->dy.shape[1], opc_shape(&a->gamma));
    if (!((((__int128)a->dy.ndim) >= ((__int128)2))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "beta must be 1-D of length C, but dy %s has no channel dimension (N, C, *)", opc_shape(&a->dy));
    if (!(((a->beta.ndim == 1) && ((__int128)a->beta.shape[a->beta.ndim - 1] == ((__int128)a->dy.shape[1])))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "beta must be 1-D of length C = %" PRId64 ", got %s", a->dy.shape[1], opc_shape(&a->beta));
    if (!((((__int128)a->dy.shape[0]) != ((__int128)0))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "N * numGroups must be > 0 (dy %s, numGroups %" PRId64 ")", opc_shape(&a->dy), a->numGroups);
    if (!((((__int128)a->numGroups) != ((__int128)0))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "N * numGroups must be > 0 (dy %s, numGroups %" PRId64 ")", opc_shape(&a->dy), a->numGroups);
    if (!((((__int128)a->dy.shape[1]) != ((__int128)0))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "numGroups %" PRId64 " must divide the channel count C = %" PRId64 " (C / numGroups > 0)", a->numGroups, a->dy.shape[1]);
    if (!(((opc_floordiv(((__int128)a->dy.shape[1]), ((__int128)a->numGroups)) != ((__int128)0)) && (opc_floormod(((__int128)a->dy.shape[1]), ((__int128)a->numGroups)) == ((__int128)0)))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "numGroups %" PRId64 " must divide the channel count C = %" PRId64 " (C / numGroups > 0)", a->numGroups, a->dy.shape[1]);
    if (!((!opc_zero_from(&a->dy, 2))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "dy must not be empty: H * W must be > 0, got %s", opc_shape(&a->dy));
    if (!((opc_floordiv(((__int128)a->dy.shape[1]), ((__int128)a->numGroups)) <= ((__int128)4000))))
        return opc_fail(ACLNN_ERR_INNER_TILING_ERROR, api, "C / numGroups = %" PRId64 " exceeds 4000 channels per group", (int64_t)opc_floordiv(((__int128)a->dy.shape[1]), ((__int128)a->numGroups)));
    if (!((((__int128)a->dy.ndim) <= ((__int128)8))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dy must be 2-D to 8-D (N, C, *), got %" PRId64 "-D %s", a->dy.ndim, opc_shape(&a->dy));
    if (!(opc_dims_agree(&a->dxOut, &a->dy, 0, 0)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dxOut must have shape dy's, got %s", opc_shape(&a->dxOut));
    if (!(opc_is_contiguous(&a->dxOut)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dxOut must be contiguous (non-contiguous outputs are not supported)");
    if (!(((a->dgammaOut.ndim == 1) && ((__int128)a->dgammaOut.shape[a->dgammaOut.ndim - 1] == ((__int128)a->dy.shape[1])))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dgammaOut must have shape [C], got %s", opc_shape(&a->dgammaOut));
    if (!(opc_is_contiguous(&a->dgammaOut)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dgammaOut must be contiguous (non-contiguous outputs are not supported)");
    if (!(((a->dbetaOut.ndim == 1) && ((__int128)a->dbetaOut.shape[a->dbetaOut.ndim - 1] == ((__int128)a->dy.shape[1])))))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dbetaOut must have shape [C], got %s", opc_shape(&a->dbetaOut));
    if (!(opc_is_contiguous(&a->dbetaOut)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dbetaOut must be contiguous (non-contiguous outputs are not supported)");
    return 0;
}

#endif
