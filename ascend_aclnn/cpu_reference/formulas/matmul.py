"""Grouped and quantised matrix products, and the quantising operators around them.

GroupedMatmul (all versions): y_i = x_i @ w_i + b_i per group, with ND weights (K, N) per
group, or one (E, K, N) tensor holding every group's. A single x is cut into groups of rows
(groupType 0, the M axis) by groupList: cumulative ends (groupListType 0, and versions 1-3)
or counts (groupListType 1). splitItem 0/1 writes one y per group, 2/3 one y of every group's
rows concatenated. Quantised (scale, offset, antiquant, per-token) and activation arguments
are refused, as is grouping on the K axis.

Quantised matmuls accumulate int8 x int8 products exactly (int64 here), add the int32 bias,
then scale once in float32. A scale given as int64 (TransQuantParam's packed form) is read
from its low 32 bits as a float32: the package's choice, the docs only say it is packed.
Outputs needing integer rounding (int8 results with an offset) are refused.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np
from ml_dtypes import bfloat16 as ml_bfloat16

from ._common import _DOC, Array, Formula, _f, _f32, _invalid
from . import custom

__all__ = ["FORMULAS", "matmul_weight_nz"]


def _none_or_empty(v: Any) -> bool:
    return v is None or (isinstance(v, (list, tuple)) and len(v) == 0)


def _refuse(op: str, **given: Any) -> None:
    for name, v in given.items():
        if not _none_or_empty(v):
            raise NotImplementedError(f"aclnn{op}: {name} (quantised or activation mode) is not supported by the CPU "
                                      f"reference")


def _grouped(op: str, x: Sequence[Array], weight: Sequence[Array], bias: Optional[Sequence[Array]],
             group_list: Optional[Any], split_item: int, group_type: int, counts: bool) -> list[Array]:
    if group_type not in (-1, 0):
        raise NotImplementedError(f"aclnn{op}: groupType {group_type} (grouping on K) is not supported by the CPU "
                                  f"reference")
    if split_item not in (0, 1, 2, 3):
        raise _invalid(op, "splitItem", f"expected 0 to 3, got {split_item}")
    ws = [_f32(w) for w in weight]
    if len(ws) == 1 and ws[0].ndim == 3:
        ws = list(ws[0])
    bs = [_f32(b) for b in bias] if bias else []
    if len(bs) == 1 and bs[0].ndim == 2 and len(ws) > 1:
        bs = list(bs[0])
    xs = [_f32(t) for t in x]
    if len(xs) == 1 and len(ws) > 1:
        if group_list is None:
            raise _invalid(op, "groupListOptional", f"expected the groups of x's rows for {len(ws)} weights")
        ends = np.asarray(group_list, np.int64).reshape(-1)
        if counts:
            ends = np.cumsum(ends)
        if ends.size != len(ws) or np.any(np.diff(ends) < 0) or (ends.size and ends[-1] > xs[0].shape[0]):
            raise _invalid(op, "groupListOptional", f"expected {len(ws)} non-decreasing group ends within "
                                                    f"{xs[0].shape[0]} rows, got {ends.tolist()}")
        starts = np.concatenate(([0], ends[:-1]))
        xs = [xs[0][a:b] for a, b in zip(starts, ends)]
    if len(xs) != len(ws) or (bs and len(bs) != len(ws)):
        raise _invalid(op, "weight", f"expected as many weights (and biases) as groups of x ({len(xs)}), got "
                                     f"{len(ws)} weights, {len(bs)} biases")
    ys = []
    for i, (a, w) in enumerate(zip(xs, ws)):
        if a.shape[-1] != w.shape[0]:
            raise _invalid(op, "weight", f"group {i}: x {a.shape} and weight {w.shape} do not chain")
        y = a @ w
        ys.append(y + bs[i] if bs else y)
    return [np.concatenate(ys, axis=0)] if split_item in (2, 3) else ys


def grouped_matmul(x: Sequence[Array], weight: Sequence[Array], biasOptional: Optional[Sequence[Array]],
                   scaleOptional: Any, offsetOptional: Any, antiquantScaleOptional: Any, antiquantOffsetOptional: Any,
                   groupListOptional: Optional[Sequence[int]], splitItem: int) -> list[Array]:
    """y_i = x_i @ w_i + b_i per group (groupList: cumulative row ends of a single x)."""
    _refuse("GroupedMatmul", scaleOptional=scaleOptional, offsetOptional=offsetOptional,
            antiquantScaleOptional=antiquantScaleOptional, antiquantOffsetOptional=antiquantOffsetOptional)
    return _grouped("GroupedMatmul", x, weight, biasOptional, groupListOptional, splitItem, 0, False)


def grouped_matmul_v2(x: Sequence[Array], weight: Sequence[Array], biasOptional: Optional[Sequence[Array]],
                      scaleOptional: Any, offsetOptional: Any, antiquantScaleOptional: Any,
                      antiquantOffsetOptional: Any, groupListOptional: Any, splitItem: int,
                      groupType: int) -> list[Array]:
    """GroupedMatmul with groupType (-1 none, 0 the M axis); groupList cumulative ends (an int
    array in V2, a tensor in V3)."""
    _refuse("GroupedMatmul", scaleOptional=scaleOptional, offsetOptional=offsetOptional,
            antiquantScaleOptional=antiquantScaleOptional, antiquantOffsetOptional=antiquantOffsetOptional)
    return _grouped("GroupedMatmul", x, weight, biasOptional, groupListOptional, splitItem, groupType, False)


def grouped_matmul_v4(x: Sequence[Array], weight: Sequence[Array], biasOptional: Optional[Sequence[Array]],
                      scaleOptional: Any, offsetOptional: Any, antiquantScaleOptional: Any,
                      antiquantOffsetOptional: Any, perTokenScaleOptional: Any, groupListOptional: Any,
                      activationInputOptional: Any, activationQuantScaleOptional: Any,
                      activationQuantOffsetOptional: Any, splitItem: int, groupType: int, groupListType: int,
                      actType: int) -> tuple[list[Array], None, None]:
    """GroupedMatmulV3 plus groupListType (0 cumulative ends, 1 counts); actType must be 0 (no
    activation); returns (out, activationFeatureOut left alone, dynQuantScaleOut left alone)."""
    _refuse("GroupedMatmulV4", scaleOptional=scaleOptional, offsetOptional=offsetOptional,
            antiquantScaleOptional=antiquantScaleOptional, antiquantOffsetOptional=antiquantOffsetOptional,
            perTokenScaleOptional=perTokenScaleOptional, activationInputOptional=activationInputOptional,
            activationQuantScaleOptional=activationQuantScaleOptional,
            activationQuantOffsetOptional=activationQuantOffsetOptional)
    if actType != 0:
        raise NotImplementedError(f"aclnnGroupedMatmulV4: actType {actType}: the CPU reference computes no "
                                  f"activation (0) only")
    if groupListType not in (0, 1):
        raise _invalid("GroupedMatmulV4", "groupListType", f"expected 0 (cumsum) or 1 (count), got {groupListType}")
    return (_grouped("GroupedMatmulV4", x, weight, biasOptional, groupListOptional, splitItem, groupType,
                     groupListType == 1), None, None)


# ---------------------------------------------------------------------------------------------
# Quantised matmuls
# ---------------------------------------------------------------------------------------------

def _scale_values(scale: Array) -> Array:
    s = np.asarray(scale)
    if s.dtype.kind in "iu":  # TransQuantParam's packed form: float32 bits in the low 32 bits
        out: Array = (s.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        return out
    return _f32(s)


def _int_matmul(op: str, x1: Array, x2: Array, t1: bool, t2: bool) -> Array:
    a = np.asarray(x1).astype(np.int64)
    b = np.asarray(x2).astype(np.int64)
    a = np.swapaxes(a, -1, -2) if t1 else a
    b = np.swapaxes(b, -1, -2) if t2 else b
    if a.shape[-1] != b.shape[-2]:
        raise _invalid(op, "x2", f"expected K {a.shape[-1]} rows in x2, got {b.shape}")
    out: Array = a @ b
    return out


def quant_matmul(x1: Array, x2: Array, bias: Optional[Array], deqScale: float) -> Array:
    """out = (x1 @ x2 + bias) * deqScale, the product accumulated exactly."""
    acc = _int_matmul("QuantMatmul", x1, x2, False, False)
    if bias is not None:
        acc = acc + np.asarray(bias).astype(np.int64)
    return acc.astype(np.float32) * np.float32(deqScale)


def quant_matmul_v2(x1: Array, x2: Array, bias: Optional[Array], deqScale: Array, adjX1: bool, adjX2: bool) -> Array:
    """out = (op(x1) @ op(x2) + bias) * deqScale (per tensor or per output channel)."""
    acc = _int_matmul("QuantMatmulV2", x1, x2, adjX1, adjX2)
    if bias is not None:
        acc = acc + np.asarray(bias).astype(np.int64)
    out: Array = acc.astype(np.float32) * _scale_values(deqScale).reshape(-1)
    return out


def quant_matmul_v4(x1: Array, x2: Array, scale: Array, offset: Optional[Array], pertokenScaleOptional: Optional[Array],
                    bias: Optional[Array], transposeX1: bool, transposeX2: bool) -> Array:
    """out = (op(x1) @ op(x2) + bias) * scale (* pertokenScale per row); an int32 bias is added
    before scaling, a float one after. offset (int8 output) is refused."""
    if offset is not None:
        raise NotImplementedError("aclnnQuantMatmul: offset (int8 output) is not supported by the CPU reference")
    acc = _int_matmul("QuantMatmulV4", x1, x2, transposeX1, transposeX2)
    late_bias = None
    if bias is not None:
        if np.asarray(bias).dtype.kind in "iu":
            acc = acc + np.asarray(bias).astype(np.int64)
        else:
            late_bias = _f32(bias)
    out = acc.astype(np.float32) * _scale_values(scale).reshape(-1)
    if pertokenScaleOptional is not None:
        out = out * _f32(pertokenScaleOptional).reshape(-1, 1)
    result: Array = out + late_bias if late_bias is not None else out
    return result


def quant_matmul_v3(x1: Array, x2: Array, scale: Array, offset: Optional[Array], bias: Optional[Array],
                    transposeX1: bool, transposeX2: bool) -> Array:
    """QuantMatmulV4 without a per-token scale."""
    return quant_matmul_v4(x1, x2, scale, offset, None, bias, transposeX1, transposeX2)


def weight_quant_batch_matmul(x1: Array, x2: Array, diagonalMatrix: Optional[Array], deqOffset: Optional[Array],
                              deqScale: Optional[Array], addOffset: Optional[Array], mulScale: Optional[Array],
                              bias: Optional[Array], transposeX1: bool, transposeX2: bool, antiquantScale: float,
                              antiquantOffset: float) -> Array:
    """y = op(x1) @ ((op(x2) + antiquantOffset) * antiquantScale) + bias, in float32; the
    int8-activation path (diagonalMatrix, deqOffset/deqScale, addOffset, mulScale) is refused."""
    _refuse("WeightQuantBatchMatmul", diagonalMatrix=diagonalMatrix, deqOffset=deqOffset, deqScale=deqScale,
            addOffset=addOffset, mulScale=mulScale)
    a, w = _f32(x1), _f32(x2)
    a = np.swapaxes(a, -1, -2) if transposeX1 else a
    w = np.swapaxes(w, -1, -2) if transposeX2 else w
    w = (w + np.float32(antiquantOffset)) * np.float32(antiquantScale)
    y: Array = a @ w
    return y + _f32(bias) if bias is not None else y


def weight_quant_batch_matmul_v3(x: Array, weight: Array, antiquantScale: Array, antiquantOffsetOptional: Optional[Array],
                                 quantScaleOptional: Optional[Array], quantOffsetOptional: Optional[Array],
                                 biasOptional: Optional[Array], antiquantGroupSize: int, innerPrecise: int) -> Array:
    """WeightQuantBatchMatmulV2; innerPrecise (a precision knob) is ignored."""
    return custom.weight_quant_batch_matmul_v2(x, weight, antiquantScale, antiquantOffsetOptional, quantScaleOptional,
                                               quantOffsetOptional, biasOptional, antiquantGroupSize)


def ascend_quant(x: Array, scale: Array, offset: Optional[Array], sqrtMode: bool, roundMode: str,
                 dstType: int) -> Array:
    """AscendQuantV3 along the last dim."""
    return custom.ascend_quant_v3(x, scale, offset, sqrtMode, roundMode, dstType, -1)


_QUANT_RANGE = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255), np.dtype(np.int32): (-2**31, 2**31 - 1)}


def quantize(x: Array, scales: Array, zeroPoints: Optional[Array], dtype: np.dtype[Any], axis: int) -> Array:
    """out = saturate(round(x / scales + zeroPoints)) in dtype (int8, uint8 or int32; round half
    to even), scales and zeroPoints along x's dim axis (one element: per tensor)."""
    if np.dtype(dtype) not in _QUANT_RANGE:
        raise NotImplementedError(f"aclnnQuantize: dtype {np.dtype(dtype)}: the CPU reference writes int8, uint8 "
                                  f"or int32")
    xf = _f32(x)
    ax = axis % xf.ndim if xf.ndim else 0

    def along(t: Array) -> Array:
        v = _f32(t).reshape(-1)
        if v.size == 1 or not xf.ndim:
            return v.reshape(())
        shape = [1] * xf.ndim
        shape[ax] = v.size
        return v.reshape(shape)
    v = np.rint(xf / along(scales) + (along(zeroPoints) if zeroPoints is not None else np.float32(0)))
    lo, hi = _QUANT_RANGE[np.dtype(dtype)]
    out: Array = np.clip(v, lo, hi).astype(dtype)
    return out


