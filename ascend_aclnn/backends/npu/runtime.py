"""The ACL runtime (thin): init, devices, their streams, device memory, and the gate
every public entry point passes (interpreter exit, forked children).

Used by the npu backend and by DeviceArray. Device memory goes through a per-device caching allocator,
so steady-state calls do no aclrtMalloc/aclrtFree. Whatever a launched operator touches
(inputs, outputs, a replaced workspace) is kept alive by its stream until the stream is
synchronised: work runs asynchronously, and memory released early would be reused under
a kernel that has not run yet. With several streams that holds per stream. An explicit
free() does not wait: it records an event on each stream whose queued work uses the block
(``Stream.uses``: an array over it, or a queued graph replay's holdings), and the
allocator hands the block out again only once all of them have completed (``Allocator``);
when an event cannot be recorded, that free() waits for those streams instead. A graph's
private stream keeps what its captured launches use until the graph closes, and replays
still queued keep it after that.

Threads: every thread may call in. ACL contexts are per thread, so every entry point
makes its device current on the calling thread first (``Device.activate``, once per
thread). Work goes to the context's current stream (``current_stream``, set by
``aa.stream(s)``), else the device's default stream. All streams of a device share the
device's lock: a launch (workspace, keep-alive, phase 2), a synchronisation (the C call,
and releasing what was pending when it began) and a free() never interleave, and one
thread may wait for several streams without a lock-order deadlock. A stream is in order,
so a DeviceArray can be handed between threads on one stream with no extra ordering, and
a sync that fails knows exactly which queued work it discarded.
"""
from __future__ import annotations

import atexit
import contextvars
import ctypes
import os
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any, Callable, Sequence

from ...cann.constants import (ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_STREAM_CAPTURED,
                               ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                               ACL_EVENT_RECORDED_STATUS_COMPLETE,
                               ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_EVENT_CAPTURE_STREAM_PROGRESS,
                               ACL_MEM_MALLOC_HUGE_FIRST, ACLNN_ERR_INNER_NULLPTR,
                               AclrtMemcpyKind)
from ...cann import version
from ...cann.loader import Cann, get_cann
from ...errors import AclnnError

ALIGNMENT = 512  # bytes; also satisfies aclCreateTensor's 32-byte alignment rule
MAX_BYTES = 2**63 - 1  # sizes are int64 in aclCreateTensor and size_t in aclrtMalloc
INT_ARRAY_CACHE_SIZE = 256  # aclIntArray handles kept per stream for repeated values (LRU)
# Events a device's freed blocks may hold at once (one per stream whose queued work used a
# block). At the bound a free() first collects the completed ones; if still at it, that
# free() waits for the streams instead, as before events.
MAX_FREE_EVENTS = 1024
IDLE_EVENTS = 64  # completed allocator events a device keeps for the next free()
# Launches queued on a stream before the next launch first waits for them. A hardware
# stream's task queue is bounded too; here the bound also bounds what pending work keeps
# alive, for loops that never synchronise (plan runs and out= calls on DeviceArrays).
MAX_QUEUED_LAUNCHES = 1024


CLOSED_STREAM = "the stream is closed (Stream.close() or its collection): nothing can be queued on it"


def recent_error_message(cann: Cann) -> str | None:
    """CANN's message for the calling thread's last failure (aclGetRecentErrMsg), if any."""
    raw = cann.function("aclGetRecentErrMsg")()
    return raw.decode("utf-8", "replace").strip() if raw else None


def check(cann: Cann, status: int, api: str) -> None:
    """The one place a C status becomes an exception."""
    if status != 0:
        raise AclnnError(status, api, recent=recent_error_message(cann))


# Events as plain calls of a handle: the allocator's (release_after) and aa.Event's (streams.py).
def create_event(dev: Device, flags: int) -> int:
    """A new event of dev's context (aclrtCreateEventExWithFlag: recorded again and again
    with no reset, which is what lets the allocator pool them). Call with dev current."""
    h = ctypes.c_void_p()
    check(dev.cann, dev.cann.function("aclrtCreateEventExWithFlag")(ctypes.byref(h), flags),
          "aclrtCreateEventExWithFlag")
    return int(h.value or 0)


def record_event(handle: int, stream: Stream) -> None:
    """Record the event at the current end of stream's queue (under the stream's lock)."""
    dev = stream.device
    with stream.lock:
        stream.refuse_closed()
        check(dev.cann, dev.cann.function("aclrtRecordEvent")(handle, stream.handle), "aclrtRecordEvent")


def event_complete(dev: Device, handle: int) -> bool:
    """Whether the work queued before the event's latest record has run (no wait)."""
    st = ctypes.c_int()
    check(dev.cann, dev.cann.function("aclrtQueryEventStatus")(handle, ctypes.byref(st)), "aclrtQueryEventStatus")
    return st.value == ACL_EVENT_RECORDED_STATUS_COMPLETE


def destroy_event(dev: Device, handle: int) -> int:
    """aclrtDestroyEvent's status: its callers never raise (close, the collector, teardown),
    and CANN frees the event once its record has run."""
    status: int = dev.cann.function("aclrtDestroyEvent")(handle)
    return status


class DeviceBuffer:
    """A block of device memory; returned to its allocator's cache when released.
    ``error`` is set when a failed synchronisation discarded queued work that writes it;
    ``writer`` names the last launch queued to write it (an aclnn function, or a copy).
    ``acl``: aclTensor handles describing data at this block's start, by (shape, dtype,
    format); they travel with the block through the allocator's cache (the next array of
    that description in the block reuses its handle) and are destroyed when the block is
    returned to CANN (empty_cache). Created and used under the stream's lock (npu.py)."""

    __slots__ = ("allocator", "ptr", "nbytes", "error", "writer", "stream", "acl", "__weakref__")

    def __init__(self, allocator: "Allocator", ptr: int, nbytes: int, acl: dict[tuple[Any, ...], int] | None = None):
        self.allocator: Allocator = allocator
        self.ptr: int = ptr
        self.nbytes: int = nbytes
        self.acl: dict[tuple[Any, ...], int] | None = acl
        self.error: AclnnError | None = None  # why the work that writes it was lost, if it was
        self.writer: str | None = None  # the aclnn API whose queued launch writes it
        self.stream: Stream | None = None  # the stream of that launch: reading waits for it

    def release(self) -> None:
        ptr = getattr(self, "ptr", 0)  # a half-built copy has no ptr
        if ptr:
            self.ptr = 0
            acl, self.acl = self.acl, None
            self.allocator.give_back(ptr, self.nbytes, acl)

    __del__ = release

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("device memory cannot be copied or pickled: copy its contents to the host")


