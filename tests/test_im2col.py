"""Im2col / Im2colBackward checks that do not fit the generic op_db suite: an independent
per-element implementation of the definition, every mixed out dtype, batched against
unbatched, and who writes what for an empty grad_output (the simulator, like the NPU,
leaves out alone; the binding zero-fills)."""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.backends.npu import launch as npu_backend
from ascend_aclnn.ops import REGISTRY
from op_db.common import BF16, F16, F32
from op_db import OP_DB
from op_db.im2col import blocks
from test_ops import _raw_args

FLOATS = (F32, F16, BF16)
# (C, H, W, kernel, dilation, padding, stride)
CASES = [(2, 5, 6, (3, 3), (1, 1), (1, 1), (1, 1)), (1, 7, 5, (2, 3), (2, 1), (2, 0), (2, 3)),
         (3, 4, 4, (1, 2), (1, 2), (3, 1), (1, 1)), (1, 6, 7, (4, 2), (1, 3), (0, 2), (3, 1))]


def slow_unfold(x, k, d, p, s):
    """The definition, one element at a time (x: (C, H, W))."""
    c_, h_, w_ = x.shape
    ho, wo = blocks(h_, k[0], d[0], p[0], s[0]), blocks(w_, k[1], d[1], p[1], s[1])
    cols = np.zeros((c_ * k[0] * k[1], ho * wo), x.dtype)
    for c, ki, kj, oh, ow in itertools.product(range(c_), range(k[0]), range(k[1]), range(ho), range(wo)):
        h, w = oh * s[0] - p[0] + ki * d[0], ow * s[1] - p[1] + kj * d[1]
        if 0 <= h < h_ and 0 <= w < w_:
            cols[(c * k[0] + ki) * k[1] + kj, oh * wo + ow] = x[c, h, w]
    return cols


