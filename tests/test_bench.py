"""The benchmark command runs and reports what it promises (it measures; it asserts no speed)."""
from __future__ import annotations

import json

import pytest

from ascend_aclnn.tools import bench
from ascend_aclnn.ops import REGISTRY


def test_every_operator_has_a_small_medium_and_large_case():
    cases = bench.all_cases()
    for spec in REGISTRY:
        assert {c.size for c in cases if c.op == spec.name} == {"small", "medium", "large"}, spec.name


def test_bench_prints_a_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert bench.main(["--ops", "upsample_nearest_exact1d_backward", "--sizes", "small", "--dtypes",
                       "float32,bfloat16", "--repeat", "2", "--no-torch", "--json", str(out)]) == 0
    printed = capsys.readouterr()
    assert "upsample_nearest_exact1d_backward" in printed.out and "ours ms" in printed.out
    assert "[1/4]" in printed.err  # progress, on stderr
    rows = json.loads(out.read_text())["rows"]
    assert [(r["size"], r["dtype"]) for r in rows] == [("small", "float32"), ("small", "bfloat16")] * 2
    for r in rows:
        assert r["ours_s"] > 0 and r["floor_s"] > 0 and r["torch_s"] is None
        assert r["bytes_moved"] > 0 and r["vs_floor"] == pytest.approx(r["ours_s"] / r["floor_s"])


def test_bench_refuses_unknown_operators(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--ops", "conv2d"])
    assert "unknown function 'conv2d'" in capsys.readouterr().err


def test_bench_is_a_subcommand_of_the_command_line(capsys):
    from ascend_aclnn.tools import cli
    assert cli.main(["bench", "--ops", "im2col", "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                     "--no-torch"]) == 0
    assert "im2col " in capsys.readouterr().out
