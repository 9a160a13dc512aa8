"""Deterministic mode: CANN's ACL_OPT_DETERMINISTIC option.

Some aclnn backward kernels accumulate with atomic adds by default, so their float
summation order, and with it the last bits of the result, can change from run to run.
``set_deterministic(True)`` sets the option both ways CANN reads it (libascendcl.so,
CANN 8.1.RC1 acl/acl_rt.h): process-wide with ``aclrtSetSysParamOpt`` (what current
CANN reads at each launch) and in the context of every device this process has activated
with ``aclrtCtxSetSysParamOpt`` (what older CANN, and the generated operators until
9.1, read), through a runtime hook also in devices activated later. Both are applied
before the first launch when the mode is set before the first call.

CANN before 9.0 reads the option once: per operator, at its first use, and for operators
with a generated API (a description's ``generated_api``) once per process. There a switch made after an
operator's first use may not reach it; the binding warns once when that happens. The
NumPy backend is always deterministic, so there the setting is only remembered (and
applied if the npu backend starts later).

Which of our operators are non-deterministic on the NPU by default (Atlas A2/A3):
``max_pool2d_with_mask_backward`` (atomic scatter-adds) and ``group_norm_swish_grad`` when
N > 2 (dgamma/dbeta accumulated across N). ``upsample_nearest_exact1d_backward`` is
deterministic by default according to the current ops-cv documentation (it said the
opposite until April 2026). The others are deterministic.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading
import warnings
from typing import Iterator, Optional

from .backends.npu import launch, runtime
from .cann import version
from .cann.constants import ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, AclSysParamOpt
from .ops import REGISTRY

__all__ = ["set_deterministic", "get_deterministic", "deterministic"]

_OPT = int(AclSysParamOpt.ACL_OPT_DETERMINISTIC)
_enabled: Optional[bool] = None  # None: never set, CANN's default (off) applies
_warned = False
_lock = threading.RLock()


def _apply_context(device: runtime.Device) -> None:
    """Set the option in device's context; the device's context must be current."""
    if _enabled is None:
        return
    fn = device.cann.function("aclrtCtxSetSysParamOpt")
    runtime.check(device.cann, fn(_OPT, int(_enabled)), "aclrtCtxSetSysParamOpt")


def _apply_process(rt: runtime.Runtime) -> None:
    """Set the process-level option (no device or context needed)."""
    if _enabled is None:
        return
    fn = rt.cann.function("aclrtSetSysParamOpt")
    runtime.check(rt.cann, fn(_OPT, int(_enabled)), "aclrtSetSysParamOpt")


runtime.context_hooks.append(_apply_context)
runtime.start_hooks.append(_apply_process)


def _warn_if_too_late(rt: runtime.Runtime) -> None:
    """Once: a switch after operators ran, on a CANN that read the option at their first use."""
    global _warned
    used = launch.used_operators()
    if _warned or not used or version.at_least(rt.release, version.DETERMINISM_READ_AT_EACH_LAUNCH) is not False:
        return
    _warned = True
    generated = [s.name for s in REGISTRY if s.generated_api]
    once = f" ({_and(generated)}, whose APIs are generated: once per process)" if generated else ""
    warnings.warn(f"set_deterministic: CANN {rt.release} reads the deterministic option once per operator, at its "
                  f"first use{once}, so operators already used in this "
                  f"process ({', '.join(sorted(used)[:4])}{', ...' if len(used) > 4 else ''}) may keep their old mode. "
                  "Set the mode before the first call.", RuntimeWarning, stacklevel=3)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def set_deterministic(enabled: bool) -> None:
    """Switch CANN's deterministic mode on (True) or off (False): process-wide and in every
    device's context, now and for devices activated later.

    Calls aclrtSetSysParamOpt and aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0 or 1).
    Set it before the first call: CANN before 9.0 reads it once per operator, at its first
    use (a RuntimeWarning says so when a switch comes later there). On Atlas A2/A3,
    max_pool2d_with_mask_backward and group_norm_swish_grad (N > 2) are non-deterministic
    by default; every other operator is deterministic either way, and the numpy backend
    always is. Raises AclnnError if CANN refuses the option."""
    global _enabled
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled: expected a bool, got {type(enabled).__name__} {enabled!r}")
    with _lock:
        changed = _enabled != enabled
        _enabled = enabled
        rt = runtime.runtime_if_started()
        if rt is None:
            return
        with runtime.gated:
            if changed:
                _warn_if_too_late(rt)
            _apply_process(rt)
            active = [dev for dev in list(rt.devices.values()) if dev.set_device_calls > 0]
            previous = runtime.active_device()  # activating each device moves this thread's context
            try:
                for dev in active:
                    dev.activate()
                    _apply_context(dev)
            finally:
                if previous is not None and not previous.closed:
                    previous.activate()


def get_deterministic() -> bool:
    """Whether deterministic mode was switched on with set_deterministic / deterministic."""
    return bool(_enabled)


@contextlib.contextmanager
def deterministic(enabled: bool = True) -> Iterator[None]:
    """``with deterministic():`` runs the block in deterministic mode and restores the
    previous mode after it. Process-wide: not meant for blocks running in parallel threads."""
    global _enabled
    with _lock:
        before = _enabled
    set_deterministic(enabled)
    try:
        yield
    finally:
        set_deterministic(bool(before))
        if before is None:
            _enabled = None  # back to "never set": later devices keep CANN's default


def reset() -> None:
    """Forget the setting (as if never set; tests). CANN's own values are left as they are."""
    global _enabled, _warned
    with _lock:
        _enabled, _warned = None, False


def context_setting(device: runtime.Device) -> Optional[int]:
    """The ACL_OPT_DETERMINISTIC value recorded in device's context, None if never set
    (for diagnostics and tests; makes device's context current on this thread)."""
    device.activate()
    value = ctypes.c_int64()
    status = device.cann.function("aclrtCtxGetSysParamOpt")(_OPT, ctypes.byref(value))
    if status == ACL_ERROR_RT_SYSPARAMOPT_NOT_SET:
        return None
    runtime.check(device.cann, status, "aclrtCtxGetSysParamOpt")
    return value.value


def process_setting(rt: runtime.Runtime) -> int:
    """The process-level ACL_OPT_DETERMINISTIC value (diagnostics and tests)."""
    value = ctypes.c_int64()
    runtime.check(rt.cann, rt.cann.function("aclrtGetSysParamOpt")(_OPT, ctypes.byref(value)),
                  "aclrtGetSysParamOpt")
    return value.value
