"""What an item is, and the vocabulary its judge speaks: checks and their statuses.

An item (one module of ``items/``) names the probes it runs, each in a child process
(``"probe"`` or ``"probe:variant"``), the function those probes call there, and the judge
that turns their records into checks against what the binding assumes.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, TypedDict

CONFIRMED, CONTRADICTED, OBSERVED, ERROR = "confirmed", "contradicted", "observed", "error"
STATUSES = (CONFIRMED, CONTRADICTED, OBSERVED, ERROR)


class Check(TypedDict):
    """A verdict on one observation: what the binding assumes against what was seen."""
    name: str
    status: str  # one of STATUSES
    assumed: str
    observed: str
    details: dict[str, Any]


Probe = Callable[[str], dict[str, Any]]  # variant -> JSON data, in the child
# (probe records by run name, facts) -> checks, in the parent
Judge = Callable[[dict[str, dict[str, Any]], dict[str, Any]], list[Check]]


class Item:
    """One item: its number and title (the report's), its key (``--items`` and the
    descriptions' ``selftest``), the runs it makes (each in a child), the probe those runs
    call and the judge of what they saw."""

    def __init__(self, number: int, key: str, title: str, probes: Sequence[str], judge: Judge,
                 probe: Optional[Probe] = None):
        self.number: int = number
        self.key: str = key
        self.title: str = title
        self.probes: tuple[str, ...] = tuple(probes)
        self.judge: Judge = judge
        self.probe: Optional[Probe] = probe


def on_release(judge: Callable[[dict[str, Any], Optional[str]], list[Check]]) -> Judge:
    """A judge of one probe's record and the installed release."""
    return lambda records, facts: judge(next(iter(records.values())), facts.get("cann_version"))


def concerned(item: str) -> list[str]:
    """The operators whose descriptions name this item in ``selftest``, in registry order."""
    from ...ops import REGISTRY
    return [s.name for s in REGISTRY if item in s.selftest]


def check(name: str, status: str, assumed: str, observed: str, **details: Any) -> Check:
    assert status in STATUSES, status
    return {"name": name, "status": status, "assumed": assumed, "observed": observed, "details": details}


def errored(name: str, what: dict[str, Any], assumed: str = "") -> Check:
    """A check whose observation failed (a probe or a sub-observation)."""
    reason = what.get("error") or "no result"
    return check(name, ERROR, assumed, f"could not run: {reason}")


def part_of(record: dict[str, Any], key: str) -> Optional[dict[str, Any]]:
    """A probe's sub-observation, or None when the probe or the part failed."""
    result = record.get("result")
    if not isinstance(result, dict):
        return None
    found = result.get(key)
    return found if isinstance(found, dict) and "error" not in found else None


def part_error(record: dict[str, Any], key: str) -> dict[str, Any]:
    if "result" not in record:
        return record
    found = record["result"].get(key)
    return found if isinstance(found, dict) else {"error": f"no {key} in the probe's result"}


def release_note(release: Optional[str]) -> str:
    return f"CANN {release}" if release else "an unknown CANN release"
