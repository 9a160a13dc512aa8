/*
 * acl_abi.h - the slice of the CANN C ABI that the simulator implements.
 *
 * Written for this project from facts (types, prototypes, enum values, status
 * codes) of CANN 8.1.RC1's acl/ and aclnn/ headers and the open-source
 * hicann/runtime and hicann/opbase. It is not a CANN header: only the numbers
 * and parameter lists are shared with the real ones.
 *
 * Declaring every exported runtime and nnopbase function here makes the
 * compiler check that the simulator's definitions keep exactly these parameter
 * types. Operators are declared in their own headers under include/aclnnop/, which
 * build.py also installs; the basic types come from include/aclnn/aclnn_base.h.
 */
#ifndef ACLSIM_ACL_ABI_H
#define ACLSIM_ACL_ABI_H

#include "aclnn/aclnn_base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols that are part of a library's public surface. Everything else is
 * compiled with -fvisibility=hidden. */
#define ACLSIM_API __attribute__((visibility("default")))

/* ---- basic types (§1; the aclnn ones are in aclnn/aclnn_base.h) ----------- */
typedef int aclError;

/* ---- aclDataType (§5.1): in aclnn/aclnn_base.h, which the operator headers need it from */

/* ---- aclFormat (§5.2) ----------------------------------------------------- */
typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54
} aclFormat;

/* ---- aclrtMemcpyKind (§5.3) ----------------------------------------------- */
typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7
} aclrtMemcpyKind;

/* ---- aclrtMemMallocPolicy (§5.4) ------------------------------------------ */
typedef enum {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

/* ---- aclError values (§5.5) ----------------------------------------------- */
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INVALID_FILE 100003
#define ACL_ERROR_REPEAT_FINALIZE 100037
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_STREAM_CONTEXT 107003
#define ACL_ERROR_RT_MODEL_CONTEXT 107004
#define ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID 107006
#define ACL_ERROR_RT_SYSPARAMOPT_NOT_SET 107021
/* What stream capture refuses (8.1.RC1's acl/error_codes/rt_error_codes.h). */
#define ACL_ERROR_RT_CAPTURE_DEPENDENCY 107024
#define ACL_ERROR_RT_STREAM_UNJOINED 107025
#define ACL_ERROR_RT_MODEL_CAPTURED 107026
#define ACL_ERROR_RT_STREAM_CAPTURED 107027
#define ACL_ERROR_RT_EVENT_CAPTURED 107028
#define ACL_ERROR_RT_STREAM_NOT_CAPTURED 107029
#define ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT 107030
#define ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT 107031
/* Newer than 8.1.RC1 (hicann/runtime's rt_error_codes.h): the 9.2.0 profile only. */
#define ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED 107036
#define ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD 107038
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_MEMORY_FREE 207002
#define ACL_ERROR_RT_INTERNAL_ERROR 507000
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED 507903 /* newer than 8.1.RC1 */

/* ---- events, stream status, capture (8.1.RC1 acl/acl_rt.h, acl/acl_mdl.h) -- */
typedef void *aclrtEvent;
typedef void *aclmdlRI;
#define ACL_EVENT_SYNC 0x00000001u
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002u
#define ACL_EVENT_TIME_LINE 0x00000008u
#define ACL_EVENT_EXTERNAL 0x00000020u
typedef enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;
typedef enum aclrtStreamStatus {
    ACL_STREAM_STATUS_COMPLETE = 0,
    ACL_STREAM_STATUS_NOT_READY = 1,
    ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;
typedef enum {
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED
} aclmdlRICaptureMode;
typedef enum {
    ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
} aclmdlRICaptureStatus;

/* ---- aclnnStatus values (§5.6) -------------------------------------------- */
#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_RUNTIME_ERROR 361001
#define ACLNN_ERR_INNER 561000
#define ACLNN_ERR_INNER_TILING_ERROR 561002
#define ACLNN_ERR_INNER_CREATE_EXECUTOR 561101
#define ACLNN_ERR_INNER_NULLPTR 561103

/* ---- libascendcl.so (§2) -------------------------------------------------- */
ACLSIM_API aclError aclInit(const char *configPath);
ACLSIM_API aclError aclFinalize(void);
ACLSIM_API aclError aclrtSetDevice(int32_t deviceId);
ACLSIM_API aclError aclrtResetDevice(int32_t deviceId);
ACLSIM_API aclError aclrtGetDevice(int32_t *deviceId);
ACLSIM_API aclError aclrtGetDeviceCount(uint32_t *count);
ACLSIM_API aclError aclrtSynchronizeDevice(void);
ACLSIM_API aclError aclrtCreateStream(aclrtStream *stream);
ACLSIM_API aclError aclrtDestroyStream(aclrtStream stream);
ACLSIM_API aclError aclrtSynchronizeStream(aclrtStream stream);
ACLSIM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
ACLSIM_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACLSIM_API aclError aclrtFree(void *devPtr);
ACLSIM_API aclError aclrtMallocHost(void **hostPtr, size_t size);
ACLSIM_API aclError aclrtFreeHost(void *hostPtr);
ACLSIM_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                aclrtMemcpyKind kind);
ACLSIM_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                     aclrtMemcpyKind kind, aclrtStream stream);
ACLSIM_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
ACLSIM_API aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                     aclrtStream stream);
ACLSIM_API aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
ACLSIM_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
ACLSIM_API aclError aclrtCreateEvent(aclrtEvent *event);
ACLSIM_API aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
ACLSIM_API aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
ACLSIM_API aclError aclrtDestroyEvent(aclrtEvent event);
ACLSIM_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
ACLSIM_API aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
ACLSIM_API aclError aclrtSynchronizeEvent(aclrtEvent event);
ACLSIM_API aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);
ACLSIM_API aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
ACLSIM_API aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                           aclmdlRI *modelRI);
ACLSIM_API aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);
ACLSIM_API aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode);
ACLSIM_API aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);
ACLSIM_API aclError aclmdlRIDestroy(aclmdlRI modelRI);
ACLSIM_API const char *aclGetRecentErrMsg(void);
ACLSIM_API aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                    int32_t *patchVersion);
/* CANN 8.1.RC1 acl/acl.h: the version of an installed CANN package */
#define ACL_PKG_VERSION_MAX_SIZE       128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64
typedef enum aclCANNPackageName {
    ACL_PKG_NAME_CANN,
    ACL_PKG_NAME_RUNTIME,
    ACL_PKG_NAME_COMPILER,
    ACL_PKG_NAME_HCCL,
    ACL_PKG_NAME_TOOLKIT,
    ACL_PKG_NAME_OPP,
    ACL_PKG_NAME_OPP_KERNEL,
    ACL_PKG_NAME_DRIVER
} aclCANNPackageName;
typedef struct aclCANNPackageVersion {
    char version[ACL_PKG_VERSION_MAX_SIZE];
    char majorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char minorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char releaseVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char patchVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char reserved[ACL_PKG_VERSION_MAX_SIZE];
} aclCANNPackageVersion;
ACLSIM_API aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version);
/* CANN 8.1.RC1: aclSysParamOpt and aclrtGetSocName in acl/acl_base.h, the
 * context and process getters/setters in acl/acl_rt.h. */
