"""Enum values and status codes of the CANN C ABI.

Every number here is a fact from the real headers (acl_base.h, rt_error_codes.h,
acl_meta.h, opdev/op_errno.h).
"""
from __future__ import annotations

import enum


class AclDataType(enum.IntEnum):
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27


class AclFormat(enum.IntEnum):
    """aclFormat (CANN 8.1.RC1 acl/acl_base.h, every enumerator but UNDEFINED = -1; the
    header names FRACTAL_Z_3D without FORMAT_). ascend_aclnn.Format has the same values."""
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_NC1HWC0_C04 = 12
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30
    ACL_FORMAT_NDC1HWC0 = 32
    ACL_FRACTAL_Z_3D = 33
    ACL_FORMAT_NC = 35
    ACL_FORMAT_NCL = 47


class AclrtMemcpyKind(enum.IntEnum):
    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3


ACL_MEM_MALLOC_HUGE_FIRST = 0

# status code -> (symbolic name, one-line explanation written for users of this binding)
STATUS: dict[int, tuple[str, str]] = {
    0: ("ACL_SUCCESS", "success"),
    # aclnnStatus (opdev/op_errno.h)
    161001: ("ACLNN_ERR_PARAM_NULLPTR", "a required tensor, array or output pointer was null"),
    161002: ("ACLNN_ERR_PARAM_INVALID",
             "an argument has an unsupported dtype, shape, format or value for this operator"),
    361001: ("ACLNN_ERR_RUNTIME_ERROR",
             "the runtime failed while launching the operator (device, stream or memory problem)"),
    561000: ("ACLNN_ERR_INNER", "internal error inside the operator library"),
    561001: ("ACLNN_ERR_INNER_INFERSHAPE_ERROR", "the operator could not infer its output shape"),
    561002: ("ACLNN_ERR_INNER_TILING_ERROR",
             "the operator's tiling rejected the shapes (often a size limit of the kernel)"),
    561003: ("ACLNN_ERR_INNER_FIND_KERNEL_ERROR",
             "no kernel binary for this dtype/shape: the operator package (opp) is probably "
             "missing or does not match this SoC"),
    561101: ("ACLNN_ERR_INNER_CREATE_EXECUTOR", "the operator executor could not be created"),
    561102: ("ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR", "the executor was not transferred correctly"),
    561103: ("ACLNN_ERR_INNER_NULLPTR",
             "an internal null pointer: often an invalid or already-consumed executor, or a "
             "CANN/driver version mismatch"),
    561104: ("ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE", "wrong attribute info size"),
    561105: ("ACLNN_ERR_INNER_KEY_CONFILICT", "key conflict in the operator cache"),  # CANN's own spelling
    561106: ("ACLNN_ERR_INNER_INVALID_IMPL_MODE", "invalid implementation mode"),
    561107: ("ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND",
             "the operator package path was not found: is ASCEND_OPP_PATH set (source set_env.sh)?"),
    561108: ("ACLNN_ERR_INNER_LOAD_JSON_FAILED", "an operator info JSON file failed to load"),
    561109: ("ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND", "a value is missing in an operator JSON file"),
    561110: ("ACLNN_ERR_INNER_JSON_FORMAT_INVALID", "an operator JSON file is malformed"),
    561111: ("ACLNN_ERR_INNER_JSON_DTYPE_INVALID", "an operator JSON file has an invalid dtype"),
    561112: ("ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND",
             "the operator kernel package was not found: install the opp kernel package for this SoC"),
    561113: ("ACLNN_ERR_INNER_OP_FILE_INVALID", "an operator file is invalid"),
    561114: ("ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND", "too many operator attributes"),
    561115: ("ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH", "an operator attribute is too short"),
    561116: ("ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE", "too many inputs in an operator JSON"),
    561117: ("ACLNN_ERR_INNER_INPUT_JSON_IS_NULL", "an operator JSON input is null"),
    561118: ("ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID", "invalid static workspace"),
    561119: ("ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID", "invalid static block dim"),
    # aclError (acl_base.h)
    100000: ("ACL_ERROR_INVALID_PARAM", "an argument of an AscendCL call is invalid"),
    100001: ("ACL_ERROR_UNINITIALIZE", "AscendCL is not initialised (aclInit was not called)"),
    100002: ("ACL_ERROR_REPEAT_INITIALIZE", "AscendCL was already initialised in this process"),
    100024: ("ACL_ERROR_OP_NOT_FOUND", "operator not found"),
    100026: ("ACL_ERROR_UNSUPPORTED_DATA_TYPE", "unsupported data type"),
    100037: ("ACL_ERROR_REPEAT_FINALIZE", "AscendCL was already finalised"),
    200000: ("ACL_ERROR_BAD_ALLOC", "memory allocation failed"),
    200001: ("ACL_ERROR_API_NOT_SUPPORT", "this API is not supported here"),
    200002: ("ACL_ERROR_INVALID_DEVICE", "invalid device"),
    500000: ("ACL_ERROR_INTERNAL_ERROR", "AscendCL internal error"),
    500001: ("ACL_ERROR_FAILURE", "AscendCL call failed"),
    500003: ("ACL_ERROR_RT_FAILURE", "runtime failure"),
    500004: ("ACL_ERROR_DRV_FAILURE", "driver failure: check the NPU driver and firmware"),
    # runtime codes (acl/error_codes/rt_error_codes.h)
    107000: ("ACL_ERROR_RT_PARAM_INVALID",
             "a runtime call got an invalid argument (for example a host pointer where a device "
             "pointer belongs, or a size larger than the destination)"),
    107001: ("ACL_ERROR_RT_INVALID_DEVICEID", "no such device id: check set_device() and npu-smi"),
    107002: ("ACL_ERROR_RT_CONTEXT_NULL", "no current device on this thread (aclrtSetDevice missing)"),
    107021: ("ACL_ERROR_RT_SYSPARAMOPT_NOT_SET", "this context option was never set (aclrtCtxSetSysParamOpt)"),
    107003: ("ACL_ERROR_RT_STREAM_CONTEXT", "the stream belongs to another device/context"),
    107006: ("ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID",
             "an event has no timestamp (created without timing, or its record has not run)"),
    107024: ("ACL_ERROR_RT_CAPTURE_DEPENDENCY", "a captured stream waited on work from outside the capture"),
    107025: ("ACL_ERROR_RT_STREAM_UNJOINED", "a stream that joined the capture was not joined back before it ended"),
    107026: ("ACL_ERROR_RT_MODEL_CAPTURED", "the graph is still being captured"),
    107027: ("ACL_ERROR_RT_STREAM_CAPTURED",
             "not allowed while the stream is being captured (with aa.graph(g)): it needs the host or a sync"),
    107028: ("ACL_ERROR_RT_EVENT_CAPTURED", "the event was recorded in a capture still in progress"),
    107029: ("ACL_ERROR_RT_STREAM_NOT_CAPTURED", "the stream is not being captured"),
    107030: ("ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", "a synchronous copy or memset while a capture forbids it"),
    107031: ("ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT", "the default stream cannot take part in a capture"),
    107032: ("ACL_ERROR_STREAM_CAPTURE_CONFLICT", "streams that depend on each other cannot begin capture together"),
    107033: ("ACL_ERROR_STREAM_TASK_GROUP_STATUS", "a task group was left open (or not open) in a capture"),
    107034: ("ACL_ERROR_STREAM_TASK_GROUP_INTR", "a task group in a capture was interrupted"),
    107016: ("ACL_ERROR_RT_INVALID_MEMORY_TYPE", "wrong memory type for this call"),
    107017: ("ACL_ERROR_RT_INVALID_HANDLE", "invalid runtime handle"),
    207000: ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT", "feature not supported by this device or driver"),
    207001: ("ACL_ERROR_RT_MEMORY_ALLOCATION", "device memory allocation failed (out of device memory)"),
    207002: ("ACL_ERROR_RT_MEMORY_FREE", "device memory free failed (not a live device allocation)"),
    207004: ("ACL_ERROR_RT_NO_DEVICE", "no NPU device is visible to this process"),
    507000: ("ACL_ERROR_RT_INTERNAL_ERROR", "runtime internal error"),
    507001: ("ACL_ERROR_RT_TS_ERROR", "task scheduler error on the device"),
    507015: ("ACL_ERROR_RT_AICORE_EXCEPTION",
             "a kernel faulted on the AI core (often an invalid or freed device address)"),
    507899: ("ACL_ERROR_RT_DRV_INTERNAL_ERROR", "driver internal error"),
}

