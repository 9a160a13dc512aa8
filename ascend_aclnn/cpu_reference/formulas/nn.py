"""Hand formulas for common network operators that have no aten CPU kernel to run (the
batch-norm family's CUDA-only aten ops), that op-plugin reaches only through arguments the
generator cannot bind (SoftmaxBackward's input dtype), or that only CANN defines (Gemm,
OneHot, the ONNX-style reductions, the training kernels of torch_npu's fused operators).

Each formula follows its aclnn page (``doc``); where the page is silent the docstring says
what was chosen. Inputs are widened to float32 (float64 stays float64) and every output is
rounded once, by the runner's cast into the caller's array.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ._common import (_DOC, Array, Formula, _dim, _f, _f32, _ge_glu, _gelu, _glu_halves, _halves, _invalid, _sigmoid, _trailing_axes,
                      _erf)

__all__ = ["FORMULAS"]


def _wide(a: Any) -> Array:
    """float64 stays float64 (its reference must not lose digits), everything else float32."""
    arr = np.asarray(a)
    out: Array = arr.astype(np.float64 if arr.dtype == np.float64 else np.float32)
    return out


# ---------------------------------------------------------------------------------------------
# Softmax backwards
# ---------------------------------------------------------------------------------------------

def _gradient_and_output(op: str, gradOutput: Array, output: Array, dim: int) -> tuple[Array, Array, int]:
    """(g, y, dim) of a softmax backward, widened, checked alike in shape, dim normalised."""
    g, y = _wide(gradOutput), _wide(output)
    if g.shape != y.shape:
        raise _invalid(op, "output", f"expected the shape of gradOutput {g.shape}, got {y.shape}")
    return g, y, _dim(op, y.ndim, dim)


def softmax_backward(gradOutput: Array, output: Array, dim: int) -> Array:
    """grad_in = y * (g - sum(g * y, dim)), y the forward's output."""
    g, y, d = _gradient_and_output("SoftmaxBackward", gradOutput, output, dim)
    out: Array = y * (g - np.sum(g * y, axis=d, keepdims=True))
    return out


def log_softmax_backward(gradOutput: Array, output: Array, dim: int) -> Array:
    """grad_in = g - exp(y) * sum(g, dim), y the forward's (log-softmax) output."""
    g, y, d = _gradient_and_output("LogSoftmaxBackward", gradOutput, output, dim)
    out: Array = g - np.exp(y) * np.sum(g, axis=d, keepdims=True)
    return out


# ---------------------------------------------------------------------------------------------
# Batch norm family (channel dim 1; statistics over every other dim)
# ---------------------------------------------------------------------------------------------

def _channel(op: str, x: Array) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    if x.ndim < 2:
        raise _invalid(op, "input", f"expected at least 2 dims (N, C, ...), got shape {x.shape}")
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return x.shape[1], axes, shape


def _per_channel(op: str, t: Optional[Array], c: int, name: str, default: float) -> Array:
    if t is None:
        return np.full(c, default, np.float32)
    v = _wide(t)
    if v.shape != (c,):
        raise _invalid(op, name, f"expected shape ({c},) (input's channels), got {v.shape}")
    return v


def batch_norm(input: Array, weight: Optional[Array], bias: Optional[Array], runningMean: Optional[Array],
               runningVar: Optional[Array], training: bool, momentum: float, eps: float
               ) -> tuple[Optional[Array], Optional[Array], Array, Optional[Array], Optional[Array]]:
    """y = (x - mean) * invstd * weight + bias per channel (dim 1): returns (runningMean,
    runningVar, output, saveMean, saveInvstd), the first two written in place.

    training: mean/var of the batch (biased var for the norm), runningMean/Var updated as
    (1 - momentum) * running + momentum * batch (unbiased var), saveMean/saveInvstd the
    batch's mean and 1/sqrt(var + eps). Not training: the running statistics normalise,
    and saveMean/saveInvstd are left alone (the doc does not say what they receive then)."""
    x = _wide(input)
    c, axes, shape = _channel("BatchNorm", x)
    w = _per_channel("BatchNorm", weight, c, "weight", 1.0)
    b = _per_channel("BatchNorm", bias, c, "bias", 0.0)
    rm = None if runningMean is None else _per_channel("BatchNorm", runningMean, c, "runningMean", 0.0)
    rv = None if runningVar is None else _per_channel("BatchNorm", runningVar, c, "runningVar", 1.0)
    if training:
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
        n = x.size // max(c, 1)
        if rm is not None:
            rm = (1 - momentum) * rm + momentum * mean
        if rv is not None:
            rv = (1 - momentum) * rv + momentum * var * (n / max(n - 1, 1))
        save_mean: Optional[Array] = mean
        save_invstd: Optional[Array] = 1.0 / np.sqrt(var + eps)
        use_mean, invstd = mean, 1.0 / np.sqrt(var + eps)
    else:
        if rm is None or rv is None:
            raise _invalid("BatchNorm", "runningMean" if rm is None else "runningVar",
                           "expected the running statistics when training is false, got NULL")
        save_mean = save_invstd = None
        use_mean, invstd = rm, 1.0 / np.sqrt(rv + eps)
    y = (x - use_mean.reshape(shape)) * (invstd * w).reshape(shape) + b.reshape(shape)
    return rm, rv, y, save_mean, save_invstd


def batch_norm_stats(input: Array, eps: float) -> tuple[Array, Array]:
    """The batch's per-channel mean and invstd = 1/sqrt(biased var + eps)."""
    x = _wide(input)
    _, axes, _ = _channel("BatchNormStats", x)
    mean: Array = x.mean(axis=axes)
    return mean, 1.0 / np.sqrt(x.var(axis=axes) + eps)


def batch_norm_elemt(input: Array, weight: Optional[Array], bias: Optional[Array], mean: Array,
                     invstd: Array, eps: float) -> tuple[None, None, Array]:
    """output = (x - mean) * invstd * weight + bias, with given per-channel statistics (eps is
    already in invstd). mean and invstd are declared writable in the header but only read:
    they are left alone."""
    x = _wide(input)
    c, _, shape = _channel("BatchNormElemt", x)
    w = _per_channel("BatchNormElemt", weight, c, "weight", 1.0)
    b = _per_channel("BatchNormElemt", bias, c, "bias", 0.0)
    m = _per_channel("BatchNormElemt", mean, c, "mean", 0.0)
    s = _per_channel("BatchNormElemt", invstd, c, "invstd", 1.0)
    return None, None, (x - m.reshape(shape)) * (s * w).reshape(shape) + b.reshape(shape)


def batch_norm_gather_stats_with_counts(input: Array, mean: Array, invstd: Array, runningMean: Optional[Array],
                                        runningVar: Optional[Array], momentum: float, eps: float, counts: Array
                                        ) -> tuple[Optional[Array], Optional[Array], Array, Array]:
    """Combine per-device statistics (mean/invstd of shape (D, C), counts (D,)) into the global
    mean and invstd: returns (runningMean, runningVar, meanAll, invstdAll).

    var_d = 1/invstd_d^2 - eps; the global mean is the count-weighted mean; the global
    (biased) var the count-weighted mean of var_d + (mean_d - mean)^2. The running
    statistics move by momentum, the variance Bessel-corrected with the total count."""
    m, s, n = _wide(mean), _wide(invstd), _wide(counts).reshape(-1)
    if m.ndim != 2 or s.shape != m.shape or n.shape != (m.shape[0],):
        raise _invalid("BatchNormGatherStatsWithCounts", "counts", f"expected mean/invstd (D, C) and counts (D,), "
                                                                    f"got {m.shape}, {s.shape}, {n.shape}")
    total = n.sum()
    g_mean = (n[:, None] * m).sum(axis=0) / total
    var_d = 1.0 / (s * s) - eps
    g_var = (n[:, None] * (var_d + (m - g_mean) ** 2)).sum(axis=0) / total
    rm, rv = runningMean, runningVar
    if rm is not None:
        rm = (1 - momentum) * _wide(rm) + momentum * g_mean
    if rv is not None:
        rv = (1 - momentum) * _wide(rv) + momentum * g_var * total / max(total - 1, 1)
    return rm, rv, g_mean, 1.0 / np.sqrt(g_var + eps)


def batch_norm_reduce_backward(gradOut: Array, input: Array, mean: Array, invstd: Array, weight: Optional[Array],
                               inputG: bool, weightG: bool, biasG: bool
                               ) -> tuple[Optional[Array], Optional[Array], Optional[Array], Optional[Array]]:
    """sumDy = sum(dy), sumDyXmu = sum(dy * (x - mean)), gradWeight = sumDyXmu * invstd,
    gradBias = sumDy, per channel; each only when its flag asks for it (sumDy/sumDyXmu when
    inputG)."""
    g, x = _wide(gradOut), _wide(input)
    c, axes, shape = _channel("BatchNormReduceBackward", x)
    m = _per_channel("BatchNormReduceBackward", mean, c, "mean", 0.0)
    s = _per_channel("BatchNormReduceBackward", invstd, c, "invstd", 1.0)
    sum_dy = g.sum(axis=axes)
    sum_dy_xmu = (g * (x - m.reshape(shape))).sum(axis=axes)
    return (sum_dy if inputG else None, sum_dy_xmu if inputG else None,
            sum_dy_xmu * s if weightG else None, sum_dy if biasG else None)


def batch_norm_elemt_backward(gradOut: Array, input: Array, mean: Array, invstd: Array, weight: Optional[Array],
                              sumDy: Array, sumDyXmu: Array, counter: Array) -> tuple[None, Array]:
    """grad_in = (dy - sumDy/N - (x - mean) * invstd^2 * sumDyXmu/N) * invstd * weight, N the
    total of counter (the element count per channel over every device). counter is declared
    writable but only read: left alone."""
    g, x = _wide(gradOut), _wide(input)
    c, _, shape = _channel("BatchNormElemtBackward", x)
    m = _per_channel("BatchNormElemtBackward", mean, c, "mean", 0.0).reshape(shape)
    s = _per_channel("BatchNormElemtBackward", invstd, c, "invstd", 1.0).reshape(shape)
    w = _per_channel("BatchNormElemtBackward", weight, c, "weight", 1.0).reshape(shape)
    n = float(_wide(counter).sum())
    if n <= 0:
        raise _invalid("BatchNormElemtBackward", "counter", f"expected a positive total count, got {n}")
    mean_dy = _per_channel("BatchNormElemtBackward", sumDy, c, "sumDy", 0.0).reshape(shape) / n
    mean_dy_xmu = _per_channel("BatchNormElemtBackward", sumDyXmu, c, "sumDyXmu", 0.0).reshape(shape) / n
    return None, (g - mean_dy - (x - m) * s * s * mean_dy_xmu) * s * w


