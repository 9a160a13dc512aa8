"""Item 11: event timing on the current stream: elapsed times > 0 and finite, growing with the
work (8 calls against 1, a 64x longer input against the short one), events made without
timing refused (by the binding, and by CANN asked directly), and ``testing.benchmark``'s
percentiles in order. Runs on the numpy backend too (variant "numpy": events taking host
timestamps), which the tests use."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from ..item import CONFIRMED, CONTRADICTED, Check, Item, check, errored, on_release, part_error, part_of
from ..probing import attempt, on_backend


TIMING_REPEATS = 5   # samples per timed series (the judge takes medians)
TIMING_CALLS = 8     # calls in the "N calls" series
TIMING_SCALE = 64    # the larger input's length over the small one's


def elapsed_without_timing(start: Any, end: Any) -> dict[str, Any]:
    """aclrtEventElapsedTime asked directly about two recorded events made without timing
    (the binding refuses them before any C call): what CANN itself answers."""
    import ctypes

    from ....backends.npu import runtime
    a, b = start._impl, end._impl
    start.synchronize()
    end.synchronize()
    ms = ctypes.c_float()
    with runtime.gated:
        a.device.activate()
        status = int(a.device.cann.function("aclrtEventElapsedTime")(ctypes.byref(ms), a.handle, b.handle))
        recent = runtime.recent_error_message(a.device.cann) if status else None
    return {"status": status, "recent": recent, "ms": float(ms.value) if status == 0 else None}


def probe(variant: str) -> dict[str, Any]:
    """Timing events on the current stream around upsample_nearest_exact1d: one call, N
    calls, one call on a TIMING_SCALE times longer input; events made without timing; and
    testing.benchmark (variant "numpy": on numpy, host timestamps)."""
    import ascend_aclnn as aa
    from ....testing import benchmark
    backend = on_backend(variant)
    fn = aa.upsample_nearest_exact1d
    rng = np.random.default_rng(10)
    shapes = {"small": [2, 16, 1024], "large": [2, 16, 1024 * TIMING_SCALE]}
    small, large = (aa.to_device(rng.standard_normal(shapes[k]).astype(np.float32)) for k in ("small", "large"))
    out: dict[str, Any] = {"backend": backend, "operator": "upsample_nearest_exact1d",
                           "stream": repr(aa.current_stream()), "repeats": TIMING_REPEATS, "calls": TIMING_CALLS,
                           "shapes": shapes}

    def call(x: Any) -> Any:
        return fn(x, [2 * x.shape[-1]])

    def timed(x: Any, calls: int) -> float:
        start, end = aa.Event(timing=True), aa.Event(timing=True)
        try:
            start.record()
            for _ in range(calls):
                call(x)
            end.record()
            return start.elapsed_time(end)
        finally:
            start.close()
            end.close()

    def series() -> dict[str, Any]:
        for x in (small, large):  # first launches load kernels and warm the allocator: not sampled
            timed(x, 1)
        r: dict[str, list[float]] = {"one_call": [], "n_calls": [], "larger_input": []}
        for _ in range(TIMING_REPEATS):  # interleaved, so a drift of the host's clock hits all three alike
            r["one_call"].append(timed(small, 1))
            r["n_calls"].append(timed(small, TIMING_CALLS))
            r["larger_input"].append(timed(large, 1))
        return r

    def no_timing() -> dict[str, Any]:
        start, end = aa.Event(), aa.Event()
        try:
            start.record()
            call(small)
            end.record()
            try:
                binding: dict[str, Any] = {"raised": None, "value": start.elapsed_time(end)}
            except Exception as exc:  # noqa: BLE001  the refusal is the observation
                binding = {"raised": type(exc).__name__, "status": getattr(exc, "status", None),
                           "message": str(exc).splitlines()[0] if str(exc) else ""}
            return {"binding": binding, "cann": elapsed_without_timing(start, end) if backend == "npu" else None}
        finally:
            start.close()
            end.close()

    def bench() -> dict[str, Any]:
        rep = benchmark(call, small, warmup=2, repeat=10)
        return {"device_ms": list(rep.device_ms), "host_ms": list(rep.host_ms), "p10": rep.device_p10_ms,
                "median": rep.device_median_ms, "p90": rep.device_p90_ms}

    out["series"] = attempt(series)
    out["no_timing"] = attempt(no_timing)
    out["benchmark"] = attempt(bench)
    return out


# Growth: the work differs TIMING_CALLS (8) and TIMING_SCALE (64) times over, but a small
# kernel's time is mostly its fixed launch cost and a host's event timestamps jitter by
# microseconds; a median this much larger is clear growth, far short of the work's ratio.
TIMING_GROWTH = 1.2


def median_of(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=np.float64)))


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    if "result" not in r:
        return [errored("event timing", r)]
    result = r["result"]
    backend, calls = result["backend"], result["calls"]
    clock = "the device's time" if backend == "npu" else "the host's time (the numpy backend runs work as called)"
    checks = []
    series = part_of(r, "series")
    labels = {"one_call": "one call", "n_calls": f"{calls} calls", "larger_input": f"one call on {TIMING_SCALE}x"}
    assumed = f"elapsed_time between two timing events around each call is > 0 ms and finite ({clock})"
    if series is None:
        err = part_error(r, "series")
        checks.append(errored("elapsed time > 0 and finite", err, assumed))
        checks.append(errored(f"{calls} calls vs 1", err))
        checks.append(errored(f"{TIMING_SCALE}x the input vs 1x", err))
    else:
        bad = [f"{labels[k]} #{i}: {v!r} ms" for k in labels for i, v in enumerate(series[k], 1)
               if not (math.isfinite(v) and v > 0)]
        count = sum(len(series[k]) for k in labels)
        checks.append(check("elapsed time > 0 and finite", CONTRADICTED if bad else CONFIRMED, assumed,
                            ("; ".join(bad[:4]) + (f" ({len(bad)} of {count})" if len(bad) > 4 else "")) if bad else
                            f"{count} elapsed times, from {min(min(series[k]) for k in labels):.4f} to "
                            f"{max(max(series[k]) for k in labels):.4f} ms"))
        one = median_of(series["one_call"])
        for name, key, work in ((f"{calls} calls vs 1", "n_calls", f"{calls} calls"),
                                (f"{TIMING_SCALE}x the input vs 1x", "larger_input",
                                 f"one call on a {TIMING_SCALE}x longer input")):
            more = median_of(series[key])
            ratio = more / one if one > 0 and math.isfinite(one) else math.nan
            grew = math.isfinite(ratio) and ratio >= TIMING_GROWTH
            checks.append(check(name, CONFIRMED if grew else CONTRADICTED,
                                f"the median time of {work} is >= {TIMING_GROWTH}x that of one call (medians of "
                                f"{len(series[key])})",
                                f"{more:.4f} ms vs {one:.4f} ms: {ratio:.2f}x", ratio=ratio))
    no_timing = part_of(r, "no_timing")
    bind_assumed = "elapsed_time between events made without timing=True raises ValueError (as torch's does)"
    if no_timing is None:
        checks.append(errored("no timing: the binding", part_error(r, "no_timing"), bind_assumed))
    else:
        b = no_timing["binding"]
        if b.get("raised") is None:
            checks.append(check("no timing: the binding", CONTRADICTED, bind_assumed,
                                f"returned {b.get('value')!r} ms"))
        else:
            ok = b["raised"] == "ValueError"
            checks.append(check("no timing: the binding", CONFIRMED if ok else CONTRADICTED, bind_assumed,
                                f"{b['raised']}: {b.get('message')}"))
        cann = no_timing.get("cann")
        if cann is not None:
            from ....cann.constants import ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, STATUS
            cann_assumed = (f"aclrtEventElapsedTime, asked directly, answers ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID "
                            f"({ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID}): an event without ACL_EVENT_TIME_LINE keeps no "
                            "timestamp (hicann/runtime's Event::ElapsedTime)")
            status = cann["status"]
            said = f" (CANN says: {cann['recent']})" if cann.get("recent") else ""
            seen = (f"returned 0: {cann.get('ms')!r} ms" if status == 0 else
                    f"{status} ({STATUS.get(status, ('unknown status',))[0]}){said}")
            checks.append(check("no timing: CANN", CONFIRMED if status == ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
                                else CONTRADICTED, cann_assumed, seen, cann_status=status))
    bench = part_of(r, "benchmark")
    bench_assumed = "testing.benchmark's device times are > 0 and finite, and p10 <= median <= p90"
    if bench is None:
        checks.append(errored("benchmark percentiles", part_error(r, "benchmark"), bench_assumed))
    else:
        times = bench["device_ms"]
        bad = [f"call #{i}: {v!r} ms" for i, v in enumerate(times, 1) if not (math.isfinite(v) and v > 0)]
        p10, median, p90 = bench["p10"], bench["median"], bench["p90"]
        if not bad and not p10 <= median <= p90:
            bad.append(f"p10 {p10:.4f} ms > median {median:.4f} ms" if p10 > median else
                       f"median {median:.4f} ms > p90 {p90:.4f} ms")
        checks.append(check("benchmark percentiles", CONTRADICTED if bad else CONFIRMED, bench_assumed,
                            "; ".join(bad[:4]) if bad else
                            f"p10 {p10:.4f}, median {median:.4f}, p90 {p90:.4f} ms over {len(times)} calls "
                            f"(host {median_of(bench['host_ms']):.4f} ms per call)"))
    return checks


ITEM = Item(11, 'timing', 'event timing: elapsed > 0, growing with the work, timing-less events, benchmark', ['timing'], on_release(judge), probe)
