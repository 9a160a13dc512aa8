/*
 * matmul_common.h - what aclnnMm and aclnnMatmul (mm.c, matmul.c) share: the
 * checks of an NZ mat2 (aclnn_matmul.cpp's weight-NZ path) and one batched
 * kernel. Header-only (static functions): the split layout puts both sources
 * in libopapi_nn.so, the cann8 one in libopapi.so, each compiled on its own.
 *
 * The kernel reads mat2 through its ND strides or from its NZ storage, sums
 * each dot product in double in ascending k and rounds once to out's dtype,
 * so an ND and an NZ mat2 holding the same values give the same bits (the
 * cube's own accumulation order is not public). An empty k gives zeros.
 */
#ifndef ACLSIM_MATMUL_COMMON_H
#define ACLSIM_MATMUL_COMMON_H

#include "op_common.h"

#include <inttypes.h>
#include <string.h>

#define MMC_MAX_BATCH 4 /* aclnnMatmul takes 6 dims: 4 batch dims, then m and k (k and n) */

typedef struct {
    int64_t m, k, n;
    int nz, c0;
    int64_t k1;                 /* ceil(k/16): an NZ mat2's fractal rows */
    int nb;                     /* batch dims of out */
    int64_t batch[MMC_MAX_BATCH];
    /* element strides, 0 along a broadcast (or absent) dim; an NZ mat2's batch
     * strides count its storage, its k and n strides are unused */
    int64_t xb[MMC_MAX_BATCH], xm, xk;
    int64_t wb[MMC_MAX_BATCH], wk, wn;
    int64_t yb[MMC_MAX_BATCH], ym, yn;
} mmc_plan;

/* The op_api's C0 of an NZ mat2: 16, or 8 for FLOAT (aclnn_matmul.cpp's GetWeightNzShape). */
static inline int mmc_nz_c0(int32_t dtype)
{
    return dtype == ACL_FLOAT ? 8 : 16;
}

/* An NZ mat2 (k, n), with any batch dims before: n > 1 and k > 1, and the storage
 * shape (batch..., ceil(n/C0), ceil(k/16), 16, C0); 161002 otherwise. */
static int mmc_check_nz_mat2(const char *api, const aclsim_tensor_desc *w)
{
    const int64_t k = w->shape[w->ndim - 2], n = w->shape[w->ndim - 1];
    const int c0 = mmc_nz_c0(w->dtype);
    if (n == 1 || k == 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 with n = 1 or k = 1 is not supported, "
                        "mat2 %s", opc_shape(w));
    int64_t want[ACLSIM_MAX_DIMS];
    const int64_t nd = w->ndim + 2;
    if (nd > ACLSIM_MAX_DIMS)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 of %" PRId64 " dims is not supported",
                        w->ndim);
    memcpy(want, w->shape, (size_t)(w->ndim - 2) * sizeof *want);
    want[nd - 4] = (n + c0 - 1) / c0;
    want[nd - 3] = (k + 15) / 16;
    want[nd - 2] = 16;
    want[nd - 1] = c0;
    if (w->storage_ndim != nd || memcmp(w->storage_shape, want, (size_t)nd * sizeof *want) != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 of view %s and dtype %s must have the "
                        "storage shape %s, got %s", opc_shape(w), aclsim_dtype_name(w->dtype), opc_dims(want, nd),
                        opc_dims(w->storage_shape, w->storage_ndim));
    return 0;
}

/* Phase 1's first step for self, mat2, out: NULL (161001), then live handles (561103). */
static int mmc_args(const char *api, const aclTensor *self, const aclTensor *mat2, const aclTensor *out,
                    aclsim_tensor_desc *x, aclsim_tensor_desc *w, aclsim_tensor_desc *y)
{
    const opc_arg args[] = {OPC_TENSOR(self, x), OPC_TENSOR(mat2, w), OPC_TENSOR(out, y)};
    return opc_args(api, args, 3, NULL);
}

