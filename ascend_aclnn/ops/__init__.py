"""The operator descriptions, one module per family. REGISTRY lists every operator the
package exposes: every OpSpec the family modules define, in their order, so a new
operator's description is found with no edit here."""
from __future__ import annotations

from . import group_norm, im2col, max_pool, pad, upsample
from .spec import OpSpec

FAMILIES = (upsample, pad, max_pool, im2col, group_norm)
REGISTRY: tuple[OpSpec, ...] = tuple(v for m in FAMILIES for v in vars(m).values() if isinstance(v, OpSpec))
SPECS: dict[str, OpSpec] = {spec.name: spec for spec in REGISTRY}
