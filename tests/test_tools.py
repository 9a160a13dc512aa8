"""The users' tools: the precision standard (compare / assert_close), gradcheck, the
command line (info, compare, gradcheck), deterministic mode, and the examples."""
from __future__ import annotations

import ctypes
import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.tensors import dtype_name
from ascend_aclnn import determinism, testing
from ascend_aclnn.tools import cli
import build as sim_build  # native/build.py (conftest puts native/ on the path)
from conftest import LAYOUT, ROOT, run_python

# ---------------------------------------------------------------------------------------------
# compare: the standard on hand-made cases, per dtype
# ---------------------------------------------------------------------------------------------

# (dtype, rtol, atol, cap): the table in ascend_aclnn/testing.py, written out again here.
STANDARD = [("float16", 2**-9, 2**-9, 0.1), ("bfloat16", 2**-6, 2**-6, 1.0),
            ("float32", 2**-10, 2**-16, 0.01), ("float64", 2**-20, 2**-30, 1e-5)]


@pytest.mark.parametrize("dtype, rtol, atol, cap", STANDARD)
def test_standard_element_rule_ratio_and_cap(dtype, rtol, atol, cap):
    g = np.linspace(-2.0, 2.0, 1000)  # float64 golden; errors placed exactly, in float64
    tol = atol + rtol * np.abs(g)
    at_limit = g + tol * (1 - 1e-9)
    assert testing.compare(at_limit, g, dtype).pass_ratio == 1.0
    # 10 of 1000 elements (1 %) just beyond their tolerance but under the cap: still a pass.
    a = g.copy()
    a[:10] += tol[:10] * 1.5
    r = testing.compare(a, g, dtype)
    assert r.passed and r.pass_count == 990 and r.worst_index is not None and r.worst_index[0] < 10
    # 11 of 1000: below 99 %, a failure.
    a[10] += tol[10] * 1.5
    r = testing.compare(a, g, dtype)
    assert not r.passed and r.pass_count == 989 and "needs 99%" in r.reason
    # One element beyond the cap fails the case although 99.9 % pass.
    a = g.copy()
    a[500] += cap * 1.5  # g[500] is about 0.002: the absolute cap applies, not 32 ULP
    r = testing.compare(a, g, dtype)
    assert not r.passed and "beyond the cap" in r.reason and r.worst_index == (500,)


def test_cap_allows_32_ulp_of_large_values():
    g = np.array([60000.0] * 200)  # float16 ULP at 60000 is 32, so the cap there is 1024
    a = g.copy()
    a[0] += 900.0
    r = testing.compare(a, g, np.float16)
    assert r.passed and r.pass_count == 199, r
    a[0] += 200.0
    assert "beyond the cap" in testing.compare(a, g, np.float16).reason


def test_nan_and_inf_must_sit_at_the_same_places():
    g = np.array([1.0, np.nan, np.inf, -np.inf, 2.0], np.float32)
    assert testing.compare(g.copy(), g).passed
    for i, value in ((0, np.nan), (2, -np.inf), (3, np.inf), (1, 0.0), (4, np.inf)):
        a = g.copy()
        a[i] = value
        r = testing.compare(a, g)
        assert not r.passed and "NaN/Inf at different places" in r.reason and f"({i},)" in r.reason


def test_integer_and_complex_dtypes():
    g = np.arange(10, dtype=np.uint8)
    assert testing.compare(g.copy(), g).passed
    a = g.copy()
    a[3] = 4
    r = testing.compare(a, g)
    assert not r.passed and r.worst_index == (3,) and "exact" in str(r)
    big = np.array([2**62 + 1], np.int64)
    assert not testing.compare(big, big - 1).passed  # compared exactly, not through float64
    c = (np.arange(6) + 1j * np.arange(6)).astype(np.complex64)
    assert testing.compare(c + 1e-6, c).passed
    assert not testing.compare(c * 1.01, c).passed
    with pytest.raises(TypeError, match="no precision standard"):
        testing.compare(np.array(["a"]), np.array(["a"]))


def test_report_reads_well_and_assert_close_carries_it():
    g = np.linspace(0, 1, 50, dtype=np.float32)
    a = g + 0.01
    r = testing.compare(a, g)
    text = str(r)
    assert text.startswith("FAIL float32[50]:") and "worst at" in text and "max abs err 0.01" in text
    with pytest.raises(AssertionError, match=r"FAIL float32\[50\]") as info:
        testing.assert_close(a, g)
    assert "only" in str(info.value)
    assert testing.assert_close(g, g).passed
    shape = testing.compare(np.ones((2, 3)), np.ones((3, 2)))
    assert not shape.passed and "shape" in shape.reason


def test_compare_accepts_device_arrays(backend):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    y = aa.upsample_nearest_exact1d(aa.to_device(x), [9])
    with aa.use_backend("numpy"):
        golden = aa.upsample_nearest_exact1d(x, [9])
    assert testing.assert_close(y, golden).max_abs_error == 0.0


