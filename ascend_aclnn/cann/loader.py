"""Finding and loading the CANN libraries, and resolving symbols once.

Nothing here runs at import time: ``get_cann()`` loads on first npu use, so importing
ascend_aclnn never fails for lack of CANN.

This module is the one place that knows where CANN keeps things. The runtime libraries
come from the first root (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, the default install paths)
whose lib64/ or <arch>-linux/lib64/ holds libascendcl.so. Operators come from packages in
the order torch_npu's op-plugin uses (``operator_library_order``): custom packages
(ASCEND_CUSTOM_OPP_PATH), vendors (config.ini's load_priority), then the built-in split
libopapi_*.so or, only without them, the monolithic libopapi.so. ``operator_header_dirs``
gives the header directories of the same packages in the same order, for ``headers``.
"""
from __future__ import annotations

import ctypes
import os
import platform
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from ..errors import CannLoadError
from .prototypes import PHASE1_TAIL_ARGTYPES, PHASE2_ARGTYPES, PROTOTYPES, aclnnStatus

ROOT_ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")
HOW_TO_FIX = (
    "To use an Ascend NPU, source CANN's environment script first "
    "(`source /usr/local/Ascend/ascend-toolkit/set_env.sh`, or `/usr/local/Ascend/cann/set_env.sh` "
    "on CANN >= 8.5), or set ASCEND_HOME_PATH to the CANN install. To run without an NPU, "
    "use the numpy backend (ASCEND_ACLNN_BACKEND=numpy)."
)


