"""Test fixtures: the CANN simulator built from native/, and the two backends.

The simulator is built once per session into a temporary prefix and ASCEND_HOME_PATH is
pointed at it before anything loads CANN, so the npu backend runs exactly the code path
it takes on an Atlas host. One process can hold one copy of the libraries, so the layout
is chosen per process (ASCEND_ACLNN_TEST_SIM_LAYOUT, default cann8); test_layouts.py runs
the npu suite again in a child process for the split layout.
"""
from __future__ import annotations

import ctypes
import gc
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "native"))
import build as sim_build  # noqa: E402  native/build.py

LAYOUT = os.environ.get("ASCEND_ACLNN_TEST_SIM_LAYOUT", "cann8")
HANDLE_KINDS = ("tensors", "int_arrays", "float_arrays", "bool_arrays", "scalars", "executors",
                "pending_tasks", "device_allocations", "device_bytes")


class Simulator:
    """The built simulator and its live-object counters (a simulator-only export)."""

    def __init__(self, prefix: Path, lib_dir: Path):
        self.prefix, self.lib_dir = prefix, lib_dir
        self.lib = ctypes.CDLL(str(lib_dir / "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
        self.lib.aclsimLiveCount.restype = ctypes.c_int64
        self.lib.aclsimLiveCount.argtypes = [ctypes.c_char_p]

    def live(self, kind: str) -> int:
        n = self.lib.aclsimLiveCount(kind.encode())
        assert n >= 0, f"simulator does not know the counter {kind!r}"
        return n

    def leaks(self) -> dict[str, int]:
        return {k: n for k in HANDLE_KINDS if (n := self.live(k))}


@pytest.fixture(scope="session", autouse=True)
def sim(tmp_path_factory) -> Simulator:
    prefix = tmp_path_factory.mktemp(f"cann-sim-{LAYOUT}")
    lib_dir = sim_build.build(prefix, layout=LAYOUT)
    os.environ["ASCEND_HOME_PATH"] = str(prefix)
    os.environ.pop("ASCEND_TOOLKIT_HOME", None)
    os.environ.pop("ASCEND_CUSTOM_OPP_PATH", None)
    return Simulator(prefix, Path(lib_dir))


def assert_no_leaks(sim: Simulator) -> None:
    import ascend_aclnn
    gc.collect()
    ascend_aclnn.synchronize()
    ascend_aclnn.empty_cache()
    assert sim.leaks() == {}, "handles or device memory outlived the test"


@pytest.fixture
def npu(sim):
    """Run the test on the npu backend (against the simulator), then check for leaks."""
    import ascend_aclnn
    with ascend_aclnn.use_backend("npu"):
        yield "npu"
    assert_no_leaks(sim)


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
    for key in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_ACLNN_BACKEND",
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
