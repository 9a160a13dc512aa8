"""aclnnIm2col and aclnnIm2colBackward in the simulator, called as C does: the official
example against the definition, the order of the array checks (every length, then
kernelSize, stride, dilation, padding), and an empty gradOutput leaving out unwritten.
The numerics against PyTorch are in tests/test_im2col.py (both backends).
"""
from __future__ import annotations

import itertools

import numpy as np

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
