"""aclnnReduceSum (self summed over dims as dtype): the ops-math op_api's checks in order,
the empty and 0-D paths, keepDims, casts to dtype, and sums against NumPy."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import (BF16, BOOL, COMPLEX64, DOUBLE, FLOAT, FLOAT16, INT8, INT16, INT32, INT64, NP, UINT8,
                         UINT16, Env)


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


def reduce_sum(env, x, dims, keep, dtype, out_shape, **kw):
    xt, _ = env.tensor(x, **kw)
    dh = env.int_array(dims)
    ot, op = env.empty(out_shape, dtype)
    return env.run("aclnnReduceSum", xt, dh, keep, dtype, ot), op


def reduced_shape(shape, dims, keep):
    dims = {d % max(len(shape), 1) for d in dims} if dims else set(range(len(shape)))
    return [1 if i in dims else n for i, n in enumerate(shape) if keep or i not in dims]


@pytest.mark.parametrize("dims", [[0], [1], [-1], [0, 2], [], [2, 0, 1]])
@pytest.mark.parametrize("keep", [False, True])
def test_float_sums(env, dims, keep):
    rng = np.random.default_rng(len(dims))
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    shape = reduced_shape(x.shape, dims, keep)
    rc, op = reduce_sum(env, x, dims, keep, FLOAT, shape)
    assert rc == 0, env.s.err()
    axis = tuple(d % 3 for d in dims) if dims else None
    want = x.astype(np.float64).sum(axis=axis, keepdims=keep).astype(np.float32)  # in double, rounded once
    assert np.array_equal(env.read(op, shape, FLOAT), np.asarray(want).reshape(shape))


@pytest.mark.parametrize("sdt,dtype", [(INT32, FLOAT), (FLOAT, INT32), (BOOL, INT64), (INT8, INT8), (UINT8, INT64),
                                       (FLOAT16, FLOAT16), (BF16, BF16), (FLOAT, DOUBLE), (INT64, INT16),
                                       (FLOAT, BOOL), (INT32, BOOL)])
def test_sums_in_dtype(env, sdt, dtype):
    """self is cast to dtype first (floats truncated into integers), then summed: integers
    wrap at dtype's width, floats are summed in double and rounded once, BOOL is any."""
    base = np.array([[1.75, -2.5, 100.25], [0.0, 3.5, 120.0]])
    x = base.astype(NP[sdt]) if sdt != BOOL else base.astype(bool)
    rc, op = reduce_sum(env, x, [1], False, dtype, [2])
    assert rc == 0, env.s.err()
    got = env.read(op, [2], dtype)
    with np.errstate(all="ignore"):
        if dtype == BOOL:
            want = (x != 0).any(axis=1)
        elif np.issubdtype(NP[dtype], np.integer):
            cast = np.trunc(x.astype(np.float64)).astype(np.int64) if np.issubdtype(x.dtype, np.floating) or \
                x.dtype == ml_dtypes.bfloat16 else x.astype(np.int64)
            wrapped = cast.astype(NP[dtype]).astype(np.int64)
            want = wrapped.sum(axis=1).astype(NP[dtype])
        else:
            want = x.astype(NP[dtype]).astype(np.float64).sum(axis=1).astype(NP[dtype])
    assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), (got, want)


def test_int8_sum_wraps(env):
    x = np.array([100, 100, 100], np.int8)
    rc, op = reduce_sum(env, x, [0], False, INT8, [])
    assert rc == 0
    assert env.read(op, [], INT8).tolist() == np.int8(300 - 256).tolist()


def test_dtype_checks(env):
    s = env.s
    x = np.ones((2, 2), np.float32)
    assert reduce_sum(env, np.ones(2, np.uint16), [0], False, FLOAT, [])[0] == sc.PARAM_INVALID
    assert "self dtype must be ACL_FLOAT16, ACL_FLOAT" in s.err()
    xt, _ = env.tensor(x)
    ot, _ = env.empty([2], UINT16)
    assert env.run("aclnnReduceSum", xt, env.int_array([0]), False, UINT16, ot) == sc.PARAM_INVALID
    assert "out dtype must be" in s.err()
    for bad in (UINT16, 999, -1):
        ot, _ = env.empty([2], FLOAT)
        assert env.run("aclnnReduceSum", xt, env.int_array([0]), False, bad, ot) == sc.PARAM_INVALID
        assert f"dtype {'ACL_UINT16' if bad == UINT16 else 'not an aclDataType' if bad == 999 else 'ACL_DT_UNDEFINED'}" \
            in s.err()
    assert reduce_sum(env, x, [0], False, FLOAT16, [2])[0] == 0  # self FLOAT summed as FLOAT16: fine
    xt2, _ = env.tensor(x)
    ot2, _ = env.empty([2], FLOAT)
    assert env.run("aclnnReduceSum", xt2, env.int_array([0]), False, DOUBLE, ot2) == sc.PARAM_INVALID
    assert "out dtype ACL_FLOAT (0) must be dtype ACL_DOUBLE (11)" in s.err()


