"""GroupNormSwish and GroupNormSwishGrad.

Both aclnn APIs are generated from the operator definitions (there is no hand-written
op_api): null pointers give 161001, a dtype outside the definition's combinations 161002,
and the shape rules are the tiling's. A tiling failure surfaces from GetWorkspaceSize with
a status that is not confirmed; the binding, and the simulator, report 161002 for it.
Checks run in that order: nulls, dtypes, then shapes.
"""
from __future__ import annotations

import numpy as np

from ..reference import group_norm as reference
from ..tensors import bfloat16, dtype_name
from .spec import Args, Checker, Double, OpSpec, Output, Scalar, Tensor, dtype_list

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
FLOATS = (F32, F16, bfloat16)
MAX_CHANNELS_PER_GROUP = 4000  # the grad tiling's limit on C / num_groups
FORWARD_OUT = ("out[0] (y)", "out[1] (mean)", "out[2] (rstd)")
BACKWARD_OUT = ("out[0] (dx)", "out[1] (dgamma)", "out[2] (dbeta)")


def _gamma_dtypes(x_dtype: np.dtype) -> tuple:
    """gamma (= beta = mean = rstd) dtypes the forward's definition pairs with x's."""
    return (F32,) if x_dtype == F32 else (x_dtype, F32)


def _check_x_layout(check: Checker, name: str, shape: tuple, num_groups: int) -> None:
    """The rules on (N, C, *) and num_groups shared by both tilings."""
    if not 2 <= len(shape) <= 8:
        check.mismatch(name, "a 2-D to 8-D tensor (N, C, *)", f"shape {shape}")
    if 0 in shape:
        check.mismatch(name, "no empty dimension (empty tensors are not supported)", f"shape {shape}")
    if num_groups <= 0:
        check.mismatch("num_groups", "num_groups > 0", f"{num_groups}")
    if shape[1] % num_groups:
        check.mismatch("num_groups", f"a divisor of the channel count C = {shape[1]}", f"{num_groups}")


def _check_channel_vector(check: Checker, name: str, t, c: int) -> None:
    if t.shape != (c,):
        check.mismatch(name, f"a 1-D tensor of length C = {c}", f"shape {t.shape}")


def _check_forward(a: Args, check: Checker) -> None:
    x, gamma, beta = a.x, a.gamma, a.beta
    # dtypes: the definition's (x, gamma = beta) combinations
    check.dtype("x", x, FLOATS)
    allowed = _gamma_dtypes(x.dtype)
    if gamma.dtype not in allowed:
        check.mismatch("gamma", f"dtype {dtype_list(allowed)} with x of dtype {dtype_name(x.dtype)}",
                       dtype_name(gamma.dtype))
    check.same_dtype("beta", beta, "gamma", gamma)
    for label, out, want, of in zip(FORWARD_OUT, a.outputs, (x.dtype, gamma.dtype, gamma.dtype),
                                    ("x", "gamma", "gamma")):
        if out.dtype != want:
            check.mismatch(label, f"dtype {dtype_name(want)} (the dtype of {of})", dtype_name(out.dtype))
    # shapes (the tiling's rules)
    _check_x_layout(check, "x", x.shape, a.num_groups)
    _check_channel_vector(check, "gamma", gamma, x.shape[1])
    _check_channel_vector(check, "beta", beta, x.shape[1])


def _check_backward(a: Args, check: Checker) -> None:
    dy = a.dy
    # dtypes: all nine tensors share one of float32, float16, bfloat16
    check.dtype("dy", dy, FLOATS)
    same = f"dtype {dtype_name(dy.dtype)} (the dtype of dy: all tensors share one dtype)"
    for name in ("mean", "rstd", "x", "gamma", "beta"):
        if a[name].dtype != dy.dtype:
            check.mismatch(name, same, dtype_name(a[name].dtype))
    for label, out in zip(BACKWARD_OUT, a.outputs):
        if out.dtype != dy.dtype:
            check.mismatch(label, same, dtype_name(out.dtype))
    # shapes (the tiling's rules)
    if not 2 <= dy.ndim <= 8:
        check.mismatch("dy", "a 2-D to 8-D tensor (N, C, *)", f"shape {dy.shape}")
    if a.x.shape != dy.shape:
        check.mismatch("x", f"the shape of dy {dy.shape}", f"shape {a.x.shape}")
    _check_x_layout(check, "dy", dy.shape, a.num_groups)
    n, c = dy.shape[:2]
    if a.mean.shape != (n, a.num_groups):
        check.mismatch("mean", f"shape (N, num_groups) = {(n, a.num_groups)}", f"shape {a.mean.shape}")
    if a.rstd.shape != a.mean.shape:
        check.mismatch("rstd", f"the shape of mean {a.mean.shape}", f"shape {a.rstd.shape}")
    _check_channel_vector(check, "gamma", a.gamma, c)
    _check_channel_vector(check, "beta", a.beta, c)
    if c // a.num_groups > MAX_CHANNELS_PER_GROUP:
        check.mismatch("num_groups", f"at most {MAX_CHANNELS_PER_GROUP} channels per group "
                       f"(C / num_groups, C = {c})", f"{a.num_groups} ({c // a.num_groups} per group)")


