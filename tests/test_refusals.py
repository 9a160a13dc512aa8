"""The numpy backend refuses what CANN's first phase refuses, before computing (issue 37,
items 3 and 5): the rules read from a header's parameter comments, the hand list with its
op_api sources, CANN's promotion and castability, the outputs CANN takes in more than one
shape, and the side-by-side run of every operator the simulator implements on both backends.
"""
from __future__ import annotations

import itertools
import re
import textwrap

import ml_dtypes
import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.cann import headers
from ascend_aclnn.cpu_reference import header_rules, refusals
from ascend_aclnn.errors import AclnnError, AclnnParamInvalidError
from conftest import assert_no_leaks

import side_by_side

F32, F16, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32, np.int64))


@pytest.fixture
def no_headers(monkeypatch, tmp_path):
    """No CANN installed: each call uses its CPU reference's own prototype (no header rules)."""
    for key in (headers.ENV_VAR, "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    headers.reset()
    aa.aclnn._operators.clear()
    with aa.use_backend("numpy"):
        yield
    headers.reset()
    aa.aclnn._operators.clear()


@pytest.fixture
def header_dir(monkeypatch, tmp_path):
    """A header directory of the test's own (ASCEND_ACLNN_HEADERS), read first."""
    d = tmp_path / "include"
    d.mkdir()
    monkeypatch.setenv(headers.ENV_VAR, str(d))
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "none"))
    headers.reset()
    header_rules.reset()
    aa.aclnn._operators.clear()
    with aa.use_backend("numpy"):
        yield d
    headers.reset()
    header_rules.reset()
    aa.aclnn._operators.clear()


# ---------------------------------------------------------------------------------------------
# CANN's promotion and castability
# ---------------------------------------------------------------------------------------------

NAMES = ("FLOAT", "FLOAT16", "BF16", "DOUBLE", "INT8", "INT16", "INT32", "INT64", "UINT8", "BOOL", "COMPLEX64",
         "COMPLEX128")


def test_promotion_is_torch_promote_types():
    """op::PromoteType follows PyTorch's promoteTypes: every pair of the dtypes both know."""
    torch = pytest.importorskip("torch")
    by = {"FLOAT": torch.float32, "FLOAT16": torch.float16, "BF16": torch.bfloat16, "DOUBLE": torch.float64,
          "INT8": torch.int8, "INT16": torch.int16, "INT32": torch.int32, "INT64": torch.int64, "UINT8": torch.uint8,
          "BOOL": torch.bool, "COMPLEX64": torch.complex64, "COMPLEX128": torch.complex128}
    back = {v: k for k, v in by.items()}
    for a, b in itertools.product(NAMES, NAMES):
        assert refusals.promote(a, b) == back[torch.promote_types(by[a], by[b])], (a, b)
    assert refusals.promote("UINT16", "INT32") is None and refusals.promote("UINT64", "FLOAT") is None


def test_can_cast_is_opbase_can_cast():
    for a, b in itertools.product(NAMES, NAMES):
        refused = (a.startswith("COMPLEX") and not b.startswith("COMPLEX")) or \
            (a in ("FLOAT", "FLOAT16", "BF16", "DOUBLE", "COMPLEX64", "COMPLEX128") and b.startswith("INT")) or \
            (a in ("FLOAT", "FLOAT16", "BF16", "DOUBLE", "COMPLEX64", "COMPLEX128") and b == "UINT8") or \
            (a != "BOOL" and b == "BOOL")
        assert refusals.can_cast(a, b) is not refused, (a, b)


def test_scalar_dtypes_as_the_binding_sends_them():
    assert [refusals.acl_name(v) for v in (True, 2, 2.5, 1j, np.float16(1), np.int32(1))] == \
        ["BOOL", "INT64", "DOUBLE", "COMPLEX128", "FLOAT16", "INT32"]
    assert refusals.acl_name(np.dtype(ml_dtypes.bfloat16)) == "BF16"


# ---------------------------------------------------------------------------------------------
# the hand list: what the issue found (Add of float32 into int32, written truncated)
# ---------------------------------------------------------------------------------------------

