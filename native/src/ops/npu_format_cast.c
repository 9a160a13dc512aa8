/*
 * npu_format_cast.c - aclnnNpuFormatCast (a tensor copied into another data
 * format) and aclnnNpuFormatCastCalculateSizeAndFormat (the storage shape and
 * format of such a copy), for the CPU simulator; in the "math" library of the
 * split layout. Only a profile of 8.5.0 or later has them (build.py's
 * OpSource.since; CANN 8.1.RC1 has neither). The behaviour is the Atlas A2/A3
 * branch (Ascend910B, Ascend910_93: not IsRegBase()) of hicann/ops-math master
 * c41933244 conversion/npu_format_cast/op_host/op_api/aclnn_npu_format_cast.cpp,
 * the newest public source, which the 9.2.0 profile follows.
 *
 * The format pairs (storage formats; the op_api's kTransdataForwardFormatPairs910B,
 * either way round): ND, NCL, NCHW, NCDHW <-> FRACTAL_NZ; NCHW, NHWC <->
 * NC1HWC0; NCHW, HWCN <-> FRACTAL_Z; NCDHW, NDHWC <-> NDC1HWC0; NCDHW, DHWCN
 * (ge's 31) <-> FRACTAL_Z_3D. Layouts as the package's host codec
 * (ascend_aclnn/formats.py), C0 = 32 bytes / itemsize.
 *
 * aclnnNpuFormatCastGetWorkspaceSize, in the op_api's order:
 *   1. workspaceSize, executor NULL (161001: the simulator's opening);
 *   2. the SoC (aclrtGetSocName) Ascend910B* or Ascend910_93*, else 161002 (its
 *      RUNTIME_ERROR turned into PARAM_INVALID); Ascend950 / Ascend910_95
 *      (IsRegBase(): other branches) is refused 161002 as not modelled;
 *   3. NULL srcTensor, then NULL dstTensor (561103, ACLNN_ERR_INNER_NULLPTR);
 *      a handle that is not live (561103);
 *   4. srcTensor, then dstTensor, contiguous (161002); their dtypes in INT8,
 *      UINT8, FLOAT, FLOAT16, BF16, INT32, UINT32 (161002);
 *   5. a pair of storage formats not in the table: the op_api returns `false`
 *      from a function returning aclnnStatus, i.e. ACLNN_SUCCESS (0), without
 *      writing *workspaceSize or *executor; the simulator does the same (and
 *      sets the op_api's log line as the recent error). A caller then holds no
 *      executor: the package refuses such a call before it (161002).
 * Then what the public sources do not settle, refused 161002 by the simulator
 * instead of guessed: dtypes of src and dst differing; a logical rank other
 * than the layout's (2 or more for FRACTAL_NZ, 4 for NC1HWC0/FRACTAL_Z, 5 for
 * NDC1HWC0/FRACTAL_Z_3D); view shapes of src and dst differing (the op_api
 * overwrites one with the other); a private tensor's storage shape other than
 * its layout's. The C0 of a 4-byte dtype: the op_api runs TransDataSpecial
 * when dst's last storage dim is 16, else TransData; the simulator takes
 * C0 16 for the former and 8 (its size function's) for the latter, so a
 * private dst stored with C0 16 or 8 is accepted, and a private src whose C0
 * disagrees with that choice (public dst last dim 16 or not) is refused.
 * An empty tensor succeeds with nothing to run. After the checks, a cast from
 * FRACTAL_NZ sets dst's storage format to ND (the op_api's; its storage dims
 * stay: for a public dst, as the caller created it, so its last storage dim is
 * what picks TransDataSpecial: 1-D storage of 16 elements, as the package
 * passes a public tensor, does). The kernel writes the whole private storage, zero
 * padding included, or reads it; no workspace.
 *
 * aclnnNpuFormatCastCalculateSizeAndFormat (no executor), in the op_api's order:
 *   1. the SoC, NULL srcTensor, dtype not in INT8, UINT8, FLOAT, FLOAT16, BF16,
 *      INT32, UINT32, FLOAT8_E4M3FN, HIFLOAT8, FLOAT4_E2M1, FLOAT4_E1M2: 161002
 *      (each turned into PARAM_INVALID); Ascend950 refused 161002 as above;
 *      NULL dstShape, dstShapeSize or actualFormat 161001 (the simulator's: the
 *      op_api writes through them);
 *   2. additionalDtype -1 means srcTensor's dtype; the simulator refuses one
 *      whose size it does not know (161002; the op_api divides by it);
 *   3. the branch, by srcTensor's storage format and dstFormat:
 *      - dstFormat FRACTAL_NZ and src ND or NCL, or additionalDtype equal to
 *        src's dtype and src ND/NCL/NCHW/NCDHW: (batch..., ceil(N/C0),
 *        ceil(M/16), 16, C0), C0 = 32 / size(additionalDtype), FRACTAL_NZ;
 *        the simulator refuses a rank below 2 (161002; the op_api reads dims
 *        before the first);
 *      - src FRACTAL_NZ (the C0_x variants: 161002) and dstFormat ND: its view
 *        shape, ND;
 *      - the other pairs of the table: the layout's storage shape with C0 = 32
 *        / size(additionalDtype), or the public dims read from the private
 *        src's view shape (which must have 4 or 5 dims, else 361001), as the
 *        op_api orders them (to NHWC: {N, C, H, W} read as N, H, W, C); the
 *        simulator refuses a public src of another rank than 4 or 5 (161002);
 *      - anything else 361001 (ACLNN_ERR_RUNTIME_ERROR);
 *      every branch but the first's NZ-from-ND refuses an empty src 361001
 *      (FallbackAclop: "fallback aclop"), and so does that one.
 *   *dstShape is malloc()ed here (new[] in CANN): the caller frees it.
 */
