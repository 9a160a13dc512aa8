"""Raw operators on the numpy backend (ascend_aclnn.cpu_reference): the simulator and the CPU
reference checking each other, the described operators' raw calls, register_reference,
reference()/names(), the refusals, plans, threads, and scripts run with no CANN at all.

The table rows used here are whatever the shipped table holds for the simulator's own
operators (Add, Cat, SplitTensor, ReduceSum, ForeachMulScalarList); rows with properties the
table may not have (literals, in-place, formulas) are given through a stand-in table.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Optional

import ml_dtypes
import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import aclnn, testing
from ascend_aclnn.cann import headers
from ascend_aclnn.cpu_reference import runner
from ascend_aclnn.errors import AclnnParamInvalidError
from conftest import ROOT, run_python
from op_db import OP_DB
from test_aclnn import masked_scale, raw_arguments, same_bits

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "headers" / "cpu_reference"
torch = pytest.importorskip("torch")


def both(call):
    """call() on the simulator, then on the numpy backend: the two results (host copies)."""
    out = []
    for backend in ("npu", "numpy"):
        with aa.use_backend(backend):
            got = call()
        got = got if isinstance(got, (tuple, list)) else (got,)
        out.append([g.numpy() if isinstance(g, aa.DeviceArray) else np.array(g, copy=True) for g in got])
    return out


# ---------------------------------------------------------------------------------------------
# two implementations checking each other: the simulator's operators and the CPU reference
# ---------------------------------------------------------------------------------------------

def _add(rng, dt):
    x = (rng.standard_normal((2, 3, 4)) * 20).astype(dt)
    y = (rng.standard_normal((3, 1)) * 20).astype(dt)
    alpha = 3 if np.dtype(dt).kind == "i" else 0.5
    return lambda: aa.aclnn.Add(x, y, alpha, np.full((2, 3, 4), 7, dt))


def _cat(rng, dt):
    a, b = (rng.standard_normal((2, 3)) * 9).astype(dt), (rng.standard_normal((1, 3)) * 9).astype(dt)
    return lambda: aa.aclnn.Cat([a, b, a], 0, np.full((5, 3), 7, dt))


def _split(rng, dt):
    x = (rng.standard_normal((5, 3)) * 9).astype(dt)
    return lambda: aa.aclnn.SplitTensor(x, 2, 0, [np.full((2, 3), 7, dt), np.full((2, 3), 7, dt),
                                                  np.full((1, 3), 7, dt)])


def _reduce_sum(rng, dt):
    x = (rng.standard_normal((2, 3, 4)) * 9).astype(dt)
    return lambda: aa.aclnn.ReduceSum(x, [0, -1], True, dt, np.full((1, 3, 1), 7, dt))


def _foreach(rng, dt):
    xs = [(rng.standard_normal(s) * 10).astype(dt) for s in ((2, 3), (4,), (1, 2, 2))]
    scalars = [3, -2, 5] if np.dtype(dt).kind == "i" else [0.5, -1.25, 3.0]
    return lambda: aa.aclnn.ForeachMulScalarList(xs, scalars, [np.full(x.shape, 7, dt) for x in xs])


SIM_CASES = [("Add", _add, dt) for dt in (np.float32, np.float64, np.int32, np.int64)] + \
            [("Cat", _cat, dt) for dt in (np.float32, np.float16, np.int64)] + \
            [("SplitTensor", _split, dt) for dt in (np.float32, np.int32)] + \
            [("ReduceSum", _reduce_sum, dt) for dt in (np.float32, np.float64)] + \
            [("ForeachMulScalarList", _foreach, dt) for dt in (np.float32, np.float16, ml_dtypes.bfloat16, np.int32)]


@pytest.mark.parametrize("name,make,dtype", SIM_CASES, ids=[f"{n}-{np.dtype(d)}" for n, _, d in SIM_CASES])
def test_the_simulator_and_the_cpu_reference_agree(sim, name, make, dtype):
    """The simulator's C kernels and the op-plugin table's aten op, under CANN's precision
    standard; each written array is the caller's and comes back whole."""
    assert aa.aclnn.reference(name).source == "table"  # the generated table (its hand tier included)
    npu_out, cpu_out = both(make(np.random.default_rng(7), dtype))
    assert len(npu_out) == len(cpu_out)
    for n, c in zip(npu_out, cpu_out):
        testing.assert_close(c, n, msg=f"{name} {np.dtype(dtype)}")


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_raw_calls_of_described_operators_run_their_numpy_reference(numpy_backend, name):
    """The raw call, in the header's parameter order, equals the described function bit for bit."""
    spec = aa.ops.REGISTRY[name]
    info = OP_DB[name]
    assert aa.aclnn.reference(spec.aclnn).source == "described"
    sample = info.samples(info.dtypes[0], np.random.default_rng(0))[0]
    want = getattr(aa, name)(*sample.args, **sample.kwargs)
    want = want if isinstance(want, tuple) else (want,)
    outs = [np.zeros(shape, dt) for shape, dt in spec.infer(spec.bind(sample.args, sample.kwargs))]
    got = aa.aclnn.operator(spec.aclnn)(*raw_arguments(spec, sample, outs))
    got = got if isinstance(got, tuple) else (got,)
    assert all(g is o for g, o in zip(got, outs))
    for w, g in zip(want, got):
        if w is not None:
            assert same_bits(g, w)


