"""The simulated runtime (libascendcl.so): init and finalize, devices, errors and
threads, device and host memory, streams.

Expected values are written out by hand from CANN's headers and documentation; nothing
here is produced by the code under test.
"""
from __future__ import annotations

import ctypes
from ctypes import byref, c_int32, c_int64, c_uint32, c_void_p

import numpy as np
import pytest

from . import sim_ctypes as sc

ND, F32 = sc.FMT_ND, sc.ACL_FLOAT


# ---------------------------------------------------------------------------------------------
# process lifecycle (fresh interpreter each)
# ---------------------------------------------------------------------------------------------

def test_lifecycle_and_counters(profile_builds, run_script):
    """The newest release, which allows aclInit again after aclFinalize."""
    run_script("""
        s = sc.Sim(os.environ["SIMDIR"])
        assert s.counts() == {k: 0 for k in sc.KINDS}, s.counts()
        assert s.count("no_such_kind") == -1
        assert s.err() is None
        n = c_uint32()
        assert s.aclrtGetDeviceCount(byref(n)) == 0 and n.value == 1   # works before aclInit
        assert s.aclrtSetDevice(0) == sc.ACL_ERROR_UNINITIALIZE
        assert "aclInit" in s.err()
        p = c_void_p()
        assert s.aclrtMalloc(byref(p), 64, 0) == sc.ACL_ERROR_UNINITIALIZE
        assert s.aclrtCreateStream(byref(p)) == sc.ACL_ERROR_UNINITIALIZE
        assert s.aclFinalize() == sc.ACL_ERROR_REPEAT_FINALIZE
        assert s.aclInit(b"/nonexistent/acl.json") == 100003   # ACL_ERROR_INVALID_FILE
        assert "/nonexistent/acl.json" in s.err()

        assert s.aclInit(None) == 0
        assert s.aclInit(None) == sc.ACL_ERROR_REPEAT_INITIALIZE
        assert s.aclnnInit(None) == 0
        dev = c_int32(-1)
        assert s.aclrtGetDevice(byref(dev)) == sc.RT_CONTEXT_NULL
        s.ok(s.aclrtSetDevice(0))
        assert s.aclrtGetDevice(byref(dev)) == 0 and dev.value == 0
        stream = c_void_p(); s.ok(s.aclrtCreateStream(byref(stream)))
        d1 = s.malloc(1000); d2 = s.malloc(24)
        h = c_void_p(); s.ok(s.aclrtMallocHost(byref(h), 100))
        x = np.arange(4, dtype=np.float32)
        s.ok(s.aclrtMemcpyAsync(d1, 1000, x.ctypes.data, 16, sc.H2D, stream.value))
        t = s.tensor([2, 3], sc.ACL_FLOAT, d2, fmt=sc.FMT_ND)
        assert s.counts() == {"streams": 1, "device_allocations": 2, "device_bytes": 1024,
                              "host_allocations": 1, "pending_tasks": 1, "tensors": 1,
                              "int_arrays": 0, "float_arrays": 0, "bool_arrays": 0, "scalars": 0,
                              "executors": 0, "tensor_lists": 0, "scalar_lists": 0,
                              "events": 0, "models": 0}, s.counts()

        # aclFinalize releases runtime resources (not the host-side aclTensor)
        assert s.aclFinalize() == 0
        c = s.counts()
        assert (c["streams"], c["device_allocations"], c["device_bytes"], c["host_allocations"],
                c["pending_tasks"], c["tensors"]) == (0, 0, 0, 0, 0, 1), c
        assert s.aclFinalize() == sc.ACL_ERROR_REPEAT_FINALIZE
        assert s.aclrtFree(d1) == sc.ACL_ERROR_UNINITIALIZE

        assert s.aclInit(None) == 0                                  # re-init is allowed
        assert s.aclrtGetDevice(byref(dev)) == sc.RT_CONTEXT_NULL    # device state was released
        s.ok(s.aclrtSetDevice(0))
        assert s.aclrtFree(d1) == sc.RT_MEMORY_FREE                  # freed by aclFinalize
        assert "already freed" in s.err()
        assert s.aclrtDestroyStream(stream.value) == sc.RT_PARAM_INVALID
        assert "destroyed" in s.err()
        s.ok(s.aclDestroyTensor(t))
        assert s.aclnnFinalize() == 0
        s.ok(s.aclrtResetDevice(0))
        assert s.aclrtResetDevice(0) == sc.RT_CONTEXT_NULL           # not set any more
        assert s.counts() == {k: 0 for k in sc.KINDS}, s.counts()
        assert s.aclFinalize() == 0
        print("done")
    """, env={"SIMDIR": str(profile_builds["9.2.0"])})


