"""The operator functions.

GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
do not edit by hand.
"""
from __future__ import annotations

from typing import Any, Literal, Optional, Sequence, Union, overload

from numpy.typing import NDArray

from .api import call
from .ops import REGISTRY
from .tensors import ArrayLike, DeviceArray, SupportsDLPack, TensorLike

# A NumPy result. An alias without parameters: mypy takes an argument whose type shows an
# Any (NDArray[Any]) as matching the DLPack overload too and gives Any; through this alias
# a result fed to the next call resolves as a fresh array does, as pyright resolves it.
NDArrayResult = NDArray[Any]


_GROUP_NORM_SWISH_GRAD = REGISTRY["group_norm_swish_grad"]


@overload
def group_norm_swish_grad(
    dy: Union[NDArray[Any], Sequence[Any]],
    mean: Union[NDArray[Any], Sequence[Any]],
    rstd: Union[NDArray[Any], Sequence[Any]],
    x: Union[NDArray[Any], Sequence[Any]],
    gamma: Union[NDArray[Any], Sequence[Any]],
    beta: Union[NDArray[Any], Sequence[Any]],
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: Literal[True] = True,
    dbeta_is_require: Literal[True] = True,
    *,
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, NDArrayResult, NDArrayResult]: ...


@overload
def group_norm_swish_grad(
    dy: Union[NDArray[Any], Sequence[Any]],
    mean: Union[NDArray[Any], Sequence[Any]],
    rstd: Union[NDArray[Any], Sequence[Any]],
    x: Union[NDArray[Any], Sequence[Any]],
    gamma: Union[NDArray[Any], Sequence[Any]],
    beta: Union[NDArray[Any], Sequence[Any]],
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: Literal[True] = True,
    *,
    dbeta_is_require: Literal[False],
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, NDArrayResult, None]: ...


@overload
def group_norm_swish_grad(
    dy: Union[NDArray[Any], Sequence[Any]],
    mean: Union[NDArray[Any], Sequence[Any]],
    rstd: Union[NDArray[Any], Sequence[Any]],
    x: Union[NDArray[Any], Sequence[Any]],
    gamma: Union[NDArray[Any], Sequence[Any]],
    beta: Union[NDArray[Any], Sequence[Any]],
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    *,
    dgamma_is_require: Literal[False],
    dbeta_is_require: Literal[True] = True,
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, None, NDArrayResult]: ...


@overload
def group_norm_swish_grad(
    dy: Union[NDArray[Any], Sequence[Any]],
    mean: Union[NDArray[Any], Sequence[Any]],
    rstd: Union[NDArray[Any], Sequence[Any]],
    x: Union[NDArray[Any], Sequence[Any]],
    gamma: Union[NDArray[Any], Sequence[Any]],
    beta: Union[NDArray[Any], Sequence[Any]],
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    *,
    dgamma_is_require: Literal[False],
    dbeta_is_require: Literal[False],
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, None, None]: ...


@overload
def group_norm_swish_grad(
    dy: Union[NDArray[Any], Sequence[Any]],
    mean: Union[NDArray[Any], Sequence[Any]],
    rstd: Union[NDArray[Any], Sequence[Any]],
    x: Union[NDArray[Any], Sequence[Any]],
    gamma: Union[NDArray[Any], Sequence[Any]],
    beta: Union[NDArray[Any], Sequence[Any]],
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: bool = True,
    dbeta_is_require: bool = True,
    *,
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, Optional[NDArrayResult], Optional[NDArrayResult]]: ...


@overload
def group_norm_swish_grad(
    dy: DeviceArray,
    mean: DeviceArray,
    rstd: DeviceArray,
    x: DeviceArray,
    gamma: DeviceArray,
    beta: DeviceArray,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: Literal[True] = True,
    dbeta_is_require: Literal[True] = True,
    *,
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, DeviceArray, DeviceArray]: ...


@overload
def group_norm_swish_grad(
    dy: DeviceArray,
    mean: DeviceArray,
    rstd: DeviceArray,
    x: DeviceArray,
    gamma: DeviceArray,
    beta: DeviceArray,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: Literal[True] = True,
    *,
    dbeta_is_require: Literal[False],
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, DeviceArray, None]: ...


@overload
def group_norm_swish_grad(
    dy: DeviceArray,
    mean: DeviceArray,
    rstd: DeviceArray,
    x: DeviceArray,
    gamma: DeviceArray,
    beta: DeviceArray,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    *,
    dgamma_is_require: Literal[False],
    dbeta_is_require: Literal[True] = True,
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, None, DeviceArray]: ...


@overload
def group_norm_swish_grad(
    dy: DeviceArray,
    mean: DeviceArray,
    rstd: DeviceArray,
    x: DeviceArray,
    gamma: DeviceArray,
    beta: DeviceArray,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    *,
    dgamma_is_require: Literal[False],
    dbeta_is_require: Literal[False],
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, None, None]: ...


