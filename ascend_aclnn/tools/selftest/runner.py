"""Runs the items: each probe in a child process of its own with a timeout (a hang or a
crash costs that item only), each item's judge on what its probes said, and the exit status
from the checks. The child is ``python -m ascend_aclnn.tools.selftest PROBE[:VARIANT] FILE``."""
from __future__ import annotations

import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..options import EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK
from .item import CONFIRMED, CONTRADICTED, ERROR, OBSERVED, STATUSES, Check, Item, Probe, check
from .items import ITEMS
from .probing import failure

DEFAULT_TIMEOUT = 300.0  # seconds per child process; an Atlas host's aclInit alone can take several
SIMULATOR_HINT = "{tools} simulator build /tmp/cann-sim && ASCEND_HOME_PATH=/tmp/cann-sim {prog}"
# Environment variables recorded in the report (where CANN was found and how it was steered).
RECORDED_ENV = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH",
                "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_ACLNN_BACKEND", "LD_LIBRARY_PATH")


# ---- the children ---------------------------------------------------------------------------

def probe_facts(_: str) -> dict[str, Any]:
    """What ``info`` reports (versions, SoC, devices, libraries), and whether this CANN is
    the simulator (its libascendcl.so exports aclsimLiveCount)."""
    from .. import info
    facts = info.collect()
    simulator = None
    try:
        from ...cann import loader
        simulator = hasattr(loader.get_cann().libraries["ascendcl"], "aclsimLiveCount")
    except Exception:  # noqa: BLE001  CANN did not load: facts says why
        pass
    if facts.get("requested_by", "").startswith("environment variable"):
        # The parent set ASCEND_ACLNN_BACKEND=npu for its children: the user did not (the
        # report's "environment" records what the user set).
        facts["backend_reason"] = "selftest runs its probes on npu" + (
            "" if facts.get("backend") else ", which cannot work here")
    keep = ("ascend_aclnn", "python", "platform", "numpy", "ml_dtypes", "driver", "backend", "backend_reason",
            "cann_error",
            "npu_error", "libraries", "cann_version", "cann_version_files", "cann_version_root",
            "cann_version_warning", "acl_version", "soc_name", "device_count", "operator_libraries")
    out = {k: facts.get(k) for k in keep}
    out["missing_functions"] = [r["function"] for r in facts.get("functions", []) if not r.get("library")]
    out["simulator"] = simulator
    return out



# The probe each run name calls: "facts", which every run starts with, and the items' own.
PROBES: dict[str, Probe] = {"facts": probe_facts}
PROBES.update({run.partition(":")[0]: item.probe for item in ITEMS if item.probe is not None for run in item.probes})


def child_main(argv: Sequence[str]) -> int:
    """``python -m ascend_aclnn.tools.selftest PROBE[:VARIANT] RESULT_FILE``."""
    name, result_file = argv
    probe, _, variant = name.partition(":")
    started = time.perf_counter()
    result: dict[str, Any]
    try:
        result = {"result": PROBES[probe](variant)}
    except Exception as exc:  # noqa: BLE001
        result = {"exception": failure(exc)["error"], "status": getattr(exc, "status", None),
                  "traceback": traceback.format_exc()}
    result["seconds"] = round(time.perf_counter() - started, 3)
    with open(result_file, "w", encoding="utf-8") as f:
        json.dump(result, f, default=str)
    return 0



# ---- the parent -----------------------------------------------------------------------------

class Runner:
    """Runs probes in child processes, each with a timeout, and keeps what they said."""

    def __init__(self, timeout: float, workdir: str):
        self.timeout: float = timeout
        self.workdir: str = workdir
        self.count: int = 0

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the child and anything it started
        except ProcessLookupError:
            pass

    def run(self, name: str) -> dict[str, Any]:
        """{"name", "seconds", "returncode", "stderr_tail", "stdout_tail", and "result" or "error"}."""
        self.count += 1
        result_file = os.path.join(self.workdir, f"probe{self.count}.json")
        env = dict(os.environ, ASCEND_ACLNN_BACKEND="npu")
        package_root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        record: dict[str, Any] = {"name": name}
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "ascend_aclnn.tools.selftest", name, result_file],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._kill(proc)
            stdout, stderr = proc.communicate()
            record["error"] = f"timed out after {self.timeout:g} s (killed)"
        except BaseException:  # Ctrl-C: the child is in its own session and would not get it
            self._kill(proc)
            proc.communicate()
            raise
        record["seconds"] = round(time.perf_counter() - started, 3)
        record["returncode"] = proc.returncode
        tail = (stderr or "").strip().splitlines()[-20:]
        record["stderr_tail"] = tail
        record["stdout_tail"] = (stdout or "").strip().splitlines()[-20:]  # CANN may log there
        if "error" not in record:
            try:
                with open(result_file, encoding="utf-8") as f:
                    said = json.load(f)
            except (OSError, ValueError):
                how = (f"killed by signal {-proc.returncode} ({signal.Signals(-proc.returncode).name})"
                       if proc.returncode and proc.returncode < 0 else f"exit status {proc.returncode}")
                last = f": {tail[-1]}" if tail else ""
                record["error"] = f"the child process died ({how}) before reporting{last}"
            else:
                if "exception" in said:
                    record["error"] = said["exception"]
                    record["status"] = said.get("status")
                    record["traceback"] = said.get("traceback")
                else:
                    record["result"] = said["result"]
                record["child_seconds"] = said.get("seconds")
        return record


