/*
 * mm.c - aclnnMm (out = self @ mat2, both 2-D) for the CPU simulator, with an
 * ND or a FRACTAL_NZ mat2; in the "nn" library of the split layout
 * (hicann/ops-nn matmul/mat_mul_v3). The simulated SoC is an Atlas A2.
 *
 * Phase 1, in the op_api's order:
 *   1. NULL self, mat2, out (161001), then live handles (561103);
 *   2. dtypes FLOAT, FLOAT16 or BF16 each (161002); with an NZ mat2, a FLOAT16
 *      self with a BF16 mat2 or the reverse (161002);
 *   3. self and mat2 2-D with equal k (161002);
 *   4. self's or out's storage format FRACTAL_NZ (161002).
 * Simulator-only, after those (161002): out must be (m, n) and of self's dtype
 * or FLOAT; cubeMathType must be 0..3 (KEEP_DTYPE, ALLOW_FP32_DOWN_PRECISION,
 * USE_FP16, USE_HF32); mat2's storage format must be ND or FRACTAL_NZ, and an
 * NZ mat2 must have n > 1 and k > 1 and the storage shape
 * (ceil(n/C0), ceil(k/16), 16, C0) with the op_api's C0 (16, or 8 for FLOAT:
 * aclnn_matmul.cpp's GetWeightNzShape), as the weight-NZ path requires; every
 * other private format is refused.
 *
 * The kernel (matmul_common.h) sums in double and rounds once.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_mm.h"
#include "matmul_common.h"

static aclnnStatus check_mm(const opc_call *c, const aclsim_tensor_desc *xd, const aclsim_tensor_desc *wd,
                            const aclsim_tensor_desc *yd, int8_t cubeMathType)
{
    const char *api = c->api;
    aclsim_tensor_desc x = *xd, w = *wd, y = *yd;
    int rc = 0;
    if (x.ndim != 2 || w.ndim != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self and mat2 must be 2-D, got %s and %s", opc_shape(&x),
                        opc_shape(&w));
    if (x.shape[1] != w.shape[0])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the k-axis of self %s and mat2 %s differ", opc_shape(&x),
                        opc_shape(&w));
    if ((rc = mmc_check_formats(api, &x, &y))) return rc;
    /* simulator-only */
    const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[1];
    const int64_t want[2] = {m, n};
    if (!opc_shape_is(&y, 2, want))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be %s, got %s", opc_dims(want, 2), opc_shape(&y));
    if ((rc = mmc_check_rest(api, &x, &w, &y, cubeMathType))) return rc;
    mmc_plan st = {.m = m, .k = k, .n = n, .xm = x.strides[0], .xk = x.strides[1], .wk = w.strides[0],
                   .wn = w.strides[1], .ym = y.strides[0], .yn = y.strides[1]};
    if (w.storage_format == ACL_FORMAT_FRACTAL_NZ) mmc_plan_nz(&st, &w);
    aclsim_tensor_desc descs[3] = {x, w, y};
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, m && n ? mmc_kernel : opc_noop_kernel);
}

MMC_ENTRY_POINTS(aclnnMm, mmc_check_dtypes, check_mm)