@overload
def group_norm_swish_grad(
    dy: DeviceArray,
    mean: DeviceArray,
    rstd: DeviceArray,
    x: DeviceArray,
    gamma: DeviceArray,
    beta: DeviceArray,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: bool = True,
    dbeta_is_require: bool = True,
    *,
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, Optional[DeviceArray], Optional[DeviceArray]]: ...


@overload
def group_norm_swish_grad(
    dy: SupportsDLPack,
    mean: SupportsDLPack,
    rstd: SupportsDLPack,
    x: SupportsDLPack,
    gamma: SupportsDLPack,
    beta: SupportsDLPack,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: bool = True,
    dbeta_is_require: bool = True,
    *,
    out: Optional[tuple[Optional[SupportsDLPack], ...]] = None,
) -> tuple[Any, Optional[Any], Optional[Any]]: ...


def group_norm_swish_grad(
    dy: TensorLike,
    mean: TensorLike,
    rstd: TensorLike,
    x: TensorLike,
    gamma: TensorLike,
    beta: TensorLike,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    swish_scale: float = 1.0,
    dgamma_is_require: bool = True,
    dbeta_is_require: bool = True,
    *,
    out: Optional[tuple[Optional[TensorLike], ...]] = None,
) -> tuple[ArrayLike, Optional[ArrayLike], Optional[ArrayLike]]:
    """Gradient of group_norm_swish with respect to x, gamma and beta.

    Calls aclnnGroupNormSwishGradGetWorkspaceSize + aclnnGroupNormSwishGrad.

    Parameters
    ----------
    dy : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        gradient of the forward output y, (N, C, *) (aclnn parameter ``dy``)
    mean : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the forward's mean, (N, num_groups); used as given (aclnn parameter ``mean``)
    rstd : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the forward's rstd, (N, num_groups); used as given (aclnn parameter ``rstd``)
    x : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the forward input, dy's shape (aclnn parameter ``x``)
    gamma : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the forward's scale, (C,) (aclnn parameter ``gamma``)
    beta : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the forward's shift, (C,) (needed to recompute the swish input) (aclnn parameter
        ``beta``)
    num_groups : int64 (numGroups)
        G: the channels split into G groups of C/G consecutive channels (aclnn parameter
        ``numGroups``)
    data_format : string (dataFormatOptional), default 'NCHW'
        accepted and ignored, as on the NPU (any str, or None for NULL): the layout is
        always channel-second, (N, C, *) (aclnn parameter ``dataFormatOptional``)
    swish_scale : double (swishScale), default 1.0
        s in y = z * sigmoid(s * z) (aclnn parameter ``swishScale``)
    dgamma_is_require : bool (dgammaIsRequire; True/False or 0/1), default True
        compute dgamma (aclnn parameter ``dgammaIsRequire``)
    dbeta_is_require : bool (dbetaIsRequire; True/False or 0/1), default True
        compute dbeta (aclnn parameter ``dbetaIsRequire``)
    out : optional, dx tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND),
    dgamma tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND), dbeta tensor
    (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    dx : gradient of x, x's shape
    dgamma : gradient of gamma, (C,); None when dgamma_is_require is False
    dbeta : gradient of beta, (C,); None when dbeta_is_require is False
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    With M = (C/G)*HW, xhat = (x - mean) * rstd, z = xhat * gamma + beta and gz = dy * sig *
    (1 + s z (1 - sig)), sig = sigmoid(s z): dbeta = sum of gz and dgamma = sum of gz * xhat
    over N and HW, and dx = rstd * (gamma * gz - xhat * c2 - c1) with c1 = sum(gamma * gz) /
    M and c2 = sum(gamma * gz * xhat) / M over each group (the official formula omits the
    1/M). Which swish derivative depends on the CANN release: the kernel of releases before
    9.1.0 (8.1.RC1 among them) leaves swish_scale out of the second term, gz = dy * sig * (1
    + z (1 - sig)) (the "8.1" formula); from 9.1.0 on it is the corrected one above
    (hicann/ops-nn fixed it on 2026-05-26). They agree when swish_scale is 1, so before
    9.1.0 the grad is group_norm_swish's derivative at swish_scale 1 only: a call with
    another scale on such a kernel gives a SwishGradFormulaWarning, once per process. The
    numpy backend computes the formula of the release it follows: ASCEND_ACLNN_CANN_VERSION
    if set (e.g. 8.1.RC1), else the release in the version files of the CANN install the
    loader finds (read without loading any library), else the corrected one;
    ascend_aclnn.ops.group_norm.swish_grad_formula() says which and why, and
    use_swish_grad_formula() picks one for a block. mean and rstd are used as given, not
    recomputed; the swish is always applied (there is no activate_swish here). All nine
    tensors share one dtype: the float32 mean/rstd of a float16-x, float32-gamma forward
    must be cast first. Both backends compute in float64 and round once: to float32, then a
    16-bit output half away from zero as the NPU's grad kernel does (the forward rounds to
    nearest even). The kernel computes in float32, where the terms of dx cancel when mean
    and rstd are not x's statistics (for a group of one element dx = -rstd * gamma * gz *
    xhat**2 is the difference of two equal terms and a small one): the binding's results are
    correctly rounded there, so they are the golden values such an NPU result is measured
    against. An output whose *_is_require flag is False is returned as None on both backends
    (the NPU zero-fills a float32 one and leaves a 16-bit one unwritten); an out= array for
    it is not touched. 16-bit gradients: with 16-bit x the 16-bit mean and rstd dominate the
    error; fed the same statistics the kernel matches native_group_norm_backward, and
    PyTorch's own 16-bit autograd is further from the float64 truth than either. On Atlas
    A2/A3 with N > 2 the NPU sums dgamma/dbeta across N in a non-deterministic order; the
    binding's backends are deterministic. C / num_groups is limited to 4000. NaN and inf
    inputs are unsupported on the NPU, whose Kahan sums turn an inf into NaN: on both
    backends a group holding one gives NaN statistics and outputs, a dgamma/dbeta channel
    that is not finite is NaN, and a non-finite gamma or beta makes its channel of y, its
    group of dx and its dgamma/dbeta NaN (unconfirmed on hardware). Both APIs are generated
    (nnopbase runs the tiling inside GetWorkspaceSize), so their shape rules are tiling
    failures: AclnnInnerTilingError (ACLNN_ERR_INNER_TILING_ERROR, 561002), checked after
    the NULL (161001) and dtype (161002) checks and in the tiling's order. The grad's: x has
    dy's shape; mean is (N, num_groups) (its dim 1, then dim 0); rstd has mean's shape; mean
    is 2-D; gamma, then beta, is 1-D of length C; N * num_groups > 0; num_groups divides C
    (C / num_groups > 0); H*W > 0; C / num_groups <= 4000. The binding's own refusals, after
    those (AclnnParamInvalidError, 161002): more than 8 dims, and out= arrays of the wrong
    shape.
    """
    result: tuple[ArrayLike, Optional[ArrayLike], Optional[ArrayLike]] = call(_GROUP_NORM_SWISH_GRAD, dy, mean, rstd, x, gamma, beta, num_groups, data_format, swish_scale, dgamma_is_require, dbeta_is_require, out=out)
    return result


