"""Host time of ``free()`` of an array that work queued on another stream still reads, with
the allocator's events (free() records one on that stream and returns) side by side with
the rule before them (free() waits for that stream), in one run.

    python benchmarks/bench_cross_stream_free.py [--queued 20] [--rounds 7] [--repeat 20]

Without CANN (ASCEND_HOME_PATH unset) it builds the CANN simulator from the package's sources (once,
cached as `bench --npu` caches it) and measures there; its kernels run on the host at a sync, so waiting
costs the queued work's CPU time where an NPU would cost its device time. Each trial
queues ``queued`` upsamples of x (1, 64, 4096) float32 on a side stream, then times
x.free() from the default stream's context; the side stream is synchronised after the
timed free(). Rounds interleave the two forms; medians.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from _cann import cann_or_simulator  # this checkout's package, and a CANN to run on


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queued", type=int, default=20, help="launches queued on the side stream before the free")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--repeat", type=int, default=20, help="timed frees per form and round")
    args = parser.parse_args()
    why = cann_or_simulator()
    if why:
        print(why, file=sys.stderr)
        return 2
    import numpy as np

    import ascend_aclnn as aa
    from ascend_aclnn.backends.npu import runtime

    host = np.ones((1, 64, 4096), np.float32)
    with aa.use_backend("npu"):
        side = aa.Stream()
        out = aa.empty((1, 64, 8192))

        def one_free(bound: int) -> float:
            x = aa.to_device(host)
            with aa.stream(side):
                for _ in range(args.queued):
                    aa.upsample_nearest_exact1d(x, [8192], out=out)
            runtime.MAX_FREE_EVENTS = bound
            t0 = time.perf_counter()
            x.free()
            dt = time.perf_counter() - t0
            side.synchronize()
            return dt

        # MAX_FREE_EVENTS = 0 makes every free() take the fallback: wait for the users' streams
        forms = {"free() waits for the side stream (before)": 0,
                 "free() records an event (now)": runtime.MAX_FREE_EVENTS}
        times: dict[str, list[float]] = {k: [] for k in forms}
        for bound in forms.values():  # warm-up
            one_free(bound)
        for _ in range(args.rounds):
            for name, bound in forms.items():
                times[name].append(statistics.median(one_free(bound) for _ in range(args.repeat)))
        runtime.MAX_FREE_EVENTS = forms["free() records an event (now)"]
        side.close()
    base = statistics.median(times["free() waits for the side stream (before)"])
    print(f"host time of x.free() with {args.queued} upsamples of x (1, 64, 4096) queued on another stream, "
          f"medians of {args.rounds} interleaved rounds of {args.repeat} frees")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:44s} {m * 1e6:10.1f} us  {m / base:7.4f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
