"""The numpy backend's MaxPool2dWithMask and its backward: the arithmetic of
ascend_aclnn/reference/max_pool.py (whose results these match bit for bit), made fast:
a max along W then along H with first-match flags instead of every window gathered,
blocks of planes on the threads, 16-bit inputs compared as int16 order keys (_casts).

Arguments come in the aclnn parameter order (without outputs). Tensors are (N, C, H, W)
or (C, H, W). The "mask" is the A2/A3 one: an int8 tensor of shape
(N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32) whose first 4*N*C*Ho*Wo bytes are little-endian
int32 flat indices ih*W + iw into the unpadded input plane, in (n, c, oh, ow) order. The
NPU never writes the rest; this backend returns zeros there.

Window semantics (PyTorch's): positions outside the input do not take part; among equal
maxima the first in row-major window order wins; a window holding NaN gives NaN and the
index of its last NaN; a window whose values are all -inf gives -inf and the index of its
first in-bounds position. (The NPU documents NaN and -inf inputs as unsupported.)
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from ...reference._faults import KernelFault
from ...reference.max_pool import fill_mask_1x1, mask_int32_prefix, mask_shape, pool_out_size, pool_params
from . import _casts, _half
from ._parallel import SERIAL, parallel

f32 = np.float32
F16 = np.dtype(np.float16)
POOL_BLOCK = 1 << 20  # input elements per block of planes in the forward (4 MiB as float32)
BACK_BLOCK = 1 << 17  # input positions per block of planes in the backward (512 KiB of float32 sums)


def _offset_range(j: int, size: int, n_out: int, s: int, p: int) -> tuple[int, int, slice]:
    """For window offset j: the outputs [lo, hi) whose position o*s - p + j is inside the
    input, and the input slice holding those positions."""
    lo = max(0, -((j - p) // s))
    hi = min(n_out, (size - 1 + p - j) // s + 1)
    if hi <= lo:
        return lo, lo, slice(0, 0)
    start = lo * s - p + j
    return lo, hi, slice(start, start + (hi - lo - 1) * s + 1, s)


def _phases(v: NDArray[Any], s: int, axis: int) -> list[NDArray[Any]]:
    """[v[:, r::s] or v[:, :, r::s] for r < s], each contiguous."""
    size = v.shape[axis]
    if size % s == 0 and v.flags.c_contiguous:  # one de-interleaving copy
        split = v.reshape(v.shape[:axis] + (size // s, s) + v.shape[axis + 1:])
        return list(np.moveaxis(split, axis + 1, 0).copy())
    # A phase past the end is empty and never read (a window's start is inside v): a stride
    # far larger than the axis (any int64 is valid) must not build that many empty arrays.
    return [np.ascontiguousarray(v[(slice(None),) * axis + (slice(r, None, s),)]) for r in range(min(s, size))]


# (j, lo, hi, (phase, part)): window offset j reads outputs lo..hi-1 from part of that phase
_Range = Tuple[int, int, int, Tuple[int, slice]]


def _pool_axis(v: NDArray[Any], axis: int, k: int, s: int, p: int, n_out: int,
               payload: Optional[NDArray[Any]] = None, nan_last: bool = False
               ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """Max of v over windows along `axis` (1 or 2 of a 3-D array), and which window offset
    gave it: the first equal to the max, or with nan_last the last NaN of a NaN window.
    Also returns `payload` (an unsigned array shaped like v) taken at that offset (empty
    without a payload). The offsets are held in the smallest unsigned dtype that holds
    k - 1. Loops over the k offsets only; out-of-input offsets never take part."""
    shape = list(v.shape)
    shape[axis] = n_out
    # Without a stride, v is its own single phase.
    phases, payload_phases = [v], ([] if payload is None else [payload])
    ranges: List[_Range] = []
    for j in range(k):
        lo, hi, whole = _offset_range(j, v.shape[axis], n_out, s, p)
        if hi > lo:
            ranges.append((j, lo, hi, (0, whole)))

    def at(a: NDArray[Any], index: slice) -> NDArray[Any]:  # a[:, index] or a[:, :, index]
        return a[(slice(None),) * axis + (index,)]

    if s > 1 and k > 1:
        # Strided reads are slow: split v once into its s phases along the axis (each
        # contiguous), where every offset's positions are a unit-stride run.
        phases = _phases(v, s, axis)
        if payload is not None:
            payload_phases = _phases(payload, s, axis)
        ranges = [(j, lo, hi, (w.start % s, slice(w.start // s, w.start // s + hi - lo)))
                  for j, lo, hi, (_, w) in ranges]

    def source(a: NDArray[Any], src: tuple[int, slice]) -> NDArray[Any]:
        return at((payload_phases if a is payload else phases)[src[0]], src[1])

    m = np.full(shape, _casts.LOWEST_KEY if v.dtype == np.int16 else -np.inf, v.dtype)
    for _, lo, hi, src in ranges:
        np.maximum(at(m, slice(lo, hi)), source(v, src), out=at(m, slice(lo, hi)))
    # Tie flags: `pending` is True until an offset equal to the max is met; the chosen
    # offset is the number of offsets passed while pending (out-of-input ones included).
    offset = np.min_scalar_type(k - 1)  # uint8 for the usual windows; wider ones need more
    arg = np.zeros(shape, offset)
    sel = np.zeros(shape, payload.dtype) if payload is not None else np.zeros(0, np.uint8)
    pending = np.ones(shape, bool)
    last = ranges[-1][0]
    following: List[Optional[int]] = [r[0] for r in ranges[1:]]
    following.append(None)
    for (j, lo, hi, src), after in zip(ranges, following):
        part = slice(lo, hi)
        # Past the other offsets, a window still pending has its max at the last one.
        eq = at(pending, part).copy() if j == last else source(v, src) == at(m, part)
        if payload is not None:
            first = eq & at(pending, part)
            at(sel, part)[...] += first * source(payload, src)
        np.greater(at(pending, part), eq, out=at(pending, part))
        if after is not None:  # the offsets up to the next in-input one are passed
            arg += pending if after == j + 1 else pending * offset.type(after - j)
    arg += offset.type(ranges[0][0])  # offsets before the first in-input one never match
    if nan_last:
        nan_out = np.isnan(m)
        for j, lo, hi, src in ranges:  # later offsets overwrite: the last NaN wins
            part = slice(lo, hi)
            hit = np.isnan(source(v, src)) & at(nan_out, part)
            np.copyto(at(arg, part), j, where=hit)
            if payload is not None:
                np.copyto(at(sel, part), source(payload, src), where=hit)
    return m, arg, sel


def max_pool2d_with_mask(input: NDArray[Any], kernel_size: Sequence[int], stride: Sequence[int],
                         padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool
                         ) -> tuple[NDArray[Any], NDArray[Any]]:
    """out[n, c, oh, ow] = max of input[n, c, oh*sH - pH + i, ow*sW - pW + j] over the
    in-bounds (i, j) of the kH x kW window; mask = the int32 flat argmax ih*W + iw as bytes,
    zero tail. Computed in float32 (16-bit blocks without NaN: on their int16 order keys)
    as a max along W, then along H, with first-match flags; the output is the input
    element the mask names, bit for bit (a float32 max or a key carries every bit of it
    but a zero's sign and a NaN's payload: those elements are gathered)."""
    (kh, kw), (sh, sw), (ph, pw) = pool_params(kernel_size, stride, padding)
    h, w = input.shape[-2:]
    ho, wo = pool_out_size(h, kh, sh, ph, ceil_mode), pool_out_size(w, kw, sw, pw, ceil_mode)
    lead = input.shape[:-2]
    planes = math.prod(lead)
    mask = np.zeros(mask_shape(input.shape, (kh, kw), (ho, wo)), np.int8)
    if planes == 0:
        return np.zeros(lead + (ho, wo), input.dtype), mask
    x3 = input.reshape(planes, h, w)

    def run(x: NDArray[Any], nan_last: bool) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
        rows, col_arg, _ = _pool_axis(x, 2, kw, sw, pw, wo, nan_last=nan_last)
        return _pool_axis(rows, 1, kh, sh, ph, ho, payload=col_arg, nan_last=nan_last)

    if kh * kw == 1:  # every window is one element (padding 0); the NPU's bytes: see fill_mask_1x1
        fill_mask_1x1(mask, 1 if len(lead) == 1 else lead[0], lead[-1], ho * wo)
        return input[..., ::sh, ::sw][..., :ho, :wo].copy(), mask  # its own memory, even at stride 1
    out = np.empty((planes, ho, wo), input.dtype)
    # flat index = (oh*sH - pH + i) * W + (ow*sW - pW + j), written straight into the mask
    flat = mask.reshape(-1).view("<i4")[:planes * ho * wo].reshape(planes, ho, wo)
    base = (((np.arange(ho) * sh - ph) * w)[:, None] + (np.arange(wo) * sw - pw)[None, :]).astype(np.int32)
    # Planes are independent: blocks of them (a few MB, which bounds the temporaries) run
    # on the threads. Windows holding NaN (unsupported on the NPU) pick their last NaN; a
    # block without any gives the same result either way, so each block decides alone.
    step = max(1, POOL_BLOCK // (h * w))

    keyed = input.dtype in _casts.KEYED

    def work(a: int, b: int) -> None:
        keys = np.empty((min(step, b - a), h, w), np.int16) if keyed else None
        for p in range(a, b, step):
            q = min(p + step, b)
            xb = x3[p:q]
            nan = False
            if keys is not None and not _casts.has_nan(_casts.order_keys(xb, out=keys[:q - p]), xb.dtype):
                # 16-bit without NaN: the maxima of the int16 order keys are the maxima of
                # the values, ties included, at half the bytes of a float32 widening
                o, row_arg, col_arg = run(keys[:q - p], False)
                _casts.from_keys(o, out.dtype, out=out[p:q])  # a zero's sign: gathered below
            else:
                xb = _half.widen(xb, threaded=False) if xb.dtype == F16 else xb.astype(f32, copy=False)
                o, row_arg, col_arg = run(xb, False)
                nan = bool(np.isnan(o).any())
                if nan:
                    o, row_arg, col_arg = run(xb, True)
                with np.errstate(invalid="ignore"):  # a signalling NaN to bfloat16: gathered below
                    out[p:q] = o
            fb = flat[p:q]
            np.multiply(row_arg, np.int32(w), out=fb, dtype=np.int32)
            fb += col_arg
            fb += base
            # +0.0 == -0.0, so where the max is a zero it may be the other one; a NaN's payload
            # may be another NaN's. Those elements are gathered, found only when there are
            # some: o.all() is one pass without a temporary, and np.nonzero costs more.
            if nan or not o.all():
                which = np.nonzero(np.isnan(o) | (o == 0))
                at = fb[which]
                out[p:q][which] = x3[p:q][which[0], at // w, at % w]

    parallel(planes, planes * h * w, work, SERIAL)  # two threads were no faster: see _parallel
    return out.reshape(lead + (ho, wo)), mask


def max_pool2d_with_mask_backward(grad_output: NDArray[Any], input: NDArray[Any], mask: NDArray[Any],
                                  kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                                  dilation: Sequence[int], ceil_mode: bool) -> NDArray[Any]:
    """grad_input = zeros(input.shape); grad_input[n, c].flat[idx] += grad_output[n, c, oh, ow]
    with idx the mask's int32 prefix, in (n, c, oh, ow) order, summed in float32 and
    rounded once. For a 1x1 kernel the NPU ignores the mask (its layout differs there):
    grad_input[..., oh*sH, ow*sW] = grad_output."""
    # A sum meeting inf - inf or a signalling NaN, a result past the output dtype's range:
    # NaN or inf, silently, as on the device.
    with np.errstate(over="ignore", invalid="ignore"):
        return _max_pool2d_with_mask_backward(grad_output, input, mask, kernel_size, stride, padding, dilation,
                                              ceil_mode)


def _max_pool2d_with_mask_backward(grad_output: NDArray[Any], input: NDArray[Any], mask: NDArray[Any],
                                   kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                                   dilation: Sequence[int], ceil_mode: bool) -> NDArray[Any]:
    """The work of max_pool2d_with_mask_backward, under its np.errstate."""
    (kh, kw), (sh, sw), _ = pool_params(kernel_size, stride, padding)
    h, w = input.shape[-2:]
    ho, wo = grad_output.shape[-2:]
    lead = input.shape[:-2]
    planes = math.prod(lead)
    if kh * kw == 1:
        grad_input = np.zeros(input.shape, grad_output.dtype)
        grad_input[..., ::sh, ::sw][..., :ho, :wo] = grad_output
        return grad_input
    count = planes * ho * wo
    idx = mask_int32_prefix(mask, count).reshape(planes, ho * wo)
    if count and (idx.min() < 0 or idx.max() >= h * w):
        bad = idx[(idx < 0) | (idx >= h * w)][0]
        raise KernelFault(f"the mask holds the index {bad}, outside the {h}x{w} input plane: it "
                          f"does not come from max_pool2d_with_mask with these arguments")
    # np.add.at applies the additions in index order: (n, c, oh, ow), as the C kernel does.
    # It is fastest with native (intp) indices and sums that stay in cache: blocks of planes
    # (BACK_BLOCK input positions, 512 KiB of float32), independent, run on the threads,
    # each block's sums reused from a buffer of the thread's own.
    out = np.empty(input.shape, grad_output.dtype)
    out3 = out.reshape(planes, h * w)
    g2 = grad_output.reshape(planes, ho * wo)
    dtype = out.dtype
    step = max(1, BACK_BLOCK // max(h * w, 1))
    # float16: rounding costs 2-3 ns an element; when the outputs are fewer than half the
    # positions, round only the sums the mask names (gathered, rounded, scattered back).
    sparse = dtype == F16 and 2 * ho * wo < h * w

    def work(a: int, b: int) -> None:
        n = min(step, b - a)
        offsets = (np.arange(n, dtype=np.intp) * (h * w))[:, None]
        flat = np.empty((n, ho * wo), np.intp)
        sums = None if dtype == f32 else np.empty((n, h * w), f32)
        # the 16-bit buffers are empty for float32, which never touches them
        wide = np.empty((0 if dtype == f32 else n, ho * wo), np.int32)  # read as float32
        rounding = n * (ho * wo if sparse else h * w) if dtype == F16 else 0
        scratch = (np.empty(rounding, np.uint32), np.empty(rounding, np.uint32), np.empty(rounding, f32))
        for p in range(a, b, step):
            q = min(p + step, b)
            fl = flat[:q - p]
            np.copyto(fl, idx[p:q])  # int32 -> intp, then a same-type add (a mixed add is 5x slower)
            fl += offsets[:q - p]
            total = out3[p:q] if sums is None else sums[:q - p]
            total[...] = 0
            scaled = False
            if dtype == f32:
                values = g2[p:q]
            elif dtype == F16:
                # float16 without inf or NaN is summed as its values times 2**-112 (see
                # _half.widen_scaled: same bits, two fewer passes); else widened in full
                scaled = _half.widen_scaled(g2[p:q], wide[:q - p])
                values = wide[:q - p].view(f32)
                if not scaled:
                    _half.widen(g2[p:q], out=values, threaded=False)
            else:
                values = wide[:q - p].view(f32)
                values[...] = g2[p:q]
            np.add.at(total.reshape(-1), fl.reshape(-1), np.ascontiguousarray(values).reshape(-1))
            if sums is None:
                continue
            # the one rounding of a 16-bit result
            if dtype != F16:
                out3[p:q] = total
                continue
            if sparse:  # every output writes its position's rounded sum: repeats write the same bits
                where = fl.reshape(-1)
                picked = np.take(total.reshape(-1), where, out=scratch[2][:where.size])
                rounded = np.empty(where.size, F16)
                dst = out3[p:q].reshape(-1)
                dst[...] = 0
            else:
                picked, rounded = total.reshape(-1), out3[p:q].reshape(-1)
            if scaled:
                _half.narrow_scaled(picked, rounded, scratch[0][:picked.size], scratch[1][:picked.size])
            else:
                _half.narrow(picked, out=rounded, threaded=False)
            if sparse:
                dst[where] = rounded

    parallel(planes, planes * h * w, work, SERIAL)  # two threads were no faster: see _parallel
    return out
