"""``python -m ascend_aclnn selftest`` end to end on the simulator, built as each CANN
release it models, and its parts (the child runner, the judgements) on their own.

On the simulator every item runs; what it reports is the simulator's modelled behaviour,
so the statuses below say what the simulator models against what the binding assumes for
that release. Contradictions are made four ways: a SoC the binding does not support
(ASCEND_SIM_SOC_NAME), a CANN refusing to make executors repeatable (ASCEND_SIM_FAULT on
aclSetAclOpExecutorRepeatable), a CANN refusing a capture (ASCEND_SIM_FAULT on
aclmdlRICaptureBegin), and a 9.2.0 build whose version files say 8.1.RC1 (so the binding
assumes 8.1's behaviour and the libraries do 9.2's). Items 10 and 11 also run on the numpy
backend, and every judgement meets crafted records of the faults it looks for.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import build as sim_build  # native/build.py
import ascend_aclnn as aa
from ascend_aclnn.tools import cli, selftest
from ascend_aclnn.tools.selftest import report
from ascend_aclnn.tools.selftest.items import cann as cann_item, capture as capture_item, determinism as determinism_item
from ascend_aclnn.tools.selftest.items import mask as mask_item, swish_grad as swish_grad_item
from ascend_aclnn.tools.selftest.items import tiling_status as tiling_status_item, timing as timing_item
from conftest import ROOT, shared_build

C, X, O, E = selftest.CONFIRMED, selftest.CONTRADICTED, selftest.OBSERVED, selftest.ERROR
PROFILES = ("9.2.0", "8.1.RC1")
# Each item's status on the simulator built as each release: every assumption confirmed,
# the release-dependent ones (the GroupNormSwishGrad formula, late determinism, aclInit
# after aclFinalize) by each profile's own behaviour.
EXPECTED = {
    "9.2.0": {1: C, 2: C, 3: C, 4: C, 5: C, 6: C, 7: C, 8: C, 9: C, 10: C, 11: C, 12: C},
    "8.1.RC1": {1: C, 2: C, 3: C, 4: C, 5: C, 6: C, 7: C, 8: C, 9: C, 10: C, 11: C, 12: C},
}
EXIT = {"9.2.0": 0, "8.1.RC1": 0}
NO_SUCH_ITEM = str(max(i.number for i in selftest.ITEMS) + 1)
SESSION_RELEASE = sim_build.default_version()  # the release of the session's own simulator build
DEFAULT_CANN_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")


def _env(prefix: Path, **updates: str | None) -> dict:
    env = dict(os.environ)
    for key in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH",
                "ASCEND_ACLNN_HEADERS", "ASCEND_ACLNN_BACKEND", "ASCEND_SIM_FAULT", "ASCEND_SIM_SOC_NAME",
                "ASCEND_SIM_DEVICE_COUNT"):
        env.pop(key, None)
    env["ASCEND_HOME_PATH"] = str(prefix)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    for key, value in updates.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run_selftest(prefix: Path, *args: str, **env: str | None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_aclnn", "selftest", *args], cwd=ROOT,
                          env=_env(prefix, **env), capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def builds(sim, tmp_path_factory) -> dict[str, Path]:
    """The simulator built as each release (the session's own build for its release)."""
    prefixes = {}
    for release in PROFILES:
        if release == SESSION_RELEASE and sim.prefix is not None and sim.lib_dir is not None:
            prefixes[release] = sim.prefix
        else:
            prefixes[release] = shared_build(cann_version=release).parent
    return prefixes


@pytest.fixture(scope="module")
def reports(builds, tmp_path_factory) -> dict[str, tuple]:
    """(exit status, stdout, stderr, JSON report) of a full run on each release."""
    out = {}
    for release, prefix in builds.items():
        path = tmp_path_factory.mktemp("reports") / f"{release}.json"
        result = run_selftest(prefix, "--json", str(path))
        report = json.loads(path.read_text()) if path.exists() else None
        out[release] = (result.returncode, result.stdout, result.stderr, report)
    return out


def item(report: dict, number: int) -> dict:
    return next(i for i in report["items"] if i["number"] == number)


def check(report: dict, number: int, name: str) -> dict:
    return next(c for c in item(report, number)["checks"] if c["name"] == name)


# ---- end to end on each profile ---------------------------------------------------------------

@pytest.mark.simulator
@pytest.mark.parametrize("release", PROFILES)
def test_every_item_runs_with_the_expected_status(reports, release):
    status, stdout, stderr, report = reports[release]
    assert report is not None, stderr
    assert status == EXIT[release] == report["exit_status"], stdout + stderr
    assert {i["number"]: i["status"] for i in report["items"]} == EXPECTED[release], stdout
    assert report["cann"]["cann_version"] == release and report["cann"]["simulator"] is True
    assert report["cann"]["acl_version"] == {"9.2.0": "1.17.0", "8.1.RC1": "1.13.0"}[release]
    assert report["cann"]["soc_name"] == "Ascend910B3" and report["cann"]["device_count"] == 1
    counts = report["counts"]
    assert counts[X] == list(EXPECTED[release].values()).count(X) and counts[E] == 0
    # the text: a header, every item with its status, assumed and observed, a summary
    assert f"CANN {release}, ACL " in stdout and "this CANN is the ascend_aclnn simulator, not hardware" in stdout
    for i in report["items"]:
        assert f"{i['number']}. {i['title']}: {i['status'].upper()}" in stdout
        for c in i["checks"]:
            assert c["observed"] and f"observed: {c['observed']}" in stdout
    assert f"{counts[C]} confirmed, {counts[X]} contradicted" in stdout
    n = len(report["items"])  # stderr holds the progress alone: one line per item as it starts
    assert [line.split("] ", 1)[1] for line in stderr.splitlines()] == \
        [f"{k}/{n} {i['number']}. {i['title']}" for k, i in enumerate(report["items"], 1)], stderr


@pytest.mark.simulator
@pytest.mark.parametrize("release", PROFILES)
def test_the_report_holds_versions_observations_hashes_and_timings(reports, builds, release):
    report = reports[release][3]
    assert report["schema"] == 1 and report["environment"]["ASCEND_HOME_PATH"] == str(builds[release])
    assert report["cann"]["cann_version_files"]["runtime/version.info"] == \
        {"9.2.0": "cann", "8.1.RC1": "8.1.RC1"}[release]
    assert report["duration_seconds"] > 0 and report["facts_probe"]["seconds"] > 0
    for i in report["items"]:
        assert i["seconds"] > 0 and i["probes"]
        for probe in i["probes"]:
            assert probe["returncode"] == 0 and probe["seconds"] > 0 and "result" in probe, probe
    mask = item(report, 1)["probes"][0]["result"]
    for k in ("k3", "k1"):
        assert len(mask[k]["npu_sha256"]) == 64 and mask[k]["npu_sha256"] == mask[k]["binding_sha256"]
    assert mask["k1"]["mask_bytes"] == 2 * 20 * 32 * 2  # (2, 20, 1, (ceil(16/16) + 1) * 32)
    det = {p["name"]: p["result"] for p in item(report, 5)["probes"]}
    for variant in ("default", "before", "after"):
        for op in ("group_norm_swish_grad", "max_pool2d_with_mask_backward"):
            run = det[f"determinism:{variant}"][op]
            assert run["distinct_hashes"] == 1 and len(run["hashes"][0]) == 64 and run["seconds"] > 0
    ups = item(report, 2)["probes"][0]["result"]
    assert ups["counts"]["npu"] == [3, 4, 3, 4, 3] and ups["random"]["bit_equal"]


@pytest.mark.simulator
@pytest.mark.parametrize("release", PROFILES)
def test_release_dependent_items_follow_the_profile(reports, release):
    report = reports[release][3]
    old = release == "8.1.RC1"
    # 4: each profile's simulator computes its release's formula, as the binding assumes
    formula = check(report, 4, "formula at swish_scale=2")
    assert formula["status"] == C
    assert formula["details"]["follows"] == (["legacy"] if old else ["corrected"])
    assert ("CANN 8.1's formula" in formula["assumed"]) is old
    if old:
        assert "sig * (1 + z*(1 - sig))" in formula["assumed"] and "CANN 8.1's formula" in formula["observed"]
    # 5: switched after the first use, the generated operator keeps its first mode under 8.1
    late = check(report, 5, "after: group_norm_swish_grad")
    assert late["status"] == C and late["details"]["launch_mode"] == (0 if old else 1)
    assert check(report, 5, "after: max_pool2d_with_mask_backward")["details"]["launch_mode"] == 1
    for op in ("group_norm_swish_grad", "max_pool2d_with_mask_backward"):
        assert check(report, 5, f"default: {op}")["details"]["launch_mode"] == 0
        assert check(report, 5, f"before: {op}")["details"]["launch_mode"] == 1
    warned = [c for c in item(report, 5)["checks"] if c["name"] == "after: the binding's warning"]
    assert bool(warned) is old
    if old:
        assert "reads the deterministic option once per operator" in warned[0]["observed"]
    # 9: aclInit after aclFinalize
    reinit = check(report, 9, "aclInit after aclFinalize")
    assert reinit["status"] == C
    if old:
        assert "aclInit again 100002" in reinit["observed"] and "aclrtSetDevice 100001" in reinit["observed"]
    else:
        assert "aclInit again 0, then aclrtSetDevice 0" in reinit["observed"]


@pytest.mark.simulator
def test_release_independent_observations(reports):
    report = reports["9.2.0"][3]
    plans = {c["name"]: c for c in item(report, 7)["checks"]}
    assert sorted(plans) == sorted(aa.ops.REGISTRY.names())  # one check per described operator
    for name, c in plans.items():
        if aa.ops.REGISTRY[name].not_repeatable:
            assert c["status"] == O and c["details"]["cann_accepts"] is False
            assert "CANN refuses when asked directly: ACLNN_ERR_INNER (561000)" in c["observed"]
        else:
            assert (c["status"], c["observed"]) == (C, "repeatable")
    tiling = check(report, 8, "status")
    assert tiling["details"] == {"npu_status": 561002, "binding_status": 561002}
    assert tiling["status"] == C
    assert "numGroups 4 must divide the channel count C = 6" in tiling["observed"]
    assert "561002" in tiling["assumed"]
    assert check(report, 1, "k=1 backward, binding's mask")["status"] == O
    assert check(report, 2, "summation, random float32")["observed"] == "bit-equal to the reference"
    for name in ("forward float32", "forward float64 (AICPU)", "backward float32"):
        assert check(report, 3, name)["status"] == C
    for name in ("DeviceArray", "NumPy (block reused through the cache)"):
        assert check(report, 6, name)["observed"] == "works, equal to the reference"


# The simulator's device clock (native/README.md, "The device clock"): a kernel lasts
# LAUNCH_NS plus the bytes it reads and writes at BYTES_PER_NS, and nothing else advances it.
SIM_LAUNCH_NS, SIM_BYTES_PER_NS = 3000, 1152


def _sim_kernel_ms(in_shape, out_shape, itemsize=4) -> float:
    moved = (int(np.prod(in_shape)) + int(np.prod(out_shape))) * itemsize
    return (SIM_LAUNCH_NS + -(-moved // SIM_BYTES_PER_NS)) / 1e6


@pytest.mark.simulator
@pytest.mark.parametrize("release", PROFILES)
def test_capture_and_replay_of_every_described_operator_and_its_plan(reports, release):
    report = reports[release][3]
    capture = item(report, 10)
    names = aa.ops.REGISTRY.names()
    assert [c["name"] for c in capture["checks"]] == [n for op in names for n in (op, f"{op} (plan)")]
    probe = capture["probes"][0]["result"]
    assert probe["backend"] == "npu" and probe["replays"] == capture_item.CAPTURE_REPLAYS >= 3
    for c in capture["checks"]:
        assert c["status"] == C, c
        # the simulator has no real nondeterminism: even the atomic-add kernels replay bit for bit
        assert "bit for bit" in c["observed"] and f"{capture_item.CAPTURE_REPLAYS} replays" in c["observed"], c
    for op in selftest.concerned("determinism"):  # judged within the precision standard
        assert "within the CANN precision standard" in check(report, 10, op)["assumed"]
    for op in set(names) - set(selftest.concerned("determinism")):
        assert "bit for bit" in check(report, 10, op)["assumed"]
    for part in list(probe["calls"].values()) + list(probe["plans"].values()):
        assert len(part["replays"]) == capture_item.CAPTURE_REPLAYS
        assert all(r["bit_equal"] and r["differing"] == 0 and r["elements"] > 0 for r in part["replays"])


@pytest.mark.simulator
@pytest.mark.parametrize("release", PROFILES)
def test_event_timing_on_the_simulators_clock(reports, release):
    """The simulator's clock is a cost model, so the item's times are the model's, exactly."""
    report = reports[release][3]
    timing = item(report, 11)
    probe = timing["probes"][0]["result"]
    small, large = probe["shapes"]["small"], probe["shapes"]["large"]
    doubled = lambda shape: shape[:-1] + [2 * shape[-1]]  # noqa: E731  the probe's upsample doubles L
    one, big = _sim_kernel_ms(small, doubled(small)), _sim_kernel_ms(large, doubled(large))
    series = probe["series"]
    assert series["one_call"] == pytest.approx([one] * probe["repeats"], rel=1e-6)
    assert series["n_calls"] == pytest.approx([probe["calls"] * one] * probe["repeats"], rel=1e-6)
    assert series["larger_input"] == pytest.approx([big] * probe["repeats"], rel=1e-6)
    assert probe["stream"].startswith("<ascend_aclnn.Stream default stream of npu:0")
    assert probe["benchmark"]["device_ms"] == pytest.approx([one] * len(probe["benchmark"]["device_ms"]), rel=1e-6)
    checks = {c["name"]: c for c in timing["checks"]}
    assert list(checks) == ["elapsed time > 0 and finite", f"{probe['calls']} calls vs 1", "64x the input vs 1x",
                            "no timing: the binding", "no timing: CANN", "benchmark percentiles"]
    assert all(c["status"] == C for c in checks.values()), checks
    assert checks["no timing: the binding"]["observed"].startswith("ValueError: Event.elapsed_time: both events")
    no_timing = probe["no_timing"]["cann"]
    assert no_timing["status"] == 107006 and "created without ACL_EVENT_TIME_LINE" in no_timing["recent"]
    assert "107006" in checks["no timing: CANN"]["observed"]


@pytest.mark.simulator
def test_progress_on_stderr_names_each_item_as_it_starts(sim, tmp_path):
    """Issue 41, item 9: with stdout redirected (``selftest > report.txt``) stderr says which
    item is running, one plain line per item as it starts (compare's and bench's bar, off a
    terminal), and --no-progress silences it, as theirs."""
    keys = ["tiling_status", "cann"]
    chosen = [i for i in selftest.ITEMS if i.key in keys]
    report = tmp_path / "report.txt"
    with report.open("w") as stdout:
        result = subprocess.run([sys.executable, "-m", "ascend_aclnn", "selftest", "--items", *keys], cwd=ROOT,
                                env=_env(sim.prefix), stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=600)
    assert result.returncode == 0, report.read_text() + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == len(chosen) and "\r" not in result.stderr, result.stderr
    for n, (line, it) in enumerate(zip(lines, chosen), 1):
        assert line.endswith(f" {n}/{len(chosen)} {it.number}. {it.title}"), line
    assert f"{chosen[-1].number}. {chosen[-1].title}: CONFIRMED" in report.read_text()
    quiet = run_selftest(sim.prefix, "--items", *keys, "--no-progress")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


# ---- contradictions make the command exit 1 ----------------------------------------------------

@pytest.mark.simulator
def test_an_unsupported_soc_is_a_contradiction(builds, tmp_path):
    path = tmp_path / "r.json"
    result = run_selftest(builds["9.2.0"], "--items", "9", "--json", str(path), ASCEND_SIM_SOC_NAME="Ascend310P3")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(path.read_text())
    soc = check(report, 9, "SoC")
    assert (soc["status"], soc["observed"]) == (X, "Ascend310P3")
    assert "contradicted SoC" in result.stdout and "observed: Ascend310P3" in result.stdout


@pytest.mark.simulator
def test_cann_refusing_a_repeatable_executor_is_a_contradiction(builds, tmp_path):
    """ASCEND_SIM_FAULT makes the first aclSetAclOpExecutorRepeatable of each process fail:
    in the plans child that is the first function's plan."""
    path = tmp_path / "r.json"
    result = run_selftest(builds["9.2.0"], "--items", "plans", "--json", str(path),
                          ASCEND_SIM_FAULT="aclSetAclOpExecutorRepeatable:1:561000")
    assert result.returncode == 1, result.stdout + result.stderr
    checks = item(json.loads(path.read_text()), 7)["checks"]
    refused = [c for c in checks if c["status"] == X]
    assert len(refused) == 1 and refused[0]["observed"].startswith("refused: ACLNN_ERR_INNER (561000)")
    assert "injected fault" in refused[0]["observed"]


@pytest.mark.simulator
def test_a_build_behaving_unlike_its_release_is_contradicted(builds, tmp_path):
    """The 9.2.0 libraries with version files saying 8.1.RC1: the binding assumes 8.1's
    behaviour (the option read once, no aclInit after aclFinalize, 8.1's formula) and the
    libraries do 9.2's, so those three items are contradicted and the rest are not."""
    prefix = tmp_path / "relabelled"
    shutil.copytree(builds["9.2.0"], prefix, symlinks=True)
    sim_build.install_version_info(prefix, "8.1.RC1")
    path = tmp_path / "r.json"
    result = run_selftest(prefix, "--items", "4", "5", "cann", "--json", str(path))
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(path.read_text())
    assert report["cann"]["cann_version"] == "8.1.RC1" and report["cann"]["acl_version"] == "1.17.0"
    assert [i["number"] for i in report["items"]] == [4, 5, 9]
    assert {i["number"]: i["status"] for i in report["items"]} == {4: X, 5: X, 9: X}
    late = check(report, 5, "after: group_norm_swish_grad")
    assert late["status"] == X and late["details"]["launch_mode"] == 1 and "reads the option once" in late["assumed"]
    assert check(report, 5, "after: max_pool2d_with_mask_backward")["status"] == C
    reinit = check(report, 9, "aclInit after aclFinalize")
    assert reinit["status"] == X and "aclInit again 0" in reinit["observed"]
    assert "contradicted aclInit after aclFinalize" in result.stdout


@pytest.mark.simulator
def test_a_capture_refused_by_cann_is_reported_as_unsupported_not_as_a_crash(builds, tmp_path):
    """ASCEND_SIM_FAULT makes the first aclmdlRICaptureBegin of the capture child answer
    107030, as a CANN or driver without capture would: that operator's check says capture is
    unsupported, with the status; the other captures, in the same child, still run."""
    path = tmp_path / "r.json"
    result = run_selftest(builds["9.2.0"], "--items", "capture", "--json", str(path),
                          ASCEND_SIM_FAULT="aclmdlRICaptureBegin:1:107030")
    assert result.returncode == 1, result.stdout + result.stderr
    checks = item(json.loads(path.read_text()), 10)["checks"]
    first = aa.ops.REGISTRY.names()[0]
    refused = [c for c in checks if c["status"] != C]
    assert [c["name"] for c in refused] == [first] and refused[0]["status"] == X
    assert refused[0]["observed"].startswith("capture unsupported by this CANN/driver: aclmdlRICaptureBegin "
                                             "returned 107030 (ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT)")
    assert "injected fault" in refused[0]["observed"] and refused[0]["details"]["status"] == 107030
    assert "contradicted " + first in result.stdout and "Traceback" not in result.stdout + result.stderr


# ---- could not run -----------------------------------------------------------------------------

def test_without_an_npu_one_line_and_the_simulator(tmp_path):
    if any(Path(root).is_dir() for root in DEFAULT_CANN_ROOTS):
        pytest.skip("a CANN is installed where the loader looks by default: this host has an NPU stack")
    path = tmp_path / "r.json"
    result = run_selftest(tmp_path / "nothing", "--json", str(path), LD_LIBRARY_PATH="")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m ascend_aclnn selftest: no NPU here (CannLoadError: ")
    assert "python -m ascend_aclnn simulator build /tmp/cann-sim && ASCEND_HOME_PATH=/tmp/cann-sim python -m " \
           "ascend_aclnn selftest" in lines[0]
    report = json.loads(path.read_text())
    assert report["exit_status"] == 2 and report["items"] == [] and "no NPU here" in report["message"]
    assert report["cann"]["cann_error"].startswith("CannLoadError")
    # selftest itself asks its children for npu: the report must not blame a variable the user never set
    assert "ASCEND_ACLNN_BACKEND" not in report["environment"]
    assert report["cann"]["backend_reason"] == "selftest runs its probes on npu, which cannot work here"
    assert report["driver"] == report["cann"]["driver"] and set(report["driver"]) >= {"driver", "firmware"}


def test_the_text_header_has_the_versions_a_bug_report_needs():
    facts = {"ascend_aclnn": "0.9.0", "python": "3.11.2", "numpy": "2.4.0", "ml_dtypes": "0.5.1",
             "platform": "Linux-x", "driver": {"driver": "24.1.rc2", "firmware": "7.5.0.1.129"},
             "cann_version": "8.1.RC1", "acl_version": "1.13.0", "soc_name": "Ascend910B3", "device_count": 8}
    lines = report.header(facts).splitlines()
    assert lines[0] == "ascend_aclnn 0.9.0, Python 3.11.2, NumPy 2.4.0, ml_dtypes 0.5.1, Linux-x"
    assert lines[1] == "driver 24.1.rc2, firmware 7.5.0.1.129"
    assert lines[2].startswith("CANN 8.1.RC1, ACL 1.13.0, SoC Ascend910B3, 8 device(s)")
    facts["driver"] = {"driver": None, "firmware": None}
    assert report.header(facts).splitlines()[1] == "driver unknown, firmware unknown"


@pytest.mark.simulator
def test_no_device_is_no_npu(builds):
    result = run_selftest(builds["9.2.0"], "--items", "9", ASCEND_SIM_DEVICE_COUNT="0")
    assert result.returncode == 2 and result.stdout == ""
    assert "no NPU here (CannLoadError: CANN loaded from" in result.stderr and "reports no NPU" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--items", NO_SUCH_ITEM], f"--items: no item '{NO_SUCH_ITEM}'; the items are 1 (mask), 2 (upsample)"),
    (["--items", "mask,bogus"], "--items: no item 'bogus'"),
    (["--timeout", "0"], "--timeout: expected a positive number of seconds, got 0"),
    (["--timeout", "x"], "argument --timeout: invalid float value: 'x'"),
    (["--timeout", "inf"], "--timeout: expected a positive number of seconds, got inf"),
    (["--items", ","], "--items: no item named"),
    (["--json", "/nonexistent/dir/r.json"], "--json: cannot write /nonexistent/dir/r.json: no such directory"),
    (["--json", "/"], "--json: / is a directory"),
])
def test_bad_options_are_one_line_and_exit_2(args, message):
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["selftest", *args], out, err) == 2
    assert out.getvalue() == "" and len(err.getvalue().splitlines()) == 1 and message in err.getvalue()


# ---- the console entry point, JSON on stdout ---------------------------------------------------

@pytest.mark.simulator
def test_console_entry_point_and_json_on_stdout(builds, monkeypatch):
    """cli.main is what the ascend-aclnn console script runs; --json - puts the JSON alone on
    stdout and the text on stderr."""
    for key, value in _env(builds["9.2.0"]).items():
        monkeypatch.setenv(key, value)
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["selftest", "--items", "tiling_status", "--json", "-"], out, err) == 0
    report = json.loads(out.getvalue())
    assert [i["key"] for i in report["items"]] == ["tiling_status"] and report["exit_status"] == 0
    assert "8. status of a tiling-rule error (C % num_groups != 0): CONFIRMED" in err.getvalue()


