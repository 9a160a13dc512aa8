/*
 * replication_pad2d.c - aclnnReplicationPad2d and aclnnReplicationPad2dBackward
 * for the CPU simulator.
 *
 * padding = [left, right, top, bottom]; Hout = H + top + bottom, Wout = W + left + right.
 *   forward:  out[.., i, j] = self[.., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)]
 *   backward: gradInput[.., h, w] = sum of gradOutput[.., i, j] over the (i, j) the
 *             forward reads (h, w) from; rows summed first, then columns, ascending,
 *             each sum from its first term; a position read once is a copy of its
 *             bits (signalling NaNs, -0 and all), as with zero pads everywhere.
 * Pads larger than the dims and negative pads (cropping) follow the same rule.
 *
 * Phase-1 checks are generated from the descriptions (ascend_aclnn/ops/pad.py, in the
 * order of ops-math's aclnn_replication_pad2d.cpp and aclnn_pad2d_backward.cpp). Kernels
 * index strided views directly, so no workspace is needed. fp16/bf16 accumulate in
 * fp32 and round once; fp32, double and complex keep their own precision.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "generated/replication_pad2d_checks.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t left, right, top, bottom;
    int64_t n, c, h, w;   /* self's sizes (n = 1 for a 3-D self) */
    int64_t hout, wout;   /* out's / gradOutput's last two */
} pad_state;

/* The forward's source index clamp(i - before, 0, n - 1), without overflow. */
static int64_t source_index(int64_t i, int64_t before, int64_t n)
{
    if (i <= before) return 0;
    uint64_t k = (uint64_t)i - (uint64_t)before; /* i > before: the true difference, >= 1 */
    return k >= (uint64_t)n ? n - 1 : (int64_t)k;
}

static inline unsigned char *elem(unsigned char *base, const aclsim_tensor_desc *t, size_t isz,
                                  int64_t n, int64_t c, int64_t h, int64_t w)
{
    return base + (uint64_t)opc_image_at(t, n, c, h, w) * isz;
}

/* What both kernels need: the pads and the sizes of self and of the padded tensor. */
static pad_state plan(const aclsim_tensor_desc *x, const aclsim_tensor_desc *other, const int64_t *pad)
{
    const int64_t d = x->ndim;
    pad_state st = {.left = pad[0], .right = pad[1], .top = pad[2], .bottom = pad[3],
                    .n = d == 4 ? x->shape[0] : 1, .c = x->shape[d - 3], .h = x->shape[d - 2], .w = x->shape[d - 1],
                    .hout = other->shape[d - 2], .wout = other->shape[d - 1]};
    return st;
}

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

/* Axis k (0 = W, 1 = H) of the gather: the edge clamp. */
static int64_t clamp_map(const void *state, int k, int64_t i, int64_t n)
{
    const pad_state *st = state;
    return source_index(i, k == 0 ? st->left : st->top, n);
}

OPC_KERNEL(fwd_kernel, pad_state)
{
    return opc_gather_map(l, &t[0], &t[1], 2, clamp_map, st);
}

static aclnnStatus fwd_prepare(const opc_call *c, const aclTensor *self, const aclIntArray *padding,
                               aclTensor *out)
{
    aclnnReplicationPad2d_args a;
    int rc = aclnnReplicationPad2d_checks(c->api, self, padding, out, &a);
    if (rc) return rc;
    pad_state st = plan(&a.self, &a.out, a.padding.v);
    aclsim_tensor_desc descs[2] = {a.self, a.out};
    int empty = opc_has_zero_dim(&a.self) || opc_has_zero_dim(&a.out); /* N = 0: nothing to compute */
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, empty ? opc_noop_kernel : fwd_kernel);
}

OPC_ENTRY_POINTS(aclnnReplicationPad2d, fwd_prepare,
                 (const aclTensor *self, const aclIntArray *padding, aclTensor *out), (self, padding, out))

/* ========================================================================== */
/* backward                                                                   */
/* ========================================================================== */

/* One accumulator: real part, imaginary part. Values of fp32-based dtypes (fp16, bf16,
 * fp32, complex64) are held in float and added in float; double ones in double. */
typedef struct { double re, im; } acc_t;

static acc_t load(const unsigned char *p, int32_t dt)
{
    acc_t v = {0.0, 0.0};
    switch (dt) {
    case ACL_DOUBLE: memcpy(&v.re, p, 8); break;
    case ACL_COMPLEX64: { float f[2]; memcpy(f, p, 8); v.re = f[0]; v.im = f[1]; break; }
    case ACL_COMPLEX128: memcpy(&v.re, p, 8); memcpy(&v.im, p + 8, 8); break;
    default: v.re = opc_load_float(p, dt); break; /* fp32, fp16, bf16 */
    }
    return v;
}

