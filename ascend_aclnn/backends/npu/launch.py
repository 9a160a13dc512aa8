"""The npu backend's one two-phase caller, for every operator.

GetWorkspaceSize -> workspace from the stream's growing cache -> aclnnXxx on the stream.
Executor rule (CANN's two-phase API documentation): phase 2 frees a non-repeatable
executor, so once phase 2 has been called we never touch it again; if phase 2 is never
reached (the workspace could not be allocated), the executor is still ours and is
destroyed.

A call's route reads top-down, each step entering the module that does it once:
- ``stage``: before the stream's lock, one step on the device (runtime.Device.stage): every
  NumPy input uploaded, every output block allocated; ``place_outputs`` then lays the
  outputs out (allocated, the caller's DeviceArray out=, or a temporary when that out= is
  also an input: the kernel never reads what it writes, and the temporary is copied over
  on the stream afterwards, which gives NumPy's in-place result without waiting);
- under the lock: every handle of the call made in one pass (handles.bind), phase 1, the
  workspace, ``phase2`` (keep-alive, the alias copies), and the launch's own handles
  released (handles.release);
- ``deliver``: results as DeviceArrays, or downloaded into NumPy arrays.
Plans share place_outputs, phase2 and deliver (executor.py, plans.py).
``devtools/call_route.py`` measures the route; tests/test_call_route.py holds it.

What is reused between calls (see ops/checked_calls.py for the checked layouts):
- the aclTensor handle of a device block (a DeviceArray's, or a contiguous NumPy input's
  upload), cached on the block (handles.block_tensor);
- aclIntArray handles for repeated values, cached per stream (handles.int_array);
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
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ...cann import data_dependent
from ...cann.loader import Cann, get_cann
from ...ops.checked_calls import CheckedCall
from ...ops import LAUNCH_HOOKS
from ...ops.spec import Args, OpSpec
from ...tensors import DeviceArray, check_same_place
from . import handles, runtime

# ASCEND_LAUNCH_BLOCKING=1, CANN's and torch_npu's switch for synchronous launches: every
# launch waits for its kernel, so a kernel's failure raises at the call that launched it.
# Read once, as torch_npu reads it at start-up.
LAUNCH_BLOCKING: bool = os.environ.get("ASCEND_LAUNCH_BLOCKING", "") == "1"

_c_uint64, _c_void_p, _byref = ctypes.c_uint64, ctypes.c_void_p, ctypes.byref


class Operator(NamedTuple):
    """One operator bound on the loaded CANN: its two phases, the C names of its
    data-dependent outputs (cann.data_dependent; () for most), and whether it may store a
    tensor it writes in a larger private layout (handles.make_room)."""
    spec: OpSpec
    phase1: Callable[..., int]
    phase2: Callable[..., int]
    cut: tuple[str, ...]
    reformats: bool


class Functions:
    """The nnopbase functions of the hot path, and each operator's two phases, bound once
    per loaded CANN."""

    def __init__(self, cann: Cann):
        self.cann: Cann = cann
        self.create: Callable[..., Any] = cann.function("aclCreateTensor")
        self.destroy: Callable[..., Any] = cann.function("aclDestroyTensor")
        self.destroy_executor: Callable[..., Any] = cann.function("aclDestroyAclOpExecutor")
        self._operators: dict[int, Operator] = {}
        self.c_functions: dict[str, Callable[..., Any]] = {}
        self.host_destroyers: dict[int, tuple[Any, Callable[[int], int], str]] = {}

    def bound(self, spec: OpSpec) -> Operator:
        entry = self._operators.get(id(spec))
        if entry is None or entry.spec is not spec:
            # a raw operator's outputs of data-dependent size: a handle of their own, read back after the run
            cut = data_dependent.outputs(spec.aclnn) if not spec.outputs else ()
            entry = self._operators[id(spec)] = Operator(spec, *self.cann.operator(spec.aclnn, spec.c_argtypes), cut,
                                                         handles.reformats_in_place(spec.aclnn))
        return entry

    def operator(self, spec: OpSpec) -> tuple[Callable[..., int], Callable[..., int]]:
        entry = self.bound(spec)
        return entry.phase1, entry.phase2

    def function(self, name: str) -> Callable[..., Any]:
        """A C function of the launch's (a list's or host value's create or destroy), bound once."""
        fn = self.c_functions.get(name)
        if fn is None:
            fn = self.c_functions[name] = self.cann.function(name)
        return fn

    def host_destroyer(self, p: Any) -> tuple[Any, Callable[[int], int], str]:
        """(p, the aclDestroy* function of a host-value parameter p, its name), bound once."""
        entry = self.host_destroyers.get(id(p))
        if entry is None or entry[0] is not p:
            name = p.destroy_name
            entry = self.host_destroyers[id(p)] = (p, self.function(name), name)
        return entry


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
    return set() if f is None else {entry.spec.aclnn for entry in list(f._operators.values())}


