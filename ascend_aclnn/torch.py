"""PyTorch autograd for the aclnn operators: each forward paired with its aclnn backward.

    import ascend_aclnn.torch as aat

    y = aat.replication_pad2d(x, [1, 1, 2, 2])     # x: a CPU torch tensor, requires_grad or not
    y.sum().backward()                             # x.grad from aclnnReplicationPad2dBackward

Each operator is a ``torch.autograd.Function`` (``ReplicationPad2d``, ...) with a thin
functional wrapper of the same name in snake_case, taking the ascend_aclnn function's
parameters (without ``out=``). They run on the active ascend_aclnn backend (``numpy`` or
``npu``: CPU tensors are uploaded, results downloaded) and return CPU tensors.

- ``upsample_nearest_exact1d``, ``replication_pad2d``, ``im2col`` (``unfold``) and
  ``im2col_backward`` (``fold``) are linear: each direction's backward is the other
  direction's Function, so gradients of any order go through the aclnn kernels (and the
  backward functions ``upsample_nearest_exact1d_backward``, ``replication_pad2d_backward``
  are differentiable too).
- ``max_pool2d_with_mask`` returns ``(out, mask)``; the mask is a non-differentiable
  output. Its backward (aclnnMaxPool2dWithMaskBackward) is differentiable once.
- ``group_norm_swish`` returns ``(y, mean, rstd)``; mean and rstd are non-differentiable
  outputs (constants to autograd). The backward is differentiable once and computes only
  the gradients autograd asks for. With the swish (``activate_swish=True``) it is
  aclnnGroupNormSwishGrad (``dgamma_is_require``, ``dbeta_is_require``), whose swish
  derivative is the CANN release's: before 9.1.0 it leaves swish_scale out of the second
  term, so with ``swish_scale != 1`` the gradients are that kernel's, not the forward's
  derivative, and a ``SwishGradFormulaWarning`` says so once per process. That kernel
  takes one dtype for all its tensors: with 16-bit x and float32 gamma it runs in float32
  and dx is rounded to x's dtype. Without the swish the backward is PyTorch's own
  ``native_group_norm_backward`` (CPU, float32, rounded to the inputs' dtypes) fed the
  aclnn forward's mean and rstd; no aclnn kernel runs. aclnnGroupNormSwishGrad always
  applies a swish, and no input makes its derivative 1 under both releases' formulas (at
  swish_scale 0 it is 1/2 under the corrected one, 1/2 + z/4 before 9.1.0).

Where the NPU's kernels differ from PyTorch (docs/npu-differences.md), so do these gradients:
e.g. the upsample backward at exact float32 ties. torch is imported by this module only;
``import ascend_aclnn`` never imports it.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence, Tuple, Union, cast

try:
    import torch
    from torch.autograd import Function
    from torch.autograd.function import once_differentiable
except ImportError as _missing:  # pragma: no cover - exercised in a test that hides torch
    raise ImportError("ascend_aclnn.torch needs PyTorch (pip install torch); the rest of ascend_aclnn works "
                      f"without it ({_missing})") from _missing

from . import functions as ops
from .ops import group_norm as _group_norm

# Literal, for type checkers: tests/test_torch_autograd.py checks that it is each described
# operator's torch_function and its wrapper (the operator's name), then unfold and fold.
__all__ = [
    "UpsampleNearestExact1d", "UpsampleNearestExact1dBackward", "ReplicationPad2d", "ReplicationPad2dBackward",
    "Im2col", "Im2colBackward", "MaxPool2dWithMask", "GroupNormSwish",
    "upsample_nearest_exact1d", "upsample_nearest_exact1d_backward", "replication_pad2d",
    "replication_pad2d_backward", "im2col", "im2col_backward", "unfold", "fold", "max_pool2d_with_mask",
    "group_norm_swish",
]

Pair = Union[int, Sequence[int]]


def _plain(t: Any) -> Any:
    """The tensor without its autograd history (ascend_aclnn refuses requires_grad tensors)."""
    return t.detach() if isinstance(t, torch.Tensor) else t


def _ints(v: Any) -> Any:
    """An int, or a sequence of ints as a tuple (ctx holds it); anything else as given, for
    the operator's own checks to refuse."""
    try:
        return operator.index(v)
    except TypeError:
        pass
    try:
        return tuple(operator.index(x) for x in v)
    except TypeError:
        return v


