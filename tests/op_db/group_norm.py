"""Test data for GroupNormSwish and GroupNormSwishGrad."""
from __future__ import annotations

import numpy as np

from .common import F16, F32, F64, INVALID, NULLPTR, Chain, ErrorCase, HandCase, Samples, Sample, bfloat16, random

I32 = np.dtype(np.int32)
TILING = 561002  # ACLNN_ERR_INNER_TILING_ERROR: the shape rules of these generated APIs' tilings

# (shape, num_groups, keyword arguments): 2-D to 5-D, G = 1 and G = C, swish_scale != 1
# (also negative and 0), activate_swish False, other eps, data_format None or any string.
FORWARD_CASES = [
    ((2, 6, 5, 3), 3, {}),
    ((4, 6), 3, {"swish_scale": 1.7}),
    ((2, 8, 7), 1, {"eps": 1e-3}),
    ((2, 6, 4, 4), 6, {"swish_scale": 0.5, "data_format": None}),
    ((1, 4, 2, 3, 2), 2, {"activate_swish": False, "data_format": "NHWC"}),
    ((3, 4, 9), 4, {"swish_scale": -0.7}),
    ((2, 12, 3, 3), 4, {"swish_scale": 0.0}),
]


def _gamma_dtype(x_dtype, i: int):
    """Every allowed pair: float32 x takes float32 gamma; a 16-bit x alternates between
    its own dtype and float32."""
    return F32 if x_dtype == F32 or i % 2 else x_dtype


def forward_samples(dtype, rng) -> list[Sample]:
    out = []
    for i, (shape, g, kw) in enumerate(FORWARD_CASES):
        gd = _gamma_dtype(dtype, i)
        x = random(shape, dtype, rng)
        out.append(Sample((x, random(shape[1], gd, rng), random(shape[1], gd, rng), g), dict(kw)))
    return out


def _stats(x: np.ndarray, g: int):
    """mean and rstd of x's groups, computed here in float64 (inputs, not expectations)."""
    xr = x.astype(F64).reshape(x.shape[0], g, -1)
    return xr.mean(-1), 1.0 / np.sqrt(xr.var(-1) + 1e-5)


BACKWARD_CASES = [
    ((2, 6, 5, 3), 3, {}),
    ((4, 6), 3, {"swish_scale": 1.7}),
    ((2, 8, 7), 1, {"dgamma_is_require": False}),
    ((2, 6, 4, 4), 6, {"swish_scale": 0.5, "dbeta_is_require": False, "data_format": None}),
    ((1, 4, 2, 3, 2), 2, {"dgamma_is_require": False, "dbeta_is_require": False}),
    ((3, 4, 9), 4, {"swish_scale": -0.7, "data_format": "anything"}),
    ((5, 12, 3, 3), 4, {"swish_scale": 0.0}),
]


def backward_samples(dtype, rng) -> list[Sample]:
    out = []
    for shape, g, kw in BACKWARD_CASES:
        x = random(shape, dtype, rng)
        mean, rstd = _stats(x, g)
        c = shape[1]
        out.append(Sample((random(shape, dtype, rng), mean.astype(dtype), rstd.astype(dtype), x,
                           random(c, dtype, rng), random(c, dtype, rng), g), dict(kw)))
    return out


def a(*values, dtype=F32) -> np.ndarray:
    """a(1, 2) is [1, 2]; a([[1, 2]]) is [[1, 2]]."""
    return np.array(values[0] if len(values) == 1 else values, dtype=dtype)


