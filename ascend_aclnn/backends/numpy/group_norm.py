"""The numpy backend's GroupNormSwish and GroupNormSwishGrad: the arithmetic of
ascend_aclnn/reference/group_norm.py (whose results these match bit for bit), made fast.

Arguments come in the aclnn parameter order (without outputs). x is (N, C, *): group g of
sample n holds channels [g*C/G, (g+1)*C/G) and all their positions, M = (C/G)*HW values.

float32, float16 and bfloat16 inputs are computed in float32 and rounded once at the end;
float64 inputs (a direct call, e.g. from a finite-difference test) are computed in float64.
The forward rounds to nearest even; the backward rounds its 16-bit outputs half away from
zero, as the grad kernel's final cast does.

Speed: the work runs in blocks of whole samples (about a megabyte of float32 per block),
through buffers allocated once and reused, so each elementwise pass stays in cache and no
large temporaries are page-faulted in per call. Statistics are per (sample, group), so a
block boundary never splits one; results do not depend on the input's memory layout.
"""
from __future__ import annotations

import numpy as np

from ...reference._common import round_half_away as _round_half_away
from ...reference.group_norm import compute_dtype as _compute_dtype, finite_or_nan as _finite_or_nan
from . import _half
from ._parallel import parallel

f32, f64, F16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)
BLOCK = 1 << 18  # float32 elements per block (1 MiB): a few buffers of this fit in L2


def _blocks(n: int, per_sample: int):
    """Slices of whole samples, each about BLOCK elements (at least one sample)."""
    step = max(1, BLOCK // max(per_sample, 1))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def group_norm_swish(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, num_groups: int,
                     data_format, eps: float, activate_swish: bool, swish_scale: float):
    """(y, mean, rstd): per (n, g) mean and biased variance, rstd = 1/sqrt(var + eps);
    z = (x - mean) * rstd * gamma[c] + beta[c]; y = z * sigmoid(swish_scale * z) when
    activate_swish, else z. mean and rstd are (N, G) in gamma's dtype. data_format is
    ignored, as on the NPU: the layout is always channel-second."""
    # Statistics of a group holding inf, a scale or result past float32's or the output
    # dtype's range: NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _group_norm_swish(x, gamma, beta, num_groups, data_format, eps, activate_swish, swish_scale)


