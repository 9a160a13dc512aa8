"""Events on the npu backend: an ACL event recorded on the device's stream.

The C event is created at the first record, on the current device (as torch_npu does), with
aclrtCreateEventExWithFlag: ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC for a timing event, SYNC
alone otherwise (Ex events can be recorded again and again and may later join a capture).
Every C call goes through the runtime's gate; a failed event sync flags what the discarded
work would have written, as a failed stream sync does.
"""
from __future__ import annotations

import ctypes
import threading

from ...cann.constants import ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE
from . import runtime
from .runtime import Device, check


class NpuEvent:
    """One ACL event, bound to the device of its first record."""

    def __init__(self, timing: bool):
        self.timing: bool = timing
        self.device: Device | None = None
        self.handle: int | None = None
        self._lock = threading.Lock()

    def record(self) -> None:
        dev = runtime.current_device()
        with self._lock:
            if self.device is not None and self.device is not dev:
                raise ValueError(f"event: recorded on npu:{self.device.index} before, so it cannot be recorded "
                                 f"on npu:{dev.index} (the current device); use one event per device")
            if self.handle is None:
                h = ctypes.c_void_p()
                flags = ACL_EVENT_SYNC | (ACL_EVENT_TIME_LINE if self.timing else 0)
                check(dev.cann, dev.cann.function("aclrtCreateEventExWithFlag")(ctypes.byref(h), flags),
                      "aclrtCreateEventExWithFlag")
                self.handle, self.device = h.value, dev
        stream = dev.stream
        with stream.lock:
            check(dev.cann, dev.cann.function("aclrtRecordEvent")(self.handle, stream.handle), "aclrtRecordEvent")

    def synchronize(self) -> None:
        dev = self.device
        if dev is None:
            return
        dev.activate()
        status = dev.cann.function("aclrtSynchronizeEvent")(self.handle)
        if status:
            dev.stream.discarded(status, "aclrtSynchronizeEvent")

    def query(self) -> bool:
        dev = self.device
        if dev is None:
            return True
        dev.activate()
        st = ctypes.c_int()
        check(dev.cann, dev.cann.function("aclrtQueryEventStatus")(self.handle, ctypes.byref(st)),
              "aclrtQueryEventStatus")
        return st.value == ACL_EVENT_RECORDED_STATUS_COMPLETE

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
        """Destroy the C event (CANN frees it once its record has run). Never raises: it runs
        from close() and the garbage collector; after teardown or in a forked child the
        runtime has disowned it."""
        with self._lock:
            handle, dev, self.handle = self.handle, self.device, None
        if handle is None or dev is None or runtime.runtime_if_started() is None or runtime.in_forked_child():
            return
        try:
            with runtime.gated:
                dev.activate()
                dev.cann.function("aclrtDestroyEvent")(handle)
        except Exception:
            pass
