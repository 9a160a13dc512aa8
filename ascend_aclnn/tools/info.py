"""``python -m ascend_aclnn info``: is this CANN install usable, and where does each
operator come from? ``collect()`` gathers the facts as a dict (what ``--json`` prints);
``render()`` makes them readable; ``cann_version(root)`` reads the install's version files.

Exit status: 0 the backend asked for can run (auto always can: it falls back to NumPy); 1
npu was asked for and cannot work here; 2 ASCEND_ACLNN_BACKEND is not auto, npu or numpy
(a bad setting, like a bad option: the command cannot tell what was asked for).
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..cann.version import cann_root, cann_version

A2_A3_PREFIXES = ("Ascend910B", "Ascend910_93")


def _loaded_path(filename: str) -> Optional[str]:
    """Where the dynamic linker actually loaded a library from (Linux), or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if path.endswith("/" + filename):
                    return path
    except OSError:
        pass
    return None


def _search(environ: Any = os.environ) -> list[dict]:
    from ..cann.loader import candidate_dirs
    rows = []
    for d in candidate_dirs(environ):
        if not d.is_dir():
            rows.append({"dir": str(d), "found": False, "why": "no such directory"})
        elif not (d / "libascendcl.so").is_file():
            rows.append({"dir": str(d), "found": False, "why": "no libascendcl.so here"})
        else:
            rows.append({"dir": str(d), "found": True, "why": "libascendcl.so found"})
    return rows


