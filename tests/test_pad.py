"""ReplicationPad2d tests that do not fit the op_db tables: the adjoint identity in
complex128 and with cropping/oversized pads, and a scatter-add written here. The
simulator's C-only checks (formats, the op_api's NULL order, int64 overflow, empty
tensors with no data, strided outputs) are in tests/sim/test_pad.py."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape,padding", [((2, 3, 5, 4), [2, 3, 1, 4]), ((3, 1, 6), [9, 0, 0, 7]),
                                           ((1, 2, 4, 6), [-2, 1, 3, -1]), ((2, 1, 1, 1), [4, 4, 4, 4])])
def test_adjoint_identity(dtype, shape, padding, backend):
    """<pad(x), g> == <x, pad_backward(g)>: the backward is the forward's transpose, a real
    matrix, so the identity holds for the complex inner product too."""
    rng = np.random.default_rng(7)

    def rand(s):
        v = rng.standard_normal(s)
        return (v + 1j * rng.standard_normal(s) if np.dtype(dtype).kind == "c" else v).astype(dtype)

    x = rand(shape)
    y = aa.replication_pad2d(x, padding)
    g = rand(y.shape)
    gx = aa.replication_pad2d_backward(g, x, padding)
    lhs, rhs = np.vdot(g, y), np.vdot(gx, x)
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)), (lhs, rhs)


def test_backward_matches_a_scatter_add_written_here(backend):
    """Independent of both implementations: np.add.at over the forward's index map."""
    rng = np.random.default_rng(11)
    for shape, (left, right, top, bottom) in [((2, 3, 4, 5), (2, 1, 0, 3)), ((1, 1, 3), (-1, 4, 2, -2))]:
        h, w = shape[-2:]
        x = rng.standard_normal(shape)
        g = rng.standard_normal(shape[:-2] + (h + top + bottom, w + left + right))
        rows = np.clip(np.arange(g.shape[-2]) - top, 0, h - 1)
        cols = np.clip(np.arange(g.shape[-1]) - left, 0, w - 1)
        expected = np.zeros(shape)
        flat = (rows[:, None] * w + cols[None, :]).ravel()
        for lead in np.ndindex(shape[:-2]):
            np.add.at(expected[lead].reshape(-1), flat, g[lead].ravel())
        gx = aa.replication_pad2d_backward(g, x, [left, right, top, bottom])
        np.testing.assert_allclose(gx, expected, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(aa.replication_pad2d(x, [left, right, top, bottom]),
                                      x[..., rows[:, None], cols[None, :]])


# ---- every documented limit, at the limit and one past it (issue 36) ---------------------------
# The limits are read from the descriptions' own words (what a user reads in the docs), so a
# check that drifted from its sentence fails here, whichever of the two moved.

import re  # noqa: E402

from ascend_aclnn.ops import REGISTRY  # noqa: E402
from ascend_aclnn.tensors import bfloat16  # noqa: E402

FWD, BWD = REGISTRY["replication_pad2d"], REGISTRY["replication_pad2d_backward"]


def _documented_bf16_limit() -> int:
    found = re.findall(r"every pad <= (\d+)", BWD.notes)
    assert len(found) == 1, BWD.notes
    return int(found[0])


def _documented_ranks(spec) -> list[int]:
    """The ranks the input's description names: '(N, C, H, W) or (C, H, W)' -> [4, 3]."""
    text = next(p for p in spec.params if p.name == "input").doc
    ranks = [len(t.split(",")) for t in re.findall(r"\(([A-Z](?:, [A-Z])*)\)", text)]
    assert ranks, text
    return ranks


def _documented_pad_count() -> int:
    """'[left, right, top, bottom]' -> 4."""
    doc = next(p for p in FWD.params if p.name == "padding").doc
    return len(re.match(r"\[([^\]]*)\]", doc).group(1).split(","))


def _backward(padding, dtype, shape=(1, 2, 3, 4)):
    x = np.ones(shape, dtype)
    h, w = shape[-2:]
    g = np.ones(shape[:-2] + (h + padding[2] + padding[3], w + padding[0] + padding[1]), dtype)
    return aa.replication_pad2d_backward(g, x, padding)


@pytest.mark.parametrize("where", range(4))
def test_bfloat16_backward_pads_at_the_limit_and_one_past(backend, where):
    """'bfloat16 requires pads >= 0 and, when top or bottom is non-zero, every pad <= 7':
    each pad at the limit (with H padded) is accepted and sums right; one past is refused
    (161002, naming padding); without H padding a pad past it is accepted; -1 is refused."""
    limit = _documented_bf16_limit()
    padding = [1, 1, 1, 1]
    padding[where] = limit
    got = _backward(padding, bfloat16)
    want = _backward(padding, np.float32)  # the sum of ones: exact in bfloat16 too
    np.testing.assert_array_equal(got.astype(np.float32), want)
    padding[where] = limit + 1
    with pytest.raises(aa.AclnnParamInvalidError, match=rf"padding: expected for bfloat16, .* <= {limit}, got") as e:
        _backward(padding, bfloat16)
    assert e.value.status == 161002
    _backward(padding, np.float32)                    # the limit is bfloat16's alone
    if where < 2:                                     # W pads only: no limit
        _backward([limit + 1 if i == where else 0 for i in range(4)], bfloat16)
    padding[where] = -1
    with pytest.raises(aa.AclnnParamInvalidError, match="pads >= 0"):
        _backward(padding, bfloat16)


@pytest.mark.simulator
def test_the_simulators_bfloat16_limit_is_the_documented_one(npu):
    """The C side on its own (aa.aclnn: no Python checks): accepts the limit, refuses one past."""
    limit = _documented_bf16_limit()
    x = np.ones((1, 2, 3, 4), bfloat16)
    for pad, ok in ((limit, True), (limit + 1, False)):
        padding = [pad, 0, 1, 0]
        g = np.ones((1, 2, 4, 4 + pad), bfloat16)
        out = np.zeros_like(x)
        if ok:
            aa.aclnn.ReplicationPad2dBackward(g, x, padding, out)
            np.testing.assert_array_equal(out.astype(np.float32), _backward(padding, np.float32))
        else:
            with pytest.raises(aa.AclnnParamInvalidError):
                aa.aclnn.ReplicationPad2dBackward(g, x, padding, out)


@pytest.mark.parametrize("spec", [FWD, BWD], ids=lambda s: s.name)
def test_ranks_at_the_limits_and_one_past(backend, spec):
    ranks = _documented_ranks(spec)
    for rank in sorted(set(ranks) | {min(ranks) - 1, max(ranks) + 1}):
        shape = (2, 3, 4, 5, 6)[-rank:]
        x = np.ones(shape, np.float32)
        call = ((lambda: aa.replication_pad2d(x, [1, 1, 1, 1])) if spec is FWD else
                (lambda: aa.replication_pad2d_backward(np.ones(shape[:-2] + (shape[-2] + 2, shape[-1] + 2),
                                                               np.float32), x, [1, 1, 1, 1])))
        if rank in ranks:
            assert call().shape == (shape[:-2] + (shape[-2] + 2, shape[-1] + 2) if spec is FWD else shape)
        else:
            with pytest.raises(aa.AclnnParamInvalidError, match=r"input: expected a 3-D \(C, H, W\) or 4-D"):
                call()


def test_the_number_of_pads_at_the_limit_and_one_either_side(backend):
    n = _documented_pad_count()
    x = np.ones((1, 2, 3, 4), np.float32)
    assert aa.replication_pad2d(x, [1] * n).shape == (1, 2, 5, 6)
    for wrong in (n - 1, n + 1):
        with pytest.raises(aa.AclnnParamInvalidError, match=rf"padding: expected {n} values"):
            aa.replication_pad2d(x, [1] * wrong)


@pytest.mark.parametrize("axis", ["H", "W"])
def test_cropping_to_zero_and_one_past(backend, axis):
    """Negative pads crop: down to an empty H or W with a 4-D input (the op_api succeeds
    computing nothing), one more is refused; a 3-D input cropped to empty is refused."""
    x = np.ones((1, 2, 3, 4), np.float32)
    size = x.shape[-2] if axis == "H" else x.shape[-1]

    def pads(k):
        return [-k, 0, 0, 0] if axis == "W" else [0, 0, -k, 0]

    y = aa.replication_pad2d(x, pads(size))
    assert 0 in y.shape[-2:] and y.size == 0
    gx = aa.replication_pad2d_backward(np.ones(y.shape, np.float32), x, pads(size))
    np.testing.assert_array_equal(gx, np.zeros_like(x))
    with pytest.raises(aa.AclnnParamInvalidError, match="padding: expected pads that leave"):
        aa.replication_pad2d(x, pads(size + 1))
    with pytest.raises(aa.AclnnParamInvalidError, match="no empty tensor with a 3-D input"):
        aa.replication_pad2d(x[0], pads(size))
    assert aa.replication_pad2d(x[0], pads(size - 1)).size > 0
