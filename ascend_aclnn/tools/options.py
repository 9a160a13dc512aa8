"""Argument handling shared by the subcommands: every option is checked before any work,
and a bad one is one line on stderr and exit status 2.

``ArgumentParser`` raises ``UsageError`` instead of printing the usage and exiting, so the
command line prints the one line (``prog: error: message``) and returns 2 from ``main``.
The ``*_type`` functions are argparse ``type=`` converters; the ``select_*`` functions check
the names the user gave against the operators this build has (``ascend_aclnn.ops.REGISTRY``).
"""
from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import Any, Callable, Iterable, NoReturn, Optional, Sequence, TextIO

import numpy as np

EXIT_OK, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2


class UsageError(Exception):
    """A bad argument or option value: ``main`` prints ``str(error)`` (one line) and exits 2."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))  # one line, whatever the message held


class Exit(Exception):
    """argparse finished on its own (``--help``, ``--version``): exit with this status."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad argument raises UsageError("prog: error: message") and the end of
    --help raises Exit: nothing here prints a usage block or calls sys.exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        if message:
            raise UsageError(message.strip())
        raise Exit(status)


def refuse(prog: str, option: str, message: str) -> UsageError:
    """The error for an option whose value was parsed but cannot be used."""
    return UsageError(f"{prog}: error: {option}: {message}")


def check_environment(prog: str) -> None:
    """Every environment variable the package reads whose value can be wrong, checked by the
    package's own rule before any work (UsageError naming the variable and the value): a
    command must not run for minutes and then fail, or report each case as an error, on a
    setting it could have refused at once. The path variables (ASCEND_HOME_PATH, ...) have no
    wrong value: one that leads nowhere means no CANN, which ``info`` reports."""
    from ..backends import ENV_VAR as BACKEND_ENV, NAMES
    from ..backends.numpy import _parallel
    from ..ops.group_norm import CANN_VERSION_ENV, has_swish_grad_fix
    backend = os.environ.get(BACKEND_ENV)
    if backend is not None and backend not in NAMES:
        raise refuse(prog, BACKEND_ENV, f"expected one of {', '.join(NAMES)}, got {backend!r}")
    release = os.environ.get(CANN_VERSION_ENV, "").strip()
    if release:
        try:
            has_swish_grad_fix(release)
        except ValueError:
            raise refuse(prog, CANN_VERSION_ENV, f"{release!r} is not a CANN release (expected e.g. 8.1.RC1 or "
                                                 "9.1.0)") from None
    try:
        _parallel.threads()
    except ValueError:
        raise refuse(prog, _parallel.ENV, f"expected a positive integer, got "
                                          f"{os.environ.get(_parallel.ENV, '').strip()!r}") from None


# ---- argparse type= converters (their ArgumentTypeError text follows "argument --x: ") --------

