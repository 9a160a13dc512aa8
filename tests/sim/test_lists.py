"""nnopbase's aclTensorList and aclScalarList, and aclCreateScalar over every dtype: the
handles, their NULL rules (hicann/opbase src/nnopbase/common/api/acl_op_api.cpp), the
simulator's strictness about their items, and the live counters."""
from __future__ import annotations

import ctypes
from ctypes import byref, c_uint64, c_void_p

import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import (BF16, BOOL, COMPLEX32, COMPLEX64, COMPLEX128, DOUBLE, FLOAT, FLOAT8_E4M3FN, FLOAT8_E5M2,
                         FLOAT8_E8M0, FLOAT16, HIFLOAT8, INT4, INT8, INT16, INT32, INT64, STRING, UINT1, UINT8,
                         UINT16, UINT32, UINT64, Env)


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


def _create(s, kind, handles, size=None):
    """aclCreateTensorList / aclCreateScalarList of raw handles (None: NULL item)."""
    fn = s.aclCreateTensorList if kind == "tensor" else s.aclCreateScalarList
    arr = (c_void_p * max(len(handles), 1))(*handles)
    return fn(arr, len(handles) if size is None else size)


def _size(s, kind, h):
    n = c_uint64(777)
    fn = s.aclGetTensorListSize if kind == "tensor" else s.aclGetScalarListSize
    return fn(h, byref(n)), n.value


def _items(env, kind, n):
    """n fresh tensors or scalars (tracked by env until a list takes them)."""
    if kind == "tensor":
        return [env.tensor(np.full(4, i, np.float32))[0] for i in range(n)]
    return [env.scalar(float(i), FLOAT) for i in range(n)]


KINDS = ["tensor", "scalar"]
HANDLE_COUNTERS = ("tensors", "scalars", "tensor_lists", "scalar_lists")


def handles(s):
    return {k: s.count(k) for k in HANDLE_COUNTERS}

COUNTER = {"tensor": "tensor_lists", "scalar": "scalar_lists"}
ITEM_COUNTER = {"tensor": "tensors", "scalar": "scalars"}
DESTROY = {"tensor": "aclDestroyTensorList", "scalar": "aclDestroyScalarList"}
TYPE = {"tensor": "aclTensorList", "scalar": "aclScalarList"}
ITEM_TYPE = {"tensor": "aclTensor", "scalar": "aclScalar"}


@pytest.mark.parametrize("kind", KINDS)
def test_list_lifecycle_and_counters(env, kind):
    s = env.s
    before = s.counts()
    items = _items(env, kind, 3)
    h = _create(s, kind, items)
    assert h, s.err()
    assert s.count(COUNTER[kind]) == before[COUNTER[kind]] + 1
    assert s.count(ITEM_COUNTER[kind]) == before[ITEM_COUNTER[kind]] + 3  # the items stay live, counted
    assert _size(s, kind, h) == (0, 3)
    assert getattr(s, DESTROY[kind])(h) == 0
    # the list destroyed its items with it
    assert s.count(COUNTER[kind]) == before[COUNTER[kind]]
    assert s.count(ITEM_COUNTER[kind]) == before[ITEM_COUNTER[kind]]
    for item in items:
        (env.tensors if kind == "tensor" else env.scalars).remove(item)
        destroy = s.aclDestroyTensor if kind == "tensor" else s.aclDestroyScalar
        assert destroy(item) == sc.INNER                # already gone
        assert "already destroyed" in s.err()


@pytest.mark.parametrize("kind", KINDS)
def test_empty_lists(env, kind):
    s = env.s
    for value in (None, (c_void_p * 1)()):
        fn = s.aclCreateTensorList if kind == "tensor" else s.aclCreateScalarList
        h = fn(value, 0)
        assert h, s.err()
        assert _size(s, kind, h) == (0, 0)
        assert getattr(s, DESTROY[kind])(h) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_null_value_with_a_size_is_refused(env, kind):
    s = env.s
    fn = s.aclCreateTensorList if kind == "tensor" else s.aclCreateScalarList
    assert fn(None, 2) is None
    assert "value is NULL but size is 2" in s.err()


@pytest.mark.parametrize("kind", KINDS)
def test_null_items_are_kept(env, kind):
    s = env.s
    items = _items(env, kind, 2)
    h = env.tensor_list([items[0], None, items[1]]) if kind == "tensor" else \
        env.scalar_list([items[0], None, items[1]])
    assert _size(s, kind, h) == (0, 3)