# ---------------------------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------------------------

def test_gradcheck_upsample_pair(backend):
    x = np.random.default_rng(1).standard_normal((2, 3, 11)).astype(np.float32)
    for args in (([23],), ([5],), ([23], 2.1)):
        r = testing.gradcheck("upsample_nearest_exact1d", x, *args)
        assert r.passed and r.method == "adjoint" and r.max_error < 1e-6, r
    assert testing.gradcheck("upsample_nearest_exact1d_backward").passed  # by either name, example inputs
    assert str(testing.gradcheck("upsample_nearest_exact1d", x, [23])).startswith("PASS upsample_nearest_exact1d")


def test_gradcheck_catches_a_wrong_backward(backend):
    x = np.random.default_rng(2).standard_normal((2, 4, 7)).astype(np.float32)
    bwd = aa.upsample_nearest_exact1d_backward
    wrong = {
        "scaled": lambda g, o, i, s: bwd(g, o, i, s) * np.float32(1.001),
        "shifted": lambda g, o, i, s: np.roll(bwd(g, o, i, s), 1, axis=-1),
        "forgot the sum": lambda g, o, i, s: g[..., ::2][..., :i[2]].copy(),
    }
    for name, fn in wrong.items():
        r = testing.gradcheck("upsample_nearest_exact1d", x, [14], backward=fn)
        assert not r.passed and r.max_error > 1e-5, (name, r)
        assert str(r).startswith("FAIL"), name


def test_gradcheck_finds_the_kernel_tie_rule():
    """The A2/A3 backward's float32 intervals send the gradient of an exact tie to the
    neighbouring input while the forward reads the other one: the pair is not an exact
    adjoint there (L_in=26, L_out=7), and gradcheck says so. This is the kernel's
    behaviour, which the reference and the simulator follow."""
    x = np.random.default_rng(3).standard_normal((1, 1, 26)).astype(np.float32)
    with aa.use_backend("numpy"):
        assert not testing.gradcheck("upsample_nearest_exact1d", x, [7]).passed


def test_gradcheck_recipes_cover_every_pair_and_refuse_unknown_names():
    """GRAD_PAIRS is every description's backward, each naming a described operator; an
    operator with none (forward only, or a backward) is in no pair as a forward."""
    with_backward = [s for s in aa.ops.REGISTRY if s.backward is not None]
    assert sorted(testing.GRAD_PAIRS) == sorted(s.name for s in with_backward)
    for s in with_backward:
        pair = testing.GRAD_PAIRS[s.name]
        assert (pair.backward, pair.method, pair.inputs) == (s.backward.name, s.backward.method, s.backward.inputs)
        assert pair.backward in aa.ops.REGISTRY
    assert len(testing.available_pairs()) == len(with_backward)
    assert testing.GRAD_PAIRS["group_norm_swish"].inputs == ("x", "gamma", "beta")
    with pytest.raises(ValueError, match="expected a forward or backward function of a pair"):
        testing.gradcheck("upsample_nearest_exact2d")
    for seed in (-1, 1.5, True):  # said in the seed's own words, not NumPy's
        with pytest.raises(ValueError, match=r"seed: expected an integer >= 0, got"):
            testing.gradcheck("upsample_nearest_exact1d", seed=seed)


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------

