/*
 * ascendcl.c - libascendcl.so of the CANN CPU simulator.
 *
 * Implements the AscendCL runtime calls the binding uses, plus the
 * process-wide machinery the other simulator libraries share (lock, error
 * message, fault injection, handle registry, device memory, streams).
 * Everything is strict on purpose: misuse that would corrupt memory or hang
 * a real NPU fails here with a status and a precise message.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_DEVICES 64
#define DEV_ALIGN 512u                      /* device addresses are 512-byte aligned */
#define DEV_GUARD 512u                      /* unused gap after every allocation */
#define DEV_VA_WANTED (64ull << 30)         /* reserved device address space */
#define HANDLE_VA_WANTED (1ull << 30)       /* reserved handle address space */
#define HANDLE_STRIDE 16u
#define FREED_HISTORY 4096                  /* freed allocations kept for messages */
#define POISON_BYTE 0xFF                    /* fresh device memory: NaN / -1 / 255 */
#define DEFAULT_DEVICE_MEMORY (4ull << 30)
#define MSG_MAX 2048
/* Queued tasks a stream holds before the next enqueue runs them, as a device drains
 * its bounded task queue (hicann/runtime's submission queues hold 1024 to 4096
 * entries); a smaller queue waits for a sync, so a missing sync stays visible. */
#define SIM_STREAM_DEPTH 1024

/* ========================================================================== */
/* lock, error message                                                        */
/* ========================================================================== */

static pthread_mutex_t g_lock;

__attribute__((constructor)) static void sim_init_lock(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

ACLSIM_API void aclsim_lock(void) { pthread_mutex_lock(&g_lock); }
ACLSIM_API void aclsim_unlock(void) { pthread_mutex_unlock(&g_lock); }

/* Fixed thread-local buffers: no allocation, nothing to leak at thread exit.
 * The returned buffer is separate so the pointer handed out stays valid until
 * the next aclGetRecentErrMsg on this thread. */
static __thread char t_pending_msg[MSG_MAX];
static __thread int t_has_pending;
static __thread char t_returned_msg[MSG_MAX];

ACLSIM_API void aclsim_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_pending_msg, sizeof t_pending_msg, fmt, ap);
    va_end(ap);
    t_has_pending = 1;
}

/* ========================================================================== */
/* the simulated CANN release                                                 */
/* ========================================================================== */

/* build.py compiles the profile in (-DACLSIM_CANN_VERSION="8.1.RC1"), from the same
 * table that writes the installed version.info files, so the two always agree. */
#ifndef ACLSIM_CANN_VERSION
#error "build the simulator with native/build.py (it defines ACLSIM_CANN_VERSION)"
#endif

/* "X.Y.Z" -> {X, Y, Z, 1000}; "X.Y.RCn" -> {X, Y, 0, n} (a release candidate sorts
 * before the release). 0, or -1 if the string is not one of those forms. */
static int parse_release(const char *s, long key[4])
{
    char *end;
    for (int i = 0; i < 2; i++) {
        if (*s < '0' || *s > '9') return -1;
        key[i] = strtol(s, &end, 10);
        if (*end != '.') return -1;
        s = end + 1;
    }
    if (s[0] == 'R' && s[1] == 'C') {
        key[2] = 0;
        s += 2;
        if (*s < '0' || *s > '9') return -1;
        key[3] = strtol(s, &end, 10);
    } else {
        if (*s < '0' || *s > '9') return -1;
        key[2] = strtol(s, &end, 10);
        key[3] = 1000;
    }
    return *end == '\0' ? 0 : -1;
}

ACLSIM_API const char *aclsim_profile_version(void) { return ACLSIM_CANN_VERSION; }

ACLSIM_API int aclsim_profile_at_least(const char *version)
{
    long want[4], have[4];
    if (version == NULL || parse_release(version, want) || parse_release(ACLSIM_CANN_VERSION, have)) {
        fprintf(stderr, "ascend-sim: aclsim_profile_at_least: malformed CANN release %s%s%s (want X.Y.Z "
                "or X.Y.RCn)\n", version ? "'" : "", version ? version : "NULL", version ? "'" : "");
        abort();
    }
    for (int i = 0; i < 4; i++)
        if (have[i] != want[i]) return have[i] > want[i];
    return 1;
}

/* ========================================================================== */
/* mixed-build detection                                                      */
/* ========================================================================== */

static int dir_of(const void *addr, char *out, size_t len)
{
    Dl_info info;
    char *real;
    if (!dladdr(addr, &info) || info.dli_fname == NULL || (real = realpath(info.dli_fname, NULL)) == NULL)
        return -1;
    char *slash = strrchr(real, '/');
    if (slash) *slash = '\0';
    snprintf(out, len, "%s", real);
    free(real);
    return 0;
}

#ifndef ACLSIM_BUILD_ID
#define ACLSIM_BUILD_ID ""
#endif

/* Every library of one build() carries the same build id (build.py defines it), so a
 * library can tell it is bound to another build's copy wherever the files lie (a vendor
 * package's library sits in opp/vendors/, away from lib64/, yet belongs to the build). */
ACLSIM_API const char *aclsim_build_id(void) { return ACLSIM_BUILD_ID; }

ACLSIM_API void aclsim_warn_if_foreign(const char *own_id, const char *dep_id, const void *own, const void *dep,
                                       const char *dep_name)
{
    char a[4096], b[4096];
    if (strcmp(own_id, dep_id) == 0) return;
    if (dir_of(own, a, sizeof a) || dir_of(dep, b, sizeof b)) return;
    fprintf(stderr,
            "ascend-sim: WARNING: the simulator library in %s is bound to the %s in %s: two "
            "simulator builds are loaded in one process and will not share state\n", a, dep_name, b);
}

/* ========================================================================== */
/* fault injection: ASCEND_SIM_FAULT="func:N:status[,func:N:status...]"       */
/* ========================================================================== */

typedef struct {
    char func[128];
    long nth;
    int status;
} fault_rule;

typedef struct {
    char func[128];
    long calls;
} fault_counter;

static char *g_fault_spec;       /* last value seen (NULL = unset) */
static fault_rule *g_rules;
static size_t g_nrules;
static fault_counter *g_counters; /* one per function named by a rule */
static size_t g_ncounters;

