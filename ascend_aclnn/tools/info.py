"""``python -m ascend_aclnn info``: is this CANN install usable, and where does each
operator come from? ``collect()`` gathers the facts as a dict (what ``--json`` prints);
``render()`` makes them readable; ``cann_version(root)`` reads the install's version files.

Exit status: 0 the backend asked for can run (auto always can: it falls back to NumPy); 1
npu was asked for and cannot work here; 2 ASCEND_ACLNN_BACKEND is not auto, npu or numpy
(a bad setting, like a bad option: the command cannot tell what was asked for).

Each function's row says what runs it here (``runs_on`` in the JSON): its library on the npu
backend, the numpy reference on the numpy backend, nothing (MISSING) when the npu backend is
chosen and no library exports it or npu was asked for and cannot run. Functions are listed by
name; the search, library and header lists in the order they are searched.

It also lists where operators are looked up, in order (custom packages, vendors, the split
or monolithic built-in libraries, as the loader and torch_npu's op-plugin search them), and
where their headers are read from (ASCEND_ACLNN_HEADERS, add_headers, then the same packages).

``--check-abi`` compares the ctypes prototype this package uses for each function it
describes (``OpSpec.c_argtypes``) with the installed header's declaration
(``headers.check_abi``): 1 when any differs or is not declared (each such operator named,
with each parameter that differs), 2 when no header declares any aclnn operator at all (there
is nothing to check against: set ASCEND_ACLNN_HEADERS or install CANN's headers). The exit
status is the larger of this and the backend's.
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

import numpy as np

from ..cann.version import cann_root, cann_version
from ..ops.group_norm import swish_grad_formula_line

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


def _search(environ: Any = os.environ) -> list[dict[str, Any]]:
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


# CANN 8.1.RC1 acl/acl.h: ACL_PKG_NAME_DRIVER is the 8th aclCANNPackageName (7); the
# aclCANNPackageVersion it fills is 512 bytes, its first 128 the version string.
ACL_PKG_NAME_DRIVER = 7
_PACKAGE_VERSION_SIZE = 512
_PACKAGE_VERSION_STRING = 128
# The driver's installer records where it put the driver and firmware here (key
# Driver_Install_Path_Param / Firmware_Install_Path_Param); /usr/local/Ascend by default.
INSTALL_INFO = Path("/etc/ascend_install.info")
DEFAULT_DRIVER_ROOT = Path("/usr/local/Ascend")


def _key_values(path: Path) -> dict[str, str]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    return {k.strip().lower(): v.strip() for k, sep, v in (line.partition("=") for line in lines) if sep}


def driver_versions(cann: Any = None, install_info: Path = INSTALL_INFO) -> dict[str, Any]:
    """The NPU driver's and firmware's versions, for bug reports: {"driver": what the runtime
    reports (aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER)) or else the driver's version.info,
    "firmware": the firmware's version.info, "files": {path: Version=} of the files read}.
    Each is None when unknown (no driver here, or a CANN without that query)."""
    where = _key_values(install_info)
    files: dict[str, Optional[str]] = {}
    for part, key in (("driver", "driver_install_path_param"), ("firmware", "firmware_install_path_param")):
        path = Path(where.get(key) or DEFAULT_DRIVER_ROOT) / part / "version.info"
        if path.is_file():
            files[str(path)] = _key_values(path).get("version")
    found = {part: next((v for p, v in files.items() if Path(p).parent.name == part and v), None)
             for part in ("driver", "firmware")}
    reported = None
    if cann is not None:
        buf = ctypes.create_string_buffer(_PACKAGE_VERSION_SIZE)
        try:
            if cann.function("aclsysGetCANNVersion")(ACL_PKG_NAME_DRIVER, buf) == 0:
                reported = buf.raw[:_PACKAGE_VERSION_STRING].split(b"\0", 1)[0].decode("utf-8", "replace") or None
        except Exception:  # not exported (older CANN, the simulator): the files still say
            pass
    return {"driver": reported or found["driver"], "driver_source": "aclsysGetCANNVersion" if reported else
            ("version.info" if found["driver"] else None), "firmware": found["firmware"], "files": files}


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


def _operator_library_rows(cann: Any) -> list[dict[str, Any]]:
    """Each operator library in search order, with its origin and what happened to it (for a
    CANN that did not load: the order it would be searched in)."""
    from ..cann import loader
    if cann is not None:
        status = cann.operator_library_status()
    else:
        status = [(lib, "not opened") for lib in loader.operator_library_order(loader.find_lib_dir())]
    return [{"library": _loaded_path(Path(lib.path).name) if note == "loaded" and "/" not in lib.path else lib.path,
             "origin": lib.label, "status": note} for lib, note in status]


def _header_dir_rows() -> list[dict[str, Any]]:
    from ..cann import headers
    return [{"dir": str(hd.path), "origin": hd.origin, "exists": hd.path.is_dir()} for hd in headers.header_dirs()]


def _by_name(specs: Iterable[Any]) -> list[Any]:
    """The functions as info lists them: by name, so a forward comes before its backward and
    the order does not depend on which module describes what."""
    return sorted(specs, key=lambda spec: str(spec.name))


def check_abi() -> dict[str, Any]:
    """The described functions' ctypes prototypes against the installed headers: {"operators":
    [{"function", "aclnn", "header", "differences"}], "headers": how many operators the
    headers declare, "error": why nothing could be checked or None, "exit_status": 0 all
    equal, 1 one differs or is not declared, 2 no header declares anything}."""
    from ..cann import headers
    from ..ops import REGISTRY
    index = headers.get_index()
    result: dict[str, Any] = {"headers": len(index), "operators": [], "error": None}
    if not len(index):
        looked = [str(hd.path) for hd in index.dirs]
        result["error"] = ("no header declares any aclnn operator (looked in " + (", ".join(looked) or "nothing")
                           + f"): nothing to check against; set {headers.ENV_VAR} to a directory of aclnn headers "
                             "or install CANN's")
        result["exit_status"] = 2
        return result
    report = headers.check_abi({spec.aclnn: spec.c_argtypes for spec in REGISTRY}, index)
    for spec in _by_name(REGISTRY):
        proto = index.get(spec.aclnn)
        result["operators"].append({"function": spec.name, "aclnn": spec.aclnn,
                                    "header": f"{proto.header}:{proto.line}" if proto is not None else None,
                                    "differences": report[spec.aclnn]})
    result["exit_status"] = 1 if any(r["differences"] for r in result["operators"]) else 0
    return result


def _cpu_reference() -> dict[str, Any]:
    """How many declared operators the numpy backend runs (a CPU reference that fits the
    header), and how many the shipped table holds; {"error": ...} when it cannot tell."""
    from .. import cpu_reference
    try:
        return dict(cpu_reference.summary())
    except Exception as exc:  # an unreadable header path or table: info still reports the rest
        return {"error": f"{type(exc).__name__}: {exc}"}


def collect(abi: bool = False) -> dict[str, Any]:
    """Everything ``info`` reports, as plain data (``abi``: with the ABI check)."""
    import ml_dtypes

    from .. import backends
    from .._version import __version__
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
        for spec in _by_name(REGISTRY):
            row = {"function": spec.name, "aclnn": spec.aclnn, "symbols": [spec.phase1_name, spec.aclnn],
                   "library": None, "error": None}
            try:
                cann.operator(spec.aclnn, spec.c_argtypes)
                lib = cann.operator_sources[spec.aclnn]
                row["library"] = _loaded_path(Path(lib).name) or lib
            except Exception as exc:
                row["error"] = str(exc)
            facts["functions"].append(row)
    else:
        facts["functions"] = [{"function": s.name, "aclnn": s.aclnn, "symbols": [s.phase1_name, s.aclnn],
                               "library": None, "error": "CANN not loaded"} for s in _by_name(REGISTRY)]
    # Every operator library in search order with its origin and what happened to it, and
    # the header directories in theirs.
    facts["operator_libraries"] = _operator_library_rows(cann)
    facts["driver"] = driver_versions(cann)
    facts["header_dirs"] = _header_dir_rows()
    if abi:
        facts["abi"] = check_abi()
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
    # What runs each function here: every described function has a numpy reference, so only
    # the npu backend can lack one (its library does not export it, or npu cannot run at all).
    for row in facts["functions"]:
        row["runs_on"] = "numpy" if chosen == "numpy" else ("npu" if chosen == "npu" and row["library"] else None)
    # The one release-dependent formula of the reference (what the numpy backend computes here)
    facts["swish_grad_formula"] = swish_grad_formula_line()
    facts["cpu_reference"] = _cpu_reference()
    facts["ok"] = chosen is not None
    facts["exit_status"] = 0 if chosen is not None else (1 if requested == "npu" else 2)
    if abi:
        facts["exit_status"] = max(facts["exit_status"], facts["abi"]["exit_status"])
    return facts


def render(f: dict[str, Any]) -> str:
    lines = [f"ascend_aclnn    {f['ascend_aclnn']}  Python {f['python']}  NumPy {f['numpy']}  "
             f"ml_dtypes {f['ml_dtypes']}", f"platform        {f['platform']}",
             f"backend         {f['backend'] or 'NONE'} ({f['backend_reason']})",
             f"GroupNormSwishGrad formula of the numpy backend: {f['swish_grad_formula']}"]
    drv = f.get("driver") or {}
    lines.append(f"driver          {drv.get('driver') or 'unknown'}"
                 + (f" ({drv['driver_source']})" if drv.get("driver_source") else " (no driver version.info found)")
                 + f"  firmware {drv.get('firmware') or 'unknown'}")
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
    lines.append("operator libraries, searched in this order (the first exporting an operator wins):")
    width = max((len(r["origin"]) for r in f["operator_libraries"]), default=0)
    for row in f["operator_libraries"]:
        lines.append(f"  {row['origin']:<{width}}  {row['library']} ({row['status']})")
    lines.append("operator headers, read in this order (the first declaration wins):")
    width = max((len(r["origin"]) for r in f["header_dirs"]), default=0)
    for row in f["header_dirs"]:
        lines.append(f"  {row['origin']:<{width}}  {row['dir']}" + ("" if row["exists"] else " (no such directory)"))
    ref = f.get("cpu_reference") or {}
    if "error" in ref:
        lines.append(f"CPU reference   unknown ({ref['error']})")
    elif ref and not ref["declared"]:  # no CANN headers: say what the CPU reference runs instead of "0 of the 0"
        lines.append(f"CPU reference   no header declares an operator here (no CANN); {ref['with_reference']} "
                     f"operators run on the numpy backend through their CPU reference "
                     f"(ascend_aclnn.aclnn.names()); the table holds {ref['table']}, hand formulas "
                     f"{ref['formulas']}, registered {ref['registered']}")
    elif ref:
        lines.append(f"CPU reference   {ref['declared_with_reference']} of the {ref['declared']} operators the headers "
                     f"declare run on the numpy backend; the table holds {ref['table']}, hand formulas "
                     f"{ref['formulas']}, registered {ref['registered']}")
        tiers = [(k[len("tier_"):], v) for k, v in ref.items() if k.startswith("tier_") and v]
        if tiers:  # which kind of reference runs them, and what each kind is checked by
            from ..cpu_reference.tiers import CHECKS
            lines.append("  by tier: " + ", ".join(f"{t} {n}" for t, n in tiers))
            lines += [f"    {t}: {CHECKS[t]}" for t, _ in tiers if t in CHECKS]
    if f["backend"] == "numpy":
        lines.append("functions (on the numpy backend each runs on its numpy reference; the npu backend needs "
                     "aclnnXxxGetWorkspaceSize and aclnnXxx from one library):")
    else:
        lines.append("functions (each needs aclnnXxxGetWorkspaceSize and aclnnXxx from one library):")
    width = max((len(r["function"]) for r in f["functions"]), default=0)
    aclnn_width = max((len(r["aclnn"]) for r in f["functions"]), default=0)
    for r in f["functions"]:
        lines.append(f"  {r['function']:<{width}}  {r['aclnn']:<{aclnn_width}}  {_runs_on(r, f['cann_error'])}")
    abi = f.get("abi")
    if abi is not None:
        lines.append(f"ABI check (each function's ctypes prototype against its header; {abi['headers']} operators "
                     "declared):")
        if abi["error"]:
            lines.append(f"  CANNOT CHECK: {abi['error']}")
        for r in abi["operators"]:
            if not r["differences"]:
                lines.append(f"  {r['function']:<{width}}  {r['aclnn']:<{aclnn_width}}  OK  {r['header']}")
                continue
            lines.append(f"  {r['function']:<{width}}  {r['aclnn']:<{aclnn_width}}  DIFFERS"
                         + (f"  {r['header']}" if r['header'] else ""))
            lines += [f"      {d}" for d in r["differences"]]
        bad = [r["aclnn"] for r in abi["operators"] if r["differences"]]
        if bad:
            lines.append(f"  {len(bad)} operator(s) differ from the headers: {', '.join(bad)}")
    return "\n".join(lines)


def _runs_on(row: dict[str, Any], cann_error: Optional[str]) -> str:
    """A function's last column: its library on the npu backend, "numpy reference" on the
    numpy one (with what the npu backend would use, when CANN loaded), else MISSING and why."""
    npu = row["library"] or "MISSING" + (": " + row["error"].splitlines()[0] if row["error"] else "")
    if row.get("runs_on") == "numpy":
        return "numpy reference" + ("" if cann_error else f" (npu: {npu})")
    return npu


def main(as_json: bool = False, out: Any = None, err: Any = None, prog: str = "python -m ascend_aclnn info",
         abi: bool = False) -> int:
    """Print the report. Returns 0, 1 when npu was asked for (ASCEND_ACLNN_BACKEND=npu) and
    cannot work, 2 when ASCEND_ACLNN_BACKEND is not one of auto, npu, numpy (also said on
    ``err`` in one line). With ``abi`` (--check-abi), at least 1 when a function's prototype
    differs from its header, 2 when no header declares anything (also said on ``err``)."""
    import json
    from ..backends import ENV_VAR, NAMES
    out, err = out or sys.stdout, err or sys.stderr
    facts = collect(abi)
    out.write((json.dumps(facts, indent=2) if as_json else render(facts)) + "\n")
    if abi and facts["abi"]["exit_status"]:
        out.flush()
        bad = [r["aclnn"] for r in facts["abi"]["operators"] if r["differences"]]
        err.write(f"{prog}: --check-abi: " + (facts["abi"]["error"] or f"{', '.join(bad)} differ(s) from the "
                                                                       "installed headers") + "\n")
    if facts["requested_backend"] not in NAMES:
        out.flush()
        err.write(f"{prog}: error: {ENV_VAR}: expected one of {', '.join(NAMES)}, got "
                  f"{facts['requested_backend']!r}\n")
    status: int = facts["exit_status"]
    return status
