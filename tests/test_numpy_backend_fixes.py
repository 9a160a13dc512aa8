"""Regression tests for defects of the numpy backend found while splitting the plain
reference from the fast kernels (issue 15). Each ran wrong before its fix; each now
holds on the fast kernels, on the plain reference and, where the simulator models it,
on the npu backend.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import bfloat16
from ascend_aclnn.backends import numpy as numpy_kernels

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16)
DTYPES = [F32, F16, BF16]


def bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def on_numpy(fn, *args, plain=False, **kwargs):
    """fn on the numpy backend: its fast kernel, or (plain=True) the plain reference."""
    with aa.use_backend("numpy"):
        if plain:
            with numpy_kernels.plain_reference():
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)


# ---- max_pool2d_with_mask: the output is the element the mask names, bit for bit ---------

@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
@pytest.mark.parametrize("values", [(0.0, -0.0), (-0.0, 0.0), (-0.0, -0.0, 0.0, -1.0)], ids=str)
def test_max_pool_signed_zeros_are_the_masked_element(values, dtype, backend):
    """+0.0 == -0.0, so the first zero of the window wins and the mask names it; the
    output was the float32 max's zero (x = [+0.0, -0.0]: -0.0 on the numpy backend, +0.0,
    x[0], on the npu backend)."""
    x = np.array(values, np.float32).astype(dtype).reshape(1, 1, 1, -1)
    out, mask = aa.max_pool2d_with_mask(x, [1, x.shape[-1]], [1], [0], [1], False)
    out, mask = np.asarray(out), np.asarray(mask)
    assert aa.mask_to_indices(mask, out.shape).ravel().tolist() == [0]
    assert bits(out) == bits(x.reshape(-1)[:1])


@pytest.mark.parametrize("plain", [False, True], ids=["fast", "plain"])
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_max_pool_output_is_the_masked_element_everywhere(dtype, plain):
    """ReLU-like planes (half the values +0.0 or -0.0) and NaNs with payloads (signalling
    ones too, which a float32 round trip would quiet): every output's bits are the bits
    of the input element its mask index names."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 17, 19)).astype(np.float32).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.random(flat.size) < 0.5] = 0
    flat[rng.random(flat.size) < 0.25] *= -1  # -0.0 among them
    nans = {F32: ([0x7fc12345, 0x7f800001, 0xffc00002], np.uint32),
            F16: ([0x7e01, 0x7c01, 0xfd55], np.uint16), BF16: ([0x7fc1, 0x7f81, 0xffa5], np.uint16)}[dtype]
    payloads = np.array(nans[0], nans[1]).view(dtype)
    where = rng.random(flat.size) < 0.02
    flat[where] = payloads[rng.integers(0, 3, int(where.sum()))]
    out, mask = on_numpy(aa.max_pool2d_with_mask, x, [3, 3], [2, 2], [1, 1], [1, 1], True, plain=plain)
    idx = aa.mask_to_indices(mask, out.shape)
    named = np.take_along_axis(x.reshape(2, 3, -1), idx.reshape(2, 3, -1), axis=-1).reshape(out.shape)
    assert bits(out) == bits(named)
    assert np.isnan(out.astype(np.float32)).any() and (out.astype(np.float32) == 0).any()


# ---- max_pool2d_with_mask: windows wider than a byte, or two, can hold -------------------

def _run_on(where: str, request, fn, *args):
    """fn(*args) on the numpy backend's fast kernel ("fast"), on the plain reference
    ("plain") or on the npu backend against the simulator ("npu")."""
    if where == "npu":
        request.getfixturevalue("npu")
        return fn(*args)
    return on_numpy(fn, *args, plain=where == "plain")


WIDE_WINDOWS = [
    ((1, 9, 989), [7, 884], [9, 794], [2, 65]),  # the case: 884 offsets along W
    ((1, 2, 5, 7), [300, 260], [1], [150, 130]),  # 78,000 elements per window
    ((1, 2, 2, 70003), [2, 70000], [1, 2], [1, 0]),  # 70,000 offsets along W
]


