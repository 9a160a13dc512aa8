/*
 * op_values.h - element values, dtype promotion and casts, and the list and
 * scalar parameters, for the raw operators that take any numeric dtype (the
 * sources that include it).
 *
 * Header-only (static functions): each op source that includes it gets its own
 * copy, so build.py compiles nothing more per op library.
 *
 * Casts follow PyTorch's rules, as the op_api's l0op::Cast does:
 *   - to a float type: rounded to nearest even (a double or a large integer goes
 *     through fp32 first on its way to fp16/bf16, so it may be rounded twice);
 *     NaN keeps what opc_float_to_half / opc_float_to_bf16 keep;
 *   - to an integer type from an integer: wrapped (two's complement);
 *   - to an integer type from a float: truncated toward zero, saturated at the
 *     type's range, NaN -> 0 (the device's behaviour is not public: an assumption);
 *   - to bool: nonzero (NaN is nonzero);
 *   - to complex: imaginary part 0; complex to a real type takes the real part
 *     (operators refuse it before, as CANN's CanCast does).
 */
#ifndef ACLSIM_OP_VALUES_H
#define ACLSIM_OP_VALUES_H

#include "op_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPV_UNUSED __attribute__((unused))

/* ========================================================================== */
/* dtype categories, promotion, CanCast                                       */
/* ========================================================================== */

enum { OPV_NONE = 0, OPV_BOOL, OPV_INT, OPV_UINT, OPV_FLOAT, OPV_COMPLEX };

/* The category of a dtype the simulator computes with (OPV_NONE: it does not:
 * the 8-bit float types, strings, 4-bit and 1-bit types, ACL_COMPLEX32). */
static OPV_UNUSED int opv_category(int32_t dtype)
{
    switch (dtype) {
    case ACL_BOOL: return OPV_BOOL;
    case ACL_INT8: case ACL_INT16: case ACL_INT32: case ACL_INT64: return OPV_INT;
    case ACL_UINT8: case ACL_UINT16: case ACL_UINT32: case ACL_UINT64: return OPV_UINT;
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE: return OPV_FLOAT;
    case ACL_COMPLEX64: case ACL_COMPLEX128: return OPV_COMPLEX;
    default: return OPV_NONE;
    }
}

static OPV_UNUSED int opv_is_integral(int32_t dtype, int with_bool)
{
    int c = opv_category(dtype);
    return c == OPV_INT || c == OPV_UINT || (with_bool && c == OPV_BOOL);
}

/* The 8-bit float types count as floating for CanCast (the simulator computes
 * none of them). */
static OPV_UNUSED int opv_is_floating(int32_t dtype)
{
    return opv_category(dtype) == OPV_FLOAT || dtype == ACL_HIFLOAT8 || dtype == ACL_FLOAT8_E5M2 ||
           dtype == ACL_FLOAT8_E4M3FN || dtype == ACL_FLOAT8_E8M0;
}

/* PyTorch's canCast, which the op_api's CanCast follows: no complex to a real
 * type, no float to an integer type, nothing but bool to bool. */
static OPV_UNUSED int opv_can_cast(int32_t from, int32_t to)
{
    if (opv_category(from) == OPV_COMPLEX && opv_category(to) != OPV_COMPLEX) return 0;
    if (opv_is_floating(from) && opv_is_integral(to, 0)) return 0;
    if (from != ACL_BOOL && to == ACL_BOOL) return 0;
    return 1;
}

/* Bytes of an integer type's values. */
static OPV_UNUSED int opv_int_bits(int32_t dtype) { return (int)aclsim_dtype_size(dtype) * 8; }

/* The float width rank: fp16 and bf16 1 (they promote together to fp32), fp32 2, fp64 3. */
static OPV_UNUSED int opv_float_rank(int32_t dtype)
{
    return dtype == ACL_DOUBLE || dtype == ACL_COMPLEX128 ? 3
         : dtype == ACL_FLOAT || dtype == ACL_COMPLEX64 ? 2 : 1;
}

/* PyTorch's promoteTypes for the types the simulator computes (the op_api's
 * PromoteType follows it); ACL_DT_UNDEFINED for any other, or for unsigned
 * types wider than 8 bits mixed with another type, which PyTorch leaves
 * undefined. */
