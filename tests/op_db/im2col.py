"""Test data for Im2col (unfold) and Im2colBackward (fold)."""
from __future__ import annotations

import numpy as np

from .common import BF16, F16, F32, INVALID, NULLPTR, Chain, ErrorCase, HandCase, Samples, Sample, random

FLOATS = (F32, F16, BF16)

# (N or None for unbatched, C, H, W, kernel, dilation, padding, stride)
GEOMETRIES = [
    (2, 3, 5, 7, (2, 3), (1, 2), (1, 0), (2, 1)),     # non-square kernel, dilation, stride
    (2, 4, 8, 8, (3, 3), (1, 1), (1, 1), (1, 1)),     # the usual 3x3 "same" block
    (None, 3, 6, 9, (1, 1), (1, 1), (0, 0), (1, 1)),  # unbatched 1x1
    (1, 2, 7, 5, (3, 2), (2, 1), (2, 3), (3, 2)),     # padding wider than the kernel's reach
    (2, 2, 9, 11, (2, 2), (1, 1), (0, 0), (3, 3)),    # stride > kernel: pixels no block reads
    (None, 2, 5, 6, (3, 3), (2, 2), (2, 2), (1, 1)),  # unbatched, dilation 2, stride 1
    (1, 3, 4, 3, (2, 2), (1, 1), (3, 3), (1, 1)),     # padding > kernel extent
    (1, 1, 3, 2, (3, 3), (1, 1), (1, 1), (1, 1)),     # image narrower than the kernel extent
    (3, 5, 13, 10, (4, 3), (1, 1), (2, 1), (1, 1)),   # odd sizes, even kernel height
    (1, 2, 6, 5, (2, 2), (3, 1), (0, 2), (1, 4)),     # one block column per row
]


def blocks(size, k, d, p, s) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _shapes(geometry):
    n, c, h, w, k, d, p, s = geometry
    length = blocks(h, k[0], d[0], p[0], s[0]) * blocks(w, k[1], d[1], p[1], s[1])
    batch = () if n is None else (n,)
    return batch + (c, h, w), batch + (c * k[0] * k[1], length)


def backward_samples(dtype, rng) -> list[Sample]:
    samples = []
    for geometry in GEOMETRIES:
        _, cols = _shapes(geometry)
        _, _, h, w, k, d, p, s = geometry
        samples.append(Sample((random(cols, dtype, rng), [h, w], list(k), list(d), list(p), list(s))))
    return samples + [
        Sample((random((0, 8, 12), dtype, rng), [4, 5], [2, 2], [1, 1], [0, 0], [1, 1])),  # N = 0
        Sample((random((0, 6), dtype, rng), [4, 5], [2, 2], [1, 1], [0, 0], [1, 2])),      # C = 0
        # L = 0: (1 + 0 - 3 - 1 + 2) / 2 truncates to 0 blocks, so the NPU accepts it.
        Sample((random((16, 0), dtype, rng), [1, 1], [4, 4], [1, 1], [0, 0], [2, 2])),
    ]


def forward_samples(dtype, rng) -> list[Sample]:
    samples = []
    for geometry in GEOMETRIES:
        image, _ = _shapes(geometry)
        _, _, _, _, k, d, p, s = geometry
        samples.append(Sample((random(image, dtype, rng), list(k), list(d), list(p), list(s))))
    return samples + [Sample((random((0, 2, 4, 4), dtype, rng), [3, 3], [1, 1], [1, 1], [1, 1]))]  # N = 0


# ---- hand-computed cases ---------------------------------------------------------------------

# The official aclnnIm2colBackward example: grad (4, 2) = 0.1, 1.1, ..., 7.1, input_size
# (1, 1), kernel 2x2, dilation 1, padding 1, stride (1, 2). Ho = (1+2-1-1)/1 + 1 = 2,
# Wo = (1+2-1-1)/2 + 1 = 1. Pixel (0, 0) is padded position (1, 1): block oh reads it at
# ki = 1 - oh, so (oh=0, ki=1, kj=1): row 3, col 0 -> 6.1; (oh=1, ki=0, kj=1): row 1,
# col 1 -> 3.1. Everything else lands in the padding.
OFFICIAL_GRAD = np.array([0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1], F32).reshape(4, 2)


