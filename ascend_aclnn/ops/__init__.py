"""The operator descriptions and their registry.

A **family** is one module of this package other than the infrastructure (spec.py,
codegen.py, checked_calls.py, rules.py): the operators sharing one piece of math, typically a
forward and its backward (``pad``: ReplicationPad2d and ReplicationPad2dBackward). The
family's name is the module's; its namesakes in ``reference/``, ``backends/numpy/`` (fast
kernels, optional), ``tests/op_db/`` (test data, optional) and the simulator's
``tests/sim/test_<family>.py`` hold the rest of it. Every module here is found by a scan,
so a new family, like a new operator in a family, needs no edit in this file.

``REGISTRY`` is the one registry: every OpSpec the family modules define, families in
name order and operators in their module's order. It is a sequence of specs that is also
looked up by name (``REGISTRY["im2col"]``, ``"im2col" in REGISTRY``, ``REGISTRY.get``).
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Iterable, Iterator, Optional, SupportsIndex, Union, overload

from .spec import OpSpec

INFRASTRUCTURE = frozenset({"spec", "codegen", "checked_calls", "rules"})


class Registry:
    """The operators, in order, looked up by index or by Python name. Not a tuple
    subclass: ``"name" in REGISTRY`` asks for a name, which a tuple's type says it holds none of."""

    def __init__(self, specs: Iterable[OpSpec]):
        self._specs: tuple[OpSpec, ...] = tuple(specs)
        self._by_name: dict[str, OpSpec] = {s.name: s for s in self._specs}
        if len(self._by_name) != len(self._specs):
            names = [s.name for s in self._specs]
            raise ValueError(f"operators described twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")

    @overload
    def __getitem__(self, key: Union[str, SupportsIndex]) -> OpSpec: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[OpSpec, ...]: ...

    def __getitem__(self, key: Union[str, SupportsIndex, slice]) -> Union[OpSpec, tuple[OpSpec, ...]]:
        return self._by_name[key] if isinstance(key, str) else self._specs[key]

    def __contains__(self, key: object) -> bool:
        return key in self._by_name if isinstance(key, str) else key in self._specs

    def __iter__(self) -> Iterator[OpSpec]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Registry({', '.join(self.names())})"

    def get(self, name: str, default: Optional[OpSpec] = None) -> Optional[OpSpec]:
        return self._by_name.get(name, default)

    def names(self) -> list[str]:
        return list(self._by_name)


def _families() -> tuple[ModuleType, ...]:
    found = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in INFRASTRUCTURE)
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in found)


FAMILIES = _families()
REGISTRY = Registry(v for m in FAMILIES for v in vars(m).values() if isinstance(v, OpSpec))
# Each description's on_launch by aclnn name, so a raw aa.aclnn call of a described
# operator gets it too.
LAUNCH_HOOKS = {s.aclnn: s.on_launch for s in REGISTRY if s.on_launch is not None}
