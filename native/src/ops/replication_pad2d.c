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
 * Phase-1 checks follow the real op_api order (ops-math aclnn_replication_pad2d.cpp and
 * aclnn_pad2d_backward.cpp), with the same statuses. Kernels
 * index strided views directly, so no workspace is needed. fp16/bf16 accumulate in
 * fp32 and round once; fp32, double and complex keep their own precision.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_pad2d_backward.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define BF16_MAX_PAD 7

typedef struct {
    int64_t left, right, top, bottom;
    int64_t n, c, h, w;   /* self's sizes (n = 1 for a 3-D self) */
    int64_t hout, wout;   /* out's / gradOutput's last two */
} pad_state;

static const opc_dtypes FWD_DTYPES = {11, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_UINT8,
                                           ACL_INT16, ACL_INT32, ACL_INT64, ACL_COMPLEX64, ACL_COMPLEX128}, NULL};
static const opc_dtypes BWD_DTYPES = {6, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64,
                                          ACL_COMPLEX128}, NULL};

/* Padded size n + a + b; 0 if it does not fit in int64. */
static int padded(int64_t n, int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(n, a, out) && !__builtin_add_overflow(*out, b, out);
}

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

/* The shape checks both ops share, in the op_api's order: self 3-D or 4-D, `other`
 * (out, gradOutput) of the same rank, four pads. */
static int check_ranks(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *other,
                       const opc_ints *pad)
{
    if (x->ndim != 3 && x->ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D or 4-D, got %" PRId64 "-D %s",
                        x->ndim, opc_shape(x));
    if (other->ndim != x->ndim)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must have self's rank %" PRId64 ", got %" PRId64 "-D %s",
                        other->name, x->ndim, other->ndim, opc_shape(other));
    if (pad->n != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding length should be 4, got %" PRIu64, pad->n);
    return 0;
}

/* 1 if `other` ends with H + top + bottom, W + left + right (computed without overflow). */
static int padded_hw(const aclsim_tensor_desc *x, const aclsim_tensor_desc *other, const int64_t *pad)
{
    const int64_t d = x->ndim;
    int64_t h, w;
    return padded(x->shape[d - 2], pad[2], pad[3], &h) && padded(x->shape[d - 1], pad[0], pad[1], &w) &&
           other->shape[d - 2] == h && other->shape[d - 1] == w;
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

/* The op_api's empty-tensor rule, once any tensor is empty: a 3-D self is an error, a
 * 4-D self must have C, H, W > 0. Returns 0 (success, nothing to compute) or a status. */
static int empty_rule(const char *api, const aclsim_tensor_desc *self)
{
    if (self->ndim == 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "empty tensors are only accepted with a 4-D self whose N is 0 (self is 3-D, %s)",
                        opc_shape(self));
    if (self->shape[1] == 0 || self->shape[2] == 0 || self->shape[3] == 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self must have C, H, W > 0 (only N may be 0), got %s", opc_shape(self));
    return 0;
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
    const char *api = c->api;
    aclsim_tensor_desc x, y;
    opc_ints pad;
    /* 1. null pointers, then live handles */
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_INTS(padding, &pad), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 3, NULL);
    /* 2. view formats equal (161002); 3. dtypes; 4. shapes */
    if (!rc) rc = opc_check_same_format(api, &x, &y);
    if (!rc) rc = opc_check_dtype(api, &x, &FWD_DTYPES);
    if (!rc) rc = opc_check_dtype(api, &y, &FWD_DTYPES);
    if (!rc) rc = opc_check_same_dtype(api, &y, &x);
    if (!rc) rc = check_ranks(api, &x, &y, &pad);
    if (rc) return rc;
    int match = padded_hw(&x, &y, pad.v);
    for (int64_t k = 0; k < x.ndim - 2; k++) match = match && y.shape[k] == x.shape[k];
    if (!match)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out shape %s must be self's leading dims then H + top + bottom, W + left + right "
                        "(self %s, padding %s)", opc_shape(&y), opc_shape(&x), opc_dims(pad.v, 4));

    /* 5. empty tensors */
    int empty = opc_has_zero_dim(&x) || opc_has_zero_dim(&y);
    if (empty && (rc = empty_rule(api, &x))) return rc;
    pad_state st = plan(&x, &y, pad.v);
    aclsim_tensor_desc descs[2] = {x, y};
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

static int bf16_padding_ok(const int64_t *pad)
{
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0) return 0;
    if (pad[2] == 0 && pad[3] == 0) return 1;
    return pad[0] <= BF16_MAX_PAD && pad[1] <= BF16_MAX_PAD && pad[2] <= BF16_MAX_PAD && pad[3] <= BF16_MAX_PAD;
}