def _version(cann: Any) -> Optional[str]:
    major, minor, patch = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
    try:
        status = cann.function("aclrtGetVersion")(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
    except Exception:
        return None
    return f"{major.value}.{minor.value}.{patch.value}" if status == 0 else None


def _soc(cann: Any) -> Optional[str]:
    try:
        raw = cann.function("aclrtGetSocName")()
    except Exception:
        return None
    return raw.decode("utf-8", "replace") if raw else None


# Where a CANN install records its version, relative to its root (the directory holding
# lib64/, e.g. /usr/local/Ascend/ascend-toolkit/latest), and the key holding it. CANN 8.1.RC1:
# <arch>-linux/ascend_toolkit_install.info has version=8.1.RC1, runtime/version.info and
# opp/version.info have version_dir=8.1.RC1 (their Version= is a component build number).
def _version_root(cann: Any) -> Optional[Path]:
    """The root of the loaded CANN; without one, the first searched root holding a version file."""
    from ..cann.loader import candidate_dirs
    if cann is not None:
        lib_dir = cann.lib_dir
        if lib_dir is None:  # loaded through LD_LIBRARY_PATH: where the linker found it
            loaded = _loaded_path("libascendcl.so")
            lib_dir = Path(loaded).parent if loaded else None
        return cann_root(lib_dir) if lib_dir is not None else None
    for d in candidate_dirs():
        root = cann_root(d)
        if cann_version(root)["version"]:
            return root
    return None


def collect() -> dict:
    """Everything ``info`` reports, as plain data."""
    import ml_dtypes

    from .. import __version__, backends
    from ..cann import loader
    from ..ops import REGISTRY

    requested, source = backends.requested()
    if source.startswith("environment variable") and backends.ENV_VAR not in os.environ:
        source = "default (auto)"  # nothing asked: ASCEND_ACLNN_BACKEND is unset
    facts: dict[str, Any] = {
        "ascend_aclnn": __version__, "python": platform.python_version(), "platform": platform.platform(),
        "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
        "requested_backend": requested, "requested_by": source,
        "search": _search(), "libraries": {}, "cann_error": None, "acl_version": None, "soc_name": None,
        "soc_warning": None, "device_count": None, "npu_error": None, "functions": [],
        "operator_libraries": [], "cann_version": None, "cann_version_files": {}, "cann_version_warning": None,
    }
    try:
        cann = loader.get_cann()
    except Exception as exc:  # CannLoadError, or anything a broken install throws
        cann = None
        facts["cann_error"] = f"{type(exc).__name__}: {exc}"
    if cann is not None:
        for name in ("ascendcl", "nnopbase"):
            facts["libraries"][f"lib{name}.so"] = _loaded_path(f"lib{name}.so") or getattr(
                cann.libraries[name], "_name", None)
        facts["acl_version"] = _version(cann)
        facts["soc_name"] = _soc(cann)
        soc = facts["soc_name"]
        if soc is None:
            facts["soc_warning"] = "aclrtGetSocName returned NULL: the SoC could not be determined"
        elif not soc.startswith(A2_A3_PREFIXES):
            facts["soc_warning"] = (f"{soc} is not an Atlas A2/A3 SoC (Ascend910B*, Ascend910_93*): the "
                                    "numpy reference follows the A2/A3 kernels, so results may differ")
        try:
            facts["device_count"] = backends.require_npu().device_count
        except Exception as exc:
            facts["npu_error"] = f"{type(exc).__name__}: {exc}"
            try:
                from ..backends.npu import runtime
                facts["device_count"] = runtime.get_runtime().device_count
            except Exception:
                pass
        for spec in REGISTRY:
            row = {"function": spec.name, "aclnn": spec.aclnn, "symbols": [spec.phase1_name, spec.aclnn],
                   "library": None, "error": None}
            try:
                cann.operator(spec.aclnn, spec.c_argtypes)
                lib = cann.operator_sources[spec.aclnn]
                row["library"] = _loaded_path(Path(lib).name) or lib
            except Exception as exc:
                row["error"] = str(exc)
            facts["functions"].append(row)
        # Every operator library tried while resolving them, in order, with what happened.
        facts["operator_libraries"] = [{"library": _loaded_path(Path(name).name) or name, "status": note}
                                       for name, _, note in cann._operator_libraries]
    else:
        facts["functions"] = [{"function": s.name, "aclnn": s.aclnn, "symbols": [s.phase1_name, s.aclnn],
                               "library": None, "error": "CANN not loaded"} for s in REGISTRY]
    version = cann_version(_version_root(cann))
    facts["cann_version"], facts["cann_version_files"] = version["version"], version["files"]
    facts["cann_version_root"], facts["cann_version_warning"] = version["root"], version["warning"]
    npu_ok = cann is not None and facts["npu_error"] is None
    if requested == "npu":
        chosen, why = ("npu", f"requested by {source}") if npu_ok else (None, f"npu requested by {source} "
                                                                          "but it cannot work here")
    elif requested == "numpy":
        chosen, why = "numpy", f"requested by {source}"
    elif requested == "auto":
        if npu_ok:
            chosen, why = "npu", f"auto: CANN loaded and reports {facts['device_count']} device(s)"
        elif cann is None:  # the error itself is in the CANN section: said once
            chosen, why = "numpy", "auto: CANN did not load, see CANN below"
        else:
            chosen, why = "numpy", "auto: the npu backend cannot run, see npu below"
    else:
        chosen, why = None, f"{source} is {requested!r}, not one of auto, npu, numpy"
    facts["backend"], facts["backend_reason"] = chosen, why
    facts["ok"] = chosen is not None
    facts["exit_status"] = 0 if chosen is not None else (1 if requested == "npu" else 2)
    return facts


def render(f: dict) -> str:
    lines = [f"ascend_aclnn    {f['ascend_aclnn']}  Python {f['python']}  NumPy {f['numpy']}  "
             f"ml_dtypes {f['ml_dtypes']}", f"platform        {f['platform']}",
             f"backend         {f['backend'] or 'NONE'} ({f['backend_reason']})"]
    version = f["cann_version"] or "unknown (no version.info or ascend_toolkit_install.info" + (
        f" under {f['cann_version_root']})" if f.get("cann_version_root") else ")")
    if f["cann_error"]:
        if f["cann_version"]:
            lines.append(f"CANN version    {version} (at {f['cann_version_root']})")
        lines.append("CANN            not loaded. Searched, in order:")
        lines += [f"  {'found' if r['found'] else 'no   '}  {r['dir']}: {r['why']}" for r in f["search"]]
        lines.append("  then the dynamic linker path (LD_LIBRARY_PATH)")
        # The error repeats the search list shown above: keep its reason and its advice.
        lines += ["  " + line for line in f["cann_error"].splitlines() if not line.startswith("(searched")]
    else:
        for lib, path in f["libraries"].items():
            lines.append(f"{lib:<16}{path}")
        lines.append(f"CANN version    {version}")
        if f["cann_version_warning"]:
            lines.append(f"WARNING         {f['cann_version_warning']}")
        lines.append(f"ACL version     {f['acl_version'] or 'unknown (aclrtGetVersion failed)'}")
        lines.append(f"SoC             {f['soc_name'] or 'unknown'}")
        if f["soc_warning"]:
            lines.append(f"WARNING         {f['soc_warning']}")
        lines.append(f"devices         {f['device_count'] if f['device_count'] is not None else 'unknown'}")
        if f["npu_error"]:
            lines += ["npu             cannot run: " + f["npu_error"].splitlines()[0]]
            lines += ["                " + line for line in f["npu_error"].splitlines()[1:]]
        for i, row in enumerate(f["operator_libraries"]):
            lines.append(f"{'operator libs' if i == 0 else '':<16}{row['library']} ({row['status']})")
    lines.append("functions (each needs aclnnXxxGetWorkspaceSize and aclnnXxx from one library):")
    width = max((len(r["function"]) for r in f["functions"]), default=0)
    for r in f["functions"]:
        where = r["library"] or ("MISSING: " + (r["error"] or "").splitlines()[0] if r["error"] else "MISSING")
        lines.append(f"  {r['function']:<{width}}  {r['aclnn']:<36} {where}")
    return "\n".join(lines)


def main(as_json: bool = False, out: Any = None, err: Any = None, prog: str = "python -m ascend_aclnn info") -> int:
    """Print the report. Returns 0, 1 when npu was asked for (ASCEND_ACLNN_BACKEND=npu) and
    cannot work, 2 when ASCEND_ACLNN_BACKEND is not one of auto, npu, numpy (also said on
    ``err`` in one line)."""
    import json
    from ..backends import ENV_VAR, NAMES
    out, err = out or sys.stdout, err or sys.stderr
    facts = collect()
    out.write((json.dumps(facts, indent=2) if as_json else render(facts)) + "\n")
    if facts["exit_status"] == 2:
        out.flush()
        err.write(f"{prog}: error: {ENV_VAR}: expected one of {', '.join(NAMES)}, got "
                  f"{facts['requested_backend']!r}\n")
    return facts["exit_status"]