def test_add_of_floats_into_an_int_out_is_refused_as_cann_does(no_headers):
    x = np.array([1.5, 2.5], np.float32)
    out = np.full(2, -7, np.int32)
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.Add(x, x, 1, out)
    e = info.value
    assert e.status == 161002 and e.argument == "out"
    assert "promoted dtype FLOAT" in e.detail and "INT32" in e.detail
    assert "hicann/ops-math math/add/op_api/aclnn_add.cpp" in e.detail  # where the rule comes from
    assert out.tolist() == [-7, -7]  # refused before computing: out untouched


@pytest.mark.parametrize("args,argument,words", [
    ((np.ones(2, np.float32), np.ones(2, np.float32), 1.5, np.empty(2, np.float32)), None, None),
    ((np.ones(2, np.int32), np.ones(2, np.int32), 1.5, np.empty(2, np.int32)), "alpha", "DOUBLE"),
    ((np.ones(2, np.uint16), np.ones(2, np.int32), 1, np.empty(2, np.int32)), "self", "UINT16"),
    ((np.ones((2, 3), np.float32), np.ones(2, np.float32), 1, np.empty((2, 3), np.float32)), "self", "broadcast"),
    ((np.ones((2, 3), np.float32), np.ones(3, np.float32), 1, np.empty((3, 3), np.float32)), "out", "broadcast"),
    ((np.ones((1,) * 9, np.float32), np.ones(1, np.float32), 1, np.empty((1,) * 9, np.float32)), "self", "8"),
    ((np.ones(2, np.float32), np.ones(2, np.float32), 1, np.empty(2, bool)), "out", "BOOL"),
])
def test_add_rules(no_headers, args, argument, words):
    if argument is None:
        aa.aclnn.Add(*args)
        return
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.Add(*args)
    assert info.value.argument == argument and words in info.value.detail


def test_foreach_tiling_refusals_carry_cann_status(no_headers):
    """The foreach tiling refuses with 561002 on the NPU; the CPU refuses with the same status."""
    xs = [np.ones(2, np.float32), np.ones(2, np.float32)]
    with pytest.raises(AclnnError) as info:
        aa.aclnn.ForeachMulScalarList(xs, [1.0], [np.empty(2, np.float32), np.empty(2, np.float32)])
    assert info.value.status == 561002 and info.value.argument == "scalars"


# ---------------------------------------------------------------------------------------------
# outputs CANN takes in more than one shape (item 3)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_losses_take_a_one_element_out_of_either_shape(no_headers, shape):
    pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, t = rng.random((2, 3), np.float32), rng.random((2, 3), np.float32)
    want = np.float32(np.mean(np.where(np.abs(x - t) < 1, 0.5 * (x - t) ** 2, np.abs(x - t) - 0.5)))
    out = aa.aclnn.SmoothL1Loss(x, t, 1, 1.0, np.full(shape, np.nan, np.float32))
    assert out.shape == shape and np.allclose(out.reshape(()), want, rtol=1e-5)
    kl = aa.aclnn.KlDiv(np.log(x), t, 2, False, np.full(shape, np.nan, np.float32))
    assert kl.shape == shape and np.isfinite(kl).all()
    norms = aa.aclnn.ForeachNorm([x, t], 2.0, [np.full(shape, np.nan, np.float32) for _ in range(2)])
    assert [n.shape for n in norms] == [shape] * 2
    assert np.allclose([n.reshape(()) for n in norms], [np.linalg.norm(x), np.linalg.norm(t)], rtol=1e-5)


def test_one_element_is_not_taken_where_cann_checks_the_shape_exactly(no_headers):
    """Add compares out with the broadcast shape exactly: a () result into (1,) is refused."""
    with pytest.raises(AclnnParamInvalidError, match="broadcast shape"):
        aa.aclnn.Add(np.float32(1) * np.ones((), np.float32), np.ones((), np.float32), 1, np.empty(1, np.float32))
    with pytest.raises(AclnnParamInvalidError, match="expected shape"):  # two elements are never one
        aa.aclnn.SmoothL1Loss(np.ones(2, np.float32), np.ones(2, np.float32), 1, 1.0, np.empty(2, np.float32))