# ---------------------------------------------------------------------------------------------
# Norms of torch_npu's fused operators: backwards
# ---------------------------------------------------------------------------------------------

def rms_norm_grad(dy: Array, x: Array, rstd: Array, gamma: Array) -> tuple[Array, Array]:
    """Backward of y = x * rstd * gamma over gamma's trailing dims: dx = rstd * (dy*gamma) -
    x * rstd^3 * mean(dy*gamma*x); dgamma = sum over the leading dims of dy * x * rstd.
    Returns (dxOut, dgammaOut); dgamma float32 of gamma's shape."""
    d, xf, g = _f32(dy), _f32(x), _f32(gamma)
    axes = _trailing_axes("RmsNormGrad", xf, g, "gamma")
    r = _f32(rstd).reshape(xf.shape[:xf.ndim - g.ndim] + (1,) * g.ndim)
    dg = d * g
    dx = r * dg - xf * r ** 3 * np.mean(dg * xf, axis=axes, keepdims=True)
    lead = tuple(range(xf.ndim - g.ndim))
    return dx, np.sum(d * xf * r, axis=lead).reshape(g.shape)


def swi_glu_grad(yGrad: Array, x: Array, dim: int) -> Array:
    """Backward of SwiGlu (y = A * sigmoid(A) * B): dA = dy * B * sig(A) * (1 + A * (1 - sig(A))),
    dB = dy * A * sig(A), concatenated along dim as x's halves are."""
    a, b = _halves("SwiGluGrad", _f32(x), dim)
    g = _f32(yGrad)
    if g.shape != a.shape:
        raise _invalid("SwiGluGrad", "yGrad", f"expected the shape of half of x {a.shape}, got {g.shape}")
    s = _sigmoid(a)
    return np.concatenate((g * b * s * (1 + a * (1 - s)), g * a * s), axis=dim)


def _gelu_grad(x: Array, tanh: bool) -> Array:
    if tanh:
        k = np.sqrt(2.0 / np.pi)
        inner = k * (x + 0.044715 * x ** 3)
        t = np.tanh(inner)
        out: Array = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    else:
        out = 0.5 * (1 + _erf(x / np.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    return out.astype(np.float32)


def gelu(self: Array) -> Array:
    """aclnnGelu in its tanh form: 8.1.RC1's TBE gelu kernel computes
    x / (1 + exp(-sqrt(8/pi) (x + 0.044715 x^3))) on every path, where the header's Phi
    suggests the erf form (up to 3.6e-4 apart)."""
    return _gelu(_f32(self), True)


def gelu_backward(gradOutput: Array, self: Array) -> Array:
    """aclnnGeluBackward: the derivative of the tanh form, as 8.1.RC1's TBE gelu_grad computes it."""
    out: Array = _f32(gradOutput) * _gelu_grad(_f32(self), True)
    return out


def ge_glu(self: Array, dim: int, approximate: int) -> tuple[Array, Array]:
    """out = A * Gelu(B) with A, B the halves of self along dim (GeGlu activates the right
    half, as GeGluV3 with activateLeft false): returns (out, outGelu)."""
    return _ge_glu("GeGlu", self, dim, approximate, False)


def _ge_glu_backward(op: str, gradOutput: Array, self: Array, dim: int, approximate: int,
                     left: bool) -> Array:
    a, b = _glu_halves(op, self, dim, approximate)
    g = _f32(gradOutput)
    act, other = (a, b) if left else (b, a)
    d_act = g * other * _gelu_grad(act, bool(approximate))
    d_other = g * _gelu(act, bool(approximate))
    return np.concatenate((d_act, d_other) if left else (d_other, d_act), axis=dim)


def ge_glu_backward(gradOutput: Array, self: Array, gelu: Array, dim: int, approximate: int) -> Array:
    """Backward of GeGlu (out = A * Gelu(B)), recomputing Gelu'(B) from self; the forward's
    gelu output is only an input the kernel may reuse."""
    return _ge_glu_backward("GeGluBackward", gradOutput, self, dim, approximate, False)


def ge_glu_v3_backward(gradOutput: Array, self: Array, gelu: Array, dim: int, approximate: int,
                       activateLeft: bool) -> Array:
    """Backward of GeGluV3: the activated half is the left one when activateLeft."""
    return _ge_glu_backward("GeGluV3Backward", gradOutput, self, dim, approximate, activateLeft)


def deep_norm_grad(dy: Array, x: Array, gx: Array, gamma: Array, mean: Array, rstd: Array, alpha: float
                   ) -> tuple[Array, Array, Array, Array]:
    """Backward of DeepNorm (x' = alpha*x + gx, y = (x' - mean) * rstd * gamma + beta): with
    xhat = (x' - mean) * rstd and dxhat = dy * gamma, dx' = rstd * (dxhat - mean(dxhat) -
    xhat * mean(dxhat * xhat)); returns (dxOut = alpha * dx', dgxOut = dx', dbetaOut =
    sum dy, dgammaOut = sum dy * xhat), the sums over the leading dims."""
    d, g = _f32(dy), _f32(gamma)
    xp = np.float32(alpha) * _f32(x) + _f32(gx)
    axes = _trailing_axes("DeepNormGrad", xp, g, "gamma")
    keep = xp.shape[:xp.ndim - g.ndim] + (1,) * g.ndim
    xhat = (xp - _f32(mean).reshape(keep)) * _f32(rstd).reshape(keep)
    dxhat = d * g
    dxp = _f32(rstd).reshape(keep) * (dxhat - dxhat.mean(axis=axes, keepdims=True)
                                      - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True))
    lead = tuple(range(xp.ndim - g.ndim))
    return np.float32(alpha) * dxp, dxp, d.sum(axis=lead), (d * xhat).sum(axis=lead)


def add_layer_norm_grad(dy: Array, x1: Array, x2: Array, rstd: Array, mean: Array, gamma: Array,
                        dsumOptional: Optional[Array]) -> tuple[Array, Array, Array]:
    """Backward of AddLayerNorm (x = x1 + x2, LayerNorm over gamma's trailing dims): dx as
    LayerNorm's (plus dsum, the gradient reaching the sum output, when given); returns
    (dxOut, dgammaOut, dbetaOut). dx is the gradient of both x1 and x2."""
    d, g = _f32(dy), _f32(gamma)
    xf = _f32(x1) + _f32(x2)
    axes = _trailing_axes("AddLayerNormGrad", xf, g, "gamma")
    keep = xf.shape[:xf.ndim - g.ndim] + (1,) * g.ndim
    r = _f32(rstd).reshape(keep)
    xhat = (xf - _f32(mean).reshape(keep)) * r
    dxhat = d * g
    dx = r * (dxhat - dxhat.mean(axis=axes, keepdims=True) - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True))
    if dsumOptional is not None:
        dx = dx + _f32(dsumOptional)
    lead = tuple(range(xf.ndim - g.ndim))
    return dx, (d * xhat).sum(axis=lead), d.sum(axis=lead)


# ---------------------------------------------------------------------------------------------
# Instance norm, Gemm, OneHot
# ---------------------------------------------------------------------------------------------

def instance_norm(x: Array, gamma: Array, beta: Array, dataFormat: str, eps: float
                  ) -> tuple[Array, Array, Array]:
    """y = (x - mean) / sqrt(var + eps) * gamma + beta, mean and (biased) variance over the
    spatial dims of each sample and channel: returns (y, mean, variance).

    dataFormat "NCHW" (channels at dim 1) or "NHWC" (channels last). Choice: mean and
    variance keep x's rank with size-1 spatial dims (N, C, 1, 1) / (N, 1, 1, C)."""
    xf = _f32(x)
    if dataFormat not in ("NCHW", "NHWC", "NCDHW", "NDHWC"):
        raise _invalid("InstanceNorm", "dataFormat", f"expected 'NCHW' or 'NHWC', got {dataFormat!r}")
    if xf.ndim < 3:
        raise _invalid("InstanceNorm", "x", f"expected at least 3 dims, got shape {xf.shape}")
    last = dataFormat.endswith("C")
    cdim = xf.ndim - 1 if last else 1
    axes = tuple(i for i in range(1, xf.ndim) if i != cdim)
    cshape = [1] * xf.ndim
    cshape[cdim] = xf.shape[cdim]
    mean = xf.mean(axis=axes, keepdims=True)
    var = xf.var(axis=axes, keepdims=True)
    g, b = _f32(gamma).reshape(cshape), _f32(beta).reshape(cshape)
    return (xf - mean) / np.sqrt(var + np.float32(eps)) * g + b, mean, var


def gemm(A: Array, B: Array, C: Array, alpha: float, beta: float, transA: int, transB: int) -> Array:
    """out = alpha * op(A) @ op(B) + beta * C, op transposing a 2-D matrix when its flag is
    nonzero; C broadcasts to the product's shape."""
    a, b = _f32(A), _f32(B)
    if a.ndim != 2 or b.ndim != 2:
        raise _invalid("Gemm", "A" if a.ndim != 2 else "B", f"expected 2-D matrices, got {a.shape} and {b.shape}")
    a = a.T if transA else a
    b = b.T if transB else b
    if a.shape[1] != b.shape[0]:
        raise _invalid("Gemm", "B", f"expected op(B) with {a.shape[1]} rows (op(A)'s columns), got {b.shape}")
    out: Array = np.float32(alpha) * (a @ b) + np.float32(beta) * _f32(C)
    return out


def one_hot(self: Array, numClasses: int, onValue: Array, offValue: Array, axis: int) -> Array:
    """out[..., k, ...] = onValue where self == k, else offValue, the new class dim inserted at
    axis (-1: last); numClasses < 0 takes max(self) + 1. Out-of-range indices give an all-off
    row. Returned in onValue's dtype."""
    idx = np.asarray(self).astype(np.int64)
    n = int(idx.max()) + 1 if numClasses < 0 and idx.size else max(int(numClasses), 0)
    on, off = np.asarray(onValue).reshape(-1), np.asarray(offValue).reshape(-1)
    if on.size != 1 or off.size != 1:
        raise _invalid("OneHot", "onValue" if on.size != 1 else "offValue", "expected one element")
    if not -idx.ndim - 1 <= axis <= idx.ndim:
        raise _invalid("OneHot", "axis", f"expected an axis in [{-idx.ndim - 1}, {idx.ndim}], got {axis}")
    hot = idx[..., None] == np.arange(n)
    out = np.where(hot, on[0], off[0]).astype(on.dtype)
    return np.moveaxis(out, -1, axis if axis >= 0 else axis + idx.ndim + 1)


