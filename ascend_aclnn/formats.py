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
# The public formats an array can be tagged with, and the rank their names fix (None: any).
PUBLIC_RANKS: dict[Format, Optional[int]] = {
    Format.ND: None, Format.NCHW: 4, Format.NHWC: 4, Format.HWCN: 4, Format.NCDHW: 5, Format.NDHWC: 5, Format.NC: 2,
    Format.NCL: 3}
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


# ---- device arrays ------------------------------------------------------------------------------

ROUTE_NONE = "none: the array is already in that format"
ROUTE_TRANS_MATMUL_WEIGHT = "aclnnTransMatmulWeight: on the device, by the installed CANN"
ROUTE_HOST = "host: download, convert exactly with ascend_aclnn.formats, upload"
ROUTE_RELABEL = "relabel: a device copy of the same bytes, tagged with the other public format"
_TMW_DTYPES = ("float16", "bfloat16", "int8")


def _has_trans_matmul_weight() -> bool:
    """Whether the loaded CANN can run aclnnTransMatmulWeight through aa.aclnn (its header
    prototype, and the function in an operator library)."""
    from . import aclnn
    from .cann.loader import get_cann
    try:
        aclnn.prototype("aclnnTransMatmulWeight")
        return get_cann().op_function("aclnnTransMatmulWeightGetWorkspaceSize", None, ()) is not None
    except Exception:  # no header, no CANN: the host route
        return False


def format_cast_route(d: Any, fmt: Any, c0: Optional[int] = None) -> str:
    """Which way ``format_cast(d, fmt, c0=c0)`` converts (one of the ROUTE_* texts),
    without converting: on the numpy backend always the host codec; on the npu backend
    CANN's aclnnTransMatmulWeight for an ND float16, bfloat16 or int8 matrix (or 3-D stack,
    up to 6-D for int8) to FRACTAL_NZ with the dtype's own C0, when the installed CANN has
    it, else the host codec. CANN 8.1.RC1 has no other aclnn format producer; a newer
    CANN's aclnnNpuFormatCast is not bound."""
    from .tensors import DeviceArray
    if not isinstance(d, DeviceArray):
        raise TypeError(f"d: expected a DeviceArray, got {type(d).__name__}")
    target = as_format(fmt)
    current = d.format
    if target is current and (target not in PRIVATE or c0 is None or c0 == (d._storage or (0,))[-1]):
        return ROUTE_NONE
    if target not in PRIVATE and current not in PRIVATE:
        return ROUTE_RELABEL
    dt = np.dtype(d.dtype)
    if d.backend == "npu" and target is Format.FRACTAL_NZ and current in (Format.ND,) \
            and dt.name in _TMW_DTYPES and (c0 is None or c0 == c0_for(dt)) \
            and 2 <= d.ndim <= (6 if dt.name == "int8" else 3) and d.size > 0 and _has_trans_matmul_weight():
        return ROUTE_TRANS_MATMUL_WEIGHT
    return ROUTE_HOST


