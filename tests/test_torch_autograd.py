"""ascend_aclnn.torch (issue 19, item 5): torch.autograd.Functions pairing each forward with
its aclnn backward, on the active backend. torch.autograd.gradcheck in float64 where the
operator takes float64 (pad); elsewhere against PyTorch's own autograd in float32. Skipped,
with the reason, where torch cannot be imported."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (CI installs torch CPU for these tests)")

import torch.nn.functional as F  # noqa: E402

import ascend_aclnn as aa  # noqa: E402
import ascend_aclnn.torch as aat  # noqa: E402

F32 = dict(rtol=1e-5, atol=1e-5)


def _leaf(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_()


def _twin(t):
    return t.detach().clone().requires_grad_()


def _backward_both(ours, theirs, inputs, seed=1):
    """Backpropagate the same random cotangent through both results; returns the grads."""
    g = torch.Generator().manual_seed(seed)
    cot = torch.randn(ours.shape, generator=g, dtype=ours.dtype)
    assert ours.shape == theirs.shape
    ours.backward(cot)
    theirs.backward(cot)


# ---- replication_pad2d: gradcheck in float64 -------------------------------------------------------

@pytest.mark.parametrize("padding", [[1, 2, 0, 3], [3, 3, 3, 3], [-1, 2, 1, -1]], ids=["asym", "even", "crop"])
def test_pad_passes_gradcheck_and_gradgradcheck_in_float64(padding, backend):
    x = _leaf(2, 3, 4, 5, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda t: aat.replication_pad2d(t, padding), (x,))
    assert torch.autograd.gradgradcheck(lambda t: aat.replication_pad2d(t, padding), (x,))


def test_pad_backward_is_differentiable_in_float64(backend):
    x = torch.randn(1, 2, 3, 4, dtype=torch.float64)
    g = _leaf(1, 2, 5, 7, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda t: aat.replication_pad2d_backward(t, x, [1, 2, 1, 1]), (g,))


def test_pad_matches_pytorch_autograd(backend):
    x = _leaf(2, 3, 6, 5)
    x2 = _twin(x)
    ours, theirs = aat.replication_pad2d(x, [2, 1, 3, 0]), F.pad(x2, (2, 1, 3, 0), mode="replicate")
    torch.testing.assert_close(ours, theirs, **F32)
    _backward_both(ours, theirs, (x, x2))
    torch.testing.assert_close(x.grad, x2.grad, **F32)


# ---- upsample_nearest_exact1d --------------------------------------------------------------------

@pytest.mark.parametrize("l_in,l_out", [(5, 8), (8, 5), (4, 12), (7, 7)])
def test_upsample_matches_pytorch_autograd(l_in, l_out, backend):
    x = _leaf(2, 3, l_in)
    x2 = _twin(x)
    ours = aat.upsample_nearest_exact1d(x, [l_out])
    theirs = F.interpolate(x2, size=l_out, mode="nearest-exact")
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    _backward_both(ours, theirs, (x, x2))
    torch.testing.assert_close(x.grad, x2.grad, **F32)


def test_upsample_second_order_goes_through_the_forward_kernel(backend):
    x = _leaf(1, 2, 5)
    y = aat.upsample_nearest_exact1d(x, [9])
    (gx,) = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    (ggx,) = torch.autograd.grad(gx.sum(), x)
    x2 = _twin(x)
    (gx2,) = torch.autograd.grad(F.interpolate(x2, size=9, mode="nearest-exact").pow(2).sum(), x2, create_graph=True)
    (ggx2,) = torch.autograd.grad(gx2.sum(), x2)
    torch.testing.assert_close(ggx, ggx2, **F32)


def test_the_upsample_limit_surfaces_at_the_backward_with_its_reason(backend):
    x = _leaf(1, 1, 2)
    y = aat.upsample_nearest_exact1d(x, [120])  # 60x: the forward runs
    with pytest.raises(aa.AclnnParamInvalidError, match="a limit of this backward only"):
        y.sum().backward()


# ---- im2col (unfold) and im2col_backward (fold) ----------------------------------------------------

@pytest.mark.parametrize("geometry", [dict(kernel_size=3, padding=1), dict(kernel_size=(2, 3), dilation=(2, 1),
                                                                           padding=(1, 0), stride=(2, 1))],
                         ids=["k3p1", "mixed"])
def test_im2col_matches_f_unfold_autograd(geometry, backend):
    x = _leaf(2, 3, 7, 6)
    x2 = _twin(x)
    ours, theirs = aat.im2col(x, **geometry), F.unfold(x2, **geometry)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    _backward_both(ours, theirs, (x, x2))
    torch.testing.assert_close(x.grad, x2.grad, **F32)


def test_fold_matches_f_fold_autograd(backend):
    geometry = dict(kernel_size=(2, 3), dilation=1, padding=(1, 0), stride=(2, 1))
    cols = _leaf(2, 3 * 6, F.unfold(torch.zeros(1, 1, 7, 6), **geometry).shape[-1])
    cols2 = _twin(cols)
    ours, theirs = aat.fold(cols, (7, 6), **geometry), F.fold(cols2, (7, 6), **geometry)
    torch.testing.assert_close(ours, theirs, **F32)
    _backward_both(ours, theirs, (cols, cols2))
    torch.testing.assert_close(cols.grad, cols2.grad, rtol=0, atol=0)
    assert aat.fold is aat.im2col_backward and aat.unfold is aat.im2col


# ---- max_pool2d_with_mask --------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(3, 2, 1), (2, 2, 0), (3, 1, 1, 1, True)], ids=["k3s2p1", "k2s2", "ceil"])
def test_max_pool_matches_pytorch_autograd_and_the_mask_is_not_differentiable(args, backend):
    x = _leaf(2, 3, 9, 8)
    x2 = _twin(x)
    out, mask = aat.max_pool2d_with_mask(x, *args)
    theirs, indices = F.max_pool2d_with_indices(x2, *args)
    assert out.requires_grad and not mask.requires_grad and mask.dtype == torch.int8
    torch.testing.assert_close(out, theirs, rtol=0, atol=0)
    assert torch.equal(aa.mask_to_indices(mask, out.shape), indices)
    _backward_both(out, theirs, (x, x2))
    torch.testing.assert_close(x.grad, x2.grad, **F32)


def test_max_pool_stride_none_means_the_kernel(backend):
    x = _leaf(1, 2, 6, 6)
    out, _ = aat.max_pool2d_with_mask(x, 2, None)
    torch.testing.assert_close(out, F.max_pool2d(x.detach(), 2), rtol=0, atol=0)


# ---- group_norm_swish ------------------------------------------------------------------------------

def _torch_group_norm_swish(x, gamma, beta, groups, eps=1e-5, swish=True, scale=1.0):
    z = F.group_norm(x, groups, gamma, beta, eps)
    return z * torch.sigmoid(scale * z) if swish else z


def _pre_9_1_gradients(x, gamma, beta, groups, scale, cot, eps=1e-5):
    """What the kernel of a release before 9.1.0 gives: its swish derivative
    sig * (1 + z (1 - sig)), sig = sigmoid(scale * z), through PyTorch's group-norm backward."""
    n, c = x.shape[:2]
    hw = x.numel() // (n * c)
    x, gamma, beta = (t.detach().double() for t in (x, gamma, beta))
    _, mean, rstd = torch.ops.aten.native_group_norm(x, None, None, n, c, hw, groups, eps)
    z = F.group_norm(x, groups, gamma, beta, eps)
    sig = torch.sigmoid(scale * z)
    gz = cot.double() * sig * (1 + z * (1 - sig))
    return torch.ops.aten.native_group_norm_backward(gz, x, mean, rstd, gamma, n, c, hw, groups, [True] * 3)