# ---------------------------------------------------------------------------------------------
# Small element-wise and reduction operators only CANN defines (ONNX-style)
# ---------------------------------------------------------------------------------------------

def equal(self: Array, other: Array) -> Array:
    """One bool: the two tensors have the same shape and equal elements (torch.equal)."""
    a, b = np.asarray(self), np.asarray(other)
    return np.array(a.shape == b.shape and bool(np.all(a == b)), dtype=np.bool_).reshape(1)


def inplace_fill_diagonal(selfRef: Array, fillValue: Any, wrap: bool) -> Array:
    """selfRef's main diagonal set to fillValue (every dim of equal size, or a tall 2-D matrix
    whose diagonal restarts every (cols + 1) rows when wrap), as torch's fill_diagonal_."""
    out = np.array(selfRef, copy=True)
    if out.ndim < 2 or (out.ndim > 2 and len(set(out.shape)) != 1):
        raise _invalid("InplaceFillDiagonal", "selfRef", f"expected 2 dims, or every dim of one size, got {out.shape}")
    if out.ndim == 2:
        rows, cols = out.shape
        limit = rows if wrap else min(rows, cols)
        flat = out.reshape(-1)
        step = cols + 1
        end = limit * cols if wrap else (limit - 1) * step + 1
        flat[:end:step] = fillValue
        return flat.reshape(out.shape)
    idx = np.arange(out.shape[0])
    out[(idx,) * out.ndim] = fillValue
    return out


def _fold(op: str, tensors: Sequence[Array], combine: Callable[[Array, Array], Array],
          load: Callable[[Any], Array] = np.asarray) -> Array:
    """combine over every tensor of the list (broadcast together), first to last."""
    if not tensors:
        raise _invalid(op, "tensors", "expected at least one tensor")
    out: Array = load(tensors[0])
    for t in tensors[1:]:
        out = combine(out, load(t))
    return out


def max_n(tensors: Sequence[Array]) -> Array:
    """The element-wise maximum of every tensor (broadcast together); NaN propagates."""
    return _fold("MaxN", tensors, np.maximum)


def min_n(tensors: Sequence[Array]) -> Array:
    """The element-wise minimum of every tensor (broadcast together); NaN propagates."""
    return _fold("MinN", tensors, np.minimum)


def sum_list(tensors: Sequence[Array]) -> Array:
    """The element-wise sum of every tensor of the list (broadcast together)."""
    return _fold("Sum", tensors, np.add, _wide)


def _axes(op: str, ndim: int, axes: Sequence[int], noop: bool, name: str) -> Optional[tuple[int, ...]]:
    """ONNX reduce axes: empty means every dim, or none when noop (noop_with_empty_axes)."""
    if not axes:
        return () if noop else tuple(range(ndim))
    return tuple(sorted({_dim(op, ndim, int(a), name) for a in axes}))


def reduce_log_sum(data: Array, axes: Sequence[int], keepDims: bool, noopWithEmptyAxes: bool) -> Array:
    """log(sum(data over axes)) (ONNX ReduceLogSum)."""
    x = _wide(data)
    ax = _axes("ReduceLogSum", x.ndim, axes, noopWithEmptyAxes, "axes")
    with np.errstate(divide="ignore"):
        out: Array = np.log(np.sum(x, axis=ax, keepdims=keepDims)) if ax else np.log(x)
    return out


def mean_v2(self: Array, dim: Sequence[int], keepDim: bool, noopWithEmptyAxes: bool) -> Array:
    """mean over dim; an empty dim means every dim, or none when noopWithEmptyAxes."""
    x = _wide(self)
    ax = _axes("MeanV2", x.ndim, dim, noopWithEmptyAxes, "dim")
    out: Array = np.mean(x, axis=ax, keepdims=keepDim) if ax else x
    return out


def max_v2(self: Array, dims: Sequence[int], keepDims: bool, noopWithEmptyDims: bool) -> Array:
    """max over dims (amax); an empty dims means every dim, or none when noopWithEmptyDims."""
    x = np.asarray(self)
    ax = _axes("MaxV2", x.ndim, dims, noopWithEmptyDims, "dims")
    out: Array = np.max(x, axis=ax, keepdims=keepDims) if ax else x
    return out


def swish(self: Array, betaOptional: Optional[float]) -> Array:
    """out = x * sigmoid(beta * x), beta 1 when NULL."""
    x = _f32(self)
    beta = 1.0 if betaOptional is None else float(betaOptional)
    return x * _sigmoid(np.float32(beta) * x)


def swish_backward(gradOutput: Array, self: Array, betaOptional: Optional[float]) -> Array:
    """d/dx x*sigmoid(beta x) = s + beta * x * s * (1 - s), s = sigmoid(beta x), times the gradient."""
    x, g = _f32(self), _f32(gradOutput)
    beta = np.float32(1.0 if betaOptional is None else float(betaOptional))
    s = _sigmoid(beta * x)
    out: Array = g * (s + beta * x * s * (1 - s))
    return out


def shrink(self: Array, lambd: float, bias: float) -> Array:
    """ONNX Shrink: x + bias where x < -lambd, x - bias where x > lambd, else 0."""
    x = _wide(self)
    out: Array = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0.0)).astype(x.dtype)
    return out


def flatten(self: Array, axis: int) -> Array:
    """ONNX Flatten: a 2-D view (prod(dims before axis), prod(dims from axis on))."""
    x = np.asarray(self)
    if not -x.ndim <= axis <= x.ndim:
        raise _invalid("Flatten", "axis", f"expected an axis in [{-x.ndim}, {x.ndim}], got {axis}")
    a = axis % (x.ndim + 1) if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:a], dtype=np.int64)), -1) if x.size else \
        x.reshape(int(np.prod(x.shape[:a], dtype=np.int64)), int(np.prod(x.shape[a:], dtype=np.int64)))


def global_average_pool(self: Array) -> Array:
    """The mean over every spatial dim (from dim 2), kept as size 1 (ONNX GlobalAveragePool)."""
    x = _wide(self)
    if x.ndim < 3:
        raise _invalid("GlobalAveragePool", "self", f"expected (N, C, spatial...), got shape {x.shape}")
    out: Array = x.mean(axis=tuple(range(2, x.ndim)), keepdims=True)
    return out


def global_max_pool(self: Array) -> Array:
    """The max over every spatial dim (from dim 2), kept as size 1 (ONNX GlobalMaxPool)."""
    x = np.asarray(self)
    if x.ndim < 3:
        raise _invalid("GlobalMaxPool", "self", f"expected (N, C, spatial...), got shape {x.shape}")
    out: Array = x.max(axis=tuple(range(2, x.ndim)), keepdims=True)
    return out


def fatrelu_mul(input: Array, threshold: Array) -> Array:
    """out = FatRelu(A) * B, A/B the halves of the last dim, FatRelu(a) = a where a > threshold
    else 0."""
    a, b = _halves("FatreluMul", _f32(input), -1)
    t = _f32(threshold).reshape(-1)
    if t.size != 1:
        raise _invalid("FatreluMul", "threshold", f"expected one element, got {t.size}")
    return np.where(a > t[0], a, np.float32(0)) * b


def selu_backward(gradOutput: Array, result: Array) -> Array:
    """From the forward's output r: grad * scale where r > 0, grad * (r + scale*alpha) elsewhere
    (SELU's derivative written through its output)."""
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    g, r = _wide(gradOutput), _wide(result)
    out: Array = np.where(r > 0, g * scale, g * (r + scale * alpha)).astype(g.dtype)
    return out


