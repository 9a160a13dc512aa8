"""Tests of the CANN CPU simulator itself (native/), driven directly via ctypes.

Expected values are written out by hand from CANN's headers and operator sources;
nothing here is produced by the code under test.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import textwrap
import threading
from ctypes import byref, c_bool, c_float, c_int, c_int32, c_int64, c_uint32, c_uint64, c_void_p

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent


def _load(name, path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


sc = _load("aclsim_sim_ctypes", HERE / "sim_ctypes.py")
native_build = _load("aclsim_native_build", HERE.parents[1] / "native" / "build.py")

NCL, ND = sc.FMT_NCL, sc.FMT_ND
F32, F16, BF16, U8, I32 = sc.ACL_FLOAT, sc.ACL_FLOAT16, sc.ACL_BF16, sc.ACL_UINT8, sc.ACL_INT32


# ---------------------------------------------------------------------------------------------
# fixtures (kept in this module: a tests/sim/conftest.py would shadow tests/conftest.py)
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def sim_builds(tmp_path_factory):
    base = tmp_path_factory.mktemp("ascend_sim")
    return {layout: native_build.build(base / layout, layout) for layout in ("cann8", "split")}


def _mapped_libascendcl():
    """Directory of a libascendcl.so already mapped into this process, if any."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[-1].endswith("/libascendcl.so"):
                return pathlib.Path(parts[-1]).parent
    return None