def test_shape_and_dims_checks(env):
    s = env.s
    x = np.ones((2, 3), np.float32)
    assert reduce_sum(env, np.ones((1,) * 9, np.float32), [0], False, FLOAT, [1] * 8)[0] == sc.PARAM_INVALID
    assert "more than the 8 supported" in s.err()
    for dims in ([2], [-3]):
        assert reduce_sum(env, x, dims, False, FLOAT, [2])[0] == sc.PARAM_INVALID
        assert "must be in [-2, 1]" in s.err()
    assert reduce_sum(env, x, [1, -1], False, FLOAT, [2])[0] == sc.PARAM_INVALID
    assert "dimension 1 appears more than once" in s.err()
    assert reduce_sum(env, x, [1], False, FLOAT, [3])[0] == sc.PARAM_INVALID
    assert "out shape must be [2] (self [2, 3] summed over [1]), got [3]" in s.err()
    assert reduce_sum(env, x, [1], True, FLOAT, [2])[0] == sc.PARAM_INVALID
    assert "out shape must be [2, 1]" in s.err()
    # one element each: [] and [1, 1] agree
    rc, op = reduce_sum(env, x, [], False, FLOAT, [1, 1])
    assert rc == 0 and env.read(op, [1], FLOAT).tolist() == [6.0]


def test_empty_self_fills_out_with_zeros(env):
    """Whatever out's shape (the op_api does not check it on this path)."""
    x = np.ones((0, 3), np.float32)
    rc, op = reduce_sum(env, x, [0], False, FLOAT, [3])
    assert rc == 0 and env.read(op, [3], FLOAT).tolist() == [0, 0, 0]
    rc, op = reduce_sum(env, x, [1], False, INT32, [7, 2])
    assert rc == 0 and env.read(op, [7, 2], INT32).tolist() == [[0, 0]] * 7
    rc, op = reduce_sum(env, x, [1], False, FLOAT, [0])
    assert rc == 0
    rc, _ = reduce_sum(env, x, [1], False, COMPLEX64, [3])
    assert rc == sc.PARAM_INVALID and "an empty self fills out with zeros" in env.s.err()


def test_zero_d_self(env):
    x = np.array(2.5, np.float32)
    for dims, shape in (([], []), ([0], [1]), ([-1], [1, 1])):
        rc, op = reduce_sum(env, x, dims, False, DOUBLE, shape)
        assert rc == 0, env.s.err()
        assert env.read(op, shape, DOUBLE).reshape(-1).tolist() == [2.5]
    assert reduce_sum(env, x, [1], False, FLOAT, [])[0] == sc.PARAM_INVALID
    assert reduce_sum(env, x, [], False, FLOAT, [2])[0] == sc.PARAM_INVALID
    assert "self is 0-D: out must hold one element" in env.s.err()


def test_complex_is_not_computed(env):
    x = np.ones(2, np.complex64)
    assert reduce_sum(env, x, [0], False, COMPLEX64, [])[0] == sc.PARAM_INVALID
    assert "complex sums" in env.s.err()


def test_null_and_dead_arguments(env):
    s = env.s
    xt, _ = env.tensor(np.ones(2, np.float32))
    dh = env.int_array([0])
    ot, _ = env.empty([], FLOAT)
    for i, name in enumerate(("self", "dims", "out")):
        args = [xt, dh, ot]
        args[i] = None
        rc, ws, ex = s.phase1("aclnnReduceSum", args[0], args[1], False, FLOAT, args[2])
        assert (rc, ws, ex) == (sc.PARAM_NULLPTR, 12345, 0xDEAD0)
        assert s.err() == f"aclnnReduceSumGetWorkspaceSize: {name} is NULL"
    dead = s.int_array([0])
    s.ok(s.aclDestroyIntArray(dead))
    assert s.phase1("aclnnReduceSum", xt, dead, False, FLOAT, ot)[0] == sc.INNER_NULLPTR
    assert "dims" in (m := s.err()) and "not a live aclIntArray" in m
    fa = env.float_array([0.0])
    assert s.phase1("aclnnReduceSum", xt, fa, False, FLOAT, ot)[0] == sc.INNER_NULLPTR
    assert "a live aclFloatArray" in s.err()


def test_strided_self_and_out(env):
    base = np.arange(12, dtype=np.float32)
    xt, _ = env.tensor(base, shape=[4, 3], strides=[1, 4])   # base.reshape(3, 4).T
    dh = env.int_array([0])
    _, op = env.empty([6], FLOAT)
    ot = env.s.tensor([3], FLOAT, op, strides=[2], storage=[6], fmt=2)
    env.tensors.append(ot)
    assert env.run("aclnnReduceSum", xt, dh, False, FLOAT, ot) == 0, env.s.err()
    assert env.read(op, [3], FLOAT, strides=[2]).tolist() == base.reshape(3, 4).T.sum(axis=0).tolist()


def test_bool_dims_and_dtype_parameters_in_the_split_layout(sim_builds, run_script):
    """aclnnReduceSum from libopapi_math.so, with keepDims true and dtype INT64."""
    run_script("""
        s = sc.Sim(os.environ["SIMDIR"], "libopapi_math.so")
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        x = np.array([[1, 0, 1], [1, 1, 1]], np.bool_)
        xp = s.upload(x.view(np.uint8)); op = s.malloc(16)
        xt = s.tensor([2, 3], 12, xp); ot = s.tensor([2, 1], 9, op)
        dims = s.int_array([-1])
        rc, ws, ex = s.phase1("aclnnReduceSum", xt, dims, True, 9, ot); s.ok(rc)
        s.ok(s.aclnnReduceSum(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(op, 2, np.int64).tolist() == [2, 3]
        s.ok(s.aclDestroyTensor(xt)); s.ok(s.aclDestroyTensor(ot)); s.ok(s.aclDestroyIntArray(dims))
        s.free(xp); s.free(op)
        assert all(v == 0 for v in s.counts().values()), s.counts()
    """, env={"SIMDIR": str(sim_builds["split"])})
