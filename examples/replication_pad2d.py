"""The ReplicationPad2d family: pad by repeating the border, and its backward.

    python examples/replication_pad2d.py        # auto: the NPU if CANN finds one, else NumPy
"""
from __future__ import annotations

import numpy as np

import ascend_aclnn as aa
from ascend_aclnn.testing import assert_close, gradcheck


def main() -> None:
    print(f"backend: {aa.get_backend()}")
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)

    # padding = [left, right, top, bottom]: the first two pad W, the last two pad H.
    y = aa.replication_pad2d(x, [1, 2, 1, 0])
    print("input\n", x[0, 0], "\npadded [1, 2, 1, 0] ->", y.shape, "\n", y[0, 0])

    # The backward sums the gradient of every padded position onto the border it copies.
    g = aa.replication_pad2d_backward(np.ones_like(y), x, [1, 2, 1, 0])
    print("backward of ones (how often each input is read):\n", g[0, 0])

    # The official example: gradOutput ones (1, 1, 7), self (1, 1, 5), padding [1, 1, 0, 0].
    doc = aa.replication_pad2d_backward(np.ones((1, 1, 7), np.float32), np.zeros((1, 1, 5), np.float32),
                                        [1, 1, 0, 0])
    print("doc example ->", doc.ravel().tolist(), "(expected [2, 1, 1, 1, 2])")

    # float16/bfloat16 accumulate in float32 and round once; ints pad exactly (forward only).
    rng = np.random.default_rng(0)
    big = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    for dtype in (np.float16, aa.bfloat16):
        gy = aa.replication_pad2d(big, [3, 3, 3, 3]).astype(dtype)
        print(f"{np.dtype(dtype).name:>8} backward vs float32:",
              assert_close(aa.replication_pad2d_backward(gy, big.astype(dtype), [3, 3, 3, 3]),
                           aa.replication_pad2d_backward(gy.astype(np.float32), big, [3, 3, 3, 3])))
    print("int32 forward:", aa.replication_pad2d(np.arange(4, dtype=np.int32).reshape(1, 2, 2), [1, 0, 0, 1])[0].tolist())

    print(gradcheck("replication_pad2d", big, [1, 2, 3, 0]))


if __name__ == "__main__":
    main()