@pytest.mark.parametrize("where", ["fast", "plain", "npu"])
@pytest.mark.parametrize("shape,kernel,stride,padding", WIDE_WINDOWS, ids=["884-wide", "78000-elements", "70000-wide"])
def test_max_pool_windows_wider_than_256(shape, kernel, stride, padding, where, request):
    """The numpy backend kept a position within a window in a uint8: past 256 offsets it
    wrapped (the issue's case gave index -10 where PyTorch gives 502), and the backward
    then refused the backend's own mask as one the kernel would fault on."""
    from op_db.max_pool import brute_force, pair
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float16)
    out, mask = _run_on(where, request, aa.max_pool2d_with_mask, x, kernel, stride, padding, [1], False)
    want_out, want_idx = brute_force(x, pair(kernel), pair(stride), pair(padding), False)
    assert (aa.mask_to_indices(np.asarray(mask), np.shape(out)) == want_idx).all()
    assert bits(out) == bits(want_out.astype(np.float16))
    grad = _run_on(where, request, aa.max_pool2d_with_mask_backward, np.ones(np.shape(out), np.float16), x, mask,
                   kernel, stride, padding, [1], False)
    assert np.asarray(grad).astype(np.float32).sum() == np.prod(np.shape(out))


# ---- no NumPy RuntimeWarning on a valid call (the npu backend prints nothing) -----------

def _ones(shape, dtype=F32):
    return np.ones(shape, dtype)


def _bf16_bits(value: int, shape) -> np.ndarray:
    return np.full(shape, value, np.uint16).view(bfloat16)


def _gn_grad_args(dtype, n=1, c=4, hw=(2, 2)):
    x = np.random.default_rng(0).standard_normal((n, c) + hw).astype(dtype)
    return (x, np.zeros((n, 2), dtype), np.ones((n, 2), dtype), x, _ones(c, dtype), np.zeros(c, dtype), 2)


