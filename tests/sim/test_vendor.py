"""The custom vendor package build.py installs (opp/vendors/<name>/op_api/{lib,include},
opp/vendors/config.ini), its made-up aclnnCustomMaskedScale (aclFloatArray, aclBoolArray,
const char*, float and int8_t parameters), and the built-in aclnnAdd it shadows, which a
loader that follows op-plugin's search order takes from it."""
from __future__ import annotations

import ctypes
import os
import pathlib
import shutil
import subprocess
import sys
from ctypes import c_char_p, c_void_p

import ml_dtypes
import numpy as np
import pytest

from . import sim_ctypes as sc
from .expected import native_build
from .header_ops import VendorLib
from .op_helpers import DOUBLE, FLOAT, FLOAT16, ND, Env

HERE = pathlib.Path(__file__).resolve().parent
NAME = native_build.DEFAULT_VENDOR


@pytest.fixture
def env(rt):
    e = Env(rt)
    yield e
    e.close()


@pytest.fixture(scope="module")
def vendor(sim_builds, simlib):
    """The package of the build loaded in this process (its libnnopbase.so is that one)."""
    return VendorLib(pathlib.Path(simlib.libdir).parent)


# ---------------------------------------------------------------------------------------
# the package as installed
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["cann8", "split"])
def test_installed_layout(sim_builds, layout):
    prefix = sim_builds[layout].parent
    vendors = prefix / "opp" / "vendors"
    assert sorted(p.name for p in vendors.iterdir()) == sorted([NAME, "config.ini"])
    assert (vendors / "config.ini").read_text() == f"load_priority={NAME}\n"
    root = native_build.vendor_root(prefix, NAME)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == [
        "include", "include/aclnn_custom_masked_scale.h", "lib", "lib/libcust_opapi.so"]


@pytest.mark.skipif(shutil.which("nm") is None or shutil.which("readelf") is None, reason="binutils not installed")
def test_exports_and_runpath(sim_builds):
    lib = native_build.vendor_root(sim_builds["cann8"].parent, NAME) / "lib" / native_build.VENDOR_LIB
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    public = {line.split()[-1] for line in out.splitlines() if line.strip()}
    public = {x for x in public if not x.startswith("_")}
    assert public == native_build.vendor_exports() == {
        "aclnnCustomMaskedScaleGetWorkspaceSize", "aclnnCustomMaskedScale", "aclnnAddGetWorkspaceSize", "aclnnAdd"}
    dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libcust_opapi.so]" in dyn
    assert "[$ORIGIN/../../../../../lib64:$ORIGIN]" in dyn
    assert "[libnnopbase.so]" in dyn and "[libascendcl.so]" in dyn


def test_loaded_alone_it_finds_the_simulator(tmp_path, run_script):
    """dlopen'ed first, by path, from an <arch>-linux split build: its RUNPATH finds that
    build's libnnopbase.so and libascendcl.so, and its operator runs."""
    prefix = tmp_path / "arch"
    libdir = native_build.build(prefix, "split", arch_subdir=True, vendor="acme")
    run_script("""
        sys.path.insert(0, os.environ["TESTS"])
        from sim import header_ops
        v = header_ops.VendorLib(os.environ["PREFIX"], "acme")
        maps = open("/proc/self/maps").read()
        assert os.environ["LIBDIR"] + "/libnnopbase.so" in maps and os.environ["LIBDIR"] + "/libascendcl.so" in maps
        s = sc.Sim(os.environ["LIBDIR"], "libopapi_math.so")
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        x = np.array([[1, 2], [3, 4]], np.float32)
        xp = s.upload(x); op = s.malloc(16)
        xt = s.tensor([2, 2], 0, xp); ot = s.tensor([2, 2], 0, op)
        w = (ctypes.c_float * 2)(10, 100); m = (ctypes.c_bool * 2)(True, False)
        wa = s.aclCreateFloatArray(w, 2); ma = s.aclCreateBoolArray(m, 2)
        ws, ex = c_uint64(), c_void_p()
        s.ok(v.aclnnCustomMaskedScaleGetWorkspaceSize(xt, wa, ma, b"mul", 0.5, 1, ot, byref(ws), byref(ex)))
        s.ok(v.aclnnCustomMaskedScale(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(op, 4, np.float32).tolist() == [10, 2, 30, 4]
        for h in (xt, ot): s.ok(s.aclDestroyTensor(h))
        s.ok(s.aclDestroyFloatArray(wa)); s.ok(s.aclDestroyBoolArray(ma)); s.free(xp); s.free(op)
        assert all(v == 0 for v in s.counts().values()), s.counts()
    """, env={"PREFIX": str(prefix), "LIBDIR": str(libdir), "TESTS": str(HERE.parent)})
    assert (prefix / "opp" / "vendors" / "acme" / "op_api" / "lib" / "libcust_opapi.so").is_file()
    assert not (prefix / "lib64").exists()


