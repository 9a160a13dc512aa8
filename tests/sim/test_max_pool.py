"""aclnnMaxPool2dWithMask and aclnnMaxPool2dWithMaskBackward in the simulator, called as C
does: the op_api's own order for kernelSize (and its NULLPTR for a bad length in the
backward), and the mask of the official example byte by byte. The mask against PyTorch's
indices, the 1x1 bitmask and the numerics are in tests/test_max_pool.py (both backends).
"""
from __future__ import annotations

import numpy as np
import pytest

from . import sim_ctypes as sc

F32, I8, NCHW = sc.ACL_FLOAT, sc.ACL_INT8, sc.FMT_NCHW
FWD, BWD = "aclnnMaxPool2dWithMask", "aclnnMaxPool2dWithMaskBackward"


def test_kernel_size_is_checked_before_the_other_pointers(rt, res):
    x = res.tensor([1, 1, 4, 3], F32, res.dev(nbytes=48), fmt=NCHW)
    out = res.tensor([1, 1, 2, 1], F32, res.dev(nbytes=8), fmt=NCHW)
    assert rt.phase1(FWD, None, None, None, None, None, False, None, None)[0] == sc.PARAM_NULLPTR
    assert rt.err().endswith("kernelSize is NULL")
    # its length comes before the NULL checks of stride, padding, dilation and indices
    three = res.ints([2, 2, 2])
    assert rt.phase1(FWD, x, three, None, None, None, False, out, None)[0] == sc.PARAM_INVALID
    assert "kernelSize must have 1 or 2 elements, got 3" in rt.err()
    # the backward reports that length as ACLNN_ERR_PARAM_NULLPTR, as its op_api does
    assert rt.phase1(BWD, out, x, None, three, None, None, None, False, None)[0] == sc.PARAM_NULLPTR
    assert "kernelSize must have 1 or 2 elements, got 3 (reported as NULLPTR" in rt.err()


def test_the_official_example_and_its_gradient(rt, res):
    """self (1, 1, 4, 3) = 0..11, kernel 2, stride 2: windows rows 0-1 and 2-3 of columns
    0-1, maxima 4 at (1, 1) and 10 at (3, 1). The mask (1, 1, 4, 64) starts with those flat
    indices as little-endian int32; the rest of it is never written. The backward sums
    gradOutput into those positions in an fp32 workspace of N*C*H*W*4 bytes."""
    x = np.arange(12, dtype=np.float32)
    xt = res.tensor([1, 1, 4, 3], F32, res.dev(x), fmt=NCHW)
    outp, maskp = res.dev(nbytes=8), res.dev(nbytes=256)
    out = res.tensor([1, 1, 2, 1], F32, outp, fmt=NCHW)
    mask = res.tensor([1, 1, 4, 64], I8, maskp, fmt=NCHW)
    k, s, p, d = res.ints([2, 2]), res.ints([2, 2]), res.ints([0, 0]), res.ints([1, 1])
    rc, ws, ex = rt.phase1(FWD, xt, k, s, p, d, False, out, mask)
    assert (rc, ws) == (0, 0), rt.err()
    rt.ok(rt.aclnnMaxPool2dWithMask(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(outp, 2, np.float32).tolist() == [4, 10]
    raw = rt.download(maskp, 256, np.uint8)
    assert raw[:8].tolist() == [4, 0, 0, 0, 10, 0, 0, 0]
    assert (raw[8:] == 0xFF).all()  # fresh simulated memory, as the NPU leaves it

    g = res.tensor([1, 1, 2, 1], F32, res.dev(np.ones(2, np.float32)), fmt=NCHW)
    gip = res.dev(nbytes=48)
    gi = res.tensor([1, 1, 4, 3], F32, gip, fmt=NCHW)
    rc, ws, ex = rt.phase1(BWD, g, xt, mask, k, s, p, d, False, gi)
    assert (rc, ws) == (0, 48), rt.err()
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnMaxPool2dWithMaskBackward(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    want = np.zeros(12, np.float32)
    want[[4, 10]] = 1
    assert rt.download(gip, 12, np.float32).tolist() == want.tolist()


def test_neither_executor_can_be_made_repeatable(rt, res):
    """Both op_apis give their kernel a copy of the mask's address, which the address
    setters could not move, so (as in current opbase) aclSetAclOpExecutorRepeatable refuses
    with 561000; the executor stays an ordinary one, which its phase 2 consumes. N = 0 runs
    no kernel, holds no address, and can be."""
    x = np.arange(12, dtype=np.float32)
    xt = res.tensor([1, 1, 4, 3], F32, res.dev(x), fmt=NCHW)
    out = res.tensor([1, 1, 2, 1], F32, res.dev(nbytes=8), fmt=NCHW)
    mask = res.tensor([1, 1, 4, 64], I8, res.dev(nbytes=256), fmt=NCHW)
    k, s, p, d = res.ints([2, 2]), res.ints([2, 2]), res.ints([0, 0]), res.ints([1, 1])
    rc, _, ex = rt.phase1(FWD, xt, k, s, p, d, False, out, mask)
    assert rc == 0, rt.err()
    assert rt.aclSetAclOpExecutorRepeatable(ex) == sc.INNER
    msg = rt.err()
    assert "aclnnMaxPool2dWithMask's executor cannot be made repeatable" in msg
    assert "copy of the mask's device address" in msg
    rt.ok(rt.aclnnMaxPool2dWithMask(None, 0, ex, rt.stream))
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER               # consumed: it was never repeatable
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))

    g = res.tensor([1, 1, 2, 1], F32, res.dev(np.ones(2, np.float32)), fmt=NCHW)
    gi = res.tensor([1, 1, 4, 3], F32, res.dev(nbytes=48), fmt=NCHW)
    rc, ws, ex = rt.phase1(BWD, g, xt, mask, k, s, p, d, False, gi)
    assert rc == 0, rt.err()
    assert rt.aclSetAclOpExecutorRepeatable(ex) == sc.INNER
    assert "aclnnMaxPool2dWithMaskBackward's executor cannot be made repeatable" in rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))                           # an unrun one can still be destroyed

    x0 = res.tensor([0, 1, 4, 3], F32, None, fmt=NCHW)
    out0 = res.tensor([0, 1, 2, 1], F32, None, fmt=NCHW)
    mask0 = res.tensor([0, 1, 4, 64], I8, None, fmt=NCHW)
    rc, _, ex = rt.phase1(FWD, x0, k, s, p, d, False, out0, mask0)
    assert rc == 0, rt.err()
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


