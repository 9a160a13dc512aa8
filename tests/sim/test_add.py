"""aclnnAdd (out = self + alpha * other): the ops-math op_api's checks in its order,
PyTorch's promotion, alpha of any dtype, broadcasting, strided and overlapping tensors,
and the numerics of each promoted dtype against NumPy references."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import (BF16, BOOL, COMPLEX64, COMPLEX128, DOUBLE, FLOAT, FLOAT8_E5M2, FLOAT16, INT8, INT16, INT32,
                         INT64, NP, UINT8, UINT16, Env)


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


INTS = [UINT8, INT8, INT16, INT32, INT64]
FLOATS = [FLOAT16, BF16, FLOAT, DOUBLE]
REAL = [BOOL, *INTS, *FLOATS]
F_RANK = {FLOAT16: 1, BF16: 1, FLOAT: 2, DOUBLE: 3}


def torch_promote(a, b):
    """PyTorch's promotion over the real dtypes, written out independently of the simulator."""
    if a == b:
        return a
    if BOOL in (a, b):
        return b if a == BOOL else a
    if a in INTS and b in INTS:
        if {a, b} == {UINT8, INT8}:
            return INT16
        return max(a, b, key=lambda t: np.dtype(NP[t]).itemsize)
    if a in INTS or b in INTS:
        return a if a in FLOATS else b
    if F_RANK[a] == F_RANK[b]:
        return FLOAT
    return max(a, b, key=F_RANK.get)


SAMPLES = {BOOL: [True, False, True, True], UINT8: [0, 3, 200, 255], INT8: [-128, -3, 7, 127],
           INT16: [-300, 0, 7, 32767], INT32: [-70000, 5, 2**31 - 1, 9], INT64: [-2**40, 5, 2**62, 1],
           FLOAT16: [-2.5, 0.1, 1000.0, 3.0], BF16: [-2.5, 0.1, 250.0, 3.0], FLOAT: [-2.5, 0.1, 1e6, 3.25],
           DOUBLE: [-2.5, 0.1, 1e300, 3.25]}


def sample(dtype, shape=(4,)):
    a = np.array(SAMPLES[dtype], dtype=NP[dtype])
    return np.resize(a, shape)


def reference(x, y, alpha, pdt, odt):
    """out for promoted dtype pdt and out dtype odt, following the op_api's A2/A3 branches."""
    with np.errstate(all="ignore"):
        return _reference(x, y, alpha, pdt, odt)


def _reference(x, y, alpha, pdt, odt):
    a, b = x.astype(NP[pdt]), y.astype(NP[pdt])
    one = not (np.float32(alpha) > 1 or np.float32(alpha) < 1)
    if pdt == BOOL:
        r = a | (b & bool(alpha)) if not one else a | b
    elif pdt in INTS:
        wide = a.astype(object) + (1 if one else int(alpha)) * b.astype(object)
        r = np.array([int(v) % 2**64 for v in wide.reshape(-1)], np.uint64).view(np.int64).astype(NP[pdt])
        r = r.reshape(a.shape)
    elif pdt == DOUBLE:
        r = a + b if one else a + b * np.float64(alpha)
    else:
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        if one:
            r32 = a32 + b32
        elif pdt == BF16:
            al = np.float32(np.float32(alpha).astype(ml_dtypes.bfloat16))
            r32 = a32 + (b32 * al).astype(ml_dtypes.bfloat16).astype(np.float32)
        else:
            r32 = a32 + np.float32(alpha) * b32
        r = r32.astype(NP[pdt])
    return r.astype(NP[odt])


def same(got, want):
    if got.dtype.kind == "f" or got.dtype == ml_dtypes.bfloat16:
        g, w = got.astype(np.float64), want.astype(np.float64)
        return np.array_equal(g, w, equal_nan=True)
    return np.array_equal(got, want)


