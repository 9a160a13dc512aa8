/*
 * upsample_nearest_exact1d.c - aclnnUpsampleNearestExact1d and
 * aclnnUpsampleNearestExact1dBackward for the CPU simulator.
 *
 * Parameter checks follow the order of the real op_api (see
 * the ops-cv sources); the kernels reproduce the A2/A3 index arithmetic
 * in fp32 (§1.2). Build with -ffp-contract=off: the products below must
 * round before the following add/sub, as the device does them as separate
 * vector instructions.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FWD_OP "aclnnUpsampleNearestExact1d"
#define FWD_API FWD_OP "GetWorkspaceSize"
#define BWD_OP "aclnnUpsampleNearestExact1dBackward"
#define BWD_API BWD_OP "GetWorkspaceSize"

typedef struct {
    double scales;
    /* workspace layout (bytes): [acc_offset, +acc_bytes) fp32 accumulators,
     * [copy_offset, +copy_bytes) contiguous copy of the non-contiguous input */
    uint64_t acc_offset, acc_bytes;
    uint64_t copy_offset, copy_bytes;
} ux_state;

static int format_ok(int32_t f) { return f == ACL_FORMAT_NCL || f == ACL_FORMAT_ND; }

static int mul3(int64_t a, int64_t b, int64_t c, uint64_t d, uint64_t *out)
{
    uint64_t r;
    return __builtin_mul_overflow((uint64_t)a, (uint64_t)b, &r) ||
           __builtin_mul_overflow(r, (uint64_t)c, &r) || __builtin_mul_overflow(r, d, out);
}

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

/* out[n, c, d] = self[n, c, src(d)]: a gather, exact for every dtype. */
static int fwd_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const ux_state *st = state;
    const aclsim_tensor_desc *self = &t[0], *out = &t[1];
    unsigned char *src = opc_map_tensor(l, self);
    unsigned char *dst = src ? opc_map_tensor(l, out) : NULL;
    if (dst == NULL) return 1;
    aclsim_tensor_desc in = *self;
    if (st->copy_bytes) { /* make the input contiguous first, as the op_api does */
        unsigned char *ws = opc_map_workspace(l, st->copy_offset, st->copy_bytes, "contiguous copy of self");
        if (ws == NULL) return 1;
        opc_gather(self, src, ws);
        in = opc_contiguous_like(self);
        src = ws;
    }
    const int64_t N = self->shape[0], C = self->shape[1], Lin = self->shape[2], Lout = out->shape[2];
    const size_t isz = aclsim_dtype_size(self->dtype);
    const float s = st->scales > 0 ? (float)(1.0 / st->scales) : (float)Lin / (float)Lout;
    for (int64_t d = 0; d < Lout; d++) {
        float centre = (float)d + 0.5f;
        float pos = centre * s; /* rounded to fp32 before the floor */
        float fl = floorf(pos);
        int64_t i = fl >= (float)(Lin - 1) ? Lin - 1 : (fl < 0.0f ? 0 : (int64_t)fl);
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                memcpy(opc_elem3(dst, out, isz, n, c, d), opc_elem3(src, &in, isz, n, c, i), isz);
    }
    return 0;
}

static aclnnStatus fwd_prepare(const aclTensor *self, const aclIntArray *outputSize, double scales,
                               aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = FWD_API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. null pointers, then live handles */
    if (self == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "self is NULL");
    if (outputSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "outputSize is NULL");
    if (out == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "out is NULL");
    aclsim_tensor_desc x, y;
    const int64_t *osz;
    uint64_t nosz;
    int rc = opc_get_tensor(api, "self", self, &x);
    if (!rc) rc = opc_get_int_array(api, "outputSize", outputSize, &osz, &nosz);
    if (!rc) rc = opc_get_tensor(api, "out", out, &y);
    if (rc) return rc;

    /* 2. dtypes */
    if (x.dtype != ACL_FLOAT && x.dtype != ACL_FLOAT16 && x.dtype != ACL_BF16 && x.dtype != ACL_UINT8)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "self dtype must be ACL_FLOAT, ACL_FLOAT16, ACL_BF16 or ACL_UINT8, got %s (%d)",
                        aclsim_dtype_name(x.dtype), (int)x.dtype);
    if (y.dtype != x.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s (%d) must equal self dtype %s (%d)",
                        aclsim_dtype_name(y.dtype), (int)y.dtype, aclsim_dtype_name(x.dtype), (int)x.dtype);

    /* 3. formats, ranks, outputSize length */
    if (!format_ok(x.format) || !format_ok(y.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "%s format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2), got %d",
                        format_ok(x.format) ? "out" : "self", (int)(format_ok(x.format) ? y.format : x.format));
    if (x.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (N, C, L), got %" PRId64 "-D %s",
                        x.ndim, opc_shape_str(&x, b1, sizeof b1));
    if (nosz != 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize must have exactly 1 element, got %" PRIu64, nosz);

    /* 4. sizes */
    if (x.shape[0] <= 0 || x.shape[1] <= 0 || x.shape[2] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dims N, C, L must all be > 0, got %s",
                        opc_shape_str(&x, b1, sizeof b1));
    if (osz[0] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize[0] must be > 0, got %" PRId64, osz[0]);

    /* Simulator strictness (the real op_api leaves this to its final
     * ViewCopy): out must be (N, C, outputSize[0]). */
    if (y.ndim != 3 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] || y.shape[2] != osz[0])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out must have shape [%" PRId64 ", %" PRId64 ", %" PRId64 "] (N, C, outputSize[0]), got %s",
                        x.shape[0], x.shape[1], osz[0], opc_shape_str(&y, b2, sizeof b2));

    ux_state st = {.scales = scales};
    if (!opc_is_contiguous(&x) &&
        mul3(x.shape[0], x.shape[1], x.shape[2], aclsim_dtype_size(x.dtype), &st.copy_bytes))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self is too large");
    aclsim_tensor_desc descs[2] = {x, y};
    return opc_finish_phase1(api, FWD_OP, &st, sizeof st, st.copy_bytes, descs, 2, 1, fwd_kernel, workspaceSize,
                             executor);
}

