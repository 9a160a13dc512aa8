"""Fused optimizer steps (torch_npu's fused AdamW runs ApplyAdamWV2 once per parameter list
chunk): each updates its Ref tensors in place, as the doc's formula writes them."""
from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from ._common import _DOC, Array, Formula, _f, _invalid

__all__ = ["FORMULAS"]


def _step(op: str, step: Array) -> float:
    s = np.asarray(step).reshape(-1)
    if s.size != 1:
        raise _invalid(op, "step", f"expected one element, got {s.size}")
    return float(s[0])


def apply_adam_w_v2(varRef: Array, mRef: Array, vRef: Array, maxGradNormOptionalRef: Optional[Array], grad: Array,
                    step: Array, lr: float, beta1: float, beta2: float, weightDecay: float, eps: float,
                    amsgrad: bool, maximize: bool
                    ) -> tuple[Array, Array, Array, Optional[Array]]:
    """One AdamW step (torch.optim.AdamW's update): g = -grad when maximize;
    var *= 1 - lr * weightDecay; m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
    with amsgrad, maxGradNorm = max(maxGradNorm, v) replaces v in the denominator;
    var -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps).
    Computed in float32 (float64 for float64 parameters); returns the four Ref tensors (the
    fourth left alone unless amsgrad)."""
    wide = np.float64 if np.asarray(varRef).dtype == np.float64 else np.float32
    var, m, v = (np.asarray(t).astype(wide) for t in (varRef, mRef, vRef))
    g = np.asarray(grad).astype(wide)
    for name, t in (("mRef", m), ("vRef", v), ("grad", g)):
        if t.shape != var.shape:
            raise _invalid("ApplyAdamWV2", name, f"expected the shape of varRef {var.shape}, got {t.shape}")
    if amsgrad and maxGradNormOptionalRef is None:
        raise _invalid("ApplyAdamWV2", "maxGradNormOptionalRef", "expected a tensor when amsgrad is true, got NULL")
    t = _step("ApplyAdamWV2", step)
    if maximize:
        g = -g
    var = var * wide(1 - lr * weightDecay)
    m = wide(beta1) * m + wide(1 - beta1) * g
    v = wide(beta2) * v + wide(1 - beta2) * g * g
    bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
    mx: Optional[Array] = None
    if amsgrad:
        assert maxGradNormOptionalRef is not None
        mx = np.maximum(np.asarray(maxGradNormOptionalRef).astype(wide), v)
        denom = np.sqrt(mx) / wide(np.sqrt(bc2)) + wide(eps)
    else:
        denom = np.sqrt(v) / wide(np.sqrt(bc2)) + wide(eps)
    var = var - wide(lr / bc1) * m / denom
    return var, m, v, mx


FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnApplyAdamWV2",
       "aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *maxGradNormOptionalRef, const aclTensor *grad, "
       "const aclTensor *step, float lr, float beta1, float beta2, float weightDecay, float eps, bool amsgrad, "
       "bool maximize",
       apply_adam_w_v2, "one AdamW step in place (decoupled weight decay, bias-corrected moments, amsgrad); "
       + _DOC + "aclnnApplyAdamWV2.md"),
])
