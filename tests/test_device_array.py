"""DeviceArray basics (issue 19, item 7): a private constructor, metadata-only reshape/view
sharing the block, device copy(), astype() through the host, repr without values,
comparisons that refuse instead of answering by identity, the ownership rule for views,
and the forked-child rule for the new methods. Each test fails on the code before."""
from __future__ import annotations

import gc
import textwrap

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.tensors import may_overlap
from conftest import run_python

X = np.arange(30, dtype=np.float32).reshape(2, 3, 5)


def _quiet(stderr: str) -> str:
    """stderr without the simulator's own load-time warnings."""
    return "".join(line for line in stderr.splitlines(True) if not line.startswith("ascend-sim: WARNING"))


# ---- the constructor ----------------------------------------------------------------------------

def test_the_public_constructor_raises_and_points_at_to_device_and_empty():
    with pytest.raises(TypeError, match=r"to_device\(array\).*empty\(shape, dtype\)"):
        aa.DeviceArray((2, 3), np.float32)
    with pytest.raises(TypeError, match="cannot be constructed directly"):
        aa.DeviceArray()
    assert "to_device" in aa.DeviceArray.__doc__ and "never by\n    calling the class" in aa.DeviceArray.__doc__


# ---- reshape and view ---------------------------------------------------------------------------

def test_reshape_is_a_view_of_the_same_block_that_works_in_calls(backend):
    d = aa.to_device(X)
    flat = d.reshape(-1)
    assert flat.shape == (30,) and flat.dtype == np.float32 and may_overlap(flat, d)
    back = flat.reshape(2, 3, 5)
    assert back.shape == (2, 3, 5) and d.reshape((6, 5)).shape == (6, 5) and d.view(3, 10).shape == (3, 10)
    y = aa.upsample_nearest_exact1d(back, [8])  # a reshaped view is described by its own aclTensor
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d(X, [8]))
    y6 = aa.upsample_nearest_exact1d(d.reshape(1, 6, 5), [10])
    np.testing.assert_array_equal(y6.numpy(), aa.upsample_nearest_exact1d(X.reshape(1, 6, 5), [10]))
    # Writing through one view is seen through the others (one block).
    aa.upsample_nearest_exact1d(np.full((2, 3, 1), 7, np.float32), [5], out=back)
    np.testing.assert_array_equal(d.numpy(), np.full((2, 3, 5), 7, np.float32))
    np.testing.assert_array_equal(flat.numpy(), np.full(30, 7, np.float32))


def test_reshape_refuses_sizes_that_do_not_match(backend):
    d = aa.to_device(X)
    with pytest.raises(ValueError, match=r"cannot reshape an array of shape \(2, 3, 5\) \(30 elements\) to \(4, 8\)"):
        d.reshape(4, 8)
    with pytest.raises(ValueError, match="cannot infer -1"):
        d.reshape(-1, 7)
    with pytest.raises(ValueError, match="at most one -1"):
        d.reshape(-1, -1)
    with pytest.raises(TypeError, match="integer dims"):
        d.reshape(2.0, 15)
    with pytest.raises(TypeError, match="integer dims"):
        d.reshape(True, 30)


def test_view_of_a_dtype_reinterprets_the_bytes(backend):
    d = aa.to_device(X)
    i = d.view(np.int32)
    assert i.shape == X.shape and may_overlap(i, d)
    np.testing.assert_array_equal(i.numpy(), X.view(np.int32))
    h = d.view("float16")  # the last dim scales with the item size, as in NumPy
    assert h.shape == (2, 3, 10)
    np.testing.assert_array_equal(h.numpy(), X.view(np.float16))
    with pytest.raises(ValueError, match="not a multiple of 8"):
        d.view(np.float64)
    with pytest.raises(TypeError, match="no ACL data type"):
        d.view(np.dtype("U3"))