_GROUP_NORM_SWISH = REGISTRY["group_norm_swish"]


@overload
def group_norm_swish(
    x: Union[NDArray[Any], Sequence[Any]],
    gamma: Union[NDArray[Any], Sequence[Any]],
    beta: Union[NDArray[Any], Sequence[Any]],
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    eps: float = 1e-05,
    activate_swish: bool = True,
    swish_scale: float = 1.0,
    *,
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, NDArrayResult, NDArrayResult]: ...


@overload
def group_norm_swish(
    x: DeviceArray,
    gamma: DeviceArray,
    beta: DeviceArray,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    eps: float = 1e-05,
    activate_swish: bool = True,
    swish_scale: float = 1.0,
    *,
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, DeviceArray, DeviceArray]: ...


@overload
def group_norm_swish(
    x: SupportsDLPack,
    gamma: SupportsDLPack,
    beta: SupportsDLPack,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    eps: float = 1e-05,
    activate_swish: bool = True,
    swish_scale: float = 1.0,
    *,
    out: Optional[tuple[Optional[SupportsDLPack], ...]] = None,
) -> tuple[Any, Any, Any]: ...


def group_norm_swish(
    x: TensorLike,
    gamma: TensorLike,
    beta: TensorLike,
    num_groups: int,
    data_format: Optional[str] = 'NCHW',
    eps: float = 1e-05,
    activate_swish: bool = True,
    swish_scale: float = 1.0,
    *,
    out: Optional[tuple[Optional[TensorLike], ...]] = None,
) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """Group normalisation of (N, C, *) followed by the swish activation z * sigmoid(s * z).

    Calls aclnnGroupNormSwishGetWorkspaceSize + aclnnGroupNormSwish.

    Parameters
    ----------
    x : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the input, (N, C, *), 2-D to 8-D (aclnn parameter ``x``)
    gamma : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        per-channel scale, (C,); float32 also with 16-bit x (aclnn parameter ``gamma``)
    beta : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        per-channel shift, (C,); gamma's dtype (aclnn parameter ``beta``)
    num_groups : int64 (numGroups)
        G: the channels split into G groups of C/G consecutive channels (aclnn parameter
        ``numGroups``)
    data_format : string (dataFormatOptional), default 'NCHW'
        accepted and ignored, as on the NPU (any str, or None for NULL): the layout is
        always channel-second, (N, C, *) (aclnn parameter ``dataFormatOptional``)
    eps : double (eps), default 1e-05
        added to the variance: rstd = 1 / sqrt(var + eps) (aclnn parameter ``eps``)
    activate_swish : bool (activateSwish; True/False or 0/1), default True
        apply the swish (else y is the normalised z) (aclnn parameter ``activateSwish``)
    swish_scale : double (swishScale), default 1.0
        s in y = z * sigmoid(s * z) (aclnn parameter ``swishScale``)
    out : optional, y tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND), mean
    tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND), rstd tensor (float32,
    float16 or bfloat16; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    y : the result, x's shape and dtype
    mean : per (sample, group) mean, (N, num_groups), gamma's dtype
    rstd : per (sample, group) 1/sqrt(var + eps), (N, num_groups), gamma's dtype
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    Per (sample, group) of M = (C/G)*HW values: biased variance, rstd = 1/sqrt(var + eps); z
    = (x - mean) * rstd * gamma + beta (the affine comes before the swish); y = z *
    sigmoid(swish_scale * z) when activate_swish, else z. PyTorch has no fused op: this is
    native_group_norm then z * sigmoid(s * z). Allowed (x, gamma = beta) dtypes: (float32,
    float32), (float16, float16), (bfloat16, bfloat16), (float16, float32), (bfloat16,
    float32); mean and rstd take gamma's dtype. 16-bit inputs are computed in float32 (eps
    too is rounded to float32) and y rounded once to nearest even. NaN and inf inputs are
    unsupported on the NPU, whose Kahan sums turn an inf into NaN: on both backends a group
    holding one gives NaN statistics and outputs, a dgamma/dbeta channel that is not finite
    is NaN, and a non-finite gamma or beta makes its channel of y, its group of dx and its
    dgamma/dbeta NaN (unconfirmed on hardware). Both APIs are generated (nnopbase runs the
    tiling inside GetWorkspaceSize), so their shape rules are tiling failures:
    AclnnInnerTilingError (ACLNN_ERR_INNER_TILING_ERROR, 561002), checked after the NULL
    (161001) and dtype (161002) checks and in the tiling's order. The forward's: x has at
    least 2 dims; gamma, then beta, is 1-D of length C; num_groups > 0; num_groups divides
    C. The binding's own refusals, after those (AclnnParamInvalidError, 161002): more than 8
    dims, an empty tensor (which the tiling accepts; the documentation says unsupported),
    and out= arrays of the wrong shape.
    """
    result: tuple[ArrayLike, ArrayLike, ArrayLike] = call(_GROUP_NORM_SWISH, x, gamma, beta, num_groups, data_format, eps, activate_swish, swish_scale, out=out)
    return result


