"""``compare --op aclnnXxx``: any aclnn operator on the simulator (the npu backend) against its
CPU reference, one line per case, exit 0/1/2 as for the described functions."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.tools import cli
from conftest import run_python

pytest.importorskip("torch", reason="the op-plugin table's CPU references run on PyTorch (optional)")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_an_operator_given_in_header_order_passes_per_dtype(sim):
    args = json.dumps([{"tensor": [2, 3, 4]}, {"tensor": [3, 1]}, 1.5, {"tensor": [2, 3, 4]}])
    code, out, err = run_cli("compare", "--op", "aclnnAdd", "--args", args, "--dtypes", "float32", "float16",
                             "--no-progress")
    *lines, verdict = out.splitlines()
    assert code == 0, out + err
    assert [line.split()[:3] for line in lines] == [["aclnnAdd[2,3,4]", "float32", "PASS"],
                                                    ["aclnnAdd[2,3,4]", "float16", "PASS"]]
    assert verdict.startswith("compare: 2 case(s), 0 failed") and "failed" not in err, out + err


def test_outputs_not_given_take_the_cpu_references_result_shapes(sim):
    """Raw operators have no shape inference: Cat's out, SplitTensor's list and ReduceSum's
    out are allocated from what the CPU reference returns."""
    cat = json.dumps({"tensors": [{"tensor": [2, 3]}, {"tensor": [1, 3]}], "dim": 0})
    code, out, err = run_cli("compare", "--op", "Cat", "--kwargs", cat, "--no-progress")
    assert code == 0 and out.split()[:3] == ["aclnnCat", "float32", "PASS"], out + err
    assert "of 9 within tol" in out  # (3, 3): the reference's shape
    code, out, err = run_cli("compare", "--op", "aclnnSplitTensor", "--shape", "5,3", "--kwargs",
                             '{"splitSections": 2, "dim": 0}', "--no-progress")
    assert code == 0 and "out[0]: 100.00% of 6" in out and "out[2]: 100.00% of 3" in out, out + err
    code, out, err = run_cli("compare", "--op", "aclnnReduceSum", "--args",
                             '[{"tensor": [2, 3, 4]}, [0, -1], true, "float32"]', "--no-progress")
    assert code == 0 and "PASS  100.00% of 3 within tol" in out, out + err


def test_the_golden_is_the_cpu_reference_so_a_wrong_one_fails_the_case(sim):
    aa.aclnn.register_reference("aclnnAdd", lambda self, other, alpha: self + other)  # alpha left out
    try:
        code, out, err = run_cli("compare", "--op", "aclnnAdd", "--args",
                                 '[{"tensor": [4, 5]}, {"tensor": [4, 5]}, 2.0]', "--no-progress")
    finally:
        aa.aclnn.register_reference("aclnnAdd", None)
    assert code == 1 and "  FAIL  " in out and "1 failed" in out.splitlines()[-1], out + err


def test_a_cases_file_mixes_aclnn_operators_and_functions(sim, tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([
        {"op": "aclnnAdd", "dtype": "float16", "args": [{"tensor": [8]}, {"tensor": [8]}, 1.0]},
        {"op": "aclnnForeachMulScalarList", "name": "foreach", "kwargs": {
            "x": [{"tensor": [2, 3]}, {"tensor": [4]}], "scalars": [0.5, -2.0]}},
        {"op": "upsample_nearest_exact1d", "args": [{"tensor": [1, 2, 5]}, [10]]}]))
    code, out, err = run_cli("compare", "--cases", str(path), "--no-progress")
    lines = out.splitlines()[:-1]
    assert code == 0 and len(lines) == 3 and all("  PASS  " in line for line in lines), out + err
    assert lines[0].startswith("#1 aclnnAdd[8]") and lines[1].startswith("foreach ")
    assert "out[1]: 100.00% of 4" in lines[1]


@pytest.mark.parametrize("argv, message", [
    (["--op", "aclnnSofmax", "--shape", "2,3"], "--op: aclnnSofmax has no CPU reference"),
    (["--op", "aclnnAdd", "--shape", "2,3"], "--args: aclnnAdd has no example to take arguments from: give "
                                             "other, alpha"),
    (["--op", "aclnnAdd"], "--op: an aclnn operator has no example arguments"),
    (["--op", "aclnnAdd", "--ops", "im2col", "--shape", "2"], "--ops: cannot be combined with --op"),
    (["--op", "aclnnAdd", "--kwargs", '{"beta": 1}'], "--kwargs.beta: aclnnAdd has no parameter 'beta'"),
    (["--op", "aclnnAdd", "--args", '[{"tensor": [2]}, {"tensor": [2]}, "x"]'],
     "--args[2] (alpha (const aclScalar *)): refused: expected a number"),
    (["--op", "aclnnReduceSum", "--args", '[{"tensor": [2]}, [0], true, "float33"]'], "--args[3]: expected a "
                                                                                      "dtype name"),
    (["--op", "aclnnCustomMaskedScale", "--shape", "2"], "--op: aclnnCustomMaskedScale has no CPU reference"),
])
def test_bad_cases_stop_before_anything_runs(sim, argv, message):
    code, out, err = run_cli("compare", *argv, "--no-progress")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err, err


def _header_dir(sim) -> str:
    return str(next(d for d in (sim.prefix / "include" / "aclnnop",
                                sim.prefix / "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop")
                    if (d / "aclnn_add.h").is_file()))


def test_without_an_npu_the_refusal_names_where_the_backend_came_from(sim, tmp_path):
    """Issue 31 item 9, for an aclnn operator: with its header readable but no CANN to run it,
    compare --op blamed --backend, which was never passed. The refusal names the source of
    npu and suggests --backend numpy, which then runs the operator on its CPU reference."""
    args = json.dumps([{"tensor": [2, 3]}, {"tensor": [2, 3]}, 1.0])

    def compare(*extra: str, **env: str):
        argv = ["compare", "--op", "aclnnAdd", "--args", args, "--no-progress", *extra]
        return run_python(f"import sys; from ascend_aclnn.tools.cli import main; sys.exit(main({argv!r}))",
                          None, ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="",
                          ASCEND_ACLNN_HEADERS=_header_dir(sim), **env)
    head = "python -m ascend_aclnn compare: error: "
    for extra, env, blamed in (((), {}, "the npu backend (compare's default"),
                               ((), {"ASCEND_ACLNN_BACKEND": "npu"}, "ASCEND_ACLNN_BACKEND=npu: "),
                               (("--backend", "npu"), {}, "--backend: ")):
        result = compare(*extra, **env)
        err = result.stderr
        assert result.returncode == 2 and result.stdout == "" and err.count("\n") == 1, (extra, env, err)
        assert err.startswith(head + blamed) and "cannot run here" in err and "--backend numpy" in err, err
    result = compare("--backend", "numpy")
    *rows, verdict = result.stdout.splitlines()
    assert result.returncode == 0 and [row.split()[:3] for row in rows] == [["aclnnAdd[2,3]", "float32", "PASS"]], \
        result.stdout + result.stderr
    assert verdict.startswith("compare: 1 case(s), 0 failed") and "(numpy vs numpy reference" in verdict


def test_complex_rows_of_an_aclnn_operator_align(sim):
    args = json.dumps([{"tensor": [2, 3]}, {"tensor": [2, 3]}, 1.0])
    # the simulator's Add has no complex kernel: the numpy backend (the CPU reference) has
    code, out, err = run_cli("compare", "--backend", "numpy", "--op", "aclnnAdd", "--args", args, "--dtypes",
                             "float32", "complex64", "complex128", "--no-progress")
    rows = out.splitlines()[:-1]
    assert code == 0 and [row.split()[1] for row in rows] == ["float32", "complex64", "complex128"], out + err
    assert len({row.index("  PASS  ") for row in rows}) == 1, out
