/*
 * trans_matmul_weight.c - aclnnTransMatmulWeight (a matmul weight reformatted
 * in place from ND to FRACTAL_NZ) and its size helpers
 * aclnnCalculateMatmulWeightSize / aclnnCalculateMatmulWeightSizeV2, for the
 * CPU simulator; in the "math" library of the split layout (hicann/ops-math
 * conversion/trans_data). The simulated SoC is an Atlas A2 (Ascend910B).
 *
 * Size helpers (no executor): NULL tensorShape, then NULL weightTensorSize
 * (161001); rank outside 2..R (161002; R = 3 for V1 before 9.0.0, else 6);
 * V2 also refuses a zero dim (161002). The count is the product of the batch
 * dims and of the last two aligned up: to 16 and 16 for FLOAT16/BF16 (V1 always
 * counts as FLOAT16), else to 16 and 32 (the op_api's rule, FLOAT included).
 *
 * aclnnCalculateConvolutionWeightSize (aclnn_trans_convolution_weight.h; its
 * op_api, hicann/ops-math conversion/trans_data/op_api/
 * aclnn_trans_convolution_weight.cpp, 2026: the oldest public one; every
 * profile follows it), the elements of an NCHW FLOAT16 conv weight stored as
 * FRACTAL_Z, in the op_api's order:
 *   1. NULL tensorShape, then NULL weightTensorSize (161001);
 *   2. not 4 dims, transposed, groups 0, then a SoC other than an Ascend310P
 *      (Atlas inference products; so on the simulated A2 always) (161002);
 *   3. dataType other than FLOAT16 (161002); then the dims in order: a
 *      negative one is refused (161002), a zero one writes 0;
 *   4. the count of TransData's FRACTAL_Z storage (Ascend/metadef transformer
 *      transfer_shape_utils.cc, GetFractalZShape), C0 = 16 for FLOAT16:
 *      C1*H*W * ceil(N/16) * 16 * C0 with C1 = ceil(C/C0); with groups > 1 and
 *      N >= groups, each group's N/groups by C is enlarged e = min(lcm(C0 /
 *      gcd(C, C0), 16 / gcd(N/groups, 16)), groups) times:
 *      ceil(groups/e) * ceil(e*C/C0) * H*W * ceil(e*N/groups/16) * 16 * C0.
 *      TransData refuses groups above 65535 (its null result: 561103), as does
 *      a count past int64 (its shape arithmetic's overflow check).
 * Not modelled: a negative groups passes the op_api's checks into TransData,
 * whose merged-format arithmetic the public sources do not settle for it; the
 * simulator refuses it (161002) instead of guessing a count.
 *
 * aclnnTransMatmulWeightGetWorkspaceSize, in the op_api's order:
 *   1. NULL mmWeightRef (161001), then a live handle (561103);
 *   2. dtype FLOAT16, BF16 or INT8; from 9.1.0 also FLOAT8_E4M3FN, HIFLOAT8
 *      and UINT8 (161002);
 *   3. its storage format must be ND (161002), at most 8 dims (161002);
 *   4. an empty tensor succeeds with nothing to run;
 *   5. rank 2..6 for INT8, 2..3 (before 9.0.0) or 2..6 for the others (161002);
 *   6. then, still in phase 1, the caller's aclTensor itself is changed: its
 *      storage format becomes FRACTAL_NZ and its storage shape
 *      (batch..., ceil(n/C0), ceil(k/16), 16, C0), C0 = 32 bytes / itemsize,
 *      for a (batch..., k, n) view; its view shape and view format stay.
 * The kernel reads the ND view (any strides), encodes it into the workspace
 * (zero padding), then writes the whole NZ storage at the tensor's address:
 * more bytes than the ND view when k or n is not a multiple of the fractal,
 * so a block sized for the ND weight is overrun, which the simulator reports
 * as a kernel fault (507015 at the sync) instead of corrupting memory.
 * Workspace: the NZ result (as TransData's output), plus a contiguous copy of
 * a strided view.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_trans_matmul_weight.h"
#include "aclnnop/aclnn_trans_convolution_weight.h"

#include <inttypes.h>
#include <string.h>

static int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

static int max_rank_16bit(void) { return aclsim_profile_at_least("9.0.0") ? 6 : 3; }

static uint64_t weight_size(const int64_t *dims, uint64_t n, int32_t dtype)
{
    uint64_t size = 1;
    const int half = dtype == ACL_FLOAT16 || dtype == ACL_BF16;
    for (uint64_t i = 0; i < n; i++) {
        int64_t d = dims[i];
        if (i + 2 == n) d = align_up(d, 16);
        else if (i + 1 == n) d = align_up(d, half ? 16 : 32);
        size *= (uint64_t)d;
    }
    return size;
}

/* The size helpers' opening, in their op_apis' order: NULL tensorShape, then NULL
 * weightTensorSize (161001); the shape's values. */
