/*
 * replication_pad2d.c - aclnnReplicationPad2d and aclnnReplicationPad2dBackward
 * for the CPU simulator.
 *
 * padding = [left, right, top, bottom]; Hout = H + top + bottom, Wout = W + left + right.
 *   forward:  out[.., i, j] = self[.., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)]
 *   backward: gradInput[.., h, w] = sum of gradOutput[.., i, j] over the (i, j) the
 *             forward reads (h, w) from; rows summed first, then columns, ascending.
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

#define FWD_OP "aclnnReplicationPad2d"
#define FWD_API FWD_OP "GetWorkspaceSize"
#define BWD_OP "aclnnReplicationPad2dBackward"
#define BWD_API BWD_OP "GetWorkspaceSize"
#define BF16_MAX_PAD 7

typedef struct {
    int64_t left, right, top, bottom;
    int empty; /* the op_api's empty-tensor path: succeed, compute nothing */
} pad_state;

static int fwd_dtype_ok(int32_t d)
{
    switch (d) {
    case ACL_FLOAT: case ACL_INT32: case ACL_INT64: case ACL_FLOAT16: case ACL_INT16:
    case ACL_DOUBLE: case ACL_INT8: case ACL_UINT8: case ACL_COMPLEX64: case ACL_COMPLEX128:
    case ACL_BF16:
        return 1;
    default:
        return 0;
    }
}

static int bwd_dtype_ok(int32_t d)
{
    switch (d) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE: case ACL_COMPLEX64:
    case ACL_COMPLEX128:
        return 1;
    default:
        return 0;
    }
}

/* Device-private layouts, which the backward refuses. */
static int private_format(int32_t f)
{
    switch (f) {
    case ACL_FORMAT_NC1HWC0: case ACL_FORMAT_FRACTAL_Z: case ACL_FORMAT_NC1HWC0_C04:
    case ACL_FORMAT_FRACTAL_NZ: case ACL_FORMAT_NDC1HWC0: case ACL_FRACTAL_Z_3D:
    case ACL_FORMAT_FRACTAL_NZ_C0_16: case ACL_FORMAT_FRACTAL_NZ_C0_32: case ACL_FORMAT_FRACTAL_NZ_C0_2:
    case ACL_FORMAT_FRACTAL_NZ_C0_4: case ACL_FORMAT_FRACTAL_NZ_C0_8:
        return 1;
    default:
        return 0;
    }
}

static int same_shape(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int64_t d = 0; d < a->ndim && d < ACLSIM_MAX_DIMS; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static int has_zero_dim(const aclsim_tensor_desc *t)
{
    for (int64_t d = 0; d < t->ndim && d < ACLSIM_MAX_DIMS; d++)
        if (t->shape[d] == 0) return 1;
    return 0;
}

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

/* Element (n, c, h, w) of a 3-D (C, H, W: n ignored) or 4-D view. */
static inline unsigned char *elem(unsigned char *base, const aclsim_tensor_desc *t, size_t isz,
                                  int64_t n, int64_t c, int64_t h, int64_t w)
{
    const int64_t *s = t->strides;
    int64_t e = t->offset + (t->ndim == 4 ? n * s[0] + c * s[1] + h * s[2] + w * s[3]
                                          : c * s[0] + h * s[1] + w * s[2]);
    return base + (uint64_t)e * isz;
}

/* The op_api's empty-tensor rule, once any tensor is empty: a 3-D self is an error, a
 * 4-D self must have C, H, W > 0. Returns 0 (success, nothing to compute) or a status. */
static int empty_rule(const char *api, const aclsim_tensor_desc *self)
{
    char b[160];
    if (self->ndim == 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "empty tensors are only accepted with a 4-D self whose N is 0 (self is 3-D, %s)",
                        opc_shape_str(self, b, sizeof b));
    if (self->shape[1] == 0 || self->shape[2] == 0 || self->shape[3] == 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self must have C, H, W > 0 (only N may be 0), got %s", opc_shape_str(self, b, sizeof b));
    return 0;
}

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

static int fwd_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const pad_state *st = state;
    if (st->empty) return 0;
    const aclsim_tensor_desc *self = &t[0], *out = &t[1];
    unsigned char *src = opc_map_tensor(l, self);
    unsigned char *dst = src ? opc_map_tensor(l, out) : NULL;
    if (dst == NULL) return 1;
    const int64_t d = self->ndim;
    const int64_t N = d == 4 ? self->shape[0] : 1, C = self->shape[d - 3];
    const int64_t H = self->shape[d - 2], W = self->shape[d - 1];
    const int64_t Hout = out->shape[d - 2], Wout = out->shape[d - 1];
    const size_t isz = aclsim_dtype_size(self->dtype);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < Hout; i++) {
                int64_t h = source_index(i, st->top, H);
                for (int64_t j = 0; j < Wout; j++)
                    memcpy(elem(dst, out, isz, n, c, i, j),
                           elem(src, self, isz, n, c, h, source_index(j, st->left, W)), isz);
            }
    return 0;
}

