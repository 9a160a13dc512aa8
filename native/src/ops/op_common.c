/*
 * op_common.c - helpers shared by the simulator's op libraries.
 * Compiled into each op library; nothing here is exported.
 */
#define _GNU_SOURCE
#include "op_common.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Warn at load time when this op library is bound to a libnnopbase.so or
 * libascendcl.so of another build (two simulator builds mixed). */
__attribute__((constructor)) static void opc_check_binding(void)
{
    static const char self_marker = 0;
    aclsim_warn_if_foreign(ACLSIM_BUILD_ID, aclsim_nnopbase_build_id(), &self_marker,
                           (const void *)aclsim_executor_launch, "libnnopbase.so");
    aclsim_warn_if_foreign(ACLSIM_BUILD_ID, aclsim_build_id(), &self_marker, (const void *)aclsim_lock,
                           "libascendcl.so");
}

/* ========================================================================== */
/* fp16 / bf16                                                                */
/* ========================================================================== */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float opc_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1F) /* inf, or NaN with its payload kept */
        return bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp != 0) /* normal: rebias 15 -> 127 */
        return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    /* zero or subnormal: man * 2^-24, exact in fp32 */
    float mag = (float)man * 0x1p-24f;
    return bits_f32(sign | f32_bits(mag));
}

uint16_t opc_float_to_half(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) { /* NaN: keep the top 10 payload bits, as NumPy's conversion does */
        uint16_t h = (uint16_t)(0x7C00u | (ax & 0x7FFFFFu) >> 13);
        return sign | (h == 0x7C00u ? 0x7C01u : h); /* never turn a NaN into inf */
    }
    uint32_t e = ax >> 23;                       /* biased fp32 exponent */
    uint32_t m = ax & 0x7FFFFFu;
    if (e > 142) return sign | 0x7C00u;          /* >= 2^16 (and inf): overflow */
    if (e >= 113) {                              /* fp16 normal range */
        uint32_t h = ((e - 112u) << 10) | (m >> 13);
        uint32_t rem = m & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* may carry into inf: correct */
        return sign | (uint16_t)h;
    }
    if (e < 102) return sign; /* below half of the smallest subnormal */
    /* subnormal: round (m | implicit bit) * 2^(e-150) to a multiple of 2^-24 */
    uint32_t full = m | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = full >> shift;
    uint32_t rem = full & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return sign | (uint16_t)q;
}

float opc_bf16_to_float(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t opc_float_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: the canonical quiet NaN, sign kept, as ml_dtypes does */
        return (uint16_t)(((x >> 16) & 0x8000u) | 0x7FC0u);
    x += 0x7FFFu + ((x >> 16) & 1u); /* round to nearest even; overflows into inf correctly */
    return (uint16_t)(x >> 16);
}

float opc_load_float(const unsigned char *p, int32_t dtype)
{
    if (dtype == ACL_FLOAT) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return dtype == ACL_FLOAT16 ? opc_half_to_float(h) : opc_bf16_to_float(h);
}

void opc_store_float(unsigned char *p, int32_t dtype, float v)
{
    if (dtype == ACL_FLOAT) {
        memcpy(p, &v, sizeof v);
        return;
    }
    uint16_t h = dtype == ACL_FLOAT16 ? opc_float_to_half(v) : opc_float_to_bf16(v);
    memcpy(p, &h, sizeof h);
}

/* ========================================================================== */
/* phase 1                                                                    */
/* ========================================================================== */

