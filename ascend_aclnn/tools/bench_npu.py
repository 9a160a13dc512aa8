"""The npu path's host overhead per call, for ``python -m ascend_aclnn bench``.

One tiny operator call (upsample_nearest_exact1d, (2, 3, 4) -> 9, float32), so the time is
the host's: validation, marshalling (handles), phase 1, phase 2, synchronisation and
copies. On the CANN simulator the C side is cheap too, so the rows are dominated by the
binding. Every row is timed in blocks, and the blocks of all rows are interleaved round
after round, so a noisy machine slows them alike; each row reports the median of its
block means and their range. The yardstick is the bare ctypes sequence of the same call
(upload, two aclCreateTensor and an aclCreateIntArray, both phases, three destroys, sync,
download: no checks, no caching), measured in the same run. The calls that stay on the
device and only queue work (DeviceArray in and out=, no sync) are also given as a ratio
to the bare sequence that does the same (two aclCreateTensor and an aclCreateIntArray,
phase 1, phase 2, three destroys; the stream synchronised once per block, as theirs).
"""
from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, TextIO, TypedDict

import numpy as np
from numpy.typing import NDArray

from .progress import Progress

if TYPE_CHECKING:  # annotations only: the functions import the package's parts where they use them
    from ..backends.npu.runtime import Device
    from ..cann.loader import Cann

SHAPE, SIZE = (2, 3, 4), 9
BARE = "bare ctypes sequence, NumPy in/out (the yardstick)"
BARE_QUEUED = "bare ctypes, device-resident, queued (handles, 2 phases, 3 destroys; no sync)"
# Rows that stay on the device and only queue work: also compared with BARE_QUEUED.
QUEUED = ("call, DeviceArray in/out, queued (no sync)", "call, DeviceArray in, out= given, queued: f(d, [9], out=o)",
          "plan, DeviceArray in, out= given, queued: p(d, [9], out=o)", "plan, p() on its DeviceArrays, queued",
          "raw aclnn, DeviceArray in/out, queued: aa.aclnn.UpsampleNearestExact1d(d, [9], 0.0, o)")
# The same operator called through its header prototype (ascend_aclnn.aclnn) -> the described
# call with the same arguments, whose time it is compared with ("vs_described").
RAW_PAIRS = {"raw aclnn, DeviceArray in/out, queued: aa.aclnn.UpsampleNearestExact1d(d, [9], 0.0, o)":
             "call, DeviceArray in, out= given, queued: f(d, [9], out=o)",
             "raw aclnn, NumPy in/out: aa.aclnn.UpsampleNearestExact1d(x, [9], 0.0, y)":
             "call, NumPy in, out= given: f(x, [9], out=y)"}


# A timed row: the call, and what to run after each block of calls (a sync), if anything.
Timed = tuple[Callable[[], object], Optional[Callable[[], None]]]


class NpuRow(TypedDict):
    """One row of measure(). Times in seconds per call."""
    what: str
    median_s: float
    min_s: float
    max_s: float
    vs_bare: float
    vs_bare_queued: Optional[float]
    vs_described: Optional[float]


def simulator_prefix(err: Optional[TextIO] = None, prog: str = "bench") -> tuple[Optional[str], str]:
    """The CANN simulator built from the package's sources (as ``simulator build`` does),
    reused from the per-user cache (simulator.cached_build(), which says on err what it
    does): (prefix, "") or (None, why not: no compiler, no sources, a failed build)."""
    from . import simulator
    try:
        return str(simulator.cached_build(err or sys.stderr, prog)), ""
    except simulator.Unavailable as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001  reported by the caller
        first = str(exc).splitlines()[0] if str(exc) else ""
        return None, f"{type(exc).__name__}: {first}"


