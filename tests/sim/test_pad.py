"""aclnnReplicationPad2d and aclnnReplicationPad2dBackward in the simulator: the checks a
C caller can reach that the binding never sends (the op_api's NULL and dtype order,
private formats, int64 overflow), the empty-tensor paths with no device memory behind
them, and strided outputs. The numerics against PyTorch's rule are in tests/test_pad.py
and tests/op_db (both backends).
"""
from __future__ import annotations

import numpy as np
import pytest

from . import sim_ctypes as sc

F32, BF16, ND, NCHW, NC1HWC0 = sc.ACL_FLOAT, sc.ACL_BF16, sc.FMT_ND, sc.FMT_NCHW, 3


class PadCalls:
    """Tensors, arrays and the two phase-1 calls over the rt/res fixtures."""

    def __init__(self, rt, res):
        self.rt, self.res = rt, res

    def T(self, shape, dtype=F32, fmt=ND, data=True, strides=None):
        """A tensor over 8 bytes of device memory per element it spans (data=False: none)."""
        n = int(np.prod(shape)) if strides is None else 1 + sum((d - 1) * st for d, st in zip(shape, strides))
        return self.res.tensor(shape, dtype, self.res.dev(nbytes=max(n * 8, 1)) if data else None, fmt=fmt,
                               strides=strides)

    def A(self, values):
        return self.res.ints(values)

    def fwd(self, x, pad, out):
        return self.rt.phase1("aclnnReplicationPad2d", x, pad, out)

    def bwd(self, g, x, pad, gi):
        return self.rt.phase1("aclnnReplicationPad2dBackward", g, x, pad, gi)

    def expect(self, result, status, text):
        rc, msg = result[0], self.rt.err()
        assert rc == status, (rc, msg)
        assert text in msg, msg

    def accepted(self, result):
        """Phase 1 succeeds; the executor is destroyed unrun."""
        assert result[0] == 0, (result, self.rt.err())
        self.rt.ok(self.rt.aclDestroyAclOpExecutor(result[2]))

    def run(self, result, fwd):
        """Phase 1 succeeded with no workspace: run phase 2 on the default stream and sync."""
        rc, ws, ex = result
        assert rc == 0 and ws == 0, (rc, ws, self.rt.err())
        phase2 = self.rt.aclnnReplicationPad2d if fwd else self.rt.aclnnReplicationPad2dBackward
        self.rt.ok(phase2(None, 0, ex, None))
        self.rt.ok(self.rt.aclrtSynchronizeStream(None))


@pytest.fixture
def pad(rt, res, request):
    """PadCalls; at the end every tensor, array and buffer the test made must still be
    destroyable and freeable (nothing was consumed by the operator)."""
    failed_before = request.session.testsfailed
    yield PadCalls(rt, res)
    if request.session.testsfailed == failed_before:
        res.close(strict=True)


def test_backward_checks_self_before_grad_output(pad):
    """NULLs in the op_api's order: the backward checks self before gradOutput."""
    P = pad.A([1, 1, 1, 1])
    pad.expect(pad.bwd(None, None, P, pad.T([1, 1, 3, 4])), 161001, "self is NULL")
    pad.expect(pad.bwd(None, pad.T([1, 1, 3, 4]), None, pad.T([1, 1, 3, 4])), 161001, "gradOutput is NULL")
    pad.expect(pad.fwd(None, None, None), 161001, "self is NULL")


def test_backward_looks_at_the_grad_input_dtype_first(pad):
    """dtypes: gradInput is looked at first, then gradOutput, then self."""
    P = pad.A([1, 1, 1, 1])
    pad.expect(pad.bwd(pad.T([1, 1, 5, 6], sc.ACL_INT32), pad.T([1, 1, 3, 4], sc.ACL_INT8), P,
                       pad.T([1, 1, 3, 4], sc.ACL_INT64)), 161002, "gradInput dtype must be")


def test_formats(pad):
    """Private layouts and unequal formats are refused; the forward checks formats before
    dtypes; equal formats other than ND are fine."""
    P = pad.A([1, 1, 1, 1])
    pad.expect(pad.bwd(pad.T([1, 1, 5, 6]), pad.T([1, 1, 3, 4], fmt=NC1HWC0), P, pad.T([1, 1, 3, 4], fmt=NC1HWC0)),
               161002, "only supports ND")
    pad.expect(pad.bwd(pad.T([1, 1, 5, 6], fmt=NCHW), pad.T([1, 1, 3, 4]), P, pad.T([1, 1, 3, 4])), 161002,
               "must be equal")
    pad.expect(pad.fwd(pad.T([1, 1, 3, 4], sc.ACL_BOOL), P, pad.T([1, 1, 5, 6], sc.ACL_BOOL, fmt=NCHW)), 161002,
               "format")
    pad.accepted(pad.fwd(pad.T([1, 1, 3, 4], fmt=NCHW), P, pad.T([1, 1, 5, 6], fmt=NCHW)))


def test_pads_whose_sum_overflows_int64_are_refused_not_wrapped(pad):
    big = pad.A([2**62, 2**62, 0, 0])
    pad.expect(pad.fwd(pad.T([1, 1, 3, 4]), big, pad.T([1, 1, 3, 4])), 161002, "out shape")
    pad.expect(pad.bwd(pad.T([1, 1, 3, 4]), pad.T([1, 1, 3, 4]), big, pad.T([1, 1, 3, 4])), 161002,
               "gradOutput shape")


