"""CANN's data formats: the aclFormat values, and the host codec of the private ones.

A private format stores a tensor in the blocks the AI core's cube and vector units read
(fractals of 16 rows by C0 elements, C0 = 32 bytes of elements): the stored array, its
"storage", has another shape than the tensor's logical one and zero padding where the
logical dims are not multiples of the blocks. The layouts here are those of CANN's
TransData golden and matmul golden (hicann/ops-math conversion/trans_data, hicann/ops-nn
matmul), element for element:

====================  ==========  ==============================================================
format                logical     storage (cd = ceil division; padding zeros)
====================  ==========  ==============================================================
FRACTAL_NZ            (..., M, N) (..., cd(N, C0), cd(M, 16), 16, C0); a 1-D (N,) as (1, N)
NC1HWC0 (5HD)         NCHW        (N, cd(C, C0), H, W, C0)
FRACTAL_Z             NCHW        (cd(C, C0)*H*W, cd(N, 16), 16, C0)
NDC1HWC0 (6HD)        NCDHW       (N, D, cd(C, C0), H, W, C0)
FRACTAL_Z_3D          NCDHW       (D*cd(C, C0)*H*W, cd(N, 16), 16, C0)
====================  ==========  ==============================================================

C0 is 32 bytes of elements for 1- and 2-byte dtypes (32 for int8, 16 for float16 and
bfloat16). For 4-byte dtypes the sources disagree (torch_npu and CANN's TransData test
case use 16; aclnnMatmul's weight-NZ shape and aclnnNpuFormatCast's check use 8), so C0
is a parameter everywhere here, defaulting to torch_npu's 16. Other item sizes have no
private format.
"""
from __future__ import annotations

import enum
import math
from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["Format", "PRIVATE", "PUBLIC", "c0_for", "decode", "encode", "is_private", "storage_shape"]


class Format(enum.IntEnum):
    """aclFormat (CANN 8.1.RC1 ``acl/acl_base.h``; the header spells FRACTAL_Z_3D
    ``ACL_FRACTAL_Z_3D``)."""
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33
    NC = 35
    NCL = 47


# The private formats this codec encodes, with the logical rank each takes (None: any >= 1).
_LOGICAL_RANK: dict[Format, Optional[int]] = {
    Format.FRACTAL_NZ: None, Format.NC1HWC0: 4, Format.FRACTAL_Z: 4, Format.NDC1HWC0: 5, Format.FRACTAL_Z_3D: 5}
PRIVATE: frozenset[Format] = frozenset(_LOGICAL_RANK)
# Formats whose storage is the logical array itself, row-major: only the label differs.
PUBLIC: frozenset[Format] = frozenset({Format.NCHW, Format.NHWC, Format.ND, Format.HWCN, Format.NDHWC, Format.NCDHW,
                                       Format.NC, Format.NCL})
N0 = 16  # the fractal's row count, whatever the dtype


def as_format(value: Any, argument: str = "format") -> Format:
    """A Format from a Format, its int value or its name ("FRACTAL_NZ", "nz" is not one);
    ValueError naming the argument otherwise."""
    if isinstance(value, Format):
        return value
    if isinstance(value, str):
        try:
            return Format[value.upper()]
        except KeyError:
            pass
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return Format(int(value))
        except ValueError:
            pass
    raise ValueError(f"{argument}: expected an ascend_aclnn.Format (or its name or aclFormat value), got {value!r}; "
                     f"known: {', '.join(f.name for f in Format)}")


def is_private(fmt: Any) -> bool:
    return as_format(fmt) in PRIVATE


