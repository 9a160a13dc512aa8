"""ascend_aclnn.aclnn: any aclnn operator called through its header prototype, against the
simulator: every operator it implements (the described ones equal to their described
functions, the five others and the vendor's against NumPy computations written here), every
parameter kind and its conversion, hostile values refused before any C call, CANN's own
errors, threads, plans, the caches, the header search path and the numpy backend.

The ``npu`` fixture checks after every test that no handle (tensors, tensor and scalar
lists, scalars, arrays, executors) and no device memory outlived it.
"""
from __future__ import annotations

import ctypes
import decimal
import fractions
import inspect
import keyword
import os
import pydoc
import re
import textwrap
import threading
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascend_aclnn as aa
from ascend_aclnn import aclnn
from ascend_aclnn.cann import headers
from ascend_aclnn.errors import AclnnError, AclnnParamInvalidError, AclnnParamNullptrError, CannLoadError
from ascend_aclnn.ops import REGISTRY, checked_calls
from ascend_aclnn.ops.spec import Args, Checker, OpSpec, scalar_bytes
from conftest import run_python, shared_build
from op_db import OP_DB

VENDOR = "aclsim_custom"
F32, F16, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32, np.int64))
ACL = {"FLOAT": 0, "FLOAT16": 1, "INT8": 2, "INT32": 3, "INT64": 9, "DOUBLE": 11, "BOOL": 12, "COMPLEX128": 17,
       "BF16": 27, "UINT64": 10, "INT16": 6, "UINT8": 4}


def x23(dtype=np.float32, scale=1.0):
    return (np.arange(6, dtype=np.float64).reshape(2, 3) * scale).astype(dtype)


def host(r):
    return r.numpy() if isinstance(r, aa.DeviceArray) else np.asarray(r)


def same_bits(a, b) -> bool:
    a, b = host(a), host(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


# ---------------------------------------------------------------------------------------------
# the described operators: the raw call equals the described function
# ---------------------------------------------------------------------------------------------

def raw_arguments(spec, sample, outs):
    """A described call's arguments in the header's order: its parameters (defaults filled
    in), then its outputs."""
    bound = spec._bind_arguments(sample.args, sample.kwargs)
    return [bound[p.name] for p in spec.params] + list(outs)


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_raw_call_equals_the_described_function(npu, name):
    """Every sample of every dtype of the described operators, NumPy in and out: the same bits. Outputs the
    NPU leaves partly unwritten (the mask tail, an empty backward) are given zero-filled,
    as the described functions fill them; the raw call keeps what it is given there."""
    spec = REGISTRY[name]
    raw = aa.aclnn.operator(spec.aclnn)
    info = OP_DB[name]
    rng = np.random.default_rng(0)
    count = 0
    for dtype in info.dtypes:
        for sample in info.samples(dtype, rng):
            want = getattr(aa, name)(*sample.args, **sample.kwargs)
            want = want if isinstance(want, tuple) else (want,)
            shapes = spec.infer(spec.bind(sample.args, sample.kwargs))
            outs = [np.zeros(shape, dt) for shape, dt in shapes]
            got = raw(*raw_arguments(spec, sample, outs))
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(want) and all(g is o for g, o in zip(got, outs))  # returns what it wrote
            for w, g in zip(want, got):
                if w is not None:  # group_norm_swish_grad returns None for an output not asked for
                    assert same_bits(g, w), (name, dtype, sample)
            count += 1
    assert count >= len(info.dtypes)  # one sample per dtype at least: an operator's example alone


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_raw_call_on_device_arrays_equals_the_described_function(npu, name):
    spec = REGISTRY[name]
    info = OP_DB[name]
    sample = info.samples(info.dtypes[0], np.random.default_rng(1))[0]
    want = getattr(aa, name)(*sample.args, **sample.kwargs)
    want = want if isinstance(want, tuple) else (want,)
    shapes = spec.infer(spec.bind(sample.args, sample.kwargs))
    outs = [aa.to_device(np.zeros(shape, dt)) for shape, dt in shapes]
    dev_sample = type(sample)(tuple(aa.to_device(a) if isinstance(a, np.ndarray) else a for a in sample.args),
                              sample.kwargs)
    got = aa.aclnn.operator(spec.aclnn)(*raw_arguments(spec, dev_sample, outs))
    got = got if isinstance(got, tuple) else (got,)
    assert all(g is o for g, o in zip(got, outs))
    for w, g in zip(want, got):
        if w is not None:
            assert same_bits(g, w)


def test_the_upsample_example(npu):
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)
    out = np.empty((2, 3, 5), np.float32)
    assert aa.aclnn.UpsampleNearestExact1d(x, [5], 0.0, out) is out
    assert np.array_equal(out, aa.upsample_nearest_exact1d(x, [5]))


# ---------------------------------------------------------------------------------------------
# the other operators the simulator models, against NumPy
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8])
def test_add(npu, dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 4)) * 50).astype(dtype)
    y = (rng.standard_normal((3, 1)) * 50).astype(dtype)  # broadcast
    out = np.empty((2, 3, 4), dtype)
    alpha = 3 if np.dtype(dtype).kind == "i" else 0.5
    assert aa.aclnn.Add(x, y, alpha, out) is out
    if np.dtype(dtype).kind == "i":  # exact, wrapped to the width
        want = (x.astype(np.int64) + alpha * y.astype(np.int64)).astype(dtype)
    elif dtype == np.float32:  # fp32 Axpy: alpha rounded to fp32, no FMA
        want = x + np.float32(alpha) * y
    else:
        want = x + y * alpha
    assert np.array_equal(out, want)


def test_cat(npu):
    a, b = x23(), x23(scale=-1.0)
    c = np.arange(3, dtype=np.float32).reshape(1, 3)
    out = np.empty((5, 3), np.float32)
    assert aa.aclnn.Cat([a, b, c], 0, out) is out
    assert np.array_equal(out, np.concatenate([a, b, c], 0))
    out = np.empty((2, 6), np.float64)  # cast to out's dtype, negative dim, DeviceArrays and NumPy mixed
    aa.aclnn.Cat((aa.to_device(a), b), -1, out)
    assert np.array_equal(out, np.concatenate([a, b], 1).astype(np.float64))


def test_split_tensor_writes_a_list_back(npu):
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    outs = [np.zeros((2, 3), np.float32), aa.empty((2, 3)), np.zeros((1, 3), np.float32)]
    got = aa.aclnn.SplitTensor(x, 2, 0, outs)
    assert isinstance(got, list) and all(g is o for g, o in zip(got, outs))
    want = np.split(x, [2, 4], 0)
    assert np.array_equal(outs[0], want[0]) and np.array_equal(outs[1].numpy(), want[1])
    assert np.array_equal(outs[2], want[2])
    ints = [np.zeros((3, 3), np.int64), np.zeros((2, 3), np.int64)]  # pieces cast to out's dtype
    aa.aclnn.SplitTensor(x * 1.5, 3, 0, ints)
    assert np.array_equal(np.concatenate(ints), (x * 1.5).astype(np.int64))


def test_what_the_operator_leaves_unwritten_keeps_the_callers_values(npu):
    """SplitTensor leaves the tensors of out past the pieces alone, as CANN does: a NumPy one
    keeps its contents (it is uploaded before the call), as a DeviceArray does."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    spare = np.full((1, 3), 7.0, np.float32)
    spare_d = aa.to_device(np.full((1, 3), 8.0, np.float32))
    aa.aclnn.SplitTensor(x, 1, 0, [np.empty((1, 3), np.float32), np.empty((1, 3), np.float32), spare, spare_d])
    assert spare.tolist() == [[7.0] * 3] and spare_d.numpy().tolist() == [[8.0] * 3]
    out = np.full((2, 2), 5.0, np.float32)
    aa.aclnn.Cat([np.zeros((0,), np.float32)], 0, out)  # nothing left to join: success, nothing run
    assert out.tolist() == [[5.0, 5.0], [5.0, 5.0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32])
def test_foreach_mul_scalar_list(npu, dtype):
    rng = np.random.default_rng(4)
    xs = [(rng.standard_normal(s) * 10).astype(dtype) for s in ((2, 3), (4,), (1, 2, 2))]
    ints = np.dtype(dtype) == I32
    scalars = [3, -2, 5] if ints else [0.5, -1.25, 3.0]
    outs = [np.empty_like(x) for x in xs[:2]] + [aa.empty((1, 2, 2), dtype)]
    got = aa.aclnn.ForeachMulScalarList(xs, scalars, outs)
    assert isinstance(got, list) and all(g is o for g, o in zip(got, outs))
    for x, s, o in zip(xs, scalars, outs):
        if ints:
            want = (x.astype(np.int64) * s).astype(np.int32)
        elif np.dtype(dtype) == F16:  # the scalar rounded to fp16, the product rounded once
            want = (x.astype(np.float32) * np.float32(np.float16(s))).astype(np.float16)
        else:
            want = (x.astype(np.float32) * np.float32(s)).astype(dtype)
        assert same_bits(o, want), (dtype, s)


@pytest.mark.parametrize("dims,keep,dtype", [([1], False, F32), ([0, -1], True, F64), ([], False, F32),
                                              ([0], False, I64)])
def test_reduce_sum(npu, dims, keep, dtype):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8
    if dtype.kind == "i":
        x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    axes = tuple(dims) if dims else None
    want = x.astype(np.float64 if dtype.kind == "f" else np.int64).sum(axis=axes, keepdims=keep).astype(dtype)
    out = np.empty(want.shape, dtype)
    assert aa.aclnn.ReduceSum(x, dims, keep, dtype, out) is out
    assert np.array_equal(out, want)


def masked_scale(x, weights, mask, mode, scale, exponent):
    """aclnnCustomMaskedScale, from its header's documentation: each step in fp32, rounded
    once to x's dtype."""
    v = x.astype(np.float32)
    w, m = np.asarray(weights, np.float32), np.asarray(mask, bool)
    t = np.where(m, v * w if mode == "mul" else v + w, v)
    return np.ldexp(t * np.float32(scale), exponent).astype(np.float32).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("mode,scale,exponent", [("mul", 0.5, 1), ("add", -2.5, -3), ("mul", 1.0, 127)])
def test_vendor_operator_values(npu, dtype, mode, scale, exponent):
    x = np.random.default_rng(5).standard_normal((2, 3, 4)).astype(dtype)
    weights, mask = [0.5, -1.25, 3.0, 1e-3], [True, False, True, True]
    out = np.empty_like(x)
    assert aa.aclnn.CustomMaskedScale(x, weights, mask, mode, scale, exponent, out) is out
    with np.errstate(all="ignore"):
        assert same_bits(out, masked_scale(x, weights, mask, mode, scale, exponent))


# ---------------------------------------------------------------------------------------------
# the vendor package: found through the loader's vendors step, and which library answers
# ---------------------------------------------------------------------------------------------

class _DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                ("saddr", ctypes.c_void_p)]


def library_of(fn) -> str:
    """The file that defines a bound C function (dladdr)."""
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    assert libc.dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info))
    return os.path.realpath(info.fname.decode())


