"""The CPU reference's round-4 defects (issues 35 and 36): the dtype rule (promote the inputs,
compute in the promoted type, cast into the caller's output rounding once), row choice by what
aten accepts, register_reference's order and checks, torch's refusals as CANN's 161002, the
output checks, in-place parameters of function references, and the messages without a header
or without PyTorch. Each test here was seen failing with its defect in place."""
from __future__ import annotations

import textwrap

import ml_dtypes
import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import aclnn
from ascend_aclnn.cann import headers
from ascend_aclnn.cpu_reference import runner
from ascend_aclnn.errors import AclnnError, AclnnParamInvalidError
from conftest import run_python
from test_cpu_reference import BLOCK_TORCH, both, no_cann, stand_in  # noqa: F401  (fixtures)

torch = pytest.importorskip("torch")
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture
def clean_registrations():
    """Every registration a test makes is removed after it, whatever it made."""
    before = set(runner.registered_names())
    yield
    for name in set(runner.registered_names()) - before:
        aa.aclnn.register_reference(name, None)


# ---------------------------------------------------------------------------------------------
# issue 35.2: promote the inputs, compute in the promoted type, then cast into out
# ---------------------------------------------------------------------------------------------

def test_a_float16_add_into_a_float32_out_is_computed_in_float16(sim):
    """CANN's op_api adds in the promoted type (float16) and casts into out: 60000 + 60000
    overflows to inf and 1 + 2**-11 rounds to 1, whatever out's dtype."""
    x = np.array([60000, 1], np.float16)
    y = np.array([60000, 2 ** -11], np.float16)
    npu, cpu = both(lambda: aa.aclnn.Add(x, y, 1.0, np.zeros(2, np.float32)))
    assert cpu[0].tolist() == [np.inf, 1.0]
    assert np.array_equal(npu[0], cpu[0])


