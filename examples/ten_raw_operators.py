"""Ten raw aclnn operators called through ``aa.aclnn``: the same script runs on an NPU (or the
CANN simulator) and in CPU-only CI, where the numpy backend runs each operator's CPU
reference (the op-plugin table's aten op for the first five, which needs PyTorch; this
package's NumPy references for the five it describes).

    ASCEND_HOME_PATH=/tmp/cann-sim python examples/ten_raw_operators.py   # the simulator
    python examples/ten_raw_operators.py                                 # no CANN: numpy backend

Each line prints an operator's name and a checksum of what it wrote, so the two runs can
be compared line by line. With no CANN and no PyTorch, one line says the first five need
PyTorch (and what to install), and the five described ones still run.
"""
from __future__ import annotations

import sys

import numpy as np

import ascend_aclnn as aa


def checksum(*arrays: object) -> float:
    total = 0.0
    for a in arrays:
        for item in a if isinstance(a, list) else [a]:
            host = item.numpy() if isinstance(item, aa.DeviceArray) else np.asarray(item)
            total += float(np.abs(host.astype(np.float64)).sum())
    return total


def table_operators(x: np.ndarray, img: np.ndarray) -> None:
    out = aa.aclnn.Add(x, x[:, :1], 0.5, np.empty_like(x))
    print(f"Add: {checksum(out):.6g}")
    out = aa.aclnn.Cat([x, 2 * x], 1, np.empty((2, 6, 8), np.float32))
    print(f"Cat: {checksum(out):.6g}")
    pieces = aa.aclnn.SplitTensor(x, 3, 2, [np.empty((2, 3, 3), np.float32), np.empty((2, 3, 3), np.float32),
                                            np.empty((2, 3, 2), np.float32)])
    print(f"SplitTensor: {checksum(pieces):.6g}")
    out = aa.aclnn.ReduceSum(x, [0, 2], False, np.float32, np.empty(3, np.float32))
    print(f"ReduceSum: {checksum(out):.6g}")
    outs = aa.aclnn.ForeachMulScalarList([x, img], [2.0, -0.5], [np.empty_like(x), np.empty_like(img)])
    print(f"ForeachMulScalarList: {checksum(outs):.6g}")


def main() -> int:
    print(f"backend: {aa.get_backend()}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    img = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)

    try:
        table_operators(x, img)
    except ModuleNotFoundError as exc:  # no CANN and no PyTorch: their CPU references cannot run
        if exc.name != "torch":
            raise
        print(f"Add, Cat, SplitTensor, ReduceSum, ForeachMulScalarList: not run: {exc}")

    out = aa.aclnn.UpsampleNearestExact1d(x, [13], 0.0, np.empty((2, 3, 13), np.float32))
    print(f"UpsampleNearestExact1d: {checksum(out):.6g}")
    out = aa.aclnn.ReplicationPad2d(img, [1, 2, 0, 1], np.empty((1, 4, 7, 9), np.float32))
    print(f"ReplicationPad2d: {checksum(out):.6g}")
    out = aa.aclnn.Im2col(img, [2, 2], [1, 1], [0, 0], [2, 2], np.empty((1, 16, 9), np.float32))
    print(f"Im2col: {checksum(out):.6g}")
    # the mask: (N, C, kH*kW, (ceil(Ho*Wo / 16) + 1) * 32) bytes, here Ho = Wo = 3; zeroed, since
    # the NPU leaves its padding tail unwritten
    pooled, mask = aa.aclnn.MaxPool2dWithMask(img, [2, 2], [2, 2], [0, 0], [1, 1], False,
                                              np.empty((1, 4, 3, 3), np.float32), np.zeros((1, 4, 4, 64), np.int8))
    print(f"MaxPool2dWithMask: {checksum(pooled, mask):.6g}")
    y, mean, rstd = aa.aclnn.GroupNormSwish(img, np.ones(4, np.float32), np.zeros(4, np.float32), 2, None, 1e-5,
                                            True, 1.0, np.empty_like(img), np.empty((1, 2), np.float32),
                                            np.empty((1, 2), np.float32))
    print(f"GroupNormSwish: {checksum(y, mean, rstd):.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
