"""Generic operator tests: every operator in the registry, on both backends.

The npu backend runs on the C simulator, whose kernels are written independently of the
NumPy reference, so agreement between the two backends is a real check of both.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn.backends.npu import launch as npu_backend
from ascend_aclnn.ops import REGISTRY, codegen
from ascend_aclnn.ops.spec import Args, IntArray, Tensor, TensorArg
from op_db import ADJOINT_PAIRS, CHAINS, OP_DB, tolerance

SPECS = {spec.name: spec for spec in REGISTRY}
OPS = sorted(OP_DB)
DTYPE_CASES = [(op, dt) for op in OPS for dt in OP_DB[op].dtypes]
HAND_CASES = [(op, case) for op in OPS for case in OP_DB[op].hand_cases]
ERROR_CASES = [(op, case) for op in OPS for case in OP_DB[op].error_cases]


def fn(op):
    return getattr(ascend_aclnn, op)


def outputs(result) -> tuple:
    """An operator's result as a tuple of outputs (None where one is not returned)."""
    return result if isinstance(result, tuple) else (result,)


def host(result) -> tuple:
    return tuple(None if r is None else np.asarray(r) for r in outputs(result))


def assert_same(actual, expected, dtype, exact=False):
    """Every output equal (bit for bit when exact), with the same dtype and shape. The
    first output is compared at the tolerance of the dtype under test, the others at
    their own dtype's."""
    actual, expected = outputs(actual), outputs(expected)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if e is None:
            assert a is None, f"output {i}: expected None"
            continue
        assert isinstance(a, np.ndarray), (i, type(a))
        assert a.dtype == e.dtype and a.shape == e.shape, (i, a.dtype, e.dtype, a.shape, e.shape)
        if exact or e.dtype.kind in "iub":
            np.testing.assert_array_equal(a, e, err_msg=f"output {i}")
        else:
            wide = np.complex128 if e.dtype.kind == "c" else np.float64
            np.testing.assert_allclose(a.astype(wide), e.astype(wide), err_msg=f"output {i}",
                                       **tolerance(e.dtype if i else dtype))


def test_every_operator_has_test_data():
    assert set(SPECS) == set(OP_DB)


def test_every_operator_is_public_with_its_signature():
    for name, spec in SPECS.items():
        f = getattr(ascend_aclnn, name)
        assert name in ascend_aclnn.__all__
        assert str(inspect.signature(f)) == str(spec.signature)
        assert spec.aclnn in f.__doc__ and spec.phase1_name in f.__doc__


@pytest.mark.parametrize("op", OPS)
def test_example_arguments_run_on_both_backends_for_every_dtype(op, sim):
    """The description's example (used by the command-line tools) is valid for each of
    the first parameter's dtypes, and both backends agree on it."""
    spec = SPECS[op]
    assert spec.example is not None, f"{op} has no example"
    for dtype in spec.params[0].dtypes:
        args, kwargs = spec.example(np.random.default_rng(0), np.dtype(dtype))
        assert np.asarray(args[0]).dtype == dtype
        with ascend_aclnn.use_backend("numpy"):
            expected = fn(op)(*args, **kwargs)
        with ascend_aclnn.use_backend("npu"):
            actual = fn(op)(*args, **kwargs)
        assert_same(host(actual), host(expected), dtype, OP_DB[op].exact)


def test_generated_operators_module_is_current():
    """functions.py is generated from the descriptions; a stale copy fails here."""
    assert codegen.main(["--check"]) == 0, "run: python -m ascend_aclnn.ops.codegen"


@pytest.mark.parametrize("op,dtype", DTYPE_CASES, ids=[f"{o}-{np.dtype(d).name}" for o, d in DTYPE_CASES])
def test_backends_agree_for_every_dtype(op, dtype, sim):
    info = OP_DB[op]
    for sample in info.samples(np.dtype(dtype), np.random.default_rng(0)):
        with ascend_aclnn.use_backend("numpy"):
            expected = fn(op)(*sample.args, **sample.kwargs)
        with ascend_aclnn.use_backend("npu"):
            actual = fn(op)(*sample.args, **sample.kwargs)
        assert outputs(expected)[0].dtype == np.dtype(dtype)
        assert_same(actual, expected, dtype, info.exact)


