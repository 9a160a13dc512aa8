"""UpsampleNearestExact1d and its backward (checks in the
order of the ops-cv op_api sources)."""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..reference.upsample import upsample_nearest_exact1d, upsample_nearest_exact1d_backward
from ..cann.constants import AclFormat
from ..tensors import bfloat16
from .rules import (Rule, Rules, dim, dtype_in, format_in, has_zero, item, length, ndim, require, same_dims,
                    same_dtype, same_format, value, where)
from .spec import Backward, Double, IntArray, OpSpec, Output, Tensor, shape_of

NCL = AclFormat.ACL_FORMAT_NCL
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)
FORWARD_DTYPES = FLOATS + (np.dtype(np.uint8),)
MAX_MAGNIFICATION = 50  # the backward's limit on L_out / L_in (or scales): its op_api's realScale >= 0.02


_NCL_OR_ND = (NCL, AclFormat.ACL_FORMAT_ND)
_FORMAT_SAYS = "format must be ACL_FORMAT_NCL (47) or ACL_FORMAT_ND (2)"
_OUTPUT_SIZE_LENGTH = require(length("output_size").eq(1), "output_size", "1 value (L_out)",
                              lambda e: f"{e['output_size']}", "outputSize must have exactly 1 element, got {outputSize.n}")


def _three_d(t: str, c_name: str, dims: str) -> Rule:
    return require(ndim(t).eq(3), t, f"a 3-D tensor {dims}", lambda e: f"shape {e[t].shape}",
                   c_name + " must be 3-D (N, C, L), got {" + c_name + ".ndim}-D {" + c_name + ".shape}")


_L_OUT, _L_IN, _SCALES = dim("grad_output", 2), item("input_size", 2), value("scales")
# 1/scales, or L_in/L_out when scales is 0: the backward refuses a magnification past MAX_MAGNIFICATION.
_REAL_SCALE = where(_SCALES > 0, 1.0 / _SCALES, where(_L_OUT.ne(0), _L_IN / _L_OUT, 0.0))
_BACKWARD_SIZES = ("N, C, L_out of grad_output and input_size[2] all > 0",
                   lambda e: f"grad_output shape {e['grad_output'].shape}, input_size {e['input_size']}")

BACKWARD_RULES = Rules(
    dtype_in("grad_output", FLOATS),
    same_dtype("out", "grad_output"),
    same_format("grad_output", "out"),
    format_in("grad_output", _NCL_OR_ND, _FORMAT_SAYS),
    _three_d("grad_output", "gradOutput", "(N, C, L_out)"),
    _three_d("out", "out", "(N, C, L_in)"),  # an allocated out has input_size's shape: the next rule speaks for it
    require(length("input_size").eq(3), "input_size", "3 values (N, C, L_in)", lambda e: f"{e['input_size']}",
            "inputSize must have 3 elements (N, C, L), got {inputSize.n}"),
    _OUTPUT_SIZE_LENGTH,
    require(same_dims("out", "grad_output", 0, 2), "out",
            lambda e: f"N, C = {e['grad_output'].shape[:2]} as in grad_output", lambda e: f"{e['out'].shape[:2]}",
            "gradOutput {gradOutput.shape} and out {out.shape} must have the same N and C", instead="input_size"),
    require(~(_SCALES < 0), "scales", "scales >= 0 (0 means: derive from the sizes)",  # NaN passes
            lambda e: f"{e['scales']}", "scales must be >= 0 (0 = derive from sizes), got {scales}"),
    require(_REAL_SCALE >= 1 / MAX_MAGNIFICATION, "scales",
            f"a magnification of at most {MAX_MAGNIFICATION} (1/scales, or L_in/L_out when scales is 0, must be "
            f">= {1 / MAX_MAGNIFICATION:g}; a limit of this backward only: the forward upsample_nearest_exact1d "
            "has none)",
            lambda e: f"{_REAL_SCALE.py(e)!r}",
            "scales is too large: the input/output length ratio is below 0.02 (more than 50x magnification; "
            "scales={scales}, inputSize {inputSize}, gradOutput {gradOutput.shape})"),
    require(~has_zero("grad_output"), "grad_output", *_BACKWARD_SIZES,
            "gradOutput dims N, C, L must all be > 0, got {gradOutput.shape}"),
    require(_L_IN > 0, "grad_output", *_BACKWARD_SIZES, "inputSize[2] must be > 0, got {inputSize}"),
    # Simulator strictness (the real op_api leaves it to its final ViewCopy): out has the
    # shape input_size describes.
    require(dim("out", 0).eq(item("input_size", 0)) & dim("out", 1).eq(item("input_size", 1)) &
            dim("out", 2).eq(_L_IN), "out", lambda e: f"shape {tuple(e['input_size'])}",
            lambda e: f"shape {e['out'].shape}", "out shape {out.shape} must equal inputSize {inputSize}"),
    null_order=("gradOutput", "inputSize", "out", "outputSize"),
)

_FORWARD_SIZES = ("N, C, L_in of input and output_size[0] all > 0",
                  lambda e: f"input shape {e['input'].shape}, output_size {e['output_size']}")

