"""Faults at every C call site of the npu path (issue 11, section 2), on the simulator's
ASCEND_SIM_FAULT.

For each operator in the registry (its first op_db sample) and each way of calling it
(NumPy in/out with a strided input; DeviceArray inputs; a DeviceArray out= that aliases
an input), every call of every site is made to fail in turn: the 1st, the 2nd, ... until
the call succeeds because the site is called fewer times. Each time: an AclnnError with
the injected status (561103 for a constructor returning NULL) and the simulator's own text
in ``.recent``; then the live counters are back where they were, and the next call, in
the same process, gives the reference backend's result (no poisoned cache, workspace,
allocator or stream). Which sites each operator must reach follows from its description.

Faults in what happens once per process (aclInit, aclrtGetDeviceCount, the first
aclrtSetDevice and aclrtCreateStream) and in teardown run in fresh interpreters. Raw
operators' handles (scalars, scalar and tensor lists, float and bool arrays), plans'
address setters (a raw operator's plan too), events (the user's and the allocator's, which
free() records under another stream's queued work), user streams, graph capture and
replay, the deterministic option, the error-message and version queries each have their
own test; FAULT_CASES maps every C function the package binds (cann/prototypes.py) to the
tests that make it fail, and a function bound without one fails
test_every_bound_c_function_has_a_fault_case.
"""
from __future__ import annotations

import contextlib
import gc
import textwrap

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.backends.npu import launch as npu_backend
from ascend_aclnn import errors
from ascend_aclnn.backends.npu import runtime
from ascend_aclnn.cann.loader import get_cann
from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.ops.spec import IntArray, Tensor

pytestmark = pytest.mark.simulator  # every test injects faults through the simulator
from conftest import run_python
from op_db import OP_DB, tolerance

SPECS = {s.name: s for s in REGISTRY}
FAULT = "ASCEND_SIM_FAULT"
NULL = 561103  # what the binding raises when a constructor returns NULL (ACLNN_ERR_INNER_NULLPTR)
# site -> status injected. A distinct status per site, so a wrong attribution shows.
SITES = {"aclrtMalloc": 507899, "aclrtMemcpy": 507000, "aclrtMemset": 507001, "aclrtMemcpyAsync": 500003,
         "aclCreateTensor": 0, "aclCreateIntArray": 0, "phase1": 561002, "phase2": 361001,
         "aclrtSynchronizeStream": 507015, "aclDestroyTensor": 561000, "aclDestroyIntArray": 561001}
DESTROYS = {"aclDestroyTensor": "tensors", "aclDestroyIntArray": "int_arrays"}
MODES = ("host", "device", "alias")


# ---- one operator call, three ways --------------------------------------------------------------

def _sample(op):
    info = OP_DB[op]
    s = info.samples(info.dtypes[0], np.random.default_rng(11))[0]
    return list(s.args), dict(s.kwargs)


def _strided(x: np.ndarray) -> np.ndarray:
    """The same values as a view with a gap after every element on the last axis."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    return wide[..., ::2]


def _alias_target(spec, args, expected):
    """(argument index) of an input the first output could be written over, or None."""
    first = expected[0]
    for i, (p, a) in enumerate(zip(spec.params, args)):
        if isinstance(p, Tensor) and isinstance(a, np.ndarray) and a.shape == first.shape and a.dtype == first.dtype:
            return i
    return None


def _reference(op, args, kwargs):
    with aa.use_backend("numpy"):
        r = getattr(aa, op)(*args, **kwargs)
    return tuple(None if x is None else np.asarray(x) for x in (r if isinstance(r, tuple) else (r,)))


class Case:
    """One operator, one mode: ``setup()`` makes the arguments (no fault active),
    ``call(args)`` runs the operator and brings every output back to the host."""

    def __init__(self, op: str, mode: str):
        self.op, self.mode, self.spec = op, mode, SPECS[op]
        self.args, self.kwargs = _sample(op)
        self.expected = _reference(op, self.args, self.kwargs)
        self.alias = _alias_target(self.spec, self.args, self.expected) if mode == "alias" else None

    @property
    def possible(self) -> bool:
        return self.mode != "alias" or self.alias is not None

    def setup(self):
        if self.mode == "host":
            first = next(i for i, p in enumerate(self.spec.params) if isinstance(p, Tensor) and not p.contiguous)
            return [_strided(a) if i == first else a for i, a in enumerate(self.args)], {}
        args = [aa.to_device(a) if isinstance(a, np.ndarray) else a for a in self.args]
        if self.mode == "alias":
            outs = [None] * len(self.spec.outputs)
            outs[0] = args[self.alias]
            return args, {"out": outs[0] if len(outs) == 1 else tuple(outs)}
        return args, {}

    def call(self, setup):
        args, extra = setup
        r = getattr(aa, self.op)(*args, **self.kwargs, **extra)
        return tuple(None if x is None else np.asarray(x) for x in (r if isinstance(r, tuple) else (r,)))

    def check_result(self, got):
        exact = OP_DB[self.op].exact
        for i, (g, e) in enumerate(zip(got, self.expected)):
            assert (g is None) == (e is None), i
            if e is None:
                continue
            assert (g.shape, g.dtype) == (e.shape, e.dtype), i
            if exact or e.dtype.kind in "iub":
                np.testing.assert_array_equal(g, e, err_msg=f"{self.op} output {i}")
            else:
                np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), err_msg=f"{self.op} output {i}",
                                           **tolerance(e.dtype))

    def sites_expected(self) -> set[str]:
        """The call sites this call must reach, from the operator's description."""
        # aclIntArray handles are cached per stream and a DeviceArray's aclTensor on its
        # block, so a call destroys only the handles of its temporary uploads (host mode).
        sites = {"aclrtMalloc", "aclCreateTensor", "phase1", "phase2", "aclrtSynchronizeStream", "aclrtMemcpy"}
        if self.mode == "host":
            sites.add("aclDestroyTensor")
        if any(isinstance(p, IntArray) for p in self.spec.params):
            sites.add("aclCreateIntArray")
        a = self.spec.bind(tuple(self.args), dict(self.kwargs))
        if any(o.needs_zero_fill(a) for o in self.spec.outputs):
            sites.add("aclrtMemset")
        if self.mode == "alias":
            sites.add("aclrtMemcpyAsync")
        return sites


def _fault(site: str, spec) -> str:
    name = {"phase1": spec.phase1_name, "phase2": spec.aclnn}.get(site, site)
    return name


def _state(sim, setup=None):
    """Counters and the binding's own bookkeeping, after pending work ran and caches emptied.
    The aclTensor handles the binding keeps on the live blocks of the setup's DeviceArrays
    (by design, for their lifetime) are not counted."""
    aa.synchronize()
    aa.empty_cache()
    dev = runtime.current_device()
    leaks = sim.leaks()
    if setup is not None:
        arrays = {id(a): a for a in setup[0] if isinstance(a, aa.DeviceArray)}  # an aliased out is one of them
        kept = sum(len(a._buffer.acl or {}) for a in arrays.values() if a._buffer.ptr)
        if kept:
            leaks = dict(leaks, tensors=leaks.get("tensors", 0) - kept)
            if not leaks["tensors"]:
                del leaks["tensors"]
    return (leaks, dev.allocator.live_bytes, dev.allocator.cached_bytes, dev.has_pending_work)


def _settled(sim, setup):
    """The state after a call. No garbage collection: a failure path must release what it
    holds by reference counting alone, or device memory stays pinned until the collector
    happens to run (an exception kept in a local of the frame that raised it is such a cycle)."""
    return _state(sim, setup)