# x = [[1, 5], [1, 5]] (N=1, C=2, HW=2), one group: mean 3, deviations +-2, variance 4;
# with eps 0, rstd = 1/2 exactly. gamma = [2, -1], beta = [0.5, 0.25]:
# z = [[-2*0.5*2 + 0.5, 2*0.5*2 + 0.5], [-2*0.5*-1 + 0.25, 2*0.5*-1 + 0.25]]
#   = [[-1.5, 2.5], [1.25, -0.75]].
X1, GAMMA1, BETA1 = a([[1, 5], [1, 5]]), a(2, -1), a(0.5, 0.25)  # X1 is (C, HW)
Z1 = a([[[-1.5, 2.5], [1.25, -0.75]]])
FORWARD_HAND = [
    HandCase("no-swish", (X1[None], GAMMA1, BETA1, 1), (Z1, a([[3]]), a([[0.5]])),
             {"eps": 0.0, "activate_swish": False}),
    # swish_scale 0: sigmoid(0) = 1/2, so y = z / 2.
    HandCase("swish-scale-0-halves", (X1[None], GAMMA1, BETA1, 1), (Z1 / 2, a([[3]]), a([[0.5]])),
             {"eps": 0.0, "swish_scale": 0.0}),
    # G = C = 2: group 0 = [1, 5] (mean 3, var 4, rstd 1/2), group 1 = [0, 1] (mean 1/2,
    # var 1/4, rstd 2); gamma 1, beta 0: z = [[-1, 1], [-1, 1]].
    HandCase("groups-equal-channels", (a([[[1, 5], [0, 1]]]), a(1, 1), a(0, 0), 2),
             (a([[[-1, 1], [-1, 1]]]), a([[3, 0.5]]), a([[0.5, 2]])), {"eps": 0.0, "activate_swish": False}),
    # float16 x with float32 gamma/beta: y is float16, mean and rstd float32.
    HandCase("f16-x-f32-gamma", (X1[None].astype(F16), GAMMA1, BETA1, 1),
             (Z1.astype(F16), a([[3]]), a([[0.5]])), {"eps": 0.0, "activate_swish": False}),
    HandCase("bf16-pair", (X1[None].astype(bfloat16), GAMMA1.astype(bfloat16), BETA1.astype(bfloat16), 1),
             (Z1.astype(bfloat16), a([[3]], dtype=bfloat16), a([[0.5]], dtype=bfloat16)),
             {"eps": 0.0, "activate_swish": False}),
]

def _swish_grad_formula() -> str:
    """The GroupNormSwishGrad formula both backends follow in this run (see
    tests/test_group_norm.py): the simulator's release's, or a real host's install's."""
    from conftest import REAL, sim_build
    from ascend_aclnn.ops import group_norm as gn
    if REAL:
        return gn.swish_grad_formula().formula
    return "corrected" if gn.has_swish_grad_fix(sim_build.default_version()) else "8.1"


SWISH_GRAD_FORMULA = _swish_grad_formula()

# x = [[-1, 1], [-1, 1]], mean 0, rstd 1 -> xhat = x; gamma = [1, 2], beta 0, M = 4;
# z = xhat * gamma = [[-1, 1], [-2, 2]]; dy = [[1, 0], [0, 1]]; swish_scale 0: sig = 1/2.
# The corrected formula: dsw = sig * (1 + 0 * z * (1 - sig)) = 1/2, so gz = dy / 2 = [[0.5, 0], [0, 0.5]].
# dbeta = [0.5, 0.5]; dgamma = [0.5 * -1, 0.5 * 1] = [-0.5, 0.5];
# c1 = (1*0.5 + 2*0.5) / 4 = 0.375; c2 = (1*-0.5 + 2*0.5) / 4 = 0.125;
# dx = gamma*gz - xhat*c2 - c1: channel 0 [0.5 + 0.125 - 0.375, 0 - 0.125 - 0.375] = [0.25, -0.5],
# channel 1 [0 + 0.125 - 0.375, 1 - 0.125 - 0.375] = [-0.25, 0.5].
# The 8.1 formula (no swish_scale in the second term): dsw = (1 + z/2) / 2 = [[0.25, 0.75], [0, 1]],
# gz = [[0.25, 0], [0, 1]]; dbeta = [0.25, 1]; dgamma = [0.25 * -1, 1 * 1] = [-0.25, 1];
# c1 = (1*0.25 + 2*1) / 4 = 0.5625; c2 = (1*-0.25 + 2*1) / 4 = 0.4375;
# dx: channel 0 [0.25 + 0.4375 - 0.5625, 0 - 0.4375 - 0.5625] = [0.125, -1],
# channel 1 [0 + 0.4375 - 0.5625, 2 - 0.4375 - 0.5625] = [-0.125, 1].
DY2, X2 = a([[[1, 0], [0, 1]]]), a([[[-1, 1], [-1, 1]]])
ARGS2 = (DY2, a([[0]]), a([[1]]), X2, a(1, 2), a(0, 0), 1)
DX2, DGAMMA2, DBETA2 = {"corrected": (a([[[0.25, -0.5], [-0.25, 0.5]]]), a(-0.5, 0.5), a(0.5, 0.5)),
                        "8.1": (a([[[0.125, -1], [-0.125, 1]]]), a(-0.25, 1), a(0.25, 1))}[SWISH_GRAD_FORMULA]


