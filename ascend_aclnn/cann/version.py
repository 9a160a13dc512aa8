"""Which CANN release is installed, and which release-dependent behaviours follow from it.

A CANN install reports its release in text files beside its libraries: in CANN 8.1.RC1,
``<root>/runtime/version.info`` and ``<root>/opp/version.info`` (a line
``version_dir=8.1.RC1``) and ``<root>/<arch>-linux/ascend_toolkit_install.info`` (a line
``version=8.1.RC1``). ``aclrtGetVersion`` gives the ACL API version instead (1.13.0 there).

Behaviours that changed between releases, each keyed by the first release assumed to have
the new one. CANN's public sources give commit dates, not releases, so the release is an
inference from the dates; each is said where it is used, and ``selftest`` settles them on
a real host.
"""
from __future__ import annotations

import platform
import re
from pathlib import Path
from typing import Any, Optional

# Before it, opbase read the deterministic option from the context once (per operator at
# its first use, and for generated operators once per process); from it on, at every
# launch (op_api operators the process-level option from 9.0.0, generated ones the
# context's until 9.1 and the process-level one after: setting both covers every release).
DETERMINISM_READ_AT_EACH_LAUNCH = "9.0.0"
# Before it, aclInit after aclFinalize fails (8.1's header: "only once in a process");
# the newer runtime resets its finalised state in aclInit.
REINIT_AFTER_FINALIZE = "9.0.0"
# Before it, the GroupNormSwishGrad kernel leaves swishScale out of the second term of the
# swish derivative: hicann/ops-nn fixed it on 2026-05-26 (2ac8d9b4c, !5244). The first
# release tag holding the fix is v9.1.0; v9.0.1, the 9.0.0 branch and the 9.1.0-beta.1 to
# -beta.3 branches do not have it (a 9.1.0 pre-release counts as before it), 9.2.0-beta.1 has.
SWISH_GRAD_SCALE_FIXED = "9.1.0"

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(RC)?(\d+))?", re.IGNORECASE)


def parse(version: str) -> tuple[int, int, int, int]:
    """A sortable key: 8.1.RC1 -> (8, 1, -1, 1) sorts before 8.1.0 -> (8, 1, 0, 0)."""
    m = _VERSION.match(version.strip())
    if m is None:
        raise ValueError(f"not a CANN version: {version!r} (expected e.g. 8.1.RC1 or 9.0.0)")
    major, minor, rc, number = m.groups()
    if rc:
        return int(major), int(minor), -1, int(number)
    return int(major), int(minor), int(number or 0), 0


def at_least(version: Optional[str], release: str) -> Optional[bool]:
    """Whether ``version`` is ``release`` or later; None when the version is unknown."""
    if version is None:
        return None
    try:
        return parse(version) >= parse(release)
    except ValueError:
        return None


VERSION_FILES = (("{arch}-linux/ascend_toolkit_install.info", "version"),
                 ("runtime/version.info", "version_dir"),
                 ("opp/version.info", "version_dir"))


def cann_root(lib_dir: Path) -> Path:
    """The install root of a library directory: <root>/lib64 or <root>/<arch>-linux/lib64."""
    parent = Path(lib_dir).parent
    return parent.parent if parent.name.endswith("-linux") else parent


def _read_key(path: Path, key: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                name, sep, value = line.partition("=")
                if sep and name.strip().lower() == key:
                    return value.strip().strip("'\"") or None
    except OSError:
        pass
    return None


def cann_version(root: Optional[Path], arch: Optional[str] = None) -> dict[str, Any]:
    """{"version", "root", "files": {relative path: version}, "warning"} for an install
    root: the version is the toolkit's, else the runtime's, else the operator package's;
    the warning says when they disagree. None fields when nothing is found."""
    arch = arch or platform.machine()
    found: dict[str, str] = {}
    if root is not None:
        for pattern, key in VERSION_FILES:
            rel = pattern.format(arch=arch)
            value = _read_key(Path(root) / rel, key)
            if value:
                found[rel] = value
    # CANN >= 8.5 writes version_dir=cann (its folder), not a release: only releases count.
    releases = {rel: v for rel, v in found.items() if _VERSION.match(v)}
    version = next(iter(releases.values()), None)
    warning = None
    if len(set(releases.values())) > 1:
        warning = "the install's parts have different versions: " + ", ".join(
            f"{rel} says {v}" for rel, v in releases.items()) + " (mixed packages)"
    return {"version": version, "root": str(root) if root is not None else None, "files": found,
            "warning": warning}


def installed(lib_dir: Optional[Path]) -> Optional[str]:
    """The release of the CANN install whose libraries are in ``lib_dir``, or None when it
    does not say."""
    if lib_dir is None:
        return None
    version: Optional[str] = cann_version(cann_root(Path(lib_dir)))["version"]
    return version
