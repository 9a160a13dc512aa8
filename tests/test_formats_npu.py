"""Private formats on the npu backend (against the simulator): aclnnTransMatmulWeight's
in-place reformat of the caller's tensor, and an NZ weight fed to aclnnMm."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import formats as F


def _weight(shape, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 4).astype(dtype)


def test_trans_matmul_weight_reformats_the_array_in_place_without_overrun(npu):
    # (40, 24) float16: k and n are not multiples of 16, so the NZ storage (3 x 2 fractals of
    # 16 x 16, 3072 bytes) is larger than the ND block (1920 bytes, a 2048-byte block)
    w = _weight((40, 24))
    d = aa.to_device(w)
    out = aa.aclnn.TransMatmulWeight(d)
    assert out is d
    aa.synchronize()  # an overrun of the block would fail here (the simulator checks every kernel access)
    assert d.format == aa.Format.FRACTAL_NZ
    assert d.shape == (40, 24)
    assert d.storage_shape == (2, 3, 16, 16)
    assert np.array_equal(d.numpy(), w)
    stored = d.storage()
    assert np.array_equal(stored, F.encode(w, "FRACTAL_NZ"))
    assert np.count_nonzero(stored[1, :, :, 8:]) == 0  # n padding (24..31) is zeros
    # it feeds Mm as an NZ mat2
    x = _weight((5, 40), seed=1)
    y = aa.aclnn.Mm(aa.to_device(x), d, aa.empty((5, 24), np.float16), 0).numpy()
    y_nd = aa.aclnn.Mm(aa.to_device(x), aa.to_device(w), aa.empty((5, 24), np.float16), 0).numpy()
    assert np.array_equal(y, y_nd)
    np.testing.assert_allclose(y.astype(np.float32), x.astype(np.float32) @ w.astype(np.float32), rtol=2e-3, atol=2e-2)
    # a fresh array of the same shape (possibly on the same cached block) is ND again
    d.free()
    e = aa.to_device(w)
    assert e.format == aa.Format.ND and e.storage_shape == (40, 24)
    y2 = aa.aclnn.Mm(aa.to_device(x), e, aa.empty((5, 24), np.float16), 0).numpy()
    assert np.array_equal(y2, y_nd)
    assert np.array_equal(e.numpy(), w)


def test_trans_matmul_weight_on_an_aligned_weight_keeps_its_block(npu):
    w = _weight((32, 48))
    d = aa.to_device(w)
    ptr = d._buffer.ptr
    aa.aclnn.TransMatmulWeight(d)
    assert d.format == aa.Format.FRACTAL_NZ and d.storage_shape == (3, 2, 16, 16)
    assert d._buffer.ptr == ptr  # NZ fits: rewritten in place
    assert np.array_equal(d.numpy(), w)


def test_trans_matmul_weight_leaves_views_of_the_old_block_as_they_were(npu):
    w = _weight((40, 24))
    d = aa.to_device(w)
    flat = d.reshape(-1)
    aa.aclnn.TransMatmulWeight(d)
    assert d.format == aa.Format.FRACTAL_NZ
    assert np.array_equal(flat.numpy(), w.reshape(-1))  # the view still reads the ND values
    assert np.array_equal(d.numpy(), w)


def test_trans_matmul_weight_refuses_a_numpy_array_it_cannot_write_back(npu):
    w = _weight((32, 32))
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.TransMatmulWeight(w)
    assert info.value.status == 161002
    assert "FRACTAL_NZ" in str(info.value)
def test_a_private_array_is_passed_with_its_storage_dims(npu):
    w = _weight((40, 24))
    d = aa.to_device(F.encode(w, "FRACTAL_NZ"))  # the stored array, then tagged
    nz = aa.format_cast(aa.to_device(w), "FRACTAL_NZ")
    assert np.array_equal(nz.storage(), d.numpy())
    x = _weight((3, 40), seed=2)
    y = aa.aclnn.Mm(aa.to_device(x), nz, aa.empty((3, 24), np.float16), 0).numpy()
    y_nd = aa.aclnn.Mm(aa.to_device(x), aa.to_device(w), aa.empty((3, 24), np.float16), 0).numpy()
    assert np.array_equal(y, y_nd)


@pytest.mark.simulator
@pytest.mark.parametrize("site", ["aclGetFormat", "aclGetStorageShape"])
def test_a_failed_storage_read_back_fails_cleanly(site, npu, sim, monkeypatch):
    """The read-back of an in-place tensor's storage after phase 1 fails: that status is
    the error, the executor and the call's own handle are destroyed, no kernel ran (the
    array is still ND with its values), and the next call is right."""
    w = _weight((40, 24), seed=9)
    d = aa.to_device(w)
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{site}:1:561000")
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.TransMatmulWeight(d)
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    assert (info.value.status, info.value.api) == (561000, site), str(info.value)
    assert f"injected fault: call #1 of {site}" in info.value.recent
    del info
    aa.synchronize()
    assert sim.live("executors") == 0
    assert d.format == aa.Format.ND and np.array_equal(d.numpy(), w)
    aa.aclnn.TransMatmulWeight(d)
    assert d.format == aa.Format.FRACTAL_NZ and np.array_equal(d.numpy(), w)
