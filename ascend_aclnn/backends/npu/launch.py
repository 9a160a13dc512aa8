"""The npu backend: the one generic two-phase caller, for every operator.

GetWorkspaceSize -> workspace from the stream's growing cache -> aclnnXxx on the stream.
Executor rule (CANN's two-phase API documentation): phase 2 frees a non-repeatable executor, so once
phase 2 has been called we never touch it again; if phase 2 is never reached (the
workspace could not be allocated), the executor is still ours and is destroyed.

A DeviceArray ``out=`` that is also an input (the same device memory) is computed into a
temporary and copied over on the stream afterwards, so the kernel never reads what it
is writing: the result is the one the NumPy backend gives, and nothing waits.

What is reused between calls (see ops/checked_calls.py for the validated layouts):
- the aclTensor handle of a device block (a DeviceArray's, or a contiguous NumPy input's
  upload), cached on the block (DeviceBuffer.acl) by (shape, dtype, format): it follows
  the block through the allocator's cache, so the next array of the same description in
  that block reuses it, and empty_cache() destroys it with the block;
- aclIntArray handles for repeated values, cached per stream (Stream.int_array);
- the operator's two C functions and the contiguous shape/stride arrays.
A strided NumPy input (uploaded with its strides) gets an aclTensor of its own, destroyed
right after phase 2.
The whole launch, phase 1 included, holds the stream's lock, so no cached handle can be
destroyed (evicted, or dropped by empty_cache) while an executor may still read it.
"""
from __future__ import annotations

import ctypes
import functools
from typing import Any, Optional, Sequence

import numpy as np

from . import runtime
from ...cann.loader import get_cann
from ...errors import AclnnError
from .handles import int64s, strided_layout
from ...ops.checked_calls import CheckedCall
from ...ops.spec import Args, OpSpec
from ...tensors import ACL_DTYPES, DeviceArray, contiguous_strides

_c_uint64, _c_void_p, _byref = ctypes.c_uint64, ctypes.c_void_p, ctypes.byref


@functools.lru_cache(maxsize=4096)
def contiguous_desc(shape: tuple) -> tuple:
    """(dims, ndim, strides) as C int64 arrays for a contiguous tensor of this shape."""
    return int64s(shape), len(shape), int64s(contiguous_strides(shape))


class _Functions:
    """The nnopbase functions of the hot path, bound once per loaded CANN."""

    def __init__(self, cann):
        self.cann = cann
        self.create = cann.function("aclCreateTensor")
        self.destroy = cann.function("aclDestroyTensor")
        self.destroy_executor = cann.function("aclDestroyAclOpExecutor")
        self.operators: dict[int, tuple] = {}

    def operator(self, spec: OpSpec) -> tuple:
        pair = self.operators.get(id(spec))
        if pair is None:
            pair = self.operators[id(spec)] = (spec, *self.cann.operator(spec.aclnn, spec.c_argtypes))
        return pair[1], pair[2]


_fns: Optional[_Functions] = None


def functions() -> _Functions:
    global _fns
    f = _fns
    cann = get_cann()
    if f is None or f.cann is not cann:
        f = _fns = _Functions(cann)
    return f


def _fail_create(cann, shape, strides) -> AclnnError:
    return AclnnError(561103, "aclCreateTensor", f"returned NULL for shape {shape}, strides {strides}",
                      recent=runtime.recent_error_message(cann))


BLOCK_HANDLES = 4  # aclTensor descriptions cached per device block


def block_tensor(f: _Functions, buf: runtime.DeviceBuffer, shape: tuple, dtype: np.dtype, fmt: int) -> int:
    """The cached aclTensor describing a contiguous (shape, dtype) at the start of a block,
    created on first use. Call with the stream's lock held: it serialises every launch on
    the block's device, so a handle evicted here is in no launch."""
    key = (shape, dtype, fmt)
    acl = buf.acl
    if acl is not None:
        h = acl.get(key)
        if h is not None:
            return h
    dims, n, strides = contiguous_desc(shape)
    h = f.create(dims, n, ACL_DTYPES[dtype], strides, 0, fmt, dims, n, buf.ptr)
    if not h:
        raise _fail_create(f.cann, shape, contiguous_strides(shape))
    buf.allocator.with_handles.add(buf)
    if acl is None:
        buf.acl = {key: h}
    else:
        if len(acl) >= BLOCK_HANDLES:
            f.destroy(acl.pop(next(iter(acl))))
        acl[key] = h
    return h


def _upload(device: runtime.Device, a: np.ndarray) -> tuple:
    """A NumPy input on the device: (buffer, shape, strides, storage dims), uploaded as it
    lies in memory when that is cheap (torch_npu does the same with views)."""
    if not a.flags.c_contiguous:
        layout = strided_layout(a)
        if layout is not None:
            strides, span = layout
            return device.upload(a.ctypes.data, span * a.itemsize), strides, (span,)
        a = np.ascontiguousarray(a)
    return device.upload(a.ctypes.data, a.nbytes), None, None