def l1_loss_backward(gradOutput: Array, self: Array, target: Array, reduction: int) -> Array:
    """sign(self - target) * grad, divided by the element count for mean (1); reduction 0
    (none) takes an element-wise grad."""
    x, t, g = _wide(self), _wide(target), _wide(gradOutput)
    if reduction not in (0, 1, 2):
        raise _invalid("L1LossBackward", "reduction", f"expected 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    out: Array = np.sign(x - t) * g
    if reduction == 1:
        out = out / max(int(np.prod(np.broadcast_shapes(x.shape, t.shape), dtype=np.int64)), 1)
    return out


def kl_div_backward(gradOutput: Array, self: Array, target: Array, reduction: int, logTarget: bool) -> Array:
    """d/dself of target * (log target - self) (or exp(target) * (target - self) when logTarget)
    is -target (-exp(target)), times grad; mean (1) divides by the element count; batchmean
    is not an aclnn code."""
    x, t, g = _wide(self), _wide(target), _wide(gradOutput)
    if reduction not in (0, 1, 2):
        raise _invalid("KlDivBackward", "reduction", f"expected 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    d = -(np.exp(t) if logTarget else t) * g
    out: Array = np.broadcast_to(d, np.broadcast_shapes(x.shape, t.shape, np.shape(d))).astype(x.dtype)
    if reduction == 1:
        out = out / max(out.size, 1)
    return out


def gather_v2(self: Array, dim: int, index: Array) -> Array:
    """Rows of self picked along dim by index (any shape): out shape = self.shape[:dim] +
    index.shape + self.shape[dim+1:] (TensorFlow's GatherV2; negative indices count from
    the end)."""
    x, idx = np.asarray(self), np.asarray(index).astype(np.int64)
    d = _dim("GatherV2", x.ndim, dim)
    size = x.shape[d] if x.ndim else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise _invalid("GatherV2", "index", f"expected indices in [{-size}, {size - 1}], got "
                                            f"[{int(idx.min())}, {int(idx.max())}]")
    out: Array = np.take(x, idx, axis=d)
    return out


def gather_nd(self: Array, indices: Array, negativeIndexSupport: bool) -> Array:
    """out[i...] = self[indices[i..., :]]: the last dim of indices indexes self's first dims."""
    x, idx = np.asarray(self), np.asarray(indices).astype(np.int64)
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim == 0 or k > x.ndim:
        raise _invalid("GatherNd", "indices", f"expected a last dim <= {x.ndim}, got shape {idx.shape}")
    flat = idx.reshape(-1, k)
    bounds = np.array(x.shape[:k])
    low = -bounds if negativeIndexSupport else np.zeros_like(bounds)
    if flat.size and (np.any(flat < low) or np.any(flat >= bounds)):
        raise _invalid("GatherNd", "indices", f"an index is out of range for self {x.shape}")
    picked = x[tuple(flat.T)] if k else np.broadcast_to(x, (flat.shape[0],) + x.shape)
    return picked.reshape(idx.shape[:-1] + x.shape[k:])


def scatter_nd(data: Array, indices: Array, updates: Array) -> Array:
    """A copy of data with data[indices[i]] = updates[i] (ONNX ScatterNd; the last of repeated
    indices wins: the doc leaves repeats undefined)."""
    out = np.array(data, copy=True)
    idx, upd = np.asarray(indices).astype(np.int64), np.asarray(updates)
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim == 0 or not 1 <= k <= out.ndim or upd.shape != idx.shape[:-1] + out.shape[k:]:
        raise _invalid("ScatterNd", "updates", f"expected updates of shape {idx.shape[:-1] + out.shape[k:]} for "
                                               f"indices {idx.shape}, got {upd.shape}")
    flat_u = upd.reshape((-1,) + out.shape[k:])
    for i, row in enumerate(idx.reshape(-1, k)):
        out[tuple(int(v) for v in row)] = flat_u[i]
    return out


def slice_v2(self: Array, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int],
             steps: Sequence[int]) -> Array:
    """ONNX Slice: self[starts[i]:ends[i]:steps[i]] along axes[i] (steps 1 when empty)."""
    x = np.asarray(self)
    st = list(steps) or [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(st):
        raise _invalid("SliceV2", "axes", f"expected starts, ends, axes and steps of one length, got "
                                          f"{len(starts)}, {len(ends)}, {len(axes)}, {len(st)}")
    index: list[slice] = [slice(None)] * x.ndim
    for s, e, a, k in zip(starts, ends, axes, st):
        if k == 0:
            raise _invalid("SliceV2", "steps", "expected nonzero steps")
        index[_dim("SliceV2", x.ndim, int(a), "axes")] = slice(int(s), int(e), int(k))
    out: Array = x[tuple(index)]
    return out


def scale(x: Array, scale: Array, bias: Optional[Array], axis: int, numAxes: int, scaleFromBlob: bool) -> Array:
    """Caffe Scale: y = x * scale + bias, scale's dims lined up with x's from dim axis."""
    xf, s = _f32(x), _f32(scale)
    a = _dim("Scale", xf.ndim, axis, "axis")
    if tuple(xf.shape[a:a + s.ndim]) != tuple(s.shape):
        raise _invalid("Scale", "scale", f"expected the shape of x's dims from {a}: {xf.shape[a:a + s.ndim]}, "
                                         f"got {s.shape}")
    shape = (1,) * a + s.shape + (1,) * (xf.ndim - a - s.ndim)
    y = xf * s.reshape(shape)
    out: Array = y + _f32(bias).reshape(shape) if bias is not None else y
    return out


def real(self: Array) -> Array:
    """The real part (a real tensor is returned unchanged)."""
    x = np.asarray(self)
    out: Array = x.real.copy() if np.iscomplexobj(x) else x.copy()
    return out


def scaled_masked_softmax(x: Array, mask: Optional[Array], scale: float, fixedTriuMask: bool) -> Array:
    """y = softmax(x * scale masked), masked positions (mask True, or above the diagonal of the
    last two dims when fixedTriuMask) filled with -10000 before the softmax, as the doc writes."""
    xf = _f32(x) * np.float32(scale)
    if fixedTriuMask:
        s1, s2 = xf.shape[-2:]
        m: Array = np.triu(np.ones((s1, s2), bool), 1)
    elif mask is not None:
        m = np.asarray(mask).astype(bool)
    else:
        m = np.zeros((), bool)
    z = np.where(m, np.float32(-10000.0), xf)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: Array = e / e.sum(axis=-1, keepdims=True)
    return out


def scaled_masked_softmax_backward(gradOutput: Array, y: Array, mask: Optional[Array], scale: float,
                                   fixTriuMask: bool) -> Array:
    """grad_x = scale * y * (g - sum(g * y)) over the last dim, 0 at masked positions."""
    g, yf = _f32(gradOutput), _f32(y)
    d = yf * (g - np.sum(g * yf, axis=-1, keepdims=True)) * np.float32(scale)
    if fixTriuMask:
        s1, s2 = yf.shape[-2:]
        d = np.where(np.triu(np.ones((s1, s2), bool), 1), np.float32(0), d)
    elif mask is not None:
        d = np.where(np.asarray(mask).astype(bool), np.float32(0), d)
    out: Array = d
    return out


def cross_entropy_loss(input: Array, target: Array, weightOptional: Optional[Array], reductionOptional: Optional[str],
                       ignoreIndex: int, labelSmoothing: float, lseSquareScaleForZloss: float, returnZloss: bool
                       ) -> tuple[Array, Array, Optional[Array], Optional[Array]]:
    """loss = -w[t] * ((1 - ls) * logp[t] + ls/C * sum logp) per row (targets equal to
    ignoreIndex give 0), reduced by "mean" (over the rows' weights), "sum" or "none";
    returns (lossOut, logProbOut, zlossOut, lseForZlossOut). The z-loss outputs are
    left alone unless returnZloss, which the reference refuses."""
    if returnZloss:
        raise NotImplementedError("aclnnCrossEntropyLoss: returnZloss is not supported by the CPU reference")
    x = _f32(input)
    if x.ndim != 2:
        raise _invalid("CrossEntropyLoss", "input", f"expected (N, C), got shape {x.shape}")
    n, c = x.shape
    t = np.asarray(target).astype(np.int64).reshape(-1)
    red = "mean" if reductionOptional is None else reductionOptional
    if red not in ("mean", "sum", "none"):
        raise _invalid("CrossEntropyLoss", "reductionOptional", f"expected 'mean', 'sum' or 'none', got {red!r}")
    w = _f32(weightOptional) if weightOptional is not None else np.ones(c, np.float32)
    mx = x.max(axis=1, keepdims=True)
    logp = x - mx - np.log(np.exp(x - mx).sum(axis=1, keepdims=True))
    keep = t != ignoreIndex
    tt = np.where(keep, t, 0)
    if np.any((tt < 0) | (tt >= c)):
        raise _invalid("CrossEntropyLoss", "target", f"expected class indices in [0, {c - 1}]")
    wt = np.where(keep, w[tt], np.float32(0))
    nll = -logp[np.arange(n), tt] * wt
    smooth = -(logp * w).sum(axis=1) / c * keep
    loss = (1 - labelSmoothing) * nll + labelSmoothing * smooth
    if red == "none":
        out = loss
    elif red == "sum":
        out = np.asarray(loss.sum(), np.float32).reshape(())
    else:
        out = np.asarray(loss.sum() / max(float(wt.sum()), 1e-38), np.float32).reshape(())
    return out, logp, None, None


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnSoftmaxBackward", "const aclTensor *gradOutput, const aclTensor *output, int64_t dim, aclTensor *out",
       softmax_backward, "y * (g - sum(g * y, dim)); " + _DOC + "aclnnSoftmaxBackward.md"),
    _f("aclnnLogSoftmaxBackward", "const aclTensor *gradOutput, const aclTensor *output, int64_t dim, aclTensor *out",
       log_softmax_backward, "g - exp(y) * sum(g, dim); " + _DOC + "aclnnLogSoftmaxBackward.md"),
    _f("aclnnBatchNorm",
       "const aclTensor *input, const aclTensor *weight, const aclTensor *bias, aclTensor *runningMean, "
       "aclTensor *runningVar, bool training, double momentum, double eps, aclTensor *output, aclTensor *saveMean, "
       "aclTensor *saveInvstd",
       batch_norm, "(x - mean) * invstd * weight + bias per channel, running stats by momentum; "
       + _DOC + "aclnnBatchNorm.md"),
    _f("aclnnBatchNormStats", "const aclTensor *input, double eps, aclTensor *mean, aclTensor *invstd",
       batch_norm_stats, "per-channel mean and 1/sqrt(var + eps); " + _DOC + "aclnnBatchNormStats.md"),
    _f("aclnnBatchNormElemt",
       "const aclTensor *input, const aclTensor *weight, const aclTensor *bias, aclTensor *mean, aclTensor *invstd, "
       "double eps, aclTensor *output",
       batch_norm_elemt, "(x - mean) * invstd * weight + bias with given stats; " + _DOC + "aclnnBatchNormElemt.md"),
    _f("aclnnBatchNormElemtBackward",
       "const aclTensor *gradOut, const aclTensor *input, const aclTensor *mean, const aclTensor *invstd, "
       "const aclTensor *weight, const aclTensor *sumDy, const aclTensor *sumDyXmu, aclTensor *counter, "
       "aclTensor *gradInput",
       batch_norm_elemt_backward, "(dy - sumDy/N - (x-mean)*invstd^2*sumDyXmu/N) * invstd * weight; "
       + _DOC + "aclnnBatchNormElemtBackward.md"),
    _f("aclnnBatchNormGatherStatsWithCounts",
       "const aclTensor *input, const aclTensor *mean, const aclTensor *invstd, aclTensor *runningMean, "
       "aclTensor *runningVar, double momentum, double eps, const aclTensor *counts, aclTensor *meanAll, "
       "aclTensor *invstdAll",
       batch_norm_gather_stats_with_counts, "count-weighted global mean/invstd of per-device stats; "
       + _DOC + "aclnnBatchNormGatherStatsWithCounts.md"),
    _f("aclnnBatchNormReduceBackward",
       "const aclTensor *gradOut, const aclTensor *input, const aclTensor *mean, const aclTensor *invstd, "
       "const aclTensor *weight, const bool inputG, const bool weightG, const bool biasG, aclTensor *sumDy, "
       "aclTensor *sumDyXmu, aclTensor *gradWeight, aclTensor *gradBias",
       batch_norm_reduce_backward, "sum(dy), sum(dy*(x-mean)), gradWeight, gradBias per channel; "
       + _DOC + "aclnnBatchNormReduceBackward.md"),
    _f("aclnnRmsNormGrad",
       "const aclTensor *dy, const aclTensor *x, const aclTensor *rstd, const aclTensor *gamma, "
       "const aclTensor *dxOut, const aclTensor *dgammaOut",
       rms_norm_grad, "backward of x * rstd * gamma; " + _DOC + "aclnnRmsNormGrad.md"),
    _f("aclnnSwiGluGrad", "const aclTensor *yGrad, const aclTensor *x, int64_t dim, const aclTensor *out",
       swi_glu_grad, "backward of A*sigmoid(A)*B, halves joined along dim; " + _DOC + "aclnnSwiGluGrad.md"),
    _f("aclnnGelu", "const aclTensor *self, aclTensor *out", gelu,
       "out = Gelu(self), the tanh form its kernel computes; " + _DOC + "aclnnGelu.md"),
    _f("aclnnGeluBackward", "const aclTensor *gradOutput, const aclTensor *self, aclTensor *gradInput",
       gelu_backward, "gradInput = gradOutput * Gelu'(self), the tanh form; " + _DOC + "aclnnGeluBackward.md"),
    _f("aclnnGeGlu", "const aclTensor *self, int64_t dim, int64_t approximate, aclTensor *out, aclTensor *outGelu",
       ge_glu, "out = A * Gelu(B), outGelu; " + _DOC + "aclnnGeGlu.md"),
    _f("aclnnGeGluBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *gelu, int64_t dim, int64_t approximate, "
       "aclTensor *gradInput",
       ge_glu_backward, "backward of A * Gelu(B); " + _DOC + "aclnnGeGluBackward.md"),
    _f("aclnnGeGluV3Backward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *gelu, int64_t dim, int64_t approximate, "
       "bool activateLeft, aclTensor *gradInput",
       ge_glu_v3_backward, "backward of GeGluV3; " + _DOC + "aclnnGeGluV3Backward.md"),
    _f("aclnnDeepNormGrad",
       "const aclTensor *dy, const aclTensor *x, const aclTensor *gx, const aclTensor *gamma, const aclTensor *mean, "
       "const aclTensor *rstd, double alpha, const aclTensor *dxOut, const aclTensor *dgxOut, "
       "const aclTensor *dbetaOut, const aclTensor *dgammaOut",
       deep_norm_grad, "backward of LayerNorm(alpha*x + gx); " + _DOC + "aclnnDeepNormGrad.md"),
    _f("aclnnAddLayerNormGrad",
       "const aclTensor *dy, const aclTensor *x1, const aclTensor *x2, const aclTensor *rstd, const aclTensor *mean, "
       "const aclTensor *gamma, const aclTensor *dsumOptional, const aclTensor *dxOut, const aclTensor *dgammaOut, "
       "const aclTensor *dbetaOut",
       add_layer_norm_grad, "backward of LayerNorm(x1 + x2); " + _DOC + "aclnnAddLayerNormGrad.md"),
    _f("aclnnInstanceNorm",
       "const aclTensor *x, const aclTensor *gamma, const aclTensor *beta, const char *dataFormat, double eps, "
       "aclTensor *y, aclTensor *mean, aclTensor *variance",
       instance_norm, "per sample and channel (x - mean)/sqrt(var + eps)*gamma + beta; "
       + _DOC + "aclnnInstanceNorm.md"),
    _f("aclnnGemm",
       "const aclTensor *A, const aclTensor *B, const aclTensor *C, float alpha, float beta, int64_t transA, "
       "int64_t transB, aclTensor *out, int8_t cubeMathType",
       lambda A, B, C, alpha, beta, transA, transB, cubeMathType: gemm(A, B, C, alpha, beta, transA, transB),
       "alpha * op(A) @ op(B) + beta * C (cubeMathType, an NPU precision knob, ignored); " + _DOC + "aclnnGemm.md"),
    _f("aclnnOneHot",
       "const aclTensor *self, int numClasses, const aclTensor *onValue, const aclTensor *offValue, int64_t axis, "
       "aclTensor *out",
       one_hot, "onValue where self == class, else offValue, the class dim at axis; " + _DOC + "aclnnOneHot.md"),
    _f("aclnnEqual", "const aclTensor *self, const aclTensor *other, aclTensor *out",
       equal, "one bool: same shape and equal elements; " + _DOC + "aclnnEqual.md"),
    _f("aclnnInplaceFillDiagonal", "aclTensor *selfRef, const aclScalar *fillValue, bool wrap",
       inplace_fill_diagonal, "main diagonal set to fillValue (wrap for tall matrices); "
       + _DOC + "aclnnInplaceFillDiagonal.md"),
    _f("aclnnMaxN", "const aclTensorList *tensors, aclTensor *out", max_n,
       "element-wise max of the list; " + _DOC + "aclnnMaxN.md"),
    _f("aclnnMinN", "const aclTensorList *tensors, aclTensor *out", min_n,
       "element-wise min of the list; " + _DOC + "aclnnMinN.md"),
    _f("aclnnSum", "const aclTensorList *tensors, aclTensor *out", sum_list,
       "element-wise sum of the list; " + _DOC + "aclnnSum.md"),
    _f("aclnnReduceLogSum",
       "const aclTensor *data, const aclIntArray *axes, bool keepDims, bool noopWithEmptyAxes, aclTensor *reduce",
       reduce_log_sum, "log(sum over axes); " + _DOC + "aclnnReduceLogSum.md"),
    _f("aclnnMeanV2",
       "const aclTensor *self, const aclIntArray *dim, bool keepDim, bool noopWithEmptyAxes, aclTensor *out",
       mean_v2, "mean over dim (empty: all, or none with noop); " + _DOC + "aclnnMeanV2.md"),
    _f("aclnnMaxV2",
       "const aclTensor *self, const aclIntArray *dims, bool keepDims, bool noopWithEmptyDims, aclTensor *out",
       max_v2, "max over dims (empty: all, or none with noop); " + _DOC + "aclnnMaxV2.md"),
    _f("aclnnSwish", "const aclTensor *self, const aclScalar *betaOptional, aclTensor *out",
       swish, "x * sigmoid(beta * x); " + _DOC + "aclnnSwish.md"),
    _f("aclnnSwishBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclScalar *betaOptional, aclTensor *gradInput",
       swish_backward, "grad * (s + beta*x*s*(1-s)); " + _DOC + "aclnnSwishBackward.md"),
    _f("aclnnShrink", "const aclTensor *self, const aclScalar *lambd, const aclScalar *bias, aclTensor *out",
       shrink, "x+bias below -lambd, x-bias above lambd, else 0; " + _DOC + "aclnnShrink.md"),
    _f("aclnnFlatten", "const aclTensor *self, int64_t axis, aclTensor *out",
       flatten, "2-D: (prod(dims before axis), rest); " + _DOC + "aclnnFlatten.md"),
    _f("aclnnGlobalAveragePool", "const aclTensor *self, aclTensor *out", global_average_pool,
       "mean over the spatial dims, kept; " + _DOC + "aclnnGlobalAveragePool.md"),
    _f("aclnnGlobalMaxPool", "const aclTensor *self, aclTensor *out", global_max_pool,
       "max over the spatial dims, kept; " + _DOC + "aclnnGlobalMaxPool.md"),
    _f("aclnnFatreluMul", "const aclTensor *input, const aclTensor *threshold, const aclTensor *out",
       fatrelu_mul, "FatRelu(A) * B over the last dim's halves; " + _DOC + "aclnnFatreluMul.md"),
    _f("aclnnSeluBackward", "const aclTensor *gradOutput, const aclTensor *result, aclTensor *gradInput",
       selu_backward, "SELU's derivative through its output; " + _DOC + "aclnnSeluBackward.md"),
    _f("aclnnL1LossBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, int64_t reduction, "
       "aclTensor *gradInput",
       l1_loss_backward, "sign(self - target) * grad (/ count for mean); " + _DOC + "aclnnL1LossBackward.md"),
    _f("aclnnKlDivBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, int64_t reduction, "
       "bool logTarget, aclTensor *out",
       kl_div_backward, "-target (or -exp(target)) * grad (/ count for mean); " + _DOC + "aclnnKlDivBackward.md"),
    _f("aclnnGatherV2", "const aclTensor *self, int64_t dim, const aclTensor *index, aclTensor *out",
       gather_v2, "take along dim by an index of any shape; " + _DOC + "aclnnGatherV2.md"),
    _f("aclnnGatherNd", "const aclTensor *self, const aclTensor *indices, bool negativeIndexSupport, aclTensor *out",
       gather_nd, "self[indices[..., :]]; " + _DOC + "aclnnGatherNd.md"),
    _f("aclnnScatterNd",
       "const aclTensor *data, const aclTensor *indices, const aclTensor *updates, aclTensor *out",
       scatter_nd, "copy of data with data[indices[i]] = updates[i]; " + _DOC + "aclnnScatterNd.md"),
    _f("aclnnSliceV2",
       "const aclTensor *self, const aclIntArray *starts, const aclIntArray *ends, const aclIntArray *axes, "
       "const aclIntArray *steps, aclTensor *out",
       slice_v2, "ONNX Slice; " + _DOC + "aclnnSliceV2.md"),
    _f("aclnnScale",
       "const aclTensor *x, const aclTensor *scale, const aclTensor *bias, int64_t axis, int64_t numAxes, "
       "bool scaleFromBlob, aclTensor *y",
       scale, "x * scale + bias, scale aligned from axis; " + _DOC + "aclnnScale.md"),
    _f("aclnnReal", "const aclTensor *self, aclTensor *out", real, "the real part; " + _DOC + "aclnnReal.md"),
    _f("aclnnScaledMaskedSoftmax",
       "const aclTensor *x, const aclTensor *mask, double scale, bool fixedTriuMask, aclTensor *y",
       scaled_masked_softmax, "softmax(x*scale, masked to -10000); " + _DOC + "aclnnScaledMaskedSoftmax.md"),
    _f("aclnnScaledMaskedSoftmaxBackward",
       "const aclTensor *gradOutput, const aclTensor *y, const aclTensor *mask, double scale, bool fixTriuMask, "
       "aclTensor *out",
       scaled_masked_softmax_backward, "scale * y * (g - sum(g*y)), 0 where masked; "
       + _DOC + "aclnnScaledMaskedSoftmaxBackward.md"),
    _f("aclnnCrossEntropyLoss",
       "const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional, char *reductionOptional, "
       "int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss, bool returnZloss, "
       "const aclTensor *lossOut, const aclTensor *logProbOut, const aclTensor *zlossOut, "
       "const aclTensor *lseForZlossOut",
       cross_entropy_loss, "weighted, label-smoothed NLL of log_softmax, and log_softmax; "
       + _DOC + "aclnnCrossEntropyLoss.md"),
])