def test_reduce_sum_of_an_empty_self_fills_out_whatever_its_shape(no_headers):
    out = np.full((5,), 7.0, np.float32)
    aa.aclnn.ReduceSum(np.ones((0, 3), np.float32), [0], False, F32, out)
    assert out.tolist() == [0.0] * 5


# ---------------------------------------------------------------------------------------------
# rules read from a header's comments
# ---------------------------------------------------------------------------------------------

def test_header_comment_parser():
    comment = textwrap.dedent("""\
        /**
         * @brief a made-up operator's first phase.
         * @param [in] self: device侧的aclTensor，数据类型支持FLOAT、FLOAT16、DOUBLE，且数据类型需要与other构成互相推导关系，
         * shape需要与other满足broadcast关系，维度不大于8。
         * @param [in] other: 数据类型支持整型，浮点类型。
         * @param [in] weight: 数据类型支持FLOAT、UNIT8。
         * @param [in] alpha: 数据类型需要可转换成self与other推导后的数据类型。
         * @param [in] mode: 取值为"sum"或"mean"。
         * @param [in] level: 取值范围为[0, 3)。
         * @param [in] gamma: Atlas 训练系列产品：数据类型支持FLOAT16。Atlas A2 训练系列产品：数据类型支持FLOAT16、BFLOAT16。
         * @param [out] out: 数据类型需要是self与other推导之后可转换的数据类型，shape与self一致，数据类型与self相同。
         * @param [out] total: shape为(1,)。
         * @param [out] workspaceSize: 返回workspace大小。
         */""")
    text = " ".join(line.strip(" */") for line in comment.splitlines())
    params = {"self", "other", "weight", "alpha", "mode", "level", "gamma", "out", "total"}
    got = {(r.kind, r.param, r.args) for r in header_rules.parse_comment(text, params, "x.h:1")}
    assert got == {
        ("dtypes", "self", ("FLOAT", "FLOAT16", "DOUBLE")), ("promotable", "self", ("other",)),
        ("broadcast", "self", ("other",)), ("max_rank", "self", (8,)),
        # other: category words are not a list; weight: UNIT8 is no dtype, so the list is not read
        ("cast_to_promoted", "alpha", ("self", "other")), ("choice", "mode", ("sum", "mean")),
        ("range", "level", (0, 2)), ("dtypes", "gamma", ("FLOAT16", "BF16")),  # the Atlas A2 list
        ("promote_cast", "out", ("self", "other")), ("same_shape", "out", ("self",)), ("same_dtype", "out", ("self",)),
        ("one_element", "total", ())}


HEADER = """\
#include "aclnn/aclnn_base.h"
/**
 * @brief aclnnMyScale: out = self * 2 (written for this test, in the form of CANN's headers).
 * @param [in] self: device侧的aclTensor，数据类型支持FLOAT、FLOAT16，维度不大于8。
 * @param [in] mode: 取值为"fast"或"exact"。
 * @param [out] out: device侧的aclTensor，数据类型与self一致，shape与self一致。
 * @param [out] workspaceSize: 返回workspace大小。
 * @param [out] executor: 返回op执行器。
 */
aclnnStatus aclnnMyScaleGetWorkspaceSize(const aclTensor *self, const char *mode, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMyScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
"""