def item_status(checks: list[Check]) -> str:
    found = {c["status"] for c in checks}
    for status in (CONTRADICTED, ERROR, CONFIRMED):
        if status in found:
            return status
    return OBSERVED


def run_item(item: Item, runner: Runner, facts: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    records = {name: runner.run(name) for name in item.probes}
    try:
        checks = item.judge(records, facts)
    except Exception as exc:  # noqa: BLE001  a probe said something unexpected: keep the report
        checks = [check("judgement", ERROR, "", f"could not judge the observation: {type(exc).__name__}: {exc}")]
    return {"number": item.number, "key": item.key, "title": item.title, "status": item_status(checks),
            "checks": checks, "probes": list(records.values()), "seconds": round(time.perf_counter() - started, 3)}



def collect(items: Sequence[Item], timeout: float, prog: str = "python -m ascend_aclnn selftest",
            progress: Optional[Callable[[str, dict[str, Any]], None]] = None) -> dict[str, Any]:
    """The whole report as plain data (what --json writes). ``progress("cann", facts)`` is
    called once CANN answered, then ``progress("start", {"number", "title"})`` as each item
    starts and ``progress("item", item)`` as it finishes."""
    from ..._version import __version__
    started = time.perf_counter()
    report: dict[str, Any] = {
        "schema": 1, "command": prog, "ascend_aclnn": __version__, "python": platform.python_version(),
        "numpy": np.__version__, "platform": platform.platform(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "timeout_seconds": timeout, "environment": {k: os.environ[k] for k in sorted(os.environ)
                                                    if k in RECORDED_ENV or k.startswith("ASCEND_SIM_")},
        "driver": None, "cann": None, "items": [], "counts": {}, "exit_status": None, "message": None}
    with tempfile.TemporaryDirectory(prefix="ascend-aclnn-selftest-") as workdir:
        runner = Runner(timeout, workdir)
        facts_record = runner.run("facts")
        report["facts_probe"] = {k: v for k, v in facts_record.items() if k != "result"}
        facts = facts_record.get("result")
        if isinstance(facts, dict):
            report["driver"] = facts.get("driver")
        if not isinstance(facts, dict) or facts.get("backend") != "npu":
            if isinstance(facts, dict):
                why = (facts.get("cann_error") or facts.get("npu_error") or facts.get("backend_reason")
                       or "the npu backend cannot run")
            else:
                why = f"could not even ask: {facts_record.get('error')}"
            report["cann"] = facts
            report["exit_status"] = EXIT_CANNOT_RUN
            why = " ".join(str(why).split("\n")[0].split(" (searched ")[0].split())
            hint = SIMULATOR_HINT.format(tools=prog.rsplit(" ", 1)[0], prog=prog)
            report["message"] = f"no NPU here ({why}); to see what selftest does, run it on the CANN simulator: {hint}"
        else:
            report["cann"] = facts
            if progress is not None:
                progress("cann", facts)
            for item in items:
                if progress is not None:
                    progress("start", {"number": item.number, "title": item.title})
                done = run_item(item, runner, facts)
                report["items"].append(done)
                if progress is not None:
                    progress("item", done)
            counts = {s: sum(i["status"] == s for i in report["items"]) for s in STATUSES}
            report["counts"] = counts
            # From the checks, not the items' summary statuses: no other outcome of an item
            # (an error beside the contradiction) can hide one.
            contradicted = any(c["status"] == CONTRADICTED for i in report["items"] for c in i["checks"])
            report["exit_status"] = EXIT_FAILED if contradicted else EXIT_OK
    report["duration_seconds"] = round(time.perf_counter() - started, 3)
    return report

