"""Im2col (PyTorch's unfold) and Im2colBackward (fold, col2im).

Every int array is (H, W). With Ho = floor((H + 2pH - dH(kH-1) - 1)/sH) + 1, Wo likewise
and L = Ho*Wo, row = c*kH*kW + ki*kW + kj and col = oh*Wo + ow:

    cols[n, row, col] = x[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]   (0 outside x)

and the backward sums every column entry back onto the pixel it was read from, in
float32, in the order of the 950 kernel's gather (oh ascending, then ow ascending: kernel
offset ki descending, then kj descending), rounded once to the input dtype.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

f32 = np.float32


def _taps(n_out: int, size: int, k: int, d: int, p: int, s: int) -> list[tuple[NDArray[Any], NDArray[Any]]]:
    """For each kernel offset along one axis: (output positions whose tap lands inside
    the input, the input positions they read)."""
    taps = []
    for i in range(k):
        pos = np.arange(n_out) * s - p + i * d
        inside = np.flatnonzero((pos >= 0) & (pos < size))
        taps.append((inside, pos[inside]))
    return taps


def _out_len(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def im2col(input: NDArray[Any], kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
           stride: Sequence[int]) -> NDArray[Any]:
    """(N, C, H, W) -> (N, C*kH*kW, L), or (C, H, W) -> (C*kH*kW, L). A gather: exact for
    every dtype."""
    x = input[None] if input.ndim == 3 else input
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    ho, wo = _out_len(h, kh, dh, ph, sh), _out_len(w, kw, dw, pw, sw)
    cols = np.zeros((n, c, kh, kw, ho, wo), x.dtype)
    for ki, (oh, ih) in enumerate(_taps(ho, h, kh, dh, ph, sh)):
        for kj, (ow, iw) in enumerate(_taps(wo, w, kw, dw, pw, sw)):
            cols[:, :, ki, kj, oh[:, None], ow] = x[:, :, ih[:, None], iw]
    return cols.reshape(input.shape[:-3] + (c * kh * kw, ho * wo))


def im2col_backward(grad_output: NDArray[Any], input_size: Sequence[int], kernel_size: Sequence[int],
                   dilation: Sequence[int], padding: Sequence[int], stride: Sequence[int]) -> NDArray[Any]:
    """(N, C*kH*kW, L) -> (N, C, H, W), or (C*kH*kW, L) -> (C, H, W), H, W = input_size.
    Zeros where nothing lands, and everywhere when grad_output is empty."""
    g = grad_output[None] if grad_output.ndim == 2 else grad_output
    n, rows, _ = g.shape
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = input_size, kernel_size, dilation, padding, stride
    c = rows // (kh * kw)
    shape = grad_output.shape[:-2] + (c, h, w)
    if g.size == 0:
        return np.zeros(shape, grad_output.dtype)
    ho, wo = _out_len(h, kh, dh, ph, sh), _out_len(w, kw, dw, pw, sw)
    g = g.reshape(n, c, kh, kw, ho, wo).astype(f32)
    total = np.zeros((n, c, h, w), f32)
    rows_taps, cols_taps = _taps(ho, h, kh, dh, ph, sh), _taps(wo, w, kw, dw, pw, sw)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN sums, silently, as on the device
        for ki in reversed(range(kh)):  # one offset lands on a pixel at most once: no repeats
            oh, ih = rows_taps[ki]
            for kj in reversed(range(kw)):
                ow, iw = cols_taps[kj]
                total[:, :, ih[:, None], iw] += g[:, :, ki, kj, oh[:, None], ow]
        return total.reshape(shape).astype(grad_output.dtype)
