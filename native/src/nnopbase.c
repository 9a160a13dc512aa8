/*
 * nnopbase.c - libnnopbase.so of the CANN CPU simulator.
 *
 * The aclnn "meta" objects (tensors, arrays, scalars) and executors. Every
 * object handed out is registered in libascendcl's handle registry, so
 * double destroys, stale handles and handles of the wrong type are caught.
 * Op libraries build executors and launch them through the aclsim_ API
 * declared in sim_internal.h.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 64 /* sanity limit on aclCreateTensor ranks */

typedef struct {
    uint64_t ndim;
    int64_t *dims;
    int64_t *strides;
    int64_t offset;
    int32_t dtype;
    /* CANN keeps three formats per tensor; aclCreateTensor sets all three to its
     * format argument, and an op_api may change the storage one in place
     * (aclnnTransMatmulWeight). aclGetFormat reports the view format. */
    int32_t format; /* view */
    int32_t storage_format;
    int32_t origin_format;
    uint64_t storage_ndim;
    uint64_t storage_cap; /* room for storage dims in the tensor's block */
    int64_t *storage_dims;
    void *data;
} sim_tensor;

typedef struct {
    uint64_t size;
    void *values; /* int64_t[], float[] or bool[] */
} sim_array;

typedef struct {
    int32_t dtype;
    unsigned char bytes[16];
} sim_scalar;

/* aclTensorList / aclScalarList: the element handles as the caller passed them
 * (NULL items included). The list owns its elements: destroying it destroys them. */
typedef struct {
    uint64_t size;
    const void **items;
} sim_list;

/* What a launch needs, shared by reference count between an executor and
 * every queued launch of it (a repeatable executor may be destroyed while
 * its launches are still pending). */
typedef struct {
    int refs;
    char op_name[96];
    uint64_t workspace_size;
    int ntensors, noutputs; /* inputs first, then the outputs */
    aclsim_kernel_fn fn;
    void *state;
    aclsim_state_free_fn free_state;
    char not_repeatable[256]; /* why aclSetAclOpExecutorRepeatable refuses it ("": it does not) */
    int64_t deterministic;    /* the level read at phase 1; -1: launches nothing */
    aclsim_tensor_desc tensors[]; /* ntensors of them; addresses updated by the setters */
} sim_kernel;

typedef struct {
    sim_kernel *kernel;
    int repeatable;
} sim_executor;

typedef struct {
    sim_kernel *kernel;
    aclsim_launch launch;
    /* The tensors as they were when phase 2 queued this launch: a later
     * aclSet*TensorAddr call on a repeatable executor must not move it. */
    aclsim_tensor_desc tensors[]; /* the kernel's ntensors */
} sim_launch_task;

static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Two simulator builds in one process do not share state: a path-loaded
 * libnnopbase.so binds (by soname) to whichever libascendcl.so came first. */
__attribute__((constructor)) static void sim_check_binding(void)
{
    static const char self_marker = 0;
    aclsim_warn_if_foreign(ACLSIM_BUILD_ID, aclsim_build_id(), &self_marker, (const void *)aclsim_lock,
                           "libascendcl.so");
}

ACLSIM_API const char *aclsim_nnopbase_build_id(void) { return ACLSIM_BUILD_ID; }
static int fail(int status, const char *fmt, ...)
{
    char buf[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    aclsim_set_error("%s", buf);
    return status;
}

/* ========================================================================== */
/* data types and formats                                                     */
/* ========================================================================== */

ACLSIM_API size_t aclsim_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return 4;
    case ACL_FLOAT16: return 2;
    case ACL_INT8: return 1;
    case ACL_INT32: return 4;
    case ACL_UINT8: return 1;
    case ACL_INT16: return 2;
    case ACL_UINT16: return 2;
    case ACL_UINT32: return 4;
    case ACL_INT64: return 8;
    case ACL_UINT64: return 8;
    case ACL_DOUBLE: return 8;
    case ACL_BOOL: return 1;
    case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    case ACL_BF16: return 2;
    case ACL_COMPLEX32: return 4;
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0: return 1;
    default: return 0; /* undefined, string and sub-byte types are not accepted */
    }
}

ACLSIM_API const char *aclsim_dtype_name(int32_t dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return "ACL_FLOAT";
    case ACL_FLOAT16: return "ACL_FLOAT16";
    case ACL_INT8: return "ACL_INT8";
    case ACL_INT32: return "ACL_INT32";
    case ACL_UINT8: return "ACL_UINT8";
    case ACL_INT16: return "ACL_INT16";
    case ACL_UINT16: return "ACL_UINT16";
    case ACL_UINT32: return "ACL_UINT32";
    case ACL_INT64: return "ACL_INT64";
    case ACL_UINT64: return "ACL_UINT64";
    case ACL_DOUBLE: return "ACL_DOUBLE";
    case ACL_BOOL: return "ACL_BOOL";
    case ACL_STRING: return "ACL_STRING";
    case ACL_COMPLEX64: return "ACL_COMPLEX64";
    case ACL_COMPLEX128: return "ACL_COMPLEX128";
    case ACL_BF16: return "ACL_BF16";
    case ACL_INT4: return "ACL_INT4";
    case ACL_UINT1: return "ACL_UINT1";
    case ACL_COMPLEX32: return "ACL_COMPLEX32";
    case ACL_HIFLOAT8: return "ACL_HIFLOAT8";
    case ACL_FLOAT8_E5M2: return "ACL_FLOAT8_E5M2";
    case ACL_FLOAT8_E4M3FN: return "ACL_FLOAT8_E4M3FN";
    case ACL_FLOAT8_E8M0: return "ACL_FLOAT8_E8M0";
    case ACL_DT_UNDEFINED: return "ACL_DT_UNDEFINED";
    default: return "not an aclDataType";
    }
}

static int format_known(int32_t f)
{
    switch (f) {
    case ACL_FORMAT_NCHW: case ACL_FORMAT_NHWC: case ACL_FORMAT_ND: case ACL_FORMAT_NC1HWC0:
    case ACL_FORMAT_FRACTAL_Z: case ACL_FORMAT_NC1HWC0_C04: case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NDHWC: case ACL_FORMAT_FRACTAL_NZ: case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NDC1HWC0: case ACL_FRACTAL_Z_3D: case ACL_FORMAT_NC: case ACL_FORMAT_NCL:
    case ACL_FORMAT_FRACTAL_NZ_C0_16: case ACL_FORMAT_FRACTAL_NZ_C0_32:
    case ACL_FORMAT_FRACTAL_NZ_C0_2: case ACL_FORMAT_FRACTAL_NZ_C0_4:
    case ACL_FORMAT_FRACTAL_NZ_C0_8:
        return 1;
    default:
        return 0; /* includes ACL_FORMAT_UNDEFINED */
    }
}

