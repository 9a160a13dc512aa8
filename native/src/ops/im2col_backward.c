/*
 * im2col_backward.c - aclnnIm2colBackward (PyTorch's fold, col2im) for the CPU
 * simulator; in the "cv" library of the split layout.
 *
 * Phase 1 checks in the order of the ops-cv op_api: null pointers, the dtypes
 * of gradOutput and out (each against the supported list only: the result is
 * cast to out's dtype), the ranks, the five arrays' lengths, then kernel,
 * stride, dilation > 0 and padding >= 0, gradOutput's rows divisible by
 * kH*kW, its length against the block count, out's shape. An empty
 * gradOutput succeeds and leaves out unwritten, as on the NPU.
 *
 * The kernel gathers, one output pixel at a time:
 *   out[n, c, h, w] = sum over (oh, ow) ascending of gradOutput[n, c*kH*kW + ki*kW + kj, oh*Wo + ow]
 *   for every block (oh, ow) and kernel offset (ki, kj) with
 *   h = oh*sH - pH + ki*dH and w = ow*sW - pW + kj*dW,
 * summed in fp32 from 0, rounded to gradOutput's dtype, then cast to out's.
 */
#define _GNU_SOURCE
#include "im2col_common.h"
#include "aclnnop/aclnn_im2col_backward.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define OP "aclnnIm2colBackward"
#define API OP "GetWorkspaceSize"


typedef im2col_geometry col2im_state; /* empty: gradOutput has no elements: out stays unwritten */

/* First and one-past-last block o with 0 <= pos + pad - o*s <= (k-1)*d, within [0, count). */
static void block_range(int64_t pos, int64_t pad, int64_t k, int64_t d, int64_t s, int64_t count,
                        int64_t *lo, int64_t *hi)
{
    int64_t top = pos + pad;              /* o*s <= top */
    int64_t bottom = top - (k - 1) * d;   /* o*s >= bottom */
    *lo = bottom <= 0 ? 0 : (bottom + s - 1) / s;
    *hi = top / s + 1;
    if (*hi > count) *hi = count;
    if (*lo > *hi) *lo = *hi;
}

static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const col2im_state *st = state;
    if (st->empty) return 0;
    const aclsim_tensor_desc *g = &t[0], *y = &t[1];
    const unsigned char *src = opc_map_tensor(l, g);
    unsigned char *dst = src ? opc_map_tensor(l, y) : NULL;
    if (dst == NULL) return 1;
    const int batched = y->ndim == 4;
    const int64_t N = batched ? y->shape[0] : 1;
    const int64_t C = y->shape[batched], H = y->shape[batched + 1], W = y->shape[batched + 2];
    const size_t gsz = aclsim_dtype_size(g->dtype), ysz = aclsim_dtype_size(y->dtype);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++) {
                int64_t oh_lo, oh_hi;
                block_range(h, st->p[0], st->k[0], st->d[0], st->s[0], st->ho, &oh_lo, &oh_hi);
                for (int64_t w = 0; w < W; w++) {
                    int64_t ow_lo, ow_hi;
                    block_range(w, st->p[1], st->k[1], st->d[1], st->s[1], st->wo, &ow_lo, &ow_hi);
                    float sum = 0.0f;
                    for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
                        int64_t dh = h + st->p[0] - oh * st->s[0];
                        if (dh % st->d[0]) continue;
                        for (int64_t ow = ow_lo; ow < ow_hi; ow++) {
                            int64_t dw = w + st->p[1] - ow * st->s[1];
                            if (dw % st->d[1]) continue;
                            int64_t row = (c * st->k[0] + dh / st->d[0]) * st->k[1] + dw / st->d[1];
                            sum += opc_load_float(src + (uint64_t)cols_at(g, n, row, oh * st->wo + ow) * gsz,
                                                  g->dtype);
                        }
                    }
                    if (g->dtype != ACL_FLOAT) { /* the op's result is in gradOutput's dtype */
                        unsigned char rounded[2];
                        opc_store_float(rounded, g->dtype, sum);
                        sum = opc_load_float(rounded, g->dtype);
                    }
                    opc_store_float(dst + (uint64_t)image_at(y, n, c, h, w) * ysz, y->dtype, sum); /* Cast */
                }
            }
    return 0;
}

/* The op_api's block count along one axis, (size + 2p - d(k-1) - 1 + s) / s in
 * int64 with C's truncating division (so 0, not negative, just below one
 * block). 0 on success, 1 if it does not fit an int64. */
static int trunc_blocks(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s, int64_t *count)
{
    __int128 num = (__int128)size + 2 * (__int128)p - (__int128)d * (k - 1) - 1 + s;
    __int128 q = num / s;
    if (q < INT64_MIN || q > INT64_MAX) return 1;
    *count = (int64_t)q;
    return 0;
}

