"""UpsampleNearestExact1d and its backward, following the Atlas A2/A3 kernels.

Arguments come in the aclnn parameter order (without outputs). 16-bit inputs are
computed in float32 and rounded once at the end, as the NPU kernels do. Index arithmetic
is done in float32 where the kernels do it in float32, so ties round the NPU's way.
"""
from __future__ import annotations

import numpy as np

f32 = np.float32


def upsample_nearest_exact1d(input: np.ndarray, output_size: tuple[int, ...], scales: float) -> np.ndarray:
    """out[n, c, d] = input[n, c, min(floor((d + 0.5) * s), L_in - 1)], s = 1/scales or L_in/L_out."""
    l_in, l_out = input.shape[-1], output_size[0]
    with np.errstate(over="ignore"):  # 1/scales past float32's range is inf, as on the device
        s = f32(1.0 / scales) if scales > 0 else f32(l_in) / f32(l_out)
    # Clamp while still float: a tiny scales makes s infinite, and inf has no integer value.
    src = np.minimum(np.floor((np.arange(l_out, dtype=f32) + f32(0.5)) * s), f32(l_in - 1))
    return np.take(input, src.astype(np.int64), axis=-1)


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
        edges = np.minimum(np.ceil(np.arange(l_in + 1, dtype=f32) * s - f32(0.5)), l_out).astype(np.int64)
    lo, lengths = edges[:-1], np.diff(edges)
    # Sum each interval in ascending order, one offset at a time; past its end an interval
    # reads the zero column appended at position L_out.
    g = np.concatenate([grad_output.astype(f32), np.zeros(grad_output.shape[:-1] + (1,), f32)], axis=-1)
    total = np.zeros(grad_output.shape[:-1] + (l_in,), f32)
    for k in range(int(lengths.max(initial=0))):
        total += np.take(g, np.where(lengths > k, lo + k, l_out), axis=-1)
    return total.astype(grad_output.dtype)