def test_a_described_operators_checks_name_the_headers_parameter(numpy_backend):
    x = np.ones((1, 2, 5, 5), np.float32)
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.MaxPool2dWithMask(x, [2, 2], [2, 2], [0, 0], [1, 1], False, np.empty((1, 2, 2, 2), np.float32),
                                   np.empty((1, 2, 4, 1), np.int8))
    assert info.value.argument == "indices" and info.value.status == 161002


# ---------------------------------------------------------------------------------------------
# conversions: scalars, dtypes, DeviceArrays, outputs
# ---------------------------------------------------------------------------------------------

def test_outputs_are_cast_into_the_callers_arrays_and_returned(numpy_backend):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 3
    out16 = np.full((2, 3), np.nan, np.float16)
    assert aa.aclnn.Add(x, x, 1.0, out16) is out16
    assert same_bits(out16, (x + x).astype(np.float16))  # rounded once from the float32 result
    dev = aa.to_device(x)
    out = aa.empty((2, 3), np.float32)
    assert aa.aclnn.Add(dev, x, 2, out) is out and np.array_equal(out.numpy(), x + 2 * x)
    bf = np.full((2, 3), 0, ml_dtypes.bfloat16)
    aa.aclnn.Add(x.astype(ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16), 1, bf)
    assert same_bits(bf, (x.astype(ml_dtypes.bfloat16).astype(np.float32) * 2).astype(ml_dtypes.bfloat16))
    # the pieces of out share one dtype (CANN refuses others), cast from self's
    pieces = [np.empty((2, 3), np.int64), aa.empty((1, 3), np.int64), np.full((1, 3), 7, np.int64)]
    got = aa.aclnn.SplitTensor(np.arange(9, dtype=np.float32).reshape(3, 3), 2, 0, pieces)
    assert isinstance(got, list) and all(g is p for g, p in zip(got, pieces))
    assert pieces[0].tolist() == [[0, 1, 2], [3, 4, 5]] and np.array_equal(pieces[1].numpy(), [[6, 7, 8]])
    assert pieces[2].tolist() == [[7] * 3]  # past the pieces: left alone, as the simulator (and CANN) do


def test_a_wrong_output_shape_is_161002_naming_the_output(numpy_backend):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.Add(x, x, 1.0, np.empty((3, 3), np.float32))
    assert info.value.status == 161002 and info.value.argument == "out"
    assert "the broadcast shape (2, 3) of self and other, got (3, 3)" in str(info.value)  # refused before computing
    with pytest.raises(AclnnParamInvalidError) as info:  # a tensor list one item short
        aa.aclnn.SplitTensor(np.ones((5, 3), np.float32), 2, 0, [np.empty((2, 3), np.float32)] * 2)
    assert info.value.argument == "out" and "expected at least 3 tensors" in str(info.value)
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.SplitTensor(np.ones((5, 3), np.float32), 2, 0, [np.empty((2, 3), np.float32)] * 2 +
                             [np.empty((2, 3), np.float32)])
    assert info.value.argument == "out[2]"


def test_the_reference_receives_what_c_receives(numpy_backend):
    """aclScalar: a Python number for the default dtypes, aa.Scalar and NumPy scalars keep
    theirs; aclDataType as np.dtype; aclFloatArray and C float as float32 values."""
    seen: dict[str, Any] = {}

    def record(**kwargs):
        seen.update(kwargs)
        return np.zeros((2, 3), np.float32)

    x = np.ones((2, 3), np.float32)
    aa.aclnn.register_reference("Add", record)
    try:
        aa.aclnn.Add(x, x, aa.Scalar(2, np.float16), np.empty_like(x))
        assert type(seen["alpha"]) is np.float16 and seen["alpha"] == 2 and set(seen) == {"self", "other", "alpha"}
        aa.aclnn.Add(x, x, 2, np.empty_like(x))
        assert type(seen["alpha"]) is int
        assert not seen["self"].flags.writeable  # inputs are read-only views of the caller's arrays
        assert np.shares_memory(seen["self"], x)
    finally:
        aa.aclnn.register_reference("Add", None)
    aa.aclnn.register_reference("CustomMaskedScale", record)
    try:
        aa.aclnn.CustomMaskedScale(x, [0.1, 0.2, 0.3], [True, False, True], "mul", 0.1, 2, np.empty_like(x))
        assert seen["weights"] == [float(np.float32(v)) for v in (0.1, 0.2, 0.3)]
        assert seen["scale"] == float(np.float32(0.1)) and seen["mask"] == [True, False, True]
    finally:
        aa.aclnn.register_reference("CustomMaskedScale", None)
    aa.aclnn.ReduceSum(x, [0], False, "float64", np.empty(3, np.float64))  # dtype by name, to the row's aten op


