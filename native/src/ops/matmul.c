/*
 * matmul.c - aclnnMatmul (out = self @ mat2 as torch.matmul: 1 to 6 dims each,
 * a 1-D operand taken as a row or a column and dropped from out, batch dims
 * broadcast) for the CPU simulator, with an ND or a FRACTAL_NZ mat2; in the
 * "nn" library of the split layout (hicann/ops-nn matmul/mat_mul_v3,
 * aclnn_matmul.cpp). The simulated SoC is an Atlas A2.
 *
 * Phase 1, in the op_api's order (CheckInputParams):
 *   1. NULL self, mat2, out (161001), then live handles (561103);
 *   2. dtypes FLOAT, FLOAT16 or BF16 each (161002); with an NZ mat2, a FLOAT16
 *      self with a BF16 mat2 or the reverse (161002);
 *   3. shapes (161002): more than 6 dims, or 0 dims; the k-axis (self's last
 *      dim; mat2's first when it has 1 or 2 dims, else its second-to-last);
 *      with both 2-D or more, batch dims (all but the last two) that do not
 *      broadcast;
 *   4. self's or out's storage format FRACTAL_NZ (161002).
 * Simulator-only, after those (161002): out must have torch.matmul's shape,
 * then mm.c's rules (matmul_common.h): out of self's dtype or FLOAT,
 * cubeMathType 0..3, mat2 ND/public or FRACTAL_NZ, an NZ mat2 with n, k > 1
 * and its weight-NZ storage shape (batch dims kept).
 *
 * The kernel (matmul_common.h) sums in double and rounds once; an empty k gives
 * zeros, an empty out runs nothing.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_matmul.h"
#include "matmul_common.h"

#define MAX_DIMS 6

/* The batch dims of out, broadcast from self's and mat2's (all but their last two);
 * 0 with out's in p, or 161002. */
static int broadcast_batch(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *w, mmc_plan *p)
{
    const int xb = x->ndim > 2 ? (int)x->ndim - 2 : 0, wb = w->ndim > 2 ? (int)w->ndim - 2 : 0;
    p->nb = xb > wb ? xb : wb;
    for (int d = 0; d < p->nb; d++) {
        const int i = d - (p->nb - xb), j = d - (p->nb - wb);
        const int64_t a = i >= 0 ? x->shape[i] : 1, b = j >= 0 ? w->shape[j] : 1;
        if (a != b && a != 1 && b != 1)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the batch dims of self %s and mat2 %s do not broadcast",
                            opc_shape(x), opc_shape(w));
        p->batch[d] = a == 1 ? b : a;
        p->xb[d] = i >= 0 && a != 1 ? x->strides[i] : 0;
        p->wb[d] = j >= 0 && b != 1 ? w->strides[j] : 0;
    }
    return 0;
}

static aclnnStatus check_matmul(const opc_call *c, const aclsim_tensor_desc *xd, const aclsim_tensor_desc *wd,
                                const aclsim_tensor_desc *yd, int8_t cubeMathType)
{
    const char *api = c->api;
    aclsim_tensor_desc x = *xd, w = *wd, y = *yd;
    int rc = 0;
    if (x.ndim > MAX_DIMS || w.ndim > MAX_DIMS)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self %s and mat2 %s may have at most %d dims", opc_shape(&x),
                        opc_shape(&w), MAX_DIMS);
    if (x.ndim == 0 || w.ndim == 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "matmul does not support %s and %s", opc_shape(&x),
                        opc_shape(&w));
    const int64_t k = x.shape[x.ndim - 1];
    if (k != w.shape[w.ndim <= 2 ? 0 : w.ndim - 2])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the k-axis of self %s and mat2 %s differ", opc_shape(&x),
                        opc_shape(&w));
    mmc_plan st = {.k = k};
    if ((rc = broadcast_batch(api, &x, &w, &st))) return rc;
    if ((rc = mmc_check_formats(api, &x, &y))) return rc;
    /* simulator-only */
    st.m = x.ndim > 1 ? x.shape[x.ndim - 2] : 1;
    st.n = w.ndim > 1 ? w.shape[w.ndim - 1] : 1;
    int64_t want[MAX_DIMS];
    int nd = 0;
    for (; nd < st.nb; nd++) want[nd] = st.batch[nd];
    if (x.ndim > 1) want[nd++] = st.m;
    if (w.ndim > 1) want[nd++] = st.n;
    if (!opc_shape_is(&y, nd, want))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be %s, got %s", opc_dims(want, nd), opc_shape(&y));
    if ((rc = mmc_check_rest(api, &x, &w, &y, cubeMathType))) return rc;
    for (int d = 0; d < st.nb; d++) st.yb[d] = y.strides[d];
    st.xm = x.ndim > 1 ? x.strides[x.ndim - 2] : 0;
    st.xk = x.strides[x.ndim - 1];
    st.wk = w.ndim > 1 ? w.strides[w.ndim - 2] : w.strides[0];
    st.wn = w.ndim > 1 ? w.strides[w.ndim - 1] : 0;
    st.ym = x.ndim > 1 ? y.strides[st.nb] : 0;
    st.yn = w.ndim > 1 ? y.strides[nd - 1] : 0;
    if (w.storage_format == ACL_FORMAT_FRACTAL_NZ) mmc_plan_nz(&st, &w);
    aclsim_tensor_desc descs[3] = {x, w, y};
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, opc_numel(&y) ? mmc_kernel : opc_noop_kernel);
}

