"""Test data for UpsampleNearestExact1d and its backward."""
from __future__ import annotations

import numpy as np

from .common import F16, F32, INVALID, NULLPTR, U8, Chain, ErrorCase, HandCase, Samples, Sample, bfloat16, random

# ---- upsample_nearest_exact1d_backward -------------------------------------------------------

# (N, C, L_in, L_out, scales): up- and down-sampling, sizes-derived and explicit scales,
# scales that disagree with the sizes (gradient dropped), the 50x limit, and a tie pair.
UPSAMPLE_SIZES = [(2, 3, 7, 13, 0.0), (1, 4, 13, 7, 0.0), (2, 2, 5, 5, 0.0), (1, 3, 4, 3, 0.5),
                  (3, 2, 6, 12, 2.0), (1, 1, 1, 50, 0.0), (2, 3, 26, 7, 0.0), (1, 2, 9, 20, 2.2),
                  (2, 5, 64, 129, 0.0)]


def backward_samples(dtype, rng) -> list[Sample]:
    return [Sample((random((n, c, lo), dtype, rng), [lo], [n, c, li], s)) for n, c, li, lo, s in UPSAMPLE_SIZES]


def forward_samples(dtype, rng) -> list[Sample]:
    return [Sample((random((n, c, li), dtype, rng), [lo], s)) for n, c, li, lo, s in UPSAMPLE_SIZES] + \
        [Sample((random((1, 2, 5), dtype, rng), [8], -1.0))]  # forward does not check scales' sign


def g(*values, dtype=F32) -> np.ndarray:
    return np.array(values, dtype=dtype).reshape(1, 1, -1)


BACKWARD_HAND = [
    # The official example: L_in=4, L_out=2, scales=0.5 -> s=0.5, lo/hi edges ceil(i*0.5-0.5)
    # for i=0..4 = 0,0,1,1,2: input 1 gets grad[0], input 3 gets grad[1].
    HandCase("official-example", (g(1, 2), [2], [1, 1, 4], 0.5), g(0, 1, 0, 2)),
    # The A2/A3 kernel's float32 intervals: L_in=26, L_out=7: fp32(7/26)*13 - 0.5 = 3.0000002, so hi(12) = 4 and
    # grad position 3 lands on input 12 (PyTorch sends it to 13).
    HandCase("tie-goes-to-12", (g(*[0, 0, 0, 1, 0, 0, 0]), [7], [1, 1, 26], 0.0),
             g(*([0] * 12 + [1] + [0] * 13))),
    # scales=0.5 with L_in=4 but L_out=3: edges 0,0,1,1,2, so grad position 2 is dropped.
    HandCase("inconsistent-scales-drop", (g(1, 2, 4), [3], [1, 1, 4], 0.5), g(0, 1, 0, 2)),
    # L_in=1, L_out=4: one interval [0, 4). float32 sum 2048+1+1+1 = 2051, rounded once to
    # float16 (spacing 2, tie to even) = 2052; summing in float16 would give 2048.
    HandCase("fp16-accumulates-in-fp32", (g(2048, 1, 1, 1, dtype=F16), [4], [1, 1, 1], 0.0), g(2052, dtype=F16)),
    # Same for bfloat16: 256+1+1+1 = 259 -> 260 (spacing 2 at 256, tie to even).
    HandCase("bf16-accumulates-in-fp32", (g(256, 1, 1, 1, dtype=bfloat16), [4], [1, 1, 1], 0.0),
             g(260, dtype=bfloat16)),
]

