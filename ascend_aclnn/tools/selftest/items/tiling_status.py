"""Item 8: the status of a tiling-rule error (group_norm_swish with C % num_groups != 0),
called with the binding's own checks removed."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..item import CONFIRMED, CONTRADICTED, ERROR, Check, Item, check, errored, on_release
from ..probing import failure, npu, reference


def probe(_: str) -> dict[str, Any]:
    import dataclasses

    import ascend_aclnn as aa
    npu()
    from ....api import call
    from ....ops import REGISTRY
    spec = REGISTRY["group_norm_swish"]
    unchecked = dataclasses.replace(spec, check=lambda a, check: None)  # straight to CANN
    x = np.ones((2, 6, 3, 3), np.float32)
    args = (x, np.ones(6, np.float32), np.zeros(6, np.float32), 4)  # 4 does not divide C = 6
    out: dict[str, Any] = {"call": "group_norm_swish(x (2, 6, 3, 3), gamma (6,), beta (6,), num_groups=4)"}
    try:
        call(unchecked, *args)
        aa.synchronize()
        out["npu"] = {"status": 0}
    except Exception as exc:  # noqa: BLE001
        out["npu"] = failure(exc)
    try:
        reference(aa.group_norm_swish, *args)
        out["binding"] = {"status": 0}
    except Exception as exc:  # noqa: BLE001
        out["binding"] = failure(exc)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    if "result" not in r:
        return [errored("status", r)]
    npu, binding = r["result"]["npu"], r["result"]["binding"]
    assumed = (f"the binding's own status, {binding.get('status')} (its checks refuse the call before CANN sees it; "
               "the generated operator's tiling reports shape rules as ACLNN_ERR_INNER_TILING_ERROR, 561002)")
    said = f" (CANN says: {npu['recent']})" if npu.get("recent") else ""
    if npu.get("status") == 0:
        return [check("status", CONTRADICTED, assumed, "CANN accepts the call: C % num_groups != 0 is no rule there")]
    if npu.get("status") is None:
        return [check("status", ERROR, assumed, f"could not run: {npu.get('error')}")]
    status = CONFIRMED if npu["status"] == binding.get("status") else CONTRADICTED
    return [check("status", status, assumed, f"{npu['error']}{said}", npu_status=npu["status"],
                  binding_status=binding.get("status"))]


ITEM = Item(8, 'tiling_status', 'status of a tiling-rule error (C % num_groups != 0)', ['tiling_status'], on_release(judge), probe)
