"""Every documented limit of the described operators, at the limit and one past it, on both
backends (issue 36): at the limit the call runs and its results equal the golden reference's;
one past it the call is refused with the documented exception, status and argument, before any
C call, and (where the C form exists and the op_api checks it) the simulator's own op_api,
given only the C arguments, returns the same status.

Limits are read from what a user reads (the descriptions' constants, parameter docs and
notes), so a check that drifts from its sentence fails here, whichever of the two moved; a
limit stated only in prose is restated next to its row. Each dtype list is tested by
refusing every dtype outside it (the listed ones run in tests/test_ops.py's dtype cases).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import errors
from ascend_aclnn.cann.constants import ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR
from ascend_aclnn.ops import REGISTRY, group_norm, im2col, max_pool, pad, upsample
from ascend_aclnn.ops.spec import OpSpec, Tensor
from ascend_aclnn.reference import max_pool as max_pool_reference
from ascend_aclnn.tensors import bfloat16
from op_db import tolerance
from sim.c_args import simulator_status

Call = tuple[tuple[Any, ...], dict[str, Any]]
Refusal = tuple[type[aa.AclnnError], int]
INVALID: Refusal = (aa.AclnnParamInvalidError, ACLNN_ERR_PARAM_INVALID)
NULLPTR: Refusal = (aa.AclnnParamNullptrError, ACLNN_ERR_PARAM_NULLPTR)
TILING: Refusal = (errors.AclnnInnerTilingError, ACLNN_ERR_INNER_TILING_ERROR)
M = im2col.INT64_MAX  # the op_api's arithmetic is int64


@dataclass(frozen=True)
class Limit:
    op: str
    name: str
    at: Callable[[], Call]    # arguments at the limit: accepted
    past: Callable[[], Call]  # one past it
    error: Optional[Refusal]  # (exception, status); None: documented as no limit, so one past runs too
    argument: str = ""        # the argument the refusal names
    c_form: bool = True       # the op_api checks it too (False: the binding's own refusal, or no C form)

    @property
    def id(self) -> str:
        return f"{self.op}: {self.name}"


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(len(shape) * 131 + sum(shape)).standard_normal(shape).astype(np.float32) \
        .astype(dtype)


def _doc(spec: str, param: str) -> str:
    return next(p.doc for p in REGISTRY[spec].params if p.name == param)


def _ranks(spec: str, param: str) -> tuple[int, int]:
    """The lowest and highest rank a tensor's doc allows: '2-D to 8-D', or the shapes it
    names, '(N, C*kH*kW, L) or (C*kH*kW, L)' -> (2, 3); '(N, C, *)' is 2 dims up to the
    notes' 'more than 8 dims' refusal."""
    doc = _doc(spec, param)
    span = re.search(r"(\d+)-D to (\d+)-D", doc)
    if span:
        return int(span.group(1)), int(span.group(2))
    shapes = [t.split(", ") for t in re.findall(r"\(([A-Z][\w*]*(?:, (?:[A-Z][\w*]*|\*))+)\)", doc)]
    assert shapes, doc
    if any(s[-1] == "*" for s in shapes):
        most = re.findall(r"more than (\d+) dims", REGISTRY[spec].notes)
        assert len(shapes) == 1 and len(most) == 1, (doc, most)
        return len(shapes[0]) - 1, int(most[0])
    return min(map(len, shapes)), max(map(len, shapes))


def _lowest(spec: str, param: str) -> int:
    """The least value a pair's doc allows: 'each > 0' -> 1, 'each >= 0' -> 0."""
    found = re.findall(r"each (>=?) 0", _doc(spec, param))
    assert len(found) == 1, _doc(spec, param)
    return 0 if found[0] == ">=" else 1


def _shape_of_rank(rank: int, trailing: tuple[int, ...]) -> tuple[int, ...]:
    """A shape of that rank ending in trailing (leading dims of 1 added, or trailing cut)."""
    return ((1,) * rank + trailing)[-rank:] if rank else ()


LIMITS: list[Limit] = []


def limit(*args: Any, **kwargs: Any) -> None:
    LIMITS.append(Limit(*args, **kwargs))