def add_rms_norm_dynamic_quant(x1: Array, x2: Array, gamma: Array, smoothScale1Optional: Optional[Array],
                               smoothScale2Optional: Optional[Array], epsilon: float
                               ) -> tuple[Array, Optional[Array], Array, Array, Optional[Array]]:
    """x = x1 + x2, y = RmsNorm(x) * gamma, then DynamicQuant of y (by smoothScale1), and again
    by smoothScale2 when given: returns (y1Out, y2Out, xOut, scale1Out, scale2Out)."""
    y, _, xf = custom.add_rms_norm(x1, x2, gamma, epsilon)
    q1, s1 = custom.dynamic_quant(y, smoothScale1Optional)
    if smoothScale2Optional is not None:
        q2, s2 = custom.dynamic_quant(y, smoothScale2Optional)
        return q1, q2, xf, s1, s2
    return q1, None, xf, s1, None


def moe_gating_top_k_softmax_v2(x: Array, finishedOptional: Optional[Array], k: int, renorm: int,
                                outputSoftmaxResultFlag: bool) -> tuple[Array, Array, Optional[Array]]:
    """renorm 0: softmax over the experts, then top-k (as V1), the full softmax written when
    outputSoftmaxResultFlag; renorm 1: top-k of x, then softmax over those k."""
    if renorm not in (0, 1):
        raise _invalid("MoeGatingTopKSoftmaxV2", "renorm", f"expected 0 or 1, got {renorm}")
    xf = _f32(x)
    if renorm == 0:
        y, idx, _ = custom.moe_gating_top_k_softmax(x, finishedOptional, k)
        if outputSoftmaxResultFlag:
            z = np.exp(xf - xf.max(axis=-1, keepdims=True))
            return y, idx, z / z.sum(axis=-1, keepdims=True)
        return y, idx, None
    e = xf.shape[-1]
    if not 0 < k <= e:
        raise _invalid("MoeGatingTopKSoftmaxV2", "k", f"expected 0 < k <= {e}, got {k}")
    order = np.argsort(-xf, axis=-1, kind="stable")[..., :k]
    top = np.take_along_axis(xf, order, axis=-1)
    z = np.exp(top - top.max(axis=-1, keepdims=True))
    idx = order.astype(np.int32)
    if finishedOptional is not None:
        idx = np.where(np.asarray(finishedOptional, bool)[..., None], np.int32(e), idx)
    return z / z.sum(axis=-1, keepdims=True), idx, None