def discarded_error(buf: DeviceBuffer, argument: str | None = None) -> AclnnError:
    """The error for reading (or computing from, as ``argument``) a buffer whose producing
    work was lost."""
    e = buf.error
    assert e is not None, "discarded_error of a buffer whose work was not lost"
    return AclnnError(e.status, e.api, f"the queued work of {buf.writer or 'an earlier launch'} that writes this "
                      f"array was discarded when {e.api} failed earlier with status {e.status}; its contents "
                      "are undefined", recent=e.recent, argument=argument)


def _summary(names: list[str]) -> str:
    """'aclnnA x2, aclnnB' for the launches a failed sync discarded, in queue order."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if n == 1 else f"{name} x{n}" for name, n in counts.items())


class _Freed:
    """A block freed while queued work may still use it, with one (stream, event) mark per
    stream whose queued work used it, the event recorded there at the free(). It is handed
    out again once every event has completed; a mark is dropped (its event back to the
    pool) as soon as its event is seen complete."""

    __slots__ = ("ptr", "size", "acl", "marks")

    def __init__(self, ptr: int, size: int, acl: dict[tuple[Any, ...], int] | None,
                 marks: list[tuple["Stream", int]]):
        self.ptr: int = ptr
        self.size: int = size
        self.acl: dict[tuple[Any, ...], int] | None = acl
        self.marks: list[tuple[Stream, int]] = marks


class Allocator:
    """Caching device allocator: freed blocks are kept by (rounded) size and reused.

    A block freed while queued work may still use it (``release_after``) is not reusable
    yet: an event is recorded on each stream whose queued work uses it, and the block waits
    in ``_freed`` until all of them have completed. Nothing waits for them on the host:
    ``alloc`` queries them (aclrtQueryEventStatus) only when a request of that size misses
    the cache, oldest block first. Events come from a small per-device pool (Ex events are
    recorded again and again); empty_cache() and teardown, which synchronise every stream
    first, destroy them with the blocks."""

    def __init__(self, device: "Device"):
        self.device: Device = device
        self._free: dict[int, list[tuple[int, dict[tuple[Any, ...], int] | None]]] = {}  # size -> [(ptr, its aclTensors)]
        self._freed: dict[int, list[_Freed]] = {}  # size -> blocks waiting for their events, oldest first
        self._idle_events: list[int] = []  # completed events, for the next free()
        # Reentrant: a DeviceBuffer.__del__ run by the garbage collector may give a block
        # back while this thread is inside the allocator.
        self._lock = threading.RLock()
        self.closed: bool = False
        self.live_bytes: int = 0
        self.cached_bytes: int = 0   # every block the allocator holds, waiting ones included
        self.pending_bytes: int = 0  # of those, the blocks still waiting for their events
        self.events_out: int = 0     # events the waiting blocks hold
        # Live blocks that carry aclTensor handles: teardown destroys those handles, since
        # the arrays holding the blocks are dead from then on.
        self.with_handles: "weakref.WeakSet[DeviceBuffer]" = weakref.WeakSet()

    def alloc(self, nbytes: int) -> DeviceBuffer:
        if not 0 <= nbytes <= MAX_BYTES - ALIGNMENT:  # ctypes would wrap a size_t silently
            raise ValueError(f"cannot allocate {nbytes} bytes of device memory")
        size = max(ALIGNMENT, -(-nbytes // ALIGNMENT) * ALIGNMENT)
        ptr = None
        waiting = None
        with self._lock:
            blocks = self._free.get(size)
            if blocks:
                ptr, acl = blocks.pop()
                self.cached_bytes -= size
                self.live_bytes += size
            else:
                waiting = self._freed.pop(size, None)
        if waiting:
            found = self._poll(waiting, want=True, fallback=True)
            if found is not None:
                ptr, acl = found.ptr, found.acl
        if ptr is not None:
            buf = DeviceBuffer(self, ptr, size, acl)
            if acl:
                self.with_handles.add(buf)
            return buf
        ptr = self._malloc(size)
        with self._lock:
            self.live_bytes += size
        return DeviceBuffer(self, ptr, size)

    def _malloc(self, size: int) -> int:
        cann, out = self.device.cann, ctypes.c_void_p()
        self.device.activate()
        status = cann.function("aclrtMalloc")(ctypes.byref(out), size, ACL_MEM_MALLOC_HUGE_FIRST)
        if status == ACL_ERROR_RT_MEMORY_ALLOCATION:
            # Out of memory: let pending work finish, return the cache (the freed blocks
            # waiting for events too: their streams are synchronised), and try once more.
            self.device.synchronize()
            self.empty_cache()
            status = cann.function("aclrtMalloc")(ctypes.byref(out), size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(cann, status, "aclrtMalloc")
        return int(out.value or 0)

    def release_after(self, buf: DeviceBuffer, users: list["Stream"]) -> None:
        """Return buf, which no array holds any longer, to the cache once the work queued
        now on each of ``users`` (the streams whose queued work uses it) has run, without
        waiting for it: an event recorded on each. Call with the device's lock held."""
        ptr = buf.ptr
        if not ptr:
            return
        if not users or self.closed:
            buf.release()
            return
        self.device.activate()
        marks = self._mark(users)
        if marks is None:
            # No event could be recorded (CANN refused to create or record one, or too
            # many are out): wait for the users' work instead, the rule before events, so
            # the block is neither lost nor reused under that work.
            try:
                for s in users:
                    s.synchronize()
            finally:
                buf.release()
            return
        size = buf.nbytes
        buf.ptr = 0
        acl, buf.acl = buf.acl, None
        with self._lock:
            self.live_bytes -= size
            self.cached_bytes += size
            self.pending_bytes += size
            self._freed.setdefault(size, []).append(_Freed(ptr, size, acl, marks))

    def _mark(self, users: list["Stream"]) -> list[tuple["Stream", int]] | None:
        """An event recorded on each stream of users, or None when one could not be."""
        if self.events_out + len(users) > MAX_FREE_EVENTS:
            self.collect()
            if self.events_out + len(users) > MAX_FREE_EVENTS:
                return None
        marks: list[tuple[Stream, int]] = []
        try:
            for s in users:
                h = self._take_event()
                marks.append((s, h))
                record_event(h, s)
        except BaseException as exc:
            for _, h in marks:  # recorded or not, an Ex event is recorded anew at its next use
                self._put_event(h)
            if not isinstance(exc, AclnnError):
                raise
            return None
        return marks

    def _take_event(self) -> int:
        with self._lock:
            h = self._idle_events.pop() if self._idle_events else None
            self.events_out += 1
        if h is None:
            try:
                h = create_event(self.device, ACL_EVENT_CAPTURE_STREAM_PROGRESS)  # query-only, as torch_npu's
            except BaseException:
                with self._lock:
                    self.events_out -= 1
                raise
        return h

    def _put_event(self, h: int) -> None:
        """An event no block waits on any longer: kept for reuse, or destroyed."""
        with self._lock:
            self.events_out -= 1
            if self.closed:
                return  # the device reset reclaims it
            if len(self._idle_events) < IDLE_EVENTS:
                self._idle_events.append(h)
                return
        destroy_event(self.device, h)

    def collect(self) -> None:
        """Move every waiting block whose events have completed to the cache (queries only:
        a failed query leaves its block waiting, for alloc's poll)."""
        with self._lock:
            waiting = [w for blocks in self._freed.values() for w in blocks]
            self._freed.clear()
        if waiting:
            self._poll(waiting, want=False, fallback=False)

    def _poll(self, waiting: list[_Freed], want: bool, fallback: bool) -> _Freed | None:
        """Query the events of ``waiting`` (taken out of ``_freed``), oldest block first;
        the first block found ready is returned when ``want`` (counted as live), every other
        ready one goes to the cache, the rest back to ``_freed``. A stream's events
        complete in the order they were recorded, so once one of its events is not ready
        the later ones on it are not queried: a poll costs a query per ready block and per
        busy stream. With ``fallback``, an event whose query fails is waited for by
        synchronising its stream (the rule before events)."""
        busy: set[Stream] = set()
        found: _Freed | None = None
        try:
            self.device.activate()
            for w in waiting:
                marks = w.marks
                while marks:
                    stream, h = marks[-1]
                    if stream in busy:
                        break
                    try:
                        done = event_complete(self.device, h)
                    except AclnnError:
                        if not fallback:
                            busy.add(stream)
                            break
                        # The event cannot be queried: wait for its stream instead, so the
                        # block is neither handed out early nor kept waiting for good. A
                        # failed sync raises (its lost work flagged); that work will not
                        # run, so the block is free all the same.
                        marks.pop()
                        self._put_event(h)
                        stream.synchronize()
                        continue
                    if not done:
                        busy.add(stream)
                        break
                    marks.pop()
                    self._put_event(h)
                if want and found is None and not marks:
                    found = w
        finally:
            with self._lock:
                back: dict[int, list[_Freed]] = {}
                for w in waiting:
                    if w is found:
                        self.cached_bytes -= w.size
                        self.pending_bytes -= w.size
                        self.live_bytes += w.size
                    elif self.closed:
                        continue
                    elif not w.marks:
                        self.pending_bytes -= w.size
                        self._free.setdefault(w.size, []).append((w.ptr, w.acl))
                    else:
                        back.setdefault(w.size, []).append(w)
                for size, blocks in back.items():  # ahead of any freed meanwhile: they are older
                    self._freed[size] = blocks + self._freed.get(size, [])
        return found

    def close(self) -> None:
        """Teardown: destroy the handles of the blocks still in use; later give_backs are
        no-ops (the device reset reclaims the memory)."""
        with self._lock:
            self.closed = True
            live = list(self.with_handles)
            self.with_handles = weakref.WeakSet()
        destroy = self.device.cann.function("aclDestroyTensor")
        for buf in live:
            acl, buf.acl = buf.acl, None
            for h in (acl or {}).values():
                destroy(h)

    def give_back(self, ptr: int, size: int, acl: dict[tuple[Any, ...], int] | None = None) -> None:
        if self.closed:
            return  # after teardown the device reset has reclaimed everything
        with self._lock:
            self.live_bytes -= size
            self.cached_bytes += size
            self._free.setdefault(size, []).append((ptr, acl))

    def empty_cache(self) -> None:
        """Return every cached block to CANN, the waiting ones too, and destroy the pooled
        events. Its callers (Device.empty_cache, out of memory, teardown) synchronise every
        stream first, so the waiting blocks' events have completed; their streams are
        synchronised here all the same, and a failure of that sync is raised after
        everything else was released."""
        with self._lock:
            blocks = [(size, p, acl) for size, entries in self._free.items() for p, acl in entries]
            self._free.clear()
            freed = [w for entries in self._freed.values() for w in entries]
            self._freed.clear()
            events = self._idle_events + [h for w in freed for _, h in w.marks]
            self._idle_events = []
            self.events_out -= sum(len(w.marks) for w in freed)
            self.cached_bytes = 0
            self.pending_bytes = 0
        if not blocks and not freed and not events:
            return
        self.device.activate()
        failure: AclnnError | None = None
        for stream in dict.fromkeys(s for w in freed for s, _ in w.marks):
            try:
                stream.synchronize()
            except AclnnError as exc:
                failure = failure or exc
        if events:
            for h in events:
                destroy_event(self.device, h)  # a refused destroy leaves that event to the device reset
        blocks += [(w.size, w.ptr, w.acl) for w in freed]
        cann = self.device.cann
        destroy = cann.function("aclDestroyTensor")
        for _, _, acl in blocks:  # the handles describing a block go before the block
            for h in (acl or {}).values():
                destroy(h)
        free = cann.function("aclrtFree")
        failed = [(size, ptr, st) for size, ptr, _ in blocks if (st := free(ptr))]  # try them all
        if failed:
            recent = recent_error_message(self.device.cann)
            with self._lock:  # still allocated: keep them, for reuse or a later try
                for size, ptr, _ in failed:
                    self._free.setdefault(size, []).append((ptr, None))
                    self.cached_bytes += size
            raise AclnnError(failed[0][2], "aclrtFree", f"{len(failed)} of {len(blocks)} cached blocks could "
                             "not be freed; they stay cached and are tried again by the next empty_cache()",
                             recent=recent)
        if failure is not None:
            raise failure


