"""The numpy backend's UpsampleNearestExact1d and its backward: the arithmetic of
ascend_aclnn/reference/upsample.py (whose results these match bit for bit), made fast:
rows on the threads, and the backward's intervals summed as a reshape when they repeat.

Arguments come in the aclnn parameter order (without outputs). 16-bit inputs are
computed in float32 and rounded once at the end, as the NPU kernels do. Index arithmetic
is done in float32 where the kernels do it in float32, so ties round the NPU's way; the
clamps compare against float32(L - 1) or float32(L) as the kernels do but yield the exact
integer L - 1 or L, which matters past 2^24, where float32 cannot hold every length.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from . import _half
from ._parallel import SERIAL, MIN_WORK, parallel

f32 = np.float32
F16 = np.dtype(np.float16)
BLOCK = 1 << 17  # float32 elements of grad and result per block of rows (512 KiB): in L2
MAX_CALLS = 256  # adds per block beyond which the periodic form is not worth it


def upsample_nearest_exact1d(input: NDArray[Any], output_size: tuple[int, ...], scales: float) -> NDArray[Any]:
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
    rows = input.size // l_in if l_in else 0
    out = np.empty(input.shape[:-1] + (l_out,), input.dtype)
    if rows == 0 or out.size < 1 << 16:
        np.take(input, src, axis=-1, out=out, mode="clip")  # src is in range: clip = raise
        return out
    x2, o2 = input.reshape(rows, l_in), out.reshape(rows, l_out)  # blocks of rows on the threads
    size = input.itemsize
    ratio = l_out // l_in if l_in else 0
    if size in _UINT and ratio * size in _UINT and ratio > 1 and l_out == ratio * l_in \
            and np.array_equal(src, np.arange(l_out) // ratio):
        # An integer ratio: each element's bits repeated `ratio` times in one word, by one
        # integer multiplication (the bits in each lane) straight into the output.
        lane, word = _UINT[size], _UINT[ratio * size]
        times = word(sum(1 << (8 * size * i) for i in range(ratio)))

        def repeat_bits(a: int, b: int) -> None:
            np.multiply(x2[a:b].view(lane), times, out=o2[a:b].view(word), casting="unsafe")
        parallel(rows, out.size, repeat_bits, SERIAL)
        return out

    def gather(a: int, b: int) -> None:
        np.take(x2[a:b], src, axis=-1, out=o2[a:b], mode="clip")
    parallel(rows, out.size, gather, SERIAL)
    return out


_UINT: dict[int, type[np.unsignedinteger[Any]]] = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

# (a, b, k, c): inputs a..b-1 have intervals of length k, the first starting at output c
Run = Tuple[int, int, int, int]
# (P, Q, runs): the intervals repeat every P inputs, shifted by Q outputs
Periodic = Tuple[int, int, List[Run]]


def upsample_nearest_exact1d_backward(grad_output: NDArray[Any], output_size: tuple[int, ...],
                                      input_size: tuple[int, ...], scales: float) -> NDArray[Any]:
    """grad_input[n, c, i] = float32 sum of grad_output[n, c, lo(i):hi(i)], with the kernel's
    interval lo(i) = min(ceil(i*s - 0.5), L_out), hi(i) = lo(i+1), s = scales or L_out/L_in.
    Positions at or past hi(L_in - 1) get no grad input: the NPU drops them."""
    # A sum meeting inf - inf or a signalling NaN, a result past the output dtype's range:
    # NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", invalid="ignore"):
        return _upsample_nearest_exact1d_backward(grad_output, output_size, input_size, scales)


def _upsample_nearest_exact1d_backward(grad_output: NDArray[Any], output_size: tuple[int, ...],
                                       input_size: tuple[int, ...], scales: float) -> NDArray[Any]:
    """The work of upsample_nearest_exact1d_backward, under its np.errstate."""
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
    go = grad_output
    rows = go.size // l_out if l_out else 0
    g2 = go.reshape(rows, l_out)
    plan = _periodic_runs(edges)
    if plan is None:
        total = _backward_gather(g2, edges, l_out)
        result = _half.narrow(total) if go.dtype == F16 else total.astype(go.dtype)
        return result.reshape(go.shape[:-1] + (l_in,))
    out = np.empty((rows, l_in), go.dtype)
    half = go.dtype == F16
    per_row = l_out + l_in
    step = max(1, BLOCK // max(per_row, 1))

    def work(r0: int, r1: int) -> None:
        n = min(step, r1 - r0)
        gbuf = np.empty((n, l_out), f32) if go.dtype != f32 else None
        tbuf = np.empty((n, l_in), f32) if go.dtype != f32 else None
        # float16's buffers; empty for the other dtypes, which never touch them
        hn = n if half else 0
        ibuf = np.empty((hn, l_out), np.int32)
        scratch = (np.empty((hn, l_in), np.uint32), np.empty((hn, l_in), np.uint32))
        pad: Optional[NDArray[Any]] = None
        if len(plan[2]) > 1:  # zeros once: the copies only ever fill the same slots
            p, _, runs = plan
            pad = np.zeros((n, l_in // p, p, max(k for *_, k, _ in runs)), f32)
        for b0 in range(r0, r1, step):
            b1 = min(b0 + step, r1)
            m = b1 - b0
            if pad is not None and (not half or _half.finite(g2[b0:b1], ibuf[:m].view(np.uint16)[:, :l_out])):
                # several runs: the gradient goes straight into the padded slots, converted
                # by the copies (float16 as its bits, scaled in place as widen_scaled does)
                p4 = pad[:m]
                if half:
                    _fill_pad(g2[b0:b1].view(np.int16), p4.view(np.int32), plan)
                    _half.scale_in_place(p4.view(np.int32))
                else:
                    _fill_pad(g2[b0:b1], p4, plan)
                tb = out[b0:b1] if tbuf is None else tbuf[:m]
                _sum_runs(None, tb, plan, p4)
                if half:
                    _half.narrow_scaled(tb, out[b0:b1], scratch[0][:m], scratch[1][:m])
                elif tbuf is not None:
                    out[b0:b1] = tb
                continue
            if gbuf is None or tbuf is None:  # float32 (the two exist together)
                gb, tb = np.ascontiguousarray(g2[b0:b1]), out[b0:b1]
            elif half and _half.widen_scaled(g2[b0:b1], ibuf[:m]):
                # float16 without inf or NaN: summed as its values times 2**-112 (two
                # fewer passes per element than a widening and a narrowing; same bits)
                tb = tbuf[:m]
                _sum_runs(ibuf[:m].view(f32), tb, plan, pad)
                _half.narrow_scaled(tb, out[b0:b1], scratch[0][:m], scratch[1][:m])
                continue
            else:
                gb, tb = gbuf[:m], tbuf[:m]
                if half:
                    _half.widen(g2[b0:b1], out=gb, threaded=False)
                else:
                    gb[...] = g2[b0:b1]
            _sum_runs(gb, tb, plan, pad)
            if tbuf is not None:  # the one rounding of a 16-bit result
                if half:
                    _half.narrow(tb, out=out[b0:b1], threaded=False)
                else:
                    out[b0:b1] = tb

    # float16's extra arithmetic per element made two threads 1.1-1.5x faster at 4000 -> 1024;
    # the others were no faster (see _parallel)
    parallel(rows, rows * per_row, work, MIN_WORK if half else SERIAL)
    return out.reshape(go.shape[:-1] + (l_in,))


def _periodic_runs(edges: NDArray[Any]) -> Optional[Periodic]:
    """The intervals as a repeating pattern, if they are one: (P, Q, runs) such that input
    i + P's interval is input i's shifted by Q outputs, P divides L_in, and within one period
    the inputs fall into a few runs (a, b, k, c) of consecutive intervals of equal length k,
    the first starting at output c. None when there is no such pattern (then the intervals
    are gathered one offset at a time)."""
    l_in = edges.size - 1
    lengths = np.diff(edges)
    for p in range(1, l_in + 1):
        if l_in % p:
            continue
        q = int(edges[p] - edges[0])
        if edges[0] != 0 or not np.array_equal(edges[p:] - edges[:-p], np.full(l_in + 1 - p, q)):
            continue
        period = lengths[:p]
        cuts = np.flatnonzero(period[1:] != period[:-1]) + 1
        starts, stops = np.concatenate([[0], cuts]), np.concatenate([cuts, [p]])
        calls = int(np.maximum(period[starts], 1).sum())
        if calls > MAX_CALLS:
            return None
        runs = [(int(a), int(b), int(period[a]), int(edges[a])) for a, b in zip(starts, stops)]
        return p, q, runs
    return None


def _sum_runs(gb: Optional[NDArray[Any]], tb: NDArray[Any], plan: Periodic, pad: Optional[NDArray[Any]]) -> None:
    """tb[r, i] = the float32 sum of gb[r, lo(i):hi(i)], added in ascending order starting
    from +0.0, for a block of rows (gb float32, C-contiguous; tb float32).

    One run (an integer ratio): the intervals are a reshape, and the sum adds strided
    columns in order. Several runs: the intervals are first copied into `pad`, K = the
    longest interval slots per input, whose unused slots stay +0.0 (adding +0.0 changes no
    sum that starts from +0.0), then summed the same way."""
    p, q, runs = plan
    r = tb.shape[0]
    nper = tb.shape[1] // p
    if pad is None:
        assert gb is not None  # one run is summed from the gradient itself
        (a, b, k, c), = runs
        g3 = gb[:, :nper * q].reshape(r, nper, q)
        src = g3[:, :, c:c + (b - a) * k].reshape(r, nper * (b - a), k)
    else:
        p4 = pad[:r]
        if gb is not None:  # else the caller has filled the slots
            _fill_pad(gb, p4, plan)
        k = pad.shape[-1]
        src = p4.reshape(r, nper * p, k)
    dst = tb.reshape(r, -1)
    if k == 0:
        dst[...] = 0
        return
    if k == 1:
        np.copyto(dst, src[..., 0])
    else:
        np.add(src[..., 0], src[..., 1], out=dst)
        for j in range(2, k):
            dst += src[..., j]
    # The sums start from +0.0: only an all -0.0 interval differs, giving -0.0 without it.
    tb += f32(0)


def _fill_pad(g: NDArray[Any], p4: NDArray[Any], plan: Periodic) -> None:
    """The padded slots p4 (rows, L_in / P, P, K) = the intervals of g's rows, one strided
    copy per run (a cast when the dtypes differ): a run's intervals of length k are
    consecutive in g, and fill the first k slots of its inputs. The other slots are left as
    they are (+0.0 from the start). One copy per run, not per interval: a period of millions
    of short intervals is still a few copies."""
    p, q, runs = plan
    r, nper = p4.shape[:2]
    g3 = g[:, :nper * q].reshape(r, nper, q)
    flat = p4.reshape(r, nper, -1)
    for kind, a, b, k, c in _copies(runs, p4.shape[-1]):
        if kind == "run":
            p4[:, :, a:b, :k] = g3[:, :, c:c + (b - a) * k].reshape(r, nper, b - a, k)
        else:  # consecutive gradient values landing on consecutive slots: one plain copy
            flat[:, :, a:b] = g3[:, :, c:c + b - a]


def _copies(runs: List[Run], slots: int) -> List[Tuple[str, int, int, int, int]]:
    """_fill_pad's copies: ("run", a, b, k, c) for a run copied slot by slot, or ("span",
    s0, s1, 0, c) for slots s0..s1-1 of a period (the inputs' slots laid end to end) taking
    the gradient from output c on. A run whose intervals fill their slots (k == K), or of
    one input, occupies consecutive slots from consecutive outputs; a span continues
    through the next such run when that one starts at the slot where it ends (an interval
    shorter than K ends a span: its unused slots are a gap). So per period a few copies
    with long inner loops, instead of one copy per run."""
    out: List[Tuple[str, int, int, int, int]] = []
    for a, b, k, c in runs:
        if k == 0:
            continue
        if k < slots and b - a > 1:  # gaps between its intervals: slot by slot
            out.append(("run", a, b, k, c))
            continue
        s0, s1 = a * slots, a * slots + (b - a - 1) * slots + k
        if out and out[-1][0] == "span" and out[-1][2] == s0:
            out[-1] = ("span", out[-1][1], s1, 0, out[-1][4])
        else:
            out.append(("span", s0, s1, 0, c))
    return out


def _backward_gather(g2: NDArray[Any], edges: NDArray[Any], l_out: int) -> NDArray[Any]:
    """The general form: one gather per offset into the intervals (float32 result)."""
    lo, lengths = edges[:-1], np.diff(edges)
    # Sum each interval in ascending order, one offset at a time; past its end an interval
    # reads the zero column appended at position L_out.
    g = np.concatenate([g2.astype(f32), np.zeros(g2.shape[:-1] + (1,), f32)], axis=-1)
    total = np.zeros(g2.shape[:-1] + (lo.size,), f32)
    for k in range(int(lengths.max(initial=0))):
        total += np.take(g, np.where(lengths > k, lo + k, l_out), axis=-1)
    return total
