"""The command line: ``python -m ascend_aclnn {info,compare,gradcheck,bench,selftest,simulator}``,
also installed as the ``ascend-aclnn`` command (``main`` is its entry point).

Every option, and every environment variable the package reads (``options.check_environment``),
is checked before any work starts; a bad one is a single line on stderr (``prog: error:
--option: what is wrong``, or the variable's name in place of the option) and exit status 2.

Exit status, for CI: 0 when everything passed, 1 when a check failed (for info: the
backend asked for cannot work here), 2 when the command could not run (a bad argument or
setting, or the backend to check is unavailable).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TextIO

import numpy as np

if TYPE_CHECKING:
    from ..testing import GradPair

from .options import (EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK, ArgumentParser, UsageError, check_environment,
                      names, refuse, run_command, seed_type, select_dtypes, select_ops, shape_type)
from .progress import Progress

__all__ = ["main", "parser", "EXIT_OK", "EXIT_FAILED", "EXIT_CANNOT_RUN", "Progress"]

PROG = "python -m ascend_aclnn"
COMMANDS = ("info", "compare", "gradcheck", "bench", "selftest", "simulator")


# ---------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------

class _Job:
    """One line of compare's output: a function on arguments, in one dtype."""

    def __init__(self, spec: Any, dtype: np.dtype[Any], label: str, make: Callable[[], tuple[Any, ...]],
                 execute: Optional[Callable[[str], list[tuple[str, Any, Any]]]] = None):
        self.spec, self.dtype, self.label, self.make = spec, dtype, label, make
        # an aclnn operator's case (raw_compare): (output name, actual, golden) per written parameter
        self.execute = execute


def _backend_line(prog: str, option: Optional[str], name: str, exc: BaseException, chosen: str = "") -> UsageError:
    """The refusal of a backend that cannot run: ``option`` is what asked for it (None: the
    command's default, ``chosen`` saying so), never an option the user did not pass."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    hint = (f"; --backend numpy runs without an NPU, and `{PROG} info` says what was searched"
            if name in ("npu", "auto") else "")
    message = f"the {name} backend{f' ({chosen})' if chosen else ''} cannot run here: {first}{hint}"
    return UsageError(f"{prog}: error: {message}") if option is None else refuse(prog, option, message)


def _compare_backend(args: argparse.Namespace) -> tuple[str, Optional[str], str]:
    """compare's backend, what asked for it (an option or variable to name in an error, None
    for compare's default) and, for the default, why: --backend, else ASCEND_ACLNN_BACKEND
    when it names a backend, else npu. The variable's auto would fall back to numpy where npu
    cannot run, comparing the reference with itself unasked: compare checks npu then."""
    from ..backends import ENV_VAR
    if args.backend is not None:
        return args.backend, "--backend", ""
    setting = os.environ.get(ENV_VAR)
    if setting in ("npu", "numpy"):
        return setting, f"{ENV_VAR}={setting}", ""
    why = f"{ENV_VAR}=auto leaves the choice to compare" if setting == "auto" else f"{ENV_VAR} is not set"
    return "npu", None, f"compare's default; {why}"


def _json_option(prog: str, option: str, text: Optional[str], kind: type) -> Any:
    from .cases import CaseError, loads
    if text is None:
        return None
    try:
        value = loads(text)
    except CaseError as exc:  # not JSON, nested too deeply, an integer too long
        shown = text if len(text) <= 80 else text[:60] + " ... " + text[-15:]
        raise refuse(prog, option, f"{exc}: {shown!r}") from None
    if not isinstance(value, kind):
        want = "a JSON list, e.g. '[{\"tensor\": [2, 3, 8]}, [16]]'" if kind is list else \
            "a JSON object, e.g. '{\"padding\": [1, 1, 1, 1]}'"
        raise refuse(prog, option, f"expected {want}, got {text!r}")
    return value


def _compare_jobs(args: argparse.Namespace, prog: str) -> list[_Job]:
    """Every check of compare's options and cases, before anything runs."""
    from ..ops import REGISTRY
    from ..tensors import dtype_name
    from . import cases as user_cases
    ops_given, dtypes_given = names(args.ops), names(args.dtypes)
    custom = args.shape is not None or args.args is not None or args.kwargs is not None
    if args.op is not None:
        return _raw_jobs(args, prog)
    if args.cases is not None:
        for option, value in (("--ops", args.ops), ("--dtypes", args.dtypes), ("--shape", args.shape),
                              ("--args", args.args), ("--kwargs", args.kwargs)):
            if value is not None:
                raise refuse(prog, option, "cannot be combined with --cases (give op and dtype in each case)")
        return _file_jobs(args, prog)
    ops = select_ops(prog, "--ops", ops_given, [s.name for s in REGISTRY])
    per_op = select_dtypes(prog, "--dtypes", dtypes_given, ops)
    if not custom:
        jobs = []
        for spec in REGISTRY:  # registry order, whatever order --ops named them in
            for dt in per_op.get(spec.name, ()):
                make = _example_maker(spec, dt, args.seed)
                jobs.append(_Job(spec, dt, spec.name, make))
        return jobs
    option = next(o for o, v in (("--shape", args.shape), ("--args", args.args), ("--kwargs", args.kwargs))
                  if v is not None)
    if ops_given is None or len(ops) != 1:
        raise refuse(prog, option, f"needs exactly one function, named with --ops NAME (got "
                                   f"{'none' if ops_given is None else ', '.join(ops)})")
    spec = REGISTRY[ops[0]]
    arglist, kwargs = _given_arguments(args, prog)
    jobs = []
    for dt in per_op[spec.name]:
        try:
            case = user_cases.parse_case({"op": spec.name, "dtype": dtype_name(dt), "args": arglist,
                                          "kwargs": kwargs})
            user_cases.check(case, user_cases.seeded(args.seed, spec.name, dtype_name(dt)))
        except user_cases.CaseError as exc:
            raise refuse(prog, _cli_field(exc.field, spec, args.shape is not None, arglist, kwargs), str(exc)) \
                from None
        jobs.append(_Job(spec, dt, case.label(), _case_maker(case, args.seed, spec.name, dtype_name(dt))))
    return jobs