class Stream:
    """One ACL stream of a device (its default one, or one of aa.Stream's), shared by
    every thread, with its growing workspace and what its pending work uses. Hold ``lock``
    around a launch: workspace(), launched(), then phase 2; synchronize() takes it too, so
    a launch is never split by a sync. ``lock`` is the device's, shared by all its streams:
    free() and a launch on any stream of the device exclude each other, and a thread
    holding it may sync any of them without a lock-order deadlock."""

    def __init__(self, device: "Device"):
        self.device: Device = device
        self.lock: threading.RLock = device.lock
        handle = ctypes.c_void_p()
        device.activate()
        check(device.cann, device.cann.function("aclrtCreateStream")(ctypes.byref(handle)), "aclrtCreateStream")
        self.handle: int | None = handle.value
        self.closed: bool = False
        # A graph's private stream (aa.graph): what its pending list keeps is what the graph's
        # captured launches use, held until the graph closes; nothing queued on it ever runs.
        self.graph: Any = None
        self.capturing: bool = False
        # The graph (NpuGraph) whose capture this stream is in: its private stream, or a
        # stream forked into it by waiting on an event recorded in the capture. cap_last is
        # the token of its last captured task when that is an event record (the join rule).
        self.capture: Any = None
        self.cap_last: Any = None
        with device.lock:
            device.streams.append(self)
        self._pending: list[Any] = []            # kept alive until the next sync
        self._written: list[DeviceBuffer] = []   # buffers that pending work writes
        self._queued: list[str] = []             # what pending work is, for a failed sync's message
        self._workspace: DeviceBuffer | None = None
        self.queued: int = 0  # launches recorded since the last synchronisation
        # Completed synchronisations (successful or not). A launch recorded while this was
        # n has run (or been discarded) once it is > n: memory it used may be rewritten.
        self.syncs: int = 0
        # aclIntArray handles for repeated values, shared by the launches on this stream
        # (made by handles.int_array). Used and evicted only with ``lock`` held, and every
        # launch holds it from phase 1 to phase 2, so no handle is destroyed while an
        # executor may still read it.
        self.int_arrays: OrderedDict[tuple[int, ...], int] = OrderedDict()

    def drop_int_arrays(self) -> None:
        """Destroy the cached aclIntArray handles (empty_cache, teardown)."""
        with self.lock:
            handles, self.int_arrays = list(self.int_arrays.values()), OrderedDict()
            destroy = self.device.cann.function("aclDestroyIntArray")
            for h in handles:
                destroy(h)

    def keep_alive(self, *objects: Any) -> None:
        with self.lock:
            self._pending.extend(objects)

    def launched(self, objects: Any, written: Any, api: str = "a launch") -> None:
        """Record a launch (of ``api``) just queued: keep ``objects`` alive until the sync
        that runs it, and remember the buffers it writes, to flag them if that sync fails."""
        with self.lock:
            self.record(objects, written, api)

    def record(self, objects: Any, written: Any, api: str) -> None:
        """launched(), for a caller that holds ``lock``."""
        self._pending.extend(objects)
        self.queued += 1
        self.cap_last = None  # a captured launch: no longer ends in a record
        if written:  # a failed phase 2 queued nothing
            self._queued.append(api)
            for buf in written:
                buf.error, buf.writer, buf.stream = None, api, self  # fully rewritten by this launch
                self._written.append(buf)

    def refuse_closed(self) -> None:
        """With ``lock`` held, before a C call on this stream: a stream another thread
        destroyed since the caller picked it is refused, never handed to CANN (destroy()
        takes the lock too, so a use either runs before it or sees it)."""
        if self.closed:
            raise RuntimeError(CLOSED_STREAM)

    def throttle(self) -> None:
        """Before a launch, with ``lock`` held: refuse a destroyed stream; past
        MAX_QUEUED_LAUNCHES queued launches, wait for them (raising their failure, if the
        sync fails)."""
        if self.closed:
            raise RuntimeError(CLOSED_STREAM)
        if self.queued >= MAX_QUEUED_LAUNCHES and self.graph is None and not self.capturing:  # a capture queues nothing
            self.synchronize()

    def workspace(self, nbytes: int) -> int | None:
        """Address of a workspace of at least nbytes, grown rather than allocated per call.
        Call with ``lock`` held."""
        ws = self._workspace
        if ws is not None and ws.nbytes >= nbytes:
            return ws.ptr
        if nbytes == 0:
            return None
        old_size = 0
        if ws is not None:
            # Queued kernels may still use the old one: it is released by the next sync,
            # which is also what an out-of-memory retry does first.
            old_size, self._workspace = ws.nbytes, None
            self._pending.append(ws)
            del ws
        want = max(nbytes, 2 * old_size)
        try:
            new = self.device.allocator.alloc(want)
        except AclnnError as exc:
            if exc.status != ACL_ERROR_RT_MEMORY_ALLOCATION or want == nbytes:
                raise
            new = self.device.allocator.alloc(nbytes)  # memory is short: do not over-grow
        self._workspace = new
        return new.ptr

    @property
    def has_pending_work(self) -> bool:
        return bool(self._pending) or bool(self._written)

    @property
    def holds_for_graph(self) -> bool:
        """Whether what its pending list keeps is a graph's (a graph's private stream, or a
        stream forked into a capture): kept for the graph's replays, not released by a sync."""
        return self.graph is not None or self.capturing

    def synchronize(self) -> None:
        """Wait for the queued work. If the sync fails, CANN has discarded that work: the
        buffers it would have written are flagged, and reading them raises."""
        if self.closed:  # destroyed after a final sync: nothing can be queued on it
            return
        if self.capturing and self.graph is None:  # forked into a capture: CANN's answer, before the call
            raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, "aclrtSynchronizeStream",
                             "the stream is taking part in a graph capture (it waited on an event recorded in "
                             "it); synchronize it after the capture ends")
        if self.graph is not None:
            if self.capturing:
                refuse_in_capture("aclrtSynchronizeStream", "synchronize")
            return  # a graph's stream runs nothing: its pending list is the graph's, until it closes
        self.device.activate()
        cann = self.device.cann
        with self.lock:
            batch, self._pending = self._pending, []
            written, self._written = self._written, []
            queued, self._queued = self._queued, []
            self.queued = 0
            try:
                status = cann.function("aclrtSynchronizeStream")(self.handle)
            finally:
                self.syncs += 1
            if status:
                batch.clear()  # the raised error's frames must not keep these alive
                _flag_discarded(cann, status, "aclrtSynchronizeStream", queued, written)
        del batch  # outside the lock: releasing returns blocks to the allocator

    def discarded(self, status: int, api: str) -> None:
        """A wait on this stream other than its own sync (an event's) failed with status:
        CANN discarded the stream's queued work, so flag what it would have written and
        raise, as a failed synchronize() does. Takes ``lock``."""
        with self.lock:
            batch, self._pending = self._pending, []
            written, self._written = self._written, []
            queued, self._queued = self._queued, []
            self.queued = 0
            self.syncs += 1
            batch.clear()  # the raised error's frames must not keep these alive
            _flag_discarded(self.device.cann, status, api, queued, written)

    def drop_workspace(self) -> None:
        with self.lock:
            ws, self._workspace = self._workspace, None
        if ws is not None:
            ws.release()

    def uses(self, buf: DeviceBuffer) -> bool:
        """Whether pending work (or, on a graph's stream, the graph) holds buf: itself, an
        array over it, or a queued replay's holdings that do. Newest first: an array is
        most often freed right after its last use."""
        with self.lock:
            return any(_holds(o, buf) for o in reversed(self._pending))

    def destroy(self) -> None:
        """Wait for the queued work, then destroy the stream: all under ``lock``, which every
        use of the stream holds around its C call (and checks ``closed`` under), so no
        launch, record or wait can reach CANN between the final sync and the destroy."""
        with self.lock:
            if self.closed:
                return
            self.graph = None  # a graph closing: its stream is idle, so the sync below releases what it held
            try:
                self.synchronize()
            finally:
                self.closed = True
                if self in self.device.streams:
                    self.device.streams.remove(self)
                self.drop_workspace()
                self.drop_int_arrays()
                handle, self.handle = self.handle, None
                status = self.device.cann.function("aclrtDestroyStream")(handle)
            check(self.device.cann, status, "aclrtDestroyStream")


