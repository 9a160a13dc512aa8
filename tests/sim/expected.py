"""What the simulator must provide.

The runtime's exports are written out by hand from CANN's headers. The operators come
from native/build.py's SOURCES table, the one place an operator is registered (its source,
split-layout domain, aclnn names and aclnnop/ header): nothing here names an operator.
"""
from __future__ import annotations

import pathlib
import re
import sys
from ctypes import c_bool, c_char_p, c_double, c_int64, c_void_p

NATIVE = pathlib.Path(__file__).resolve().parents[2] / "native"
if str(NATIVE) not in sys.path:
    sys.path.insert(0, str(NATIVE))
import build as native_build  # noqa: E402  native/build.py

ACL_SYMBOLS = {
    "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice", "aclrtGetDevice",
    "aclrtGetDeviceCount", "aclrtSynchronizeDevice", "aclrtCreateStream", "aclrtDestroyStream",
    "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtMalloc", "aclrtFree",
    "aclrtMallocHost", "aclrtFreeHost", "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset",
    "aclGetRecentErrMsg", "aclrtGetVersion", "aclsysGetCANNVersion", "aclrtCtxSetSysParamOpt", "aclrtCtxGetSysParamOpt",
    "aclrtSetSysParamOpt", "aclrtGetSysParamOpt", "aclrtGetSocName", "aclsimLiveCount",
    "aclsimLaunchDeterministic", "aclsimDeviceStep",
    # streams, events and capture (acl/acl_rt.h, acl/acl_mdl.h)
    "aclrtStreamQuery", "aclrtStreamWaitEvent", "aclrtCreateEvent", "aclrtCreateEventWithFlag",
    "aclrtCreateEventExWithFlag", "aclrtDestroyEvent", "aclrtRecordEvent", "aclrtQueryEventStatus",
    "aclrtSynchronizeEvent", "aclrtEventElapsedTime", "aclmdlRICaptureBegin", "aclmdlRICaptureGetInfo",
    "aclmdlRICaptureEnd", "aclmdlRICaptureThreadExchangeMode", "aclmdlRIExecuteAsync", "aclmdlRIDestroy", "aclrtMemsetAsync"}
NNOPBASE_SYMBOLS = {
    "aclCreateTensor", "aclCreateIntArray", "aclCreateFloatArray", "aclCreateBoolArray",
    "aclCreateScalar", "aclDestroyTensor", "aclDestroyIntArray", "aclDestroyFloatArray",
    "aclDestroyBoolArray", "aclDestroyScalar", "aclGetViewShape", "aclGetStorageShape",
    "aclGetViewStrides", "aclGetViewOffset", "aclGetFormat", "aclGetDataType",
    "aclGetIntArraySize", "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
    "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr",
    "aclnnInit", "aclnnFinalize",
    "aclCreateTensorList", "aclCreateScalarList", "aclDestroyTensorList", "aclDestroyScalarList",
    "aclGetTensorListSize", "aclGetScalarListSize"}


def op_symbols(domain: str | None = None) -> set:
    """Both entry points of every operator of one split-layout domain, or of all, and the
    plain functions (size helpers) its sources export."""
    return {sym for op in native_build.operators(domain) for sym in native_build.entry_points(op)} | \
        set(native_build.helpers(domain))


# Each split-layout op library and the operators it exports.
DOMAIN_SYMBOLS = {domain: op_symbols(domain) for domain in native_build.DOMAINS}
OP_SYMBOLS = op_symbols()


def read_declarations(text: str) -> dict:
    """A plain C declaration reader for the aclnnop/ headers: name -> (return type,
    [(parameter type, parameter name), ...]), types spelled like "const aclTensor*".
    Comments, preprocessor lines and the extern "C" braces are skipped; every other
    declaration must be one `ACLNN_API <type> <name>(<parameters>);`."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    text = " ".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    text = text.replace('extern "C" {', " ").replace("}", " ")
    decls = {}
    for decl in filter(None, (" ".join(d.split()) for d in text.split(";"))):
        m = re.fullmatch(r"ACLNN_API (\w+) (\w+)\((.*)\)", decl)
        assert m, f"not a plain ACLNN_API prototype: {decl!r}"
        params = []
        for p in m.group(3).split(","):
            pm = re.fullmatch(r"\s*(.*?)\s*(\w+)\s*", p)
            params.append((re.sub(r"\s*\*", "*", pm.group(1)), pm.group(2)))
        assert m.group(2) not in decls, f"{m.group(2)} declared twice"
        decls[m.group(2)] = (m.group(1), params)
    return decls


# C parameter types of the aclnnop/ headers -> the ctypes a caller passes.
C_TYPES = {"const aclTensor*": c_void_p, "aclTensor*": c_void_p, "const aclIntArray*": c_void_p,
           "double": c_double, "bool": c_bool, "int64_t": c_int64, "char*": c_char_p}
PHASE1_TAIL = [("uint64_t*", "workspaceSize"), ("aclOpExecutor**", "executor")]
# Phase 2 of every operator, by type: CANN's headers spell the names differently
# (aclnn_gelu_backward.h: workspace_size) and some write `const aclrtStream stream`.
PHASE2_TYPES = ["void*", "uint64_t", "aclOpExecutor*", "aclrtStream"]
