"""Differential fuzzing of every operator: the numpy backend against the npu backend on
the simulator.

Each example starts from the operator description's own valid example, then hypothesis
mutates it (any parameter, a keyword or defaulted one passed by keyword; a parameter the
examples leave alone gets a few examples of its own): argument values (zero, negative, off by one, huge, NaN and inf where a float
goes, wrong lengths, None, wrong Python types), dtypes (each operator's and invalid ones),
shapes (a dimension dropped, added, zeroed, 1-sized, prime-sized, 0-d), layouts
(strided, reversed, Fortran order, broadcast) and where results go (fresh, NumPy out=,
non-contiguous, read-only, wrong dtype or shape, DeviceArray). Both backends must then
raise the same exception type with the same status, or return the same values (bit for
bit where the operator is declared exact), and the simulator's live counters must be
back to zero after every example. Both backends refuse through one validator
(``spec.bind``), so a refusal before any C call is also sent, as the call's raw C
arguments (tests/sim/c_args.py), to the simulator's own op_api checks, which must return
the same status. Each operator's test prints how many examples were valid calls, refused
(and of those, judged by the simulator too) or other errors, and fails below a minimum
share of valid calls and of refusals the simulator judged. The numpy backend's fast kernels must also give what
the plain reference gives on every example (the same error, or the same bits: see
test_fast_equals_plain.py).

    ASCEND_ACLNN_FUZZ=fast (default, CI)   =long (3000 per operator)   =N (N per operator)
"""
from __future__ import annotations

import contextlib
import gc
import warnings
import math
import os
from typing import Any

import numpy as np
import pytest
import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascend_aclnn
from ascend_aclnn import bfloat16
from ascend_aclnn.backends import numpy as numpy_kernels
from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.ops.spec import IntArray, Scalar, Tensor
from op_db import OP_DB, tolerance
from sim.c_args import simulator_status
from test_fast_equals_plain import assert_same_bits, nan_meetings

PROFILE = os.environ.get("ASCEND_ACLNN_FUZZ", "fast")
# Examples per operator: fast, long, or a number.
EXAMPLES = {"fast": 40, "long": 3000}.get(PROFILE) or int(PROFILE)
SPECS = {s.name: s for s in REGISTRY}
DTYPE_POOL = [np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16,
                                    np.int32, np.int64, np.bool_, np.complex64)] + [bfloat16]
LAYOUTS = ("C", "F", "strided", "reversed", "broadcast")
MAX_ELEMENTS = 1 << 16  # keep valid examples small: this is about behaviour, not speed


def _as_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """The same values (or, for broadcast, values the view repeats) in another memory layout."""
    if x.ndim == 0 or x.size == 0 or layout == "C":
        return x
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "strided":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    if layout == "reversed":
        return np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    return np.broadcast_to(x[..., :1], x.shape)  # stride 0 on the last axis