def format_cast(d: Any, fmt: Any, c0: Optional[int] = None) -> Any:
    """``d`` in format ``fmt`` (torch_npu's ``npu_format_cast``): a new DeviceArray of the
    same logical shape and values, or ``d`` itself when it is already in that format.
    Between the public formats (ND, NCHW, NCDHW, ...; a relabel of the same bytes) and the
    private ones (FRACTAL_NZ, NC1HWC0, FRACTAL_Z, NDC1HWC0, FRACTAL_Z_3D; ``c0`` for
    4-byte dtypes, default 16). Always exact: through CANN's own operator where the
    installed CANN has one that fits, else on the host; ``format_cast_route`` says which."""
    from .tensors import DeviceArray, check_same_place, new_device_array, tag_problem, upload_formatted
    from .backends import get_backend
    from .backends.npu import runtime
    if not isinstance(d, DeviceArray):
        raise TypeError(f"d: expected a DeviceArray (ascend_aclnn.to_device(x, format=...) for a host array), got "
                        f"{type(d).__name__}")
    target = as_format(fmt)
    check_same_place(d, get_backend(), "d")
    problem = tag_problem(target, d.shape)
    if problem is not None:
        raise ValueError(f"fmt: {problem}")
    if target in PRIVATE:
        c0_for(d.dtype, c0)  # a dtype with no private format, or a bad c0: refused here
    route = format_cast_route(d, target, c0)
    if route == ROUTE_NONE:
        return d
    if route == ROUTE_RELABEL:
        new = d.copy()
        new._set_format(int(target), None)
        return new
    if route == ROUTE_TRANS_MATMUL_WEIGHT:
        from . import aclnn
        with runtime.gated:
            nd = new_device_array((storage_size(target, d.shape, d.dtype),), d.dtype, "npu")
        nd.shape = d.shape  # a block with room for the NZ storage, holding d's ND elements first
        nd._set_format(int(Format.ND), None)  # passed as ND whatever its rank (the op_api refuses others)
        with runtime.gated:
            device = d._device
            device.activate()
            with device.stream.lock:
                d._require_valid("d")
                device.copy_async(nd._buffer, d._buffer, d.nbytes)
                device.stream.launched((d._buffer, nd._buffer), [nd._buffer], "aclrtMemcpyAsync")
        result: DeviceArray = aclnn.operator("aclnnTransMatmulWeight")(nd)
        return result
    host = d.numpy()
    if get_backend() == "npu":
        with runtime.gated:
            return upload_formatted(host, "npu", int(target), c0)
    return upload_formatted(host, "numpy", int(target), c0)


# ---- the CPU reference (numpy backend) ----------------------------------------------------------
#
# A raw call on the numpy backend runs its CPU reference on logical arrays: private inputs are
# decoded, private outputs encoded back into their storage. What the consumers document about
# their private-format arguments is refused here as CANN's op_apis refuse it (161002), so a
# script that fails on an Atlas host fails on the CPU too.

_MM_FAMILY = ("aclnnMm", "aclnnMatmul", "aclnnMatmulWeightNz")
_NZ_WEIGHT_ONLY = ("aclnnMatmulWeightNz",)


def logical_host(v: Any) -> Any:
    """A numpy-backend DeviceArray's host array as a reference reads it: the logical one
    (decoded, a copy) for a private format, else its own."""
    host = v._host
    if v._storage is None:
        return host
    return decode(host, v._format, v.shape, v._storage[-1])


def store_logical(v: Any, logical: Any) -> None:
    """Write a reference's logical result (already in ``logical``, the array
    ``logical_host`` gave) back into a private-format DeviceArray's storage."""
    if v._storage is not None and logical is not None:
        v._host[...] = encode(np.asarray(logical), v._format, v._storage[-1])


def _refuse(api: str, argument: str, detail: str) -> Any:
    from .cann.constants import ACLNN_ERR_PARAM_INVALID
    from .errors import AclnnError
    return AclnnError(ACLNN_ERR_PARAM_INVALID, api + "GetWorkspaceSize", detail, argument=argument)