def test_help_names_the_command():
    out = io.StringIO()
    assert cli.main(["--help"], out, io.StringIO()) == 0
    assert "selftest" in out.getvalue()
    out = io.StringIO()
    assert cli.main(["selftest", "--help"], out, io.StringIO()) == 0
    assert "--json FILE" in out.getvalue() and "Exit status: 0 no assumption contradicted" in out.getvalue()


# ---- the child runner: a hung or crashed child costs its item only -----------------------------

@pytest.fixture
def fake_python(tmp_path, monkeypatch):
    """Make the runner start this script instead of Python."""
    def make(body: str) -> None:
        script = tmp_path / "python"
        script.write_text("#!/bin/sh\n" + body + "\n")
        script.chmod(0o755)
        monkeypatch.setattr(selftest.sys, "executable", str(script))
    return make


def test_a_hung_child_is_killed_at_the_timeout(tmp_path, fake_python):
    fake_python("sleep 30 & wait")  # a grandchild too: the whole session is killed
    record = selftest.Runner(0.5, str(tmp_path)).run("mask")
    assert record["error"] == "timed out after 0.5 s (killed)" and record["returncode"] == -signal.SIGKILL
    assert record["seconds"] < 10
    checks = mask_item.judge(record, "9.2.0")
    assert [c["status"] for c in checks] == [E, E]
    assert checks[0]["observed"] == "could not run: timed out after 0.5 s (killed)"


