/*
 * op_common.h - what every simulator operator shares, compiled into every op
 * library (hidden: op libraries export nothing but their aclnn entry points).
 *
 * An operator source is: its kernel(s), a phase-1 `prepare` function that
 * checks the arguments in the order of the real op_api and ends in
 * opc_finish(), and one OPC_ENTRY_POINTS line per operator.
 */
#ifndef ACLSIM_OP_COMMON_H
#define ACLSIM_OP_COMMON_H

#include "../sim_internal.h"
#include "aclnnop/aclnn_util.h"

#include <stdint.h>

/* ========================================================================== */
/* the two exported entry points                                              */
/* ========================================================================== */

/* One phase-1 call, as the op's prepare function sees it. */
typedef struct opc_call {
    const char *api;           /* "aclnnXxxGetWorkspaceSize": the prefix of every message */
    const char *op;            /* "aclnnXxx" */
    uint64_t *workspaceSize;   /* the caller's out-parameters, both checked non-NULL */
    aclOpExecutor **executor;
    int generated;             /* a generated API (build.py's SOURCES: generated=True) */
} opc_call;

/* build.py compiles the sources of generated APIs with OPC_GENERATED_API=1. */
#ifndef OPC_GENERATED_API
#define OPC_GENERATED_API 0
#endif

/* The opening every phase 1 shares: workspaceSize, then executor, must not be
 * NULL (161001). 0 or the status, with its message. */
aclnnStatus opc_open(const opc_call *c);

#define OPC_UNPAREN(...) __VA_ARGS__

/* Defines aclnnXxxGetWorkspaceSize(PARAMS..., workspaceSize, executor) and
 * aclnnXxx(workspace, workspaceSize, executor, stream), as declared in the
 * operator's aclnnop/ header (include it first: the compiler checks them).
 * PARAMS is the parenthesised parameter list without the phase-1 tail, ARGS the
 * same names as arguments. Phase 1: the fault point, the lock, opc_open, then
 * PREPARE(&call, ARGS...). Phase 2: the fault point, then the common launch. */