def run(spec: OpSpec, a: Args) -> Any:
    """Run validated (or, in tests, raw C-level) arguments: one launch, nothing cached
    about the arguments themselves."""
    b = CheckedCall(spec, a)
    tensors = [None if a[spec.params[i].name] is None else a[spec.params[i].name].value
               for i in b.tensor_params]
    outs = [o.value if o.given else None for o in a.outputs]
    return launch(b, tensors, outs, runtime.current_device())


def launch(b: CheckedCall, tensors: Sequence[Any], outs: Sequence[Any], device: runtime.Device,
           resident: Optional[bool] = None) -> Any:
    """One launch of a validated binding. ``resident`` (results stay on the device) is the
    binding's unless given (plans pass it: their arrays may differ in kind per run)."""
    spec = b.spec
    f = functions()
    phase1, phase2 = f.operator(spec)
    stream = device.stream
    alloc = device.allocator.alloc
    copies: list = []
    if all(o is None for o in outs):  # the common case: every output allocated here
        outputs = [DeviceArray._wrap(shape, dtype, alloc(nbytes), device)
                   for (shape, dtype), nbytes in zip(b.outputs, b.out_nbytes)]
        if b.any_fill:
            for arr, fill in zip(outputs, b.zero_fill):
                if fill:
                    device.zero(arr._buffer, arr.nbytes, wait=False)
    else:
        outputs = []
        input_buffers = [t._buffer for t in tensors if type(t) is DeviceArray]
        for o, (shape, dtype), nbytes, fill in zip(outs, b.outputs, b.out_nbytes, b.zero_fill):
            given = type(o) is DeviceArray
            aliased = given and any(o._buffer is buf for buf in input_buffers)
            arr = o if given and not aliased else DeviceArray._wrap(shape, dtype, alloc(nbytes), device)
            if aliased:
                copies.append((o, arr))
            if fill:
                device.zero(arr._buffer, arr.nbytes, wait=given and not aliased)
            outputs.append(arr)
    in_use: list[Any] = outputs + [t for t in tensors if type(t) is DeviceArray]
    uploads = [_upload(device, np.asarray(t)) for t in tensors if t is not None and type(t) is not DeviceArray]
    temps: list[int] = []
    c_args = list(b.template)
    with stream.lock:  # phase 1, workspace, phase 2 and keep-alive: one step for any sync
        done = False
        try:
            up = iter(uploads)
            for i, fmt, t in zip(b.tensor_params, b.formats, tensors):
                if type(t) is DeviceArray:
                    acl = t._buffer.acl
                    h = acl.get((t.shape, t.dtype, fmt)) if acl is not None else None
                    c_args[i] = h if h is not None else block_tensor(f, t._buffer, t.shape, t.dtype, fmt)
                    continue
                if t is None:  # only reachable without validation: let CANN see the NULL
                    continue
                buf, strides, storage = next(up)
                a = t if type(t) is np.ndarray else np.asarray(t)
                in_use.append(buf)
                if strides is None:
                    c_args[i] = block_tensor(f, buf, a.shape, a.dtype, fmt)
                    continue
                else:
                    dims = int64s(a.shape)
                    h = f.create(dims, a.ndim, ACL_DTYPES[a.dtype], int64s(strides), 0, fmt, int64s(storage),
                                 len(storage), buf.ptr)
                if not h:
                    raise _fail_create(f.cann, a.shape, strides or contiguous_strides(a.shape))
                temps.append(h)
                c_args[i] = h
            if b.int_params:
                cache = stream._int_arrays
                for i in b.int_params:
                    v = c_args[i]
                    if v is not None:
                        h = cache.get(v)
                        if h is None:
                            h = stream.int_array(v)
                        else:
                            cache.move_to_end(v)
                        c_args[i] = h
            for arr, fmt in zip(outputs, b.out_formats):
                acl = arr._buffer.acl
                h = acl.get((arr.shape, arr.dtype, fmt)) if acl is not None else None
                c_args.append(h if h is not None else block_tensor(f, arr._buffer, arr.shape, arr.dtype, fmt))
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
            status = phase2(workspace, size, executor, stream.handle)
            stream.launched(in_use, [arr._buffer for arr in outputs] if status == 0 else (), spec.aclnn)
            if status:
                runtime.check(f.cann, status, spec.aclnn)
            for target, temp in copies:
                device.copy_async(target._buffer, temp._buffer, temp.nbytes)
                stream.launched((target,), [target._buffer], "aclrtMemcpyAsync")
            done = True
        finally:
            if temps:
                failure = 0
                for h in temps:
                    st = f.destroy(h)
                    if st and not failure:
                        failure = st
                if failure and done:
                    runtime.check(f.cann, failure, "aclDestroyTensor")
    if resident is None:
        resident = b.resident
    results = []
    for o, arr, req in zip(outs, outputs, b.required):
        if not req:
            results.append(None)
        elif type(o) is DeviceArray:
            results.append(o)  # written in place (or by a copy from a temporary)
        elif o is not None:  # a NumPy out=
            np.copyto(o, arr._download())  # synchronises the stream
            results.append(o)
        elif resident:
            results.append(arr)
        else:
            results.append(arr._download())
    return results[0] if len(results) == 1 else tuple(results)

