"""Backend selection and the numpy backend's DeviceArray."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn import backends


def test_use_backend_nests_and_restores(sim):
    with ascend_aclnn.use_backend("numpy") as name:
        assert name == ascend_aclnn.get_backend() == "numpy"
        with ascend_aclnn.use_backend("npu"):
            assert ascend_aclnn.get_backend() == "npu"
        assert ascend_aclnn.get_backend() == "numpy"


def test_use_backend_is_local_to_its_thread():
    seen = []
    with ascend_aclnn.use_backend("numpy"):
        t = threading.Thread(target=lambda: seen.append(backends.requested()[0]))
        t.start()
        t.join()
    assert seen == ["auto"]


def test_auto_uses_npu_when_cann_reports_a_device(sim, monkeypatch):
    monkeypatch.delenv(backends.ENV_VAR, raising=False)
    assert ascend_aclnn.get_backend() == "npu"
    assert ascend_aclnn.npu_available() and ascend_aclnn.device_count() == 1


def test_environment_variable_and_set_backend(monkeypatch, sim):
    monkeypatch.setenv(backends.ENV_VAR, "numpy")
    assert ascend_aclnn.get_backend() == "numpy"
    monkeypatch.setenv(backends.ENV_VAR, "cuda")
    with pytest.raises(ValueError, match="ASCEND_ACLNN_BACKEND: expected one of auto, npu, numpy, got 'cuda'"):
        ascend_aclnn.get_backend()
    try:
        ascend_aclnn.set_backend("npu")  # set_backend wins over the environment
        assert ascend_aclnn.get_backend() == "npu"
    finally:
        backends._setting = None
    with pytest.raises(ValueError, match="backend: expected one of"):
        ascend_aclnn.set_backend("gpu")


def test_numpy_device_array(numpy_backend):
    x = np.arange(6, dtype=np.float16).reshape(1, 2, 3)
    d = ascend_aclnn.to_device(x)
    assert (d.backend, d.device, d.shape, d.dtype, d.nbytes, len(d)) == ("numpy", None, (1, 2, 3), np.float16, 12, 1)
    x[...] = 0  # the DeviceArray holds its own copy
    np.testing.assert_array_equal(d.numpy(), np.arange(6).reshape(1, 2, 3))
    assert ascend_aclnn.to_device(d) is d
    d.free()
    with pytest.raises(ValueError, match="freed"):
        d.numpy()


def test_wrong_call_shape_is_a_type_error(backend):
    with pytest.raises(TypeError, match="upsample_nearest_exact1d"):
        ascend_aclnn.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32))
    with pytest.raises(TypeError):
        ascend_aclnn.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [4], bogus=1)
