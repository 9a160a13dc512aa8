/*
 * sim_internal.h - private interface between the simulator's libraries.
 *
 * libascendcl.so owns the process-wide state: the lock, the thread-local
 * error message, fault injection, the handle registry (live tables of every
 * object handed to the caller), simulated device memory and streams.
 * libnnopbase.so owns tensors/arrays/scalars/executors and offers op
 * libraries a small API to build executors and launch them.
 *
 * All names here start with "aclsim_" and are exported (they must cross
 * library boundaries) but are not part of CANN's ABI.
 */
#ifndef ACLSIM_SIM_INTERNAL_H
#define ACLSIM_SIM_INTERNAL_H

#include "acl_abi.h"

#include <stdint.h>

/* Test extras exported from libascendcl.so (see native/README.md). */
ACLSIM_API int64_t aclsimLiveCount(const char *kind);
ACLSIM_API int aclsimLaunchDeterministic(const char *aclnn_name);
ACLSIM_API int64_t aclsimDeviceStep(int32_t device, int64_t tasks);

/* ======================= provided by libascendcl.so ======================= */

/* The CANN release this build simulates (native/build.py --cann-version, compiled
 * into libascendcl.so, which every other simulator library links): "8.1.RC1",
 * "9.2.0", ... Operators branch on it with aclsim_profile_at_least. */
ACLSIM_API const char *aclsim_profile_version(void);
/* 1 if the simulated release is `version` or a later one, else 0. Versions are
 * CANN's release names: "X.Y.Z", or "X.Y.RCn" (a release candidate, older than
 * "X.Y.0"). A malformed version is a bug in the caller: it aborts with a message. */
ACLSIM_API int aclsim_profile_at_least(const char *version);

/* One process-wide recursive mutex guards every table in every library.
 * Recursive because kernels run under it during a stream sync and call back
 * into the memory API. */
ACLSIM_API void aclsim_lock(void);
ACLSIM_API void aclsim_unlock(void);

/* Replace the calling thread's recent error message (aclGetRecentErrMsg). */
ACLSIM_API void aclsim_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fault injection (ASCEND_SIM_FAULT). Counts one call of `func`; returns 1
 * and stores the status to fail with when this call must fail (the recent
 * error message is already set), else 0. */
ACLSIM_API int aclsim_fault_hit(const char *func, int *status);

/* At the entry of every exported real function: when the fault fires, run
 * ON_FAULT (it may read the status as aclsim_fault_status_), then return
 * RESULT. */
#define ACLSIM_FAULT_POINT_DO(ON_FAULT, RESULT)                               \
    do {                                                                      \
        int aclsim_fault_status_;                                             \
        if (aclsim_fault_hit(__func__, &aclsim_fault_status_)) {              \
            ON_FAULT;                                                         \
            return RESULT;                                                    \
        }                                                                     \
    } while (0)
/* The usual forms: return the status, or NULL from a pointer-returning one. */
#define ACLSIM_FAULT_POINT() ACLSIM_FAULT_POINT_DO((void)0, aclsim_fault_status_)
#define ACLSIM_FAULT_POINT_PTR() ACLSIM_FAULT_POINT_DO((void)0, NULL)
/* At the entry of an op's phase-2 function: an injected failure behaves like
 * any phase-2 failure, so it consumes a live non-repeatable executor
 * (aclsim_executor_fault_consume, libnnopbase.so). */
#define ACLSIM_FAULT_POINT_PHASE2(executor)                                   \
    ACLSIM_FAULT_POINT_DO(aclsim_executor_fault_consume(executor), aclsim_fault_status_)

/* Handle registry. Handles are addresses inside a reserved PROT_NONE range,
 * handed out once and never reused, so a stale handle can never alias a new
 * object and any attempt by the caller to dereference one segfaults. */