#define _GNU_SOURCE
#include "op_common.h"
#include "aclnnop/aclnn_npu_format_cast.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NFC_FORMAT_DHWCN 31 /* ge::FORMAT_DHWCN: no aclFormat names it */
#define NFC_FORMAT_FRACTAL_Z_3D 33

enum { FAM_NZ, FAM_5HD, FAM_FZ, FAM_6HD, FAM_FZ3D };

/* One pair of the table: public format, private format, the family, and where each
 * canonical axis (NZ: batch, M, N; 4-D: N, C, H, W; 5-D: N, C, D, H, W) sits in the
 * public dims (NZ: unused). */
typedef struct {
    int32_t pub, priv;
    int fam;
    int pos[5];
} nfc_pair;

static const nfc_pair PAIRS[] = {
    {ACL_FORMAT_ND, ACL_FORMAT_FRACTAL_NZ, FAM_NZ, {0}},
    {ACL_FORMAT_NCL, ACL_FORMAT_FRACTAL_NZ, FAM_NZ, {0}},
    {ACL_FORMAT_NCHW, ACL_FORMAT_FRACTAL_NZ, FAM_NZ, {0}},
    {ACL_FORMAT_NCDHW, ACL_FORMAT_FRACTAL_NZ, FAM_NZ, {0}},
    {ACL_FORMAT_NCDHW, ACL_FORMAT_NDC1HWC0, FAM_6HD, {0, 1, 2, 3, 4}},
    {ACL_FORMAT_NCDHW, NFC_FORMAT_FRACTAL_Z_3D, FAM_FZ3D, {0, 1, 2, 3, 4}},
    {NFC_FORMAT_DHWCN, NFC_FORMAT_FRACTAL_Z_3D, FAM_FZ3D, {4, 3, 0, 1, 2}},
    {ACL_FORMAT_NCHW, ACL_FORMAT_NC1HWC0, FAM_5HD, {0, 1, 2, 3}},
    {ACL_FORMAT_NHWC, ACL_FORMAT_NC1HWC0, FAM_5HD, {0, 3, 1, 2}},
    {ACL_FORMAT_NCHW, ACL_FORMAT_FRACTAL_Z, FAM_FZ, {0, 1, 2, 3}},
    {ACL_FORMAT_HWCN, ACL_FORMAT_FRACTAL_Z, FAM_FZ, {3, 2, 0, 1}},
    {ACL_FORMAT_NDHWC, ACL_FORMAT_NDC1HWC0, FAM_6HD, {0, 4, 1, 2, 3}},
};
#define NPAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