FORWARD_RULES = Rules(
    dtype_in("input", FORWARD_DTYPES),
    same_dtype("out", "input"),
    format_in("input", _NCL_OR_ND, "self " + _FORMAT_SAYS),
    format_in("out", _NCL_OR_ND, "out " + _FORMAT_SAYS),
    _three_d("input", "self", "(N, C, L_in)"),
    _OUTPUT_SIZE_LENGTH,
    require(~has_zero("input"), "input", *_FORWARD_SIZES, "self dims N, C, L must all be > 0, got {self.shape}"),
    require(item("output_size", 0) > 0, "input", *_FORWARD_SIZES, "outputSize[0] must be > 0, got {outputSize[0]}"),
    # Simulator strictness (the real op_api leaves it to its final ViewCopy).
    require(ndim("out").eq(3) & same_dims("out", "input", 0, 2) & dim("out", 2).eq(item("output_size", 0)), "out",
            lambda e: f"shape {e['input'].shape[:2] + e['output_size'][:1]}", lambda e: f"shape {e['out'].shape}",
            "out must have shape [{self.shape[0]}, {self.shape[1]}, {outputSize[0]}] (N, C, outputSize[0]), "
            "got {out.shape}"),
)


def _random(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator) -> NDArray[Any]:
    if np.dtype(dtype).kind == "u":
        return np.asarray(rng.integers(0, 256, shape), dtype=dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


SCALES_DOC = ("PyTorch's forward scale factor, about L_out/L_in; 0.0 means not given, and the "
              "sizes decide")

UPSAMPLE_NEAREST_EXACT1D_BACKWARD = OpSpec(
    name="upsample_nearest_exact1d_backward",
    aclnn="aclnnUpsampleNearestExact1dBackward",
    summary="Gradient of upsample_nearest_exact1d: sums grad_output back onto the input positions.",
    params=(
        Tensor("grad_output", "gradOutput", "gradient of the forward output, (N, C, L_out)",
               dtypes=FLOATS, acl_format=NCL),
        IntArray("output_size", "outputSize", "[L_out], the forward output length (checked for length only)", repeat_int=1),
        IntArray("input_size", "inputSize", "[N, C, L_in], the forward input shape"),
        Double("scales", "scales", 0.0, SCALES_DOC),
    ),
    outputs=(Output("out", "out", "gradient of the forward input, shape input_size", dtypes=FLOATS,
                    acl_format=NCL),),
    infer=lambda a: [(a.input_size, a.grad_output.dtype)],
    check=BACKWARD_RULES,
    reference=upsample_nearest_exact1d_backward,
    example=lambda rng, dtype: ((_random((2, 3, 13), dtype, rng), [13], [2, 3, 6]), {}),
    differentiable=True,  # linear: its derivative is the forward
    torch_function="UpsampleNearestExact1dBackward",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten._upsample_nearest_exact1d_backward(
        a[0], list(a[1]), list(a[2]), None),
    selftest=("upsample",),
    notes="Follows the Atlas A2/A3 kernel: float32 interval arithmetic, which differs from "
          "PyTorch at exact ties: there the gradient goes to the neighbouring input (L_in = 26, "
          "L_out = 7: output 3 lands on input 12, not 13; 70 size pairs with both lengths under 60), "
          "so there it is not the exact adjoint of the forward. Gradient at positions past the last input interval is "
          "dropped when scales disagrees with the sizes. float16/bfloat16 accumulate in float32. "
          "Which positions are summed follows the kernel's index arithmetic exactly; the NPU sums "
          "each interval on its cube unit, so where an interval has 3 or more terms the last "
          "float32 bit is unconfirmed (python -m ascend_aclnn selftest settles it on a host). "
          f"The magnification is limited to {MAX_MAGNIFICATION} (L_out <= {MAX_MAGNIFICATION} * L_in, "
          f"or scales <= {MAX_MAGNIFICATION} when scales is given): a limit of this backward only, which "
          f"the forward does not share, so a forward past {MAX_MAGNIFICATION}x runs but its gradient is "
          "refused. output_size is checked only for its length.",
)

UPSAMPLE_NEAREST_EXACT1D = OpSpec(
    name="upsample_nearest_exact1d",
    aclnn="aclnnUpsampleNearestExact1d",
    summary="Nearest-exact 1-D upsampling (PyTorch's 'nearest-exact' mode) of (N, C, L_in) to (N, C, L_out).",
    params=(
        Tensor("input", "self", "the input, (N, C, L_in)", dtypes=FORWARD_DTYPES, acl_format=NCL),
        IntArray("output_size", "outputSize", "[L_out]", repeat_int=1),
        Double("scales", "scales", 0.0, SCALES_DOC),
    ),
    outputs=(Output("out", "out", "the upsampled array, (N, C, L_out)", dtypes=FORWARD_DTYPES,
                    acl_format=NCL),),
    infer=lambda a: [(a.input.shape[:2] + a.output_size[:1], a.input.dtype)],
    check=FORWARD_RULES,
    reference=upsample_nearest_exact1d,
    example=lambda rng, dtype: ((_random((2, 3, 6), dtype, rng), [13]), {}),
    backward=Backward("upsample_nearest_exact1d_backward", "adjoint",
                      lambda a, y, g: ((g, a["output_size"], list(shape_of(a["input"])), a["scales"]), {})),
    differentiable=True,
    torch_function="UpsampleNearestExact1d",
    torch_baseline=lambda torch, a: lambda: torch.ops.aten._upsample_nearest_exact1d(a[0], list(a[1]), None),
    notes="Source index min(floor(fp32((d + 0.5) * s)), L_in - 1), with s = 1/scales or L_in/L_out "
          "in float32, as the A2/A3 kernel computes it. A gather, so exact for every dtype. The "
          f"forward has no magnification limit; its backward refuses more than {MAX_MAGNIFICATION}x. The float32 "
          "arithmetic makes it differ from F.interpolate(mode='nearest-exact') where (d + 0.5) * s "
          "rounds just below an integer: at L_in = 2, L_out = 41, 47, 55 (the only pairs with both "
          "lengths under 60) and 217 of the 262,144 pairs with L_in <= 256, L_out <= 1024 (measured "
          "against PyTorch 2.13 CPU).",
)
