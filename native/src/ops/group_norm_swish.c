/*
 * group_norm_swish.c - aclnnGroupNormSwish and aclnnGroupNormSwishGrad for the
 * CPU simulator.
 *
 * Phase-1 checks are generated from the descriptions (ascend_aclnn/ops/group_norm.py):
 * nulls (161001), the definitions' dtypes (161002), the tilings' shape rules
 * (ACLNN_ERR_INNER_TILING_ERROR, 561002, which nnopbase runs inside
 * GetWorkspaceSize) in hicann/ops-nn's order, the binding's own refusals, then
 * the simulator's output checks.
 *
 * The forward computes in fp32 with Kahan-compensated sums and rounds once, to
 * nearest even. The grad computes in fp64, in the binding's reference's order
 * (its sums in order where NumPy's are pairwise), and rounds once: to fp32,
 * then a 16-bit output half away from zero (the NPU's final cast). Non-contiguous
 * inputs are gathered into the workspace first.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_group_norm_swish.h"
#include "aclnnop/aclnn_group_norm_swish_grad.h"
#include "generated/group_norm_swish_checks.h"

#include <math.h>
#include <string.h>

#define MAX_INPUTS 6

typedef struct {
    int64_t groups;
    float eps, scale;
    int activate;                /* forward: apply the swish */
    int dgamma_req, dbeta_req;   /* grad: write dgamma / dbeta */
    /* workspace (bytes): a contiguous copy of each non-contiguous input,
     * then (grad) fp32 per-(n, c) sums */
    uint64_t copy_offset[MAX_INPUTS], copy_bytes[MAX_INPUTS];
    uint64_t sums_offset, sums_bytes;
} gn_state;

/* fp32 -> dtype, ties away from zero (the grad kernel's final cast). */
static void store_round_away(unsigned char *p, int32_t dt, float v)
{
    if (dt == ACL_FLOAT) {
        memcpy(p, &v, sizeof v);
        return;
    }
    uint16_t h;
    if (dt == ACL_BF16) {
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) h = (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
        else h = (uint16_t)((u + 0x8000u) >> 16); /* half a unit onto the magnitude, truncate */
    } else {
        h = opc_float_to_half(v); /* nearest even, then move a tie that went towards zero */
        float lo = opc_half_to_float(h);
        if (isfinite(lo) && fabsf(lo) < fabsf(v)) {
            uint16_t next = (uint16_t)(h + 1u); /* one step further from zero */
            float hi = opc_half_to_float(next);
            if (fabsf(v) - fabsf(lo) == fabsf(hi) - fabsf(v)) h = next;
        }
    }
    memcpy(p, &h, sizeof h);
}

/* A statistic that is not finite becomes NaN: the kernel's Kahan sums turn an
 * inf into NaN (inf - inf) wherever it is not the last term, and both backends
 * follow one rule for inputs the NPU does not support. */
static float finite_or_nan(float v) { return isfinite(v) ? v : NAN; }
static double finite_or_nan64(double v) { return isfinite(v) ? v : NAN; }

/* Kahan-compensated running sum. */
typedef struct { float sum, carry; } ksum;
static void kadd(ksum *k, float v)
{
    float y = v - k->carry;
    float t = k->sum + y;
    k->carry = (t - k->sum) - y;
    k->sum = t;
}

/* Workspace for contiguous copies of the non-contiguous inputs. */
static int plan_copies(const char *api, gn_state *st, const aclsim_tensor_desc *in, int n, uint64_t *ws)
{
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) rc = opc_plan_copy(api, &in[i], ws, &st->copy_offset[i], &st->copy_bytes[i]);
    return rc;
}

/* Host address of input i's first element, contiguous (gathered if needed). */
static const unsigned char *map_input(const gn_state *st, int i, const aclsim_tensor_desc *t,
                                      const aclsim_launch *l)
{
    aclsim_tensor_desc v;
    unsigned char *src = opc_map_tensor(l, t);
    if (src) src = opc_contiguous(l, t, src, st->copy_offset[i], st->copy_bytes[i], t->name, &v);
    return src ? src + (uint64_t)v.offset * aclsim_dtype_size(t->dtype) : NULL;
}

static unsigned char *map_output(const aclsim_tensor_desc *t, const aclsim_launch *l)
{
    unsigned char *dst = opc_map_tensor(l, t);
    return dst ? dst + (uint64_t)t->offset * aclsim_dtype_size(t->dtype) : NULL;
}