def test_vendor_operator_found_through_the_vendors_step(npu, sim):
    vendor_root = sim.prefix / "opp" / "vendors" / VENDOR / "op_api"
    proto = aa.aclnn.prototype("CustomMaskedScale")
    assert proto.origin == f"vendor {VENDOR}"
    assert Path(proto.header) == vendor_root / "include" / "aclnn_custom_masked_scale.h"
    assert [(p.name, p.c_type, p.kind) for p in proto.params] == [
        ("self", "const aclTensor *", "aclTensor"), ("weights", "const aclFloatArray *", "aclFloatArray"),
        ("mask", "const aclBoolArray *", "aclBoolArray"), ("mode", "const char *", "string"),
        ("scale", "float", "float"), ("exponent", "int8_t", "int8_t"), ("out", "aclTensor *", "aclTensor")]
    x = x23()
    aa.aclnn.CustomMaskedScale(x, [1.0, 2.0, 3.0], [True] * 3, "mul", 1.0, 0, np.empty_like(x))
    from ascend_aclnn.cann.loader import get_cann
    cann = get_cann()
    vendor_lib = vendor_root / "lib" / "libcust_opapi.so"
    assert Path(cann.operator_sources["aclnnCustomMaskedScale"]) == vendor_lib
    phase1, phase2 = cann.operator("aclnnCustomMaskedScale", ())
    assert library_of(phase1) == library_of(phase2) == str(vendor_lib.resolve())
    status = cann.operator_library_status()
    assert status[0][0].label == f"vendor {VENDOR}" and status[0][1] == "loaded"
    assert [lib.origin for lib, _ in status][-1] in ("monolithic", "split")


def test_the_vendor_shadows_aclnn_add(npu, sim):
    """The vendor package also exports aclnnAdd; the loader searches vendors before the
    built-in libraries (op-plugin's order), so its aclnnAdd answers, through the built-in
    header's prototype (the vendor has no header for it)."""
    from ascend_aclnn.cann.loader import get_cann
    x = x23()
    assert np.array_equal(aa.aclnn.Add(x, x, 2.0, np.empty_like(x)), 3 * x)
    cann = get_cann()
    vendor_lib = sim.prefix / "opp" / "vendors" / VENDOR / "op_api" / "lib" / "libcust_opapi.so"
    assert Path(cann.operator_sources["aclnnAdd"]) == vendor_lib
    phase1, _ = cann.operator("aclnnAdd", ())
    assert library_of(phase1) == str(vendor_lib.resolve())
    assert aa.aclnn.prototype("Add").origin.startswith("built-in ")
    aa.aclnn.Cat([x], 0, np.empty_like(x))  # not in the vendor package: the built-in library
    assert Path(cann.operator_sources["aclnnCat"]).parent == sim.lib_dir


def test_without_the_vendor_the_builtin_add_answers(sim, tmp_path):
    """ASCEND_OPP_PATH at an opp tree with no vendors: aclnnAdd comes from the built-in
    library and the vendor's operator is not declared anywhere."""
    (tmp_path / "opp" / "vendors").mkdir(parents=True)
    result = run_python(textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        from ascend_aclnn.cann.loader import get_cann
        x = np.ones((2, 3), np.float32)
        print(aa.aclnn.Add(x, x, 1.0, np.empty_like(x)).tolist())
        print(get_cann().operator_sources["aclnnAdd"])
        print("aclnnCustomMaskedScale" in aa.aclnn.names())
        try:
            aa.aclnn.CustomMaskedScale
        except AttributeError as exc:
            print("AttributeError", "no header declares aclnnCustomMaskedScaleGetWorkspaceSize" in str(exc))
    """), sim, ASCEND_OPP_PATH=str(tmp_path / "opp"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]"
    assert Path(lines[1]).parent == sim.lib_dir
    assert lines[2:] == ["False", "AttributeError True"]


# ---------------------------------------------------------------------------------------------
# parameter kinds
# ---------------------------------------------------------------------------------------------

def test_tensor_arguments_numpy_strided_and_device(npu):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = base[::2, ::2]                      # a strided view, read as it lies
    y = np.ones((2, 3), np.float32)
    out = np.zeros((2, 6), np.float32)[:, ::2]  # a strided output: written back into the view
    assert aa.aclnn.Add(x, y, 1.0, out) is out
    assert np.array_equal(out, x + 1)
    assert np.array_equal(aa.aclnn.Add(aa.to_device(x), y.tolist(), 1.0, np.empty((2, 3), np.float32)), x + 1)


def test_device_array_results_stay_queued(npu, sim):
    x = x23()
    d, o = aa.to_device(x), aa.empty((2, 3))
    aa.synchronize()
    assert aa.aclnn.Add(d, d, 1.0, o) is o
    assert sim.live("pending_tasks") >= 1  # queued, not waited for
    assert np.array_equal(o.numpy(), 2 * x)
    assert sim.live("pending_tasks") == 0


def test_none_is_null_and_cann_answers_161001(npu):
    x = x23()
    for args, name in (((None, x, 1.0, np.empty_like(x)), "self"), ((x, x, None, np.empty_like(x)), "alpha"),
                       ((x, x, 1.0, None), "out")):
        with pytest.raises(AclnnParamNullptrError) as info:
            aa.aclnn.Add(*args)
        assert info.value.status == 161001 and info.value.recent == f"aclnnAddGetWorkspaceSize: {name} is NULL"
    with pytest.raises(AclnnParamNullptrError, match="dims is NULL"):
        aa.aclnn.ReduceSum(x, None, False, np.float32, np.empty(1, np.float32))
    with pytest.raises(AclnnParamNullptrError, match="mode is NULL"):
        aa.aclnn.CustomMaskedScale(x, [1.0] * 3, [True] * 3, None, 1.0, 0, np.empty_like(x))


def scalar_of(value):
    acl, raw = scalar_bytes(value, Checker("test"), "alpha")
    return acl, raw


def test_scalar_conversion_follows_torch_npu():
    """bool -> BOOL, int -> INT64, float -> DOUBLE, complex -> COMPLEX128; NumPy scalars keep
    their dtype; aa.Scalar(value, dtype) for any other."""
    assert scalar_of(True) == (ACL["BOOL"], b"\x01")
    assert scalar_of(-2) == (ACL["INT64"], np.int64(-2).tobytes())
    assert scalar_of(0.1) == (ACL["DOUBLE"], np.float64(0.1).tobytes())
    assert scalar_of(1 - 2j) == (ACL["COMPLEX128"], np.complex128(1 - 2j).tobytes())
    assert scalar_of(np.float16(1.5)) == (ACL["FLOAT16"], np.float16(1.5).tobytes())
    assert scalar_of(np.uint64(2**64 - 1)) == (ACL["UINT64"], np.uint64(2**64 - 1).tobytes())
    assert scalar_of(ml_dtypes.bfloat16(3)) == (ACL["BF16"], ml_dtypes.bfloat16(3).tobytes())
    assert scalar_of(aa.Scalar(2, np.int8)) == (ACL["INT8"], b"\x02")
    assert scalar_of(aa.Scalar(True, np.float32)) == (ACL["FLOAT"], np.float32(1).tobytes())
    assert scalar_of(aa.Scalar(0.1, ml_dtypes.bfloat16)) == (ACL["BF16"], ml_dtypes.bfloat16(0.1).tobytes())
    assert aa.Scalar is aa.aclnn.Scalar


def test_scalar_dtypes_reach_cann(npu):
    """What CANN receives, seen through aclnnAdd's alpha rules: an int alpha is INT64 (exact
    on int32, past int32's range), a float one DOUBLE (refused for int32, which CANN names),
    a NumPy scalar its own dtype, complex COMPLEX128."""
    xi = np.array([1, 2, 3], np.int32)
    out = np.empty(3, np.int32)
    aa.aclnn.Add(xi, xi, 2**32 + 3, out)                  # wraps: alpha * other mod 2**32
    assert out.tolist() == [4, 8, 12]
    for alpha, acl in ((1.5, "ACL_DOUBLE"), (np.float16(1), "ACL_FLOAT16"), (1j, "ACL_COMPLEX128"),
                       (aa.Scalar(2, np.float32), "ACL_FLOAT")):
        with pytest.raises(AclnnParamInvalidError) as info:
            aa.aclnn.Add(xi, xi, alpha, out)
        assert info.value.recent == f"aclnnAddGetWorkspaceSize: alpha dtype {acl} cannot be cast to the promoted dtype " \
                                    "ACL_INT32"
    xb = np.array([True, False])
    assert aa.aclnn.Add(xb, xb, True, np.empty(2, bool)).tolist() == [True, False]
    xd = np.array([1.0, 3.0])
    assert np.array_equal(aa.aclnn.Add(xd, xd, 0.1, np.empty(2)), xd + xd * 0.1)  # a double, not rounded to fp32


def test_scalar_list_kinds(npu):
    x = [np.arange(3, dtype=np.int32)]
    assert aa.aclnn.ForeachMulScalarList(x, [2], [np.empty(3, np.int32)])[0].tolist() == [0, 2, 4]
    assert aa.aclnn.ForeachMulScalarList(x, np.array([3]), [np.empty(3, np.int32)])[0].tolist() == [0, 3, 6]
    with pytest.raises(AclnnParamInvalidError, match="scalars dtype ACL_INT32"):  # an ndarray's items keep its dtype
        aa.aclnn.ForeachMulScalarList(x, np.array([3], np.int32), [np.empty(3, np.int32)])
    xf = [np.ones(2, np.float32)]
    assert aa.aclnn.ForeachMulScalarList(xf, (np.float32(0.5),), [np.empty(2, np.float32)])[0].tolist() == [0.5] * 2


def test_int_float_bool_arrays_and_by_value_kinds(npu):
    x = np.ones((2, 3), np.float32)
    want = masked_scale(x, [1, 2, 3], [True, False, True], "add", 0.5, -1)
    for weights in ([1, 2.0, 3], (1.0, 2.0, 3.0), np.array([1.0, 2.0, 3.0]), np.array([1, 2, 3], np.int64)):
        for mask in ([True, False, True], (True, False, True), np.array([True, False, True])):
            out = aa.aclnn.CustomMaskedScale(x, weights, mask, "add", 0.5, np.int8(-1), np.empty_like(x))
            assert np.array_equal(out, want)

    class Mode(str):
        pass
    assert np.array_equal(aa.aclnn.CustomMaskedScale(x, [1, 2, 3], [True, False, True], Mode("add"), 0.5, -1,
                                                     np.empty_like(x)), want)
    for dims in ([1], (1,), np.array([1]), [np.int64(1)]):
        assert aa.aclnn.ReduceSum(x, dims, False, np.float32, np.empty(2, np.float32)).tolist() == [3.0, 3.0]
    for dtype, out_dtype in ((np.float16, F16), ("float16", F16), (np.dtype("f2"), F16), (float, F64),
                             (ml_dtypes.bfloat16, ml_dtypes.bfloat16)):
        out = aa.aclnn.ReduceSum(x, [0, 1], True, dtype, np.empty((1, 1), out_dtype))
        assert out.dtype == out_dtype and float(out[0, 0]) == 6.0
    # uint64 and int64 by value
    parts = aa.aclnn.SplitTensor(x, np.uint64(2), np.int64(-1), [np.empty((2, 2), np.float32), np.empty((2, 1),
                                                                                                      np.float32)])
    assert [p.shape for p in parts] == [(2, 2), (2, 1)]


FIXTURE_HEADER = """
#include "aclnn/aclnn_base.h"
/* every by-value kind, for conversion tests (no library implements it) */
ACLNN_API aclnnStatus aclnnFixtureKindsGetWorkspaceSize(const aclTensor *self, int32_t i32, int16_t i16,
    uint8_t u8, uint16_t u16, uint32_t u32, double d, const aclScalar *s, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFixtureKinds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
/* an override of a built-in prototype: other parameter names */
ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *a, const aclTensor *b, const aclScalar *k,
    aclTensor *result, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
"""


@pytest.fixture
def custom_headers(tmp_path):
    d = tmp_path / "include"
    d.mkdir()
    (d / "aclnn_fixture.h").write_text(FIXTURE_HEADER)
    aa.aclnn.add_headers(d)
    yield d
    headers.reset()
    aclnn._operators.clear()


def test_add_headers_overrides_and_adds(npu, custom_headers):
    proto = aa.aclnn.prototype("Add")
    assert proto.origin == "add_headers" and Path(proto.header).parent == custom_headers
    x = x23()
    out = np.empty_like(x)
    assert aa.aclnn.Add(a=x, b=x, k=2.0, result=out) is out and np.array_equal(out, 3 * x)
    assert "aclnnFixtureKinds" in aa.aclnn.names() and "aclnnCat" in aa.aclnn.names()
    fixture = aa.aclnn.FixtureKinds
    assert [p.kind for p in fixture.prototype.params] == ["aclTensor", "int32_t", "int16_t", "uint8_t", "uint16_t",
                                                         "uint32_t", "double", "aclScalar", "aclTensor"]
    with pytest.raises(CannLoadError, match="aclnnFixtureKindsGetWorkspaceSize / aclnnFixtureKinds not found"):
        fixture(x, -2**31, -2**15, 255, 2**16 - 1, 2**32 - 1, 1e308, 1, out)  # converted; no library has it
    for i, bad, what in ((1, 2**31, "i32 (int32_t): expected an int32, got int 2147483648"),
                         (2, 2**15, "i16 (int16_t): expected an int16"), (3, -1, "u8 (uint8_t): expected a uint8"),
                         (4, 2**16, "u16 (uint16_t): expected a uint16"), (5, True, "u32 (uint32_t): expected a uint32, "
                                                                                    "got bool True"),
                         (6, 10**400, "d (double): expected a real number within the range of a C double, got an int "
                                      "of 401 digits"),
                         (6, 1j, "d (double): expected a real number, got complex 1j"),
                         (7, "1", "s (const aclScalar *): expected a number")):
        args = [x, 0, 0, 0, 0, 0, 0.0, 1, out]
        args[i] = bad
        with pytest.raises(AclnnParamInvalidError) as info:
            fixture(*args)
        assert what in str(info.value), str(info.value)


def test_environment_variable_headers_without_cann(tmp_path):
    d = tmp_path / "h"
    d.mkdir()
    (d / "aclnn_fixture.h").write_text(FIXTURE_HEADER)
    result = run_python(textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        p = aa.aclnn.prototype("FixtureKinds")
        print(p.origin, [q.name for q in p.params])
        print(aa.aclnn.names())
        x = np.ones(2, np.float32)
        try:
            aa.aclnn.FixtureKinds(x, 1, 1, 1, 1, 1, 1.0, 1.0, x)
        except NotImplementedError as exc:
            print("numpy:", str(exc).splitlines()[0])
    """), None, ASCEND_ACLNN_HEADERS=str(d), ASCEND_HOME_PATH=str(tmp_path / "none"), LD_LIBRARY_PATH="")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "ASCEND_ACLNN_HEADERS ['self', 'i32', 'i16', 'u8', 'u16', 'u32', 'd', 's', 'out']"
    assert lines[1] == "['aclnnAdd', 'aclnnFixtureKinds']"
    assert lines[2] == ("numpy: aclnnFixtureKinds has no CPU reference for the numpy backend: none registered, no hand "
                        "formula, and no row in the table derived from op-plugin (the code torch_npu runs calls it "
                        "with computed arguments only, or only for a torch_npu custom op that torch has no CPU kernel "
                        "for, or not at all). Run it on the npu backend, or give one with "
                        "ascend_aclnn.aclnn.register_reference.")


