"""aclnnUpsampleNearestExact1d and aclnnUpsampleNearestExact1dBackward in the simulator:
the phase-1 checks in the real op_api's order, and the numerics of the A2/A3 kernels.

Expected values are written out by hand from CANN's headers and operator sources (the
numerics from the kernels' float32 arithmetic); nothing here is produced by the code
under test.
"""
from __future__ import annotations

from ctypes import byref, c_uint64, c_void_p

import numpy as np
import pytest

from . import sim_ctypes as sc

NCL, ND = sc.FMT_NCL, sc.FMT_ND
F32, F16, BF16, U8, I32 = sc.ACL_FLOAT, sc.ACL_FLOAT16, sc.ACL_BF16, sc.ACL_UINT8, sc.ACL_INT32
f16_bits = sc.f16_bits


def run_fwd(s, res, x, dtype, lout, scales=0.0, fmt=NCL):
    n, c, _ = x.shape
    isz = sc.ITEMSIZE[dtype]
    xt = res.tensor(x.shape, dtype, res.dev(x), fmt=fmt)
    outp = res.dev(nbytes=n * c * lout * isz)
    ot = res.tensor([n, c, lout], dtype, outp, fmt=fmt)
    rc, ws, ex = s.fwd_prepare(xt, res.ints([lout]), scales, ot)
    s.ok(rc, "forward phase 1")
    wsp = res.dev(nbytes=ws) if ws else None
    s.ok(s.aclnnUpsampleNearestExact1d(wsp, ws, ex, s.stream), "forward phase 2")
    s.ok(s.aclrtSynchronizeStream(s.stream), "sync")
    return s.download(outp, n * c * lout, sc.NP_DTYPE[dtype]).reshape(n, c, lout), ws


def run_bwd(s, res, g, dtype, lin, scales=0.0):
    n, c, lout = g.shape
    isz = sc.ITEMSIZE[dtype]
    gt = res.tensor(g.shape, dtype, res.dev(g))
    outp = res.dev(nbytes=n * c * lin * isz)
    ot = res.tensor([n, c, lin], dtype, outp)
    rc, ws, ex = s.bwd_prepare(gt, res.ints([lout]), res.ints([n, c, lin]), scales, ot)
    s.ok(rc, "backward phase 1")
    wsp = res.dev(nbytes=ws) if ws else None
    s.ok(s.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, s.stream), "backward phase 2")
    s.ok(s.aclrtSynchronizeStream(s.stream), "sync")
    return s.download(outp, n * c * lin, sc.NP_DTYPE[dtype]).reshape(n, c, lin), ws



# ---------------------------------------------------------------------------------------------
# operator checks, table-driven (order as in the real op_api)
# ---------------------------------------------------------------------------------------------

BWD_BASE = dict(g_shape=[2, 3, 4], g_dtype=F32, g_fmt=NCL, o_shape=[2, 3, 8], o_dtype=F32,
                o_fmt=NCL, osz=[4], isz=[2, 3, 8], scales=0.0)