static float ld(const unsigned char *base, int32_t dt, int64_t i)
{
    return opc_load_float(base + (uint64_t)i * aclsim_dtype_size(dt), dt);
}

/* ========================================================================== */
/* forward                                                                    */
/* ========================================================================== */

/* t: x, gamma, beta, yOut, meanOut, rstdOut */
OPC_KERNEL(fwd_kernel, gn_state)
{
    const unsigned char *x = map_input(st, 0, &t[0], l);
    const unsigned char *gamma = x ? map_input(st, 1, &t[1], l) : NULL;
    const unsigned char *beta = gamma ? map_input(st, 2, &t[2], l) : NULL;
    unsigned char *y = beta ? map_output(&t[3], l) : NULL;
    unsigned char *mean_out = y ? map_output(&t[4], l) : NULL;
    unsigned char *rstd_out = mean_out ? map_output(&t[5], l) : NULL;
    if (rstd_out == NULL) return 1;
    const int32_t xt = t[0].dtype, gt = t[1].dtype;
    const size_t xsz = aclsim_dtype_size(xt), gsz = aclsim_dtype_size(gt);
    const int64_t N = t[0].shape[0], C = t[0].shape[1], HW = opc_numel(&t[0]) / (N * C);
    const int64_t G = st->groups, Cg = C / G, M = Cg * HW;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t g = 0; g < G; g++) {
            const int64_t first = (n * C + g * Cg) * HW; /* the group's elements are contiguous */
            ksum k = {0.0f, 0.0f};
            for (int64_t i = 0; i < M; i++) kadd(&k, ld(x, xt, first + i));
            const float mean = finite_or_nan(k.sum / (float)M);
            k = (ksum){0.0f, 0.0f};
            for (int64_t i = 0; i < M; i++) {
                float d = ld(x, xt, first + i) - mean;
                kadd(&k, d * d);
            }
            const float var = finite_or_nan(k.sum / (float)M);
            const float rstd = 1.0f / sqrtf(var + st->eps);
            opc_store_float(mean_out + (uint64_t)(n * G + g) * gsz, gt, mean);
            opc_store_float(rstd_out + (uint64_t)(n * G + g) * gsz, gt, rstd);
            for (int64_t c = g * Cg; c < (g + 1) * Cg; c++) {
                const float gm = ld(gamma, gt, c), bt = ld(beta, gt, c);
                const int bad = !isfinite(gm) || !isfinite(bt); /* the channel is NaN */
                for (int64_t i = 0; i < HW; i++) {
                    const int64_t e = (n * C + c) * HW + i;
                    float z = (ld(x, xt, e) - mean) * rstd * gm + bt;
                    if (st->activate) z = z / (1.0f + expf(-st->scale * z));
                    opc_store_float(y + (uint64_t)e * xsz, xt, bad ? NAN : z);
                }
            }
        }
    }
    return 0;
}

static aclnnStatus fwd_prepare(const opc_call *c, const aclTensor *x, const aclTensor *gamma, const aclTensor *beta,
                               int64_t numGroups, char *dataFormatOptional, double eps, bool activateSwish,
                               double swishScale, const aclTensor *yOut, const aclTensor *meanOut,
                               const aclTensor *rstdOut)
{
    /* dataFormatOptional is read by neither tiling nor kernel: the layout is always (N, C, *) */
    aclnnGroupNormSwish_args a;
    int rc = aclnnGroupNormSwish_checks(c->api, x, gamma, beta, numGroups, dataFormatOptional, eps, activateSwish,
                                        swishScale, yOut, meanOut, rstdOut, &a);
    if (rc) return rc;
    gn_state st = {.groups = numGroups, .eps = (float)eps, .scale = (float)swishScale,
                   .activate = activateSwish ? 1 : 0};
    aclsim_tensor_desc d[6] = {a.x, a.gamma, a.beta, a.yOut, a.meanOut, a.rstdOut};
    uint64_t ws = 0;
    rc = plan_copies(c->api, &st, d, 3, &ws);
    if (rc) return rc;
    return opc_finish(c, &st, sizeof st, ws, d, 6, 3, fwd_kernel);
}