MMC_ENTRY_POINTS(aclnnMatmul, mmc_check_dtypes, check_matmul)

#ifndef ACLSIM_OMIT_aclnnMatmulWeightNz
/*
 * aclnnMatmulWeightNz (CANN 8.5.0 on: build.py compiles it out of older
 * releases): out = self @ mat2 for a 2-D self and a 2-D FRACTAL_NZ mat2, as
 * aclnn_matmul.cpp's CheckWeightNzParam and BuildMatMulWeightNzGraph check it,
 * on the SoC aclrtGetSocName names (ASCEND_SIM_SOC_NAME; an Atlas A2 by
 * default), mapped to its NPU architecture as CANN's platform table does
 * (the op_api unit tests' stub, tests/ut/op_api/stub/opdev/platform.cpp):
 * Ascend910B* and Ascend910_93* DAV_2201 (Atlas A2/A3), Ascend950* DAV_3510,
 * Ascend310P* and Ascend310 DAV_2002, Ascend310B* DAV_3002, Ascend910 (A, Pro,
 * Premium) DAV_1001.
 *
 * Phase 1, in the op_api's order (every refusal 161002 but NULL, 161001):
 *   1. NULL self, mat2, out (161001), then live handles (561103);
 *   2. dtypes: FLOAT, FLOAT16, and BF16 on DAV_2201/DAV_3510 only, each; a
 *      FLOAT self or mat2 with an NZ mat2 off DAV_2201; cubeMathType KEEP_DTYPE
 *      (0) with a FLOAT self or mat2 off DAV_2201/DAV_3510, or with a FLOAT self
 *      and a FLOAT16 out; FLOAT16 with BF16 (an NZ mat2);
 *   3. shapes: an SoC off DAV_2201/DAV_2002/DAV_3510; mat2's storage format not
 *      FRACTAL_NZ; self or mat2 not 2-D; mat2's storage not 4 dims; mat2's
 *      n = 1 or k = 1; the k-axes differ;
 *   4. the architecture's rule: cubeMathType FP16FP32_KEEP_DTYPE (-1) off
 *      DAV_2201, or outside -1..3;
 *   5. an empty self or mat2: accepted (out zero-filled); else mat2's storage
 *      must hold as many elements as the weight-NZ shape (ceil(n/C0),
 *      ceil(k/16), 16, C0), C0 16 (8 for FLOAT): the op_api compares the counts
 *      only, then reads the storage in that shape.
 * Simulator-only, after those: out must be (m, n), of self's dtype or FLOAT; a
 * transposed mat2 view (strides (1, k)) is refused; a non-empty mat2's storage
 * must be the weight-NZ shape itself (CANN accepts another of the same count and
 * reads it as that shape: a float32 weight stored with C0 16 gives wrong values).
 */
enum { ARCH_OTHER, ARCH_2201, ARCH_2002, ARCH_3510, ARCH_3002, ARCH_1001 };

static int npu_arch(const char *soc)
{
    static const struct {
        const char *prefix;
        int arch;
    } table[] = {{"Ascend910B", ARCH_2201}, {"Ascend910_93", ARCH_2201}, {"Ascend950", ARCH_3510},
                 {"Ascend310P", ARCH_2002}, {"Ascend310B", ARCH_3002}, {"Ascend910", ARCH_1001},
                 {"Ascend310", ARCH_2002}};
    for (size_t i = 0; soc != NULL && i < sizeof table / sizeof *table; i++)
        if (strncmp(soc, table[i].prefix, strlen(table[i].prefix)) == 0) return table[i].arch;
    return ARCH_OTHER;
}

static const opc_dtypes NO_BF16 = {2, {ACL_FLOAT, ACL_FLOAT16}, " (no BF16 on this SoC)"};

