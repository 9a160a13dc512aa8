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

import ctypes
import threading

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
    check(dev.cann, dev.cann.function("aclrtStreamQuery")(stream.handle, ctypes.byref(st)), "aclrtStreamQuery")
    return st.value == ACL_STREAM_STATUS_COMPLETE


class NpuEvent:
    """One ACL event, bound to the device of its first record."""

    def __init__(self, timing: bool):
        self.timing: bool = timing
        self.device: Device | None = None
        self.handle: int | None = None
        self.stream: Stream | None = None  # of the latest record
        self._lock = threading.Lock()

    def record(self, stream: Stream) -> None:
        dev = stream.device
        dev.activate()
        with self._lock:
            if self.device is not None and self.device is not dev:
                raise AclnnError(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtRecordEvent",
                                 f"the event was first recorded on npu:{self.device.index}, the stream is on "
                                 f"npu:{dev.index}; use one event per device", argument="stream")
            if self.handle is None:
                flags = ACL_EVENT_SYNC | (ACL_EVENT_TIME_LINE if self.timing else 0)
                self.handle, self.device = create_event(dev, flags), dev
            handle = self.handle
        with stream.lock:
            record_event(handle, stream)
            self.stream = stream

    def wait_on(self, stream: Stream) -> None:
        """Make stream's later work wait for this event's latest record."""
        dev = stream.device
        if self.device is None:
            return  # never recorded: nothing to wait for
        if self.device is not dev:
            raise AclnnError(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtStreamWaitEvent",
                             f"the event was recorded on npu:{self.device.index}, the stream is on npu:{dev.index}",
                             argument="event")
        dev.activate()
        with stream.lock:
            check(dev.cann, dev.cann.function("aclrtStreamWaitEvent")(stream.handle, self.handle),
                  "aclrtStreamWaitEvent")

    def synchronize(self) -> None:
        dev, stream = self.device, self.stream
        if dev is None or stream is None:
            return
        dev.activate()
        status = dev.cann.function("aclrtSynchronizeEvent")(self.handle)
        if status:
            stream.discarded(status, "aclrtSynchronizeEvent")

    def query(self) -> bool:
        dev = self.device
        if dev is None:
            return True
        dev.activate()
        assert self.handle is not None
        return event_complete(dev, self.handle)

    def elapsed_time(self, end: "NpuEvent") -> float:
        """Milliseconds from this event to end; both are synchronised first (torch_npu's rule)."""
        assert self.device is not None and end.device is not None
        self.synchronize()
        end.synchronize()
        ms = ctypes.c_float()
        self.device.activate()
        check(self.device.cann, self.device.cann.function("aclrtEventElapsedTime")(
            ctypes.byref(ms), self.handle, end.handle), "aclrtEventElapsedTime")
        return float(ms.value)

    def destroy(self) -> None:
        """Destroy the C event (CANN frees it once its record has run). Never raises, as
        release_stream."""
        with self._lock:
            handle, dev, self.handle, self.stream = self.handle, self.device, None, None
        if handle is None or dev is None or runtime.runtime_if_started() is None or runtime.in_forked_child():
            return
        try:
            with runtime.gated:
                dev.activate()
                destroy_event(dev, handle)
        except Exception:
            pass
