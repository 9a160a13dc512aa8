"""The items, one module each: adding an item is adding a module here that defines
``ITEM = Item(number, key, title, runs, judge, probe)`` with its probe and its judge. They
are found by a scan of this package (no list to edit), in the order of their numbers."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Iterable

from ..item import Item


def discover(package: str, paths: Iterable[str]) -> tuple[Item, ...]:
    """Every module's ``ITEM``, by number; refuses a module without one, and two items with
    one number, key or probe (each names the report, ``--items`` and the child's probe)."""
    found: list[Item] = []
    for info in sorted(pkgutil.iter_modules(list(paths)), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        item = getattr(module, "ITEM", None)
        if not isinstance(item, Item) or item.probe is None:
            raise ImportError(f"{module.__name__}: a selftest item module must define ITEM = Item(..., probe)")
        found.append(item)
    probes = [name for i in found for name in sorted({run.partition(":")[0] for run in i.probes})]
    for what, values in (("number", [str(i.number) for i in found]), ("key", [i.key for i in found]),
                         ("probe", probes)):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ImportError(f"{package}: two selftest items share the {what} {', '.join(twice)}")
    return tuple(sorted(found, key=lambda i: i.number))


ITEMS = discover(__name__, __path__)