static OPV_UNUSED int32_t opv_promote(int32_t a, int32_t b)
{
    int ca = opv_category(a), cb = opv_category(b);
    if (ca == OPV_NONE || cb == OPV_NONE) return a == b && a != ACL_DT_UNDEFINED ? a : ACL_DT_UNDEFINED;
    if (a == b) return a;
    if (ca == OPV_BOOL) return b;
    if (cb == OPV_BOOL) return a;
    if ((ca == OPV_UINT && a != ACL_UINT8) || (cb == OPV_UINT && b != ACL_UINT8)) return ACL_DT_UNDEFINED;
    if (ca == OPV_COMPLEX || cb == OPV_COMPLEX) {
        int ra = opv_float_rank(a), rb = opv_float_rank(b);
        if (ca != OPV_COMPLEX && ca != OPV_FLOAT) ra = 0; /* integers take the complex side's width */
        if (cb != OPV_COMPLEX && cb != OPV_FLOAT) rb = 0;
        return (ra > rb ? ra : rb) == 3 ? ACL_COMPLEX128 : ACL_COMPLEX64;
    }
    if (ca == OPV_FLOAT && cb == OPV_FLOAT) {
        int ra = opv_float_rank(a), rb = opv_float_rank(b);
        if (ra == rb) return ACL_FLOAT; /* fp16 with bf16 */
        return ra > rb ? a : b;
    }
    if (ca == OPV_FLOAT) return a;
    if (cb == OPV_FLOAT) return b;
    /* two integer types, at most one of them uint8 */
    if (a == ACL_UINT8 || b == ACL_UINT8) {
        int32_t s = a == ACL_UINT8 ? b : a;
        return s == ACL_INT8 ? ACL_INT16 : s;
    }
    return aclsim_dtype_size(a) >= aclsim_dtype_size(b) ? a : b;
}

/* ========================================================================== */
/* one element's value                                                        */
/* ========================================================================== */

typedef struct {
    int cat;   /* OPV_BOOL / OPV_INT (i), OPV_UINT (u), OPV_FLOAT (f), OPV_COMPLEX (f + im) */
    int64_t i;
    uint64_t u;
    double f, im;
} opv_num;

static OPV_UNUSED opv_num opv_int(int64_t v) { return (opv_num){OPV_INT, v, (uint64_t)v, (double)v, 0}; }
static OPV_UNUSED opv_num opv_float(double v) { return (opv_num){OPV_FLOAT, 0, 0, v, 0}; }

static OPV_UNUSED opv_num opv_load(const unsigned char *p, int32_t dtype)
{
    opv_num v = {0};
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64;
            float f; double d; float c64[2]; double c128[2]; } b;
    memcpy(&b, p, aclsim_dtype_size(dtype));
    switch (dtype) {
    case ACL_BOOL: v = opv_int(b.u8 != 0); v.cat = OPV_BOOL; break;
    case ACL_INT8: v = opv_int(b.i8); break;
    case ACL_INT16: v = opv_int(b.i16); break;
    case ACL_INT32: v = opv_int(b.i32); break;
    case ACL_INT64: v = opv_int(b.i64); break;
    case ACL_UINT8: v = opv_int(b.u8); break;
    case ACL_UINT16: v = opv_int(b.u16); break;
    case ACL_UINT32: v = opv_int(b.u32); break;
    case ACL_UINT64: v = (opv_num){OPV_UINT, (int64_t)b.u64, b.u64, (double)b.u64, 0}; break;
    case ACL_FLOAT: v = opv_float(b.f); break;
    case ACL_FLOAT16: v = opv_float(opc_half_to_float(b.u16)); break;
    case ACL_BF16: v = opv_float(opc_bf16_to_float(b.u16)); break;
    case ACL_DOUBLE: v = opv_float(b.d); break;
    case ACL_COMPLEX64: v = (opv_num){OPV_COMPLEX, 0, 0, b.c64[0], b.c64[1]}; break;
    case ACL_COMPLEX128: v = (opv_num){OPV_COMPLEX, 0, 0, b.c128[0], b.c128[1]}; break;
    default: break; /* not computed: phase 1 refuses these */
    }
    return v;
}

static OPV_UNUSED double opv_to_double(opv_num v)
{
    return v.cat == OPV_FLOAT || v.cat == OPV_COMPLEX ? v.f : v.cat == OPV_UINT ? (double)v.u : (double)v.i;
}

static OPV_UNUSED float opv_to_float(opv_num v)
{
    /* one rounding from an integer (C converts int64 and uint64 to float correctly rounded) */
    return v.cat == OPV_FLOAT || v.cat == OPV_COMPLEX ? (float)v.f : v.cat == OPV_UINT ? (float)v.u : (float)v.i;
}

static OPV_UNUSED int opv_nonzero(opv_num v)
{
    switch (v.cat) {
    case OPV_FLOAT: return v.f != 0 || isnan(v.f);
    case OPV_COMPLEX: return v.f != 0 || v.im != 0 || isnan(v.f) || isnan(v.im);
    case OPV_UINT: return v.u != 0;
    default: return v.i != 0;
    }
}

