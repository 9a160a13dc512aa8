"""CANN's plain size helpers on the CPU: what each answers (its op_api's formula and
refusals) on the numpy backend, by name. Their C signatures are cann/raw_operators.py's
``size_helper`` rows; ``ascend_aclnn.aclnn`` reads both and names none of them."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from ..cann.constants import ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_PARAM_INVALID
from ..errors import AclnnError
from ..tensors import ACL_DTYPES
from .soc import SOC_NAME_ENV, soc_name

__all__ = ["FORMULAS", "conv_weight_size", "matmul_weight_size"]

# The SoC the numpy backend follows for what CANN gives one SoC only: an Atlas A2 unless this
# names another (as aclrtGetSocName spells it, e.g. Ascend310P3).


def matmul_weight_size(api: str, dims: list[int], dtype: np.dtype[Any], v2: bool) -> int:
    """The elements a matmul weight of shape dims occupies as FRACTAL_NZ: the last two dims
    aligned to 16 and 16 for a 16-bit dtype, else to 16 and 32 (V1 counts as float16)."""
    from .private_formats import most_16bit_dims
    most = 6 if v2 else most_16bit_dims()
    if not 2 <= len(dims) <= most or any(d < 0 for d in dims) or (v2 and 0 in dims):
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, f"tensorShape must have 2 to {most} dims"
                         f"{', none zero' if v2 else ''} and none negative, got {dims}", argument="tensorShape")
    half = dtype.itemsize == 2 and dtype.kind in "fV"
    *batch, k, n = dims
    return math.prod(batch) * (-(-k // 16) * 16) * (-(-n // (16 if half else 32)) * (16 if half else 32))


def conv_weight_size(api: str, dims: list[int], transposed: bool, groups: int, dtype: np.dtype[Any]) -> int:
    """aclnnCalculateConvolutionWeightSize as its op_api (hicann/ops-math trans_data)
    answers, on the SoC the numpy backend follows: the element count of TransData's
    FRACTAL_Z storage of an NCHW float16 weight (metadef's GetFractalZShape, C0 16)."""
    def refuse(detail: str, status: int = ACLNN_ERR_PARAM_INVALID) -> AclnnError:
        return AclnnError(status, api, detail, argument="tensorShape")
    if len(dims) != 4:
        raise refuse(f"only a 4-dim tensorShape is supported, got {dims}")
    if transposed:
        raise refuse("only a non-transposed convolution is supported, transposed is True")
    if groups == 0:
        raise refuse("groups must be larger than 0, got 0")
    soc = soc_name()
    if not soc.startswith("Ascend310P"):
        raise refuse(f"only Ascend310P (Atlas inference products) is supported, the SoC is {soc} (the numpy backend "
                     f"follows {SOC_NAME_ENV})")
    code = int(ACL_DTYPES[dtype])
    if dtype != np.float16:
        raise refuse(f"only float16 is supported, got aclDataType {code}")
    for i, d in enumerate(dims):  # one pass: a zero before a negative dim answers 0
        if d < 0:
            raise refuse(f"tensorShape {dims}: dim {i} is negative")
        if d == 0:
            return 0
    if groups < 0:  # let through to TransData by the op_api, which the public sources do not settle
        raise refuse(f"groups {groups} is negative: what CANN counts for it is not known here")
    if groups > 65535:
        raise refuse(f"TransData: groups {groups} is larger than 65535", ACLNN_ERR_INNER_NULLPTR)
    n, c, h, w = dims
    g, c0 = 1, 16
    if groups > 1 and n >= groups:  # groups merged e at a time, so each fractal fills
        n //= groups
        e = min(math.lcm(c0 // math.gcd(c, c0), 16 // math.gcd(n, 16)), groups)
        g, c, n = -(-groups // e), c * e, n * e
    size = g * -(-c // c0) * h * w * -(-n // 16) * 16 * c0
    if size >= 2 ** 63:
        raise refuse(f"TransData: the FRACTAL_Z storage of {dims} overflows int64", ACLNN_ERR_INNER_NULLPTR)
    return size


# By name: (api, tensorShape as ints, the other arguments as converted: a dtype, bool or int).
FORMULAS: Mapping[str, Callable[..., int]] = {
    "aclnnCalculateMatmulWeightSize": lambda api, dims: matmul_weight_size(api, dims, np.dtype(np.float16), False),
    "aclnnCalculateMatmulWeightSizeV2": lambda api, dims, dtype: matmul_weight_size(api, dims, dtype, True),
    "aclnnCalculateConvolutionWeightSize": conv_weight_size,
}
