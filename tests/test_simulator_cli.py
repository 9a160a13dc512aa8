"""The CANN simulator for pip users (issue 31, item 5): the wheel and the sdist carry its
sources, build script and README (native/, installed as ascend_aclnn/_native), and
``ascend-aclnn simulator build PREFIX`` compiles it from an installed package, outside any
source tree, into a prefix the npu backend then runs on. Every bad argument is one line
and exit 2 before anything is compiled or created; ``simulator --help`` and ``simulator
docs`` say what a pip user needs without the repository."""
from __future__ import annotations

import io
import os
import platform
import re
import shlex
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from ascend_aclnn.tools import cli
from ascend_aclnn.cann.loader import DEFAULT_ROOTS as DEFAULT_CANN_ROOTS
from conftest import ROOT, run_python, sim_build

PROG = "python -m ascend_aclnn"
NATIVE = ROOT / "native"
# what a source tree holds that no distribution does (and what building one leaves behind)
NOT_SOURCES = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", "*.so",
                                     ".pytest_cache", ".mypy_cache", ".venv*")
# every variable that could point a child at another CANN or another copy of the package
FOREIGN_ENV = ("PYTHONPATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH",
               "ASCEND_ACLNN_HEADERS", "ASCEND_ACLNN_BACKEND", "ASCEND_SIM_CANN_VERSION", "ASCEND_SIM_FAULT",
               "ASCEND_ACLNN_CANN_VERSION")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _native_files() -> set[str]:
    """The simulator's files in the source tree, relative to native/."""
    return {p.relative_to(NATIVE).as_posix() for p in NATIVE.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".so")}


def _package_files() -> set[str]:
    """The package's files in the source tree (modules and package data), relative to ROOT."""
    pkg = ROOT / "ascend_aclnn"
    return {p.relative_to(ROOT).as_posix() for p in pkg.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".so")}