def test_views_of_a_freed_array_are_refused(backend):
    d = aa.to_device(X)
    d.free()
    for attempt in (lambda: d.reshape(-1), lambda: d.view(np.int32), d.copy, lambda: d.astype(np.float16)):
        with pytest.raises(ValueError, match="freed"):
            attempt()


# ---- ownership: free() on one view ----------------------------------------------------------------

def test_freeing_one_view_leaves_the_others_readable(backend):
    d = aa.to_device(X)
    v = d.reshape(6, 5)
    w = v.view(np.int32)
    d.free()
    assert d.is_freed and not v.is_freed and not w.is_freed
    np.testing.assert_array_equal(v.numpy(), X.reshape(6, 5))
    y = aa.upsample_nearest_exact1d(v.reshape(2, 3, 5), [8])  # and usable in calls
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d(X, [8]))
    with pytest.raises(ValueError, match="freed"):
        aa.upsample_nearest_exact1d(d, [8])
    v.free()
    np.testing.assert_array_equal(w.numpy(), X.reshape(6, 5).view(np.int32))
    w.free()
    assert w.is_freed and "freed" in repr(w)


def test_the_block_is_released_by_the_last_view(npu, sim):
    aa.empty_cache()
    before = sim.live("device_allocations")
    d = aa.to_device(X)
    views = [d.reshape(-1), d.view(np.int32), d.reshape(6, 5)]
    aa.upsample_nearest_exact1d(views[2].reshape(2, 3, 5), [8])  # queued work on the block
    d.free()
    views[0].free()
    views[1].free()
    aa.empty_cache()
    assert sim.live("device_allocations") == before + 1  # views[2] still holds it
    np.testing.assert_array_equal(views[2].numpy(), X.reshape(6, 5))
    views[2].free()
    aa.empty_cache()
    assert sim.live("device_allocations") == before


def test_a_collected_view_lets_the_last_free_release_the_block(npu, sim):
    aa.empty_cache()
    before = sim.live("device_allocations")
    d = aa.to_device(X)
    v = d.reshape(-1)
    del v
    gc.collect()
    d.free()  # the only live holder: released, not merely detached
    aa.empty_cache()
    assert sim.live("device_allocations") == before


def test_a_view_freed_while_work_is_queued_keeps_the_block_for_that_work(npu, sim):
    x = np.random.default_rng(0).standard_normal((2, 3, 40)).astype(np.float32)
    d = aa.to_device(x)
    v = d.reshape(-1)
    y = aa.upsample_nearest_exact1d(v.reshape(2, 3, 40), [80])  # queued, reads the block through a view
    v.free()                                                   # detached, not synchronised
    del d
    gc.collect()                                               # the last other holder is collected
    junk = [aa.to_device(np.full(240, 9, np.float32)) for _ in range(4)]  # would reuse a released block
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d(x, [80]))
    del junk


# ---- copy and astype ----------------------------------------------------------------------------

def test_copy_is_a_new_block_with_the_same_contents(backend):
    d = aa.to_device(X)
    c = d.copy()
    assert c is not d and not may_overlap(c, d) and c.shape == d.shape and c.dtype == d.dtype
    aa.upsample_nearest_exact1d(np.zeros((2, 3, 1), np.float32), [5], out=d)  # rewrite the original
    np.testing.assert_array_equal(c.numpy(), X)
    np.testing.assert_array_equal(d.numpy(), np.zeros_like(X))


def test_copy_is_queued_on_the_stream_without_a_sync(npu):
    from ascend_aclnn.backends.npu import runtime
    d = aa.to_device(X)
    y = aa.upsample_nearest_exact1d(d, [9])
    stream = runtime.current_device().stream
    syncs = stream.syncs
    c = y.copy()
    assert stream.syncs == syncs and stream.has_pending_work
    np.testing.assert_array_equal(c.numpy(), aa.upsample_nearest_exact1d(X, [9]))


