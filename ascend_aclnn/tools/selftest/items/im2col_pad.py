"""Item 6: im2col then replication_pad2d on one 4-D block (aclnnIm2col reformats a handle in place)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import NDArray

from ..item import CONFIRMED, CONTRADICTED, Check, Item, check, errored, on_release, part_error, part_of
from ..probing import attempt, failure, npu, reference
from ....tensors import ArrayLike


def probe(_: str) -> dict[str, Any]:
    import ascend_aclnn as aa
    npu()
    x = np.random.default_rng(6).standard_normal((2, 3, 5, 5)).astype(np.float32)
    cols = ([2, 2], [1, 1], [0, 0], [1, 1])
    want_pad = reference(aa.replication_pad2d, x, [1, 1, 1, 1])
    out: dict[str, Any] = {}
    for label, put in (("device_array", aa.to_device), ("numpy", lambda a: a)):
        def run(put: Callable[[NDArray[Any]], ArrayLike] = put) -> dict[str, Any]:
            d = put(x)
            aa.im2col(d, *cols)
            try:
                padded = np.asarray(aa.replication_pad2d(d, [1, 1, 1, 1]))
            except Exception as exc:  # noqa: BLE001  the hazard's outcome
                return dict(failure(exc), outcome="error")
            return {"outcome": "works" if np.array_equal(padded, want_pad) else "differs"}
        out[label] = attempt(run)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    assumed = ("works: the binding's handles have 1-D storage, so aclnnIm2col's in-place reformat never reaches "
               "a cached handle")
    checks = []
    for key, label in (("device_array", "DeviceArray"), ("numpy", "NumPy (block reused through the cache)")):
        part = part_of(r, key)
        if part is None:
            checks.append(errored(label, part_error(r, key), assumed))
        elif part["outcome"] == "works":
            checks.append(check(label, CONFIRMED, assumed, "works, equal to the reference"))
        elif part["outcome"] == "error":
            checks.append(check(label, CONTRADICTED, assumed, f"fails: {part['error']}"
                                + (f" (CANN says: {part['recent']})" if part.get("recent") else "")))
        else:
            checks.append(check(label, CONTRADICTED, assumed, "runs, but the result differs from the reference"))
    return checks


ITEM = Item(6, 'im2col_pad', 'im2col then replication_pad2d on one 4-D block', ['im2col_pad'], on_release(judge), probe)
