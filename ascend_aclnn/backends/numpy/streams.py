"""Streams and events on the numpy backend: work runs when it is called, so a stream is
always complete and in order, a wait has nothing to wait for, and an event is complete as
soon as it is recorded, carrying the host's monotonic clock (time.perf_counter_ns)."""
from __future__ import annotations

import time


class HostStream:
    def __init__(self, device: int):
        self.device: int = device
        self.closed: bool = False


class HostEvent:
    def __init__(self, timing: bool):
        self.timing: bool = timing
        self.stamp_ns: int | None = None
        self.device: int | None = None

    def record(self, stream: HostStream) -> None:
        self.stamp_ns = time.perf_counter_ns()
        self.device = stream.device

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "HostEvent") -> float:
        assert self.stamp_ns is not None and end.stamp_ns is not None
        return (end.stamp_ns - self.stamp_ns) / 1e6

    def destroy(self) -> None:
        pass