def _given_arguments(args: argparse.Namespace, prog: str) -> tuple[list[Any], dict[str, Any]]:
    """The call that --args / --kwargs / --shape spell (--shape is the first tensor's), as
    compare --ops NAME and compare --op NAME both take it."""
    arglist = _json_option(prog, "--args", args.args, list) or []
    kwargs = _json_option(prog, "--kwargs", args.kwargs, dict) or {}
    if args.shape is not None:
        if arglist:
            raise refuse(prog, "--shape", "gives the first argument, which --args gives too; use one of them")
        arglist = [{"tensor": list(args.shape)}]
    return arglist, kwargs


def _raw_jobs(args: argparse.Namespace, prog: str) -> list[_Job]:
    """compare --op NAME: one aclnn operator against its CPU reference, once per --dtypes entry."""
    from . import cases as user_cases
    from .raw_compare import parse_raw_case, raw_job_parts
    for option, value in (("--ops", args.ops), ("--cases", args.cases)):
        if value is not None:
            raise refuse(prog, option, "cannot be combined with --op (one aclnn operator; in a --cases file, "
                                       'give it as "op")')
    if args.shape is None and args.args is None and args.kwargs is None:
        raise refuse(prog, "--op", "an aclnn operator has no example arguments: give its parameters with --args "
                                   "(header order) and/or --kwargs (header names), or --shape for the first tensor")
    arglist, kwargs = _given_arguments(args, prog)
    jobs = []
    for dt in names(args.dtypes) or ["float32"]:
        try:
            op = args.op if args.op.startswith("acl") else "aclnn" + args.op  # --op Softmax is aclnnSoftmax
            case = parse_raw_case({"op": op, "dtype": dt, "args": arglist, "kwargs": kwargs})
        except user_cases.CaseError as exc:
            raise refuse(prog, _raw_field(exc.field, args.shape is not None), str(exc)) from None
        jobs.append(_Job(case.operator.spec, case.dtype, case.label(), lambda: ((), {}),
                         raw_job_parts(case, args.seed, case.op, dt)))
    return jobs


