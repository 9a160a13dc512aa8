"""MaxPool2dWithMask and its backward (checks in the order of the
ops-nn op_api sources, aclnn_max_pool2d_with_indices[_backward].cpp, on Atlas A2/A3)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ..cann.constants import ACLNN_ERR_PARAM_NULLPTR, AclFormat
from ..reference import max_pool as reference
from ..tensors import bfloat16, dtype_name
from .spec import Args, Backward, Checker, IntArray, OpSpec, Output, Scalar, Tensor, as_pair

NCHW = AclFormat.ACL_FORMAT_NCHW
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)
MASK_DTYPES = (np.dtype(np.int8),)
OUT, MASK = "out[0] (out)", "out[1] (mask)"  # how the forward's error messages name its outputs

MASK_DOC = ("the Atlas A2/A3 mask, int8 of shape (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32) (no N for "
            "a 3-D input): its first 4*N*C*Ho*Wo bytes are little-endian int32 flat indices ih*W + iw "
            "of each maximum in the unpadded input plane, in (n, c, oh, ow) order, the rest zeros "
            "(the NPU leaves it unwritten; the binding zero-fills it first). For a 1x1 kernel the "
            "bytes are the NPU's bitmask for that case instead (the int32 indices would not fit): "
            "0xFF over the first ceil(Ho*Wo/16)*32 bytes of each of the N*ceil(C/16) leading "
            "(kH*kW, last-dim) rows, as the CANN sources write it (unconfirmed on hardware; the NPU's "
            "backward reads it as a bitmask). The int32 layout follows the CANN >= 8.3 operator "
            "sources (unconfirmed on 8.1). ascend_aclnn.mask_to_indices turns a mask into PyTorch's "
            "indices")


def _mask_dtype_hint(dtype: np.dtype[Any], written: bool) -> str:
    """What a wrong mask dtype most likely means, for its message."""
    if dtype == np.uint8:
        return " (the same bytes as int8: mask.view(np.int8))"
    if dtype.kind in "iu":
        if written:
            return (": the second output is the NPU's int8 mask, not PyTorch's indices (pass an int8 array of the "
                    "mask's shape; ascend_aclnn.mask_to_indices(mask, out.shape) gives the indices)")
        return (": PyTorch's indices are not the mask; ascend_aclnn.indices_to_mask(indices, kernel_size) "
                "converts them")
    return ""


class Geometry:
    """kernel, stride, padding per axis and the output size, once the arguments are valid."""

    kh: int
    kw: int
    sh: int
    sw: int
    ph: int
    pw: int
    lead: tuple[int, ...]  # the dimensions before H and W
    h: int
    w: int
    ho: int
    wo: int

    def __init__(self, shape: Sequence[int], kernel_size: Sequence[int], stride: Sequence[int],
                 padding: Sequence[int], ceil_mode: bool) -> None:
        (self.kh, self.kw), (self.sh, self.sw), (self.ph, self.pw) = \
            reference.pool_params(kernel_size, stride, padding)
        self.lead, (self.h, self.w) = tuple(shape[:-2]), tuple(shape[-2:])
        self.ho = reference.pool_out_size(self.h, self.kh, self.sh, self.ph, ceil_mode)
        self.wo = reference.pool_out_size(self.w, self.kw, self.sw, self.pw, ceil_mode)

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.lead + (self.ho, self.wo)

    @property
    def mask_shape(self) -> tuple[int, ...]:
        return reference.mask_shape(self.lead + (self.h, self.w), (self.kh, self.kw), (self.ho, self.wo))


def _geometry(x: Any, a: Args) -> Optional[Geometry]:
    """The geometry, or None while the arguments are not yet checked valid."""
    try:
        if x.ndim not in (3, 4) or len(a.kernel_size) not in (1, 2) or len(a.stride) not in (0, 1, 2) \
                or len(a.padding) not in (1, 2):
            return None
        g = Geometry(x.shape, a.kernel_size, a.stride, a.padding, a.ceil_mode)
        return g if min(g.kh, g.kw, g.sh, g.sw) > 0 else None
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _infer_forward(a: Args) -> list[tuple[tuple[int, ...], Any]]:
    x = a.input
    g = _geometry(x, a)
    if g is None:  # the checks will refuse these arguments; placeholders until then
        return [(x.shape, x.dtype), ((0,), np.int8)]
    return [(g.out_shape, x.dtype), (g.mask_shape, np.int8)]


def _check_pool_params(a: Args, check: Checker) -> Geometry:
    """The op_api's CheckShape, from the array lengths to the dilation."""
    if len(a.stride) not in (0, 1, 2):
        check.mismatch("stride", "0, 1 or 2 values (none means: the kernel size)", f"{a.stride}")
    if len(a.padding) not in (1, 2):
        check.mismatch("padding", "1 or 2 values", f"{a.padding}")
    if len(a.dilation) not in (1, 2):
        check.mismatch("dilation", "1 or 2 values", f"{a.dilation}")
    (kh, kw), (sh, sw), (ph, pw) = reference.pool_params(a.kernel_size, a.stride, a.padding)
    if kh <= 0 or kw <= 0:
        check.mismatch("kernel_size", "kH, kW > 0", f"{a.kernel_size}")
    if sh <= 0 or sw <= 0:
        check.mismatch("stride", "sH, sW > 0", f"{a.stride}")
    if not (0 <= ph <= kh // 2 and 0 <= pw <= kw // 2):
        check.mismatch("padding", f"0 <= padding <= kernel_size // 2 on each axis (kernel {(kh, kw)})",
                       f"{a.padding}")
    if any(d != 1 for d in a.dilation):
        check.mismatch("dilation", "1 (the only dilation the Atlas A2/A3 kernels support)", f"{a.dilation}")
    return Geometry(a.input.shape, a.kernel_size, a.stride, a.padding, a.ceil_mode)


def _check_plane(x: Any, g: Geometry, check: Checker) -> None:
    c = x.shape[-3]
    if c == 0 or g.h == 0 or g.w == 0:
        check.mismatch("input", "C, H, W > 0 (only N may be 0)", f"shape {x.shape}")
    if g.ho <= 0 or g.wo <= 0:
        check.mismatch("input", f"an output of at least 1x1, got {g.ho}x{g.wo} for H, W = {(g.h, g.w)} with "
                       f"kernel {(g.kh, g.kw)}, stride {(g.sh, g.sw)}, padding {(g.ph, g.pw)}",
                       f"shape {x.shape}")


def _check_forward(a: Args, check: Checker) -> None:
    x, (out, mask) = a.input, a.outputs
    if len(a.kernel_size) not in (1, 2):  # checked first, before the other pointers
        check.mismatch("kernel_size", "1 or 2 values", f"{a.kernel_size}")
    check.dtype("input", x, FLOATS)
    if out.given:
        check.same_dtype(OUT, out, "input", x)
    if mask.given and mask.dtype not in MASK_DTYPES:
        check.mismatch(MASK, "dtype int8 (the mask's only dtype)",
                       dtype_name(mask.dtype) + _mask_dtype_hint(mask.dtype, written=True))
    if x.ndim not in (3, 4):
        check.mismatch("input", "a 3-D (C, H, W) or 4-D (N, C, H, W) tensor", f"shape {x.shape}")
    g = _check_pool_params(a, check)
    _check_plane(x, g, check)
    if out.given and out.shape != g.out_shape:
        check.mismatch(OUT, f"shape {g.out_shape}", f"shape {out.shape}")
    if mask.given and mask.shape != g.mask_shape:
        check.mismatch(MASK, f"shape {g.mask_shape} (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32)",
                       f"shape {mask.shape}")


def _check_backward(a: Args, check: Checker) -> None:
    grad, x, mask, gx = a.grad_output, a.input, a.mask, a.outputs[0]
    if len(a.kernel_size) not in (1, 2):  # the op_api returns NULLPTR here (sic)
        check.mismatch("kernel_size", "1 or 2 values", f"{a.kernel_size}", status=ACLNN_ERR_PARAM_NULLPTR)
    check.dtype("input", x, FLOATS)
    check.same_dtype("grad_output", grad, "input", x)
    if gx.given:
        check.same_dtype("out", gx, "input", x)
    if mask.dtype not in MASK_DTYPES:
        check.mismatch("mask", "dtype int8 (the mask's only dtype)",
                       dtype_name(mask.dtype) + _mask_dtype_hint(mask.dtype, written=False))
    for name, t in (("input", x), ("out", gx), ("grad_output", grad), ("mask", mask)):
        if t.ndim not in (3, 4) and (t.given or name != "out"):
            check.mismatch(name, "a 3-D or 4-D tensor", f"shape {t.shape}")
    g = _check_pool_params(a, check)
    if gx.given and gx.shape != x.shape:
        check.mismatch("out", f"shape {x.shape} (the shape of input)", f"shape {gx.shape}")
    _check_plane(x, g, check)
    if grad.shape != g.out_shape:
        check.mismatch("grad_output", f"shape {g.out_shape} (the forward's output shape)", f"shape {grad.shape}")
    # Not an op_api check (it ignores the mask's shape): the kernel reads N*C*Ho*Wo int32
    # values from the mask's bytes, so a smaller mask would be read out of bounds.
    need = 4 * int(np.prod(g.out_shape))
    if g.kh * g.kw != 1 and int(np.prod(mask.shape)) < need:
        check.mismatch("mask", f"at least {need} bytes (its int32 index prefix, 4*N*C*Ho*Wo); the forward "
                       f"gives shape {g.mask_shape}", f"shape {mask.shape}")


def _random(shape: "int | tuple[int, ...]", dtype: Any, rng: np.random.Generator) -> NDArray[Any]:
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def _forward_example(rng: np.random.Generator, dtype: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (_random((2, 3, 9, 8), dtype, rng), [3, 3], [2, 2], [1, 1], [1, 1], False), {}


def _backward_example(rng: np.random.Generator, dtype: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    x = _random((2, 3, 9, 8), dtype, rng)
    out, mask = reference.max_pool2d_with_mask(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
    return (_random(out.shape, dtype, rng), x, mask, [3, 3], [2, 2], [1, 1], [1, 1], False), {}


def _pool_params(tensor_doc: str) -> tuple[Any, ...]:
    # As F.max_pool2d: an int n for any pair means (n, n), and stride, padding and dilation
    # default to the kernel size, 0 and 1 (trailing in the C order: positional calls unchanged).
    return (
        IntArray("kernel_size", "kernelSize", "[kH, kW], or [k] for both", pair=True),
        IntArray("stride", "stride", "[sH, sW], [s] for both, or [] for the kernel size (PyTorch's "
                 "stride=None)", pair=True, default=()),
        IntArray("padding", "padding", "[pH, pW] or [p]: -inf padding on each side, 0 <= p <= kernel // 2",
                 pair=True, default=(0, 0)),
        IntArray("dilation", "dilation", "[1, 1] or [1]: the A2/A3 kernels support no other", pair=True,
                 default=(1, 1)),
        Scalar("ceil_mode", "ceilMode", "round the output size up (a last window starting in the "
               "right padding is dropped), as PyTorch's ceil_mode", c_kind="bool", default=False),
    )


NOTES = (
    "The mask is not PyTorch's indices: see the mask output above, and "
    "ascend_aclnn.mask_to_indices / indices_to_mask to convert. It is int8 only (uint8 is "
    "refused), and the backward's mask must be C-contiguous: the NPU reads its raw bytes. "
    "padding > kernel // 2 and dilation != 1 are refused. NaN and -inf inputs are unsupported "
    "on the NPU; the reference then returns what PyTorch's CPU kernel does (a window holding "
    "NaN gives NaN at its last NaN, an all -inf window gives -inf at its first in-bounds "
    "position). Among equal maxima the first in row-major window order wins, as in PyTorch. "
    "The mask's int32 layout follows the CANN >= 8.3 operator sources (unconfirmed on 8.1). "
    "Values and indices match PyTorch (checked on 4665 cases), its tie rule and ceil mode with "
    "its correction included; a stride of length 0 means stride = kernel.")

# Their op_api gives the kernel a separate tensor holding a raw copy of the mask's address,
# which aclSetInputTensorAddr / aclSetOutputTensorAddr cannot rebind; current CANN refuses
# to make such an executor repeatable.
NOT_REPEATABLE = ("the op_api hands the kernel a raw copy of the mask's address, which the address setters "
                  "cannot rebind, so CANN does not rerun its executor")

def _torch_pool_args(a: Sequence[Any]) -> tuple[Any, ...]:
    """(kernel_size, stride, padding, dilation, ceil_mode) as aten's max_pool2d takes them."""
    kernel, stride, padding, dilation, ceil = a
    stride = as_pair(stride) if isinstance(stride, int) or len(stride) else []  # []: the kernel size
    return as_pair(kernel), stride, as_pair(padding), as_pair(dilation), bool(ceil)


def _torch_pool_backward(torch: Any, a: tuple[Any, ...]) -> Any:
    """PyTorch's backward from its own indices (made here, not timed)."""
    g, x, _, *rest = a
    pool = _torch_pool_args(rest)
    idx = torch.ops.aten.max_pool2d_with_indices(x, *pool)[1]
    return lambda: torch.ops.aten.max_pool2d_with_indices_backward(g, x, *pool, idx)


MAX_POOL2D_WITH_MASK = OpSpec(
    name="max_pool2d_with_mask",
    aclnn="aclnnMaxPool2dWithMask",
    summary="2-D max pooling of (N, C, H, W) or (C, H, W), returning the maxima and the NPU's mask.",
    params=(Tensor("input", "self", "the input, (N, C, H, W) or (C, H, W)", dtypes=FLOATS, acl_format=NCHW),)
    + _pool_params("input"),
    outputs=(
        Output("out", "out", "the maxima, (N, C, Ho, Wo) or (C, Ho, Wo)", dtypes=FLOATS, acl_format=NCHW),
        Output("mask", "indices", MASK_DOC, dtypes=MASK_DTYPES, acl_format=NCHW, zero_fill=True),
    ),
    infer=_infer_forward,
    check=_check_forward,
    reference=reference.max_pool2d_with_mask,
    example=_forward_example,
    notes=NOTES + " Exact for every dtype (a maximum needs no rounding): the value returned is the element "
          "the mask names, bit for bit (+0.0 and -0.0 kept apart).",
    not_repeatable=NOT_REPEATABLE,
    # The mask from the forward fixes which input each output came from: with it fixed
    # the pooling is a linear selection, and the backward must be its adjoint.
    backward=Backward("max_pool2d_with_mask_backward", "adjoint",
                      lambda a, y, g: ((g, a["input"], y[1], a["kernel_size"], a["stride"], a["padding"],
                                        a["dilation"], a["ceil_mode"]), {})),
    differentiable=True,
    torch_function="MaxPool2dWithMask",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten.max_pool2d_with_indices(
        a[0], *_torch_pool_args(a[1:6])),
    selftest=("mask",),
)

MAX_POOL2D_WITH_MASK_BACKWARD = OpSpec(
    name="max_pool2d_with_mask_backward",
    aclnn="aclnnMaxPool2dWithMaskBackward",
    summary="Gradient of max_pool2d_with_mask: scatters grad_output onto the input positions the mask names.",
    params=(
        Tensor("grad_output", "gradOutput", "gradient of the forward output, (N, C, Ho, Wo) or (C, Ho, Wo)",
               dtypes=FLOATS, acl_format=NCHW),
        Tensor("input", "self", "the forward input (its shape and dtype are used)", dtypes=FLOATS,
               acl_format=NCHW),
        Tensor("mask", "indices", "the mask max_pool2d_with_mask returned for these arguments",
               dtypes=MASK_DTYPES, acl_format=NCHW, contiguous=True),
    ) + _pool_params("input"),
    outputs=(Output("out", "gradInput", "gradient of the forward input, the shape of input", dtypes=FLOATS,
                    acl_format=NCHW),),
    infer=lambda a: [(a.input.shape, a.input.dtype)],
    check=_check_backward,
    reference=reference.max_pool2d_with_mask_backward,
    example=_backward_example,
    notes=NOTES + " grad_input[n, c].flat[idx] += grad_output[n, c, oh, ow] over the mask's int32 "
          "indices, summed in float32 in (n, c, oh, ow) order and rounded once (the NPU's atomic "
          "adds make its order, and so the last float32 bit where windows overlap, vary). For a "
          "1x1 kernel both backends compute grad_input[..., oh*sH, ow*sW] = grad_output (the "
          "NPU reads its 1x1 mask as a bitmask; those mask bytes are unconfirmed on hardware, "
          "so a mask from elsewhere may give another result there). A mask whose int32 prefix "
          "names a position outside the input plane is a kernel fault: AclRtAicoreExceptionError "
          "(507015), raised by the call on the numpy backend and at the next synchronisation "
          "on the npu backend. A kernel_size of the wrong length is 161001, as in the op_api.",
    not_repeatable=NOT_REPEATABLE,
    torch_baseline=lambda torch, a: _torch_pool_backward(torch, a),
    selftest=("mask", "determinism"),
)
