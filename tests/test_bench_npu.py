"""The benchmark's npu host-overhead section runs and reports its rows (it measures; it
asserts no speed)."""
from __future__ import annotations

import json

import pytest

from ascend_aclnn.tools import bench, bench_npu
from conftest import ROOT, sim_build


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


def test_queued_device_calls_are_compared_with_the_bare_queued_sequence(tmp_path, capsys, npu):
    """f(d, [9], out=o) and the plan run p(d, [9], out=o) as ratios to the bare sequence
    doing the same (2 tensors + 1 int array created, phase 1, phase 2, 3 destroyed), all
    measured in one process."""
    out = tmp_path / "rows.json"
    assert bench.main(["--npu-only", "--npu-calls", "3", "--npu-rounds", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {r["what"]: r for r in json.loads(out.read_text())["npu_overhead"]}
    yardstick = rows[bench_npu.BARE_QUEUED]
    assert yardstick["vs_bare_queued"] == 1.0 and yardstick["median_s"] > 0
    for what in ("call, DeviceArray in, out= given, queued: f(d, [9], out=o)",
                 "plan, DeviceArray in, out= given, queued: p(d, [9], out=o)"):
        assert rows[what]["vs_bare_queued"] == pytest.approx(rows[what]["median_s"] / yardstick["median_s"])
        assert what in printed
    assert rows["call, NumPy in/out (upload, 2 phases, sync, download)"]["vs_bare_queued"] is None
    assert "/bare q" in printed


def test_the_simulator_sources_are_found_from_the_tools():
    """bench --npu without CANN builds the simulator from the package's sources (the checkout's
    native/ here; ascend_aclnn/_native in an installed package, tests/test_simulator_cli.py)."""
    from ascend_aclnn.tools import simulator
    assert simulator.sources() == ROOT / "native"
    assert simulator.build_script().SOURCES == sim_build.SOURCES


def test_no_npu_skips_the_section(tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert bench.main(["--ops", "im2col", "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                       "--no-torch", "--no-npu", "--json", str(out)]) == 0
    assert "npu host overhead" not in capsys.readouterr().out
    assert json.loads(out.read_text())["npu_overhead"] is None
