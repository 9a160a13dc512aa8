"""The operators that take tensor and scalar lists: aclnnCat (a list in), aclnnSplitTensor
(a list out) and aclnnForeachMulScalarList (lists in and out, a scalar list): their real
checks and statuses, hostile lists (empty, NULL items, destroyed items, too long), and
their numerics against NumPy."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import (BF16, BOOL, COMPLEX64, COMPLEX128, DOUBLE, FLOAT, FLOAT16, FRACTAL_NZ, INT8, INT16, INT32,
                         INT64, NCHW, ND, NP, TILING_ERROR, UINT8, UINT16, Env)


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


def tensors(env, arrays, **kw):
    return [env.tensor(a, **kw)[0] for a in arrays]


# =====================================================================================
# aclnnCat
# =====================================================================================

def cat(env, arrays, dim, out_shape, out_dtype, **kw):
    lst = env.tensor_list(tensors(env, arrays, **kw))
    ot, op = env.empty(out_shape, out_dtype)
    return env.run("aclnnCat", lst, dim, ot), op


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_cat_values(env, dim):
    rng = np.random.default_rng(dim + 5)
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    arrays = []
    for i, sh in enumerate(shapes):
        sh = list(sh)
        sh[dim] = i + 1
        arrays.append(rng.standard_normal(sh).astype(np.float32))
    want = np.concatenate(arrays, axis=dim)
    rc, op = cat(env, arrays, dim, want.shape, FLOAT)
    assert rc == 0, env.s.err()
    assert np.array_equal(env.read(op, want.shape, FLOAT), want)


@pytest.mark.parametrize("dtypes,promoted", [
    ((INT32, FLOAT16), FLOAT16), ((UINT8, INT8), INT16), ((BOOL, INT64), INT64), ((BF16, FLOAT16), FLOAT),
    ((FLOAT, DOUBLE, INT8), DOUBLE), ((BOOL, BOOL), BOOL), ((INT16, BF16), BF16)])
def test_cat_promotes_then_casts_to_out(env, dtypes, promoted):
    """Each tensor is cast to the promoted dtype, then to out's."""
    values = [np.array([1, 2049, 7], np.int64), np.array([-3, 0, 5], np.int64), np.array([1, 0, 1], np.int64)]
    arrays = [values[i].astype(NP[d]) for i, d in enumerate(dtypes)]
    for out_dtype in {promoted, DOUBLE}:
        rc, op = cat(env, arrays, 0, [3 * len(arrays)], out_dtype)
        assert rc == 0, env.s.err()
        want = np.concatenate([a.astype(NP[promoted]) for a in arrays]).astype(NP[out_dtype])
        assert np.array_equal(env.read(op, want.shape, out_dtype), want), (dtypes, out_dtype)
    # 2049 is not a float16: int32 into a float16 promotion rounds it (to 2048)
    if dtypes == (INT32, FLOAT16):
        assert env.read(op, [6], DOUBLE)[1] == 2048


def test_cat_bits_are_copied_when_dtypes_agree(env):
    nan = np.array([0x7C01, 0xFE00, 0x0001], np.uint16).view(np.float16)
    rc, op = cat(env, [nan, nan], 0, [6], FLOAT16)
    assert rc == 0
    assert env.read(op, [6], FLOAT16).view(np.uint16).tolist() == [0x7C01, 0xFE00, 0x0001] * 2


def test_cat_complex64(env):
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([5.5], np.float32)
    rc, op = cat(env, [a, b], 0, [3], COMPLEX64)
    assert rc == 0, env.s.err()
    assert env.read(op, [3], COMPLEX64).tolist() == [1 + 2j, 3 - 1j, 5.5 + 0j]


def test_cat_dtype_checks(env):
    rc, _ = cat(env, [np.ones(2, np.float32), np.ones(2, np.uint16)], 0, [4], FLOAT)
    assert rc == sc.PARAM_INVALID and "tensors[1] dtype must be ACL_FLOAT" in env.s.err()
    rc, _ = cat(env, [np.ones(2, np.float32)], 0, [2], COMPLEX128)
    assert rc == sc.PARAM_INVALID and "out dtype must be" in env.s.err()
    rc, _ = cat(env, [np.ones(2, np.complex64), np.ones(2, np.float64)], 0, [4], COMPLEX64)
    assert rc == sc.PARAM_INVALID and "promote to ACL_COMPLEX128" in env.s.err()
    rc, _ = cat(env, [np.ones(2, np.float32), np.ones(2, np.int32)], 0, [4], INT32)
    assert rc == sc.PARAM_INVALID and "cannot be cast to out dtype ACL_INT32" in env.s.err()
    rc, _ = cat(env, [np.ones(2, np.int32)], 0, [2], BOOL)
    assert rc == sc.PARAM_INVALID and "cannot be cast to out dtype ACL_BOOL" in env.s.err()


