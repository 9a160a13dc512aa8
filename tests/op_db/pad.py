"""Test data for ReplicationPad2d and its backward."""
from __future__ import annotations

import numpy as np

from .common import (BF16, C64, C128, F16, F32, F64, I8, I16, I32, I64, INVALID, NULLPTR, U8, Chain, ErrorCase,
                     HandCase, Samples, Sample, random)

BACKWARD_DTYPES = (F32, F16, BF16, F64, C64, C128)
FORWARD_DTYPES = BACKWARD_DTYPES + (I8, U8, I16, I32, I64)

# (input shape, padding [left, right, top, bottom]): 3-D and 4-D, odd and 1-sized dims,
# asymmetric pads, pads of 0, pads larger than the dims, and negative pads (crop).
SHAPES = [
    ((2, 3, 5, 7), [1, 2, 3, 1]),
    ((3, 4, 6), [2, 0, 1, 3]),          # 3-D
    ((1, 1, 1, 1), [3, 2, 4, 1]),       # 1x1 image: every output reads the one pixel
    ((2, 2, 1, 5), [0, 0, 3, 2]),       # H = 1, only H padded
    ((1, 3, 4, 1), [5, 6, 0, 0]),       # W = 1, pads larger than the dim
    ((2, 1, 3, 3), [0, 0, 0, 0]),       # identity
    ((1, 2, 3, 4), [9, 7, 8, 10]),      # every pad larger than its dim
    ((2, 2, 6, 5), [-1, 2, 0, -2]),     # negative: crop left and bottom
    ((1, 1, 5, 6), [-2, -3, -1, -1]),   # crop on every side
    ((1, 2, 4, 3), [-4, 2, 1, -5]),     # crop past a whole side: only the far edge is read
    ((0, 3, 4, 5), [1, 1, 2, 2]),       # N = 0: succeeds, computes nothing
    ((2, 3, 4, 5), [1, 1, -2, -2]),     # 4-D cropped to H = 0: succeeds, empty result
]


def _bf16_ok(padding) -> bool:
    return min(padding) >= 0 and (padding[2] == padding[3] == 0 or max(padding) <= 7)


def _out_shape(shape, padding):
    left, right, top, bottom = padding
    return shape[:-2] + (shape[-2] + top + bottom, shape[-1] + left + right)


def forward_samples(dtype, rng) -> list[Sample]:
    return [Sample((random(shape, dtype, rng), padding)) for shape, padding in SHAPES
            if not (len(shape) == 3 and 0 in _out_shape(shape, padding))]


def backward_samples(dtype, rng) -> list[Sample]:
    return [Sample((random(_out_shape(shape, padding), dtype, rng), random(shape, dtype, rng), padding))
            for shape, padding in SHAPES if np.dtype(dtype) != BF16 or _bf16_ok(padding)]


def a(*rows, dtype=F32) -> np.ndarray:
    return np.array(rows, dtype=dtype)


