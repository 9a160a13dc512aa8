"""The public API: the one entry point every operator function goes through
(functions.py, generated from the descriptions), and device helpers that work the same
under either backend."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from .backends.npu import runtime
from .backends import get_backend, require_npu
from .backends import numpy as numpy_backend
from .backends.npu import launch as npu
from .ops import checked_calls
from .ops.spec import OpSpec
from .cann.constants import ACLNN_ERR_PARAM_INVALID
from .errors import AclnnError
from .tensors import new_formatted_array, tag_problem, upload_formatted
from .tensors import (DeviceArray, as_host_array, check_same_place, checked_shape, foreign_recorded, new_device_array,
                      record_foreign, require_acl_dtype, results_like, upload)


# format_cast (ascend_aclnn.device_formats, above this layer: a cast to FRACTAL_NZ runs CANN's
# TransMatmulWeight through aa.aclnn) is set here when the package is imported; to_device of a
# DeviceArray with a format casts through it.
format_caster: Optional[Callable[[DeviceArray, Any, Optional[int]], DeviceArray]] = None

def call(spec: OpSpec, /, *args: Any, **kwargs: Any) -> Any:
    """Run one operator on the active backend; arguments are checked before any C call.

    A call whose shapes, dtypes, layouts and attribute values were validated before reuses
    that verdict (ops/checked_calls.py); only what can differ between equal descriptions (a
    DeviceArray's liveness, validity and device) is checked again."""
    backend = get_backend()
    if backend != "npu":
        return _call(spec, args, kwargs, backend)
    runtime.enter()
    try:
        return _call(spec, args, kwargs, backend)
    finally:
        runtime.leave()


def _call(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any], backend: str) -> Any:
    cache = checked_calls.cache_for(spec)
    keyed = cache.key(args, kwargs)
    if keyed is not None:
        key, tensors, outs = keyed
        b = cache.get(key)
        if b is not None:
            for o, g in zip(outs, b.given):
                if (o is not None) != g:  # an out= for an output not computed
                    outs = [o if g else None for o, g in zip(outs, b.given)]
                    break
            if backend == "npu":
                device = runtime.current_device()
                check_places(b, tensors, outs, backend, device)
                return npu.launch(b, tensors, outs, device)
            if b.cpu_plan is not None:
                done = planned_cpu_run(b, tensors)
                if done is not NotImplemented:
                    return done
            check_places(b, tensors, outs, backend, None)
            return run_bound(b, tensors, outs, backend, None)
    # Torch tensors and DLPack producers never have a key: they are converted (to NumPy views)
    # only here, and the result comes back in their kind (tensors.results_like).
    token = record_foreign()
    try:
        a = spec.bind(args, kwargs)
        for name, value in a.named_tensor_args() + [(label, o) for label, o in zip(spec.out_labels, a.outputs)]:
            if isinstance(value.value, DeviceArray):
                check_same_place(value.value, backend, name)
        b = checked_calls.CheckedCall(spec, a)
        if spec.outputs:
            for k, t in enumerate(checked_calls.tensor_values(spec, b, a)):
                if type(t) is DeviceArray and t._format is not None and t._format != b.formats[k]:
                    raise format_refused(b, t, k)
            for k, o in enumerate(a.outputs):
                if o.given and type(o.value) is DeviceArray and o.value._format is not None \
                        and o.value._format != b.out_formats[k]:
                    raise format_refused(b, o.value, k, output=True)
        if keyed is not None and sum(b.given) < 2:  # several out= arrays: their overlap is re-checked by bind
            cache.put(keyed[0], b)
        tensors = checked_calls.tensor_values(spec, b, a)
        outs = [o.value if o.given else None for o in a.outputs]
        result = run_bound(b, tensors, outs, backend, runtime.current_device() if backend == "npu" else None)
    finally:
        converted = foreign_recorded(token)
    return results_like(result, converted) if converted else result


def _host_data(values: list[Any]) -> bool:
    return any(isinstance(v, np.ndarray) or (isinstance(v, (list, tuple)) and _host_data(list(v))) for v in values)


def run_bound(b: checked_calls.CheckedCall, tensors: list[Any], outs: list[Any], backend: str, device: Any) -> Any:
    """Run a validated call on a backend: launched on the NPU, or the numpy backend's kernel.
    While a graph is captured (aa.graph), host arrays are refused, and on the numpy backend
    the call is recorded for replay, writing into the same arrays."""
    if backend != "npu":
        runtime.host_work()
    capture = runtime.current_capture.get()
    if capture is not None:
        if _host_data(tensors) or _host_data(outs):
            runtime.refuse_in_capture(b.spec.aclnn, "an operator call with NumPy inputs or outputs")
        if backend != "npu":
            return capture.record(b, tensors, outs, _run_host)  # recorded the way it runs eagerly
    if backend == "npu":
        return npu.launch(b, tensors, outs, device)
    return _run_host(b, tensors, outs)