#define OPC_ENTRY_POINTS(NAME, PREPARE, PARAMS, ARGS)                                                  \
    ACLNN_API aclnnStatus NAME##GetWorkspaceSize(OPC_UNPAREN PARAMS, uint64_t *workspaceSize,           \
                                                 aclOpExecutor **executor)                             \
    {                                                                                                  \
        ACLSIM_FAULT_POINT();                                                                          \
        const opc_call call_ = {#NAME "GetWorkspaceSize", #NAME, workspaceSize, executor,             \
                                OPC_GENERATED_API};                                                    \
        aclsim_lock();                                                                                 \
        aclnnStatus rc_ = opc_open(&call_);                                                            \
        if (rc_ == ACLNN_SUCCESS) rc_ = PREPARE(&call_, OPC_UNPAREN ARGS);                             \
        aclsim_unlock();                                                                               \
        return rc_;                                                                                    \
    }                                                                                                  \
    ACLNN_API aclnnStatus NAME(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,        \
                               aclrtStream stream)                                                     \
    {                                                                                                  \
        ACLSIM_FAULT_POINT_PHASE2(executor);                                                           \
        return aclsim_executor_launch(#NAME, workspace, workspaceSize, executor, stream);              \
    }

/* The end of every phase 1: copy the op's state (state_size bytes) into a new
 * executor over `descs` (inputs in C order, then the `noutputs` outputs), and
 * report it with its workspace size; ACLNN_ERR_INNER_CREATE_EXECUTOR with a
 * message on failure. */
aclnnStatus opc_finish(const opc_call *c, const void *state, size_t state_size, uint64_t workspace_size,
                       const aclsim_tensor_desc *descs, int ntensors, int noutputs, aclsim_kernel_fn kernel);
/* What an operator declares about its executor beyond opc_finish's defaults. */
typedef struct opc_traits {
    /* Non-NULL: aclSetAclOpExecutorRepeatable refuses the executor (561000) with this
     * reason, as real opbase refuses one whose launches hold raw copies of tensor
     * addresses. Ignored when the kernel is opc_noop_kernel (no launch, nothing held). */
    const char *not_repeatable;
} opc_traits;
/* opc_finish with the operator's traits (NULL: none). */
aclnnStatus opc_finish_ex(const opc_call *c, const void *state, size_t state_size, uint64_t workspace_size,
                          const aclsim_tensor_desc *descs, int ntensors, int noutputs, aclsim_kernel_fn kernel,
                          const opc_traits *traits);

/* ========================================================================== */
/* phase-1 arguments                                                          */
/* ========================================================================== */

/* Set "api: <message>" as the recent error and return status. */
int opc_fail(int status, const char *api, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An aclIntArray's values (valid while the lock is held). */
typedef struct opc_ints {
    const int64_t *v;
    uint64_t n;
} opc_ints;

/* One pointer parameter: its C name, the handle, and where its live contents go. */
typedef struct opc_arg {
    const char *name;
    const void *handle;
    aclsim_tensor_desc *tensor; /* an aclTensor's description, */
    opc_ints *ints;             /* or an aclIntArray's values */
} opc_arg;
#define OPC_TENSOR(param, desc) {#param, (param), (desc), NULL}
#define OPC_INTS(param, ints) {#param, (param), NULL, (ints)}
/* A NULL-check order by parameter name, for opc_require. */
#define OPC_ORDER(...) ((const char *const[]){__VA_ARGS__, NULL})

/* "<name> is NULL" (161001) for the first NULL among the parameters `order`
 * names, in that order (NULL: every parameter, in C order). */
int opc_require(const char *api, const opc_arg *args, int n, const char *const *order);
/* Read every parameter in C order; ACLNN_ERR_INNER_NULLPTR naming the first
 * handle that is not a live object of its type. */
int opc_resolve(const char *api, const opc_arg *args, int n);
/* Both: the NULL checks (in `order`), then the reads. */
int opc_args(const char *api, const opc_arg *args, int n, const char *const *order);

/* ---- dtypes ---- */
/* A set of dtypes, in the order its message lists them (then `note`, if any). */
typedef struct opc_dtypes {
    int n;
    int32_t v[12];
    const char *note;
} opc_dtypes;
extern const opc_dtypes OPC_FLOATS; /* ACL_FLOAT, ACL_FLOAT16, ACL_BF16 */
int opc_dtype_in(int32_t dtype, const opc_dtypes *set);
/* 161002 "<name> dtype must be A, B or C<note>, got X (n)" unless t's dtype is in set. */
int opc_check_dtype(const char *api, const aclsim_tensor_desc *t, const opc_dtypes *set);
/* 161002 "<name> dtype X (n) must equal <ref name> dtype Y (m)" unless equal. */
int opc_check_same_dtype(const char *api, const aclsim_tensor_desc *t, const aclsim_tensor_desc *ref);

/* ---- formats ---- */
/* The device-private layouts (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, ...). */
int opc_is_private_format(int32_t format);
/* 161002 "<a name> format F (f) and <b name> format G (g) must be equal" unless equal. */
int opc_check_same_format(const char *api, const aclsim_tensor_desc *a, const aclsim_tensor_desc *b);

/* ---- shapes ---- */
/* "[2, 3, 4]" (the first ACLSIM_MAX_DIMS dims, then "...") in one of four
 * thread-local buffers: valid until the fourth call after it on the thread. */
const char *opc_shape(const aclsim_tensor_desc *t);
const char *opc_dims(const int64_t *dims, int64_t n);
int64_t opc_numel(const aclsim_tensor_desc *t);
/* The element count as the generated checks compute it: exact, saturated past 2**125. */
__int128 opc_numel_sat(const aclsim_tensor_desc *t);
int opc_has_zero_dim(const aclsim_tensor_desc *t);
int opc_same_shape(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b);
int opc_shape_is(const aclsim_tensor_desc *t, int64_t ndim, const int64_t *dims);
/* For generated checks (ascend_aclnn/ops/rules.py): some dim of t from `start` on is 0;
 * a and b agree on dims [start, stop), a stop <= 0 counting from each one's end. */
int opc_zero_from(const aclsim_tensor_desc *t, int64_t start);
int opc_dims_agree(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b, int64_t start, int64_t stop);
/* Python's lead.shape[:stop] into dst (stop <= 0 from its end); returns how many. */
int64_t opc_lead(int64_t *dst, const aclsim_tensor_desc *lead, int64_t stop);
/* t has rank len(lead.shape[:stop]) + tail and begins with those dims. */
int opc_lead_is(const aclsim_tensor_desc *t, const aclsim_tensor_desc *lead, int64_t stop, int64_t tail);

#include "opc_arith.h" /* the generated checks' integer arithmetic */
/* Bytes of t's elements packed at itemsize each; 1 if that overflows. */
int opc_packed_bytes(const aclsim_tensor_desc *t, uint64_t itemsize, uint64_t *bytes);

/* ---- workspace for contiguous copies ---- */
/* A non-contiguous input is copied into the workspace before the kernel reads
 * it: *offset = *ws, *bytes = its packed size (0 if contiguous), *ws += *bytes;
 * "<name> is too large" (161002) if that overflows. */
int opc_plan_copy(const char *api, const aclsim_tensor_desc *t, uint64_t *ws, uint64_t *offset, uint64_t *bytes);

/* ========================================================================== */
/* tensor geometry                                                            */
/* ========================================================================== */

int opc_is_contiguous(const aclsim_tensor_desc *t);
/* Same shape/dtype, row-major strides, offset 0, no address. */
aclsim_tensor_desc opc_contiguous_like(const aclsim_tensor_desc *t);
/* Bytes a view spans from its data address (offset included). */
uint64_t opc_view_bytes(const aclsim_tensor_desc *t);
/* Element (i0, i1, i2) of a 3-D view whose data address maps to base. */
static inline unsigned char *opc_elem3(unsigned char *base, const aclsim_tensor_desc *t, size_t itemsize,
                                       int64_t i0, int64_t i1, int64_t i2)
{
    int64_t e = t->offset + i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2];
    return base + (uint64_t)e * itemsize;
}
/* Element offset of (n, c, h, w) in a 4-D (N, C, H, W) view, or of (c, h, w)
 * in a 3-D (C, H, W) one (n ignored). */
static inline int64_t opc_image_at(const aclsim_tensor_desc *t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    const int64_t *st = t->strides;
    int64_t e = t->offset;
    if (t->ndim == 4) e += n * *st++;
    return e + c * st[0] + h * st[1] + w * st[2];
}

/* ========================================================================== */
/* kernels (run at stream-sync time; re-validate every device address)        */
/* ========================================================================== */

/* A kernel: OPC_KERNEL(fn, state_type) { body } defines the aclsim_kernel_fn fn,
 * whose body sees the op's state as `st`, the tensors as `t`, the launch as `l`. */
#define OPC_KERNEL(fn, STATE)                                                                          \
    static int fn##_body(const STATE *st, const aclsim_tensor_desc *t, const aclsim_launch *l);         \
    static int fn(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)      \
    {                                                                                                  \
        (void)nt;                                                                                      \
        return fn##_body(state, t, l);                                                                 \
    }                                                                                                  \
    static int fn##_body(const STATE *st, const aclsim_tensor_desc *t, const aclsim_launch *l)
/* Runs nothing: for the calls phase 1 accepts with nothing to compute. */
int opc_noop_kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l);

