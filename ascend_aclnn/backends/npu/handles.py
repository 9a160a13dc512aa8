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
an op_api may change the caller's aclTensor itself (a matmul weight's cast sets its storage
format and shape to FRACTAL_NZ in phase 1). It gets a handle of its own; after phase 1 its
storage is read back, and a storage larger than the array's block is refused before phase 2
(CANN would write past the block), as is any reformat of a NumPy array (its write-back holds
the logical layout only); after phase 2 the DeviceArray takes the new format and storage
shape. Where cann/raw_operators.py names the function counting an operator's private layout
(``reformat_count``), the tensor is first moved to a block large enough for it.
"""
from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ...cann import raw_operators
from ...cann.constants import ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_PARAM_INVALID
from ...errors import AclnnError
from ... import formats
from ...ops.spec import format_for_rank
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


Temp = tuple[Callable[[int], int], int, str]  # a launch's own handle: (its destroy function, handle, that name)


def int_array(stream: runtime.Stream, values: tuple[Any, ...]) -> int:
    """The stream's cached aclIntArray for these int64 values (Stream.int_arrays, LRU). Call
    with the stream's lock held; the handle stays valid until it is released (eviction
    happens only under it)."""
    cache = stream.int_arrays
    cached = cache.get(values)
    if cached is not None:
        cache.move_to_end(values)
        return cached
    cann = stream.device.cann
    h: int = cann.function("aclCreateIntArray")((ctypes.c_int64 * len(values))(*values), len(values))
    if not h:
        raise creation_failed(cann, "aclCreateIntArray", str(values))
    cache[values] = h
    while len(cache) > runtime.INT_ARRAY_CACHE_SIZE:
        old = cache.popitem(last=False)[1]
        if old != h:
            cann.function("aclDestroyIntArray")(old)
    return h


def int_arrays(c_args: list[Any], params: Sequence[int], stream: runtime.Stream) -> None:
    """Replace the int tuples at ``params`` of c_args (None stays NULL) with the stream's
    cached aclIntArray handles (``int_array``, its lookup inlined: most calls repeat their
    values)."""
    cache = stream.int_arrays
    for i in params:
        v = c_args[i]
        if v is not None:
            h = cache.get(v)
            if h is None:
                h = int_array(stream, v)
            else:
                cache.move_to_end(v)
            c_args[i] = h


def bind_resident(f: Any, b: Any, tensors: Sequence[DeviceArray], outputs: Sequence[DeviceArray],
                  stream: runtime.Stream) -> list[Any]:
    """The C arguments of a lean launch (launch.launch_resident: every tensor and output a
    DeviceArray, nothing written in place, no host value): all cached handles, each created
    on first use. Call with the stream's lock held; a block freed by another thread since
    the caller's checks raises here, naming the argument."""
    c_args = list(b.template)
    create, destroy, cann = f.create, f.destroy, f.cann
    for i, fmt, t, name in zip(b.tensor_params, b.formats, tensors, b.tensor_names):
        buf = t._buffer
        if not buf.ptr:
            t._require_live(name)
        acl = buf.acl
        h = acl.get((t.shape, t.dtype, fmt)) if acl is not None and t._format is None else None
        c_args[i] = h if h is not None else block_tensor(create, destroy, cann, buf, t.shape, t.dtype, fmt,
                                                         t._format, t._storage)
    if b.int_params:
        int_arrays(c_args, b.int_params, stream)
    for arr, fmt, name in zip(outputs, b.out_formats, b.out_labels):
        buf = arr._buffer
        if not buf.ptr:
            arr._require_live(name)
        acl = buf.acl
        h = acl.get((arr.shape, arr.dtype, fmt)) if acl is not None and arr._format is None else None
        c_args.append(h if h is not None else block_tensor(create, destroy, cann, buf, arr.shape, arr.dtype, fmt,
                                                           arr._format, arr._storage))
    return c_args