int opc_fail(int status, const char *api, const char *fmt, ...)
{
    char buf[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    aclsim_set_error("%s: %s", api, buf);
    return status;
}

aclnnStatus opc_open(const opc_call *c)
{
    if (c->workspaceSize == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, c->api, "workspaceSize is NULL");
    if (c->executor == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, c->api, "executor is NULL");
    return ACLNN_SUCCESS;
}

aclnnStatus opc_finish(const opc_call *c, const void *state, size_t state_size, uint64_t workspace_size,
                       const aclsim_tensor_desc *descs, int ntensors, int noutputs, aclsim_kernel_fn kernel)
{
    return opc_finish_ex(c, state, state_size, workspace_size, descs, ntensors, noutputs, kernel, NULL);
}

aclnnStatus opc_finish_ex(const opc_call *c, const void *state, size_t state_size, uint64_t workspace_size,
                          const aclsim_tensor_desc *descs, int ntensors, int noutputs, aclsim_kernel_fn kernel,
                          const opc_traits *traits)
{
    const int runs = kernel != opc_noop_kernel;
    const aclsim_executor_traits t = {.not_repeatable = runs && traits ? traits->not_repeatable : NULL,
                                      .generated = c->generated, .no_kernel = !runs};
    void *copy = malloc(state_size ? state_size : 1);
    if (copy == NULL) return opc_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
    if (state_size) memcpy(copy, state, state_size);
    aclOpExecutor *e = aclsim_executor_create_ex(c->op, workspace_size, descs, ntensors, noutputs, kernel, copy,
                                                 free, &t);
    if (e == NULL) return ACLNN_ERR_INNER_CREATE_EXECUTOR; /* message already set, state freed */
    *c->workspaceSize = workspace_size;
    *c->executor = e;
    return ACLNN_SUCCESS;
}

int opc_require(const char *api, const opc_arg *args, int n, const char *const *order)
{
    for (int i = 0; order ? order[i] != NULL : i < n; i++) {
        const opc_arg *a = &args[i];
        if (order) /* find the parameter the order names */
            for (a = args; a < args + n && strcmp(a->name, order[i]) != 0; a++) {}
        if (a == args + n) return opc_fail(ACLNN_ERR_INNER, api, "no parameter %s", order[i]); /* a bug */
        if (a->handle == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", a->name);
    }
    return 0;
}

int opc_resolve(const char *api, const opc_arg *args, int n)
{
    for (const opc_arg *a = args; a < args + n; a++) {
        int ok = a->tensor ? aclsim_tensor_describe(a->handle, a->name, a->tensor) == 0
                           : aclsim_int_array_values(a->handle, &a->ints->v, &a->ints->n) == 0;
        if (!ok)
            return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "%s %p is not a live %s: it is %s", a->name, a->handle,
                            a->tensor ? "aclTensor" : "aclIntArray", aclsim_handle_describe(a->handle));
    }
    return 0;
}

int opc_args(const char *api, const opc_arg *args, int n, const char *const *order)
{
    int rc = opc_require(api, args, n, order);
    return rc ? rc : opc_resolve(api, args, n);
}

const opc_dtypes OPC_FLOATS = {3, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, NULL};

int opc_dtype_in(int32_t dtype, const opc_dtypes *set)
{
    for (int i = 0; i < set->n; i++)
        if (set->v[i] == dtype) return 1;
    return 0;
}

int opc_check_dtype(const char *api, const aclsim_tensor_desc *t, const opc_dtypes *set)
{
    if (opc_dtype_in(t->dtype, set)) return 0;
    char list[512];
    size_t used = 0;
    for (int i = 0; i < set->n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i == 0 ? "" : i == set->n - 1 ? " or " : ", ", aclsim_dtype_name(set->v[i]));
    return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype must be %s%s, got %s (%d)", t->name, list,
                    set->note ? set->note : "", aclsim_dtype_name(t->dtype), (int)t->dtype);
}

int opc_check_same_dtype(const char *api, const aclsim_tensor_desc *t, const aclsim_tensor_desc *ref)
{
    if (t->dtype == ref->dtype) return 0;
    return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s (%d) must equal %s dtype %s (%d)", t->name,
                    aclsim_dtype_name(t->dtype), (int)t->dtype, ref->name, aclsim_dtype_name(ref->dtype),
                    (int)ref->dtype);
}

