"""A tour of the operator families on the default backend, saying what each did.

    python examples/demo.py                 # auto: the NPU if CANN finds one, else NumPy
    python examples/demo.py --backend npu   # insist on the NPU (fails clearly without one)

Scripts with more detail on the families sit beside this one in examples/.
"""
from __future__ import annotations

import argparse

import numpy as np

import ascend_aclnn as aa


def upsample() -> None:
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    y = aa.upsample_nearest_exact1d(x, [8])
    print(f"upsample_nearest_exact1d: {x.shape} -> {y.shape}")
    print(f"  input [0, 0] {x[0, 0].tolist()}\n  output[0, 0] {y[0, 0].tolist()}")
    gx = aa.upsample_nearest_exact1d_backward(np.ones_like(y), [8], list(x.shape))
    print(f"upsample_nearest_exact1d_backward of ones: each input was read {gx[0, 0].tolist()} times")
    tie = np.zeros((1, 1, 7), np.float32)
    tie[0, 0, 3] = 1
    landed = int(aa.upsample_nearest_exact1d_backward(tie, [7], [1, 1, 26])[0, 0].argmax())
    print(f"  L_in=26, L_out=7: the gradient of output 3 lands on input {landed} "
          "(the NPU's float32 arithmetic; PyTorch gives 13)\n")


def replication_pad() -> None:
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    y = aa.replication_pad2d(x, [1, 2, 1, 0])  # [left, right, top, bottom]
    print(f"replication_pad2d [left=1, right=2, top=1, bottom=0]: {x.shape} -> {y.shape}\n{y[0, 0]}")
    gx = aa.replication_pad2d_backward(np.ones_like(y), x, [1, 2, 1, 0])
    print(f"replication_pad2d_backward of ones: how often each input was read\n{gx[0, 0]}\n")


def max_pool() -> None:
    x = np.array([[0.1, 0.9, 0.2, 0.3],
                  [0.4, 0.5, 0.8, 0.8],
                  [0.7, 0.6, 0.0, 0.1]], np.float32).reshape(1, 1, 3, 4)
    out, mask = aa.max_pool2d_with_mask(x, [2, 2], [2, 2], [0, 0], [1, 1], True)  # ceil_mode
    idx = aa.mask_to_indices(mask, out.shape)
    print(f"max_pool2d_with_mask k=2 s=2 ceil_mode: {x.shape} -> {out.shape}, mask {mask.dtype} {mask.shape}")
    print(f"  maxima {out.ravel()}, PyTorch-style indices {idx.ravel()} "
          "(the 0.8/0.8 tie goes to the first)")
    gx = aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, [2, 2], [2, 2], [0, 0], [1, 1], True)
    print(f"max_pool2d_with_mask_backward of ones: the gradient lands on the maxima\n{gx[0, 0]}\n")


def im2col() -> None:
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)  # unbatched (C, H, W): the official example
    cols = aa.im2col(x, [2, 2], [1, 1], [1, 1], [2, 2])  # kernel, dilation, padding, stride
    print(f"im2col k=2 p=1 s=2 (PyTorch's unfold): {x.shape} -> {cols.shape}")
    ones = np.ones((1, 1, 4, 4), np.float32)
    folded = aa.im2col_backward(aa.im2col(ones, [3, 3], [1, 1], [1, 1], [1, 1]), [4, 4], [3, 3], [1, 1],
                                [1, 1], [1, 1])
    print(f"im2col_backward (fold) of unfold(ones): how many 3x3 blocks cover each pixel\n"
          f"{folded[0, 0].astype(int)}\n")


def group_norm_swish() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    gamma, beta = np.ones(8, np.float32), np.zeros(8, np.float32)
    y, mean, rstd = aa.group_norm_swish(x, gamma, beta, 4)  # 4 groups of 2 channels
    print(f"group_norm_swish, 4 groups: y {y.shape}, mean and rstd {mean.shape}")
    dx, dgamma, dbeta = aa.group_norm_swish_grad(np.ones_like(x), mean, rstd, x, gamma, beta, 4,
                                                 dbeta_is_require=False)
    print(f"group_norm_swish_grad: dx {dx.shape}, dgamma {dgamma.shape}, dbeta {dbeta} (not required)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["auto", "npu", "numpy"], default=None)
    args = parser.parse_args()
    if args.backend:
        try:
            aa.set_backend(args.backend)
        except (aa.CannLoadError, aa.AclnnError) as exc:  # no CANN or no NPU: say why in one line
            raise SystemExit(f"demo.py: --backend {args.backend}: {str(exc).splitlines()[0]}")

    backend = aa.get_backend()
    where = "NumPy reference (no Ascend NPU found)"
    if backend == "npu":
        from ascend_aclnn.cann.loader import get_cann
        where = f"Ascend NPU {aa.get_device()} of {aa.device_count()}, CANN libraries in {get_cann().lib_dir}"
    print(f"ascend_aclnn {aa.__version__} on the {backend} backend: {where}\n")
    np.set_printoptions(precision=3, suppress=True)

    upsample()
    replication_pad()
    max_pool()
    im2col()
    group_norm_swish()

    d = aa.to_device(np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5))
    chained = aa.upsample_nearest_exact1d_backward(aa.upsample_nearest_exact1d(d, [8]), [8], [2, 3, 5])
    print(f"DeviceArray chain (no host round trip until .numpy()): {chained!r}")
    print(f"  .numpy()[0, 0] = {chained.numpy()[0, 0].tolist()}\n")

    try:
        # bfloat16 with the height padded allows pads up to 7 only (the NPU's rule)
        aa.replication_pad2d_backward(np.ones((1, 1, 4, 12), aa.bfloat16), np.ones((1, 1, 2, 3), aa.bfloat16),
                                      [8, 1, 1, 1])
    except aa.AclnnParamError as e:
        print(f"Bad input is refused before any C call, the same way on every backend:\n{e}")


if __name__ == "__main__":
    main()