def bind(f: Any, b: Any, tensors: Sequence[Any], staged: Sequence[Any], outputs: Sequence[DeviceArray],
         written: Sequence[DeviceArray], stream: runtime.Stream, cut: Sequence[str]
         ) -> tuple[list[Any], list[Temp], list["Ref"], dict[int, int]]:
    """Every handle of one launch, in one pass: (the C arguments; the launch's own handles,
    to ``release`` after phase 2; the tensors written in place, for ``check_refs``; per
    tensor index, the handle of a data-dependent output, read back after the run).
    ``staged``: per tensor, how a NumPy one reached the device (launch's staging);
    ``written``: the device arrays the launch writes (a written NumPy array's copy among
    them); ``cut``: the C names of the data-dependent outputs. Call with the stream's lock
    held. On failure, what was made here is destroyed before the error propagates."""
    spec = b.spec
    c_args = list(b.template)
    temps: list[Temp] = []
    refs: list[Ref] = []
    cut_handles: dict[int, int] = {}
    create, destroy, cann = f.create, f.destroy, f.cann
    try:
        for k, (i, fmt, t) in enumerate(zip(b.tensor_params, b.formats, tensors)):
            if t is None:  # a NULL: a raw operator's optional tensor, or an unchecked test
                continue
            if cut and not b.lists[k] and spec.params[i].c_name in cut:
                # never a cached handle: the operator changes this one's view shape
                ptr = t._buffer.ptr if type(t) is DeviceArray else staged[k][0].ptr
                own = create_tensor(create, cann, tuple(t.shape), t.dtype, fmt, ptr)
                temps.append((destroy, own, "aclDestroyTensor"))
                c_args[i] = cut_handles[k] = own
            elif type(t) is DeviceArray:
                buf = t._buffer
                if b.written[k] and b.reads[k]:
                    c_args[i] = ref_tensor(f, cann, t, fmt, b.tensor_names[k], False, temps, refs)
                    continue
                acl = buf.acl
                h = acl.get((t.shape, t.dtype, fmt)) if acl is not None and t._format is None else None
                c_args[i] = h if h is not None else block_tensor(create, destroy, cann, buf, t.shape, t.dtype, fmt,
                                                                 t._format, t._storage)
            elif b.lists[k]:
                c_args[i] = tensor_list(f, t, staged[k], fmt, temps, b.tensor_names[k])
            else:
                buf, strides, span = staged[k]
                a = t if type(t) is np.ndarray else np.asarray(t)
                if b.written[k] and b.reads[k]:  # its device copy: the written list's array over buf
                    copy = next(w for w in written if w._buffer is buf)
                    c_args[i] = ref_tensor(f, cann, copy, fmt, b.tensor_names[k], True, temps, refs)
                elif strides is None:
                    acl = buf.acl  # an upload's block may come from the allocator's cache with its handles
                    h = acl.get((a.shape, a.dtype, fmt)) if acl is not None else None
                    c_args[i] = h if h is not None else block_tensor(create, destroy, cann, buf, a.shape, a.dtype, fmt)
                else:
                    h = create_tensor(create, cann, a.shape, a.dtype, fmt, buf.ptr, strides, span)
                    temps.append((destroy, h, "aclDestroyTensor"))
                    c_args[i] = h
        if b.int_params:
            int_arrays(c_args, b.int_params, stream)
        for i, p in b.host_params:
            h = p.create(cann, c_args[i])
            if not h:
                raise creation_failed(cann, "aclCreate" + p.c_kind[3:], f"{p.name} = {c_args[i]!r}")
            entry = f.host_destroyers.get(id(p))
            if entry is None or entry[0] is not p:
                entry = f.host_destroyer(p)
            temps.append((entry[1], h, entry[2]))
            c_args[i] = h
        for arr, fmt in zip(outputs, b.out_formats):
            acl = arr._buffer.acl
            h = acl.get((arr.shape, arr.dtype, fmt)) if acl is not None else None
            c_args.append(h if h is not None else block_tensor(create, destroy, cann, arr._buffer, arr.shape,
                                                               arr.dtype, fmt))
    except BaseException:
        release(temps)
        raise
    return c_args, temps, refs, cut_handles


def release(temps: Sequence[Temp]) -> Optional[tuple[int, str]]:
    """Destroy a launch's own handles, every one whatever the others' status: the first
    failure as (status, function), or None."""
    failure = None
    for destroy, h, name in temps:
        st = destroy(h)
        if st and failure is None:
            failure = (st, name)
    return failure


