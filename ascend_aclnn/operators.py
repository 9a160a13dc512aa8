"""The operator functions.

GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
do not edit by hand.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .api import call
from .ops import SPECS
from .tensors import ArrayLike


_UPSAMPLE_NEAREST_EXACT1D_BACKWARD = SPECS["upsample_nearest_exact1d_backward"]


def upsample_nearest_exact1d_backward(
    grad_output: ArrayLike,
    output_size: Sequence[int],
    input_size: Sequence[int],
    scales: float = 0.0,
    *,
    out: Optional[ArrayLike] = None,
) -> ArrayLike:
    """Gradient of upsample_nearest_exact1d: sums grad_output back onto the input positions.

    Calls aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize +
    aclnnUpsampleNearestExact1dBackward.

    Parameters
    ----------
    grad_output : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCL)
        gradient of the forward output, (N, C, L_out) (aclnn parameter ``gradOutput``)
    output_size : sequence of int (aclIntArray)
        [L_out], the forward output length (checked for length only) (aclnn parameter
        ``outputSize``)
    input_size : sequence of int (aclIntArray)
        [N, C, L_in], the forward input shape (aclnn parameter ``inputSize``)
    scales : double (scales), default 0.0
        PyTorch's forward scale factor, about L_out/L_in; 0.0 means not given, and the sizes
        decide (aclnn parameter ``scales``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCL)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : gradient of the forward input, shape input_size
        NumPy arrays for NumPy inputs; DeviceArrays (not synchronised) when any input is a
        DeviceArray.

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    Follows the Atlas A2/A3 kernel: float32 interval arithmetic, which differs from PyTorch
    at exact ties, and gradient at positions past the last input interval is dropped when
    scales disagrees with the sizes. float16/bfloat16 accumulate in float32.
    """
    return call(_UPSAMPLE_NEAREST_EXACT1D_BACKWARD, grad_output, output_size, input_size, scales, out=out)


_UPSAMPLE_NEAREST_EXACT1D = SPECS["upsample_nearest_exact1d"]


def upsample_nearest_exact1d(
    input: ArrayLike,
    output_size: Sequence[int],
    scales: float = 0.0,
    *,
    out: Optional[ArrayLike] = None,
) -> ArrayLike:
    """Nearest-exact 1-D upsampling (PyTorch's 'nearest-exact' mode) of (N, C, L_in) to (N, C,
    L_out).

    Calls aclnnUpsampleNearestExact1dGetWorkspaceSize + aclnnUpsampleNearestExact1d.

    Parameters
    ----------
    input : tensor (float32, float16, bfloat16 or uint8; passed as ACL_FORMAT_NCL)
        the input, (N, C, L_in) (aclnn parameter ``self``)
    output_size : sequence of int (aclIntArray)
        [L_out] (aclnn parameter ``outputSize``)
    scales : double (scales), default 0.0
        PyTorch's forward scale factor, about L_out/L_in; 0.0 means not given, and the sizes
        decide (aclnn parameter ``scales``)
    out : optional, out tensor (float32, float16, bfloat16 or uint8; passed as
    ACL_FORMAT_NCL)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the upsampled array, (N, C, L_out)
        NumPy arrays for NumPy inputs; DeviceArrays (not synchronised) when any input is a
        DeviceArray.

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    Source index min(floor(fp32((d + 0.5) * s)), L_in - 1), with s = 1/scales or L_in/L_out
    in float32, as the A2/A3 kernel computes it. A gather, so exact for every dtype.
    """
    return call(_UPSAMPLE_NEAREST_EXACT1D, input, output_size, scales, out=out)


_MAX_POOL2D_WITH_MASK_BACKWARD = SPECS["max_pool2d_with_mask_backward"]


def max_pool2d_with_mask_backward(
    grad_output: ArrayLike,
    input: ArrayLike,
    mask: ArrayLike,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool = False,
    *,
    out: Optional[ArrayLike] = None,
) -> ArrayLike:
    """Gradient of max_pool2d_with_mask: scatters grad_output onto the input positions the mask
    names.

    Calls aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize + aclnnMaxPool2dWithMaskBackward.

    Parameters
    ----------
    grad_output : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW)
        gradient of the forward output, (N, C, Ho, Wo) or (C, Ho, Wo) (aclnn parameter
        ``gradOutput``)
    input : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW)
        the forward input (its shape and dtype are used) (aclnn parameter ``self``)
    mask : tensor (int8; passed as ACL_FORMAT_NCHW, C-contiguous)
        the mask max_pool2d_with_mask returned for these arguments (aclnn parameter
        ``indices``)
    kernel_size : sequence of int (aclIntArray)
        [kH, kW], or [k] for both (aclnn parameter ``kernelSize``)
    stride : sequence of int (aclIntArray)
        [sH, sW], [s] for both, or [] for the kernel size (aclnn parameter ``stride``)
    padding : sequence of int (aclIntArray)
        [pH, pW] or [p]: -inf padding on each side, 0 <= p <= kernel // 2 (aclnn parameter
        ``padding``)
    dilation : sequence of int (aclIntArray)
        [1, 1] or [1]: the A2/A3 kernels support no other (aclnn parameter ``dilation``)
    ceil_mode : bool (ceilMode), default False
        round the output size up (a last window starting in the right padding is dropped),
        as PyTorch's ceil_mode (aclnn parameter ``ceilMode``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : gradient of the forward input, the shape of input
        NumPy arrays for NumPy inputs; DeviceArrays (not synchronised) when any input is a
        DeviceArray.

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    The mask is not PyTorch's indices: see the mask output above, and
    ascend_aclnn.mask_to_indices / indices_to_mask to convert. It is int8 only (uint8 is
    refused), and the backward's mask must be C-contiguous: the NPU reads its raw bytes.
    padding > kernel // 2 and dilation != 1 are refused. NaN and -inf inputs are unsupported
    on the NPU; the reference then returns what PyTorch's CPU kernel does (a window holding
    NaN gives NaN at its last NaN, an all -inf window gives -inf at its first in-bounds
    position). Among equal maxima the first in row-major window order wins, as in PyTorch.
    grad_input[n, c].flat[idx] += grad_output[n, c, oh, ow] over the mask's int32 indices,
    summed in float32 in (n, c, oh, ow) order and rounded once (the NPU's atomic adds make
    its order, and so the last float32 bit where windows overlap, vary). For a 1x1 kernel
    the mask is not read: grad_input[..., oh*sH, ow*sW] = grad_output. A mask whose int32
    prefix names a position outside the input plane is an error when the kernel runs (a
    ValueError from the numpy backend, AclRtAicoreExceptionError at the next synchronisation
    on the npu backend).
    """
    return call(_MAX_POOL2D_WITH_MASK_BACKWARD, grad_output, input, mask, kernel_size, stride, padding, dilation, ceil_mode, out=out)


_MAX_POOL2D_WITH_MASK = SPECS["max_pool2d_with_mask"]


def max_pool2d_with_mask(
    input: ArrayLike,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool = False,
    *,
    out: Optional[tuple[Optional[ArrayLike], ...]] = None,
) -> tuple[ArrayLike, ArrayLike]:
    """2-D max pooling of (N, C, H, W) or (C, H, W), returning the maxima and the NPU's mask.

    Calls aclnnMaxPool2dWithMaskGetWorkspaceSize + aclnnMaxPool2dWithMask.

    Parameters
    ----------
    input : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW)
        the input, (N, C, H, W) or (C, H, W) (aclnn parameter ``self``)
    kernel_size : sequence of int (aclIntArray)
        [kH, kW], or [k] for both (aclnn parameter ``kernelSize``)
    stride : sequence of int (aclIntArray)
        [sH, sW], [s] for both, or [] for the kernel size (aclnn parameter ``stride``)
    padding : sequence of int (aclIntArray)
        [pH, pW] or [p]: -inf padding on each side, 0 <= p <= kernel // 2 (aclnn parameter
        ``padding``)
    dilation : sequence of int (aclIntArray)
        [1, 1] or [1]: the A2/A3 kernels support no other (aclnn parameter ``dilation``)
    ceil_mode : bool (ceilMode), default False
        round the output size up (a last window starting in the right padding is dropped),
        as PyTorch's ceil_mode (aclnn parameter ``ceilMode``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW),
    mask tensor (int8; passed as ACL_FORMAT_NCHW)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the maxima, (N, C, Ho, Wo) or (C, Ho, Wo)
    mask : the Atlas A2/A3 mask, int8 of shape (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32) (no
    N for a 3-D input): its first 4*N*C*Ho*Wo bytes are little-endian int32 flat indices
    ih*W + iw of each maximum in the unpadded input plane, in (n, c, oh, ow) order, the rest
    zeros (the NPU leaves it unwritten; the binding zero-fills it first). For a 1x1 kernel
    the bytes are the NPU's bitmask for that case instead (the int32 indices would not fit):
    0xFF over the first ceil(Ho*Wo/16)*32 bytes of each of the N*ceil(C/16) leading (kH*kW,
    last-dim) rows; the backward does not read it then. ascend_aclnn.mask_to_indices turns a
    mask into PyTorch's indices
        NumPy arrays for NumPy inputs; DeviceArrays (not synchronised) when any input is a
        DeviceArray.

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    The mask is not PyTorch's indices: see the mask output above, and
    ascend_aclnn.mask_to_indices / indices_to_mask to convert. It is int8 only (uint8 is
    refused), and the backward's mask must be C-contiguous: the NPU reads its raw bytes.
    padding > kernel // 2 and dilation != 1 are refused. NaN and -inf inputs are unsupported
    on the NPU; the reference then returns what PyTorch's CPU kernel does (a window holding
    NaN gives NaN at its last NaN, an all -inf window gives -inf at its first in-bounds
    position). Among equal maxima the first in row-major window order wins, as in PyTorch.
    Exact for every dtype (a maximum needs no rounding).
    """
    return call(_MAX_POOL2D_WITH_MASK, input, kernel_size, stride, padding, dilation, ceil_mode, out=out)


__all__ = ["upsample_nearest_exact1d_backward", "upsample_nearest_exact1d", "max_pool2d_with_mask_backward", "max_pool2d_with_mask"]