def test_cat_format_checks(env):
    s = env.s
    a = np.ones((2, 2), np.float32)
    rc, _ = cat(env, [a, a], 0, [4, 2], FLOAT, fmt=FRACTAL_NZ)
    assert rc == sc.PARAM_INVALID and "private format" in s.err()
    lst = env.tensor_list([env.tensor(a, fmt=ND)[0], env.tensor(a, fmt=NCHW)[0]])
    ot, _ = env.empty([4, 2], FLOAT)
    assert env.run("aclnnCat", lst, 0, ot) == sc.PARAM_INVALID
    assert "tensors[1] format NCHW (0) and tensors[0] format ND (2) must be equal" in s.err()
    lst = env.tensor_list([env.tensor(a, fmt=ND)[0]])
    ot, _ = env.empty([2, 2], FLOAT, fmt=NCHW)
    assert env.run("aclnnCat", lst, 0, ot) == sc.PARAM_INVALID and "out format NCHW (0)" in s.err()


def test_cat_shape_checks(env):
    s = env.s
    a, b = np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)
    assert cat(env, [a, b], 0, [4, 3], FLOAT)[0] == sc.PARAM_INVALID
    assert "dimension 1 of tensors[1] [2, 4] must equal that of tensors[0] [2, 3]" in s.err()
    assert cat(env, [a, np.ones((2, 3, 1), np.float32)], 0, [4, 3], FLOAT)[0] == sc.PARAM_INVALID
    assert "tensors[1] has 3 dimensions, tensors[0] has 2" in s.err()
    for dim in (2, -3):
        assert cat(env, [a, a], dim, [4, 3], FLOAT)[0] == sc.PARAM_INVALID
        assert f"dim {dim} is out of range" in s.err()
    assert cat(env, [np.float32(1.0).reshape(()), np.float32(2.0).reshape(())], 0, [2], FLOAT)[0] == sc.PARAM_INVALID
    assert "out of range for tensors[0], which has 0 dimensions" in s.err()
    nine = np.ones((1,) * 9, np.float32)
    assert cat(env, [nine, nine], 0, [2] + [1] * 8, FLOAT)[0] == sc.PARAM_INVALID
    assert "more than the 8 supported" in s.err()
    assert cat(env, [a, a], 0, [4, 4], FLOAT)[0] == sc.PARAM_INVALID
    assert "out shape must be [4, 3] (the concatenation along dim 0), got [4, 4]" in s.err()


def test_cat_out_with_one_element_each(env):
    """The op_api compares out's shape as CheckShapeAndScalarSame does: [1, 1] and [1] agree."""
    rc, op = cat(env, [np.array([[7.0]], np.float32), np.ones((0, 1), np.float32)], 0, [1], FLOAT)
    assert rc == 0, env.s.err()
    assert env.read(op, [1], FLOAT).tolist() == [7.0]


def test_cat_empty_list_and_empty_tensors(env):
    """An empty list, or only 1-D [0] tensors: success before any check, out unchecked (even
    NULL) and *workspaceSize left as it was, as in CANN."""
    s = env.s
    for items in ([], [env.tensor(np.ones(0, np.float32))[0], env.tensor(np.ones(0, np.int64))[0]]):
        lst = env.tensor_list(items)
        rc, ws, ex = s.phase1("aclnnCat", lst, 99, None)
        assert rc == 0 and ws == 12345 and ex not in (0, 0xDEAD0)
        s.ok(s.aclnnCat(None, 0, ex, s.stream))
    s.ok(s.aclrtSynchronizeStream(s.stream))
    # a 1-D [0] tensor among 2-D ones is dropped before the rank check
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    rc, op = cat(env, [np.ones(0, np.float32), a, np.ones(0, np.float32)], 1, [2, 3], FLOAT)
    assert rc == 0, s.err()
    assert env.read(op, [2, 3], FLOAT).tolist() == a.tolist()
    # other empty tensors are checked, then skipped
    rc, op = cat(env, [np.ones((2, 0), np.float32), a], 1, [2, 3], FLOAT)
    assert rc == 0, s.err()
    assert env.read(op, [2, 3], FLOAT).tolist() == a.tolist()
    rc, op = cat(env, [np.ones((0, 3), np.float32), np.ones((0, 4), np.float32)], 1, [0, 7], FLOAT)
    assert rc == 0, s.err()