def cann_roots(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """CANN install roots in search order: ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, then the defaults."""
    roots: list[Path] = []
    for root in [environ[v] for v in ROOT_ENV_VARS if environ.get(v)] + list(DEFAULT_ROOTS):
        if Path(root) not in roots:
            roots.append(Path(root))
    return roots


def location_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why the CANN location variables that are set point nowhere useful, or None when none
    is set or one of them holds libascendcl.so: a mistyped ASCEND_HOME_PATH then says so
    instead of the dynamic linker's "cannot open shared object file"."""
    named = [(v, environ[v]) for v in ROOT_ENV_VARS if environ.get(v)]
    if not named or any((d / "libascendcl.so").is_file() for _, r in named for d in _lib_dirs(Path(r))):
        return None
    return "; ".join(f"{v}={r} has no libascendcl.so in " + " or ".join(str(d) for d in _lib_dirs(Path(r)))
                     for v, r in named)


def _lib_dirs(root: Path) -> list[Path]:
    return [root / "lib64", root / f"{platform.machine()}-linux" / "lib64"]


def candidate_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Library directories in search order: each root's lib64/, then <arch>-linux/lib64/."""
    dirs: list[Path] = []
    for root in cann_roots(environ):
        dirs += [d for d in _lib_dirs(root) if d not in dirs]
    return dirs


def find_lib_dir(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The first candidate directory holding libascendcl.so: the one CANN is loaded from
    (None: the dynamic linker's path is used)."""
    return next((d for d in candidate_dirs(environ) if (d / "libascendcl.so").is_file()), None)


def _package_roots(lib_dir: Path | None, environ: Mapping[str, str]) -> list[Path]:
    """The CANN roots whose built-in operators count: the root of the library directory in
    use, or, when CANN comes from the dynamic linker's path (or is not installed), every
    candidate root."""
    roots = cann_roots(environ)
    if lib_dir is not None:
        mine = [r for r in roots if lib_dir in _lib_dirs(r)]
        if mine:
            return mine[:1]
    return roots


def opp_dir(lib_dir: Path | None = None, environ: Mapping[str, str] = os.environ) -> Path | None:
    """$ASCEND_OPP_PATH, or else <root>/opp of the first package root that has one."""
    if environ.get("ASCEND_OPP_PATH"):
        return Path(environ["ASCEND_OPP_PATH"])
    return next((r / "opp" for r in _package_roots(lib_dir, environ) if (r / "opp").is_dir()), None)


def vendor_names(opp: Path | None) -> list[str]:
    """The vendors of <opp>/vendors/config.ini, in its load_priority order (first wins), as
    torch_npu's op-plugin reads them: the first line starting with "load_priority=", split
    on commas."""
    if opp is None:
        return []
    try:
        lines = (opp / "vendors" / "config.ini").read_text(errors="replace").splitlines()
    except OSError:
        return []
    line = next((line for line in lines if line.startswith("load_priority=")), "")
    names: list[str] = []
    for name in line[len("load_priority="):].split(","):
        name = name.strip()
        # A name is one directory under vendors/: never a path.
        if name and name not in names and "/" not in name and name not in (".", ".."):
            names.append(name)
    return names


@dataclass(frozen=True)
class OperatorLibrary:
    """One operator library in resolution order, with where it came from."""

    path: str        # an absolute path, or a bare file name for the dynamic linker to find
    origin: str      # "custom", "vendor", "split" or "monolithic"
    package: str = ""  # custom: its ASCEND_CUSTOM_OPP_PATH entry; vendor: its name

    @property
    def label(self) -> str:
        """"custom <dir>", "vendor <name>", "split" or "monolithic", for ``info``."""
        return f"{self.origin} {self.package}" if self.package else self.origin


@dataclass(frozen=True)
class HeaderDir:
    """A directory of aclnn operator headers, with where it came from."""

    path: Path
    origin: str      # e.g. "custom <dir>", "vendor <name>", "built-in <root>"


def _custom_dirs(environ: Mapping[str, str]) -> list[Path]:
    dirs: list[Path] = []
    for d in environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":"):
        if d and Path(d) not in dirs:
            dirs.append(Path(d))
    return dirs


def _vendor_dirs(lib_dir: Path | None, environ: Mapping[str, str]) -> list[tuple[str, Path]]:
    opp = opp_dir(lib_dir, environ)
    return [(name, opp / "vendors" / name) for name in vendor_names(opp)] if opp else []


def operator_library_order(lib_dir: Path | None,
                           environ: Mapping[str, str] = os.environ) -> list[OperatorLibrary]:
    """Operator libraries in the order torch_npu's op-plugin resolves aclnn symbols:

    1. each ASCEND_CUSTOM_OPP_PATH entry's op_api/lib/libcust_opapi.so;
    2. each vendor of $ASCEND_OPP_PATH/vendors/config.ini (load_priority order; <root>/opp
       when ASCEND_OPP_PATH is unset): vendors/<name>/op_api/lib/libcust_opapi.so;
    3. the split libopapi_*.so of CANN >= 8.5 in the library directory, sorted;
    4. only when there are none, the monolithic libopapi.so (by path, or by name through
       the dynamic linker): CANN says not to mix the two.
    Only files that exist are listed, except the last resort "libopapi.so" by name.
    """
    libs = [OperatorLibrary(str(lib), "custom", str(d)) for d in _custom_dirs(environ)
            if (lib := d / "op_api" / "lib" / "libcust_opapi.so").is_file()]
    libs += [OperatorLibrary(str(lib), "vendor", name) for name, d in _vendor_dirs(lib_dir, environ)
             if (lib := d / "op_api" / "lib" / "libcust_opapi.so").is_file()]
    if lib_dir is not None:
        split = [p for p in sorted(lib_dir.glob("libopapi_*.so")) if p.is_file()]
        if split:
            return libs + [OperatorLibrary(str(p), "split") for p in split]
        if (lib_dir / "libopapi.so").is_file():
            return libs + [OperatorLibrary(str(lib_dir / "libopapi.so"), "monolithic")]
    return libs + [OperatorLibrary("libopapi.so", "monolithic")]


def operator_libraries(lib_dir: Path | None, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The paths of ``operator_library_order``."""
    return [lib.path for lib in operator_library_order(lib_dir, environ)]


# Where each CANN root keeps its built-in operator headers (aclnnop/ and its level2/ copy):
# include/ (a link to <arch>-linux/include/ in both layouts), <arch>-linux/include/ (where
# CANN >= 8.5's ops-* and opbase packages install them: ACLNN_INC_INSTALL_DIR in ops-nn's
# cmake/variables.cmake, opbase's cmake/package.cmake), and the CANN 8.x opp tree that the
# other two link into.
BUILTIN_HEADER_SUBDIRS = ("include/aclnnop", "{arch}-linux/include/aclnnop",
                          "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop")


def operator_header_dirs(environ: Mapping[str, str] = os.environ, lib_dir: Path | None = None, *,
                         find_lib_dir_first: bool = True) -> list[HeaderDir]:
    """Operator header directories in the same order as the libraries: custom packages'
    op_api/include/, vendors' op_api/include/ (config.ini order), then the built-in ones of
    the CANN root in use (every candidate root when none holds the libraries). Directories
    need not exist. Without ``lib_dir``, the library directory is found as the loader finds
    it (``find_lib_dir_first=False``: none, so every root)."""
    if lib_dir is None and find_lib_dir_first:
        lib_dir = find_lib_dir(environ)
    dirs = [HeaderDir(d / "op_api" / "include", f"custom {d}") for d in _custom_dirs(environ)]
    dirs += [HeaderDir(d / "op_api" / "include", f"vendor {name}") for name, d in _vendor_dirs(lib_dir, environ)]
    arch = platform.machine()
    for root in _package_roots(lib_dir, environ):
        dirs += [HeaderDir(root / sub.format(arch=arch), f"built-in {root}") for sub in BUILTIN_HEADER_SUBDIRS]
    return dirs


class Cann:
    """The loaded libraries and every C function bound from them, each bound once."""

    def __init__(self, environ: Mapping[str, str] = os.environ):
        searched = candidate_dirs(environ)
        self.lib_dir: Path | None = find_lib_dir(environ)
        where = str(self.lib_dir) if self.lib_dir else "the dynamic linker path (LD_LIBRARY_PATH)"
        self._search_note = ("searched " + ", ".join(str(d) for d in searched)
                             + ", then LD_LIBRARY_PATH")
        self.libraries: dict[str, ctypes.CDLL] = {name: self._open(f"lib{name}.so", where)
                                                  for name in ("ascendcl", "nnopbase")}
        # Where operators are looked up, in order, each with its origin (for ``info``), and the
        # header directories of the same packages in the same order (for ``headers``).
        self.operator_library_order: list[OperatorLibrary] = operator_library_order(self.lib_dir, environ)
        self.operator_library_names: list[str] = [lib.path for lib in self.operator_library_order]
        self.header_dirs: list[HeaderDir] = operator_header_dirs(environ, self.lib_dir, find_lib_dir_first=False)
        self._operator_libraries: list[tuple[str, ctypes.CDLL | None, str]] = []
        self._functions: dict[str, Callable[..., Any]] = {}
        self._operators: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}
        self.operator_sources: dict[str, str] = {}  # aclnn name -> library it was bound from
        self._lock = threading.Lock()

    def _open(self, filename: str, where: str) -> ctypes.CDLL:
        path = str(self.lib_dir / filename) if self.lib_dir else filename
        try:
            # RTLD_GLOBAL: the runtime and nnopbase, as torch_npu loads them; operator
            # libraries are opened RTLD_LOCAL (see _each_operator_library).
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            raise CannLoadError(f"could not load {filename} from {where}: {exc}\n"
                                f"({self._search_note}.)\n{HOW_TO_FIX}") from None

    def function(self, name: str) -> Callable[..., Any]:
        """A runtime or nnopbase function, typed from the prototype table."""
        fn = self._functions.get(name)
        if fn is None:
            proto = PROTOTYPES[name]
            try:
                fn = self.libraries[proto.library][name]
            except AttributeError:
                raise CannLoadError(f"{name} is not exported by lib{proto.library}.so in "
                                    f"{self.lib_dir}: is this CANN install complete?") from None
            fn.restype, fn.argtypes = proto.restype, proto.argtypes  # type: ignore[assignment]  # restype is declared object in the prototype table
            self._functions[name] = fn
        return fn

    def operator(self, aclnn_name: str, phase1_argtypes: Sequence[Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """(aclnnXxxGetWorkspaceSize, aclnnXxx), both taken from the first operator library
        that exports the pair."""
        pair = self._operators.get(aclnn_name)
        if pair is not None:
            return pair
        phase1_name = aclnn_name + "GetWorkspaceSize"
        with self._lock:
            for name, lib, _ in self._each_operator_library():
                if lib is None:
                    continue
                try:
                    phase1, phase2 = lib[phase1_name], lib[aclnn_name]
                except AttributeError:
                    continue
                phase1.restype, phase1.argtypes = aclnnStatus, tuple(phase1_argtypes) + PHASE1_TAIL_ARGTYPES
                phase2.restype, phase2.argtypes = aclnnStatus, PHASE2_ARGTYPES
                self._operators[aclnn_name] = (phase1, phase2)
                self.operator_sources[aclnn_name] = name
                return phase1, phase2
        tried = "; ".join(f"{name} ({note})" for name, _, note in self._operator_libraries)
        why = self._simulator_note(aclnn_name) or ("This CANN may be too old for this operator, or its operator "
                                                  "package is not installed.")
        raise CannLoadError(f"{phase1_name} / {aclnn_name} not found in any operator library. "
                            f"Searched, in order: {tried or 'none'}. {why}")

    def _simulator_note(self, aclnn_name: str) -> str:
        """Why an operator is missing when the loaded CANN is the simulator (its runtime exports
        aclsimLiveCount): it models a few operators only, not an old release. "" otherwise."""
        if not hasattr(self.libraries.get("ascendcl"), "aclsimLiveCount"):
            return ""
        # the header directories' declarations, read as text: cann.headers parses them, but it
        # imports this module (the one list of package locations), so it cannot be imported here
        declared: set[str] = set()
        for d in operator_header_dirs():
            try:
                for h in (d.path.rglob("*.h") if d.path.is_dir() else ()):
                    declared.update(re.findall(r"\b(aclnn\w+)GetWorkspaceSize\b", h.read_text(errors="replace")))
            except OSError:  # an unreadable header path: the note still says what the simulator is
                continue
        libs = [lib for _, lib, _ in self._operator_libraries if lib is not None]
        modeled = [n for n in sorted(declared) if any(hasattr(lib, n + "GetWorkspaceSize") for lib in libs)]
        return (f"The loaded CANN is the CANN simulator (ascend-aclnn simulator build), a test instrument that "
                f"models only {', '.join(modeled) or 'the operators its headers declare'}; it is no CANN "
                f"release. On the numpy backend (aa.set_backend('numpy') or ASCEND_ACLNN_BACKEND=numpy), "
                f"{aclnn_name} runs on its CPU reference where it has one (aa.aclnn.reference({aclnn_name!r})).")

    def op_function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> Optional[Callable[..., Any]]:
        """A plain function of the operator libraries (no executor, e.g. the size helper
        aclnnCalculateMatmulWeightSizeV2), from the first that exports it; None if none does."""
        key = "fn:" + name
        found = self._operators.get(key)
        if found is not None:
            return found[0]
        with self._lock:
            for _, lib, _ in self._each_operator_library():
                if lib is None:
                    continue
                try:
                    fn = lib[name]
                except AttributeError:
                    continue
                fn.restype, fn.argtypes = restype, tuple(argtypes)
                self._operators[key] = (fn, fn)
                return fn
        return None

    def operator_library_status(self) -> list[tuple[OperatorLibrary, str]]:
        """Each operator library in resolution order with what happened to it: "loaded",
        "failed to load: ...", or "not opened" (no operator needed it yet)."""
        notes = [note for _, _, note in self._operator_libraries]
        return [(lib, notes[i] if i < len(notes) else "not opened")
                for i, lib in enumerate(self.operator_library_order)]

    def _each_operator_library(self) -> Iterator[tuple[str, Optional[ctypes.CDLL], str]]:
        # Opened lazily and in order. RTLD_LOCAL, as torch_npu's op-plugin and TTK open them:
        # each links nnopbase and the runtime itself, and a custom package's symbols must not
        # interpose on a built-in library's internal calls (or one split library's on
        # another's).
        yield from self._operator_libraries
        for name in self.operator_library_names[len(self._operator_libraries):]:
            try:
                entry: tuple[str, Optional[ctypes.CDLL], str] = (name, ctypes.CDLL(name, mode=ctypes.RTLD_LOCAL),
                                                                  "loaded")
            except OSError as exc:
                entry = (name, None, f"failed to load: {exc}")
            self._operator_libraries.append(entry)
            yield entry


_cann: Cann | None = None
_cann_error: CannLoadError | None = None
_lock = threading.Lock()


def get_cann() -> Cann:
    """The process-wide loaded CANN; raises CannLoadError (and remembers it) if none loads."""
    global _cann, _cann_error
    if _cann is not None:
        return _cann
    with _lock:
        if _cann is None:
            if _cann_error is not None:
                raise _cann_error
            try:
                _cann = Cann()
            except CannLoadError as exc:
                _cann_error = exc
                raise
    return _cann


def load_failure() -> CannLoadError | None:
    """The error of the process's failed load of CANN, if loading was tried and failed."""
    return _cann_error


def forget_load_failure() -> None:
    """Let the next get_cann() try again after a failed load (a tool that has just built
    or installed CANN, e.g. ``bench --npu`` with the simulator)."""
    global _cann_error
    with _lock:
        _cann_error = None
