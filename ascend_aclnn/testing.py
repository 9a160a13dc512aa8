"""Checking results: ``compare`` / ``assert_close`` against the CANN ecosystem's precision
standard, and ``gradcheck`` for backward kernels.

The standard ("mixed tolerance", the default of Huawei's ops-test-kit and of CANN's
operator acceptance): an element passes when ``|a - g| <= atol + rtol * |g|``; a case
passes when at least 99 % of its elements pass, no element's error exceeds the dtype's
cap, and NaN / +Inf / -Inf sit at exactly the same places in both arrays.

=========  ========  ========  ======================================
dtype      rtol      atol      cap on any one element's error
=========  ========  ========  ======================================
float16    2**-9     2**-9     max(0.1, 32 ULP of the golden value)
bfloat16   2**-6     2**-6     max(1.0, 32 ULP of the golden value)
float32    2**-10    2**-16    max(0.01, 32 ULP of the golden value)
float64    2**-20    2**-30    max(1e-5, 32 ULP)   (ours: the standard has no float64 row)
integers, bool: exact equality (the standard's binary comparison)
=========  ========  ========  ======================================

Complex arrays use the row of their component type, with ``|.|`` the complex modulus.

``benchmark(fn, *args, warmup=, repeat=, **kwargs)`` times a call on the device: events
around each call give its device time (median, p10, p90), the host clock its host cost.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Any, Callable, Mapping, Optional

import numpy as np
from numpy.typing import NDArray

from .tensors import DeviceArray, bfloat16, dtype_name

__all__ = ["Tolerance", "CompareReport", "compare", "assert_close", "tolerance_for",
           "GradPair", "GRAD_PAIRS", "GradcheckReport", "gradcheck", "BenchmarkReport", "benchmark"]


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """One dtype's row of the standard. ``mantissa``/``emin`` size its ULP (None: exact)."""
    rtol: float
    atol: float
    cap: float
    cap_ulps: int = 32
    ratio: float = 0.99
    mantissa: Optional[int] = None
    emin: Optional[int] = None

    @property
    def exact(self) -> bool:
        return self.mantissa is None


EXACT = Tolerance(0.0, 0.0, 0.0, 0, 1.0)
TOLERANCES: dict[str, Tolerance] = {
    "float16": Tolerance(2.0**-9, 2.0**-9, 0.1, mantissa=10, emin=-14),
    "bfloat16": Tolerance(2.0**-6, 2.0**-6, 1.0, mantissa=7, emin=-126),
    "float32": Tolerance(2.0**-10, 2.0**-16, 0.01, mantissa=23, emin=-126),
    "float64": Tolerance(2.0**-20, 2.0**-30, 1e-5, mantissa=52, emin=-1022),
}


def tolerance_for(dtype: Any) -> Tolerance:
    """The standard's row for a dtype (complex: its component type; integer/bool: exact)."""
    dt = np.dtype(dtype)
    if dt == bfloat16:
        return TOLERANCES["bfloat16"]
    if dt.kind == "c":
        return TOLERANCES["float32" if dt == np.complex64 else "float64"]
    if dt.kind == "f" and dt.name in TOLERANCES:
        return TOLERANCES[dt.name]
    if dt.kind in "biu":
        return EXACT
    raise TypeError(f"dtype: no precision standard for {dtype_name(dt)}")


def _ulp(g: NDArray[Any], tol: Tolerance) -> NDArray[Any]:
    """One ULP of each golden value in the tolerance's format (subnormal spacing near 0)."""
    _, e = np.frexp(np.abs(g))
    assert tol.emin is not None and tol.mantissa is not None, "an exact dtype has no ULP"
    ulp: NDArray[Any] = np.ldexp(1.0, np.maximum(e - 1, tol.emin) - tol.mantissa)
    return ulp


