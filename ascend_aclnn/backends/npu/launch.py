"""The npu backend's one two-phase caller, for every operator.

GetWorkspaceSize -> workspace from the stream's growing cache -> aclnnXxx on the stream.
Executor rule (CANN's two-phase API documentation): phase 2 frees a non-repeatable
executor, so once phase 2 has been called we never touch it again; if phase 2 is never
reached (the workspace could not be allocated), the executor is still ours and is
destroyed.

A launch is three steps, shared with plans (executor.py, plans.py):
- ``place_outputs``: the device arrays the kernel writes (allocated, the caller's
  DeviceArray out=, or a temporary when that out= is also an input: the kernel never reads
  what it writes, and the temporary is copied over on the stream afterwards, which gives
  NumPy's in-place result without waiting);
- phase 1 and ``phase2`` under the stream's lock (workspace, keep-alive, the alias copies);
- ``deliver``: results as DeviceArrays, or downloaded into NumPy arrays.

What is reused between calls (see ops/checked_calls.py for the checked layouts):
- the aclTensor handle of a device block (a DeviceArray's, or a contiguous NumPy input's
  upload), cached on the block (handles.block_tensor);
- aclIntArray handles for repeated values, cached per stream (Stream.int_array);
- the operator's two C functions, bound once per loaded CANN (Functions).
A strided NumPy input (uploaded with its strides) gets an aclTensor of its own, destroyed
right after phase 2.

The whole launch, phase 1 included, holds the stream's lock, so no cached handle can be
destroyed (evicted, or dropped by empty_cache) while an executor may still read it, and
a DeviceArray's ``free()`` (which takes the same lock) cannot release a block between the
launch's liveness check and its phase 2.
"""
from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ...cann import data_dependent
from ...cann.loader import Cann, get_cann
from ...ops.checked_calls import CheckedCall
from ...ops import LAUNCH_HOOKS
from ...ops.spec import Args, OpSpec, format_for_rank
from ...tensors import DeviceArray, check_same_place
from . import handles, runtime

# ASCEND_LAUNCH_BLOCKING=1, CANN's and torch_npu's switch for synchronous launches: every
# launch waits for its kernel, so a kernel's failure raises at the call that launched it.
# Read once, as torch_npu reads it at start-up.
LAUNCH_BLOCKING: bool = os.environ.get("ASCEND_LAUNCH_BLOCKING", "") == "1"

_c_uint64, _c_void_p, _byref = ctypes.c_uint64, ctypes.c_void_p, ctypes.byref


class Functions:
    """The nnopbase functions of the hot path, and each operator's two phases, bound once
    per loaded CANN."""

    def __init__(self, cann: Cann):
        self.cann: Cann = cann
        self.create: Callable[..., Any] = cann.function("aclCreateTensor")
        self.destroy: Callable[..., Any] = cann.function("aclDestroyTensor")
        self.destroy_executor: Callable[..., Any] = cann.function("aclDestroyAclOpExecutor")
        self._operators: dict[int, tuple[OpSpec, Callable[..., int], Callable[..., int]]] = {}

    def operator(self, spec: OpSpec) -> tuple[Callable[..., int], Callable[..., int]]:
        entry = self._operators.get(id(spec))
        if entry is None or entry[0] is not spec:
            entry = self._operators[id(spec)] = (spec, *self.cann.operator(spec.aclnn, spec.c_argtypes))
        return entry[1], entry[2]


_fns: Optional[Functions] = None


def functions() -> Functions:
    """The hot path's functions for the CANN loaded now (rebound if it was reloaded)."""
    global _fns
    f = _fns
    cann = get_cann()
    if f is None or f.cann is not cann:
        f = _fns = Functions(cann)
    return f


def used_operators() -> set[str]:
    """The aclnn operators launched (or planned) in this process so far."""
    f = _fns
    return set() if f is None else {entry[0].aclnn for entry in list(f._operators.values())}


def rebind_functions() -> None:
    """Bind the C functions again on next use (tests that wrap a C function)."""
    global _fns
    _fns = None


def _upload(device: runtime.Device, a: NDArray[Any]) -> tuple[runtime.DeviceBuffer, Optional[tuple[int, ...]], int]:
    """A NumPy input on the device: (buffer, element strides or None, span in elements),
    uploaded as it lies in memory when that is cheap (torch_npu does the same with views)."""
    if not a.flags.c_contiguous:
        layout = handles.strided_layout(a)
        if layout is not None:
            strides, span = layout
            return device.upload(a.ctypes.data, span * a.itemsize), strides, span
        a = np.ascontiguousarray(a)
    return device.upload(a.ctypes.data, a.nbytes), None, a.size