@pytest.mark.parametrize("op,case", HAND_CASES, ids=[f"{o}-{c.id}" for o, c in HAND_CASES])
def test_hand_computed_cases(op, case, backend):
    actual, expected = outputs(fn(op)(*case.args, **case.kwargs)), outputs(case.expected)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if e is None:
            assert a is None, f"output {i}"
            continue
        assert a.dtype == e.dtype, (i, a.dtype, e.dtype)
        np.testing.assert_array_equal(a, e, err_msg=f"output {i}")


@pytest.mark.parametrize("op,case", ERROR_CASES, ids=[f"{o}-{c.id}" for o, c in ERROR_CASES])
def test_error_inputs(op, case, backend):
    with pytest.raises(ascend_aclnn.AclnnError) as info:
        fn(op)(*case.args, **case.kwargs)
    err = info.value
    # 161001/161002 are AclnnParamErrors (ValueErrors); a generated API's tiling rule is 561002
    assert isinstance(err, ascend_aclnn.AclnnParamError) == (case.status in (161001, 161002))
    assert err.status == case.status
    assert err.api == SPECS[op].phase1_name
    assert re.search(case.match, str(err)), str(err)
    assert f"{err.status_name} ({case.status})" in str(err)


def _raw_args(spec, args, kwargs, repair=None) -> Args:
    """Arguments as a C caller could pass them: no Python-side checks, None as NULL.
    Outputs get the shapes inference gives; where inference needs the malformed argument,
    the shapes it gives with ``repair`` (the valid values of some arguments) in their
    place ("repaired"), and failing that made-up (1, 1, 1) ones (True); ``a.made_up_outputs``
    says which."""
    bound = spec.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    a = Args()
    for p in spec.params:
        v = bound.arguments[p.name]
        if v is None:
            a[p.name] = None
        elif isinstance(p, Tensor):
            v = np.asarray(v)
            a[p.name] = TensorArg(v, v.shape, v.dtype)
        elif isinstance(p, IntArray):
            a[p.name] = tuple(v)
        else:
            a[p.name] = v
    given = bound.arguments["out"]
    given = (given,) if len(spec.outputs) == 1 else (given or (None,) * len(spec.outputs))
    a["made_up_outputs"] = False
    try:
        inferred = list(spec.infer(a))
    except Exception:  # inference needs an argument that is NULL or malformed here
        a["made_up_outputs"] = "repaired"
        try:
            inferred = list(spec.infer(Args(a, **(repair or {}))))
        except Exception:  # noqa: BLE001
            inferred = [((1, 1, 1), o.dtypes[0] if o.dtypes else np.float32) for o in spec.outputs]
            a["made_up_outputs"] = True
    outs = []
    for out, (shape, dtype) in zip(given, inferred):
        if out is None:
            out = np.zeros(tuple(max(d, 0) for d in (shape if shape is not None else (1, 1, 1))), dtype)
        outs.append(TensorArg(out, out.shape, out.dtype))
    a.outputs = outs
    return a


RAW_CASES = [(op, c) for op, c in ERROR_CASES if c.reaches_c]