@pytest.mark.parametrize("kind", KINDS)
def test_items_must_be_live_handles_of_the_element_type(env, kind):
    s = env.s
    dead = _items(env, kind, 1)[0]
    if kind == "tensor":
        env.tensors.remove(dead)
        s.ok(s.aclDestroyTensor(dead))
        other = env.scalar(1.0, FLOAT)
    else:
        env.scalars.remove(dead)
        s.ok(s.aclDestroyScalar(dead))
        other = env.tensor(np.zeros(2, np.float32))[0]
    live = _items(env, kind, 1)[0]
    dev = env.s.malloc(64)
    env.ptrs.append(dev)
    host = np.zeros(4, np.int64)
    other_type = "aclScalar" if kind == "tensor" else "aclTensor"
    for bad, why in [(dead, "a handle that was already destroyed"), (other, f"a live {other_type}"),
                     (dev, "a device memory address"), (host.ctypes.data, "not a handle created by this library")]:
        assert _create(s, kind, [live, bad]) is None
        msg = s.err()
        assert "value[1]" in msg and f"is not a live {ITEM_TYPE[kind]}" in msg and why in msg, msg
    # a list is not an element either
    lst = env.tensor_list([]) if kind == "tensor" else env.scalar_list([])
    assert _create(s, kind, [lst]) is None
    assert f"a live {TYPE[kind]}" in s.err()


@pytest.mark.parametrize("kind", KINDS)
def test_an_item_listed_twice_is_refused(env, kind):
    s = env.s
    a, b = _items(env, kind, 2)
    assert _create(s, kind, [a, b, a]) is None
    msg = s.err()
    assert "value[0] and value[2] are the same" in msg and "destroyed twice" in msg, msg
    h = (env.tensor_list if kind == "tensor" else env.scalar_list)([None, a, None])  # NULL twice is fine
    assert _size(s, kind, h) == (0, 3)


@pytest.mark.parametrize("kind", KINDS)
def test_destroy_null_stale_and_wrong_kind(env, kind):
    s = env.s
    destroy = getattr(s, DESTROY[kind])
    assert destroy(None) == 0
    h = _create(s, kind, [])
    assert destroy(h) == 0
    assert destroy(h) == sc.INNER
    msg = s.err()
    assert f"is not a live {TYPE[kind]}" in msg and "already destroyed" in msg, msg
    t = env.tensor(np.zeros(2, np.float32))[0]
    assert destroy(t) == sc.INNER
    assert "a live aclTensor" in s.err()
    other = _create(s, "scalar" if kind == "tensor" else "tensor", [])
    assert destroy(other) == sc.INNER
    getattr(s, DESTROY["scalar" if kind == "tensor" else "tensor"])(other)


@pytest.mark.parametrize("kind", KINDS)
def test_destroying_an_item_before_its_list(env, kind):
    """The list destroys its items; one the caller destroyed already would be freed twice by
    CANN: 561000 naming it, and the list and its other items are destroyed all the same."""
    s = env.s
    before = handles(s)
    a, b, c = _items(env, kind, 3)
    h = _create(s, kind, [a, b, c])
    (env.tensors if kind == "tensor" else env.scalars).clear()
    s.ok((s.aclDestroyTensor if kind == "tensor" else s.aclDestroyScalar)(b))
    assert getattr(s, DESTROY[kind])(h) == sc.INNER
    msg = s.err()
    assert f"element 1 ({ITEM_TYPE[kind]}" in msg and "frees it twice" in msg, msg
    assert handles(s) == before


@pytest.mark.parametrize("kind", KINDS)
def test_an_item_in_two_lists(env, kind):
    s = env.s
    before = handles(s)
    a, b = _items(env, kind, 2)
    (env.tensors if kind == "tensor" else env.scalars).clear()
    first, second = _create(s, kind, [a]), _create(s, kind, [a, b])
    assert getattr(s, DESTROY[kind])(first) == 0
    assert getattr(s, DESTROY[kind])(second) == sc.INNER
    assert "element 0" in s.err()
    assert handles(s) == before


