"""The route one operator call takes through the package's modules, and how often it comes
back to each (issue 38: a call's route should read top-down, each module entered once).

A call is run under ``sys.setprofile``. Every Python call into a module of ``ascend_aclnn``
puts two stops on the route: the package module the call is made from (the nearest
package frame up the stack: a NumPy or ctypes frame in between is transparent) and the one
it goes to. Consecutive stops in one module are one visit. A module is re-entered when the
route left it for another package module and came back to it to do more (to make another
call): a module that calls a helper elsewhere once per argument is re-entered once per
argument, one that hands a whole batch over once is not. A plain return that does nothing
more is no visit: A -> B -> C, each returning, is the route A, B, C.

    PYTHONPATH=$PWD ASCEND_HOME_PATH=<a simulator build> python devtools/call_route.py

runs a few described and raw calls on the npu backend (and, with ``--backend numpy``, on
the numpy one), each once to warm up, then traced: once more with the same arguments (the
steady state: checked call and handles cached) and once on a new shape (checked and
created afresh), and prints each route with its visits per module. ``python -m
ascend_aclnn simulator build DIR`` makes a simulator build.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, Callable, Optional



@dataclass
class Route:
    """The package modules one call went through, in order (paths relative to ascend_aclnn/),
    one entry per visit."""
    stops: list[str] = field(default_factory=list)
    entered_by: list[str] = field(default_factory=list)  # per stop, the first function run there

    def visits(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.stops:
            counts[m] = counts.get(m, 0) + 1
        return counts

    def reentries(self, prefix: str = "") -> dict[str, int]:
        """Per module whose path starts with prefix: visits beyond the first."""
        return {m: n - 1 for m, n in self.visits().items() if m.startswith(prefix)}

    def add(self, module: str, function: str) -> None:
        if not self.stops or self.stops[-1] != module:
            self.stops.append(module)
            self.entered_by.append(function)


def _module(frame: FrameType, cache: dict[str, Optional[str]]) -> Optional[str]:
    filename = frame.f_code.co_filename
    name = cache.get(filename, "")
    if name == "":
        import ascend_aclnn  # the package imported, wherever it is installed
        try:
            name = Path(filename).resolve().relative_to(Path(ascend_aclnn.__file__).resolve().parent).as_posix()
        except ValueError:
            name = None
        cache[filename] = name
    return name


def finalizers() -> set[CodeType]:
    """The code of every ``__del__`` of the package's classes (loaded so far)."""
    found = set()
    for name, module in list(sys.modules.items()):
        if name == "ascend_aclnn" or name.startswith("ascend_aclnn."):
            for obj in list(vars(module).values()):
                fn = getattr(obj, "__del__", None) if isinstance(obj, type) else None
                code = getattr(fn, "__code__", None)
                if isinstance(code, CodeType):
                    found.add(code)
    return found


def trace(fn: Callable[[], Any]) -> tuple[Route, Any]:
    """(fn()'s route through the package, its result). A finalizer (``__del__``) and what it
    calls are left out: it runs wherever an object's last reference drops (a block returned
    to its allocator as a frame ends), which is no step of the route."""
    route = Route()
    cache: dict[str, Optional[str]] = {}
    skip = finalizers()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = _module(frame, cache)
        if callee is None:
            return
        up: Optional[FrameType] = frame
        while up is not None:
            if up.f_code in skip:
                return
            up = up.f_back
        caller = frame.f_back
        while caller is not None and _module(caller, cache) is None:
            caller = caller.f_back
        if caller is not None:
            route.add(_module(caller, cache) or "", caller.f_code.co_qualname)
        route.add(callee, frame.f_code.co_qualname)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(previous)
    return route, result


Call = Callable[[], Any]


def cases() -> dict[str, Callable[[int], Call]]:
    """name -> make(n): the call to trace, its arguments made beforehand (outside the
    trace), on inputs of last dimension n: described and raw operators, on NumPy arrays and
    on DeviceArrays."""
    import numpy as np
    import ascend_aclnn as aa

    def host(n: int) -> Any:
        return np.arange(2 * 3 * 4 * n, dtype=np.float32).reshape(2, 3, 4, n)

    def pad_host(n: int) -> Call:
        x = host(n)
        return lambda: aa.replication_pad2d(x, (1, 1, 2, 2))

    def pad_device(n: int) -> Call:
        x = aa.to_device(host(n))
        return lambda: aa.replication_pad2d(x, (1, 1, 2, 2))

    def add_host(n: int) -> Call:
        x, out = host(n), np.empty((2, 3, 4, n), np.float32)
        return lambda: aa.aclnn.Add(x, x, 2.0, out)

    def add_device(n: int) -> Call:
        x, out = aa.to_device(host(n)), aa.empty((2, 3, 4, n), np.float32)
        return lambda: aa.aclnn.Add(x, x, 2.0, out)

    return {"replication_pad2d(numpy)": pad_host, "replication_pad2d(device)": pad_device,
            "aclnn.Add(numpy, out=numpy)": add_host, "aclnn.Add(device, out=device)": add_device}


def routes(backend: str = "npu") -> dict[str, tuple[Route, Route]]:
    """name -> (steady route, new-shape route) of each of ``cases()`` on a backend: the
    steady one is a call made before with the same arguments (the checked call and the
    handles cached), the new-shape one the first call on a shape not seen before."""
    import ascend_aclnn as aa
    found = {}
    sizes = iter(range(5, 10_000))
    with aa.use_backend(backend):
        for name, make in cases().items():
            make(next(sizes))()  # CANN loaded, the operator bound, the stream made
            again = make(next(sizes))
            again()
            steady, _ = trace(again)
            fresh, _ = trace(make(next(sizes)))
            found[name] = (steady, fresh)
        aa.synchronize()
    return found


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="npu", choices=("npu", "numpy"))
    parser.add_argument("--functions", action="store_true", help="name the first function run at each stop")
    parser.add_argument("--prefix", default="backends/",
                        help="count re-entries of modules under this path of ascend_aclnn/ (default backends/)")
    args = parser.parse_args(argv)
    for name, pair in routes(args.backend).items():
        for kind, route in zip(("steady", "new shape"), pair):
            counts = route.reentries(args.prefix)
            worst = max(counts.values(), default=0)
            print(f"{name} [{kind}]: {len(route.stops)} visits; re-entries under {args.prefix}: "
                  + (", ".join(f"{m} {n}" for m, n in sorted(counts.items())) or "none") + f" (max {worst})")
            stops = [f"{m}:{f}" for m, f in zip(route.stops, route.entered_by)] if args.functions else route.stops
            print("    " + " > ".join(stops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
