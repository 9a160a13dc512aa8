"""Im2col and Im2colBackward (PyTorch's unfold and fold). Checks in the order of the
ops-math (Im2col) and ops-cv (Im2colBackward) op_api sources."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..reference.im2col import im2col as reference_forward, im2col_backward as reference_backward
from ..tensors import bfloat16
from .spec import Args, Backward, Checker, IntArray, OpSpec, Output, Tensor, as_pair, shape_of

INT64_MAX = 2**63 - 1
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)
ARRAYS = ("kernel_size", "dilation", "padding", "stride")


def _trunc_div(x: int, y: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _floor_blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    """Im2col's count of block positions along one axis: floor division, as its op_api."""
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _trunc_blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    """Im2colBackward's count: (size + 2p - d(k-1) - 1 + s) / s with C's truncating
    division, which is 0 rather than negative just below the first block."""
    return _trunc_div(size + 2 * p - d * (k - 1) - 1 + s, s)


def _check_arrays(a: Args, check: Checker, names: Sequence[str]) -> None:
    """Array lengths in the op_api's order, then kernel, stride, dilation > 0 and padding >= 0."""
    for name in names:
        if len(a[name]) != 2:
            check.mismatch(name, "2 values (H, W)", f"{list(a[name])}")
    for name, low in (("kernel_size", 1), ("stride", 1), ("dilation", 1), ("padding", 0)):
        if min(a[name]) < low:
            check.mismatch(name, f"values >= {low}", f"{list(a[name])}")


def _check_extent(a: Args, check: Checker, sizes: Sequence[int], what: str) -> None:
    """Not an op_api check: the op_api computes the block counts in int64, where a padded
    extent or a kernel extent past 2**63 - 1 overflows (undefined results); refused."""
    for axis in (0, 1):
        k, d, p = a.kernel_size[axis], a.dilation[axis], a.padding[axis]
        if d * (k - 1) + 1 > INT64_MAX:
            check.mismatch("kernel_size", f"dilation*(kernel_size-1)+1 <= 2**63-1 on axis {axis}",
                           f"kernel_size {list(a.kernel_size)}, dilation {list(a.dilation)}")
        if sizes[axis] + 2 * p > INT64_MAX:
            check.mismatch("padding", f"{what} + 2*padding <= 2**63-1 on axis {axis}",
                           f"{what} {list(sizes)}, padding {list(a.padding)}")


def _geometry(a: Args) -> str:
    return ", ".join(f"{n} {list(a[n])}" for n in ARRAYS)


def _pairs(a: Args, names: Sequence[str]) -> list[tuple[int, int]]:
    """The arrays as (H, W) pairs, padded with 1 where too short, for shape inference
    only: check() rejects every malformed array before the inferred shape is used."""
    return [tuple((list(a[n]) + [1, 1])[:2]) for n in names]


# ---- im2col_backward ---------------------------------------------------------------------------

def _infer_backward(a: Args) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
    g = a.grad_output
    if g.ndim < 2:
        return [(g.shape, g.dtype)]
    (h, w), (kh, kw) = _pairs(a, ("input_size", "kernel_size"))
    c = g.shape[-2] // (kh * kw) if kh * kw > 0 else g.shape[-2]
    return [(g.shape[:-2] + (c, h, w), g.dtype)]


