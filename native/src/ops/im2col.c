/*
 * im2col.c - aclnnIm2col (PyTorch's unfold) for the CPU simulator; in the
 * "math" library of the split layout.
 *
 * Phase 1 checks in the order of the ops-math op_api: null pointers, self's
 * dtype, self's rank and sizes, the four arrays' lengths, then their values
 * (kernel, stride, dilation > 0, padding >= 0), the block counts, out's
 * shape. The kernel is a gather:
 *   out[n, c*kH*kW + ki*kW + kj, oh*Wo + ow] = self[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]
 * with 0 outside self, written in out's dtype. Views of any strides are
 * read and written in place.
 */
#define _GNU_SOURCE
#include "im2col_common.h"
#include "aclnnop/aclnn_im2col.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define OP "aclnnIm2col"
#define API OP "GetWorkspaceSize"


typedef im2col_geometry im2col_state; /* empty: N == 0: nothing to write */

static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const im2col_state *st = state;
    if (st->empty) return 0;
    const aclsim_tensor_desc *x = &t[0], *y = &t[1];
    const unsigned char *src = opc_map_tensor(l, x);
    unsigned char *dst = src ? opc_map_tensor(l, y) : NULL;
    if (dst == NULL) return 1;
    const int batched = x->ndim == 4;
    const int64_t N = batched ? x->shape[0] : 1;
    const int64_t C = x->shape[batched], H = x->shape[batched + 1], W = x->shape[batched + 2];
    const size_t xsz = aclsim_dtype_size(x->dtype), ysz = aclsim_dtype_size(y->dtype);
    const int same = x->dtype == y->dtype;
    const unsigned char zero[8] = {0};
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < st->k[0]; ki++)
                for (int64_t kj = 0; kj < st->k[1]; kj++) {
                    int64_t row = (c * st->k[0] + ki) * st->k[1] + kj;
                    for (int64_t oh = 0; oh < st->ho; oh++) {
                        int64_t h = oh * st->s[0] - st->p[0] + ki * st->d[0];
                        for (int64_t ow = 0; ow < st->wo; ow++) {
                            int64_t w = ow * st->s[1] - st->p[1] + kj * st->d[1];
                            unsigned char *to = dst + (uint64_t)cols_at(y, n, row, oh * st->wo + ow) * ysz;
                            int inside = h >= 0 && h < H && w >= 0 && w < W;
                            const unsigned char *from =
                                inside ? src + (uint64_t)image_at(x, n, c, h, w) * xsz : zero;
                            if (same) memcpy(to, from, ysz); /* a gather: bits unchanged */
                            else opc_store_float(to, y->dtype, opc_load_float(from, x->dtype));
                        }
                    }
                }
    return 0;
}

/* floor(a / b) for b > 0, or 0 with *overflow set when the result is not an int64. */
static int64_t floor_div(__int128 a, int64_t b, int *overflow)
{
    __int128 q = a / b;
    if (a % b != 0 && a < 0) q--;
    if (q < INT64_MIN || q > INT64_MAX) {
        *overflow = 1;
        return 0;
    }
    return (int64_t)q;
}

