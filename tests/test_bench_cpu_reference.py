"""bench --cpu-reference: raw aclnn operators on the CPU reference, timed against PyTorch
(it measures; it asserts no speed)."""
from __future__ import annotations

import io
import json

import pytest

from ascend_aclnn.tools import bench, bench_cpu_reference


def test_cpu_reference_rows_cover_each_family_at_each_selected_size(tmp_path):
    pytest.importorskip("torch")  # the CPU reference runs on PyTorch (an optional extra)
    path = tmp_path / "b.json"
    out, err = io.StringIO(), io.StringIO()
    assert bench.main(["--ops", "im2col", "--sizes", "small", "--dtypes", "float32", "--repeat", "1",
                       "--cpu-reference", "--no-npu", "--no-progress", "--json", str(path)], out, err) == 0
    rows = json.loads(path.read_text())["cpu_reference"]
    assert {r["family"] for r in rows} == {"elementwise", "reduction", "softmax", "matmul", "plan"}
    assert {r["size"] for r in rows} == {"small"}
    for r in rows:
        assert r["ours_s"] > 0 and r["torch_s"] > 0, r
        assert r["vs_torch"] == pytest.approx(r["ours_s"] / r["torch_s"])
        assert r["overhead_s"] == pytest.approx(r["ours_s"] - r["torch_s"])
    text = out.getvalue()
    assert "raw aclnn calls on the CPU reference" in text
    for r in rows:  # every row printed, with its ratio
        assert any(line.startswith(r["call"]) and f"{r['vs_torch']:.2f}x" in line for line in text.splitlines()), r


def test_cpu_reference_rows_compute_what_pytorch_computes():
    """Each pair times the same work: ours and PyTorch's leave the same results (to float32
    rounding) in their outputs."""
    torch = pytest.importorskip("torch")
    import numpy as np
    import ascend_aclnn as aa
    for call, _, _, (ours, theirs) in bench_cpu_reference._pairs(torch, "small", np.random.default_rng(1)):
        with aa.use_backend("numpy"):
            mine = np.array(ours(), copy=True)
        other = theirs().numpy()
        np.testing.assert_allclose(mine, other, rtol=1e-5, atol=1e-5, err_msg=call)


@pytest.mark.parametrize("argv,why", [
    (["--cpu-reference", "--no-torch"], "--no-torch skips it"),
    (["--cpu-reference", "--npu-only"], "no effect with --npu-only"),
])
def test_cpu_reference_is_refused_without_pytorch_or_with_npu_only(argv, why):
    out, err = io.StringIO(), io.StringIO()
    assert bench.main(argv, out, err) == 2
    assert "--cpu-reference" in err.getvalue() and why in err.getvalue()
