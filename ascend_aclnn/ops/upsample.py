"""UpsampleNearestExact1d and its backward (checks in the
order of the ops-cv op_api sources)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..reference import upsample as reference
from ..cann.constants import AclFormat
from ..tensors import bfloat16
from .spec import Args, Backward, Checker, Double, IntArray, OpSpec, Output, Tensor, shape_of

NCL = AclFormat.ACL_FORMAT_NCL
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)
FORWARD_DTYPES = FLOATS + (np.dtype(np.uint8),)
MAX_MAGNIFICATION = 50  # the backward's limit on L_out / L_in (or scales): its op_api's realScale >= 0.02


def _check_dtypes(check: Checker, name: str, t: Any, out: Any, allowed: Sequence[np.dtype[Any]]) -> None:
    check.dtype(name, t, allowed)
    check.same_dtype("out", out, name, t)


def _check_backward(a: Args, check: Checker) -> None:
    g, out = a.grad_output, a.outputs[0]
    _check_dtypes(check, "grad_output", g, out, FLOATS)
    if g.ndim != 3:
        check.mismatch("grad_output", "a 3-D tensor (N, C, L_out)", f"shape {g.shape}")
    if out.given and out.ndim != 3:  # an allocated out has input_size's shape: the next check speaks for it
        check.mismatch("out", "a 3-D tensor (N, C, L_in)", f"shape {out.shape}")
    if len(a.input_size) != 3:
        check.mismatch("input_size", "3 values (N, C, L_in)", f"{a.input_size}")
    if len(a.output_size) != 1:
        check.mismatch("output_size", "1 value (L_out)", f"{a.output_size}")
    n, c, l_out = g.shape
    if out.shape[:2] != (n, c):
        check.mismatch("out" if out.given else "input_size", f"N, C = {(n, c)} as in grad_output",
                       f"{out.shape[:2]}")
    if a.scales < 0:  # written so that NaN passes, as in the C check
        check.mismatch("scales", "scales >= 0 (0 means: derive from the sizes)", f"{a.scales}")
    l_in = a.input_size[2]
    real = 1.0 / a.scales if a.scales > 0 else (l_in / l_out if l_out != 0 else 0.0)
    if not real >= 1 / MAX_MAGNIFICATION:
        check.mismatch("scales", f"a magnification of at most {MAX_MAGNIFICATION} (1/scales, or L_in/L_out "
                       f"when scales is 0, must be >= {1 / MAX_MAGNIFICATION:g}; a limit of this backward "
                       "only: the forward upsample_nearest_exact1d has none)", f"{real!r}")
    if not (n > 0 and c > 0 and l_out > 0 and l_in > 0):
        check.mismatch("grad_output", "N, C, L_out of grad_output and input_size[2] all > 0",
                       f"grad_output shape {g.shape}, input_size {a.input_size}")


def _check_forward(a: Args, check: Checker) -> None:
    x, out = a.input, a.outputs[0]
    _check_dtypes(check, "input", x, out, FORWARD_DTYPES)
    if x.ndim != 3:
        check.mismatch("input", "a 3-D tensor (N, C, L_in)", f"shape {x.shape}")
    if len(a.output_size) != 1:
        check.mismatch("output_size", "1 value (L_out)", f"{a.output_size}")
    if not (min(x.shape) > 0 and a.output_size[0] > 0):
        check.mismatch("input", "N, C, L_in of input and output_size[0] all > 0",
                       f"input shape {x.shape}, output_size {a.output_size}")


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
    check=_check_backward,
    reference=reference.upsample_nearest_exact1d_backward,
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
    check=_check_forward,
    reference=reference.upsample_nearest_exact1d,
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
