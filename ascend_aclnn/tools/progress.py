"""Progress on stderr for the long commands (compare, bench, bench's npu section)."""
from __future__ import annotations

from typing import TextIO


class Progress:
    """A progress bar: redrawn in place (``\\r``) on a terminal, one plain line per step
    otherwise (a log file or CI output gets no carriage returns or escape codes)."""

    def __init__(self, total: int, stream: TextIO, enabled: bool = True, width: int = 24):
        self.total: int = total
        self.stream: TextIO = stream
        self.enabled: bool = enabled
        self.done: int = 0
        self.width: int = width
        self.tty: bool = enabled and _isatty(stream)

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        filled = self.width * self.done // max(self.total, 1)
        bar = f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done + 1}/{self.total} {label}"
        if self.tty:
            self.stream.write("\r\x1b[K" + bar)
        else:
            self.stream.write(bar + "\n")
        self.stream.flush()
        self.done += 1

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
