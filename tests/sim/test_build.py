"""The simulator's build and library layout: what build.py compiles and installs, where
each symbol lives, and the operator registration (native/build.py's SOURCES table) against
the installed aclnnop/ headers and the package's operator descriptions.
"""
from __future__ import annotations

import json
import pathlib
import platform
import shutil
import subprocess
import sys

import pytest

from .expected import (ACL_SYMBOLS, C_TYPES, DOMAIN_SYMBOLS, NNOPBASE_SYMBOLS, OP_SYMBOLS, PHASE1_TAIL,
                       PHASE2_TYPES, native_build, read_declarations)

HERE = pathlib.Path(__file__).resolve().parent


def test_build_layouts(sim_builds, tmp_path):
    assert sorted(p.name for p in sim_builds["cann8"].iterdir()) == [
        "libascendcl.so", "libnnopbase.so", "libopapi.so"]
    assert sorted(p.name for p in sim_builds["split"].iterdir()) == [
        "libascendcl.so", "libnnopbase.so", "libopapi_cv.so", "libopapi_math.so", "libopapi_nn.so"]
    libdir = native_build.build(tmp_path / "arch", arch_subdir=True)
    assert libdir == tmp_path / "arch" / f"{platform.machine()}-linux" / "lib64"
    assert (libdir / "libopapi.so").is_file()
    assert not (tmp_path / "arch" / "lib64").exists()
    # the headers follow the libraries into <arch>-linux; opp/ stays at the prefix
    assert (tmp_path / "arch" / f"{platform.machine()}-linux" / "include" / "aclnnop").is_dir()
    assert (tmp_path / "arch" / native_build.OPP_INCLUDE / "aclnnop").is_dir()
    assert not (tmp_path / "arch" / "include").exists()


def test_build_errors_are_clear(tmp_path):
    with pytest.raises(native_build.BuildError, match="not found"):
        native_build.build(tmp_path / "a", cc="/nonexistent/bin/cc")
    with pytest.raises(native_build.BuildError, match="failed"):
        native_build.build(tmp_path / "b", cc="false")  # a "compiler" that always fails
    with pytest.raises(ValueError):
        native_build.build(tmp_path / "c", layout="cann7")


