"""``bench --device``: every described operator's device time per call, from events, on
the npu backend (here the simulator, whose clock the expected values come from)."""
from __future__ import annotations

import io
import json

import pytest

from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.tools import bench


def test_bench_device_times_every_described_operator(npu, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "b.json"
    assert bench.main(["--device", "--no-npu", "--sizes", "small", "--no-torch", "--repeat", "2",
                       "--no-progress", "--json", str(path)], out, err) == 0
    rows = json.loads(path.read_text())["device"]
    assert sorted(r["op"] for r in rows) == sorted(s.name for s in REGISTRY)  # one row each
    for r in rows:
        # at least the simulator's 3 us per kernel, and a few bytes more: small shapes
        assert 3e-6 <= r["device_p10_s"] <= r["device_median_s"] <= r["device_p90_s"] < 1e-5, r
        assert r["host_median_s"] > 0
    text = out.getvalue()
    assert "device time per call" in text and all(r["op"] in text for r in rows)


def test_bench_device_times_user_cases(npu, tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"op": "replication_pad2d", "args": [{"tensor": [2, 8, 32, 32]}, [3, 3, 3, 3]], "name": "pad big"},
        {"op": "upsample_nearest_exact1d", "args": [{"tensor": [2, 4, 16]}, [64]]}]))
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "b.json"
    assert bench.main(["--device", "--cases", str(cases), "--npu-only", "--no-progress", "--json", str(path)],
                      out, err) == 0
    rows = json.loads(path.read_text())["device"]
    assert [r["op"] for r in rows] == ["replication_pad2d", "upsample_nearest_exact1d"]
    assert rows[0]["shape"] == "pad big"
    # the simulator's cost model: 3 us plus the bytes read and written at 1152 bytes/ns
    read, written = 2 * 8 * 32 * 32 * 4, 2 * 8 * 38 * 38 * 4
    assert abs(rows[0]["device_median_s"] - (3000 + -(-(read + written) // 1152)) * 1e-9) < 1e-12


def test_bench_cases_needs_device(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert bench.main(["--cases", str(tmp_path / "x.json")], out, err) == 2
    assert "--cases: needs --device" in err.getvalue()


def test_bench_device_times_aclnn_operators_from_a_cases_file(npu, tmp_path):
    """Any operator, in compare --cases' format: an aclnn one too, its outputs allocated from
    the CPU reference's results (Cat's (3, 3) out), as compare does."""
    pytest.importorskip("torch", reason="aclnnAdd's CPU reference on the numpy backend runs on PyTorch")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"op": "aclnnAdd", "args": [{"tensor": [64, 32]}, {"tensor": [64, 32]}, 1.5], "name": "add"},
        {"op": "aclnnCat", "kwargs": {"tensors": [{"tensor": [2, 3]}, {"tensor": [1, 3]}], "dim": 0}},
        {"op": "replication_pad2d", "args": [{"tensor": [1, 2, 4, 4]}, [1, 1, 1, 1]]}]))
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "b.json"
    assert bench.main(["--device", "--cases", str(cases), "--npu-only", "--no-progress", "--json", str(path)],
                      out, err) == 0, err.getvalue()
    rows = json.loads(path.read_text())["device"]
    assert [r["op"] for r in rows] == ["aclnnAdd", "aclnnCat", "replication_pad2d"]
    assert rows[0]["shape"] == "add"
    # the simulator's cost model: 3 us plus the bytes read and written at 1152 bytes/ns
    add_bytes = 3 * 64 * 32 * 4
    assert abs(rows[0]["device_median_s"] - (3000 + -(-add_bytes // 1152)) * 1e-9) < 1e-12, rows[0]
    assert all(3e-6 <= r["device_median_s"] < 1e-5 for r in rows), rows


def test_bench_device_refuses_an_aclnn_case_the_operator_cannot_take(tmp_path):
    pytest.importorskip("torch", reason="aclnnAdd's CPU reference on the numpy backend runs on PyTorch")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"op": "aclnnAdd", "args": [{"tensor": [2, 3]}, {"tensor": [2, 3]}, "x"]}]))
    out, err = io.StringIO(), io.StringIO()
    assert bench.main(["--device", "--cases", str(cases), "--npu-only", "--no-progress"], out, err) == 2
    assert len(err.getvalue().splitlines()) == 1 and "alpha" in err.getvalue(), err.getvalue()