# ---------------------------------------------------------------------------------------------
# register_reference, reference(), names()
# ---------------------------------------------------------------------------------------------

def test_register_reference_overrides_a_row_and_is_removed_with_none(numpy_backend):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    aa.aclnn.register_reference("aclnnAdd", lambda self, other, alpha: self - alpha * other)
    try:
        assert np.array_equal(aa.aclnn.Add(x, x, 2.0, np.empty_like(x)), -x)
        ref = aa.aclnn.reference("Add")
        assert ref.source == "registered" and ref.tier == "registered"
    finally:
        aa.aclnn.register_reference("aclnnAdd", None)
    assert aa.aclnn.reference("Add").source == "table"
    assert np.array_equal(aa.aclnn.Add(x, x, 2.0, np.empty_like(x)), 3 * x)


def test_register_reference_with_torch(numpy_backend):
    seen = []

    def fn(self, other, alpha):
        seen.append((type(self), type(alpha)))
        return torch.maximum(self, other)

    aa.aclnn.register_reference("Add", fn, framework="torch")
    try:
        x, y = np.array([1.0, 5.0], np.float32), np.array([3.0, 2.0], np.float32)
        assert aa.aclnn.Add(x, y, 1, np.empty(2, np.float32)).tolist() == [3.0, 5.0]
        assert seen == [(torch.Tensor, int)]
    finally:
        aa.aclnn.register_reference("Add", None)


def test_register_reference_refuses_what_cannot_serve():
    with pytest.raises(ValueError, match="framework: expected 'numpy' or 'torch', got 'jax'"):
        aa.aclnn.register_reference("Add", lambda **k: None, framework="jax")
    with pytest.raises(TypeError, match="fn: expected a function"):
        aa.aclnn.register_reference("Add", 3)
    with pytest.raises(TypeError, match=r"must take the operator's input parameters as keywords "
                                        r"\(self, other, alpha\)"):
        aa.aclnn.register_reference("Add", lambda x, y: x)
    aa.aclnn.register_reference("Add", None)
    assert aa.aclnn.reference("Add").source == "table"


def test_a_reference_for_an_operator_no_header_declares(numpy_backend):
    """params= gives the prototype; the written parameters follow the header reader's rules."""
    aa.aclnn.register_reference("aclnnMyScale", lambda x, factor: x * factor,
                                params="const aclTensor *x, double factor, aclTensor *out")
    try:
        x = np.arange(3, dtype=np.float32)
        assert aa.aclnn.MyScale(x, 2.0, np.empty(3, np.float32)).tolist() == [0.0, 2.0, 4.0]
        assert "aclnnMyScale" in aa.aclnn.names(reference=True) and "aclnnMyScale" not in aa.aclnn.names()
        assert aa.aclnn.prototype("MyScale").header == "<register_reference params>"
    finally:
        aa.aclnn.register_reference("aclnnMyScale", None)
        aclnn._operators.clear()
    with pytest.raises(ValueError, match="params of aclnnBad"):
        aa.aclnn.register_reference("aclnnBad", lambda x: x, params="struct Foo *x, aclTensor *out")


def test_reference_and_names(sim):
    ref = aa.aclnn.reference("Add")
    text = str(ref)
    assert ref.source == "table" and "add" in ref.aten[0] and ref.evidence
    assert text.startswith("aclnnAdd: CPU reference from the table derived from op-plugin")
    assert "out (aclTensor *): aten result 0" in text
    described = aa.aclnn.reference("UpsampleNearestExact1d")
    assert described.source == "described" and "ascend_aclnn.upsample_nearest_exact1d" in str(described)
    with pytest.raises(LookupError, match="aclnnCustomMaskedScale has no CPU reference"):
        aa.aclnn.reference("CustomMaskedScale")
    names = aa.aclnn.names(reference=True)
    declared = set(aa.aclnn.names())
    assert {"aclnnAdd", "aclnnCat", "aclnnUpsampleNearestExact1d"} <= set(names)
    assert "aclnnCustomMaskedScale" not in names and names == sorted(names)
    # undeclared operators run with their row's own prototype, when the row's parameters came from a header
    own = {n for n in set(runner.table_names()) - declared if any(r.from_header for r in runner.table_rows(n))}
    assert own and own <= set(names)