# ---------------------------------------------------------------------------------------------
# Round 2, second batch: backwards and small operators op-plugin reaches through computed
# arguments (or not at all)
# ---------------------------------------------------------------------------------------------

def index_copy(selfRef: Array, dim: int, index: Array, source: Array, outRef: Optional[Array] = None
               ) -> tuple[None, Array]:
    """outRef = selfRef with the slices index[i] along dim replaced by source's slice i;
    selfRef is declared writable but op-plugin passes its input there, and it is left alone.
    (outRef's current values, passed as for any ...Ref parameter, are not read.)"""
    out = np.array(selfRef, copy=True)
    d = _dim("IndexCopy", out.ndim, dim)
    idx = np.asarray(index).astype(np.int64).reshape(-1)
    src = np.asarray(source)
    size = out.shape[d] if out.ndim else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise _invalid("IndexCopy", "index", f"expected indices in [{-size}, {size - 1}]")
    moved = np.moveaxis(out, d, 0) if out.ndim else out.reshape(1)
    moved[idx] = np.moveaxis(src, d, 0) if src.ndim else src
    return None, out


def inplace_atan2(selfRef: Array, other: Array) -> tuple[Array, None]:
    """selfRef = atan2(selfRef, other) (other is declared writable but only read: left alone)."""
    a, b = _wide(selfRef), _wide(other)
    return np.arctan2(a, b), None


