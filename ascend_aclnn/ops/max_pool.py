"""MaxPool2dWithMask and its backward (checks in the order of the
ops-nn op_api sources, aclnn_max_pool2d_with_indices[_backward].cpp, on Atlas A2/A3)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ..cann.constants import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclFormat
from ..reference import max_pool as reference
from ..tensors import bfloat16, dtype_name
from .rules import (Env, Expr, FirstChecks, Rule, Rules, dim, dtype_in, format_in, is_dtype, item, leading, length,
                    ndim, numel, public_format, require, same_dims, same_dtype, same_format, scalar, shape_is, u64,
                    where)
from .spec import Args, Backward, IntArray, OpSpec, Output, Scalar, Tensor, as_pair

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


# The pooling's geometry, as both op_apis compute it (CheckShape; a length-1 array is
# both axes, a length-0 stride the kernel).
def _second(name: str) -> Expr:
    return where(length(name).eq(1), item(name, 0), item(name, 1))


KH, KW = item("kernel_size", 0), _second("kernel_size")
SH = where(length("stride").eq(0), KH, item("stride", 0))
SW = where(length("stride").eq(0), KW, _second("stride"))
PH, PW = item("padding", 0), _second("padding")
DH, DW = item("dilation", 0), _second("dilation")
C, H, W = dim("input", -3), dim("input", -2), dim("input", -1)
_CEIL = scalar("ceil_mode").ne(0)


def _pooled(size: Expr, k: Expr, s: Expr, p: Expr) -> Expr:
    """Output length along one axis (dilation 1), with ceil mode's correction: a last
    window that would start in the right padding is dropped."""
    out = (size + 2 * p - (k - 1) - 1 + where(_CEIL, s - 1, 0)) // s + 1
    return where(_CEIL & ((out - 1) * s >= size + p), out - 1, out)


HO, WO = _pooled(H, KH, SH, PH), _pooled(W, KW, SW, PW)
OUT_SHAPE = leading("input", -2) + (HO, WO)
MASK_SHAPE = leading("input", -2) + (KH * KW, ((HO * WO + 15) // 16 + 1) * 32)  # bytes: (ceil(Ho*Wo/16) + 1) * 32
_PLANES = where(ndim("input").eq(4), dim("input", 0), 1) * C
_PREFIX = 4 * _PLANES * HO * WO  # the backward kernel's int32 reads from the mask, in bytes


def _valid(a: Args) -> bool:
    """Whether the geometry is defined (the checks refuse the call otherwise)."""
    return a.input.ndim in (3, 4) and len(a.kernel_size) in (1, 2) and len(a.stride) in (0, 1, 2) \
        and len(a.padding) in (1, 2) and min(KH.py(a), KW.py(a), SH.py(a), SW.py(a)) > 0


def _infer_forward(a: Args) -> list[tuple[tuple[int, ...], Any]]:
    x = a.input
    if not _valid(a):  # the checks will refuse these arguments; placeholders until then
        return [(x.shape, x.dtype), ((0,), np.int8)]
    return [(OUT_SHAPE.py(a), x.dtype), (MASK_SHAPE.py(a), np.int8)]


def _got(name: str) -> Callable[[Env], str]:
    return lambda e: f"{e[name]}"


def _shape(name: str) -> Callable[[Env], str]:
    return lambda e: f"shape {e[name].shape}"


def _mask_dtype(t: str, c: str, written: bool) -> Rule:
    return require(is_dtype(t, np.int8), t, "dtype int8 (the mask's only dtype)",
                   lambda e: dtype_name(e[t].dtype) + _mask_dtype_hint(e[t].dtype, written),
                   c + " dtype must be ACL_INT8 (the mask), got {" + c + ".dtype}")


def _format_rules(t: str, c: str) -> tuple[Rule, ...]:
    """The simulator's: a private format is refused by the real op, and a layout the
    simulator does not model (NHWC and the like) by the simulator."""
    return (public_format(t, c_says=c + " has the private format {" + c + ".format_number}: only NCHW (CHW) is "
                          "supported"),
            format_in(t, (NCHW, AclFormat.ACL_FORMAT_ND, AclFormat.ACL_FORMAT_NCL),
                      c + " format {" + c + ".format_number} is not simulated: use ACL_FORMAT_NCHW (0), ACL_FORMAT_ND "
                      "(2) or, for 3-D tensors, ACL_FORMAT_NCL (47)"))


def _kernel_length(status: int, note: str) -> Rule:
    return require(length("kernel_size").eq(1) | length("kernel_size").eq(2), "kernel_size", "1 or 2 values",
                   _got("kernel_size"), "kernelSize must have 1 or 2 elements, got {kernelSize.n}" + note,
                   status=status)


def _pool_rules() -> tuple[Rule, ...]:
    """The op_api's CheckShape, from the array lengths to the dilation."""
    return (
        require(length("stride") <= 2, "stride", "0, 1 or 2 values (none means: the kernel size)", _got("stride"),
                "stride must have 0, 1 or 2 elements, got {stride.n}"),
        require(length("padding").eq(1) | length("padding").eq(2), "padding", "1 or 2 values", _got("padding"),
                "padding must have 1 or 2 elements, got {padding.n}"),
        require(length("dilation").eq(1) | length("dilation").eq(2), "dilation", "1 or 2 values", _got("dilation"),
                "dilation must have 1 or 2 elements, got {dilation.n}"),
        require((KH > 0) & (KW > 0), "kernel_size", "kH, kW > 0", _got("kernel_size"),
                "kernel size must be > 0, got kH={kh}, kW={kw}", c_values={"kh": KH, "kw": KW}),
        require((SH > 0) & (SW > 0), "stride", "sH, sW > 0", _got("stride"),
                "stride must be > 0, got sH={sh}, sW={sw}", c_values={"sh": SH, "sw": SW}),
        require((PH >= 0) & (PH <= KH // 2) & (PW >= 0) & (PW <= KW // 2), "padding",
                lambda e: f"0 <= padding <= kernel_size // 2 on each axis (kernel {(KH.py(e), KW.py(e))})",
                _got("padding"), "padding must be >= 0 and <= half the kernel size, got kH={kh}, kW={kw}, "
                "padH={ph}, padW={pw}", c_values={"kh": KH, "kw": KW, "ph": PH, "pw": PW}),
        require(DH.eq(1) & DW.eq(1), "dilation", "1 (the only dilation the Atlas A2/A3 kernels support)",
                _got("dilation"), "dilation must be 1, got dilationH={dh}, dilationW={dw}",
                c_values={"dh": DH, "dw": DW}),
    )


def _plane_rules() -> tuple[Rule, ...]:
    return (
        require(C.ne(0) & H.ne(0) & W.ne(0), "input", "C, H, W > 0 (only N may be 0)", _shape("input"),
                "expected self with a non-zero C, H and W (only N may be 0), got C={c}, H={h}, W={w}",
                c_values={"c": C, "h": H, "w": W}),
        require((HO > 0) & (WO > 0), "input",
                lambda e: f"an output of at least 1x1, got {HO.py(e)}x{WO.py(e)} for H, W = {(H.py(e), W.py(e))} with "
                          f"kernel {(KH.py(e), KW.py(e))}, stride {(SH.py(e), SW.py(e))}, padding "
                          f"{(PH.py(e), PW.py(e))}", _shape("input"),
                "given input size {c}x{h}x{w}, the output size {c}x{ho}x{wo} is too small",
                c_values={"c": C, "h": H, "w": W, "ho": HO, "wo": WO}),
    )


_RANK = ndim("input").eq(3) | ndim("input").eq(4)

FORWARD_RULES = Rules(
    _kernel_length(ACLNN_ERR_PARAM_INVALID, ""),  # checked first, before the other pointers
    dtype_in("input", FLOATS),
    same_dtype("out", "input"),
    _mask_dtype("mask", "indices", written=True),
    same_format("input", "out"),
    *_format_rules("input", "self"),
    require(_RANK, "input", "a 3-D (C, H, W) or 4-D (N, C, H, W) tensor", _shape("input"),
            "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got {self.shape}"),
    *_pool_rules(),
    *_plane_rules(),
    require(shape_is("out", OUT_SHAPE), "out", lambda e: f"shape {OUT_SHAPE.py(e)}", _shape("out"),
            "out shape {out.shape} must be {want}", c_values={"want": OUT_SHAPE}),
    require(shape_is("mask", MASK_SHAPE), "mask",
            lambda e: f"shape {MASK_SHAPE.py(e)} (N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32)", _shape("mask"),
            "indices shape {indices.shape} must be {want} ([N,] C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32)",
            c_values={"want": MASK_SHAPE}),
    first=FirstChecks(("kernelSize", "self", "out"), ("kernelSize",), 1),
    null_order=("stride", "padding", "dilation", "indices"),
    exports={"ho": HO, "wo": WO, "kh": KH, "kw": KW, "sh": SH, "sw": SW, "ph": PH, "pw": PW},
)

BACKWARD_RULES = Rules(
    _kernel_length(ACLNN_ERR_PARAM_NULLPTR, " (reported as NULLPTR, as the real op does)"),  # (sic)
    dtype_in("input", FLOATS),
    same_dtype("grad_output", "input"),
    same_dtype("out", "input"),
    _mask_dtype("mask", "indices", written=False),
    same_format("input", "grad_output", "out", c_says="formats of self ({self.format_number}), gradOutput "
                "({gradOutput.format_number}) and gradInput ({gradInput.format_number}) must be equal"),
    *_format_rules("input", "self"),
    *_format_rules("mask", "indices"),
    *(require(ndim(t).eq(3) | ndim(t).eq(4), t, "a 3-D or 4-D tensor", _shape(t),
              c + " must be 3-D or 4-D, got {" + c + ".shape}")
      for t, c in (("input", "self"), ("out", "gradInput"), ("grad_output", "gradOutput"), ("mask", "indices"))),
    *_pool_rules(),
    require(same_dims("out", "input", 0, 0), "out", lambda e: f"shape {e['input'].shape} (the shape of input)",
            _shape("out"), "gradInput shape {gradInput.shape} must equal self shape {self.shape}"),
    *_plane_rules(),
    require(shape_is("grad_output", OUT_SHAPE), "grad_output",
            lambda e: f"shape {OUT_SHAPE.py(e)} (the forward's output shape)", _shape("grad_output"),
            "gradOutput shape {gradOutput.shape} must be the forward's output shape {want}",
            c_values={"want": OUT_SHAPE}),
    # Not an op_api check (it ignores the mask's shape): the kernel reads N*C*Ho*Wo int32
    # values from the mask's bytes, so a smaller mask would be read out of bounds.
    require((KH * KW).eq(1) | (numel("mask") >= _PREFIX), "mask",
            lambda e: f"at least {_PREFIX.py(e)} bytes (its int32 index prefix, 4*N*C*Ho*Wo); the forward gives "
                      f"shape {MASK_SHAPE.py(e)}", _shape("mask"),
            "indices {indices.shape} holds {bytes} bytes, fewer than the {prefix} of its int32 index prefix "
            "(4*N*C*Ho*Wo)", c_values={"bytes": numel("mask"), "prefix": u64(_PREFIX)}),
    first=FirstChecks(("kernelSize", "self", "gradOutput"), ("kernelSize",), 1),
    null_order=("indices", "stride", "padding", "dilation", "gradInput"),
    exports={"ho": HO, "wo": WO, "kh": KH, "kw": KW, "sh": SH, "sw": SW, "ph": PH, "pw": PW},
)


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
    check=FORWARD_RULES,
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
    check=BACKWARD_RULES,
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
