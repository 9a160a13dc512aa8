/*
 * max_pool2d_with_mask.c - aclnnMaxPool2dWithMask and
 * aclnnMaxPool2dWithMaskBackward for the CPU simulator, as on Atlas A2/A3.
 *
 * Parameter checks follow the order of the real op_api, including its
 * quirks: kernelSize is checked for NULL and for its length before the other
 * pointers, and the backward reports a bad kernelSize length as
 * ACLNN_ERR_PARAM_NULLPTR.
 *
 * The mask ("indices", int8, [N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32]) is
 * read and written through its storage address, as the real op does (no
 * contiguous copy, view offset and strides ignored):
 *  - kernel other than 1x1: the first 4*N*C*Ho*Wo bytes are little-endian
 *    int32 flat indices ih*W + iw in (n, c, oh, ow) order; the rest is never
 *    written;
 *  - 1x1 kernel: the TBE bitmask, one uint16 word per output position and
 *    group of 16 channels, all bits set: 0xFF over the first
 *    ceil(Ho*Wo/16)*32 bytes of each of the N*ceil(C/16) leading rows.
 * The backward reads the int32 prefix (1x1 kernel: it ignores the mask and
 * copies gradOutput to the strided positions).
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FWD_OP "aclnnMaxPool2dWithMask"
#define FWD_API FWD_OP "GetWorkspaceSize"
#define BWD_OP "aclnnMaxPool2dWithMaskBackward"
#define BWD_API BWD_OP "GetWorkspaceSize"

typedef struct {
    int64_t kh, kw, sh, sw, ph, pw;
    int64_t n, c, h, w, ho, wo; /* n = 1 for a 3-D self */
    int empty;                  /* nothing to compute (N = 0) */
} mp_state;

/* ---- helpers ------------------------------------------------------------ */

/* Floor division (the op_api's div_rtn). */
static int64_t div_floor(int64_t x, int64_t y)
{
    int64_t q = x / y, r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? q - 1 : q;
}