def test_a_crashed_child_is_an_error_with_its_last_words(tmp_path, fake_python):
    fake_python('echo "about to fail" >&2; kill -SEGV $$')
    record = selftest.Runner(30, str(tmp_path)).run("upsample")
    assert record["error"] == "the child process died (killed by signal 11 (SIGSEGV)) before reporting: about to fail"
    fake_python("exit 3")
    assert selftest.Runner(30, str(tmp_path)).run("upsample")["error"] == \
        "the child process died (exit status 3) before reporting"


def test_an_exception_in_a_probe_is_reported(tmp_path):
    record = selftest.Runner(120, str(tmp_path)).run("no_such_probe")
    assert record["returncode"] == 0 and record["error"] == "KeyError: 'no_such_probe'"
    assert "Traceback" in record["traceback"]


def test_an_item_whose_children_fail_keeps_the_report(monkeypatch):
    """Every probe of an item timing out gives error checks, and the others still run."""
    def run(self, name):
        return {"name": name, "error": "timed out after 1 s (killed)", "seconds": 1.0, "returncode": -9}
    monkeypatch.setattr(selftest.Runner, "run", run)
    runner = selftest.Runner(1, "/nonexistent")
    for it in selftest.ITEMS:
        done = selftest.run_item(it, runner, {"cann_version": "9.2.0", "soc_name": "Ascend910B3"})
        assert done["status"] in (E, C), (it.key, done)
        assert all(c["status"] in (E, C, O) for c in done["checks"]), done
        assert any("timed out" in c["observed"] for c in done["checks"]), done