def rank_limits(op: str, param: str, make: Callable[[int], Call], argument: str, lower: Refusal = INVALID,
                upper: Refusal = INVALID, lower_argument: str = "", upper_c_form: bool = True) -> None:
    """The lowest and highest rank param's doc names, and one past each; make(rank) builds the call."""
    lo, hi = _ranks(op, param)
    limit(op, f"{param} has at least {lo} dims", lambda: make(lo), lambda: make(lo - 1), lower,
          lower_argument or argument)
    limit(op, f"{param} has at most {hi} dims", lambda: make(hi), lambda: make(hi + 1), upper, argument,
          c_form=upper_c_form)


def _replace(call: Call, index: int, value: Any) -> Call:
    args = list(call[0])
    args[index] = value
    return tuple(args), call[1]


# ---- group_norm_swish(_grad) -------------------------------------------------------------------

def _gn(shape: tuple[int, ...], groups: int, c: int = 4) -> Call:
    return (_x(*shape), _x(c), _x(c), groups), {}


def _gn_grad(shape: tuple[int, ...], groups: int, c: int = 4) -> Call:
    stats = np.random.default_rng(5).uniform(0.5, 2.0, (2, shape[0], groups)).astype(np.float32)
    return (_x(*shape), 0.1 * stats[0], stats[1], _x(*shape) + 0.5, _x(c), _x(c), groups), {}


GN_SHAPE = (2, 4, 3, 3, 3, 3, 3, 3, 3)  # cut to each rank: N, C = 2, 4, then 3s
# below 2 dims the tiling refuses (561002); past 8 the binding refuses what the docs forbid and no
# tiling rule checks (161002, no op_api check)
rank_limits("group_norm_swish", "x", lambda r: _gn(GN_SHAPE[:r], 2), "x", lower=TILING, upper_c_form=False)
# (N, C, *): below 2 dims there is no channel dimension, which the grad's tiling finds at gamma
rank_limits("group_norm_swish_grad", "dy", lambda r: _gn_grad(GN_SHAPE[:r], 2), "dy", lower=TILING,
            lower_argument="gamma", upper_c_form=False)
limit("group_norm_swish", "num_groups > 0", lambda: _gn((2, 4, 3), 1), lambda: _gn((2, 4, 3), 0), TILING, "num_groups")
limit("group_norm_swish", "num_groups divides C (C / num_groups >= 1)", lambda: _gn((2, 4, 3), 4),
      lambda: _gn((2, 4, 3), 5), TILING, "num_groups")
limit("group_norm_swish", "no empty dimension", lambda: _gn((1, 4, 1), 2), lambda: _gn((1, 4, 0), 2),
      INVALID, "x", c_form=False)  # the binding's own: the tiling accepts it
G_MAX = group_norm.MAX_CHANNELS_PER_GROUP
limit("group_norm_swish_grad", f"C / num_groups <= {G_MAX}", lambda: _gn_grad((1, G_MAX), 1, G_MAX),
      lambda: _gn_grad((1, G_MAX + 1), 1, G_MAX + 1), TILING, "num_groups")
limit("group_norm_swish_grad", f"C / num_groups <= {G_MAX} (two groups)",
      lambda: _gn_grad((1, 2 * G_MAX), 2, 2 * G_MAX),
      lambda: _gn_grad((1, 2 * G_MAX + 2), 2, 2 * G_MAX + 2), TILING, "num_groups")
limit("group_norm_swish_grad", "N * num_groups > 0", lambda: _gn_grad((1, 4, 3), 2),
      lambda: _gn_grad((0, 4, 3), 2), TILING, "dy")
limit("group_norm_swish_grad", "H * W > 0", lambda: _gn_grad((1, 4, 1), 2), lambda: _gn_grad((1, 4, 0), 2),
      TILING, "dy")


# ---- im2col(_backward) -------------------------------------------------------------------------

def _i2c(shape: tuple[int, ...], k: Any = (1, 1), d: Any = (1, 1), p: Any = (0, 0), s: Any = (1, 1)) -> Call:
    return (_x(*shape), list(k), list(d), list(p), list(s)), {}


def _i2c_grad(shape: tuple[int, ...], size: Any, k: Any = (1, 1), d: Any = (1, 1), p: Any = (0, 0),
              s: Any = (1, 1)) -> Call:
    return (_x(*shape), list(size), list(k), list(d), list(p), list(s)), {}


