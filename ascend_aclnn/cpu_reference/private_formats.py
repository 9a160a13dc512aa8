"""Private-format arguments of raw operators on the CPU reference: decoded into logical
arrays before the reference runs, encoded back after, and refused where the consumers'
op_apis refuse them (161002), so a script that fails on an Atlas host fails on the CPU too."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..formats import PRIVATE, Format, decode, encode, storage_shape

# ---- the CPU reference (numpy backend) ----------------------------------------------------------
#
# A raw call on the numpy backend runs its CPU reference on logical arrays: private inputs are
# decoded, private outputs encoded back into their storage. What the consumers document about
# their private-format arguments is refused here as CANN's op_apis refuse it (161002), so a
# script that fails on an Atlas host fails on the CPU too.

# the dtypes aclnnTransMatmulWeight takes (its op_api)
TRANS_MATMUL_WEIGHT_DTYPES = ("float16", "bfloat16", "int8")

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
    from ..cann.constants import ACLNN_ERR_PARAM_INVALID
    from ..errors import AclnnError
    return AclnnError(ACLNN_ERR_PARAM_INVALID, api + "GetWorkspaceSize", detail, argument=argument)


# The format rules of the described operators' op_apis on what a raw call passes, as the
# simulator models them (native/src/ops): C names whose formats must be equal, and the formats
# allowed (None: any) for the C names checked. A format the CPU reference does not compute (a
# channel-last max pool) is refused rather than computed as channel-first.
_NCL_ND = (int(Format.NCL), int(Format.ND))
_POOL = (int(Format.NCHW), int(Format.ND), int(Format.NCL))
_DESCRIBED_FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...], Optional[tuple[int, ...]]]] = {
    "aclnnReplicationPad2d": (("self", "out"), (), None),
    "aclnnReplicationPad2dBackward": (("gradOutput", "self", "gradInput"), ("gradOutput", "self", "gradInput"), ()),
    "aclnnUpsampleNearestExact1d": ((), ("self", "out"), _NCL_ND),
    "aclnnUpsampleNearestExact1dBackward": (("gradOutput", "out"), ("gradOutput",), _NCL_ND),
    "aclnnMaxPool2dWithMask": (("self", "out"), ("self",), _POOL),
    "aclnnMaxPool2dWithMaskBackward": (("self", "gradOutput", "gradInput"), ("self", "indices"), _POOL),
}


def _check_described_formats(spec: Any, tensors: Sequence[Any], names: Sequence[str]) -> None:
    from ..ops.spec import format_for_rank
    from ..tensors import DeviceArray
    rule = _DESCRIBED_FORMATS.get(spec.aclnn)
    if rule is None or any(t is None for t in tensors):  # their op_apis refuse a NULL first (161001)
        return
    same, checked, allowed = rule
    c_names = {p.name: p.c_name for p in spec.params}
    passed = {}  # what the npu backend hands aclCreateTensor: the tag, else the format of the rank
    for n, t in zip(names, tensors):
        if isinstance(t, DeviceArray) and t._format is not None:
            passed[c_names.get(n, n)] = int(t._format)
        elif t is not None and hasattr(t, "ndim"):
            passed[c_names.get(n, n)] = format_for_rank(t.ndim)

    def name(f: int) -> str:
        return Format(f).name if f in Format._value2member_map_ else str(f)
    given = [(c, passed[c]) for c in same if c in passed]
    if len({f for _, f in given}) > 1:
        raise _refuse(spec.aclnn, given[-1][0], "the formats of " + ", ".join(f"{c} ({name(f)})" for c, f in given) +
                      " must be equal")
    for c in checked:
        f = passed.get(c)
        if f is None:
            continue
        if f in PRIVATE or (allowed is not None and allowed and f not in allowed):
            want = " or ".join(name(a) for a in allowed) if allowed else "a public format"
            raise _refuse(spec.aclnn, c, f"{c}'s format must be {want}, got {name(f)}")


def check_cpu_call(spec: Any, tensors: Sequence[Any], names: Sequence[str]) -> None:
    """The documented constraints on private-format arguments of the operators that take
    them (CANN's op_apis; consumers' notes), as refusals, before the CPU reference runs."""
    from ..tensors import DeviceArray
    api = spec.aclnn
    _check_described_formats(spec, tensors, names)
    arrays: dict[str, Any] = {}
    for n, t in zip(names, tensors):  # a tensor list's members too (GroupedMatmul's weights), as name[i]
        if isinstance(t, DeviceArray):
            arrays[n] = t
        elif isinstance(t, (list, tuple)):
            arrays.update((f"{n}[{i}]", m) for i, m in enumerate(t) if isinstance(m, DeviceArray))
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
        # the A2/A3 branch of hicann/ops-transformer gmm/grouped_matmul/op_host/op_api/aclnn_grouped_matmul.cpp:
        # K and N of an NZ weight divisible by 16 (FLOAT16/BF16), or K by 16 and N by 32 (INT8), with K and N
        # swapped for a transposed weight: by position, the second-to-last dim by 16 and the last by 16 or 32
        for n, t in private.items():
            if t._format != Format.FRACTAL_NZ or len(t.shape) < 2:
                continue
            k, nn = t.shape[-2:]
            if t.dtype.itemsize == 1 and (k % 16 or nn % 32):
                raise _refuse(api, n, f"an int8 FRACTAL_NZ weight needs K divisible by 16 and N by 32, got {t.shape}")
            if t.dtype.itemsize == 2 and (k % 16 or nn % 16):
                raise _refuse(api, n, f"a 16-bit FRACTAL_NZ weight needs K and N divisible by 16, got {t.shape}")


def plain_on_cpu(api: str) -> bool:
    """Whether check_cpu_call and trans_matmul_weight_on_cpu leave a call of ``api`` whose
    arrays all have no private format alone (then its verdict need not be asked per call)."""
    return api not in _NZ_WEIGHT_ONLY and api != "aclnnTransMatmulWeight"


def most_16bit_dims() -> int:
    """The rank limit of a 16-bit weight in aclnnTransMatmulWeight and the V1 size helper: 3
    before CANN 9.0.0 (hicann/ops-math v8.5.0, the oldest public source), 6 from it. The
    release followed on the CPU is the numpy backend's (followed_release())."""
    from ..cann import version
    return 3 if version.at_least(followed_release(), "9.0.0") is False else 6


