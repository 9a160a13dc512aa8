"""One call's route through the npu backend reads top-down (issue 38, item 3): staging,
handles, launch and delivery each entered once per call, measured by
devtools/call_route.py (a module is re-entered when the route left it for another package
module and came back to do more)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ascend_aclnn as aa

ROOT = Path(__file__).resolve().parents[1]
NPU = "backends/npu/"


@pytest.fixture(scope="module")
def call_route() -> Any:
    """devtools/call_route.py, loaded from its file (devtools/ is no package)."""
    spec = importlib.util.spec_from_file_location("call_route", ROOT / "devtools" / "call_route.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("call_route", module)  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def _reentries(call_route: Any, call: Any) -> dict[str, int]:
    call()  # warm-up: the operator bound, its checked call and handles cached
    route, _ = call_route.trace(call)
    counts: dict[str, int] = route.reentries(NPU)
    return counts


@pytest.mark.parametrize("kind", ["numpy", "device"])
def test_the_route_does_not_grow_with_the_arguments(npu, call_route, kind):
    """A tensor list of 2 or of 8 arrays: every module of the npu backend is entered as often
    (staged in one step, its handles made in one pass), where the route used to go back and
    forth per element (an upload, a handle each)."""
    def cat(n: int) -> Any:
        xs = [np.full((1, 3), i, np.float32) for i in range(n)]
        items = [aa.to_device(x) for x in xs] if kind == "device" else xs
        out = np.empty((n, 3), np.float32)
        return lambda: aa.aclnn.Cat(items, 0, out)

    few, many = _reentries(call_route, cat(2)), _reentries(call_route, cat(8))
    assert many == few


def test_tensor_arguments_do_not_add_visits(npu, call_route):
    """A described operator with one tensor and a raw one with three (two inputs and the
    out= it writes), both on NumPy arrays: their handles are made in one pass and their
    uploads in one step, so the npu modules are entered no more often for the three."""
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    one = _reentries(call_route, lambda: aa.replication_pad2d(x, (1, 1, 2, 2)))
    out = np.empty_like(x)
    three = _reentries(call_route, lambda: aa.aclnn.Add(x, x, 2.0, out))
    for module in (NPU + "handles.py", NPU + "runtime.py"):
        # Add has one host value more (alpha, an aclScalar made by its description: one
        # more step out of handles.py and back)
        assert three.get(module, 0) <= one.get(module, 0) + (module == NPU + "handles.py"), module


# launch.py hands each step of a call to the module that does it, and is back once after
# each: the stream, the staging (uploads and output blocks), the output arrays, the handles,
# the workspace, the record, the release of the launch's own handles, the delivery.
LAUNCH_STEPS = 8


@pytest.mark.parametrize("name", ["replication_pad2d(numpy)", "replication_pad2d(device)",
                                  "aclnn.Add(numpy, out=numpy)", "aclnn.Add(device, out=device)"])
def test_launch_is_reentered_once_per_step(npu, call_route, name):
    make = call_route.cases()[name]
    again = make(5)
    again()
    steady, _ = call_route.trace(again)  # checked call and handles cached
    fresh, _ = call_route.trace(make(7))  # a new shape: checked, its handles made anew
    for route in (steady, fresh):
        assert route.reentries(NPU).get(NPU + "launch.py", 0) <= LAUNCH_STEPS, route.stops
