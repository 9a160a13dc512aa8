"""aclnnNonzero, the simulator's operator with a data-dependent output: out is allocated at
the largest size, and after the run aclGetViewShape(out) reports the real (count, rank),
whose indices fill out from its start; its phase-1 checks."""
from __future__ import annotations

import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import BF16, BOOL, DOUBLE, FLOAT, INT32, INT64, NP, UINT16, Env


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


@pytest.mark.parametrize("shape,dtype", [((2, 3), FLOAT), ((4,), INT32), ((2, 2, 3), BOOL), ((3, 1), DOUBLE),
                                         ((2, 5), BF16)])
def test_real_count_reported_through_the_view_shape(env, shape, dtype):
    rng = np.random.default_rng(len(shape))
    x = (rng.integers(0, 3, shape) * (rng.random(shape) > 0.4)).astype(NP[dtype])
    xt, _ = env.tensor(x)
    n, r = x.size, x.ndim
    ot, op = env.empty((n, r), INT64, fill=0x7F)
    assert env.run("aclnnNonzero", xt, ot) == 0, env.s.err()
    want = np.argwhere(x != 0)
    assert env.s.get_dims(env.s.aclGetViewShape, ot) == [len(want), r]
    assert env.s.get_dims(env.s.aclGetViewStrides, ot) == [r, 1]
    got = env.read(op, (n, r), INT64)
    assert np.array_equal(got[:len(want)], want)
    assert (got[len(want):].view(np.uint8) == 0x7F).all()  # past the real rows: untouched


def test_all_zero_reports_zero_rows(env):
    xt, _ = env.tensor(np.zeros((2, 2), np.float32))
    ot, _ = env.empty((4, 2), INT64)
    assert env.run("aclnnNonzero", xt, ot) == 0
    assert env.s.get_dims(env.s.aclGetViewShape, ot) == [0, 2]


@pytest.mark.parametrize("xdt,odt,oshape,words", [
    (UINT16, INT64, (4, 2), "self dtype"), (FLOAT, INT32, (4, 2), "out dtype"),
    (FLOAT, INT64, (3, 2), "out shape"), (FLOAT, INT64, (4, 3), "out shape"), (FLOAT, INT64, (8,), "out shape")])
def test_checks(env, xdt, odt, oshape, words):
    xt, _ = env.tensor(np.ones((2, 2), NP[xdt]))
    ot, _ = env.empty(oshape, odt)
    assert env.run("aclnnNonzero", xt, ot) == sc.PARAM_INVALID
    assert words in env.s.err()


def test_null(env):
    ot, _ = env.empty((4, 2), INT64)
    assert env.run("aclnnNonzero", None, ot) == sc.PARAM_NULLPTR