class Recorder:
    """Wraps a C function to remember the handles it failed to destroy."""

    def __init__(self, name):
        self.name, self.failed = name, []
        self.functions = get_cann()._functions
        self.real = get_cann().function(name)

    def __call__(self, handle):
        status = self.real(handle)
        if status:
            self.failed.append(handle)
        return status

    def __enter__(self):
        self.functions[self.name] = self
        npu_backend.rebind_functions()  # the hot path binds its functions once: rebind them to this
        return self

    def __exit__(self, *exc):
        self.functions[self.name] = self.real
        npu_backend.rebind_functions()
        for h in self.failed:  # the binding could not destroy it; the test does, to restore the counters
            assert self.real(h) == 0


def _run_site(case: Case, site: str, sim, monkeypatch) -> int:
    """Fail call #1, #2, ... of site until the call gets through; returns how many failed."""
    spec = case.spec
    name = _fault(site, spec)
    status = SITES[site]
    want = NULL if site in ("aclCreateTensor", "aclCreateIntArray") else status
    n = 0
    while True:
        n += 1
        setup = case.setup()
        before = _state(sim, setup)
        monkeypatch.setenv(FAULT, f"{name}:{n}:{status}")
        recorder = Recorder(site) if site in DESTROYS else None
        try:
            if recorder is not None:
                recorder.__enter__()
            try:
                got = case.call(setup)
            except aa.AclnnError as exc:
                assert (exc.status, exc.api) == (want, name), (case.op, case.mode, site, n, str(exc))
                assert exc.recent and f"injected fault: call #{n} of {name}" in exc.recent, exc.recent
                assert f"CANN says: {exc.recent}" in str(exc)
                if site == "aclrtSynchronizeStream" and n == 1 and case.mode == "host":
                    assert spec.aclnn in str(exc), f"the failed sync does not name the lost work: {exc}"
                failed = True
                del exc
            else:
                failed = False
        finally:
            monkeypatch.delenv(FAULT)
            after_fault = _settled(sim, setup) if recorder is None else None
            if recorder is not None:
                leaked = {k: v for k, v in _state(sim, setup)[0].items() if k == DESTROYS[site]}
                recorder.__exit__()
                if failed:  # exactly the one handle CANN refused to destroy was left
                    assert leaked == {DESTROYS[site]: before[0].get(DESTROYS[site], 0) + 1}, leaked
                after_fault = _settled(sim, setup)
        assert after_fault == before, (case.op, case.mode, site, n, before, after_fault)
        if not failed:
            case.check_result(got)
            return n - 1
        # the next call, with no fault, is right
        case.check_result(case.call(case.setup()))
        del setup


# Every operator, three ways; "alias" where an input has the first output's shape and dtype.
CASES = [(op, mode) for op in sorted(SPECS) for mode in MODES if Case(op, mode).possible]


@pytest.mark.parametrize("op,mode", CASES)
def test_every_call_site_fails_cleanly(op, mode, npu, sim, monkeypatch):
    case = Case(op, mode)
    gc.collect()  # a stable baseline: from here on, nothing may wait for the collector
    failed = {site: _run_site(case, site, sim, monkeypatch) for site in SITES}
    reached = {site for site, n in failed.items() if n > 0}
    missing = case.sites_expected() - reached
    assert not missing, f"{op} ({case.mode}) never reached {missing}"
    print(f"\n{op} ({mode}): {sum(failed.values())} faults injected: {failed}")


# ---- sites outside an operator call -------------------------------------------------------------

def _fp16_backward(l_in=8, device=False):
    g = np.ones((2, 3, 2 * l_in), np.float16)  # fp16 backward: an fp32 workspace of 2*3*l_in*4 bytes
    if device:
        g = aa.to_device(g)
    return aa.upsample_nearest_exact1d_backward(g, [2 * l_in], [2, 3, l_in])


def test_failed_executor_destroy_after_a_failed_workspace(npu, sim, monkeypatch):
    """Phase 2 never ran, so the binding destroys the executor; that fails too: the
    workspace's error is the one raised, and only that executor is left."""
    aa.empty_cache()
    # after empty_cache: aclrtMalloc #1 = output, #2 = input upload, #3 = workspace
    monkeypatch.setenv(FAULT, "aclrtMalloc:3:507899,aclDestroyAclOpExecutor:1:561000")
    with Recorder("aclDestroyAclOpExecutor") as rec:
        with pytest.raises(aa.AclnnError) as info:
            _fp16_backward()
        assert (info.value.status, info.value.api) == (507899, "aclrtMalloc")
        assert len(rec.failed) == 1 and sim.leaks() == {"executors": 1, **_cached(sim)}
    monkeypatch.delenv(FAULT)
    np.testing.assert_array_equal(_fp16_backward(), np.full((2, 3, 8), 2, np.float16))


def _cached(sim):
    # blocks in the cache carry their aclTensor handles; int arrays are cached per stream
    return {k: sim.live(k) for k in ("device_allocations", "device_bytes", "tensors", "int_arrays") if sim.live(k)}


@pytest.mark.parametrize("n", [1, 2])
def test_free_fails_at_the_first_and_a_later_block(n, npu, sim, monkeypatch):
    aa.empty_cache()
    arrays = [aa.to_device(np.ones(k * 200, np.float32)) for k in (1, 2, 3)]  # three cached sizes
    del arrays
    assert sim.live("device_allocations") == 3
    monkeypatch.setenv(FAULT, f"aclrtFree:{n}:207002")
    with pytest.raises(errors.AclRtMemoryFreeError) as info:
        aa.empty_cache()
    assert "1 of 3 cached blocks" in str(info.value) and f"call #{n} of aclrtFree" in info.value.recent
    assert sim.live("device_allocations") == 1  # the other two were freed
    monkeypatch.delenv(FAULT)
    aa.empty_cache()
    assert sim.live("device_allocations") == 0
    np.testing.assert_array_equal(_fp16_backward(), np.full((2, 3, 8), 2, np.float16))


def test_set_device_fails_on_a_later_thread(npu, sim, monkeypatch):
    """The first aclrtSetDevice of a process is in test_process_start_faults; a new thread
    makes its own, later, call."""
    import contextvars
    import threading
    expected = np.full((2, 3, 8), 2, np.float16)
    _fp16_backward()
    monkeypatch.setenv(FAULT, "aclrtSetDevice:1:107001")
    box = []

    def worker():
        for _ in range(2):  # the first fails, the retry on the same thread works
            try:
                box.append(_fp16_backward())
            except aa.AclnnError as exc:
                box.append(exc)
    t = threading.Thread(target=contextvars.copy_context().run, args=(worker,))
    t.start()
    t.join()
    assert isinstance(box[0], errors.AclRtInvalidDeviceidError) and box[0].api == "aclrtSetDevice"
    assert "call #1 of aclrtSetDevice" in box[0].recent
    np.testing.assert_array_equal(box[1], expected)


def test_out_of_memory_is_recovered_by_sync_and_retry(npu, sim, monkeypatch):
    """A real out-of-memory (the device is 1 MiB): the cache and the memory that queued work
    holds until the next sync are what stands in the way; the allocator syncs, empties the
    cache and retries, and every result is right."""
    aa.empty_cache()
    monkeypatch.setenv("ASCEND_SIM_DEVICE_MEMORY", str(2**20))
    x = np.arange(3 * 40000, dtype=np.float32).reshape(1, 3, 40000)  # 480 KB
    d = aa.to_device(x)
    y = aa.upsample_nearest_exact1d(d, [40000])  # queued: keeps d alive until the next sync
    del d
    assert sim.live("pending_tasks") == 1 and sim.live("device_bytes") == 2 * 480256  # 512-byte blocks
    big = aa.to_device(np.full((1, 3, 40001), 7, np.float32))  # needs d's memory: OOM, sync, retry
    assert sim.live("pending_tasks") == 0  # the retry ran the queued work first
    np.testing.assert_array_equal(y.numpy(), x)
    np.testing.assert_array_equal(big.numpy()[0, :, -1], [7, 7, 7])
    del y, big
    too_big = np.ones((1, 1, 300000), np.float32)  # 1.2 MB: more than the device has
    with pytest.raises(errors.AclRtMemoryAllocationError) as info:
        aa.to_device(too_big)
    assert info.value.api == "aclrtMalloc" and info.value.recent
    monkeypatch.delenv("ASCEND_SIM_DEVICE_MEMORY")
    np.testing.assert_array_equal(aa.to_device(too_big).numpy(), too_big)