def _bare(cann: Cann, device: Device, x: NDArray[Any]
          ) -> tuple[Callable[[], NDArray[Any]], Callable[[], None], tuple[Callable[[], None], Callable[[], None]],
                     Callable[[], None]]:
    """The bare ctypes sequence (NumPy in/out), its device-resident variant (no copies),
    the same queued (no sync), and a cleanup. The functions are the binding's typed ctypes
    objects, nothing else."""
    from ..cann.constants import AclrtMemcpyKind
    fn = cann.function
    create, create_ints = fn("aclCreateTensor"), fn("aclCreateIntArray")
    destroy, destroy_ints = fn("aclDestroyTensor"), fn("aclDestroyIntArray")
    memcpy, sync = fn("aclrtMemcpy"), fn("aclrtSynchronizeStream")
    p1, p2 = cann.operator("aclnnUpsampleNearestExact1d", (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double,
                                                             ctypes.c_void_p))
    stream = ctypes.c_void_p()
    fn("aclrtCreateStream")(ctypes.byref(stream))
    out = np.empty(SHAPE[:2] + (SIZE,), np.float32)
    bx, by = device.allocator.alloc(4096), device.allocator.alloc(4096)
    i64 = ctypes.c_int64
    h2d, d2h = int(AclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE), int(AclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)

    def queue() -> None:
        shp, oshp = (i64 * 3)(*x.shape), (i64 * 3)(*out.shape)
        tx = create(shp, 3, 0, None, 0, 47, shp, 3, bx.ptr)
        ty = create(oshp, 3, 0, None, 0, 47, oshp, 3, by.ptr)
        arr = create_ints((i64 * 1)(SIZE), 1)
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        assert p1(tx, arr, 0.0, ty, ctypes.byref(ws), ctypes.byref(ex)) == 0
        assert p2(None, 0, ex, stream) == 0
        destroy(tx)
        destroy(ty)
        destroy_ints(arr)

    def launch() -> None:
        queue()
        sync(stream)

    def drain() -> None:
        sync(stream)

    def call() -> NDArray[Any]:
        memcpy(bx.ptr, 4096, x.ctypes.data, x.nbytes, h2d)
        launch()
        memcpy(out.ctypes.data, out.nbytes, by.ptr, out.nbytes, d2h)
        return out

    def cleanup() -> None:
        sync(stream)
        fn("aclrtDestroyStream")(stream)
        bx.release()
        by.release()
    return call, launch, (queue, drain), cleanup