OPC_ENTRY_POINTS(aclnnGroupNormSwish, fwd_prepare,
                 (const aclTensor *x, const aclTensor *gamma, const aclTensor *beta, int64_t numGroups,
                  char *dataFormatOptional, double eps, bool activateSwish, double swishScale,
                  const aclTensor *yOut, const aclTensor *meanOut, const aclTensor *rstdOut),
                 (x, gamma, beta, numGroups, dataFormatOptional, eps, activateSwish, swishScale, yOut, meanOut,
                  rstdOut))

/* ========================================================================== */
/* grad                                                                       */
/* ========================================================================== */

/* dy * d(z * sigmoid(s z))/dz = dy * sig * (1 + s2 z (1 - sig)), in float64 and in
 * the order the binding's reference computes it. s2 is s, except in the kernel of the
 * releases before 9.1.0 (8.1.RC1's among them), which leaves swishScale out of the
 * second term: s2 = 1 (hicann/ops-nn fixed it on 2026-05-26, first released in 9.1.0). */
static double dswish_dy(double z, double s, double s2, double dy)
{
    const double sig = 1.0 / (exp(z * -s) + 1.0);
    return ((1.0 - sig) * z * s2 + 1.0) * sig * dy;
}

/* t: dy, mean, rstd, x, gamma, beta, dxOut, dgammaOut, dbetaOut.
 * Every step in float64 (the terms of dx cancel where mean and rstd are not x's own
 * statistics, and float32 would lose the result there), sums in order, one rounding
 * at the end: to float32, then a 16-bit output half away from zero. */
OPC_KERNEL(bwd_kernel, gn_state)
{
    const unsigned char *in[MAX_INPUTS];
    for (int i = 0; i < MAX_INPUTS; i++)
        if ((in[i] = map_input(st, i, &t[i], l)) == NULL) return 1;
    unsigned char *dx = map_output(&t[6], l);
    unsigned char *dgamma = dx ? map_output(&t[7], l) : NULL;
    unsigned char *dbeta = dgamma ? map_output(&t[8], l) : NULL;
    unsigned char *sums = dbeta ? opc_map_workspace(l, st->sums_offset, st->sums_bytes, "fp64 per-channel sums") : NULL;
    if (sums == NULL) return 1;
    const unsigned char *dy = in[0], *mean_in = in[1], *rstd_in = in[2], *x = in[3], *gamma = in[4], *beta = in[5];
    const int32_t dt = t[0].dtype;
    const size_t isz = aclsim_dtype_size(dt);
    const int64_t N = t[0].shape[0], C = t[0].shape[1], HW = opc_numel(&t[0]) / (N * C);
    const int64_t G = st->groups, Cg = C / G;
    const double M = (double)(Cg * HW), s = (double)st->scale; /* the attribute is a float */
    const double s2 = aclsim_profile_at_least("9.1.0") ? s : 1.0;  /* the second term's scale */
    double *sum_gz = (double *)(void *)sums, *sum_gzx = sum_gz + N * C; /* per (n, c) */

    for (int64_t n = 0; n < N; n++) {
        for (int64_t g = 0; g < G; g++) {
            const double mean = ld(mean_in, dt, n * G + g), rstd = ld(rstd_in, dt, n * G + g);
            double c1 = 0.0, c2 = 0.0;
            for (int64_t c = g * Cg; c < (g + 1) * Cg; c++) {
                const double gm = ld(gamma, dt, c), bt = ld(beta, dt, c);
                double a = 0.0, b = 0.0;
                for (int64_t i = 0; i < HW; i++) {
                    const int64_t e = (n * C + c) * HW + i;
                    const double xhat = (ld(x, dt, e) - mean) * rstd;
                    const double gz = dswish_dy(xhat * gm + bt, s, s2, ld(dy, dt, e));
                    a += gz;
                    b += gz * xhat;
                }
                sum_gz[n * C + c] = a;
                sum_gzx[n * C + c] = b;
                c1 += a * gm;
                c2 += b * gm;
            }
            double k1 = finite_or_nan64(c1 / M), k2 = finite_or_nan64(c2 / M);
            for (int64_t c = g * Cg; c < (g + 1) * Cg; c++) /* a non-finite gamma/beta: the group is NaN */
                if (!isfinite(ld(gamma, dt, c)) || !isfinite(ld(beta, dt, c))) k1 = k2 = NAN;
            for (int64_t c = g * Cg; c < (g + 1) * Cg; c++) {
                const double gm = ld(gamma, dt, c), bt = ld(beta, dt, c);
                for (int64_t i = 0; i < HW; i++) {
                    const int64_t e = (n * C + c) * HW + i;
                    const double xhat = (ld(x, dt, e) - mean) * rstd;
                    const double gz = dswish_dy(xhat * gm + bt, s, s2, ld(dy, dt, e));
                    store_round_away(dx + (uint64_t)e * isz, dt, (float)((gz * gm - k1 - xhat * k2) * rstd));
                }
            }
        }
    }
    /* dgamma, dbeta: sums over N. A flag that is false: an fp32 output is
     * zero-filled, a 16-bit one left untouched (the A2/A3 kernel's behaviour). */
    for (int64_t c = 0; c < C; c++) {
        double a = 0.0, b = 0.0;
        for (int64_t n = 0; n < N; n++) {
            a += sum_gzx[n * C + c];
            b += sum_gz[n * C + c];
        }
        if (!isfinite(ld(gamma, dt, c)) || !isfinite(ld(beta, dt, c))) a = b = NAN;
        if (st->dgamma_req) store_round_away(dgamma + (uint64_t)c * isz, dt, (float)finite_or_nan64(a));
        else if (dt == ACL_FLOAT) store_round_away(dgamma + (uint64_t)c * isz, dt, 0.0f);
        if (st->dbeta_req) store_round_away(dbeta + (uint64_t)c * isz, dt, (float)finite_or_nan64(b));
        else if (dt == ACL_FLOAT) store_round_away(dbeta + (uint64_t)c * isz, dt, 0.0f);
    }
    return 0;
}

