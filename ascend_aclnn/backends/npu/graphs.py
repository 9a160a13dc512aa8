"""Graph capture on the npu backend: stream capture into a model runtime instance.

A graph captures on a private stream of its own (made current for the capturing context),
as torch.npu.graph does: the device is synchronised first, then aclmdlRICaptureBegin in
THREAD_LOCAL mode (other threads keep their synchronous copies; this context's host calls
are refused by the binding before any C call). What the captured launches use (arrays,
workspaces, handles) stays on that stream's pending list, which nothing ever synchronises:
the graph holds it until close(). A replay queues aclmdlRIExecuteAsync on a stream and
records the graph's holdings (the captured workspace included) there too, so close() never
frees memory under a replay that has not run; its outputs' reads wait for that stream.
A replay reads the model under the device's lock, which close() takes to destroy it.

Streams forked into the capture (ascend_aclnn.streams checks CANN's fork/join rules) are
synchronised before they join, so everything they keep afterwards is the graph's: at the
end their keep-alive lists and workspaces move to the graph's stream.
"""
from __future__ import annotations

import contextlib
import contextvars
import ctypes
from typing import Any, Optional

from ...cann.constants import (ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_UNJOINED,
                               ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
from ...errors import AclnnError
from . import runtime
from .runtime import Device, DeviceBuffer, Holdings, Stream, check


class NpuGraph:
    def __init__(self) -> None:
        self.device: Optional[Device] = None
        self.stream: Optional[Stream] = None
        self.model: Optional[int] = None
        self.written: list[DeviceBuffer] = []
        self.holdings: Optional[Holdings] = None
        self.capturing: bool = False
        self.forked: list[Stream] = []    # streams that joined the capture through an event
        self.deferred: list[Stream] = []  # of those, the ones collected meanwhile: destroyed at the end
        self._tokens: list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]] = []

    def begin(self, device: Device, public: Any) -> None:
        device.synchronize()  # as torch.npu.graph: nothing of before runs inside the capture
        stream = Stream(device)
        stream.graph = self
        with device.lock:
            status = device.cann.function("aclmdlRICaptureBegin")(stream.handle, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
            if status:
                stream.graph = None
                stream.destroy()
                check(device.cann, status, "aclmdlRICaptureBegin")
            stream.capturing = True
            stream.capture = self
            self.capturing = True
        self.device, self.stream = device, stream
        self._tokens = [(runtime.current_stream, runtime.current_stream.set(stream)),
                        (runtime.current_capture, runtime.current_capture.set(public))]

    def fork(self, side: Stream) -> None:
        """Before side's wait on an event recorded in this capture (which pulls it in, as
        CANN does): its eager work runs first, so what it keeps from then on is the graph's."""
        side.synchronize()

    def forked_in(self, side: Stream) -> None:
        """After that wait: side's launches are captured until the capture ends."""
        with side.lock:
            side.capture, side.capturing, side.cap_last = self, True, None
            self.forked.append(side)

    def end(self, ok: bool) -> None:
        """End the capture; when the block failed (ok False), a forked stream was not joined
        back, or the end failed, nothing is kept and the runtime is as before the capture."""
        for var, token in reversed(self._tokens):
            var.reset(token)
        self._tokens = []
        stream, device = self.stream, self.device
        assert stream is not None and device is not None
        loose = runtime.unjoined(self.forked) if ok else None  # CANN's join rule, checked first
        if loose is not None:
            ok = False
        model = ctypes.c_void_p()
        with device.lock:
            status = device.cann.function("aclmdlRICaptureEnd")(stream.handle, ctypes.byref(model))
            forked, self.forked = self.forked, []
            for s in [stream] + forked:
                s.capturing, s.capture, s.cap_last = False, None, None
            self.capturing = False
        if status:  # leave capture mode whatever happened, so the stream can be destroyed
            again = ctypes.c_void_p()
            with device.lock:
                device.cann.function("aclmdlRICaptureEnd")(stream.handle, ctypes.byref(again))
            if again.value and not model.value:
                model = again
        try:
            if status or not ok:
                if model.value:
                    device.cann.function("aclmdlRIDestroy")(model.value)
                recent = runtime.recent_error_message(device.cann) if status else None
                for s in forked:  # their captured work went with the model
                    with s.lock:
                        s._pending, s._written, s._queued, s.queued = [], [], [], 0
                try:
                    self._drop()
                except AclnnError:
                    if ok and status:
                        pass  # the end's own failure is the one to report
                    else:
                        raise
                if loose is not None:
                    raise AclnnError(ACL_ERROR_RT_STREAM_UNJOINED, "aclmdlRICaptureEnd", runtime.UNJOINED)
                if status and ok:
                    raise AclnnError(status, "aclmdlRICaptureEnd", recent=recent)
                return
            self.model = model.value
            with stream.lock:
                for s in [stream] + forked:
                    self.written += s._written
                    # Every replay runs on the workspace the launches were captured with: it goes
                    # with the holdings, so a replay still queued keeps it after close().
                    ws, s._workspace = s._workspace, None
                    if ws is not None:
                        s._pending.append(ws)
                    if s is not stream:  # the graph's stream keeps it all (free() looks there)
                        stream._pending += s._pending
                        s._pending, s._written, s._queued, s.queued = [], [], [], 0
                self.holdings = Holdings(stream._pending)
        finally:
            self._release_deferred()

    def _release_deferred(self) -> None:
        from .streams import release_stream
        deferred, self.deferred = self.deferred, []
        for s in deferred:
            release_stream(s)

    def replay(self, target: Stream) -> None:
        device = self.device
        assert device is not None
        if target.capturing or runtime.current_capture.get() is not None:
            raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, "aclmdlRIExecuteAsync",
                             "a graph cannot be replayed while a graph is being captured")
        device.activate()
        with target.lock:  # the device's: close() takes it to destroy the model
            model = self.model
            if model is None:
                raise RuntimeError("Graph.replay: the graph is closed")
            target.throttle()
            check(device.cann, device.cann.function("aclmdlRIExecuteAsync")(model, target.handle),
                  "aclmdlRIExecuteAsync")
            target.record([self.holdings], self.written, "aclmdlRIExecuteAsync")

    def _drop(self) -> None:
        stream, self.stream, self.holdings, self.written = self.stream, None, None, []
        if stream is not None:
            stream.destroy()  # idle: releases what the graph held (replays still queued hold theirs)

    def close(self, gated: bool = True) -> None:
        """Destroy the model after the replays queued so far (they keep what they use), then
        the graph's stream. Never raises (close() and the garbage collector call it).
        ``gated`` False: from the runtime's teardown, which runs with the gate closed."""
        device = self.device
        if device is None or runtime.runtime_if_started() is None or runtime.in_forked_child() or device.closed:
            self.model = None
            return
        try:
            with runtime.gated if gated else contextlib.nullcontext():
                device.activate()
                # Under the device's lock, which a replay holds from reading the model to its
                # aclmdlRIExecuteAsync: a replay either is queued before the destroy or sees None.
                with device.lock:
                    model, self.model = self.model, None
                    if model:
                        device.cann.function("aclmdlRIDestroy")(model)
                    self._drop()
        except Exception:
            pass