@pytest.mark.parametrize("version", ["8.1.RC1", "9.2.0"])
def test_whoever_calls_aclfinalize_finalizes_everyone(profile_builds, run_script, version):
    """A host framework (a C-level user) initialises ACL first and works; a second component
    gets 100002 from its aclInit, and its aclFinalize still tears everything down: the
    host's stream, memory and device are gone, and its own aclFinalize gets 100037. Then
    aclInit again: 100002 on 8.1.RC1 (once per process), success on the newest."""
    again = {"8.1.RC1": "sc.ACL_ERROR_REPEAT_INITIALIZE", "9.2.0": "0"}[version]
    run_script(f"""
        s = sc.Sim(os.environ["SIMDIR"])
        # the host framework
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        stream = c_void_p(); s.ok(s.aclrtCreateStream(byref(stream)))
        buf = s.malloc(64)
        x = np.arange(16, dtype=np.float32)
        s.ok(s.aclrtMemcpyAsync(buf, 64, x.ctypes.data, 64, sc.H2D, stream.value))
        # someone else in the same process
        assert s.aclInit(None) == sc.ACL_ERROR_REPEAT_INITIALIZE
        assert s.aclFinalize() == 0
        # the host, afterwards
        assert s.count("streams") == 0 and s.count("device_allocations") == 0 and s.count("pending_tasks") == 0
        assert s.aclrtSynchronizeStream(stream.value) == sc.ACL_ERROR_UNINITIALIZE
        assert s.aclrtMalloc(byref(c_void_p()), 64, 0) == sc.ACL_ERROR_UNINITIALIZE
        assert s.aclrtFree(buf) == sc.ACL_ERROR_UNINITIALIZE
        assert s.aclFinalize() == sc.ACL_ERROR_REPEAT_FINALIZE
        # initialising again
        rc = s.aclInit(None)
        msg = s.err()
        assert rc == {again}, (rc, msg)
        if rc:
            assert "{version}" in msg and "one aclInit per process" in msg
            assert s.aclrtSetDevice(0) == sc.ACL_ERROR_UNINITIALIZE   # nothing works any more
            assert s.aclFinalize() == sc.ACL_ERROR_REPEAT_FINALIZE
        else:
            s.ok(s.aclrtSetDevice(0))
            assert s.aclrtFree(buf) == sc.RT_MEMORY_FREE and "already freed" in s.err()
            s.ok(s.aclrtResetDevice(0)); s.ok(s.aclFinalize())
    """, env={"SIMDIR": str(profile_builds[version])})


def test_reset_device_releases_its_resources(sim_builds, run_script):
    run_script("""
        s = sc.Sim(os.environ["SIMDIR"])
        s.ok(s.aclInit(None))
        s.ok(s.aclrtSetDevice(0)); s.ok(s.aclrtSetDevice(0))      # reference count 2
        st = c_void_p(); s.ok(s.aclrtCreateStream(byref(st)))
        p = s.malloc(64)
        s.ok(s.aclrtResetDevice(0))                                # 2 -> 1: nothing released
        assert s.count("streams") == 1 and s.count("device_allocations") == 1
        s.ok(s.aclrtResetDevice(0))                                # 1 -> 0: all released
        assert s.count("streams") == 0 and s.count("device_allocations") == 0
        dev = c_int32()
        assert s.aclrtGetDevice(byref(dev)) == sc.RT_CONTEXT_NULL
        s.ok(s.aclFinalize())
    """, env={"SIMDIR": str(sim_builds["cann8"])})


