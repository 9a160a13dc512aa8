"""Layer 3b: what aclCreateTensor / aclCreateIntArray are given: C int64 arrays for shapes
and strides, and the layout a NumPy input is uploaded with. The handles themselves are
made, cached and destroyed by the npu backend (backends/npu.py: on device blocks, per
stream, or per plan).

A NumPy input is uploaded as it lies in memory when that is cheap (non-negative strides,
no more than twice its own size), and described to CANN with element strides, as
torch_npu does for views; other layouts are compacted on the host first.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np


def strided_layout(a: np.ndarray) -> tuple[tuple[int, ...], int] | None:
    """(element strides, span in elements) under which a's own bytes can be uploaded as one
    span, or None when that is impossible or costs more than twice a's size."""
    item = a.itemsize
    if a.size == 0 or any(s < 0 or s % item for s in a.strides):
        return None
    strides = tuple(s // item for s in a.strides)
    span = sum((d - 1) * s for d, s in zip(a.shape, strides)) + 1
    return (strides, span) if span * item <= 2 * a.nbytes else None


@functools.lru_cache(maxsize=4096)
def int64s(values: tuple[int, ...]):
    """A C int64 array for a shape or stride tuple. Cached: the same few shapes recur on
    every call, and CANN copies the values, so a shared array is never written."""
    return (ctypes.c_int64 * len(values))(*values)
