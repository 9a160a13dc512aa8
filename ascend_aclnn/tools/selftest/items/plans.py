"""Item 7: which operators CANN makes repeatable (a plan of each function; the max-pool pair,
which plans never request, is asked once directly and never run)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..item import CONFIRMED, CONTRADICTED, OBSERVED, Check, Item, check, errored, on_release
from ..probing import attempt, npu


def probe(_: str) -> dict[str, Any]:
    import dataclasses

    import ascend_aclnn as aa
    npu()
    from ....ops import REGISTRY
    out: dict[str, Any] = {}
    for spec in REGISTRY:
        def run(spec: Any = spec) -> dict[str, Any]:
            args, kwargs = spec.example(np.random.default_rng(7), np.dtype(np.float32))
            with aa.plan(spec, *args, **kwargs) as p:
                p()
                aa.synchronize()
                r: dict[str, Any] = {"repeatable": p.repeatable, "fallback_reason": p.fallback_reason,
                                     "requested": not spec.not_repeatable}
            if spec.not_repeatable:
                # Asked once directly (phase 1, then aclSetAclOpExecutorRepeatable), closed
                # unrun: a rebound run could use a stale mask address on a CANN that accepts.
                direct = dataclasses.replace(spec, not_repeatable="")
                q = aa.plan(direct, *args, **kwargs)
                r["cann_accepts"] = q.repeatable
                r["cann_answer"] = q.fallback_reason
                q.close()
            return r
        out[spec.name] = attempt(run)
    return out


def refusal(reason: Any) -> str:
    """A plan's fallback_reason without the plan's own preamble: what CANN said."""
    text = str(reason)
    for preamble in ("aclSetAclOpExecutorRepeatable failed, so each run is an ordinary call: ",
                     "aclSetAclOpExecutorRepeatable failed: "):
        text = text.removeprefix(preamble)
    return text


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    checks = []
    if "result" not in r:
        return [errored("plans", r)]
    for name, part in r["result"].items():
        if not isinstance(part, dict) or "error" in part:
            checks.append(errored(name, part if isinstance(part, dict) else {}))
        elif not part["requested"]:
            answer = ("CANN accepts when asked directly (an opbase without LauncherRepeatableChecker; the binding "
                      "still never reruns it)" if part.get("cann_accepts") else
                      "CANN refuses when asked directly: " + refusal(part.get("cann_answer")))
            checks.append(check(name, OBSERVED, "never requested: its kernel reads a raw copy of the mask's address",
                                answer, cann_accepts=part.get("cann_accepts"), cann_answer=part.get("cann_answer")))
        elif part["repeatable"]:
            checks.append(check(name, CONFIRMED, "CANN makes its executor repeatable", "repeatable"))
        else:
            checks.append(check(name, CONTRADICTED, "CANN makes its executor repeatable",
                                f"refused: {refusal(part['fallback_reason'])}"))
    return checks


ITEM = Item(7, 'plans', 'which operators CANN makes repeatable', ['plans'], on_release(judge), probe)