def matmul_weight_nz(self: Array, mat2: Array, out: Array, cubeMathType: int) -> Array:
    """aclnnMatmulWeightNz (CANN 8.5.0 on, so no formula of the 8.1.RC1 table: the numpy
    backend runs it through private_formats.matmul_weight_nz_on_cpu): out = self @ mat2, mat2
    decoded from FRACTAL_NZ (private_formats checks its format, n, k > 1 and storage), after
    the checks aclnn_matmul.cpp's CheckWeightNzParam makes before it reads the storage, on
    the SoC the numpy backend follows (ASCEND_ACLNN_SOC_NAME)."""
    from ..soc import npu_arch, soc_name
    op, arch, soc = "MatmulWeightNz", npu_arch(), soc_name()
    a2, bf16 = arch == "DAV_2201", arch in ("DAV_2201", "DAV_3510")
    allowed = (np.float32, np.float16, ml_bfloat16) if bf16 else (np.float32, np.float16)
    for name, a in (("self", self), ("mat2", mat2), ("out", out)):
        if a.dtype not in allowed:
            raise _invalid(op, name, f"dtype must be {', '.join(np.dtype(d).name for d in allowed)} on the SoC {soc}, "
                                     f"got {a.dtype.name}")
    f32 = np.float32 in (self.dtype, mat2.dtype)
    if f32 and not a2:
        raise _invalid(op, "mat2", f"a float32 weight NZ is unsupported by the SoC {soc} (Atlas A2/A3 only)")
    if cubeMathType == 0 and f32 and not bf16:
        raise _invalid(op, "cubeMathType", f"float32 is not supported under KEEP_DTYPE on the SoC {soc}")
    if cubeMathType == 0 and out.dtype == np.float16 and self.dtype == np.float32:
        raise _invalid(op, "out", "under KEEP_DTYPE a float32 self needs a float32 out, got float16")
    if {self.dtype, mat2.dtype} == {np.dtype(np.float16), np.dtype(ml_bfloat16)}:
        raise _invalid(op, "mat2", f"self and mat2 must be both float16 or both bfloat16, got {self.dtype.name} and "
                                   f"{mat2.dtype.name}")
    if arch not in ("DAV_2201", "DAV_2002", "DAV_3510"):
        raise _invalid(op, "mat2", f"weight NZ is unsupported by the SoC {soc}")
    if self.ndim != 2 or mat2.ndim != 2:
        raise _invalid(op, "self", f"self and mat2 must be 2-D, got {self.shape} and {mat2.shape}")
    if self.shape[1] != mat2.shape[0]:
        raise _invalid(op, "mat2", f"the k-axis of self {self.shape} and mat2 {mat2.shape} differ")
    if (cubeMathType == -1 and not a2) or not -1 <= cubeMathType <= 3:
        raise _invalid(op, "cubeMathType", f"cubeMathType {cubeMathType} is not supported on the SoC {soc}")
    if tuple(out.shape) != (self.shape[0], mat2.shape[1]):
        raise _invalid(op, "out", f"out must be {(self.shape[0], mat2.shape[1])}, got {out.shape}")
    if out.dtype not in (self.dtype, np.float32):
        raise _invalid(op, "out", f"out dtype {out.dtype.name} must be self's ({self.dtype.name}) or float32")
    product: Array = np.matmul(self.astype(np.float64), mat2.astype(np.float64)).astype(np.float32)
    return product