int opc_check_same_format(const char *api, const aclsim_tensor_desc *a, const aclsim_tensor_desc *b)
{
    if (a->format == b->format) return 0;
    return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s format %s (%d) and %s format %s (%d) must be equal", a->name,
                    aclsim_format_name(a->format), (int)a->format, b->name, aclsim_format_name(b->format),
                    (int)b->format);
}

int opc_is_private_format(int32_t f)
{
    switch (f) {
    case ACL_FORMAT_NC1HWC0: case ACL_FORMAT_FRACTAL_Z: case ACL_FORMAT_NC1HWC0_C04:
    case ACL_FORMAT_FRACTAL_NZ: case ACL_FORMAT_NDC1HWC0: case ACL_FRACTAL_Z_3D:
    case ACL_FORMAT_FRACTAL_NZ_C0_16: case ACL_FORMAT_FRACTAL_NZ_C0_32: case ACL_FORMAT_FRACTAL_NZ_C0_2:
    case ACL_FORMAT_FRACTAL_NZ_C0_4: case ACL_FORMAT_FRACTAL_NZ_C0_8:
        return 1;
    default:
        return 0;
    }
}

/* ========================================================================== */
/* shapes                                                                     */
/* ========================================================================== */

static const char *dims_str(const int64_t *dims, int64_t n, int64_t shown)
{
    static _Thread_local char ring[4][160];
    static _Thread_local unsigned next;
    char *buf = ring[next++ % 4];
    size_t len = sizeof ring[0];
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int64_t d = 0; d < shown && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, d ? ", %" PRId64 : "%" PRId64, dims[d]);
    if (used < len) snprintf(buf + used, len - used, n > shown ? ", ...]" : "]");
    return buf;
}

const char *opc_shape(const aclsim_tensor_desc *t)
{
    return dims_str(t->shape, t->ndim, t->ndim < ACLSIM_MAX_DIMS ? t->ndim : ACLSIM_MAX_DIMS);
}

const char *opc_dims(const int64_t *dims, int64_t n) { return dims_str(dims, n, n); }

int64_t opc_numel(const aclsim_tensor_desc *t)
{
    int64_t n = 1;
    for (int64_t d = 0; d < t->ndim && d < ACLSIM_MAX_DIMS; d++) n *= t->shape[d];
    return n;
}

__int128 opc_numel_sat(const aclsim_tensor_desc *t)
{
    __int128 n = 1;
    for (int64_t d = 0; d < t->ndim && d < ACLSIM_MAX_DIMS; d++) n = opc_mul_sat(n, t->shape[d]);
    return n;
}

int opc_has_zero_dim(const aclsim_tensor_desc *t)
{
    for (int64_t d = 0; d < t->ndim && d < ACLSIM_MAX_DIMS; d++)
        if (t->shape[d] == 0) return 1;
    return 0;
}

int opc_shape_is(const aclsim_tensor_desc *t, int64_t ndim, const int64_t *dims)
{
    if (t->ndim != ndim) return 0;
    for (int64_t d = 0; d < ndim && d < ACLSIM_MAX_DIMS; d++)
        if (t->shape[d] != dims[d]) return 0;
    return 1;
}

int opc_zero_from(const aclsim_tensor_desc *t, int64_t start)
{
    for (int64_t d = start; d < t->ndim && d < ACLSIM_MAX_DIMS; d++)
        if (t->shape[d] == 0) return 1;
    return 0;
}