static aclnnStatus shape_arg(const char *api, const aclIntArray *tensorShape, const uint64_t *weightTensorSize,
                             const int64_t **dims, uint64_t *n)
{
    if (tensorShape == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "tensorShape is NULL");
    if (weightTensorSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "weightTensorSize is NULL");
    if (aclsim_int_array_values(tensorShape, dims, n))
        return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "tensorShape %p is not a live aclIntArray: it is %s",
                        (const void *)tensorShape, aclsim_handle_describe(tensorShape));
    return ACLNN_SUCCESS;
}

static aclnnStatus size_helper(const char *api, const aclIntArray *tensorShape, int32_t dtype, int v2,
                               uint64_t *weightTensorSize)
{
    const int64_t *dims;
    uint64_t n;
    aclnnStatus rc = shape_arg(api, tensorShape, weightTensorSize, &dims, &n);
    if (rc) return rc;
    const uint64_t most = v2 ? 6 : (uint64_t)max_rank_16bit();
    if (n < 2 || n > most)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "tensorShape must have 2 to %" PRIu64 " dims, got %" PRIu64,
                        most, n);
    for (uint64_t i = 0; i < n; i++) {
        if (dims[i] < 0 || (v2 && dims[i] == 0))
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "tensorShape %s: %s", opc_dims(dims, (int64_t)n),
                            v2 ? "no zero or negative dims are allowed" : "negative dims are not allowed");
    }
    *weightTensorSize = weight_size(dims, n, dtype);
    return ACLNN_SUCCESS;
}

ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray *tensorShape, uint64_t *weightTensorSize)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = size_helper("aclnnCalculateMatmulWeightSize", tensorShape, ACL_FLOAT16, 0, weightTensorSize);
    aclsim_unlock();
    return rc;
}

ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray *tensorShape, aclDataType dataType,
                                                       uint64_t *weightTensorSize)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = size_helper("aclnnCalculateMatmulWeightSizeV2", tensorShape, dataType, 1, weightTensorSize);
    aclsim_unlock();
    return rc;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static aclnnStatus conv_weight_size(const char *api, const aclIntArray *tensorShape, bool transposed, int64_t groups,
                                    aclDataType dataType, uint64_t *weightTensorSize)
{
    const int64_t *dims;
    uint64_t n;
    aclnnStatus rc = shape_arg(api, tensorShape, weightTensorSize, &dims, &n);
    if (rc) return rc;
    if (n != 4) return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "only a 4-dim tensorShape is supported, got %" PRIu64, n);
    if (transposed)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "only a non-transposed convolution is supported, transposed "
                        "is true");
    if (groups == 0) return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "groups must be larger than 0, got 0");
    const char *soc = aclrtGetSocName();
    if (soc == NULL || strncmp(soc, "Ascend310P", 10) != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "only Ascend310P (Atlas inference products) is supported, the "
                        "SoC is %s", soc ? soc : "unknown");
    if (dataType != ACL_FLOAT16)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "only FLOAT16 is supported, got %s (%d)",
                        aclsim_dtype_name(dataType), (int)dataType);
    for (int i = 0; i < 4; i++) { /* one pass, as the op_api: a zero before a negative dim answers 0 */
        if (dims[i] < 0)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "tensorShape %s: dim %d is negative", opc_dims(dims, 4), i);
        if (dims[i] == 0) {
            *weightTensorSize = 0;
            return ACLNN_SUCCESS;
        }
    }
    if (groups < 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "groups %" PRId64 " is negative: the simulator does not model "
                        "the count CANN gives it", groups);
    if (groups > 65535)
        return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "TransData: groups %" PRId64 " is larger than 65535", groups);
    const int64_t c0 = 16, ni = 16;
    int64_t nn = dims[0], c = dims[1], g = 1;
    if (groups > 1 && nn >= groups) {
        nn /= groups;
        int64_t a = c0 / gcd64(c, c0), b = ni / gcd64(nn, ni);
        int64_t e = a / gcd64(a, b) * b;
        if (e > groups) e = groups;
        g = (groups + e - 1) / e;
        c *= e;
        nn *= e;
    }
    int64_t size = g, f[5] = {(c + c0 - 1) / c0, dims[2], dims[3], (nn + ni - 1) / ni * ni, c0};
    for (int i = 0; i < 5; i++)
        if (__builtin_mul_overflow(size, f[i], &size))
            return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "TransData: the FRACTAL_Z storage of %s overflows int64",
                            opc_dims(dims, 4));
    *weightTensorSize = (uint64_t)size;
    return ACLNN_SUCCESS;
}