def test_workspace_grows_across_calls_while_work_is_queued(npu, sim):
    """Each call needs a bigger fp16-backward workspace. The old workspaces are still used by
    queued kernels: they must stay out of the allocator's hands until the sync, or the
    uploads in between would be written over by the accumulators (or vice versa)."""
    aa.empty_cache()
    stream = runtime.current_device().stream
    results, uploads, sizes = [], [], []
    for l_in in (8, 40, 100, 250):  # workspace 2*3*l_in*4 bytes: 192, 960, 2400, 6000
        old = stream._workspace.nbytes if stream._workspace is not None else 0
        results.append((l_in, _fp16_backward(l_in, device=True)))
        sizes.append(stream._workspace.nbytes)
        if old:  # exactly the replaced workspace's size: would reuse its block if it were released
            uploads.append(aa.to_device(np.full(old // 4, 5, np.float32)))
    assert sizes == sorted(set(sizes)) and sizes[-1] >= 6000, sizes  # it grew at every call
    assert sim.live("pending_tasks") == 4  # nothing waited
    for l_in, r in results:
        np.testing.assert_array_equal(r.numpy(), np.full((2, 3, l_in), 2, np.float16))
    for u in uploads:
        assert (u.numpy() == 5).all()
    _fp16_backward(250)
    assert stream._workspace.nbytes == sizes[-1]  # the grown one is kept for the next call


def test_failed_sync_names_each_lost_launch_and_each_array_its_writer(npu, sim, monkeypatch):
    x = aa.to_device(np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4))
    a = aa.upsample_nearest_exact1d(aa.to_device(np.ones((1, 2, 3), np.float32)), [6])
    b = aa.replication_pad2d(x, [1, 1, 1, 1])
    c = aa.replication_pad2d(x, [0, 1, 0, 1])
    monkeypatch.setenv(FAULT, "aclrtSynchronizeStream:1:507015")
    with pytest.raises(errors.AclRtAicoreExceptionError) as info:
        aa.synchronize()
    assert "discarded: aclnnUpsampleNearestExact1d, aclnnReplicationPad2d x2" in str(info.value)
    monkeypatch.delenv(FAULT)
    for lost, writer in ((a, "aclnnUpsampleNearestExact1d"), (b, "aclnnReplicationPad2d"), (c, "aclnnReplicationPad2d")):
        with pytest.raises(errors.AclRtAicoreExceptionError, match=f"queued work of {writer} that writes this array"):
            lost.numpy()
    # x was written by a synchronous upload, not by lost work: still good, and so is new work
    np.testing.assert_array_equal(aa.replication_pad2d(x, [0, 0, 0, 0]).numpy(), x.numpy())
    aa.replication_pad2d(x, [1, 1, 1, 1], out=b)  # an out= rewrites a lost array: valid again
    with aa.use_backend("numpy"):
        expected = aa.replication_pad2d(np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4), [1, 1, 1, 1])
    np.testing.assert_array_equal(b.numpy(), expected)


# ---- once per process: fresh interpreters -------------------------------------------------------

PROLOGUE = textwrap.dedent("""
    import ctypes, os, numpy as np, ascend_aclnn as aa
    from ascend_aclnn.backends.npu import runtime
    from ascend_aclnn.cann.loader import get_cann
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    want = [[[0, 0, 1, 2, 2], [3, 3, 4, 5, 5]]]  # s = 3/5: sources floor((d + 0.5) * 0.6)

    def live():
        f = get_cann().function("aclrtGetDeviceCount")  # loads the libraries
        lib = ctypes.CDLL(str(get_cann().lib_dir / "libascendcl.so"))
        lib.aclsimLiveCount.restype, lib.aclsimLiveCount.argtypes = ctypes.c_int64, [ctypes.c_char_p]
        kinds = ("streams", "tensors", "int_arrays", "executors", "pending_tasks", "device_allocations")
        return {k: n for k in kinds if (n := lib.aclsimLiveCount(k.encode()))}

    def attempt(tag):
        try:
            y = aa.upsample_nearest_exact1d(x, [5])
        except aa.AclnnError as e:
            print(tag, "raised", e.status, e.api, "|", e.recent)
        else:
            print(tag, "ok", y.tolist() == want)
""")


@pytest.mark.parametrize("site,status", [("aclInit", 500000), ("aclrtGetDeviceCount", 507899),
                                         ("aclrtSetDevice", 107001), ("aclrtCreateStream", 507000)])
def test_process_start_faults(site, status, sim):
    """The first call of a once-per-process site fails: the error, then (same process) the
    next call works, nothing is left behind, and the interpreter exits silently."""
    code = PROLOGUE + textwrap.dedent("""
        attempt("first")
        attempt("second")
        aa.synchronize(); aa.empty_cache()
        print("live", live())
    """)
    result = run_python(code, sim, ASCEND_ACLNN_BACKEND="npu", ASCEND_SIM_FAULT=f"{site}:1:{status}")
    assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"first raised {status} {site} | injected fault: call #1 of {site}"), lines
    assert lines[1:] == ["second ok True", "live {'streams': 1}"], lines