def test_cat_null_and_dead_arguments(env):
    s = env.s
    a = env.tensor(np.ones(2, np.float32))[0]
    ot, _ = env.empty([2], FLOAT)
    assert s.phase1("aclnnCat", None, 0, ot)[0] == sc.PARAM_NULLPTR
    assert s.err() == "aclnnCatGetWorkspaceSize: tensors is NULL"
    lst = env.tensor_list([a, None])
    assert s.phase1("aclnnCat", lst, 0, ot)[0] == sc.PARAM_NULLPTR
    assert s.err() == "aclnnCatGetWorkspaceSize: tensors[1] is NULL"
    b, c = env.tensor(np.ones(2, np.float32))[0], env.tensor(np.ones(2, np.float32))[0]
    lst2 = env.tensor_list([b, c])
    assert s.phase1("aclnnCat", lst2, 0, None)[0] == sc.PARAM_NULLPTR
    assert s.err() == "aclnnCatGetWorkspaceSize: out is NULL"
    s.ok(s.aclDestroyTensor(c))                                   # an item destroyed behind the list's back
    assert s.phase1("aclnnCat", lst2, 0, ot)[0] == sc.INNER_NULLPTR
    assert "tensors[1] (aclTensor" in (m := s.err()) and "already destroyed" in m
    env.lists.remove(lst2)
    assert s.aclDestroyTensorList(lst2) == sc.INNER                # and the list then reports it
    assert s.phase1("aclnnCat", lst2, 0, ot)[0] == sc.INNER_NULLPTR
    assert "tensors" in (m := s.err()) and "not a live aclTensorList" in m
    assert s.phase1("aclnnCat", a, 0, ot)[0] == sc.INNER_NULLPTR   # a tensor as the list
    assert "a live aclTensor" in s.err()


def test_cat_many_tensors_and_repeatable(env):
    s = env.s
    arrays = [np.full((1, 2), i, np.int32) for i in range(150)]
    lst = env.tensor_list(tensors(env, arrays))
    ot, op = env.empty([150, 2], INT32)
    rc, ws, ex = s.phase1("aclnnCat", lst, 0, ot)
    assert rc == 0 and ws == 0
    s.ok(s.aclSetAclOpExecutorRepeatable(ex))
    env.execs.append(ex)
    s.ok(s.aclnnCat(None, 0, ex, s.stream))
    s.ok(s.aclrtSynchronizeStream(s.stream))
    assert np.array_equal(env.read(op, [150, 2], INT32), np.concatenate(arrays))
    # destroying the list destroys its tensors: the executor refers to them
    env.lists.remove(lst)
    s.ok(s.aclDestroyTensorList(lst))
    assert s.aclnnCat(None, 0, ex, s.stream) == sc.INNER_NULLPTR
    assert "tensors[0]" in (m := s.err()) and "was destroyed before this launch" in m


def test_cat_strided_inputs_and_out(env):
    rng = np.random.default_rng(11)
    base = rng.standard_normal((4, 3)).astype(np.float32)
    a, _ = env.tensor(base, shape=[3, 4], strides=[1, 3])         # base.T
    b, _ = env.tensor(np.arange(8, dtype=np.float32), shape=[3, 2], strides=[2, 1], offset=1)
    lst = env.tensor_list([a, b])
    store, op = env.empty([18], FLOAT)
    ot = env.s.tensor([3, 6], FLOAT, op, strides=[1, 3], storage=[18], fmt=ND)
    env.tensors.append(ot)
    assert env.run("aclnnCat", lst, 1, ot) == 0, env.s.err()
    bview = np.lib.stride_tricks.as_strided(np.arange(8, dtype=np.float32)[1:], (3, 2), (8, 4))
    want = np.concatenate([base.T, bview], axis=1)
    assert np.array_equal(env.read(op, [3, 6], FLOAT, strides=[1, 3]), want)


def test_cat_out_overlapping_an_input(env):
    """out over the memory of its second input (through another aclTensor): every element
    is read before any is written."""
    s = env.s
    x = np.arange(4, dtype=np.float32)
    _, xp = env.tensor(x, pad=16)                      # 8 floats of room
    y, _ = env.tensor(np.array([9, 9, 9, 9], np.float32))
    lst = env.tensor_list([y, s.tensor([4], FLOAT, xp, fmt=ND)])
    ot = s.tensor([8], FLOAT, xp, fmt=ND)
    env.tensors.append(ot)
    assert env.run("aclnnCat", lst, 0, ot) == 0, s.err()   # [y, x] written over x
    assert env.read(xp, [8], FLOAT).tolist() == [9, 9, 9, 9, 0, 1, 2, 3]


# =====================================================================================
# aclnnSplitTensor
# =====================================================================================

def split(env, x, sections, dim, out_shapes, out_dtype=None, fill=0xFF, **kw):
    xt, _ = env.tensor(x, **kw)
    outs = [env.empty(sh, out_dtype if out_dtype is not None else env_dtype(x), fill=fill) for sh in out_shapes]
    lst = env.tensor_list([h for h, _ in outs])
    return env.run("aclnnSplitTensor", xt, sections, dim, lst), [p for _, p in outs]


def env_dtype(x):
    from .op_helpers import ACL
    return ACL[np.asarray(x).dtype]


@pytest.mark.parametrize("shape,sections,dim", [((7, 4), 3, 0), ((2, 9, 3), 4, 1), ((2, 3, 5), 2, -1),
                                                ((5,), 5, 0), ((4, 2), 10, 0), ((6,), 1, 0)])
