"""Graph capture on the numpy backend: the calls made inside ``with aa.graph(g)`` run as
they are made (a captured graph's outputs hold unspecified values until a replay anyway)
and are recorded; a replay runs them again, in order, writing into the same arrays.

Every kind of call the npu backend captures is recorded here through the path it takes
eagerly: described operators (the NumPy kernels), raw operators (their CPU reference),
plans of either (which run as ordinary calls on this backend), ``DeviceArray.copy_`` and
``copy()``. The graph holds the host arrays of the DeviceArrays it captured, as the npu
backend's graph holds their device blocks: a ``free()`` of one of them leaves its memory
to the graph, and replays keep reading and writing it.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from ...cann.constants import ACL_ERROR_RT_STREAM_UNJOINED
from ...errors import AclnnError
from ...tensors import DeviceArray
from ..npu import runtime
from .streams import HostStream


def _held(v: Any) -> Any:
    """What the graph keeps of a captured argument: a DeviceArray's host array (under a
    DeviceArray of its own, so a free() of the caller's does not reach it), lists of them."""
    if isinstance(v, DeviceArray):
        host = v._host
        if host is None:  # an argument is checked live before the call: never here
            raise RuntimeError("a freed DeviceArray cannot be captured")
        return DeviceArray._from_host(host)
    if isinstance(v, (list, tuple)):
        return type(v)(_held(x) for x in v)
    return v


class HostGraph:
    """The capture's own stream and the fork/join rule are the npu backend's (NpuGraph): work
    in the capturing context must go to a stream taking part in the capture, and a stream
    forked in must be joined back before the end, or the capture fails with CANN's status."""

    def __init__(self, device: int) -> None:
        self.calls: list[Callable[[], Any]] = []
        self.closed: bool = False
        self.stream: HostStream = HostStream(device)
        self.stream.capture, self.stream.capturing = self, True
        self.capturing: bool = True
        self.forked: list[HostStream] = []
        # A replay holds it; close() takes it: a replay runs whole before the close or raises.
        self._lock = threading.Lock()

    def fork(self, side: HostStream) -> None:
        pass  # its work ran when it was called: nothing queued to run first

    def forked_in(self, side: HostStream) -> None:
        side.capture, side.capturing, side.cap_last = self, True, None
        self.forked.append(side)

    def end(self, ok: bool) -> None:
        loose = runtime.unjoined(self.forked) if ok else None
        for s in [self.stream] + self.forked:
            s.capture, s.capturing, s.cap_last = None, False, None
        self.forked = []
        self.capturing = False
        if loose is not None:
            self.calls = []
            raise AclnnError(ACL_ERROR_RT_STREAM_UNJOINED, "aclmdlRICaptureEnd", runtime.UNJOINED)

    def record(self, b: Any, tensors: list[Any], outs: list[Any], run: Callable[[Any, list[Any], list[Any]], Any]) -> Any:
        """Run the checked call b now with ``run`` (how the backend runs it eagerly) and record
        it for the replays."""
        result = run(b, tensors, outs)
        # the arrays this call wrote: its out= arrays, else the ones it returned (a raw
        # operator writes among its tensors, which are held anyway)
        produced = result if isinstance(result, tuple) else (result,)
        written = [o if o is not None else r for o, r in zip(outs, produced)] if len(outs) == len(produced) \
            else list(outs)
        held_tensors, held_written = _held(list(tensors)), _held(written)
        self.calls.append(lambda: run(b, held_tensors, held_written))
        return result

    def record_copy(self, dst: DeviceArray, src: DeviceArray) -> None:
        """dst <- src now, and at every replay (DeviceArray.copy_ and copy())."""
        d, s = _held(dst), _held(src)
        np.copyto(d._host, s._host)
        self.calls.append(lambda: np.copyto(d._host, s._host))

    def replay(self) -> None:
        with self._lock:
            if self.closed:
                raise RuntimeError("Graph.replay: the graph is closed")
            for call in self.calls:
                call()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self.calls = []
