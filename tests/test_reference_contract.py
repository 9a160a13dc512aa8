"""The reference contract (ascend_aclnn/reference/__init__.py): what an operator's NumPy
function must return, enforced where the numpy backend receives it, with an error naming
the operator instead of a NumPy error deep inside a later step."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.api import call
from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.reference import ReferenceContractError

PAD = REGISTRY["replication_pad2d"]
X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)


def _with_reference(fn):
    return dataclasses.replace(PAD, reference=fn)


def _good(x, padding):
    return np.ascontiguousarray(np.pad(x, [(0, 0), (0, 0), (padding[2], padding[3]), (padding[0], padding[1])],
                                       mode="edge"))


@pytest.mark.parametrize("broken,match", [
    (lambda x, p: np.asfortranarray(_good(x, p)), r"output 0 \(out\): expected a C-contiguous array"),
    (lambda x, p: _good(x, p).astype(np.float64), r"output 0 \(out\): expected dtype float32, got float64"),
    (lambda x, p: _good(x, p)[..., :-1], r"output 0 \(out\): expected shape \(2, 3, 8, 8\), got \(2, 3, 8, 7\)"),
    (lambda x, p: _good(x, p).tolist(), r"output 0 \(out\): expected a NumPy array, got list"),
    (lambda x, p: (_good(x, p), _good(x, p)), r"expected 1 result\(s\), got 2"),
    (lambda x, p: x if not any(p) else _good(x, p),
     r"output 0 \(out\): expected memory of its own, got an array sharing memory with input"),
], ids=["strided", "dtype", "shape", "list", "count", "aliases-input"])
def test_a_reference_breaking_the_contract_is_named(broken, match):
    spec = _with_reference(broken)
    with aa.use_backend("numpy"):
        with pytest.raises(ReferenceContractError, match=match) as info:
            call(spec, X, [2, 1, 2, 2] if "memory" not in match else [0, 0, 0, 0])
    assert "replication_pad2d (aclnnReplicationPad2d)" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_a_reference_keeping_the_contract_runs():
    spec = _with_reference(_good)
    with aa.use_backend("numpy"):
        np.testing.assert_array_equal(call(spec, X, [2, 1, 2, 2]), aa.replication_pad2d(X, [2, 1, 2, 2]))


def test_a_0d_result_stays_0d_on_the_device():
    """A DeviceArray made from a 0-d result keeps shape () (np.ascontiguousarray, which the
    contract makes unnecessary, turns 0-d into 1-d)."""
    spec = dataclasses.replace(PAD, infer=lambda a: [((), a.input.dtype)], check=lambda a, check: None,
                               reference=lambda x, p: np.full((), x.sum(), x.dtype))
    with aa.use_backend("numpy"):
        d = call(spec, aa.to_device(X), [0, 0, 0, 0])
        assert isinstance(d, aa.DeviceArray) and d.shape == () and d.numpy().shape == ()
        assert np.asarray(d).shape == () and float(d.numpy()) == float(X.sum())