def test_split_values(env, shape, sections, dim):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    size = shape[dim]
    bounds = list(range(sections, size, sections))
    pieces = np.split(x, bounds, axis=dim)
    rc, ptrs = split(env, x, sections, dim, [p.shape for p in pieces])
    assert rc == 0, env.s.err()
    for p, ptr in zip(pieces, ptrs):
        assert np.array_equal(env.read(ptr, p.shape, FLOAT), p)


def test_split_huge_sections_is_one_piece(env):
    x = np.arange(6, dtype=np.int64).reshape(3, 2)
    rc, ptrs = split(env, x, 2**64 - 1, 0, [(3, 2)])
    assert rc == 0, env.s.err()
    assert env.read(ptrs[0], [3, 2], INT64).tolist() == x.tolist()


def test_split_extra_outputs_are_left_alone(env):
    x = np.arange(4, dtype=np.int32)
    rc, ptrs = split(env, x, 2, 0, [(2,), (2,), (2,)], fill=0x11)
    assert rc == 0, env.s.err()
    assert env.read(ptrs[2], [2], INT32).tolist() == [0x11111111] * 2
    rc, ptrs = split(env, x, 4, 0, [(4,), (9,)], fill=0x11)   # whole self into out[0]; out[1] untouched
    assert rc == 0, env.s.err()
    assert env.read(ptrs[0], [4], INT32).tolist() == [0, 1, 2, 3]
    assert env.read(ptrs[1], [9], INT32).tolist() == [0x11111111] * 9


@pytest.mark.parametrize("sdt,odt", [(FLOAT, FLOAT16), (INT32, FLOAT), (FLOAT, INT32), (BOOL, INT8), (DOUBLE, BF16)])
def test_split_casts_to_out(env, sdt, odt):
    x = np.array([-2.75, 0.5, 3.0, 70000.5], np.float64).astype(NP[sdt])
    rc, ptrs = split(env, x, 2, 0, [(2,), (2,)], out_dtype=odt)
    assert rc == 0, env.s.err()
    got = np.concatenate([env.read(p, [2], odt) for p in ptrs])
    with np.errstate(all="ignore"):  # 70000.5 overflows float16 (to inf, as the simulator's cast does)
        if np.issubdtype(NP[odt], np.integer) and not np.issubdtype(NP[sdt], np.integer) and sdt != BOOL:
            want = np.trunc(x.astype(np.float64)).astype(NP[odt])   # truncation toward zero
        else:
            want = x.astype(NP[odt])
    assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), (got, want)


def test_split_checks(env):
    s = env.s
    x = np.zeros((4, 2), np.float32)
    assert split(env, x, 2, 0, [(2, 2), (2, 2)], out_dtype=UINT16)[0] == sc.PARAM_INVALID
    assert "out[0] dtype must be ACL_DOUBLE" in s.err()
    xt, _ = env.tensor(x)
    outs = [env.empty([2, 2], FLOAT)[0], env.empty([2, 2], FLOAT16)[0]]
    assert env.run("aclnnSplitTensor", xt, 2, 0, env.tensor_list(outs)) == sc.PARAM_INVALID
    assert "out[1] dtype ACL_FLOAT16 (1) must equal out[0] dtype ACL_FLOAT (0)" in s.err()
    assert split(env, np.float32(1).reshape(()), 1, 0, [(1,)])[0] == sc.PARAM_INVALID
    assert "at least 1 dimension" in s.err()
    assert split(env, np.zeros((1,) * 9, np.float32), 1, 0, [(1,) * 9])[0] == sc.PARAM_INVALID
    for dim in (2, -3):
        assert split(env, x, 2, dim, [(2, 2), (2, 2)])[0] == sc.PARAM_INVALID
        assert "must be in [-2, 2)" in s.err()
    assert split(env, x, 0, 0, [(4, 2)])[0] == sc.PARAM_INVALID
    assert "must not be 0" in s.err()
    assert split(env, np.zeros((0, 2), np.float32), 3, 0, [(0, 2)])[0] == sc.PARAM_INVALID
    assert "must be 0 when self's size along dim is 0" in s.err()
    assert split(env, x, 1, 0, [(1, 2), (1, 2)])[0] == sc.PARAM_INVALID
    assert "out holds 2 tensors, fewer than the 4 pieces" in s.err()
    assert split(env, x, 3, 0, [(3, 2), (2, 2)])[0] == sc.PARAM_INVALID
    assert "out[1] shape must be [1, 2] (piece 1" in s.err()
    assert split(env, x, 4, 0, [(2, 4)])[0] == sc.PARAM_INVALID
    assert split(env, x, 4, 0, [])[0] == sc.PARAM_INVALID
    assert "out holds no tensor" in s.err()
    assert split(env, np.ones(2, np.complex64), 1, 0, [(1,), (1,)], out_dtype=FLOAT)[0] == sc.PARAM_INVALID
    assert "not computed by the simulator" in s.err()


