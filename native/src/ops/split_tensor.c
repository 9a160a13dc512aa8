/*
 * split_tensor.c - aclnnSplitTensor (self cut along dim into pieces of
 * splitSections, the last one shorter if need be) for the CPU simulator; in
 * the "math" library of the split layout (hicann/ops-math conversion/split_v).
 *
 * Phase 1 follows the ops-math op_api (Atlas A2/A3 list):
 *   1. NULL self, out (161001); not live (561103); then each item of out NULL
 *      (161001; CANN's op_api would crash reading its dtype) or not live (561103);
 *   2. self's dtype, then each out tensor's: DOUBLE, FLOAT, FLOAT16, BF16,
 *      INT64, INT32, INT16, INT8, UINT8, BOOL, COMPLEX128, COMPLEX64; the out
 *      tensors all of one dtype (161002). self's may differ: pieces are cast;
 *   3. self 1-D to 8-D, every out tensor at most 8-D, dim in [-rank, rank),
 *      splitSections 0 exactly when self's size along dim is 0 (161002);
 *   4. an empty self succeeds with nothing to run (out unchecked);
 *   5. size along dim equal to splitSections: out[0] gets all of self; else
 *      ceil(size / splitSections) pieces (one if splitSections is larger), and
 *      out must hold at least that many tensors (161002), each of its piece's
 *      shape (equal, or one element each; 161002). Tensors of out past the
 *      pieces are left alone, as in CANN.
 * Simulator-only (161002): an empty out list (CANN's op_api would index it),
 * out[0]'s shape when it takes the whole of self (CANN's does not check it),
 * and a complex self split into a real out.
 * The kernel copies self (through its strides) before writing any piece, so the
 * pieces may overlap it; a piece is cast to out's dtype (the bits are copied
 * when the dtypes agree).
 */
#define _GNU_SOURCE
#include "op_values.h"
#include "aclnnop/aclnn_split_tensor.h"

static const opc_dtypes SPLIT_DTYPES = {12, {ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT64, ACL_INT32,
                                             ACL_INT16, ACL_INT8, ACL_UINT8, ACL_BOOL, ACL_COMPLEX128, ACL_COMPLEX64},
                                        NULL};

typedef struct {
    int64_t dim;       /* in [0, rank) */
    int64_t sections;  /* piece length along dim (the last may be shorter) */
} split_state;

/* t[0]: self; t[1..nt-1]: the pieces' out tensors. */
static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    const split_state *st = state;
    const aclsim_tensor_desc *x = &t[0];
    unsigned char *xp = opc_map_tensor(l, x);
    if (xp == NULL) return 1;
    const size_t xsz = aclsim_dtype_size(x->dtype);
    const int64_t count = opc_numel(x), total = x->shape[st->dim];
    int64_t inner = 1;
    for (int64_t d = st->dim + 1; d < x->ndim; d++) inner *= x->shape[d];
    unsigned char *copy = malloc((size_t)count * xsz);
    if (copy == NULL) return opc_fail(1, l->op_name, "out of host memory");
    opc_gather(x, xp, copy);
    int rc = 0;
    for (int i = 1; i < nt && rc == 0; i++) {
        const aclsim_tensor_desc *y = &t[i];
        unsigned char *yp = opc_map_tensor(l, y);
        if (yp == NULL) {
            rc = 1;
            break;
        }
        const size_t ysz = aclsim_dtype_size(y->dtype);
        const int64_t start = (int64_t)(i - 1) * st->sections;
        const int64_t extent = total - start < st->sections ? total - start : st->sections;
        const int64_t block = extent * inner, n = count / total * extent;
        for (int64_t k = 0; k < n; k++) {
            int64_t o = k / block, j = (k % block) / inner, in = k % inner;
            const unsigned char *from = copy + (size_t)((o * total + start + j) * inner + in) * xsz;
            opv_convert(yp + (uint64_t)opv_offset(y, k) * ysz, y->dtype, from, x->dtype);
        }
    }
    free(copy);
    return rc;
}