def rebind_functions() -> None:
    """Bind the C functions again on next use (tests that wrap a C function)."""
    global _fns
    _fns = None


# ---- the route of one call -----------------------------------------------------------------------

def launch(b: CheckedCall, tensors: Sequence[Any], outs: Sequence[Any], device: runtime.Device,
           resident: Optional[bool] = None) -> Any:
    """One launch of a checked call, top-down: staging (NumPy inputs uploaded, output blocks
    allocated), every handle made in one pass (handles.bind), the two phases on a workspace
    from the stream, the launch's own handles released, then delivery. ``resident``
    (results stay on the device) is the checked call's unless given (plans pass it: their
    arrays may differ in kind per run)."""
    spec = b.spec
    hook = LAUNCH_HOOKS.get(spec.aclnn)
    if hook is not None:
        rt = runtime.runtime_if_started()
        hook(b.args_template, rt.release if rt is not None else None)
    f = _fns
    if f is None or f.cann is not device.cann:  # the process's one CANN: rebound only after rebind_functions
        f = functions()
    op = f._operators.get(id(spec))
    if op is None or op.spec is not spec:
        op = f.bound(spec)
    cut = op.cut
    if b.lean and resident is None and not cut:
        result = launch_resident(b, tensors, outs, device, f, op)
        if result is not NotImplemented:
            return result
    stream = device.stream
    if op.reformats and b.any_written:
        handles.make_room(f.cann, tensors, b.written, device, spec.aclnn)
    given = False  # an out= among the outputs
    for o in outs:
        if o is not None:
            given = True
            break
    staged, writebacks, written, keep, blocks = stage(b, tensors, outs, given, device)
    outputs, copies = place_outputs(b, outs, tensors, device, blocks=blocks)
    in_use: list[Any] = outputs + keep
    if written:
        outputs = outputs + written  # flagged by phase2 as written by this launch
    cann = f.cann
    temps: Sequence[handles.Temp] = ()
    with stream.lock:  # phase 1, workspace, phase 2 and keep-alive: one step for any sync
        done = False
        try:
            if stream.closed or stream.queued >= runtime.MAX_QUEUED_LAUNCHES:
                stream.throttle()  # refuses a stream destroyed meanwhile
            check_live(tensors, b.tensor_names)
            if given:
                check_live(outs, b.out_labels)
            if b.any_fill:
                fill(b, outs, outputs, device)
            c_args, temps, refs, cut_handles = handles.bind(f, b, tensors, staged, outputs, written, stream, cut)
            executor, workspace, size = phase1_and_workspace(f, op.phase1, c_args, stream, spec)
            if refs:
                handles.check_refs(cann, refs, f.destroy_executor, executor, spec.aclnn)
            phase2(device, stream, op.phase2, spec.aclnn, executor, workspace, size, in_use, outputs, copies)
            if refs:
                handles.apply_refs(refs)
            real = _view_shapes(cann, stream, cut_handles) if cut_handles else {}
            done = True
        finally:
            if temps:
                failure = handles.release(temps)
                if failure is not None and done:
                    runtime.check(cann, *failure)
    if not spec.outputs:  # a raw operator: it returns the arguments it wrote
        if real:  # written back whole, returned cut to the real shapes it reported
            tensors = [data_dependent.cut(t, real[k]) if k in real else t for k, t in enumerate(tensors)]
        return deliver_written(b, tensors, writebacks)
    return deliver(b, outs, outputs, b.resident if resident is None else resident)


