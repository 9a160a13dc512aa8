"""The numpy backend's ReplicationPad2d and its backward: the arithmetic of
ascend_aclnn/reference/pad.py (whose results these match bit for bit), made fast: slice
copies per run of positions instead of a gather, blocks of planes on the threads.

``padding`` is [left, right, top, bottom]: the first two pad the last dim (W), the last
two the second-to-last (H). With Hout = H + top + bottom and Wout = W + left + right,

    out[..., i, j] = input[..., clamp(i - top, 0, H - 1), clamp(j - left, 0, W - 1)]

for any pads: larger than the dims (the clamp repeats the edge), or negative (the
output is cropped). The backward is the exact adjoint: each input position gets the sum
of the gradient at every output position that reads it, zero if none does.

Summation order of the backward (which both this module and the simulator follow, so
the two agree bit for bit): rows first, then columns, each in ascending order, i.e.
``sum_j (sum_i g[i, j])``, as the device kernel reduces H before W. float16/bfloat16 sum
in float32 and round once; float32, float64 and complex stay in their own precision.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ...reference._common import SIXTEEN_BIT
from ._parallel import parallel

f32 = np.float32
BLOCK_BYTES = 1 << 20  # forward output bytes per block of planes


def _segments(n_in: int, before: int, n_out: int) -> list[tuple[slice, object]]:
    """How one padded axis maps back onto the input axis, as (destination, source) pairs.

    An input position h is read by the output positions i with clamp(i - before, 0,
    n_in - 1) == h: for an inner h only i = h + before; for h = 0 also every i below it,
    and for h = n_in - 1 every i above it. Returns, for the positions that some output
    position reads: (slice of inner input positions, slice of output positions) for the
    one-to-one run, and (slice(h, h + 1), range of output positions) for each edge.
    """
    segs: list[tuple[slice, object]] = []
    if n_in == 1:
        if n_out > 0:
            segs.append((slice(0, 1), range(0, n_out)))
        return segs
    first = range(0, min(before, n_out - 1) + 1)          # i <= before  ->  h = 0
    if len(first):
        segs.append((slice(0, 1), first))
    lo, hi = max(1, -before), min(n_in - 1, n_out - before)  # inner h with 0 <= h + before < n_out
    if lo < hi:
        segs.append((slice(lo, hi), slice(lo + before, hi + before)))
    last = range(max(n_in - 1 + before, 0), n_out)       # i >= n_in - 1 + before  ->  h = n_in - 1
    if len(last):
        segs.append((slice(n_in - 1, n_in), last))
    return segs


def _place(n_in: int, before: int, n_out: int) -> list[tuple[slice, slice]]:
    """Forward gather for one axis: (output slice, input slice) pairs; an edge input
    slice has length 1 and broadcasts over its output run."""
    pairs = []
    a, b = 0, min(max(before, 0), n_out)                       # i < before: input 0
    if a < b:
        pairs.append((slice(a, b), slice(0, 1)))
    a, b = max(before, 0), min(before + n_in, n_out)          # one to one
    if a < b:
        pairs.append((slice(a, b), slice(a - before, b - before)))
    a = max(before + n_in, 0)                                 # i >= before + n_in: input n_in - 1
    if a < n_out:
        pairs.append((slice(a, n_out), slice(n_in - 1, n_in)))
    return pairs


def replication_pad2d(input: NDArray[Any], padding: tuple[int, ...]) -> NDArray[Any]:
    """out[..., i, j] = input[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)]:
    a few slice copies into a preallocated output; exact for every dtype (the bits are
    moved, never converted). Large inputs are split over threads by (n, c) planes."""
    left, right, top, bottom = padding
    h, w = input.shape[-2:]
    out = np.empty(input.shape[:-2] + (h + top + bottom, w + left + right), input.dtype)
    planes = int(np.prod(input.shape[:-2], dtype=np.int64))
    if out.size == 0 or planes == 0:
        return out
    src3 = input.reshape((planes,) + input.shape[-2:])  # a view whenever the planes allow
    out3 = out.reshape((planes,) + out.shape[-2:])
    # Blocks of about a megabyte of output: the edges, written after the rows, then land
    # on cache lines the row copy has just brought in.
    step = max(1, BLOCK_BYTES // (out3[0].nbytes or 1))
    words = min(padding) >= 0 and h > 0 and w > 0 and not input.dtype.hasobject

    def work(a: int, b: int) -> None:
        for p in range(a, b, step):
            q = min(p + step, b)
            if words:
                _pad_planes_words(src3, out3, p, q, (left, right, top, bottom))
            else:
                _pad_planes(src3[p:q], out3[p:q], h, w, top, left)

    parallel(planes, out.size, work)
    return out


def _pad_planes(input: NDArray[Any], out: NDArray[Any], h: int, w: int, top: int, left: int) -> None:
    for rows_out, rows_in in _place(h, top, out.shape[-2]):
        for cols_out, cols_in in _place(w, left, out.shape[-1]):
            src = input[..., rows_in, cols_in]
            narrow = cols_in.stop - cols_in.start == 1 and cols_out.stop - cols_out.start <= 16
            if narrow and rows_out.stop - rows_out.start > 1:
                # A few edge columns beside many rows: one strided copy per column is
                # faster than a broadcast whose inner loop is only the pad's width.
                for j in range(cols_out.start, cols_out.stop):
                    np.copyto(out[..., rows_out, j], src[..., 0])
            else:
                np.copyto(out[..., rows_out, cols_out], src)


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _run_length(pad: int, itemsize: int) -> int | None:
    """How many elements of one side's edge run to write as one machine word: pad + 1 (the
    copies and the edge element itself) or pad, whichever makes 1, 2, 4 or 8 bytes; 0 for
    no pad; None when neither does (then that side is written column by column)."""
    if pad == 0:
        return 0
    for n in (pad + 1, pad):
        if n * itemsize in _UINT:
            return n
    return None


def _pad_planes_words(src3: NDArray[Any], out3: NDArray[Any], p: int, q: int, padding: Sequence[int]) -> None:
    """Planes [p, q) of a pad with non-negative pads, moving bits only: each input row is
    one copy of W * itemsize bytes into its output row; each row's left and right runs
    (an edge element repeated) are one unsigned word per row, the element's bits times
    0x0101... (one strided write per side instead of one per pad column); the top and
    bottom rows are copies of the first and last finished rows."""
    left, right, top, bottom = padding
    x, o = src3[p:q], out3[p:q]
    h, w = x.shape[-2:]
    s = x.itemsize
    wo = o.shape[-1]
    plane, row = o.strides[0], o.strides[1]
    base = o.reshape(-1)  # C-contiguous: the byte views below are taken from it

    def rows_as(dtype: Any, col: int) -> NDArray[Any]:
        """The input rows' part of the output from column `col`, one `dtype` item per row."""
        return np.ndarray(o.shape[:1] + (h,), dtype, buffer=base, offset=(top * wo + col) * s, strides=(plane, row))

    if x.strides[-1] == s:  # whole rows as single items: one copy loop over all rows
        np.copyto(rows_as(np.dtype(f"V{w * s}"), left), x.view(f"V{w * s}")[..., 0])
    else:
        np.copyto(o[:, top:top + h, left:left + w], x)
    bits: Optional[NDArray[Any]] = x.view(_UINT[s]) if s in _UINT else None
    for pad, col_in, start in ((left, 0, 0), (right, w - 1, None)):
        n = _run_length(pad, s) if bits is not None else None
        if n == 0:
            continue
        if n is None:  # column by column
            cols = range(0, left) if start == 0 else range(left + w, wo)
            for j in cols:
                np.copyto(o[:, top:top + h, j], x[:, :, col_in])
            continue
        assert bits is not None  # a run length is only given for sizes with a word type
        word: Any = _UINT[n * s]
        times = word(sum(1 << (8 * s * i) for i in range(n)))  # the element in each of n lanes
        # widened by a plain copy, then multiplied in place: a mixed-type multiply buffers its
        # strided column and costs 2.5x as much
        run = np.empty(x.shape[:2], word)
        np.copyto(run, bits[:, :, col_in])
        np.multiply(run, times, out=run)  # aligned: then one strided copy
        np.copyto(rows_as(word, 0 if start == 0 else wo - n), run)
    if top:
        np.copyto(o[:, :top], o[:, top:top + 1])
    if bottom:
        np.copyto(o[:, top + h:], o[:, top + h - 1:top + h])


