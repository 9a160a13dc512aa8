"""Item 4: which GroupNormSwishGrad formula the kernel follows (swish_scale=2): the corrected
one or CANN 8.1's, which leaves swishScale out of the swish derivative's second term."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ....cann import version as cann_version_rules
from ..item import (CONFIRMED, CONTRADICTED, OBSERVED, Check, Item, check, errored, on_release, part_error, part_of,
                    release_note)
from ..probing import attempt, npu, reference, sha256


# ---- GroupNormSwishGrad's two formulas ------------------------------------------------------
# The reference computes both (ascend_aclnn.ops.group_norm.use_swish_grad_formula): the
# corrected one, and CANN 8.1's, which leaves swishScale out of the swish derivative's
# second term. Each golden is asked for by name, whatever release the reference would follow
# on this host, so the comparison says which formula the NPU ran.

def golden(formula: str, *args: Any, **kwargs: Any) -> Any:
    """group_norm_swish_grad on the reference, computing ``formula`` ("corrected" or "8.1")."""
    import ascend_aclnn as aa
    from ....ops.group_norm import use_swish_grad_formula
    with use_swish_grad_formula(formula):
        return reference(aa.group_norm_swish_grad, *args, **kwargs)


def distance(got: Sequence[NDArray[Any]], want: Sequence[NDArray[Any]]) -> float:
    """The largest error of any output, relative to that output's largest magnitude."""
    worst = 0.0
    for a, b in zip(got, want):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        worst = max(worst, float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30)))
    return worst


FORMULA_TOLERANCE = 1e-3  # float32 kernels land within ~1e-6 of their formula; the formulas differ by ~1e-1


def probe(_: str) -> dict[str, Any]:
    import ascend_aclnn as aa
    npu()
    rng = np.random.default_rng(4)
    out: dict[str, Any] = {"tolerance": FORMULA_TOLERANCE}
    x = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    gamma = (rng.standard_normal(8) * 0.5 + 1.0).astype(np.float32)
    beta = (rng.standard_normal(8) * 0.5).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    groups = 2
    _, mean, rstd = reference(aa.group_norm_swish, x, gamma, beta, groups)
    for scale in (2.0, 1.0):  # at 1 the two formulas coincide: a control
        def run(scale: float = scale) -> dict[str, Any]:
            args = (dy, mean, rstd, x, gamma, beta, groups)
            got = aa.group_norm_swish_grad(*args, swish_scale=scale)
            corrected = golden("corrected", *args, swish_scale=scale)
            legacy = golden("8.1", *args, swish_scale=scale)
            d = {"corrected": distance(got, corrected), "legacy": distance(got, legacy)}
            return {"swish_scale": scale, "distance": d, "formulas_apart": distance(legacy, corrected),
                    "follows": [k for k, v in sorted(d.items(), key=lambda kv: kv[1]) if v <= FORMULA_TOLERANCE],
                    "npu_sha256": sha256(*got)}
        out[f"scale_{int(scale)}"] = attempt(run)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    fixed = cann_version_rules.at_least(release, cann_version_rules.SWISH_GRAD_SCALE_FIXED)
    want = None if fixed is None else ("corrected" if fixed else "legacy")
    assumed = {None: f"nothing ({release_note(release)})",
               "corrected": f"the corrected formula, sig * (1 + s*z*(1 - sig)) ({release_note(release)} >= "
                            f"{cann_version_rules.SWISH_GRAD_SCALE_FIXED})",
               "legacy": f"CANN 8.1's formula, sig * (1 + z*(1 - sig)), without swishScale in the second term "
                         f"({release_note(release)} < {cann_version_rules.SWISH_GRAD_SCALE_FIXED})"}[want]
    s2, s1 = part_of(r, "scale_2"), part_of(r, "scale_1")
    if s2 is None:
        return [errored("formula at swish_scale=2", part_error(r, "scale_2"), assumed)]
    follows = s2["follows"]
    d = s2["distance"]
    numbers = f"relative error vs corrected {d['corrected']:.2e}, vs 8.1's {d['legacy']:.2e}"
    control = ""
    if s1 is not None and not s1["follows"]:
        control = f"; at swish_scale=1 it matches neither either ({s1['distance']['corrected']:.2e})"
    if len(follows) != 1:
        seen = f"neither formula: {numbers}{control}"
        status = CONTRADICTED
    else:
        seen = {"corrected": "the corrected formula", "legacy": "CANN 8.1's formula"}[follows[0]] + f" ({numbers})"
        status = OBSERVED if want is None else (CONFIRMED if follows[0] == want else CONTRADICTED)
    return [check("formula at swish_scale=2", status, assumed, seen, follows=follows, distance=d)]


ITEM = Item(4, 'swish_grad', 'GroupNormSwishGrad formula (swish_scale=2)', ['swish_grad'], on_release(judge), probe)