def launch_resident(b: CheckedCall, tensors: Sequence[Any], outs: Sequence[Any], device: runtime.Device,
                    f: Functions, op: Operator) -> Any:
    """The common device-resident call, lean: every tensor a DeviceArray, every output a
    DeviceArray out= (not one of the inputs) or allocated here, nothing to zero-fill, a
    plain call. Returns NotImplemented when the call is not one (``launch`` then runs it):
    nothing has happened by then."""
    if b.any_written:  # tensors written in place get handles of their own (handles.ref_tensor)
        return NotImplemented
    for t in tensors:
        if type(t) is not DeviceArray:
            return NotImplemented
    for o in outs:
        if o is not None:
            if type(o) is not DeviceArray:
                return NotImplemented
            ob = o._buffer
            for t in tensors:
                if t._buffer is ob:  # an in-place out=: a temporary and a copy, in launch
                    return NotImplemented
    stream = device.stream
    sizes = b.out_nbytes
    for o in outs:
        if o is not None:
            sizes = tuple(n for o, n in zip(outs, b.out_nbytes) if o is None)
            break
    blocks = device.stage((), sizes)
    outputs: list[DeviceArray] = []
    k = 0
    for o, (shape, dtype) in zip(outs, b.outputs):
        if o is None:
            o = DeviceArray._wrap(shape, dtype, blocks[k], device)
            k += 1
        outputs.append(o)
    with stream.lock:
        if stream.closed or stream.queued >= runtime.MAX_QUEUED_LAUNCHES:
            stream.throttle()  # refuses a stream destroyed meanwhile
        c_args = handles.bind_resident(f, b, tensors, outputs, stream)
        executor, workspace, size = phase1_and_workspace(f, op.phase1, c_args, stream, b.spec)
        status = op.phase2(workspace, size, executor, stream.handle)
        stream.record(outputs + list(tensors), [arr._buffer for arr in outputs] if status == 0 else (), b.spec.aclnn)
        if status:
            runtime.check(f.cann, status, b.spec.aclnn)
        if LAUNCH_BLOCKING:
            stream.synchronize()
    if len(outputs) == 1:
        return outputs[0] if b.required[0] else None
    return tuple(arr if req else None for arr, req in zip(outputs, b.required))


# ---- 1. staging, before the stream's lock --------------------------------------------------------

Staged = tuple[Any, ...]  # how one NumPy tensor reached the device: (buffer, element strides or None, span)
Writeback = tuple[Any, DeviceArray, int]  # (a caller's NumPy array, its device copy, its host address or 0)


# One launch's device memory, before its lock: (per tensor parameter, how each NumPy array
# reached the device: a Staged, a list of them for a tensor list, None for a DeviceArray or
# NULL; the NumPy arrays to write back afterwards; every device array the operator writes
# besides its outputs; what the launch keeps alive besides its outputs: the top-level
# DeviceArrays, the uploads, the written copies, the DeviceArrays in lists; the blocks for
# the outputs, for place_outputs).
Staging = tuple[list[Any], list[Writeback], list[DeviceArray], list[Any], Iterator[runtime.DeviceBuffer]]


