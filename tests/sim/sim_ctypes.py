"""Thin ctypes access to the simulator libraries, for the simulator's own tests.

Runtime and nnopbase prototypes are CANN's own (acl/acl_rt.h, aclnn/acl_meta.h), written
out here. The operators' prototypes come from the package's operator descriptions
(ascend_aclnn.ops.REGISTRY: each one's phase-1 argtypes; phase 2 is the same for all),
so adding an operator needs no edit here; test_build.py checks those descriptions
against the installed aclnnop/ headers. Everything else is independent of ascend_aclnn:
these tests check the instrument itself. Importable as sim.sim_ctypes, and by path in
the subprocess scripts the tests run (the worktree root must then be on PYTHONPATH).
"""
from __future__ import annotations

import ctypes
import pathlib
from ctypes import (POINTER, byref, c_bool, c_char_p, c_float, c_int, c_int32, c_int64, c_size_t,
                    c_uint32, c_uint64, c_void_p)

import numpy as np

# aclDataType / aclFormat / aclrtMemcpyKind (CANN's acl_base.h)
ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32, ACL_UINT8 = 0, 1, 2, 3, 4
ACL_INT64, ACL_DOUBLE, ACL_BOOL, ACL_STRING, ACL_BF16 = 9, 11, 12, 13, 27
FMT_NCHW, FMT_ND, FMT_NCL, FMT_FRACTAL_NZ, FMT_UNDEFINED = 0, 2, 47, 29, -1
H2H, H2D, D2H, D2D, MEMCPY_DEFAULT = 0, 1, 2, 3, 4

# status codes (§5.5, §5.6)
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
RT_PARAM_INVALID = 107000
RT_INVALID_DEVICEID = 107001
RT_CONTEXT_NULL = 107002
RT_STREAM_CONTEXT = 107003
RT_MODEL_CONTEXT = 107004
RT_EVENT_TIMESTAMP_INVALID = 107006
RT_SYSPARAMOPT_NOT_SET = 107021
# stream capture (8.1.RC1's rt_error_codes.h); the last three are newer (9.2.0 profile)
RT_CAPTURE_DEPENDENCY = 107024
RT_STREAM_UNJOINED = 107025
RT_MODEL_CAPTURED = 107026
RT_STREAM_CAPTURED = 107027
RT_EVENT_CAPTURED = 107028
RT_STREAM_NOT_CAPTURED = 107029
RT_CAPTURE_MODE_NOT_SUPPORT = 107030
RT_STREAM_CAPTURE_IMPLICIT = 107031
RT_STREAM_CAPTURE_UNMATCHED = 107036
RT_STREAM_CAPTURE_WRONG_THREAD = 107038
RT_FEATURE_NOT_SUPPORT = 207000
RT_INTERNAL_ERROR = 507000
RT_STREAM_CAPTURE_INVALIDATED = 507903
# event flags (acl_rt.h), capture modes and statuses (acl_mdl.h)
EVENT_SYNC, EVENT_CAPTURE_STREAM_PROGRESS, EVENT_TIME_LINE, EVENT_EXTERNAL = 0x1, 0x2, 0x8, 0x20
CAPTURE_GLOBAL, CAPTURE_THREAD_LOCAL, CAPTURE_RELAXED = 0, 1, 2
CAPTURE_STATUS_NONE, CAPTURE_STATUS_ACTIVE, CAPTURE_STATUS_INVALIDATED = 0, 1, 2
RT_MEMORY_ALLOCATION = 207001
RT_MEMORY_FREE = 207002
RT_AICORE_EXCEPTION = 507015
PARAM_NULLPTR = 161001
PARAM_INVALID = 161002
RUNTIME_ERROR = 361001
INNER = 561000
INNER_NULLPTR = 561103

KINDS = ("streams", "device_allocations", "device_bytes", "host_allocations", "pending_tasks",
         "tensors", "int_arrays", "float_arrays", "bool_arrays", "scalars", "executors",
         "tensor_lists", "scalar_lists", "events", "models")

ITEMSIZE = {ACL_FLOAT: 4, ACL_FLOAT16: 2, ACL_UINT8: 1, ACL_INT32: 4, ACL_BF16: 2, ACL_INT8: 1,
            ACL_INT64: 8, ACL_DOUBLE: 8, ACL_BOOL: 1}
NP_DTYPE = {ACL_FLOAT: np.float32, ACL_FLOAT16: np.float16, ACL_UINT8: np.uint8,
            ACL_INT32: np.int32, ACL_BF16: np.uint16}  # bf16 kept as raw uint16 bits