# ---------------------------------------------------------------------------------------------
# runtime: devices, errors, threads
# ---------------------------------------------------------------------------------------------

def test_device_count_and_bad_ids(rt, monkeypatch, in_thread):
    n = c_uint32()
    assert rt.aclrtGetDeviceCount(byref(n)) == 0 and n.value == 1
    monkeypatch.setenv("ASCEND_SIM_DEVICE_COUNT", "3")
    assert rt.aclrtGetDeviceCount(byref(n)) == 0 and n.value == 3
    assert rt.aclrtGetDeviceCount(None) == sc.RT_PARAM_INVALID

    def body():
        dev = c_int32(-7)
        assert rt.aclrtGetDevice(byref(dev)) == sc.RT_CONTEXT_NULL   # new thread: no device
        assert rt.aclrtSetDevice(3) == sc.RT_INVALID_DEVICEID
        assert "out of range [0, 3)" in rt.err()
        assert rt.aclrtSetDevice(-1) == sc.RT_INVALID_DEVICEID
        assert rt.aclrtResetDevice(2) == sc.RT_CONTEXT_NULL           # never set
        rt.ok(rt.aclrtSetDevice(2))
        assert rt.aclrtGetDevice(byref(dev)) == 0 and dev.value == 2
        rt.ok(rt.aclrtResetDevice(2))
        assert rt.aclrtGetDevice(byref(dev)) == sc.RT_CONTEXT_NULL

    in_thread(body)
    dev = c_int32(-7)
    assert rt.aclrtGetDevice(byref(dev)) == 0 and dev.value == 0     # main thread unaffected


def test_no_current_device_errors(rt, in_thread):
    def body():
        p = c_void_p()
        assert rt.aclrtMalloc(byref(p), 64, 0) == sc.RT_CONTEXT_NULL
        assert rt.aclrtCreateStream(byref(p)) == sc.RT_CONTEXT_NULL
        assert rt.aclrtSynchronizeStream(None) == sc.RT_CONTEXT_NULL
        assert rt.aclrtSynchronizeDevice() == sc.RT_CONTEXT_NULL
        assert "no current device" in rt.err()
        # an explicit stream works without a current device
        assert rt.aclrtSynchronizeStream(rt.stream) == 0

    in_thread(body)


def test_recent_error_message_is_thread_local_and_cleared(rt, in_thread):
    assert rt.err() is None
    assert rt.aclrtFree(None) == sc.RT_PARAM_INVALID

    def other():
        assert rt.err() is None                      # not visible in another thread
        assert rt.aclrtMalloc(None, 8, 0) == sc.RT_PARAM_INVALID
        return rt.err()

    assert "devPtr is NULL" in in_thread(other)
    msg = rt.err()
    assert msg == "aclrtFree: devPtr is NULL"
    assert rt.err() is None                          # reading clears it


def test_threads_share_tables_safely(rt):
    """Several threads hammer the shared tables at once (ctypes drops the GIL in calls)."""
    import threading

    errors = []

    def worker(seed):
        try:
            rt.ok(rt.aclrtSetDevice(0), "aclrtSetDevice")
            data = np.full(64, seed, np.float32)
            for _ in range(200):
                p = rt.upload(data)
                t = rt.tensor([64], F32, p, fmt=ND)
                a = rt.int_array([seed])
                assert rt.download(p, 64, np.float32)[17] == seed
                rt.ok(rt.aclDestroyIntArray(a), "destroy array")
                rt.ok(rt.aclDestroyTensor(t), "destroy tensor")
                rt.free(p)
            rt.ok(rt.aclrtResetDevice(0), "aclrtResetDevice")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_get_version(rt, profile):
    """The ACL version of the loaded build's release (test_profiles.py checks each)."""
    a, b, c = c_int32(), c_int32(), c_int32()
    assert rt.aclrtGetVersion(byref(a), byref(b), byref(c)) == 0
    assert (a.value, b.value, c.value) == {"8.1.RC1": (1, 13, 0), "9.2.0": (1, 17, 0)}[profile]
    assert rt.aclrtGetVersion(None, byref(b), byref(c)) == sc.RT_PARAM_INVALID