ACLSIM_API aclnnStatus aclnnUpsampleNearestExact1dGetWorkspaceSize(const aclTensor *self,
                                                                   const aclIntArray *outputSize,
                                                                   double scales, aclTensor *out,
                                                                   uint64_t *workspaceSize,
                                                                   aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = fwd_prepare(self, outputSize, scales, out, workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnUpsampleNearestExact1d(void *workspace, uint64_t workspaceSize,
                                                   aclOpExecutor *executor, aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(FWD_OP, workspace, workspaceSize, executor, stream);
}

/* ========================================================================== */
/* backward                                                                   */
/* ========================================================================== */

/* First grad-output position that maps to grad-input position i, computed
 * as the A2/A3 kernel does: Muls, Adds(-0.5), Ceil, Mins, all in fp32. */
static int64_t bwd_bound(int64_t i, float s, int identity, int64_t Lout)
{
    if (identity) return i < Lout ? i : Lout;
    float fi = (float)i;
    float scaled = fi * s;
    float shifted = scaled - 0.5f;
    float up = ceilf(shifted);
    if (!(up < (float)Lout)) return Lout;
    return up <= 0.0f ? 0 : (int64_t)up;
}

/* gradInput[n, c, i] = sum of gradOutput[n, c, lo(i) .. hi(i)-1], in fp32,
 * ascending l, rounded once to the output dtype. */
static int bwd_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const ux_state *st = state;
    const aclsim_tensor_desc *grad = &t[0], *out = &t[1];
    unsigned char *src = opc_map_tensor(l, grad);
    unsigned char *dst = src ? opc_map_tensor(l, out) : NULL;
    if (dst == NULL) return 1;
    aclsim_tensor_desc g = *grad;
    if (st->copy_bytes) {
        unsigned char *ws = opc_map_workspace(l, st->copy_offset, st->copy_bytes,
                                              "contiguous copy of gradOutput");
        if (ws == NULL) return 1;
        opc_gather(grad, src, ws);
        g = opc_contiguous_like(grad);
        src = ws;
    }
    unsigned char *acc = NULL; /* fp32 accumulators for fp16/bf16 */
    if (st->acc_bytes) {
        acc = opc_map_workspace(l, st->acc_offset, st->acc_bytes, "fp32 accumulators");
        if (acc == NULL) return 1;
    }
    const int64_t N = grad->shape[0], C = grad->shape[1], Lout = grad->shape[2], Lin = out->shape[2];
    const int32_t dt = grad->dtype;
    const size_t isz = aclsim_dtype_size(dt);
    const float s = st->scales > 0 ? (float)st->scales : (float)Lout / (float)Lin;
    const int identity = fabsf(s - 1.0f) < 1e-6f;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t i = 0; i < Lin; i++) {
                int64_t lo = bwd_bound(i, s, identity, Lout), hi = bwd_bound(i + 1, s, identity, Lout);
                float sum = 0.0f;
                for (int64_t k = lo; k < hi; k++) sum += opc_load_float(opc_elem3(src, &g, isz, n, c, k), dt);
                if (acc) memcpy(acc + (uint64_t)((n * C + c) * Lin + i) * 4u, &sum, 4);
                else opc_store_float(opc_elem3(dst, out, isz, n, c, i), dt, sum);
            }
        }
    }
    if (acc) { /* cast pass: fp32 accumulators -> output dtype */
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t i = 0; i < Lin; i++) {
                    float v;
                    memcpy(&v, acc + (uint64_t)((n * C + c) * Lin + i) * 4u, 4);
                    opc_store_float(opc_elem3(dst, out, isz, n, c, i), dt, v);
                }
    }
    return 0;
}