@pytest.mark.parametrize("op,case", RAW_CASES, ids=[f"{o}-{c.id}" for o, c in RAW_CASES])
def test_simulator_rejects_what_the_binding_rejects(op, case, npu):
    """The binding's checks and the simulated op_api's agree on the status. This keeps the
    Python checks honest: they mirror what the C layer does with the same arguments."""
    spec = SPECS[op]
    with ascend_aclnn.use_backend("numpy"), pytest.raises(ascend_aclnn.AclnnError) as bound:
        fn(op)(*case.args, **case.kwargs)
    named = bound.value.argument.split("[", 1)[0]
    # Outputs for the shapes the other arguments give: the refused argument's valid value
    # (the op's first sample's) stands in for it while inferring them.
    sample = OP_DB[op].samples(OP_DB[op].dtypes[0], np.random.default_rng(0))[0]
    valid = _raw_args(spec, sample.args, sample.kwargs)
    raw = _raw_args(spec, case.args, case.kwargs, repair={named: valid[named]} if named in valid else None)
    with pytest.raises(ascend_aclnn.AclnnError) as info:
        npu_backend.run(spec, raw)
    assert info.value.status == case.status, str(info.value)
    assert info.value.api == spec.phase1_name
    assert info.value.recent, "the simulator should explain the failure through aclGetRecentErrMsg"
    if raw.made_up_outputs:
        # Outputs not inferred from the case's own arguments could be refused for their own
        # shape, with the same status: the simulator's message must name the argument the
        # binding refused.
        c_name = next((p.c_name for p in spec.params if p.name == named), named)
        said = _squashed(info.value.recent)
        assert _squashed(named) in said or _squashed(c_name) in said, (named, info.value.recent)


def _squashed(text: str) -> str:
    """Lower case without spaces and underscores: kernel_size, kernelSize, "kernel size"."""
    return re.sub(r"[\s_]", "", text.lower())


def _noncontiguous(x: np.ndarray, kind: str) -> np.ndarray:
    """The same values as x, laid out as a strided, transposed or reversed view."""
    if kind == "strided":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    if kind == "transposed":
        return np.ascontiguousarray(np.swapaxes(x, 0, 1)).swapaxes(0, 1)
    return np.ascontiguousarray(x[..., ::-1])[..., ::-1]


def _tensor_params(spec):
    return [(i, p) for i, p in enumerate(spec.params) if isinstance(p, Tensor)]


@pytest.mark.parametrize("op", OPS)
def test_noncontiguous_inputs(op, backend):
    """Every tensor argument that may be strided is passed as a strided, transposed and
    reversed view at once; results must not change."""
    spec, info = SPECS[op], OP_DB[op]
    tried = 0
    for sample in info.samples(np.dtype(np.float32), np.random.default_rng(1)):
        expected = host(fn(op)(*sample.args, **sample.kwargs))
        for kind in ("strided", "transposed", "reversed"):
            args, changed = list(sample.args), 0
            for i, p in _tensor_params(spec):
                x = args[i] if i < len(args) else None
                if p.contiguous or not isinstance(x, np.ndarray) or x.ndim < 2 or x.size == 0:
                    continue
                view = _noncontiguous(x, kind)
                if not view.flags.c_contiguous:
                    args[i], changed = view, changed + 1
            if changed:
                tried += 1
                assert_same(host(fn(op)(*args, **sample.kwargs)), expected, np.float32, exact=True)
    assert tried, "no sample had a tensor argument that could be made non-contiguous"


def _fill(shape, dtype) -> np.ndarray:
    """A recognisable value that no operator writes by accident."""
    return np.full(shape, np.nan if np.dtype(dtype).kind in "fc" else 77, dtype)


