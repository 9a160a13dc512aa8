"""Item 12: private formats: aclnnTransMatmulWeight's FRACTAL_NZ storage of a (40, 24) float16
weight against CANN's golden layout (padding zeros), aclnnMm with that NZ weight against Mm
with the ND one (bit for bit), and which C0 aclnnMm reads a float32 NZ weight with (8 and 16
tried: the one that gives the ND result)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..item import CONFIRMED, CONTRADICTED, OBSERVED, Check, Item, check, errored, on_release, part_error, part_of
from ..probing import attempt, npu


def probe(_: str) -> dict[str, Any]:
    import ascend_aclnn as aa
    from .... import formats
    npu()
    w = (np.arange(40 * 24) % 97 - 48).astype(np.float16).reshape(40, 24)
    x = (np.arange(5 * 40) % 11 - 5).astype(np.float16).reshape(5, 40)
    out: dict[str, Any] = {}

    def tmw() -> dict[str, Any]:
        d = aa.to_device(w)
        aa.aclnn.TransMatmulWeight(d)
        stored = d.storage()
        want = formats.encode(w, "FRACTAL_NZ")
        return {"format": d.format.name, "storage_shape": list(d.storage_shape), "golden": bool(
            stored.shape == want.shape and stored.tobytes() == want.tobytes()),
            "logical": bool(np.array_equal(d.numpy(), w)),
            "padding_zero": bool(stored.shape == want.shape and not stored[(want == 0) & (stored != 0)].any())}
    out["trans_matmul_weight"] = attempt(tmw)

    def mm() -> dict[str, Any]:
        y = aa.aclnn.Mm(aa.to_device(x), aa.to_device(w), aa.empty((5, 24), np.float16), 0).numpy()
        nz = aa.format_cast(aa.to_device(w), "FRACTAL_NZ")
        y_nz = aa.aclnn.Mm(aa.to_device(x), nz, aa.empty((5, 24), np.float16), 0).numpy()
        return {"route": aa.format_cast_route(aa.to_device(w), "FRACTAL_NZ"), "equal": y.tobytes() == y_nz.tobytes(),
                "max_abs_difference": float(np.max(np.abs(y.astype(np.float64) - y_nz.astype(np.float64))))}
    out["mm"] = attempt(mm)
    w32, x32 = w.astype(np.float32)[:20, :9], x.astype(np.float32)[:, :20]
    for c0 in (8, 16):
        def fp32(c0: int = c0) -> dict[str, Any]:
            y = aa.aclnn.Mm(aa.to_device(x32), aa.to_device(w32), aa.empty((5, 9), np.float32), 0).numpy()
            try:
                got = aa.aclnn.Mm(aa.to_device(x32), aa.to_device(w32, format="FRACTAL_NZ", c0=c0),
                                  aa.empty((5, 9), np.float32), 0).numpy()
            except aa.AclnnError as exc:
                return {"outcome": "refused", "status": exc.status, "recent": exc.recent}
            return {"outcome": "equal" if np.array_equal(got, y) else "differs"}
        out[f"float32_c0_{c0}"] = attempt(fp32)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    checks = []
    assumed = "FRACTAL_NZ (2, 3, 16, 16), CANN's golden layout of the ND weight, padding zeros, read back as itself"
    part = part_of(r, "trans_matmul_weight")
    if part is None:
        checks.append(errored("TransMatmulWeight's NZ storage", part_error(r, "trans_matmul_weight"), assumed))
    else:
        ok = part["format"] == "FRACTAL_NZ" and part["golden"] and part["logical"] and part["padding_zero"]
        checks.append(check("TransMatmulWeight's NZ storage", CONFIRMED if ok else CONTRADICTED, assumed,
                            f"{part['format']} {tuple(part['storage_shape'])}, golden layout {part['golden']}, "
                            f"padding zero {part['padding_zero']}, logical values {part['logical']}"))
    assumed = "Mm with the NZ weight equals Mm with the ND one, bit for bit"
    part = part_of(r, "mm")
    if part is None:
        checks.append(errored("Mm with an NZ weight", part_error(r, "mm"), assumed))
    else:
        checks.append(check("Mm with an NZ weight", CONFIRMED if part["equal"] else CONTRADICTED, assumed,
                            "equal" if part["equal"] else f"differs by up to {part['max_abs_difference']}",
                            route=part["route"]))
    seen = []
    for c0 in (8, 16):
        part = part_of(r, f"float32_c0_{c0}")
        if part is None:
            seen.append(f"C0 {c0}: could not run ({part_error(r, f'float32_c0_{c0}').get('error')})")
        elif part["outcome"] == "refused":
            seen.append(f"C0 {c0}: refused ({part['status']})")
        else:
            seen.append(f"C0 {c0}: {part['outcome']}")
    checks.append(check("float32 NZ weight's C0 for aclnnMm", OBSERVED, "nothing (torch_npu says 16, "
                        "aclnn_matmul.cpp 8; the binding's Mm checks take 8)", "; ".join(seen)))
    return checks


ITEM = Item(12, 'formats', "private formats: TransMatmulWeight's NZ layout, Mm with an NZ weight, float32's C0", ['formats'], on_release(judge), probe)
