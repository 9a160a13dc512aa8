"""Benchmarks: the NumPy reference against PyTorch's CPU kernels and the memory floor,
and the npu path's host overhead per call (bench_npu.py).

    python -m ascend_aclnn bench [--ops NAME ...] [--sizes small medium large]
                                 [--dtypes DTYPE ...] [--repeat N] [--json FILE] ...

Every operator runs on a small, a medium and a cache-busting (large) shape, in every dtype
it supports unless ``--dtypes`` narrows them (16-bit rows included). The shapes are
hand-written below for the operators that have them; any other operator falls back to its description's ``example(rng, dtype)``,
scaled up along the batch axis for medium and large when that can be done generically
(every tensor argument with the first tensor's leading size, and a size list naming it,
repeated k times, and the operator's own checks accepting the result), else as is. So
adding an operator needs no edit here.

Per row: the median time of the reference; PyTorch's median for the same work (the call its
description's ``torch_baseline`` makes of the row's arguments) when torch is importable (an optional comparison, never a dependency), interleaved with ours in the same
process so both see the same machine; the memory floor (the median time of one NumPy copy
of as many bytes as the operator must read and write); and the peak memory the call
allocates beyond its inputs (tracemalloc). On the large rows the reference also runs with
ASCEND_ACLNN_REFERENCE_THREADS=1 and =2, interleaved with the rest: the gain of its
threads (1-thread median / 2-thread median) is a column, and the end says which is better
per row. The last line is the worst ours/PyTorch ratio per dtype. Medians, after a warm-up;
the machine is noisy, so read the ratios, which are measured side by side. ``--json``
writes everything printed, and the settings.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, TextIO, TypedDict

import numpy as np
from numpy.typing import NDArray
import numpy.typing as npt

from ..tensors import bfloat16
from .options import EXIT_OK, names, positive_int_type, refuse, select_dtypes, select_ops, writable_file
from .progress import Progress

if TYPE_CHECKING:  # annotations only: the functions import the package's parts where they use them
    from ..ops.spec import Args, OpSpec
    from .bench_npu import NpuRow
    from . import bench_cpu_reference

DESCRIPTION = ("Time the NumPy reference of every operator against PyTorch CPU (when installed), the memory "
               "floor and its own threads (large rows), and the npu path's host overhead per call. Every "
               "option is checked before anything is measured.")
SIZES = ("small", "medium", "large")
THREADS_ENV = "ASCEND_ACLNN_REFERENCE_THREADS"
# How many elements the first input of an example-based row gets (at least; the batch axis
# is repeated a whole number of times), per size. small: the example as it is.
EXAMPLE_TARGET = {"medium": 1 << 18, "large": 1 << 22}
SAME = 0.05  # thread gains within 5% of 1 are "no clear difference"

EXAMPLE = tuple[tuple[Any, ...], dict[str, Any]]  # (args, kwargs)
MAKE = Callable[[np.random.Generator, np.dtype[Any]], EXAMPLE]


@dataclass(frozen=True)
class Case:
    op: str       # the ascend_aclnn function
    size: str     # small, medium or large
    label: str    # the shapes, for the table ("" : described from the arguments)
    make: MAKE
    source: str = "hand-written"  # or "example": the description's example(rng, dtype)


class Row(TypedDict):
    """One measured row (measure), as printed and written to --json. Times in seconds."""
    op: str
    size: str
    shape: str
    dtype: str
    source: str
    ours_s: Optional[float]
    torch_s: Optional[float]
    floor_s: Optional[float]
    bytes_moved: int
    peak_extra_bytes: int
    peak_vs_io: Optional[float]
    torch_error: Optional[str]
    vs_torch: Optional[float]
    vs_floor: Optional[float]
    threads_default: Optional[int]
    threads_1_s: Optional[float]
    threads_2_s: Optional[float]
    threads_gain: Optional[float]


class ThreadVerdict(TypedDict):
    op: str
    size: str
    shape: str
    dtype: str
    gain: float
    better: str  # "2", "1" or "same"


class Worst(TypedDict):
    ratio: float
    op: str
    size: str
    shape: str


def _randn(rng: np.random.Generator, shape: tuple[int, ...], dtype: npt.DTypeLike) -> NDArray[Any]:
    """Random values of a dtype: standard normal for floats (and both parts of complex),
    small integers for integer dtypes (a negative float cast to unsigned is undefined)."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -3, 4 if dt.kind == "u" else 4, shape).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    data = rng.standard_normal(shape, dtype=np.float32)
    if dt.kind == "c":
        data = data + 1j * rng.standard_normal(shape, dtype=np.float32)
    return data.astype(dt, copy=False)


def _t(torch: ModuleType, a: NDArray[Any]) -> Any:
    """A NumPy array as a torch tensor (bfloat16 through float32: torch cannot read ml_dtypes)."""
    if a.dtype == bfloat16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


