/*
 * add.c - aclnnAdd (out = self + alpha * other, broadcasting) for the CPU
 * simulator; in the "math" library of the split layout (hicann/ops-math
 * math/add).
 *
 * Phase 1 checks in the order of the ops-math op_api (the Atlas A2/A3 lists):
 *   1. NULL self, other, alpha, out (161001), then live handles (561103);
 *   2. self's and other's dtypes: FLOAT, INT32, INT64, FLOAT16, INT16, INT8,
 *      UINT8, DOUBLE, BOOL, BF16, COMPLEX64, COMPLEX128 (161002);
 *   3. the promoted dtype (PyTorch's promotion of self and other); alpha must
 *      cast to it (to a BOOL promotion only an integral or bool alpha does),
 *      and it must cast to out's dtype (161002);
 *   4. self and other at most 8-D, broadcastable, and out's shape the broadcast
 *      shape (161002);
 *   5. an empty self or other succeeds with nothing to run.
 * Simulator-only, after those (161002): complex promotions or a complex out,
 * and out, alpha or inputs of a dtype it does not compute (the 8-bit floats).
 *
 * The kernel reads self and other through their strides (broadcast dims read
 * with stride 0), computes every result, then writes out through its strides,
 * so out may overlap the inputs. Arithmetic, in the promoted dtype, follows the
 * op_api's branches on A2/A3:
 *   - alpha equal to 1 (as float: 1, or NaN, which the op_api's test also
 *     takes for 1): self + other;
 *   - float32/float16 (Axpy): self + alpha * other in fp32 (no FMA), rounded
 *     once to float16;
 *   - bfloat16 (Mul then Add): alpha rounded to bf16, the product rounded to
 *     bf16, then the sum rounded to bf16;
 *   - double: other * alpha, then + self, in double;
 *   - integers: self + alpha * other, wrapped to the promoted width (exact);
 *   - bool: self or (other and alpha).
 * The result is cast to out's dtype (op_values.h's rules).
 */
#define _GNU_SOURCE
#include "op_values.h"
#include "aclnnop/aclnn_add.h"

static const opc_dtypes ADD_DTYPES = {12, {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_INT8, ACL_UINT8,
                                           ACL_DOUBLE, ACL_BOOL, ACL_BF16, ACL_COMPLEX64, ACL_COMPLEX128}, NULL};

typedef struct {
    int64_t ndim, count;
    int64_t shape[8];        /* out's (the broadcast) shape */
    int64_t xs[8], ys[8];    /* self's and other's strides over it (0 where broadcast) */
    int32_t promote;
    int alpha_one;           /* the plain-add branch */
    float alpha_f;           /* alpha->ToFloat() */
    double alpha_d;
    uint64_t alpha_bits;     /* an integral alpha, as two's-complement bits */
    int alpha_nonzero;
} add_state;

static opv_num add_one(const add_state *st, opv_num a, opv_num b)
{
    switch (opv_category(st->promote)) {
    case OPV_BOOL:
        return opv_int(opv_nonzero(a) | (opv_nonzero(b) & (st->alpha_one || st->alpha_nonzero)));
    case OPV_INT:
    case OPV_UINT: {
        uint64_t ua = opv_int_bits_of(a, 1, 64), ub = opv_int_bits_of(b, 1, 64);
        uint64_t s = ua + (st->alpha_one ? ub : st->alpha_bits * ub);
        return opv_cast(opv_int((int64_t)s), st->promote);
    }
    default:
        break;
    }
    if (st->promote == ACL_DOUBLE) return opv_float(st->alpha_one ? a.f + b.f : a.f + b.f * st->alpha_d);
    float fa = (float)a.f, fb = (float)b.f, r;
    if (st->alpha_one) {
        r = fa + fb;
    } else if (st->promote == ACL_BF16) {
        float alpha = opc_bf16_to_float(opc_float_to_bf16(st->alpha_f));
        float t = opc_bf16_to_float(opc_float_to_bf16(fb * alpha));
        r = fa + t;
    } else {
        r = fa + st->alpha_f * fb;
    }
    return opv_cast(opv_float(r), st->promote);
}

static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const add_state *st = state;
    const aclsim_tensor_desc *x = &t[0], *y = &t[1], *z = &t[2];
    unsigned char *xp, *yp, *zp;
    if (opc_map_tensors(l, &xp, x, &yp, y, &zp, z, NULL)) return 1;
    const size_t xsz = aclsim_dtype_size(x->dtype), ysz = aclsim_dtype_size(y->dtype);
    const size_t zsz = aclsim_dtype_size(z->dtype);
    unsigned char *results = malloc((size_t)st->count * zsz);
    if (results == NULL) return opc_fail(1, l->op_name, "out of host memory");
    for (int64_t k = 0; k < st->count; k++) {
        int64_t xo = x->offset, yo = y->offset, rest = k;
        for (int64_t d = st->ndim - 1; d >= 0; d--) {
            int64_t i = rest % st->shape[d];
            rest /= st->shape[d];
            xo += i * st->xs[d];
            yo += i * st->ys[d];
        }
        opv_num a = opv_cast(opv_load(xp + (uint64_t)xo * xsz, x->dtype), st->promote);
        opv_num b = opv_cast(opv_load(yp + (uint64_t)yo * ysz, y->dtype), st->promote);
        opv_store(results + (size_t)k * zsz, z->dtype, add_one(st, a, b));
    }
    for (int64_t k = 0; k < st->count; k++)
        memcpy(zp + (uint64_t)opv_offset(z, k) * zsz, results + (size_t)k * zsz, zsz);
    free(results);
    return 0;
}