def add(env, x, y, alpha, out_dtype, out_shape=None, alpha_dtype=FLOAT):
    xt, _ = env.tensor(x)
    yt, _ = env.tensor(y)
    al = env.scalar(alpha, alpha_dtype)
    shape = list(np.broadcast_shapes(x.shape, y.shape)) if out_shape is None else out_shape
    ot, op = env.empty(shape, out_dtype)
    return env.run("aclnnAdd", xt, yt, al, ot), op, shape


@pytest.mark.parametrize("xdt,ydt", list(itertools.combinations_with_replacement(REAL, 2)))
def test_promotion_and_values(env, xdt, ydt):
    """Every pair of real dtypes, alpha 1 and an integral alpha 3, out of the promoted dtype."""
    pdt = torch_promote(xdt, ydt)
    x, y = sample(xdt), sample(ydt)[::-1].copy()
    for alpha in (1, 3) if pdt != BOOL else (1, 0):
        rc, op, shape = add(env, x, y, alpha, pdt, alpha_dtype=INT64 if pdt != BOOL else BOOL)
        assert rc == 0, env.s.err()
        got = env.read(op, shape, pdt)
        assert same(got, reference(x, y, alpha, pdt, pdt)), (xdt, ydt, alpha, got, reference(x, y, alpha, pdt, pdt))


def test_promotion_spot_checks():
    assert torch_promote(INT32, FLOAT16) == FLOAT16
    assert torch_promote(UINT8, INT8) == INT16
    assert torch_promote(BF16, FLOAT16) == FLOAT
    assert torch_promote(INT64, BF16) == BF16
    assert torch_promote(BOOL, UINT8) == UINT8