def place_outputs(b: CheckedCall, outs: Sequence[Any], tensors: Sequence[Any], device: runtime.Device,
                  scratch: Optional[Callable[[int], runtime.DeviceBuffer]] = None
                  ) -> tuple[list[DeviceArray], list[tuple[DeviceArray, DeviceArray]]]:
    """(the arrays the kernel writes, one per output; the (out=, temporary) pairs whose
    temporary is copied over the out= afterwards). ``scratch(j)``: where output j goes when
    it is downloaded or not returned (plans pass their own reused buffers); default: a new
    block. Nothing is zero-filled here: ``fill`` does it under the stream's lock."""
    alloc = device.allocator.alloc
    if all(o is None for o in outs) and scratch is None:  # the common case: every output allocated here
        return [DeviceArray._wrap(shape, dtype, alloc(nbytes), device)
                for (shape, dtype), nbytes in zip(b.outputs, b.out_nbytes)], []
    outputs, copies = [], []
    input_buffers = [t._buffer for t in tensors if type(t) is DeviceArray]
    resident = any(type(t) is DeviceArray for t in tensors) or any(type(o) is DeviceArray for o in outs)
    for j, (o, (shape, dtype), nbytes, req) in enumerate(zip(outs, b.outputs, b.out_nbytes, b.required)):
        given = type(o) is DeviceArray
        aliased = given and any(o._buffer is buf for buf in input_buffers)
        if given and not aliased:
            arr = o
        elif scratch is None or (req and (given or (resident and o is None))):  # a result of its own
            arr = DeviceArray._wrap(shape, dtype, alloc(nbytes), device)
        else:  # downloaded (a NumPy result or out=) or not returned: the caller's scratch
            arr = DeviceArray._wrap(shape, dtype, scratch(j), device)
        if aliased:
            copies.append((o, arr))
        outputs.append(arr)
    return outputs, copies


def check_live(arrays: Sequence[Any], names: Sequence[str]) -> None:
    """With the stream's lock held: every DeviceArray still holds its block (free() takes
    the same lock, so none can be released from here to phase 2)."""
    for a, name in zip(arrays, names):
        if type(a) is DeviceArray and not a._buffer.ptr:
            a._require_live(name)


def fill(b: CheckedCall, outs: Sequence[Any], outputs: Sequence[DeviceArray], device: runtime.Device) -> None:
    """Zero-fill what the NPU leaves unwritten (Output.zero_fill), with the stream's lock
    held. A fresh block needs no wait; the caller's own out= waits for queued work that
    may still write it."""
    for o, arr, need in zip(outs, outputs, b.zero_fill):
        if need:
            device.zero(arr._buffer, arr.nbytes, wait=arr is o)


def phase2(device: runtime.Device, stream: runtime.Stream, fn: Callable[..., int], api: str, executor: Any,
           workspace: Optional[int], ws_size: int, in_use: list[Any], outputs: Sequence[DeviceArray],
           copies: Sequence[tuple[DeviceArray, DeviceArray]]) -> None:
    """Phase 2 on a workspace from ``stream.workspace``, keep-alive and the alias copies,
    with the stream's lock held. A non-repeatable ``executor`` is consumed by phase 2
    whatever its status."""
    status = fn(workspace, ws_size, executor, stream.handle)
    stream.launched(in_use, [arr._buffer for arr in outputs] if status == 0 else (), api)
    if status:
        runtime.check(device.cann, status, api)
    for target, temp in copies:
        device.copy_async(target._buffer, temp._buffer, temp.nbytes)
        stream.launched((target,), [target._buffer], "aclrtMemcpyAsync")
    if LAUNCH_BLOCKING:
        stream.synchronize()


def deliver(b: CheckedCall, outs: Sequence[Any], outputs: Sequence[DeviceArray], resident: bool) -> Any:
    """The call's return value: None for an output not asked for, the caller's out= (a
    DeviceArray is written in place; a NumPy one is downloaded into), else the result as a
    DeviceArray (``resident``) or a downloaded NumPy array."""
    results: list[Any] = []
    for o, arr, req in zip(outs, outputs, b.required):
        if not req:
            results.append(None)
        elif type(o) is DeviceArray:
            results.append(o)
        elif o is not None:  # a NumPy out=
            if o.flags.c_contiguous:
                arr._device.download(arr._buffer, 0, o.ctypes.data, o.nbytes)
            else:
                np.copyto(o, arr._download())
            results.append(o)
        elif resident:
            results.append(arr)
        else:
            results.append(arr._download())
    return results[0] if len(results) == 1 else tuple(results)