enum {
    ACLSIM_KIND_STREAM = 0,
    ACLSIM_KIND_TENSOR,
    ACLSIM_KIND_INT_ARRAY,
    ACLSIM_KIND_FLOAT_ARRAY,
    ACLSIM_KIND_BOOL_ARRAY,
    ACLSIM_KIND_SCALAR,
    ACLSIM_KIND_EXECUTOR,
    ACLSIM_KIND_TENSOR_LIST,
    ACLSIM_KIND_SCALAR_LIST,
    ACLSIM_KIND_EVENT,
    ACLSIM_KIND_MODEL,
    ACLSIM_KIND_COUNT
};
ACLSIM_API void *aclsim_handle_new(int kind, void *obj);           /* NULL if out of handles */
ACLSIM_API void *aclsim_handle_get(const void *handle, int kind);  /* obj, or NULL if not live */
ACLSIM_API void *aclsim_handle_take(const void *handle, int kind); /* unregister; obj or NULL */
/* What a handle is, for messages: "a live aclTensor", "a destroyed handle", ... */
ACLSIM_API const char *aclsim_handle_describe(const void *handle);

/* Simulated device memory. Device addresses live in a reserved PROT_NONE
 * range; their bytes are kept elsewhere and reached only through here. */
typedef struct aclsim_alloc_info {
    uint64_t base;  /* device address of the allocation */
    uint64_t size;  /* bytes requested by aclrtMalloc */
    int32_t device;
} aclsim_alloc_info;
/* 1 if p lies in the simulated device address range (live or not). */
ACLSIM_API int aclsim_dev_in_range(const void *p);
/* 1 and *info if p lies inside a live allocation, else 0. */
ACLSIM_API int aclsim_dev_lookup(const void *p, aclsim_alloc_info *info);
/* Host view of device bytes [p, p+nbytes) if they lie inside ONE live
 * allocation, else NULL. nbytes may be 0 (then p must still be inside one). */
ACLSIM_API void *aclsim_dev_map(const void *p, uint64_t nbytes);
/* Human-readable reason why [p, p+nbytes) is not inside one live allocation. */
ACLSIM_API void aclsim_dev_explain(const void *p, uint64_t nbytes, char *buf, size_t len);

/* Streams. A task runs only when its stream is synchronised. run returns 0 on
 * success; on failure it sets the error message and returns non-zero, and the
 * sync then reports ACL_ERROR_RT_AICORE_EXCEPTION. release always runs once
 * (after run, or when the task is discarded). */
typedef int (*aclsim_task_run_fn)(void *ctx);
typedef void (*aclsim_task_release_fn)(void *ctx);
/* Device of a stream (NULL = the calling thread's default stream). Returns 0,
 * or ACL_ERROR_RT_PARAM_INVALID / ACL_ERROR_RT_CONTEXT_NULL with a message. */
ACLSIM_API int aclsim_stream_device(aclrtStream stream, int32_t *device);
/* Queue a task; on failure calls release(ctx) and returns the error. On a stream
 * being captured the task goes into the capture's model instead: it then runs once per
 * replay (run must leave ctx reusable) and is released when the model goes. */
ACLSIM_API int aclsim_stream_enqueue(aclrtStream stream, const char *name,
                                     aclsim_task_run_fn run, aclsim_task_release_fn release,
                                     void *ctx);
/* The same, for a task that moves `bytes` bytes of device memory: the stream's device
 * clock advances by the cost model's time for it (native/README.md, "Streams, events
 * and capture"). aclsim_stream_enqueue counts 0 bytes. */
ACLSIM_API int aclsim_stream_enqueue_bytes(aclrtStream stream, const char *name,
                                           aclsim_task_run_fn run, aclsim_task_release_fn release,
                                           void *ctx, uint64_t bytes);

/* The deterministic option (ACL_OPT_DETERMINISTIC) as nnopbase hands it to an
 * operator: the level an executor built now runs with, read as the simulated
 * release reads it (native/README.md: the process-level value at every phase 1 in
 * the newest; in 8.1.RC1 the context value, once per op_api operator at its first
 * use and once for all generated operators, as 0/1). generated: a generated API. */
ACLSIM_API int64_t aclsim_deterministic_for_phase1(const char *op_name, int generated);
/* A kernel of op_name was queued with that level (aclsimLaunchDeterministic). */
ACLSIM_API void aclsim_record_launch(const char *op_name, int64_t deterministic);

