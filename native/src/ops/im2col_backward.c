/*
 * im2col_backward.c - aclnnIm2colBackward (PyTorch's fold, col2im) for the CPU
 * simulator; in the "cv" library of the split layout.
 *
 * Phase-1 checks are generated from the description (ascend_aclnn/ops/im2col.py,
 * in the order of the ops-cv op_api). An empty gradOutput succeeds and leaves
 * out unwritten, as on the NPU.
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
#include "generated/im2col_backward_checks.h"

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

static aclnnStatus prepare(const opc_call *c, const aclTensor *gradOutput, const aclIntArray *inputSize,
                           const aclIntArray *kernelSize, const aclIntArray *dilation, const aclIntArray *padding,
                           const aclIntArray *stride, aclTensor *out)
{
    aclnnIm2colBackward_args a;
    int rc = aclnnIm2colBackward_checks(c->api, gradOutput, inputSize, kernelSize, dilation, padding, stride, out,
                                        &a);
    if (rc) return rc;
    im2col_geometry st = im2col_plan(&a.kernelSize, &a.dilation, &a.padding, &a.stride, aclnnIm2colBackward_ho(&a),
                                     aclnnIm2colBackward_wo(&a), &a.out);
    aclsim_tensor_desc descs[2] = {a.gradOutput, a.out}; /* an empty gradOutput: out stays unwritten, as on the NPU */
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, opc_has_zero_dim(&a.gradOutput) ? opc_noop_kernel : kernel);
}

OPC_ENTRY_POINTS(aclnnIm2colBackward, prepare,
                 (const aclTensor *gradOutput, const aclIntArray *inputSize, const aclIntArray *kernelSize,
                  const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride,
                  aclTensor *out),
                 (gradOutput, inputSize, kernelSize, dilation, padding, stride, out))