def test_cann_package_versions(rt, profile, monkeypatch):
    """aclsysGetCANNVersion (acl/acl.h of 8.1.RC1): every package of the simulated install is
    of its release, split into its dotted parts; the driver is ASCEND_SIM_DRIVER_VERSION when
    set; NULL or a package past ACL_PKG_NAME_DRIVER (7) is ACL_ERROR_INVALID_PARAM."""
    buf = ctypes.create_string_buffer(128 + 4 * 64 + 128)  # aclCANNPackageVersion

    def field(offset, size):
        return buf.raw[offset:offset + size].split(b"\0", 1)[0].decode()

    for package in range(8):
        assert rt.aclsysGetCANNVersion(package, buf) == 0
        assert field(0, 128) == profile
        assert [field(128 + 64 * i, 64) for i in range(3)] == profile.split(".")[:3]
    monkeypatch.setenv("ASCEND_SIM_DRIVER_VERSION", "24.1.rc3")
    assert rt.aclsysGetCANNVersion(7, buf) == 0 and field(0, 128) == "24.1.rc3"
    assert rt.aclsysGetCANNVersion(0, buf) == 0 and field(0, 128) == profile
    assert rt.aclsysGetCANNVersion(0, None) == 100000
    assert rt.aclsysGetCANNVersion(8, buf) == 100000 and "no package 8" in rt.err()


def test_soc_name(rt, monkeypatch):
    assert rt.aclrtGetSocName() == b"Ascend910B3"  # an Atlas A2 part by default
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "Ascend310P3")
    assert rt.aclrtGetSocName() == b"Ascend310P3"
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "")
    assert rt.aclrtGetSocName() is None
    assert "cannot determine the SoC" in rt.err()


def test_context_sys_param_opt(rt, profile):
    """Per device's default context; unknown options, bad values, NULL and no context
    each with CANN's status. Device 0 is current (the fixture set it). The deterministic
    levels are [0, 4) in the newest runtime, [0, 2) before (test_determinism.py)."""
    top = 2 if profile == "8.1.RC1" else 4
    v = c_int64(-5)
    get, put = rt.aclrtCtxGetSysParamOpt, rt.aclrtCtxSetSysParamOpt
    was_set = get(0, byref(v)) == 0
    before = v.value
    try:
        assert put(0, 1) == 0 and get(0, byref(v)) == 0 and v.value == 1
        assert put(0, 0) == 0 and get(0, byref(v)) == 0 and v.value == 0
        assert put(2, 1) == sc.ACL_ERROR_INVALID_PARAM and "opt 2" in rt.err()
        assert get(-1, byref(v)) == sc.ACL_ERROR_INVALID_PARAM
        assert put(0, top) == sc.RT_PARAM_INVALID and f"[0, {top})" in rt.err()
        assert put(1, 2) == sc.RT_PARAM_INVALID and put(0, -1) == sc.RT_PARAM_INVALID
        assert get(0, None) == sc.RT_PARAM_INVALID
        assert get(1, byref(v)) == sc.RT_SYSPARAMOPT_NOT_SET and "never set" in rt.err()
    finally:
        put(0, before if was_set else 0)


# ---------------------------------------------------------------------------------------------
# runtime: memory
# ---------------------------------------------------------------------------------------------

def _mapping_of(addr):
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return line.split()[1]
    return None


def test_device_memory_is_not_host_accessible(rt):
    p = rt.malloc(4096)
    try:
        assert p % 512 == 0
        assert _mapping_of(p) == "---p"           # reserved, inaccessible: a host read segfaults
        assert _mapping_of(p + 4095) == "---p"
    finally:
        rt.free(p)
    q = rt.malloc(4096)
    rt.free(q)
    assert q != p                                 # addresses are never reused
    assert q >= p + 4096