def _random(shape, dtype, rng) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def _forward_example(rng, dtype):
    return (_random((2, 4, 3, 3), dtype, rng), _random(4, dtype, rng), _random(4, dtype, rng), 2), {}


def _backward_example(rng, dtype):
    mean = (0.1 * rng.standard_normal((2, 2))).astype(dtype)
    rstd = rng.uniform(0.5, 2.0, (2, 2)).astype(dtype)
    return (_random((2, 4, 3, 3), dtype, rng), mean, rstd, _random((2, 4, 3, 3), dtype, rng),
            _random(4, dtype, rng), _random(4, dtype, rng), 2), {}


NUM_GROUPS_DOC = "G: the channels split into G groups of C/G consecutive channels"
DATA_FORMAT_DOC = ("accepted and ignored, as on the NPU (any str, or None for NULL): the layout is "
                   "always channel-second, (N, C, *)")
SHAPE_STATUS_NOTE = ("Shape errors (ranks, empty tensors, num_groups, gamma/beta/mean/rstd shapes) are "
                     "raised as ACLNN_ERR_PARAM_INVALID (161002). On the NPU they are tiling failures "
                     "returned by GetWorkspaceSize whose exact status is not confirmed (possibly "
                     "ACLNN_ERR_INNER_TILING_ERROR, 561002).")

NON_FINITE_NOTE = ("NaN and inf inputs are unsupported on the NPU, whose Kahan sums turn an inf into "
                   "NaN: on both backends a group holding one gives NaN statistics and outputs, a "
                   "dgamma/dbeta channel that is not finite is NaN, and a non-finite gamma or beta makes "
                   "its channel of y, its group of dx and its dgamma/dbeta NaN (unconfirmed on hardware).")

GROUP_NORM_SWISH_GRAD = OpSpec(
    name="group_norm_swish_grad",
    aclnn="aclnnGroupNormSwishGrad",
    summary="Gradient of group_norm_swish with respect to x, gamma and beta.",
    params=(
        Tensor("dy", "dy", "gradient of the forward output y, (N, C, *)", dtypes=FLOATS),
        Tensor("mean", "mean", "the forward's mean, (N, num_groups); used as given", dtypes=FLOATS),
        Tensor("rstd", "rstd", "the forward's rstd, (N, num_groups); used as given", dtypes=FLOATS),
        Tensor("x", "x", "the forward input, dy's shape", dtypes=FLOATS),
        Tensor("gamma", "gamma", "the forward's scale, (C,)", dtypes=FLOATS),
        Tensor("beta", "beta", "the forward's shift, (C,) (needed to recompute the swish input)",
               dtypes=FLOATS),
        Scalar("num_groups", "numGroups", NUM_GROUPS_DOC, c_kind="int64"),
        Scalar("data_format", "dataFormatOptional", DATA_FORMAT_DOC, c_kind="string", default="NCHW"),
        Double("swish_scale", "swishScale", 1.0, "s in y = z * sigmoid(s * z)"),
        Scalar("dgamma_is_require", "dgammaIsRequire", "compute dgamma", c_kind="bool", default=True),
        Scalar("dbeta_is_require", "dbetaIsRequire", "compute dbeta", c_kind="bool", default=True),
    ),
    outputs=(
        Output("dx", "dxOut", "gradient of x, x's shape", dtypes=FLOATS),
        Output("dgamma", "dgammaOut", "gradient of gamma, (C,)", dtypes=FLOATS, required_by="dgamma_is_require"),
        Output("dbeta", "dbetaOut", "gradient of beta, (C,)", dtypes=FLOATS, required_by="dbeta_is_require"),
    ),
    infer=lambda a: [(a.x.shape, a.dy.dtype), (a.gamma.shape, a.dy.dtype), (a.gamma.shape, a.dy.dtype)],
    check=_check_backward,
    reference=reference.group_norm_swish_grad,
    example=_backward_example,
    notes="With M = (C/G)*HW, xhat = (x - mean) * rstd, z = xhat * gamma + beta and "
          "gz = dy * sig * (1 + s z (1 - sig)), sig = sigmoid(s z): dbeta = sum of gz and dgamma = "
          "sum of gz * xhat over N and HW, and dx = rstd * (gamma * gz - xhat * c2 - c1) with "
          "c1 = sum(gamma * gz) / M and c2 = sum(gamma * gz * xhat) / M over each group (the "
          "official formula omits the 1/M). mean and rstd are used as given, not recomputed; the "
          "swish is always applied (there is no activate_swish here). All nine tensors share one "
          "dtype: the float32 mean/rstd of a float16-x, float32-gamma forward must be cast first. "
          "Both backends compute in float64 and round once: to float32, then a 16-bit output half "
          "away from zero as the NPU's grad kernel does (the forward rounds to nearest even). The "
          "kernel computes in float32, where the terms of dx cancel when mean and rstd are not x's "
          "statistics (for a group of one element dx = -rstd * gamma * gz * xhat**2 is the "
          "difference of two equal terms and a small one): the binding's results are correctly "
          "rounded there, so they are the golden values such an NPU result is measured against. "
          "An output whose "
          "*_is_require flag is False is returned as None on both backends (the NPU zero-fills a "
          "float32 one and leaves a 16-bit one unwritten); an out= array for it is not touched. "
          "On Atlas A2/A3 with N > 2 the NPU sums dgamma/dbeta across N in a non-deterministic "
          "order; the binding's backends are deterministic. C / num_groups is limited to "
          f"{MAX_CHANNELS_PER_GROUP}. " + NON_FINITE_NOTE + " " + SHAPE_STATUS_NOTE,
)

