"""bench --cpu-reference: raw aclnn operators on the numpy backend's CPU reference against
the PyTorch call each stands for, side by side.

A few operators per family (elementwise Add and Mul, reduction ReduceSum, softmax, matmul)
and a plan of Add (``p()`` and ``p(a, b, 1.0, out)``), float32, outputs preallocated by the
caller; PyTorch's call is its fastest ``out=`` form (``torch._softmax`` for Softmax: the
binding the planned call uses) on ``torch.from_numpy`` views of the same arrays. Each round
times a block of calls of each side, the side going first alternating between rounds, and
each block is preceded by one untimed call of its own: both sides start warm, with their
operands in the cache (the side timed right after the other used to find them there, and
the side timed first, after another row, to pay for fetching them). The medians over the
rounds are per call. At the small size the difference is the binding's and the runner's
per-call work; at the large one the ratio is what extra copies and casts cost.
"""
from __future__ import annotations

import statistics
import time
from types import ModuleType
from typing import Any, Callable, Optional, Sequence, TextIO, TypedDict

import numpy as np

# per bench size: the (rows, cols) of the elementwise, reduction and softmax operands (the
# reduction and softmax over the last axis), and the side of matmul's square matrices
SHAPES = {"small": (10, 100), "medium": (256, 256), "large": (1000, 1000)}
MATMUL = {"small": 32, "medium": 256, "large": 1000}
TIMED_SECONDS = 0.02  # a block of calls lasts about this long (at least one call)


class CpuRow(TypedDict):
    call: str
    family: str
    size: str
    shape: str
    ours_s: float
    torch_s: float
    overhead_s: float
    vs_torch: float


Pair = tuple[Callable[[], Any], Callable[[], Any]]


def _pairs(torch: ModuleType, size: str, rng: np.random.Generator,
           closers: Optional[list[Callable[[], Any]]] = None) -> list[tuple[str, str, str, Pair]]:
    """(call, family, shape, (ours, theirs)) for one size: the one list of the rows, which
    benchmarks/bench_cpu_reference.py times too. ``closers``: where the plans' close goes."""
    import ascend_aclnn as aa
    f32 = np.float32
    shape = SHAPES[size]
    a, b = rng.standard_normal(shape, dtype=f32), rng.standard_normal(shape, dtype=f32)
    out, red = np.empty(shape, f32), np.empty(shape[:1], f32)
    ta, tb, tout, tred = (torch.from_numpy(v) for v in (a, b, out, red))
    k = MATMUL[size]
    m1, m2, mo = (rng.standard_normal((k, k), dtype=f32) for _ in range(3))
    tm1, tm2, tmo = (torch.from_numpy(v) for v in (m1, m2, mo))
    with aa.use_backend("numpy"):
        p = aa.plan(aa.aclnn.Add, a, b, 1.0, out)
    if closers is not None:
        closers.append(p.close)

    def add() -> Any:
        return torch.add(ta, tb, alpha=1, out=tout)
    label = str(shape)
    return [
        ("Add", "elementwise", label, (lambda: aa.aclnn.Add(a, b, 1.0, out), add)),
        ("Mul", "elementwise", label, (lambda: aa.aclnn.Mul(a, b, out), lambda: torch.mul(ta, tb, out=tout))),
        ("ReduceSum", "reduction", label, (lambda: aa.aclnn.ReduceSum(a, [-1], False, f32, red),
                                           lambda: torch.sum(ta, dim=-1, out=tred))),
        ("Softmax", "softmax", label, (lambda: aa.aclnn.Softmax(a, -1, out),
                                       lambda: torch._softmax(ta, -1, False, out=tout))),
        ("Matmul", "matmul", f"({k}, {k}) @ ({k}, {k})", (lambda: aa.aclnn.Matmul(m1, m2, mo, 0),
                                                          lambda: torch.matmul(tm1, tm2, out=tmo))),
        ("plan of Add: p()", "plan", label, (p, add)),
        ("plan of Add: p(a, b, 1.0, out)", "plan", label, (lambda: p(a, b, 1.0, out), add)),
    ]


def _block(fn: Callable[[], Any], calls: int) -> float:
    fn()  # untimed: the block starts with its operands in the cache, whichever side ran last
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def measure(torch: ModuleType, sizes: Sequence[str], rounds: int, seed: int = 0) -> list[CpuRow]:
    """Every row of every size in `sizes`, ours and PyTorch's interleaved, medians per call."""
    import ascend_aclnn as aa
    rng = np.random.default_rng(seed)
    rows: list[CpuRow] = []
    closers: list[Callable[[], Any]] = []
    try:
        with aa.use_backend("numpy"):
            for size in sizes:
                for call, family, shape, (ours, theirs) in _pairs(torch, size, rng, closers):
                    ours()  # warm-up (the first call also loads the table and PyTorch), and a block's length
                    t0 = time.perf_counter()
                    ours()
                    calls = max(1, int(TIMED_SECONDS / max(time.perf_counter() - t0, 1e-9)))
                    theirs()
                    mine: list[float] = []
                    other: list[float] = []
                    for r in range(rounds):
                        if r % 2:
                            other.append(_block(theirs, calls))
                            mine.append(_block(ours, calls))
                        else:
                            mine.append(_block(ours, calls))
                            other.append(_block(theirs, calls))
                    o, t = statistics.median(mine), statistics.median(other)
                    rows.append({"call": call, "family": family, "size": size, "shape": shape, "ours_s": o,
                                 "torch_s": t, "overhead_s": o - t, "vs_torch": o / t if t else float("inf")})
    finally:
        for close in closers:
            close()
    return rows


def table(rows: Sequence[CpuRow]) -> str:
    head = (f"{'aclnn (CPU reference)':<30} {'family':<12} {'size':<6} {'shape':<26} {'ours us':>10} "
            f"{'torch us':>10} {'ours-torch':>10} {'/torch':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['call']:<30} {r['family']:<12} {r['size']:<6} {r['shape']:<26} {r['ours_s'] * 1e6:10.1f} "
                     f"{r['torch_s'] * 1e6:10.1f} {r['overhead_s'] * 1e6:10.1f} {r['vs_torch']:7.2f}x")
    return "\n".join(lines)


def section(torch: ModuleType, sizes: Sequence[str], rounds: int, out: TextIO) -> list[CpuRow]:
    """Measure and print the section."""
    rows = measure(torch, sizes, rounds)
    out.write(f"raw aclnn calls on the CPU reference (numpy backend, float32, outputs preallocated) against "
              f"PyTorch's out= call on views of the same arrays; medians of {rounds} interleaved blocks\n")
    out.write(table(rows) + "\n")
    return rows