def test_build_cli(tmp_path, sim_builds):
    out = subprocess.run([sys.executable, str(HERE.parents[1] / "native" / "build.py"),
                          "--prefix", str(tmp_path), "--layout", "split"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path / "lib64")
    assert out.stderr == ""  # no compiler warnings
    assert (tmp_path / "lib64" / "libopapi_cv.so").is_file()


def _defined_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils nm not installed")
@pytest.mark.parametrize("layout", ["cann8", "split"])
def test_exported_symbols_exact(sim_builds, layout):
    libdir = sim_builds[layout]
    expected = {"libascendcl.so": ACL_SYMBOLS, "libnnopbase.so": NNOPBASE_SYMBOLS}
    if layout == "cann8":
        expected["libopapi.so"] = OP_SYMBOLS
    else:
        expected.update({f"libopapi_{dom}.so": syms for dom, syms in DOMAIN_SYMBOLS.items()})
    for name, want in expected.items():
        syms = _defined_symbols(libdir / name)
        public = {x for x in syms if not x.startswith("_") and not x.startswith("aclsim_")}
        assert public == want, name
        if name.startswith("libopapi"):  # op libraries export nothing internal
            assert not any(x.startswith("aclsim") for x in syms), name


def test_split_layout_symbol_homes(sim_builds, run_script):
    """Each symbol is defined where CANN >= 8.5 puts it (each operator in the library of
    its domain in build.py's table, and in no other); found through the op library's
    dependencies as torch_npu's loader does."""
    run_script("""
        import json, pathlib
        libdir = pathlib.Path(os.environ["SIMDIR"])
        domains = json.loads(os.environ["DOMAINS"])  # domain -> its operators' symbols

        class DlInfo(ctypes.Structure):
            _fields_ = [("fname", ctypes.c_char_p), ("fbase", c_void_p),
                        ("sname", ctypes.c_char_p), ("saddr", c_void_p)]
        libc = ctypes.CDLL(None)
        libc.dladdr.argtypes = [c_void_p, ctypes.POINTER(DlInfo)]

        def home(lib, name):
            info = DlInfo()
            assert libc.dladdr(ctypes.cast(getattr(lib, name), c_void_p), byref(info))
            return os.path.basename(info.fname.decode())

        libs = {dom: ctypes.CDLL(str(libdir / f"libopapi_{dom}.so")) for dom in domains}
        for dom, symbols in domains.items():
            assert symbols, dom
            for op in symbols:
                assert home(libs[dom], op) == f"libopapi_{dom}.so", op
                for other in set(domains) - {dom}:
                    assert not hasattr(libs[other], op), (other, op)
        cv = libs["cv"]
        assert home(cv, "aclCreateTensor") == "libnnopbase.so"
        assert home(cv, "aclrtMalloc") == "libascendcl.so"
        nn = ctypes.CDLL(str(libdir / "libnnopbase.so"))
        acl = ctypes.CDLL(str(libdir / "libascendcl.so"))
        for op in (op for symbols in domains.values() for op in symbols):
            assert not hasattr(nn, op) and not hasattr(acl, op), op
        assert not hasattr(acl, "aclCreateTensor")

        # and the split build runs the op end to end
        s = sc.Sim(libdir, "libopapi_cv.so")
        s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
        x = np.array([[[1, 2, 3]]], np.float32)
        xp = s.upload(x); op = s.malloc(20)
        xt = s.tensor([1, 1, 3], sc.ACL_FLOAT, xp); ot = s.tensor([1, 1, 5], sc.ACL_FLOAT, op)
        osz = s.int_array([5])
        rc, ws, ex = s.fwd_prepare(xt, osz, 0.0, ot); s.ok(rc)
        s.ok(s.aclnnUpsampleNearestExact1d(None, 0, ex, None)); s.ok(s.aclrtSynchronizeStream(None))
        assert s.download(op, 5, np.float32).tolist() == [1, 1, 2, 3, 3]
        for h in (xt, ot): s.ok(s.aclDestroyTensor(h))
        s.ok(s.aclDestroyIntArray(osz)); s.free(xp); s.free(op)
        assert all(v == 0 for v in s.counts().values()), s.counts()
        s.ok(s.aclrtResetDevice(0)); s.ok(s.aclFinalize())
    """, env={"SIMDIR": str(sim_builds["split"]),
              "DOMAINS": json.dumps({dom: sorted(syms) for dom, syms in DOMAIN_SYMBOLS.items()})})


def test_mixed_builds_warn(sim_builds, run_script):
    """A path-loaded libnnopbase.so binds by soname to the libascendcl.so loaded first."""
    run_script("""
        import subprocess
        code = ("import ctypes,sys; d=sys.argv[1:]; ctypes.CDLL(d[0]+'/libascendcl.so'); "
                "ctypes.CDLL(d[1]+'/libascendcl.so'); ctypes.CDLL(d[1]+'/libnnopbase.so')")
        p = subprocess.run([sys.executable, "-c", code, os.environ["A"], os.environ["B"]],
                           capture_output=True, text=True, check=True)
        assert "two simulator builds are loaded in one process" in p.stderr, p.stderr
        p = subprocess.run([sys.executable, "-c", code, os.environ["B"], os.environ["B"]],
                           capture_output=True, text=True, check=True)
        assert p.stderr == "", p.stderr
    """, env={"A": str(sim_builds["cann8"]), "B": str(sim_builds["split"])})


# ---------------------------------------------------------------------------------------------
# operator registration: build.py's SOURCES table, the aclnnop/ headers, the package
# ---------------------------------------------------------------------------------------------

HEADERS = native_build.headers()


def test_every_source_and_header_is_registered():
    """An operator is registered in build.py's SOURCES table or not at all: every source under
    src/ops (but op_common.c) and every aclnnop/ header (but aclnn_util.h) is in it, and
    each source includes the headers that declare its operators."""
    native = HERE.parents[1] / "native"
    assert {p.name for p in (native / "src" / "ops").glob("*.c")} - {"op_common.c"} == set(native_build.SOURCES)
    assert {p.name for p in (native / "include" / "aclnnop").glob("*.h")} - {"aclnn_util.h"} == \
        native_build.headers(every=True)
    for source, entry in native_build.SOURCES.items():
        assert entry.domain in native_build.DOMAINS, source
        text = (native / "src" / "ops" / source).read_text()
        for op, header in entry.operators.items():
            assert f'#include "aclnnop/{header}"' in text, (source, header)
            assert f"OPC_ENTRY_POINTS({op}," in text or f"MMC_ENTRY_POINTS({op}," in text, (source, op)  # matmul_common.h wraps it


def test_the_package_describes_only_simulator_operators():
    """Every operator the package describes is one the simulator builds. The simulator
    has more: those the package calls from their headers alone (ascend_aclnn.aclnn)."""
    from ascend_aclnn.ops import REGISTRY
    assert {spec.aclnn for spec in REGISTRY} <= set(native_build.operators())


@pytest.mark.parametrize("layout", ["cann8", "split"])
def test_installed_headers_are_the_tables(sim_builds, layout):
    """Where CANN puts them: aclnnop/ in <prefix>/include and, for CANN 8.x, again in
    opp/.../op_api/include; aclnn/aclnn_base.h in <prefix>/include only. Each operator's
    header declares exactly its two functions."""
    prefix = sim_builds[layout].parent
    roots = native_build.include_dirs(prefix, layout)
    assert roots[0] == prefix / "include"
    assert (prefix / native_build.OPP_INCLUDE).exists() == (layout == "cann8")
    for i, root in enumerate(roots):
        assert {p.name for p in (root / "aclnnop").iterdir()} == HEADERS | {"aclnn_util.h"}, root
        assert sorted(p.name for p in root.iterdir()) == (["aclnn", "aclnnop"] if i == 0 else ["aclnnop"]), root
    assert [p.name for p in (roots[0] / "aclnn").iterdir()] == ["aclnn_base.h"]
    for root in roots:
        declared = {}
        for header in sorted(HEADERS):
            names = set(read_declarations((root / "aclnnop" / header).read_text()))
            assert names == native_build.header_functions(header), (header, names)
            declared.update(dict.fromkeys(names, header))
        assert set(declared) == OP_SYMBOLS
        assert read_declarations((root / "aclnnop" / "aclnn_util.h").read_text()) == {}


def test_headers_declare_what_the_package_calls(sim_builds):
    """The package's operator descriptions (parameter names and ctypes, in C order) against
    the prototypes the headers declare: phase 1 with the (workspaceSize, executor) tail,
    phase 2 the same types for every operator (its names are CANN's, which vary), both
    returning aclnnStatus."""
    from ascend_aclnn.ops import REGISTRY
    include = sim_builds["cann8"].parent / "include" / "aclnnop"
    for spec in REGISTRY:
        decls = read_declarations((include / native_build.operators()[spec.aclnn]).read_text())
        ret, params = decls[spec.phase1_name]
        assert ret == "aclnnStatus" and params[-2:] == PHASE1_TAIL, spec.aclnn
        assert [name for _, name in params[:-2]] == [p.c_name for p in spec.params + spec.outputs], spec.aclnn
        assert [C_TYPES[ctype] for ctype, _ in params[:-2]] == list(spec.c_argtypes), spec.aclnn
        ret, params = decls[spec.aclnn]
        assert ret == "aclnnStatus", spec.aclnn
        assert [t.replace("const ", "") for t, _ in params] == PHASE2_TYPES, spec.aclnn


@pytest.mark.parametrize("compiler", ["cc", "c++"])
def test_installed_headers_compile_alone(sim_builds, tmp_path, compiler):
    """Each installed header compiles on its own, as C11 and as C++ (the extern "C" guard),
    from either aclnnop/ directory, with <prefix>/include on the path as in CANN."""
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    prefix = sim_builds["cann8"].parent
    lang = ["-x", "c", "-std=c11"] if compiler == "cc" else ["-x", "c++", "-std=c++11"]
    for root in native_build.include_dirs(prefix, "cann8"):
        for header in sorted(HEADERS | {"aclnn_util.h"}):
            source = tmp_path / "use.src"
            source.write_text(f'#include "aclnnop/{header}"\nint main(void) {{ return 0; }}\n')
            cmd = [compiler, *lang, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-pedantic",
                   f"-I{root}", f"-I{prefix / 'include'}", str(source)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            assert proc.returncode == 0, (header, root, proc.stderr)

