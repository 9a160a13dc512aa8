"""The UpsampleNearestExact1d family: forward, backward, dtypes, scales and out=.

    python examples/upsample.py                 # auto: the NPU if CANN finds one, else NumPy
    ASCEND_ACLNN_BACKEND=npu python examples/upsample.py
"""
from __future__ import annotations

import numpy as np

import ascend_aclnn as aa
from ascend_aclnn.testing import assert_close, gradcheck


def main() -> None:
    print(f"backend: {aa.get_backend()}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)

    # Forward: (N, C, L_in) -> (N, C, L_out); out[..., d] = x[..., min(floor((d + 0.5) * L_in / L_out), L_in - 1)]
    y = aa.upsample_nearest_exact1d(x, [8])
    print("forward  x[0, 0] ", x[0, 0].astype(float).round(3).tolist())
    print("         y[0, 0] ", y[0, 0].astype(float).round(3).tolist())

    # Backward: sums the output gradient back onto the input positions (shape input_size).
    gx = aa.upsample_nearest_exact1d_backward(np.ones_like(y), [8], list(x.shape))
    print("backward of ones ", gx[0, 0].tolist(), "(how many outputs each input feeds)")

    # scales: PyTorch's scale factor (L_out / L_in); 0.0 lets the sizes decide.
    print("scales=2.0       ", aa.upsample_nearest_exact1d(x[:1, :1], [10], 2.0)[0, 0].astype(float).round(3).tolist())

    # Every dtype the kernels take; float16/bfloat16 backward sums in float32 and rounds once.
    for dtype in (np.float16, aa.bfloat16, np.uint8):
        xd = (x * 10).astype(dtype) if dtype != np.uint8 else rng.integers(0, 255, x.shape).astype(dtype)
        yd = aa.upsample_nearest_exact1d(xd, [8])
        print(f"{np.dtype(dtype).name:>8}: {yd.dtype}, {yd.shape}")
        if dtype != np.uint8:
            g32 = aa.upsample_nearest_exact1d_backward(yd.astype(np.float32), [8], list(x.shape))
            report = assert_close(aa.upsample_nearest_exact1d_backward(yd, [8], list(x.shape)), g32)
            print(f"          backward vs float32, {report}")

    # out=: write into an array you own.
    buf = np.empty((2, 3, 8), np.float32)
    assert aa.upsample_nearest_exact1d(x, [8], out=buf) is buf

    # Is the backward the derivative of the forward? (adjoint identity, on this backend)
    print(gradcheck("upsample_nearest_exact1d", x, [8]))


if __name__ == "__main__":
    main()
