"""Run the UpsampleNearestExact1d operator family on the default backend and say what it did.

    python examples/demo.py                 # auto: the NPU if CANN finds one, else NumPy
    python examples/demo.py --backend npu   # insist on the NPU (fails clearly without one)
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ascend_aclnn as aa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["auto", "npu", "numpy"], default=None)
    args = parser.parse_args()
    if args.backend:
        aa.set_backend(args.backend)

    backend = aa.get_backend()
    where = "NumPy reference (no Ascend NPU found)"
    if backend == "npu":
        from ascend_aclnn.cann.loader import get_cann
        where = f"Ascend NPU {aa.get_device()} of {aa.device_count()}, CANN libraries in {get_cann().lib_dir}"
    print(f"ascend_aclnn {aa.__version__} on the {backend} backend: {where}\n")

    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    y = aa.upsample_nearest_exact1d(x, [8])
    print("upsample_nearest_exact1d: (2, 3, 5) -> (2, 3, 8)")
    print(f"  input [0, 0]  {x[0, 0].tolist()}")
    print(f"  output[0, 0]  {y[0, 0].tolist()}\n")

    grad = np.ones_like(y)
    gx = aa.upsample_nearest_exact1d_backward(grad, [8], list(x.shape))
    print("upsample_nearest_exact1d_backward of an all-ones gradient:")
    print(f"  each input position received {gx[0, 0].tolist()} output gradients")
    rng = np.random.default_rng(0)
    g = rng.standard_normal(y.shape).astype(np.float32)
    lhs = float(np.vdot(aa.upsample_nearest_exact1d(x, [8]), g))
    rhs = float(np.vdot(x, aa.upsample_nearest_exact1d_backward(g, [8], list(x.shape))))
    print(f"  adjoint check <fwd(x), g> = {lhs:.4f}, <x, bwd(g)> = {rhs:.4f}\n")

    # The NPU's float32 interval arithmetic differs from PyTorch at exact ties.
    tie = np.zeros((1, 1, 7), np.float32)
    tie[0, 0, 3] = 1
    landed = int(aa.upsample_nearest_exact1d_backward(tie, [7], [1, 1, 26])[0, 0].argmax())
    print(f"L_in=26, L_out=7: gradient at output 3 lands on input {landed} (PyTorch: 13; NPU kernel: 12)\n")

    for dtype in (np.float16, aa.bfloat16):
        big = np.array([[[2048, 1, 1, 1]]] if dtype == np.float16 else [[[256, 1, 1, 1]]], dtype)
        r = aa.upsample_nearest_exact1d_backward(big, [4], [1, 1, 1])
        print(f"{np.dtype(dtype).name:>8}: sum of {big.ravel().astype(float).tolist()} accumulated in float32, "
              f"rounded once -> {float(r.ravel()[0])}")

    d = aa.to_device(x)
    chained = aa.upsample_nearest_exact1d_backward(aa.upsample_nearest_exact1d(d, [8]), [8], list(x.shape))
    print(f"\nDeviceArray chain (on the NPU: no host round trip until .numpy()): {chained!r}")
    print(f"  .numpy()[0, 0] = {chained.numpy()[0, 0].tolist()}\n")

    try:
        aa.upsample_nearest_exact1d_backward(grad, [8], [2, 3, 5], scales=-1.0)
    except aa.AclnnParamError as e:
        print(f"Bad input is refused before any C call, the same way on every backend:\n{e}\n")

    times = []
    big_x = rng.standard_normal((8, 64, 256)).astype(np.float32)
    for _ in range(20):
        t0 = time.perf_counter()
        aa.upsample_nearest_exact1d_backward(big_x, [256], [8, 64, 128])
        times.append(time.perf_counter() - t0)
    print(f"backward on (8, 64, 256) float32, median of 20 calls: {np.median(times) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