def _check_backward(a: Args, check: Checker) -> None:
    g, out = a.grad_output, a.outputs[0]
    check.dtype("grad_output", g, FLOATS)
    check.dtype("out", out, FLOATS)
    if g.ndim not in (2, 3):
        check.mismatch("grad_output", "a 2-D (C*kH*kW, L) or 3-D (N, C*kH*kW, L) tensor", f"shape {g.shape}")
    if out.given and out.ndim != g.ndim + 1:
        check.mismatch("out", f"a {g.ndim + 1}-D tensor (one dimension more than grad_output)", f"shape {out.shape}")
    _check_arrays(a, check, ("input_size",) + ARRAYS)
    _check_extent(a, check, a.input_size, "input_size")
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (a[n] for n in ("input_size",) + ARRAYS)
    rows, length = g.shape[-2:]
    if rows % (kh * kw):
        check.mismatch("grad_output", f"grad_output.shape[-2] divisible by kH*kW = {kh * kw}", f"shape {g.shape}")
    ho, wo = _trunc_blocks(h, kh, dh, ph, sh), _trunc_blocks(w, kw, dw, pw, sw)
    blocks = (ho * wo) % 2**64  # the op_api multiplies the two counts as size_t
    if length != blocks:
        check.mismatch("grad_output", f"grad_output.shape[-1] = {blocks}, the number of blocks ({ho} x {wo}) "
                       f"for input_size {list(a.input_size)} with {_geometry(a)}", f"shape {g.shape}")
    if ho * wo != 0 and min(ho, wo) < 0:
        # Binding and simulator strictness: two negative counts multiply to a positive
        # size_t that the op_api accepts; there is no image for such blocks.
        check.mismatch("input_size", f"a size that fits a block of {_geometry(a)}",
                       f"input_size {list(a.input_size)} ({ho} x {wo} blocks)")
    expected = g.shape[:-2] + (rows // (kh * kw), h, w)
    if not out.given and min(h, w) < 0:  # no out can have this shape; the op_api's out check says so
        check.mismatch("input_size", "values >= 0 (the out shape)", f"{list(a.input_size)}")
    if out.given and out.shape != expected:
        check.mismatch("out", f"shape {expected} ((N,) C, *input_size)", f"shape {out.shape}")


def _empty_grad(a: Args) -> bool:
    """The NPU writes nothing for an empty grad_output (None: a raw C-level test call)."""
    return a.grad_output is not None and 0 in a.grad_output.shape


# ---- im2col ------------------------------------------------------------------------------------

def _infer_forward(a: Args) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
    x = a.input
    if x.ndim < 3:
        return [(x.shape, x.dtype)]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pairs(a, ARRAYS)
    ho = _floor_blocks(x.shape[-2], kh, dh, ph, max(sh, 1))
    wo = _floor_blocks(x.shape[-1], kw, dw, pw, max(sw, 1))
    return [(x.shape[:-3] + (x.shape[-3] * max(kh * kw, 0), max(ho, 0) * max(wo, 0)), x.dtype)]


def _check_forward(a: Args, check: Checker) -> None:
    x, out = a.input, a.outputs[0]
    check.dtype("input", x, FLOATS)
    if x.ndim not in (3, 4):
        check.mismatch("input", "a 3-D (C, H, W) or 4-D (N, C, H, W) tensor", f"shape {x.shape}")
    if min(x.shape[-3:]) <= 0:
        check.mismatch("input", "C, H and W > 0 (only N may be 0)", f"shape {x.shape}")
    _check_arrays(a, check, ARRAYS)
    _check_extent(a, check, x.shape[-2:], "(H, W)")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (a[n] for n in ARRAYS)
    ho, wo = _floor_blocks(x.shape[-2], kh, dh, ph, sh), _floor_blocks(x.shape[-1], kw, dw, pw, sw)
    if ho < 1 or wo < 1:
        check.mismatch("input", f"H, W that fit at least one block of {_geometry(a)}",
                       f"shape {x.shape} ({ho} x {wo} blocks)")
    expected = x.shape[:-3] + (x.shape[-3] * kh * kw, ho * wo)
    if out.given and out.shape != expected:
        check.mismatch("out", f"shape {expected} ((N,) C*kH*kW, L)", f"shape {out.shape}")
    # Binding and simulator strictness: this op_api casts to out's dtype unchecked.
    check.dtype("out", out, FLOATS)


def _random(shape: "int | tuple[int, ...]", dtype: Any, rng: np.random.Generator) -> NDArray[Any]:
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# As F.unfold / F.fold: an int n for any pair means (n, n), and dilation, padding and stride
# default to 1, 0 and 1 (trailing in the C order, so positional calls are unchanged).
ARRAY_PARAMS = (
    IntArray("kernel_size", "kernelSize", "(kH, kW), each > 0", pair=True),
    IntArray("dilation", "dilation", "(dH, dW), each > 0", pair=True, default=(1, 1)),
    IntArray("padding", "padding", "(pH, pW) zeros added on both sides, each >= 0", pair=True, default=(0, 0)),
    IntArray("stride", "stride", "(sH, sW), each > 0", pair=True, default=(1, 1)),
)
SIZES_DOC = ("Ho = floor((H + 2pH - dH(kH-1) - 1)/sH) + 1, Wo likewise, L = Ho*Wo; row "
             "c*kH*kW + ki*kW + kj, column oh*Wo + ow")

IM2COL_BACKWARD = OpSpec(
    name="im2col_backward",
    aclnn="aclnnIm2colBackward",
    summary="Col2im (PyTorch's fold): sums columns of sliding blocks back into an image, "
            "(N, C*kH*kW, L) -> (N, C, H, W) or unbatched (C*kH*kW, L) -> (C, H, W).",
    params=(
        Tensor("grad_output", "gradOutput", "the columns, (N, C*kH*kW, L) or (C*kH*kW, L); " + SIZES_DOC,
               dtypes=FLOATS),
        IntArray("input_size", "inputSize", "(H, W), the image size (F.fold's output_size)", pair=True),
    ) + ARRAY_PARAMS,
    outputs=(Output("out", "out", "the image, (N, C, H, W) or (C, H, W), in grad_output's dtype; "
                    "an out= of another of these dtypes gets the result cast", dtypes=FLOATS,
                    zero_fill=_empty_grad),),
    infer=_infer_backward,
    check=_check_backward,
    reference=reference_backward,
    example=lambda rng, dtype: ((_random((2, 3 * 6, 9), dtype, rng), [5, 7], [2, 3], [1, 2], [1, 0],
                                 [2, 1]), {}),
    differentiable=True,  # linear: its derivative is im2col
    torch_function="Im2colBackward",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten.col2im(a[0], *(as_pair(v) for v in a[1:6])),
    notes="F.fold, with its argument order and defaults. Sums each pixel in float32 in the 950 kernel's order (oh, then ow ascending), rounded "
          "once to grad_output's dtype, then cast to out's. An empty grad_output (N, C or L = 0, "
          "which PyTorch rejects except N = 0) succeeds: the NPU leaves out unwritten, this "
          "binding zero-fills it. L is checked against input_size with C's truncating division, "
          "so a size with no full block passes when L = 0.",
)

IM2COL = OpSpec(
    name="im2col",
    aclnn="aclnnIm2col",
    summary="Im2col (PyTorch's unfold): the sliding blocks of an image as columns, "
            "(N, C, H, W) -> (N, C*kH*kW, L) or unbatched (C, H, W) -> (C*kH*kW, L).",
    params=(Tensor("input", "self", "the image, (N, C, H, W) or (C, H, W); C, H, W > 0", dtypes=FLOATS),)
    + ARRAY_PARAMS,
    outputs=(Output("out", "out", "the columns, (N, C*kH*kW, L) or (C*kH*kW, L), " + SIZES_DOC
                    + "; in input's dtype, or cast to the dtype of out=", dtypes=FLOATS),),
    infer=_infer_forward,
    check=_check_forward,
    reference=reference_forward,
    example=lambda rng, dtype: ((_random((2, 3, 5, 7), dtype, rng), [2, 3], [1, 2], [1, 0], [2, 1]), {}),
    backward=Backward("im2col_backward", "adjoint",
                      lambda a, y, g: ((g, list(shape_of(a["input"])[-2:]), a["kernel_size"], a["dilation"],
                                        a["padding"], a["stride"]), {})),
    differentiable=True,
    torch_function="Im2col",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten.im2col(a[0], *(as_pair(v) for v in a[1:5])),
    selftest=("im2col_pad",),
    notes="F.unfold, with its argument order and defaults. A gather: exact for every dtype; positions in the padding read 0. float32, float16 "
          "and bfloat16 only (the A2/A3 list; PyTorch also takes float64), and out= of any of "
          "them (cast). N may be 0; C, H or W = 0 is an error, as in PyTorch.",
)
