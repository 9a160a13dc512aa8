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


__all__ = ["upsample_nearest_exact1d_backward", "upsample_nearest_exact1d"]