# ---- the operators' cases ------------------------------------------------------------------

# Each row's PyTorch call is its description's torch_baseline, given these arguments.

def _upsample(n: int, c: int, l_in: int, l_out: int) -> list[Case]:
    return [Case("upsample_nearest_exact1d", "", f"({n}, {c}, {l_in}) -> {l_out}",
                 lambda rng, dt: ((_randn(rng, (n, c, l_in), dt), [l_out]), {})),
            Case("upsample_nearest_exact1d_backward", "", f"({n}, {c}, {l_out}) -> {l_in}",
                 lambda rng, dt: ((_randn(rng, (n, c, l_out), dt), [l_out], [n, c, l_in]), {}))]


def _pad(n: int, c: int, h: int, w: int, p: int) -> list[Case]:
    pads = [p, p, p, p]
    return [Case("replication_pad2d", "", f"({n}, {c}, {h}, {w}) pads {p}",
                 lambda rng, dt: ((_randn(rng, (n, c, h, w), dt), pads), {})),
            Case("replication_pad2d_backward", "", f"({n}, {c}, {h + 2 * p}, {w + 2 * p}) -> ({h}, {w})",
                 lambda rng, dt: ((_randn(rng, (n, c, h + 2 * p, w + 2 * p), dt), _randn(rng, (n, c, h, w), dt),
                                   pads), {}))]


def _im2col(n: int, c: int, h: int, w: int, k: int, p: int) -> list[Case]:
    kk, dd, pp, ss = [k, k], [1, 1], [p, p], [1, 1]
    ho, wo = h + 2 * p - k + 1, w + 2 * p - k + 1
    return [Case("im2col", "", f"({n}, {c}, {h}, {w}) k={k} p={p}",
                 lambda rng, dt: ((_randn(rng, (n, c, h, w), dt), kk, dd, pp, ss), {})),
            Case("im2col_backward", "", f"({n}, {c * k * k}, {ho * wo}) -> ({n}, {c}, {h}, {w})",
                 lambda rng, dt: ((_randn(rng, (n, c * k * k, ho * wo), dt), [h, w], kk, dd, pp, ss), {}))]


def _max_pool(n: int, c: int, h: int, w: int, k: int, s: int, p: int) -> list[Case]:
    kk, ss, pp, dd = [k, k], [s, s], [p, p], [1, 1]
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1

    def backward_args(rng: np.random.Generator, dt: np.dtype[Any]) -> EXAMPLE:
        import ascend_aclnn as aa
        x = _randn(rng, (n, c, h, w), dt)
        with aa.use_backend("numpy"):
            _, mask = aa.max_pool2d_with_mask(x, kk, ss, pp, dd, False)
        return (_randn(rng, (n, c, ho, wo), dt), x, mask, kk, ss, pp, dd, False), {}

    return [Case("max_pool2d_with_mask", "", f"({n}, {c}, {h}, {w}) k={k} s={s} p={p}",
                 lambda rng, dt: ((_randn(rng, (n, c, h, w), dt), kk, ss, pp, dd, False), {})),
            Case("max_pool2d_with_mask_backward", "", f"({n}, {c}, {ho}, {wo}) -> ({h}, {w})", backward_args)]


def _group_norm(n: int, c: int, hw: tuple[int, int], g: int) -> list[Case]:
    shape = (n, c, hw[0], hw[1])

    def fwd_args(rng: np.random.Generator, dt: np.dtype[Any]) -> EXAMPLE:
        return (_randn(rng, shape, dt), _randn(rng, (c,), dt), _randn(rng, (c,), dt), g), {}

    def bwd_args(rng: np.random.Generator, dt: np.dtype[Any]) -> EXAMPLE:
        import ascend_aclnn as aa
        (x, gamma, beta, _), _ = fwd_args(rng, dt)
        with aa.use_backend("numpy"):
            _, mean, rstd = aa.group_norm_swish(x, gamma, beta, g)
        return (_randn(rng, shape, dt), mean, rstd, x, gamma, beta, g), {}

    return [Case("group_norm_swish", "", f"({n}, {c}, {hw[0]}, {hw[1]}) G={g}", fwd_args),
            Case("group_norm_swish_grad", "", f"({n}, {c}, {hw[0]}, {hw[1]}) G={g}", bwd_args)]


def _sized(size: str, cases: list[Case]) -> list[Case]:
    return [Case(c.op, size, c.label, c.make) for c in cases]