def measure(calls: int = 1000, rounds: int = 7, progress: bool = True, err: Optional[TextIO] = None
            ) -> list[NpuRow]:
    """The rows, each {"what", "median_s", "min_s", "max_s", "vs_bare", "vs_bare_queued"}
    (vs_bare_queued: for the device-resident queued rows, else None)."""
    import ascend_aclnn as aa
    from ..backends.npu import runtime
    from ..api import check_places
    from ..cann.loader import get_cann
    from ..ops import REGISTRY, checked_calls

    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    spec = REGISTRY["upsample_nearest_exact1d"]
    cann = get_cann()
    rows: dict[str, Timed] = {}
    with aa.use_backend("npu"):
        device = runtime.current_device()
        d = aa.to_device(x)
        o = aa.empty(SHAPE[:2] + (SIZE,))
        bare, bare_launch, (bare_queue, bare_drain), cleanup = _bare(cann, device, x)
        np.testing.assert_array_equal(bare(), aa.upsample_nearest_exact1d(x, [SIZE]))
        f = aa.upsample_nearest_exact1d
        f(d, [SIZE])  # the binding is cached from here on
        cache = checked_calls.cache_for(spec)

        def cached_validation() -> None:
            keyed = cache.key((d, [SIZE]), {})
            assert keyed is not None  # a DeviceArray and a size list: always keyed
            b = cache.get(keyed[0])
            assert b is not None  # bound by the call above
            check_places(b, keyed[1], keyed[2], "npu", device)

        fns = cann.function
        create, create_ints = fns("aclCreateTensor"), fns("aclCreateIntArray")
        destroy, destroy_ints = fns("aclDestroyTensor"), fns("aclDestroyIntArray")
        i64 = ctypes.c_int64

        def marshalling() -> None:
            shp, oshp = (i64 * 3)(*SHAPE), (i64 * 3)(2, 3, SIZE)
            tx = create(shp, 3, 0, None, 0, 47, shp, 3, d._buffer.ptr)
            ty = create(oshp, 3, 0, None, 0, 47, oshp, 3, o._buffer.ptr)
            arr = create_ints((i64 * 1)(SIZE), 1)
            destroy(tx)
            destroy(ty)
            destroy_ints(arr)

        p1, p2 = cann.operator(spec.aclnn, spec.c_argtypes)
        shp, oshp = (i64 * 3)(*SHAPE), (i64 * 3)(2, 3, SIZE)
        tx = create(shp, 3, 0, None, 0, 47, shp, 3, d._buffer.ptr)
        ty = create(oshp, 3, 0, None, 0, 47, oshp, 3, o._buffer.ptr)
        arr = create_ints((i64 * 1)(SIZE), 1)
        destroy_ex = fns("aclDestroyAclOpExecutor")

        def phase1() -> None:
            ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
            p1(tx, arr, 0.0, ty, ctypes.byref(ws), ctypes.byref(ex))
            destroy_ex(ex)

        ws, rep = ctypes.c_uint64(), ctypes.c_void_p()
        runtime.check(cann, p1(tx, arr, 0.0, ty, ctypes.byref(ws), ctypes.byref(rep)), spec.phase1_name)
        runtime.check(cann, fns("aclSetAclOpExecutorRepeatable")(rep), "aclSetAclOpExecutorRepeatable")
        stream_handle = device.stream.handle

        def phase2() -> None:
            p2(None, 0, rep, stream_handle)

        def sync_raw() -> None:
            fns("aclrtSynchronizeStream")(stream_handle)

        def device_call_sync() -> None:
            f(d, [SIZE])
            aa.synchronize()

        raw = aa.aclnn.UpsampleNearestExact1d
        y = np.empty(SHAPE[:2] + (SIZE,), np.float32)
        np.testing.assert_array_equal(raw(x, [SIZE], 0.0, y), f(x, [SIZE]))
        plan_d = aa.plan(f, d, [SIZE])
        plan_o = aa.plan(f, d, [SIZE], out=o)
        plan_x = aa.plan(f, x, [SIZE])

        def plan_device_sync() -> None:
            plan_d(d, [SIZE])
            aa.synchronize()

        rows = {
            "validation: full checks (OpSpec.bind)": (lambda: spec.bind((x, [SIZE]), {}), None),
            "validation: cached binding (key, lookup, DeviceArray checks)": (cached_validation, None),
            "marshalling: 2 aclCreateTensor + aclCreateIntArray + 3 destroys": (marshalling, None),
            "phase 1 (GetWorkspaceSize) + aclDestroyAclOpExecutor": (phase1, None),
            "phase 2 alone (repeatable executor, queued)": (phase2, sync_raw),
            "call, NumPy in/out (upload, 2 phases, sync, download)": (lambda: f(x, [SIZE]), None),
            "call, DeviceArray in/out + one sync": (device_call_sync, None),
            "call, DeviceArray in/out, queued (no sync)": (lambda: f(d, [SIZE]), aa.synchronize),
            "call, DeviceArray in, out= given, queued: f(d, [9], out=o)":
                (lambda: f(d, [SIZE], out=o), aa.synchronize),
            "raw aclnn, DeviceArray in/out, queued: aa.aclnn.UpsampleNearestExact1d(d, [9], 0.0, o)":
                (lambda: raw(d, [SIZE], 0.0, o), aa.synchronize),
            "call, NumPy in, out= given: f(x, [9], out=y)": (lambda: f(x, [SIZE], out=y), None),
            "raw aclnn, NumPy in/out: aa.aclnn.UpsampleNearestExact1d(x, [9], 0.0, y)":
                (lambda: raw(x, [SIZE], 0.0, y), None),
            "plan, NumPy in/out: p(x, [9])": (lambda: plan_x(x, [SIZE]), None),
            "plan, DeviceArray in/out + one sync: p(d, [9])": (plan_device_sync, None),
            "plan, DeviceArray in, out= given, queued: p(d, [9], out=o)":
                (lambda: plan_o(d, [SIZE], out=o), aa.synchronize),
            "plan, p() on its DeviceArrays, queued": (plan_o, aa.synchronize),
            "bare ctypes, device-resident (2 phases, handles, sync; no copies)": (bare_launch, None),
            BARE_QUEUED: (bare_queue, bare_drain),
            BARE: (bare, None),
        }
        assert set(QUEUED) <= set(rows)
        try:
            samples: dict[str, list[float]] = {}
            times = _interleaved(rows, calls, rounds, progress, err, samples)
        finally:
            for p in (plan_d, plan_o, plan_x):
                p.close()
            aa.synchronize()
            destroy_ex(rep)
            destroy(tx)
            destroy(ty)
            destroy_ints(arr)
            cleanup()
    with aa.use_backend("numpy"):
        rows2 = {"numpy backend, same call (reference)": (lambda: f(x, [SIZE]), None)}
        times.update(_interleaved(rows2, calls, rounds, False, err))
    bare_t, queued_t = times[BARE][0], times[BARE_QUEUED][0]
    return [{"what": k, "median_s": m, "min_s": lo, "max_s": hi, "vs_bare": m / bare_t,
             "vs_bare_queued": m / queued_t if k in QUEUED or k == BARE_QUEUED else None,
             # the median of the ratios of the blocks run one after the other in each round
             "vs_described": statistics.median(a / b for a, b in zip(samples[k], samples[RAW_PAIRS[k]]))
             if k in RAW_PAIRS else None}
            for k, (m, lo, hi) in times.items()]


