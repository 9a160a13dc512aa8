"""The loader's search order (roots, operator packages, header directories) on fake install
trees, and how it opens operator libraries (RTLD_LOCAL, first library wins, never the
monolithic libopapi.so next to split ones) with tiny libraries compiled here."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ascend_aclnn.cann import loader
from ascend_aclnn.cann.loader import OperatorLibrary

ROOT = Path(__file__).resolve().parent.parent
ARCH = platform.machine()
CC = os.environ.get("CC", "cc")


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def cann_root(base: Path, *, split=(), monolithic=False, arch_subdir=False) -> Path:
    """A fake CANN root: libascendcl.so in lib64/ (or <arch>-linux/lib64/) and operator libraries."""
    lib = base / (f"{ARCH}-linux/lib64" if arch_subdir else "lib64")
    touch(lib / "libascendcl.so")
    for name in split:
        touch(lib / f"libopapi_{name}.so")
    if monolithic:
        touch(lib / "libopapi.so")
    return base


def custom_pkg(base: Path, with_lib=True) -> Path:
    if with_lib:
        touch(base / "op_api" / "lib" / "libcust_opapi.so")
    (base / "op_api" / "include").mkdir(parents=True, exist_ok=True)
    return base


def vendors(opp: Path, config: str | None, names=(), with_lib=True) -> Path:
    if config is not None:
        touch(opp / "vendors" / "config.ini", config)
    for name in names:
        custom_pkg(opp / "vendors" / name, with_lib)
    return opp


def order(lib_dir, environ):
    return [(lib.origin, lib.package, Path(lib.path).name if "/" in lib.path else lib.path)
            for lib in loader.operator_library_order(lib_dir, environ)]


# ---------------------------------------------------------------------------------------------
# roots and library directories
# ---------------------------------------------------------------------------------------------

def test_roots_in_order_without_duplicates(tmp_path):
    env = {"ASCEND_HOME_PATH": str(tmp_path / "a"), "ASCEND_TOOLKIT_HOME": str(tmp_path / "a")}
    assert loader.cann_roots(env) == [tmp_path / "a"] + [Path(r) for r in loader.DEFAULT_ROOTS]
    env["ASCEND_TOOLKIT_HOME"] = str(tmp_path / "b")
    assert loader.cann_roots(env)[:2] == [tmp_path / "a", tmp_path / "b"]
    assert loader.candidate_dirs(env)[:4] == [tmp_path / "a/lib64", tmp_path / f"a/{ARCH}-linux/lib64",
                                              tmp_path / "b/lib64", tmp_path / f"b/{ARCH}-linux/lib64"]


def test_lib_dir_is_the_first_holding_libascendcl(tmp_path):
    cann_root(tmp_path / "b", arch_subdir=True)
    env = {"ASCEND_HOME_PATH": str(tmp_path / "a"), "ASCEND_TOOLKIT_HOME": str(tmp_path / "b")}
    assert loader.find_lib_dir(env) == tmp_path / f"b/{ARCH}-linux/lib64"
    cann_root(tmp_path / "a")
    assert loader.find_lib_dir(env) == tmp_path / "a/lib64"


# ---------------------------------------------------------------------------------------------
# operator libraries
# ---------------------------------------------------------------------------------------------

def test_monolithic_when_there_is_no_split_library(tmp_path):
    root = cann_root(tmp_path / "cann", monolithic=True)
    env = {"ASCEND_HOME_PATH": str(root)}
    libs = loader.operator_library_order(root / "lib64", env)
    assert libs == [OperatorLibrary(str(root / "lib64/libopapi.so"), "monolithic")]
    assert libs[0].label == "monolithic"
    assert loader.operator_libraries(root / "lib64", env) == [str(root / "lib64/libopapi.so")]


def test_split_libraries_sorted_and_never_the_monolithic_one(tmp_path):
    root = cann_root(tmp_path / "cann", split=("nn", "cv", "math"), monolithic=True)
    (root / "lib64" / "libopapi_dir.so").mkdir()  # not a regular file: ignored
    assert order(root / "lib64", {}) == [("split", "", "libopapi_cv.so"), ("split", "", "libopapi_math.so"),
                                         ("split", "", "libopapi_nn.so")]


def test_the_dynamic_linker_is_the_last_resort(tmp_path):
    root = cann_root(tmp_path / "cann")
    assert order(root / "lib64", {}) == [("monolithic", "", "libopapi.so")]
    assert order(None, {}) == [("monolithic", "", "libopapi.so")]


def test_custom_packages_first_in_their_order(tmp_path):
    root = cann_root(tmp_path / "cann", split=("nn",))
    c1, c2 = custom_pkg(tmp_path / "c1"), custom_pkg(tmp_path / "c2")
    custom_pkg(tmp_path / "nolib", with_lib=False)
    env = {"ASCEND_CUSTOM_OPP_PATH": f"{c2}::{tmp_path / 'missing'}:{tmp_path / 'nolib'}:{c1}:{c2}"}
    assert order(root / "lib64", env) == [("custom", str(c2), "libcust_opapi.so"),
                                          ("custom", str(c1), "libcust_opapi.so"),
                                          ("split", "", "libopapi_nn.so")]
    assert loader.operator_library_order(root / "lib64", env)[0].label == f"custom {c2}"


def test_vendors_in_load_priority_order(tmp_path):
    root = cann_root(tmp_path / "cann", monolithic=True)
    opp = vendors(tmp_path / "opp", "# vendors\nload_priority= mdc ,customize,,missing,../x,mdc\nload_priority=other\n",
                  names=("customize", "mdc", "other"))
    env = {"ASCEND_OPP_PATH": str(opp), "ASCEND_CUSTOM_OPP_PATH": str(custom_pkg(tmp_path / "c"))}
    assert loader.vendor_names(opp) == ["mdc", "customize", "missing"]
    assert order(root / "lib64", env) == [("custom", str(tmp_path / "c"), "libcust_opapi.so"),
                                          ("vendor", "mdc", "libcust_opapi.so"),
                                          ("vendor", "customize", "libcust_opapi.so"),
                                          ("monolithic", "", "libopapi.so")]
    assert [lib.label for lib in loader.operator_library_order(root / "lib64", env)][1:3] == \
        ["vendor mdc", "vendor customize"]


def test_vendor_config_missing_or_without_the_line(tmp_path):
    assert loader.vendor_names(None) == []
    assert loader.vendor_names(tmp_path) == []
    vendors(tmp_path, "[vendors]\npriority=a\n", names=("a",))
    assert loader.vendor_names(tmp_path) == []
    vendors(tmp_path, "  load_priority=a\n")  # op-plugin wants the line to start with the key
    assert loader.vendor_names(tmp_path) == []


def test_vendors_of_the_root_in_use_when_ascend_opp_path_is_unset(tmp_path):
    other = cann_root(tmp_path / "other")
    vendors(other / "opp", "load_priority=wrong\n", names=("wrong",))
    root = cann_root(tmp_path / "cann", monolithic=True)
    vendors(root / "opp", "load_priority=right\n", names=("right",))
    env = {"ASCEND_HOME_PATH": str(other), "ASCEND_TOOLKIT_HOME": str(root)}
    (other / "lib64" / "libascendcl.so").unlink()  # the libraries come from the second root
    lib_dir = loader.find_lib_dir(env)
    assert lib_dir == root / "lib64"
    assert loader.opp_dir(lib_dir, env) == root / "opp"
    assert order(lib_dir, env)[0] == ("vendor", "right", "libcust_opapi.so")
    assert loader.opp_dir(lib_dir, {**env, "ASCEND_OPP_PATH": str(other / "opp")}) == other / "opp"


# ---------------------------------------------------------------------------------------------
# header directories: the same packages, the same order
# ---------------------------------------------------------------------------------------------

def test_header_dirs_follow_the_library_order(tmp_path):
    root = cann_root(tmp_path / "cann", split=("nn",))
    opp = vendors(root / "opp", "load_priority=v2,v1\n", names=("v1", "v2"))
    c = custom_pkg(tmp_path / "c")
    env = {"ASCEND_HOME_PATH": str(root), "ASCEND_CUSTOM_OPP_PATH": str(c)}
    dirs = loader.operator_header_dirs(env)
    assert [(d.path, d.origin) for d in dirs] == [
        (c / "op_api/include", f"custom {c}"),
        (opp / "vendors/v2/op_api/include", "vendor v2"),
        (opp / "vendors/v1/op_api/include", "vendor v1"),
        (root / "include/aclnnop", f"built-in {root}"),
        (root / f"{ARCH}-linux/include/aclnnop", f"built-in {root}"),
        (root / "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop", f"built-in {root}"),
    ]
    # the library origins in the same order
    assert [lib.label for lib in loader.operator_library_order(root / "lib64", env)] == \
        [f"custom {c}", "vendor v2", "vendor v1", "split"]


def test_header_dirs_of_every_root_when_none_holds_the_libraries(tmp_path):
    env = {"ASCEND_HOME_PATH": str(tmp_path / "a"), "ASCEND_TOOLKIT_HOME": str(tmp_path / "b")}
    roots = [d.origin for d in loader.operator_header_dirs(env)]
    expected = [tmp_path / "a", tmp_path / "b"] + [Path(r) for r in loader.DEFAULT_ROOTS]
    assert list(dict.fromkeys(roots)) == [f"built-in {r}" for r in expected]
    assert len(roots) == 3 * len(expected)
    # no library directory: the same; a library directory in the second root: that root only
    assert loader.operator_header_dirs(env, None, find_lib_dir_first=False) == loader.operator_header_dirs(env)
    cann_root(tmp_path / "b")
    only_b = loader.operator_header_dirs(env)
    assert {d.origin for d in only_b} == {f"built-in {tmp_path / 'b'}"}


# ---------------------------------------------------------------------------------------------
# opening and resolving, with real (tiny) libraries, in a child process
# ---------------------------------------------------------------------------------------------

def c_library(path: Path, ops: dict[str, str], helper: int | None = None) -> Path:
    """A shared library whose aclnn<op>GetWorkspaceSize returns the given C expression."""
    lines = ["#include <stdint.h>"]
    if helper is not None:
        lines.append(f"int opapi_helper(void) {{ return {helper}; }}")
    for op, value in ops.items():
        lines.append(f"int32_t aclnn{op}GetWorkspaceSize(uint64_t *ws, void **ex) "
                     f"{{ (void)ws; (void)ex; return {value}; }}")
        lines.append(f"int32_t aclnn{op}(void *w, uint64_t n, void *ex, void *st) "
                     "{ (void)w; (void)n; (void)ex; (void)st; return 0; }")
    path.parent.mkdir(parents=True, exist_ok=True)
    src = path.with_suffix(".c")
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(path), str(src)], check=True)
    return path


@pytest.fixture(scope="module")
def fake_install(tmp_path_factory):
    """A CANN root with split and monolithic libraries, a custom package and two vendors; each
    library's copy of an operator returns its own status, so the winner is visible."""
    base = tmp_path_factory.mktemp("fake-cann")
    root, lib = base / "cann", base / "cann" / "lib64"
    c_library(lib / "libascendcl.so", {})
    c_library(lib / "libnnopbase.so", {})
    # Split library a: its Helper operator calls opapi_helper(), which it defines as 2; the
    # custom library (opened first) defines opapi_helper too, as 1.
    c_library(lib / "libopapi_a.so", {"Shared": 23, "VendorShared": 33, "SplitA": 50, "Both": 51,
                                      "Helper": "opapi_helper()"}, helper=2)
    c_library(lib / "libopapi_b.so", {"Both": 52, "SplitB": 53})
    c_library(lib / "libopapi.so", {"MonoOnly": 60, "SplitA": 61})
    c_library(base / "custom/op_api/lib/libcust_opapi.so", {"Shared": 21, "CustomOnly": 20}, helper=1)
    opp = root / "opp"
    touch(opp / "vendors/config.ini", "load_priority=v2,v1\n")
    c_library(opp / "vendors/v1/op_api/lib/libcust_opapi.so", {"VendorShared": 31, "V": 41})
    c_library(opp / "vendors/v2/op_api/lib/libcust_opapi.so", {"V": 42})
    return root, base / "custom"


