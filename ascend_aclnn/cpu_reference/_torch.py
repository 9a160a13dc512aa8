"""PyTorch, imported on first use: NumPy arrays as CPU tensors without a copy, and back.

torch is an optional dependency (``pip install "ascend-aclnn[torch]"``); nothing here
imports it before ``torch_module()`` is called by a reference that needs it.
"""
from __future__ import annotations

import importlib.util
import threading
import warnings
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ..tensors import bfloat16

INSTALL = 'pip install "ascend-aclnn[torch]"'
# The releases the table's aten rows are tested against (pyproject.toml's torch extra says
# the same; CI runs the CPU reference's tests at both ends).
SUPPORTED = ">=2.13,<2.15"

_torch: Any = None
_lock = threading.Lock()
# np.dtype <-> torch.dtype, filled at import (torch's names are attributes of the module)
_TO_TORCH: dict[np.dtype[Any], Any] = {}
_FROM_TORCH: dict[Any, np.dtype[Any]] = {}


def torch_module(needed_by: str) -> Any:
    """The torch module; ModuleNotFoundError (one line saying what to install) without it."""
    global _torch
    if _torch is not None:
        return _torch
    with _lock:
        if _torch is None:
            try:
                import torch
            except ImportError:
                raise ModuleNotFoundError(f"{needed_by}'s CPU reference runs on PyTorch, which is not installed: "
                                          f"{INSTALL}", name="torch") from None
            pairs: list[tuple[Any, Any]] = [(np.float32, torch.float32), (np.float16, torch.float16), (np.float64, torch.float64),
                     (np.int8, torch.int8), (np.int16, torch.int16), (np.int32, torch.int32), (np.int64, torch.int64),
                     (np.uint8, torch.uint8), (np.bool_, torch.bool), (np.complex64, torch.complex64),
                     (np.complex128, torch.complex128), (bfloat16, torch.bfloat16)]
            pairs += [(n, getattr(torch, n)) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)]
            for nd, td in pairs:
                _TO_TORCH[np.dtype(nd)] = td
                _FROM_TORCH[td] = np.dtype(nd)
            # from_numpy shares a read-only array's memory and warns that writing it would be
            # undefined; the references only read their inputs
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable",
                                    category=UserWarning, module=__name__)
            _torch = torch
    return _torch


def available() -> bool:
    """Whether PyTorch can be imported here, without importing it (a blocked or absent torch
    is not available)."""
    if _torch is not None:
        return True
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # sys.modules["torch"] = None, or a broken entry
        return False


def aten_op(aclnn: str, row: Any) -> Any:
    """The aten overload a table row names, once the installed torch is seen to have it with
    the row's arguments and results; NotImplementedError naming the installed torch otherwise
    (aten ops are removed and renamed between releases: aten::qr is gone from 2.14)."""
    from .table import source
    torch = _torch
    packet, _, overload = row.aten.partition(".")
    args = [b.arg for b in row.params if b.bind in ("arg", "arg+result")] + list(row.fixed)
    results = 1 + max((b.result for b in row.params if b.result is not None), default=-1)
    why = (f"{aclnn}'s CPU reference is aten::{row.aten} (the table was made against torch "
           f"{source()['torch']}; ascend-aclnn supports torch{SUPPORTED})")
    fix = (f'install a supported torch: pip install "torch{SUPPORTED}"' if not supported(torch.__version__)
           else "a row of the table this torch breaks: please report it")
    try:
        op = getattr(getattr(torch.ops.aten, packet), overload or "default")
        schema = op._schema
    except (AttributeError, RuntimeError):
        raise NotImplementedError(f"{why}, which the installed torch {torch.__version__} does not have; "
                                  f"{fix}") from None
    names = {a.name for a in schema.arguments}
    unknown = [a for a in args if a not in names]
    if unknown or len(schema.returns) < results:
        what = (f"no argument {', '.join(map(repr, unknown))}" if unknown
                else f"{len(schema.returns)} results, not {results}")
        raise NotImplementedError(f"{why}, which in the installed torch {torch.__version__} has {what} "
                                  f"({schema}); {fix}")
    return op


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split("+")[0].split(".")[:2]
    return int(major), int(minor)


def supported(version: str) -> bool:
    """Whether a torch release (``torch.__version__``) is in SUPPORTED's range."""
    low, high = SUPPORTED.split(",")
    return _release(low[2:]) <= _release(version) < _release(high[1:])


def torch_dtype(dtype: Any) -> Any:
    """The torch dtype of a NumPy dtype (or a name such as "float32"); TypeError if torch has none."""
    try:
        return _TO_TORCH[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"torch has no dtype for {dtype!r}") from None


def numpy_dtype(dtype: Any) -> np.dtype[Any]:
    return _FROM_TORCH[dtype]


