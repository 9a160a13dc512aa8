"""Streams and events, as ``torch.cuda`` / ``torch.npu`` have them.

``aa.Stream(device=None)`` is a new stream of a device (default: the current one);
``aa.default_stream()`` the device's default stream, where work goes unless ``with
aa.stream(s):`` makes s current. The current stream is context-local, like
``use_backend()``: a new thread starts on the default stream. Every operator call, raw
``aa.aclnn`` call, plan run and device copy is queued on the current stream; work on two
streams runs in no defined order unless an event orders it (``s.wait_event(e)``,
``s.wait_stream(other)``): two streams touching one array with nothing between them is the
caller's race, as in CUDA. Memory is safe whichever stream frees it: a block is reused
only after the work of every stream that used it has run. ``.numpy()`` waits for the
array's last writer.

``aa.Event(timing=False)``: ``record(stream=None)`` marks the current point of a stream,
``synchronize()`` waits for it, ``query()`` says whether it was reached,
``start.elapsed_time(end)`` gives the milliseconds between two timing events (waiting for
both). On the npu backend that is device time; on the numpy backend, which runs work as it
is called (so its streams are in order by construction), host time.

Closing any of these on one thread while another uses it is safe: each use checks under
the lock its destroy takes, so it runs whole before the close or raises RuntimeError.
Inside ``with aa.graph(g)`` the current stream is the capture's own; a stream that waits
on an event recorded in the capture joins it (CANN's fork), and must be joined back (the
capture's stream waiting on an event recorded on it last) before the block ends. CANN's
capture rules are checked here, before any C call, on both backends.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import weakref
from typing import Any, Iterator, Optional

import numpy as np

from .backends import get_backend, require_npu
from .backends.npu import runtime
from .backends.numpy.streams import HostEvent, HostStream
from .cann.constants import (ACL_ERROR_RT_CAPTURE_DEPENDENCY, ACL_ERROR_RT_EVENT_CAPTURED, ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                             ACL_ERROR_RT_STREAM_CAPTURED)
from .errors import AclnnError, DeviceMismatchError

__all__ = ["Event", "Graph", "Stream", "current_stream", "default_stream", "graph", "stream"]

_current: contextvars.ContextVar[Optional["Stream"]] = contextvars.ContextVar("ascend_aclnn_public_stream",
                                                                              default=None)


def _device_index(device: Any) -> int:
    if device is None:
        return runtime.current_device_index()
    if not isinstance(device, (int, np.integer)) or isinstance(device, bool) or device < 0:
        raise ValueError(f"device: expected None or a non-negative int, got {device!r}")
    return int(device)


def _npu_device(index: int) -> runtime.Device:
    dev = require_npu().device(index)
    dev.activate()
    return dev


def _gated(backend: Optional[str], rt: Optional[runtime.Stream], fn: Any, *args: Any) -> Any:
    """fn(*args); on the npu backend between runtime.enter() and leave(), with rt's device
    made current first when a stream is given (Stream, Event and Graph all gate this way)."""
    if backend != "npu":
        return fn(*args)
    runtime.enter()
    try:
        if rt is not None:
            rt.device.activate()
        return fn(*args)
    finally:
        runtime.leave()


class Stream:
    """A queue of device work; ``Stream(device=None)`` makes a new one on that device."""

    def __init__(self, device: Any = None):
        self._init(_device_index(device), get_backend(), None)

    def _init(self, index: int, backend: str, rt: Optional[runtime.Stream]) -> None:
        self.device: int = index
        self.backend: str = backend
        self._default = rt is not None
        self._finalizer: Optional[weakref.finalize] = None  # type: ignore[type-arg]
        self._host: Optional[HostStream] = None
        self._rt: Optional[runtime.Stream] = None
        self._capture_of: Optional[Graph] = None  # set on a graph's capture stream (current inside its capture)
        if backend != "npu":
            self._host = HostStream(index, default=self._default)
            return
        if rt is None:
            runtime.enter()
            try:
                rt = runtime.Stream(_npu_device(index))
            finally:
                runtime.leave()
            from .backends.npu.streams import release_stream
            self._finalizer = weakref.finalize(self, release_stream, rt)
        self._rt = rt

    @classmethod
    def _of(cls, index: int, backend: str, rt: Optional[runtime.Stream]) -> "Stream":
        s = cls.__new__(cls)
        s._init(index, backend, rt)
        if backend != "npu":
            s._default = True
            assert s._host is not None
            s._host.default = True
        return s

    @classmethod
    def _of_capture(cls, g: "Graph", index: int, backend: str, rt: Optional[runtime.Stream],
                    host: Optional[HostStream]) -> "Stream":
        """The public face of g's capture stream: aa.current_stream() inside the capture."""
        s = cls.__new__(cls)
        s.device, s.backend, s._default, s._finalizer = index, backend, False, None
        s._rt, s._host, s._capture_of = rt, host, g
        return s

    @property
    def _impl(self) -> Any:
        return self._rt if self._rt is not None else self._host

    @property
    def closed(self) -> bool:
        if self._rt is not None:
            return self._rt.closed
        return self._host is not None and self._host.closed

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        if self._rt is not None or other._rt is not None:
            return self._rt is other._rt
        if self._default or other._default:  # the numpy backend's default streams have no object
            return self._default and other._default and self.device == other.device
        return self._host is other._host

    def __hash__(self) -> int:
        if self._rt is not None:
            return id(self._rt)
        return hash(("numpy default stream", self.device)) if self._default else id(self._host)

    def __repr__(self) -> str:
        kind = "default stream" if self._default else f"stream 0x{hash(self):x}"
        state = ", closed" if self.closed else ""
        return f"<ascend_aclnn.Stream {kind} of {self.backend}:{self.device}{state}>"

    def _check(self, what: str) -> None:
        if self.closed:
            raise RuntimeError(f"Stream.{what}: the stream is closed")
        if self._capture_of is not None and self._capture_of._state != "capturing":
            raise RuntimeError(f"Stream.{what}: this is the capture stream of a graph whose capture has ended; it "
                               "can only be used inside `with aa.graph(g)`")
        if self.backend != get_backend():
            raise DeviceMismatchError(f"Stream.{what}: the stream belongs to the {self.backend} backend and the "
                                      f"current backend is {get_backend()}")

    def _gated(self, fn: Any, *args: Any) -> Any:
        return _gated(self.backend, self._rt, fn, *args)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream."""
        self._check("synchronize")
        runtime.refuse_in_capture("aclrtSynchronizeStream", "Stream.synchronize()")
        if self._rt is not None:
            self._gated(self._rt.synchronize)

    def query(self) -> bool:
        """Whether all work queued on this stream has run."""
        self._check("query")
        runtime.refuse_in_capture("aclrtStreamQuery", "Stream.query()")
        if self._rt is None:
            return True
        from .backends.npu.streams import query
        return bool(self._gated(query, self._rt))

    def wait_event(self, event: "Event") -> None:
        """Make work queued on this stream from now on wait for the event's latest record."""
        self._check("wait_event")
        if not isinstance(event, Event):
            raise TypeError(f"event: expected an ascend_aclnn.Event, got {type(event).__name__}")
        event._check_open("wait")
        if event._impl is None:
            return  # never recorded: nothing to wait for (as torch)
        if event._backend != self.backend:
            raise DeviceMismatchError(f"event: recorded on the {event._backend} backend, the stream is on "
                                      f"{self.backend}")
        joining = self._capture_wait(event._impl)
        if self._rt is not None:
            if joining is not None:
                self._gated(joining.fork, self._rt)
            self._gated(event._impl.wait_on, self._rt)
        else:
            event._impl.wait_on(self._host)
        self._capture_waited(event._impl, joining)
        if self._rt is not None:
            return
        if event._impl.device != self.device:
            from .cann.constants import ACL_ERROR_RT_STREAM_CONTEXT
            raise AclnnError(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtStreamWaitEvent",
                             f"the event was recorded on numpy:{event._impl.device}, the stream is on "
                             f"numpy:{self.device}", argument="event")

    def _capture_wait(self, ev: Any) -> Any:
        """CANN's capture rules for this stream waiting on ev's latest record, checked before
        any C call on both backends: waiting on a record made in a capture pulls a stream into
        it (a fork, as CUDA graphs do; the capture then needs it joined back), except the
        default stream (107031); a stream in a capture cannot wait on a record made outside
        it (107024). Returns the graph impl the stream joins, or None."""
        rec = ev.captured
        live = rec if rec is not None and rec.graph.capturing else None
        cap = self._impl.capture
        if live is not None:
            if cap is None:
                if self._default:
                    raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, "aclrtStreamWaitEvent",
                                     "the event was recorded in a graph capture and the device's default stream "
                                     "cannot take part in a capture; wait on it from another stream",
                                     argument="event")
                return live.graph
            if cap is not live.graph:
                raise AclnnError(ACL_ERROR_RT_CAPTURE_DEPENDENCY, "aclrtStreamWaitEvent",
                                 "the stream is in a graph capture and the event was recorded in another one",
                                 argument="event")
        elif cap is not None:
            raise AclnnError(ACL_ERROR_RT_CAPTURE_DEPENDENCY, "aclrtStreamWaitEvent",
                             "the stream is in a graph capture and the event was recorded outside it; a captured "
                             "stream can only wait on work captured with it (wait before the capture begins)",
                             argument="event")
        return None

    def _capture_waited(self, ev: Any, joining: Any) -> None:
        impl = self._impl
        if joining is not None:
            joining.forked_in(impl)
        if impl.capture is not None:  # the wait is a captured task
            rec = ev.captured
            if rec is not None and impl is impl.capture.stream:
                rec.joined = True  # the capture's own stream waited on it: a join
            impl.cap_last = None

    def wait_stream(self, other: "Stream") -> None:
        """Make work queued on this stream from now on wait for what is queued on other now."""
        self._check("wait_stream")
        if not isinstance(other, Stream):
            raise TypeError(f"other: expected an ascend_aclnn.Stream, got {type(other).__name__}")
        other._check("wait_stream")
        e = Event()
        try:
            e.record(other)
            self.wait_event(e)
        finally:
            e.close()  # CANN keeps the record the wait needs

    def close(self) -> None:
        """Destroy the stream after its queued work (also done when it is garbage collected).
        The default stream cannot be closed."""
        if self._default:
            raise ValueError("Stream.close: a device's default stream cannot be closed")
        if self._capture_of is not None:
            raise RuntimeError("Stream.close: this is a graph's capture stream; it goes with the graph (Graph.close)")
        if self._impl.capturing:
            raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, "aclrtDestroyStream",
                             "the stream is taking part in a graph capture; close it after the capture ends")
        if self._finalizer is not None:
            self._finalizer()
        if self._host is not None:
            self._host.closed = True