/* Output length along one axis, dilation 1, with ceil mode's correction. */
static int64_t out_size(int64_t in, int64_t k, int64_t p, int64_t s, int ceil_mode)
{
    int64_t o = div_floor(in + 2 * p - (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

static int is_private_format(int32_t f)
{
    return f == ACL_FORMAT_NC1HWC0 || f == ACL_FORMAT_FRACTAL_Z || f == ACL_FORMAT_NC1HWC0_C04 ||
           f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_NDC1HWC0 || f == ACL_FRACTAL_Z_3D ||
           (f >= ACL_FORMAT_FRACTAL_NZ_C0_16 && f <= ACL_FORMAT_FRACTAL_NZ_C0_8);
}

/* 0, or a status with message: a private format (refused by the real op),
 * or a layout this simulator does not model (NHWC and the like). */
static int check_format(const char *api, const char *name, int32_t f)
{
    if (is_private_format(f))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s has the private format %d: only NCHW (CHW) is supported",
                        name, (int)f);
    if (f != ACL_FORMAT_NCHW && f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "%s format %d is not simulated: use ACL_FORMAT_NCHW (0), ACL_FORMAT_ND (2) or, for "
                        "3-D tensors, ACL_FORMAT_NCL (47)", name, (int)f);
    return 0;
}

static int is_float_dtype(int32_t d) { return d == ACL_FLOAT || d == ACL_FLOAT16 || d == ACL_BF16; }

static int64_t numel(const aclsim_tensor_desc *t)
{
    int64_t n = 1;
    for (int64_t d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

/* Element (n, c, h, w) of a 3-D (n ignored) or 4-D view whose data address maps to base. */
static unsigned char *at4(unsigned char *base, const aclsim_tensor_desc *t, size_t isz, int64_t n, int64_t c,
                          int64_t h, int64_t w)
{
    int64_t e = t->offset;
    if (t->ndim == 4) e += n * t->strides[0];
    const int64_t *st = t->strides + (t->ndim - 3);
    e += c * st[0] + h * st[1] + w * st[2];
    return base + (uint64_t)e * isz;
}

static int shape_is(const aclsim_tensor_desc *t, int64_t ndim, const int64_t *dims)
{
    if (t->ndim != ndim) return 0;
    for (int64_t d = 0; d < ndim; d++)
        if (t->shape[d] != dims[d]) return 0;
    return 1;
}

/* Mask width: (ceil(Ho*Wo/16) + 1) * 2 * 16 bytes. */
static int64_t mask_width(int64_t ho, int64_t wo) { return ((ho * wo + 15) / 16 + 1) * 32; }

/* The attribute checks shared by both ops (the op_api's CheckShape up to the
 * dilation), filling kernel/stride/padding into st. */
static int check_attrs(const char *api, const int64_t *k, uint64_t nk, const int64_t *s, uint64_t ns,
                       const int64_t *p, uint64_t np, const int64_t *d, uint64_t nd, mp_state *st)
{
    if (nk != 1 && nk != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize must have 1 or 2 elements, got %" PRIu64, nk);
    if (ns > 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "stride must have 0, 1 or 2 elements, got %" PRIu64, ns);
    if (np != 1 && np != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding must have 1 or 2 elements, got %" PRIu64, np);
    if (nd != 1 && nd != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dilation must have 1 or 2 elements, got %" PRIu64, nd);
    st->kh = k[0];
    st->kw = nk == 1 ? k[0] : k[1];
    if (st->kh <= 0 || st->kw <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernel size must be > 0, got kH=%" PRId64 ", kW=%" PRId64,
                        st->kh, st->kw);
    st->sh = ns == 0 ? st->kh : s[0];
    st->sw = ns == 0 ? st->kw : (ns == 1 ? s[0] : s[1]);
    if (st->sh <= 0 || st->sw <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "stride must be > 0, got sH=%" PRId64 ", sW=%" PRId64,
                        st->sh, st->sw);
    st->ph = p[0];
    st->pw = np == 1 ? p[0] : p[1];
    if (!(st->ph >= 0 && st->pw >= 0 && st->ph <= st->kh / 2 && st->pw <= st->kw / 2))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "padding must be >= 0 and <= half the kernel size, got kH=%" PRId64 ", kW=%" PRId64
                        ", padH=%" PRId64 ", padW=%" PRId64, st->kh, st->kw, st->ph, st->pw);
    int64_t dh = d[0], dw = nd == 1 ? d[0] : d[1];
    if (dh != 1 || dw != 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dilation must be 1, got dilationH=%" PRId64
                        ", dilationW=%" PRId64, dh, dw);
    return 0;
}

/* C, H, W non-zero and a non-empty output, for self; fills st's sizes. */
static int check_plane(const char *api, const aclsim_tensor_desc *x, int ceil_mode, mp_state *st)
{
    int is3 = x->ndim == 3;
    st->n = is3 ? 1 : x->shape[0];
    st->c = x->shape[is3 ? 0 : 1];
    st->h = x->shape[is3 ? 1 : 2];
    st->w = x->shape[is3 ? 2 : 3];
    if (st->c == 0 || st->h == 0 || st->w == 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "expected self with a non-zero C, H and W (only N may be 0), got C=%" PRId64
                        ", H=%" PRId64 ", W=%" PRId64, st->c, st->h, st->w);
    st->ho = out_size(st->h, st->kh, st->ph, st->sh, ceil_mode);
    st->wo = out_size(st->w, st->kw, st->pw, st->sw, ceil_mode);
    if (st->ho <= 0 || st->wo <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "given input size %" PRId64 "x%" PRId64 "x%" PRId64 ", the output size %" PRId64
                        "x%" PRId64 "x%" PRId64 " is too small", st->c, st->h, st->w, st->c, st->ho, st->wo);
    return 0;
}

/* The expected shape of out / gradOutput into dims; returns its rank. */
static int64_t pooled_shape(const aclsim_tensor_desc *x, const mp_state *st, int64_t *dims)
{
    int64_t r = 0;
    if (x->ndim == 4) dims[r++] = st->n;
    dims[r++] = st->c;
    dims[r++] = st->ho;
    dims[r++] = st->wo;
    return r;
}

/* Host view of the mask's first `bytes` bytes from its storage address. */
static unsigned char *map_mask(const aclsim_launch *l, const aclsim_tensor_desc *t, uint64_t bytes)
{
    const void *addr = (const void *)(uintptr_t)t->addr;
    unsigned char *host = addr ? aclsim_dev_map(addr, bytes) : NULL;
    if (host == NULL) {
        char why[512];
        aclsim_dev_explain(addr, bytes, why, sizeof why);
        opc_fail(1, l->op_name, "kernel accessed the mask '%s' at device address %p (%" PRIu64
                 " bytes from its storage address), which is not valid device memory: %s", t->name, addr,
                 bytes, why);
    }
    return host;
}

static void put_le32(unsigned char *p, int64_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

static int64_t get_le32(const unsigned char *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (int32_t)u;
}

static int noop_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)state, (void)t, (void)nt, (void)l;
    return 0;
}

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

/* For every window: the maximum over its in-input positions, scanned in
 * row-major order; a larger value or a NaN takes over, so ties keep the
 * first and NaN windows end on their last NaN; an all -inf window keeps its
 * first in-input position. */
static int fwd_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const mp_state *st = state;
    const aclsim_tensor_desc *self = &t[0], *out = &t[1], *mask = &t[2];
    const int64_t planes = st->n * st->c, positions = st->ho * st->wo;
    const int one = st->kh * st->kw == 1;
    const int64_t width = mask_width(st->ho, st->wo), groups = st->n * ((st->c + 15) / 16);
    const uint64_t mask_bytes = one ? (uint64_t)((groups - 1) * width + (positions + 15) / 16 * 32)
                                    : (uint64_t)planes * (uint64_t)positions * 4u;
    unsigned char *src = opc_map_tensor(l, self);
    unsigned char *dst = src ? opc_map_tensor(l, out) : NULL;
    unsigned char *m = dst ? map_mask(l, mask, mask_bytes) : NULL;
    if (m == NULL) return 1;
    const int32_t dt = self->dtype;
    const size_t isz = aclsim_dtype_size(dt);
    for (int64_t n = 0; n < st->n; n++)
        for (int64_t c = 0; c < st->c; c++)
            for (int64_t oh = 0; oh < st->ho; oh++)
                for (int64_t ow = 0; ow < st->wo; ow++) {
                    int64_t h0 = oh * st->sh - st->ph, w0 = ow * st->sw - st->pw;
                    int64_t h1 = h0 + st->kh < st->h ? h0 + st->kh : st->h;
                    int64_t w1 = w0 + st->kw < st->w ? w0 + st->kw : st->w;
                    if (h0 < 0) h0 = 0;
                    if (w0 < 0) w0 = 0;
                    float best = -INFINITY;
                    int64_t where = h0 * st->w + w0;
                    for (int64_t ih = h0; ih < h1; ih++)
                        for (int64_t iw = w0; iw < w1; iw++) {
                            float v = opc_load_float(at4(src, self, isz, n, c, ih, iw), dt);
                            if (v > best || isnan(v)) {
                                best = v;
                                where = ih * st->w + iw;
                            }
                        }
                    /* best is one of the inputs: storing it back is exact */
                    opc_store_float(at4(dst, out, isz, n, c, oh, ow), dt, best);
                    if (!one) put_le32(m + 4u * (uint64_t)(((n * st->c + c) * st->ho + oh) * st->wo + ow), where);
                }
    if (one) /* every channel's max is its only element: all bits set */
        for (int64_t g = 0; g < groups; g++) memset(m + g * width, 0xFF, (size_t)((positions + 15) / 16 * 32));
    return 0;
}

static aclnnStatus fwd_prepare(const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *stride,
                               const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
                               aclTensor *out, aclTensor *indices, uint64_t *workspaceSize,
                               aclOpExecutor **executor)
{
    const char *api = FWD_API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. the entry's own checks: kernelSize, self, out, then kernelSize's length */
    if (kernelSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "kernelSize is NULL");
    if (self == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "self is NULL");
    if (out == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "out is NULL");
    const int64_t *k, *s, *p, *d;
    uint64_t nk, ns, np, nd;
    int rc = opc_get_int_array(api, "kernelSize", kernelSize, &k, &nk);
    if (rc) return rc;
    if (nk != 1 && nk != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize must have 1 or 2 elements, got %" PRIu64, nk);

    /* 2. the remaining pointers, in the op_api's order, then live handles */
    if (stride == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "stride is NULL");
    if (padding == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "padding is NULL");
    if (dilation == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "dilation is NULL");
    if (indices == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "indices is NULL");
    aclsim_tensor_desc x, y, m;
    rc = opc_get_tensor(api, "self", self, &x);
    if (!rc) rc = opc_get_int_array(api, "stride", stride, &s, &ns);
    if (!rc) rc = opc_get_int_array(api, "padding", padding, &p, &np);
    if (!rc) rc = opc_get_int_array(api, "dilation", dilation, &d, &nd);
    if (!rc) rc = opc_get_tensor(api, "out", out, &y);
    if (!rc) rc = opc_get_tensor(api, "indices", indices, &m);
    if (rc) return rc;

    /* 3. dtypes */
    if (!is_float_dtype(x.dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16, got %s (%d)",
                        aclsim_dtype_name(x.dtype), (int)x.dtype);
    if (y.dtype != x.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s (%d) must equal self dtype %s (%d)",
                        aclsim_dtype_name(y.dtype), (int)y.dtype, aclsim_dtype_name(x.dtype), (int)x.dtype);
    if (m.dtype != ACL_INT8)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "indices dtype must be ACL_INT8 (the mask), got %s (%d)",
                        aclsim_dtype_name(m.dtype), (int)m.dtype);

    /* 4. formats and rank */
    if (x.format != y.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self format %d and out format %d must be equal",
                        (int)x.format, (int)y.format);
    if ((rc = check_format(api, "self", x.format))) return rc;
    if (x.ndim != 3 && x.ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got %s",
                        opc_shape_str(&x, b1, sizeof b1));

    /* 5. attributes, sizes, output shapes */
    mp_state st = {0};
    if ((rc = check_attrs(api, k, nk, s, ns, p, np, d, nd, &st))) return rc;
    if ((rc = check_plane(api, &x, ceilMode, &st))) return rc;
    int64_t dims[4];
    int64_t r = pooled_shape(&x, &st, dims);
    if (!shape_is(&y, r, dims)) {
        aclsim_tensor_desc want = y;
        want.ndim = r;
        memcpy(want.shape, dims, sizeof dims);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape %s must be %s", opc_shape_str(&y, b1, sizeof b1),
                        opc_shape_str(&want, b2, sizeof b2));
    }
    dims[r - 2] = st.kh * st.kw;
    dims[r - 1] = mask_width(st.ho, st.wo);
    if (!shape_is(&m, r, dims)) {
        aclsim_tensor_desc want = m;
        want.ndim = r;
        memcpy(want.shape, dims, sizeof dims);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "indices shape %s must be %s ([N,] C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32)",
                        opc_shape_str(&m, b1, sizeof b1), opc_shape_str(&want, b2, sizeof b2));
    }

    aclsim_tensor_desc descs[3] = {x, y, m};
    st.empty = numel(&x) == 0 || numel(&y) == 0; /* N = 0: success, nothing to run */
    return opc_finish_phase1(api, FWD_OP, &st, sizeof st, 0, descs, 3, 2, st.empty ? noop_kernel : fwd_kernel,
                             workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnMaxPool2dWithMaskGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                                              const aclIntArray *stride, const aclIntArray *padding,
                                                              const aclIntArray *dilation, bool ceilMode,
                                                              aclTensor *out, aclTensor *indices,
                                                              uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = fwd_prepare(self, kernelSize, stride, padding, dilation, ceilMode, out, indices,
                                 workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnMaxPool2dWithMask(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                              aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(FWD_OP, workspace, workspaceSize, executor, stream);
}

/* ========================================================================== */
/* backward                                                                   */
/* ========================================================================== */

/* gradInput = 0; gradInput[n, c].flat[idx] += gradOutput[n, c, oh, ow] for
 * idx the mask's int32 value at (n, c, oh, ow), visited in that order and
 * summed in fp32 (workspace), then rounded once. A 1x1 kernel ignores the
 * mask: gradInput[n, c, oh*sH, ow*sW] = gradOutput[n, c, oh, ow]. */
static int bwd_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const mp_state *st = state;
    const aclsim_tensor_desc *grad = &t[0], *mask = &t[2], *gin = &t[3];
    const int64_t planes = st->n * st->c, plane = st->h * st->w;
    const int one = st->kh * st->kw == 1;
    unsigned char *g = opc_map_tensor(l, grad);
    unsigned char *dst = g ? opc_map_tensor(l, gin) : NULL;
    unsigned char *acc = dst ? opc_map_workspace(l, 0, (uint64_t)planes * (uint64_t)plane * 4u, "fp32 accumulators")
                             : NULL;
    if (acc == NULL) return 1;
    unsigned char *m = NULL; /* a 1x1 kernel does not read the mask */
    if (!one && (m = map_mask(l, mask, (uint64_t)planes * (uint64_t)(st->ho * st->wo) * 4u)) == NULL) return 1;
    const int32_t dt = grad->dtype;
    const size_t isz = aclsim_dtype_size(dt);
    memset(acc, 0, (size_t)(planes * plane) * 4u);
    for (int64_t n = 0; n < st->n; n++)
        for (int64_t c = 0; c < st->c; c++) {
            const int64_t pl = n * st->c + c;
            float *a = (float *)(void *)(acc + (uint64_t)(pl * plane) * 4u);
            for (int64_t oh = 0; oh < st->ho; oh++)
                for (int64_t ow = 0; ow < st->wo; ow++) {
                    int64_t idx;
                    if (one) {
                        idx = oh * st->sh * st->w + ow * st->sw;
                    } else {
                        idx = get_le32(m + 4u * (uint64_t)((pl * st->ho + oh) * st->wo + ow));
                        if (idx < 0 || idx >= plane)
                            return opc_fail(1, l->op_name,
                                            "mask value %" PRId64 " at (n=%" PRId64 ", c=%" PRId64 ", oh=%" PRId64
                                            ", ow=%" PRId64 ") is outside the %" PRId64 "x%" PRId64
                                            " input plane: the mask does not come from aclnnMaxPool2dWithMask "
                                            "with these arguments", idx, n, c, oh, ow, st->h, st->w);
                    }
                    a[idx] += opc_load_float(at4(g, grad, isz, n, c, oh, ow), dt);
                }
        }
    for (int64_t n = 0; n < st->n; n++)
        for (int64_t c = 0; c < st->c; c++) {
            const float *a = (const float *)(const void *)(acc + (uint64_t)((n * st->c + c) * plane) * 4u);
            for (int64_t ih = 0; ih < st->h; ih++)
                for (int64_t iw = 0; iw < st->w; iw++)
                    opc_store_float(at4(dst, gin, isz, n, c, ih, iw), dt, a[ih * st->w + iw]);
        }
    return 0;
}

static aclnnStatus bwd_prepare(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
                               const aclIntArray *kernelSize, const aclIntArray *stride,
                               const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
                               aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = BWD_API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. the entry's own checks: kernelSize, self, gradOutput, then kernelSize's
     * length, which the real op reports as ACLNN_ERR_PARAM_NULLPTR */
    if (kernelSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "kernelSize is NULL");
    if (self == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "self is NULL");
    if (gradOutput == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "gradOutput is NULL");
    const int64_t *k, *s, *p, *d;
    uint64_t nk, ns, np, nd;
    int rc = opc_get_int_array(api, "kernelSize", kernelSize, &k, &nk);
    if (rc) return rc;
    if (nk != 1 && nk != 2)
        return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api,
                        "kernelSize must have 1 or 2 elements, got %" PRIu64
                        " (reported as NULLPTR, as the real op does)",
                        nk);

    /* 2. every pointer, in the op_api's order, then live handles */
    if (indices == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "indices is NULL");
    if (stride == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "stride is NULL");
    if (padding == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "padding is NULL");
    if (dilation == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "dilation is NULL");
    if (gradInput == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "gradInput is NULL");
    aclsim_tensor_desc go, x, m, gi;
    rc = opc_get_tensor(api, "gradOutput", gradOutput, &go);
    if (!rc) rc = opc_get_tensor(api, "self", self, &x);
    if (!rc) rc = opc_get_tensor(api, "indices", indices, &m);
    if (!rc) rc = opc_get_int_array(api, "stride", stride, &s, &ns);
    if (!rc) rc = opc_get_int_array(api, "padding", padding, &p, &np);
    if (!rc) rc = opc_get_int_array(api, "dilation", dilation, &d, &nd);
    if (!rc) rc = opc_get_tensor(api, "gradInput", gradInput, &gi);
    if (rc) return rc;

    /* 3. dtypes */
    if (!is_float_dtype(x.dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16, got %s (%d)",
                        aclsim_dtype_name(x.dtype), (int)x.dtype);
    if (go.dtype != x.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput dtype %s (%d) must equal self dtype %s (%d)",
                        aclsim_dtype_name(go.dtype), (int)go.dtype, aclsim_dtype_name(x.dtype), (int)x.dtype);
    if (gi.dtype != x.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradInput dtype %s (%d) must equal self dtype %s (%d)",
                        aclsim_dtype_name(gi.dtype), (int)gi.dtype, aclsim_dtype_name(x.dtype), (int)x.dtype);
    if (m.dtype != ACL_INT8)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "indices dtype must be ACL_INT8 (the mask), got %s (%d)",
                        aclsim_dtype_name(m.dtype), (int)m.dtype);

    /* 4. formats and ranks */
    if (x.format != go.format || x.format != gi.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "formats of self (%d), gradOutput (%d) and gradInput (%d) must be equal",
                        (int)x.format, (int)go.format, (int)gi.format);
    if ((rc = check_format(api, "self", x.format)) || (rc = check_format(api, "indices", m.format))) return rc;
    const struct { const char *name; const aclsim_tensor_desc *t; } ranked[4] = {
        {"self", &x}, {"gradInput", &gi}, {"gradOutput", &go}, {"indices", &m}};
    for (int i = 0; i < 4; i++)
        if (ranked[i].t->ndim != 3 && ranked[i].t->ndim != 4)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be 3-D or 4-D, got %s", ranked[i].name,
                            opc_shape_str(ranked[i].t, b1, sizeof b1));

    /* 5. attributes, then shapes */
    mp_state st = {0};
    if ((rc = check_attrs(api, k, nk, s, ns, p, np, d, nd, &st))) return rc;
    if (!shape_is(&gi, x.ndim, x.shape))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradInput shape %s must equal self shape %s",
                        opc_shape_str(&gi, b1, sizeof b1), opc_shape_str(&x, b2, sizeof b2));
    if ((rc = check_plane(api, &x, ceilMode, &st))) return rc;
    int64_t dims[4];
    int64_t r = pooled_shape(&x, &st, dims);
    if (!shape_is(&go, r, dims)) {
        aclsim_tensor_desc want = go;
        want.ndim = r;
        memcpy(want.shape, dims, sizeof dims);
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput shape %s must be the forward's output shape %s",
                        opc_shape_str(&go, b1, sizeof b1), opc_shape_str(&want, b2, sizeof b2));
    }
    /* The real op ignores its check of the indices shape. Simulator
     * strictness: the kernel reads N*C*Ho*Wo int32 values from the mask's
     * bytes, so a smaller mask would be read out of bounds. */
    uint64_t prefix = (uint64_t)(st.n * st.c * st.ho * st.wo) * 4u;
    if (st.kh * st.kw != 1 && (uint64_t)numel(&m) < prefix)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "indices %s holds %" PRId64 " bytes, fewer than the %" PRIu64
                        " of its int32 index prefix (4*N*C*Ho*Wo)", opc_shape_str(&m, b1, sizeof b1), numel(&m),
                        prefix);

    aclsim_tensor_desc descs[4] = {go, x, m, gi};
    st.empty = numel(&x) == 0;
    uint64_t ws = st.empty ? 0 : (uint64_t)(st.n * st.c * st.h * st.w) * 4u;
    return opc_finish_phase1(api, BWD_OP, &st, sizeof st, ws, descs, 4, 1, st.empty ? noop_kernel : bwd_kernel,
                             workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = bwd_prepare(gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode,
                                 gradInput, workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnMaxPool2dWithMaskBackward(void *workspace, uint64_t workspaceSize,
                                                      aclOpExecutor *executor, aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(BWD_OP, workspace, workspaceSize, executor, stream);
}