def followed_release() -> Optional[str]:
    """The CANN release the numpy backend follows where releases differ:
    ASCEND_ACLNN_CANN_VERSION, else the install the loader finds, else None (the newest)."""
    import os
    from ..ops.group_norm import CANN_VERSION_ENV, _installed_release
    release = os.environ.get(CANN_VERSION_ENV, "").strip() or None
    if release is None:
        try:
            release = _installed_release(os.environ.get("ASCEND_HOME_PATH"), os.environ.get("ASCEND_TOOLKIT_HOME"))[0]
        except Exception:  # an unreadable install: the newest behaviour
            release = None
    return release


def trans_matmul_weight_on_cpu(spec: Any, tensors: Sequence[Any]) -> Any:
    """aclnnTransMatmulWeight on the numpy backend: the op_api's checks, then the weight is
    stored as FRACTAL_NZ (C0 of its dtype) in place; NotImplemented for any other call."""
    from ..tensors import DeviceArray
    if spec.aclnn != "aclnnTransMatmulWeight" or len(tensors) != 1:
        return NotImplemented
    t, api = tensors[0], spec.aclnn
    if not isinstance(t, DeviceArray):
        raise _refuse(api, "mmWeightRef", "its storage becomes FRACTAL_NZ, which a NumPy array cannot hold: pass a "
                                          "DeviceArray (ascend_aclnn.to_device)")
    if t.dtype.name not in TRANS_MATMUL_WEIGHT_DTYPES:
        raise _refuse(api, "mmWeightRef", f"dtype must be float16, bfloat16 or int8, got {t.dtype.name}")
    if t._format in PRIVATE:
        raise _refuse(api, "mmWeightRef", f"the format of mmWeightRef should be ND, got {Format(t._format).name}")
    if t.size == 0:
        return t
    most = 6 if t.dtype.name == "int8" else most_16bit_dims()
    if not 2 <= t.ndim <= most:
        raise _refuse(api, "mmWeightRef", f"mmWeightRef must have 2 to {most} dims, got shape {t.shape}")
    stored = encode(t._host, Format.FRACTAL_NZ)
    t._host = stored
    t._set_format(int(Format.FRACTAL_NZ), tuple(stored.shape))
    return t


def matmul_weight_nz_on_cpu(spec: Any, vals: Sequence[Any], tensors: Sequence[Any]) -> Any:
    """aclnnMatmulWeightNz on the numpy backend (after check_cpu_call; ``vals``: the call's
    values, private arrays decoded): its op_api's other checks and the product, written
    into out; NotImplemented for any other call."""
    if spec.aclnn != "aclnnMatmulWeightNz" or len(vals) != 4 or len(tensors) != 3:
        return NotImplemented  # before the imports: every other unplanned raw call passes here
    from ..cann.constants import ACLNN_ERR_PARAM_NULLPTR
    from ..errors import AclnnError
    from ..tensors import DeviceArray
    from .formulas.matmul import matmul_weight_nz
    for name, v in zip(("self", "mat2", "out"), vals):
        if v is None:
            raise AclnnError(ACLNN_ERR_PARAM_NULLPTR, spec.aclnn + "GetWorkspaceSize", f"{name} is NULL",
                             argument=name)
    result = matmul_weight_nz(np.asarray(vals[0]), np.asarray(vals[1]), np.asarray(vals[2]), int(vals[3]))
    out = tensors[2]
    target = np.asarray(out._host if isinstance(out, DeviceArray) else out)  # the same array, written in place
    target[...] = result.astype(target.dtype)
    return out