def _interleaved(rows: Mapping[str, Timed], calls: int, rounds: int, progress: bool, err: Optional[TextIO] = None,
                 samples_out: Optional[dict[str, list[float]]] = None) -> dict[str, tuple[float, float, float]]:
    samples: dict[str, list[float]] = {k: [] for k in rows}
    for fn, after in rows.values():  # warm-up
        for _ in range(max(10, calls // 20)):
            fn()
        if after:
            after()
    perf = time.perf_counter
    bar = Progress(rounds, err or sys.stderr, progress)
    for _ in range(rounds):
        bar.step("npu overhead (interleaved rounds)")
        for k, (fn, after) in rows.items():
            t0 = perf()
            for _ in range(calls):
                fn()
            samples[k].append((perf() - t0) / calls)
            if after:
                after()
    bar.close()
    if samples_out is not None:
        samples_out.update(samples)
    return {k: (statistics.median(v), min(v), max(v)) for k, v in samples.items()}


def table(rows: list[NpuRow]) -> str:
    """/bare: against the bare NumPy in/out sequence; /bare q: the queued device-resident
    rows against the bare queued sequence (create 2 tensors + 1 int array, both phases,
    destroy 3)."""
    width = max(68, *(len(r["what"]) for r in rows))
    head = (f"{'npu host overhead per call (tiny tensors)':<{width}} {'median us':>9} {'range us':>15} {'/bare':>7} "
            f"{'/bare q':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        rng = f"{r['min_s'] * 1e6:.1f}-{r['max_s'] * 1e6:.1f}"
        queued = "-" if r.get("vs_bare_queued") is None else f"{r['vs_bare_queued']:6.2f}x"
        lines.append(f"{r['what']:<{width}} {r['median_s'] * 1e6:9.1f} {rng:>15} {r['vs_bare']:6.2f}x {queued:>7}")
    raw = [r for r in rows if r.get("vs_described") is not None]
    if raw:
        lines.append("raw aclnn call / the described call with the same arguments: "
                     + ", ".join(f"{r['what'].split(':')[0].removeprefix('raw aclnn, ')} {r['vs_described']:.2f}x"
                                 for r in raw))
    return "\n".join(lines)


def where() -> str:
    from ..cann.loader import get_cann
    lib = get_cann().lib_dir
    return f"CANN from {lib}" + (" (the simulator)" if os.environ.get("ASCEND_ACLNN_BENCH_SIM") else "")
