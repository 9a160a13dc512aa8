"""Converting between the Atlas A2/A3 max-pool mask and PyTorch's indices, in pure NumPy.

``max_pool2d_with_mask`` returns, instead of PyTorch's int64 indices, an int8 "mask" of
shape (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32) whose first 4*N*C*Ho*Wo bytes are the
little-endian int32 flat indices ih*W + iw. These helpers need no backend.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import numpy.typing as npt

from .reference.max_pool import fill_mask_1x1, mask_shape

__all__ = ["indices_to_mask", "mask_to_indices"]


def _lead_and_out(shape) -> tuple:
    shape = tuple(int(d) for d in shape)
    if len(shape) not in (3, 4) or min(shape) < 0:
        raise ValueError(f"expected the pooled output's shape (N, C, Ho, Wo) or (C, Ho, Wo), got {shape}")
    return shape[:-2], shape[-2:]


def mask_to_indices(mask: npt.ArrayLike, output_shape: Sequence[int]) -> np.ndarray:
    """PyTorch's indices from a mask: int64 flat indices ih*W + iw of shape output_shape
    (the shape of the pooled output), equal to ``torch.max_pool2d_with_indices(...)[1]``
    for the same input and arguments.

    A mask of a 1x1 kernel holds no indices (the NPU writes a bitmask there); the index
    of out[..., oh, ow] is then simply oh*sH*W + ow*sW, and this raises ValueError."""
    mask = np.asarray(mask)
    lead, (ho, wo) = _lead_and_out(output_shape)
    if mask.dtype != np.int8:
        raise ValueError(f"expected an int8 mask, got dtype {mask.dtype}")
    if mask.ndim != len(lead) + 2 or mask.shape[:-2] != lead or \
            mask.shape != mask_shape(lead + (1, 1), (mask.shape[-2], 1), (ho, wo)):
        raise ValueError(f"a mask for an output of shape {lead + (ho, wo)} has shape "
                         f"{lead} + (kH*kW, {mask_shape((1, 1), (1, 1), (ho, wo))[-1]}), got {mask.shape}")
    if mask.shape[-2] == 1:
        raise ValueError("a 1x1 kernel's mask holds no indices (the NPU writes a bitmask for it); the index "
                         "of out[..., oh, ow] is oh*stride_h*W + ow*stride_w")
    count = int(np.prod(lead)) * ho * wo
    raw = np.ascontiguousarray(mask).reshape(-1).view(np.uint8)
    return raw[:4 * count].view("<i4").astype(np.int64).reshape(lead + (ho, wo))


def indices_to_mask(indices: npt.ArrayLike, kernel_size: Sequence[int]) -> np.ndarray:
    """The int8 mask ``max_pool2d_with_mask_backward`` accepts, from PyTorch's indices
    (flat ih*W + iw, shape (N, C, Ho, Wo) or (C, Ho, Wo)) and the kernel size ([k] or
    [kH, kW]). The bytes after the int32 prefix are zero. For a 1x1 kernel it gives the
    bitmask the NPU writes there (the backward does not read it)."""
    indices = np.asarray(indices)
    lead, (ho, wo) = _lead_and_out(indices.shape)
    if indices.dtype.kind not in "iu":
        raise ValueError(f"expected integer indices, got dtype {indices.dtype}")
    kernel = [int(k) for k in kernel_size]
    if len(kernel) not in (1, 2) or min(kernel) <= 0:
        raise ValueError(f"expected kernel_size [k] or [kH, kW] with positive values, got {list(kernel_size)}")
    kh, kw = kernel[0], kernel[-1]
    mask = np.zeros(mask_shape(lead + (1, 1), (kh, kw), (ho, wo)), np.int8)
    if kh * kw == 1:
        fill_mask_1x1(mask, lead[0] if len(lead) == 2 else 1, lead[-1], ho * wo)
        return mask
    if indices.size and (indices.min() < 0 or indices.max() >= 2**31):
        raise ValueError("expected indices in [0, 2**31): flat positions ih*W + iw in the input plane")
    mask.reshape(-1).view("<i4")[:indices.size] = indices.reshape(-1)
    return mask