class CapturedRecord:
    """An event record made in a capture (either backend): which graph, and whether the
    capture's own stream waited on it (CANN's join rule: a stream forked into a capture must
    end in a record its origin waited on)."""

    __slots__ = ("graph", "joined")

    def __init__(self, graph: Any):
        self.graph: Any = graph
        self.joined: bool = False


def unjoined(forked: list[Any]) -> Any:
    """The first stream forked into a capture that does not end in a record the capture's
    stream waited on, or None (checked at the capture's end, on both backends)."""
    for f in forked:
        last = f.cap_last
        if last is None or not last.joined:
            return f
    return None


UNJOINED = ("a stream forked into the capture (it waited on an event recorded in it) was not joined back: its "
            "last captured work must be followed by aa.current_stream().wait_stream(side) (or an event recorded "
            "on it that the capture's stream waits on) before the capture ends; nothing was captured")


class Holdings:
    """What a captured graph's launches use (its stream's pending list); a replay keeps it
    alive on the stream it is queued on."""

    __slots__ = ("objects", "__weakref__")

    def __init__(self, objects: list[Any]):
        self.objects: list[Any] = objects


def _holds(obj: Any, buf: DeviceBuffer) -> bool:
    """Whether obj, kept alive by a stream for its queued work, is buf or holds it."""
    if obj is buf or getattr(obj, "_buffer", None) is buf:
        return True
    return type(obj) is Holdings and any(_holds(o, buf) for o in obj.objects)


