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
 * The kernel reads mat2 through its ND strides or from its NZ storage, sums
 * each dot product in double in ascending k and rounds once to out's dtype,
 * so an ND and an NZ mat2 holding the same values give the same bits (the
 * cube's own accumulation order is not public). An empty k gives zeros.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_mm.h"

#include <inttypes.h>
#include <string.h>

typedef struct {
    int64_t m, k, n;
    int nz, c0, k1;
} mm_state;

static double load(const unsigned char *p, int32_t dtype)
{
    return (double)opc_load_float(p, dtype);
}

OPC_KERNEL(kernel, mm_state)
{
    const aclsim_tensor_desc *x = &t[0], *w = &t[1], *y = &t[2];
    unsigned char *xs, *ys, *ws;
    if (opc_map_tensors(l, &xs, x, &ys, y, NULL)) return 1;
    const size_t wsz = aclsim_dtype_size(w->dtype), xsz = aclsim_dtype_size(x->dtype),
                 ysz = aclsim_dtype_size(y->dtype);
    if (st->nz) {
        uint64_t bytes = wsz;
        for (int64_t d = 0; d < w->storage_ndim; d++) bytes *= (uint64_t)w->storage_shape[d];
        ws = aclsim_dev_map((const void *)(uintptr_t)w->addr, bytes);
        if (ws == NULL) {
            char why[512];
            aclsim_dev_explain((const void *)(uintptr_t)w->addr, bytes, why, sizeof why);
            return opc_fail(1, l->op_name, "kernel read the FRACTAL_NZ storage of tensor '%s' (%" PRIu64 " bytes) at "
                            "device address %p, which is not valid device memory: %s", w->name, bytes,
                            (const void *)(uintptr_t)w->addr, why);
        }
    } else if ((ws = opc_map_tensor(l, w)) == NULL) {
        return 1;
    }
    for (int64_t i = 0; i < st->m; i++)
        for (int64_t j = 0; j < st->n; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < st->k; p++) {
                int64_t we = st->nz ? ((j / st->c0 * st->k1 + p / 16) * 16 + p % 16) * st->c0 + j % st->c0
                                    : w->offset + p * w->strides[0] + j * w->strides[1];
                acc += load(xs + (uint64_t)(x->offset + i * x->strides[0] + p * x->strides[1]) * xsz, x->dtype) *
                       load(ws + (uint64_t)we * wsz, w->dtype);
            }
            opc_store_float(ys + (uint64_t)(y->offset + i * y->strides[0] + j * y->strides[1]) * ysz, y->dtype,
                            (float)acc);
        }
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                           int8_t cubeMathType)
{
    const char *api = c->api;
    aclsim_tensor_desc x, w, y;
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_TENSOR(mat2, &w), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 3, NULL);
    if (!rc) rc = opc_check_dtype(api, &x, &OPC_FLOATS);
    if (!rc) rc = opc_check_dtype(api, &w, &OPC_FLOATS);
    if (!rc) rc = opc_check_dtype(api, &y, &OPC_FLOATS);
    if (rc) return rc;
    const int nz = w.storage_format == ACL_FORMAT_FRACTAL_NZ;
    if (nz && ((x.dtype == ACL_FLOAT16 && w.dtype == ACL_BF16) || (x.dtype == ACL_BF16 && w.dtype == ACL_FLOAT16)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "with a FRACTAL_NZ mat2, self and mat2 must be both FLOAT16 or "
                        "both BF16, got %s and %s", aclsim_dtype_name(x.dtype), aclsim_dtype_name(w.dtype));
    if (x.ndim != 2 || w.ndim != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self and mat2 must be 2-D, got %s and %s", opc_shape(&x),
                        opc_shape(&w));
    if (x.shape[1] != w.shape[0])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the k-axis of self %s and mat2 %s differ", opc_shape(&x),
                        opc_shape(&w));
    if (x.storage_format == ACL_FORMAT_FRACTAL_NZ || y.storage_format == ACL_FORMAT_FRACTAL_NZ)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the 'self' or 'out' tensor does not support the NZ format");
    /* simulator-only */
    const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[1];
    const int64_t want[2] = {m, n};
    if (!opc_shape_is(&y, 2, want))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be %s, got %s", opc_dims(want, 2), opc_shape(&y));
    if (y.dtype != x.dtype && y.dtype != ACL_FLOAT)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s must be self's (%s) or FLOAT",
                        aclsim_dtype_name(y.dtype), aclsim_dtype_name(x.dtype));
    if (cubeMathType < 0 || cubeMathType > 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "cubeMathType must be 0 to 3, got %d", (int)cubeMathType);
    mm_state st = {.m = m, .k = k, .n = n, .nz = nz};
    if (!nz && w.storage_format != ACL_FORMAT_ND && opc_is_private_format(w.storage_format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mat2's storage format must be ND or FRACTAL_NZ, got %s (%d)",
                        aclsim_format_name(w.storage_format), (int)w.storage_format);
    if (nz) {
        st.c0 = w.dtype == ACL_FLOAT ? 8 : 16;
        st.k1 = (int)((k + 15) / 16);
        const int64_t nzs[4] = {(n + st.c0 - 1) / st.c0, st.k1, 16, st.c0};
        if (n == 1 || k == 1)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 with n = 1 or k = 1 is not supported, "
                            "mat2 %s", opc_shape(&w));
        if (w.storage_ndim != 4 || memcmp(w.storage_shape, nzs, sizeof nzs) != 0)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a FRACTAL_NZ mat2 of view %s and dtype %s must have the "
                            "storage shape %s, got %s", opc_shape(&w), aclsim_dtype_name(w.dtype), opc_dims(nzs, 4),
                            opc_dims(w.storage_shape, w.storage_ndim));
    }
    aclsim_tensor_desc descs[3] = {x, w, y};
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, m && n ? kernel : opc_noop_kernel);
}

OPC_ENTRY_POINTS(aclnnMm, prepare, (const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                    int8_t cubeMathType),
                 (self, mat2, out, cubeMathType))