/* Python's a.shape[start:stop] == b.shape[start:stop] (stop <= 0: from the end, 0 the end). */
int opc_dims_agree(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b, int64_t start, int64_t stop)
{
    int64_t ea = stop > 0 ? (stop < a->ndim ? stop : a->ndim) : a->ndim + stop;
    int64_t eb = stop > 0 ? (stop < b->ndim ? stop : b->ndim) : b->ndim + stop;
    int64_t na = ea > start ? ea - start : 0, nb = eb > start ? eb - start : 0;
    if (na != nb) return 0;
    for (int64_t d = start; d < ea && d < ACLSIM_MAX_DIMS; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

int64_t opc_lead(int64_t *dst, const aclsim_tensor_desc *lead, int64_t stop)
{
    int64_t n = stop > 0 ? (stop < lead->ndim ? stop : lead->ndim) : lead->ndim + stop;
    if (n < 0) n = 0;
    if (n > ACLSIM_MAX_DIMS) n = ACLSIM_MAX_DIMS;
    for (int64_t d = 0; d < n; d++) dst[d] = lead->shape[d];
    return n;
}

int opc_lead_is(const aclsim_tensor_desc *t, const aclsim_tensor_desc *lead, int64_t stop, int64_t tail)
{
    int64_t dims[ACLSIM_MAX_DIMS];
    int64_t n = opc_lead(dims, lead, stop);
    if (t->ndim != n + tail) return 0;
    for (int64_t d = 0; d < n; d++)
        if (t->shape[d] != dims[d]) return 0;
    return 1;
}

int opc_same_shape(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b)
{
    return opc_shape_is(a, b->ndim, b->shape);
}

int opc_packed_bytes(const aclsim_tensor_desc *t, uint64_t itemsize, uint64_t *bytes)
{
    uint64_t r = itemsize;
    for (int64_t d = 0; d < t->ndim && d < ACLSIM_MAX_DIMS; d++)
        if (__builtin_mul_overflow(r, (uint64_t)t->shape[d], &r)) return 1;
    *bytes = r;
    return 0;
}

int opc_plan_copy(const char *api, const aclsim_tensor_desc *t, uint64_t *ws, uint64_t *offset, uint64_t *bytes)
{
    *offset = *ws;
    *bytes = 0;
    if (opc_is_contiguous(t)) return 0;
    if (opc_packed_bytes(t, aclsim_dtype_size(t->dtype), bytes) || __builtin_add_overflow(*ws, *bytes, ws))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s is too large", t->name);
    return 0;
}

/* ========================================================================== */
/* geometry                                                                   */
/* ========================================================================== */

int opc_is_contiguous(const aclsim_tensor_desc *t)
{
    int64_t expect = 1;
    for (int64_t d = t->ndim; d-- > 0;) {
        if (t->shape[d] != 1 && t->strides[d] != expect) return 0; /* size-1 dims: any stride */
        expect *= t->shape[d];
    }
    return 1;
}

aclsim_tensor_desc opc_contiguous_like(const aclsim_tensor_desc *t)
{
    aclsim_tensor_desc c = *t;
    int64_t s = 1;
    for (int64_t d = t->ndim; d-- > 0;) {
        c.strides[d] = s;
        s *= t->shape[d];
    }
    c.offset = 0;
    c.addr = 0;
    return c;
}

uint64_t opc_view_bytes(const aclsim_tensor_desc *t)
{
    uint64_t e = (uint64_t)t->offset;
    for (int64_t d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0) return 0;
        e += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    }
    return (e + 1) * aclsim_dtype_size(t->dtype);
}

/* ========================================================================== */
/* kernel-time device access                                                  */
/* ========================================================================== */

unsigned char *opc_map_tensor(const aclsim_launch *launch, const aclsim_tensor_desc *t)
{
    uint64_t bytes = opc_view_bytes(t);
    const void *addr = (const void *)(uintptr_t)t->addr;
    if (addr == NULL)
        return opc_fail(1, launch->op_name, "tensor '%s' has no device address (created with tensorData "
                        "NULL): the kernel cannot run", t->name), NULL;
    unsigned char *host = aclsim_dev_map(addr, bytes);
    if (host == NULL) {
        char why[512];
        aclsim_dev_explain(addr, bytes, why, sizeof why);
        opc_fail(1, launch->op_name, "kernel accessed tensor '%s' at device address %p (%" PRIu64
                 " bytes), which is not valid device memory: %s", t->name, addr, bytes, why);
    }
    return host;
}

unsigned char *opc_map_workspace(const aclsim_launch *launch, uint64_t offset, uint64_t bytes,
                                 const char *purpose)
{
    const void *addr = (const void *)(uintptr_t)(launch->workspace + offset);
    unsigned char *host = launch->workspace ? aclsim_dev_map(addr, bytes) : NULL;
    if (host == NULL) {
        char why[512];
        aclsim_dev_explain(addr, bytes, why, sizeof why);
        opc_fail(1, launch->op_name, "kernel accessed the workspace (%s) at device address %p (%" PRIu64
                 " bytes), which is not valid device memory: %s", purpose, addr, bytes, why);
    }
    return host;
}

void opc_gather(const aclsim_tensor_desc *t, const unsigned char *base, unsigned char *dst)
{
    size_t isz = aclsim_dtype_size(t->dtype);
    int64_t nd = t->ndim;
    int64_t idx[ACLSIM_MAX_DIMS] = {0};
    for (int64_t d = 0; d < nd; d++)
        if (t->shape[d] == 0) return;
    for (;;) { /* odometer over the view in row-major order */
        int64_t e = t->offset;
        for (int64_t d = 0; d < nd; d++) e += idx[d] * t->strides[d];
        memcpy(dst, base + (uint64_t)e * isz, isz);
        dst += isz;
        int64_t d = nd - 1;
        while (d >= 0 && ++idx[d] == t->shape[d]) idx[d--] = 0;
        if (d < 0) return;
    }
}

int opc_noop_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)state, (void)t, (void)nt, (void)l;
    return 0;
}