def _is_fill(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if a.dtype.kind in "fc" else a == 77


@pytest.mark.parametrize("op", OPS)
def test_out_parameter(op, backend):
    sample = OP_DB[op].samples(np.dtype(np.float32), np.random.default_rng(2))[0]
    expected = host(fn(op)(*sample.args, **sample.kwargs))

    def call(outs):
        return outputs(fn(op)(*sample.args, **sample.kwargs, out=outs[0] if len(outs) == 1 else tuple(outs)))

    # NumPy outs are written in place and returned
    outs = [None if e is None else _fill(e.shape, e.dtype) for e in expected]
    for o, r, e in zip(outs, call(outs), expected):
        if e is not None:
            assert r is o
            np.testing.assert_array_equal(o, e)
    # non-contiguous outs keep their strides and get the values
    wides = [None if e is None else _fill(e.shape[:-1] + (2 * e.shape[-1],), e.dtype) for e in expected]
    call([None if w is None else w[..., ::2] for w in wides])
    for w, e in zip(wides, expected):
        if e is not None:
            np.testing.assert_array_equal(w[..., ::2], e)
            assert _is_fill(w[..., 1::2]).all()
    # DeviceArray outs are written in place and returned
    dev = [None if e is None else ascend_aclnn.empty(e.shape, e.dtype) for e in expected]
    for d, r, e in zip(dev, call(dev), expected):
        if e is not None:
            assert r is d
            np.testing.assert_array_equal(d.numpy(), e)


@pytest.mark.parametrize("op", OPS)
def test_device_array_inputs_give_device_results(op, backend):
    spec = SPECS[op]
    sample = OP_DB[op].samples(np.dtype(np.float32), np.random.default_rng(5))[0]
    expected = host(fn(op)(*sample.args, **sample.kwargs))
    args = list(sample.args)
    for i, _ in _tensor_params(spec):
        if i < len(args) and isinstance(args[i], np.ndarray):
            args[i] = ascend_aclnn.to_device(args[i])
    result = outputs(fn(op)(*args, **sample.kwargs))
    for r, e in zip(result, expected):
        assert (r is None) == (e is None)
        assert r is None or (isinstance(r, ascend_aclnn.DeviceArray) and r.backend == backend)
    assert_same(host(result), expected, np.float32, exact=True)


@pytest.mark.parametrize("chain", CHAINS, ids=[c.id for c in CHAINS])
def test_device_array_chaining(chain, backend):
    """Operators fed each other's DeviceArrays, with no host round trip, give what the
    same chain gives on NumPy arrays."""
    expected = host(chain.run(np.asarray))
    result = outputs(chain.run(ascend_aclnn.to_device))
    for r in result:
        assert r is None or isinstance(r, ascend_aclnn.DeviceArray)
    assert_same(host(result), expected, np.float32, exact=True)


@pytest.mark.parametrize("bwd", sorted(ADJOINT_PAIRS))
def test_adjoint_identity(bwd, backend):
    fwd, make = ADJOINT_PAIRS[bwd]
    x, fwd_args, g, bwd_args = make(np.random.default_rng(4))
    y = outputs(getattr(ascend_aclnn, fwd)(x, *fwd_args))[0]  # the output the gradient is of
    gx = getattr(ascend_aclnn, bwd)(g, *bwd_args)
    lhs = np.vdot(y.astype(np.float64), g.astype(np.float64))
    rhs = np.vdot(x.astype(np.float64), gx.astype(np.float64))
    assert abs(lhs - rhs) <= 1e-5 * max(1.0, abs(lhs)), (lhs, rhs)


def test_backward_differs_from_pytorch_rule_only_at_ties(backend):
    """Away from exact ties the kernel's interval form equals PyTorch's index rule
    i = min(floor((l + 0.5) * L_in / L_out), L_in - 1), computed here in exact integers."""
    for l_in, l_out in [(5, 7), (7, 5), (9, 40), (33, 4)]:
        eye = np.eye(l_out, dtype=np.float32).reshape(l_out, 1, l_out)
        gx = ascend_aclnn.upsample_nearest_exact1d_backward(eye, [l_out], [l_out, 1, l_in])
        torch_rule = np.minimum(((2 * np.arange(l_out) + 1) * l_in) // (2 * l_out), l_in - 1)
        np.testing.assert_array_equal(gx[:, 0, :].argmax(axis=1), torch_rule)


CONTIGUOUS_ONLY = [op for op in OPS if any(p.contiguous for _, p in _tensor_params(SPECS[op]))]


@pytest.mark.parametrize("op", CONTIGUOUS_ONLY)
def test_contiguous_only_inputs_refuse_views(op, backend):
    spec = SPECS[op]
    sample = OP_DB[op].samples(np.dtype(np.float32), np.random.default_rng(1))[0]
    for i, p in _tensor_params(spec):
        if p.contiguous:
            args = list(sample.args)
            args[i] = _noncontiguous(args[i], "strided")
            with pytest.raises(ascend_aclnn.AclnnParamInvalidError, match=f"{p.name}: expected a C-contiguous"):
                fn(op)(*args, **sample.kwargs)
