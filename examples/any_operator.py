"""Call aclnn operators that ascend_aclnn does not describe, with prototypes read from the
installed CANN headers: a built-in one (aclnnAdd, aclnnSplitTensor, aclnnReduceSum) and a
custom operator from a vendor package (aclnnCustomMaskedScale, which the CANN simulator
installs).

    python examples/any_operator.py                      # needs CANN (an NPU host)
    ascend-aclnn simulator build /tmp/cann-sim           # or: the simulator
    ASCEND_HOME_PATH=/tmp/cann-sim python examples/any_operator.py

Without CANN it shows the numpy backend instead: each raw operator runs its CPU reference,
and the vendor operator the reference registered below with register_reference. The
built-in operators' CPU references run on PyTorch: without it, one line says so (and what
to install) and the vendor operator still runs.
"""
from __future__ import annotations

import sys

import numpy as np

import ascend_aclnn as aa


def _verdict(got: np.ndarray, expected: np.ndarray) -> str:
    return "ok" if np.array_equal(got, expected) else f"FAIL (expected {np.asarray(expected).tolist()})"


def masked_scale(self: np.ndarray, weights: list[float], mask: list[bool], mode: str, scale: float,
                 exponent: int) -> np.ndarray:
    """aclnnCustomMaskedScale's CPU reference, from its header's documentation: in float32."""
    v = self.astype(np.float32)
    w = np.asarray(weights, np.float32)
    t = np.where(mask, v * w if mode == "mul" else v + w, v)
    return np.ldexp(t * np.float32(scale), exponent)


def builtin() -> None:
    x, y = np.ones((2, 3), np.float32), np.full((2, 3), 2, np.float32)
    z = aa.aclnn.Add(self=x, other=y, alpha=0.5, out=np.empty_like(x))   # self + alpha * other
    print("Add:", z.tolist(), _verdict(z, x + 0.5 * y))

    d = aa.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))        # DeviceArrays stay there
    top, bottom = aa.aclnn.SplitTensor(d, 1, 0, [aa.empty((1, 3), np.float32), aa.empty((1, 3), np.float32)])
    print("SplitTensor:", top.numpy().tolist(), bottom.numpy().tolist(),
          _verdict(np.concatenate([top.numpy(), bottom.numpy()]), d.numpy()))

    s = aa.aclnn.call("aclnnReduceSum", x, [0], False, np.float32, np.empty(3, np.float32))
    print("ReduceSum over dim 0:", s.tolist(), _verdict(s, x.sum(0)))


def main() -> int:
    # the numpy backend runs it through this function; compare's golden on the NPU too
    aa.aclnn.register_reference("aclnnCustomMaskedScale", masked_scale,
                                params="const aclTensor *self, const aclFloatArray *weights, const aclBoolArray *mask, "
                                       "const char *mode, float scale, int8_t exponent, aclTensor *out")
    print(f"backend: {aa.get_backend()}")
    if aa.get_backend() == "npu":
        print(f"{len(aa.aclnn.names())} aclnn operators declared by the installed headers")
    p = aa.aclnn.prototype("aclnnAdd")
    print(f"{p.name} from {p.header}:{p.line}:", ", ".join(f"{q.c_type}{q.name}" + (" (out)" if q.is_output else "")
                                                    for q in p.params))

    try:
        builtin()
    except ModuleNotFoundError as exc:  # no CANN and no PyTorch: their CPU references cannot run
        if exc.name != "torch":
            raise
        print(f"Add, SplitTensor, ReduceSum: not run: {exc}")

    v = np.arange(4, dtype=np.float32)
    out = aa.aclnn.CustomMaskedScale(v, [1.0, 2.0, 3.0, 4.0], [True, False, True, True], "mul",
                                     0.5, 1, np.empty_like(v))
    expected = np.where([True, False, True, True], v * [1.0, 2.0, 3.0, 4.0], v) * 0.5 * 2.0
    print("CustomMaskedScale (vendor package):", out.tolist(), _verdict(out, expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