# ---------------------------------------------------------------------------------------------
# a stand-in table and formula: literals, in-place, formulas, mismatches
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class B:
    name: str
    c_type: str
    kind: str
    is_output: bool
    bind: str
    arg: Optional[str] = None
    result: Optional[int] = None
    value: Any = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class Row:
    aclnn: str
    aten: str
    params: tuple
    fixed: Mapping[str, Any] = field(default_factory=dict)
    tier: str = "strict"
    evidence: tuple = ("fixture.cpp:1",)
    in_cann_8_1_rc1: bool = True


@dataclass(frozen=True)
class Formula:
    aclnn: str
    params: str
    fn: Any
    doc: str


LIST_IN = B("x", "const aclTensorList *", "aclTensorList", False, "arg", arg="self")
LIST_OUT = B("out", "const aclTensorList *", "aclTensorList", True, "result", result=0)
STAND_IN = {
    "aclnnFixtureRound": (Row("aclnnFixtureRound", "_foreach_floor", (LIST_IN, B("mode", "const aclScalar *", "aclScalar",
                                                                                  False, "literal", value=2), LIST_OUT)),
                          Row("aclnnFixtureRound", "_foreach_ceil", (LIST_IN, B("mode", "const aclScalar *", "aclScalar",
                                                                                 False, "literal", value=3), LIST_OUT))),
    "aclnnFixtureInplaceAdd": (Row("aclnnFixtureInplaceAdd", "add.Tensor", (
        B("selfRef", "const aclTensor *", "aclTensor", True, "arg+result", arg="self", result=0),
        B("other", "const aclTensor *", "aclTensor", False, "arg", arg="other"),
        B("alpha", "const aclScalar *", "aclScalar", False, "arg", arg="alpha"))),),
    "aclnnFixtureMatmul": (Row("aclnnFixtureMatmul", "mm", (
        B("self", "const aclTensor *", "aclTensor", False, "arg", arg="self"),
        B("mat2", "const aclTensor *", "aclTensor", False, "arg", arg="mat2"),
        B("out", "aclTensor *", "aclTensor", True, "result", result=0),
        B("cubeMathType", "int8_t", "int8_t", False, "ignored", reason="an NPU precision knob")), tier="relaxed"),),
    "aclnnFixtureMax": (Row("aclnnFixtureMax", "max.dim", (
        B("self", "const aclTensor *", "aclTensor", False, "arg", arg="self"),
        B("dim", "int64_t", "int64_t", False, "arg", arg="dim"),
        B("keepdim", "bool", "bool", False, "arg", arg="keepdim"),
        B("out", "aclTensor *", "aclTensor", True, "result", result=0),
        B("indices", "aclTensor *", "aclTensor", True, "result", result=1))),),
    "aclnnFixtureLayerNorm": (Row("aclnnFixtureLayerNorm", "native_layer_norm", (
        B("input", "const aclTensor *", "aclTensor", False, "arg", arg="input"),
        B("normalizedShape", "const aclIntArray *", "aclIntArray", False, "arg", arg="normalized_shape"),
        B("weightOptional", "const aclTensor *", "aclTensor", False, "arg", arg="weight"),
        B("biasOptional", "const aclTensor *", "aclTensor", False, "arg", arg="bias"),
        B("eps", "double", "double", False, "arg", arg="eps"),
        B("out", "aclTensor *", "aclTensor", True, "result", result=0),
        B("meanOutOptional", "aclTensor *", "aclTensor", True, "result", result=1),
        B("rstdOutOptional", "aclTensor *", "aclTensor", True, "result", result=2))),),
    # a row for Add whose parameters do not match the simulator's header (3, not 4)
    "aclnnAdd": (Row("aclnnAdd", "add.Tensor", (B("self", "const aclTensor *", "aclTensor", False, "arg", arg="self"),
                                                B("other", "const aclTensor *", "aclTensor", False, "arg", arg="other"),
                                                B("out", "aclTensor *", "aclTensor", True, "result", result=0))),),
}
FORMULAS = {
    "aclnnFixtureRmsNorm": Formula(
        "aclnnFixtureRmsNorm", "const aclTensor *x, const aclTensor *gamma, double epsilon, aclTensor *yOut, "
        "aclTensor *rstdOut",
        lambda x, gamma, epsilon: (x / np.sqrt((x.astype(np.float32) ** 2).mean(-1, keepdims=True) + epsilon) * gamma,
                                   1 / np.sqrt((x.astype(np.float32) ** 2).mean(-1, keepdims=True) + epsilon)),
        "RMS norm (a test fixture)"),
    "aclnnCat": Formula("aclnnCat", "const aclTensorList *tensors, aclTensor *out", lambda tensors: tensors[0],
                        "a formula whose parameters do not match the header"),
}