def c0_for(dtype: Any, c0: Optional[int] = None) -> int:
    """C0 for a dtype: 32 bytes of elements for 1- and 2-byte types; ``c0`` when given
    (it must then be a positive int); 16 for 4-byte types by default (torch_npu's)."""
    dt = np.dtype(dtype)
    if c0 is not None:
        if isinstance(c0, bool) or not isinstance(c0, (int, np.integer)) or c0 <= 0:
            raise ValueError(f"c0: expected a positive int, got {c0!r}")
        return int(c0)
    if dt.itemsize in (1, 2):
        return 32 // int(dt.itemsize)
    if dt.itemsize == 4:
        return 16
    raise ValueError(f"dtype: {dt} ({dt.itemsize}-byte elements) has no private format; CANN's use 1-, 2- and "
                     "4-byte types")


def _cd(a: int, b: int) -> int:
    return -(-a // b)


def _check_rank(fmt: Format, shape: Sequence[int]) -> None:
    rank = _LOGICAL_RANK.get(fmt, -1)
    if rank == -1:
        raise ValueError(f"format: {fmt.name} is not a private format this codec knows; private: "
                         f"{', '.join(sorted(f.name for f in PRIVATE))}")
    if rank is None and len(shape) < 1:
        raise ValueError(f"shape: FRACTAL_NZ needs at least one dim, got {tuple(shape)}")
    if rank is not None and len(shape) != rank:
        layout = "NCHW" if rank == 4 else "NCDHW"
        raise ValueError(f"shape: {fmt.name} encodes a {rank}-D ({layout}) array, got shape {tuple(shape)}")


def storage_shape(fmt: Any, shape: Sequence[int], dtype: Any, c0: Optional[int] = None) -> tuple[int, ...]:
    """The stored shape of a logical ``shape`` in private format ``fmt`` (the table above);
    a public format stores the logical shape itself."""
    f = as_format(fmt)
    shape = tuple(int(d) for d in shape)
    if f not in PRIVATE:
        return shape
    _check_rank(f, shape)
    k = c0_for(dtype, c0)
    if f is Format.FRACTAL_NZ:
        if len(shape) == 1:
            shape = (1,) + shape
        *batch, m, n = shape
        return (*batch, _cd(n, k), _cd(m, N0), N0, k)
    if f is Format.NC1HWC0:
        n, c, h, w = shape
        return (n, _cd(c, k), h, w, k)
    if f is Format.FRACTAL_Z:
        n, c, h, w = shape
        return (_cd(c, k) * h * w, _cd(n, N0), N0, k)
    if f is Format.NDC1HWC0:
        n, c, d, h, w = shape
        return (n, d, _cd(c, k), h, w, k)
    n, c, d, h, w = shape  # FRACTAL_Z_3D
    return (d * _cd(c, k) * h * w, _cd(n, N0), N0, k)


def _pad_to(x: NDArray[Any], dims: Sequence[int]) -> NDArray[Any]:
    """x zero-padded at the end of each axis up to dims."""
    if tuple(x.shape) == tuple(dims):
        return x
    out = np.zeros(dims, x.dtype)
    out[tuple(slice(0, s) for s in x.shape)] = x
    return out


def encode(x: Any, fmt: Any, c0: Optional[int] = None) -> NDArray[Any]:
    """The storage of logical array ``x`` in private format ``fmt``: a new C-contiguous
    array of ``storage_shape(fmt, x.shape, x.dtype, c0)``, padding zeros."""
    f = as_format(fmt)
    x = np.asarray(x)
    if f not in PRIVATE:
        return np.ascontiguousarray(x)
    _check_rank(f, x.shape)
    k = c0_for(x.dtype, c0)
    if f is Format.FRACTAL_NZ:
        if x.ndim == 1:
            x = x.reshape(1, -1)
        *batch, m, n = x.shape
        m1, n1 = _cd(m, N0), _cd(n, k)
        p = _pad_to(x, (*batch, m1 * N0, n1 * k)).reshape(*batch, m1, N0, n1, k)
        b = len(batch)
        return np.ascontiguousarray(p.transpose(*range(b), b + 2, b, b + 1, b + 3))
    if f in (Format.NC1HWC0, Format.NDC1HWC0):
        n, c, *spatial = x.shape
        c1 = _cd(c, k)
        p = _pad_to(x, (n, c1 * k, *spatial)).reshape(n, c1, k, *spatial)
        if f is Format.NC1HWC0:  # (N, C1, C0, H, W) -> (N, C1, H, W, C0)
            return np.ascontiguousarray(p.transpose(0, 1, 3, 4, 2))
        return np.ascontiguousarray(p.transpose(0, 3, 1, 4, 5, 2))  # (N, C1, C0, D, H, W) -> (N, D, C1, H, W, C0)
    n, c, *spatial = x.shape  # FRACTAL_Z, FRACTAL_Z_3D
    c1, n1 = _cd(c, k), _cd(n, N0)
    p = _pad_to(x, (n1 * N0, c1 * k, *spatial)).reshape(n1, N0, c1, k, *spatial)
    if f is Format.FRACTAL_Z:  # (N1, N0, C1, C0, H, W) -> (C1, H, W, N1, N0, C0)
        t = p.transpose(2, 4, 5, 0, 1, 3)
    else:  # (N1, N0, C1, C0, D, H, W) -> (D, C1, H, W, N1, N0, C0)
        t = p.transpose(4, 2, 5, 6, 0, 1, 3)
    return np.ascontiguousarray(t).reshape(-1, n1, N0, k)


def decode(s: Any, fmt: Any, shape: Sequence[int], c0: Optional[int] = None) -> NDArray[Any]:
    """The logical array of ``shape`` stored as ``s`` in private format ``fmt`` (the
    inverse of ``encode``; padding ignored). ValueError if ``s`` has not the storage shape."""
    f = as_format(fmt)
    s = np.asarray(s)
    shape = tuple(int(d) for d in shape)
    if f not in PRIVATE:
        return np.ascontiguousarray(s).reshape(shape)
    want = storage_shape(f, shape, s.dtype, c0)
    if tuple(s.shape) != want:
        raise ValueError(f"storage: a {f.name} array of logical shape {shape} and dtype {s.dtype} is stored as "
                         f"{want}, got {tuple(s.shape)}")
    k = want[-1]
    if f is Format.FRACTAL_NZ:
        b = len(want) - 4
        *batch, n1, m1, _, _ = want
        full = s.transpose(*range(b), b + 1, b + 2, b, b + 3).reshape(*batch, m1 * N0, n1 * k)
        logical = shape if len(shape) >= 2 else (1,) + shape
        out = full[(..., slice(0, logical[-2]), slice(0, logical[-1]))]
        return np.ascontiguousarray(out).reshape(shape)
    if f in (Format.NC1HWC0, Format.NDC1HWC0):
        n, c, *spatial = shape
        c1 = _cd(c, k)
        if f is Format.NC1HWC0:
            full = s.transpose(0, 1, 4, 2, 3).reshape(n, c1 * k, *spatial)
        else:
            full = s.transpose(0, 2, 5, 1, 3, 4).reshape(n, c1 * k, *spatial)
        return np.ascontiguousarray(full[:, :c])
    n, c, *spatial = shape
    c1, n1 = _cd(c, k), _cd(n, N0)
    if f is Format.FRACTAL_Z:
        h, w = spatial
        full = s.reshape(c1, h, w, n1, N0, k).transpose(3, 4, 0, 5, 1, 2)
    else:
        d, h, w = spatial
        full = s.reshape(d, c1, h, w, n1, N0, k).transpose(4, 5, 1, 6, 0, 2, 3)
    full = full.reshape(n1 * N0, c1 * k, *spatial)
    return np.ascontiguousarray(full[:n, :c])


def storage_size(fmt: Any, shape: Sequence[int], dtype: Any, c0: Optional[int] = None) -> int:
    """Elements stored for a logical ``shape`` in ``fmt``."""
    return math.prod(storage_shape(fmt, shape, dtype, c0))
