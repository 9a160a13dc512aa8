"""backends/numpy/_casts.py: 16-bit order keys, checked on every bit pattern against the
values' own order (float64), and the kernels that use them against the plain reference
on the inputs where keys and values could part: signed zeros, ties, infinities, NaN."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn.backends import numpy as numpy_backend
from ascend_aclnn.backends.numpy import _casts, max_pool

DTYPES = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]


def _every(dtype):
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_order_keys_order_as_the_values_do(dtype):
    x = _every(dtype)
    keys = _casts.order_keys(x).astype(np.int64)
    with np.errstate(invalid="ignore"):
        v = x.astype(np.float64)
    ok = ~np.isnan(v)
    kv, vv = keys[ok], v[ok]
    order = np.argsort(vv, kind="stable")
    assert (np.diff(kv[order]) >= 0).all(), "a larger value got a smaller key"
    same_key = np.diff(kv[order]) == 0
    assert (np.diff(vv[order])[same_key] == 0).all(), "two different values share a key"
    assert (np.diff(vv[order])[~same_key] > 0).all(), "two equal values got different keys"
    assert kv.min() > _casts.LOWEST_KEY


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_from_keys_inverts_except_the_zeros_sign_and_has_nan_sees_every_nan(dtype):
    x = _every(dtype)
    keys = _casts.order_keys(x)
    back = _casts.from_keys(keys, dtype).view(np.uint16)
    bits = x.view(np.uint16)
    nonzero = bits & 0x7fff != 0
    np.testing.assert_array_equal(back[nonzero], bits[nonzero])
    assert (back[~nonzero] == 0).all()
    out = np.empty(x.shape, dtype)
    assert _casts.from_keys(keys, dtype, out=out) is out
    np.testing.assert_array_equal(out.view(np.uint16), back)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(x.astype(np.float32))
    assert _casts.has_nan(keys, dtype)
    assert not _casts.has_nan(keys[~nan], dtype)
    for i in np.flatnonzero(nan):  # each NaN alone among the other values
        assert _casts.has_nan(np.append(keys[~nan][:3], keys[i]), dtype)


def _both(op, *args):
    with ascend_aclnn.use_backend("numpy"):
        fast = getattr(ascend_aclnn, op)(*args)
        with numpy_backend.plain_reference():
            plain = getattr(ascend_aclnn, op)(*args)
    return fast, plain


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_keyed_max_pool_keeps_the_first_of_signed_zeros_and_ties(dtype, monkeypatch):
    # Small blocks: blocks with a NaN (the float32 path) sit beside blocks without (the keys).
    monkeypatch.setattr(max_pool, "POOL_BLOCK", 64)
    rng = np.random.default_rng(3)
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.0], np.float32).astype(dtype)
    x = values[rng.integers(0, values.size, (6, 5, 9, 8))]
    x[4, 2, 3, 3] = np.float32("nan")
    x[1] = -np.inf
    x[2] = np.float32(-0.0)
    x[3, :, ::2] = np.float32(-0.0)
    for pool in (([3, 3], [2, 2], [1, 1], [1, 1], False), ([2, 3], [1, 2], [1, 0], [1, 1], True)):
        (out, mask), (want, want_mask) = _both("max_pool2d_with_mask", x, *pool)
        np.testing.assert_array_equal(np.asarray(mask), np.asarray(want_mask))
        assert np.asarray(out).tobytes() == np.asarray(want).tobytes()