def run_cli(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def run_module(sim, *argv: str, **env: str | None):
    code = f"import sys; from ascend_aclnn.tools.cli import main; sys.exit(main({list(argv)!r}))"
    return run_python(code, sim, **env)


def test_compare_on_the_simulator_passes(sim):
    from ascend_aclnn.ops import REGISTRY
    code, out, err = run_cli("compare", "--seed", "3")
    *lines, verdict = out.splitlines()
    assert code == 0, out + err
    runs = [(spec.name, dtype_name(dt)) for spec in REGISTRY for dt in spec.params[0].dtypes]
    assert len(lines) == len(runs) and all("  PASS  " in line for line in lines), out  # one per function, dtype
    for name, dt in runs:
        assert any(line.split()[:2] == [name, dt] for line in lines), (name, dt)
    assert "[" in err and f"{len(runs)}/{len(runs)} {runs[-1][0]} {runs[-1][1]}" in err
    assert verdict.startswith(f"compare: {len(runs)} case(s), 0 failed") and "failed" not in err


def test_compare_selection_errors_and_failures(sim):
    code, out, _ = run_cli("compare", "--ops", "upsample_nearest_exact1d", "--dtypes", "float16,bfloat16",
                           "--no-progress")
    assert code == 0 and len(out.splitlines()) == 2 + 1  # and the verdict
    code, _, err = run_cli("compare", "--ops", "upsample_nearest_exact3d")
    assert code == 2 and "unknown function" in err and "upsample_nearest_exact1d_backward" in err
    assert err.count("\n") == 1
    # An operator failing on the device is a failed case: exit status 1, the error on its line.
    result = run_module(sim, "compare", "--ops", "upsample_nearest_exact1d", "--dtypes", "float32",
                        ASCEND_SIM_FAULT="aclnnUpsampleNearestExact1d:1:507015")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ERROR AclRtAicoreExceptionError" in result.stdout and "1 failed" in result.stdout.splitlines()[-1]


def test_compare_without_cann_cannot_run(tmp_path):
    """Issue 31 item 9: without --backend, compare blamed --backend, which the user never
    passed, and did not say how to run without an NPU. The refusal names where npu came
    from (compare's default, or ASCEND_ACLNN_BACKEND) and suggests --backend numpy."""
    env = {"ASCEND_HOME_PATH": str(tmp_path), "LD_LIBRARY_PATH": ""}
    head = "python -m ascend_aclnn compare: error: "
    for argv, extra, blamed in ((["compare"], {}, "the npu backend (compare's default"),
                                (["compare"], {"ASCEND_ACLNN_BACKEND": "npu"}, "ASCEND_ACLNN_BACKEND=npu: "),
                                (["compare"], {"ASCEND_ACLNN_BACKEND": "auto"}, "the npu backend (compare's default"),
                                (["compare", "--backend", "npu"], {"ASCEND_ACLNN_BACKEND": "numpy"}, "--backend: ")):
        result = run_module(None, *argv, **env, **extra)
        err = result.stderr
        assert result.returncode == 2 and result.stdout == "" and err.count("\n") == 1, (argv, extra, err)
        assert err.startswith(head + blamed) and "cannot run here" in err, (argv, extra, err)
        assert ("--backend" in err.split("cannot run here")[0]) == ("--backend" in argv), (argv, extra, err)
        assert "--backend numpy" in err and "python -m ascend_aclnn info" in err, err  # what to do, where to look
    # ASCEND_ACLNN_BACKEND=numpy is followed as the library follows it: the numpy backend is checked
    result = run_module(None, "compare", "--ops", "im2col", "--no-progress", ASCEND_ACLNN_BACKEND="numpy", **env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("compare: 3 case(s), 0 failed"), result.stdout
    assert "(numpy vs numpy reference" in result.stdout


def test_gradcheck_command(backend):
    code, out, err = run_cli("gradcheck", "--seed", "5")
    assert code == 0, out + err
    assert "upsample_nearest_exact1d  adjoint" in out and "PASS" in out
    pending = [line for line in out.splitlines() if "SKIP" in line]
    assert all("not in this build" in line for line in pending)
    ran = len(testing.available_pairs())
    assert out.splitlines()[-1] == f"gradcheck: {ran} pair(s) on the {backend} backend, 0 failed (seed 5)" and err == ""
    assert run_cli("gradcheck", "--ops", "nope")[0] == 2


def test_help_for_every_command():
    for argv in (["--help"], ["info", "--help"], ["compare", "--help"], ["gradcheck", "--help"],
                 ["bench", "--help"]):
        code, out, err = run_cli(*argv)
        assert code == 0 and out.startswith("usage: python -m ascend_aclnn") and err == "", argv
    result = subprocess.run([sys.executable, "-m", "ascend_aclnn", "compare", "--help"], capture_output=True,
                            text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0 and "--dtypes" in result.stdout and ">= 99% of" in result.stdout
    assert "%%" not in result.stdout  # argparse's escape must not show through


def test_info_on_the_simulator(sim):
    result = run_module(sim, "info")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "backend         npu (auto: CANN loaded and reports 1 device(s))" in out
    assert f"libascendcl.so  {sim.lib_dir / 'libascendcl.so'}" in out
    release = sim_build.default_version()  # what the simulator was built as, and writes where CANN does
    acl = ".".join(map(str, sim_build.PROFILES[release].acl))
    assert f"ACL version     {acl}" in out and "SoC             Ascend910B3" in out and "WARNING" not in out
    assert f"CANN version    {release}" in out
    assert "devices         1" in out
    for name in ("upsample_nearest_exact1d ", "upsample_nearest_exact1d_backward "):
        line = next(line for line in out.splitlines() if line.strip().startswith(name))
        assert line.rstrip().endswith("libopapi.so" if (sim.lib_dir / "libopapi.so").exists() else "libopapi_cv.so")
    facts = json.loads(run_module(sim, "info", "--json").stdout)
    assert facts["soc_name"] == "Ascend910B3" and facts["acl_version"] == acl and facts["ok"]
    assert facts["cann_version"] == release and facts["cann_version_files"]
    assert facts["requested_by"] == "default (auto)" and facts["exit_status"] == 0
    assert {f["function"] for f in facts["functions"]} == {s.name for s in aa.ops.REGISTRY}
    assert all(f["library"] and not f["error"] for f in facts["functions"])


def test_info_warns_about_a_soc_that_is_not_a2_a3(sim):
    out = run_module(sim, "info", ASCEND_SIM_SOC_NAME="Ascend310P3").stdout
    assert "WARNING         Ascend310P3 is not an Atlas A2/A3 SoC" in out
    facts = json.loads(run_module(sim, "info", "--json", ASCEND_SIM_SOC_NAME="").stdout)
    assert facts["soc_name"] is None and "NULL" in facts["soc_warning"]


def test_info_without_cann(tmp_path):
    result = run_module(None, "info", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="")
    assert result.returncode == 0, result.stderr  # auto falls back to numpy: usable
    assert "backend         numpy (auto: CANN did not load, see CANN below)" in result.stdout
    assert f"no     {tmp_path / 'lib64'}: no such directory" in result.stdout
    # the load error is said once, with its advice once
    assert result.stdout.count("could not load libascendcl.so") == 1, result.stdout
    assert result.stdout.count("source CANN's environment script") == 1, result.stdout
    result = run_module(None, "info", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="", ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 1 and "backend         NONE (npu requested by environment variable" in result.stdout


def test_info_says_who_asked_for_the_backend(sim):
    facts = json.loads(run_module(sim, "info", "--json").stdout)
    assert (facts["requested_backend"], facts["requested_by"]) == ("auto", "default (auto)")
    facts = json.loads(run_module(sim, "info", "--json", ASCEND_ACLNN_BACKEND="numpy").stdout)
    assert facts["requested_by"] == "environment variable ASCEND_ACLNN_BACKEND" and facts["backend"] == "numpy"


def test_info_refuses_a_bad_backend_setting(sim):
    """A value that is not auto, npu or numpy is a bad setting, refused like a bad option
    and like every other command refuses it (docs/tools.md: one line, before any work, exit 2):
    no report, one line on stderr naming the variable and the value. ``collect()``, the
    library's view, still reports it as a backend that cannot run."""
    for argv in (["info"], ["info", "--json"]):
        result = run_module(sim, *argv, ASCEND_ACLNN_BACKEND="bogus")
        assert (result.returncode, result.stdout) == (2, ""), result.stdout + result.stderr
        assert result.stderr == ("python -m ascend_aclnn info: error: ASCEND_ACLNN_BACKEND: expected one of auto, "
                                 "npu, numpy, got 'bogus'\n")
    code = ("import json, os; os.environ['ASCEND_ACLNN_BACKEND'] = 'bogus'; from ascend_aclnn.tools import info; "
            "f = info.collect(); print(json.dumps([f['exit_status'], f['ok']]))")
    result = run_python(code, sim)
    assert json.loads(result.stdout) == [2, False], result.stdout + result.stderr


def _fake_install(root, sim, arch_dir: bool = False):
    """A CANN root whose libraries are the simulator's: lib64/ (or <arch>-linux/lib64/)."""
    import platform
    lib = root / (f"{platform.machine()}-linux/lib64" if arch_dir else "lib64")
    lib.mkdir(parents=True)
    for so in sim.lib_dir.glob("*.so"):
        (lib / so.name).symlink_to(so)
    return root


def test_cann_version_is_read_from_the_install(tmp_path):
    from ascend_aclnn.tools import info
    import platform
    arch = platform.machine()
    assert info.cann_version(tmp_path)["version"] is None
    (tmp_path / "opp").mkdir()
    (tmp_path / "opp" / "version.info").write_text("Version=7.7.0.1.238\nversion_dir=8.1.RC1\n")
    got = info.cann_version(tmp_path)
    assert got["version"] == "8.1.RC1" and got["files"] == {"opp/version.info": "8.1.RC1"} and not got["warning"]
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "version.info").write_text("Version=7.7.0.1.238\nversion_dir=8.1.RC1\ntimestamp=1\n")
    (tmp_path / f"{arch}-linux").mkdir()
    (tmp_path / f"{arch}-linux" / "ascend_toolkit_install.info").write_text(
        "package_name=Ascend-cann-toolkit\nversion=8.2.RC1\ninnerversion=V100R001C21\narch=x86_64\n")
    got = info.cann_version(tmp_path)
    assert got["version"] == "8.2.RC1"  # the toolkit's own record first
    assert got["files"][f"{arch}-linux/ascend_toolkit_install.info"] == "8.2.RC1"
    assert "different versions" in got["warning"] and "runtime/version.info says 8.1.RC1" in got["warning"]
    assert info.cann_root(tmp_path / "lib64") == tmp_path
    assert info.cann_root(tmp_path / f"{arch}-linux" / "lib64") == tmp_path


def test_info_shows_the_cann_version(sim, tmp_path):
    root = _fake_install(tmp_path / "cann", sim, arch_dir=True)
    (root / "runtime").mkdir()
    (root / "runtime" / "version.info").write_text("Version=7.7.0.1.238\nversion_dir=8.1.RC1\n")
    result = run_module(None, "info", ASCEND_HOME_PATH=str(root), LD_LIBRARY_PATH="")
    assert result.returncode == 0, result.stdout + result.stderr
    acl = ".".join(map(str, sim_build.PROFILES[sim_build.default_version()].acl))  # the linked libraries' own
    assert "CANN version    8.1.RC1\n" in result.stdout and f"ACL version     {acl}" in result.stdout
    facts = json.loads(run_module(None, "info", "--json", ASCEND_HOME_PATH=str(root), LD_LIBRARY_PATH="").stdout)
    assert facts["cann_version"] == "8.1.RC1" and facts["cann_version_root"] == str(root)


def test_info_names_a_missing_operator(sim, tmp_path):
    """An install whose operator library lacks a function: info says MISSING for it."""
    (tmp_path / "lib64").mkdir()
    for lib in ("libascendcl.so", "libnnopbase.so"):
        (tmp_path / "lib64" / lib).symlink_to(sim.lib_dir / lib)
    result = run_module(None, "info", "--json", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="")
    facts = json.loads(result.stdout)
    assert facts["backend"] == "npu"
    assert all(f["library"] is None and "not found in any operator library" in f["error"] and f["runs_on"] is None
               for f in facts["functions"])
    text = run_module(None, "info", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="").stdout
    rows = _function_rows(text)
    assert rows and all(where.startswith("MISSING: ") for where in rows.values()), text  # npu: cannot run
    # Asked for numpy, the same install runs each function on its numpy reference; the row
    # still says what the npu backend would lack.
    text = run_module(None, "info", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="",
                      ASCEND_ACLNN_BACKEND="numpy").stdout
    rows = _function_rows(text)
    assert rows and all(where.startswith("numpy reference (npu: MISSING: ") for where in rows.values()), text


# ---------------------------------------------------------------------------------------------
# deterministic mode
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def restore_determinism():
    yield
    determinism.reset()


def test_set_deterministic_reaches_the_device_context(npu, restore_determinism):
    from ascend_aclnn.backends.npu import runtime
    x = np.ones((1, 2, 3), np.float32)
    aa.upsample_nearest_exact1d(x, [5])
    device = runtime.current_device()
    aa.set_deterministic(True)
    assert aa.get_deterministic() and determinism.context_setting(device) == 1
    aa.set_deterministic(False)
    assert not aa.get_deterministic() and determinism.context_setting(device) == 0
    with aa.deterministic():
        assert determinism.context_setting(device) == 1
        aa.upsample_nearest_exact1d(x, [5])
    assert determinism.context_setting(device) == 0 and not aa.get_deterministic()
    with pytest.raises(TypeError, match="expected a bool"):
        aa.set_deterministic(1)


def test_deterministic_on_numpy_calls_nothing(numpy_backend, restore_determinism):
    aa.set_deterministic(True)
    assert aa.get_deterministic()
    with aa.deterministic(False):
        assert not aa.get_deterministic()
    assert aa.get_deterministic()


def test_deterministic_applies_to_devices_activated_later(sim):
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        from ascend_aclnn import determinism; from ascend_aclnn.backends.npu import runtime
        aa.set_deterministic(True)          # before CANN is even loaded
        aa.upsample_nearest_exact1d(np.ones((1, 1, 3), np.float32), [5])
        rt = runtime.get_runtime()
        print("dev0", determinism.context_setting(rt.device(0)))
        aa.set_device(1)                    # activated after the setting
        print("dev1", determinism.context_setting(rt.device(1)))
        aa.set_deterministic(False)         # reaches both, from device 1's thread state
        print("both", determinism.context_setting(rt.device(0)), determinism.context_setting(rt.device(1)))
        print("current", aa.get_device())
        aa.upsample_nearest_exact1d(aa.to_device(np.ones((1, 1, 3), np.float32)), [5]).numpy()
    """)
    result = run_python(code, sim, ASCEND_SIM_DEVICE_COUNT="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["dev0", "1", "dev1", "1", "both", "0", "0", "current", "1"]


def test_cann_default_is_left_alone_unless_asked(sim):
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        from ascend_aclnn import determinism; from ascend_aclnn.backends.npu import runtime
        aa.upsample_nearest_exact1d(np.ones((1, 1, 3), np.float32), [5])
        print(determinism.context_setting(runtime.current_device()))
    """)
    result = run_python(code, sim)
    assert result.returncode == 0 and result.stdout.split() == ["None"], result.stderr


# ---------------------------------------------------------------------------------------------
# examples and the API surface
# ---------------------------------------------------------------------------------------------

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, sim):
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, ASCEND_HOME_PATH=str(sim.prefix),
                                     PYTHONPATH=str(ROOT)), cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backend" in result.stdout and "FAIL" not in result.stdout


