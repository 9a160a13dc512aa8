"""The CPU reference's cost per raw call against the PyTorch call it stands for, side by side.

    python benchmarks/bench_cpu_reference.py [--rounds 7] [--json FILE]

On the numpy backend, `aa.aclnn.Add/Mul/Softmax/ReduceSum/Mm` with outputs preallocated by
the caller, against PyTorch's `out=` call on `torch.from_numpy` views of the same arrays
(float32; 1,000 and 1,000,000 elements as (10, 100) and (1000, 1000), the reduction and
softmax over the last axis; Mm's square matrices of about as many elements), plus a plan of a raw operator (`aa.plan(aa.aclnn.Add, ...)`,
run as `p()` and as `p(a, b, 1.0, out)`). Each round times a block of calls of every row,
ours then PyTorch's, so both see the same machine; printed are the medians per call over
the rounds, ours minus PyTorch's (the per-call overhead) and ours / PyTorch's (the ratio
issue 40's goals are stated on: at most 20 us more at 1,000 elements, 10 us for a plan, and
at most 1.25x at 1,000,000). The first raw call of the process is timed too, with the
import of torch it needs. Needs PyTorch (the CPU reference runs on it).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SIZES = {1000: (10, 100), 1_000_000: (1000, 1000)}
SQUARE = {1000: 32, 1_000_000: 1000}  # Mm's side
CALLS = {1000: 200, 1_000_000: 5}  # calls per timed block


def block_time(fn: Callable[[], Any], calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (the medians are over these)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as bench: torch's idle workers must not spin

    # what importing torch alone costs, in a fresh process: the first raw call's floor
    probe = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"
    torch_import = float(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                                        text=True).stdout)
    import ascend_aclnn as aa
    t0 = time.perf_counter()
    a0, b0 = np.ones(4, np.float32), np.ones(4, np.float32)
    with aa.use_backend("numpy"):
        aa.aclnn.Add(a0, b0, 1.0, np.empty(4, np.float32))  # imports torch and loads the table
    first_call = time.perf_counter() - t0
    import torch
    f32 = np.float32
    rng = np.random.default_rng(0)

    # name -> (ours, theirs) per size
    rows: list[tuple[str, int, Callable[[], Any], Callable[[], Any]]] = []
    plans = []
    for n, shape in SIZES.items():
        a, b = rng.standard_normal(shape, dtype=f32), rng.standard_normal(shape, dtype=f32)
        out, red = np.empty(shape, f32), np.empty(shape[:1], f32)
        ta, tb, tout, tred = (torch.from_numpy(v) for v in (a, b, out, red))
        k = SQUARE[n]
        m1, m2, mo = (rng.standard_normal((k, k), dtype=f32) for _ in range(3))
        tm1, tm2, tmo = (torch.from_numpy(v) for v in (m1, m2, mo))
        with aa.use_backend("numpy"):
            p = aa.plan(aa.aclnn.Add, a, b, 1.0, out)
        plans.append(p)
        rows += [
            ("Add(a, b, 1.0, out) / torch.add(out=)", n,
             lambda a=a, b=b, out=out: aa.aclnn.Add(a, b, 1.0, out),
             lambda ta=ta, tb=tb, tout=tout: torch.add(ta, tb, alpha=1, out=tout)),
            ("Mul(a, b, out) / torch.mul(out=)", n,
             lambda a=a, b=b, out=out: aa.aclnn.Mul(a, b, out),
             lambda ta=ta, tb=tb, tout=tout: torch.mul(ta, tb, out=tout)),
            ("Softmax(a, -1, out) / aten._softmax.out", n,
             lambda a=a, out=out: aa.aclnn.Softmax(a, -1, out),
             lambda ta=ta, tout=tout: torch.ops.aten._softmax.out(ta, -1, False, out=tout)),
            ("ReduceSum(a, [-1], False, f32, out) / torch.sum(out=)", n,
             lambda a=a, red=red: aa.aclnn.ReduceSum(a, [-1], False, f32, red),
             lambda ta=ta, tred=tred: torch.sum(ta, dim=-1, out=tred)),
            ("Mm(m1, m2, out, 0) / torch.mm(out=)", n,
             lambda m1=m1, m2=m2, mo=mo: aa.aclnn.Mm(m1, m2, mo, 0),
             lambda tm1=tm1, tm2=tm2, tmo=tmo: torch.mm(tm1, tm2, out=tmo)),
            ("plan of Add: p() / torch.add(out=)", n, p,
             lambda ta=ta, tb=tb, tout=tout: torch.add(ta, tb, alpha=1, out=tout)),
            ("plan of Add: p(a, b, 1.0, out) / torch.add(out=)", n,
             lambda p=p, a=a, b=b, out=out: p(a, b, 1.0, out),
             lambda ta=ta, tb=tb, tout=tout: torch.add(ta, tb, alpha=1, out=tout)),
        ]
    times: dict[int, tuple[list[float], list[float]]] = {i: ([], []) for i in range(len(rows))}
    with aa.use_backend("numpy"):
        for _, _, ours, theirs in rows:  # warm-up
            ours()
            theirs()
        for _ in range(args.rounds):
            for i, (_, n, ours, theirs) in enumerate(rows):
                times[i][0].append(block_time(ours, CALLS[n]))
                times[i][1].append(block_time(theirs, CALLS[n]))
    for p in plans:
        p.close()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"NumPy {np.__version__}, PyTorch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{load:.1f}; numpy backend, float32, medians of {args.rounds} interleaved rounds")
    print(f"first raw call of the process (imports torch, loads the table): {first_call:.2f} s; "
          f"importing torch alone, in another process: {torch_import:.2f} s")
    head = f"{'call':<54} {'elements':>9} {'ours us':>10} {'torch us':>10} {'ours-torch':>11} {'ours/torch':>10}"
    print(head)
    print("-" * len(head))
    out_rows = []
    for i, (name, n, _, _) in enumerate(rows):
        ours_s, theirs_s = statistics.median(times[i][0]), statistics.median(times[i][1])
        print(f"{name:<54} {n:>9,} {ours_s * 1e6:10.1f} {theirs_s * 1e6:10.1f} {(ours_s - theirs_s) * 1e6:11.1f} "
              f"{ours_s / theirs_s:9.2f}x")
        out_rows.append({"call": name, "elements": n, "ours_s": ours_s, "torch_s": theirs_s,
                         "overhead_s": ours_s - theirs_s, "ratio": ours_s / theirs_s})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"numpy": np.__version__, "torch": torch.__version__, "load_average": load,
                       "rounds": args.rounds, "first_call_s": first_call, "torch_import_s": torch_import, "rows": out_rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
