"""Graph capture on the numpy backend: the calls made inside ``with aa.graph(g)`` run as
they are made (a captured graph's outputs hold unspecified values until a replay anyway)
and are recorded; a replay runs them again, in order, writing into the same arrays."""
from __future__ import annotations

from typing import Any


class HostGraph:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, list[Any], list[Any]]] = []

    def record(self, b: Any, tensors: list[Any], outs: list[Any]) -> Any:
        from . import run
        result = run(b.spec, b.args(tensors, outs))
        # the arrays this call wrote: its out= arrays, else the ones it returned
        produced = result if isinstance(result, tuple) else (result,)
        written = [o if o is not None else r for o, r in zip(outs, produced)] if len(outs) == len(produced) \
            else list(outs)
        self.calls.append((b, list(tensors), written))
        return result

    def replay(self) -> None:
        from . import run
        for b, tensors, written in self.calls:
            run(b.spec, b.args(tensors, written))

    def close(self) -> None:
        self.calls = []