def test_demo_asked_for_the_npu_without_cann_says_so_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py"), "--backend", "npu"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT,
                            env=dict(os.environ, ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="",
                                     PYTHONPATH=str(ROOT)))
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "libascendcl.so" in result.stderr, result.stderr


def test_public_api_is_listed_and_typed():
    import inspect
    public = {n for n, v in vars(aa).items() if not n.startswith("_") and not inspect.ismodule(v)
              and n not in ("annotations",)}
    assert public <= set(aa.__all__) | {"ArrayLike"}, public - set(aa.__all__)
    for name in aa.__all__ + [f"testing.{n}" for n in testing.__all__]:
        obj = getattr(testing, name.split(".")[1]) if name.startswith("testing.") else getattr(aa, name)
        if inspect.isfunction(obj):
            sig = inspect.signature(obj)
            assert sig.return_annotation is not inspect.Signature.empty, name
            for p in sig.parameters.values():
                assert p.annotation is not inspect.Parameter.empty, (name, p.name)
    assert (ROOT / "ascend_aclnn" / "py.typed").is_file()


# --- helpers for the per-pair gradchecks --------------------------------------------------------

def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# --- gradcheck of each pair, on both backends --------------------------------------------------

@pytest.mark.parametrize("shape, padding", [((2, 3, 5, 4), [1, 2, 3, 0]), ((2, 3, 5, 4), [0, 0, 0, 0]),
                                            ((3, 5, 4), [4, 1, 0, 6]), ((1, 1, 1, 1), [3, 3, 3, 3])])