def test_float16_statistics_follow_torchs_device_rule(stand_in):
    """The exception to promote-then-cast is the one torch's device kernels make (the meta
    function's result dtype): LayerNorm's mean/rstd in float32 for float16 input. Then they
    are computed in float32 and cast into the caller's arrays once, float16 ones too; the
    normalised output stays aten's float16 result."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((2, 3, 8)) * 3 + 100).astype(np.float16)
    w, b = np.ones(8, np.float16), np.zeros(8, np.float16)
    out, mean, rstd = np.zeros(x.shape, np.float16), np.zeros((2, 3, 1), np.float16), np.zeros((2, 3, 1), np.float16)
    aa.aclnn.FixtureLayerNorm(x, [8], w, b, 1e-5, out, mean, rstd)
    x64 = x.astype(np.float64)
    assert np.array_equal(mean, x64.mean(-1, keepdims=True).astype(np.float32).astype(np.float16))
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x64.var(-1, keepdims=True) + 1e-5), rtol=2 ** -10)


# ---------------------------------------------------------------------------------------------
# issues 35.11 and 36.1: a float64 result is rounded once into a 16-bit output
# ---------------------------------------------------------------------------------------------

ONCE = [(np.float16, 1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -10), (BF16, 1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -7)]


@pytest.mark.parametrize("dtype,value,once", ONCE, ids=["float16", "bfloat16"])
def test_a_float64_result_is_rounded_once_by_a_table_row(numpy_backend, dtype, value, once):
    """Through float32, 1 + 2**-11 + 2**-40 becomes the tie 1 + 2**-11, then 1.0 in float16;
    rounded once it is 1 + 2**-10 (bfloat16: the same one binade up)."""
    got = aa.aclnn.Abs(np.array([value, -value]), np.zeros(2, dtype))
    assert got.astype(np.float64).tolist() == [once, once]


@pytest.mark.parametrize("framework", ["numpy", "torch"])
@pytest.mark.parametrize("dtype,value,once", ONCE, ids=["float16", "bfloat16"])
def test_a_float64_result_is_rounded_once_from_a_function(numpy_backend, clean_registrations, framework, dtype,
                                                          value, once):
    if framework == "numpy":
        aa.aclnn.register_reference("Abs", lambda self: np.full(self.shape, value))
    else:
        aa.aclnn.register_reference("Abs", lambda self: torch.full(self.shape, value, dtype=torch.float64),
                                    framework="torch")
    got = aa.aclnn.Abs(np.zeros(3, np.float32), np.zeros(3, dtype))
    assert got.astype(np.float64).tolist() == [once] * 3


def test_rounding_once_to_bfloat16_is_exact_on_ties_and_edges():
    """Against the exact answer (the nearer neighbour, ties to even), on values made to sit a
    hair off bfloat16 ties, in every binade from subnormal to overflow."""
    from fractions import Fraction
    from ascend_aclnn.cpu_reference._torch import cast_once
    rng = np.random.default_rng(3)
    base = (rng.standard_normal(400) * np.exp2(rng.integers(-133, 127, 400).astype(np.float64)))
    base = base.astype(np.float32).astype(BF16).astype(np.float64)
    x = np.concatenate([base * (1 + 2 ** -8 + 2 ** -40), base * (1 + 2 ** -8 - 2 ** -40), base * (1 + 2 ** -8),
                        [np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, -0.0, 5e-324]])
    got = cast_once(x, BF16)
    for xi, g in zip(x, got):
        if not np.isfinite(xi):
            assert np.isnan(g) if np.isnan(xi) else g == xi
            continue
        bits = int(np.array([g]).view(np.uint16)[0])
        if not np.isfinite(g):  # overflow: past the largest bfloat16 by half an ulp or more
            assert abs(xi) >= float(np.array([0x7F7F], np.uint16).view(BF16)[0]) * (1 + 2 ** -8)
            continue
        here = abs(Fraction(float(g)) - Fraction(xi))
        for nb in (bits - 1, bits + 1):
            v = float(np.array([nb & 0xFFFF], np.uint16).view(BF16)[0])
            if np.isfinite(v) and (nb & 0x7FFF) != 0 or nb == bits + 1:
                there = abs(Fraction(v) - Fraction(xi)) if np.isfinite(v) else here + 1
                assert here < there or (here == there and bits % 2 == 0), (xi, float(g), v)


# ---------------------------------------------------------------------------------------------
# issue 35.12: rows that no literal tells apart are chosen by what their aten op accepts
# ---------------------------------------------------------------------------------------------

def test_sign_of_a_complex_input_runs_the_sgn_row(numpy_backend):
    x = np.array([3 + 4j, -2j, 0], np.complex64)
    got = aa.aclnn.Sign(x, np.zeros(3, np.complex64))
    assert np.allclose(got, [0.6 + 0.8j, -1j, 0])
    assert aa.aclnn.Sign(np.array([-2.0, 3.0], np.float32), np.zeros(2, np.float32)).tolist() == [-1.0, 1.0]


# ---------------------------------------------------------------------------------------------
# issue 35.10: an aten refusal is CANN's 161002, never torch's own exception
# ---------------------------------------------------------------------------------------------

def test_a_refusal_by_aten_is_161002_on_the_numpy_backend(stand_in):
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.FixtureMatmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32),
                               np.zeros((2, 3), np.float32), 1)
    exc = info.value
    assert exc.status == 161002 and exc.api == "aclnnFixtureMatmulGetWorkspaceSize"
    assert "torch.ops.aten.mm" in str(exc) and "cannot be multiplied" in str(exc)
    assert not isinstance(exc.__cause__, RuntimeError) or isinstance(exc.__cause__, AclnnError)


def test_a_dtype_torchs_cpu_kernel_lacks_is_not_called_a_refusal(numpy_backend):
    """torch's CPU histc has no int32 kernel, its inverse no float16 one: the NPU's may have;
    the CPU reference says it cannot run the call (NotImplementedError), not that the
    operator refuses it, and torch's exception does not reach the caller."""
    with pytest.raises(NotImplementedError, match=r"^aclnnHistc's CPU reference \(torch.ops.aten.histc.default\) "
                                                  r"cannot run this call on the CPU: .*not implemented for 'Int'") as a:
        aa.aclnn.Histc(np.ones(3, np.int32), 4, 0.0, 3.0, np.zeros(4, np.int32))
    with pytest.raises(NotImplementedError, match="cannot run this call on the CPU") as b:
        aa.aclnn.Inverse(np.eye(2, dtype=np.float16), np.zeros((2, 2), np.float16))
    assert a.value.__cause__ is None and a.value.__suppress_context__
    assert b.value.__cause__ is None and b.value.__suppress_context__


