"""The benchmark command runs and reports what it promises (it measures; it asserts no speed)."""
from __future__ import annotations

import argparse
import json
import os

import pytest

from ascend_aclnn.ops import REGISTRY, SPECS
from ascend_aclnn.tensors import dtype_name
from ascend_aclnn.tools import bench, cli


def dtypes_of(name: str) -> list[str]:
    return [dtype_name(d) for d in SPECS[name].params[0].dtypes]


def test_every_operator_has_a_small_medium_and_large_case():
    cases = bench.all_cases()
    for spec in REGISTRY:
        assert {c.size for c in cases if c.op == spec.name} == set(bench.SIZES), spec.name


def _args(*argv: str) -> argparse.Namespace:
    parser = cli.parser()
    return parser.parse_args(["bench", *argv])


def test_every_dtype_runs_by_default_16_bit_included_in_large():
    p = bench.prepare(_args("--sizes", "large", "--no-npu", "--no-torch"), "bench")
    for spec in REGISTRY:
        got = {dtype_name(d) for c, d in p.todo if c.op == spec.name}
        assert got == set(dtypes_of(spec.name)), spec.name
    assert {"float16", "bfloat16"} <= {dtype_name(d) for _, d in p.todo}
    p = bench.prepare(_args("--ops", REGISTRY[0].name, "--dtypes", "float32", "--no-npu"), "bench")
    assert {dtype_name(d) for _, d in p.todo} == {"float32"}
    assert {c.size for c, _ in p.todo} == set(bench.SIZES)


def test_bench_prints_a_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "rows.json"
    op = "upsample_nearest_exact1d_backward"
    assert bench.main(["--ops", op, "--sizes", "small", "--dtypes", "float32,bfloat16", "--repeat", "2",
                       "--no-torch", "--no-npu", "--json", str(out)]) == 0
    printed = capsys.readouterr()
    assert op in printed.out and "ours ms" in printed.out
    cases = [c for c in bench.all_cases() if c.op == op and c.size == "small"]
    assert f"1/{2 * len(cases)} " in printed.err and "\r" not in printed.err  # progress, on stderr
    data = json.loads(out.read_text())
    assert set(data) >= {"meta", "rows", "npu_overhead"}
    assert data["meta"]["repeat"] == 2 and data["meta"]["cpus"] == os.cpu_count()
    rows = data["rows"]
    assert [(r["size"], r["dtype"]) for r in rows] == [("small", "float32"), ("small", "bfloat16")] * len(cases)
    for r in rows:
        assert r["ours_s"] > 0 and r["floor_s"] > 0 and r["torch_s"] is None
        assert r["bytes_moved"] > 0 and r["vs_floor"] == pytest.approx(r["ours_s"] / r["floor_s"])
    assert data["npu_overhead"] is None


def test_bench_refuses_unknown_operators(capsys):
    assert bench.main(["--ops", "conv2d"]) == 2
    err = capsys.readouterr().err
    assert "unknown function(s) conv2d" in err and err.count("\n") == 1


def test_bench_is_a_subcommand_of_the_command_line(capsys):
    assert cli.main(["bench", "--ops", "im2col", "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                     "--no-torch", "--no-npu"]) == 0
    assert "im2col " in capsys.readouterr().out