@pytest.fixture(scope="module")
def simlib(sim_builds):
    """The simulator loaded in this process, initialised, device 0 set, with one stream
    (simlib.stream). Module-scoped so that any aclFinalize happens before other test
    modules (e.g. the binding's) use the runtime."""
    libdir = sim_builds["cann8"]
    other = _mapped_libascendcl()
    if other is not None and other.resolve() != libdir.resolve():
        # Another test already loaded a simulator build from elsewhere; a second
        # copy would not share state with the first (libnnopbase binds to the
        # libascendcl.so already loaded), so use that one.
        probe = ctypes.CDLL(str(other / "libascendcl.so"))
        if not hasattr(probe, "aclsimLiveCount"):
            pytest.skip(f"a non-simulator libascendcl.so is loaded from {other}")
        libdir = other
    op_lib = "libopapi.so" if (libdir / "libopapi.so").exists() else "libopapi_cv.so"
    s = sc.Sim(libdir, op_lib)
    rc = s.aclInit(None)
    assert rc in (0, sc.ACL_ERROR_REPEAT_INITIALIZE), s.err()
    s.ok(s.aclrtSetDevice(0), "aclrtSetDevice")
    stream = ctypes.c_void_p()
    s.ok(s.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")
    s.stream = stream.value
    yield s
    s.aclrtDestroyStream(s.stream)
    s.aclrtResetDevice(0)
    if rc == 0:
        s.aclFinalize()


@pytest.fixture
def rt(simlib, request, monkeypatch):
    """Per test: no stale error message, no fault spec, and every live object
    created by the test released by its end (checked through aclsimLiveCount)."""
    sim = simlib
    failed_before = request.session.testsfailed
    monkeypatch.delenv("ASCEND_SIM_FAULT", raising=False)
    monkeypatch.delenv("ASCEND_SIM_DEVICE_COUNT", raising=False)
    monkeypatch.delenv("ASCEND_SIM_DEVICE_MEMORY", raising=False)
    sim.drain()
    before = sim.counts()
    yield sim
    if request.session.testsfailed == failed_before:  # quiet after a failure
        sim.aclrtSynchronizeStream(sim.stream)
        assert sim.counts() == before, "the test leaked simulator objects"


class Resources:
    """Tracks what a test creates so it is released even when the test fails."""

    def __init__(self, s):
        self.s = s
        self.ptrs, self.tensors, self.arrays, self.execs = [], [], [], []

    def dev(self, arr=None, nbytes=None):
        if arr is None:
            ptr = self.s.malloc(nbytes)
        else:
            ptr = self.s.upload(arr, nbytes)
        self.ptrs.append(ptr)
        return ptr

    def tensor(self, shape, dtype, data, **kw):
        h = self.s.tensor(shape, dtype, data, **kw)
        self.tensors.append(h)
        return h

    def ints(self, values):
        h = self.s.int_array(values)
        self.arrays.append(h)
        return h

    def forget_ptr(self, ptr):
        self.ptrs.remove(ptr)

    def close(self):
        for e in self.execs:
            self.s.aclDestroyAclOpExecutor(e)  # repeatable ones only; others are already dead
        for t in self.tensors:
            self.s.aclDestroyTensor(t)
        for a in self.arrays:
            self.s.aclDestroyIntArray(a)
        self.s.aclrtSynchronizeStream(self.s.stream)
        for p in self.ptrs:
            self.s.aclrtFree(p)
        self.s.drain()


@pytest.fixture
def res(rt):
    r = Resources(rt)
    yield r
    r.close()


@pytest.fixture
def in_thread():
    """Run a function in a fresh thread (which has no current device and its
    own error message) and return its result or re-raise its exception."""

    def run(fn, *args):
        box = {}

        def target():
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                box["error"] = exc

        t = threading.Thread(target=target)
        t.start()
        t.join()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    return run


@pytest.fixture
def run_script(tmp_path):
    """Run Python code in a fresh interpreter with `sc` (sim_ctypes) imported."""

    def run(code: str, env: dict | None = None):
        preamble = textwrap.dedent(f"""
            import ctypes, importlib.util, os, sys
            from ctypes import byref, c_void_p, c_uint32, c_int32, c_uint64
            import numpy as np
            _spec = importlib.util.spec_from_file_location("sc", {str(HERE / "sim_ctypes.py")!r})
            sc = importlib.util.module_from_spec(_spec)
            _spec.loader.exec_module(sc)
        """)
        script = tmp_path / "script.py"
        script.write_text(preamble + textwrap.dedent(code))
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_SIM_")}
        full_env.update(env or {})
        proc = subprocess.run([sys.executable, str(script)], env=full_env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, (f"script failed ({proc.returncode})\n--- stdout\n"
                                      f"{proc.stdout}\n--- stderr\n{proc.stderr}")
        return proc.stdout

    return run


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def run_fwd(s, res, x, dtype, lout, scales=0.0, fmt=NCL):
    n, c, _ = x.shape
    isz = sc.ITEMSIZE[dtype]
    xt = res.tensor(x.shape, dtype, res.dev(x), fmt=fmt)
    outp = res.dev(nbytes=n * c * lout * isz)
    ot = res.tensor([n, c, lout], dtype, outp, fmt=fmt)
    rc, ws, ex = s.fwd_prepare(xt, res.ints([lout]), scales, ot)
    s.ok(rc, "forward phase 1")
    wsp = res.dev(nbytes=ws) if ws else None
    s.ok(s.aclnnUpsampleNearestExact1d(wsp, ws, ex, s.stream), "forward phase 2")
    s.ok(s.aclrtSynchronizeStream(s.stream), "sync")
    return s.download(outp, n * c * lout, sc.NP_DTYPE[dtype]).reshape(n, c, lout), ws


def run_bwd(s, res, g, dtype, lin, scales=0.0):
    n, c, lout = g.shape
    isz = sc.ITEMSIZE[dtype]
    gt = res.tensor(g.shape, dtype, res.dev(g))
    outp = res.dev(nbytes=n * c * lin * isz)
    ot = res.tensor([n, c, lin], dtype, outp)
    rc, ws, ex = s.bwd_prepare(gt, res.ints([lout]), res.ints([n, c, lin]), scales, ot)
    s.ok(rc, "backward phase 1")
    wsp = res.dev(nbytes=ws) if ws else None
    s.ok(s.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, s.stream), "backward phase 2")
    s.ok(s.aclrtSynchronizeStream(s.stream), "sync")
    return s.download(outp, n * c * lin, sc.NP_DTYPE[dtype]).reshape(n, c, lin), ws


def f16_bits(values):
    return np.asarray(values, dtype=np.float16).view(np.uint16)


# ---------------------------------------------------------------------------------------------
# build and library layout
# ---------------------------------------------------------------------------------------------

ACL_SYMBOLS = {
    "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice", "aclrtGetDevice",
    "aclrtGetDeviceCount", "aclrtSynchronizeDevice", "aclrtCreateStream", "aclrtDestroyStream",
    "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtMalloc", "aclrtFree",
    "aclrtMallocHost", "aclrtFreeHost", "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset",
    "aclGetRecentErrMsg", "aclrtGetVersion", "aclrtCtxSetSysParamOpt", "aclrtCtxGetSysParamOpt",
    "aclrtGetSocName", "aclsimLiveCount"}
NNOPBASE_SYMBOLS = {
    "aclCreateTensor", "aclCreateIntArray", "aclCreateFloatArray", "aclCreateBoolArray",
    "aclCreateScalar", "aclDestroyTensor", "aclDestroyIntArray", "aclDestroyFloatArray",
    "aclDestroyBoolArray", "aclDestroyScalar", "aclGetViewShape", "aclGetStorageShape",
    "aclGetViewStrides", "aclGetViewOffset", "aclGetFormat", "aclGetDataType",
    "aclGetIntArraySize", "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
    "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr",
    "aclnnInit", "aclnnFinalize"}
UPSAMPLE_SYMBOLS = {
    "aclnnUpsampleNearestExact1dGetWorkspaceSize", "aclnnUpsampleNearestExact1d",
    "aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize", "aclnnUpsampleNearestExact1dBackward"}
GROUP_NORM_SWISH_SYMBOLS = {
    "aclnnGroupNormSwishGetWorkspaceSize", "aclnnGroupNormSwish",
    "aclnnGroupNormSwishGradGetWorkspaceSize", "aclnnGroupNormSwishGrad"}
PAD_SYMBOLS = {
    "aclnnReplicationPad2dGetWorkspaceSize", "aclnnReplicationPad2d",
    "aclnnReplicationPad2dBackwardGetWorkspaceSize", "aclnnReplicationPad2dBackward"}
IM2COL_SYMBOLS = {"aclnnIm2colGetWorkspaceSize", "aclnnIm2col"}
IM2COL_BACKWARD_SYMBOLS = {"aclnnIm2colBackwardGetWorkspaceSize", "aclnnIm2colBackward"}
MAX_POOL_SYMBOLS = {
    "aclnnMaxPool2dWithMaskGetWorkspaceSize", "aclnnMaxPool2dWithMask",
    "aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize", "aclnnMaxPool2dWithMaskBackward"}
# Each split-layout op library and the operators it exports.
DOMAIN_SYMBOLS = {"cv": UPSAMPLE_SYMBOLS | IM2COL_BACKWARD_SYMBOLS, "math": PAD_SYMBOLS | IM2COL_SYMBOLS,
                  "nn": GROUP_NORM_SWISH_SYMBOLS | MAX_POOL_SYMBOLS}
OP_SYMBOLS = set().union(*DOMAIN_SYMBOLS.values())


def test_build_layouts(sim_builds, tmp_path):
    assert sorted(p.name for p in sim_builds["cann8"].iterdir()) == [
        "libascendcl.so", "libnnopbase.so", "libopapi.so"]
    assert sorted(p.name for p in sim_builds["split"].iterdir()) == [
        "libascendcl.so", "libnnopbase.so", "libopapi_cv.so", "libopapi_math.so", "libopapi_nn.so"]
    libdir = native_build.build(tmp_path / "arch", arch_subdir=True)
    assert libdir == tmp_path / "arch" / f"{platform.machine()}-linux" / "lib64"
    assert (libdir / "libopapi.so").is_file()
    assert not (tmp_path / "arch" / "lib64").exists()


def test_build_errors_are_clear(tmp_path):
    with pytest.raises(native_build.BuildError, match="not found"):
        native_build.build(tmp_path / "a", cc="/nonexistent/bin/cc")
    with pytest.raises(native_build.BuildError, match="failed"):
        native_build.build(tmp_path / "b", cc="false")  # a "compiler" that always fails
    with pytest.raises(ValueError):
        native_build.build(tmp_path / "c", layout="cann7")


def test_build_cli(tmp_path):
    out = subprocess.run([sys.executable, str(HERE.parents[1] / "native" / "build.py"),
                          "--prefix", str(tmp_path), "--layout", "split"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path / "lib64")
    assert out.stderr == ""  # no compiler warnings
    assert (tmp_path / "lib64" / "libopapi_cv.so").is_file()


def _defined_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils nm not installed")
@pytest.mark.parametrize("layout", ["cann8", "split"])
def test_exported_symbols_exact(sim_builds, layout):
    libdir = sim_builds[layout]
    expected = {"libascendcl.so": ACL_SYMBOLS, "libnnopbase.so": NNOPBASE_SYMBOLS}
    if layout == "cann8":
        expected["libopapi.so"] = OP_SYMBOLS
    else:
        expected.update({f"libopapi_{dom}.so": syms for dom, syms in DOMAIN_SYMBOLS.items()})
    for name, want in expected.items():
        syms = _defined_symbols(libdir / name)
        public = {x for x in syms if not x.startswith("_") and not x.startswith("aclsim_")}
        assert public == want, name
        if name.startswith("libopapi"):  # op libraries export nothing internal
            assert not any(x.startswith("aclsim") for x in syms), name


def test_split_layout_symbol_homes(sim_builds, run_script):
    """Each symbol is defined where CANN >= 8.5 puts it; found through the op
    library's dependencies as torch_npu's loader does."""
    run_script("""
        import pathlib
        libdir = pathlib.Path(os.environ["SIMDIR"])

        class DlInfo(ctypes.Structure):
            _fields_ = [("fname", ctypes.c_char_p), ("fbase", c_void_p),
                        ("sname", ctypes.c_char_p), ("saddr", c_void_p)]
        libc = ctypes.CDLL(None)
        libc.dladdr.argtypes = [c_void_p, ctypes.POINTER(DlInfo)]

        def home(lib, name):
            info = DlInfo()
            assert libc.dladdr(ctypes.cast(getattr(lib, name), c_void_p), byref(info))
            return os.path.basename(info.fname.decode())

        cv = ctypes.CDLL(str(libdir / "libopapi_cv.so"))
        for op in ("aclnnUpsampleNearestExact1d", "aclnnUpsampleNearestExact1dGetWorkspaceSize",
                   "aclnnUpsampleNearestExact1dBackward",
                   "aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize"):
            assert home(cv, op) == "libopapi_cv.so", op
        assert home(cv, "aclCreateTensor") == "libnnopbase.so"
        assert home(cv, "aclrtMalloc") == "libascendcl.so"
        nn = ctypes.CDLL(str(libdir / "libnnopbase.so"))
        acl = ctypes.CDLL(str(libdir / "libascendcl.so"))
        assert not hasattr(nn, "aclnnUpsampleNearestExact1d")
        assert not hasattr(acl, "aclCreateTensor")
        for dom in ("math", "nn"):
            lib = ctypes.CDLL(str(libdir / f"libopapi_{dom}.so"))
            assert not hasattr(lib, "aclnnUpsampleNearestExact1d"), dom
        nn_ops = ctypes.CDLL(str(libdir / "libopapi_nn.so"))
        for op in ("aclnnGroupNormSwish", "aclnnGroupNormSwishGetWorkspaceSize",
                   "aclnnGroupNormSwishGrad", "aclnnGroupNormSwishGradGetWorkspaceSize"):
            assert home(nn_ops, op) == "libopapi_nn.so", op
            assert not hasattr(cv, op), op

        # and the split build runs the op end to end
        s = sc.Sim(libdir, "libopapi_cv.so")
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        x = np.array([[[1, 2, 3]]], np.float32)
        xp = s.upload(x); op = s.malloc(20)
        xt = s.tensor([1, 1, 3], sc.ACL_FLOAT, xp); ot = s.tensor([1, 1, 5], sc.ACL_FLOAT, op)
        osz = s.int_array([5])
        rc, ws, ex = s.fwd_prepare(xt, osz, 0.0, ot); s.ok(rc)
        s.ok(s.aclnnUpsampleNearestExact1d(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(op, 5, np.float32).tolist() == [1, 1, 2, 3, 3]
        for h in (xt, ot): s.ok(s.aclDestroyTensor(h))
        s.ok(s.aclDestroyIntArray(osz)); s.free(xp); s.free(op)
        assert all(v == 0 for v in s.counts().values()), s.counts()
        s.ok(s.aclrtResetDevice(0)); s.ok(s.aclFinalize())
    """, env={"SIMDIR": str(sim_builds["split"])})


# ---------------------------------------------------------------------------------------------
# process lifecycle (fresh interpreter each)
# ---------------------------------------------------------------------------------------------

def test_lifecycle_and_counters(sim_builds, run_script):
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
                              "executors": 0}, s.counts()

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
    """, env={"SIMDIR": str(sim_builds["cann8"])})


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


def test_get_version(rt):
    a, b, c = c_int32(), c_int32(), c_int32()
    assert rt.aclrtGetVersion(byref(a), byref(b), byref(c)) == 0
    assert (a.value, b.value, c.value) == (1, 13, 0)
    assert rt.aclrtGetVersion(None, byref(b), byref(c)) == sc.RT_PARAM_INVALID


def test_soc_name(rt, monkeypatch):
    assert rt.aclrtGetSocName() == b"Ascend910B3"  # an Atlas A2 part by default
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "Ascend310P3")
    assert rt.aclrtGetSocName() == b"Ascend310P3"
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "")
    assert rt.aclrtGetSocName() is None
    assert "cannot determine the SoC" in rt.err()


def test_context_sys_param_opt(rt):
    """Per device's default context; unknown options, bad values, NULL and no context
    each with CANN's status. Device 0 is current (the fixture set it)."""
    v = c_int64(-5)
    get, put = rt.aclrtCtxGetSysParamOpt, rt.aclrtCtxSetSysParamOpt
    was_set = get(0, byref(v)) == 0
    before = v.value
    try:
        assert put(0, 1) == 0 and get(0, byref(v)) == 0 and v.value == 1
        assert put(0, 0) == 0 and get(0, byref(v)) == 0 and v.value == 0
        assert put(2, 1) == sc.ACL_ERROR_INVALID_PARAM and "opt 2" in rt.err()
        assert get(-1, byref(v)) == sc.ACL_ERROR_INVALID_PARAM
        assert put(0, 4) == sc.RT_PARAM_INVALID and "[0, 4)" in rt.err()
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


# ---------------------------------------------------------------------------------------------
# nnopbase: tensors, arrays, scalars
# ---------------------------------------------------------------------------------------------

# element sizes from CANN's aclDataType list
DTYPE_SIZES = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1,
               16: 8, 17: 16, 27: 2}