/* Load-time sanity check used by the other libraries: warn on stderr when the
 * library containing `own` and the one containing `dep` (named dep_name) are
 * not in the same directory, i.e. two simulator builds are mixed. */
ACLSIM_API const char *aclsim_build_id(void);
ACLSIM_API const char *aclsim_nnopbase_build_id(void);
ACLSIM_API void aclsim_warn_if_foreign(const char *own_id, const char *dep_id, const void *own, const void *dep,
                                       const char *dep_name);
#ifndef ACLSIM_BUILD_ID
#define ACLSIM_BUILD_ID ""
#endif

/* ======================= provided by libnnopbase.so ======================= */

#define ACLSIM_MAX_DIMS 8 /* rank kept in a kernel's tensor descriptor */
/* Tensors one executor may describe (a tensor list counts each of its tensors):
 * a sanity limit, the descriptors are allocated to size. */
#define ACLSIM_MAX_KERNEL_TENSORS 4096

/* Bytes per element of a data type; 0 if the simulator does not accept it. */
ACLSIM_API size_t aclsim_dtype_size(int32_t dtype);
ACLSIM_API const char *aclsim_dtype_name(int32_t dtype);

/* A by-value copy of an aclTensor's description. Kernels keep these so that
 * they never depend on the caller's aclTensor objects. */
typedef struct aclsim_tensor_desc {
    const char *name; /* parameter name for messages (static string) */
    int32_t dtype;
    int32_t format;
    int64_t ndim; /* real rank; shape/strides hold the first ACLSIM_MAX_DIMS */
    int64_t shape[ACLSIM_MAX_DIMS];
    int64_t strides[ACLSIM_MAX_DIMS]; /* in elements */
    int64_t offset;                   /* in elements */
    uint64_t addr;                    /* device address given as tensorData */
    const void *handle;               /* the aclTensor it was read from (for the addr setters) */
    int32_t storage_format;           /* format is the view's; CANN keeps them apart */
    int64_t storage_ndim;
    int64_t storage_shape[ACLSIM_MAX_DIMS];
} aclsim_tensor_desc;

/* Fill *desc from a live tensor; returns 0, or -1 if the handle is not a live
 * aclTensor. Call with the lock held. */
ACLSIM_API int aclsim_tensor_describe(const aclTensor *tensor, const char *name,
                                      aclsim_tensor_desc *desc);
/* What CANN's op_api helpers do to the caller's own aclTensor (lock held):
 * contiguous_is_self: 1 if l0op::Contiguous hands the caller's object itself back
 * rather than a view: a contiguous view (size-1 dims with any stride; 0 or 1
 * elements always) whose dims equal its storage dims (aclCreateTensor makes the
 * origin shape the storage dims). reformat: l0op::ReFormat without an executor,
 * which sets that object's view, storage and origin formats in place. */
ACLSIM_API int aclsim_tensor_contiguous_is_self(const aclTensor *tensor);
ACLSIM_API void aclsim_tensor_reformat(const aclTensor *tensor, int32_t format);
/* What op_apis' SetStorageShape + SetStorageFormat do to the caller's own aclTensor
 * (aclnnTransMatmulWeight): the storage format and dims change, the view's stay.
 * 0, or -1 if the handle is not live or the dims do not fit (more than view rank + 2). */
ACLSIM_API int aclsim_tensor_set_storage(const aclTensor *tensor, int32_t format, const int64_t *dims,
                                         uint64_t ndim);

/* What an operator with a data-dependent output does when its kernel has run (lock
 * held): the caller's aclTensor now describes only the result's real shape, contiguous
 * from the start of its memory, for aclGetViewShape to report (nothing if the handle was
 * destroyed in the meantime). */
ACLSIM_API void aclsim_tensor_set_view_shape(const aclTensor *tensor, const int64_t *dims, int64_t ndim);
/* "NCHW", "ND", ... for messages ("not an aclFormat" for anything else). */
ACLSIM_API const char *aclsim_format_name(int32_t format);
/* Values of a live aclIntArray (valid while the lock is held); 0 or -1. */
ACLSIM_API int aclsim_int_array_values(const aclIntArray *array, const int64_t **values,
                                       uint64_t *size);

