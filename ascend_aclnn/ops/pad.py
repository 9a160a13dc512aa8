"""ReplicationPad2d and its backward. Checks run in the order of the ops-math op_api
sources (conversion/pad_v3 aclnn_replication_pad2d.cpp and conversion/pad_v3_grad_replicate
aclnn_pad2d_backward.cpp), with their statuses."""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..reference.pad import replication_pad2d, replication_pad2d_backward
from ..tensors import bfloat16
from .rules import (Expr, Rule, Rules, any_empty, dim, dtype_in, has_zero, is_dtype, item, leading, length, ndim,
                    public_format, require, same_dims, same_dtype, same_format)
from .spec import Args, Backward, IntArray, OpSpec, Output, Tensor

BACKWARD_DTYPES = (np.dtype(np.float32), np.dtype(np.float16), bfloat16, np.dtype(np.float64),
                   np.dtype(np.complex64), np.dtype(np.complex128))
FORWARD_DTYPES = BACKWARD_DTYPES + tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64))
BF16_MAX_PAD = 7  # the bfloat16 backward kernel's limit when H is padded


def _rank_rules(other: str, c_other: str) -> tuple[Rule, ...]:
    """Both ops', in the op_api's order: input 3-D or 4-D, `other` (out, grad_output) of
    its rank, four pads."""
    return (
        require(ndim("input").eq(3) | ndim("input").eq(4), "input", "a 3-D (C, H, W) or 4-D (N, C, H, W) tensor",
                lambda e: f"shape {e['input'].shape}", "self must be 3-D or 4-D, got {self.ndim}-D {self.shape}"),
        require(ndim(other).eq(ndim("input")), other, lambda e: f"a {e['input'].ndim}-D tensor like input",
                lambda e: f"shape {e[other].shape}",
                c_other + " must have self's rank {self.ndim}, got {" + c_other + ".ndim}-D {" + c_other + ".shape}"),
        require(length("padding").eq(4), "padding", "4 values [left, right, top, bottom]",
                lambda e: f"{list(e['padding'])}", "padding length should be 4, got {padding.n}"),
    )


# padding = [left, right, top, bottom]: the padded H and W, and the padded shape (the
# forward's out, which infer gives).
_H_OUT = dim("input", -2) + item("padding", 2) + item("padding", 3)
_W_OUT = dim("input", -1) + item("padding", 0) + item("padding", 1)
PADDED = leading("input", -2) + (_H_OUT, _W_OUT)


def _padded(t: str) -> Expr:
    """t ends with input's H + top + bottom, W + left + right."""
    return dim(t, -2).eq(_H_OUT) & dim(t, -1).eq(_W_OUT)


def _padded_shape(a: Args) -> tuple[int, ...]:
    """PADDED, or input's shape where it is not defined (the checks then reject the call)."""
    return PADDED.py(a) if a.input.ndim >= 2 and len(a.padding) == 4 else a.input.shape


def _empty_rules(*tensors: str) -> tuple[Rule, ...]:
    """The op_api's empty-tensor rule: with any empty tensor, a 3-D input is an error and a
    4-D input must have C, H, W > 0 (only N = 0 succeeds, computing nothing)."""
    empty = any_empty("input", *tensors)
    shapes = lambda e: "shapes " + ", ".join(str(e[t].shape) for t in ("input",) + tensors)  # noqa: E731
    return (
        require(~(empty & ndim("input").eq(3)), "input",
                "no empty tensor with a 3-D input (only a 4-D input may have N = 0)", shapes,
                "empty tensors are only accepted with a 4-D self whose N is 0 (self is 3-D, {self.shape})"),
        require(~(empty & has_zero("input", 1)), "input", "C, H, W > 0 (only N may be 0)",
                lambda e: f"shape {e['input'].shape}", "self must have C, H, W > 0 (only N may be 0), got {self.shape}"),
    )