def test_the_bf16_rule_is_the_backwards_only(pad):
    """The backward's bfloat16 pads: >= 0, and <= 7 once the height is padded; the forward
    takes any pad."""
    pad.accepted(pad.bwd(pad.T([1, 1, 3, 14], BF16), pad.T([1, 1, 3, 4], BF16), pad.A([8, 2, 0, 0]),
                         pad.T([1, 1, 3, 4], BF16)))
    pad.expect(pad.bwd(pad.T([1, 1, 4, 14], BF16), pad.T([1, 1, 3, 4], BF16), pad.A([8, 2, 1, 0]),
                       pad.T([1, 1, 3, 4], BF16)), 161002, "bf16")
    pad.accepted(pad.fwd(pad.T([1, 1, 3, 4], BF16), pad.A([8, 2, 1, 0]), pad.T([1, 1, 4, 14], BF16)))


def test_n0_succeeds_and_runs_nothing_without_device_memory(pad):
    P = pad.A([1, 1, 1, 1])
    pad.run(pad.fwd(pad.T([0, 2, 3, 4], data=False), P, pad.T([0, 2, 5, 6], data=False)), fwd=True)
    pad.run(pad.bwd(pad.T([0, 2, 5, 6], data=False), pad.T([0, 2, 3, 4], data=False), P,
                    pad.T([0, 2, 3, 4], data=False)), fwd=False)


def test_a_grad_output_cropped_to_empty_leaves_grad_input_as_it_was(pad, rt, res):
    """A 4-D input cropped to an empty gradOutput: success, gradInput left as it was (fresh
    simulated memory is 0xFF bytes, NaN): this is why the binding zero-fills it."""
    gi_ptr = res.dev(np.full((1, 1, 2, 4), np.nan, np.float32))
    gi = res.tensor([1, 1, 2, 4], F32, gi_ptr, fmt=ND)
    pad.run(pad.bwd(pad.T([1, 1, 0, 4]), pad.T([1, 1, 2, 4]), pad.A([0, 0, -1, -1]), gi), fwd=False)
    assert np.isnan(rt.download(gi_ptr, 8, np.float32)).all()


def test_grad_output_leading_dims_must_match_selfs(pad):
    """Simulator strictness: the op_api compares only H and W."""
    pad.expect(pad.bwd(pad.T([2, 1, 5, 6]), pad.T([1, 1, 3, 4]), pad.A([1, 1, 1, 1]), pad.T([1, 1, 3, 4])),
               161002, "leading dims")


def test_a_strided_out_is_written_through_its_strides(pad, rt, res):
    """out (1, 1, 3, 4) over every other float of a 24-float buffer."""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    xt = res.tensor([1, 1, 2, 2], F32, res.dev(x), fmt=ND)
    op = res.dev(np.full(24, -1, np.float32))
    ot = res.tensor([1, 1, 3, 4], F32, op, fmt=ND, strides=[24, 24, 8, 2])
    pad.run(pad.fwd(xt, pad.A([1, 1, 0, 1]), ot), fwd=True)
    got = rt.download(op, 24, np.float32)
    assert got[0::2].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3], got
    assert (got[1::2] == -1).all()


# (dtype, its bit patterns as unsigned ints): a signalling NaN, -0, 1.5, a quiet NaN with a payload
BITS = {
    F32: (np.uint32, [0x7F800001, 0x80000000, 0x3FC00000, 0xFFC12345]),
    sc.ACL_FLOAT16: (np.uint16, [0x7C01, 0x8000, 0x3E00, 0xFE5A]),
    BF16: (np.uint16, [0x7F81, 0x8000, 0x3FC0, 0xFFC5]),
}


def _backward_bits(pad, rt, res, dtype, g, shape, pads):
    ut = BITS[dtype][0]
    gt = res.tensor(list(g.shape), dtype, res.dev(g), fmt=ND)
    xt = res.tensor(shape, dtype, res.dev(nbytes=8 * int(np.prod(shape))), fmt=ND)
    gip = res.dev(nbytes=8 * int(np.prod(shape)))
    gi = res.tensor(shape, dtype, gip, fmt=ND)
    pad.run(pad.bwd(gt, xt, pad.A(pads), gi), fwd=False)
    return [hex(v) for v in rt.download(gip, int(np.prod(shape)), ut)]


@pytest.mark.parametrize("dtype", sorted(BITS), ids=["f32", "f16", "bf16"])
def test_the_backward_copies_what_it_reads_once(pad, rt, res, dtype):
    """With zero pads gradInput is gradOutput: copies, not arithmetic, so a signalling NaN
    stays signalling (f32 0x7F800001, f16 0x7C01, bf16 0x7F81: not their quiet forms) and -0
    stays -0. With pads, a position read once is still a copy, and a sum starts from its
    first term (-0 + -0 is -0)."""
    ut, bits = BITS[dtype]
    g = np.array(bits, ut).reshape(1, 1, 2, 2)
    assert _backward_bits(pad, rt, res, dtype, g, [1, 1, 2, 2], [0, 0, 0, 0]) == [hex(v) for v in bits]
    # left pad 1: column 0 is read twice (gradOutput columns 0 and 1), column 1 once (column 2)
    g3 = np.array([bits[1], bits[1], bits[0], bits[1], bits[1], bits[3]], ut).reshape(1, 1, 2, 3)
    assert _backward_bits(pad, rt, res, dtype, g3, [1, 1, 2, 2], [1, 0, 0, 0]) == [
        hex(bits[1]), hex(bits[0]), hex(bits[1]), hex(bits[3])]