static aclnnStatus prepare(const aclTensor *gradOutput, const aclIntArray *inputSize, const aclIntArray *kernelSize,
                           const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride,
                           aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. null pointers, then live handles */
    const void *ptrs[] = {gradOutput, inputSize, kernelSize, dilation, padding, stride, out};
    const char *names[] = {"gradOutput", "inputSize", "kernelSize", "dilation", "padding", "stride", "out"};
    for (int i = 0; i < 7; i++)
        if (ptrs[i] == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", names[i]);
    aclsim_tensor_desc g, y;
    const int64_t *arr[5]; /* inputSize, kernelSize, dilation, padding, stride */
    uint64_t len[5];
    const aclIntArray *arrays[5] = {inputSize, kernelSize, dilation, padding, stride};
    int rc = opc_get_tensor(api, "gradOutput", gradOutput, &g);
    for (int i = 0; i < 5 && !rc; i++) rc = opc_get_int_array(api, names[i + 1], arrays[i], &arr[i], &len[i]);
    if (!rc) rc = opc_get_tensor(api, "out", out, &y);
    if (rc) return rc;

    /* 2. dtypes, each against the supported list (out may differ: the result is cast) */
    if (!is_float_type(g.dtype) || !is_float_type(y.dtype)) {
        const aclsim_tensor_desc *bad = is_float_type(g.dtype) ? &y : &g;
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16, got %s (%d)",
                        bad == &g ? "gradOutput" : "out", aclsim_dtype_name(bad->dtype), (int)bad->dtype);
    }

    /* 3. ranks */
    if (g.ndim != 2 && g.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must be 2-D (C*kH*kW, L) or 3-D (N, C*kH*kW, L), "
                        "got %" PRId64 "-D %s", g.ndim, opc_shape_str(&g, b1, sizeof b1));
    if (y.ndim != g.ndim + 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must have one dimension more than gradOutput (%" PRId64
                        "), got %" PRId64 "-D %s", g.ndim, y.ndim, opc_shape_str(&y, b1, sizeof b1));

    /* 4. the arrays: lengths, then kernel, stride, dilation > 0 and padding >= 0 */
    for (int i = 0; i < 5; i++)
        if (len[i] != 2)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must have 2 elements (H, W), got %" PRIu64,
                            names[i + 1], len[i]);
    const int order[4] = {1, 4, 2, 3}; /* kernelSize, stride, dilation, padding */
    for (int j = 0; j < 4; j++) {
        int i = order[j];
        int64_t low = i == 3 ? 0 : 1;
        if (arr[i][0] < low || arr[i][1] < low)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be >= %" PRId64 ", got (%" PRId64 ", %" PRId64 ")",
                            names[i + 1], low, arr[i][0], arr[i][1]);
    }
    if (im2col_extent_fails(api, arr[0], arr[1], arr[2], arr[3], &rc)) return rc;
    col2im_state st;
    for (int a = 0; a < 2; a++) {
        st.k[a] = arr[1][a];
        st.d[a] = arr[2][a];
        st.p[a] = arr[3][a];
        st.s[a] = arr[4][a];
    }

    /* 5. rows divisible by kH*kW */
    uint64_t kk;
    if (__builtin_mul_overflow((uint64_t)st.k[0], (uint64_t)st.k[1], &kk))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize is too large");
    const int64_t rows = g.shape[g.ndim - 2], length = g.shape[g.ndim - 1];
    if ((uint64_t)rows % kk != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput.shape[-2] = %" PRId64 " must be divisible by "
                        "kernelSize[0]*kernelSize[1] = %" PRIu64, rows, kk);

    /* 6. the length against the block count, multiplied as size_t as the op_api does */
    int64_t cnt[2];
    for (int a = 0; a < 2; a++)
        if (trunc_blocks(arr[0][a], st.k[a], st.d[a], st.p[a], st.s[a], &cnt[a]))
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize or the arrays are too large");
    uint64_t blocks = (uint64_t)cnt[0] * (uint64_t)cnt[1];
    if ((uint64_t)length != blocks)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput.shape[-1] = %" PRId64 " must be %" PRIu64
                        " (%" PRId64 " x %" PRId64 " blocks from inputSize (%" PRId64 ", %" PRId64 "))",
                        length, blocks, cnt[0], cnt[1], arr[0][0], arr[0][1]);
    /* Simulator strictness: two negative counts give a positive product that the
     * op_api accepts, but no block lies in such an image. */
    if ((cnt[0] < 0 || cnt[1] < 0) && blocks != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize (%" PRId64 ", %" PRId64 ") fits no block: "
                        "%" PRId64 " x %" PRId64 " blocks", arr[0][0], arr[0][1], cnt[0], cnt[1]);
    st.ho = cnt[0];
    st.wo = cnt[1];

    /* 7. out's shape: ((N,) C, inputSize[0], inputSize[1]) */
    int64_t want[4], nwant = 0;
    if (g.ndim == 3) want[nwant++] = g.shape[0];
    want[nwant++] = rows / (int64_t)kk;
    want[nwant++] = arr[0][0];
    want[nwant++] = arr[0][1];
    int shape_ok = 1;
    for (int64_t i = 0; i < nwant; i++) shape_ok = shape_ok && y.shape[i] == want[i];
    if (!shape_ok) {
        aclsim_tensor_desc w = y;
        memcpy(w.shape, want, sizeof want);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s, got %s", opc_shape_str(&w, b1, sizeof b1),
                        opc_shape_str(&y, b2, sizeof b2));
    }

    st.empty = 0;
    for (int64_t i = 0; i < g.ndim; i++) st.empty = st.empty || g.shape[i] == 0;
    aclsim_tensor_desc descs[2] = {g, y};
    return opc_finish_phase1(api, OP, &st, sizeof st, 0, descs, 2, 1, kernel, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                                           const aclIntArray *kernelSize, const aclIntArray *dilation,
                                                           const aclIntArray *padding, const aclIntArray *stride,
                                                           aclTensor *out, uint64_t *workspaceSize,
                                                           aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = prepare(gradOutput, inputSize, kernelSize, dilation, padding, stride, out, workspaceSize,
                             executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(OP, workspace, workspaceSize, executor, stream);
}