def test_gradcheck_replication_pad2d(backend, shape, padding):
    x = rand(np.random.default_rng(0), *shape)
    r = testing.gradcheck("replication_pad2d", x, padding)
    assert r.passed, r


@pytest.mark.parametrize("shape, k, d, p, s", [
    ((2, 3, 7, 6), [3, 2], [1, 2], [1, 0], [2, 1]),     # batched, non-square, dilation, stride
    ((3, 7, 6), [2, 2], [1, 1], [1, 1], [2, 2]),        # unbatched
    ((1, 2, 5, 5), [1, 1], [1, 1], [0, 0], [1, 1]),     # 1x1 kernel
    ((1, 2, 9, 8), [3, 3], [2, 2], [2, 2], [3, 4]),     # stride > kernel
])
def test_gradcheck_im2col(backend, shape, k, d, p, s):
    x = rand(np.random.default_rng(1), *shape)
    r = testing.gradcheck("im2col", x, k, d, p, s)
    assert r.passed, r


@pytest.mark.parametrize("shape, k, s, p, ceil", [
    ((2, 3, 7, 6), [3, 3], [2, 2], [1, 1], False),      # overlapping windows
    ((2, 3, 8, 8), [2, 2], [2, 2], [0, 0], False),      # disjoint windows
    ((1, 2, 7, 7), [3, 2], [2, 1], [1, 1], True),       # ceil_mode, non-square
    ((3, 6, 5), [2, 2], [], [0, 0], False),             # 3-D input, stride = kernel
])
def test_gradcheck_max_pool2d_with_mask(backend, shape, k, s, p, ceil):
    x = rand(np.random.default_rng(2), *shape)          # random data: no ties
    r = testing.gradcheck("max_pool2d_with_mask", x, k, s, p, [1, 1], ceil)
    assert r.passed, r