def _flag_discarded(cann: Cann, status: int, api: str, queued: list[str], written: list[DeviceBuffer]) -> None:
    """Flag the buffers that discarded work would have written, then raise status's error."""
    detail = f"the queued work it discarded: {_summary(queued)}" if queued else None
    recent = recent_error_message(cann)
    # The flag is a separate, never-raised instance: the raised one gets a traceback,
    # whose frames would keep every array they reference alive as long as a flagged
    # buffer lives.
    flag = AclnnError(status, api, detail, recent=recent)
    for buf in written:
        buf.error = flag
    written.clear()  # emptied, not just unnamed: the caller's frame holds the list too
    del flag
    # Raised without a local name: a local holding it would make a cycle (frame ->
    # exception -> traceback -> frame) that pins this frame's arrays until a gc.
    raise AclnnError(status, api, detail, recent=recent)


class Device:
    """One NPU: its allocator and its stream, created on first use; closed at teardown."""

    def __init__(self, cann: Cann, index: int):
        self.cann: Cann = cann
        self.index: int = index
        self.allocator: Allocator = Allocator(self)
        self._stream: Stream | None = None  # the default stream, created on first use
        self._lock = threading.Lock()
        # Shared by all of this device's streams (Stream.lock); every live stream, the
        # default one included, for device-wide syncs and teardown.
        self.lock: threading.RLock = threading.RLock()
        self.streams: list[Stream] = []
        self.set_device_calls: int = 0
        self.closed: bool = False

    def activate(self) -> None:
        """Make this the calling thread's current ACL device (ACL contexts are per thread).
        Cheap after the first call on a thread."""
        if getattr(_thread_state, "device", None) is not self:
            with self._lock:
                check(self.cann, self.cann.function("aclrtSetDevice")(self.index), "aclrtSetDevice")
                self.set_device_calls += 1
                first = self.set_device_calls == 1
            _thread_state.device = self
            if first:  # this device's context was just made: configure it
                for hook in context_hooks:
                    hook(self)

    @property
    def stream(self) -> Stream:
        """The calling context's current stream on this device (``aa.stream(s)``), else
        the default stream: where every launch, copy and plan run is queued. In a capturing
        context that stream must be part of the capture (refuse_uncaptured)."""
        cur = self._selected_stream()
        capture = current_capture.get()
        if capture is not None:
            refuse_uncaptured(cur, cur is None or cur is self._stream, capture._impl)
        return cur if cur is not None else self.default_stream

    @property
    def default_stream(self) -> Stream:
        stream = self._stream
        if stream is None:
            with self._lock:
                if self.closed:
                    raise RuntimeError(f"npu:{self.index} was torn down (interpreter exit or teardown())")
                stream = self._stream
            if stream is None:
                stream = Stream(self)  # outside self._lock: activate() takes it
                with self._lock:
                    if self._stream is None:
                        self._stream = stream
                    else:  # another thread won the race
                        check(self.cann, self.cann.function("aclrtDestroyStream")(stream.handle),
                              "aclrtDestroyStream")
                    stream = self._stream
        return stream

    @property
    def stream_if_started(self) -> Stream | None:
        """The current stream, or None when it is the default one and nothing was ever
        queued on this device."""
        cur = self._selected_stream()
        capture = current_capture.get()
        if capture is not None:
            refuse_uncaptured(cur, cur is None or cur is self._stream, capture._impl)
        return cur if cur is not None else self._stream

    def _selected_stream(self) -> Stream | None:
        """The calling context's current stream (``aa.stream(s)``) when it is an open one
        of this device, else None."""
        cur = current_stream.get()
        if cur is not None and cur.device is self:
            if cur.closed:  # work never silently moves to another stream
                raise RuntimeError(CLOSED_STREAM + " (it is this context's current stream: with aa.stream(s))")
            return cur
        return None

    @property
    def has_pending_work(self) -> bool:
        return any(s.has_pending_work for s in list(self.streams) if s.graph is None and not s.capturing)

    def synchronize(self) -> None:
        """Wait for every stream of the device (graphs' streams run nothing); a failure is
        raised after all were waited for."""
        refuse_in_capture("aclrtSynchronizeDevice", "synchronize")
        failure: AclnnError | None = None
        for stream in list(self.streams):
            if stream.graph is not None or stream.capturing:  # a capture's streams run nothing until it ends
                continue
            try:
                stream.synchronize()
            except AclnnError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def empty_cache(self) -> None:
        refuse_in_capture("aclrtSynchronizeDevice", "empty_cache")
        if self.streams:
            with self.lock:  # no launch in between: it would run on a workspace dropped here
                self.synchronize()
                for stream in list(self.streams):
                    if stream.graph is not None:
                        continue  # a graph's launches were captured with its workspace
                    stream.drop_workspace()
                    stream.drop_int_arrays()
        self.allocator.empty_cache()

    def upload(self, host: Any, nbytes: int) -> DeviceBuffer:
        """Copy nbytes from a host address (or ctypes buffer) into fresh device memory."""
        return self.stage([(host, nbytes)], ())[0]

    def stage(self, uploads: Sequence[tuple[Any, int]], sizes: Sequence[int]) -> list[DeviceBuffer]:
        """A launch's device memory in one step: a fresh block holding each (host address,
        nbytes) upload, then an uninitialised block of each of ``sizes``, in that order."""
        alloc = self.allocator.alloc
        bufs: list[DeviceBuffer] = []
        if uploads:
            refuse_in_capture("aclrtMemcpy", "an upload of host data")
            memcpy, h2d = self.cann.function("aclrtMemcpy"), AclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE
            for host, nbytes in uploads:
                buf = alloc(nbytes)
                if nbytes:
                    self.activate()
                    check(self.cann, memcpy(buf.ptr, buf.nbytes, host, nbytes, h2d), "aclrtMemcpy")
                bufs.append(buf)
        for n in sizes:
            bufs.append(alloc(n))
        return bufs

    def zero(self, buf: DeviceBuffer, nbytes: int, wait: bool) -> None:
        """Zero the first nbytes of buf now (aclrtMemset is synchronous). With wait, queued
        work is finished first, so none of it can write to buf afterwards."""
        stream = current_stream.get()
        if stream is not None and stream.capturing and stream.device is self:
            # captured: an asynchronous memset, in order on the capture's stream (no wait needed)
            if nbytes:
                check(self.cann, self.cann.function("aclrtMemsetAsync")(buf.ptr, buf.nbytes, 0, nbytes, stream.handle),
                      "aclrtMemsetAsync")
                stream.cap_last = None
            return
        if wait:
            self.synchronize()
        if nbytes:
            self.activate()
            check(self.cann, self.cann.function("aclrtMemset")(buf.ptr, buf.nbytes, 0, nbytes), "aclrtMemset")

    def copy_async(self, dst: DeviceBuffer, src: DeviceBuffer, nbytes: int) -> None:
        """Queue a device-to-device copy on the stream. Call with the stream's lock held."""
        if nbytes:
            check(self.cann, self.cann.function("aclrtMemcpyAsync")(
                dst.ptr, dst.nbytes, src.ptr, nbytes, AclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_DEVICE,
                self.stream.handle), "aclrtMemcpyAsync")

    def download(self, buf: DeviceBuffer, offset: int, host: Any, nbytes: int) -> None:
        """Copy device bytes [offset, offset+nbytes) of buf to a host address, after the
        stream has finished the work that writes them (the buffer's last writer's stream)."""
        refuse_in_capture("aclrtMemcpy", "reading device data on the host")
        writer = buf.stream
        if writer is not None and not writer.closed:
            writer.synchronize()  # a graph's stream: nothing to wait for until a replay wrote buf
        else:
            self.synchronize()
        if buf.error is not None:
            raise discarded_error(buf)
        if nbytes:
            self.activate()
            check(self.cann, self.cann.function("aclrtMemcpy")(
                host, nbytes, buf.ptr + offset, nbytes, AclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")

    def teardown(self) -> None:
        with self._lock:
            self.closed = True
            self._stream = None
        try:
            failure: Exception | None = None
            for stream in list(reversed(self.streams)):  # user streams, then the default one
                try:
                    stream.destroy()
                except Exception as exc:
                    failure = failure or exc
            if failure is not None:
                raise failure
        finally:
            try:  # also after a failed final sync: the cached blocks carry aclTensor handles
                self.allocator.empty_cache()
            finally:
                self.allocator.close()
                for _ in range(self.set_device_calls):
                    check(self.cann, self.cann.function("aclrtResetDevice")(self.index), "aclrtResetDevice")
                self.set_device_calls = 0


_thread_state = threading.local()
# The runtime Stream that ``aa.stream(s)`` made current in this context (None: each device's
# default stream). Context-local like use_backend(): a new thread starts on the default.
current_stream: contextvars.ContextVar[Stream | None] = contextvars.ContextVar("ascend_aclnn_stream", default=None)
# The graph being captured in this context (``with aa.graph(g)``), on either backend.
current_capture: contextvars.ContextVar[Any] = contextvars.ContextVar("ascend_aclnn_capture", default=None)


# The numpy backend's stream that ``aa.stream(s)`` made current in this context (a
# HostStream; None: the default stream). Its work runs at once, but is refused as the npu
# backend's is when the stream is closed.
current_host_stream: contextvars.ContextVar[Any] = contextvars.ContextVar("ascend_aclnn_host_stream", default=None)


def host_work() -> None:
    """Before numpy-backend work (a call, plan run or device copy): the checks the npu
    backend makes on the stream the work goes to (Device.stream)."""
    s = current_host_stream.get()
    if s is not None and s.closed:
        raise RuntimeError(CLOSED_STREAM + " (it is this context's current stream: with aa.stream(s))")
    capture = current_capture.get()
    if capture is not None:
        refuse_uncaptured(s, s is None or s.default, capture._impl)
        s.cap_last = None  # a captured call: the stream no longer ends in a record


def refuse_uncaptured(stream: Any, default: bool, graph: Any) -> None:
    """In a context capturing ``graph``: work must go to a stream taking part in that
    capture (its own stream, current inside ``with aa.graph(g)``, or one forked into it by
    waiting on an event recorded in it). Work anywhere else would run once, now, and be
    missing from every replay: refused, before any C call, with CANN's status for a stream
    outside a capture (the default stream's own when it is that one)."""
    if stream is not None and stream.capture is graph:
        return
    if default:
        raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, "stream capture",
                         "work in a graph capture went to the device's default stream, which cannot take part "
                         "in a capture; leave it on aa.current_stream() (the capture's stream), or fork a side "
                         "stream in with side.wait_stream(aa.current_stream())")
    raise AclnnError(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "stream capture",
                     "work in a graph capture went to a stream that is not part of the capture, so the graph "
                     "would miss it; fork the stream in first (side.wait_stream(aa.current_stream()), as with "
                     "torch) and join it back before the capture ends (aa.current_stream().wait_stream(side))")


def refuse_in_capture(api: str, what: str) -> None:
    """Raise, before any C call, when this context is capturing a graph: ``what`` needs the
    host (or a sync), which a capture cannot contain."""
    if current_capture.get() is not None:
        raise AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, api,
                         f"{what} is not allowed while a graph is being captured (with aa.graph(g)): it needs "
                         "the host or a synchronisation, which a captured graph cannot replay; do it before or "
                         "after the capture (feed inputs with DeviceArray.copy_ from device arrays)")

