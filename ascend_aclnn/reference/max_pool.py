"""MaxPool2dWithMask and its backward, following the Atlas A2/A3 kernels.

Tensors are (N, C, H, W) or (C, H, W). The "mask" is the A2/A3 one: an int8 tensor of
shape (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32) whose first 4*N*C*Ho*Wo bytes are
little-endian int32 flat indices ih*W + iw into the unpadded input plane, in
(n, c, oh, ow) order. The NPU never writes the rest; this reference returns zeros there.

Window semantics (PyTorch's, and the kernel's scan in row-major order, where a larger
value or a NaN takes over): positions outside the input do not take part; among equal
maxima the first wins (+0.0 and -0.0 are equal); a window holding NaN picks its last NaN;
a window whose values are all -inf picks its first in-input position. The output is the
input element the mask names, bit for bit. (The NPU documents NaN and -inf inputs as
unsupported.)
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import math

import numpy as np
from numpy.typing import NDArray

from ._faults import KernelFault

f32 = np.float32


def _pair(values: Sequence[int], fill: Optional[tuple[int, int]] = None) -> tuple[int, int]:
    """A length-1 array applies to both axes; an empty one means `fill` (the stride)."""
    if len(values) == 0:
        assert fill is not None, "an empty pair needs its fill"
        return fill
    return (int(values[0]), int(values[-1]))


def pool_params(kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int]
                ) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(kH, kW), (sH, sW), (pH, pW): a stride of length 0 is the kernel."""
    k = _pair(kernel_size)
    return k, _pair(stride, k), _pair(padding)


