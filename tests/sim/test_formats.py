"""Private formats in the simulator: a tensor's view and storage formats kept apart,
aclnnTransMatmulWeight's in-place reformat of the caller's aclTensor (phase 1 changes its
storage, the kernel writes the NZ storage), its size helpers, and aclnnMm with an NZ mat2.
Expected layouts are written out from CANN's TransData golden here, not from the package."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import BF16, FLOAT, FLOAT16, FRACTAL_NZ, INT8, INT32, ND, NCHW, Env


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


def nz(x, c0):
    """ND (k, n) -> (ceil(n/c0), ceil(k/16), 16, c0), zero padded (TransData's golden)."""
    k, n = x.shape
    k1, n1 = -(-k // 16), -(-n // c0)
    p = np.zeros((k1 * 16, n1 * c0), x.dtype)
    p[:k, :n] = x
    return np.ascontiguousarray(p.reshape(k1, 16, n1, c0).transpose(2, 0, 1, 3))


def weight_size(env, shape, dtype=None):
    out = ctypes.c_uint64(7)
    arr = env.int_array(shape)
    if dtype is None:
        rc = env.s.aclnnCalculateMatmulWeightSize(arr, ctypes.byref(out))
    else:
        rc = env.s.aclnnCalculateMatmulWeightSizeV2(arr, dtype, ctypes.byref(out))
    return rc, out.value


def test_the_size_helpers_count_the_aligned_weight(env, profile):
    # the published examples: (510, 510) 16-bit -> 512 * 512; (510, 270) int8 -> 512 * 288
    assert weight_size(env, [510, 510], FLOAT16) == (0, 262144)
    assert weight_size(env, [510, 270], INT8) == (0, 147456)
    assert weight_size(env, [510, 510]) == (0, 262144)
    assert weight_size(env, [3, 40, 24], BF16) == (0, 3 * 48 * 32)
    assert weight_size(env, [40, 24], FLOAT) == (0, 48 * 32)  # not 16-bit: the op_api's int8 rule
    rc, _ = weight_size(env, [8], FLOAT16)
    assert rc == 161002
    assert weight_size(env, [2, 0, 16], FLOAT16)[0] == 161002  # V2 refuses a zero dim
    most = 3 if profile == "8.1.RC1" else 6  # V1's rank limit rose to 6 in 9.0.0
    assert weight_size(env, [1] * most + [16, 16])[0] == 161002
    assert weight_size(env, [1] * (most - 2) + [16, 16]) == (0, 256)
    out = ctypes.c_uint64(0)
    assert env.s.aclnnCalculateMatmulWeightSizeV2(None, FLOAT16, ctypes.byref(out)) == 161001
    assert env.s.aclnnCalculateMatmulWeightSizeV2(env.int_array([16, 16]), FLOAT16, None) == 161001


def conv_weight_size(env, shape, transposed=False, groups=1, dtype=FLOAT16):
    out = ctypes.c_uint64(7)
    rc = env.s.aclnnCalculateConvolutionWeightSize(None if shape is None else env.int_array(shape), transposed,
                                                   groups, dtype, ctypes.byref(out))
    return rc, out.value


@pytest.mark.parametrize("shape,groups,want", [
    ([2, 4, 8, 8], 1, 16384),          # the helper's documented example: FRACTAL_Z (64, 1, 16, 16)
    ([2, 4, 8, 8], 3, 16384),          # fewer outputs than groups: counted as one group
    ([17, 20, 3, 3], 1, 2 * 9 * 32 * 16),   # C1 = 2, N padded to 32
    ([32, 1, 3, 3], 32, 2 * 9 * 16 * 16),   # depthwise: groups merged 16 at a time (e = 16), 2 of them
    ([8, 4, 1, 1], 2, 16 * 16),        # N/g = 4, C = 4: e = min(lcm(4, 4), 2) = 2, C 8 and N 8 in one group
    ([0, -1, 2, 2], 1, 0), ([3, 0, 2, 2], 1, 0)])  # an empty weight, before a later negative dim
def test_the_convolution_weight_size_on_an_inference_soc(env, monkeypatch, shape, groups, want):
    """aclnnCalculateConvolutionWeightSize counts TransData's FRACTAL_Z storage on an
    Ascend310P: hand counts of CANN's shape rule (metadef's GetFractalZShape)."""
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "Ascend310P3")
    assert conv_weight_size(env, shape, groups=groups) == (0, want), env.s.err()


def test_the_convolution_weight_size_refusals(env, monkeypatch):
    # the simulated Atlas A2: every well-formed call is refused, after the earlier checks
    rc, out = conv_weight_size(env, [2, 4, 8, 8])
    assert (rc, out) == (161002, 7) and "Ascend310P" in env.s.err()
    assert conv_weight_size(env, None)[0] == 161001
    assert env.s.aclnnCalculateConvolutionWeightSize(env.int_array([2, 4, 8, 8]), False, 1, FLOAT16, None) == 161001
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "Ascend310P3")
    for kwargs in ({"shape": [2, 4, 8]}, {"shape": [2, 4, 8, 8], "transposed": True},
                   {"shape": [2, 4, 8, 8], "groups": 0}, {"shape": [2, 4, 8, 8], "dtype": FLOAT},
                   {"shape": [2, -4, 8, 8]}, {"shape": [2, 4, 8, 8], "groups": -2}):
        assert conv_weight_size(env, **kwargs) == (161002, 7), kwargs
    assert conv_weight_size(env, [2, 4, 8, 8], groups=65536)[0] == 561103  # TransData's group limit