@pytest.fixture
def stand_in(monkeypatch, numpy_backend):
    monkeypatch.setattr(runner, "table_rows", lambda name: STAND_IN.get(name, ()))
    monkeypatch.setattr(runner, "table_names", lambda: tuple(sorted(STAND_IN)))
    monkeypatch.setattr(runner, "_formulas", lambda: FORMULAS)
    runner._generation[0] += 1
    aclnn._operators.clear()
    yield
    runner._generation[0] += 1
    aclnn._operators.clear()


def test_rows_are_chosen_by_their_literals(stand_in):
    x = [np.array([1.5, -1.5], np.float32)]
    assert aa.aclnn.FixtureRound(x, 2, [np.empty(2, np.float32)])[0].tolist() == [1.0, -2.0]
    assert aa.aclnn.FixtureRound(x, 3, [np.empty(2, np.float32)])[0].tolist() == [2.0, -1.0]
    with pytest.raises(NotImplementedError, match=r"covers only the values op-plugin passes: mode = 2 "
                                                  r"\(_foreach_floor\); mode = 3 \(_foreach_ceil\); got mode = 4"):
        aa.aclnn.FixtureRound(x, 4, [np.empty(2, np.float32)])


def test_in_place_rows_read_then_write_the_callers_array(stand_in):
    x = np.array([1.0, 2.0], np.float32)
    got = aa.aclnn.FixtureInplaceAdd(x, np.array([10.0, 20.0], np.float32), 2)
    assert got is x and x.tolist() == [21.0, 42.0]
    assert aa.aclnn.prototype("FixtureInplaceAdd").params[0].inplace


def test_ignored_knobs_and_several_results(stand_in):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((3, 2), np.float32)
    out = aa.aclnn.FixtureMatmul(a, b, np.empty((2, 2), np.float32), 1)
    assert np.array_equal(out, a @ b)
    assert "ignored on the CPU (an NPU precision knob)" in str(aa.aclnn.reference("FixtureMatmul"))
    values, indices = aa.aclnn.FixtureMax(a, 1, False, np.empty(2, np.float32), np.empty(2, np.int32))
    assert values.tolist() == [2.0, 5.0] and indices.tolist() == [2, 2] and indices.dtype == np.int32


def test_an_output_wider_than_atens_result_is_computed_at_its_own_precision(stand_in):
    """op-plugin gives LayerNorm float32 mean/rstd for float16 input (the NPU computes them in
    float32); torch's CPU kernel returns them in float16. The wider outputs are computed from
    the inputs cast to their dtype, not widened after rounding to float16; out keeps aten's
    float16 result."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8)).astype(np.float16)
    w, b = rng.standard_normal(8).astype(np.float16), rng.standard_normal(8).astype(np.float16)
    out, mean, rstd = np.full(x.shape, np.nan, np.float16), np.full((2, 3, 1), np.nan, np.float32), \
        np.full((2, 3, 1), np.nan, np.float32)
    aa.aclnn.FixtureLayerNorm(x, [8], w, b, 1e-5, out, mean, rstd)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean, x64.mean(-1, keepdims=True), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x64.var(-1, keepdims=True) + 1e-5), rtol=1e-6)
    t = [torch.from_numpy(v) for v in (x, w, b)]
    want = torch.ops.aten.native_layer_norm(t[0], [8], t[1], t[2], 1e-5)[0]
    assert np.array_equal(out, want.numpy())


def test_hand_formulas_come_after_the_description_and_before_the_table(stand_in):
    x = np.array([[3.0, 4.0]], np.float32)
    y, rstd = aa.aclnn.FixtureRmsNorm(x, np.ones(2, np.float32), 0.0, np.empty((1, 2), np.float32),
                                      np.empty((1, 1), np.float32))
    assert np.allclose(rstd, 1 / np.sqrt(12.5)) and np.allclose(y, x / np.sqrt(12.5))
    assert aa.aclnn.reference("FixtureRmsNorm").source == "formula"
    assert aa.aclnn.reference("FixtureRmsNorm").doc == "RMS norm (a test fixture)"


def test_a_hand_row_gives_the_reference_its_tier(numpy_backend, monkeypatch):
    """The table's third tier (rows reviewed by hand) shows in reference(), not as relaxed."""
    from ascend_aclnn.cpu_reference import table
    row = table.rows("aclnnCat")[0]
    monkeypatch.setattr(runner, "table_rows", lambda name: (replace(row, tier="hand"),) if name == "aclnnCat" else ())
    runner._generation[0] += 1
    try:
        assert aa.aclnn.reference("Cat").tier == "hand"
    finally:
        runner._generation[0] += 1