@pytest.mark.parametrize("dtype,itemsize", sorted(DTYPE_SIZES.items()))
def test_tensor_element_sizes(rt, res, dtype, itemsize):
    d = res.dev(nbytes=6 * itemsize)
    t = rt.tensor_raw([2, 3], dtype, d, fmt=ND)
    assert t, rt.err()
    rt.ok(rt.aclDestroyTensor(t))
    assert not rt.tensor_raw([7], dtype, d, fmt=ND)           # one element too many
    assert f"overrun by {itemsize} bytes" in rt.err()


def _create_case(rt, res, case):
    d = res.dev(nbytes=64)          # 16 float32
    host = np.zeros(64, np.uint8)
    dims = (c_int64 * 3)(1, 1, 4)
    if case == "viewDims NULL":
        return rt.aclCreateTensor(None, 3, F32, None, 0, NCL, dims, 3, d)
    if case == "storageDims NULL":
        return rt.aclCreateTensor(dims, 3, F32, None, 0, NCL, None, 3, d)
    args = dict(shape=[1, 1, 4], dtype=F32, data=d)
    args.update({
        "dtype 99": dict(dtype=99),
        "dtype undefined": dict(dtype=-1),
        "dtype string": dict(dtype=sc.ACL_STRING),
        "format 99": dict(fmt=99),
        "format undefined": dict(fmt=sc.FMT_UNDEFINED),
        "negative dim": dict(shape=[1, -1, 4], storage=[4]),
        "negative stride": dict(strides=[4, 4, -1]),
        "negative offset": dict(offset=-1),
        "host pointer": dict(data=host.ctypes.data),
        "unaligned": dict(data=d + 16),
        "view overrun": dict(shape=[1, 1, 20], storage=[16]),
        "offset overrun": dict(shape=[1, 1, 16], offset=1, storage=[16]),
        "stride overrun": dict(shape=[1, 1, 9], strides=[9, 9, 2], storage=[16]),
        "storage overrun": dict(storage=[17]),
        "freed": dict(data="freed"),
    }[case])
    if args["data"] == "freed":
        args["data"] = rt.malloc(64)
        rt.free(args["data"])
    data = args.pop("data")
    return rt.tensor_raw(args.pop("shape"), args.pop("dtype"), data, **args)


CREATE_CASES = {
    "viewDims NULL": "viewDims is NULL",
    "storageDims NULL": "storageDims is NULL",
    "dtype 99": "dataType 99",
    "dtype undefined": "dataType -1",
    "dtype string": "dataType 13",
    "format 99": "format 99",
    "format undefined": "format -1",
    "negative dim": "viewDims[1] = -1 is negative",
    "negative stride": "stride[2] = -1 is negative",
    "negative offset": "offset -1 is negative",
    "host pointer": "not device memory",
    "unaligned": "not 32-byte aligned",
    "view overrun": "overrun by 16 bytes",
    "offset overrun": "overrun by 4 bytes",
    "stride overrun": "overrun by 4 bytes",
    "storage overrun": "overrun by 4 bytes",
    "freed": "already freed",
}


@pytest.mark.parametrize("case", list(CREATE_CASES))
def test_create_tensor_rejects(rt, res, case):
    tensors = rt.count("tensors")
    assert not _create_case(rt, res, case)
    msg = rt.err()
    assert msg is not None and msg.startswith("aclCreateTensor: ")
    assert CREATE_CASES[case] in msg
    assert rt.count("tensors") == tensors


def test_tensor_getters(rt, res):
    d = res.dev(nbytes=4 * 2 * 3 * 4)
    t = res.tensor([2, 3, 4], F16, d, fmt=NCL, storage=[48])       # NULL strides: contiguous
    assert rt.get_dims(rt.aclGetViewShape, t) == [2, 3, 4]
    assert rt.get_dims(rt.aclGetViewStrides, t) == [12, 4, 1]
    assert rt.get_dims(rt.aclGetStorageShape, t) == [48]
    v = res.tensor([2, 2], BF16, d, strides=[1, 3], offset=5, fmt=ND, storage=[48])
    assert rt.get_dims(rt.aclGetViewStrides, v) == [1, 3]
    off, fmt, dt = c_int64(), c_int(), c_int()
    assert rt.aclGetViewOffset(v, byref(off)) == 0 and off.value == 5
    assert rt.aclGetFormat(v, byref(fmt)) == 0 and fmt.value == ND
    assert rt.aclGetDataType(v, byref(dt)) == 0 and dt.value == BF16
    arr, n = sc.I64P(), c_uint64()
    assert rt.aclGetViewShape(t, None, byref(n)) == sc.PARAM_NULLPTR
    assert rt.aclGetViewShape(None, byref(arr), byref(n)) == sc.PARAM_NULLPTR
    assert rt.aclGetViewOffset(t, None) == sc.PARAM_NULLPTR
    unbound = rt.tensor([3], F32, None, fmt=ND)                     # tensorData may be NULL
    rt.ok(rt.aclDestroyTensor(unbound))
    assert rt.aclGetFormat(unbound, byref(fmt)) == sc.INNER_NULLPTR
    assert "destroyed" in rt.err()


def test_destroy_rules(rt):
    for fn in (rt.aclDestroyTensor, rt.aclDestroyIntArray, rt.aclDestroyFloatArray,
               rt.aclDestroyBoolArray, rt.aclDestroyScalar):
        assert fn(None) == 0
    t = rt.tensor([1], F32, None, fmt=ND)
    a = rt.int_array([1, 2])
    assert rt.aclDestroyTensor(a) == sc.INNER                      # wrong type
    assert "aclIntArray" in rt.err()
    rt.ok(rt.aclDestroyIntArray(a))
    rt.ok(rt.aclDestroyTensor(t))
    assert rt.aclDestroyTensor(t) == sc.INNER                      # double destroy
    assert "already destroyed" in rt.err()
    assert rt.aclDestroyIntArray(a) == sc.INNER


def test_arrays_and_scalars(rt):
    base = rt.counts()
    vals = (c_int64 * 3)(4, 5, 6)
    a = rt.aclCreateIntArray(vals, 3)
    vals[0] = 99                                                    # values were copied
    n = c_uint64()
    assert rt.aclGetIntArraySize(a, byref(n)) == 0 and n.value == 3
    assert rt.aclGetIntArraySize(None, byref(n)) == sc.PARAM_NULLPTR
    assert not rt.aclCreateIntArray(None, 2)
    empty = rt.aclCreateIntArray(None, 0)
    assert empty
    fa = rt.aclCreateFloatArray((c_float * 2)(1.5, 2.5), 2)
    ba = rt.aclCreateBoolArray((c_bool * 2)(True, False), 2)
    assert not rt.aclCreateFloatArray(None, 1) and not rt.aclCreateBoolArray(None, 1)
    x = c_float(3.0)
    sc_ = rt.aclCreateScalar(ctypes.addressof(x), F32)
    assert not rt.aclCreateScalar(None, F32)
    assert not rt.aclCreateScalar(ctypes.addressof(x), 99)
    c = rt.counts()
    assert (c["int_arrays"] - base["int_arrays"], c["float_arrays"] - base["float_arrays"],
            c["bool_arrays"] - base["bool_arrays"], c["scalars"] - base["scalars"]) == (2, 1, 1, 1)
    rt.ok(rt.aclDestroyIntArray(a))
    rt.ok(rt.aclDestroyIntArray(empty))
    rt.ok(rt.aclDestroyFloatArray(fa))
    rt.ok(rt.aclDestroyBoolArray(ba))
    rt.ok(rt.aclDestroyScalar(sc_))
    assert rt.aclDestroyScalar(sc_) == sc.INNER
    assert rt.counts() == base
    assert rt.aclnnInit(None) == 0 and rt.aclnnFinalize() == 0


