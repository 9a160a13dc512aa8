"""ascend_aclnn: a thin ctypes binding to Huawei Ascend CANN's aclnn operators, with a
NumPy backend when no NPU is present.

Layers, bottom up (tests/test_layout.py holds the package to them): cann/ (loading, C
prototypes, constants, the installed headers and release) -> backends/npu/runtime.py
(devices, streams, memory) -> tensors.py (dtypes, DeviceArray) -> reference/ (the golden
NumPy math, standing alone) -> ops/ (operator descriptions) -> backends/ (the npu
two-phase caller, the numpy backend's kernels) -> this surface: api.py, functions.py
(generated from the descriptions), aclnn.py (any operator from its header), plans.py ->
tools/ (``python -m ascend_aclnn`` / ``ascend-aclnn``: info, compare, gradcheck, bench).

Also: ``ascend_aclnn.testing`` (compare / assert_close under the CANN precision standard,
gradcheck), ``set_deterministic`` (determinism.py).
"""
from __future__ import annotations

import importlib as _importlib
import typing as _typing

from . import aclnn, functions
from .api import call, device_count, empty, empty_cache, get_device, set_device, synchronize, to_device
from .backends import get_backend, npu_available, set_backend, use_backend
from .determinism import deterministic, get_deterministic, set_deterministic
from .errors import (AclnnError, AclnnParamError, AclnnParamInvalidError, AclnnParamNullptrError,
                     CannLoadError, DeviceMismatchError, PlanMismatchError)
from .masks import indices_to_mask, mask_to_indices
from .functions import *  # noqa: F401,F403  every operator function
from .plans import Plan, plan
from .streams import Event, Graph, Stream, current_stream, default_stream, graph, stream
from ._version import __version__
from .ops.group_norm import SwishGradFormulaWarning
from .ops.spec import ScalarValue as Scalar
from .tensors import DeviceArray, bfloat16
from .device_formats import format_cast, format_cast_route
from .formats import Format

if _typing.TYPE_CHECKING:
    from . import testing as testing

# Submodules reachable as attributes after ``import ascend_aclnn`` only, imported on first
# use (PEP 562) so that importing the package costs nothing more.
_LAZY_SUBMODULES = ("testing",)


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")  # also binds it here: next time no hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))


__all__ = [
    "Scalar", "aclnn", "AclnnError", "AclnnParamError", "AclnnParamInvalidError", "AclnnParamNullptrError", "CannLoadError",
    "DeviceArray", "DeviceMismatchError", "Event", "Format", "format_cast", "format_cast_route", "Graph", "Plan", "Stream", "current_stream", "default_stream", "graph",
    "stream", "PlanMismatchError", "bfloat16", "call", "deterministic", "device_count", "empty",
    "empty_cache", "get_backend", "get_deterministic", "get_device", "indices_to_mask", "mask_to_indices",
    "npu_available", "plan", "set_backend", "set_deterministic", "set_device", "synchronize", "to_device",
    "use_backend", "SwishGradFormulaWarning", *functions.__all__,
]
