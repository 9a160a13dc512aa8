/*
 * reduce_sum.c - aclnnReduceSum (self summed over dims, as dtype) for the CPU
 * simulator; in the "math" library of the split layout (hicann/ops-math
 * math/reduce_sum).
 *
 * Phase 1 follows the ops-math op_api (Atlas A2/A3 list):
 *   1. NULL self, dims, out (161001); not live (561103);
 *   2. self's and out's dtypes, then dtype, in FLOAT16, FLOAT, INT8, INT16,
 *      INT32, INT64, UINT8, BOOL, DOUBLE, COMPLEX64, COMPLEX128, BF16; out's
 *      dtype equal to dtype (161002);
 *   3. self at most 8-D (161002);
 *   4. each of dims in [-n, n), n = max(rank, 1), none twice (161002);
 *   5. an empty self: out filled with zeros, whatever its shape (out's dtype
 *      must then be real, 161002), nothing run if out is empty too;
 *   6. a 0-D self: out takes its value, cast to dtype;
 *   7. otherwise the sum over dims (all of them if dims is empty), out's shape
 *      the reduced one (kept as 1s with keepDims; equal, or one element each),
 *      161002.
 * Simulator-only (161002): complex sums (self or dtype complex), and out not
 * holding exactly one element for a 0-D self (CANN's op_api copies into it
 * without a check).
 * Each element is cast to dtype first (op_values.h's rules); float sums are
 * accumulated in double and rounded once to dtype (the device sums in fp32 in
 * its own order: results may differ in the last bits), integer sums wrap at
 * dtype's width, a BOOL dtype is a logical or. out is written through its
 * strides after every sum is done.
 */
#define _GNU_SOURCE
#include "op_values.h"
#include "aclnnop/aclnn_reduce_sum.h"

static const opc_dtypes RS_DTYPES = {12, {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8,
                                          ACL_BOOL, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128, ACL_BF16}, NULL};
static const opc_dtypes RS_EMPTY_DTYPES = {10, {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64,
                                                ACL_UINT8, ACL_BOOL, ACL_DOUBLE, ACL_BF16},
                                           " (an empty self fills out with zeros)"};

enum { RS_SUM, RS_FILL_ZERO, RS_COPY };

typedef struct {
    int mode;
    int32_t dtype;
    unsigned reduced; /* bit d: self's dimension d is summed */
} rs_state;

