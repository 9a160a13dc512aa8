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
#include <string.h>

typedef struct {
    double scales;
    /* workspace layout (bytes): [acc_offset, +acc_bytes) fp32 accumulators,
     * [copy_offset, +copy_bytes) contiguous copy of the non-contiguous input */
    uint64_t acc_offset, acc_bytes;
    uint64_t copy_offset, copy_bytes;
} ux_state;

static const opc_dtypes FWD_DTYPES = {4, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_UINT8}, NULL};

static int format_ok(int32_t f) { return f == ACL_FORMAT_NCL || f == ACL_FORMAT_ND; }

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

/* out[n, c, d] = self[n, c, src(d)]: a gather, exact for every dtype. */
OPC_KERNEL(fwd_kernel, ux_state)
{
    const aclsim_tensor_desc *self = &t[0], *out = &t[1];
    unsigned char *src, *dst;
    aclsim_tensor_desc in;
    if (opc_map_tensors(l, &src, self, &dst, out, NULL)) return 1;
    /* make the input contiguous first, as the op_api does */
    src = opc_contiguous(l, self, src, st->copy_offset, st->copy_bytes, "contiguous copy of self", &in);
    if (src == NULL) return 1;
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

static aclnnStatus fwd_prepare(const opc_call *c, const aclTensor *self, const aclIntArray *outputSize,
                               double scales, aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y;
    opc_ints osz;
    /* 1. null pointers, then live handles; 2. dtypes */
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_INTS(outputSize, &osz), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 3, NULL);
    if (!rc) rc = opc_check_dtype(api, &x, &FWD_DTYPES);
    if (!rc) rc = opc_check_same_dtype(api, &y, &x);
    if (rc) return rc;

    /* 3. formats, ranks, outputSize length */
    if (!format_ok(x.format) || !format_ok(y.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "%s format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2), got %d",
                        format_ok(x.format) ? "out" : "self", (int)(format_ok(x.format) ? y.format : x.format));
    if (x.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 3-D (N, C, L), got %" PRId64 "-D %s",
                        x.ndim, opc_shape(&x));
    if (osz.n != 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize must have exactly 1 element, got %" PRIu64, osz.n);

    /* 4. sizes */
    if (x.shape[0] <= 0 || x.shape[1] <= 0 || x.shape[2] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dims N, C, L must all be > 0, got %s", opc_shape(&x));
    if (osz.v[0] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize[0] must be > 0, got %" PRId64, osz.v[0]);

    /* Simulator strictness (the real op_api leaves this to its final
     * ViewCopy): out must be (N, C, outputSize[0]). */
    if (y.ndim != 3 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] || y.shape[2] != osz.v[0])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out must have shape [%" PRId64 ", %" PRId64 ", %" PRId64 "] (N, C, outputSize[0]), got %s",
                        x.shape[0], x.shape[1], osz.v[0], opc_shape(&y));

    ux_state st = {.scales = scales};
    uint64_t ws = 0;
    if ((rc = opc_plan_copy(api, &x, &ws, &st.copy_offset, &st.copy_bytes))) return rc;
    aclsim_tensor_desc descs[2] = {x, y};
    return opc_finish(c, &st, sizeof st, ws, descs, 2, 1, fwd_kernel);
}

OPC_ENTRY_POINTS(aclnnUpsampleNearestExact1d, fwd_prepare,
                 (const aclTensor *self, const aclIntArray *outputSize, double scales, aclTensor *out),
                 (self, outputSize, scales, out))

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
OPC_KERNEL(bwd_kernel, ux_state)
{
    const aclsim_tensor_desc *grad = &t[0], *out = &t[1];
    unsigned char *src, *dst, *acc = NULL; /* fp32 accumulators for fp16/bf16 */
    aclsim_tensor_desc g;
    if (opc_map_tensors(l, &src, grad, &dst, out, NULL)) return 1;
    src = opc_contiguous(l, grad, src, st->copy_offset, st->copy_bytes, "contiguous copy of gradOutput", &g);
    if (src == NULL) return 1;
    if (st->acc_bytes && (acc = opc_map_workspace(l, st->acc_offset, st->acc_bytes, "fp32 accumulators")) == NULL)
        return 1;
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

static aclnnStatus bwd_prepare(const opc_call *c, const aclTensor *gradOutput, const aclIntArray *outputSize,
                               const aclIntArray *inputSize, double scales, aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc g, y;
    opc_ints osz, isz;
    /* 1. null pointers (outputSize after the three the real op checks), then live handles; 2. dtypes */
    const opc_arg args[] = {OPC_TENSOR(gradOutput, &g), OPC_INTS(outputSize, &osz), OPC_INTS(inputSize, &isz),
                            OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 4, OPC_ORDER("gradOutput", "inputSize", "out", "outputSize"));
    if (!rc) rc = opc_check_dtype(api, &g, &OPC_FLOATS);
    if (!rc) rc = opc_check_same_dtype(api, &y, &g);
    /* 3. formats, ranks, array lengths */
    if (!rc) rc = opc_check_same_format(api, &g, &y);
    if (rc) return rc;
    if (!format_ok(g.format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2), got %d", (int)g.format);
    if (g.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput must be 3-D (N, C, L), got %" PRId64 "-D %s",
                        g.ndim, opc_shape(&g));
    if (y.ndim != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be 3-D (N, C, L), got %" PRId64 "-D %s",
                        y.ndim, opc_shape(&y));
    if (isz.n != 3)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize must have 3 elements (N, C, L), got %" PRIu64, isz.n);
    if (osz.n != 1)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "outputSize must have exactly 1 element, got %" PRIu64, osz.n);

    /* 4. batch and channel agree */
    if (g.shape[0] != y.shape[0] || g.shape[1] != y.shape[1])
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput %s and out %s must have the same N and C",
                        opc_shape(&g), opc_shape(&y));

    /* 5, 6. scales */
    if (scales < 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scales must be >= 0 (0 = derive from sizes), got %g", scales);
    const int64_t Lout = g.shape[2];
    double real_scale = scales > 0 ? 1.0 / scales : (Lout != 0 ? (double)isz.v[2] / (double)Lout : 0.0);
    if (real_scale < 0.02)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "scales is too large: the input/output length ratio %g is below 0.02 (more than "
                        "50x magnification; scales=%g, inputSize[2]=%" PRId64 ", gradOutput L=%" PRId64 ")",
                        real_scale, scales, isz.v[2], Lout);

    /* 7. sizes */
    if (g.shape[0] <= 0 || g.shape[1] <= 0 || g.shape[2] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gradOutput dims N, C, L must all be > 0, got %s",
                        opc_shape(&g));
    if (isz.v[2] <= 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "inputSize[2] must be > 0, got %" PRId64, isz.v[2]);

    /* Simulator strictness (the real op_api leaves this to its final
     * ViewCopy): out must have the shape inputSize describes. */
    if (!opc_shape_is(&y, 3, isz.v))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api,
                        "out shape %s must equal inputSize [%" PRId64 ", %" PRId64 ", %" PRId64 "]",
                        opc_shape(&y), isz.v[0], isz.v[1], isz.v[2]);

    ux_state st = {.scales = scales};
    if (g.dtype != ACL_FLOAT && opc_packed_bytes(&y, 4, &st.acc_bytes))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out is too large");
    uint64_t ws = st.acc_bytes; /* reported size is exactly accumulators + copy */
    if ((rc = opc_plan_copy(api, &g, &ws, &st.copy_offset, &st.copy_bytes))) return rc;
    aclsim_tensor_desc descs[2] = {g, y};
    return opc_finish(c, &st, sizeof st, ws, descs, 2, 1, bwd_kernel);
}

OPC_ENTRY_POINTS(aclnnUpsampleNearestExact1dBackward, bwd_prepare,
                 (const aclTensor *gradOutput, const aclIntArray *outputSize, const aclIntArray *inputSize,
                  double scales, aclTensor *out),
                 (gradOutput, outputSize, inputSize, scales, out))