REFUSED = {
    "shapes that do not broadcast": lambda: aa.aclnn.Add(np.ones((2, 3), np.float32), np.ones((4,), np.float32), 1.0,
                                                          np.zeros((2, 3), np.float32)),
    "an int32 Add with alpha 1.5": lambda: aa.aclnn.Add(np.ones(2, np.int32), np.ones(2, np.int32), 1.5,
                                                        np.zeros(2, np.int32)),
    "Cat of mismatched shapes": lambda: aa.aclnn.Cat([np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)], 0,
                                                     np.zeros((4, 3), np.float32)),
}


@pytest.mark.parametrize("call", list(REFUSED.values()), ids=list(REFUSED))
def test_what_the_operator_refuses_is_the_same_error_on_both_backends(sim, call):
    errors = []
    for backend in ("npu", "numpy"):
        with aa.use_backend(backend), pytest.raises(Exception) as info:
            call()
        errors.append(info.value)
    assert [type(e) for e in errors] == [AclnnParamInvalidError] * 2, errors
    assert errors[0].status == errors[1].status == 161002 and errors[0].api == errors[1].api


# ---------------------------------------------------------------------------------------------
# issue 36.2 and 36.3: the output checks (shape, not size; complex into real)
# ---------------------------------------------------------------------------------------------

def _wrong_shape_calls():
    # operators whose headers state no output-shape rule (Add's broadcast rule would refuse first):
    # the runner's own check of the result against the output is what refuses
    x = np.ones((2, 3), np.float32)
    yield "table row", lambda: aa.aclnn.Neg(x, np.zeros((1, 2, 3), np.float32))
    yield "numpy function", lambda: (aa.aclnn.register_reference("Abs", lambda self: self + 1),
                                     aa.aclnn.Abs(x, np.zeros((3, 2), np.float32)))
    yield "tensor list", lambda: aa.aclnn.SplitTensor(np.ones((4, 3), np.float32), 2, 0,
                                                      [np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)])


@pytest.mark.parametrize("case", [c for _, c in _wrong_shape_calls()], ids=[n for n, _ in _wrong_shape_calls()])
def test_an_output_of_the_results_size_but_another_shape_is_161002(numpy_backend, clean_registrations, case):
    with pytest.raises(AclnnParamInvalidError, match=r"expected shape \((2, 3|2, 3)\)"):
        case()


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_a_complex_result_into_a_real_output_is_161002(numpy_backend, clean_registrations, framework):
    if framework == "numpy":
        aa.aclnn.register_reference("Abs", lambda self: self + 1j)
    else:
        aa.aclnn.register_reference("Abs", lambda self: self + 1j, framework="torch")
    out = np.full(2, 7, np.float32)
    with pytest.raises(AclnnParamInvalidError, match="imaginary part would be lost") as info:
        aa.aclnn.Abs(np.ones(2, np.float32), out)
    assert info.value.argument == "out" and out.tolist() == [7, 7]


def test_a_complex_table_result_into_a_real_output_is_161002(numpy_backend):
    x = np.array([1 + 1j, 2], np.complex64)
    with pytest.raises(AclnnParamInvalidError, match="imaginary part would be lost"):
        aa.aclnn.Mul(x, x, np.zeros(2, np.float32))


# ---------------------------------------------------------------------------------------------
# issue 36.4, 35.8, 35.9: register_reference
# ---------------------------------------------------------------------------------------------