# ---------------------------------------------------------------------------------------------
# positional and keyword calls
# ---------------------------------------------------------------------------------------------

def test_positional_and_keyword_calls(npu):
    x = x23()
    want = x + 2 * x
    for args, kwargs in (((x, x, 2.0, np.empty_like(x)), {}),
                         ((), dict(self=x, other=x, alpha=2.0, out=np.empty_like(x))),
                         ((x,), dict(out=np.empty_like(x), alpha=2.0, other=x)),
                         ((x, x), dict(alpha=2, out=np.empty_like(x)))):
        for _ in range(2):  # the second time from the cache
            assert np.array_equal(aa.aclnn.Add(*args, **kwargs), want)
    assert np.array_equal(aa.aclnn.call("aclnnAdd", x, x, 2.0, np.empty_like(x)), want)
    assert np.array_equal(aa.aclnn.call("Add", x, other=x, alpha=2.0, out=np.empty_like(x)), want)
    for args, kwargs, match in (((x, x, 1.0), {}, "missing required argument 'out'"),
                                ((x, x, 1.0, x, x), {}, "takes 4 positional arguments but 5 were given"),
                                ((x,), dict(self=x, other=x, alpha=1.0, out=x), "multiple values for argument 'self'"),
                                ((x, x, 1.0), dict(output=x), "unexpected keyword argument 'output'")):
        with pytest.raises(TypeError, match=match):
            aa.aclnn.Add(*args, **kwargs)
    import inspect
    assert str(inspect.signature(aa.aclnn.Add)) == \
        "(self: 'TensorLike', other: 'TensorLike', alpha: 'Any', out: 'TensorLike') -> 'ArrayLike'"
    assert str(inspect.signature(aa.aclnn.SplitTensor)).endswith("out: 'Sequence[TensorLike]') -> 'list[ArrayLike]'")
    assert str(inspect.signature(aa.aclnn.MaxPool2dWithMask)).endswith("-> 'tuple[ArrayLike, ArrayLike]'")


# ---------------------------------------------------------------------------------------------
# hostile values: refused before any C call, naming the parameter, its C type and the value
# ---------------------------------------------------------------------------------------------

def _ro():
    a = np.zeros((2, 3), np.float32)
    a.flags.writeable = False
    return a


class _Str(str):
    pass