@dataclasses.dataclass
class CompareReport:
    """The outcome of ``compare``. ``str(report)`` is one readable line."""
    passed: bool
    dtype: str
    shape: tuple[Any, ...]
    count: int
    pass_count: int
    max_abs_error: float
    max_rel_error: float
    worst_index: Optional[tuple[int, ...]]
    worst_actual: Any
    worst_golden: Any
    tolerance: Tolerance
    reason: Optional[str] = None

    @property
    def pass_ratio(self) -> float:
        return self.pass_count / self.count if self.count else 1.0

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        t = self.tolerance
        rule = ("exact" if t.exact else
                f"|a-g| <= {t.atol:.3g} + {t.rtol:.3g}|g| for >= {t.ratio:.0%}, cap {t.cap:g} or {t.cap_ulps} ULP")
        text = (f"{verdict} {self.dtype}{list(self.shape)}: {self.pass_ratio:.2%} of {self.count} within "
                f"({rule}); max abs err {self.max_abs_error:.3g}, max rel err {self.max_rel_error:.3g}")
        if self.worst_index is not None:
            text += f"; worst at {self.worst_index}: actual {self.worst_actual!r}, golden {self.worst_golden!r}"
        if self.reason:
            text += f"; {self.reason}"
        return text


def _host(x: Any) -> NDArray[Any]:
    return x.numpy() if isinstance(x, DeviceArray) else np.asarray(x)


def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def compare(actual: Any, golden: Any, dtype: Any = None) -> CompareReport:
    """Compare ``actual`` (e.g. an NPU result) with ``golden`` (the expected values, possibly
    in higher precision) under the standard's row for ``dtype`` (default: actual's dtype).

    Accepts NumPy arrays, DeviceArrays and array-likes. Returns a CompareReport: passed,
    pass_ratio, max_abs_error, max_rel_error (over elements whose golden is non-zero),
    worst_index and the values there (the element furthest beyond its tolerance), reason.
    """
    a, g = _host(actual), _host(golden)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    tol = tolerance_for(dt)
    name = dtype_name(dt)
    if a.shape != g.shape:
        return CompareReport(False, name, a.shape, a.size, 0, math.inf, math.inf, None, None, None, tol,
                             f"shape {a.shape} differs from golden shape {g.shape}")
    if a.size == 0:
        return CompareReport(True, name, a.shape, 0, 0, 0.0, 0.0, None, None, None, tol)
    wide = np.complex128 if (a.dtype.kind == "c" or g.dtype.kind == "c") else np.float64
    a64, g64 = a.astype(wide), g.astype(wide)
    reason = None
    special = ~np.isfinite(a64) | ~np.isfinite(g64)
    # NaN matches NaN, +-Inf matches the same infinity; any other pairing fails.
    same_special = special & ((np.isnan(a64) & np.isnan(g64)) | (np.isinf(a64) & (a64 == g64)))
    bad = special & ~same_special
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        reason = (f"NaN/Inf at different places: {int(bad.sum())} element(s), first at {first} "
                  f"(actual {_scalar(a[first])!r}, golden {_scalar(g[first])!r})")
    finite = ~special
    with np.errstate(invalid="ignore"):
        err = np.where(finite, np.abs(a64 - g64), 0.0)
        mag = np.where(finite, np.abs(g64), 0.0)
    allowed = tol.atol + tol.rtol * mag
    within = (a == g) if tol.exact and a.dtype.kind in "biu" and g.dtype.kind in "biu" else err <= allowed
    ok = (finite & within) | same_special
    pass_count = int(ok.sum())
    max_abs = float(err.max())
    nz = mag > 0
    max_rel = float((err[nz] / mag[nz]).max()) if nz.any() else (0.0 if max_abs == 0 else math.inf)
    # How far each element is from passing: error over its allowance (exact: any difference).
    over = err / np.where(allowed > 0, allowed, 1.0) if not tol.exact else np.where(ok, 0.0, 1.0 + err)
    flat = int(np.argmax(over))
    worst = np.unravel_index(flat, a.shape) if over.flat[flat] > 0 else None
    worst_index = tuple(int(i) for i in worst) if worst is not None else None
    passed = reason is None
    if passed and pass_count < tol.ratio * a.size - 1e-9:
        passed = False
        reason = f"only {pass_count} of {a.size} elements within tolerance (needs {tol.ratio:.0%})"
    if passed and not tol.exact:
        cap = np.maximum(tol.cap, tol.cap_ulps * _ulp(mag, tol))
        beyond = finite & (err > cap)
        if beyond.any():
            passed = False
            first = tuple(int(i) for i in np.argwhere(beyond)[0])
            reason = (f"{int(beyond.sum())} element(s) beyond the cap, first at {first}: "
                      f"error {float(err[first]):.3g} > {float(cap[first]):.3g}")
    return CompareReport(passed, name, a.shape, a.size, pass_count, max_abs, max_rel, worst_index,
                         _scalar(a[worst_index]) if worst_index is not None else None,
                         _scalar(g[worst_index]) if worst_index is not None else None, tol, reason)


