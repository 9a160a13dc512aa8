"""Layer 4: the operator descriptions. REGISTRY lists every operator the package exposes."""
from __future__ import annotations

from .im2col import IM2COL, IM2COL_BACKWARD
from .spec import OpSpec
from .upsample import UPSAMPLE_NEAREST_EXACT1D, UPSAMPLE_NEAREST_EXACT1D_BACKWARD

REGISTRY: tuple[OpSpec, ...] = (
    UPSAMPLE_NEAREST_EXACT1D_BACKWARD,
    UPSAMPLE_NEAREST_EXACT1D,
    IM2COL_BACKWARD,
    IM2COL,
)
SPECS: dict[str, OpSpec] = {spec.name: spec for spec in REGISTRY}
