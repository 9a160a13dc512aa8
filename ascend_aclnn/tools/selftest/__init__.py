"""``python -m ascend_aclnn selftest [--json FILE]``: settle, on an Atlas A2/A3 host, every
behaviour the documentation marks unconfirmed, and write a report to attach to a bug.

Each item (one module of ``items/``, holding its probe and its judge; its docstring says
what it settles) is printed as what the NPU did against what the binding assumes. Every
item's status is ``confirmed`` (the NPU does what the binding assumes), ``contradicted`` (it
does not: the difference is printed), ``observed`` (nothing is assumed, the value is
recorded) or ``error`` (the item could not run, with the reason). Each observation runs in a
child process of its own with a timeout (``--timeout``), so a hang or a crash costs that item
only. Exit status: 1 when an assumption is contradicted, 2 when the command cannot run (no
NPU), else 0.

Observations are made in the children (an item's ``probe``: a plain function returning JSON
data); the judgement against the binding's assumptions (which depend on the CANN release:
``ascend_aclnn.cann.version``) is made in the parent by the item's ``judge``. The parts:
``item`` (what an item is, checks and statuses), ``probing`` (what probes share), ``items/``
(found by a scan), ``runner`` (children, timeouts, exit status) and ``report`` (text, JSON).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

from ..options import EXIT_CANNOT_RUN
from ..progress import Progress
from .item import CONFIRMED, CONTRADICTED, ERROR, OBSERVED, STATUSES, Check, Item, check, concerned
from .items import ITEMS
from .report import header, render_item, summary, to_json
from .runner import DEFAULT_TIMEOUT, Runner, collect, run_item

__all__ = ["CONFIRMED", "CONTRADICTED", "OBSERVED", "ERROR", "STATUSES", "Check", "Item", "ITEMS", "Runner",
           "DESCRIPTION", "EPILOG", "add_arguments", "check", "collect", "concerned", "run", "run_item"]

DESCRIPTION = ("Settle on this host, in a few minutes, every behaviour of the NPU that the binding's documentation "
               "marks unconfirmed, printing for each what the NPU did and what the binding assumes: "
               + ", ".join(f"({i.number}) {i.title}" for i in ITEMS) + ". Each observation runs in a child process "
               "with a timeout. Statuses: confirmed, contradicted, observed (nothing assumed), error (could not run). "
               "Attach the --json report to a bug.")
EPILOG = ("Exit status: 0 no assumption contradicted, 1 at least one contradicted, 2 the command "
          "could not run (no NPU: try it on the CANN simulator, `simulator build PREFIX` then "
          "ASCEND_HOME_PATH=PREFIX; see `simulator --help`).")


def _selected(given: Optional[Sequence[str]], prog: str) -> list[Item]:
    from ..options import refuse
    if not given:
        return list(ITEMS)
    chosen = []
    for word in (w for g in given for w in g.replace(",", " ").split()):
        match = [i for i in ITEMS if word in (str(i.number), i.key)]
        if not match:
            raise refuse(prog, "--items", f"no item {word!r}; the items are " +
                         ", ".join(f"{i.number} ({i.key})" for i in ITEMS))
        if match[0] not in chosen:
            chosen.append(match[0])
    if not chosen:
        raise refuse(prog, "--items", f"no item named: give numbers 1-{len(ITEMS)} or names")
    return sorted(chosen, key=lambda i: i.number)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--json", metavar="FILE", help="also write the full report (versions, observations, hashes, "
                                                       "timings) to FILE as JSON (checked writable first); '-' for "
                                                       "stdout, the text then going to stderr")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit of each child process (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--items", nargs="+", metavar="N", help=f"run only these items, by number or name (1-{len(ITEMS)}; "
                        + ", ".join(i.key for i in ITEMS) + ")")
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    return parser


def run(args: argparse.Namespace, out: Optional[TextIO] = None, err: Optional[TextIO] = None,
        prog: str = "python -m ascend_aclnn selftest") -> int:
    """The command; returns its exit status."""
    out, err = out or sys.stdout, err or sys.stderr
    from ..options import refuse, writable_file
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise refuse(prog, "--timeout", f"expected a positive number of seconds, got {args.timeout:g}")
    items = _selected(args.items, prog)
    if args.json is not None and args.json != "-":
        writable_file(prog, "--json", args.json)  # before minutes of work, not after
    to_stdout = args.json == "-"
    text = err if to_stdout else out  # with --json -, stdout is the JSON alone

    # Always on, as compare's and bench's: off a terminal (``> report.txt``, a CI log) it is
    # one line per item as it starts; on one, the bar is cleared before the item's text.
    bar = Progress(len(items), err, not args.no_progress)

    def progress(kind: str, data: dict[str, Any]) -> None:
        if kind == "start":
            bar.step(f"{data['number']}. {data['title']}")
            return
        bar.close()
        text.write((header(data) if kind == "cann" else render_item(data)) + "\n")
        text.flush()

    report = collect(items, args.timeout, prog, progress=progress)
    if report["exit_status"] == EXIT_CANNOT_RUN:
        text.flush()
        err.write(f"{prog}: {report['message']}\n")
    else:
        text.write(summary(report) + "\n")
    if args.json:
        data = to_json(report)
        if to_stdout:
            out.write(data)
        else:
            try:
                Path(args.json).write_text(data, encoding="utf-8")
            except OSError as exc:
                err.write(f"{prog}: cannot write {args.json}: {exc}\n")
                return EXIT_CANNOT_RUN
            text.write(f"report written to {args.json}\n")
    return int(report["exit_status"])