static aclnnStatus bwd_prepare(const opc_call *c, const aclTensor *gradOutput, const aclTensor *self,
                               const aclIntArray *padding, aclTensor *gradInput)
{
    const char *api = c->api;
    aclsim_tensor_desc g, x, y;
    opc_ints pad;
    /* 1. null pointers (in the op_api's order), then live handles; 2. dtypes: each listed
     * (gradInput, gradOutput, self), then both equal self's */
    const opc_arg args[] = {OPC_TENSOR(gradOutput, &g), OPC_TENSOR(self, &x), OPC_INTS(padding, &pad),
                            OPC_TENSOR(gradInput, &y)};
    int rc = opc_args(api, args, 4, OPC_ORDER("self", "gradOutput", "gradInput", "padding"));
    if (!rc) rc = opc_check_dtype(api, &y, &BWD_DTYPES);
    if (!rc) rc = opc_check_dtype(api, &g, &BWD_DTYPES);
    if (!rc) rc = opc_check_dtype(api, &x, &BWD_DTYPES);
    if (!rc) rc = opc_check_same_dtype(api, &y, &x);
    if (!rc) rc = opc_check_same_dtype(api, &g, &x);
    if (rc) return rc;

    /* 3. formats: no private storage layout, then all three view formats equal (161002) */
    if (opc_is_private_format(g.format) || opc_is_private_format(x.format) || opc_is_private_format(y.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "format only supports ND (got gradOutput %d, self %d, "
                        "gradInput %d)", (int)g.format, (int)x.format, (int)y.format);
    if (g.format != x.format || y.format != x.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "formats of gradOutput %s (%d), self %s (%d) and gradInput "
                        "%s (%d) must be equal", aclsim_format_name(g.format), (int)g.format,
                        aclsim_format_name(x.format), (int)x.format, aclsim_format_name(y.format), (int)y.format);

    /* 4. shapes */
    if (!opc_same_shape(&y, &x))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradInput shape %s must equal self shape %s",
                        opc_shape(&y), opc_shape(&x));
    if ((rc = check_ranks(api, &x, &g, &pad))) return rc;
    if (x.dtype == ACL_BF16 && !bf16_padding_ok(pad.v))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "bf16 needs padding >= 0 and either top = bottom = 0 or every pad <= %d, got %s",
                        BF16_MAX_PAD, opc_dims(pad.v, 4));
    if (!padded_hw(&x, &g, pad.v))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput shape %s must end with H + top + bottom, "
                        "W + left + right (self %s, padding %s)", opc_shape(&g), opc_shape(&x), opc_dims(pad.v, 4));

    /* 5. empty tensors (gradInput is then left as it is) */
    int empty = opc_has_zero_dim(&g) || opc_has_zero_dim(&x) || opc_has_zero_dim(&y);
    if (empty && (rc = empty_rule(api, &x))) return rc;

    /* Simulator strictness (the real op_api compares only H and W, and its final copy
     * into gradInput then gets mismatched shapes): the leading dims must agree. */
    for (int64_t k = 0; k < x.ndim - 2; k++)
        if (g.shape[k] != x.shape[k])
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput %s and self %s must have the same "
                            "leading dims", opc_shape(&g), opc_shape(&x));

    pad_state st = plan(&x, &g, pad.v);
    aclsim_tensor_desc descs[3] = {g, x, y}; /* every tensor, so the addr setters can index self */
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, empty ? opc_noop_kernel : bwd_kernel);
}

OPC_ENTRY_POINTS(aclnnReplicationPad2dBackward, bwd_prepare,
                 (const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding,
                  aclTensor *gradInput),
                 (gradOutput, self, padding, gradInput))