def test_a_registered_reference_comes_before_the_packages_own(numpy_backend, clean_registrations):
    """Before the description's NumPy reference (Im2col), a hand formula (RmsNorm) and a table
    row (Add): the documented order puts the user's first."""
    x = np.ones((1, 1, 2, 2), np.float32)
    aa.aclnn.register_reference("Im2col", lambda self, kernelSize, dilation, padding, stride:
                                np.full((1, 1, 4), 5, np.float32))
    assert aa.aclnn.reference("Im2col").source == "registered"
    assert aa.aclnn.Im2col(x, [1, 1], [1, 1], [0, 0], [1, 1], np.zeros((1, 1, 4), np.float32)).tolist() == \
        [[[5, 5, 5, 5]]]
    params = [p.name for p in aa.aclnn.prototype("RmsNorm").params if not p.is_output]
    aa.aclnn.register_reference("RmsNorm", lambda **kw: (np.full((1, 2), 3, np.float32),
                                                         np.full((1, 1), 4, np.float32)))
    assert aa.aclnn.reference("RmsNorm").source == "registered" and params == ["x", "gamma", "epsilon"]
    y, r = aa.aclnn.RmsNorm(np.ones((1, 2), np.float32), np.ones(2, np.float32), 1e-6, np.zeros((1, 2), np.float32),
                            np.zeros((1, 1), np.float32))
    assert y.tolist() == [[3, 3]] and r.tolist() == [[4]]


def test_a_refused_registration_leaves_the_previous_one_in_place(numpy_backend, clean_registrations):
    x = np.ones(2, np.float32)
    aa.aclnn.register_reference("Add", lambda self, other, alpha: self + other + 40)
    with pytest.raises(TypeError, match="must take the operator's input parameters"):
        aa.aclnn.register_reference("Add", lambda a, b: a)
    assert aa.aclnn.Add(x, x, 1.0, np.zeros(2, np.float32)).tolist() == [42, 42]
    aa.aclnn.register_reference("Add", None)
    with pytest.raises(TypeError):  # with nothing registered before, nothing stays registered
        aa.aclnn.register_reference("Add", lambda a, b: a)
    assert "aclnnAdd" not in runner.registered_names()
    assert aa.aclnn.Add(x, x, 1.0, np.zeros(2, np.float32)).tolist() == [2, 2]


def test_a_registration_is_checked_against_its_own_params(numpy_backend, clean_registrations):
    """With params= (no header declares the operator) the function must take those parameters:
    refused at registration, leaving nothing registered, not at the first call."""
    with pytest.raises(TypeError, match=r"register_reference\('aclnnRound4Bad'\): .*\(self, scale\)"):
        aa.aclnn.register_reference("Round4Bad", lambda x: x, params="const aclTensor *self, double scale, "
                                                                      "aclTensor *out")
    assert "aclnnRound4Bad" not in runner.registered_names()
    with pytest.raises(AttributeError):
        aa.aclnn.Round4Bad


def test_registering_other_params_changes_the_operator_and_removing_it_unbinds_the_name(numpy_backend,
                                                                                        clean_registrations):
    name = "aclnnRound4Scaled"
    assert headers.find(name) is None
    aa.aclnn.register_reference(name, lambda self: self * 2, params="const aclTensor *self, aclTensor *out")
    assert aa.aclnn.Round4Scaled(np.ones(2, np.float32), np.zeros(2, np.float32)).tolist() == [2, 2]
    aa.aclnn.register_reference(name, lambda self, scale: self * scale,
                                params="const aclTensor *self, double scale, aclTensor *out")
    assert [p.name for p in aa.aclnn.Round4Scaled.prototype.params] == ["self", "scale", "out"]
    assert aa.aclnn.Round4Scaled(np.ones(2, np.float32), 3.0, np.zeros(2, np.float32)).tolist() == [3, 3]
    aa.aclnn.register_reference(name, None)
    with pytest.raises(AttributeError, match="aclnnRound4Scaled has no CPU reference"):
        aa.aclnn.Round4Scaled
    assert not hasattr(aa.aclnn, "Round4Scaled")


