"""Behaviour that needs a fresh process: library discovery, backend choice without CANN,
several devices, custom operator packages, the split layout, and shutdown."""
from __future__ import annotations

import importlib.util
import os
import platform
import re
import subprocess
import sys
import textwrap

import pytest

import build as sim_build
from conftest import LAYOUT, ROOT, run_python

RUN_FORWARD = textwrap.dedent("""
    import numpy as np, ascend_aclnn
    from ascend_aclnn.cann.loader import get_cann
    y = ascend_aclnn.upsample_nearest_exact1d(np.arange(3, dtype=np.float32).reshape(1, 1, 3), [5])
    assert y.tolist() == [[[0, 0, 1, 2, 2]]], y
    print("backend", ascend_aclnn.get_backend(), "lib_dir", get_cann().lib_dir)
""")


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_auto_backend_without_cann_uses_numpy_and_npu_request_explains(tmp_path):
    out = ok(run_python(RUN_FORWARD.replace("get_cann().lib_dir", "None"),
                        ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH=""))
    assert "backend numpy" in out
    result = run_python("import ascend_aclnn; ascend_aclnn.set_backend('npu')",
                        ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="")
    assert result.returncode != 0
    assert "CannLoadError" in result.stderr and str(tmp_path / "lib64") in result.stderr
    assert "set_env.sh" in result.stderr and "ASCEND_HOME_PATH" in result.stderr


def test_env_npu_without_cann_fails_at_first_use_not_import(tmp_path):
    result = run_python("import ascend_aclnn\nprint('imported')\nascend_aclnn.upsample_nearest_exact1d([[[1.0]]], [2])",
                        ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="", ASCEND_ACLNN_BACKEND="npu")
    assert result.stdout.strip() == "imported" and "CannLoadError" in result.stderr


def test_auto_backend_finds_the_simulator(sim):
    assert f"backend npu lib_dir {sim.lib_dir}" in ok(run_python(RUN_FORWARD, sim))


def test_toolkit_home_and_linker_path_fallbacks(sim):
    assert "backend npu" in ok(run_python(RUN_FORWARD, None, ASCEND_TOOLKIT_HOME=str(sim.prefix)))
    out = ok(run_python(RUN_FORWARD, None, LD_LIBRARY_PATH=str(sim.lib_dir)))
    assert "backend npu lib_dir None" in out  # found by the dynamic linker, not by a root


def test_arch_subdirectory_layout(tmp_path, sim):
    lib_dir = sim_build.build(tmp_path, layout=LAYOUT, arch_subdir=True)
    assert not (tmp_path / "lib64").exists()
    out = ok(run_python(RUN_FORWARD, None, ASCEND_HOME_PATH=str(tmp_path)))
    assert f"lib_dir {tmp_path / (platform.machine() + '-linux') / 'lib64'}" in out, (out, lib_dir)


CUSTOM_OP = r"""
#include <stdint.h>
__attribute__((visibility("default")))
int32_t aclnnUpsampleNearestExact1dGetWorkspaceSize(const void *self, const void *outputSize, double scales,
        void *out, uint64_t *workspaceSize, void **executor) {
    (void)self; (void)outputSize; (void)scales; (void)out; (void)workspaceSize; (void)executor;
    return 561000; /* a custom package's build of the op, recognisable by its status */
}
__attribute__((visibility("default")))
int32_t aclnnUpsampleNearestExact1d(void *ws, uint64_t size, void *executor, void *stream) {
    (void)ws; (void)size; (void)executor; (void)stream; return 0;
}
"""


def test_custom_operator_package_takes_precedence(sim, tmp_path):
    lib = tmp_path / "vendor" / "op_api" / "lib" / "libcust_opapi.so"
    lib.parent.mkdir(parents=True)
    (tmp_path / "custom.c").write_text(CUSTOM_OP)
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "custom.c")],
                   check=True)
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn
        from ascend_aclnn.cann.loader import get_cann
        try:
            ascend_aclnn.upsample_nearest_exact1d(np.ones((1, 1, 3), np.float32), [5])
        except ascend_aclnn.AclnnError as e:
            print("status", e.status)
        g = ascend_aclnn.upsample_nearest_exact1d_backward(np.ones((1, 1, 4), np.float32), [4], [1, 1, 2])
        print("backward", g.tolist(), get_cann().operator_sources)
    """)
    out = ok(run_python(code, sim, ASCEND_CUSTOM_OPP_PATH=f"/nonexistent:{tmp_path / 'vendor'}"))
    assert "status 561000" in out
    assert "backward [[[2.0, 2.0]]]" in out and "libcust_opapi.so" in out


def test_second_device(sim):
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn
        assert ascend_aclnn.device_count() == 2
        ascend_aclnn.set_device(1)
        d = ascend_aclnn.to_device(np.arange(3, dtype=np.float32).reshape(1, 1, 3))
        y = ascend_aclnn.upsample_nearest_exact1d(d, [5])
        assert (y.device, y.numpy().tolist()) == (1, [[[0, 0, 1, 2, 2]]])
        ascend_aclnn.set_device(0)
        try:
            ascend_aclnn.upsample_nearest_exact1d(d, [5])
        except ascend_aclnn.DeviceMismatchError as e:
            print("mismatch:", e)
    """)
    assert "mismatch: input: this DeviceArray lives on npu:1" in ok(run_python(code, sim, ASCEND_SIM_DEVICE_COUNT="2"))