def test_astype_converts_through_the_host(backend):
    d = aa.to_device(X)
    h = d.astype(np.float16)
    assert h.dtype == np.float16 and h.backend == d.backend and h.device == d.device
    np.testing.assert_array_equal(h.numpy(), X.astype(np.float16))
    b = d.astype(aa.bfloat16)
    np.testing.assert_array_equal(b.numpy(), X.astype(aa.bfloat16))
    same = d.astype(np.float32)
    assert same is not d and not may_overlap(same, d)
    assert d.astype(np.float32, copy=False) is d
    with pytest.raises(TypeError, match="no ACL data type"):
        d.astype(object)


# ---- repr, len, comparisons --------------------------------------------------------------------

def test_repr_shows_shape_dtype_device_and_state_but_no_values(backend):
    d = aa.to_device(np.full((2, 3), 12345.5, np.float32))
    text = repr(d)
    assert "shape=(2, 3)" in text and "dtype=float32" in text and "live" in text
    assert ("npu:0" if backend == "npu" else "numpy") in text
    assert "12345" not in text
    d.free()
    assert "freed" in repr(d)
    assert len(aa.to_device(X)) == 2
    with pytest.raises(TypeError, match="0-d"):
        len(aa.to_device(np.float32(1.0)))


def test_equality_and_truth_raise_instead_of_answering_by_identity(backend):
    d = aa.to_device(X)
    e = aa.to_device(X)
    for attempt in (lambda: d == d, lambda: d == e, lambda: d != e, lambda: bool(d), lambda: d == 1):
        with pytest.raises(TypeError, match=r"ambiguous.*np\.array_equal\(a\.numpy\(\), b\.numpy\(\)\)"):
            attempt()
    assert d is d and {d: 1}[d] == 1  # identity and hashing still work
    assert np.array_equal(d.numpy(), e.numpy())


# ---- DLPack --------------------------------------------------------------------------------------

def test_dlpack_shares_a_numpy_backend_array(numpy_backend):
    d = aa.to_device(X)
    h = np.from_dlpack(d)
    np.testing.assert_array_equal(h, X)
    assert d.__dlpack_device__() == (1, 0)


def test_dlpack_of_npu_memory_says_to_copy_to_the_host(npu):
    d = aa.to_device(X)
    with pytest.raises(BufferError, match=r"NPU memory.*d\.numpy\(\)"):
        np.from_dlpack(d)


# ---- the forked-child rule ---------------------------------------------------------------------------

FORKED = textwrap.dedent("""
    import os, sys, numpy as np, ascend_aclnn as aa
    d = aa.to_device(np.ones((2, 3), np.float32))
    v = d.reshape(-1)
    pid = os.fork()
    if pid == 0:
        code = 0
        for i, attempt in enumerate((lambda: d.reshape(6), lambda: d.view(np.int32), d.copy,
                                     lambda: d.astype(np.float16), v.numpy)):
            try:
                attempt()
                code = code or 10 + i
            except RuntimeError as e:
                code = code or (0 if "forked child" in str(e) else 20 + i)
        v.free(); d.free()  # not a use: silent
        sys.stdout.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status), v.numpy().tolist())
""")


def test_the_new_methods_follow_the_forked_child_rule(sim):
    result = run_python(FORKED, sim, ASCEND_ACLNN_BACKEND="npu")
    assert (result.returncode, result.stdout, _quiet(result.stderr)) == (0, "child 0 [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]\n", "")


def test_views_made_and_freed_on_many_threads_never_lose_the_block(npu):
    import threading
    d = aa.to_device(X)
    kept, lock = [], threading.Lock()

    def work():
        for _ in range(50):
            v = d.reshape(-1)
            w = v.reshape(6, 5)
            v.free()  # a detach: the block is held by d and w
            with lock:
                kept.append(w)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    d.free()
    for w in kept[:-1]:
        w.free()
    np.testing.assert_array_equal(kept[-1].numpy(), X.reshape(6, 5))  # the last holder still reads it
