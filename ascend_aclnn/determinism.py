"""Deterministic mode: CANN's ACL_OPT_DETERMINISTIC context option.

Some aclnn backward kernels accumulate with atomic adds by default, so their float
summation order, and with it the last bits of the result, can change from run to run.
``set_deterministic(True)`` calls ``aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1)``
(libascendcl.so, CANN 8.1.RC1 acl/acl_rt.h) in the context of every device this process
has activated, and, through a runtime hook, of every device activated later. The NumPy
reference is always deterministic, so under the numpy backend the setting is only
remembered (and applied if the npu backend starts later).

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
from typing import Iterator, Optional

from .backends.npu import runtime
from .cann.constants import AclSysParamOpt

__all__ = ["set_deterministic", "get_deterministic", "deterministic"]

_enabled: Optional[bool] = None  # None: never set, CANN's default (off) applies
_lock = threading.RLock()


def _apply(device: runtime.Device) -> None:
    """Set the option in device's context; the device's context must be current."""
    if _enabled is None:
        return
    fn = device.cann.function("aclrtCtxSetSysParamOpt")
    runtime.check(device.cann, fn(int(AclSysParamOpt.ACL_OPT_DETERMINISTIC), int(_enabled)),
                  "aclrtCtxSetSysParamOpt")


runtime.context_hooks.append(_apply)


def set_deterministic(enabled: bool) -> None:
    """Switch CANN's deterministic mode on (True) or off (False) for every device, now and
    for devices activated later. Process-wide, like the device contexts it configures.

    Calls aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0 or 1) in each device's context.
    On Atlas A2/A3, max_pool2d_with_mask_backward and group_norm_swish_grad (N > 2) are
    non-deterministic by default; every other operator is deterministic either way, and
    the numpy backend always is. Raises AclnnError if CANN refuses the option."""
    global _enabled
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled: expected a bool, got {type(enabled).__name__} {enabled!r}")
    with _lock:
        _enabled = enabled
        rt = runtime.runtime_if_started()
        if rt is None:
            return
        active = [dev for dev in list(rt.devices.values()) if dev.set_device_calls > 0]
        with runtime.gated:
            previous = runtime.active_device()  # activating each device moves this thread's context
            try:
                for dev in active:
                    dev.activate()
                    _apply(dev)
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


def context_setting(device: runtime.Device) -> Optional[int]:
    """The ACL_OPT_DETERMINISTIC value recorded in device's context, None if never set
    (for diagnostics and tests; makes device's context current on this thread)."""
    device.activate()
    value = ctypes.c_int64()
    status = device.cann.function("aclrtCtxGetSysParamOpt")(
        int(AclSysParamOpt.ACL_OPT_DETERMINISTIC), ctypes.byref(value))
    if status == 107021:  # ACL_ERROR_RT_SYSPARAMOPT_NOT_SET
        return None
    runtime.check(device.cann, status, "aclrtCtxGetSysParamOpt")
    return value.value