def hand_written() -> list[Case]:
    """The hand-written rows: a small, a medium and a cache-busting (large) shape per
    operator that has them; the large rows are the shapes the targets are stated on."""
    rows: list[Case] = []
    for size, groups in {
        "small": [_upsample(2, 4, 64, 128), _upsample(2, 4, 100, 64), _pad(2, 4, 16, 16, 2),
                  _im2col(2, 4, 14, 14, 3, 1), _max_pool(2, 4, 16, 16, 3, 2, 1), _group_norm(2, 32, (8, 8), 8)],
        "medium": [_upsample(8, 64, 512, 1024), _upsample(8, 64, 1000, 512), _pad(8, 32, 56, 56, 3),
                   _im2col(8, 32, 28, 28, 3, 1), _max_pool(8, 32, 56, 56, 3, 2, 1),
                   _group_norm(8, 128, (32, 32), 32)],
        # Issue-stated shapes: upsample 1024 <-> 4096 (an integer ratio) and 1024 <-> 4000.
        "large": [_upsample(16, 64, 1024, 4096), _upsample(16, 64, 1024, 4000), _pad(8, 64, 112, 112, 3),
                  _im2col(8, 64, 56, 56, 3, 1), _max_pool(8, 64, 112, 112, 3, 2, 1),
                  _group_norm(8, 320, (64, 64), 32)],
    }.items():
        for group in groups:
            rows += _sized(size, group)
    return rows


# ---- the fallback: an operator's example, scaled along the batch axis ----------------------------

def _batched(value: Any, n: int, ndim: int, k: int) -> Any:
    """value repeated k times along the batch axis, when it has one: an array whose leading
    size is n (2-D or more), or a size list [n, ...] as long as the first input's rank."""
    if isinstance(value, np.ndarray) and value.ndim >= 2 and value.shape[0] == n:
        return np.concatenate([value] * k, axis=0)
    if isinstance(value, (list, tuple)) and len(value) == ndim and ndim >= 2 and value \
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value) and value[0] == n:
        return type(value)([n * k, *value[1:]])
    return value


def _elements(bound: Args) -> list[int]:
    return [math.prod(o.shape) for o in bound.outputs]