def seed_type(text: str) -> int:
    """A random seed: an integer >= 0 (what NumPy's generators accept)."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def positive_int_type(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def shape_type(text: str) -> tuple[int, ...]:
    """A shape: comma-separated integers >= 0, e.g. 8,64,56,56 (or [8, 64, 56, 56])."""
    parts = [p for p in text.strip().strip("[]()").replace(" ", "").split(",") if p != ""]
    try:
        dims = tuple(int(p, 10) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 8,64,56,56, "
                                         f"got {text!r}") from None
    if not dims or any(d < 0 for d in dims):
        raise argparse.ArgumentTypeError(f"expected one or more integers >= 0 such as 8,64,56,56, got {text!r}")
    return dims


def names(values: Optional[Sequence[str]]) -> Optional[list[str]]:
    """Names given as separate words and/or comma-separated (``--ops a,b c``), duplicates
    dropped, order kept; None when the option was not given ([] when given empty)."""
    if values is None:
        return None
    out: list[str] = []
    for item in values:
        for v in item.replace(",", " ").split():
            if v not in out:
                out.append(v)
    return out


def _listing(items: Iterable[str]) -> str:
    return ", ".join(items)


# ---- selections against the registry ---------------------------------------------------------

def select_ops(prog: str, option: str, given: Optional[list[str]], known: Sequence[str]) -> list[str]:
    """The names given (each must be known), or every known name when the option was not given."""
    if given is None:
        return list(known)
    if not given:
        raise refuse(prog, option, f"expected at least one function name; choose from {_listing(known)}")
    unknown = [n for n in given if n not in known]
    if unknown:
        raise refuse(prog, option, f"unknown function(s) {_listing(unknown)}; choose from {_listing(known)}")
    return list(given)


def op_dtypes(spec: Any) -> list[np.dtype[Any]]:
    """The dtypes an operator runs in: those of its first tensor parameter."""
    return [np.dtype(d) for d in (getattr(spec.params[0], "dtypes", ()) or ())]


def all_dtype_names() -> list[str]:
    """Every dtype name some operator of this build supports, in registry order."""
    from ..ops import REGISTRY
    from ..tensors import dtype_name
    seen: list[str] = []
    for spec in REGISTRY:
        for dt in op_dtypes(spec):
            if dtype_name(dt) not in seen:
                seen.append(dtype_name(dt))
    return seen


def parse_dtype(name: str) -> Optional[np.dtype[Any]]:
    """The dtype of a name some operator supports ('bfloat16', 'float16', ...), else None."""
    from ..ops import REGISTRY
    from ..tensors import dtype_name
    for spec in REGISTRY:
        for dt in op_dtypes(spec):
            if dtype_name(dt) == name:
                return dt
    return None


def select_dtypes(prog: str, option: str, given: Optional[list[str]], ops: Sequence[str]
                  ) -> dict[str, list[np.dtype[Any]]]:
    """Per selected operator, the dtypes to run: every dtype it supports when the option was
    not given; otherwise exactly the dtypes given, each of which every selected operator
    must support (no silent skipping: the user gets the rows asked for, or a refusal)."""
    from ..ops import REGISTRY
    from ..tensors import dtype_name
    if given is None:
        return {op: op_dtypes(REGISTRY[op]) for op in ops}
    known = all_dtype_names()
    if not given:
        raise refuse(prog, option, f"expected at least one dtype; choose from {_listing(known)}")
    bad = [n for n in given if n not in known]
    if bad:
        raise refuse(prog, option, f"{_listing(repr(b) for b in bad)}: not a dtype any function supports; "
                                   f"choose from {_listing(known)}")
    chosen = [d for d in map(parse_dtype, given) if d is not None]  # every name is known (checked above)
    for op in ops:
        supported = op_dtypes(REGISTRY[op])
        missing = [dtype_name(d) for d in chosen if d not in supported]
        if missing:
            raise refuse(prog, option, f"{op} does not support {_listing(missing)} (it supports "
                                       f"{_listing(dtype_name(d) for d in supported)}); choose the functions "
                                       "with --ops")
    return {op: list(chosen) for op in ops}


def writable_file(prog: str, option: str, path: str) -> Path:
    """Check up front that ``path`` can be written (created or replaced), without leaving
    anything behind: a run must not measure for minutes and then fail to save."""
    p = Path(path)
    if p.is_dir():
        raise refuse(prog, option, f"{path} is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise refuse(prog, option, f"cannot write {path}: no such directory {parent}")
    existed = p.exists()
    try:
        with open(p, "a"):
            pass
    except OSError as exc:
        raise refuse(prog, option, f"cannot write {path}: {exc.strerror or exc}") from None
    if not existed:
        try:
            os.unlink(p)
        except OSError:
            pass
    return p


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str], out: TextIO, err: TextIO, prog: str,
                run: Callable[[argparse.Namespace], int]) -> int:
    """Parse argv (--help and --version print to out) and run: the exit status, with a bad
    option or setting one line on err (EXIT_CANNOT_RUN). What every command's main shares."""
    try:
        with contextlib.redirect_stdout(out):
            args = parser.parse_args(argv)
        return run(args)
    except UsageError as exc:
        out.flush()
        err.write(f"{exc}\n")
        return EXIT_CANNOT_RUN
    except Exit as exc:
        return exc.status
    except KeyboardInterrupt:
        err.write(f"{prog}: interrupted\n")
        return 130
