"""aclnnGroupNormSwish and aclnnGroupNormSwishGrad in the simulator, called as C does: the
generated APIs' NULL checks over every tensor, outputs included and before any other
check, dataFormatOptional ignored, the official forward example, and the grad's
workspace. The numerics against the float64 formulas are in tests/test_group_norm.py.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from . import sim_ctypes as sc
from .expected import native_build

F32, ND = sc.ACL_FLOAT, sc.FMT_ND
FWD, GRAD = "aclnnGroupNormSwish", "aclnnGroupNormSwishGrad"


def _t(res, values, shape=None):
    values = np.asarray(values, np.float32)
    shape = list(values.shape if shape is None else shape)
    return res.tensor(shape, F32, res.dev(values) if values.size else res.dev(nbytes=4 * int(np.prod(shape))),
                      fmt=ND)


def test_every_tensor_is_checked_for_null_first(rt, res):
    x, gamma, beta = _t(res, np.ones((2, 3, 4))), _t(res, np.ones(3)), _t(res, np.ones(3))
    y, mean = _t(res, [], [2, 3, 4]), _t(res, [], [2, 1])
    dead = rt.tensor([1], F32, None, fmt=ND)
    rt.ok(rt.aclDestroyTensor(dead))
    # rstdOut NULL beats a destroyed x: NULLs first, outputs included
    assert rt.phase1(FWD, dead, gamma, beta, 1, None, 1e-5, True, 1.0, y, mean, None)[0] == sc.PARAM_NULLPTR
    assert rt.err().endswith("rstdOut is NULL")
    # the grad's outputs are required even when their flag is false
    args = [x, mean, mean, x, gamma, beta, 1, None, 1.0, False, False, y, gamma]
    assert rt.phase1(GRAD, *args, None)[0] == sc.PARAM_NULLPTR
    assert rt.err().endswith("dbetaOut is NULL")


def test_the_official_forward_example_whatever_the_data_format(rt, res):
    """x = 1..24 as (2, 3, 4), gamma = beta = 2, one group, eps 1e-5, swish scale 1: mean
    per image 6.5 and 18.5, rstd 1/sqrt(143/12 + 1e-5), y = z*sigmoid(z) for
    z = (x - mean)*rstd*2 + 2; the same bytes with any dataFormatOptional."""
    x = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    results = []
    for data_format in (None, b"NCHW", b"anything at all"):
        yp, mp, rp = res.dev(nbytes=96), res.dev(nbytes=8), res.dev(nbytes=8)
        outs = [res.tensor(s, F32, p, fmt=ND) for s, p in (([2, 3, 4], yp), ([2, 1], mp), ([2, 1], rp))]
        rc, ws, ex = rt.phase1(FWD, _t(res, x), _t(res, [2, 2, 2]), _t(res, [2, 2, 2]), 1, data_format,
                               1e-5, True, 1.0, *outs)
        assert (rc, ws) == (0, 0), rt.err()
        rt.ok(rt.aclnnGroupNormSwish(None, 0, ex, rt.stream))
        rt.ok(rt.aclrtSynchronizeStream(rt.stream))
        results.append([rt.download(p, n, np.float32) for p, n in ((yp, 24), (mp, 2), (rp, 2))])
    y, mean, rstd = results[0]
    assert mean.tolist() == [6.5, 18.5]
    want_rstd = 1 / np.sqrt(143 / 12 + 1e-5)
    np.testing.assert_allclose(rstd, [want_rstd, want_rstd], rtol=1e-6)
    z = (x.reshape(2, 12) - mean[:, None].astype(np.float64)) * want_rstd * 2 + 2
    np.testing.assert_allclose(y, (z / (1 + np.exp(-z))).reshape(-1), rtol=1e-5, atol=1e-6)
    for other in results[1:]:
        for a, b in zip(other, results[0]):
            assert a.tobytes() == b.tobytes()


def test_the_grad_workspace_is_its_per_channel_sums(rt, res):
    """Contiguous inputs need no copies: the workspace is N*C*2 fp64 sums (the grad
    computes in float64)."""
    x = _t(res, np.arange(24).reshape(2, 3, 4))
    stats, vec = _t(res, [[1.0], [2.0]]), _t(res, np.ones(3))
    outs = [_t(res, [], [2, 3, 4]), _t(res, [], [3]), _t(res, [], [3])]
    rc, ws, ex = rt.phase1(GRAD, x, stats, stats, x, vec, vec, 1, None, 1.0, True, True, *outs)
    assert (rc, ws) == (0, 2 * 3 * 2 * 8), rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


GRAD_SCRIPT = """
    s = sc.Sim(os.environ["SIMDIR"])
    s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
    st = c_void_p(); s.ok(s.aclrtCreateStream(byref(st))); st = st.value
    rng = np.random.default_rng(5)
    dy, x = rng.uniform(-3, 3, (2, 4, 3)).astype(np.float32), rng.uniform(-3, 3, (2, 4, 3)).astype(np.float32)
    stats, vec = rng.uniform(0.5, 2, (2, 2)).astype(np.float32), rng.uniform(-2, 2, 4).astype(np.float32)
    T = lambda a: s.tensor(list(a.shape), sc.ACL_FLOAT, s.upload(a), fmt=sc.FMT_ND)
    outs = [s.malloc(96), s.malloc(16), s.malloc(16)]
    O = [s.tensor(sh, sc.ACL_FLOAT, p, fmt=sc.FMT_ND) for sh, p in zip(([2, 4, 3], [4], [4]), outs)]
    rc, ws, ex = s.phase1("aclnnGroupNormSwishGrad", T(dy), T(stats), T(stats), T(x), T(vec), T(-vec), 2, None,
                          1.7, True, True, *O)
    assert rc == 0, s.err()
    s.ok(s.aclnnGroupNormSwishGrad(s.malloc(ws) if ws else None, ws, ex, st))
    s.ok(s.aclrtSynchronizeStream(st))
    print(np.concatenate([s.download(p, n, np.float32) for p, n in zip(outs, (24, 4, 4))]).tolist())