def _tie_case(dtype, half_ulp: float):
    """One channel, gamma = beta = 0: z = 0 and sig = 1/2, so dsw = 1/2 in both formulas,
    and gz = dy / 2 = [1, half_ulp]: dbeta = 1 + half_ulp, exactly halfway between 1 and
    the next value of dtype; half away from zero gives 1 + 2*half_ulp (nearest-even would
    give 1). dgamma = -1 + half_ulp (xhat = [-1, 1]) is representable; c1 = c2 = 0
    (gamma = 0), so dx = 0."""
    args = (a([[[2, 2 * half_ulp]]], dtype=dtype), a([[0]], dtype=dtype), a([[1]], dtype=dtype),
            a([[[-1, 1]]], dtype=dtype), a([0], dtype=dtype), a([0], dtype=dtype), 1)
    return HandCase(f"{np.dtype(dtype).name}-rounds-half-away-from-zero", args,
                    (a([[[0, 0]]], dtype=dtype), a([-1 + half_ulp], dtype=dtype), a([1 + 2 * half_ulp], dtype=dtype)),
                    {"swish_scale": 1.5})


BACKWARD_HAND = [
    HandCase("swish-scale-0", ARGS2, (DX2, DGAMMA2, DBETA2), {"swish_scale": 0.0}),
    HandCase("dgamma-not-required", ARGS2, (DX2, None, DBETA2),
             {"swish_scale": 0.0, "dgamma_is_require": False}),
    HandCase("neither-required", ARGS2, (DX2, None, None),
             {"swish_scale": 0.0, "dgamma_is_require": False, "dbeta_is_require": False}),
    _tie_case(F16, 2.0 ** -11),
    _tie_case(bfloat16, 2.0 ** -8),
]


def _x():
    return np.ones((2, 4, 3), F32)


def _c(dtype=F32, n=4):
    return np.ones(n, dtype)


