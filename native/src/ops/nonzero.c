/*
 * nonzero.c - aclnnNonzero (the indices of self's non-zero elements, (count,
 * rank) in row-major order) for the CPU simulator; in the "math" library of the
 * split layout (its 8.1.RC1 header's domain, aclnn_math).
 *
 * A data-dependent output: the caller allocates out at its largest size,
 * (numel(self), rank(self)) INT64, and after the run (stream synchronised)
 * reads the real shape (count, rank) back with aclGetViewShape(out); the values
 * fill out's memory from its start. The kernel sets that view shape on the
 * caller's aclTensor when it runs, as CANN's op_api does (op-plugin's nonzero
 * reads it with aclGetViewShape after EXEC_NPU_CMD_SYNC and resizes its tensor).
 *
 * Phase 1 (the op_api's checks, hicann/ops-nn index/non_zero and the operator's
 * documentation):
 *   1. NULL self, out (161001); not live (561103);
 *   2. self's dtype: FLOAT, FLOAT16, DOUBLE, INT32, INT64, INT16, INT8, UINT8,
 *      BOOL, BF16 (the Atlas A2/A3 list of the documentation; the 8.1.RC1
 *      header lists all but BF16), out's INT64 (161002);
 *   3. self and out at most 8-D (161002);
 *   4. an empty self or out succeeds with nothing to run.
 * Simulator assumptions (161002; CANN's op_api does not check them, and a
 * smaller out would be written past its end): out 2-D, contiguous, with
 * rank(self) columns and at least numel(self) rows.
 */
#define _GNU_SOURCE
#include "op_values.h"
#include "aclnnop/aclnn_nonzero.h"

static const opc_dtypes NONZERO_DTYPES = {10, {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT32, ACL_INT64, ACL_INT16,
                                               ACL_INT8, ACL_UINT8, ACL_BOOL, ACL_BF16}, NULL};
static const opc_dtypes INT64_ONLY = {1, {ACL_INT64}, NULL};

typedef struct {
    int unused;
} nonzero_state;

/* t[0]: self; t[1]: out (contiguous, checked at phase 1). */
static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)state;
    (void)nt;
    const aclsim_tensor_desc *x = &t[0], *y = &t[1];
    unsigned char *xp, *yp;
    if (opc_map_tensors(l, &xp, x, &yp, y, NULL)) return 1;
    const size_t xsz = aclsim_dtype_size(x->dtype);
    int64_t *rows = (int64_t *)(void *)(yp + (uint64_t)y->offset * sizeof(int64_t));
    const int64_t count = opc_numel(x);
    int64_t found = 0;
    for (int64_t k = 0; k < count; k++) {
        if (!opv_nonzero(opv_load(xp + (uint64_t)opv_offset(x, k) * xsz, x->dtype))) continue;
        int64_t rest = k;
        for (int64_t d = x->ndim - 1; d >= 0; d--) { /* k's index along each dimension */
            rows[found * x->ndim + d] = rest % x->shape[d];
            rest /= x->shape[d];
        }
        found++;
    }
    const int64_t real[2] = {found, x->ndim};
    aclsim_tensor_set_view_shape(y->handle, real, 2);
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y;
    const opc_arg args[] = {OPC_TENSOR(self, &x), OPC_TENSOR(out, &y)};
    int rc = opc_args(api, args, 2, NULL);
    if (!rc) rc = opc_check_dtype(api, &x, &NONZERO_DTYPES);
    if (!rc) rc = opc_check_dtype(api, &y, &INT64_ONLY);
    if (!rc) rc = opv_check_max_dim(api, &x, ACLNN_ERR_PARAM_INVALID);
    if (!rc) rc = opv_check_max_dim(api, &y, ACLNN_ERR_PARAM_INVALID);
    if (rc) return rc;
    aclsim_tensor_desc descs[2] = {x, y};
    nonzero_state st = {0};
    if (opc_numel(&x) == 0 || opc_numel(&y) == 0) return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, opc_noop_kernel);
    /* simulator assumptions: room for every row, written densely */
    if (y.ndim != 2 || y.shape[1] != x.ndim || y.shape[0] < opc_numel(&x))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be [%" PRId64 ", %" PRId64 "] (numel(self), "
                        "rank(self): the largest result) or have more rows, got %s", opc_numel(&x), x.ndim,
                        opc_shape(&y));
    if (!opc_is_contiguous(&y))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out must be contiguous: the result fills it from its start");
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, kernel);
}

OPC_ENTRY_POINTS(aclnnNonzero, prepare, (const aclTensor *self, aclTensor *out), (self, out))
