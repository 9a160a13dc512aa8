"""Every script in examples/ runs in each setup the README documents (issue 41, item 4): with
and without PyTorch, on the numpy backend (no CANN) and on the npu backend against the CANN
simulator. Where a setup lacks what part of an example needs, the example says so in one
line naming what to install, and runs the rest.

"Without PyTorch" is this interpreter with torch hidden (tests/fixtures/without/
sitecustomize.py raises ModuleNotFoundError on importing it): what a machine without torch
sees, at the cost of one process instead of a venv per setup.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
WITHOUT = ROOT / "tests" / "fixtures" / "without"
INSTALL_TORCH = 'pip install "ascend-aclnn[torch]"'


def _torch_installed() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def _run(example: str, torch: bool, cann: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "PYTEST_"))}
    if cann is not None:
        env["ASCEND_HOME_PATH"] = cann
    env["ASCEND_ACLNN_TEST_WITHOUT"] = "" if torch else "torch"
    env["PYTHONPATH"] = os.pathsep.join([str(WITHOUT), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(ROOT / "examples" / example)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_every_example_is_run_here():
    assert len(EXAMPLES) >= 2 and {"any_operator.py", "ten_raw_operators.py", "demo.py"} <= set(EXAMPLES)


@pytest.mark.parametrize("torch", [True, False], ids=["with-torch", "without-torch"])
@pytest.mark.parametrize("backend", ["numpy", "simulator"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs(example, backend, torch, request):
    if torch and not _torch_installed():
        pytest.skip("torch is not installed here; CI's first environment has it")
    cann = str(request.getfixturevalue("sim").prefix) if backend == "simulator" else None
    done = _run(example, torch, cann)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in output, output
    lines = done.stdout.splitlines()
    assert lines, output
    if any(line.startswith("backend:") for line in lines):
        assert f"backend: {'npu' if cann else 'numpy'}" in lines, output
    assert "FAIL" not in done.stdout, output
    skipped = [line for line in lines if "not run:" in line]
    if torch or cann:
        assert skipped == [], output  # everything runs where CANN or PyTorch is there
    for line in skipped:  # one line each, saying what is missing and what to install
        assert "PyTorch" in line and INSTALL_TORCH in line, line