@pytest.mark.parametrize("shape, groups, scale", [((2, 6, 5), 3, 1.0), ((3, 4, 3, 2), 2, 1.0),
                                                  ((2, 32, 8, 8), 8, 1.7), ((1, 3, 4), 1, 0.5)])
def test_gradcheck_group_norm_swish_all_three_gradients(backend, shape, groups, scale):
    rng = np.random.default_rng(3)
    x, gamma, beta = rand(rng, *shape), rand(rng, shape[1]), rand(rng, shape[1])
    r = testing.gradcheck("group_norm_swish", x, gamma, beta, groups, swish_scale=scale)
    assert r.passed and [c[0] for c in r.checks] == ["dx", "dgamma", "dbeta"], r


def test_gradcheck_refuses_group_norm_without_swish():
    x = np.ones((2, 4, 3), np.float32)
    with pytest.raises(ValueError, match="activate_swish=False"):
        testing.gradcheck("group_norm_swish", x, np.ones(4, np.float32), np.ones(4, np.float32), 2,
                          activate_swish=False)


def test_gradcheck_catches_wrong_backwards_of_every_pair(backend):
    rng = np.random.default_rng(4)
    x4 = rand(rng, 2, 3, 7, 6)
    pad_bwd, col_bwd, pool_bwd, gn_bwd = (aa.replication_pad2d_backward, aa.im2col_backward,
                                          aa.max_pool2d_with_mask_backward, aa.group_norm_swish_grad)
    cases = [
        ("replication_pad2d", (x4, [1, 2, 3, 0]), lambda *a: pad_bwd(*a) * np.float32(1.001)),
        ("im2col", (x4, [3, 2], [1, 1], [1, 0], [2, 1]), lambda *a: np.roll(col_bwd(*a), 1, axis=-1)),
        # the backward handed the mask of another input: gradient lands on the wrong positions
        ("max_pool2d_with_mask", (x4, [3, 3], [2, 2], [1, 1], [1, 1], False),
         lambda g, x, m, *r: pool_bwd(g, x, aa.max_pool2d_with_mask(-x, *r)[1], *r)),
        ("group_norm_swish", (x4, rand(rng, 3), rand(rng, 3), 3),
         lambda *a, **k: tuple(t * np.float32(f) for t, f in zip(gn_bwd(*a, **k), (1.0, 1.05, 1.0)))),
    ]
    for name, args, wrong in cases:
        assert testing.gradcheck(name, *args).passed, name
        r = testing.gradcheck(name, *args, backward=wrong)
        assert not r.passed, (name, r)