ACLNN_SUCCESS = 0
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_RUNTIME_ERROR = 361001
ACLNN_ERR_INNER = 561000
ACLNN_ERR_INNER_TILING_ERROR = 561002
ACLNN_ERR_INNER_NULLPTR = 561103
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
ACL_ERROR_RT_INTERNAL_ERROR = 507000
# Event flags and the recorded status (CANN 8.1.RC1 acl/acl_rt.h).
ACL_EVENT_SYNC = 0x1
ACL_EVENT_CAPTURE_STREAM_PROGRESS = 0x2  # a query-only stream mark (the allocator's events)
ACL_EVENT_TIME_LINE = 0x8
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
ACL_STREAM_STATUS_COMPLETE = 0
ACL_ERROR_RT_STREAM_CONTEXT = 107003
ACL_ERROR_RT_STREAM_CAPTURED = 107027
ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024
ACL_ERROR_RT_STREAM_UNJOINED = 107025
ACL_ERROR_RT_EVENT_CAPTURED = 107028
ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029
ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031
ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006
# The stream-capture statuses of CANN 8.1.RC1's rt_error_codes.h (107024 CAPTURE_DEPENDENCY to
# 107034 TASK_GROUP_INTR): what a runtime or driver without (full) capture support answers.
CAPTURE_STATUSES = range(107024, 107035)
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000  # also a driver's answer to aclmdlRICaptureBegin when it has no capture
ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1  # aclmdlRICaptureMode (acl/acl_mdl.h)


class AclSysParamOpt(enum.IntEnum):
    """aclSysParamOpt (CANN 8.1.RC1 acl/acl_base.h)."""
    ACL_OPT_DETERMINISTIC = 0
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1
