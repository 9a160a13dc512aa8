"""The report: the text printed as the run goes (a header, each item as it finishes, the
summary line) and the JSON ``--json`` writes."""
from __future__ import annotations

import json
from typing import Any

from .item import CONFIRMED, CONTRADICTED, ERROR, OBSERVED


def header(facts: dict[str, Any]) -> str:
    drv = facts.get("driver") or {}
    lines = [f"ascend_aclnn {facts.get('ascend_aclnn')}, Python {facts.get('python')}, NumPy {facts.get('numpy')}, "
             f"ml_dtypes {facts.get('ml_dtypes')}, {facts.get('platform')}",
             f"driver {drv.get('driver') or 'unknown'}, firmware {drv.get('firmware') or 'unknown'}",
             f"CANN {facts.get('cann_version') or 'release unknown'}, ACL {facts.get('acl_version')}, "
             f"SoC {facts.get('soc_name')}, {facts.get('device_count')} device(s), "
             f"libascendcl.so {(facts.get('libraries') or {}).get('libascendcl.so')}"]
    if facts.get("simulator"):
        lines.append("NOTE: this CANN is the ascend_aclnn simulator, not hardware: these are its modelled behaviours")
    return "\n".join(lines)


def render_item(item: dict[str, Any]) -> str:
    lines = [f"{item['number']}. {item['title']}: {item['status'].upper()}"]
    for c in item["checks"]:
        lines.append(f"   {c['status']:<12} {c['name']}")
        if c["assumed"]:
            lines.append(f"   {'':<12}   assumed:  {c['assumed']}")
        lines.append(f"   {'':<12}   observed: {c['observed']}")
    return "\n".join(lines)


def summary(report: dict[str, Any]) -> str:
    c = report["counts"]
    return (f"selftest: {len(report['items'])} item(s): {c[CONFIRMED]} confirmed, {c[CONTRADICTED]} "
            f"contradicted, {c[OBSERVED]} observed, {c[ERROR]} error(s) in {report['duration_seconds']:.0f} s")


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"