def stage(b: CheckedCall, tensors: Sequence[Any], outs: Sequence[Any], given: bool, device: runtime.Device
          ) -> Staging:
    """Before the lock: every NumPy input uploaded and every output block allocated, in one
    step on the device. A written NumPy array is uploaded too, even when the operator only
    writes it: what the operator leaves unwritten (an empty input, a padding tail, an output
    it skips) then keeps the caller's values, as a DeviceArray's memory does, instead of the
    device's uninitialised bytes. A list's DeviceArrays are checked here as a call's
    top-level ones are (api.check_places), since a checked call's key covers only their
    shapes and dtypes. ``given``: whether any output was given (an out=)."""
    staged: list[Any] = [None] * len(tensors)
    written: list[DeviceArray] = []
    keep: list[Any] = []  # the top-level DeviceArrays, then the rest (see Staging)
    todo: list[tuple[int, int, Any, NDArray[Any], Optional[tuple[int, ...]], int]] = []  # per upload, see below
    uploads: list[tuple[int, int]] = []  # (address, bytes)
    for k, t in enumerate(tensors):
        if type(t) is DeviceArray:
            keep.append(t)
            if b.written[k]:
                written.append(t)
        elif t is None:
            continue
        elif b.lists[k]:
            staged[k] = [None] * len(t)
            writes = b.written[k]
            for i, e in enumerate(t):
                if type(e) is DeviceArray:
                    buf = e._buffer
                    if e._device is not device or buf is None or not buf.ptr or buf.error is not None:
                        here = device.index == runtime.current_device_index()
                        check_same_place(e, "npu", f"{b.tensor_names[k]}[{i}]", None if here else device.index)
                    keep.append(e)
                    if writes:
                        written.append(e)
                else:
                    a, strides, span = _host_layout(e, writes)
                    todo.append((k, i, e, a, strides, span))  # (tensor index, element index, host, uploaded...)
                    uploads.append((a.ctypes.data, span * a.itemsize))
        else:
            if type(t) is np.ndarray and t.flags.c_contiguous:
                a, strides, span = t, None, t.size
            else:
                a, strides, span = _host_layout(t, b.written[k])
            todo.append((k, -1, t, a, strides, span))  # element index -1: the tensor itself
            uploads.append((a.ctypes.data, span * a.itemsize))
    blocks = iter(device.stage(uploads, fresh_sizes(b, outs, tensors) if given else b.out_nbytes))
    writebacks: list[Writeback] = []
    if todo:
        for (k, i, host, a, strides, span), buf in zip(todo, blocks):  # (zip takes no block past the uploads)
            keep.append(buf)
            if i < 0:
                staged[k] = (buf, strides, span)
            else:
                staged[k][i] = (buf, strides, span)
            if b.written[k]:
                copy = DeviceArray._wrap(a.shape, a.dtype, buf, device)
                writebacks.append((host, copy, host.ctypes.data if a is host else 0))
                written.append(copy)
    if written:
        keep += written
    return staged, writebacks, written, keep, blocks


def _host_layout(a: Any, writes: bool) -> tuple[NDArray[Any], Optional[tuple[int, ...]], int]:
    """How a host array is uploaded: (the array whose bytes are copied, element strides or
    None, span in elements). As it lies in memory when that is cheap (torch_npu does the
    same with views); compacted otherwise, and always for a written one (written back
    contiguous)."""
    a = a if type(a) is np.ndarray else np.asarray(a)
    if not a.flags.c_contiguous:
        layout = None if writes else strided_layout(a)
        if layout is not None:
            return a, layout[0], layout[1]
        a = np.ascontiguousarray(a)
    return a, None, a.size


