"""Layer 4: the operator descriptions. REGISTRY lists every operator the package exposes."""
from __future__ import annotations

from .max_pool import MAX_POOL2D_WITH_MASK, MAX_POOL2D_WITH_MASK_BACKWARD
from .spec import OpSpec
from .upsample import UPSAMPLE_NEAREST_EXACT1D, UPSAMPLE_NEAREST_EXACT1D_BACKWARD

REGISTRY: tuple[OpSpec, ...] = (
    UPSAMPLE_NEAREST_EXACT1D_BACKWARD,
    UPSAMPLE_NEAREST_EXACT1D,
    MAX_POOL2D_WITH_MASK_BACKWARD,
    MAX_POOL2D_WITH_MASK,
)
SPECS: dict[str, OpSpec] = {spec.name: spec for spec in REGISTRY}
