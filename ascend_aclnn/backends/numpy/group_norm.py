"""The numpy backend's GroupNormSwish and GroupNormSwishGrad: the arithmetic of
ascend_aclnn/reference/group_norm.py (whose results these match bit for bit), made fast.

Arguments come in the aclnn parameter order (without outputs). x is (N, C, *): group g of
sample n holds channels [g*C/G, (g+1)*C/G) and all their positions, M = (C/G)*HW values.

The forward computes float32, float16 and bfloat16 inputs in float32 and rounds once at
the end, to nearest even; float64 inputs (a direct call, e.g. from a finite-difference
test) are computed in float64. The backward computes in float64 and rounds once, to
float32 and then, for 16-bit outputs, half away from zero, as the grad kernel's final cast
does.

Speed: the work runs in blocks of whole (sample, group) pairs, whose values are contiguous
(a few hundred kilobytes per buffer), through buffers allocated once per call and reused,
so each elementwise pass stays in cache and no large temporaries are page-faulted in.
Statistics are per (sample, group), so a block boundary never splits one; results do not
depend on the input's memory layout or the block size.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ...ops.spec import Args
from ...reference._common import BF16
from ...reference.group_norm import compute_dtype as _compute_dtype, finite_or_nan as _finite_or_nan
from ...reference.group_norm import SWISH_GRAD_FORMULAS as _SWISH_GRAD_FORMULAS, round_result as _round_result
from ...reference.group_norm import swish_grad_scale as _swish_grad_scale
from . import _half
from ._parallel import parallel

f32: np.dtype[np.float32] = np.dtype(np.float32)
f64: np.dtype[np.float64] = np.dtype(np.float64)
F16: np.dtype[np.float16] = np.dtype(np.float16)
BLOCK = 1 << 18  # float32 elements per block (1 MiB): a few buffers of this fit in L2


def group_norm_swish(x: NDArray[Any], gamma: NDArray[Any], beta: NDArray[Any], num_groups: int,
                     data_format: str, eps: float, activate_swish: bool, swish_scale: float
                     ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """(y, mean, rstd): per (n, g) mean and biased variance, rstd = 1/sqrt(var + eps);
    z = (x - mean) * rstd * gamma[c] + beta[c]; y = z * sigmoid(swish_scale * z) when
    activate_swish, else z. mean and rstd are (N, G) in gamma's dtype. data_format is
    ignored, as on the NPU: the layout is always channel-second."""
    # Statistics of a group holding inf, a scale or result past float32's or the output
    # dtype's range: NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _group_norm_swish(x, gamma, beta, num_groups, data_format, eps, activate_swish, swish_scale)


def _group_norm_swish(x: NDArray[Any], gamma: NDArray[Any], beta: NDArray[Any], num_groups: int,
                      data_format: str, eps: float, activate_swish: bool, swish_scale: float
                      ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
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
    cg, rows = c // g, n * g  # (sample, group) pairs, in memory order: each one's M values contiguous
    xr = (x if x.flags.c_contiguous else np.ascontiguousarray(x)).reshape(rows, m)
    yr, mean_r, rstd_r = y.reshape(rows, m), mean.reshape(rows), rstd.reshape(rows)
    gam_g, bet_g = gam.reshape(g, cg), bet.reshape(g, cg)
    step = max(1, BLOCK // m)  # runs of whole groups, about BLOCK values
    blocks = [slice(i, min(i + step, rows)) for i in range(0, rows, step)]
    size = (blocks[0].stop - blocks[0].start, m)

    def work(b0: int, b1: int) -> None:  # blocks[b0:b1], with this thread's own buffers
        buf = np.empty(size, ct)  # the block's deviations, then its exp terms
        zbuf = None if direct else np.empty(size, ct)
        xbuf = None if x.dtype == ct else np.empty(size, ct)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for b in blocks[b0:b1]:
                k = b.stop - b.start
                xb = _load(xr[b], xbuf)
                d = buf[:k]
                mu = _finite_or_nan(xb.sum(axis=-1) / ct.type(m))
                np.subtract(xb, mu[:, None], out=d)
                np.square(d, out=d)
                r = ct.type(1) / np.sqrt(_finite_or_nan(d.sum(axis=-1) / ct.type(m)) + eps_c)
                mean_r[b], rstd_r[b] = mu, r
                # z = x * a + b per (n, c): a = rstd * gamma, b = beta - mean * a
                which = np.arange(b.start, b.stop) % g  # each row's group
                a = r[:, None] * gam_g[which]  # (k, C/G)
                shift = bet_g[which] - mu[:, None] * a
                yb = (yr[b] if zbuf is None else zbuf[:k]).reshape(k, cg, hw)
                np.multiply(xb.reshape(k, cg, hw), a[..., None], out=yb)
                yb += shift[..., None]
                if activate_swish:  # y = z / (1 + exp(-s z))
                    e = d.reshape(k, cg, hw)
                    np.multiply(yb, neg_s, out=e)
                    np.exp(e, out=e)
                    e += ct.type(1)
                    yb /= e
                if not direct:  # the one rounding of a 16-bit result (to nearest even)
                    if y.dtype == F16 and ct == f32:
                        _half.narrow(yb, out=yr[b], threaded=False)
                    else:
                        yr[b] = yb.reshape(k, m)

    parallel(len(blocks), x.size, work)
    bad = ~(np.isfinite(gam) & np.isfinite(bet))
    if bad.any():  # a non-finite gamma or beta: its channel is NaN (one rule for both backends)
        y[:, bad] = np.nan
    out_dtype = np.dtype(gamma.dtype)
    return y.reshape(x.shape), mean.astype(out_dtype, copy=False), rstd.astype(out_dtype, copy=False)


def group_norm_swish_grad(dy: NDArray[Any], mean: NDArray[Any], rstd: NDArray[Any], x: NDArray[Any],
                          gamma: NDArray[Any], beta: NDArray[Any], num_groups: int, data_format: str,
                          swish_scale: float, dgamma_is_require: bool, dbeta_is_require: bool,
                          formula: str = "corrected"
                          ) -> tuple[NDArray[Any], Optional[NDArray[Any]], Optional[NDArray[Any]]]:
    """(dx, dgamma, dbeta), with mean and rstd used as given. Per (n, g), M = (C/G)*HW:
    xhat = (x - mean) * rstd, z = xhat * gamma + beta, sig = sigmoid(s z),
    gz = dy * sig * (1 + s2 z (1 - sig)) with s2 = s ("corrected") or 1 ("8.1", the kernel
    before CANN 9.1.0); dbeta[c] = sum over n, hw of gz, dgamma[c] = sum of gz * xhat;
    c1 = sum over the group of gamma * gz / M, c2 = sum of gamma * gz * xhat / M;
    dx = rstd * (gamma * gz - c1 - xhat * c2). An output that is not required is None.
    Computed in float64 and rounded once, as the reference does."""
    if formula not in _SWISH_GRAD_FORMULAS:
        raise ValueError(f"formula: expected one of {', '.join(map(repr, _SWISH_GRAD_FORMULAS))}, got {formula!r}")
    # Statistics of a group holding inf, a scale or result past float32's or the output
    # dtype's range: NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, num_groups, data_format, swish_scale,
                                      dgamma_is_require, dbeta_is_require, formula)


def _group_norm_swish_grad(dy: NDArray[Any], mean: NDArray[Any], rstd: NDArray[Any], x: NDArray[Any],
                           gamma: NDArray[Any], beta: NDArray[Any], num_groups: int, data_format: str,
                           swish_scale: float, dgamma_is_require: bool, dbeta_is_require: bool, formula: str
                           ) -> tuple[NDArray[Any], Optional[NDArray[Any]], Optional[NDArray[Any]]]:
    """The work of group_norm_swish_grad, under its np.errstate: the reference's float64
    steps, in its order, each one in-place ufunc over a block. A (sample, group) pair's
    values are contiguous, (C/G, HW): a block is a run of such groups, about BLOCK / 8
    values (at least one group), so its four to six float64 buffers stay in cache."""
    n, c = x.shape[:2]
    g = int(num_groups)
    cg = c // g
    hw = x.size // (n * c)
    m = f64.type(cg * hw)
    s = _swish_grad_scale(swish_scale, dy, mean, rstd, x, gamma, beta)
    s2 = s if formula == "corrected" else f64.type(1.0)  # the second term's scale
    gam = np.asarray(gamma, dtype=f64).reshape(g, cg)
    bet = np.asarray(beta, dtype=f64).reshape(g, cg)
    mu_all = np.asarray(mean, dtype=f64).reshape(n * g)
    r_all = np.asarray(rstd, dtype=f64).reshape(n * g)
    out_dtype = np.dtype(dy.dtype)
    rows = n * g  # (sample, group) pairs, in memory order
    xg = x.reshape(rows, cg, hw) if x.flags.c_contiguous else None
    dyg = dy.reshape(rows, cg, hw) if dy.flags.c_contiguous else None
    xg = xg if xg is not None else np.ascontiguousarray(x).reshape(rows, cg, hw)
    dyg = dyg if dyg is not None else np.ascontiguousarray(dy).reshape(rows, cg, hw)
    dx = np.empty((rows, cg, hw), out_dtype)
    sum_gz, sum_gzx = np.empty((rows, cg), f64), np.empty((rows, cg), f64)  # per (n, c), as (N, C)
    step = max(1, (BLOCK // 8) // (cg * hw))
    blocks = [slice(i, min(i + step, rows)) for i in range(0, rows, step)]
    size = (blocks[0].stop - blocks[0].start, cg, hw)

    def work(b0: int, b1: int) -> None:
        xh, zbuf, ebuf, gbuf = (np.empty(size, f64) for _ in range(4))
        xbuf, dybuf = (np.empty(size, f32 if v.dtype == F16 else f64) if v.dtype in (F16, BF16) else None
                       for v in (x, dy))
        narrow = np.empty(size, f32) if out_dtype in (F16, BF16) else None
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for b in blocks[b0:b1]:
                k = b.stop - b.start
                which = np.arange(b.start, b.stop) % g  # each row's group
                gm, bt = gam[which][..., None], bet[which][..., None]  # (k, cg, 1)
                r_c, mu_c = r_all[b][:, None, None], mu_all[b][:, None, None]  # (k, 1, 1)
                xb = _load64(xg[b], xbuf)
                dyb = _load64(dyg[b], dybuf)
                h, z, e, gz = xh[:k], zbuf[:k], ebuf[:k], gbuf[:k]
                # xhat = (x - mean) * rstd, z = xhat * gamma + beta
                np.subtract(xb, mu_c, out=h)
                h *= r_c
                np.multiply(h, gm, out=z)
                z += bt
                # sig = 1 / (exp(-s z) + 1); gz = ((1 - sig) z s2 + 1) sig dy
                np.multiply(z, -s, out=e)
                np.exp(e, out=e)
                e += 1.0
                np.divide(1.0, e, out=e)
                np.subtract(1.0, e, out=gz)
                gz *= z
                if s2 != 1.0:  # times 1.0 changes no bits (a NaN is made quiet by the add anyway)
                    gz *= s2
                gz += 1.0
                gz *= e
                gz *= dyb
                a1 = sum_gz[b] = gz.sum(axis=-1)  # (k, cg): over HW
                np.multiply(gz, h, out=z)
                a2 = sum_gzx[b] = z.sum(axis=-1)
                c1 = _finite_or_nan((a1 * gm[..., 0]).sum(axis=-1) / m)[:, None, None]  # (k, 1, 1)
                c2 = _finite_or_nan((a2 * gm[..., 0]).sum(axis=-1) / m)[:, None, None]
                # dx = (gz * gamma - c1 - xhat * c2) * rstd, in place of gz
                gz *= gm
                gz -= c1
                h *= c2
                gz -= h
                gz *= r_c
                _store(gz, dx[b], narrow[:k] if narrow is not None else None)

    parallel(len(blocks), x.size, work)
    # Over the samples, as the reference adds them: one sum over the (N, C) per-sample sums.
    dbeta = sum_gz.reshape(n, c).sum(axis=0)
    dgamma = sum_gzx.reshape(n, c).sum(axis=0)
    bad = ~(np.isfinite(gam) & np.isfinite(bet)).reshape(c)
    if bad.any():  # a non-finite gamma or beta: its group's dx and its dgamma/dbeta are NaN
        dx.reshape(n, g, cg * hw)[:, bad.reshape(g, cg).any(axis=1)] = np.nan
        dgamma[bad] = dbeta[bad] = np.nan
    dgamma, dbeta = _finite_or_nan(dgamma), _finite_or_nan(dbeta)
    return (dx.reshape(x.shape),
            _round_result(dgamma, out_dtype) if dgamma_is_require else None,
            _round_result(dbeta, out_dtype) if dbeta_is_require else None)


def _told_formula(a: Args) -> dict[str, Any]:
    """The grad's formula: the one of the CANN release the backend follows (and, when that
    is a release's before 9.1.0 and swish_scale is not 1, its warning)."""
    from ...ops.group_norm import swish_grad_formula, warn_swish_grad_formula
    decided = swish_grad_formula()
    warn_swish_grad_formula(a["swish_scale"], decided, "numpy")
    return {"formula": decided.formula}


