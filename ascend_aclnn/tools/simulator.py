"""``ascend-aclnn simulator {build,docs}``: the CANN simulator, from an installed package.

The simulator is a CPU model of CANN's C ABI, for testing the npu path without an NPU. Its
sources are ``native/`` in a checkout; pyproject.toml ships them inside the package as
``ascend_aclnn/_native`` (C sources, headers, ``build.py`` and ``README.md``), so a pip
install can build it. ``build`` compiles them with the system C compiler into a prefix laid
out as a CANN install and prints the environment line that points the binding at it;
``docs`` prints the simulator's README. ``bench --npu`` builds it the same way, once per
source version, into a per-user cache (cached_build()).

The build script is loaded by path, and only by these functions: importing ascend_aclnn,
or building the command line's parser, never loads it. Every argument is checked before
anything is compiled or created (one line, exit status 2); a failing compiler is exit 1
with its output.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Mapping, Optional, TextIO

from .options import EXIT_FAILED, EXIT_OK, UsageError, refuse

# The build script's choices and defaults, for --help without loading it; the command checks
# them against the script's own tables (tests/test_simulator_cli.py holds them equal).
LAYOUTS = ("cann8", "split")
PROFILES = ("8.1.RC1", "9.2.0")
NEWEST = "9.2.0"
DEFAULT_VENDOR = "aclsim_custom"
VERSION_ENV = "ASCEND_SIM_CANN_VERSION"
# Variables a sourced CANN set_env.sh leaves behind that would make the loader take vendor or
# custom operator libraries from that CANN instead of the simulator's prefix.
FOREIGN_OPP_VARS = ("ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH")


class Unavailable(Exception):
    """The simulator cannot be built here: its sources are not installed, or there is no C compiler."""


def sources() -> Optional[Path]:
    """The directory of the simulator's build.py: the installed copy (ascend_aclnn/_native),
    else a checkout's native/ (a source tree or an editable install); None without either."""
    package = Path(__file__).resolve().parents[1]
    return next((d for d in (package / "_native", package.parent / "native") if (d / "build.py").is_file()), None)


_script: list[ModuleType] = []


