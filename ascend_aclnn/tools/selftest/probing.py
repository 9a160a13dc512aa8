"""What the probes share: they run in the children, on the npu, and return JSON data."""
from __future__ import annotations

import hashlib
from typing import Any, Callable

import numpy as np


def sha256(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is not None:
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def failure(exc: BaseException) -> dict[str, Any]:
    """What a failed call says: its exception, CANN status and CANN's own message."""
    text = str(exc)
    return {"error": f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}",
            "status": getattr(exc, "status", None), "recent": getattr(exc, "recent", None),
            "message": text}


def attempt(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One sub-observation: its result, or the failure, so one failing part keeps the others."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  recorded, not raised: the report must be written
        return failure(exc)


def npu() -> None:
    """Puts the binding on the npu backend (the children are started with ASCEND_ACLNN_BACKEND=npu)."""
    import ascend_aclnn as aa
    aa.set_backend("npu")


def on_backend(variant: str) -> str:
    """Puts the binding on the backend a probe with a numpy variant runs on: npu ("") or numpy."""
    import ascend_aclnn as aa
    if variant not in ("", "numpy"):
        raise ValueError(f"variant: expected '' (npu) or 'numpy', got {variant!r}")
    aa.set_backend(variant or "npu")
    return aa.get_backend()


def reference(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The same call on the numpy backend: the binding's reference."""
    import ascend_aclnn as aa
    with aa.use_backend("numpy"):
        return fn(*args, **kwargs)
