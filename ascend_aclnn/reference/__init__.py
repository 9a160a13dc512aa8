"""The golden reference: one plain NumPy function per operator, the math as the Atlas
A2/A3 kernels do it, written to be checked by eye against the operator's documentation.

A module per operator family. Arguments come in the aclnn parameter order without the
outputs; the result is the output, or a tuple of outputs. The kernels' arithmetic is kept
exactly: float32 index arithmetic where they use it, float32 sums in the order the kernel
adds, 16-bit inputs computed in float32 and rounded once. These functions are what the
operator descriptions name as their reference (so what compare, gradcheck and the tests
take as golden); the numpy backend runs faster kernels of the same arithmetic
(ascend_aclnn/backends/numpy/), checked against these bit for bit. Nothing here imports
from the rest of the package: only NumPy, ml_dtypes and this package's own modules.
"""
from __future__ import annotations

from .group_norm import group_norm_swish, group_norm_swish_grad
from .im2col import im2col, im2col_backward
from .max_pool import max_pool2d_with_mask, max_pool2d_with_mask_backward
from .pad import replication_pad2d, replication_pad2d_backward
from .upsample import upsample_nearest_exact1d, upsample_nearest_exact1d_backward

__all__ = ["group_norm_swish", "group_norm_swish_grad", "im2col", "im2col_backward", "max_pool2d_with_mask",
           "max_pool2d_with_mask_backward", "replication_pad2d", "replication_pad2d_backward",
           "upsample_nearest_exact1d", "upsample_nearest_exact1d_backward"]