def test_clean_shutdown_with_live_device_arrays(sim):
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn
        from ascend_aclnn.backends.npu import runtime
        keep = ascend_aclnn.upsample_nearest_exact1d(ascend_aclnn.to_device(np.ones((1, 2, 3), np.float32)), [7])
        pending = keep  # queued work and a live array at teardown
        import conftest_sim
        runtime.get_runtime().teardown()
        print("after teardown", conftest_sim.counts())
    """)
    helper = textwrap.dedent(f"""
        import ctypes
        lib = ctypes.CDLL({str(sim.lib_dir / 'libascendcl.so')!r})
        lib.aclsimLiveCount.restype = ctypes.c_int64
        lib.aclsimLiveCount.argtypes = [ctypes.c_char_p]
        def counts():
            return {{k: lib.aclsimLiveCount(k.encode()) for k in ("streams", "device_bytes", "pending_tasks")}}
    """)
    helper_dir = sim.prefix / "helper"
    helper_dir.mkdir(exist_ok=True)
    (helper_dir / "conftest_sim.py").write_text(helper)
    result = run_python(code, sim, PYTHONPATH=str(helper_dir))
    out = ok(result)
    assert "after teardown {'streams': 0, 'device_bytes': 0, 'pending_tasks': 0}" in out
    assert result.stderr == ""  # nothing raised or printed while the interpreter exits


def test_main_thread_works_after_workers_warmed_the_cache(sim):
    """Issue 5, defect 1: the main thread never called aclrtMalloc (every block came from
    the cache that worker threads filled), yet needs its own current device."""
    code = textwrap.dedent("""
        import threading, numpy as np, ascend_aclnn as aa
        x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
        kept = []
        def work():
            d = aa.to_device(x)
            kept.append(aa.upsample_nearest_exact1d(d, [4]))
            kept.append(aa.upsample_nearest_exact1d(x, [4]))
        for _ in range(2):
            t = threading.Thread(target=work); t.start(); t.join()
        y = aa.upsample_nearest_exact1d(x, [4])       # main thread: blocks from the cache
        assert (kept[0].numpy() == y).all() and (kept[1] == y).all()
        print("ok", aa.get_backend())
    """)
    assert "ok npu" in ok(run_python(code, sim))


def test_free_after_teardown_is_a_no_op(sim):
    """Issue 5, defect 10: freeing after teardown (e.g. from a __del__ at exit) is silent."""
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        from ascend_aclnn.backends.npu import runtime
        class Holder:
            def __del__(self):
                self.d.free()  # runs at exit, after the atexit teardown
        h = Holder()
        h.d = aa.upsample_nearest_exact1d(aa.to_device(np.ones((1, 2, 3), np.float32)), [5])
        d = aa.to_device(np.ones(4, np.float32))
        runtime.get_runtime().teardown()
        d.free()
        assert d.is_freed
        print("ok")
    """)
    result = run_python(code, sim)
    assert "ok" in ok(result)
    assert result.stderr == ""


def test_transient_init_failure_warns_once_and_says_why(sim):
    """Issue 5, defect 11: auto falls back to numpy after aclInit fails, but says so."""
    code = textwrap.dedent("""
        import warnings, numpy as np, ascend_aclnn as aa
        from ascend_aclnn import backends
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [3])
        print("backend", aa.get_backend())
        print("warnings", len(caught), caught[0].category.__name__)
        print("reason", backends.auto_backend_reason())
    """)
    out = ok(run_python(code, sim, ASCEND_SIM_FAULT="aclInit:1:500000"))
    assert "backend numpy" in out and "warnings 1 RuntimeWarning" in out
    assert "aclInit" in out and "500000" in out