/* With an NZ mat2, no FLOAT16 self with a BF16 mat2 or the reverse (CheckWeightNzDtype). */
static int mmc_check_nz_mix(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *w)
{
    if (w->storage_format == ACL_FORMAT_FRACTAL_NZ &&
        ((x->dtype == ACL_FLOAT16 && w->dtype == ACL_BF16) || (x->dtype == ACL_BF16 && w->dtype == ACL_FLOAT16)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "with a FRACTAL_NZ mat2, self and mat2 must be both FLOAT16 or "
                        "both BF16, got %s and %s", aclsim_dtype_name(x->dtype), aclsim_dtype_name(w->dtype));
    return 0;
}

/* Phase 1's dtype step, as aclnn_matmul.cpp and aclnn_mm.cpp make it: FLOAT, FLOAT16 or
 * BF16 each (an Atlas A2/A3 takes BF16), then with an NZ mat2 no FLOAT16 with BF16. */
static int mmc_check_dtypes(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *w,
                            const aclsim_tensor_desc *y)
{
    int rc = opc_check_dtype(api, x, &OPC_FLOATS);
    if (!rc) rc = opc_check_dtype(api, w, &OPC_FLOATS);
    if (!rc) rc = opc_check_dtype(api, y, &OPC_FLOATS);
    return rc ? rc : mmc_check_nz_mix(api, x, w);
}

/* The op_api's format step: self and out never FRACTAL_NZ (their storage format). */
static int mmc_check_formats(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *y)
{
    if (x->storage_format == ACL_FORMAT_FRACTAL_NZ || y->storage_format == ACL_FORMAT_FRACTAL_NZ)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the 'self' or 'out' tensor does not support the NZ format");
    return 0;
}

/* Simulator-only, after the real checks and out's shape: out of self's dtype or FLOAT,
 * cubeMathType 0..3 (KEEP_DTYPE, ALLOW_FP32_DOWN_PRECISION, USE_FP16, USE_HF32), mat2
 * ND or a public format or FRACTAL_NZ, and an NZ mat2 as the weight-NZ path takes it. */
static int mmc_check_rest(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *w,
                          const aclsim_tensor_desc *y, int8_t cubeMathType)
{
    if (y->dtype != x->dtype && y->dtype != ACL_FLOAT)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s must be self's (%s) or FLOAT",
                        aclsim_dtype_name(y->dtype), aclsim_dtype_name(x->dtype));
    if (cubeMathType < 0 || cubeMathType > 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "cubeMathType must be 0 to 3, got %d", (int)cubeMathType);
    const int nz = w->storage_format == ACL_FORMAT_FRACTAL_NZ;
    if (!nz && w->storage_format != ACL_FORMAT_ND && opc_is_private_format(w->storage_format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mat2's storage format must be ND or FRACTAL_NZ, got %s (%d)",
                        aclsim_format_name(w->storage_format), (int)w->storage_format);
    if (nz && w->ndim < 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 must have 2 dims or more, got %s",
                        opc_shape(w));
    return nz ? mmc_check_nz_mat2(api, w) : 0;
}

/* No dtype step before the operator's own checks (MatmulWeightNz makes its own, by SoC). */
static inline int mmc_no_dtypes(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *w,
                                const aclsim_tensor_desc *y)
{
    (void)api, (void)x, (void)w, (void)y;
    return 0;
}

/* The two entry points of an operator of Mm's signature: NULL and live handles, the DTYPES
 * step, then CHECK(c, &x, &w, &y, cubeMathType), which ends in opc_finish. */
#define MMC_ENTRY_POINTS(NAME, DTYPES, CHECK)                                                          \
    static aclnnStatus NAME##_prepare(const opc_call *c, const aclTensor *self, const aclTensor *mat2,  \
                                      aclTensor *out, int8_t cubeMathType)                              \
    {                                                                                                  \
        aclsim_tensor_desc x, w, y;                                                                    \
        int rc = mmc_args(c->api, self, mat2, out, &x, &w, &y);                                        \
        if (!rc) rc = DTYPES(c->api, &x, &w, &y);                                                      \
        return rc ? rc : CHECK(c, &x, &w, &y, cubeMathType);                                           \
    }                                                                                                  \
    OPC_ENTRY_POINTS(NAME, NAME##_prepare,                                                             \
                     (const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType),\
                     (self, mat2, out, cubeMathType))

