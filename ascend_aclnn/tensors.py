"""Dtypes and DeviceArray, the array that lives on the active backend's device.

Under the npu backend a DeviceArray owns device memory; under the numpy backend it simply
holds a host ndarray, so user code is the same on both.
"""
from __future__ import annotations

import contextvars
import functools
import math
import operator
import sys
import threading
import weakref
from typing import Any, Optional, Protocol, Sequence, Union

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

from .backends.npu import runtime
from .cann.constants import AclDataType
from .errors import DeviceMismatchError

bfloat16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)

ACL_DTYPES: dict[np.dtype[Any], AclDataType] = {
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


def dtype_name(dtype: np.dtype[Any]) -> str:
    """The name messages use for a dtype ("float32", "bfloat16"), with its byte order when not native."""
    dtype = np.dtype(dtype)
    if dtype == bfloat16:
        return "bfloat16"
    if not dtype.isnative and dtype.fields is None and dtype.kind not in "OSUV":
        return f"big-endian {dtype.newbyteorder('=').name}" if dtype.byteorder == ">" else \
            f"little-endian {dtype.newbyteorder('=').name}"
    return dtype.name


def acl_dtype_problem(dtype: np.dtype[Any]) -> str | None:
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


def require_acl_dtype(dtype: Any) -> np.dtype[Any]:
    """The dtype, or TypeError when it has no ACL data type (to_device, empty)."""
    dt: np.dtype[Any] = np.dtype(dtype)
    problem = acl_dtype_problem(dt)
    if problem is not None:
        raise TypeError(f"dtype: {problem}")
    return dt


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


def checked_shape(shape: Any, dtype: np.dtype[Any]) -> tuple[int, ...]:
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


# Guards the lists of views sharing a block (DeviceArray._views): appended by reshape/view,
# pruned by free(), possibly on different threads.
_views_lock = threading.Lock()


class _Detached:
    """What a DeviceArray view holds after its own ``free()`` while other views keep the
    block: no address (so every liveness check refuses it), and no reference to the block."""
    __slots__ = ()
    ptr = 0
    nbytes = 0
    error = None
    writer = None
    acl = None


def _shape_arg(args: tuple[Any, ...], what: str) -> tuple[int, ...]:
    """reshape(2, 3), reshape((2, 3)) or reshape([2, -1]) as a tuple of ints (one -1 allowed)."""
    dims = args[0] if len(args) == 1 and not isinstance(args[0], (int, np.integer)) else args
    try:
        dims = tuple(dims)
        if any(isinstance(d, (bool, np.bool_)) for d in dims):
            raise TypeError
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"{what}: expected integer dims, got {args!r}") from None
    if sum(d == -1 for d in dims) > 1 or any(d < -1 for d in dims):
        raise ValueError(f"{what}: expected non-negative dims and at most one -1, got {dims}")
    return dims