def test_later_runtime_calls_and_teardown_faults(sim):
    """After a teardown, a new runtime makes each once-per-process call again: each fails in
    turn (a later call), then works. Each teardown call fails in turn: teardown stays silent,
    the simulator's device state is still released, and the next call works. Last, the
    interpreter exits with live and queued arrays while every teardown call fails."""
    code = PROLOGUE + textwrap.dedent("""
        attempt("warm")
        for site, status in [("aclInit", 500000), ("aclrtGetDeviceCount", 507899),
                             ("aclrtSetDevice", 107001), ("aclrtCreateStream", 507000)]:
            runtime.get_runtime().teardown()
            os.environ["ASCEND_SIM_FAULT"] = f"{site}:1:{status}"
            attempt(site)
            del os.environ["ASCEND_SIM_FAULT"]
            attempt("then")
        for site in ("aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtFree", "aclrtResetDevice",
                     "aclFinalize"):
            kept = aa.upsample_nearest_exact1d(aa.to_device(x), [5])  # queued, not run
            aa.to_device(x)  # a cached block
            os.environ["ASCEND_SIM_FAULT"] = f"{site}:1:507000"
            runtime.get_runtime().teardown()  # never raises
            del os.environ["ASCEND_SIM_FAULT"]
            print("teardown", site, live())
            kept.free()  # after teardown: a no-op
            attempt("then")
        keep = [aa.upsample_nearest_exact1d(aa.to_device(x), [5]) for _ in range(3)]
        os.environ["ASCEND_SIM_FAULT"] = ",".join(f"{s}:1:507000" for s in (
            "aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtFree", "aclrtResetDevice", "aclFinalize"))
        print("exiting")
    """)
    result = run_python(code, sim, ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "warm ok True"
    for i, (site, status) in enumerate([("aclInit", 500000), ("aclrtGetDeviceCount", 507899),
                                        ("aclrtSetDevice", 107001), ("aclrtCreateStream", 507000)]):
        assert lines[1 + 2 * i].startswith(f"{site} raised {status} {site} | injected fault: call #1"), lines
        assert lines[2 + 2 * i] == "then ok True", lines
    teardowns = lines[9:19]
    for i, site in enumerate(("aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtFree", "aclrtResetDevice",
                              "aclFinalize")):
        assert teardowns[2 * i:2 * i + 2] == [f"teardown {site} {{}}", "then ok True"], lines
    assert lines[19:] == ["exiting"], lines


def test_failed_sync_flags_what_a_raw_operator_wrote_on_the_device(npu, sim, monkeypatch):
    """A raw call on DeviceArrays (the lean device-resident path) records the tensors it
    writes, so a failed sync flags them as it flags a described call's outputs."""
    d = aa.to_device(np.ones((1, 2, 3), np.float32))
    o = aa.empty((1, 2, 6), np.float32)
    assert aa.aclnn.UpsampleNearestExact1d(d, [6], 0.0, o) is o
    monkeypatch.setenv(FAULT, "aclrtSynchronizeStream:1:507015")
    with pytest.raises(errors.AclRtAicoreExceptionError, match="discarded: aclnnUpsampleNearestExact1d"):
        aa.synchronize()
    monkeypatch.delenv(FAULT)
    with pytest.raises(errors.AclRtAicoreExceptionError, match="queued work of aclnnUpsampleNearestExact1d"):
        o.numpy()
    np.testing.assert_array_equal(d.numpy(), np.ones((1, 2, 3), np.float32))  # only read: still good
    assert aa.aclnn.UpsampleNearestExact1d(d, [6], 0.0, o) is o  # written again: valid
    np.testing.assert_array_equal(o.numpy(), np.ones((1, 2, 6), np.float32))


# ---- the handles of raw operators' other parameter kinds, and plans' address setters ----------

_X23 = np.arange(6, dtype=np.float32).reshape(2, 3)


def _raw_call(kind):
    """A raw operator call whose conversion creates (and destroys) a handle of this kind,
    and the counter that kind's live handles are in."""
    x = _X23
    if kind == "Scalar":
        return (lambda: aa.aclnn.Add(x, x, 2.0, np.empty_like(x))), "scalars"
    if kind == "TensorList":
        return (lambda: aa.aclnn.Cat([x, x + 1], 0, np.empty((4, 3), np.float32))), "tensor_lists"
    if kind == "ScalarList":
        return (lambda: aa.aclnn.ForeachMulScalarList([x], [2.0], [np.empty_like(x)])), "scalar_lists"
    y = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    call = (lambda: aa.aclnn.CustomMaskedScale(y, [0.5, 2.0, 3.0], [True, False, True], "mul", 1.0, 0,
                                               np.empty_like(y)))
    return call, {"FloatArray": "float_arrays", "BoolArray": "bool_arrays"}[kind]


def _host(r):
    return [np.asarray(v.numpy() if isinstance(v, aa.DeviceArray) else v) for v in (r if isinstance(r, (list, tuple))
                                                                                      else [r])]


RAW_HANDLE_SITES = [f"acl{verb}{kind}" for kind in ("Scalar", "TensorList", "ScalarList", "FloatArray", "BoolArray")
                    for verb in ("Create", "Destroy")]


@pytest.mark.parametrize("site", RAW_HANDLE_SITES)
def test_raw_operator_handles_fail_cleanly(site, npu, sim, monkeypatch):
    """A raw operator's aclScalar, aclTensorList, aclScalarList, aclFloatArray or aclBoolArray:
    its constructor returning NULL (561103) or its destroy failing. The error names the
    site; a failed create leaves nothing, a failed destroy exactly the handle CANN refused;
    the next call is right."""
    kind = site.removeprefix("aclCreate").removeprefix("aclDestroy")
    call, counter = _raw_call(kind)
    want = _host(call())
    gc.collect()
    before = _state(sim)
    status = 0 if "Create" in site else 561000
    monkeypatch.setenv(FAULT, f"{site}:1:{status}")
    with Recorder(site) if status else contextlib.nullcontext() as rec:
        with pytest.raises(aa.AclnnError) as info:
            call()
        monkeypatch.delenv(FAULT)
        assert (info.value.status, info.value.api) == (NULL if status == 0 else status, site), str(info.value)
        assert f"injected fault: call #1 of {site}" in info.value.recent, info.value.recent
        del info
        left = _state(sim)
        if status:  # exactly the one handle CANN refused (with, for a list, the elements it owns)
            assert len(rec.failed) == 1 and left[0].get(counter, 0) == before[0].get(counter, 0) + 1, left
        else:
            assert left == before, (before, left)
    assert _state(sim) == before
    for got, w in zip(_host(call()), want):
        np.testing.assert_array_equal(got, w)


@pytest.mark.parametrize("site", ["aclSetInputTensorAddr", "aclSetOutputTensorAddr"])
def test_plan_address_setters_fail_cleanly(site, npu, sim, monkeypatch):
    """A plan rebinding its repeatable executor to new arrays: the setter's failure is the
    error, nothing is left, and the plan's next run (on the same new arrays) is right."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    want = aa.upsample_nearest_exact1d(x, [5])
    with aa.plan(aa.upsample_nearest_exact1d, aa.to_device(x), [5], out=aa.empty((1, 2, 5))) as p:
        assert p.repeatable
        d, o = aa.to_device(x), aa.empty((1, 2, 5))  # new addresses for both
        gc.collect()
        before = _state(sim, ([d, o],))
        monkeypatch.setenv(FAULT, f"{site}:1:561000")
        with pytest.raises(aa.AclnnError) as info:
            p(d, [5], out=o)
        monkeypatch.delenv(FAULT)
        assert (info.value.status, info.value.api) == (561000, site), str(info.value)
        assert f"injected fault: call #1 of {site}" in info.value.recent
        del info
        assert _state(sim, ([d, o],)) == before
        np.testing.assert_array_equal(p(d, [5], out=o).numpy(), want)
        del d, o


def test_cached_int_arrays_fail_to_destroy_cleanly(npu, sim, monkeypatch):
    """aclIntArray handles are cached per stream and destroyed by empty_cache: when CANN
    refuses one, that one is left (and nothing raises: the status is not checked there),
    the others are destroyed, and the next calls are right."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    aa.empty_cache()
    for n in (5, 6, 7):
        aa.upsample_nearest_exact1d(x, [n])
    cached = sim.live("int_arrays")
    assert cached >= 3
    monkeypatch.setenv(FAULT, "aclDestroyIntArray:2:561001")
    with Recorder("aclDestroyIntArray") as rec:
        aa.empty_cache()
        monkeypatch.delenv(FAULT)
        assert len(rec.failed) == 1 and sim.live("int_arrays") == 1
    assert sim.live("int_arrays") == 0
    with aa.use_backend("numpy"):
        want = aa.upsample_nearest_exact1d(x, [6])
    np.testing.assert_array_equal(aa.upsample_nearest_exact1d(x, [6]), want)


def test_a_failed_error_message_read_leaves_the_error_whole(npu, sim, monkeypatch):
    """aclGetRecentErrMsg returning NULL while the binding reports a failure: the failure's
    own error, with no CANN text; nothing left behind."""
    gc.collect()
    before = _state(sim)
    monkeypatch.setenv(FAULT, "aclrtMalloc:1:507899,aclGetRecentErrMsg:1:0")
    with pytest.raises(aa.AclnnError) as info:
        _fp16_backward()
    monkeypatch.delenv(FAULT)
    assert (info.value.status, info.value.api, info.value.recent) == (507899, "aclrtMalloc", None), str(info.value)
    assert "CANN says" not in str(info.value)
    del info
    assert _state(sim) == before
    np.testing.assert_array_equal(_fp16_backward(), np.full((2, 3, 8), 2, np.float16))


@pytest.mark.parametrize("site", ["aclrtCtxSetSysParamOpt", "aclrtSetSysParamOpt", "aclrtCtxGetSysParamOpt",
                                  "aclrtGetSysParamOpt"])
def test_deterministic_option_calls_fail_cleanly(site, sim):
    """Setting or reading the deterministic option: the C call's failure is the error (with
    CANN's text), and the next attempt works; in a fresh interpreter so the process-level
    option is set at a known point."""
    code = textwrap.dedent(f"""
        import os, ascend_aclnn as aa
        from ascend_aclnn import determinism
        from ascend_aclnn.backends.npu import runtime
        site = {site!r}
        aa.upsample_nearest_exact1d(aa.to_device(x), [5])  # the runtime is up
        def step():
            if site.startswith("aclrtCtxGet"):
                return determinism.context_setting(runtime.current_device())
            if site.startswith("aclrtGet"):
                return determinism.process_setting(runtime.get_runtime())
            if site.startswith("aclrtCtxSet"):
                aa.set_deterministic(True)
                return determinism.context_setting(runtime.current_device())
            runtime.get_runtime().teardown()  # the process-level option is set at start-up
            aa.set_deterministic(True)
            aa.upsample_nearest_exact1d(aa.to_device(x), [5])
            return determinism.process_setting(runtime.get_runtime())
        aa.set_deterministic(True) if site.startswith("aclrtGet") or site.startswith("aclrtCtxGet") else None
        os.environ["ASCEND_SIM_FAULT"] = f"{{site}}:1:500000"
        try:
            step()
            print("no error")
        except aa.AclnnError as e:
            print("raised", e.status, e.api, "injected fault" in (e.recent or ""))
        del os.environ["ASCEND_SIM_FAULT"]
        aa.set_deterministic(False); aa.set_deterministic(True)
        print("then", step())
        print("ok", aa.upsample_nearest_exact1d(x, [5]).tolist() == want)
    """)
    result = run_python(PROLOGUE + code, sim, ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
    assert result.stdout.splitlines() == [f"raised 500000 {site} True", "then 1", "ok True"], result.stdout


@pytest.mark.parametrize("site,fact,says", [("aclrtGetVersion", "acl_version", None),
                                            ("aclrtGetSocName", "soc_warning", "aclrtGetSocName returned NULL")])
def test_info_survives_failing_version_and_soc_queries(site, fact, says, sim):
    """`info` asks CANN for its ACL version and SoC: a failure of either is reported in its
    place, and the rest of the facts are still there."""
    code = textwrap.dedent("""
        import json
        from ascend_aclnn.tools import info
        print(json.dumps(info.collect()))
    """)
    import json
    result = run_python(code, sim, ASCEND_ACLNN_BACKEND="npu", ASCEND_SIM_FAULT=f"{site}:1:507000")
    assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
    facts = json.loads(result.stdout)
    assert facts[fact] == says if says is None else says in facts[fact], facts
    assert [f["function"] for f in facts["functions"]] == sorted(s.name for s in REGISTRY)


def test_info_survives_a_failing_driver_version_query(sim):
    """`info` asks the runtime for the driver's version (aclsysGetCANNVersion): when that
    fails, the driver's version.info stands in (here none: unknown), nothing is printed on
    stderr, and the rest of the facts are there; when it works, the runtime's answer is
    used."""
    code = textwrap.dedent("""
        import json
        from ascend_aclnn.tools import info
        facts = info.collect()
        print(json.dumps([facts["driver"], [f["function"] for f in facts["functions"]]]))
    """)
    import json
    for fault, source, driver in (("aclsysGetCANNVersion:1:500000", None, None),
                                  (None, "aclsysGetCANNVersion", "24.1.rc3")):
        result = run_python(code, sim, ASCEND_ACLNN_BACKEND="npu", ASCEND_SIM_FAULT=fault,
                            ASCEND_SIM_DRIVER_VERSION="24.1.rc3")
        assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
        facts, functions = json.loads(result.stdout)
        assert (facts["driver_source"], facts["driver"]) == (source, driver), facts
        assert functions == sorted(s.name for s in REGISTRY)


# ---- streams, events and graphs ------------------------------------------------------------------

# A status of its own per site, so a wrong attribution shows.
RUNTIME_SITES = {"aclrtCreateEventExWithFlag": 507010, "aclrtRecordEvent": 507011, "aclrtQueryEventStatus": 507012,
                 "aclrtEventElapsedTime": 507013, "aclrtSynchronizeEvent": 507014, "aclrtStreamQuery": 507016,
                 "aclrtStreamWaitEvent": 507017, "aclrtMemsetAsync": 507018, "aclmdlRICaptureBegin": 507019,
                 "aclmdlRICaptureEnd": 507020, "aclmdlRIExecuteAsync": 507021, "aclrtDestroyEvent": 507022,
                 "aclmdlRIDestroy": 507023}


def _rt_state(sim, arrays=()):
    """_state with the live streams too: a user stream or a graph's private stream left
    behind shows there (the handle counters do not count streams)."""
    return _state(sim, (list(arrays),)), sim.live("streams")


def _upsampled(x):
    with aa.use_backend("numpy"):
        return aa.upsample_nearest_exact1d(x, [5])


def _raises_cleanly(site, action, sim, monkeypatch, arrays=()):
    """action() with call #1 of site failing: the error is site's, with the simulator's text,
    and the live counters are where they were."""
    status = RUNTIME_SITES[site]
    gc.collect()
    before = _rt_state(sim, arrays)
    monkeypatch.setenv(FAULT, f"{site}:1:{status}")
    try:
        with pytest.raises(aa.AclnnError) as info:
            action()
    finally:
        monkeypatch.delenv(FAULT)
    assert (info.value.status, info.value.api) == (status, site), str(info.value)
    assert info.value.recent and f"injected fault: call #1 of {site}" in info.value.recent, info.value.recent
    assert f"CANN says: {info.value.recent}" in str(info.value)
    del info  # its frames would keep what the action made alive
    assert _rt_state(sim, arrays) == before


def _timed(d):
    """Device time of one upsample of d between two fresh timing events (the simulator's
    clock is deterministic)."""
    a, b = aa.Event(timing=True), aa.Event(timing=True)
    a.record()
    aa.upsample_nearest_exact1d(d, [5])
    b.record()
    ms = a.elapsed_time(b)
    a.close()
    b.close()
    return ms


@pytest.mark.parametrize("site", ["aclrtCreateEventExWithFlag", "aclrtRecordEvent", "aclrtQueryEventStatus",
                                  "aclrtEventElapsedTime"])
def test_event_calls_fail_cleanly(site, npu, sim, monkeypatch):
    """An event's create (at its first record), record, query or elapsed_time failing: the
    error is the call's, no event or work is left over, and the same events then record,
    query and time the same work right."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    ms = _timed(d)
    start, end = aa.Event(timing=True), aa.Event(timing=True)
    if site != "aclrtCreateEventExWithFlag":  # the events exist (and have been recorded) before the fault
        start.record()
        aa.upsample_nearest_exact1d(d, [5])
        end.record()
    action = {"aclrtCreateEventExWithFlag": start.record, "aclrtRecordEvent": start.record,
              "aclrtQueryEventStatus": start.query, "aclrtEventElapsedTime": lambda: start.elapsed_time(end)}[site]
    _raises_cleanly(site, action, sim, monkeypatch, [d])
    start.record()
    y = aa.upsample_nearest_exact1d(d, [5])
    end.record()
    assert start.elapsed_time(end) == ms
    assert start.query() and end.query()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))
    start.close()
    end.close()


def test_event_synchronize_fails_cleanly(npu, sim, monkeypatch):
    """A failed event sync: its error (the status, the call, CANN's text); the work queued
    before the record is discarded and what it writes is flagged with that error; once
    that is dropped the counters are back; the event then syncs new work right."""
    site, status = "aclrtSynchronizeEvent", RUNTIME_SITES["aclrtSynchronizeEvent"]
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    e = aa.Event()
    e.record()
    gc.collect()
    before = _rt_state(sim, [d])
    y = aa.upsample_nearest_exact1d(d, [5])
    e.record()
    monkeypatch.setenv(FAULT, f"{site}:1:{status}")
    try:
        with pytest.raises(aa.AclnnError) as info:
            e.synchronize()
    finally:
        monkeypatch.delenv(FAULT)
    assert (info.value.status, info.value.api) == (status, site), str(info.value)
    assert info.value.recent and f"injected fault: call #1 of {site}" in info.value.recent, info.value.recent
    assert "discarded: aclnnUpsampleNearestExact1d" in str(info.value)
    del info
    with pytest.raises(aa.AclnnError, match="queued work of aclnnUpsampleNearestExact1d") as lost:
        y.numpy()
    assert (lost.value.status, lost.value.api) == (status, site)
    del lost, y
    assert _rt_state(sim, [d]) == before
    y = aa.upsample_nearest_exact1d(d, [5])
    e.record()
    e.synchronize()
    assert e.query()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))
    e.close()


@contextlib.contextmanager
def _release_refused(sim, monkeypatch, site, status, how, held, kind, live):
    """Releases the one object in held (a list, so that the collector can take the last
    reference) by close() or by the collector while site's first call fails with status, and
    checks that exactly that handle was left (live ones of kind). The body runs before the
    Recorder destroys the handle it kept."""
    with Recorder(site) as rec:
        monkeypatch.setenv(FAULT, f"{site}:1:{status}")
        try:
            if how == "close":
                held[0].close()
            else:
                held.clear()
                gc.collect()
        finally:
            monkeypatch.delenv(FAULT)
        assert len(rec.failed) == 1 and sim.live(kind) == live
        yield


@pytest.mark.parametrize("how", ["close", "collector"])
def test_event_destroy_fails_cleanly(how, npu, sim, monkeypatch):
    """close() or the collector releasing an event never raises: when CANN refuses the
    destroy, exactly that event is left, and new events work."""
    site, status = "aclrtDestroyEvent", RUNTIME_SITES["aclrtDestroyEvent"]
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    gc.collect()
    before = _rt_state(sim, [d])
    e = aa.Event(timing=True)
    e.record()
    y = aa.upsample_nearest_exact1d(d, [5])
    e.record()
    assert sim.live("events") == before[0][0].get("events", 0) + 1
    held = [e]
    del e
    with _release_refused(sim, monkeypatch, site, status, how, held, "events", before[0][0].get("events", 0) + 1):
        pass
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))
    del y
    assert _rt_state(sim, [d]) == before
    assert _timed(d) > 0
    e2 = aa.Event()
    e2.record()
    e2.synchronize()
    assert e2.query()
    e2.close()
    assert _rt_state(sim, [d]) == before


def test_stream_query_fails_cleanly(npu, sim, monkeypatch):
    """A user stream's failed query: its error, the stream's queued work untouched; then it
    syncs, queries complete, and the work's result is right."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    s = aa.Stream()
    with aa.stream(s):
        y = aa.upsample_nearest_exact1d(d, [5])
    _raises_cleanly("aclrtStreamQuery", s.query, sim, monkeypatch, [d, y])
    s.synchronize()
    assert s.query()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))
    s.close()


def test_stream_wait_event_fails_cleanly(npu, sim, monkeypatch):
    """A failed wait: its error, nothing left; the next wait orders the user stream's work
    after the default stream's, and the result is right."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    s, e = aa.Stream(), aa.Event()
    e.record()
    _raises_cleanly("aclrtStreamWaitEvent", lambda: s.wait_event(e), sim, monkeypatch, [d])
    y = aa.upsample_nearest_exact1d(d, [6])  # the default stream
    e.record()
    s.wait_event(e)
    with aa.stream(s):
        z = aa.upsample_nearest_exact1d(y, [5])
    with aa.use_backend("numpy"):
        want = aa.upsample_nearest_exact1d(aa.upsample_nearest_exact1d(x, [6]), [5])
    np.testing.assert_array_equal(z.numpy(), want)
    s.close()
    e.close()


def test_captured_memset_fails_cleanly(npu, sim, monkeypatch):
    """A zero-filled output inside a capture is an aclrtMemsetAsync on the graph's stream:
    its failure abandons the capture (no model, no stream, no memory left) and a new
    graph of the same call captures and replays right."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    d = aa.to_device(x)
    args = ([2, 2], [2, 2], [0, 0], [1, 1])

    def capture(g):
        with aa.graph(g):
            aa.max_pool2d_with_mask(d, *args)
    _raises_cleanly("aclrtMemsetAsync", lambda: capture(aa.Graph()), sim, monkeypatch, [d])
    gc.collect()
    before = _rt_state(sim, [d])
    g = aa.Graph()
    with aa.graph(g):
        got = aa.max_pool2d_with_mask(d, *args)
    g.replay()
    with aa.use_backend("numpy"):
        want = aa.max_pool2d_with_mask(x, *args)
    for a, w in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), w)
    del got, a
    g.close()
    assert _rt_state(sim, [d]) == before


