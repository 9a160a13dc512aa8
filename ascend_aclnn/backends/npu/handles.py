"""aclTensor handles: how an array is described to aclCreateTensor, and the handles cached
on device blocks so that a steady loop creates none.

Storage convention (torch_npu's): every aclTensor is created with one-dimensional storage
dims, the storage's element count, and the view (dims, strides, offset) on top of it.
When storage dims equal view dims an op_api may take the caller's handle for its own
tensor and change it in place: aclnnIm2col's 4-D path reformats its ``self`` to NCHW with
no executor, and a cached handle would then carry NCHW into the next operator (the pad
operators refuse mismatched formats). With one-dimensional storage every op_api makes a
view of its own instead, so a handle is never changed by a call.

A NumPy input is uploaded as it lies in memory when that is cheap (non-negative strides,
no more than twice its own size) and described with element strides, as torch_npu does
for views; other layouts are compacted on the host first.
"""
from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import NDArray

from ...cann.constants import ACLNN_ERR_INNER_NULLPTR
from ...errors import AclnnError
from ...tensors import ACL_DTYPES, contiguous_strides
from . import runtime

BLOCK_HANDLES = 4  # aclTensor descriptions cached per device block

Int64s = Any  # a ctypes c_int64 array


@functools.lru_cache(maxsize=4096)
def int64s(values: tuple[int, ...]) -> Int64s:
    """A C int64 array for a shape or stride tuple. Cached: the same few shapes recur on
    every call, and CANN copies the values, so a shared array is never written."""
    return (ctypes.c_int64 * len(values))(*values)


@functools.lru_cache(maxsize=4096)
def contiguous_desc(shape: tuple[int, ...]) -> tuple[Int64s, int, Int64s, Int64s]:
    """(dims, ndim, strides, storage dims) as C arrays for a contiguous tensor of this shape."""
    return int64s(shape), len(shape), int64s(contiguous_strides(shape)), int64s((math.prod(shape),))


def strided_layout(a: NDArray[Any]) -> Optional[tuple[tuple[int, ...], int]]:
    """(element strides, span in elements) under which a's own bytes can be uploaded as one
    span, or None when that is impossible or costs more than twice a's size."""
    item = a.itemsize
    if a.size == 0 or any(s < 0 or s % item for s in a.strides):
        return None
    strides = tuple(s // item for s in a.strides)
    span = sum((d - 1) * s for d, s in zip(a.shape, strides)) + 1
    return (strides, span) if span * item <= 2 * a.nbytes else None


def creation_failed(cann: Any, what: str, detail: str) -> AclnnError:
    """The error for an aclCreate* that returned NULL."""
    return AclnnError(ACLNN_ERR_INNER_NULLPTR, what, f"returned NULL for {detail}",
                      recent=runtime.recent_error_message(cann))


def create_tensor(create: Callable[..., int], cann: Any, shape: tuple[int, ...], dtype: np.dtype[Any], fmt: int,
                  addr: int, strides: Optional[tuple[int, ...]] = None, span: Optional[int] = None) -> int:
    """A new aclTensor for a view of device memory at addr: contiguous, or with element
    strides over ``span`` elements of storage. One-dimensional storage (see above)."""
    if strides is None:
        dims, n, c_strides, storage = contiguous_desc(shape)
    else:
        dims, n, c_strides, storage = int64s(shape), len(shape), int64s(strides), int64s((span,))
    h: int = create(dims, n, ACL_DTYPES[dtype], c_strides, 0, fmt, storage, 1, addr)
    if not h:
        raise creation_failed(cann, "aclCreateTensor", f"shape {shape}, strides {strides or contiguous_strides(shape)}")
    return h


def block_tensor(create: Callable[..., int], destroy: Callable[[int], int], cann: Any, buf: runtime.DeviceBuffer,
                 shape: tuple[int, ...], dtype: np.dtype[Any], fmt: int) -> int:
    """The cached aclTensor describing a contiguous (shape, dtype) at the start of a block,
    created on first use. Call with the stream's lock held: it serialises every launch on
    the block's device, so a handle evicted here is in no launch."""
    key = (shape, dtype, fmt)
    acl = buf.acl
    if acl is not None:
        cached: Optional[int] = acl.get(key)
        if cached is not None:
            return cached
    h = create_tensor(create, cann, shape, dtype, fmt, buf.ptr)
    buf.allocator.with_handles.add(buf)
    if acl is None:
        buf.acl = {key: h}
    else:
        if len(acl) >= BLOCK_HANDLES:
            destroy(acl.pop(next(iter(acl))))
        acl[key] = h
    return h