def test_gradcheck_command_runs_every_pair(backend):
    code, out, err = run_cli("gradcheck")
    assert code == 0, out + err
    lines = out.splitlines()[:-1]  # the last is the verdict
    assert len(lines) == len(testing.GRAD_PAIRS) and all("  PASS  " in line for line in lines), out
    assert [line.split()[0] for line in lines] == [p.forward for p in testing.available_pairs()]
    assert "dx: rel err" in out and "dgamma: rel err" in out and "dbeta: rel err" in out


# --- compare and info over every function --------------------------------------------------------

def test_compare_covers_every_function(sim):
    code, out, err = run_cli("compare", "--no-progress")
    assert code == 0, out + err
    expected = sum(len(spec.params[0].dtypes) for spec in aa.ops.REGISTRY)
    lines = out.splitlines()[:-1]  # the last is the verdict
    assert len(lines) == expected and all("  PASS  " in line for line in lines), out
    assert {line.split()[0] for line in lines} == {spec.name for spec in aa.ops.REGISTRY}
    # several outputs: each is compared and named
    assert any(line.startswith("max_pool2d_with_mask ") and "mask: " in line for line in lines)
    assert any(line.startswith("group_norm_swish ") and "rstd: " in line for line in lines)


def test_info_names_the_library_of_every_function(sim):
    facts = json.loads(run_module(sim, "info", "--json").stdout)
    where = {f["function"]: f["library"].rsplit("/", 1)[-1] for f in facts["functions"]}
    assert list(where) == sorted(spec.name for spec in aa.ops.REGISTRY) and all(where.values()), facts["functions"]
    assert all(f["runs_on"] == "npu" for f in facts["functions"])
    if LAYOUT == "split":
        assert where["replication_pad2d"] == where["replication_pad2d_backward"] == "libopapi_math.so"
        assert where["im2col"] == "libopapi_math.so" and where["im2col_backward"] == "libopapi_cv.so"
        for name in ("max_pool2d_with_mask", "max_pool2d_with_mask_backward", "group_norm_swish",
                     "group_norm_swish_grad"):
            assert where[name] == "libopapi_nn.so", name
        assert where["upsample_nearest_exact1d"] == "libopapi_cv.so"
    else:
        assert set(where.values()) == {"libopapi.so"}


# --- deterministic mode around the two ops that are non-deterministic on A2/A3 -----------------

def test_deterministic_repeats_of_the_atomic_backwards(npu, sim):
    """Under aa.deterministic() the two backwards that use atomics on A2/A3 repeat bit for
    bit, and (on the simulator, whose CPU kernels repeat anyway) each launch ran in the
    deterministic mode the simulator reports, and not outside the block."""
    from ascend_aclnn.tools.selftest.items.determinism import launch_mode as _launch_mode
    apis = ("aclnnMaxPool2dWithMaskBackward", "aclnnGroupNormSwishGrad")
    rng = np.random.default_rng(5)
    x = rand(rng, 4, 3, 9, 8)                                   # N = 4 > 2 for group_norm_swish_grad
    out, mask = aa.max_pool2d_with_mask(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
    g = rand(rng, *out.shape)
    gamma, beta = rand(rng, 3), rand(rng, 3)
    y, mean, rstd = aa.group_norm_swish(x, gamma, beta, 3)
    dy = rand(rng, *y.shape)
    def run():
        return (aa.max_pool2d_with_mask_backward(g, x, mask, [3, 3], [2, 2], [1, 1], [1, 1], False),
                *aa.group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, 3))

    with aa.deterministic():
        runs = [run() for _ in range(2)]
        modes = [_launch_mode(api) for api in apis]
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
    aa.set_deterministic(False)
    run()
    if not sim.real:  # None on real CANN: the mode is a simulator export
        assert modes == [1, 1], dict(zip(apis, modes))
        assert [_launch_mode(api) for api in apis] == [0, 0]