# ---- the judgements on observations the simulator cannot make ----------------------------------

def _det(distinct: int, mode=None) -> dict:
    return {"distinct_hashes": distinct, "hashes": ["h"] * distinct, "launch_mode": mode}


@pytest.mark.parametrize("run, expect, status", [
    (_det(1), True, C),       # hardware: one hash where deterministic is assumed
    (_det(3), True, X),       # hardware: hashes differ where deterministic is assumed
    (_det(3), False, C),      # hardware: the default mode varies, as assumed
    (_det(1), False, O),      # hardware: the default mode may repeat its bits, nothing contradicted
    (_det(1, 0), False, C),   # simulator: the launches ran in the default mode
    (_det(1, 0), True, X),    # simulator: the default mode where deterministic is assumed
    (_det(1, 1), None, O),    # unknown release: nothing assumed
])
def test_determinism_judgement(run, expect, status):
    assert determinism_item.judge_one_run("x", run, expect, "a")["status"] == status


@pytest.mark.parametrize("npu, status, text", [
    ({"status": 561002, "error": "AclnnInnerTilingError: ...", "recent": "tiling failed"}, X,
     "AclnnInnerTilingError: ... (CANN says: tiling failed)"),
    ({"status": 0}, X, "CANN accepts the call"),
    ({"status": None, "error": "CannLoadError: no symbol"}, E, "could not run: CannLoadError: no symbol"),
])
def test_tiling_judgement(npu, status, text):
    record = {"result": {"npu": npu, "binding": {"status": 161002}}}
    c = tiling_status_item.judge(record, "8.1.RC1")[0]
    assert c["status"] == status and text in c["observed"]


