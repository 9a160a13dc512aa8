"""Im2col and Im2colBackward (PyTorch's unfold and fold). Checks in the order of the
ops-math (Im2col) and ops-cv (Im2colBackward) op_api sources."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ..reference.im2col import im2col as reference_forward, im2col_backward as reference_backward
from ..tensors import bfloat16
from .rules import (U64, Env, Expr, Rule, Rules, dim, dtype_in, given, item, leading, length, ndim, require, shape_is,
                    tdiv, u64_mul)
from .spec import Args, Backward, IntArray, OpSpec, Output, Tensor, as_pair, shape_of

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)
ARRAYS = ("kernel_size", "dilation", "padding", "stride")
C_NAMES = {"input_size": "inputSize", "kernel_size": "kernelSize", "dilation": "dilation", "padding": "padding",
           "stride": "stride"}
K, D, P, S = ([item(n, axis) for axis in (0, 1)] for n in ARRAYS)


def _geometry(a: Env) -> str:
    return ", ".join(f"{n} {list(a[n])}" for n in ARRAYS)


def _listed(name: str) -> Callable[[Env], str]:
    return lambda e: f"{list(e[name])}"


def _floor_blocks(size: Expr, axis: int) -> Expr:
    """Im2col's count of block positions along one axis: floor division, as its op_api
    (ops-math aclnn_im2col.cpp) computes it in int64."""
    return (size + 2 * P[axis] - (D[axis] * (K[axis] - 1) + 1)) // S[axis] + 1


def _trunc_blocks(size: Expr, axis: int) -> Expr:
    """Im2colBackward's count, (size + 2p - d(k-1) - 1 + s) / s with C's truncating
    division, as its op_api (ops-cv) computes it: 0 rather than negative just below the
    first block."""
    return tdiv(size + 2 * P[axis] - D[axis] * (K[axis] - 1) - 1 + S[axis], S[axis])


def _array_rules(names: Sequence[str], sizes: Sequence[Expr], label: str,
                 what: Callable[[Env], str]) -> tuple[Rule, ...]:
    """Both op_apis': array lengths in their order, then kernel, stride, dilation > 0 and
    padding >= 0. Then, binding and simulator strictness: the op_api computes the block
    counts in int64, where a kernel extent or a padded extent (`sizes`: the image's H, W)
    past 2**63 - 1 overflows (undefined results); refused."""
    rules: list[Rule] = []
    for name in names:
        c = C_NAMES[name]
        rules.append(require(length(name).eq(2), name, "2 values (H, W)", _listed(name),
                             c + " must have 2 elements (H, W), got {" + c + ".n}"))
    for name, low in (("kernel_size", 1), ("stride", 1), ("dilation", 1), ("padding", 0)):
        c = C_NAMES[name]
        rules.append(require((item(name, 0) >= low) & (item(name, 1) >= low), name, f"values >= {low}",
                             _listed(name),
                             c + f" must be >= {low}, got ({{{c}[0]}}, {{{c}[1]}})"))
    for axis in (0, 1):
        rules.append(require(D[axis] * (K[axis] - 1) + 1 <= INT64_MAX, "kernel_size",
                             f"dilation*(kernel_size-1)+1 <= 2**63-1 on axis {axis}",
                             lambda e: f"kernel_size {list(e['kernel_size'])}, dilation {list(e['dilation'])}",
                             f"kernelSize {{kernelSize[{axis}]}} with dilation {{dilation[{axis}]}} spans more than "
                             f"INT64_MAX on axis {axis}"))
        rules.append(require(sizes[axis] + 2 * P[axis] <= INT64_MAX, "padding",
                             f"{label} + 2*padding <= 2**63-1 on axis {axis}",
                             lambda e: f"{what(e)}, padding {list(e['padding'])}",
                             f"padding {{padding[{axis}]}} on axis {axis} makes the padded size {{size}} + 2*padding "
                             "overflow int64", c_values={"size": sizes[axis]}))
    return tuple(rules)


def _repaired(a: Args, names: Sequence[str]) -> Args:
    """The arrays padded with 1 where too short, for shape inference only: the rules
    reject every malformed array before the inferred shape is used."""
    fixed = Args(a)
    fixed.update({n: tuple((list(a[n]) + [1, 1])[:2]) for n in names})
    return fixed


# ---- im2col_backward ---------------------------------------------------------------------------

_ISZ = [item("input_size", axis) for axis in (0, 1)]
_BHO, _BWO = (_trunc_blocks(_ISZ[axis], axis) for axis in (0, 1))
_BLOCKS = u64_mul(_BHO, _BWO)  # the op_api multiplies the two counts as size_t
_ROWS, _LENGTH = dim("grad_output", -2), dim("grad_output", -1)
_IMAGE = leading("grad_output", -2) + (_ROWS // (K[0] * K[1]), _ISZ[0], _ISZ[1])


def _input_size(e: Env) -> str:
    return f"input_size {list(e['input_size'])}"


BACKWARD_RULES = Rules(
    dtype_in("grad_output", FLOATS),
    dtype_in("out", FLOATS),  # each against the list only: the result is cast to out's dtype
    require(ndim("grad_output").eq(2) | ndim("grad_output").eq(3), "grad_output",
            "a 2-D (C*kH*kW, L) or 3-D (N, C*kH*kW, L) tensor", lambda e: f"shape {e['grad_output'].shape}",
            "gradOutput must be 2-D (C*kH*kW, L) or 3-D (N, C*kH*kW, L), got {gradOutput.ndim}-D {gradOutput.shape}"),
    require(ndim("out").eq(ndim("grad_output") + 1), "out",
            lambda e: f"a {e['grad_output'].ndim + 1}-D tensor (one dimension more than grad_output)",
            lambda e: f"shape {e['out'].shape}",
            "out must have one dimension more than gradOutput ({gradOutput.ndim}), got {out.ndim}-D {out.shape}"),
    *_array_rules(("input_size",) + ARRAYS, _ISZ, "input_size", _input_size),
    require(K[0] * K[1] < U64, "kernel_size", "", "", "kernelSize is too large", side="simulator"),
    require((_ROWS % (K[0] * K[1])).eq(0), "grad_output",
            lambda e: f"grad_output.shape[-2] divisible by kH*kW = {e['kernel_size'][0] * e['kernel_size'][1]}",
            lambda e: f"shape {e['grad_output'].shape}",
            "gradOutput.shape[-2] = {rows} must be divisible by kernelSize[0]*kernelSize[1] = {kk}",
            c_values={"rows": _ROWS, "kk": u64_mul(K[0], K[1])}),
    require((_BHO >= INT64_MIN) & (_BHO <= INT64_MAX) & (_BWO >= INT64_MIN) & (_BWO <= INT64_MAX), "input_size",
            "", "", "inputSize or the arrays are too large", side="simulator"),
    require(_LENGTH.eq(_BLOCKS), "grad_output",
            lambda e: f"grad_output.shape[-1] = {_BLOCKS.py(e)}, the number of blocks ({_BHO.py(e)} x {_BWO.py(e)}) "
                      f"for input_size {list(e['input_size'])} with {_geometry(e)}",
            lambda e: f"shape {e['grad_output'].shape}",
            "gradOutput.shape[-1] = {length} must be {blocks} ({ho} x {wo} blocks from inputSize "
            "({inputSize[0]}, {inputSize[1]}))",
            c_values={"length": _LENGTH, "blocks": _BLOCKS, "ho": _BHO, "wo": _BWO}),
    # Binding and simulator strictness: two negative counts multiply to a positive size_t
    # that the op_api accepts; there is no image for such blocks.
    require(~((_BHO * _BWO).ne(0) & ((_BHO < 0) | (_BWO < 0))), "input_size",
            lambda e: f"a size that fits a block of {_geometry(e)}",
            lambda e: f"input_size {list(e['input_size'])} ({_BHO.py(e)} x {_BWO.py(e)} blocks)",
            "inputSize ({inputSize[0]}, {inputSize[1]}) fits no block: {ho} x {wo} blocks",
            c_values={"ho": _BHO, "wo": _BWO}),
    # No out can have a negative dim: the binding, allocating it, says so of input_size.
    require(given("out") | ((_ISZ[0] >= 0) & (_ISZ[1] >= 0)), "input_size", "values >= 0 (the out shape)",
            lambda e: f"{list(e['input_size'])}", "", side="binding"),
    require(shape_is("out", _IMAGE), "out", lambda e: f"shape {_IMAGE.py(e)} ((N,) C, *input_size)",
            lambda e: f"shape {e['out'].shape}", "out shape must be {want}, got {out.shape}",
            c_values={"want": _IMAGE}),
    exports={"ho": _BHO, "wo": _BWO},
)


def _infer_backward(a: Args) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
    g = a.grad_output
    if g.ndim < 2:
        return [(g.shape, g.dtype)]
    return [(_IMAGE.py(_repaired(a, ("input_size", "kernel_size"))), g.dtype)]


def _empty_grad(a: Args) -> bool:
    """The NPU writes nothing for an empty grad_output (None: a raw C-level test call)."""
    return a.grad_output is not None and 0 in a.grad_output.shape


# ---- im2col ------------------------------------------------------------------------------------

_HO, _WO = (_floor_blocks(dim("input", axis - 2), axis) for axis in (0, 1))
_COLUMNS = leading("input", -3) + (dim("input", -3) * K[0] * K[1], _HO * _WO)


def _image_hw(e: Env) -> str:
    return f"(H, W) {list(e['input'].shape[-2:])}"


FORWARD_RULES = Rules(
    dtype_in("input", FLOATS),
    require(ndim("input").eq(3) | ndim("input").eq(4), "input", "a 3-D (C, H, W) or 4-D (N, C, H, W) tensor",
            lambda e: f"shape {e['input'].shape}",
            "self must be 3-D (C, H, W) or 4-D (N, C, H, W), got {self.ndim}-D {self.shape}"),
    require((dim("input", -3) > 0) & (dim("input", -2) > 0) & (dim("input", -1) > 0), "input",
            "C, H and W > 0 (only N may be 0)", lambda e: f"shape {e['input'].shape}",
            "self dims C, H, W must be > 0, got {self.shape}"),
    *_array_rules(ARRAYS, [dim("input", -2), dim("input", -1)], "(H, W)", _image_hw),
    require((_HO < INT64_MAX) & (_WO < INT64_MAX), "kernel_size", "", "",  # C's int64 guard; unreachable after
            "kernelSize, dilation, padding or stride is too large", side="simulator"),  # the extent rules
    require((_HO >= 1) & (_WO >= 1), "input", lambda e: f"H, W that fit at least one block of {_geometry(e)}",
            lambda e: f"shape {e['input'].shape} ({_HO.py(e)} x {_WO.py(e)} blocks)",
            "self {self.shape} fits no block: the block counts ({ho}, {wo}) computed from its H, W "
            "and the arrays must be at least one", c_values={"ho": _HO, "wo": _WO}),
    # The binding's size check (spec.size_problem) says this of an out it allocates.
    require((dim("input", -3) * K[0] * K[1] <= INT64_MAX) & (_HO * _WO <= INT64_MAX), "out", "", "",
            "out would be too large", side="simulator"),
    require(shape_is("out", _COLUMNS), "out", lambda e: f"shape {_COLUMNS.py(e)} ((N,) C*kH*kW, L)",
            lambda e: f"shape {e['out'].shape}", "out shape must be {want}, got {out.shape}",
            c_values={"want": _COLUMNS}),
    # Binding and simulator strictness: this op_api casts to out's dtype unchecked.
    dtype_in("out", FLOATS),
    exports={"ho": _HO, "wo": _WO},
)


def _infer_forward(a: Args) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
    x = a.input
    fixed = _repaired(a, ARRAYS)
    if x.ndim < 3 or min(fixed.stride) < 1:
        return [(x.shape, x.dtype)]
    return [(tuple(max(d, 0) for d in _COLUMNS.py(fixed)), x.dtype)]


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
    check=BACKWARD_RULES,
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
    check=FORWARD_RULES,
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
