"""The benchmark command runs and reports what it promises (it measures; it asserts no speed)."""
from __future__ import annotations

import argparse
import json
import os

import numpy as np
import pytest

from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.tensors import dtype_name
from ascend_aclnn.tools import bench, cli


def dtypes_of(name: str) -> list[str]:
    return [dtype_name(d) for d in REGISTRY[name].params[0].dtypes]


def test_every_operator_has_a_small_medium_and_large_case():
    """Every operator gets the three sizes (hand-written rows, else its example's); where
    hand-written rows exist they name a real operator and cover the three sizes."""
    cases = bench.all_cases()
    for spec in REGISTRY:
        assert {c.size for c in cases if c.op == spec.name} == set(bench.SIZES), spec.name
    written = bench.hand_written()
    for op in {c.op for c in written}:
        assert op in REGISTRY, op
        assert {c.size for c in written if c.op == op} == set(bench.SIZES), op


@pytest.mark.parametrize("op", [s.name for s in REGISTRY if s.torch_baseline is not None])
def test_each_descriptions_torch_baseline_runs_on_its_rows(op):
    """The PyTorch call on the description does the work on every small row (hand-written
    and example-based): measured, with no error, giving the operator's first output's shape."""
    torch = pytest.importorskip("torch")
    cases = [c for c in bench.all_cases() if c.op == op and c.size == "small"] + bench.example_cases(REGISTRY[op])[:1]
    for case in cases:
        row = bench.measure(case, np.dtype(np.float32), 1, torch)
        assert row["torch_error"] is None and row["torch_s"] is not None, (case.label, row["torch_error"])
        args, kwargs = case.make(np.random.default_rng(0), np.dtype(np.float32))
        bound = REGISTRY[op].signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = [bench._t(torch, v) if isinstance(v, np.ndarray) else v
                  for v in (bound.arguments[p.name] for p in REGISTRY[op].params)]
        theirs = REGISTRY[op].torch_baseline(torch, tuple(values))()
        first = theirs[0] if isinstance(theirs, tuple) else theirs
        ours = getattr(__import__("ascend_aclnn"), op)(*args, **kwargs)
        assert tuple(first.shape) == (ours[0] if isinstance(ours, tuple) else ours).shape, case.label