# Called with each Device right after its first aclrtSetDevice in this runtime, while its
# context is current: settings that live in a device's context (e.g. determinism) are
# applied there, so they also reach devices activated later.
context_hooks: list[Callable[[Device], None]] = []
# Called first by Runtime.teardown, while the devices still work (plans close there).
teardown_hooks: list[Callable[[], None]] = []
# Called with each Runtime right after it starts, before any device is set or any launch
# (process-wide settings, e.g. determinism, are applied there).
start_hooks: list[Callable[["Runtime"], None]] = []
# Whether an aclInit of this binding succeeded and no aclFinalize of ours has run since:
# then ACL is ours to finalize, even if a later start sees 100002 (our own earlier init).
_acl_ours = False
# Whether this process ever called aclInit (success or not): what decides the fork rule.
_acl_touched = False


class Runtime:
    """aclInit once per process, devices on first use, orderly teardown at exit."""

    def __init__(self, cann: Cann):
        global _acl_ours, _acl_touched
        self.cann: Cann = cann
        self.release: str | None = version.installed(cann.lib_dir)  # e.g. "8.1.RC1", None when the install does not say
        _acl_touched = True  # before the call: a failed or interrupted aclInit may leave state too
        status = cann.function("aclInit")(None)
        if status != ACL_ERROR_REPEAT_INITIALIZE:
            check(cann, status, "aclInit")
        # 100002 with no init of ours: another framework in this process (torch_npu, MindSpore)
        # initialised ACL and owns its finalisation; aclFinalize ignores any count and would
        # tear ACL down under it.
        _acl_ours = _acl_ours or status == 0
        self.owns_acl: bool = _acl_ours
        count = ctypes.c_uint32()
        check(cann, cann.function("aclrtGetDeviceCount")(ctypes.byref(count)), "aclrtGetDeviceCount")
        self.device_count: int = count.value
        self.devices: dict[int, Device] = {}
        self._lock = threading.Lock()
        self.finalized: bool = False
        for hook in start_hooks:
            hook(self)

    def device(self, index: int) -> Device:
        dev = self.devices.get(index)
        if dev is None:
            with self._lock:
                dev = self.devices.get(index)
                if dev is None:
                    if not 0 <= index < self.device_count:
                        raise AclnnError(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice",
                                         f"device {index} requested, but this host has "
                                         f"{self.device_count} NPU(s) (valid: 0..{self.device_count - 1})",
                                         argument="device")
                    dev = self.devices[index] = Device(self.cann, index)
        return dev

    def synchronize(self) -> None:
        for dev in list(self.devices.values()):
            dev.synchronize()

    def empty_cache(self) -> None:
        for dev in list(self.devices.values()):
            dev.empty_cache()

    def teardown(self) -> None:
        """Release streams, cached memory and devices, then aclFinalize. Never raises:
        it runs at interpreter exit, when an exception can only produce noise."""
        if self.finalized:
            return
        for hook in list(teardown_hooks):
            try:
                hook()
            except Exception:
                pass
        self.finalized = True
        for dev in list(self.devices.values()):
            try:
                dev.teardown()
            except Exception:
                pass
        self.devices.clear()
        _thread_state.__dict__.clear()
        if self.owns_acl:
            global _acl_ours, _finalized_release
            _acl_ours = False
            _finalized_release = self.release or "unknown"
            try:
                self.cann.function("aclFinalize")()
            except Exception:
                pass


