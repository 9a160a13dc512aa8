"""Regression tests for issue 5: thread safety, memory safety, sizes that overflow, out=
aliasing, work lost by a failed sync, the reference's integer clamps, NaN payloads,
workspace growth under memory pressure, and the smaller defects (copy protocol, pickling,
failed frees). Each test failed before its fix. Tests that need a fresh interpreter are in
test_process.py.
"""
from __future__ import annotations

import contextvars
import copy
import pickle
import sys
import threading

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import errors
from ascend_aclnn.tensors import bfloat16

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# ---- defects 1 and 2: threads ---------------------------------------------------------------

def _in_thread(fn):
    """Run fn in a new thread; return its result or re-raise its exception here."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001  re-raised in the caller
            box["error"] = exc
    t = threading.Thread(target=contextvars.copy_context().run, args=(target,))  # same backend
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def test_a_second_thread_gets_its_own_context(npu):
    expected = aa.upsample_nearest_exact1d(X, [4])
    np.testing.assert_array_equal(_in_thread(lambda: aa.upsample_nearest_exact1d(X, [4])), expected)
    d = aa.upsample_nearest_exact1d(aa.to_device(X), [4])
    np.testing.assert_array_equal(_in_thread(d.numpy), expected)  # a download from another thread
    _in_thread(d.free)


def _workload(seed: int):
    """One thread's mixed calls: NumPy in/out, uploads, device-resident chains, out=, read late."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 5 + seed % 4)).astype(np.float32)
    g = rng.standard_normal((2, 3, 11)).astype(np.float16)
    kept = []
    for i in range(12):
        kept.append(aa.upsample_nearest_exact1d(x, [7 + i % 3]))               # NumPy in/out
        d = aa.upsample_nearest_exact1d(aa.to_device(x), [9 + i % 5])         # temp input dropped
        kept.append(aa.upsample_nearest_exact1d_backward(d, [9 + i % 5], [2, 3, x.shape[2]]))
        kept.append(aa.to_device(np.full((1, 2, 3), 99 + seed, np.float32)))  # reuses freed blocks
        out = aa.empty((2, 3, 6), np.float16)
        kept.append(aa.upsample_nearest_exact1d_backward(aa.to_device(g), [11], [2, 3, 6], out=out))
    return [np.asarray(k) if isinstance(k, aa.DeviceArray) else k for k in kept]  # read late


