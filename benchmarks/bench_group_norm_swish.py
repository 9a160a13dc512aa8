"""The NumPy reference of group_norm_swish(_grad) against a PyTorch CPU composite.

    python benchmarks/bench_group_norm_swish.py [--reps 15] [--threads 1]

Shape (8, 320, 64, 64), 32 groups, float32. The composite is what PyTorch offers: forward
native_group_norm then z * sigmoid(s * z); backward the swish's derivative (recomputing z
from mean/rstd) then native_group_norm_backward. PyTorch is optional: without it only the
reference is timed. Medians in milliseconds; run on an idle machine.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ascend_aclnn.reference import group_norm_swish, group_norm_swish_grad  # noqa: E402

N, C, H, W, G, S, EPS = 8, 320, 64, 64, 32, 1.0, 1e-5


def median_ms(fn, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1, help="PyTorch intra-op threads (NumPy uses one)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    x, dy = (rng.standard_normal((N, C, H, W), dtype=np.float32) for _ in range(2))
    gamma, beta = (rng.standard_normal(C, dtype=np.float32) for _ in range(2))
    _, mean, rstd = group_norm_swish(x, gamma, beta, G, "NCHW", EPS, True, S)
    rows = [("reference forward", median_ms(lambda: group_norm_swish(x, gamma, beta, G, "NCHW", EPS, True, S),
                                            args.reps)),
            ("reference backward", median_ms(lambda: group_norm_swish_grad(dy, mean, rstd, x, gamma, beta, G,
                                                                           "NCHW", S, True, True), args.reps))]
    try:
        import torch
    except ImportError:
        print("(PyTorch not installed: reference only)")
    else:
        torch.set_num_threads(args.threads)
        tx, tdy, tg, tb = (torch.from_numpy(a) for a in (x, dy, gamma, beta))
        hw = H * W
        _, tmean, trstd = torch.ops.aten.native_group_norm(tx, tg, tb, N, C, hw, G, EPS)

        def forward():
            z, m, r = torch.ops.aten.native_group_norm(tx, tg, tb, N, C, hw, G, EPS)
            return z * torch.sigmoid(S * z), m, r

        def backward():
            z = ((tx.view(N, G, -1) - tmean[..., None]) * trstd[..., None]).view(N, C, hw) * tg[:, None] + tb[:, None]
            sig = torch.sigmoid(S * z)
            gz = (tdy.view(N, C, hw) * (sig * (1 + S * z * (1 - sig)))).view_as(tx)
            return torch.ops.aten.native_group_norm_backward(gz, tx, tmean, trstd, tg, N, C, hw, G, [True] * 3)

        label = f"PyTorch {torch.__version__} ({args.threads} thread{'s' if args.threads > 1 else ''})"
        rows += [(f"{label} forward", median_ms(forward, args.reps)),
                 (f"{label} backward", median_ms(backward, args.reps))]
    print(f"(N, C, H, W) = {(N, C, H, W)}, {G} groups, float32, NumPy {np.__version__}")
    for name, ms in rows:
        print(f"  {name:<40} {ms:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
