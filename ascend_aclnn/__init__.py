"""ascend_aclnn: a thin ctypes binding to Huawei Ascend CANN's aclnn operators, with a
NumPy reference backend when no NPU is present.

Layers, bottom up: cann/ (loading, constants, C prototypes) -> runtime (device, stream,
memory) -> tensors, handles (DeviceArray, aclTensor/aclIntArray) -> reference/ (the NumPy
math, standing alone) -> ops/ (operator descriptions) -> backends/ (npu two-phase
caller, numpy backend) -> api, operators (this surface).

Tools: ``ascend_aclnn.testing`` (compare / assert_close under the CANN precision standard,
gradcheck), ``python -m ascend_aclnn {info,compare,gradcheck}`` (cli.py, doctor.py),
``set_deterministic`` (determinism.py).
"""
from __future__ import annotations

from . import operators
from .api import call, device_count, empty, empty_cache, get_device, set_device, synchronize, to_device
from .backends import get_backend, npu_available, set_backend, use_backend
from .determinism import deterministic, get_deterministic, set_deterministic
from .errors import (AclnnError, AclnnParamError, AclnnParamInvalidError, AclnnParamNullptrError,
                     CannLoadError, DeviceMismatchError, PlanMismatchError)
from .masks import indices_to_mask, mask_to_indices
from .operators import *  # noqa: F401,F403  every operator function
from .plans import Plan, plan
from .tensors import DeviceArray, bfloat16

from ._version import __version__
__all__ = [
    "AclnnError", "AclnnParamError", "AclnnParamInvalidError", "AclnnParamNullptrError", "CannLoadError",
    "DeviceArray", "DeviceMismatchError", "Plan", "PlanMismatchError", "bfloat16", "call", "deterministic", "device_count", "empty",
    "empty_cache", "get_backend", "get_deterministic", "get_device", "indices_to_mask", "mask_to_indices",
    "npu_available", "plan", "set_backend", "set_deterministic", "set_device", "synchronize", "to_device",
    "use_backend", *operators.__all__,
]