def assert_close(actual: Any, golden: Any, dtype: Any = None, msg: str = "") -> CompareReport:
    """``compare``, raising AssertionError with the report when the case fails."""
    report = compare(actual, golden, dtype)
    if not report.passed:
        raise AssertionError(f"{msg}: {report}" if msg else str(report))
    return report


# ---------------------------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class GradcheckReport:
    """The outcome of ``gradcheck``: one check per row of ``checks`` (name, error, tolerance)."""
    pair: str
    method: str
    checks: list[tuple[str, float, float]]  # of (what, measured relative error, tolerance)
    note: str = ""  # why it fails, where the kernel is known to differ (Backward.kernel_note)

    @property
    def passed(self) -> bool:
        return all(err <= tol for _, err, tol in self.checks)

    @property
    def max_error(self) -> float:
        return max((err for _, err, _ in self.checks), default=0.0)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        parts = ", ".join(f"{what} rel err {err:.2e} (tol {tol:.0e})" for what, err, tol in self.checks)
        note = f"; {self.note}" if self.note else ""
        return f"{'PASS' if self.passed else 'FAIL'} {self.pair} [{self.method}]: {parts}{note}"


def _f64(x: Any) -> NDArray[Any]:
    return _host(x).astype(np.float64)


def _dot(a: Any, b: Any) -> tuple[float, float]:
    """<a, b> in float64, and the scale sum |a| |b| that bounds its rounding."""
    a, b = _f64(a), _f64(b)
    return float(np.sum(a * b)), float(np.sum(np.abs(a) * np.abs(b)))


ADJOINT_TOL = 1e-5   # |<f(x), g> - <x, f*(g)>| / (sum |f(x)||g| + sum |x||f*(g)|), float32 kernels
FD_TOL = 1e-3        # Richardson central differences, plus the forward's rounding bound


@dataclasses.dataclass(frozen=True)
class GradPair:
    """A forward/backward pair and how to check it.

    ``backward_args(fwd_args, fwd_result, grad) -> (args, kwargs)`` builds the backward's
    arguments from the forward's (a dict of its parameters with defaults applied), its
    result, and the output gradient. ``method`` is "adjoint" (linear in the input, or
    piecewise linear with the selection fixed from the forward) or "finite-difference".
    """
    forward: str
    backward: str
    method: str
    backward_args: Callable[[dict[str, Any], Any, Any], tuple[tuple[Any, ...], dict[str, Any]]]
    inputs: tuple[str, ...] = ()    # finite differences: the forward parameters differentiated
    output: int = 0                 # which forward output the gradient is of
    # Forward arguments the backward cannot be the derivative for: a reason, or None.
    refuse: Callable[[dict[str, Any]], Optional[str]] = lambda a: None
    # The description's Backward.also_at and Backward.kernel_note (ops/spec.py).
    also_at: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    kernel_note: Callable[[Mapping[str, Any], Optional[str]], Optional[str]] = lambda a, release: None


