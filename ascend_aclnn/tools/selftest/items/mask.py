"""Item 1: the max-pool mask bytes, k=3 (the int32 flat-index prefix) and k=1 (the bitmask
layout the binding writes)."""
from __future__ import annotations

import hashlib
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ....cann import version as cann_version_rules
from ..item import (CONFIRMED, CONTRADICTED, OBSERVED, Check, Item, check, errored, on_release, part_error, part_of,
                    release_note)
from ..probing import attempt, npu, reference


def distinct_values(rng: np.random.Generator, shape: tuple[Any, ...]) -> NDArray[Any]:
    """float32 values with no ties (so every window has one maximum)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float32) / np.float32(n) - np.float32(0.5)).reshape(shape)


def first_differences(a: bytes, b: bytes, limit: int = 4) -> list[dict[str, Any]]:
    x, y = np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)
    n = min(x.size, y.size)
    where = np.flatnonzero(x[:n] != y[:n])[:limit]
    return [{"byte": int(i), "npu": f"0x{int(x[i]):02x}", "binding": f"0x{int(y[i]):02x}"} for i in where]


def probe(_: str) -> dict[str, Any]:
    import ascend_aclnn as aa
    npu()
    from ....reference.max_pool import mask_int32_prefix
    rng = np.random.default_rng(1)
    out: dict[str, Any] = {}

    def k3() -> dict[str, Any]:
        x = distinct_values(rng, (2, 3, 9, 9))
        args = ([3, 3], [2, 2], [1, 1], [1, 1], False)
        y, mask = aa.max_pool2d_with_mask(x, *args)
        ry, rmask = reference(aa.max_pool2d_with_mask, x, *args)
        count = int(np.prod(y.shape))
        npu_bytes, ref_bytes = mask.tobytes(), rmask.tobytes()
        r: dict[str, Any] = {"input_shape": list(x.shape), "args": list(args),
                             "mask_shape": list(mask.shape), "prefix_bytes": 4 * count,
                             "npu_sha256": hashlib.sha256(npu_bytes).hexdigest(),
                             "binding_sha256": hashlib.sha256(ref_bytes).hexdigest(),
                             "mask_equal": npu_bytes == ref_bytes,
                             "prefix_equal": npu_bytes[:4 * count] == ref_bytes[:4 * count],
                             "values_equal": bool(np.array_equal(y, ry)),
                             "first_differences": first_differences(npu_bytes[:4 * count], ref_bytes[:4 * count]),
                             "npu_prefix_head_hex": npu_bytes[:64].hex(),
                             "tail_zero": not any(npu_bytes[4 * count:])}
        try:
            got = aa.mask_to_indices(mask, y.shape)
            want = mask_int32_prefix(rmask, count).reshape(y.shape)
            r["indices_equal"] = bool(np.array_equal(got, want))
            if not r["indices_equal"]:
                i = int(np.flatnonzero(got.reshape(-1) != want.reshape(-1))[0])
                r["first_index_difference"] = {"position": i, "npu": int(got.reshape(-1)[i]),
                                               "binding": int(want.reshape(-1)[i])}
        except ValueError as exc:
            r["indices_equal"], r["indices_error"] = False, str(exc)
        return r

    def k1() -> dict[str, Any]:
        x = distinct_values(rng, (2, 20, 7, 7))  # 20 channels: two groups of 16 in the bitmask
        args = ([1, 1], [2, 2], [0, 0], [1, 1], False)
        y, mask = aa.max_pool2d_with_mask(x, *args)
        ry, rmask = reference(aa.max_pool2d_with_mask, x, *args)
        npu_bytes, ref_bytes = mask.tobytes(), rmask.tobytes()
        diff = np.frombuffer(npu_bytes, np.uint8) != np.frombuffer(ref_bytes, np.uint8)
        r: dict[str, Any] = {"input_shape": list(x.shape), "args": list(args),
                             "mask_shape": list(mask.shape), "mask_bytes": len(npu_bytes),
                             "npu_sha256": hashlib.sha256(npu_bytes).hexdigest(),
                             "binding_sha256": hashlib.sha256(ref_bytes).hexdigest(),
                             "mask_equal": npu_bytes == ref_bytes, "differing_bytes": int(diff.sum()),
                             "first_differences": first_differences(npu_bytes, ref_bytes),
                             "values_equal": bool(np.array_equal(y, ry)),
                             "npu_rows_head_hex": [bytes(row[:48].tobytes()).hex()
                                                   for row in mask.reshape(-1, mask.shape[-1]).view(np.uint8)[:4]]}
        g = rng.standard_normal(y.shape).astype(np.float32)
        bwd = ([1, 1], [2, 2], [0, 0], [1, 1], False)
        want = reference(aa.max_pool2d_with_mask_backward, g, x, rmask, *bwd)
        r["backward_own_mask"] = attempt(lambda: {"equal_to_strided_copy": bool(np.array_equal(
            aa.max_pool2d_with_mask_backward(g, x, mask, *bwd), want))})
        r["backward_binding_mask"] = attempt(lambda: {"equal_to_strided_copy": bool(np.array_equal(
            aa.max_pool2d_with_mask_backward(g, x, rmask, *bwd), want))})
        return r

    out["k3"] = attempt(k3)
    out["k1"] = attempt(k1)
    return out


def judge(r: dict[str, Any], release: Optional[str]) -> list[Check]:
    checks = []
    covered = cann_version_rules.at_least(release, "8.3.RC1")
    k3_assumed = ("the first 4*N*C*Ho*Wo bytes are little-endian int32 flat indices ih*W + iw in (n, c, oh, ow) "
                  "order, the rest zero (the binding's layout, from the CANN >= 8.3 operator sources"
                  + ("" if covered else f"; unconfirmed for {release_note(release)}") + ")")
    k3 = part_of(r, "k3")
    if k3 is None:
        checks.append(errored("k=3 mask", part_error(r, "k3"), k3_assumed))
    elif k3["prefix_equal"] and k3.get("indices_equal", False):
        checks.append(check("k=3 mask", CONFIRMED, k3_assumed,
                            f"the same {k3['prefix_bytes']} prefix bytes; mask_to_indices gives the reference's "
                            f"indices; mask sha256 {k3['npu_sha256'][:16]}"
                            + ("" if k3["mask_equal"] else " (the tail after the prefix differs)"),
                            npu_sha256=k3["npu_sha256"], binding_sha256=k3["binding_sha256"]))
    else:
        firsts = ", ".join(f"byte {d['byte']}: {d['npu']} vs {d['binding']}" for d in k3["first_differences"])
        idx = k3.get("first_index_difference")
        more = (f"; index at position {idx['position']}: NPU {idx['npu']}, binding {idx['binding']}" if idx else "")
        checks.append(check("k=3 mask", CONTRADICTED, k3_assumed,
                            f"the prefix differs ({firsts}){more}; NPU prefix starts {k3['npu_prefix_head_hex']}",
                            npu_sha256=k3["npu_sha256"], binding_sha256=k3["binding_sha256"]))
    k1_assumed = ("one uint16 bitmask word per output position and group of 16 channels, every bit set: the first "
                  "ceil(Ho*Wo/16)*32 bytes of each of the N*ceil(C/16) leading rows 0xFF, the rest zero (the layout "
                  "the binding writes; unconfirmed)")
    k1 = part_of(r, "k1")
    if k1 is None:
        checks.append(errored("k=1 mask", part_error(r, "k1"), k1_assumed))
    else:
        if k1["mask_equal"]:
            checks.append(check("k=1 mask", CONFIRMED, k1_assumed,
                                f"the same {k1['mask_bytes']} bytes, sha256 {k1['npu_sha256'][:16]}",
                                npu_sha256=k1["npu_sha256"]))
        else:
            firsts = ", ".join(f"byte {d['byte']}: {d['npu']} vs {d['binding']}" for d in k1["first_differences"])
            checks.append(check("k=1 mask", CONTRADICTED, k1_assumed,
                                f"{k1['differing_bytes']} of {k1['mask_bytes']} bytes differ ({firsts}); NPU sha256 "
                                f"{k1['npu_sha256'][:16]}; first rows {k1['npu_rows_head_hex'][:2]}",
                                npu_sha256=k1["npu_sha256"], binding_sha256=k1["binding_sha256"]))
        own, foreign = k1.get("backward_own_mask", {}), k1.get("backward_binding_mask", {})
        bwd_assumed = "grad_input[..., oh*sH, ow*sW] = grad_output, zeros elsewhere (a strided copy)"
        if "error" in own:
            checks.append(errored("k=1 backward, NPU's mask", own, bwd_assumed))
        else:
            ok = own["equal_to_strided_copy"]
            checks.append(check("k=1 backward, NPU's mask", CONFIRMED if ok else CONTRADICTED, bwd_assumed,
                                "the strided copy, bit for bit" if ok else "not the strided copy"))
        if "error" in foreign:
            checks.append(check("k=1 backward, binding's mask", OBSERVED, "nothing (the NPU reads its own bitmask)",
                                f"refused: {foreign['error']}"))
        else:
            checks.append(check("k=1 backward, binding's mask", OBSERVED, "nothing (the NPU reads its own bitmask)",
                                "the strided copy" if foreign["equal_to_strided_copy"] else
                                "not the strided copy: the NPU reads the bits, and the binding's differ"))
    return checks


ITEM = Item(1, 'mask', 'max-pool mask bytes (k=3, k=1)', ['mask'], on_release(judge), probe)
