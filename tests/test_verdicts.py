"""Every PASS / exit 0 of a tool can turn into FAIL / exit 1 (issue 36): each test here plants a
wrong answer just past the tool's tolerance, and sees the tool say so. A tool whose
threshold drifted (a tolerance ten times looser, a unit off by 1000) passes what it
should not, and only a planted answer near the line shows it."""
from __future__ import annotations

import io
import textwrap
import types

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import testing
from ascend_aclnn.backends import numpy as numpy_backend
from ascend_aclnn.tools import cli
from conftest import run_python


def run_cli(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


# ---- compare -----------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["one element", "every element"])
def test_compare_fails_a_kernel_off_by_more_than_its_standard(monkeypatch, where):
    """The numpy backend's fast kernel planted wrong, one element (by 1.0) or every element (by
    1%, ten times float32's rtol): compare's row says FAIL and it exits 1; unplanted, 0."""
    name = "upsample_nearest_exact1d"
    argv = ("compare", "--backend", "numpy", "--ops", name, "--dtypes", "float32", "--no-progress")
    code, out, _ = run_cli(*argv)
    assert code == 0 and "  PASS  " in out, out
    real = numpy_backend.FAST_KERNELS[name]

    def wrong(*args, **kwargs):
        y = np.array(real(*args, **kwargs), copy=True)
        if where == "one element":
            y.flat[y.size // 2] += 1.0
        else:
            y *= np.float32(1.01)
        return y

    monkeypatch.setitem(numpy_backend.FAST_KERNELS, name, wrong)
    code, out, _ = run_cli(*argv)
    rows, verdict = out.splitlines()[:-1], out.splitlines()[-1]
    assert code == 1, out
    assert len(rows) == 1 and "  FAIL  " in rows[0], out
    assert verdict.startswith("compare: 1 case(s), 1 failed"), verdict


def test_compare_holds_each_dtype_to_its_own_standard():
    """Just past the standard's relative tolerance on every element (x2), per dtype, fails;
    just inside it (x0.5) passes: the line is where testing's table puts it."""
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        tol = testing.tolerance_for(dtype)
        golden = np.linspace(1.0, 2.0, 64).astype(np.float64)
        for factor, passed in ((0.5, True), (2.0, False)):
            actual = golden * (1 + factor * (tol.rtol + tol.atol))
            assert testing.compare(actual, golden.astype(actual.dtype), dtype).passed is passed, (dtype, factor)


# ---- gradcheck ---------------------------------------------------------------------------------

def _scaled(bwd, index: int, factor: float):
    """bwd with its index-th gradient (or its only one) multiplied by factor."""
    def wrong(*args, **kwargs):
        result = bwd(*args, **kwargs)
        if isinstance(result, tuple):
            return tuple(np.asarray(r) * np.float32(factor) if i == index else r for i, r in enumerate(result))
        return np.asarray(result) * np.float32(factor)
    return wrong


@pytest.mark.parametrize("index, name", [(0, "dx"), (1, "dgamma"), (2, "dbeta")])
def test_gradcheck_fails_a_gradient_half_a_percent_off(backend, index, name):
    """Finite differences (group_norm_swish): one of the three gradients 0.5% off is a FAIL
    on that row only (the documented tolerance is 1e-3; the estimate's own error here is
    far below it, as the unplanted run shows)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)
    gamma, beta = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    good = testing.gradcheck("group_norm_swish", x, gamma, beta, 2)
    assert good.passed and good.max_error < 2.5e-4, good
    r = testing.gradcheck("group_norm_swish", x, gamma, beta, 2,
                          backward=_scaled(aa.group_norm_swish_grad, index, 1.005))
    assert not r.passed and str(r).startswith("FAIL"), r
    failing = [what for what, err, tol in r.checks if err > tol]
    assert failing == [name], r


@pytest.mark.parametrize("factor", [1.005, 1.0005])
def test_gradcheck_adjoint_fails_a_gradient_slightly_off(backend, factor):
    """The adjoint pairs' tolerance is 1e-5 of a scale up to twice the inner products: a dx
    0.5% or even 0.05% off fails."""
    x = np.random.default_rng(8).standard_normal((2, 3, 11)).astype(np.float32)
    assert testing.gradcheck("upsample_nearest_exact1d", x, [23]).passed
    r = testing.gradcheck("upsample_nearest_exact1d", x, [23],
                          backward=_scaled(aa.upsample_nearest_exact1d_backward, 0, factor))
    assert not r.passed, r


def test_the_gradcheck_command_exits_1_on_a_planted_wrong_backward(backend, monkeypatch):
    """The command checks the operators themselves: one backward 0.5% off (replaced in the
    functions module, where gradcheck finds it) is a FAIL row and exit 1."""
    from ascend_aclnn import functions
    code, out, _ = run_cli("gradcheck", "--ops", "group_norm_swish")
    assert code == 0, out
    monkeypatch.setattr(functions, "group_norm_swish_grad", _scaled(functions.group_norm_swish_grad, 0, 1.005))
    code, out, _ = run_cli("gradcheck", "--ops", "group_norm_swish")
    assert code == 1, out
    assert "  FAIL  " in out and out.splitlines()[-1].endswith("1 failed (seed 0)"), out


# ---- bench's checks ----------------------------------------------------------------------------

def test_bench_stops_when_its_yardstick_disagrees_with_the_binding(sim):
    """bench's npu section checks that its bare ctypes sequence computes what the binding
    does before timing either: a planted wrong yardstick stops it, exit 1, naming the
    mismatch (it does not time a sequence that computes something else)."""
    code = textwrap.dedent("""
        import sys
        from ascend_aclnn.tools import bench, bench_npu
        real = bench_npu._bare
        def planted(*args):
            bare, *rest = real(*args)
            return (lambda: bare() + 1.0, *rest)
        if PLANT:
            bench_npu._bare = planted
        sys.exit(bench.main(["--npu-only", "--npu-calls", "2", "--npu-rounds", "1"]))
    """)
    for plant, status in ((False, 0), (True, 1)):
        result = run_python(f"PLANT = {plant}\n" + code, sim)
        assert result.returncode == status, result.stdout + result.stderr
        if plant:
            assert "AssertionError" in result.stderr and "Mismatched elements" in result.stderr, result.stderr


# ---- Event.elapsed_time is in milliseconds, on both backends ------------------------------------

def test_elapsed_time_is_milliseconds_on_the_numpy_backend(numpy_backend, monkeypatch):
    """Two records 2.5 ms apart on the host's clock: elapsed_time is 2.5 (not 2500 or 0.0025)."""
    from ascend_aclnn.backends.numpy import streams as host_streams
    stamps = iter([1_000_000_000, 1_002_500_000])
    monkeypatch.setattr(host_streams, "time", types.SimpleNamespace(perf_counter_ns=lambda: next(stamps)))
    start, end = aa.Event(timing=True), aa.Event(timing=True)
    start.record()
    end.record()
    assert start.elapsed_time(end) == 2.5
    assert end.elapsed_time(start) == -2.5


@pytest.mark.simulator
def test_elapsed_time_is_milliseconds_on_the_npu_backend(npu, monkeypatch):
    """One kernel costing 2 ms on the simulator's clock (ASCEND_SIM_LAUNCH_NS=2e6, its bytes
    nearly free): elapsed_time is 2.0 ms."""
    monkeypatch.setenv("ASCEND_SIM_LAUNCH_NS", str(2_000_000))
    monkeypatch.setenv("ASCEND_SIM_BYTES_PER_NS", str(10 ** 15))
    d = aa.to_device(np.ones((1, 2, 3), np.float32))
    start, end = aa.Event(timing=True), aa.Event(timing=True)
    start.record()
    aa.upsample_nearest_exact1d(d, [6])
    end.record()
    assert start.elapsed_time(end) == pytest.approx(2.0, abs=1e-5)


# ---- the CPU reference runner's result count ---------------------------------------------------

def test_a_reference_returning_too_few_results_is_refused(numpy_backend):
    """'returns one array per written parameter (a tuple when several)': a registered
    reference of a two-output operator returning a tuple of one array is a TypeError naming both
    outputs, not a call that fills the first and leaves the second as it was."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    out, mask = np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 1, 1), np.int8)

    def one(self, kernelSize, stride, padding, dilation, ceilMode):
        return (self[..., ::2, ::2],)             # a tuple, of one

    aa.aclnn.register_reference("aclnnMaxPool2dWithMask", one)
    try:
        with pytest.raises(TypeError, match=r"expected a tuple of 2, one per written parameter \(out, indices\)"):
            aa.aclnn.MaxPool2dWithMask(x, [2, 2], [2, 2], [0, 0], [1, 1], False, out, mask)
    finally:
        aa.aclnn.register_reference("aclnnMaxPool2dWithMask", None)
