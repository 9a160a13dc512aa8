"""Streams and events on the npu backend.

A user stream is a runtime.Stream of its own (aclrtCreateStream), sharing its device's lock
and allocator; runtime.current_stream makes it the one every launch, copy and plan run of
the context goes to. An event's C event is created at its first record, on the device of
the stream it is recorded on (as torch_npu does), with aclrtCreateEventExWithFlag:
ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC for a timing event, SYNC alone otherwise (Ex events
can be recorded again and again, and can be waited on). Every C call goes through the
runtime's gate; a failed event sync flags what the discarded work would have written, as
a failed stream sync does. The event primitives below (create, record, query, destroy)
serve both NpuEvent and the allocator, whose freed blocks wait on events of their own
(runtime.Allocator).
"""
from __future__ import annotations

import contextlib
import ctypes
import threading
from typing import Any

from ...cann.constants import (ACL_ERROR_RT_STREAM_CONTEXT, ACL_EVENT_SYNC,
                               ACL_EVENT_TIME_LINE, ACL_STREAM_STATUS_COMPLETE)
from ...errors import AclnnError
from . import runtime
from .runtime import Device, Stream, check, create_event, destroy_event, event_complete, record_event


def release_stream(stream: Stream) -> None:
    """Destroy a user stream (after its queued work). Never raises: it runs from close() and
    the garbage collector; after teardown or in a forked child the runtime has disowned it."""
    if stream.closed or runtime.runtime_if_started() is None or runtime.in_forked_child():
        return
    if stream.capturing and stream.capture is not None:  # CANN refuses to destroy it now: at the capture's end
        stream.capture.deferred.append(stream)
        return
    try:
        with runtime.gated:
            stream.device.activate()
            stream.destroy()
    except Exception:
        pass


def query(stream: Stream) -> bool:
    """Whether all work queued on the stream has run."""
    dev = stream.device
    dev.activate()
    st = ctypes.c_int()
    with stream.lock:  # destroy() takes it: a query never reaches CANN with a destroyed stream
        stream.refuse_closed()
        status = dev.cann.function("aclrtStreamQuery")(stream.handle, ctypes.byref(st))
    check(dev.cann, status, "aclrtStreamQuery")
    return st.value == ACL_STREAM_STATUS_COMPLETE


def _closed(what: str) -> RuntimeError:
    return RuntimeError(f"Event.{what}: the event is closed")


class NpuEvent:
    """One ACL event, bound to the device of its first record. Every use holds ``_lock``
    around its C call and destroy() takes it to mark the event closed, so a use either runs
    before the destroy or raises RuntimeError; never a C call with a destroyed handle.
    Lock order: an event's lock, then a stream's (the device's)."""

    def __init__(self, timing: bool):
        self.timing: bool = timing
        self.device: Device | None = None
        self.handle: int | None = None
        self.stream: Stream | None = None  # of the latest record
        self.closed: bool = False
        self.captured: Any = None  # the latest record's runtime.CapturedRecord, if made in a capture
        self._lock = threading.RLock()

    def record(self, stream: Stream) -> None:
        dev = stream.device
        dev.activate()
        with self._lock:
            if self.closed:
                raise _closed("record")
            if self.device is not None and self.device is not dev:
                raise AclnnError(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtRecordEvent",
                                 f"the event was first recorded on npu:{self.device.index}, the stream is on "
                                 f"npu:{dev.index}; use one event per device", argument="stream")
            with stream.lock:
                stream.refuse_closed()
                if self.handle is None:
                    flags = ACL_EVENT_SYNC | (ACL_EVENT_TIME_LINE if self.timing else 0)
                    self.handle, self.device = create_event(dev, flags), dev
                record_event(self.handle, stream)
                self.stream = stream

    def wait_on(self, stream: Stream) -> None:
        """Make stream's later work wait for this event's latest record."""
        dev = stream.device
        with self._lock:
            if self.closed:
                raise _closed("wait")
            if self.device is None:
                return  # never recorded: nothing to wait for
            if self.device is not dev:
                raise AclnnError(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtStreamWaitEvent",
                                 f"the event was recorded on npu:{self.device.index}, the stream is on "
                                 f"npu:{dev.index}", argument="event")
            dev.activate()
            with stream.lock:
                stream.refuse_closed()
                check(dev.cann, dev.cann.function("aclrtStreamWaitEvent")(stream.handle, self.handle),
                      "aclrtStreamWaitEvent")

    def synchronize(self) -> None:
        with self._lock:
            if self.closed:
                raise _closed("synchronize")
            self._synchronize()

    def _synchronize(self) -> None:
        dev, stream = self.device, self.stream
        if dev is None or stream is None:
            return
        dev.activate()
        status = dev.cann.function("aclrtSynchronizeEvent")(self.handle)
        if status:
            stream.discarded(status, "aclrtSynchronizeEvent")

    def query(self) -> bool:
        with self._lock:
            if self.closed:
                raise _closed("query")
            dev = self.device
            if dev is None:
                return True
            dev.activate()
            assert self.handle is not None
            return event_complete(dev, self.handle)

    def elapsed_time(self, end: "NpuEvent") -> float:
        """Milliseconds from this event to end; both are synchronised first (torch_npu's rule).
        Both events' locks are held (taken in a fixed order: two threads timing the same pair
        the other way round cannot deadlock)."""
        first, second = (self, end) if id(self) <= id(end) else (end, self)
        with first._lock, second._lock:
            for ev in (self, end):
                if ev.closed:
                    raise _closed("elapsed_time")
            assert self.device is not None and end.device is not None
            self._synchronize()
            end._synchronize()
            ms = ctypes.c_float()
            self.device.activate()
            check(self.device.cann, self.device.cann.function("aclrtEventElapsedTime")(
                ctypes.byref(ms), self.handle, end.handle), "aclrtEventElapsedTime")
            return float(ms.value)

    def destroy(self, gated: bool = True) -> None:
        """Destroy the C event (CANN frees it once its record has run). Never raises, as
        release_stream. ``gated`` False: from the runtime's teardown (the gate is closed)."""
        with self._lock:  # after any use in progress; later ones see closed
            self.closed = True
            handle, dev, self.handle, self.stream = self.handle, self.device, None, None
        if handle is None or dev is None or runtime.runtime_if_started() is None or runtime.in_forked_child():
            return
        try:
            with runtime.gated if gated else contextlib.nullcontext():
                dev.activate()
                destroy_event(dev, handle)
        except Exception:
            pass
