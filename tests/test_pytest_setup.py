"""How the suite starts (issue 41, items 5 and 6): pytest without pytest-xdist runs it in
one process (a user with pytest alone can run one file), with xdist one worker per core
unless -n says otherwise; and the fast tier (-m quick) collects its own modules only, so
modules outside it that skip at collection (no torch, say) do not read as quick tests skipped.

Each runs pytest in a child process of this checkout, with packages hidden by
tests/fixtures/without/sitecustomize.py where the setup is one without them.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import QUICK, ROOT

WITHOUT = ROOT / "tests" / "fixtures" / "without"
ONE_TEST = "tests/test_spec.py"


def _pytest(*args: str, without: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ASCEND_ACLNN_TEST_WITHOUT=without,
               PYTHONPATH=os.pathsep.join([str(WITHOUT), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)


def _first_test() -> str:
    listed = _pytest(ONE_TEST, "--collect-only", "-q", "-n", "0")
    return next(line for line in listed.stdout.splitlines() if "::" in line)


def test_without_xdist_the_suite_runs_in_one_process():
    test = _first_test()
    done = _pytest(test, without="xdist")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unrecognized arguments" not in done.stderr and re.search(r"\b1 passed\b", done.stdout), done.stdout
    assert "workers" not in done.stdout, done.stdout


def test_with_xdist_the_suite_runs_one_worker_per_core_unless_told():
    test = _first_test()
    done = _pytest(test)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = os.cpu_count() or 1
    assert re.search(rf"\b{workers} workers?\b", done.stdout), done.stdout
    one = _pytest(test, "-n", "0")
    assert one.returncode == 0 and "workers" not in one.stdout, one.stdout


def test_the_quick_tier_collects_its_own_modules_only():
    # without torch, test_torch_*.py and the CPU reference's modules skip at collection
    done = _pytest("-m", "quick", "--collect-only", "-q", without="torch")
    assert done.returncode == 0, done.stdout + done.stderr
    files = {line.split("::", 1)[0].rsplit("/", 1)[-1] for line in done.stdout.splitlines() if "::" in line}
    assert files == set(QUICK), files ^ set(QUICK)
    assert "skipped" not in done.stdout.lower(), done.stdout
