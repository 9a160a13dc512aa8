"""Plans: one operator call, checked and prepared once, run many times.

    p = ascend_aclnn.plan(ascend_aclnn.upsample_nearest_exact1d, x, [9])
    y = p()           # runs on the arrays it was made with (their current contents)
    y = p(x2, [9])    # fn's own signature: new arrays of the same shapes and dtypes
    p.close()         # or ``with ascend_aclnn.plan(...) as p:``, or let it be collected

On the npu backend a plan holds a repeatable executor (backends/npu/executor.py): phase 1
once, then per run only the device addresses that changed are rebound before phase 2.
NumPy inputs are uploaded into device buffers the plan owns and reuses; a buffer that a
queued launch may still read is replaced rather than overwritten. When an operator cannot
be rerun that way (its description says why), or CANN refuses, the plan says so
(``repeatable`` is False, ``fallback_reason``) and each run is an ordinary call. On the
numpy backend a plan checks the arguments against the planned ones and runs the backend.

Results are placed as ordinary calls place them: DeviceArrays (not synchronised) when any
tensor argument is a DeviceArray, torch tensors for torch tensors (an ``out=`` or a written
argument comes back as the object given, in a tensor list too), NumPy arrays otherwise;
``out=`` works as usual. A plan
runs one call at a time (it has one executor) and stays on the backend and device it was
made on.
"""
from __future__ import annotations

import struct
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, TypeVar, Union, overload

import numpy as np

from .api import check_places, planned_cpu_run, run_bound
from .backends import get_backend
from .backends.npu import launch, runtime
from .backends.npu.executor import NotRepeatable, RepeatableExecutor
from .cann.constants import AclrtMemcpyKind
from .errors import PlanMismatchError
from .ops import REGISTRY, checked_calls
from .ops.checked_calls import DOUBLE, TENSOR, CheckedCall, identity, identity_of_key
from .ops.spec import OpSpec, describe
from .tensors import DeviceArray, check_same_place, dtype_name, foreign_recorded, record_foreign, results_like

if TYPE_CHECKING:  # typing.ParamSpec is Python >= 3.10; checkers know typing_extensions
    from typing_extensions import ParamSpec
    _P = ParamSpec("_P")
_R = TypeVar("_R")

_H2D = int(AclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)
_MATCHED_KEYS = 16  # argument layouts a plan remembers as matching (checked once each)
_live: "weakref.WeakSet[Plan[Any]]" = weakref.WeakSet()


def _spec_of(fn: Any) -> OpSpec:
    if isinstance(fn, OpSpec):
        return fn
    spec = getattr(fn, "spec", None)  # a raw operator (ascend_aclnn.aclnn.Xxx)
    if isinstance(spec, OpSpec):
        return spec
    name = fn if isinstance(fn, str) else getattr(fn, "__name__", None)
    spec = REGISTRY.get(name) if isinstance(name, str) else None
    if spec is None:
        raise TypeError(f"plan: expected an ascend_aclnn operator function (e.g. ascend_aclnn.im2col), its "
                        f"name or its OpSpec, got {fn!r}")
    return spec


def _returned(arrays: list[Any]) -> Any:
    """A run's result: its one array, or a tuple of several (a raw operator's written
    tensors when it has any, else the outputs)."""
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


