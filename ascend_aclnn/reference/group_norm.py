"""GroupNormSwish and GroupNormSwishGrad, following the Atlas A2/A3 kernels.

x is (N, C, *): group g of sample n holds channels [g*C/G, (g+1)*C/G) and all their
positions, M = (C/G)*HW values. The forward computes float32, float16 and bfloat16 inputs
in float32 and rounds once at the end, to nearest even; float64 inputs (a direct call, e.g.
from a finite-difference test) are computed in float64. Its sums over a group's values are
NumPy's (pairwise) sums of the C-contiguous values. The backward computes in float64 (its
terms cancel where float32 would lose the result, see group_norm_swish_grad) and rounds
once, to float32 and then, for 16-bit outputs, half away from zero as the grad kernel's
final cast does; dgamma and dbeta add the samples' sums in ascending n.

Non-finite values: a statistic that is not finite is NaN (the kernel's Kahan sums give
inf - inf there), so a group holding a NaN or an inf is NaN throughout; a channel whose
gamma or beta is not finite is NaN (the grad: its whole group's dx, and its dgamma and
dbeta). Overflow past the output dtype gives inf, silently, as on the device.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ._common import F64, F32, round_half_away


def compute_dtype(*arrays: NDArray[Any]) -> np.dtype[Any]:
    return F64 if any(np.dtype(a.dtype) == F64 for a in arrays) else F32


def finite_or_nan(v: NDArray[Any]) -> NDArray[Any]:
    """A statistic that is not finite becomes NaN."""
    return np.where(np.isfinite(v), v, v.dtype.type(np.nan))


def group_norm_swish(x: NDArray[Any], gamma: NDArray[Any], beta: NDArray[Any], num_groups: int,
                     data_format: str, eps: float, activate_swish: bool, swish_scale: float
                     ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """(y, mean, rstd): per (n, g) mean and biased variance, rstd = 1/sqrt(var + eps);
    z = x * a + b with a = rstd * gamma[c], b = beta[c] - mean * a (the kernel's form of
    (x - mean) * rstd * gamma + beta); y = z / (1 + exp(-swish_scale * z)) when
    activate_swish, else z. mean and rstd are (N, G) in gamma's dtype. data_format is
    ignored, as on the NPU: the layout is always channel-second."""
    ct = compute_dtype(x, gamma, beta)
    n, c = x.shape[:2]
    g = int(num_groups)
    xs = np.ascontiguousarray(x, dtype=ct).reshape(n, g, -1)
    gam, bet = np.asarray(gamma, dtype=ct), np.asarray(beta, dtype=ct)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        m = ct.type(xs.shape[-1])
        mean = finite_or_nan(xs.sum(axis=-1) / m)
        var = finite_or_nan(np.square(xs - mean[..., None]).sum(axis=-1) / m)
        rstd = ct.type(1) / np.sqrt(var + ct.type(eps))
        a = np.repeat(rstd, c // g, axis=1) * gam  # (N, C)
        b = bet - np.repeat(mean, c // g, axis=1) * a
        z = xs.reshape(n, c, -1) * a[..., None] + b[..., None]
        y = z / (np.exp(z * ct.type(-swish_scale)) + ct.type(1)) if activate_swish else z
        y = y.astype(x.dtype)
        y[:, ~(np.isfinite(gam) & np.isfinite(bet))] = np.nan
        return y.reshape(x.shape), mean.astype(gamma.dtype), rstd.astype(gamma.dtype)


# The two swish derivatives GroupNormSwishGrad's kernels have computed (see
# group_norm_swish_grad's formula parameter).
SWISH_GRAD_FORMULAS = ("corrected", "8.1")


def group_norm_swish_grad(dy: NDArray[Any], mean: NDArray[Any], rstd: NDArray[Any], x: NDArray[Any],
                          gamma: NDArray[Any], beta: NDArray[Any], num_groups: int, data_format: str,
                          swish_scale: float, dgamma_is_require: bool, dbeta_is_require: bool,
                          formula: str = "corrected"
                          ) -> tuple[NDArray[Any], Optional[NDArray[Any]], Optional[NDArray[Any]]]:
    """(dx, dgamma, dbeta), with mean and rstd used as given. Per (n, g), M = (C/G)*HW:
    xhat = (x - mean) * rstd, z = xhat * gamma + beta, sig = sigmoid(s z),
    gz = dy * sig * (1 + s2 z (1 - sig)); dbeta[c] = sum over n, hw of gz, dgamma[c] = sum of
    gz * xhat; c1 = sum over the group of gamma * gz / M, c2 = sum of gamma * gz * xhat / M;
    dx = rstd * (gamma * gz - c1 - xhat * c2). An output that is not required is None.

    formula, the swish's derivative: "corrected" (the default), s2 = s, the true derivative
    of z * sigmoid(s z), which the kernel computes from CANN 9.1.0 on; "8.1", s2 = 1, the
    kernel of CANN 8.1.RC1 and every release before 9.1.0, which leaves swish_scale out of
    the second term (hicann/ops-nn fixed it on 2026-05-26). They agree when s is 1. The
    numpy backend passes the formula of the CANN release it follows
    (ascend_aclnn.ops.group_norm.swish_grad_formula()).

    Arithmetic: every step in float64 from the inputs' values (swish_scale rounded to
    float32 first, as the kernel's attribute is, unless an input is float64), the sums
    NumPy's pairwise sums of the C-contiguous float64 terms (dgamma and dbeta add the
    samples' sums in ascending n), and one rounding at the end: to float32 (to nearest
    even), then for a 16-bit output half away from zero, as the kernel's final cast. In
    float32 the terms of dx cancel where the group's statistics are not x's own (dx is
    rstd * gamma * gz * -xhat**2 for a group of one element): float64 keeps dx, dgamma and
    dbeta correctly rounded there, where float32 arithmetic loses most digits."""
    if formula not in SWISH_GRAD_FORMULAS:
        raise ValueError(f"formula: expected one of {', '.join(map(repr, SWISH_GRAD_FORMULAS))}, got {formula!r}")
    n, c = x.shape[:2]
    g = int(num_groups)
    cg = c // g
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # (a signalling NaN's cast too)
        xs = np.ascontiguousarray(x, dtype=F64).reshape(n, c, -1)
        dys = np.ascontiguousarray(dy, dtype=F64).reshape(n, c, -1)
        gam, bet = np.asarray(gamma, dtype=F64), np.asarray(beta, dtype=F64)
        mu, r = (np.asarray(v, dtype=F64).reshape(n, g) for v in (mean, rstd))
        r_c, mu_c = np.repeat(r, cg, axis=1)[..., None], np.repeat(mu, cg, axis=1)[..., None]  # (N, C, 1)
        s, m = swish_grad_scale(swish_scale, dy, mean, rstd, x, gamma, beta), F64.type(cg * xs.shape[-1])
        xhat = (xs - mu_c) * r_c
        z = xhat * gam[:, None] + bet[:, None]
        sig = 1.0 / (np.exp(z * -s) + 1.0)
        s2 = s if formula == "corrected" else F64.type(1.0)  # the second term's scale
        gz = ((1.0 - sig) * z * s2 + 1.0) * sig * dys  # dy times the swish's derivative
        sum_gz, sum_gzx = gz.sum(axis=-1), (gz * xhat).sum(axis=-1)  # (N, C): over HW
        c1 = finite_or_nan((sum_gz * gam).reshape(n, g, cg).sum(axis=-1) / m)  # (N, G)
        c2 = finite_or_nan((sum_gzx * gam).reshape(n, g, cg).sum(axis=-1) / m)
        dx = (gz * gam[:, None] - np.repeat(c1, cg, axis=1)[..., None]
              - xhat * np.repeat(c2, cg, axis=1)[..., None]) * r_c
        dx = round_result(dx, dy.dtype)
        dgamma, dbeta = sum_gzx.sum(axis=0), sum_gz.sum(axis=0)  # over N, in ascending n
        bad = ~(np.isfinite(gam) & np.isfinite(bet))
        dx.reshape(n, g, -1)[:, bad.reshape(g, cg).any(axis=1)] = np.nan
        dgamma[bad] = dbeta[bad] = np.nan
        return (dx.reshape(x.shape),
                round_result(finite_or_nan(dgamma), dy.dtype) if dgamma_is_require else None,
                round_result(finite_or_nan(dbeta), dy.dtype) if dbeta_is_require else None)


def swish_grad_scale(swish_scale: float, *arrays: NDArray[Any]) -> np.float64:
    """The grad's swish_scale as the kernel reads it: rounded to float32 (a float
    attribute; past its range, inf), kept as given when an input is float64."""
    with np.errstate(over="ignore"):
        return F64.type(compute_dtype(*arrays).type(swish_scale))


def round_result(v: NDArray[Any], dtype: Any) -> NDArray[Any]:
    """A float64 result rounded once to float32 (to nearest even), then for a 16-bit dtype
    half away from zero (the grad kernel's final cast of its float32 values); float64
    stays as it is."""
    dtype = np.dtype(dtype)
    if dtype == F64:
        return v
    with np.errstate(over="ignore", invalid="ignore"):  # past float32's range: inf, as the device
        return round_half_away(v.astype(F32), dtype)