X = x23()
OUT = "out (aclTensor *)"
HOSTILE = [
    # (id, operator, arguments, "parameter (C type)", what the message says was given)
    ("tensor-str", "Add", ("abc", X, 1.0, X.copy()), "self (const aclTensor *)", "(<U3) has no ACL data type"),
    ("tensor-dict", "Add", ({}, X, 1.0, X.copy()), "self (const aclTensor *)", "object array"),
    ("tensor-masked", "Add", (np.ma.masked_array(X), X, 1.0, X.copy()), "self (const aclTensor *)",
     "numpy.ma.MaskedArray"),
    ("tensor-big-endian", "Add", (X.astype(">f4"), X, 1.0, X.copy()), "self (const aclTensor *)",
     "big-endian float32"),
    ("out-list", "Add", (X, X, 1.0, [[0.0] * 3] * 2), OUT, "got list"),
    ("out-read-only", "Add", (X, X, 1.0, _ro()), OUT, "got a read-only one"),
    ("out-masked", "Add", (X, X, 1.0, np.ma.masked_array(X.copy())), OUT, "numpy.ma.MaskedArray"),
    ("out-numpy-scalar", "Add", (X, X, 1.0, np.float32(0)), OUT, "to write into, got numpy.float32 of shape ()"),
    ("list-array", "Cat", (X, 0, X.copy()), "tensors (const aclTensorList *)", "got ndarray of shape (2, 3)"),
    ("list-generator", "Cat", ((a for a in [X]), 0, X.copy()), "tensors (const aclTensorList *)", "got generator"),
    ("list-nested", "Cat", ([[X, X]], 0, X.copy()), "tensors[0] (const aclTensorList *)", "got a list of 2 items"),
    ("list-none-item", "Cat", ([X, None], 0, X.copy()), "tensors[1] (const aclTensorList *)", "got None"),
    ("written-list-read-only", "SplitTensor", (X, 1, 0, [X.copy(), _ro()]), "out[1] (aclTensorList *)",
     "got a read-only one"),
    ("scalar-str", "Add", (X, X, "1", X.copy()), "alpha (const aclScalar *)", "got str '1'"),
    ("scalar-list", "Add", (X, X, [1.0], X.copy()), "alpha (const aclScalar *)", "got list [1.0]"),
    ("scalar-int-past-int64", "Add", (X, X, 2**63, X.copy()), "alpha (const aclScalar *)",
     "int64 can hold, got int 9223372036854775808"),
    ("scalar-out-of-dtype", "Add", (X, X, aa.Scalar(300, np.int8), X.copy()), "alpha (const aclScalar *)",
     "int8 can hold, got int 300"),
    ("scalar-fraction-for-int", "Add", (X, X, aa.Scalar(1.5, np.int32), X.copy()), "alpha (const aclScalar *)",
     "expected a bool or an int for an aclScalar of dtype int32 (a value of another kind is never converted), "
     "got float 1.5"),
    ("scalar-nan-for-int", "Add", (X, X, aa.Scalar(float("nan"), np.int32), X.copy()), "alpha (const aclScalar *)",
     "int32 (a value of another kind is never converted), got float nan"),
    ("scalar-str-for-float", "Add", (X, X, aa.Scalar("2", np.float32), X.copy()), "alpha (const aclScalar *)",
     "expected a number (bool, int, float, complex or a NumPy scalar) for an aclScalar of dtype float32"),
    ("scalar-complex-for-float", "Add", (X, X, aa.Scalar(np.complex64(1 + 2j), np.float32), X.copy()),
     "alpha (const aclScalar *)", "got numpy.complex64 (1+2j)"),
    ("scalar-object-dtype", "Add", (X, X, aa.Scalar(1, object), X.copy()), "alpha (const aclScalar *)",
     "object (|O) has no ACL data type"),
    ("scalar-list-scalar", "ForeachMulScalarList", ([X], 2.0, [X.copy()]), "scalars (const aclScalarList *)",
     "got float 2.0"),
    ("scalar-list-str", "ForeachMulScalarList", ([X], "2", [X.copy()]), "scalars (const aclScalarList *)",
     "got str '2'"),
    ("scalar-list-nested", "ForeachMulScalarList", ([X], [[2.0]], [X.copy()]), "scalars[0] (const aclScalarList *)",
     "got list [2.0]"),
    ("scalar-list-masked", "ForeachMulScalarList", ([X], np.ma.masked_array([2.0]), [X.copy()]),
     "scalars (const aclScalarList *)", "numpy.ma.MaskedArray"),
    ("scalar-list-2d", "ForeachMulScalarList", ([X], np.ones((1, 1)), [X.copy()]), "scalars (const aclScalarList *)",
     "ndarray of shape (1, 1)"),
    ("int-array-floats", "ReduceSum", (X, [0.0], False, F32, X.copy()), "dims (const aclIntArray *)", "got list [0.0]"),
    ("int-array-bools", "ReduceSum", (X, [True], False, F32, X.copy()), "dims (const aclIntArray *)",
     "got list [True]"),
    ("int-array-nested", "ReduceSum", (X, [[0]], False, F32, X.copy()), "dims (const aclIntArray *)",
     "got list [[0]]"),
    ("int-array-str", "ReduceSum", (X, "01", False, F32, X.copy()), "dims (const aclIntArray *)", "got str '01'"),
    ("int-array-past-int64", "ReduceSum", (X, [2**63], False, F32, X.copy()), "dims (const aclIntArray *)",
     "int64 values"),
    ("int-array-huge", "ReduceSum", (X, list(range(10**6)) + [0.5], False, F32, X.copy()),
     "dims (const aclIntArray *)", " ... "),
    ("float-array-bools", "CustomMaskedScale", (X, [True, 1.0, 1.0], [True] * 3, "mul", 1.0, 0, X.copy()),
     "weights (const aclFloatArray *)", "got list [True, 1.0, 1.0]"),
    ("float-array-past-float32", "CustomMaskedScale", (X, [1e39, 1.0, 1.0], [True] * 3, "mul", 1.0, 0, X.copy()),
     "weights (const aclFloatArray *)", "float32's range (the C type is float), got 1e+39"),
    ("float-array-complex", "CustomMaskedScale", (X, [1j, 1.0, 1.0], [True] * 3, "mul", 1.0, 0, X.copy()),
     "weights (const aclFloatArray *)", "got list [1j, 1.0, 1.0]"),
    ("float-array-nested", "CustomMaskedScale", (X, [[1.0], 1.0, 1.0], [True] * 3, "mul", 1.0, 0, X.copy()),
     "weights (const aclFloatArray *)", "got list [[1.0], 1.0, 1.0]"),
    ("float-array-masked", "CustomMaskedScale", (X, np.ma.masked_array([1.0] * 3, [0, 1, 0]), [True] * 3, "mul",
                                                 1.0, 0, X.copy()), "weights (const aclFloatArray *)", "MaskedArray"),
    ("float-array-str", "CustomMaskedScale", (X, "abc", [True] * 3, "mul", 1.0, 0, X.copy()),
     "weights (const aclFloatArray *)", "got str 'abc'"),
    ("bool-array-ints", "CustomMaskedScale", (X, [1.0] * 3, [1, 0, 1], "mul", 1.0, 0, X.copy()),
     "mask (const aclBoolArray *)", "got list [1, 0, 1]"),
    ("bool-array-none-item", "CustomMaskedScale", (X, [1.0] * 3, [True, None, True], "mul", 1.0, 0, X.copy()),
     "mask (const aclBoolArray *)", "got list [True, None, True]"),
    ("dtype-none", "ReduceSum", (X, [0], False, None, X.copy()), "dtype (aclDataType)", "got None"),
    ("dtype-unknown", "ReduceSum", (X, [0], False, "float7", X.copy()), "dtype (aclDataType)", "got str 'float7'"),
    ("dtype-int", "ReduceSum", (X, [0], False, 0, X.copy()), "dtype (aclDataType)", "got int 0"),
    ("dtype-object", "ReduceSum", (X, [0], False, object, X.copy()), "dtype (aclDataType)",
     "object (|O) has no ACL data type"),
    ("dtype-big-endian", "ReduceSum", (X, [0], False, ">f4", X.copy()), "dtype (aclDataType)",
     "big-endian float32 (>f4) has no ACL data type"),
    ("char-bytes", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, b"mul", 1.0, 0, X.copy()), "mode (const char *)",
     "got bytes b'mul'"),
    ("char-int", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, 1, 1.0, 0, X.copy()), "mode (const char *)",
     "got int 1"),
    ("char-nul", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul\0add", 1.0, 0, X.copy()),
     "mode (const char *)", "without NUL characters (C reads a char* up to the first), got 'mul\\x00add'"),
    ("char-surrogate", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, _Str("m\udcffl"), 1.0, 0, X.copy()),
     "mode (const char *)", "UTF-8 can encode, got one with '\\udcff' at position 1"),
    ("bool-int", "ReduceSum", (X, [0], 2, F32, X.copy()), "keepDims (bool)", "got int 2"),
    ("bool-none", "ReduceSum", (X, [0], None, F32, X.copy()), "keepDims (bool)", "got NoneType None"),
    ("bool-str", "ReduceSum", (X, [0], "True", F32, X.copy()), "keepDims (bool)", "got str 'True'"),
    ("int8-past", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", 1.0, 128, X.copy()),
     "exponent (int8_t)", "expected an int8, got int 128"),
    ("int8-bool", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", 1.0, False, X.copy()),
     "exponent (int8_t)", "got bool False"),
    ("int8-float", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", 1.0, 1.0, X.copy()),
     "exponent (int8_t)", "got float 1.0"),
    ("int8-str", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", 1.0, "1", X.copy()),
     "exponent (int8_t)", "got str '1'"),
    ("int64-past", "Cat", ([X], 2**63, X.copy()), "dim (int64_t)", "got int 9223372036854775808"),
    ("int64-bool", "Cat", ([X], True, X.copy()), "dim (int64_t)", "got bool True"),
    ("int64-float", "Cat", ([X], 0.0, X.copy()), "dim (int64_t)", "got float 0.0"),
    ("uint64-negative", "SplitTensor", (X, -1, 0, [X.copy()]), "splitSections (uint64_t)", "got int -1"),
    ("uint64-past", "SplitTensor", (X, 2**64, 0, [X.copy()]), "splitSections (uint64_t)",
     "got int 18446744073709551616"),
    ("float-past-float32", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", 1e39, 0, X.copy()),
     "scale (float)", "float32's range (the C type is float), got 1e+39"),
    ("float-bool", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", True, 0, X.copy()), "scale (float)",
     "got bool True"),
    ("float-str", "CustomMaskedScale", (X, [1.0] * 3, [True] * 3, "mul", "1", 0, X.copy()), "scale (float)",
     "got str '1'"),
    ("double-none", "UpsampleNearestExact1d", (X[None], [5], None, np.empty((1, 2, 5), np.float32)),
     "scales (double)", "got NoneType None"),
    ("double-complex", "UpsampleNearestExact1d", (X[None], [5], 1j, np.empty((1, 2, 5), np.float32)),
     "scales (double)", "got complex 1j"),
]


@pytest.fixture
def no_c_call(monkeypatch):
    """Any launch is a failure: the refusals come from the conversion, before any C call."""
    from ascend_aclnn.backends.npu import launch

    def launched(*args, **kwargs):
        raise AssertionError("a C call was reached")
    monkeypatch.setattr(launch, "launch", launched)


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_values_are_refused_before_any_c_call(npu, no_c_call, case):
    _, op, args, label, given = case
    with pytest.raises(AclnnParamInvalidError) as info:
        getattr(aa.aclnn, op)(*args)
    e = info.value
    assert e.status == 161002 and e.recent is None and e.api == f"aclnn{op}GetWorkspaceSize"
    line = str(e).splitlines()[1]
    assert line.startswith(f"  {label}: "), str(e)
    assert given in line, (given, str(e))
    assert len(str(e)) < 600  # a huge list is described in one short line


def test_every_kind_has_a_hostile_case():
    kinds = {k for _, op, *_ in HOSTILE for k in (p.kind for p in aa.aclnn.prototype(op).params)}
    assert {"aclTensor", "aclTensorList", "aclScalar", "aclScalarList", "aclIntArray", "aclFloatArray",
            "aclBoolArray", "aclDataType", "string", "bool", "int8_t", "int64_t", "uint64_t", "float",
            "double"} <= kinds
    labels = {case[3].split(" (", 1)[1].rstrip(")") for case in HOSTILE}
    assert {"const aclTensor *", "aclTensor *", "const aclTensorList *", "aclTensorList *", "const aclScalar *",
            "const aclScalarList *", "const aclIntArray *", "const aclFloatArray *", "const aclBoolArray *",
            "aclDataType", "const char *", "bool", "int8_t", "int64_t", "uint64_t", "float", "double"} <= labels


def test_nan_passes_where_c_takes_it(npu):
    """NaN is a value of a float, a double, an aclScalar and an aclFloatArray: passed on."""
    x = x23()
    out = aa.aclnn.CustomMaskedScale(x, [float("nan"), 1.0, 1.0], [True] * 3, "mul", float("nan"), 0,
                                     np.empty_like(x))
    assert np.isnan(out).all()
    assert np.array_equal(aa.aclnn.Add(x, x, float("nan"), np.empty_like(x)), 2 * x)  # NaN alpha: the plain add
    d = np.array([1.0, 2.0])
    assert np.isnan(aa.aclnn.Add(d, d, aa.Scalar(float("nan"), np.float16), np.empty(2))).tolist() == [False, False]


# ---------------------------------------------------------------------------------------------
# CANN's own errors
# ---------------------------------------------------------------------------------------------

def test_cann_errors_carry_its_message(npu):
    x = x23()
    with pytest.raises(AclnnParamInvalidError) as info:
        aa.aclnn.Add(x, x, 1.0, np.empty((3, 3), np.float32))
    e = info.value
    assert e.status == 161002 and e.api == "aclnnAddGetWorkspaceSize" and e.argument is None
    assert e.recent == "aclnnAddGetWorkspaceSize: out shape must be the broadcast shape [2, 3], got [3, 3]"
    assert str(e).endswith("CANN says: " + e.recent)
    with pytest.raises(AclnnParamInvalidError, match=r"CANN says: aclnnCustomMaskedScaleGetWorkspaceSize: mode "
                                                     r"must be \"mul\" or \"add\""):
        aa.aclnn.CustomMaskedScale(x, [1.0] * 3, [True] * 3, "sub", 1.0, 0, np.empty_like(x))
    with pytest.raises(AclnnError) as info:  # a tiling error, 561002
        aa.aclnn.ForeachMulScalarList([x], [], [np.empty_like(x)])
    assert info.value.status == 561002 and "scalars holds 0 scalars, x 1 tensors" in info.value.recent
    with pytest.raises(AclnnParamInvalidError, match="out dtype ACL_FLOAT .* must be dtype ACL_FLOAT16"):
        aa.aclnn.ReduceSum(x, [0], False, np.float16, np.empty(3, np.float32))


# ---------------------------------------------------------------------------------------------
# the checked-call cache: keys mean "converts to the same C value"
# ---------------------------------------------------------------------------------------------

def key_of(op, *args, **kwargs):
    spec = aa.aclnn.operator(op).spec
    keyed = checked_calls.cache_for(spec).key(args, kwargs)
    return None if keyed is None else keyed[0]


