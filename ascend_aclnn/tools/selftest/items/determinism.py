"""Item 5: deterministic mode: by default, set before the first use, and switched after the
first use, each in a fresh process, REPEATS runs of group_norm_swish_grad (N=8) and of
max_pool2d_with_mask_backward (overlapping windows), hashed. On the CANN simulator, which
has no real nondeterminism, the mode each launch ran in is read from the simulator's
``aclsimLaunchDeterministic``; on hardware, where that symbol does not exist, the hashes decide."""
from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Optional

import numpy as np

from ....cann import version as cann_version_rules
from ..item import (CONFIRMED, CONTRADICTED, OBSERVED, Check, Item, check, concerned, errored, part_error, part_of,
                    release_note)
from ..probing import reference, sha256


REPEATS = 20  # runs per operator


def launch_mode(aclnn: str) -> Optional[int]:
    """The deterministic level the simulator says the operator's last launch ran in; None
    on real CANN (the symbol is the simulator's)."""
    import ctypes

    from ....cann import loader
    lib = loader.get_cann().libraries["ascendcl"]
    fn = getattr(lib, "aclsimLaunchDeterministic", None)
    if fn is None:
        return None
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_char_p]
    return int(fn(aclnn.encode()))


def probe(variant: str) -> dict[str, Any]:
    """variant "default" (never set), "before" (set before any launch) or "after" (one
    group_norm_swish_grad launch, then set): REPEATS runs of each operator, hashed."""
    import ascend_aclnn as aa
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 32, 8, 8)).astype(np.float32)
    gamma, beta = (rng.standard_normal(32).astype(np.float32) for _ in range(2))
    dy = rng.standard_normal(x.shape).astype(np.float32)
    img = rng.standard_normal((8, 16, 16, 16)).astype(np.float32)
    pool = ([3, 3], [1, 1], [1, 1], [1, 1], False)  # stride 1 < kernel 3: overlapping windows
    _, mean, rstd = reference(aa.group_norm_swish, x, gamma, beta, 8)
    out: dict[str, Any] = {"variant": variant, "repeats": REPEATS, "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if variant == "before":
            aa.set_deterministic(True)
        aa.set_backend("npu")
        _, mask = aa.max_pool2d_with_mask(img, *pool)  # the forward: another operator
        grad_pool = rng.standard_normal((8, 16, 16, 16)).astype(np.float32)
        if variant == "after":
            aa.group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, 8)
            out["mode_before_switch"] = launch_mode("aclnnGroupNormSwishGrad")
            aa.set_deterministic(True)
        runs: dict[str, tuple[Callable[[], object], str]]
        runs = {"group_norm_swish_grad": (lambda: aa.group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, 8),
                                          "aclnnGroupNormSwishGrad"),
                "max_pool2d_with_mask_backward": (lambda: aa.max_pool2d_with_mask_backward(
                    grad_pool, img, mask, *pool), "aclnnMaxPool2dWithMaskBackward")}
        for name in concerned("determinism"):
            run, aclnn = runs[name]
            t0 = time.perf_counter()
            hashes = []
            for _ in range(REPEATS):
                result = run()
                hashes.append(sha256(*(result if isinstance(result, tuple) else (result,))))
            out[name] = {"distinct_hashes": len(set(hashes)), "hashes": sorted(set(hashes)),
                         "launch_mode": launch_mode(aclnn), "seconds": round(time.perf_counter() - t0, 3)}
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    out["deterministic_setting"] = aa.get_deterministic()
    return out


def judge_one_run(label: str, op: dict[str, Any], expect: Optional[bool], assumed: str) -> Check:
    """expect True: deterministic; False: not deterministic; None: nothing assumed."""
    mode, distinct = op.get("launch_mode"), op["distinct_hashes"]
    if mode is not None and mode >= 0:  # the simulator says which mode the launches ran in
        det = mode == 1
        seen = (f"launches ran in mode {mode} ({'deterministic' if det else 'default'}; the simulator's report); "
                f"{distinct} distinct hash(es) in {REPEATS} runs")
    else:
        det = distinct == 1
        seen = (f"{REPEATS} runs, one hash" if distinct == 1 else
                f"{REPEATS} runs, {distinct} different hashes: not deterministic")
    if expect is None:
        status = OBSERVED
    elif det == expect:
        status = CONFIRMED
    elif expect is False and (mode is None or mode < 0):
        status = OBSERVED  # a non-deterministic mode can repeat its bits: identical hashes prove nothing
        seen += " (the default mode can give the same bits; nothing contradicted)"
    else:
        status = CONTRADICTED
    return check(label, status, assumed, seen, hashes=op["hashes"], launch_mode=mode)


def judge(records: dict[str, Any], release: Optional[str]) -> list[Check]:
    each = cann_version_rules.at_least(release, cann_version_rules.DETERMINISM_READ_AT_EACH_LAUNCH)
    checks = []
    for variant in ("default", "before", "after"):
        r = records[variant]
        for op in concerned("determinism"):
            label = f"{variant}: {op}"
            if variant == "default":
                expect, assumed = False, "not deterministic by default (atomic adds)"
            elif variant == "before":
                expect, assumed = True, "deterministic: set before the first use, every release obeys"
            elif op == "max_pool2d_with_mask_backward":
                expect, assumed = True, "deterministic: its first use comes after the switch"
            elif each is None:
                expect, assumed = None, f"nothing ({release_note(release)})"
            elif each:
                expect = True
                assumed = (f"deterministic: {release_note(release)} reads the option at each launch (>= "
                           f"{cann_version_rules.DETERMINISM_READ_AT_EACH_LAUNCH})")
            else:
                expect = False
                assumed = (f"still in the default mode: {release_note(release)} reads the option once per process "
                           f"for generated operators (< {cann_version_rules.DETERMINISM_READ_AT_EACH_LAUNCH})")
            part = part_of(r, op)
            if part is None:
                checks.append(errored(label, part_error(r, op), assumed))
            else:
                checks.append(judge_one_run(label, part, expect, assumed))
        if variant == "after" and isinstance(r.get("result"), dict) and r["result"].get("warnings"):
            checks.append(check("after: the binding's warning", OBSERVED, "a RuntimeWarning before 9.0",
                                "; ".join(r["result"]["warnings"])))
    return checks


def judge_records(records: dict[str, dict[str, Any]], facts: dict[str, Any]) -> list[Check]:
    """The three runs' records, by variant, judged against the installed release."""
    return judge({name.partition(":")[2]: r for name, r in records.items()}, facts.get("cann_version"))


ITEM = Item(5, 'determinism', 'deterministic mode: default, set before, switched after first use', ['determinism:default', 'determinism:before', 'determinism:after'], judge_records, probe)
