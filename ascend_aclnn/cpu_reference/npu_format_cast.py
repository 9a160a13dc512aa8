"""aclnnNpuFormatCast and aclnnNpuFormatCastCalculateSizeAndFormat on the CPU: the same
checks, statuses and results as the simulator's model (native/src/ops/npu_format_cast.c)
of the Atlas A2/A3 branch of hicann/ops-math's op_api (conversion/npu_format_cast,
master c41933244), so the numpy backend fails where an Atlas host would.

CANN has them from 8.5.0 on (hicann/ops-math's v8.5.0 tag is the first with the header);
the release followed is the numpy backend's: ASCEND_ACLNN_CANN_VERSION, else the install
the loader finds, else the newest. Before 8.5.0 they are refused as the npu backend refuses
them where the installed CANN lacks them: the operator with CannLoadError (its symbols are
in no operator library), the size function with 561003 (aclnn.SizeHelper's convention)."""
from __future__ import annotations

import math
import os
from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from ..cann.constants import (ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_PARAM_INVALID,
                              ACLNN_ERR_RUNTIME_ERROR)
from ..errors import AclnnError, CannLoadError
from ..formats import Format, decode, encode

OPERATOR = "aclnnNpuFormatCast"
SIZE_FUNCTION = "aclnnNpuFormatCastCalculateSizeAndFormat"
# its parameter list (hicann/ops-math's header), for the numpy backend where no installed header declares it
PARAMS = "const aclTensor *srcTensor, aclTensor *dstTensor"
HEADER = "<CPU model of aclnnNpuFormatCast's op_api (CANN 8.5.0 on)>"
FIRST_RELEASE = "8.5.0"  # hicann/ops-math v8.5.0: the first tag with aclnn_npu_format_cast.h
NOT_EXPORTED = 561003  # what the package raises for a function the loaded CANN lacks (aclnn.SizeHelper's)
DHWCN = 31  # ge::FORMAT_DHWCN, which no aclFormat names
NZ_C0_VARIANTS = (50, 51, 52, 53, 54)  # FRACTAL_NZ_C0_16, _C0_32, _C0_2, _C0_4, _C0_8

# The dtypes the A2/A3 branch casts (ASCEND910B_DTYPE_SUPPORT_LIST), and those its size
# function takes (WEIGHT_DTYPE_SUPPORT_LIST), as aclDataType codes.
A2_DTYPES = (2, 4, 0, 1, 27, 3, 8)  # INT8, UINT8, FLOAT, FLOAT16, BF16, INT32, UINT32
SIZE_DTYPES = A2_DTYPES + (36, 34, 40, 41)  # + FLOAT8_E4M3FN, HIFLOAT8, FLOAT4_E2M1, FLOAT4_E1M2
_BYTES = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1, 27: 2, 34: 1, 35: 1, 36: 1,
          37: 1}  # sizes of the aclDataTypes the simulator knows (aclsim_dtype_size)


class Pair(NamedTuple):
    """One format pair of the op_api's table (either way round): the public format, the
    private one, and where each canonical axis (N, C, H, W / N, C, D, H, W) sits in the
    public dims (empty for FRACTAL_NZ, which takes (..., M, N) of any public rank)."""
    public: int
    private: Format
    axes: tuple[int, ...]


PAIRS: tuple[Pair, ...] = (
    Pair(int(Format.ND), Format.FRACTAL_NZ, ()), Pair(int(Format.NCL), Format.FRACTAL_NZ, ()),
    Pair(int(Format.NCHW), Format.FRACTAL_NZ, ()), Pair(int(Format.NCDHW), Format.FRACTAL_NZ, ()),
    Pair(int(Format.NCDHW), Format.NDC1HWC0, (0, 1, 2, 3, 4)), Pair(int(Format.NCDHW), Format.FRACTAL_Z_3D, (0, 1, 2, 3, 4)),
    Pair(DHWCN, Format.FRACTAL_Z_3D, (4, 3, 0, 1, 2)), Pair(int(Format.NCHW), Format.NC1HWC0, (0, 1, 2, 3)),
    Pair(int(Format.NHWC), Format.NC1HWC0, (0, 3, 1, 2)), Pair(int(Format.NCHW), Format.FRACTAL_Z, (0, 1, 2, 3)),
    Pair(int(Format.HWCN), Format.FRACTAL_Z, (3, 2, 0, 1)), Pair(int(Format.NDHWC), Format.NDC1HWC0, (0, 4, 1, 2, 3)),
)


