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
#include <string.h>

static const opc_dtypes MASK_DTYPE = {1, {ACL_INT8}, " (the mask)"};

/* Both op_apis hand their kernel a second tensor for the mask whose storage address is
 * a copy of the caller's (ops-nn aclnn_max_pool2d_with_indices(_backward).cpp), so the
 * address setters, which move the caller's aclTensor, would not move the kernel's:
 * current opbase refuses to make such an executor repeatable. */
static const opc_traits MASK_ADDRESS_COPIED = {
    .not_repeatable = "its kernel reads the mask through a copy of the mask's device address, which "
                      "aclSetInputTensorAddr/aclSetOutputTensorAddr cannot move (run it as an ordinary "
                      "two-phase call)"};

typedef struct {
    int64_t kh, kw, sh, sw, ph, pw;
    int64_t n, c, h, w, ho, wo; /* n = 1 for a 3-D self */
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

/* 0, or a status with message: a private format (refused by the real op),
 * or a layout this simulator does not model (NHWC and the like). */
static int check_format(const char *api, const char *name, int32_t f)
{
    if (opc_is_private_format(f))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s has the private format %d: only NCHW (CHW) is supported",
                        name, (int)f);
    if (f != ACL_FORMAT_NCHW && f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "%s format %d is not simulated: use ACL_FORMAT_NCHW (0), ACL_FORMAT_ND (2) or, for "
                        "3-D tensors, ACL_FORMAT_NCL (47)", name, (int)f);
    return 0;
}

/* Element (n, c, h, w) of a 3-D (n ignored) or 4-D view whose data address maps to base. */
static unsigned char *at4(unsigned char *base, const aclsim_tensor_desc *t, size_t isz, int64_t n, int64_t c,
                          int64_t h, int64_t w)
{
    return base + (uint64_t)opc_image_at(t, n, c, h, w) * isz;
}

/* Mask width: (ceil(Ho*Wo/16) + 1) * 2 * 16 bytes. */
static int64_t mask_width(int64_t ho, int64_t wo) { return ((ho * wo + 15) / 16 + 1) * 32; }

/* The attribute checks shared by both ops (the op_api's CheckShape up to the
 * dilation), filling kernel/stride/padding into st. */