def test_unknown_release_assumes_nothing_release_dependent():
    swish = {"result": {"scale_2": {"follows": ["legacy"], "distance": {"corrected": 0.1, "legacy": 1e-7}},
                        "scale_1": {"follows": ["corrected", "legacy"], "distance": {"corrected": 0, "legacy": 0}}}}
    assert swish_grad_item.judge(swish, None)[0]["status"] == O
    assert swish_grad_item.judge(swish, "8.1.RC1")[0]["status"] == C
    assert swish_grad_item.judge(swish, "9.2.0")[0]["status"] == X
    neither = {"result": {"scale_2": {"follows": [], "distance": {"corrected": 0.1, "legacy": 0.2}}}}
    assert swish_grad_item.judge(neither, "9.2.0")[0]["observed"].startswith("neither formula")
    reinit = {"result": {"first_init": 0, "finalize": 0, "second_init": 0, "set_device_after": 0}}
    checks = {c["name"]: c for c in cann_item.judge({"cann_version": None, "soc_name": "Ascend910_9392"},
                                                          reinit)}
    assert checks["aclInit after aclFinalize"]["status"] == O and checks["SoC"]["status"] == C
    assert checks["CANN release"]["observed"] == "unknown: no version file"


def test_mask_judgement_prints_the_difference():
    k3 = {"prefix_equal": False, "indices_equal": False, "mask_equal": False, "prefix_bytes": 600,
          "npu_sha256": "a" * 64, "binding_sha256": "b" * 64, "npu_prefix_head_hex": "ffff",
          "first_differences": [{"byte": 0, "npu": "0xff", "binding": "0x00"}],
          "first_index_difference": {"position": 0, "npu": -1, "binding": 0}}
    checks = mask_item.judge({"result": {"k3": k3, "k1": {"error": "AclnnError: boom"}}}, "8.1.RC1")
    assert checks[0]["status"] == X and "byte 0: 0xff vs 0x00" in checks[0]["observed"]
    assert "index at position 0: NPU -1, binding 0" in checks[0]["observed"]
    assert "unconfirmed for CANN 8.1.RC1" in checks[0]["assumed"]
    assert checks[1]["status"] == E and checks[1]["observed"] == "could not run: AclnnError: boom"


# ---- items 10 and 11 on the numpy backend, and their judgements on crafted records ---------------

@pytest.mark.parametrize("key", ["capture", "timing"])
def test_capture_and_timing_items_pass_on_the_numpy_backend(tmp_path, key):
    """The numpy backend has the same API (graphs record and replay calls, events take host
    timestamps): the probes' "numpy" variant runs there, in a child as on the npu."""
    it = next(i for i in selftest.ITEMS if i.key == key)
    record = selftest.Runner(600, str(tmp_path)).run(f"{key}:numpy")
    assert "result" in record, record
    assert record["result"]["backend"] == "numpy"
    checks = it.judge({f"{key}:numpy": record}, {"cann_version": None})
    assert checks and all(c["status"] == C for c in checks), checks
    names = [c["name"] for c in checks]
    if key == "capture":
        assert names == [n for op in aa.ops.REGISTRY.names() for n in (op, f"{op} (plan)")]
        # the numpy backend is deterministic: every operator is held to bit equality
        assert all("bit for bit" in c["assumed"] for c in checks)
    else:
        assert "no timing: CANN" not in names and len(names) == 5  # no CANN to ask


