"""CPU references for aclnn operators this package does not describe: what the numpy
backend runs for a raw call (``aa.aclnn.Softmax(...)``), and ``compare``'s golden.

Where they come from, in lookup order (runner.py): references registered with
``register_reference``; the operators this package describes (their NumPy references);
hand formulas (formulas/, NumPy, tiers "formula" and "sampled"); and a table derived
from op-plugin, the code torch_npu runs (table.py / table.json): for each aclnn operator,
the PyTorch aten op op-plugin implements with it and how each header parameter binds to
it. PyTorch is optional and imported only when a reference needs it; importing
ascend_aclnn loads neither PyTorch nor the table.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..cann import headers
from . import _torch, runner
from .runner import Reference

__all__ = ["Reference", "names", "reference", "register_reference", "summary"]


def register_reference(name: str, fn: Optional[Callable[..., Any]], *, framework: str = "numpy",
                       params: Optional[str] = None) -> None:
    """Give (or with ``fn=None`` remove) the CPU reference of an operator; it comes before
    every other one, on the numpy backend and as ``compare``'s golden.

    ``fn`` is called with the operator's input parameters as keywords named as in its
    header (tensors as NumPy arrays, None for NULL; tensor lists as lists; aclScalar as a
    number; int/float/bool arrays as lists; aclDataType as np.dtype; char* as str), an
    in-place parameter with its current values. It returns one array per written
    parameter, in header order (a tuple when several, a list for a tensor list, None to
    leave an optional output alone); each is checked against the caller's array and cast
    into it. ``framework="torch"``: tensors come as CPU torch tensors and dtypes as
    torch dtypes; torch tensors may be returned. ``params``: the C parameter list
    (without workspaceSize/executor) for an operator no installed header declares."""
    full = _full(name)
    if fn is not None and callable(fn):  # checked before it replaces anything: a refusal changes nothing
        proto = headers.find(full) if params is None else runner.prototype_from_text(full, params,
                                                                                     runner.REGISTERED_HEADER)
        if proto is None:
            proto = runner.own_prototype_without_registration(full)
        if proto is not None and proto.supported:
            runner.check_signature(full, fn, proto)
    runner.register(full, fn, framework, params)


def reference(name: str) -> Reference:
    """What runs ``name`` on the CPU (printable: source, tier, aten op, bindings, evidence).
    LookupError, saying why, when it has none."""
    full = _full(name)
    proto = headers.find(full)
    if proto is not None and not proto.supported:
        raise LookupError(f"{full}: {proto.unsupported}")
    ref, refused = runner.resolve(full, proto)
    if ref is None:
        if proto is None and runner.own_prototype(full) is None:
            try:
                headers.prototype(full)
            except headers.HeaderLookupError as exc:
                raise LookupError(runner.not_found(full, str(exc))) from None
        raise LookupError(runner.missing(full, refused))
    return ref


def names() -> list[str]:
    """Every operator that runs on the CPU here: those the headers declare whose reference
    fits the declaration, and those no header declares whose reference carries its own
    parameter list; without PyTorch, those whose reference needs it are left out. Loads the
    table (and parses every declared prototype)."""
    found = set()
    declared = set(headers.names())
    torch = _torch.available()  # without it the table's references cannot run: not listed

    def runs(ref: Optional[Reference]) -> bool:
        return ref is not None and (torch or ref.framework != "torch")
    for n in declared:
        proto = headers.find(n)
        if proto is not None and proto.supported and runs(runner.resolve(n, proto)[0]):
            found.add(n)
    others = set(runner.registered_names()) | set(runner.formula_names()) | set(runner.table_names())
    found |= {n for n in others - declared if runner.own_prototype(n) is not None and runs(runner.resolve(n, None)[0])}
    return sorted(found)


def summary() -> dict[str, int]:
    """Counts for ``info``: declared operators, those with a CPU reference, the table's, and the
    declared operators by the tier of the reference that runs them ("tier_strict", ...,
    tiers.TIERS)."""
    from .tiers import TIERS
    declared = headers.names()
    have = set(names())
    counts = {"declared": len(declared), "declared_with_reference": len(have & set(declared)),
              "table": len(runner.table_names()), "formulas": len(runner.formula_names()),
              "registered": len(runner.registered_names()), "with_reference": len(have)}
    by_tier = dict.fromkeys(TIERS, 0)
    for n in have & set(declared):
        ref, _ = runner.resolve(n, headers.find(n))
        if ref is not None and ref.tier in by_tier:
            by_tier[ref.tier] += 1
    counts.update({f"tier_{t}": c for t, c in by_tier.items()})
    return counts


def _full(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected an operator name, a str such as 'aclnnXxx' or 'Xxx', got {name!r}")
    return name if name.startswith("acl") else "aclnn" + name