@pytest.mark.parametrize("site", ["aclmdlRICaptureBegin", "aclmdlRICaptureEnd"])
def test_capture_begin_and_end_fail_cleanly(site, npu, sim, monkeypatch):
    """A capture whose begin or end fails: the error is that call's; no model, stream or
    memory is left (the failed end still leaves capture mode and destroys what it made);
    the graph (begin) or a new one (end) then captures and replays right."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    g = aa.Graph()

    def capture():
        with aa.graph(g):
            aa.upsample_nearest_exact1d(d, [5])
    _raises_cleanly(site, capture, sim, monkeypatch, [d])
    assert repr(g).startswith("<ascend_aclnn.Graph " + ("new" if site == "aclmdlRICaptureBegin" else "failed"))
    if site == "aclmdlRICaptureEnd":
        g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(d, [5])
    d.copy_(x + 10)
    g.replay()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x + 10))
    g.close()


def test_replay_fails_cleanly(npu, sim, monkeypatch):
    """A failed aclmdlRIExecuteAsync: its error, nothing queued or left; the next replay
    recomputes from the inputs' current contents."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(d, [5])
    g.replay()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))
    d.copy_(x + 10)
    _raises_cleanly("aclmdlRIExecuteAsync", g.replay, sim, monkeypatch, [d, y])
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))  # not replayed
    g.replay()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x + 10))
    g.close()