def _ordered_sum(x: NDArray[Any], positions: range, axis: int, acc_dtype: Any) -> NDArray[Any]:
    """Sum of x's slices at ``positions`` (a range) along ``axis``, added one at a time in
    ascending order (np.sum's pairwise order would differ in the last bit), keeping the
    axis with length 1."""
    index = [slice(None)] * x.ndim
    index[axis] = slice(positions[0], positions[0] + 1)
    if len(positions) == 1:  # one term: a copy in its own dtype, every bit kept
        return x[tuple(index)].copy()
    total = x[tuple(index)].astype(acc_dtype)  # always a fresh array
    for p in positions[1:]:
        index[axis] = slice(p, p + 1)
        total += x[tuple(index)]
    return total


def replication_pad2d_backward(grad_output: NDArray[Any], input: NDArray[Any],
                               padding: tuple[int, ...]) -> NDArray[Any]:
    """grad_input[..., h, w] = sum over j of (sum over i of grad_output[..., i, j]), over
    the output positions (i, j) that read (h, w); zero where none does (negative pads).
    Large inputs are split over threads by (n, c) planes."""
    # A sum meeting inf - inf or a signalling NaN, a result past the output dtype's range:
    # NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", invalid="ignore"):
        return _replication_pad2d_backward(grad_output, input, padding)


