"""Item 10: graph capture: each described operator's example, called and through a plan,
captured into an ``aa.Graph`` and replayed with new inputs (``DeviceArray.copy_``), each
replay against the eager call (bit for bit, or within the precision standard for the kernels
the descriptions mark non-deterministic); a capture status CANN answers (107024-107034) is
reported as capture unsupported by that CANN or driver. Runs on the numpy backend too
(variant "numpy": graphs recording calls), which the tests use."""
from __future__ import annotations

import math
import traceback
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ..item import CONFIRMED, CONTRADICTED, ERROR, Check, Item, check, concerned, errored, on_release
from ..probing import failure, on_backend


CAPTURE_REPLAYS = 3  # replays of each captured call, each with new inputs


def to_device(value: Any) -> Any:
    """An example argument with its arrays (in lists too) on the device."""
    import ascend_aclnn as aa
    if isinstance(value, np.ndarray):
        return aa.to_device(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(to_device(v) for v in value)
    return value


def feed(static: Any, new: Any, name: str) -> None:
    """copy_ each new array into its static DeviceArray; anything else must be unchanged
    (a capture bakes attributes in, so the eager call would not be the same call)."""
    from ....tensors import DeviceArray
    if isinstance(static, DeviceArray):
        static.copy_(new)
    elif isinstance(static, (list, tuple)) and isinstance(new, (list, tuple)) and len(static) == len(new):
        for s, n in zip(static, new):
            feed(s, n, name)
    elif not (type(static) is type(new) and static == new):
        raise ValueError(f"{name}: the example's value differs between seeds ({static!r}, {new!r}): a captured "
                         "call cannot be fed it")


def outputs(result: Any) -> list[NDArray[Any]]:
    """A call's outputs as host arrays (an output not computed, None, left out)."""
    from ....tensors import DeviceArray
    items = result if isinstance(result, tuple) else (result,)
    return [r.numpy() if isinstance(r, DeviceArray) else np.asarray(r) for r in items if r is not None]


def agreement(got: list[NDArray[Any]], want: list[NDArray[Any]]) -> dict[str, Any]:
    """A replay's outputs against the eager call's: bits, and the CANN precision standard."""
    from ....testing import compare
    bit_equal = len(got) == len(want) and all(
        g.shape == w.shape and g.dtype == w.dtype and g.tobytes() == w.tobytes() for g, w in zip(got, want))
    differing = elements = 0
    max_abs = 0.0
    reports = []
    for g, w in zip(got, want):
        elements += int(w.size)
        if g.shape != w.shape:
            differing += int(w.size)
            max_abs = math.inf
        else:
            same = (g == w) | ((np.isnan(g) & np.isnan(w)) if g.dtype.kind in "fc" else False)
            differing += int(np.count_nonzero(~same))
            if w.size and g.dtype.kind in "fciu":
                max_abs = max(max_abs, float(np.nanmax(np.abs(g.astype(np.float64) - w.astype(np.float64)))))
        reports.append(compare(g, w))
    return {"bit_equal": bit_equal, "within_tolerance": len(got) == len(want) and all(r.passed for r in reports),
            "differing": differing, "elements": elements, "max_abs_error": max_abs,
            "report": "; ".join(str(r) for r in reports if not r.passed) or "PASS"}


def capture_failure(exc: BaseException) -> dict[str, Any]:
    """A capture or replay that failed: ``refused`` when CANN answered a capture status
    (107024-107034), or a driver without capture said FEATURE_NOT_SUPPORT to
    aclmdlRICaptureBegin; not when the binding itself refused something inside the capture."""
    from ....cann.constants import ACL_ERROR_RT_FEATURE_NOT_SUPPORT, CAPTURE_STATUSES
    by_binding = any(f.name == "refuse_in_capture" for f in traceback.extract_tb(exc.__traceback__))
    status, api = getattr(exc, "status", None), getattr(exc, "api", None)
    unsupported = status == ACL_ERROR_RT_FEATURE_NOT_SUPPORT and api == "aclmdlRICaptureBegin"
    return dict(failure(exc), api=api, refused=(status in CAPTURE_STATUSES or unsupported) and not by_binding)


def capture_one(spec: Any, planned: bool, seed: int) -> dict[str, Any]:
    """Capture one call of spec's example (through a plan when planned) and replay it
    CAPTURE_REPLAYS times, each after copy_ of a new example's arrays into the captured
    inputs, against the eager call on those arrays."""
    import ascend_aclnn as aa
    fn = getattr(aa, spec.name)
    f32 = np.dtype(np.float32)
    args, kwargs = spec.example(np.random.default_rng(seed), f32)
    static = [to_device(a) for a in args]
    static_kw = {k: to_device(v) for k, v in kwargs.items()}
    p = aa.plan(spec, *static, **static_kw) if planned else None
    g = aa.Graph()
    try:
        with aa.graph(g):
            captured = p() if p is not None else fn(*static, **static_kw)
        replays = []
        for i in range(CAPTURE_REPLAYS):
            new, new_kw = spec.example(np.random.default_rng(seed + 1 + i), f32)
            for param, s_arg, n_arg in zip(spec.params, static, new):
                feed(s_arg, n_arg, param.name)
            for k in static_kw:
                feed(static_kw[k], new_kw[k], k)
            g.replay()
            got = outputs(captured)
            want = outputs(fn(*[to_device(a) for a in new], **{k: to_device(v) for k, v in new_kw.items()}))
            replays.append(agreement(got, want))
        return {"outputs": len(got), "replays": replays}
    finally:
        g.close()
        if p is not None:
            p.close()


def probe(variant: str) -> dict[str, Any]:
    """Each described operator's example captured into a graph, directly and through a
    plan, and replayed with new inputs against eager calls (variant "numpy": on numpy)."""
    import ascend_aclnn as aa
    from ....ops import REGISTRY
    out: dict[str, Any] = {"backend": on_backend(variant), "replays": CAPTURE_REPLAYS, "calls": {}, "plans": {}}
    for i, spec in enumerate(REGISTRY):
        for key, planned in (("calls", False), ("plans", True)):
            try:
                out[key][spec.name] = capture_one(spec, planned, 100 * (i + 1))
                aa.synchronize()  # a fault of this part's queued work is this part's
            except Exception as exc:  # noqa: BLE001  a refusal or failure is this part's outcome
                out[key][spec.name] = capture_failure(exc)
    return out


def capture_refusal(name: str, assumed: str, part: dict[str, Any]) -> Check:
    """A capture CANN refused (a capture status): this CANN or driver cannot capture it."""
    from ....cann.constants import STATUS
    symbol = STATUS.get(part["status"], (f"status {part['status']}",))[0]
    said = f" (CANN says: {part['recent']})" if part.get("recent") else ""
    return {"name": name, "status": CONTRADICTED, "assumed": assumed,
            "observed": f"capture unsupported by this CANN/driver: {part.get('api')} returned {part['status']} "
                        f"({symbol}){said}",
            "details": {"status": part["status"], "api": part.get("api")}}


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    if "result" not in r:
        return [errored("capture", r)]
    result = r["result"]
    backend, replays = result["backend"], result["replays"]
    nondeterministic = set(concerned("determinism")) if backend == "npu" else set()
    checks = []
    for op in result["calls"]:
        exact = op not in nondeterministic
        how = ("bit for bit (a deterministic kernel)" if exact else
               "within the CANN precision standard (its kernel may accumulate with atomic adds)")
        for name, part in ((op, result["calls"][op]), (f"{op} (plan)", result["plans"][op])):
            assumed = (f"captured {'through a plan ' if name.endswith('(plan)') else ''}on {backend}, each of "
                       f"{replays} replays fed new inputs with copy_ equals the eager call on them {how}")
            if isinstance(part, dict) and part.get("refused"):
                checks.append(capture_refusal(name, assumed, part))
                continue
            if not isinstance(part, dict) or "error" in part:
                checks.append(errored(name, part if isinstance(part, dict) else {}, assumed))
                continue
            runs = part["replays"]
            n = len(runs)
            wrong = next(((i, run) for i, run in enumerate(runs, 1)
                          if not (run["bit_equal"] if exact else run["within_tolerance"])), None)
            if n < replays:  # the probe makes them all or fails: a short list is a record it did not write
                checks.append(check(name, ERROR, assumed, f"could not run: {n} of {replays} replays made"))
            elif wrong is not None:
                i, run = wrong
                what = ("differs from the eager call" if exact else "is beyond the CANN precision standard")
                checks.append(check(name, CONTRADICTED, assumed,
                                    f"replay {i} of {n} {what}: {run['differing']} of {run['elements']} elements "
                                    f"differ, max abs error {run['max_abs_error']:.3g}"
                                    + ("" if run["within_tolerance"] else f" ({run['report']})"),
                                    replay=i, differing=run["differing"]))
            elif all(run["bit_equal"] for run in runs):
                checks.append(check(name, CONFIRMED, assumed, f"{n} replays equal to the eager call, bit for bit"))
            else:
                worst = max(runs, key=lambda run: run["max_abs_error"])
                checks.append(check(name, CONFIRMED, assumed,
                                    f"{n} replays within the CANN precision standard of the eager call, not bit "
                                    f"for bit (at most {worst['differing']} of {worst['elements']} elements differ, "
                                    f"max abs error {worst['max_abs_error']:.3g})"))
    return checks


ITEM = Item(10, 'capture', 'graph capture and replay of each described operator, called and planned', ['capture'], on_release(judge), probe)
