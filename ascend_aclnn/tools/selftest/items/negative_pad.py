"""Item 3: negative pads in replication_pad2d (and its backward): crop, error, or something else."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..item import CONFIRMED, CONTRADICTED, Check, Item, check, errored, on_release, part_error, part_of
from ..probing import attempt, failure, npu, reference, sha256


def probe(_: str) -> dict[str, Any]:
    import ascend_aclnn as aa
    npu()
    pads = [-1, 2, 0, -1]
    rng = np.random.default_rng(3)
    out: dict[str, Any] = {"padding": pads}

    def forward(dtype: Any) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            x = rng.standard_normal((2, 3, 6, 7)).astype(dtype)
            want = reference(aa.replication_pad2d, x, pads)
            try:
                got = aa.replication_pad2d(x, pads)
            except Exception as exc:  # noqa: BLE001  the NPU refusing is an outcome, not a failure
                return dict(failure(exc), outcome="error", binding_shape=list(want.shape))
            same = got.shape == want.shape and bool(np.array_equal(got, want))
            return {"outcome": "crops" if same else "differs", "shape": list(got.shape),
                    "binding_shape": list(want.shape), "npu_sha256": sha256(got), "binding_sha256": sha256(want),
                    "differing": None if got.shape != want.shape else int(np.count_nonzero(got != want))}
        return run

    def backward() -> dict[str, Any]:
        x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
        g = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
        want = reference(aa.replication_pad2d_backward, g, x, pads)
        try:
            got = aa.replication_pad2d_backward(g, x, pads)
        except Exception as exc:  # noqa: BLE001
            return dict(failure(exc), outcome="error")
        close = bool(np.allclose(got, want, rtol=1e-5, atol=1e-6))
        return {"outcome": "crops" if close else "differs", "bit_equal": bool(np.array_equal(got, want)),
                "max_abs_error": float(np.max(np.abs(got - want))), "npu_sha256": sha256(got)}

    out["float32"] = attempt(forward(np.float32))
    out["float64"] = attempt(forward(np.float64))
    out["backward_float32"] = attempt(backward)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    checks = []
    assumed = "negative pads crop, as in PyTorch and the reference"
    for key, label in (("float32", "forward float32"), ("float64", "forward float64 (AICPU)"),
                       ("backward_float32", "backward float32")):
        part = part_of(r, key)
        if part is None:
            checks.append(errored(label, part_error(r, key), assumed))
        elif part["outcome"] == "crops":
            checks.append(check(label, CONFIRMED, assumed, "crops like the reference"
                                + (f", shape {part['shape']}" if "shape" in part else "")))
        elif part["outcome"] == "error":
            checks.append(check(label, CONTRADICTED, assumed, f"refused: {part['error']}"
                                + (f" (CANN says: {part['recent']})" if part.get("recent") else "")))
        else:
            where = (f"shape {part.get('shape')} vs {part.get('binding_shape')}" if "binding_shape" in part and
                     part.get("shape") != part.get("binding_shape") else
                     f"{part.get('differing', '?')} elements differ" if "differing" in part else
                     f"max abs error {part.get('max_abs_error')}")
            checks.append(check(label, CONTRADICTED, assumed, f"computes something else: {where}"))
    return checks


ITEM = Item(3, 'negative_pad', 'replication_pad2d with pads (-1, 2, 0, -1)', ['negative_pad'], on_release(judge), probe)