static aclnnStatus fwd_prepare(const aclTensor *self, const aclIntArray *padding, aclTensor *out,
                               uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = FWD_API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. null pointers, then live handles */
    if (self == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "self is NULL");
    if (padding == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "padding is NULL");
    if (out == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "out is NULL");
    aclsim_tensor_desc x, y;
    const int64_t *pad;
    uint64_t npad;
    int rc = opc_get_tensor(api, "self", self, &x);
    if (!rc) rc = opc_get_int_array(api, "padding", padding, &pad, &npad);
    if (!rc) rc = opc_get_tensor(api, "out", out, &y);
    if (rc) return rc;

    /* 2. formats */
    if (x.format != y.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self format %d and out format %d must be equal",
                        (int)x.format, (int)y.format);

    /* 3. dtypes */
    if (!fwd_dtype_ok(x.dtype) || !fwd_dtype_ok(y.dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "%s dtype must be ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_UINT8, "
                        "ACL_INT16, ACL_INT32, ACL_INT64, ACL_COMPLEX64 or ACL_COMPLEX128, got %s (%d)",
                        fwd_dtype_ok(x.dtype) ? "out" : "self",
                        aclsim_dtype_name(fwd_dtype_ok(x.dtype) ? y.dtype : x.dtype),
                        (int)(fwd_dtype_ok(x.dtype) ? y.dtype : x.dtype));
    if (y.dtype != x.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s (%d) must equal self dtype %s (%d)",
                        aclsim_dtype_name(y.dtype), (int)y.dtype, aclsim_dtype_name(x.dtype), (int)x.dtype);

    /* 4. shapes */
    if (x.ndim != 3 && x.ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D or 4-D, got %" PRId64 "-D %s",
                        x.ndim, opc_shape_str(&x, b1, sizeof b1));
    if (y.ndim != x.ndim)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must have self's rank %" PRId64 ", got %" PRId64 "-D %s",
                        x.ndim, y.ndim, opc_shape_str(&y, b1, sizeof b1));
    if (npad != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding length should be 4, got %" PRIu64, npad);
    const int64_t d = x.ndim;
    int64_t Hout, Wout;
    int fits = padded(x.shape[d - 2], pad[2], pad[3], &Hout) && padded(x.shape[d - 1], pad[0], pad[1], &Wout);
    int match = fits && y.shape[d - 2] == Hout && y.shape[d - 1] == Wout;
    for (int64_t k = 0; k < d - 2; k++) match = match && y.shape[k] == x.shape[k];
    if (!match)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out shape %s must be self's leading dims then H + top + bottom, W + left + right "
                        "(self %s, padding [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "])",
                        opc_shape_str(&y, b1, sizeof b1), opc_shape_str(&x, b2, sizeof b2),
                        pad[0], pad[1], pad[2], pad[3]);

    /* 5. empty tensors */
    pad_state st = {.left = pad[0], .right = pad[1], .top = pad[2], .bottom = pad[3]};
    if (has_zero_dim(&x) || has_zero_dim(&y)) {
        rc = empty_rule(api, &x);
        if (rc) return rc;
        st.empty = 1;
    }
    aclsim_tensor_desc descs[2] = {x, y};
    return opc_finish_phase1(api, FWD_OP, &st, sizeof st, 0, descs, 2, 1, fwd_kernel, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnReplicationPad2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *padding,
                                                             aclTensor *out, uint64_t *workspaceSize,
                                                             aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = fwd_prepare(self, padding, out, workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnReplicationPad2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(FWD_OP, workspace, workspaceSize, executor, stream);
}

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

static int bwd_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const pad_state *st = state;
    if (st->empty) return 0;
    const aclsim_tensor_desc *grad = &t[0], *gin = &t[2];
    unsigned char *src = opc_map_tensor(l, grad);
    unsigned char *dst = src ? opc_map_tensor(l, gin) : NULL;
    if (dst == NULL) return 1;
    const int64_t d = gin->ndim;
    const int64_t N = d == 4 ? gin->shape[0] : 1, C = gin->shape[d - 3];
    const int64_t H = gin->shape[d - 2], W = gin->shape[d - 1];
    const int64_t Hout = grad->shape[d - 2], Wout = grad->shape[d - 1];
    const int32_t dt = gin->dtype;
    const size_t isz = aclsim_dtype_size(dt);
    const int single = dt != ACL_DOUBLE && dt != ACL_COMPLEX128;
    int64_t *rlo = NULL, *rhi = NULL, *clo = NULL, *chi = NULL;
    int fail = read_ranges(H, st->top, Hout, &rlo, &rhi) || read_ranges(W, st->left, Wout, &clo, &chi);
    if (fail) {
        opc_fail(1, l->op_name, "out of host memory");
    } else {
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        acc_t sum = {0.0, 0.0};
                        for (int64_t j = clo[w]; j <= chi[w]; j++) {
                            acc_t col = {0.0, 0.0}; /* rows first ... */
                            for (int64_t i = rlo[h]; i <= rhi[h]; i++)
                                add(&col, load(elem(src, grad, isz, n, c, i, j), dt), single);
                            add(&sum, col, single); /* ... then columns */
                        }
                        store(elem(dst, gin, isz, n, c, h, w), dt, sum);
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

static aclnnStatus bwd_prepare(const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding,
                               aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = BWD_API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. null pointers (in the op_api's order), then live handles */
    if (self == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "self is NULL");
    if (gradOutput == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "gradOutput is NULL");
    if (gradInput == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "gradInput is NULL");
    if (padding == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "padding is NULL");
    aclsim_tensor_desc g, x, y;
    const int64_t *pad;
    uint64_t npad;
    int rc = opc_get_tensor(api, "gradOutput", gradOutput, &g);
    if (!rc) rc = opc_get_tensor(api, "self", self, &x);
    if (!rc) rc = opc_get_int_array(api, "padding", padding, &pad, &npad);
    if (!rc) rc = opc_get_tensor(api, "gradInput", gradInput, &y);
    if (rc) return rc;

    /* 2. dtypes: each listed (gradInput, gradOutput, self), then both equal self's */
    const aclsim_tensor_desc *listed[3] = {&y, &g, &x};
    for (int k = 0; k < 3; k++)
        if (!bwd_dtype_ok(listed[k]->dtype))
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                            "%s dtype must be ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64 or "
                            "ACL_COMPLEX128, got %s (%d)", listed[k]->name, aclsim_dtype_name(listed[k]->dtype),
                            (int)listed[k]->dtype);
    if (y.dtype != x.dtype || g.dtype != x.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s (%d) must equal self dtype %s (%d)",
                        y.dtype != x.dtype ? "gradInput" : "gradOutput",
                        aclsim_dtype_name(y.dtype != x.dtype ? y.dtype : g.dtype),
                        (int)(y.dtype != x.dtype ? y.dtype : g.dtype), aclsim_dtype_name(x.dtype), (int)x.dtype);

    /* 3. formats: no private layout, all equal */
    if (private_format(g.format) || private_format(x.format) || private_format(y.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "format only supports ND (got gradOutput %d, self %d, "
                        "gradInput %d)", (int)g.format, (int)x.format, (int)y.format);
    if (g.format != x.format || y.format != x.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "formats of gradOutput %d, self %d and gradInput %d "
                        "must be equal", (int)g.format, (int)x.format, (int)y.format);

    /* 4. shapes */
    if (!same_shape(&x, &y))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradInput shape %s must equal self shape %s",
                        opc_shape_str(&y, b1, sizeof b1), opc_shape_str(&x, b2, sizeof b2));
    if (x.ndim != 3 && x.ndim != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D or 4-D, got %" PRId64 "-D %s",
                        x.ndim, opc_shape_str(&x, b1, sizeof b1));
    if (g.ndim != x.ndim)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must have self's rank %" PRId64
                        ", got %" PRId64 "-D %s", x.ndim, g.ndim, opc_shape_str(&g, b1, sizeof b1));
    if (npad != 4)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding length should be 4, got %" PRIu64, npad);
    if (x.dtype == ACL_BF16 && !bf16_padding_ok(pad))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "bf16 needs padding >= 0 and either top = bottom = 0 or every pad <= %d, got "
                        "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", BF16_MAX_PAD,
                        pad[0], pad[1], pad[2], pad[3]);
    const int64_t d = x.ndim;
    int64_t Hout, Wout;
    if (!padded(x.shape[d - 2], pad[2], pad[3], &Hout) || !padded(x.shape[d - 1], pad[0], pad[1], &Wout) ||
        g.shape[d - 2] != Hout || g.shape[d - 1] != Wout)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "gradOutput shape %s must end with H + top + bottom, W + left + right (self %s, "
                        "padding [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "])",
                        opc_shape_str(&g, b1, sizeof b1), opc_shape_str(&x, b2, sizeof b2),
                        pad[0], pad[1], pad[2], pad[3]);

    /* 5. empty tensors */
    pad_state st = {.left = pad[0], .right = pad[1], .top = pad[2], .bottom = pad[3]};
    if (has_zero_dim(&g) || has_zero_dim(&x) || has_zero_dim(&y)) {
        rc = empty_rule(api, &x);
        if (rc) return rc;
        st.empty = 1; /* gradInput is left as it is */
    }

    /* Simulator strictness (the real op_api compares only H and W, and its final copy
     * into gradInput then gets mismatched shapes): the leading dims must agree. */
    for (int64_t k = 0; k < d - 2; k++)
        if (g.shape[k] != x.shape[k])
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput %s and self %s must have the same "
                            "leading dims", opc_shape_str(&g, b1, sizeof b1), opc_shape_str(&x, b2, sizeof b2));

    aclsim_tensor_desc descs[3] = {g, x, y}; /* every tensor, so the addr setters can index self */
    return opc_finish_phase1(api, BWD_OP, &st, sizeof st, 0, descs, 3, 1, bwd_kernel, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                     const aclTensor *self,
                                                                     const aclIntArray *padding,
                                                                     aclTensor *gradInput,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = bwd_prepare(gradOutput, self, padding, gradInput, workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnReplicationPad2dBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, const aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(BWD_OP, workspace, workspaceSize, executor, stream);
}