def find_pair(public: int, private: int) -> Optional[Pair]:
    return next((p for p in PAIRS if p.public == public and int(p.private) == private), None)


def _name(f: int) -> str:
    return "DHWCN" if f == DHWCN else Format(f).name if f in Format._value2member_map_ else str(f)


def release_has_it() -> bool:
    """Whether the release the numpy backend follows has aclnnNpuFormatCast."""
    from ..cann import version
    from .private_formats import followed_release
    return version.at_least(followed_release(), FIRST_RELEASE) is not False


def _require_release(api: str) -> None:
    if release_has_it():
        return
    why = (f"the CANN release the numpy backend follows (ASCEND_ACLNN_CANN_VERSION, else the install found) has no "
           f"{api}: it is first in CANN {FIRST_RELEASE}")
    if api == OPERATOR:
        raise CannLoadError(f"{OPERATOR}GetWorkspaceSize / {OPERATOR} not found: {why}")
    raise AclnnError(NOT_EXPORTED, api, why)


def _check_soc(api: str) -> None:
    from .soc import SOC_NAME_ENV, soc_name
    soc = soc_name()
    if soc.startswith(("Ascend910B", "Ascend910_93")):
        return
    if soc.startswith(("Ascend950", "Ascend910_95")):
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, f"the SoC is {soc}, whose branches (IsRegBase) are not "
                                                       "modelled", argument="srcTensor")
    raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, f"Only support Ascend950/ASCEND910_93/ASCEND910B, the SoC is {soc} "
                                                   f"(the numpy backend follows {SOC_NAME_ENV})", argument="srcTensor")


class Passed(NamedTuple):
    """A tensor as the npu backend hands it to aclCreateTensor: view shape, dtype code,
    format (the tag, else the rank's) and storage dims (a private array's, else one dim of
    all its elements, the package's convention for a public one)."""
    shape: tuple[int, ...]
    dtype: int
    format: int
    storage: tuple[int, ...]


def passed(t: Any) -> Passed:
    from ..ops.spec import format_for_rank
    from ..tensors import ACL_DTYPES, DeviceArray
    shape = tuple(int(d) for d in t.shape)
    fmt = int(t._format) if isinstance(t, DeviceArray) and t._format is not None else format_for_rank(len(shape))
    storage = tuple(t._storage) if isinstance(t, DeviceArray) and t._storage is not None else (math.prod(shape),)
    return Passed(shape, int(ACL_DTYPES[np.dtype(t.dtype)]), fmt, storage)


def _rank(p: Pair) -> int:
    return len(p.axes) if p.axes else 2


