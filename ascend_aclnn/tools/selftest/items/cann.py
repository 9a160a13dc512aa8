"""Item 9: the CANN release (install files), ACL version, SoC, devices (from the facts every
run starts with), and aclInit after aclFinalize."""
from __future__ import annotations

from typing import Any

from ....cann import version as cann_version_rules
from ..item import CONFIRMED, CONTRADICTED, ERROR, OBSERVED, Check, Item, check, errored, release_note


A2_A3_PREFIXES = ("Ascend910B", "Ascend910_93")


def probe(_: str) -> dict[str, Any]:
    """aclInit, aclFinalize, aclInit again, then whether a device can be set, straight
    through ctypes (the binding's runtime is never started in this process)."""
    from ....backends.npu.runtime import recent_error_message
    from ....cann import loader
    cann = loader.get_cann()
    f = cann.function
    out: dict[str, Any] = {"first_init": int(f("aclInit")(None))}
    out["finalize"] = int(f("aclFinalize")())
    out["second_init"] = int(f("aclInit")(None))
    out["second_init_message"] = recent_error_message(cann) if out["second_init"] else None
    out["set_device_after"] = int(f("aclrtSetDevice")(0))
    if out["set_device_after"] == 0:
        out["reset_device"] = int(f("aclrtResetDevice")(0))
    if out["second_init"] == 0:
        out["final_finalize"] = int(f("aclFinalize")())
    return out


def judge(facts: dict[str, Any], reinit: dict[str, Any]) -> list[Check]:
    release = facts.get("cann_version")
    files = facts.get("cann_version_files") or {}
    checks = [check("CANN release", OBSERVED, "nothing (read from the install's version files)",
                    (release or "unknown: no version file") + (f" ({facts['cann_version_warning']})"
                                                                if facts.get("cann_version_warning") else "")
                    + (f"; files {files}" if files else ""))]
    checks.append(check("ACL version", OBSERVED, "nothing", str(facts.get("acl_version"))))
    soc = facts.get("soc_name")
    soc_assumed = "an Atlas A2/A3 SoC (Ascend910B*, Ascend910_93*), whose kernels the reference follows"
    if soc is None:
        checks.append(check("SoC", ERROR, soc_assumed, "could not run: aclrtGetSocName returned NULL"))
    else:
        checks.append(check("SoC", CONFIRMED if soc.startswith(A2_A3_PREFIXES) else CONTRADICTED, soc_assumed, soc))
    checks.append(check("devices", OBSERVED, "nothing", str(facts.get("device_count"))))
    if facts.get("missing_functions"):
        checks.append(check("functions", CONTRADICTED, "every function's two symbols are exported",
                            "missing: " + ", ".join(facts["missing_functions"])))
    again = cann_version_rules.at_least(release, cann_version_rules.REINIT_AFTER_FINALIZE)
    assumed = {None: f"nothing ({release_note(release)})",
               True: f"succeeds ({release_note(release)} >= {cann_version_rules.REINIT_AFTER_FINALIZE})",
               False: f"fails: aclInit once per process ({release_note(release)} < "
                      f"{cann_version_rules.REINIT_AFTER_FINALIZE}); the binding does not try"}[again]
    part = reinit.get("result")
    if not isinstance(part, dict):
        checks.append(errored("aclInit after aclFinalize", reinit, assumed))
    else:
        ok = part["second_init"] == 0 and part["set_device_after"] == 0
        seen = (f"aclInit {part['first_init']}, aclFinalize {part['finalize']}, aclInit again {part['second_init']}"
                + (f" ({part['second_init_message']})" if part.get("second_init_message") else "")
                + f", then aclrtSetDevice {part['set_device_after']}")
        status = OBSERVED if again is None else (CONFIRMED if ok == again else CONTRADICTED)
        checks.append(check("aclInit after aclFinalize", status, assumed, seen))
    return checks


def judge_records(records: dict[str, dict[str, Any]], facts: dict[str, Any]) -> list[Check]:
    """The facts every run starts with, and the reinit probe's record."""
    return judge(facts, records["reinit"])


ITEM = Item(9, 'cann', 'CANN release, ACL version, SoC, devices, aclInit after aclFinalize', ['reinit'], judge_records, probe)