def test_a_reference_that_does_not_fit_the_header_is_refused(stand_in, sim):
    """The simulator's aclnnAdd header has 4 parameters: a 3-parameter row is refused, never
    guessed; likewise a formula for Cat with another parameter list."""
    x = np.ones(2, np.float32)
    with pytest.raises(NotImplementedError) as info:
        aa.aclnn.Add(x, x, 1.0, np.empty_like(x))
    assert str(info.value) == ("aclnnAdd has no CPU reference for the numpy backend: the table row for aten "
                               "add.Tensor: it has 3 parameters, the header 4 (refused). Run it on the npu "
                               "backend, or give one with ascend_aclnn.aclnn.register_reference.")
    with pytest.raises(NotImplementedError, match=r"the hand formula: it has 2 parameters, the header 3 \(refused\)"):
        aa.aclnn.Cat([x], 0, np.empty_like(x))


def test_a_header_that_changes_an_operator_refuses_its_row(numpy_backend):
    """A header fixture declaring aclnnAdd without alpha: the table's row (4 parameters)
    no longer fits, and the call says so."""
    aa.aclnn.add_headers(FIXTURES)
    try:
        assert [p.name for p in aa.aclnn.prototype("Add").params] == ["self", "other", "out"]
        x = np.ones(2, np.float32)
        with pytest.raises(NotImplementedError, match=r"aclnnAdd has no CPU reference for the numpy backend: the "
                                                      r"table row for aten add\.Tensor: it has 4 parameters, the "
                                                      r"header 3 \(refused\)"):
            aa.aclnn.Add(x, x, np.empty_like(x))
        with pytest.raises(LookupError, match="it has 4 parameters, the header 3"):
            aa.aclnn.reference("Add")
    finally:
        headers.reset()
        aclnn._operators.clear()


def test_no_reference_says_why_and_names_the_described_function(numpy_backend, sim):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError) as info:
        aa.aclnn.CustomMaskedScale(x, [1.0] * 3, [True] * 3, "mul", 1.0, 0, np.empty_like(x))
    assert str(info.value).startswith("aclnnCustomMaskedScale has no CPU reference for the numpy backend: none "
                                      "registered, no hand formula, and no row in the table derived from op-plugin")
    assert runner.missing("aclnnIm2col", ["x: y"]).endswith(
        "(refused). ascend_aclnn.im2col describes this operator and runs on both backends. Run it on the npu "
        "backend, or give one with ascend_aclnn.aclnn.register_reference.")


@pytest.fixture
def no_cann(monkeypatch, tmp_path, numpy_backend):
    """A machine with no CANN: no header anywhere, as in a CPU-only venv."""
    for key in (headers.ENV_VAR, "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    headers.reset()
    aclnn._operators.clear()
    yield
    headers.reset()
    aclnn._operators.clear()


def test_without_header_or_reference_the_error_says_there_is_no_cpu_reference(no_cann, monkeypatch):
    """On a CPU machine the missing header is not the news: the missing CPU reference is. The
    header's text stays (on an NPU host it is the fix), and near names are offered."""
    with pytest.raises(AttributeError) as info:
        aa.aclnn.NoSuchOp
    text = str(info.value)
    assert text.startswith("aclnnNoSuchOp has no CPU reference for the numpy backend: none registered, no hand "
                           "formula, and no row in the table derived from op-plugin"), text
    assert "no header declares aclnnNoSuchOpGetWorkspaceSize" in text and "ASCEND_ACLNN_HEADERS" in text
    assert "Did you mean" not in text
    with pytest.raises(AttributeError, match=r"Did you mean aclnnSoftmax, aclnnLogSoftmax\?$"):
        aa.aclnn.Sofmax
    # a near name this package describes is named with its function
    with pytest.raises(AttributeError, match=r"Did you mean aclnnUpsampleNearestExact1d "
                                             r"\(ascend_aclnn\.upsample_nearest_exact1d\)"):
        aa.aclnn.UpsampleNearestExact1D
    # operator(), call() and reference() say the same, as a LookupError
    with pytest.raises(headers.HeaderLookupError, match="aclnnSofmax has no CPU reference.*Did you mean aclnnSoftmax"):
        aa.aclnn.operator("Sofmax")
    with pytest.raises(LookupError, match="aclnnSofmax has no CPU reference.*Did you mean aclnnSoftmax"):
        aa.aclnn.reference("Sofmax")


def test_the_generators_reason_for_no_row_is_given_when_the_table_has_one(no_cann, monkeypatch):
    """table.why_missing(name) (the generator's reason an 8.1.RC1 operator got no row) is quoted
    where the loader provides it, for an undeclared operator and at call time for a declared one."""
    from ascend_aclnn.cpu_reference import table
    reasons = {"aclnnNoSuchOp": "op-plugin passes it a computed argument (a reduced dim list)"}
    monkeypatch.setattr(table, "why_missing", reasons.get, raising=False)
    with pytest.raises(AttributeError, match=r"^aclnnNoSuchOp has no CPU reference for the numpy backend: none "
                                             r"registered, no hand formula, and no row in the table derived from "
                                             r"op-plugin \(op-plugin passes it a computed argument \(a reduced dim "
                                             r"list\)\)\. "):
        aa.aclnn.NoSuchOp
    assert runner.missing("aclnnNoSuchOp", []).startswith(
        "aclnnNoSuchOp has no CPU reference for the numpy backend: none registered, no hand formula, and no row in "
        "the table derived from op-plugin (op-plugin passes it a computed argument (a reduced dim list)). ")


# ---------------------------------------------------------------------------------------------
# plans and threads
# ---------------------------------------------------------------------------------------------

def test_a_plan_of_a_raw_operator_on_the_numpy_backend(numpy_backend):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.empty_like(x)
    with aa.plan(aa.aclnn.Add, x, x, 2.0, out) as p:
        assert p() is out and np.array_equal(out, 3 * x)
        y = x + 1
        assert np.array_equal(p(y, x, 2.0, out), y + 2 * x)
        with pytest.raises(aa.PlanMismatchError):
            p(np.ones((3, 3), np.float32), x, 1.0, out)
    with aa.plan(aa.aclnn.SplitTensor, x, 1, 0, [np.empty((1, 3), np.float32), np.empty((1, 3), np.float32)]) as p:
        assert [a.tolist() for a in p()] == [[[0, 1, 2]], [[3, 4, 5]]]


def test_threads_share_raw_operators_on_the_numpy_backend(numpy_backend):
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((4, 5)).astype(np.float32) for _ in range(8)]
    errors: list[BaseException] = []
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        try:
            with aa.use_backend("numpy"):
                for _ in range(20):
                    out = np.empty((8, 5), np.float32)
                    aa.aclnn.Cat([xs[i], xs[i] * 2], 0, out)
                    results[i] = aa.aclnn.ReduceSum(out, [0], False, np.float32, np.empty(5, np.float32))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, x in enumerate(xs):
        testing.assert_close(results[i], x.sum(0) * 3)


