"""Test data for MaxPool2dWithMask and its backward.

The masks the backward samples need are built here from first principles (a brute-force
argmax over every window offset, then the A2/A3 byte layout written out by hand), not
with the code under test; tests/test_max_pool.py reuses these helpers.
"""
from __future__ import annotations

import math

import numpy as np

from .common import F16, F32, I8, INVALID, NULLPTR, U8, Chain, ErrorCase, HandCase, Samples, Sample, bfloat16, random

I32 = np.dtype(np.int32)


def out_len(size, k, s, p, ceil):
    """PyTorch's pooling_output_shape, dilation 1, written out again for the tests."""
    n = size + 2 * p - k
    out = (n + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:  # the last window may not start in the padding
        out -= 1
    return out


def brute_force(x, kernel, stride, padding, ceil):
    """(out, int64 flat indices) by stacking every window offset of a -inf padded copy
    and taking np.argmax, whose first-occurrence rule is the row-major tie rule. Valid
    for inputs without NaN or -inf (the padding then never wins)."""
    kh, kw = kernel
    sh, sw = stride
    ph, pw = padding
    x = np.asarray(x).astype(np.float32)
    h, w = x.shape[-2:]
    ho, wo = out_len(h, kh, sh, ph, ceil), out_len(w, kw, sw, pw, ceil)
    big_h, big_w = (ho - 1) * sh + kh, (wo - 1) * sw + kw
    xp = np.full(x.shape[:-2] + (max(big_h, ph + h), max(big_w, pw + w)), -np.inf, np.float32)
    xp[..., ph:ph + h, pw:pw + w] = x
    windows = np.stack([xp[..., i:i + (ho - 1) * sh + 1:sh, j:j + (wo - 1) * sw + 1:sw]
                        for i in range(kh) for j in range(kw)], axis=-1)
    best = windows.argmax(axis=-1)
    out = np.take_along_axis(windows, best[..., None], axis=-1)[..., 0]
    ih = np.arange(ho)[:, None] * sh - ph + best // kw
    iw = np.arange(wo)[None, :] * sw - pw + best % kw
    return out, (ih * w + iw).astype(np.int64)


def mask_bytes(indices, kernel):
    """The A2/A3 mask for these indices: int8 (lead..., kH*kW, (ceil(P/16) + 1) * 32),
    the first 4*count bytes the int32 indices in little-endian order, zeros after; for a
    1x1 kernel the NPU's bitmask (0xFF over ceil(P/16)*32 bytes of the first N*ceil(C/16)
    rows)."""
    indices = np.asarray(indices)
    lead, (ho, wo) = indices.shape[:-2], indices.shape[-2:]
    kk = kernel[0] * kernel[1]
    width = (math.ceil(ho * wo / 16) + 1) * 32
    mask = np.zeros(lead + (kk, width), np.int8)
    flat = mask.reshape(-1).view(np.uint8)
    if kk == 1:
        n, c = (1,) + lead if len(lead) == 1 else lead
        for row in range(n * math.ceil(c / 16)):
            flat[row * width:row * width + 32 * math.ceil(ho * wo / 16)] = 0xFF
        return mask
    values = [int(v) for v in indices.reshape(-1)]
    flat[:4 * len(values)] = np.frombuffer(b"".join(v.to_bytes(4, "little", signed=True) for v in values), np.uint8)
    return mask


def pair(v):
    return (v[0], v[-1])


# (input shape, kernel, stride, padding, ceil_mode, tie-rich values). Chosen for: the
# benchmark-like overlapping 3x3/2 case, ceil mode with its correction (H=W=5, k=2, s=2,
# p=1: 3 outputs, not 4), non-square kernels and strides, a 3-D input with the default
# stride, 1x1 kernels (more than 16 channels too), padding at its limit, many ties, N=0,
# and windows wider than 256 positions along an axis (one kernel row, 884 wide: 6188
# elements) and of more than 65,536 elements (300 x 260 = 78,000), where a position within
# a window no longer fits a byte or two (the numpy backend once wrapped it in a uint8).
CONFIGS = [
    ((2, 3, 9, 8), [3, 3], [2, 2], [1, 1], False, False),
    ((1, 2, 7, 7), [3], [2], [1], True, False),
    ((2, 2, 5, 5), [2, 2], [2, 2], [1, 1], True, False),
    ((1, 3, 6, 9), [2, 3], [1, 2], [1, 1], False, False),
    ((3, 5, 7), [3, 2], [], [1, 1], True, False),
    ((1, 2, 4, 3), [1, 1], [2, 2], [0], False, False),
    ((1, 17, 6, 5), [1], [1, 2], [0], True, False),
    ((2, 1, 6, 6), [4, 4], [1, 1], [2, 2], False, False),
    ((1, 20, 5, 5), [3, 3], [3, 1], [0, 1], False, False),
    ((2, 3, 8, 7), [3, 2], [1], [1], True, True),
    ((0, 2, 5, 5), [2], [2], [0], False, False),
    ((1, 9, 989), [7, 884], [9, 794], [2, 65], False, False),
    ((1, 2, 5, 7), [300, 260], [1], [150, 130], True, False),
]


def _geometry(shape, k, s, p, ceil):
    kernel, padding = pair(k), pair(p)
    stride = pair(s) if s else kernel
    ho = out_len(shape[-2], kernel[0], stride[0], padding[0], ceil)
    wo = out_len(shape[-1], kernel[1], stride[1], padding[1], ceil)
    return kernel, stride, padding, tuple(shape[:-2]) + (ho, wo)


def _input(shape, dtype, rng, ties):
    if ties:
        return rng.integers(0, 3, shape).astype(np.float32).astype(dtype)
    return random(shape, dtype, rng)


def forward_samples(dtype, rng) -> list[Sample]:
    return [Sample((_input(shape, dtype, rng, ties), k, s, p, [1, 1], ceil))
            for shape, k, s, p, ceil, ties in CONFIGS]


def backward_samples(dtype, rng) -> list[Sample]:
    samples = []
    for shape, k, s, p, ceil, ties in CONFIGS:
        kernel, stride, padding, out_shape = _geometry(shape, k, s, p, ceil)
        x = _input(shape, dtype, rng, ties)
        _, indices = brute_force(x, kernel, stride, padding, ceil)
        samples.append(Sample((random(out_shape, dtype, rng), x, mask_bytes(indices, kernel), k, s, p, [1], ceil)))
    return samples


def t(values, shape, dtype=F32):
    return np.array(values, dtype=dtype).reshape(shape)


def int32_mask(shape, values):
    """A zero mask of `shape` whose first int32 values (little-endian) are `values`."""
    mask = np.zeros(shape, np.int8)
    raw = mask.reshape(-1).view(np.uint8)
    for i, v in enumerate(values):
        raw[4 * i:4 * i + 4] = list(v.to_bytes(4, "little", signed=True))
    return mask


# The official examples' input (1, 1, 4, 3).
DOC_X = t([0.0850, -0.5147, -0.0212, -0.5654, -0.3222, 0.5847, 1.7510, 0.9954, 0.1842, 0.8392, 0.4835, 0.9213],
          (1, 1, 4, 3))


def _one_by_one_mask(shape, nbytes):
    mask = np.zeros(shape, np.int8)
    mask.reshape(-1)[:nbytes] = -1
    return mask


FORWARD_HAND = [
    # The official example: k 2x2, s 2, p 0 on (4, 3) -> (2, 1). Window rows 0-1, cols 0-1:
    # max 0.0850 at (0, 0) = index 0; rows 2-3: max 1.7510 at (2, 0) = 2*3 + 0 = 6. Mask
    # (1, 1, 4, (ceil(2/16) + 1) * 32 = 64): bytes 0-3 = int32 0, bytes 4-7 = int32 6.
    HandCase("official-example", (DOC_X, [2, 2], [2, 2], [0, 0], [1, 1], False),
             (t([0.0850, 1.7510], (1, 1, 2, 1)), int32_mask((1, 1, 4, 64), [0, 6]))),
    # ceil mode adds a partial last window: W=5, k=2, s=2 -> 3 windows [0,1], [2,3], [4].
    HandCase("ceil-mode-partial-window", (t([3, 1, 4, 1, 5], (1, 1, 1, 5)), [1, 2], [1, 2], [0], [1], True),
             (t([3, 4, 5], (1, 1, 1, 3)), int32_mask((1, 1, 2, 64), [0, 2, 4]))),
    HandCase("floor-mode-drops-it", (t([3, 1, 4, 1, 5], (1, 1, 1, 5)), [1, 2], [1, 2], [0], [1], False),
             (t([3, 4], (1, 1, 1, 2)), int32_mask((1, 1, 2, 64), [0, 2]))),
    # The correction: H=5, k=2, s=2, p=1, ceil gives (5+2-2+1)//2 + 1 = 4, but the 4th
    # window would start at 3*2-1 = 5 = H, in the padding: 3 windows [-1,0], [1,2], [3,4].
    HandCase("ceil-mode-correction", (t([1, 5, 2, 4, 3], (1, 1, 5, 1)), [2, 1], [2, 1], [1, 0], [1], True),
             (t([1, 5, 4], (1, 1, 3, 1)), int32_mask((1, 1, 2, 64), [0, 1, 3]))),
    # All equal: the first position of each window in row-major order wins.
    HandCase("ties-first-in-row-major-order", (np.ones((1, 1, 3, 3), F32), [2], [1], [0], [1], False),
             (np.ones((1, 1, 2, 2), F32), int32_mask((1, 1, 4, 64), [0, 1, 3, 4]))),
    # A window with equal maxima in two rows: row-major order prefers (0, 1) over (1, 0).
    HandCase("tie-row-before-column", (t([0, 7, 7, 0], (1, 1, 2, 2)), [2], [2], [0], [1], False),
             (t([7], (1, 1, 1, 1)), int32_mask((1, 1, 4, 64), [1]))),
    # Padding is -inf, not 0: with k=3, p=1 every window of this 2x2 input holds (0, 0).
    HandCase("padding-is-minus-inf", (t([-1, -2, -3, -4], (1, 1, 2, 2)), [3], [1], [1], [1], False),
             (t([-1, -1, -1, -1], (1, 1, 2, 2)), int32_mask((1, 1, 9, 64), [0, 0, 0, 0]))),
    # 3-D input (C, H, W) = (2, 2, 2), k=2, default stride: max of each channel.
    HandCase("three-d-input", (t([1, 5, 2, 0, 7, 7, 7, 7], (2, 2, 2)), [2], [], [0], [1], False),
             (t([5, 7], (2, 1, 1)), int32_mask((2, 4, 64), [1, 0]))),
    # 1x1 kernel, stride 2: out = input[::2, ::2]; the mask is the NPU's bitmask for this
    # case, 0xFF over ceil(4/16)*32 = 32 bytes of the one channel group.
    HandCase("one-by-one-kernel", (DOC_X, [1, 1], [2, 2], [0, 0], [1, 1], False),
             (t([0.0850, -0.0212, 1.7510, 0.1842], (1, 1, 2, 2)), _one_by_one_mask((1, 1, 1, 64), 32))),
    # float16 in, float16 out, same bits (a max needs no rounding).
    HandCase("float16", (t([0.1, 65504, -3, 2], (1, 1, 2, 2), F16), [2], [2], [0], [1], False),
             (t([65504], (1, 1, 1, 1), F16), int32_mask((1, 1, 4, 64), [1]))),
    # NaN (unsupported on the NPU): PyTorch's CPU rule, the window's last NaN. Windows of
    # [[1, nan, 2], [nan, 0, -inf]] with k=2, s=1: (0, 0) holds NaN at 1 and 3 -> 3;
    # (0, 1) holds NaN at 1 only -> 1.
    HandCase("nan-last-wins", (t([1, np.nan, 2, np.nan, 0, -np.inf], (1, 1, 2, 3)), [2], [1], [0], [1], False),
             (t([np.nan, np.nan], (1, 1, 1, 2)), int32_mask((1, 1, 4, 64), [3, 1]))),
    # All -inf windows: -inf at the first in-bounds position (k=3, p=1 on W=2: windows
    # [-1, 1] and [0, 2] both start in bounds at 0).
    HandCase("all-minus-inf", (t([-np.inf, -np.inf], (1, 1, 1, 2)), [1, 3], [1], [0, 1], [1], False),
             (t([-np.inf, -np.inf], (1, 1, 1, 2)), int32_mask((1, 1, 3, 64), [0, 0]))),
]

BACKWARD_HAND = [
    # The official backward example: 1x1 kernel, stride 2, its mask 32 bytes of 0xFF (the
    # NPU's bitmask, not indices): the mask is not read, gradOutput lands on the strided
    # positions (0,0), (0,2), (2,0), (2,2). The example gives two gradOutput values; the
    # other two are ours.
    HandCase("official-example-1x1",
             (t([0.4757, 0.1726, -1.5, 2.0], (1, 1, 2, 2)), DOC_X, _one_by_one_mask((1, 1, 1, 64), 32),
              [1, 1], [2, 2], [0, 0], [1, 1], False),
             t([0.4757, 0, 0.1726, 0, 0, 0, -1.5, 0, 2.0, 0, 0, 0], (1, 1, 4, 3))),
    # The forward example's mask (indices 0 and 6) sends the two gradients there.
    HandCase("forward-example-mask",
             (t([0.4757, 0.1726], (1, 1, 2, 1)), DOC_X, int32_mask((1, 1, 4, 64), [0, 6]),
              [2, 2], [2, 2], [0, 0], [1, 1], False),
             t([0.4757, 0, 0, 0, 0, 0, 0.1726, 0, 0, 0, 0, 0], (1, 1, 4, 3))),
    # Overlapping windows sharing a maximum accumulate in float32 and round once: three
    # windows send 2048 + 1 + 1 = 2050 to position 2, exact in float16; float16 sums would
    # give 2048 (2048 + 1 rounds back to 2048).
    HandCase("fp16-accumulates-in-fp32",
             (t([0, 2048, 1, 1, 0], (1, 1, 1, 5), F16), np.zeros((1, 1, 1, 5), F16),
              int32_mask((1, 1, 3, 64), [0, 2, 2, 2, 3]), [1, 3], [1], [0, 1], [1], False),
             t([0, 0, 2050, 0, 0], (1, 1, 1, 5), F16)),
    # Same for bfloat16: 256 + 1 + 1 = 258 (spacing 2 at 256); bfloat16 sums give 256.
    HandCase("bf16-accumulates-in-fp32",
             (t([0, 256, 1, 1, 0], (1, 1, 1, 5), bfloat16), np.zeros((1, 1, 1, 5), bfloat16),
              int32_mask((1, 1, 3, 64), [0, 2, 2, 2, 3]), [1, 3], [1], [0, 1], [1], False),
             t([0, 0, 258, 0, 0], (1, 1, 1, 5), bfloat16)),
    # 3-D: (C, H, W) = (2, 2, 2), indices 1 and 0 of each channel's plane.
    HandCase("three-d-input",
             (t([3, 4], (2, 1, 1)), np.zeros((2, 2, 2), F32), int32_mask((2, 4, 64), [1, 0]),
              [2], [], [0], [1], False),
             t([0, 3, 0, 0, 4, 0, 0, 0], (2, 2, 2))),
    # The op_api does not check the mask's shape: a mask with the right int32 prefix in
    # another shape (here flat, 3-D) is read all the same.
    HandCase("mask-shape-not-checked",
             (t([0.5, 0.25], (1, 1, 2, 1)), DOC_X, int32_mask((1, 1, 256), [5, 7]),
              [2, 2], [2, 2], [0, 0], [1, 1], False),
             t([0, 0, 0, 0, 0, 0.5, 0, 0.25, 0, 0, 0, 0], (1, 1, 4, 3))),
]


def _x(shape=(1, 2, 6, 6), dtype=F32):
    return np.ones(shape, dtype)


POOL = ([3, 3], [2, 2], [1, 1], [1, 1])  # kernel, stride, padding, dilation on _x(): out (1, 2, 3, 3)
MASK_SHAPE = (1, 2, 9, 64)
OUT_SHAPE = (1, 2, 3, 3)

FORWARD_ERRORS = [
    ErrorCase("input-none", (None, *POOL), NULLPTR, "input: expected tensor"),
    ErrorCase("kernel-none", (_x(), None, *POOL[1:]), NULLPTR, "kernel_size"),
    ErrorCase("stride-none", (_x(), POOL[0], None, *POOL[2:]), NULLPTR, "stride"),
    ErrorCase("padding-none", (_x(), *POOL[:2], None, POOL[3]), NULLPTR, "padding"),
    ErrorCase("dilation-none", (_x(), *POOL[:3], None), NULLPTR, "dilation"),
    ErrorCase("kernel-len-3", (_x(), [3, 3, 3], *POOL[1:]), INVALID, r"kernel_size: expected 1 or 2 values"),
    ErrorCase("kernel-empty", (_x(), [], *POOL[1:]), INVALID, r"kernel_size: expected 1 or 2 values"),
    # the op_api checks kernelSize's length before the dtypes
    ErrorCase("kernel-len-before-dtype", (_x().astype(I32), [3, 3, 3], *POOL[1:]), INVALID, "kernel_size"),
    ErrorCase("input-int32", (_x().astype(I32), *POOL), INVALID,
              "input: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("input-float64", (_x().astype(np.float64), *POOL), INVALID, "got float64"),
    ErrorCase("out-dtype-differs", (_x(), *POOL), INVALID, r"out\[0\] \(out\): expected dtype float32",
              kwargs={"out": (np.zeros(OUT_SHAPE, F16), None)}),
    ErrorCase("mask-uint8", (_x(), *POOL), INVALID, r"out\[1\] \(mask\): expected dtype int8",
              kwargs={"out": (None, np.zeros(MASK_SHAPE, U8))}),
    ErrorCase("mask-int32", (_x(), *POOL), INVALID, r"out\[1\] \(mask\): expected dtype int8 .*, got int32",
              kwargs={"out": (None, np.zeros(MASK_SHAPE, I32))}),
    ErrorCase("input-2d", (np.ones((6, 6), F32), *POOL), INVALID, "input: expected a 3-D .* or 4-D"),
    ErrorCase("input-5d", (np.ones((1, 1, 2, 6, 6), F32), *POOL), INVALID, "input: expected a 3-D"),
    ErrorCase("stride-len-3", (_x(), [3], [2, 2, 2], [1], [1]), INVALID, "stride: expected 0, 1 or 2 values"),
    ErrorCase("padding-empty", (_x(), [3], [2], [], [1]), INVALID, "padding: expected 1 or 2 values"),
    ErrorCase("padding-len-3", (_x(), [3], [2], [1, 1, 1], [1]), INVALID, "padding: expected 1 or 2 values"),
    ErrorCase("dilation-empty", (_x(), [3], [2], [1], []), INVALID, "dilation: expected 1 or 2 values"),
    ErrorCase("kernel-zero", (_x(), [0, 2], [2], [0], [1]), INVALID, r"kernel_size: expected kH, kW > 0"),
    ErrorCase("kernel-negative", (_x(), [-3], [2], [0], [1]), INVALID, r"kernel_size: expected kH, kW > 0"),
    ErrorCase("stride-zero", (_x(), [3], [2, 0], [1], [1]), INVALID, r"stride: expected sH, sW > 0"),
    ErrorCase("stride-negative", (_x(), [3], [-1], [1], [1]), INVALID, r"stride: expected sH, sW > 0"),
    ErrorCase("padding-negative", (_x(), [3], [2], [-1], [1]), INVALID, r"padding: expected 0 <= padding"),
    ErrorCase("padding-over-half-kernel", (_x(), [3], [2], [2], [1]), INVALID, r"padding: expected 0 <= padding"),
    ErrorCase("padding-over-half-kernel-w", (_x(), [2, 3], [2], [1, 2], [1]), INVALID, r"padding: .*\(2, 3\)"),
    ErrorCase("dilation-2", (_x(), [3], [2], [1], [2]), INVALID, r"dilation: expected 1"),
    ErrorCase("dilation-w-2", (_x(), [3], [2], [1], [1, 2]), INVALID, r"dilation: expected 1"),
    ErrorCase("zero-channels", (_x((1, 0, 6, 6)), *POOL), INVALID, r"input: expected C, H, W > 0"),
    ErrorCase("zero-width", (_x((1, 2, 6, 0)), *POOL), INVALID, r"input: expected C, H, W > 0"),
    ErrorCase("output-empty", (_x((1, 2, 2, 2)), [5], [1], [0], [1]), INVALID,
              r"input: expected an output of at least 1x1, got -2x-2"),
    ErrorCase("out-wrong-shape", (_x(), *POOL), INVALID, r"out\[0\] \(out\): expected shape \(1, 2, 3, 3\)",
              kwargs={"out": (np.zeros((1, 2, 4, 3), F32), None)}),
    ErrorCase("out-3d-for-4d-input", (_x(), *POOL), INVALID, r"out\[0\] \(out\): expected shape",
              kwargs={"out": (np.zeros((2, 3, 3), F32), None)}),
    ErrorCase("mask-wrong-shape", (_x(), *POOL), INVALID,
              r"out\[1\] \(mask\): expected shape \(1, 2, 9, 64\)",
              kwargs={"out": (None, np.zeros((1, 2, 9, 32), I8))}),
    ErrorCase("ceil-mode-int", (_x(), *POOL, 2), INVALID, "ceil_mode: expected a bool", reaches_c=False),
    ErrorCase("kernel-floats", (_x(), [3.0], [2], [1], [1]), INVALID, "kernel_size: expected an int or a sequence of ints",
              reaches_c=False),
    ErrorCase("out-not-a-tuple", (_x(), *POOL), INVALID, "out: expected a tuple of 2 arrays",
              kwargs={"out": np.zeros(OUT_SHAPE, F32)}, reaches_c=False),
]


def _g(shape=OUT_SHAPE, dtype=F32):
    return np.ones(shape, dtype)


def _m(shape=MASK_SHAPE, dtype=I8):
    return np.zeros(shape, dtype)


def _b(*, g=None, x=None, m=None, pool=POOL, ceil=False):
    return (_g() if g is None else g, _x() if x is None else x, _m() if m is None else m, *pool, ceil)


BACKWARD_ERRORS = [
    ErrorCase("grad-none", (None, _x(), _m(), *POOL), NULLPTR, "grad_output: expected tensor"),
    ErrorCase("input-none", (_g(), None, _m(), *POOL), NULLPTR, "input: expected tensor"),
    ErrorCase("mask-none", (_g(), _x(), None, *POOL), NULLPTR, "mask: expected tensor"),
    ErrorCase("kernel-none", (_g(), _x(), _m(), None, *POOL[1:]), NULLPTR, "kernel_size"),
    ErrorCase("stride-none", (_g(), _x(), _m(), POOL[0], None, *POOL[2:]), NULLPTR, "stride"),
    ErrorCase("padding-none", (_g(), _x(), _m(), *POOL[:2], None, POOL[3]), NULLPTR, "padding"),
    ErrorCase("dilation-none", (_g(), _x(), _m(), *POOL[:3], None), NULLPTR, "dilation"),
    # the op_api reports a bad kernelSize length as ACLNN_ERR_PARAM_NULLPTR
    ErrorCase("kernel-len-3-is-nullptr", _b(pool=([3, 3, 3], *POOL[1:])), NULLPTR,
              "kernel_size: expected 1 or 2 values"),
    ErrorCase("input-int32", _b(g=_g().astype(I32), x=_x().astype(I32)), INVALID,
              "input: expected dtype float32, float16 or bfloat16, got int32"),
    ErrorCase("grad-dtype-differs", _b(g=_g(dtype=F16)), INVALID,
              r"grad_output: expected dtype float32 \(the dtype of input\), got float16"),
    ErrorCase("out-dtype-differs", _b(), INVALID, r"out: expected dtype float32",
              kwargs={"out": np.zeros((1, 2, 6, 6), bfloat16)}),
    ErrorCase("mask-uint8", _b(m=_m(dtype=U8)), INVALID, "mask: expected dtype int8 .*, got uint8"),
    ErrorCase("mask-int32", _b(m=_m((1, 2, 9, 16), I32)), INVALID, "mask: expected dtype int8 .*, got int32"),
    ErrorCase("input-2d", _b(x=np.ones((6, 6), F32)), INVALID, "input: expected a 3-D or 4-D tensor"),
    ErrorCase("out-5d", _b(), INVALID, "out: expected a 3-D or 4-D tensor",
              kwargs={"out": np.zeros((1, 1, 2, 6, 6), F32)}),
    ErrorCase("grad-2d", _b(g=np.ones((3, 3), F32)), INVALID, "grad_output: expected a 3-D or 4-D tensor"),
    ErrorCase("mask-2d", _b(m=_m((18, 64))), INVALID, "mask: expected a 3-D or 4-D tensor"),
    ErrorCase("stride-len-3", _b(pool=([3], [2, 2, 2], [1], [1])), INVALID, "stride: expected 0, 1 or 2 values"),
    ErrorCase("padding-len-3", _b(pool=([3], [2], [1, 1, 1], [1])), INVALID, "padding: expected 1 or 2 values"),
    ErrorCase("dilation-len-3", _b(pool=([3], [2], [1], [1, 1, 1])), INVALID, "dilation: expected 1 or 2 values"),
    ErrorCase("kernel-zero", _b(pool=([0], [2], [0], [1])), INVALID, r"kernel_size: expected kH, kW > 0"),
    ErrorCase("stride-zero", _b(pool=([3], [0], [1], [1])), INVALID, r"stride: expected sH, sW > 0"),
    ErrorCase("padding-over-half-kernel", _b(pool=([3], [2], [2], [1])), INVALID, r"padding: expected 0 <= padding"),
    ErrorCase("padding-negative", _b(pool=([3], [2], [-1], [1])), INVALID, r"padding: expected 0 <= padding"),
    ErrorCase("dilation-2", _b(pool=([3], [2], [1], [2])), INVALID, r"dilation: expected 1"),
    ErrorCase("out-wrong-shape", _b(), INVALID, r"out: expected shape \(1, 2, 6, 6\) \(the shape of input\)",
              kwargs={"out": np.zeros((1, 2, 6, 5), F32)}),
    ErrorCase("zero-channels", _b(g=_g((1, 0, 3, 3)), x=_x((1, 0, 6, 6))), INVALID, r"input: expected C, H, W > 0"),
    ErrorCase("grad-wrong-shape", _b(g=_g((1, 2, 4, 3))), INVALID,
              r"grad_output: expected shape \(1, 2, 3, 3\) \(the forward's output shape\)"),
    # ceil mode: H = W = 6, k=3, s=2, p=1 give 4 outputs, not 3
    ErrorCase("grad-shape-without-ceil-mode", _b(ceil=True), INVALID, r"grad_output: expected shape \(1, 2, 4, 4\)"),
    # too small for the int32 prefix (4*1*2*3*3 = 72 bytes): would be read out of bounds
    ErrorCase("mask-too-small", _b(m=_m((1, 2, 1, 32))), INVALID, r"mask: expected at least 72 bytes"),
    ErrorCase("mask-strided", _b(m=_m((1, 2, 9, 128))[..., ::2]), INVALID, "mask: expected a C-contiguous",
              reaches_c=False),
    ErrorCase("ceil-mode-str", _b(ceil="no"), INVALID, "ceil_mode: expected a bool", reaches_c=False),
]

OP_DB = {
    "max_pool2d_with_mask": Samples("max_pool2d_with_mask", (F32, F16, bfloat16), forward_samples, FORWARD_HAND,
                                   FORWARD_ERRORS, exact=True),  # a maximum and its index: exact
    # both backends add in (n, c, oh, ow) order in float32 and round once
    "max_pool2d_with_mask_backward": Samples("max_pool2d_with_mask_backward", (F32, F16, bfloat16),
                                            backward_samples, BACKWARD_HAND, BACKWARD_ERRORS, exact=True),
}



def _chain(put):
    """Forward on the device; its mask never leaves the device and feeds the backward."""
    import ascend_aclnn as aa
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 9, 8)).astype(F32)
    g = rng.standard_normal((2, 3, 5, 5)).astype(F32)
    out, mask = aa.max_pool2d_with_mask(put(x), [3, 3], [2, 2], [1, 1], [1, 1], True)
    return out, mask, aa.max_pool2d_with_mask_backward(put(g), put(x), mask, [3, 3], [2, 2], [1, 1], [1, 1], True)


CHAINS = [Chain("max-pool-forward-mask-backward", _chain)]