def test_eight_threads_match_serial_results_bit_for_bit(backend, sim):
    serial = [_workload(seed) for seed in range(8)]
    for _ in range(3):
        results: dict[int, list] = {}
        errors_seen: list[BaseException] = []

        def run(seed):
            try:
                results[seed] = _workload(seed)
            except BaseException as exc:  # noqa: BLE001
                errors_seen.append(exc)
        threads = [threading.Thread(target=contextvars.copy_context().run, args=(run, seed)) for seed in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors_seen, errors_seen[0]
        for seed in range(8):
            for got, want in zip(results[seed], serial[seed]):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_device_results_never_hold_another_threads_data(npu):
    """Issue 5's reproducer of defect 2: while thread A queues device-resident work, thread B
    syncs (its NumPy in/out calls) and uploads 99s into blocks freed meanwhile. Before the
    fix, a sync dropped the keep-alive of what A queued during it, and some of A's results
    came back full of 99. (Both threads activate the device themselves, so this isolates
    the race from defect 1.)"""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    expected = aa.upsample_nearest_exact1d(x, [4])
    big = np.ones((16, 64, 1024), np.float32)
    done = threading.Event()
    results = []

    def thread_a():
        aa.backends.npu.runtime.current_device().activate()
        try:
            for _ in range(600):
                results.append(aa.upsample_nearest_exact1d(aa.to_device(x), [4]))
        finally:
            done.set()

    def thread_b():
        aa.backends.npu.runtime.current_device().activate()
        while not done.is_set():
            aa.upsample_nearest_exact1d(big, [1024])
            aa.to_device(np.full((1, 2, 3), 99, np.float32))
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(f,)) for f in (thread_a, thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = sum(not np.array_equal(r.numpy(), expected) for r in results)
    assert len(results) == 600 and bad == 0, f"{bad} of {len(results)} results hold other data"


def test_sync_releases_only_what_was_pending_when_it_began(npu):
    """Another thread that queues work while a sync runs in C keeps its work's keep-alive."""
    from ascend_aclnn.backends.npu import runtime
    from ascend_aclnn.cann.loader import get_cann
    stream = runtime.current_device().stream
    late = aa.to_device(X)
    functions = get_cann()._functions
    real_sync = get_cann().function("aclrtSynchronizeStream")
    other = []

    def sync_while_another_thread_enqueues(handle):
        t = threading.Thread(target=stream.keep_alive, args=(late,))
        t.start()
        t.join(0.2)  # it may have to wait for the sync: that is the point
        other.append(t)
        return real_sync(handle)
    functions["aclrtSynchronizeStream"] = sync_while_another_thread_enqueues
    try:
        aa.synchronize()
    finally:
        functions["aclrtSynchronizeStream"] = real_sync
    other[0].join()
    assert stream.has_pending_work, "what another thread queued during the sync lost its keep-alive"
    aa.synchronize()


# ---- defect 3: dtypes with no ACL type --------------------------------------------------------

BAD_DTYPES = [np.dtype(object), np.dtype([("a", np.float32), ("b", np.int32)]), np.dtype("U3"),
              np.dtype("S3"), np.dtype(">f4"), np.dtype(np.longdouble) if np.dtype(np.longdouble).itemsize > 8
              else np.dtype("datetime64[s]"), np.dtype("timedelta64[s]"), np.dtype("V8")]


@pytest.mark.parametrize("dtype", BAD_DTYPES, ids=[d.str for d in BAD_DTYPES])
def test_dtypes_without_an_acl_type_are_refused(dtype, backend):
    with pytest.raises(TypeError, match="no ACL data type"):
        aa.empty((4,), dtype)
    with pytest.raises(TypeError, match="no ACL data type"):
        aa.to_device(np.zeros(4, dtype))
    with pytest.raises(aa.AclnnParamInvalidError, match="input: .*no ACL data type"):
        aa.upsample_nearest_exact1d(np.zeros((1, 1, 4), dtype), [8])


def test_object_arrays_are_not_copied_as_pointers(backend):
    o = object()
    with pytest.raises(TypeError):
        aa.to_device(np.array([o], dtype=object))
    assert sys.getrefcount(o) == 2  # nothing kept a reference behind the array's back


def test_big_endian_message_names_the_byte_order(backend):
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.upsample_nearest_exact1d(X.astype(">f4"), [8])
    assert "big-endian float32" in str(info.value) and "got float32\n" not in str(info.value) + "\n"
    with pytest.raises(TypeError, match=r"big-endian float32 \(>f4\).*astype"):
        aa.to_device(X.astype(">f4"))


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
def test_unsigned_dtypes_with_an_acl_type_round_trip(dtype, backend):
    host = np.arange(6, dtype=dtype).reshape(2, 3)
    np.testing.assert_array_equal(aa.to_device(host).numpy(), host)


# ---- defect 4: out= aliasing an input ---------------------------------------------------------

def test_out_aliasing_an_input_gives_the_unaliased_result(backend):
    host = np.arange(8, dtype=np.float32).reshape(1, 1, 8)
    d = aa.to_device(host)
    r = aa.upsample_nearest_exact1d(d, [8], 2.0, out=d)
    assert r is d
    np.testing.assert_array_equal(d.numpy(), [[[0, 0, 1, 1, 2, 2, 3, 3]]])
    h = host.copy()
    assert aa.upsample_nearest_exact1d(h, [8], 2.0, out=h) is h
    np.testing.assert_array_equal(h, [[[0, 0, 1, 1, 2, 2, 3, 3]]])
    # a partial overlap: out is a view into the input's own memory
    wide = np.arange(16, dtype=np.float32).reshape(1, 1, 16)
    aa.upsample_nearest_exact1d(wide[..., :8], [8], 2.0, out=wide[..., 4:12])
    np.testing.assert_array_equal(wide[0, 0, 4:12], [0, 0, 1, 1, 2, 2, 3, 3])


def test_aliased_chain_stays_asynchronous_and_correct(npu, sim):
    d = aa.to_device(np.arange(8, dtype=np.float32).reshape(1, 1, 8))
    aa.upsample_nearest_exact1d(d, [8], 2.0, out=d)   # sources 0,0,1,1,2,2,3,3
    aa.upsample_nearest_exact1d(d, [8], 0.5, out=d)   # sources 1,3,5,7,7,7,7,7
    assert sim.live("pending_tasks") > 0  # nothing was forced to wait
    np.testing.assert_array_equal(d.numpy(), [[[0, 1, 2, 3, 3, 3, 3, 3]]])


# ---- defect 5: a failed sync loses earlier queued work ----------------------------------------

def test_work_discarded_by_a_failed_sync_raises_when_read(npu, monkeypatch):
    a = aa.upsample_nearest_exact1d(aa.to_device(X), [9])  # queued, device-resident
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtSynchronizeStream:1:507015")
    with pytest.raises(errors.AclRtAicoreExceptionError):
        aa.upsample_nearest_exact1d(X, [9])  # NumPy in/out: its sync fails, discarding a's work
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    with pytest.raises(errors.AclRtAicoreExceptionError, match="discarded") as info:
        a.numpy()
    assert "aclrtSynchronizeStream" in str(info.value)
    with pytest.raises(errors.AclRtAicoreExceptionError, match="discarded"):
        aa.upsample_nearest_exact1d(a, [3])  # nor can it feed another operator
    np.testing.assert_array_equal(aa.upsample_nearest_exact1d(aa.to_device(X), [9]).numpy(),
                                  aa.upsample_nearest_exact1d(X, [9]))  # later work is fine


# ---- defect 6: sizes that overflow ------------------------------------------------------------

def test_output_sizes_that_overflow_are_parameter_errors(backend):
    with pytest.raises(aa.AclnnParamInvalidError, match="out: .*bytes"):
        aa.upsample_nearest_exact1d(np.ones((1, 2, 3), np.float32), [2**63 - 1])
    with pytest.raises(aa.AclnnParamInvalidError, match="out: .*bytes"):
        aa.upsample_nearest_exact1d_backward(np.ones((1, 2, 3), np.float32), [3], [1, 2, 2**62])
    with pytest.raises(aa.AclnnParamInvalidError, match="scales: expected a real number"):
        aa.upsample_nearest_exact1d(np.ones((1, 2, 3), np.float32), [4], 10**400)


@pytest.mark.parametrize("shape,match", [([2**62 + 128], "bytes"), ([-1, 4], "non-negative"),
                                         ([2.5], "integer"), ([2**64], "bytes"), ([2**31, 2**31, 4], "bytes")])
def test_empty_refuses_impossible_shapes(shape, match, backend):
    with pytest.raises(ValueError, match=match):
        aa.empty(shape)


# ---- defect 7: the reference clamps indices on integers, as the kernel does ------------------

def test_forward_clamp_past_2_pow_24(backend):
    l_in = 16777220  # float32(L_in - 1) rounds up to L_in
    x = (np.arange(l_in) % 251).astype(np.uint8).reshape(1, 1, l_in)
    y = aa.upsample_nearest_exact1d(x, [2], 1.5 / l_in)  # s = 11184813: (1 + 0.5) * s rounds to L_in
    assert y.tolist() == [[[x[0, 0, 5592406], x[0, 0, l_in - 1]]]]


def test_backward_clamp_past_2_pow_24(backend):
    g = np.ones((1, 1, 16777217), np.float16)  # float32(L_out) rounds down
    gx = aa.upsample_nearest_exact1d_backward(g, [16777217], [1, 1, 8388609])
    assert gx[0, 0, -1] == 3.0 and gx.sum(dtype=np.float64) == 16777217


# ---- defect 8: NaN payloads -------------------------------------------------------------------

def _nans(dtype):
    """Every NaN bit pattern of a 16-bit float type, both signs."""
    exp = 0x7C00 if dtype == np.float16 else 0x7F80
    pos = np.arange(exp + 1, (exp | (0x3FF if dtype == np.float16 else 0x7F)) + 1, dtype=np.uint16)
    return np.concatenate([pos, pos | 0x8000]).view(dtype)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float16, bfloat16], ids=["float16", "bfloat16"])
