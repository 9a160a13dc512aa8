"""Regression tests for defects of the numpy backend found while splitting the plain
reference from the fast kernels (issue 15). Each ran wrong before its fix; each now
holds on the fast kernels, on the plain reference and, where the simulator models it,
on the npu backend.
"""
from __future__ import annotations

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
