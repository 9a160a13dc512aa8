"""Plans: one operator call, validated and prepared once, run many times.

    p = ascend_aclnn.plan(ascend_aclnn.upsample_nearest_exact1d, x, [9])
    y = p()           # runs on the arrays it was made with (their current contents)
    y = p(x2, [9])    # fn's own signature: new arrays of the same shapes and dtypes
    p.close()         # or ``with ascend_aclnn.plan(...) as p:``, or let it be collected

On the npu backend a plan runs phase 1 once, makes the executor repeatable
(aclSetAclOpExecutorRepeatable) and, per run, only rebinds the device addresses that
changed (aclSetInputTensorAddr / aclSetOutputTensorAddr) before phase 2. The plan owns
its aclTensor / aclIntArray handles (a setter writes the new address into the aclTensor,
so they are never shared with ordinary calls) and keeps them until it destroys the
executor. NumPy inputs are uploaded into device buffers the plan owns and reuses; a
buffer that a queued launch may still read is replaced rather than overwritten. If
aclSetAclOpExecutorRepeatable fails, the plan says so (``repeatable`` is False,
``fallback_reason`` says why) and each run is an ordinary call. On the numpy backend a
plan checks the arguments against the planned ones and calls the reference.

Results are placed as ordinary calls place them: DeviceArrays (not synchronised) when any
tensor argument is a DeviceArray, NumPy arrays otherwise; ``out=`` works as usual. A plan
serialises its own runs (it has one executor); it stays on the backend and device it was
made on.
"""
from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any, Optional

import numpy as np

from .backends.npu import runtime
from .api import check_places, run_bound
from .backends import get_backend
from .backends.npu import launch as npu
from .backends.npu.launch import contiguous_desc, functions
from .cann.constants import AclrtMemcpyKind
from .errors import AclnnError, PlanMismatchError
from .ops import SPECS, checked_calls
from .ops.checked_calls import DOUBLE, INTS, TENSOR, CheckedCall
from .ops.spec import OpSpec, TensorArg, describe
from .tensors import ACL_DTYPES, DeviceArray, check_same_place, dtype_name, may_overlap

_H2D = int(AclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)
_live: "weakref.WeakSet[Plan]" = weakref.WeakSet()


def _spec_of(fn: Any) -> OpSpec:
    if isinstance(fn, OpSpec):
        return fn
    name = fn if isinstance(fn, str) else getattr(fn, "__name__", None)
    spec = SPECS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise TypeError(f"plan: expected an ascend_aclnn operator function (e.g. ascend_aclnn.im2col), its "
                        f"name or its OpSpec, got {fn!r}")
    return spec


def _attr_part(kind: int, v: Any) -> Any:
    """A converted attribute as the binding key holds it (so the two compare equal)."""
    if kind == DOUBLE and v == 0.0:
        import math
        return (0.0, math.copysign(1.0, v))
    if kind == INTS and v is not None:
        return tuple(v)
    return v


class _Resources:
    """The executor and the handles it was built with; destroyed together, executor first.
    Never raises: it may run from a stream's keep-alive release or a __del__."""

    def __init__(self, fns):
        self.fns = fns
        self.executor: Optional[int] = None
        self.tensors: list[int] = []
        self.int_arrays: list[int] = []

    def release(self) -> None:
        ex, self.executor = self.executor, None
        tensors, self.tensors = self.tensors, []
        arrays, self.int_arrays = self.int_arrays, []
        try:
            cann = self.fns.cann
            if ex:
                cann.function("aclDestroyAclOpExecutor")(ex)
            for h in tensors:
                cann.function("aclDestroyTensor")(h)
            for h in arrays:
                cann.function("aclDestroyIntArray")(h)
        except Exception:
            pass

    def __del__(self):
        if getattr(self, "executor", None) or getattr(self, "tensors", None) or getattr(self, "int_arrays", None):
            self.release()