GROUP_NORM_SWISH = OpSpec(
    name="group_norm_swish",
    aclnn="aclnnGroupNormSwish",
    summary="Group normalisation of (N, C, *) followed by the swish activation z * sigmoid(s * z).",
    params=(
        Tensor("x", "x", "the input, (N, C, *), 2-D to 8-D", dtypes=FLOATS),
        Tensor("gamma", "gamma", "per-channel scale, (C,); float32 also with 16-bit x", dtypes=FLOATS),
        Tensor("beta", "beta", "per-channel shift, (C,); gamma's dtype", dtypes=FLOATS),
        Scalar("num_groups", "numGroups", NUM_GROUPS_DOC, c_kind="int64"),
        Scalar("data_format", "dataFormatOptional", DATA_FORMAT_DOC, c_kind="string", default="NCHW"),
        Double("eps", "eps", 1e-5, "added to the variance: rstd = 1 / sqrt(var + eps)"),
        Scalar("activate_swish", "activateSwish", "apply the swish (else y is the normalised z)",
               c_kind="bool", default=True),
        Double("swish_scale", "swishScale", 1.0, "s in y = z * sigmoid(s * z)"),
    ),
    outputs=(
        Output("y", "yOut", "the result, x's shape and dtype", dtypes=FLOATS),
        Output("mean", "meanOut", "per (sample, group) mean, (N, num_groups), gamma's dtype", dtypes=FLOATS),
        Output("rstd", "rstdOut", "per (sample, group) 1/sqrt(var + eps), (N, num_groups), gamma's dtype",
               dtypes=FLOATS),
    ),
    infer=lambda a: [(a.x.shape, a.x.dtype), (a.x.shape[:1] + (a.num_groups,), a.gamma.dtype),
                     (a.x.shape[:1] + (a.num_groups,), a.gamma.dtype)],
    check=_check_forward,
    reference=reference.group_norm_swish,
    example=_forward_example,
    notes="Per (sample, group) of M = (C/G)*HW values: biased variance, rstd = 1/sqrt(var + eps); "
          "z = (x - mean) * rstd * gamma + beta (the affine comes before the swish); y = z * "
          "sigmoid(swish_scale * z) when activate_swish, else z. PyTorch has no fused op: this is "
          "native_group_norm then z * sigmoid(s * z). Allowed (x, gamma = beta) dtypes: (float32, "
          "float32), (float16, float16), (bfloat16, bfloat16), (float16, float32), (bfloat16, "
          "float32); mean and rstd take gamma's dtype. 16-bit inputs are computed in float32 (eps "
          "too is rounded to float32) and y rounded once to nearest even. " + NON_FINITE_NOTE + " "
          + SHAPE_STATUS_NOTE,
)