def _raw_field(field: str, shape: bool) -> str:
    """The option a raw case's error is about: --op, --dtypes, --shape, --args[i]..., --kwargs.name..."""
    if field in ("op", "dtype"):
        return {"op": "--op", "dtype": "--dtypes"}[field]
    return "--shape" + field[len("args[0]"):] if shape and field.startswith("args[0]") else "--" + field


def _cli_field(field: str, spec: Any, shape: bool, arglist: list[Any], kwargs: dict[str, Any]) -> str:
    """Which option a case error is about: --shape, --args[i]..., --kwargs.name..., or for
    a parameter the operator refused, the option that gave it (else the example did)."""
    params = [p.name for p in spec.params]
    if field.startswith(("args", "kwargs")):
        return "--shape" if shape and field.startswith("args[0]") else "--" + field
    if field in params:
        i = params.index(field)
        if shape and i == 0:
            return f"--shape ({field})"
        if i < len(arglist):
            return f"--args[{i}] ({field})"
        if field in kwargs:
            return f"--kwargs.{field}"
        return f"{field} (the example's value, which you may override with --kwargs)"
    return field


def _file_jobs(args: argparse.Namespace, prog: str) -> list[_Job]:
    from . import cases as user_cases
    from .raw_compare import is_raw_name, parse_raw_case, raw_job_parts
    option, entries = user_cases.command_line_file(args.cases, prog)
    jobs = []
    for number, obj, head in entries:
        if is_raw_name(obj.get("op") if isinstance(obj, dict) else None):
            # an aclnn operator, against its CPU reference
            try:
                raw = parse_raw_case(obj, number=number)
            except user_cases.CaseError as exc:
                raise refuse(prog, option, f"{head}: {exc.field + ': ' if exc.field else ''}{exc}") from None
            jobs.append(_Job(raw.operator.spec, raw.dtype, raw.label(), lambda: ((), {}),
                             raw_job_parts(raw, args.seed, "case", str(number))))
            continue
        try:
            case = user_cases.parse_case(obj, number=number)
            user_cases.check(case, user_cases.seeded(args.seed, "case", str(number)))
        except user_cases.CaseError as exc:
            raise refuse(prog, option, f"{head}: {exc.field + ': ' if exc.field else ''}{exc}") from None
        jobs.append(_Job(case.spec, case.dtype, case.label(),
                         _case_maker(case, args.seed, "case", str(number))))
    return jobs


def _example_maker(spec: Any, dt: np.dtype[Any], seed: int) -> Callable[[], tuple[Any, ...]]:
    from ..tensors import dtype_name
    from .cases import seeded

    def make() -> tuple[Any, ...]:
        if spec.example is None:
            raise LookupError("no example arguments in the operator description")
        a, k = spec.example(seeded(seed, spec.name, dtype_name(dt)), dt)
        return a, k
    return make


def _case_maker(case: Any, seed: int, *labels: str) -> Callable[[], tuple[Any, ...]]:
    from .cases import seeded
    return lambda: (case.build(seeded(seed, *labels)), {})


