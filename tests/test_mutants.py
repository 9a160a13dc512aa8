"""devtools/mutants.py, the mutation pass (issue 36): its list stays true to the sources, and
its fast subset runs, each mutant killed by the tests it names."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "devtools"))
import mutants  # noqa: E402  devtools/mutants.py


def test_every_mutant_finds_its_line_once_and_names_tests_that_exist():
    assert mutants.stale(mutants.MUTANTS) == []
    ids = [m.id for m in mutants.MUTANTS]
    assert len(ids) == len(set(ids))
    for m in mutants.MUTANTS:
        assert m.original != m.mutated, m.id
        files = [t.split("::")[0] for i, t in enumerate(m.tests) if t.startswith("tests/")]
        assert files and all((ROOT / f).is_file() for f in files), (m.id, m.tests)


def test_a_stale_line_is_reported_not_skipped(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\nx = 1\ny = 2\n")
    twice = mutants.Mutant("T1", "twice", "a.py", "x = 1", "x = 2", ("tests/x.py",))
    gone = mutants.Mutant("T2", "gone", "a.py", "z = 3", "z = 4", ("tests/x.py",))
    once = mutants.Mutant("T3", "once", "a.py", "y = 2", "y = 3", ("tests/x.py",))
    assert mutants.stale([twice, gone, once], tmp_path) == ["T1", "T2"]


@pytest.mark.simulator
def test_the_ci_subset_is_killed(sim):
    """The fast subset, end to end: the baseline passes, then each mutant fails its tests."""
    out = io.StringIO()
    chosen = [m for m in mutants.MUTANTS if m.ci]
    assert chosen
    assert mutants.run(chosen, timeout=240, out=out) == 0, out.getvalue()
    assert f"mutants: {len(chosen)} of {len(chosen)} killed" in out.getvalue()
