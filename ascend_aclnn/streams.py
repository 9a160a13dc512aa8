"""Events: mark a point in the queued work, wait for it, and time the device between two.

``aa.Event(timing=False)`` follows ``torch.cuda.Event``: ``record()`` marks the current
point of the current device's stream, ``synchronize()`` waits for it, ``query()`` says
whether it was reached, ``start.elapsed_time(end)`` gives the milliseconds between two
timing events (it waits for both first). On the npu backend the time is the device's; on
the numpy backend, which runs work as it is called, it is the host's. An event belongs to
the backend (and, on the npu backend, the device) of its first record.
"""
from __future__ import annotations

import weakref
from typing import Any

from .backends import get_backend
from .backends.npu import runtime
from .cann.constants import ACL_ERROR_RT_INTERNAL_ERROR
from .errors import AclnnError

__all__ = ["Event"]


def _destroy(impl: Any) -> None:
    impl.destroy()


class Event:
    """A marker in a stream's work; ``timing=True`` to measure time between two of them."""

    def __init__(self, timing: bool = False):
        if not isinstance(timing, bool):
            raise TypeError(f"timing: expected a bool, got {timing!r}")
        self.timing: bool = timing
        self._backend: str | None = None
        self._impl: Any = None
        self._closed = False
        self._finalizer: weakref.finalize | None = None  # type: ignore[type-arg]

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("never recorded" if self._impl is None else f"on {self._backend}")
        return f"<ascend_aclnn.Event timing={self.timing} {state}>"

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"Event.{what}: the event is closed")

    def record(self, stream: None = None) -> None:
        """Mark the current point of the current device's stream."""
        self._check_open("record")
        if stream is not None:
            raise TypeError(f"stream: expected None (the current stream), got {stream!r}")
        backend = get_backend()
        if self._backend is not None and backend != self._backend:
            raise ValueError(f"Event.record: the event was recorded on the {self._backend} backend and the "
                             f"current backend is {backend}; use one event per backend")
        if self._impl is None:
            if backend == "npu":
                from .backends.npu.streams import NpuEvent
                self._impl = NpuEvent(self.timing)
            else:
                from .backends.numpy.streams import HostEvent
                self._impl = HostEvent(self.timing)
            self._backend = backend
            self._finalizer = weakref.finalize(self, _destroy, self._impl)
        self._gated(self._impl.record)

    def _gated(self, fn: Any, *args: Any) -> Any:
        if self._backend != "npu":
            return fn(*args)
        runtime.enter()
        try:
            return fn(*args)
        finally:
            runtime.leave()

    def synchronize(self) -> None:
        """Wait until the work before the record has run (at once if never recorded)."""
        self._check_open("synchronize")
        if self._impl is not None:
            self._gated(self._impl.synchronize)

    def query(self) -> bool:
        """Whether the work before the record has run (True if never recorded)."""
        self._check_open("query")
        return True if self._impl is None else bool(self._gated(self._impl.query))

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event's record to end's; waits for both first."""
        self._check_open("elapsed_time")
        if not isinstance(end, Event):
            raise TypeError(f"end: expected an ascend_aclnn.Event, got {type(end).__name__}")
        end._check_open("elapsed_time")
        if not (self.timing and end.timing):
            raise ValueError("Event.elapsed_time: both events must be created with timing=True "
                             f"(start has timing={self.timing}, end has timing={end.timing})")
        for name, ev in (("start", self), ("end", end)):
            if ev._impl is None:
                raise AclnnError(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtEventElapsedTime",
                                 f"the {name} event was never recorded (call record() first)", argument=name)
        if self._backend != end._backend:
            raise ValueError(f"Event.elapsed_time: start was recorded on the {self._backend} backend and end on "
                             f"the {end._backend} backend")
        if self._backend == "npu" and self._impl.device is not end._impl.device:
            raise ValueError(f"Event.elapsed_time: start was recorded on npu:{self._impl.device.index} and end "
                             f"on npu:{end._impl.device.index}; both must be on one device")
        return float(self._gated(self._impl.elapsed_time, end._impl))

    def close(self) -> None:
        """Release the event now (also done when it is garbage collected)."""
        if not self._closed:
            self._closed = True
            if self._finalizer is not None:
                self._finalizer()