def _pairs() -> dict[str, GradPair]:
    """Every forward's pair, from its description's ``backward`` (ops/spec.py: Backward)."""
    from .ops import REGISTRY
    return {s.name: GradPair(s.name, s.backward.name, s.backward.method, s.backward.args, s.backward.inputs,
                             s.backward.output, s.backward.refuse, s.backward.also_at, s.backward.kernel_note)
            for s in REGISTRY if s.backward is not None}


GRAD_PAIRS: dict[str, GradPair] = _pairs()
_BY_BACKWARD = {p.backward: p for p in GRAD_PAIRS.values()}


def _pair(name: str) -> GradPair:
    pair = GRAD_PAIRS.get(name) or _BY_BACKWARD.get(name)
    if pair is None:
        known = ", ".join(sorted(GRAD_PAIRS))
        raise ValueError(f"name: expected a forward or backward function of a pair ({known} or their "
                         f"backwards), got {name!r}")
    return pair


def available_pairs() -> list[GradPair]:
    """The pairs whose two functions this build of ascend_aclnn has."""
    from .ops import REGISTRY
    return [p for p in GRAD_PAIRS.values() if p.forward in REGISTRY and p.backward in REGISTRY]


def _function(name: str) -> Callable[..., Any]:
    from . import functions
    fn: Optional[Callable[..., Any]] = getattr(functions, name, None)
    if fn is None:
        raise ValueError(f"{name} is not an operator of this build of ascend_aclnn")
    return fn


def gradcheck(name: str, *args: Any, backward: Optional[Callable[..., Any]] = None, forward: Optional[Callable[..., Any]] = None,
              seed: int = 0, tol: Optional[float] = None, **kwargs: Any) -> GradcheckReport:
    """Check that a backward kernel is the derivative of its forward, on the active backend.

    ``name`` is either function of a pair (``GRAD_PAIRS``); ``args``/``kwargs`` are the
    **forward's** arguments (float32 arrays; without any, the forward's example is used).
    A pair is checked as its description's ``Backward.method`` says: "adjoint" (linear,
    or piecewise linear with the selection fixed from the forward) with the identity
    ``<fwd(x), g> == <x, bwd(g)>`` for a random g; "finite-difference" with central
    differences of ``L = <y, dy>`` along a random direction of each differentiated input
    (``GradPair.inputs``), against their gradients; the example is checked again at the
    description's ``Backward.also_at`` (where some release's kernel is not the derivative),
    and a failure the kernel explains (``Backward.kernel_note``) says so in the report.
    Kernels run in the inputs' dtype on the backend; the inner products are reduced in
    float64 on the host.
    Tolerances: relative error <= 1e-5 (adjoint); for finite differences (Richardson-
    extrapolated central differences, steps 1e-2 and 5e-3 times the input's largest
    magnitude) 1e-3 plus the bound of the forward's output rounding; or ``tol``.
    ``forward=``/``backward=`` substitute callables for the operator functions (e.g. to
    see a deliberately wrong backward caught).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed!r}")
    pair = _pair(name)
    fwd = forward or _function(pair.forward)
    bwd = backward or _function(pair.backward)
    rng = np.random.default_rng(seed)
    example = not args and not kwargs
    if example:
        from .ops import REGISTRY
        spec = REGISTRY.get(pair.forward)
        if spec is None or spec.example is None:
            raise ValueError(f"{pair.forward}: no example arguments in this build; pass the forward's arguments")
        args, kwargs = spec.example(rng, np.dtype(np.float32))
    bound = _bind(pair.forward, fwd, args, kwargs)
    refused = pair.refuse(bound)
    if refused:
        raise ValueError(f"gradcheck {pair.forward}: {refused}")
    if pair.method == "adjoint":
        return _adjoint(pair, fwd, bwd, args, kwargs, bound, rng, ADJOINT_TOL if tol is None else tol)
    tol = FD_TOL if tol is None else tol
    report = _finite_difference(pair, fwd, bwd, bound, rng, tol)
    checked = [(bound, report.checks)]
    again = dict(bound, **pair.also_at)
    if example and any(k not in bound or bound[k] != v for k, v in pair.also_at.items()):
        more = _finite_difference(pair, fwd, bwd, again, rng, tol).checks
        at = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v!r}" for k, v in pair.also_at.items())
        report.checks = report.checks + [(f"{what} at {at}", e, t) for what, e, t in more]
        checked.append((again, more))
    report.note = _kernel_note(pair, [a for a, checks in checked if any(e > t for _, e, t in checks)])
    return report


def _kernel_note(pair: GradPair, failed: list[dict[str, Any]]) -> str:
    """Why the kernel that runs fails at each of these forward arguments, when its
    description knows why for every one of them; else "" (a failure it does not explain,
    e.g. a wrong backward, gets no excuse)."""
    if not failed:
        return ""
    from .backends import get_backend
    release = None
    if get_backend() == "npu":
        from .backends.npu import runtime
        rt = runtime.runtime_if_started()
        release = rt.release if rt is not None else None
    notes = [pair.kernel_note(a, release) for a in failed]
    if any(n is None for n in notes):
        return ""
    return "; ".join(dict.fromkeys(n for n in notes if n is not None))


def _bind(forward: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The forward's arguments by parameter name, defaults applied."""
    from .ops import REGISTRY
    spec = REGISTRY.get(forward)
    if spec is None:
        params = inspect.signature(fn).parameters
        sig = inspect.Signature([p for n, p in params.items() if n != "out"])
    else:
        sig = inspect.Signature([p for n, p in spec.signature.parameters.items() if n != "out"])
    b = sig.bind(*args, **kwargs)
    b.apply_defaults()
    return dict(b.arguments)


