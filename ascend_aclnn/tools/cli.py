"""The command line: ``python -m ascend_aclnn {info,compare,gradcheck}``.

Exit status, for CI: 0 when everything passed, 1 when a check failed (or, for info, npu
was asked for and cannot work), 2 when the command could not run (bad arguments, or the
npu backend is unavailable for compare).
"""
from __future__ import annotations

import argparse
import sys
import time
import zlib
from typing import Any, Optional, Sequence, TextIO

import numpy as np

EXIT_OK, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2


class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, one line per step otherwise."""

    def __init__(self, total: int, stream: TextIO, enabled: bool = True):
        self.total, self.stream, self.enabled, self.done = total, stream, enabled, 0
        self.tty = enabled and hasattr(stream, "isatty") and stream.isatty()

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        width = 24
        filled = width * self.done // max(self.total, 1)
        bar = f"[{'#' * filled}{'.' * (width - filled)}] {self.done + 1}/{self.total} {label}"
        if self.tty:
            self.stream.write("\r\x1b[K" + bar)
        else:
            self.stream.write(bar + "\n")
        self.stream.flush()
        self.done += 1

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _names(values: Optional[Sequence[str]]) -> Optional[list[str]]:
    if not values:
        return None
    return [v for item in values for v in item.replace(",", " ").split()]


def _cases(ops: Optional[list[str]], dtypes: Optional[list[str]]) -> list[tuple[Any, np.dtype]]:
    from ..ops import REGISTRY, SPECS
    from ..tensors import dtype_name
    if ops:
        unknown = [o for o in ops if o not in SPECS]
        if unknown:
            raise ValueError(f"--ops: unknown function(s) {', '.join(unknown)}; choose from {', '.join(SPECS)}")
    cases = []
    for spec in REGISTRY:
        if ops and spec.name not in ops:
            continue
        for dt in getattr(spec.params[0], "dtypes", ()) or ():
            if dtypes and dtype_name(dt) not in dtypes:
                continue
            cases.append((spec, np.dtype(dt)))
    return cases


def _seeded(seed: int, *labels: str) -> np.random.Generator:
    """The same inputs for a function and dtype whatever else is selected."""
    return np.random.default_rng([seed] + [zlib.crc32(label.encode()) for label in labels])


def run_compare(ops: Optional[list[str]], dtypes: Optional[list[str]], seed: int, out: TextIO, err: TextIO,
                progress: bool = True, backend: str = "npu") -> int:
    """Each function on random inputs (its description's example) on ``backend`` and on
    the NumPy reference, every output compared under the precision standard."""
    from .. import testing
    from ..api import call
    from ..backends import use_backend
    from ..tensors import dtype_name
    try:
        cases = _cases(ops, dtypes)
    except ValueError as exc:
        err.write(f"compare: {exc}\n")
        return EXIT_CANNOT_RUN
    if not cases:
        err.write("compare: nothing selected (check --ops and --dtypes)\n")
        return EXIT_CANNOT_RUN
    try:
        with use_backend(backend):
            pass
    except Exception as exc:
        err.write(f"compare: the {backend} backend cannot run here:\n{exc}\n")
        return EXIT_CANNOT_RUN
    bar = Progress(len(cases), err, progress)
    failed = 0
    width = max(len(s.name) for s, _ in cases)
    started = time.perf_counter()
    for spec, dt in cases:
        label = f"{spec.name} {dtype_name(dt)}"
        bar.step(label)
        head = f"{spec.name:<{width}}  {dtype_name(dt):<8}"
        if spec.example is None:
            out.write(f"{head}  SKIP  no example arguments in the operator description\n")
            continue
        try:
            args, kwargs = spec.example(_seeded(seed, spec.name, dtype_name(dt)), dt)
            with use_backend(backend):
                actual = call(spec, *args, **kwargs)
            with use_backend("numpy"):
                golden = call(spec, *args, **kwargs)
        except Exception as exc:
            failed += 1
            out.write(f"{head}  ERROR {type(exc).__name__}: {str(exc).splitlines()[0]}\n")
            continue
        actual = actual if isinstance(actual, tuple) else (actual,)
        golden = golden if isinstance(golden, tuple) else (golden,)
        reports = [(o.name, testing.compare(a, g)) for o, a, g in zip(spec.outputs, actual, golden)
                   if a is not None and g is not None]
        ok = all(r.passed for _, r in reports)
        failed += not ok
        many = len(reports) > 1
        detail = " | ".join((f"{name}: " if many else "") + _short(r) for name, r in reports)
        out.write(f"{head}  {'PASS' if ok else 'FAIL'}  {detail}\n")
        out.flush()
    bar.close()
    err.write(f"compare: {len(cases)} case(s), {failed} failed, {time.perf_counter() - started:.1f} s "
              f"({backend} vs numpy reference, seed {seed})\n")
    return EXIT_FAILED if failed else EXIT_OK


def _short(r: Any) -> str:
    text = (f"{r.pass_ratio:.2%} of {r.count} within tol, max abs {r.max_abs_error:.3g}, "
            f"max rel {r.max_rel_error:.3g}")
    if not r.passed:
        text += f"; {r.reason}"
        if r.worst_index is not None:
            text += f"; worst {r.worst_index}: {r.worst_actual!r} vs {r.worst_golden!r}"
    return text


def run_gradcheck(ops: Optional[list[str]], seed: int, out: TextIO, err: TextIO) -> int:
    from .. import testing
    from ..backends import get_backend
    from ..ops import SPECS
    pairs = list(testing.GRAD_PAIRS.values())
    if ops:
        names = {n for p in pairs for n in (p.forward, p.backward)}
        unknown = [o for o in ops if o not in names]
        if unknown:
            err.write(f"gradcheck: unknown pair(s) {', '.join(unknown)}; choose from {', '.join(sorted(names))}\n")
            return EXIT_CANNOT_RUN
        pairs = [p for p in pairs if p.forward in ops or p.backward in ops]
    try:
        backend = get_backend()
    except Exception as exc:
        err.write(f"gradcheck: {exc}\n")
        return EXIT_CANNOT_RUN
    failed = ran = 0
    width = max(len(p.forward) for p in pairs)
    for pair in pairs:
        head = f"{pair.forward:<{width}}  {pair.method:<19}"
        if pair.forward not in SPECS or pair.backward not in SPECS:
            out.write(f"{head}  SKIP  not in this build\n")
            continue
        ran += 1
        try:
            report = testing.gradcheck(pair.forward, seed=seed)
        except Exception as exc:
            failed += 1
            out.write(f"{head}  ERROR {type(exc).__name__}: {str(exc).splitlines()[0]}\n")
            continue
        failed += not report.passed
        checks = ", ".join(f"{what}: rel err {e:.2e} (tol {t:.1e})" for what, e, t in report.checks)
        out.write(f"{head}  {'PASS' if report.passed else 'FAIL'}  {checks}\n")
    err.write(f"gradcheck: {ran} pair(s) on the {backend} backend, {failed} failed (seed {seed})\n")
    return EXIT_FAILED if failed else EXIT_OK


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m ascend_aclnn",
        description="Tools for ascend_aclnn: check the install, compare the NPU with the reference, "
                    "check backward kernels, time the reference.",
        epilog="Exit status: 0 all passed, 1 a check failed, 2 could not run.")
    sub = ap.add_subparsers(dest="command", metavar="{info,compare,gradcheck,bench}")
    sub.required = True
    info = sub.add_parser("info", help="the doctor: backend, CANN libraries, version, SoC, devices, "
                                       "where each function comes from",
                          description="Report the backend auto picks and why, the CANN libraries found (or "
                                      "every place searched), the ACL version, the SoC, the device count and "
                                      "which library provides each function. Exit status 1 when npu was "
                                      "asked for (ASCEND_ACLNN_BACKEND=npu) and cannot work.")
    info.add_argument("--json", action="store_true", help="print machine-readable JSON")
    cmp_ = sub.add_parser("compare", help="run every function on the NPU and on the NumPy reference and "
                                          "compare under the CANN precision standard",
                          description="Run each function on random inputs on the npu backend and on the NumPy "
                                      "reference; print one line per function and dtype. The standard: per-dtype "
                                      "rtol/atol, >= 99%% of elements within, a cap on the largest error, NaN/Inf "
                                      "at the same places (see ascend_aclnn.testing). Exit status 1 if any fails.")
    cmp_.add_argument("--ops", nargs="+", metavar="NAME", help="functions to compare (default: all)")
    cmp_.add_argument("--dtypes", nargs="+", metavar="DTYPE",
                      help="dtypes of the first input, e.g. float32 float16 bfloat16 (default: all each supports)")
    cmp_.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    cmp_.add_argument("--backend", choices=("npu", "numpy"), default="npu",
                      help="backend to check against the reference (default npu)")
    cmp_.add_argument("--deterministic", action="store_true", help="switch CANN's deterministic mode on first")
    cmp_.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    gc = sub.add_parser("gradcheck", help="check each backward kernel against its forward",
                        description="For each forward/backward pair: the adjoint identity <fwd(x), g> == "
                                    "<x, bwd(g)> for the linear pairs (max-pool with its mask fixed), central "
                                    "finite differences for group_norm_swish (dx, dgamma, dbeta); float32 on "
                                    "the active backend, reduced in float64. Exit status 1 if any fails.")
    gc.add_argument("--ops", nargs="+", metavar="NAME", help="pairs to check, by either function's name")
    gc.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gc.add_argument("--backend", choices=("auto", "npu", "numpy"), help="backend (default: ASCEND_ACLNN_BACKEND, "
                                                                        "else auto)")
    # bench parses its own options (ascend_aclnn.bench); listed here for --help
    sub.add_parser("bench", help="time the NumPy reference of every function against PyTorch CPU and the "
                                 "memory floor (python -m ascend_aclnn bench --help)", add_help=False)
    return ap


def main(argv: Optional[Sequence[str]] = None, out: TextIO = None, err: TextIO = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        from . import bench
        return bench.main(argv[1:])
    args = parser().parse_args(argv)
    if args.command == "info":
        from . import info
        return info.main(args.json, out)
    if args.command == "compare":
        if args.deterministic:
            from ..determinism import set_deterministic
            set_deterministic(True)
        return run_compare(_names(args.ops), _names(args.dtypes), args.seed, out, err,
                           progress=not args.no_progress, backend=args.backend)
    if args.backend:
        from ..backends import set_backend
        try:
            set_backend(args.backend)
        except Exception as exc:
            err.write(f"gradcheck: the {args.backend} backend cannot run here:\n{exc}\n")
            return EXIT_CANNOT_RUN
    return run_gradcheck(_names(args.ops), args.seed, out, err)