def test_malloc_errors(rt, monkeypatch):
    p = c_void_p()
    assert rt.aclrtMalloc(None, 64, 0) == sc.RT_PARAM_INVALID
    assert rt.aclrtMalloc(byref(p), 0, 0) == sc.RT_PARAM_INVALID
    assert "size is 0" in rt.err()
    assert rt.aclrtMalloc(byref(p), 64, 99) == sc.RT_PARAM_INVALID
    assert "policy" in rt.err()
    assert rt.aclrtMalloc(byref(p), 64, 0x100 | 2) == 0      # a policy with a memory-type flag
    rt.free(p.value)

    monkeypatch.setenv("ASCEND_SIM_DEVICE_MEMORY", str(rt.count("device_bytes") + 1000))
    a = rt.malloc(600)
    assert rt.count("device_bytes") >= 600
    assert rt.aclrtMalloc(byref(p), 600, 0) == sc.RT_MEMORY_ALLOCATION
    assert "out of device memory" in rt.err()
    rt.free(a)
    b = rt.malloc(600)                                        # freed bytes are available again
    rt.free(b)


def test_free_errors(rt):
    assert rt.aclrtFree(None) == sc.RT_PARAM_INVALID
    p = rt.malloc(256)
    assert rt.aclrtFree(p + 16) == sc.RT_MEMORY_FREE
    assert "16 bytes into the allocation" in rt.err()
    rt.free(p)
    assert rt.aclrtFree(p) == sc.RT_MEMORY_FREE               # double free
    assert "already freed" in rt.err()
    host = np.zeros(64, np.uint8)
    assert rt.aclrtFree(host.ctypes.data) == sc.RT_MEMORY_FREE
    assert "not device memory" in rt.err()


def test_memcpy_directions(rt, res):
    d = res.dev(nbytes=64)
    d2 = res.dev(nbytes=64)
    src = np.arange(16, dtype=np.float32)
    dst = np.zeros(16, np.float32)
    assert rt.aclrtMemcpy(d, 64, src.ctypes.data, 64, sc.H2D) == 0
    assert rt.aclrtMemcpy(d2, 64, d, 64, sc.D2D) == 0
    assert rt.aclrtMemcpy(dst.ctypes.data, 64, d2, 64, sc.D2H) == 0
    assert dst.tolist() == src.tolist()
    # DEFAULT infers the direction from the addresses
    src2 = src * 2
    assert rt.aclrtMemcpy(d, 64, src2.ctypes.data, 64, sc.MEMCPY_DEFAULT) == 0
    assert rt.aclrtMemcpy(dst.ctypes.data, 64, d, 64, sc.MEMCPY_DEFAULT) == 0
    assert dst.tolist() == src2.tolist()
    h = np.zeros(16, np.float32)
    assert rt.aclrtMemcpy(h.ctypes.data, 64, src.ctypes.data, 64, sc.H2H) == 0
    assert h.tolist() == src.tolist()


def test_memcpy_rejects_misuse(rt, res):
    d = res.dev(nbytes=64)
    host = np.zeros(16, np.float32)
    hp = host.ctypes.data
    # swapped pointers for the kind
    assert rt.aclrtMemcpy(hp, 64, d, 64, sc.H2D) == sc.RT_PARAM_INVALID
    msg = rt.err()
    assert "dst" in msg and "not device memory" in msg and "HOST_TO_DEVICE" in msg
    assert rt.aclrtMemcpy(d, 64, hp, 64, sc.D2H) == sc.RT_PARAM_INVALID
    assert "dst" in rt.err()
    assert rt.aclrtMemcpy(d, 64, hp, 64, sc.D2D) == sc.RT_PARAM_INVALID
    assert rt.aclrtMemcpy(hp, 64, d, 64, sc.H2H) == sc.RT_PARAM_INVALID
    assert "is a device address" in rt.err()
    # sizes and ranges
    assert rt.aclrtMemcpy(d, 32, hp, 64, sc.H2D) == sc.RT_PARAM_INVALID
    assert "exceeds destMax" in rt.err()
    big = np.zeros(32, np.float32)
    assert rt.aclrtMemcpy(d, 128, big.ctypes.data, 128, sc.H2D) == sc.RT_PARAM_INVALID
    msg = rt.err()
    assert "overruns the allocation" in msg and "by 64 bytes" in msg
    assert rt.aclrtMemcpy(d + 32, 64, hp, 64, sc.H2D) == sc.RT_PARAM_INVALID
    assert rt.aclrtMemcpy(d, 64, None, 64, sc.H2D) == sc.RT_PARAM_INVALID
    assert rt.aclrtMemcpy(d, 64, hp, 64, 99) == sc.RT_PARAM_INVALID
    assert "unknown aclrtMemcpyKind" in rt.err()
    gone = rt.malloc(64)
    rt.free(gone)
    assert rt.aclrtMemcpy(hp, 64, gone, 64, sc.D2H) == sc.RT_PARAM_INVALID
    assert "already freed" in rt.err()


