"""aclnnNpuFormatCast and aclnnNpuFormatCastCalculateSizeAndFormat in the simulator: only a
release from 8.5.0 has them (8.1.RC1 builds neither symbols nor header), the channel-last
pairs of the op_api's A2/A3 table (which a DeviceArray cannot express), the unsupported pair
that CANN's phase 1 answers 0 without an executor, and the size function's refusals.
Expected layouts are written out from CANN's TransData golden here, not from the package."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from . import sim_ctypes as sc
from .conftest import built_version
from .expected import native_build
from .op_helpers import FLOAT16, FRACTAL_NZ, INT8, NC1HWC0, ND, NCHW, Env

NHWC, HWCN, NDHWC, NCDHW, FRACTAL_Z, NDC1HWC0, FRACTAL_Z_3D, NZ_C0_16 = 1, 16, 27, 30, 4, 32, 33, 50
HAS = native_build.in_profile("npu_format_cast.c")  # the default build's release


@pytest.fixture
def env(rt):
    if not HAS:
        pytest.skip("the default simulator build is a release without aclnnNpuFormatCast (tested below)")
    e = Env(rt)
    yield e
    e.close()


def test_only_releases_from_8_5_0_have_it(profile_builds):
    for version, libdir in profile_builds.items():
        assert built_version(libdir) == version
        has = version != "8.1.RC1"
        lib = (libdir / "libopapi.so").read_bytes()
        assert (b"aclnnNpuFormatCastGetWorkspaceSize" in lib) == has, version
        assert (b"aclnnNpuFormatCastCalculateSizeAndFormat" in lib) == has, version
        for include in native_build.include_dirs(libdir.parent, "cann8"):
            assert (include / "aclnnop" / "aclnn_npu_format_cast.h").exists() == has, (version, include)
            assert (include / "aclnnop" / "aclnn_trans_matmul_weight.h").exists()  # the others stay


def cd(a, b):
    return -(-a // b)


def five_hd(x, c0):
    """NCHW -> (N, C1, H, W, C0), zero padded."""
    n, c, h, w = x.shape
    p = np.zeros((n, cd(c, c0) * c0, h, w), x.dtype)
    p[:, :c] = x
    return np.ascontiguousarray(p.reshape(n, cd(c, c0), c0, h, w).transpose(0, 1, 3, 4, 2))


def fractal_z(x, c0):
    """NCHW -> (C1*H*W, N1, 16, C0): [(c//C0*H + h)*W + w, n//16, n%16, c%C0]."""
    n, c, h, w = x.shape
    out = np.zeros((cd(c, c0) * h * w, cd(n, 16), 16, c0), x.dtype)
    for i in np.ndindex(x.shape):
        ni, ci, hi, wi = i
        out[(ci // c0 * h + hi) * w + wi, ni // 16, ni % 16, ci % c0] = x[i]
    return out


def six_hd(x, c0):
    """NCDHW -> (N, D, C1, H, W, C0)."""
    n, c, d, h, w = x.shape
    p = np.zeros((n, cd(c, c0) * c0, d, h, w), x.dtype)
    p[:, :c] = x
    return np.ascontiguousarray(p.reshape(n, cd(c, c0), c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))


def fractal_z_3d(x, c0):
    """NCDHW -> (D*C1*H*W, N1, 16, C0): [((d*C1 + c//C0)*H + h)*W + w, n//16, n%16, c%C0]."""
    n, c, d, h, w = x.shape
    c1 = cd(c, c0)
    out = np.zeros((d * c1 * h * w, cd(n, 16), 16, c0), x.dtype)
    for i in np.ndindex(x.shape):
        ni, ci, di, hi, wi = i
        out[((di * c1 + ci // c0) * h + hi) * w + wi, ni // 16, ni % 16, ci % c0] = x[i]
    return out


# public format, its dims from the canonical (N, C, H, W / N, C, D, H, W) order, private format, golden
# (DHWCN, ge's 31, is in the op_api's table too, but no aclFormat names it and aclCreateTensor refuses it)
CHANNEL_LAST = [(NHWC, (0, 2, 3, 1), NC1HWC0, five_hd), (HWCN, (2, 3, 1, 0), FRACTAL_Z, fractal_z),
                (NDHWC, (0, 2, 3, 4, 1), NDC1HWC0, six_hd), (NCDHW, (0, 1, 2, 3, 4), FRACTAL_Z_3D, fractal_z_3d)]


@pytest.mark.parametrize("pub,perm,priv,golden", CHANNEL_LAST, ids=["NHWC", "HWCN", "NDHWC", "NCDHW-FZ3D"])
def test_the_channel_last_pairs_both_ways(env, pub, perm, priv, golden):
    rng = np.random.default_rng(pub)
    canon = (rng.standard_normal((18, 20, 3, 5) if len(perm) == 4 else (18, 20, 2, 3, 3)) * 9).astype(np.float16)
    x = np.ascontiguousarray(canon.transpose(perm))  # the public array, in its own dim order
    want = golden(canon, 16)
    src, _ = env.tensor(x, fmt=pub)
    ptr = env.s.malloc(want.nbytes)
    env.ptrs.append(ptr)
    dst = env.s.tensor(list(x.shape), FLOAT16, ptr, fmt=priv, storage=list(want.shape))
    env.tensors.append(dst)
    assert env.run("aclnnNpuFormatCast", src, dst) == 0
    got = env.s.download(ptr, want.nbytes, np.uint8).view(np.float16).reshape(want.shape)
    assert got.tobytes() == want.tobytes()
    back, bptr = env.empty(x.shape, FLOAT16, fmt=pub)
    assert env.run("aclnnNpuFormatCast", dst, back) == 0
    assert env.read(bptr, x.shape, FLOAT16).tobytes() == x.tobytes()


def test_an_unsupported_pair_answers_0_without_an_executor(env):
    """The op_api's `return false;` in a function returning aclnnStatus: 0, and neither
    workspaceSize nor executor written (phase1 starts them at 12345 and 0xDEAD0)."""
    src, _ = env.tensor(np.ones((4, 4), np.float16))
    dst, _ = env.empty((4, 4), FLOAT16, fmt=NCHW)
    assert env.s.phase1("aclnnNpuFormatCast", src, dst) == (0, 12345, 0xDEAD0)
    assert "Unsupported format transformation from [ND] to [NCHW]" in env.s.err()


def test_the_phase1_refusals(env):
    x = np.ones((40, 24), np.float16)
    src, _ = env.tensor(x)
    ptr = env.s.malloc(2 * 3 * 16 * 16 * 2)
    env.ptrs.append(ptr)
    nz = env.s.tensor([40, 24], FLOAT16, ptr, fmt=FRACTAL_NZ, storage=[2, 3, 16, 16])
    env.tensors.append(nz)
    assert env.s.phase1("aclnnNpuFormatCast", None, nz)[0] == 561103
    assert env.s.phase1("aclnnNpuFormatCast", src, None)[0] == 561103
    strided, _ = env.tensor(np.ones((24, 40), np.float16), strides=[1, 40], shape=[40, 24])
    assert env.s.phase1("aclnnNpuFormatCast", strided, nz)[0] == 161002  # not contiguous
    bad = env.s.tensor([40, 24], FLOAT16, ptr, fmt=FRACTAL_NZ, storage=[2, 3, 16, 8])  # C0 8 for a 2-byte dtype
    env.tensors.append(bad)
    assert env.s.phase1("aclnnNpuFormatCast", src, bad)[0] == 161002
    assert "storage shape must be [2, 3, 16, 16]" in env.s.err()


def size_and_format(env, tensor, dst_format, additional=-1, outputs=True):
    dims, n, fmt = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64(0), ctypes.c_int(-7)
    args = (ctypes.byref(dims), ctypes.byref(n), ctypes.byref(fmt)) if outputs else (None, None, None)
    rc = env.s.aclnnNpuFormatCastCalculateSizeAndFormat(tensor, dst_format, additional, *args)
    if rc or not outputs:
        return rc, None, None
    shape = [dims[i] for i in range(n.value)]
    sc._libc.free(ctypes.cast(dims, ctypes.c_void_p))  # the simulator mallocs it; CANN says the caller frees it
    return rc, shape, fmt.value


def test_the_size_function_s_own_refusals(env):
    t, _ = env.tensor(np.ones((40, 24), np.float16))
    assert size_and_format(env, t, FRACTAL_NZ) == (0, [2, 3, 16, 16], FRACTAL_NZ)
    assert size_and_format(env, t, FRACTAL_NZ, INT8) == (0, [1, 3, 16, 32], FRACTAL_NZ)
    assert size_and_format(env, t, FRACTAL_NZ, outputs=False)[0] == 161001  # it writes through them
    assert size_and_format(env, t, FRACTAL_NZ, 99)[0] == 161002  # a dtype of no known size
    assert size_and_format(env, None, FRACTAL_NZ)[0] == 161002
    c016 = env.s.tensor([40, 24], FLOAT16, None, fmt=NZ_C0_16, storage=[2, 3, 16, 16])
    env.tensors.append(c016)
    assert size_and_format(env, c016, ND)[0] == 161002  # the A2/A3 branch takes FRACTAL_NZ (29) only
    flat = env.s.tensor([2, 20, 15], FLOAT16, None, fmt=NC1HWC0, storage=[2, 2, 3, 5, 16])
    env.tensors.append(flat)
    assert size_and_format(env, flat, NCHW)[0] == 361001  # the view must have 4 dims: "fallback to aclop"
    img = env.s.tensor([2, 3, 5, 20], FLOAT16, None, fmt=NHWC)
    env.tensors.append(img)
    assert size_and_format(env, img, NC1HWC0) == (0, [2, 2, 3, 5, 16], NC1HWC0)
    five = env.s.tensor([2, 3, 5, 20], FLOAT16, None, fmt=NC1HWC0, storage=[2, 2, 3, 5, 16])
    env.tensors.append(five)
    assert size_and_format(env, five, NHWC) == (0, [2, 20, 3, 5], NHWC)  # read as N, H, W, C; written N, C, H, W
    vol = env.s.tensor([18, 20, 2, 3, 3], FLOAT16, None, fmt=NCDHW)
    env.tensors.append(vol)
    assert size_and_format(env, vol, FRACTAL_Z_3D) == (0, [2 * 2 * 3 * 3, 2, 16, 16], FRACTAL_Z_3D)
    nd5 = env.s.tensor([2, 20, 2, 3, 3], FLOAT16, None, fmt=NCDHW)
    env.tensors.append(nd5)
    assert size_and_format(env, nd5, NDC1HWC0, INT8) == (0, [2, 2, 1, 3, 3, 32], NDC1HWC0)  # C0 of additionalDtype