WARNING_CASES = {
    # swish_scale past float32's range: -swish_scale * z is -inf or inf, the sigmoid 0 or 1
    "group-norm-swish-scale-1e300": lambda: aa.group_norm_swish(
        np.random.default_rng(0).standard_normal((1, 4, 2, 2)).astype(F32), _ones(4), np.zeros(4, F32), 2,
        swish_scale=1e300),
    "group-norm-grad-swish-scale-1e300": lambda: aa.group_norm_swish_grad(*_gn_grad_args(F32), swish_scale=1e300),
    # a constant group: var = 0, rstd = 1/sqrt(1e-12) = 1e6, past float16's 65504: inf
    "float16-group-norm-rstd-past-float16": lambda: aa.group_norm_swish(
        _ones((1, 4, 2, 2), F16), _ones(4, F16), np.zeros(4, F16), 2, eps=1e-12),
    # a signalling NaN summed with others (and alone): a quiet NaN comes out
    "bfloat16-pad-backward-signalling-nan": lambda: aa.replication_pad2d_backward(
        _bf16_bits(0x7f81, (1, 1, 6, 6)), np.zeros((1, 1, 4, 4), BF16), [1, 1, 1, 1]),
    "float16-pad-backward-signalling-nan": lambda: aa.replication_pad2d_backward(
        np.full((1, 1, 6, 6), 0x7c01, np.uint16).view(F16), np.zeros((1, 1, 4, 4), F16), [1, 1, 1, 1]),
    # the same on blocks of planes split over the pool's threads (which must silence it too)
    "bfloat16-pad-backward-signalling-nan-threaded": lambda: aa.replication_pad2d_backward(
        _bf16_bits(0x7f81, (8, 64, 34, 34)), np.zeros((8, 64, 32, 32), BF16), [1, 1, 1, 1]),
    # +inf and -inf in one interval: inf - inf = NaN
    "upsample-backward-inf-minus-inf-threaded": lambda: aa.upsample_nearest_exact1d_backward(
        np.tile(np.array([np.inf, -np.inf], F32), (8, 64, 1024)), [2048], [8, 64, 1024]),
    # float32 columns summed past float16's range, in a float16 out=
    "im2col-backward-past-float16": lambda: aa.im2col_backward(
        np.full((1, 4, 4), 60000, F16), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
    "im2col-float32-into-float16-out": lambda: aa.im2col(
        np.full((1, 1, 3, 3), 1e38, F32), [2, 2], [1, 1], [0, 0], [1, 1], out=np.empty((1, 4, 4), F16)),
    "max-pool-backward-past-float16": lambda: aa.max_pool2d_with_mask_backward(
        np.full((1, 1, 1, 2), 60000, F16), np.zeros((1, 1, 1, 3), F16),
        aa.indices_to_mask(np.array([[[[1, 1]]]]), [1, 2]), [1, 2], [1], [0], [1], False),
}


def _outputs(result) -> list:
    with np.errstate(invalid="ignore"):  # a signalling NaN widened: quiet, as meant
        return [np.asarray(r.numpy() if isinstance(r, aa.DeviceArray) else r).astype(np.float64)
                for r in (result if isinstance(result, tuple) else (result,))]


def _all_nan(result) -> None:
    for i, r in enumerate(_outputs(result)):
        assert np.isnan(r).all(), (i, r)


def _relu_of_group_norm(result) -> None:
    """swish_scale = 1e300 saturates the sigmoid: y = z * (z > 0) for the normalised z
    (gamma 1, beta 0), computed here in float64 from the statistics' definition."""
    x = np.random.default_rng(0).standard_normal((1, 4, 2, 2)).astype(F32).astype(np.float64).reshape(1, 2, -1)
    z = ((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)).reshape(1, 4, 2, 2)
    y = _outputs(result)[0]
    np.testing.assert_allclose(y, np.where(z > 0, z, 0.0), rtol=1e-5, atol=1e-6)


def _equals(want):
    def check(result):
        np.testing.assert_array_equal(_outputs(result)[0], np.asarray(want, np.float64))
    return check


INF = np.inf
# What each case is meant to give, worked out by hand (the rule in the case's comment).
INTENDED = {
    "group-norm-swish-scale-1e300": _relu_of_group_norm,
    # float32(1e300) is inf: inf * z * sigmoid * (1 - sigmoid) is inf * 0 at a saturated
    # sigmoid, NaN, as on the simulator's (the NPU's) float32 arithmetic
    "group-norm-grad-swish-scale-1e300": _all_nan,
    "float16-group-norm-rstd-past-float16": lambda r: _equals(np.full((1, 2), INF))((_outputs(r)[2],)),
    "bfloat16-pad-backward-signalling-nan": _all_nan,
    "float16-pad-backward-signalling-nan": _all_nan,
    "bfloat16-pad-backward-signalling-nan-threaded": _all_nan,
    "upsample-backward-inf-minus-inf-threaded": _all_nan,  # every interval holds one inf and one -inf
    # 60000 from each 2x2 window covering a position: corners 1, edges 2, the centre 4
    "im2col-backward-past-float16": _equals([[[[6e4, INF, 6e4], [INF, INF, INF], [6e4, INF, 6e4]]]]),
    "im2col-float32-into-float16-out": _equals(np.full((1, 4, 4), INF)),
    "max-pool-backward-past-float16": _equals([[[[0, INF, 0]]]]),  # both windows' maxima at index 1
}


@pytest.mark.parametrize("where", ["fast", "plain", "npu"])
@pytest.mark.parametrize("case", sorted(WARNING_CASES))
def test_no_runtime_warning_where_the_result_is_the_intended_one(case, where, request, monkeypatch):
    """These printed NumPy RuntimeWarnings (overflow in a cast, invalid value in an add)
    on the numpy backend, on arithmetic meant to give inf or NaN: no warning, and the
    result is the one meant."""
    monkeypatch.setenv("ASCEND_ACLNN_REFERENCE_THREADS", "2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _run_on(where, request, WARNING_CASES[case])
    INTENDED[case](result)


def test_every_warning_case_says_what_it_is_meant_to_give():
    assert set(INTENDED) == set(WARNING_CASES)


@pytest.mark.parametrize("plain", [False, True], ids=["fast", "plain"])
def test_every_op_db_sample_runs_without_warnings(plain, monkeypatch):
    from op_db import OP_DB
    monkeypatch.setenv("ASCEND_ACLNN_REFERENCE_THREADS", "2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for op, info in sorted(OP_DB.items()):
            fn = getattr(aa, op)
            for dtype in info.dtypes:
                for sample in info.samples(np.dtype(dtype), np.random.default_rng(0)):
                    on_numpy(fn, *sample.args, plain=plain, **sample.kwargs)
            for case in info.hand_cases:
                on_numpy(fn, *case.args, plain=plain, **case.kwargs)


# ---- replication_pad2d_backward: a position read once is a copy, every bit kept ------------

@pytest.mark.parametrize("where", ["fast", "plain", "npu"])
def test_bfloat16_pad_backward_copies_what_it_reads_once(where, request):
    """A position read once is a copy, so a signalling NaN there keeps its bits on every
    backend (the simulator used to quiet it, then the numpy backend did; a sum of several
    is still rounded once from float32)."""
    g = _bf16_bits(0xffa5, (1, 2, 6, 7))  # a negative signalling NaN everywhere
    out = np.asarray(_run_on(where, request, aa.replication_pad2d_backward, g, np.zeros((1, 2, 4, 4), BF16),
                             [1, 2, 1, 1])).view(np.uint16)
    inner = out[..., 1:3, 1:3]  # read once: rows 1-2 and columns 1-2 of the input
    assert inner.tolist() == np.full((1, 2, 2, 2), 0xffa5, np.uint16).tolist()
    assert (out[..., 0, :] == 0xffc0).all() and (out[..., :, 3] == 0xffc0).all()  # edges: sums, quiet
