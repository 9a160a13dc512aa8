"""CANN's own op_api unit-test cases that pass tensors in a format other than the one the
package passed before formats could be given (tests/fixtures/cann_ut/format_cases.json:
shapes, dtypes, formats and expected statuses transcribed from hicann/ops-nn, ops-math and
ops-cv), run as raw calls on both backends: each must end with the status CANN's test
expects (0, or the error code of phase 1). Cases not run say why in the fixture."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ascend_aclnn as aa

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "cann_ut" / "format_cases.json"
CASES = json.loads(FIXTURE.read_text())["cases"]
RUN = [c for c in CASES if "skip" not in c]
PAIRS = [(b, c) for c in RUN for b in c.get("backends", ("numpy", "npu"))]


def _arg(a):
    if isinstance(a, dict) and "ints" in a:
        return list(a["ints"])
    if not isinstance(a, dict):
        return a  # a scalar, or None for a null pointer
    dtype = aa.bfloat16 if a["dtype"] == "bfloat16" else np.dtype(a["dtype"])
    shape = tuple(a["tensor"])
    values = np.ones(shape, np.float32) if np.dtype(dtype).kind in "fV" else np.zeros(shape, np.int64)
    if a.get("transposed_view"):  # the case's strides (1, rows): a transposed view of a contiguous array
        return np.ascontiguousarray(values.T).astype(dtype).T
    d = aa.to_device(values.astype(dtype), format=a["format"])
    if "storage_shape" in a:
        assert d.storage_shape == tuple(a["storage_shape"]), (d.storage_shape, a["storage_shape"])
    return d


def _status(op: str, args: list) -> int:
    try:
        getattr(aa.aclnn, op[len("aclnn"):])(*[_arg(a) for a in args])
    except aa.AclnnError as exc:
        return exc.status
    aa.synchronize()
    return 0


@pytest.mark.parametrize("which,case", PAIRS, ids=[f"{b}-{c['case']}" for b, c in PAIRS])
def test_cann_ut_case_agrees(request, which, case):
    request.getfixturevalue("numpy_backend" if which == "numpy" else "npu")
    for call in case["calls"]:
        assert _status(case["op"], call["args"]) == call["expected"], (case["source"], case["case"])


def test_the_fixture_says_why_each_case_left_is_not_run():
    assert RUN and all(c["calls"] for c in RUN)
    for c in CASES:
        if "skip" in c:
            assert c["skip"].split(":")[0] in ("not expressible", "not runnable", "another SoC", "no expectation",
                                               "no format case"), c["case"]
            assert bool(c["calls"]) == c["skip"].startswith("not runnable") == bool(c.get("expressible")), c["case"]
        assert set(c.get("backends", ("numpy", "npu"))) <= {"numpy", "npu"} and ("backends" in c) == \
            ("backends_why" in c), c["case"]