RESOLVE = textwrap.dedent("""
    import ctypes, json, os, sys
    from ascend_aclnn.cann import loader
    from ascend_aclnn.errors import CannLoadError
    cann = loader.Cann()
    result = {}
    for op in sys.argv[1:]:
        try:
            phase1, phase2 = cann.operator("aclnn" + op, ())
        except CannLoadError as exc:
            result[op] = str(exc)
            continue
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        result[op] = [phase1(ctypes.byref(ws), ctypes.byref(ex)), os.path.relpath(cann.operator_sources["aclnn" + op],
                                                                                  os.environ["BASE"])]
    # operator libraries are RTLD_LOCAL: their symbols are not in the global scope
    result["global"] = hasattr(ctypes.CDLL(None), "aclnnSharedGetWorkspaceSize")
    result["maps"] = sorted({os.path.basename(line.split()[-1]) for line in open("/proc/self/maps")
                             if "libopapi" in line or "libcust_opapi" in line})
    result["status"] = [[lib.label, os.path.relpath(lib.path, os.environ["BASE"]), status]
                        for lib, status in cann.operator_library_status()]
    print(json.dumps(result))
""")


def resolve(root: Path, custom: Path, *ops: str, **env_updates: str) -> dict:
    import json
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.update({"ASCEND_HOME_PATH": str(root), "ASCEND_CUSTOM_OPP_PATH": str(custom), "BASE": str(root.parent),
                "PYTHONPATH": os.pathsep.join([str(ROOT)] + env.get("PYTHONPATH", "").split(os.pathsep))})
    env.update(env_updates)
    out = subprocess.run([sys.executable, "-c", RESOLVE, *ops], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_first_library_that_exports_the_pair_wins(fake_install):
    root, custom = fake_install
    r = resolve(root, custom, "Shared", "VendorShared", "V", "SplitA", "Both", "SplitB", "CustomOnly", "MonoOnly")
    assert r["Shared"] == [21, "custom/op_api/lib/libcust_opapi.so"]           # custom over vendor and split
    assert r["VendorShared"] == [31, "cann/opp/vendors/v1/op_api/lib/libcust_opapi.so"]  # vendor over split
    assert r["V"] == [42, "cann/opp/vendors/v2/op_api/lib/libcust_opapi.so"]   # load_priority=v2,v1
    assert r["SplitA"] == [50, "cann/lib64/libopapi_a.so"]                      # not libopapi.so's 61
    assert r["Both"] == [51, "cann/lib64/libopapi_a.so"]                        # split libraries sorted
    assert r["SplitB"] == [53, "cann/lib64/libopapi_b.so"]
    assert r["CustomOnly"] == [20, "custom/op_api/lib/libcust_opapi.so"]
    # never the monolithic library next to split ones: not even opened
    assert "not found in any operator library" in r["MonoOnly"] and "libopapi.so " not in r["MonoOnly"]
    assert "libopapi.so" not in r["maps"]
    assert r["status"] == [["custom " + str(custom), "custom/op_api/lib/libcust_opapi.so", "loaded"],
                           ["vendor v2", "cann/opp/vendors/v2/op_api/lib/libcust_opapi.so", "loaded"],
                           ["vendor v1", "cann/opp/vendors/v1/op_api/lib/libcust_opapi.so", "loaded"],
                           ["split", "cann/lib64/libopapi_a.so", "loaded"],
                           ["split", "cann/lib64/libopapi_b.so", "loaded"]]


def test_operator_libraries_are_opened_rtld_local(fake_install):
    """The custom library, opened first, defines opapi_helper() too: under RTLD_GLOBAL it would
    interpose on libopapi_a.so's own call (1 instead of 2)."""
    root, custom = fake_install
    r = resolve(root, custom, "CustomOnly", "Helper")
    assert r["CustomOnly"][0] == 20 and r["Helper"] == [2, "cann/lib64/libopapi_a.so"]
    assert r["global"] is False


def test_libraries_not_needed_are_not_opened(fake_install):
    root, custom = fake_install
    r = resolve(root, custom, "Shared")
    assert r["maps"] == ["libcust_opapi.so"]
    assert [s for _, _, s in r["status"]] == ["loaded"] + ["not opened"] * 4


def test_monolithic_library_without_split_ones(fake_install, tmp_path):
    root, _ = fake_install
    mono = tmp_path / "cann"
    (mono / "lib64").mkdir(parents=True)
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so"):
        (mono / "lib64" / name).symlink_to(root / "lib64" / name)
    r = resolve(mono, tmp_path / "none", "MonoOnly", "SplitA")
    assert r["MonoOnly"] == [60, "cann/lib64/libopapi.so"] and r["SplitA"][0] == 61
    assert r["status"] == [["monolithic", "cann/lib64/libopapi.so", "loaded"]]


def test_a_library_that_fails_to_load_is_reported_and_skipped(fake_install, tmp_path):
    root, custom = fake_install
    broken = tmp_path / "broken"
    touch(broken / "op_api/lib/libcust_opapi.so", "not an ELF file")
    r = resolve(root, custom, "Shared", ASCEND_CUSTOM_OPP_PATH=f"{broken}:{custom}")
    assert r["Shared"] == [21, "custom/op_api/lib/libcust_opapi.so"]
    assert r["status"][0][0] == f"custom {broken}" and r["status"][0][2].startswith("failed to load:")