ACLNN_API aclnnStatus aclnnCalculateConvolutionWeightSize(const aclIntArray *tensorShape, bool transposed,
                                                          int64_t groups, aclDataType dataType,
                                                          uint64_t *weightTensorSize)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = conv_weight_size("aclnnCalculateConvolutionWeightSize", tensorShape, transposed, groups, dataType,
                                      weightTensorSize);
    aclsim_unlock();
    return rc;
}

typedef struct {
    int64_t batch, k, n, c0, k1, n1; /* the view (batch..., k, n) and its fractal counts */
    uint64_t nz_bytes;               /* the NZ storage, workspace offset 0 */
    uint64_t copy_offset, copy_bytes;
} tmw_state;

OPC_KERNEL(kernel, tmw_state)
{
    const aclsim_tensor_desc *w = &t[0];
    const size_t isz = aclsim_dtype_size(w->dtype);
    aclsim_tensor_desc in;
    unsigned char *src = opc_map_tensor(l, w);
    if (src == NULL) return 1;
    src = opc_contiguous(l, w, src, st->copy_offset, st->copy_bytes, "contiguous copy of mmWeightRef", &in);
    if (src == NULL) return 1;
    unsigned char *nz = opc_map_workspace(l, 0, st->nz_bytes, "TransData's FRACTAL_NZ result");
    if (nz == NULL) return 1;
    memset(nz, 0, st->nz_bytes);
    const int64_t per_batch = st->n1 * st->k1 * 16 * st->c0;
    for (int64_t b = 0; b < st->batch; b++)
        for (int64_t i = 0; i < st->k; i++)
            for (int64_t j = 0; j < st->n; j++) {
                int64_t e = in.offset + (b * st->k + i) * st->n + j; /* contiguous from here */
                int64_t s = b * per_batch + ((j / st->c0 * st->k1 + i / 16) * 16 + i % 16) * st->c0 + j % st->c0;
                memcpy(nz + (uint64_t)s * isz, src + (uint64_t)e * isz, isz);
            }
    /* TensorMove into the caller's tensor: its whole (now NZ) storage, from its address */
    unsigned char *dst = aclsim_dev_map((const void *)(uintptr_t)w->addr, st->nz_bytes);
    if (dst == NULL) {
        char why[512];
        aclsim_dev_explain((const void *)(uintptr_t)w->addr, st->nz_bytes, why, sizeof why);
        return opc_fail(1, l->op_name, "kernel wrote the FRACTAL_NZ storage of tensor '%s' (%" PRIu64 " bytes) at "
                        "device address %p, which is not valid device memory: %s", w->name, st->nz_bytes,
                        (const void *)(uintptr_t)w->addr, why);
    }
    memmove(dst, nz, st->nz_bytes);
    return 0;
}