def test_install_order_and_no_vendor(tmp_path):
    """--no-vendor installs nothing under opp/vendors; each package installed then goes first
    in load_priority (install.sh's rule), other lines of config.ini kept."""
    out = subprocess.run([sys.executable, str(native_build.NATIVE / "build.py"), "--prefix", str(tmp_path),
                          "--no-vendor"], capture_output=True, text=True, check=True)
    libdir = pathlib.Path(out.stdout.strip())
    assert not (tmp_path / "opp" / "vendors").exists()
    config = tmp_path / "opp" / "vendors" / "config.ini"
    cc = [os.environ.get("CC") or "cc"]
    native_build.install_vendor(cc, tmp_path, libdir, "first")
    assert config.read_text() == "load_priority=first\n"
    config.write_text("# kept\nload_priority=first\nother=1\n")
    native_build.install_vendor(cc, tmp_path, libdir, "second")
    assert config.read_text() == "# kept\nload_priority=second,first\nother=1\n"
    native_build.install_vendor(cc, tmp_path, libdir, "first")
    assert config.read_text() == "# kept\nload_priority=first,second\nother=1\n"


@pytest.mark.parametrize("bad", ["", "a/b", "a,b", "..", "x=y", " lead"])
def test_invalid_vendor_names(tmp_path, bad):
    with pytest.raises(ValueError, match="invalid vendor package name"):
        native_build.build(tmp_path, vendor=bad)
    assert not (tmp_path / "lib64").exists()   # refused before compiling anything
    proc = subprocess.run([sys.executable, str(native_build.NATIVE / "build.py"), "--prefix", str(tmp_path),
                           "--vendor", bad], capture_output=True, text=True)
    assert proc.returncode == 1 and "invalid vendor package name" in proc.stderr


# ---------------------------------------------------------------------------------------
# aclnnCustomMaskedScale
# ---------------------------------------------------------------------------------------

def masked_scale(env, vendor, x, weights, mask, mode, scale, exponent, out_shape=None, out_dtype=None, **kw):
    xt, _ = env.tensor(x, **kw)
    from .op_helpers import ACL
    ot, op = env.empty(list(x.shape) if out_shape is None else out_shape,
                       ACL[np.asarray(x).dtype] if out_dtype is None else out_dtype)
    wa = env.float_array(weights) if weights is not None else None
    ma = env.bool_array(mask) if mask is not None else None
    fns = (vendor.aclnnCustomMaskedScaleGetWorkspaceSize, vendor.aclnnCustomMaskedScale)
    rc = env.run("aclnnCustomMaskedScale", xt, wa, ma, mode, scale, exponent, ot, fn=fns)
    return rc, op


def reference(x, weights, mask, mode, scale, exponent, dtype):
    v = x.astype(np.float32)
    w = np.asarray(weights, np.float32)
    m = np.asarray(mask, bool)
    t = np.where(m, v * w if mode == b"mul" else v + w, v)
    return np.ldexp(t * np.float32(scale), exponent).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("mode", [b"mul", b"add"])
@pytest.mark.parametrize("scale,exponent", [(1.0, 0), (0.3, -3), (-2.5, 7), (1.5, -128), (1.0, 127)])
def test_values(env, vendor, dtype, mode, scale, exponent):
    rng = np.random.default_rng(abs(exponent))
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    weights = [0.5, -1.25, 3.0, 1e-3]
    mask = [True, False, True, True]
    rc, op = masked_scale(env, vendor, x, weights, mask, mode, scale, exponent)
    assert rc == 0, env.s.err()
    from .op_helpers import ACL
    got = env.read(op, x.shape, ACL[np.dtype(dtype)])
    with np.errstate(all="ignore"):
        want = reference(x, weights, mask, mode, scale, exponent, dtype)
    assert np.array_equal(got.astype(np.float64), want.astype(np.float64), equal_nan=True)


def test_strided_self_and_overlapping_out(env, vendor):
    s = env.s
    base = np.arange(6, dtype=np.float32)
    xt, xp = env.tensor(base, shape=[3, 2], strides=[1, 3])           # base.reshape(2, 3).T
    ot = s.tensor([3, 2], FLOAT, xp, strides=[1, 3], storage=[6], fmt=ND)  # out is self
    env.tensors.append(ot)
    wa, ma = env.float_array([2.0, 10.0]), env.bool_array([True, True])
    fns = (vendor.aclnnCustomMaskedScaleGetWorkspaceSize, vendor.aclnnCustomMaskedScale)
    assert env.run("aclnnCustomMaskedScale", xt, wa, ma, b"add", 1.0, 1, ot, fn=fns) == 0, s.err()
    want = (base.reshape(2, 3).T + np.array([2.0, 10.0], np.float32)) * 2
    assert env.read(xp, [3, 2], FLOAT, strides=[1, 3]).tolist() == want.tolist()


