"""The numpy backend's Im2col (PyTorch's unfold) and Im2colBackward (fold, col2im): the
arithmetic of ascend_aclnn/reference/im2col.py (whose results these match bit for bit),
made fast: slice copies in cache-sized blocks of planes.

Arguments come in the aclnn parameter order (without outputs); every int array is
(H, W). With Ho = floor((H + 2pH - dH(kH-1) - 1)/sH) + 1, Wo likewise and L = Ho*Wo,
row = c*kH*kW + ki*kW + kj and col = oh*Wo + ow:

    cols[n, row, col] = x[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]   (0 outside x)

and the backward sums every column entry back onto the pixel it was read from.

The backward sums each pixel's contributions in float32 in the order of the 950 kernel's
gather (oh ascending, then ow ascending, which is kernel offset ki descending, then kj
descending) and rounds once to the input dtype, so it is bit-exact with that kernel.
Its fast path (stride 1) adds each kernel offset's whole column block to a float32
buffer with one contiguous add over a shifted flat view of rows Wo wide; columns
whose additions wrapped into a neighbouring row are recomputed exactly afterwards.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

f32 = np.float32
BLOCK_BYTES = 1 << 19  # float32 working set per block of (n, c) planes: about L2-sized


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    """Number of sliding-block positions along one axis (floor division)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _valid(n_out: int, size: int, offset: int, s: int) -> tuple[int, int]:
    """[lo, hi): the output positions o whose source o*s + offset lies in [0, size)."""
    lo = 0 if offset >= 0 else min(n_out, -offset // s + (-offset % s != 0))
    hi = 0 if size - offset <= 0 else min(n_out, (size - 1 - offset) // s + 1)
    return lo, max(lo, hi)


def im2col(input: NDArray[Any], kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
           stride: Sequence[int]) -> NDArray[Any]:
    """(N, C, H, W) -> (N, C*kH*kW, L), or (C, H, W) -> (C*kH*kW, L). A gather: exact
    for every dtype."""
    x = input[None] if input.ndim == 3 else input
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    ho, wo = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    planes = x.reshape(n * c, h, w)
    out = np.empty((n * c, kh, kw, ho, wo), x.dtype)
    step = max(1, BLOCK_BYTES // max(1, h * w * x.itemsize))  # a block of planes stays in cache
    for b0 in range(0, n * c, step):
        src, dst = planes[b0:b0 + step], out[b0:b0 + step]
        for ki in range(kh):
            r_lo, r_hi = _valid(ho, h, ki * dh - ph, sh)
            for kj in range(kw):
                c_lo, c_hi = _valid(wo, w, kj * dw - pw, sw)
                d = dst[:, ki, kj]
                d[:, :r_lo] = 0
                d[:, r_hi:] = 0
                d[:, r_lo:r_hi, :c_lo] = 0
                d[:, r_lo:r_hi, c_hi:] = 0
                if r_lo < r_hi and c_lo < c_hi:
                    h0, w0 = r_lo * sh + ki * dh - ph, c_lo * sw + kj * dw - pw
                    d[:, r_lo:r_hi, c_lo:c_hi] = src[:, h0:h0 + (r_hi - r_lo - 1) * sh + 1:sh,
                                                     w0:w0 + (c_hi - c_lo - 1) * sw + 1:sw]
    shape = (c * kh * kw, ho * wo) if input.ndim == 3 else (n, c * kh * kw, ho * wo)
    return out.reshape(shape)


def im2col_backward(grad_output: NDArray[Any], input_size: Sequence[int], kernel_size: Sequence[int],
                    dilation: Sequence[int], padding: Sequence[int], stride: Sequence[int]) -> NDArray[Any]:
    """(N, C*kH*kW, L) -> (N, C, H, W), or (C*kH*kW, L) -> (C, H, W), H, W = input_size.
    Zeros where nothing lands, and everywhere when grad_output is empty."""
    # A sum meeting inf - inf or a signalling NaN, a result past the output dtype's range:
    # NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", invalid="ignore"):
        return _im2col_backward(grad_output, input_size, kernel_size, dilation, padding, stride)


def _im2col_backward(grad_output: NDArray[Any], input_size: Sequence[int], kernel_size: Sequence[int],
                     dilation: Sequence[int], padding: Sequence[int], stride: Sequence[int]) -> NDArray[Any]:
    """The work of im2col_backward, under its np.errstate."""
    g = grad_output[None] if grad_output.ndim == 2 else grad_output
    n, rows, length = g.shape
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = input_size, kernel_size, dilation, padding, stride
    c = rows // (kh * kw)
    shape = (c, h, w) if grad_output.ndim == 2 else (n, c, h, w)
    if g.size == 0:
        return np.zeros(shape, grad_output.dtype)
    ho, wo = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    g5 = g.reshape(n * c, kh, kw, ho, wo)
    out = np.empty((n * c, h, w), grad_output.dtype)
    # The fast path's buffer is the padded image's rows, Wo wide: used only while it is no
    # larger than what the call reads and writes, so no padding or dilation (up to int64's
    # limit) makes it allocate more than the arrays themselves.
    buffer = (ho + (kh - 1) * dh) * wo + kw * dw
    fast = sh == 1 and sw == 1 and wo > (kw - 1) * dw and buffer <= kh * kw * ho * wo + h * w
    per_plane = (buffer if fast else h * w) * 4
    step = max(1, BLOCK_BYTES // per_plane)
    for b0 in range(0, n * c, step):
        gb = g5[b0:b0 + step]
        if fast:
            _fold_stride1(gb, out[b0:b0 + step], h, w, kh, kw, dh, dw, ph, pw, ho, wo)
            continue
        # Only the blocks' positions inside the image are added (a padded buffer would be
        # H + 2pH high, whatever the padding).
        acc = np.zeros((gb.shape[0], h, w), f32)
        for ki in reversed(range(kh)):  # the kernel's order: oh ascending is ki descending
            r_lo, r_hi = _valid(ho, h, ki * dh - ph, sh)
            for kj in reversed(range(kw)):
                c_lo, c_hi = _valid(wo, w, kj * dw - pw, sw)
                if r_lo < r_hi and c_lo < c_hi:
                    h0, w0 = r_lo * sh + ki * dh - ph, c_lo * sw + kj * dw - pw
                    acc[:, h0:h0 + (r_hi - r_lo - 1) * sh + 1:sh,
                        w0:w0 + (c_hi - c_lo - 1) * sw + 1:sw] += gb[:, ki, kj, r_lo:r_hi, c_lo:c_hi]
        out[b0:b0 + step] = acc
    return out.reshape(shape)


def _fold_stride1(gb: NDArray[Any], out: NDArray[Any], h: int, w: int, kh: int, kw: int, dh: int, dw: int, ph: int,
                  pw: int, ho: int, wo: int) -> None:
    """Stride-1 fold of a block of planes gb (nb, kH, kW, Ho, Wo) into out (nb, H, W).

    The buffer has rows Wo wide (the padded image is Wo + (kW-1)dW wide) and its column c
    is padded column c + q0. Offset (ki, kj) then shifts the whole flat (Ho*Wo) block by
    ki*dH*Wo + kj*dW - q0: one contiguous add. Entries whose padded column falls outside
    [q0, q0 + Wo) wrap into a neighbouring row, but only padded columns in
    [(kW-1)dW, Wo) receive every offset without any wrap; the others are recomputed."""
    nb = gb.shape[0]
    hp = ho + (kh - 1) * dh
    q0 = min(pw, (kw - 1) * dw)
    span = ho * wo
    buf = np.zeros((nb, hp * wo + (kw - 1) * dw), f32)
    flat = gb.reshape(nb, kh, kw, span)
    for ki in reversed(range(kh)):
        for kj in reversed(range(kw)):
            start = ki * dh * wo + kj * dw  # (slack q0) + padded row*Wo + padded column - q0
            buf[:, start:start + span] += flat[:, ki, kj]
    rows = buf[:, q0:q0 + hp * wo].reshape(nb, hp, wo)[:, ph:ph + h]
    clean_lo, clean_hi = max(0, (kw - 1) * dw - pw), min(w, wo - pw)  # image columns
    if clean_lo < clean_hi:
        out[:, :, clean_lo:clean_hi] = rows[:, :, clean_lo + pw - q0:clean_hi + pw - q0]
    columns = np.arange(w)
    edges = columns[(columns < clean_lo) | (columns >= clean_hi)]
    if edges.size == 0:
        return
    acc = np.zeros((nb, h, edges.size), f32)
    for ki in reversed(range(kh)):
        r_lo, r_hi = _valid(ho, h, ki * dh - ph, 1)
        if r_lo >= r_hi:
            continue
        h0 = r_lo + ki * dh - ph
        for kj in reversed(range(kw)):
            ow = edges + pw - kj * dw
            keep = (ow >= 0) & (ow < wo)
            if keep.any():
                cols = np.flatnonzero(keep)
                acc[:, h0:h0 + r_hi - r_lo, cols] += gb[:, ki, kj, r_lo:r_hi][:, :, ow[keep]]
    out[:, :, edges] = acc