FORWARD_RULES = Rules(
    same_format("input", "out"),
    dtype_in("input", FORWARD_DTYPES),
    dtype_in("out", FORWARD_DTYPES),
    same_dtype("out", "input"),
    *_rank_rules("out", "out"),
    require(same_dims("out", "input", 0, -2) & _padded("out"), "out",
            lambda e: f"shape {PADDED.py(e)} (input's leading dims, H + top + bottom, "
                      "W + left + right)",
            lambda e: f"shape {e['out'].shape}",
            "out shape {out.shape} must be self's leading dims then H + top + bottom, W + left + right "
            "(self {self.shape}, padding {padding})"),
    require((_H_OUT >= 0) & (_W_OUT >= 0), "padding",
            lambda e: f"pads that leave H + top + bottom >= 0 and W + left + right >= 0 for input shape "
                      f"{e['input'].shape}",
            lambda e: f"{list(e['padding'])} (output shape {PADDED.py(e)})",
            "padding {padding} leaves a negative H or W for self {self.shape}"),
    *_empty_rules("out"),
)

_PADS = [item("padding", k) for k in range(4)]
# The bfloat16 backward's rule: no negative pad, and either no H padding or no pad over 7.
_BF16_PADDING_OK = (_PADS[0] >= 0) & (_PADS[1] >= 0) & (_PADS[2] >= 0) & (_PADS[3] >= 0) & (
    (_PADS[2].eq(0) & _PADS[3].eq(0)) |
    ((_PADS[0] <= BF16_MAX_PAD) & (_PADS[1] <= BF16_MAX_PAD) & (_PADS[2] <= BF16_MAX_PAD) & (_PADS[3] <= BF16_MAX_PAD)))

BACKWARD_RULES = Rules(
    # dtypes, in the op_api's order: gradInput, gradOutput, self listed, then both equal self's
    dtype_in("grad_input", BACKWARD_DTYPES),
    dtype_in("grad_output", BACKWARD_DTYPES),
    dtype_in("input", BACKWARD_DTYPES),
    same_dtype("grad_input", "input"),
    same_dtype("grad_output", "input"),
    public_format("grad_output", "input", "grad_input",
                  c_says="format only supports ND (gradOutput, self and gradInput use no private layout)"),
    same_format("input", "grad_output", "grad_input",
                c_says="formats of gradOutput {gradOutput.format}, self {self.format} and gradInput "
                       "{gradInput.format} must be equal"),
    require(same_dims("grad_input", "input", 0, 0), "grad_input", lambda e: f"shape {e['input'].shape} (the shape of input)",
            lambda e: f"shape {e['grad_input'].shape}", "gradInput shape {gradInput.shape} must equal self shape {self.shape}"),
    *_rank_rules("grad_output", "gradOutput"),
    require(~is_dtype("grad_output", bfloat16) | _BF16_PADDING_OK, "padding",
            f"for bfloat16, pads >= 0 and either top = bottom = 0 or every pad <= {BF16_MAX_PAD}",
            lambda e: f"{list(e['padding'])}",
            "bf16 needs padding >= 0 and either top = bottom = 0 or every pad <= " + str(BF16_MAX_PAD) + ", got {padding}"),
    require(_padded("grad_output"), "grad_output",
            lambda e: f"H, W = {(_H_OUT.py(e), _W_OUT.py(e))} (input's H + top + bottom, W + left + right)",
            lambda e: f"shape {e['grad_output'].shape}",
            "gradOutput shape {gradOutput.shape} must end with H + top + bottom, W + left + right "
            "(self {self.shape}, padding {padding})"),
    *_empty_rules("grad_output", "grad_input"),
    # Not an op_api check (it compares only H and W; the NPU's final copy into gradInput
    # then has mismatched shapes): the leading dims must agree.
    require(same_dims("grad_output", "input", 0, -2), "grad_output",
            lambda e: f"leading dims {e['input'].shape[:-2]} as in input", lambda e: f"shape {e['grad_output'].shape}",
            "gradOutput {gradOutput.shape} and self {self.shape} must have the same leading dims"),
    null_order=("self", "gradOutput", "gradInput", "padding"),
)


def _random(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator) -> NDArray[Any]:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0 if dtype.kind == "u" else -100, 100, shape), dtype=dtype)
    values: NDArray[Any] = rng.standard_normal(shape)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype) if dtype.kind == "c" else values.astype(np.float32).astype(dtype)