static aclnnStatus check(const char *api, const aclsim_tensor_desc *x, uint64_t sections, int64_t *dim,
                         const aclsim_tensor_desc *ys, uint64_t n)
{
    int rc;
    /* 2. dtypes */
    if ((rc = opc_check_dtype(api, x, &SPLIT_DTYPES))) return rc;
    for (uint64_t i = 0; i < n; i++)
        if ((rc = opc_check_dtype(api, &ys[i], &SPLIT_DTYPES))) return rc;
    for (uint64_t i = 1; i < n; i++)
        if ((rc = opc_check_same_dtype(api, &ys[i], &ys[0]))) return rc;
    /* 3. shapes */
    if ((rc = opv_check_max_dim(api, x, ACLNN_ERR_PARAM_INVALID))) return rc;
    if (x->ndim < 1) return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must have at least 1 dimension, got 0");
    for (uint64_t i = 0; i < n; i++)
        if ((rc = opv_check_max_dim(api, &ys[i], ACLNN_ERR_PARAM_INVALID))) return rc;
    if (*dim >= x->ndim || *dim < -x->ndim)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dim %" PRId64 " must be in [%" PRId64 ", %" PRId64 ")", *dim,
                        -x->ndim, x->ndim);
    if (*dim < 0) *dim += x->ndim;
    const int64_t size = x->shape[*dim];
    if (size != 0 && sections == 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "splitSections must not be 0 when self's size along dim "
                        "(%" PRId64 ") is not", size);
    if (size == 0 && sections != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "splitSections must be 0 when self's size along dim is 0, got "
                        "%" PRIu64, sections);
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, uint64_t splitSections, int64_t dim,
                           aclTensorList *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, *ys = NULL;
    opv_tlist list;
    /* 1. NULL, live */
    const opc_arg args[] = {OPC_TENSOR(self, &x), {"out", out, NULL, NULL}};
    int rc = opc_require(api, args, 2, NULL);
    if (!rc) rc = opv_describe(api, "self", self, &x);
    if (!rc) rc = opv_resolve_tlist(api, "out", out, &list);
    if (!rc) rc = opv_require_items(api, &list);
    if (!rc) rc = opv_describe_items(api, &list, &ys);
    /* 2.-3. */
    if (!rc) rc = check(api, &x, splitSections, &dim, ys, list.n);
    if (rc) {
        free(ys);
        return rc;
    }
    split_state st = {.dim = dim};

    /* 4. empty self */
    if (opc_numel(&x) == 0) {
        free(ys);
        return opc_finish(c, &st, sizeof st, 0, &x, 1, 0, opc_noop_kernel);
    }

    /* 5. the pieces */
    const int64_t size = x.shape[dim];
    uint64_t pieces = splitSections >= (uint64_t)size ? 1 : ((uint64_t)size + splitSections - 1) / splitSections;
    st.sections = splitSections >= (uint64_t)size ? size : (int64_t)splitSections;
    if (list.n == 0)
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out holds no tensor: self makes %" PRIu64 " piece%s", pieces,
                      pieces == 1 ? "" : "s");
    else if (pieces > list.n)
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out holds %" PRIu64 " tensors, fewer than the %" PRIu64
                      " pieces of self %s in %" PRIu64 "s along dim %" PRId64, list.n, pieces, opc_shape(&x),
                      splitSections, dim);
    for (uint64_t i = 0; !rc && i < pieces; i++) {
        int64_t want[8];
        memcpy(want, x.shape, sizeof want);
        int64_t start = (int64_t)i * st.sections;
        want[dim] = size - start < st.sections ? size - start : st.sections;
        if (!opv_same_shape_or_scalar(&ys[i], x.ndim, want))
            rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s shape must be %s (piece %" PRIu64 " of self %s), got %s",
                          ys[i].name, opc_dims(want, x.ndim), i, opc_shape(&x), opc_shape(&ys[i]));
    }
    if (!rc && opv_category(x.dtype) == OPV_COMPLEX && opv_category(ys[0].dtype) != OPV_COMPLEX)
        rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a complex self (%s) split into a real out (%s) is not computed "
                      "by the simulator", aclsim_dtype_name(x.dtype), aclsim_dtype_name(ys[0].dtype));
    if (!rc) {
        /* self, then the pieces' outs (pieces <= list.n: the spare slot takes the last) */
        memmove(ys + 1, ys, (size_t)pieces * sizeof *ys);
        ys[0] = x;
        rc = opc_finish(c, &st, sizeof st, 0, ys, (int)pieces + 1, (int)pieces, kernel);
    }
    free(ys);
    return rc;
}

OPC_ENTRY_POINTS(aclnnSplitTensor, prepare,
                 (const aclTensor *self, uint64_t splitSections, int64_t dim, aclTensorList *out),
                 (self, splitSections, dim, out))