def default_stream(device: Any = None) -> Stream:
    """The device's default stream (device: None for the current one)."""
    index, backend = _device_index(device), get_backend()
    if backend != "npu":
        return Stream._of(index, backend, None)
    runtime.enter()
    try:
        return Stream._of(index, backend, _npu_device(index).default_stream)
    finally:
        runtime.leave()


def current_stream(device: Any = None) -> Stream:
    """The stream work of this context goes to on the device (None: the current device)."""
    index = _device_index(device)
    cur = _current.get()
    if cur is not None and cur.device == index and cur.backend == get_backend():
        return cur
    return default_stream(index)


@contextlib.contextmanager
def stream(s: Optional[Stream]) -> Iterator[Optional[Stream]]:
    """``with aa.stream(s):`` queues this context's work on s (None: no change)."""
    if s is None:
        yield None
        return
    if not isinstance(s, Stream):
        raise TypeError(f"stream: expected an ascend_aclnn.Stream or None, got {type(s).__name__}")
    s._check("stream")
    if s.device != runtime.current_device_index():
        raise DeviceMismatchError(f"stream: the stream is on {s.backend}:{s.device} and the current device is "
                                  f"{runtime.current_device_index()}; call set_device({s.device}) first")
    token = _current.set(s)
    rt_token = runtime.current_stream.set(s._rt)
    host_token = runtime.current_host_stream.set(s._host)
    try:
        yield s
    finally:
        runtime.current_host_stream.reset(host_token)
        runtime.current_stream.reset(rt_token)
        _current.reset(token)