_IM2COL_BACKWARD = REGISTRY["im2col_backward"]


@overload
def im2col_backward(
    grad_output: Union[NDArray[Any], Sequence[Any]],
    input_size: Union[int, Sequence[int]],
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def im2col_backward(
    grad_output: DeviceArray,
    input_size: Union[int, Sequence[int]],
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def im2col_backward(
    grad_output: SupportsDLPack,
    input_size: Union[int, Sequence[int]],
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def im2col_backward(
    grad_output: TensorLike,
    input_size: Union[int, Sequence[int]],
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[TensorLike] = None,
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
    input_size : int or sequence of int (aclIntArray; an int n means (n, n))
        (H, W), the image size (F.fold's output_size) (aclnn parameter ``inputSize``)
    kernel_size : int or sequence of int (aclIntArray; an int n means (n, n))
        (kH, kW), each > 0 (aclnn parameter ``kernelSize``)
    dilation : int or sequence of int (aclIntArray; an int n means (n, n)), default (1, 1)
        (dH, dW), each > 0 (aclnn parameter ``dilation``)
    padding : int or sequence of int (aclIntArray; an int n means (n, n)), default (0, 0)
        (pH, pW) zeros added on both sides, each >= 0 (aclnn parameter ``padding``)
    stride : int or sequence of int (aclIntArray; an int n means (n, n)), default (1, 1)
        (sH, sW), each > 0 (aclnn parameter ``stride``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the image, (N, C, H, W) or (C, H, W), in grad_output's dtype; an out= of another
    of these dtypes gets the result cast
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    F.fold, with its argument order and defaults. Sums each pixel in float32 in the 950
    kernel's order (oh, then ow ascending), rounded once to grad_output's dtype, then cast
    to out's. An empty grad_output (N, C or L = 0, which PyTorch rejects except N = 0)
    succeeds: the NPU leaves out unwritten, this binding zero-fills it. L is checked against
    input_size with C's truncating division, so a size with no full block passes when L = 0.
    """
    result: ArrayLike = call(_IM2COL_BACKWARD, grad_output, input_size, kernel_size, dilation, padding, stride, out=out)
    return result


_IM2COL = REGISTRY["im2col"]


@overload
def im2col(
    input: Union[NDArray[Any], Sequence[Any]],
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def im2col(
    input: DeviceArray,
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def im2col(
    input: SupportsDLPack,
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def im2col(
    input: TensorLike,
    kernel_size: Union[int, Sequence[int]],
    dilation: Union[int, Sequence[int]] = (1, 1),
    padding: Union[int, Sequence[int]] = (0, 0),
    stride: Union[int, Sequence[int]] = (1, 1),
    *,
    out: Optional[TensorLike] = None,
) -> ArrayLike:
    """Im2col (PyTorch's unfold): the sliding blocks of an image as columns, (N, C, H, W) ->
    (N, C*kH*kW, L) or unbatched (C, H, W) -> (C*kH*kW, L).

    Calls aclnnIm2colGetWorkspaceSize + aclnnIm2col.

    Parameters
    ----------
    input : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        the image, (N, C, H, W) or (C, H, W); C, H, W > 0 (aclnn parameter ``self``)
    kernel_size : int or sequence of int (aclIntArray; an int n means (n, n))
        (kH, kW), each > 0 (aclnn parameter ``kernelSize``)
    dilation : int or sequence of int (aclIntArray; an int n means (n, n)), default (1, 1)
        (dH, dW), each > 0 (aclnn parameter ``dilation``)
    padding : int or sequence of int (aclIntArray; an int n means (n, n)), default (0, 0)
        (pH, pW) zeros added on both sides, each >= 0 (aclnn parameter ``padding``)
    stride : int or sequence of int (aclIntArray; an int n means (n, n)), default (1, 1)
        (sH, sW), each > 0 (aclnn parameter ``stride``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the columns, (N, C*kH*kW, L) or (C*kH*kW, L), Ho = floor((H + 2pH - dH(kH-1) -
    1)/sH) + 1, Wo likewise, L = Ho*Wo; row c*kH*kW + ki*kW + kj, column oh*Wo + ow; in
    input's dtype, or cast to the dtype of out=
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    F.unfold, with its argument order and defaults. A gather: exact for every dtype;
    positions in the padding read 0. float32, float16 and bfloat16 only (the A2/A3 list;
    PyTorch also takes float64), and out= of any of them (cast). N may be 0; C, H or W = 0
    is an error, as in PyTorch.
    """
    result: ArrayLike = call(_IM2COL, input, kernel_size, dilation, padding, stride, out=out)
    return result


_MAX_POOL2D_WITH_MASK = REGISTRY["max_pool2d_with_mask"]


@overload
def max_pool2d_with_mask(
    input: Union[NDArray[Any], Sequence[Any]],
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[tuple[Optional[NDArray[Any]], ...]] = None,
) -> tuple[NDArrayResult, NDArrayResult]: ...


@overload
def max_pool2d_with_mask(
    input: DeviceArray,
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[tuple[Optional[DeviceArray], ...]] = None,
) -> tuple[DeviceArray, DeviceArray]: ...


@overload
def max_pool2d_with_mask(
    input: SupportsDLPack,
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[tuple[Optional[SupportsDLPack], ...]] = None,
) -> tuple[Any, Any]: ...


def max_pool2d_with_mask(
    input: TensorLike,
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[tuple[Optional[TensorLike], ...]] = None,
) -> tuple[ArrayLike, ArrayLike]:
    """2-D max pooling of (N, C, H, W) or (C, H, W), returning the maxima and the NPU's mask.

    Calls aclnnMaxPool2dWithMaskGetWorkspaceSize + aclnnMaxPool2dWithMask.

    Parameters
    ----------
    input : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW)
        the input, (N, C, H, W) or (C, H, W) (aclnn parameter ``self``)
    kernel_size : int or sequence of int (aclIntArray; an int n means (n, n))
        [kH, kW], or [k] for both (aclnn parameter ``kernelSize``)
    stride : int or sequence of int (aclIntArray; an int n means (n, n)), default ()
        [sH, sW], [s] for both, or [] for the kernel size (PyTorch's stride=None) (aclnn
        parameter ``stride``)
    padding : int or sequence of int (aclIntArray; an int n means (n, n)), default (0, 0)
        [pH, pW] or [p]: -inf padding on each side, 0 <= p <= kernel // 2 (aclnn parameter
        ``padding``)
    dilation : int or sequence of int (aclIntArray; an int n means (n, n)), default (1, 1)
        [1, 1] or [1]: the A2/A3 kernels support no other (aclnn parameter ``dilation``)
    ceil_mode : bool (ceilMode; True/False or 0/1), default False
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
    last-dim) rows, as the CANN sources write it (unconfirmed on hardware; the NPU's
    backward reads it as a bitmask). The int32 layout follows the CANN >= 8.3 operator
    sources (unconfirmed on 8.1). ascend_aclnn.mask_to_indices turns a mask into PyTorch's
    indices
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

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
    The mask's int32 layout follows the CANN >= 8.3 operator sources (unconfirmed on 8.1).
    Values and indices match PyTorch (checked on 4665 cases), its tie rule and ceil mode
    with its correction included; a stride of length 0 means stride = kernel. Exact for
    every dtype (a maximum needs no rounding): the value returned is the element the mask
    names, bit for bit (+0.0 and -0.0 kept apart).
    """
    result: tuple[ArrayLike, ArrayLike] = call(_MAX_POOL2D_WITH_MASK, input, kernel_size, stride, padding, dilation, ceil_mode, out=out)
    return result


_MAX_POOL2D_WITH_MASK_BACKWARD = REGISTRY["max_pool2d_with_mask_backward"]


@overload
def max_pool2d_with_mask_backward(
    grad_output: Union[NDArray[Any], Sequence[Any]],
    input: Union[NDArray[Any], Sequence[Any]],
    mask: Union[NDArray[Any], Sequence[Any]],
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def max_pool2d_with_mask_backward(
    grad_output: DeviceArray,
    input: DeviceArray,
    mask: DeviceArray,
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def max_pool2d_with_mask_backward(
    grad_output: SupportsDLPack,
    input: SupportsDLPack,
    mask: SupportsDLPack,
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def max_pool2d_with_mask_backward(
    grad_output: TensorLike,
    input: TensorLike,
    mask: TensorLike,
    kernel_size: Union[int, Sequence[int]],
    stride: Union[int, Sequence[int]] = (),
    padding: Union[int, Sequence[int]] = (0, 0),
    dilation: Union[int, Sequence[int]] = (1, 1),
    ceil_mode: bool = False,
    *,
    out: Optional[TensorLike] = None,
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
    kernel_size : int or sequence of int (aclIntArray; an int n means (n, n))
        [kH, kW], or [k] for both (aclnn parameter ``kernelSize``)
    stride : int or sequence of int (aclIntArray; an int n means (n, n)), default ()
        [sH, sW], [s] for both, or [] for the kernel size (PyTorch's stride=None) (aclnn
        parameter ``stride``)
    padding : int or sequence of int (aclIntArray; an int n means (n, n)), default (0, 0)
        [pH, pW] or [p]: -inf padding on each side, 0 <= p <= kernel // 2 (aclnn parameter
        ``padding``)
    dilation : int or sequence of int (aclIntArray; an int n means (n, n)), default (1, 1)
        [1, 1] or [1]: the A2/A3 kernels support no other (aclnn parameter ``dilation``)
    ceil_mode : bool (ceilMode; True/False or 0/1), default False
        round the output size up (a last window starting in the right padding is dropped),
        as PyTorch's ceil_mode (aclnn parameter ``ceilMode``)
    out : optional, out tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCHW)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : gradient of the forward input, the shape of input
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

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
    The mask's int32 layout follows the CANN >= 8.3 operator sources (unconfirmed on 8.1).
    Values and indices match PyTorch (checked on 4665 cases), its tie rule and ceil mode
    with its correction included; a stride of length 0 means stride = kernel. grad_input[n,
    c].flat[idx] += grad_output[n, c, oh, ow] over the mask's int32 indices, summed in
    float32 in (n, c, oh, ow) order and rounded once (the NPU's atomic adds make its order,
    and so the last float32 bit where windows overlap, vary). For a 1x1 kernel both backends
    compute grad_input[..., oh*sH, ow*sW] = grad_output (the NPU reads its 1x1 mask as a
    bitmask; those mask bytes are unconfirmed on hardware, so a mask from elsewhere may give
    another result there). A mask whose int32 prefix names a position outside the input
    plane is a kernel fault: AclRtAicoreExceptionError (507015), raised by the call on the
    numpy backend and at the next synchronisation on the npu backend. A kernel_size of the
    wrong length is 161001, as in the op_api.
    """
    result: ArrayLike = call(_MAX_POOL2D_WITH_MASK_BACKWARD, grad_output, input, mask, kernel_size, stride, padding, dilation, ceil_mode, out=out)
    return result


_REPLICATION_PAD2D_BACKWARD = REGISTRY["replication_pad2d_backward"]


@overload
def replication_pad2d_backward(
    grad_output: Union[NDArray[Any], Sequence[Any]],
    input: Union[NDArray[Any], Sequence[Any]],
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def replication_pad2d_backward(
    grad_output: DeviceArray,
    input: DeviceArray,
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def replication_pad2d_backward(
    grad_output: SupportsDLPack,
    input: SupportsDLPack,
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def replication_pad2d_backward(
    grad_output: TensorLike,
    input: TensorLike,
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[TensorLike] = None,
) -> ArrayLike:
    """Gradient of replication_pad2d: sums grad_output over every output position that read
    each input position.

    Calls aclnnReplicationPad2dBackwardGetWorkspaceSize + aclnnReplicationPad2dBackward.

    Parameters
    ----------
    grad_output : tensor (float32, float16, bfloat16, float64, complex64 or complex128;
    passed as ACL_FORMAT_ND)
        gradient of the forward output, (N, C, Hout, Wout) or (C, Hout, Wout) with Hout = H
        + top + bottom, Wout = W + left + right (aclnn parameter ``gradOutput``)
    input : tensor (float32, float16, bfloat16, float64, complex64 or complex128; passed as
    ACL_FORMAT_ND)
        the forward input, (N, C, H, W) or (C, H, W); gives the result's shape and dtype
        (aclnn parameter ``self``)
    padding : int or sequence of int (aclIntArray; an int n means (n, n, n, n))
        [left, right, top, bottom]: left/right pad the last dim (W), top/bottom the second-
        to-last (H); larger than the dims repeats the edge, negative crops (aclnn parameter
        ``padding``)
    out : optional, grad_input tensor (float32, float16, bfloat16, float64, complex64 or
    complex128; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    grad_input : gradient of the forward input, the shape and dtype of input
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    Sums rows first, then columns, in ascending order; float16/bfloat16 accumulate in
    float32 and round once (on the NPU some float16 tilings may round an intermediate row
    sum to float16 first). bfloat16 requires pads >= 0 and, when top or bottom is non-zero,
    every pad <= 7. The leading dims of grad_output must equal input's (the op_api compares
    only H and W). Pads larger than the input dims are accepted (the clamp rule repeats the
    edge), though the aclnn doc lists them as errors. Negative pads crop, as in PyTorch; the
    NPU's result for negative pads is unconfirmed (the op_api accepts them except for
    bfloat16 in the backward, and they run on the AICPU kernel). A 3-D input with any empty
    tensor is an error; a 4-D input with N = 0 succeeds and computes nothing.
    """
    result: ArrayLike = call(_REPLICATION_PAD2D_BACKWARD, grad_output, input, padding, out=out)
    return result


_REPLICATION_PAD2D = REGISTRY["replication_pad2d"]


@overload
def replication_pad2d(
    input: Union[NDArray[Any], Sequence[Any]],
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def replication_pad2d(
    input: DeviceArray,
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def replication_pad2d(
    input: SupportsDLPack,
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def replication_pad2d(
    input: TensorLike,
    padding: Union[int, Sequence[int]],
    *,
    out: Optional[TensorLike] = None,
) -> ArrayLike:
    """Pads the last two dims of a 3-D or 4-D array by repeating its edge values.

    Calls aclnnReplicationPad2dGetWorkspaceSize + aclnnReplicationPad2d.

    Parameters
    ----------
    input : tensor (float32, float16, bfloat16, float64, complex64, complex128, int8, uint8,
    int16, int32 or int64; passed as ACL_FORMAT_ND)
        the input, (N, C, H, W) or (C, H, W) (aclnn parameter ``self``)
    padding : int or sequence of int (aclIntArray; an int n means (n, n, n, n))
        [left, right, top, bottom]: left/right pad the last dim (W), top/bottom the second-
        to-last (H); larger than the dims repeats the edge, negative crops (aclnn parameter
        ``padding``)
    out : optional, out tensor (float32, float16, bfloat16, float64, complex64, complex128,
    int8, uint8, int16, int32 or int64; passed as ACL_FORMAT_ND)
        Arrays to write the result into; otherwise they are allocated.

    Returns
    -------
    out : the padded array, (..., H + top + bottom, W + left + right)
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    out[..., i, j] = input[..., clamp(i - top, 0, H - 1), clamp(j - left, 0, W - 1)]: a
    gather, exact for every dtype; it matches PyTorch on 702 checked shape/pad cases. Pads
    larger than the input dims are accepted (the clamp rule repeats the edge), though the
    aclnn doc lists them as errors. Negative pads crop, as in PyTorch; the NPU's result for
    negative pads is unconfirmed (the op_api accepts them except for bfloat16 in the
    backward, and they run on the AICPU kernel). A 3-D input with any empty tensor is an
    error; a 4-D input with N = 0 succeeds and computes nothing.
    """
    result: ArrayLike = call(_REPLICATION_PAD2D, input, padding, out=out)
    return result


_UPSAMPLE_NEAREST_EXACT1D_BACKWARD = REGISTRY["upsample_nearest_exact1d_backward"]


@overload
def upsample_nearest_exact1d_backward(
    grad_output: Union[NDArray[Any], Sequence[Any]],
    output_size: Union[int, Sequence[int]],
    input_size: Sequence[int],
    scales: float = 0.0,
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def upsample_nearest_exact1d_backward(
    grad_output: DeviceArray,
    output_size: Union[int, Sequence[int]],
    input_size: Sequence[int],
    scales: float = 0.0,
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def upsample_nearest_exact1d_backward(
    grad_output: SupportsDLPack,
    output_size: Union[int, Sequence[int]],
    input_size: Sequence[int],
    scales: float = 0.0,
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def upsample_nearest_exact1d_backward(
    grad_output: TensorLike,
    output_size: Union[int, Sequence[int]],
    input_size: Sequence[int],
    scales: float = 0.0,
    *,
    out: Optional[TensorLike] = None,
) -> ArrayLike:
    """Gradient of upsample_nearest_exact1d: sums grad_output back onto the input positions.

    Calls aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize +
    aclnnUpsampleNearestExact1dBackward.

    Parameters
    ----------
    grad_output : tensor (float32, float16 or bfloat16; passed as ACL_FORMAT_NCL)
        gradient of the forward output, (N, C, L_out) (aclnn parameter ``gradOutput``)
    output_size : int or sequence of int (aclIntArray; an int n means [n])
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
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    Follows the Atlas A2/A3 kernel: float32 interval arithmetic, which differs from PyTorch
    at exact ties: there the gradient goes to the neighbouring input (L_in = 26, L_out = 7:
    output 3 lands on input 12, not 13; 70 size pairs with both lengths under 60), so there
    it is not the exact adjoint of the forward. Gradient at positions past the last input
    interval is dropped when scales disagrees with the sizes. float16/bfloat16 accumulate in
    float32. Which positions are summed follows the kernel's index arithmetic exactly; the
    NPU sums each interval on its cube unit, so where an interval has 3 or more terms the
    last float32 bit is unconfirmed (python -m ascend_aclnn selftest settles it on a host).
    The magnification is limited to 50 (L_out <= 50 * L_in, or scales <= 50 when scales is
    given): a limit of this backward only, which the forward does not share, so a forward
    past 50x runs but its gradient is refused. output_size is checked only for its length.
    """
    result: ArrayLike = call(_UPSAMPLE_NEAREST_EXACT1D_BACKWARD, grad_output, output_size, input_size, scales, out=out)
    return result


_UPSAMPLE_NEAREST_EXACT1D = REGISTRY["upsample_nearest_exact1d"]


@overload
def upsample_nearest_exact1d(
    input: Union[NDArray[Any], Sequence[Any]],
    output_size: Union[int, Sequence[int]],
    scales: float = 0.0,
    *,
    out: Optional[NDArray[Any]] = None,
) -> NDArrayResult: ...


@overload
def upsample_nearest_exact1d(
    input: DeviceArray,
    output_size: Union[int, Sequence[int]],
    scales: float = 0.0,
    *,
    out: Optional[DeviceArray] = None,
) -> DeviceArray: ...


@overload
def upsample_nearest_exact1d(
    input: SupportsDLPack,
    output_size: Union[int, Sequence[int]],
    scales: float = 0.0,
    *,
    out: Optional[SupportsDLPack] = None,
) -> Any: ...


def upsample_nearest_exact1d(
    input: TensorLike,
    output_size: Union[int, Sequence[int]],
    scales: float = 0.0,
    *,
    out: Optional[TensorLike] = None,
) -> ArrayLike:
    """Nearest-exact 1-D upsampling (PyTorch's 'nearest-exact' mode) of (N, C, L_in) to (N, C,
    L_out).

    Calls aclnnUpsampleNearestExact1dGetWorkspaceSize + aclnnUpsampleNearestExact1d.

    Parameters
    ----------
    input : tensor (float32, float16, bfloat16 or uint8; passed as ACL_FORMAT_NCL)
        the input, (N, C, L_in) (aclnn parameter ``self``)
    output_size : int or sequence of int (aclIntArray; an int n means [n])
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
        In the kind of the inputs: DeviceArrays (not synchronised) when any tensor argument
        is a DeviceArray; else torch tensors (sharing the results' memory) when any is a CPU
        torch tensor; else NumPy arrays. An out= array comes back as given. Tensor arguments
        may be NumPy arrays, DeviceArrays, CPU torch tensors or DLPack host arrays (read in
        place), or lists (of the dtype of the first array argument).

    Raises
    ------
    AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)
        Before any C call, on both backends, for the inputs the operator rejects.
    AclnnError
        When CANN itself fails (message includes aclGetRecentErrMsg).

    Notes
    -----
    Source index min(floor(fp32((d + 0.5) * s)), L_in - 1), with s = 1/scales or L_in/L_out
    in float32, as the A2/A3 kernel computes it. A gather, so exact for every dtype. The
    forward has no magnification limit; its backward refuses more than 50x. The float32
    arithmetic makes it differ from F.interpolate(mode='nearest-exact') where (d + 0.5) * s
    rounds just below an integer: at L_in = 2, L_out = 41, 47, 55 (the only pairs with both
    lengths under 60) and 217 of the 262,144 pairs with L_in <= 256, L_out <= 1024 (measured
    against PyTorch 2.13 CPU).
    """
    result: ArrayLike = call(_UPSAMPLE_NEAREST_EXACT1D, input, output_size, scales, out=out)
    return result


__all__ = ["group_norm_swish_grad", "group_norm_swish", "im2col_backward", "im2col", "max_pool2d_with_mask", "max_pool2d_with_mask_backward", "replication_pad2d_backward", "replication_pad2d", "upsample_nearest_exact1d_backward", "upsample_nearest_exact1d"]
