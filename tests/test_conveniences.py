"""PyTorch-style conveniences (issue 19, item 6): an int for any pair parameter, F.unfold's
and F.max_pool2d's keyword defaults, 0/1 for a bool, and Python lists for tensors taking
the dtype of the call's first array. Each test fails on the code before."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.ops import REGISTRY, checked_calls

RNG = np.random.default_rng(19)
IMG = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)


# ---- an int for a pair --------------------------------------------------------------------------

def test_im2col_takes_ints_as_f_unfold_does(backend):
    want = aa.im2col(IMG, [3, 3], [1, 1], [1, 1], [1, 1])
    np.testing.assert_array_equal(aa.im2col(IMG, 3, 1, 1, 1), want)
    np.testing.assert_array_equal(aa.im2col(IMG, np.int64(3), 1, np.int32(1), [1, 1]), want)
    cols = aa.im2col(IMG, 2, 2, 1, 2)
    np.testing.assert_array_equal(cols, aa.im2col(IMG, [2, 2], [2, 2], [1, 1], [2, 2]))
    np.testing.assert_array_equal(aa.im2col_backward(cols, (7, 6), 2, 2, 1, 2),
                                  aa.im2col_backward(cols, [7, 6], [2, 2], [2, 2], [1, 1], [2, 2]))
    np.testing.assert_array_equal(aa.im2col_backward(aa.im2col(IMG[:, :, :6], 3), 6, 3),
                                  aa.im2col_backward(aa.im2col(IMG[:, :, :6], 3), [6, 6], [3, 3]))


def test_max_pool_takes_ints(backend):
    out, mask = aa.max_pool2d_with_mask(IMG, 3, 2, 1, 1)
    want_out, want_mask = aa.max_pool2d_with_mask(IMG, [3, 3], [2, 2], [1, 1], [1, 1])
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(mask, want_mask)
    g = np.ones_like(out)
    np.testing.assert_array_equal(aa.max_pool2d_with_mask_backward(g, IMG, mask, 3, 2, 1, 1),
                                  aa.max_pool2d_with_mask_backward(g, IMG, mask, [3, 3], [2, 2], [1, 1], [1, 1]))


def test_an_int_is_expanded_before_the_checks_so_messages_show_the_pair(backend):
    with pytest.raises(aa.AclnnParamInvalidError, match=r"kernel_size: expected values >= 1, got \[0, 0\]"):
        aa.im2col(IMG, 0)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"stride: expected values >= 1, got \[-1, -1\]"):
        aa.im2col(IMG, 2, stride=-1)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"padding: expected 0 <= padding <= kernel_size // 2 "
                                                        r"on each axis \(kernel \(3, 3\)\), got \(2, 2\)"):
        aa.max_pool2d_with_mask(IMG, 3, 1, 2)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"dilation: expected 1 .*got \(2, 2\)"):
        aa.max_pool2d_with_mask(IMG, 3, 1, 1, 2)


def test_a_bool_or_a_float_is_still_not_a_size(backend):
    for bad in (True, 3.0, "3", None):
        with pytest.raises(aa.AclnnParamError, match="kernel_size"):
            aa.im2col(IMG, bad)
    with pytest.raises(aa.AclnnParamInvalidError, match="kernel_size: expected an int or a sequence of ints, got bool"):
        aa.im2col(IMG, True)
    with pytest.raises(aa.AclnnParamInvalidError, match="output_size: expected an int or a sequence of ints, got "
                                                        "bool"):
        aa.upsample_nearest_exact1d(IMG[0], True)  # an int stands for [n] there, a bool does not


# ---- keyword defaults ---------------------------------------------------------------------------

def test_im2col_has_f_unfolds_defaults(backend):
    np.testing.assert_array_equal(aa.im2col(IMG, 3), aa.im2col(IMG, [3, 3], [1, 1], [0, 0], [1, 1]))
    np.testing.assert_array_equal(aa.im2col(IMG, 3, padding=1), aa.im2col(IMG, 3, 1, 1, 1))
    np.testing.assert_array_equal(aa.im2col(IMG, 3, stride=2), aa.im2col(IMG, 3, 1, 0, 2))
    cols = aa.im2col(IMG, 3, padding=1)
    np.testing.assert_array_equal(aa.im2col_backward(cols, [7, 6], 3, padding=1),
                                  aa.im2col_backward(cols, [7, 6], [3, 3], [1, 1], [1, 1], [1, 1]))
    sig = inspect.signature(aa.im2col)
    assert [sig.parameters[n].default for n in ("dilation", "padding", "stride")] == [(1, 1), (0, 0), (1, 1)]


def test_max_pool_has_f_max_pool2ds_defaults(backend):
    out, mask = aa.max_pool2d_with_mask(IMG, 2)  # stride = kernel, padding 0, dilation 1
    want_out, want_mask = aa.max_pool2d_with_mask(IMG, [2, 2], [], [0, 0], [1, 1], False)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(mask, want_mask)
    dx = aa.max_pool2d_with_mask_backward(np.ones_like(out), IMG, mask, 2)
    np.testing.assert_array_equal(dx, aa.max_pool2d_with_mask_backward(np.ones_like(out), IMG, mask, [2, 2], [],
                                                                       [0, 0], [1, 1], False))


def test_calls_using_the_defaults_keep_their_cached_validation():
    cache = checked_calls.cache_for(REGISTRY["im2col"])
    assert cache.key((IMG, [3, 3]), {}) is not None
    assert checked_calls.cache_for(REGISTRY["max_pool2d_with_mask"]).key((IMG, [2, 2]), {}) is not None


def test_the_docstrings_say_so():
    doc = aa.im2col.__doc__
    assert "an int n means (n, n)" in doc and "default (1, 1)" in doc and "default (0, 0)" in doc
    assert "PyTorch's stride=None" in aa.max_pool2d_with_mask.__doc__
    assert "Union[int, Sequence[int]]" in str(inspect.signature(aa.max_pool2d_with_mask_backward))


# ---- lists for tensors --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, aa.bfloat16, np.float32], ids=["float16", "bfloat16", "float32"])
def test_lists_take_the_dtype_of_the_first_array(dtype, backend):
    x = RNG.standard_normal((2, 4, 3, 3)).astype(dtype)
    gamma, beta = [1.0, 0.5, 2.0, -1.0], [0.0, 0.25, 0, -0.5]
    got = aa.group_norm_swish(x, gamma, beta, 2)
    want = aa.group_norm_swish(x, np.array(gamma, dtype), np.array(beta, dtype), 2)
    for g, w in zip(got, want):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g, w)


def test_a_list_first_takes_the_dtype_of_a_later_array(backend):
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float16)
    got = aa.replication_pad2d_backward(aa.replication_pad2d(x, [1, 1, 1, 1]).tolist(), x, [1, 1, 1, 1])
    assert got.dtype == np.float16


def test_arrays_are_never_cast(backend):
    x = RNG.standard_normal((2, 4, 3, 3)).astype(np.float16)
    with pytest.raises(aa.AclnnParamInvalidError, match="gamma: expected dtype float16 or float32 .*got float64"):
        aa.group_norm_swish(x, np.ones(4), [0.0] * 4, 2)


def test_a_list_the_dtype_cannot_hold_is_refused_or_keeps_its_own_dtype(backend):
    from ascend_aclnn.ops.spec import OpSpec, Output, Tensor
    pair = OpSpec("pair", "aclnnPair", "two tensors", (Tensor("x", "self"), Tensor("y", "other")),
                  (Output("out", "out"),), infer=lambda a: [(a.x.shape, a.x.dtype)], check=lambda a, c: None,
                  reference=lambda x, y: x)
    x8 = np.ones(3, np.uint8)
    assert pair.bind((x8, [1, 2, 255]), {}).y.dtype == np.uint8
    for bad in ([1, 2, 300], [-1, 0, 0]):
        with pytest.raises(aa.AclnnParamInvalidError, match=r"y: expected values that uint8 can hold "
                                                            r"\(a list takes the dtype of x\)"):
            pair.bind((x8, bad), {})
    assert pair.bind((x8, [1.5, 2, 3]), {}).y.dtype == np.float64  # floats for ints: kept, and the checks speak
    xf = np.ones((1, 1, 2, 2), np.float32)
    with pytest.raises(aa.AclnnParamInvalidError, match="grad_output: expected dtype float32 .*got complex128"):
        aa.replication_pad2d_backward([[[[1j, 1], [1, 1]]]], xf, [0, 0, 0, 0])


# ---- 0 and 1 for a bool -------------------------------------------------------------------------

def test_ceil_mode_takes_0_and_1_as_every_bool_parameter_does(backend):
    x = RNG.standard_normal((1, 2, 7, 7)).astype(np.float32)
    for flag, as_bool in ((1, True), (0, False), (np.int64(1), True)):
        got, want = aa.max_pool2d_with_mask(x, 2, 2, 0, 1, flag), aa.max_pool2d_with_mask(x, 2, 2, 0, 1, as_bool)
        np.testing.assert_array_equal(got[0], want[0])
    y, _, _ = aa.group_norm_swish(x, np.ones(2, np.float32), np.zeros(2, np.float32), 1, activate_swish=0)
    np.testing.assert_array_equal(y, aa.group_norm_swish(x, np.ones(2, np.float32), np.zeros(2, np.float32), 1,
                                                         activate_swish=False)[0])
    for bad in (2, -1, 1.0, "True", None):
        with pytest.raises(aa.AclnnParamInvalidError, match=r"ceil_mode: expected a bool \(or the int 0 or 1\)"):
            aa.max_pool2d_with_mask(x, 2, 2, 0, 1, bad)
    assert "True/False or 0/1" in aa.max_pool2d_with_mask.__doc__


# ---- error hints (issue 19, item 9) -------------------------------------------------------------

def _detail(exc: BaseException) -> str:
    return str(exc).splitlines()[-1]


def test_indices_given_as_the_mask_point_at_indices_to_mask(backend):
    x = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    out, mask = aa.max_pool2d_with_mask(x, 2)
    indices = aa.mask_to_indices(mask, out.shape)
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.max_pool2d_with_mask_backward(np.ones_like(out), x, indices, 2)
    assert _detail(info.value) == ("  mask: expected dtype int8 (the mask's only dtype), got int64: PyTorch's indices "
                                   "are not the mask; ascend_aclnn.indices_to_mask(indices, kernel_size) converts them")
    with pytest.raises(aa.AclnnParamInvalidError, match=r"got uint8 \(the same bytes as int8: mask\.view\(np\.int8\)\)"):
        aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask.view(np.uint8), 2)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"out\[1\] \(mask\): .*got int64: the second output is the "
                                                        r"NPU's int8 mask, not PyTorch's indices"):
        aa.max_pool2d_with_mask(x, 2, out=(None, np.zeros(out.shape, np.int64)))
    dx = aa.max_pool2d_with_mask_backward(np.ones_like(out), x, aa.indices_to_mask(indices, [2, 2]), 2)
    np.testing.assert_array_equal(dx, aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, 2))


def test_mask_to_indices_given_the_output_instead_of_its_shape_says_so():
    x = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    with aa.use_backend("numpy"):
        out, mask = aa.max_pool2d_with_mask(x, 2)
    with pytest.raises(TypeError, match=r"output_shape: expected the pooled output's shape .* got an array of shape "
                                        r"\(1, 2, 3, 3\); pass its \.shape \(mask_to_indices\(mask, out\.shape\)\)"):
        aa.mask_to_indices(mask, out)
    np.testing.assert_array_equal(aa.mask_to_indices(mask, np.array(out.shape)), aa.mask_to_indices(mask, out.shape))
    with pytest.raises(TypeError, match="output_shape: expected the pooled output's shape"):
        aa.mask_to_indices(mask, 5)


def test_the_upsample_limit_is_said_to_be_the_backwards_only(backend):
    x = np.ones((1, 1, 2), np.float32)
    y = aa.upsample_nearest_exact1d(x, [200])  # the forward runs past 50x
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.upsample_nearest_exact1d_backward(y, [200], [1, 1, 2])
    assert "a limit of this backward only: the forward upsample_nearest_exact1d has none" in _detail(info.value)
    assert "a limit of this backward only" in " ".join(aa.upsample_nearest_exact1d_backward.__doc__.split())
    assert "no magnification limit" in " ".join(aa.upsample_nearest_exact1d.__doc__.split())


def test_an_int_where_pytorch_takes_one(backend):
    """nn.ReplicationPad2d(2) pads 2 on every side; F.interpolate(size=8) of a 1-d input is [8]."""
    x = np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3)
    np.testing.assert_array_equal(aa.replication_pad2d(x, 2), aa.replication_pad2d(x, [2, 2, 2, 2]))
    g = aa.replication_pad2d(x, np.int64(1))
    np.testing.assert_array_equal(aa.replication_pad2d_backward(g, x, 1), aa.replication_pad2d_backward(g, x, [1] * 4))
    y = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    up = aa.upsample_nearest_exact1d(y, 8)
    np.testing.assert_array_equal(up, aa.upsample_nearest_exact1d(y, [8]))
    np.testing.assert_array_equal(aa.upsample_nearest_exact1d_backward(up, 8, [1, 2, 3]),
                                  aa.upsample_nearest_exact1d_backward(up, [8], [1, 2, 3]))
    # input_size is a whole shape: an int means nothing there, as in PyTorch
    with pytest.raises(aa.AclnnParamInvalidError, match="input_size: expected a sequence of ints, got int 3"):
        aa.upsample_nearest_exact1d_backward(up, 8, 3)
    assert "an int n means (n, n, n, n)" in aa.replication_pad2d.__doc__
    assert "an int n means [n]" in aa.upsample_nearest_exact1d.__doc__


def test_f_group_norms_argument_order_is_named(backend):
    x, g = np.ones((2, 4, 3), np.float32), np.ones(4, np.float32)
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.group_norm_swish(x, 2, g, g)  # F.group_norm(input, num_groups, weight, bias)
    assert info.value.status == 161002
    assert str(info.value).splitlines()[1] == (
        "  num_groups: expected an int, got ndarray of shape (4,) and dtype float32, with gamma the int 2: that is "
        "F.group_norm's order (input, num_groups, weight, bias); group_norm_swish takes (x, gamma, beta, "
        "num_groups, data_format, eps, ...)")
    assert aa.group_norm_swish(x, g, g, 2)[0].shape == x.shape
