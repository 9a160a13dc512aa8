"""Operators whose output size only the run knows (issue 37, item 4): the caller passes
outputs of the largest size, and both backends return them cut to the real shape (the npu
backend reads it back with aclGetViewShape after synchronising, as op-plugin does; the
numpy backend takes it from the CPU reference), the same way: a view of the caller's array
over its first elements, the rest of the array left as it was."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.cann import data_dependent

X = np.array([[0, 1.5, 0], [2, 0, -3], [0, 0, 0], [4, 0, 0]], np.float32)


@pytest.mark.parametrize("x", [X, X[1], np.zeros((2, 2), np.float32), np.ones((2, 1, 2), np.float32)])
def test_nonzero_returns_its_real_count(backend, x):
    out = np.full((x.size, x.ndim), -9, np.int64)
    got = aa.aclnn.Nonzero(x, out)
    want = np.argwhere(x != 0)
    assert got.shape == want.shape and np.array_equal(got, want)
    assert got.base is out or np.shares_memory(got, out) or not len(want)  # a view of the caller's array,
    assert (out[len(want):] == -9).all()           # whose rows past the count are left alone


def test_nonzero_into_a_device_array(backend):
    out = aa.empty((X.size, 2), np.int64)
    got = aa.aclnn.Nonzero(aa.to_device(X), out)
    assert isinstance(got, aa.DeviceArray) and got.shape == (4, 2)
    assert np.array_equal(got.numpy(), np.argwhere(X != 0))
    assert out.shape == (X.size, 2)  # the caller's array keeps its shape


def test_the_output_array_stays_whole_for_later_calls(backend):
    """The operator changes its output's aclTensor: the npu backend gives it a handle of its own,
    so the array's cached description still says its full shape to the next operator."""
    out = aa.empty((X.size, 2), np.int64)
    aa.aclnn.Nonzero(aa.to_device(X), out)
    again = aa.aclnn.Nonzero(aa.to_device(X[:2]), out)  # fewer elements, the same array
    assert again.shape == (3, 2)
    total = aa.aclnn.Add(out, out, 1, aa.empty((X.size, 2), np.int64))
    assert total.shape == (X.size, 2) and np.array_equal(total.numpy()[:3], 2 * np.argwhere(X[:2] != 0))


def test_nonzero_refuses_an_out_smaller_than_the_largest_result(backend):
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.aclnn.Nonzero(X, np.empty((X.size - 1, 2), np.int64))
    assert info.value.argument in ("out", None)  # the simulator's message names out, CPU names the argument
    assert "out" in str(info.value)


def test_the_other_data_dependent_operators_on_the_cpu(numpy_backend):
    x = np.array([3, 1, 3, 2, 2], np.int64)
    vals, inv, counts = aa.aclnn.Unique2(x, True, True, True, *(np.full(5, -1, np.int64) for _ in range(3)))
    assert vals.tolist() == [1, 2, 3] and inv.tolist() == [2, 0, 2, 1, 1] and counts.tolist() == [1, 2, 2]
    assert aa.aclnn.MaskedSelect(X, X > 0, np.empty(X.size, np.float32)).tolist() == [1.5, 2, 4]
    assert aa.aclnn.NonzeroV2(X, np.empty((2, X.size), np.int64)).tolist() == np.argwhere(X != 0).T.tolist()
    v, i, c = aa.aclnn.UniqueConsecutive(np.array([1, 1, 2, 2, 1]), True, True, 1000,
                                         *(np.empty(5, np.int64) for _ in range(3)))
    assert (v.tolist(), i.tolist(), c.tolist()) == ([1, 2, 1], [0, 0, 1, 1, 2], [2, 2, 1])


def test_every_data_dependent_operator_has_a_cpu_reference(numpy_backend):
    for name in data_dependent.OUTPUTS:
        assert aa.aclnn.reference(name).source == "formula", name


def test_cut():
    a = np.arange(12).reshape(6, 2)
    assert data_dependent.cut(a, (2, 2)).tolist() == [[0, 1], [2, 3]]
    assert np.shares_memory(data_dependent.cut(a, (2, 2)), a)
    with pytest.raises(ValueError):
        data_dependent.cut(a, (7, 2))


def test_a_failed_view_shape_read_back_fails_cleanly(npu, sim, monkeypatch):
    """aclGetViewShape, after the kernel ran, fails: that status is the error, the call's own
    handles and executor are gone, and the next call returns the real count."""
    out = aa.empty((X.size, 2), np.int64)
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclGetViewShape:1:561000")
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.Nonzero(aa.to_device(X), out)
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    assert (info.value.status, info.value.api) == (561000, "aclGetViewShape"), str(info.value)
    assert "injected fault: call #1 of aclGetViewShape" in info.value.recent
    del info
    aa.synchronize()
    assert sim.live("executors") == 0
    got = aa.aclnn.Nonzero(aa.to_device(X), out)
    assert np.array_equal(got.numpy(), np.argwhere(X != 0))


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                              "fsmblks", "uordblks", "fordblks", "keepcost")]


def _heap_in_use() -> int:
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    return int(libc.mallinfo2().uordblks)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc's mallinfo2 (2.33+)")
def test_reading_the_real_shape_leaks_no_host_memory(npu):
    """aclGetViewShape hands the caller a new dims array each time (CANN: new[]; the
    simulator: malloc): the binding frees it. The simulator cannot see that free (it is the
    C library's), so the process's malloc heap is watched while the binding reads an
    output's real shape again and again: an array kept would grow it by a chunk a read."""
    from ascend_aclnn.backends.npu import handles, launch
    d = aa.to_device(X)
    device = d._device
    cann = device.cann
    h = handles.create_tensor(cann.function("aclCreateTensor"), cann, d.shape, d.dtype, 2, d._buffer.ptr)
    try:
        for _ in range(100):  # warm: bound functions, the allocator's free lists
            assert launch._view_shapes(cann, device.stream, {0: h}) == {0: X.shape}
        reads = 5000
        before = _heap_in_use()
        for _ in range(reads):
            launch._view_shapes(cann, device.stream, {0: h})
        grown = _heap_in_use() - before
    finally:
        cann.function("aclDestroyTensor")(h)
    assert grown < reads * 4, f"the malloc heap grew by {grown} bytes over {reads} reads"
