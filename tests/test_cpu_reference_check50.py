"""An independent check of 53 commonly used aclnn operators on the numpy backend.

Each case is written from CANN's documentation of the operator alone: the 8.1.RC1 header's
parameter order and the aclnn doc's formula. Nothing here reads the op-plugin table or the
runner: the expected values are plain NumPy (float64, or exact for integers and booleans).
Every output array is pre-filled with garbage (NaN for floats, a sentinel for integers, the
opposite of the answer for booleans), so an output the reference leaves unwritten fails.
float32 results are compared with rtol 1e-5; float16 ones under CANN's precision standard
(ascend_aclnn.testing.compare) against the float64 expectation.

No CANN headers are installed here (ASCEND_ACLNN_HEADERS is cleared), so each call uses
the reference's own prototype, as a script in a venv with no CANN does. The table-backed
operators need PyTorch (an optional dependency): without it the module is skipped, saying so.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.cann import headers
from ascend_aclnn.testing import compare

pytest.importorskip("torch", reason="the op-plugin table's CPU references run on PyTorch (optional)")

F32, F16 = np.float32, np.float16
SENTINEL = -7777
RNG = np.random.default_rng(28)


@pytest.fixture(autouse=True)
def no_cann_headers(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    for key in (headers.ENV_VAR, "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))   # an empty CANN root: no header anywhere
    headers.reset()
    with aa.use_backend("numpy"):
        yield
    headers.reset()


def garbage(shape: Any, dtype: Any, expected: Any = None) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    if dt.kind == "b":
        return np.logical_not(np.asarray(expected, bool)) if expected is not None else np.zeros(shape, bool)
    return np.full(shape, SENTINEL, dt)


def check(actual: Any, expected: Any, dtype: Any = F32) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape}, expected {e.shape}"
    assert a.dtype == np.dtype(dtype), f"dtype {a.dtype}, expected {np.dtype(dtype)}"
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, e)
    elif a.dtype == np.float32:
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=1e-5, atol=1e-6)
    else:
        report = compare(a, e.astype(np.float64), a.dtype)
        assert report.passed, str(report)


def x32(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(F32)


def unary(name: str, fn: Callable[[np.ndarray], np.ndarray], lo: float = -2.0, hi: float = 2.0,
          dtype: Any = F32) -> None:
    x = x32(2, 3, 4, lo=lo, hi=hi).astype(dtype)
    out = garbage(x.shape, dtype)
    got = getattr(aa.aclnn, name)(x, out)
    check(got, fn(x.astype(np.float64)), dtype)
    check(out, fn(x.astype(np.float64)), dtype)  # written into the caller's array


_erf = np.vectorize(math.erf)


# --- elementwise, one input ------------------------------------------------------------------

UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float, float]] = {
    "Abs": (np.abs, -2, 2),
    "Exp": (np.exp, -2, 2),
    "Log": (np.log, 0.1, 4),
    "Sqrt": (np.sqrt, 0.1, 4),
    "Rsqrt": (lambda x: 1 / np.sqrt(x), 0.1, 4),
    "Neg": (np.negative, -2, 2),
    "Relu": (lambda x: np.maximum(x, 0), -2, 2),
    # The tanh form (ops-nn's aclnnGelu.md and the kernel), not the erf form 8.1.RC1's header implies.
    "Gelu": (lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), -3, 3),
    "Silu": (lambda x: x / (1 + np.exp(-x)), -4, 4),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), -4, 4),
    "Tanh": (np.tanh, -3, 3),
    "Erf": (_erf, -2, 2),
    "Floor": (np.floor, -3, 3),
    "Round": (np.rint, -3, 3),                                                   # half to even
    "Sign": (np.sign, -2, 2),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name: str):
    fn, lo, hi = UNARY[name]
    unary(name, fn, lo, hi)


@pytest.mark.parametrize("name", ["Exp", "Sigmoid", "Tanh"])
def test_unary_float16(name: str):
    fn, lo, hi = UNARY[name]
    unary(name, fn, lo, hi, F16)


def test_round_ties_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5], F32)
    check(aa.aclnn.Round(x, garbage(5, F32)), np.array([0, 2, 2, -0.0, -2]))


def test_softplus():
    x = x32(3, 4, lo=-3, hi=3)
    x[0, 0] = 30.0                                    # above threshold: returns x itself
    want = np.where(x > 20, x, np.log1p(np.exp(x.astype(np.float64))))
    check(aa.aclnn.Softplus(x, 1.0, 20.0, garbage(x.shape, F32)), want)


# --- elementwise, two inputs and scalars -----------------------------------------------------

def test_add_sub_with_alpha_and_broadcast():
    a, b = x32(2, 3), x32(3)
    check(aa.aclnn.Add(a, b, 2.0, garbage((2, 3), F32)), a + 2.0 * b.astype(np.float64))
    check(aa.aclnn.Sub(a, b, 0.5, garbage((2, 3), F32)), a - 0.5 * b.astype(np.float64))


def test_add_float16_and_keywords():
    a, b = x32(4, 5).astype(F16), x32(4, 5).astype(F16)
    got = aa.aclnn.Add(self=a, other=b, alpha=1.0, out=garbage((4, 5), F16))
    check(got, a.astype(np.float64) + b, F16)


def test_mul_div_maximum_minimum():
    a, b = x32(2, 3), x32(2, 3, lo=0.5, hi=2)
    check(aa.aclnn.Mul(a, b, garbage((2, 3), F32)), a.astype(np.float64) * b)
    check(aa.aclnn.Div(a, b, garbage((2, 3), F32)), a.astype(np.float64) / b)
    check(aa.aclnn.Maximum(a, b, garbage((2, 3), F32)), np.maximum(a, b))
    check(aa.aclnn.Minimum(a, b, garbage((2, 3), F32)), np.minimum(a, b))


def test_muls_adds_pow_clamp():
    a = x32(2, 3, lo=0.1, hi=2)
    check(aa.aclnn.Muls(a, 3.0, garbage((2, 3), F32)), a * 3.0)
    check(aa.aclnn.Adds(a, 3.0, 2.0, garbage((2, 3), F32)), a + 6.0)           # self + alpha * other
    check(aa.aclnn.PowTensorScalar(a, 2.0, garbage((2, 3), F32)), a.astype(np.float64) ** 2)
    check(aa.aclnn.Clamp(a, 0.5, 1.5, garbage((2, 3), F32)), np.clip(a, 0.5, 1.5))


def test_comparisons():
    a, b = np.array([[1, 2, 3]], F32), np.array([[1, 0, 3]], F32)
    want = np.array([[True, False, True]])
    check(aa.aclnn.EqTensor(a, b, garbage(a.shape, bool, want)), want, bool)
    want = np.array([[True, False, True]])
    check(aa.aclnn.NeScalar(a, 2.0, garbage(a.shape, bool, want)), want, bool)
    want = np.array([[False, False, True]])
    check(aa.aclnn.GtScalar(a, 2.0, garbage(a.shape, bool, want)), want, bool)


def test_where():
    cond = np.array([[True, False], [False, True]])
    a, b = x32(2, 2), x32(2, 2)
    check(aa.aclnn.SWhere(cond, a, b, garbage((2, 2), F32)), np.where(cond, a, b))


def test_cast():
    x = np.array([1.7, -1.7, 2.0, 0.0], F32)
    check(aa.aclnn.Cast(x, np.int32, garbage(4, np.int32)), np.array([1, -1, 2, 0], np.int32), np.int32)
    check(aa.aclnn.Cast(x, np.float16, garbage(4, F16)), x.astype(np.float64), F16)


def test_inplace_fill_scalar():
    x = x32(2, 3)
    got = aa.aclnn.InplaceFillScalar(x, 4.5)
    check(got, np.full((2, 3), 4.5))
    check(x, np.full((2, 3), 4.5))                    # in place


# --- softmax, matmul, reductions -------------------------------------------------------------

def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    z = np.exp(x - x.max(axis=dim, keepdims=True))
    return z / z.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_softmax_and_log_softmax(dtype: Any):
    x = x32(2, 3, 5, lo=-3, hi=3).astype(dtype)
    x64 = x.astype(np.float64)
    check(aa.aclnn.Softmax(x, 1, garbage(x.shape, dtype)), _softmax(x64, 1), dtype)
    check(aa.aclnn.LogSoftmax(x, -1, garbage(x.shape, dtype)), np.log(_softmax(x64, -1)), dtype)


def test_matmul_mm_batch_matmul():
    a, b = x32(3, 4), x32(4, 5)
    want = a.astype(np.float64) @ b
    check(aa.aclnn.Mm(a, b, garbage((3, 5), F32), 1), want)
    check(aa.aclnn.Matmul(a, b, garbage((3, 5), F32), 1), want)
    ba, bb = x32(2, 3, 4), x32(2, 4, 5)
    check(aa.aclnn.BatchMatMul(ba, bb, garbage((2, 3, 5), F32), 1), ba.astype(np.float64) @ bb)
    # a batch of 1 broadcasts, as op-plugin relies on (bmm sizes out max(self.size(0), mat2.size(0)))
    one = x32(1, 3, 4)
    check(aa.aclnn.BatchMatMul(one, bb, garbage((2, 3, 5), F32), 1), one.astype(np.float64) @ bb)


def test_matmul_float16():
    a, b = x32(8, 16).astype(F16), x32(16, 4).astype(F16)
    check(aa.aclnn.Matmul(a, b, garbage((8, 4), F16), 1), a.astype(np.float64) @ b.astype(np.float64), F16)


def test_reduce_sum_mean_amax():
    x = x32(2, 3, 4)
    x64 = x.astype(np.float64)
    check(aa.aclnn.ReduceSum(x, [1], False, np.float32, garbage((2, 4), F32)), x64.sum(axis=1))
    check(aa.aclnn.ReduceSum(x, [0, 2], True, np.float32, garbage((1, 3, 1), F32)),
          x64.sum(axis=(0, 2), keepdims=True))
    check(aa.aclnn.Mean(x, [-1], True, np.float32, garbage((2, 3, 1), F32)), x64.mean(axis=-1, keepdims=True))
    check(aa.aclnn.Amax(x, [0], False, garbage((3, 4), F32)), x.max(axis=0))


def test_max_dim_and_argmax():
    x = np.array([[1, 5, 2], [7, 0, 7]], F32)
    values, idx = aa.aclnn.MaxDim(x, 1, False, garbage(2, F32), garbage(2, np.int64))
    check(values, np.array([5, 7]))
    check(idx[:1], np.array([1]), np.int64)           # the tie in row 1 may report either 7
    assert int(idx[1]) in (0, 2)
    check(aa.aclnn.ArgMax(x, 0, True, garbage((1, 3), np.int64)), np.array([[1, 0, 1]]), np.int64)


def test_cumsum():
    x = x32(3, 4)
    check(aa.aclnn.Cumsum(x, 1, np.float32, garbage((3, 4), F32)), np.cumsum(x.astype(np.float64), axis=1))


# --- shape operators -------------------------------------------------------------------------

def test_cat_stack_permute():
    a, b = x32(2, 3), x32(1, 3)
    check(aa.aclnn.Cat([a, b], 0, garbage((3, 3), F32)), np.concatenate([a, b]))
    c = x32(2, 3)
    check(aa.aclnn.Stack([a, c], 1, garbage((2, 2, 3), F32)), np.stack([a, c], axis=1))
    x = x32(2, 3, 4)
    check(aa.aclnn.Permute(x, [2, 0, 1], garbage((4, 2, 3), F32)), x.transpose(2, 0, 1))


def test_sort_and_topk():
    x = np.array([[3, 1, 2, 5], [0, 4, 4, 1]], F32)
    values, idx = aa.aclnn.Sort(x, True, -1, False, garbage(x.shape, F32), garbage(x.shape, np.int64))
    check(values, np.array([[1, 2, 3, 5], [0, 1, 4, 4]]))
    check(idx, np.array([[1, 2, 0, 3], [0, 3, 1, 2]]), np.int64)       # stable: the two 4s in order
    values, idx = aa.aclnn.Topk(x, 2, -1, True, True, garbage((2, 2), F32), garbage((2, 2), np.int64))
    check(values, np.array([[5, 3], [4, 4]]))
    check(idx[0], np.array([3, 0]), np.int64)
    assert sorted(idx[1].tolist()) == [1, 2]


def test_embedding_gather_index_select():
    w = x32(5, 3)
    ind = np.array([[4, 0], [1, 1]], np.int64)
    check(aa.aclnn.Embedding(w, ind, garbage((2, 2, 3), F32)), w[ind])
    x = x32(3, 4)
    index = np.array([[0, 3], [2, 2], [1, 0]], np.int64)
    check(aa.aclnn.Gather(x, 1, index, garbage((3, 2), F32)), np.take_along_axis(x, index, axis=1))
    sel = np.array([2, 0], np.int64)
    check(aa.aclnn.IndexSelect(x, 0, sel, garbage((2, 4), F32)), x[sel])


# --- normalisations --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16])
def test_layer_norm(dtype: Any):
    x = x32(2, 3, 8).astype(dtype)
    w, b = x32(8).astype(dtype), x32(8).astype(dtype)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(x64.var(axis=-1, keepdims=True) + 1e-5)
    want = (x64 - mean) * rstd * w.astype(np.float64) + b.astype(np.float64)
    out, m, r = aa.aclnn.LayerNorm(x, [8], w, b, 1e-5, garbage(x.shape, dtype), garbage((2, 3, 1), F32),
                                   garbage((2, 3, 1), F32))
    check(out, want, dtype)
    check(m, mean)
    check(r, rstd)


def test_rms_norm():
    x, g = x32(2, 3, 8), x32(8)
    x64 = x.astype(np.float64)
    rstd = 1 / np.sqrt((x64 ** 2).mean(axis=-1, keepdims=True) + 1e-6)
    y, r = aa.aclnn.RmsNorm(x, g, 1e-6, garbage(x.shape, F32), garbage((2, 3, 1), F32))
    check(y, x64 * rstd * g)
    check(r, rstd)


NAMES = ("Abs Exp Log Sqrt Rsqrt Neg Relu Gelu Silu Sigmoid Tanh Erf Floor Round Sign Softplus Add Sub Mul Div "
         "Maximum Minimum Muls Adds PowTensorScalar Clamp EqTensor NeScalar GtScalar SWhere Cast InplaceFillScalar "
         "Softmax LogSoftmax Mm Matmul BatchMatMul ReduceSum Mean Amax MaxDim ArgMax Cumsum Cat Stack Permute Sort "
         "Topk Embedding Gather IndexSelect LayerNorm RmsNorm").split()


def test_the_check_covers_fifty_operators():
    assert len(set(NAMES)) >= 50