FORWARD_HAND = [
    # The official example: L_in=3 -> L_out=5, s = 3/5: floor((d+0.5)*0.6) = 0,0,1,2,2.
    HandCase("official-example", (np.arange(9, dtype=F32).reshape(1, 3, 3), [5], 0.0),
             np.array([[[0, 0, 1, 2, 2], [3, 3, 4, 5, 5], [6, 6, 7, 8, 8]]], F32)),
    # scales=2 overrides the sizes: s = 1/2, floor((d+0.5)/2) = 0,0,1,1,2.
    HandCase("explicit-scales", (np.array([[[10, 20, 30]]], U8), [5], 2.0), np.array([[[10, 10, 20, 20, 30]]], U8)),
    # Downsampling 5 -> 2: s = 2.5, floor(1.25)=1, floor(3.75)=3.
    HandCase("downsample", (g(0, 1, 2, 3, 4), [2], 0.0), g(1, 3)),
    # scales=1e-40: float32(1/scales) is inf, so every position clamps to the last input.
    HandCase("infinite-s-clamps", (g(1, 2, 3), [4], 1e-40), g(3, 3, 3, 3)),
]


def _g3():
    return np.ones((1, 2, 4), F32)


BACKWARD_ERRORS = [
    ErrorCase("grad-none", (None, [4], [1, 2, 8]), NULLPTR, "grad_output: expected tensor"),
    ErrorCase("input-size-none", (_g3(), [4], None), NULLPTR, "input_size"),
    ErrorCase("output-size-none", (_g3(), None, [1, 2, 8]), NULLPTR, "output_size"),
    ErrorCase("grad-int32", (_g3().astype(np.int32), [4], [1, 2, 8]), INVALID, "grad_output: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("grad-float64", (_g3().astype(np.float64), [4], [1, 2, 8]), INVALID, "got float64"),
    ErrorCase("out-dtype-differs", (_g3(), [4], [1, 2, 8]), INVALID, "out: expected dtype float32",
              kwargs={"out": np.zeros((1, 2, 8), F16)}),
    ErrorCase("grad-2d", (np.ones((2, 4), F32), [4], [1, 2, 8]), INVALID, "grad_output: expected a 3-D tensor"),
    ErrorCase("out-4d", (_g3(), [4], [1, 2, 8]), INVALID, "out: expected a 3-D tensor",
              kwargs={"out": np.zeros((1, 2, 8, 1), F32)}),
    ErrorCase("input-size-len-2", (_g3(), [4], [2, 8]), INVALID, r"input_size: expected 3 values"),
    ErrorCase("output-size-len-2", (_g3(), [4, 4], [1, 2, 8]), INVALID, r"output_size: expected 1 value"),
    ErrorCase("n-mismatch", (_g3(), [4], [2, 2, 8]), INVALID, r"input_size: expected N, C = \(1, 2\)"),
    ErrorCase("c-mismatch-out", (_g3(), [4], [1, 3, 8]), INVALID, r"out: expected N, C",
              kwargs={"out": np.zeros((1, 3, 8), F32)}),
    ErrorCase("negative-scales", (_g3(), [4], [1, 2, 8], -0.5), INVALID, "scales: expected scales >= 0"),
    ErrorCase("scales-over-50", (_g3(), [4], [1, 2, 8], 50.5), INVALID, "scales: expected a magnification of at most 50"),
    ErrorCase("sizes-over-50", (np.ones((1, 2, 51), F32), [51], [1, 2, 1]), INVALID, "at most 50"),
    ErrorCase("empty-l-out", (np.ones((1, 2, 0), F32), [0], [1, 2, 8]), INVALID, "at most 50"),  # L_in/0 -> 0.0
    ErrorCase("empty-n", (np.ones((0, 2, 4), F32), [4], [0, 2, 8]), INVALID, "grad_output: expected N, C, L_out .* > 0"),
    ErrorCase("zero-l-in", (_g3(), [4], [1, 2, 0], 1.0), INVALID, r"input_size\[2\] all > 0"),
    ErrorCase("scales-str", (_g3(), [4], [1, 2, 8], "2"), INVALID, "scales: expected a real number", reaches_c=False),
    ErrorCase("scales-bool", (_g3(), [4], [1, 2, 8], True), INVALID, "scales: expected a real number", reaches_c=False),
    ErrorCase("input-size-floats", (_g3(), [4], [1.0, 2.0, 8.0]), INVALID, "input_size: expected a sequence of ints", reaches_c=False),
    ErrorCase("grad-object", (np.array([object()]), [4], [1, 2, 8]), INVALID, r"grad_output: object \(\|O\) has no ACL data type", reaches_c=False),
    ErrorCase("out-wrong-l", (_g3(), [4], [1, 2, 8]), INVALID, r"out: expected shape \(1, 2, 8\)",
              kwargs={"out": np.zeros((1, 2, 9), F32)}, reaches_c=False),
    ErrorCase("out-read-only", (_g3(), [4], [1, 2, 8]), INVALID, "out: expected a writeable array",
              kwargs={"out": np.broadcast_to(np.zeros(1, F32), (1, 2, 8))}, reaches_c=False),
]

FORWARD_ERRORS = [
    ErrorCase("input-none", (None, [4]), NULLPTR, "input: expected tensor"),
    ErrorCase("output-size-none", (_g3(), None), NULLPTR, "output_size"),
    ErrorCase("input-int32", (_g3().astype(np.int32), [8]), INVALID, "input: expected dtype float32, float16, bfloat16 or uint8, got int32"),
    ErrorCase("out-dtype-differs", (_g3(), [8]), INVALID, "out: expected dtype float32",
              kwargs={"out": np.zeros((1, 2, 8), U8)}),
    ErrorCase("input-4d", (np.ones((1, 2, 4, 1), F32), [8]), INVALID, "input: expected a 3-D tensor"),
    ErrorCase("output-size-len-2", (_g3(), [8, 8]), INVALID, "output_size: expected 1 value"),
    ErrorCase("empty-c", (np.ones((1, 0, 4), F32), [8]), INVALID, "input: expected N, C, L_in .* > 0"),
    ErrorCase("zero-output-size", (_g3(), [0]), INVALID, r"output_size\[0\] all > 0"),
    ErrorCase("out-wrong-shape", (_g3(), [8]), INVALID, r"out: expected shape \(1, 2, 8\)",
              kwargs={"out": np.zeros((1, 2, 7), F32)}),
    ErrorCase("scales-none", (_g3(), [8], None), INVALID, "scales: expected a real number", reaches_c=False),
]

OP_DB = {
    "upsample_nearest_exact1d_backward": Samples(
        "upsample_nearest_exact1d_backward", (F32, F16, bfloat16), backward_samples, BACKWARD_HAND, BACKWARD_ERRORS,
        exact=True),  # both backends sum each interval in ascending order in float32
    "upsample_nearest_exact1d": Samples(
        "upsample_nearest_exact1d", (F32, F16, bfloat16, U8), forward_samples, FORWARD_HAND, FORWARD_ERRORS, exact=True),
}

# Linear forward/backward pairs: <forward(x), g> == <x, backward(g)>.
# make(rng) -> (x, forward args after x, g, backward args after g)
ADJOINT_PAIRS = {
    # Odd L_in: (2l+1)*L_in is odd, never divisible by 2*L_out, so no float32 ties to break
    # the identity.
    "upsample_nearest_exact1d_backward": ("upsample_nearest_exact1d", lambda rng, li=13, lo=31: (
        rng.standard_normal((2, 3, li)).astype(F32), ([lo], 0.0),
        rng.standard_normal((2, 3, lo)).astype(F32), ([lo], [2, 3, li], 0.0))),
}


def _chain(put):
    import ascend_aclnn as aa
    x = np.random.default_rng(3).standard_normal((2, 3, 5)).astype(F32)
    y = aa.upsample_nearest_exact1d(put(x), [11])
    return y, aa.upsample_nearest_exact1d_backward(y, [11], [2, 3, 5])


CHAINS = [Chain("upsample-forward-then-backward", _chain)]