def check_cpu_call(spec: Any, tensors: Sequence[Any], names: Sequence[str]) -> None:
    """The documented constraints on private-format arguments of the operators that take
    them (CANN's op_apis; consumers' notes), as refusals, before the CPU reference runs."""
    from .tensors import DeviceArray
    api = spec.aclnn
    arrays = {n: t for n, t in zip(names, tensors) if isinstance(t, DeviceArray)}
    private = {n: t for n, t in arrays.items() if t._format in PRIVATE}
    if api in _MM_FAMILY:
        for n, t in private.items():
            if n in ("self", "out"):
                raise _refuse(api, n, f"the 'self' and 'out' tensors do not support a private format, got "
                                      f"{t.format.name}")
            if t._format != Format.FRACTAL_NZ:
                raise _refuse(api, n, f"{n}'s format must be ND or FRACTAL_NZ, got {t.format.name}")
            if 1 in t.shape[-2:]:
                raise _refuse(api, n, f"a FRACTAL_NZ {n} with n = 1 or k = 1 is not supported, got shape {t.shape}")
            # aclnn_matmul.cpp's weight-NZ shape: C0 16, or 8 for float32 (not torch_npu's 16)
            want = storage_shape(Format.FRACTAL_NZ, t.shape, t.dtype, 8 if t.dtype == np.float32 else None)
            if t._storage != want:
                raise _refuse(api, n, f"a FRACTAL_NZ {n} of shape {t.shape} and dtype {t.dtype.name} must be stored "
                                      f"as {want}, got {t._storage}")
        if api in _NZ_WEIGHT_ONLY and "mat2" in arrays and arrays["mat2"]._format != Format.FRACTAL_NZ:
            raise _refuse(api, "mat2", f"mat2 must be FRACTAL_NZ, got {arrays['mat2'].format.name}")
    if api.startswith("aclnnGroupedMatmul"):
        for n, t in private.items():
            if t._format != Format.FRACTAL_NZ or len(t.shape) < 2:
                continue
            k, nn = t.shape[-2:]
            if t.dtype.itemsize == 1 and (k % 16 or nn % 32):
                raise _refuse(api, n, f"an int8 FRACTAL_NZ weight needs K divisible by 16 and N by 32, got {t.shape}")
            if t.dtype.itemsize == 2 and (k % 16 or nn % 16):
                raise _refuse(api, n, f"a 16-bit FRACTAL_NZ weight needs K and N divisible by 16, got {t.shape}")


def _most_16bit_dims() -> int:
    """The rank limit of a 16-bit weight in aclnnTransMatmulWeight and the V1 size helper: 3
    before CANN 9.0.0 (hicann/ops-math v8.5.0, the oldest public source), 6 from it. The
    release followed on the CPU is the numpy backend's (ASCEND_ACLNN_CANN_VERSION, else the
    install the loader finds, else the newest)."""
    import os
    from .cann import version
    from .ops.group_norm import CANN_VERSION_ENV, _installed_release
    release = os.environ.get(CANN_VERSION_ENV, "").strip() or None
    if release is None:
        try:
            release = _installed_release(os.environ.get("ASCEND_HOME_PATH"), os.environ.get("ASCEND_TOOLKIT_HOME"))[0]
        except Exception:  # an unreadable install: the newest behaviour
            release = None
    return 3 if version.at_least(release, "9.0.0") is False else 6


def trans_matmul_weight_on_cpu(spec: Any, tensors: Sequence[Any]) -> Any:
    """aclnnTransMatmulWeight on the numpy backend: the op_api's checks, then the weight is
    stored as FRACTAL_NZ (C0 of its dtype) in place; NotImplemented for any other call."""
    from .tensors import DeviceArray
    if spec.aclnn != "aclnnTransMatmulWeight" or len(tensors) != 1:
        return NotImplemented
    t, api = tensors[0], spec.aclnn
    if not isinstance(t, DeviceArray):
        raise _refuse(api, "mmWeightRef", "its storage becomes FRACTAL_NZ, which a NumPy array cannot hold: pass a "
                                          "DeviceArray (ascend_aclnn.to_device)")
    if t.dtype.name not in _TMW_DTYPES:
        raise _refuse(api, "mmWeightRef", f"dtype must be float16, bfloat16 or int8, got {t.dtype.name}")
    if t._format in PRIVATE:
        raise _refuse(api, "mmWeightRef", f"the format of mmWeightRef should be ND, got {Format(t._format).name}")
    if t.size == 0:
        return t
    most = 6 if t.dtype.name == "int8" else _most_16bit_dims()
    if not 2 <= t.ndim <= most:
        raise _refuse(api, "mmWeightRef", f"mmWeightRef must have 2 to {most} dims, got shape {t.shape}")
    stored = encode(t._host, Format.FRACTAL_NZ)
    t._host = stored
    t._set_format(int(Format.FRACTAL_NZ), tuple(stored.shape))
    return t


