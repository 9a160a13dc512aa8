"""UpsampleNearestExact1d and its backward, following the Atlas A2/A3 kernels.

Index arithmetic is float32, as in the kernels, so ties round the NPU's way. The clamps
compare against float32(L - 1) or float32(L), as the kernels do, but give the exact
integer L - 1 or L (past 2**24 float32 cannot hold every length). 16-bit inputs are
computed in float32 and rounded once.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

f32 = np.float32


def upsample_nearest_exact1d(input: NDArray[Any], output_size: Sequence[int], scales: float) -> NDArray[Any]:
    """out[n, c, d] = input[n, c, min(floor((d + 0.5) * s), L_in - 1)], s = 1/scales or L_in/L_out."""
    l_in, l_out = input.shape[-1], output_size[0]
    with np.errstate(over="ignore"):  # 1/scales past float32's range is inf, as on the device
        s = f32(1.0 / scales) if scales > 0 else f32(l_in) / f32(l_out)
    pos = np.floor((np.arange(l_out, dtype=f32) + f32(0.5)) * s)  # >= 0, maybe inf
    last = f32(l_in - 1)
    # The kernel's clamp: pos >= float32(L_in - 1) gives L_in - 1, else int(pos).
    src = np.where(pos >= last, l_in - 1, np.minimum(pos, last).astype(np.int64))
    out: NDArray[Any] = np.take(input, src, axis=-1)  # C-contiguous (the contract; input[..., src] is not)
    return out


def upsample_nearest_exact1d_backward(grad_output: NDArray[Any], output_size: Sequence[int], input_size: Sequence[int],
                                      scales: float) -> NDArray[Any]:
    """grad_input[n, c, i] = the float32 sum of grad_output[n, c, lo(i):lo(i+1)], added in
    ascending order starting from +0.0, with lo(i) = min(ceil(i*s - 0.5), L_out) and
    s = scales or L_out/L_in. Outputs at or past lo(L_in) get no input: the NPU drops them."""
    l_out, l_in = grad_output.shape[-1], input_size[2]
    s = f32(scales) if scales > 0 else f32(l_out) / f32(l_in)
    if abs(s - f32(1)) < f32(1e-6):  # the kernel skips the index pass: the identity
        edges = np.minimum(np.arange(l_in + 1), l_out)
    else:
        up = np.ceil(np.arange(l_in + 1, dtype=f32) * s - f32(0.5))  # >= -0.0
        end = f32(l_out)  # the kernel's clamp: up < float32(L_out) ? int(up) : L_out
        edges = np.where(up >= end, l_out, np.minimum(up, end).astype(np.int64))
    lo, hi = edges[:-1], edges[1:]
    g = grad_output.astype(f32)
    total = np.zeros(g.shape[:-1] + (l_in,), f32)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN sums, silently, as on the device
        for k in range(int((hi - lo).max(initial=0))):  # the k-th term of every interval
            has = lo + k < hi
            total[..., has] += g[..., lo[has] + k]
        return total.astype(grad_output.dtype)
