"""Coverage of CANN 8.1.RC1's operators by a CPU reference, read from the shipped table (no
headers needed): which have one, and for each that has none, the reviewed reason."""
from __future__ import annotations

import json

from ascend_aclnn.cpu_reference import table as T
from ascend_aclnn.cpu_reference.formulas import FORMULAS
from ascend_aclnn.ops import REGISTRY

DATA = json.loads(T.TABLE_PATH.read_text(encoding="utf-8"))
TARGET = 680  # issue 37: at least 680 of 8.1.RC1's operators run on a CPU


def _in_81() -> set[str]:
    with_row = {r["aclnn"] for r in DATA["rows"] if r["in_cann_8_1_rc1"]}
    assert len(with_row) == DATA["headers"]["with_row"]
    everything = with_row | set(DATA["unreferenced"])
    assert len(everything) == DATA["headers"]["operators"]
    return everything


def _with_reference() -> set[str]:
    with_row = {r["aclnn"] for r in DATA["rows"] if r["in_cann_8_1_rc1"]}
    return (with_row | set(FORMULAS) | {spec.aclnn for spec in REGISTRY}) & _in_81()


def test_at_least_the_target_of_8_1_rc1_operators_have_a_cpu_reference():
    have = _with_reference()
    assert len(have) >= TARGET, f"{len(have)} of {DATA['headers']['operators']}"


def test_every_8_1_rc1_operator_without_a_reference_has_its_reason():
    without = _in_81() - _with_reference()
    reasons = T.no_reference()
    assert without <= set(reasons), sorted(without - set(reasons))
    for op in without:
        assert T.why_missing(op) == reasons[op]
    assert set(reasons) <= _in_81()


def test_the_reasons_name_the_categories_issue_37_asks_for():
    reasons = T.no_reference()
    assert "HCCL" in reasons["aclnnMatmulAllReduce"]
    assert "private data format" in reasons["aclnnTransMatmulWeight"]
    assert T.why_missing("aclnnAdd") is None
