/*
 * cat.c - aclnnCat (the tensors of a list joined along dim) for the CPU
 * simulator; in the "math" library of the split layout (hicann/ops-math
 * conversion/concat_d).
 *
 * Phase 1 follows the ops-math op_api (Atlas A2/A3 lists):
 *   0. tensors NULL (161001) or not a live aclTensorList (561103); then each
 *      item NULL (161001; CANN's op_api reads each item's shape before its NULL
 *      check, so there it would crash) or not live (561103);
 *   1. the 1-D tensors of shape [0] are dropped first; if none is left, the call
 *      succeeds with nothing to run, out unchecked (even NULL) and
 *      *workspaceSize left as it was, as in CANN;
 *   2. out NULL (161001), not live (561103);
 *   3. each tensor's dtype, then out's: FLOAT, INT32, INT64, FLOAT16, INT16,
 *      INT8, UINT8, DOUBLE, COMPLEX64, BF16, BOOL (161002);
 *   4. the promoted dtype of the list (161002 if there is none, or COMPLEX128),
 *      which must cast to out's dtype (161002);
 *   5. formats: the first tensor's not a private one, every other tensor's and
 *      out's equal to it (161002);
 *   6. the first tensor at most 8-D, dim in [-rank, rank), every tensor of that
 *      rank and equal to the first off dim (161002);
 *   7. if every tensor is empty, success with nothing to run (out unchecked);
 *      otherwise out's shape must be the concatenation's (equal, or one element
 *      each), 161002. CANN skips this check when one non-empty tensor is left;
 *      the simulator makes it always.
 * The kernel casts each element to the promoted dtype, then to out's (the bits
 * are copied when all three dtypes agree), builds the whole result, then
 * writes it through out's strides (inputs are read through theirs).
 */
#define _GNU_SOURCE
#include "op_values.h"
#include "aclnnop/aclnn_cat.h"

static const opc_dtypes CAT_DTYPES = {11, {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_INT8, ACL_UINT8,
                                           ACL_DOUBLE, ACL_COMPLEX64, ACL_BF16, ACL_BOOL}, NULL};

typedef struct {
    int64_t dim;     /* in [0, rank) */
    int32_t promote;
} cat_state;

/* t[0..nt-2]: the non-empty inputs in list order; t[nt-1]: out. */
static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    const cat_state *st = state;
    const aclsim_tensor_desc *z = &t[nt - 1];
    unsigned char *zp;
    if ((zp = opc_map_tensor(l, z)) == NULL) return 1;
    const size_t zsz = aclsim_dtype_size(z->dtype);
    int64_t inner = 1, total = z->shape[st->dim];
    for (int64_t d = st->dim + 1; d < z->ndim; d++) inner *= z->shape[d];
    const int64_t count = opc_numel(z);
    unsigned char *result = malloc((size_t)count * zsz);
    if (result == NULL) return opc_fail(1, l->op_name, "out of host memory");
    int64_t base = 0; /* where this input starts along dim */
    for (int i = 0; i < nt - 1; i++) {
        const aclsim_tensor_desc *x = &t[i];
        unsigned char *xp = opc_map_tensor(l, x);
        if (xp == NULL) {
            free(result);
            return 1;
        }
        const size_t xsz = aclsim_dtype_size(x->dtype);
        const int64_t extent = x->shape[st->dim], n = opc_numel(x), block = extent * inner;
        const int same = x->dtype == st->promote && st->promote == z->dtype;
        for (int64_t k = 0; k < n; k++) {
            int64_t o = k / block, j = (k % block) / inner, in = k % inner;
            unsigned char *to = result + (size_t)((o * total + base + j) * inner + in) * zsz;
            const unsigned char *from = xp + (uint64_t)opv_offset(x, k) * xsz;
            if (same) memcpy(to, from, zsz);
            else opv_store(to, z->dtype, opv_cast(opv_load(from, x->dtype), st->promote));
        }
        base += extent;
    }
    for (int64_t k = 0; k < count; k++) memcpy(zp + (uint64_t)opv_offset(z, k) * zsz, result + (size_t)k * zsz, zsz);
    free(result);
    return 0;
}