/* Fill p's mat2 part for an NZ mat2 (its shape already checked): the fractal geometry,
 * and the storage strides of its batch dims, aligned to out's last p->nb batch dims. */
static void mmc_plan_nz(mmc_plan *p, const aclsim_tensor_desc *w)
{
    p->nz = 1;
    p->c0 = mmc_nz_c0(w->dtype);
    p->k1 = (p->k + 15) / 16;
    int64_t step = (p->n + p->c0 - 1) / p->c0 * p->k1 * 16 * p->c0;
    const int wb = (int)w->ndim - 2;
    for (int i = wb - 1; i >= 0; i--) {
        p->wb[p->nb - wb + i] = w->shape[i] == 1 ? 0 : step;
        step *= w->shape[i];
    }
}

static int mmc_map_nz(const aclsim_launch *l, const aclsim_tensor_desc *w, unsigned char **ws)
{
    uint64_t bytes = aclsim_dtype_size(w->dtype);
    for (int64_t d = 0; d < w->storage_ndim; d++) bytes *= (uint64_t)w->storage_shape[d];
    *ws = aclsim_dev_map((const void *)(uintptr_t)w->addr, bytes);
    if (*ws != NULL) return 0;
    char why[512];
    aclsim_dev_explain((const void *)(uintptr_t)w->addr, bytes, why, sizeof why);
    return opc_fail(1, l->op_name, "kernel read the FRACTAL_NZ storage of tensor '%s' (%" PRIu64 " bytes) at "
                    "device address %p, which is not valid device memory: %s", w->name, bytes,
                    (const void *)(uintptr_t)w->addr, why);
}

/* out = self @ mat2 over t = {self, mat2, out}, as p plans it. */
OPC_KERNEL(mmc_kernel, mmc_plan)
{
    const aclsim_tensor_desc *x = &t[0], *w = &t[1], *y = &t[2];
    unsigned char *xs, *ys, *ws;
    if (opc_map_tensors(l, &xs, x, &ys, y, NULL)) return 1;
    if (st->nz ? mmc_map_nz(l, w, &ws) : (ws = opc_map_tensor(l, w)) == NULL) return 1;
    const size_t wsz = aclsim_dtype_size(w->dtype), xsz = aclsim_dtype_size(x->dtype),
                 ysz = aclsim_dtype_size(y->dtype);
    int64_t batches = 1, idx[MMC_MAX_BATCH] = {0};
    for (int d = 0; d < st->nb; d++) batches *= st->batch[d];
    for (int64_t b = 0; b < batches; b++) {
        int64_t xo = x->offset, wo = st->nz ? 0 : w->offset, yo = y->offset;
        for (int d = 0; d < st->nb; d++) {
            xo += idx[d] * st->xb[d];
            wo += idx[d] * st->wb[d];
            yo += idx[d] * st->yb[d];
        }
        for (int64_t i = 0; i < st->m; i++)
            for (int64_t j = 0; j < st->n; j++) {
                double acc = 0.0;
                for (int64_t q = 0; q < st->k; q++) {
                    int64_t we = st->nz ? wo + ((j / st->c0 * st->k1 + q / 16) * 16 + q % 16) * st->c0 + j % st->c0
                                        : wo + q * st->wk + j * st->wn;
                    acc += (double)opc_load_float(xs + (uint64_t)(xo + i * st->xm + q * st->xk) * xsz, x->dtype) *
                           (double)opc_load_float(ws + (uint64_t)we * wsz, w->dtype);
                }
                opc_store_float(ys + (uint64_t)(yo + i * st->ym + j * st->yn) * ysz, y->dtype, (float)acc);
            }
        for (int d = st->nb - 1; d >= 0 && ++idx[d] == st->batch[d]; d--) idx[d] = 0;
    }
    return 0;
}

#endif /* ACLSIM_MATMUL_COMMON_H */