@pytest.mark.parametrize("pdt", [FLOAT, FLOAT16, BF16, DOUBLE])
@pytest.mark.parametrize("alpha", [1.0, 0.3, -2.75, 1e-3, float("nan")])
def test_float_alpha(env, pdt, alpha):
    """A float alpha: each dtype's branch; NaN takes the plain-add branch (the op_api's test
    for 1 is 'neither > 1 nor < 1')."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5)).astype(NP[pdt])
    y = rng.standard_normal((3, 5)).astype(NP[pdt])
    rc, op, shape = add(env, x, y, alpha, pdt, alpha_dtype=DOUBLE)
    assert rc == 0, env.s.err()
    assert same(env.read(op, shape, pdt), reference(x, y, alpha, pdt, pdt))


@pytest.mark.parametrize("alpha_dtype", [FLOAT, FLOAT16, BF16, DOUBLE, INT8, INT32, INT64, UINT8, BOOL])
def test_alpha_of_any_real_dtype_into_float(env, alpha_dtype):
    x = np.array([1, 2, 3], np.float32)
    y = np.array([10, 20, 30], np.float32)
    rc, op, _ = add(env, x, y, 2, FLOAT, alpha_dtype=alpha_dtype)
    assert rc == 0, env.s.err()
    want = [1, 2, 3] if alpha_dtype == BOOL and False else [21, 42, 63]
    if alpha_dtype == BOOL:  # bool(2) is true: alpha 1
        want = [11, 22, 33]
    assert env.read(op, [3], FLOAT).tolist() == want


@pytest.mark.parametrize("pdt,alpha_dtype,ok", [
    (INT32, FLOAT, False), (INT32, DOUBLE, False), (INT32, INT64, True), (INT32, BOOL, True),
    (BOOL, INT32, True), (BOOL, FLOAT, False), (BOOL, BOOL, True), (FLOAT, COMPLEX64, False),
    (INT64, FLOAT16, False), (UINT8, INT8, True)])
def test_alpha_must_cast_to_the_promoted_dtype(env, pdt, alpha_dtype, ok):
    x = sample(pdt)
    value = 1 + 1j if alpha_dtype == COMPLEX64 else 1
    rc, _, _ = add(env, x, x, value, pdt, alpha_dtype=alpha_dtype)
    if ok:
        assert rc == 0, env.s.err()
    else:
        assert rc == sc.PARAM_INVALID
        msg = env.s.err()
        assert "alpha dtype" in msg and "cannot be cast to the promoted dtype" in msg, msg


@pytest.mark.parametrize("pdt,odt,ok", [
    (FLOAT, FLOAT16, True), (FLOAT, DOUBLE, True), (FLOAT, BF16, True), (FLOAT, INT32, False), (FLOAT, BOOL, False),
    (INT32, INT64, True), (INT32, INT8, True), (INT32, FLOAT, True), (INT32, BOOL, False), (BOOL, INT32, True),
    (BOOL, FLOAT16, True), (INT64, FLOAT, True)])
def test_out_dtype_casts(env, pdt, odt, ok):
    x, y = sample(pdt), sample(pdt)
    rc, op, shape = add(env, x, y, 1, odt, alpha_dtype=INT32 if pdt != BOOL else BOOL)
    if not ok:
        assert rc == sc.PARAM_INVALID
        assert "cannot be cast to out dtype" in env.s.err()
        return
    assert rc == 0, env.s.err()
    assert same(env.read(op, shape, odt), reference(x, y, 1, pdt, odt))


def test_out_may_be_complex_for_the_op_api_but_not_for_the_simulator(env):
    x = np.ones(2, np.float32)
    rc, _, _ = add(env, x, x, 1, COMPLEX64)
    assert rc == sc.PARAM_INVALID
    assert "not computed by the simulator" in env.s.err()


@pytest.mark.parametrize("bad", [UINT16, FLOAT8_E5M2])
def test_self_and_other_dtypes(env, bad):
    good = np.ones(2, np.float32)
    for order in ("self", "other"):
        xt, _ = env.tensor(good)
        bt, _ = env.tensor(np.ones(2, np.uint16), dtype=bad, shape=[2] if bad == UINT16 else [4])
        al = env.scalar(1, FLOAT)
        ot, _ = env.empty([2], FLOAT)
        args = (bt, xt) if order == "self" else (xt, bt)
        assert env.run("aclnnAdd", *args, al, ot) == sc.PARAM_INVALID
        msg = env.s.err()
        assert f"{order} dtype must be ACL_FLOAT, ACL_INT32" in msg, msg


@pytest.mark.parametrize("dtype", [COMPLEX64, COMPLEX128])
def test_complex_is_accepted_by_the_checks_but_not_computed(env, dtype):
    x = np.array([1 + 1j], NP[dtype])
    rc, _, _ = add(env, x, x, 1, dtype)
    assert rc == sc.PARAM_INVALID
    assert "complex addition" in env.s.err()


def test_float8_alpha_is_not_computed(env):
    x = np.ones(2, np.float32)
    rc, _, _ = add(env, x, x, 1, FLOAT, alpha_dtype=FLOAT8_E5M2)
    assert rc == sc.PARAM_INVALID and "alpha dtype ACL_FLOAT8_E5M2" in env.s.err()


@pytest.mark.parametrize("xs,ys", [((2, 3), (3,)), ((4, 1, 5), (3, 1)), ((1,), (2, 2)), ((), (3,)), ((2, 1), (1, 2))])
def test_broadcasting(env, xs, ys):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(xs).astype(np.float32)
    y = rng.standard_normal(ys).astype(np.float32)
    rc, op, shape = add(env, x, y, 0.5, FLOAT)
    assert rc == 0, env.s.err()
    assert same(env.read(op, shape, FLOAT), x + np.float32(0.5) * y)


def test_shape_checks(env):
    x = np.ones((2, 3), np.float32)
    rc, _, _ = add(env, x, np.ones((4,), np.float32), 1, FLOAT, out_shape=[2, 3])
    assert rc == sc.PARAM_INVALID and "cannot broadcast" in env.s.err()
    rc, _, _ = add(env, x, x, 1, FLOAT, out_shape=[3, 2])
    assert rc == sc.PARAM_INVALID and "out shape must be the broadcast shape [2, 3], got [3, 2]" in env.s.err()
    rc, _, _ = add(env, x, np.ones(3, np.float32), 1, FLOAT, out_shape=[1, 2, 3])
    assert rc == sc.PARAM_INVALID
    nine = np.ones((1,) * 9, np.float32)
    rc, _, _ = add(env, nine, nine, 1, FLOAT)
    assert rc == sc.PARAM_INVALID and "more than the 8 supported" in env.s.err()


def test_empty_inputs_run_nothing(env):
    x = np.ones((0, 3), np.float32)
    y = np.ones((3,), np.float32)
    xt, _ = env.tensor(x)
    yt, _ = env.tensor(y)
    al = env.scalar(1, FLOAT)
    ot, _ = env.empty([0, 3], FLOAT)
    rc, ws, ex = env.phase1("aclnnAdd", xt, yt, al, ot)
    assert rc == 0 and ws == 0
    env.s.ok(env.s.aclnnAdd(None, 0, ex, env.s.stream))
    env.s.ok(env.s.aclrtSynchronizeStream(env.s.stream))


def test_null_arguments_in_order(env):
    s = env.s
    xt, _ = env.tensor(np.ones(2, np.float32))
    al = env.scalar(1, FLOAT)
    ot, _ = env.empty([2], FLOAT)
    args = {"self": xt, "other": xt, "alpha": al, "out": ot}
    for name in args:
        call = [None if k == name else v for k, v in args.items()]
        rc, ws, ex = s.phase1("aclnnAdd", *call)
        assert (rc, ws, ex) == (sc.PARAM_NULLPTR, 12345, 0xDEAD0)
        assert s.err() == f"aclnnAddGetWorkspaceSize: {name} is NULL"
    rc = s.aclnnAddGetWorkspaceSize(xt, xt, al, ot, None, None)
    assert rc == sc.PARAM_NULLPTR and "workspaceSize is NULL" in s.err()


def test_handles_that_are_not_live(env):
    s = env.s
    xt, _ = env.tensor(np.ones(2, np.float32))
    ot, _ = env.empty([2], FLOAT)
    al = env.scalar(1, FLOAT)
    dead = env.scalar(1, FLOAT)
    env.scalars.remove(dead)
    s.ok(s.aclDestroyScalar(dead))
    assert s.phase1("aclnnAdd", xt, xt, dead, ot)[0] == sc.INNER_NULLPTR
    assert "alpha" in (m := s.err()) and "not a live aclScalar" in m and "already destroyed" in m
    assert s.phase1("aclnnAdd", xt, xt, xt, ot)[0] == sc.INNER_NULLPTR   # a tensor as alpha
    assert "a live aclTensor" in s.err()
    lst = env.tensor_list([])
    assert s.phase1("aclnnAdd", lst, xt, al, ot)[0] == sc.INNER_NULLPTR  # a list as self
    assert "self" in (m := s.err()) and "a live aclTensorList" in m


def test_strided_inputs_and_out(env):
    """A transposed self, a broadcast row with a gap between elements, out a transposed view."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((3, 4)).astype(np.float32)
    xt, _ = env.tensor(base, shape=[4, 3], strides=[1, 4])            # base.T
    row = rng.standard_normal(6).astype(np.float32)
    yt, _ = env.tensor(row, shape=[3], strides=[2], offset=0)         # row[::2]
    al = env.scalar(2.0, FLOAT)
    ot, op = env.empty([12], FLOAT)
    env.s.ok(env.s.aclDestroyTensor(ot))
    env.tensors.remove(ot)
    ot = env.s.tensor([4, 3], FLOAT, op, strides=[1, 4], storage=[12], fmt=2)
    env.tensors.append(ot)
    assert env.run("aclnnAdd", xt, yt, al, ot) == 0, env.s.err()
    got = env.read(op, [4, 3], FLOAT, strides=[1, 4])
    assert same(got, base.T + np.float32(2.0) * row[::2])


