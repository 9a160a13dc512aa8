"""The numpy backend: runs an operator's fast kernel, then places results as the npu
backend would.

Each operator's description names its plain reference function (ascend_aclnn/reference/),
the golden model. The modules here hold faster kernels of the same arithmetic, one module
per family, each function named as the reference function it replaces; tests check that
every one gives the reference's results bit for bit. An operator whose reference has no
fast kernel here runs its reference: a new operator needs none.
"""
from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.util
from types import ModuleType
from typing import Any, Callable, Iterator

import numpy as np

from ...cann.constants import ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_MEMORY_ALLOCATION
from ...errors import AclnnError
from ...ops.spec import Args, OpSpec, TensorArg
from ... import reference as _reference
from ...reference._faults import KernelFault
from ...tensors import DeviceArray, dtype_name
from ...ops import FAMILIES


def _kernel_table(modules: tuple[ModuleType, ...]) -> dict[str, Callable[..., Any]]:
    """reference function name -> fast kernel: the public functions the modules define."""
    return {name: fn for m in modules for name, fn in vars(m).items()
            if callable(fn) and not name.startswith("_") and getattr(fn, "__module__", None) == m.__name__}


def _kernel_modules() -> tuple[ModuleType, ...]:
    """Each family's fast-kernel module, where it has one: its namesake in this package, found
    by the family's name (so a new one needs no list here)."""
    names = [f.__name__.rsplit(".", 1)[1] for f in FAMILIES]
    return tuple(importlib.import_module(f"{__name__}.{n}") for n in names
                 if importlib.util.find_spec(f"{__name__}.{n}") is not None)


KERNEL_MODULES = _kernel_modules()
FAST_KERNELS = _kernel_table(KERNEL_MODULES)
# Keyword arguments the backend decides for a package kernel, beyond the operator's own
# (e.g. the CANN release's GroupNormSwishGrad formula): each module's DECIDED, by name, a
# function of the call's converted arguments.
DECIDED = {name: fn for m in KERNEL_MODULES for name, fn in
           getattr(m, "DECIDED", {}).items()}

_plain: contextvars.ContextVar[bool] = contextvars.ContextVar("ascend_aclnn_plain_reference", default=False)


@contextlib.contextmanager
def plain_reference() -> Iterator[None]:
    """Run the plain reference functions instead of the fast kernels in this block
    (context-local; for checking one against the other, or a suspected fast-path bug)."""
    token = _plain.set(True)
    try:
        yield
    finally:
        _plain.reset(token)


def kernel(spec: OpSpec) -> Callable[..., Any]:
    """What runs ``spec`` on this backend: its fast kernel, or else its reference function.
    Only the package's own reference functions have fast kernels (a description with a
    reference of its own, e.g. in a test, runs that)."""
    ref = spec.reference
    if ref is None:
        raise NotImplementedError(f"{spec.aclnn} has no NumPy form")
    if _plain.get() or not getattr(ref, "__module__", "").startswith(_reference.__name__ + "."):
        return ref
    return FAST_KERNELS.get(ref.__name__, ref)


def _host(value: Any) -> Any:
    if isinstance(value, TensorArg):
        return value.value._host if isinstance(value.value, DeviceArray) else value.value
    return value


def _decided(spec: OpSpec, fn: Callable[..., Any], a: Args) -> dict[str, Any]:
    """DECIDED's keyword arguments for fn, when fn is the package's fast or plain function."""
    name = getattr(spec.reference, "__name__", "")
    decide = DECIDED.get(name)
    if decide is None or fn not in (FAST_KERNELS.get(name), getattr(_reference, name, None)):
        return {}
    decided: dict[str, Any] = decide(a)
    return decided


def _check_contract(spec: OpSpec, fn: Callable[..., Any], a: Args, results: tuple[Any, ...],
                    required: list[bool]) -> None:
    """The reference contract (ascend_aclnn/reference/__init__.py), checked on what fn
    returned: ReferenceContractError naming the operator and the first broken rule."""
    def broken(detail: str) -> _reference.ReferenceContractError:
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
        return _reference.ReferenceContractError(
            f"{spec.name} ({spec.aclnn}): its NumPy function {name} broke the reference contract "
            f"(ascend_aclnn/reference/__init__.py): {detail}")
    if len(results) != len(spec.outputs):
        raise broken(f"expected {len(spec.outputs)} result(s), got {len(results)}")
    inputs = [(name, _host(t)) for name, t in a.named_tensor_args() if t.given and t.value is not None
              and all(t is not o for o in a.outputs)]
    seen: list[tuple[str, Any]] = []
    for i, (o, out, result, req) in enumerate(zip(spec.outputs, a.outputs, results, required)):
        label = f"output {i} ({o.name})"
        if not req:
            continue
        if type(result) is not np.ndarray:
            raise broken(f"{label}: expected a NumPy array, got {type(result).__name__}")
        if result.shape != out.shape:
            raise broken(f"{label}: expected shape {out.shape}, got {result.shape}")
        if not out.given and result.dtype != out.dtype:  # an out= of another dtype: the backend casts
            raise broken(f"{label}: expected dtype {dtype_name(out.dtype)}, got {dtype_name(result.dtype)}")
        if not result.flags.c_contiguous:
            raise broken(f"{label}: expected a C-contiguous array, got strides {result.strides}")
        for other, array in inputs + seen:
            if result.size and np.may_share_memory(result, array):
                raise broken(f"{label}: expected memory of its own, got an array sharing memory with {other}")
        seen.append((label, result))


def run(spec: OpSpec, a: Args) -> Any:
    fn = kernel(spec)
    try:
        results = fn(*(_host(a[p.name]) for p in spec.params), **_decided(spec, fn, a))
    except MemoryError as exc:  # the host's out-of-memory, as the npu backend reports the device's
        raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, spec.aclnn,
                         f"the numpy backend could not allocate host memory for this call ({exc})") from None
    except KernelFault as fault:
        # What the NPU reports for such input: the kernel faults, and the error surfaces
        # at the stream's synchronisation (for a device-resident result, when it is read).
        raise AclnnError(ACL_ERROR_RT_AICORE_EXCEPTION, "aclrtSynchronizeStream",
                         f"{spec.aclnn} would fault on the device: {fault}") from None
    if not isinstance(results, tuple):
        results = (results,)
    required_each = spec.required(a)
    _check_contract(spec, fn, a, results, required_each)
    delivered: list[Any] = []
    for out, result, required in zip(a.outputs, results, required_each):
        if not required:
            delivered.append(None)
            continue
        with np.errstate(over="ignore", invalid="ignore"):  # e.g. im2col's float32 into a float16 out=:
            result = np.asarray(result).astype(out.dtype, copy=False)  # inf past its range, as the NPU casts
        if out.value is not None:
            np.copyto(_host(out), result)
            delivered.append(out.value)
        elif a.device_resident:
            delivered.append(DeviceArray._from_host(result))  # C-contiguous by the contract (and 0-d stays 0-d)
        else:
            delivered.append(result)
    return delivered[0] if len(delivered) == 1 else tuple(delivered)