@pytest.mark.parametrize("how", ["close", "collector"])
def test_graph_destroy_fails_cleanly(how, npu, sim, monkeypatch):
    """close() or the collector releasing a graph never raises: when CANN refuses the model's
    destroy, exactly that model is left, the graph's stream and what it held are still
    released, and a new graph captures and replays right."""
    site, status = "aclmdlRIDestroy", RUNTIME_SITES["aclmdlRIDestroy"]
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    gc.collect()
    before = _rt_state(sim, [d])
    g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(d, [5])
    g.replay()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x))
    del y
    assert sim.live("models") == before[0][0].get("models", 0) + 1
    held = [g]
    del g
    with _release_refused(sim, monkeypatch, site, status, how, held, "models", before[0][0].get("models", 0) + 1):
        assert sim.live("streams") == before[1]  # the graph's stream went all the same
    assert _rt_state(sim, [d]) == before
    g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(d, [5])
    d.copy_(x + 10)
    g.replay()
    np.testing.assert_array_equal(y.numpy(), _upsampled(x + 10))
    del y
    g.close()
    assert _rt_state(sim, [d]) == before


# ---- the allocator's events: a block freed under another stream's queued work ---------------------

_WIDE = np.arange(2 * 300, dtype=np.float32).reshape(1, 2, 300)  # a size class no other array here has