/* The two's-complement bits of v as an integer of the given signedness and
 * width: integers wrap; floats truncate toward zero, saturate, NaN -> 0. */
static OPV_UNUSED uint64_t opv_int_bits_of(opv_num v, int is_signed, int bits)
{
    if (v.cat == OPV_FLOAT || v.cat == OPV_COMPLEX) {
        double x = v.f;
        if (isnan(x)) return 0;
        x = trunc(x);
        if (is_signed) {
            double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1); /* [lo, hi) */
            if (x < lo) return (uint64_t)(int64_t)lo; /* the type's minimum, sign-extended */
            if (x >= hi) return bits == 64 ? (uint64_t)INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1;
            return (uint64_t)(int64_t)x;
        }
        double hi = ldexp(1.0, bits);
        if (x <= 0) return 0;
        if (x >= hi) return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        return (uint64_t)x;
    }
    return v.cat == OPV_UINT ? v.u : (uint64_t)v.i;
}

/* Store v as one element of dtype (a cast, per the rules at the top). */
static OPV_UNUSED void opv_store(unsigned char *p, int32_t dtype, opv_num v)
{
    union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; float f; double d; float c64[2];
            double c128[2]; } b;
    switch (dtype) {
    case ACL_BOOL: b.u8 = (uint8_t)opv_nonzero(v); break;
    case ACL_INT8: case ACL_UINT8: b.u8 = (uint8_t)opv_int_bits_of(v, dtype == ACL_INT8, 8); break;
    case ACL_INT16: case ACL_UINT16: b.u16 = (uint16_t)opv_int_bits_of(v, dtype == ACL_INT16, 16); break;
    case ACL_INT32: case ACL_UINT32: b.u32 = (uint32_t)opv_int_bits_of(v, dtype == ACL_INT32, 32); break;
    case ACL_INT64: case ACL_UINT64: b.u64 = opv_int_bits_of(v, dtype == ACL_INT64, 64); break;
    case ACL_FLOAT: b.f = opv_to_float(v); break;
    case ACL_FLOAT16: b.u16 = opc_float_to_half(opv_to_float(v)); break;
    case ACL_BF16: b.u16 = opc_float_to_bf16(opv_to_float(v)); break;
    case ACL_DOUBLE: b.d = opv_to_double(v); break;
    case ACL_COMPLEX64:
        b.c64[0] = opv_to_float(v);
        b.c64[1] = v.cat == OPV_COMPLEX ? (float)v.im : 0.0f;
        break;
    case ACL_COMPLEX128:
        b.c128[0] = opv_to_double(v);
        b.c128[1] = v.cat == OPV_COMPLEX ? v.im : 0.0;
        break;
    default: return; /* not computed: phase 1 refuses these */
    }
    memcpy(p, &b, aclsim_dtype_size(dtype));
}

/* v as a value of dtype (rounded, wrapped or saturated as a store would). */
static OPV_UNUSED opv_num opv_cast(opv_num v, int32_t dtype)
{
    unsigned char buf[16];
    opv_store(buf, dtype, v);
    return opv_load(buf, dtype);
}

/* Copy one element from (src, sdt) to (dst, ddt): the bits when the dtypes are
 * equal, else a cast. */
static OPV_UNUSED void opv_convert(unsigned char *dst, int32_t ddt, const unsigned char *src, int32_t sdt)
{
    if (ddt == sdt) memcpy(dst, src, aclsim_dtype_size(sdt));
    else opv_store(dst, ddt, opv_load(src, sdt));
}

/* ========================================================================== */
/* views                                                                      */
/* ========================================================================== */

/* Element offset of the linear-th element (row-major) of a view of rank <= 8. */
static OPV_UNUSED int64_t opv_offset(const aclsim_tensor_desc *t, int64_t linear)
{
    int64_t e = t->offset;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
        e += (linear % t->shape[d]) * t->strides[d];
        linear /= t->shape[d];
    }
    return e;
}

/* The op_api's CheckShapeAndScalarSame: equal shapes, or one element each. */
static OPV_UNUSED int opv_same_shape_or_scalar(const aclsim_tensor_desc *a, int64_t ndim, const int64_t *dims)
{
    if (opc_shape_is(a, ndim, dims)) return 1;
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; d++) n *= dims[d];
    return n == 1 && opc_numel(a) == 1;
}

/* 161002 "<name> must have at most 8 dimensions" (the op_api's OP_CHECK_MAX_DIM). */
static OPV_UNUSED int opv_check_max_dim(const char *api, const aclsim_tensor_desc *t, int status)
{
    if (t->ndim <= 8) return 0;
    return opc_fail(status, api, "%s has %" PRId64 " dimensions, more than the 8 supported", t->name, t->ndim);
}

