"""16-bit float bits as order keys: comparisons of float16 or bfloat16 values done as int16
arithmetic, which moves half the bytes of a float32 widening and needs no conversion.

For a sign-magnitude float b (its bits read as int16), key = b where b >= 0, and
(b ^ 0x7fff) + 1 where b < 0 (the magnitude's bits flipped, then one up). The keys are
ordered as the values are: larger magnitudes of either sign move away from 0, and -0.0
(0x8000 -> 0) gets +0.0's key, so equal values (+0.0 == -0.0) have equal keys and distinct
ones distinct keys. NaN is the exception: its keys lie beyond the infinities'. So keys
stand for values only in an array without NaN (has_nan tells), and -32768 is below every
key (the most negative, 0xffff, gives -32767). from_keys inverts the map, except that a
key of 0 was +0.0 or -0.0: a caller that must keep the sign reads those elements back.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

F16, BF16 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
KEYED = (F16, BF16)
LOWEST_KEY = np.int16(-32768)  # below every key
_MAGNITUDE = np.int16(0x7fff)
_INF_BITS = {F16: 0x7c00, BF16: 0x7f80}  # a magnitude above these is NaN


def order_keys(x: NDArray[Any], out: NDArray[Any] | None = None) -> NDArray[Any]:
    """The int16 order keys of a float16 or bfloat16 array (into out, int16 of its shape)."""
    b = x.view(np.int16)
    sign = np.right_shift(b, 15, out=out)  # 0 or -1
    flip = np.bitwise_and(sign, _MAGNITUDE)
    np.bitwise_xor(b, flip, out=flip)
    return np.subtract(flip, sign, out=sign)


def from_keys(keys: NDArray[Any], dtype: Any, out: NDArray[Any] | None = None) -> NDArray[Any]:
    """The values (of dtype, float16 or bfloat16) whose order keys these are; a key of 0
    gives +0.0 (see the module's note). Into out (dtype, keys' shape) when given."""
    sign = np.right_shift(keys, 15)
    bits = np.add(keys, sign)
    np.bitwise_and(sign, _MAGNITUDE, out=sign)
    target = out.view(np.int16) if out is not None else None
    result = np.bitwise_xor(bits, sign, out=target)
    return out if out is not None else result.view(dtype)


def has_nan(keys: NDArray[Any], dtype: Any) -> bool:
    """Whether order keys of dtype's values include a NaN's (beyond the infinities')."""
    if keys.size == 0:
        return False
    inf = _INF_BITS[np.dtype(dtype)]
    return bool(keys.max() > inf or keys.min() < -inf)