def test_out_overlapping_self(env):
    """out is self (an in-place add through aclnnAdd): every result is computed first."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    xt, xp = env.tensor(x)
    yt, _ = env.tensor(np.ones(3, np.float32))
    al = env.scalar(1, FLOAT)
    assert env.run("aclnnAdd", xt, yt, al, xt) == 0
    assert env.read(xp, [2, 3], FLOAT).tolist() == (x + 1).tolist()
    # out a transposed view of self's own storage
    sq = np.arange(4, dtype=np.float32).reshape(2, 2)
    st, sp = env.tensor(sq)
    tt = env.s.tensor([2, 2], FLOAT, sp, strides=[1, 2], storage=[4], fmt=2)
    env.tensors.append(tt)
    zero = env.scalar(0, FLOAT)
    assert env.run("aclnnAdd", st, st, zero, tt) == 0
    assert env.read(sp, [2, 2], FLOAT).tolist() == sq.T.tolist()


def test_repeatable_executor_and_destroyed_input(env):
    s = env.s
    xt, xp = env.tensor(np.ones(2, np.float32))
    al = env.scalar(1, FLOAT)
    ot, op = env.empty([2], FLOAT)
    rc, ws, ex = s.phase1("aclnnAdd", xt, xt, al, ot)
    assert rc == 0 and ws == 0
    s.ok(s.aclSetAclOpExecutorRepeatable(ex))
    env.execs.append(ex)
    for _ in range(2):
        s.ok(s.aclnnAdd(None, 0, ex, s.stream))
    s.ok(s.aclrtSynchronizeStream(s.stream))
    assert env.read(op, [2], FLOAT).tolist() == [2, 2]
    env.tensors.remove(xt)
    s.ok(s.aclDestroyTensor(xt))
    assert s.aclnnAdd(None, 0, ex, s.stream) == sc.INNER_NULLPTR
    assert "was destroyed before this launch" in s.err()


def test_scalar_destroyed_after_phase1(env):
    """alpha's value is taken at phase 1: the scalar may go before phase 2."""
    s = env.s
    xt, _ = env.tensor(np.ones(2, np.float32))
    ot, op = env.empty([2], FLOAT)
    al = env.scalar(5, INT32)
    rc, ws, ex = s.phase1("aclnnAdd", xt, xt, al, ot)
    assert rc == 0
    env.scalars.remove(al)
    s.ok(s.aclDestroyScalar(al))
    s.ok(s.aclnnAdd(None, 0, ex, s.stream))
    s.ok(s.aclrtSynchronizeStream(s.stream))
    assert env.read(op, [2], FLOAT).tolist() == [6, 6]


def test_split_layout(sim_builds, run_script):
    """aclnnAdd lives in libopapi_math.so and runs from there."""
    run_script("""
        s = sc.Sim(os.environ["SIMDIR"], "libopapi_math.so")
        assert hasattr(s, "aclnnAdd") and hasattr(s, "aclnnCat") and hasattr(s, "aclnnReduceSum")
        assert not hasattr(s, "aclnnForeachMulScalarList")
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        x = np.array([1, 2, 3], np.int32)
        xp = s.upload(x); op = s.malloc(12)
        xt = s.tensor([3], 3, xp); ot = s.tensor([3], 3, op)
        v = np.array([4], np.int64); al = s.aclCreateScalar(v.ctypes.data, 9)
        rc, ws, ex = s.phase1("aclnnAdd", xt, xt, al, ot); s.ok(rc)
        s.ok(s.aclnnAdd(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(op, 3, np.int32).tolist() == [5, 10, 15]
        for h in (xt, ot): s.ok(s.aclDestroyTensor(h))
        s.ok(s.aclDestroyScalar(al)); s.free(xp); s.free(op)
        assert all(v == 0 for v in s.counts().values()), s.counts()
    """, env={"SIMDIR": str(sim_builds["split"])})
