"""The CPU reference's cost per raw call against the PyTorch call it stands for, side by side.

    python benchmarks/bench_cpu_reference.py [--rounds 7] [--threads N] [--json FILE]

The rows are `bench --cpu-reference`'s (ascend_aclnn/tools/bench_cpu_reference.py, the one
list of them: Add, Mul, ReduceSum, Softmax, Matmul and a plan of Add run as `p()` and as
`p(a, b, 1.0, out)`, float32, outputs preallocated, against PyTorch's `out=` call on
`torch.from_numpy` views of the same arrays), at 1,000 and 1,000,000 elements ((10, 100)
and (1000, 1000)). Each round times a block of calls of each side, alternating which goes
first, each block after one untimed call of its own (both sides warm). Printed are the
medians per call, ours minus PyTorch's (the per-call overhead) and ours / PyTorch's (the
ratio issue 40's goals are stated on: at most 20 us more at 1,000 elements, 10 us for a
plan, and at most 1.25x at 1,000,000), with the load average before and after: on a shared
machine, read the ratios of one run, not absolute times. The first raw call of the process
is timed too, against importing torch alone in another process. Needs PyTorch.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ELEMENTS = {"small": 1000, "large": 1_000_000}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (the medians are over these)")
    ap.add_argument("--threads", type=int, help="PyTorch's intra-op threads (default: its own choice)")
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
    from ascend_aclnn.tools import bench_cpu_reference as cpu
    if args.threads:
        torch.set_num_threads(args.threads)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = cpu.measure(torch, list(ELEMENTS), args.rounds)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    print(f"NumPy {np.__version__}, PyTorch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{load_before:.1f} before, {load:.1f} after; numpy backend, float32, medians of {args.rounds} "
          f"interleaved rounds")
    print(f"first raw call of the process (imports torch, loads the table): {first_call:.2f} s; "
          f"importing torch alone, in another process: {torch_import:.2f} s")
    head = f"{'call':<32} {'elements':>9} {'ours us':>10} {'torch us':>10} {'ours-torch':>11} {'ours/torch':>10}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['call']:<32} {ELEMENTS[r['size']]:>9,} {r['ours_s'] * 1e6:10.1f} {r['torch_s'] * 1e6:10.1f} "
              f"{r['overhead_s'] * 1e6:11.1f} {r['vs_torch']:9.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"numpy": np.__version__, "torch": torch.__version__, "threads": torch.get_num_threads(),
                       "load_average": [load_before, load], "rounds": args.rounds, "first_call_s": first_call,
                       "torch_import_s": torch_import, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