static aclnnStatus prepare(const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *dilation,
                           const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out,
                           uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. null pointers, then live handles */
    const void *ptrs[] = {self, kernelSize, dilation, padding, stride, out};
    const char *names[] = {"self", "kernelSize", "dilation", "padding", "stride", "out"};
    for (int i = 0; i < 6; i++)
        if (ptrs[i] == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", names[i]);
    aclsim_tensor_desc x, y;
    const int64_t *arr[4];
    uint64_t len[4];
    const aclIntArray *arrays[4] = {kernelSize, dilation, padding, stride};
    int rc = opc_get_tensor(api, "self", self, &x);
    for (int i = 0; i < 4 && !rc; i++) rc = opc_get_int_array(api, names[i + 1], arrays[i], &arr[i], &len[i]);
    if (!rc) rc = opc_get_tensor(api, "out", out, &y);
    if (rc) return rc;

    /* 2. self's dtype (the A2/A3 list) */
    if (!is_float_type(x.dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16, got %s (%d)",
                        aclsim_dtype_name(x.dtype), (int)x.dtype);

    /* 3. self's rank, and C, H, W > 0 (N may be 0) */
    if (x.ndim != 3 && x.ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got %"
                        PRId64 "-D %s", x.ndim, opc_shape_str(&x, b1, sizeof b1));
    for (int64_t i = x.ndim - 3; i < x.ndim; i++)
        if (x.shape[i] <= 0)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dims C, H, W must be > 0, got %s",
                            opc_shape_str(&x, b1, sizeof b1));

    /* 4. the arrays: lengths, then kernel, stride, dilation > 0 and padding >= 0 */
    for (int i = 0; i < 4; i++)
        if (len[i] != 2)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must have 2 elements (H, W), got %" PRIu64,
                            names[i + 1], len[i]);
    const int order[4] = {0, 3, 1, 2}; /* kernelSize, stride, dilation, padding */
    for (int j = 0; j < 4; j++) {
        int i = order[j];
        int64_t low = i == 2 ? 0 : 1;
        if (arr[i][0] < low || arr[i][1] < low)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be >= %" PRId64 ", got (%" PRId64 ", %" PRId64 ")",
                            names[i + 1], low, arr[i][0], arr[i][1]);
    }
    const int64_t hw[2] = {x.shape[x.ndim - 2], x.shape[x.ndim - 1]};
    if (im2col_extent_fails(api, hw, arr[0], arr[1], arr[2], &rc)) return rc;

    /* 5. block counts, then out's shape */
    im2col_state st;
    int64_t cnt[2];
    int overflow = 0;
    for (int a = 0; a < 2; a++) {
        st.k[a] = arr[0][a];
        st.d[a] = arr[1][a];
        st.p[a] = arr[2][a];
        st.s[a] = arr[3][a];
        __int128 span = (__int128)x.shape[x.ndim - 2 + a] + 2 * (__int128)st.p[a] -
                        ((__int128)st.d[a] * (st.k[a] - 1) + 1);
        int64_t q = floor_div(span, st.s[a], &overflow);
        if (q == INT64_MAX) overflow = 1;
        cnt[a] = overflow ? 0 : q + 1;
    }
    if (overflow)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize, dilation, padding or stride is too large");
    if (cnt[0] < 1 || cnt[1] < 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self %s fits no block: the block counts (%" PRId64 ", %" PRId64 ") computed from its H, W "
                        "and the arrays must be at least one", opc_shape_str(&x, b1, sizeof b1), cnt[0], cnt[1]);
    st.ho = cnt[0];
    st.wo = cnt[1];
    int64_t want[3], nwant = 0;
    uint64_t rows, blocks;
    if (__builtin_mul_overflow((uint64_t)st.k[0], (uint64_t)st.k[1], &rows) ||
        __builtin_mul_overflow((uint64_t)x.shape[x.ndim - 3], rows, &rows) ||
        __builtin_mul_overflow((uint64_t)st.ho, (uint64_t)st.wo, &blocks) || rows > INT64_MAX || blocks > INT64_MAX)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out would be too large");
    if (x.ndim == 4) want[nwant++] = x.shape[0];
    want[nwant++] = (int64_t)rows;
    want[nwant++] = (int64_t)blocks;
    int shape_ok = y.ndim == nwant;
    for (int64_t i = 0; shape_ok && i < nwant; i++) shape_ok = y.shape[i] == want[i];
    if (!shape_ok) {
        aclsim_tensor_desc w = x;
        w.ndim = nwant;
        memcpy(w.shape, want, sizeof want);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s, got %s", opc_shape_str(&w, b1, sizeof b1),
                        opc_shape_str(&y, b2, sizeof b2));
    }

    /* Simulator strictness: the op_api casts to out's dtype without checking it;
     * only the float types this op computes are accepted here. */
    if (!is_float_type(y.dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16, got %s (%d)",
                        aclsim_dtype_name(y.dtype), (int)y.dtype);

    st.empty = x.ndim == 4 && x.shape[0] == 0; /* an empty self succeeds with nothing to do */
    aclsim_tensor_desc descs[2] = {x, y};
    return opc_finish_phase1(api, OP, &st, sizeof st, 0, descs, 2, 1, kernel, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                                   const aclIntArray *dilation, const aclIntArray *padding,
                                                   const aclIntArray *stride, const aclTensor *out,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = prepare(self, kernelSize, dilation, padding, stride, out, workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(OP, workspace, workspaceSize, executor, stream);
}