# What this backend decides for a kernel beyond the operator's arguments, by function name
# (backends/numpy/__init__.py passes it to the fast and the plain function alike).
DECIDED = {"group_norm_swish_grad": _told_formula}


def _load64(v: NDArray[Any], buf: Optional[NDArray[Any]]) -> NDArray[Any]:
    """v's values as float64 operands of the next ufunc (which widens float32 exactly as it
    goes): float32 and float64 as they are; float16 widened to float32 into buf by the
    integer cast (NumPy's own float16 cast is slow), bfloat16 into buf (float64)."""
    if v.dtype in (f32, f64):
        return v
    assert buf is not None  # 16-bit operands come with their buffer
    buf = buf[:v.shape[0]]
    if v.dtype == F16:
        return _half.widen(v, out=buf, threaded=False)
    np.copyto(buf, v.reshape(buf.shape), casting="unsafe")
    return buf


def _store(v: NDArray[Any], out: NDArray[Any], narrow: Optional[NDArray[Any]]) -> None:
    """A block of float64 results rounded once into out, as the reference's round_result:
    to float32 (nearest even), then to a 16-bit dtype half away from zero."""
    if out.dtype == f64:
        out[...] = v.reshape(out.shape)
    elif narrow is None:  # float32
        np.copyto(out, v.reshape(out.shape), casting="unsafe")
    else:
        np.copyto(narrow, v, casting="unsafe")
        if out.dtype == F16:
            _half.narrow(narrow, out=out, threaded=False, ties_away=True)
        else:
            _bfloat16_half_away(narrow, out)