static aclnnStatus prepare(const opc_call *c, aclTensor *mmWeightRef)
{
    const char *api = c->api;
    aclsim_tensor_desc w;
    const opc_arg args[] = {OPC_TENSOR(mmWeightRef, &w)};
    int rc = opc_args(api, args, 1, NULL);
    if (rc) return rc;
    opc_dtypes dtypes = {3, {ACL_FLOAT16, ACL_BF16, ACL_INT8}, NULL};
    if (aclsim_profile_at_least("9.1.0"))
        dtypes = (opc_dtypes){6, {ACL_FLOAT16, ACL_BF16, ACL_INT8, ACL_FLOAT8_E4M3FN, ACL_HIFLOAT8, ACL_UINT8}, NULL};
    if ((rc = opc_check_dtype(api, &w, &dtypes))) return rc;
    if (w.storage_format != ACL_FORMAT_ND)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the format of mmWeightRef should be ND, got %s (%d)",
                        aclsim_format_name(w.storage_format), (int)w.storage_format);
    if (w.ndim > 8)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mmWeightRef must have at most 8 dims, got %" PRId64, w.ndim);
    if (opc_has_zero_dim(&w)) return opc_finish(c, NULL, 0, 0, &w, 1, 1, opc_noop_kernel);
    const int64_t most = w.dtype == ACL_INT8 ? 6 : max_rank_16bit();
    if (w.ndim < 2 || w.ndim > most)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mmWeightRef must have 2 to %" PRId64 " dims, got %" PRId64
                        " (shape %s)", most, w.ndim, opc_shape(&w));
    const size_t isz = aclsim_dtype_size(w.dtype);
    tmw_state st = {.batch = 1, .k = w.shape[w.ndim - 2], .n = w.shape[w.ndim - 1], .c0 = (int64_t)(32 / isz)};
    int64_t dims[ACLSIM_MAX_DIMS];
    for (int64_t d = 0; d + 2 < w.ndim; d++) st.batch *= (dims[d] = w.shape[d]);
    st.k1 = (st.k + 15) / 16;
    st.n1 = (st.n + st.c0 - 1) / st.c0;
    dims[w.ndim - 2] = st.n1;
    dims[w.ndim - 1] = st.k1;
    dims[w.ndim] = 16;
    dims[w.ndim + 1] = st.c0;
    st.nz_bytes = (uint64_t)(st.batch * st.n1 * st.k1 * 16 * st.c0) * isz;
    uint64_t ws = st.nz_bytes;
    if ((rc = opc_plan_copy(api, &w, &ws, &st.copy_offset, &st.copy_bytes))) return rc;
    /* the op_api writes the result's storage shape and format into the caller's tensor */
    if (aclsim_tensor_set_storage(mmWeightRef, ACL_FORMAT_FRACTAL_NZ, dims, (uint64_t)w.ndim + 2))
        return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "mmWeightRef %p is not a live aclTensor", (void *)mmWeightRef);
    aclsim_tensor_describe(mmWeightRef, "mmWeightRef", &w);
    return opc_finish(c, &st, sizeof st, ws, &w, 1, 1, kernel);
}

OPC_ENTRY_POINTS(aclnnTransMatmulWeight, prepare, (aclTensor *mmWeightRef), (mmWeightRef))