def tensor_list(f: Any, items: Sequence[Any], staged: Sequence[Any], fmt: int, temps: list[Temp],
                name: str = "") -> int:
    """An aclTensorList of fresh element handles (the list owns and destroys them), queued
    in ``temps`` for destruction after phase 2. Call with the stream's lock held (its
    DeviceArrays are checked for liveness here, as launch.check_live does for the top-level
    ones)."""
    cann = f.cann
    elements: list[int] = []
    by_rank = {} if fmt >= 0 else {r: format_for_rank(r) for r in {len(t.shape) for t in items}}
    try:
        for i, (t, entry) in enumerate(zip(items, staged)):
            rank_fmt = fmt if fmt >= 0 else by_rank[len(t.shape)]
            if type(t) is DeviceArray:
                if not t._buffer.ptr:
                    t._require_live(f"{name}[{i}]")
                elements.append(create_tensor(f.create, cann, t.shape, t.dtype, rank_fmt, t._buffer.ptr))
            else:
                buf, strides, span = entry
                a = np.asarray(t)
                elements.append(create_tensor(f.create, cann, a.shape, a.dtype, rank_fmt, buf.ptr, strides, span))
        create_list = f.c_functions.get("aclCreateTensorList") or f.function("aclCreateTensorList")
        h = create_list((ctypes.c_void_p * len(elements))(*elements), len(elements))
        if not h:
            raise creation_failed(cann, "aclCreateTensorList", f"{len(elements)} tensors")
    except BaseException:
        for e in elements:
            f.destroy(e)
        raise
    temps.append((f.c_functions.get("aclDestroyTensorList") or f.function("aclDestroyTensorList"), h,
                  "aclDestroyTensorList"))
    return int(h)


# ---- tensors written in place (see the module docstring) -----------------------------------------


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


_libc_free = ctypes.CDLL(None).free
_libc_free.argtypes, _libc_free.restype = (ctypes.c_void_p,), None


def read_dims(cann: Any, getter: str, h: int) -> tuple[int, ...]:
    """The dims array an nnopbase getter (aclGetViewShape, aclGetStorageShape, ...) returns
    for a live aclTensor, as a tuple; the array, the caller's to free, freed."""
    dims, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64(0)
    runtime.check(cann, cann.function(getter)(h, ctypes.byref(dims), ctypes.byref(n)), getter)
    try:
        return tuple(int(dims[i]) for i in range(n.value))
    finally:
        if dims:
            _libc_free(ctypes.cast(dims, ctypes.c_void_p))  # new[] of int64_t: plain memory


def _read_storage(cann: Any, h: int) -> tuple[int, tuple[int, ...]]:
    """(view format, storage dims) of a live aclTensor, as its op_api left them."""
    fmt = ctypes.c_int(0)
    runtime.check(cann, cann.function("aclGetFormat")(h, ctypes.byref(fmt)), "aclGetFormat")
    return int(fmt.value), read_dims(cann, "aclGetStorageShape", h)


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


def reformats_in_place(api: str) -> bool:
    """Whether the operator may store a tensor it writes in a larger private layout
    (``make_room`` is then called before each of its launches): its raw_operators row says so."""
    return bool(raw_operators.facts(api).reformat_count)


def make_room(cann: Any, tensors: Sequence[Any], written: Sequence[bool], device: runtime.Device,
              api: str) -> None:
    """Before an operator that stores its in-place tensor in a larger private layout: move
    each such DeviceArray onto a block that holds that layout (its contents copied there on
    the stream) when its own is too small, or shared with other views, which keep the old
    block and its ND contents. Sized by the installed CANN's own count; without that count,
    nothing is moved (check_refs still refuses an overrun). Only for an operator that
    ``reformats_in_place``."""
    counter = raw_operators.facts(api).reformat_count
    for t, w in zip(tensors, written):
        if not w or type(t) is not DeviceArray or t._storage is not None or t.size == 0:
            continue
        count = _reformatted_count(cann, t, counter)
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


def _reformatted_count(cann: Any, t: DeviceArray, counter: str) -> Optional[int]:
    """counter(shape, dtype, &count), the operator's reformat_count: elements of t once
    reformatted, or None when the installed CANN has no such function or refuses the shape
    (phase 1 then says why)."""
    fn = cann.op_function(counter, ctypes.c_int32,
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