def test_int_array_values_are_copied_into_the_op(rt, res):
    """outputSize built from a buffer that is then overwritten: the op sees the old value."""
    x = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
    xt = res.tensor([1, 1, 3], F32, res.dev(x))
    ot = res.tensor([1, 1, 5], F32, res.dev(nbytes=20))
    buf = (c_int64 * 1)(5)
    osz = rt.aclCreateIntArray(buf, 1)
    res.arrays.append(osz)
    buf[0] = 6
    rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


# ---------------------------------------------------------------------------------------------
# executors and phase 2
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def fwd_setup(rt, res):
    """A valid forward problem: self [1,1,3] = [1,2,3] -> out [1,1,5]."""
    x = np.array([[[1, 2, 3]]], np.float32)
    xp = res.dev(x)
    outp = res.dev(np.zeros(5, np.float32))
    ns = type("FwdSetup", (), {})()
    ns.xp, ns.outp = xp, outp
    ns.xt = res.tensor([1, 1, 3], F32, xp)
    ns.ot = res.tensor([1, 1, 5], F32, outp)
    ns.osz = res.ints([5])
    ns.expected = [1, 1, 2, 3, 3]
    return ns


def test_phase2_consumes_non_repeatable_executor(rt, res, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    rc, ws, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0 and ws == 0 and ex
    assert rt.count("executors") == execs + 1
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("executors") == execs              # freed by phase 2, before the sync
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.INNER_NULLPTR
    msg = rt.err()
    assert "is not live" in msg and "must not be run twice or destroyed" in msg
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER
    assert rt.aclSetAclOpExecutorRepeatable(ex) == sc.INNER
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected


def test_destroy_unrun_executor(rt, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    assert rt.aclDestroyAclOpExecutor(ex) == 0
    assert rt.count("executors") == execs
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER
    assert rt.aclDestroyAclOpExecutor(None) == sc.INNER_NULLPTR
    assert rt.aclSetAclOpExecutorRepeatable(None) == sc.INNER_NULLPTR
    assert rt.aclSetAclOpExecutorRepeatable(f.xt) == sc.INNER      # a tensor is not an executor
    assert rt.aclnnUpsampleNearestExact1d(None, 0, None, rt.stream) == sc.INNER_NULLPTR


def test_repeatable_executor(rt, res, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [1, 1, 2, 3, 3]
    # same executor, new input bytes at the same address
    new = np.array([7, 8, 9], np.float32)
    rt.ok(rt.aclrtMemcpy(f.xp, 12, new.ctypes.data, 12, sc.H2D))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("executors") == execs + 1                      # still live
    # destroying it while a launch is queued is fine: the launch keeps its payload
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert rt.count("executors") == execs
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [7, 7, 8, 9, 9]
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.INNER_NULLPTR


def test_repeatable_executor_rebinds_addresses(rt, res, fwd_setup):
    """aclSetInputTensorAddr / aclSetOutputTensorAddr / aclSetTensorAddr move a
    repeatable executor to new buffers; a launch already queued keeps its own."""
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))      # queued on the old buffers
    x2, out2 = res.dev(np.array([[[4, 5, 6]]], np.float32)), res.dev(np.zeros(5, np.float32))
    rt.ok(rt.aclSetInputTensorAddr(ex, 0, f.xt, x2))
    rt.ok(rt.aclSetOutputTensorAddr(ex, 0, f.ot, out2))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    x3, out3 = res.dev(np.array([[[7, 8, 9]]], np.float32)), res.dev(np.zeros(5, np.float32))
    rt.ok(rt.aclSetTensorAddr(ex, 0, f.xt, x3))                        # index over all tensors:
    rt.ok(rt.aclSetTensorAddr(ex, 1, f.ot, out3))                      # input 0, then output 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [1, 1, 2, 3, 3]
    assert rt.download(out2, 5, np.float32).tolist() == [4, 4, 5, 6, 6]
    assert rt.download(out3, 5, np.float32).tolist() == [7, 7, 8, 9, 9]
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_address_setters_are_strict(rt, res, fwd_setup):
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    other = res.dev(np.zeros(3, np.float32))
    assert rt.aclSetInputTensorAddr(ex, 0, f.xt, other) == sc.PARAM_INVALID
    assert "not repeatable" in rt.err()
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    assert rt.aclSetInputTensorAddr(ex, 1, f.xt, other) == sc.PARAM_INVALID        # one input only
    msg = rt.err()
    assert "index 1 is out of range" in msg and "1 input tensors" in msg
    assert rt.aclSetOutputTensorAddr(ex, 1, f.ot, other) == sc.PARAM_INVALID
    assert rt.aclSetTensorAddr(ex, 2, f.ot, other) == sc.PARAM_INVALID
    assert rt.aclSetInputTensorAddr(ex, 0, f.ot, other) == sc.PARAM_INVALID        # the output is not input 0
    assert "is not the aclTensor the executor was built with" in rt.err()
    stranger = res.tensor([1, 1, 3], F32, other)
    assert rt.aclSetInputTensorAddr(ex, 0, stranger, other) == sc.PARAM_INVALID
    assert rt.aclSetInputTensorAddr(ex, 0, f.xt, other + 4) == sc.PARAM_INVALID    # not 32-byte aligned
    assert rt.aclSetInputTensorAddr(None, 0, f.xt, other) == sc.INNER_NULLPTR
    assert rt.aclSetInputTensorAddr(ex, 0, None, other) == sc.INNER_NULLPTR
    assert rt.aclSetInputTensorAddr(ex, 0, f.osz, other) == sc.INNER_NULLPTR      # an int array is no tensor
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert rt.aclSetInputTensorAddr(ex, 0, f.xt, other) == sc.INNER_NULLPTR
    assert "is not live" in rt.err()


def test_phase2_refuses_an_executor_whose_tensor_was_destroyed(rt, res):
    x = np.array([[[1, 2, 3]]], np.float32)
    xp, outp = res.dev(x), res.dev(nbytes=20)
    xt, ot = rt.tensor([1, 1, 3], F32, xp), rt.tensor([1, 1, 5], F32, outp)
    osz = rt.int_array([5])
    before = rt.counts()
    rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
    assert rc == 0
    rt.ok(rt.aclDestroyTensor(xt))
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.INNER_NULLPTR
    assert "was destroyed before this launch" in rt.err()
    after = rt.counts()            # the failed phase 2 still consumed the executor, queued nothing
    assert (after["executors"], after["pending_tasks"]) == (before["executors"], before["pending_tasks"])
    rt.ok(rt.aclDestroyTensor(ot))
    rt.ok(rt.aclDestroyIntArray(osz))


def test_launch_does_not_depend_on_user_objects(rt, res):
    """The binding destroys tensors/arrays right after phase 2, before the sync."""
    x = np.array([[[1, 2, 3]]], np.float32)
    xp, outp = res.dev(x), res.dev(nbytes=20)
    xt, ot = rt.tensor([1, 1, 3], F32, xp), rt.tensor([1, 1, 5], F32, outp)
    osz = rt.int_array([5])
    rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    for h in (xt, ot):
        rt.ok(rt.aclDestroyTensor(h))
    rt.ok(rt.aclDestroyIntArray(osz))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(outp, 5, np.float32).tolist() == [1, 1, 2, 3, 3]


def test_stream_ordering_with_op(rt, res, fwd_setup):
    """A D2H copy before the sync sees the old bytes; after the sync, the result."""
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("pending_tasks") >= 1
    assert rt.download(f.outp, 5, np.float32).tolist() == [0, 0, 0, 0, 0]
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected


def test_default_stream_launch(rt, fwd_setup):
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, None))
    rt.ok(rt.aclrtSynchronizeStream(None))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected


@pytest.fixture
def bwd_fp16_setup(rt, res):
    """Backward fp16: gradOutput [1,2,2] -> out [1,2,4]; workspace = 1*2*4*4 = 32 bytes."""
    g = f16_bits([[[1, 2], [3, 4]]])
    ns = type("BwdSetup", (), {})()
    ns.gt = res.tensor([1, 2, 2], F16, res.dev(g))
    ns.outp = res.dev(nbytes=16)
    ns.ot = res.tensor([1, 2, 4], F16, ns.outp)
    ns.osz, ns.isz = res.ints([2]), res.ints([1, 2, 4])
    return ns


def _bwd_exec(rt, b):
    rc, ws, ex = rt.bwd_prepare(b.gt, b.osz, b.isz, 0.0, b.ot)
    assert rc == 0, rt.err()
    assert ws == 32
    return ws, ex


