"""Which backend runs an operator.

``auto`` (the default) uses the npu backend when CANN loads and reports at least one
device, and the NumPy reference otherwise. When a CANN location variable
(ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME) is set but CANN fails to load, the user meant to
use the NPU: ``auto`` still falls back, but warns once, naming the variable and why. Asking for ``npu`` explicitly never falls
back: it raises with the reason.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import warnings
from typing import Iterator

from .npu import runtime
from ..cann import loader
from ..errors import AclnnError, CannLoadError

ENV_VAR = "ASCEND_ACLNN_BACKEND"
NAMES = ("auto", "npu", "numpy")

_setting: str | None = None  # set_backend(); None means: the environment variable decides
_override: contextvars.ContextVar[str | None] = contextvars.ContextVar("ascend_aclnn_backend", default=None)
_auto_choice: str | None = None
_auto_reason: str | None = None
_auto_lock = threading.Lock()


def _validate(name: str, source: str = "backend") -> str:
    if name not in NAMES:
        raise ValueError(f"{source}: expected one of {', '.join(NAMES)}, got {name!r}")
    return name


def require_npu() -> runtime.Runtime:
    """The runtime, or an error that says why the npu backend cannot run here."""
    rt = runtime.get_runtime()
    if rt.device_count == 0:
        raise CannLoadError(f"CANN loaded from {rt.cann.lib_dir or 'LD_LIBRARY_PATH'} but "
                            "aclrtGetDeviceCount reports no NPU; check the driver (npu-smi info) "
                            "and ASCEND_RT_VISIBLE_DEVICES, or use the numpy backend")
    return rt


def npu_available() -> bool:
    """Whether the npu backend can run here: CANN loads and reports at least one device."""
    try:
        require_npu()
        return True
    except (CannLoadError, AclnnError):
        return False


def _choose_auto() -> tuple[str, str]:
    """(backend, why), decided once per process: DeviceArrays cannot move between backends."""
    try:
        rt = require_npu()
    except CannLoadError as exc:  # no CANN, or no NPU: the ordinary CPU-only case, no warning
        failure = loader.load_failure()
        named = [f"{v}={os.environ[v]}" for v in loader.ROOT_ENV_VARS if os.environ.get(v)]
        if failure is not None and named:
            # ... unless a variable says CANN should be here: a mistyped path must not make
            # a script's "NPU" results silently come from the CPU.
            why = loader.location_problem() or str(failure).splitlines()[0]
            warnings.warn(f"ascend_aclnn: {' and '.join(named)} is set but CANN failed to load ({why}); "
                          f"the auto backend uses numpy for this process. Fix the variable, or set "
                          f"{ENV_VAR}=numpy to silence this or {ENV_VAR}=npu to fail instead.",
                          RuntimeWarning, stacklevel=4)
        return "numpy", f"the npu backend is unavailable: {exc}"
    except AclnnError as exc:  # CANN loaded but failed: maybe transient, so say so once
        reason = (f"CANN loaded, but {exc.api} failed with {exc.status_name} ({exc.status}): "
                  f"{str(exc).splitlines()[0]}")
        warnings.warn(f"ascend_aclnn: the auto backend uses numpy for this process because {reason}. "
                      f"Set {ENV_VAR}=npu to fail instead, or fix the NPU and restart.", RuntimeWarning,
                      stacklevel=4)
        return "numpy", reason
    return "npu", f"CANN loaded from {rt.cann.lib_dir or 'LD_LIBRARY_PATH'} and reports {rt.device_count} NPU(s)"


def auto_backend_reason() -> tuple[str, str]:
    """What ``auto`` picks in this process and why (for diagnostics such as ``info``)."""
    global _auto_choice, _auto_reason
    if _auto_choice is None:
        with _auto_lock:
            if _auto_choice is None:
                choice, _auto_reason = _choose_auto()
                _auto_choice = choice
    return _auto_choice, _auto_reason or ""


def _auto_lock_in_child() -> None:
    """os.fork() child: a parent thread deciding ``auto`` at the fork held the lock for
    good here; the decision was not made, so the child makes its own."""
    global _auto_lock
    if _auto_lock.locked():
        _auto_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_auto_lock_in_child)


def requested() -> tuple[str, str]:
    """The backend asked for (auto, npu or numpy) and by what (use_backend(), set_backend() or the environment variable)."""
    override = _override.get()
    if override is not None:
        return override, "use_backend()"
    if _setting is not None:
        return _setting, "set_backend()"
    return os.environ.get(ENV_VAR, "auto"), f"environment variable {ENV_VAR}"


def get_backend() -> str:
    """The backend that runs operators now: "npu" or "numpy"."""
    name = _override.get()  # requested(), unrolled: this runs on every call
    if name is None:
        name = _setting if _setting is not None else os.environ.get(ENV_VAR, "auto")
    if name == "auto":
        return _auto_choice if _auto_choice is not None else auto_backend_reason()[0]
    if name == "npu":
        rt = runtime.runtime_if_started()
        if rt is None or not rt.device_count:
            require_npu()
        return name
    if name != "numpy":
        _validate(*requested())
    return name


def set_backend(name: str) -> None:
    """Choose "auto", "npu" or "numpy" for this process (overrides ASCEND_ACLNN_BACKEND)."""
    global _setting
    if _validate(name) == "npu":
        require_npu()
    _setting = name


@contextlib.contextmanager
def use_backend(name: str) -> Iterator[str]:
    """Run the enclosed block on the given backend (context-local, so thread-safe)."""
    if _validate(name) == "npu":
        require_npu()
    token = _override.set(name)
    try:
        yield get_backend()
    finally:
        _override.reset(token)