@pytest.mark.parametrize("kind", KINDS)
def test_get_size_null_and_stale(env, kind):
    s = env.s
    fn = s.aclGetTensorListSize if kind == "tensor" else s.aclGetScalarListSize
    h = _create(s, kind, [])
    n = c_uint64()
    assert fn(None, byref(n)) == sc.PARAM_NULLPTR
    assert "is NULL" in s.err()
    assert fn(h, None) == sc.PARAM_NULLPTR
    assert "size is NULL" in s.err()
    getattr(s, DESTROY[kind])(h)
    assert fn(h, byref(n)) == sc.INNER_NULLPTR
    assert f"not a live {TYPE[kind]}" in s.err()
    t = env.tensor(np.zeros(1, np.float32))[0]
    assert fn(t, byref(n)) == sc.INNER_NULLPTR


def test_list_handles_are_opaque_and_described(env):
    """A list handle passed where a tensor is expected is named for what it is."""
    s = env.s
    lst = env.tensor_list([])
    assert s.aclDestroyTensor(lst) == sc.INNER
    assert "a live aclTensorList" in s.err()
    rc = s.aclGetViewShape(lst, byref(ctypes.POINTER(ctypes.c_int64)()), byref(c_uint64()))
    assert rc == sc.INNER_NULLPTR and "a live aclTensorList" in s.err()


def test_many_items(env):
    s = env.s
    items = [env.tensor(np.zeros(1, np.float32))[0] for _ in range(300)]
    h = env.tensor_list(items)
    assert _size(s, "tensor", h) == (0, 300)


# every dtype aclCreateScalar takes (nnopbase's aclScalar constructor), with a value of it
SCALAR_DTYPES = {FLOAT: np.float32(1.5), FLOAT16: np.float16(1.5), INT8: np.int8(-3), INT32: np.int32(-7),
                 UINT8: np.uint8(200), INT16: np.int16(-300), UINT16: np.uint16(60000), UINT32: np.uint32(4e9),
                 INT64: np.int64(-2**40), UINT64: np.uint64(2**63), DOUBLE: np.float64(0.1), BOOL: np.bool_(True),
                 COMPLEX64: np.complex64(1 + 2j), COMPLEX128: np.complex128(3 - 4j), BF16: np.uint16(0x3FC0),
                 HIFLOAT8: np.uint8(1), FLOAT8_E5M2: np.uint8(1), FLOAT8_E4M3FN: np.uint8(1),
                 FLOAT8_E8M0: np.uint8(1)}


@pytest.mark.parametrize("dtype", sorted(SCALAR_DTYPES))
def test_create_scalar_every_dtype(env, dtype):
    s = env.s
    buf = np.array([SCALAR_DTYPES[dtype]])
    h = s.aclCreateScalar(buf.ctypes.data, dtype)
    assert h, s.err()
    assert s.aclDestroyScalar(h) == 0


@pytest.mark.parametrize("dtype", [COMPLEX32, STRING, INT4, UINT1, -1, 5, 999])
def test_create_scalar_refuses(env, dtype):
    s = env.s
    buf = np.zeros(4, np.uint32)
    assert s.aclCreateScalar(buf.ctypes.data, dtype) is None
    assert "is not supported" in s.err()


def test_create_scalar_null_value(env):
    assert env.s.aclCreateScalar(None, FLOAT) is None
    assert "value is NULL" in env.s.err()


def test_scalar_value_is_copied(env):
    """The scalar keeps its value; the caller's buffer may change or go away (checked
    through aclnnAdd, where it is alpha)."""
    s = env.s
    buf = np.array([3.0], np.float32)
    alpha = s.aclCreateScalar(buf.ctypes.data, FLOAT)
    env.scalars.append(alpha)
    buf[0] = 100.0
    x, _ = env.tensor(np.ones(2, np.float32))
    y, _ = env.tensor(np.ones(2, np.float32))
    out, op = env.empty([2], FLOAT)
    assert env.run("aclnnAdd", x, y, alpha, out) == 0
    assert env.read(op, [2], FLOAT).tolist() == [4.0, 4.0]


def test_counters_start_at_zero_in_a_fresh_process(run_script, sim_builds):
    run_script("""
        s = sc.Sim(os.environ["SIMDIR"])
        assert s.count("tensor_lists") == 0 and s.count("scalar_lists") == 0
        assert s.count("no_such_kind") == -1
    """, env={"SIMDIR": str(sim_builds["cann8"])})