/* t[0]: self; t[1]: out. */
static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const rs_state *st = state;
    const aclsim_tensor_desc *x = &t[0], *y = &t[1];
    unsigned char *xp = NULL, *yp;
    if (st->mode == RS_FILL_ZERO ? (yp = opc_map_tensor(l, y)) == NULL : opc_map_tensors(l, &xp, x, &yp, y, NULL))
        return 1;
    const size_t xsz = aclsim_dtype_size(x->dtype), ysz = aclsim_dtype_size(y->dtype);
    const int64_t nout = opc_numel(y);
    if (st->mode == RS_FILL_ZERO) {
        for (int64_t k = 0; k < nout; k++) opv_store(yp + (uint64_t)opv_offset(y, k) * ysz, y->dtype, opv_int(0));
        return 0;
    }
    if (st->mode == RS_COPY) {
        opv_convert(yp + (uint64_t)opv_offset(y, 0) * ysz, y->dtype, xp + (uint64_t)x->offset * xsz, x->dtype);
        return 0;
    }
    const int is_float = opv_category(st->dtype) == OPV_FLOAT;
    double *fsum = calloc((size_t)nout, sizeof *fsum);
    uint64_t *isum = calloc((size_t)nout, sizeof *isum);
    if (fsum == NULL || isum == NULL) {
        free(fsum);
        free(isum);
        return opc_fail(1, l->op_name, "out of host memory");
    }
    const int64_t count = opc_numel(x);
    for (int64_t k = 0; k < count; k++) {
        /* the output element: the row-major index over the dimensions kept */
        int64_t rest = k, o = 0, scale = 1;
        for (int64_t d = x->ndim - 1; d >= 0; d--) {
            int64_t i = rest % x->shape[d];
            rest /= x->shape[d];
            if (!(st->reduced >> d & 1u)) {
                o += i * scale;
                scale *= x->shape[d];
            }
        }
        opv_num v = opv_cast(opv_load(xp + (uint64_t)opv_offset(x, k) * xsz, x->dtype), st->dtype);
        if (is_float) fsum[o] += v.f;
        else if (st->dtype == ACL_BOOL) isum[o] |= (uint64_t)opv_nonzero(v);
        else isum[o] += opv_int_bits_of(v, 1, 64);
    }
    for (int64_t o = 0; o < nout; o++)
        opv_store(yp + (uint64_t)opv_offset(y, o) * ysz, y->dtype,
                  is_float ? opv_float(fsum[o]) : opv_int((int64_t)isum[o]));
    free(fsum);
    free(isum);
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclIntArray *dims, bool keepDims,
                           aclDataType dtype, aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y;
    opc_ints dv;
    /* 1. NULL, live */
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_INTS(dims, &dv), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 3, NULL);
    /* 2. dtypes */
    if (!rc) rc = opc_check_dtype(api, &x, &RS_DTYPES);
    if (!rc) rc = opc_check_dtype(api, &y, &RS_DTYPES);
    if (!rc && !opc_dtype_in(dtype, &RS_DTYPES))
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dtype %s (%d) is not in the supported list",
                      aclsim_dtype_name(dtype), (int)dtype);
    if (!rc && y.dtype != (int32_t)dtype)
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s (%d) must be dtype %s (%d)",
                      aclsim_dtype_name(y.dtype), (int)y.dtype, aclsim_dtype_name(dtype), (int)dtype);
    /* 3. rank */
    if (!rc) rc = opv_check_max_dim(api, &x, ACLNN_ERR_PARAM_INVALID);
    if (rc) return rc;
    /* 4. dims */
    const int64_t n = x.ndim > 0 ? x.ndim : 1;
    rs_state st = {.mode = RS_SUM, .dtype = dtype};
    for (uint64_t i = 0; i < dv.n; i++) {
        int64_t d = dv.v[i];
        if (d >= n || d < -n)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dims[%" PRIu64 "] = %" PRId64 " must be in [%" PRId64
                            ", %" PRId64 "]", i, d, -n, n - 1);
        if (d < 0) d += n;
        if (st.reduced >> d & 1u)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dimension %" PRId64 " appears more than once in dims", d);
        st.reduced |= 1u << d;
    }

    aclsim_tensor_desc descs[2] = {x, y};
    /* 5. an empty self: zeros */
    if (opc_numel(&x) == 0) {
        if ((rc = opc_check_dtype(api, &y, &RS_EMPTY_DTYPES))) return rc;
        st.mode = RS_FILL_ZERO;
        return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, opc_numel(&y) ? kernel : opc_noop_kernel);
    }
    if (opv_category(x.dtype) == OPV_COMPLEX || opv_category(dtype) == OPV_COMPLEX)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "complex sums (self %s as %s) are not computed by the simulator",
                        aclsim_dtype_name(x.dtype), aclsim_dtype_name(dtype));
    /* 6. a 0-D self */
    if (x.ndim == 0) {
        if (opc_numel(&y) != 1)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self is 0-D: out must hold one element, got shape %s",
                            opc_shape(&y));
        st.mode = RS_COPY;
        return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, kernel);
    }
    /* 7. the reduced shape */
    if (dv.n == 0) st.reduced = (1u << x.ndim) - 1u;
    int64_t want[8], nwant = 0;
    for (int64_t d = 0; d < x.ndim; d++) {
        if (!(st.reduced >> d & 1u)) want[nwant++] = x.shape[d];
        else if (keepDims) want[nwant++] = 1;
    }
    if (!opv_same_shape_or_scalar(&y, nwant, want))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s (self %s summed over %s%s), got %s",
                        opc_dims(want, nwant), opc_shape(&x), opc_dims(dv.v, (int64_t)dv.n),
                        keepDims ? ", keepDims" : "", opc_shape(&y));
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, kernel);
}

OPC_ENTRY_POINTS(aclnnReduceSum, prepare,
                 (const aclTensor *self, const aclIntArray *dims, bool keepDims, aclDataType dtype, aclTensor *out),
                 (self, dims, keepDims, dtype, out))