def _bfloat16_half_away(v: NDArray[Any], out: NDArray[Any]) -> None:
    """out (bfloat16) = v (float32, C-contiguous, overwritten) rounded half away from zero,
    the reference's round_half_away in place: half a unit (0x8000) added to the bits, the
    top half kept; a NaN (whose add may carry into the sign) keeps its own top half, made
    quiet."""
    flat = v.reshape(-1)
    bits = flat.view(np.uint32)
    fix = np.flatnonzero(np.isnan(flat))
    keep = (bits[fix] >> np.uint32(16)) | np.uint32(0x40)
    np.add(bits, np.uint32(0x8000), out=bits)
    np.right_shift(bits, 16, out=bits)
    dst = out.reshape(-1).view(np.uint16)
    np.copyto(dst, bits, casting="unsafe")
    dst[fix] = keep


def _load(v: NDArray[Any], buf: Optional[NDArray[Any]]) -> NDArray[Any]:
    """v (C-contiguous) in the compute dtype: as it is, or cast into buf (float16 by the
    integer cast: NumPy's own float16 cast is slow)."""
    if buf is None:
        return v
    buf = buf[:v.shape[0]]
    if v.dtype == F16 and buf.dtype == f32:
        return _half.widen(v, out=buf, threaded=False)
    np.copyto(buf, v, casting="unsafe")
    return buf