# name: (changes to BWD_BASE, expected status, message fragment)
BWD_CASES = {
    "gradOutput NULL": (dict(g="NULL"), sc.PARAM_NULLPTR, "gradOutput is NULL"),
    "inputSize NULL": (dict(isz="NULL"), sc.PARAM_NULLPTR, "inputSize is NULL"),
    "out NULL": (dict(o="NULL"), sc.PARAM_NULLPTR, "out is NULL"),
    "outputSize NULL": (dict(osz="NULL"), sc.PARAM_NULLPTR, "outputSize is NULL"),
    "outputSize NULL after inputSize NULL": (dict(osz="NULL", isz="NULL"), sc.PARAM_NULLPTR,
                                             "inputSize is NULL"),
    "gradOutput destroyed": (dict(g="DEAD"), sc.INNER_NULLPTR, "gradOutput"),
    "outputSize is a tensor": (dict(osz="TENSOR"), sc.INNER_NULLPTR, "outputSize"),
    "inputSize destroyed": (dict(isz="DEAD"), sc.INNER_NULLPTR, "inputSize"),
    "out destroyed": (dict(o="DEAD"), sc.INNER_NULLPTR, "out"),
    "NULL beats dead handle": (dict(g="DEAD", o="NULL"), sc.PARAM_NULLPTR, "out is NULL"),
    "dtype int32": (dict(g_dtype=I32, o_dtype=I32), sc.PARAM_INVALID, "gradOutput dtype"),
    "dtype uint8": (dict(g_dtype=U8, o_dtype=U8), sc.PARAM_INVALID, "gradOutput dtype"),
    "dtype double": (dict(g_dtype=sc.ACL_DOUBLE, o_dtype=sc.ACL_DOUBLE), sc.PARAM_INVALID,
                     "gradOutput dtype"),
    "out dtype differs": (dict(o_dtype=F16), sc.PARAM_INVALID, "out dtype"),
    "dtype before rank": (dict(g_dtype=I32, o_dtype=I32, g_shape=[2, 3]), sc.PARAM_INVALID,
                          "gradOutput dtype"),
    "formats differ": (dict(g_fmt=ND), sc.PARAM_INVALID, "must be equal"),
    "format NCHW": (dict(g_fmt=sc.FMT_NCHW, o_fmt=sc.FMT_NCHW), sc.PARAM_INVALID, "format must be"),
    "format FRACTAL_NZ": (dict(g_fmt=sc.FMT_FRACTAL_NZ, o_fmt=sc.FMT_FRACTAL_NZ), sc.PARAM_INVALID,
                          "format must be"),
    "gradOutput 2-D": (dict(g_shape=[2, 3]), sc.PARAM_INVALID, "gradOutput must be 3-D"),
    "gradOutput 4-D": (dict(g_shape=[2, 3, 4, 1]), sc.PARAM_INVALID, "gradOutput must be 3-D"),
    "out 4-D": (dict(o_shape=[2, 3, 8, 1]), sc.PARAM_INVALID, "out must be 3-D"),
    "inputSize len 2": (dict(isz=[3, 8]), sc.PARAM_INVALID, "inputSize must have 3 elements"),
    "outputSize len 2": (dict(osz=[4, 4]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "outputSize len 0": (dict(osz=[]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "N differs": (dict(o_shape=[1, 3, 8], isz=[1, 3, 8]), sc.PARAM_INVALID, "same N and C"),
    "C differs": (dict(o_shape=[2, 2, 8], isz=[2, 2, 8]), sc.PARAM_INVALID, "same N and C"),
    "N/C before scales": (dict(o_shape=[1, 3, 8], scales=-1.0), sc.PARAM_INVALID, "same N and C"),
    "scales negative": (dict(scales=-0.5), sc.PARAM_INVALID, "scales must be >= 0"),
    "scales 51": (dict(scales=51.0, o_shape=[2, 3, 1], isz=[2, 3, 1]), sc.PARAM_INVALID,
                  "scales is too large"),
    "derived ratio 1/51": (dict(g_shape=[2, 3, 51], osz=[51], o_shape=[2, 3, 1], isz=[2, 3, 1]),
                           sc.PARAM_INVALID, "scales is too large"),
    "L=0 derived: ratio check first": (dict(g_shape=[2, 3, 0]), sc.PARAM_INVALID,
                                       "scales is too large"),
    "L=0 with scales": (dict(g_shape=[2, 3, 0], scales=2.0), sc.PARAM_INVALID,
                        "gradOutput dims N, C, L must all be > 0"),
    "N=0": (dict(g_shape=[0, 3, 4], o_shape=[0, 3, 8], isz=[0, 3, 8]), sc.PARAM_INVALID,
            "must all be > 0"),
    "inputSize[2]=0": (dict(isz=[2, 3, 0], scales=2.0), sc.PARAM_INVALID, "inputSize[2] must be > 0"),
    "out L differs from inputSize": (dict(isz=[2, 3, 9]), sc.PARAM_INVALID, "must equal inputSize"),
    "inputSize N/C differ from out": (dict(isz=[1, 3, 8]), sc.PARAM_INVALID, "must equal inputSize"),
}
BWD_OK = {
    "base": {},
    "ND format": dict(g_fmt=ND, o_fmt=ND),
    "fp16": dict(g_dtype=F16, o_dtype=F16),
    "bf16": dict(g_dtype=BF16, o_dtype=BF16),
    "scales 50 (limit)": dict(scales=50.0, o_shape=[2, 3, 1], isz=[2, 3, 1]),
    "derived ratio 1/50 (limit)": dict(g_shape=[2, 3, 50], osz=[50], o_shape=[2, 3, 1],
                                       isz=[2, 3, 1]),
    "outputSize value is not checked": dict(osz=[123]),
}


def _make_tensor_arg(rt, res, spec, shape, dtype, fmt):
    if spec == "NULL":
        return None
    if spec == "TENSOR":
        return res.tensor([1], F32, None, fmt=ND)
    numel = int(np.prod(shape)) if shape else 1
    ptr = res.dev(nbytes=max(numel, 1) * sc.ITEMSIZE[dtype])
    if spec == "DEAD":
        h = rt.tensor(shape, dtype, ptr, fmt=fmt)
        rt.ok(rt.aclDestroyTensor(h))
        return h
    return res.tensor(shape, dtype, ptr, fmt=fmt)


def _make_array_arg(rt, res, spec):
    if isinstance(spec, list):
        return res.ints(spec)
    if spec == "NULL":
        return None
    if spec == "TENSOR":
        return res.tensor([1], F32, None, fmt=ND)
    h = rt.int_array([1])
    rt.ok(rt.aclDestroyIntArray(h))
    return h


def _bwd_args(rt, res, changes):
    p = dict(BWD_BASE, **changes)
    g = _make_tensor_arg(rt, res, p.get("g"), p["g_shape"], p["g_dtype"], p["g_fmt"])
    o = _make_tensor_arg(rt, res, p.get("o"), p["o_shape"], p["o_dtype"], p["o_fmt"])
    osz = _make_array_arg(rt, res, p["osz"])
    isz = _make_array_arg(rt, res, p["isz"])
    return g, osz, isz, p["scales"], o


@pytest.mark.parametrize("case", list(BWD_CASES))
def test_backward_checks(rt, res, case):
    changes, status, fragment = BWD_CASES[case]
    args = _bwd_args(rt, res, changes)
    execs = rt.count("executors")
    rc, ws, ex = rt.bwd_prepare(*args)
    msg = rt.err()
    assert rc == status, msg
    assert msg.startswith("aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize: ")
    assert fragment in msg
    assert (ws, ex) == (12345, 0xDEAD0)                         # outputs untouched
    assert rt.count("executors") == execs                       # no executor created


@pytest.mark.parametrize("case", list(BWD_OK))
def test_backward_accepts(rt, res, case):
    rc, ws, ex = rt.bwd_prepare(*_bwd_args(rt, res, BWD_OK[case]))
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_backward_null_out_params(rt, res):
    g, osz, isz, scales, o = _bwd_args(rt, res, {})
    ws, ex = c_uint64(), c_void_p()
    f = rt.aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize
    assert f(g, osz, isz, scales, o, None, byref(ex)) == sc.PARAM_NULLPTR
    assert f(g, osz, isz, scales, o, byref(ws), None) == sc.PARAM_NULLPTR
    assert f(None, osz, isz, scales, o, None, None) == sc.PARAM_NULLPTR


FWD_BASE = dict(x_shape=[1, 3, 3], x_dtype=F32, x_fmt=NCL, o_shape=[1, 3, 5], o_dtype=F32,
                o_fmt=NCL, osz=[5], scales=0.0)
FWD_CASES = {
    "self NULL": (dict(x="NULL"), sc.PARAM_NULLPTR, "self is NULL"),
    "outputSize NULL": (dict(osz="NULL"), sc.PARAM_NULLPTR, "outputSize is NULL"),
    "out NULL": (dict(o="NULL"), sc.PARAM_NULLPTR, "out is NULL"),
    "self destroyed": (dict(x="DEAD"), sc.INNER_NULLPTR, "self"),
    "outputSize destroyed": (dict(osz="DEAD"), sc.INNER_NULLPTR, "outputSize"),
    "out is an array": (dict(o="ARRAY"), sc.INNER_NULLPTR, "out"),
    "dtype int32": (dict(x_dtype=I32, o_dtype=I32), sc.PARAM_INVALID, "self dtype"),
    "dtype int8": (dict(x_dtype=sc.ACL_INT8, o_dtype=sc.ACL_INT8), sc.PARAM_INVALID, "self dtype"),
    "out dtype differs": (dict(o_dtype=F16), sc.PARAM_INVALID, "out dtype"),
    "dtype before rank": (dict(x_dtype=I32, o_dtype=I32, osz=[5, 5]), sc.PARAM_INVALID, "self dtype"),
    "format NCHW": (dict(x_fmt=sc.FMT_NCHW), sc.PARAM_INVALID, "format must be"),
    "out format NCHW": (dict(o_fmt=sc.FMT_NCHW), sc.PARAM_INVALID, "format must be"),
    "self 2-D": (dict(x_shape=[3, 3]), sc.PARAM_INVALID, "self must be 3-D"),
    "self 4-D": (dict(x_shape=[1, 3, 3, 1]), sc.PARAM_INVALID, "self must be 3-D"),
    "outputSize len 2": (dict(osz=[5, 1]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "outputSize len 0": (dict(osz=[]), sc.PARAM_INVALID, "outputSize must have exactly 1"),
    "C=0": (dict(x_shape=[1, 0, 3], o_shape=[1, 0, 5]), sc.PARAM_INVALID, "must all be > 0"),
    "L=0": (dict(x_shape=[1, 3, 0]), sc.PARAM_INVALID, "must all be > 0"),
    "outputSize 0": (dict(osz=[0], o_shape=[1, 3, 0]), sc.PARAM_INVALID, "outputSize[0] must be > 0"),
    "outputSize negative": (dict(osz=[-2]), sc.PARAM_INVALID, "outputSize[0] must be > 0"),
    "out L differs": (dict(o_shape=[1, 3, 6]), sc.PARAM_INVALID, "out must have shape [1, 3, 5]"),
    "out C differs": (dict(o_shape=[1, 2, 5]), sc.PARAM_INVALID, "out must have shape"),
    "out 2-D": (dict(o_shape=[3, 5]), sc.PARAM_INVALID, "out must have shape"),
}
FWD_OK = {
    "base": {},
    "ND": dict(x_fmt=ND, o_fmt=ND),
    "mixed NCL/ND": dict(x_fmt=ND),
    "fp16": dict(x_dtype=F16, o_dtype=F16),
    "bf16": dict(x_dtype=BF16, o_dtype=BF16),
    "uint8": dict(x_dtype=U8, o_dtype=U8),
    "negative scales are not checked": dict(scales=-3.0),
}


def _fwd_args(rt, res, changes):
    p = dict(FWD_BASE, **changes)
    x = _make_tensor_arg(rt, res, p.get("x"), p["x_shape"], p["x_dtype"], p["x_fmt"])
    if p.get("o") == "ARRAY":
        o = res.ints([1])
    else:
        o = _make_tensor_arg(rt, res, p.get("o"), p["o_shape"], p["o_dtype"], p["o_fmt"])
    return x, _make_array_arg(rt, res, p["osz"]), p["scales"], o


@pytest.mark.parametrize("case", list(FWD_CASES))
def test_forward_checks(rt, res, case):
    changes, status, fragment = FWD_CASES[case]
    args = _fwd_args(rt, res, changes)
    execs = rt.count("executors")
    rc, ws, ex = rt.fwd_prepare(*args)
    msg = rt.err()
    assert rc == status, msg
    assert msg.startswith("aclnnUpsampleNearestExact1dGetWorkspaceSize: ")
    assert fragment in msg
    assert (ws, ex) == (12345, 0xDEAD0)
    assert rt.count("executors") == execs


@pytest.mark.parametrize("case", list(FWD_OK))
def test_forward_accepts(rt, res, case):
    rc, ws, ex = rt.fwd_prepare(*_fwd_args(rt, res, FWD_OK[case]))
    assert rc == 0, rt.err()
    assert ws == 0                                   # contiguous input: no workspace
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_forward_null_out_params(rt, res):
    x, osz, scales, o = _fwd_args(rt, res, {})
    ws, ex = c_uint64(), c_void_p()
    f = rt.aclnnUpsampleNearestExact1dGetWorkspaceSize
    assert f(x, osz, scales, o, None, byref(ex)) == sc.PARAM_NULLPTR
    assert f(x, osz, scales, o, byref(ws), None) == sc.PARAM_NULLPTR


# ---------------------------------------------------------------------------------------------
# operator numerics (hand-computed from the A2/A3 kernel's float32 arithmetic)
# ---------------------------------------------------------------------------------------------

def test_forward_doc_example(rt, res):
    # self {1,3,3} -> out {1,3,5}, scales 0: s = 3/5, src(d) = floor((d+0.5)*0.6) = 0,0,1,2,2
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3)
    out, ws = run_fwd(rt, res, x, F32, 5)
    assert ws == 0
    assert out.tolist() == [[[1, 1, 2, 3, 3], [4, 4, 5, 6, 6], [7, 7, 8, 9, 9]]]


def test_forward_uint8(rt, res):
    x = np.array([[[10, 200, 255]]], np.uint8)
    out, _ = run_fwd(rt, res, x, U8, 5)
    assert out.tolist() == [[[10, 10, 200, 255, 255]]]


def test_forward_scales_use_reciprocal(rt, res):
    # Lin=4 -> Lout=3. scales=0.5: s = 1/0.5 = 2, src = floor(1, 3, 5) -> 1, 3, 3 (clamped)
    # scales=0 (derived): s = 4/3, src = floor(0.67, 2, 3.33) -> 0, 2, 3
    x = np.array([[[10, 11, 12, 13]]], np.float32)
    assert run_fwd(rt, res, x, F32, 3, scales=0.5)[0].tolist() == [[[11, 13, 13]]]
    assert run_fwd(rt, res, x, F32, 3, scales=0.0)[0].tolist() == [[[10, 12, 13]]]


def test_forward_fp16_bf16_bits_are_copied_exactly(rt, res):
    # a gather: every bit pattern (incl. NaN payloads, -0, subnormals) passes unchanged
    h = np.array([[[0x7E01, 0x8000, 0x0001]]], np.uint16)
    out, _ = run_fwd(rt, res, h, F16, 5)
    assert out.view(np.uint16).tolist() == [[[0x7E01, 0x7E01, 0x8000, 0x0001, 0x0001]]]
    b = np.array([[[0x7FC1, 0x3F80, 0xFF80]]], np.uint16)
    out, _ = run_fwd(rt, res, b, BF16, 5)
    assert out.tolist() == [[[0x7FC1, 0x7FC1, 0x3F80, 0xFF80, 0xFF80]]]


def test_backward_doc_example(rt, res):
    # gradOutput {1,1,2} -> out {1,1,4}, scales 0.5: s = 0.5,
    # lo/hi(i) = ceil(i*0.5 - 0.5): i0 [0,0) i1 [0,1) i2 [1,1) i3 [1,2)
    g = np.array([[[1, 2]]], np.float32)
    out, ws = run_bwd(rt, res, g, F32, 4, scales=0.5)
    assert ws == 0
    assert out.tolist() == [[[0, 1, 0, 2]]]


def test_backward_tie_goes_to_lower_index(rt, res):
    # Lin=26, Lout=7: exact mapping i = floor((l+0.5)*26/7) = 1, 5, 9, 13, 16, 20, 24, but at the
    # exact tie l=3 the fp32 formula gives 12: fp32(7/26)*13 - 0.5 = 3.0000002 -> ceil 4 = lo(13).
    g = (2.0 ** np.arange(7)).astype(np.float32).reshape(1, 1, 7)
    out, _ = run_bwd(rt, res, g, F32, 26)
    expected = np.zeros(26, np.float32)
    for l, i in enumerate([1, 5, 9, 12, 16, 20, 24]):
        expected[i] = 2.0 ** l
    assert out.reshape(-1).tolist() == expected.tolist()


def test_backward_inconsistent_scales_drop_gradient(rt, res):
    # Lin=4, Lout=3, scales=0.5: i0 [0,0) i1 [0,1) i2 [1,1) i3 [1,2) -> grad position 2 is lost
    g = np.array([[[1, 2, 3]]], np.float32)
    out, _ = run_bwd(rt, res, g, F32, 4, scales=0.5)
    assert out.tolist() == [[[0, 1, 0, 2]]]


def test_backward_identity_and_sum(rt, res):
    # scales=1 -> identity map even though Lin > Lout: [g0, g1, g2, 0, 0]
    g = np.array([[[1, 2, 3]]], np.float32)
    assert run_bwd(rt, res, g, F32, 5, scales=1.0)[0].tolist() == [[[1, 2, 3, 0, 0]]]
    # Lin=2, Lout=4 (derived s=2): i0 [0,2) i1 [2,4)
    g = np.array([[[1, 2, 4, 8]], [[16, 32, 64, 128]]], np.float32)
    assert run_bwd(rt, res, g, F32, 2)[0].tolist() == [[[3, 12]], [[48, 192]]]


def test_backward_fp16_accumulates_in_fp32(rt, res):
    # Lin=1, Lout=3: everything sums into one element. 1 + 2^-11 + 2^-11 = 1 + 2^-10 = 0x3C01;
    # an fp16 accumulator would round 1 + 2^-11 (a tie) to 1.0 twice and give 0x3C00.
    g = f16_bits([[[1.0, 2.0 ** -11, 2.0 ** -11]]])
    out, ws = run_bwd(rt, res, g, F16, 1)
    out = out.view(np.uint16)
    assert ws == 1 * 1 * 1 * 4                        # N*C*Lin fp32 accumulators
    assert out.tolist() == [[[0x3C01]]]
    # ties round to even: 1 + 2^-11 -> 0x3C00; (1 + 2^-10) + 2^-11 -> 0x3C02
    def bits(values):
        return run_bwd(rt, res, f16_bits([[values]]), F16, 1)[0].view(np.uint16).tolist()

    assert bits([1.0, 2.0 ** -11]) == [[[0x3C00]]]
    assert bits([1.0 + 2.0 ** -10, 2.0 ** -11]) == [[[0x3C02]]]
    # overflow to inf, NaN propagates
    assert bits([65504.0, 65504.0]) == [[[0x7C00]]]
    nan = run_bwd(rt, res, f16_bits([[[np.nan, 1.0]]]), F16, 1)[0].reshape(-1)
    assert np.isnan(nan[0])


def test_backward_bf16_round_to_nearest_even(rt, res):
    # 1 + 2^-8 is halfway between 1.0 (0x3F80, even) and 1.0078125 (0x3F81) -> 0x3F80
    # 1 + 2^-8 + 2^-7 = 1.01171875 is halfway between 0x3F81 and 0x3F82 (even) -> 0x3F82
    out, ws = run_bwd(rt, res, sc.bf16_bits([[[1.0, 2.0 ** -8]]]), BF16, 1)
    assert ws == 4
    assert out.tolist() == [[[0x3F80]]]
    out, _ = run_bwd(rt, res, sc.bf16_bits([[[1.0, 2.0 ** -8, 2.0 ** -7]]]), BF16, 1)
    assert out.tolist() == [[[0x3F82]]]
    # Lin=2, Lout=4 sums pairs: (1+2) = 3 -> 0x4040, (0.5+0.25) = 0.75 -> 0x3F40
    out, ws = run_bwd(rt, res, sc.bf16_bits([[[1, 2, 0.5, 0.25]]]), BF16, 2)
    assert ws == 2 * 4
    assert out.tolist() == [[[0x4040, 0x3F40]]]


def test_forward_non_contiguous_input_and_output(rt, res):
    # self: view [1,3,3] of a [3,8] buffer, element (c, l) at c*8 + 1 + 2*l (offset 1, stride 2)
    buf = np.arange(24, dtype=np.float32)
    xp = res.dev(buf)
    xt = res.tensor([1, 3, 3], F32, xp, strides=[24, 8, 2], offset=1, storage=[24])
    # out: [1,3,5] stored transposed, element (c, d) at d*3 + c
    outp = res.dev(np.zeros(15, np.float32))
    ot = res.tensor([1, 3, 5], F32, outp, strides=[15, 1, 3], storage=[15])
    rc, ws, ex = rt.fwd_prepare(xt, res.ints([5]), 0.0, ot)
    assert rc == 0
    assert ws == 3 * 3 * 4                            # contiguous copy of self in the workspace
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnUpsampleNearestExact1d(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    stored = rt.download(outp, 15, np.float32)
    # gather map 0,0,1,2,2; self(c, l) = c*8 + 1 + 2*l
    for c in range(3):
        for d, l in enumerate([0, 0, 1, 2, 2]):
            assert stored[d * 3 + c] == c * 8 + 1 + 2 * l
    # the contiguous copy really went through the workspace
    assert rt.download(wsp, 9, np.float32).tolist() == [1, 3, 5, 9, 11, 13, 17, 19, 21]


def test_backward_non_contiguous_fp16(rt, res):
    # gradOutput [1,2,2]: element (c, l) at l*2 + c of a 4-element buffer (transposed)
    buf = f16_bits([1, 10, 2, 20])                    # (0,0)=1 (1,0)=10 (0,1)=2 (1,1)=20
    gt = res.tensor([1, 2, 2], F16, res.dev(buf), strides=[4, 1, 2], storage=[4])
    outp = res.dev(nbytes=2 * 4 * 2 * 2)              # out [1,2,4] inside an [8, 2] buffer
    ot = res.tensor([1, 2, 4], F16, outp, strides=[16, 8, 2], storage=[16])
    rc, ws, ex = rt.bwd_prepare(gt, res.ints([2]), res.ints([1, 2, 4]), 0.0, ot)
    assert rc == 0, rt.err()
    assert ws == 32 + 8                               # 1*2*4 fp32 accumulators + copy of 4 fp16
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    stored = rt.download(outp, 16, np.uint16)
    # Lin=4, Lout=2, s=0.5: i0 [0,0) i1 [0,1) i2 [1,1) i3 [1,2)
    expect_c0, expect_c1 = [0, 1, 0, 2], [0, 10, 0, 20]
    assert stored[0:8:2].view(np.float16).tolist() == expect_c0
    assert stored[8:16:2].view(np.float16).tolist() == expect_c1
    assert stored[1::2].tolist() == [0xFFFF] * 8      # gaps between strided elements untouched
    acc = rt.download(wsp, 8, np.float32)             # the fp32 accumulators in the workspace
    assert acc.tolist() == expect_c0 + expect_c1


def test_backward_workspace_is_accumulators_plus_copy(rt, res):
    # bf16, N*C*Lin = 1*1*3 -> 12 bytes of fp32 accumulators, + 1*1*2 bf16 copy = 4 bytes -> 16
    g = sc.bf16_bits([1.0, 0.0, 2.0, 0.0])            # gradOutput (1,1,2) with stride 2 -> [1, 2]
    gt = res.tensor([1, 1, 2], BF16, res.dev(g), strides=[4, 4, 2], storage=[4])
    outp = res.dev(nbytes=6)
    ot = res.tensor([1, 1, 3], BF16, outp)
    rc, ws, ex = rt.bwd_prepare(gt, res.ints([2]), res.ints([1, 1, 3]), 0.0, ot)
    assert rc == 0, rt.err()
    assert ws == 12 + 4
    wsp = res.dev(nbytes=ws)
    rt.ok(rt.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    # Lin=3, Lout=2, s=2/3: lo = ceil(i*0.6667 - 0.5) = 0, 1, 1, 2 -> i0 {0}, i1 {}, i2 {1}
    assert sc.bf16_to_float(rt.download(outp, 3, np.uint16)).tolist() == [1.0, 0.0, 2.0]


def test_backward_non_contiguous_fp32_workspace(rt, res):
    g = np.arange(8, dtype=np.float32)
    gt = res.tensor([1, 2, 2], F32, res.dev(g), strides=[8, 4, 2], storage=[8])  # every other
    ot = res.tensor([1, 2, 4], F32, res.dev(nbytes=32))
    rc, ws, ex = rt.bwd_prepare(gt, res.ints([2]), res.ints([1, 2, 4]), 0.0, ot)
    assert rc == 0
    assert ws == 1 * 2 * 2 * 4                        # copy only, no accumulators for fp32
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