def run_compare(jobs: list[_Job], backend: str, seed: int, out: TextIO, err: TextIO, progress: bool = True) -> int:
    """Each job on ``backend`` and on the NumPy reference, every output compared under the
    precision standard (ascend_aclnn.testing); one line per job."""
    from .. import testing
    from ..api import call
    from ..backends import use_backend
    from ..backends.numpy import plain_reference
    from ..tensors import dtype_name
    from .raw_compare import StatCheck  # a sampled operator's statistic, in place of a golden value
    bar = Progress(len(jobs), err, progress)
    failed = 0
    width = max(len(j.label) for j in jobs)
    # as wide as the longest dtype named (complex128): every row's verdict in one column
    dtype_width = max(8, *(len(dtype_name(j.dtype)) for j in jobs))
    started = time.perf_counter()
    for job in jobs:
        spec, dt = job.spec, job.dtype
        bar.step(f"{job.label} {dtype_name(dt)}")
        head = f"{job.label:<{width}}  {dtype_name(dt):<{dtype_width}}"
        try:
            args, kwargs = job.make()
        except LookupError as exc:
            out.write(f"{head}  SKIP  {exc}\n")
            continue
        try:
            if job.execute is not None:  # an aclnn operator against its CPU reference
                pairs = job.execute(backend)
            else:
                with use_backend(backend):
                    actual = call(spec, *args, **kwargs)
                with use_backend("numpy"), plain_reference():  # the golden values: the plain reference
                    golden = call(spec, *args, **kwargs)
                actual = actual if isinstance(actual, tuple) else (actual,)
                golden = golden if isinstance(golden, tuple) else (golden,)
                pairs = [(o.name, a, g) for o, a, g in zip(spec.outputs, actual, golden)]
            reports = [(name, g.report() if isinstance(g, StatCheck) else testing.compare(a, g))
                       for name, a, g in pairs if a is not None and g is not None]
        except Exception as exc:  # noqa: BLE001  the case's failure, on its own line
            failed += 1
            out.write(f"{head}  ERROR {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}\n")
            out.flush()
            continue
        ok = all(r.passed for _, r in reports)
        failed += not ok
        many = len(reports) > 1
        detail = " | ".join((f"{name}: " if many else "") + _short(r) for name, r in reports)
        if not ok and backend == "npu" and spec.name == "group_norm_swish_grad":
            detail += _other_swish_grad_formula(spec, args, kwargs, actual)
        out.write(f"{head}  {'PASS' if ok else 'FAIL'}  {detail}\n")
        out.flush()
    bar.close()
    err.flush()
    # the verdict belongs with the rows it sums up (stdout, e.g. a CI log); stderr is progress
    out.write(f"compare: {len(jobs)} case(s), {failed} failed, {time.perf_counter() - started:.1f} s "
              f"({backend} vs numpy reference, seed {seed})\n")
    out.flush()
    return EXIT_FAILED if failed else EXIT_OK


def _other_swish_grad_formula(spec: Any, args: tuple[Any, ...], kwargs: dict[str, Any], actual: tuple[Any, ...]) -> str:
    """GroupNormSwishGrad's formula depends on the CANN release (the kernels before 9.1.0
    leave swishScale out of the second term): when the NPU's result fails against the
    formula expected but matches the other, say so, so that a user learns their kernel."""
    from .. import testing
    from ..api import call
    from ..backends import use_backend
    from ..backends.numpy import plain_reference
    from ..ops.group_norm import CANN_VERSION_ENV, FORMULA_TEXT, swish_grad_formula, use_swish_grad_formula
    other = "8.1" if swish_grad_formula().formula == "corrected" else "corrected"
    with use_backend("numpy"), plain_reference(), use_swish_grad_formula(other):
        golden = call(spec, *args, **kwargs)
    if all(testing.compare(a, g).passed for a, g in zip(actual, golden) if a is not None and g is not None):
        return (f"; matches the {other} formula ({FORMULA_TEXT[other]}): this CANN's kernel is "
                f"{'older' if other == '8.1' else 'newer'} than expected (set {CANN_VERSION_ENV} to its release)")
    return ""


def _short(r: Any) -> str:
    text = (f"{r.pass_ratio:.2%} of {r.count} within tol, max abs {r.max_abs_error:.3g}, "
            f"max rel {r.max_rel_error:.3g}")
    if not r.passed:
        text += f"; {r.reason}"
        if r.worst_index is not None:
            text += f"; worst {r.worst_index}: {r.worst_actual!r} vs {r.worst_golden!r}"
    return text