def to_torch(array: NDArray[Any]) -> Any:
    """A CPU tensor sharing the array's memory (bfloat16 by reinterpreting its bits)."""
    torch = _torch
    if array.dtype == bfloat16:
        return torch.from_numpy(_positive(array).view(np.uint16)).view(torch.bfloat16)
    if array.dtype not in _TO_TORCH:
        raise TypeError(f"torch has no dtype for {array.dtype}")
    return torch.from_numpy(_positive(array))


def _positive(array: NDArray[Any]) -> NDArray[Any]:
    # torch tensors have no negative strides (a reversed view): only then is there a copy
    return array if all(s >= 0 for s in array.strides) else np.ascontiguousarray(array)


def to_numpy(tensor: Any) -> NDArray[Any]:
    """A NumPy view of a CPU tensor (bfloat16 by its bits), resolving lazy conjugation."""
    torch = _torch
    t = tensor.detach()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        return np.asarray(t.view(torch.uint16).numpy()).view(bfloat16)
    return np.asarray(t.numpy())


def scalar_tensor(value: Any) -> Any:
    """A 0-d tensor of a number (an aclScalar where aten takes a Tensor)."""
    return _torch.tensor(value)


def is_tensor(value: Any) -> bool:
    return _torch is not None and isinstance(value, _torch.Tensor)


_HALVES = (np.dtype(np.float16), bfloat16)


def cast_once(values: NDArray[Any], dtype: np.dtype[Any]) -> NDArray[Any]:
    """``values`` as ``dtype``, each element rounded once (to nearest, ties to even).

    NumPy rounds float64 to float16 directly, but ml_dtypes' float64 -> bfloat16 (as torch's
    double -> half and -> bfloat16 copies) goes through float32: two roundings, which differ
    from one where the first lands on a tie of the second. Rounding to float32 "to odd"
    (truncate, then set the last bit when inexact) keeps the information the second rounding
    needs, so float32 -> bfloat16 then rounds as float64 -> bfloat16 would."""
    dtype = np.dtype(dtype)
    src = values.dtype
    if dtype not in _HALVES or src in _HALVES or src == np.float32 or src.kind not in "fiub":
        return values.astype(dtype, copy=False)
    wide = values.astype(np.float64, copy=False)  # exact for integers below 2**53
    if dtype == np.float16:
        return wide.astype(np.float16)
    with np.errstate(all="ignore"):
        near = wide.astype(np.float32)
        toward_zero = np.where(np.abs(near.astype(np.float64)) > np.abs(wide),
                               np.nextafter(near, np.float32(0)), near)
        inexact = (toward_zero.astype(np.float64) != wide) & ~np.isnan(wide)
        bits = toward_zero.view(np.uint32) | inexact.astype(np.uint32)
    return np.asarray(bits.view(np.float32)).astype(dtype)


def cast_into(dst: NDArray[Any], values: NDArray[Any]) -> None:
    """Cast ``values`` into ``dst`` in place, each element rounded once: in one pass (NumPy's
    own cast, as ``astype`` makes it), except into bfloat16 from float64 or an integer, which
    ml_dtypes rounds twice (cast_once). NumPy's float64 -> float16 rounds once; from an
    integer, float16 rounds what float32 holds exactly (below 2**24; past 65519 is inf)."""
    dtype, src = dst.dtype, values.dtype
    with np.errstate(all="ignore"):  # past the output dtype's range: inf, as the NPU casts
        if dtype == bfloat16 and src not in _HALVES and src != np.float32 and src.kind in "fiub":
            np.copyto(dst, cast_once(values, dtype), casting="unsafe")
        else:
            np.copyto(dst, values, casting="unsafe")


def write(dst: NDArray[Any], result: Any) -> Optional[str]:
    """Cast a tensor into the caller's array in place, rounding once; a problem's text, or None."""
    if result.is_complex() and dst.dtype.kind != "c":
        return f"a {dst.dtype} array, but the result is {str(result.dtype)[6:]} (its imaginary part would be lost)"
    wide = result.dtype not in (_torch.float32, _torch.float16, _torch.bfloat16, _torch.bool)
    if dst.dtype in _HALVES and wide and not result.is_complex():
        # torch's double/int -> 16-bit float copy rounds twice (through float32)
        cast_into(dst, to_numpy(result))
        return None
    if dst.dtype in _TO_TORCH or dst.dtype == bfloat16:
        target = to_torch(dst)
        if target.data_ptr() == dst.__array_interface__["data"][0] or dst.size == 0:
            if _overlaps(target, result):
                result = result.clone()
            target.copy_(result)
            return None
    cast_into(dst, to_numpy(result))  # a dtype torch lacks: cast in NumPy, as the numpy backend does
    return None


def _overlaps(a: Any, b: Any) -> bool:
    sa, sb = a.untyped_storage(), b.untyped_storage()
    lo_a, lo_b = sa.data_ptr(), sb.data_ptr()
    return bool(sa.nbytes() and sb.nbytes() and lo_a < lo_b + sb.nbytes() and lo_b < lo_a + sa.nbytes())
