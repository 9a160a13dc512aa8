"""Layer 3a: dtypes and DeviceArray, the array that lives on the active backend's device.

Under the npu backend a DeviceArray owns device memory; under the numpy backend it simply
holds a host ndarray, so user code is the same on both.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence, Union

import ml_dtypes
import numpy as np

from . import runtime
from .cann.constants import AclDataType
from .errors import DeviceMismatchError

bfloat16 = np.dtype(ml_dtypes.bfloat16)

ACL_DTYPES: dict[np.dtype, AclDataType] = {
    np.dtype(np.float32): AclDataType.ACL_FLOAT,
    np.dtype(np.float16): AclDataType.ACL_FLOAT16,
    np.dtype(np.int8): AclDataType.ACL_INT8,
    np.dtype(np.int32): AclDataType.ACL_INT32,
    np.dtype(np.uint8): AclDataType.ACL_UINT8,
    np.dtype(np.int16): AclDataType.ACL_INT16,
    np.dtype(np.int64): AclDataType.ACL_INT64,
    np.dtype(np.float64): AclDataType.ACL_DOUBLE,
    np.dtype(np.bool_): AclDataType.ACL_BOOL,
    np.dtype(np.complex64): AclDataType.ACL_COMPLEX64,
    np.dtype(np.complex128): AclDataType.ACL_COMPLEX128,
    bfloat16: AclDataType.ACL_BF16,
}


def dtype_name(dtype: np.dtype) -> str:
    return "bfloat16" if dtype == bfloat16 else np.dtype(dtype).name


@functools.lru_cache(maxsize=4096)
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements, as aclCreateTensor wants them."""
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


class DeviceArray:
    """A device-resident array. Create with ``to_device`` or ``empty``; read with
    ``.numpy()``; freed when collected or by ``.free()``."""

    __slots__ = ("shape", "dtype", "_buffer", "_device", "_host")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, *, buffer: runtime.DeviceBuffer | None = None,
                 device: runtime.Device | None = None, host: np.ndarray | None = None):
        self.shape, self.dtype = tuple(int(d) for d in shape), np.dtype(dtype)
        self._buffer, self._device, self._host = buffer, device, host

    @property
    def backend(self) -> str:
        return "numpy" if self._device is None else "npu"

    @property
    def device(self) -> int | None:
        """NPU index, or None for an array held by the numpy backend."""
        return None if self._device is None else self._device.index

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def is_freed(self) -> bool:
        return self._host is None and (self._buffer is None or not self._buffer.ptr)

    def _require_live(self) -> None:
        if self.is_freed:
            raise ValueError("this DeviceArray has been freed")

    def numpy(self) -> np.ndarray:
        """A host copy. Waits for the work queued on the array's stream first."""
        self._require_live()
        if self._host is not None:
            return self._host.copy()
        out = np.empty(self.shape, self.dtype)
        self._device.download(self._buffer, 0, out.ctypes.data, self.nbytes)
        return out

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def free(self) -> None:
        """Release the memory now. Queued work that uses it is finished first."""
        if self._buffer is not None:
            if self._device.stream.has_pending_work:
                self._device.stream.synchronize()
            self._buffer.release()
        self._host = None

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        where = "freed" if self.is_freed else ("numpy backend" if self._device is None else f"npu:{self.device}")
        return f"DeviceArray(shape={self.shape}, dtype={dtype_name(self.dtype)}, {where})"


ArrayLike = Union[np.ndarray, DeviceArray]


def check_same_place(array: DeviceArray, backend: str, argument: str) -> None:
    """DeviceArrays never move implicitly: a silent host round trip would hide real cost."""
    array._require_live()
    if array.backend != backend:
        raise DeviceMismatchError(
            f"{argument}: this DeviceArray lives on the {array.backend} backend but the active "
            f"backend is {backend}; move it with ascend_aclnn.to_device(x.numpy())")
    if backend == "npu" and array.device != runtime.current_device_index():
        raise DeviceMismatchError(
            f"{argument}: this DeviceArray lives on npu:{array.device} but the current device is "
            f"npu:{runtime.current_device_index()}; call ascend_aclnn.set_device({array.device}) or copy it")


def new_device_array(shape: Sequence[int], dtype: Any, backend: str) -> DeviceArray:
    """Uninitialised array on the given backend's current device."""
    dtype = np.dtype(dtype)
    if backend == "numpy":
        return DeviceArray(tuple(shape), dtype, host=np.empty(shape, dtype))
    device = runtime.current_device()
    nbytes = math.prod(shape) * dtype.itemsize
    return DeviceArray(tuple(shape), dtype, buffer=device.allocator.alloc(nbytes), device=device)


def upload(array: np.ndarray, backend: str) -> DeviceArray:
    """Copy a host array onto the backend's current device (contiguous)."""
    array = np.ascontiguousarray(array)
    if backend == "numpy":
        return DeviceArray(array.shape, array.dtype, host=array.copy())
    device = runtime.current_device()
    return DeviceArray(array.shape, array.dtype, buffer=device.upload(array.ctypes.data, array.nbytes), device=device)
