"""Layer 4: the operator descriptions. REGISTRY lists every operator the package exposes."""
from __future__ import annotations

from .pad import REPLICATION_PAD2D, REPLICATION_PAD2D_BACKWARD
from .spec import OpSpec
from .upsample import UPSAMPLE_NEAREST_EXACT1D, UPSAMPLE_NEAREST_EXACT1D_BACKWARD

REGISTRY: tuple[OpSpec, ...] = (
    UPSAMPLE_NEAREST_EXACT1D_BACKWARD,
    UPSAMPLE_NEAREST_EXACT1D,
    REPLICATION_PAD2D_BACKWARD,
    REPLICATION_PAD2D,
)
SPECS: dict[str, OpSpec] = {spec.name: spec for spec in REGISTRY}
