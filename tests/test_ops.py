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
from ascend_aclnn.backends import npu as npu_backend
from ascend_aclnn.ops import REGISTRY, codegen
from ascend_aclnn.ops.spec import Args, IntArray, Tensor, TensorArg
from op_db import ADJOINT_PAIRS, OP_DB, tolerance

SPECS = {spec.name: spec for spec in REGISTRY}
OPS = sorted(OP_DB)
DTYPE_CASES = [(op, dt) for op in OPS for dt in OP_DB[op].dtypes]
HAND_CASES = [(op, case) for op in OPS for case in OP_DB[op].hand_cases]
ERROR_CASES = [(op, case) for op in OPS for case in OP_DB[op].error_cases]


def fn(op):
    return getattr(ascend_aclnn, op)


def assert_same(actual, expected, dtype, exact=False):
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if exact:
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), **tolerance(dtype))


def test_every_operator_has_test_data():
    assert set(SPECS) == set(OP_DB)


def test_every_operator_is_public_with_its_signature():
    for name, spec in SPECS.items():
        f = getattr(ascend_aclnn, name)
        assert name in ascend_aclnn.__all__
        assert str(inspect.signature(f)) == str(spec.signature)
        assert spec.aclnn in f.__doc__ and spec.phase1_name in f.__doc__


def test_generated_operators_module_is_current():
    """operators.py is generated from the descriptions; a stale copy fails here."""
    assert codegen.main(["--check"]) == 0, "run: python -m ascend_aclnn.ops.codegen"


@pytest.mark.parametrize("op,dtype", DTYPE_CASES, ids=[f"{o}-{np.dtype(d).name}" for o, d in DTYPE_CASES])
def test_backends_agree_for_every_dtype(op, dtype, sim):
    info = OP_DB[op]
    for sample in info.samples(np.dtype(dtype), np.random.default_rng(0)):
        with ascend_aclnn.use_backend("numpy"):
            expected = fn(op)(*sample.args, **sample.kwargs)
        with ascend_aclnn.use_backend("npu"):
            actual = fn(op)(*sample.args, **sample.kwargs)
        assert expected.dtype == np.dtype(dtype)
        assert_same(actual, expected, dtype, info.exact)


@pytest.mark.parametrize("op,case", HAND_CASES, ids=[f"{o}-{c.id}" for o, c in HAND_CASES])
def test_hand_computed_cases(op, case, backend):
    actual = fn(op)(*case.args)
    assert actual.dtype == case.expected.dtype
    np.testing.assert_array_equal(actual, case.expected)


@pytest.mark.parametrize("op,case", ERROR_CASES, ids=[f"{o}-{c.id}" for o, c in ERROR_CASES])
def test_error_inputs(op, case, backend):
    with pytest.raises(ascend_aclnn.AclnnParamError) as info:
        fn(op)(*case.args, **case.kwargs)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.status == case.status
    assert err.api == SPECS[op].phase1_name
    assert re.search(case.match, str(err)), str(err)
    assert ("ACLNN_ERR_PARAM_NULLPTR" if case.status == 161001 else "ACLNN_ERR_PARAM_INVALID") in str(err)


def _raw_args(spec, args, kwargs) -> Args:
    """Arguments as a C caller could pass them: no Python-side checks, None as NULL."""
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
    out = bound.arguments["out"]
    if out is None:
        try:
            (shape, dtype), = spec.infer(a)
        except (TypeError, AttributeError):  # inference needs an argument that is NULL here
            shape, dtype = (1, 1, 1), np.float32
        if shape is None:
            shape = (1, 1, 1)
        out = np.zeros(tuple(max(d, 0) for d in shape), dtype)
    a["outputs"] = [TensorArg(out, out.shape, out.dtype)]
    return a


RAW_CASES = [(op, c) for op, c in ERROR_CASES if c.reaches_c]


@pytest.mark.parametrize("op,case", RAW_CASES, ids=[f"{o}-{c.id}" for o, c in RAW_CASES])
def test_simulator_rejects_what_the_binding_rejects(op, case, npu):
    """The binding's checks and the simulated op_api's agree on the status. This keeps the
    Python checks honest: they mirror what the C layer does with the same arguments."""
    spec = SPECS[op]
    with pytest.raises(ascend_aclnn.AclnnError) as info:
        npu_backend.run(spec, _raw_args(spec, case.args, case.kwargs))
    assert info.value.status == case.status, str(info.value)
    assert info.value.api == spec.phase1_name
    assert info.value.recent, "the simulator should explain the failure through aclGetRecentErrMsg"


def _noncontiguous_variants(x: np.ndarray):
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    yield "strided", wide[..., ::2]
    yield "transposed", np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)
    yield "reversed", np.ascontiguousarray(x[..., ::-1])[..., ::-1]


@pytest.mark.parametrize("op", OPS)
def test_noncontiguous_inputs(op, backend):
    info = OP_DB[op]
    samples = info.samples(np.dtype(np.float32), np.random.default_rng(1))
    for sample in [s for s in samples if min(s.args[0].shape[:2]) > 1]:  # else a transpose is still contiguous
        expected = fn(op)(*sample.args)
        for kind, view in _noncontiguous_variants(sample.args[0]):
            assert not view.flags.c_contiguous, kind
            actual = fn(op)(view, *sample.args[1:])
            np.testing.assert_array_equal(actual, expected, err_msg=kind)


@pytest.mark.parametrize("op", OPS)
def test_out_parameter(op, backend):
    sample = OP_DB[op].samples(np.dtype(np.float32), np.random.default_rng(2))[0]
    expected = fn(op)(*sample.args)
    out = np.full(expected.shape, np.nan, expected.dtype)
    assert fn(op)(*sample.args, out=out) is out
    np.testing.assert_array_equal(out, expected)
    # a non-contiguous out keeps its strides and gets the values
    wide = np.full(expected.shape[:-1] + (2 * expected.shape[-1],), np.nan, expected.dtype)
    assert fn(op)(*sample.args, out=wide[..., ::2]) is not None
    np.testing.assert_array_equal(wide[..., ::2], expected)
    assert np.isnan(wide[..., 1::2]).all()
    # a DeviceArray out is written in place and returned
    dev_out = ascend_aclnn.empty(expected.shape, expected.dtype)
    assert fn(op)(*sample.args, out=dev_out) is dev_out
    np.testing.assert_array_equal(dev_out.numpy(), expected)


def test_device_array_chaining(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    with ascend_aclnn.use_backend("numpy"):
        expected = ascend_aclnn.upsample_nearest_exact1d_backward(
            ascend_aclnn.upsample_nearest_exact1d(x, [11]), [11], [2, 3, 5])
    dx = ascend_aclnn.to_device(x)
    y = ascend_aclnn.upsample_nearest_exact1d(dx, [11])
    assert isinstance(y, ascend_aclnn.DeviceArray) and y.shape == (2, 3, 11) and y.backend == backend
    gx = ascend_aclnn.upsample_nearest_exact1d_backward(y, [11], [2, 3, 5])
    assert isinstance(gx, ascend_aclnn.DeviceArray) and gx.dtype == np.float32
    np.testing.assert_allclose(gx.numpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(y), ascend_aclnn.upsample_nearest_exact1d(x, [11]))


@pytest.mark.parametrize("bwd", sorted(ADJOINT_PAIRS))
def test_adjoint_identity(bwd, backend):
    fwd, make = ADJOINT_PAIRS[bwd]
    x, fwd_args, g, bwd_args = make(np.random.default_rng(4))
    y = getattr(ascend_aclnn, fwd)(x, *fwd_args)
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
