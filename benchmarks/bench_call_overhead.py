"""Per-call host cost of the npu path, side by side with a bare ctypes sequence of the same
calls: a thin wrapper around ``python -m ascend_aclnn bench --npu-only``.

    python benchmarks/bench_call_overhead.py [--calls 1000] [--blocks 7] [--json FILE]

Without CANN it builds the CANN simulator from native/ (once, cached as `bench --npu` caches it) and
measures there (the simulator's kernels are cheap for these sizes, so the rows are the
binding's own work). Medians of interleaved blocks; read the ratios.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    from ascend_aclnn.tools import bench
    from ascend_aclnn.tools.options import positive_int_type
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=positive_int_type, default=1000, help="calls per timed block")
    parser.add_argument("--blocks", type=positive_int_type, default=7, help="interleaved rounds of blocks")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    argv = ["--npu-only", "--npu-calls", str(args.calls), "--npu-rounds", str(args.blocks)]
    return bench.main(argv + (["--json", args.json] if args.json else []))


if __name__ == "__main__":
    sys.exit(main())