def test_memset(rt, res):
    d = res.dev(nbytes=16)
    assert rt.aclrtMemset(d, 16, 0x1AB, 8) == 0               # low byte of value
    assert rt.download(d, 16, np.uint8).tolist() == [0xAB] * 8 + [0xFF] * 8  # rest: fresh poison
    assert rt.aclrtMemset(d, 8, 0, 16) == sc.RT_PARAM_INVALID
    assert rt.aclrtMemset(d, 32, 0, 32) == sc.RT_PARAM_INVALID
    host = np.zeros(16, np.uint8)
    assert rt.aclrtMemset(host.ctypes.data, 16, 0, 16) == sc.RT_PARAM_INVALID
    assert "not device memory" in rt.err()


def test_malloc_host(rt):
    p = c_void_p()
    before = rt.count("host_allocations")
    assert rt.aclrtMallocHost(byref(p), 0) == sc.RT_PARAM_INVALID
    rt.ok(rt.aclrtMallocHost(byref(p), 100))
    assert rt.count("host_allocations") == before + 1
    ctypes.memset(p.value, 7, 100)                            # real host memory
    d = rt.malloc(8)
    assert rt.aclrtFreeHost(d) == sc.RT_MEMORY_FREE
    assert "aclrtFree" in rt.err()
    rt.free(d)
    rt.ok(rt.aclrtFreeHost(p.value))
    assert rt.aclrtFreeHost(p.value) == sc.RT_MEMORY_FREE
    assert rt.count("host_allocations") == before


# ---------------------------------------------------------------------------------------------
# runtime: streams
# ---------------------------------------------------------------------------------------------

def test_memcpy_async_runs_at_sync(rt, res):
    d = res.dev(np.zeros(4, np.float32))
    new = np.array([1, 2, 3, 4], np.float32)
    pending = rt.count("pending_tasks")
    rt.ok(rt.aclrtMemcpyAsync(d, 16, new.ctypes.data, 16, sc.H2D, rt.stream))
    assert rt.count("pending_tasks") == pending + 1
    assert rt.download(d, 4, np.float32).tolist() == [0, 0, 0, 0]   # not yet
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.count("pending_tasks") == pending
    assert rt.download(d, 4, np.float32).tolist() == [1, 2, 3, 4]
    host = np.zeros(4, np.float32)
    assert rt.aclrtMemcpyAsync(host.ctypes.data, 16, d, 16, sc.H2D, rt.stream) == sc.RT_PARAM_INVALID


