"""``bench --npu`` (and --npu-only, --device) without CANN: it says on stderr that it builds the
CANN simulator, where, and how to avoid it, and reuses one build per source version from a
per-user cache (filled atomically), instead of compiling it again, silently, on every run."""
from __future__ import annotations

import io
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_aclnn.tools import bench, bench_npu, cli, simulator

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh $XDG_CACHE_HOME, and a build that only lays out the library it is looked up by
    (the real one is ~10 s of compiling; test_two_real_runs_build_once does it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(simulator.VERSION_ENV, raising=False)
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)  # the session's simulator
    builds: list[Path] = []

    def fake_build(prefix, *, installed_at=None, **kwargs):
        lib = Path(prefix) / "lib64" / "libascendcl.so"
        lib.parent.mkdir(parents=True)
        lib.write_text(f"built for {installed_at}")
        builds.append(Path(prefix))
        return lib.parent
    monkeypatch.setattr(simulator, "build", fake_build)
    return builds


def test_the_cache_is_under_xdg_cache_home_else_home(tmp_path):
    assert simulator.cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "ascend-aclnn"
    home = Path.home() / ".cache" / "ascend-aclnn"
    assert simulator.cache_root({}) == home
    assert simulator.cache_root({"XDG_CACHE_HOME": "relative/dir"}) == home  # XDG: a relative path is ignored


def test_building_says_so_on_stderr_with_where_and_how_to_avoid_it(cache, tmp_path):
    err = io.StringIO()
    prefix, why = bench_npu.simulator_prefix(err, "bench")
    assert why == "" and prefix is not None
    assert Path(prefix).parent == tmp_path / "xdg" / "ascend-aclnn"
    line = err.getvalue()
    assert line.count("\n") == 1, line
    assert "no CANN" in line and "building the CANN simulator" in line and prefix in line
    assert "simulator build DIR" in line and "ASCEND_HOME_PATH=DIR" in line