"""


def _grad_float64(k):
    """The grad of GRAD_SCRIPT's call in float64, with the second term's scale k."""
    rng = np.random.default_rng(5)
    dy, x = rng.uniform(-3, 3, (2, 4, 3)).astype(np.float32), rng.uniform(-3, 3, (2, 4, 3)).astype(np.float32)
    stats, vec = rng.uniform(0.5, 2, (2, 2)).astype(np.float32), rng.uniform(-2, 2, 4).astype(np.float32)
    s = float(np.float32(1.7))
    dy, x, stats, gamma = (v.astype(np.float64) for v in (dy, x, stats, vec))
    mu = r = np.repeat(stats, 2, axis=1)[..., None]
    xh = (x - mu) * r
    z = xh * gamma[:, None] - gamma[:, None]        # beta = -gamma
    sig = 1 / (1 + np.exp(-s * z))
    gz = dy * sig * (1 + k(s) * z * (1 - sig))
    c1 = np.repeat((gamma * gz.sum(-1)).reshape(2, 2, 2).sum(-1) / 6, 2, axis=1)[..., None]
    c2 = np.repeat((gamma * (gz * xh).sum(-1)).reshape(2, 2, 2).sum(-1) / 6, 2, axis=1)[..., None]
    dx = r * (gamma[:, None] * gz - xh * c2 - c1)
    return np.concatenate([dx.ravel(), (gz * xh).sum(axis=(0, 2)), gz.sum(axis=(0, 2))])


@pytest.mark.parametrize("version", sorted(native_build.PROFILES))
def test_the_grad_computes_the_swish_derivative_of_its_release(profile_builds, run_script, version):
    """8.1.RC1's kernel leaves swishScale out of the second term of the swish derivative,
    sig * (1 + z (1 - sig)); from 9.1.0 on it is sig * (1 + s z (1 - sig))."""
    got = np.array(json.loads(run_script(GRAD_SCRIPT, env={"SIMDIR": str(profile_builds[version])})))
    old = version == "8.1.RC1"
    want, other = _grad_float64(lambda s: 1.0), _grad_float64(lambda s: s)
    if not old:
        want, other = other, want
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert np.abs(want - other).max() > 1e-2  # the formulas differ here
