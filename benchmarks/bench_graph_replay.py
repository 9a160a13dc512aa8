"""Host cost per operator of replaying a captured loop of small queued calls, side by side
with the same calls made eagerly (and as a plan), in one run.

    python benchmarks/bench_graph_replay.py [--calls 100] [--rounds 7] [--repeat 20]

Without CANN (ASCEND_HOME_PATH unset) it builds the CANN simulator from the package's sources (once,
cached as `bench --npu` caches it) and measures there: the rows are the binding's host work (the simulator's
kernels for these sizes are cheap, and run only at the final sync of each block). Each
block queues `repeat` loops of `calls` calls on DeviceArrays with out= given, then waits;
rounds interleave the three forms; medians per operator.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from _cann import cann_or_simulator  # this checkout's package, and a CANN to run on


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100, help="small calls in the loop")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--repeat", type=int, default=20, help="loops per timed block")
    args = parser.parse_args()
    why = cann_or_simulator()
    if why:
        print(why, file=sys.stderr)
        return 2
    import numpy as np

    import ascend_aclnn as aa
    with aa.use_backend("npu"):
        x = aa.to_device(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        out = aa.empty((2, 3, 9))
        f = aa.upsample_nearest_exact1d
        p = aa.plan(f, x, [9], out=out)

        def eager() -> None:
            for _ in range(args.calls):
                f(x, [9], out=out)

        def planned() -> None:
            for _ in range(args.calls):
                p(x, [9], out=out)

        g = aa.Graph()
        with aa.graph(g):
            eager()

        forms = {"eager call, out= given": eager, "plan run, out= given": planned, "graph replay": g.replay}
        times: dict[str, list[float]] = {k: [] for k in forms}
        for fn in forms.values():  # warm-up
            fn()
        aa.synchronize()
        for _ in range(args.rounds):
            for name, fn in forms.items():
                t0 = time.perf_counter()
                for _ in range(args.repeat):
                    fn()
                times[name].append((time.perf_counter() - t0) / (args.repeat * args.calls))
                aa.synchronize()  # outside the timed block: the host cost is the queueing
        g.close()
        p.close()
    base = statistics.median(times["eager call, out= given"])
    print(f"host cost per operator, a loop of {args.calls} calls of upsample_nearest_exact1d (2, 3, 4) -> 9, "
          f"medians of {args.rounds} interleaved rounds of {args.repeat} loops")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:28s} {m * 1e6:8.2f} us  {m / base:6.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