def _run_host(b: checked_calls.CheckedCall, tensors: list[Any], outs: list[Any]) -> Any:
    """A validated call on the numpy backend: its NumPy kernel, or a raw operator's CPU reference."""
    if b.spec.reference is None:
        if getattr(b.spec, "prototype", None) is not None:  # a raw operator: its CPU reference
            return _cpu_reference_runner().run(b, tensors)
        raise NotImplementedError(f"{b.spec.aclnn} runs on the npu backend only (the numpy backend has no form of "
                                  f"it). {b.spec.notes}")
    return numpy_backend.run(b.spec, b.args(tensors, outs))


_runner: Any = None


def planned_cpu_run(b: checked_calls.CheckedCall, tensors: list[Any]) -> Any:
    """A raw call's CPU reference planned for its signature (cpu_reference/fast.py), run
    straight from a cached binding when nothing the layers between would check applies: no
    DeviceArray (check_places), no capture and no stream of the context (host_work), no
    registration since. NotImplemented, with nothing done, otherwise."""
    planned = b.cpu_plan
    if planned is None or runtime.current_capture.get() is not None or runtime.current_host_stream.get() is not None:
        return NotImplemented
    for t in tensors:
        if type(t) is DeviceArray:
            return NotImplemented
    runner = _cpu_reference_runner()
    if not runner.plan_is_current(planned.generation):
        return NotImplemented
    return planned.run(tensors)


def _cpu_reference_runner() -> Any:
    """cpu_reference.runner (imported on first use; an import statement per call costs a
    raw call's overhead a microsecond)."""
    global _runner
    if _runner is None:
        from .cpu_reference import runner
        _runner = runner
    return _runner


def check_places(b: checked_calls.CheckedCall, tensors: list[Any], outs: list[Any], backend: str, device: Any,
                 pinned: bool = False) -> None:
    """check_same_place for the DeviceArrays of a call with a cached binding: the common
    case in a few attribute reads, the full check (and its error) otherwise. ``pinned``:
    the call runs on ``device`` whatever the current device is (a plan's)."""
    k = 0
    for t in tensors:
        if type(t) is DeviceArray:
            if t._format is not None and b.spec.outputs and t._format != b.formats[k]:
                raise format_refused(b, t, k)
            buf = t._buffer
            if t._device is not device or (buf is None and t._host is None) \
                    or (buf is not None and (not buf.ptr or buf.error is not None)):
                check_same_place(t, backend, b.tensor_names[k], device.index if pinned and device else None)
        k += 1
    k = 0
    for o in outs:
        if type(o) is DeviceArray:
            if o._format is not None and o._format != b.out_formats[k]:
                raise format_refused(b, o, k, output=True)
            buf = o._buffer
            if o._device is not device or (buf is None and o._host is None) or (buf is not None and not buf.ptr):
                check_same_place(o, backend, b.out_labels[k], device.index if pinned and device else None)
        k += 1


def format_refused(b: checked_calls.CheckedCall, array: DeviceArray, k: int, output: bool = False) -> AclnnError:
    """A described operator given an array tagged with another format than the one it
    passes for that parameter (a private one above all): refused on both backends, as its
    op_api refuses it (its kernels read ND, NCHW or NCL tensors)."""
    from .formats import Format
    want = Format((b.out_formats if output else b.formats)[k]).name
    stored = f" (storage shape {array.storage_shape})" if array._storage is not None else ""
    return AclnnError(ACLNN_ERR_PARAM_INVALID, b.spec.phase1_name,
                      f"expected an array in {want} (or untagged), got one in {array.format.name}{stored}; convert "
                      f"it with ascend_aclnn.format_cast(x, {want!r})",
                      argument=(b.out_labels if output else b.tensor_names)[k])


def to_device(array: Any, format: Any = None, *, c0: Optional[int] = None) -> DeviceArray:
    """Copy an array onto the active backend's current device: a NumPy array or array-like,
    a CPU torch tensor (any supported dtype, bfloat16 included) or a DLPack host array.
    ``format`` (an ascend_aclnn.Format or its name): a public one (NCHW, NHWC, ...) tags the
    array as laid out so; a private one (FRACTAL_NZ, NC1HWC0, ...) stores it encoded
    (``c0``: its C0 for 4-byte dtypes). A DeviceArray is returned as it is, or
    ``format_cast`` to the format given."""
    runtime.refuse_in_capture("aclrtMemcpy", "to_device() (an upload of host data)")
    if format is not None:
        return _to_device_formatted(array, format, c0)
    backend = get_backend()
    if backend == "npu":
        runtime.enter()
        try:
            return _to_device(array, backend)
        finally:
            runtime.leave()
    return _to_device(array, backend)


