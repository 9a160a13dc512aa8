"""Layer 4a: the NumPy reference, the bottom math layer.

One plain function per operator, a module per operator family, following the Atlas
A2/A3 kernels where they differ from PyTorch. Arguments come in the aclnn parameter
order without the outputs; arrays are plain NumPy arrays. 16-bit inputs are computed in
float32 and rounded once. Nothing here imports from the rest of the package: the math
stands on its own and can be read (and tested) without any binding machinery.
"""
from __future__ import annotations

from .max_pool import max_pool2d_with_mask, max_pool2d_with_mask_backward
from .upsample import upsample_nearest_exact1d, upsample_nearest_exact1d_backward

__all__ = ["max_pool2d_with_mask", "max_pool2d_with_mask_backward", "upsample_nearest_exact1d",
           "upsample_nearest_exact1d_backward"]