def _destroy(impl: Any) -> None:
    impl.destroy()


class Event:
    """A marker in a stream's work; ``timing=True`` to measure time between two of them."""

    def __init__(self, timing: bool = False):
        if not isinstance(timing, bool):
            raise TypeError(f"timing: expected a bool, got {timing!r}")
        self.timing: bool = timing
        self._backend: Optional[str] = None
        self._impl: Any = None
        self._closed = False
        self._finalizer: Optional[weakref.finalize] = None  # type: ignore[type-arg]
        self._lock = threading.Lock()  # the first record's creation of _impl, against close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("never recorded" if self._impl is None else f"on {self._backend}")
        return f"<ascend_aclnn.Event timing={self.timing} {state}>"

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"Event.{what}: the event is closed")

    def record(self, stream: Optional[Stream] = None) -> None:
        """Mark the current point of stream (None: the current stream)."""
        self._check_open("record")
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream: expected an ascend_aclnn.Stream or None, got {type(stream).__name__}")
        target = stream if stream is not None else current_stream()
        target._check("record")
        backend = target.backend
        if self._backend is not None and backend != self._backend:
            raise DeviceMismatchError(f"Event.record: the event was recorded on the {self._backend} backend and "
                                      f"the stream is on {backend}; use one event per backend")
        if self._impl is None:
            with self._lock:
                self._check_open("record")  # a close() meanwhile must not be outlived by a new impl
                if self._impl is None:
                    if backend == "npu":
                        from .backends.npu.streams import NpuEvent
                        impl: Any = NpuEvent(self.timing)
                    else:
                        impl = HostEvent(self.timing)
                    self._finalizer = weakref.finalize(self, _destroy, impl)
                    self._backend, self._impl = backend, impl
                    if backend == "npu":
                        _live.add(self)
        if backend == "npu":
            self._gated(self._impl.record, target._rt)
        else:
            self._impl.record(target._host)
        cap = target._impl.capture
        # A record on a stream in a capture is captured: a stream waiting on it joins the capture.
        self._impl.captured = rec = runtime.CapturedRecord(cap) if cap is not None else None
        if cap is not None:
            target._impl.cap_last = rec

    def _gated(self, fn: Any, *args: Any) -> Any:
        return _gated(self._backend, None, fn, *args)

    def _refuse_captured(self, api: str) -> None:
        """CANN's answer, before any C call on both backends, for waiting on or timing a
        record made in a capture still in progress (from outside it: inside, the capture
        refuses any host wait first)."""
        rec = getattr(self._impl, "captured", None)
        if rec is not None and rec.graph.capturing:
            raise AclnnError(ACL_ERROR_RT_EVENT_CAPTURED, api,
                             "the event was last recorded in a graph capture still in progress; it has no point "
                             "to reach until a replay: wait on it after recording it outside the capture")

    def synchronize(self) -> None:
        """Wait until the work before the record has run (at once if never recorded)."""
        self._check_open("synchronize")
        runtime.refuse_in_capture("aclrtSynchronizeEvent", "Event.synchronize()")
        self._refuse_captured("aclrtSynchronizeEvent")
        if self._impl is not None:
            self._gated(self._impl.synchronize)

    def query(self) -> bool:
        """Whether the work before the record has run (True if never recorded)."""
        self._check_open("query")
        runtime.refuse_in_capture("aclrtQueryEventStatus", "Event.query()")
        self._refuse_captured("aclrtQueryEventStatus")
        return True if self._impl is None else bool(self._gated(self._impl.query))

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event's record to end's; waits for both first."""
        self._check_open("elapsed_time")
        runtime.refuse_in_capture("aclrtEventElapsedTime", "Event.elapsed_time()")
        if not isinstance(end, Event):
            raise TypeError(f"end: expected an ascend_aclnn.Event, got {type(end).__name__}")
        end._check_open("elapsed_time")
        self._refuse_captured("aclrtEventElapsedTime")
        end._refuse_captured("aclrtEventElapsedTime")
        if not (self.timing and end.timing):
            raise ValueError("Event.elapsed_time: both events must be created with timing=True "
                             f"(start has timing={self.timing}, end has timing={end.timing})")
        for name, ev in (("start", self), ("end", end)):
            if ev._impl is None:
                raise AclnnError(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtEventElapsedTime",
                                 f"the {name} event was never recorded (call record() first)", argument=name)
        if self._backend != end._backend:
            raise DeviceMismatchError(f"Event.elapsed_time: start was recorded on the {self._backend} backend and "
                                      f"end on the {end._backend} backend")
        if self._impl.device is not end._impl.device and self._impl.device != end._impl.device:
            raise DeviceMismatchError("Event.elapsed_time: start and end were recorded on different devices")
        return float(self._gated(self._impl.elapsed_time, end._impl))

    def close(self) -> None:
        """Release the event now (also done when it is garbage collected)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            finalizer = self._finalizer
        if finalizer is not None:
            finalizer()  # the impl's destroy: after the uses in progress, before any later one


