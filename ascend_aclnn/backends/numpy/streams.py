"""Streams and events on the numpy backend: work runs when it is called, so a stream is
always complete and in order, a wait has nothing to wait for, and an event is complete as
soon as it is recorded, carrying the host's monotonic clock (time.perf_counter_ns)."""
from __future__ import annotations

import threading
import time
from typing import Any


class HostStream:
    def __init__(self, device: int, default: bool = False):
        self.device: int = device
        self.closed: bool = False
        self.default: bool = default
        # As runtime.Stream's: the HostGraph whose capture it takes part in, and the token of
        # its last captured work when that is an event record.
        self.capture: Any = None
        self.cap_last: Any = None
        self.capturing: bool = False


class HostEvent:
    """As NpuEvent: a use after destroy() raises RuntimeError, and a use in progress
    finishes before destroy() returns."""

    def __init__(self, timing: bool):
        self.timing: bool = timing
        self.stamp_ns: int | None = None
        self.device: int | None = None
        self.closed: bool = False
        self.captured: Any = None  # the latest record's runtime.CapturedRecord, if made in a capture
        self._lock = threading.RLock()

    def _open(self, what: str) -> None:
        if self.closed:
            raise RuntimeError(f"Event.{what}: the event is closed")

    def record(self, stream: HostStream) -> None:
        with self._lock:
            self._open("record")
            if stream.closed:
                raise RuntimeError("Event.record: the stream is closed")
            self.stamp_ns = time.perf_counter_ns()
            self.device = stream.device

    def wait_on(self, stream: HostStream) -> None:
        with self._lock:
            self._open("wait")

    def synchronize(self) -> None:
        with self._lock:
            self._open("synchronize")

    def query(self) -> bool:
        with self._lock:
            self._open("query")
            return True

    def elapsed_time(self, end: "HostEvent") -> float:
        first, second = (self, end) if id(self) <= id(end) else (end, self)
        with first._lock, second._lock:
            self._open("elapsed_time")
            end._open("elapsed_time")
            assert self.stamp_ns is not None and end.stamp_ns is not None
            return (end.stamp_ns - self.stamp_ns) / 1e6

    def destroy(self) -> None:
        with self._lock:
            self.closed = True
