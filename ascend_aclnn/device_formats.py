"""DeviceArrays between formats: ``format_cast`` (torch_npu's ``npu_format_cast``) and the
route it takes. Above
``aa.aclnn``: a cast to FRACTAL_NZ runs CANN's aclnnTransMatmulWeight through it. The
layouts themselves are ``ascend_aclnn.formats``'."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .cpu_reference import npu_format_cast as _nfc
from .cpu_reference.private_formats import TRANS_MATMUL_WEIGHT_DTYPES as _TMW_DTYPES
from .errors import AclnnError
from .formats import PRIVATE, Format, as_format, c0_for, storage_size

# ---- device arrays ------------------------------------------------------------------------------

ROUTE_NONE = "none: the array is already in that format"
ROUTE_TRANS_MATMUL_WEIGHT = "aclnnTransMatmulWeight: on the device, by the installed CANN"
ROUTE_NPU_FORMAT_CAST = "aclnnNpuFormatCast: on the device, by the installed CANN"
ROUTE_HOST = "host: download, convert exactly with ascend_aclnn.formats, upload"
ROUTE_RELABEL = "relabel: a device copy of the same bytes, tagged with the other public format"


def _installed(op: str) -> bool:
    """Whether the loaded CANN can run ``op`` through aa.aclnn (its header prototype, and
    the function in an operator library)."""
    from . import aclnn
    from .cann import headers
    from .cann.loader import get_cann
    try:
        if headers.find(op) is None:  # a CPU reference's own parameter list does not count here
            return False
        aclnn.prototype(op)
        return get_cann().op_function(op + "GetWorkspaceSize", None, ()) is not None
    except Exception:  # no header, no CANN: the host route
        return False


def _has_trans_matmul_weight() -> bool:
    return _installed("aclnnTransMatmulWeight")


def _npu_format_cast_fits(d: Any, target: Format, c0: Optional[int]) -> bool:
    """Whether aclnnNpuFormatCast (its Atlas A2/A3 branch) casts ``d`` to ``target`` with
    the layout format_cast promises: a pair of its table, a dtype it takes, the rank the
    layout needs, a non-empty array, and the C0 it writes (or reads): 32 bytes / itemsize;
    for a 4-byte dtype either 8 or 16 when writing (the op_api runs TransDataSpecial for a
    destination stored with C0 16), and when reading 16 only for a destination of 16
    elements (the public storage dim that picks TransDataSpecial), else 8."""
    from .ops.spec import format_for_rank
    from .tensors import ACL_DTYPES
    dt = np.dtype(d.dtype)
    if dt not in ACL_DTYPES or int(ACL_DTYPES[dt]) not in _nfc.A2_DTYPES or d.size == 0:
        return False
    current = d._format if d._format is not None else format_for_rank(d.ndim)
    to_private = target in PRIVATE
    pair = _nfc.find_pair(int(current), int(target)) if to_private else _nfc.find_pair(int(target), int(current))
    if pair is None or pair.public not in (int(Format.ND), int(Format.NCL), int(Format.NCHW), int(Format.NCDHW)):
        return False  # the package's private arrays are NCHW/NCDHW-ordered: channel-last pairs do not fit
    if (d.ndim < 2) if not pair.axes else d.ndim != len(pair.axes):
        return False
    size = dt.itemsize
    if to_private:
        want = c0_for(dt, c0)
        return want == 32 // size or (size == 4 and want == 16)
    held = (d._storage or (0,))[-1]
    return held == (16 if size == 4 and d.size == 16 else 32 // size)


def _has_npu_format_cast() -> bool:
    return _installed("aclnnNpuFormatCast")


def format_cast_route(d: Any, fmt: Any, c0: Optional[int] = None) -> str:
    """Which way ``format_cast(d, fmt, c0=c0)`` converts (one of the ROUTE_* texts),
    without converting: on the numpy backend always the host codec; on the npu backend
    CANN's aclnnNpuFormatCast (CANN 8.5.0 on) where the installed CANN has it and its table
    holds the pair (ND/NCL/NCHW/NCDHW to and from FRACTAL_NZ, NCHW to and from NC1HWC0 and
    FRACTAL_Z, NCDHW to and from NDC1HWC0 and FRACTAL_Z_3D, dtypes int8, uint8, float16,
    bfloat16, float32, int32, uint32) with the C0 asked for; else aclnnTransMatmulWeight for
    an ND float16, bfloat16 or int8 matrix (or 3-D stack, up to 6-D for int8) to FRACTAL_NZ
    with the dtype's own C0, when the installed CANN has it (8.1.RC1 has no other aclnn
    format producer); else the host codec."""
    from .tensors import DeviceArray
    if not isinstance(d, DeviceArray):
        raise TypeError(f"d: expected a DeviceArray, got {type(d).__name__}")
    target = as_format(fmt)
    current = d.format
    if target is current and (target not in PRIVATE or c0 is None or c0 == (d._storage or (0,))[-1]):
        return ROUTE_NONE
    if target not in PRIVATE and current not in PRIVATE:
        return ROUTE_RELABEL
    dt = np.dtype(d.dtype)
    if d.backend == "npu" and _npu_format_cast_fits(d, target, c0) and _has_npu_format_cast():
        return ROUTE_NPU_FORMAT_CAST
    if d.backend == "npu" and target is Format.FRACTAL_NZ and current in (Format.ND,) \
            and dt.name in _TMW_DTYPES and (c0 is None or c0 == c0_for(dt)) \
            and 2 <= d.ndim <= (6 if dt.name == "int8" else 3) and d.size > 0 and _has_trans_matmul_weight():
        return ROUTE_TRANS_MATMUL_WEIGHT
    return ROUTE_HOST


def format_cast(d: Any, fmt: Any, c0: Optional[int] = None) -> Any:
    """``d`` in format ``fmt`` (torch_npu's ``npu_format_cast``): a new DeviceArray of the
    same logical shape and values, or ``d`` itself when it is already in that format.
    Between the public formats (ND, NCHW, NCDHW, ...; a relabel of the same bytes) and the
    private ones (FRACTAL_NZ, NC1HWC0, FRACTAL_Z, NDC1HWC0, FRACTAL_Z_3D; ``c0`` for
    4-byte dtypes, default 16). Always exact: through CANN's own operator where the
    installed CANN has one that fits, else on the host; ``format_cast_route`` says which."""
    from .tensors import DeviceArray, check_same_place, new_device_array, tag_problem, upload_formatted
    from .backends import get_backend
    from .backends.npu import runtime
    if not isinstance(d, DeviceArray):
        raise TypeError(f"d: expected a DeviceArray (ascend_aclnn.to_device(x, format=...) for a host array), got "
                        f"{type(d).__name__}")
    target = as_format(fmt)
    check_same_place(d, get_backend(), "d")
    problem = tag_problem(target, d.shape)
    if problem is not None:
        raise ValueError(f"fmt: {problem}")
    if target in PRIVATE:
        c0_for(d.dtype, c0)  # a dtype with no private format, or a bad c0: refused here
    route = format_cast_route(d, target, c0)
    if route == ROUTE_NONE:
        return d
    if route == ROUTE_RELABEL:
        new = d.copy()
        new._set_format(int(target), None)
        return new
    if route == ROUTE_TRANS_MATMUL_WEIGHT:
        from . import aclnn
        with runtime.gated:
            nd = new_device_array((storage_size(target, d.shape, d.dtype),), d.dtype, "npu")
        nd.shape = d.shape  # a block with room for the NZ storage, holding d's ND elements first
        nd._set_format(int(Format.ND), None)  # passed as ND whatever its rank (the op_api refuses others)
        with runtime.gated:
            device = d._device
            device.activate()
            with device.stream.lock:
                d._require_valid("d")
                device.copy_async(nd._buffer, d._buffer, d.nbytes)
                device.stream.launched((d._buffer, nd._buffer), [nd._buffer], "aclrtMemcpyAsync")
        result: DeviceArray = aclnn.operator("aclnnTransMatmulWeight")(nd)
        return result
    if route == ROUTE_NPU_FORMAT_CAST:
        from . import aclnn
        from .api import empty
        # an untagged d is passed with its rank's format, as every raw call passes it; a private
        # destination stored with the C0 asked for (for a 4-byte dtype 16 selects TransDataSpecial)
        dst = empty(d.shape, d.dtype, format=target.name, c0=c0_for(d.dtype, c0)) if target in PRIVATE else \
            empty(d.shape, d.dtype, format=target.name)
        aclnn.operator("aclnnNpuFormatCast")(d, dst)
        return dst
    host = d.numpy()
    if get_backend() == "npu":
        with runtime.gated:
            return upload_formatted(host, "npu", int(target), c0)
    return upload_formatted(host, "numpy", int(target), c0)


class SizeAndFormat:
    """``aa.aclnn.NpuFormatCastCalculateSizeAndFormat(srcTensor, dstFormat, additionalDtype=-1)``,
    CANN's plain function (no executor, CANN 8.5.0 on): the storage shape and the format
    aclnnNpuFormatCast would give ``srcTensor`` cast to ``dstFormat``, as a tuple
    ``(dstShape, actualFormat)``. ``srcTensor`` a DeviceArray (passed as a raw call passes
    it), ``dstFormat`` an aclFormat (int, ``aa.Format`` or its name), ``additionalDtype``
    -1 (srcTensor's dtype), an aclDataType code or a NumPy dtype. On the npu backend the
    installed CANN's function answers (its status as an AclnnError; 561003 if it has none);
    on the numpy backend its op_api's Atlas A2/A3 branch, by the release and SoC that
    backend follows."""

    name = _nfc.SIZE_FUNCTION
    __name__ = "NpuFormatCastCalculateSizeAndFormat"
    __qualname__ = __name__

    def __repr__(self) -> str:
        return f"<aclnn size function {self.name}>"

    def __call__(self, srcTensor: Any, dstFormat: Any, additionalDtype: Any = -1) -> tuple[tuple[int, ...], int]:
        from .backends import get_backend
        from .tensors import ACL_DTYPES, DeviceArray, check_same_place
        api = self.name
        if srcTensor is None:
            raise AclnnError(161002, api, "srcTensor is nullptr.", argument="srcTensor")
        if not isinstance(srcTensor, DeviceArray):
            raise TypeError(f"srcTensor: expected a DeviceArray, got {type(srcTensor).__name__}")
        check_same_place(srcTensor, get_backend(), "srcTensor")
        fmt = _c_int("dstFormat", dstFormat if isinstance(dstFormat, (int, np.integer)) and
                     not isinstance(dstFormat, bool) else int(as_format(dstFormat, "dstFormat")))
        if isinstance(additionalDtype, (int, np.integer)) and not isinstance(additionalDtype, bool):
            extra = _c_int("additionalDtype", additionalDtype)
        else:
            try:
                extra = int(ACL_DTYPES[np.dtype(additionalDtype)])
            except (TypeError, KeyError):
                raise TypeError(f"additionalDtype: expected -1, an aclDataType code or a dtype with one, got "
                                f"{additionalDtype!r}") from None
        if get_backend() != "npu":
            shape, actual = _nfc.calculate_size_and_format(srcTensor, fmt, extra)
        else:
            shape, actual = self._on_cann(srcTensor, fmt, extra)
        return shape, (Format(actual) if actual in Format._value2member_map_ else actual)

    def _on_cann(self, d: Any, fmt: int, extra: int) -> tuple[tuple[int, ...], int]:
        import ctypes
        from .backends.npu import runtime
        from .backends.npu.handles import create_tensor
        from .cann.loader import get_cann
        cann = get_cann()
        fn = cann.op_function(self.name, ctypes.c_int32, (
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
            ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_int)))
        if fn is None:
            raise AclnnError(_nfc.NOT_EXPORTED, self.name, "the installed CANN's operator libraries do not export it")
        p = _nfc.passed(d)
        d._require_valid("srcTensor")
        h = create_tensor(cann.function("aclCreateTensor"), cann, p.shape, np.dtype(d.dtype), p.format,
                          d._buffer.ptr, stored=p.storage if d._storage is not None else None)
        dims = ctypes.POINTER(ctypes.c_int64)()
        n, actual = ctypes.c_uint64(0), ctypes.c_int(0)
        try:
            status = fn(h, fmt, extra, ctypes.byref(dims), ctypes.byref(n), ctypes.byref(actual))
        finally:
            cann.function("aclDestroyTensor")(h)
        runtime.check(cann, status, self.name)
        try:
            shape = tuple(int(dims[i]) for i in range(n.value))
        finally:
            ctypes.CDLL(None).free(ctypes.cast(dims, ctypes.c_void_p))  # CANN hands the array to the caller
        return shape, int(actual.value)


def _c_int(name: str, v: Any) -> int:
    if not -2 ** 31 <= int(v) < 2 ** 31:
        raise ValueError(f"{name}: expected a C int, got {v!r}")
    return int(v)


from . import api as _api  # noqa: E402  api's to_device(DeviceArray, format=...) casts through format_cast

_api.format_caster = format_cast
