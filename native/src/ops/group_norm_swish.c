/*
 * group_norm_swish.c - aclnnGroupNormSwish and aclnnGroupNormSwishGrad for the
 * CPU simulator.
 *
 * Both real APIs are generated from the op definitions: null pointers give
 * 161001 and dtypes outside the definitions' combinations 161002. The shape
 * rules belong to the tilings, which nnopbase runs inside GetWorkspaceSize: a
 * failure is ACLNN_ERR_INNER_TILING_ERROR (561002; hicann/opbase
 * indv_executor.cpp), checked here in the order hicann/ops-nn's
 * group_norm_swish(_grad)_tiling.cpp check them. Then the binding's own
 * refusals (161002) of what the documentation forbids and no tiling rule
 * checks (more than 8 dims; an empty forward x), then the simulator's output
 * checks. Checks run in that order: nulls, dtypes, tiling, the rest.
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

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_INPUTS 6
#define MAX_PER_GROUP 4000 /* the grad tiling's limit on C / numGroups */

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

static int is_vector(const aclsim_tensor_desc *t, int64_t len) { return opc_shape_is(t, 1, &len); }

static int is_matrix(const aclsim_tensor_desc *t, int64_t rows, int64_t cols)
{
    return opc_shape_is(t, 2, (const int64_t[]){rows, cols});
}

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

/* A shape rule of the tilings: nnopbase runs them inside GetWorkspaceSize and
 * returns ACLNN_ERR_INNER_TILING_ERROR when one fails. */
#define TILING ACLNN_ERR_INNER_TILING_ERROR

/* gamma or beta: 1-D of length C, the channel count of x (forward) or dy (grad).
 * Without a channel dimension the tiling's C is no size, and this is the first of
 * its rules that fails. */
static int check_vector(const char *api, const aclsim_tensor_desc *t, const aclsim_tensor_desc *x)
{
    if (x->ndim < 2)
        return opc_fail(TILING, api, "%s must be 1-D of length C, but %s %s has no channel dimension (N, C, *)",
                        t->name, x->name, opc_shape(x));
    if (is_vector(t, x->shape[1])) return 0;
    return opc_fail(TILING, api, "%s must be 1-D of length C = %" PRId64 ", got %s", t->name, x->shape[1],
                    opc_shape(t));
}

/* The documented limit no tiling rule checks: the binding's own refusal (161002),
 * after the tilings' rules, which the simulator shares. */
static int check_at_most_8d(const char *api, const aclsim_tensor_desc *x)
{
    if (x->ndim <= 8) return 0;
    return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be 2-D to 8-D (N, C, *), got %" PRId64 "-D %s", x->name,
                    x->ndim, opc_shape(x));
}

/* Simulator strictness: the kernels write outputs densely, so a strided
 * output would be written wrongly on the NPU (both docs: not supported). */
