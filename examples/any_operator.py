"""Call aclnn operators that ascend_aclnn does not describe, with prototypes read from the
installed CANN headers: a built-in one (aclnnAdd, aclnnSplitTensor, aclnnReduceSum) and a
custom operator from a vendor package (aclnnCustomMaskedScale, which the CANN simulator
installs).

    python examples/any_operator.py                      # needs CANN (an NPU host)
    python native/build.py --prefix /tmp/cann-sim        # or: the simulator
    ASCEND_HOME_PATH=/tmp/cann-sim python examples/any_operator.py

Raw operators run on the npu backend only; without CANN this prints why and exits 2.
"""
from __future__ import annotations

import sys

import numpy as np

import ascend_aclnn as aa


def _verdict(got: np.ndarray, expected: np.ndarray) -> str:
    return "ok" if np.array_equal(got, expected) else f"FAIL (expected {np.asarray(expected).tolist()})"


def main() -> int:
    if not aa.npu_available():
        print("any_operator.py: no CANN with an NPU here; raw aclnn operators run on the npu "
              "backend only (see the docstring for the simulator)", file=sys.stderr)
        return 2
    aa.set_backend("npu")
    print(f"backend: {aa.get_backend()}")
    print(f"{len(aa.aclnn.names())} aclnn operators declared by the installed headers")
    p = aa.aclnn.prototype("aclnnAdd")
    print(f"{p.name} from {p.header}:{p.line}:", ", ".join(f"{q.c_type}{q.name}" + (" (out)" if q.is_output else "")
                                                    for q in p.params))

    x, y = np.ones((2, 3), np.float32), np.full((2, 3), 2, np.float32)
    z = aa.aclnn.Add(self=x, other=y, alpha=0.5, out=np.empty_like(x))   # self + alpha * other
    print("Add:", z.tolist(), _verdict(z, x + 0.5 * y))

    d = aa.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))        # DeviceArrays stay there
    top, bottom = aa.aclnn.SplitTensor(d, 1, 0, [aa.empty((1, 3), np.float32), aa.empty((1, 3), np.float32)])
    print("SplitTensor:", top.numpy().tolist(), bottom.numpy().tolist(),
          _verdict(np.concatenate([top.numpy(), bottom.numpy()]), d.numpy()))

    s = aa.aclnn.call("aclnnReduceSum", x, [0], False, np.float32, np.empty(3, np.float32))
    print("ReduceSum over dim 0:", s.tolist(), _verdict(s, x.sum(0)))

    if "aclnnCustomMaskedScale" in aa.aclnn.names():
        v = np.arange(4, dtype=np.float32)
        out = aa.aclnn.CustomMaskedScale(v, [1.0, 2.0, 3.0, 4.0], [True, False, True, True], "mul",
                                         0.5, 1, np.empty_like(v))
        expected = np.where([True, False, True, True], v * [1.0, 2.0, 3.0, 4.0], v) * 0.5 * 2.0
        print("CustomMaskedScale (vendor package):", out.tolist(), _verdict(out, expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
