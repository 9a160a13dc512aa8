"""Hand-written NumPy references for aclnn operators no aten op computes (or computes only
on CUDA), by family: custom.py (torch_npu's LLM operators: norms, gated activations,
quantisation, MoE, FlashAttentionScore), nn.py (batch norm family, softmax backwards,
pooling, losses...), attention.py (the attention family's layouts, sparse modes and
backward), optim.py (fused optimizers), matmul.py (grouped and quantised matmuls), sampled.py (random operators: the "sampled" tier).

Each is written from CANN's documentation of the operator and its real CANN 8.1.RC1
prototype; none is derived from torch_npu's or CANN's code. See _common.py for the calling
convention and the tiers.
"""
from __future__ import annotations

from typing import Mapping

from ._common import FORMULA_TIERS, Formula
from . import attention, custom, matmul, nn, optim, sampled

__all__ = ["Formula", "FORMULAS", "FORMULA_TIERS"]


def _merge(*tables: Mapping[str, Formula]) -> Mapping[str, Formula]:
    out: dict[str, Formula] = {}
    for t in tables:
        clash = set(out) & set(t)
        assert not clash, f"two formulas for {sorted(clash)}"
        out.update(t)
    return out


FORMULAS: Mapping[str, Formula] = _merge(custom.FORMULAS, nn.FORMULAS, attention.FORMULAS, optim.FORMULAS,
                                         matmul.FORMULAS, sampled.FORMULAS)