def _freed_under_a_side_stream(monkeypatch, fault=None):
    """(side stream, its queued result, the freed array's block address and size): x is read
    by work queued on the side stream, then freed from the default stream's context, with
    ``fault`` (an ASCEND_SIM_FAULT value) active around the free() only."""
    side = aa.Stream()
    x = aa.to_device(_WIDE)
    ptr, size = x._buffer.ptr, x._buffer.nbytes
    with aa.stream(side):
        z = aa.upsample_nearest_exact1d(x, [600])
    if fault is not None:
        monkeypatch.setenv(FAULT, fault)
    try:
        x.free()
    finally:
        monkeypatch.delenv(FAULT, raising=False)
    return side, z, ptr, size


@pytest.mark.parametrize("site", ["aclrtCreateEventExWithFlag", "aclrtRecordEvent"])
def test_a_free_whose_event_fails_waits_for_the_stream_instead(site, npu, sim, monkeypatch):
    """free() of an array another stream's queued work reads: when CANN refuses to create
    or record the event, free() waits for that stream (the rule before events) and the
    block is cached at once, ready. No error (the free did its job), no event or block
    left, the stream's result right; the next free() records its event again."""
    aa.synchronize()
    aa.empty_cache()  # no pooled event: the free() creates one
    gc.collect()
    before = _rt_state(sim)
    alloc = runtime.current_device().allocator
    side, z, ptr, size = _freed_under_a_side_stream(monkeypatch, f"{site}:1:{RUNTIME_SITES[site]}")
    assert sim.live("pending_tasks") == 0                  # waited for
    assert (alloc.pending_bytes, alloc.events_out) == (0, 0)
    assert sim.live("events") == (0 if site == "aclrtCreateEventExWithFlag" else 1)  # the refused record's is pooled
    again = aa.to_device(_WIDE * 2)
    assert again._buffer.ptr == ptr                        # reused at once: nothing was waiting
    np.testing.assert_array_equal(z.numpy(), np.repeat(_WIDE, 2, -1))
    del again, z
    side.close()
    assert _rt_state(sim) == before
    side, z, _, size = _freed_under_a_side_stream(monkeypatch)
    assert (alloc.pending_bytes, alloc.events_out) == (size, 1) and sim.live("pending_tasks") == 2
    np.testing.assert_array_equal(z.numpy(), np.repeat(_WIDE, 2, -1))
    del z
    side.close()
    assert _rt_state(sim) == before


def test_a_free_whose_event_and_then_wait_fail_raises_the_wait_and_keeps_nothing(npu, sim, monkeypatch):
    """The record is refused and the stream sync that replaces it fails too: free() raises
    that sync's error, the side stream's lost result is flagged with it, and the block is
    back in the cache all the same (nothing left once the flagged array is dropped)."""
    aa.synchronize()
    aa.empty_cache()
    gc.collect()
    before = _rt_state(sim)
    with pytest.raises(errors.AclRtAicoreExceptionError) as info:
        _freed_under_a_side_stream(monkeypatch, f"aclrtRecordEvent:1:{RUNTIME_SITES['aclrtRecordEvent']},"
                                                "aclrtSynchronizeStream:1:507015")
    assert info.value.api == "aclrtSynchronizeStream" and "discarded: aclnnUpsampleNearestExact1d" in str(info.value)
    del info
    gc.collect()  # the side stream and its flagged output were locals of the raising helper
    alloc = runtime.current_device().allocator
    assert (alloc.live_bytes, alloc.pending_bytes) == (before[0][1], 0)
    assert _rt_state(sim) == before


def test_a_failed_event_query_waits_for_the_stream_instead(npu, sim, monkeypatch):
    """An allocation of the freed block's size polls its event; when the query fails, the
    allocator waits for the event's stream instead and hands the block out: no error,
    nothing left, every result right."""
    aa.synchronize()
    aa.empty_cache()
    gc.collect()
    before = _rt_state(sim)
    side, z, ptr, size = _freed_under_a_side_stream(monkeypatch)
    assert sim.live("pending_tasks") == 2
    site = "aclrtQueryEventStatus"
    monkeypatch.setenv(FAULT, f"{site}:1:{RUNTIME_SITES[site]}")
    try:
        again = aa.to_device(_WIDE * 2)
    finally:
        monkeypatch.delenv(FAULT)
    assert again._buffer.ptr == ptr and sim.live("pending_tasks") == 0
    alloc = runtime.current_device().allocator
    assert (alloc.pending_bytes, alloc.events_out) == (0, 0)
    np.testing.assert_array_equal(z.numpy(), np.repeat(_WIDE, 2, -1))
    np.testing.assert_array_equal(again.numpy(), _WIDE * 2)
    del again, z
    side.close()
    assert _rt_state(sim) == before


def test_a_refused_destroy_of_a_pooled_event_leaves_that_event_only(npu, sim, monkeypatch):
    """empty_cache() destroys the allocator's pooled events and never raises for one CANN
    refuses to destroy: exactly that event is left, and the next free() records anew."""
    aa.synchronize()
    aa.empty_cache()
    gc.collect()
    before = _rt_state(sim)
    side, z, _, _ = _freed_under_a_side_stream(monkeypatch)
    np.testing.assert_array_equal(z.numpy(), np.repeat(_WIDE, 2, -1))
    del z
    assert sim.live("events") == 1
    site = "aclrtDestroyEvent"
    with Recorder(site) as rec:
        monkeypatch.setenv(FAULT, f"{site}:1:{RUNTIME_SITES[site]}")
        try:
            aa.empty_cache()
        finally:
            monkeypatch.delenv(FAULT)
        assert len(rec.failed) == 1 and sim.live("events") == 1
    assert sim.live("events") == 0
    side, z, _, _ = _freed_under_a_side_stream(monkeypatch)
    assert sim.live("events") == 1
    np.testing.assert_array_equal(z.numpy(), np.repeat(_WIDE, 2, -1))
    del z
    side.close()
    assert _rt_state(sim) == before


@pytest.mark.parametrize("n", [1, 2])
def test_raw_plan_address_setter_fails_cleanly(n, npu, sim, monkeypatch):
    """A plan of a raw operator (aa.aclnn) rebinds its tensors with aclSetTensorAddr, one
    slot at a time: the 1st (self) or the 2nd (out) of two rebinds failing is the error,
    nothing is left, and the next run (on the same new arrays) rebinds what is still
    stale and is right."""
    site, status = "aclSetTensorAddr", 561004
    x = _X23
    e = aa.to_device(x + 1)
    with aa.plan(aa.aclnn.Add, aa.to_device(x), e, 2.0, aa.empty((2, 3))) as p:
        assert p.repeatable, p.fallback_reason
        d, o = aa.to_device(x * 3), aa.empty((2, 3))  # new addresses for self and out
        gc.collect()
        before = _state(sim, ([d, e, o],))
        monkeypatch.setenv(FAULT, f"{site}:{n}:{status}")
        try:
            with pytest.raises(aa.AclnnError) as info:
                p(d, e, 2.0, o)
        finally:
            monkeypatch.delenv(FAULT)
        assert (info.value.status, info.value.api) == (status, site), str(info.value)
        assert info.value.recent and f"injected fault: call #{n} of {site}" in info.value.recent, info.value.recent
        assert f"CANN says: {info.value.recent}" in str(info.value)
        del info
        assert _state(sim, ([d, e, o],)) == before
        p(d, e, 2.0, o)
        np.testing.assert_array_equal(o.numpy(), x * 3 + 2 * (x + 1))
        del d, o


