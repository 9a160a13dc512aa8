"""Chain operators on DeviceArrays: upload once, run several ops on the device, read once.

    python examples/device_chain.py             # on the NPU when CANN finds one, else NumPy

A DeviceArray stays on the NPU between calls (on the numpy backend it wraps a host
array, so the same code runs everywhere). Only .numpy() synchronises and copies back.
"""
from __future__ import annotations

import numpy as np

import ascend_aclnn as aa
from ascend_aclnn.testing import assert_close


def main() -> None:
    print(f"backend: {aa.get_backend()}")
    x = np.random.default_rng(0).standard_normal((4, 8, 32)).astype(np.float32)

    d = aa.to_device(x)                                          # one upload
    up = aa.upsample_nearest_exact1d(d, [96])                    # (4, 8, 96), on the device
    back = aa.upsample_nearest_exact1d_backward(up, [96], [4, 8, 32])
    out = aa.empty((4, 8, 64))                                   # a device buffer to reuse
    for _ in range(3):                                           # queued; nothing waits here
        aa.upsample_nearest_exact1d(back, [64], out=out)
    print("device results:", type(up).__name__, up.shape, type(out).__name__, out.shape)

    result = out.numpy()                                         # the one synchronisation
    # The same chain through NumPy arrays (a host round trip per call) agrees.
    host = aa.upsample_nearest_exact1d(
        aa.upsample_nearest_exact1d_backward(aa.upsample_nearest_exact1d(x, [96]), [96], [4, 8, 32]), [64])
    print("device chain vs host round trips:", assert_close(result, host))

    # Deterministic mode for the block (CANN's ACL_OPT_DETERMINISTIC; the reference always is).
    with aa.deterministic():
        again = aa.upsample_nearest_exact1d_backward(up, [96], [4, 8, 32]).numpy()
    print("deterministic re-run identical:", bool(np.array_equal(again, back.numpy())))


if __name__ == "__main__":
    main()