/* ========================================================================== */
/* parameter names for list items                                             */
/* ========================================================================== */

/* "tensors[3]": a name for one list item's descriptor, kept for the life of the
 * process (executors and queued launches print it). Call with the lock held. */
static OPV_UNUSED const char *opv_item_name(const char *base, uint64_t i)
{
    static struct { const char *base; char **names; uint64_t n; } tables[8];
    for (int k = 0; k < 8; k++) {
        if (tables[k].base != NULL && strcmp(tables[k].base, base) != 0) continue;
        tables[k].base = base;
        if (i >= tables[k].n) {
            uint64_t n = i + 64;
            char **grown = realloc(tables[k].names, n * sizeof *grown);
            if (grown == NULL) return base;
            memset(grown + tables[k].n, 0, (n - tables[k].n) * sizeof *grown);
            tables[k].names = grown;
            tables[k].n = n;
        }
        if (tables[k].names[i] == NULL) {
            size_t len = strlen(base) + 24;
            char *s = malloc(len);
            if (s == NULL) return base;
            snprintf(s, len, "%s[%" PRIu64 "]", base, i);
            tables[k].names[i] = s;
        }
        return tables[k].names[i];
    }
    return base;
}

/* ========================================================================== */
/* list and scalar parameters                                                 */
/* ========================================================================== */

/* A tensor list parameter: its items (valid while the lock is held). */
typedef struct {
    const char *name;
    const aclTensor *const *items;
    uint64_t n;
} opv_tlist;

/* The list itself must be live (561103, as for any handle); NULL was checked before. */
static OPV_UNUSED int opv_resolve_tlist(const char *api, const char *name, const aclTensorList *list, opv_tlist *out)
{
    out->name = name;
    if (aclsim_tensor_list_items(list, &out->items, &out->n) == 0) return 0;
    return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "%s %p is not a live aclTensorList: it is %s", name,
                    (const void *)list, aclsim_handle_describe(list));
}

/* 161001 "<name>[i] is NULL" for the first NULL item. */
static OPV_UNUSED int opv_require_items(const char *api, const opv_tlist *l)
{
    for (uint64_t i = 0; i < l->n; i++)
        if (l->items[i] == NULL) return opc_fail(ACLNN_ERR_PARAM_NULLPTR, api, "%s[%" PRIu64 "] is NULL", l->name, i);
    return 0;
}

/* Describe every item into descs (n of them, and one spare slot for the
 * caller, malloc'ed; the caller frees):
 * 561103 for an item that is no longer live, 161002 if the list is longer than
 * an executor may hold. */
static OPV_UNUSED int opv_describe_items(const char *api, const opv_tlist *l, aclsim_tensor_desc **descs)
{
    *descs = NULL;
    if (l->n > ACLSIM_MAX_KERNEL_TENSORS / 2)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s holds %" PRIu64 " tensors, more than the simulator's "
                        "limit of %d", l->name, l->n, ACLSIM_MAX_KERNEL_TENSORS / 2);
    *descs = calloc(l->n + 1, sizeof **descs);
    if (*descs == NULL) return opc_fail(ACLNN_ERR_INNER, api, "out of host memory");
    for (uint64_t i = 0; i < l->n; i++) {
        const char *name = opv_item_name(l->name, i);
        if (aclsim_tensor_describe(l->items[i], name, &(*descs)[i]) != 0) {
            int rc = opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "%s (aclTensor %p) is not a live aclTensor: it is %s",
                              name, (const void *)l->items[i], aclsim_handle_describe(l->items[i]));
            free(*descs);
            *descs = NULL;
            return rc;
        }
    }
    return 0;
}

/* A live aclTensor parameter's description (561103 if it is not one). */
static OPV_UNUSED int opv_describe(const char *api, const char *name, const aclTensor *t, aclsim_tensor_desc *d)
{
    if (aclsim_tensor_describe(t, name, d) == 0) return 0;
    return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "%s %p is not a live aclTensor: it is %s", name, (const void *)t,
                    aclsim_handle_describe(t));
}

/* A live aclScalar's dtype and value (561103 if it is not one). */
static OPV_UNUSED int opv_scalar(const char *api, const char *name, const aclScalar *s, int32_t *dtype, opv_num *v)
{
    const unsigned char *bytes;
    if (aclsim_scalar_value(s, dtype, &bytes) != 0)
        return opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "%s %p is not a live aclScalar: it is %s", name, (const void *)s,
                        aclsim_handle_describe(s));
    *v = opv_load(bytes, *dtype);
    return 0;
}

#endif /* ACLSIM_OP_VALUES_H */