# ---- every bound C function has a fault case ----------------------------------------------------

# C function (a key of ascend_aclnn/cann/prototypes.py's PROTOTYPES) -> the test that makes it
# fail, as "test_name" (this module) or "tests/file.py::test_name", or a tuple of them when the
# package calls it from places that fail differently (an event of the user's, or one of the
# allocator's); None for a function the package binds but never calls (checked below: its
# name appears nowhere else in the package).
FAULT_CASES: dict[str, "str | tuple[str, ...] | None"] = {
    "aclInit": "test_process_start_faults", "aclrtGetDeviceCount": "test_process_start_faults",
    "aclrtSetDevice": "test_process_start_faults", "aclrtCreateStream": "test_process_start_faults",
    "aclFinalize": "test_later_runtime_calls_and_teardown_faults",
    "aclrtResetDevice": "test_later_runtime_calls_and_teardown_faults",
    "aclrtDestroyStream": "test_later_runtime_calls_and_teardown_faults",
    "aclrtSynchronizeStream": "test_every_call_site_fails_cleanly", "aclrtMalloc": "test_every_call_site_fails_cleanly",
    "aclrtMemcpy": "test_every_call_site_fails_cleanly", "aclrtMemcpyAsync": "test_every_call_site_fails_cleanly",
    "aclrtMemset": "test_every_call_site_fails_cleanly", "aclCreateTensor": "test_every_call_site_fails_cleanly",
    "aclCreateIntArray": "test_every_call_site_fails_cleanly", "aclDestroyTensor": "test_every_call_site_fails_cleanly",
    "aclDestroyIntArray": "test_cached_int_arrays_fail_to_destroy_cleanly",
    "aclrtFree": "test_free_fails_at_the_first_and_a_later_block",
    "aclDestroyAclOpExecutor": "test_failed_executor_destroy_after_a_failed_workspace",
    "aclSetAclOpExecutorRepeatable": "tests/test_plans.py::test_fallback_when_the_executor_cannot_repeat",
    "aclSetInputTensorAddr": "test_plan_address_setters_fail_cleanly",
    "aclSetOutputTensorAddr": "test_plan_address_setters_fail_cleanly",
    "aclGetRecentErrMsg": "test_a_failed_error_message_read_leaves_the_error_whole",
    "aclrtGetVersion": "test_info_survives_failing_version_and_soc_queries",
    "aclsysGetCANNVersion": "test_info_survives_a_failing_driver_version_query",
    "aclrtGetSocName": "test_info_survives_failing_version_and_soc_queries",
    **{s: "test_deterministic_option_calls_fail_cleanly" for s in (
        "aclrtCtxSetSysParamOpt", "aclrtSetSysParamOpt", "aclrtCtxGetSysParamOpt", "aclrtGetSysParamOpt")},
    **{s: "test_raw_operator_handles_fail_cleanly" for s in RAW_HANDLE_SITES},
    "aclSetTensorAddr": "test_raw_plan_address_setter_fails_cleanly",
    "aclrtCreateEventExWithFlag": ("test_event_calls_fail_cleanly",
                                   "test_a_free_whose_event_fails_waits_for_the_stream_instead"),
    "aclrtRecordEvent": ("test_event_calls_fail_cleanly", "test_a_free_whose_event_fails_waits_for_the_stream_instead",
                         "test_a_free_whose_event_and_then_wait_fail_raises_the_wait_and_keeps_nothing"),
    "aclrtQueryEventStatus": ("test_event_calls_fail_cleanly", "test_a_failed_event_query_waits_for_the_stream_instead"),
    "aclrtEventElapsedTime": "test_event_calls_fail_cleanly",
    "aclrtSynchronizeEvent": "test_event_synchronize_fails_cleanly",
    "aclrtDestroyEvent": ("test_event_destroy_fails_cleanly", "test_a_refused_destroy_of_a_pooled_event_leaves_that_event_only"),
    "aclrtStreamQuery": "test_stream_query_fails_cleanly",
    "aclrtStreamWaitEvent": "test_stream_wait_event_fails_cleanly",
    "aclrtMemsetAsync": "test_captured_memset_fails_cleanly",
    "aclmdlRICaptureBegin": "test_capture_begin_and_end_fail_cleanly",
    "aclmdlRICaptureEnd": "test_capture_begin_and_end_fail_cleanly",
    "aclmdlRIExecuteAsync": "test_replay_fails_cleanly",
    "aclmdlRIDestroy": "test_graph_destroy_fails_cleanly",
    "aclGetViewOffset": None, "aclGetDataType": None,
    "aclGetFormat": "tests/test_formats_npu.py::test_a_failed_storage_read_back_fails_cleanly",
    "aclGetStorageShape": "tests/test_formats_npu.py::test_a_failed_storage_read_back_fails_cleanly",
    "aclGetViewShape": "tests/test_data_dependent.py::test_a_failed_view_shape_read_back_fails_cleanly",
}


def test_every_bound_c_function_has_a_fault_case():
    """The fault sites follow from the C functions the package binds, so a function bound
    later (streams, events, graphs, ...) fails here until a test makes it fail."""
    import inspect
    import sys
    from pathlib import Path

    from ascend_aclnn.cann.prototypes import PROTOTYPES
    missing = sorted(set(PROTOTYPES) - set(FAULT_CASES))
    assert not missing, "\n".join(
        f"{name} is bound (ascend_aclnn/cann/prototypes.py) but no test makes it fail. Add one: a test that sets "
        f"ASCEND_SIM_FAULT={name}:1:<a status of its own> around a call reaching it, then checks the error "
        f"(.status, .api == {name!r}, the simulator's text in .recent), the live counters (_state) and that the "
        f"next call is right (see test_plan_address_setters_fail_cleanly); then add {name!r}: '<that test>' to "
        f"FAULT_CASES in tests/test_faults.py" for name in missing)
    assert not set(FAULT_CASES) - set(PROTOTYPES), f"no longer bound: {sorted(set(FAULT_CASES) - set(PROTOTYPES))}"
    package = Path(aa.__file__).parent
    sources = {p: p.read_text() for p in package.rglob("*.py") if p.name != "prototypes.py"}
    here = sys.modules[__name__]
    cases = [(name, test) for name, tests in FAULT_CASES.items()
             for test in (tests if isinstance(tests, tuple) else (tests,))]
    for name, test in cases:
        if test is None:
            callers = [str(p.relative_to(package)) for p, text in sources.items() if name in text]
            assert not callers, f"{name} is called now ({callers}): it needs a fault case in FAULT_CASES"
            continue
        path, _, fn_name = test.rpartition("::")
        if path:
            text = (Path(__file__).parent.parent / path).read_text()
            assert f"def {fn_name}(" in text, f"{test} does not exist"
        else:
            fn = getattr(here, fn_name, None)
            assert fn is not None, f"{test} does not exist"
            text = inspect.getsource(here) + "".join(str(m.args) for m in getattr(fn, "pytestmark", []))
        assert name in text, f"{test} never names {name}"
