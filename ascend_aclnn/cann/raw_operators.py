"""What the generic code must know about some undescribed (raw) operators, as data.

A described operator carries its needs on its description (ops/spec.py: OpSpec); a raw one
is known only from its header, which does not say everything a binding needs. Each row here
is one such fact about one operator, with where it comes from, and the code that acts on it
(the npu backend's handles, the numpy backend's runner) reads the row, never the name.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional

__all__ = ["RawOperator", "FACTS", "facts"]


@dataclass(frozen=True)
class RawOperator:
    # The operator may store the tensor it writes in place (its ...Ref parameter) in a
    # private layout larger than the array: the plain function of the same CANN that counts
    # that layout's elements, called (const aclIntArray *shape, aclDataType, uint64_t *count).
    # The npu backend moves the tensor to a block of that size before the launch.
    reformat_count: str = ""
    # A plain function of CANN (no executor, no GetWorkspaceSize), called (const aclIntArray
    # *tensorShape, <these (name, C type)>, uint64_t *size): aa.aclnn calls it as a size
    # helper; cpu_reference/size_helpers.py answers for it on the numpy backend.
    size_helper: Optional[tuple[tuple[str, str], ...]] = None
    # Another plain function of CANN, bound by hand in this package: "<module>:<class>" under
    # ascend_aclnn, whose instance aa.aclnn returns for it.
    binding: str = ""
    source: str = ""


FACTS: Mapping[str, RawOperator] = MappingProxyType({
    "aclnnTransMatmulWeight": RawOperator(
        reformat_count="aclnnCalculateMatmulWeightSizeV2",
        source="aclnn_trans_matmul_weight.h: mmWeightRef becomes FRACTAL_NZ in place, its size from "
               "aclnnCalculateMatmulWeightSizeV2"),
    "aclnnCalculateMatmulWeightSize": RawOperator(
        size_helper=(), source="aclnn_trans_matmul_weight.h (a float16 weight's count)"),
    "aclnnCalculateMatmulWeightSizeV2": RawOperator(
        size_helper=(("dataType", "aclDataType"),), source="aclnn_trans_matmul_weight.h"),
    "aclnnCalculateConvolutionWeightSize": RawOperator(
        size_helper=(("transposed", "bool"), ("groups", "int64_t"), ("dataType", "aclDataType")),
        source="aclnn_trans_convolution_weight.h"),
    "aclnnNpuFormatCastCalculateSizeAndFormat": RawOperator(
        binding="device_formats:SizeAndFormat",
        source="aclnn_npu_format_cast.h (CANN 8.5.0 on): the storage shape and format of a cast, from a tensor"),
})

_NONE = RawOperator()


def facts(name: str) -> RawOperator:
    """The facts about operator ``name`` (all empty for one without a row)."""
    return FACTS.get(name, _NONE)
