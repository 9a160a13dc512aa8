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