def run(spec: OpSpec, a: Args) -> Any:
    """Run converted (or, in tests, raw C-level) arguments: one launch, nothing cached
    about the arguments themselves."""
    b = CheckedCall(spec, a)
    tensors = [None if a[spec.params[i].name] is None else a[spec.params[i].name].value
               for i in b.tensor_params]
    outs = [o.value if o.given else None for o in a.outputs]
    return launch(b, tensors, outs, runtime.current_device())


Staged = tuple[Any, ...]  # how one NumPy tensor reached the device: (buffer, element strides or None, span)


def _stage_host(device: runtime.Device, value: Any, writes: bool,
                writebacks: list[tuple[Any, DeviceArray, int]], written: list[Any]) -> Staged:
    """A host array's device copy for one launch: uploaded, and for a written one also
    recorded to be downloaded back into ``value`` afterwards."""
    if writes:
        arr, entry, addr = _stage_written(device, value)
        writebacks.append((value, arr, addr))
        written.append(arr)
        return entry
    return _upload(device, value if type(value) is np.ndarray else np.asarray(value))


def _stage_written(device: runtime.Device, a: NDArray[Any]) -> tuple[DeviceArray, Staged, int]:
    """A NumPy array the operator writes: a contiguous device copy, written back after the
    call (returned with the host address to write back to, 0 when ``a`` is strided). It is
    uploaded even when the operator only writes it: what the operator leaves unwritten (an
    empty input, a padding tail, an output it skips) then keeps the caller's values, as a
    DeviceArray's memory does, instead of the device's uninitialised bytes."""
    if a.flags.c_contiguous:
        addr = a.ctypes.data
        buf = device.upload(addr, a.nbytes)
    else:
        contiguous = np.ascontiguousarray(a)  # kept alive until the copy is done
        buf, addr = device.upload(contiguous.ctypes.data, a.nbytes), 0
    return DeviceArray._wrap(a.shape, a.dtype, buf, device), (buf, None, a.size), addr


def _stage(b: CheckedCall, tensors: Sequence[Any], device: runtime.Device
           ) -> tuple[list[Any], list[tuple[Any, DeviceArray, int]], list[DeviceArray], list[Any]]:
    """Before the lock, for a call with written tensors or tensor lists: (per tensor
    parameter, how each NumPy array reached the device; the (caller's NumPy array, device
    copy, its host address or 0) to write back; every device array the operator writes;
    what the launch keeps alive besides the top-level DeviceArrays: the written copies
    and the DeviceArrays in lists). A list's DeviceArrays are checked here as a call's
    top-level ones are (api.check_places), since a checked call's key covers only their
    shapes and dtypes."""
    staged: list[Any] = []
    writebacks: list[tuple[Any, DeviceArray, int]] = []
    written: list[DeviceArray] = []
    keep: list[Any] = []
    for t, writes, is_list, name in zip(tensors, b.written, b.lists, b.tensor_names):
        if t is None:
            staged.append(None)
        elif type(t) is DeviceArray:
            if writes:
                written.append(t)
            staged.append(None)
        elif is_list:
            entries: list[Any] = []
            for i, e in enumerate(t):
                if type(e) is DeviceArray:
                    buf = e._buffer
                    if e._device is not device or buf is None or not buf.ptr or buf.error is not None:
                        here = device.index == runtime.current_device_index()
                        check_same_place(e, "npu", f"{name}[{i}]", None if here else device.index)
                    keep.append(e)
                    if writes:
                        written.append(e)
                    entries.append(None)
                else:
                    entries.append(_stage_host(device, e, writes, writebacks, written))
            staged.append(entries)
        else:
            staged.append(_stage_host(device, t, writes, writebacks, written))
    keep += written
    return staged, writebacks, written, keep


def phase1_and_workspace(f: Any, phase1: Any, c_args: Sequence[Any], stream: runtime.Stream,
                         spec: Any) -> tuple[Any, int, int]:
    """Phase 1 on the C arguments, then the workspace it asks for: (executor, workspace
    address, size). Call with the stream's lock held. A failed workspace destroys the
    executor, which phase 2 never consumed."""
    ws_size, executor = _c_uint64(0), _c_void_p()
    status = phase1(*c_args, _byref(ws_size), _byref(executor))
    if status:
        runtime.check(f.cann, status, spec.phase1_name)
    size = ws_size.value
    try:
        workspace = stream.workspace(size)
    except BaseException:
        f.destroy_executor(executor)
        raise
    return executor, int(workspace or 0), size