static int check_attrs(const char *api, const opc_ints *ks, const opc_ints *ss, const opc_ints *ps,
                       const opc_ints *ds, mp_state *st)
{
    const int64_t *k = ks->v, *s = ss->v, *p = ps->v, *d = ds->v;
    const uint64_t nk = ks->n, ns = ss->n, np = ps->n, nd = ds->n;
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

/* 161002 "<name> shape [..] must be <before>[..]<after>" unless t has the pooled shape
 * (out, gradOutput) or, for the mask, ([N,] C, kH*kW, width). */
static int check_pooled(const char *api, const aclsim_tensor_desc *t, const aclsim_tensor_desc *x,
                        const mp_state *st, int mask, const char *before, const char *after)
{
    int64_t dims[4];
    int64_t r = pooled_shape(x, st, dims);
    if (mask) {
        dims[r - 2] = st->kh * st->kw;
        dims[r - 1] = mask_width(st->ho, st->wo);
    }
    if (opc_shape_is(t, r, dims)) return 0;
    return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s shape %s must be %s%s%s", t->name, opc_shape(t), before,
                    opc_dims(dims, r), after);
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

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

/* For every window: the maximum over its in-input positions, scanned in
 * row-major order; a larger value or a NaN takes over, so ties keep the
 * first and NaN windows end on their last NaN; an all -inf window keeps its
 * first in-input position. */
OPC_KERNEL(fwd_kernel, mp_state)
{
    const aclsim_tensor_desc *self = &t[0], *out = &t[1], *mask = &t[2];
    const int64_t planes = st->n * st->c, positions = st->ho * st->wo;
    const int one = st->kh * st->kw == 1;
    const int64_t width = mask_width(st->ho, st->wo), groups = st->n * ((st->c + 15) / 16);
    const uint64_t mask_bytes = one ? (uint64_t)((groups - 1) * width + (positions + 15) / 16 * 32)
                                    : (uint64_t)planes * (uint64_t)positions * 4u;
    unsigned char *src, *dst, *m;
    if (opc_map_tensors(l, &src, self, &dst, out, NULL) || (m = map_mask(l, mask, mask_bytes)) == NULL) return 1;
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

static aclnnStatus fwd_prepare(const opc_call *c, const aclTensor *self, const aclIntArray *kernelSize,
                               const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
                               bool ceilMode, aclTensor *out, aclTensor *indices)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y, m;
    opc_ints k, s, p, d;
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_INTS(kernelSize, &k), OPC_INTS(stride, &s),
                            OPC_INTS(padding, &p), OPC_INTS(dilation, &d), OPC_TENSOR(out, &y),
                            OPC_TENSOR(indices, &m)};
    /* 1. the entry's own checks: kernelSize, self, out, then kernelSize's length */
    int rc = opc_require(api, args, 7, OPC_ORDER("kernelSize", "self", "out"));
    if (!rc) rc = opc_resolve(api, &args[1], 1);
    if (rc) return rc;
    if (k.n != 1 && k.n != 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize must have 1 or 2 elements, got %" PRIu64, k.n);

    /* 2. the remaining pointers, in the op_api's order, then live handles; 3. dtypes */
    rc = opc_args(api, args, 7, OPC_ORDER("stride", "padding", "dilation", "indices"));
    if (!rc) rc = opc_check_dtype(api, &x, &OPC_FLOATS);
    if (!rc) rc = opc_check_same_dtype(api, &y, &x);
    if (!rc) rc = opc_check_dtype(api, &m, &MASK_DTYPE);
    /* 4. formats and rank */
    if (!rc) rc = opc_check_same_format(api, &x, &y);
    if (!rc) rc = check_format(api, "self", x.format);
    if (rc) return rc;
    if (x.ndim != 3 && x.ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got %s",
                        opc_shape(&x));

    /* 5. attributes, sizes, output shapes */
    mp_state st = {0};
    if (!rc) rc = check_attrs(api, &k, &s, &p, &d, &st);
    if (!rc) rc = check_plane(api, &x, ceilMode, &st);
    if (!rc) rc = check_pooled(api, &y, &x, &st, 0, "", "");
    if (!rc) rc = check_pooled(api, &m, &x, &st, 1, "", " ([N,] C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32)");
    if (rc) return rc;
    aclsim_tensor_desc descs[3] = {x, y, m};
    int empty = opc_numel(&x) == 0 || opc_numel(&y) == 0; /* N = 0: success, nothing to run */
    return opc_finish_ex(c, &st, sizeof st, 0, descs, 3, 2, empty ? opc_noop_kernel : fwd_kernel,
                         &MASK_ADDRESS_COPIED);
}

OPC_ENTRY_POINTS(aclnnMaxPool2dWithMask, fwd_prepare,
                 (const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *stride,
                  const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode, aclTensor *out,
                  aclTensor *indices),
                 (self, kernelSize, stride, padding, dilation, ceilMode, out, indices))

/* ========================================================================== */
/* backward                                                                   */
/* ========================================================================== */

/* gradInput = 0; gradInput[n, c].flat[idx] += gradOutput[n, c, oh, ow] for
 * idx the mask's int32 value at (n, c, oh, ow), visited in that order and
 * summed in fp32 (workspace), then rounded once. A 1x1 kernel ignores the
 * mask: gradInput[n, c, oh*sH, ow*sW] = gradOutput[n, c, oh, ow], copied bit
 * for bit (a signalling NaN stays one), zero elsewhere. */
OPC_KERNEL(bwd_kernel, mp_state)
{
    const aclsim_tensor_desc *grad = &t[0], *mask = &t[2], *gin = &t[3];
    const int64_t planes = st->n * st->c, plane = st->h * st->w;
    const int one = st->kh * st->kw == 1;
    unsigned char *g, *dst, *acc;
    if (opc_map_tensors(l, &g, grad, &dst, gin, NULL) ||
        (acc = opc_map_workspace(l, 0, (uint64_t)planes * (uint64_t)plane * 4u, "fp32 accumulators")) == NULL)
        return 1;
    unsigned char *m = NULL; /* a 1x1 kernel does not read the mask */
    if (!one && (m = map_mask(l, mask, (uint64_t)planes * (uint64_t)(st->ho * st->wo) * 4u)) == NULL) return 1;
    const int32_t dt = grad->dtype;
    const size_t isz = aclsim_dtype_size(dt);
    if (one) { /* each output position from one input position: zeros, then copies of the bits */
        for (int64_t n = 0; n < st->n; n++)
            for (int64_t c = 0; c < st->c; c++) {
                for (int64_t ih = 0; ih < st->h; ih++)
                    for (int64_t iw = 0; iw < st->w; iw++) memset(at4(dst, gin, isz, n, c, ih, iw), 0, isz);
                for (int64_t oh = 0; oh < st->ho; oh++)
                    for (int64_t ow = 0; ow < st->wo; ow++)
                        memcpy(at4(dst, gin, isz, n, c, oh * st->sh, ow * st->sw),
                               at4(g, grad, isz, n, c, oh, ow), isz);
            }
        return 0;
    }
    memset(acc, 0, (size_t)(planes * plane) * 4u);
    for (int64_t n = 0; n < st->n; n++)
        for (int64_t c = 0; c < st->c; c++) {
            const int64_t pl = n * st->c + c;
            float *a = (float *)(void *)(acc + (uint64_t)(pl * plane) * 4u);
            for (int64_t oh = 0; oh < st->ho; oh++)
                for (int64_t ow = 0; ow < st->wo; ow++) {
                    const int64_t idx = get_le32(m + 4u * (uint64_t)((pl * st->ho + oh) * st->wo + ow));
                    if (idx < 0 || idx >= plane)
                        return opc_fail(1, l->op_name,
                                        "mask value %" PRId64 " at (n=%" PRId64 ", c=%" PRId64 ", oh=%" PRId64
                                        ", ow=%" PRId64 ") is outside the %" PRId64 "x%" PRId64
                                        " input plane: the mask does not come from aclnnMaxPool2dWithMask "
                                        "with these arguments", idx, n, c, oh, ow, st->h, st->w);
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

static aclnnStatus bwd_prepare(const opc_call *c, const aclTensor *gradOutput, const aclTensor *self,
                               const aclTensor *indices, const aclIntArray *kernelSize, const aclIntArray *stride,
                               const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
                               aclTensor *gradInput)
{
    const char *api = c->api;
    aclsim_tensor_desc go, x, m, gi;
    opc_ints k, s, p, d;
    const opc_arg args[] = {OPC_TENSOR(gradOutput, &go), OPC_TENSOR(self, &x), OPC_TENSOR(indices, &m),
                            OPC_INTS(kernelSize, &k), OPC_INTS(stride, &s), OPC_INTS(padding, &p),
                            OPC_INTS(dilation, &d), OPC_TENSOR(gradInput, &gi)};
    /* 1. the entry's own checks: kernelSize, self, gradOutput, then kernelSize's
     * length, which the real op reports as ACLNN_ERR_PARAM_NULLPTR */
    int rc = opc_require(api, args, 8, OPC_ORDER("kernelSize", "self", "gradOutput"));
    if (!rc) rc = opc_resolve(api, &args[3], 1);
    if (rc) return rc;
    if (k.n != 1 && k.n != 2)
        return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api,
                        "kernelSize must have 1 or 2 elements, got %" PRIu64
                        " (reported as NULLPTR, as the real op does)", k.n);

    /* 2. every pointer, in the op_api's order, then live handles; 3. dtypes */
    rc = opc_args(api, args, 8, OPC_ORDER("indices", "stride", "padding", "dilation", "gradInput"));
    if (!rc) rc = opc_check_dtype(api, &x, &OPC_FLOATS);
    if (!rc) rc = opc_check_same_dtype(api, &go, &x);
    if (!rc) rc = opc_check_same_dtype(api, &gi, &x);
    if (!rc) rc = opc_check_dtype(api, &m, &MASK_DTYPE);
    if (rc) return rc;

    /* 4. formats and ranks */
    if (x.format != go.format || x.format != gi.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "formats of self (%d), gradOutput (%d) and gradInput (%d) must be equal",
                        (int)x.format, (int)go.format, (int)gi.format);
    if ((rc = check_format(api, "self", x.format)) || (rc = check_format(api, "indices", m.format))) return rc;
    const aclsim_tensor_desc *ranked[4] = {&x, &gi, &go, &m};
    for (int i = 0; i < 4; i++)
        if (ranked[i]->ndim != 3 && ranked[i]->ndim != 4)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be 3-D or 4-D, got %s", ranked[i]->name,
                            opc_shape(ranked[i]));

    /* 5. attributes, then shapes */
    mp_state st = {0};
    if ((rc = check_attrs(api, &k, &s, &p, &d, &st))) return rc;
    if (!opc_same_shape(&gi, &x))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradInput shape %s must equal self shape %s",
                        opc_shape(&gi), opc_shape(&x));
    if (!rc) rc = check_plane(api, &x, ceilMode, &st);
    if (!rc) rc = check_pooled(api, &go, &x, &st, 0, "the forward's output shape ", "");
    if (rc) return rc;
    /* The real op ignores its check of the indices shape. Simulator
     * strictness: the kernel reads N*C*Ho*Wo int32 values from the mask's
     * bytes, so a smaller mask would be read out of bounds. */
    uint64_t prefix = (uint64_t)(st.n * st.c * st.ho * st.wo) * 4u;
    if (st.kh * st.kw != 1 && (uint64_t)opc_numel(&m) < prefix)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "indices %s holds %" PRId64 " bytes, fewer than the %" PRIu64
                        " of its int32 index prefix (4*N*C*Ho*Wo)", opc_shape(&m), opc_numel(&m), prefix);

    aclsim_tensor_desc descs[4] = {go, x, m, gi};
    int empty = opc_numel(&x) == 0;
    uint64_t ws = empty ? 0 : (uint64_t)(st.n * st.c * st.h * st.w) * 4u;
    return opc_finish_ex(c, &st, sizeof st, ws, descs, 4, 1, empty ? opc_noop_kernel : bwd_kernel,
                         &MASK_ADDRESS_COPIED);
}

OPC_ENTRY_POINTS(aclnnMaxPool2dWithMaskBackward, bwd_prepare,
                 (const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
                  const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
                  const aclIntArray *dilation, bool ceilMode, aclTensor *gradInput),
                 (gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode, gradInput))