# ---------------------------------------------------------------------------------------------
# processes: import cost, no torch, no CANN
# ---------------------------------------------------------------------------------------------

def test_import_loads_neither_torch_nor_the_table(sim):
    code = textwrap.dedent("""
        import sys, ascend_aclnn as aa
        op = aa.aclnn.Add  # declared by the header: no reference looked up yet
        print(sorted(m for m in ("torch", "ascend_aclnn.cpu_reference.table", "ascend_aclnn.cpu_reference.formulas")
                     if m in sys.modules))
    """)
    result = run_python(code, sim)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


BLOCK_TORCH = textwrap.dedent("""
    import sys
    class _NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, _NoTorch())
""")


def test_without_torch_one_line_says_what_to_install(sim):
    code = BLOCK_TORCH + textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        aa.set_backend("numpy")
        x = np.ones((1, 2, 4), np.float32)
        print(aa.aclnn.UpsampleNearestExact1d(x, [2], 0.0, np.empty((1, 2, 2), np.float32)).shape)  # NumPy only
        aa.aclnn.register_reference("Add", lambda self, other, alpha: self + alpha * other)
        print(aa.aclnn.Add(x, x, 2.0, np.empty_like(x)).max())
        aa.aclnn.register_reference("Add", None)
        try:
            aa.aclnn.Add(x, x, 2.0, np.empty_like(x))
        except ModuleNotFoundError as exc:
            print(type(exc).__name__, exc.name, "|", exc)
    """)
    result = run_python(code, sim)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "(1, 2, 2)", "3.0",
        "ModuleNotFoundError torch | aclnnAdd's CPU reference runs on PyTorch, which is not installed: "
        "pip install \"ascend-aclnn[torch]\""]


EXAMPLE = ROOT / "examples" / "ten_raw_operators.py"


def test_the_ten_operator_script_runs_on_the_simulator_and_without_cann(sim, tmp_path):
    """Unchanged, on the simulator (npu backend) and in a process with no CANN and no headers."""
    on_npu = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=600,
                            env=_env(ASCEND_HOME_PATH=str(sim.prefix), ASCEND_ACLNN_BACKEND="npu"))
    assert on_npu.returncode == 0, on_npu.stderr
    no_cann = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=600,
                             env=_env(ASCEND_HOME_PATH=None, ASCEND_ACLNN_BACKEND=None))
    assert no_cann.returncode == 0, no_cann.stderr
    npu_lines, cpu_lines = on_npu.stdout.splitlines(), no_cann.stdout.splitlines()
    assert npu_lines[0] == "backend: npu" and cpu_lines[0] == "backend: numpy"
    assert len(npu_lines) == len(cpu_lines) == 11
    for a, b in zip(npu_lines[1:], cpu_lines[1:]):  # "<operator>: <checksum>": the same numbers
        name_a, value_a = a.split(": ")
        name_b, value_b = b.split(": ")
        assert name_a == name_b
        testing.assert_close(np.array(float(value_b)), np.array(float(value_a)), msg=name_a)


def _env(**updates: Optional[str]) -> dict[str, str]:
    import os
    env = dict(os.environ)
    for key in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH",
                "ASCEND_ACLNN_HEADERS", "ASCEND_ACLNN_BACKEND", "LD_LIBRARY_PATH"):
        env.pop(key, None)
    for key, value in updates.items():
        if value is not None:
            env[key] = value
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_info_counts_the_declared_operators_with_a_cpu_reference(sim):
    from ascend_aclnn.tools import info
    facts = info.collect()
    ref = facts["cpu_reference"]
    # every operator the simulator declares (derived from its build table) has one, but its vendor operator and
    # TransMatmulWeight, NpuFormatCast and MatmulWeightNz (the numpy backend's format hooks run them, outside the
    # reference table)
    import build as sim_build  # native/build.py
    declared = len(sim_build.operators()) + len(sim_build.vendor_operators())
    built = set(sim_build.operators()) | set(sim_build.vendor_operators())
    assert {"aclnnCustomMaskedScale", "aclnnTransMatmulWeight"} <= built
    without = {"aclnnCustomMaskedScale", "aclnnTransMatmulWeight", "aclnnNpuFormatCast",
               "aclnnMatmulWeightNz"} & built  # the last two: 8.5.0 on
    assert (ref["declared"], ref["declared_with_reference"]) == (declared, declared - len(without))
    assert (f"CPU reference   {declared - len(without)} of the {declared} operators the headers declare run on the "
            "numpy backend") in info.render(facts)


def test_a_plan_of_a_raw_operator_without_a_cpu_reference_is_refused_when_made(numpy_backend, sim):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError) as info:
        aa.plan(aa.aclnn.CustomMaskedScale, x, [1.0] * 3, [True] * 3, "mul", 1.0, 0, np.empty_like(x))
    assert str(info.value).startswith("plan: aclnnCustomMaskedScale has no CPU reference for the numpy backend")
    with aa.plan(aa.aclnn.Add, x, x, 2.0, np.empty_like(x)) as p:  # one with a reference says which runs
        assert p.fallback_reason == "numpy backend: each run calls its CPU reference (table, on PyTorch)"


def test_a_prototype_prints_as_one_readable_line():
    proto = aa.aclnn.prototype("Add")
    text = repr(proto)
    assert text.startswith("<Prototype aclnnAdd(const aclTensor *self, const aclTensor *other, const aclScalar "
                           "*alpha, aclTensor *out [out]) from ") and text.endswith(f":{proto.line}>")
    assert "\n" not in text and "Param(" not in text


def test_a_plan_of_a_table_operator_without_torch_is_refused_when_made(sim):
    """Issue 41, item 8: refused by aa.plan, as a plan of an operator with no reference is,
    not at its first run."""
    code = BLOCK_TORCH + textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        aa.set_backend("numpy")
        x = np.ones((2, 3), np.float32)
        try:
            p = aa.plan(aa.aclnn.Add, x, x, 2.0, np.empty_like(x))
        except ModuleNotFoundError as exc:
            print("refused:", exc.name, "|", exc)
        else:
            print("made:", p.fallback_reason)
    """)
    result = run_python(code, sim)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "refused: torch | plan: aclnnAdd's CPU reference runs on PyTorch, which is not installed: "
        "pip install \"ascend-aclnn[torch]\""]