# ---- upsample_nearest_exact1d -------------------------------------------------------------------

class UpsampleNearestExact1d(Function):
    """aclnnUpsampleNearestExact1d; backward aclnnUpsampleNearestExact1dBackward."""

    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, output_size: Pair, scales: float = 0.0) -> torch.Tensor:
        ctx.output_size, ctx.scales, ctx.input_size = _ints(output_size), float(scales), tuple(input.shape)
        return cast("torch.Tensor", ops.upsample_nearest_exact1d(_plain(input), ctx.output_size, ctx.scales))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return UpsampleNearestExact1dBackward.apply(grad, ctx.output_size, ctx.input_size, ctx.scales), None, None


class UpsampleNearestExact1dBackward(Function):
    """aclnnUpsampleNearestExact1dBackward; its own backward is the forward operator."""

    @staticmethod
    def forward(ctx: Any, grad_output: torch.Tensor, output_size: Pair, input_size: Sequence[int],
                scales: float = 0.0) -> torch.Tensor:
        ctx.output_size, ctx.scales = _ints(output_size), float(scales)
        return cast("torch.Tensor", ops.upsample_nearest_exact1d_backward(
            _plain(grad_output), ctx.output_size, list(input_size), ctx.scales))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return UpsampleNearestExact1d.apply(grad, ctx.output_size, ctx.scales), None, None, None


# ---- replication_pad2d ----------------------------------------------------------------------------

class ReplicationPad2d(Function):
    """aclnnReplicationPad2d; backward aclnnReplicationPad2dBackward."""

    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, padding: Pair) -> torch.Tensor:
        ctx.padding = _ints(padding)
        ctx.save_for_backward(input)  # the backward takes the input (for its shape and dtype)
        return cast("torch.Tensor", ops.replication_pad2d(_plain(input), ctx.padding))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        (x,) = ctx.saved_tensors
        return ReplicationPad2dBackward.apply(grad, x, ctx.padding), None


class ReplicationPad2dBackward(Function):
    """aclnnReplicationPad2dBackward; its own backward (in grad_output) is the forward operator."""

    @staticmethod
    def forward(ctx: Any, grad_output: torch.Tensor, input: torch.Tensor, padding: Pair) -> torch.Tensor:
        ctx.padding = _ints(padding)
        return cast("torch.Tensor",
                    ops.replication_pad2d_backward(_plain(grad_output), _plain(input), ctx.padding))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return ReplicationPad2d.apply(grad, ctx.padding), None, None


# ---- im2col (unfold) and im2col_backward (fold) ----------------------------------------------------

class Im2col(Function):
    """aclnnIm2col (F.unfold); backward aclnnIm2colBackward (F.fold)."""

    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, kernel_size: Pair, dilation: Pair = 1, padding: Pair = 0,
                stride: Pair = 1) -> torch.Tensor:
        ctx.geometry = tuple(_ints(v) for v in (kernel_size, dilation, padding, stride))
        ctx.image = tuple(input.shape[-2:])
        return cast("torch.Tensor", ops.im2col(_plain(input), *ctx.geometry))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return (Im2colBackward.apply(grad, ctx.image, *ctx.geometry),) + (None,) * 4


class Im2colBackward(Function):
    """aclnnIm2colBackward (F.fold); its own backward is aclnnIm2col (F.unfold)."""

    @staticmethod
    def forward(ctx: Any, grad_output: torch.Tensor, input_size: Pair, kernel_size: Pair, dilation: Pair = 1,
                padding: Pair = 0, stride: Pair = 1) -> torch.Tensor:
        ctx.geometry = tuple(_ints(v) for v in (kernel_size, dilation, padding, stride))
        return cast("torch.Tensor", ops.im2col_backward(_plain(grad_output), _ints(input_size), *ctx.geometry))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return (Im2col.apply(grad, *ctx.geometry),) + (None,) * 5