def test_split_empty_self(env):
    """An empty self succeeds with nothing to run, out unchecked."""
    s = env.s
    xt, _ = env.tensor(np.zeros((0, 3), np.float32))
    lst = env.tensor_list([])
    rc, ws, ex = s.phase1("aclnnSplitTensor", xt, 0, 0, lst)
    assert rc == 0 and ws == 0
    s.ok(s.aclnnSplitTensor(None, 0, ex, s.stream))
    xt, _ = env.tensor(np.zeros((2, 0), np.float32))
    rc, ws, ex = s.phase1("aclnnSplitTensor", xt, 5, 0, lst)  # size 2 along dim: sections may be 5
    assert rc == 0
    s.ok(s.aclDestroyAclOpExecutor(ex))


def test_split_null_and_dead(env):
    s = env.s
    xt, _ = env.tensor(np.zeros(4, np.float32))
    o1, o2 = env.empty([2], FLOAT)[0], env.empty([2], FLOAT)[0]
    lst = env.tensor_list([o1, o2])
    assert s.phase1("aclnnSplitTensor", None, 2, 0, lst)[0] == sc.PARAM_NULLPTR
    assert s.err() == "aclnnSplitTensorGetWorkspaceSize: self is NULL"
    assert s.phase1("aclnnSplitTensor", xt, 2, 0, None)[0] == sc.PARAM_NULLPTR
    assert s.err() == "aclnnSplitTensorGetWorkspaceSize: out is NULL"
    lst2 = env.tensor_list([env.empty([2], FLOAT)[0], None])
    assert s.phase1("aclnnSplitTensor", xt, 2, 0, lst2)[0] == sc.PARAM_NULLPTR
    assert s.err() == "aclnnSplitTensorGetWorkspaceSize: out[1] is NULL"
    s.ok(s.aclDestroyTensor(o2))
    assert s.phase1("aclnnSplitTensor", xt, 2, 0, lst)[0] == sc.INNER_NULLPTR
    assert "out[1]" in s.err()
    env.lists.remove(lst)
    assert s.aclDestroyTensorList(lst) == sc.INNER


def test_split_pieces_written_after_self_is_read(env):
    """A piece over self's own memory: self is copied before any piece is written."""
    s = env.s
    x = np.arange(6, dtype=np.float32)
    xt, xp = env.tensor(x)
    # pieces [0:3] -> at self[3:6], [3:6] -> at self[0:3] (offset views on self's storage)
    p0 = s.tensor([3], FLOAT, xp, offset=3, storage=[6], fmt=ND)
    p1 = s.tensor([3], FLOAT, xp, storage=[6], fmt=ND)
    lst = env.tensor_list([p0, p1])
    assert env.run("aclnnSplitTensor", xt, 3, 0, lst) == 0, s.err()
    assert env.read(xp, [6], FLOAT).tolist() == [3, 4, 5, 0, 1, 2]


def test_split_strided_self(env):
    base = np.arange(12, dtype=np.int16)
    xt, _ = env.tensor(base, shape=[4, 3], strides=[1, 4])   # base.reshape(3, 4).T
    outs = [env.empty([2, 3], INT16) for _ in range(2)]
    lst = env.tensor_list([h for h, _ in outs])
    assert env.run("aclnnSplitTensor", xt, 2, 0, lst) == 0, env.s.err()
    want = base.reshape(3, 4).T
    assert env.read(outs[0][1], [2, 3], INT16).tolist() == want[:2].tolist()
    assert env.read(outs[1][1], [2, 3], INT16).tolist() == want[2:].tolist()


# =====================================================================================
# aclnnForeachMulScalarList
# =====================================================================================

def foreach(env, arrays, scalars, scalar_dtype=FLOAT, out_shapes=None, out_dtype=None, **kw):
    xs = env.tensor_list(tensors(env, arrays, **kw))
    sl = env.scalar_list([env.scalar(v, scalar_dtype if not isinstance(scalar_dtype, list) else scalar_dtype[i])
                          for i, v in enumerate(scalars)])
    shapes = [a.shape for a in arrays] if out_shapes is None else out_shapes
    from .op_helpers import ACL
    outs = [env.empty(sh, out_dtype if out_dtype is not None else ACL[arrays[min(i, len(arrays) - 1)].dtype])
            for i, sh in enumerate(shapes)]
    ys = env.tensor_list([h for h, _ in outs])
    return env.run("aclnnForeachMulScalarList", xs, sl, ys), [p for _, p in outs]


def test_foreach_float32(env):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(sh).astype(np.float32) for sh in [(2, 3), (5,), (1, 1, 4)]]
    scalars = [1.5, -0.1, 3.0]
    rc, ptrs = foreach(env, arrays, scalars)
    assert rc == 0, env.s.err()
    for a, v, p in zip(arrays, scalars, ptrs):
        assert np.array_equal(env.read(p, a.shape, FLOAT), a * np.float32(v))