@pytest.mark.parametrize("swish,scale", [(True, 1.0), (True, 0.7), (False, 1.0)], ids=["swish", "scale", "no-swish"])
def test_group_norm_swish_matches_pytorch_autograd(swish, scale, backend):
    """Before 9.1.0 (this session's simulator or the release the numpy backend follows) the
    kernel is the derivative at swish_scale 1 only: at 0.7 the gradients are its formula's."""
    from op_db.group_norm import SWISH_GRAD_FORMULA
    x, gamma, beta = _leaf(2, 6, 4, 3, seed=2), _leaf(6, seed=3), _leaf(6, seed=4)
    x2, gamma2, beta2 = _twin(x), _twin(gamma), _twin(beta)
    y, mean, rstd = aat.group_norm_swish(x, gamma, beta, 3, activate_swish=swish, swish_scale=scale)
    assert not mean.requires_grad and not rstd.requires_grad
    theirs = _torch_group_norm_swish(x2, gamma2, beta2, 3, swish=swish, scale=scale)
    torch.testing.assert_close(y, theirs, rtol=1e-5, atol=1e-5)
    _backward_both(y, theirs, ())
    wants = [x2.grad, gamma2.grad, beta2.grad]
    if swish and scale != 1 and SWISH_GRAD_FORMULA == "8.1":
        cot = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))  # _backward_both's
        wants = [w.float() for w in _pre_9_1_gradients(x, gamma, beta, 3, scale, cot)]
        assert (wants[2] - beta2.grad).abs().max() > 1e-2  # not the forward's derivative
    for ours, want in zip((x.grad, gamma.grad, beta.grad), wants):
        torch.testing.assert_close(ours, want, rtol=1e-4, atol=1e-5)


