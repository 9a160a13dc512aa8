"""The building blocks of the operator test data (see tests/op_db/__init__.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union

import numpy as np

from ascend_aclnn import bfloat16

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = bfloat16
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
I8, U8, I16, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64))
NULLPTR, INVALID = 161001, 161002


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass
class HandCase:
    id: str
    args: tuple
    # Worked out by hand; the derivation is in the comment beside it. A tuple for an
    # operator with several outputs (None where an output is not returned).
    expected: Union[np.ndarray, tuple]
    kwargs: dict = field(default_factory=dict)


@dataclass
class ErrorCase:
    id: str
    args: tuple
    status: int
    match: str                # regex the message must match (argument name and what was wrong)
    kwargs: dict = field(default_factory=dict)
    reaches_c: bool = True    # a C caller could pass this too (not a Python type error)


@dataclass
class Chain:
    """Operators run one after another on device-resident data. ``run(put)`` makes its
    inputs with ``put(ndarray)`` (``ascend_aclnn.to_device``, or the identity) and returns
    the final result(s); both ways must give the same values."""
    id: str
    run: Callable[[Callable[[np.ndarray], Any]], Any]


@dataclass
class Samples:
    name: str
    dtypes: tuple
    samples: Callable[[np.dtype, np.random.Generator], list[Sample]]
    hand_cases: list[HandCase]
    error_cases: list[ErrorCase]
    exact: bool = False       # the backends must agree bit for bit


def random(shape, dtype, rng) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def tolerance(dtype) -> dict:
    """Backends may sum float32 in a different order: allow that, then one 16-bit rounding."""
    return {F32: dict(rtol=1e-5, atol=1e-5), F16: dict(rtol=2**-10, atol=1e-3),
            BF16: dict(rtol=2**-7, atol=1e-2), F64: dict(rtol=1e-12, atol=1e-12),
            C64: dict(rtol=1e-5, atol=1e-5), C128: dict(rtol=1e-12, atol=1e-12)}.get(
                np.dtype(dtype), dict(rtol=0, atol=0))