# ---- graphs --------------------------------------------------------------------------------

class Graph:
    """Work captured once (``with aa.graph(g):``) and replayed many times (``g.replay()``),
    without the host cost of each launch. The arrays the captured calls read and write are
    static: a replay recomputes from their current contents (feed new inputs with
    ``DeviceArray.copy_``) into the same outputs."""

    def __init__(self) -> None:
        self.backend: Optional[str] = None
        self._impl: Any = None
        self._state = "new"  # new, capturing, captured, failed, closed
        self._tokens: list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]] = []  # the capture's context
        self._finalizer: Optional[weakref.finalize] = None  # type: ignore[type-arg]

    def __repr__(self) -> str:
        return f"<ascend_aclnn.Graph {self._state}{' on ' + self.backend if self.backend else ''}>"

    def _gated(self, fn: Any, *args: Any) -> Any:
        return _gated(self.backend, None, fn, *args)

    def _begin(self) -> None:
        if self._state != "new":
            raise RuntimeError(f"Graph: this graph is {self._state}; a graph captures once (make a new one)")
        if get_backend() == "npu":
            runtime.refuse_in_forked_child()  # the numpy backend works in a forked child
        if runtime.current_capture.get() is not None:
            raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, "aclmdlRICaptureBegin",
                             "a capture is already in progress in this context (graphs do not nest)")
        backend = get_backend()
        index = runtime.current_device_index()
        self._tokens = []
        if backend == "npu":
            from .backends.npu.graphs import NpuGraph
            impl: Any = NpuGraph()

            def begin() -> None:
                impl.begin(_npu_device(index), self)
            self._gated(begin)
            wrapper = Stream._of_capture(self, index, backend, impl.stream, None)
        else:
            from .backends.numpy.graphs import HostGraph
            impl = HostGraph(index)
            self._tokens = [(runtime.current_capture, runtime.current_capture.set(self)),
                            (runtime.current_host_stream, runtime.current_host_stream.set(impl.stream))]
            wrapper = Stream._of_capture(self, index, backend, None, impl.stream)
        # Inside the capture the current stream is the capture's own, as in torch: work
        # forked from it onto a side stream (side.wait_stream(aa.current_stream())) joins it.
        self._tokens.append((_current, _current.set(wrapper)))
        self.backend, self._impl, self._state = backend, impl, "capturing"
        self._finalizer = weakref.finalize(self, _destroy_graph, impl)
        if backend == "npu":
            _live.add(self)

    def record(self, b: Any, tensors: list[Any], outs: list[Any], run: Any) -> Any:
        """The numpy backend's calls during the capture (api.run_bound): run now by ``run``,
        and at every replay."""
        return self._impl.record(b, tensors, outs, run)

    def record_copy(self, dst: Any, src: Any) -> None:
        """The numpy backend's device copies during the capture (DeviceArray.copy_, copy())."""
        self._impl.record_copy(dst, src)

    def _end(self, ok: bool) -> None:
        for var, token in reversed(self._tokens):
            var.reset(token)
        self._tokens = []
        try:
            if self.backend == "npu":
                self._gated(self._impl.end, ok)
            else:
                self._impl.end(ok)
        except BaseException:
            self._state = "failed"
            raise
        self._state = "captured" if ok else "failed"

    def replay(self, stream: Optional[Stream] = None) -> None:
        """Queue the captured work on stream (None: the current stream)."""
        if self._state != "captured":
            raise RuntimeError(f"Graph.replay: the graph is {self._state}, not captured")
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream: expected an ascend_aclnn.Stream or None, got {type(stream).__name__}")
        target = stream if stream is not None else current_stream()
        target._check("replay")
        if target.backend != self.backend:
            raise DeviceMismatchError(f"Graph.replay: the graph was captured on the {self.backend} backend and the "
                                      f"stream is on {target.backend}")
        if self.backend != "npu":
            if runtime.current_capture.get() is not None:
                raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, "aclmdlRIExecuteAsync",
                                 "a graph cannot be replayed while a graph is being captured")
            self._impl.replay()
            return
        if target._rt.device is not self._impl.device:  # type: ignore[union-attr]
            raise DeviceMismatchError(f"Graph.replay: the graph was captured on npu:{self._impl.device.index} and "
                                      f"the stream is on npu:{target.device}")
        self._gated(self._impl.replay, target._rt)

    def close(self) -> None:
        """Destroy the captured graph (after the replays queued so far) and release what it
        holds. Also done when the graph is garbage collected."""
        if self._state == "capturing":
            raise RuntimeError("Graph.close: the graph is being captured; leave the `with aa.graph(g)` block first")
        self._state = "closed"
        if self._finalizer is not None:
            self._finalizer()


