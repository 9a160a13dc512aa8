"""Finding and loading the CANN libraries, and resolving symbols once.

Nothing here runs at import time: ``get_cann()`` loads on first npu use, so importing
ascend_aclnn never fails for lack of CANN.
"""
from __future__ import annotations

import ctypes
import os
import platform
import threading
from pathlib import Path
from typing import Callable, Mapping, Sequence

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


def candidate_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Library directories in search order: each root's lib64/, then <arch>-linux/lib64/."""
    roots = [environ[v] for v in ROOT_ENV_VARS if environ.get(v)] + list(DEFAULT_ROOTS)
    dirs: list[Path] = []
    for root in roots:
        for sub in ("lib64", f"{platform.machine()}-linux/lib64"):
            d = Path(root) / sub
            if d not in dirs:
                dirs.append(d)
    return dirs


def operator_libraries(lib_dir: Path | None, environ: Mapping[str, str] = os.environ) -> list[str]:
    """Operator libraries in resolution order: custom packages, CANN >= 8.5 split
    libopapi_*.so, then the CANN 8.x libopapi.so (by path, or by name through the linker)."""
    libs = []
    for d in filter(None, environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":")):
        custom = Path(d) / "op_api" / "lib" / "libcust_opapi.so"
        if custom.is_file():
            libs.append(str(custom))
    if lib_dir is not None:
        libs += [str(p) for p in sorted(lib_dir.glob("libopapi_*.so")) if p.is_file()]
        if (lib_dir / "libopapi.so").is_file():
            return libs + [str(lib_dir / "libopapi.so")]
    return libs + ["libopapi.so"]


class Cann:
    """The loaded libraries and every C function bound from them, each bound once."""

    def __init__(self, environ: Mapping[str, str] = os.environ):
        searched = candidate_dirs(environ)
        self.lib_dir = next((d for d in searched if (d / "libascendcl.so").is_file()), None)
        where = str(self.lib_dir) if self.lib_dir else "the dynamic linker path (LD_LIBRARY_PATH)"
        self._search_note = ("searched " + ", ".join(str(d) for d in searched)
                             + ", then LD_LIBRARY_PATH")
        self.libraries = {name: self._open(f"lib{name}.so", where) for name in ("ascendcl", "nnopbase")}
        self.operator_library_names = operator_libraries(self.lib_dir, environ)
        self._operator_libraries: list[tuple[str, ctypes.CDLL | None, str]] = []
        self._functions: dict[str, Callable] = {}
        self._operators: dict[str, tuple[Callable, Callable]] = {}
        self.operator_sources: dict[str, str] = {}  # aclnn name -> library it was bound from
        self._lock = threading.Lock()

    def _open(self, filename: str, where: str) -> ctypes.CDLL:
        path = str(self.lib_dir / filename) if self.lib_dir else filename
        try:
            # RTLD_GLOBAL: CANN's operator libraries expect the runtime's symbols to be global.
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            raise CannLoadError(f"could not load {filename} from {where}: {exc}\n"
                                f"({self._search_note}.)\n{HOW_TO_FIX}") from None

    def function(self, name: str) -> Callable:
        """A runtime or nnopbase function, typed from the prototype table."""
        fn = self._functions.get(name)
        if fn is None:
            proto = PROTOTYPES[name]
            try:
                fn = self.libraries[proto.library][name]
            except AttributeError:
                raise CannLoadError(f"{name} is not exported by lib{proto.library}.so in "
                                    f"{self.lib_dir}: is this CANN install complete?") from None
            fn.restype, fn.argtypes = proto.restype, proto.argtypes
            self._functions[name] = fn
        return fn

    def operator(self, aclnn_name: str, phase1_argtypes: Sequence) -> tuple[Callable, Callable]:
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
        raise CannLoadError(f"{phase1_name} / {aclnn_name} not found in any operator library. "
                            f"Searched, in order: {tried or 'none'}. This CANN may be too old for "
                            f"this operator, or its operator package is not installed.")

    def _each_operator_library(self):
        # Opened lazily and in order, so a monolithic libopapi.so is never mixed in when the
        # split libraries already provide an operator (CANN says not to mix them).
        yield from self._operator_libraries
        for name in self.operator_library_names[len(self._operator_libraries):]:
            try:
                entry = (name, ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL), "loaded")
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


def forget_load_failure() -> None:
    """Let the next get_cann() try again after a failed load (a tool that has just built
    or installed CANN, e.g. ``bench --npu`` with the simulator)."""
    global _cann_error
    with _lock:
        _cann_error = None