def test_nan_payloads_agree_bit_for_bit(dtype, npu):
    nans = _nans(np.dtype(dtype)).reshape(1, 1, -1)
    mixed = np.stack([nans[0, 0], np.ones_like(nans[0, 0])], -1).reshape(1, 1, -1)  # NaN + 1 per interval
    calls = [lambda: aa.upsample_nearest_exact1d(nans, [nans.shape[2]]),
             lambda: aa.upsample_nearest_exact1d_backward(nans, [nans.shape[2]], [1, 1, nans.shape[2]]),
             lambda: aa.upsample_nearest_exact1d_backward(mixed, [mixed.shape[2]], [1, 1, nans.shape[2]])]
    for call in calls:
        with aa.use_backend("numpy"):
            expected = call()
        actual = call()  # npu
        np.testing.assert_array_equal(actual.view(np.uint16), expected.view(np.uint16))


# ---- defect 9: workspace growth under memory pressure -----------------------------------------

def test_workspace_growth_does_not_cause_a_spurious_out_of_memory(npu, monkeypatch):
    aa.empty_cache()
    monkeypatch.setenv("ASCEND_SIM_DEVICE_MEMORY", str(64 * 2**20))
    for l in (5 * 2**20, 25 * 2**18):  # 5 Mi, then 6.25 Mi: the grown workspace must still fit
        g = np.ones((1, 1, l), np.float16)
        gx = aa.upsample_nearest_exact1d_backward(g, [l], [1, 1, l], 1.0)
        assert gx[0, 0, -1] == 1.0
        del g, gx
    aa.empty_cache()


