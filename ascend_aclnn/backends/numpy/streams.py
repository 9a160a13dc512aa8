"""Events on the numpy backend: work runs when it is called, so an event is complete as
soon as it is recorded and carries the host's monotonic clock (time.perf_counter_ns)."""
from __future__ import annotations

import time


class HostEvent:
    def __init__(self, timing: bool):
        self.timing: bool = timing
        self.stamp_ns: int | None = None

    def record(self) -> None:
        self.stamp_ns = time.perf_counter_ns()

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "HostEvent") -> float:
        assert self.stamp_ns is not None and end.stamp_ns is not None
        return (end.stamp_ns - self.stamp_ns) / 1e6

    def destroy(self) -> None:
        pass
