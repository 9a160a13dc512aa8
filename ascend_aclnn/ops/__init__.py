"""The operator descriptions. REGISTRY lists every operator the package exposes."""
from __future__ import annotations

from .group_norm import GROUP_NORM_SWISH, GROUP_NORM_SWISH_GRAD
from .im2col import IM2COL, IM2COL_BACKWARD
from .max_pool import MAX_POOL2D_WITH_MASK, MAX_POOL2D_WITH_MASK_BACKWARD
from .pad import REPLICATION_PAD2D, REPLICATION_PAD2D_BACKWARD
from .spec import OpSpec
from .upsample import UPSAMPLE_NEAREST_EXACT1D, UPSAMPLE_NEAREST_EXACT1D_BACKWARD

REGISTRY: tuple[OpSpec, ...] = (
    UPSAMPLE_NEAREST_EXACT1D_BACKWARD,
    UPSAMPLE_NEAREST_EXACT1D,
    REPLICATION_PAD2D_BACKWARD,
    REPLICATION_PAD2D,
    MAX_POOL2D_WITH_MASK_BACKWARD,
    MAX_POOL2D_WITH_MASK,
    IM2COL_BACKWARD,
    IM2COL,
    GROUP_NORM_SWISH_GRAD,
    GROUP_NORM_SWISH,
)
SPECS: dict[str, OpSpec] = {spec.name: spec for spec in REGISTRY}