def _to_device_formatted(array: Any, format: Any, c0: Optional[int]) -> DeviceArray:
    from . import formats
    fmt = formats.as_format(format, "format")
    if isinstance(array, DeviceArray):
        assert format_caster is not None  # set when the package is imported
        return format_caster(array, fmt, c0)
    try:
        host = as_host_array(array)
    except TypeError as exc:
        raise TypeError(f"array: {exc}") from None
    problem = tag_problem(fmt, host.shape)
    if problem is not None:
        raise ValueError(f"format: {problem}")
    require_acl_dtype(host.dtype)
    if fmt in formats.PRIVATE:
        formats.c0_for(host.dtype, c0)
    tag = int(fmt)
    backend = get_backend()
    if backend != "npu":
        return upload_formatted(host, backend, tag, c0)
    runtime.enter()
    try:
        return upload_formatted(host, backend, tag, c0)
    finally:
        runtime.leave()


def _to_device(array: Any, backend: str) -> DeviceArray:
    if isinstance(array, DeviceArray):
        check_same_place(array, backend, "array")
        return array
    if isinstance(array, np.ma.MaskedArray):  # np.asarray would silently drop the mask
        raise TypeError("array: a numpy.ma.MaskedArray has no device form (its mask would be dropped); "
                        "pass array.filled(value), or array.data to keep the masked-out values")
    try:
        host = as_host_array(array)  # a CPU torch tensor (bfloat16 too) or DLPack producer: no intermediate copy
    except TypeError as exc:
        raise TypeError(f"array: {exc}") from None
    return upload(host, backend)


def empty(shape: Sequence[int], dtype: Any = np.float32, format: Any = None, *,
          c0: Optional[int] = None) -> DeviceArray:
    """An uninitialised DeviceArray, e.g. to pass as out=. Raises TypeError for a dtype
    with no ACL data type, ValueError for a shape that is not non-negative integers or
    whose byte size does not fit int64. ``format``: as ``to_device``'s (a private one gets
    a block for its stored shape)."""
    dtype = require_acl_dtype(dtype)
    dims = checked_shape(shape, dtype)
    if format is not None:
        from . import formats
        fmt = formats.as_format(format, "format")
        problem = tag_problem(fmt, dims)
        if problem is not None:
            raise ValueError(f"format: {problem}")
        if fmt in formats.PRIVATE:
            checked_shape(formats.storage_shape(fmt, dims, dtype, c0), dtype)
        tag = int(fmt)
        if get_backend() != "npu":
            return new_formatted_array(dims, dtype, get_backend(), tag, c0)
        runtime.enter()
        try:
            return new_formatted_array(dims, dtype, "npu", tag, c0)
        finally:
            runtime.leave()
    backend = get_backend()
    if backend != "npu":
        return new_device_array(dims, dtype, backend)
    runtime.enter()
    try:
        return new_device_array(dims, dtype, backend)
    finally:
        runtime.leave()


def synchronize() -> None:
    """Wait for all queued NPU work (a no-op on the numpy backend)."""
    runtime.refuse_in_capture("aclrtSynchronizeDevice", "synchronize()")
    rt = runtime.runtime_if_started()
    if rt is not None:
        runtime.enter()
        try:
            rt.synchronize()
        finally:
            runtime.leave()


def empty_cache() -> None:
    """Return cached device memory and workspaces to CANN (waits for queued work first)."""
    runtime.refuse_in_capture("aclrtSynchronizeDevice", "empty_cache()")
    rt = runtime.runtime_if_started()
    if rt is not None:
        runtime.enter()
        try:
            rt.empty_cache()
        finally:
            runtime.leave()


def set_device(index: int) -> None:
    """Choose the NPU that operators and to_device use (default 0)."""
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool) or index < 0:
        raise ValueError(f"device: expected a non-negative int, got {index!r}")
    if get_backend() == "npu":
        runtime.enter()
        try:
            require_npu().device(int(index)).activate()
        finally:
            runtime.leave()
    runtime.set_current_device_index(int(index))


def get_device() -> int:
    """The NPU index that operators and to_device use (set_device's choice, default 0)."""
    return runtime.current_device_index()


def device_count() -> int:
    """Number of NPUs CANN reports, 0 when CANN cannot be loaded."""
    try:
        return runtime.get_runtime().device_count
    except Exception:
        return 0