def test_foreach_float16_rounds_the_scalar_first(env):
    a = np.array([1.0, 3.0, -7.5, 1000.0], np.float16)
    rc, ptrs = foreach(env, [a], [0.1])
    assert rc == 0, env.s.err()
    want = (a.astype(np.float32) * np.float32(np.float16(0.1))).astype(np.float16)
    assert env.read(ptrs[0], [4], FLOAT16).view(np.uint16).tolist() == want.view(np.uint16).tolist()
    assert want.tolist() != (a.astype(np.float32) * np.float32(0.1)).astype(np.float16).tolist()


def test_foreach_bfloat16(env):
    a = np.array([1.0, 3.0, -7.5, 1000.0], np.float32).astype(ml_dtypes.bfloat16)
    rc, ptrs = foreach(env, [a], [0.1], scalar_dtype=DOUBLE)   # a DOUBLE scalar counts as FLOAT
    assert rc == 0, env.s.err()
    want = (a.astype(np.float32) * np.float32(0.1)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(env.read(ptrs[0], [4], BF16).view(np.uint16), want.view(np.uint16))


def test_foreach_int32_truncates_the_scalar_and_wraps(env):
    a = np.array([3, -4, 2**30, 7], np.int32)
    rc, ptrs = foreach(env, [a, a], [2**33 + 3, -1], scalar_dtype=INT64)
    assert rc == 0, env.s.err()
    assert env.read(ptrs[0], [4], INT32).tolist() == (a.astype(np.int64) * 3).astype(np.int32).tolist()
    assert env.read(ptrs[1], [4], INT32).tolist() == (-a).tolist()


def test_foreach_scalar_list_dtype_is_its_first_scalars(env):
    """nnopbase converts every scalar to the first one's dtype (DOUBLE as FLOAT)."""
    a = np.array([2, 4], np.float32)
    rc, ptrs = foreach(env, [a, a, a], [0.5, 3, True], scalar_dtype=[FLOAT, INT64, BOOL])
    assert rc == 0, env.s.err()
    assert [env.read(p, [2], FLOAT).tolist() for p in ptrs] == [[1, 2], [6, 12], [2, 4]]
    i = np.array([5], np.int32)
    rc, ptrs = foreach(env, [i, i], [2, 2.9], scalar_dtype=[INT64, FLOAT])
    assert rc == 0, env.s.err()
    assert [env.read(p, [1], INT32).tolist() for p in ptrs] == [[10], [10]]


@pytest.mark.parametrize("xdt,sdt", [(FLOAT, INT64), (INT32, FLOAT), (INT32, DOUBLE), (FLOAT16, INT32),
                                     (FLOAT, FLOAT16)])
def test_foreach_scalar_dtype_must_go_with_x(env, xdt, sdt):
    rc, _ = foreach(env, [np.ones(2, NP[xdt])], [1], scalar_dtype=sdt)
    assert rc == sc.PARAM_INVALID
    assert "does not go with x dtype" in env.s.err()


def test_foreach_op_definition_checks(env):
    s = env.s
    rc, _ = foreach(env, [np.ones(2, np.float64)], [1.0])
    assert rc == sc.PARAM_INVALID and "x[0] dtype must be ACL_FLOAT16, ACL_FLOAT, ACL_BF16 or ACL_INT32" in s.err()
    rc, _ = foreach(env, [np.ones(2, np.float32)], [1.0], out_dtype=FLOAT16)
    assert rc == sc.PARAM_INVALID and "out[0] dtype ACL_FLOAT16 (1) must equal x[0] dtype ACL_FLOAT (0)" in s.err()


def test_foreach_tiling_checks(env):
    s = env.s
    a = np.ones(3, np.float32)
    rc, _ = foreach(env, [a, a], [1.0])
    assert rc == TILING_ERROR and "scalars holds 1 scalars, x 2 tensors" in s.err()
    rc, _ = foreach(env, [a, a], [1.0, 2.0], out_shapes=[(3,)], out_dtype=FLOAT)
    assert rc == TILING_ERROR and "out holds 1 tensors, x 2" in s.err()
    rc, _ = foreach(env, [a], [1.0], out_shapes=[(3,), (3,)], out_dtype=FLOAT)
    assert rc == TILING_ERROR
    nine = np.ones((1,) * 9, np.float32)
    rc, _ = foreach(env, [nine], [1.0])
    assert rc == TILING_ERROR and "x[0] has 9 dimensions" in s.err()
    rc, _ = foreach(env, [a], [1.0], out_shapes=[(2,)])
    assert rc == TILING_ERROR and "out[0] [2] has fewer elements than x[0] [3]" in s.err()
    xs = env.tensor_list([env.tensor(a)[0], env.tensor(np.ones(3, np.float16))[0]])
    sl = env.scalar_list([env.scalar(1.0, FLOAT), env.scalar(1.0, FLOAT)])
    ys = env.tensor_list([env.empty([3], FLOAT)[0], env.empty([3], FLOAT16)[0]])
    assert env.run("aclnnForeachMulScalarList", xs, sl, ys) == TILING_ERROR
    assert "out[1] dtype ACL_FLOAT16 must be that of x, ACL_FLOAT" in s.err()


def test_foreach_at_most_256_tensors(env):
    n = 257
    rc, _ = foreach(env, [np.ones(1, np.float32)] * n, [1.0] * n)
    assert rc == TILING_ERROR and "more than 256" in env.s.err()
    rc, ptrs = foreach(env, [np.full(1, i, np.float32) for i in range(256)], [2.0] * 256)
    assert rc == 0, env.s.err()
    assert env.read(ptrs[255], [1], FLOAT).tolist() == [510.0]


def test_foreach_larger_out_is_written_densely(env):
    a = np.array([[1, 2], [3, 4]], np.float32)
    rc, ptrs = foreach(env, [a], [10.0], out_shapes=[(6,)])
    assert rc == 0, env.s.err()
    got = env.read(ptrs[0], [6], FLOAT)
    assert got[:4].tolist() == [10, 20, 30, 40] and np.isnan(got[4:]).all()


def test_foreach_empty_and_simulator_only_checks(env):
    s = env.s
    xs, sl, ys = env.tensor_list([]), env.scalar_list([]), env.tensor_list([])
    assert s.phase1("aclnnForeachMulScalarList", xs, sl, ys)[0] == sc.PARAM_INVALID
    assert "x holds no tensor" in s.err()
    # an empty tensor in the list is skipped
    rc, ptrs = foreach(env, [np.ones(0, np.float32), np.array([3], np.float32)], [2.0, 2.0])
    assert rc == 0, s.err()
    assert env.read(ptrs[1], [1], FLOAT).tolist() == [6]
    # out must be contiguous
    xs = env.tensor_list([env.tensor(np.ones((2, 2), np.float32))[0]])
    sl = env.scalar_list([env.scalar(1.0, FLOAT)])
    _, op = env.empty([4], FLOAT)
    yt = s.tensor([2, 2], FLOAT, op, strides=[1, 2], storage=[4], fmt=ND)
    ys = env.tensor_list([yt])
    assert env.run("aclnnForeachMulScalarList", xs, sl, ys) == sc.PARAM_INVALID
    assert "must be contiguous" in s.err()
    # a double after an int64 first scalar, a complex scalar
    rc, _ = foreach(env, [np.ones(1, np.int32)] * 2, [1, 2.0], scalar_dtype=[INT64, DOUBLE])
    assert rc == sc.PARAM_INVALID and "ACL_DOUBLE after an ACL_INT64 first scalar" in s.err()
    rc, _ = foreach(env, [np.ones(1, np.float32)] * 2, [1, 1j], scalar_dtype=[FLOAT, COMPLEX64])
    assert rc == sc.PARAM_INVALID and "scalars[1] dtype ACL_COMPLEX64" in s.err()


def test_foreach_null_and_dead(env):
    s = env.s
    a = env.tensor(np.ones(1, np.float32))[0]
    xs = env.tensor_list([a])
    sl = env.scalar_list([env.scalar(1.0, FLOAT)])
    ys = env.tensor_list([env.empty([1], FLOAT)[0]])
    for i, name in enumerate(("x", "scalars", "out")):
        args = [xs, sl, ys]
        args[i] = None
        assert s.phase1("aclnnForeachMulScalarList", *args)[0] == sc.PARAM_NULLPTR
        assert s.err() == f"aclnnForeachMulScalarListGetWorkspaceSize: {name} is NULL"
    for i, name in enumerate(("x", "scalars", "out")):
        lists = [env.tensor_list([env.tensor(np.ones(1, np.float32))[0], None]),
                 env.scalar_list([env.scalar(1.0, FLOAT), None]),
                 env.tensor_list([env.empty([1], FLOAT)[0], None])]
        args = [xs, sl, ys]
        args[i] = lists[i]
        assert s.phase1("aclnnForeachMulScalarList", *args)[0] == sc.PARAM_NULLPTR
        assert s.err() == f"aclnnForeachMulScalarListGetWorkspaceSize: {name}[1] is NULL"
    assert s.phase1("aclnnForeachMulScalarList", xs, xs, ys)[0] == sc.INNER_NULLPTR   # a tensor list as scalars
    assert "not a live aclScalarList: it is a live aclTensorList" in s.err()
    s.ok(s.aclDestroyTensor(a))
    assert s.phase1("aclnnForeachMulScalarList", xs, sl, ys)[0] == sc.INNER_NULLPTR
    assert "x[0]" in s.err()
    env.lists.remove(xs)
    assert s.aclDestroyTensorList(xs) == sc.INNER


def test_foreach_scalar_destroyed_behind_its_list(env):
    s = env.s
    xs = env.tensor_list([env.tensor(np.ones(1, np.float32))[0]])
    dead = env.scalar(2.0, FLOAT)
    sl = env.scalar_list([dead])
    ys = env.tensor_list([env.empty([1], FLOAT)[0]])
    s.ok(s.aclDestroyScalar(dead))
    assert s.phase1("aclnnForeachMulScalarList", xs, sl, ys)[0] == sc.INNER_NULLPTR
    assert "scalars[0]" in (m := s.err()) and "not a live aclScalar" in m and "already destroyed" in m
    env.scalar_lists.remove(sl)
    assert s.aclDestroyScalarList(sl) == sc.INNER
    assert "element 0 (aclScalar" in s.err()


def test_foreach_in_place_through_separate_handles(env):
    """out[i] over x[i]'s memory (other aclTensors: a tensor must not sit in two lists)."""
    s = env.s
    x = np.array([1, 2, 3], np.float32)
    xt, xp = env.tensor(x)
    xs = env.tensor_list([xt])
    ys = env.tensor_list([s.tensor([3], FLOAT, xp, fmt=ND)])
    sl = env.scalar_list([env.scalar(4.0, FLOAT)])
    assert env.run("aclnnForeachMulScalarList", xs, sl, ys) == 0, s.err()
    assert env.read(xp, [3], FLOAT).tolist() == [4, 8, 12]


def test_foreach_strided_x(env):
    base = np.arange(6, dtype=np.float32)
    xs = env.tensor_list([env.tensor(base, shape=[3, 2], strides=[1, 3])[0]])
    sl = env.scalar_list([env.scalar(2.0, FLOAT)])
    yt, yp = env.empty([3, 2], FLOAT)
    ys = env.tensor_list([yt])
    assert env.run("aclnnForeachMulScalarList", xs, sl, ys) == 0, env.s.err()
    assert env.read(yp, [3, 2], FLOAT).tolist() == (base.reshape(2, 3).T * 2).tolist()


# =====================================================================================
# both layouts
# =====================================================================================

def test_list_operators_in_the_split_layout(sim_builds, run_script):
    """aclnnCat and aclnnSplitTensor in libopapi_math.so, aclnnForeachMulScalarList in
    libopapi_nn.so, each run from there; counters back to zero."""
    run_script("""
        s = sc.Sim(os.environ["SIMDIR"])  # every libopapi_*.so
        homes = {name: [p.name for p, lib in zip(sorted(s.libdir.glob("libopapi_*.so")), s.op_libs)
                        if hasattr(lib, name)] for name in ("aclnnCat", "aclnnSplitTensor", "aclnnForeachMulScalarList")}
        assert homes == {"aclnnCat": ["libopapi_math.so"], "aclnnSplitTensor": ["libopapi_math.so"],
                         "aclnnForeachMulScalarList": ["libopapi_nn.so"]}, homes
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        def vp(hs): return (c_void_p * len(hs))(*hs)
        a = np.array([1, 2], np.float32); b = np.array([3], np.float32)
        ap, bp, op = s.upload(a), s.upload(b), s.malloc(12)
        lst = s.aclCreateTensorList(vp([s.tensor([2], 0, ap), s.tensor([1], 0, bp)]), 2)
        ot = s.tensor([3], 0, op)
        rc, ws, ex = s.phase1("aclnnCat", lst, 0, ot); s.ok(rc)
        s.ok(s.aclnnCat(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(op, 3, np.float32).tolist() == [1, 2, 3]
        p1, p2 = s.malloc(8), s.malloc(4)
        outs = s.aclCreateTensorList(vp([s.tensor([2], 0, p1), s.tensor([1], 0, p2)]), 2)
        rc, ws, ex = s.phase1("aclnnSplitTensor", ot, 2, 0, outs); s.ok(rc)
        s.ok(s.aclnnSplitTensor(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(p1, 2, np.float32).tolist() == [1, 2] and s.download(p2, 1, np.float32).tolist() == [3]
        v = np.array([2.0], np.float32)
        sl = s.aclCreateScalarList(vp([s.aclCreateScalar(v.ctypes.data, 0), s.aclCreateScalar(v.ctypes.data, 0)]), 2)
        y1, y2 = s.malloc(8), s.malloc(4)
        ys = s.aclCreateTensorList(vp([s.tensor([2], 0, y1), s.tensor([1], 0, y2)]), 2)
        rc, ws, ex = s.phase1("aclnnForeachMulScalarList", outs, sl, ys); s.ok(rc)
        s.ok(s.aclnnForeachMulScalarList(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(y1, 2, np.float32).tolist() == [2, 4] and s.download(y2, 1, np.float32).tolist() == [6]
        for l in (lst, outs, ys): s.ok(s.aclDestroyTensorList(l))
        s.ok(s.aclDestroyScalarList(sl)); s.ok(s.aclDestroyTensor(ot))
        for p in (ap, bp, op, p1, p2, y1, y2): s.free(p)
        assert all(v == 0 for v in s.counts().values()), s.counts()
    """, env={"SIMDIR": str(sim_builds["split"])})
