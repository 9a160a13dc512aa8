"""Types as a user's type checker sees them: mypy --strict on a script using the package.

The operators are overloaded so that NumPy arrays in give np.ndarray out (tuples of them
for several outputs) and DeviceArrays in give DeviceArray; the script below must check
clean except for the one assignment that is wrong on purpose (so the test can fail both
ways). mypy is in the test extra, so this always runs.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

USER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import ascend_aclnn as aa

    x = np.random.rand(2, 3, 5).astype(np.float32)
    y = aa.upsample_nearest_exact1d(x, [8])
    print(y.mean())                                   # np.ndarray, not a Union
    out, mask = aa.max_pool2d_with_mask(np.ones((1, 2, 8, 8), np.float32), 3, 2, 1)
    print(out.mean(), mask.shape)
    cols = aa.im2col(np.ones((1, 2, 8, 8), np.float32), 3, padding=1)
    print(cols.sum())
    d = aa.to_device(x)
    e = aa.upsample_nearest_exact1d(d, [8])
    print(e.numpy().mean())                           # a DeviceArray
    f = aa.upsample_nearest_exact1d(d, [8], out=aa.empty((2, 3, 8), np.float32))
    f.free()
    dx, dgamma, dbeta = aa.group_norm_swish_grad(
        np.ones((2, 4, 3), np.float32), np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
        np.ones((2, 4, 3), np.float32), np.ones(4, np.float32), np.ones(4, np.float32), 2)
    if dgamma is not None:                            # None when dgamma_is_require is False
        print(dgamma.sum())
    wrong: aa.DeviceArray = aa.upsample_nearest_exact1d(x, [8])
""")


def test_a_users_script_type_checks_under_mypy_strict(tmp_path):
    script = tmp_path / "use.py"
    script.write_text(USER_SCRIPT)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env=dict(os.environ, MYPYPATH=str(ROOT)))
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    wrong_line = USER_SCRIPT.splitlines().index(
        "wrong: aa.DeviceArray = aa.upsample_nearest_exact1d(x, [8])") + 1
    assert len(errors) == 1, result.stdout + result.stderr
    assert f"use.py:{wrong_line}: error: Incompatible types in assignment" in errors[0], errors
    assert 'variable has type "DeviceArray"' in errors[0], errors


# The modules that check clean under mypy --strict today. The rest of the package does not
# yet (see CHANGELOG); a module on this list must stay clean, and one that becomes clean
# joins it.
STRICT_CLEAN = (
    "__init__.py", "__main__.py", "_version.py", "errors.py", "determinism.py", "api.py", "aclnn.py", "operators.py",
    "masks.py", "backends/numpy/__init__.py",
    "backends/__init__.py", "backends/npu/__init__.py", "backends/npu/handles.py", "backends/numpy/_parallel.py",
    "cann/__init__.py", "cann/constants.py", "cann/prototypes.py", "cann/version.py", "cann/loader.py",
    "cann/headers.py", "backends/npu/executor.py",
    "ops/__init__.py", "ops/codegen.py", "ops/pad.py", "ops/upsample.py",
    "ops/im2col.py", "ops/group_norm.py", "backends/numpy/im2col.py",
    "reference/__init__.py", "reference/_common.py", "reference/_faults.py", "reference/group_norm.py",
    "reference/im2col.py", "reference/max_pool.py", "reference/pad.py", "reference/upsample.py",
    "tools/__init__.py", "tools/progress.py", "tools/cli.py", "tools/info.py", "tools/options.py",
    "ops/spec.py", "backends/numpy/_half.py", "ops/max_pool.py", "backends/numpy/pad.py", "plans.py",
    "backends/npu/runtime.py", "tensors.py", "testing.py",
    "backends/npu/launch.py", "ops/checked_calls.py", "backends/numpy/group_norm.py",
)


@pytest.mark.skipif(int(np.__version__.split(".")[0]) < 2, reason="NumPy 1.x's stubs want type parameters on "
                    "every np.ndarray; the strict check runs with NumPy 2 (CI's first environment)")
def test_the_strict_clean_modules_stay_clean(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
         str(ROOT / "ascend_aclnn")],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert "error:" in result.stdout or result.returncode == 0, result.stdout + result.stderr  # mypy ran
    failing = {line.split(":", 1)[0].replace("\\", "/") for line in result.stdout.splitlines() if ": error:" in line}
    regressed = sorted(f"ascend_aclnn/{m}" for m in STRICT_CLEAN if f"ascend_aclnn/{m}" in
                       {f[f.index("ascend_aclnn/"):] for f in failing if "ascend_aclnn/" in f})
    assert not regressed, "\n".join(line for line in result.stdout.splitlines()
                                    if any(r in line for r in regressed))