def test_checks(env, vendor):
    s = env.s
    x = np.ones((2, 3), np.float32)
    w3, m3 = [1.0] * 3, [True] * 3

    def bad(*args, **kw):
        rc, _ = masked_scale(env, vendor, *args, **kw)
        return rc, s.err()

    api = "aclnnCustomMaskedScaleGetWorkspaceSize"
    assert bad(x, None, m3, b"mul", 1.0, 0) == (sc.PARAM_NULLPTR, f"{api}: weights is NULL")
    assert bad(x, w3, None, b"mul", 1.0, 0) == (sc.PARAM_NULLPTR, f"{api}: mask is NULL")
    assert bad(x, w3, m3, None, 1.0, 0) == (sc.PARAM_NULLPTR, f"{api}: mode is NULL")
    rc, msg = bad(x, [1.0] * 2, m3, b"mul", 1.0, 0)
    assert rc == sc.PARAM_INVALID and "must both hold self's last size, 3" in msg
    rc, msg = bad(x, w3, [True] * 4, b"mul", 1.0, 0)
    assert rc == sc.PARAM_INVALID
    for mode in (b"MUL", b"", b"sub", b"mul " ):
        rc, msg = bad(x, w3, m3, mode, 1.0, 0)
        assert rc == sc.PARAM_INVALID and 'mode must be "mul" or "add"' in msg
    rc, msg = bad(x.astype(np.float64), w3, m3, b"mul", 1.0, 0)
    assert rc == sc.PARAM_INVALID and "self dtype must be ACL_FLOAT, ACL_FLOAT16 or ACL_BF16" in msg
    rc, msg = bad(x, w3, m3, b"mul", 1.0, 0, out_dtype=FLOAT16)
    assert rc == sc.PARAM_INVALID and "out dtype ACL_FLOAT16 (1) must equal self dtype" in msg
    rc, msg = bad(x, w3, m3, b"mul", 1.0, 0, out_shape=[3, 2])
    assert rc == sc.PARAM_INVALID and "out shape must be self's [2, 3], got [3, 2]" in msg
    rc, msg = bad(np.float32(1).reshape(()), [], [], b"mul", 1.0, 0)
    assert rc == sc.PARAM_INVALID and "1-D to 8-D" in msg
    rc, msg = bad(np.ones((1,) * 9, np.float32), [1.0], [True], b"mul", 1.0, 0)
    assert rc == sc.PARAM_INVALID and "got 9-D" in msg


def test_null_tensors_and_foreign_handles(env, vendor):
    s = env.s
    xt, _ = env.tensor(np.ones(2, np.float32))
    ot, _ = env.empty([2], FLOAT)
    wa, ma = env.float_array([1.0, 1.0]), env.bool_array([True, False])
    call = vendor.aclnnCustomMaskedScaleGetWorkspaceSize
    ws, ex = ctypes.c_uint64(), c_void_p()
    api = "aclnnCustomMaskedScaleGetWorkspaceSize"
    assert call(None, wa, ma, b"mul", 1.0, 0, ot, ctypes.byref(ws), ctypes.byref(ex)) == sc.PARAM_NULLPTR
    assert s.err() == f"{api}: self is NULL"
    assert call(xt, wa, ma, b"mul", 1.0, 0, None, ctypes.byref(ws), ctypes.byref(ex)) == sc.PARAM_NULLPTR
    assert s.err() == f"{api}: out is NULL"
    assert call(xt, ma, wa, b"mul", 1.0, 0, ot, ctypes.byref(ws), ctypes.byref(ex)) == sc.INNER_NULLPTR
    assert "weights" in (m := s.err()) and "not a live aclFloatArray: it is a live aclBoolArray" in m
    assert call(xt, wa, wa, b"mul", 1.0, 0, ot, ctypes.byref(ws), ctypes.byref(ex)) == sc.INNER_NULLPTR
    assert "mask" in (m := s.err()) and "not a live aclBoolArray" in m
    dead = s.aclCreateFloatArray((ctypes.c_float * 2)(1, 1), 2)
    s.ok(s.aclDestroyFloatArray(dead))
    assert call(xt, dead, ma, b"mul", 1.0, 0, ot, ctypes.byref(ws), ctypes.byref(ex)) == sc.INNER_NULLPTR
    assert "already destroyed" in s.err()


