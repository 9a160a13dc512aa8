"""CPU references of the operators whose output size only the run knows.

Each returns the result in its real shape; the runner writes it into the first elements of
the caller's output (allocated at the largest size, as on an NPU) and returns the output
cut to that shape (``cann.data_dependent``), as the npu backend does after reading the
shape back with aclGetViewShape. Written from each operator's documentation and its CANN
8.1.RC1 prototype (the parameter lists below are those of the headers): indices are
int64, in row-major order; unique values ascending.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from .formulas import Formula

Array = NDArray[Any]
NONE_DIM = 1000  # op-plugin's dim for "no dim" (unique_consecutive's NoneN)


def nonzero(self: Array) -> Array:
    found: Array = np.argwhere(np.not_equal(self, 0)).astype(np.int64)
    return found


def nonzero_v2(self: Array) -> Array:
    return np.ascontiguousarray(nonzero(self).T)


def masked_select(self: Array, mask: Array) -> Array:
    s, m = np.broadcast_arrays(np.asarray(self), np.asarray(mask).astype(bool))
    picked: Array = s[m]
    return picked


def unique(self: Array, sorted: bool, returnInverse: bool) -> tuple[Array, Optional[Array]]:
    values, inverse = np.unique(np.asarray(self), return_inverse=True)
    return values, inverse.reshape(np.shape(self)).astype(np.int64) if returnInverse else None


def unique2(self: Array, sorted: bool, returnInverse: bool,
            returnCounts: bool) -> tuple[Array, Optional[Array], Optional[Array]]:
    values, inverse, counts = np.unique(np.asarray(self), return_inverse=True, return_counts=True)
    return (values, inverse.reshape(np.shape(self)).astype(np.int64) if returnInverse else None,
            counts.astype(np.int64) if returnCounts else None)


def unique_dim(self: Array, sorted: bool, returnInverse: bool, dim: int) -> tuple[Array, Optional[Array], Array]:
    a = np.asarray(self)
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
    return values, inverse.reshape(-1).astype(np.int64) if returnInverse else None, counts.astype(np.int64)


def unique_consecutive(self: Array, returnInverse: bool, returnCounts: bool,
                       dim: int) -> tuple[Array, Optional[Array], Optional[Array]]:
    a = np.asarray(self)
    flat = not -a.ndim <= dim < a.ndim  # NONE_DIM: the flattened input
    moved = a.reshape(-1) if flat else np.moveaxis(a, dim, 0)
    n = moved.shape[0]
    if n == 0:
        starts = np.zeros(0, np.int64)
    else:
        rows = moved.reshape(n, -1)
        change = np.any(rows[1:] != rows[:-1], axis=1)
        starts = np.concatenate([[0], np.nonzero(change)[0] + 1]).astype(np.int64)
    values = moved[starts] if flat else np.moveaxis(moved[starts], 0, dim)
    inverse = (np.cumsum(np.isin(np.arange(n), starts)) - 1).astype(np.int64)
    counts = np.diff(np.concatenate([starts, [n]])).astype(np.int64)
    if flat and returnInverse:
        inverse = inverse.reshape(a.shape)
    return values, inverse if returnInverse else None, counts if returnCounts else None


_DOC = "data-dependent output: written from the start of the largest-size output, returned cut to the real shape"
FORMULAS: dict[str, Formula] = {f.aclnn: f for f in (
    Formula("aclnnNonzero", "const aclTensor *self, aclTensor *out", nonzero,
            f"the (count, rank) indices of self's non-zero elements; {_DOC}"),
    Formula("aclnnNonzeroV2", "const aclTensor *self, aclTensor *out", nonzero_v2,
            f"the (rank, count) indices of self's non-zero elements; {_DOC}"),
    Formula("aclnnMaskedSelect", "const aclTensor *self, const aclTensor *mask, aclTensor *out", masked_select,
            f"self's elements where mask (both broadcast), 1-D; {_DOC}"),
    Formula("aclnnUnique", "const aclTensor *self, bool sorted, bool returnInverse, aclTensor *valueOut, "
            "aclTensor *inverseOut", unique, f"self's distinct values, ascending; {_DOC}"),
    Formula("aclnnUnique2", "const aclTensor *self, bool sorted, bool returnInverse, bool returnCounts, "
            "aclTensor *valueOut, aclTensor *inverseOut, aclTensor *countsOut", unique2,
            f"self's distinct values, ascending, with inverse indices and counts; {_DOC}"),
    Formula("aclnnUniqueDim", "const aclTensor *self, bool sorted, bool returnInverse, int64_t dim, "
            "aclTensor *valueOut, aclTensor *inverseOut, aclTensor *countsOut", unique_dim,
            f"self's distinct slices along dim, ascending; {_DOC}"),
    Formula("aclnnUniqueConsecutive", "const aclTensor *self, bool returnInverse, bool returnCounts, int64_t dim, "
            "aclTensor *valueOut, aclTensor *inverseOut, aclTensor *countsOut", unique_consecutive,
            f"self without consecutive repeats (along dim; flattened for dim {NONE_DIM}); {_DOC}"),
)}

__all__ = ["FORMULAS", "NONE_DIM"]
