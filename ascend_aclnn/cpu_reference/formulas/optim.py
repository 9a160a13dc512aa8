"""Fused optimizer steps (torch_npu's fused AdamW runs ApplyAdamWV2 once per parameter list
chunk): each updates its Ref tensors in place, as the doc's formula writes them."""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from ._common import _DOC, Array, Formula, _f, _invalid

__all__ = ["FORMULAS"]


def _arr(t: Any, wide: Any) -> Array:
    out: Array = np.asarray(t).astype(wide)
    return out


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
    var, m, v, g = (_arr(t, wide) for t in (varRef, mRef, vRef, grad))
    for name, arr in (("mRef", m), ("vRef", v), ("grad", g)):
        if arr.shape != var.shape:
            raise _invalid("ApplyAdamWV2", name, f"expected the shape of varRef {var.shape}, got {arr.shape}")
    if amsgrad and maxGradNormOptionalRef is None:
        raise _invalid("ApplyAdamWV2", "maxGradNormOptionalRef", "expected a tensor when amsgrad is true, got NULL")
    t = _step("ApplyAdamWV2", step)
    if maximize:
        g = -g
    var = var * float(1 - lr * weightDecay)
    m = float(beta1) * m + float(1 - beta1) * g
    v = float(beta2) * v + float(1 - beta2) * g * g
    bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
    mx: Optional[Array] = None
    if amsgrad:
        assert maxGradNormOptionalRef is not None
        mx = np.maximum(_arr(maxGradNormOptionalRef, wide), v)
        denom = np.sqrt(mx) / float(np.sqrt(bc2)) + float(eps)
    else:
        denom = np.sqrt(v) / float(np.sqrt(bc2)) + float(eps)
    var = var - float(lr / bc1) * m / denom
    return var, m, v, mx


FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnApplyAdamWV2",
       "aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *maxGradNormOptionalRef, const aclTensor *grad, "
       "const aclTensor *step, float lr, float beta1, float beta2, float weightDecay, float eps, bool amsgrad, "
       "bool maximize",
       apply_adam_w_v2, "one AdamW step in place (decoupled weight decay, bias-corrected moments, amsgrad); "
       + _DOC + "aclnnApplyAdamWV2.md"),
])


def apply_fused_ema_adam(grad: Array, varRef: Array, mRef: Array, vRef: Array, sRef: Array, step: Array, lr: float,
                         emaDecay: float, beta1: float, beta2: float, eps: float, mode: int, biasCorrection: bool,
                         weightDecay: float) -> tuple[Array, Array, Array, Array]:
    """Adam with an exponential moving average of the weights: mode 0 adds weightDecay * var to
    the gradient (L2), mode 1 decays decoupled (AdamW); m, v as Adam's, bias-corrected by step
    when biasCorrection; var -= lr * (m_hat / (sqrt(v_hat) + eps) (+ wd * var in mode 1));
    s = emaDecay * s + (1 - emaDecay) * var. Returns (varRef, mRef, vRef, sRef)."""
    if mode not in (0, 1):
        raise _invalid("ApplyFusedEmaAdam", "mode", f"expected 0 (L2) or 1 (AdamW), got {mode}")
    wide = np.float64 if np.asarray(varRef).dtype == np.float64 else np.float32
    g, var, m, v, s = (_arr(t, wide) for t in (grad, varRef, mRef, vRef, sRef))
    for name, t in (("mRef", m), ("vRef", v), ("sRef", s), ("grad", g)):
        if t.shape != var.shape:
            raise _invalid("ApplyFusedEmaAdam", name, f"expected the shape of varRef {var.shape}, got {t.shape}")
    t_ = _step("ApplyFusedEmaAdam", step)
    if mode == 0:
        g = g + float(weightDecay) * var
    m = float(beta1) * m + float(1 - beta1) * g
    v = float(beta2) * v + float(1 - beta2) * g * g
    bc1, bc2 = (1 - beta1 ** t_, 1 - beta2 ** t_) if biasCorrection else (1.0, 1.0)
    update = (m / float(bc1)) / (np.sqrt(v / float(bc2)) + float(eps))
    if mode == 1:
        update = update + float(weightDecay) * var
    var = var - float(lr) * update
    s = float(emaDecay) * s + float(1 - emaDecay) * var
    return var, m, v, s


FORMULAS = dict(FORMULAS, **dict([
    _f("aclnnApplyFusedEmaAdam",
       "const aclTensor *grad, aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *sRef, "
       "const aclTensor *step, double lr, double emaDecay, double beta1, double beta2, double eps, int64_t mode, "
       "bool biasCorrection, double weightDecay",
       apply_fused_ema_adam, "Adam (L2 or decoupled decay) plus an EMA of the weights, in place; "
       + _DOC + "aclnnApplyFusedEmaAdam.md"),
]))