static aclnnStatus check(const char *api, const aclsim_tensor_desc *xs, uint64_t n, const aclsim_tensor_desc *z,
                         int64_t *dim, cat_state *st)
{
    int rc;
    /* 3. dtypes */
    for (uint64_t i = 0; i < n; i++)
        if ((rc = opc_check_dtype(api, &xs[i], &CAT_DTYPES))) return rc;
    if ((rc = opc_check_dtype(api, z, &CAT_DTYPES))) return rc;
    /* 4. the promoted dtype */
    st->promote = xs[0].dtype;
    for (uint64_t i = 1; i < n; i++) {
        int32_t p = opv_promote(xs[i].dtype, st->promote);
        if (p == ACL_DT_UNDEFINED || p == ACL_COMPLEX128)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s and dtype %s %s", xs[i].name,
                            aclsim_dtype_name(xs[i].dtype), aclsim_dtype_name(st->promote),
                            p == ACL_COMPLEX128 ? "promote to ACL_COMPLEX128, which is not implemented"
                                                : "cannot be promoted");
        st->promote = p;
    }
    if (!opv_can_cast(st->promote, z->dtype))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the promoted dtype %s cannot be cast to out dtype %s",
                        aclsim_dtype_name(st->promote), aclsim_dtype_name(z->dtype));
    /* 5. formats */
    if (opc_is_private_format(xs[0].format))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s format %d is a private format: only ND, NCHW, NHWC, "
                        "HWCN, NDHWC and NCDHW are supported", xs[0].name, (int)xs[0].format);
    for (uint64_t i = 1; i < n; i++)
        if ((rc = opc_check_same_format(api, &xs[i], &xs[0]))) return rc;
    if ((rc = opc_check_same_format(api, z, &xs[0]))) return rc;
    /* 6. shapes */
    if ((rc = opv_check_max_dim(api, &xs[0], ACLNN_ERR_PARAM_INVALID))) return rc;
    const int64_t rank = xs[0].ndim, given = *dim;
    if (*dim < 0) *dim += rank;
    if (*dim < 0 || *dim >= rank)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dim %" PRId64 " is out of range for %s, which has %" PRId64
                        " dimensions", given, xs[0].name, rank);
    for (uint64_t i = 1; i < n; i++) {
        if (xs[i].ndim != rank)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s has %" PRId64 " dimensions, %s has %" PRId64,
                            xs[i].name, xs[i].ndim, xs[0].name, rank);
        for (int64_t d = 0; d < rank; d++)
            if (d != *dim && xs[i].shape[d] != xs[0].shape[d])
                return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dimension %" PRId64 " of %s %s must equal that of "
                                "%s %s", d, xs[i].name, opc_shape(&xs[i]), xs[0].name, opc_shape(&xs[0]));
    }
    st->dim = *dim;
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensorList *tensors, int64_t dim, aclTensor *out)
{
    const char *api = c->api;
    opv_tlist list;
    aclsim_tensor_desc *all = NULL, z;
    if (tensors == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "tensors is NULL");
    int rc = opv_resolve_tlist(api, "tensors", tensors, &list);
    if (!rc) rc = opv_require_items(api, &list);
    if (!rc) rc = opv_describe_items(api, &list, &all);
    if (rc) return rc;

    /* 1. drop the 1-D empty tensors; nothing left: success, out unchecked */
    uint64_t n = 0;
    for (uint64_t i = 0; i < list.n; i++)
        if (!(all[i].ndim == 1 && all[i].shape[0] == 0)) all[n++] = all[i];
    cat_state st = {0};
    if (n == 0) {
        opc_call keep = *c; /* CANN leaves *workspaceSize unset on this path */
        uint64_t unused;
        keep.workspaceSize = &unused;
        free(all);
        return opc_finish(&keep, &st, sizeof st, 0, NULL, 0, 0, opc_noop_kernel);
    }

    /* 2. out */
    if (out == NULL) rc = opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "out is NULL");
    if (!rc) rc = opv_describe(api, "out", out, &z);
    /* 3.-6. */
    if (!rc) rc = check(api, all, n, &z, &dim, &st);
    if (rc) {
        free(all);
        return rc;
    }

    /* 7. the non-empty tensors, and out's shape */
    uint64_t kept = 0;
    int64_t want[8];
    memcpy(want, all[0].shape, sizeof want);
    want[st.dim] = 0;
    for (uint64_t i = 0; i < n; i++) {
        want[st.dim] += all[i].shape[st.dim];
        if (opc_numel(&all[i]) != 0) all[kept++] = all[i];
    }
    if (kept > 0 && !opv_same_shape_or_scalar(&z, all[0].ndim, want))
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be %s (the concatenation along dim %" PRId64
                      "), got %s", opc_dims(want, all[0].ndim), st.dim, opc_shape(&z));
    uint64_t bytes;
    if (!rc && kept > 0 && (opc_packed_bytes(&z, aclsim_dtype_size(z.dtype), &bytes) || bytes > (uint64_t)INT64_MAX))
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out %s is too large", opc_shape(&z));
    if (!rc) {
        all[kept] = z; /* the spare slot, if every item was kept */
        if (kept == 0) rc = opc_finish(c, &st, sizeof st, 0, all, 1, 1, opc_noop_kernel);
        else rc = opc_finish(c, &st, sizeof st, 0, all, (int)kept + 1, 1, kernel);
    }
    free(all);
    return rc;
}

OPC_ENTRY_POINTS(aclnnCat, prepare, (const aclTensorList *tensors, int64_t dim, aclTensor *out), (tensors, dim, out))