class DeviceArray:
    """A device-resident array. Made by ``ascend_aclnn.to_device(array)`` or
    ``ascend_aclnn.empty(shape, dtype)`` (and returned by operators given one), never by
    calling the class. Read it with ``.numpy()`` (a synchronisation and a host copy; values
    are never read implicitly: ``repr`` shows shape, dtype, device and state only).

    - ``reshape(*shape)``, ``view(*shape)`` or ``view(dtype)``: a new DeviceArray over the same
      device block (metadata only; a DeviceArray is always C-contiguous).
    - ``copy()``: a new block with the same contents (a device-to-device copy queued on the
      stream, no synchronisation; a host copy on the numpy backend).
    - ``astype(dtype)``: a converted copy, through the host (download, NumPy's conversion,
      upload): no aclnn cast is bound. The same dtype is a device ``copy()``.
    - ``free()``: gives up this array's hold on its block. The block is released when no
      array sharing it holds it any longer (every view freed or collected): freeing one view
      never frees memory that another live view still reads.
    - ``==``, ``!=`` and ``bool()`` raise TypeError: an element-wise answer would be a hidden
      synchronisation and download, and an identity answer a silent trap. Compare on the
      host (``np.array_equal(a.numpy(), b.numpy())``), or use ``a is b``.
    - DLPack: on the numpy backend a DeviceArray is a host array, and ``np.from_dlpack(d)``
      (or ``torch.from_dlpack(d)``) shares its memory; NPU memory has no DLPack device type.
    - ``format``, ``storage_shape``, ``storage()``: the aclFormat it is passed with (ND
      unless made with another, see ``to_device(x, format=...)`` and ``format_cast``); a
      private one (FRACTAL_NZ, NC1HWC0, ...) is stored encoded, ``storage()`` gives the
      stored elements and ``numpy()`` always the logical array (docs/formats.md).

    On the npu backend the aclTensor handle that describes the array (one per shape, dtype
    and aclFormat it is passed with) is created at its first launch and cached on its device
    block (runtime.DeviceBuffer.acl), so it lives as long as the block: while the array
    lives, then in the allocator's cache for the next array of the same description there,
    until empty_cache() returns the block to CANN and destroys it."""

    __slots__ = ("shape", "dtype", "_buffer", "_device", "_host", "_views", "_format", "_storage", "__weakref__")
    # The slots' types (annotations only: a slot cannot have a class-level value)
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    _buffer: Any            # runtime.DeviceBuffer (npu), or a _Detached after a view's free()
    _device: Any            # runtime.Device, or None on the numpy backend
    _host: Optional[NDArray[Any]]  # the array itself on the numpy backend
    _views: Optional[list[weakref.ref[DeviceArray]]]  # the views sharing the block, if any
    # The aclFormat the array is tagged with (None: untagged, passed as each operator's
    # default), and for a private format the stored shape (None: the logical shape, row-major).
    # On the numpy backend _host then holds the stored array (formats.encode's).
    _format: Optional[int]
    _storage: Optional[tuple[int, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("DeviceArray cannot be constructed directly: use ascend_aclnn.to_device(array) to copy an "
                        "array to the active backend's device, or ascend_aclnn.empty(shape, dtype) for an "
                        "uninitialised one")

    @classmethod
    def _wrap(cls, shape: tuple[int, ...], dtype: np.dtype[Any], buffer: runtime.DeviceBuffer,
              device: runtime.Device) -> "DeviceArray":
        """The constructor for the hot path: shape a tuple of ints, dtype an np.dtype."""
        self = object.__new__(cls)
        self.shape, self.dtype, self._buffer, self._device, self._host = shape, dtype, buffer, device, None
        self._views = self._format = self._storage = None
        return self

    @classmethod
    def _from_host(cls, host: NDArray[Any]) -> "DeviceArray":
        """A numpy-backend array holding ``host`` (C-contiguous, not copied)."""
        self = object.__new__(cls)
        self.shape, self.dtype = tuple(int(d) for d in host.shape), np.dtype(host.dtype)
        self._buffer, self._device, self._host, self._views = None, None, host, None
        self._format = self._storage = None
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
        """Bytes of its storage: ``size * itemsize``, or for a private format the stored
        array's (padding included)."""
        storage = self._storage
        return (self.size if storage is None else math.prod(storage)) * self.dtype.itemsize

    @property
    def format(self) -> Any:
        """The array's ``ascend_aclnn.Format``: ND unless it was made with (or given by an
        operator) another one. A private format (FRACTAL_NZ, NC1HWC0, ...) is stored encoded:
        ``.numpy()`` still gives the logical array, ``.storage()`` the stored one."""
        from .formats import Format
        return Format.ND if self._format is None else Format(self._format)

    @property
    def storage_shape(self) -> tuple[int, ...]:
        """The stored (physical) shape: ``shape`` itself unless the format is private."""
        return self.shape if self._storage is None else self._storage

    def storage(self) -> NDArray[Any]:
        """The stored elements as a NumPy array of ``storage_shape``, padding included (a
        synchronisation and a host copy, as ``numpy()``)."""
        self._require_live()
        runtime.refuse_in_capture("aclrtMemcpy", "reading a DeviceArray on the host (.storage())")
        if self._host is not None:
            return self._host.copy()
        with runtime.gated:
            return self._download_storage()

    def _download_storage(self) -> NDArray[Any]:
        self._require_live()
        out = np.empty(self.storage_shape, self.dtype)
        self._device.download(self._buffer, 0, out.ctypes.data, self.nbytes)
        return out

    def _logical(self, stored: NDArray[Any]) -> NDArray[Any]:
        """The logical array of this array's stored elements."""
        if self._storage is None:
            return stored
        from .formats import decode
        return decode(stored, self._format, self.shape, self._storage[-1])

    def _set_format(self, fmt: Optional[int], storage: Optional[tuple[int, ...]]) -> None:
        """Retag the array (the stored bytes are already in that layout)."""
        self._format, self._storage = fmt, storage

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

    def numpy(self) -> NDArray[Any]:
        """A host copy. Waits for the work queued on the array's stream first; raises if that
        work was discarded by a failed synchronisation."""
        self._require_live()
        runtime.refuse_in_capture("aclrtMemcpy", "reading a DeviceArray on the host (.numpy())")
        if self._host is not None:
            return self._host.copy() if self._storage is None else self._logical(self._host)
        with runtime.gated:
            return self._download()

    def _download(self) -> NDArray[Any]:
        """numpy() of an npu array, for callers already inside a gated call."""
        self._require_live()
        if self._storage is not None:
            return self._logical(self._download_storage())
        out = np.empty(self.shape, self.dtype)
        self._device.download(self._buffer, 0, out.ctypes.data, self.nbytes)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        if copy is False:  # NumPy 2's protocol: a view was required, and there is none
            raise ValueError("a DeviceArray cannot be viewed as a NumPy array without a copy; "
                             "use np.asarray(d) or d.numpy()")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    # ---- views and copies ---------------------------------------------------------------------

    def _view_as(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> "DeviceArray":
        """A DeviceArray over this one's memory with another shape or dtype (same bytes)."""
        if self._storage is not None:
            raise ValueError(f"reshape/view: this DeviceArray is stored in the private format {self.format.name} "
                             f"(storage shape {self._storage}), whose bytes are not its logical array's; "
                             "convert it first with ascend_aclnn.format_cast(d, 'ND')")
        v = object.__new__(DeviceArray)
        v.shape, v.dtype, v._device = shape, dtype, self._device
        v._format = v._storage = None
        if self._host is not None:
            host = self._host if dtype == self.dtype else self._host.view(dtype)
            v._buffer, v._host, v._views = None, host.reshape(shape), None
            return v
        v._buffer, v._host = self._buffer, None
        with _views_lock:
            views = self._views
            if views is None:
                views = self._views = [weakref.ref(self)]
            views.append(weakref.ref(v))
        v._views = views
        return v

    def reshape(self, *shape: Any) -> "DeviceArray":
        """The same memory with another shape of the same size (``-1`` infers one dim):
        metadata only, no copy, no synchronisation. See ``free()`` for who owns the block."""
        self._require_live()
        dims = _shape_arg(shape, "reshape")
        if -1 in dims:
            known = math.prod(d for d in dims if d != -1)
            if known == 0 or self.size % known:
                raise ValueError(f"reshape: cannot infer -1 in {dims} for an array of {self.size} elements "
                                 f"(shape {self.shape})")
            dims = tuple(self.size // known if d == -1 else d for d in dims)
        if math.prod(dims) != self.size:
            raise ValueError(f"reshape: cannot reshape an array of shape {self.shape} ({self.size} elements) "
                             f"to {dims} ({math.prod(dims)} elements)")
        return self._view_as(dims, self.dtype)

    def view(self, *shape_or_dtype: Any) -> "DeviceArray":
        """``view(*shape)``: ``reshape``, as torch's ``Tensor.view``. ``view(dtype)``: the same
        bytes read as another dtype, as NumPy's ``ndarray.view`` (the last dim scales with the
        item size). Metadata only either way."""
        if len(shape_or_dtype) == 1 and isinstance(shape_or_dtype[0], (str, type, np.dtype)):
            return self._view_dtype(shape_or_dtype[0])
        return self.reshape(*shape_or_dtype)

    def _view_dtype(self, dtype: Any) -> "DeviceArray":
        self._require_live()
        try:
            dtype = require_acl_dtype(dtype)
        except TypeError as exc:
            raise TypeError(f"view: {exc}") from None
        old, new = self.dtype.itemsize, dtype.itemsize
        shape = self.shape
        if old != new:
            if not shape or (shape[-1] * old) % new:
                raise ValueError(f"view: cannot view {dtype_name(self.dtype)} of shape {shape} as "
                                 f"{dtype_name(dtype)}: the last dim's {shape[-1] * old if shape else old} bytes "
                                 f"are not a multiple of {new}")
            shape = shape[:-1] + (shape[-1] * old // new,)
        return self._view_as(shape, dtype)

    def copy(self) -> "DeviceArray":
        """A new DeviceArray with this one's contents on the same device. On the npu backend a
        device-to-device ``aclrtMemcpyAsync`` queued on the array's stream (no synchronisation);
        on the numpy backend a host copy."""
        self._require_valid()
        if self._host is not None:
            runtime.host_work()
            new = DeviceArray._from_host(self._host.copy())
            new.shape = self.shape
            new._set_format(self._format, self._storage)
            capture = runtime.current_capture.get()
            if capture is not None:  # a captured device copy: replayed, as on the npu backend
                capture.record_copy(new, self)
            return new
        with runtime.gated:
            device = self._device
            device.activate()
            stream = device.stream
            buf = device.allocator.alloc(self.nbytes)
            new = DeviceArray._wrap(self.shape, self.dtype, buf, device)
            new._set_format(self._format, self._storage)
            with stream.lock:  # free() takes it too: the source is live until the copy is queued
                self._require_valid()
                src = self._buffer
                device.copy_async(buf, src, self.nbytes)
                stream.launched((src, buf), [buf], "aclrtMemcpyAsync")
            return new

    def copy_(self, src: Any) -> "DeviceArray":
        """Write src (a NumPy array or DeviceArray of this shape and dtype) into this array in
        place, on the current stream, and return this array: how a captured graph's static
        inputs get new contents. A NumPy src is uploaded first (refused during a capture)."""
        self._require_live()
        if isinstance(src, DeviceArray):
            check_same_place(src, self.backend, "src", self.device)
        elif not isinstance(src, np.ndarray):
            raise TypeError(f"src: expected a NumPy array or a DeviceArray, got {type(src).__name__}")
        elif isinstance(src, np.ma.MaskedArray):  # to_device's rule: uploading its data would drop the mask
            raise TypeError("src: a numpy.ma.MaskedArray has no device form (its mask would be dropped); "
                            "pass src.filled(value), or src.data to keep the masked-out values")
        if tuple(src.shape) != self.shape or np.dtype(src.dtype) != self.dtype:
            raise ValueError(f"src: expected shape {self.shape} and dtype {dtype_name(self.dtype)}, got "
                             f"{tuple(src.shape)} {dtype_name(src.dtype)}")
        theirs = (src._format, src._storage) if isinstance(src, DeviceArray) else (None, None)
        if (self._storage is not None or theirs[1] is not None) and theirs != (self._format, self._storage):
            raise ValueError(f"src: this array is stored as {self.format.name} {self.storage_shape}, src as "
                             f"{src.format.name if isinstance(src, DeviceArray) else 'a NumPy array'} "
                             f"{src.storage_shape if isinstance(src, DeviceArray) else tuple(src.shape)}; copy_ copies "
                             "stored bytes: give a src of the same format (ascend_aclnn.format_cast)")
        if self._host is not None:
            runtime.host_work()
            if isinstance(src, DeviceArray):
                src._require_valid("src")
                assert src._host is not None  # both on the numpy backend
                capture = runtime.current_capture.get()
                if capture is not None:  # replayed, as the npu backend's captured aclrtMemcpyAsync
                    capture.record_copy(self, src)
                else:
                    np.copyto(self._host, src._host)
            else:
                runtime.refuse_in_capture("aclrtMemcpy", "copy_ from a NumPy array")
                np.copyto(self._host, src)
            return self
        with runtime.gated:
            device = self._device
            device.activate()
            stream = device.stream
            staged = None
            if not isinstance(src, DeviceArray):
                host = np.ascontiguousarray(src)
                staged = device.upload(host.ctypes.data, self.nbytes)  # refused during a capture
            with stream.lock:  # free() takes it too: both are live until the copy is queued
                self._require_live()
                if staged is None:
                    src._require_valid("src")
                    source = src._buffer
                else:
                    source = staged
                dst = self._buffer
                device.copy_async(dst, source, self.nbytes)
                stream.launched((source, dst), [dst], "aclrtMemcpyAsync")
        return self

    def astype(self, dtype: Any, copy: bool = True) -> "DeviceArray":
        """A copy converted to ``dtype`` with NumPy's conversion rules, on the same device.
        Through the host (download, convert, upload): no aclnn cast is bound. The same dtype
        gives a device ``copy()`` (or this array itself with ``copy=False``)."""
        dtype = require_acl_dtype(dtype)
        self._require_valid()
        if dtype == self.dtype:
            return self.copy() if copy else self
        if self._storage is not None:  # converted as logical values, stored again in its format (dtype's C0)
            from .formats import encode, storage_shape
            stored = encode(self.numpy().astype(dtype), self._format)
            storage: Optional[tuple[int, ...]] = storage_shape(self._format, self.shape, dtype)
        else:
            stored, storage = (self._host if self._host is not None else self.numpy()).astype(dtype), None
        if self._host is not None:
            runtime.refuse_in_capture("aclrtMemcpy", "astype() (a conversion through the host)")  # as on the npu
            new = DeviceArray._from_host(stored)
        else:
            host = np.ascontiguousarray(stored)
            with runtime.gated:
                device = self._device
                new = DeviceArray._wrap(self.shape, dtype, device.upload(host.ctypes.data, host.nbytes), device)
        new.shape = self.shape
        new._set_format(self._format, storage)
        return new

    # ---- protocols ----------------------------------------------------------------------------

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"a DeviceArray cannot be pickled or copied implicitly ({self!r}); use d.copy() for a "
                        "device copy or .numpy() for a host copy")

    def __copy__(self) -> Any:
        self.__reduce_ex__(0)

    def __deepcopy__(self, memo: Any) -> Any:
        self.__reduce_ex__(0)

    def _ambiguous(self, what: str) -> TypeError:
        return TypeError(f"{what} of a DeviceArray is ambiguous: element-wise it would need a synchronisation "
                         "and a download, and it is not identity; compare on the host, e.g. "
                         "np.array_equal(a.numpy(), b.numpy()), or use `a is b`")

    def __eq__(self, other: object) -> bool:
        raise self._ambiguous("==")

    def __ne__(self, other: object) -> bool:
        raise self._ambiguous("!=")

    def __bool__(self) -> bool:
        raise self._ambiguous("the truth value")

    def __hash__(self) -> int:  # identity, as before: arrays may key dicts and sets
        return object.__hash__(self)

    def __dlpack__(self, **kwargs: Any) -> Any:
        """DLPack export of a numpy-backend array (its host memory, shared). NPU memory has
        no DLPack device type: BufferError, use ``.numpy()``."""
        self._require_live()
        if self._host is None:
            raise BufferError(f"a DeviceArray on npu:{self.device} is NPU memory, which DLPack has no device type "
                              "for; copy it to the host with d.numpy()")
        if self._storage is not None:  # its memory holds the encoded layout, not the logical array
            raise BufferError(f"this DeviceArray is stored as {self.format.name} {self._storage}, not as its logical "
                              f"shape {self.shape}: export d.numpy() (the logical array) or d.storage() instead")
        if self._host.dtype == bfloat16:  # NumPy's exporter knows no ml_dtypes type: say why, and the way round
            raise BufferError("a bfloat16 DeviceArray cannot be exported through DLPack: NumPy, which holds it on "
                              "the numpy backend, exports only its own dtypes and bfloat16 is ml_dtypes'. Share the "
                              "memory as int16 instead: torch.from_numpy(d.numpy().view(np.int16))"
                              ".view(torch.bfloat16) (d.numpy() is a copy; no other copy is made)")
        return self._host.__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        if self._host is None and not self.is_freed:
            raise BufferError(f"a DeviceArray on npu:{self.device} is NPU memory, which DLPack has no device type "
                              "for; copy it to the host with d.numpy()")
        return (1, 0)  # kDLCPU

    def free(self) -> None:
        """Give up this array's hold on its memory now, without waiting. Views made by
        ``reshape``/``view`` share one block: it is released when the last of them is freed;
        freeing any other view only detaches that view. A released block is handed out
        again only after the work already queued on any stream that uses it has run.
        Collecting an array drops its hold too. After the runtime was torn down (at
        interpreter exit), the device reset reclaimed the memory: a no-op."""
        buf = self._buffer
        if buf is not None and buf.ptr:
            device = self._device
            if device.closed or runtime.in_forked_child():
                # The device reset (or the parent) owns the memory: nothing to free, no lock to take.
                if self._shared_with_live_views():
                    self._buffer = _Detached()
                else:
                    buf.release()
            else:
                with runtime.gated:
                    # Under the device's lock (all its streams share it): a launch checks its arrays
                    # are live under the same lock, so it either is queued before this (and is seen
                    # here) or sees the free. The users are the streams whose queued work holds the
                    # block (Stream.uses: an array over it, or a queued replay's holdings); nothing
                    # is waited for: the allocator hands the block out again once an event recorded
                    # on each of them has completed.
                    with device.lock:
                        users = [s for s in list(device.streams)
                                 if not s.holds_for_graph and s.has_pending_work and s.uses(buf)]
                        # a graph's captured launches use the block at every replay: it keeps it
                        held = [s for s in list(device.streams) if s.holds_for_graph and s.uses(buf)]
                        if self._shared_with_live_views() or held:
                            self._buffer = _Detached()  # the block stays with the other views, or the graph
                            for s in users + held:  # queued work may still use it through this one
                                s.keep_alive(buf)
                        else:
                            device.allocator.release_after(buf, users)
        self._host = None

    def _move_to(self, buf: Any) -> None:
        """Put this array on another block of its device (its contents already copied there
        on the stream): the old block is given up as ``free()`` gives it up, staying with
        the other views that share it."""
        old = object.__new__(DeviceArray)
        old.shape, old.dtype, old._device, old._host = self.shape, self.dtype, self._device, None
        old._buffer, old._format, old._storage = self._buffer, self._format, self._storage
        views = self._views
        if views is not None:
            with _views_lock:
                views[:] = [r for r in views if r() is not self]
                views.append(weakref.ref(old))
        old._views = views
        self._buffer, self._views = buf, None
        old.free()

    def _shared_with_live_views(self) -> bool:
        """Whether another live view holds this array's block (pruning dead entries)."""
        views = self._views
        if views is None:
            return False
        with _views_lock:  # a reshape on another thread must not be pruned away unseen
            views[:] = [r for r in views if (v := r()) is not None and v is not self and v._buffer.ptr]
            return bool(views)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        if self._device is None:
            where = "numpy backend"
        else:
            where = f"npu:{self.device}"
        state = "freed" if self.is_freed else "live"
        fmt = ""
        if self._format is not None:
            fmt = f", format={self.format.name}"
            if self._storage is not None:
                fmt += f", storage_shape={self._storage}"
        if not self.is_freed and self._buffer is not None and self._buffer.error is not None:
            state = "invalid: its producing work was discarded by a failed synchronisation"
        return f"DeviceArray(shape={self.shape}, dtype={dtype_name(self.dtype)}{fmt}, device={where!r}, {state})"


ArrayLike = Union[NDArray[Any], DeviceArray]


class SupportsDLPack(Protocol):
    """A host array of another library, as the operators accept it: a CPU torch tensor or
    any CPU DLPack producer. Results come back as torch tensors for torch tensors, else as
    NumPy arrays; the type checker sees Any."""

    def __dlpack__(self) -> object: ...

    def __dlpack_device__(self) -> object: ...


# What an operator takes as a tensor: a NumPy array, a DeviceArray, another library's host
# array, or a (nested) Python list of numbers (taking the dtype of the call's first array).
TensorLike = Union[NDArray[Any], DeviceArray, SupportsDLPack, Sequence[Any]]


# ---- host arrays of other libraries: PyTorch CPU tensors and DLPack producers -------------------
#
# torch is never imported here: a torch tensor can only exist once the caller imported torch,
# so ``sys.modules`` says whether to look for one. Conversions are zero-copy NumPy views where
# possible (``Tensor.numpy()``; a bfloat16 tensor through an int16 view, read as ml_dtypes'
# bfloat16; ``np.from_dlpack`` for other producers). A call records each conversion, so its
# results can come back in the kind of its inputs (``results_like``).

KDL_CPU = 1  # DLPack's device type for host memory
_seen: contextvars.ContextVar[Optional[list[Any]]] = contextvars.ContextVar("ascend_aclnn_foreign_inputs", default=None)


def is_torch_tensor(value: Any) -> bool:
    """Whether value is a torch tensor, without importing torch (no torch loaded: no tensor)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _supported() -> str:
    return ", ".join(dtype_name(d) for d in ACL_DTYPES)


def _torch_view(t: Any, writable: bool) -> NDArray[Any]:
    torch = sys.modules["torch"]
    if t.requires_grad:
        raise TypeError("expected a tensor that does not require grad, got one with requires_grad=True: pass "
                        "x.detach() (ascend_aclnn.torch has autograd functions that call the backward kernels)")
    device = t.device
    if device.type != "cpu":
        why = ("torch_npu's NPU memory belongs to its own runtime, which this binding does not share"
               if device.type == "npu" else "this binding reads host memory only")
        raise TypeError(f"expected a CPU tensor, got one on {device}: {why}; pass x.cpu()")
    if t.layout is not torch.strided or t.is_nested:
        raise TypeError(f"expected a dense (strided) tensor, got a {'nested' if t.is_nested else t.layout} one; "
                        "pass x.to_dense()")
    if t.is_quantized:
        raise TypeError("expected a float, integer, complex or bool tensor, got a quantized one; pass x.dequantize()")
    if t.is_conj() or t.is_neg():
        if writable:
            raise TypeError("expected a tensor to write into, got a lazily conjugated or negated view (its memory "
                            "holds other values); pass a tensor with x.resolve_conj() / x.resolve_neg() applied")
        t = t.resolve_conj().resolve_neg()
    if writable and any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
        raise TypeError("expected a tensor to write into whose elements have memory of their own, got an "
                        f"expanded one (strides {tuple(t.stride())}); pass a new tensor, e.g. torch.empty_like(x)")
    if t.dtype == torch.bfloat16:
        bits: NDArray[Any] = t.view(torch.int16).numpy()
        return bits.view(bfloat16)
    try:
        view: NDArray[Any] = t.numpy()
        return view
    except (TypeError, RuntimeError):
        raise TypeError(f"{t.dtype} has no ACL data type; supported: {_supported()}") from None


def _dlpack_view(value: Any, writable: bool) -> Optional[NDArray[Any]]:
    try:
        device = value.__dlpack_device__()
        kind = int(device[0])
    except Exception:  # noqa: BLE001  not a usable producer: let np.asarray decide
        return None
    if kind != KDL_CPU:
        raise TypeError(f"expected a host (CPU) array, got a DLPack producer ({type(value).__name__}) on DLPack "
                        f"device type {kind}; copy it to the host first")
    try:
        host = np.from_dlpack(value)
    except (BufferError, TypeError, RuntimeError, ValueError) as exc:
        if hasattr(type(value), "__array__"):
            return None  # e.g. a dtype DLPack cannot carry to NumPy (bfloat16): np.asarray may still work
        raise TypeError(f"NumPy cannot import this DLPack producer ({type(value).__name__}): {exc}") from None
    if writable and not host.flags.writeable:
        raise TypeError("expected a writeable array, got a read-only DLPack export (the producer marked it so, or "
                        f"NumPy {np.__version__} imports every DLPack array read-only); pass it as an input, and a "
                        "NumPy array or torch tensor as out=")
    return host


def host_view(value: Any, writable: bool = False) -> Optional[NDArray[Any]]:
    """A NumPy view of a CPU torch tensor or of a DLPack producer on the host (a copy only
    for a lazily conjugated or negated tensor read as an input), or None for any other
    object (NumPy arrays included). Raises TypeError, one line saying why, for a tensor or
    producer that cannot be used (requires grad, not on the CPU, no ACL dtype, ...).
    ``writable``: it will be written (an ``out=``). Within a call (``record_foreign``) the
    view and the original are recorded for ``results_like``."""
    if isinstance(value, (np.ndarray, DeviceArray)):
        return None
    host: Optional[NDArray[Any]]
    if is_torch_tensor(value):
        host = _torch_view(value, writable)
    elif hasattr(type(value), "__dlpack__") and hasattr(type(value), "__dlpack_device__"):
        host = _dlpack_view(value, writable)
        if host is None:
            return None
    else:
        return None
    seen = _seen.get()
    if seen is not None:
        seen.append((host, value))
    return host


def as_host_array(value: Any) -> NDArray[Any]:
    """Any array-like as a NumPy array: a torch tensor or DLPack producer through ``host_view``,
    the rest through np.asarray (to_device's conversion). TypeError for what cannot be used."""
    host = host_view(value)
    return np.asarray(value) if host is None else host


def record_given(array: NDArray[Any]) -> None:
    """Within a call (``record_foreign``), note a NumPy array the caller gave to be written:
    ``results_like`` returns it as it is, not as a torch tensor, beside torch arguments."""
    seen = _seen.get()
    if seen is not None:
        seen.append((array, array))


def record_foreign() -> contextvars.Token[Optional[list[Any]]]:
    """Start recording the conversions of one call (pair with ``foreign_recorded``)."""
    return _seen.set([])


def foreign_recorded(token: contextvars.Token[Optional[list[Any]]]) -> list[Any]:
    """Stop recording: the (NumPy view, original) pairs converted since ``record_foreign``."""
    seen = _seen.get() or []
    _seen.reset(token)
    return seen


def to_torch(a: NDArray[Any]) -> Any:
    """A NumPy result as a torch tensor sharing its memory (bfloat16 through an int16 view).
    Only called when the caller passed torch tensors, so torch is imported."""
    torch = sys.modules["torch"]
    if not a.flags.writeable or any(st < 0 for st in a.strides):
        a = a.copy()  # torch.from_numpy takes neither
    if a.dtype == bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def results_like(result: Any, converted: list[Any]) -> Any:
    """A call's result in the kind of its inputs: an array the call wrote into (an ``out=``,
    or a written argument of a raw operator, a tensor list's items included) is returned as
    the object the caller gave (a NumPy one too, see ``record_given``); a new NumPy result
    becomes a torch tensor (sharing its memory) when any argument was a torch tensor. The
    same at every depth: a tuple of results, a written tensor list (a list) and the lists
    in a tuple keep their shape, each array replaced. DeviceArray results, and results of
    calls given only NumPy arrays and other DLPack producers, are unchanged."""
    torch = sys.modules.get("torch")
    as_torch = torch is not None and any(isinstance(original, torch.Tensor) for _, original in converted)
    given = {id(view): original for view, original in converted}  # the views are alive: ids are unique

    def like(r: Any) -> Any:
        if isinstance(r, np.ndarray):
            original = given.get(id(r))
            if original is not None:
                return original
            if as_torch:
                return to_torch(r)
        elif type(r) is tuple:
            return tuple(like(item) for item in r)
        elif type(r) is list:
            return [like(item) for item in r]
        return r

    return like(result)


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
        return DeviceArray._from_host(np.empty(shape, dtype))
    device = runtime.current_device()
    nbytes = math.prod(shape) * dtype.itemsize  # the caller is in a gated call
    return DeviceArray._wrap(tuple(int(d) for d in shape), dtype, device.allocator.alloc(nbytes), device)


def upload(array: NDArray[Any], backend: str) -> DeviceArray:
    """Copy a host array onto the backend's current device (contiguous)."""
    require_acl_dtype(array.dtype)
    if not array.flags.c_contiguous:  # (np.ascontiguousarray would also make a 0-d array 1-d)
        array = np.ascontiguousarray(array)
    if backend == "numpy":
        return DeviceArray._from_host(array.copy())
    device = runtime.current_device()
    return DeviceArray._wrap(tuple(int(d) for d in array.shape), np.dtype(array.dtype),
                             device.upload(array.ctypes.data, array.nbytes), device)


# ---- formats ------------------------------------------------------------------------------------

def tag_problem(fmt: int, shape: Sequence[int]) -> Optional[str]:
    """None when a logical shape can carry format fmt; otherwise what is wrong (a private
    format needs its codec's rank). A public format tags any rank: aclCreateTensor takes an
    NCHW tensor of 3 dims, and CANN's own unit tests pass such tensors to op_apis that accept
    them, so whether the rank matters is the operator's to say."""
    from .formats import PRIVATE, PUBLIC, Format, storage_shape
    f = Format(fmt)
    if f in PRIVATE:
        try:
            storage_shape(f, shape, np.float16)
        except ValueError as exc:
            return str(exc).split(": ", 1)[-1]
        return None
    if f not in PUBLIC:
        return f"{f.name} has no layout this package can store (formats: {', '.join(x.name for x in sorted(PUBLIC))} " \
               f"and {', '.join(x.name for x in sorted(PRIVATE))})"
    return None


def formatted(array: DeviceArray, fmt: Optional[int], c0: Optional[int]) -> DeviceArray:
    """Tag a new array (made for this) with fmt: a private format's storage shape is set;
    an explicit ND is passed as ND whatever the operator's default for the rank. The
    array's bytes must already be laid out so."""
    from .formats import PRIVATE, storage_shape
    if fmt is None:
        return array
    if fmt in PRIVATE:
        array._set_format(int(fmt), storage_shape(fmt, array.shape, array.dtype, c0))
    else:
        array._set_format(int(fmt), None)
    return array


def new_formatted_array(shape: tuple[int, ...], dtype: np.dtype[Any], backend: str, fmt: Optional[int],
                        c0: Optional[int] = None) -> DeviceArray:
    """An uninitialised array in format fmt: a private one gets a block for its storage."""
    from .formats import PRIVATE, storage_shape
    if fmt is None or fmt not in PRIVATE:
        return formatted(new_device_array(shape, dtype, backend), fmt, c0)
    stored = storage_shape(fmt, shape, dtype, c0)
    a = new_device_array(stored, dtype, backend)
    a.shape = shape
    return formatted(a, fmt, c0)


def upload_formatted(array: NDArray[Any], backend: str, fmt: Optional[int], c0: Optional[int] = None) -> DeviceArray:
    """A logical host array on the device in format fmt: a private one encoded on the host
    first (exactly), a public one tagged."""
    from .formats import PRIVATE, encode
    if fmt is None or fmt not in PRIVATE:
        return formatted(upload(array, backend), fmt, c0)
    require_acl_dtype(array.dtype)
    a = upload(encode(array, fmt, c0), backend)
    a.shape = tuple(int(d) for d in array.shape)
    return formatted(a, fmt, c0)