/* ========================================================================== */
/* tensors                                                                    */
/* ========================================================================== */

/* Elements spanned by a strided view, counted from tensorData:
 * offset + sum((dim-1)*stride) + 1, or 0 for an empty view. -1 on overflow. */
static int view_span(uint64_t ndim, const int64_t *dims, const int64_t *strides, int64_t offset,
                     uint64_t *elems)
{
    uint64_t e = (uint64_t)offset;
    for (uint64_t d = 0; d < ndim; d++) {
        if (dims[d] == 0) {
            *elems = 0;
            return 0;
        }
    }
    for (uint64_t d = 0; d < ndim; d++) {
        uint64_t step;
        if (__builtin_mul_overflow((uint64_t)(dims[d] - 1), (uint64_t)strides[d], &step) ||
            __builtin_add_overflow(e, step, &e))
            return -1;
    }
    if (__builtin_add_overflow(e, 1, &e)) return -1;
    *elems = e;
    return 0;
}

static void format_dims(char *buf, size_t len, const int64_t *v, uint64_t n)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, len, "[");
    for (uint64_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ", %" PRId64 : "%" PRId64, v[i]);
    if (used < len) snprintf(buf + used, len - used, "]");
}

ACLSIM_API aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                      aclDataType dataType, const int64_t *stride, int64_t offset,
                                      aclFormat format, const int64_t *storageDims,
                                      uint64_t storageDimsNum, void *tensorData)
{
    static const char *const api = "aclCreateTensor";
    ACLSIM_FAULT_POINT_PTR();
    if (viewDims == NULL && viewDimsNum > 0) {
        fail(0, "%s: viewDims is NULL but viewDimsNum is %" PRIu64, api, viewDimsNum);
        return NULL;
    }
    if (storageDims == NULL && storageDimsNum > 0) {
        fail(0, "%s: storageDims is NULL but storageDimsNum is %" PRIu64, api, storageDimsNum);
        return NULL;
    }
    if (viewDimsNum > MAX_RANK || storageDimsNum > MAX_RANK) {
        fail(0, "%s: rank %" PRIu64 " exceeds the simulator's limit of %d", api,
             viewDimsNum > MAX_RANK ? viewDimsNum : storageDimsNum, MAX_RANK);
        return NULL;
    }
    size_t itemsize = aclsim_dtype_size(dataType);
    if (itemsize == 0) {
        fail(0, "%s: dataType %d (%s) is not supported", api, (int)dataType, aclsim_dtype_name(dataType));
        return NULL;
    }
    if (!format_known(format)) {
        fail(0, "%s: format %d is not a known aclFormat", api, (int)format);
        return NULL;
    }
    for (uint64_t d = 0; d < viewDimsNum; d++) {
        if (viewDims[d] < 0) {
            fail(0, "%s: viewDims[%" PRIu64 "] = %" PRId64 " is negative", api, d, viewDims[d]);
            return NULL;
        }
        if (stride && stride[d] < 0) {
            fail(0, "%s: stride[%" PRIu64 "] = %" PRId64 " is negative", api, d, stride[d]);
            return NULL;
        }
    }
    for (uint64_t d = 0; d < storageDimsNum; d++) {
        if (storageDims[d] < 0) {
            fail(0, "%s: storageDims[%" PRIu64 "] = %" PRId64 " is negative", api, d, storageDims[d]);
            return NULL;
        }
    }
    if (offset < 0) {
        fail(0, "%s: offset %" PRId64 " is negative", api, offset);
        return NULL;
    }

    /* One block: header, view dims, strides, storage dims (with room for an op_api
     * that reshapes the storage to a private format: two more dims than the view). */
    size_t cap = storageDimsNum > viewDimsNum + 2 ? storageDimsNum : viewDimsNum + 2;
    size_t nwords = 2 * viewDimsNum + cap;
    sim_tensor *t = calloc(1, sizeof *t + nwords * sizeof(int64_t) + 1);
    if (t == NULL) {
        fail(0, "%s: out of host memory", api);
        return NULL;
    }
    t->ndim = viewDimsNum;
    t->dims = (int64_t *)(t + 1);
    t->strides = t->dims + viewDimsNum;
    t->storage_dims = t->strides + viewDimsNum;
    t->storage_ndim = storageDimsNum;
    t->storage_cap = cap;
    t->offset = offset;
    t->dtype = dataType;
    t->format = t->storage_format = t->origin_format = format;
    t->data = tensorData;
    if (viewDimsNum) memcpy(t->dims, viewDims, viewDimsNum * sizeof(int64_t));
    if (storageDimsNum) memcpy(t->storage_dims, storageDims, storageDimsNum * sizeof(int64_t));
    if (stride) {
        if (viewDimsNum) memcpy(t->strides, stride, viewDimsNum * sizeof(int64_t));
    } else { /* NULL stride means contiguous (row-major) */
        int64_t s = 1;
        for (uint64_t d = viewDimsNum; d-- > 0;) {
            t->strides[d] = s;
            s *= viewDims[d] > 0 ? viewDims[d] : 1;
        }
    }

    aclsim_lock();
    if (tensorData != NULL) {
        char why[512], shape[256], strides[256];
        aclsim_alloc_info info;
        uint64_t addr = (uint64_t)(uintptr_t)tensorData;
        if (!aclsim_dev_lookup(tensorData, &info)) {
            aclsim_dev_explain(tensorData, 0, why, sizeof why);
            fail(0, "%s: tensorData %p must point into a live device allocation: %s", api, tensorData, why);
            goto reject;
        }
        if (addr % 32 != 0) {
            fail(0, "%s: tensorData %p is not 32-byte aligned (device addresses from aclrtMalloc are; "
                 "express element offsets with the offset argument)", api, tensorData);
            goto reject;
        }
        uint64_t avail = info.base + info.size - addr;
        uint64_t view_elems, storage_elems = 1, bytes;
        format_dims(shape, sizeof shape, t->dims, t->ndim);
        format_dims(strides, sizeof strides, t->strides, t->ndim);
        if (view_span(t->ndim, t->dims, t->strides, offset, &view_elems) ||
            __builtin_mul_overflow(view_elems, (uint64_t)itemsize, &bytes)) {
            fail(0, "%s: view extent overflows (shape %s, strides %s, offset %" PRId64 ")", api, shape,
                 strides, offset);
            goto reject;
        }
        if (bytes > avail) {
            fail(0, "%s: the view (shape %s, strides %s, offset %" PRId64 ", %zu-byte elements) spans "
                 "%" PRIu64 " bytes from tensorData %p, but only %" PRIu64 " bytes remain in the "
                 "allocation at 0x%" PRIx64 " (%" PRIu64 " bytes): overrun by %" PRIu64 " bytes",
                 api, shape, strides, offset, itemsize, bytes, tensorData, avail, info.base, info.size,
                 bytes - avail);
            goto reject;
        }
        int overflow = 0;
        for (uint64_t d = 0; d < storageDimsNum; d++)
            overflow |= __builtin_mul_overflow(storage_elems, (uint64_t)storageDims[d], &storage_elems);
        overflow |= __builtin_mul_overflow(storage_elems, (uint64_t)itemsize, &bytes);
        format_dims(shape, sizeof shape, storageDims, storageDimsNum);
        if (overflow || bytes > avail) {
            fail(0, "%s: the storage (storageDims %s, %zu-byte elements) needs %" PRIu64 " bytes from "
                 "tensorData %p, but only %" PRIu64 " bytes remain in the allocation at 0x%" PRIx64
                 " (%" PRIu64 " bytes): overrun by %" PRIu64 " bytes", api, shape, itemsize,
                 overflow ? UINT64_MAX : bytes, tensorData, avail, info.base, info.size,
                 overflow ? UINT64_MAX : bytes - avail);
            goto reject;
        }
    }
    void *h = aclsim_handle_new(ACLSIM_KIND_TENSOR, t);
    if (h == NULL) {
        fail(0, "%s: out of handles", api);
        goto reject;
    }
    aclsim_unlock();
    return h;
reject:
    aclsim_unlock();
    free(t);
    return NULL;
}

