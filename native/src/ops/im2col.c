/*
 * im2col.c - aclnnIm2col (PyTorch's unfold) for the CPU simulator; in the
 * "math" library of the split layout.
 *
 * Phase 1 checks in the order of the ops-math op_api: null pointers, self's
 * dtype, self's rank and sizes, the four arrays' lengths, then their values
 * (kernel, stride, dilation > 0, padding >= 0), the block counts, out's
 * shape; then, as the real op does, a 4-D self whose storage dims are its view dims
 * is reformatted to NCHW in place (see prepare). The kernel is a gather:
 *   out[n, c*kH*kW + ki*kW + kj, oh*Wo + ow] = self[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]
 * with 0 outside self, written in out's dtype. Views of any strides are
 * read and written in place.
 */
#define _GNU_SOURCE
#include "im2col_common.h"
#include "aclnnop/aclnn_im2col.h"

#include <inttypes.h>
#include <string.h>

OPC_KERNEL(kernel, im2col_geometry)
{
    const aclsim_tensor_desc *x = &t[0], *y = &t[1];
    unsigned char *src, *dst;
    if (opc_map_tensors(l, &src, x, &dst, y, NULL)) return 1;
    const int same = x->dtype == y->dtype;
    const size_t xsz = aclsim_dtype_size(x->dtype), ysz = aclsim_dtype_size(y->dtype);
    const unsigned char zero[8] = {0};
    for (int64_t n = 0; n < st->n; n++)
        for (int64_t c = 0; c < st->c; c++)
            for (int64_t ki = 0; ki < st->k[0]; ki++)
                for (int64_t kj = 0; kj < st->k[1]; kj++) {
                    int64_t row = (c * st->k[0] + ki) * st->k[1] + kj;
                    for (int64_t oh = 0; oh < st->ho; oh++) {
                        int64_t h = oh * st->s[0] - st->p[0] + ki * st->d[0];
                        for (int64_t ow = 0; ow < st->wo; ow++) {
                            int64_t w = ow * st->s[1] - st->p[1] + kj * st->d[1];
                            unsigned char *to = dst + (uint64_t)cols_at(y, n, row, oh * st->wo + ow) * ysz;
                            int inside = h >= 0 && h < st->h && w >= 0 && w < st->w;
                            const unsigned char *from =
                                inside ? src + (uint64_t)opc_image_at(x, n, c, h, w) * xsz : zero;
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

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclIntArray *kernelSize,
                           const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride,
                           const aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y;
    opc_ints k, d, p, s;
    /* 1. null pointers, then live handles; 2. self's dtype (the A2/A3 list) */
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_INTS(kernelSize, &k), OPC_INTS(dilation, &d),
                            OPC_INTS(padding, &p), OPC_INTS(stride, &s), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 6, NULL);
    if (!rc) rc = opc_check_dtype(api, &x, &OPC_FLOATS);
    if (rc) return rc;

    /* 3. self's rank, and C, H, W > 0 (N may be 0) */
    if (x.ndim != 3 && x.ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got %"
                        PRId64 "-D %s", x.ndim, opc_shape(&x));
    for (int64_t i = x.ndim - 3; i < x.ndim; i++)
        if (x.shape[i] <= 0)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dims C, H, W must be > 0, got %s", opc_shape(&x));

    /* 4. the arrays: lengths, then kernel, stride, dilation > 0 and padding >= 0 */
    im2col_geometry st;
    if ((rc = im2col_check_arrays(api, &args[1], 4, &x.shape[x.ndim - 2], &st))) return rc;

    /* 5. block counts, then out's shape */
    int64_t cnt[2];
    int overflow = 0;
    for (int a = 0; a < 2; a++) {
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
                        "and the arrays must be at least one", opc_shape(&x), cnt[0], cnt[1]);
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
    if (!opc_shape_is(&y, nwant, want))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s, got %s", opc_dims(want, nwant),
                        opc_shape(&y));

    /* 6. what the op_api does next outlives this call: for a non-empty 4-D self,
     * l0op::Contiguous hands back the caller's own aclTensor when it is contiguous with
     * storage dims equal to its view dims, and l0op::ReFormat(.., NCHW), called without
     * an executor, then sets that object's view, storage and origin formats to NCHW in
     * place (ops-math aclnn_im2col.cpp, contiguous.cpp, transdata.cpp). The caller's
     * handle is NCHW for every later use; an operator that compares formats (the
     * replication pads) then refuses it next to ND tensors. A 3-D self is unsqueezed
     * into a new view first, and other storage dims give a view too: neither changes. */
    if (x.ndim == 4 && x.shape[0] > 0 && aclsim_tensor_contiguous_is_self(self)) {
        aclsim_tensor_reformat(self, ACL_FORMAT_NCHW);
        x.format = ACL_FORMAT_NCHW;
    }

    /* Simulator strictness: the op_api casts to out's dtype without checking it;
     * only the float types this op computes are accepted here. */
    if ((rc = opc_check_dtype(api, &y, &OPC_FLOATS))) return rc;

    im2col_image(&st, &x);
    int empty = st.n == 0; /* an empty self succeeds with nothing to do */
    aclsim_tensor_desc descs[2] = {x, y};
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, empty ? opc_noop_kernel : kernel);
}

OPC_ENTRY_POINTS(aclnnIm2col, prepare,
                 (const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *dilation,
                  const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out),
                 (self, kernelSize, dilation, padding, stride, out))