def _four_to_one(values, dtype):
    """Padding 1, kernel 2x2, stride 1 on a 1x1 image: Ho = Wo = 2, and the pixel receives
    grad[3 - col, col] for col = 0..3 (oh, ow ascending); every other entry is dropped."""
    g = np.full((4, 4), 1000, F32)
    for col, v in enumerate(values):
        g[3 - col, col] = v
    return (g.astype(dtype), [1, 1], [2, 2], [1, 1], [1, 1], [1, 1])


BACKWARD_HAND = [
    HandCase("official-example", (OFFICIAL_GRAD, [1, 1], [2, 2], [1, 1], [1, 1], [1, 2]),
             np.array([[[np.float32(6.1) + np.float32(3.1)]]], F32)),
    # 2x2 ones image, kernel 2x2, stride 1, no padding: one block; each row is one pixel.
    HandCase("one-block", (np.array([[[1], [2], [3], [4]]], F32), [2, 2], [2, 2], [1, 1], [0, 0], [1, 1]),
             np.array([[[[1, 2], [3, 4]]]], F32)),
    # 1x3 image, kernel 1x2, stride 1: blocks at w = 0 and 1; middle pixel gets both.
    HandCase("overlap-sums", (np.array([[10, 20], [1, 2]], F32), [1, 3], [1, 2], [1, 1], [0, 0], [1, 1]),
             np.array([[[10, 21, 2]]], F32)),
    # 1x5 image, kernel 1x2, dilation 3, stride 2: one block (w = 0 and 3); 1, 2, 4 get nothing.
    HandCase("dilation-gaps", (np.array([[7], [9]], F32), [1, 5], [1, 2], [1, 3], [0, 0], [1, 2]),
             np.array([[[7, 0, 0, 9, 0]]], F32)),
    # float32 sum 2048+1+1+1 = 2051, rounded once to float16 (spacing 2, tie to even) =
    # 2052; summing in float16 would give 2048.
    HandCase("fp16-accumulates-in-fp32", _four_to_one([2048, 1, 1, 1], F16), np.array([[[2052]]], F16)),
    HandCase("bf16-accumulates-in-fp32", _four_to_one([256, 1, 1, 1], BF16), np.array([[[260]]], BF16)),
    # out of another dtype: computed in grad's dtype, then cast. float16 2052 -> float32
    # 2052 (not the float32 sum 2051).
    HandCase("fp16-into-fp32-out", _four_to_one([2048, 1, 1, 1], F16), np.array([[[2052]]], F32),
             kwargs={"out": np.zeros((1, 1, 1), F32)}),
    # bfloat16: 259 -> 260, then to float16 260 (a float32 result cast once would be 259).
    HandCase("bf16-into-fp16-out", _four_to_one([256, 1, 1, 1], BF16), np.array([[[260]]], F16),
             kwargs={"out": np.zeros((1, 1, 1), F16)}),
    # float32 2049 cast to float16: 2048 (tie to even).
    HandCase("fp32-into-fp16-out", _four_to_one([2048, 1, 0, 0], F32), np.array([[[2048]]], F16),
             kwargs={"out": np.zeros((1, 1, 1), F16)}),
    # L = 0 (0 blocks by the op_api's truncating division): the NPU leaves out unwritten; the
    # binding returns zeros, also into an out= full of NaN.
    HandCase("empty-grad-gives-zeros", (np.zeros((16, 0), F32), [1, 2], [4, 4], [1, 1], [0, 0], [2, 2]),
             np.zeros((1, 1, 2), F32), kwargs={"out": np.full((1, 1, 2), np.nan, F32)}),
]