def pool_out_size(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    """Output length along one axis (dilation 1), with ceil mode's correction: a last
    window that would start in the right padding is dropped."""
    out = (size + 2 * p - (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def mask_shape(input_shape: Sequence[int], kernel_hw: Sequence[int], out_hw: Sequence[int]) -> tuple[int, ...]:
    """(N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32), without N for a 3-D input."""
    width = (math.ceil(out_hw[0] * out_hw[1] / 16) + 1) * 32
    return tuple(input_shape[:-2]) + (kernel_hw[0] * kernel_hw[1], width)


def fill_mask_1x1(mask: NDArray[Any], n: int, c: int, positions: int) -> None:
    """A 1x1 kernel takes another path on the NPU (and the int32 prefix would not fit in
    the mask: 4*Ho*Wo bytes per plane against about 2*Ho*Wo). Its bitmask has one uint16
    word per output position and group of 16 channels, every bit set (each channel's max is
    its only element): for each of the N*ceil(C/16) leading rows of the mask, the first
    ceil(Ho*Wo/16)*32 bytes are 0xFF; the rest is never written. The backward never reads
    it (it is then a strided copy)."""
    rows = mask.reshape(-1, mask.shape[-1])[:n * -(-c // 16)]
    rows[:, :32 * -(-positions // 16)] = -1


def mask_int32_prefix(mask: NDArray[Any], count: int) -> NDArray[Any]:
    """The first `count` little-endian int32 values stored in the mask's bytes."""
    raw = np.ascontiguousarray(mask).reshape(-1).view(np.uint8)
    if raw.size < 4 * count:
        raise ValueError(f"the mask holds {raw.size} bytes, fewer than the {4 * count} of its "
                         f"int32 index prefix")
    return raw[:4 * count].view("<i4")


def _window(n_out: int, k: int, s: int, p: int, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
    """Along one axis: the input position of each (output, window offset), and whether
    it is inside the input; both (n_out, k)."""
    pos = (np.arange(n_out) * s - p)[:, None] + np.arange(k)
    return np.clip(pos, 0, size - 1), (pos >= 0) & (pos < size)


def max_pool2d_with_mask(input: NDArray[Any], kernel_size: Sequence[int], stride: Sequence[int],
                         padding: Sequence[int], dilation: Sequence[int],
                         ceil_mode: bool) -> tuple[NDArray[Any], NDArray[Any]]:
    """out[n, c, oh, ow] = input[n, c].flat[idx], idx = the flat position ih*W + iw the
    kernel's scan picks in the window oh*sH - pH + [0, kH) x ow*sW - pW + [0, kW);
    mask = idx as int32 bytes, zero tail (a 1x1 kernel: see fill_mask_1x1)."""
    (kh, kw), (sh, sw), (ph, pw) = pool_params(kernel_size, stride, padding)
    h, w = input.shape[-2:]
    ho, wo = pool_out_size(h, kh, sh, ph, ceil_mode), pool_out_size(w, kw, sw, pw, ceil_mode)
    ih, h_in = _window(ho, kh, sh, ph, h)
    iw, w_in = _window(wo, kw, sw, pw, w)
    # (oh, ow, window offset in row-major order): its flat input position, and if inside
    where = (ih[:, None, :, None] * w + iw[None, :, None, :]).reshape(ho, wo, kh * kw)
    inside = (h_in[:, None, :, None] & w_in[None, :, None, :]).reshape(ho, wo, kh * kw)
    planes = input.reshape(-1, h * w)
    v = planes[:, where].astype(f32)  # (planes, Ho, Wo, kH*kW)
    best = np.where(inside, v, -np.inf).max(axis=-1, keepdims=True)
    first_max = np.argmax(inside & (v == best), axis=-1)  # all -inf: the first inside position
    nan = np.isnan(v) & inside
    last_nan = kh * kw - 1 - np.argmax(nan[..., ::-1], axis=-1)
    pick = np.where(nan.any(axis=-1), last_nan, first_max)
    idx = np.take_along_axis(np.broadcast_to(where, v.shape), pick[..., None], axis=-1)[..., 0]
    out = np.take_along_axis(planes, idx.reshape(len(planes), ho * wo), axis=-1)
    mask = np.zeros(mask_shape(input.shape, (kh, kw), (ho, wo)), np.int8)
    if kh * kw == 1:  # the NPU's own bytes for this case
        lead = (1,) + input.shape[:-2] if input.ndim == 3 else input.shape[:-2]
        fill_mask_1x1(mask, lead[0], lead[1], ho * wo)
    else:
        mask.reshape(-1).view("<i4")[:idx.size] = idx.reshape(-1)
    return out.reshape(input.shape[:-2] + (ho, wo)), mask


def max_pool2d_with_mask_backward(grad_output: NDArray[Any], input: NDArray[Any], mask: NDArray[Any],
                                  kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                                  dilation: Sequence[int], ceil_mode: bool) -> NDArray[Any]:
    """grad_input = zeros(input.shape); grad_input[n, c].flat[idx] += grad_output[n, c, oh, ow]
    with idx the mask's int32 prefix, in (n, c, oh, ow) order, summed in float32 and
    rounded once. For a 1x1 kernel the NPU ignores the mask (its layout differs there):
    grad_input[..., oh*sH, ow*sW] = grad_output."""
    (kh, kw), (sh, sw), _ = pool_params(kernel_size, stride, padding)
    h, w = input.shape[-2:]
    ho, wo = grad_output.shape[-2:]
    if kh * kw == 1:
        grad_input = np.zeros(input.shape, grad_output.dtype)
        grad_input[..., ::sh, ::sw][..., :ho, :wo] = grad_output
        return grad_input
    planes = math.prod(input.shape[:-2])
    idx = mask_int32_prefix(mask, planes * ho * wo).reshape(planes, ho * wo)
    bad = idx[(idx < 0) | (idx >= h * w)]
    if bad.size:
        raise KernelFault(f"the mask holds the index {bad[0]}, outside the {h}x{w} input plane: it "
                          f"does not come from max_pool2d_with_mask with these arguments")
    total = np.zeros((planes, h * w), f32)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN sums, silently, as on the device
        np.add.at(total, (np.arange(planes)[:, None], idx), grad_output.reshape(planes, ho * wo).astype(f32))
        return total.reshape(input.shape).astype(grad_output.dtype)