def test_keys_of_raw_kinds():
    x, d = X, X.copy()
    k = lambda alpha: key_of("Add", x, x, alpha, d)  # noqa: E731
    distinct = [k(1), k(True), k(1.0), k(0.0), k(-0.0), k(np.float32(1)), k(np.float64(1)), k(aa.Scalar(1, np.int8)),
                k(aa.Scalar(1.0, np.int8)), k(aa.Scalar(0.0, np.float32)), k(aa.Scalar(-0.0, np.float32)), k(None)]
    assert None not in distinct[:-1] and len(set(distinct)) == len(distinct)
    assert k(2.5) == k(2.5) and k(np.float16(2)) == k(np.float16(2))
    for uncached in (float("nan"), 1j, "1", [1], aa.Scalar(float("nan"), np.float32), aa.Scalar(1j, np.complex64)):
        assert k(uncached) is None, uncached
    assert key_of("Add", x, x, 1.0, np.ma.masked_array(d)) is None
    ro = _ro()
    assert key_of("Add", x, x, 1.0, ro) != key_of("Add", x, x, 1.0, d)
    assert key_of("Add", self=x, other=x, alpha=1.0, out=d) == key_of("Add", x, x, 1.0, d)
    assert key_of("Add", x, x, 1.0, output=d) is None
    fa = lambda w: key_of("CustomMaskedScale", x, w, [True] * 3, "mul", 1.0, 0, d)  # noqa: E731
    assert fa([1, 2, 3]) == fa([1.0, 2.0, 3.0])  # equal numbers give the same C floats
    assert fa([0.0, 1, 1]) == fa([0, 1, 1]) != fa([-0.0, 1, 1])
    assert fa([float("nan"), 1, 1]) is None and fa([True, 1, 1]) is None and fa(np.ones(3)) is None
    ba = lambda m: key_of("CustomMaskedScale", x, [1.0] * 3, m, "mul", 1.0, 0, d)  # noqa: E731
    assert ba([True, False, True]) != ba([True, True, True]) and ba([1, 0, 1]) is None
    dt = lambda t: key_of("ReduceSum", x, [0], False, t, d)  # noqa: E731
    assert None not in (dt(np.float16), dt("float16"), dt(np.dtype("f2"))) and dt(None) is None and dt(1) is None
    assert dt(np.float16) != dt(np.float32)
    tl = lambda ts: key_of("Cat", ts, 0, d)  # noqa: E731
    assert tl([x, x]) == tl((x, x)) != tl([x]) and tl([x, None]) is None and tl([[x]]) is None
    assert key_of("ReduceSum", x, None, False, np.float32, d) != key_of("ReduceSum", x, [], False, np.float32, d)


def test_cached_calls_skip_the_conversion(npu, monkeypatch):
    x = x23()
    op = aa.aclnn.operator("CustomMaskedScale")
    args = (x, [1.0, 2.0, 3.0], [True, False, True], "mul", 0.5, 2, np.empty_like(x))
    op(*args)
    binds = []
    original = type(op.spec).bind
    monkeypatch.setattr(type(op.spec), "bind", lambda self, a, k: binds.append(1) or original(self, a, k))
    for _ in range(3):
        assert np.array_equal(op(*args), masked_scale(x, *args[1:6]))
    assert binds == []
    op(x, [1.0, 2.0, 3.0], [True, False, True], "mul", 0.5, -2, np.empty_like(x))  # a new value: checked once
    assert binds == [1]


def test_signed_zero_and_types_are_kept_apart_by_the_cache(npu):
    """-0.0 after 0.0, and 1.0 after 1 and True, are not served the earlier C value."""
    x = np.array([-0.0, 1.0])
    y = np.array([1.0, 1.0])
    plus = aa.aclnn.Add(x, y, 0.0, np.empty(2))
    minus = aa.aclnn.Add(x, y, -0.0, np.empty(2))
    assert np.signbit(plus).tolist() == [False, False] and np.signbit(minus).tolist() == [True, False]
    xi = np.array([1, 2], np.int32)
    aa.aclnn.Add(xi, xi, 1, np.empty(2, np.int32))
    aa.aclnn.Add(xi, xi, True, np.empty(2, np.int32))
    with pytest.raises(AclnnParamInvalidError, match="alpha dtype ACL_DOUBLE"):
        aa.aclnn.Add(xi, xi, 1.0, np.empty(2, np.int32))


# ---------------------------------------------------------------------------------------------
# tensor lists in and out
# ---------------------------------------------------------------------------------------------

def test_tensor_lists_of_numpy_and_device_arrays(npu):
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4)]
    ins = [xs[0], aa.to_device(xs[1]), xs[2][:, ::-1], aa.to_device(xs[3])]  # a strided NumPy one too
    outs = [aa.empty((2, 3)), np.empty((2, 3), np.float32), aa.empty((2, 3)), np.empty((2, 3), np.float32)]
    got = aa.aclnn.ForeachMulScalarList(tuple(ins), [1.0, 2.0, 3.0, 4.0], outs)
    assert got == outs
    for i, (x, o) in enumerate(zip([xs[0], xs[1], xs[2][:, ::-1], xs[3]], got)):
        assert np.array_equal(host(o), x * np.float32(i + 1))
    many = [np.full((1,), i, np.float32) for i in range(200)]
    out = np.empty(200, np.float32)
    assert np.array_equal(aa.aclnn.Cat(many, 0, out), np.arange(200, dtype=np.float32))


def test_a_freed_device_array_in_a_list_is_refused(npu):
    x = x23()
    d = aa.to_device(x)
    out = np.empty((4, 3), np.float32)
    aa.aclnn.Cat([x, d], 0, out)  # cached from here on
    d.free()
    with pytest.raises(ValueError, match=r"tensors\[1\]"):
        aa.aclnn.Cat([x, d], 0, out)


# ---------------------------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------------------------

def test_threads_calling_raw_operators_concurrently(npu):
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(16)]

    def work(i, x):
        a = aa.aclnn.Add(x, x, float(i), np.empty_like(x))
        b = aa.aclnn.Cat([x, a], 1, np.empty((3, 8), np.float32))
        c = aa.aclnn.CustomMaskedScale(b, [1.0] * 7 + [float(i)], [True] * 8, "mul", 0.5, i % 3, np.empty_like(b))
        d = aa.aclnn.Add(aa.to_device(c), c, 1, aa.empty(c.shape))  # DeviceArrays across the call
        parts = aa.aclnn.SplitTensor(d, 4, 1, [np.empty((3, 4), np.float32), aa.empty((3, 4))])
        s = aa.aclnn.ReduceSum(parts[1], [0], False, np.float64, np.empty(4))
        return [a, b, c, d.numpy(), parts[0], parts[1].numpy(), s]

    serial = [work(i, x) for i, x in enumerate(inputs)]
    results: dict = {}
    errors: list = []

    def worker(k):
        try:
            with aa.use_backend("npu"):
                for rep in range(3):
                    for i in range(k, len(inputs), 4):
                        results[(i, rep)] = work(i, inputs[i])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 3 * len(inputs)
    for (i, _), got in results.items():
        for g, w in zip(got, serial[i]):
            assert same_bits(g, w)


# ---------------------------------------------------------------------------------------------
# plans
# ---------------------------------------------------------------------------------------------

def test_plan_of_a_raw_operator_is_repeatable_and_rebinds(npu):
    x = np.random.default_rng(8).standard_normal((2, 3, 4)).astype(np.float32)
    op = aa.aclnn.UpsampleNearestExact1d
    d, o = aa.to_device(x), aa.empty((2, 3, 9))
    with aa.plan(op, d, [9], 0.0, o) as p:
        assert p.repeatable and p.fallback_reason is None
        assert p() is o and np.array_equal(o.numpy(), aa.upsample_nearest_exact1d(x, [9]))
        for k in range(3):  # new addresses each time: input and output slots rebound by their own setters
            d2, o2 = aa.to_device(x * (k + 2)), aa.empty((2, 3, 9))
            assert p(d2, [9], 0.0, o2) is o2
            assert np.array_equal(o2.numpy(), aa.upsample_nearest_exact1d(x * (k + 2), [9]))
        on = np.zeros((2, 3, 9), np.float32)
        assert p(x * 5, [9], 0.0, on) is on and np.array_equal(on, aa.upsample_nearest_exact1d(x * 5, [9]))
        strided = np.zeros((2, 3, 18), np.float32)[:, :, ::2]
        assert p(x, outputSize=[9], scales=0.0, out=strided) is strided
        assert np.array_equal(strided, aa.upsample_nearest_exact1d(x, [9]))
        with pytest.raises(aa.PlanMismatchError, match="outputSize: this plan of aclnnUpsampleNearestExact1d was "
                                                       r"made for outputSize = \[9\], got \[8\]"):
            p(x, [8], 0.0, np.empty((2, 3, 8), np.float32))
        with pytest.raises(aa.PlanMismatchError, match="out"):
            p(x, [9], 0.0, np.empty((2, 3, 9), np.float16))


def test_plans_with_host_values(npu):
    x = x23()
    with aa.plan(aa.aclnn.Add, x, x, 2.0, np.empty_like(x)) as p:
        assert p.repeatable
        assert np.array_equal(p(), 3 * x) and np.array_equal(p(2 * x, x, 2.0, np.empty_like(x)), 4 * x)
        with pytest.raises(aa.PlanMismatchError, match=r"alpha = 2.0 \(float64\), got 2 \(int64\)"):
            p(x, x, 2, np.empty_like(x))
        with pytest.raises(AclnnParamInvalidError, match=r"alpha \(const aclScalar \*\): expected a number"):
            p(x, x, "x", np.empty_like(x))  # not a value C could take: the conversion's error
    args = (x, [1.0, 2.0, 3.0], [True, False, True], "add", 2.0, -1)
    with aa.plan(aa.aclnn.CustomMaskedScale, *args, np.empty_like(x)) as p:
        assert p.repeatable
        assert np.array_equal(p(), masked_scale(*args))
        with pytest.raises(aa.PlanMismatchError, match=r"weights = \[1.0, 2.0, 3.0\], got \[1.0, 2.0, -0.0\]"):
            p(x, [1.0, 2.0, -0.0], *args[2:], np.empty_like(x))
        with pytest.raises(aa.PlanMismatchError, match="mode = 'add', got 'mul'"):
            p(x, args[1], args[2], "mul", 2.0, -1, np.empty_like(x))
    with aa.plan(aa.aclnn.ReduceSum, x, [1], True, np.float64, np.empty((2, 1))) as p:
        assert p.repeatable and np.array_equal(p(), x.sum(1, keepdims=True).astype(np.float64))
        with pytest.raises(aa.PlanMismatchError, match="dtype = float64, got float16"):
            p(x, [1], True, "float16", np.empty((2, 1)))


def test_plans_that_fall_back_to_ordinary_calls(npu):
    x = x23()
    with aa.plan(aa.aclnn.Cat, [x, x], 0, np.empty((4, 3), np.float32)) as p:
        assert not p.repeatable and "a tensor list, made per call" in p.fallback_reason
        assert np.array_equal(p(), np.concatenate([x, x])) and np.array_equal(p([x, 2 * x], 0, np.empty((4, 3),
                                                                                  np.float32))[2:], 2 * x)
        with pytest.raises(aa.PlanMismatchError, match="tensors"):
            p([x], 0, np.empty((4, 3), np.float32))
    op = aa.aclnn.operator("Add", outputs=("self", "out"))  # self written and read: in place
    with aa.plan(op, x.copy(), x, 1.0, np.empty_like(x)) as p:
        assert p.repeatable  # write-only by this override; the upload keeps it correct either way
    with aa.plan(aa.aclnn.Add, None, x, 1.0, np.empty_like(x)) as p:
        assert not p.repeatable and "a NULL tensor" in p.fallback_reason
        with pytest.raises(AclnnParamNullptrError, match="self is NULL"):
            p()