static sim_tensor *tensor_get(const char *api, const aclTensor *tensor, int *status)
{
    if (tensor == NULL) {
        *status = fail(ACLNN_ERR_PARAM_NULLPTR, "%s: tensor is NULL", api);
        return NULL;
    }
    sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    if (t == NULL)
        *status = fail(ACLNN_ERR_INNER_NULLPTR, "%s: %p is not a live aclTensor: it is %s", api,
                       (const void *)tensor, aclsim_handle_describe(tensor));
    return t;
}

/* Shared by aclGetViewShape / StorageShape / ViewStrides: a freshly allocated
 * copy the caller frees (CANN allocates with new[]; here it is malloc). */
static aclnnStatus get_dims(const char *api, const aclTensor *tensor, int which, int64_t **out,
                            uint64_t *num)
{
    int status = 0;
    if (out == NULL || num == NULL)
        return fail(ACLNN_ERR_PARAM_NULLPTR, "%s: an output pointer is NULL", api);
    aclsim_lock();
    sim_tensor *t = tensor_get(api, tensor, &status);
    if (t == NULL) {
        aclsim_unlock();
        return status;
    }
    uint64_t n = which == 1 ? t->storage_ndim : t->ndim;
    const int64_t *src = which == 0 ? t->dims : which == 1 ? t->storage_dims : t->strides;
    int64_t *copy = malloc((n ? n : 1) * sizeof(int64_t));
    if (copy == NULL) {
        aclsim_unlock();
        return fail(ACLNN_ERR_INNER, "%s: out of host memory", api);
    }
    if (n) memcpy(copy, src, n * sizeof(int64_t));
    *out = copy;
    *num = n;
    aclsim_unlock();
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    ACLSIM_FAULT_POINT();
    return get_dims("aclGetViewShape", tensor, 0, viewDims, viewDimsNum);
}

ACLSIM_API aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                          uint64_t *storageDimsNum)
{
    ACLSIM_FAULT_POINT();
    return get_dims("aclGetStorageShape", tensor, 1, storageDims, storageDimsNum);
}

ACLSIM_API aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                         uint64_t *stridesNum)
{
    ACLSIM_FAULT_POINT();
    return get_dims("aclGetViewStrides", tensor, 2, stridesValue, stridesNum);
}

/* One scalar field of a tensor. */
static aclnnStatus get_field(const char *api, const aclTensor *tensor, void *out, int which)
{
    int status = 0;
    if (out == NULL) return fail(ACLNN_ERR_PARAM_NULLPTR, "%s: the output pointer is NULL", api);
    aclsim_lock();
    sim_tensor *t = tensor_get(api, tensor, &status);
    if (t) {
        if (which == 0) *(int64_t *)out = t->offset;
        else if (which == 1) *(aclFormat *)out = (aclFormat)t->format;
        else *(aclDataType *)out = (aclDataType)t->dtype;
    }
    aclsim_unlock();
    return t ? ACLNN_SUCCESS : status;
}

ACLSIM_API aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    ACLSIM_FAULT_POINT();
    return get_field("aclGetViewOffset", tensor, offset, 0);
}

ACLSIM_API aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    ACLSIM_FAULT_POINT();
    return get_field("aclGetFormat", tensor, format, 1);
}

ACLSIM_API aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    ACLSIM_FAULT_POINT();
    return get_field("aclGetDataType", tensor, dataType, 2);
}

ACLSIM_API int aclsim_tensor_describe(const aclTensor *tensor, const char *name, aclsim_tensor_desc *desc)
{
    sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    if (t == NULL) return -1;
    memset(desc, 0, sizeof *desc);
    desc->name = name;
    desc->dtype = t->dtype;
    desc->format = t->format;
    desc->storage_format = t->storage_format;
    desc->storage_ndim = (int64_t)t->storage_ndim;
    for (uint64_t d = 0; d < t->storage_ndim && d < ACLSIM_MAX_DIMS; d++) desc->storage_shape[d] = t->storage_dims[d];
    desc->ndim = (int64_t)t->ndim;
    for (uint64_t d = 0; d < t->ndim && d < ACLSIM_MAX_DIMS; d++) {
        desc->shape[d] = t->dims[d];
        desc->strides[d] = t->strides[d];
    }
    desc->offset = t->offset;
    desc->addr = (uint64_t)(uintptr_t)t->data;
    desc->handle = tensor;
    return 0;
}

ACLSIM_API int aclsim_tensor_contiguous_is_self(const aclTensor *tensor)
{
    const sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    if (t == NULL || t->storage_ndim != t->ndim) return 0;
    int64_t numel = 1, expect = 1;
    for (uint64_t d = 0; d < t->ndim; d++) {
        if (t->storage_dims[d] != t->dims[d]) return 0;
        numel *= t->dims[d];
    }
    if (numel <= 1) return 1;
    for (uint64_t d = t->ndim; d-- > 0;) {
        if (t->dims[d] == 1) continue;
        if (t->strides[d] != expect) return 0;
        expect *= t->dims[d];
    }
    return 1;
}

