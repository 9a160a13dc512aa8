"""Dtypes and DeviceArray, the array that lives on the active backend's device.

Under the npu backend a DeviceArray owns device memory; under the numpy backend it simply
holds a host ndarray, so user code is the same on both.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Any, Sequence, Union

import ml_dtypes
import numpy as np

from .backends.npu import runtime
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
    np.dtype(np.uint16): AclDataType.ACL_UINT16,
    np.dtype(np.uint32): AclDataType.ACL_UINT32,
    np.dtype(np.int64): AclDataType.ACL_INT64,
    np.dtype(np.uint64): AclDataType.ACL_UINT64,
    np.dtype(np.float64): AclDataType.ACL_DOUBLE,
    np.dtype(np.bool_): AclDataType.ACL_BOOL,
    np.dtype(np.complex64): AclDataType.ACL_COMPLEX64,
    np.dtype(np.complex128): AclDataType.ACL_COMPLEX128,
    bfloat16: AclDataType.ACL_BF16,
}


MAX_BYTES = runtime.MAX_BYTES


def dtype_name(dtype: np.dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == bfloat16:
        return "bfloat16"
    if not dtype.isnative and dtype.fields is None and dtype.kind not in "OSUV":
        return f"big-endian {dtype.newbyteorder('=').name}" if dtype.byteorder == ">" else \
            f"little-endian {dtype.newbyteorder('=').name}"
    return dtype.name


def acl_dtype_problem(dtype: np.dtype) -> str | None:
    """None when dtype has an ACL data type; otherwise what is wrong, for a message. Object,
    string, structured, void, datetime, long double and non-native byte orders have none:
    their bytes mean nothing to a kernel (an object array holds PyObject pointers)."""
    if dtype in ACL_DTYPES:
        return None
    dtype = np.dtype(dtype)
    text = f"{dtype_name(dtype)} ({dtype.str}) has no ACL data type"
    if not dtype.isnative and dtype.newbyteorder("=") in ACL_DTYPES:
        text += f"; convert it with .astype({dtype.newbyteorder('=').name!r})"
    else:
        text += "; supported: " + ", ".join(dtype_name(d) for d in ACL_DTYPES)
    return text


def require_acl_dtype(dtype: Any) -> np.dtype:
    """The dtype, or TypeError when it has no ACL data type (to_device, empty)."""
    dtype = np.dtype(dtype)
    problem = acl_dtype_problem(dtype)
    if problem is not None:
        raise TypeError(f"dtype: {problem}")
    return dtype


def size_problem(shape: Sequence[int], itemsize: int) -> str | None:
    """None when a shape of non-negative dims has at most MAX_BYTES bytes (so its element
    count, strides and byte size all fit int64 and size_t); otherwise what is wrong."""
    count = math.prod(shape)
    if 0 <= count * itemsize <= MAX_BYTES and min(shape, default=0) >= 0:
        return None  # the usual case, in one test
    if any(d < 0 for d in shape):
        return f"non-negative dims, got shape {tuple(shape)}"
    if count * max(itemsize, 1) > MAX_BYTES:
        return (f"at most {MAX_BYTES} bytes (int64 sizes), got shape {tuple(shape)}: {count} elements of "
                f"{itemsize} bytes = {count * itemsize} bytes")
    return None


def checked_shape(shape: Any, dtype: np.dtype) -> tuple[int, ...]:
    """A user-given shape as ints, or ValueError (empty)."""
    try:
        dims = tuple(shape) if not isinstance(shape, (int, np.integer)) else (shape,)
    except TypeError:
        raise ValueError(f"shape: expected a sequence of integers, got {type(shape).__name__} {shape!r}") from None
    try:
        if any(isinstance(d, (bool, np.bool_)) for d in dims):
            raise TypeError  # True is an int to Python, not a size (as for an aclIntArray)
        dims = tuple(operator.index(d) for d in dims)  # 2.5 or "3" are not sizes
    except TypeError:
        raise ValueError(f"shape: expected integer dims, got {shape!r}") from None
    problem = size_problem(dims, dtype.itemsize)
    if problem is not None:
        raise ValueError(f"shape: expected {problem}")
    return dims


def may_overlap(a: Any, b: Any) -> bool:
    """Whether two arrays (ndarray or DeviceArray) may share memory."""
    if isinstance(a, DeviceArray) and isinstance(b, DeviceArray):
        if a._buffer is not None or b._buffer is not None:
            return a._buffer is b._buffer
        return a._host is not None and b._host is not None and np.may_share_memory(a._host, b._host)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.may_share_memory(a, b)
    return False


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
    ``.numpy()``; freed when collected or by ``.free()``.

    On the npu backend the aclTensor handle that describes the array (one per aclFormat it
    is passed with) is created at its first launch and cached on its device block
    (runtime.DeviceBuffer.acl), so it lives as long as the block: while the array lives,
    then in the allocator's cache for the next array of the same description there, until
    empty_cache() returns the block to CANN and destroys it."""

    __slots__ = ("shape", "dtype", "_buffer", "_device", "_host")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, *, buffer: runtime.DeviceBuffer | None = None,
                 device: runtime.Device | None = None, host: np.ndarray | None = None):
        self.shape, self.dtype = tuple(int(d) for d in shape), np.dtype(dtype)
        self._buffer, self._device, self._host = buffer, device, host

    @classmethod
    def _wrap(cls, shape: tuple[int, ...], dtype: np.dtype, buffer: runtime.DeviceBuffer,
              device: runtime.Device) -> "DeviceArray":
        """The constructor for the hot path: shape a tuple of ints, dtype an np.dtype."""
        self = object.__new__(cls)
        self.shape, self.dtype, self._buffer, self._device, self._host = shape, dtype, buffer, device, None
        return self

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
        """Freed by ``free()``, or released with its device when the runtime was torn down."""
        return self._host is None and (self._buffer is None or not self._buffer.ptr or self._buffer.allocator.closed)

    def _require_live(self, argument: str | None = None) -> None:
        if self._buffer is not None:
            runtime.refuse_in_forked_child()
        if self.is_freed:
            where = f"{argument}: " if argument else ""
            if self._buffer is not None and self._buffer.ptr:  # its allocator is closed
                raise ValueError(f"{where}this DeviceArray's device memory was released when the runtime was torn "
                                 "down (teardown() or interpreter exit); keep a host copy (.numpy()) across a teardown")
            raise ValueError(f"{where}this DeviceArray has been freed")

    def _require_valid(self, argument: str | None = None) -> None:
        """Live, and not written by work that a failed synchronisation discarded."""
        self._require_live(argument)
        if self._buffer is not None and self._buffer.error is not None:
            raise runtime.discarded_error(self._buffer, argument)

    def numpy(self) -> np.ndarray:
        """A host copy. Waits for the work queued on the array's stream first; raises if that
        work was discarded by a failed synchronisation."""
        self._require_live()
        if self._host is not None:
            return self._host.copy()
        with runtime.gated:
            return self._download()

    def _download(self) -> np.ndarray:
        """numpy() of an npu array, for callers already inside a gated call."""
        self._require_live()
        out = np.empty(self.shape, self.dtype)
        self._device.download(self._buffer, 0, out.ctypes.data, self.nbytes)
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:  # NumPy 2's protocol: a view was required, and there is none
            raise ValueError("a DeviceArray cannot be viewed as a NumPy array without a copy; "
                             "use np.asarray(d) or d.numpy()")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __reduce_ex__(self, protocol):
        raise TypeError(f"a DeviceArray cannot be pickled or copied ({self!r}); use .numpy() for a host "
                        "copy, or ascend_aclnn.to_device(d.numpy()) for a new DeviceArray")

    def __copy__(self):
        self.__reduce_ex__(0)

    def __deepcopy__(self, memo):
        self.__reduce_ex__(0)

    def free(self) -> None:
        """Release the memory now. Queued work that uses it is finished first. After the
        runtime was torn down (at interpreter exit), the device reset reclaimed it: a no-op."""
        buf = self._buffer
        if buf is not None and buf.ptr:
            device = self._device
            if device.closed or runtime.in_forked_child():
                buf.release()  # the device reset (or the parent) owns the memory: nothing to free
            else:
                with runtime.gated:
                    stream = device.stream
                    # Under the stream's lock: a launch checks its arrays are live under the same
                    # lock, so it either runs before this (and is waited for) or sees the free.
                    with stream.lock:
                        try:
                            if stream.has_pending_work:
                                stream.synchronize()
                        finally:
                            buf.release()
        self._host = None

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        where = "freed" if self.is_freed else ("numpy backend" if self._device is None else f"npu:{self.device}")
        return f"DeviceArray(shape={self.shape}, dtype={dtype_name(self.dtype)}, {where})"