# ---- the size helpers (plain functions, no executor) --------------------------------------------

SIZE_HELPERS = ("aclnnCalculateMatmulWeightSize", "aclnnCalculateMatmulWeightSizeV2")


class SizeHelper:
    """``aa.aclnn.CalculateMatmulWeightSize(tensorShape)`` and
    ``aa.aclnn.CalculateMatmulWeightSizeV2(tensorShape, dataType)``: the elements a matmul
    weight of that shape occupies once stored as FRACTAL_NZ (the last two dims aligned to
    16 and 16 for float16/bfloat16, else to 16 and 32; V1 counts as float16). On the npu
    backend the installed CANN's own function answers (its status as an AclnnError); on the
    numpy backend this formula, with the op_api's refusals (161001 for None; 161002 for a
    rank outside 2..6, and for V2 a zero dim)."""

    name: str
    __name__: str

    def __init__(self, name: str):
        self.name = name
        self.__name__ = name[len("aclnn"):]
        self.__qualname__ = self.__name__

    def __repr__(self) -> str:
        return f"<aclnn size helper {self.name}>"

    def __call__(self, tensorShape: Any, dataType: Any = None) -> int:
        from .cann.constants import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR
        from .errors import AclnnError
        from .tensors import ACL_DTYPES
        v2 = self.name.endswith("V2")
        if tensorShape is None:
            raise AclnnError(ACLNN_ERR_PARAM_NULLPTR, self.name, "tensorShape is NULL", argument="tensorShape")
        try:
            dims = [int(d) for d in tensorShape]
            if any(isinstance(d, bool) for d in tensorShape):
                raise TypeError
        except TypeError:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, self.name, f"expected a sequence of ints, got {tensorShape!r}",
                             argument="tensorShape (const aclIntArray *)") from None
        if v2:
            if dataType is None:
                raise AclnnError(ACLNN_ERR_PARAM_INVALID, self.name, "expected a dtype", argument="dataType")
            try:
                dt = np.dtype(dataType)
                code = int(ACL_DTYPES[dt])
            except (TypeError, KeyError):
                raise AclnnError(ACLNN_ERR_PARAM_INVALID, self.name, f"expected a dtype with an ACL data type, got "
                                 f"{dataType!r}", argument="dataType (aclDataType)") from None
        else:
            dt, code = np.dtype(np.float16), -1
        from .backends import get_backend
        if get_backend() == "npu":
            return self._on_cann(dims, code, v2)
        most = 6 if v2 else _most_16bit_dims()
        if not 2 <= len(dims) <= most or any(d < 0 for d in dims) or (v2 and 0 in dims):
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, self.name, f"tensorShape must have 2 to {most} dims"
                             f"{', none zero' if v2 else ''} and none negative, got {dims}", argument="tensorShape")
        half = dt.itemsize == 2 and dt.kind in "fV"
        *batch, k, n = dims
        return math.prod(batch) * (-(-k // 16) * 16) * (-(-n // (16 if half else 32)) * (16 if half else 32))

    def _on_cann(self, dims: list[int], code: int, v2: bool) -> int:
        import ctypes
        from .backends.npu import runtime
        from .cann.loader import get_cann
        from .errors import AclnnError
        cann = get_cann()
        argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)) if v2 else \
            (ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64))
        fn = cann.op_function(self.name, ctypes.c_int32, argtypes)
        if fn is None:
            raise AclnnError(561003, self.name, "the installed CANN's operator libraries do not export it")
        arr = cann.function("aclCreateIntArray")((ctypes.c_int64 * max(len(dims), 1))(*dims), len(dims))
        if not arr:
            raise AclnnError(561103, "aclCreateIntArray", f"returned NULL for {dims}")
        out = ctypes.c_uint64(0)
        try:
            status = fn(arr, code, ctypes.byref(out)) if v2 else fn(arr, ctypes.byref(out))
        finally:
            cann.function("aclDestroyIntArray")(arr)
        runtime.check(cann, status, self.name)
        return int(out.value)