def test_arrays_may_go_after_phase1(env, vendor):
    """Their values are taken at phase 1."""
    s = env.s
    xt, _ = env.tensor(np.array([1.0, 2.0], np.float32))
    ot, op = env.empty([2], FLOAT)
    wa = s.aclCreateFloatArray((ctypes.c_float * 2)(3, 4), 2)
    ma = s.aclCreateBoolArray((ctypes.c_bool * 2)(True, True), 2)
    ws, ex = ctypes.c_uint64(), c_void_p()
    s.ok(vendor.aclnnCustomMaskedScaleGetWorkspaceSize(xt, wa, ma, b"mul", 1.0, 0, ot, ctypes.byref(ws),
                                                       ctypes.byref(ex)))
    s.ok(s.aclDestroyFloatArray(wa))
    s.ok(s.aclDestroyBoolArray(ma))
    s.ok(vendor.aclnnCustomMaskedScale(None, 0, ex, s.stream))
    s.ok(s.aclrtSynchronizeStream(s.stream))
    assert env.read(op, [2], FLOAT).tolist() == [3.0, 8.0]


def test_empty_self_runs_nothing(env, vendor):
    rc, _ = masked_scale(env, vendor, np.ones((0, 2), np.float32), [1.0, 1.0], [True, True], b"add", 1.0, 0)
    assert rc == 0, env.s.err()


# ---------------------------------------------------------------------------------------
# the shadowed aclnnAdd, and which library a loader takes
# ---------------------------------------------------------------------------------------

class DlInfo(ctypes.Structure):
    _fields_ = [("fname", c_char_p), ("fbase", c_void_p), ("sname", c_char_p), ("saddr", c_void_p)]


_libc = ctypes.CDLL(None)
_libc.dladdr.argtypes = [c_void_p, ctypes.POINTER(DlInfo)]


def home(fn) -> str:
    info = DlInfo()
    assert _libc.dladdr(ctypes.cast(fn, c_void_p), ctypes.byref(info))
    return os.path.basename(info.fname.decode())


def op_plugin_search(prefix: pathlib.Path, libdir: pathlib.Path, name: str) -> str:
    """The library op-plugin's GetOpApiFuncAddr would take name from: the vendors of
    opp/vendors/config.ini's load_priority line in order, then each libopapi_*.so of lib64,
    then libopapi.so (ASCEND_CUSTOM_OPP_PATH, its first step, is unset here)."""
    candidates = []
    config = prefix / "opp" / "vendors" / "config.ini"
    line = next((l for l in config.read_text().splitlines() if l.startswith("load_priority=")), "load_priority=")
    for v in filter(None, line.split("=", 1)[1].split(",")):
        candidates.append(prefix / "opp" / "vendors" / v / "op_api" / "lib" / "libcust_opapi.so")
    candidates += sorted(libdir.glob("libopapi_*.so")) + [libdir / "libopapi.so"]
    for path in candidates:
        if path.is_file() and hasattr(ctypes.CDLL(str(path)), name):
            return path.name
    return ""


def test_vendor_shadows_aclnn_add(env, vendor, simlib):
    s = env.s
    assert home(vendor.aclnnAdd) == "libcust_opapi.so"
    assert home(s.aclnnAdd) == "libopapi.so"
    assert home(vendor.aclnnAdd) != home(s.aclnnAdd)
    prefix, libdir = pathlib.Path(simlib.libdir).parent, pathlib.Path(simlib.libdir)
    assert op_plugin_search(prefix, libdir, "aclnnAddGetWorkspaceSize") == "libcust_opapi.so"
    assert op_plugin_search(prefix, libdir, "aclnnCatGetWorkspaceSize") == "libopapi.so"
    assert op_plugin_search(prefix, libdir, "aclnnCustomMaskedScale") == "libcust_opapi.so"
    # both compute the same; an executor of one's phase 1 runs through the other's phase 2
    x = np.array([1.5, -2.0, 4.0], np.float32)
    results = []
    for p1, p2 in ((vendor.aclnnAddGetWorkspaceSize, vendor.aclnnAdd),
                   (s.aclnnAddGetWorkspaceSize, s.aclnnAdd),
                   (vendor.aclnnAddGetWorkspaceSize, s.aclnnAdd)):
        xt, _ = env.tensor(x)
        al = env.scalar(3.0, DOUBLE)
        ot, op = env.empty([3], FLOAT)
        assert env.run("aclnnAdd", xt, xt, al, ot, fn=(p1, p2)) == 0, s.err()
        results.append(env.read(op, [3], FLOAT).tolist())
    assert results == [[6.0, -8.0, 16.0]] * 3


def test_split_layout_search(sim_builds):
    prefix, libdir = sim_builds["split"].parent, sim_builds["split"]
    assert op_plugin_search(prefix, libdir, "aclnnAdd") == "libcust_opapi.so"
    assert op_plugin_search(prefix, libdir, "aclnnReduceSum") == "libopapi_math.so"
    assert op_plugin_search(prefix, libdir, "aclnnForeachMulScalarList") == "libopapi_nn.so"