def _destroy_graph(impl: Any) -> None:
    impl.close()


@contextlib.contextmanager
def graph(g: Graph) -> Iterator[Graph]:
    """``with aa.graph(g):`` captures the calls made inside into g. Anything that needs the
    host inside (NumPy inputs or outputs, ``.numpy()``, a synchronize, ``empty_cache``, an
    upload) is refused before any C call; when the block raises, the capture is abandoned
    and the runtime works as before."""
    if not isinstance(g, Graph):
        raise TypeError(f"graph: expected an ascend_aclnn.Graph, got {type(g).__name__}")
    g._begin()
    try:
        yield g
    except BaseException:
        g._end(False)
        raise
    g._end(True)


# The npu backend's live graphs and events: the runtime's teardown destroys them (graphs,
# then events) before it destroys the streams, as CANN's order is (a model and an event
# name their streams), with the exit gate already closed.
_live: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _close_all() -> None:
    for kind in (Graph, Event):
        for obj in [o for o in list(_live) if isinstance(o, kind)]:
            finalizer = obj._finalizer
            found = finalizer.detach() if finalizer is not None else None
            if found is None:
                continue
            impl = found[2][0]
            try:
                if kind is Graph:
                    impl.close(gated=False)
                else:
                    impl.destroy(gated=False)
            except Exception:
                pass


runtime.teardown_hooks.append(_close_all)