@st.composite
def _tensor_mutation(draw, x: Any) -> Any:
    if not isinstance(x, np.ndarray):
        return x
    kind = draw(st.sampled_from(["dtype", "shape", "none", "list", "0-d", "special-values"]))
    if kind == "dtype":
        with np.errstate(invalid="ignore"), warnings.catch_warnings():  # lossy casts: any value will do
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning if hasattr(np, "exceptions") else np.ComplexWarning)
            return x.astype(draw(st.sampled_from(DTYPE_POOL)))
    if kind == "none":
        return None
    if kind == "list":
        return x.tolist()
    if kind == "0-d":
        return np.asarray(x.reshape(-1)[:1].reshape(()) if x.size else np.zeros((), x.dtype))
    if kind == "special-values":
        if (x.dtype.kind not in "fc" and x.dtype != bfloat16) or x.size == 0:
            return x
        y = x.copy().reshape(-1)
        y[draw(st.integers(0, y.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
        return y.reshape(x.shape)
    shape = list(x.shape)
    op = draw(st.sampled_from(["drop", "add", "resize"]))
    if op == "drop" and shape:
        shape.pop(draw(st.integers(0, len(shape) - 1)))
    elif op == "add" or not shape:
        shape.insert(draw(st.integers(0, len(shape))), draw(st.sampled_from([1, 2, 3])))
    else:
        i = draw(st.integers(0, len(shape) - 1))
        shape[i] = draw(st.sampled_from([0, 1, 2, 3, 5, 7, 13, shape[i] + 1, max(shape[i] - 1, 0)]))
    if math.prod(shape) > MAX_ELEMENTS:
        return x
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    return rng.standard_normal(shape).astype(np.float32).astype(x.dtype)


@st.composite
def _int_array_mutation(draw, v: Any) -> Any:
    if not isinstance(v, (list, tuple)):
        return v  # already mutated into something else
    v = list(v)
    kind = draw(st.sampled_from(["value", "value", "length", "none", "floats", "bools"]))
    if kind == "none":
        return None
    if kind == "floats":
        return [float(x) for x in v]
    if kind == "bools":
        return [True] * len(v)
    if kind == "length":
        return v[:-1] if v and draw(st.booleans()) else v + [draw(st.sampled_from([1, 2]))]
    if not v:
        return [draw(st.sampled_from([-1, 0, 1]))]
    i = draw(st.integers(0, len(v) - 1))
    v[i] = draw(st.sampled_from([-1, 0, 1, 2, v[i] - 1, v[i] + 1, 2 * v[i], 2**62, 2**63 - 1, -2**63]))
    return v


_SCALAR_VALUES = {
    "double": [0.0, -1.0, 1.0, 0.5, 1e-40, 1e300, float("nan"), float("inf"), float("-inf"), 10**400, True, "1"],
    "bool": [True, False, 1, None, np.bool_(True)],
    "int64": [0, -1, 1, 2, 3, 4, 7, 32, 2**62, 2**63, 1.5, None],
    "string": [None, "", "NCHW", "NHWC", "N" * 300, b"NCHW", 3],
}


def _mutation(param, value):
    if isinstance(param, Tensor):
        return _tensor_mutation(value)
    if isinstance(param, IntArray):
        return _int_array_mutation(value)
    if isinstance(param, Scalar):
        return st.sampled_from(_SCALAR_VALUES[param.c_kind])
    return st.just(value)


def _too_big(spec, args, kwargs) -> bool:
    """A valid call whose outputs would be large (a size of 2**40 is valid, and would make
    both backends try to allocate it): left out, this is about behaviour, not capacity.
    Sizes that overflow int64 stay in: those must be refused."""
    try:
        a = spec.bind(tuple(args), dict(kwargs))
    except Exception:  # noqa: BLE001  an invalid call: fuzz it
        return False
    sizes = [math.prod(o.shape) * o.dtype.itemsize for o in a.outputs]
    if any(n >= 2**63 for n in sizes):
        return False
    return sum(sizes) > 64 * MAX_ELEMENTS


@st.composite
def calls(draw, spec, force=None):
    """(args, kwargs, device: set of argument indices to pass as DeviceArrays, out kind,
    names of the parameters mutated)."""
    dtype = draw(st.sampled_from(list(spec.params[0].dtypes)))
    args, kwargs = spec.example(np.random.default_rng(draw(st.integers(0, 2**31))), np.dtype(dtype))
    args, kwargs = list(args), dict(kwargs)
    mutated = set()
    # two fifths are left unmutated (some of those then get a bad out=); with force, the
    # parameter of that index is always mutated
    for n in range(draw(st.sampled_from([0, 0, 1, 1, 2]) if force is None else st.sampled_from([1, 2]))):
        i = force if force is not None and n == 0 else draw(st.integers(0, len(spec.params) - 1))
        p = spec.params[i]
        if i < len(args):
            args[i] = draw(_mutation(p, args[i]))
        else:  # a keyword or defaulted parameter (data_format, eps, ...): passed by keyword
            kwargs[p.name] = draw(_mutation(p, kwargs.get(p.name, p.default)))
        mutated.add(p.name)
    hypothesis.assume(not _too_big(spec, args, kwargs))
    device = set()
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            if not spec.params[i].contiguous:
                args[i] = _as_layout(a, draw(st.sampled_from(LAYOUTS)))
            if draw(st.integers(0, 3)) == 0:
                device.add(i)
    out = draw(st.sampled_from(["none", "none", "numpy", "strided", "device", "wrong-dtype", "read-only",
                                "wrong-shape"]))
    return args, kwargs, device, out, mutated


def _outs(kind: str, shapes: list, make_device) -> Any:
    made = []
    for shape, dtype in shapes:
        if kind == "numpy":
            made.append(np.zeros(shape, dtype))
        elif kind == "strided":
            made.append(np.zeros(shape[:-1] + (2 * shape[-1],) if shape else shape, dtype)[..., ::2])
        elif kind == "device":
            made.append(make_device(np.zeros(shape, dtype)))
        elif kind == "wrong-dtype":
            made.append(np.zeros(shape, np.int16 if np.dtype(dtype).kind == "f" else np.float32))
        elif kind == "read-only":
            made.append(np.broadcast_to(np.zeros((), dtype), shape))
        else:
            made.append(np.zeros(tuple(shape) + (2,), dtype))
    return made[0] if len(made) == 1 else tuple(made)


def _run(spec, backend: str, args, kwargs, device, out_kind, out_shapes, plain: bool = False):
    """One call on one backend: ("raised", type, status) or ("ok", host outputs); with
    plain, the numpy backend runs the plain reference instead of its fast kernels."""
    with ascend_aclnn.use_backend(backend), (numpy_kernels.plain_reference() if plain else contextlib.nullcontext()):
        call_args = [ascend_aclnn.to_device(a) if i in device else a for i, a in enumerate(args)]
        kw = dict(kwargs)
        if out_kind != "none" and out_shapes is not None:
            kw["out"] = _outs(out_kind, out_shapes, ascend_aclnn.to_device)
        try:  # reading the results is part of the outcome: a device fault surfaces there
            result = getattr(ascend_aclnn, spec.name)(*call_args, **kw)
            results = result if isinstance(result, tuple) else (result,)
            return ("ok", tuple(None if r is None else np.array(r) for r in results))
        except Exception as exc:  # noqa: BLE001  the point is to compare whatever is raised
            return ("raised", type(exc), getattr(exc, "status", None), str(exc))


def _shapes_for_out(spec, args, kwargs):
    """Output shapes and dtypes of a valid call (None when the call is not valid)."""
    try:
        with ascend_aclnn.use_backend("numpy"):
            result = getattr(ascend_aclnn, spec.name)(*args, **kwargs)
    except Exception:  # noqa: BLE001
        return None
    results = result if isinstance(result, tuple) else (result,)
    if any(r is None for r in results):
        return None
    return [(r.shape, r.dtype) for r in results]


def _agree(spec, args, kwargs, device, out_kind, sim):
    out_shapes = _shapes_for_out(spec, args, kwargs)
    expected = _run(spec, "numpy", args, kwargs, device, out_kind, out_shapes)
    plain = _run(spec, "numpy", args, kwargs, device, out_kind, out_shapes, plain=True)
    assert plain[0] == expected[0] and (plain[0] == "ok" or plain[1:3] == expected[1:3]), \
        f"fast kernel {expected[:3]}, plain reference {plain[:3]}"
    if expected[0] == "ok":  # every call the numpy backend accepts: the same bits
        assert_same_bits(expected[1], plain[1], f"{spec.name}: fast kernel vs plain reference",
                         nan_meetings(spec.name, args, kwargs))
    actual = _run(spec, "npu", args, kwargs, device, out_kind, out_shapes)
    gc.collect()
    ascend_aclnn.synchronize()
    ascend_aclnn.empty_cache()
    assert sim.leaks() == {}, "handles or device memory outlived the call"
    assert expected[0] == actual[0], f"numpy {expected[0]}, npu {actual[0]}: {expected[1:]} vs {actual[1:]}"
    if expected[0] == "raised":
        assert expected[1:3] == actual[1:3], f"numpy raised {expected[1:]}, npu raised {actual[1:]}"
        if not _refused_before_c(spec, expected):
            return "raised"
        # Both backends refused through the same validator (spec.bind): the simulated op_api,
        # given the same call's C arguments with no Python check in between, must agree.
        c_status = _simulator_status(spec, args, kwargs, out_kind, out_shapes)
        assert sim.leaks() == {} or (ascend_aclnn.synchronize(), ascend_aclnn.empty_cache(), sim.leaks())[2] == {}
        if c_status is None:
            return "refused, no C form"
        assert c_status == expected[2], \
            f"the binding refused with {expected[2]} ({expected[3]}), the simulator's op_api says {c_status}"
        return "refused, simulator agrees"
    exact = OP_DB[spec.name].exact
    for i, (e, a) in enumerate(zip(expected[1], actual[1])):
        assert (e is None) == (a is None) and (e is None or (e.shape, e.dtype) == (a.shape, a.dtype)), i
        if e is None:
            continue
        if exact or e.dtype.kind in "iub":
            if e.dtype == bfloat16:  # exactly widened, so NumPy sees its NaNs as NaN (equal to each other)
                a, e = a.astype(np.float32), e.astype(np.float32)
            np.testing.assert_array_equal(a, e, err_msg=f"output {i}")
        else:
            wide = np.complex128 if e.dtype.kind == "c" else np.float64
            np.testing.assert_allclose(a.astype(wide), e.astype(wide), err_msg=f"output {i}", **tolerance(e.dtype))
    return "valid"


REFUSALS = (161001, 161002, 561002)  # parameter errors, and a generated API's tiling rule


def _refused_before_c(spec, outcome) -> bool:
    _, exc_type, status, text = outcome
    return issubclass(exc_type, ascend_aclnn.AclnnError) and status in REFUSALS \
        and text.startswith(f"{spec.phase1_name} failed")


def _simulator_status(spec, args, kwargs, out_kind, out_shapes):
    """The status the simulator's phase 1 returns for the call's C arguments ("accepted"
    when it runs the call), or None when the call has no C form (see sim/c_args.py)."""
    out = None
    if out_kind != "none" and out_shapes is not None:  # a DeviceArray out= is the same tensor to C
        out = _outs("numpy" if out_kind == "device" else out_kind, out_shapes, None)
    return simulator_status(spec, args, kwargs, out)


# The share of examples that must be valid calls (a third are left unmutated, and some
# mutations keep a call valid); and of the refused ones, the share whose C form the
# simulator must have judged (the others are Python type errors: no C form).
MIN_VALID, MIN_COMPARED = 0.15, 0.2
FORCED = 3  # examples for each parameter the ordinary ones never mutated


@pytest.mark.parametrize("op", sorted(SPECS))
def test_backends_agree_on_fuzzed_calls(op, sim):
    spec = SPECS[op]

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=PROFILE == "fast", database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(calls(spec))
    def check(call):
        args, kwargs, device, out_kind, mutated = call
        outcome = _agree(spec, args, kwargs, device, out_kind, sim)
        tally[outcome] = tally.get(outcome, 0) + 1
        for name in mutated:
            hits[name] = hits.get(name, 0) + 1

    tally: dict[str, int] = {}
    hits: dict[str, int] = {}
    check()
    # Every parameter gets mutated: those the examples above left alone (an operator with
    # many parameters, at 40 examples) get FORCED examples of their own.
    for i, p in enumerate(spec.params):
        if p.name not in hits:
            settings(max_examples=FORCED, deadline=None, derandomize=PROFILE == "fast", database=None,
                     suppress_health_check=list(HealthCheck))(given(calls(spec, force=i))(check.hypothesis.inner_test))()
    n = sum(tally.values())
    refused = tally.get("refused, simulator agrees", 0) + tally.get("refused, no C form", 0)
    print(f"\n{op}: {n} examples: {tally.get('valid', 0)} valid calls, {refused} refused before any C call "
          f"({tally.get('refused, simulator agrees', 0)} of them also by the simulator given their C arguments, "
          f"{tally.get('refused, no C form', 0)} with no C form), {tally.get('raised', 0)} other errors; "
          f"mutations per parameter: {dict(sorted(hits.items()))}")
    never = [p.name for p in spec.params if p.name not in hits]
    assert not never, f"{op}: the fuzz never mutated {never}"
    assert tally.get("valid", 0) >= MIN_VALID * n, f"{op}: too few valid calls: {tally}"
    assert tally.get("refused, simulator agrees", 0) >= MIN_COMPARED * refused, f"{op}: too few refusals compared: {tally}"