def _compare(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    from ..backends import use_backend
    jobs = _compare_jobs(args, prog)
    backend, asked_by, chosen = _compare_backend(args)
    try:
        with use_backend(backend):
            pass
    except Exception as exc:  # noqa: BLE001  CannLoadError, or CANN failing to start
        raise _backend_line(prog, asked_by, backend, exc, chosen) from None
    if args.deterministic:
        from ..determinism import set_deterministic
        set_deterministic(True)
    return run_compare(jobs, backend, args.seed, out, err, progress=not args.no_progress)


# ---------------------------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------------------------

def _gradcheck(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    from .. import testing
    from ..backends import ENV_VAR, get_backend, use_backend
    pairs = list(testing.GRAD_PAIRS.values())
    known = sorted({n for p in pairs for n in (p.forward, p.backward)})
    ops = names(args.ops)
    if ops is not None:
        if not ops:
            raise refuse(prog, "--ops", f"expected at least one function name; choose from {', '.join(known)}")
        unknown = [o for o in ops if o not in known]
        if unknown:
            raise refuse(prog, "--ops", f"unknown pair(s) {', '.join(unknown)}; choose from {', '.join(known)}")
        pairs = [p for p in pairs if p.forward in ops or p.backward in ops]
    with contextlib.ExitStack() as scope:  # the backend is the command's, not the process's
        if args.backend:
            try:
                scope.enter_context(use_backend(args.backend))
            except Exception as exc:  # noqa: BLE001
                raise _backend_line(prog, "--backend", args.backend, exc) from None
        try:
            backend = get_backend()
        except ValueError as exc:  # ASCEND_ACLNN_BACKEND holds something else than auto, npu, numpy
            raise refuse(prog, ENV_VAR, str(exc).split(": ", 1)[-1]) from None
        except Exception as exc:  # noqa: BLE001  npu asked for by the variable, unavailable
            setting = os.environ.get(ENV_VAR, "auto")
            raise _backend_line(prog, f"{ENV_VAR}={setting}", setting, exc) from None
        return _gradcheck_pairs(pairs, backend, args.seed, out)


def _gradcheck_pairs(pairs: "list[GradPair]", backend: str, seed: int, out: TextIO) -> int:
    from .. import testing
    from ..ops import REGISTRY
    from ..ops.group_norm import SwishGradFormulaWarning
    failed = ran = 0
    width = max(len(p.forward) for p in pairs)
    for pair in pairs:
        head = f"{pair.forward:<{width}}  {pair.method:<19}"
        if pair.forward not in REGISTRY or pair.backward not in REGISTRY:
            out.write(f"{head}  SKIP  not in this build\n")
            continue
        ran += 1
        try:
            with warnings.catch_warnings():  # a FAIL line says why itself (report.note)
                warnings.simplefilter("ignore", SwishGradFormulaWarning)
                report = testing.gradcheck(pair.forward, seed=seed)
        except Exception as exc:  # noqa: BLE001  the pair's failure, on its own line
            failed += 1
            out.write(f"{head}  ERROR {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}\n")
            continue
        failed += not report.passed
        checks = ", ".join(f"{what}: rel err {e:.2e} (tol {t:.1e})" for what, e, t in report.checks)
        note = f"; {report.note}" if report.note else ""
        out.write(f"{head}  {'PASS' if report.passed else 'FAIL'}  {checks}{note}\n")
    # the verdict with the lines it sums up, as compare's: a redirected report keeps it
    out.write(f"gradcheck: {ran} pair(s) on the {backend} backend, {failed} failed (seed {seed})\n")
    return EXIT_FAILED if failed else EXIT_OK


# ---------------------------------------------------------------------------------------------
# info, bench
# ---------------------------------------------------------------------------------------------

def _info(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    from . import info
    return info.main(args.json, out, err, prog, abi=args.check_abi)


def _bench(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    from . import bench
    return bench.run(args, out, err, prog)


def _selftest(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    from . import selftest
    return selftest.run(args, out, err, prog)


def _simulator(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    from . import simulator
    return simulator.run(args, out, err, prog)


RUNNERS = {"info": _info, "compare": _compare, "gradcheck": _gradcheck, "bench": _bench, "selftest": _selftest,
           "simulator": _simulator}


# ---------------------------------------------------------------------------------------------
# the parser
# ---------------------------------------------------------------------------------------------

COMPARE_DESCRIPTION = """\
Run each function on the npu backend (or --backend numpy, or ASCEND_ACLNN_BACKEND=numpy) and
on the NumPy reference, and compare every output under the CANN precision standard:
per-dtype rtol/atol, >= 99% of the elements within, a cap on the largest error, NaN/Inf at
the same places (see ascend_aclnn.testing). One line per function and dtype, then the
verdict (cases, failures); progress on stderr; exit status 1 if any fails.

By default each function runs on its description's example arguments (small, seeded random
inputs). For your own shapes, name one function and override the pieces you need:
  compare --ops replication_pad2d --shape 8,64,56,56 --kwargs '{"padding": [3, 3, 3, 3]}'
  compare --ops upsample_nearest_exact1d --args '[{"tensor": [8, 64, 100]}, [256]]'
or put many cases in a JSON file: compare --cases FILE."""

COMPARE_EPILOG = """\
user cases (--args, --kwargs, --cases):
  A case file holds a list of objects {"op": NAME, "dtype": DTYPE, "args": [...],
  "kwargs": {...}, "name": LABEL}; only "op" is required. args gives the first len(args)
  arguments in the function's order, kwargs arguments by name; every argument not given
  keeps the example's value. Values are passed as written (numbers, lists, strings,
  true/false, null) except these objects:
    {"tensor": [8, 64, 56, 56]}   seeded random values of that shape; optional "fill":
        randn (default), rand, randint, arange, zeros, ones, full (with "value", a number
        or "nan"/"inf"/"-inf"); "low"/"high" for rand and randint; "dtype" (default: the
        case's dtype when the parameter takes it, else the parameter's first dtype)
    {"values": [[1, 2], [3, 4]]}  exactly these values (optional "dtype")
    {"output_of": {"op": NAME, "args": [...], "kwargs": {...}}, "index": 1}
        output 1 of another call, computed on the NumPy reference (e.g. the mask of
        max_pool2d_with_mask for its backward)
  An aclnn operator (--op aclnnSoftmax, or a case whose "op" is "aclnnSoftmax") is compared
  with its CPU reference (ascend_aclnn.aclnn.reference(name) says which). It has no example:
  give every input, in the header's order (--args) or by the header's names (--kwargs),
  null for a NULL pointer, a dtype by name ("float32"). An output not given is allocated
  from the CPU reference's result (shape and dtype); --dtypes sets the tensors' dtype.
    compare --op aclnnSoftmax --shape 2,3,5 --kwargs '{"dim": 1}'
  Every case is checked (with the operator's own argument checks) before anything runs;
  a bad one stops the command with one line naming the case and the field (exit 2).
  Full description: help(ascend_aclnn.tools.cases).
"""


def parser(prog: str = PROG) -> ArgumentParser:
    from .._version import __version__
    from . import bench, selftest, simulator
    ap = ArgumentParser(
        prog=prog,
        description="Tools for ascend_aclnn: check the install, compare the NPU with the reference, "
                    "check backward kernels, time the reference, build the CANN simulator (a CPU model of "
                    "CANN for testing the npu path without an NPU).",
        epilog="Exit status: 0 all passed, 1 a check failed, 2 could not run (a bad argument or setting).")
    ap.add_argument("--version", action="version", version=f"ascend_aclnn {__version__}",
                    help="print the version and exit")
    sub = ap.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")
    sub.required = True
    info = sub.add_parser("info", help="the doctor: backend, CANN libraries and version, SoC, devices, "
                                       "where each function comes from",
                          description="Report the backend auto picks and why, the CANN libraries found (or "
                                      "every place searched), the CANN and ACL versions, the SoC, the device "
                                      "count and which library provides each function. Exit status 1 when "
                                      "the backend asked for (ASCEND_ACLNN_BACKEND=npu) cannot work here, 2 "
                                      "when ASCEND_ACLNN_BACKEND is not auto, npu or numpy.")
    info.add_argument("--json", action="store_true", help="print machine-readable JSON")
    info.add_argument("--check-abi", action="store_true",
                      help="compare each function's ctypes prototype with the installed aclnn header; exit 1 "
                           "naming the operators that differ, 2 when no header is installed")

    cmp_ = sub.add_parser("compare", help="run every function on the NPU and on the NumPy reference and "
                                          "compare under the CANN precision standard",
                          description=COMPARE_DESCRIPTION, epilog=COMPARE_EPILOG,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    cmp_.add_argument("--op", metavar="ACLNN_NAME",
                      help="one aclnn operator (aclnnSoftmax) against its CPU reference; its parameters with "
                           "--args/--kwargs/--shape (format below)")
    cmp_.add_argument("--ops", nargs="+", action="extend", metavar="NAME", help="functions to compare (default: all)")
    cmp_.add_argument("--dtypes", nargs="+", action="extend", metavar="DTYPE",
                      help="dtypes of the first input, e.g. float32 float16 bfloat16; every function "
                           "selected must support each (default: all each supports)")
    cmp_.add_argument("--shape", type=shape_type, metavar="N,C,...",
                      help="the first argument's shape, e.g. 8,64,56,56 (with one --ops NAME)")
    cmp_.add_argument("--args", metavar="JSON", help="the first arguments, as a JSON list (with one --ops NAME; "
                                                     "format below)")
    cmp_.add_argument("--kwargs", metavar="JSON", help="arguments by name, as a JSON object (with one --ops NAME)")
    cmp_.add_argument("--cases", metavar="FILE", help="a JSON file of cases (format below)")
    cmp_.add_argument("--seed", type=seed_type, default=0, help="random seed, an integer >= 0 (default 0)")
    cmp_.add_argument("--backend", choices=("npu", "numpy"),
                      help="backend to check against the reference (default: ASCEND_ACLNN_BACKEND when it is "
                           "npu or numpy, else npu)")
    cmp_.add_argument("--deterministic", action="store_true", help="switch CANN's deterministic mode on first")
    cmp_.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    gc = sub.add_parser("gradcheck", help="check each backward kernel against its forward",
                        description="For each forward/backward pair: the adjoint identity <fwd(x), g> == "
                                    "<x, bwd(g)> for the linear pairs (max-pool with its mask fixed), central "
                                    "finite differences for group_norm_swish (dx, dgamma, dbeta; at "
                                    "swish_scale 1 and 2, which the kernels of CANN releases before 9.1.0 "
                                    "fail: see docs/npu-differences.md); float32 on the active backend, reduced in "
                                    "float64. Exit status 1 if any fails.")
    gc.add_argument("--ops", nargs="+", action="extend", metavar="NAME", help="pairs to check, by either function's name")
    gc.add_argument("--seed", type=seed_type, default=0, help="random seed, an integer >= 0 (default 0)")
    gc.add_argument("--backend", choices=("auto", "npu", "numpy"), help="backend (default: ASCEND_ACLNN_BACKEND, "
                                                                        "else auto)")
    bench.add_arguments(sub.add_parser("bench", help="time the NumPy reference of every function against "
                                                     "PyTorch CPU and the memory floor, and the npu path's "
                                                     "host overhead",
                                       description=bench.DESCRIPTION))
    selftest.add_arguments(sub.add_parser("selftest", help="on an Atlas host: settle every behaviour the docs mark "
                                                           "unconfirmed, and write a report for a bug",
                                          description=selftest.DESCRIPTION, epilog=selftest.EPILOG))
    simulator.add_arguments(sub.add_parser("simulator", help="build the CANN simulator (a CPU model of CANN's C "
                                                             "ABI, not an NPU) to run the npu path without an NPU; "
                                                             "its docs",
                                           description=simulator.DESCRIPTION,
                                           formatter_class=argparse.RawDescriptionHelpFormatter), prog)
    return ap


def _prog(argv: Optional[Sequence[str]]) -> str:
    """How to call us, for messages: the console script's name, or python -m ascend_aclnn."""
    if argv is not None or not sys.argv or not sys.argv[0]:
        return PROG
    name = os.path.basename(sys.argv[0])
    return PROG if name in ("__main__.py", "-c", "-m") or name.endswith(".py") else name


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """The command line; returns the exit status (the ``ascend-aclnn`` console script passes
    it to sys.exit). ``argv`` defaults to sys.argv[1:]."""
    out, err = out or sys.stdout, err or sys.stderr
    prog = _prog(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    def run(args: Any) -> int:
        check_environment(f"{prog} {args.command}")
        return RUNNERS[args.command](args, out, err, f"{prog} {args.command}")
    return run_command(parser(prog), argv, out, err, prog, run)
