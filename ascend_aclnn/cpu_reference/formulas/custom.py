"""Hand-written NumPy references for torch_npu custom operators that no aten op computes.

op-plugin calls these operators only from torch_npu's own ``npu_*`` functions, so reading
its call sites in reverse gives no CPU expression for them. Each formula here is written
from CANN's documentation of the operator (the aclnn API page on hiascend.com, whose
formula and parameter notes the doc line cites) and its real CANN 8.1.RC1 prototype; none
is derived from torch_npu's or CANN's code.

The calling convention is every formula's (_common.py, shared with ``register_reference``).

Arithmetic follows the NPU's documented practice: every input is widened to float32 and
each output is rounded once, at the end (16-bit inputs are never computed in 16 bits).
Integer outputs of the quantising operators are rounded half to even and saturated to the
int8 range here, before the runner's cast; where the doc is silent on a choice, the
formula's docstring says what was chosen. Arguments the reference cannot honour (random
dropout, packed int4 outputs, ...) raise NotImplementedError naming the argument; values
the operator itself refuses raise ``AclnnParamInvalidError`` (161002), as CANN's
parameter checks do.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ._common import (_DOC, Array, Formula, _f, _f32, _ge_glu, _gelu, _halves, _invalid, _INT8_MAX, _INT8_MIN,
                      _layer_stats, _rms_stats, _sigmoid, _to_int8, _trailing_axes)

__all__ = ["FORMULAS"]


# ---------------------------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------------------------

def rms_norm(x: Array, gamma: Array, epsilon: float) -> tuple[Array, Array]:
    """y = x * rstd * gamma, rstd = 1/sqrt(mean(x^2) + eps) over gamma's (trailing) dims.

    rstdOut keeps the normalised dims as size 1 (x (4,1,4096), gamma (4096,) -> (4,1,1)),
    float32 as documented."""
    xf, g = _f32(x), _f32(gamma)
    rstd = _rms_stats(xf, _trailing_axes("RmsNorm", xf, g, "gamma"), epsilon)
    return xf * rstd * g, rstd


def add_rms_norm(x1: Array, x2: Array, gamma: Array, epsilon: float) -> tuple[Array, Array, Array]:
    """x = x1 + x2, then RmsNorm(x): returns (yOut, rstdOut, xOut).

    Choice: the norm reads the float32 sum, not xOut rounded to x1's dtype (the doc fuses
    the add and does not say the sum is rounded in between)."""
    if np.shape(x1) != np.shape(x2):
        raise _invalid("AddRmsNorm", "x2", f"expected the shape of x1 {np.shape(x1)}, got {np.shape(x2)}")
    xf = _f32(x1) + _f32(x2)
    g = _f32(gamma)
    rstd = _rms_stats(xf, _trailing_axes("AddRmsNorm", xf, g, "gamma"), epsilon)
    return xf * rstd * g, rstd, xf


def gemma_rms_norm(x: Array, gamma: Array, epsilon: float) -> tuple[Array, Array]:
    """Gemma's RmsNorm: y = x * rstd * (1 + gamma); rstdOut as RmsNorm's."""
    xf, g = _f32(x), _f32(gamma)
    rstd = _rms_stats(xf, _trailing_axes("GemmaRmsNorm", xf, g, "gamma"), epsilon)
    return xf * rstd * (1.0 + g), rstd


def deep_norm(x: Array, gx: Array, beta: Array, gamma: Array, alpha: float,
              epsilon: float) -> tuple[Array, Array, Array]:
    """x' = alpha*x + gx; y = (x' - mean) * rstd * gamma + beta: returns (meanOut, rstdOut, yOut).

    The doc writes the division by sqrt(var + eps) and names it rstd; rstdOut here is the
    reciprocal 1/sqrt(var + eps), as DeepNormGrad's formula (which multiplies by rstd)
    requires. mean/rstd keep the normalised dims as size 1."""
    if np.shape(x) != np.shape(gx):
        raise _invalid("DeepNorm", "gx", f"expected the shape of x {np.shape(x)}, got {np.shape(gx)}")
    xp = np.float32(alpha) * _f32(x) + _f32(gx)
    g, b = _f32(gamma), _f32(beta)
    axes = _trailing_axes("DeepNorm", xp, g, "gamma")
    if b.shape != g.shape:
        raise _invalid("DeepNorm", "beta", f"expected the shape of gamma {g.shape}, got {b.shape}")
    mean, rstd = _layer_stats(xp, axes, epsilon)
    return mean, rstd, (xp - mean) * rstd * g + b


def add_layer_norm(x1: Array, x2: Array, gamma: Array, beta: Array, biasOptional: Optional[Array],
                   epsilon: float, additionalOutput: bool
                   ) -> tuple[Array, Array, Array, Optional[Array]]:
    """x = x1 + x2 (+ bias); y = (x - mean) * rstd * gamma + beta: returns (yOut, meanOut,
    rstdOut, xOut); xOut is left alone (None) unless additionalOutput."""
    if np.shape(x1) != np.shape(x2):
        raise _invalid("AddLayerNorm", "x2", f"expected the shape of x1 {np.shape(x1)}, got {np.shape(x2)}")
    xf = _f32(x1) + _f32(x2)
    if biasOptional is not None:
        xf = xf + _f32(biasOptional)
    g, b = _f32(gamma), _f32(beta)
    axes = _trailing_axes("AddLayerNorm", xf, g, "gamma")
    mean, rstd = _layer_stats(xf, axes, epsilon)
    return (xf - mean) * rstd * g + b, mean, rstd, (xf if additionalOutput else None)


def add_rms_norm_quant(x1: Array, x2: Array, gamma: Array, scales1: Array, scales2Optional: Optional[Array],
                       zeroPoints1Optional: Optional[Array], zeroPoints2Optional: Optional[Array],
                       axis: int, epsilon: float, divMode: bool
                       ) -> tuple[Array, Optional[Array], Array]:
    """x = x1 + x2; y = RmsNorm(x) * gamma; y1 = round(y / scales1 + zp1) (divMode) or
    round(y * scales1 + zp1): returns (y1Out, y2Out, xOut); y2Out only when scales2 is given.

    Only axis = -1 (the documented value) is accepted."""
    if axis != -1:
        raise _invalid("AddRmsNormQuant", "axis", f"expected -1, got {axis}")
    y, _, xf = add_rms_norm(x1, x2, gamma, epsilon)

    def quant(scales: Array, zp: Optional[Array]) -> Array:
        s = _f32(scales)
        v = y / s if divMode else y * s
        return _to_int8(v + (_f32(zp) if zp is not None else np.float32(0)))
    y2 = quant(scales2Optional, zeroPoints2Optional) if scales2Optional is not None else None
    return quant(scales1, zeroPoints1Optional), y2, xf


# ---------------------------------------------------------------------------------------------
# Gated activations and rotary embedding
# ---------------------------------------------------------------------------------------------

def swi_glu(x: Array, dim: int) -> Array:
    """out = Swish(A) * B = A * sigmoid(A) * B, with A, B the first and second halves of x along dim."""
    a, b = _halves("SwiGlu", _f32(x), dim)
    return a * _sigmoid(a) * b


def ge_glu_v3(self: Array, dim: int, approximate: int, activateLeft: bool) -> tuple[Array, Array]:
    """out = Gelu(A) * B when activateLeft, else A * Gelu(B): returns (out, outGelu).

    approximate 0 is the erf GELU, 1 the tanh one. The 8.1-era doc's formulas swap the two
    activateLeft cases while its text says True activates the left half; later docs fixed
    the formulas to agree with the text, which this follows. outGelu is the activated half."""
    return _ge_glu("GeGluV3", self, dim, approximate, bool(activateLeft))


def gelu_mul(input: Array, approximateOptional: Optional[str]) -> Array:
    """out = Gelu(x1) * x2 with x1, x2 the halves of the last dim; approximate "none" (erf,
    also for NULL) or "tanh"."""
    mode = "none" if approximateOptional is None else approximateOptional
    if mode not in ("none", "tanh"):
        raise _invalid("GeluMul", "approximateOptional", f"expected 'none' or 'tanh', got {mode!r}")
    a, b = _halves("GeluMul", _f32(input), -1)
    return _gelu(a, mode == "tanh") * b


def _rotate_half(x: Array) -> Array:
    h = x.shape[-1] // 2
    return np.concatenate((-x[..., h:], x[..., :h]), axis=-1)


def apply_rotary_pos_emb(queryRef: Array, keyRef: Array, cos: Array, sin: Array,
                         layout: int) -> tuple[Array, Array]:
    """q = q*cos + rotate_half(q)*sin, k likewise, rotate_half(t) = cat(-t2, t1) over the last
    dim: returns the new (queryRef, keyRef), which the operator writes in place.

    layout (1 = BSND) only says how cos/sin line up with q/k; the reference broadcasts them
    as given, which is that alignment when their shapes follow the layout."""
    q, k, c, s = _f32(queryRef), _f32(keyRef), _f32(cos), _f32(sin)
    for name, t in (("queryRef", q), ("keyRef", k)):
        if t.shape[-1] % 2:
            raise _invalid("ApplyRotaryPosEmb", name, f"expected an even last dim, got shape {t.shape}")
    try:
        return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s
    except ValueError:
        raise _invalid("ApplyRotaryPosEmb", "cos", f"shape {c.shape} does not broadcast with queryRef "
                                                   f"{q.shape} and keyRef {k.shape}") from None


# ---------------------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------------------

def dynamic_quant(x: Array, smoothScalesOptional: Optional[Array]) -> tuple[Array, Array]:
    """Per-token symmetric int8: input = x (* smoothScales); scaleOut = rowmax|input| / 127;
    yOut = round(input / scaleOut): returns (yOut, scaleOut), scaleOut of x's shape without
    its last dim.

    Choice: an all-zero row (scale 0, where the doc's division is undefined) quantises to 0."""
    v = _f32(x)
    if smoothScalesOptional is not None:
        v = v * _f32(smoothScalesOptional)
    scale = (np.max(np.abs(v), axis=-1) / np.float32(127.0)).astype(np.float32)
    safe = np.where(scale == 0, np.float32(1.0), scale)
    return _to_int8(v / safe[..., None]), scale


def _quant_dst(op: str, dstType: int) -> None:
    if dstType != 2:  # ACL_INT8; 3 (int4 packed in int32) and 29 (int4) change the output's shape
        raise NotImplementedError(f"aclnn{op}: dstType {dstType}: the CPU reference computes int8 (2) only")


def ascend_quant_v3(x: Array, scale: Array, offset: Optional[Array], sqrtMode: bool, roundMode: str,
                    dstType: int, axis: int) -> Array:
    """y = round(x * scale + offset) (scale squared when sqrtMode); scale/offset run along x's
    dim ``axis`` (size equal or 1). roundMode "round" (half to even: our choice, the doc does
    not say which ties), "floor", "ceil" or "trunc"; saturated to int8."""
    _quant_dst("AscendQuantV3", dstType)
    xf, s = _f32(x), _f32(scale)
    if not -xf.ndim <= axis < xf.ndim:
        raise _invalid("AscendQuantV3", "axis", f"expected a dim of x in [{-xf.ndim}, {xf.ndim - 1}], got {axis}")
    ax = axis % xf.ndim

    def along(t: Array, name: str) -> Array:
        if t.size not in (1, xf.shape[ax]):
            raise _invalid("AscendQuantV3", name, f"expected {xf.shape[ax]} or 1 element(s) along x's dim {axis}, "
                                                  f"got shape {t.shape}")
        shape = [1] * xf.ndim
        shape[ax] = t.size
        return t.reshape(shape)
    s = along(s, "scale")
    if sqrtMode:
        s = s * s
    v = xf * s + (along(_f32(offset), "offset") if offset is not None else np.float32(0))
    rounders: dict[str, Callable[[Array], Array]] = {"round": np.rint, "floor": np.floor,
                                                     "ceil": np.ceil, "trunc": np.trunc}
    if roundMode not in rounders:
        raise _invalid("AscendQuantV3", "roundMode", f"expected one of {sorted(rounders)}, got {roundMode!r}")
    out: Array = np.clip(rounders[roundMode](v), _INT8_MIN, _INT8_MAX).astype(np.int8)
    return out


def ascend_anti_quant(x: Array, scale: Array, offset: Optional[Array], dstType: int, sqrtMode: bool) -> Array:
    """y = (x + offset) * scale (scale squared when sqrtMode), in float32; the caller's y
    dtype (dstType: float16 or bfloat16) receives it rounded once."""
    if dstType not in (1, 27):  # ACL_FLOAT16, ACL_BF16
        raise _invalid("AscendAntiQuant", "dstType", f"expected 1 (float16) or 27 (bfloat16), got {dstType}")
    s = _f32(scale)
    if sqrtMode:
        s = s * s
    v = _f32(x) + (_f32(offset) if offset is not None else np.float32(0))
    return v * s


def weight_quant_batch_matmul_v2(x: Array, weight: Array, antiquantScale: Array,
                                 antiquantOffsetOptional: Optional[Array], quantScaleOptional: Optional[Array],
                                 quantOffsetOptional: Optional[Array], biasOptional: Optional[Array],
                                 antiquantGroupSize: int) -> Array:
    """y = x @ ((weight + antiquantOffset) * antiquantScale) + bias, x (m, k), weight (k, n).

    Scale/offset are per tensor (1 element), per channel ((n,) or (1, n)) or, with
    antiquantGroupSize G > 0, per group of G rows of k ((ceil(k/G), n)). Choice: the
    dequantised weight and the product are float32 (the doc does not give the kernel's
    internal precision). A quantScale (the int8-output mode) is not supported here."""
    if quantScaleOptional is not None or quantOffsetOptional is not None:
        raise NotImplementedError("aclnnWeightQuantBatchMatmulV2: quantScaleOptional/quantOffsetOptional "
                                  "(int8 output) are not supported by the CPU reference")
    xf, w = _f32(x), _f32(weight)
    if xf.ndim != 2 or w.ndim != 2 or xf.shape[1] != w.shape[0]:
        raise _invalid("WeightQuantBatchMatmulV2", "weight", f"expected (k, n) with k = x's {xf.shape[-1]}, "
                                                             f"got x {xf.shape}, weight {w.shape}")
    k, n = w.shape

    def expand(t: Array, name: str) -> Array:
        if antiquantGroupSize > 0:
            groups = -(-k // antiquantGroupSize)
            if t.shape != (groups, n):
                raise _invalid("WeightQuantBatchMatmulV2", name, f"expected ({groups}, {n}) for group size "
                                                                 f"{antiquantGroupSize}, got {t.shape}")
            return np.repeat(t, antiquantGroupSize, axis=0)[:k]
        if t.size == 1 or t.shape in ((n,), (1, n)):
            return t.reshape(1, -1)
        raise _invalid("WeightQuantBatchMatmulV2", name, f"expected 1, ({n},) or (1, {n}) elements, got {t.shape}")
    if antiquantOffsetOptional is not None:
        w = w + expand(_f32(antiquantOffsetOptional), "antiquantOffsetOptional")
    w = w * expand(_f32(antiquantScale), "antiquantScale")
    y: Array = xf @ w
    return y + _f32(biasOptional) if biasOptional is not None else y


def cast(self: Array, dtype: np.dtype[Any]) -> Array:
    """out = self converted to dtype (C conversion: float to int truncates toward zero).

    Returned already in dtype, so the runner's own cast changes nothing."""
    out: Array = np.asarray(self).astype(dtype)
    return out


def scatter_nd_update(varRef: Array, indices: Array, updates: Array) -> Array:
    """var[indices[i]] = updates[i] for each index tuple in indices' last dim (k <= var.ndim);
    returns the new varRef. Duplicate indices: the last update wins (the doc leaves it open)."""
    var, idx, upd = np.array(varRef, copy=True), np.asarray(indices), np.asarray(updates)
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim == 0 or not 1 <= k <= var.ndim:
        raise _invalid("ScatterNdUpdate", "indices", f"expected a last dim in [1, {var.ndim}], got shape {idx.shape}")
    want = idx.shape[:-1] + var.shape[k:]
    if upd.shape != want:
        raise _invalid("ScatterNdUpdate", "updates", f"expected shape {want}, got {upd.shape}")
    flat_idx, flat_upd = idx.reshape(-1, k), upd.reshape((-1,) + var.shape[k:])
    for i, row in enumerate(flat_idx):
        if np.any(row < -np.array(var.shape[:k])) or np.any(row >= np.array(var.shape[:k])):
            raise _invalid("ScatterNdUpdate", "indices", f"index {tuple(int(v) for v in row)} out of range "
                                                         f"for varRef {var.shape}")
        var[tuple(int(v) for v in row)] = flat_upd[i]
    return var


# ---------------------------------------------------------------------------------------------
# Mixture of experts
# ---------------------------------------------------------------------------------------------

def moe_gating_top_k_softmax(x: Array, finishedOptional: Optional[Array], k: int
                             ) -> tuple[Array, Array, Array]:
    """softmax over the experts (last dim), then top-k: returns (yOut, expertIdxOut, rowIdxOut).

    rowIdxOut[i, j] = j * rows + i (arange(rows*k) reshaped (k, rows), transposed); a row
    whose finished flag is True gets expert number E (x's last dim) in expertIdxOut. Ties
    pick the lower expert first (the doc does not order them)."""
    xf = _f32(x)
    e = xf.shape[-1]
    if not 0 < k <= e:
        raise _invalid("MoeGatingTopKSoftmax", "k", f"expected 0 < k <= {e}, got {k}")
    z = np.exp(xf - xf.max(axis=-1, keepdims=True))
    p = (z / z.sum(axis=-1, keepdims=True)).astype(np.float32)
    order = np.argsort(-p, axis=-1, kind="stable")[..., :k]
    y = np.take_along_axis(p, order, axis=-1)
    idx = order.astype(np.int32)
    if finishedOptional is not None:
        fin = np.asarray(finishedOptional, dtype=bool)
        if fin.shape != xf.shape[:-1]:
            raise _invalid("MoeGatingTopKSoftmax", "finishedOptional", f"expected shape {xf.shape[:-1]}, "
                                                                       f"got {fin.shape}")
        idx = np.where(fin[..., None], np.int32(e), idx)
    rows = int(np.prod(xf.shape[:-1]))
    row_idx = np.arange(rows * k, dtype=np.int32).reshape(k, rows).T.reshape(xf.shape[:-1] + (k,))
    return y, idx, row_idx


def moe_init_routing(x: Array, rowIdx: Array, expertIdx: Array, activeNum: int
                     ) -> tuple[Array, Array, Array]:
    """Sort the (rows, k) expert choices by expert: expandedExpertIdx, sortedRowIdx =
    keyValueSort(expertIdx, rowIdx); expandedRowIdx[sortedRowIdx[i]] = i; expandedX[i] =
    x[sortedRowIdx[i] % rows] for the first min(rows, activeNum) * k: returns (expandedXOut,
    expandedRowIdxOut, expandedExpertIdxOut).

    Choice: equal experts keep rowIdx's ascending order (a key-value sort on the pair)."""
    xf = np.asarray(x)
    ri, ei = np.asarray(rowIdx).reshape(-1), np.asarray(expertIdx).reshape(-1)
    if xf.ndim != 2 or np.shape(expertIdx) != np.shape(rowIdx) or np.ndim(expertIdx) != 2 \
            or np.shape(expertIdx)[0] != xf.shape[0]:
        raise _invalid("MoeInitRouting", "expertIdx", f"expected x (rows, H) and rowIdx/expertIdx (rows, k), "
                                                      f"got {xf.shape}, {np.shape(rowIdx)}, {np.shape(expertIdx)}")
    if activeNum < 0:
        raise _invalid("MoeInitRouting", "activeNum", f"expected >= 0, got {activeNum}")
    rows, k = np.shape(expertIdx)
    order = np.lexsort((ri, ei))
    sorted_rows = ri[order]
    expanded_row = np.empty(rows * k, dtype=np.int32)
    expanded_row[sorted_rows] = np.arange(rows * k, dtype=np.int32)
    kept = min(rows, activeNum) * k
    return xf[sorted_rows[:kept] % rows], expanded_row, ei[order].astype(np.int32)


def moe_finalize_routing(expandedX: Array, x1: Array, x2Optional: Optional[Array], bias: Array, scales: Array,
                         expandedRowIdx: Array, expandedExpertIdx: Array) -> Array:
    """out[i, j] = x1[i, j] + x2[i, j] + sum_k scales[i, k] * (expandedX[expandedRowIdx[i + k*rows], j]
    + bias[expandedExpertIdx[i, k], j]), in float32."""
    ex, sc = _f32(expandedX), _f32(scales)
    rows, k = sc.shape
    rid = np.asarray(expandedRowIdx).reshape(-1)
    eid = np.asarray(expandedExpertIdx).reshape(rows, k)
    if rid.size != rows * k:
        raise _invalid("MoeFinalizeRouting", "expandedRowIdx", f"expected {rows * k} elements, got {rid.size}")
    out = _f32(x1) + (_f32(x2Optional) if x2Optional is not None else np.float32(0))
    b = _f32(bias)
    for j in range(k):
        picked = ex[rid[np.arange(rows) + j * rows]]
        out = out + sc[:, j:j + 1] * (picked + b[eid[:, j]])
    return out


def moe_compute_expert_tokens(sortedExperts: Array, numExperts: int) -> Array:
    """out[i] = BinarySearch(sortedExperts, i): the end (one past the last row) of expert i's
    rows in the sorted list, i.e. the count of rows with expert <= i (a cumulative count).

    Choice: "the last row's position" read as the exclusive end, the group_list form the
    grouped matmuls take."""
    if numExperts <= 0:
        raise _invalid("MoeComputeExpertTokens", "numExperts", f"expected > 0, got {numExperts}")
    s = np.asarray(sortedExperts).reshape(-1)
    out: Array = np.searchsorted(s, np.arange(numExperts), side="right").astype(np.int32)
    return out


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnAddRmsNormQuant",
       "const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, const aclTensor *scales1, "
       "const aclTensor *scales2Optional, const aclTensor *zeroPoints1Optional, const aclTensor *zeroPoints2Optional, "
       "int64_t axis, double epsilon, bool divMode, const aclTensor *y1Out, const aclTensor *y2Out, "
       "const aclTensor *xOut",
       add_rms_norm_quant,
       "x = x1 + x2, y = RmsNorm(x)*gamma, int8 round(y/scales + zp) (divMode) or round(y*scales + zp); "
       + _DOC + "aclnnAddRmsNormQuant.md"),
    _f("aclnnAscendAntiQuant",
       "const aclTensor *x, const aclTensor *scale, const aclTensor *offset, int64_t dstType, bool sqrtMode, "
       "const aclTensor *y",
       ascend_anti_quant, "y = (x + offset) * scale (scale^2 if sqrtMode); " + _DOC + "aclnnAscendAntiQuant.md"),
    _f("aclnnCast", "const aclTensor *self, const aclDataType dtype, aclTensor *out",
       cast, "out = self converted to dtype; " + _DOC + "aclnnCast.md"),
    _f("aclnnScatterNdUpdate", "aclTensor *varRef, const aclTensor *indices, const aclTensor *updates",
       scatter_nd_update, "varRef[indices[i]] = updates[i] in place; " + _DOC + "aclnnScatterNdUpdate.md"),
    _f("aclnnWeightQuantBatchMatmulV2",
       "const aclTensor *x, const aclTensor *weight, const aclTensor *antiquantScale, "
       "const aclTensor *antiquantOffsetOptional, const aclTensor *quantScaleOptional, "
       "const aclTensor *quantOffsetOptional, const aclTensor *biasOptional, int antiquantGroupSize, const aclTensor *y",
       weight_quant_batch_matmul_v2,
       "y = x @ ((weight + antiquantOffset) * antiquantScale) + bias; " + _DOC + "aclnnWeightQuantBatchMatmulV2.md"),
    _f("aclnnRmsNorm",
       "const aclTensor *x, const aclTensor *gamma, double epsilon, const aclTensor *yOut, const aclTensor *rstdOut",
       rms_norm, "y = x / sqrt(mean(x^2) + eps) * gamma, rstd; " + _DOC + "aclnnRmsNorm.md"),
    _f("aclnnAddRmsNorm",
       "const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, double epsilon, const aclTensor *yOut, "
       "const aclTensor *rstdOut, const aclTensor *xOut",
       add_rms_norm, "x = x1 + x2, then RmsNorm(x); " + _DOC + "aclnnAddRmsNorm.md"),
    _f("aclnnGemmaRmsNorm",
       "const aclTensor *x, const aclTensor *gamma, double epsilon, const aclTensor *yOut, const aclTensor *rstdOut",
       gemma_rms_norm, "y = x / sqrt(mean(x^2) + eps) * (1 + gamma); " + _DOC + "aclnnGemmaRmsNorm.md"),
    _f("aclnnDeepNorm",
       "const aclTensor *x, const aclTensor *gx, const aclTensor *beta, const aclTensor *gamma, double alpha, "
       "double epsilon, const aclTensor *meanOut, const aclTensor *rstdOut, const aclTensor *yOut",
       deep_norm, "LayerNorm(alpha*x + gx)*gamma + beta, mean, rstd; " + _DOC + "aclnnDeepNorm.md"),
    _f("aclnnAddLayerNorm",
       "const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, const aclTensor *beta, "
       "const aclTensor *biasOptional, double epsilon, bool additionalOutput, const aclTensor *yOut, "
       "const aclTensor *meanOut, const aclTensor *rstdOut, const aclTensor *xOut",
       add_layer_norm, "x = x1 + x2 + bias, LayerNorm(x)*gamma + beta, mean, rstd; " + _DOC + "aclnnAddLayerNorm.md"),
    _f("aclnnSwiGlu", "const aclTensor *x, int64_t dim, const aclTensor *out",
       swi_glu, "out = Swish(A) * B, A/B the halves of x along dim; " + _DOC + "aclnnSwiGlu.md"),
    _f("aclnnGeGluV3",
       "const aclTensor *self, int64_t dim, int64_t approximate, bool activateLeft, aclTensor *out, "
       "aclTensor *outGelu",
       ge_glu_v3, "out = Gelu(A)*B (activateLeft) or A*Gelu(B), outGelu; " + _DOC + "aclnnGeGluV3.md"),
    _f("aclnnGeluMul", "const aclTensor *input, char *approximateOptional, const aclTensor *out",
       gelu_mul, "out = Gelu(first half of the last dim) * second half; " + _DOC + "aclnnGeluMul.md"),
    _f("aclnnApplyRotaryPosEmb",
       "aclTensor *queryRef, aclTensor *keyRef, const aclTensor *cos, const aclTensor *sin, int64_t layout",
       apply_rotary_pos_emb, "q/k = t*cos + rotate_half(t)*sin in place; " + _DOC + "aclnnApplyRotaryPosEmb.md"),
    _f("aclnnDynamicQuant",
       "const aclTensor *x, const aclTensor *smoothScalesOptional, const aclTensor *yOut, const aclTensor *scaleOut",
       dynamic_quant, "per-token int8: scale = rowmax|x*smooth|/127, y = round(x*smooth/scale); "
       + _DOC + "aclnnDynamicQuant.md"),
    _f("aclnnAscendQuantV3",
       "const aclTensor *x, const aclTensor *scale, const aclTensor *offset, bool sqrtMode, const char *roundMode, "
       "int32_t dstType, int32_t axis, const aclTensor *y",
       ascend_quant_v3, "y = round(x*scale + offset) along axis, int8; " + _DOC + "aclnnAscendQuantV3.md"),
    _f("aclnnMoeGatingTopKSoftmax",
       "const aclTensor *x, const aclTensor *finishedOptional, int64_t k, const aclTensor *yOut, "
       "const aclTensor *expertIdxOut, const aclTensor *rowIdxOut",
       moe_gating_top_k_softmax, "top-k of softmax(x) with expert and row indices; "
       + _DOC + "aclnnMoeGatingTopKSoftmax.md"),
    _f("aclnnMoeInitRouting",
       "const aclTensor *x, const aclTensor *rowIdx, const aclTensor *expertIdx, int64_t activeNum, "
       "const aclTensor *expandedXOut, const aclTensor *expandedRowIdxOut, const aclTensor *expandedExpertIdxOut",
       moe_init_routing, "rows sorted by expert, with the forward and inverse maps; " + _DOC + "aclnnMoeInitRouting.md"),
    _f("aclnnMoeFinalizeRouting",
       "const aclTensor *expandedX, const aclTensor *x1, const aclTensor *x2Optional, const aclTensor *bias, "
       "const aclTensor *scales, const aclTensor *expandedRowIdx, const aclTensor *expandedExpertIdx, "
       "const aclTensor *out",
       moe_finalize_routing, "out = x1 + x2 + sum_k scales*(expandedX[row] + bias[expert]); "
       + _DOC + "aclnnMoeFinalizeRouting.md"),
    _f("aclnnMoeComputeExpertTokens", "const aclTensor *sortedExperts, int64_t numExperts, const aclTensor *out",
       moe_compute_expert_tokens, "out[i] = end of expert i's rows in sortedExperts (cumulative count); "
       + _DOC + "aclnnMoeComputeExpertTokens.md"),
])