# ---------------------------------------------------------------------------------------------
# the distributions
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """An sdist built from a copy of the source tree, and the wheel built from that sdist
    (the route `pip install` from an index takes), by setuptools' PEP 517 hooks as `pip wheel
    --no-build-isolation` calls them: offline, and nothing is written into the checkout."""
    base = tmp_path_factory.mktemp("dists")
    tree = base / "tree"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCES)
    hook = "import sys; from setuptools import build_meta as b; print(getattr(b, sys.argv[1])(sys.argv[2]))"
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}

    def run_hook(name: str, cwd: Path, out: Path) -> Path:
        done = subprocess.run([sys.executable, "-c", hook, name, str(out)], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        # native/'s subdirectories are data: setuptools must not take them for packages it would drop
        assert "would be ignored" not in done.stderr and "absent from the `packages`" not in done.stderr, done.stderr
        return out / done.stdout.strip().splitlines()[-1]

    sdist = run_hook("build_sdist", tree, base / "sdist")
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.9.17 / 3.10.12 / 3.11.4
            tar.extractall(base / "unpacked", filter="data")
        else:
            tar.extractall(base / "unpacked")
    (unpacked,) = (base / "unpacked").iterdir()
    wheel = run_hook("build_wheel", unpacked, base / "wheel")
    return {"sdist": sdist, "wheel": wheel}


def test_the_wheel_carries_the_simulator_and_every_file_of_the_package(dists):
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    shipped = {n[len("ascend_aclnn/_native/"):] for n in names if n.startswith("ascend_aclnn/_native/")}
    assert shipped == _native_files()  # sources, headers, build.py and README.md, nothing else
    assert {"README.md", "build.py", "src/ascendcl.c", "include/aclnn/aclnn_base.h"} <= shipped
    # every module and data file of the package (setup.py's package list must miss none)
    ours = {n for n in names if n.startswith("ascend_aclnn/") and not n.startswith("ascend_aclnn/_native/")}
    assert ours == _package_files()


def test_the_sdist_carries_the_simulator(dists):
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {f"native/{f}" for f in _native_files()} <= names


def _source_files() -> set[str]:
    """The files of the source tree: git's list in a checkout, else (an unpacked sdist) every
    file but what NOT_SOURCES names."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True) \
        if (ROOT / ".git").exists() and shutil.which("git") else None
    if listed is not None and listed.returncode == 0:
        return {n for n in listed.stdout.split("\0") if n and (ROOT / n).is_file()}
    skip = ("build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", ".git")
    return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
            if p.is_file() and not any(part in skip or part.endswith(".egg-info") or part.startswith(".venv")
                                       for part in p.relative_to(ROOT).parts)
            and p.suffix not in (".pyc", ".so") and p.name not in ("PKG-INFO", "setup.cfg")}


def test_the_sdist_carries_every_file_of_the_source_tree(dists):
    """The README says the sdist has everything: the tests and what they import (devtools/'s
    generator, issue 41 item 1), the examples, the docs, the benchmarks and CI's script."""
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing = sorted(_source_files() - names - {".gitignore"})
    assert missing == [], missing


def test_the_sdist_runs_its_own_tests(dists):
    """From the unpacked sdist, its own test command: the whole suite collects, and the tests
    that read files beside the package (devtools/, the table's generator) pass."""
    (unpacked,) = (dists["sdist"].parent.parent / "unpacked").iterdir()
    env = _clean_env(PYTHONPATH=str(unpacked))
    for key in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env.pop(key, None)
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0"]
    collected = subprocess.run([*base, "--collect-only", "-q"], cwd=unpacked, env=env, capture_output=True,
                               text=True, timeout=900)
    # "N tests collected in", with no ", M errors" between
    assert collected.returncode == 0 and re.search(r"^\d+ tests collected in ", collected.stdout, re.M), \
        collected.stdout[-3000:]
    ran = subprocess.run([*base, "-q", "tests/test_cpu_reference_generator.py", "tests/test_cpu_reference_table.py"],
                         cwd=unpacked, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", ran.stdout) and " error" not in ran.stdout, ran.stdout[-2000:]


# ---------------------------------------------------------------------------------------------
# from a pip install, outside the source tree
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def installed(dists, tmp_path_factory) -> dict[str, Path]:
    """A fresh venv holding only the wheel (pip install --no-deps); NumPy and ml_dtypes come
    from the interpreter running the tests, through a .pth file appended after the venv's
    own site-packages, so the wheel's copy of the package is the one imported."""
    base = tmp_path_factory.mktemp("venv")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    venv_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    outer = dict.fromkeys(p for p in [*site.getsitepackages(), sysconfig.get_paths()["purelib"],
                                      sysconfig.get_paths()["platlib"]] if Path(p).is_dir())
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           "--no-cache-dir", "--disable-pip-version-check", str(dists["wheel"])],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # Only now: seeing the outer site-packages, pip would take the package installed there
    # (a regular `pip install .`) for this wheel and install nothing.
    (venv_site / "outer-dependencies.pth").write_text("".join(f"{p}\n" for p in outer))
    return {"python": python, "script": venv / "bin" / "ascend-aclnn", "site": venv_site, "work": base}


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env.update(extra)
    return env


def test_simulator_build_from_a_pip_install_runs_the_npu_path(installed, sim):
    """`ascend-aclnn simulator build` from the installed package (cwd outside the source
    tree, no PYTHONPATH), with every non-default option; its stdout, given to a shell, is the
    environment the npu backend then runs on: a described operator and the vendor package's."""
    work, prefix = installed["work"], installed["work"] / "cann sim"  # a space: the printed line must quote it
    built = subprocess.run([str(installed["script"]), "simulator", "build", str(prefix), "--layout", "split",
                            "--arch-subdir", "--cann-version", "8.1.RC1", "--vendor", "acme"],
                           cwd=work, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    lines = built.stdout.splitlines()
    assert lines[-1] == f"export ASCEND_HOME_PATH={shlex.quote(str(prefix))}", built.stdout
    assert all(line.startswith("#") for line in lines[:-1]), built.stdout  # eval-able as it is
    libdir = prefix / f"{platform.machine()}-linux" / "lib64"
    assert str(libdir) in built.stdout
    assert sorted(p.name for p in libdir.iterdir()) == [
        "libascendcl.so", "libnnopbase.so", "libopapi_cv.so", "libopapi_math.so", "libopapi_nn.so"]
    assert (prefix / "opp" / "vendors" / "acme" / "op_api" / "lib" / "libcust_opapi.so").is_file()
    assert "version_dir=8.1.RC1" in (prefix / "runtime" / "version.info").read_text()

    check = f"""
import numpy as np, ascend_aclnn as aa
from ascend_aclnn.cann import loader
assert aa.__file__.startswith({str(installed['site'])!r}), aa.__file__
assert aa.get_backend() == "npu", aa.get_backend()
assert loader.get_cann().lib_dir == loader.Path({str(libdir)!r}), loader.get_cann().lib_dir
x = np.arange(30, dtype=np.float32).reshape(2, 3, 5)
y = aa.upsample_nearest_exact1d(x, [8])
with aa.use_backend("numpy"):
    want = aa.upsample_nearest_exact1d(x, [8])
assert np.array_equal(y, want), (y, want)
v = np.arange(4, dtype=np.float32)
got = aa.aclnn.CustomMaskedScale(v, [1.0, 2.0, 3.0, 4.0], [True, False, True, True], "mul", 0.5, 1,
                                 np.empty_like(v))
assert got.tolist() == [0.0, 1.0, 6.0, 12.0], got
print("ok")
"""
    ran = subprocess.run(["sh", "-c", built.stdout + '\nexec "$0" -c "$1"', str(installed["python"]), check],
                         cwd=work, env=_clean_env(ASCEND_ACLNN_BACKEND="npu"), capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0 and ran.stdout == "ok\n", ran.stdout + ran.stderr


def test_simulator_docs_and_help_from_a_pip_install(installed):
    docs = subprocess.run([str(installed["script"]), "simulator", "docs"], cwd=installed["work"], env=_clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert docs.returncode == 0 and docs.stderr == ""
    assert docs.stdout == (NATIVE / "README.md").read_text()
    helped = subprocess.run([str(installed["script"]), "simulator", "--help"], cwd=installed["work"],
                            env=_clean_env(), capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0
    assert str(installed["site"] / "ascend_aclnn" / "_native") in " ".join(helped.stdout.split())


# ---------------------------------------------------------------------------------------------
# refusals: one line, exit 2, nothing compiled or created
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def sim_cli():
    """The command's module (imported here, so that the distribution tests above run alone)."""
    from ascend_aclnn.tools import simulator
    return simulator


@pytest.fixture
def no_build(monkeypatch, sim_cli):
    """Records any build that starts (none may, for a refused command)."""
    started: list[tuple] = []
    monkeypatch.setattr(sim_cli, "build", lambda *a, **k: started.append((a, k)))
    return started


def _refused(argv: list[str], *words: str) -> str:
    code, out, err = run_cli(*argv)
    assert (code, out) == (2, ""), (argv, code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err and ": error: " in err, (argv, err)
    for w in words:
        assert w in err, (argv, w, err)
    return err


def test_bad_arguments_are_one_line_exit_2_and_nothing_is_built(tmp_path, no_build, monkeypatch):
    prefix = tmp_path / "p"
    _refused(["simulator"], "required")
    _refused(["simulator", "build"], "PREFIX")
    _refused(["simulator", "frobnicate"], "invalid choice")
    _refused(["simulator", "build", str(prefix), "--layout", "cann7"], "--layout", "'cann7'", "cann8", "split")
    _refused(["simulator", "build", str(prefix), "--cann-version", "7.0.0"], "--cann-version", "8.1.RC1", "9.2.0")
    _refused(["simulator", "build", str(prefix), "--vendor", "a/b"], "--vendor", "'a/b'")
    _refused(["simulator", "build", str(prefix), "--vendor", "acme", "--no-vendor"], "--no-vendor")
    monkeypatch.setenv("ASCEND_SIM_CANN_VERSION", "bogus")
    _refused(["simulator", "build", str(prefix)], "ASCEND_SIM_CANN_VERSION", "'bogus'")
    monkeypatch.delenv("ASCEND_SIM_CANN_VERSION")
    assert no_build == [] and not prefix.exists()


def test_a_missing_compiler_is_named(tmp_path, no_build, monkeypatch):
    prefix = tmp_path / "p"
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    err = _refused(["simulator", "build", str(prefix)], "CC", "/nonexistent/bin/cc")
    assert err.startswith(f"{PROG} simulator build: error: ")
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no cc anywhere
    _refused(["simulator", "build", str(prefix)], "`cc`", "CC")
    assert no_build == [] and not prefix.exists()


def test_a_prefix_that_is_no_new_or_empty_directory_is_refused(tmp_path, no_build, sim):
    a_file = tmp_path / "file"
    a_file.write_text("")
    _refused(["simulator", "build", str(a_file)], "PREFIX", str(a_file), "not a directory")
    _refused(["simulator", "build", str(a_file / "sub")], "PREFIX", str(a_file), "not a directory")
    # a real CANN install is never overwritten
    real = tmp_path / "Ascend" / "latest"
    (real / "lib64").mkdir(parents=True)
    (real / "lib64" / "libascendcl.so").write_bytes(b"\x7fELF a real one")
    _refused(["simulator", "build", str(real)], "PREFIX", "not empty", "CANN install", "libascendcl.so")
    assert (real / "lib64" / "libascendcl.so").read_bytes() == b"\x7fELF a real one"
    # nor built over an earlier build (a split build over a cann8 one would leave libopapi.so behind)
    _refused(["simulator", "build", str(sim.prefix)], "PREFIX", "not empty", "earlier simulator build")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("")
    _refused(["simulator", "build", str(tmp_path / "mine")], "PREFIX", "not empty", "notes.txt")
    assert no_build == [] and sorted(p.name for p in real.iterdir()) == ["lib64"]


def test_the_options_reach_the_build_with_the_defaults_of_native_build(tmp_path, monkeypatch, sim_cli):
    calls: list[dict] = []

    def fake(prefix, **kwargs):
        calls.append(dict(kwargs, prefix=prefix))
        libdir = Path(prefix) / "lib64"
        libdir.mkdir(parents=True)
        return libdir

    monkeypatch.setattr(sim_cli, "build", fake)
    monkeypatch.delenv("ASCEND_SIM_CANN_VERSION", raising=False)
    code, out, err = run_cli("simulator", "build", str(tmp_path / "a"))
    assert code == 0, err
    assert calls[-1] == {"prefix": (tmp_path / "a").resolve(), "layout": "cann8", "arch_subdir": False,
                         "cann_version": sim_build.NEWEST, "vendor": sim_build.DEFAULT_VENDOR}
    monkeypatch.setenv("ASCEND_SIM_CANN_VERSION", "8.1.RC1")
    code, out, err = run_cli("simulator", "build", str(tmp_path / "b"), "--no-vendor", "--layout", "split")
    assert code == 0, err
    assert calls[-1]["cann_version"] == "8.1.RC1" and calls[-1]["vendor"] is None and calls[-1]["layout"] == "split"
    assert out.splitlines()[-1] == f"export ASCEND_HOME_PATH={shlex.quote(str((tmp_path / 'b').resolve()))}"


def test_a_cann_environment_of_this_shell_is_undone_by_the_printed_line(tmp_path, monkeypatch, sim_cli):
    """With a real CANN's set_env.sh sourced, ASCEND_OPP_PATH and ASCEND_CUSTOM_OPP_PATH would
    make the loader take vendor and custom operator libraries from that CANN: the line unsets them."""
    monkeypatch.setattr(sim_cli, "build", lambda prefix, **k: (Path(prefix) / "lib64").mkdir(parents=True)
                        or Path(prefix) / "lib64")
    monkeypatch.setenv("ASCEND_OPP_PATH", "/usr/local/Ascend/ascend-toolkit/latest/opp")
    code, out, err = run_cli("simulator", "build", str(tmp_path / "p"), "--no-vendor")
    assert code == 0, err
    assert out.splitlines()[-1] == f"export ASCEND_HOME_PATH={tmp_path / 'p'}; unset ASCEND_OPP_PATH"


def test_the_output_stays_shell_comments_whatever_the_path_holds(tmp_path, monkeypatch, sim_cli):
    """A line break in PREFIX must not end a comment line: eval "$(...)" would run the rest."""
    monkeypatch.setattr(sim_cli, "build", lambda prefix, **k: (Path(prefix) / "lib64").mkdir(parents=True)
                        or Path(prefix) / "lib64")
    prefix = tmp_path / "x\ntouch pwned"
    code, out, err = run_cli("simulator", "build", str(prefix), "--no-vendor")
    assert code == 0, err
    comments, _, line = out.partition("\nexport ")
    assert all(c.startswith("# ") for c in comments.splitlines()), out
    assert line == f"ASCEND_HOME_PATH={shlex.quote(str(prefix))}\n"  # quoted: one shell word, newline and all
    ran = subprocess.run(["sh", "-c", out + 'printf %s "$ASCEND_HOME_PATH"'], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout == str(prefix) and not (tmp_path / "pwned").exists(), ran


def test_a_failing_compiler_is_exit_1_with_its_output(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "false")  # runs, and fails every compilation
    code, out, err = run_cli("simulator", "build", str(tmp_path / "p"), "--no-vendor")
    assert code == 1 and out == ""
    assert f"\n{PROG} simulator build: error: compiling libascendcl.so failed" in err, err


# ---------------------------------------------------------------------------------------------
# what a pip user reads
# ---------------------------------------------------------------------------------------------

def test_help_says_what_the_simulator_is_and_how_to_use_it():
    code, out, err = run_cli("simulator", "--help")
    assert code == 0 and err == ""
    text = " ".join(out.split())
    for words in ("not an NPU", "CPU model of CANN's C ABI", "simulator build", "simulator docs",
                  "ASCEND_HOME_PATH", "eval"):
        assert words in text, words
    code, out, err = run_cli("simulator", "build", "--help")
    text = " ".join(out.split())
    assert code == 0
    # the choices the help lists are the build script's own
    assert f"{' or '.join(sim_build.LAYOUTS)}" in text and f"{' or '.join(sim_build.PROFILES)}" in text, text
    assert sim_build.DEFAULT_VENDOR in text and "ASCEND_SIM_CANN_VERSION" in text
    code, out, _ = run_cli("--help")
    assert "simulator" in out


def test_docs_print_the_simulators_readme():
    code, out, err = run_cli("simulator", "docs")
    assert (code, err) == (0, "") and out == (NATIVE / "README.md").read_text()


def test_importing_the_package_and_the_cli_loads_no_build_script():
    result = run_python(
        "import sys, ascend_aclnn\nfrom ascend_aclnn.tools import cli\ncli.parser()\n"
        "print([n for n, m in list(sys.modules.items()) if 'build.py' in (getattr(m, '__file__', None) or '')])")
    assert result.returncode == 0 and result.stdout == "[]\n", result.stdout + result.stderr


def test_selftest_and_bench_point_at_the_command_not_at_native(tmp_path):
    """Without an NPU and without a compiler: bench --npu-only cannot build the simulator and
    says how to get one; neither command names the checkout's native/ any more."""
    no_cann = {"ASCEND_HOME_PATH": str(tmp_path / "nothing"), "LD_LIBRARY_PATH": "", "CC": "/nonexistent/bin/cc"}
    if any(Path(root).is_dir() for root in DEFAULT_CANN_ROOTS):
        pytest.skip("a CANN is installed where the loader looks by default: this host has an NPU stack")
    result = run_python("import sys; from ascend_aclnn.tools.cli import main; sys.exit(main(['bench', '--npu-only']))",
                        **no_cann)
    assert "npu backend is unavailable" in result.stderr, result.stderr
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "/nonexistent/bin/cc" in result.stderr and "simulator --help" in result.stderr, result.stderr
    assert "native/" not in result.stderr
    code, out, _ = run_cli("bench", "--help")
    assert "native/" not in out and "simulator" in out
    code, out, _ = run_cli("selftest", "--help")
    assert "native/" not in out and "simulator build" in " ".join(out.split())