static aclnnStatus check_weight_nz(const opc_call *c, const aclsim_tensor_desc *xd, const aclsim_tensor_desc *wd,
                                   const aclsim_tensor_desc *yd, int8_t cubeMathType)
{
    const char *api = c->api;
    aclsim_tensor_desc x = *xd, w = *wd, y = *yd;
    const char *soc = aclrtGetSocName();
    const int arch = npu_arch(soc), a2 = arch == ARCH_2201, bf16 = a2 || arch == ARCH_3510;
    const int nz = w.storage_format == ACL_FORMAT_FRACTAL_NZ, f32 = x.dtype == ACL_FLOAT || w.dtype == ACL_FLOAT;
    int rc = opc_check_dtype(api, &x, bf16 ? &OPC_FLOATS : &NO_BF16);
    if (!rc) rc = opc_check_dtype(api, &w, bf16 ? &OPC_FLOATS : &NO_BF16);
    if (!rc) rc = opc_check_dtype(api, &y, bf16 ? &OPC_FLOATS : &NO_BF16);
    if (rc) return rc;
    if (!a2 && nz && f32)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FLOAT weight NZ is unsupported by the SoC %s (Atlas A2/A3 "
                        "only), self %s, mat2 %s", soc ? soc : "unknown", aclsim_dtype_name(x.dtype),
                        aclsim_dtype_name(w.dtype));
    if (cubeMathType == 0 && !bf16 && f32)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self %s or mat2 %s is not supported under KEEP_DTYPE on the "
                        "SoC %s", aclsim_dtype_name(x.dtype), aclsim_dtype_name(w.dtype), soc ? soc : "unknown");
    if (cubeMathType == 0 && y.dtype == ACL_FLOAT16 && x.dtype == ACL_FLOAT)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "under KEEP_DTYPE a FLOAT self needs a FLOAT out, got FLOAT16");
    if ((rc = mmc_check_nz_mix(api, &x, &w))) return rc;
    if (!a2 && arch != ARCH_2002 && arch != ARCH_3510)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "weight NZ is unsupported by the SoC %s", soc ? soc : "unknown");
    if (!nz)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mat2's storage format must be FRACTAL_NZ, got %s (%d)",
                        aclsim_format_name(w.storage_format), (int)w.storage_format);
    if (x.ndim != 2 || w.ndim != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self and mat2 must be 2-D, got %s and %s", opc_shape(&x),
                        opc_shape(&w));
    if (w.storage_ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mat2's storage must have 4 dims, got %s",
                        opc_dims(w.storage_shape, w.storage_ndim));
    const int64_t m = x.shape[0], k = w.shape[0], n = w.shape[1];
    if (k == 1 || n == 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 with n = 1 or k = 1 is not supported, "
                        "mat2 %s", opc_shape(&w));
    if (x.shape[1] != k)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the k-axis of self %s and mat2 %s differ", opc_shape(&x),
                        opc_shape(&w));
    if ((cubeMathType == -1 && !a2) || cubeMathType < -1 || cubeMathType > 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "cubeMathType %d is not supported on the SoC %s",
                        (int)cubeMathType, soc ? soc : "unknown");
    mmc_plan st = {.m = m, .k = k, .n = n, .xm = x.strides[0], .xk = x.strides[1], .ym = y.strides[0],
                   .yn = y.strides[1]};
    mmc_plan_nz(&st, &w);
    const int empty = m == 0 || k == 0 || n == 0;
    int64_t count = 1, want = (n + st.c0 - 1) / st.c0 * st.k1 * 16 * st.c0;
    for (int64_t d = 0; d < 4; d++) count *= w.storage_shape[d];
    if (!empty && count != want)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mat2's storage %s holds %" PRId64 " elements, its weight-NZ "
                        "shape (%" PRId64 ", %" PRId64 ", 16, %d) %" PRId64 ": convert mat2 to FRACTAL_NZ",
                        opc_dims(w.storage_shape, 4), count, (n + st.c0 - 1) / st.c0, st.k1, st.c0, want);
    /* simulator-only */
    const int64_t shape[2] = {m, n};
    if (!opc_shape_is(&y, 2, shape))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be %s, got %s", opc_dims(shape, 2), opc_shape(&y));
    if (y.dtype != x.dtype && y.dtype != ACL_FLOAT)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s must be self's (%s) or FLOAT",
                        aclsim_dtype_name(y.dtype), aclsim_dtype_name(x.dtype));
    if (!empty && w.strides[0] == 1 && w.strides[1] == k)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a transposed mat2 view %s is not modelled", opc_shape(&w));
    const int64_t nzs[4] = {(n + st.c0 - 1) / st.c0, st.k1, 16, st.c0};
    if (!empty && memcmp(w.storage_shape, nzs, sizeof nzs) != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mat2's storage %s holds the weight-NZ shape %s's count, but "
                        "CANN reads it as %s: store mat2 so (C0 %d)", opc_dims(w.storage_shape, 4), opc_dims(nzs, 4),
                        opc_dims(nzs, 4), st.c0);
    aclsim_tensor_desc descs[3] = {x, w, y};
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, m && n ? mmc_kernel : opc_noop_kernel);
}

MMC_ENTRY_POINTS(aclnnMatmulWeightNz, mmc_no_dtypes, check_weight_nz)
#endif
