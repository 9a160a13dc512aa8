"""A NULL for an output a raw operator writes is ACLNN_ERR_PARAM_NULLPTR (161001) on both
backends, with nothing delivered: the npu backend hears it from CANN (the simulator's
op_apis check as CANN's do), the numpy backend from its CPU reference, which computes that
output (an output the operator leaves alone, as an outputMask's False, may be NULL)."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa

X = np.arange(6, dtype=np.float32).reshape(2, 3) + 1

# (operator, arguments with one None, the C name CANN names): operators the simulator models
NULLS = [
    ("Add", lambda: (X, X, 1.0, None), "out"),
    ("ReduceSum", lambda: (X, [0], False, np.float32, None), "out"),
    ("Mm", lambda: (X, X.T.copy(), None, 0), "out"),
    ("Nonzero", lambda: (X, None), "out"),
    ("Cat", lambda: ([X, X], 0, None), "out"),
    ("SplitTensor", lambda: (X, 1, 1, None), "out"),
]


@pytest.mark.parametrize("op,args,name", NULLS, ids=[f"{op}-{name}" for op, _, name in NULLS])
def test_a_null_required_pointer_is_161001_on_both_backends(backend, op, args, name):
    with pytest.raises(aa.AclnnError) as info:
        getattr(aa.aclnn, op)(*args())
    assert info.value.status == 161001, (backend, str(info.value))
    assert name in str(info.value), (backend, str(info.value))


def _conv_backward(mask, grad_weight):
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
    gy = np.ones((1, 3, 3, 3), np.float32)
    gx = np.empty_like(x)
    gb = np.empty((3,), np.float32)
    return aa.aclnn.ConvolutionBackward(gy, x, w, [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, mask, 0,
                                        gx, grad_weight, gb)


def test_an_output_its_mask_leaves_out_may_be_null(numpy_backend):
    """ConvolutionBackward's op_api checks an output for NULL only where outputMask asks for it."""
    gx, gw, gb = _conv_backward([True, False, True], None)
    assert gw is None and np.isfinite(gx).all() and np.allclose(gb, 9.0)
    with pytest.raises(aa.AclnnError) as info:
        _conv_backward([True, True, True], None)
    assert info.value.status == 161001 and "gradWeight" in str(info.value)


def test_an_optional_pointer_may_be_null(numpy_backend):
    """...Optional in the header: NULL is the documented way to leave it out."""
    x = np.ones((2, 8), np.float32)
    g, b = np.ones(8, np.float32), np.zeros(8, np.float32)
    outs = (np.empty_like(x), np.empty((2, 1), np.float32), np.empty((2, 1), np.float32), np.empty_like(x))
    y, mean, rstd, xo = aa.aclnn.AddLayerNorm(x, x, g, b, None, 1e-5, True, *outs)
    assert np.allclose(xo, 2 * x) and np.allclose(y, 0.0, atol=1e-3)


def test_a_null_output_after_calls_with_one_is_still_refused(backend):
    """The numpy backend's per-signature fast path (cpu_reference/fast.py) must not skip it."""
    for _ in range(3):
        aa.aclnn.Add(X, X, 1.0, np.empty_like(X))
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.Add(X, X, 1.0, None)
    assert info.value.status == 161001, str(info.value)


def test_nothing_is_written_when_one_output_is_null(numpy_backend):
    """Mm's outputs are one; ConvolutionBackward's three: gradInput given, gradWeight NULL
    while the mask asks for it, gradInput is left as it was."""
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
    gx = np.full_like(x, -7.0)
    with pytest.raises(aa.AclnnError):
        aa.aclnn.ConvolutionBackward(np.ones((1, 3, 3, 3), np.float32), x, w, [3], [1, 1], [0, 0], [1, 1], False,
                                     [0, 0], 1, [True, True, False], 0, gx, None, None)
    assert (gx == -7.0).all()