def _replay(bit_equal=True, within=True, differing=0):
    return {"bit_equal": bit_equal, "within_tolerance": within, "differing": differing, "elements": 54,
            "max_abs_error": 0.0 if bit_equal else 3e-7, "report": "PASS" if within else "FAIL float32[2, 27]: ..."}


def _capture_record(backend="npu", **parts):
    """A capture probe's record: every described operator replayed equal, but for ``parts``
    ("name" or "name (plan)" -> the part)."""
    ok = {"outputs": 1, "replays": [_replay() for _ in range(3)]}
    calls = {op: parts.get(op, ok) for op in aa.ops.REGISTRY.names()}
    plans = {op: parts.get(f"{op} (plan)", ok) for op in aa.ops.REGISTRY.names()}
    return {"result": {"backend": backend, "replays": 3, "calls": calls, "plans": plans}}


def _judge_capture(record) -> dict:
    return {c["name"]: c for c in capture_item.judge(record, "8.1.RC1")}


def test_capture_judgement_confirms_replays_equal_to_eager():
    checks = _judge_capture(_capture_record())
    assert len(checks) == 2 * len(aa.ops.REGISTRY.names()) and all(c["status"] == C for c in checks.values())


@pytest.mark.parametrize("backend", ["npu", "numpy"])
def test_a_replay_that_differs_is_a_contradiction(backend):
    det = next(op for op in aa.ops.REGISTRY.names() if op not in selftest.concerned("determinism"))
    bad = {"outputs": 1, "replays": [_replay(), _replay(False, True, 2), _replay()]}
    checks = _judge_capture(_capture_record(backend, **{det: bad, f"{det} (plan)": bad}))
    for name in (det, f"{det} (plan)"):
        assert checks[name]["status"] == X
        assert "replay 2 of 3 differs from the eager call: 2 of 54 elements" in checks[name]["observed"]
    assert sum(c["status"] == X for c in checks.values()) == 2


def test_a_non_deterministic_kernel_is_held_to_the_precision_standard_on_the_npu_only():
    nondet = selftest.concerned("determinism")[0]
    close = {"outputs": 1, "replays": [_replay(False, True, 5)] * 3}
    far = {"outputs": 1, "replays": [_replay(), _replay(False, False, 5), _replay()]}
    checks = _judge_capture(_capture_record(**{nondet: close, f"{nondet} (plan)": far}))
    assert checks[nondet]["status"] == C and "within the CANN precision standard" in checks[nondet]["observed"]
    assert "not bit for bit" in checks[nondet]["observed"]
    assert checks[f"{nondet} (plan)"]["status"] == X
    assert "replay 2 of 3 is beyond the CANN precision standard" in checks[f"{nondet} (plan)"]["observed"]
    # the numpy backend is deterministic: the same record there is a contradiction
    assert _judge_capture(_capture_record("numpy", **{nondet: close}))[nondet]["status"] == X


def test_a_capture_refusal_is_reported_as_unsupported_and_a_failure_as_an_error():
    first, second = aa.ops.REGISTRY.names()[:2]
    refused = {"error": "AclRtStreamCapturedError: aclmdlRICaptureEnd failed", "status": 107027,
               "api": "aclmdlRICaptureEnd", "recent": "stream is captured", "refused": True}
    broken = {"error": "AclRtDrvInternalError: aclmdlRIExecuteAsync failed", "status": 507899,
              "api": "aclmdlRIExecuteAsync", "recent": None, "refused": False}
    checks = _judge_capture(_capture_record(**{first: refused, f"{second} (plan)": broken}))
    c = checks[first]
    assert c["status"] == X and c["details"] == {"status": 107027, "api": "aclmdlRICaptureEnd"}
    assert c["observed"] == ("capture unsupported by this CANN/driver: aclmdlRICaptureEnd returned 107027 "
                             "(ACL_ERROR_RT_STREAM_CAPTURED) (CANN says: stream is captured)")
    assert checks[f"{second} (plan)"]["status"] == E
    assert checks[f"{second} (plan)"]["observed"] == "could not run: AclRtDrvInternalError: aclmdlRIExecuteAsync failed"
    # a record with fewer replays than the probe makes is no observation
    short = _judge_capture(_capture_record(**{first: {"outputs": 1, "replays": [_replay()] * 2}}))[first]
    assert short["status"] == E and short["observed"] == "could not run: 2 of 3 replays made"
    # a probe that died says so for the whole item
    died = capture_item.judge({"error": "timed out after 1 s (killed)"}, "9.2.0")
    assert [c["status"] for c in died] == [E] and "timed out" in died[0]["observed"]


def _timing_record(backend="npu", **changes):
    one, many, big = [0.0034] * 5, [0.027] * 5, [0.025] * 5
    result = {"backend": backend, "operator": "upsample_nearest_exact1d", "stream": "<s>", "repeats": 5, "calls": 8,
              "shapes": {"small": [2, 16, 1024], "large": [2, 16, 65536]},
              "series": {"one_call": one, "n_calls": many, "larger_input": big},
              "no_timing": {"binding": {"raised": "ValueError", "status": None,
                                        "message": "Event.elapsed_time: both events must be created with timing=True"},
                            "cann": {"status": 107006, "recent": "no timestamp"} if backend == "npu" else None},
              "benchmark": {"device_ms": [0.0034] * 10, "host_ms": [0.02] * 10, "p10": 0.0034,
                            "median": 0.0034, "p90": 0.0034}}
    for key, value in changes.items():
        where, _, field = key.partition("__")
        if field:
            result[where] = dict(result[where], **{field: value})
        else:
            result[where] = value
    return {"result": result}


def _judge_timing(record) -> dict:
    return {c["name"]: c for c in timing_item.judge(record, "9.2.0")}


def test_timing_judgement_confirms_a_sane_clock():
    checks = _judge_timing(_timing_record())
    assert list(checks) == ["elapsed time > 0 and finite", "8 calls vs 1", "64x the input vs 1x",
                            "no timing: the binding", "no timing: CANN", "benchmark percentiles"]
    assert all(c["status"] == C for c in checks.values()), checks
    assert list(_judge_timing(_timing_record("numpy"))) == ["elapsed time > 0 and finite", "8 calls vs 1",
                                                            "64x the input vs 1x", "no timing: the binding",
                                                            "benchmark percentiles"]


