"""float16 <-> float32 conversions with integer arithmetic, bit-identical to NumPy's casts.

NumPy's float16 casts run scalar code (about 2.5 ns an element here, ten times a float32
copy); these do the same conversions as a few vectorised integer passes over cache-sized
blocks, spread over the numpy backend's threads. NaN (and in the widening infinity) is
detected per block and, where present, fixed by NumPy's cast of just those elements, so
payloads come out exactly as NumPy makes them.

widen: float16 bits h as int16, sign-extended to int32 and shifted left by 13, hold the
sign in bit 31 (bits 28-30 are sign copies, cleared) and exponent and mantissa in bits
13-27: read as float32, that is the value times 2**-112 (float16 subnormals become
float32 subnormals), so one exact multiplication by 2**112 finishes. Only exponent 31
(infinity, NaN) comes out wrong, as a finite |v| >= 65536, and is fixed.

narrow: the float unit rounds (see _narrow_block_even), to nearest even, or half away
from zero with the magnitude's lowest bit set first (which turns a tie into a value just
above it and moves no other value across a midpoint).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import NDArray

from ._parallel import parallel

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
BLOCK = 1 << 15  # elements per pass: a few int32 buffers of this stay in L1/L2

_SIGN_AND_BODY = np.int32(-0x70000001)  # 0x8fffffff: clear the sign copies in bits 28-30
_TWO_112 = np.float32(2.0 ** 112)
_MIN_NORMAL_I = np.int32(0x38800000)  # 2**-14, float16's smallest normal, as float32 bits
_F32_INF_I = np.int32(0x7f800000)
_TWO_M112 = np.float32(2.0 ** -112)
_MAX_ROUNDED_I = np.int32(0x477ff000)  # 65520: the midpoint above 65504, rounds to infinity


def _widen_block(src: NDArray[Any], dst: NDArray[Any], v: NDArray[Any]) -> None:
    """dst (float32, 1-D) = src (float16, 1-D, same length); v: int32 scratch as long."""
    np.copyto(v, src.view(np.int16))  # sign-extending
    np.left_shift(v, 13, out=v)
    np.bitwise_and(v, _SIGN_AND_BODY, out=v)
    np.multiply(v.view(F32), _TWO_112, out=dst)
    if dst.max() >= 65536 or dst.min() <= -65536:  # infinity or NaN in src
        special = np.flatnonzero(np.abs(dst) >= 65536)
        dst[special] = src[special].astype(F32)


def _narrow_block_even(src: NDArray[Any], dst: NDArray[Any], a: NDArray[Any], t: NDArray[Any], o: NDArray[Any],
                       ties_away: bool = False) -> None:
    """dst (float16, 1-D) = src (float32, 1-D) rounded to nearest even (or, ties_away,
    half away from zero); a, t, o: uint32 scratch of the same length. The float unit
    rounds: with |x| clamped to 65520 (which rounds to 65536, i.e. to infinity) and
    c = 2**(max(e, -14) + 13) for |x| in [2**e, 2**(e+1)), |x| + c has float16's step in
    binade e (2**(e-10), or 2**-24 for the subnormals), rounds there to even, and
    (|x| + c) - c is exact. Times 2**-112 (exact: float16 subnormals become float32
    subnormals) its bits are the float16 bits << 13.

    Ties away: the magnitude's lowest bit set first. At least 13 bits are dropped, so that
    bit is never kept: a tie (dropped bits 100...0) becomes just above it and rounds up,
    while dropped bits below or above the half stay below or above it (0x0fff | 1 is
    still below 0x1000). The clamp to 65520 comes first, so infinity is not made a NaN."""
    bits = src.view(np.uint32)
    ai, ti = a.view(np.int32), t.view(np.int32)
    np.bitwise_and(bits, np.uint32(0x7fffffff), out=a)
    top = ai.max()  # a reduction costs a quarter of an elementwise min: clamp only when needed
    nan = top > _F32_INF_I
    if top >= _MAX_ROUNDED_I:
        np.minimum(ai, _MAX_ROUNDED_I, out=ai)
    np.bitwise_and(a, np.uint32(0x7f800000), out=t)
    if ties_away:
        np.bitwise_or(a, np.uint32(1), out=a)
    if ai.min() < _MIN_NORMAL_I:  # float16 subnormals: their step is the normal range's lowest
        np.maximum(ti, _MIN_NORMAL_I, out=ti)
    np.add(t, np.uint32(13 << 23), out=t)
    of = o.view(F32)
    np.add(a.view(F32), t.view(F32), out=of)
    np.subtract(of, t.view(F32), out=of)
    np.multiply(of, _TWO_M112, out=of)
    np.right_shift(o, 13, out=o)
    np.right_shift(bits, 16, out=t)  # the sign, into bit 15: three contiguous passes are
    np.bitwise_and(t, np.uint32(0x8000), out=t)  # faster than one over the strided high halves
    np.bitwise_or(o, t, out=o)
    np.copyto(dst.view(np.uint16), o, casting="unsafe")
    if nan:
        where = np.flatnonzero(np.isnan(src))
        dst[where] = src[where].astype(F16)


_MASK_SIGN_BODY = np.int32(-0x70000001)
_MAX_ROUNDED_SCALED_I = np.int32(np.array(65520 * 2.0 ** -112, np.float32).view(np.int32))  # 65520 * 2**-112


def widen_scaled(src: NDArray[Any], out: NDArray[Any]) -> bool:
    """For summing float16 values in float32 without the cost of two casts: out (int32, the
    shape of src, read as float32) = each float16 value times 2**-112, exactly (the widening
    above without its last multiplication: float16 normals land on float32 normals,
    subnormals on subnormals). Sums of such values round exactly as the unscaled sums do
    (every partial sum is a multiple of 2**-136, which the scaled float32 holds whenever
    the unscaled one holds it, and no scaled sum can overflow), so a sum of them, given to
    narrow_scaled, is the float16 of the float32 sum. Returns False, out undefined, when
    src holds an infinity or a NaN, which this form does not carry: use widen then."""
    if not finite(src, out.reshape(-1).view(np.uint16)[:src.size].reshape(src.shape)):  # out as scratch
        return False
    np.copyto(out, src.view(np.int16))  # sign-extending
    scale_in_place(out)
    return True


def finite(src: NDArray[Any], scratch: NDArray[Any] | None = None) -> bool:
    """Whether a float16 array holds no infinity and no NaN (scratch: uint16 of its shape)."""
    probe = np.bitwise_and(src.view(np.uint16), np.uint16(0x7c00), out=scratch)
    return bool(probe.max(initial=0) != 0x7c00)


def scale_in_place(v: NDArray[Any]) -> None:
    """v (int32) holding float16 bits sign-extended (or zeros) becomes, read as float32,
    the values times 2**-112 (widen_scaled's last two passes, for a caller that placed the
    bits itself)."""
    np.left_shift(v, 13, out=v)
    np.bitwise_and(v, _MASK_SIGN_BODY, out=v)


def narrow_scaled(src: NDArray[Any], dst: NDArray[Any], a: NDArray[Any], t: NDArray[Any]) -> None:
    """dst (float16) = the float16 (nearest, ties to even) of src / 2**-112, for src
    (float32, finite) a sum of widen_scaled values; a, t: uint32 scratch of src's shape.
    The rounding of _narrow_block_even, done on the scaled values (which saves its
    multiplication): |x| clamped to 65520 * 2**-112 (which rounds to infinity) and c =
    2**(e + 13) for |x| in [2**e, 2**(e+1)): |x| + c rounds at float16's step,
    (|x| + c) - c is exact, and its bits are the float16 bits << 13. Not for other float32
    values: a scaled value below 2**-136 would have lost bits."""
    ai, ti = a.view(np.int32), t.view(np.int32)
    bits = src.view(np.uint32)
    np.bitwise_and(bits, np.uint32(0x7fffffff), out=a)
    if ai.max() >= _MAX_ROUNDED_SCALED_I:  # (see _narrow_block_even: clamps only when needed)
        np.minimum(ai, _MAX_ROUNDED_SCALED_I, out=ai)
    # No clamp at the subnormals: a sum of widen_scaled values is a multiple of 2**-136,
    # float16's step below 2**-126 (the float32 subnormals), so nothing rounds there.
    np.bitwise_and(a, np.uint32(0x7f800000), out=t)
    np.add(t, np.uint32(13 << 23), out=t)
    af, tf = a.view(F32), t.view(F32)
    np.add(af, tf, out=af)
    np.subtract(af, tf, out=af)
    np.right_shift(a, 13, out=a)
    np.right_shift(bits, 16, out=t)  # the sign, into bit 15
    np.bitwise_and(t, np.uint32(0x8000), out=t)
    np.bitwise_or(a, t, out=a)
    np.copyto(dst.view(np.uint16), a, casting="unsafe")


def widen(a: NDArray[Any], out: NDArray[Any] | None = None, threaded: bool = True) -> NDArray[Any]:
    """a.astype(float32) for a float16 array, bit for bit (NaN payloads included); into
    `out` (C-contiguous float32 of a's size) when given. threaded=False for a caller that
    is already one of several threads."""
    src = np.ascontiguousarray(a, dtype=F16).reshape(-1)
    out = _target(out, np.shape(a), F32, src.size)
    dst = out.reshape(-1)

    def work(lo: int, hi: int) -> None:
        v = np.empty(min(BLOCK, hi - lo), np.int32)
        for i in range(lo, hi, BLOCK):
            j = min(i + BLOCK, hi)
            _widen_block(src[i:j], dst[i:j], v[:j - i])

    _blocks(src.size, work, threaded)
    return out


def narrow(x: NDArray[Any], out: NDArray[Any] | None = None, threaded: bool = True,
           ties_away: bool = False) -> NDArray[Any]:
    """x.astype(float16) for a float32 array (nearest, ties to even), bit for bit; into
    `out` (C-contiguous float16 of x's size) when given. With ties_away, ties round away
    from zero instead (as a CAST_ROUND does); NaN still as NumPy's cast makes it."""
    src = np.ascontiguousarray(x, dtype=F32).reshape(-1)
    out = _target(out, np.shape(x), F16, src.size)
    dst = out.reshape(-1)

    def work(lo: int, hi: int) -> None:
        n = min(BLOCK, hi - lo)
        a, t, o = (np.empty(n, np.uint32) for _ in range(3))
        for i in range(lo, hi, BLOCK):
            j = min(i + BLOCK, hi)
            _narrow_block_even(src[i:j], dst[i:j], a[:j - i], t[:j - i], o[:j - i], ties_away)

    _blocks(src.size, work, threaded)
    return out


def _target(out: Optional[NDArray[Any]], shape: tuple[int, ...], dtype: Any, size: int) -> NDArray[Any]:
    if out is None:
        return np.empty(shape, dtype)
    if out.dtype != dtype or out.size != size or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {dtype} array of {size} elements")
    return out


def _blocks(size: int, work: Callable[[int, int], None], threaded: bool) -> None:
    """work(lo, hi) over BLOCK-aligned element ranges, one per thread."""
    if not threaded:
        work(0, size)
        return
    nblocks = -(-size // BLOCK)
    parallel(nblocks, size, lambda b0, b1: work(b0 * BLOCK, min(b1 * BLOCK, size)))