def test_an_operator_without_hand_written_rows_falls_back_to_its_example(monkeypatch, capsys):
    dropped = "im2col"
    written = bench.hand_written()
    monkeypatch.setattr(bench, "hand_written", lambda: [c for c in written if c.op != dropped])
    rows = [c for c in bench.all_cases() if c.op == dropped]
    assert [(c.size, c.source) for c in rows] == [(s, "example") for s in bench.SIZES]
    spec = REGISTRY[dropped]
    rng = np.random.default_rng(0)
    (small, *_), _ = rows[0].make(rng, np.dtype(np.float32))
    (medium, *_), _ = rows[1].make(rng, np.dtype(np.float32))
    (example, *_), _ = spec.example(rng, np.dtype(np.float32))
    assert small.shape == example.shape  # small: the example as it is
    assert medium.shape[1:] == example.shape[1:] and medium.size >= bench.EXAMPLE_TARGET["medium"]
    spec.bind((medium, *rows[1].make(rng, np.dtype(np.float32))[0][1:]), {})  # a valid call
    assert bench.main(["--ops", dropped, "--sizes", "small", "medium", "--dtypes", "float32", "--repeat", "1",
                       "--no-torch", "--no-npu", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"{dropped:<34} small  example {example.shape}" in out and f"{dropped:<34} medium example (" in out


def test_scaling_an_example_keeps_it_valid_or_leaves_it_alone():
    for spec in REGISTRY:
        args, kwargs = spec.example(np.random.default_rng(1), np.dtype(np.float32))
        new_args, new_kwargs, k = bench.scale_example(spec, tuple(args), dict(kwargs), 1 << 12)
        before = spec.bind(tuple(args), dict(kwargs)).outputs
        after = spec.bind(new_args, new_kwargs).outputs  # the operator's checks accept it
        for b, a in zip(before, after):
            assert np.prod(a.shape) <= k * np.prod(b.shape), spec.name
    # no batch axis to repeat (a 1-D first input): as is
    spec = REGISTRY["replication_pad2d"]
    x = np.ones(5, np.float32)
    assert bench.scale_example(spec, (x, [1, 1, 1, 1]), {}, 1 << 12)[2] == 1


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
    assert printed.out.rstrip().splitlines()[-1] == "worst ours/torch per dtype: - (PyTorch not installed or --no-torch)"
    data = json.loads(out.read_text())
    assert set(data) >= {"meta", "rows", "threads", "worst_vs_torch", "npu_overhead"}
    assert data["meta"]["repeat"] == 2 and data["meta"]["cpus"] == os.cpu_count()
    rows = data["rows"]
    assert [(r["size"], r["dtype"]) for r in rows] == [("small", "float32"), ("small", "bfloat16")] * len(cases)
    for r in rows:
        assert r["ours_s"] > 0 and r["floor_s"] > 0 and r["torch_s"] is None
        assert r["bytes_moved"] > 0 and r["vs_floor"] == pytest.approx(r["ours_s"] / r["floor_s"])
        assert r["threads_gain"] is None  # measured on the large rows only
    assert data["threads"] == [] and data["worst_vs_torch"] == {} and data["npu_overhead"] is None


def test_large_rows_measure_the_reference_threads(monkeypatch, tmp_path, capsys):
    """Each large row times the reference with ASCEND_ACLNN_REFERENCE_THREADS=1 and =2 in the
    same run, prints the gain, and the end says which is better per row (a tiny case stands
    in for the large shapes here)."""
    op = "replication_pad2d"
    tiny = [bench.Case(op, "large", "tiny", lambda rng, dt: ((bench._randn(rng, (2, 3, 8, 8), dt), [1, 1, 1, 1]), {}))]
    monkeypatch.setattr(bench, "hand_written", lambda: tiny)
    monkeypatch.setenv("ASCEND_ACLNN_REFERENCE_THREADS", "3")
    out = tmp_path / "rows.json"
    assert bench.main(["--ops", op, "--sizes", "large", "--dtypes", "float32", "float16", "--repeat", "3",
                       "--no-torch", "--no-npu", "--no-progress", "--json", str(out)]) == 0
    assert os.environ["ASCEND_ACLNN_REFERENCE_THREADS"] == "3"  # put back
    printed = capsys.readouterr().out
    assert "1thr/2thr" in printed and "reference threads on the large rows" in printed
    data = json.loads(out.read_text())
    for r in data["rows"]:
        assert r["threads_default"] == 3 and r["threads_1_s"] > 0 and r["threads_2_s"] > 0
        assert r["threads_gain"] == pytest.approx(r["threads_1_s"] / r["threads_2_s"])
    assert [(v["dtype"], v["better"] in ("1", "2", "same")) for v in data["threads"]] == \
        [("float32", True), ("float16", True)]
    for v in data["threads"]:
        assert f"{v['op']} tiny {v['dtype']}" in printed


def test_thread_verdicts_and_the_worst_ratio_line():
    rows = [{"op": "a", "size": "large", "shape": "s", "dtype": "float32", "threads_gain": 1.8, "vs_torch": 0.5},
            {"op": "b", "size": "large", "shape": "s", "dtype": "float32", "threads_gain": 0.7, "vs_torch": 1.4},
            {"op": "c", "size": "large", "shape": "s", "dtype": "float16", "threads_gain": 1.01, "vs_torch": 3.0},
            {"op": "d", "size": "small", "shape": "s", "dtype": "float16", "threads_gain": None, "vs_torch": None},
            {"op": "e", "size": "small", "shape": "s", "dtype": "float16", "threads_gain": None, "vs_torch": 9.0}]
    assert [v["better"] for v in bench.thread_verdicts(rows)] == ["2", "1", "same"]
    report = bench.thread_report(bench.thread_verdicts(rows))
    assert "2 threads better (1)" in report and "1 thread better (1)" in report and "no clear difference (1)" in report
    worst = bench.worst_vs_torch(rows)  # over the largest size measured: small rows are call overhead
    assert {dt: w["op"] for dt, w in worst.items()} == {"float32": "b", "float16": "c"}
    line = bench.worst_line(worst, torch=object())
    assert "\n" not in line and line == "worst ours/torch per dtype (large rows): float32 1.40x (b s), float16 3.00x (c s)"
    assert bench.worst_vs_torch(rows[3:]) == {"float16": {"ratio": 9.0, "op": "e", "size": "small", "shape": "s"}}


def test_bench_refuses_unknown_operators(capsys):
    assert bench.main(["--ops", "conv2d"]) == 2
    err = capsys.readouterr().err
    assert "unknown function(s) conv2d" in err and err.count("\n") == 1


def test_bench_is_a_subcommand_of_the_command_line(capsys):
    assert cli.main(["bench", "--ops", "im2col", "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                     "--no-torch", "--no-npu"]) == 0
    assert "im2col " in capsys.readouterr().out