@pytest.mark.parametrize("bad", [0.0, -0.001, float("nan"), float("inf")])
def test_a_zero_negative_or_non_finite_elapsed_time_is_a_contradiction(bad):
    series = {"one_call": [0.0034, bad, 0.0034, 0.0034, 0.0034], "n_calls": [0.027] * 5, "larger_input": [0.025] * 5}
    c = _judge_timing(_timing_record(series=series))["elapsed time > 0 and finite"]
    assert c["status"] == X and f"one call #2: {bad!r} ms" in c["observed"]
    bench = _judge_timing(_timing_record(benchmark__device_ms=[0.0034] * 9 + [bad]))["benchmark percentiles"]
    assert bench["status"] == X


def test_time_not_growing_with_the_work_is_a_contradiction():
    flat = {"one_call": [0.0034] * 5, "n_calls": [0.0034] * 5, "larger_input": [0.0036] * 5}
    checks = _judge_timing(_timing_record(series=flat))
    assert checks["8 calls vs 1"]["status"] == X and "1.00x" in checks["8 calls vs 1"]["observed"]
    assert checks["64x the input vs 1x"]["status"] == X  # 1.06x: inside a host's noise, not growth
    # the medians decide: one slow outlier among the five neither makes nor breaks growth
    noisy = {"one_call": [0.0034, 0.0034, 0.5, 0.0034, 0.0034], "n_calls": [0.027] * 5, "larger_input": [0.025] * 5}
    assert _judge_timing(_timing_record(series=noisy))["8 calls vs 1"]["status"] == C


def test_timing_less_events_and_percentiles_judgement():
    accepted = {"binding": {"raised": None, "value": 0.0}, "cann": {"status": 0, "recent": None}}
    checks = _judge_timing(_timing_record(no_timing=accepted))
    assert checks["no timing: the binding"]["status"] == X and "returned 0.0 ms" in checks["no timing: the binding"]["observed"]
    assert checks["no timing: CANN"]["status"] == X and "returned 0" in checks["no timing: CANN"]["observed"]
    other = {"binding": {"raised": "AclRtInternalError", "status": 507000, "message": "x"},
             "cann": {"status": 507000, "recent": "never recorded"}}
    checks = _judge_timing(_timing_record(no_timing=other))
    assert checks["no timing: the binding"]["status"] == X and checks["no timing: CANN"]["status"] == X
    assert "507000 (ACL_ERROR_RT_INTERNAL_ERROR)" in checks["no timing: CANN"]["observed"]
    skewed = _judge_timing(_timing_record(benchmark__p10=0.004, benchmark__median=0.0034))["benchmark percentiles"]
    assert skewed["status"] == X and "p10 0.0040 ms > median 0.0034 ms" in skewed["observed"]
    part_failed = _judge_timing(_timing_record(benchmark={"error": "AclnnError: boom"}))["benchmark percentiles"]
    assert part_failed["status"] == E and part_failed["observed"] == "could not run: AclnnError: boom"


# ---- the two goldens --------------------------------------------------------------------------

def _torch_golden(formula, dy, x, gamma, beta, groups, scale):
    """(dx, dgamma, dbeta) of y = z * sigmoid(s z), z = group_norm(x) * gamma + beta, by
    PyTorch's autograd in float64: the group norm's backward is PyTorch's own; the swish's
    derivative is sigmoid(s z) * (1 + s2 z (1 - sigmoid(s z))) with s2 = s ("corrected",
    the true derivative) or s2 = 1 ("8.1": CANN 8.1.RC1's kernel leaves s out of the second
    term)."""
    torch = pytest.importorskip("torch")
    t = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, gamma, beta)]
    z = torch.nn.functional.group_norm(t[0], groups, t[1], t[2], eps=1e-5)
    s = float(np.float32(scale))
    sig = torch.sigmoid(s * z.detach())
    s2 = s if formula == "corrected" else 1.0
    gz = torch.tensor(dy, dtype=torch.float64) * sig * (1 + s2 * z.detach() * (1 - sig))
    return [g.numpy() for g in torch.autograd.grad(z, t, gz)]


def _apart(got, want) -> float:
    """The largest error of any output, relative to that output's largest magnitude."""
    return max(float(np.max(np.abs(np.asarray(a, np.float64) - b)) / np.max(np.abs(b))) for a, b in zip(got, want))


@pytest.mark.parametrize("formula", ["corrected", "8.1"])
def test_the_two_formulas(formula):
    """The goldens the selftest judges the NPU's grad by are the two formulas, checked
    against PyTorch's autograd (not against the reference they are computed by): both
    coincide at swish_scale=1, and at 2 and 0.5 they are far apart (so the kernel's
    formula is unambiguous)."""
    import ascend_aclnn as aa
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    gamma, beta = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    other = "8.1" if formula == "corrected" else "corrected"
    with aa.use_backend("numpy"):
        _, mean, rstd = aa.group_norm_swish(x, gamma, beta, 2)
        for scale in (1.0, 2.0, 0.5):
            golden = swish_grad_item.golden(formula, dy, mean, rstd, x, gamma, beta, 2, swish_scale=scale)
            want = _torch_golden(formula, dy, x, gamma, beta, 2, scale)
            assert _apart(golden, want) < 1e-5, (scale, _apart(golden, want))
            apart = _apart(golden, _torch_golden(other, dy, x, gamma, beta, 2, scale))
            assert apart < 1e-5 if scale == 1.0 else apart > 100 * swish_grad_item.FORMULA_TOLERANCE, (scale, apart)


# ---- on whatever CANN the tests run against (an Atlas host with ASCEND_ACLNN_TEST_CANN=real) -----

def test_on_the_cann_under_test(sim, tmp_path, request):
    """The whole command against the session's CANN: every item reports, none is an error.
    On an Atlas host (ASCEND_ACLNN_TEST_CANN=real) this is the hardware run; on the
    simulator it is the run of the session's profile made above."""
    if not sim.real:
        status, stdout, _, report = request.getfixturevalue("reports")[SESSION_RELEASE]
    else:
        path = tmp_path / "r.json"
        result = subprocess.run([sys.executable, "-m", "ascend_aclnn", "selftest", "--json", str(path)], cwd=ROOT,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                                timeout=1800)
        status, stdout, report = result.returncode, result.stdout + result.stderr, json.loads(path.read_text())
    assert status in (0, 1), stdout
    assert [i["number"] for i in report["items"]] == [i.number for i in selftest.ITEMS]
    assert all(i["status"] != E for i in report["items"]), stdout


