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

OPC_KERNEL(kernel, im2col_geometry)
{
    const aclsim_tensor_desc *g = &t[0], *y = &t[1];
    unsigned char *src, *dst;
    if (opc_map_tensors(l, &src, g, &dst, y, NULL)) return 1;
    const size_t gsz = aclsim_dtype_size(g->dtype), ysz = aclsim_dtype_size(y->dtype);
    for (int64_t n = 0; n < st->n; n++)
        for (int64_t c = 0; c < st->c; c++)
            for (int64_t h = 0; h < st->h; h++) {
                int64_t oh_lo, oh_hi;
                block_range(h, st->p[0], st->k[0], st->d[0], st->s[0], st->ho, &oh_lo, &oh_hi);
                for (int64_t w = 0; w < st->w; w++) {
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
                    opc_store_float(dst + (uint64_t)opc_image_at(y, n, c, h, w) * ysz, y->dtype, sum); /* Cast */
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

static aclnnStatus prepare(const opc_call *c, const aclTensor *gradOutput, const aclIntArray *inputSize,
                           const aclIntArray *kernelSize, const aclIntArray *dilation, const aclIntArray *padding,
                           const aclIntArray *stride, aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc g, y;
    opc_ints isz, k, d, p, s;
    /* 1. null pointers, then live handles; 2. dtypes, each against the supported list
     * (out may differ: the result is cast) */
    const opc_arg args[] = {OPC_TENSOR(gradOutput, &g), OPC_INTS(inputSize, &isz), OPC_INTS(kernelSize, &k),
                            OPC_INTS(dilation, &d), OPC_INTS(padding, &p), OPC_INTS(stride, &s),
                            OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 7, NULL);
    if (!rc) rc = opc_check_dtype(api, &g, &OPC_FLOATS);
    if (!rc) rc = opc_check_dtype(api, &y, &OPC_FLOATS);
    if (rc) return rc;

    /* 3. ranks */
    if (g.ndim != 2 && g.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must be 2-D (C*kH*kW, L) or 3-D (N, C*kH*kW, L), "
                        "got %" PRId64 "-D %s", g.ndim, opc_shape(&g));
    if (y.ndim != g.ndim + 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must have one dimension more than gradOutput (%" PRId64
                        "), got %" PRId64 "-D %s", g.ndim, y.ndim, opc_shape(&y));

    /* 4. the arrays: lengths, then kernel, stride, dilation > 0 and padding >= 0 */
    im2col_geometry st;
    if ((rc = im2col_check_arrays(api, &args[1], 5, isz.v, &st))) return rc;

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
        if (trunc_blocks(isz.v[a], st.k[a], st.d[a], st.p[a], st.s[a], &cnt[a]))
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize or the arrays are too large");
    uint64_t blocks = (uint64_t)cnt[0] * (uint64_t)cnt[1];
    if ((uint64_t)length != blocks)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput.shape[-1] = %" PRId64 " must be %" PRIu64
                        " (%" PRId64 " x %" PRId64 " blocks from inputSize (%" PRId64 ", %" PRId64 "))",
                        length, blocks, cnt[0], cnt[1], isz.v[0], isz.v[1]);
    /* Simulator strictness: two negative counts give a positive product that the
     * op_api accepts, but no block lies in such an image. */
    if ((cnt[0] < 0 || cnt[1] < 0) && blocks != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize (%" PRId64 ", %" PRId64 ") fits no block: "
                        "%" PRId64 " x %" PRId64 " blocks", isz.v[0], isz.v[1], cnt[0], cnt[1]);
    st.ho = cnt[0];
    st.wo = cnt[1];

    /* 7. out's shape: ((N,) C, inputSize[0], inputSize[1]) */
    int64_t want[4], nwant = 0;
    if (g.ndim == 3) want[nwant++] = g.shape[0];
    want[nwant++] = rows / (int64_t)kk;
    want[nwant++] = isz.v[0];
    want[nwant++] = isz.v[1];
    if (!opc_shape_is(&y, nwant, want))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s, got %s", opc_dims(want, nwant),
                        opc_shape(&y));

    im2col_image(&st, &y);
    aclsim_tensor_desc descs[2] = {g, y}; /* an empty gradOutput: out stays unwritten, as on the NPU */
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, opc_has_zero_dim(&g) ? opc_noop_kernel : kernel);
}

OPC_ENTRY_POINTS(aclnnIm2colBackward, prepare,
                 (const aclTensor *gradOutput, const aclIntArray *inputSize, const aclIntArray *kernelSize,
                  const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride,
                  aclTensor *out),
                 (gradOutput, inputSize, kernelSize, dilation, padding, stride, out))