# The official aclnnIm2col example: self (2, 2, 3) = 0..11, kernel 2x2, dilation 1,
# padding 1, stride 2. Ho = (2+2-1-1)/2 + 1 = 2, Wo = (3+2-1-1)/2 + 1 = 2, so out is
# (2*4, 4). Block (oh, ow) starts at image position (2oh - 1, 2ow - 1); channel 0 is
# [[0, 1, 2], [3, 4, 5]]:
#   (ki, kj) = (0, 0) reads (-1,-1), (-1,1), (1,-1), (1,1) -> 0, 0, 0, 4
#   (0, 1) reads (-1,0), (-1,2), (1,0), (1,2) -> 0, 0, 3, 5
#   (1, 0) reads (0,-1), (0,1), (2,-1), (2,1) -> 0, 1, 0, 0
#   (1, 1) reads (0,0), (0,2), (2,0), (2,2) -> 0, 2, 0, 0
# and channel 1 is the same plus 6 where the image is read.
OFFICIAL_COLS = np.array([[0, 0, 0, 4], [0, 0, 3, 5], [0, 1, 0, 0], [0, 2, 0, 0],
                          [0, 0, 0, 10], [0, 0, 9, 11], [0, 7, 0, 0], [6, 8, 0, 0]], F32)

FORWARD_HAND = [
    HandCase("official-example", (np.arange(12, dtype=F32).reshape(2, 2, 3), [2, 2], [1, 1], [1, 1], [2, 2]),
             OFFICIAL_COLS),
    HandCase("official-example-batched", (np.arange(12, dtype=F32).reshape(1, 2, 2, 3), [2, 2], [1, 1], [1, 1],
                                          [2, 2]), OFFICIAL_COLS[None]),
    # 1x4 image 1..4, kernel 1x2, dilation 2, stride 1: blocks at w = 0, 1 read (w, w+2).
    HandCase("dilation", (np.array([[[1, 2, 3, 4]]], F32), [1, 2], [1, 2], [0, 0], [1, 1]),
             np.array([[1, 2], [3, 4]], F32)),
    # A gather: float16 values come through unchanged, and cast once into a float32 out.
    HandCase("fp16-into-fp32-out", (np.array([[[1.5, 2049]]], F16), [1, 1], [1, 1], [0, 0], [1, 1]),
             np.array([[1.5, 2048]], F32), kwargs={"out": np.zeros((1, 2), F32)}),
    # float32 1 + 2^-9 into bfloat16 (8 bits of precision): 1 (tie to even).
    HandCase("fp32-into-bf16-out", (np.array([[[1 + 2**-9, 3]]], F32), [1, 1], [1, 1], [0, 0], [1, 1]),
             np.array([[1, 3]], BF16), kwargs={"out": np.zeros((1, 2), BF16)}),
]


# ---- error cases -----------------------------------------------------------------------------

def _g(shape=(1, 8, 12), dtype=F32):
    """A valid grad_output for input_size (4, 5) with kernel 2x2: C = 2, 3 x 4 blocks."""
    return np.ones(shape, dtype)