def _first(result: Any, index: int) -> Any:
    return result[index] if isinstance(result, tuple) else result


def _adjoint(pair: GradPair, fwd: Callable[..., Any], bwd: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], bound: dict[str, Any],
             rng: np.random.Generator, tol: float) -> GradcheckReport:
    x = bound[next(iter(bound))]
    result = fwd(*args, **kwargs)
    y = _first(result, pair.output)
    yh = _host(y)
    g = rng.standard_normal(yh.shape).astype(yh.dtype)
    b_args, b_kwargs = pair.backward_args(bound, result, g)
    gx = bwd(*b_args, **b_kwargs)
    lhs, s1 = _dot(yh, g)
    rhs, s2 = _dot(x, gx)
    rel = abs(lhs - rhs) / max(s1 + s2, float(np.finfo(np.float64).tiny))
    return GradcheckReport(pair.forward, "adjoint", [("<fwd(x), g> vs <x, bwd(g)>", rel, tol)])


def _finite_difference(pair: GradPair, fwd: Callable[..., Any], bwd: Callable[..., Any], bound: dict[str, Any],
                       rng: np.random.Generator, tol: float) -> GradcheckReport:
    base = {k: (_host(v) if isinstance(v, DeviceArray) else v) for k, v in bound.items()}
    result = fwd(**base)
    y = _host(_first(result, pair.output))
    dy = rng.standard_normal(y.shape).astype(y.dtype)
    grads = bwd(*pair.backward_args(base, result, dy)[0])
    if not isinstance(grads, tuple):  # a backward with one output returns it bare, not in a tuple
        grads = (grads,)
    checks = []
    for name, grad in zip(pair.inputs, grads):
        p = np.asarray(base[name])
        v = rng.standard_normal(p.shape)
        h = 1e-2 * max(float(np.max(np.abs(p))), 1.0)
        ratios, noises = [], []
        for step in (h, h / 2):
            # The perturbed points are rounded to the input dtype: use the exact difference
            # of the two points actually evaluated, not 2*step*v.
            plus = (p.astype(np.float64) + step * v).astype(p.dtype)
            minus = (p.astype(np.float64) - step * v).astype(p.dtype)
            loss = [_dot(_host(_first(fwd(**dict(base, **{name: pt})), pair.output)), dy) for pt in (plus, minus)]
            analytic, _ = _dot(grad, plus.astype(np.float64) - minus.astype(np.float64))
            analytic = analytic if analytic != 0 else float(np.finfo(np.float64).tiny)
            ratios.append((loss[0][0] - loss[1][0]) / analytic)
            # Rounding of the forward's outputs to their dtype (8 half-ULPs per element).
            eps = 2.0 ** -(np.finfo(y.dtype).nmant + 1) if y.dtype.kind == "f" else 2.0 ** -24
            noises.append(8 * eps * (loss[0][1] + loss[1][1]) / abs(analytic))
        # Richardson: the h^2 term of the central difference cancels.
        estimate = (4 * ratios[1] - ratios[0]) / 3
        checks.append((f"d{name}", abs(estimate - 1.0), tol + (4 * noises[1] + noises[0]) / 3))
    return GradcheckReport(pair.forward, "central differences", checks)


