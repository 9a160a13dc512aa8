"""aclnnIm2col and aclnnIm2colBackward in the simulator, called as C does: the official
example against the definition, the order of the array checks (every length, then
kernelSize, stride, dilation, padding), and an empty gradOutput leaving out unwritten.
The numerics against PyTorch are in tests/test_im2col.py (both backends). And what the
real op_api does to the caller's own 4-D aclTensor: it reformats it to NCHW in place.
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

from . import sim_ctypes as sc

F32, ND = sc.ACL_FLOAT, sc.FMT_ND
FWD, BWD = "aclnnIm2col", "aclnnIm2colBackward"


def _arrays(res, kernel, dilation, padding, stride):
    return [res.ints(v) for v in (kernel, dilation, padding, stride)]


def test_the_official_example_is_the_definition(rt, res):
    """self (2, 2, 3), kernel 2x2, dilation 1, padding 1, stride 2: 2x2 blocks, out (8, 4),
    out[c*4 + ki*2 + kj, oh*2 + ow] = self[c, 2*oh - 1 + ki, 2*ow - 1 + kj], 0 outside."""
    x = np.arange(1, 13, dtype=np.float32).reshape(2, 2, 3)
    outp = res.dev(nbytes=8 * 4 * 4)
    rc, ws, ex = rt.phase1(FWD, res.tensor([2, 2, 3], F32, res.dev(x), fmt=ND),
                           *_arrays(res, [2, 2], [1, 1], [1, 1], [2, 2]), res.tensor([8, 4], F32, outp, fmt=ND))
    assert (rc, ws) == (0, 0), rt.err()
    rt.ok(rt.aclnnIm2col(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    want = np.zeros((8, 4), np.float32)
    for c, ki, kj, oh, ow in itertools.product(range(2), range(2), range(2), range(2), range(2)):
        h, w = 2 * oh - 1 + ki, 2 * ow - 1 + kj
        if 0 <= h < 2 and 0 <= w < 3:
            want[c * 4 + ki * 2 + kj, oh * 2 + ow] = x[c, h, w]
    assert rt.download(outp, 32, np.float32).reshape(8, 4).tolist() == want.tolist()


def test_every_length_then_kernel_stride_dilation_padding(rt, res):
    x = res.tensor([1, 4, 4], F32, res.dev(nbytes=64), fmt=ND)
    out = res.tensor([4, 9], F32, res.dev(nbytes=144), fmt=ND)
    cases = [  # (kernel, dilation, padding, stride), what the message names
        (([0, 0], [1, 1], [0, 0], [1]), "stride must have 2 elements (H, W), got 1"),
        (([2, 2], [0, 1], [0, 0], [0, 1]), "stride must be >= 1, got (0, 1)"),
        (([2, 2], [0, 1], [-1, 0], [1, 1]), "dilation must be >= 1, got (0, 1)"),
        (([2, 2], [1, 1], [-1, 0], [1, 1]), "padding must be >= 0, got (-1, 0)"),
    ]
    for arrays, message in cases:
        assert rt.phase1(FWD, x, *_arrays(res, *arrays), out)[0] == sc.PARAM_INVALID, arrays
        assert rt.err().endswith(message), arrays


def test_an_empty_grad_output_succeeds_and_leaves_out_unwritten(rt, res):
    """gradOutput (2, 16, 0): no block fits a 1x3 image with a 4x4 kernel. The op succeeds
    and, as on the NPU, writes nothing: out keeps its fresh 0xFF bytes."""
    outp = res.dev(nbytes=2 * 3 * 4)
    rc, ws, ex = rt.phase1(BWD, res.tensor([2, 16, 0], F32, None, fmt=ND), res.ints([1, 3]),
                           *_arrays(res, [4, 4], [1, 1], [0, 0], [2, 2]), res.tensor([2, 1, 1, 3], F32, outp, fmt=ND))
    assert (rc, ws) == (0, 0), rt.err()
    rt.ok(rt.aclnnIm2colBackward(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert (rt.download(outp, 24, np.uint8) == 0xFF).all()


# ---------------------------------------------------------------------------------------------
# the caller's aclTensor reformatted in place (ops-math aclnn_im2col.cpp: Contiguous hands back
# the caller's object, ReFormat without an executor changes it)
# ---------------------------------------------------------------------------------------------

def _format(rt, t):
    f = ctypes.c_int(-7)
    rt.ok(rt.aclGetFormat(t, ctypes.byref(f)), "aclGetFormat")
    return f.value


def _im2col_phase1(rt, res, x, out_shape, **arrays):
    k = dict(kernel=[2, 2], dilation=[1, 1], padding=[0, 0], stride=[1, 1], **arrays)
    out = res.tensor(out_shape, F32, res.dev(nbytes=4 * max(int(np.prod(out_shape)), 1)), fmt=ND)
    return rt.phase1(FWD, x, *_arrays(res, k["kernel"], k["dilation"], k["padding"], k["stride"]), out)


def test_a_4d_self_whose_storage_is_its_view_becomes_nchw(rt, res):
    """Phase 1 alone does it (the executor is destroyed unrun), and it lasts: the replication
    pads, which compare formats, then refuse that handle next to ND tensors with 161002."""
    xp = res.dev(nbytes=64)
    x = res.tensor([1, 1, 4, 4], F32, xp, fmt=ND)          # storage dims = view dims
    rc, _, ex = _im2col_phase1(rt, res, x, [1, 4, 9])
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert _format(rt, x) == sc.FMT_NCHW
    pads = res.ints([1, 1, 1, 1])
    out = res.tensor([1, 1, 6, 6], F32, res.dev(nbytes=144), fmt=ND)
    assert rt.phase1("aclnnReplicationPad2d", x, pads, out)[0] == sc.PARAM_INVALID
    assert "self format NCHW (0) and out format ND (2) must be equal" in rt.err()
    g = res.tensor([1, 1, 6, 6], F32, res.dev(nbytes=144), fmt=ND)
    gi = res.tensor([1, 1, 4, 4], F32, res.dev(nbytes=64), fmt=ND)
    assert rt.phase1("aclnnReplicationPad2dBackward", g, x, pads, gi)[0] == sc.PARAM_INVALID
    assert "gradOutput ND (2), self NCHW (0) and gradInput ND (2) must be equal" in rt.err()
    # a handle over the same memory with 1-D storage dims (torch_npu's convention) is fine
    x1 = res.tensor([1, 1, 4, 4], F32, xp, fmt=ND, storage=[16])
    rc, _, ex = rt.phase1("aclnnReplicationPad2d", x1, pads, out)
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_a_strided_but_contiguous_self_with_an_offset_is_reformatted_too(rt, res):
    """Contiguity ignores the view offset and the strides of size-1 dims."""
    x = res.tensor([1, 1, 4, 4], F32, res.dev(nbytes=128), fmt=ND, strides=[99, 7, 4, 1], offset=5)
    rc, _, ex = _im2col_phase1(rt, res, x, [1, 4, 9])
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert _format(rt, x) == sc.FMT_NCHW


@pytest.mark.parametrize("case", ["1-D storage", "3-D self", "non-contiguous", "N = 0", "phase 1 fails"])
def test_what_is_not_reformatted(rt, res, case):
    """A view in between (other storage dims, the 3-D self's unsqueeze, a contiguous copy),
    the empty-self early return, and a refusal before that step leave the handle alone."""
    p = res.dev(nbytes=256)
    if case == "1-D storage":
        x, out = res.tensor([1, 1, 4, 4], F32, p, fmt=ND, storage=[16]), [1, 4, 9]
    elif case == "3-D self":
        x, out = res.tensor([1, 4, 4], F32, p, fmt=ND), [4, 9]
    elif case == "non-contiguous":
        x, out = res.tensor([1, 1, 4, 4], F32, p, fmt=ND, strides=[32, 32, 8, 1]), [1, 4, 9]
    elif case == "N = 0":
        x, out = res.tensor([0, 1, 4, 4], F32, p, fmt=ND), [0, 4, 9]
    else:
        x, out = res.tensor([1, 1, 4, 4], F32, p, fmt=ND), [1, 4, 8]      # wrong out shape
    rc, _, ex = _im2col_phase1(rt, res, x, out)
    if case == "phase 1 fails":
        assert rc == sc.PARAM_INVALID and "out shape must be" in rt.err()
    else:
        assert rc == 0, rt.err()
        rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert _format(rt, x) == ND