class Plan(Generic[_R]):
    """A prepared operator call; see the module docstring. Attributes: ``spec``,
    ``backend``, ``repeatable`` (True when runs reuse one repeatable executor),
    ``fallback_reason`` (why not, else None), ``closed``."""

    def __init__(self, spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any]):
        self._closed = True  # until fully made: __del__ then has nothing to do
        self.spec: OpSpec = spec
        self.backend: str = get_backend()
        self.repeatable: bool = False
        self.fallback_reason: Optional[str] = None
        self._device: Optional[runtime.Device] = None
        self._executor: Optional[RepeatableExecutor] = None
        self._lock = threading.Lock()
        self._matched: set[tuple[Any, ...]] = set()
        self._last_launch = -1  # the stream's sync count at the plan's last launch
        self._last_stream: Optional[runtime.Stream] = None  # the stream of that launch
        token = record_foreign()  # torch tensors and DLPack producers: their results come back as they were given
        try:
            a = spec.bind(args, kwargs)
        finally:
            self._converted: list[Any] = foreign_recorded(token)
        self._call = b = CheckedCall(spec, a)
        self._cache = cache = checked_calls.cache_for(spec)
        self._planned = [identity(kind, a[p.name]) for p, kind in zip(spec.params, cache.kinds)]
        self._tensors: list[Any] = checked_calls.tensor_values(spec, b, a)  # None for a raw NULL
        self._outs: list[Any] = [o.value if o.given else None for o in a.outputs]
        # The plan's own device buffers, one per tensor slot (inputs, then outputs): NumPy
        # inputs are uploaded there, downloaded and unreturned outputs written there. Each is
        # replaced while a queued launch may still use it (its epoch: the launch's sync count).
        self._owned: list[Optional[runtime.DeviceBuffer]] = [None] * (len(self._tensors) + len(self._outs))
        self._owned_epoch = [-1] * len(self._owned)
        self._owned_stream: list[Optional[runtime.Stream]] = [None] * len(self._owned)  # of that launch
        self._slot_nbytes = [int(np.prod(s, dtype=np.int64)) * dt.itemsize
                             for s, dt in zip(b.tensor_shapes, b.tensor_dtypes)] + list(b.out_nbytes)
        self._plain = not b.any_fill and all(b.required)  # runs on DeviceArrays can skip placement
        self._written_slots = [i for i, w in enumerate(b.written) if w]  # a raw operator's outputs
        if self.backend == "numpy":
            self.fallback_reason = "numpy backend: each run calls " + _numpy_runner(spec)
        else:
            with runtime.gated:
                self._device = runtime.current_device()
                for name, value in self._arrays_named():
                    check_same_place(value, self.backend, name, self._device.index)
                self._prepare()
        if self._device is None:
            for name, value in self._arrays_named():
                check_same_place(value, self.backend, name)
        self._closed = False
        _live.add(self)

    def _arrays_named(self) -> list[tuple[str, DeviceArray]]:
        b = self._call
        named = list(zip(b.tensor_names, self._tensors)) + list(zip(b.out_labels, self._outs))
        return [(n, v) for n, v in named if isinstance(v, DeviceArray)]

    def _prepare(self) -> None:
        if self.spec.not_repeatable:
            self.fallback_reason = f"each run is an ordinary call: {self.spec.not_repeatable}"
            return
        problem = _not_rebindable(self._call, self._tensors)
        if not problem and any(isinstance(v, DeviceArray) and v._format is not None for v in self._tensors + self._outs):
            problem = "an array with a format of its own (its executor's tensors are described by shape and dtype)"
        if problem:
            self.fallback_reason = f"each run is an ordinary call: plans rebind tensors, and this call has {problem}"
            return
        device = self._device
        assert device is not None
        addrs = []
        for slot, v in enumerate(self._tensors + self._outs):
            addrs.append(v._buffer.ptr if type(v) is DeviceArray else self._owned_buffer(slot, None).ptr)
        try:
            self._executor = RepeatableExecutor(self._call, addrs, device)
        except NotRepeatable as refused:
            self._owned = [None] * len(self._owned)
            self.fallback_reason = f"aclSetAclOpExecutorRepeatable failed, so each run is an ordinary call: {refused}"
            return
        self.repeatable = True

    # ---- runs -----------------------------------------------------------------------------

    def __call__(self, /, *args: Any, **kwargs: Any) -> _R:  # positional-only: any parameter name works
        """Run the planned operator: on the planned arrays with no arguments, else on fn's
        own arguments, which must match the planned shapes, dtypes and attribute values."""
        result: _R  # the type the planned call's own overload gives (plan()'s signature)
        if self._device is None:
            result = self._run(args, kwargs)
            return result
        with runtime.gated:
            if self._executor is not None and self._plain:
                result = self._run_lean(args, kwargs)
                if result is not NotImplemented:
                    return result
            result = self._run(args, kwargs)
            return result

    def _run_lean(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A run whose tensors and outputs are all live DeviceArrays of the plan's device,
        on arguments matched before (or none): the checks as attribute reads, then rebind
        and phase 2. NotImplemented, with nothing done, for anything else (_run decides)."""
        with self._lock:
            executor = self._executor
            if executor is None:
                return NotImplemented
            if args or kwargs:
                keyed = self._cache.key(args, kwargs)
                if keyed is None or keyed[0] not in self._matched:
                    return NotImplemented
                tensors, outs = keyed[1], keyed[2]
            else:
                tensors, outs = self._tensors, self._outs
            device = self._device
            assert device is not None  # a plan with an executor is on the npu backend
            for t in tensors:
                if type(t) is not DeviceArray or t._device is not device or t._buffer.error is not None:
                    return NotImplemented
            for o in outs:
                if type(o) is not DeviceArray or o._device is not device:
                    return NotImplemented
                ob = o._buffer
                for t in tensors:
                    if t._buffer is ob:
                        return NotImplemented
            stream = device.stream_if_started
            if stream is None:
                return NotImplemented
            device.activate()
            arrays = list(tensors) + list(outs)
            addrs = [a._buffer.ptr for a in arrays]
            with stream.lock:
                if stream.closed or stream.queued >= runtime.MAX_QUEUED_LAUNCHES:
                    stream.throttle()  # refuses a stream destroyed meanwhile
                if 0 in addrs:  # freed (by another thread, too): the error names the argument
                    launch.check_live(tensors, self._call.tensor_names)
                    launch.check_live(outs, self._call.out_labels)
                written = [tensors[i] for i in self._written_slots]
                executor.run(stream, addrs, arrays, outs + written if written else outs)
                self._last_launch, self._last_stream = stream.syncs, stream
            return _returned(written or outs)

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with self._lock:
            if self._closed:
                raise ValueError(f"this plan of {self.spec.name} is closed")
            if args or kwargs:
                tensors, outs, converted = self._match(args, kwargs)
            else:
                tensors, outs, converted = self._tensors, self._outs, self._converted
            result = self._launch(tensors, outs)
        return results_like(result, converted) if converted else result

    def _launch(self, tensors: list[Any], outs: list[Any]) -> Any:
        b, device = self._call, self._device
        if device is None and b.cpu_plan is not None:
            done = planned_cpu_run(b, tensors)
            if done is not NotImplemented:
                return done
        check_places(b, tensors, outs, self.backend, device, pinned=True)
        if device is None:
            return run_bound(b, tensors, outs, self.backend, device)
        device.activate()
        if self._executor is None:
            resident = any(type(t) is DeviceArray for t in tensors) or any(type(o) is DeviceArray for o in outs)
            return launch.launch(b, tensors, outs, device, resident)
        for name, v in zip(b.tensor_names + b.out_labels, tensors + outs):
            if type(v) is DeviceArray and v._format is not None:  # the executor's handles are untagged
                raise self._mismatch(name, "an array without a format of its own", f"one in {v.format.name}")
        if self._plain and all(type(v) is DeviceArray for v in tensors) \
                and all(type(o) is DeviceArray for o in outs):
            return self._run_on_device_arrays(tensors, outs, device)
        return self._run_general(tensors, outs, device)

    def _run_on_device_arrays(self, tensors: list[Any], outs: list[Any], device: runtime.Device) -> Any:
        """Every tensor and output a DeviceArray: rebind what moved, launch, results in
        place. An out= that is also an input takes the general path (a temporary, a copy)."""
        in_bufs = [t._buffer for t in tensors]
        for o in outs:
            if o._buffer in in_bufs:
                return self._run_general(tensors, outs, device)
        arrays = tensors + outs
        stream = device.stream
        executor = self._executor
        assert executor is not None
        written = [tensors[i] for i in self._written_slots]
        with stream.lock:
            stream.throttle()
            launch.check_live(tensors, self._call.tensor_names)
            launch.check_live(outs, self._call.out_labels)
            executor.run(stream, [d._buffer.ptr for d in arrays], arrays, outs + written)
            self._last_launch, self._last_stream = stream.syncs, stream
        return _returned(written or outs)

    def _owned_buffer(self, slot: int, stream: Optional[runtime.Stream]) -> runtime.DeviceBuffer:
        """The plan's buffer for a slot, replaced when a queued launch may still use it."""
        buf = self._owned[slot]
        last = self._owned_stream[slot]  # the launch that used it ran on this stream
        if buf is None or (last is not None and self._owned_epoch[slot] >= last.syncs):
            assert self._device is not None
            buf = self._owned[slot] = self._device.allocator.alloc(self._slot_nbytes[slot])
            self._owned_epoch[slot] = -1
        return buf

    def _run_general(self, tensors: list[Any], outs: list[Any], device: runtime.Device) -> Any:
        b, executor = self._call, self._executor
        assert executor is not None
        if runtime.current_capture.get() is not None and any(
                isinstance(v, np.ndarray) for v in list(tensors) + list(outs)):
            runtime.refuse_in_capture(b.spec.aclnn, "a plan run with NumPy inputs or outputs")
        stream = device.stream
        ntensors = len(tensors)
        addrs: list[int] = []
        in_use: list[Any] = []  # DeviceArrays and the plan's own buffers, kept alive by the launch
        used_slots: list[int] = []
        for slot, t in enumerate(tensors):
            if type(t) is DeviceArray:
                addrs.append(t._buffer.ptr)
                in_use.append(t)
            else:  # a NumPy input: uploaded into the plan's buffer for this slot
                buf = self._owned_buffer(slot, stream)
                host = t if t.flags.c_contiguous else np.ascontiguousarray(t)
                if self._slot_nbytes[slot]:
                    runtime.check(device.cann, device.cann.function("aclrtMemcpy")(
                        buf.ptr, buf.nbytes, host.ctypes.data, self._slot_nbytes[slot], _H2D), "aclrtMemcpy")
                addrs.append(buf.ptr)
                in_use.append(buf)
                used_slots.append(slot)

        def scratch(j: int) -> runtime.DeviceBuffer:
            used_slots.append(ntensors + j)
            return self._owned_buffer(ntensors + j, stream)

        # A raw operator's written tensors: DeviceArrays, or the plan's buffers of NumPy ones
        # (downloaded into them afterwards).
        written: list[DeviceArray] = []
        writebacks: list[tuple[Any, DeviceArray, int]] = []
        for t, slot_use, w in zip(tensors, in_use, b.written):
            if w:
                written.append(t if type(t) is DeviceArray else DeviceArray._wrap(t.shape, t.dtype, slot_use, device))
                if type(t) is not DeviceArray:
                    writebacks.append((t, written[-1], t.ctypes.data if t.flags.c_contiguous else 0))
        outputs, copies = launch.place_outputs(b, outs, tensors, device, scratch)
        addrs += [arr._buffer.ptr for arr in outputs]
        in_use += outputs
        with stream.lock:
            stream.throttle()
            launch.check_live(tensors, b.tensor_names)
            launch.check_live(outs, b.out_labels)
            if b.any_fill:
                launch.fill(b, outs, outputs, device)
            executor.run(stream, addrs, in_use, outputs + written, copies)
            epoch = self._last_launch = stream.syncs
            self._last_stream = stream
            for slot in used_slots:
                self._owned_epoch[slot] = epoch
                self._owned_stream[slot] = stream
        if written:
            return launch.deliver_written(b, tensors, writebacks)
        resident = any(type(v) is DeviceArray for v in tensors) or any(type(o) is DeviceArray for o in outs)
        return launch.deliver(b, outs, outputs, resident)

    def _mismatch(self, name: str, planned: str, got: str) -> PlanMismatchError:
        return PlanMismatchError(f"{name}: this plan of {self.spec.name} was made for {planned}, got {got}; "
                                 "make a new plan (ascend_aclnn.plan) for other shapes, dtypes or attributes")

    def _match(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """The tensors and outputs of a run, after checking them against the plan, and the
        conversions of other libraries' arrays made for it (tensors.results_like): what
        differs from the planned layout is a PlanMismatchError naming the argument; the
        operator's own checks then run once per new layout."""
        spec, b = self.spec, self._call
        keyed = self._cache.key(args, kwargs)
        if keyed is not None:
            if keyed[0] in self._matched:  # matched before: nothing else can differ
                outs = keyed[2]
                if not all(b.required):
                    outs = [o if req else None for o, req in zip(outs, b.required)]  # a scratch output: untouched
                return list(keyed[1]), list(outs), []  # keyed: NumPy arrays and DeviceArrays only
            parts = keyed[0]
            self._compare([identity_of_key(kind, part) for kind, part in zip(self._cache.kinds, parts)], None)
            for label, o, (shape, dtype) in zip(spec.out_labels, keyed[2], b.outputs):
                if o is not None and (o.shape, o.dtype) != (shape, dtype):
                    raise self._mismatch(label, f"an output of shape {shape} and dtype {dtype_name(dtype)}",
                                         describe(o))
        token = record_foreign()
        try:
            a = spec.bind(args, kwargs)  # the operator's own checks (read-only or overlapping out=, ...)
        finally:
            converted = foreign_recorded(token)
        if keyed is None:
            self._compare([identity(kind, a[p.name]) for p, kind in zip(spec.params, self._cache.kinds)], a)
        outs = []
        for label, o, (shape, dtype), req in zip(spec.out_labels, a.outputs, b.outputs, b.required):
            if o.given and (o.shape, o.dtype) != (shape, dtype):
                raise self._mismatch(label, f"an output of shape {shape} and dtype {dtype_name(dtype)}",
                                     describe(o.value))
            outs.append(o.value if o.given and req else None)
        if keyed is not None and sum(o is not None for o in outs) < 2:  # several out=: overlap is checked per call
            if len(self._matched) >= _MATCHED_KEYS:
                self._matched.clear()
            self._matched.add(keyed[0])
        return checked_calls.tensor_values(spec, b, a), outs, converted

    def _compare(self, got: list[Any], a: Any) -> None:
        for p, kind, value, planned in zip(self.spec.params, self._cache.kinds, got, self._planned):
            if value == planned:
                continue
            if kind == TENSOR:
                raise self._mismatch(p.name, f"shape {planned[0]} and dtype {dtype_name(planned[1])}",
                                     f"shape {value[0]} and dtype {dtype_name(value[1])}")
            raise self._mismatch(p.name, f"{p.name} = {_show(kind, planned)}", _show(kind, value))

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
        executor, self._executor = self._executor, None
        self._tensors, self._outs, self._owned, self._converted = [], [], [], []
        device = self._device
        if executor is None or device is None:
            return
        stream = self._last_stream
        if stream is not None and not device.closed and not stream.closed and stream.syncs <= self._last_launch:
            stream.keep_alive(executor)  # a queued launch may still use it: released by the sync
        else:
            executor.release()

    def __enter__(self) -> "Plan[_R]":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not getattr(self, "_closed", True):
                self._release()
        except BaseException:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("repeatable executor" if self.repeatable
                                               else f"ordinary calls: {self.fallback_reason}")
        return f"<Plan {self.spec.name} on {self.backend}, {state}>"


def _numpy_runner(spec: OpSpec) -> str:
    """What the numpy backend runs for ``spec``; NotImplementedError, saying why, when it
    cannot run it: a plan that could never run is refused when it is made, not at its run."""
    if spec.reference is not None:
        return "the NumPy kernels"
    if getattr(spec, "prototype", None) is None:
        raise NotImplementedError(f"plan: {spec.aclnn} runs on the npu backend only (the numpy backend has no form "
                                  f"of it). {spec.notes}")
    from .cpu_reference import runner
    ref, refused = runner.resolved_for(spec)
    if ref is None:
        raise NotImplementedError("plan: " + runner.missing(spec.aclnn, refused))
    if ref.framework == "torch":  # its run would need PyTorch: refuse now, as a call would then
        from .cpu_reference._torch import torch_module
        try:
            torch_module(spec.aclnn)
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(f"plan: {exc}", name=exc.name) from None
    return f"its CPU reference ({ref.source}, on {'PyTorch' if ref.framework == 'torch' else 'NumPy'})"


def _not_rebindable(b: CheckedCall, tensors: list[Any]) -> str:
    """Why a call's executor cannot be rerun with rebound addresses ("" when it can): the
    address setters reach tensors, not the handles a call makes per call (a tensor list's),
    and for a raw operator each written tensor must be an output only (an in-place one, or
    a NULL optional tensor, has no index the setters are known to count the same way)."""
    if any(b.lists):
        return "a tensor list, made per call"
    if any(t is None for t in tensors):
        return "a NULL tensor (an optional one left out), which the address setters do not count"
    if any(w and r for w, r in zip(b.written, b.reads)):
        return "an argument the operator both reads and writes (in place)"
    return ""


def _show(kind: int, value: Any) -> str:
    """An attribute's identity (checked_calls.identity) as the user wrote it."""
    if kind == DOUBLE:
        return repr(struct.unpack("<d", struct.pack("<q", value))[0])
    if isinstance(value, tuple):
        return repr(list(value))
    return repr(value)


@overload
def plan(fn: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> Plan[_R]: ...


@overload
def plan(fn: Union[str, OpSpec], /, *args: Any, **kwargs: Any) -> Plan[Any]: ...


def plan(fn: Any, /, *args: Any, **kwargs: Any) -> Plan[Any]:
    """Prepare ``fn(*args, **kwargs)`` once to run it many times; see ascend_aclnn.plans'
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