# ---------------------------------------------------------------------------------------------
# issue 36.5: in-place parameters reach a function reference (the hand formulas that need them)
# ---------------------------------------------------------------------------------------------

def test_scatter_nd_update_runs_on_the_numpy_backend(numpy_backend):
    var = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = aa.aclnn.ScatterNdUpdate(var, np.array([[1], [3]], np.int64), np.full((2, 3), -1, np.float32))
    assert got is var
    assert var.tolist() == [[0, 1, 2], [-1, -1, -1], [6, 7, 8], [-1, -1, -1]]


def test_apply_rotary_pos_emb_runs_on_the_numpy_backend(numpy_backend):
    q = np.array([[[[1.0, 2.0, 3.0, 4.0]]]], np.float32)   # BSND (1, 1, 1, 4)
    k = np.array([[[[0.5, -1.0, 2.0, 0.0]]]], np.float32)
    cos = np.full((1, 1, 1, 4), 0.5, np.float32)
    sin = np.full((1, 1, 1, 4), 2.0, np.float32)
    gq, gk = aa.aclnn.ApplyRotaryPosEmb(q, k, cos, sin, 1)
    assert gq is q and gk is k
    # t*cos + cat(-t2, t1)*sin
    assert q.tolist() == [[[[0.5 - 6, 1 - 8, 1.5 + 2, 2 + 4]]]]
    assert k.tolist() == [[[[0.25 - 4, -0.5 - 0, 1 + 1, 0 - 2]]]]


def test_an_in_place_parameter_reaches_a_function_taking_keywords(numpy_backend, clean_registrations):
    """'fn is called with the operator's input parameters as keywords ..., an in-place
    parameter with its current values': also when fn takes them as **kwargs (names it none)."""
    seen = {}

    def scale(**kw):
        seen.update(kw)
        return kw["selfRef"] * kw["scale"]

    aa.aclnn.register_reference("Round4InplaceScale", scale, params="aclTensor *selfRef, double scale")
    x = np.array([1.0, -2.0, 3.0], np.float32)
    assert aa.aclnn.Round4InplaceScale(x, 2.0) is x
    assert sorted(seen) == ["scale", "selfRef"]
    assert x.tolist() == [2.0, -4.0, 6.0]


# ---------------------------------------------------------------------------------------------
# issue 35.13: the message names the missing header when the table has a row
# ---------------------------------------------------------------------------------------------

def test_a_row_waiting_for_a_header_says_the_header_is_missing(no_cann):
    rows = runner.table_rows("aclnnIndexFill")
    assert rows and not any(getattr(r, "from_header", True) for r in rows)
    with pytest.raises(AttributeError) as info:
        aa.aclnn.IndexFill
    text = str(info.value)
    assert "no row in the table" not in text, text
    assert "torch.ops.aten.index_fill" in text and "no installed header declares aclnnIndexFill" in text, text


# ---------------------------------------------------------------------------------------------
# issue 35.14: without PyTorch
# ---------------------------------------------------------------------------------------------

def test_without_torch_names_lists_only_what_runs_and_compare_exits_2(sim):
    code = BLOCK_TORCH + textwrap.dedent("""
        import io, ascend_aclnn as aa
        from ascend_aclnn.tools import cli
        names = aa.aclnn.names(reference=True)
        print("aclnnAdd" in names, "aclnnIm2col" in names, "aclnnRmsNorm" in names)
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["compare", "--op", "aclnnAdd", "--args",
                         '[{"tensor": [2, 3]}, {"tensor": [2, 3]}, 1.0]', "--no-progress"], out, err)
        print(code, repr(out.getvalue()), len(err.getvalue().splitlines()))
        print(err.getvalue().strip())
    """)
    result = run_python(code, sim)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "False True True", lines
    assert lines[1] == "2 '' 1", lines
    assert "PyTorch" in lines[2] and "ModuleNotFoundError" not in lines[2], lines