rank_limits("im2col", "input", lambda r: _i2c(_shape_of_rank(r, (2, 3, 4))), "input")
rank_limits("im2col_backward", "grad_output", lambda r: _i2c_grad(_shape_of_rank(r, (4, 6)), [3, 4], [2, 2]),
            "grad_output")


def _geometry_limit(name: str) -> None:
    """'(kH, kW), each > 0', '... each >= 0' (the pairs' docs): H's value at the least one
    allowed, then one less, on both operators."""
    low = _lowest("im2col", name)

    def pairs(value: int) -> dict[str, list[int]]:
        q = {"kernel_size": [2, 2], "dilation": [1, 1], "padding": [0, 0], "stride": [1, 1]}
        q[name] = [value, q[name][1]]
        return q

    def forward(value: int) -> Call:
        q = pairs(value)
        return _i2c((1, 2, 5, 6), q["kernel_size"], q["dilation"], q["padding"], q["stride"])

    def backward(value: int) -> Call:
        q = pairs(value)
        (kh, _), (dh, _), (ph, _), (sh, _) = (q[n] for n in im2col.ARRAYS)
        kh = max(kh, 1)  # a refused kernel size still needs rows for the tensor
        ho = max((5 + 2 * ph - dh * (kh - 1) - 1) // max(sh, 1) + 1, 1)  # Wo = 5 for W = 6, kW = 2
        return _i2c_grad((1, 2 * kh * 2, ho * 5), [5, 6], *(q[n] for n in im2col.ARRAYS))

    limit("im2col", f"{name} >= {low}", lambda: forward(low), lambda: forward(low - 1), INVALID, name)
    limit("im2col_backward", f"{name} >= {low}", lambda: backward(low), lambda: backward(low - 1), INVALID, name)


for _name in im2col.ARRAYS:
    _geometry_limit(_name)
# "C, H, W > 0": prose of input's doc
limit("im2col", "H > 0", lambda: _i2c((2, 1, 3)), lambda: _i2c((2, 0, 3)), INVALID, "input")
# SIZES_DOC's Ho >= 1: H at the kernel's extent dH(kH-1)+1 = 5, then one less
limit("im2col", "H fits one block (Ho >= 1)", lambda: _i2c((1, 5, 5), [3, 1], [2, 1]),
      lambda: _i2c((1, 4, 5), [3, 1], [2, 1]), INVALID, "input")
# "L is checked against input_size with C's truncating division, so a size with no full block
# passes when L = 0": H = the extent - 1 counts 0 blocks; one less counts -1
limit("im2col_backward", "no full block passes when L = 0", lambda: _i2c_grad((1, 4, 0), [1, 3], [2, 2]),
      lambda: _i2c_grad((1, 4, 0), [0, 3], [2, 2]), INVALID, "grad_output")
# The op_api's int64 arithmetic (ops/im2col.py _check_extent): H + 2pH and dH(kH-1)+1 at 2**63-1.
# H = 3 is odd, so H + 2pH reaches 2**63-1 exactly; a stride of 2**63-1 leaves one block.
P3 = (M - 3) // 2
limit("im2col", "H + 2*padding <= 2**63-1", lambda: _i2c((1, 3, 4), p=[P3, 0], s=[M, 1]),
      lambda: _i2c((1, 3, 4), p=[P3 + 1, 0], s=[M, 1]), INVALID, "padding")
limit("im2col", "dilation*(kernel_size-1)+1 <= 2**63-1", lambda: _i2c((1, 3, 4), [2, 1], [M - 1, 1], [P3, 0]),
      lambda: _i2c((1, 3, 4), [2, 1], [M, 1], [P3, 0]), INVALID, "kernel_size")
limit("im2col", "int64 values", lambda: _i2c((1, 3, 4), s=[M, 1]), lambda: _i2c((1, 3, 4), s=[M + 1, 1]),
      INVALID, "stride", c_form=False)  # no C form: C cannot express it
# The backward at both extents at once: H = 1, one block, its two taps in the padding.
P1 = (M - 1) // 2
limit("im2col_backward", "input_size + 2*padding <= 2**63-1",
      lambda: _i2c_grad((1, 2, 4), [1, 4], [2, 1], [M - 1, 1], [P1, 0]),
      lambda: _i2c_grad((1, 2, 4), [1, 4], [2, 1], [M - 1, 1], [P1 + 1, 0]), INVALID, "padding")
limit("im2col_backward", "dilation*(kernel_size-1)+1 <= 2**63-1",
      lambda: _i2c_grad((1, 2, 4), [1, 4], [2, 1], [M - 1, 1], [P1, 0]),
      lambda: _i2c_grad((1, 2, 4), [1, 4], [2, 1], [M, 1], [P1, 0]), INVALID, "kernel_size")


# ---- max_pool2d_with_mask(_backward) -----------------------------------------------------------
# The pool parameters are (kernel_size, stride, padding, dilation) at 1-4 for the forward and
# 3-6 for the backward: a past call is the at call with one of them replaced.

def _mp(shape: tuple[int, ...], k: Any, s: Any = (), p: Any = (0, 0), d: Any = (1, 1)) -> Call:
    return (_x(*shape), list(k), list(s), list(p), list(d), False), {}


def _mp_grad(shape: tuple[int, ...], k: Any, s: Any = (), p: Any = (0, 0), d: Any = (1, 1),
             mask_bytes: Optional[int] = None) -> Call:
    """grad and mask from the forward's reference; mask_bytes keeps only the mask's first
    bytes, as a (1, 1, 1, bytes) mask."""
    x = _x(*shape)
    out, mask = max_pool_reference.max_pool2d_with_mask(x, k, s, p, d, False)
    if mask_bytes is not None:
        mask = np.ascontiguousarray(mask.reshape(-1)[:mask_bytes].reshape(1, 1, 1, mask_bytes))
    return (_x(*out.shape) + 1, x, mask, list(k), list(s), list(p), list(d), False), {}


MP_SHAPE = (1, 2, 7, 6)
POOL = {"max_pool2d_with_mask": (_mp, 1), "max_pool2d_with_mask_backward": (_mp_grad, 3)}


def _pool_limit(op: str, name: str, at: dict[str, Any], which: str, value: Any, error: Refusal = INVALID) -> None:
    make, first = POOL[op]
    index = first + "kspd".index(which)
    limit(op, name, lambda: make(MP_SHAPE, **at), lambda: _replace(make(MP_SHAPE, **at), index, value), error,
          {"k": "kernel_size", "s": "stride", "p": "padding", "d": "dilation"}[which])


def _grad_of_rank(call: Call, rank: int) -> Call:
    g = call[0][0]
    return _replace(call, 0, g.reshape((-1,) + g.shape[g.ndim - rank + 1:]))


rank_limits("max_pool2d_with_mask", "input", lambda r: _mp(_shape_of_rank(r, MP_SHAPE), [2, 2]), "input")
# the backward's input doc names no shape; grad_output's names the same ranks
rank_limits("max_pool2d_with_mask_backward", "grad_output",
            lambda r: _grad_of_rank(_mp_grad(MP_SHAPE[-min(max(r, 3), 4):], [2, 2]), r), "grad_output")
for _op in POOL:
    # "0 <= p <= kernel // 2" (padding's doc), an odd and an even kernel on each axis
    for _k, _axis in (([3, 4], 0), ([3, 4], 1), ([5, 2], 0), ([5, 2], 1)):
        _at = [k // 2 for k in _k]
        _pool_limit(_op, f"padding <= kernel_size // 2 (kernel {_k}, axis {_axis})", dict(k=_k, p=_at), "p",
                    [v + (i == _axis) for i, v in enumerate(_at)])
    _pool_limit(_op, "padding >= 0", dict(k=[3, 3], p=[0, 0]), "p", [-1, 0])
    # "[1, 1] or [1]: the A2/A3 kernels support no other"
    _pool_limit(_op, "dilation is 1", dict(k=[2, 2]), "d", [2, 1])
    # "[kH, kW], or [k] for both": the backward's wrong length is 161001, as in the op_api (its notes)
    _pool_limit(_op, "kernel_size has at most 2 values", dict(k=[2, 2]), "k", [2, 2, 2],
                NULLPTR if _op.endswith("backward") else INVALID)
    _pool_limit(_op, "kernel_size has at least 1 value", dict(k=[2]), "k", [],
                NULLPTR if _op.endswith("backward") else INVALID)
    _pool_limit(_op, "kernel_size > 0", dict(k=[1, 2]), "k", [0, 2])
    _pool_limit(_op, "stride > 0", dict(k=[2, 2], s=[1, 2]), "s", [0, 2])
    # "[sH, sW], [s] for both, or []": at most 2 values
    _pool_limit(_op, "stride has at most 2 values", dict(k=[2, 2], s=[1, 2]), "s", [1, 2, 2])
    # "[pH, pW] or [p]": 1 or 2 values
    _pool_limit(_op, "padding has at least 1 value", dict(k=[3, 3], p=[1]), "p", [])
    _pool_limit(_op, "padding has at most 2 values", dict(k=[3, 3], p=[1, 1]), "p", [1, 1, 1])
limit("max_pool2d_with_mask", "H > 0 (only N may be 0)", lambda: _mp((1, 2, 1, 6), [1, 2]),
      lambda: _mp((1, 2, 0, 6), [1, 2]), INVALID, "input")
limit("max_pool2d_with_mask", "H fits one window (Ho >= 1)", lambda: _mp((1, 2, 3, 6), [3, 2]),
      lambda: _mp((1, 2, 2, 6), [3, 2]), INVALID, "input")
# The backward reads 4*N*C*Ho*Wo bytes of int32 indices from the mask (the binding's own check:
# the op_api ignores the mask's shape). (1, 2, 7, 6) with 3x3 windows, stride 2: 3x2 outputs.
_NEED = 4 * 1 * 2 * 3 * 2
limit("max_pool2d_with_mask_backward", "mask holds 4*N*C*Ho*Wo bytes",
      lambda: _mp_grad(MP_SHAPE, [3, 3], [2, 2], mask_bytes=_NEED),
      lambda: _mp_grad(MP_SHAPE, [3, 3], [2, 2], mask_bytes=_NEED - 1), INVALID, "mask", c_form=False)


# ---- upsample_nearest_exact1d(_backward) -------------------------------------------------------

def _up(shape: tuple[int, ...], size: Any, scales: float = 0.0) -> Call:
    return (_x(*shape), list(size), scales), {}


def _up_grad(l_out: int, size: Any, scales: float = 0.0, n_c: tuple[int, int] = (1, 2)) -> Call:
    return (_x(*n_c, l_out), [l_out], list(size), scales), {}


MAG = upsample.MAX_MAGNIFICATION
rank_limits("upsample_nearest_exact1d", "input", lambda r: _up(_shape_of_rank(r, (1, 2, 3)), [5]), "input")
rank_limits("upsample_nearest_exact1d_backward", "grad_output",
            lambda r: ((_x(*_shape_of_rank(r, (1, 2, 3))), [3], [1, 2, 2], 0.0), {}), "grad_output")
# "N, C, L_in of input and output_size[0] all > 0" (the check), "[L_out]" (output_size's doc)
limit("upsample_nearest_exact1d", "L_in > 0", lambda: _up((1, 2, 1), [3]), lambda: _up((1, 2, 0), [3]),
      INVALID, "input")
limit("upsample_nearest_exact1d", "output_size[0] > 0", lambda: _up((1, 2, 3), [1]), lambda: _up((1, 2, 3), [0]),
      INVALID, "input")
limit("upsample_nearest_exact1d", "output_size has 1 value", lambda: _up((1, 2, 3), [4]),
      lambda: _up((1, 2, 3), [4, 4]), INVALID, "output_size")
limit("upsample_nearest_exact1d", f"no magnification limit (past {MAG}x runs)", lambda: _up((1, 2, 2), [2 * MAG]),
      lambda: _up((1, 2, 2), [2 * MAG + 1]), None)
limit("upsample_nearest_exact1d_backward", f"L_out <= {MAG} * L_in", lambda: _up_grad(2 * MAG, [1, 2, 2]),
      lambda: _up_grad(2 * MAG + 1, [1, 2, 2]), INVALID, "scales")
limit("upsample_nearest_exact1d_backward", f"scales <= {MAG}", lambda: _up_grad(3, [1, 2, 2], float(MAG)),
      lambda: _up_grad(3, [1, 2, 2], float(np.nextafter(MAG, np.inf))), INVALID, "scales")
# a limit on magnification only: a scales below 1/50 (shrinking) runs
limit("upsample_nearest_exact1d_backward", f"no lower limit on scales (below 1/{MAG} runs)",
      lambda: _up_grad(3, [1, 2, 2], 1 / MAG), lambda: _up_grad(3, [1, 2, 2], float(np.nextafter(1 / MAG, 0))), None)
# "0.0 means not given" and the check's "scales >= 0"
limit("upsample_nearest_exact1d_backward", "scales >= 0", lambda: _up_grad(3, [1, 2, 2], 0.0),
      lambda: _up_grad(3, [1, 2, 2], float(np.nextafter(0.0, -1.0))), INVALID, "scales")
limit("upsample_nearest_exact1d_backward", "C > 0", lambda: _up_grad(3, [1, 1, 2], n_c=(1, 1)),
      lambda: _up_grad(3, [1, 0, 2], n_c=(1, 0)), INVALID, "grad_output")
limit("upsample_nearest_exact1d_backward", "input_size has 3 values", lambda: _up_grad(3, [1, 2, 2]),
      lambda: _up_grad(3, [1, 2, 2, 1]), INVALID, "input_size")


# ---- replication_pad2d(_backward) --------------------------------------------------------------

def _pad(shape: tuple[int, ...], padding: list[int]) -> Call:
    return (_x(*shape), padding), {}


def _pad_grad(shape: tuple[int, ...], padding: list[int], dtype: Any = np.float32) -> Call:
    left, right, top, bottom = (padding + [0] * 4)[:4]
    out = shape[:-2] + (max(shape[-2] + top + bottom, 0), max(shape[-1] + left + right, 0))
    return (_x(*out, dtype=dtype), _x(*shape, dtype=dtype), padding), {}


def _bf16_limit(where: int) -> None:
    """'bfloat16 requires pads >= 0 and, when top or bottom is non-zero, every pad <= 7'."""
    def call(value: int) -> Call:
        return _pad_grad((1, 2, 3, 4), [value if i == where else 1 for i in range(4)], bfloat16)
    limit("replication_pad2d_backward", f"bfloat16: pad {where} <= {pad.BF16_MAX_PAD} with H padded",
          lambda: call(pad.BF16_MAX_PAD), lambda: call(pad.BF16_MAX_PAD + 1), INVALID, "padding")
    limit("replication_pad2d_backward", f"bfloat16: pad {where} >= 0", lambda: call(0), lambda: call(-1),
          INVALID, "padding")


for _where in range(4):
    _bf16_limit(_where)
for _op, _call in (("replication_pad2d", _pad), ("replication_pad2d_backward", _pad_grad)):
    rank_limits(_op, "input", lambda r, c=_call: c(_shape_of_rank(r, (2, 3, 4, 5)), [1, 1, 1, 1]), "input")
    # "[left, right, top, bottom]": exactly that many values
    _n = len(re.findall(r"\w+", _doc(_op, "padding").split("]")[0]))
    limit(_op, f"padding has at most {_n} values", lambda c=_call, n=_n: c((1, 2, 3, 4), [1] * n),
          lambda c=_call, n=_n: c((1, 2, 3, 4), [1] * (n + 1)), INVALID, "padding")
    limit(_op, f"padding has at least {_n} values", lambda c=_call, n=_n: c((1, 2, 3, 4), [1] * n),
          lambda c=_call, n=_n: c((1, 2, 3, 4), [1] * (n - 1)), INVALID, "padding")
# "negative crops"; "a 4-D input with N = 0 succeeds" (an empty result): cropping H to 0 runs on
# a 4-D input, one more is refused; "A 3-D input with any empty tensor is an error"
limit("replication_pad2d", "H + top + bottom >= 0 (4-D)", lambda: _pad((1, 2, 3, 4), [0, 0, -3, 0]),
      lambda: _pad((1, 2, 3, 4), [0, 0, -4, 0]), INVALID, "padding",
      c_form=False)  # no C form: an out of H = -1 cannot be made
limit("replication_pad2d", "H + top + bottom >= 1 (3-D)", lambda: _pad((2, 3, 4), [0, 0, -2, 0]),
      lambda: _pad((2, 3, 4), [0, 0, -3, 0]), INVALID, "input")
limit("replication_pad2d_backward", "H + top + bottom >= 0 (4-D)", lambda: _pad_grad((1, 2, 3, 4), [0, 0, -3, 0]),
      lambda: _pad_grad((1, 2, 3, 4), [0, 0, 0, -4]), INVALID, "grad_output")


# ---- the tests -------------------------------------------------------------------------------

def _reference(spec: OpSpec, call: Call) -> tuple[Any, ...]:
    bound = spec.signature.bind(*call[0], **call[1])
    bound.apply_defaults()
    result = spec.reference(*(bound.arguments[p.name] for p in spec.params))
    return result if isinstance(result, tuple) else (result,)


def _assert_equal_to_reference(spec: OpSpec, call: Call, got: Any) -> None:
    got = got if isinstance(got, tuple) else (got,)
    want = _reference(spec, call)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind == "f" and spec.name.startswith("group_norm"):  # sums: the backends' order may differ
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **tolerance(w.dtype))
        else:  # gathers and float32 sums in a fixed order: bit for bit
            np.testing.assert_array_equal(g.view(f"u{g.itemsize}"), w.view(f"u{w.itemsize}"))


def _refusal(spec: OpSpec, call: Call, error: Refusal, argument: str) -> aa.AclnnError:
    with pytest.raises(aa.AclnnError) as info:
        getattr(aa, spec.name)(*call[0], **call[1])
    exc, (kind, status) = info.value, error
    assert type(exc) is kind and exc.status == status and exc.argument == argument, \
        f"expected {kind.__name__} ({status}) naming {argument}, got {type(exc).__name__} " \
        f"({exc.status}) naming {exc.argument}: {exc}"
    assert exc.api == spec.phase1_name, exc  # refused in phase 1, before any kernel
    return exc


@pytest.mark.parametrize("limit", LIMITS, ids=lambda lim: lim.id)
def test_at_the_limit_runs_and_one_past_is_refused(backend, limit):
    spec = REGISTRY[limit.op]
    at = limit.at()
    _assert_equal_to_reference(spec, at, getattr(aa, spec.name)(*at[0], **at[1]))
    past = limit.past()
    if limit.error is None:
        _assert_equal_to_reference(spec, past, getattr(aa, spec.name)(*past[0], **past[1]))
        return
    _refusal(spec, past, limit.error, limit.argument)
    if backend == "npu":  # the C side on its own: the simulator's op_api, from the C arguments
        status = simulator_status(spec, *past)
        if limit.c_form:
            assert status == limit.error[1], f"the simulator's op_api answered {status}"
        assert simulator_status(spec, *at) in ("accepted", None)


def test_the_notes_state_the_magnification_limit_the_checks_apply():
    """The rows above test the op_api's rule, realScale = 1/scales (or L_in/L_out) >= 1/50:
    L_out <= 50 * L_in, or scales <= 50. The notes must say that, not its inverse."""
    notes = REGISTRY["upsample_nearest_exact1d_backward"].notes
    assert f"(L_out <= {MAG} * L_in, or scales <= {MAG} when scales is given)" in notes, notes


DTYPE_POOL = [np.dtype(t) for t in (np.float64, np.float32, np.float16, np.complex64, np.complex128, np.int8,
                                    np.uint8, np.int16, np.int32, np.int64, np.bool_)] + [bfloat16]


@pytest.mark.parametrize("op,param", [(s.name, p.name) for s in REGISTRY for p in s.params
                                      if isinstance(p, Tensor) and p.dtypes])
def test_every_dtype_outside_a_tensors_list_is_refused(backend, op, param):
    """A dtype list's "one past": each dtype it does not name, given for that tensor alone in
    the description's example, is refused naming it (and by the simulator's op_api alone)."""
    spec = REGISTRY[op]
    listed = next(p.dtypes for p in spec.params if p.name == param)
    outside = [d for d in DTYPE_POOL if d not in listed]
    assert outside, listed
    args, kwargs = spec.example(np.random.default_rng(0), np.dtype(np.float32))
    for dtype in outside:
        bound = spec.signature.bind(*args, **kwargs)
        bound.arguments[param] = np.asarray(bound.arguments[param]).astype(dtype)
        call = (bound.args, bound.kwargs)
        _refusal(spec, call, INVALID, param)
        if backend == "npu":
            status = simulator_status(spec, *call)
            assert status == ACLNN_ERR_PARAM_INVALID, (dtype, status)
