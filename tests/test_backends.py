"""Backend selection and the numpy backend's DeviceArray."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn import backends


def test_use_backend_nests_and_restores(sim):
    with ascend_aclnn.use_backend("numpy") as name:
        assert name == ascend_aclnn.get_backend() == "numpy"
        with ascend_aclnn.use_backend("npu"):
            assert ascend_aclnn.get_backend() == "npu"
        assert ascend_aclnn.get_backend() == "numpy"


def test_use_backend_is_local_to_its_thread():
    seen = []
    with ascend_aclnn.use_backend("numpy"):
        t = threading.Thread(target=lambda: seen.append(backends.requested()[0]))
        t.start()
        t.join()
    assert seen == ["auto"]


def test_auto_uses_npu_when_cann_reports_a_device(sim, monkeypatch):
    monkeypatch.delenv(backends.ENV_VAR, raising=False)
    assert ascend_aclnn.get_backend() == "npu"
    assert ascend_aclnn.npu_available() and ascend_aclnn.device_count() == 1


def test_environment_variable_and_set_backend(monkeypatch, sim):
    monkeypatch.setenv(backends.ENV_VAR, "numpy")
    assert ascend_aclnn.get_backend() == "numpy"
    monkeypatch.setenv(backends.ENV_VAR, "cuda")
    with pytest.raises(ValueError, match="ASCEND_ACLNN_BACKEND: expected one of auto, npu, numpy, got 'cuda'"):
        ascend_aclnn.get_backend()
    try:
        ascend_aclnn.set_backend("npu")  # set_backend wins over the environment
        assert ascend_aclnn.get_backend() == "npu"
    finally:
        backends._setting = None
    with pytest.raises(ValueError, match="backend: expected one of"):
        ascend_aclnn.set_backend("gpu")


def test_numpy_device_array(numpy_backend):
    x = np.arange(6, dtype=np.float16).reshape(1, 2, 3)
    d = ascend_aclnn.to_device(x)
    assert (d.backend, d.device, d.shape, d.dtype, d.nbytes, len(d)) == ("numpy", None, (1, 2, 3), np.float16, 12, 1)
    x[...] = 0  # the DeviceArray holds its own copy
    np.testing.assert_array_equal(d.numpy(), np.arange(6).reshape(1, 2, 3))
    assert ascend_aclnn.to_device(d) is d
    d.free()
    with pytest.raises(ValueError, match="freed"):
        d.numpy()


def test_wrong_call_shape_is_a_type_error(backend):
    with pytest.raises(TypeError, match="upsample_nearest_exact1d"):
        ascend_aclnn.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32))
    with pytest.raises(TypeError):
        ascend_aclnn.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [4], bogus=1)


AUTO_RUN = """
import warnings, numpy as np, ascend_aclnn as aa
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    for _ in range(3):
        aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [4])
print(aa.get_backend())
for w in seen:
    print(w.category.__name__, str(w.message).replace(chr(10), " "))
"""


def _auto_run(tmp_path, **env_vars: str) -> list[str]:
    import os, subprocess, sys
    env = {k: v for k, v in os.environ.items()
           if k not in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", backends.ENV_VAR, "LD_LIBRARY_PATH")}
    env.update(env_vars, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run([sys.executable, "-c", AUTO_RUN], env=env, capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("var", ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"])
def test_auto_warns_once_when_a_cann_variable_points_nowhere(tmp_path, var):
    lines = _auto_run(tmp_path, **{var: str(tmp_path / "nope")})
    assert lines[0] == "numpy"
    assert len(lines) == 2, lines  # once, though three calls ran
    assert lines[1].startswith("RuntimeWarning ascend_aclnn: " + f"{var}={tmp_path / 'nope'} is set but CANN failed to load")
    assert f"has no libascendcl.so in {tmp_path / 'nope' / 'lib64'}" in lines[1]


def test_auto_warns_with_the_loader_error_when_the_cann_found_there_fails_to_load(tmp_path):
    root = tmp_path / "cann"
    (root / "lib64").mkdir(parents=True)
    (root / "lib64" / "libascendcl.so").write_text("not a library")
    lines = _auto_run(tmp_path, ASCEND_HOME_PATH=str(root))
    assert lines[0] == "numpy" and len(lines) == 2, lines
    assert f"ASCEND_HOME_PATH={root} is set but CANN failed to load (could not load libascendcl.so from {root / 'lib64'}" \
        in lines[1]


def test_auto_stays_quiet_without_a_cann_variable_or_when_numpy_is_asked_for(tmp_path):
    assert _auto_run(tmp_path) == ["numpy"]
    assert _auto_run(tmp_path, ASCEND_HOME_PATH=str(tmp_path), ASCEND_ACLNN_BACKEND="numpy") == ["numpy"]


BLOCKING_RUN = """
import numpy as np, ascend_aclnn as aa
from ascend_aclnn.backends.npu import runtime
d = aa.to_device(np.ones((1, 1, 4), np.float32))
o = aa.empty((1, 1, 8), np.float32)
d4 = aa.to_device(np.ones((1, 1, 4, 4), np.float32))
s = runtime.current_device().stream
counts = []
before = s.syncs
aa.upsample_nearest_exact1d(d, [8])                        # the lean resident path
aa.upsample_nearest_exact1d(d, [8], out=o)
counts.append(s.syncs - before)
with aa.plan(aa.upsample_nearest_exact1d, d, [8], out=o) as p:  # a repeatable executor
    before = s.syncs
    p(); p(); p()
    counts.append(s.syncs - before)
with aa.plan(aa.max_pool2d_with_mask, d4, 2) as q:         # not repeatable: ordinary launches
    before = s.syncs
    q()
    counts.append(s.syncs - before)
print(counts)
"""


@pytest.mark.parametrize("value, expected", [("1", "[2, 3, 1]"), ("0", "[0, 0, 0]"), (None, "[0, 0, 0]")])
def test_ascend_launch_blocking_synchronises_after_each_launch(sim, value, expected):
    from conftest import run_python
    result = run_python(BLOCKING_RUN, sim, ASCEND_LAUNCH_BLOCKING=value)
    assert result.stdout.strip() == expected, result.stdout + result.stderr
