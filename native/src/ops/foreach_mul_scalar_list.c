/*
 * foreach_mul_scalar_list.c - aclnnForeachMulScalarList (out[i] = x[i] *
 * scalars[i]) for the CPU simulator; in the "nn" library of the split layout
 * (hicann/ops-nn foreach/foreach_mul_scalar_list).
 *
 * A generated API (no op_api source): its checks are the op definition's dtype
 * combinations and the foreach tiling's rules, with the statuses the operator's
 * documentation gives:
 *   1. NULL x, scalars, out (161001); not live (561103); then each item of x,
 *      scalars and out NULL (161001) or not live (561103);
 *   2. the op definition (161002): each x[i] FLOAT16, FLOAT, BF16 or INT32;
 *      the scalar list's dtype (its first scalar's, a DOUBLE counting as FLOAT,
 *      as nnopbase packs it) FLOAT for the float types and INT64 for INT32; each
 *      out[i] of x[i]'s dtype;
 *   3. the tiling (561002, ACLNN_ERR_INNER_TILING_ERROR): at most 256 tensors,
 *      out as long as x, x[i] at most 8-D, as many scalars as tensors, each
 *      out[i] of x[0]'s dtype and with x[i]'s shape or at least as many
 *      elements, and every x[i] of x[0]'s dtype.
 * Unconfirmed, simulator assumptions: an empty x is 161002; out longer than x
 * is refused (561002) like a shorter one.
 * Simulator-only (161002): out[i] must be contiguous and at most 8-D (the kernel
 * writes densely, as the device does), a scalar must be real and of a dtype the
 * simulator computes, and a DOUBLE scalar after a first integer one is refused
 * (nnopbase would pack a float among int64s).
 * Each scalar becomes the list dtype (nnopbase's conversion); the kernel (the
 * A2/A3 one) multiplies in x's dtype: fp32 in fp32; fp16 with the scalar
 * rounded to fp16 and the product rounded once; bf16 in fp32, rounded once to
 * bf16; int32 with the scalar truncated to 32 bits, wrapping. out[i] is
 * written densely from its offset (x[i] read through its strides).
 */
#define _GNU_SOURCE
#include "op_values.h"
#include "aclnnop/aclnn_foreach_mul_scalar_list.h"

static const opc_dtypes FOREACH_DTYPES = {4, {ACL_FLOAT16, ACL_FLOAT, ACL_BF16, ACL_INT32}, NULL};
#define FOREACH_MAX_TENSORS 256 /* the foreach tiling's MAX_TENSOR_CONT */

typedef struct {
    int32_t dtype; /* x's */
    uint64_t n;
    union {
        float f;   /* float x: the scalar as FLOAT */
        int32_t i; /* int32 x: the INT64 scalar, truncated */
    } s[];
} fmsl_state;

/* t[0..n-1]: x; t[n..2n-1]: out. */
static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    const fmsl_state *st = state;
    (void)nt;
    for (uint64_t i = 0; i < st->n; i++) {
        const aclsim_tensor_desc *x = &t[i], *y = &t[st->n + i];
        const int64_t count = opc_numel(x);
        if (count == 0) continue;
        unsigned char *xp, *yp;
        if (opc_map_tensors(l, &xp, x, &yp, y, NULL)) return 1;
        const size_t sz = aclsim_dtype_size(x->dtype);
        unsigned char *result = malloc((size_t)count * sz);
        if (result == NULL) return opc_fail(1, l->op_name, "out of host memory");
        for (int64_t k = 0; k < count; k++) {
            const unsigned char *from = xp + (uint64_t)opv_offset(x, k) * sz;
            unsigned char *to = result + (size_t)k * sz;
            if (st->dtype == ACL_INT32) {
                int32_t v;
                memcpy(&v, from, sizeof v);
                v = (int32_t)((uint32_t)v * (uint32_t)st->s[i].i);
                memcpy(to, &v, sizeof v);
            } else {
                float s = st->s[i].f;
                if (st->dtype == ACL_FLOAT16) s = opc_half_to_float(opc_float_to_half(s));
                opc_store_float(to, st->dtype, opc_load_float(from, st->dtype) * s);
            }
        }
        memcpy(yp + (uint64_t)y->offset * sz, result, (size_t)count * sz); /* dense from out's offset */
        free(result);
    }
    return 0;
}