ACLSIM_API void aclsim_tensor_reformat(const aclTensor *tensor, int32_t format)
{
    sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    if (t) t->format = t->storage_format = t->origin_format = format; /* ReFormat sets all three */
}

ACLSIM_API int aclsim_tensor_set_storage(const aclTensor *tensor, int32_t format, const int64_t *dims,
                                         uint64_t ndim)
{
    sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    if (t == NULL || ndim > t->storage_cap) return -1;
    t->storage_format = format;
    t->storage_ndim = ndim;
    if (ndim) memcpy(t->storage_dims, dims, ndim * sizeof(int64_t));
    return 0;
}

ACLSIM_API void aclsim_tensor_set_view_shape(const aclTensor *tensor, const int64_t *dims, int64_t ndim)
{
    sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    /* destroyed before the run: nothing to report on; a view never grows its rank (the
     * dims live in the tensor's own block) */
    if (t == NULL || ndim < 0 || (uint64_t)ndim > t->ndim) return;
    for (int64_t i = ndim - 1, step = 1; i >= 0; i--) { /* contiguous, from the start of the storage */
        t->dims[i] = dims[i];
        t->strides[i] = step;
        step *= dims[i] > 0 ? dims[i] : 1;
    }
    t->ndim = (uint64_t)ndim;
    t->offset = 0;
}

ACLSIM_API const char *aclsim_format_name(int32_t f)
{
    switch (f) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
    case ACL_FORMAT_HWCN: return "HWCN";
    case ACL_FORMAT_NDHWC: return "NDHWC";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_NDC1HWC0: return "NDC1HWC0";
    case ACL_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case ACL_FORMAT_NC: return "NC";
    case ACL_FORMAT_NCL: return "NCL";
    case ACL_FORMAT_FRACTAL_NZ_C0_16: return "FRACTAL_NZ_C0_16";
    case ACL_FORMAT_FRACTAL_NZ_C0_32: return "FRACTAL_NZ_C0_32";
    case ACL_FORMAT_FRACTAL_NZ_C0_2: return "FRACTAL_NZ_C0_2";
    case ACL_FORMAT_FRACTAL_NZ_C0_4: return "FRACTAL_NZ_C0_4";
    case ACL_FORMAT_FRACTAL_NZ_C0_8: return "FRACTAL_NZ_C0_8";
    case ACL_FORMAT_UNDEFINED: return "UNDEFINED";
    default: return "not an aclFormat";
    }
}

/* ========================================================================== */
/* arrays and scalars                                                         */
/* ========================================================================== */

static void *array_create(const char *api, int kind, const void *value, uint64_t size, size_t elem)
{
    if (value == NULL && size > 0) {
        fail(0, "%s: value is NULL but size is %" PRIu64, api, size);
        return NULL;
    }
    if (size > (UINT64_MAX / 2) / elem) {
        fail(0, "%s: size %" PRIu64 " is absurd", api, size);
        return NULL;
    }
    sim_array *a = calloc(1, sizeof *a + (size_t)size * elem + 1);
    if (a == NULL) {
        fail(0, "%s: out of host memory", api);
        return NULL;
    }
    a->size = size;
    a->values = a + 1;
    if (size) memcpy(a->values, value, (size_t)size * elem); /* the caller's buffer is not kept */
    void *h = aclsim_handle_new(kind, a);
    if (h == NULL) {
        free(a);
        fail(0, "%s: out of handles", api);
    }
    return h;
}

ACLSIM_API aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    ACLSIM_FAULT_POINT_PTR();
    return array_create("aclCreateIntArray", ACLSIM_KIND_INT_ARRAY, value, size, sizeof(int64_t));
}

ACLSIM_API aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)
{
    ACLSIM_FAULT_POINT_PTR();
    return array_create("aclCreateFloatArray", ACLSIM_KIND_FLOAT_ARRAY, value, size, sizeof(float));
}

ACLSIM_API aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)
{
    ACLSIM_FAULT_POINT_PTR();
    return array_create("aclCreateBoolArray", ACLSIM_KIND_BOOL_ARRAY, value, size, sizeof(bool));
}

ACLSIM_API aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    ACLSIM_FAULT_POINT_PTR();
    size_t n = aclsim_dtype_size(dataType);
    if (value == NULL) {
        fail(0, "aclCreateScalar: value is NULL");
        return NULL;
    }
    /* nnopbase's aclScalar takes every element type aclCreateTensor does but the
     * 4-bit ones and ACL_COMPLEX32 */
    if (n == 0 || dataType == ACL_COMPLEX32) {
        fail(0, "aclCreateScalar: dataType %d (%s) is not supported", (int)dataType, aclsim_dtype_name(dataType));
        return NULL;
    }
    sim_scalar *s = calloc(1, sizeof *s);
    if (s == NULL) {
        fail(0, "aclCreateScalar: out of host memory");
        return NULL;
    }
    s->dtype = dataType;
    memcpy(s->bytes, value, n);
    void *h = aclsim_handle_new(ACLSIM_KIND_SCALAR, s);
    if (h == NULL) {
        free(s);
        fail(0, "aclCreateScalar: out of handles");
    }
    return h;
}

ACLSIM_API aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size)
{
    ACLSIM_FAULT_POINT();
    if (array == NULL || size == NULL)
        return fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetIntArraySize: %s is NULL", array ? "size" : "array");
    aclsim_lock();
    sim_array *a = aclsim_handle_get(array, ACLSIM_KIND_INT_ARRAY);
    if (a) *size = a->size;
    else
        fail(ACLNN_ERR_INNER_NULLPTR, "aclGetIntArraySize: %p is not a live aclIntArray: it is %s",
             (const void *)array, aclsim_handle_describe(array));
    aclsim_unlock();
    return a ? ACLNN_SUCCESS : ACLNN_ERR_INNER_NULLPTR;
}

ACLSIM_API int aclsim_int_array_values(const aclIntArray *array, const int64_t **values, uint64_t *size)
{
    sim_array *a = aclsim_handle_get(array, ACLSIM_KIND_INT_ARRAY);
    if (a == NULL) return -1;
    *values = a->values;
    *size = a->size;
    return 0;
}

/* Destroy of any plain object: NULL is fine, a handle that is not live (or of
 * another type) is an error rather than a double free. */
