"""Layer 6: the public API: the one entry point every operator function goes through
(operators.py, generated from the descriptions), and device helpers that work the same
under either backend."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import runtime
from .backends import get_backend, numpy_backend, npu, require_npu
from .ops.spec import OpSpec, TensorArg
from .tensors import DeviceArray, check_same_place, checked_shape, new_device_array, require_acl_dtype, upload


def call(spec: OpSpec, *args: Any, **kwargs: Any) -> Any:
    """Run one operator on the active backend; arguments are checked before any C call."""
    backend = get_backend()
    a = spec.bind(args, kwargs)
    for name, value in list(a.items()) + [("out", o) for o in a.outputs]:
        if isinstance(value, TensorArg) and isinstance(value.value, DeviceArray):
            check_same_place(value.value, backend, name)
    return (npu.run if backend == "npu" else numpy_backend.run)(spec, a)


def to_device(array: Any) -> DeviceArray:
    """Copy an array onto the active backend's current device."""
    backend = get_backend()
    if isinstance(array, DeviceArray):
        check_same_place(array, backend, "array")
        return array
    if isinstance(array, np.ma.MaskedArray):  # np.asarray would silently drop the mask
        raise TypeError("array: a numpy.ma.MaskedArray has no device form (its mask would be dropped); "
                        "pass array.filled(value), or array.data to keep the masked-out values")
    return upload(np.asarray(array), backend)


def empty(shape: Sequence[int], dtype: Any = np.float32) -> DeviceArray:
    """An uninitialised DeviceArray, e.g. to pass as out=. Raises TypeError for a dtype
    with no ACL data type, ValueError for a shape that is not non-negative integers or
    whose byte size does not fit int64."""
    dtype = require_acl_dtype(dtype)
    return new_device_array(checked_shape(shape, dtype), dtype, get_backend())


def synchronize() -> None:
    """Wait for all queued NPU work (a no-op on the numpy backend)."""
    rt = runtime.runtime_if_started()
    if rt is not None:
        rt.synchronize()


def empty_cache() -> None:
    """Return cached device memory and workspaces to CANN (waits for queued work first)."""
    rt = runtime.runtime_if_started()
    if rt is not None:
        rt.empty_cache()


def set_device(index: int) -> None:
    """Choose the NPU that operators and to_device use (default 0)."""
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool) or index < 0:
        raise ValueError(f"device: expected a non-negative int, got {index!r}")
    if get_backend() == "npu":
        require_npu().device(int(index)).activate()
    runtime.set_current_device_index(int(index))


def get_device() -> int:
    return runtime.current_device_index()


def device_count() -> int:
    """Number of NPUs CANN reports, 0 when CANN cannot be loaded."""
    try:
        return runtime.get_runtime().device_count
    except Exception:
        return 0