/* 2. the op definition's dtype combinations (161002). */
static int check_dtypes(const char *api, const aclsim_tensor_desc *xs, const aclsim_tensor_desc *ys, uint64_t nx,
                        uint64_t ny, const int32_t *sdt, uint64_t ns)
{
    int rc;
    for (uint64_t i = 0; i < nx; i++)
        if ((rc = opc_check_dtype(api, &xs[i], &FOREACH_DTYPES))) return rc;
    if (ns > 0) {
        int32_t list = sdt[0] == ACL_DOUBLE ? ACL_FLOAT : sdt[0];
        int32_t want = xs[0].dtype == ACL_INT32 ? ACL_INT64 : ACL_FLOAT;
        if (list != want)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scalars dtype %s (its first scalar's) does not go with x "
                            "dtype %s: FLOAT16, FLOAT and BF16 take ACL_FLOAT (or ACL_DOUBLE) scalars, INT32 takes "
                            "ACL_INT64", aclsim_dtype_name(sdt[0]), aclsim_dtype_name(xs[0].dtype));
    }
    for (uint64_t i = 0; i < ny; i++) {
        if ((rc = opc_check_dtype(api, &ys[i], &FOREACH_DTYPES))) return rc;
        if (i < nx && (rc = opc_check_same_dtype(api, &ys[i], &xs[i]))) return rc;
    }
    return 0;
}