def launch_resident(b: CheckedCall, tensors: Sequence[Any], outs: Sequence[Any], device: runtime.Device) -> Any:
    """The common device-resident call, lean: every tensor a DeviceArray, every output a
    DeviceArray out= (not one of the inputs) or allocated here, nothing to zero-fill, a
    plain call. Returns NotImplemented when the call is not one (``launch`` then runs it):
    nothing has happened by then."""
    if b.any_written:  # tensors written in place get handles of their own (handles.ref_tensor)
        return NotImplemented
    for t in tensors:
        if type(t) is not DeviceArray:
            return NotImplemented
    spec = b.spec
    f = _fns
    if f is None or f.cann is not get_cann():
        f = functions()
    entry = f._operators.get(id(spec))
    if entry is None or entry[0] is not spec:
        phase1, phase2_fn = f.operator(spec)
    else:
        phase1, phase2_fn = entry[1], entry[2]
    stream = device.stream
    outputs: list[DeviceArray] = []
    alloc = device.allocator.alloc
    for o, (shape, dtype), nbytes in zip(outs, b.outputs, b.out_nbytes):
        if o is None:
            outputs.append(DeviceArray._wrap(shape, dtype, alloc(nbytes), device))
            continue
        if type(o) is not DeviceArray:
            return NotImplemented
        ob = o._buffer
        for t in tensors:
            if t._buffer is ob:  # an in-place out=: a temporary and a copy, in launch
                return NotImplemented
        outputs.append(o)
    c_args = list(b.template)
    create, destroy, cann = f.create, f.destroy, f.cann
    with stream.lock:
        if stream.closed or stream.queued >= runtime.MAX_QUEUED_LAUNCHES:
            stream.throttle()  # refuses a stream destroyed meanwhile
        for i, fmt, t in zip(b.tensor_params, b.formats, tensors):
            buf = t._buffer
            if not buf.ptr:  # freed by another thread since the caller's checks
                check_live(tensors, b.tensor_names)
            acl = buf.acl
            h = acl.get((t.shape, t.dtype, fmt)) if acl is not None and t._format is None else None
            c_args[i] = h if h is not None else handles.block_tensor(create, destroy, cann, buf, t.shape, t.dtype,
                                                                     fmt, t._format, t._storage)
        if b.int_params:
            cache = stream.int_arrays
            for i in b.int_params:
                v = c_args[i]
                if v is not None:
                    h = cache.get(v)
                    c_args[i] = h if h is not None else stream.int_array(v)
        for arr, fmt in zip(outputs, b.out_formats):
            buf = arr._buffer
            if not buf.ptr:
                check_live(outs, b.out_labels)
            acl = buf.acl
            h = acl.get((arr.shape, arr.dtype, fmt)) if acl is not None and arr._format is None else None
            c_args.append(h if h is not None else handles.block_tensor(create, destroy, cann, buf, arr.shape,
                                                                       arr.dtype, fmt, arr._format, arr._storage))
        executor, workspace, size = phase1_and_workspace(f, phase1, c_args, stream, spec)
        status = phase2_fn(workspace, size, executor, stream.handle)
        written = [t for t, w in zip(tensors, b.written) if w] if b.any_written else ()
        stream.record(outputs + list(tensors), [arr._buffer for arr in (*outputs, *written)] if status == 0 else (),
                      spec.aclnn)
        if status:
            runtime.check(cann, status, spec.aclnn)
        if LAUNCH_BLOCKING:
            stream.synchronize()
    if written:  # a raw operator's: the arguments it wrote, in place
        return written[0] if len(written) == 1 else tuple(written)
    if len(outputs) == 1:
        return outputs[0] if b.required[0] else None
    return tuple(arr if req else None for arr, req in zip(outputs, b.required))


