"""aclnnNpuFormatCast (CANN 8.5.0 on): a tensor copied into another data format.

On logical arrays a format cast is the identity: the runner decodes a private input and
encodes a private output (docs/formats.md). A raw call on the numpy backend does not reach
this formula: ascend_aclnn/cpu_reference/npu_format_cast.py runs it first, with the op_api's
checks on the formats passed, which a logical array no longer carries. The formula gives
the operator its parameter list where no installed header declares it, and compare its
golden.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ._common import Array, Formula, _f

__all__ = ["FORMULAS"]


def npu_format_cast(srcTensor: Array) -> Array:
    """dstTensor holds srcTensor's values, in dstTensor's format."""
    out: Array = np.array(srcTensor, copy=True)
    return out


FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnNpuFormatCast", "const aclTensor *srcTensor, aclTensor *dstTensor", npu_format_cast,
       "dstTensor = srcTensor, stored in dstTensor's format; hicann/ops-math "
       "conversion/npu_format_cast/docs/aclnnNpuFormatCast.md"),
])