def _group_norm_swish(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, num_groups: int,
                      data_format, eps: float, activate_swish: bool, swish_scale: float):
    """The work of group_norm_swish, under its np.errstate."""
    ct = _compute_dtype(x, gamma, beta)
    n, c = x.shape[:2]
    g = int(num_groups)
    hw = x.size // (n * c)
    m = (c // g) * hw
    gam = np.asarray(gamma, dtype=ct)
    bet = np.asarray(beta, dtype=ct)
    y = np.empty((n, c, hw), x.dtype)
    direct = y.dtype == ct  # else z is formed in a float32 buffer and rounded once into y
    mean = np.empty((n, g), ct)
    rstd = np.empty((n, g), ct)
    eps_c, neg_s = ct.type(eps), ct.type(-swish_scale)
    blocks = _blocks(n, c * hw)
    rows = blocks[0].stop - blocks[0].start

    def work(b0: int, b1: int) -> None:  # blocks[b0:b1], with this thread's own buffers
        buf = np.empty((rows, c, hw), ct)  # the block's deviations, then its exp terms
        zbuf = None if direct else np.empty((rows, c, hw), ct)
        xbuf = np.empty((rows, c, hw), ct) if x.dtype == F16 and ct == f32 else None
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for b in blocks[b0:b1]:
                k = b.stop - b.start
                xb = _load(x[b], ct, xbuf).reshape(k, c, hw)
                d = buf[:k]
                xg, dg = xb.reshape(k, g, m), d.reshape(k, g, m)
                mu = _finite_or_nan(xg.sum(axis=-1) / ct.type(m))
                np.subtract(xg, mu[..., None], out=dg)
                np.square(dg, out=dg)
                r = ct.type(1) / np.sqrt(_finite_or_nan(dg.sum(axis=-1) / ct.type(m)) + eps_c)
                mean[b], rstd[b] = mu, r
                # z = x * a + b per (n, c): a = rstd * gamma, b = beta - mean * a
                a = np.repeat(r, c // g, axis=1) * gam
                shift = bet - np.repeat(mu, c // g, axis=1) * a
                yb = y[b] if direct else zbuf[:k]
                np.multiply(xb, a[..., None], out=yb)
                yb += shift[..., None]
                if activate_swish:  # y = z / (1 + exp(-s z))
                    np.multiply(yb, neg_s, out=d)
                    np.exp(d, out=d)
                    d += ct.type(1)
                    yb /= d
                if not direct:  # the one rounding of a 16-bit result (to nearest even)
                    if y.dtype == F16 and ct == f32:
                        _half.narrow(yb, out=y[b], threaded=False)
                    else:
                        y[b] = yb

    parallel(len(blocks), x.size, work)
    bad = ~(np.isfinite(gam) & np.isfinite(bet))
    if bad.any():  # a non-finite gamma or beta: its channel is NaN (one rule for both backends)
        y[:, bad] = np.nan
    out_dtype = np.dtype(gamma.dtype)
    return y.reshape(x.shape), mean.astype(out_dtype, copy=False), rstd.astype(out_dtype, copy=False)


def group_norm_swish_grad(dy: np.ndarray, mean: np.ndarray, rstd: np.ndarray, x: np.ndarray,
                          gamma: np.ndarray, beta: np.ndarray, num_groups: int, data_format,
                          swish_scale: float, dgamma_is_require: bool, dbeta_is_require: bool):
    """(dx, dgamma, dbeta), with mean and rstd used as given. Per (n, g), M = (C/G)*HW:
    xhat = (x - mean) * rstd, z = xhat * gamma + beta, sig = sigmoid(s z),
    gz = dy * sig * (1 + s z (1 - sig)); dbeta[c] = sum over n, hw of gz, dgamma[c] = sum of
    gz * xhat; c1 = sum over the group of gamma * gz / M, c2 = sum of gamma * gz * xhat / M;
    dx = rstd * (gamma * gz - xhat * c2 - c1). An output that is not required is None."""
    # Statistics of a group holding inf, a scale or result past float32's or the output
    # dtype's range: NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, num_groups, data_format, swish_scale,
                                      dgamma_is_require, dbeta_is_require)


def _group_norm_swish_grad(dy: np.ndarray, mean: np.ndarray, rstd: np.ndarray, x: np.ndarray,
                           gamma: np.ndarray, beta: np.ndarray, num_groups: int, data_format,
                           swish_scale: float, dgamma_is_require: bool, dbeta_is_require: bool):
    """The work of group_norm_swish_grad, under its np.errstate."""
    ct = _compute_dtype(dy, mean, rstd, x, gamma, beta)
    n, c = x.shape[:2]
    g = int(num_groups)
    cg = c // g
    hw = x.size // (n * c)
    m = cg * hw
    s = ct.type(swish_scale)
    gam = np.asarray(gamma, dtype=ct)
    bet = np.asarray(beta, dtype=ct)
    mu_all = np.asarray(mean, dtype=ct).reshape(n, g)
    r_all = np.asarray(rstd, dtype=ct).reshape(n, g)
    out_dtype = np.dtype(dy.dtype)
    direct = out_dtype == ct  # else dx is formed per block in float32 and rounded once
    dx = np.empty((n, c, hw), out_dtype)
    blocks = _blocks(n, c * hw)
    rows = blocks[0].stop - blocks[0].start
    partial = [None] * len(blocks)  # per block, its samples' (sum_gz, sum_gzx), (k, C) each
    half = ct == f32

    def work(b0: int, b1: int) -> None:
        zbuf, ebuf, xhbuf = (np.empty((rows, c, hw), ct) for _ in range(3))
        gbuf = None if direct else np.empty((rows, c, hw), ct)
        xbuf = np.empty((rows, c, hw), ct) if half and x.dtype == F16 else None
        dybuf = np.empty((rows, c, hw), ct) if half and dy.dtype == F16 else None
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for i in range(b0, b1):
                b = blocks[i]
                k = b.stop - b.start
                xb = _load(x[b], ct, xbuf).reshape(k, c, hw)
                dyb = _load(dy[b], ct, dybuf).reshape(k, c, hw)
                mu, r = mu_all[b], r_all[b]
                r_c, mu_c = np.repeat(r, cg, axis=1), np.repeat(mu, cg, axis=1)  # (k, c)
                z, e, xh = zbuf[:k], ebuf[:k], xhbuf[:k]
                gz = dx[b] if direct else gbuf[:k]
                # xhat = x * rstd - mean * rstd, z = xhat * gamma + beta
                np.multiply(xb, r_c[..., None], out=xh)
                xh -= (mu_c * r_c)[..., None]
                np.multiply(xh, gam[:, None], out=z)
                z += bet[:, None]
                # sig = 1 / (1 + exp(-s z)); dsw = sig * (1 + s z (1 - sig)); gz = dy * dsw
                np.multiply(z, -s, out=e)
                np.exp(e, out=e)
                e += ct.type(1)
                np.reciprocal(e, out=e)
                np.subtract(ct.type(1), e, out=gz)
                gz *= z
                gz *= s
                gz += ct.type(1)
                gz *= e
                gz *= dyb
                sum_gz = gz.sum(axis=-1)  # (k, c)
                np.multiply(gz, xh, out=z)
                sum_gzx = z.sum(axis=-1)
                partial[i] = (sum_gz, sum_gzx)
                c1 = _finite_or_nan((sum_gz * gam).reshape(k, g, cg).sum(axis=-1) / ct.type(m))  # (k, g)
                c2 = _finite_or_nan((sum_gzx * gam).reshape(k, g, cg).sum(axis=-1) / ct.type(m))
                # dx = rstd*gamma * gz - rstd*c2 * xhat - rstd*c1, in place of gz
                gz *= (r_c * gam)[..., None]
                xh *= np.repeat(r * c2, cg, axis=1)[..., None]
                gz -= xh
                gz -= np.repeat(r * c1, cg, axis=1)[..., None]
                if not direct:  # the grad kernel's final cast: ties away from zero
                    if out_dtype == F16 and half:
                        _half.narrow(gz, out=dx[b], threaded=False, ties_away=True)
                    else:
                        dx[b] = _round_half_away(gz, out_dtype)

    parallel(len(blocks), x.size, work)
    # Over the samples, as the reference adds them: one sum over the (N, C) per-sample sums.
    dbeta = np.concatenate([p[0] for p in partial]).sum(axis=0)
    dgamma = np.concatenate([p[1] for p in partial]).sum(axis=0)
    bad = ~(np.isfinite(gam) & np.isfinite(bet))
    if bad.any():  # a non-finite gamma or beta: its group's dx and its dgamma/dbeta are NaN
        dx.reshape(n, g, cg * hw)[:, bad.reshape(g, cg).any(axis=1)] = np.nan
        dgamma[bad] = dbeta[bad] = np.nan
    dgamma, dbeta = _finite_or_nan(dgamma), _finite_or_nan(dbeta)
    return (dx.reshape(x.shape),
            _round_half_away(dgamma, out_dtype) if dgamma_is_require else None,
            _round_half_away(dbeta, out_dtype) if dbeta_is_require else None)


def _load(v: np.ndarray, ct: np.dtype, buf) -> np.ndarray:
    """v in the compute dtype, C-contiguous: float16 through the integer cast into buf."""
    if buf is not None:
        return _half.widen(v, out=buf[:v.shape[0]], threaded=False)
    return np.ascontiguousarray(v, dtype=ct)
