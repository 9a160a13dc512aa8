"""A mutation pass over the runtime (npu runtime, streams, graphs), the CPU reference runner and
the operators' documented limits.

    python devtools/mutants.py                 # every mutant, a few minutes
    python devtools/mutants.py --ci            # the fast subset a test runs (tests/test_mutants.py)
    python devtools/mutants.py --only R1 G1    # some, by id
    python devtools/mutants.py --list          # what each one is, and which tests should kill it

Each mutant is one realistic single-line bug: a line of a source file (found exactly once,
whitespace included), the line that replaces it, and the tests that should catch it. The
checkout is copied once to a temporary directory; each mutant is applied there alone, the
named tests are run (pytest -x, one process, this Python) against the copy, and the file is
restored. A mutant is KILLED when the tests fail, SURVIVED when they pass; a run past its
time limit counts as killed (the tests hung) and says so. The unmutated tests run first
(the baseline): a mutant's verdict means nothing if they fail unmutated.

Only Python sources are mutated: the runs share one simulator build (the session builds
are keyed by ASCEND_ACLNN_TEST_BUILDS), which a mutant of native/ would make stale.
Exit status: 0 when every mutant is killed, 1 when one survives, 2 when the baseline fails
or a mutant's line is not found exactly once (the list went stale).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = "ascend_aclnn/backends/npu/runtime.py"
STREAMS = "ascend_aclnn/backends/npu/streams.py"
GRAPHS = "ascend_aclnn/backends/npu/graphs.py"
RUNNER = "ascend_aclnn/cpu_reference/runner.py"
CASTS = "ascend_aclnn/cpu_reference/_torch.py"
HOST_STREAMS = "ascend_aclnn/backends/numpy/streams.py"
OPS = "ascend_aclnn/ops/"


@dataclasses.dataclass(frozen=True)
class Mutant:
    id: str
    what: str          # the bug, in words (the documented sentence it breaks)
    path: str          # relative to the checkout
    original: str      # one whole line, exactly as in the file
    mutated: str
    tests: tuple[str, ...]  # pytest arguments: files, node ids, "-k EXPR"
    ci: bool = False   # in the fast subset (tests/test_mutants.py)


def _k(expr: str) -> tuple[str, str]:
    return ("-k", expr)


SM = "tests/test_stream_memory.py"
# The runner's own tests (test_cpu_reference.py) that exercise delivery, lookup and rows: the
# whole file, and test_aclnn.py, take minutes.
# With the tests written for issue 36's survivors (test_cpu_reference_round4.py).
CPUREF = ("tests/test_cpu_reference.py", "tests/test_cpu_reference_round4.py", "-k",
          "outputs_are_cast or wrong_output_shape or receives_what_c or "
          "register_reference or rows_are_chosen or in_place_rows or in_place_parameter_reaches or ignored_knobs or wider_than or "
          "hand_formulas or hand_row or does_not_fit or rounded_once or another_shape or complex_result or "
          "complex_table_result or comes_before or scatter_nd_update_runs or apply_rotary_pos_emb_runs")
BOUNDS = ("tests/test_boundaries.py",)
MUTANTS: tuple[Mutant, ...] = (
    # ---- the allocator ------------------------------------------------------------------------
    Mutant("R1", "a not-ready event taken as complete (the query made, its answer ignored): a block is "
           "handed out before the work that uses it ran", RUNTIME,
           "                    if not done:", "                    if False:",
           (SM, *_k("not_reused_before_it_ran[upload] or reused_once")), ci=True),
    Mutant("R2", "free() returns the block to the cache at once, with work still queued on it", RUNTIME,
           "        if not users or self.closed:", "        if True:", (SM, *_k("not_reused_before_it_ran"))),
    Mutant("R3", "the event is taken from the pool but never recorded (a never-recorded Ex event "
           "queries complete)", RUNTIME,
           "                record_event(h, s)", "                pass", (SM, *_k("not_reused_before_it_ran"))),
    Mutant("R4", "no stream's queued work uses the block (Stream.uses always False): free() records no event",
           RUNTIME, "            return any(_holds(o, buf) for o in reversed(self._pending))",
           "            return False", (SM, *_k("not_reused_before_it_ran[upload]"))),
    Mutant("R5", "a queued replay's holdings are not looked into: a closed graph's queued replay is not a "
           "user of the block", RUNTIME,
           "    return type(obj) is Holdings and any(_holds(o, buf) for o in obj.objects)",
           "    return False", (SM, *_k("replay_of_a_closed_graph"))),
    Mutant("R6", "a poll queries the later events of a stream already seen busy (a poll should cost a "
           "query per ready block and per busy stream)", RUNTIME,
           "                    if stream in busy:", "                    if False:",
           (SM, *_k("one_event_per_busy_stream"))),
    Mutant("R7", "alloc never looks at the blocks waiting for their events: they pile up", RUNTIME,
           "                waiting = self._freed.pop(size, None)", "                waiting = None",
           (SM, *_k("thousand or reused_once"))),
    Mutant("R8", "the throttle lets one more launch queue than MAX_QUEUED_LAUNCHES", RUNTIME,
           "        if self.queued >= MAX_QUEUED_LAUNCHES and self.graph is None and not self.capturing:  # a capture "
           "queues nothing",
           "        if self.queued > MAX_QUEUED_LAUNCHES and self.graph is None and not self.capturing:  # a capture "
           "queues nothing",
           ("tests/test_reliability.py", *_k("long_loops or queue_bound"))),
    Mutant("R9", "launches are not counted: the stream never waits for its queue (what pending work keeps "
           "alive grows without bound)", RUNTIME,
           "        self.queued += 1", "        pass", ("tests/test_reliability.py", *_k("long_loops or queue_bound"))),
    Mutant("R10", "a failed sync flags nothing: reading what discarded work would have written returns "
           "stale data", RUNTIME,
           "        buf.error = flag", "        pass", ("tests/test_events.py", *_k("flags_what"))),
    Mutant("R11", "a grown workspace releases the old one at once, under kernels still queued on it",
           RUNTIME, "            self._pending.append(ws)\n            del ws",
           "            del ws", (SM, *_k("replaced_workspace"))),
    Mutant("R12", "a failed sync does not count as a completed synchronisation", RUNTIME,
           "                self.syncs += 1", "                pass",
           ("tests/test_lifetimes.py", "tests/test_streams.py", "tests/test_device_array.py")),
    # ---- streams and events -------------------------------------------------------------------
    Mutant("S1", "Stream.query() says complete while work is queued", STREAMS,
           "    return st.value == ACL_STREAM_STATUS_COMPLETE", "    return True",
           (SM, *_k("free_does_not_wait"))),
    Mutant("S2", "a timing event is created without ACL_EVENT_TIME_LINE", STREAMS,
           "                    flags = ACL_EVENT_SYNC | (ACL_EVENT_TIME_LINE if self.timing else 0)",
           "                    flags = ACL_EVENT_SYNC", ("tests/test_events.py", *_k("timing_events_measure"))),
    Mutant("S3", "a failed event sync is not reported", STREAMS,
           "        if status:\n            stream.discarded(status, \"aclrtSynchronizeEvent\")",
           "        if False:\n            stream.discarded(status, \"aclrtSynchronizeEvent\")",
           ("tests/test_events.py", *_k("flags_what"))),
    Mutant("S4", "elapsed_time does not wait for its events", STREAMS,
           "            self._synchronize()\n            end._synchronize()", "            end._synchronize()",
           ("tests/test_events.py", "tests/test_sim_schedule.py",
            *_k("timing_events_measure or grows_with_the_work or two_streams"))),
    Mutant("S5", "the numpy backend's elapsed_time in microseconds, not milliseconds", HOST_STREAMS,
           "            return (end.stamp_ns - self.stamp_ns) / 1e6",
           "            return (end.stamp_ns - self.stamp_ns) / 1e3",
           ("tests/test_verdicts.py", *_k("milliseconds")), ci=True),
    Mutant("S6", "Event.query() on the npu says complete without asking", STREAMS,
           "            return event_complete(dev, self.handle)", "            return True",
           ("tests/test_sim_schedule.py", *_k("event_query"))),
    # ---- graphs -------------------------------------------------------------------------------
    Mutant("G1", "a replay does not hold what its captured launches use", GRAPHS,
           "            target.record([self.holdings], self.written, \"aclmdlRIExecuteAsync\")",
           "            target.record([], self.written, \"aclmdlRIExecuteAsync\")",
           ("tests/test_graphs.py", SM, *_k("close_before_it_ran or outlives or replay_of_a_closed"))),
    Mutant("G2", "the captured workspace does not go with the holdings", GRAPHS,
           "                    ws, s._workspace = s._workspace, None\n                    if ws is not None:\n"
           "                        s._pending.append(ws)",
           "                    ws, s._workspace = s._workspace, None\n                    if False:\n"
           "                        s._pending.append(ws)",
           ("tests/test_graphs.py", *_k("workspace_outlives"))),
    Mutant("G3", "a replay's outputs are not recorded as written by it (a failed replay flags nothing)",
           GRAPHS, "                    self.written += s._written", "                    pass",
           ("tests/test_graphs.py", "tests/test_faults.py", *_k("replay or graph or capture"))),
    Mutant("G4", "capture begins without synchronising the device (work queued before runs inside it)",
           GRAPHS, "        device.synchronize()  # as torch.npu.graph: nothing of before runs inside the capture",
           "        pass", ("tests/test_graphs.py",)),
    # ---- the CPU reference runner ---------------------------------------------------------------
    Mutant("C1", "issue 36 item 1: a float64 result rounded twice (through float32) into a 16-bit output",
           CASTS, "            np.copyto(dst, values, casting=\"unsafe\")",
           "            np.copyto(dst, values.astype(np.float32), casting=\"unsafe\")",
           CPUREF),
    Mutant("C2", "issue 36 item 2: the output check compares sizes, not shapes", RUNNER,
           "    if shape != tuple(out.shape):",
           "    if int(np.prod(shape)) != int(np.prod(tuple(out.shape))):",
           CPUREF),
    Mutant("C3", "issue 36 item 3: a complex result cast into a real output (the imaginary part dropped)",
           RUNNER, "    if r.dtype.kind == \"c\" and out.dtype.kind != \"c\":", "    if False:",
           CPUREF),
    Mutant("C4", "issue 36 item 5: read-and-written (in-place) parameters not passed to a function reference",
           RUNNER, "        if getattr(p, \"written\", False) and not getattr(p, \"read\", True) and p.c_name not in named:",
           "        if getattr(p, \"written\", False) and p.c_name not in named:",
           CPUREF),
    Mutant("C5", "a list output with fewer tensors than results is accepted", RUNNER,
           "        if len(result) > len(out):  # more tensors than results: the rest are left alone, as the NPU does",
           "        if len(result) > len(out) + 1:",
           CPUREF),
    Mutant("C6", "a table row's literals are not compared: a value op-plugin never passes runs some row",
           RUNNER, "    return bool(expected == given) if expected is not None else given is None",
           "    return True", CPUREF),
    Mutant("C7", "the function reference may write its inputs (they are not made read-only)", RUNNER,
           "        view.flags.writeable = False", "        pass",
           CPUREF),
    Mutant("C8", "a reference returning the wrong number of results is accepted", RUNNER,
           "    if not isinstance(got, (tuple, list)) or len(got) != len(written):",
           "    if not isinstance(got, (tuple, list)):",
           (*CPUREF[:-1], CPUREF[-1] + " or too_few", "tests/test_verdicts.py")),
    # ---- the operators' documented limits (at the limit and one past it) -------------------------
    Mutant("B1", "the bfloat16 backward's pad limit off by one: a pad of exactly 7 refused ('every pad <= 7')",
           OPS + "pad.py",
           "    ((_PADS[0] <= BF16_MAX_PAD) & (_PADS[1] <= BF16_MAX_PAD) & (_PADS[2] <= BF16_MAX_PAD) & (_PADS[3] <= BF16_MAX_PAD)))",
           "    ((_PADS[0] < BF16_MAX_PAD) & (_PADS[1] < BF16_MAX_PAD) & (_PADS[2] < BF16_MAX_PAD) & (_PADS[3] < BF16_MAX_PAD)))",
           BOUNDS),
    Mutant("B2", "4001 channels per group accepted by the grad ('C / num_groups is limited to 4000')",
           OPS + "group_norm.py",
           "    _tiling(_C // _G <= MAX_CHANNELS_PER_GROUP, \"num_groups\",",
           "    _tiling(_C // _G <= MAX_CHANNELS_PER_GROUP + 1, \"num_groups\",", BOUNDS),
    Mutant("B3", "max-pool padding up to (kernel + 1) // 2 accepted for an odd kernel ('0 <= p <= kernel // 2')",
           OPS + "max_pool.py",
           "        require((PH >= 0) & (PH <= KH // 2) & (PW >= 0) & (PW <= KW // 2), \"padding\",",
           "        require((PH >= 0) & (PH <= (KH + 1) // 2) & (PW >= 0) & (PW <= (KW + 1) // 2), \"padding\",", BOUNDS),
    Mutant("B4", "a magnification of exactly 50 refused by the upsample backward ('limited to 50')",
           OPS + "upsample.py", "    require(_REAL_SCALE >= 1 / MAX_MAGNIFICATION, \"scales\",",
           "    require(_REAL_SCALE > 1 / MAX_MAGNIFICATION, \"scales\",",
           BOUNDS),
    Mutant("B5", "im2col refuses a padded extent of exactly 2**63-1 ('H + 2*padding <= 2**63-1')",
           OPS + "im2col.py", "        rules.append(require(sizes[axis] + 2 * P[axis] <= INT64_MAX, \"padding\",",
           "        rules.append(require(sizes[axis] + 2 * P[axis] < INT64_MAX, \"padding\",",
           BOUNDS),
    Mutant("B6", "the numpy backend's stride-1 fold allocates the padded image, whatever the padding",
           "ascend_aclnn/backends/numpy/im2col.py",
           "    fast = sh == 1 and sw == 1 and wo > (kw - 1) * dw and buffer <= kh * kw * ho * wo + h * w",
           "    fast = sh == 1 and sw == 1 and wo > (kw - 1) * dw", BOUNDS),
    Mutant("B7", "an int array value of 2**63 passes the int64 check", OPS + "spec.py",
           "        if any(not -2**63 <= v < 2**63 for v in ints):", "        if any(not -2**63 <= v <= 2**63 for v in ints):",
           BOUNDS),
)


def find_once(text: str, original: str) -> int:
    """Where ``original`` (whole lines) is in text; -1 if not exactly once."""
    at = [i for i in range(len(text)) if text.startswith(original + "\n", i) and (i == 0 or text[i - 1] == "\n")]
    return at[0] if len(at) == 1 else -1


def stale(mutants: Sequence[Mutant], root: Path = ROOT) -> list[str]:
    """The mutants whose line is not found exactly once (the list went stale)."""
    return [m.id for m in mutants if find_once((root / m.path).read_text(), m.original) < 0]


def _copy(dest: Path) -> None:
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", "build", "*.egg-info")
    shutil.copytree(ROOT, dest, ignore=ignore, dirs_exist_ok=True)


def _pytest(copy: Path, args: Sequence[str], timeout: float, builds: str) -> tuple[Optional[int], str, float]:
    env = dict(os.environ, PYTHONPATH=str(copy), ASCEND_ACLNN_TEST_BUILDS=builds, PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", time.perf_counter() - started
    out = proc.stdout + proc.stderr
    return proc.returncode, out, time.perf_counter() - started


def _first_failure(out: str) -> str:
    """The first failed test (a teardown ERROR, e.g. the leak check after it, only if none)."""
    for prefix in ("FAILED ", "ERROR "):
        for line in out.splitlines():
            if line.startswith(prefix):
                return line.split(" - ")[0]
    return "(no test named)"


def run(mutants: Sequence[Mutant], timeout: float, out=sys.stdout) -> int:
    missing = stale(mutants)
    if missing:
        out.write(f"mutants.py: the lines of {', '.join(missing)} are not found exactly once: update the list\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="ascend-aclnn-mutants-") as tmp:
        copy, builds = Path(tmp) / "checkout", Path(tmp) / "builds"
        builds.mkdir()
        _copy(copy)
        # the baseline: every selection unmutated (it also builds the simulator once)
        for args in dict.fromkeys(m.tests for m in mutants):
            code, text, secs = _pytest(copy, args, timeout, str(builds))
            if code != 0:
                out.write(f"baseline FAILED ({' '.join(args)}), {secs:.0f} s:\n{text[-3000:]}\n")
                return 2
        out.write(f"baseline: {len(set(m.tests for m in mutants))} selection(s) pass unmutated\n")
        killed = 0
        for m in mutants:
            path = copy / m.path
            text = path.read_text()
            at = find_once(text, m.original)
            path.write_text(text[:at] + m.mutated + text[at + len(m.original):])
            try:
                code, log, secs = _pytest(copy, m.tests, timeout, str(builds))
            finally:
                path.write_text(text)
            if code is None:
                verdict, why = "KILLED", f"timed out after {timeout:.0f} s"
            elif code == 0:
                verdict, why = "SURVIVED", ""
            else:
                verdict, why = "KILLED", _first_failure(log)
            killed += verdict == "KILLED"
            out.write(f"{verdict:8s} {m.id:4s} {secs:5.0f} s  {m.path}: {m.what}" + (f"  [{why}]" if why else "") + "\n")
            out.flush()
        out.write(f"mutants: {killed} of {len(mutants)} killed ({killed / len(mutants):.0%})\n")
        return 0 if killed == len(mutants) else 1


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ci", action="store_true", help="only the fast subset")
    parser.add_argument("--only", nargs="+", metavar="ID", help="only these mutants")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per test run (default 300)")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if (not args.ci or m.ci) and (not args.only or m.id in args.only)]
    if args.only and len(chosen) != len(set(args.only)):
        known = {m.id for m in MUTANTS}
        parser.error(f"unknown mutant(s) {', '.join(sorted(set(args.only) - known))}")
    if args.list:
        for m in chosen:
            print(f"{m.id}: {m.path}: {m.what}\n    - {m.original.strip()}\n    + {m.mutated.strip()}\n"
                  f"    killed by: {' '.join(m.tests)}")
        return 0
    return run(chosen, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