def test_phase2_workspace_checks(rt, res, bwd_fp16_setup):
    b = bwd_fp16_setup
    execs, pending = rt.count("executors"), rt.count("pending_tasks")
    run = rt.aclnnUpsampleNearestExact1dBackward
    wsp = res.dev(nbytes=32)

    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 31, ex, rt.stream) == sc.PARAM_INVALID
    assert "smaller than the 32 bytes" in rt.err()
    assert rt.count("executors") == execs          # consumed even though it failed
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER

    ws, ex = _bwd_exec(rt, b)
    assert run(None, 32, ex, rt.stream) == sc.PARAM_NULLPTR
    assert "workspace is NULL" in rt.err()

    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 64, ex, rt.stream) == sc.PARAM_INVALID      # allocation holds 32 bytes only
    assert "overruns the allocation" in rt.err()

    gone = rt.malloc(32)
    rt.free(gone)
    ws, ex = _bwd_exec(rt, b)
    assert run(gone, 32, ex, rt.stream) == sc.PARAM_INVALID
    assert "already freed" in rt.err()

    host = np.zeros(32, np.uint8)
    ws, ex = _bwd_exec(rt, b)
    assert run(host.ctypes.data, 32, ex, rt.stream) == sc.PARAM_INVALID
    assert "not device memory" in rt.err()
    assert rt.count("executors") == execs
    assert rt.count("pending_tasks") == pending                  # nothing was queued


def test_phase2_stream_checks(rt, res, bwd_fp16_setup):
    b = bwd_fp16_setup
    run = rt.aclnnUpsampleNearestExact1dBackward
    wsp = res.dev(nbytes=32)
    s2 = c_void_p()
    rt.ok(rt.aclrtCreateStream(byref(s2)))
    rt.ok(rt.aclrtDestroyStream(s2.value))
    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 32, ex, s2.value) == sc.RUNTIME_ERROR
    assert "not a live stream" in rt.err()
    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 32, ex, b.gt) == sc.RUNTIME_ERROR           # a tensor handle as stream
    # and the success path still works
    ws, ex = _bwd_exec(rt, b)
    rt.ok(run(wsp, 32, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))


def test_phase2_device_mismatch(rt, res, monkeypatch, in_thread):
    monkeypatch.setenv("ASCEND_SIM_DEVICE_COUNT", "2")

    def body():
        rt.ok(rt.aclrtSetDevice(1))
        xp = rt.upload(np.array([1, 2, 3], np.float32))           # on device 1
        outp = rt.malloc(20)
        rt.ok(rt.aclrtSetDevice(0))
        st = c_void_p()
        rt.ok(rt.aclrtCreateStream(byref(st)))                     # on device 0
        xt, ot = rt.tensor([1, 1, 3], F32, xp), rt.tensor([1, 1, 5], F32, outp)
        osz = rt.int_array([5])
        try:
            rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
            assert rc == 0
            assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, st.value) == sc.RUNTIME_ERROR
            msg = rt.err()
            assert "on device 1" in msg and "device 0" in msg
        finally:
            for h in (xt, ot):
                rt.aclDestroyTensor(h)
            rt.aclDestroyIntArray(osz)
            rt.aclrtDestroyStream(st.value)
            rt.free(xp)
            rt.free(outp)
            rt.aclrtResetDevice(0)
            rt.aclrtResetDevice(1)

    in_thread(body)


# ---------------------------------------------------------------------------------------------
# faults at execution time
# ---------------------------------------------------------------------------------------------

def test_freed_input_before_sync_is_an_aicore_exception(rt, res, fwd_setup):
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    sentinel = np.array([42], np.float32)
    rt.ok(rt.aclrtMemcpyAsync(f.outp, 4, sentinel.ctypes.data, 4, sc.H2D, rt.stream))
    assert rt.count("pending_tasks") == 2
    rt.free(f.xp)
    res.forget_ptr(f.xp)
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    msg = rt.err()
    assert "aclnnUpsampleNearestExact1d" in msg and "'self'" in msg
    assert hex(f.xp) in msg and "already freed" in msg
    assert rt.count("pending_tasks") == 0              # the rest of the queue was discarded
    assert rt.download(f.outp, 5, np.float32).tolist() == [0] * 5
    assert rt.aclrtSynchronizeStream(rt.stream) == 0   # the stream is usable again


def test_freed_workspace_before_sync(rt, res, bwd_fp16_setup):
    b = bwd_fp16_setup
    ws, ex = _bwd_exec(rt, b)
    wsp = rt.malloc(ws)
    rt.ok(rt.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, rt.stream))
    rt.free(wsp)
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    msg = rt.err()
    assert "aclnnUpsampleNearestExact1dBackward" in msg and "workspace" in msg


def test_async_copy_to_freed_memory_fails_the_sync(rt):
    d = rt.malloc(16)
    src = np.zeros(4, np.float32)
    rt.ok(rt.aclrtMemcpyAsync(d, 16, src.ctypes.data, 16, sc.H2D, rt.stream))
    rt.free(d)
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    assert "aclrtMemcpyAsync" in rt.err()


# ---------------------------------------------------------------------------------------------
# fault injection
# ---------------------------------------------------------------------------------------------

def test_fault_injection_malloc(rt, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMalloc:2:207001")
    p = c_void_p()
    a = rt.malloc(8)
    assert rt.aclrtMalloc(byref(p), 8, 0) == sc.RT_MEMORY_ALLOCATION
    assert "injected fault" in rt.err()
    b = rt.malloc(8)                                          # 3rd call is fine
    # a new value restarts the call counters
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMalloc:1:107000,aclrtFree:2:207002")
    assert rt.aclrtMalloc(byref(p), 8, 0) == sc.RT_PARAM_INVALID
    rt.free(a)
    assert rt.aclrtFree(b) == sc.RT_MEMORY_FREE
    assert "call #2 of aclrtFree" in rt.err()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    rt.free(b)                                                # the fault did not free it


def test_fault_injection_phase1_and_pointer_functions(rt, res, monkeypatch, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1dGetWorkspaceSize:1:561002")
    rc, ws, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert (rc, ws, ex) == (561002, 12345, 0xDEAD0)             # nothing written
    assert rt.count("executors") == execs
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)         # 2nd call works
    assert rc == 0
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclCreateTensor:1:1, aclCreateIntArray:1:1")
    assert not rt.tensor_raw([1], F32, None, fmt=ND)
    assert "aclCreateTensor" in rt.err()
    assert not rt.aclCreateIntArray((c_int64 * 1)(1), 1)
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtSynchronizeStream:1:507015")
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION


def test_injected_phase2_fault_consumes_like_a_real_failure(rt, res, monkeypatch, fwd_setup):
    """An injected phase-2 failure is a phase-2 failure: a non-repeatable executor is gone,
    a repeatable one stays live."""
    f = fwd_setup
    execs = rt.count("executors")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1d:1:361001")
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.RUNTIME_ERROR
    assert rt.count("executors") == execs
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1d:1:361001,x:1:1")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.RUNTIME_ERROR
    assert rt.count("executors") == execs + 1
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))   # 2nd call runs
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected
    assert rt.count("pending_tasks") == 0


@pytest.mark.parametrize("sync", ["aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
                                  "aclrtSynchronizeDevice"])
def test_injected_sync_fault_discards_queued_work(rt, res, monkeypatch, fwd_setup, sync):
    """Like a real failed sync: the queued work is gone, nothing stale runs later."""
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("pending_tasks") == 1
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{sync}:1:507015")
    args = {"aclrtSynchronizeStream": (rt.stream,), "aclrtSynchronizeStreamWithTimeout": (rt.stream, -1),
            "aclrtSynchronizeDevice": ()}[sync]
    assert getattr(rt, sync)(*args) == sc.RT_AICORE_EXCEPTION
    assert rt.count("pending_tasks") == 0
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [0] * 5    # the kernel never ran


def test_fault_spec_malformed_entries_are_ignored(rt, monkeypatch, capfd):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "garbage,aclrtMalloc:0:1,aclrtMalloc:x:1,aclrtFree:1:207002")
    a = rt.malloc(8)
    assert "malformed ASCEND_SIM_FAULT" in capfd.readouterr().err
    assert rt.aclrtFree(a) == sc.RT_MEMORY_FREE
    rt.free(a)


REAL_SYMBOLS = sorted((ACL_SYMBOLS - {"aclsimLiveCount"}) | NNOPBASE_SYMBOLS | OP_SYMBOLS)


@pytest.mark.parametrize("name", REAL_SYMBOLS)
def test_every_exported_function_is_a_fault_point(rt, monkeypatch, name):
    """The fault fires at entry, before any argument is looked at (NULL/0 arguments)."""
    fn = getattr(rt, name)
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{name}:1:987654")
    def zero(t):  # 0 for integers, 0.0 for double, NULL for every pointer
        code = getattr(t, "_type_", None)
        return 0.0 if code == "d" else 0 if isinstance(code, str) and code in "bBhHiIlLqQ" else None

    args = [zero(t) for t in fn.argtypes]
    result = fn(*args)
    if fn.restype in (c_void_p, ctypes.c_char_p):
        assert result is None                     # pointer-returning functions give NULL
    else:
        assert result == 987654
    assert rt.err() == f"injected fault: call #1 of {name} fails with 987654 (ASCEND_SIM_FAULT)"
    monkeypatch.delenv("ASCEND_SIM_FAULT")