static void add(acc_t *a, acc_t x, int single)
{
    if (single) {
        a->re = (float)a->re + (float)x.re;
        a->im = (float)a->im + (float)x.im;
    } else {
        a->re += x.re;
        a->im += x.im;
    }
}

static void store(unsigned char *p, int32_t dt, acc_t v)
{
    switch (dt) {
    case ACL_DOUBLE: memcpy(p, &v.re, 8); break;
    case ACL_COMPLEX64: { float f[2] = {(float)v.re, (float)v.im}; memcpy(p, f, 8); break; }
    case ACL_COMPLEX128: memcpy(p, &v.re, 8); memcpy(p + 8, &v.im, 8); break;
    default: opc_store_float(p, dt, (float)v.re); break; /* rounds fp16/bf16 once */
    }
}

/* For each input index k of an axis of size n, the first and last output index i with
 * clamp(i - before, 0, n - 1) == k (first > last when no output position reads k). */
static int read_ranges(int64_t n, int64_t before, int64_t n_out, int64_t **first, int64_t **last)
{
    *first = malloc((size_t)n * sizeof(int64_t));
    *last = malloc((size_t)n * sizeof(int64_t));
    if (*first == NULL || *last == NULL) return 1;
    for (int64_t k = 0; k < n; k++) {
        (*first)[k] = 0;
        (*last)[k] = -1;
    }
    for (int64_t i = 0; i < n_out; i++) {
        int64_t k = source_index(i, before, n);
        if ((*last)[k] < (*first)[k]) (*first)[k] = i;
        (*last)[k] = i;
    }
    return 0;
}

OPC_KERNEL(bwd_kernel, pad_state)
{
    const aclsim_tensor_desc *grad = &t[0], *gin = &t[2];
    unsigned char *src, *dst;
    if (opc_map_tensors(l, &src, grad, &dst, gin, NULL)) return 1;
    const int64_t H = st->h, W = st->w;
    const int32_t dt = gin->dtype;
    const size_t isz = aclsim_dtype_size(dt);
    const int single = dt != ACL_DOUBLE && dt != ACL_COMPLEX128;
    int64_t *rlo = NULL, *rhi = NULL, *clo = NULL, *chi = NULL;
    int fail = read_ranges(H, st->top, st->hout, &rlo, &rhi) || read_ranges(W, st->left, st->wout, &clo, &chi);
    if (fail) {
        opc_fail(1, l->op_name, "out of host memory");
    } else {
        for (int64_t n = 0; n < st->n; n++)
            for (int64_t c = 0; c < st->c; c++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        unsigned char *to = elem(dst, gin, isz, n, c, h, w);
                        if (rlo[h] == rhi[h] && clo[w] == chi[w]) { /* read once: a copy, every bit kept */
                            memcpy(to, elem(src, grad, isz, n, c, rlo[h], clo[w]), isz);
                            continue;
                        }
                        /* rows first, then columns, each sum starting from its first term;
                         * 0 where nothing reads (h, w) (negative pads crop it away) */
                        acc_t sum = {0.0, 0.0};
                        for (int64_t j = clo[w]; rlo[h] <= rhi[h] && j <= chi[w]; j++) {
                            acc_t col = load(elem(src, grad, isz, n, c, rlo[h], j), dt);
                            for (int64_t i = rlo[h] + 1; i <= rhi[h]; i++)
                                add(&col, load(elem(src, grad, isz, n, c, i, j), dt), single);
                            if (j == clo[w]) sum = col;
                            else add(&sum, col, single);
                        }
                        store(to, dt, sum);
                    }
    }
    free(rlo);
    free(rhi);
    free(clo);
    free(chi);
    return fail;
}

static aclnnStatus bwd_prepare(const opc_call *c, const aclTensor *gradOutput, const aclTensor *self,
                               const aclIntArray *padding, aclTensor *gradInput)
{
    aclnnReplicationPad2dBackward_args a;
    int rc = aclnnReplicationPad2dBackward_checks(c->api, gradOutput, self, padding, gradInput, &a);
    if (rc) return rc;
    pad_state st = plan(&a.self, &a.gradOutput, a.padding.v);
    aclsim_tensor_desc descs[3] = {a.gradOutput, a.self, a.gradInput}; /* every tensor, so the addr setters can index self */
    /* an empty tensor (N = 0, or cropped to nothing): gradInput is left as it is */
    int empty = opc_has_zero_dim(&a.gradOutput) || opc_has_zero_dim(&a.self) || opc_has_zero_dim(&a.gradInput);
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, empty ? opc_noop_kernel : bwd_kernel);
}

OPC_ENTRY_POINTS(aclnnReplicationPad2dBackward, bwd_prepare,
                 (const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding,
                  aclTensor *gradInput),
                 (gradOutput, self, padding, gradInput))