def test_a_second_run_reuses_the_build(cache):
    first, _ = bench_npu.simulator_prefix(io.StringIO(), "bench")
    lib = Path(first) / "lib64" / "libascendcl.so"
    before = lib.stat()
    err = io.StringIO()
    second, _ = bench_npu.simulator_prefix(err, "bench")
    assert second == first and len(cache) == 1
    assert (lib.stat().st_ino, lib.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert "building" not in err.getvalue() and first in err.getvalue()  # it still says which CANN runs


def test_a_cann_that_does_not_load_is_named(cache, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", "/opt/broken-cann")
    err = io.StringIO()
    bench_npu.simulator_prefix(err, "bench")
    assert "the CANN at ASCEND_HOME_PATH=/opt/broken-cann does not load; building" in err.getvalue()


def test_the_build_is_published_whole_by_a_rename(cache):
    """Built elsewhere and renamed into place: a concurrent run sees no half-built prefix, and
    the build records where it will be used from, not where it was compiled."""
    prefix, _ = bench_npu.simulator_prefix(io.StringIO(), "bench")
    assert cache[0] != Path(prefix) and cache[0].parent == Path(prefix).parent and not cache[0].exists()
    assert (Path(prefix) / "lib64" / "libascendcl.so").read_text() == f"built for {prefix}"
    assert sorted(p.name for p in Path(prefix).parent.iterdir()) == [Path(prefix).name]  # no temporary left


def test_a_run_that_loses_the_race_uses_the_winners_build(cache, monkeypatch):
    real_rename = os.rename

    def rename_after_another(src, dst):
        # another process publishes the same key first, while this one builds
        winner = Path(str(dst) + ".w")
        (winner / "lib64").mkdir(parents=True)
        (winner / "lib64" / "libascendcl.so").write_text("the winner's")
        real_rename(winner, dst)
        return real_rename(src, dst)
    monkeypatch.setattr(simulator.os, "rename", rename_after_another)
    prefix, why = bench_npu.simulator_prefix(io.StringIO(), "bench")
    assert why == "" and (Path(prefix) / "lib64" / "libascendcl.so").read_text() == "the winner's"
    assert [p.name for p in Path(prefix).parent.iterdir()] == [Path(prefix).name]


def _copy_sources(tmp_path: Path) -> Path:
    copy = tmp_path / "native"
    shutil.copytree(ROOT / "native", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_changed_sources_or_release_change_the_key_and_rebuild(cache, tmp_path, monkeypatch):
    copy = _copy_sources(tmp_path)
    monkeypatch.setattr(simulator, "sources", lambda: copy)
    cc = simulator.compiler()
    key = simulator.build_key(cc, "9.2.0")
    assert simulator.build_key(cc, "9.2.0") == key
    assert simulator.build_key(cc, "8.1.RC1") != key
    assert simulator.build_key([*cc, "-O0"], "9.2.0") != key
    first, _ = bench_npu.simulator_prefix(io.StringIO(), "bench")
    (copy / "README.md").write_text("prose only")  # not compiled: the same build
    assert bench_npu.simulator_prefix(io.StringIO(), "bench")[0] == first and len(cache) == 1
    kernel = copy / "src" / "ops" / "add.c"
    kernel.write_text(kernel.read_text() + "\n/* changed */\n")
    assert simulator.build_key(cc, "9.2.0") != key
    err = io.StringIO()
    second, _ = bench_npu.simulator_prefix(err, "bench")
    assert second != first and len(cache) == 2 and "building" in err.getvalue()


def test_bench_npu_only_without_cann_passes_the_line_to_its_stderr(cache, monkeypatch):
    """Through the command: --npu-only finds no CANN, builds (once), and points the backend at it."""
    from ascend_aclnn import backends
    from ascend_aclnn.cann import loader
    state = {"built": False}
    monkeypatch.setattr(backends, "npu_available", lambda: state["built"])
    monkeypatch.setattr(loader, "forget_load_failure", lambda: state.update(built=True))
    monkeypatch.setenv("ASCEND_HOME_PATH", "")
    monkeypatch.setenv("ASCEND_ACLNN_BENCH_SIM", "")
    err = io.StringIO()
    args = cli.parser().parse_args(["bench", "--npu-only"])
    bench.prepare(args, "bench", err)
    assert "bench: no CANN" in err.getvalue() and "building the CANN simulator" in err.getvalue()
    assert os.environ["ASCEND_HOME_PATH"] == str(cache[0].parent / simulator.build_key(
        simulator.compiler(), simulator.NEWEST))


def test_two_real_runs_build_once(tmp_path):
    """The whole path, compiled for real, in fresh processes with no CANN: the first run
    builds and says so, the second reuses it (the same library file) and says which."""
    try:
        simulator.compiler()
    except simulator.Unavailable as exc:
        pytest.skip(str(exc))
    env = {k: v for k, v in os.environ.items()
           if k not in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_ACLNN_BENCH_SIM", simulator.VERSION_ENV)}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    # --device on one operator: the shortest run that needs the npu backend
    command = [sys.executable, "-m", "ascend_aclnn", "bench", "--device", "--no-npu", "--no-torch", "--sizes",
               "small", "--repeat", "1", "--ops", "replication_pad2d", "--dtypes", "float32", "--no-progress"]
    runs = []
    for _ in range(2):
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        (prefix,) = (tmp_path / "ascend-aclnn").iterdir()
        lib = prefix / "lib64" / "libascendcl.so"
        runs.append((proc, lib.stat().st_ino, lib.stat().st_mtime_ns))
        assert "device time per call" in proc.stdout, proc.stdout
    assert "building the CANN simulator" in runs[0][0].stderr
    assert "building" not in runs[1][0].stderr and str(prefix) in runs[1][0].stderr
    assert runs[0][1:] == runs[1][1:]
    # the one file that records the install's path names where it is, not where it was built
    info = (prefix / f"{platform.machine()}-linux" / "ascend_toolkit_install.info").read_text()
    assert f"path={prefix / (platform.machine() + '-linux')}\n" in info