# ---- defect 11: copy protocol, pickling, failed frees -----------------------------------------

def test_asarray_without_copy_raises(backend):
    d = aa.to_device(X)
    with pytest.raises(ValueError, match="copy"):
        np.asarray(d, copy=False) if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else d.__array__(copy=False)
    np.testing.assert_array_equal(np.asarray(d), X)
    assert np.asarray(d, dtype=np.float64).dtype == np.float64


def test_copy_and_pickle_give_a_clear_error(backend):
    d = aa.to_device(X)
    unraisable = []
    old_hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        for attempt in (copy.deepcopy, copy.copy, pickle.dumps):
            with pytest.raises(TypeError, match=r"DeviceArray .*\.numpy\(\)"):
                attempt(d)
        import gc
        gc.collect()
    finally:
        sys.unraisablehook = old_hook
    assert not unraisable, unraisable
    np.testing.assert_array_equal(d.numpy(), X)


def test_failed_free_keeps_the_pointer_for_a_later_try(npu, sim, monkeypatch):
    aa.empty_cache()
    before = sim.live("device_allocations")
    d = aa.to_device(X)
    d.free()
    assert sim.live("device_allocations") == before + 1  # cached
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtFree:1:207002")
    with pytest.raises(errors.AclRtMemoryFreeError):
        aa.empty_cache()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    aa.empty_cache()  # the pointer was kept, so it is freed now
    assert sim.live("device_allocations") == before


def test_outs_that_share_memory_are_refused(backend):
    """Generic for every operator with several outputs: each kernel output would overwrite
    the other. (No such operator is registered yet, so a minimal description stands in.)"""
    from ascend_aclnn.ops.spec import OpSpec, Output, Tensor
    spec = OpSpec("pair", "aclnnPair", "two outputs", (Tensor("x", "self"),),
                  (Output("a", "outA"), Output("b", "outB")),
                  infer=lambda a: [(a.x.shape, a.x.dtype)] * 2, check=lambda a, c: None,
                  reference=lambda x: (x, x))
    o = np.zeros(4, np.float32)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"out\[1\] \(b\): expected memory separate"):
        spec.bind((np.ones(4, np.float32),), {"out": (o, o[1:].reshape(3))[:1] * 2})
    d = aa.to_device(o)
    with pytest.raises(aa.AclnnParamInvalidError, match="shares memory"):
        spec.bind((np.ones(4, np.float32),), {"out": (d, d)})
    spec.bind((np.ones(4, np.float32),), {"out": (o, np.zeros(4, np.float32))})  # separate: fine