def test_a_registered_reference_taking_the_output_is_told_references_return_outputs(numpy_backend):
    """Issue 41, item 11: not the user's own TypeError from the call."""
    def scale(self, out):  # the mistake: the output parameter as an argument
        out[...] = 2 * self
        return out
    try:
        with pytest.raises(TypeError) as info:
            aa.aclnn.register_reference("aclnnMyTakesOut", scale, params="const aclTensor *self, aclTensor *out")
        assert "aclnnMyTakesOut" not in aa.aclnn.names(reference=True)  # refused, so not left registered
    finally:
        aa.aclnn.register_reference("aclnnMyTakesOut", None)
    text = str(info.value)
    assert "a CPU reference takes its inputs and returns its outputs" in text and "return its outputs (out)" in text, text


def test_a_reference_taking_the_output_is_refused_without_cann_too(tmp_path):
    """No header declares aclnnAdd here: the table row's parameter list is what it is checked against."""
    result = run_python(textwrap.dedent("""
        import ascend_aclnn as aa
        try:
            aa.aclnn.register_reference("Add", lambda self, other, alpha, out: self + alpha * other)
        except TypeError as exc:
            print(exc)
    """), None, ASCEND_HOME_PATH=str(tmp_path / "none"), LD_LIBRARY_PATH="")
    assert result.returncode == 0, result.stderr
    assert "a CPU reference takes its inputs and returns its outputs" in result.stdout and "return its outputs (out)" in result.stdout, result.stdout