_GMM_HEAD = ("const aclTensorList *x, const aclTensorList *weight, const aclTensorList *biasOptional, "
             "const aclTensorList *scaleOptional, const aclTensorList *offsetOptional, "
             "const aclTensorList *antiquantScaleOptional, const aclTensorList *antiquantOffsetOptional, ")

FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnGroupedMatmul", _GMM_HEAD + "const aclIntArray *groupListOptional, int64_t splitItem, "
       "const aclTensorList *y", grouped_matmul,
       "y_i = x_i @ w_i + b_i per group, ND weights; " + _DOC + "aclnnGroupedMatmul.md"),
    _f("aclnnGroupedMatmulV2", _GMM_HEAD + "const aclIntArray *groupListOptional, int64_t splitItem, "
       "int64_t groupType, const aclTensorList *y", grouped_matmul_v2,
       "y_i = x_i @ w_i + b_i per group (groupType 0/-1); " + _DOC + "aclnnGroupedMatmulV2.md"),
    _f("aclnnGroupedMatmulV3", _GMM_HEAD + "const aclTensor *groupListOptional, int64_t splitItem, "
       "int64_t groupType, const aclTensorList *y", grouped_matmul_v2,
       "y_i = x_i @ w_i + b_i per group, groupList a tensor; " + _DOC + "aclnnGroupedMatmulV3.md"),
    _f("aclnnGroupedMatmulV4", _GMM_HEAD + "const aclTensorList *perTokenScaleOptional, "
       "const aclTensor *groupListOptional, const aclTensorList *activationInputOptional, "
       "const aclTensorList *activationQuantScaleOptional, const aclTensorList *activationQuantOffsetOptional, "
       "int64_t splitItem, int64_t groupType, int64_t groupListType, int64_t actType, aclTensorList *out, "
       "aclTensorList *activationFeatureOutOptional, aclTensorList *dynQuantScaleOutOptional",
       grouped_matmul_v4, "y_i = x_i @ w_i + b_i per group, groups as cumsum or counts; "
       + _DOC + "aclnnGroupedMatmulV4.md"),
    _f("aclnnQuantMatmul", "const aclTensor *x1, const aclTensor *x2, const aclTensor *bias, float deqScale, "
       "aclTensor *out", quant_matmul, "(x1 @ x2 + bias) * deqScale; " + _DOC + "aclnnQuantMatmul.md"),
    _f("aclnnQuantMatmulV2", "const aclTensor *x1, const aclTensor *x2, const aclTensor *bias, "
       "const aclTensor *deqScale, bool adjX1, bool adjX2, aclTensor *out", quant_matmul_v2,
       "(op(x1) @ op(x2) + bias) * deqScale; " + _DOC + "aclnnQuantMatmulV2.md"),
    _f("aclnnQuantMatmulV3", "const aclTensor *x1, const aclTensor *x2, const aclTensor *scale, "
       "const aclTensor *offset, const aclTensor *bias, bool transposeX1, bool transposeX2, const aclTensor *out",
       quant_matmul_v3, "(op(x1) @ op(x2) + bias) * scale; " + _DOC + "aclnnQuantMatmulV3.md"),
    _f("aclnnQuantMatmulV4", "const aclTensor *x1, const aclTensor *x2, const aclTensor *scale, "
       "const aclTensor *offset, const aclTensor *pertokenScaleOptional, const aclTensor *bias, bool transposeX1, "
       "bool transposeX2, const aclTensor *out",
       quant_matmul_v4, "(op(x1) @ op(x2) + bias) * scale * pertokenScale; " + _DOC + "aclnnQuantMatmulV4.md"),
    _f("aclnnWeightQuantBatchMatmul",
       "const aclTensor *x1, const aclTensor *x2, const aclTensor *diagonalMatrix, const aclTensor *deqOffset, "
       "const aclTensor *deqScale, const aclTensor *addOffset, const aclTensor *mulScale, const aclTensor *bias, "
       "bool transposeX1, bool transposeX2, float antiquantScale, float antiquantOffset, aclTensor *out",
       weight_quant_batch_matmul, "x1 @ ((x2 + antiquantOffset) * antiquantScale) + bias; "
       + _DOC + "aclnnWeightQuantBatchMatmul.md"),
    _f("aclnnWeightQuantBatchMatmulV3",
       "const aclTensor *x, const aclTensor *weight, const aclTensor *antiquantScale, "
       "const aclTensor *antiquantOffsetOptional, const aclTensor *quantScaleOptional, "
       "const aclTensor *quantOffsetOptional, const aclTensor *biasOptional, int antiquantGroupSize, "
       "int innerPrecise, const aclTensor *y",
       weight_quant_batch_matmul_v3, "as WeightQuantBatchMatmulV2; " + _DOC + "aclnnWeightQuantBatchMatmulV3.md"),
    _f("aclnnAscendQuant", "const aclTensor *x, const aclTensor *scale, const aclTensor *offset, bool sqrtMode, "
       "const char *roundMode, int32_t dstType, const aclTensor *y",
       ascend_quant, "int8 round(x*scale + offset) along the last dim; " + _DOC + "aclnnAscendQuant.md"),
    _f("aclnnQuantize", "const aclTensor *x, const aclTensor *scales, const aclTensor *zeroPoints, "
       "aclDataType dtype, int32_t axis, aclTensor *out",
       quantize, "saturate(round(x / scales + zeroPoints)) along axis; " + _DOC + "aclnnQuantize.md"),
    _f("aclnnAddRmsNormDynamicQuant",
       "const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, const aclTensor *smoothScale1Optional, "
       "const aclTensor *smoothScale2Optional, double epsilon, const aclTensor *y1Out, const aclTensor *y2Out, "
       "const aclTensor *xOut, const aclTensor *scale1Out, const aclTensor *scale2Out",
       add_rms_norm_dynamic_quant, "AddRmsNorm, then per-token int8 quantisation; "
       + _DOC + "aclnnAddRmsNormDynamicQuant.md"),
    _f("aclnnMoeGatingTopKSoftmaxV2",
       "const aclTensor *x, const aclTensor *finishedOptional, int64_t k, int64_t renorm, "
       "bool outputSoftmaxResultFlag, const aclTensor *yOut, const aclTensor *expertIdxOut, "
       "const aclTensor *softmaxResultOutOptional",
       moe_gating_top_k_softmax_v2, "softmax then top-k (renorm 0) or top-k then softmax (1); "
       + _DOC + "aclnnMoeGatingTopKSoftmaxV2.md"),
])