def test_view_and_storage_formats_are_kept_apart(env):
    """aclnnTransMatmulWeight changes the caller's storage format and shape in phase 1; the
    view format (what aclGetFormat reports) and view shape stay."""
    s = env.s
    w = (np.arange(40 * 24) % 251 - 125).astype(np.float16).reshape(40, 24)
    need = 3 * 2 * 256 * 2
    ptr = s.malloc(need)
    env.ptrs.append(ptr)
    s.ok(s.aclrtMemcpy(ptr, need, w.ctypes.data, w.nbytes, sc.H2D), "upload")
    h = s.tensor([40, 24], FLOAT16, ptr, fmt=ND, storage=[960])
    env.tensors.append(h)
    assert env.run("aclnnTransMatmulWeight", h) == 0, s.err()
    assert s.get_dims(s.aclGetStorageShape, h) == [2, 3, 16, 16]
    assert s.get_dims(s.aclGetViewShape, h) == [40, 24]
    fmt = ctypes.c_int(-5)
    s.ok(s.aclGetFormat(h, ctypes.byref(fmt)), "aclGetFormat")
    assert fmt.value == ND
    got = env.read(ptr, [2, 3, 16, 16], FLOAT16)
    assert np.array_equal(got, nz(w, 16))
    # a second reformat is refused: the storage format is no longer ND
    assert s.phase1("aclnnTransMatmulWeight", h)[0] == 161002


def test_trans_matmul_weight_overruns_a_block_sized_for_nd(env):
    """A (40, 24) float16 block of 1920 bytes cannot take its 3072-byte NZ storage: the
    kernel's write is a fault, not a silent overrun."""
    s = env.s
    w = np.ones((40, 24), np.float16)
    h, ptr = env.tensor(w)
    rc, ws, ex = s.phase1("aclnnTransMatmulWeight", h)
    assert rc == 0, s.err()
    wsp = s.malloc(ws) if ws else None
    if wsp:
        env.ptrs.append(wsp)
    s.ok(s.aclnnTransMatmulWeight(wsp, ws, ex, s.stream), "aclnnTransMatmulWeight")
    assert s.aclrtSynchronizeStream(s.stream) == 507015
    msg = s.err()
    assert "overruns the allocation" in msg and "3072 bytes" in msg


@pytest.mark.parametrize("shape,dtype,storage", [((32, 64), INT8, [2, 2, 16, 32]), ((2, 17, 5), BF16, [2, 1, 2, 16, 16])])
def test_trans_matmul_weight_int8_and_batched(env, shape, dtype, storage):
    s = env.s
    x = np.arange(np.prod(shape)).reshape(shape) % 100
    x = x.astype(np.int8) if dtype == INT8 else x.astype(np.float32)
    h, ptr = env.tensor(x if dtype == INT8 else sc_bf16(x), dtype=dtype, pad=4096)
    assert env.run("aclnnTransMatmulWeight", h) == 0, s.err()
    assert s.get_dims(s.aclGetStorageShape, h) == storage


