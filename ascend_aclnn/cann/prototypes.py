"""The one table of C prototypes for the runtime and nnopbase functions we call.

Types are those of CANN's acl/acl_rt.h and aclnn/acl_meta.h. Operator prototypes are not listed here:
each operator's description (ascend_aclnn.ops) derives them from its parameter kinds.
"""
from __future__ import annotations

from ctypes import (POINTER, c_bool, c_char_p, c_double, c_float, c_int, c_int8, c_int16, c_int32, c_int64, c_size_t,
                    c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)
from typing import Any, NamedTuple

aclError = c_int
aclnnStatus = c_int32
handle = c_void_p  # aclrtStream, aclTensor*, aclIntArray*, aclOpExecutor*, void*


class Prototype(NamedTuple):
    library: str  # "ascendcl" or "nnopbase"
    restype: object
    argtypes: tuple[Any, ...]


def _rt(restype: Any, *argtypes: Any) -> Prototype:
    return Prototype("ascendcl", restype, argtypes)


def _nn(restype: Any, *argtypes: Any) -> Prototype:
    return Prototype("nnopbase", restype, argtypes)


PROTOTYPES: dict[str, Prototype] = {
    # libascendcl.so
    "aclInit": _rt(aclError, c_char_p),
    "aclFinalize": _rt(aclError),
    "aclrtSetDevice": _rt(aclError, c_int32),
    "aclrtResetDevice": _rt(aclError, c_int32),
    "aclrtGetDeviceCount": _rt(aclError, POINTER(c_uint32)),
    "aclrtCreateStream": _rt(aclError, POINTER(handle)),
    "aclrtDestroyStream": _rt(aclError, handle),
    "aclrtSynchronizeStream": _rt(aclError, handle),
    "aclrtMalloc": _rt(aclError, POINTER(c_void_p), c_size_t, c_int),
    "aclrtFree": _rt(aclError, c_void_p),
    "aclrtMemcpy": _rt(aclError, c_void_p, c_size_t, c_void_p, c_size_t, c_int),
    "aclrtMemcpyAsync": _rt(aclError, c_void_p, c_size_t, c_void_p, c_size_t, c_int, handle),
    "aclrtMemset": _rt(aclError, c_void_p, c_size_t, c_int32, c_size_t),
    "aclrtMemsetAsync": _rt(aclError, c_void_p, c_size_t, c_int32, c_size_t, handle),
    "aclGetRecentErrMsg": _rt(c_char_p),
    "aclrtGetVersion": _rt(aclError, POINTER(c_int32), POINTER(c_int32), POINTER(c_int32)),
    # CANN 8.1.RC1 acl/acl_base.h: const char *aclrtGetSocName(); NULL on failure.
    "aclrtGetSocName": _rt(c_char_p),
    # CANN 8.1.RC1 acl/acl.h: aclError aclsysGetCANNVersion(aclCANNPackageName, aclCANNPackageVersion *);
    # the struct is six char arrays (128, 4 x 64, 128 bytes), passed as a 512-byte buffer.
    "aclsysGetCANNVersion": _rt(aclError, c_int, c_void_p),
    # CANN 8.1.RC1 acl/acl_rt.h; aclSysParamOpt is a C enum (4 bytes), see constants.py.
    "aclrtCtxSetSysParamOpt": _rt(aclError, c_int, c_int64),
    "aclrtCtxGetSysParamOpt": _rt(aclError, c_int, POINTER(c_int64)),
    # The process-level pair (CANN 8.1.RC1 acl/acl_rt.h): what newer opbase reads.
    "aclrtSetSysParamOpt": _rt(aclError, c_int, c_int64),
    "aclrtGetSysParamOpt": _rt(aclError, c_int, POINTER(c_int64)),
    # Events (CANN 8.1.RC1 acl/acl_rt.h): aclrtEvent is a handle, the flag a uint32_t,
    # aclrtEventRecordedStatus a C enum, the elapsed time a float in ms.
    "aclrtCreateEventExWithFlag": _rt(aclError, POINTER(handle), c_uint32),
    "aclrtStreamWaitEvent": _rt(aclError, handle, handle),
    "aclrtStreamQuery": _rt(aclError, handle, POINTER(c_int)),  # aclrtStreamStatus, a C enum
    # Stream capture (CANN 8.1.RC1 acl/acl_mdl.h): aclmdlRI is a handle, the mode a C enum.
    "aclmdlRICaptureBegin": _rt(aclError, handle, c_int),
    "aclmdlRICaptureEnd": _rt(aclError, handle, POINTER(handle)),
    "aclmdlRIExecuteAsync": _rt(aclError, handle, handle),
    "aclmdlRIDestroy": _rt(aclError, handle),
    "aclrtDestroyEvent": _rt(aclError, handle),
    "aclrtRecordEvent": _rt(aclError, handle, handle),
    "aclrtQueryEventStatus": _rt(aclError, handle, POINTER(c_int)),
    "aclrtSynchronizeEvent": _rt(aclError, handle),
    "aclrtEventElapsedTime": _rt(aclError, POINTER(c_float), handle, handle),
    # libnnopbase.so; creators return pointers, so restype must be c_void_p or 64-bit
    # addresses get truncated to int.
    "aclCreateTensor": _nn(handle, POINTER(c_int64), c_uint64, c_int, POINTER(c_int64), c_int64,
                           c_int, POINTER(c_int64), c_uint64, c_void_p),
    "aclCreateIntArray": _nn(handle, POINTER(c_int64), c_uint64),
    "aclCreateFloatArray": _nn(handle, POINTER(c_float), c_uint64),
    "aclCreateBoolArray": _nn(handle, POINTER(c_bool), c_uint64),
    # aclnn/acl_meta.h: lists own their elements (destroying a list destroys them).
    "aclCreateScalar": _nn(handle, c_void_p, c_int),
    "aclCreateTensorList": _nn(handle, POINTER(handle), c_uint64),
    "aclCreateScalarList": _nn(handle, POINTER(handle), c_uint64),
    "aclDestroyScalar": _nn(aclnnStatus, handle),
    "aclDestroyTensorList": _nn(aclnnStatus, handle),
    "aclDestroyScalarList": _nn(aclnnStatus, handle),
    "aclDestroyTensor": _nn(aclnnStatus, handle),
    "aclDestroyIntArray": _nn(aclnnStatus, handle),
    "aclDestroyFloatArray": _nn(aclnnStatus, handle),
    "aclDestroyBoolArray": _nn(aclnnStatus, handle),
    "aclGetViewOffset": _nn(aclnnStatus, handle, POINTER(c_int64)),
    # the dims array is allocated by nnopbase (new[]), which exports nothing to free it with
    "aclGetViewShape": _nn(aclnnStatus, handle, POINTER(POINTER(c_int64)), POINTER(c_uint64)),
    "aclGetFormat": _nn(aclnnStatus, handle, POINTER(c_int)),
    # The dims array is the library's (new[] of int64_t): the caller frees it (free()).
    "aclGetStorageShape": _nn(aclnnStatus, handle, POINTER(POINTER(c_int64)), POINTER(c_uint64)),
    "aclGetDataType": _nn(aclnnStatus, handle, POINTER(c_int)),
    "aclDestroyAclOpExecutor": _nn(aclnnStatus, handle),
    # Repeatable executors (plans): index counts the op's input, resp. output, tensors;
    # aclSetTensorAddr's counts all of them, inputs first (the C order of the parameters).
    "aclSetAclOpExecutorRepeatable": _nn(aclnnStatus, handle),
    "aclSetInputTensorAddr": _nn(aclnnStatus, handle, c_size_t, handle, c_void_p),
    "aclSetOutputTensorAddr": _nn(aclnnStatus, handle, c_size_t, handle, c_void_p),
    "aclSetTensorAddr": _nn(aclnnStatus, handle, c_size_t, handle, c_void_p),
}

# Second phase of every operator: aclnnXxx(workspace, workspaceSize, executor, stream).
PHASE2_ARGTYPES = (c_void_p, c_uint64, handle, handle)
# Tail of every first phase: ..., uint64_t *workspaceSize, aclOpExecutor **executor.
PHASE1_TAIL_ARGTYPES = (POINTER(c_uint64), POINTER(handle))

# ctypes type of each scalar parameter kind of an operator (their common base class is
# private to ctypes: type[Any]).
SCALAR_CTYPES: dict[str, type[Any]] = {
    "double": c_double, "float": c_float, "bool": c_bool, "int8": c_int8, "int16": c_int16, "int32": c_int32,
    "int64": c_int64, "uint8": c_uint8, "uint16": c_uint16, "uint32": c_uint32, "uint64": c_uint64,
    "string": c_char_p}