@pytest.mark.simulator
def test_npu_suite_passes_on_the_split_layout(sim):
    """CANN >= 8.5 splits the operators into libopapi_*.so. A process can load one copy of
    the libraries, so the npu tests run again in a child process on that layout."""
    env = dict(os.environ, ASCEND_ACLNN_TEST_SIM_LAYOUT="split")
    env.pop("ASCEND_HOME_PATH", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "tests/test_ops.py", "tests/test_runtime.py", "tests/test_hardening.py",
                             "-k", "not numpy"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    tail = result.stdout[-3000:]
    assert result.returncode == 0, tail + result.stderr[-3000:]
    passed = re.search(r"(\d+) passed", tail)
    assert passed and int(passed.group(1)) > 100, tail  # 152 with test_hardening.py
    assert "skipped" not in tail and "failed" not in tail, tail


def _pytest(*args, **env_updates):
    env = dict(os.environ)
    env.pop("ASCEND_HOME_PATH", None)
    env.update(env_updates)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_without_a_compiler_the_simulator_tests_are_skipped_with_the_reason(sim):
    """A machine with no C compiler runs everything that does not need the simulator and
    reports the rest as skipped, saying why; CI makes a missing compiler an error."""
    env = {"CC": "/nonexistent/cc", "ASCEND_ACLNN_REQUIRE_SIMULATOR": "0"}
    result = _pytest("tests/test_backends.py", "tests/sim/test_build.py", **env)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "passed" in result.stdout and "no C compiler: the simulator tests need cc" in result.stdout
    result = _pytest("tests/test_backends.py", **dict(env, ASCEND_ACLNN_REQUIRE_SIMULATOR="1"))
    assert result.returncode != 0 and "ASCEND_ACLNN_REQUIRE_SIMULATOR=1" in result.stdout, result.stdout[-2000:]


def test_real_host_mode_skips_only_the_simulator_hooks(sim):
    """ASCEND_ACLNN_TEST_CANN=real keeps ASCEND_HOME_PATH (here pointing at a simulator
    build standing in for a host's CANN) and skips the tests that need simulator hooks."""
    result = _pytest("tests/test_runtime.py", "tests/test_faults.py", "-n", "0", "-vv", "-rs", "-k", "round_trip or "
                     "phase1_failure or every_call_site", ASCEND_ACLNN_TEST_CANN="real",
                     ASCEND_HOME_PATH=str(sim.prefix))
    assert result.returncode == 0, result.stdout[-2000:]
    outcomes: dict[str, set[str]] = {}
    for line in result.stdout.splitlines():
        m = re.match(r"(tests/\S+?)::(test_\w+)(\[\S*\])? (PASSED|SKIPPED|FAILED|ERROR|XFAIL|XPASS)", line)
        if m:
            outcomes.setdefault(m.group(4), set()).add(f"{m.group(1)}::{m.group(2)}")
    # what runs on a real host: the round trip; what needs hooks (a fault injected through
    # ASCEND_SIM_FAULT, a test marked simulator) is skipped, saying why
    assert outcomes == {"PASSED": {"tests/test_runtime.py::test_device_array_round_trip"},
                        "SKIPPED": {"tests/test_runtime.py::test_phase1_failure_raises_with_cann_text",
                                    "tests/test_faults.py::test_every_call_site_fails_cleanly"}}, result.stdout[-3000:]
    reasons = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert reasons and all("ASCEND_ACLNN_TEST_CANN=real" in line for line in reasons), reasons


@pytest.mark.simulator
def test_release_dependent_tests_pass_under_the_8_1_profile(sim):
    """The simulator models CANN 8.1.RC1 where it differs from the newest release (the
    deterministic option read once, no aclInit after aclFinalize, the group-norm grad's
    formula, ...): the tests whose expectations depend on the release run again in a child
    process built as 8.1.RC1."""
    env = dict(os.environ, ASCEND_SIM_CANN_VERSION="8.1.RC1")
    env.pop("ASCEND_HOME_PATH", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                             "tests/test_fidelity.py", "tests/test_plans.py", "tests/test_group_norm.py",
                             "tests/test_runtime.py", "tests/test_ops.py", "tests/sim/test_profiles.py",
                             "tests/sim/test_determinism.py", "-k", "not numpy"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    tail = result.stdout[-3000:]
    assert result.returncode == 0, tail + result.stderr[-3000:]
    assert "failed" not in tail and "8.1.RC1" not in result.stderr, tail
    # Nothing skips, but a test that needs PyTorch where it is not installed (CI's NumPy 1.26 run)
    skips = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    torch_missing = importlib.util.find_spec("torch") is None
    assert all(torch_missing and "torch" in line.lower() for line in skips), skips


# ---- the fork rule (issue 26, defect 4) --------------------------------------------------
# PyTorch refuses CUDA in a forked child only when the parent initialised CUDA. The same rule
# here: the parent's state decides, each scenario a fresh parent that forks once and reports
# what the child could do.
FORK_CHILD = textwrap.dedent("""
    import os, sys, numpy as np, ascend_aclnn as aa
    from ascend_aclnn.backends.npu import runtime
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    WANT = [[[0, 0, 1, 2, 2], [3, 3, 4, 5, 5]]]
    PARENT
    pid = os.fork()
    if pid == 0:
        try:
            with aa.use_backend("npu"):
                y = aa.upsample_nearest_exact1d(x, [5])
                d = aa.upsample_nearest_exact1d(aa.to_device(x), [5])
                ok = y.tolist() == WANT and d.numpy().tolist() == WANT
            print("child npu", "ok" if ok else "wrong", runtime.in_forked_child())
        except RuntimeError as e:
            print("child refused", "forked child" in str(e) and "spawn" in str(e), runtime.in_forked_child())
        with aa.use_backend("numpy"):
            print("child numpy", aa.upsample_nearest_exact1d(x, [5]).tolist() == WANT)
        sys.stdout.flush()
        sys.exit(0)  # atexit handlers run: the child tears down what it started, silently
    _, status = os.waitpid(pid, 0)
    print("parent", os.waitstatus_to_exitcode(status))
""")
NUMPY_IN_PARENT = textwrap.dedent("""
    aa.set_backend("numpy")
    assert aa.upsample_nearest_exact1d(x, [5]).tolist() == WANT
    assert aa.replication_pad2d(np.ones((4, 64, 40, 40), np.float32), [3, 3, 3, 3]).shape == (4, 64, 46, 46)
    aa.set_backend("auto")
""")


@pytest.mark.parametrize("parent", [
    "pass",                                                              # imported the package, nothing more
    NUMPY_IN_PARENT,                                                     # used only the numpy backend
    "import ascend_aclnn.aclnn; assert ascend_aclnn.get_backend() == 'numpy'",  # asked which backend (numpy env)
])
def test_a_child_of_a_parent_that_never_started_the_runtime_may_use_the_npu(sim, parent):
    """Issue 26, defect 4: a child whose parent never initialised the npu runtime used to be
    refused, blaming parent device state that did not exist."""
    code = FORK_CHILD.replace("PARENT", parent)
    env = {"ASCEND_ACLNN_BACKEND": "numpy"} if "get_backend" in parent else {}
    result = run_python(code, sim, ASCEND_ACLNN_REFERENCE_THREADS="2", **env)
    assert (result.returncode, result.stdout, result.stderr) == \
        (0, "child npu ok False\nchild numpy True\nparent 0\n", ""), result.stdout + result.stderr


@pytest.mark.parametrize("parent", [
    "aa.device_count()",                                                 # started the runtime, no call
    "with aa.use_backend('npu'): aa.upsample_nearest_exact1d(x, [5])",  # ran on the NPU
    NUMPY_IN_PARENT + "assert aa.get_backend() == 'npu'",               # numpy calls, then auto started it
    "runtime.get_runtime().teardown()",                                  # started and finalised: still touched
    "runtime._runtime_lock.acquire()",                                   # another thread mid-initialisation
])
def test_a_child_of_a_parent_that_started_the_runtime_is_refused(sim, parent):
    """The other half of PyTorch's rule: once the parent initialised (or was initialising)
    the runtime, the child is refused with the spawn hint, and its numpy backend works."""
    code = FORK_CHILD.replace("PARENT", parent)
    result = run_python(code, sim, ASCEND_ACLNN_REFERENCE_THREADS="2")
    assert (result.returncode, result.stdout, result.stderr) == \
        (0, "child refused True True\nchild numpy True\nparent 0\n", ""), result.stdout + result.stderr


def test_a_child_forked_while_auto_was_being_decided_decides_for_itself(sim):
    """A parent thread deciding ``auto`` at the fork held its lock for good in the child,
    whose first call then waited for ever; the child now decides on its own (here: a
    parent that never reached aclInit, so the child may pick the NPU)."""
    code = textwrap.dedent("""
        import os, signal, sys, numpy as np, ascend_aclnn as aa
        from ascend_aclnn import backends
        backends._auto_lock.acquire()  # as a parent thread inside auto's decision
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)  # a hang ends the child with SIGALRM
            print("child", aa.get_backend(), aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [3]).tolist())
            sys.stdout.flush()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("parent", os.waitstatus_to_exitcode(status))
    """)
    result = run_python(code, sim)
    assert (result.returncode, result.stdout, result.stderr) == \
        (0, "child npu [[[1.0, 1.0, 1.0]]]\nparent 0\n", ""), result.stdout + result.stderr