int opc_map_tensors(const aclsim_launch *launch, ...)
{
    va_list ap;
    va_start(ap, launch);
    int failed = 0;
    for (unsigned char **host; !failed && (host = va_arg(ap, unsigned char **)) != NULL;) {
        const aclsim_tensor_desc *t = va_arg(ap, const aclsim_tensor_desc *);
        failed = (*host = opc_map_tensor(launch, t)) == NULL;
    }
    va_end(ap);
    return failed;
}

unsigned char *opc_contiguous(const aclsim_launch *launch, const aclsim_tensor_desc *t, unsigned char *src,
                              uint64_t copy_offset, uint64_t copy_bytes, const char *purpose,
                              aclsim_tensor_desc *view)
{
    *view = *t;
    if (copy_bytes == 0) return src;
    unsigned char *ws = opc_map_workspace(launch, copy_offset, copy_bytes, purpose);
    if (ws == NULL) return NULL;
    opc_gather(t, src, ws);
    *view = opc_contiguous_like(t);
    return ws;
}

/* ========================================================================== */
/* index maps                                                                 */
/* ========================================================================== */

int opc_gather_map(const aclsim_launch *l, const aclsim_tensor_desc *self, const aclsim_tensor_desc *out,
                   int naxes, opc_index_fn f, const void *state)
{
    unsigned char *src, *dst;
    if (opc_map_tensors(l, &src, self, &dst, out, NULL)) return 1;
    const size_t isz = aclsim_dtype_size(out->dtype);
    const int64_t nd = out->ndim;
    int64_t idx[ACLSIM_MAX_DIMS] = {0};
    if (opc_has_zero_dim(out)) return 0;
    for (;;) { /* odometer over out in row-major order */
        int64_t from = self->offset, to = out->offset;
        for (int64_t d = 0; d < nd; d++) {
            int k = (int)(nd - 1 - d);
            to += idx[d] * out->strides[d];
            from += (k < naxes ? f(state, k, idx[d], self->shape[d]) : idx[d]) * self->strides[d];
        }
        memcpy(dst + (uint64_t)to * isz, src + (uint64_t)from * isz, isz);
        int64_t d = nd - 1;
        while (d >= 0 && ++idx[d] == out->shape[d]) idx[d--] = 0;
        if (d < 0) return 0;
    }
}