static aclnnStatus bwd_prepare(const opc_call *c, const aclTensor *dy, const aclTensor *mean, const aclTensor *rstd,
                               const aclTensor *x, const aclTensor *gamma, const aclTensor *beta, int64_t numGroups,
                               char *dataFormatOptional, double swishScale, bool dgammaIsRequire,
                               bool dbetaIsRequire, const aclTensor *dxOut, const aclTensor *dgammaOut,
                               const aclTensor *dbetaOut)
{
    /* dataFormatOptional is read by neither tiling nor kernel; every output pointer is
     * checked for NULL, required or not */
    aclnnGroupNormSwishGrad_args a;
    int rc = aclnnGroupNormSwishGrad_checks(c->api, dy, mean, rstd, x, gamma, beta, numGroups, dataFormatOptional,
                                            swishScale, dgammaIsRequire, dbetaIsRequire, dxOut, dgammaOut, dbetaOut,
                                            &a);
    if (rc) return rc;
    gn_state st = {.groups = numGroups, .scale = (float)swishScale, .dgamma_req = dgammaIsRequire ? 1 : 0,
                   .dbeta_req = dbetaIsRequire ? 1 : 0};
    aclsim_tensor_desc d[9] = {a.dy, a.mean, a.rstd, a.x, a.gamma, a.beta, a.dxOut, a.dgammaOut, a.dbetaOut};
    const int64_t N = a.dy.shape[0], C = a.dy.shape[1];
    uint64_t ws = 0;
    rc = plan_copies(c->api, &st, d, MAX_INPUTS, &ws);
    if (rc) return rc;
    st.sums_offset = (ws + 63u) & ~(uint64_t)63u; /* fp64 sums: aligned after the 16-bit copies */
    st.sums_bytes = (uint64_t)N * (uint64_t)C * 2u * sizeof(double);
    ws = st.sums_offset + st.sums_bytes;
    return opc_finish(c, &st, sizeof st, ws, d, 9, 3, bwd_kernel);
}

OPC_ENTRY_POINTS(aclnnGroupNormSwishGrad, bwd_prepare,
                 (const aclTensor *dy, const aclTensor *mean, const aclTensor *rstd, const aclTensor *x,
                  const aclTensor *gamma, const aclTensor *beta, int64_t numGroups, char *dataFormatOptional,
                  double swishScale, bool dgammaIsRequire, bool dbetaIsRequire, const aclTensor *dxOut,
                  const aclTensor *dgammaOut, const aclTensor *dbetaOut),
                 (dy, mean, rstd, x, gamma, beta, numGroups, dataFormatOptional, swishScale, dgammaIsRequire,
                  dbetaIsRequire, dxOut, dgammaOut, dbetaOut))