/* 3. the foreach tiling's rules (561002). */
static int check_tiling(const char *api, const aclsim_tensor_desc *xs, const aclsim_tensor_desc *ys, uint64_t nx,
                        uint64_t ny, uint64_t ns)
{
    const int bad = ACLNN_ERR_INNER_TILING_ERROR;
    if (nx > FOREACH_MAX_TENSORS)
        return opc_fail(bad, api, "x holds %" PRIu64 " tensors, more than %d", nx, FOREACH_MAX_TENSORS);
    if (ny != nx) return opc_fail(bad, api, "out holds %" PRIu64 " tensors, x %" PRIu64, ny, nx);
    for (uint64_t i = 0; i < nx; i++)
        if (xs[i].ndim > 8)
            return opc_fail(bad, api, "%s has %" PRId64 " dimensions, more than 8", xs[i].name, xs[i].ndim);
    if (ns != nx) return opc_fail(bad, api, "scalars holds %" PRIu64 " scalars, x %" PRIu64 " tensors", ns, nx);
    for (uint64_t i = 0; i < nx; i++) {
        if (ys[i].dtype != xs[0].dtype)
            return opc_fail(bad, api, "%s dtype %s must be that of x, %s", ys[i].name, aclsim_dtype_name(ys[i].dtype),
                            aclsim_dtype_name(xs[0].dtype));
        if (ys[i].ndim <= 8 && !opc_same_shape(&ys[i], &xs[i]) && opc_numel(&ys[i]) < opc_numel(&xs[i]))
            return opc_fail(bad, api, "%s %s has fewer elements than %s %s", ys[i].name, opc_shape(&ys[i]),
                            xs[i].name, opc_shape(&xs[i]));
    }
    for (uint64_t i = 1; i < nx; i++)
        if (xs[i].dtype != xs[0].dtype)
            return opc_fail(bad, api, "%s dtype %s differs from %s dtype %s: the tensors of x must share one dtype",
                            xs[i].name, aclsim_dtype_name(xs[i].dtype), xs[0].name, aclsim_dtype_name(xs[0].dtype));
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensorList *x, const aclScalarList *scalars,
                           const aclTensorList *out)
{
    const char *api = c->api;
    opv_tlist xl, yl;
    const aclScalar *const *sitems = NULL;
    uint64_t ns = 0;
    aclsim_tensor_desc *xs = NULL, *ys = NULL;
    int32_t *sdt = NULL;
    opv_num *sv = NULL;
    fmsl_state *st = NULL;

    /* 1. NULL, live, then the items */
    const opc_arg args[] = {{"x", x, NULL, NULL}, {"scalars", scalars, NULL, NULL}, {"out", out, NULL, NULL}};
    int rc = opc_require(api, args, 3, NULL);
    if (!rc) rc = opv_resolve_tlist(api, "x", x, &xl);
    if (!rc && aclsim_scalar_list_items(scalars, &sitems, &ns) != 0)
        rc = opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "scalars %p is not a live aclScalarList: it is %s",
                      (const void *)scalars, aclsim_handle_describe(scalars));
    if (!rc) rc = opv_resolve_tlist(api, "out", out, &yl);
    if (!rc) rc = opv_require_items(api, &xl);
    for (uint64_t i = 0; !rc && i < ns; i++)
        if (sitems[i] == NULL) rc = opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "scalars[%" PRIu64 "] is NULL", i);
    if (!rc) rc = opv_require_items(api, &yl);
    if (!rc) rc = opv_describe_items(api, &xl, &xs);
    if (!rc && ((sdt = calloc(ns + 1, sizeof *sdt)) == NULL || (sv = calloc(ns + 1, sizeof *sv)) == NULL))
        rc = opc_fail(ACLNN_ERR_INNER, api, "out of host memory");
    for (uint64_t i = 0; !rc && i < ns; i++) rc = opv_scalar(api, opv_item_name("scalars", i), sitems[i], &sdt[i], &sv[i]);
    if (!rc) rc = opv_describe_items(api, &yl, &ys);
    if (!rc && xl.n == 0) rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "x holds no tensor");

    /* 2. dtypes, 3. the tiling */
    if (!rc) rc = check_dtypes(api, xs, ys, xl.n, yl.n, sdt, ns);
    if (!rc) rc = check_tiling(api, xs, ys, xl.n, yl.n, ns);

    /* simulator-only */
    for (uint64_t i = 0; !rc && i < yl.n; i++)
        if (ys[i].ndim > 8 || !opc_is_contiguous(&ys[i]))
            rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be contiguous and at most 8-D (the kernel writes it "
                          "densely), got shape %s", ys[i].name, opc_shape(&ys[i]));
    for (uint64_t i = 0; !rc && i < ns; i++) {
        int cat = opv_category(sdt[i]);
        if (cat == OPV_NONE || cat == OPV_COMPLEX)
            rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scalars[%" PRIu64 "] dtype %s is not one the simulator "
                          "converts", i, aclsim_dtype_name(sdt[i]));
        else if (i > 0 && sdt[i] == ACL_DOUBLE && sdt[0] != ACL_DOUBLE && sdt[0] != ACL_FLOAT)
            rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "scalars[%" PRIu64 "] is ACL_DOUBLE after an %s first "
                          "scalar: nnopbase would pack it as a float among them", i, aclsim_dtype_name(sdt[0]));
    }

    if (!rc && (st = calloc(1, sizeof *st + xl.n * sizeof st->s[0])) == NULL)
        rc = opc_fail(ACLNN_ERR_INNER, api, "out of host memory");
    if (!rc) {
        st->dtype = xs[0].dtype;
        st->n = xl.n;
        for (uint64_t i = 0; i < xl.n; i++) {
            if (st->dtype == ACL_INT32) st->s[i].i = (int32_t)(uint32_t)opv_int_bits_of(sv[i], 1, 64);
            else st->s[i].f = opv_to_float(sv[i]);
        }
        aclsim_tensor_desc *descs = malloc(2 * xl.n * sizeof *descs);
        if (descs == NULL) {
            rc = opc_fail(ACLNN_ERR_INNER, api, "out of host memory");
        } else {
            memcpy(descs, xs, xl.n * sizeof *descs);
            memcpy(descs + xl.n, ys, xl.n * sizeof *descs);
            rc = opc_finish(c, st, sizeof *st + xl.n * sizeof st->s[0], 0, descs, (int)(2 * xl.n), (int)xl.n, kernel);
            free(descs);
        }
    }
    free(st);
    free(xs);
    free(ys);
    free(sdt);
    free(sv);
    return rc;
}

OPC_ENTRY_POINTS(aclnnForeachMulScalarList, prepare,
                 (const aclTensorList *x, const aclScalarList *scalars, const aclTensorList *out),
                 (x, scalars, out))