def _canonical(p: Pair, shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(shape) if not p.axes else tuple(shape[a] for a in p.axes)


def storage_of(p: Pair, shape: Sequence[int], c0: int) -> tuple[int, ...]:
    """The private storage of a public array of ``shape`` (in the pair's public order)."""
    canon = _canonical(p, shape)
    f = p.private

    def cd(a: int, b: int) -> int:
        return -(-a // b)
    if f is Format.FRACTAL_NZ:
        *batch, m, n = canon
        return (*batch, cd(n, c0), cd(m, 16), 16, c0)
    n, c, *sp = canon
    c1 = cd(c, c0)
    if f is Format.NC1HWC0:
        return (n, c1, sp[0], sp[1], c0)
    if f is Format.FRACTAL_Z:
        return (c1 * sp[0] * sp[1], cd(n, 16), 16, c0)
    if f is Format.NDC1HWC0:
        return (n, sp[0], c1, sp[1], sp[2], c0)
    return (sp[0] * c1 * sp[1] * sp[2], cd(n, 16), 16, c0)


def _refuse(api: str, argument: str, detail: str, status: int = ACLNN_ERR_PARAM_INVALID) -> AclnnError:
    return AclnnError(status, api, detail, argument=argument)


class Plan(NamedTuple):
    pair: Pair
    to_private: bool
    c0: int


def check_phase1(src: Any, dst: Any) -> Optional[Plan]:
    """Phase 1's checks on what the npu backend would pass (None for NULL); the plan, or
    None when CANN's phase 1 returns 0 without an executor (an unsupported pair)."""
    api = OPERATOR + "GetWorkspaceSize"
    _require_release(OPERATOR)
    _check_soc(api)
    if src is None:
        raise _refuse(api, "srcTensor", "srcTensor is NULL", ACLNN_ERR_INNER_NULLPTR)
    if dst is None:
        raise _refuse(api, "dstTensor", "dstTensor is NULL", ACLNN_ERR_INNER_NULLPTR)
    s, d = passed(src), passed(dst)
    for name, t in (("srcTensor", s), ("dstTensor", d)):
        if t.dtype not in A2_DTYPES:
            raise _refuse(api, name, f"{name} dtype must be INT8, UINT8, FLOAT, FLOAT16, BF16, INT32 or UINT32, got "
                                     f"aclDataType {t.dtype}")
    pair = find_pair(s.format, d.format)
    to_private = pair is not None
    pair = pair or find_pair(d.format, s.format)
    if pair is None:
        return None
    if s.dtype != d.dtype:
        raise _refuse(api, "dstTensor", f"dstTensor dtype {d.dtype} must equal srcTensor dtype {s.dtype}")
    pub, priv = (s, d) if to_private else (d, s)
    rank = _rank(pair)
    if (len(pub.shape) < 2) if not pair.axes else len(pub.shape) != rank:
        raise _refuse(api, "srcTensor" if to_private else "dstTensor",
                      f"a {_name(pair.public)} tensor cast to or from {pair.private.name} must have "
                      f"{'at least ' if not pair.axes else ''}{rank} dims, got {pub.shape} (not modelled otherwise)")
    if s.shape != d.shape:
        raise _refuse(api, "dstTensor", f"the view shapes of srcTensor {s.shape} and dstTensor {d.shape} must be "
                                        "equal (the op_api overwrites one with the other: not modelled)")
    size = _BYTES[s.dtype]
    special = size >= 4 and len(d.storage) > 0 and d.storage[-1] == 16  # TransDataSpecial
    c0 = 16 if special else 32 // size
    want = storage_of(pair, pub.shape, c0)
    if priv.storage != want:
        raise _refuse(api, "dstTensor" if to_private else "srcTensor",
                      f"the {pair.private.name} storage shape must be {want} for view {pub.shape} (C0 {c0}), got "
                      f"{priv.storage}")
    return Plan(pair, to_private, c0)


def _logical(t: Any) -> Any:
    """The array a tensor's bytes hold: a DeviceArray's stored elements (storage shape for
    a private one), or a NumPy array itself."""
    from ..tensors import DeviceArray
    return t._host if isinstance(t, DeviceArray) else np.asarray(t)


def run_on_cpu(spec: Any, tensors: Sequence[Any]) -> Any:
    """aclnnNpuFormatCast on the numpy backend; NotImplemented for any other operator."""
    if spec.aclnn != OPERATOR or len(tensors) != 2:
        return NotImplemented
    src, dst = tensors
    plan = check_phase1(src, dst)
    if plan is None:  # CANN's phase 1 returned 0 with no executor: its phase 2 refuses that
        s, d = passed(src), passed(dst)
        raise AclnnError(ACLNN_ERR_INNER_NULLPTR, OPERATOR,
                         f"executor is NULL: phase 1 returned 0 without one, as CANN's op_api does for the unsupported "
                         f"format transformation from [{_name(s.format)}] to [{_name(d.format)}]",
                         argument="dstTensor")
    if math.prod(src.shape) == 0:
        return dst
    pair, stored, out = plan.pair, _logical(src), _logical(dst)
    axes = pair.axes
    if plan.to_private:
        canon = stored if not axes else np.transpose(stored, axes)
        out[...] = encode(canon, pair.private, plan.c0).reshape(out.shape)
    else:
        canon_shape = _canonical(pair, dst.shape)
        canon = decode(stored.reshape(storage_of(pair, dst.shape, plan.c0)), pair.private, canon_shape, plan.c0)
        out[...] = canon if not axes else np.transpose(canon, np.argsort(axes))
    return dst


def calculate_size_and_format(src: Any, dst_format: int, additional: int) -> tuple[tuple[int, ...], int]:
    """The op_api's aclnnNpuFormatCastCalculateSizeAndFormat on the CPU (see
    native/src/ops/npu_format_cast.c for the order): (dstShape, actualFormat)."""
    api = SIZE_FUNCTION
    _require_release(api)
    _check_soc(api)
    if src is None:
        raise _refuse(api, "srcTensor", "srcTensor is nullptr.")
    s = passed(src)
    if s.dtype not in SIZE_DTYPES:
        raise _refuse(api, "srcTensor", f"srcTensor dtype aclDataType {s.dtype} is not supported")
    if additional == -1:
        additional = s.dtype
    size = _BYTES.get(additional, 0)
    if not size:
        raise _refuse(api, "additionalDtype", f"additionalDtype {additional} has no size known here (the op_api "
                                              "divides 32 bytes by it)")
    c0, f, empty = 32 // size, s.format, 0 in s.shape

    def fallback() -> None:
        if empty:
            raise _refuse(api, "srcTensor", "aclnn empty tensor is not supported, fallback aclop.",
                          ACLNN_ERR_RUNTIME_ERROR)
    nz = int(Format.FRACTAL_NZ)
    if dst_format == nz and (f in (int(Format.ND), int(Format.NCL)) or
                             (additional == s.dtype and f in (int(Format.NCHW), int(Format.NCDHW)))):
        fallback()
        if len(s.shape) < 2:
            raise _refuse(api, "srcTensor", f"srcTensor {s.shape} has fewer than 2 dims (not modelled)")
        return storage_of(PAIRS[0], s.shape, c0), nz
    if f in NZ_C0_VARIANTS and dst_format == int(Format.ND):
        raise _refuse(api, "srcTensor", f"srcTensor's format must be FORMAT_FRACTAL_NZ, got {f}")
    if f == nz and dst_format == int(Format.ND):
        fallback()
        return s.shape, int(Format.ND)
    p = find_pair(f, dst_format)
    if p is not None and p.axes:
        fallback()
        if len(s.shape) != len(p.axes):
            raise _refuse(api, "srcTensor", f"a {_name(f)} srcTensor must have {len(p.axes)} dims, got {s.shape} "
                                            "(not modelled otherwise)")
        return storage_of(p, s.shape, c0), dst_format
    p = None if dst_format == int(Format.ND) else find_pair(dst_format, f)
    if p is not None and p.axes:
        fallback()
        if len(s.shape) != len(p.axes):
            raise _refuse(api, "srcTensor", f"The ViewShape dim of srcTensor must be {len(p.axes)} when converting to "
                                            f"{_name(dst_format)}, fallback to aclop.", ACLNN_ERR_RUNTIME_ERROR)
        v = s.shape
        return ((v[0], v[3], v[1], v[2]) if dst_format == int(Format.NHWC) else v), dst_format
    raise _refuse(api, "dstFormat", f"{api} unsupported format transformation ({_name(f)} to {_name(dst_format)})",
                  ACLNN_ERR_RUNTIME_ERROR)


__all__ = ["A2_DTYPES", "FIRST_RELEASE", "OPERATOR", "PAIRS", "SIZE_FUNCTION",
           "calculate_size_and_format", "check_phase1", "find_pair", "release_has_it", "run_on_cpu", "storage_of"]
