"""UpsampleNearestExact1d and its backward, following the Atlas A2/A3 kernels.

Arguments come in the aclnn parameter order (without outputs). 16-bit inputs are
computed in float32 and rounded once at the end, as the NPU kernels do. Index arithmetic
is done in float32 where the kernels do it in float32, so ties round the NPU's way; the
clamps compare against float32(L - 1) or float32(L) as the kernels do but yield the exact
integer L - 1 or L, which matters past 2^24, where float32 cannot hold every length.
"""
from __future__ import annotations

import numpy as np

f32 = np.float32


def upsample_nearest_exact1d(input: np.ndarray, output_size: tuple[int, ...], scales: float) -> np.ndarray:
    """out[n, c, d] = input[n, c, min(floor((d + 0.5) * s), L_in - 1)], s = 1/scales or L_in/L_out."""
    l_in, l_out = input.shape[-1], output_size[0]
    with np.errstate(over="ignore"):  # 1/scales past float32's range is inf, as on the device
        s = f32(1.0 / scales) if scales > 0 else f32(l_in) / f32(l_out)
    pos = np.floor((np.arange(l_out, dtype=f32) + f32(0.5)) * s)  # >= 0: s > 0 or inf
    # The kernel's clamp: pos >= float32(L_in - 1) gives the integer L_in - 1, else int(pos).
    # Clamp while still float: a tiny scales makes s infinite, and inf has no integer value.
    last = f32(l_in - 1)
    src = np.minimum(pos, last).astype(np.int64)
    if int(last) != l_in - 1:  # past 2^24, float32(L_in - 1) is another integer
        src[pos >= last] = l_in - 1
    return np.take(input, src, axis=-1)


def upsample_nearest_exact1d_backward(grad_output: np.ndarray, output_size: tuple[int, ...],
                                      input_size: tuple[int, ...], scales: float) -> np.ndarray:
    """grad_input[n, c, i] = float32 sum of grad_output[n, c, lo(i):hi(i)], with the kernel's
    interval lo(i) = min(ceil(i*s - 0.5), L_out), hi(i) = lo(i+1), s = scales or L_out/L_in.
    Positions at or past hi(L_in - 1) get no grad input: the NPU drops them."""
    l_out, l_in = grad_output.shape[-1], input_size[2]
    s = f32(scales) if scales > 0 else f32(l_out) / f32(l_in)
    if abs(s - f32(1)) < f32(1e-6):
        edges = np.minimum(np.arange(l_in + 1), l_out)  # the kernel skips the pass: identity
    else:
        up = np.ceil(np.arange(l_in + 1, dtype=f32) * s - f32(0.5))  # >= -0.0
        # The kernel's clamp: up < float32(L_out) ? int(up) : the integer L_out.
        end = f32(l_out)
        edges = np.minimum(up, end).astype(np.int64)
        if int(end) != l_out:  # past 2^24, float32(L_out) is another integer
            edges[up >= end] = l_out
    lo, lengths = edges[:-1], np.diff(edges)
    # Sum each interval in ascending order, one offset at a time; past its end an interval
    # reads the zero column appended at position L_out.
    g = np.concatenate([grad_output.astype(f32), np.zeros(grad_output.shape[:-1] + (1,), f32)], axis=-1)
    total = np.zeros(grad_output.shape[:-1] + (l_in,), f32)
    for k in range(int(lengths.max(initial=0))):
        total += np.take(g, np.where(lengths > k, lo + k, l_out), axis=-1)
    return total.astype(grad_output.dtype)