static aclnnStatus destroy_plain(const char *api, const char *type, const void *handle, int kind)
{
    if (handle == NULL) return ACLNN_SUCCESS;
    aclsim_lock();
    void *obj = aclsim_handle_take(handle, kind);
    if (obj == NULL)
        fail(ACLNN_ERR_INNER, "%s: %p is not a live %s: it is %s", api, handle, type,
             aclsim_handle_describe(handle));
    free(obj);
    aclsim_unlock();
    return obj ? ACLNN_SUCCESS : ACLNN_ERR_INNER;
}

/* The exported aclDestroyXxx(const aclXxx *) of each plain object kind. */
#define DEFINE_DESTROY(NAME, TYPE, KIND)                                      \
    ACLSIM_API aclnnStatus NAME(const TYPE *handle)                           \
    {                                                                         \
        ACLSIM_FAULT_POINT();                                                 \
        return destroy_plain(#NAME, #TYPE, handle, KIND);                     \
    }
DEFINE_DESTROY(aclDestroyTensor, aclTensor, ACLSIM_KIND_TENSOR)
DEFINE_DESTROY(aclDestroyScalar, aclScalar, ACLSIM_KIND_SCALAR)
DEFINE_DESTROY(aclDestroyIntArray, aclIntArray, ACLSIM_KIND_INT_ARRAY)
DEFINE_DESTROY(aclDestroyFloatArray, aclFloatArray, ACLSIM_KIND_FLOAT_ARRAY)
DEFINE_DESTROY(aclDestroyBoolArray, aclBoolArray, ACLSIM_KIND_BOOL_ARRAY)

ACLSIM_API int aclsim_scalar_value(const aclScalar *scalar, int32_t *dtype, const unsigned char **bytes)
{
    sim_scalar *s = aclsim_handle_get(scalar, ACLSIM_KIND_SCALAR);
    if (s == NULL) return -1;
    *dtype = s->dtype;
    *bytes = s->bytes;
    return 0;
}

static int array_values(const void *array, int kind, const void **values, uint64_t *size)
{
    sim_array *a = aclsim_handle_get(array, kind);
    if (a == NULL) return -1;
    *values = a->values;
    *size = a->size;
    return 0;
}

ACLSIM_API int aclsim_float_array_values(const aclFloatArray *array, const float **values, uint64_t *size)
{
    const void *v;
    if (array_values(array, ACLSIM_KIND_FLOAT_ARRAY, &v, size)) return -1;
    *values = v;
    return 0;
}

ACLSIM_API int aclsim_bool_array_values(const aclBoolArray *array, const bool **values, uint64_t *size)
{
    const void *v;
    if (array_values(array, ACLSIM_KIND_BOOL_ARRAY, &v, size)) return -1;
    *values = v;
    return 0;
}

/* ========================================================================== */
/* tensor and scalar lists                                                    */
/* ========================================================================== */

/* What a list kind holds: its element kind and the type names for messages. */
typedef struct {
    int kind, elem_kind;
    const char *type, *elem_type;
} list_kind;
static const list_kind k_tensor_list = {ACLSIM_KIND_TENSOR_LIST, ACLSIM_KIND_TENSOR, "aclTensorList", "aclTensor"};
static const list_kind k_scalar_list = {ACLSIM_KIND_SCALAR_LIST, ACLSIM_KIND_SCALAR, "aclScalarList", "aclScalar"};

/* aclCreateTensorList / aclCreateScalarList. nnopbase copies the element
 * pointers (not the elements) and checks nothing; NULL value with size 0 is
 * an empty list. Stricter than CANN, which makes an empty list of a NULL value
 * whatever the size and keeps any pointer: value NULL with size > 0, an item
 * that is not a live handle of the element type, and an item listed twice
 * (destroying the list would destroy it twice) are refused with a message.
 * NULL items are kept (operators refuse them). */
static void *list_create(const char *api, const list_kind *lk, const void *const *value, uint64_t size)
{
    if (value == NULL && size > 0) {
        fail(0, "%s: value is NULL but size is %" PRIu64, api, size);
        return NULL;
    }
    if (size > (UINT64_MAX / 4) / sizeof(void *)) {
        fail(0, "%s: size %" PRIu64 " is absurd", api, size);
        return NULL;
    }
    aclsim_lock();
    for (uint64_t i = 0; i < size; i++) {
        if (value[i] == NULL) continue;
        if (aclsim_handle_get(value[i], lk->elem_kind) == NULL) {
            fail(0, "%s: value[%" PRIu64 "] %p is not a live %s: it is %s", api, i, value[i], lk->elem_type,
                 aclsim_handle_describe(value[i]));
            aclsim_unlock();
            return NULL;
        }
        for (uint64_t j = 0; j < i; j++)
            if (value[j] == value[i]) {
                fail(0, "%s: value[%" PRIu64 "] and value[%" PRIu64 "] are the same %s %p: destroying the list "
                     "destroys each element, so it would be destroyed twice", api, j, i, lk->elem_type, value[i]);
                aclsim_unlock();
                return NULL;
            }
    }
    sim_list *l = calloc(1, sizeof *l + (size_t)size * sizeof(void *) + 1);
    void *h = NULL;
    if (l == NULL) {
        fail(0, "%s: out of host memory", api);
    } else {
        l->size = size;
        l->items = (const void **)(l + 1);
        if (size) memcpy(l->items, value, (size_t)size * sizeof(void *));
        if ((h = aclsim_handle_new(lk->kind, l)) == NULL) {
            free(l);
            fail(0, "%s: out of handles", api);
        }
    }
    aclsim_unlock();
    return h;
}

ACLSIM_API aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    ACLSIM_FAULT_POINT_PTR();
    return list_create("aclCreateTensorList", &k_tensor_list, (const void *const *)value, size);
}

ACLSIM_API aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)
{
    ACLSIM_FAULT_POINT_PTR();
    return list_create("aclCreateScalarList", &k_scalar_list, (const void *const *)value, size);
}

/* aclDestroyTensorList / aclDestroyScalarList: NULL is fine; otherwise every
 * non-NULL element is destroyed, then the list. A list that is not live gives
 * 561000. So does an element that is no longer live (the caller destroyed it
 * itself, or it was also in a list destroyed before): CANN would free it a
 * second time. The list and its live elements are destroyed all the same. */
