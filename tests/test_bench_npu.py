"""The benchmark's npu host-overhead section runs and reports its rows (it measures; it
asserts no speed)."""
from __future__ import annotations

import json

from ascend_aclnn.tools import bench, bench_npu


def test_npu_section_prints_and_writes_its_rows(tmp_path, capsys, npu):
    out = tmp_path / "rows.json"
    assert bench.main(["--npu-only", "--npu-calls", "3", "--npu-rounds", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "npu host overhead per call" in printed and "bare ctypes sequence" in printed
    data = json.loads(out.read_text())
    assert data["rows"] == []
    rows = {r["what"]: r for r in data["npu_overhead"]}
    for what in ("validation: full checks (OpSpec.bind)", "phase 2 alone (repeatable executor, queued)",
                 "call, DeviceArray in/out + one sync", "plan, p() on its DeviceArrays, queued",
                 "bare ctypes sequence, NumPy in/out (the yardstick)"):
        assert rows[what]["median_s"] > 0
    assert rows["bare ctypes sequence, NumPy in/out (the yardstick)"]["vs_bare"] == 1.0


def test_the_simulator_sources_are_found_from_the_tools():
    """bench --npu without CANN builds the simulator from the checkout's native/."""
    assert (bench_npu.NATIVE / "build.py").is_file(), bench_npu.NATIVE


def test_no_npu_skips_the_section(tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert bench.main(["--ops", "im2col", "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                       "--no-torch", "--no-npu", "--json", str(out)]) == 0
    assert "npu host overhead" not in capsys.readouterr().out
    assert json.loads(out.read_text())["npu_overhead"] is None