def moe_token_permute(tokens: Array, indices: Array, numOutTokens: int, paddedMode: bool) -> tuple[Array, Array]:
    """Tokens grouped by expert: with the (T, k) expert indices flattened, sortedIndices =
    their stable argsort, and permuteTokens[i] = tokens[sortedIndices[i] // k]; the first
    numOutTokens rows are kept (all when numOutTokens <= 0). paddedMode is refused."""
    if paddedMode:
        raise NotImplementedError("aclnnMoeTokenPermute: paddedMode is not supported by the CPU reference")
    t, idx = np.asarray(tokens), np.asarray(indices).astype(np.int64)
    k = 1 if idx.ndim == 1 else idx.shape[-1]
    if idx.shape[0] != t.shape[0]:
        raise _invalid("MoeTokenPermute", "indices", f"expected {t.shape[0]} rows (tokens'), got {idx.shape}")
    order = np.argsort(idx.reshape(-1), kind="stable")
    n = order.size if numOutTokens <= 0 else min(numOutTokens, order.size)
    return t[order[:n] // k], order.astype(np.int32)


def moe_token_unpermute(permutedTokens: Array, sortedIndices: Array, probsOptional: Optional[Array],
                        paddedMode: bool, restoreShapeOptional: Optional[Sequence[int]]) -> Array:
    """The inverse of MoeTokenPermute: row i of permutedTokens goes back to flat slot
    sortedIndices[i] of a (T * k, H) buffer (rows past permutedTokens' count stay 0), which is
    read as (T, k, H), weighted by probs (T, k) when given, and summed over k."""
    if paddedMode:
        raise NotImplementedError("aclnnMoeTokenUnpermute: paddedMode is not supported by the CPU reference")
    p = _f32(permutedTokens)
    order = np.asarray(sortedIndices).astype(np.int64).reshape(-1)
    k = np.shape(probsOptional)[-1] if probsOptional is not None and np.ndim(probsOptional) == 2 else 1
    if order.size % k:
        raise _invalid("MoeTokenUnpermute", "sortedIndices", f"expected a multiple of k {k} elements, got {order.size}")
    buf = np.zeros((order.size,) + p.shape[1:], np.float32)
    buf[order[:p.shape[0]]] = p
    rows = buf.reshape((order.size // k, k) + p.shape[1:])
    if probsOptional is not None:
        rows = rows * _f32(probsOptional).reshape(rows.shape[:2] + (1,) * (rows.ndim - 2))
    out: Array = rows.sum(axis=1)
    return out


FORMULAS = dict(FORMULAS, **dict([
    _f("aclnnMoeTokenPermute",
       "const aclTensor *tokens, const aclTensor *indices, int64_t numOutTokens, bool paddedMode, "
       "const aclTensor *permuteTokensOut, const aclTensor *sortedIndicesOut",
       moe_token_permute, "tokens grouped by expert via a stable argsort of the indices; "
       + _DOC + "aclnnMoeTokenPermute.md"),
    _f("aclnnMoeTokenUnpermute",
       "const aclTensor *permutedTokens, const aclTensor *sortedIndices, const aclTensor *probsOptional, "
       "bool paddedMode, const aclIntArray *restoreShapeOptional, const aclTensor *out",
       moe_token_unpermute, "rows scattered back by sortedIndices, weighted by probs, summed over k; "
       + _DOC + "aclnnMoeTokenUnpermute.md"),
]))