_runtime: Runtime | None = None
_finalized_release: str | None = None  # the release of CANN when this binding last called aclFinalize
_runtime_lock = threading.Lock()
_current_device = 0

# ---- the call gate: interpreter exit ----------------------------------------------------
# Every public entry point that may reach CANN brackets its work with enter() / leave().
# At interpreter exit only daemon threads are left besides the main thread (Python joins
# the others before atexit handlers run), and they may be in the middle of a call. The
# exit handler closes the gate, waits for the calls in flight to finish, and only then
# tears the runtime down, so no C call ever runs on a released stream, block or device.
# A daemon thread that calls in after the gate closed is parked for good (the interpreter
# ends daemon threads at exit anyway): no exception, nothing printed. Any other thread
# gets RuntimeError.
_inflight: list[None] = []  # one entry per call in progress: list append/pop are atomic
_closed: str | None = None  # why the gate is closed, or None
EXIT_DRAIN_SECONDS = 10.0   # how long exit waits for calls in flight before giving up teardown
_EXITED = ("the npu runtime was shut down at interpreter exit; nothing can run on the NPU "
           "from here on")
# A forked child inherits the parent's runtime objects but not its device contexts, and
# CANN does not support re-initialising in a fork (the device state belongs to the parent
# process), so the child of a parent that started the runtime abandons it without a single
# C call or lock wait. PyTorch's rule for CUDA: a parent that never initialised the device
# (it only imported the package, or used the numpy backend) leaves nothing to inherit, and
# its child may start a runtime of its own.
_FORKED = ("the npu runtime cannot be used in a forked child (CANN's device state belongs to the "
           "parent process); start workers with the 'spawn' or 'forkserver' start method, or use "
           "the numpy backend in the child")