# ---- device timing ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class BenchmarkReport:
    """What ``benchmark`` measured, per call, in milliseconds. device_ms: between events
    recorded on the current stream before and after each call (the device's time on the npu
    backend; on the numpy backend, which runs work as it is called, the host's). host_ms:
    the host's time inside each call (queueing it, on the npu backend)."""
    backend: str
    device_ms: tuple[float, ...]
    host_ms: tuple[float, ...]

    @staticmethod
    def _q(values: tuple[float, ...], q: float) -> float:
        return float(np.percentile(np.asarray(values, dtype=np.float64), q))

    @property
    def device_median_ms(self) -> float:
        return self._q(self.device_ms, 50)

    @property
    def device_p10_ms(self) -> float:
        return self._q(self.device_ms, 10)

    @property
    def device_p90_ms(self) -> float:
        return self._q(self.device_ms, 90)

    @property
    def host_median_ms(self) -> float:
        return self._q(self.host_ms, 50)

    def __str__(self) -> str:
        return (f"{self.backend}: device {self.device_median_ms * 1e3:.1f} us per call (p10 "
                f"{self.device_p10_ms * 1e3:.1f}, p90 {self.device_p90_ms * 1e3:.1f}), host "
                f"{self.host_median_ms * 1e3:.1f} us per call, {len(self.device_ms)} calls")


def _count(name: str, value: Any, least: int) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name}: expected an int >= {least}, got {value!r}")
    return int(value)


def benchmark(fn: Callable[..., Any], *args: Any, warmup: int = 3, repeat: int = 20,
              **kwargs: Any) -> BenchmarkReport:
    """Time ``fn(*args, **kwargs)``: ``warmup`` calls (then a wait, so they are not timed),
    then ``repeat`` calls, each between two timing events on the current stream."""
    import time

    from .api import synchronize
    from .backends import get_backend
    from .streams import Event

    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {type(fn).__name__}")
    warmup, repeat = _count("warmup", warmup, 0), _count("repeat", repeat, 1)
    for _ in range(warmup):
        fn(*args, **kwargs)
    synchronize()  # warm-up work still queued would be timed with the first calls
    starts = [Event(timing=True) for _ in range(repeat)]
    ends = [Event(timing=True) for _ in range(repeat)]
    host: list[float] = []
    for start, end in zip(starts, ends):
        start.record()
        t0 = time.perf_counter_ns()
        fn(*args, **kwargs)
        host.append((time.perf_counter_ns() - t0) / 1e6)
        end.record()
    try:
        device = tuple(s.elapsed_time(e) for s, e in zip(starts, ends))
    finally:
        for e in starts + ends:
            e.close()
    return BenchmarkReport(get_backend(), device, tuple(host))