ArrayLike = Union[np.ndarray, DeviceArray]


def check_same_place(array: DeviceArray, backend: str, argument: str, device: int | None = None) -> None:
    """DeviceArrays never move implicitly: a silent host round trip would hide real cost.
    An input whose producing work was discarded by a failed sync is refused here.
    ``device``: the NPU the call runs on (default: the current device)."""
    if argument == "out" or argument.startswith("out["):
        array._require_live(argument)  # an out= is rewritten, which makes it valid again
    else:
        array._require_valid(argument)
    if array.backend != backend:
        raise DeviceMismatchError(
            f"{argument}: this DeviceArray lives on the {array.backend} backend but the active "
            f"backend is {backend}; move it with ascend_aclnn.to_device(x.numpy())")
    if backend != "npu":
        return
    if device is None and array.device != runtime.current_device_index():
        raise DeviceMismatchError(
            f"{argument}: this DeviceArray lives on npu:{array.device} but the current device is "
            f"npu:{runtime.current_device_index()}; call ascend_aclnn.set_device({array.device}) or copy it")
    if device is not None and array.device != device:
        raise DeviceMismatchError(
            f"{argument}: this DeviceArray lives on npu:{array.device} but this call runs on npu:{device} "
            f"(where its plan was made); copy it there, or make a plan on npu:{array.device}")


def new_device_array(shape: Sequence[int], dtype: Any, backend: str) -> DeviceArray:
    """Uninitialised array on the given backend's current device."""
    dtype = np.dtype(dtype)
    if backend == "numpy":
        return DeviceArray(tuple(shape), dtype, host=np.empty(shape, dtype))
    device = runtime.current_device()
    nbytes = math.prod(shape) * dtype.itemsize  # the caller is in a gated call
    return DeviceArray(tuple(shape), dtype, buffer=device.allocator.alloc(nbytes), device=device)


def upload(array: np.ndarray, backend: str) -> DeviceArray:
    """Copy a host array onto the backend's current device (contiguous)."""
    require_acl_dtype(array.dtype)
    array = np.ascontiguousarray(array)
    if backend == "numpy":
        return DeviceArray(array.shape, array.dtype, host=array.copy())
    device = runtime.current_device()
    return DeviceArray(array.shape, array.dtype, buffer=device.upload(array.ctypes.data, array.nbytes), device=device)
