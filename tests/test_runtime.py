"""The npu path against the simulator: loading, runtime, handles, executors, failures.

Each test using the ``npu`` fixture ends with a leak check: no aclTensor, aclIntArray,
executor, pending task or device byte may outlive it, on success or failure paths.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn import errors
from ascend_aclnn.cann.loader import get_cann
from ascend_aclnn.tensors import bfloat16
from conftest import LAYOUT

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def fwd(x=X, size=9):
    return ascend_aclnn.upsample_nearest_exact1d(x, [size])


def test_operators_resolve_from_the_layouts_library(npu):
    fwd()
    source = get_cann().operator_sources["aclnnUpsampleNearestExact1d"]
    assert source.endswith({"cann8": "/libopapi.so", "split": "/libopapi_cv.so"}[LAYOUT])


def test_missing_operator_names_symbol_and_libraries(npu):
    with pytest.raises(ascend_aclnn.CannLoadError) as info:
        get_cann().operator("aclnnNoSuchOp", ())
    msg = str(info.value)
    assert "aclnnNoSuchOpGetWorkspaceSize" in msg and "libopapi" in msg


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bfloat16, np.uint8, np.int8, np.int16, np.int32,
                                   np.int64, np.float64, np.bool_, np.complex64, np.complex128])
def test_device_array_round_trip(dtype, npu):
    host = (np.arange(30) % 7).reshape(5, 6).astype(dtype)
    d = ascend_aclnn.to_device(host)
    assert (d.shape, d.dtype, d.backend, d.device) == ((5, 6), np.dtype(dtype), "npu", 0)
    np.testing.assert_array_equal(d.numpy(), host)


def test_device_array_free_and_use_after_free(npu, sim):
    d = ascend_aclnn.to_device(np.ones((1, 2, 1000), np.float32))
    y = ascend_aclnn.upsample_nearest_exact1d(d, [3000])  # queued, not run yet
    d.free()  # must wait for the queued kernel that reads d
    np.testing.assert_array_equal(y.numpy(), np.ones((1, 2, 3000), np.float32))
    with pytest.raises(ValueError, match="freed"):
        d.numpy()
    with pytest.raises(ValueError, match="freed"):
        ascend_aclnn.upsample_nearest_exact1d(d, [5])
    assert "freed" in repr(d)


def test_results_of_device_inputs_are_not_synchronised(npu, sim):
    d = ascend_aclnn.to_device(X)
    y = ascend_aclnn.upsample_nearest_exact1d(d, [9])
    assert sim.live("pending_tasks") == 1  # nothing ran yet
    ascend_aclnn.synchronize()
    assert sim.live("pending_tasks") == 0
    np.testing.assert_array_equal(y.numpy(), ascend_aclnn.upsample_nearest_exact1d(X, [9]))


def test_numpy_inputs_leave_nothing_behind_and_executor_is_consumed(npu, sim):
    fwd()
    assert sim.live("executors") == 0 and sim.live("pending_tasks") == 0
    # [9] is cached by the stream, and each aclTensor by the device block it describes (in the
    # allocator's cache now), for the next call; empty_cache() releases them with the blocks
    assert sim.live("int_arrays") == 1 and sim.live("tensors") == 2
    ascend_aclnn.empty_cache()
    assert sim.live("int_arrays") == 0 and sim.live("tensors") == 0


def test_workspace_is_cached_per_stream(npu, sim):
    g = np.ones((4, 8, 64), np.float16)  # fp16 backward needs an fp32 workspace
    ascend_aclnn.empty_cache()
    ascend_aclnn.upsample_nearest_exact1d_backward(g, [64], [4, 8, 32])
    allocations = sim.live("device_allocations")
    for _ in range(5):
        ascend_aclnn.upsample_nearest_exact1d_backward(g, [64], [4, 8, 32])
    assert sim.live("device_allocations") == allocations  # no malloc per call


def test_phase1_failure_raises_with_cann_text(npu, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1dGetWorkspaceSize:1:561002")
    with pytest.raises(errors.AclnnInnerTilingError) as info:
        fwd()
    e = info.value
    assert (e.status, e.api) == (561002, "aclnnUpsampleNearestExact1dGetWorkspaceSize")
    assert "ACLNN_ERR_INNER_TILING_ERROR" in str(e) and e.recent and "CANN says" in str(e)
    assert not isinstance(e, ValueError)


def test_phase2_failure(npu, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1d:1:361001")
    with pytest.raises(errors.AclnnRuntimeError) as info:
        fwd()
    assert (info.value.status, info.value.api) == (361001, "aclnnUpsampleNearestExact1d")
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    np.testing.assert_array_equal(fwd(), ascend_aclnn.upsample_nearest_exact1d(X, [9]))  # not poisoned


def _backward_fp16():
    return ascend_aclnn.upsample_nearest_exact1d_backward(np.ones((2, 3, 16), np.float16), [16], [2, 3, 8])


def test_workspace_allocation_failure_destroys_the_unrun_executor(npu, monkeypatch):
    ascend_aclnn.empty_cache()
    # after empty_cache: 1st aclrtMalloc = output, 2nd = input upload, 3rd = workspace
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMalloc:3:107000")
    with pytest.raises(errors.AclRtParamInvalidError) as info:
        _backward_fp16()
    assert info.value.api == "aclrtMalloc"
    # the npu fixture then checks that the executor (and everything else) was released


def test_out_of_memory_empties_the_cache_and_retries(npu, monkeypatch):
    ascend_aclnn.empty_cache()
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMalloc:3:207001")
    np.testing.assert_array_equal(_backward_fp16(), np.full((2, 3, 8), 2, np.float16))


def test_tensor_creation_failure_releases_earlier_handles(npu, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclCreateTensor:2:0")
    with pytest.raises(ascend_aclnn.AclnnError) as info:
        fwd()
    assert info.value.api == "aclCreateTensor" and "injected" in (info.value.recent or "")


def test_sync_failure_surfaces_and_clears(npu, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtSynchronizeStream:1:507015")
    with pytest.raises(errors.AclRtAicoreExceptionError):
        fwd()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    np.testing.assert_array_equal(fwd(), ascend_aclnn.upsample_nearest_exact1d(X, [9]))


def test_upload_failure(npu, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMemcpy:1:107000")
    with pytest.raises(errors.AclRtParamInvalidError):
        ascend_aclnn.to_device(X)


def test_device_array_from_other_backend_is_refused(npu):
    with ascend_aclnn.use_backend("numpy"):
        host_side = ascend_aclnn.to_device(X)
    with pytest.raises(ascend_aclnn.DeviceMismatchError, match="numpy backend"):
        ascend_aclnn.upsample_nearest_exact1d(host_side, [9])


def test_invalid_device(npu):
    with pytest.raises(errors.AclRtInvalidDeviceidError) as info:
        ascend_aclnn.set_device(7)
    assert "device 7" in str(info.value)
    assert ascend_aclnn.get_device() == 0
    with pytest.raises(ValueError):
        ascend_aclnn.set_device(-1)