class Plan:
    """A prepared operator call; see the module docstring. Attributes: ``spec``,
    ``backend``, ``repeatable`` (True when runs reuse one repeatable executor),
    ``fallback_reason`` (why not, else None), ``closed``."""

    def __init__(self, spec: OpSpec, args: tuple, kwargs: dict):
        self._closed = True  # until fully made: __del__ then has nothing to do
        self.spec = spec
        self.backend = get_backend()
        a = spec.bind(args, kwargs)
        for name, value in list(a.items()) + [(label, o) for label, o in zip(spec.out_labels, a.outputs)]:
            if isinstance(value, TensorArg) and isinstance(value.value, DeviceArray):
                check_same_place(value.value, self.backend, name)
        self._bound = b = CheckedCall(spec, a)
        self._cache = checked_calls.cache_for(spec)
        kinds = self._cache.kinds
        # What every run must match: tensors' (shape, dtype), attributes' key parts.
        self._planned = [(a[p.name].shape, a[p.name].dtype) if kind == TENSOR else _attr_part(kind, a[p.name])
                         for p, kind in zip(spec.params, kinds)]
        self._tensors = [a[spec.params[i].name].value for i in b.tensor_params]
        self._outs = [o.value if o.given else None for o in a.outputs]
        self._lock = threading.Lock()
        self._ok_keys: set = set()
        self._all_required = all(b.required)
        self.repeatable = False
        self.fallback_reason: Optional[str] = None
        self._device: Optional[runtime.Device] = None
        self._res: Optional[_Resources] = None
        self._fixed: Optional[tuple] = None  # p() on planned DeviceArrays only: see _rerun_fixed
        self._plain_outputs = not any(b.zero_fill) and all(b.required)  # see _launch_devices
        self._last_launch = -1
        if self.backend == "numpy":
            self.fallback_reason = "numpy backend: each run calls the NumPy reference"
        else:
            with runtime.gated:
                self._prepare()
        self._closed = False
        _live.add(self)

    # ---- the npu side ---------------------------------------------------------------------

    def _prepare(self) -> None:
        b, spec = self._bound, self.spec
        device = self._device = runtime.current_device()
        stream = device.stream
        f = functions()
        cann = f.cann
        phase1, _ = f.operator(spec)
        ntensors = len(b.tensor_params)
        shapes = [(self._planned[i][0], self._planned[i][1]) for i in b.tensor_params] + list(b.outputs)
        self._slot_shapes = shapes
        self._slot_nbytes = [int(np.prod(s, dtype=np.int64)) * dt.itemsize for s, dt in shapes]
        self._owned: list[Optional[runtime.DeviceBuffer]] = [None] * len(shapes)
        self._owned_epoch = [-1] * len(shapes)
        addrs = []
        for slot, v in enumerate(self._tensors + self._outs):
            if type(v) is DeviceArray:
                addrs.append(v._buffer.ptr)
            else:
                buf = self._owned[slot] = device.allocator.alloc(self._slot_nbytes[slot])
                addrs.append(buf.ptr)
        res = _Resources(f)
        fmts = list(b.formats) + list(b.out_formats)
        try:
            with stream.lock:
                handles = []
                for (shape, dtype), fmt, addr in zip(shapes, fmts, addrs):
                    dims, n, strides = contiguous_desc(tuple(shape))
                    h = f.create(dims, n, ACL_DTYPES[dtype], strides, 0, fmt, dims, n, addr)
                    if not h:
                        raise AclnnError(561103, "aclCreateTensor", f"returned NULL for shape {shape}",
                                         recent=runtime.recent_error_message(cann))
                    res.tensors.append(h)
                    handles.append(h)
                c_args = list(b.template)
                for i, h in zip(b.tensor_params, handles):
                    c_args[i] = h
                for i in b.int_params:
                    v = c_args[i]
                    if v is not None:
                        h = cann.function("aclCreateIntArray")((ctypes.c_int64 * len(v))(*v), len(v))
                        if not h:
                            raise AclnnError(561103, "aclCreateIntArray", f"returned NULL for {v}",
                                             recent=runtime.recent_error_message(cann))
                        res.int_arrays.append(h)
                        c_args[i] = h
                c_args += handles[ntensors:]
                ws_size, executor = ctypes.c_uint64(0), ctypes.c_void_p()
                runtime.check(cann, phase1(*c_args, ctypes.byref(ws_size), ctypes.byref(executor)), spec.phase1_name)
                res.executor = executor.value
                status = cann.function("aclSetAclOpExecutorRepeatable")(executor)
        except BaseException:
            res.release()
            raise
        if status:
            error = AclnnError(status, "aclSetAclOpExecutorRepeatable", recent=runtime.recent_error_message(cann))
            res.release()  # never launched: still ours to destroy
            self._owned = [None] * len(shapes)
            self.fallback_reason = ("aclSetAclOpExecutorRepeatable failed, so each run is an ordinary call: "
                                    + str(error).splitlines()[0] + (f" ({error.recent})" if error.recent else ""))
            return
        self.repeatable = True
        self._res = res
        self._handles = handles
        self._bound_addr = addrs
        self._ws_size = ws_size.value
        self._phase2 = f.operator(spec)[1]
        self._ninputs = ntensors
        arrays = self._tensors + self._outs
        if all(type(v) is DeviceArray for v in arrays) and not any(b.zero_fill) and all(b.required) \
                and not any(o._buffer is t._buffer for o in self._outs for t in self._tensors):
            outs = list(self._outs)
            self._fixed = (list(self._tensors), outs, [o._buffer for o in outs], device)
            self._fixed_keep = tuple(arrays)
            self._fixed_addr = list(addrs)
        self._out_meta = [(ntensors + j, tuple(shape), dtype, req, fill) for j, ((shape, dtype), req, fill)
                          in enumerate(zip(b.outputs, b.required, b.zero_fill))]
        self._set_in = cann.function("aclSetInputTensorAddr")
        self._set_out = cann.function("aclSetOutputTensorAddr")
        self._memcpy = cann.function("aclrtMemcpy")

    def _rerun_fixed(self) -> Any:
        """p() when every planned tensor and output is a DeviceArray (no aliasing, no
        zero-fill): no upload, no allocation, no address to rebind, results in place. None
        when anything is unusual (a freed array, discarded work, another device): then the
        general path runs and raises what it should."""
        inputs, outputs, written, device = self._fixed
        for d in inputs:
            buf = d._buffer
            if not buf.ptr or buf.error is not None or d._device is not device:
                return None
        for d in outputs:
            if not d._buffer.ptr or d._device is not device:
                return None
        stream = device._stream
        if stream is None or runtime._thread_state.__dict__.get("device") is not device:
            return None
        with stream.lock:
            if self._bound_addr != self._fixed_addr:  # a run with other arrays rebound them
                return None
            workspace = stream.workspace(self._ws_size)
            status = self._phase2(workspace, self._ws_size, self._res.executor, stream.handle)
            stream.launched(self._fixed_keep, written if status == 0 else (), self.spec.aclnn)
            self._last_launch = stream.syncs
            if status:
                runtime.check(device.cann, status, self.spec.aclnn)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _launch_devices(self, tensors: list, outs: list, device: runtime.Device, stream: runtime.Stream) -> Any:
        """A run whose tensors and outputs are all DeviceArrays (already checked in place):
        rebind what moved, launch, results in place. An out= that is also an input takes
        the general path (a temporary and a copy)."""
        in_bufs = [t._buffer for t in tensors]
        written = [o._buffer for o in outs]
        for buf in written:
            if buf in in_bufs:
                return self._launch_general(tensors, outs, device, stream)
        arrays = tensors + outs
        addrs = [d._buffer.ptr for d in arrays]
        with stream.lock:
            bound = self._bound_addr
            if addrs != bound:
                self._rebind(addrs, device)
            workspace = stream.workspace(self._ws_size)
            status = self._phase2(workspace, self._ws_size, self._res.executor, stream.handle)
            stream.launched(arrays, written if status == 0 else (), self.spec.aclnn)
            self._last_launch = stream.syncs
            if status:
                runtime.check(device.cann, status, self.spec.aclnn)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _rebind(self, addrs: list, device: runtime.Device) -> None:
        """aclSetInputTensorAddr / aclSetOutputTensorAddr for the slots whose address changed.
        Call with the stream's lock held."""
        bound, handles, ex, ninputs = self._bound_addr, self._handles, self._res.executor, self._ninputs
        for slot, addr in enumerate(addrs):
            if addr != bound[slot]:
                if slot < ninputs:
                    status = self._set_in(ex, slot, handles[slot], addr)
                    api = "aclSetInputTensorAddr"
                else:
                    status = self._set_out(ex, slot - ninputs, handles[slot], addr)
                    api = "aclSetOutputTensorAddr"
                if status:
                    runtime.check(device.cann, status, api)
                bound[slot] = addr

    def _owned_buffer(self, slot: int, stream: runtime.Stream) -> runtime.DeviceBuffer:
        """The plan's buffer for a slot, replaced when a queued launch may still use it."""
        buf = self._owned[slot]
        if buf is None or self._owned_epoch[slot] >= stream.syncs:
            buf = self._owned[slot] = self._device.allocator.alloc(self._slot_nbytes[slot])
            self._owned_epoch[slot] = -1
        return buf

    def _launch(self, tensors: list, outs: list) -> Any:
        device = self._device
        device.activate()
        stream = device.stream
        if self._plain_outputs:
            for v in outs:
                if type(v) is not DeviceArray:
                    break
            else:
                for v in tensors:
                    if type(v) is not DeviceArray:
                        break
                else:
                    return self._launch_devices(tensors, outs, device, stream)
        return self._launch_general(tensors, outs, device, stream)

    def _launch_general(self, tensors: list, outs: list, device: runtime.Device, stream: runtime.Stream) -> Any:
        b = self._bound
        addrs = []
        in_use: list[Any] = []
        owned_used = []
        resident = False
        for slot, t in enumerate(tensors):
            if type(t) is DeviceArray:
                addrs.append(t._buffer.ptr)
                in_use.append(t)
                resident = True
            else:
                buf = self._owned_buffer(slot, stream)
                host = t if t.flags.c_contiguous else np.ascontiguousarray(t)
                n = self._slot_nbytes[slot]
                if n:
                    runtime.check(device.cann, self._memcpy(buf.ptr, buf.nbytes, host.ctypes.data, n, _H2D),
                                  "aclrtMemcpy")
                addrs.append(buf.ptr)
                in_use.append(buf)
                owned_used.append(slot)
        any_out = False
        for o in outs:
            if type(o) is DeviceArray:
                resident = any_out = True
        input_buffers = [t._buffer for t in tensors if type(t) is DeviceArray] if any_out else ()
        outputs, copies, written = [], [], []
        for (slot, shape, dtype, req, fill), o in zip(self._out_meta, outs):
            given = type(o) is DeviceArray
            aliased = given and o._buffer in input_buffers
            if given and not aliased:
                arr = o
            elif (given or (resident and o is None)) and req:  # a result of its own (or a temporary)
                arr = DeviceArray._wrap(shape, dtype, device.allocator.alloc(self._slot_nbytes[slot]), device)
            else:  # downloaded (NumPy result or out=), or scratch: the plan's own buffer
                arr = DeviceArray._wrap(shape, dtype, self._owned_buffer(slot, stream), device)
                owned_used.append(slot)
            if aliased:
                copies.append((o, arr))
            if fill:
                device.zero(arr._buffer, self._slot_nbytes[slot], wait=given and not aliased)
            addrs.append(arr._buffer.ptr)
            outputs.append(arr)
            in_use.append(arr)
            written.append(arr._buffer)
        with stream.lock:
            ex = self._res.executor
            if addrs != self._bound_addr:
                self._rebind(addrs, device)
            workspace = stream.workspace(self._ws_size)
            status = self._phase2(workspace, self._ws_size, ex, stream.handle)
            stream.launched(in_use, written if status == 0 else (), self.spec.aclnn)
            epoch = self._last_launch = stream.syncs
            for slot in owned_used:
                self._owned_epoch[slot] = epoch
            if status:
                runtime.check(device.cann, status, self.spec.aclnn)
            for target, temp in copies:
                device.copy_async(target._buffer, temp._buffer, temp.nbytes)
                stream.launched((target,), [target._buffer], "aclrtMemcpyAsync")
        if self._all_required and all(a is o for a, o in zip(outputs, outs)):  # given DeviceArrays, in place
            return outs[0] if len(outs) == 1 else tuple(outs)
        results = []
        for o, arr, req in zip(outs, outputs, b.required):
            if not req:
                results.append(None)
            elif type(o) is DeviceArray:
                results.append(o)
            elif o is not None:  # a NumPy out=
                if o.flags.c_contiguous:
                    device.download(arr._buffer, 0, o.ctypes.data, o.nbytes)
                else:
                    np.copyto(o, arr._download())
                results.append(o)
            elif resident:
                results.append(arr)
            else:
                host = np.empty(arr.shape, arr.dtype)
                device.download(arr._buffer, 0, host.ctypes.data, host.nbytes)
                results.append(host)
        return results[0] if len(results) == 1 else tuple(results)

    # ---- runs -----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the planned operator: on the planned arrays with no arguments, else on fn's
        own arguments, which must match the planned shapes, dtypes and attribute values."""
        if self._device is None:
            return self._run(args, kwargs)
        with runtime.gated:
            return self._run(args, kwargs)

    def _run(self, args: tuple, kwargs: dict) -> Any:
        with self._lock:
            if self._closed:
                raise ValueError(f"this plan of {self.spec.name} is closed")
            if not args and not kwargs and self._fixed is not None:
                result = self._rerun_fixed()
                if result is not None:
                    return result
            if args or kwargs:
                tensors, outs = self._match(args, kwargs)
            else:
                tensors, outs = self._tensors, self._outs
            device = self._device
            check_places(self._bound, tensors, outs, self.backend, device)
            if self.repeatable:
                return self._launch(tensors, outs)
            if device is None:
                return run_bound(self._bound, tensors, outs, self.backend, device)
            device.activate()
            resident = any(type(t) is DeviceArray for t in tensors) or any(type(o) is DeviceArray for o in outs)
            return npu.launch(self._bound, tensors, outs, device, resident)

    def _mismatch(self, name: str, planned: str, got: str) -> PlanMismatchError:
        return PlanMismatchError(f"{name}: this plan of {self.spec.name} was made for {planned}, got {got}; "
                                 "make a new plan (ascend_aclnn.plan) for other shapes, dtypes or attributes")

    def _match(self, args: tuple, kwargs: dict) -> tuple[list, list]:
        spec, b, cache = self.spec, self._bound, self._cache
        keyed = cache.key(args, kwargs)
        if keyed is not None and keyed[0] in self._ok_keys:  # matched before: nothing else can differ
            outs = keyed[2]
            if not self._all_required:
                outs = [o if req else None for o, req in zip(outs, b.required)]
            return keyed[1], outs
        if keyed is None:  # not keyable: the full checks (the op's own errors), then compare
            a = spec.bind(args, kwargs)
            parts = [(a[p.name].shape, a[p.name].dtype) if kind == TENSOR else _attr_part(kind, a[p.name])
                     for p, kind in zip(spec.params, cache.kinds)]
            tensors = [a[spec.params[i].name].value for i in b.tensor_params]
            outs = [o.value if o.given else None for o in a.outputs]
        else:
            parts, tensors, outs = list(keyed[0][:len(cache.kinds)]), keyed[1], keyed[2]
            outs = [o if req else None for o, req in zip(outs, b.required)]  # a scratch output: untouched
        for p, kind, part, planned in zip(spec.params, cache.kinds, parts, self._planned):
            if kind == TENSOR:
                if part[:2] != planned:
                    raise self._mismatch(p.name, f"shape {planned[0]} and dtype {dtype_name(planned[1])}",
                                         f"shape {part[0]} and dtype {dtype_name(part[1])}")
            elif part != planned:
                raise self._mismatch(p.name, f"{p.name} = {_show(planned)}", _show(part))
        if keyed is not None:
            for i, t in zip(b.tensor_params, tensors):
                p = spec.params[i]
                if p.contiguous and type(t) is np.ndarray and not t.flags.c_contiguous:
                    spec.bind(args, kwargs)  # raises the operator's own error for it
            given = []
            for label, o, (shape, dtype) in zip(spec.out_labels, outs, b.outputs):
                if o is None:
                    continue
                if (o.shape, o.dtype) != (shape, dtype):
                    raise self._mismatch(label, f"an output of shape {shape} and dtype {dtype_name(dtype)}",
                                         describe(o))
                if type(o) is np.ndarray and not o.flags.writeable:
                    spec.bind(args, kwargs)  # the ordinary error for a read-only out=
                given.append((o, label))
            for i, (first, first_label) in enumerate(given):
                for second, second_label in given[i + 1:]:
                    if may_overlap(first, second):
                        spec.bind(args, kwargs)  # the ordinary error for outputs that overlap
            if len(given) < 2:  # the key decides everything checked above
                if len(self._ok_keys) >= 16:
                    self._ok_keys.clear()
                self._ok_keys.add(keyed[0])
        return list(tensors), list(outs)

    # ---- closing --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Destroy the executor and the plan's handles, and let go of its arrays. Work
        already queued still runs: what it uses is released by the sync that runs it.
        Closing twice is fine; running a closed plan raises ValueError."""
        if self._device is None or self._closed:
            with self._lock:
                self._release()
            return
        with runtime.gated, self._lock:
            self._release()

    def _release(self) -> None:
        if self._closed:
            return
        self._closed = True
        res, self._res = self._res, None
        self._tensors = self._outs = []
        self._owned = []
        self._fixed = self._fixed_keep = None
        if res is None:
            return
        device = self._device
        if device is None or device.closed:
            res.executor, res.tensors, res.int_arrays = None, [], []  # torn down: nothing left to free
            return
        stream = device._stream
        if stream is not None and stream.syncs <= self._last_launch:
            stream.keep_alive(res)  # a queued launch may still use the executor
        else:
            res.release()

    def __enter__(self) -> "Plan":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self):
        try:
            if not getattr(self, "_closed", True):
                self._release()
        except BaseException:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("repeatable executor" if self.repeatable
                                               else f"ordinary calls: {self.fallback_reason}")
        return f"<Plan {self.spec.name} on {self.backend}, {state}>"


def _show(v: Any) -> str:
    if isinstance(v, tuple) and len(v) == 2 and v[0] == 0.0 and isinstance(v[1], float):
        return repr(0.0 if v[1] > 0 else -0.0)
    if isinstance(v, tuple):
        return repr(list(v))
    return repr(v)


def plan(fn: Any, *args: Any, **kwargs: Any) -> Plan:
    """Prepare ``fn(*args, **kwargs)`` once to run it many times; see ascend_aclnn.plan's
    module docstring. ``fn`` is an operator function (or its name, or its OpSpec). The
    arguments are checked now, with the operator's own errors."""
    return Plan(_spec_of(fn), args, kwargs)


def _close_all() -> None:
    """Runtime teardown: close every plan (ungated: exit teardown runs with the gate closed)."""
    for p in list(_live):
        try:
            with p._lock:
                p._release()
        except Exception:
            pass


runtime.teardown_hooks.append(_close_all)