static aclnnStatus list_destroy(const char *api, const list_kind *lk, const void *handle)
{
    if (handle == NULL) return ACLNN_SUCCESS;
    aclnnStatus rc = ACLNN_SUCCESS;
    aclsim_lock();
    sim_list *l = aclsim_handle_take(handle, lk->kind);
    if (l == NULL) {
        rc = fail(ACLNN_ERR_INNER, "%s: %p is not a live %s: it is %s", api, handle, lk->type,
                  aclsim_handle_describe(handle));
        aclsim_unlock();
        return rc;
    }
    for (uint64_t i = 0; i < l->size; i++) {
        if (l->items[i] == NULL) continue;
        void *obj = aclsim_handle_take(l->items[i], lk->elem_kind);
        if (obj != NULL) {
            free(obj); /* tensors, scalars: one block each */
        } else if (rc == ACLNN_SUCCESS) {
            rc = fail(ACLNN_ERR_INNER, "%s: element %" PRIu64 " (%s %p) is not live: it is %s. The list destroys "
                      "its elements itself; destroying one before (or through another list) frees it twice",
                      api, i, lk->elem_type, l->items[i], aclsim_handle_describe(l->items[i]));
        }
    }
    free(l);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    ACLSIM_FAULT_POINT();
    return list_destroy("aclDestroyTensorList", &k_tensor_list, array);
}

ACLSIM_API aclnnStatus aclDestroyScalarList(const aclScalarList *array)
{
    ACLSIM_FAULT_POINT();
    return list_destroy("aclDestroyScalarList", &k_scalar_list, array);
}

/* aclGetTensorListSize / aclGetScalarListSize: NULL list or size 161001, as in
 * CANN; a list that is not live 561103, as the other getters here. */
static aclnnStatus list_size(const char *api, const list_kind *lk, const char *param, const void *handle,
                             uint64_t *size)
{
    if (handle == NULL || size == NULL)
        return fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, handle ? "size" : param);
    aclsim_lock();
    sim_list *l = aclsim_handle_get(handle, lk->kind);
    if (l) *size = l->size;
    else
        fail(ACLNN_ERR_INNER_NULLPTR, "%s: %p is not a live %s: it is %s", api, handle, lk->type,
             aclsim_handle_describe(handle));
    aclsim_unlock();
    return l ? ACLNN_SUCCESS : ACLNN_ERR_INNER_NULLPTR;
}

ACLSIM_API aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size)
{
    ACLSIM_FAULT_POINT();
    return list_size("aclGetTensorListSize", &k_tensor_list, "tensorList", tensorList, size);
}

ACLSIM_API aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size)
{
    ACLSIM_FAULT_POINT();
    return list_size("aclGetScalarListSize", &k_scalar_list, "scalarList", scalarList, size);
}

static int list_items(const void *list, int kind, const void *const **items, uint64_t *size)
{
    sim_list *l = aclsim_handle_get(list, kind);
    if (l == NULL) return -1;
    *items = l->items;
    *size = l->size;
    return 0;
}

ACLSIM_API int aclsim_tensor_list_items(const aclTensorList *list, const aclTensor *const **items, uint64_t *size)
{
    const void *const *v;
    if (list_items(list, ACLSIM_KIND_TENSOR_LIST, &v, size)) return -1;
    *items = (const aclTensor *const *)v;
    return 0;
}

ACLSIM_API int aclsim_scalar_list_items(const aclScalarList *list, const aclScalar *const **items, uint64_t *size)
{
    const void *const *v;
    if (list_items(list, ACLSIM_KIND_SCALAR_LIST, &v, size)) return -1;
    *items = (const aclScalar *const *)v;
    return 0;
}

/* ========================================================================== */
/* executors                                                                  */
/* ========================================================================== */

static void kernel_unref(sim_kernel *k)
{
    if (--k->refs == 0) {
        if (k->free_state) k->free_state(k->state);
        free(k);
    }
}

ACLSIM_API aclOpExecutor *aclsim_executor_create(const char *op_name, uint64_t workspace_size,
                                                 const aclsim_tensor_desc *tensors, int ntensors,
                                                 int noutputs, aclsim_kernel_fn kernel, void *state,
                                                 aclsim_state_free_fn free_state)
{
    return aclsim_executor_create_ex(op_name, workspace_size, tensors, ntensors, noutputs, kernel, state,
                                     free_state, NULL);
}

ACLSIM_API aclOpExecutor *aclsim_executor_create_ex(const char *op_name, uint64_t workspace_size,
                                                    const aclsim_tensor_desc *tensors, int ntensors,
                                                    int noutputs, aclsim_kernel_fn kernel, void *state,
                                                    aclsim_state_free_fn free_state,
                                                    const aclsim_executor_traits *traits)
{
    sim_kernel *k = NULL;
    sim_executor *e = NULL;
    void *h = NULL;
    if (ntensors < 0 || ntensors > ACLSIM_MAX_KERNEL_TENSORS || noutputs < 0 || noutputs > ntensors) {
        fail(0, "%s: internal error: %d tensors (%d outputs) in an executor", op_name, ntensors, noutputs);
        goto failed;
    }
    k = calloc(1, sizeof *k + (size_t)ntensors * sizeof *tensors);
    e = calloc(1, sizeof *e);
    if (k == NULL || e == NULL) {
        fail(0, "%s: out of host memory creating the executor", op_name);
        goto failed;
    }
    k->refs = 1;
    snprintf(k->op_name, sizeof k->op_name, "%s", op_name);
    k->workspace_size = workspace_size;
    k->ntensors = ntensors;
    k->noutputs = noutputs;
    if (ntensors) memcpy(k->tensors, tensors, (size_t)ntensors * sizeof *tensors);
    k->fn = kernel;
    k->state = state;
    k->free_state = free_state;
    if (traits && traits->not_repeatable)
        snprintf(k->not_repeatable, sizeof k->not_repeatable, "%s", traits->not_repeatable);
    /* What the executor's kernel runs with is settled here, at phase 1, as in real
     * nnopbase; every launch of it (a repeatable one's too) keeps it. */
    k->deterministic = traits && traits->no_kernel
                           ? -1 : aclsim_deterministic_for_phase1(op_name, traits ? traits->generated : 0);
    e->kernel = k;
    h = aclsim_handle_new(ACLSIM_KIND_EXECUTOR, e);
    if (h == NULL) {
        fail(0, "%s: out of handles creating the executor", op_name);
        k->free_state = NULL; /* freed below, once */
        goto failed;
    }
    return h;
failed:
    free(k);
    free(e);
    if (free_state) free_state(state);
    return NULL;
}

static const char *const k_not_live =
    "a non-repeatable executor is freed by its phase-2 call and must not be run twice or destroyed";

/* Launches still queued keep their own reference to the kernel. */
static void executor_free(sim_executor *e)
{
    kernel_unref(e->kernel);
    free(e);
}

