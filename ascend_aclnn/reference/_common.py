"""Small helpers the reference modules share: dtypes, and the grad kernel's rounding."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
SIXTEEN_BIT = (F16, BF16)


def accumulator(dtype: Any) -> np.dtype[Any]:
    """The dtype a kernel sums in: float32 for the 16-bit floats, else the dtype itself."""
    return F32 if np.dtype(dtype) in SIXTEEN_BIT else np.dtype(dtype)


def round_half_away(v: NDArray[Any], dtype: Any) -> NDArray[Any]:
    """v (float32) rounded once to dtype, to nearest with ties away from zero (the
    CAST_ROUND of the group-norm grad kernel). Any other pair is a plain cast.

    bfloat16 is the top half of float32: add half a unit (0x8000) to the bits and cut;
    a NaN keeps its top bits and is made quiet. float16: NumPy's cast rounds ties to
    even; where v lay exactly halfway and the cast went towards zero, take the
    neighbour one step further out (the next bit pattern). A NaN is NumPy's cast of it.
    """
    dtype = np.dtype(dtype)
    if dtype not in SIXTEEN_BIT or v.dtype != F32:
        return v.astype(dtype)
    if dtype == BF16:
        bits = v.view(np.uint32)
        rounded = (bits + np.uint32(0x8000)) >> np.uint32(16)  # wraps only for NaN, replaced here:
        rounded = np.where(np.isnan(v), (bits >> np.uint32(16)) | np.uint32(0x40), rounded)
        return rounded.astype(np.uint16).view(BF16)
    with np.errstate(over="ignore", invalid="ignore"):  # past float16's range: inf, as the device
        even = v.astype(F16)
        away = (even.view(np.uint16) + np.uint16(1)).view(F16)
        exact, lo, hi = v.astype(F64), even.astype(F64), away.astype(F64)  # differences exact in float64
        tie = (np.abs(exact) > np.abs(lo)) & (exact - lo == hi - exact)
    return np.where(tie, away, even)