def test_mixed_builds_warn(sim_builds, run_script):
    """A path-loaded libnnopbase.so binds by soname to the libascendcl.so loaded first."""
    out = run_script("""
        import subprocess
        code = ("import ctypes,sys; d=sys.argv[1:]; ctypes.CDLL(d[0]+'/libascendcl.so'); "
                "ctypes.CDLL(d[1]+'/libascendcl.so'); ctypes.CDLL(d[1]+'/libnnopbase.so')")
        p = subprocess.run([sys.executable, "-c", code, os.environ["A"], os.environ["B"]],
                           capture_output=True, text=True, check=True)
        assert "two simulator builds are loaded in one process" in p.stderr, p.stderr
        p = subprocess.run([sys.executable, "-c", code, os.environ["B"], os.environ["B"]],
                           capture_output=True, text=True, check=True)
        assert p.stderr == "", p.stderr
    """, env={"A": str(sim_builds["cann8"]), "B": str(sim_builds["split"])})


# ---------------------------------------------------------------------------------------------
# operator checks, table-driven (order as in the real op_api)
# ---------------------------------------------------------------------------------------------

BWD_BASE = dict(g_shape=[2, 3, 4], g_dtype=F32, g_fmt=NCL, o_shape=[2, 3, 8], o_dtype=F32,
                o_fmt=NCL, osz=[4], isz=[2, 3, 8], scales=0.0)

