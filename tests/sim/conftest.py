"""Fixtures shared by the simulator's tests (tests/sim).

sim_builds builds both layouts once; simlib loads one build into this process,
initialised with device 0 and a stream; rt wraps each test with a leak check through
aclsimLiveCount; res tracks and releases what a test creates; in_thread runs code in a
fresh thread; run_script runs code in a fresh interpreter (for what needs one: init and
finalize codes, counters from zero, another library layout).
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import platform
import subprocess
import sys
import textwrap
import threading

import pytest

from . import sim_ctypes as sc
from .expected import native_build
from conftest import shared_build

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture(scope="session")
def sim_builds(tmp_path_factory):
    """Both layouts, as the default release (build.py's: $ASCEND_SIM_CANN_VERSION, else
    the newest), so the whole of tests/sim can be run against either profile."""
    try:
        return {layout: shared_build(layout) for layout in ("cann8", "split")}
    except native_build.CompilerNotFound as exc:
        if os.environ.get("ASCEND_ACLNN_REQUIRE_SIMULATOR") == "1":
            raise
        pytest.skip(f"no C compiler: the simulator tests need cc ({str(exc).splitlines()[0]})")


@pytest.fixture(scope="session")
def profile_builds(tmp_path_factory, sim_builds):
    """The cann8 layout built as every release in build.py's PROFILES: version -> lib
    directory. The default release's is sim_builds' own."""
    return {v: shared_build("cann8", cann_version=v) for v in native_build.PROFILES}


def built_version(libdir) -> str:
    """The release a build records: version= of <prefix>/<arch>-linux/ascend_toolkit_install.info
    (libdir is <prefix>/lib64 or <prefix>/<arch>-linux/lib64)."""
    up = pathlib.Path(libdir).parent
    info = next(p for p in (up / "ascend_toolkit_install.info",
                            up / f"{platform.machine()}-linux" / "ascend_toolkit_install.info") if p.exists())
    return dict(line.split("=", 1) for line in info.read_text().splitlines())["version"]


@pytest.fixture(scope="module")
def profile(simlib):
    """The release of the simulator loaded in this process."""
    return built_version(simlib.libdir)


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
    (simlib.stream). Module-scoped: the stream and the device reference go at the end of
    each module. ACL itself stays initialised for the rest of the process and is never
    finalized here: under 8.1.RC1 aclFinalize is final (a later aclInit fails), and a
    later user of the runtime in this process (the binding's tests) gets 100002 from its
    aclInit, as beside a host framework."""
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
    s = sc.Sim(libdir)  # every operator library of the build
    rc = s.aclInit(None)
    assert rc in (0, sc.ACL_ERROR_REPEAT_INITIALIZE), s.err()
    s.ok(s.aclrtSetDevice(0), "aclrtSetDevice")
    stream = ctypes.c_void_p()
    s.ok(s.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")
    s.stream = stream.value
    yield s
    s.aclrtDestroyStream(s.stream)
    s.aclrtResetDevice(0)


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

    def close(self, strict: bool = False):
        """Destroy and free everything tracked. strict: each call must succeed (the test
        then also asserts its tensors and arrays were still live, and its memory still
        allocated, at its end)."""
        check = self.s.ok if strict else (lambda rc, what="": rc)
        for e in self.execs:
            self.s.aclDestroyAclOpExecutor(e)  # repeatable ones only; others are already dead
        for t in self.tensors:
            check(self.s.aclDestroyTensor(t), "aclDestroyTensor")
        for a in self.arrays:
            check(self.s.aclDestroyIntArray(a), "aclDestroyIntArray")
        check(self.s.aclrtSynchronizeStream(self.s.stream), "aclrtSynchronizeStream")
        for p in self.ptrs:
            check(self.s.aclrtFree(p), "aclrtFree")
        self.execs, self.tensors, self.arrays, self.ptrs = [], [], [], []
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
        # sim_ctypes takes the operators' prototypes from this worktree's ascend_aclnn
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), full_env.get("PYTHONPATH")]))
        full_env.update(env or {})
        proc = subprocess.run([sys.executable, str(script)], env=full_env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, (f"script failed ({proc.returncode})\n--- stdout\n"
                                      f"{proc.stdout}\n--- stderr\n{proc.stderr}")
        return proc.stdout

    return run