PADDING_DOC = ("[left, right, top, bottom]: left/right pad the last dim (W), top/bottom the "
               "second-to-last (H); larger than the dims repeats the edge, negative crops")

NOTES_COMMON = ("Pads larger than the input dims are accepted (the clamp rule repeats the edge), "
                "though the aclnn doc lists them as errors. Negative pads crop, as in PyTorch; "
                "the NPU's result for negative pads is unconfirmed (the op_api accepts them except "
                "for bfloat16 in the backward, and they run on the AICPU kernel). A 3-D input with "
                "any empty tensor is an error; a 4-D input with N = 0 succeeds and computes nothing.")

REPLICATION_PAD2D_BACKWARD = OpSpec(
    name="replication_pad2d_backward",
    aclnn="aclnnReplicationPad2dBackward",
    summary="Gradient of replication_pad2d: sums grad_output over every output position that "
            "read each input position.",
    params=(
        Tensor("grad_output", "gradOutput", "gradient of the forward output, (N, C, Hout, Wout) or "
               "(C, Hout, Wout) with Hout = H + top + bottom, Wout = W + left + right",
               dtypes=BACKWARD_DTYPES),
        Tensor("input", "self", "the forward input, (N, C, H, W) or (C, H, W); gives the result's "
               "shape and dtype", dtypes=BACKWARD_DTYPES),
        IntArray("padding", "padding", PADDING_DOC, repeat_int=4),
    ),
    outputs=(Output("grad_input", "gradInput", "gradient of the forward input, the shape and dtype of input",
                    dtypes=BACKWARD_DTYPES,
                    # H + top + bottom or W + left + right of 0 (cropped away) with a 4-D
                    # input: the op_api succeeds without running a kernel.
                    zero_fill=lambda a: a.grad_output is not None and 0 in a.grad_output.shape),),
    infer=lambda a: [(a.input.shape, a.input.dtype)],
    check=BACKWARD_RULES,
    reference=replication_pad2d_backward,
    example=lambda rng, dtype: ((_random((2, 3, 9, 10), dtype, rng), _random((2, 3, 5, 7), dtype, rng),
                                 [1, 2, 3, 1]), {}),
    differentiable=True,  # linear in grad_output: its derivative is the forward
    torch_function="ReplicationPad2dBackward",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten.replication_pad2d_backward(a[0], a[1], list(a[2])),
    selftest=("negative_pad",),
    notes="Sums rows first, then columns, in ascending order; float16/bfloat16 accumulate in "
          "float32 and round once (on the NPU some float16 tilings may round an intermediate "
          "row sum to float16 first). bfloat16 requires pads >= 0 and, when top or bottom is "
          "non-zero, every pad <= 7. The leading dims of grad_output must equal input's (the "
          "op_api compares only H and W). " + NOTES_COMMON,
)

REPLICATION_PAD2D = OpSpec(
    name="replication_pad2d",
    aclnn="aclnnReplicationPad2d",
    summary="Pads the last two dims of a 3-D or 4-D array by repeating its edge values.",
    params=(
        Tensor("input", "self", "the input, (N, C, H, W) or (C, H, W)", dtypes=FORWARD_DTYPES),
        IntArray("padding", "padding", PADDING_DOC, repeat_int=4),
    ),
    outputs=(Output("out", "out", "the padded array, (..., H + top + bottom, W + left + right)",
                    dtypes=FORWARD_DTYPES),),
    infer=lambda a: [(_padded_shape(a), a.input.dtype)],
    check=FORWARD_RULES,
    reference=replication_pad2d,
    example=lambda rng, dtype: ((_random((2, 3, 5, 7), dtype, rng), [1, 2, 3, 1]), {}),
    backward=Backward("replication_pad2d_backward", "adjoint",
                      lambda a, y, g: ((g, a["input"], a["padding"]), {})),
    differentiable=True,
    torch_function="ReplicationPad2d",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten.replication_pad2d(a[0], list(a[1])),
    selftest=("negative_pad", "im2col_pad"),
    notes="out[..., i, j] = input[..., clamp(i - top, 0, H - 1), clamp(j - left, 0, W - 1)]: a "
          "gather, exact for every dtype; it matches PyTorch on 702 checked shape/pad cases. " + NOTES_COMMON,
)
