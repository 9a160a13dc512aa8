"""ReplicationPad2d and its backward. Checks run in the order of the ops-math op_api
sources (conversion/pad_v3 aclnn_replication_pad2d.cpp and conversion/pad_v3_grad_replicate
aclnn_pad2d_backward.cpp), with their statuses."""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..reference import pad as reference
from ..tensors import bfloat16, dtype_name
from .spec import Args, Backward, Checker, IntArray, OpSpec, Output, Tensor, TensorArg, dtype_list

BACKWARD_DTYPES = (np.dtype(np.float32), np.dtype(np.float16), bfloat16, np.dtype(np.float64),
                   np.dtype(np.complex64), np.dtype(np.complex128))
FORWARD_DTYPES = BACKWARD_DTYPES + tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64))
BF16_MAX_PAD = 7  # the bfloat16 backward kernel's limit when H is padded


def _padded_shape(x: TensorArg, padding: tuple[int, ...]) -> tuple[int, ...]:
    """(leading dims..., H + top + bottom, W + left + right); x's shape when that is not
    defined (the checks then reject the call)."""
    if x.ndim < 2 or len(padding) != 4:
        return x.shape
    left, right, top, bottom = padding
    return x.shape[:-2] + (x.shape[-2] + top + bottom, x.shape[-1] + left + right)


def _check_rank(check: Checker, name: str, t: TensorArg) -> None:
    if t.ndim not in (3, 4):
        check.mismatch(name, "a 3-D (C, H, W) or 4-D (N, C, H, W) tensor", f"shape {t.shape}")


def _check_padding_length(check: Checker, padding: tuple[int, ...]) -> None:
    if len(padding) != 4:
        check.mismatch("padding", "4 values [left, right, top, bottom]", f"{list(padding)}")


def _check_empty(check: Checker, name: str, x: TensorArg, *others: TensorArg) -> None:
    """The op_api's empty-tensor rule: with any empty tensor, a 3-D input is an error and a
    4-D input must have C, H, W > 0 (only N = 0 succeeds, computing nothing)."""
    if not any(0 in t.shape for t in (x,) + others):
        return
    if x.ndim == 3:
        check.mismatch(name, "no empty tensor with a 3-D input (only a 4-D input may have N = 0)",
                       "shapes " + ", ".join(str(t.shape) for t in (x,) + others))
    if 0 in x.shape[1:]:
        check.mismatch(name, "C, H, W > 0 (only N may be 0)", f"shape {x.shape}")


def _check_forward(a: Args, check: Checker) -> None:
    x, out = a.input, a.outputs[0]
    # format (self, out equal) comes first in the op_api: always ND here
    check.dtype("input", x, FORWARD_DTYPES)
    check.dtype("out", out, FORWARD_DTYPES)
    check.same_dtype("out", out, "input", x)
    _check_rank(check, "input", x)
    if out.ndim != x.ndim:  # only a given out can differ
        check.mismatch("out", f"a {x.ndim}-D tensor like input", f"shape {out.shape}")
    _check_padding_length(check, a.padding)
    expected = _padded_shape(x, a.padding)
    if out.given and out.shape != expected:
        check.mismatch("out", f"shape {expected} (input's leading dims, H + top + bottom, W + left + right)",
                       f"shape {out.shape}")
    if min(expected) < 0:
        check.mismatch("padding", f"pads that leave H + top + bottom >= 0 and W + left + right >= 0 for "
                       f"input shape {x.shape}", f"{list(a.padding)} (output shape {expected})")
    _check_empty(check, "input", x, out)


def _bf16_padding_ok(padding: tuple[int, ...]) -> bool:
    """The bfloat16 backward's rule: no negative pad, and either no H padding or no pad
    over 7."""
    if min(padding) < 0:
        return False
    return padding[2] == 0 and padding[3] == 0 or max(padding) <= BF16_MAX_PAD


def _check_backward(a: Args, check: Checker) -> None:
    g, x, out = a.grad_output, a.input, a.outputs[0]
    # dtypes, in the op_api's order: gradInput, gradOutput, self listed, then both equal
    # self's. An allocated out has input's dtype: input's own check speaks for it.
    if out.given and out.dtype not in BACKWARD_DTYPES:
        check.mismatch("out", f"dtype {dtype_list(BACKWARD_DTYPES)}", dtype_name(out.dtype))
    check.dtype("grad_output", g, BACKWARD_DTYPES)
    check.dtype("input", x, BACKWARD_DTYPES)
    check.same_dtype("out", out, "input", x)
    check.same_dtype("grad_output", g, "input", x)
    # formats (private ones rejected, all equal) come next: always ND here
    if out.shape != x.shape:  # only a given out can differ
        check.mismatch("out", f"shape {x.shape} (the shape of input)", f"shape {out.shape}")
    _check_rank(check, "input", x)
    if g.ndim != x.ndim:
        check.mismatch("grad_output", f"a {x.ndim}-D tensor like input", f"shape {g.shape}")
    _check_padding_length(check, a.padding)
    if g.dtype == bfloat16 and not _bf16_padding_ok(a.padding):
        check.mismatch("padding", f"for bfloat16, pads >= 0 and either top = bottom = 0 or every pad "
                       f"<= {BF16_MAX_PAD}", f"{list(a.padding)}")
    expected = _padded_shape(x, a.padding)
    if g.shape[-2:] != expected[-2:]:
        check.mismatch("grad_output", f"H, W = {expected[-2:]} (input's H + top + bottom, W + left + right)",
                       f"shape {g.shape}")
    _check_empty(check, "input", x, g, out)
    # Not an op_api check (it compares only H and W; the NPU's final copy into gradInput
    # then has mismatched shapes): the leading dims must agree.
    if g.shape[:-2] != x.shape[:-2]:
        check.mismatch("grad_output", f"leading dims {x.shape[:-2]} as in input", f"shape {g.shape}")


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
    check=_check_backward,
    reference=reference.replication_pad2d_backward,
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
    infer=lambda a: [(_padded_shape(a.input, a.padding), a.input.dtype)],
    check=_check_forward,
    reference=reference.replication_pad2d,
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