def build_script() -> ModuleType:
    """The simulator's build.py, loaded once by path (it is no module of the package)."""
    if _script:
        return _script[0]
    where = sources()
    if where is None:
        raise Unavailable("the simulator's sources are not installed (no ascend_aclnn/_native/build.py, and no "
                          "native/build.py of a checkout): reinstall ascend-aclnn")
    spec = importlib.util.spec_from_file_location("ascend_aclnn_simulator_build", where / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _script.append(module)
    return module


def compiler(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The C compiler command the build runs: $CC (split as a shell would), else ``cc``;
    Unavailable, naming it, when it is not there."""
    given = environ.get("CC", "").strip()
    try:
        command = shlex.split(given) if given else ["cc"]
    except ValueError:
        command = []
    if command and shutil.which(command[0]) is not None:
        return command
    if given:
        raise Unavailable(f"no C compiler: CC={given!r} names no executable; set CC to a C compiler, or unset it "
                          "to use `cc`")
    raise Unavailable("no C compiler: `cc` is not on PATH; install gcc or clang, or set CC to a C compiler")


def prefix_problem(prefix: Path) -> Optional[str]:
    """Why a build cannot go into prefix, or None: it must be a new or an empty directory (a
    build over another would leave that one's libraries behind, mixing two layouts or
    releases, and one over a real CANN would overwrite it). Nothing is created to find out."""
    existing = prefix
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} exists and is not a directory"
    if existing == prefix:
        entries = sorted(p.name for p in prefix.iterdir())
        if entries:
            libs = [d / "libascendcl.so" for d in (prefix / "lib64", prefix / f"{platform.machine()}-linux" / "lib64")]
            held = next((f"a CANN install or an earlier simulator build: {lib}" for lib in libs if lib.exists()),
                        f"{', '.join(entries[:4])}{', ...' if len(entries) > 4 else ''}")
            return (f"{prefix} is not empty ({held}); build into a new or empty directory (remove an earlier "
                    "build first: a build over one would leave its libraries behind)")
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot create files in {existing} (no write permission)"
    return None


def build(prefix: Path, *, layout: str = "cann8", arch_subdir: bool = False, cann_version: Optional[str] = None,
          vendor: Optional[str] = DEFAULT_VENDOR, installed_at: Optional[Path] = None) -> Path:
    """Compile the simulator into prefix with compiler() (build.py's build()); returns the
    directory of its libraries. installed_at: where the prefix is moved to before use."""
    script = build_script()
    return Path(script.build(prefix, layout=layout, arch_subdir=arch_subdir, cc=compiler(),
                             cann_version=cann_version, vendor=vendor, installed_at=installed_at))


# ---- the build bench reuses -----------------------------------------------------------------

def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    """Where cached_build() keeps its builds: $XDG_CACHE_HOME/ascend-aclnn, else
    ~/.cache/ascend-aclnn (the XDG spec says to ignore a relative $XDG_CACHE_HOME)."""
    base = environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "ascend-aclnn"


def build_key(cc: list[str], release: str) -> str:
    """The cache entry of a build: the release, and a hash of everything the libraries are
    made from (build.py, the C sources and headers, the compiler command and its --version,
    the machine). Prose (README.md) is left out: editing it needs no rebuild."""
    where = sources()
    if where is None:
        raise Unavailable("the simulator's sources are not installed: reinstall ascend-aclnn")
    digest = hashlib.sha256()
    files = [where / "build.py", *sorted(p for d in ("src", "include") for p in (where / d).rglob("*") if p.is_file())]
    for path in files:
        digest.update(f"{path.relative_to(where).as_posix()}\0".encode() + path.read_bytes() + b"\0")
    try:
        version = subprocess.run([*cc, "--version"], capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        version = b""
    digest.update(f"{shlex.join(cc)}\0{platform.machine()}\0".encode() + version)
    return f"simulator-{release}-{digest.hexdigest()[:16]}"


def cached_build(err: TextIO, prog: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The prefix of a simulator build for this release (as ``simulator build`` makes by
    default), from cache_root(): built there on first use, saying so on err, and reused
    while build_key() is unchanged. It is built in a temporary directory beside it and
    renamed into place, so a concurrent run never sees half a build; when two build the
    same key, the second to finish uses the first's. Unavailable without a compiler or
    sources; build.py's BuildError when compiling fails."""
    cc = compiler(environ)
    release = environ.get(VERSION_ENV) or NEWEST
    if release not in PROFILES:
        raise Unavailable(f"{VERSION_ENV}: expected {' or '.join(PROFILES)}, got {release!r}")
    root = cache_root(environ)
    prefix = root / build_key(cc, release)
    tool = prog.rsplit(" ", 1)[0] if " " in prog else "ascend-aclnn"  # "python -m ascend_aclnn bench" -> the CLI
    home = environ.get("ASCEND_HOME_PATH")
    missing = f"the CANN at ASCEND_HOME_PATH={home} does not load" if home else "no CANN found"
    if _built(prefix):
        err.write(f"{prog}: {missing}; using the CANN simulator built earlier in {prefix}\n")
        return prefix
    err.write(f"{prog}: {missing}; building the CANN simulator (CANN {release}) into {prefix}, once per "
              f"version of its sources (to use your own build instead: `{tool} simulator build DIR`, then "
              f"ASCEND_HOME_PATH=DIR) ...\n")
    err.flush()
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{prefix.name}.", dir=root))
    try:
        build(work, cann_version=release, installed_at=prefix)
        try:
            os.rename(work, prefix)
        except OSError:
            if not _built(prefix):  # not another run's finished build: a real failure
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return prefix


def _built(prefix: Path) -> bool:
    """Whether prefix holds a finished build (a rename puts it there whole)."""
    return (prefix / "lib64" / "libascendcl.so").is_file()


def environment_line(prefix: Path, environ: Mapping[str, str] = os.environ) -> str:
    """The shell line that points the binding at prefix, unsetting what a sourced CANN
    set_env.sh left that would take operator packages from that CANN instead."""
    line = f"export ASCEND_HOME_PATH={shlex.quote(str(prefix))}"
    stale = _stale(environ)
    return line + (f"; unset {' '.join(stale)}" if stale else "")


def _stale(environ: Mapping[str, str]) -> list[str]:
    """The variables of FOREIGN_OPP_VARS this environment sets."""
    return [v for v in FOREIGN_OPP_VARS if environ.get(v)]


# ---- the command ----------------------------------------------------------------------------

DESCRIPTION = """\
The CANN simulator: a CPU model of CANN's C ABI, for testing the npu path of ascend_aclnn
(or any code calling aclnn) without an NPU. It is not an NPU, and not a performance model.

`simulator build PREFIX` compiles it with the system C compiler (cc, or $CC) into PREFIX,
laid out as a CANN install: libascendcl.so, libnnopbase.so, the operator libraries
(libopapi.so as CANN 8.x, or libopapi_{cv,math,nn}.so as CANN >= 8.5 splits them), their
aclnnop/ headers, the version files and a vendor operator package. With
ASCEND_HOME_PATH=PREFIX the npu backend loads it as it loads CANN on an Atlas host, and
runs the same code: handles, both phases of every call, plans, streams, events, graphs and
the allocator.

What it models: the operators ascend_aclnn describes and a few raw ones (aclnnAdd, Cat,
SplitTensor, ReduceSum, ForeachMulScalarList, a vendor package's CustomMaskedScale), with
the op_api's argument checks and status codes and the kernels' arithmetic; the
release-dependent behaviour of CANN 8.1.RC1 or 9.2.0; strict device memory, asynchronous
streams, stream capture and fault injection. `simulator docs` prints its documentation."""

EPILOG = """\
example (CI, from a pip install):
  {prog} simulator build /tmp/cann-sim
  export ASCEND_HOME_PATH=/tmp/cann-sim
  {prog} info
The build prints where everything went as shell comments, then that export line, so
eval "$({prog} simulator build /tmp/cann-sim)" does the first two steps; info then
says backend npu, with CANN from /tmp/cann-sim.

Exit status: 0 built, 1 the compiler failed (its output on stderr), 2 refused before
anything was compiled (a bad argument, PREFIX, $CC or ASCEND_SIM_CANN_VERSION, no compiler).
sources: {where}"""


def add_arguments(parser: argparse.ArgumentParser, prog: str) -> None:
    """The simulator command's subcommands (on the command line's ``simulator`` parser)."""
    where = sources()
    parser.epilog = EPILOG.format(prog=prog, where=where if where is not None else "not installed")
    sub = parser.add_subparsers(dest="sim_command", metavar="{build,docs}")
    sub.required = True
    b = sub.add_parser("build", help="compile the simulator into PREFIX and print the line that points ascend_aclnn "
                                     "at it",
                       description="Compile the CANN simulator from the installed sources into PREFIX (a new "
                                   "or empty directory), then print where everything went and, last, the shell line to use it "
                                   "(export ASCEND_HOME_PATH=PREFIX). Needs a C compiler: cc, or $CC.")
    b.add_argument("prefix", metavar="PREFIX",
                   help="the directory to build into, new or empty (created if needed); it is then "
                        "ASCEND_HOME_PATH")
    b.add_argument("--layout", choices=LAYOUTS, default="cann8",
                   help=f"the library layout, {' or '.join(LAYOUTS)}: one libopapi.so as CANN 8.x (default), or "
                        "libopapi_{cv,math,nn}.so as CANN >= 8.5")
    b.add_argument("--arch-subdir", action="store_true",
                   help="put the libraries and headers in PREFIX/<arch>-linux/, as CANN does (no PREFIX/lib64)")
    b.add_argument("--cann-version", choices=PROFILES,
                   help=f"the CANN release to behave as, {' or '.join(PROFILES)} (default ${VERSION_ENV}, else "
                        f"{NEWEST})")
    vendor = b.add_mutually_exclusive_group()
    vendor.add_argument("--vendor", default=DEFAULT_VENDOR, metavar="NAME",
                        help="install the vendor operator package (aclnnCustomMaskedScale) as "
                             f"PREFIX/opp/vendors/NAME (default {DEFAULT_VENDOR})")
    vendor.add_argument("--no-vendor", dest="vendor", action="store_const", const=None,
                        help="install no vendor package")
    sub.add_parser("docs", help="print the simulator's documentation (its README)",
                   description="Print the simulator's README: what it models, how strict it is, its "
                               "environment variables and its deliberate assumptions.")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, prog: str) -> int:
    sub = f"{prog} {args.sim_command}"
    try:
        script = build_script()
    except Unavailable as exc:
        raise UsageError(f"{sub}: error: {exc}") from None
    if args.sim_command == "docs":
        out.write((Path(script.NATIVE) / "README.md").read_text())
        return EXIT_OK
    return _build(args, script, out, err, sub)


def _build(args: argparse.Namespace, script: ModuleType, out: TextIO, err: TextIO, prog: str) -> int:
    if args.vendor is not None:
        try:
            script.check_vendor_name(args.vendor)
        except ValueError as exc:
            raise refuse(prog, "--vendor", str(exc)) from None
    release = args.cann_version
    if release is None:
        release = os.environ.get(VERSION_ENV) or NEWEST
        if release not in PROFILES:
            raise refuse(prog, VERSION_ENV, f"expected {' or '.join(PROFILES)}, got {release!r}")
    prefix = Path(args.prefix).expanduser().resolve()
    problem = prefix_problem(prefix)
    if problem is not None:
        raise refuse(prog, "PREFIX", problem)
    try:
        cc = compiler()
    except Unavailable as exc:
        raise UsageError(f"{prog}: error: {exc}") from None
    err.write(f"{prog}: compiling the simulator with {shlex.join(cc)} into {prefix} ...\n")
    err.flush()
    try:
        libdir = build(prefix, layout=args.layout, arch_subdir=args.arch_subdir, cann_version=release,
                       vendor=args.vendor)
    except script.BuildError as exc:
        err.write(f"{prog}: error: {exc}\n")
        return EXIT_FAILED
    _report(out, script, prefix, libdir, args, release)
    return EXIT_OK


def _report(out: TextIO, script: ModuleType, prefix: Path, libdir: Path, args: argparse.Namespace,
            release: str) -> None:
    """What went where, as shell comments, then the line to use it: the whole is eval-able."""
    libs = " ".join(sorted(p.name for p in libdir.iterdir())) if libdir.is_dir() else ""
    headers = ", ".join(str(d / "aclnnop") for d in script.include_dirs(prefix, args.layout, args.arch_subdir))
    lines = [f"The CANN simulator, as CANN {release} in the {args.layout} layout, is built in {prefix}:",
             f"  libraries        {libdir}: {libs}",
             f"  operator headers {headers}"]
    if args.vendor is not None:
        lines.append(f"  vendor package   {args.vendor}: "
                     f"{script.vendor_root(prefix, args.vendor) / 'lib' / script.VENDOR_LIB}")
    lines += ["It is a CPU model of CANN's C ABI for testing the npu path, not an NPU (`simulator docs`).",
              "To use it, run the next line in your shell (or run this command inside eval \"$(...)\"):"]
    stale = _stale(os.environ)
    if stale:
        lines.append(f"({', '.join(stale)} would take operator packages from another CANN: unset)")
    # a line break in a path must not end a comment: eval would run what follows it
    out.write("".join("# " + line.replace("\n", "\\n").replace("\r", "\\r") + "\n" for line in lines)
              + environment_line(prefix) + "\n")
