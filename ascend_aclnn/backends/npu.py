"""The npu backend: the one generic two-phase caller, for every operator.

GetWorkspaceSize -> workspace from the stream's growing cache -> aclnnXxx on the stream.
Executor rule (cann-abi.md section 7): phase 2 frees a non-repeatable executor, so once
phase 2 has been called we never touch it again; if phase 2 is never reached (the
workspace could not be allocated), the executor is still ours and is destroyed.

A DeviceArray ``out=`` that is also an input (the same device memory) is computed into a
temporary and copied over on the stream afterwards, so the kernel never reads what it
is writing: the result is the one the NumPy backend gives, and nothing waits.
"""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import runtime
from ..cann.loader import get_cann
from ..handles import HandleScope, device_view
from ..ops.spec import Args, IntArray, OpSpec, Tensor, TensorArg
from ..tensors import DeviceArray, new_device_array


def run(spec: OpSpec, a: Args) -> Any:
    cann = get_cann()
    phase1, phase2 = cann.operator(spec.aclnn, spec.c_argtypes)
    device = runtime.current_device()
    stream = device.stream
    input_buffers = [v.value._buffer for v in a.values()
                     if isinstance(v, TensorArg) and isinstance(v.value, DeviceArray)] \
        if any(isinstance(o.value, DeviceArray) for o in a.outputs) else ()
    outputs, copies = [], []
    for o, o_spec in zip(a.outputs, spec.outputs):
        given = isinstance(o.value, DeviceArray)
        aliased = given and any(o.value._buffer is b for b in input_buffers)
        arr = o.value if given and not aliased else new_device_array(o.shape, o.dtype, "npu")
        if aliased:
            copies.append((o.value, arr))
        if o_spec.needs_zero_fill(a):
            device.zero(arr._buffer, arr.nbytes, wait=given and not aliased)
        outputs.append(arr)
    in_use: list[Any] = list(outputs)
    with HandleScope(cann) as scope:
        c_args = []
        for p in spec.params:
            value = a[p.name]
            if value is None:  # only reachable without validation: let CANN see the NULL
                c_args.append(None)
            elif isinstance(p, Tensor):
                view = device_view(value.value, device)
                in_use.append(view.owner)
                c_args.append(scope.tensor(view, p.acl_format))
            elif isinstance(p, IntArray):
                c_args.append(scope.int_array(value))
            else:
                c_args.append(value.encode() if isinstance(value, str) else value)
        c_args += [scope.tensor(device_view(arr, device), o.acl_format) for o, arr in zip(spec.outputs, outputs)]
        ws_size, executor = ctypes.c_uint64(0), ctypes.c_void_p()
        runtime.check(cann, phase1(*c_args, ctypes.byref(ws_size), ctypes.byref(executor)), spec.phase1_name)
        with stream.lock:  # workspace, enqueue and keep-alive: one step for any sync
            try:
                workspace = stream.workspace(ws_size.value)
            except BaseException:
                cann.function("aclDestroyAclOpExecutor")(executor)
                raise
            status = phase2(workspace, ws_size.value, executor, stream.handle)
            stream.launched(in_use, [arr._buffer for arr in outputs] if status == 0 else (), spec.aclnn)
            runtime.check(cann, status, spec.aclnn)
            for target, temp in copies:
                device.copy_async(target._buffer, temp._buffer, temp.nbytes)
                stream.launched((target,), [target._buffer], "aclrtMemcpyAsync")
    results = [_deliver(o, arr, a.device_resident) if req else None
               for o, arr, req in zip(a.outputs, outputs, spec.required(a))]
    return results[0] if len(results) == 1 else tuple(results)


def _deliver(out: TensorArg, result: DeviceArray, device_resident: bool) -> Any:
    if isinstance(out.value, np.ndarray):
        host = result.numpy()  # synchronises the stream
        np.copyto(out.value, host)
        return out.value
    if isinstance(out.value, DeviceArray):
        return out.value  # written in place (or by a copy from a temporary)
    if device_resident:
        return result
    return result.numpy()