/* The broadcast of self's and other's shapes, with each one's strides over it;
 * 161002 if they do not broadcast. */
static int broadcast(const char *api, const aclsim_tensor_desc *x, const aclsim_tensor_desc *y, add_state *st)
{
    st->ndim = x->ndim > y->ndim ? x->ndim : y->ndim;
    for (int64_t d = 0; d < st->ndim; d++) {
        int64_t dx = d - (st->ndim - x->ndim), dy = d - (st->ndim - y->ndim);
        int64_t sx = dx < 0 ? 1 : x->shape[dx], sy = dy < 0 ? 1 : y->shape[dy];
        if (sx != sy && sx != 1 && sy != 1)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self shape %s and other shape %s cannot broadcast "
                            "(dimension %" PRId64 " of the result: %" PRId64 " against %" PRId64 ")",
                            opc_shape(x), opc_shape(y), d, sx, sy);
        st->shape[d] = sx == 1 ? sy : sx;
        st->xs[d] = sx == 1 ? 0 : x->strides[dx];
        st->ys[d] = sy == 1 ? 0 : y->strides[dy];
    }
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                           aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y, z;
    int32_t adt;
    opv_num av;
    /* 1. NULL pointers, then live handles, in C order */
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_TENSOR(other, &y), {"alpha", alpha, NULL, NULL},
                            OPC_TENSOR(out, &z)};
    int rc = opc_require(api, args, 4, NULL);
    if (!rc) rc = opv_describe(api, "self", self, &x);
    if (!rc) rc = opv_describe(api, "other", other, &y);
    if (!rc) rc = opv_scalar(api, "alpha", alpha, &adt, &av);
    if (!rc) rc = opv_describe(api, "out", out, &z);
    /* 2. dtypes of self and other */
    if (!rc) rc = opc_check_dtype(api, &x, &ADD_DTYPES);
    if (!rc) rc = opc_check_dtype(api, &y, &ADD_DTYPES);
    if (rc) return rc;

    /* 3. the promoted dtype, alpha into it, it into out */
    add_state st = {.promote = opv_promote(x.dtype, y.dtype)};
    if (st.promote == ACL_DT_UNDEFINED)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self dtype %s and other dtype %s cannot be promoted",
                        aclsim_dtype_name(x.dtype), aclsim_dtype_name(y.dtype));
    if (st.promote == ACL_BOOL ? !opv_is_integral(adt, 1) : !opv_can_cast(adt, st.promote))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "alpha dtype %s cannot be cast to the promoted dtype %s",
                        aclsim_dtype_name(adt), aclsim_dtype_name(st.promote));
    if (!opv_can_cast(st.promote, z.dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the promoted dtype %s cannot be cast to out dtype %s",
                        aclsim_dtype_name(st.promote), aclsim_dtype_name(z.dtype));

    /* 4. shapes */
    if ((rc = opv_check_max_dim(api, &x, ACLNN_ERR_PARAM_INVALID)) ||
        (rc = opv_check_max_dim(api, &y, ACLNN_ERR_PARAM_INVALID)) || (rc = broadcast(api, &x, &y, &st)))
        return rc;
    if (!opc_shape_is(&z, st.ndim, st.shape))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be the broadcast shape %s, got %s",
                        opc_dims(st.shape, st.ndim), opc_shape(&z));

    aclsim_tensor_desc descs[3] = {x, y, z};
    /* 5. an empty input: nothing to compute */
    if (opc_numel(&x) == 0 || opc_numel(&y) == 0) return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, opc_noop_kernel);

    /* simulator-only: what it computes */
    if (opv_category(st.promote) == OPV_COMPLEX || opv_category(z.dtype) == OPV_COMPLEX)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "complex addition (%s into out %s) is not computed by the "
                        "simulator", aclsim_dtype_name(st.promote), aclsim_dtype_name(z.dtype));
    if (opv_category(z.dtype) == OPV_NONE)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s (%d) is not one the simulator computes",
                        aclsim_dtype_name(z.dtype), (int)z.dtype);
    if (opv_category(adt) == OPV_NONE)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "alpha dtype %s (%d) is not one the simulator computes",
                        aclsim_dtype_name(adt), (int)adt);

    uint64_t bytes;
    if (opc_packed_bytes(&z, aclsim_dtype_size(z.dtype), &bytes) || bytes > (uint64_t)INT64_MAX)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out %s is too large", opc_shape(&z));
    st.count = opc_numel(&z);
    st.alpha_f = opv_to_float(av);
    st.alpha_d = opv_to_double(av);
    st.alpha_one = !(st.alpha_f > 1 || st.alpha_f < 1);
    st.alpha_nonzero = opv_nonzero(av);
    if (opv_is_integral(adt, 1)) st.alpha_bits = opv_int_bits_of(av, 1, 64);
    return opc_finish(c, &st, sizeof st, 0, descs, 3, 1, kernel);
}

OPC_ENTRY_POINTS(aclnnAdd, prepare,
                 (const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out),
                 (self, other, alpha, out))