def test_descriptions_name_real_items_and_the_determinism_probe_runs_what_they_name():
    """Each key in a description's ``selftest`` is an item; item 5 measures exactly the
    operators whose descriptions name it (the probe has a run for each)."""
    keys = {i.key for i in selftest.ITEMS}
    for spec in aa.ops.REGISTRY:
        assert set(spec.selftest) <= keys, (spec.name, spec.selftest)
    import inspect
    probe = inspect.getsource(determinism_item.probe)
    for name in selftest.concerned("determinism"):
        assert f'"{name}": (' in probe, name
    assert selftest.concerned("determinism")  # the non-deterministic kernels say so


def test_every_module_of_the_items_package_is_an_item():
    """Adding an item is one file: every module in items/ is found by the scan (no list names
    them), numbers run from 1 with no gap or repeat, keys and probes are unique, and each run
    reaches its item's probe in the child."""
    import importlib

    from ascend_aclnn.tools.selftest import items, runner
    modules = sorted(p.stem for p in Path(items.__file__).parent.glob("*.py") if p.stem != "__init__")
    defined = [importlib.import_module(f"{items.__name__}.{m}").ITEM for m in modules]
    assert sorted(defined, key=lambda i: i.number) == list(selftest.ITEMS)
    assert [i.number for i in selftest.ITEMS] == list(range(1, len(modules) + 1))
    assert len({i.key for i in selftest.ITEMS}) == len(modules)
    for module, it in zip(modules, defined):  # each module holds its own probe
        assert it.probe is not None and it.probe.__module__ == f"{items.__name__}.{module}", module
        for name in it.probes:
            assert runner.PROBES[name.partition(":")[0]] is it.probe, (it.key, name)


def test_a_new_item_module_is_picked_up_and_a_clash_refused(tmp_path, monkeypatch):
    from ascend_aclnn.tools.selftest.items import discover
    package = tmp_path / "more_items"
    package.mkdir()
    (package / "__init__.py").write_text("")
    body = ("from ascend_aclnn.tools.selftest.item import Item\n"
            "def probe(variant): return {{}}\n"
            "ITEM = Item({n}, {key!r}, 'a new item', [{key!r}], lambda records, facts: [], probe)\n")
    (package / "first.py").write_text(body.format(n=1, key="first"))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover("more_items", [str(package)])
    assert [(i.number, i.key, i.title) for i in found] == [(1, "first", "a new item")]
    (package / "second.py").write_text(body.format(n=1, key="second"))
    with pytest.raises(ImportError, match="two selftest items share the number 1"):
        discover("more_items", [str(package)])
    (package / "second.py").unlink()
    (package / "third.py").write_text("X = 1\n")
    with pytest.raises(ImportError, match="more_items.third: a selftest item module must define ITEM"):
        discover("more_items", [str(package)])


def test_a_driver_without_capture_is_a_refusal_only_at_capture_begin():
    """207000 FEATURE_NOT_SUPPORT is how a driver with no capture answers aclmdlRICaptureBegin;
    from any other call it is a plain error."""
    from ascend_aclnn.errors import AclnnError

    def failure(status, api):
        try:
            raise AclnnError(status, api)
        except AclnnError as exc:
            return capture_item.capture_failure(exc)

    assert failure(207000, "aclmdlRICaptureBegin")["refused"] is True
    assert failure(207000, "aclmdlRIExecuteAsync")["refused"] is False
    assert failure(107030, "aclmdlRICaptureBegin")["refused"] is True
    assert failure(507899, "aclmdlRICaptureBegin")["refused"] is False


# ---- the exit status: a contradiction is never hidden (issue 36, item 9) ----------------------

def _fake_items(*judged: list) -> list:
    """Items whose probes never run and whose judge returns the given checks."""
    return [selftest.Item(n, f"fake{n}", f"fake item {n}", [f"fake{n}"], lambda records, facts, c=checks: c)
            for n, checks in enumerate(judged, 1)]


@pytest.fixture
def no_children(monkeypatch):
    """The runner answers without a child: the facts of an npu host, nothing for the probes."""
    def run(self, name):
        if name == "facts":
            return {"name": name, "result": {"backend": "npu", "cann_version": "9.2.0", "soc_name": "Ascend910B3"}}
        return {"name": name, "error": "timed out after 1 s (killed)", "seconds": 1.0, "returncode": -9}
    monkeypatch.setattr(selftest.Runner, "run", run)


@pytest.mark.parametrize("layout", ["one item", "two items", "error after"])
def test_an_item_that_errors_does_not_hide_a_contradiction(no_children, layout):
    """Exit 1 when an assumption is contradicted, whatever else failed to run: an error check
    beside a contradicted one (in one item, or in another item) still exits 1."""
    err = selftest.check("could not run", E, "", "could not run: timed out")
    bad = selftest.check("the fact", X, "it is so", "it is not")
    good = selftest.check("the other fact", C, "so", "so")
    judged = {"one item": [[err, bad, good]], "two items": [[err], [bad, good]],
              "error after": [[bad, good], [err]]}[layout]
    report = selftest.collect(_fake_items(*judged), 1.0)
    assert report["exit_status"] == 1, report
    assert report["counts"][X] >= 1, report["counts"]
    assert any(i["status"] == X for i in report["items"]), [i["status"] for i in report["items"]]


def test_errors_and_observations_alone_exit_0_and_a_contradiction_alone_exits_1(no_children):
    err = selftest.check("could not run", E, "", "could not run: timed out")
    seen = selftest.check("a value", O, "", "42")
    assert selftest.collect(_fake_items([err], [seen]), 1.0)["exit_status"] == 0
    bad = selftest.check("the fact", X, "it is so", "it is not")
    assert selftest.collect(_fake_items([bad]), 1.0)["exit_status"] == 1


def test_the_command_exits_1_on_a_contradiction_beside_an_error(no_children, monkeypatch):
    """Through the command (text and --json -): the exit status and the summary line."""
    err = selftest.check("could not run", E, "", "could not run: timed out")
    bad = selftest.check("the fact", X, "it is so", "it is not")
    monkeypatch.setattr(selftest, "ITEMS", tuple(_fake_items([err], [err, bad])))
    out, errs = io.StringIO(), io.StringIO()
    code = cli.main(["selftest", "--timeout", "1"], out, errs)
    assert code == 1, out.getvalue() + errs.getvalue()
    assert "2. fake item 2: CONTRADICTED" in out.getvalue()
    assert "1 contradicted" in out.getvalue().splitlines()[-1]