def test_a_headers_rules_are_enforced_for_a_registered_reference(header_dir):
    (header_dir / "aclnn_my_scale.h").write_text(HEADER, encoding="utf-8")
    aa.aclnn.register_reference("aclnnMyScale", lambda self, mode: self * 2)
    try:
        x = np.ones((2, 3), np.float32)
        assert aa.aclnn.MyScale(x, "fast", np.empty_like(x)).tolist() == [[2.0] * 3] * 2
        cases = [((x.astype(np.float64), "fast", np.empty((2, 3))), "self", "FLOAT64|DOUBLE"),
                 ((x, "slow", np.empty_like(x)), "mode", "'slow'"),
                 ((x, "fast", np.empty((2, 3), np.float16)), "out", "FLOAT16"),
                 ((x, "fast", np.empty((3, 2), np.float32)), "out", r"\(3, 2\)"),
                 ((np.ones((1,) * 9, np.float32), "fast", np.empty((1,) * 9, np.float32)), "self", "9 dimensions")]
        for args, argument, words in cases:
            with pytest.raises(AclnnParamInvalidError) as info:
                aa.aclnn.MyScale(*args)
            assert info.value.argument == argument and re.search(words, info.value.detail), info.value.detail
            assert "aclnn_my_scale.h:2" in info.value.detail  # the header and line the rule was read from
    finally:
        aa.aclnn.register_reference("aclnnMyScale", None)


CMP_HEADER = """\
/**
 * @brief aclnnMyCmp: out = self <= other (written for this test, in the form of CANN's headers).
 * @param [in] self: device侧的aclTensor，数据类型支持FLOAT、FLOAT16。
 * @param [in] other: host侧的aclScalar，数据类型支持FLOAT16。
 * @param [out] out: device侧的aclTensor，数据类型支持INT8。
 */
aclnnStatus aclnnMyCmpGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor);
"""


def test_a_headers_lists_for_outputs_and_scalars_are_not_enforced(header_dir):
    """Op_apis check an output by castability and convert a scalar: a header's lists there
    (incomplete in 8.1.RC1: LeScalar's out list has no BOOL) do not refuse."""
    (header_dir / "aclnn_my_cmp.h").write_text(CMP_HEADER, encoding="utf-8")
    aa.aclnn.register_reference("aclnnMyCmp", lambda self, other: self <= other)
    try:
        x = np.arange(3, dtype=np.float32)
        assert aa.aclnn.MyCmp(x, 1.5, np.empty(3, bool)).tolist() == [True, True, False]
        with pytest.raises(AclnnParamInvalidError, match="self dtype DOUBLE"):  # an input's list still holds
            aa.aclnn.MyCmp(x.astype(np.float64), 1.5, np.empty(3, bool))
    finally:
        aa.aclnn.register_reference("aclnnMyCmp", None)


# ---------------------------------------------------------------------------------------------
# side by side: every operator the simulator implements, on both backends
# ---------------------------------------------------------------------------------------------

@pytest.mark.simulator
def test_side_by_side_no_call_is_accepted_by_one_backend_and_refused_by_the_other(sim):
    pytest.importorskip("torch", reason="aclnnAdd's CPU reference on the numpy backend runs on PyTorch")
    found = side_by_side.run_both()
    ops = {o.op for o in found}
    assert {"Add", "Cat", "ReduceSum", "SplitTensor", "ForeachMulScalarList", "CustomMaskedScale"} <= ops
    differ = [o for o in found if o.mismatch and not o.simulator_gap]
    assert differ == [], side_by_side.summary(found) + "\n" + "\n".join(
        f"{o.op} {o.label}: numpy {o.numpy} | npu {o.npu}" for o in differ[:20])
    # the calls mean something: each backend accepts and refuses a good share of them
    refused = sum(not side_by_side.Outcome.accepted(o.npu) for o in found)
    assert 0.2 < refused / len(found) < 0.8
    # a refusal has the same status on both backends
    status = re.compile(r"\w+ (\d+):")
    both = [o for o in found if not side_by_side.Outcome.accepted(o.numpy) and not side_by_side.Outcome.accepted(o.npu)]
    same = [o for o in both if (status.match(o.numpy) or [None, "x"])[1] == (status.match(o.npu) or [None, "y"])[1]]
    assert len(same) == len(both), [(o.op, o.label, o.numpy, o.npu) for o in both if o not in same][:5]
    # where the simulator does not compute what CANN does, it says so (a capability gap, not a check)
    assert all(o.simulator_gap for o in found if o.mismatch)
    assert_no_leaks(sim)
