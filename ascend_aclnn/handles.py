"""Layer 3b: aclTensor / aclIntArray handles for one launch, destroyed on every path.

A NumPy input is uploaded as it lies in memory when that is cheap (non-negative strides,
no more than twice its own size), and described to CANN with element strides, as
torch_npu does for views; other layouts are compacted on the host first.
"""
from __future__ import annotations

import ctypes
import functools
from typing import Any, NamedTuple

import numpy as np

from . import runtime
from .cann.loader import Cann
from .errors import AclnnError
from .tensors import ACL_DTYPES, DeviceArray, contiguous_strides


class TensorView(NamedTuple):
    """Everything aclCreateTensor needs, plus the object that keeps the memory alive."""
    shape: tuple[int, ...]
    dtype: np.dtype
    strides: tuple[int, ...]
    offset: int
    storage_dims: tuple[int, ...]
    address: int
    owner: Any


def _strided_layout(a: np.ndarray) -> tuple[tuple[int, ...], int] | None:
    """(element strides, span in elements) under which a's own bytes can be uploaded as one
    span, or None when that is impossible or costs more than twice a's size."""
    item = a.itemsize
    if a.size == 0 or any(s < 0 or s % item for s in a.strides):
        return None
    strides = tuple(s // item for s in a.strides)
    span = sum((d - 1) * s for d, s in zip(a.shape, strides)) + 1
    return (strides, span) if span * item <= 2 * a.nbytes else None


def device_view(value: DeviceArray | np.ndarray, device: runtime.Device) -> TensorView:
    if isinstance(value, DeviceArray):
        return TensorView(value.shape, value.dtype, contiguous_strides(value.shape), 0, value.shape,
                          value._buffer.ptr, value)
    a = value
    if not a.flags.c_contiguous:
        layout = _strided_layout(a)
        if layout is not None:
            strides, span = layout
            buf = device.upload(a.ctypes.data, span * a.itemsize)
            return TensorView(a.shape, a.dtype, strides, 0, (span,), buf.ptr, buf)
        a = np.ascontiguousarray(a)
    buf = device.upload(a.ctypes.data, a.nbytes)
    return TensorView(a.shape, a.dtype, contiguous_strides(a.shape), 0, a.shape, buf.ptr, buf)


@functools.lru_cache(maxsize=4096)
def _int64s(values: tuple[int, ...]):
    """A C int64 array for a shape or stride tuple. Cached: the same few shapes recur on
    every call, and CANN copies the values, so a shared array is never written."""
    return (ctypes.c_int64 * len(values))(*values)


class HandleScope:
    """Creates handles and destroys them all when the scope closes, errors included."""

    def __init__(self, cann: Cann):
        self.cann = cann
        self._owned: list[tuple[str, int]] = []

    def tensor(self, view: TensorView, acl_format: int) -> int:
        create = self.cann.function("aclCreateTensor")
        handle = create(_int64s(view.shape), len(view.shape), ACL_DTYPES[view.dtype], _int64s(view.strides),
                        view.offset, acl_format, _int64s(view.storage_dims), len(view.storage_dims),
                        view.address)
        if not handle:
            raise AclnnError(561103, "aclCreateTensor",
                             f"returned NULL for shape {view.shape}, strides {view.strides}",
                             recent=runtime.recent_error_message(self.cann))
        self._owned.append(("aclDestroyTensor", handle))
        return handle

    def int_array(self, values: tuple[int, ...]) -> int:
        handle = self.cann.function("aclCreateIntArray")(_int64s(tuple(values)), len(values))
        if not handle:
            raise AclnnError(561103, "aclCreateIntArray", f"returned NULL for {tuple(values)}",
                             recent=runtime.recent_error_message(self.cann))
        self._owned.append(("aclDestroyIntArray", handle))
        return handle

    def __enter__(self) -> "HandleScope":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        failure = None
        while self._owned:
            destroy, handle = self._owned.pop()
            status = self.cann.function(destroy)(handle)
            if status and failure is None:
                failure = (status, destroy, runtime.recent_error_message(self.cann))
        if failure is not None and exc is None:
            # Built in the raise, not kept in a local: a local would make a cycle (frame ->
            # exception -> traceback -> frame) pinning the launch's arrays until a gc.
            raise AclnnError(failure[0], failure[1], recent=failure[2])