/* Host view of a tensor's bytes, or NULL with "<op>: tensor '<name>' ..." set. */
unsigned char *opc_map_tensor(const aclsim_launch *launch, const aclsim_tensor_desc *t);
/* opc_map_tensor for each (unsigned char **host, const aclsim_tensor_desc *t)
 * pair of a NULL-terminated list, in order: 0, or 1 at the first failure. */
int opc_map_tensors(const aclsim_launch *launch, ...);
/* Host view of workspace bytes [offset, offset+bytes), or NULL with a message. */
unsigned char *opc_map_workspace(const aclsim_launch *launch, uint64_t offset, uint64_t bytes,
                                 const char *purpose);
/* The source index, along the k-th of the last dims an index map covers (k = 0 the
 * last dim, as in a pad list), of output index i; n is the source's size there. */
typedef int64_t (*opc_index_fn)(const void *state, int k, int64_t i, int64_t n);
/* out[..., i_1, ..., i_m] = self[..., f(m-1, i_1), ..., f(0, i_m)] over every element of
 * out (any rank, both strided; m = naxes trailing dims mapped, the others equal): the
 * kernel of a pad, a crop or any gather by axis. Bits copied, so exact for every dtype. */
int opc_gather_map(const aclsim_launch *l, const aclsim_tensor_desc *self, const aclsim_tensor_desc *out,
                   int naxes, opc_index_fn f, const void *state);

/* Copy a strided view (host base of its data address) into contiguous dst. */
void opc_gather(const aclsim_tensor_desc *t, const unsigned char *base, unsigned char *dst);
/* t's elements for reading: src (t's mapped bytes) itself when copy_bytes is 0,
 * else a contiguous copy gathered into the workspace at copy_offset (planned by
 * opc_plan_copy); *view describes what is returned. NULL with a message. */
unsigned char *opc_contiguous(const aclsim_launch *launch, const aclsim_tensor_desc *t, unsigned char *src,
                              uint64_t copy_offset, uint64_t copy_bytes, const char *purpose,
                              aclsim_tensor_desc *view);

/* ========================================================================== */
/* numeric conversions (round to nearest even; inf preserved)                 */
/* ========================================================================== */

/* NaN follows the host reference bit for bit (NumPy for fp16, ml_dtypes for bf16):
 * fp16 <- fp32 keeps the sign and the top 10 payload bits (0x7C01 if they are all 0);
 * bf16 <- fp32 gives the quiet NaN 0x7FC0 with the sign kept; widening keeps every bit. */
float opc_half_to_float(uint16_t h);
uint16_t opc_float_to_half(float f);
float opc_bf16_to_float(uint16_t b);
uint16_t opc_float_to_bf16(float f);
/* Load/store one ACL_FLOAT, ACL_FLOAT16 or ACL_BF16 element (any alignment). */
float opc_load_float(const unsigned char *p, int32_t dtype);
void opc_store_float(unsigned char *p, int32_t dtype, float v);

#endif /* ACLSIM_OP_COMMON_H */