def test_driver_and_firmware_versions_from_their_version_files(tmp_path):
    from ascend_aclnn.tools import info
    (tmp_path / "driver").mkdir()
    (tmp_path / "driver" / "version.info").write_text("Version=24.1.rc2\nascendhal_version=7.35.23\n")
    (tmp_path / "firmware").mkdir()
    (tmp_path / "firmware" / "version.info").write_text("Version=7.5.0.1.129\n")
    where = tmp_path / "ascend_install.info"
    where.write_text(f"Driver_Install_Path_Param={tmp_path}\nFirmware_Install_Path_Param={tmp_path}\n")
    got = info.driver_versions(None, where)
    assert got == {"driver": "24.1.rc2", "driver_source": "version.info", "firmware": "7.5.0.1.129",
                   "files": {str(tmp_path / "driver" / "version.info"): "24.1.rc2",
                             str(tmp_path / "firmware" / "version.info"): "7.5.0.1.129"}}
    assert info.driver_versions(None, tmp_path / "nothing")["driver"] in (None, info.driver_versions()["driver"])

    class Cann:  # the runtime's answer wins over the file: it is what the process runs with
        def function(self, name):
            assert name == "aclsysGetCANNVersion"

            def fill(package, buf):
                assert package == 7  # ACL_PKG_NAME_DRIVER
                ctypes.memmove(buf, b"25.0.rc1\0", 9)
                return 0
            return fill
    got = info.driver_versions(Cann(), where)
    assert (got["driver"], got["driver_source"], got["firmware"]) == ("25.0.rc1", "aclsysGetCANNVersion", "7.5.0.1.129")


def test_info_has_a_driver_line_without_cann(tmp_path):
    result = run_module(None, "info", ASCEND_HOME_PATH=str(tmp_path), LD_LIBRARY_PATH="")
    assert any(line.startswith("driver          ") and "firmware" in line for line in result.stdout.splitlines())


# --- info on a machine without CANN, and the order of its lists --------------------------------------

def _function_rows(text: str) -> dict[str, str]:
    """info's functions table: function -> what its last column says."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("functions ("))
    rows = {}
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        function, aclnn, where = line.split(maxsplit=2)
        rows[function] = where
    return rows


def test_info_without_cann_shows_each_function_on_the_numpy_reference(tmp_path):
    """Issue 31 item 9: on a CPU box info listed the ten functions as MISSING although the
    auto backend runs them on the numpy reference. MISSING is for what cannot run: npu
    asked for where CANN does not load."""
    env = {"ASCEND_HOME_PATH": str(tmp_path), "LD_LIBRARY_PATH": ""}
    result = run_module(None, "info", **env)
    assert result.returncode == 0, result.stderr
    rows = _function_rows(result.stdout)
    assert set(rows) == {s.name for s in aa.ops.REGISTRY}, result.stdout
    assert set(rows.values()) == {"numpy reference"}, result.stdout
    assert "MISSING" not in result.stdout
    facts = json.loads(run_module(None, "info", "--json", **env).stdout)
    assert {(f["runs_on"], f["library"]) for f in facts["functions"]} == {("numpy", None)}, facts["functions"]
    # npu asked for and unavailable: nothing runs, and each function says so
    result = run_module(None, "info", ASCEND_ACLNN_BACKEND="npu", **env)
    assert result.returncode == 1
    assert set(_function_rows(result.stdout).values()) == {"MISSING: CANN not loaded"}, result.stdout
    facts = json.loads(run_module(None, "info", "--json", ASCEND_ACLNN_BACKEND="npu", **env).stdout)
    assert {f["runs_on"] for f in facts["functions"]} == {None}


@pytest.mark.parametrize("where", ["simulator", "no CANN"])
def test_info_lists_the_same_order_under_every_hash_seed(sim, tmp_path, where):
    """Every list info prints is in one order whatever the process: the functions (and the ABI
    check's rows) sorted by name, the search, library and header lists in search order. Two
    interpreters with different PYTHONHASHSEED print the same report, text and JSON."""
    env = {"LD_LIBRARY_PATH": ""} if where == "simulator" else {"ASCEND_HOME_PATH": str(tmp_path),
                                                                 "LD_LIBRARY_PATH": ""}
    sim_or_none = sim if where == "simulator" else None
    for argv in (["info", "--check-abi"], ["info", "--json", "--check-abi"]):
        runs = [run_module(sim_or_none, *argv, PYTHONHASHSEED=seed, **env) for seed in ("1", "4242")]
        assert runs[0].stdout == runs[1].stdout, (runs[0].stdout, runs[1].stdout)
        assert runs[0].stdout.strip(), runs[0].stderr
    text = runs[0].stdout
    facts = json.loads(text)
    names = [f["function"] for f in facts["functions"]]
    assert names == sorted(s.name for s in aa.ops.REGISTRY), names
    if where == "simulator":
        assert [r["function"] for r in facts["abi"]["operators"]] == names
    listed = list(_function_rows(run_module(sim_or_none, "info", **env).stdout))
    assert listed == names, listed