# (dtype, its bit patterns as unsigned ints): a signalling NaN, -0, 1.5, a quiet NaN with a payload
BITS = {
    sc.ACL_FLOAT: (np.uint32, [0x7F800001, 0x80000000, 0x3FC00000, 0xFFC12345]),
    sc.ACL_FLOAT16: (np.uint16, [0x7C01, 0x8000, 0x3E00, 0xFE5A]),
    sc.ACL_BF16: (np.uint16, [0x7F81, 0x8000, 0x3FC0, 0xFFC5]),
}


@pytest.mark.parametrize("dtype", sorted(BITS), ids=["f32", "f16", "bf16"])
def test_a_1x1_backward_copies_the_bits(rt, res, dtype):
    """With a 1x1 kernel every gradient lands on one input position: a copy, not arithmetic,
    so a signalling NaN stays signalling (f32 0x7F800001, not 0x7FC00001; f16 0x7C01, not
    0x7E01; bf16 0x7F81, not 0x7FC0) and -0 stays -0, as the numpy backend keeps them.
    Input 3x3, stride 2: the gradient goes to the four corners, zeros elsewhere."""
    ut, bits = BITS[dtype]
    isz = np.dtype(ut).itemsize
    g = np.array(bits, ut)
    gt = res.tensor([1, 1, 2, 2], dtype, res.dev(g), fmt=NCHW)
    xt = res.tensor([1, 1, 3, 3], dtype, res.dev(nbytes=9 * isz), fmt=NCHW)
    mask = res.tensor([1, 1, 1, 64], I8, res.dev(nbytes=64), fmt=NCHW)
    gip = res.dev(nbytes=9 * isz)
    gi = res.tensor([1, 1, 3, 3], dtype, gip, fmt=NCHW)
    k, s, p, d = res.ints([1, 1]), res.ints([2, 2]), res.ints([0, 0]), res.ints([1, 1])
    rc, ws, ex = rt.phase1(BWD, gt, xt, mask, k, s, p, d, False, gi)
    assert rc == 0, rt.err()
    rt.ok(rt.aclnnMaxPool2dWithMaskBackward(res.dev(nbytes=ws), ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    want = np.zeros(9, ut)
    want[[0, 2, 6, 8]] = g
    assert [hex(v) for v in rt.download(gip, 9, ut)] == [hex(v) for v in want]
