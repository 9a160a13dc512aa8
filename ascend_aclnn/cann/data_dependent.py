"""Operators whose output size only the run knows, and how a caller gets the real result.

On an NPU such an operator writes into an output of the largest size its result can
take, and reports the real shape on the output's aclTensor once it has run: the caller
synchronises the stream and reads it with ``aclGetViewShape`` (op-plugin calls these
operators with ``EXEC_NPU_CMD_SYNC`` and resizes its tensor to that shape). The values
fill the output's memory from its start, contiguous in the real shape.

``OUTPUTS`` names, per operator, its parameters with a data-dependent shape; the other
outputs (Unique's inverse indices, of self's shape) are whole. Both backends return,
for each of them, ``cut(array, real_shape)``: a view of the caller's array of the real
shape over its first elements (a copy for a non-contiguous NumPy array).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

_PLUGIN = "op-plugin: EXEC_NPU_CMD_SYNC, then aclGetViewShape and resize_ of"
OUTPUTS: dict[str, tuple[tuple[str, ...], str]] = {
    "aclnnNonzero": (("out",), f"{_PLUGIN} out (nonzero)"),
    "aclnnNonzeroV2": (("out",), f"{_PLUGIN} out (nonzero, the transposed form)"),
    "aclnnMaskedSelect": (("out",), f"{_PLUGIN} out (masked_select)"),
    "aclnnUnique": (("valueOut",), f"{_PLUGIN} valueOut (_unique)"),
    "aclnnUnique2": (("valueOut", "countsOut"), f"{_PLUGIN} valueOut and countsOut (_unique2)"),
    "aclnnUniqueConsecutive": (("valueOut", "countsOut"), f"{_PLUGIN} valueOut and countsOut (unique_consecutive)"),
    "aclnnUniqueDim": (("valueOut", "countsOut"), f"{_PLUGIN} valueOut and countsOut (unique_dim)"),
}


def outputs(name: str) -> tuple[str, ...]:
    """The C names of an operator's data-dependent outputs (() for any other operator)."""
    found = OUTPUTS.get(name)
    return found[0] if found is not None else ()


def cut(array: Any, shape: tuple[int, ...]) -> Any:
    """The first ``prod(shape)`` elements of a caller's output array, as ``shape``."""
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    if n > array.size:
        raise ValueError(f"the real shape {shape} holds more elements than the output ({array.shape})")
    if isinstance(array, np.ndarray):
        flat = array.reshape(-1)  # a view when contiguous, else a copy
        return flat[:n].reshape(shape)
    host = getattr(array, "_host", None)
    view = array._view_as(array.shape if host is not None else shape, array.dtype)  # the same block
    if host is not None:  # a numpy-backend DeviceArray: its host array's first elements
        view.shape, view._host = shape, host.reshape(-1)[:n].reshape(shape)
    return view


__all__ = ["OUTPUTS", "cut", "outputs"]
