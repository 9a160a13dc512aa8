"""The "sampled" tier: random operators, and the dropout operators that read their masks.

A random operator's values depend on the NPU's generator (Philox, keyed by seed and
offset), which a CPU cannot reproduce bit for bit. Each formula here draws from the
distribution the operator documents, with NumPy's generator seeded by (seed, offset), so a
CPU run is repeatable and its output has the documented semantics: shapes, dtypes, value
sets, and for the dropout masks the NPU's bit-packed layout, so DropoutDoMask and
DropoutBackward read a GenMask's output right. ``compare`` checks these operators by the
statistics each one's ``stats`` function names (mask density, moments, ranges, exact
invariants), never by value.

The bit mask: one bit per element, uint8 storage of (align(numel, 128) / 8,) bytes, as the
aclnnDropoutGenMaskV2 doc gives the shape; bit 1 keeps an element. Within a byte the
reference puts element 8j + i in bit i of byte j (least significant bit first, Ascend's
vector-select mask order); the doc does not state the order, so this is a choice, and the
GenMask/DoMask pair here agree on it. Bits past numel are 0.

A stats function takes the call's inputs (as the formula got them) and the written outputs
(header order) and returns ``Check``s: |observed - expected| <= tolerance passes.
Tolerances are 6 standard deviations of the statistic (plus one count for a discrete one),
so a correct sampler fails a check about once in 10^8 calls.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ._common import _DOC, Array, Formula, _f, _f32, _invalid

__all__ = ["Check", "FORMULAS", "pack_bits", "unpack_bits"]

_U64 = (1 << 64) - 1


class Check(NamedTuple):
    """One statistic of a sampled output: it passes when |observed - expected| <= tolerance."""
    label: str
    observed: float
    expected: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return bool(abs(self.observed - self.expected) <= self.tolerance)


def _rng(seed: int, offset: int) -> np.random.Generator:
    return np.random.default_rng([int(seed) & _U64, int(offset) & _U64])


def _numel(op: str, shape: Sequence[int]) -> int:
    if any(int(s) < 0 for s in shape):
        raise _invalid(op, "shape", f"expected non-negative dims, got {list(shape)}")
    return int(np.prod([int(s) for s in shape], dtype=np.int64))


def _prob(op: str, prob: float, name: str = "prob") -> float:
    if not 0.0 <= prob <= 1.0:
        raise _invalid(op, name, f"expected a probability in [0, 1], got {prob}")
    return float(prob)


def mask_bytes(numel: int) -> int:
    """The bit mask's byte count: align(numel, 128) / 8."""
    return -(-numel // 128) * 16


def pack_bits(keep: Array) -> Array:
    """A boolean keep-array (any shape, read flat) as the bit mask."""
    flat = np.asarray(keep, dtype=bool).reshape(-1)
    out = np.zeros(mask_bytes(flat.size), np.uint8)
    packed = np.packbits(flat, bitorder="little")
    out[:packed.size] = packed
    return out


def unpack_bits(mask: Array, numel: int, op: str = "DropoutDoMask", name: str = "mask") -> Array:
    """The first numel bits of a bit mask, as booleans (flat)."""
    m = np.asarray(mask)
    if m.dtype != np.uint8 or m.size * 8 < numel:
        raise _invalid(op, name, f"expected a uint8 bit mask of at least {-(-numel // 8)} bytes for {numel} "
                                 f"elements, got {m.dtype} of {m.size}")
    return np.unpackbits(m.reshape(-1), bitorder="little")[:numel].astype(bool)


def _binomial_tol(p: float, n: int) -> float:
    return 6.0 * math.sqrt(max(p * (1 - p), 0.0) / max(n, 1)) + 1.0 / max(n, 1)


# ---------------------------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------------------------

def dropout_gen_mask(shape: Sequence[int], prob: float, seed: int, offset: int) -> Array:
    """A bit mask for numel(shape) elements, each bit 1 (kept) with probability 1 - prob."""
    n = _numel("DropoutGenMask", shape)
    p = _prob("DropoutGenMask", prob)
    return pack_bits(_rng(seed, offset).random(n) >= p)


def dropout_gen_mask_v2(shape: Sequence[int], prob: float, seed: int, offset: int,
                        probDataType: np.dtype[Any]) -> Array:
    """DropoutGenMask; probDataType (the dtype prob is held in on the NPU) does not change
    the distribution here."""
    return dropout_gen_mask(shape, prob, seed, offset)


def _mask_checks(mask: Array, n: int, prob: float) -> list[Check]:
    bits = np.unpackbits(np.asarray(mask, np.uint8).reshape(-1), bitorder="little")
    kept = bits[:n]
    density = float(kept.mean()) if n else 1.0 - prob
    return [Check("mask density (kept fraction)", density, 1.0 - prob, _binomial_tol(1.0 - prob, n)),
            Check("mask bits set past numel", float(bits[n:].sum()), 0.0, 0.0)]


def _gen_mask_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    return _mask_checks(outputs[0], _numel("DropoutGenMask", inputs["shape"]), float(inputs["prob"]))


def dropout_do_mask(self: Array, mask: Array, prob: float) -> Array:
    """out = self * bit / (1 - prob), bit the element's mask bit (0 everywhere for prob 1).
    Deterministic given the mask: compared by value."""
    x = _f32(self) if np.asarray(self).dtype != np.float64 else np.asarray(self)
    p = _prob("DropoutDoMask", prob)
    keep = unpack_bits(mask, x.size).reshape(x.shape)
    scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    out: Array = np.where(keep, x * x.dtype.type(scale), x.dtype.type(0))
    return out


def dropout_backward(gradOutput: Array, mask: Array, scale: float) -> Array:
    """out = gradOutput * bit * scale (scale = 1 / (1 - p) from the forward)."""
    g = _f32(gradOutput) if np.asarray(gradOutput).dtype != np.float64 else np.asarray(gradOutput)
    keep = unpack_bits(mask, g.size, "DropoutBackward").reshape(g.shape)
    out: Array = np.where(keep, g * g.dtype.type(scale), g.dtype.type(0))
    return out


def dropout(input: Array, p: float, train: bool, seed: int, offset: int) -> tuple[Array, Array]:
    """Training: a bit mask drawn as DropoutGenMask's, and out = input * bit / (1 - p);
    returns (out, maskOut). Not training: out = input, and the mask keeps everything."""
    x = np.asarray(input)
    pr = _prob("Dropout", p, "p")
    if not train:
        return x.copy(), pack_bits(np.ones(x.size, bool))
    mask = dropout_gen_mask(list(x.shape), pr, seed, offset)
    return dropout_do_mask(x, mask, pr), mask


def _dropout_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    x = np.asarray(inputs["input"])
    p = float(inputs["p"]) if inputs["train"] else 0.0
    out, mask = outputs
    checks = _mask_checks(mask, x.size, p)
    redo = dropout_do_mask(x, mask, p) if inputs["train"] else x
    err = float(np.max(np.abs(np.asarray(out, np.float64) - np.asarray(redo, np.float64)), initial=0.0))
    scale = max(float(np.max(np.abs(np.asarray(redo, np.float64)), initial=0.0)), 1.0)
    checks.append(Check("out equals input * mask / (1 - p), max abs error", err, 0.0, 1e-2 * scale))
    return checks


# ---------------------------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------------------------

def multinomial(self: Array, numsamples: int, replacement: bool, seed: int, offset: int) -> Array:
    """numsamples category indices per row of self (1-D or 2-D non-negative weights),
    proportional to the weights; without replacement a category is drawn at most once."""
    w = np.asarray(self, np.float64)
    if w.ndim not in (1, 2):
        raise _invalid("Multinomial", "self", f"expected 1 or 2 dims, got shape {w.shape}")
    rows = w.reshape(-1, w.shape[-1])
    if np.any(rows < 0) or not np.all(np.isfinite(rows)) or np.any(rows.sum(axis=1) <= 0):
        raise _invalid("Multinomial", "self", "expected finite non-negative weights with a positive sum per row")
    if numsamples <= 0 or (not replacement and numsamples > np.count_nonzero(rows, axis=1).min()):
        raise _invalid("Multinomial", "numsamples", f"expected 1..{w.shape[-1]} (categories with a nonzero "
                                                    f"weight, without replacement), got {numsamples}")
    rng = _rng(seed, offset)
    out = np.empty((rows.shape[0], numsamples), np.int64)
    for i, r in enumerate(rows):
        out[i] = rng.choice(r.size, size=numsamples, replace=replacement, p=r / r.sum())
    return out.reshape(w.shape[:-1] + (numsamples,))


def _multinomial_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    w = np.asarray(inputs["self"], np.float64)
    rows = w.reshape(-1, w.shape[-1])
    got = np.asarray(outputs[0]).reshape(rows.shape[0], -1).astype(np.int64)
    in_range = (got >= 0) & (got < rows.shape[1])
    bad = int((~in_range).sum())
    safe = np.where(in_range, got, 0)
    zero_weight = int(np.sum(in_range & (np.take_along_axis(rows, safe, axis=1) <= 0)))
    checks = [Check("samples out of range", float(bad), 0.0, 0.0),
              Check("samples of zero-weight categories", float(zero_weight), 0.0, 0.0)]
    if not inputs["replacement"]:
        dup = sum(len(r) - len(set(r.tolist())) for r in got)
        checks.append(Check("repeated categories without replacement", float(dup), 0.0, 0.0))
    else:  # the mean category index, against its expectation
        p = rows / rows.sum(axis=1, keepdims=True)
        k = np.arange(rows.shape[1])
        mean = (p * k).sum(axis=1)
        var = (p * k * k).sum(axis=1) - mean ** 2
        n = got.size
        checks.append(Check("mean sampled index", float(got.mean()), float(mean.mean()),
                            6.0 * math.sqrt(float(var.sum()) * got.shape[1]) / max(n, 1) + 1e-9))
    return checks


def _bernoulli_draw(op: str, shape: tuple[int, ...], p: Array, seed: int, offset: int) -> Array:
    if np.any((p < 0) | (p > 1)):
        raise _invalid(op, "prob", "expected probabilities in [0, 1]")
    out: Array = (_rng(seed, offset).random(shape) < np.broadcast_to(p, shape)).astype(np.float32)
    return out


def bernoulli(self: Array, prob: float, seed: int, offset: int) -> Array:
    """out of self's shape: 1 with probability prob, else 0 (in out's dtype)."""
    return _bernoulli_draw("Bernoulli", np.shape(self), np.asarray(float(prob)), seed, offset)


def bernoulli_tensor(self: Array, prob: Array, seed: int, offset: int) -> Array:
    """As Bernoulli, with a probability per element (prob broadcast to self's shape)."""
    return _bernoulli_draw("BernoulliTensor", np.shape(self), np.asarray(prob, np.float64), seed, offset)


def inplace_bernoulli(selfRef: Array, prob: float, seed: int, offset: int) -> Array:
    return bernoulli(selfRef, prob, seed, offset)


def inplace_bernoulli_tensor(selfRef: Array, prob: Array, seed: int, offset: int) -> Array:
    return bernoulli_tensor(selfRef, prob, seed, offset)


def _bernoulli_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    shape_of = inputs.get("self", inputs.get("selfRef"))
    out = np.asarray(outputs[0], np.float64)
    p = np.broadcast_to(np.asarray(inputs["prob"], np.float64), np.shape(shape_of))
    n = out.size
    mean_p = float(p.mean()) if n else 0.0
    not01 = float(np.sum((out != 0) & (out != 1)))
    tol = 6.0 * math.sqrt(float((p * (1 - p)).sum())) / max(n, 1) + 1.0 / max(n, 1)
    return [Check("values other than 0 and 1", not01, 0.0, 0.0),
            Check("mean", float(out.mean()) if n else 0.0, mean_p, tol)]


def _normal(op: str, mean: Array, std: Array, seed: int, offset: int) -> Array:
    m, s = np.asarray(mean, np.float64), np.asarray(std, np.float64)
    if np.any(s < 0):
        raise _invalid(op, "std", "expected std >= 0")
    shape = np.broadcast_shapes(m.shape, s.shape)
    out: Array = (m + s * _rng(seed, offset).standard_normal(shape)).astype(np.float32)
    return out


def normal_float_tensor(mean: float, std: Array, seed: int, offset: int) -> Array:
    """out ~ N(mean, std^2) per element, of std's shape."""
    return _normal("NormalFloatTensor", np.asarray(mean), std, seed, offset)


def normal_tensor_float(mean: Array, std: float, seed: int, offset: int) -> Array:
    """out ~ N(mean, std^2) per element, of mean's shape."""
    return _normal("NormalTensorFloat", mean, np.asarray(std), seed, offset)


def normal_tensor_tensor(mean: Array, std: Array, seed: int, offset: int) -> Array:
    """out ~ N(mean, std^2) per element, mean and std broadcast together."""
    return _normal("NormalTensorTensor", mean, std, seed, offset)


def inplace_normal(selfRef: Array, mean: float, std: float, seed: int, offset: int) -> Array:
    """selfRef filled with N(mean, std^2) draws."""
    return _normal("InplaceNormal", np.broadcast_to(np.float64(mean), np.shape(selfRef)), np.asarray(std), seed,
                   offset)


def _normal_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    out = np.asarray(outputs[0], np.float64)
    m = np.broadcast_to(np.asarray(inputs["mean"], np.float64), out.shape)
    s = np.broadcast_to(np.asarray(inputs["std"], np.float64), out.shape)
    live = s > 0
    n = int(live.sum())
    z = (out[live] - m[live]) / s[live]
    checks = [Check("elements off their mean where std is 0", float(np.sum(out[~live] != m[~live])), 0.0, 0.0)]
    if n:
        checks += [Check("mean of (x - mean) / std", float(z.mean()), 0.0, 6.0 / math.sqrt(n)),
                   Check("variance of (x - mean) / std", float(z.var()), 1.0, 6.0 * math.sqrt(2.0 / n) + 1.0 / n)]
    return checks


def inplace_uniform(selfRef: Array, from_: float, to: float, seed: int, offset: int) -> Array:
    """selfRef filled with U[from, to) draws."""
    if from_ > to:
        raise _invalid("InplaceUniform", "from", f"expected from <= to, got {from_} > {to}")
    out: Array = _rng(seed, offset).uniform(from_, to, np.shape(selfRef))
    return out


def _uniform(selfRef: Array, seed: int, offset: int, **kw: float) -> Array:
    return inplace_uniform(selfRef, kw["from"], kw["to"], seed, offset)


def _uniform_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    out = np.asarray(outputs[0], np.float64)
    lo, hi = float(inputs["from"]), float(inputs["to"])
    n = out.size
    width = hi - lo
    outside = float(np.sum((out < lo) | (out > hi)))
    checks = [Check("values outside [from, to]", outside, 0.0, 0.0)]
    if n:
        checks.append(Check("mean", float(out.mean()), (lo + hi) / 2, 6.0 * width / math.sqrt(12.0 * n) + 1e-12))
    return checks


def _random(selfRef: Array, seed: int, offset: int, **kw: int) -> Array:
    """selfRef filled with integers drawn uniformly from [from, to)."""
    lo, hi = int(kw["from"]), int(kw["to"])
    if lo >= hi:
        raise _invalid("InplaceRandom", "to", f"expected from < to, got [{lo}, {hi})")
    out: Array = _rng(seed, offset).integers(lo, hi, np.shape(selfRef))
    return out


def _random_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    out = np.asarray(outputs[0], np.float64)
    lo, hi = float(inputs["from"]), float(inputs["to"])
    n = out.size
    outside = float(np.sum((out < lo) | (out >= hi) | (out != np.floor(out))))
    checks = [Check("values outside the integers of [from, to)", outside, 0.0, 0.0)]
    if n:
        k = hi - lo
        checks.append(Check("mean", float(out.mean()), (lo + hi - 1) / 2,
                            6.0 * math.sqrt((k * k - 1) / 12.0 / n) + 1e-12))
    return checks


def randperm(n: int, seed: int, offset: int) -> Array:
    """A random permutation of 0..n-1."""
    if n < 0:
        raise _invalid("Randperm", "n", f"expected n >= 0, got {n}")
    out: Array = _rng(seed, offset).permutation(n).astype(np.int64)
    return out


def _randperm_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    got = np.sort(np.asarray(outputs[0]).reshape(-1).astype(np.int64))
    n = int(inputs["n"])
    wrong = n if got.size != n else int(np.sum(got != np.arange(n)))
    return [Check("elements not a permutation of 0..n-1", float(wrong), 0.0, 0.0)]


def rrelu_with_noise(self: Array, noise: Array, lower: float, upper: float, training: bool, seed: int,
                     offset: int) -> Array:
    """x where x >= 0; elsewhere x * a, a ~ U[lower, upper] per element when training, else
    (lower + upper) / 2. (noise, the slopes' buffer, is an input here: the header declares
    it const.)"""
    x = _f32(self)
    if lower > upper:
        raise _invalid("RReluWithNoise", "lower", f"expected lower <= upper, got {lower} > {upper}")
    a = _rng(seed, offset).uniform(lower, upper, x.shape).astype(np.float32) if training else \
        np.float32((lower + upper) / 2)
    out: Array = np.where(x >= 0, x, x * a)
    return out


def inplace_rrelu_with_noise(self: Array, noise: Array, lower: float, upper: float, training: bool, seed: int,
                             offset: int) -> Array:
    """RReluWithNoise written into self."""
    return rrelu_with_noise(self, noise, lower, upper, training, seed, offset)


def _rrelu_stats(inputs: Mapping[str, Any], outputs: Sequence[Any]) -> list[Check]:
    x = np.asarray(inputs["self"], np.float64)
    out = np.asarray(outputs[0], np.float64)
    lo, hi = float(inputs["lower"]), float(inputs["upper"])
    pos, neg = x >= 0, x < 0
    slope = out[neg] / x[neg]
    off = float(np.sum(np.abs(out[pos] - x[pos]) > 1e-6 * np.abs(x[pos])))  # beyond the output's rounding
    tol = 1e-3 * max(abs(lo), abs(hi), 1.0)
    bad = float(np.sum((slope < lo - tol) | (slope > hi + tol)))
    if not inputs["training"]:
        bad = float(np.sum(np.abs(slope - (lo + hi) / 2) > tol))
    return [Check("non-negative inputs changed (beyond rounding)", off, 0.0, 0.0),
            Check("slopes outside [lower, upper]", bad, 0.0, 0.0)]


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

def _s(aclnn: str, params: str, fn: Any, doc: str, stats: Any) -> tuple[str, Formula]:
    return _f(aclnn, params, fn, doc + "; " + _DOC + aclnn + ".md", "sampled", stats)


FORMULAS: Mapping[str, Formula] = dict([
    _s("aclnnDropoutGenMask", "const aclIntArray *shape, double prob, int64_t seed, int64_t offset, aclTensor *out",
       dropout_gen_mask, "bit mask, each bit kept with probability 1 - prob", _gen_mask_stats),
    _s("aclnnDropoutGenMaskV2",
       "const aclIntArray *shape, double prob, int64_t seed, int64_t offset, aclDataType probDataType, "
       "aclTensor *out",
       dropout_gen_mask_v2, "bit mask, each bit kept with probability 1 - prob", _gen_mask_stats),
    _s("aclnnDropout",
       "const aclTensor *input, double p, bool train, int64_t seed, int64_t offset, aclTensor *out, "
       "aclTensor *maskOut",
       dropout, "out = input * mask / (1 - p) with a fresh bit mask", _dropout_stats),
    _s("aclnnMultinomial",
       "const aclTensor *self, int64_t numsamples, bool replacement, int64_t seed, int64_t offset, aclTensor *out",
       multinomial, "category indices drawn in proportion to the weights", _multinomial_stats),
    _s("aclnnBernoulli", "const aclTensor *self, const aclScalar *prob, int64_t seed, int64_t offset, aclTensor *out",
       bernoulli, "1 with probability prob, else 0", _bernoulli_stats),
    _s("aclnnBernoulliTensor",
       "const aclTensor *self, const aclTensor *prob, int64_t seed, int64_t offset, aclTensor *out",
       bernoulli_tensor, "1 with probability prob[i], else 0", _bernoulli_stats),
    _s("aclnnInplaceBernoulli", "const aclTensor *selfRef, const aclScalar *prob, int64_t seed, int64_t offset",
       inplace_bernoulli, "selfRef = 1 with probability prob, else 0", _bernoulli_stats),
    _s("aclnnInplaceBernoulliTensor", "const aclTensor *selfRef, const aclTensor *prob, int64_t seed, int64_t offset",
       inplace_bernoulli_tensor, "selfRef = 1 with probability prob[i], else 0", _bernoulli_stats),
    _s("aclnnNormalFloatTensor", "float mean, const aclTensor *std, int64_t seed, int64_t offset, aclTensor *out",
       normal_float_tensor, "N(mean, std^2) per element", _normal_stats),
    _s("aclnnNormalTensorFloat", "const aclTensor *mean, float std, int64_t seed, int64_t offset, aclTensor *out",
       normal_tensor_float, "N(mean, std^2) per element", _normal_stats),
    _s("aclnnNormalTensorTensor",
       "const aclTensor *mean, const aclTensor *std, int64_t seed, int64_t offset, aclTensor *out",
       normal_tensor_tensor, "N(mean, std^2) per element", _normal_stats),
    _s("aclnnInplaceNormal", "const aclTensor *selfRef, float mean, float std, int64_t seed, int64_t offset",
       inplace_normal, "selfRef filled with N(mean, std^2)", _normal_stats),
    _s("aclnnInplaceUniform", "const aclTensor *selfRef, double from, double to, uint64_t seed, uint64_t offset",
       _uniform, "selfRef filled with U[from, to)", _uniform_stats),
    _s("aclnnInplaceRandom", "const aclTensor *selfRef, int64_t from, int64_t to, int64_t seed, int64_t offset",
       _random, "selfRef filled with integers uniform in [from, to)", _random_stats),
    _s("aclnnRandperm", "int64_t n, int64_t seed, int64_t offset, aclTensor *out",
       randperm, "a random permutation of 0..n-1", _randperm_stats),
    _s("aclnnRReluWithNoise",
       "const aclTensor *self, const aclTensor *noise, const aclScalar *lower, const aclScalar *upper, "
       "bool training, int64_t seed, int64_t offset, aclTensor *out",
       rrelu_with_noise, "x, or x * U[lower, upper] below 0", _rrelu_stats),
    _s("aclnnInplaceRReluWithNoise",
       "const aclTensor *self, const aclTensor *noise, const aclScalar *lower, const aclScalar *upper, "
       "bool training, int64_t seed, int64_t offset",
       inplace_rrelu_with_noise, "self = x, or x * U[lower, upper] below 0", _rrelu_stats),
    _f("aclnnDropoutDoMask", "const aclTensor *self, const aclTensor *mask, double prob, aclTensor *out",
       dropout_do_mask, "out = self * bit / (1 - prob), bits LSB first; " + _DOC + "aclnnDropoutDoMask.md"),
    _f("aclnnDropoutBackward", "const aclTensor *gradOutput, const aclTensor *mask, double scale, aclTensor *out",
       dropout_backward, "out = gradOutput * bit * scale; " + _DOC + "aclnnDropoutBackward.md"),
])