def nll_loss2d_backward(gradOutput: Array, self: Array, target: Array, weight: Optional[Array], reduction: int,
                        ignoreIndex: int, totalWeight: Array) -> tuple[None, Array]:
    """grad[n, t, h, w] = -weight[t] * g (g per element for none; / totalWeight for mean), 0
    for ignored targets; totalWeight (declared writable) is only read here."""
    x = _wide(self)
    if x.ndim != 4:
        raise _invalid("NLLLoss2dBackward", "self", f"expected (N, C, H, W), got {x.shape}")
    t = np.asarray(target).astype(np.int64)
    c = x.shape[1]
    w = _wide(weight) if weight is not None else np.ones(c, x.dtype)
    keep = t != ignoreIndex
    tt = np.where(keep, t, 0)
    g = _wide(gradOutput)
    scale = g if reduction == 0 else g.reshape(-1)[0] * np.ones(t.shape, x.dtype)
    if reduction == 1:
        scale = scale / _wide(totalWeight).reshape(-1)[0]
    grad = np.zeros_like(x)
    n_i, h_i, w_i = np.indices(t.shape)
    grad[n_i, tt, h_i, w_i] = np.where(keep, -w[tt] * scale, 0)
    return None, grad


def prelu_backward(gradOutput: Array, self: Array, weight: Array) -> tuple[Array, Array]:
    """gradInput = g where x > 0, weight * g elsewhere; gradWeight = sum of g * x where x <= 0,
    per channel (dim 1) for a per-channel weight, over everything for one weight."""
    g, x, w = _wide(gradOutput), _wide(self), _wide(weight).reshape(-1)
    if w.size == 1:
        ws = w.reshape(())
        return np.where(x > 0, g, ws * g), np.array([np.sum(np.where(x > 0, 0, g * x))]).reshape(np.shape(weight))
    if x.ndim < 2 or x.shape[1] != w.size:
        raise _invalid("PreluBackward", "weight", f"expected 1 or {x.shape[1] if x.ndim > 1 else 1} elements, "
                                                  f"got {w.size}")
    shape = (1, w.size) + (1,) * (x.ndim - 2)
    axes = (0,) + tuple(range(2, x.ndim))
    gw = np.sum(np.where(x > 0, 0, g * x), axis=axes).reshape(np.shape(weight))
    return np.where(x > 0, g, w.reshape(shape) * g), gw


_ROUND_MODES: dict[int, Callable[[Array], Array]] = {1: np.rint, 2: np.floor, 3: np.ceil, 5: np.trunc}


def foreach_round_off_number(x: Sequence[Array], roundMode: Array) -> list[Array]:
    """Each tensor rounded by the code in roundMode (a one-element tensor): 1 round (half to
    even), 2 floor, 3 ceil, 5 trunc, 7 frac (x - trunc x): op-plugin's ROUND_MODE codes."""
    mode = int(np.asarray(roundMode).reshape(-1)[0])
    if mode == 7:
        return [np.asarray(t) - np.trunc(np.asarray(t)) for t in x]
    if mode not in _ROUND_MODES:
        raise _invalid("ForeachRoundOffNumber", "roundMode", f"expected 1, 2, 3, 5 or 7, got {mode}")
    return [_ROUND_MODES[mode](np.asarray(t)) for t in x]


def fake_quant_per_tensor_affine_cachemask(self: Array, scale: Array, zeroPoint: Array, fakeQuantEnbled: float,
                                           quantMin: int, quantMax: int) -> tuple[Array, Array]:
    """q = round(x / scale + zp) (half to even); out = (clamp(q, min, max) - zp) * scale and
    mask = min <= q <= max, when fakeQuantEnbled is nonzero; else out = x, mask all true."""
    x = _f32(self)
    if not fakeQuantEnbled:
        return x, np.ones(x.shape, bool)
    s = np.float32(np.asarray(scale).reshape(-1)[0])
    zp = np.float32(np.asarray(zeroPoint).reshape(-1)[0])
    q = np.rint(x / s + zp)
    return (np.clip(q, quantMin, quantMax) - zp) * s, (q >= quantMin) & (q <= quantMax)


def aminmax(self: Array, dim: Sequence[int], keepDim: bool) -> tuple[Array, Array]:
    """(min, max) over dim (every dim when empty)."""
    x = np.asarray(self)
    axes = tuple(sorted({_dim("Aminmax", x.ndim, int(d)) for d in dim})) if dim else None
    return np.min(x, axis=axes, keepdims=keepDim), np.max(x, axis=axes, keepdims=keepDim)


def _unpool_backward(op: str, gradOutput: Array, self: Array, indices: Array, spatial: int) -> Array:
    g, idx = np.asarray(gradOutput), np.asarray(indices).astype(np.int64)
    x = np.asarray(self)
    if idx.shape != x.shape:
        raise _invalid(op, "indices", f"expected the shape of self {x.shape}, got {idx.shape}")
    lead = x.shape[:x.ndim - spatial]
    gf = g.reshape(*lead, -1)
    fi = idx.reshape(*lead, -1)
    if fi.size and (fi.min() < 0 or fi.max() >= gf.shape[-1]):
        raise _invalid(op, "indices", f"expected indices in [0, {gf.shape[-1] - 1}]")
    out: Array = np.take_along_axis(gf, fi, axis=-1).reshape(x.shape)
    return out


def max_unpool2d_backward(gradOutput: Array, self: Array, indices: Array, outputSize: Sequence[int]) -> Array:
    """out[..., h, w] = gradOutput[..., indices[..., h, w]] (the flat index into the unpooled plane)."""
    return _unpool_backward("MaxUnpool2dBackward", gradOutput, self, indices, 2)


def max_unpool3d_backward(gradOutput: Array, self: Array, indices: Array, outputSize: Sequence[int],
                          stride: Sequence[int], padding: Sequence[int]) -> Array:
    """As MaxUnpool2dBackward, over three spatial dims."""
    return _unpool_backward("MaxUnpool3dBackward", gradOutput, self, indices, 3)


