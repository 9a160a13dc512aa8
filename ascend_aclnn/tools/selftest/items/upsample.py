"""Item 2: the upsample backward's last bits (L_in=5, L_out=17): the index arithmetic exactly
(integer gradients, whose sums are exact in any order), the summation's bits and ulps."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ..item import CONFIRMED, CONTRADICTED, OBSERVED, Check, Item, check, errored, on_release, part_error, part_of
from ..probing import attempt, npu, reference, sha256


def ordered(a: NDArray[Any]) -> NDArray[Any]:
    """float32 bits as integers in the floats' order (adjacent floats differ by 1)."""
    i = np.ascontiguousarray(a, np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(a: NDArray[Any], b: NDArray[Any]) -> dict[str, Any]:
    d = np.abs(ordered(a) - ordered(b))
    worst = int(np.argmax(d)) if d.size else 0
    return {"bit_equal": bool(not d.any()), "elements": int(d.size), "differing": int(np.count_nonzero(d)),
            "max_ulp": int(d.max()) if d.size else 0,
            "worst": None if not d.any() else {"index": worst, "npu": float(np.ravel(a)[worst]),
                                               "reference": float(np.ravel(b)[worst])}}


def probe(_: str) -> dict[str, Any]:
    import ascend_aclnn as aa
    npu()
    rng = np.random.default_rng(2)
    size, in_size = [17], [4, 8, 5]
    fn = aa.upsample_nearest_exact1d_backward
    out: dict[str, Any] = {"l_in": 5, "l_out": 17}

    def counts() -> dict[str, Any]:
        ones = np.ones((1, 1, 17), np.float32)  # each input's count of output positions
        got, want = fn(ones, size, [1, 1, 5]), reference(fn, ones, size, [1, 1, 5])
        return {"npu": got.reshape(-1).tolist(), "binding": want.reshape(-1).tolist(),
                "equal": bool(np.array_equal(got, want))}

    def integers() -> dict[str, Any]:
        g = rng.integers(-64, 65, (4, 8, 17)).astype(np.float32)  # sums exact in any order
        got, want = fn(g, size, in_size), reference(fn, g, size, in_size)
        return dict(ulps(got, want), equal=bool(np.array_equal(got, want)))

    def random() -> dict[str, Any]:
        g = rng.standard_normal((4, 8, 17)).astype(np.float32)
        got, want = fn(g, size, in_size), reference(fn, g, size, in_size)
        return dict(ulps(got, want), npu_sha256=sha256(got), binding_sha256=sha256(want))

    out["counts"], out["integers"], out["random"] = attempt(counts), attempt(integers), attempt(random)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    checks = []
    assumed = ("input i receives grad_output[lo(i):lo(i+1)], lo(i) = ceil(i * 17/5 - 0.5) in float32, as the A2/A3 "
               "kernel computes it")
    counts, ints = part_of(r, "counts"), part_of(r, "integers")
    if counts is None or ints is None:
        checks.append(errored("index arithmetic", part_error(r, "counts" if counts is None else "integers"), assumed))
    elif counts["equal"] and ints["equal"]:
        checks.append(check("index arithmetic", CONFIRMED, assumed,
                            f"positions per input {counts['npu']}; integer gradients (exact sums) bit-equal"))
    else:
        checks.append(check("index arithmetic", CONTRADICTED, assumed,
                            f"positions per input: NPU {counts['npu']}, binding {counts['binding']}; integer "
                            f"gradients: {ints['differing']} of {ints['elements']} elements differ"))
    rnd = part_of(r, "random")
    sum_assumed = "nothing: the cube unit's float32 accumulation order is not public (the binding sums in ascending order)"
    if rnd is None:
        checks.append(errored("summation, random float32", part_error(r, "random"), sum_assumed))
    else:
        seen = ("bit-equal to the reference" if rnd["bit_equal"] else
                f"{rnd['differing']} of {rnd['elements']} elements differ, at most {rnd['max_ulp']} ulp")
        checks.append(check("summation, random float32", OBSERVED, sum_assumed, seen, ulps=rnd))
    return checks


ITEM = Item(2, 'upsample', "upsample backward's last bits (L_in=5, L_out=17)", ['upsample'], on_release(judge), probe)