static void fault_reset(void)
{
    free(g_fault_spec);
    free(g_rules);
    free(g_counters);
    g_fault_spec = NULL;
    g_rules = NULL;
    g_counters = NULL;
    g_nrules = g_ncounters = 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

/* Re-parse the spec and restart every call counter. */
static void fault_parse(const char *spec)
{
    fault_reset();
    if (spec == NULL) return;
    g_fault_spec = strdup(spec);
    char *copy = strdup(spec);
    size_t cap = 1;
    for (const char *p = spec; *p; p++) cap += (*p == ',');
    g_rules = calloc(cap, sizeof *g_rules);
    g_counters = calloc(cap, sizeof *g_counters);
    if (g_fault_spec == NULL || copy == NULL || g_rules == NULL || g_counters == NULL) {
        free(copy);
        fprintf(stderr, "ascend-sim: out of memory parsing ASCEND_SIM_FAULT\n");
        return;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *entry = trim(item);
        if (*entry == '\0') continue;
        char *c1 = strchr(entry, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        char *end1 = NULL, *end2 = NULL;
        long nth = 0, status = 0;
        if (c1 && c2) {
            *c1 = *c2 = '\0';
            errno = 0;
            nth = strtol(trim(c1 + 1), &end1, 10);
            status = strtol(trim(c2 + 1), &end2, 10);
        }
        char *name = trim(entry);
        if (!c1 || !c2 || *name == '\0' || strlen(name) >= sizeof g_rules[0].func || errno ||
            *end1 != '\0' || *end2 != '\0' || nth < 1 || status < INT32_MIN || status > INT32_MAX) {
            fprintf(stderr,
                    "ascend-sim: ignoring malformed ASCEND_SIM_FAULT entry (want func:N:status)\n");
            continue;
        }
        fault_rule *r = &g_rules[g_nrules++];
        strcpy(r->func, name);
        r->nth = nth;
        r->status = (int)status;
        size_t k = 0;
        while (k < g_ncounters && strcmp(g_counters[k].func, name) != 0) k++;
        if (k == g_ncounters) strcpy(g_counters[g_ncounters++].func, name);
    }
    free(copy);
}

ACLSIM_API int aclsim_fault_hit(const char *func, int *status)
{
    int hit = 0, st = 0;
    long call = 0;
    aclsim_lock();
    /* Re-read at every call so a test can change os.environ mid-process. */
    const char *env = getenv("ASCEND_SIM_FAULT");
    int same = (env == NULL && g_fault_spec == NULL) ||
               (env != NULL && g_fault_spec != NULL && strcmp(env, g_fault_spec) == 0);
    if (!same) fault_parse(env);
    for (size_t k = 0; k < g_ncounters; k++) {
        if (strcmp(g_counters[k].func, func) != 0) continue;
        call = ++g_counters[k].calls;
        for (size_t r = 0; r < g_nrules; r++) {
            if (g_rules[r].nth == call && strcmp(g_rules[r].func, func) == 0) {
                hit = 1;
                st = g_rules[r].status;
                break;
            }
        }
        break;
    }
    aclsim_unlock();
    if (hit) {
        aclsim_set_error("injected fault: call #%ld of %s fails with %d (ASCEND_SIM_FAULT)", call,
                         func, st);
        *status = st;
    }
    return hit;
}

/* ========================================================================== */
/* address-space reservations                                                  */
/* ========================================================================== */

/* Reserve an inaccessible range; halve the size until the kernel agrees
 * (tools such as valgrind refuse very large mappings). */
static int reserve_range(uint64_t wanted, uint64_t *base, uint64_t *size)
{
    for (uint64_t sz = wanted; sz >= (16ull << 20); sz /= 2) {
        void *p = mmap(NULL, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            *base = (uint64_t)(uintptr_t)p;
            *size = sz;
            return 0;
        }
    }
    return -1;
}

/* ========================================================================== */
/* handle registry                                                            */
/* ========================================================================== */

typedef struct {
    uint64_t id;
    int kind;
    void *obj;
} handle_entry;

static uint64_t g_handle_base, g_handle_size, g_next_handle_id = 1;
static handle_entry *g_handles; /* sorted by id (ids only grow) */
static size_t g_nhandles, g_handles_cap;
static int64_t g_kind_count[ACLSIM_KIND_COUNT];

static long handle_index(const void *handle)
{
    uint64_t h = (uint64_t)(uintptr_t)handle;
    if (g_handle_base == 0 || h < g_handle_base || h >= g_handle_base + g_handle_size ||
        (h - g_handle_base) % HANDLE_STRIDE != 0)
        return -1;
    uint64_t id = (h - g_handle_base) / HANDLE_STRIDE;
    size_t lo = 0, hi = g_nhandles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g_handles[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return (lo < g_nhandles && g_handles[lo].id == id) ? (long)lo : -1;
}

ACLSIM_API void *aclsim_handle_new(int kind, void *obj)
{
    void *h = NULL;
    aclsim_lock();
    if (g_handle_base == 0 && reserve_range(HANDLE_VA_WANTED, &g_handle_base, &g_handle_size))
        goto out;
    if ((g_next_handle_id + 1) * HANDLE_STRIDE > g_handle_size) goto out;
    if (g_nhandles == g_handles_cap) {
        size_t cap = g_handles_cap ? g_handles_cap * 2 : 256;
        handle_entry *n = realloc(g_handles, cap * sizeof *n);
        if (n == NULL) goto out;
        g_handles = n;
        g_handles_cap = cap;
    }
    uint64_t id = g_next_handle_id++;
    g_handles[g_nhandles++] = (handle_entry){id, kind, obj};
    g_kind_count[kind]++;
    h = (void *)(uintptr_t)(g_handle_base + id * HANDLE_STRIDE);
out:
    aclsim_unlock();
    return h;
}

/* The object of a live handle of that kind (take: also unregistered), or NULL. */
static void *handle_lookup(const void *handle, int kind, int take)
{
    void *obj = NULL;
    aclsim_lock();
    long i = handle_index(handle);
    if (i >= 0 && g_handles[i].kind == kind) {
        obj = g_handles[i].obj;
        if (take) {
            memmove(&g_handles[i], &g_handles[i + 1], (g_nhandles - (size_t)i - 1) * sizeof *g_handles);
            g_nhandles--;
            g_kind_count[kind]--;
        }
    }
    aclsim_unlock();
    return obj;
}

ACLSIM_API void *aclsim_handle_get(const void *handle, int kind) { return handle_lookup(handle, kind, 0); }
ACLSIM_API void *aclsim_handle_take(const void *handle, int kind) { return handle_lookup(handle, kind, 1); }

ACLSIM_API const char *aclsim_handle_describe(const void *handle)
{
    static const char *const live[ACLSIM_KIND_COUNT] = {
        "a live aclrtStream", "a live aclTensor", "a live aclIntArray", "a live aclFloatArray",
        "a live aclBoolArray", "a live aclScalar", "a live aclOpExecutor", "a live aclTensorList",
        "a live aclScalarList", "a live aclrtEvent", "a live aclmdlRI"};
    const char *what;
    uint64_t h = (uint64_t)(uintptr_t)handle;
    aclsim_lock();
    long i = handle_index(handle);
    if (i >= 0) what = live[g_handles[i].kind];
    else if (g_handle_base && h >= g_handle_base && h < g_handle_base + g_handle_size)
        what = "a handle that was already destroyed/freed";
    else if (aclsim_dev_in_range(handle)) what = "a device memory address, not a handle";
    else what = "not a handle created by this library";
    aclsim_unlock();
    return what;
}

/* ========================================================================== */
/* runtime state                                                              */
/* ========================================================================== */

/* The instance of one aclrtRecordEvent: the event keeps its latest one, each wait
 * task the one current when the wait was issued (a wait uses the record current at
 * the wait call, as CANN documents). Reference-counted by the event and the tasks. */
#define NO_STAMP UINT64_MAX
typedef struct sim_record {
    int refs;
    int done;                  /* the record task ran (or was discarded, or captured and ended) */
    int capturing;             /* recorded into a capture still in progress */
    int joined;                /* the capture's origin stream waited on it (fork/join rule) */
    uint64_t stamp_ns;         /* the stream's device clock when it ran; NO_STAMP if none */
    struct sim_stream *stream; /* producer, while not done */
    uint64_t seq;              /* the record task's position on that stream */
} sim_record;

enum { TASK_WORK = 0, TASK_RECORD, TASK_WAIT };

struct sim_model;

typedef struct sim_task {
    struct sim_task *next;
    char name[64];
    int kind;
    aclsim_task_run_fn run;
    aclsim_task_release_fn release;
    void *ctx;
    uint64_t cost_ns;         /* device time a WORK task takes (the cost model) */
    uint64_t seq;             /* position on its stream, from 1 */
    sim_record *rec;          /* RECORD: what it completes; WAIT: what it waits for */
    struct sim_model *replay; /* a replayed task: the model owns ctx, the task a reference */
} sim_task;

typedef struct sim_stream {
    int32_t device;
    void *handle; /* NULL for a device's default stream */
    sim_task *head, *tail;
    int64_t ntasks;
    uint64_t enq_seq, done_seq; /* tasks queued and run (or dropped) so far */
    uint64_t clock_ns;          /* device clock: when its last task finished */
    int draining;               /* a drain of this stream is on the C stack */
    struct sim_model *capture;  /* the model this stream is being captured into */
    sim_task *cap_last;         /* its last task in that capture (the join rule) */
    /* A task that failed while an enqueue drained the queue: the next sync of the
     * stream reports it (status and message), as a device reports a fault at the sync. */
    int failed_status;
    char failed_msg[MSG_MAX];
} sim_stream;

typedef struct sim_event {
    void *handle;
    int32_t device;
    uint32_t flags;
    int api;        /* EV_PLAIN (aclrtCreateEvent), EV_FLAG (...WithFlag), EV_EX (...ExWithFlag) */
    sim_record *rec; /* latest record, NULL if never recorded */
} sim_event;
enum { EV_PLAIN = 0, EV_FLAG, EV_EX };

/* A model runtime instance made by stream capture. */
typedef struct sim_model {
    void *handle;     /* NULL once aclmdlRIDestroy took it */
    int refs;         /* the handle, and one per replayed task still queued */
    int32_t device;
    int capturing;    /* between aclmdlRICaptureBegin and aclmdlRICaptureEnd */
    int invalidated;  /* a refused call invalidated the capture (9.2.0 profile) */
    int mode;         /* aclmdlRICaptureMode */
    pthread_t thread; /* the thread that began the capture */
    sim_stream *origin;
    sim_task *head, *tail; /* the captured tasks, in issue order */
    int64_t ntasks;
    sim_record **records; /* records captured into it, finished at capture end */
    size_t nrecords, records_cap;
} sim_model;

typedef struct {
    uint64_t base, size;
    int32_t device;
    unsigned char *host; /* backing store */
} dev_alloc;

typedef struct {
    uint64_t base, size;
} freed_range;

static int g_initialized;
static int g_finalized; /* aclFinalize has run in this process */
static int64_t g_dev_refs[MAX_DEVICES];
static uint64_t g_dev_gen[MAX_DEVICES]; /* bumped whenever a device is released */
static uint64_t g_dev_used[MAX_DEVICES];
static sim_stream *g_default_stream[MAX_DEVICES];
/* System options of each device's default context (aclrtCtxSetSysParamOpt);
 * the context, and with it the options, goes when the device is released. */
#define SIM_SYS_OPTS 2
static int g_ctx_opt_set[MAX_DEVICES][SIM_SYS_OPTS];
static int64_t g_ctx_opt_value[MAX_DEVICES][SIM_SYS_OPTS];
/* The process-level options (aclrtSetSysParamOpt): 0 until set, and kept for the
 * life of the process (the runtime keeps them in a static array that nothing clears,
 * not even aclFinalize). */
static int64_t g_proc_opt_value[SIM_SYS_OPTS];

static __thread int t_device = -1;
static __thread uint64_t t_device_gen;

static sim_stream **g_streams; /* user-created streams */
static size_t g_nstreams, g_streams_cap;
static int64_t g_pending_tasks;

static uint64_t g_va_base, g_va_size, g_va_next;
static dev_alloc *g_allocs; /* sorted by base (bases only grow) */
static size_t g_nallocs, g_allocs_cap;
static int64_t g_device_bytes;
static freed_range g_freed[FREED_HISTORY];
static size_t g_nfreed_total;

static void **g_host_allocs;
static size_t *g_host_sizes; /* same index as g_host_allocs */
static size_t g_nhost, g_host_cap, g_host_sizes_cap;

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (errno || *end != '\0' || v[0] == '-') {
        fprintf(stderr, "ascend-sim: ignoring invalid %s=%s\n", name, v);
        return dflt;
    }
    return x;
}

static int device_count(void)
{
    uint64_t n = env_u64("ASCEND_SIM_DEVICE_COUNT", 1);
    return n > MAX_DEVICES ? MAX_DEVICES : (int)n;
}

/* The calling thread's current device, or -1. Stale after the device was
 * released (reset to zero references, or aclFinalize). */
static int current_device(void)
{
    if (!g_initialized || t_device < 0) return -1;
    if (g_dev_refs[t_device] <= 0 || g_dev_gen[t_device] != t_device_gen) return -1;
    return t_device;
}

#define REQUIRE_INIT(api)                                                          \
    do {                                                                           \
        if (!g_initialized) {                                                      \
            aclsim_set_error("%s: AscendCL is not initialized (call aclInit first)", api); \
            aclsim_unlock();                                                       \
            return ACL_ERROR_UNINITIALIZE;                                         \
        }                                                                          \
    } while (0)

/* The opening of a runtime call that needs aclInit: the fault point, the lock,
 * then ACL_ERROR_UNINITIALIZE (unlocking) before aclInit. */
#define RT_ENTER()                                                                 \
    do {                                                                           \
        ACLSIM_FAULT_POINT();                                                      \
        aclsim_lock();                                                             \
        REQUIRE_INIT(__func__);                                                    \
    } while (0)

/* Room for one more entry in a growable table (*table, *cap entries of size
 * bytes, n in use): doubles it when full. 0 if out of host memory. */
static int table_room(void **table, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 1;
    size_t grown = *cap ? *cap * 2 : 16;
    void *t = realloc(*table, grown * size);
    if (t == NULL) return 0;
    *table = t;
    *cap = grown;
    return 1;
}

static int fail_unlock(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_unlock(int status, const char *fmt, ...)
{
    char buf[MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    aclsim_set_error("%s", buf);
    aclsim_unlock();
    return status;
}

/* ========================================================================== */
/* device memory                                                              */
/* ========================================================================== */

ACLSIM_API int aclsim_dev_in_range(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    return g_va_base != 0 && a >= g_va_base && a < g_va_base + g_va_size;
}

/* Index of the live allocation containing a, or -1. */
static long alloc_index(uint64_t a)
{
    size_t lo = 0, hi = g_nallocs;
    while (lo < hi) { /* first allocation with base > a */
        size_t mid = lo + (hi - lo) / 2;
        if (g_allocs[mid].base <= a) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const dev_alloc *d = &g_allocs[lo - 1];
    return (a < d->base + d->size) ? (long)(lo - 1) : -1;
}

ACLSIM_API int aclsim_dev_lookup(const void *p, aclsim_alloc_info *info)
{
    aclsim_lock();
    long i = alloc_index((uint64_t)(uintptr_t)p);
    if (i >= 0 && info) *info = (aclsim_alloc_info){g_allocs[i].base, g_allocs[i].size, g_allocs[i].device};
    aclsim_unlock();
    return i >= 0;
}

ACLSIM_API void *aclsim_dev_map(const void *p, uint64_t nbytes)
{
    void *host = NULL;
    uint64_t a = (uint64_t)(uintptr_t)p;
    aclsim_lock();
    long i = alloc_index(a);
    if (i >= 0) {
        const dev_alloc *d = &g_allocs[i];
        if (nbytes <= d->base + d->size - a) host = d->host + (a - d->base);
    }
    aclsim_unlock();
    return host;
}

ACLSIM_API void aclsim_dev_explain(const void *p, uint64_t nbytes, char *buf, size_t len)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    aclsim_lock();
    long i = alloc_index(a);
    if (p == NULL) {
        snprintf(buf, len, "address is NULL");
    } else if (!aclsim_dev_in_range(p)) {
        snprintf(buf, len,
                 "0x%" PRIx64 " is not device memory (it is outside the device address range: "
                 "a host pointer or garbage; device memory comes from aclrtMalloc)", a);
    } else if (i >= 0 && nbytes <= g_allocs[i].base + g_allocs[i].size - a) {
        snprintf(buf, len, "[0x%" PRIx64 ", +%" PRIu64 ") lies inside a live allocation", a, nbytes);
    } else if (i >= 0) {
        const dev_alloc *d = &g_allocs[i];
        uint64_t avail = d->base + d->size - a;
        snprintf(buf, len,
                 "[0x%" PRIx64 ", +%" PRIu64 ") overruns the allocation at 0x%" PRIx64
                 " (%" PRIu64 " bytes, %" PRIu64 " of them from 0x%" PRIx64 " on) by %" PRIu64
                 " bytes", a, nbytes, d->base, d->size, avail, a, nbytes - avail);
    } else {
        const freed_range *hit = NULL;
        size_t n = g_nfreed_total < FREED_HISTORY ? g_nfreed_total : FREED_HISTORY;
        for (size_t k = 0; k < n && hit == NULL; k++)
            if (a >= g_freed[k].base && a < g_freed[k].base + g_freed[k].size) hit = &g_freed[k];
        if (hit)
            snprintf(buf, len,
                     "0x%" PRIx64 " lies in the allocation at 0x%" PRIx64 " (%" PRIu64
                     " bytes) which was already freed (use after free)", a, hit->base, hit->size);
        else
            snprintf(buf, len,
                     "0x%" PRIx64 " is in the device address range but not inside any live "
                     "allocation (freed, or past the end of one)", a);
    }
    aclsim_unlock();
}

static void alloc_release(size_t i)
{
    dev_alloc *d = &g_allocs[i];
    g_freed[g_nfreed_total % FREED_HISTORY] = (freed_range){d->base, d->size};
    g_nfreed_total++;
    g_dev_used[d->device] -= d->size;
    g_device_bytes -= (int64_t)d->size;
    free(d->host);
    memmove(&g_allocs[i], &g_allocs[i + 1], (g_nallocs - i - 1) * sizeof *g_allocs);
    g_nallocs--;
}

/* ========================================================================== */
/* streams, events, capture: the engine                                       */
/* ========================================================================== */

/* The device clock. Each stream keeps its own clock in simulated nanoseconds; a task
 * starts when its stream's previous task finished (and, for a wait, no earlier than the
 * record it waits for) and a WORK task lasts
 *     SIM_LAUNCH_NS + bytes / SIM_BYTES_PER_NS
 * where bytes is what it reads plus what it writes. The bandwidth is Ascend910B3's from
 * CANN 8.1.RC1's data/platform_config/Ascend910B3.ini: ddr_rate=32 bytes per cycle per
 * AI core, cube_freq=1800 MHz, ai_core_cnt=20, so 32 * 1.8 * 20 = 1152 bytes/ns. No CANN
 * file gives a per-task device overhead; 3 us is this model's assumption (the order of a
 * small kernel on an A2). Both can be overridden (ASCEND_SIM_LAUNCH_NS,
 * ASCEND_SIM_BYTES_PER_NS). Nothing reads the host's clock, so elapsed times are exact
 * and repeatable. A new stream starts at its device's latest clock. */
#define SIM_LAUNCH_NS 3000ull
#define SIM_BYTES_PER_NS 1152ull
static uint64_t g_dev_clock[MAX_DEVICES];

static uint64_t task_cost_ns(uint64_t bytes)
{
    uint64_t launch = env_u64("ASCEND_SIM_LAUNCH_NS", SIM_LAUNCH_NS);
    uint64_t bw = env_u64("ASCEND_SIM_BYTES_PER_NS", SIM_BYTES_PER_NS);
    if (bw == 0) bw = SIM_BYTES_PER_NS;
    return launch + (bytes + bw - 1) / bw;
}

static sim_event **g_events;
static size_t g_nevents, g_events_cap;
static sim_model **g_models; /* models with a live handle */
static size_t g_nmodels, g_models_cap;
/* The calling thread's capture mode (aclmdlRICaptureThreadExchangeMode). */
static __thread int t_capture_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;

static void record_unref(sim_record *r)
{
    if (r && --r->refs == 0) free(r);
}

static void model_free_tasks(sim_model *m);
static void model_unref(sim_model *m)
{
    if (m && --m->refs == 0) {
        model_free_tasks(m);
        free(m->records);
        free(m);
    }
}

static void task_release(sim_task *t)
{
    if (t->kind == TASK_RECORD && t->rec && !t->rec->done) {
        /* Dropped unrun: whoever waits for it no longer waits (a faulted stream runs
         * nothing more), and it carries no timestamp. */
        t->rec->done = 1;
        t->rec->stamp_ns = NO_STAMP;
        t->rec->stream = NULL;
    }
    record_unref(t->rec);
    if (t->replay) model_unref(t->replay);
    else if (t->release) t->release(t->ctx);
    free(t);
}

static void model_free_tasks(sim_model *m)
{
    while (m->head) {
        sim_task *t = m->head;
        m->head = t->next;
        task_release(t);
    }
    m->tail = NULL;
    m->ntasks = 0;
}

static void stream_discard(sim_stream *s)
{
    while (s->head) {
        sim_task *t = s->head;
        s->head = t->next;
        g_pending_tasks--;
        s->ntasks--;
        s->done_seq = t->seq;
        task_release(t);
    }
    s->tail = NULL;
}

static void clock_advance(sim_stream *s, uint64_t to)
{
    if (to > s->clock_ns) s->clock_ns = to;
    if (s->clock_ns > g_dev_clock[s->device]) g_dev_clock[s->device] = s->clock_ns;
}

static void stream_drain_quiet(sim_stream *s, uint64_t upto);

/* Run s's first task. 0, or non-zero when it failed (its message is set). */
static int stream_step(sim_stream *s)
{
    sim_task *t = s->head;
    s->head = t->next;
    if (s->head == NULL) s->tail = NULL;
    g_pending_tasks--;
    s->ntasks--;
    int rc = 0;
    switch (t->kind) {
    case TASK_WORK:
        rc = t->run(t->ctx);
        clock_advance(s, s->clock_ns + t->cost_ns);
        break;
    case TASK_RECORD:
        t->rec->done = 1;
        t->rec->stamp_ns = s->clock_ns;
        t->rec->stream = NULL;
        break;
    case TASK_WAIT:
        /* The producer runs up to the record first: a wait is a real dependency. */
        if (!t->rec->done && t->rec->stream && t->rec->stream != s)
            stream_drain_quiet(t->rec->stream, t->rec->seq);
        if (t->rec->done && t->rec->stamp_ns != NO_STAMP) clock_advance(s, t->rec->stamp_ns);
        break;
    }
    s->done_seq = t->seq;
    task_release(t);
    return rc;
}

/* Run queued work in order up to position upto (inclusive). A failing task fails with
 * an AI Core exception and the rest of the queue is dropped, as a faulted stream is. */
static aclError stream_drain_to(sim_stream *s, uint64_t upto)
{
    if (s->draining) return ACL_SUCCESS; /* cannot happen: waits only point backwards */
    s->draining = 1;
    aclError rc = ACL_SUCCESS;
    while (s->head && s->head->seq <= upto) {
        if (stream_step(s) != 0) {
            stream_discard(s);
            rc = ACL_ERROR_RT_AICORE_EXCEPTION;
            break;
        }
    }
    s->draining = 0;
    return rc;
}

/* Run work the caller did not ask to synchronise (a full queue, another stream's wait,
 * a query): a fault waits for the stream's next sync, and the caller's own recent
 * error message is kept. */
static void stream_drain_quiet(sim_stream *s, uint64_t upto)
{
    if (s->failed_status) {
        stream_discard(s); /* a faulted stream runs nothing more */
        return;
    }
    char saved[MSG_MAX];
    const int had = t_has_pending;
    memcpy(saved, t_pending_msg, sizeof saved);
    if (stream_drain_to(s, upto) != ACL_SUCCESS) {
        s->failed_status = ACL_ERROR_RT_AICORE_EXCEPTION;
        memcpy(s->failed_msg, t_pending_msg, sizeof s->failed_msg);
    }
    memcpy(t_pending_msg, saved, sizeof saved);
    t_has_pending = had;
}

/* A sync up to position upto: a fault from an earlier drain first (the work queued
 * after it is dropped too: the stream had stopped), else the queue. */
static aclError stream_run_to(sim_stream *s, uint64_t upto)
{
    if (s->failed_status) {
        aclError rc = s->failed_status;
        aclsim_set_error("%s", s->failed_msg);
        s->failed_status = 0;
        stream_discard(s);
        return rc;
    }
    return stream_drain_to(s, upto);
}

static aclError stream_run(sim_stream *s) { return stream_run_to(s, UINT64_MAX); }

static void capture_abandon(sim_model *m);

static void stream_free(sim_stream *s)
{
    if (s->capture) {
        if (s->capture->origin == s) capture_abandon(s->capture);
        s->capture = NULL;
    }
    stream_discard(s);
    if (s->handle) {
        aclsim_handle_take(s->handle, ACLSIM_KIND_STREAM);
        for (size_t k = 0; k < g_nstreams; k++) {
            if (g_streams[k] == s) {
                g_streams[k] = g_streams[--g_nstreams];
                break;
            }
        }
    }
    free(s);
}

/* NULL means the current device's default stream (created on first use). */
static sim_stream *stream_resolve(aclrtStream stream, int *status)
{
    if (stream == NULL) {
        int dev = current_device();
        if (dev < 0) {
            *status = ACL_ERROR_RT_CONTEXT_NULL;
            aclsim_set_error("stream is NULL (default stream) but the calling thread has no current "
                             "device (call aclrtSetDevice first)");
            return NULL;
        }
        if (g_default_stream[dev] == NULL) {
            g_default_stream[dev] = calloc(1, sizeof(sim_stream));
            if (g_default_stream[dev] == NULL) {
                *status = ACL_ERROR_RT_INTERNAL_ERROR;
                aclsim_set_error("out of host memory");
                return NULL;
            }
            g_default_stream[dev]->device = dev;
            g_default_stream[dev]->clock_ns = g_dev_clock[dev];
        }
        return g_default_stream[dev];
    }
    sim_stream *s = aclsim_handle_get(stream, ACLSIM_KIND_STREAM);
    if (s == NULL) {
        *status = ACL_ERROR_RT_PARAM_INVALID;
        aclsim_set_error("stream %p is not a live stream: it is %s", stream,
                         aclsim_handle_describe(stream));
    }
    return s;
}

/* stream_resolve, once AscendCL is initialised (ACL_ERROR_UNINITIALIZE before). */
static sim_stream *stream_resolve_initialized(aclrtStream stream, int *status)
{
    if (g_initialized) return stream_resolve(stream, status);
    *status = ACL_ERROR_UNINITIALIZE;
    aclsim_set_error("AscendCL is not initialized (call aclInit first)");
    return NULL;
}

ACLSIM_API int aclsim_stream_device(aclrtStream stream, int32_t *device)
{
    int status = 0;
    aclsim_lock();
    sim_stream *s = stream_resolve_initialized(stream, &status);
    if (s) *device = s->device;
    aclsim_unlock();
    return s ? 0 : status;
}

/* Append a task to a capture's model (lock held). */
static void model_append(sim_model *m, sim_stream *s, sim_task *t)
{
    if (m->tail) m->tail->next = t;
    else m->head = t;
    m->tail = t;
    m->ntasks++;
    s->cap_last = t;
}

/* Queue t on s, or capture it when s is being captured (lock held; cannot fail). */
static void stream_put(sim_stream *s, sim_task *t)
{
    t->next = NULL;
    if (s->capture) {
        model_append(s->capture, s, t);
        return;
    }
    if (s->ntasks >= SIM_STREAM_DEPTH) {
        /* The queue is full: the device runs what it holds before taking more. */
        stream_drain_quiet(s, UINT64_MAX);
    }
    t->seq = ++s->enq_seq;
    if (s->tail) s->tail->next = t;
    else s->head = t;
    s->tail = t;
    s->ntasks++;
    g_pending_tasks++;
}

ACLSIM_API int aclsim_stream_enqueue_bytes(aclrtStream stream, const char *name, aclsim_task_run_fn run,
                                           aclsim_task_release_fn release, void *ctx, uint64_t bytes)
{
    int status = 0;
    aclsim_lock();
    sim_stream *s = stream_resolve_initialized(stream, &status);
    sim_task *t = s ? calloc(1, sizeof *t) : NULL;
    if (s && t == NULL) {
        status = ACL_ERROR_RT_INTERNAL_ERROR;
        aclsim_set_error("out of host memory");
    }
    if (t == NULL) {
        aclsim_unlock();
        release(ctx);
        return status;
    }
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = TASK_WORK;
    t->run = run;
    t->release = release;
    t->ctx = ctx;
    t->cost_ns = task_cost_ns(bytes);
    stream_put(s, t);
    aclsim_unlock();
    return 0;
}

ACLSIM_API int aclsim_stream_enqueue(aclrtStream stream, const char *name, aclsim_task_run_fn run,
                                     aclsim_task_release_fn release, void *ctx)
{
    return aclsim_stream_enqueue_bytes(stream, name, run, release, ctx, 0);
}

/* ---- capture bookkeeping ------------------------------------------------- */

/* Every stream (default ones included) of a device, newest user stream first. */
static size_t device_streams(int dev, sim_stream **out, size_t cap)
{
    size_t n = 0;
    for (size_t k = g_nstreams; k-- > 0;)
        if (g_streams[k]->device == dev && n < cap) out[n++] = g_streams[k];
    if (g_default_stream[dev] && n < cap) out[n++] = g_default_stream[dev];
    return n;
}

/* Stop capturing into m: every stream leaves it, captured records become plain
 * completed records without a timestamp. */
static void capture_detach(sim_model *m)
{
    for (size_t k = 0; k < g_nstreams; k++)
        if (g_streams[k]->capture == m) {
            g_streams[k]->capture = NULL;
            g_streams[k]->cap_last = NULL;
        }
    for (int d = 0; d < MAX_DEVICES; d++)
        if (g_default_stream[d] && g_default_stream[d]->capture == m) g_default_stream[d]->capture = NULL;
    for (size_t k = 0; k < m->nrecords; k++) {
        sim_record *r = m->records[k];
        r->capturing = 0;
        r->done = 1;
        r->stamp_ns = NO_STAMP;
        record_unref(r);
    }
    m->nrecords = 0;
    m->capturing = 0;
}

static void model_drop_handle(sim_model *m)
{
    if (m->handle == NULL) return;
    aclsim_handle_take(m->handle, ACLSIM_KIND_MODEL);
    m->handle = NULL;
    for (size_t k = 0; k < g_nmodels; k++)
        if (g_models[k] == m) {
            g_models[k] = g_models[--g_nmodels];
            break;
        }
    model_unref(m);
}

/* A capture that cannot finish (its stream or device goes): model and all. */
static void capture_abandon(sim_model *m)
{
    capture_detach(m);
    model_drop_handle(m);
}

/* A refused call on a stream being captured invalidates the capture in the newest
 * runtime (aclmdlRICaptureEnd then fails with 507903); 8.1.RC1's behaviour is not
 * public, and the simulator leaves its capture active there. */
static void capture_invalidate(sim_stream *s)
{
    if (s && s->capture && aclsim_profile_at_least("9.2.0")) s->capture->invalidated = 1;
}

/* A synchronous copy or memset is "unsafe" under capture: refused while a GLOBAL-mode
 * capture runs anywhere (unless this thread's mode is RELAXED), or a THREAD_LOCAL one
 * that this thread began. 0, or (with a message) ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT. */
static int capture_unsafe_refused(const char *api)
{
    for (size_t k = 0; k < g_nmodels; k++) {
        sim_model *m = g_models[k];
        if (!m->capturing) continue;
        int refuse = (m->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL &&
                      t_capture_mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED) ||
                     (m->mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL && pthread_equal(m->thread, pthread_self()));
        if (refuse) {
            aclsim_set_error("%s: a stream is being captured (capture mode %s) and this call is not "
                             "allowed during capture; make it before aclmdlRICaptureBegin or after "
                             "aclmdlRICaptureEnd", api,
                             m->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ? "GLOBAL" : "THREAD_LOCAL");
            return ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT;
        }
    }
    return 0;
}

/* 0, or (unlocking, with a message) ACL_ERROR_RT_STREAM_CAPTURED when s is being captured. */
static int refuse_if_captured(const char *api, sim_stream *s, aclrtStream handle)
{
    if (s == NULL || s->capture == NULL) return 0;
    capture_invalidate(s);
    return fail_unlock(ACL_ERROR_RT_STREAM_CAPTURED,
                       "%s: stream %p is being captured (aclmdlRICaptureBegin); it cannot be synchronized, "
                       "queried, destroyed or used to run a model until aclmdlRICaptureEnd", api, handle);
}

/* ========================================================================== */
/* teardown helpers                                                           */
/* ========================================================================== */

static void event_free(sim_event *e);

static void release_device(int dev)
{
    /* Captures end first (their streams go), then the streams with their queues (whose
     * replayed tasks hold models), then events and models. */
    for (size_t k = g_nmodels; k-- > 0;)
        if (g_models[k]->device == dev && g_models[k]->capturing) capture_abandon(g_models[k]);
    for (size_t k = g_nstreams; k-- > 0;)
        if (g_streams[k]->device == dev) stream_free(g_streams[k]);
    if (g_default_stream[dev]) {
        stream_free(g_default_stream[dev]);
        g_default_stream[dev] = NULL;
    }
    for (size_t k = g_nevents; k-- > 0;)
        if (g_events[k]->device == dev) event_free(g_events[k]);
    for (size_t k = g_nmodels; k-- > 0;)
        if (g_models[k]->device == dev) model_drop_handle(g_models[k]);
    for (size_t i = g_nallocs; i-- > 0;)
        if (g_allocs[i].device == dev) alloc_release(i);
    g_dev_refs[dev] = 0;
    g_dev_gen[dev]++;
    memset(g_ctx_opt_set[dev], 0, sizeof g_ctx_opt_set[dev]);
}

static void release_everything(void)
{
    for (int d = 0; d < MAX_DEVICES; d++) release_device(d);
    /* streams/allocations on devices beyond the current count cannot exist,
     * but be thorough in case ASCEND_SIM_DEVICE_COUNT shrank. */
    while (g_nstreams) stream_free(g_streams[g_nstreams - 1]);
    while (g_nevents) event_free(g_events[g_nevents - 1]);
    while (g_nmodels) model_drop_handle(g_models[g_nmodels - 1]);
    while (g_nallocs) alloc_release(g_nallocs - 1);
    for (size_t k = 0; k < g_nhost; k++) free(g_host_allocs[k]);
    g_nhost = 0;
}

/* ========================================================================== */
/* init / finalize / devices                                                  */
/* ========================================================================== */

ACLSIM_API aclError aclInit(const char *configPath)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    if (g_initialized)
        return fail_unlock(ACL_ERROR_REPEAT_INITIALIZE,
                           "aclInit: already initialized (call aclFinalize before initializing again)");
    /* CANN 8.1.RC1's acl.h: aclInit once per process, and nothing works normally after
     * aclFinalize. The ACL of that era keeps its "initialized" flag set through
     * aclFinalize, so a second aclInit is "repeatedly initialized"; hicann/runtime
     * (8.5.0 on) clears its finalize flag in aclInit and starts again. */
    if (g_finalized && !aclsim_profile_at_least("8.5.0"))
        return fail_unlock(ACL_ERROR_REPEAT_INITIALIZE,
                           "aclInit: AscendCL was already initialized and finalized in this process; CANN %s "
                           "allows one aclInit per process and nothing after aclFinalize", ACLSIM_CANN_VERSION);
    if (configPath != NULL && configPath[0] != '\0') {
        FILE *f = fopen(configPath, "r");
        if (f == NULL)
            return fail_unlock(ACL_ERROR_INVALID_FILE, "aclInit: cannot read config file '%s': %s",
                               configPath, strerror(errno));
        fclose(f);
    }
    g_initialized = 1;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclFinalize(void)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    if (!g_initialized)
        return fail_unlock(ACL_ERROR_REPEAT_FINALIZE,
                           "aclFinalize: AscendCL is not initialized (already finalized?)");
    /* Everything goes, whoever called aclInit and however often: the runtime's
     * aclFinalize ignores its aclInit count (only aclFinalizeReference counts). */
    release_everything();
    g_initialized = 0;
    g_finalized = 1;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetDeviceCount(uint32_t *count)
{
    ACLSIM_FAULT_POINT();
    if (count == NULL) {
        aclsim_set_error("aclrtGetDeviceCount: count is NULL");
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    *count = (uint32_t)device_count();
    return ACL_SUCCESS;
}

/* 0, or (unlocking) ACL_ERROR_RT_INVALID_DEVICEID for an id out of range. */
static int check_device_id(const char *api, int32_t deviceId)
{
    int n = device_count();
    if (deviceId >= 0 && deviceId < n) return 0;
    return fail_unlock(ACL_ERROR_RT_INVALID_DEVICEID, "%s: device id %d is out of range [0, %d)", api,
                       (int)deviceId, n);
}

ACLSIM_API aclError aclrtSetDevice(int32_t deviceId)
{
    RT_ENTER();
    int rc = check_device_id("aclrtSetDevice", deviceId);
    if (rc) return rc;
    g_dev_refs[deviceId]++;
    t_device = deviceId;
    t_device_gen = g_dev_gen[deviceId];
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtResetDevice(int32_t deviceId)
{
    RT_ENTER();
    int rc = check_device_id("aclrtResetDevice", deviceId);
    if (rc) return rc;
    if (g_dev_refs[deviceId] <= 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtResetDevice: device %d is not set (every aclrtResetDevice must "
                           "match an earlier aclrtSetDevice)", (int)deviceId);
    if (--g_dev_refs[deviceId] == 0) release_device(deviceId);
    if (t_device == deviceId && g_dev_refs[deviceId] == 0) t_device = -1;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetDevice(int32_t *deviceId)
{
    RT_ENTER();
    if (deviceId == NULL)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtGetDevice: deviceId is NULL");
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtGetDevice: the calling thread has no current device");
    *deviceId = dev;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                    int32_t *patchVersion)
{
    ACLSIM_FAULT_POINT();
    if (majorVersion == NULL || minorVersion == NULL || patchVersion == NULL) {
        aclsim_set_error("aclrtGetVersion: an output pointer is NULL");
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    /* The ACL version of the simulated release (build.py's profile table). */
    *majorVersion = ACLSIM_ACL_MAJOR;
    *minorVersion = ACLSIM_ACL_MINOR;
    *patchVersion = ACLSIM_ACL_PATCH;
    return ACL_SUCCESS;
}

/* The simulated install's packages are all of the simulated release; its "driver" is the
   simulator itself, reported as ASCEND_SIM_DRIVER_VERSION (unset: the release too), so a
   test can give the driver a version of its own. */
ACLSIM_API aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    ACLSIM_FAULT_POINT();
    if (version == NULL) {
        aclsim_set_error("aclsysGetCANNVersion: version is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    if ((int)name < (int)ACL_PKG_NAME_CANN || (int)name > (int)ACL_PKG_NAME_DRIVER) {
        aclsim_set_error("aclsysGetCANNVersion: no package %d", (int)name);
        return ACL_ERROR_INVALID_PARAM;
    }
    const char *v = ACLSIM_CANN_VERSION;
    const char *driver = getenv("ASCEND_SIM_DRIVER_VERSION");
    if (name == ACL_PKG_NAME_DRIVER && driver != NULL && *driver != '\0') v = driver;
    memset(version, 0, sizeof *version);
    snprintf(version->version, sizeof version->version, "%s", v);
    /* the dotted parts: "8.1.RC1" -> 8, 1, RC1 */
    char *parts[] = {version->majorVersion, version->minorVersion, version->releaseVersion, version->patchVersion};
    const char *p = v;
    for (int i = 0; i < 4 && *p; ++i) {
        size_t n = strcspn(p, ".");
        snprintf(parts[i], ACL_PKG_VERSION_PARTS_MAX_SIZE, "%.*s", (int)n, p);
        p += n + (p[n] == '.');
    }
    return ACL_SUCCESS;
}

/* ---- context system options and SoC name ------------------------------ */

static const char *sys_opt_name(int opt)
{
    return opt == ACL_OPT_DETERMINISTIC ? "ACL_OPT_DETERMINISTIC"
           : opt == ACL_OPT_ENABLE_DEBUG_KERNEL ? "ACL_OPT_ENABLE_DEBUG_KERNEL" : "unknown";
}

/* Options of CANN 8.1.RC1's aclSysParamOpt only; anything else is refused as
 * the ACL layer refuses it (ACL_ERROR_INVALID_PARAM), before the context check. */
static int check_sys_opt(const char *api, aclSysParamOpt opt)
{
    if ((int)opt != ACL_OPT_DETERMINISTIC && (int)opt != ACL_OPT_ENABLE_DEBUG_KERNEL)
        return fail_unlock(ACL_ERROR_INVALID_PARAM,
                           "%s: opt %d is not an aclSysParamOpt (ACL_OPT_DETERMINISTIC(0) or "
                           "ACL_OPT_ENABLE_DEBUG_KERNEL(1))", api, (int)opt);
    return ACL_SUCCESS;
}

/* The values a setter takes (unlocking with ACL_ERROR_RT_PARAM_INVALID otherwise):
 * the debug-kernel switch 0 or 1; the deterministic option a level in [0, 4) in the
 * newest runtime (levels 2 and 3 are the consistency modes), and 0 or 1 before it
 * (hicann/runtime 8.5.0 still bounds every option by [0, 2)). */
static int check_sys_value(const char *api, aclSysParamOpt opt, int64_t value)
{
    int64_t max = (int)opt == ACL_OPT_DETERMINISTIC && aclsim_profile_at_least("9.2.0") ? 4 : 2;
    if (value < 0 || value >= max)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "%s: value %lld for %s is out of range [0, %lld)", api,
                           (long long)value, sys_opt_name(opt), (long long)max);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    int st = check_sys_opt("aclrtCtxSetSysParamOpt", opt);
    if (st == ACL_SUCCESS) st = check_sys_value("aclrtCtxSetSysParamOpt", opt, value);
    if (st != ACL_SUCCESS) return st;
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtCtxSetSysParamOpt: the calling thread has no current context "
                           "(call aclrtSetDevice first)");
    g_ctx_opt_set[dev][opt] = 1;
    g_ctx_opt_value[dev][opt] = value;
    /* The runtime's context setter stores the process-level value too, once the
     * context has taken it (hicann/runtime rtCtxSetSysParamOpt, every public version). */
    g_proc_opt_value[opt] = value;
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* The process-level pair (CANN 8.1.RC1 acl_rt.h): no aclInit or device needed, as
 * the runtime keeps the values in the process, not in a context. */
ACLSIM_API aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    int st = check_sys_opt("aclrtSetSysParamOpt", opt);
    if (st == ACL_SUCCESS) st = check_sys_value("aclrtSetSysParamOpt", opt, value);
    if (st != ACL_SUCCESS) return st;
    g_proc_opt_value[opt] = value; /* the contexts keep their own values */
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    int st = check_sys_opt("aclrtGetSysParamOpt", opt);
    if (st != ACL_SUCCESS) return st;
    if (value == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtGetSysParamOpt: value is NULL");
    *value = g_proc_opt_value[opt]; /* 0 if never set: no "not set" status at this level */
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* ---- the deterministic option as the operators see it ------------------- */

/* The calling thread's context value of an option: 0 when it has no current
 * context or the option was never set there (what nnopbase falls back to when
 * aclrtCtxGetSysParamOpt fails). Lock held. */
static int64_t ctx_opt_or_zero(int opt)
{
    int dev = current_device();
    return dev >= 0 && g_ctx_opt_set[dev][opt] ? g_ctx_opt_value[dev][opt] : 0;
}

#define SIM_OP_TABLE 256
typedef struct {
    char name[96];
    int64_t value;
} op_value;
/* 8.1-era nnopbase: the value each op_api operator read once, at its first use. */
static op_value g_op_first_read[SIM_OP_TABLE];
static size_t g_nop_first_read;
/* ... and the one value every generated operator got, read at the first use of any. */
static int g_generated_read;
static int64_t g_generated_value;
/* aclsimLaunchDeterministic: each operator's level at its last launch. */
static op_value g_op_launch[SIM_OP_TABLE];
static size_t g_nop_launch;

static op_value *op_slot(op_value *table, size_t *n, const char *name, int create)
{
    for (size_t k = 0; k < *n; k++)
        if (strcmp(table[k].name, name) == 0) return &table[k];
    if (!create || *n == SIM_OP_TABLE) return NULL;
    op_value *v = &table[(*n)++];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->value = 0;
    return v;
}

ACLSIM_API int64_t aclsim_deterministic_for_phase1(const char *op_name, int generated)
{
    int64_t level;
    aclsim_lock();
    if (generated ? aclsim_profile_at_least("9.2.0") : aclsim_profile_at_least("9.0.0")) {
        /* hicann/opbase since c501b51 (op_api operators, CANN 9.0.0) and 60e4656
         * (generated ones, after the 9.1.0 branch): aclrtGetSysParamOpt at every
         * phase 1, kept in the executor. */
        level = g_proc_opt_value[ACL_OPT_DETERMINISTIC];
    } else if (generated) {
        /* NnopbaseInit, once per process: aclrtCtxGetSysParamOpt, as value == 1. */
        if (!g_generated_read) {
            g_generated_read = 1;
            g_generated_value = ctx_opt_or_zero(ACL_OPT_DETERMINISTIC) == 1;
        }
        level = g_generated_value;
    } else {
        /* the operator's kernel and tiling load, once: aclrtCtxGetSysParamOpt. */
        op_value *v = op_slot(g_op_first_read, &g_nop_first_read, op_name, 0);
        if (v == NULL && (v = op_slot(g_op_first_read, &g_nop_first_read, op_name, 1)) != NULL)
            v->value = ctx_opt_or_zero(ACL_OPT_DETERMINISTIC);
        level = v ? v->value : 0;
    }
    aclsim_unlock();
    return level;
}

ACLSIM_API void aclsim_record_launch(const char *op_name, int64_t deterministic)
{
    aclsim_lock();
    op_value *v = op_slot(g_op_launch, &g_nop_launch, op_name, 1);
    if (v) v->value = deterministic;
    aclsim_unlock();
}

ACLSIM_API int aclsimLaunchDeterministic(const char *aclnn_name)
{
    if (aclnn_name == NULL) return -1;
    aclsim_lock();
    op_value *v = op_slot(g_op_launch, &g_nop_launch, aclnn_name, 0);
    int level = v ? (int)v->value : -1;
    aclsim_unlock();
    return level;
}

ACLSIM_API aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    ACLSIM_FAULT_POINT();
    aclsim_lock();
    int st = check_sys_opt("aclrtCtxGetSysParamOpt", opt);
    if (st != ACL_SUCCESS) return st;
    if (value == NULL)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtCtxGetSysParamOpt: value is NULL");
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtCtxGetSysParamOpt: the calling thread has no current context "
                           "(call aclrtSetDevice first)");
    if (!g_ctx_opt_set[dev][opt])
        return fail_unlock(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
                           "aclrtCtxGetSysParamOpt: %s was never set in this context",
                           sys_opt_name(opt));
    *value = g_ctx_opt_value[dev][opt];
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* An Atlas A2 name by default; ASCEND_SIM_SOC_NAME overrides it, and an empty
 * value makes the call fail (NULL), as it does when CANN cannot tell the SoC. */
ACLSIM_API const char *aclrtGetSocName(void)
{
    ACLSIM_FAULT_POINT_PTR();
    static __thread char name[64];
    const char *env = getenv("ASCEND_SIM_SOC_NAME");
    if (env == NULL) env = "Ascend910B3";
    if (*env == '\0') {
        aclsim_set_error("aclrtGetSocName: cannot determine the SoC (ASCEND_SIM_SOC_NAME is empty)");
        return NULL;
    }
    snprintf(name, sizeof name, "%s", env);
    return name;
}

/* ========================================================================== */
/* streams (public)                                                           */
/* ========================================================================== */

/* A failed sync leaves its stream empty and clean. */
static void stream_fault_reset(sim_stream *s)
{
    stream_discard(s);
    s->failed_status = 0;
}

/* An injected fault on a sync behaves like a failed sync: the queued work of
 * the stream(s) being synchronised is discarded, exactly as after a failing
 * task, so nothing stale runs later over memory the caller has reused. */
static void sync_fault_discard(aclrtStream stream, int whole_device)
{
    aclsim_lock();
    int dev = g_initialized ? current_device() : -1;
    if (whole_device && dev >= 0) {
        if (g_default_stream[dev]) stream_fault_reset(g_default_stream[dev]);
        for (size_t k = 0; k < g_nstreams; k++)
            if (g_streams[k]->device == dev) stream_fault_reset(g_streams[k]);
    } else if (!whole_device && g_initialized) {
        sim_stream *s = stream ? aclsim_handle_get(stream, ACLSIM_KIND_STREAM)
                               : (dev >= 0 ? g_default_stream[dev] : NULL);
        if (s) stream_fault_reset(s);
    }
    aclsim_unlock();
}

#define SYNC_FAULT_POINT(stream, whole_device)                                \
    ACLSIM_FAULT_POINT_DO(sync_fault_discard(stream, whole_device), aclsim_fault_status_)

/* Run one stream's queue (the lock held; released on return). */
static aclError sync_stream_unlock(const char *api, aclrtStream stream)
{
    int status = 0;
    sim_stream *s = stream_resolve(stream, &status);
    if (s && s->capture) return refuse_if_captured(api, s, stream);
    aclError rc = s ? stream_run(s) : status;
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclError aclrtCreateStream(aclrtStream *stream)
{
    RT_ENTER();
    if (stream == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtCreateStream: stream is NULL");
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtCreateStream: the calling thread has no current device "
                           "(call aclrtSetDevice first)");
    if (!table_room((void **)&g_streams, &g_streams_cap, g_nstreams, sizeof *g_streams))
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtCreateStream: out of host memory");
    sim_stream *s = calloc(1, sizeof *s);
    void *h = s ? aclsim_handle_new(ACLSIM_KIND_STREAM, s) : NULL;
    if (h == NULL) {
        free(s);
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtCreateStream: out of host memory/handles");
    }
    s->device = dev;
    s->handle = h;
    s->clock_ns = g_dev_clock[dev];
    g_streams[g_nstreams++] = s;
    *stream = h;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtDestroyStream(aclrtStream stream)
{
    RT_ENTER();
    if (stream == NULL)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtDestroyStream: stream is NULL (the default stream cannot be destroyed)");
    sim_stream *s = aclsim_handle_get(stream, ACLSIM_KIND_STREAM);
    if (s == NULL)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyStream: %p is %s", stream,
                           aclsim_handle_describe(stream));
    if (s->capture) return refuse_if_captured("aclrtDestroyStream", s, stream);
    /* Pending work is run first; a fault in it is reported, the stream is
     * destroyed either way. */
    aclError rc = stream_run(s);
    stream_free(s);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclError aclrtSynchronizeStream(aclrtStream stream)
{
    SYNC_FAULT_POINT(stream, 0);
    aclsim_lock();
    REQUIRE_INIT("aclrtSynchronizeStream");
    return sync_stream_unlock("aclrtSynchronizeStream", stream);
}

ACLSIM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    SYNC_FAULT_POINT(stream, 0);
    aclsim_lock();
    REQUIRE_INIT("aclrtSynchronizeStreamWithTimeout");
    if (timeout < -1)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtSynchronizeStreamWithTimeout: timeout %d ms is invalid (-1 = wait "
                           "forever, >= 0 otherwise)", (int)timeout);
    /* simulated work finishes at once: the timeout never expires */
    return sync_stream_unlock("aclrtSynchronizeStreamWithTimeout", stream);
}

/* The device's streams run concurrently: a device sync interleaves them one task at a
 * time, newest stream first, so work on two streams with no event between them runs in
 * an order no single stream's queue implies (a missing wait shows). */
ACLSIM_API aclError aclrtSynchronizeDevice(void)
{
    SYNC_FAULT_POINT(NULL, 1);
    aclsim_lock();
    REQUIRE_INIT("aclrtSynchronizeDevice");
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtSynchronizeDevice: the calling thread has no current device");
    sim_stream *local[64], **all = local;
    size_t cap = g_nstreams + 1;
    if (cap > 64 && (all = malloc(cap * sizeof *all)) == NULL)
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtSynchronizeDevice: out of host memory");
    size_t n = device_streams(dev, all, cap);
    for (size_t k = 0; k < n; k++)
        if (all[k]->capture) {
            if (all != local) free(all);
            capture_invalidate(all[k]);
            return fail_unlock(ACL_ERROR_RT_STREAM_CAPTURED,
                               "aclrtSynchronizeDevice: a stream of device %d is being captured "
                               "(aclmdlRICaptureBegin); end the capture first", dev);
        }
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t k = 0; k < n; k++) {
            sim_stream *s = all[k];
            if (s->head == NULL || s->failed_status || s->draining) continue;
            progress = 1;
            stream_drain_quiet(s, s->head->seq); /* one task (and what it waits for) */
        }
    }
    aclError rc = ACL_SUCCESS;
    for (size_t k = 0; k < n; k++) {
        aclError r = stream_run(all[k]); /* reports a fault met above */
        if (rc == ACL_SUCCESS) rc = r;
    }
    if (all != local) free(all);
    aclsim_unlock();
    return rc;
}

/* How many queued tasks one query lets the device run after it answered
 * (ASCEND_SIM_QUERY_PROGRESS, read at every query): all of them up to what was asked
 * about (unset, or "all"), or at most N; with 0 a query never runs anything, so queued work
 * stays pending while the host goes on and only a sync, a full queue or aclsimDeviceStep
 * moves the device: the schedule is the test's. */
static uint64_t query_progress(void)
{
    const char *v = getenv("ASCEND_SIM_QUERY_PROGRESS");
    if (v == NULL || *v == '\0' || strcmp(v, "all") == 0) return UINT64_MAX;
    return env_u64("ASCEND_SIM_QUERY_PROGRESS", UINT64_MAX);
}

/* Let s run what a query allows, up to position upto (lock held). */
static void query_advance(sim_stream *s, uint64_t upto)
{
    const uint64_t n = query_progress();
    if (n == 0 || s->head == NULL) return;
    const uint64_t first = s->head->seq;
    if (n <= upto - first) upto = first + n - 1; /* (upto >= first: the head is not past it) */
    stream_drain_quiet(s, upto);
}

/* Not ready while work is queued; each query lets the device make progress (it runs
 * the stream's queue, or what ASCEND_SIM_QUERY_PROGRESS allows), so a polling loop ends,
 * and a fault waits for the next sync. */
ACLSIM_API aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    RT_ENTER();
    if (status == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtStreamQuery: status is NULL");
    int st = 0;
    sim_stream *s = stream_resolve(stream, &st);
    if (s == NULL) {
        aclsim_unlock();
        return st;
    }
    if (s->capture) return refuse_if_captured("aclrtStreamQuery", s, stream);
    *status = s->head ? ACL_STREAM_STATUS_NOT_READY : ACL_STREAM_STATUS_COMPLETE;
    if (s->head) query_advance(s, UINT64_MAX);
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* ========================================================================== */
/* events (public)                                                            */
/* ========================================================================== */

#define EVENT_FLAGS_KNOWN                                                     \
    (ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE | ACL_EVENT_EXTERNAL)

static int event_timing(const sim_event *e) { return e->api == EV_PLAIN || (e->flags & ACL_EVENT_TIME_LINE); }
static int event_sync(const sim_event *e) { return e->api == EV_PLAIN || (e->flags & ACL_EVENT_SYNC); }

static aclError event_create(const char *api, aclrtEvent *event, uint32_t flag, int kind)
{
    if (event == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "%s: event is NULL", api);
    if (kind != EV_PLAIN && (flag & ~EVENT_FLAGS_KNOWN))
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: flag 0x%x has unknown bits 0x%x (ACL_EVENT_SYNC 0x1, "
                           "ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x2, ACL_EVENT_TIME_LINE 0x8, ACL_EVENT_EXTERNAL 0x20)",
                           api, flag, flag & ~EVENT_FLAGS_KNOWN);
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "%s: the calling thread has no current device (call aclrtSetDevice first)", api);
    if (!table_room((void **)&g_events, &g_events_cap, g_nevents, sizeof *g_events))
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "%s: out of host memory", api);
    sim_event *e = calloc(1, sizeof *e);
    void *h = e ? aclsim_handle_new(ACLSIM_KIND_EVENT, e) : NULL;
    if (h == NULL) {
        free(e);
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "%s: out of host memory/handles", api);
    }
    e->handle = h;
    e->device = dev;
    e->flags = flag;
    e->api = kind;
    g_events[g_nevents++] = e;
    *event = h;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtCreateEvent(aclrtEvent *event)
{
    RT_ENTER();
    return event_create("aclrtCreateEvent", event, 0, EV_PLAIN);
}

ACLSIM_API aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    RT_ENTER();
    return event_create("aclrtCreateEventWithFlag", event, flag, EV_FLAG);
}

ACLSIM_API aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    RT_ENTER();
    return event_create("aclrtCreateEventExWithFlag", event, flag, EV_EX);
}

static void event_free(sim_event *e)
{
    aclsim_handle_take(e->handle, ACLSIM_KIND_EVENT);
    record_unref(e->rec);
    for (size_t k = 0; k < g_nevents; k++)
        if (g_events[k] == e) {
            g_events[k] = g_events[--g_nevents];
            break;
        }
    free(e);
}

/* The live event behind a handle, or NULL (unlocking, with a message). */
static sim_event *event_get(const char *api, const char *which, aclrtEvent event, int *status)
{
    sim_event *e = aclsim_handle_get(event, ACLSIM_KIND_EVENT);
    if (e == NULL)
        *status = fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "%s: %s %p is not a live event: it is %s", api, which,
                              event, event == NULL ? "NULL" : aclsim_handle_describe(event));
    return e;
}

/* The event and the stream of a record or a wait, which must be on one device; NULL
 * (unlocking, with *status and a message) when either is not live or they differ. */
static sim_event *event_on_stream(const char *api, aclrtEvent event, aclrtStream stream, sim_stream **sp,
                                  int *status)
{
    sim_event *e = event_get(api, "event", event, status);
    if (e == NULL) return NULL;
    sim_stream *s = stream_resolve(stream, status);
    if (s == NULL) {
        aclsim_unlock();
        return NULL;
    }
    if (s->device != e->device) {
        *status = fail_unlock(ACL_ERROR_RT_STREAM_CONTEXT,
                              "%s: event %p belongs to device %d but stream %p runs on device %d", api, event,
                              (int)e->device, stream, (int)s->device);
        return NULL;
    }
    *sp = s;
    return e;
}

/* Destroying an event does not wait: queued records and waits keep what they need. */
ACLSIM_API aclError aclrtDestroyEvent(aclrtEvent event)
{
    RT_ENTER();
    int st = 0;
    sim_event *e = event_get("aclrtDestroyEvent", "event", event, &st);
    if (e == NULL) return st;
    event_free(e);
    aclsim_unlock();
    return ACL_SUCCESS;
}

static sim_task *task_new(int kind, const char *name, sim_record *rec)
{
    sim_task *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->kind = kind;
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rec = rec;
    rec->refs++;
    return t;
}

ACLSIM_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    RT_ENTER();
    int st = 0;
    sim_stream *s = NULL;
    sim_event *e = event_on_stream("aclrtRecordEvent", event, stream, &s, &st);
    if (e == NULL) return st;
    if (s->capture) {
        /* Only events of aclrtCreateEventExWithFlag take part in a capture; one with
         * no wait task (neither SYNC nor EXTERNAL) is skipped there (hicann/runtime). */
        if (e->api != EV_EX && !(e->flags & ACL_EVENT_EXTERNAL)) {
            capture_invalidate(s);
            return fail_unlock(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                               "aclrtRecordEvent: stream %p is being captured and event %p was not created "
                               "with aclrtCreateEventExWithFlag; only those can be recorded in a capture",
                               stream, event);
        }
        if (!(e->flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL))) {
            aclsim_unlock();
            return ACL_SUCCESS;
        }
    }
    sim_model *m = s->capture;
    if (m && !table_room((void **)&m->records, &m->records_cap, m->nrecords, sizeof *m->records))
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtRecordEvent: out of host memory");
    sim_record *r = calloc(1, sizeof *r);
    sim_task *t = r ? task_new(TASK_RECORD, "aclrtRecordEvent", r) : NULL;
    if (t == NULL) {
        free(r);
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtRecordEvent: out of host memory");
    }
    r->refs++; /* the event's */
    r->stamp_ns = NO_STAMP;
    if (m) {
        r->capturing = 1;
        r->refs++; /* the model's list */
        m->records[m->nrecords++] = r;
    } else {
        r->stream = s;
    }
    record_unref(e->rec);
    e->rec = r;
    stream_put(s, t);
    if (!m) r->seq = t->seq;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    RT_ENTER();
    int st = 0;
    sim_stream *s = NULL;
    sim_event *e = event_on_stream("aclrtStreamWaitEvent", event, stream, &s, &st);
    if (e == NULL) return st;
    if (!event_sync(e))
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtStreamWaitEvent: event %p was created without ACL_EVENT_SYNC (flag 0x%x): "
                           "a stream cannot wait on it", event, e->flags);
    sim_record *r = e->rec;
    if (r && r->capturing) {
        sim_model *m = NULL;
        for (size_t k = 0; k < g_nmodels && m == NULL; k++)
            for (size_t j = 0; j < g_models[k]->nrecords; j++)
                if (g_models[k]->records[j] == r) m = g_models[k];
        if (s->capture == NULL) {
            /* Waiting on a captured event pulls the stream into that capture (a fork);
             * the context's default stream cannot take part. */
            if (s->handle == NULL)
                return fail_unlock(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                                   "aclrtStreamWaitEvent: event %p was recorded in a capture and the default "
                                   "stream cannot join a capture", event);
            s->capture = m;
        } else if (s->capture != m) {
            capture_invalidate(s);
            return fail_unlock(ACL_ERROR_RT_CAPTURE_DEPENDENCY,
                               "aclrtStreamWaitEvent: stream %p is being captured and event %p was recorded in "
                               "another capture", stream, event);
        }
        if (m && s == m->origin) r->joined = 1;
    } else if (s->capture) {
        capture_invalidate(s);
        return fail_unlock(ACL_ERROR_RT_CAPTURE_DEPENDENCY,
                           "aclrtStreamWaitEvent: stream %p is being captured and event %p was %s outside the "
                           "capture; a capture can only wait on events recorded inside it", stream, event,
                           r ? "recorded" : "never recorded");
    }
    if (r == NULL) { /* never recorded: nothing to wait for */
        aclsim_unlock();
        return ACL_SUCCESS;
    }
    sim_task *t = task_new(TASK_WAIT, "aclrtStreamWaitEvent", r);
    if (t == NULL) return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtStreamWaitEvent: out of host memory");
    stream_put(s, t);
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* 0, or (unlocking) ACL_ERROR_RT_EVENT_CAPTURED for an event recorded in a capture
 * still in progress. */
static int refuse_captured_event(const char *api, const sim_event *e, aclrtEvent event)
{
    if (e->rec == NULL || !e->rec->capturing) return 0;
    return fail_unlock(ACL_ERROR_RT_EVENT_CAPTURED,
                       "%s: event %p was recorded in a capture still in progress; it cannot be synchronized, "
                       "queried or timed until aclmdlRICaptureEnd", api, event);
}

ACLSIM_API aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    RT_ENTER();
    int st = 0;
    sim_event *e = event_get("aclrtQueryEventStatus", "event", event, &st);
    if (e == NULL) return st;
    if (status == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtQueryEventStatus: status is NULL");
    if ((st = refuse_captured_event("aclrtQueryEventStatus", e, event))) return st;
    sim_record *r = e->rec;
    if (r == NULL) {
        /* never recorded: complete for an Ex event, not ready for the older ones */
        *status = e->api == EV_EX ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    } else if (r->done) {
        *status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    } else {
        *status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
        if (r->stream) query_advance(r->stream, r->seq); /* progress for the next query */
    }
    aclsim_unlock();
    return ACL_SUCCESS;
}

static void event_sync_fault(aclrtEvent event)
{
    aclsim_lock();
    sim_event *e = g_initialized ? aclsim_handle_get(event, ACLSIM_KIND_EVENT) : NULL;
    if (e && e->rec && !e->rec->done && e->rec->stream) stream_fault_reset(e->rec->stream);
    aclsim_unlock();
}

/* Runs the recording stream up to the record; a fault there is reported here (and the
 * rest of that stream's queue dropped), as a stream sync would. */
ACLSIM_API aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    ACLSIM_FAULT_POINT_DO(event_sync_fault(event), aclsim_fault_status_);
    aclsim_lock();
    REQUIRE_INIT("aclrtSynchronizeEvent");
    int st = 0;
    sim_event *e = event_get("aclrtSynchronizeEvent", "event", event, &st);
    if (e == NULL) return st;
    if ((st = refuse_captured_event("aclrtSynchronizeEvent", e, event))) return st;
    aclError rc = ACL_SUCCESS;
    if (e->rec && !e->rec->done && e->rec->stream) rc = stream_run_to(e->rec->stream, e->rec->seq);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    RT_ENTER();
    int st = 0;
    if (ms == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtEventElapsedTime: ms is NULL");
    sim_event *a = event_get("aclrtEventElapsedTime", "startEvent", startEvent, &st);
    if (a == NULL) return st;
    sim_event *b = event_get("aclrtEventElapsedTime", "endEvent", endEvent, &st);
    if (b == NULL) return st;
    if ((st = refuse_captured_event("aclrtEventElapsedTime", a, startEvent))) return st;
    if ((st = refuse_captured_event("aclrtEventElapsedTime", b, endEvent))) return st;
    if ((a->flags | b->flags) & ACL_EVENT_EXTERNAL)
        return fail_unlock(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                           "aclrtEventElapsedTime: external events (ACL_EVENT_EXTERNAL) carry no time");
    if (a->rec == NULL || b->rec == NULL)
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtEventElapsedTime: %s %p was never recorded",
                           a->rec == NULL ? "startEvent" : "endEvent", a->rec == NULL ? startEvent : endEvent);
    const sim_event *evs[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        const sim_event *e = evs[i];
        const char *which = i ? "endEvent" : "startEvent";
        void *h = i ? endEvent : startEvent;
        if (!event_timing(e))
            return fail_unlock(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                               "aclrtEventElapsedTime: %s %p has no timestamp: it was created without "
                               "ACL_EVENT_TIME_LINE (flag 0x%x)", which, h, e->flags);
        if (!e->rec->done)
            return fail_unlock(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                               "aclrtEventElapsedTime: %s %p has no timestamp yet: its record has not run "
                               "(synchronize the event first)", which, h);
        if (e->rec->stamp_ns == NO_STAMP)
            return fail_unlock(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                               "aclrtEventElapsedTime: %s %p has no timestamp: its record was dropped with its "
                               "stream's queue or made inside a capture", which, h);
    }
    *ms = (float)(((double)b->rec->stamp_ns - (double)a->rec->stamp_ns) / 1e6);
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* ========================================================================== */
/* stream capture into a model runtime instance (public)                      */
/* ========================================================================== */

ACLSIM_API aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    RT_ENTER();
    if (stream == NULL)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "aclmdlRICaptureBegin: stream is NULL; the default stream cannot be captured");
    if ((int)mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || (int)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "aclmdlRICaptureBegin: mode %d is not an aclmdlRICaptureMode (0 GLOBAL, 1 "
                           "THREAD_LOCAL, 2 RELAXED)", (int)mode);
    int st = 0;
    sim_stream *s = stream_resolve(stream, &st);
    if (s == NULL) {
        aclsim_unlock();
        return st;
    }
    if (s->capture)
        return fail_unlock(ACL_ERROR_RT_STREAM_CAPTURED,
                           "aclmdlRICaptureBegin: stream %p is already being captured", stream);
    if (!table_room((void **)&g_models, &g_models_cap, g_nmodels, sizeof *g_models))
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclmdlRICaptureBegin: out of host memory");
    sim_model *m = calloc(1, sizeof *m);
    void *h = m ? aclsim_handle_new(ACLSIM_KIND_MODEL, m) : NULL;
    if (h == NULL) {
        free(m);
        return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclmdlRICaptureBegin: out of host memory/handles");
    }
    m->handle = h;
    m->refs = 1;
    m->device = s->device;
    m->capturing = 1;
    m->mode = (int)mode;
    m->thread = pthread_self();
    m->origin = s;
    g_models[g_nmodels++] = m;
    s->capture = m;
    s->cap_last = NULL;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)
{
    RT_ENTER();
    if (status == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureGetInfo: status is NULL");
    int st = 0;
    sim_stream *s = stream_resolve(stream, &st);
    if (s == NULL) {
        aclsim_unlock();
        return st;
    }
    sim_model *m = s->capture;
    *status = m == NULL ? ACL_MODEL_RI_CAPTURE_STATUS_NONE
              : m->invalidated ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED : ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    if (modelRI) *modelRI = m ? m->handle : NULL;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    RT_ENTER();
    if (modelRI == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureEnd: modelRI is NULL");
    int st = 0;
    sim_stream *s = stream_resolve(stream, &st);
    if (s == NULL) {
        aclsim_unlock();
        return st;
    }
    sim_model *m = s->capture;
    if (m == NULL)
        return fail_unlock(ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                           "aclmdlRICaptureEnd: stream %p is not being captured", stream);
    const int newest = aclsim_profile_at_least("9.2.0");
    if (m->origin != s)
        return fail_unlock(newest ? ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED : ACL_ERROR_RT_PARAM_INVALID,
                           "aclmdlRICaptureEnd: stream %p joined the capture through an event; end it on the "
                           "stream that began it (%p)", stream, m->origin->handle);
    if (newest && m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED && !pthread_equal(m->thread, pthread_self()))
        return fail_unlock(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                           "aclmdlRICaptureEnd: the capture on stream %p was begun by another thread", stream);
    *modelRI = NULL;
    if (newest && m->invalidated) {
        capture_abandon(m);
        return fail_unlock(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                           "aclmdlRICaptureEnd: the capture on stream %p was invalidated by a call it refused; "
                           "nothing was captured", stream);
    }
    /* Every stream forked into the capture must end in a record the origin waited on. */
    for (size_t k = 0; k < g_nstreams; k++) {
        sim_stream *f = g_streams[k];
        if (f->capture != m || f == s) continue;
        if (f->cap_last == NULL || f->cap_last->kind != TASK_RECORD || !f->cap_last->rec->joined) {
            void *fh = f->handle;
            capture_abandon(m);
            return fail_unlock(ACL_ERROR_RT_STREAM_UNJOINED,
                               "aclmdlRICaptureEnd: stream %p joined the capture but was not joined back: its "
                               "last captured task must record an event that stream %p then waits on", fh,
                               stream);
        }
    }
    capture_detach(m);
    *modelRI = m->handle;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    RT_ENTER();
    if (mode == NULL)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureThreadExchangeMode: mode is NULL");
    if ((int)*mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || (int)*mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                           "aclmdlRICaptureThreadExchangeMode: mode %d is not an aclmdlRICaptureMode", (int)*mode);
    int old = t_capture_mode;
    t_capture_mode = (int)*mode;
    *mode = (aclmdlRICaptureMode)old;
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* The live model behind a handle, or NULL (unlocking, with a message). */
static sim_model *model_get(const char *api, aclmdlRI modelRI, int *status)
{
    sim_model *m = aclsim_handle_get(modelRI, ACLSIM_KIND_MODEL);
    if (m == NULL)
        *status = fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "%s: modelRI %p is not a live model: it is %s", api,
                              modelRI, modelRI == NULL ? "NULL" : aclsim_handle_describe(modelRI));
    return m;
}

/* Queues the captured work on the stream; the tasks read and write the addresses they
 * were captured with, so they see the memory's current contents. */
ACLSIM_API aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    RT_ENTER();
    int st = 0;
    sim_model *m = model_get("aclmdlRIExecuteAsync", modelRI, &st);
    if (m == NULL) return st;
    sim_stream *s = stream_resolve(stream, &st);
    if (s == NULL) {
        aclsim_unlock();
        return st;
    }
    if (s->capture) return refuse_if_captured("aclmdlRIExecuteAsync", s, stream);
    if (m->capturing)
        return fail_unlock(ACL_ERROR_RT_MODEL_CAPTURED,
                           "aclmdlRIExecuteAsync: modelRI %p is still being captured (aclmdlRICaptureEnd first)",
                           modelRI);
    if (s->device != m->device)
        return fail_unlock(ACL_ERROR_RT_MODEL_CONTEXT,
                           "aclmdlRIExecuteAsync: modelRI %p was captured on device %d but stream %p runs on "
                           "device %d", modelRI, (int)m->device, stream, (int)s->device);
    for (sim_task *c = m->head; c; c = c->next) {
        if (c->kind != TASK_WORK) continue; /* replayed in issue order: the waits hold by construction */
        sim_task *t = calloc(1, sizeof *t);
        if (t == NULL) return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclmdlRIExecuteAsync: out of host memory");
        memcpy(t->name, c->name, sizeof t->name);
        t->kind = TASK_WORK;
        t->run = c->run;
        t->ctx = c->ctx;
        t->cost_ns = c->cost_ns;
        t->replay = m;
        m->refs++;
        stream_put(s, t);
    }
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* Replays still queued keep what they run; the model goes after the last of them. */
ACLSIM_API aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    RT_ENTER();
    int st = 0;
    sim_model *m = model_get("aclmdlRIDestroy", modelRI, &st);
    if (m == NULL) return st;
    if (m->capturing)
        return fail_unlock(ACL_ERROR_RT_MODEL_CAPTURED,
                           "aclmdlRIDestroy: modelRI %p is still being captured (aclmdlRICaptureEnd first)",
                           modelRI);
    model_drop_handle(m);
    aclsim_unlock();
    return ACL_SUCCESS;
}

/* ========================================================================== */
/* memory (public)                                                            */
/* ========================================================================== */

ACLSIM_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    RT_ENTER();
    if (devPtr == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMalloc: devPtr is NULL");
    if (size == 0) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMalloc: size is 0");
    unsigned flags = ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH |
                     ACL_MEM_ACCESS_USER_SPACE_READONLY;
    unsigned base_policy = (unsigned)policy & ~flags;
    if ((int)policy < 0 || base_policy > ACL_MEM_MALLOC_HUGE1G_ONLY_P2P)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMalloc: unknown memory policy 0x%x",
                           (unsigned)policy);
    int dev = current_device();
    if (dev < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtMalloc: the calling thread has no current device (call aclrtSetDevice first)");
    uint64_t cap = env_u64("ASCEND_SIM_DEVICE_MEMORY", DEFAULT_DEVICE_MEMORY);
    if ((uint64_t)size > cap || g_dev_used[dev] > cap - (uint64_t)size)
        return fail_unlock(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "aclrtMalloc: out of device memory on device %d: %zu bytes requested, %" PRIu64
                           " of %" PRIu64 " bytes in use (ASCEND_SIM_DEVICE_MEMORY)",
                           dev, size, g_dev_used[dev], cap);
    if (g_va_base == 0 && reserve_range(DEV_VA_WANTED, &g_va_base, &g_va_size) == 0)
        g_va_next = g_va_base + DEV_ALIGN * 8; /* keep the first bytes unused */
    uint64_t span = ((uint64_t)size + DEV_ALIGN - 1) / DEV_ALIGN * DEV_ALIGN + DEV_GUARD;
    if (g_va_base == 0 || span < size || g_va_base + g_va_size - g_va_next < span)
        return fail_unlock(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "aclrtMalloc: simulated device address space exhausted (addresses are never reused)");
    if (g_nallocs == g_allocs_cap) {
        size_t ncap = g_allocs_cap ? g_allocs_cap * 2 : 64;
        dev_alloc *n = realloc(g_allocs, ncap * sizeof *n);
        if (n == NULL) return fail_unlock(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: out of host memory");
        g_allocs = n;
        g_allocs_cap = ncap;
    }
    unsigned char *host = malloc(size);
    if (host == NULL)
        return fail_unlock(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "aclrtMalloc: no host memory to back %zu simulated device bytes", size);
    /* Real device memory is not zeroed; poison it so reads of never-written
     * bytes show up (NaN for floats, all-ones for integers). */
    memset(host, POISON_BYTE, size);
    uint64_t addr = g_va_next;
    g_va_next += span;
    g_allocs[g_nallocs++] = (dev_alloc){addr, size, dev, host};
    g_dev_used[dev] += size;
    g_device_bytes += (int64_t)size;
    *devPtr = (void *)(uintptr_t)addr;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtFree(void *devPtr)
{
    RT_ENTER();
    if (devPtr == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtFree: devPtr is NULL");
    uint64_t a = (uint64_t)(uintptr_t)devPtr;
    long i = alloc_index(a);
    if (i < 0 || g_allocs[i].base != a) {
        char why[512];
        if (i >= 0)
            snprintf(why, sizeof why,
                     "it points %" PRIu64 " bytes into the allocation at 0x%" PRIx64
                     " (only the address returned by aclrtMalloc can be freed)", a - g_allocs[i].base,
                     g_allocs[i].base);
        else
            aclsim_dev_explain(devPtr, 0, why, sizeof why);
        return fail_unlock(ACL_ERROR_RT_MEMORY_FREE, "aclrtFree: cannot free %p: %s", devPtr, why);
    }
    alloc_release((size_t)i);
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    RT_ENTER();
    if (hostPtr == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMallocHost: hostPtr is NULL");
    if (size == 0) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMallocHost: size is 0");
    if (!table_room((void **)&g_host_allocs, &g_host_cap, g_nhost, sizeof *g_host_allocs) ||
        !table_room((void **)&g_host_sizes, &g_host_sizes_cap, g_nhost, sizeof *g_host_sizes))
        return fail_unlock(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMallocHost: out of host memory");
    void *p = NULL;
    if (posix_memalign(&p, 64, size) != 0)
        return fail_unlock(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMallocHost: out of host memory (%zu bytes)", size);
    g_host_sizes[g_nhost] = size;
    g_host_allocs[g_nhost++] = p;
    *hostPtr = p;
    aclsim_unlock();
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtFreeHost(void *hostPtr)
{
    RT_ENTER();
    if (hostPtr == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtFreeHost: hostPtr is NULL");
    for (size_t k = 0; k < g_nhost; k++) {
        if (g_host_allocs[k] == hostPtr) {
            free(hostPtr);
            g_host_allocs[k] = g_host_allocs[--g_nhost];
            g_host_sizes[k] = g_host_sizes[g_nhost];
            aclsim_unlock();
            return ACL_SUCCESS;
        }
    }
    return fail_unlock(ACL_ERROR_RT_MEMORY_FREE,
                       "aclrtFreeHost: %p was not returned by aclrtMallocHost (or was already freed)%s",
                       hostPtr, aclsim_dev_in_range(hostPtr) ? "; it is device memory: use aclrtFree" : "");
}

/* ---- copies --------------------------------------------------------------- */

static const char *kind_name(int kind)
{
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT: return "ACL_MEMCPY_DEFAULT";
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE";
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: return "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: return "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE";
    default: return "unknown kind";
    }
}

typedef struct {
    uint64_t dst, src, count;
    int dst_dev, src_dev; /* side lives in device memory */
} copy_plan;

/* Check one side of a copy. want_dev: the kind says this side is device memory. */
static int check_side(const char *api, const char *which, const void *p, uint64_t count,
                      int want_dev, int kind)
{
    int is_dev = aclsim_dev_in_range(p);
    if (want_dev && !is_dev) {
        aclsim_set_error("%s: %s %p is not device memory, but %s needs %s on the device "
                         "(host/device arguments swapped, or wrong kind?)",
                         api, which, p, kind_name(kind), which);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    if (!want_dev && is_dev) {
        aclsim_set_error("%s: %s %p is a device address, but %s needs %s in host memory "
                         "(host/device arguments swapped, or wrong kind?)",
                         api, which, p, kind_name(kind), which);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    if (want_dev && count > 0 && aclsim_dev_map(p, count) == NULL) {
        char why[512];
        aclsim_dev_explain(p, count, why, sizeof why);
        aclsim_set_error("%s: %s range [%p, +%" PRIu64 ") is not inside one live device allocation: %s",
                         api, which, p, count, why);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    return 0;
}

static int copy_validate(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                         int kind, copy_plan *plan)
{
    if (dst == NULL || src == NULL) {
        aclsim_set_error("%s: %s is NULL", api, dst == NULL ? "dst" : "src");
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    if (count > destMax) {
        aclsim_set_error("%s: count %zu exceeds destMax %zu", api, count, destMax);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    int dst_dev, src_dev;
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: dst_dev = 0; src_dev = 0; break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: dst_dev = 1; src_dev = 0; break;
    case ACL_MEMCPY_DEVICE_TO_HOST: dst_dev = 0; src_dev = 1; break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: dst_dev = 1; src_dev = 1; break;
    case ACL_MEMCPY_DEFAULT: /* the runtime infers the direction from the addresses */
        dst_dev = aclsim_dev_in_range(dst);
        src_dev = aclsim_dev_in_range(src);
        break;
    default:
        aclsim_set_error("%s: unknown aclrtMemcpyKind %d", api, kind);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    int rc = check_side(api, "dst", dst, count, dst_dev, kind);
    if (rc == 0) rc = check_side(api, "src", src, count, src_dev, kind);
    if (rc) return rc;
    *plan = (copy_plan){(uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, count, dst_dev, src_dev};
    return 0;
}

/* Resolve both sides to host memory; NULL if a device side is no longer live. */
static int copy_execute(const char *api, const copy_plan *p)
{
    void *d = (void *)(uintptr_t)p->dst;
    const void *s = (const void *)(uintptr_t)p->src;
    if (p->count == 0) return 0;
    if (p->dst_dev) d = aclsim_dev_map(d, p->count);
    if (p->src_dev) s = aclsim_dev_map(s, p->count);
    if (d == NULL || s == NULL) {
        char why[512];
        const void *bad = d == NULL ? (const void *)(uintptr_t)p->dst : (const void *)(uintptr_t)p->src;
        aclsim_dev_explain(bad, p->count, why, sizeof why);
        aclsim_set_error("%s: %s range [%p, +%" PRIu64 ") is no longer valid device memory: %s", api,
                         d == NULL ? "dst" : "src", bad, p->count, why);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    memmove(d, s, p->count);
    return 0;
}

ACLSIM_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                aclrtMemcpyKind kind)
{
    RT_ENTER();
    if (current_device() < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL, "aclrtMemcpy: the calling thread has no current device");
    int refused = capture_unsafe_refused("aclrtMemcpy");
    if (refused) {
        aclsim_unlock();
        return refused;
    }
    copy_plan plan;
    int rc = copy_validate("aclrtMemcpy", dst, destMax, src, count, (int)kind, &plan);
    if (rc == 0) rc = copy_execute("aclrtMemcpy", &plan); /* cannot fail: just validated */
    /* Deliberately does not wait for queued stream work (as on hardware). */
    aclsim_unlock();
    return rc;
}

/* [p, p+n) inside one aclrtMallocHost allocation. */
static int host_pinned(const void *p, size_t n)
{
    const char *c = p;
    for (size_t k = 0; k < g_nhost; k++) {
        const char *b = g_host_allocs[k];
        if (c >= b && c < b + g_host_sizes[k] && n <= (size_t)(b + g_host_sizes[k] - c)) return 1;
    }
    return 0;
}

static int async_copy_run(void *ctx) { return copy_execute("aclrtMemcpyAsync (at stream sync)", ctx); }
static void async_copy_release(void *ctx) { free(ctx); }

ACLSIM_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                     aclrtMemcpyKind kind, aclrtStream stream)
{
    RT_ENTER();
    copy_plan plan;
    int rc = copy_validate("aclrtMemcpyAsync", dst, destMax, src, count, (int)kind, &plan);
    if (rc) {
        aclsim_unlock();
        return rc;
    }
    int status = 0;
    sim_stream *s = stream_resolve(stream, &status);
    if (s == NULL) {
        aclsim_unlock();
        return status;
    }
    if (s->capture && count > 0 && (!plan.dst_dev || !plan.src_dev)) {
        const void *host = plan.dst_dev ? src : dst;
        if (!host_pinned(host, count)) {
            capture_invalidate(s);
            return fail_unlock(ACL_ERROR_RT_PARAM_INVALID,
                               "aclrtMemcpyAsync: stream %p is being captured and %s %p is pageable host memory; "
                               "a captured copy needs host memory from aclrtMallocHost", stream,
                               plan.dst_dev ? "src" : "dst", host);
        }
    }
    copy_plan *ctx = malloc(sizeof *ctx);
    if (ctx == NULL) return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtMemcpyAsync: out of host memory");
    *ctx = plan;
    /* The copy happens when the stream is synchronised: host memory must stay
     * valid until then, exactly as with real asynchronous DMA. */
    /* device to device reads and writes the bytes; a host side crosses the bus once */
    uint64_t moved = (plan.dst_dev && plan.src_dev) ? 2 * (uint64_t)count : (uint64_t)count;
    rc = aclsim_stream_enqueue_bytes(stream, "aclrtMemcpyAsync", async_copy_run, async_copy_release, ctx, moved);
    aclsim_unlock();
    return rc;
}

ACLSIM_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    RT_ENTER();
    if (devPtr == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemset: devPtr is NULL");
    if (count > maxCount)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemset: count %zu exceeds maxCount %zu", count,
                           maxCount);
    if (current_device() < 0)
        return fail_unlock(ACL_ERROR_RT_CONTEXT_NULL, "aclrtMemset: the calling thread has no current device");
    int refused = capture_unsafe_refused("aclrtMemset");
    if (refused) {
        aclsim_unlock();
        return refused;
    }
    if (count > 0) {
        void *h = aclsim_dev_map(devPtr, count);
        if (h == NULL) {
            char why[512];
            aclsim_dev_explain(devPtr, count, why, sizeof why);
            return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemset: [%p, +%zu) is not inside one live "
                               "device allocation: %s", devPtr, count, why);
        }
        memset(h, value & 0xFF, count);
    } else if (!aclsim_dev_in_range(devPtr)) {
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemset: %p is not device memory", devPtr);
    }
    aclsim_unlock();
    return ACL_SUCCESS;
}

typedef struct {
    uint64_t dst, count;
    int value;
} memset_plan;

static int async_memset_run(void *ctx)
{
    const memset_plan *p = ctx;
    void *h = p->count ? aclsim_dev_map((void *)(uintptr_t)p->dst, p->count) : NULL;
    if (p->count && h == NULL) {
        char why[512];
        aclsim_dev_explain((void *)(uintptr_t)p->dst, p->count, why, sizeof why);
        aclsim_set_error("aclrtMemsetAsync (at stream sync): [0x%" PRIx64 ", +%" PRIu64 ") is no longer valid "
                         "device memory: %s", p->dst, p->count, why);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (p->count) memset(h, p->value & 0xFF, p->count);
    return 0;
}

/* Checked now, written when the stream runs it (or captured, like any task). */
ACLSIM_API aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream)
{
    RT_ENTER();
    if (devPtr == NULL) return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemsetAsync: devPtr is NULL");
    if (count > maxCount)
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemsetAsync: count %zu exceeds maxCount %zu", count,
                           maxCount);
    if (count > 0 && aclsim_dev_map(devPtr, count) == NULL) {
        char why[512];
        aclsim_dev_explain(devPtr, count, why, sizeof why);
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemsetAsync: [%p, +%zu) is not inside one live "
                           "device allocation: %s", devPtr, count, why);
    }
    if (count == 0 && !aclsim_dev_in_range(devPtr))
        return fail_unlock(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemsetAsync: %p is not device memory", devPtr);
    int status = 0;
    if (stream_resolve(stream, &status) == NULL) {
        aclsim_unlock();
        return status;
    }
    memset_plan *ctx = malloc(sizeof *ctx);
    if (ctx == NULL) return fail_unlock(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtMemsetAsync: out of host memory");
    *ctx = (memset_plan){(uint64_t)(uintptr_t)devPtr, count, value};
    int rc = aclsim_stream_enqueue_bytes(stream, "aclrtMemsetAsync", async_memset_run, free, ctx, count);
    aclsim_unlock();
    return rc;
}

/* ========================================================================== */
/* error message, test extras                                                 */
/* ========================================================================== */

ACLSIM_API const char *aclGetRecentErrMsg(void)
{
    ACLSIM_FAULT_POINT_PTR();
    if (!t_has_pending) return NULL;
    memcpy(t_returned_msg, t_pending_msg, sizeof t_returned_msg);
    t_has_pending = 0;
    return t_returned_msg;
}

/* The device runs up to `tasks` queued tasks of its streams, interleaved one at a time
 * newest stream first as aclrtSynchronizeDevice runs them (a wait also runs what it waits
 * for); a fault waits for the stream's next sync. Returns the tasks taken off the queues,
 * or -1 (no such initialised device, tasks < 0). With ASCEND_SIM_QUERY_PROGRESS=0 this is
 * the only way the device moves between the host's syncs. */
ACLSIM_API int64_t aclsimDeviceStep(int32_t device, int64_t tasks)
{
    aclsim_lock();
    if (!g_initialized || device < 0 || device >= MAX_DEVICES || device >= device_count() || tasks < 0) {
        aclsim_unlock();
        return -1;
    }
    sim_stream *local[64], **all = local;
    size_t cap = g_nstreams + 1;
    if (cap > 64 && (all = malloc(cap * sizeof *all)) == NULL) {
        aclsim_unlock();
        return -1;
    }
    const size_t n = device_streams(device, all, cap);
    const int64_t before = g_pending_tasks;
    for (int progress = 1; progress && before - g_pending_tasks < tasks;) {
        progress = 0;
        for (size_t k = 0; k < n && before - g_pending_tasks < tasks; k++) {
            sim_stream *s = all[k];
            if (s->head == NULL || s->failed_status || s->draining) continue;
            progress = 1;
            stream_drain_quiet(s, s->head->seq);
        }
    }
    const int64_t ran = before - g_pending_tasks;
    if (all != local) free(all);
    aclsim_unlock();
    return ran;
}

ACLSIM_API int64_t aclsimLiveCount(const char *kind)
{
    static const char *const kind_names[ACLSIM_KIND_COUNT] = {
        "streams", "tensors", "int_arrays", "float_arrays", "bool_arrays", "scalars", "executors",
        "tensor_lists", "scalar_lists", "events", "models"};
    if (kind == NULL) return -1;
    int64_t v = -1;
    aclsim_lock();
    if (strcmp(kind, "device_allocations") == 0) v = (int64_t)g_nallocs;
    else if (strcmp(kind, "device_bytes") == 0) v = g_device_bytes;
    else if (strcmp(kind, "host_allocations") == 0) v = (int64_t)g_nhost;
    else if (strcmp(kind, "pending_tasks") == 0) v = g_pending_tasks;
    else
        for (int k = 0; k < ACLSIM_KIND_COUNT; k++)
            if (strcmp(kind, kind_names[k]) == 0) v = g_kind_count[k];
    aclsim_unlock();
    return v;
}
