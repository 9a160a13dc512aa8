"""DeviceArrays between formats: ``format_cast`` (torch_npu's ``npu_format_cast``) and the
route it takes. Above
``aa.aclnn``: a cast to FRACTAL_NZ runs CANN's aclnnTransMatmulWeight through it. The
layouts themselves are ``ascend_aclnn.formats``'."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .cpu_reference.private_formats import TRANS_MATMUL_WEIGHT_DTYPES as _TMW_DTYPES
from .formats import PRIVATE, Format, as_format, c0_for, storage_size

# ---- device arrays ------------------------------------------------------------------------------

ROUTE_NONE = "none: the array is already in that format"
ROUTE_TRANS_MATMUL_WEIGHT = "aclnnTransMatmulWeight: on the device, by the installed CANN"
ROUTE_HOST = "host: download, convert exactly with ascend_aclnn.formats, upload"
ROUTE_RELABEL = "relabel: a device copy of the same bytes, tagged with the other public format"


def _has_trans_matmul_weight() -> bool:
    """Whether the loaded CANN can run aclnnTransMatmulWeight through aa.aclnn (its header
    prototype, and the function in an operator library)."""
    from . import aclnn
    from .cann.loader import get_cann
    try:
        aclnn.prototype("aclnnTransMatmulWeight")
        return get_cann().op_function("aclnnTransMatmulWeightGetWorkspaceSize", None, ()) is not None
    except Exception:  # no header, no CANN: the host route
        return False


def format_cast_route(d: Any, fmt: Any, c0: Optional[int] = None) -> str:
    """Which way ``format_cast(d, fmt, c0=c0)`` converts (one of the ROUTE_* texts),
    without converting: on the numpy backend always the host codec; on the npu backend
    CANN's aclnnTransMatmulWeight for an ND float16, bfloat16 or int8 matrix (or 3-D stack,
    up to 6-D for int8) to FRACTAL_NZ with the dtype's own C0, when the installed CANN has
    it, else the host codec. CANN 8.1.RC1 has no other aclnn format producer; a newer
    CANN's aclnnNpuFormatCast is not bound."""
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
    host = d.numpy()
    if get_backend() == "npu":
        with runtime.gated:
            return upload_formatted(host, "npu", int(target), c0)
    return upload_formatted(host, "numpy", int(target), c0)


from . import api as _api  # noqa: E402  api's to_device(DeviceArray, format=...) casts through format_cast

_api.format_caster = format_cast
