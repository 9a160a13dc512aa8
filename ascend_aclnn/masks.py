"""Converting between the Atlas A2/A3 max-pool mask and PyTorch's indices, in pure NumPy.

``max_pool2d_with_mask`` returns, instead of PyTorch's int64 indices, an int8 "mask" of
shape (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32) whose first 4*N*C*Ho*Wo bytes are the
little-endian int32 flat indices ih*W + iw. These helpers need no backend.
"""
from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np
from numpy.typing import NDArray
import numpy.typing as npt

from .reference.max_pool import fill_mask_1x1, mask_shape
from .tensors import DeviceArray, as_host_array, is_torch_tensor, to_torch

__all__ = ["indices_to_mask", "mask_to_indices"]


def _array(value: Any, name: str) -> NDArray[Any]:
    """A mask or indices argument as a NumPy array (a torch tensor or DLPack producer as a view)."""
    try:
        return as_host_array(value)
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None


def _is_array(value: Any) -> bool:
    return isinstance(value, (np.ndarray, DeviceArray)) or is_torch_tensor(value) \
        or hasattr(type(value), "__dlpack__")


def _output_shape(output_shape: Any) -> tuple[int, ...]:
    """The pooled output's shape; an array given in its place (the output itself, say) is
    refused with what to pass instead, unless it is a 1-D integer array of dims."""
    if _is_array(output_shape):
        a = output_shape if isinstance(output_shape, DeviceArray) else _array(output_shape, "output_shape")
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise TypeError(f"output_shape: expected the pooled output's shape (N, C, Ho, Wo) or (C, Ho, Wo), got an "
                            f"array of shape {tuple(a.shape)}; pass its .shape (mask_to_indices(mask, out.shape))")
        output_shape = np.asarray(a).tolist()
    try:
        shape = tuple(int(d) for d in output_shape)
    except (TypeError, ValueError):
        raise TypeError(f"output_shape: expected the pooled output's shape (N, C, Ho, Wo) or (C, Ho, Wo), got "
                        f"{type(output_shape).__name__} {output_shape!r}") from None
    return shape


def _lead_and_out(shape: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(int(d) for d in shape)
    if len(shape) not in (3, 4) or min(shape) < 0:
        raise ValueError(f"expected the pooled output's shape (N, C, Ho, Wo) or (C, Ho, Wo), got {shape}")
    return shape[:-2], shape[-2:]


def _like(result: NDArray[Any], given: Any) -> NDArray[Any]:
    """A torch tensor for a torch argument (results in the kind of the inputs), else NumPy.
    Typed as the NumPy case: torch is never imported here, so its type cannot be named."""
    return cast(NDArray[Any], to_torch(result)) if is_torch_tensor(given) else result


def mask_to_indices(mask: npt.ArrayLike, output_shape: Sequence[int]) -> NDArray[Any]:
    """PyTorch's indices from a mask: int64 flat indices ih*W + iw of shape output_shape
    (the shape of the pooled output), equal to ``torch.max_pool2d_with_indices(...)[1]``
    for the same input and arguments.

    A mask of a 1x1 kernel holds no indices (the NPU writes a bitmask there); the index
    of out[..., oh, ow] is then simply oh*sH*W + ow*sW, and this raises ValueError.
    output_shape is a shape (``out.shape``), not the output array: TypeError says so. A
    torch tensor mask gives a torch tensor."""
    given, mask = mask, _array(mask, "mask")
    lead, (ho, wo) = _lead_and_out(_output_shape(output_shape))
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
    return _like(raw[:4 * count].view("<i4").astype(np.int64).reshape(lead + (ho, wo)), given)


def indices_to_mask(indices: npt.ArrayLike, kernel_size: Sequence[int]) -> NDArray[Any]:
    """The int8 mask ``max_pool2d_with_mask_backward`` accepts, from PyTorch's indices
    (flat ih*W + iw, shape (N, C, Ho, Wo) or (C, Ho, Wo)) and the kernel size ([k] or
    [kH, kW]). The bytes after the int32 prefix are zero. For a 1x1 kernel it gives the
    bitmask the CANN sources write there (unconfirmed on hardware; the NPU's backward reads
    it). A torch tensor of indices gives a torch tensor."""
    given, indices = indices, _array(indices, "indices")
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
        return _like(mask, given)
    if indices.size and (indices.min() < 0 or indices.max() >= 2**31):
        raise ValueError("expected indices in [0, 2**31): flat positions ih*W + iw in the input plane")
    mask.reshape(-1).view("<i4")[:indices.size] = indices.reshape(-1)
    return _like(mask, given)
