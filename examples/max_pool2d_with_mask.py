"""The MaxPool2dWithMask family: max pooling that returns the Atlas A2/A3 mask, the
backward that consumes it, and the helpers to and from PyTorch's indices.

    python examples/max_pool2d_with_mask.py     # auto: the NPU if CANN finds one, else NumPy

The mask is not PyTorch's int64 argmax: it is an int8 buffer of shape
[N, C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32] whose first 4*N*C*Ho*Wo bytes hold the int32
flat indices ih*W + iw. Keep it as it is for the backward; convert it for PyTorch.
"""
from __future__ import annotations

import numpy as np

import ascend_aclnn as aa
from ascend_aclnn.testing import gradcheck


def main() -> None:
    print(f"backend: {aa.get_backend()}")
    # The official example: self (1, 1, 4, 3), kernel 2x2, stride 2, padding 0.
    x = np.array([[[[1, 5, 2], [3, 0, 4], [9, 7, 6], [8, 2, 1]]]], np.float32)
    out, mask = aa.max_pool2d_with_mask(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    print("out", out.shape, out.ravel().tolist(), " mask", mask.shape, mask.dtype)

    # PyTorch users: the flat indices torch.max_pool2d_with_indices would return, and back.
    idx = aa.mask_to_indices(mask, out.shape)
    print("indices (ih*W + iw):", idx.ravel().tolist())
    assert np.array_equal(aa.indices_to_mask(idx, [2, 2]), mask)

    # The backward scatters the gradient through the mask onto the input positions.
    gx = aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, [2, 2], [2, 2], [0, 0], [1, 1], False)
    print("backward of ones:\n", gx[0, 0])

    # On the device: the mask never leaves it between forward and backward.
    rng = np.random.default_rng(0)
    img = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
    d = aa.to_device(img)
    o, m = aa.max_pool2d_with_mask(d, [3, 3], [2, 2], [1, 1], [1, 1], True)
    g = aa.max_pool2d_with_mask_backward(aa.to_device(np.ones(o.shape, np.float32)), d, m,
                                         [3, 3], [2, 2], [1, 1], [1, 1], True)
    print("device chain:", type(g).__name__, g.shape, "gradient total", float(g.numpy().sum()), "=", o.shape)

    # Non-deterministic on A2/A3 by default (atomic adds); switch it on where it matters.
    with aa.deterministic():
        aa.max_pool2d_with_mask_backward(np.ones(o.shape, np.float32), img, m.numpy(),
                                         [3, 3], [2, 2], [1, 1], [1, 1], True)
    print(gradcheck("max_pool2d_with_mask", img, [3, 3], [2, 2], [1, 1], [1, 1], False))


if __name__ == "__main__":
    main()