BACKWARD_HAND = [
    # The official doc example: gradOutput ones (1, 1, 7), self (1, 1, 5), padding [1, 1, 0, 0]:
    # output columns 0 and 1 both read input column 0, columns 5 and 6 both read column 4.
    HandCase("official-example", (np.ones((1, 1, 7), F32), np.ones((1, 1, 5), F32), [1, 1, 0, 0]),
             np.array([[[2, 1, 1, 1, 2]]], F32)),
    # self (1, 2, 2), padding [1, 0, 1, 0]: out (1, 3, 3); output row 0 and 1 read input
    # row 0, column 0 and 1 read input column 0. So input (0, 0) gets the top-left 2x2
    # block 1+2+4+5 = 12, (0, 1) gets column 2 of rows 0-1: 3+6 = 9, (1, 0) gets row 2
    # columns 0-1: 7+8 = 15, (1, 1) gets 9.
    HandCase("corner-sums", (a([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).reshape(1, 3, 3), np.zeros((1, 2, 2), F32),
                             [1, 0, 1, 0]), a([[12, 9], [15, 9]]).reshape(1, 2, 2)),
    # Pads larger than the dim: W = 2, left 3: output columns 0-3 read input column 0,
    # column 4 reads column 1: [1+2+3+4, 5] = [10, 5].
    HandCase("pad-larger-than-dim", (a([[1, 2, 3, 4, 5]]).reshape(1, 1, 1, 5), np.zeros((1, 1, 1, 2), F32),
                                     [3, 0, 0, 0]), a([[10, 5]]).reshape(1, 1, 1, 2)),
    # Negative left pad -1 crops input column 0 (its gradient is 0); right 1 repeats the
    # last column: W = 3 -> Wout = 3, output j reads clamp(j + 1, 0, 2) = 1, 2, 2.
    HandCase("negative-pad-crops", (a([[1, 2, 3]]).reshape(1, 1, 1, 3), np.zeros((1, 1, 1, 3), F32),
                                    [-1, 1, 0, 0]), a([[0, 1, 5]]).reshape(1, 1, 1, 3)),
    # 1x1 input, padding [0, 3, 0, 0]: 2048 + 1 + 1 + 1 = 2051 in float32, rounded once to
    # float16 (spacing 2 at 2048, tie to even) = 2052; summing in float16 would give 2048.
    HandCase("fp16-accumulates-in-fp32", (a([[2048, 1, 1, 1]], dtype=F16).reshape(1, 1, 1, 4),
                                          np.zeros((1, 1, 1, 1), F16), [0, 3, 0, 0]),
             np.full((1, 1, 1, 1), 2052, F16)),
    # The same for bfloat16: 256 + 1 + 1 + 1 = 259 -> 260 (spacing 2 at 256).
    HandCase("bf16-accumulates-in-fp32", (a([[256, 1, 1, 1]], dtype=BF16).reshape(1, 1, 1, 4),
                                          np.zeros((1, 1, 1, 1), BF16), [0, 3, 0, 0]),
             np.full((1, 1, 1, 1), 260, BF16)),
    # N = 0 succeeds and returns an empty gradient of input's shape.
    HandCase("n-zero", (np.ones((0, 2, 5, 6), F32), np.ones((0, 2, 3, 4), F32), [1, 1, 1, 1]),
             np.zeros((0, 2, 3, 4), F32)),
    # 4-D input cropped to an empty gradOutput: the NPU computes nothing, the binding
    # zero-fills gradInput: all zeros.
    HandCase("cropped-to-empty", (np.ones((1, 1, 0, 4), F32), np.ones((1, 1, 2, 4), F32), [0, 0, -1, -1]),
             np.zeros((1, 1, 2, 4), F32)),
    # complex128 stays complex: (1+1j) + (2-1j) = 3.
    HandCase("complex", (np.array([[[1 + 1j, 2 - 1j]]], C128), np.zeros((1, 1, 1), C128), [1, 0, 0, 0]),
             np.array([[[3 + 0j]]], C128)),
]

FORWARD_HAND = [
    # The doc example: 3x3 ramp, padding [2, 2, 2, 2]: rows/columns clamp(k - 2, 0, 2).
    HandCase("doc-example", (np.arange(9, dtype=F32).reshape(1, 1, 3, 3), [2, 2, 2, 2]),
             a([0, 0, 0, 1, 2, 2, 2], [0, 0, 0, 1, 2, 2, 2], [0, 0, 0, 1, 2, 2, 2], [3, 3, 3, 4, 5, 5, 5],
               [6, 6, 6, 7, 8, 8, 8], [6, 6, 6, 7, 8, 8, 8], [6, 6, 6, 7, 8, 8, 8]).reshape(1, 1, 7, 7)),
    # Asymmetric, 3-D, int32: [[1, 2], [3, 4]] with left 1, right 0, top 0, bottom 2.
    HandCase("asymmetric-3d", (np.array([[[1, 2], [3, 4]]], I32), [1, 0, 0, 2]),
             np.array([[[1, 1, 2], [3, 3, 4], [3, 3, 4], [3, 3, 4]]], I32)),
    # Negative pads crop: [[1, 2, 3], [4, 5, 6]] with left -1, right 1, top -1, bottom 0:
    # rows clamp(i + 1) = 1; columns clamp(j + 1) = 1, 2, 2.
    HandCase("negative-crops", (np.array([[[[1, 2, 3], [4, 5, 6]]]], U8), [-1, 1, -1, 0]),
             np.array([[[[5, 6, 6]]]], U8)),
    # bfloat16 is copied exactly.
    HandCase("bf16-exact", (np.array([[[[1.5, -3]]]], BF16), [1, 1, 0, 0]), np.array([[[[1.5, 1.5, -3, -3]]]], BF16)),
    # N = 0 succeeds with an empty output of the padded shape.
    HandCase("n-zero", (np.ones((0, 2, 3, 4), F32), [1, 2, 3, 4]), np.zeros((0, 2, 10, 7), F32)),
]


def _x4():
    return np.ones((1, 2, 3, 4), F32)


def _g4(padding=(1, 1, 1, 1), dtype=F32, shape=(1, 2, 3, 4)):
    return np.ones(_out_shape(shape, list(padding)), dtype)


P = [1, 1, 1, 1]
BACKWARD_ERRORS = [
    ErrorCase("grad-none", (None, _x4(), P), NULLPTR, "grad_output: expected tensor"),
    ErrorCase("input-none", (_g4(), None, P), NULLPTR, "input: expected tensor"),
    ErrorCase("padding-none", (_g4(), _x4(), None), NULLPTR, "padding"),
    ErrorCase("out-int32", (_g4(), _x4(), P), INVALID, "out: expected dtype float32, float16, bfloat16, float64, "
              "complex64 or complex128, got int32", kwargs={"out": np.zeros((1, 2, 3, 4), I32)}),
    ErrorCase("grad-int32", (_g4(dtype=I32), _x4().astype(I32), P), INVALID, "grad_output: expected dtype .*got int32"),
    ErrorCase("input-int64", (_g4(), _x4().astype(I64), P), INVALID, "input: expected dtype .*got int64"),
    ErrorCase("out-dtype-differs", (_g4(), _x4(), P), INVALID, "out: expected dtype float32 \\(the dtype of input\\)",
              kwargs={"out": np.zeros((1, 2, 3, 4), F64)}),
    ErrorCase("grad-dtype-differs", (_g4(dtype=F16), _x4(), P), INVALID,
              "grad_output: expected dtype float32 \\(the dtype of input\\), got float16"),
    ErrorCase("out-shape-differs", (_g4(), _x4(), P), INVALID, r"out: expected shape \(1, 2, 3, 4\) \(the shape of input\)",
              kwargs={"out": np.zeros((1, 2, 3, 5), F32)}),
    ErrorCase("input-2d", (np.ones((5, 6), F32), np.ones((3, 4), F32), P), INVALID,
              "input: expected a 3-D .* or 4-D .* tensor, got shape \\(3, 4\\)"),
    ErrorCase("input-5d", (np.ones((1, 1, 2, 5, 6), F32), np.ones((1, 1, 2, 3, 4), F32), P), INVALID,
              "input: expected a 3-D"),
    ErrorCase("grad-rank-differs", (np.ones((2, 5, 6), F32), _x4(), P), INVALID, "grad_output: expected a 4-D tensor"),
    ErrorCase("padding-len-3", (_g4(), _x4(), [1, 1, 1]), INVALID, r"padding: expected 4 values \[left, right, top, bottom\], got \[1, 1, 1\]"),
    ErrorCase("bf16-pad-over-7", (_g4((8, 0, 1, 0), BF16), _x4().astype(BF16), [8, 0, 1, 0]), INVALID,
              r"padding: expected for bfloat16, .* every pad <= 7, got \[8, 0, 1, 0\]"),
    ErrorCase("bf16-negative-pad", (_g4((1, -1, 0, 0), BF16), _x4().astype(BF16), [1, -1, 0, 0]), INVALID,
              "padding: expected for bfloat16, pads >= 0"),
    ErrorCase("grad-h-wrong", (np.ones((1, 2, 6, 6), F32), _x4(), P), INVALID,
              r"grad_output: expected H, W = \(5, 6\) .*got shape \(1, 2, 6, 6\)"),
    ErrorCase("grad-w-wrong", (np.ones((1, 2, 5, 5), F32), _x4(), P), INVALID, r"grad_output: expected H, W = \(5, 6\)"),
    ErrorCase("empty-3d", (np.ones((0, 5, 6), F32), np.ones((0, 3, 4), F32), P), INVALID,
              "input: expected no empty tensor with a 3-D input"),
    ErrorCase("cropped-to-empty-3d", (np.ones((2, 0, 4), F32), np.ones((2, 2, 4), F32), [0, 0, -1, -1]), INVALID,
              "input: expected no empty tensor with a 3-D input"),
    ErrorCase("empty-c", (np.ones((1, 0, 5, 6), F32), np.ones((1, 0, 3, 4), F32), P), INVALID,
              r"input: expected C, H, W > 0 \(only N may be 0\), got shape \(1, 0, 3, 4\)"),
    ErrorCase("empty-w", (np.ones((1, 2, 5, 2), F32), np.ones((1, 2, 3, 0), F32), P), INVALID,
              "input: expected C, H, W > 0"),
    ErrorCase("leading-dims-differ", (_g4(shape=(2, 2, 3, 4)), _x4(), P), INVALID,
              r"grad_output: expected leading dims \(1, 2\) as in input"),
    ErrorCase("padding-floats", (_g4(), _x4(), [1.0, 1, 1, 1]), INVALID, "padding: expected an int or a sequence of ints",
              reaches_c=False),
]

FORWARD_ERRORS = [
    ErrorCase("input-none", (None, P), NULLPTR, "input: expected tensor"),
    ErrorCase("padding-none", (_x4(), None), NULLPTR, "padding"),
    ErrorCase("input-bool", (_x4().astype(bool), P), INVALID, "input: expected dtype .*int64, got bool"),
    ErrorCase("out-dtype-differs", (_x4(), P), INVALID, r"out: expected dtype float32 \(the dtype of input\), got int32",
              kwargs={"out": np.zeros((1, 2, 5, 6), I32)}),
    ErrorCase("out-dtype-unlisted", (_x4(), P), INVALID, "out: expected dtype .*got bool",
              kwargs={"out": np.zeros((1, 2, 5, 6), bool)}),
    ErrorCase("input-2d", (np.ones((3, 4), F32), P), INVALID, "input: expected a 3-D"),
    ErrorCase("input-5d", (np.ones((1, 1, 1, 3, 4), F32), P), INVALID, "input: expected a 3-D"),
    ErrorCase("out-rank-differs", (_x4(), P), INVALID, "out: expected a 4-D tensor like input",
              kwargs={"out": np.zeros((2, 5, 6), F32)}),
    ErrorCase("padding-len-2", (_x4(), [1, 1]), INVALID, r"padding: expected 4 values"),
    ErrorCase("out-wrong-h", (_x4(), P), INVALID, r"out: expected shape \(1, 2, 5, 6\)",
              kwargs={"out": np.zeros((1, 2, 4, 6), F32)}),
    ErrorCase("out-wrong-n", (_x4(), P), INVALID, r"out: expected shape \(1, 2, 5, 6\)",
              kwargs={"out": np.zeros((2, 2, 5, 6), F32)}),
    ErrorCase("crop-below-zero", (_x4(), [0, 0, -2, -2]), INVALID,
              r"padding: expected pads that leave H \+ top \+ bottom >= 0"),
    ErrorCase("empty-3d-input", (np.ones((0, 3, 4), F32), P), INVALID, "input: expected no empty tensor with a 3-D"),
    ErrorCase("cropped-to-empty-3d", (np.ones((2, 3, 4), F32), [0, 0, -1, -2]), INVALID,
              "input: expected no empty tensor with a 3-D"),
    ErrorCase("empty-h", (np.ones((2, 3, 0, 4), F32), P), INVALID, "input: expected C, H, W > 0"),
    ErrorCase("padding-str", (_x4(), "1111"), INVALID, "padding: expected an int or a sequence of ints", reaches_c=False),
]

OP_DB = {
    # Both backends sum rows first, then columns, in ascending order, in the same precision.
    "replication_pad2d_backward": Samples("replication_pad2d_backward", BACKWARD_DTYPES, backward_samples,
                                         BACKWARD_HAND, BACKWARD_ERRORS, exact=True),
    "replication_pad2d": Samples("replication_pad2d", FORWARD_DTYPES, forward_samples, FORWARD_HAND,
                                FORWARD_ERRORS, exact=True),
}


def _adjoint(dtype, shape, padding):
    def make(rng):
        x = random(shape, dtype, rng)
        g = random(_out_shape(shape, padding), dtype, rng)
        return x, (padding,), g, (x, padding)
    return make


# <pad(x), g> == <x, pad_backward(g)>; the generic test pairs each backward with one
# forward, so the float64 and complex128 cases are separate pairs in test_pad.py too.
ADJOINT_PAIRS = {
    "replication_pad2d_backward": ("replication_pad2d", _adjoint(F64, (2, 3, 5, 4), [2, 3, 1, 4])),
}


def _chain(put):
    import ascend_aclnn as aa
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(F32)
    y = aa.replication_pad2d(put(x), [1, 2, 3, 1])
    return y, aa.replication_pad2d_backward(y, put(x), [1, 2, 3, 1])


CHAINS = [Chain("pad-forward-then-backward", _chain)]