def test_raw_operators_on_the_numpy_backend_run_their_cpu_reference(numpy_backend):
    """(tests/test_cpu_reference.py tests this in depth.) Arguments are still checked first."""
    x = np.ones((1, 2, 3), np.float32)
    out = aa.aclnn.UpsampleNearestExact1d(x, [5], 0.0, np.empty((1, 2, 5), np.float32))
    assert np.array_equal(out, aa.upsample_nearest_exact1d(x, [5]))
    with pytest.raises(AclnnParamInvalidError, match=r"alpha \(const aclScalar \*\)"):  # arguments checked first
        aa.aclnn.Add(x, x, "1", np.empty_like(x))


# ---------------------------------------------------------------------------------------------
# names, prototype, help, outputs
# ---------------------------------------------------------------------------------------------

def test_names_prototype_and_help(npu, sim):
    names = aa.aclnn.names()
    assert names == sorted(names)
    import build as sim_build  # native/build.py (conftest puts native/ on the path): what the simulator exports
    assert {s.aclnn for s in aa.ops.REGISTRY} <= set(names)
    assert set(sim_build.operators()) | set(sim_build.vendor_operators()) == set(names)
    proto = aa.aclnn.prototype("aclnnReduceSum")
    assert proto is aa.aclnn.prototype("ReduceSum") and proto.name == "aclnnReduceSum"
    assert [(p.name, p.is_output) for p in proto.params] == [("self", False), ("dims", False), ("keepDims", False),
                                                             ("dtype", False), ("out", True)]
    assert proto.params[-1].output_reason == "non-const"
    assert [p.name for p in aa.aclnn.prototype("ForeachMulScalarList").outputs] == ["out"]  # const, named out
    text = pydoc.render_doc(aa.aclnn.CustomMaskedScale)
    for piece in ("aclnnCustomMaskedScale: read from", "aclnn_custom_masked_scale.h",
                  "const aclFloatArray *weights, const aclBoolArray *mask, const char *mode, float scale,",
                  "out: aclTensor *  -> written, returned",
                  "On the numpy backend: its CPU reference (ascend_aclnn.aclnn.reference shows which)."):
        assert piece in text, piece
    assert "ascend_aclnn.upsample_nearest_exact1d describes this operator" in aa.aclnn.UpsampleNearestExact1d.__doc__
    assert repr(aa.aclnn.Add).startswith("<aclnn operator aclnnAdd from ")
    assert aa.aclnn.Add is aa.aclnn.operator("aclnnAdd") and aa.aclnn.Add.__name__ == "Add"
    with pytest.raises(AttributeError, match="no header declares aclnnNoSuchOpGetWorkspaceSize"):
        aa.aclnn.NoSuchOp
    with pytest.raises(AttributeError):
        aa.aclnn.lowercase_name
    with pytest.raises(TypeError, match="expected an operator name"):
        aa.aclnn.operator(3)


def test_outputs_override(npu):
    x = x23()
    op = aa.aclnn.operator("Add", outputs=("self", "out"))
    assert op is aa.aclnn.operator("Add", outputs=("self", "out")) and op is not aa.aclnn.Add
    a, out = x.copy(), np.empty_like(x)
    got = op(a, x, 1.0, out)
    assert got[0] is a and got[1] is out
    assert np.array_equal(out, 2 * x) and np.array_equal(a, x)  # self uploaded, the kernel only read it
    with pytest.raises(ValueError, match=r"outputs: aclnnAdd has no parameter\(s\) \['nope'\]"):
        aa.aclnn.operator("Add", outputs=("nope",))
    with pytest.raises(headers.UnsupportedPrototypeError, match="no parameter is an output"):
        aa.aclnn.operator("Add", outputs=())


# ---------------------------------------------------------------------------------------------
# info: the search order, the header directories, --check-abi
# ---------------------------------------------------------------------------------------------

def run_info(sim, *argv: str, **env: str | None):
    code = f"import sys; from ascend_aclnn.tools.cli import main; sys.exit(main({['info', *argv]!r}))"
    return run_python(code, sim, **env)


def test_info_lists_the_library_order_and_header_directories(sim):
    import json
    result = run_info(sim)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    vendor = sim.prefix / "opp" / "vendors" / VENDOR / "op_api"
    lines = out.splitlines()
    at = lines.index("operator libraries, searched in this order (the first exporting an operator wins):")
    builtin = sorted(sim.lib_dir.glob("libopapi*.so"))
    origin = "monolithic" if builtin == [sim.lib_dir / "libopapi.so"] else "split"
    assert lines[at + 1].split() == ["vendor", VENDOR, str(vendor / "lib" / "libcust_opapi.so"), "(loaded)"]
    assert [line.split()[0] for line in lines[at + 2:at + 2 + len(builtin)]] == [origin] * len(builtin)
    at = lines.index("operator headers, read in this order (the first declaration wins):")
    assert lines[at + 1].split() == ["vendor", VENDOR, str(vendor / "include")]
    assert lines[at + 2].split() == ["built-in", str(sim.prefix), str(sim.prefix / "include" / "aclnnop")]
    facts = json.loads(run_info(sim, "--json").stdout)
    assert [r["origin"] for r in facts["operator_libraries"]] == [f"vendor {VENDOR}"] + [origin] * len(builtin)
    assert facts["header_dirs"][0] == {"dir": str(vendor / "include"), "origin": f"vendor {VENDOR}", "exists": True}
    assert "abi" not in facts


def test_info_without_cann_lists_where_it_would_look(tmp_path):
    import json
    result = run_info(None, "--json", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="")
    facts = json.loads(result.stdout)
    assert facts["operator_libraries"] == [{"library": "libopapi.so", "origin": "monolithic", "status": "not opened"}]
    assert all(not r["exists"] for r in facts["header_dirs"])


def test_check_abi_passes_on_the_simulators_headers(sim):
    import json
    result = run_info(sim, "--check-abi")
    assert result.returncode == 0, result.stdout + result.stderr
    ok = [line for line in result.stdout.splitlines() if "  OK  " in line]
    assert len(ok) == len(aa.ops.REGISTRY)  # one line per described operator
    assert "--check-abi" not in result.stderr
    facts = json.loads(run_info(sim, "--json", "--check-abi").stdout)
    assert facts["abi"]["exit_status"] == 0 and facts["abi"]["error"] is None
    assert facts["abi"]["headers"] == len(aa.aclnn.names())
    assert [r["aclnn"] for r in facts["abi"]["operators"]] == [s.aclnn for s in sorted(aa.ops.REGISTRY, key=lambda s: s.name)]
    assert all(r["differences"] == [] and r["header"] for r in facts["abi"]["operators"])


def drifted_install(sim, root: Path) -> Path:
    """A copy of the simulator's install whose upsample header says ``float scales`` and
    which has no aclnnIm2col header."""
    import shutil
    shutil.copytree(sim.prefix, root, symlinks=True)
    edited = 0
    for h in root.rglob("aclnn_upsample_nearest_exact1d.h"):
        text = h.read_text()
        assert "double scales" in text
        h.write_text(text.replace("double scales", "float scales"))
        edited += 1
    for h in root.rglob("aclnn_im2col.h"):
        h.unlink()
    assert edited >= 1
    return root


def test_check_abi_names_a_drifted_header(sim, tmp_path):
    import json
    root = drifted_install(sim, tmp_path / "cann")
    result = run_info(None, "--check-abi", ASCEND_HOME_PATH=str(root))
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "  upsample_nearest_exact1d           aclnnUpsampleNearestExact1d          DIFFERS" in out
    assert "      parameter 2 (float scales): expected c_double, the header gives c_float" in out
    assert "      no header declares aclnnIm2colGetWorkspaceSize" in out
    drifted = ", ".join(s.aclnn for s in aa.ops.REGISTRY if s.aclnn in ("aclnnUpsampleNearestExact1d", "aclnnIm2col"))
    assert f"2 operator(s) differ from the headers: {drifted}" in out  # in registry order
    assert sum("  OK  " in line for line in out.splitlines()) == len(aa.ops.REGISTRY) - 2
    assert f"python -m ascend_aclnn info: --check-abi: {drifted} differ(s) from the " \
           "installed headers" in result.stderr
    facts = json.loads(run_info(None, "--json", "--check-abi", ASCEND_HOME_PATH=str(root)).stdout)
    bad = {r["aclnn"]: r["differences"] for r in facts["abi"]["operators"] if r["differences"]}
    assert list(bad) == drifted.split(", ") and facts["exit_status"] == 1
    # the headers alone, without CANN: the same verdict
    headers_only = run_info(None, "--check-abi", ASCEND_HOME_PATH=str(tmp_path / "none"), LD_LIBRARY_PATH="",
                            ASCEND_ACLNN_HEADERS=str(root / "include" / "aclnnop"))
    assert headers_only.returncode == 1 and "parameter 2 (float scales)" in headers_only.stdout
    assert "backend         numpy" in headers_only.stdout


