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

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                           int8_t cubeMathType)
{
    const char *api = c->api;
    aclsim_tensor_desc x, w, y;
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_TENSOR(mat2, &w), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 3, NULL);
    if (!rc) rc = mmc_check_dtypes(api, &x, &w, &y);
    if (rc) return rc;
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

OPC_ENTRY_POINTS(aclnnMatmul, prepare, (const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                        int8_t cubeMathType),
                 (self, mat2, out, cubeMathType))