def slow_fold_950_order(cols, size, k, d, p, s):
    """Each pixel summed in float32 from 0 over its blocks, oh then ow ascending, as the
    950 kernel does, then rounded once to the input dtype."""
    h_, w_ = size
    ho, wo = blocks(h_, k[0], d[0], p[0], s[0]), blocks(w_, k[1], d[1], p[1], s[1])
    c_ = cols.shape[0] // (k[0] * k[1])
    out = np.zeros((c_, h_, w_), cols.dtype)
    for c, h, w in itertools.product(range(c_), range(h_), range(w_)):
        total = np.float32(0)
        for oh, ow in itertools.product(range(ho), range(wo)):
            dh, dw = h + p[0] - oh * s[0], w + p[1] - ow * s[1]
            if dh % d[0] == 0 and dw % d[1] == 0 and 0 <= dh // d[0] < k[0] and 0 <= dw // d[1] < k[1]:
                total = np.float32(total + np.float32(cols[(c * k[0] + dh // d[0]) * k[1] + dw // d[1], oh * wo + ow]))
        out[c, h, w] = total
    return out


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_against_the_definition(case, dtype, backend):
    c, h, w, k, d, p, s = case
    rng = np.random.default_rng(7)
    x = rng.standard_normal((c, h, w)).astype(np.float32).astype(dtype)
    cols = aa.im2col(x, k, d, p, s)
    np.testing.assert_array_equal(cols, slow_unfold(x, k, d, p, s))
    g = rng.standard_normal(cols.shape).astype(np.float32).astype(dtype)
    gx = aa.im2col_backward(g, [h, w], k, d, p, s)
    assert gx.dtype == dtype
    np.testing.assert_array_equal(gx, slow_fold_950_order(g, (h, w), k, d, p, s))


@pytest.mark.parametrize("src,dst", [(a, b) for a in FLOATS for b in FLOATS if a != b],
                         ids=lambda d: np.dtype(d).name)
def test_mixed_out_dtype_is_the_input_dtype_result_cast(src, dst, backend):
    """Both op_apis compute in the input's dtype and cast to out's at the end."""
    rng = np.random.default_rng(8)
    c, h, w, k, d, p, s = CASES[1]
    x = (rng.standard_normal((2, c, h, w)) * 300).astype(np.float32).astype(src)
    cols = aa.im2col(x, k, d, p, s)
    out = np.full(cols.shape, np.nan, dst)
    assert aa.im2col(x, k, d, p, s, out=out) is out
    np.testing.assert_array_equal(out, cols.astype(dst))
    g = (rng.standard_normal(cols.shape) * 300).astype(np.float32).astype(src)
    gx = aa.im2col_backward(g, [h, w], k, d, p, s)
    out = np.full(gx.shape, np.nan, dst)
    assert aa.im2col_backward(g, [h, w], k, d, p, s, out=out) is out
    np.testing.assert_array_equal(out, gx.astype(dst))


def test_mixed_out_dtype_backends_agree(sim):
    rng = np.random.default_rng(9)
    c, h, w, k, d, p, s = CASES[0]
    for src, dst in itertools.product(FLOATS, FLOATS):
        g = rng.standard_normal((2, c * 9, h * w)).astype(np.float32).astype(src)
        results = []
        for name in ("numpy", "npu"):
            with aa.use_backend(name):
                results.append(aa.im2col_backward(g, [h, w], k, d, p, s, out=np.empty((2, c, h, w), dst)))
        np.testing.assert_array_equal(results[0].view(np.uint8), results[1].view(np.uint8))


def test_batched_is_unbatched_per_image(backend):
    rng = np.random.default_rng(10)
    c, h, w, k, d, p, s = CASES[3]
    x = rng.standard_normal((3, c, h, w)).astype(F32)
    cols = aa.im2col(x, k, d, p, s)
    g = rng.standard_normal(cols.shape).astype(F32)
    gx = aa.im2col_backward(g, [h, w], k, d, p, s)
    for n in range(3):
        np.testing.assert_array_equal(aa.im2col(x[n], k, d, p, s), cols[n])
        np.testing.assert_array_equal(aa.im2col_backward(g[n], [h, w], k, d, p, s), gx[n])


EMPTY_GRADS = [  # (grad shape, input_size, kernel, stride): N = 0, C = 0, and L = 0
    ((0, 8, 12), [4, 5], [2, 2], [1, 1]), ((0, 6), [4, 5], [2, 2], [1, 2]), ((2, 16, 0), [1, 3], [4, 4], [2, 2])]


@pytest.mark.parametrize("shape,size,kernel,stride", EMPTY_GRADS, ids=["n0", "c0", "l0"])
def test_empty_grad_zero_fills_a_device_out(shape, size, kernel, stride, backend):
    g = np.zeros(shape, F32)
    out_shape = shape[:-2] + (shape[-2] // (kernel[0] * kernel[1]),) + tuple(size)
    out = aa.to_device(np.full(out_shape, np.nan, F32))
    assert aa.im2col_backward(g, size, kernel, [1, 1], [0, 0], stride, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.zeros(out_shape, F32))


def test_simulator_leaves_out_unwritten_for_an_empty_grad(npu):
    """Without the binding's zero fill the simulated op, like the NPU, succeeds and writes
    nothing: what proves the fill above is the binding's."""
    spec = REGISTRY["im2col_backward"]
    unfilled = dataclasses.replace(spec, outputs=(dataclasses.replace(spec.outputs[0], zero_fill=False),))
    out = aa.to_device(np.full((2, 1, 1, 3), np.nan, F32))
    a = unfilled.bind((np.zeros((2, 16, 0), F32), [1, 3], [4, 4], [1, 1], [0, 0], [2, 2]), {"out": out})
    assert npu_backend.run(unfilled, a) is out
    assert np.isnan(out.numpy()).all()


C_NAMES = {"input": "self", "grad_output": "gradOutput", "input_size": "inputSize", "kernel_size": "kernelSize",
           "dilation": "dilation", "padding": "padding", "stride": "stride", "out": "out"}
RAW_ERRORS = [(op, c) for op in ("im2col_backward", "im2col") for c in OP_DB[op].error_cases
              # A C caller passes some out for a negative input_size; the shape check names out.
              if c.reaches_c and c.id != "negative-input-size"]


@pytest.mark.parametrize("op,case", RAW_ERRORS, ids=[f"{o}-{c.id}" for o, c in RAW_ERRORS])
def test_simulator_blames_the_same_argument(op, case, npu):
    """Not just the same status: the simulated op_api fails on the same check, so its
    aclGetRecentErrMsg names the C parameter the binding's message names."""
    spec = REGISTRY[op]
    with pytest.raises(aa.AclnnError) as binding:
        getattr(aa, op)(*case.args, **case.kwargs)
    with pytest.raises(aa.AclnnError) as sim:
        npu_backend.run(spec, _raw_args(spec, case.args, case.kwargs))
    recent = sim.value.recent.split(f"{spec.phase1_name}: ", 1)[1]
    assert recent.startswith(C_NAMES[binding.value.argument]), (binding.value.argument, recent)


def test_a_padding_near_int64_is_computed_without_a_padded_buffer(backend):
    """Found by the long fuzz: padding 2**61 with stride 2**61 is a valid, tiny problem
    (three block rows, two of them wholly in the padding); the reference once allocated
    the padded image and failed."""
    big = 2**61
    ho, wo = 3, 3  # (5 + 2*big - 2) // big + 1 rows; 7 - 2*(3-1) columns
    g = np.arange(2 * 6 * ho * wo, dtype=np.float32).reshape(1, 12, ho * wo)  # C=2, k (2, 3)
    out = aa.im2col_backward(g, [5, 7], [2, 3], [1, 2], [big, 0], [big, 1])
    # Only block row oh = 1 (it starts at image row big - big = 0) touches the image.
    expected = np.zeros((1, 2, 5, 7), np.float32)
    cols = g.reshape(1, 2, 2, 3, ho, wo)  # (n, c, ki, kj, oh, ow)
    for ki in range(2):
        for kj in range(3):
            for ow in range(wo):
                expected[0, :, ki, ow + 2 * kj] += cols[0, :, ki, kj, 1, ow]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("op", ["im2col", "im2col_backward"])
def test_a_padded_extent_past_int64_is_refused(op, backend):
    """The op_api computes block counts in int64: 2**62 padding on a 5-high image overflows."""
    if op == "im2col":
        args = (np.ones((1, 2, 5, 7), np.float32), [2, 3], [1, 2], [2**62, 0], [2**62, 1])
    else:
        args = (np.ones((1, 12, 9), np.float32), [5, 7], [2, 3], [1, 2], [2**62, 0], [2**62, 1])
    with pytest.raises(aa.AclnnParamInvalidError, match=r"padding: expected .* \+ 2\*padding <= 2\*\*63-1"):
        getattr(aa, op)(*args)