def test_check_abi_without_any_header_cannot_run(tmp_path):
    result = run_info(None, "--check-abi", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "  CANNOT CHECK: no header declares any aclnn operator (looked in " in result.stdout
    assert "set ASCEND_ACLNN_HEADERS to a directory of aclnn headers or install CANN's" in result.stdout
    assert "--check-abi: no header declares any aclnn operator" in result.stderr


def test_bench_compares_raw_calls_with_described_ones(tmp_path, capsys, npu):
    import json
    from ascend_aclnn.tools import bench, bench_npu
    out = tmp_path / "rows.json"
    assert bench.main(["--npu-only", "--npu-calls", "3", "--npu-rounds", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {r["what"]: r for r in json.loads(out.read_text())["npu_overhead"]}
    assert len(bench_npu.RAW_PAIRS) == 2
    for raw, described in bench_npu.RAW_PAIRS.items():
        assert rows[raw]["vs_described"] > 0  # the median of the per-round ratios of the two rows' blocks
        assert rows[described]["vs_described"] is None
    assert "raw aclnn call / the described call with the same arguments: DeviceArray in/out, queued " in printed


def test_dir_lists_the_operators(npu):
    listing = dir(aa.aclnn)
    assert {"Add", "CustomMaskedScale", "UpsampleNearestExact1d", "names", "prototype", "operator"} <= set(listing)


def test_a_custom_package_comes_before_the_vendors(sim, tmp_path):
    """ASCEND_CUSTOM_OPP_PATH packages are searched first, for libraries and headers alike:
    a custom package with its own header for aclnnCustomMaskedScale (other parameter names)
    and the vendor's library copied in answers before the vendor."""
    import shutil
    custom = tmp_path / "custom"
    (custom / "op_api" / "lib").mkdir(parents=True)
    (custom / "op_api" / "include").mkdir()
    vendor = sim.prefix / "opp" / "vendors" / VENDOR / "op_api"
    shutil.copy(vendor / "lib" / "libcust_opapi.so", custom / "op_api" / "lib" / "libcust_opapi.so")
    header = (vendor / "include" / "aclnn_custom_masked_scale.h").read_text()
    (custom / "op_api" / "include" / "aclnn_custom_masked_scale.h").write_text(header.replace("*weights", "*w"))
    result = run_python(textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        from ascend_aclnn.cann.loader import get_cann
        x = np.ones((1, 2), np.float32)
        p = aa.aclnn.prototype("CustomMaskedScale")
        print(p.origin.split()[0], [q.name for q in p.params][:2])
        print(aa.aclnn.CustomMaskedScale(x, w=[2.0, 3.0], mask=[True, True], mode="mul", scale=1.0, exponent=0,
                                         out=np.empty_like(x)).tolist())
        print(get_cann().operator_sources["aclnnCustomMaskedScale"])
        print([lib.label.split()[0] for lib, _ in get_cann().operator_library_status()])
    """), sim, ASCEND_CUSTOM_OPP_PATH=str(custom))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "custom ['self', 'w']"
    assert lines[1] == "[[2.0, 3.0]]"
    assert lines[2] == str(custom / "op_api" / "lib" / "libcust_opapi.so")
    assert lines[3].startswith("['custom', 'vendor'")


@pytest.mark.simulator
def test_raw_operators_on_the_split_layout(sim, tmp_path):
    """CANN >= 8.5's split libraries: each operator from the library that has it, the
    vendor's aclnnAdd still first (one process holds one build: a child process)."""
    lib_dir = shared_build("split")
    result = run_python(textwrap.dedent("""
        import os, numpy as np, ascend_aclnn as aa
        from ascend_aclnn.cann.loader import get_cann
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        aa.aclnn.Add(x, x, 1.0, np.empty_like(x))
        aa.aclnn.Cat([x, x], 0, np.empty((4, 3), np.float32))
        aa.aclnn.ForeachMulScalarList([x], [2.0], [np.empty_like(x)])
        aa.aclnn.UpsampleNearestExact1d(x[None], [5], 0.0, np.empty((1, 2, 5), np.float32))
        print(aa.aclnn.CustomMaskedScale(x, [1.0, 2.0, 3.0], [True] * 3, "mul", 1.0, 0, np.empty_like(x)).tolist())
        src = get_cann().operator_sources
        for op in ("aclnnAdd", "aclnnCat", "aclnnForeachMulScalarList", "aclnnUpsampleNearestExact1d",
                   "aclnnCustomMaskedScale"):
            print(op, os.path.basename(src[op]))
        print([lib.origin for lib, _ in get_cann().operator_library_status()])
    """), None, ASCEND_HOME_PATH=str(lib_dir.parent))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "[[0.0, 2.0, 6.0], [3.0, 8.0, 15.0]]",
        "aclnnAdd libcust_opapi.so", "aclnnCat libopapi_math.so", "aclnnForeachMulScalarList libopapi_nn.so",
        "aclnnUpsampleNearestExact1d libopapi_cv.so", "aclnnCustomMaskedScale libcust_opapi.so",
        "['vendor', 'split', 'split', 'split']"]


# ---------------------------------------------------------------------------------------------
# parameter names: a header's names never collide with the binding's own (issue 26, 2)
# ---------------------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "headers"
INTERNAL_NAMES_HEADER = FIXTURES / "names" / "aclnn_fixture_internal_names.h"
# The parameter names of that fixture, in order: each operator's own names are replaced there.
FIXTURE_PARAM_NAMES = {
    "aclnnAdd": ("outputs", "spec", "self", "args"),
    "aclnnReduceSum": ("kwargs", "items", "name", "check", "raw"),
    "aclnnCustomMaskedScale": ("from", "from_", "lambda", "None", "get", "device_resident", "tensor_args"),
    "aclnnSplitTensor": ("fn", "key", "a", "given"),
    "aclnnForeachMulScalarList": ("__class__", "named_tensor_args", "copy"),
}
# Names the call path uses for itself: Args (a dict) and its attributes, OpSpec's fields and
# properties, the locals and parameters of call/bind/plan, and Python keywords a C header can use.
INTERNAL_NAMES = sorted({
    *(n for names in FIXTURE_PARAM_NAMES.values() for n in names),
    "out", "outputs", "items", "keys", "values", "get", "pop", "popitem", "update", "setdefault", "clear",
    "fromkeys", "device_resident", "tensor_args", "named_tensor_args", "name", "aclnn", "summary", "params",
    "infer", "check", "reference", "notes", "example", "not_repeatable", "signature", "required", "bind",
    "phase1_name", "c_argtypes", "out_labels", "docstring", "c_types", "returns", "prototype", "spec", "fn", "args",
    "kwargs", "self", "raw", "given", "a", "key", "backend", "cache", "keyed", "tensors", "outs", "result",
    "token", "converted", "b", "device", "workspace", "workspaceSize", "executor", "stream", "from", "lambda",
    "None", "True", "False", "is", "in", "pass", "def", "import", "global", "nonlocal", "yield", "async",
    "await", "with", "as", "assert", "del", "elif", "except", "finally", "raise", "try", "from_", "lambda_",
    "__class__", "__dict__", "__init__", "__getattr__", "_", "match", "case", "type", "print", "object",
    # and every attribute of the objects a call goes through, and every local name of its steps
    *(n for cls in (Args, OpSpec, aclnn.RawSpec, aclnn.RawOperator, aa.plans.Plan, checked_calls.CheckedCall)
      for n in dir(cls)),
    *(n for f in (OpSpec.bind, OpSpec._bind_arguments, aclnn.RawSpec.bind, aclnn.RawOperator.__call__, aclnn.call,
                  aa.api.call, aa.api._call, aa.plans.plan, aa.plans.Plan.__call__, aa.plans.Plan.__init__,
                  aa.plans.Plan._match, checked_calls.CheckedCall.__init__)
      for n in f.__code__.co_varnames)})
# Not C identifiers a header can use as a parameter name: C and C++ keywords (the headers are
# compiled as both), the type names of the aclnn headers, and GCC's keyword spellings.
NOT_PARAMETER_NAMES = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local bool
    alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl concept consteval
    constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export false
    friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    reinterpret_cast requires static_assert static_cast template this thread_local throw true try typeid typename
    using virtual wchar_t xor xor_eq __restrict __restrict__ __inline __inline__ __attribute__ __asm__ __extension__
    __typeof__ __declspec aclTensor aclTensorList aclScalar aclScalarList aclIntArray aclFloatArray aclBoolArray
    aclDataType aclOpExecutor aclrtStream aclnnStatus int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t
    uint64_t size_t ACLNN_API""".split())


def _renamed(names_of: dict[str, tuple[str, ...]]) -> str:
    """The fixture's text with each operator's parameters renamed (C does not see names)."""
    text = INTERNAL_NAMES_HEADER.read_text()
    for op, names in names_of.items():
        start = text.index("(", text.index(f"aclnnStatus {op}GetWorkspaceSize(")) + 1
        end = text.index(");", start)
        params = text[start:end].split(",")
        assert [re.search(r"\w+\s*$", p).group().strip() for p in params[:len(names)]] == list(FIXTURE_PARAM_NAMES[op])
        params[:len(names)] = [re.sub(r"\w+(\s*)$", lambda m: new + m.group(1), p) for p, new in zip(params, names)]
        text = text[:start] + ",".join(params) + text[end:]
    return text


def _operators_of(text: str) -> dict[str, aclnn.RawOperator]:
    return {name: aclnn.RawOperator(proto) for name, proto in headers.parse_header_text(text).items()}


def _python_names(op: aclnn.RawOperator) -> list[str]:
    return list(inspect.signature(op).parameters)


def _check_calls(ops: dict[str, aclnn.RawOperator], plan: bool = True) -> None:
    """Each operator called by position and by keyword (and Add planned by keyword), against
    NumPy; a bad value is refused naming the parameter by its Python name and C type."""
    x = x23()
    add = ops["aclnnAdd"]
    n = _python_names(add)
    for call in (lambda out: add(x, x + 1, 2.0, out), lambda out: add(**dict(zip(n, (x, x + 1, 2.0, out))))):
        out = np.empty_like(x)
        assert call(out) is out and np.array_equal(out, x + 2 * (x + 1))
    with pytest.raises(AclnnParamInvalidError, match=rf"  {re.escape(n[2])} \(const aclScalar \*\): expected a number"):
        add(**dict(zip(n, (x, x, "2", np.empty_like(x)))))
    if plan:
        d, out = aa.to_device(x), aa.empty((2, 3))
        with aa.plan(add, **dict(zip(n, (d, d, 1.0, out)))) as p:
            assert p(**dict(zip(n, (d, aa.to_device(x + 1), 1.0, out)))) is out
            assert np.array_equal(out.numpy(), 2 * x + 1)
    rs = ops["aclnnReduceSum"]
    out = np.empty(3, np.float32)
    assert rs(**dict(zip(_python_names(rs), (x, [0], False, np.float32, out)))) is out
    assert np.array_equal(out, x.sum(axis=0))
    ms = ops["aclnnCustomMaskedScale"]
    x4 = np.arange(4, dtype=np.float32)
    args = (x4, [0.5, 1.0, 2.0, 4.0], [True, False, True, True], "mul", 0.5, 1, np.empty_like(x4))
    want = masked_scale(*args[:-1])
    assert np.array_equal(ms(*args), want)
    assert np.array_equal(ms(**dict(zip(_python_names(ms), args[:-1] + (np.empty_like(x4),)))), want)
    st_ = ops["aclnnSplitTensor"]
    parts = [np.empty((1, 3), np.float32), np.empty((1, 3), np.float32)]
    got = st_(**dict(zip(_python_names(st_), (x, 1, 0, parts))))
    assert got == parts and np.array_equal(np.concatenate(got), x)
    fm = ops["aclnnForeachMulScalarList"]
    outs = [np.empty_like(x)]
    assert fm(**dict(zip(_python_names(fm), ([x], [3.0], outs)))) == outs and np.array_equal(outs[0], 3 * x)


@pytest.fixture
def names_headers():
    aa.aclnn.add_headers(FIXTURES / "names")
    yield FIXTURES / "names"
    headers.reset()
    aclnn._operators.clear()


@pytest.mark.simulator  # CustomMaskedScale is the simulator's vendor operator
def test_internal_names_work_as_parameter_names(npu, names_headers):
    """The fixture names parameters outputs, spec, self, args, kwargs, items, name, check,
    raw, from/from_, lambda, None, fn, key, a, __class__, copy...: every operator works by
    position, by keyword (a Python keyword gets "_", and more until unique), through
    aa.aclnn.call and plans."""
    assert aa.aclnn.prototype("Add").origin == "add_headers"
    assert _python_names(aa.aclnn.CustomMaskedScale) == ["from__", "from_", "lambda_", "None_", "get",
                                                         "device_resident", "tensor_args"]
    _check_calls({n: aa.aclnn.operator(n) for n in FIXTURE_PARAM_NAMES})
    x = x23()
    out = np.empty(3, np.float32)
    assert aa.aclnn.call("aclnnReduceSum", kwargs=x, items=[0], name=False, check=np.float32, raw=out) is out
    out = np.empty_like(x)
    assert aa.aclnn.call("aclnnAdd", outputs=x, spec=x, self=1.0, args=out) is out and np.array_equal(out, 2 * x)
    parts = [np.empty((1, 3), np.float32), np.empty((1, 3), np.float32)]
    with aa.plan(aa.aclnn.SplitTensor, fn=x, key=1, a=0, given=parts) as p:  # plan(fn, /, ...)
        assert p(fn=x + 1, key=1, a=0, given=parts) == parts and np.array_equal(np.concatenate(parts), x + 1)


def test_internal_names_on_the_numpy_backend(numpy_backend, names_headers):
    """The same names bind on the numpy backend: a bad value is the same 161002, and a good
    call runs the operator's CPU reference, its parameters bound by position whatever the
    header names them."""
    pytest.importorskip("torch")
    x = x23()
    with pytest.raises(AclnnParamInvalidError, match=r"  self \(const aclScalar \*\): expected a number"):
        aa.aclnn.Add(outputs=x, spec=x, self="1", args=np.empty_like(x))
    out = np.full_like(x, np.nan)
    assert aa.aclnn.Add(outputs=x, spec=x, self=1.0, args=out) is out and np.array_equal(out, 2 * x)
    raw = np.full(3, np.nan, np.float32)
    assert aa.aclnn.call("aclnnReduceSum", kwargs=x, items=[0], name=False, check=np.float32, raw=raw) is raw
    np.testing.assert_allclose(raw, x.sum(axis=0), rtol=1e-6)


_IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,24}", fullmatch=True)
_PARAMETER_NAME = st.one_of(st.sampled_from(INTERNAL_NAMES), _IDENTIFIER).filter(
    lambda n: n not in NOT_PARAMETER_NAMES and not headers.looks_like_output_name(n)
    and not (n.startswith("__") and n.endswith("__") and n not in INTERNAL_NAMES))


@pytest.mark.simulator  # CustomMaskedScale is the simulator's vendor operator
@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_PARAMETER_NAME, min_size=23, max_size=23, unique=True))
def test_any_c_identifier_is_a_parameter_name(npu, names):
    """The fixture's five operators with any distinct C identifiers as parameter names (the
    binding's own names drawn often): each still binds, converts and runs, by position and
    by keyword, with each Python name the C name, or a Python keyword's with "_" added."""
    it = iter(names)
    renamed = {op: tuple(next(it) for _ in old) for op, old in FIXTURE_PARAM_NAMES.items()}
    ops = _operators_of(_renamed(renamed))
    for op, c_names in renamed.items():
        assert [p.name for p in ops[op].prototype.params] == list(c_names)
        py = _python_names(ops[op])
        assert len(set(py)) == len(py)
        for c, p in zip(c_names, py):
            assert p == c if not keyword.iskeyword(c) else (p.startswith(c + "_") and set(p[len(c):]) == {"_"})
    _check_calls(ops)


# ---------------------------------------------------------------------------------------------
# aclScalar values are never coerced into another number (issue 26, 3)
# ---------------------------------------------------------------------------------------------

SCALAR_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                       np.uint32, np.uint64, np.float16, np.float32, np.float64, ml_dtypes.bfloat16,
                                       np.complex64, np.complex128)]
KIND_ORDER = "biufc"  # each kind holds the ones before it (int and uint are one kind)


def _kind(dtype) -> int:
    d = np.dtype(dtype)
    return {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}[d.kind] if d != np.dtype(ml_dtypes.bfloat16) else 2


# Values that are no number at all, for every dtype.
NOT_NUMBERS = [None, "2", "False", "", b"1", [1.0], [], [[1]], (2,), {1: 2}, np.array(2.0), np.array([1.0]),
               np.array([]), fractions.Fraction(1, 2), decimal.Decimal("1.5"), object(), x23]
# Numbers of each kind (0 bool, 1 integer, 2 floating, 3 complex), as Python and NumPy scalars.
NUMBERS = {0: [True, False, np.bool_(True)],
           1: [1, 0, -3, np.int8(1), np.uint16(7), np.int64(-2)],
           2: [2.0, 0.5, float("nan"), float("inf"), np.float32(1.0), np.float16(2.5), ml_dtypes.bfloat16(1.5)],
           3: [1 + 0j, 1 + 2j, np.complex64(1 + 2j), np.complex128(3)]}


def _wrong_kinds(dtype) -> list:
    """Every value that is no number, and every number of a kind above the dtype's."""
    return NOT_NUMBERS + [v for kind, values in NUMBERS.items() if kind > _kind(dtype) for v in values]


@pytest.mark.parametrize("dtype", SCALAR_DTYPES, ids=str)
def test_a_scalar_of_a_wrong_kind_is_refused_before_any_c_call(backend, no_c_call, dtype):
    """For every aclScalar dtype and every value that is no number, or a number of a kind the
    dtype cannot hold (complex into real, float into integer or bool, int into bool): 161002
    naming the parameter, on both backends, as aa.Scalar and as an aclScalarList item."""
    x = x23()
    for value in _wrong_kinds(dtype):
        with pytest.raises(AclnnParamInvalidError) as info:
            aa.aclnn.Add(x, x, aa.Scalar(value, dtype), np.empty_like(x))
        e = info.value
        assert e.status == 161002 and e.recent is None and e.api == "aclnnAddGetWorkspaceSize", value
        assert str(e).splitlines()[1].startswith("  alpha (const aclScalar *): expected "), str(e)
        with pytest.raises(AclnnParamInvalidError) as info:
            aa.aclnn.ForeachMulScalarList([x], [aa.Scalar(value, dtype)], [np.empty_like(x)])
        assert str(info.value).splitlines()[1].startswith("  scalars[0] (const aclScalarList *): expected "), value


def test_a_wrong_kind_scalar_never_reaches_aclCreateScalar(npu, monkeypatch):
    """Scalar([], float32) made aclCreateScalar read 4 bytes from a 1-byte buffer: no value of
    a wrong kind gets that far (the conversion refuses it first)."""
    from ascend_aclnn.cann.loader import get_cann
    created = []
    real = get_cann().function("aclCreateScalar")
    monkeypatch.setitem(get_cann()._functions, "aclCreateScalar", lambda *a: created.append(a) or real(*a))
    x = x23()
    for value, dtype in (([], np.float32), ([1.0], np.float32), (None, np.bool_), ("False", np.bool_),
                         (np.complex64(1 + 2j), np.float32), (2.5, np.bool_), ("2", np.float32)):
        with pytest.raises(AclnnParamInvalidError):
            aa.aclnn.Add(x, x, aa.Scalar(value, dtype), np.empty_like(x))
    assert created == []


@pytest.mark.parametrize("dtype", SCALAR_DTYPES, ids=str)
def test_a_scalar_of_a_kind_the_dtype_holds_is_its_exact_value(dtype):
    """Every number of a kind at or below the dtype's (bool < integer < floating < complex)
    goes to CANN as NumPy stores that value in the dtype."""
    for kind, values in NUMBERS.items():
        for v in values if kind <= _kind(dtype) else ():
            if dtype.kind == "u" and not isinstance(v, (bool, np.bool_)) and v < 0:
                continue
            with np.errstate(all="ignore"):
                want = np.array(v).astype(dtype).tobytes()
            assert scalar_of(aa.Scalar(v, dtype)) == (aa.tensors.ACL_DTYPES[dtype], want), (v, dtype)


def test_a_scalar_past_its_dtypes_range_is_refused():
    for value, dtype in ((70000, np.float16), (1e39, np.float32), (1e39, ml_dtypes.bfloat16), (-1, np.uint8),
                         (2**64, np.uint64), (np.float64(1e300), np.float16), (1e39 + 0j, np.complex64)):
        with pytest.raises(AclnnParamInvalidError, match="can hold"):
            scalar_of(aa.Scalar(value, dtype))


# ---------------------------------------------------------------------------------------------
# an unsupported prototype fails only its own lookup (issue 26, 6)
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def unsupported_headers():
    aa.aclnn.add_headers(FIXTURES / "unsupported")
    yield
    headers.reset()
    aclnn._operators.clear()


def test_an_unsupported_prototype_fails_only_its_own_lookup(npu, unsupported_headers):
    assert "aclnnFixtureVoidPointer" in aa.aclnn.names()
    assert not hasattr(aa.aclnn, "FixtureVoidPointer")
    assert getattr(aa.aclnn, "FixtureVoidPointer", None) is None
    members = dict(inspect.getmembers(aa.aclnn))
    assert "Add" in members and "FixtureVoidPointer" not in members
    text = pydoc.render_doc(aa.aclnn)
    assert "Any aclnn operator" in text
    with pytest.raises(headers.UnsupportedPrototypeError, match="aclnnFixtureVoidPointerGetWorkspaceSize .* cannot "
                                                                "be called through this binding: parameter 0"):
        aa.aclnn.FixtureVoidPointer
    with pytest.raises(headers.UnsupportedPrototypeError):
        aa.aclnn.operator("FixtureVoidPointer")
    x = x23()
    assert np.array_equal(aa.aclnn.Add(x, x, 1.0, np.empty_like(x)), 2 * x)  # the others still work


def test_every_unsupported_fixture_is_skipped_by_getmembers(npu, unsupported_headers):
    """The rule for each unsupported declaration of the fixture (unknown type, long, void*,
    pointers, arrays, function pointers, references, a tensor array, varargs)."""
    unsupported = [n for n in aa.aclnn.names() if n.startswith("aclnnFixture")]
    assert len(unsupported) >= 9
    for full in unsupported:
        short = full[len("aclnn"):]
        assert not hasattr(aa.aclnn, short) and getattr(aa.aclnn, short, 0) == 0, short
    assert not {n[len("aclnn"):] for n in unsupported} & {name for name, _ in inspect.getmembers(aa.aclnn)}


def test_discovery_without_cann_tells_what_runs_on_the_cpu_reference(tmp_path):
    """Issue 41, item 11: snake_case gets a did-you-mean naming the operator, names() lists
    what runs here when no header declares anything, and info says how many run."""
    result = run_python(textwrap.dedent("""
        import ascend_aclnn as aa
        from ascend_aclnn.tools import info
        for name in ("add", "upsample_nearest_exact1d"):
            try:
                getattr(aa.aclnn, name)
            except AttributeError as exc:
                print(exc)
        print(aa.aclnn.names() == aa.aclnn.names(reference=True), len(aa.aclnn.names()) > 100)
        print([l for l in info.render(info.collect()).splitlines() if l.startswith("CPU reference")][0])
    """), None, ASCEND_HOME_PATH=str(tmp_path / "none"), LD_LIBRARY_PATH="")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "did you mean ascend_aclnn.aclnn.Add?" in lines[0], lines[0]
    assert "did you mean ascend_aclnn.aclnn.UpsampleNearestExact1d?" in lines[1], lines[1]
    assert lines[2] == "True True"
    assert "0 of the 0" not in lines[3] and "run on the numpy backend through their CPU reference" in lines[3], lines[3]


def test_an_operator_the_simulator_does_not_model_says_it_is_the_simulator(sim):
    """Issue 41, item 10: not "This CANN may be too old" when the loaded CANN is the simulator."""
    result = run_python(textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        aa.set_backend("npu")
        x = np.ones((2, 3), np.float32)
        try:
            aa.aclnn.Mul(x, x, np.empty_like(x))
        except aa.CannLoadError as exc:
            print(exc)
    """), sim)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "simulator" in text and "aclnnAdd" in text and "numpy backend" in text and "CPU reference" in text, text
    assert "too old" not in text, text
