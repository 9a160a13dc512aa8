"""Test fixtures: the CANN the npu tests run against, and the two backends.

By default that CANN is the simulator built from native/: it is built once per session
(before pytest-xdist starts its workers, which share it, as do the child pytest runs) into a
temporary prefix, and ASCEND_HOME_PATH is pointed at it before anything loads CANN, so the
npu backend runs exactly the code path it takes on an Atlas host. Other layouts and releases
are built once, when first needed (shared_build). One process can
hold one copy of the libraries, so the layout is chosen per process
(ASCEND_ACLNN_TEST_SIM_LAYOUT, default cann8); test_process.py runs the npu suite again in
a child process for the split layout.

Environment:
- ASCEND_ACLNN_TEST_CANN=real: run against the CANN installed on this host instead
  (ASCEND_HOME_PATH is kept). Tests that need the simulator's own hooks (its live-object
  counters, fault injection, device count, builds of other layouts and profiles) are
  skipped, each with the reason; everything else runs on the real NPU.
- Without a C compiler the simulator cannot be built: the tests that need it are skipped
  with the reason, unless ASCEND_ACLNN_REQUIRE_SIMULATOR=1 (CI sets it), which makes a
  missing compiler an error.
"""
from __future__ import annotations

import ctypes
import fcntl
import gc
import hashlib
import inspect
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional, Union

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "native"))
import build as sim_build  # noqa: E402  native/build.py

LAYOUT = os.environ.get("ASCEND_ACLNN_TEST_SIM_LAYOUT", "cann8")
REAL = os.environ.get("ASCEND_ACLNN_TEST_CANN", "simulator") == "real"
REQUIRE_SIMULATOR = os.environ.get("ASCEND_ACLNN_REQUIRE_SIMULATOR") == "1"
HANDLE_KINDS = ("tensors", "tensor_lists", "int_arrays", "float_arrays", "bool_arrays", "scalars",
                "scalar_lists", "executors", "pending_tasks", "device_allocations", "device_bytes", "events", "models")
# Source text that marks a test as needing the simulator's own hooks (see pytest_collection_modifyitems).
SIMULATOR_HOOKS = ("ASCEND_SIM_", "aclsim", "sim_build.", "shared_build(", "sim.lib_dir")
NEEDS_SIMULATOR = "needs the simulator's test hooks (counters, fault injection, device count or its builds)"
# A directory of simulator builds shared by every process of one test session: the pytest-xdist
# workers and the child pytest runs of test_process.py (see shared_build).
BUILDS = "ASCEND_ACLNN_TEST_BUILDS"


