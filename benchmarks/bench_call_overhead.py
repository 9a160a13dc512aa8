"""Per-call host cost of the npu path, measured on the CANN simulator, side by side with a
hand-written minimal ctypes sequence for the same operator, and the NumPy backend.

    python benchmarks/bench_call_overhead.py [--calls 2000] [--blocks 7]

The simulator's kernels are cheap for these sizes, so the npu numbers are dominated by the
binding's own work (validation, handles, two phases, memory) plus the simulator's C side.
Medians of per-block means; run it on an idle machine and compare ratios, not absolutes.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "native"))


def timed(fn, calls: int, blocks: int) -> float:
    """Median over blocks of the mean seconds per call."""
    fn()
    per_block = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_block.append((time.perf_counter() - t0) / calls)
    return statistics.median(per_block)


def raw_ctypes_forward(lib_dir: Path, x: np.ndarray, size: int):
    """The same operator through bare ctypes: what the binding would cost with no design at
    all (no checks, no caching allocator, no handle scope), as a floor for comparison."""
    rt = ctypes.CDLL(str(lib_dir / "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
    nn = ctypes.CDLL(str(lib_dir / "libnnopbase.so"), mode=ctypes.RTLD_GLOBAL)
    ops = ctypes.CDLL(str(next(lib_dir.glob("libopapi*.so"))))
    P, i64, vp = ctypes.POINTER, ctypes.c_int64, ctypes.c_void_p
    nn.aclCreateTensor.restype = vp
    nn.aclCreateTensor.argtypes = [P(i64), ctypes.c_uint64, ctypes.c_int, P(i64), i64, ctypes.c_int, P(i64), ctypes.c_uint64, vp]
    nn.aclCreateIntArray.restype = vp
    nn.aclCreateIntArray.argtypes = [P(i64), ctypes.c_uint64]
    nn.aclDestroyTensor.argtypes = nn.aclDestroyIntArray.argtypes = [vp]
    p1 = ops.aclnnUpsampleNearestExact1dGetWorkspaceSize
    p1.argtypes = [vp, vp, ctypes.c_double, vp, P(ctypes.c_uint64), P(vp)]
    p2 = ops.aclnnUpsampleNearestExact1d
    p2.argtypes = [vp, ctypes.c_uint64, vp, vp]
    rt.aclrtMalloc.argtypes = [P(vp), ctypes.c_size_t, ctypes.c_int]
    rt.aclrtMemcpy.argtypes = [vp, ctypes.c_size_t, vp, ctypes.c_size_t, ctypes.c_int]
    rt.aclrtCreateStream.argtypes = [P(vp)]
    rt.aclrtSynchronizeStream.argtypes = rt.aclrtFree.argtypes = [vp]
    rt.aclInit(None)
    rt.aclrtSetDevice(0)
    stream = vp()
    rt.aclrtCreateStream(ctypes.byref(stream))
    out = np.empty(x.shape[:2] + (size,), x.dtype)
    dx, dy = vp(), vp()
    rt.aclrtMalloc(ctypes.byref(dx), 4096, 0)
    rt.aclrtMalloc(ctypes.byref(dy), 4096, 0)

    def call():
        rt.aclrtMemcpy(dx, 4096, x.ctypes.data, x.nbytes, 1)
        shp = (i64 * 3)(*x.shape)
        oshp = (i64 * 3)(*out.shape)
        tx = nn.aclCreateTensor(shp, 3, 0, None, 0, 47, shp, 3, dx)
        ty = nn.aclCreateTensor(oshp, 3, 0, None, 0, 47, oshp, 3, dy)
        arr = nn.aclCreateIntArray((i64 * 1)(size), 1)
        ws, ex = ctypes.c_uint64(), vp()
        assert p1(tx, arr, 0.0, ty, ctypes.byref(ws), ctypes.byref(ex)) == 0
        assert p2(None, 0, ex, stream) == 0
        nn.aclDestroyTensor(tx)
        nn.aclDestroyTensor(ty)
        nn.aclDestroyIntArray(arr)
        rt.aclrtSynchronizeStream(stream)
        rt.aclrtMemcpy(out.ctypes.data, out.nbytes, dy, out.nbytes, 2)
        return out
    return call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--blocks", type=int, default=7)
    args = parser.parse_args()
    import build
    prefix = Path(tempfile.mkdtemp(prefix="cann-sim-bench-"))
    lib_dir = Path(build.build(prefix))
    os.environ["ASCEND_HOME_PATH"] = str(prefix)
    import ascend_aclnn as aa
    from ascend_aclnn.ops import SPECS

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = np.ones((2, 3, 9), np.float32)
    rows = []
    with aa.use_backend("npu"):
        spec = SPECS["upsample_nearest_exact1d"]
        rows.append(("validation only (spec.bind)", timed(lambda: spec.bind((x, [9]), {}), args.calls, args.blocks)))
        rows.append(("npu: forward, NumPy in/out (upload, 2 phases, sync, download)",
                     timed(lambda: aa.upsample_nearest_exact1d(x, [9]), args.calls, args.blocks)))
        rows.append(("npu: backward, NumPy in/out",
                     timed(lambda: aa.upsample_nearest_exact1d_backward(g, [9], [2, 3, 4]), args.calls, args.blocks)))
        dx = aa.to_device(x)

        def chained():
            aa.upsample_nearest_exact1d(dx, [9])
            aa.synchronize()
        rows.append(("npu: forward, DeviceArray in/out (+ one sync)", timed(chained, args.calls, args.blocks)))
    raw = raw_ctypes_forward(lib_dir, x, 9)
    with aa.use_backend("numpy"):
        rows.append(("numpy backend: forward", timed(lambda: aa.upsample_nearest_exact1d(x, [9]), args.calls, args.blocks)))
        rows.append(("numpy backend: backward",
                     timed(lambda: aa.upsample_nearest_exact1d_backward(g, [9], [2, 3, 4]), args.calls, args.blocks)))
    np.testing.assert_array_equal(raw(), aa.upsample_nearest_exact1d(x, [9]))
    raw_t = timed(raw, args.calls, args.blocks)
    rows.append(("bare ctypes sequence, same forward (no checks, no caching)", raw_t))
    print(f"{'what':<66} {'median us/call':>14} {'vs bare ctypes':>15}")
    for name, t in rows:
        print(f"{name:<66} {t * 1e6:>14.1f} {t / raw_t:>14.2f}x")


if __name__ == "__main__":
    main()