def launch(b: CheckedCall, tensors: Sequence[Any], outs: Sequence[Any], device: runtime.Device,
           resident: Optional[bool] = None) -> Any:
    """One launch of a checked call. ``resident`` (results stay on the device) is the
    checked call's unless given (plans pass it: their arrays may differ in kind per run)."""
    hook = LAUNCH_HOOKS.get(b.spec.aclnn)
    if hook is not None:
        rt = runtime.runtime_if_started()
        hook(b.args_template, rt.release if rt is not None else None)
    # a raw operator's outputs of data-dependent size: a handle of their own, read back after the run
    cut = data_dependent.outputs(b.spec.aclnn) if not b.spec.outputs else ()
    if b.lean and resident is None and not cut:
        result = launch_resident(b, tensors, outs, device)
        if result is not NotImplemented:
            return result
    spec = b.spec
    f = functions()
    phase1, phase2_fn = f.operator(spec)
    stream = device.stream
    if b.any_written:
        handles.make_room(f.cann, spec.aclnn, tensors, b.written, device)
    outputs, copies = place_outputs(b, outs, tensors, device)
    in_use: list[Any] = outputs + [t for t in tensors if type(t) is DeviceArray]
    refs: list[handles.Ref] = []
    if b.plain:
        staged: list[Any] = [None if t is None or type(t) is DeviceArray else _upload(device, np.asarray(t))
                             for t in tensors]
        writebacks: list[tuple[Any, DeviceArray, int]] = []
    else:
        staged, writebacks, written, keep = _stage(b, tensors, device)
        outputs = outputs + written  # flagged by phase2 as written by this launch
        in_use += keep
    temps: list[tuple[Callable[[int], int], int, str]] = []  # (destroy, handle, its name) after phase 2
    cut_handles: dict[int, int] = {}  # tensor index -> the fresh aclTensor a data-dependent output is given
    c_args = list(b.template)
    create, cann = f.create, f.cann
    with stream.lock:  # phase 1, workspace, phase 2 and keep-alive: one step for any sync
        done = False
        try:
            stream.throttle()
            check_live(tensors, b.tensor_names)
            if copies or not all(o is None for o in outs):
                check_live(outs, b.out_labels)
            if b.any_fill:
                fill(b, outs, outputs, device)
            for k, (i, fmt, t) in enumerate(zip(b.tensor_params, b.formats, tensors)):
                if t is None:  # a NULL: a raw operator's optional tensor, or an unchecked test
                    continue
                if cut and not b.lists[k] and spec.params[i].c_name in cut:
                    # never a cached handle: the operator changes this one's view shape
                    ptr = t._buffer.ptr if type(t) is DeviceArray else staged[k][0].ptr
                    own = handles.create_tensor(create, cann, tuple(t.shape), t.dtype, fmt, ptr)
                    temps.append((f.destroy, own, "aclDestroyTensor"))
                    c_args[i] = cut_handles[k] = own
                    continue
                if type(t) is DeviceArray:
                    buf = t._buffer
                    if b.written[k] and b.reads[k]:
                        c_args[i] = handles.ref_tensor(f, cann, t, fmt, b.tensor_names[k], False, temps, refs)
                        continue
                    acl = buf.acl
                    h = acl.get((t.shape, t.dtype, fmt)) if acl is not None and t._format is None else None
                    c_args[i] = h if h is not None else handles.block_tensor(create, f.destroy, cann, buf, t.shape,
                                                                             t.dtype, fmt, t._format, t._storage)
                elif b.lists[k]:
                    c_args[i] = _tensor_list(f, t, staged[k], fmt, in_use, temps, b.tensor_names[k])
                else:
                    buf, strides, span = staged[k]
                    a = t if type(t) is np.ndarray else np.asarray(t)
                    in_use.append(buf)
                    if b.written[k] and b.reads[k]:  # its device copy: the written list's array over buf
                        copy = next(w for w in written if w._buffer is buf)
                        c_args[i] = handles.ref_tensor(f, cann, copy, fmt, b.tensor_names[k], True, temps, refs)
                    elif strides is None:
                        c_args[i] = handles.block_tensor(create, f.destroy, cann, buf, a.shape, a.dtype, fmt)
                    else:
                        h = handles.create_tensor(create, cann, a.shape, a.dtype, fmt, buf.ptr, strides, span)
                        temps.append((f.destroy, h, "aclDestroyTensor"))
                        c_args[i] = h
            for i in b.int_params:
                if c_args[i] is not None:
                    c_args[i] = stream.int_array(c_args[i])  # cached per stream (LRU)
            for i, p in b.host_params:
                h = p.create(cann, c_args[i])
                if not h:
                    raise handles.creation_failed(cann, "aclCreate" + p.c_kind[3:], f"{p.name} = {c_args[i]!r}")
                temps.append((cann.function(p.destroy_name), h, p.destroy_name))
                c_args[i] = h
            for arr, fmt in zip(outputs, b.out_formats):
                acl = arr._buffer.acl
                h = acl.get((arr.shape, arr.dtype, fmt)) if acl is not None else None
                c_args.append(h if h is not None else handles.block_tensor(create, f.destroy, cann, arr._buffer,
                                                                           arr.shape, arr.dtype, fmt))
            executor, workspace, size = phase1_and_workspace(f, phase1, c_args, stream, spec)
            if refs:
                handles.check_refs(cann, refs, f.destroy_executor, executor, spec.aclnn)
            phase2(device, stream, phase2_fn, spec.aclnn, executor, workspace, size, in_use, outputs, copies)
            if refs:
                handles.apply_refs(refs)
            real = _view_shapes(cann, stream, cut_handles) if cut_handles else {}
            done = True
        finally:
            if temps:
                failure = None
                for destroy, h, name in temps:
                    st = destroy(h)
                    if st and failure is None:
                        failure = (st, name)
                if failure is not None and done:
                    runtime.check(cann, failure[0], failure[1])
    if not spec.outputs:  # a raw operator: it returns the arguments it wrote
        if real:  # written back whole, returned cut to the real shapes it reported
            tensors = [data_dependent.cut(t, real[k]) if k in real else t for k, t in enumerate(tensors)]
        return deliver_written(b, tensors, writebacks)
    return deliver(b, outs, outputs, b.resident if resident is None else resident)


