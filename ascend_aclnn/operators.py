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


_IM2COL_BACKWARD = SPECS["im2col_backward"]


def im2col_backward(
    grad_output: ArrayLike,
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
    *,
    out: Optional[ArrayLike] = None,
) -> ArrayLike:
    """Col2im (PyTorch's fold): sums columns of sliding blocks back into an image, (N, C*kH*kW,
    L) -> (N, C, H, W) or unbatched (C*kH*kW, L) -> (C, H, W).

    Calls aclnnIm2colBackwardGetWorkspaceSize + aclnnIm2colBackward.

    Parameters
    ----------
    grad_output : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the columns, (N, C*kH*kW, L) or (C*kH*kW, L); Ho = floor((H + 2pH - dH(kH-1) -
        1)/sH) + 1, Wo likewise, L = Ho*Wo; row c*kH*kW + ki*kW + kj, column oh*Wo + ow
        (aclnn parameter ``gradOutput``)
    input_size : sequence of int (aclIntArray)
        (H, W), the image size (aclnn parameter ``inputSize``)
    kernel_size : sequence of int (aclIntArray)
        (kH, kW), each > 0 (aclnn parameter ``kernelSize``)
    dilation : sequence of int (aclIntArray)
        (dH, dW), each > 0 (aclnn parameter ``dilation``)
    padding : sequence of int (aclIntArray)
        (pH, pW) zeros added on both sides, each >= 0 (aclnn parameter ``padding``)
    stride : sequence of int (aclIntArray)
        (sH, sW), each > 0 (aclnn parameter ``stride``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the image, (N, C, H, W) or (C, H, W), in grad_output's dtype; an out= of another
    of these dtypes gets the result cast
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
    Sums each pixel in float32 in the 950 kernel's order (oh, then ow ascending), rounded
    once to grad_output's dtype, then cast to out's. An empty grad_output (N, C or L = 0,
    which PyTorch rejects except N = 0) succeeds: the NPU leaves out unwritten, this binding
    zero-fills it. L is checked against input_size with C's truncating division, so a size
    with no full block passes when L = 0.
    """
    return call(_IM2COL_BACKWARD, grad_output, input_size, kernel_size, dilation, padding, stride, out=out)


_IM2COL = SPECS["im2col"]


def im2col(
    input: ArrayLike,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
    *,
    out: Optional[ArrayLike] = None,
) -> ArrayLike:
    """Im2col (PyTorch's unfold): the sliding blocks of an image as columns, (N, C, H, W) ->
    (N, C*kH*kW, L) or unbatched (C, H, W) -> (C*kH*kW, L).

    Calls aclnnIm2colGetWorkspaceSize + aclnnIm2col.

    Parameters
    ----------
    input : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the image, (N, C, H, W) or (C, H, W); C, H, W > 0 (aclnn parameter ``self``)
    kernel_size : sequence of int (aclIntArray)
        (kH, kW), each > 0 (aclnn parameter ``kernelSize``)
    dilation : sequence of int (aclIntArray)
        (dH, dW), each > 0 (aclnn parameter ``dilation``)
    padding : sequence of int (aclIntArray)
        (pH, pW) zeros added on both sides, each >= 0 (aclnn parameter ``padding``)
    stride : sequence of int (aclIntArray)
        (sH, sW), each > 0 (aclnn parameter ``stride``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the columns, (N, C*kH*kW, L) or (C*kH*kW, L), Ho = floor((H + 2pH - dH(kH-1) -
    1)/sH) + 1, Wo likewise, L = Ho*Wo; row c*kH*kW + ki*kW + kj, column oh*Wo + ow; in
    input's dtype, or cast to the dtype of out=
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
    A gather: exact for every dtype; positions in the padding read 0. float32, float16 and
    bfloat16 only (the A2/A3 list; PyTorch also takes float64), and out= of any of them
    (cast). N may be 0; C, H or W = 0 is an error, as in PyTorch.
    """
    return call(_IM2COL, input, kernel_size, dilation, padding, stride, out=out)


__all__ = ["upsample_nearest_exact1d_backward", "upsample_nearest_exact1d", "im2col_backward", "im2col"]