I64P = POINTER(c_int64)
VPP = POINTER(c_void_p)

_PROTOS = {
    "acl": {
        "aclInit": (c_int, [c_char_p]),
        "aclFinalize": (c_int, []),
        "aclrtSetDevice": (c_int, [c_int32]),
        "aclrtResetDevice": (c_int, [c_int32]),
        "aclrtGetDevice": (c_int, [POINTER(c_int32)]),
        "aclrtGetDeviceCount": (c_int, [POINTER(c_uint32)]),
        "aclrtSynchronizeDevice": (c_int, []),
        "aclrtCreateStream": (c_int, [VPP]),
        "aclrtDestroyStream": (c_int, [c_void_p]),
        "aclrtSynchronizeStream": (c_int, [c_void_p]),
        "aclrtSynchronizeStreamWithTimeout": (c_int, [c_void_p, c_int32]),
        "aclrtMalloc": (c_int, [VPP, c_size_t, c_int]),
        "aclrtFree": (c_int, [c_void_p]),
        "aclrtMallocHost": (c_int, [VPP, c_size_t]),
        "aclrtFreeHost": (c_int, [c_void_p]),
        "aclrtMemcpy": (c_int, [c_void_p, c_size_t, c_void_p, c_size_t, c_int]),
        "aclrtMemcpyAsync": (c_int, [c_void_p, c_size_t, c_void_p, c_size_t, c_int, c_void_p]),
        "aclrtMemset": (c_int, [c_void_p, c_size_t, c_int32, c_size_t]),
        "aclGetRecentErrMsg": (c_char_p, []),
        "aclrtGetVersion": (c_int, [POINTER(c_int32)] * 3),
        "aclsysGetCANNVersion": (c_int, [c_int, c_void_p]),  # (aclCANNPackageName, aclCANNPackageVersion *)
        "aclrtCtxSetSysParamOpt": (c_int, [c_int, c_int64]),
        "aclrtCtxGetSysParamOpt": (c_int, [c_int, POINTER(c_int64)]),
        "aclrtSetSysParamOpt": (c_int, [c_int, c_int64]),
        "aclrtGetSysParamOpt": (c_int, [c_int, POINTER(c_int64)]),
        "aclrtGetSocName": (c_char_p, []),
        "aclrtStreamQuery": (c_int, [c_void_p, POINTER(c_int)]),
        "aclrtMemsetAsync": (c_int, [c_void_p, c_size_t, c_int32, c_size_t, c_void_p]),
        "aclrtStreamWaitEvent": (c_int, [c_void_p, c_void_p]),
        "aclrtCreateEvent": (c_int, [VPP]),
        "aclrtCreateEventWithFlag": (c_int, [VPP, c_uint32]),
        "aclrtCreateEventExWithFlag": (c_int, [VPP, c_uint32]),
        "aclrtDestroyEvent": (c_int, [c_void_p]),
        "aclrtRecordEvent": (c_int, [c_void_p, c_void_p]),
        "aclrtQueryEventStatus": (c_int, [c_void_p, POINTER(c_int)]),
        "aclrtSynchronizeEvent": (c_int, [c_void_p]),
        "aclrtEventElapsedTime": (c_int, [POINTER(c_float), c_void_p, c_void_p]),
        "aclmdlRICaptureBegin": (c_int, [c_void_p, c_int]),
        "aclmdlRICaptureGetInfo": (c_int, [c_void_p, POINTER(c_int), VPP]),
        "aclmdlRICaptureEnd": (c_int, [c_void_p, VPP]),
        "aclmdlRICaptureThreadExchangeMode": (c_int, [POINTER(c_int)]),
        "aclmdlRIExecuteAsync": (c_int, [c_void_p, c_void_p]),
        "aclmdlRIDestroy": (c_int, [c_void_p]),
        "aclsimLiveCount": (c_int64, [c_char_p]),
        "aclsimLaunchDeterministic": (c_int, [c_char_p]),
    },
    "nn": {
        "aclCreateTensor": (c_void_p, [I64P, c_uint64, c_int, I64P, c_int64, c_int, I64P,
                                       c_uint64, c_void_p]),
        "aclCreateScalar": (c_void_p, [c_void_p, c_int]),
        "aclCreateIntArray": (c_void_p, [I64P, c_uint64]),
        "aclCreateFloatArray": (c_void_p, [POINTER(c_float), c_uint64]),
        "aclCreateBoolArray": (c_void_p, [POINTER(c_bool), c_uint64]),
        "aclDestroyTensor": (c_int32, [c_void_p]),
        "aclDestroyScalar": (c_int32, [c_void_p]),
        "aclDestroyIntArray": (c_int32, [c_void_p]),
        "aclDestroyFloatArray": (c_int32, [c_void_p]),
        "aclDestroyBoolArray": (c_int32, [c_void_p]),
        "aclGetViewShape": (c_int32, [c_void_p, POINTER(I64P), POINTER(c_uint64)]),
        "aclGetStorageShape": (c_int32, [c_void_p, POINTER(I64P), POINTER(c_uint64)]),
        "aclGetViewStrides": (c_int32, [c_void_p, POINTER(I64P), POINTER(c_uint64)]),
        "aclGetViewOffset": (c_int32, [c_void_p, I64P]),
        "aclGetFormat": (c_int32, [c_void_p, POINTER(c_int)]),
        "aclGetDataType": (c_int32, [c_void_p, POINTER(c_int)]),
        "aclGetIntArraySize": (c_int32, [c_void_p, POINTER(c_uint64)]),
        "aclSetAclOpExecutorRepeatable": (c_int32, [c_void_p]),
        "aclDestroyAclOpExecutor": (c_int32, [c_void_p]),
        "aclSetInputTensorAddr": (c_int32, [c_void_p, c_size_t, c_void_p, c_void_p]),
        "aclSetOutputTensorAddr": (c_int32, [c_void_p, c_size_t, c_void_p, c_void_p]),
        "aclSetTensorAddr": (c_int32, [c_void_p, c_size_t, c_void_p, c_void_p]),
        "aclCreateTensorList": (c_void_p, [VPP, c_uint64]),
        "aclCreateScalarList": (c_void_p, [VPP, c_uint64]),
        "aclDestroyTensorList": (c_int32, [c_void_p]),
        "aclDestroyScalarList": (c_int32, [c_void_p]),
        "aclGetTensorListSize": (c_int32, [c_void_p, POINTER(c_uint64)]),
        "aclGetScalarListSize": (c_int32, [c_void_p, POINTER(c_uint64)]),
        "aclnnInit": (c_int32, [c_char_p]),
        "aclnnFinalize": (c_int32, []),
    },
}

