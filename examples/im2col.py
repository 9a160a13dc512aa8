"""The Im2col family: unfold sliding windows into columns (PyTorch F.unfold) and fold
them back with summation (F.fold / col2im).

    python examples/im2col.py                   # auto: the NPU if CANN finds one, else NumPy
"""
from __future__ import annotations

import numpy as np

import ascend_aclnn as aa
from ascend_aclnn.testing import gradcheck


def main() -> None:
    print(f"backend: {aa.get_backend()}")
    # Every int array is (H, W); the order is the aclnn one: kernel, dilation, padding, stride.
    k, d, p, s = [2, 2], [1, 1], [1, 1], [2, 2]
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)      # unbatched (C, H, W), the doc example
    cols = aa.im2col(x, k, d, p, s)
    print("im2col (2, 2, 3), k 2x2, p 1, s 2 ->", cols.shape, "(C*kH*kW, L)")
    print(cols)

    # The backward folds columns back: positions covered by several windows get the sum.
    ones = np.ones((1, 2 * 9, 16), np.float32)                 # (N, C*kH*kW, L) for a 3x3 kernel
    folded = aa.im2col_backward(ones, [4, 4], [3, 3], [1, 1], [1, 1], [1, 1])
    print("im2col_backward of ones -> (1, 2, 4, 4), how many windows cover each pixel:\n", folded[0, 0])

    # The official backward example: grad (4, 2) -> (1, 1, 1), input_size (1, 1), k 2x2, p 1, s (1, 2).
    g = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    print("doc example ->", aa.im2col_backward(g, [1, 1], [2, 2], [1, 1], [1, 1], [1, 2]).ravel().tolist())

    rng = np.random.default_rng(0)
    img = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    for dtype in (np.float16, aa.bfloat16):
        print(f"{np.dtype(dtype).name:>8}:", aa.im2col(img.astype(dtype), [3, 3], [1, 1], [1, 1], [1, 1]).dtype)
    print(gradcheck("im2col", img, [3, 2], [1, 2], [1, 0], [2, 1]))


if __name__ == "__main__":
    main()
