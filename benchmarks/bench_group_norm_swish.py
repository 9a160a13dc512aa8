"""group_norm_swish(_grad) on the numpy backend against PyTorch CPU, side by side.

    python benchmarks/bench_group_norm_swish.py [--dtypes float32 float16 bfloat16] [--reps 7]
                                                [--torch-threads 2] [--plain] [--cpu]

Shape (8, 320, 64, 64), 32 groups (bench's large row). Per dtype: the backend's fast
kernels (what `aa.group_norm_swish` runs on the numpy backend) and the description's
PyTorch baseline (forward native_group_norm then z * sigmoid(s z); backward the swish's
derivative, then native_group_norm_backward), in the same dtype, interleaved so both see
the same machine; with --plain also the plain reference (ascend_aclnn/reference/).
Medians in milliseconds, and the 1-minute load average before and after, since the
machine may be shared.

--cpu: the kernels' own CPU time instead (one thread each: ASCEND_ACLNN_REFERENCE_THREADS=1
and torch.set_num_threads(1), time.thread_time), which other processes on the machine
move much less than the wall clock. PyTorch is optional: without it only ours is timed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

N, C, H, W, G, S, EPS = 8, 320, 64, 64, 32, 1.0, 1e-5
DTYPES = ("float32", "float16", "bfloat16")


def _load() -> str:
    return "%.2f" % os.getloadavg()[0] if hasattr(os, "getloadavg") else "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--dtypes", nargs="+", choices=DTYPES, default=list(DTYPES))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--torch-threads", type=int, default=2, help="PyTorch intra-op threads (wall-clock mode)")
    ap.add_argument("--plain", action="store_true", help="also time the plain reference (slow)")
    ap.add_argument("--cpu", action="store_true", help="one thread each, CPU time of the calling thread")
    args = ap.parse_args(argv)
    if args.cpu:
        os.environ["ASCEND_ACLNN_REFERENCE_THREADS"] = "1"
    import ml_dtypes
    from ascend_aclnn import reference
    from ascend_aclnn.backends.numpy import group_norm as fast
    from ascend_aclnn.ops.group_norm import _torch_forward, _torch_grad
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1 if args.cpu else args.torch_threads)
    clock = time.thread_time if args.cpu else time.perf_counter
    print(f"(N, C, H, W) = {(N, C, H, W)}, {G} groups, swish_scale {S}, NumPy {np.__version__}, "
          + (f"PyTorch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "no PyTorch")
          + (", CPU time, one thread each" if args.cpu else ", wall clock") + f"; load average {_load()}")
    for name in args.dtypes:
        dt = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
        rng = np.random.default_rng(0)
        x, dy = (rng.standard_normal((N, C, H, W), dtype=np.float32).astype(dt) for _ in range(2))
        gamma, beta = (rng.standard_normal(C, dtype=np.float32).astype(dt) for _ in range(2))
        _, mean, rstd = fast.group_norm_swish(x, gamma, beta, G, "NCHW", EPS, True, S)
        calls: dict[str, Callable[[], Any]] = {
            "ours forward": lambda: fast.group_norm_swish(x, gamma, beta, G, "NCHW", EPS, True, S),
            "ours backward": lambda: fast.group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, G, "NCHW", S,
                                                                True, True, "corrected")}
        if args.plain:
            calls["plain forward"] = lambda: reference.group_norm_swish(x, gamma, beta, G, "NCHW", EPS, True, S)
            calls["plain backward"] = lambda: reference.group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, G,
                                                                              "NCHW", S, True, True)
        if torch is not None:
            def t(a: Any) -> Any:  # torch cannot read ml_dtypes' bfloat16: through float32
                return (torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16) if a.dtype == ml_dtypes.bfloat16
                        else torch.from_numpy(a))
            calls["torch forward"] = _torch_forward(torch, t(x), t(gamma), t(beta), G, "NCHW", EPS, True, S)
            calls["torch backward"] = _torch_grad(torch, t(dy), t(mean), t(rstd), t(x), t(gamma), t(beta), G)
        times: dict[str, list[float]] = {k: [] for k in calls}
        for fn in calls.values():  # warm-up
            fn()
        for _ in range(args.reps):
            for key, fn in calls.items():
                t0 = clock()
                fn()
                times[key].append(clock() - t0)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(f"{name} (load average {_load()}):")
        for key, ms in med.items():
            line = f"  {key:<16} {ms:8.1f} ms"
            other = "torch " + key.split()[1]
            if not key.startswith("torch") and other in med:
                line += f"   {ms / med[other]:5.2f}x PyTorch"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
