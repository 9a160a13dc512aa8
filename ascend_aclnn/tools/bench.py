"""Benchmarks: the NumPy reference against PyTorch's CPU kernels and the memory floor.

    python -m ascend_aclnn bench [--ops NAME,...] [--sizes small,medium,large]
                                 [--dtypes float32,float16] [--repeat N] [--json FILE]

Every operator runs on a small, a medium and a cache-busting shape. Per row: the median
time of the reference; PyTorch's median for the same work when torch is importable (an
optional comparison, never a dependency), interleaved with ours in the same process so
both see the same machine; the memory floor (the median time of one NumPy copy of as many
bytes as the operator must read and write); and the peak memory the call allocates
beyond its inputs (tracemalloc). Medians, after a warm-up; the machine is noisy, so read
the ratios, which are measured side by side.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..tensors import bfloat16

MAKE = Callable[[np.random.Generator, np.dtype], tuple]  # -> (args, kwargs)
TORCH = Callable[[Any, tuple, dict], Callable[[], Any]]  # (torch, args, kwargs) -> a call


@dataclass(frozen=True)
class Case:
    op: str       # the ascend_aclnn function
    size: str     # small, medium or large
    label: str    # the shapes, for the table
    make: MAKE
    torch: Optional[TORCH] = None


def _randn(rng, shape, dtype) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False)


def _t(torch, a):
    """A NumPy array as a torch tensor (bfloat16 through float32: torch cannot read ml_dtypes)."""
    if a.dtype == bfloat16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


# ---- the operators' cases ------------------------------------------------------------------

def _upsample(n, c, l_in, l_out) -> list[Case]:
    fwd = Case("upsample_nearest_exact1d", "", f"({n}, {c}, {l_in}) -> {l_out}",
               lambda rng, dt: ((_randn(rng, (n, c, l_in), dt), [l_out]), {}),
               lambda torch, a, k: (lambda x=_t(torch, a[0]):
                                    torch.ops.aten._upsample_nearest_exact1d(x, [l_out], None)))
    bwd = Case("upsample_nearest_exact1d_backward", "", f"({n}, {c}, {l_out}) -> {l_in}",
               lambda rng, dt: ((_randn(rng, (n, c, l_out), dt), [l_out], [n, c, l_in]), {}),
               lambda torch, a, k: (lambda g=_t(torch, a[0]): torch.ops.aten._upsample_nearest_exact1d_backward(
                   g, [l_out], [n, c, l_in], None)))
    return [fwd, bwd]


def _pad(n, c, h, w, p) -> list[Case]:
    pads = [p, p, p, p]
    fwd = Case("replication_pad2d", "", f"({n}, {c}, {h}, {w}) pads {p}",
               lambda rng, dt: ((_randn(rng, (n, c, h, w), dt), pads), {}),
               lambda torch, a, k: (lambda x=_t(torch, a[0]): torch.ops.aten.replication_pad2d(x, pads)))
    bwd = Case("replication_pad2d_backward", "", f"({n}, {c}, {h + 2 * p}, {w + 2 * p}) -> ({h}, {w})",
               lambda rng, dt: ((_randn(rng, (n, c, h + 2 * p, w + 2 * p), dt),
                                 _randn(rng, (n, c, h, w), dt), pads), {}),
               lambda torch, a, k: (lambda g=_t(torch, a[0]), x=_t(torch, a[1]):
                                    torch.ops.aten.replication_pad2d_backward(g, x, pads)))
    return [fwd, bwd]


def _im2col(n, c, h, w, k, p) -> list[Case]:
    kk, dd, pp, ss = [k, k], [1, 1], [p, p], [1, 1]
    ho, wo = h + 2 * p - k + 1, w + 2 * p - k + 1
    fwd = Case("im2col", "", f"({n}, {c}, {h}, {w}) k={k} p={p}",
               lambda rng, dt: ((_randn(rng, (n, c, h, w), dt), kk, dd, pp, ss), {}),
               lambda torch, a, kw: (lambda x=_t(torch, a[0]): torch.ops.aten.im2col(x, kk, dd, pp, ss)))
    bwd = Case("im2col_backward", "", f"({n}, {c * k * k}, {ho * wo}) -> ({n}, {c}, {h}, {w})",
               lambda rng, dt: ((_randn(rng, (n, c * k * k, ho * wo), dt), [h, w], kk, dd, pp, ss), {}),
               lambda torch, a, kw: (lambda g=_t(torch, a[0]): torch.ops.aten.col2im(g, [h, w], kk, dd, pp, ss)))
    return [fwd, bwd]


def _max_pool(n, c, h, w, k, s, p) -> list[Case]:
    kk, ss, pp, dd = [k, k], [s, s], [p, p], [1, 1]
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1

    def backward_args(rng, dt):
        import ascend_aclnn as aa
        x = _randn(rng, (n, c, h, w), dt)
        with aa.use_backend("numpy"):
            _, mask = aa.max_pool2d_with_mask(x, kk, ss, pp, dd, False)
        return (_randn(rng, (n, c, ho, wo), dt), x, mask, kk, ss, pp, dd, False), {}

    def torch_backward(torch, a, kw):
        x = _t(torch, a[1])
        _, idx = torch.ops.aten.max_pool2d_with_indices(x, kk, ss, pp, dd, False)
        g = _t(torch, a[0])
        return lambda: torch.ops.aten.max_pool2d_with_indices_backward(g, x, kk, ss, pp, dd, False, idx)

    fwd = Case("max_pool2d_with_mask", "", f"({n}, {c}, {h}, {w}) k={k} s={s} p={p}",
               lambda rng, dt: ((_randn(rng, (n, c, h, w), dt), kk, ss, pp, dd, False), {}),
               lambda torch, a, kw: (lambda x=_t(torch, a[0]):
                                     torch.ops.aten.max_pool2d_with_indices(x, kk, ss, pp, dd, False)))
    bwd = Case("max_pool2d_with_mask_backward", "", f"({n}, {c}, {ho}, {wo}) -> ({h}, {w})",
               backward_args, torch_backward)
    return [fwd, bwd]


def _group_norm(n, c, hw, g) -> list[Case]:
    shape = (n, c, hw[0], hw[1])
    m = math.prod(hw)

    def fwd_args(rng, dt):
        return (_randn(rng, shape, dt), _randn(rng, (c,), dt), _randn(rng, (c,), dt), g), {}

    def torch_fwd(torch, a, kw):
        x, gamma, beta = (_t(torch, v) for v in a[:3])

        def run():
            y, mean, rstd = torch.ops.aten.native_group_norm(x, gamma, beta, n, c, m, g, 1e-5)
            return y * torch.sigmoid(y), mean, rstd
        return run

    def bwd_args(rng, dt):
        import ascend_aclnn as aa
        (x, gamma, beta, _), _ = fwd_args(rng, dt)
        with aa.use_backend("numpy"):
            _, mean, rstd = aa.group_norm_swish(x, gamma, beta, g)
        return (_randn(rng, shape, dt), mean, rstd, x, gamma, beta, g), {}

    def torch_bwd(torch, a, kw):
        dy, mean, rstd, x, gamma, beta = (_t(torch, v) for v in a[:6])

        def run():  # the swish derivative, then PyTorch's group-norm backward
            xhat = (x.view(n, g, -1) - mean.view(n, g, 1)) * rstd.view(n, g, 1)
            z = xhat.view(shape) * gamma.view(1, c, 1, 1) + beta.view(1, c, 1, 1)
            sig = torch.sigmoid(z)
            gz = dy * sig * (1 + z * (1 - sig))
            return torch.ops.aten.native_group_norm_backward(gz, x, mean, rstd, gamma, n, c, m, g,
                                                             [True, True, True])
        return run

    fwd = Case("group_norm_swish", "", f"({n}, {c}, {hw[0]}, {hw[1]}) G={g}", fwd_args, torch_fwd)
    bwd = Case("group_norm_swish_grad", "", f"({n}, {c}, {hw[0]}, {hw[1]}) G={g}", bwd_args, torch_bwd)
    return [fwd, bwd]


def _sized(size: str, cases: list[Case]) -> list[Case]:
    return [Case(c.op, size, c.label, c.make, c.torch) for c in cases]


def all_cases() -> list[Case]:
    """Every operator on a small, a medium and a cache-busting (large) shape; the large rows
    are the shapes the targets are stated on."""
    rows = []
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


# ---- measuring ------------------------------------------------------------------------------

def _nbytes(values) -> int:
    total = 0
    for v in values if isinstance(values, tuple) else (values,):
        if isinstance(v, np.ndarray):
            total += v.nbytes
    return total


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


def measure(case: Case, dtype: np.dtype, repeat: int, torch: Any = None, seed: int = 0) -> dict:
    """One row: ours, PyTorch (if given) and the copy floor, interleaved, medians in seconds."""
    import ascend_aclnn as aa
    fn = getattr(aa, case.op)
    args, kwargs = case.make(np.random.default_rng(seed), dtype)
    with aa.use_backend("numpy"):
        def ours():
            return fn(*args, **kwargs)
        result = ours()  # warm-up, and the output size
        moved = _nbytes(args) + _nbytes(result)
        src = np.ones(max(1, moved // 2), np.uint8)  # a copy of n bytes reads n and writes n
        dst = np.empty_like(src)
        theirs = case.torch(torch, args, kwargs) if (torch is not None and case.torch) else None
        if theirs is not None:
            theirs()
        times: dict[str, list[float]] = {"ours": [], "torch": [], "floor": []}
        for _ in range(repeat):
            for key, call in (("ours", ours), ("torch", theirs), ("floor", lambda: np.copyto(dst, src))):
                if call is None:
                    continue
                t0 = time.perf_counter()
                call()
                times[key].append(time.perf_counter() - t0)
        peak = _peak_extra(ours)
    med = {k: statistics.median(v) if v else None for k, v in times.items()}
    row = {"op": case.op, "size": case.size, "shape": case.label, "dtype": np.dtype(dtype).name,
           "ours_s": med["ours"], "torch_s": med["torch"], "floor_s": med["floor"],
           "bytes_moved": moved, "peak_extra_bytes": peak,
           "peak_vs_io": peak / moved if moved else None}
    row["vs_torch"] = med["ours"] / med["torch"] if med["torch"] else None
    row["vs_floor"] = med["ours"] / med["floor"] if med["floor"] else None
    return row


def _fmt_ms(s: Optional[float]) -> str:
    return "-" if s is None else f"{s * 1e3:9.3f}"


def _fmt_x(r: Optional[float]) -> str:
    return "-" if r is None else f"{r:6.2f}x"


def table(rows: Sequence[dict]) -> str:
    head = (f"{'function':<34} {'size':<6} {'shape':<34} {'dtype':<8} {'ours ms':>9} {'torch ms':>9} "
            f"{'/torch':>7} {'floor ms':>9} {'/floor':>7} {'peak MB':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['op']:<34} {r['size']:<6} {r['shape']:<34} {r['dtype']:<8} {_fmt_ms(r['ours_s'])} "
                     f"{_fmt_ms(r['torch_s'])} {_fmt_x(r['vs_torch']):>7} {_fmt_ms(r['floor_s'])} "
                     f"{_fmt_x(r['vs_floor']):>7} {r['peak_extra_bytes'] / 2**20:8.1f}")
    return "\n".join(lines)


def _import_torch(wanted: bool) -> Any:
    if not wanted:
        return None
    # PyTorch's OpenMP workers otherwise spin for a while after each call, and ours runs
    # right after torch's on the same cores: it would be timed against two busy threads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        return None
    return torch


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ascend_aclnn bench",
                                     description="Time the NumPy reference of every operator against "
                                                 "PyTorch CPU (when installed) and the memory floor.")
    parser.add_argument("--ops", help="comma-separated function names (default: all ten)")
    parser.add_argument("--sizes", default="small,medium,large", help="comma-separated: small, medium, large")
    parser.add_argument("--dtypes", default="float32,float16", help="comma-separated dtype names")
    parser.add_argument("--repeat", type=int, default=7, help="timed repetitions per row (median)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    npu = parser.add_mutually_exclusive_group()
    npu.add_argument("--npu", action="store_true",
                     help="also measure the npu path's host overhead per call (default: when the npu backend "
                          "is available); without CANN, on the simulator built from native/ in a checkout")
    npu.add_argument("--npu-only", action="store_true", help="only the npu host-overhead section")
    npu.add_argument("--no-npu", action="store_true", help="skip the npu host-overhead section")
    parser.add_argument("--npu-calls", type=int, default=1000, help="calls per timed block (npu section)")
    parser.add_argument("--npu-rounds", type=int, default=7, help="interleaved rounds of blocks (npu section)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.npu_calls < 1 or args.npu_rounds < 1:
        parser.error("--repeat, --npu-calls and --npu-rounds must be at least 1")
    cases = all_cases()
    known = sorted({c.op for c in cases})
    ops = args.ops.split(",") if args.ops else known
    for name in ops:
        if name not in known:
            parser.error(f"--ops: unknown function {name!r}; choose from {', '.join(known)}")
    sizes = args.sizes.split(",")
    dtypes = [bfloat16 if d == "bfloat16" else np.dtype(d) for d in args.dtypes.split(",")]
    torch = _import_torch(not args.no_torch)
    todo = [(c, d) for c in cases if c.op in ops and c.size in sizes for d in dtypes] if not args.npu_only else []
    rows = []
    for i, (case, dtype) in enumerate(todo, 1):
        print(f"\r[{i}/{len(todo)}] {case.op} {case.size} {np.dtype(dtype).name}".ljust(79),
              end="", file=sys.stderr, flush=True)
        rows.append(measure(case, dtype, args.repeat, torch))
    print("\r" + " " * 79 + "\r", end="", file=sys.stderr, flush=True)
    import platform
    print(f"NumPy {np.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{__import__('os').cpu_count()} CPUs; PyTorch "
          f"{torch.__version__ + f' ({torch.get_num_threads()} threads)' if torch else 'not installed'}; "
          f"medians of {args.repeat}")
    if todo:
        print(table(rows))
    npu_rows, status = _npu_section(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"numpy": np.__version__, "torch": torch.__version__ if torch else None, "rows": rows,
                       "npu_overhead": npu_rows}, f, indent=1)
    return status


def _npu_section(args) -> tuple[Optional[list], int]:
    """The npu host-overhead rows (bench_npu.py), or None when skipped; and an exit status."""
    if args.no_npu:
        return None, 0
    from . import bench_npu
    from ..backends import npu_available
    wanted = args.npu or args.npu_only
    if not npu_available():
        if not wanted:
            return None, 0
        import os
        from ..cann import loader
        prefix = bench_npu.simulator_prefix()
        if prefix is None:
            print("bench: the npu backend is unavailable and the CANN simulator could not be built "
                  "(needs a source checkout with native/ and a C compiler)", file=sys.stderr)
            return None, 2
        os.environ["ASCEND_HOME_PATH"] = prefix
        os.environ["ASCEND_ACLNN_BENCH_SIM"] = "1"
        loader.forget_load_failure()  # the simulator is there now
        if not npu_available():
            print("bench: the CANN simulator was built but does not load", file=sys.stderr)
            return None, 2
    npu_rows = bench_npu.measure(args.npu_calls, args.npu_rounds)
    print()
    print(f"{bench_npu.where()}; upsample_nearest_exact1d (2, 3, 4) -> 9 float32; medians of "
          f"{args.npu_rounds} interleaved blocks of {args.npu_calls} calls")
    print(bench_npu.table(npu_rows))
    return npu_rows, 0


if __name__ == "__main__":
    sys.exit(main())
