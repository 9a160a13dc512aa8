"""Layer 4a: the NumPy reference, the bottom math layer.

One plain function per operator, a module per operator family, following the Atlas
A2/A3 kernels where they differ from PyTorch. Arguments come in the aclnn parameter
order without the outputs; arrays are plain NumPy arrays. 16-bit inputs are computed in
float32 and rounded once. Nothing here imports from the rest of the package: the math
stands on its own and can be read (and tested) without any binding machinery.
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
