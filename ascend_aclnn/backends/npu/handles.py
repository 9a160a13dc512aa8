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

Formats (torch_npu's ConvertType): an array tagged with a public format is passed with that
format and the same one-dimensional storage; one stored in a private format (FRACTAL_NZ,
NC1HWC0, ...) with its logical view (contiguous strides), the private format, and its
stored shape as the storage dims. Handles are cached per (shape, dtype, format, storage).

A tensor an operator writes in place (a ``...Ref`` parameter) never gets a cached handle:
an op_api may change the caller's aclTensor itself, as aclnnTransMatmulWeight sets its
storage format and shape to FRACTAL_NZ in phase 1. It gets a handle of its own; after phase
1 its storage is read back, and a storage larger than the array's block is refused before
phase 2 (CANN would write past the block), as is any reformat of a NumPy array (its
write-back holds the logical layout only); after phase 2 the DeviceArray takes the new
format and storage shape. aclnnTransMatmulWeight's weight is first moved to a block large
enough for its NZ storage (aclnnCalculateMatmulWeightSizeV2's count), when its own is not.
"""
from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Callable, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ...cann.constants import ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_PARAM_INVALID
from ...errors import AclnnError
from ... import formats
from ...tensors import ACL_DTYPES, DeviceArray, contiguous_strides
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
                  addr: int, strides: Optional[tuple[int, ...]] = None, span: Optional[int] = None,
                  stored: Optional[tuple[int, ...]] = None) -> int:
    """A new aclTensor for a view of device memory at addr: contiguous, or with element
    strides over ``span`` elements of storage. One-dimensional storage (see above), or
    ``stored``, a private format's storage dims."""
    if stored is not None:
        dims, n, c_strides, _ = contiguous_desc(shape)
        h0: int = create(dims, n, ACL_DTYPES[dtype], c_strides, 0, fmt, int64s(stored), len(stored), addr)
        if not h0:
            raise creation_failed(cann, "aclCreateTensor", f"shape {shape}, format {fmt}, storage dims {stored}")
        return h0
    if strides is None:
        dims, n, c_strides, storage = contiguous_desc(shape)
    else:
        dims, n, c_strides, storage = int64s(shape), len(shape), int64s(strides), int64s((span,))
    h: int = create(dims, n, ACL_DTYPES[dtype], c_strides, 0, fmt, storage, 1, addr)
    if not h:
        raise creation_failed(cann, "aclCreateTensor", f"shape {shape}, strides {strides or contiguous_strides(shape)}")
    return h


def block_tensor(create: Callable[..., int], destroy: Callable[[int], int], cann: Any, buf: runtime.DeviceBuffer,
                 shape: tuple[int, ...], dtype: np.dtype[Any], fmt: int, tagged: Optional[int] = None,
                 stored: Optional[tuple[int, ...]] = None) -> int:
    """The cached aclTensor describing a contiguous (shape, dtype) at the start of a block,
    created on first use. Call with the stream's lock held: it serialises every launch on
    the block's device, so a handle evicted here is in no launch. ``tagged``: the array's
    own format (a DeviceArray's ``_format``), which replaces the operator's ``fmt``;
    ``stored``: its private storage dims."""
    if tagged is None:
        key: tuple[Any, ...] = (shape, dtype, fmt)
    else:
        fmt = tagged
        key = (shape, dtype, fmt) if stored is None else (shape, dtype, fmt, stored)
    acl = buf.acl
    if acl is not None:
        cached: Optional[int] = acl.get(key)
        if cached is not None:
            return cached
    h = create_tensor(create, cann, shape, dtype, fmt, buf.ptr, stored=stored)
    buf.allocator.with_handles.add(buf)
    if acl is None:
        buf.acl = {key: h}
    else:
        if len(acl) >= BLOCK_HANDLES:
            destroy(acl.pop(next(iter(acl))))
        acl[key] = h
    return h


# ---- tensors written in place (see the module docstring) -----------------------------------------

# Operators that may store their ...Ref tensor in a larger private layout, with the plain
# function of the installed CANN that counts its elements: (argtypes of that function).
_SIZE_HELPER = "aclnnCalculateMatmulWeightSizeV2"
_REFORMATS_IN_PLACE = {"aclnnTransMatmulWeight"}


class Ref:
    """One tensor a launch writes in place, with the handle made for it alone."""
    __slots__ = ("array", "name", "handle", "passed", "host", "update")
    array: DeviceArray
    name: str
    handle: int
    passed: tuple[int, ...]
    host: bool
    update: Optional[tuple[Optional[int], Optional[tuple[int, ...]]]]

    def __init__(self, array: DeviceArray, name: str, handle: int, passed: tuple[int, ...], host: bool):
        self.array, self.name, self.handle, self.passed, self.host = array, name, handle, passed, host
        self.update = None


def ref_tensor(f: Any, cann: Any, t: DeviceArray, fmt: int, name: str, host: bool, temps: list[Any],
               refs: list[Ref]) -> int:
    """A handle of its own for a tensor written in place (destroyed after phase 2 with the
    launch's temporaries), recorded in ``refs`` for ``check_refs``."""
    tagged = t._format
    stored = t._storage
    h = create_tensor(f.create, cann, t.shape, t.dtype, fmt if tagged is None else tagged, t._buffer.ptr,
                      stored=stored)
    temps.append((f.destroy, h, "aclDestroyTensor"))
    refs.append(Ref(t, name, h, stored if stored is not None else (t.size,), host))
    return h


def _read_storage(cann: Any, h: int) -> tuple[int, tuple[int, ...]]:
    """(view format, storage dims) of a live aclTensor, as its op_api left them."""
    fmt = ctypes.c_int(0)
    runtime.check(cann, cann.function("aclGetFormat")(h, ctypes.byref(fmt)), "aclGetFormat")
    dims, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64(0)
    runtime.check(cann, cann.function("aclGetStorageShape")(h, ctypes.byref(dims), ctypes.byref(n)),
                  "aclGetStorageShape")
    try:
        stored = tuple(int(dims[i]) for i in range(n.value))
    finally:
        if dims:
            ctypes.CDLL(None).free(ctypes.cast(dims, ctypes.c_void_p))  # new[] of int64_t: plain memory
    return int(fmt.value), stored


def _describe(t: DeviceArray, view_fmt: int, stored: tuple[int, ...]) -> Optional[tuple[int, tuple[int, ...]]]:
    """The private format whose storage of t's logical shape is ``stored`` (the view format
    when it is private, else the one whose shape matches, with C0 as stored), or None."""
    candidates = [view_fmt] if view_fmt in formats.PRIVATE else sorted(formats.PRIVATE)
    for f in candidates:
        try:
            if formats.storage_shape(f, t.shape, t.dtype, stored[-1] if stored else None) == stored:
                return int(f), stored
        except ValueError:
            continue
    return None


def check_refs(cann: Any, refs: Sequence[Ref], destroy_executor: Callable[[Any], Any], executor: Any,
               api: str) -> None:
    """After phase 1, before phase 2: each in-place tensor's storage as CANN now describes
    it. One that grew past its block, that cannot be described, or that a NumPy array would
    have to hold, is refused (the executor is destroyed: phase 2 never runs)."""
    for r in refs:
        try:
            view_fmt, stored = _read_storage(cann, r.handle)
        except BaseException:
            destroy_executor(executor)
            raise
        if stored == r.passed:
            continue
        t = r.array
        plain = stored in ((t.size,), t.shape) and view_fmt not in formats.PRIVATE
        desc = None if plain else _describe(t, view_fmt, stored)
        need = math.prod(stored) * t.dtype.itemsize
        problem = None
        if not plain and desc is None:
            problem = (f"{api} left it with view format {view_fmt} and storage dims {list(stored)}, which this "
                       "binding cannot describe as a DeviceArray")
        elif r.host and not plain:
            problem = (f"{api} stores it as {formats.Format(desc[0]).name if desc else view_fmt} {list(stored)}, "
                       "which a NumPy array cannot hold: pass a DeviceArray (ascend_aclnn.to_device)")
        elif need > t._buffer.nbytes:
            problem = (f"{api} would write {need} bytes (storage dims {list(stored)}) into a block of "
                       f"{t._buffer.nbytes}: pass an array on a block large enough")
        if problem is not None:
            destroy_executor(executor)
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, problem, argument=r.name)
        r.update = (None, None) if plain else desc


def apply_refs(refs: Sequence[Ref]) -> None:
    """After a successful phase 2: the DeviceArrays take their new format and storage."""
    for r in refs:
        if r.update is not None:
            r.array._set_format(*r.update)


def make_room(cann: Any, api: str, tensors: Sequence[Any], written: Sequence[bool], device: runtime.Device) -> None:
    """Before an operator that stores its in-place tensor in a larger private layout: move
    each such DeviceArray onto a block that holds that layout (its contents copied there on
    the stream) when its own is too small, or shared with other views, which keep the old
    block and its ND contents. Sized by the installed CANN's own count; without that count,
    nothing is moved (check_refs still refuses an overrun)."""
    if api not in _REFORMATS_IN_PLACE:
        return
    for t, w in zip(tensors, written):
        if not w or type(t) is not DeviceArray or t._storage is not None or t.size == 0:
            continue
        count = _weight_count(cann, t)
        if count is None:
            continue
        need = count * t.dtype.itemsize
        if need <= t._buffer.nbytes and not t._shared_with_live_views():
            continue
        stream = device.stream
        buf = device.allocator.alloc(max(need, t.nbytes))
        with stream.lock:
            t._require_valid()
            src = t._buffer
            device.copy_async(buf, src, t.nbytes)
            stream.launched((src, buf), [buf], "aclrtMemcpyAsync")
        t._move_to(buf)


def _weight_count(cann: Any, t: DeviceArray) -> Optional[int]:
    """aclnnCalculateMatmulWeightSizeV2(shape, dtype): elements of t once reformatted, or
    None when the installed CANN has no such function or refuses the shape (phase 1 then
    says why)."""
    fn = cann.op_function(_SIZE_HELPER, ctypes.c_int32,
                          (ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)))
    if fn is None:
        return None
    shape = int64s(t.shape)
    arr = cann.function("aclCreateIntArray")(shape, len(t.shape))
    if not arr:
        return None
    try:
        out = ctypes.c_uint64(0)
        status = fn(arr, int(ACL_DTYPES[t.dtype]), ctypes.byref(out))
    finally:
        cann.function("aclDestroyIntArray")(arr)
    return int(out.value) if status == 0 else None