def _bwd(*, grad=None, input_size=(4, 5), kernel=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    grad = _g() if grad is None else grad
    return (grad, list(input_size) if input_size is not None else None,
            list(kernel) if kernel is not None else None, list(dilation) if dilation is not None else None,
            list(padding) if padding is not None else None, list(stride) if stride is not None else None)


BACKWARD_ERRORS = [
    ErrorCase("grad-none", (None, [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]), NULLPTR, "grad_output: expected tensor"),
    ErrorCase("input-size-none", _bwd(input_size=None), NULLPTR, "input_size"),
    ErrorCase("kernel-none", _bwd(kernel=None), NULLPTR, "kernel_size"),
    ErrorCase("dilation-none", _bwd(dilation=None), NULLPTR, "dilation"),
    ErrorCase("padding-none", _bwd(padding=None), NULLPTR, "padding"),
    ErrorCase("stride-none", _bwd(stride=None), NULLPTR, "stride"),
    ErrorCase("grad-int32", _bwd(grad=_g(dtype=np.int32)), INVALID,
              "grad_output: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("grad-float64", _bwd(grad=_g(dtype=np.float64)), INVALID, "grad_output: .*got float64"),
    # dtype comes before rank
    ErrorCase("grad-float64-1d", _bwd(grad=np.ones(8)), INVALID, "grad_output: expected dtype"),
    ErrorCase("out-int32", _bwd(), INVALID, "out: expected dtype float32, float16 or bfloat16, got int32",
              kwargs={"out": np.zeros((1, 2, 4, 5), np.int32)}),
    ErrorCase("grad-1d", _bwd(grad=np.ones(8, F32)), INVALID, "grad_output: expected a 2-D .* or 3-D"),
    ErrorCase("grad-4d", _bwd(grad=np.ones((1, 1, 8, 12), F32)), INVALID, r"grad_output: .*got shape \(1, 1, 8, 12\)"),
    ErrorCase("out-rank", _bwd(), INVALID, "out: expected a 4-D tensor",
              kwargs={"out": np.zeros((2, 4, 5), F32)}),
    ErrorCase("out-rank-unbatched", _bwd(grad=_g((8, 12))), INVALID, "out: expected a 3-D tensor",
              kwargs={"out": np.zeros((1, 2, 4, 5), F32)}),
    ErrorCase("input-size-len-3", _bwd(input_size=(1, 4, 5)), INVALID, r"input_size: expected 2 values"),
    ErrorCase("kernel-len-1", _bwd(kernel=(2,)), INVALID, r"kernel_size: expected 2 values \(H, W\), got \[2\]"),
    ErrorCase("dilation-len-3", _bwd(dilation=(1, 1, 1)), INVALID, "dilation: expected 2 values"),
    ErrorCase("padding-len-0", _bwd(padding=()), INVALID, "padding: expected 2 values"),
    ErrorCase("stride-len-1", _bwd(stride=(1,)), INVALID, "stride: expected 2 values"),
    # every length before any value
    ErrorCase("lengths-before-values", _bwd(kernel=(0, 0), stride=(1, 1, 1)), INVALID, "stride: expected 2 values"),
    ErrorCase("kernel-zero", _bwd(kernel=(2, 0)), INVALID, r"kernel_size: expected values >= 1, got \[2, 0\]"),
    ErrorCase("stride-zero", _bwd(stride=(0, 1)), INVALID, "stride: expected values >= 1"),
    ErrorCase("dilation-negative", _bwd(dilation=(1, -1)), INVALID, "dilation: expected values >= 1"),
    ErrorCase("padding-negative", _bwd(padding=(-1, 0)), INVALID, "padding: expected values >= 0"),
    # the op_api checks stride before dilation
    ErrorCase("stride-before-dilation", _bwd(dilation=(0, 0), stride=(0, 0)), INVALID, "stride: expected values"),
    ErrorCase("rows-not-divisible", _bwd(grad=_g((1, 7, 12))), INVALID,
              r"grad_output: expected grad_output.shape\[-2\] divisible by kH\*kW = 4"),
    ErrorCase("length-mismatch", _bwd(grad=_g((1, 8, 11))), INVALID,
              r"grad_output: expected grad_output.shape\[-1\] = 12, the number of blocks \(3 x 4\)"),
    ErrorCase("length-for-other-stride", _bwd(stride=(2, 2)), INVALID, r"shape\[-1\] = 4, .*\(2 x 2\)"),
    # Ho = Wo = (1 - 2 - 1 + 1)/1 = -1: the op_api's size_t product is 1 and matches L = 1;
    # PyTorch rejects it, and so do the binding and the simulator.
    ErrorCase("negative-blocks", (np.ones((9, 1), F32), [1, 1], [3, 3], [1, 1], [0, 0], [1, 1]), INVALID,
              r"input_size: expected a size that fits a block .*\(-1 x -1 blocks\)"),
    # H = -1 with kernel 1, padding 1 gives one block row; no out can be (2, -1, 2).
    ErrorCase("negative-input-size", (np.ones((2, 2), F32), [-1, 2], [1, 1], [1, 1], [1, 0], [1, 1]), INVALID,
              r"input_size: expected values >= 0"),
    ErrorCase("out-wrong-c", _bwd(), INVALID, r"out: expected shape \(1, 2, 4, 5\)",
              kwargs={"out": np.zeros((1, 3, 4, 5), F32)}),
    ErrorCase("out-wrong-size", _bwd(), INVALID, r"out: expected shape \(1, 2, 4, 5\)",
              kwargs={"out": np.zeros((1, 2, 5, 4), F32)}),
    ErrorCase("input-size-floats", _bwd(input_size=(4.0, 5.0)), INVALID, "input_size: expected an int or a sequence of ints",
              reaches_c=False),
    ErrorCase("kernel-str", (_g(), [4, 5], "22", [1, 1], [0, 0], [1, 1]), INVALID,
              "kernel_size: expected an int or a sequence of ints", reaches_c=False),
    ErrorCase("grad-object", _bwd(grad=np.array([object()])), INVALID, r"grad_output: object \(\|O\) has no ACL data type",
              reaches_c=False),
    ErrorCase("out-list", _bwd(), INVALID, "out: expected a NumPy array or DeviceArray",
              kwargs={"out": [[0.0]]}, reaches_c=False),
    ErrorCase("out-read-only", _bwd(), INVALID, "out: expected a writeable array",
              kwargs={"out": np.broadcast_to(np.zeros(1, F32), (1, 2, 4, 5))}, reaches_c=False),
    # Not op_api checks: the int64 block arithmetic would overflow (found by the long fuzz).
    ErrorCase("padded-extent-overflows", _bwd(padding=(2**62, 0), stride=(2**62, 1)), INVALID,
              r"padding: expected input_size \+ 2\*padding <= 2\*\*63-1 on axis 0"),
    ErrorCase("kernel-extent-overflows", _bwd(kernel=(2, 2**62 + 1), dilation=(1, 2)), INVALID,
              r"kernel_size: expected dilation\*\(kernel_size-1\)\+1 <= 2\*\*63-1 on axis 1"),
]


def _x(shape=(1, 2, 4, 5), dtype=F32):
    return np.ones(shape, dtype)


def _fwd(*, x=None, kernel=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    return (_x() if x is None else x, list(kernel) if kernel is not None else None,
            list(dilation) if dilation is not None else None, list(padding) if padding is not None else None,
            list(stride) if stride is not None else None)


FORWARD_ERRORS = [
    ErrorCase("input-none", (None, [2, 2], [1, 1], [0, 0], [1, 1]), NULLPTR, "input: expected tensor"),
    ErrorCase("kernel-none", _fwd(kernel=None), NULLPTR, "kernel_size"),
    ErrorCase("dilation-none", _fwd(dilation=None), NULLPTR, "dilation"),
    ErrorCase("padding-none", _fwd(padding=None), NULLPTR, "padding"),
    ErrorCase("stride-none", _fwd(stride=None), NULLPTR, "stride"),
    ErrorCase("input-int32", _fwd(x=_x(dtype=np.int32)), INVALID,
              "input: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("input-float64-2d", _fwd(x=np.ones((4, 5))), INVALID, "input: expected dtype .* got float64"),
    ErrorCase("input-2d", _fwd(x=np.ones((4, 5), F32)), INVALID, r"input: expected a 3-D \(C, H, W\) or 4-D"),
    ErrorCase("input-5d", _fwd(x=np.ones((1, 1, 2, 4, 5), F32)), INVALID, "input: expected a 3-D"),
    # rank comes before the arrays
    ErrorCase("rank-before-arrays", _fwd(x=np.ones((1, 1, 2, 4, 5), F32), kernel=(2, 2, 2)), INVALID, "input: expected a 3-D"),
    ErrorCase("empty-c", _fwd(x=_x((1, 0, 4, 5))), INVALID, r"input: expected C, H and W > 0 \(only N may be 0\)"),
    ErrorCase("empty-h-unbatched", _fwd(x=_x((2, 0, 5))), INVALID, "input: expected C, H and W > 0"),
    ErrorCase("kernel-len-3", _fwd(kernel=(2, 2, 2)), INVALID, "kernel_size: expected 2 values"),
    ErrorCase("dilation-len-1", _fwd(dilation=(1,)), INVALID, "dilation: expected 2 values"),
    ErrorCase("padding-len-3", _fwd(padding=(0, 0, 0)), INVALID, "padding: expected 2 values"),
    ErrorCase("stride-len-0", _fwd(stride=()), INVALID, "stride: expected 2 values"),
    ErrorCase("lengths-before-values", _fwd(kernel=(0, 2), padding=(0,)), INVALID, "padding: expected 2 values"),
    ErrorCase("kernel-zero", _fwd(kernel=(0, 2)), INVALID, "kernel_size: expected values >= 1"),
    ErrorCase("stride-negative", _fwd(stride=(1, -2)), INVALID, "stride: expected values >= 1"),
    ErrorCase("dilation-zero", _fwd(dilation=(0, 1)), INVALID, "dilation: expected values >= 1"),
    ErrorCase("padding-negative", _fwd(padding=(0, -1)), INVALID, "padding: expected values >= 0"),
    ErrorCase("stride-before-dilation", _fwd(dilation=(0, 1), stride=(0, 1)), INVALID, "stride: expected values"),
    # 4x5 image, kernel 2x6: Wo = (5 - 5 - 1)//1 + 1 = 0
    ErrorCase("no-block-fits", _fwd(kernel=(2, 6)), INVALID, r"input: expected H, W that fit .*\(3 x 0 blocks\)"),
    ErrorCase("dilation-too-wide", _fwd(dilation=(4, 1)), INVALID, r"\(0 x 4 blocks\)"),
    ErrorCase("out-wrong-shape", _fwd(), INVALID, r"out: expected shape \(1, 8, 12\)",
              kwargs={"out": np.zeros((1, 8, 11), F32)}),
    ErrorCase("out-wrong-rank", _fwd(), INVALID, r"out: expected shape \(1, 8, 12\)",
              kwargs={"out": np.zeros((8, 12), F32)}),
    # the op_api casts to out's dtype unchecked; the binding and simulator take the float types only
    ErrorCase("out-int32", _fwd(), INVALID, "out: expected dtype float32, float16 or bfloat16, got int32",
              kwargs={"out": np.zeros((1, 8, 12), np.int32)}),
    ErrorCase("kernel-floats", _fwd(kernel=(2.0, 2.0)), INVALID, "kernel_size: expected an int or a sequence of ints",
              reaches_c=False),
    ErrorCase("input-object", _fwd(x=np.array([object()])), INVALID, r"input: object \(\|O\) has no ACL data type",
              reaches_c=False),
    ErrorCase("out-read-only", _fwd(), INVALID, "out: expected a writeable array",
              kwargs={"out": np.broadcast_to(np.zeros(1, F32), (1, 8, 12))}, reaches_c=False),
    ErrorCase("padded-extent-overflows", _fwd(padding=(0, 2**62), stride=(1, 2**62)), INVALID,
              r"padding: expected \(H, W\) \+ 2\*padding <= 2\*\*63-1 on axis 1"),
]

OP_DB = {
    # Both backends sum each pixel in float32 in the 950 kernel's order: bit for bit.
    "im2col_backward": Samples("im2col_backward", FLOATS, backward_samples, BACKWARD_HAND, BACKWARD_ERRORS,
                              exact=True),
    "im2col": Samples("im2col", FLOATS, forward_samples, FORWARD_HAND, FORWARD_ERRORS, exact=True),
}

# <im2col(x), g> == <x, im2col_backward(g)>: dilation, padding and stride all at work.
ADJOINT_PAIRS = {
    "im2col_backward": ("im2col", lambda rng: (
        rng.standard_normal((2, 3, 7, 6)).astype(F32), ([3, 2], [2, 1], [1, 2], [2, 1]),
        rng.standard_normal((2, 3 * 6, 3 * 9)).astype(F32), ([7, 6], [3, 2], [2, 1], [1, 2], [2, 1]))),
}


def _chain(put):
    import ascend_aclnn as aa
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 5)).astype(F32)
    cols = aa.im2col(put(x), [3, 3], [1, 1], [1, 1], [1, 1])
    return cols, aa.im2col_backward(cols, [6, 5], [3, 3], [1, 1], [1, 1], [1, 1])


def _chain_unbatched(put):
    import ascend_aclnn as aa
    x = np.random.default_rng(4).standard_normal((3, 7, 4)).astype(F16)
    cols = aa.im2col(put(x), [2, 3], [2, 1], [0, 1], [2, 1])
    return cols, aa.im2col_backward(cols, [7, 4], [2, 3], [2, 1], [0, 1], [2, 1])


CHAINS = [Chain("im2col-then-backward", _chain), Chain("im2col-then-backward-unbatched-fp16", _chain_unbatched)]