static const nfc_pair *find_pair(int32_t pub, int32_t priv)
{
    for (int i = 0; i < NPAIRS; i++)
        if (PAIRS[i].pub == pub && PAIRS[i].priv == priv) return &PAIRS[i];
    return NULL;
}

static const char *format_name(int32_t f)
{
    return f == NFC_FORMAT_DHWCN ? "DHWCN" : f == NFC_FORMAT_FRACTAL_Z_3D ? "FRACTAL_Z_3D" : aclsim_format_name(f);
}

/* 0 on an Atlas A2/A3, else the status with its message. */
static aclnnStatus check_soc(const char *api)
{
    const char *soc = aclrtGetSocName();
    if (soc != NULL && (!strncmp(soc, "Ascend910B", 10) || !strncmp(soc, "Ascend910_93", 12))) return 0;
    if (soc != NULL && (!strncmp(soc, "Ascend950", 9) || !strncmp(soc, "Ascend910_95", 12)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the SoC is %s, whose branches (IsRegBase) the simulator does "
                        "not model", soc);
    return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "Only support Ascend950/ASCEND910_93/ASCEND910B, the SoC is %s",
                    soc ? soc : "unknown");
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int family_rank(int fam) { return fam == FAM_NZ ? 2 : fam == FAM_5HD || fam == FAM_FZ ? 4 : 5; }

/* The private storage of logical dims `dims` (in the pair's public order). */
static int64_t storage_of(const nfc_pair *p, const int64_t *dims, int64_t ndim, int64_t c0, int64_t *out)
{
    if (p->fam == FAM_NZ) {
        for (int64_t d = 0; d + 2 < ndim; d++) out[d] = dims[d];
        out[ndim - 2] = cdiv(dims[ndim - 1], c0);
        out[ndim - 1] = cdiv(dims[ndim - 2], 16);
        out[ndim] = 16;
        out[ndim + 1] = c0;
        return ndim + 2;
    }
    int64_t n = dims[p->pos[0]], c = dims[p->pos[1]], c1 = cdiv(c, c0);
    if (p->fam == FAM_5HD) {
        const int64_t s[] = {n, c1, dims[p->pos[2]], dims[p->pos[3]], c0};
        memcpy(out, s, sizeof s);
        return 5;
    }
    if (p->fam == FAM_FZ) {
        const int64_t s[] = {c1 * dims[p->pos[2]] * dims[p->pos[3]], cdiv(n, 16), 16, c0};
        memcpy(out, s, sizeof s);
        return 4;
    }
    int64_t d = dims[p->pos[2]], h = dims[p->pos[3]], w = dims[p->pos[4]];
    if (p->fam == FAM_6HD) {
        const int64_t s[] = {n, d, c1, h, w, c0};
        memcpy(out, s, sizeof s);
        return 6;
    }
    const int64_t s[] = {d * c1 * h * w, cdiv(n, 16), 16, c0};
    memcpy(out, s, sizeof s);
    return 4;
}

typedef struct {
    nfc_pair pair;
    int to_private;
    int64_t c0, ndim, dims[ACLSIM_MAX_DIMS]; /* logical, in the public order */
    uint64_t storage_elems;
} nfc_state;

/* Storage element of canonical index i (NZ: batch, m, n). */
static int64_t storage_at(const nfc_state *st, const int64_t *i, const int64_t *ext)
{
    const int64_t c0 = st->c0;
    switch (st->pair.fam) {
    case FAM_NZ: {
        int64_t m1 = cdiv(ext[1], 16), n1 = cdiv(ext[2], c0);
        return i[0] * n1 * m1 * 16 * c0 + ((i[2] / c0 * m1 + i[1] / 16) * 16 + i[1] % 16) * c0 + i[2] % c0;
    }
    case FAM_5HD:
        return (((i[0] * cdiv(ext[1], c0) + i[1] / c0) * ext[2] + i[2]) * ext[3] + i[3]) * c0 + i[1] % c0;
    case FAM_FZ:
        return ((((i[1] / c0) * ext[2] + i[2]) * ext[3] + i[3]) * cdiv(ext[0], 16) * 16 + i[0]) * c0 + i[1] % c0;
    case FAM_6HD:
        return ((((i[0] * ext[2] + i[2]) * cdiv(ext[1], c0) + i[1] / c0) * ext[3] + i[3]) * ext[4] + i[4]) * c0 +
               i[1] % c0;
    default: /* FZ3D */
        return ((((i[2] * cdiv(ext[1], c0) + i[1] / c0) * ext[3] + i[3]) * ext[4] + i[4]) * cdiv(ext[0], 16) * 16 +
                i[0]) * c0 + i[1] % c0;
    }
}

static unsigned char *map_storage(const aclsim_launch *l, const aclsim_tensor_desc *t, uint64_t elems)
{
    const uint64_t bytes = ((uint64_t)t->offset + elems) * aclsim_dtype_size(t->dtype);
    unsigned char *p = aclsim_dev_map((const void *)(uintptr_t)t->addr, bytes);
    if (p == NULL) {
        char why[512];
        aclsim_dev_explain((const void *)(uintptr_t)t->addr, bytes, why, sizeof why);
        opc_fail(1, l->op_name, "kernel accessed the %s storage of tensor '%s' (%" PRIu64 " bytes) at device "
                 "address %p, which is not valid device memory: %s", format_name(t->storage_format), t->name, bytes,
                 (const void *)(uintptr_t)t->addr, why);
    }
    return p;
}

OPC_KERNEL(kernel, nfc_state)
{
    const aclsim_tensor_desc *pub = st->to_private ? &t[0] : &t[1], *priv = st->to_private ? &t[1] : &t[0];
    const size_t isz = aclsim_dtype_size(pub->dtype);
    unsigned char *pb = opc_map_tensor(l, pub), *sb;
    if (pb == NULL || (sb = map_storage(l, priv, st->storage_elems)) == NULL) return 1;
    pb += (uint64_t)pub->offset * isz;
    sb += (uint64_t)priv->offset * isz;
    if (st->to_private) memset(sb, 0, st->storage_elems * isz); /* TransData's padding is zeros */
    /* canonical extents, and the public stride of each canonical axis */
    int64_t ext[5], stride[5], pstride[ACLSIM_MAX_DIMS], naxes;
    for (int64_t d = st->ndim, s = 1; d-- > 0;) {
        pstride[d] = s;
        s *= st->dims[d];
    }
    if (st->pair.fam == FAM_NZ) {
        naxes = 3;
        ext[0] = 1;
        for (int64_t d = 0; d + 2 < st->ndim; d++) ext[0] *= st->dims[d];
        ext[1] = st->dims[st->ndim - 2];
        ext[2] = st->dims[st->ndim - 1];
        stride[0] = ext[1] * ext[2];
        stride[1] = ext[2];
        stride[2] = 1;
    } else {
        naxes = family_rank(st->pair.fam);
        for (int k = 0; k < naxes; k++) {
            ext[k] = st->dims[st->pair.pos[k]];
            stride[k] = pstride[st->pair.pos[k]];
        }
    }
    int64_t total = 1, i[5] = {0};
    for (int k = 0; k < naxes; k++) total *= ext[k];
    for (int64_t e = 0; e < total; e++) {
        int64_t po = 0;
        for (int k = 0; k < naxes; k++) po += i[k] * stride[k];
        unsigned char *a = pb + (uint64_t)po * isz, *b = sb + (uint64_t)storage_at(st, i, ext) * isz;
        if (st->to_private) memcpy(b, a, isz);
        else memcpy(a, b, isz);
        for (int k = (int)naxes - 1; k >= 0 && ++i[k] == ext[k]; k--) i[k] = 0;
    }
    return 0;
}

static const opc_dtypes A2_DTYPES = {7, {ACL_INT8, ACL_UINT8, ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32, ACL_UINT32},
                                     NULL};

static aclnnStatus prepare(const opc_call *c, const aclTensor *srcTensor, aclTensor *dstTensor)
{
    const char *api = c->api;
    aclnnStatus rc = check_soc(api);
    if (rc) return rc;
    if (srcTensor == NULL) return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "srcTensor is NULL");
    if (dstTensor == NULL) return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "dstTensor is NULL");
    aclsim_tensor_desc s, d;
    const opc_arg args[] = {OPC_TENSOR(srcTensor, &s), OPC_TENSOR(dstTensor, &d)};
    if ((rc = opc_resolve(api, args, 2))) return rc;
    if (!opc_is_contiguous(&s)) return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "srcTensor must be contiguous.");
    if (!opc_is_contiguous(&d)) return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "dstTensor must be contiguous.");
    if ((rc = opc_check_dtype(api, &s, &A2_DTYPES)) || (rc = opc_check_dtype(api, &d, &A2_DTYPES))) return rc;
    const nfc_pair *p = find_pair(s.storage_format, d.storage_format);
    const int to_private = p != NULL;
    if (p == NULL) p = find_pair(d.storage_format, s.storage_format);
    if (p == NULL) /* the op_api's `return false;`: success, with no executor written */
        return opc_fail(ACLNN_SUCCESS, api, "Unsupported format transformation from [%s] to [%s] (CANN returns 0 "
                        "here without writing workspaceSize or executor)", format_name(s.storage_format),
                        format_name(d.storage_format));
    /* what the public sources do not settle: refused, not guessed */
    if ((rc = opc_check_same_dtype(api, &d, &s))) return rc;
    const aclsim_tensor_desc *pub = to_private ? &s : &d, *priv = to_private ? &d : &s;
    const int64_t rank = family_rank(p->fam);
    if (p->fam == FAM_NZ ? pub->ndim < 2 : pub->ndim != rank)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a %s tensor cast to or from %s must have %s%" PRId64 " dims, "
                        "got %s (the simulator does not model other ranks)", format_name(p->pub),
                        format_name(p->priv), p->fam == FAM_NZ ? "at least " : "", rank, opc_shape(pub));
    if (!opc_same_shape(&s, &d))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "the view shapes of srcTensor %s and dstTensor %s must be equal "
                        "(the simulator does not model the op_api overwriting one with the other)", opc_shape(&s),
                        opc_shape(&d));
    const size_t isz = aclsim_dtype_size(s.dtype);
    int64_t c0 = (int64_t)(32 / isz);
    const int special = isz >= 4 && d.storage_ndim > 0 && d.storage_shape[d.storage_ndim - 1] == 16;
    if (special) c0 = 16; /* TransDataSpecial */
    int64_t want[ACLSIM_MAX_DIMS + 2];
    const int64_t nwant = storage_of(p, pub->shape, pub->ndim, c0, want);
    if (priv->storage_ndim != nwant || memcmp(priv->storage_shape, want, (size_t)nwant * sizeof(int64_t)))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s's %s storage shape must be %s for its view %s and dtype %s "
                        "(C0 %" PRId64 "%s), got %s", priv->name, format_name(p->priv), opc_dims(want, nwant),
                        opc_shape(pub), aclsim_dtype_name(s.dtype), c0,
                        isz >= 4 ? (to_private ? ": 16 or 8 for a 4-byte dtype" : ": 16 when dstTensor's last dim is "
                                    "16 (TransDataSpecial), else 8") : "",
                        opc_dims(priv->storage_shape, priv->storage_ndim));
    nfc_state st = {.pair = *p, .to_private = to_private, .c0 = c0, .ndim = pub->ndim, .storage_elems = 1};
    memcpy(st.dims, pub->shape, sizeof st.dims);
    for (int64_t k = 0; k < nwant; k++) st.storage_elems *= (uint64_t)want[k];
    if (!to_private && s.storage_format == ACL_FORMAT_FRACTAL_NZ) { /* the op_api relabels dst's storage */
        if (aclsim_tensor_set_storage(dstTensor, ACL_FORMAT_ND, d.storage_shape, (uint64_t)d.storage_ndim))
            return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "dstTensor %p is not a live aclTensor", (void *)dstTensor);
        aclsim_tensor_describe(dstTensor, "dstTensor", &d);
    }
    aclsim_tensor_desc descs[2] = {s, d};
    return opc_finish(c, &st, sizeof st, 0, descs, 2, 1, opc_numel(pub) ? kernel : opc_noop_kernel);
}