def test_group_norm_swish_computes_only_the_gradients_asked_for(backend):
    x = _leaf(1, 4, 5)
    gamma, beta = torch.ones(4), torch.zeros(4)  # constants
    y, _, _ = aat.group_norm_swish(x, gamma, beta, 2)
    y.sum().backward()
    x2 = _twin(x)
    _torch_group_norm_swish(x2, gamma, beta, 2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-4, atol=1e-5)
    assert gamma.grad is None and beta.grad is None


def test_group_norm_swish_with_16_bit_x_and_float32_gamma(backend):
    x = _leaf(2, 4, 3, 3, seed=5).detach().half().requires_grad_()
    gamma, beta = _leaf(4, seed=6), _leaf(4, seed=7)
    y, mean, rstd = aat.group_norm_swish(x, gamma, beta, 2)
    assert (y.dtype, mean.dtype) == (torch.float16, torch.float32)
    y.float().sum().backward()
    x2, gamma2, beta2 = x.detach().float().requires_grad_(), _twin(gamma), _twin(beta)
    _torch_group_norm_swish(x2, gamma2, beta2, 2).sum().backward()
    assert x.grad.dtype == torch.float16 and gamma.grad.dtype == torch.float32
    torch.testing.assert_close(x.grad.float(), x2.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(gamma.grad, gamma2.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(beta.grad, beta2.grad, rtol=2e-2, atol=2e-2)


# ---- general ---------------------------------------------------------------------------------------

def test_results_are_cpu_tensors_on_either_backend(backend):
    y = aat.replication_pad2d(_leaf(1, 1, 2, 2), [1, 1, 1, 1])
    assert isinstance(y, torch.Tensor) and y.device.type == "cpu" and y.grad_fn is not None
    assert aa.get_backend() == backend


# ---- group_norm_swish under either release's GroupNormSwishGrad (issue 26, defect 1) ------------
#
# Before 9.1.0 the grad kernel's swish derivative is sig * (1 + z (1 - sig)) whatever
# swish_scale is; from 9.1.0 on sig * (1 + s z (1 - sig)). At swish_scale 0 the first is
# 1/2 + z/4, not 1/2: no kernel input makes the plain group norm's gradient come out of it
# under both. ASCEND_ACLNN_CANN_VERSION picks the numpy backend's formula; the npu backend
# runs this session's simulator (its own release; the 8.1.RC1 build is in test_group_norm.py).

RELEASES = ["8.1.RC1", "9.2.0"]


def _group_norm_leaves(dtype=torch.float32):
    """x, gamma, beta with beta far from 0: z's mean is large, so a z-dependent factor shows."""
    x = _leaf(2, 6, 4, 3, seed=11).detach().to(dtype).requires_grad_()
    gamma = _leaf(6, seed=12)
    beta = (_leaf(6, seed=13).detach() + 1.5).requires_grad_()
    return x, gamma, beta


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("scale", [1.0, 2.0, 0.0])
def test_group_norm_without_swish_matches_f_group_norm_under_either_release(release, scale, backend, monkeypatch):
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", release)
    x, gamma, beta = _group_norm_leaves()
    x2, gamma2, beta2 = _twin(x), _twin(gamma), _twin(beta)
    y, _, _ = aat.group_norm_swish(x, gamma, beta, 3, activate_swish=False, swish_scale=scale)
    theirs = F.group_norm(x2, 3, gamma2, beta2, 1e-5)
    torch.testing.assert_close(y, theirs, rtol=1e-5, atol=1e-5)
    _backward_both(y, theirs, ())
    for name, ours, want in (("dx", x.grad, x2.grad), ("dgamma", gamma.grad, gamma2.grad),
                             ("dbeta", beta.grad, beta2.grad)):
        torch.testing.assert_close(ours, want, rtol=1e-4, atol=1e-5, msg=lambda m: f"{name} ({release}): {m}")


@pytest.mark.parametrize("release", RELEASES)
def test_group_norm_without_swish_with_16_bit_x_under_either_release(release, backend, monkeypatch):
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", release)
    x, gamma, beta = _group_norm_leaves(torch.float16)
    y, _, _ = aat.group_norm_swish(x, gamma, beta, 3, activate_swish=False)
    y.float().sum().backward()
    x2, gamma2, beta2 = x.detach().float().requires_grad_(), _twin(gamma), _twin(beta)
    F.group_norm(x2, 3, gamma2, beta2, 1e-5).sum().backward()
    assert (x.grad.dtype, gamma.grad.dtype, beta.grad.dtype) == (torch.float16, torch.float32, torch.float32)
    torch.testing.assert_close(x.grad.float(), x2.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(gamma.grad, gamma2.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(beta.grad, beta2.grad, rtol=2e-2, atol=2e-2)


def test_group_norm_without_swish_never_runs_the_swish_grad_kernel(backend, monkeypatch):
    """Its backward is PyTorch's native_group_norm_backward: no release's swish derivative."""
    def refuse(*args, **kwargs):
        raise AssertionError("group_norm_swish_grad ran for activate_swish=False")
    monkeypatch.setattr(aat.ops, "group_norm_swish_grad", refuse)
    x, gamma, beta = _group_norm_leaves()
    y, _, _ = aat.group_norm_swish(x, gamma, beta, 3, activate_swish=False)
    y.sum().backward()
    assert x.grad is not None and gamma.grad is not None and beta.grad is not None


def test_group_norm_without_swish_computes_only_the_gradients_asked_for(backend):
    x, _, _ = _group_norm_leaves()
    gamma, beta = torch.full((6,), 0.5), torch.ones(6)  # constants
    y, _, _ = aat.group_norm_swish(x, gamma, beta, 3, activate_swish=False)
    y.sum().backward()
    x2 = _twin(x)
    F.group_norm(x2, 3, gamma, beta, 1e-5).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-4, atol=1e-5)
    assert gamma.grad is None and beta.grad is None


def _swish_backward(scale):
    x, gamma, beta = _group_norm_leaves()
    y, _, _ = aat.group_norm_swish(x, gamma, beta, 3, swish_scale=scale)
    y.sum().backward()


def _recorded(fn):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, UserWarning)]


@pytest.fixture
def fresh_warning(monkeypatch):
    """The once-per-process warning not yet given in this process."""
    from ascend_aclnn.ops import group_norm as gn
    monkeypatch.setattr(gn, "_warned", set())


def test_the_wrapper_warns_once_when_its_gradient_is_the_pre_9_1_kernel_s(numpy_backend, fresh_warning,
                                                                          monkeypatch):
    """swish_scale != 1 under the 8.1 formula: the gradient is the kernel's, which is not
    the forward's derivative; said once per process, naming the document's section."""
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", "8.1.RC1")
    assert _recorded(lambda: _swish_backward(1.0)) == []  # both formulas agree: nothing to say

    def no_swish():
        y, _, _ = aat.group_norm_swish(*_group_norm_leaves(), 3, activate_swish=False, swish_scale=2.0)
        y.sum().backward()
    assert _recorded(no_swish) == []  # no swish, no kernel: nothing to say
    caught = _recorded(lambda: (_swish_backward(2.0), _swish_backward(0.5), _swish_backward(2.0)))
    assert len(caught) == 1, [str(w.message) for w in caught]
    w = caught[0]
    assert issubclass(w.category, aa.SwishGradFormulaWarning), w.category
    text = str(w.message)
    assert "ascend_aclnn.torch.group_norm_swish" in text and "swish_scale=2" in text and "8.1.RC1" in text, text
    assert "docs/npu-differences.md, group_norm_swish(_grad)" in text, text


def test_the_wrapper_does_not_warn_from_9_1_0_on(numpy_backend, fresh_warning, monkeypatch):
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", "9.2.0")
    assert _recorded(lambda: _swish_backward(2.0)) == []


def test_on_the_npu_the_wrapper_warns_by_the_release_the_runtime_reports(npu, fresh_warning, monkeypatch):
    """The simulator's release (this session's build), not ASCEND_ACLNN_CANN_VERSION, says
    which kernel runs there."""
    from op_db.group_norm import SWISH_GRAD_FORMULA
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", "9.2.0" if SWISH_GRAD_FORMULA == "8.1" else "8.1.RC1")
    caught = _recorded(lambda: _swish_backward(2.0))
    assert len(caught) == (SWISH_GRAD_FORMULA == "8.1"), [str(w.message) for w in caught]


# ---- the module's exports follow the descriptions ------------------------------------------------

def test_exports_are_the_descriptions_torch_functions_and_their_wrappers():
    """Each description's torch_function is a torch.autograd.Function here, with its
    functional wrapper under the operator's name; nothing else is exported but unfold and
    fold. A description's differentiable says whether its wrapper's result carries a
    gradient."""
    wrapped = [s for s in aa.ops.REGISTRY if s.torch_function]
    assert sorted(aat.__all__) == sorted([s.torch_function for s in wrapped] + [s.name for s in wrapped]
                                         + ["unfold", "fold"])
    for s in wrapped:
        assert issubclass(getattr(aat, s.torch_function), torch.autograd.Function), s.name
        assert callable(getattr(aat, s.name)), s.name
        assert s.differentiable, f"{s.name} has an autograd Function but is not marked differentiable"
        args, kwargs = s.example(np.random.default_rng(0), np.dtype(np.float32))
        tensors = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        tensors[0].requires_grad_()
        result = getattr(aat, s.name)(*tensors, **kwargs)
        y = result[0] if isinstance(result, tuple) else result
        assert y.requires_grad, s.name


def test_ints_where_pytorch_takes_them_are_differentiable(backend):
    x = torch.randn(1, 2, 3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: aat.replication_pad2d(t, 2), (x,))
    y = torch.randn(1, 2, 3, requires_grad=True)
    aat.upsample_nearest_exact1d(y, 8).sum().backward()
    assert y.grad is not None and y.grad.tolist() == [[[3.0, 2.0, 3.0]] * 2]  # 8 outputs from 3: 3, 2, 3 each