static aclnnStatus executor_destroy(const char *api, sim_executor *e)
{
    (void)api;
    executor_free(e);
    return ACLNN_SUCCESS;
}

/* Refused, as real opbase refuses it, when the operator declared at phase 1 that
 * its launches cannot follow the address setters; the executor stays as it was
 * (non-repeatable: its phase 2 consumes it). */
static aclnnStatus executor_make_repeatable(const char *api, sim_executor *e)
{
    if (e->kernel->not_repeatable[0])
        return fail(ACLNN_ERR_INNER, "%s: %s's executor cannot be made repeatable: %s", api,
                    e->kernel->op_name, e->kernel->not_repeatable);
    e->repeatable = 1;
    return ACLNN_SUCCESS;
}

/* Under the lock: find the live executor behind a handle (take: unregister it)
 * and apply `action` to it, returning its status. 561103 for NULL, 561000 for a
 * handle that is not a live executor, each with its message. */
static aclnnStatus with_executor(const char *api, aclOpExecutor *executor, int take,
                                 aclnnStatus (*action)(const char *, sim_executor *))
{
    if (executor == NULL) return fail(ACLNN_ERR_INNER_NULLPTR, "%s: executor is NULL", api);
    aclsim_lock();
    sim_executor *e = take ? aclsim_handle_take(executor, ACLSIM_KIND_EXECUTOR)
                           : aclsim_handle_get(executor, ACLSIM_KIND_EXECUTOR);
    aclnnStatus rc = ACLNN_ERR_INNER;
    if (e) rc = action(api, e);
    else
        fail(ACLNN_ERR_INNER, "%s: executor %p is not live (it is %s); %s", api, (void *)executor,
             aclsim_handle_describe(executor), k_not_live);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    ACLSIM_FAULT_POINT();
    return with_executor(__func__, executor, 0, executor_make_repeatable);
}

ACLSIM_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    ACLSIM_FAULT_POINT();
    return with_executor(__func__, executor, 1, executor_destroy);
}

ACLSIM_API void aclsim_executor_fault_consume(aclOpExecutor *executor)
{
    aclsim_lock();
    sim_executor *e = aclsim_handle_get(executor, ACLSIM_KIND_EXECUTOR);
    if (e && !e->repeatable) executor_free(aclsim_handle_take(executor, ACLSIM_KIND_EXECUTOR));
    aclsim_unlock();
}

enum { SET_INPUT, SET_OUTPUT, SET_ANY };

/* aclSetInputTensorAddr / aclSetOutputTensorAddr / aclSetTensorAddr. For the
 * op_api operators the real setter stores addr in the aclTensor, which the
 * executor reads at its next launch; `index` counts the op's input tensors,
 * its output tensors, or all of them (inputs first). Stricter than CANN, which
 * ignores `index` for these operators: the tensor must be the one the
 * executor was built with at that index, and the executor repeatable. */
static aclnnStatus set_tensor_addr(const char *api, int which, aclOpExecutor *executor, size_t index,
                                   aclTensor *tensor, void *addr)
{
    if (executor == NULL) return fail(ACLNN_ERR_INNER_NULLPTR, "%s: executor is NULL", api);
    if (tensor == NULL) return fail(ACLNN_ERR_INNER_NULLPTR, "%s: tensor is NULL", api);
    aclnnStatus rc = ACLNN_SUCCESS;
    aclsim_lock();
    sim_executor *e = aclsim_handle_get(executor, ACLSIM_KIND_EXECUTOR);
    sim_tensor *t = aclsim_handle_get(tensor, ACLSIM_KIND_TENSOR);
    if (e == NULL) {
        rc = fail(ACLNN_ERR_INNER_NULLPTR, "%s: executor %p is not live (it is %s)", api, (void *)executor,
                  aclsim_handle_describe(executor));
        goto done;
    }
    if (t == NULL) {
        rc = fail(ACLNN_ERR_INNER_NULLPTR, "%s: tensor %p is not a live aclTensor (it is %s)", api,
                  (void *)tensor, aclsim_handle_describe(tensor));
        goto done;
    }
    if (!e->repeatable) {
        rc = fail(ACLNN_ERR_PARAM_INVALID, "%s: executor %p is not repeatable: call "
                  "aclSetAclOpExecutorRepeatable right after the first phase", api, (void *)executor);
        goto done;
    }
    sim_kernel *k = e->kernel;
    const int ninputs = k->ntensors - k->noutputs;
    const int first = which == SET_OUTPUT ? ninputs : 0;
    const int count = which == SET_INPUT ? ninputs : which == SET_OUTPUT ? k->noutputs : k->ntensors;
    const char *kind = which == SET_INPUT ? "input" : which == SET_OUTPUT ? "output" : "";
    if (index >= (size_t)count) {
        rc = fail(ACLNN_ERR_PARAM_INVALID, "%s: index %zu is out of range: %s has %d %s%stensors", api, index,
                  k->op_name, count, kind, *kind ? " " : "");
        goto done;
    }
    aclsim_tensor_desc *d = &k->tensors[first + (int)index];
    if (d->handle != tensor) {
        rc = fail(ACLNN_ERR_PARAM_INVALID, "%s: tensor %p is not the aclTensor the executor was built with "
                  "at %s%sindex %zu ('%s', aclTensor %p)", api, (void *)tensor, kind, *kind ? " " : "", index,
                  d->name, d->handle);
        goto done;
    }
    if ((uintptr_t)addr % 32u) {
        rc = fail(ACLNN_ERR_PARAM_INVALID, "%s: addr %p is not 32-byte aligned", api, addr);
        goto done;
    }
    t->data = addr;
    d->addr = (uint64_t)(uintptr_t)addr;
done:
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                             void *addr)
{
    ACLSIM_FAULT_POINT();
    return set_tensor_addr("aclSetInputTensorAddr", SET_INPUT, executor, index, tensor, addr);
}

ACLSIM_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                              void *addr)
{
    ACLSIM_FAULT_POINT();
    return set_tensor_addr("aclSetOutputTensorAddr", SET_OUTPUT, executor, index, tensor, addr);
}

ACLSIM_API aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                        void *addr)
{
    ACLSIM_FAULT_POINT();
    return set_tensor_addr("aclSetTensorAddr", SET_ANY, executor, index, tensor, addr);
}

static int launch_run(void *ctx)
{
    sim_launch_task *t = ctx;
    const sim_kernel *k = t->kernel;
    return k->fn(k->state, t->tensors, k->ntensors, &t->launch);
}