def scale_example(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any], target: int
                  ) -> tuple[tuple[Any, ...], dict[str, Any], int]:
    """(args, kwargs, k): the example repeated k times along its batch axis so that its first
    input holds about ``target`` elements; k = 1 (unchanged) when that cannot be done
    generically: no batched first input, or the operator's checks refuse the result, or an
    output would grow more than k times."""
    first = next((a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)), None)
    if first is None or first.ndim < 2 or first.size == 0:
        return args, kwargs, 1
    k = max(1, -(-target // first.size))
    if k == 1:
        return args, kwargs, 1
    n, ndim = first.shape[0], first.ndim
    new_args = tuple(_batched(a, n, ndim, k) for a in args)
    new_kwargs = {key: _batched(v, n, ndim, k) for key, v in kwargs.items()}
    try:
        before, after = _elements(spec.bind(args, kwargs)), _elements(spec.bind(new_args, new_kwargs))
    except Exception:  # noqa: BLE001  the operator refuses the scaled call: keep the example as is
        return args, kwargs, 1
    if any(a > b * k for a, b in zip(after, before)):
        return args, kwargs, 1
    return new_args, new_kwargs, k


def example_cases(spec: OpSpec) -> list[Case]:
    """An operator's rows from its description's example: as is for small, scaled up for
    medium and large (scale_example)."""
    def maker(size: str) -> MAKE:
        def make(rng: np.random.Generator, dt: np.dtype[Any]) -> EXAMPLE:
            assert spec.example is not None, spec.name  # all_cases passes only operators with one
            args, kwargs = spec.example(rng, dt)
            if size in EXAMPLE_TARGET:
                args, kwargs, _ = scale_example(spec, tuple(args), dict(kwargs), EXAMPLE_TARGET[size])
            return tuple(args), dict(kwargs)
        return make
    return [Case(spec.name, size, "", maker(size), "example") for size in SIZES]


def all_cases() -> list[Case]:
    """Every operator of the registry on small, medium and large shapes: its hand-written
    rows where it has them, else rows from its description's example."""
    from ..ops import REGISTRY
    written = hand_written()
    have = {c.op for c in written}
    rows = list(written)
    for spec in REGISTRY:
        if spec.name not in have and spec.example is not None:
            rows += example_cases(spec)
    return rows


# ---- measuring ------------------------------------------------------------------------------

def _nbytes(values: object) -> int:
    total = 0
    for v in values if isinstance(values, (tuple, list)) else (values,):
        if isinstance(v, np.ndarray):
            total += v.nbytes
    return total


def _describe(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The label of an example-based row: its first tensor's shape."""
    first = next((a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)), None)
    return "example" + ("" if first is None else f" {tuple(first.shape)}")


def _peak_extra(fn: Callable[[], Any]) -> int:
    """Bytes the call allocated at its peak, beyond what was live before it (NumPy reports
    its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return max(0, peak - base)


def default_threads() -> int:
    """The reference's thread count with the environment as it is (docs/environment.md: the variable,
    else the CPU count up to 8)."""
    value = os.environ.get(THREADS_ENV, "").strip()
    return max(1, min(int(value), 64)) if value else max(1, min(os.cpu_count() or 1, 8))


class _Threads:
    """Sets ASCEND_ACLNN_REFERENCE_THREADS for one timed call, and puts it back."""

    def __init__(self) -> None:
        self.saved = os.environ.get(THREADS_ENV)

    def set(self, n: Optional[int]) -> None:
        if n is not None:
            os.environ[THREADS_ENV] = str(n)
        elif self.saved is None:
            os.environ.pop(THREADS_ENV, None)
        else:
            os.environ[THREADS_ENV] = self.saved


def measure(case: Case, dtype: np.dtype[Any], repeat: int, torch: Optional[ModuleType] = None, seed: int = 0,
            threads: bool = False) -> Row:
    """One row: ours, PyTorch (if given) and the copy floor, interleaved, medians in seconds.
    ``threads``: also ours with ASCEND_ACLNN_REFERENCE_THREADS=1 and =2, interleaved too."""
    import ascend_aclnn as aa
    fn = getattr(aa, case.op)
    args, kwargs = case.make(np.random.default_rng(seed), dtype)
    label = case.label or _describe(args, kwargs)
    env = _Threads()
    torch_error = None
    with aa.use_backend("numpy"):
        def ours() -> object:
            return fn(*args, **kwargs)
        result = ours()  # warm-up, and the output size
        moved = _nbytes(args) + _nbytes(result)
        src = np.ones(max(1, moved // 2), np.uint8)  # a copy of n bytes reads n and writes n
        dst = np.empty_like(src)
        theirs = None
        spec = aa.ops.REGISTRY[case.op]
        if torch is not None and spec.torch_baseline is not None:
            try:
                bound = spec.signature.bind(*args, **kwargs)
                bound.apply_defaults()
                theirs = spec.torch_baseline(torch, tuple(_t(torch, v) if isinstance(v, np.ndarray) else v
                                                          for v in (bound.arguments[p.name] for p in spec.params)))
                theirs()
            except Exception as exc:  # noqa: BLE001  e.g. a dtype this PyTorch kernel lacks
                theirs, torch_error = None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        # (key, call, thread setting or None for the environment as it is)
        plan: list[tuple[str, Optional[Callable[[], Any]], Optional[int]]] = [
            ("ours", ours, None), ("torch", theirs, None), ("floor", lambda: np.copyto(dst, src), None)]
        usual = default_threads()
        if threads:
            plan += [(f"threads_{n}", ours, n) for n in (1, 2) if n != usual]
        times: dict[str, list[float]] = {key: [] for key, _, _ in plan}
        try:
            for _, call, n in plan:  # warm-up: the 2-thread pool is started here, not timed
                if call is not None and n is not None:
                    env.set(n)
                    call()
            env.set(None)
            for _ in range(repeat):
                for key, call, n in plan:
                    if call is None:
                        continue
                    if n is not None:
                        env.set(n)
                    t0 = time.perf_counter()
                    call()
                    times[key].append(time.perf_counter() - t0)
                    if n is not None:
                        env.set(None)
        finally:
            env.set(None)
        peak = _peak_extra(ours)
    med = {k: statistics.median(v) if v else None for k, v in times.items()}
    ours_s = med["ours"]  # None only when nothing was timed (repeat 0), and then so is every other
    row: Row = {"op": case.op, "size": case.size, "shape": label, "dtype": np.dtype(dtype).name,
                "source": case.source, "ours_s": ours_s, "torch_s": med["torch"], "floor_s": med["floor"],
                "bytes_moved": moved, "peak_extra_bytes": peak,
                "peak_vs_io": peak / moved if moved else None, "torch_error": torch_error,
                "vs_torch": ours_s / med["torch"] if ours_s is not None and med["torch"] else None,
                "vs_floor": ours_s / med["floor"] if ours_s is not None and med["floor"] else None,
                "threads_default": None, "threads_1_s": None, "threads_2_s": None, "threads_gain": None}
    if threads:
        one = ours_s if usual == 1 else med["threads_1"]
        two = ours_s if usual == 2 else med["threads_2"]
        row.update({"threads_default": usual, "threads_1_s": one, "threads_2_s": two,
                    "threads_gain": one / two if one is not None and two else None})
    return row


def _fmt_ms(s: Optional[float]) -> str:
    return "-".rjust(9) if s is None else f"{s * 1e3:9.3f}"


def _fmt_x(r: Optional[float]) -> str:
    return "-" if r is None else f"{r:6.2f}x"


def table(rows: Sequence[Row]) -> str:
    head = (f"{'function':<34} {'size':<6} {'shape':<34} {'dtype':<10} {'ours ms':>9} {'torch ms':>9} "
            f"{'/torch':>7} {'floor ms':>9} {'/floor':>7} {'peak MB':>8} {'1thr/2thr':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['op']:<34} {r['size']:<6} {r['shape']:<34} {r['dtype']:<10} {_fmt_ms(r['ours_s'])} "
                     f"{_fmt_ms(r['torch_s'])} {_fmt_x(r['vs_torch']):>7} {_fmt_ms(r['floor_s'])} "
                     f"{_fmt_x(r['vs_floor']):>7} {r['peak_extra_bytes'] / 2**20:8.1f} "
                     f"{_fmt_x(r['threads_gain']):>9}")
    return "\n".join(lines)


def _row_name(r: Mapping[str, object]) -> str:
    return f"{r['op']} {r['shape']} {r['dtype']}"


def thread_verdicts(rows: Sequence[Row]) -> list[ThreadVerdict]:
    """Per row with a thread measurement: which setting is faster ("2", "1" or "same",
    within SAME of each other) and the gain."""
    out: list[ThreadVerdict] = []
    for r in rows:
        gain = r.get("threads_gain")
        if gain is None:
            continue
        better = "2" if gain > 1 + SAME else ("1" if gain < 1 - SAME else "same")
        out.append({"op": r["op"], "size": r["size"], "shape": r["shape"], "dtype": r["dtype"],
                    "gain": gain, "better": better})
    return out


def thread_report(verdicts: Sequence[ThreadVerdict]) -> str:
    lines = [f"reference threads on the large rows ({THREADS_ENV}=1 median / =2 median; above 1: two threads "
             f"faster; within {SAME:.0%}: no clear difference):"]
    for better, title in (("2", "2 threads better"), ("1", "1 thread better"), ("same", "no clear difference")):
        chosen = [v for v in verdicts if v["better"] == better]
        if chosen:
            lines.append(f"  {title} ({len(chosen)}):")
            lines += [f"    {_row_name(v):<70} {v['gain']:5.2f}x" for v in chosen]
    return "\n".join(lines)


def worst_vs_torch(rows: Sequence[Row]) -> dict[str, Worst]:
    """Per dtype, the row with the highest ours/PyTorch ratio among the rows of the largest
    size measured (the large rows, where the targets are stated: the small rows' ratios are
    call overhead, which would hide a kernel's regression)."""
    timed = [r for r in rows if r.get("vs_torch") is not None]
    if not timed:
        return {}
    size = max((r["size"] for r in timed), key=SIZES.index)
    worst: dict[str, Worst] = {}
    for r in timed:
        ratio = r["vs_torch"]
        if r["size"] != size or ratio is None:
            continue
        best = worst.get(r["dtype"])
        if best is None or ratio > best["ratio"]:
            worst[r["dtype"]] = {"ratio": ratio, "op": r["op"], "size": r["size"], "shape": r["shape"]}
    return worst


def worst_line(worst: dict[str, Worst], torch: Optional[ModuleType]) -> str:
    """One line: the worst ours/PyTorch ratio of each dtype."""
    if not worst:
        why = "PyTorch not installed or --no-torch" if torch is None else "no row has a PyTorch time"
        return f"worst ours/torch per dtype: - ({why})"
    size = next(iter(worst.values()))["size"]
    return f"worst ours/torch per dtype ({size} rows): " + ", ".join(
        f"{dt} {w['ratio']:.2f}x ({w['op']} {w['shape']})" for dt, w in worst.items())


def _import_torch(wanted: bool) -> Optional[ModuleType]:
    if not wanted:
        return None
    # PyTorch's OpenMP workers otherwise spin for a while after each call, and ours runs
    # right after torch's on the same cores: it would be timed against two busy threads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        # By name: a module, whether or not torch (optional) is there to type-check against.
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    return torch


# ---- the command ----------------------------------------------------------------------------

DEFAULTS = {"repeat": 7, "npu_calls": 1000, "npu_rounds": 7}
NUMPY_OPTIONS = (("ops", "--ops"), ("sizes", "--sizes"), ("dtypes", "--dtypes"), ("repeat", "--repeat"),
                 ("no_torch", "--no-torch"), ("cpu_reference", "--cpu-reference"))
NPU_OPTIONS = (("npu_calls", "--npu-calls"), ("npu_rounds", "--npu-rounds"))


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """bench's options (on the command line's ``bench`` subcommand)."""
    parser.add_argument("--ops", nargs="+", action="extend", metavar="NAME", help="functions, by name (default: all)")
    parser.add_argument("--sizes", nargs="+", action="extend", metavar="SIZE", help=f"any of {', '.join(SIZES)} (default: all)")
    parser.add_argument("--dtypes", nargs="+", action="extend", metavar="DTYPE",
                        help="dtypes, e.g. float32 float16; every function selected must support each "
                             "(default: every dtype each function supports)")
    parser.add_argument("--repeat", type=positive_int_type, metavar="N",
                        help=f"timed repetitions per row, for the median (default {DEFAULTS['repeat']})")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison")
    parser.add_argument("--cpu-reference", action="store_true",
                        help="also time raw aclnn operators on the CPU reference (Add, Mul, ReduceSum, Softmax, "
                             "Matmul; float32, at the selected sizes) against PyTorch's out= calls; needs PyTorch")
    parser.add_argument("--json", metavar="FILE", help="also write everything as JSON (checked writable first)")
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    npu = parser.add_mutually_exclusive_group()
    npu.add_argument("--npu", action="store_true",
                     help="also measure the npu path's host overhead per call (default: when the npu backend "
                          "is available); without CANN, on the CANN simulator, built from the package's "
                          "sources once per version of them into $XDG_CACHE_HOME/ascend-aclnn (default "
                          "~/.cache/ascend-aclnn; needs a C compiler; see `simulator --help`)")
    npu.add_argument("--npu-only", action="store_true", help="only the npu host-overhead section")
    npu.add_argument("--no-npu", action="store_true", help="skip the npu host-overhead section")
    parser.add_argument("--device", action="store_true",
                        help="also time each selected operator on the device (events around each call: median, "
                             "p10, p90, with the host cost), on the npu backend; without CANN, on the CANN "
                             "simulator, built as for --npu")
    parser.add_argument("--cases", metavar="FILE",
                        help="with --device: time these cases (compare --cases' JSON format: any operator on your "
                             "shapes) instead of one small case per operator")
    parser.add_argument("--npu-calls", type=positive_int_type, metavar="N",
                        help=f"calls per timed block, npu section (default {DEFAULTS['npu_calls']})")
    parser.add_argument("--npu-rounds", type=positive_int_type, metavar="N",
                        help=f"interleaved rounds of blocks, npu section (default {DEFAULTS['npu_rounds']})")
    return parser


@dataclass
class BenchPlan:
    """What a bench run will do, decided (and checked) before anything is measured."""
    todo: list[tuple[Case, np.dtype[Any]]]  # rows of the NumPy section
    repeat: int
    torch: Optional[ModuleType]
    json_path: Optional[str]
    npu: bool             # run the npu section
    npu_calls: int
    npu_rounds: int
    progress: bool
    device: list[tuple[Case, np.dtype[Any]]] = field(default_factory=list)  # rows of the device section
    cpu_reference: list[str] = field(default_factory=list)  # sizes of the CPU reference section


def prepare(args: argparse.Namespace, prog: str, err: Optional[TextIO] = None) -> BenchPlan:
    """Every check of bench's options and settings; UsageError for the first bad one. err:
    where building the simulator (for --npu & co. without CANN) is reported."""
    from ..ops import REGISTRY
    if args.npu_only:
        for attr, option in NUMPY_OPTIONS:
            if getattr(args, attr) not in (None, False):
                raise refuse(prog, option, "has no effect with --npu-only (which measures only the npu section)")
    if args.no_npu:
        for attr, option in NPU_OPTIONS:
            if getattr(args, attr) is not None:
                raise refuse(prog, option, "has no effect with --no-npu")
    cases = all_cases()
    known = [s.name for s in REGISTRY if any(c.op == s.name for c in cases)]
    ops = select_ops(prog, "--ops", names(args.ops), known)
    sizes = names(args.sizes)
    if sizes is not None:
        bad = [s for s in sizes if s not in SIZES]
        if not sizes or bad:
            raise refuse(prog, "--sizes", f"expected any of {', '.join(SIZES)}, got "
                                          f"{', '.join(map(repr, bad)) if bad else 'nothing'}")
    else:
        sizes = list(SIZES)
    per_op = select_dtypes(prog, "--dtypes", names(args.dtypes), ops)
    value = os.environ.get(THREADS_ENV, "").strip()
    if value:
        try:
            int(value)  # what the reference reads (it clamps to 1..64)
        except ValueError:
            raise refuse(prog, THREADS_ENV, f"expected a positive integer, got {value!r}") from None
    if args.json is not None:
        writable_file(prog, "--json", args.json)
    npu = _npu_wanted(args, prog, err)
    todo = [] if args.npu_only else [(c, d) for s in sizes for c in cases if c.op in ops and c.size == s
                                     for d in per_op[c.op]]
    device = []
    cases_file = getattr(args, "cases", None)
    if cases_file is not None and not getattr(args, "device", False):
        raise refuse(prog, "--cases", "needs --device (the cases are timed on the device)")
    if getattr(args, "device", False) and cases_file is not None:
        device = _user_cases(cases_file, prog)
        _npu_wanted(argparse.Namespace(no_npu=False, npu=True, npu_only=False), prog, err, "--device")
    elif getattr(args, "device", False):
        _npu_wanted(argparse.Namespace(no_npu=False, npu=True, npu_only=False), prog, err, "--device")
        # one row per operator: its first small case, in its first selected dtype
        seen: set[str] = set()
        for c in cases:
            if c.op in ops and c.size == "small" and c.op not in seen:
                seen.add(c.op)
                device.append((c, np.dtype(per_op[c.op][0])))
    torch = _import_torch(not args.no_torch and not args.npu_only)
    cpu_reference = getattr(args, "cpu_reference", False)
    if cpu_reference and torch is None:
        raise refuse(prog, "--cpu-reference", "needs PyTorch (the CPU reference runs on it, and it is the yardstick)"
                                              + (", and --no-torch skips it" if args.no_torch else ", not installed"))
    return BenchPlan(todo, args.repeat or DEFAULTS["repeat"], torch,
                args.json, npu, args.npu_calls or DEFAULTS["npu_calls"], args.npu_rounds or DEFAULTS["npu_rounds"],
                not args.no_progress, device, list(sizes) if cpu_reference else [])


def _user_cases(path: str, prog: str) -> list[tuple[Case, np.dtype[Any]]]:
    """--cases FILE as device rows: each case checked by the operator's own rules first."""
    from . import cases as user_cases
    from .raw_compare import is_raw_name, parse_raw_case, raw_values
    option, entries = user_cases.command_line_file(path, prog)
    rows = []
    for number, obj, head in entries:
        if is_raw_name(obj.get("op") if isinstance(obj, dict) else None):  # an aclnn operator, as compare takes it
            try:
                raw = parse_raw_case(obj, number=number)
            except user_cases.CaseError as exc:
                raise refuse(prog, option, f"{head}: {exc.field + ': ' if exc.field else ''}{exc}") from None

            def make_raw(rng: np.random.Generator, dt: np.dtype[Any], raw: Any = raw) -> EXAMPLE:
                return tuple(raw_values(raw, rng)), {}
            rows.append((Case(raw.op, "small", raw.label(), make_raw), raw.dtype))
            continue
        try:
            case = user_cases.parse_case(obj, number=number)
            user_cases.check(case, user_cases.seeded(0, "case", str(number)))
        except user_cases.CaseError as exc:
            raise refuse(prog, option, f"{head}: {exc.field + ': ' if exc.field else ''}{exc}") from None

        def make(rng: np.random.Generator, dt: np.dtype[Any], case: Any = case) -> EXAMPLE:
            return case.build(rng), {}
        rows.append((Case(case.op, "small", case.label(), make), case.dtype))
    return rows


def _npu_wanted(args: argparse.Namespace, prog: str, err: Optional[TextIO], flag: Optional[str] = None) -> bool:
    """Whether the npu section runs; with --npu/--npu-only and no NPU, the simulator is built
    here (or reused from the cache), before anything is measured, saying so on err
    (UsageError when it cannot be)."""
    if args.no_npu:
        return False
    from ..backends import npu_available
    wanted = args.npu or args.npu_only
    if npu_available():
        return True
    if not wanted:
        return False
    from ..cann import loader
    from . import bench_npu
    option = flag or ("--npu-only" if args.npu_only else "--npu")
    prefix, why = bench_npu.simulator_prefix(err, prog)
    if prefix is None:
        raise refuse(prog, option, f"the npu backend is unavailable and the CANN simulator could not be built: {why} "
                                   f"(see `{prog.rsplit(' ', 1)[0]} simulator --help`)")
    os.environ["ASCEND_HOME_PATH"] = prefix
    os.environ["ASCEND_ACLNN_BENCH_SIM"] = "1"
    loader.forget_load_failure()  # the simulator is there now
    if not npu_available():
        raise refuse(prog, option, "the CANN simulator was built but the npu backend still cannot run")
    return True


def run(args: argparse.Namespace, out: Optional[TextIO] = None, err: Optional[TextIO] = None,
        prog: str = "python -m ascend_aclnn bench") -> int:
    """The bench command on parsed options: check everything, then measure and print."""
    out, err = out or sys.stdout, err or sys.stderr
    p = prepare(args, prog, err)
    torch = p.torch
    rows: list[Row] = []
    bar = Progress(len(p.todo), err, p.progress)
    for case, dtype in p.todo:
        bar.step(f"{case.op} {case.size} {np.dtype(dtype).name}")
        rows.append(measure(case, dtype, p.repeat, torch, threads=case.size == "large"))
    bar.close()
    meta = {"numpy": np.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "torch": torch.__version__ if torch else None,
            "torch_threads": torch.get_num_threads() if torch else None, "repeat": p.repeat,
            "reference_threads": default_threads(),
            "options": {k: v for k, v in vars(args).items() if k != "command"}}
    verdicts = thread_verdicts(rows)
    worst = worst_vs_torch(rows)
    if p.todo:
        theirs = f"{meta['torch']} ({meta['torch_threads']} threads)" if torch else "not installed"
        out.write(f"NumPy {meta['numpy']}, Python {meta['python']}, {meta['machine']}, {meta['cpus']} CPUs; "
                  f"PyTorch {theirs}; reference threads {meta['reference_threads']}; medians of {p.repeat}\n")
        out.write(table(rows) + "\n")
        if verdicts:
            out.write("\n" + thread_report(verdicts) + "\n")
    cpu_rows: Optional[list[bench_cpu_reference.CpuRow]] = None
    if p.cpu_reference and torch is not None:
        from . import bench_cpu_reference as cpu
        if p.todo:
            out.write("\n")
        cpu_rows = cpu.section(torch, p.cpu_reference, p.repeat, out)
    npu_rows: Optional[list[NpuRow]] = None
    if p.npu:
        if p.todo or cpu_rows:
            out.write("\n")
        npu_rows = _npu_section(p, out, err)
    device_rows: Optional[list[dict[str, Any]]] = None
    if p.device:
        if p.todo or p.npu or cpu_rows:
            out.write("\n")
        device_rows = _device_section(p, out, err)
    if p.todo:
        out.write("\n" + worst_line(worst, torch) + "\n")
    out.flush()
    if p.json_path:
        with open(p.json_path, "w") as f:
            json.dump({"meta": meta, "numpy": meta["numpy"], "torch": meta["torch"], "rows": rows,
                       "threads": verdicts, "worst_vs_torch": worst, "npu_overhead": npu_rows,
                       "device": device_rows, "cpu_reference": cpu_rows}, f, indent=1)
    return EXIT_OK


def _device_section(p: BenchPlan, out: TextIO, err: TextIO) -> list[dict[str, Any]]:
    """Each operator's device time per call (testing.benchmark), its inputs already on the device."""
    import ascend_aclnn as aa
    from ..testing import benchmark
    from . import bench_npu

    def on_device(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return aa.to_device(v)
        if isinstance(v, (list, tuple)) and any(isinstance(x, np.ndarray) for x in v):
            return type(v)(on_device(x) for x in v)
        return v

    rows: list[dict[str, Any]] = []
    bar = Progress(len(p.device), err, p.progress)
    with aa.use_backend("npu"):
        for case, dtype in p.device:
            bar.step(f"{case.op} on the device")
            args, kwargs = case.make(np.random.default_rng(0), dtype)
            label = case.label or _describe(args, kwargs)
            args = tuple(on_device(a) for a in args)
            kwargs = {k: on_device(v) for k, v in kwargs.items()}
            fn = aa.aclnn.operator(case.op) if case.op.startswith("acl") else getattr(aa, case.op)
            r = benchmark(fn, *args, warmup=2, repeat=p.repeat, **kwargs)
            rows.append({"op": case.op, "shape": label, "dtype": np.dtype(dtype).name,
                         "device_median_s": r.device_median_ms / 1e3, "device_p10_s": r.device_p10_ms / 1e3,
                         "device_p90_s": r.device_p90_ms / 1e3, "host_median_s": r.host_median_ms / 1e3})
    bar.close()
    out.write(f"device time per call, {bench_npu.where()}; events around each call, {p.repeat} calls\n")
    head = ("operator", "dtype", "shape", "device us", "p10", "p90", "host us")
    lines = [head] + [(r["op"], r["dtype"], r["shape"], f"{r['device_median_s'] * 1e6:.1f}",
                       f"{r['device_p10_s'] * 1e6:.1f}", f"{r['device_p90_s'] * 1e6:.1f}",
                       f"{r['host_median_s'] * 1e6:.1f}") for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for line in lines:
        out.write("  ".join(v.ljust(w) if i < 3 else v.rjust(w) for i, (v, w) in enumerate(zip(line, widths))).rstrip()
                  + "\n")
    return rows


def _npu_section(p: BenchPlan, out: TextIO, err: TextIO) -> list[NpuRow]:
    from . import bench_npu
    npu_rows = bench_npu.measure(p.npu_calls, p.npu_rounds, progress=p.progress, err=err)
    out.write(f"{bench_npu.where()}; upsample_nearest_exact1d {bench_npu.SHAPE} -> {bench_npu.SIZE} float32; "
              f"medians of {p.npu_rounds} interleaved blocks of {p.npu_calls} calls\n")
    out.write(bench_npu.table(npu_rows) + "\n")
    return npu_rows


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """``python -m ascend_aclnn bench ...`` on its own: returns the exit status (2, with one
    line on stderr, for a bad option). Not through cli.py, which imports this module."""
    from .options import ArgumentParser, check_environment, run_command
    out, err = out or sys.stdout, err or sys.stderr
    prog = "python -m ascend_aclnn bench"
    parser = add_arguments(ArgumentParser(prog=prog, description=DESCRIPTION))

    def checked_run(args: Any) -> int:
        check_environment(prog)
        return run(args, out, err, prog)
    return run_command(parser, list(sys.argv[1:] if argv is None else argv), out, err, prog, checked_run)


if __name__ == "__main__":
    sys.exit(main())