typedef enum {
    ACL_OPT_DETERMINISTIC = 0,
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1
} aclSysParamOpt;
ACLSIM_API aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACLSIM_API aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACLSIM_API aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACLSIM_API aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACLSIM_API const char *aclrtGetSocName(void);

/* ---- libnnopbase.so (§3) -------------------------------------------------- */
ACLSIM_API aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                      aclDataType dataType, const int64_t *stride, int64_t offset,
                                      aclFormat format, const int64_t *storageDims,
                                      uint64_t storageDimsNum, void *tensorData);
ACLSIM_API aclScalar *aclCreateScalar(void *value, aclDataType dataType);
ACLSIM_API aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACLSIM_API aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACLSIM_API aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
ACLSIM_API aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
ACLSIM_API aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size);
ACLSIM_API aclnnStatus aclDestroyTensor(const aclTensor *tensor);
ACLSIM_API aclnnStatus aclDestroyScalar(const aclScalar *scalar);
ACLSIM_API aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACLSIM_API aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACLSIM_API aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACLSIM_API aclnnStatus aclDestroyTensorList(const aclTensorList *array);
ACLSIM_API aclnnStatus aclDestroyScalarList(const aclScalarList *array);
ACLSIM_API aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims,
                                       uint64_t *viewDimsNum);
ACLSIM_API aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                          uint64_t *storageDimsNum);
ACLSIM_API aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                         uint64_t *stridesNum);
ACLSIM_API aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset);
ACLSIM_API aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format);
ACLSIM_API aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType);
ACLSIM_API aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size);
ACLSIM_API aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size);
ACLSIM_API aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size);
ACLSIM_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACLSIM_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
ACLSIM_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                             void *addr);
ACLSIM_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                              void *addr);
ACLSIM_API aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                        void *addr);
ACLSIM_API aclnnStatus aclnnInit(const char *configPath);
ACLSIM_API aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACL_ABI_H */