def test_stream_handles_and_sync_variants(rt, res):
    s2 = c_void_p()
    rt.ok(rt.aclrtCreateStream(byref(s2)))
    d = res.dev(np.zeros(3, np.float32))
    a, b, c = (np.full(1, v, np.float32) for v in (5, 6, 7))
    rt.ok(rt.aclrtMemcpyAsync(d, 4, a.ctypes.data, 4, sc.H2D, rt.stream))
    rt.ok(rt.aclrtMemcpyAsync(d + 4, 4, b.ctypes.data, 4, sc.H2D, s2.value))
    rt.ok(rt.aclrtMemcpyAsync(d + 8, 4, c.ctypes.data, 4, sc.H2D, None))      # default stream
    rt.ok(rt.aclrtSynchronizeDevice())                       # every stream of the device
    assert rt.download(d, 3, np.float32).tolist() == [5, 6, 7]

    rt.ok(rt.aclrtMemcpyAsync(d, 4, b.ctypes.data, 4, sc.H2D, s2.value))
    rt.ok(rt.aclrtDestroyStream(s2.value))                   # runs pending work first
    assert rt.download(d, 1, np.float32).tolist() == [6]
    assert rt.aclrtDestroyStream(s2.value) == sc.RT_PARAM_INVALID
    assert rt.aclrtSynchronizeStream(s2.value) == sc.RT_PARAM_INVALID
    assert rt.aclrtDestroyStream(None) == sc.RT_PARAM_INVALID
    t = res.tensor([1], F32, None)
    assert rt.aclrtSynchronizeStream(t) == sc.RT_PARAM_INVALID      # a tensor is not a stream
    assert "aclTensor" in rt.err()
    assert rt.aclrtSynchronizeStreamWithTimeout(rt.stream, -2) == sc.RT_PARAM_INVALID
    assert rt.aclrtSynchronizeStreamWithTimeout(rt.stream, -1) == 0
    assert rt.aclrtSynchronizeStreamWithTimeout(rt.stream, 100) == 0


DEPTH = 1024  # queued tasks a stream holds before the next enqueue runs them (native/README.md)


def test_a_long_unsynchronised_loop_stays_bounded(rt, res):
    """A client that never synchronises: at DEPTH queued tasks the next enqueue first runs
    them, as a device drains its queue, so the queue (and the memory it holds) stays flat,
    and what ran is visible without a sync; the rest still waits for one."""
    buf = res.dev(np.zeros(1, np.int32))
    values = np.arange(3 * DEPTH, dtype=np.int32)
    for i in range(3 * DEPTH):
        rt.ok(rt.aclrtMemcpyAsync(buf, 4, values[i:].ctypes.data, 4, sc.H2D, rt.stream))
        assert rt.count("pending_tasks") == i % DEPTH + 1
    assert rt.download(buf, 1, np.int32)[0] == 2 * DEPTH - 1     # ran by the last drain
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(buf, 1, np.int32)[0] == 3 * DEPTH - 1
    assert rt.count("pending_tasks") == 0


def test_a_fault_met_while_draining_waits_for_the_sync(rt, res):
    """The drain's fault does not fail the enqueue (nor touch its thread's error message):
    the next sync reports it, with its message, and drops what was queued after it; the
    stream is clean again after that sync."""
    doomed = rt.malloc(4)
    src = np.full(1, 7, np.int32)
    rt.ok(rt.aclrtMemcpyAsync(doomed, 4, src.ctypes.data, 4, sc.H2D, rt.stream))
    rt.free(doomed)                                             # the first queued task will fault
    buf = res.dev(np.zeros(1, np.int32))
    for _ in range(DEPTH - 1):
        rt.ok(rt.aclrtMemcpyAsync(buf, 4, src.ctypes.data, 4, sc.H2D, rt.stream))
    assert rt.aclrtFree(None) == sc.RT_PARAM_INVALID            # a message of the caller's own
    rt.ok(rt.aclrtMemcpyAsync(buf, 4, src.ctypes.data, 4, sc.H2D, rt.stream))   # drains: faults
    assert rt.err() == "aclrtFree: devPtr is NULL"
    assert rt.count("pending_tasks") == 1
    for _ in range(DEPTH + 5):                                  # a faulted stream runs nothing more
        rt.ok(rt.aclrtMemcpyAsync(buf, 4, src.ctypes.data, 4, sc.H2D, rt.stream))
    assert rt.count("pending_tasks") <= DEPTH
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    assert "no longer valid device memory" in rt.err()
    assert rt.count("pending_tasks") == 0
    assert rt.download(buf, 1, np.int32)[0] == 0                # nothing after the fault ran
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
