"""Case files with formats (ops-test-kit's tensor_formats / tensor_storage_shapes columns, per
tensor): compare --cases runs an aclnn operator with an NZ weight on the simulator against the
CPU reference; bad format fields stop the command before anything runs; bench --cases checks
that a described function's case only restates the format the function passes."""
from __future__ import annotations

import io
import json

import pytest

from ascend_aclnn.tools import cli

pytest.importorskip("torch", reason="the op-plugin table's CPU references run on PyTorch (optional)")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_compare_runs_mm_with_an_nz_weight(sim, tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([
        {"op": "aclnnMm", "dtype": "float16", "name": "nz", "args": [
            {"tensor": [5, 40]}, {"tensor": [40, 24], "format": "FRACTAL_NZ", "storage_shape": [2, 3, 16, 16]},
            {"tensor": [5, 24], "fill": "zeros"}, 0]},
        {"op": "aclnnMm", "dtype": "float16", "name": "nd", "args": [
            {"tensor": [5, 40]}, {"tensor": [40, 24], "format": "ND"}, {"tensor": [5, 24], "fill": "zeros"}, 0]}]))
    code, out, err = run_cli("compare", "--cases", str(path), "--no-progress")
    lines = out.splitlines()[:-1]
    assert code == 0 and len(lines) == 2 and all("  PASS  " in line for line in lines), out + err


@pytest.mark.parametrize("tensor, message", [
    ({"tensor": [40, 24], "format": "NZ"}, "args[1].format: expected an ascend_aclnn.Format"),
    ({"tensor": [40, 24], "format": "FRACTAL_NZ", "storage_shape": [3, 2, 16, 16]},
     "args[1].storage_shape: FRACTAL_NZ stores a float16 tensor of shape [40, 24] as [2, 3, 16, 16], got "
     "[3, 2, 16, 16]"),
    ({"tensor": [40, 24], "storage_shape": [2, 3, 16, 16]}, 'args[1].storage_shape: only with "format"'),
])
def test_bad_format_fields_stop_before_anything_runs(sim, tmp_path, tensor, message):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"op": "aclnnMm", "dtype": "float16", "args": [
        {"tensor": [5, 40]}, tensor, {"tensor": [5, 24]}, 0]}]))
    code, out, err = run_cli("compare", "--cases", str(path), "--no-progress")
    assert code == 2 and out == "", out + err
    assert message in err, err


def test_a_described_functions_case_may_only_restate_its_format(sim, tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"op": "upsample_nearest_exact1d",
                                 "args": [{"tensor": [1, 2, 5], "format": "ND"}, [10]]}]))
    code, out, err = run_cli("compare", "--cases", str(path), "--no-progress")
    assert code == 2 and out == "", out + err
    assert "args[0]: upsample_nearest_exact1d passes input as NCL, the case says ND" in err, err
    path.write_text(json.dumps([{"op": "upsample_nearest_exact1d",
                                 "args": [{"tensor": [1, 2, 5], "format": "NCL"}, [10]]}]))
    code, out, err = run_cli("compare", "--cases", str(path), "--no-progress")
    assert code == 0 and "  PASS  " in out, out + err
