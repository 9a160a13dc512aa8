"""ReplicationPad2d and its backward.

``padding`` is [left, right, top, bottom]: the first two pad the last dim (W), the last
two the second-to-last (H). With Hout = H + top + bottom and Wout = W + left + right,

    out[..., i, j] = input[..., clamp(i - top, 0, H - 1), clamp(j - left, 0, W - 1)]

for any pads: larger than the dims (the clamp repeats the edge), or negative (the
output is cropped). The backward is the exact adjoint: each input position gets the sum
of the gradient at every output position that reads it, zero if none does.

Summation order of the backward, as the device kernel reduces H before W: rows first,
then columns, each in ascending order starting from the first term (a position read
once is a copy of its one value, every bit kept). float16/bfloat16 sum in float32 and round once;
float32, float64 and complex stay in their own precision.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ._common import accumulator


def _source(n_in: int, before: int, n_out: int) -> NDArray[Any]:
    """For each output position along one axis, the input position it reads."""
    return np.clip(np.arange(n_out) - before, 0, n_in - 1)


def replication_pad2d(input: NDArray[Any], padding: Sequence[int]) -> NDArray[Any]:
    """out[..., i, j] = input[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)]: a gather,
    exact for every dtype."""
    left, right, top, bottom = padding
    h, w = input.shape[-2:]
    shape = input.shape[:-2] + (h + top + bottom, w + left + right)
    if input.size == 0 or 0 in shape:
        return np.empty(shape, input.dtype)
    rows = np.take(input, _source(h, top, shape[-2]), axis=-2)  # np.take: C-contiguous, as the contract asks
    return np.take(rows, _source(w, left, shape[-1]), axis=-1)


def _fold(g: NDArray[Any], source: NDArray[Any], n_in: int) -> NDArray[Any]:
    """Along g's last axis: out[k] = the sum of g[i] over the i with source[i] == k, in
    ascending i, starting from the first such term; zero where there is none."""
    out = np.zeros(g.shape[:-1] + (n_in,), g.dtype)
    seen = np.zeros(n_in, bool)
    for i, k in enumerate(source):
        if seen[k]:
            out[..., k] += g[..., i]
        else:
            out[..., k], seen[k] = g[..., i], True
    return out


def replication_pad2d_backward(grad_output: NDArray[Any], input: NDArray[Any],
                               padding: Sequence[int]) -> NDArray[Any]:
    """grad_input[..., h, w] = sum over j of (sum over i of grad_output[..., i, j]), over
    the output positions (i, j) that read (h, w); zero where none does (negative pads)."""
    left, _, top, _ = padding
    h, w = input.shape[-2:]
    h_out, w_out = grad_output.shape[-2:]
    g = grad_output.astype(accumulator(input.dtype))
    if g.size == 0 or input.size == 0:
        return np.zeros(input.shape, input.dtype)
    src_h, src_w = _source(h, top, h_out), _source(w, left, w_out)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN sums, silently, as on the device
        rows = _fold(g.swapaxes(-1, -2), src_h, h).swapaxes(-1, -2)  # rows first
        result = _fold(rows, src_w, w).astype(input.dtype)  # then columns
    # A position read once is a copy: its value keeps every bit (a signalling NaN too).
    once = (np.bincount(src_h, minlength=h) == 1)[:, None] & (np.bincount(src_w, minlength=w) == 1)[None, :]
    first = grad_output[..., np.searchsorted(src_h, np.arange(h))[:, None] % h_out,
                        np.searchsorted(src_w, np.arange(w))[None, :] % w_out]
    result[..., once] = first[..., once]
    return result