def _view_shapes(cann: Any, stream: runtime.Stream, cut_handles: dict[int, int]) -> dict[int, tuple[int, ...]]:
    """The real shapes the operator set on its data-dependent outputs' handles: they are
    known once it has run, so the stream is synchronised first (op-plugin's EXEC_NPU_CMD_SYNC).
    The dims array nnopbase allocates (new[]) has no exported free: a few bytes stay."""
    stream.synchronize()
    get = cann.function("aclGetViewShape")
    found = {}
    for k, h in cut_handles.items():
        dims, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
        runtime.check(cann, get(h, ctypes.byref(dims), ctypes.byref(n)), "aclGetViewShape")
        found[k] = tuple(int(dims[d]) for d in range(n.value))
    return found


def _tensor_list(f: Functions, items: Sequence[Any], staged: Sequence[Any], fmt: int, in_use: list[Any],
                 temps: list[tuple[Callable[[int], int], int, str]], name: str = "") -> int:
    """An aclTensorList of fresh element handles (the list owns and destroys them), queued
    for destruction after phase 2. Call with the stream's lock held (its DeviceArrays are
    checked for liveness here, as check_live does for the top-level ones)."""
    cann = f.cann
    elements: list[int] = []
    try:
        for i, (t, entry) in enumerate(zip(items, staged)):
            rank_fmt = fmt if fmt >= 0 else format_for_rank(len(t.shape))
            if type(t) is DeviceArray:
                if not t._buffer.ptr:
                    t._require_live(f"{name}[{i}]")
                elements.append(handles.create_tensor(f.create, cann, t.shape, t.dtype, rank_fmt, t._buffer.ptr))
            else:
                buf, strides, span = entry
                in_use.append(buf)
                a = np.asarray(t)
                elements.append(handles.create_tensor(f.create, cann, a.shape, a.dtype, rank_fmt, buf.ptr, strides,
                                                      span))
        h = cann.function("aclCreateTensorList")((_c_void_p * len(elements))(*elements), len(elements))
        if not h:
            raise handles.creation_failed(cann, "aclCreateTensorList", f"{len(elements)} tensors")
    except BaseException:
        for e in elements:
            f.destroy(e)
        raise
    temps.append((cann.function("aclDestroyTensorList"), h, "aclDestroyTensorList"))
    return int(h)


def deliver_written(b: CheckedCall, tensors: Sequence[Any],
                    writebacks: Sequence[tuple[Any, DeviceArray, int]]) -> Any:
    """A raw operator's return value: the arguments it wrote (a tuple when several; a list
    of the caller's arrays for a tensor list), with every NumPy one filled from its device
    copy."""
    for host, arr, addr in writebacks:
        if addr:
            arr._device.download(arr._buffer, 0, addr, host.nbytes)
        else:
            np.copyto(host, arr._download())
    results = [list(t) if is_list and t is not None else t for t, w, is_list in zip(tensors, b.written, b.lists) if w]
    return results[0] if len(results) == 1 else tuple(results)
