/*
 * im2col.c - aclnnIm2col (PyTorch's unfold) for the CPU simulator; in the
 * "math" library of the split layout.
 *
 * Phase-1 checks are generated from the description (ascend_aclnn/ops/im2col.py, in
 * the order of the ops-math op_api); then, as the real op does, a 4-D self whose
 * storage dims are its view dims is reformatted to NCHW in place (see prepare). The
 * kernel is a gather:
 *   out[n, c*kH*kW + ki*kW + kj, oh*Wo + ow] = self[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]
 * with 0 outside self, written in out's dtype. Views of any strides are
 * read and written in place.
 */
#define _GNU_SOURCE
#include "im2col_common.h"
#include "aclnnop/aclnn_im2col.h"
#include "generated/im2col_checks.h"

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

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclIntArray *kernelSize,
                           const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride,
                           const aclTensor *out)
{
    aclnnIm2col_args a;
    int rc = aclnnIm2col_checks(c->api, self, kernelSize, dilation, padding, stride, out, &a);
    if (rc) return rc;
    aclsim_tensor_desc x = a.self;
    /* What the op_api does after its checks outlives this call: for a non-empty 4-D self,
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

    im2col_geometry st = im2col_plan(&a.kernelSize, &a.dilation, &a.padding, &a.stride, aclnnIm2col_ho(&a),
                                     aclnnIm2col_wo(&a), &x);
    int empty = st.n == 0; /* an empty self succeeds with nothing to do */
    aclsim_tensor_desc descs[2] = {x, a.out};
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, empty ? opc_noop_kernel : kernel);
}

OPC_ENTRY_POINTS(aclnnIm2col, prepare,
                 (const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *dilation,
                  const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out),
                 (self, kernelSize, dilation, padding, stride, out))