static void launch_release(void *ctx)
{
    sim_launch_task *t = ctx;
    kernel_unref(t->kernel);
    free(t);
}

/* Checks of phase 2 once the executor is known; 0 or a status with message. */
static aclnnStatus launch_check(const char *api, const sim_kernel *k, void *workspace,
                                uint64_t workspace_size, aclrtStream stream, int32_t *device)
{
    char why[512];
    aclsim_alloc_info info;
    if (workspace_size < k->workspace_size)
        return fail(ACLNN_ERR_PARAM_INVALID,
                    "%s: workspaceSize %" PRIu64 " is smaller than the %" PRIu64
                    " bytes the GetWorkspaceSize call reported", api, workspace_size, k->workspace_size);
    if (workspace == NULL && workspace_size > 0)
        return fail(ACLNN_ERR_PARAM_NULLPTR, "%s: workspace is NULL but workspaceSize is %" PRIu64, api,
                    workspace_size);
    if (workspace_size > 0 && aclsim_dev_map(workspace, workspace_size) == NULL) {
        aclsim_dev_explain(workspace, workspace_size, why, sizeof why);
        return fail(ACLNN_ERR_PARAM_INVALID,
                    "%s: workspace [%p, +%" PRIu64 ") is not inside one live device allocation: %s", api,
                    workspace, workspace_size, why);
    }
    int rc = aclsim_stream_device(stream, device);
    if (rc != 0) {
        if (stream == NULL)
            return fail(ACLNN_ERR_RUNTIME_ERROR,
                        "%s: stream is NULL (default stream) but %s", api,
                        rc == ACL_ERROR_UNINITIALIZE ? "AscendCL is not initialized"
                                                     : "the calling thread has no current device");
        return fail(ACLNN_ERR_RUNTIME_ERROR, "%s: stream %p is not a live stream: it is %s", api, stream,
                    aclsim_handle_describe(stream));
    }
    if (workspace_size > 0 && aclsim_dev_lookup(workspace, &info) && info.device != *device)
        return fail(ACLNN_ERR_RUNTIME_ERROR, "%s: workspace %p is on device %d but the stream runs on device %d",
                    api, workspace, (int)info.device, (int)*device);
    for (int i = 0; i < k->ntensors; i++) {
        const aclsim_tensor_desc *t = &k->tensors[i];
        /* The executor refers to the caller's aclTensor objects until phase 2 has been
         * issued (and, when repeatable, for as long as it is run): they must be live. */
        if (t->handle && aclsim_handle_get(t->handle, ACLSIM_KIND_TENSOR) == NULL)
            return fail(ACLNN_ERR_INNER_NULLPTR,
                        "%s: tensor '%s' (aclTensor %p) was destroyed before this launch; the executor "
                        "still refers to it (destroy tensors only after the last phase 2)", api, t->name,
                        t->handle);
        if (aclsim_dev_lookup((void *)(uintptr_t)t->addr, &info) && info.device != *device)
            return fail(ACLNN_ERR_RUNTIME_ERROR,
                        "%s: tensor '%s' (data 0x%" PRIx64 ") is on device %d but the stream runs on device %d",
                        api, t->name, t->addr, (int)info.device, (int)*device);
    }
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclsim_executor_launch(const char *api, void *workspace, uint64_t workspace_size,
                                              aclOpExecutor *executor, aclrtStream stream)
{
    if (executor == NULL) return fail(ACLNN_ERR_INNER_NULLPTR, "%s: executor is NULL", api);
    aclsim_lock();
    sim_executor *e = aclsim_handle_get(executor, ACLSIM_KIND_EXECUTOR);
    if (e == NULL) {
        fail(ACLNN_ERR_INNER_NULLPTR, "%s: executor %p is not live (it is %s): %s", api, (void *)executor,
             aclsim_handle_describe(executor), k_not_live);
        aclsim_unlock();
        return ACLNN_ERR_INNER_NULLPTR;
    }
    sim_kernel *k = e->kernel;
    if (e->repeatable) {
        k->refs++; /* the executor keeps its own reference */
    } else {
        /* Consumed by this call whatever happens next; its reference now
         * belongs to the launch. */
        aclsim_handle_take(executor, ACLSIM_KIND_EXECUTOR);
        free(e);
    }
    int32_t device = -1;
    aclnnStatus rc = launch_check(api, k, workspace, workspace_size, stream, &device);
    sim_launch_task *t = NULL;
    if (rc == 0 && (t = malloc(sizeof *t + (size_t)k->ntensors * sizeof *k->tensors)) == NULL)
        rc = fail(ACLNN_ERR_INNER, "%s: out of host memory", api);
    if (t == NULL) {
        kernel_unref(k);
        aclsim_unlock();
        return rc;
    }
    t->kernel = k;
    t->launch = (aclsim_launch){k->op_name, (uint64_t)(uintptr_t)workspace, workspace_size, device};
    memcpy(t->tensors, k->tensors, (size_t)k->ntensors * sizeof *k->tensors);
    const int64_t deterministic = k->deterministic; /* t and k may be gone once queued */
    char op_name[sizeof k->op_name];
    memcpy(op_name, k->op_name, sizeof op_name);
    /* The cost model's bytes: every tensor the kernel reads or writes, once. */
    uint64_t bytes = 0;
    for (int i = 0; i < k->ntensors; i++) {
        uint64_t n = aclsim_dtype_size(k->tensors[i].dtype);
        for (int64_t d = 0; d < k->tensors[i].ndim && d < ACLSIM_MAX_DIMS; d++)
            n *= (uint64_t)(k->tensors[i].shape[d] > 0 ? k->tensors[i].shape[d] : 0);
        bytes += n;
    }
    if (aclsim_stream_enqueue_bytes(stream, k->op_name, launch_run, launch_release, t, bytes) != 0)
        rc = fail(ACLNN_ERR_RUNTIME_ERROR, "%s: could not queue the kernel on stream %p", api, stream);
    else if (deterministic >= 0)
        aclsim_record_launch(op_name, deterministic);
    aclsim_unlock();
    return rc;
}

/* ========================================================================== */
/* aclnnInit / aclnnFinalize                                                  */
/* ========================================================================== */

ACLSIM_API aclnnStatus aclnnInit(const char *configPath)
{
    ACLSIM_FAULT_POINT();
    (void)configPath; /* no operator packages or debug config to load */
    return ACLNN_SUCCESS;
}

ACLSIM_API aclnnStatus aclnnFinalize(void)
{
    ACLSIM_FAULT_POINT();
    return ACLNN_SUCCESS;
}
