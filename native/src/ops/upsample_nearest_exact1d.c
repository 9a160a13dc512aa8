/*
 * upsample_nearest_exact1d.c - aclnnUpsampleNearestExact1d and
 * aclnnUpsampleNearestExact1dBackward for the CPU simulator.
 *
 * Phase-1 checks are generated from the descriptions (ascend_aclnn/ops/upsample.py,
 * in the order of the ops-cv op_api sources); the kernels reproduce the A2/A3 index arithmetic
 * in fp32 (§1.2). Build with -ffp-contract=off: the products below must
 * round before the following add/sub, as the device does them as separate
 * vector instructions.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"
#include "generated/upsample_nearest_exact1d_checks.h"

#include <math.h>
#include <string.h>

typedef struct {
    double scales;
    /* workspace layout (bytes): [acc_offset, +acc_bytes) fp32 accumulators,
     * [copy_offset, +copy_bytes) contiguous copy of the non-contiguous input */
    uint64_t acc_offset, acc_bytes;
    uint64_t copy_offset, copy_bytes;
} ux_state;


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
    aclnnUpsampleNearestExact1d_args a;
    int rc = aclnnUpsampleNearestExact1d_checks(c->api, self, outputSize, scales, out, &a);
    if (rc) return rc;
    ux_state st = {.scales = scales};
    uint64_t ws = 0;
    if ((rc = opc_plan_copy(c->api, &a.self, &ws, &st.copy_offset, &st.copy_bytes))) return rc;
    aclsim_tensor_desc descs[2] = {a.self, a.out};
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
    aclnnUpsampleNearestExact1dBackward_args a;
    int rc = aclnnUpsampleNearestExact1dBackward_checks(c->api, gradOutput, outputSize, inputSize, scales, out, &a);
    if (rc) return rc;
    ux_state st = {.scales = scales};
    if (a.gradOutput.dtype != ACL_FLOAT && opc_packed_bytes(&a.out, 4, &st.acc_bytes))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, c->api, "out is too large");
    uint64_t ws = st.acc_bytes; /* reported size is exactly accumulators + copy */
    if ((rc = opc_plan_copy(c->api, &a.gradOutput, &ws, &st.copy_offset, &st.copy_bytes))) return rc;
    aclsim_tensor_desc descs[2] = {a.gradOutput, a.out};
    return opc_finish(c, &st, sizeof st, ws, descs, 2, 1, bwd_kernel);
}

OPC_ENTRY_POINTS(aclnnUpsampleNearestExact1dBackward, bwd_prepare,
                 (const aclTensor *gradOutput, const aclIntArray *outputSize, const aclIntArray *inputSize,
                  double scales, aclTensor *out),
                 (gradOutput, outputSize, inputSize, scales, out))
