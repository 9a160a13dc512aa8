"""What every hand formula shares: the Formula record, its tiers, and the NumPy helpers.

A formula is a NumPy function written from CANN's documentation of an operator (the aclnn
API page cited in its ``doc``) and its real CANN 8.1.RC1 prototype (``params``). Calling
convention (shared with ``register_reference``): the runner calls ``fn`` with the
operator's *input* parameters as keywords named as in the header (tensors as NumPy arrays
or None for NULL; tensor lists as lists; aclScalar as a number; int/float/bool arrays as
lists; aclDataType as ``np.dtype``; strings as str; C numbers as Python numbers). An
in-place parameter (``...Ref``) is passed with its current values. ``fn`` returns one
array per *written* parameter in header order (a tuple when several; None for an optional
output it leaves alone); the runner checks shapes and casts into the caller's arrays.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import NDArray

from ...errors import AclnnError

Array = NDArray[Any]
_DOC = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/81RC1alpha002/apiref/aolapi/context/"
_INT8_MIN, _INT8_MAX = -128.0, 127.0

# "formula": a deterministic computation, compared value by value. "sampled": a random
# operator; the formula draws from the documented distribution with NumPy's generator,
# so its values never equal an NPU's bit for bit, and compare checks statistics instead.
FORMULA_TIERS = ("formula", "sampled")


@dataclass(frozen=True)
class Formula:
    """One hand formula: the operator's full name, its 8.1.RC1 C parameter list (without
    workspaceSize/executor), the NumPy function and a one-line description with its source.
    ``tier``: "formula" or "sampled"; ``stats``: for a sampled one, the statistics compare
    checks (a function of the call's inputs and written outputs, see sampled.py)."""
    aclnn: str
    params: str
    fn: Callable[..., Any]
    doc: str
    tier: str = "formula"
    stats: Optional[Callable[..., Any]] = field(default=None, repr=False)


def _f(aclnn: str, params: str, fn: Callable[..., Any], doc: str, tier: str = "formula",
       stats: Optional[Callable[..., Any]] = None) -> tuple[str, Formula]:
    assert tier in FORMULA_TIERS and (stats is not None) == (tier == "sampled"), aclnn
    return aclnn, Formula(aclnn, params, fn, doc, tier, stats)


def _invalid(op: str, argument: str, detail: str) -> AclnnError:
    """The 161002 CANN's own check would give (AclnnParamInvalidError)."""
    return AclnnError(161002, f"aclnn{op}GetWorkspaceSize", detail, argument=argument)


def _f32(a: Any) -> Array:
    """Widen to float32 (bfloat16 and float16 included), the NPU kernels' compute type."""
    out: Array = np.asarray(a).astype(np.float32)
    return out


def _trailing_axes(op: str, x: Array, w: Array, name: str) -> tuple[int, ...]:
    """The normalised axes: the last w.ndim axes of x, whose sizes w must have."""
    k = w.ndim
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k:]) != tuple(w.shape):
        raise _invalid(op, name, f"expected the shape of the last {max(k, 1)} dim(s) of x "
                                 f"{tuple(x.shape)}, got {tuple(w.shape)}")
    return tuple(range(x.ndim - k, x.ndim))


def _rms_stats(x: Array, axes: tuple[int, ...], eps: float) -> Array:
    """rstd = 1 / sqrt(mean(x^2) + eps), kept with size-1 normalised dims (shape_rstd *
    shape_gamma = shape_x, as the RmsNorm doc's examples show)."""
    rstd: Array = 1.0 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + np.float32(eps))
    return rstd.astype(np.float32)


def _erf(x: Array) -> Array:
    """erf in float64 (NumPy has none; math.erf is correctly rounded enough for a reference)."""
    out: Array = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))
    return out


def _gelu(x: Array, tanh: bool) -> Array:
    """GELU as CANN's docs write it: erf form, or the tanh approximation."""
    if tanh:
        inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)
        out: Array = (0.5 * x * (1.0 + np.tanh(inner))).astype(np.float32)
    else:
        out = (0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))).astype(np.float32)
    return out


def _halves(op: str, x: Array, dim: int, name: str = "dim") -> tuple[Array, Array]:
    """Split x in two equal halves along dim (the GLU family's A and B)."""
    if not -x.ndim <= dim < x.ndim:
        raise _invalid(op, name, f"expected a dim in [{-x.ndim}, {x.ndim - 1}], got {dim}")
    if x.shape[dim] % 2:
        raise _invalid(op, name, f"expected an even size along dim {dim}, got {x.shape[dim]}")
    a, b = np.split(x, 2, axis=dim)
    return a, b


def _glu_halves(op: str, x: Array, dim: int, approximate: int) -> tuple[Array, Array]:
    """The GeGlu family's checked approximate (0 erf, 1 tanh) and its halves A, B in float32."""
    if approximate not in (0, 1):
        raise _invalid(op, "approximate", f"expected 0 (none) or 1 (tanh), got {approximate}")
    return _halves(op, _f32(x), dim)


def _ge_glu(op: str, x: Array, dim: int, approximate: int, left: bool) -> tuple[Array, Array]:
    """(out, outGelu): Gelu(A) * B when left, else A * Gelu(B)."""
    a, b = _glu_halves(op, x, dim, approximate)
    act, other = (a, b) if left else (b, a)
    g = _gelu(act, bool(approximate))
    out: Array = g * other
    return out, g


def _sigmoid(x: Array) -> Array:
    out: Array = (1.0 / (1.0 + np.exp(-x))).astype(np.float32)
    return out


def _to_int8(v: Array) -> Array:
    """Round half to even and saturate to int8, as the quantising kernels' int8 cast does."""
    out: Array = np.clip(np.rint(v), _INT8_MIN, _INT8_MAX).astype(np.int8)
    return out


def _layer_stats(x: Array, axes: tuple[int, ...], eps: float) -> tuple[Array, Array]:
    mean: Array = np.asarray(np.mean(x, axis=axes, keepdims=True, dtype=np.float32))
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True, dtype=np.float32)
    return mean, (1.0 / np.sqrt(var + np.float32(eps))).astype(np.float32)


def _dim(op: str, ndim: int, dim: int, name: str = "dim") -> int:
    """dim wrapped into [0, ndim), or the 161002 CANN gives for one out of range."""
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise _invalid(op, name, f"expected a dim in [{-max(ndim, 1)}, {max(ndim, 1) - 1}], got {dim}")
    return dim % max(ndim, 1)