def sc_bf16(x):
    import ml_dtypes
    return x.astype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("dtype", [FLOAT, INT32])
def test_trans_matmul_weight_refuses_other_dtypes(env, dtype):
    h, _ = env.tensor(np.zeros((16, 16), np.float32 if dtype == FLOAT else np.int32))
    assert env.s.phase1("aclnnTransMatmulWeight", h)[0] == 161002


def test_trans_matmul_weight_rank_limits(env, profile):
    most = 3 if profile == "8.1.RC1" else 6
    h, _ = env.tensor(np.zeros((1,) * (most - 1) + (16, 16), np.float16))
    assert env.s.phase1("aclnnTransMatmulWeight", h)[0] == 161002
    h, _ = env.tensor(np.zeros((1,) * (most - 2) + (16, 16), np.float16), pad=0)
    rc, _, ex = env.s.phase1("aclnnTransMatmulWeight", h)
    assert rc == 0
    env.execs.append(ex)
    h, _ = env.tensor(np.zeros((16,), np.float16))
    assert env.s.phase1("aclnnTransMatmulWeight", h)[0] == 161002
    assert env.s.phase1("aclnnTransMatmulWeight", None)[0] == 161001


def mm(env, x, w, out_dtype, w_fmt=ND, w_storage=None):
    xt, _ = env.tensor(x)
    if w_storage is None:
        wt, _ = env.tensor(w)
    else:
        stored = nz(w, 16)
        ptr = env.s.upload(stored.reshape(-1).view(np.uint8), stored.nbytes)
        env.ptrs.append(ptr)
        wt = env.s.tensor(list(w.shape), FLOAT16, ptr, fmt=w_fmt, storage=w_storage)
        env.tensors.append(wt)
    ot, op = env.empty([x.shape[0], w.shape[1]], out_dtype)
    return env.run("aclnnMm", xt, wt, ot, 0), op


def test_mm_with_an_nz_mat2_equals_mm_with_the_nd_one(env):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 40)).astype(np.float16)
    w = rng.standard_normal((40, 24)).astype(np.float16)
    rc, op = mm(env, x, w, FLOAT16)
    assert rc == 0, env.s.err()
    nd = env.read(op, [5, 24], FLOAT16)
    rc, op = mm(env, x, w, FLOAT16, FRACTAL_NZ, [2, 3, 16, 16])
    assert rc == 0, env.s.err()
    assert np.array_equal(env.read(op, [5, 24], FLOAT16), nd)
    want = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32).astype(np.float16)
    assert np.array_equal(nd, want)


def test_mm_refuses_a_wrong_nz_storage_and_other_private_formats(env):
    x = np.ones((2, 40), np.float16)
    w = np.ones((40, 24), np.float16)
    assert mm(env, x, w, FLOAT16, FRACTAL_NZ, [1, 2, 3, 16, 16])[0] == 161002
    assert "storage shape" in env.s.err()
    w1 = np.ones((40, 1), np.float16)
    assert mm(env, x, w1, FLOAT16, FRACTAL_NZ, [1, 3, 16, 16])[0] == 161002
    xt, _ = env.tensor(x, fmt=FRACTAL_NZ)
    wt, _ = env.tensor(w)
    ot, _ = env.empty([2, 24], FLOAT16)
    assert env.s.phase1("aclnnMm", xt, wt, ot, 0)[0] == 161002


def test_mm_checks(env):
    s = env.s
    x, _ = env.tensor(np.ones((2, 3), np.float32))
    w, _ = env.tensor(np.ones((4, 5), np.float32))
    o, _ = env.empty([2, 5], FLOAT)
    assert s.phase1("aclnnMm", x, w, o, 0)[0] == 161002  # k differs
    w, _ = env.tensor(np.ones((3, 5), np.float32))
    assert s.phase1("aclnnMm", None, w, o, 0)[0] == 161001
    assert s.phase1("aclnnMm", x, w, o, 9)[0] == 161002
    i, _ = env.tensor(np.ones((2, 3), np.int32))
    assert s.phase1("aclnnMm", i, w, o, 0)[0] == 161002
    assert env.run("aclnnMm", x, w, o, 0) == 0
    xt4, _ = env.tensor(np.ones((1, 1, 2, 3), np.float32), fmt=NCHW)
    assert s.phase1("aclnnMm", xt4, w, o, 0)[0] == 161002