static int check_output(const char *api, const aclsim_tensor_desc *t, int ok_shape, const char *want)
{
    if (!ok_shape)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must have shape %s, got %s", t->name, want, opc_shape(t));
    if (!opc_is_contiguous(t))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be contiguous (non-contiguous outputs are "
                        "not supported)", t->name);
    return 0;
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
    const char *api = c->api;
    (void)dataFormatOptional; /* read by neither tiling nor kernel: the layout is always (N, C, *) */
    aclsim_tensor_desc d[6];
    /* 1. null pointers, then live handles */
    const opc_arg args[6] = {OPC_TENSOR(x, &d[0]), OPC_TENSOR(gamma, &d[1]), OPC_TENSOR(beta, &d[2]),
                             OPC_TENSOR(yOut, &d[3]), OPC_TENSOR(meanOut, &d[4]), OPC_TENSOR(rstdOut, &d[5])};
    int rc = opc_args(api, args, 6, NULL);
    const aclsim_tensor_desc *xd = &d[0], *gd = &d[1], *bd = &d[2];

    /* 2. dtypes: (x, gamma = beta) in {(f32,f32), (f16,f16), (bf16,bf16), (f16,f32), (bf16,f32)} */
    if (!rc) rc = opc_check_dtype(api, xd, &OPC_FLOATS);
    if (rc) return rc;
    if (gd->dtype != ACL_FLOAT && gd->dtype != xd->dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "gamma dtype %s (%d) is not allowed with x dtype %s: it must be "
                        "x's dtype or ACL_FLOAT (ACL_FLOAT only, for an ACL_FLOAT x)",
                        aclsim_dtype_name(gd->dtype), (int)gd->dtype, aclsim_dtype_name(xd->dtype));
    if (bd->dtype != gd->dtype)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "beta dtype %s (%d) must equal gamma dtype %s",
                        aclsim_dtype_name(bd->dtype), (int)bd->dtype, aclsim_dtype_name(gd->dtype));
    for (int i = 3; i < 6; i++) {
        int32_t want = i == 3 ? xd->dtype : gd->dtype;
        if (d[i].dtype != want)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s (%d) must be %s (the dtype of %s)", d[i].name,
                            aclsim_dtype_name(d[i].dtype), (int)d[i].dtype, aclsim_dtype_name(want),
                            i == 3 ? "x" : "gamma");
    }

    /* 3. the tiling's rules, in its order (561002) */
    if (xd->ndim < 2)
        return opc_fail(TILING, api, "x must be 2-D to 8-D (N, C, *), got %" PRId64 "-D %s", xd->ndim, opc_shape(xd));
    rc = check_vector(api, gd, xd);
    if (!rc) rc = check_vector(api, bd, xd);
    if (rc) return rc;
    if (numGroups <= 0) return opc_fail(TILING, api, "numGroups must be > 0, got %" PRId64, numGroups);
    if (xd->shape[1] % numGroups)
        return opc_fail(TILING, api, "numGroups %" PRId64 " must divide the channel count C = %" PRId64, numGroups,
                        xd->shape[1]);
    /* 4. the binding's own (161002): more than 8 dims, and an empty x (the tiling
     * accepts one; the documentation says unsupported) */
    if ((rc = check_at_most_8d(api, xd))) return rc;
    if (opc_has_zero_dim(xd))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "x must not be empty, got %s", opc_shape(xd));
    char want[96];
    snprintf(want, sizeof want, "[%" PRId64 ", %" PRId64 "] (N, numGroups)", xd->shape[0], numGroups);
    rc = check_output(api, &d[3], opc_same_shape(&d[3], xd), "x's");
    if (!rc) rc = check_output(api, &d[4], is_matrix(&d[4], xd->shape[0], numGroups), want);
    if (!rc) rc = check_output(api, &d[5], is_matrix(&d[5], xd->shape[0], numGroups), want);
    if (rc) return rc;

    gn_state st = {.groups = numGroups, .eps = (float)eps, .scale = (float)swishScale,
                   .activate = activateSwish ? 1 : 0};
    uint64_t ws = 0;
    rc = plan_copies(api, &st, d, 3, &ws);
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
    const char *api = c->api;
    (void)dataFormatOptional; /* read by neither tiling nor kernel */
    aclsim_tensor_desc d[9];
    /* 1. null pointers (the outputs too, required or not), then live handles */
    const opc_arg args[9] = {OPC_TENSOR(dy, &d[0]), OPC_TENSOR(mean, &d[1]), OPC_TENSOR(rstd, &d[2]),
                             OPC_TENSOR(x, &d[3]), OPC_TENSOR(gamma, &d[4]), OPC_TENSOR(beta, &d[5]),
                             OPC_TENSOR(dxOut, &d[6]), OPC_TENSOR(dgammaOut, &d[7]), OPC_TENSOR(dbetaOut, &d[8])};
    int rc = opc_args(api, args, 9, NULL);
    const aclsim_tensor_desc *dyd = &d[0], *md = &d[1], *rd = &d[2], *xd = &d[3];

    /* 2. dtypes: all nine one of ACL_FLOAT, ACL_FLOAT16, ACL_BF16 */
    if (!rc) rc = opc_check_dtype(api, dyd, &OPC_FLOATS);
    if (rc) return rc;
    for (int i = 1; i < 9; i++)
        if (d[i].dtype != dyd->dtype)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s (%d) must equal dy dtype %s (all tensors "
                            "share one dtype)", d[i].name, aclsim_dtype_name(d[i].dtype), (int)d[i].dtype,
                            aclsim_dtype_name(dyd->dtype));

    /* 3. the tiling's rules, in its order (561002) */
    if (!opc_same_shape(xd, dyd))
        return opc_fail(TILING, api, "x shape %s must equal dy shape %s", opc_shape(xd), opc_shape(dyd));
    if (dyd->ndim < 1 || md->ndim < 2 || md->shape[1] != numGroups || md->shape[0] != dyd->shape[0])
        return opc_fail(TILING, api, "mean must have shape [N, numGroups], N dy's first dim, numGroups %" PRId64
                        " (dy %s), got %s", numGroups, opc_shape(dyd), opc_shape(md));
    if (!opc_same_shape(rd, md))
        return opc_fail(TILING, api, "rstd shape %s must equal mean shape %s", opc_shape(rd), opc_shape(md));
    if (md->ndim != 2)
        return opc_fail(TILING, api, "mean and rstd must be 2-D [N, numGroups], got %s", opc_shape(md));
    rc = check_vector(api, &d[4], dyd);
    if (!rc) rc = check_vector(api, &d[5], dyd);
    if (rc) return rc;
    const int64_t N = dyd->shape[0], C = dyd->shape[1];
    if (N * numGroups == 0)
        return opc_fail(TILING, api, "N * numGroups must be > 0 (dy %s, numGroups %" PRId64 ")", opc_shape(dyd),
                        numGroups);
    if (C / numGroups == 0 || C % numGroups)
        return opc_fail(TILING, api, "numGroups %" PRId64 " must divide the channel count C = %" PRId64
                        " (C / numGroups > 0)", numGroups, C);
    for (int64_t i = 2; i < dyd->ndim; i++)
        if (dyd->shape[i] == 0)
            return opc_fail(TILING, api, "dy must not be empty: H * W must be > 0, got %s", opc_shape(dyd));
    if (C / numGroups > MAX_PER_GROUP)
        return opc_fail(TILING, api, "C / numGroups = %" PRId64 " exceeds %d channels per group", C / numGroups,
                        MAX_PER_GROUP);
    /* 4. the binding's own (161002): more than 8 dims */
    if ((rc = check_at_most_8d(api, dyd))) return rc;
    rc = check_output(api, &d[6], opc_same_shape(&d[6], dyd), "dy's");
    if (!rc) rc = check_output(api, &d[7], is_vector(&d[7], C), "[C]");
    if (!rc) rc = check_output(api, &d[8], is_vector(&d[8], C), "[C]");
    if (rc) return rc;

    gn_state st = {.groups = numGroups, .scale = (float)swishScale, .dgamma_req = dgammaIsRequire ? 1 : 0,
                   .dbeta_req = dbetaIsRequire ? 1 : 0};
    uint64_t ws = 0;
    rc = plan_copies(api, &st, d, MAX_INPUTS, &ws);
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