class Simulator:
    """The CANN under test: the built simulator with its live-object counters (a
    simulator-only export), or, with ASCEND_ACLNN_TEST_CANN=real, the host's CANN."""

    def __init__(self, prefix: Optional[Path], lib_dir: Optional[Path], real: bool = False):
        self.prefix, self.lib_dir, self.real = prefix, lib_dir, real
        self.lib = None
        if not real:
            self.lib = ctypes.CDLL(str(lib_dir / "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
            self.lib.aclsimLiveCount.restype = ctypes.c_int64
            self.lib.aclsimLiveCount.argtypes = [ctypes.c_char_p]

    def live(self, kind: str) -> int:
        if self.real:
            pytest.skip(f"{NEEDS_SIMULATOR}: CANN's live-object counters are a simulator export")
        n = self.lib.aclsimLiveCount(kind.encode())
        assert n >= 0, f"simulator does not know the counter {kind!r}"
        return n

    def leaks(self) -> dict[str, int]:
        """Live handles and device memory; {} on a real host, which has no such counters."""
        if self.real:
            return {}
        known = [k for k in HANDLE_KINDS if self.lib.aclsimLiveCount(k.encode()) >= 0]
        return {k: n for k in known if (n := self.live(k))}


def shared_build(layout: str = "cann8", cann_version: Optional[str] = None) -> Path:
    """The lib64 directory of a simulator build that tests only read: built once per session,
    layout, release and compiler by whichever process asks first, while the others wait on
    its lock and reuse it (a build is ~8 s of one core, and a session needs a handful).
    Tests that change a prefix, or build it another way, call sim_build.build themselves."""
    root = Path(os.environ.get(BUILDS) or _builds_dir())
    version = cann_version or sim_build.default_version()
    compiler = os.environ.get("CC") or "cc"  # a test without a compiler must not find one's build
    key = f"{layout}-{version}-{hashlib.sha256(compiler.encode()).hexdigest()[:12]}"
    prefix, marker = root / key, root / f"{key}.built"
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            return Path(marker.read_text())
        shutil.rmtree(prefix, ignore_errors=True)  # what a process killed mid-build left
        lib_dir = Path(sim_build.build(prefix, layout=layout, cann_version=version))
        marker.write_text(str(lib_dir))
        return lib_dir


_OWN_BUILDS: list[str] = []  # the directory this process made, removed when its session ends


def _builds_dir() -> str:
    path = tempfile.mkdtemp(prefix="ascend-aclnn-test-builds-")
    os.environ[BUILDS] = path  # inherited by the xdist workers and every child process
    _OWN_BUILDS.append(path)
    return path


def pytest_sessionstart(session):
    """Build the simulator before the tests start (and before pytest-xdist starts its workers,
    which inherit it), saying so: otherwise the first seconds of a run look like a hang."""
    if REAL or hasattr(session.config, "workerinput") or os.environ.get(BUILDS):
        return
    _builds_dir()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    what = f"the CANN simulator (native/, {LAYOUT} layout, CANN {sim_build.default_version()})"
    if reporter is not None:
        reporter.write_line(f"building {what} for the npu tests; other layouts and releases are built "
                            "when a test first needs them ...")
    try:
        shared_build(LAYOUT)
    except sim_build.CompilerNotFound:
        pass  # _cann_under_test says what that means for the run
    except Exception as exc:
        if reporter is not None:
            reporter.write_line(f"building {what} failed: {exc}")


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        for path in _OWN_BUILDS:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _cann_under_test(tmp_path_factory) -> Union[Simulator, str]:
    """The CANN the npu tests use, set up before anything loads one; a str says why there
    is none (no compiler)."""
    if REAL:
        home = os.environ.get("ASCEND_HOME_PATH")
        return Simulator(Path(home) if home else None, None, real=True)
    try:
        lib_dir = shared_build(LAYOUT)
    except sim_build.CompilerNotFound as exc:
        if REQUIRE_SIMULATOR:
            raise RuntimeError(f"ASCEND_ACLNN_REQUIRE_SIMULATOR=1 but the simulator cannot be built: {exc}") from exc
        # an empty prefix: nothing real is picked up by accident
        os.environ["ASCEND_HOME_PATH"] = str(tmp_path_factory.mktemp(f"cann-sim-{LAYOUT}"))
        return f"no C compiler: the simulator tests need cc ({str(exc).splitlines()[0]})"
    prefix = lib_dir.parent
    os.environ["ASCEND_HOME_PATH"] = str(prefix)
    for key in ("ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH", "ASCEND_ACLNN_HEADERS",
                "ASCEND_ACLNN_CANN_VERSION"):
        os.environ.pop(key, None)  # a developer's environment adds nothing to what the tests use
    return Simulator(prefix, Path(lib_dir))


@pytest.fixture(scope="session")
def sim(_cann_under_test) -> Simulator:
    if isinstance(_cann_under_test, str):
        pytest.skip(_cann_under_test)
    return _cann_under_test


# The fast tier (python -m pytest -m quick, about a minute): every described operator on both
# backends against its reference, with its error cases, chains and plans, and the array and
# backend basics. What it leaves to the full run: the simulator's own tests, other layouts and
# releases, fuzzing, faults, threads, processes, typing and tools.
QUICK = ("test_ops.py", "test_spec.py", "test_backends.py", "test_device_array.py", "test_plans.py", "test_pad.py",
         "test_im2col.py", "test_max_pool.py", "test_conveniences.py")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """One worker per core when pytest-xdist is installed and -n is not given (each test
    scheduled on its own, so one slow test does not hold back a file's others); without
    xdist the suite runs in one process. Runs before xdist's own hook, which reads these."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.option.numprocesses is None and not config.option.distload and config.option.dist == "no":
        config.option.numprocesses, config.option.dist = "auto", "worksteal"


def pytest_ignore_collect(collection_path, config):
    """Under -m quick, the modules outside the tier are not collected at all: their
    collection-time skips (torch or a compiler missing) would read as quick tests skipped."""
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_") \
            and collection_path.name not in QUICK and _selects_only_quick(config.option.markexpr):
        return True
    return None


def _selects_only_quick(markexpr: str) -> bool:
    """Whether the -m expression is false for every test without the quick mark."""
    if not markexpr:
        return False
    try:
        from _pytest.mark.expression import Expression
        expression = Expression.compile(markexpr)
        try:
            return not expression.evaluate(lambda name, **kwargs: name != "quick")
        except TypeError:  # pytest < 8.3 calls the matcher with the name only
            return not expression.evaluate(lambda name: name != "quick")
    except Exception:  # a private API: if it moves, everything is collected as before
        return False


def pytest_configure(config):
    config.addinivalue_line("markers", f"simulator: {NEEDS_SIMULATOR}; skipped with ASCEND_ACLNN_TEST_CANN=real")
    config.addinivalue_line("markers", "quick: the fast tier a user runs first (python -m pytest -m quick)")


def pytest_collection_finish(session):
    """What collection built (modules, parameters, op_db's samples) lives for the whole
    session: frozen, the collector of the tests that call it never scans it again."""
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(config, items):
    """Mark the fast tier; on a real host, skip the tests that use the simulator's own hooks,
    with the reason."""
    for item in items:
        if Path(str(item.fspath)).name in QUICK:
            item.add_marker(pytest.mark.quick)
    if not REAL:
        return
    for item in items:
        path = Path(str(item.fspath))
        try:
            source = inspect.getsource(item.function)
        except (OSError, TypeError):
            source = ""
        if "sim" in path.parent.parts[-1:] or item.get_closest_marker("simulator") \
                or any(h in source for h in SIMULATOR_HOOKS):
            item.add_marker(pytest.mark.skip(reason=f"{NEEDS_SIMULATOR} (ASCEND_ACLNN_TEST_CANN=real)"))


def assert_no_leaks(sim: Simulator) -> None:
    """Nothing the test made is still live once its garbage is gone. The collector runs only
    when something is live: a full collection of the session's heap costs far more than the
    test (most tests free everything by reference counting), and collecting can only free
    more, so a clean first look is the same verdict."""
    import ascend_aclnn
    for collect in (False, True):
        if collect:
            gc.collect()
        ascend_aclnn.synchronize()
        ascend_aclnn.empty_cache()
        leaks = sim.leaks()
        if not leaks:
            return
    assert leaks == {}, "handles or device memory outlived the test"


@pytest.fixture
def npu(sim):
    """Run the test on the npu backend (against the simulator), then check for leaks."""
    import ascend_aclnn
    with ascend_aclnn.use_backend("npu"):
        yield "npu"
    assert_no_leaks(sim)


@pytest.fixture
def device_lags(monkeypatch):
    """The device does not move while the host polls: the simulator's queries run nothing
    (ASCEND_SIM_QUERY_PROGRESS=0), so work queued on a stream stays queued until a sync, as
    on a busy NPU, and a test of an ordering rule sees the race it claims to catch. Harmless
    on a real host, whose device races for real."""
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", "0")


@pytest.fixture
def numpy_backend():
    import ascend_aclnn
    with ascend_aclnn.use_backend("numpy"):
        yield "numpy"


@pytest.fixture(params=["numpy", "npu"])
def backend(request):
    """Each test using this runs once per backend."""
    yield request.getfixturevalue("numpy_backend" if request.param == "numpy" else "npu")


def run_python(code: str, sim: Simulator | None = None, **env_updates: str | None):
    """Run code in a fresh interpreter (CANN can be loaded once per process)."""
    import subprocess
    env = dict(os.environ)
    for key in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH",
                "ASCEND_ACLNN_HEADERS", "ASCEND_ACLNN_BACKEND",
                "ASCEND_SIM_FAULT", "ASCEND_ACLNN_TEST_SIM_LAYOUT"):
        env.pop(key, None)
    if sim is not None:
        env["ASCEND_HOME_PATH"] = str(sim.prefix)
    for key, value in env_updates.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")] + env.get("PYTHONPATH", "").split(os.pathsep))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """PyTorch is optional (the README's test command does not install it): a test whose call
    reaches a CPU reference that runs on PyTorch, on a machine without it, is skipped with the
    package's own one-line reason. Where PyTorch is installed (CI's main run) every such test
    runs; the message is the package's, so nothing else is turned into a skip."""
    try:
        return (yield)
    except ModuleNotFoundError as exc:
        from ascend_aclnn.cpu_reference import _torch
        if "runs on PyTorch, which is not installed" in str(exc) and not _torch.available():
            pytest.skip(str(exc).splitlines()[0])
        raise
