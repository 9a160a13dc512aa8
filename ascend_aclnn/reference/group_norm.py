"""GroupNormSwish and GroupNormSwishGrad, following the Atlas A2/A3 kernels.

x is (N, C, *): group g of sample n holds channels [g*C/G, (g+1)*C/G) and all their
positions, M = (C/G)*HW values. float32, float16 and bfloat16 inputs are computed in
float32 and rounded once at the end; float64 inputs (a direct call, e.g. from a
finite-difference test) are computed in float64. The forward rounds to nearest even; the
backward rounds its 16-bit outputs half away from zero, as the grad kernel's final cast
does. Sums over a group's values are NumPy's (pairwise) sums of the C-contiguous values;
dgamma and dbeta add the samples' sums in ascending n.

Non-finite values: a statistic that is not finite is NaN (the kernel's Kahan sums give
inf - inf there), so a group holding a NaN or an inf is NaN throughout; a channel whose
gamma or beta is not finite is NaN (the grad: its whole group's dx, and its dgamma and
dbeta). Overflow past the output dtype gives inf, silently, as on the device.
"""
from __future__ import annotations

import numpy as np

from ._common import F64, F32, round_half_away


def compute_dtype(*arrays) -> np.dtype:
    return F64 if any(np.dtype(a.dtype) == F64 for a in arrays) else F32


def finite_or_nan(v: np.ndarray) -> np.ndarray:
    """A statistic that is not finite becomes NaN."""
    return np.where(np.isfinite(v), v, v.dtype.type(np.nan))


def group_norm_swish(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, num_groups: int,
                     data_format, eps: float, activate_swish: bool, swish_scale: float):
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


def group_norm_swish_grad(dy: np.ndarray, mean: np.ndarray, rstd: np.ndarray, x: np.ndarray,
                          gamma: np.ndarray, beta: np.ndarray, num_groups: int, data_format,
                          swish_scale: float, dgamma_is_require: bool, dbeta_is_require: bool):
    """(dx, dgamma, dbeta), with mean and rstd used as given. Per (n, g), M = (C/G)*HW:
    xhat = (x - mean) * rstd, z = xhat * gamma + beta, sig = sigmoid(s z),
    gz = dy * sig * (1 + s z (1 - sig)); dbeta[c] = sum over n, hw of gz, dgamma[c] = sum of
    gz * xhat; c1 = sum over the group of gamma * gz / M, c2 = sum of gamma * gz * xhat / M;
    dx = rstd * (gamma * gz - xhat * c2 - c1). An output that is not required is None.
    Each line below is the kernel's arithmetic, in its order."""
    ct = compute_dtype(dy, mean, rstd, x, gamma, beta)
    n, c = x.shape[:2]
    g = int(num_groups)
    cg = c // g
    xs = np.ascontiguousarray(x, dtype=ct).reshape(n, c, -1)
    dys = np.ascontiguousarray(dy, dtype=ct).reshape(n, c, -1)
    gam, bet = np.asarray(gamma, dtype=ct), np.asarray(beta, dtype=ct)
    mu, r = (np.asarray(v, dtype=ct).reshape(n, g) for v in (mean, rstd))
    r_c, mu_c = np.repeat(r, cg, axis=1), np.repeat(mu, cg, axis=1)  # (N, C)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        s, one, m = ct.type(swish_scale), ct.type(1), ct.type(cg * xs.shape[-1])
        xhat = xs * r_c[..., None] - (mu_c * r_c)[..., None]  # x * rstd - mean * rstd
        z = xhat * gam[:, None] + bet[:, None]
        sig = one / (np.exp(z * -s) + one)
        gz = ((one - sig) * z * s + one) * sig * dys  # dy times the swish's derivative
        sum_gz, sum_gzx = gz.sum(axis=-1), (gz * xhat).sum(axis=-1)  # (N, C): over HW
        c1 = finite_or_nan((sum_gz * gam).reshape(n, g, cg).sum(axis=-1) / m)  # (N, G)
        c2 = finite_or_nan((sum_gzx * gam).reshape(n, g, cg).sum(axis=-1) / m)
        dx = (gz * (r_c * gam)[..., None] - xhat * np.repeat(r * c2, cg, axis=1)[..., None]
              - np.repeat(r * c1, cg, axis=1)[..., None])
        dx = round_half_away(dx, dy.dtype)
        dgamma, dbeta = sum_gzx.sum(axis=0), sum_gz.sum(axis=0)  # over N, in ascending n
        bad = ~(np.isfinite(gam) & np.isfinite(bet))
        dx.reshape(n, g, -1)[:, bad.reshape(g, cg).any(axis=1)] = np.nan
        dgamma[bad] = dbeta[bad] = np.nan
        return (dx.reshape(x.shape),
                round_half_away(finite_or_nan(dgamma), dy.dtype) if dgamma_is_require else None,
                round_half_away(finite_or_nan(dbeta), dy.dtype) if dbeta_is_require else None)