FORWARD_ERRORS = [
    ErrorCase("x-none", (None, _c(), _c(), 2), NULLPTR, "x: expected tensor"),
    ErrorCase("gamma-none", (_x(), None, _c(), 2), NULLPTR, "gamma: expected tensor"),
    ErrorCase("beta-none", (_x(), _c(), None, 2), NULLPTR, "beta: expected tensor"),
    ErrorCase("x-int32", (_x().astype(I32), _c(), _c(), 2), INVALID,
              "x: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("x-float64", (_x().astype(F64), _c(F64), _c(F64), 2), INVALID, "x: .*got float64"),
    ErrorCase("f32-x-f16-gamma", (_x(), _c(F16), _c(F16), 2), INVALID,
              "gamma: expected dtype float32 with x of dtype float32, got float16"),
    ErrorCase("f16-x-bf16-gamma", (_x().astype(F16), _c(bfloat16), _c(bfloat16), 2), INVALID,
              "gamma: expected dtype float16 or float32 with x of dtype float16, got bfloat16"),
    ErrorCase("beta-dtype-differs", (_x().astype(F16), _c(F32), _c(F16), 2), INVALID,
              r"beta: expected dtype float32 \(the dtype of gamma\), got float16"),
    ErrorCase("out-y-dtype", (_x(), _c(), _c(), 2), INVALID, r"out\[0\] \(y\): expected dtype float32",
              kwargs={"out": (np.zeros((2, 4, 3), F16), None, None)}),
    ErrorCase("out-rstd-dtype", (_x().astype(F16), _c(), _c(), 2), INVALID,
              r"out\[2\] \(rstd\): expected dtype float32 \(the dtype of gamma\), got float16",
              kwargs={"out": (None, None, np.zeros((2, 2), F16))}),
    ErrorCase("x-1d", (np.ones(4, F32), _c(), _c(), 2), TILING, "x: expected a 2-D to 8-D tensor"),
    ErrorCase("x-9d", (np.ones((1, 4) + (1,) * 7, F32), _c(), _c(), 2), INVALID, "x: expected a 2-D to 8-D"),
    ErrorCase("x-empty-n", (np.ones((0, 4, 3), F32), _c(), _c(), 2), INVALID, "x: expected no empty dimension"),
    ErrorCase("x-empty-hw", (np.ones((2, 4, 0), F32), _c(), _c(), 2), INVALID, "x: expected no empty dimension"),
    ErrorCase("groups-0", (_x(), _c(), _c(), 0), TILING, "num_groups: expected num_groups > 0, got 0"),
    ErrorCase("groups-negative", (_x(), _c(), _c(), -2), TILING, "num_groups: expected num_groups > 0"),
    ErrorCase("groups-not-divisor", (_x(), _c(), _c(), 3), TILING,
              "num_groups: expected a divisor of the channel count C = 4, got 3"),
    ErrorCase("gamma-2d", (_x(), np.ones((1, 4), F32), _c(), 2), TILING,
              r"gamma: expected a 1-D tensor of length C = 4, got shape \(1, 4\)"),
    ErrorCase("beta-wrong-length", (_x(), _c(), _c(n=5), 2), TILING, "beta: expected a 1-D tensor of length C = 4"),
    # the tiling checks gamma and beta before num_groups
    ErrorCase("tiling-order-gamma-before-groups", (_x(), _c(n=3), _c(), 3), TILING,
              "gamma: expected a 1-D tensor of length C = 4"),
    # the tiling's failures come before the binding's own refusals (161002)
    ErrorCase("tiling-before-empty", (np.ones((0, 4, 3), F32), _c(), _c(), 3), TILING,
              "num_groups: expected a divisor of the channel count C = 4"),
    ErrorCase("out-mean-wrong-shape", (_x(), _c(), _c(), 2), INVALID,
              r"out\[1\] \(mean\): expected shape \(2, 2\), got shape \(2, 1\)",
              kwargs={"out": (None, np.zeros((2, 1), F32), None)}),
    ErrorCase("groups-float", (_x(), _c(), _c(), 2.0), INVALID, "num_groups: expected an int64", reaches_c=False),
    ErrorCase("groups-bool", (_x(), _c(), _c(), True), INVALID, "num_groups: expected an int64", reaches_c=False),
    ErrorCase("data-format-bytes", (_x(), _c(), _c(), 2, b"NCHW"), INVALID,
              "data_format: expected a str or None", reaches_c=False),
    ErrorCase("eps-str", (_x(), _c(), _c(), 2), INVALID, "eps: expected a real number",
              kwargs={"eps": "1e-5"}, reaches_c=False),
    ErrorCase("activate-swish-int", (_x(), _c(), _c(), 2), INVALID, "activate_swish: expected a bool",
              kwargs={"activate_swish": 2}, reaches_c=False),
    ErrorCase("out-not-tuple", (_x(), _c(), _c(), 2), INVALID, "out: expected a tuple of 3 arrays",
              kwargs={"out": np.zeros((2, 4, 3), F32)}, reaches_c=False),
]


def _bwd(dtype=F32, **change):
    """Valid grad arguments (N=2, C=4, HW=3, G=2), with some replaced."""
    args = {"dy": np.ones((2, 4, 3), dtype), "mean": np.zeros((2, 2), dtype), "rstd": np.ones((2, 2), dtype),
            "x": np.ones((2, 4, 3), dtype), "gamma": np.ones(4, dtype), "beta": np.ones(4, dtype), "num_groups": 2}
    args.update(change)
    return tuple(args.values())


BACKWARD_ERRORS = [
    *[ErrorCase(f"{name}-none", _bwd(**{name: None}), NULLPTR, f"{name}: expected tensor")
      for name in ("dy", "mean", "rstd", "x", "gamma", "beta")],
    ErrorCase("dy-int32", _bwd(dy=np.ones((2, 4, 3), I32)), INVALID,
              "dy: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("all-float64", _bwd(F64), INVALID, "dy: .*got float64"),
    *[ErrorCase(f"{name}-dtype-differs", _bwd(**{name: _bwd()[i].astype(F16)}), INVALID,
                rf"{name}: expected dtype float32 \(the dtype of dy: all tensors share one dtype\), got float16")
      for i, name in enumerate(("dy", "mean", "rstd", "x", "gamma", "beta")) if i],
    ErrorCase("f16-grad-f32-stats", _bwd(F16, mean=np.zeros((2, 2), F32)), INVALID,
              "mean: expected dtype float16 .*got float32"),
    ErrorCase("out-dx-dtype", _bwd(), INVALID, r"out\[0\] \(dx\): expected dtype float32",
              kwargs={"out": (np.zeros((2, 4, 3), bfloat16), None, None)}),
    ErrorCase("out-dbeta-dtype", _bwd(), INVALID, r"out\[2\] \(dbeta\): expected dtype float32",
              kwargs={"out": (None, None, np.zeros(4, F16))}),
    # a 1-D dy has no channel dimension: the tiling's first rule that needs one fails (gamma's)
    ErrorCase("dy-1d", _bwd(dy=np.ones(4, F32), x=np.ones(4, F32), mean=np.zeros((4, 2), F32),
                            rstd=np.ones((4, 2), F32)), TILING,
              r"gamma: expected a 1-D tensor of length C, the channel count of dy, got shape \(4,\) \(dy has "
              r"shape \(4,\), no channel dimension"),
    ErrorCase("dy-9d", _bwd(dy=np.ones((2, 4) + (1,) * 7, F32), x=np.ones((2, 4) + (1,) * 7, F32)), INVALID,
              "dy: expected a 2-D to 8-D tensor"),
    ErrorCase("x-shape-differs", _bwd(x=np.ones((2, 4, 4), F32)), TILING,
              r"x: expected the shape of dy \(2, 4, 3\), got shape \(2, 4, 4\)"),
    ErrorCase("empty-hw", _bwd(dy=np.ones((2, 4, 0), F32), x=np.ones((2, 4, 0), F32)), TILING,
              r"dy: expected no empty dimension \(H \* W > 0\)"),
    ErrorCase("empty-n", _bwd(dy=np.ones((0, 4, 3), F32), x=np.ones((0, 4, 3), F32), mean=np.zeros((0, 2), F32),
                              rstd=np.zeros((0, 2), F32)), TILING, r"dy: expected no empty dimension \(N \* num_groups"),
    ErrorCase("groups-0", _bwd(num_groups=0, mean=np.zeros((2, 0), F32), rstd=np.zeros((2, 0), F32)), TILING,
              r"num_groups: expected N \* num_groups > 0, got 0"),
    ErrorCase("groups-negative", _bwd(num_groups=-2), TILING, r"mean: expected shape \(N, num_groups\) = \(2, -2\)"),
    ErrorCase("groups-not-divisor", _bwd(num_groups=3, mean=np.zeros((2, 3), F32), rstd=np.zeros((2, 3), F32)),
              TILING, "num_groups: expected a divisor of the channel count C = 4"),
    ErrorCase("groups-over-channels", _bwd(num_groups=8, mean=np.zeros((2, 8), F32), rstd=np.zeros((2, 8), F32)),
              TILING, "num_groups: expected a divisor of the channel count C = 4, got 8"),
    ErrorCase("mean-wrong-groups", _bwd(mean=np.zeros((2, 1), F32)), TILING,
              r"mean: expected shape \(N, num_groups\) = \(2, 2\), got shape \(2, 1\)"),
    ErrorCase("mean-1d", _bwd(mean=np.zeros(4, F32)), TILING, r"mean: expected shape \(N, num_groups\)"),
    ErrorCase("rstd-differs", _bwd(rstd=np.ones((2, 2, 1), F32)), TILING,
              r"rstd: expected the shape of mean \(2, 2\), got shape \(2, 2, 1\)"),
    # mean and rstd (2, 2, 1) alike pass the dim checks and the equal-shape check, then fail the 2-D one
    ErrorCase("mean-3d", _bwd(mean=np.zeros((2, 2, 1), F32), rstd=np.ones((2, 2, 1), F32)), TILING,
              r"mean: expected shape \(N, num_groups\) = \(2, 2\), got shape \(2, 2, 1\)"),
    ErrorCase("gamma-wrong-length", _bwd(gamma=np.ones(3, F32)), TILING, "gamma: expected a 1-D tensor of length C = 4"),
    ErrorCase("beta-2d", _bwd(beta=np.ones((4, 1), F32)), TILING, "beta: expected a 1-D tensor of length C = 4"),
    ErrorCase("over-4000-per-group", (np.ones((1, 4001, 1), F32), np.zeros((1, 1), F32), np.ones((1, 1), F32),
                                      np.ones((1, 4001, 1), F32), np.ones(4001, F32), np.ones(4001, F32), 1),
              TILING, r"num_groups: expected at most 4000 channels per group .* got 1 \(4001 per group\)"),
    # the tiling checks mean's shape before num_groups, and gamma before an empty N
    ErrorCase("tiling-order-mean-before-groups", _bwd(num_groups=3), TILING,
              r"mean: expected shape \(N, num_groups\) = \(2, 3\)"),
    ErrorCase("tiling-order-gamma-before-empty", _bwd(dy=np.ones((0, 4, 3), F32), x=np.ones((0, 4, 3), F32),
                                                      mean=np.zeros((0, 2), F32), rstd=np.zeros((0, 2), F32),
                                                      gamma=np.ones(3, F32)), TILING,
              "gamma: expected a 1-D tensor of length C = 4"),
    # the tiling's failures come before the binding's own refusals (161002)
    ErrorCase("tiling-before-9d", _bwd(dy=np.ones((2, 4) + (1,) * 7, F32), x=np.ones((2, 4) + (1,) * 7, F32),
                                       num_groups=3), TILING, r"mean: expected shape"),
    ErrorCase("out-dgamma-wrong-shape", _bwd(), INVALID, r"out\[1\] \(dgamma\): expected shape \(4,\)",
              kwargs={"out": (None, np.zeros(5, F32), None)}),
    ErrorCase("flag-int", _bwd(), INVALID, "dgamma_is_require: expected a bool",
              kwargs={"dgamma_is_require": 2}, reaches_c=False),
    ErrorCase("swish-scale-none", _bwd(), INVALID, "swish_scale: expected a real number",
              kwargs={"swish_scale": None}, reaches_c=False),
]

OP_DB = {
    "group_norm_swish": Samples("group_norm_swish", (F32, F16, bfloat16), forward_samples, FORWARD_HAND,
                               FORWARD_ERRORS),
    "group_norm_swish_grad": Samples("group_norm_swish_grad", (F32, F16, bfloat16), backward_samples,
                                    BACKWARD_HAND, BACKWARD_ERRORS),
}


def _chain(put):
    """The forward on the device; its mean and rstd fed straight to the grad."""
    import ascend_aclnn as aa
    rng = np.random.default_rng(7)
    x, dy = random((2, 6, 4, 4), F32, rng), random((2, 6, 4, 4), F32, rng)
    gamma, beta = random(6, F32, rng), random(6, F32, rng)
    xd, gd, bd = put(x), put(gamma), put(beta)
    y, mean, rstd = aa.group_norm_swish(xd, gd, bd, 3, swish_scale=1.5)
    return (y, mean, rstd) + aa.group_norm_swish_grad(put(dy), mean, rstd, xd, gd, bd, 3, swish_scale=1.5)


CHAINS = [Chain("group-norm-swish-forward-then-grad", _chain)]