def _replication_pad2d_backward(grad_output: NDArray[Any], input: NDArray[Any],
                                padding: tuple[int, ...]) -> NDArray[Any]:
    """The work of replication_pad2d_backward, under its np.errstate."""
    left, _, top, _ = padding
    g = grad_output
    h, w = input.shape[-2:]
    h_out, w_out = g.shape[-2:]
    dtype = input.dtype
    rows, cols = _segments(h, top, h_out), _segments(w, left, w_out)
    # Every input position is written unless negative pads crop some away.
    covered = sum(d.stop - d.start for d, _ in rows) == h and sum(d.stop - d.start for d, _ in cols) == w
    out = (np.empty if covered else np.zeros)(input.shape, dtype)
    planes = int(np.prod(input.shape[:-2], dtype=np.int64))
    if out.size == 0 or planes == 0:
        return out
    g3 = g.reshape((planes,) + g.shape[-2:])
    out3 = out.reshape((planes,) + out.shape[-2:])
    parallel(planes, g.size, lambda a, b: _pad_backward_planes(g3[a:b], out3[a:b], rows, cols, dtype))
    return out


def _pad_backward_planes(g: NDArray[Any], out: NDArray[Any], rows: Sequence[tuple[Any, Any]],
                         cols: Sequence[tuple[Any, Any]], dtype: Any) -> None:
    acc = f32 if dtype in SIXTEEN_BIT else dtype
    for rows_in, rows_src in rows:
        row_edge = isinstance(rows_src, range)
        for cols_in, cols_src in cols:
            col_edge = isinstance(cols_src, range)
            if not row_edge and not col_edge:  # the inner block: one copy, no arithmetic
                out[..., rows_in, cols_in] = g[..., rows_src, cols_src]  # read once: a copy, every bit kept
                continue
            if row_edge:  # rows first: reduce the rows read by this edge row
                strip = _ordered_sum(g[..., _as_slice(rows_src), _as_slice(cols_src)],
                                     range(len(rows_src)), -2, acc)
            else:
                strip = g[..., rows_src, _as_slice(cols_src)]
            if col_edge:  # then the columns read by this edge column
                strip = _ordered_sum(strip, range(len(cols_src)), -1, acc)
            out[..., rows_in, cols_in] = strip


def _as_slice(s: Any) -> Any:
    return slice(s.start, s.stop) if isinstance(s, range) else s