def enter() -> None:
    """Start a call that may reach CANN (pair with leave(), in a finally)."""
    if _closed is not None:
        _refuse()
    _inflight.append(None)
    if _closed is not None:  # closed between the check and the append: exit may not wait for us
        _inflight.pop()
        _refuse()


def leave() -> None:
    _inflight.pop()


class _Gated:
    """``with gated:`` brackets a block with enter() / leave()."""

    def __enter__(self) -> None:
        enter()

    def __exit__(self, *exc: object) -> None:
        leave()


gated: _Gated = _Gated()


def _refuse() -> None:
    reason = _closed
    thread = threading.current_thread()
    if reason == _EXITED and thread.daemon and thread is not threading.main_thread():
        threading.Event().wait()  # parked until the interpreter ends the thread
    raise RuntimeError(reason)


def _at_exit() -> None:
    """Interpreter exit: close the gate, let calls in flight finish, then tear down."""
    global _closed
    if _closed is not None:
        return
    _closed = _EXITED
    deadline = time.monotonic() + EXIT_DRAIN_SECONDS
    while _inflight and time.monotonic() < deadline:
        time.sleep(0.001)
    rt = _runtime
    if rt is not None and not _inflight:  # a call still in flight owns the runtime: leave it to the OS
        rt.teardown()


class _Anchor:
    pass


# atexit runs its handlers last registered, first run. weakref.finalize registers its own
# exit hook (which runs every pending finalizer: graphs', events', streams') at the first
# finalize made in the process; made here first, it is registered before _at_exit and so
# runs after it: the gate closes and the calls in flight finish before any of those objects
# is destroyed, and the teardown has already released them (their finalizers then no-op).
weakref.finalize(_Anchor(), lambda: None)
atexit.register(_at_exit)


def _abandon_in_child() -> None:
    """os.fork() child: if the parent started the runtime, or a parent thread was starting
    it (the lock held at the fork), close the gate and disown the inherited blocks, taking
    no lock (another thread of the parent may have held any of them at the fork). Calls
    the parent had in flight are not the child's either way: exit must not wait for them."""
    global _closed, _inflight
    _inflight = []
    if not _acl_touched and not _runtime_lock.locked():
        return  # nothing of CANN's was initialised: the child may start its own runtime
    _closed = _FORKED
    rt = _runtime
    if rt is not None:
        for dev in list(rt.devices.values()):
            dev.allocator.closed = True  # later give_backs return at once


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_abandon_in_child)


def in_forked_child() -> bool:
    """True in a process forked from one that had started the npu runtime (called aclInit),
    or was starting it at the fork: such a child may not use the NPU."""
    return _closed is _FORKED


def refuse_in_forked_child() -> None:
    if _closed is _FORKED:
        raise RuntimeError(_FORKED)


def get_runtime() -> Runtime:
    """The process's runtime, started (aclInit) on first use."""
    global _runtime
    if _closed is not None:
        _refuse()
    if _runtime is None or _runtime.finalized:
        with _runtime_lock:
            if _runtime is None or _runtime.finalized:
                if _finalized_release is not None and \
                        version.at_least(_finalized_release, version.REINIT_AFTER_FINALIZE) is False:
                    raise RuntimeError(f"the npu runtime was torn down (teardown()) and CANN {_finalized_release} "
                                       "supports aclInit once per process; restart the process to use the NPU again")
                _runtime = Runtime(get_cann())
    return _runtime


def runtime_if_started() -> Runtime | None:
    """The runtime if it is started and not finalised, without starting it."""
    return _runtime if _runtime is not None and not _runtime.finalized else None


def current_device() -> Device:
    """The current device, made current on the calling thread."""
    dev = get_runtime().device(_current_device)
    dev.activate()
    return dev


def active_device() -> Device | None:
    """The device whose context is current on the calling thread, if any."""
    dev: Device | None = getattr(_thread_state, "device", None)
    return dev


def set_current_device_index(index: int) -> None:
    global _current_device
    _current_device = index


def current_device_index() -> int:
    return _current_device