def strided_layout(a: NDArray[Any]) -> Optional[tuple[tuple[int, ...], int]]:
    """(element strides, span in elements) under which a's own bytes can be uploaded as one
    span, or None when that is impossible or costs more than twice a's size."""
    item = a.itemsize
    if a.size == 0 or any(s < 0 or s % item for s in a.strides):
        return None
    strides = tuple(s // item for s in a.strides)
    span = sum((d - 1) * s for d, s in zip(a.shape, strides)) + 1
    return (strides, span) if span * item <= 2 * a.nbytes else None


def fresh_sizes(b: CheckedCall, outs: Sequence[Any], tensors: Sequence[Any]) -> Sequence[int]:
    """The sizes of the blocks ``place_outputs`` (with no scratch) takes for the outputs that
    need one of their own: every output but a DeviceArray out= that is no input."""
    for o in outs:
        if o is not None:
            break
    else:
        return b.out_nbytes
    input_buffers = [t._buffer for t in tensors if type(t) is DeviceArray]
    return [nbytes for o, nbytes in zip(outs, b.out_nbytes)
            if type(o) is not DeviceArray or any(o._buffer is buf for buf in input_buffers)]


def place_outputs(b: CheckedCall, outs: Sequence[Any], tensors: Sequence[Any], device: runtime.Device,
                  scratch: Optional[Callable[[int], runtime.DeviceBuffer]] = None,
                  blocks: Optional[Iterable[runtime.DeviceBuffer]] = None
                  ) -> tuple[list[DeviceArray], list[tuple[DeviceArray, DeviceArray]]]:
    """(the arrays the kernel writes, one per output; the (out=, temporary) pairs whose
    temporary is copied over the out= afterwards). ``scratch(j)``: where output j goes when
    it is downloaded or not returned (plans pass their own reused buffers); default: a new
    block, the next of ``blocks`` when given (staged beforehand, in ``fresh_sizes``' order),
    else one allocated here. Nothing is zero-filled here: ``fill`` does it under the
    stream's lock."""
    alloc = device.allocator.alloc
    if all(o is None for o in outs) and scratch is None:  # the common case: every output allocated here
        if blocks is None:
            blocks = [alloc(nbytes) for nbytes in b.out_nbytes]
        return [DeviceArray._wrap(shape, dtype, buf, device) for (shape, dtype), buf in zip(b.outputs, blocks)], []
    fresh = None if blocks is None else iter(blocks)
    outputs, copies = [], []
    input_buffers = [t._buffer for t in tensors if type(t) is DeviceArray]
    resident = any(type(t) is DeviceArray for t in tensors) or any(type(o) is DeviceArray for o in outs)
    for j, (o, (shape, dtype), nbytes, req) in enumerate(zip(outs, b.outputs, b.out_nbytes, b.required)):
        given = type(o) is DeviceArray
        aliased = given and any(o._buffer is buf for buf in input_buffers)
        if given and not aliased:
            arr = o
        elif scratch is None or (req and (given or (resident and o is None))):  # a result of its own
            arr = DeviceArray._wrap(shape, dtype, alloc(nbytes) if fresh is None else next(fresh), device)
        else:  # downloaded (a NumPy result or out=) or not returned: the caller's scratch
            arr = DeviceArray._wrap(shape, dtype, scratch(j), device)
        if aliased:
            copies.append((o, arr))
        outputs.append(arr)
    return outputs, copies


# ---- 2. under the stream's lock: the two phases --------------------------------------------------

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


def _view_shapes(cann: Any, stream: runtime.Stream, cut_handles: dict[int, int]) -> dict[int, tuple[int, ...]]:
    """The real shapes the operator set on its data-dependent outputs' handles: they are
    known once it has run, so the stream is synchronised first (op-plugin's EXEC_NPU_CMD_SYNC)."""
    stream.synchronize()
    return {k: handles.read_dims(cann, "aclGetViewShape", h) for k, h in cut_handles.items()}


# ---- 3. delivery ---------------------------------------------------------------------------------

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


# ---- a call of converted or raw C-level arguments (tests) -------------------------------------

def run(spec: OpSpec, a: Args) -> Any:
    """Run converted (or, in tests, raw C-level) arguments: one launch, nothing cached
    about the arguments themselves."""
    b = CheckedCall(spec, a)
    tensors = [None if a[spec.params[i].name] is None else a[spec.params[i].name].value
               for i in b.tensor_params]
    outs = [o.value if o.given else None for o in a.outputs]
    return launch(b, tensors, outs, runtime.current_device())