PHASE2_ARGTYPES = [c_void_p, c_uint64, c_void_p, c_void_p]  # workspace, size, executor, stream


def _operator_protos() -> dict:
    """aclnnXxxGetWorkspaceSize and aclnnXxx of every operator the package describes."""
    from ascend_aclnn.ops import REGISTRY
    protos = {}
    for spec in REGISTRY:
        protos[spec.phase1_name] = (c_int32, [*spec.c_argtypes, POINTER(c_uint64), VPP])
        protos[spec.aclnn] = (c_int32, list(PHASE2_ARGTYPES))
    return protos


_PROTOS["op"] = _operator_protos()

def _header_ops():
    """header_ops (the operators typed from their installed headers), imported as a sibling
    module or, when this module was loaded by path, by path."""
    try:
        from . import header_ops
    except ImportError:
        import importlib.util
        spec = importlib.util.spec_from_file_location("sim_header_ops", pathlib.Path(__file__).with_name("header_ops.py"))
        header_ops = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(header_ops)
    return header_ops


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [c_void_p]
_libc.free.restype = None


class SimError(AssertionError):
    pass


class Sim:
    """The simulator libraries loaded from one lib directory: libascendcl.so,
    libnnopbase.so and the operator library op_lib, or by default every one there
    (libopapi.so, or the split layout's libopapi_*.so)."""

    def __init__(self, libdir, op_lib: str | None = None):
        libdir = pathlib.Path(libdir)
        self.libdir = libdir
        self.acl = ctypes.CDLL(str(libdir / "libascendcl.so"))
        self.nn = ctypes.CDLL(str(libdir / "libnnopbase.so"))
        if op_lib is None:
            op_lib = "libopapi.so" if (libdir / "libopapi.so").exists() else "libopapi_*.so"
        self.op_libs = [ctypes.CDLL(str(p)) for p in sorted(libdir.glob(op_lib))]
        for lib_key, protos in _PROTOS.items():
            for name, (restype, argtypes) in protos.items():
                if lib_key == "op":  # a split-layout op library holds only its domain's operators
                    lib = next((lib for lib in self.op_libs if hasattr(lib, name)), None)
                    if lib is None:
                        continue
                else:
                    lib = getattr(self, lib_key)
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
                setattr(self, name, fn)
        _header_ops().bind_builtin(self)  # the operators the package does not describe

    # ---- messages and counters -------------------------------------------------
    def err(self):
        m = self.aclGetRecentErrMsg()
        return None if m is None else m.decode()

    def drain(self):
        while self.err() is not None:
            pass

    def count(self, kind: str) -> int:
        return self.aclsimLiveCount(kind.encode())

    def counts(self) -> dict:
        return {k: self.count(k) for k in KINDS}

    def launched_deterministic(self, op: str) -> int:
        """The deterministic level op's last launch ran with; -1 if it never launched."""
        return self.aclsimLaunchDeterministic(op.encode())

    def ok(self, rc, what=""):
        if rc != 0:
            raise SimError(f"{what} returned {rc}: {self.err()}")

    # ---- memory ---------------------------------------------------------------
    def malloc(self, size: int, policy: int = 0) -> int:
        p = c_void_p()
        self.ok(self.aclrtMalloc(byref(p), size, policy), "aclrtMalloc")
        return p.value

    def free(self, ptr: int):
        self.ok(self.aclrtFree(ptr), "aclrtFree")

    def upload(self, arr: np.ndarray, nbytes: int | None = None) -> int:
        arr = np.ascontiguousarray(arr)
        nbytes = max(nbytes or arr.nbytes, 1)
        ptr = self.malloc(nbytes)
        if arr.nbytes:
            self.ok(self.aclrtMemcpy(ptr, nbytes, arr.ctypes.data, arr.nbytes, H2D), "H2D")
        return ptr

    def download(self, ptr: int, count: int, dtype, offset_bytes: int = 0) -> np.ndarray:
        out = np.empty(count, dtype=dtype)
        self.ok(self.aclrtMemcpy(out.ctypes.data, out.nbytes, ptr + offset_bytes, out.nbytes, D2H),
                "D2H")
        return out

    # ---- objects ----------------------------------------------------------------
    def tensor_raw(self, shape, dtype, data, strides=None, offset=0, fmt=FMT_NCL, storage=None):
        """aclCreateTensor; returns the handle or None."""
        shape = list(shape)
        storage = list(shape) if storage is None else list(storage)
        dims = (c_int64 * max(len(shape), 1))(*shape)
        st = None if strides is None else (c_int64 * max(len(strides), 1))(*strides)
        sd = (c_int64 * max(len(storage), 1))(*storage)
        return self.aclCreateTensor(dims, len(shape), dtype, st, offset, fmt, sd, len(storage), data)

    def tensor(self, shape, dtype, data, **kw) -> int:
        h = self.tensor_raw(shape, dtype, data, **kw)
        if not h:
            raise SimError(f"aclCreateTensor failed: {self.err()}")
        return h

    def int_array(self, values) -> int:
        vals = (c_int64 * max(len(values), 1))(*values)
        h = self.aclCreateIntArray(vals, len(values))
        if not h:
            raise SimError(f"aclCreateIntArray failed: {self.err()}")
        return h

    def get_dims(self, fn, tensor):
        arr, n = I64P(), c_uint64()
        self.ok(fn(tensor, byref(arr), byref(n)), fn.__name__)
        vals = [arr[i] for i in range(n.value)]
        _libc.free(ctypes.cast(arr, c_void_p))  # simulator allocates with malloc
        return vals

    # ---- operators -----------------------------------------------------------------
    def phase1(self, op: str, *args):
        """op's GetWorkspaceSize(*args, &workspaceSize, &executor) -> (status, workspace
        size, executor). Both start as 12345 and 0xDEAD0, so untouched ones show."""
        ws, ex = c_uint64(12345), c_void_p(0xDEAD0)
        rc = getattr(self, op + "GetWorkspaceSize")(*args, byref(ws), byref(ex))
        return rc, ws.value, ex.value

    def fwd_prepare(self, self_t, osz, scales, out_t):
        return self.phase1("aclnnUpsampleNearestExact1d", self_t, osz, scales, out_t)

    def bwd_prepare(self, grad_t, osz, isz, scales, out_t):
        return self.phase1("aclnnUpsampleNearestExact1dBackward", grad_t, osz, isz, scales, out_t)


def f16_bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float16).view(np.uint16)


def bf16_bits(values) -> np.ndarray:
    """float -> bf16 bit patterns, for values that are exactly representable."""
    f = np.asarray(values, dtype=np.float32)
    bits = f.view(np.uint32)
    assert np.all(bits & 0xFFFF == 0), "value not exactly representable in bf16"
    return (bits >> 16).astype(np.uint16)


def bf16_to_float(bits) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def contiguous_strides(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return list(reversed(strides))