static aclnnStatus bwd_prepare(const aclTensor *gradOutput, const aclIntArray *outputSize,
                               const aclIntArray *inputSize, double scales, aclTensor *out,
                               uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = BWD_API;
    char b1[160], b2[160];
    if (workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
    if (executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");

    /* 1. null pointers (outputSize after the three the real op checks), then live handles */
    if (gradOutput == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "gradOutput is NULL");
    if (inputSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "inputSize is NULL");
    if (out == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "out is NULL");
    if (outputSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "outputSize is NULL");
    aclsim_tensor_desc g, y;
    const int64_t *osz, *isz;
    uint64_t nosz, nisz;
    int rc = opc_get_tensor(api, "gradOutput", gradOutput, &g);
    if (!rc) rc = opc_get_int_array(api, "outputSize", outputSize, &osz, &nosz);
    if (!rc) rc = opc_get_int_array(api, "inputSize", inputSize, &isz, &nisz);
    if (!rc) rc = opc_get_tensor(api, "out", out, &y);
    if (rc) return rc;

    /* 2. dtypes */
    if (g.dtype != ACL_FLOAT && g.dtype != ACL_FLOAT16 && g.dtype != ACL_BF16)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "gradOutput dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16, got %s (%d)",
                        aclsim_dtype_name(g.dtype), (int)g.dtype);
    if (y.dtype != g.dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s (%d) must equal gradOutput dtype %s (%d)",
                        aclsim_dtype_name(y.dtype), (int)y.dtype, aclsim_dtype_name(g.dtype), (int)g.dtype);

    /* 3. formats, ranks, array lengths */
    if (g.format != y.format)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput format %d and out format %d must be equal",
                        (int)g.format, (int)y.format);
    if (!format_ok(g.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2), got %d", (int)g.format);
    if (g.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must be 3-D (N, C, L), got %" PRId64 "-D %s",
                        g.ndim, opc_shape_str(&g, b1, sizeof b1));
    if (y.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be 3-D (N, C, L), got %" PRId64 "-D %s",
                        y.ndim, opc_shape_str(&y, b1, sizeof b1));
    if (nisz != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize must have 3 elements (N, C, L), got %" PRIu64, nisz);
    if (nosz != 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize must have exactly 1 element, got %" PRIu64, nosz);

    /* 4. batch and channel agree */
    if (g.shape[0] != y.shape[0] || g.shape[1] != y.shape[1])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput %s and out %s must have the same N and C",
                        opc_shape_str(&g, b1, sizeof b1), opc_shape_str(&y, b2, sizeof b2));

    /* 5, 6. scales */
    if (scales < 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scales must be >= 0 (0 = derive from sizes), got %g", scales);
    const int64_t Lout = g.shape[2];
    double real_scale = scales > 0 ? 1.0 / scales : (Lout != 0 ? (double)isz[2] / (double)Lout : 0.0);
    if (real_scale < 0.02)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "scales is too large: the input/output length ratio %g is below 0.02 (more than "
                        "50x magnification; scales=%g, inputSize[2]=%" PRId64 ", gradOutput L=%" PRId64 ")",
                        real_scale, scales, isz[2], Lout);

    /* 7. sizes */
    if (g.shape[0] <= 0 || g.shape[1] <= 0 || g.shape[2] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput dims N, C, L must all be > 0, got %s",
                        opc_shape_str(&g, b1, sizeof b1));
    if (isz[2] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize[2] must be > 0, got %" PRId64, isz[2]);

    /* Simulator strictness (the real op_api leaves this to its final
     * ViewCopy): out must have the shape inputSize describes. */
    if (y.shape[2] != isz[2] || isz[0] != y.shape[0] || isz[1] != y.shape[1])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out shape %s must equal inputSize [%" PRId64 ", %" PRId64 ", %" PRId64 "]",
                        opc_shape_str(&y, b1, sizeof b1), isz[0], isz[1], isz[2]);

    ux_state st = {.scales = scales};
    if (g.dtype != ACL_FLOAT && mul3(y.shape[0], y.shape[1], y.shape[2], 4, &st.acc_bytes))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out is too large");
    st.copy_offset = st.acc_bytes; /* reported size is exactly accumulators + copy */
    if (!opc_is_contiguous(&g) &&
        mul3(g.shape[0], g.shape[1], g.shape[2], aclsim_dtype_size(g.dtype), &st.copy_bytes))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput is too large");
    uint64_t ws = st.acc_bytes + st.copy_bytes;
    aclsim_tensor_desc descs[2] = {g, y};
    return opc_finish_phase1(api, BWD_OP, &st, sizeof st, ws, descs, 2, 1, bwd_kernel, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclIntArray *outputSize, const aclIntArray *inputSize,
    double scales, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = bwd_prepare(gradOutput, outputSize, inputSize, scales, out, workspaceSize, executor);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclnnUpsampleNearestExact1dBackward(void *workspace, uint64_t workspaceSize,
                                                           aclOpExecutor *executor, aclrtStream stream)
{
    ACLSIM_FAULT_POINT_PHASE2(executor);
    return aclsim_executor_launch(BWD_OP, workspace, workspaceSize, executor, stream);
}
