/*
 * max_pool2d_with_mask.c - aclnnMaxPool2dWithMask and
 * aclnnMaxPool2dWithMaskBackward for the CPU simulator, as on Atlas A2/A3.
 *
 * Phase-1 checks are generated from the descriptions (ascend_aclnn/ops/max_pool.py),
 * in the order of the real op_api, including its quirks: kernelSize is checked for
 * NULL and for its length before the other pointers, and the backward reports a bad
 * kernelSize length as ACLNN_ERR_PARAM_NULLPTR.
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
#include "generated/max_pool2d_with_mask_checks.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

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

/* The geometry the checks computed (OP's exported values), and self's sizes. */
#define MP_STATE(OP, a)                                                                                  \
    {.kh = OP##_kh(&(a)), .kw = OP##_kw(&(a)), .sh = OP##_sh(&(a)), .sw = OP##_sw(&(a)), .ph = OP##_ph(&(a)),  \
     .pw = OP##_pw(&(a)), .n = (a).self.ndim == 4 ? (a).self.shape[0] : 1, .c = (a).self.shape[(a).self.ndim - 3], \
     .h = (a).self.shape[(a).self.ndim - 2], .w = (a).self.shape[(a).self.ndim - 1], .ho = OP##_ho(&(a)),      \
     .wo = OP##_wo(&(a))}

/* Element (n, c, h, w) of a 3-D (n ignored) or 4-D view whose data address maps to base. */
static unsigned char *at4(unsigned char *base, const aclsim_tensor_desc *t, size_t isz, int64_t n, int64_t c,
                          int64_t h, int64_t w)
{
    return base + (uint64_t)opc_image_at(t, n, c, h, w) * isz;
}

/* Mask width: (ceil(Ho*Wo/16) + 1) * 2 * 16 bytes. */
static int64_t mask_width(int64_t ho, int64_t wo) { return ((ho * wo + 15) / 16 + 1) * 32; }

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
    aclnnMaxPool2dWithMask_args a;
    int rc = aclnnMaxPool2dWithMask_checks(c->api, self, kernelSize, stride, padding, dilation, ceilMode, out, indices,
                                           &a);
    if (rc) return rc;
    mp_state st = MP_STATE(aclnnMaxPool2dWithMask, a);
    aclsim_tensor_desc descs[3] = {a.self, a.out, a.indices};
    int empty = opc_numel(&a.self) == 0 || opc_numel(&a.out) == 0; /* N = 0: success, nothing to run */
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
    aclnnMaxPool2dWithMaskBackward_args a;
    int rc = aclnnMaxPool2dWithMaskBackward_checks(c->api, gradOutput, self, indices, kernelSize, stride, padding,
                                                   dilation, ceilMode, gradInput, &a);
    if (rc) return rc;
    mp_state st = MP_STATE(aclnnMaxPool2dWithMaskBackward, a);
    aclsim_tensor_desc descs[4] = {a.gradOutput, a.self, a.indices, a.gradInput};
    int empty = opc_numel(&a.self) == 0;
    uint64_t ws = empty ? 0 : (uint64_t)(st.n * st.c * st.h * st.w) * 4u;
    return opc_finish_ex(c, &st, sizeof st, ws, descs, 4, 1, empty ? opc_noop_kernel : bwd_kernel,
                         &MASK_ADDRESS_COPIED);
}

OPC_ENTRY_POINTS(aclnnMaxPool2dWithMaskBackward, bwd_prepare,
                 (const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
                  const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
                  const aclIntArray *dilation, bool ceilMode, aclTensor *gradInput),
                 (gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode, gradInput))