# name: (changes to BWD_BASE, expected status, message fragment)
BWD_CASES = {
    "gradOutput NULL": (dict(g="NULL"), sc.PARAM_NULLPTR, "gradOutput is NULL"),
    "inputSize NULL": (dict(isz="NULL"), sc.PARAM_NULLPTR, "inputSize is NULL"),
    "out NULL": (dict(o="NULL"), sc.PARAM_NULLPTR, "out is NULL"),
    "outputSize NULL": (dict(osz="NULL"), sc.PARAM_NULLPTR, "outputSize is NULL"),
    "outputSize NULL after inputSize NULL": (dict(osz="NULL", isz="NULL"), sc.PARAM_NULLPTR,
                                             "inputSize is NULL"),
    "gradOutput destroyed": (dict(g="DEAD"), sc.INNER_NULLPTR, "gradOutput"),
    "outputSize is a tensor": (dict(osz="TENSOR"), sc.INNER_NULLPTR, "outputSize"),
    "inputSize destroyed": (dict(isz="DEAD"), sc.INNER_NULLPTR, "inputSize"),
    "out destroyed": (dict(o="DEAD"), sc.INNER_NULLPTR, "out"),
    "NULL beats dead handle": (dict(g="DEAD", o="NULL"), sc.PARAM_NULLPTR, "out is NULL"),
    "dtype int32": (dict(g_dtype=I32, o_dtype=I32), sc.PARAM_INVALID, "gradOutput dtype"),
    "dtype uint8": (dict(g_dtype=U8, o_dtype=U8), sc.PARAM_INVALID, "gradOutput dtype"),
    "dtype double": (dict(g_dtype=sc.ACL_DOUBLE, o_dtype=sc.ACL_DOUBLE), sc.PARAM_INVALID,
                     "gradOutput dtype"),
    "out dtype differs": (dict(o_dtype=F16), sc.PARAM_INVALID, "out dtype"),
    "dtype before rank": (dict(g_dtype=I32, o_dtype=I32, g_shape=[2, 3]), sc.PARAM_INVALID,
                          "gradOutput dtype"),
    "formats differ": (dict(g_fmt=ND), sc.PARAM_INVALID, "must be equal"),
    "format NCHW": (dict(g_fmt=sc.FMT_NCHW, o_fmt=sc.FMT_NCHW), sc.PARAM_INVALID, "format must be"),
    "format FRACTAL_NZ": (dict(g_fmt=sc.FMT_FRACTAL_NZ, o_fmt=sc.FMT_FRACTAL_NZ), sc.PARAM_INVALID,
                          "format must be"),
    "gradOutput 2-D": (dict(g_shape=[2, 3]), sc.PARAM_INVALID, "gradOutput must be 3-D"),
    "gradOutput 4-D": (dict(g_shape=[2, 3, 4, 1]), sc.PARAM_INVALID, "gradOutput must be 3-D"),
    "out 4-D": (dict(o_shape=[2, 3, 8, 1]), sc.PARAM_INVALID, "out must be 3-D"),
    "inputSize len 2": (dict(isz=[3, 8]), sc.PARAM_INVALID, "inputSize must have 3 elements"),
    "outputSize len 2": (dict(osz=[4, 4]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "outputSize len 0": (dict(osz=[]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "N differs": (dict(o_shape=[1, 3, 8], isz=[1, 3, 8]), sc.PARAM_INVALID, "same N and C"),
    "C differs": (dict(o_shape=[2, 2, 8], isz=[2, 2, 8]), sc.PARAM_INVALID, "same N and C"),
    "N/C before scales": (dict(o_shape=[1, 3, 8], scales=-1.0), sc.PARAM_INVALID, "same N and C"),
    "scales negative": (dict(scales=-0.5), sc.PARAM_INVALID, "scales must be >= 0"),
    "scales 51": (dict(scales=51.0, o_shape=[2, 3, 1], isz=[2, 3, 1]), sc.PARAM_INVALID,
                  "scales is too large"),
    "derived ratio 1/51": (dict(g_shape=[2, 3, 51], osz=[51], o_shape=[2, 3, 1], isz=[2, 3, 1]),
                           sc.PARAM_INVALID, "scales is too large"),
    "L=0 derived: ratio check first": (dict(g_shape=[2, 3, 0]), sc.PARAM_INVALID,
                                       "scales is too large"),
    "L=0 with scales": (dict(g_shape=[2, 3, 0], scales=2.0), sc.PARAM_INVALID,
                        "gradOutput dims N, C, L must all be > 0"),
    "N=0": (dict(g_shape=[0, 3, 4], o_shape=[0, 3, 8], isz=[0, 3, 8]), sc.PARAM_INVALID,
            "must all be > 0"),
    "inputSize[2]=0": (dict(isz=[2, 3, 0], scales=2.0), sc.PARAM_INVALID, "inputSize[2] must be > 0"),
    "out L differs from inputSize": (dict(isz=[2, 3, 9]), sc.PARAM_INVALID, "must equal inputSize"),
    "inputSize N/C differ from out": (dict(isz=[1, 3, 8]), sc.PARAM_INVALID, "must equal inputSize"),
}
BWD_OK = {
    "base": {},
    "ND format": dict(g_fmt=ND, o_fmt=ND),
    "fp16": dict(g_dtype=F16, o_dtype=F16),
    "bf16": dict(g_dtype=BF16, o_dtype=BF16),
    "scales 50 (limit)": dict(scales=50.0, o_shape=[2, 3, 1], isz=[2, 3, 1]),
    "derived ratio 1/50 (limit)": dict(g_shape=[2, 3, 50], osz=[50], o_shape=[2, 3, 1],
                                       isz=[2, 3, 1]),
    "outputSize value is not checked": dict(osz=[123]),
}


def _make_tensor_arg(rt, res, spec, shape, dtype, fmt):
    if spec == "NULL":
        return None
    if spec == "TENSOR":
        return res.tensor([1], F32, None, fmt=ND)
    numel = int(np.prod(shape)) if shape else 1
    ptr = res.dev(nbytes=max(numel, 1) * sc.ITEMSIZE[dtype])
    if spec == "DEAD":
        h = rt.tensor(shape, dtype, ptr, fmt=fmt)
        rt.ok(rt.aclDestroyTensor(h))
        return h
    return res.tensor(shape, dtype, ptr, fmt=fmt)


def _make_array_arg(rt, res, spec):
    if isinstance(spec, list):
        return res.ints(spec)
    if spec == "NULL":
        return None
    if spec == "TENSOR":
        return res.tensor([1], F32, None, fmt=ND)
    h = rt.int_array([1])
    rt.ok(rt.aclDestroyIntArray(h))
    return h


def _bwd_args(rt, res, changes):
    p = dict(BWD_BASE, **changes)
    g = _make_tensor_arg(rt, res, p.get("g"), p["g_shape"], p["g_dtype"], p["g_fmt"])
    o = _make_tensor_arg(rt, res, p.get("o"), p["o_shape"], p["o_dtype"], p["o_fmt"])
    osz = _make_array_arg(rt, res, p["osz"])
    isz = _make_array_arg(rt, res, p["isz"])
    return g, osz, isz, p["scales"], o


@pytest.mark.parametrize("case", list(BWD_CASES))
def test_backward_checks(rt, res, case):
    changes, status, fragment = BWD_CASES[case]
    args = _bwd_args(rt, res, changes)
    execs = rt.count("executors")
    rc, ws, ex = rt.bwd_prepare(*args)
    msg = rt.err()
    assert rc == status, msg
    assert msg.startswith("aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize: ")
    assert fragment in msg
    assert (ws, ex) == (12345, 0xDEAD0)                         # outputs untouched
    assert rt.count("executors") == execs                       # no executor created


@pytest.mark.parametrize("case", list(BWD_OK))
def test_backward_accepts(rt, res, case):
    rc, ws, ex = rt.bwd_prepare(*_bwd_args(rt, res, BWD_OK[case]))
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_backward_null_out_params(rt, res):
    g, osz, isz, scales, o = _bwd_args(rt, res, {})
    ws, ex = c_uint64(), c_void_p()
    f = rt.aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize
    assert f(g, osz, isz, scales, o, None, byref(ex)) == sc.PARAM_NULLPTR
    assert f(g, osz, isz, scales, o, byref(ws), None) == sc.PARAM_NULLPTR
    assert f(None, osz, isz, scales, o, None, None) == sc.PARAM_NULLPTR


FWD_BASE = dict(x_shape=[1, 3, 3], x_dtype=F32, x_fmt=NCL, o_shape=[1, 3, 5], o_dtype=F32,
                o_fmt=NCL, osz=[5], scales=0.0)
FWD_CASES = {
    "self NULL": (dict(x="NULL"), sc.PARAM_NULLPTR, "self is NULL"),
    "outputSize NULL": (dict(osz="NULL"), sc.PARAM_NULLPTR, "outputSize is NULL"),
    "out NULL": (dict(o="NULL"), sc.PARAM_NULLPTR, "out is NULL"),
    "self destroyed": (dict(x="DEAD"), sc.INNER_NULLPTR, "self"),
    "outputSize destroyed": (dict(osz="DEAD"), sc.INNER_NULLPTR, "outputSize"),
    "out is an array": (dict(o="ARRAY"), sc.INNER_NULLPTR, "out"),
    "dtype int32": (dict(x_dtype=I32, o_dtype=I32), sc.PARAM_INVALID, "self dtype"),
    "dtype int8": (dict(x_dtype=sc.ACL_INT8, o_dtype=sc.ACL_INT8), sc.PARAM_INVALID, "self dtype"),
    "out dtype differs": (dict(o_dtype=F16), sc.PARAM_INVALID, "out dtype"),
    "dtype before rank": (dict(x_dtype=I32, o_dtype=I32, osz=[5, 5]), sc.PARAM_INVALID, "self dtype"),
    "format NCHW": (dict(x_fmt=sc.FMT_NCHW), sc.PARAM_INVALID, "format must be"),
    "out format NCHW": (dict(o_fmt=sc.FMT_NCHW), sc.PARAM_INVALID, "format must be"),
    "self 2-D": (dict(x_shape=[3, 3]), sc.PARAM_INVALID, "self must be 3-D"),
    "self 4-D": (dict(x_shape=[1, 3, 3, 1]), sc.PARAM_INVALID, "self must be 3-D"),
    "outputSize len 2": (dict(osz=[5, 1]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "outputSize len 0": (dict(osz=[]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "C=0": (dict(x_shape=[1, 0, 3], o_shape=[1, 0, 5]), sc.PARAM_INVALID, "must all be > 0"),
    "L=0": (dict(x_shape=[1, 3, 0]), sc.PARAM_INVALID, "must all be > 0"),
    "outputSize 0": (dict(osz=[0], o_shape=[1, 3, 0]), sc.PARAM_INVALID, "outputSize[0] must be > 0"),
    "outputSize negative": (dict(osz=[-2]), sc.PARAM_INVALID, "outputSize[0] must be > 0"),
    "out L differs": (dict(o_shape=[1, 3, 6]), sc.PARAM_INVALID, "out must have shape [1, 3, 5]"),
    "out C differs": (dict(o_shape=[1, 2, 5]), sc.PARAM_INVALID, "out must have shape"),
    "out 2-D": (dict(o_shape=[3, 5]), sc.PARAM_INVALID, "out must have shape"),
}
FWD_OK = {
    "base": {},
    "ND": dict(x_fmt=ND, o_fmt=ND),
    "mixed NCL/ND": dict(x_fmt=ND),
    "fp16": dict(x_dtype=F16, o_dtype=F16),
    "bf16": dict(x_dtype=BF16, o_dtype=BF16),
    "uint8": dict(x_dtype=U8, o_dtype=U8),
    "negative scales are not checked": dict(scales=-3.0),
}


def _fwd_args(rt, res, changes):
    p = dict(FWD_BASE, **changes)
    x = _make_tensor_arg(rt, res, p.get("x"), p["x_shape"], p["x_dtype"], p["x_fmt"])
    if p.get("o") == "ARRAY":
        o = res.ints([1])
    else:
        o = _make_tensor_arg(rt, res, p.get("o"), p["o_shape"], p["o_dtype"], p["o_fmt"])
    return x, _make_array_arg(rt, res, p["osz"]), p["scales"], o


@pytest.mark.parametrize("case", list(FWD_CASES))
def test_forward_checks(rt, res, case):
    changes, status, fragment = FWD_CASES[case]
    args = _fwd_args(rt, res, changes)
    execs = rt.count("executors")
    rc, ws, ex = rt.fwd_prepare(*args)
    msg = rt.err()
    assert rc == status, msg
    assert msg.startswith("aclnnUpsampleNearestExact1dGetWorkspaceSize: ")
    assert fragment in msg
    assert (ws, ex) == (12345, 0xDEAD0)
    assert rt.count("executors") == execs


@pytest.mark.parametrize("case", list(FWD_OK))
def test_forward_accepts(rt, res, case):
    rc, ws, ex = rt.fwd_prepare(*_fwd_args(rt, res, FWD_OK[case]))
    assert rc == 0, rt.err()
    assert ws == 0                                   # contiguous input: no workspace
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_forward_null_out_params(rt, res):
    x, osz, scales, o = _fwd_args(rt, res, {})
    ws, ex = c_uint64(), c_void_p()
    f = rt.aclnnUpsampleNearestExact1dGetWorkspaceSize
    assert f(x, osz, scales, o, None, byref(ex)) == sc.PARAM_NULLPTR
    assert f(x, osz, scales, o, byref(ws), None) == sc.PARAM_NULLPTR


# ---------------------------------------------------------------------------------------------
# operator numerics (hand-computed from the A2/A3 kernel's float32 arithmetic)
# ---------------------------------------------------------------------------------------------

def test_forward_doc_example(rt, res):
    # self {1,3,3} -> out {1,3,5}, scales 0: s = 3/5, src(d) = floor((d+0.5)*0.6) = 0,0,1,2,2
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3)
    out, ws = run_fwd(rt, res, x, F32, 5)
    assert ws == 0
    assert out.tolist() == [[[1, 1, 2, 3, 3], [4, 4, 5, 6, 6], [7, 7, 8, 9, 9]]]


def test_forward_uint8(rt, res):
    x = np.array([[[10, 200, 255]]], np.uint8)
    out, _ = run_fwd(rt, res, x, U8, 5)
    assert out.tolist() == [[[10, 10, 200, 255, 255]]]


def test_forward_scales_use_reciprocal(rt, res):
    # Lin=4 -> Lout=3. scales=0.5: s = 1/0.5 = 2, src = floor(1, 3, 5) -> 1, 3, 3 (clamped)
    # scales=0 (derived): s = 4/3, src = floor(0.67, 2, 3.33) -> 0, 2, 3
    x = np.array([[[10, 11, 12, 13]]], np.float32)
    assert run_fwd(rt, res, x, F32, 3, scales=0.5)[0].tolist() == [[[11, 13, 13]]]
    assert run_fwd(rt, res, x, F32, 3, scales=0.0)[0].tolist() == [[[10, 12, 13]]]


def test_forward_fp16_bf16_bits_are_copied_exactly(rt, res):
    # a gather: every bit pattern (incl. NaN payloads, -0, subnormals) passes unchanged
    h = np.array([[[0x7E01, 0x8000, 0x0001]]], np.uint16)
    out, _ = run_fwd(rt, res, h, F16, 5)
    assert out.view(np.uint16).tolist() == [[[0x7E01, 0x7E01, 0x8000, 0x0001, 0x0001]]]
    b = np.array([[[0x7FC1, 0x3F80, 0xFF80]]], np.uint16)
    out, _ = run_fwd(rt, res, b, BF16, 5)
    assert out.tolist() == [[[0x7FC1, 0x7FC1, 0x3F80, 0xFF80, 0xFF80]]]


def test_backward_doc_example(rt, res):
    # gradOutput {1,1,2} -> out {1,1,4}, scales 0.5: s = 0.5,
    # lo/hi(i) = ceil(i*0.5 - 0.5): i0 [0,0) i1 [0,1) i2 [1,1) i3 [1,2)
    g = np.array([[[1, 2]]], np.float32)
    out, ws = run_bwd(rt, res, g, F32, 4, scales=0.5)
    assert ws == 0
    assert out.tolist() == [[[0, 1, 0, 2]]]


def test_backward_tie_goes_to_lower_index(rt, res):
    # Lin=26, Lout=7: exact mapping i = floor((l+0.5)*26/7) = 1, 5, 9, 13, 16, 20, 24, but at the
    # exact tie l=3 the fp32 formula gives 12: fp32(7/26)*13 - 0.5 = 3.0000002 -> ceil 4 = lo(13).
    g = (2.0 ** np.arange(7)).astype(np.float32).reshape(1, 1, 7)
    out, _ = run_bwd(rt, res, g, F32, 26)
    expected = np.zeros(26, np.float32)
    for l, i in enumerate([1, 5, 9, 12, 16, 20, 24]):
        expected[i] = 2.0 ** l
    assert out.reshape(-1).tolist() == expected.tolist()


def test_backward_inconsistent_scales_drop_gradient(rt, res):
    # Lin=4, Lout=3, scales=0.5: i0 [0,0) i1 [0,1) i2 [1,1) i3 [1,2) -> grad position 2 is lost
    g = np.array([[[1, 2, 3]]], np.float32)
    out, _ = run_bwd(rt, res, g, F32, 4, scales=0.5)
    assert out.tolist() == [[[0, 1, 0, 2]]]


def test_backward_identity_and_sum(rt, res):
    # scales=1 -> identity map even though Lin > Lout: [g0, g1, g2, 0, 0]
    g = np.array([[[1, 2, 3]]], np.float32)
    assert run_bwd(rt, res, g, F32, 5, scales=1.0)[0].tolist() == [[[1, 2, 3, 0, 0]]]
    # Lin=2, Lout=4 (derived s=2): i0 [0,2) i1 [2,4)
    g = np.array([[[1, 2, 4, 8]], [[16, 32, 64, 128]]], np.float32)
    assert run_bwd(rt, res, g, F32, 2)[0].tolist() == [[[3, 12]], [[48, 192]]]


def test_backward_fp16_accumulates_in_fp32(rt, res):
    # Lin=1, Lout=3: everything sums into one element. 1 + 2^-11 + 2^-11 = 1 + 2^-10 = 0x3C01;
    # an fp16 accumulator would round 1 + 2^-11 (a tie) to 1.0 twice and give 0x3C00.
    g = f16_bits([[[1.0, 2.0 ** -11, 2.0 ** -11]]])
    out, ws = run_bwd(rt, res, g, F16, 1)
    out = out.view(np.uint16)
    assert ws == 1 * 1 * 1 * 4                        # N*C*Lin fp32 accumulators
    assert out.tolist() == [[[0x3C01]]]
    # ties round to even: 1 + 2^-11 -> 0x3C00; (1 + 2^-10) + 2^-11 -> 0x3C02
    def bits(values):
        return run_bwd(rt, res, f16_bits([[values]]), F16, 1)[0].view(np.uint16).tolist()

    assert bits([1.0, 2.0 ** -11]) == [[[0x3C00]]]
    assert bits([1.0 + 2.0 ** -10, 2.0 ** -11]) == [[[0x3C02]]]
    # overflow to inf, NaN propagates
    assert bits([65504.0, 65504.0]) == [[[0x7C00]]]
    nan = run_bwd(rt, res, f16_bits([[[np.nan, 1.0]]]), F16, 1)[0].reshape(-1)
    assert np.isnan(nan[0])


def test_backward_bf16_round_to_nearest_even(rt, res):
    # 1 + 2^-8 is halfway between 1.0 (0x3F80, even) and 1.0078125 (0x3F81) -> 0x3F80
    # 1 + 2^-8 + 2^-7 = 1.01171875 is halfway between 0x3F81 and 0x3F82 (even) -> 0x3F82
    out, ws = run_bwd(rt, res, sc.bf16_bits([[[1.0, 2.0 ** -8]]]), BF16, 1)
    assert ws == 4
    assert out.tolist() == [[[0x3F80]]]
    out, _ = run_bwd(rt, res, sc.bf16_bits([[[1.0, 2.0 ** -8, 2.0 ** -7]]]), BF16, 1)
    assert out.tolist() == [[[0x3F82]]]
    # Lin=2, Lout=4 sums pairs: (1+2) = 3 -> 0x4040, (0.5+0.25) = 0.75 -> 0x3F40
    out, ws = run_bwd(rt, res, sc.bf16_bits([[[1, 2, 0.5, 0.25]]]), BF16, 2)
    assert ws == 2 * 4
    assert out.tolist() == [[[0x4040, 0x3F40]]]


def test_forward_non_contiguous_input_and_output(rt, res):
    # self: view [1,3,3] of a [3,8] buffer, element (c, l) at c*8 + 1 + 2*l (offset 1, stride 2)
    buf = np.arange(24, dtype=np.float32)
    xp = res.dev(buf)
    xt = res.tensor([1, 3, 3], F32, xp, strides=[24, 8, 2], offset=1, storage=[24])
    # out: [1,3,5] stored transposed, element (c, d) at d*3 + c
    outp = res.dev(np.zeros(15, np.float32))
    ot = res.tensor([1, 3, 5], F32, outp, strides=[15, 1, 3], storage=[15])
    rc, ws, ex = rt.fwd_prepare(xt, res.ints([5]), 0.0, ot)
    assert rc == 0
    assert ws == 3 * 3 * 4                            # contiguous copy of self in the workspace
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnUpsampleNearestExact1d(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    stored = rt.download(outp, 15, np.float32)
    # gather map 0,0,1,2,2; self(c, l) = c*8 + 1 + 2*l
    for c in range(3):
        for d, l in enumerate([0, 0, 1, 2, 2]):
            assert stored[d * 3 + c] == c * 8 + 1 + 2 * l
    # the contiguous copy really went through the workspace
    assert rt.download(wsp, 9, np.float32).tolist() == [1, 3, 5, 9, 11, 13, 17, 19, 21]


def test_backward_non_contiguous_fp16(rt, res):
    # gradOutput [1,2,2]: element (c, l) at l*2 + c of a 4-element buffer (transposed)
    buf = f16_bits([1, 10, 2, 20])                    # (0,0)=1 (1,0)=10 (0,1)=2 (1,1)=20
    gt = res.tensor([1, 2, 2], F16, res.dev(buf), strides=[4, 1, 2], storage=[4])
    outp = res.dev(nbytes=2 * 4 * 2 * 2)              # out [1,2,4] inside an [8, 2] buffer
    ot = res.tensor([1, 2, 4], F16, outp, strides=[16, 8, 2], storage=[16])
    rc, ws, ex = rt.bwd_prepare(gt, res.ints([2]), res.ints([1, 2, 4]), 0.0, ot)
    assert rc == 0, rt.err()
    assert ws == 32 + 8                               # 1*2*4 fp32 accumulators + copy of 4 fp16
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    stored = rt.download(outp, 16, np.uint16)
    # Lin=4, Lout=2, s=0.5: i0 [0,0) i1 [0,1) i2 [1,1) i3 [1,2)
    expect_c0, expect_c1 = [0, 1, 0, 2], [0, 10, 0, 20]
    assert stored[0:8:2].view(np.float16).tolist() == expect_c0
    assert stored[8:16:2].view(np.float16).tolist() == expect_c1
    assert stored[1::2].tolist() == [0xFFFF] * 8      # gaps between strided elements untouched
    acc = rt.download(wsp, 8, np.float32)             # the fp32 accumulators in the workspace
    assert acc.tolist() == expect_c0 + expect_c1


def test_backward_workspace_is_accumulators_plus_copy(rt, res):
    # bf16, N*C*Lin = 1*1*3 -> 12 bytes of fp32 accumulators, + 1*1*2 bf16 copy = 4 bytes -> 16
    g = sc.bf16_bits([1.0, 0.0, 2.0, 0.0])            # gradOutput (1,1,2) with stride 2 -> [1, 2]
    gt = res.tensor([1, 1, 2], BF16, res.dev(g), strides=[4, 4, 2], storage=[4])
    outp = res.dev(nbytes=6)
    ot = res.tensor([1, 1, 3], BF16, outp)
    rc, ws, ex = rt.bwd_prepare(gt, res.ints([2]), res.ints([1, 1, 3]), 0.0, ot)
    assert rc == 0, rt.err()
    assert ws == 12 + 4
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    # Lin=3, Lout=2, s=2/3: lo = ceil(i*0.6667 - 0.5) = 0, 1, 1, 2 -> i0 {0}, i1 {}, i2 {1}
    assert sc.bf16_to_float(rt.download(outp, 3, np.uint16)).tolist() == [1.0, 0.0, 2.0]


def test_backward_non_contiguous_fp32_workspace(rt, res):
    g = np.arange(8, dtype=np.float32)
    gt = res.tensor([1, 2, 2], F32, res.dev(g), strides=[8, 4, 2], storage=[8])  # every other
    ot = res.tensor([1, 2, 4], F32, res.dev(nbytes=32))
    rc, ws, ex = rt.bwd_prepare(gt, res.ints([2]), res.ints([1, 2, 4]), 0.0, ot)
    assert rc == 0
    assert ws == 1 * 2 * 2 * 4                        # copy only, no accumulators for fp32
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