def _bce_parts(op: str, gradOutput: Array, self: Array, target: Array, weight: Optional[Array],
               pos_weight: Optional[Array], reduction: int) -> tuple[Array, Array, Array, Array, Array]:
    if reduction not in (0, 1, 2):
        raise _invalid(op, "reduction", f"expected 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    x, t, g = _wide(self), _wide(target), _wide(gradOutput)
    w = _wide(weight) if weight is not None else np.ones((), x.dtype)
    pw = _wide(pos_weight) if pos_weight is not None else np.ones((), x.dtype)
    if reduction == 1:
        g = g / max(x.size, 1)
    return x, t, g, w, pw


def bce_with_logits_backward(gradOutput: Array, self: Array, target: Array, weightOptional: Optional[Array],
                             posWeightOptional: Optional[Array], reduction: int) -> Array:
    """d/dx of -w [pw t log s(x) + (1 - t) log(1 - s(x))] = w (s(x) (pw t + 1 - t) - pw t), times
    the gradient (divided by the element count for mean)."""
    x, t, g, w, pw = _bce_parts("BinaryCrossEntropyWithLogitsBackward", gradOutput, self, target, weightOptional,
                                posWeightOptional, reduction)
    s = 1.0 / (1.0 + np.exp(-x))
    out: Array = g * w * (s * (pw * t + 1 - t) - pw * t)
    return out


def bce_with_logits_target_backward(gradOutput: Array, self: Array, target: Array, weightOptional: Optional[Array],
                                    posWeightOptional: Optional[Array], reduction: int) -> Array:
    """d/dt of the same loss = -w (pw log s(x) + softplus(x))... written as -w (pw log s(x) -
    log(1 - s(x))), times the gradient."""
    x, t, g, w, pw = _bce_parts("BinaryCrossEntropyWithLogitsTargetBackward", gradOutput, self, target,
                                weightOptional, posWeightOptional, reduction)
    log_s = -np.logaddexp(0, -x)
    log_1ms = -np.logaddexp(0, x)
    out: Array = -g * w * (pw * log_s - log_1ms)
    return np.broadcast_to(out, np.broadcast_shapes(x.shape, t.shape)).copy()


def _circular_pad_backward(op: str, gradOutput: Array, self: Array, padding: Sequence[int], dims: int) -> Array:
    g, x = _wide(gradOutput), np.asarray(self)
    if len(padding) != 2 * dims:
        raise _invalid(op, "padding", f"expected {2 * dims} values, got {len(padding)}")
    out = np.zeros(x.shape, g.dtype)
    index = []
    for k in range(dims):  # padding lists the last dim first: (left, right, top, bottom, front, back)
        axis = x.ndim - 1 - k
        left = int(padding[2 * k])
        size = x.shape[axis]
        index.append((axis, (np.arange(g.shape[axis]) - left) % size))
    grids = np.meshgrid(*[i for _, i in sorted(index)], indexing="ij")
    lead = x.shape[:x.ndim - dims]
    for pos in np.ndindex(*lead):
        np.add.at(out[pos], tuple(grids), g[pos])
    return out


def circular_pad2d_backward(gradOutput: Array, self: Array, padding: Sequence[int]) -> Array:
    """The padded gradient folded back by wrapping: gradInput[i] = sum of gradOutput at the
    positions whose wrapped source is i (padding: left, right, top, bottom)."""
    return _circular_pad_backward("CircularPad2dBackward", gradOutput, self, padding, 2)


def circular_pad3d_backward(gradOutput: Array, self: Array, padding: Sequence[int]) -> Array:
    """As CircularPad2dBackward over the last three dims."""
    return _circular_pad_backward("CircularPad3dBackward", gradOutput, self, padding, 3)


def cross_entropy_loss_grad(gradLoss: Array, logProb: Array, target: Array, weightOptional: Optional[Array],
                            gradZlossOptional: Optional[Array], lseForZlossOptional: Optional[Array],
                            reductionOptional: Optional[str], ignoreIndex: int, labelSmoothing: float,
                            lseSquareScaleForZloss: float) -> Array:
    """Backward of CrossEntropyLoss through its logProb: with p = exp(logProb), row i of target
    t: d/dx_k = (1 - ls) w_t (p_k - [k = t]) + ls/C (p_k sum(w) - w_k), times gradLoss (per
    row for "none"; divided by the kept rows' weight total for "mean"); ignored rows 0."""
    if gradZlossOptional is not None:
        raise NotImplementedError("aclnnCrossEntropyLossGrad: the z-loss gradient is not supported by the CPU "
                                  "reference")
    lp = _f32(logProb)
    n, c = lp.shape
    t = np.asarray(target).astype(np.int64).reshape(-1)
    red = "mean" if reductionOptional is None else reductionOptional
    w = _f32(weightOptional) if weightOptional is not None else np.ones(c, np.float32)
    keep = t != ignoreIndex
    tt = np.where(keep, t, 0)
    p = np.exp(lp)
    onehot = np.zeros_like(p)
    onehot[np.arange(n), tt] = 1
    wt = np.where(keep, w[tt], np.float32(0))
    d = (1 - labelSmoothing) * wt[:, None] * (p - onehot) + labelSmoothing / c * (p * w.sum() - w) * keep[:, None]
    gl = _f32(gradLoss).reshape(-1)
    if red == "none":
        out: Array = d * gl[:, None]
        return out
    scale = gl[0] / (max(float(wt.sum()), 1e-38) if red == "mean" else 1.0)
    out = d * np.float32(scale)
    return out


def grouped_bias_add_grad(gradY: Array, groupIdxOptional: Optional[Array]) -> Array:
    """out[g] = the sum of gradY's rows of group g: groups cut by the cumulative ends in
    groupIdx for a 2-D gradY, the first dim of a 3-D gradY without groupIdx."""
    return _grouped_bias_add_grad(gradY, groupIdxOptional, 0)


def _grouped_bias_add_grad(gradY: Array, groups: Optional[Array], kind: int) -> Array:
    g = _wide(gradY)
    if groups is None:
        if g.ndim != 3:
            raise _invalid("GroupedBiasAddGrad", "gradY", f"expected (G, C, H) without groupIdx, got {g.shape}")
        out: Array = g.sum(axis=1)
        return out
    idx = np.asarray(groups).astype(np.int64).reshape(-1)
    ends = np.cumsum(idx) if kind == 1 else idx
    if g.ndim != 2 or (ends.size and (np.any(np.diff(ends) < 0) or ends[-1] > g.shape[0])):
        raise _invalid("GroupedBiasAddGrad", "groupIdxOptional", f"expected non-decreasing group ends within "
                                                                 f"{g.shape[0] if g.ndim else 0} rows")
    starts = np.concatenate(([0], ends[:-1]))
    return np.stack([g[a:b].sum(axis=0) for a, b in zip(starts, ends)]) if ends.size else np.zeros((0,) + g.shape[1:])


def grouped_bias_add_grad_v2(gradY: Array, groupIdxOptional: Optional[Array], groupIdxType: int) -> Array:
    """GroupedBiasAddGrad with groupIdx as cumulative ends (groupIdxType 0) or counts (1)."""
    if groupIdxType not in (0, 1):
        raise _invalid("GroupedBiasAddGradV2", "groupIdxType", f"expected 0 (cumsum) or 1 (count), got {groupIdxType}")
    return _grouped_bias_add_grad(gradY, groupIdxOptional, groupIdxType)


def group_norm_silu(self: Array, gamma: Optional[Array], beta: Optional[Array], group: int, eps: float
                    ) -> tuple[Array, Array, Array]:
    """GroupNorm (statistics per sample and group of channels), then x * sigmoid(x): returns
    (out, meanOut, rstdOut), mean/rstd of shape (N, group)."""
    return _group_norm(self, gamma, beta, group, eps, True)


def _group_norm(self: Array, gamma: Optional[Array], beta: Optional[Array], group: int, eps: float,
                silu: bool) -> tuple[Array, Array, Array]:
    x = _f32(self)
    if x.ndim < 2 or group <= 0 or x.shape[1] % group:
        raise _invalid("GroupNormSilu", "group", f"expected a group count dividing C {x.shape[1] if x.ndim > 1 else 0},"
                                                 f" got {group}")
    n, c = x.shape[:2]
    xg = x.reshape(n, group, -1)
    mean = xg.mean(axis=2)
    rstd = 1.0 / np.sqrt(xg.var(axis=2) + np.float32(eps))
    y = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if gamma is not None:
        y = y * _f32(gamma).reshape(shape)
    if beta is not None:
        y = y + _f32(beta).reshape(shape)
    if silu:
        y = y * _sigmoid(y)
    return y, mean.astype(np.float32), rstd.astype(np.float32)


def group_norm_silu_v2(self: Array, gamma: Optional[Array], beta: Optional[Array], group: int, eps: float,
                       activateSilu: bool) -> tuple[Array, Array, Array]:
    """GroupNormSilu, the SiLU only when activateSilu."""
    return _group_norm(self, gamma, beta, group, eps, activateSilu)


FORMULAS = dict(FORMULAS, **dict([
    _f("aclnnIndexCopy",
       "aclTensor *selfRef, int64_t dim, const aclTensor *index, const aclTensor *source, aclTensor *outRef",
       index_copy, "outRef = selfRef with slices index[i] along dim set from source; " + _DOC + "aclnnIndexCopy.md"),
    _f("aclnnInplaceAtan2", "aclTensor *selfRef, aclTensor *other", inplace_atan2,
       "selfRef = atan2(selfRef, other); " + _DOC + "aclnnAtan2.md"),
    _f("aclnnNLLLoss2dBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weight, "
       "int64_t reduction, int64_t ignoreIndex, aclTensor *totalWeight, aclTensor *out",
       nll_loss2d_backward, "-weight[t] * grad at the target class; " + _DOC + "aclnnNLLLoss2dBackward.md"),
    _f("aclnnPreluBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *weight, aclTensor *gradInput, "
       "aclTensor *gradWeight",
       prelu_backward, "g or weight*g, and the weight's gradient; " + _DOC + "aclnnPreluBackward.md"),
    _f("aclnnForeachRoundOffNumber", "const aclTensorList *x, const aclTensor *roundMode, aclTensorList *out",
       foreach_round_off_number, "each tensor rounded by roundMode's code; " + _DOC + "aclnnForeachRoundOffNumber.md"),
    _f("aclnnFakeQuantPerTensorAffineCachemask",
       "const aclTensor *self, const aclTensor *scale, const aclTensor *zeroPoint, float fakeQuantEnbled, "
       "int64_t quantMin, int64_t quantMax, aclTensor *out, aclTensor *mask",
       fake_quant_per_tensor_affine_cachemask, "quantise-dequantise with the in-range mask; "
       + _DOC + "aclnnFakeQuantPerTensorAffineCachemask.md"),
    _f("aclnnAminmax", "const aclTensor *self, const aclIntArray *dim, bool keepDim, aclTensor *minOut, "
       "aclTensor *maxOut", aminmax, "min and max over dim; " + _DOC + "aclnnAminmax.md"),
    _f("aclnnMaxUnpool2dBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *outputSize, "
       "aclTensor *out",
       max_unpool2d_backward, "gradOutput gathered at the unpooling indices; " + _DOC + "aclnnMaxUnpool2dBackward.md"),
    _f("aclnnMaxUnpool3dBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *outputSize, "
       "const aclIntArray *stride, const aclIntArray *padding, aclTensor *out",
       max_unpool3d_backward, "gradOutput gathered at the unpooling indices; " + _DOC + "aclnnMaxUnpool3dBackward.md"),
    _f("aclnnBinaryCrossEntropyWithLogitsBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, "
       "const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out",
       bce_with_logits_backward, "w (s(x)(pw t + 1 - t) - pw t) * grad; "
       + _DOC + "aclnnBinaryCrossEntropyWithLogitsBackward.md"),
    _f("aclnnBinaryCrossEntropyWithLogitsTargetBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, "
       "const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradTarget",
       bce_with_logits_target_backward, "-w (pw log s(x) - log(1 - s(x))) * grad; "
       + _DOC + "aclnnBinaryCrossEntropyWithLogitsTargetBackward.md"),
    _f("aclnnCircularPad2dBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding, aclTensor *gradInput",
       circular_pad2d_backward, "the padded gradient folded back by wrapping; "
       + _DOC + "aclnnCircularPad2dBackward.md"),
    _f("aclnnCircularPad3dBackward",
       "const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding, aclTensor *gradInput",
       circular_pad3d_backward, "the padded gradient folded back by wrapping; "
       + _DOC + "aclnnCircularPad3dBackward.md"),
    _f("aclnnCrossEntropyLossGrad",
       "const aclTensor *gradLoss, const aclTensor *logProb, const aclTensor *target, const aclTensor *weightOptional, "
       "const aclTensor *gradZlossOptional, const aclTensor *lseForZlossOptional, char *reductionOptional, "
       "int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss, const aclTensor *out",
       cross_entropy_loss_grad, "backward of CrossEntropyLoss through logProb; " + _DOC + "aclnnCrossEntropyLossGrad.md"),
    _f("aclnnGroupedBiasAddGrad", "const aclTensor *gradY, const aclTensor *groupIdxOptional, aclTensor *out",
       grouped_bias_add_grad, "per-group row sums of gradY; " + _DOC + "aclnnGroupedBiasAddGrad.md"),
    _f("aclnnGroupedBiasAddGradV2",
       "const aclTensor *gradY, const aclTensor *groupIdxOptional, int64_t groupIdxType, aclTensor *out",
       grouped_bias_add_grad_v2, "per-group row sums, groups as cumsum or counts; "
       + _DOC + "aclnnGroupedBiasAddGradV2.md"),
    _f("aclnnGroupNormSilu",
       "const aclTensor *self, const aclTensor *gamma, const aclTensor *beta, int64_t group, double eps, "
       "aclTensor *out, aclTensor *meanOut, aclTensor *rstdOut",
       group_norm_silu, "SiLU(GroupNorm(x)), mean, rstd; " + _DOC + "aclnnGroupNormSilu.md"),
    _f("aclnnGroupNormSiluV2",
       "const aclTensor *self, const aclTensor *gamma, const aclTensor *beta, int64_t group, double eps, "
       "bool activateSilu, aclTensor *out, aclTensor *meanOut, aclTensor *rstdOut",
       group_norm_silu_v2, "GroupNorm(x), SiLU when activateSilu; " + _DOC + "aclnnGroupNormSiluV2.md"),
]))


# ---------------------------------------------------------------------------------------------
# Third batch: pooling and resampling with CANN's own parameter conventions
# ---------------------------------------------------------------------------------------------

def _nearest_index(out_size: int, in_size: int, scale: float) -> Array:
    """aten's nearest rule: src = floor(dst * s), s = 1/scale when a positive scale is given,
    else in/out; clamped to the last element."""
    s = 1.0 / scale if scale > 0 else in_size / max(out_size, 1)
    idx: Array = np.minimum(np.floor(np.arange(out_size) * np.float32(s)).astype(np.int64), in_size - 1)
    return idx


def upsample_nearest1d_v2(self: Array, outputSize: Sequence[int], scaleL: float) -> Array:
    """out[..., l] = self[..., floor(l / scaleL)] (in/out when scaleL <= 0), (N, C, L) layout."""
    x = np.asarray(self)
    if x.ndim != 3 or len(outputSize) != 1:
        raise _invalid("UpsampleNearest1dV2", "outputSize", f"expected (N, C, L) and one size, got {x.shape}, "
                                                            f"{list(outputSize)}")
    out: Array = x[..., _nearest_index(int(outputSize[0]), x.shape[-1], scaleL)]
    return out


def upsample_nearest2d_v2(self: Array, outputSize: Sequence[int], scalesH: float, scalesW: float) -> Array:
    """out[..., h, w] = self[..., floor(h / scalesH), floor(w / scalesW)] (in/out for a scale <= 0)."""
    x = np.asarray(self)
    if x.ndim != 4 or len(outputSize) != 2:
        raise _invalid("UpsampleNearest2dV2", "outputSize", f"expected (N, C, H, W) and two sizes, got {x.shape}, "
                                                            f"{list(outputSize)}")
    hi = _nearest_index(int(outputSize[0]), x.shape[-2], scalesH)
    wi = _nearest_index(int(outputSize[1]), x.shape[-1], scalesW)
    out: Array = x[..., hi[:, None], wi[None, :]]
    return out


def max_pool(self: Array, kernelShape: Sequence[int], strides: Sequence[int], autoPad: int, pads: Sequence[int],
             dilations: Sequence[int], ceilMode: int) -> Array:
    """ONNX MaxPool over the dims after (N, C): windows of kernelShape, strides (1s when empty),
    dilations (1s when empty), pads as (begins..., ends...) filled with -inf; ceilMode rounds
    the output size up (a window must still start inside the input or its begin padding).
    autoPad other than 0 (NOTSET) is refused."""
    x = _wide(self) if np.asarray(self).dtype.kind == "f" else np.asarray(self)
    k = [int(v) for v in kernelShape]
    n = len(k)
    if autoPad != 0:
        raise NotImplementedError(f"aclnnMaxPool: autoPad {autoPad}: the CPU reference takes explicit pads (0) only")
    if x.ndim != n + 2 or n == 0:
        raise _invalid("MaxPool", "kernelShape", f"expected one size per spatial dim of self {x.shape}, got {k}")
    st = [int(v) for v in strides] or [1] * n
    dl = [int(v) for v in dilations] or [1] * n
    pd = [int(v) for v in pads] or [0] * (2 * n)
    if len(st) != n or len(dl) != n or len(pd) != 2 * n:
        raise _invalid("MaxPool", "pads", f"expected {n} strides/dilations and {2 * n} pads")
    outs, extra = [], []
    for i in range(n):
        span = (k[i] - 1) * dl[i] + 1
        total = x.shape[2 + i] + pd[i] + pd[n + i] - span
        o = (-(-total // st[i]) if ceilMode else total // st[i]) + 1
        if ceilMode and (o - 1) * st[i] >= x.shape[2 + i] + pd[i]:
            o -= 1
        outs.append(max(o, 0))
        extra.append(max((o - 1) * st[i] + span - (x.shape[2 + i] + pd[i] + pd[n + i]), 0))
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    padded = np.pad(x, [(0, 0), (0, 0)] + [(pd[i], pd[n + i] + extra[i]) for i in range(n)], constant_values=low)
    result = np.full(x.shape[:2] + tuple(outs), low, dtype=x.dtype)
    for offs in np.ndindex(*k):
        sl = tuple(slice(offs[i] * dl[i], offs[i] * dl[i] + (outs[i] - 1) * st[i] + 1, st[i]) for i in range(n))
        result = np.maximum(result, padded[(slice(None), slice(None)) + sl])
    return result


def moe_finalize_routing_v2(expandedX: Array, expandedRowIdx: Array, x1Optional: Optional[Array],
                            x2Optional: Optional[Array], biasOptional: Optional[Array], scalesOptional: Optional[Array],
                            expertIdxOptional: Optional[Array], dropPadMode: int) -> Array:
    """MoeFinalizeRouting with optional terms: out[i] = x1[i] + x2[i] + sum_k scales[i, k] *
    (expandedX[expandedRowIdx[i + k*rows]] + bias[expertIdx[i, k]]); a missing scale is 1, a
    missing x1/x2/bias 0. dropPadMode 0 (no drop/pad) only."""
    if dropPadMode != 0:
        raise NotImplementedError(f"aclnnMoeFinalizeRoutingV2: dropPadMode {dropPadMode}: the CPU reference takes 0 "
                                  f"(dropless) only")
    ex = _f32(expandedX)
    rid = np.asarray(expandedRowIdx).astype(np.int64).reshape(-1)
    known = scalesOptional if scalesOptional is not None else expertIdxOptional
    if known is not None:
        rows, k = np.shape(known)
    elif x1Optional is not None:
        rows = np.shape(x1Optional)[0]
        k = rid.size // max(rows, 1)
    else:
        raise _invalid("MoeFinalizeRoutingV2", "scalesOptional", "expected scales, expertIdx or x1 to give the rows")
    if rid.size != rows * k:
        raise _invalid("MoeFinalizeRoutingV2", "expandedRowIdx", f"expected {rows * k} elements, got {rid.size}")
    out = np.zeros((rows, ex.shape[-1]), np.float32)
    for t in (x1Optional, x2Optional):
        if t is not None:
            out = out + _f32(t)
    sc = _f32(scalesOptional) if scalesOptional is not None else np.ones((rows, k), np.float32)
    eid = np.asarray(expertIdxOptional).astype(np.int64).reshape(rows, k) if expertIdxOptional is not None else None
    for j in range(k):
        picked = ex[rid[np.arange(rows) + j * rows]]
        if biasOptional is not None:
            if eid is None:
                raise _invalid("MoeFinalizeRoutingV2", "expertIdxOptional", "expected expertIdx with a bias")
            picked = picked + _f32(biasOptional)[eid[:, j]]
        out = out + sc[:, j:j + 1] * picked
    return out


def rope_with_sin_cos_cache(positions: Array, queryIn: Array, keyIn: Array, cosSinCache: Array,
                            mropeSection: Optional[Sequence[int]], headSize: int,
                            isNeoxStyle: bool) -> tuple[Array, Array]:
    """Rotary embedding from a (maxPosition, rotaryDim) cache holding cos in its first half and
    sin in its second, looked up by positions: the first rotaryDim values of every head of
    q/k (tokens, heads * headSize) are rotated, as halves (isNeoxStyle) or interleaved pairs;
    the rest pass through. Returns (queryOut, keyOut). mropeSection is refused."""
    if mropeSection:
        raise NotImplementedError("aclnnRopeWithSinCosCache: mropeSection (multimodal rope) is not supported by the "
                                  "CPU reference")
    pos = np.asarray(positions).astype(np.int64).reshape(-1)
    cache = _f32(cosSinCache)
    rot = cache.shape[-1]
    if rot % 2 or rot > headSize:
        raise _invalid("RopeWithSinCosCache", "cosSinCache", f"expected an even rotary dim <= headSize {headSize}, "
                                                             f"got {rot}")
    cos, sin = cache[pos, :rot // 2], cache[pos, rot // 2:]

    def apply(t: Array, name: str) -> Array:
        v = _f32(t)
        if v.shape[-1] % headSize or v.shape[0] != pos.size:
            raise _invalid("RopeWithSinCosCache", name, f"expected (tokens {pos.size}, heads * {headSize}), got "
                                                        f"{v.shape}")
        h = v.reshape(pos.size, -1, headSize)
        r = h[..., :rot]
        c, s = cos[:, None, :], sin[:, None, :]
        if isNeoxStyle:
            a, b = r[..., :rot // 2], r[..., rot // 2:]
            rr = np.concatenate((a * c - b * s, b * c + a * s), axis=-1)
        else:
            a, b = r[..., 0::2], r[..., 1::2]
            rr = np.stack((a * c - b * s, b * c + a * s), axis=-1).reshape(r.shape)
        out: Array = np.concatenate((rr, h[..., rot:]), axis=-1).reshape(v.shape)
        return out
    return apply(queryIn, "queryIn"), apply(keyIn, "keyIn")


FORMULAS = dict(FORMULAS, **dict([
    _f("aclnnUpsampleNearest1dV2", "const aclTensor *self, const aclIntArray *outputSize, float scaleL, "
       "aclTensor *out", upsample_nearest1d_v2, "nearest: src = floor(dst / scale); "
       + _DOC + "aclnnUpsampleNearest1dV2.md"),
    _f("aclnnUpsampleNearest2dV2", "const aclTensor *self, const aclIntArray *outputSize, float scalesH, "
       "float scalesW, aclTensor *out", upsample_nearest2d_v2, "nearest: src = floor(dst / scale) per dim; "
       + _DOC + "aclnnUpsampleNearest2dV2.md"),
    _f("aclnnMaxPool", "const aclTensor *self, const aclIntArray *kernelShape, const aclIntArray *strides, "
       "const int64_t autoPad, const aclIntArray *pads, const aclIntArray *dilations, const int64_t ceilMode, "
       "aclTensor *out", max_pool, "ONNX MaxPool with explicit pads; " + _DOC + "aclnnMaxPool.md"),
    _f("aclnnMoeFinalizeRoutingV2",
       "const aclTensor *expandedX, const aclTensor *expandedRowIdx, const aclTensor *x1Optional, "
       "const aclTensor *x2Optional, const aclTensor *biasOptional, const aclTensor *scalesOptional, "
       "const aclTensor *expertIdxOptional, int64_t dropPadMode, const aclTensor *out",
       moe_finalize_routing_v2, "x1 + x2 + sum_k scales*(expandedX[row] + bias[expert]); "
       + _DOC + "aclnnMoeFinalizeRoutingV2.md"),
    _f("aclnnRopeWithSinCosCache",
       "const aclTensor *positions, const aclTensor *queryIn, const aclTensor *keyIn, const aclTensor *cosSinCache, "
       "const aclIntArray *mropeSection, int64_t headSize, bool isNeoxStyle, aclTensor *queryOut, "
       "aclTensor *keyOut",
       rope_with_sin_cos_cache, "rotary embedding from a cos|sin cache by position; "
       + _DOC + "aclnnRopeWithSinCosCache.md"),
]))