# ---- max_pool2d_with_mask -------------------------------------------------------------------------

class MaxPool2dWithMask(Function):
    """aclnnMaxPool2dWithMask -> (out, mask), the mask non-differentiable; backward
    aclnnMaxPool2dWithMaskBackward."""

    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, kernel_size: Pair, stride: Pair = (), padding: Pair = 0,
                dilation: Pair = 1, ceil_mode: bool = False) -> tuple[Any, ...]:
        ctx.pool = tuple(_ints(v) for v in (kernel_size, stride, padding, dilation)) + (bool(ceil_mode),)
        out, mask = ops.max_pool2d_with_mask(_plain(input), *ctx.pool)
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(input, mask)
        return out, mask

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_out: torch.Tensor, grad_mask: Any) -> tuple[Any, ...]:
        x, mask = ctx.saved_tensors
        return (ops.max_pool2d_with_mask_backward(grad_out, _plain(x), mask, *ctx.pool),) + (None,) * 5


# ---- group_norm_swish -------------------------------------------------------------------------------

class GroupNormSwish(Function):
    """aclnnGroupNormSwish -> (y, mean, rstd), mean and rstd non-differentiable; backward
    aclnnGroupNormSwishGrad, or without the swish PyTorch's native_group_norm_backward (see
    the module docstring for dtypes and releases)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, num_groups: int,
                data_format: Any = "NCHW", eps: float = 1e-5, activate_swish: bool = True,
                swish_scale: float = 1.0) -> tuple[Any, ...]:
        y, mean, rstd = ops.group_norm_swish(_plain(x), _plain(gamma), _plain(beta), num_groups, data_format, eps,
                                             activate_swish, swish_scale)
        ctx.mark_non_differentiable(mean, rstd)
        ctx.save_for_backward(x, gamma, beta, mean, rstd)
        ctx.attrs = (num_groups, data_format, bool(activate_swish), float(swish_scale))
        return y, mean, rstd

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, dy: torch.Tensor, grad_mean: Any, grad_rstd: Any) -> tuple[Any, ...]:
        x, gamma, beta, mean, rstd = (_plain(t) for t in ctx.saved_tensors)
        num_groups, data_format, swish, scale = ctx.attrs
        need_x, need_gamma, need_beta = ctx.needs_input_grad[:3]
        if not swish:  # the plain group norm's gradient, which no release's swish grad kernel gives
            dx, dgamma, dbeta = _group_norm_backward(dy, x, gamma, mean, rstd, num_groups,
                                                     (bool(need_x), bool(need_gamma), bool(need_beta)))
        else:
            # One dtype for all nine tensors: the pair's own when x and gamma share it, else
            # float32 (16-bit x with float32 gamma and statistics).
            work = x.dtype if x.dtype == gamma.dtype else torch.float32
            dy_, mean_, rstd_, x_, gamma_, beta_ = (t.to(work) for t in (dy, mean, rstd, x, gamma, beta))
            with _group_norm.swish_grad_caller(_group_norm.TORCH_BACKWARD):  # its warning names this wrapper
                dx, dgamma, dbeta = ops.group_norm_swish_grad(dy_, mean_, rstd_, x_, gamma_, beta_, num_groups,
                                                              data_format, scale, bool(need_gamma), bool(need_beta))
        return (dx.to(x.dtype) if need_x and dx is not None else None,
                dgamma.to(gamma.dtype) if need_gamma and dgamma is not None else None,
                dbeta.to(beta.dtype) if need_beta and dbeta is not None else None) + (None,) * 5


def _group_norm_backward(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor, mean: torch.Tensor,
                         rstd: torch.Tensor, num_groups: int, need: tuple[bool, bool, bool]
                         ) -> tuple[Any, Any, Any]:
    """(dx, dgamma, dbeta) of z = group_norm(x) * gamma + beta for the given mean and rstd:
    PyTorch's native_group_norm_backward in float32 (dbeta needs no beta), None where not
    needed."""
    n, c = x.shape[0], x.shape[1]
    hw = x.numel() // (n * c) if n * c else 0  # (the forward refuses empty tensors)
    f32 = torch.float32
    dx, dgamma, dbeta = torch.ops.aten.native_group_norm_backward(
        dy.to(f32).contiguous(), x.to(f32).contiguous(), mean.to(f32).reshape(n, num_groups),
        rstd.to(f32).reshape(n, num_groups), gamma.to(f32), n, c, hw, num_groups, list(need))
    return dx, dgamma, dbeta


# ---- functional wrappers ----------------------------------------------------------------------------

def upsample_nearest_exact1d(input: torch.Tensor, output_size: Pair, scales: float = 0.0) -> torch.Tensor:
    """ascend_aclnn.upsample_nearest_exact1d, differentiable (aclnn backward)."""
    return cast("torch.Tensor", UpsampleNearestExact1d.apply(input, output_size, scales))


def upsample_nearest_exact1d_backward(grad_output: torch.Tensor, output_size: Pair,
                                      input_size: Sequence[int], scales: float = 0.0) -> torch.Tensor:
    """ascend_aclnn.upsample_nearest_exact1d_backward, differentiable (its backward is the forward)."""
    return cast("torch.Tensor", UpsampleNearestExact1dBackward.apply(grad_output, output_size, input_size, scales))


def replication_pad2d(input: torch.Tensor, padding: Pair) -> torch.Tensor:
    """ascend_aclnn.replication_pad2d, differentiable (aclnn backward)."""
    return cast("torch.Tensor", ReplicationPad2d.apply(input, padding))


def replication_pad2d_backward(grad_output: torch.Tensor, input: torch.Tensor,
                               padding: Pair) -> torch.Tensor:
    """ascend_aclnn.replication_pad2d_backward, differentiable in grad_output (its backward is the forward)."""
    return cast("torch.Tensor", ReplicationPad2dBackward.apply(grad_output, input, padding))


def im2col(input: torch.Tensor, kernel_size: Pair, dilation: Pair = 1, padding: Pair = 0,
           stride: Pair = 1) -> torch.Tensor:
    """ascend_aclnn.im2col (F.unfold), differentiable (backward: im2col_backward)."""
    return cast("torch.Tensor", Im2col.apply(input, kernel_size, dilation, padding, stride))


def im2col_backward(grad_output: torch.Tensor, input_size: Pair, kernel_size: Pair, dilation: Pair = 1,
                    padding: Pair = 0, stride: Pair = 1) -> torch.Tensor:
    """ascend_aclnn.im2col_backward (F.fold), differentiable (backward: im2col)."""
    return cast("torch.Tensor",
                Im2colBackward.apply(grad_output, input_size, kernel_size, dilation, padding, stride))


unfold = im2col
fold = im2col_backward


def max_pool2d_with_mask(input: torch.Tensor, kernel_size: Pair, stride: Any = (), padding: Pair = 0,
                         dilation: Pair = 1, ceil_mode: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """ascend_aclnn.max_pool2d_with_mask -> (out, mask), differentiable in out (aclnn backward);
    stride None or () means the kernel size."""
    stride = () if stride is None else stride
    return cast("Tuple[torch.Tensor, torch.Tensor]",
                MaxPool2dWithMask.apply(input, kernel_size, stride, padding, dilation, ceil_mode))


def group_norm_swish(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, num_groups: int,
                     data_format: Any = "NCHW", eps: float = 1e-5, activate_swish: bool = True,
                     swish_scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """ascend_aclnn.group_norm_swish -> (y, mean, rstd), differentiable in y with respect to
    x, gamma and beta (aclnnGroupNormSwishGrad)."""
    return cast("Tuple[torch.Tensor, torch.Tensor, torch.Tensor]",
                GroupNormSwish.apply(x, gamma, beta, num_groups, data_format, eps, activate_swish, swish_scale))