/* The contents of live list, scalar and array handles (valid while the lock is
 * held); each returns 0, or -1 if the handle is not a live object of its type.
 * List items are the handles the list was created with (NULL items included). */
ACLSIM_API int aclsim_tensor_list_items(const aclTensorList *list, const aclTensor *const **items,
                                        uint64_t *size);
ACLSIM_API int aclsim_scalar_list_items(const aclScalarList *list, const aclScalar *const **items,
                                        uint64_t *size);
/* A scalar's dtype and its value's bytes (up to 16, as aclCreateScalar copied them). */
ACLSIM_API int aclsim_scalar_value(const aclScalar *scalar, int32_t *dtype, const unsigned char **bytes);
ACLSIM_API int aclsim_float_array_values(const aclFloatArray *array, const float **values, uint64_t *size);
ACLSIM_API int aclsim_bool_array_values(const aclBoolArray *array, const bool **values, uint64_t *size);

/* What a launched kernel sees. */
typedef struct aclsim_launch {
    const char *op_name;
    uint64_t workspace;      /* device address, 0 if none */
    uint64_t workspace_size; /* bytes passed to phase 2 */
    int32_t device;          /* the stream's device */
} aclsim_launch;

/* Kernel body: runs at stream-sync time with the lock held. Must re-validate
 * every device address it touches; returns 0 or, after aclsim_set_error,
 * non-zero. */
typedef int (*aclsim_kernel_fn)(const void *state, const aclsim_tensor_desc *tensors,
                                int ntensors, const aclsim_launch *launch);
typedef void (*aclsim_state_free_fn)(void *state);

/* Build an executor (phase 1). `tensors` are the op's tensors in C parameter
 * order, inputs first, then its `noutputs` outputs: that split is what
 * aclSetInputTensorAddr / aclSetOutputTensorAddr index. The descriptors are
 * copied; `state` is owned by the executor from now on and freed with
 * free_state once the executor and every queued launch of it are gone - also
 * when this call fails (returns NULL with a message; the op then reports
 * ACLNN_ERR_INNER_CREATE_EXECUTOR). */
ACLSIM_API aclOpExecutor *aclsim_executor_create(const char *op_name, uint64_t workspace_size,
                                                 const aclsim_tensor_desc *tensors, int ntensors,
                                                 int noutputs, aclsim_kernel_fn kernel, void *state,
                                                 aclsim_state_free_fn free_state);
/* What an operator declares about its executor at phase 1 (all zero: nothing). */
typedef struct aclsim_executor_traits {
    /* Non-NULL: aclSetAclOpExecutorRepeatable refuses this executor (561000) and
     * the message gives this reason. Real opbase refuses an executor whose kernel
     * launches hold raw copies of tensor addresses that the address setters cannot
     * reach (kernel_launcher.h's LauncherRepeatableChecker). Copied. */
    const char *not_repeatable;
    /* A generated API (no op_api): how it reads the deterministic option. */
    int generated;
    /* The executor launches no kernel (an empty-tensor success): it reads no
     * deterministic option and its launches are not recorded. */
    int no_kernel;
} aclsim_executor_traits;
/* aclsim_executor_create with the operator's traits (NULL: none). */
ACLSIM_API aclOpExecutor *aclsim_executor_create_ex(const char *op_name, uint64_t workspace_size,
                                                    const aclsim_tensor_desc *tensors, int ntensors,
                                                    int noutputs, aclsim_kernel_fn kernel, void *state,
                                                    aclsim_state_free_fn free_state,
                                                    const aclsim_executor_traits *traits);
/* Free a live non-repeatable executor (anything else is left alone); used
 * by ACLSIM_FAULT_POINT_PHASE2. */
ACLSIM_API void aclsim_executor_fault_consume(aclOpExecutor *executor);
/* The whole second phase of every op: validates workspace/executor/stream,
 * queues the kernel, and consumes a non-repeatable executor. */
ACLSIM_API aclnnStatus aclsim_executor_launch(const char *api_name, void *workspace,
                                              uint64_t workspace_size, aclOpExecutor *executor,
                                              aclrtStream stream);

#endif /* ACLSIM_SIM_INTERNAL_H */