OPC_ENTRY_POINTS(aclnnNpuFormatCast, prepare, (const aclTensor *srcTensor, aclTensor *dstTensor),
                 (srcTensor, dstTensor))

/* ---- the size function ---- */

static const opc_dtypes SIZE_DTYPES = {11, {ACL_INT8, ACL_UINT8, ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32,
                                            ACL_UINT32, ACL_FLOAT8_E4M3FN, ACL_HIFLOAT8, 40, 41},
                                       " (40 FLOAT4_E2M1, 41 FLOAT4_E1M2)"};

static aclnnStatus put_shape(const char *api, const int64_t *dims, int64_t n, int32_t format, int64_t **dstShape,
                             uint64_t *dstShapeSize, int *actualFormat)
{
    int64_t *out = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (out == NULL) return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "Failed to allocate memory for %s",
                                     format_name(format));
    memcpy(out, dims, (size_t)n * sizeof(int64_t));
    *dstShape = out;
    *dstShapeSize = (uint64_t)n;
    *actualFormat = format;
    return ACLNN_SUCCESS;
}

static aclnnStatus calculate(const char *api, const aclTensor *srcTensor, int dstFormat, int additionalDtype,
                             int64_t **dstShape, uint64_t *dstShapeSize, int *actualFormat)
{
    aclnnStatus rc = check_soc(api);
    if (rc) return rc;
    if (srcTensor == NULL) return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "srcTensor is nullptr.");
    aclsim_tensor_desc s;
    if (aclsim_tensor_describe(srcTensor, "srcTensor", &s))
        return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "srcTensor %p is not a live aclTensor: it is %s",
                        (const void *)srcTensor, aclsim_handle_describe(srcTensor));
    if (opc_check_dtype(api, &s, &SIZE_DTYPES)) return ACLNN_ERR_PARAM_INVALID;
    if (dstShape == NULL || dstShapeSize == NULL || actualFormat == NULL)
        return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", dstShape == NULL ? "dstShape" :
                        dstShapeSize == NULL ? "dstShapeSize" : "actualFormat");
    if (additionalDtype == -1) additionalDtype = s.dtype;
    const size_t asz = aclsim_dtype_size(additionalDtype);
    if (asz == 0 || asz > 32)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "additionalDtype %d has no size the simulator knows (the op_api "
                        "divides 32 bytes by it)", additionalDtype);
    const int64_t c0 = (int64_t)(32 / asz);
    const int32_t f = s.storage_format;
    const int empty = opc_has_zero_dim(&s);
    int64_t out[ACLSIM_MAX_DIMS + 2];
    const int same = additionalDtype == s.dtype;
    if (dstFormat == ACL_FORMAT_FRACTAL_NZ &&
        (f == ACL_FORMAT_ND || f == ACL_FORMAT_NCL || (same && (f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NCDHW)))) {
        if (empty) return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "aclnn empty tensor is not supported, fallback aclop.");
        if (s.ndim < 2)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "srcTensor %s has fewer than 2 dims (the op_api reads the "
                            "dim before the last: not modelled)", opc_shape(&s));
        const nfc_pair *p = find_pair(ACL_FORMAT_ND, ACL_FORMAT_FRACTAL_NZ);
        return put_shape(api, out, storage_of(p, s.shape, s.ndim, c0, out), ACL_FORMAT_FRACTAL_NZ, dstShape,
                         dstShapeSize, actualFormat);
    }
    if (f >= ACL_FORMAT_FRACTAL_NZ_C0_16 && f <= ACL_FORMAT_FRACTAL_NZ_C0_8 && dstFormat == ACL_FORMAT_ND)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "srcTensor's format must be FORMAT_FRACTAL_NZ, got %s",
                        format_name(f));
    if (f == ACL_FORMAT_FRACTAL_NZ && dstFormat == ACL_FORMAT_ND) {
        if (empty) return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "aclnn empty tensor is not supported, fallback aclop.");
        return put_shape(api, s.shape, s.ndim, ACL_FORMAT_ND, dstShape, dstShapeSize, actualFormat);
    }
    const nfc_pair *p = find_pair(f, dstFormat);
    if (p != NULL && p->fam != FAM_NZ) { /* public -> private (to NZ only through the first branch) */
        if (empty) return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "aclnn empty tensor is not supported, fallback aclop.");
        if (s.ndim != family_rank(p->fam))
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "a %s srcTensor must have %d dims, got %s (the op_api reads "
                            "them unchecked: not modelled)", format_name(f), family_rank(p->fam), opc_shape(&s));
        return put_shape(api, out, storage_of(p, s.shape, s.ndim, c0, out), dstFormat, dstShape, dstShapeSize,
                         actualFormat);
    }
    p = dstFormat == ACL_FORMAT_ND ? NULL : find_pair(dstFormat, f);
    if (p != NULL && p->fam != FAM_NZ) { /* private -> public: the public dims read from src's view */
        if (empty) return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "aclnn empty tensor is not supported, fallback aclop.");
        const int64_t rank = family_rank(p->fam);
        if (s.ndim != rank)
            return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "The ViewShape dim of srcTensor must be %" PRId64 " when "
                            "converting to %s, fallback to aclop.", rank, format_name(dstFormat));
        const int64_t *v = s.shape;
        if (dstFormat == ACL_FORMAT_NHWC) { /* read as N, H, W, C; written N, C, H, W (the op_api's order) */
            const int64_t o[] = {v[0], v[3], v[1], v[2]};
            memcpy(out, o, sizeof o);
        } else {
            memcpy(out, v, (size_t)rank * sizeof(int64_t)); /* NCHW, HWCN, NCDHW, DHWCN, NDHWC: as read */
        }
        return put_shape(api, out, rank, dstFormat, dstShape, dstShapeSize, actualFormat);
    }
    return opc_fail(ACLNN_ERR_RUNTIME_ERROR, api, "aclnnNpuFormatCastCalculateSizeAndFormat unsupported format "
                    "transformation (%s to %s)", format_name(f), format_name(dstFormat));
}

ACLNN_API aclnnStatus aclnnNpuFormatCastCalculateSizeAndFormat(const aclTensor *srcTensor, const int dstFormat,
                                                               int additionalDtype, int64_t **dstShape,
                                                               uint64_t *dstShapeSize, int *actualFormat)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    aclnnStatus rc = calculate("aclnnNpuFormatCastCalculateSizeAndFormat", srcTensor, dstFormat, additionalDtype,
                               dstShape, dstShapeSize, actualFormat);
    aclsim_unlock();
    return rc;
}
