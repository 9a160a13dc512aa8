"""Streams, events, the device clock and stream capture in the simulator (ctypes against
the built libraries).

Each stream has its own lazy queue; a device sync interleaves the device's streams one
task at a time (newest first), and a stream's wait runs the producer up to the record it
waits for. So work on two streams without an event between them runs in an order the
test can see, and the wait is what makes it right. Expected times come from the cost
model's documented constants (native/README.md): 3000 ns per task plus the bytes moved
over 1152 bytes/ns.
"""
from __future__ import annotations

import math
from ctypes import byref, c_float, c_int, c_void_p

import numpy as np
import pytest

from . import sim_ctypes as sc
from .op_helpers import FLOAT, Env

LAUNCH_NS, BYTES_PER_NS = 3000, 1152  # native/README.md's cost model
ITERATIONS = 2000


class Handles:
    """Streams, events and models a test creates, released at its end."""

    def __init__(self, s):
        self.s = s
        self.streams, self.events, self.models, self.ptrs, self.host = [], [], [], [], []

    def stream(self):
        h = c_void_p()
        self.s.ok(self.s.aclrtCreateStream(byref(h)), "aclrtCreateStream")
        self.streams.append(h.value)
        return h.value

    def event(self, flags=sc.EVENT_SYNC | sc.EVENT_TIME_LINE, api="ex"):
        h = c_void_p()
        if api == "ex":
            rc = self.s.aclrtCreateEventExWithFlag(byref(h), flags)
        elif api == "flag":
            rc = self.s.aclrtCreateEventWithFlag(byref(h), flags)
        else:
            rc = self.s.aclrtCreateEvent(byref(h))
        self.s.ok(rc, "create event")
        self.events.append(h.value)
        return h.value

    def dev(self, values):
        ptr = self.s.upload(np.asarray(values))
        self.ptrs.append(ptr)
        return ptr

    def pinned(self, nbytes):
        h = c_void_p()
        self.s.ok(self.s.aclrtMallocHost(byref(h), nbytes), "aclrtMallocHost")
        self.host.append(h.value)
        return h.value

    def end_capture(self, stream):
        """End the capture on stream whatever its state; the model if one was made."""
        m = c_void_p()
        rc = self.s.aclmdlRICaptureEnd(stream, byref(m))
        if m.value:
            self.models.append(m.value)
        return rc, m.value

    def close(self):
        s = self.s
        for st in self.streams:
            status, m = c_int(), c_void_p()
            if s.aclmdlRICaptureGetInfo(st, byref(status), byref(m)) == 0 and status.value:
                self.end_capture(st)
        for m in self.models:
            s.aclmdlRIDestroy(m)
        for st in self.streams:
            s.aclrtSynchronizeStream(st)
            s.aclrtDestroyStream(st)
        for e in self.events:
            s.aclrtDestroyEvent(e)
        s.aclrtSynchronizeDevice()
        for p in self.ptrs:
            s.aclrtFree(p)
        for h in self.host:
            s.aclrtFreeHost(h)
        s.drain()


@pytest.fixture
def hs(rt):
    h = Handles(rt)
    yield h
    h.close()


def copy_async(s, dst, src, nbytes, stream, kind=sc.D2D):
    s.ok(s.aclrtMemcpyAsync(dst, nbytes, src, nbytes, kind, stream), "aclrtMemcpyAsync")


def set_value(s, ptr, value):
    v = np.array([value], np.int64)
    s.ok(s.aclrtMemcpy(ptr, 8, v.ctypes.data, 8, sc.H2D), "H2D")


def value(s, ptr):
    return int(s.download(ptr, 1, np.int64)[0])


def elapsed(s, a, b):
    ms = c_float()
    rc = s.aclrtEventElapsedTime(byref(ms), a, b)
    return rc, ms.value


# ---- ordering across streams ---------------------------------------------------------

def _producer_consumer(s, hs, wait, sync):
    """ITERATIONS rounds of: producer stream A copies src -> buf, consumer stream B copies
    buf -> out; the count of rounds where out did not get that round's value."""
    a, b = hs.stream(), hs.stream()
    ev = hs.event(sc.EVENT_SYNC)
    src, buf, out = hs.dev([0]), hs.dev([-1]), hs.dev([-2])
    wrong = 0
    for i in range(ITERATIONS):
        set_value(s, src, i)
        copy_async(s, buf, src, 8, a)
        if wait:
            s.ok(s.aclrtRecordEvent(ev, a))
            s.ok(s.aclrtStreamWaitEvent(b, ev))
        copy_async(s, out, buf, 8, b)
        sync(a, b)
        wrong += value(s, out) != i
    return wrong


@pytest.mark.parametrize("how", ["device", "consumer first"])
def test_a_missing_wait_is_a_race_and_the_wait_orders_the_streams(rt, hs, how):
    s = rt

    def sync(a, b):
        if how == "device":
            s.ok(s.aclrtSynchronizeDevice())
        else:
            s.ok(s.aclrtSynchronizeStream(b))
            s.ok(s.aclrtSynchronizeStream(a))

    assert _producer_consumer(s, hs, wait=False, sync=sync) == ITERATIONS
    assert _producer_consumer(s, hs, wait=True, sync=sync) == 0


def test_a_wait_uses_the_record_current_when_it_was_issued(rt, hs):
    s = rt
    a, b = hs.stream(), hs.stream()
    ev = hs.event(sc.EVENT_SYNC)
    one, two, buf, out = hs.dev([1]), hs.dev([2]), hs.dev([0]), hs.dev([0])
    copy_async(s, buf, one, 8, a)
    s.ok(s.aclrtRecordEvent(ev, a))
    s.ok(s.aclrtStreamWaitEvent(b, ev))
    copy_async(s, out, buf, 8, b)
    copy_async(s, buf, two, 8, a)          # after the record the wait saw
    s.ok(s.aclrtRecordEvent(ev, a))        # a later record of the same event
    s.ok(s.aclrtSynchronizeStream(b))
    assert value(s, out) == 1
    assert s.count("pending_tasks") == 2   # A's second copy and record have not run
    s.ok(s.aclrtSynchronizeStream(a))
    assert value(s, buf) == 2


def test_waiting_on_a_never_recorded_event_waits_for_nothing(rt, hs):
    s = rt
    b = hs.stream()
    ev = hs.event(sc.EVENT_SYNC)
    s.ok(s.aclrtStreamWaitEvent(b, ev))
    s.ok(s.aclrtSynchronizeStream(b))


def test_queries_report_pending_work_and_let_the_device_progress(rt, hs):
    s = rt
    a = hs.stream()
    ev = hs.event()
    src, dst = hs.dev([5]), hs.dev([0])
    st = c_int(-1)
    s.ok(s.aclrtStreamQuery(a, byref(st)))
    assert st.value == 0  # ACL_STREAM_STATUS_COMPLETE
    copy_async(s, dst, src, 8, a)
    s.ok(s.aclrtRecordEvent(ev, a))
    s.ok(s.aclrtQueryEventStatus(ev, byref(st)))
    assert st.value == 0  # ACL_EVENT_RECORDED_STATUS_NOT_READY
    s.ok(s.aclrtQueryEventStatus(ev, byref(st)))
    assert st.value == 1  # COMPLETE: the first query let the record run
    copy_async(s, dst, src, 8, a)
    s.ok(s.aclrtStreamQuery(a, byref(st)))
    assert st.value == 1  # NOT_READY
    s.ok(s.aclrtStreamQuery(a, byref(st)))
    assert st.value == 0
    # never recorded: an Ex event is complete, an older one is not
    assert s.aclrtQueryEventStatus(hs.event(), byref(st)) == 0 and st.value == 1
    assert s.aclrtQueryEventStatus(hs.event(api="plain"), byref(st)) == 0 and st.value == 0


# ---- the device clock ------------------------------------------------------------------

def _timed_copies(s, hs, count, nbytes, stream=None):
    stream = stream or hs.stream()
    src, dst = hs.dev(np.zeros(nbytes, np.uint8)), hs.dev(np.zeros(nbytes, np.uint8))
    start, end = hs.event(), hs.event()
    s.ok(s.aclrtRecordEvent(start, stream))
    for _ in range(count):
        copy_async(s, dst, src, nbytes, stream)
    s.ok(s.aclrtRecordEvent(end, stream))
    s.ok(s.aclrtSynchronizeEvent(end))
    rc, ms = elapsed(s, start, end)
    assert rc == 0, s.err()
    return ms


def test_elapsed_time_is_the_cost_model_exactly_and_repeatable(rt, hs):
    s = rt
    per_copy_ns = LAUNCH_NS + math.ceil(2 * 4096 / BYTES_PER_NS)  # a D2D copy reads and writes
    first = _timed_copies(s, hs, 10, 4096)
    assert first == pytest.approx(10 * per_copy_ns / 1e6, rel=1e-6)
    assert _timed_copies(s, hs, 10, 4096) == first


def test_elapsed_time_grows_with_the_work(rt, hs):
    s = rt
    assert _timed_copies(s, hs, 20, 4096) > _timed_copies(s, hs, 10, 4096) > 0
    assert _timed_copies(s, hs, 10, 1 << 20) > _timed_copies(s, hs, 10, 4096)


def test_kernel_time_counts_the_bytes_it_reads_and_writes(rt, hs):
    s = rt
    env = Env(s)
    try:
        x = np.ones((64, 64), np.float32)
        xt, _ = env.tensor(x)
        yt, _ = env.tensor(x)
        al = env.scalar(1.0, FLOAT)
        ot, _ = env.empty([64, 64], FLOAT)
        rc, ws, ex = s.phase1("aclnnAdd", xt, yt, al, ot)
        assert rc == 0
        start, end = hs.event(), hs.event()
        s.ok(s.aclrtRecordEvent(start, s.stream))
        s.ok(s.aclnnAdd(None, 0, ex, s.stream))
        s.ok(s.aclrtRecordEvent(end, s.stream))
        s.ok(s.aclrtSynchronizeStream(s.stream))
        rc, ms = elapsed(s, start, end)
        assert rc == 0
        assert ms == pytest.approx((LAUNCH_NS + math.ceil(3 * x.nbytes / BYTES_PER_NS)) / 1e6, rel=1e-6)
    finally:
        env.close()


def test_event_timestamps_are_monotonic_along_a_stream(rt, hs):
    s = rt
    a = hs.stream()
    src, dst = hs.dev(np.zeros(512, np.uint8)), hs.dev(np.zeros(512, np.uint8))
    events = [hs.event() for _ in range(50)]
    for i, e in enumerate(events):
        for _ in range(i % 3):
            copy_async(s, dst, src, 512, a)
        s.ok(s.aclrtRecordEvent(e, a))
    s.ok(s.aclrtSynchronizeStream(a))
    times = [elapsed(s, events[0], e)[1] for e in events]
    assert times == sorted(times) and times[-1] > 0


def test_a_wait_carries_the_producer_time_to_the_consumer(rt, hs):
    s = rt
    a, b = hs.stream(), hs.stream()
    src, dst = hs.dev(np.zeros(1 << 16, np.uint8)), hs.dev(np.zeros(1 << 16, np.uint8))
    start, done, after = hs.event(), hs.event(), hs.event()
    s.ok(s.aclrtRecordEvent(start, a))
    for _ in range(5):
        copy_async(s, dst, src, 1 << 16, a)
    s.ok(s.aclrtRecordEvent(done, a))
    s.ok(s.aclrtStreamWaitEvent(b, done))
    s.ok(s.aclrtRecordEvent(after, b))
    s.ok(s.aclrtSynchronizeDevice())
    assert elapsed(s, start, after)[1] >= elapsed(s, start, done)[1] > 0


def test_elapsed_time_refusals(rt, hs):
    s = rt
    a = hs.stream()
    timed, other = hs.event(), hs.event()
    rc, _ = elapsed(s, timed, other)
    assert rc == sc.RT_INTERNAL_ERROR and "never recorded" in s.err()
    s.ok(s.aclrtRecordEvent(timed, a))
    s.ok(s.aclrtRecordEvent(other, a))
    assert elapsed(s, timed, other)[0] == sc.RT_EVENT_TIMESTAMP_INVALID   # not run yet
    assert "synchronize the event first" in s.err()
    s.ok(s.aclrtSynchronizeEvent(other))
    assert elapsed(s, timed, other) == (0, 0.0)
    untimed = hs.event(sc.EVENT_SYNC)
    s.ok(s.aclrtRecordEvent(untimed, a))
    s.ok(s.aclrtSynchronizeStream(a))
    assert elapsed(s, timed, untimed)[0] == sc.RT_EVENT_TIMESTAMP_INVALID
    assert "ACL_EVENT_TIME_LINE" in s.err()
    assert s.aclrtEventElapsedTime(None, timed, other) == sc.RT_PARAM_INVALID


def test_event_argument_refusals(rt, hs):
    s = rt
    h = c_void_p()
    assert s.aclrtCreateEventExWithFlag(byref(h), 0x40) == sc.RT_PARAM_INVALID
    assert "unknown bits 0x40" in s.err()
    assert s.aclrtCreateEventWithFlag(None, 0) == sc.RT_PARAM_INVALID
    timing_only = hs.event(sc.EVENT_TIME_LINE)
    assert s.aclrtStreamWaitEvent(s.stream, timing_only) == sc.RT_PARAM_INVALID
    assert "ACL_EVENT_SYNC" in s.err()
    e = hs.event()
    s.ok(s.aclrtDestroyEvent(e))
    hs.events.remove(e)
    assert s.aclrtRecordEvent(e, s.stream) == sc.RT_PARAM_INVALID
    assert "already destroyed" in s.err()
    assert s.aclrtSynchronizeEvent(e) == sc.RT_PARAM_INVALID
    assert s.aclrtDestroyEvent(s.stream) == sc.RT_PARAM_INVALID  # a stream is not an event


def test_an_event_of_another_device(rt, hs, monkeypatch):
    s = rt
    monkeypatch.setenv("ASCEND_SIM_DEVICE_COUNT", "2")
    s.ok(s.aclrtSetDevice(1))
    try:
        h = c_void_p()
        s.ok(s.aclrtCreateEventExWithFlag(byref(h), sc.EVENT_SYNC))
    finally:
        s.ok(s.aclrtSetDevice(0))
        s.ok(s.aclrtResetDevice(0))  # the reference just taken again: device 0 stays set
    assert s.aclrtRecordEvent(h.value, s.stream) == sc.RT_STREAM_CONTEXT
    assert s.aclrtStreamWaitEvent(s.stream, h.value) == sc.RT_STREAM_CONTEXT
    assert "device 1" in s.err()
    s.ok(s.aclrtResetDevice(1))  # releases the device and its event
    assert s.count("events") == len(hs.events)


# ---- capture and replay ------------------------------------------------------------------

def _capture(s, hs, stream, body, mode=sc.CAPTURE_GLOBAL):
    s.ok(s.aclmdlRICaptureBegin(stream, mode), "aclmdlRICaptureBegin")
    body()
    rc, m = hs.end_capture(stream)
    s.ok(rc, "aclmdlRICaptureEnd")
    return m


def test_capture_records_the_work_and_replay_reads_the_current_inputs(rt, hs):
    s = rt
    a = hs.stream()
    x, y, out = hs.dev([0]), hs.dev([0]), hs.dev([-1])
    set_value(s, x, 7)
    st, m = c_int(), c_void_p()

    def body():
        copy_async(s, y, x, 8, a)
        copy_async(s, out, y, 8, a)
        s.ok(s.aclmdlRICaptureGetInfo(a, byref(st), byref(m)))
        assert st.value == sc.CAPTURE_STATUS_ACTIVE and m.value

    model = _capture(s, hs, a, body)
    assert model == m.value
    assert s.count("pending_tasks") == 0 and value(s, out) == -1  # nothing ran during capture
    s.ok(s.aclmdlRICaptureGetInfo(a, byref(st), byref(m)))
    assert st.value == sc.CAPTURE_STATUS_NONE and not m.value
    for i in range(200):
        set_value(s, x, i)
        s.ok(s.aclmdlRIExecuteAsync(model, hs.streams[0] if i % 2 else s.stream))
        s.ok(s.aclrtSynchronizeDevice())
        assert value(s, out) == i


def test_a_captured_kernel_replays_equal_to_eager(rt, hs):
    s = rt
    env = Env(s)
    try:
        rng = np.random.default_rng(5)
        xt, xp = env.tensor(rng.standard_normal((8, 16)).astype(np.float32))
        yt, _ = env.tensor(rng.standard_normal((8, 16)).astype(np.float32))
        al = env.scalar(0.5, FLOAT)
        ot, op = env.empty([8, 16], FLOAT)
        rc, ws, ex = s.phase1("aclnnAdd", xt, yt, al, ot)
        assert rc == 0
        a = hs.stream()
        model = _capture(s, hs, a, lambda: s.ok(s.aclnnAdd(None, 0, ex, a)))
        for _ in range(50):
            x = rng.standard_normal((8, 16)).astype(np.float32)
            s.ok(s.aclrtMemcpy(xp, x.nbytes, x.ctypes.data, x.nbytes, sc.H2D))
            s.ok(s.aclmdlRIExecuteAsync(model, a))
            s.ok(s.aclrtSynchronizeStream(a))
            replayed = env.read(op, [8, 16], FLOAT)
            assert env.run("aclnnAdd", xt, yt, al, ot) == 0   # the same call made eagerly
            np.testing.assert_array_equal(replayed, env.read(op, [8, 16], FLOAT))
    finally:
        env.close()


def test_a_forked_stream_joined_back_is_captured(rt, hs):
    s = rt
    origin, side = hs.stream(), hs.stream()
    fork, join = hs.event(sc.EVENT_SYNC), hs.event(sc.EVENT_SYNC)
    x, y, out = hs.dev([3]), hs.dev([0]), hs.dev([0])

    def body():
        s.ok(s.aclrtRecordEvent(fork, origin))
        s.ok(s.aclrtStreamWaitEvent(side, fork))   # side joins the capture
        copy_async(s, y, x, 8, side)
        s.ok(s.aclrtRecordEvent(join, side))
        s.ok(s.aclrtStreamWaitEvent(origin, join))
        copy_async(s, out, y, 8, origin)

    model = _capture(s, hs, origin, body)
    set_value(s, x, 11)
    s.ok(s.aclmdlRIExecuteAsync(model, origin))
    s.ok(s.aclrtSynchronizeStream(origin))
    assert value(s, out) == 11
    st = c_int()
    s.ok(s.aclmdlRICaptureGetInfo(side, byref(st), None))
    assert st.value == sc.CAPTURE_STATUS_NONE


def test_a_model_destroyed_with_replays_queued_runs_them_first(rt, hs):
    s = rt
    a = hs.stream()
    x, out = hs.dev([4]), hs.dev([0])
    model = _capture(s, hs, a, lambda: copy_async(s, out, x, 8, a))
    s.ok(s.aclmdlRIExecuteAsync(model, a))
    s.ok(s.aclmdlRIDestroy(model))
    hs.models.remove(model)
    assert s.count("models") == 0
    s.ok(s.aclrtSynchronizeStream(a))
    assert value(s, out) == 4
    assert s.aclmdlRIExecuteAsync(model, a) == sc.RT_PARAM_INVALID
    assert s.aclmdlRIDestroy(model) == sc.RT_PARAM_INVALID


def test_live_counters_stay_flat_over_many_capture_and_replay_cycles(rt, hs):
    s = rt
    a = hs.stream()
    ev = hs.event(sc.EVENT_SYNC)
    x, out = hs.dev([1]), hs.dev([0])
    before = s.counts()
    for i in range(1000):
        s.ok(s.aclmdlRICaptureBegin(a, sc.CAPTURE_THREAD_LOCAL))
        copy_async(s, out, x, 8, a)
        s.ok(s.aclrtRecordEvent(ev, a))
        m = c_void_p()
        s.ok(s.aclmdlRICaptureEnd(a, byref(m)))
        for _ in range(3):
            s.ok(s.aclmdlRIExecuteAsync(m.value, a))
        if i % 2:
            s.ok(s.aclrtSynchronizeStream(a))
        s.ok(s.aclmdlRIDestroy(m.value))
    s.ok(s.aclrtSynchronizeStream(a))
    assert s.counts() == before


# ---- what capture refuses ----------------------------------------------------------------

def _refusals(s, hs, profile):
    """(what, status) of each call refused inside a capture, every one made on a fresh
    capture that is then ended (or abandoned) cleanly."""
    seen = []
    a, other = hs.stream(), hs.stream()
    dev, host = hs.dev([0]), np.zeros(1, np.int64)
    plain = hs.event(api="plain")
    outside = hs.event(sc.EVENT_SYNC)
    s.ok(s.aclrtRecordEvent(outside, other))
    mh = c_void_p()

    def check(what, rc):
        seen.append((what, rc))

    def capture(fn, mode=sc.CAPTURE_GLOBAL):
        s.ok(s.aclmdlRICaptureBegin(a, mode))
        try:
            return fn()
        finally:
            rc, m = hs.end_capture(a)
            if m:
                s.ok(s.aclmdlRIDestroy(m))
                hs.models.remove(m)
            s.drain()

    check("begin on the default stream", s.aclmdlRICaptureBegin(None, 0))
    check("begin with an unknown mode", s.aclmdlRICaptureBegin(a, 7))
    check("begin inside a capture", capture(lambda: s.aclmdlRICaptureBegin(a, 0)))
    check("synchronize the stream", capture(lambda: s.aclrtSynchronizeStream(a)))
    check("synchronize with a timeout", capture(lambda: s.aclrtSynchronizeStreamWithTimeout(a, -1)))
    check("query the stream", capture(lambda: s.aclrtStreamQuery(a, byref(c_int()))))
    check("destroy the stream", capture(lambda: s.aclrtDestroyStream(a)))
    check("synchronize the device", capture(lambda: s.aclrtSynchronizeDevice()))
    check("sync memcpy", capture(lambda: s.aclrtMemcpy(dev, 8, host.ctypes.data, 8, sc.H2D)))
    check("sync memset", capture(lambda: s.aclrtMemset(dev, 8, 0, 8)))
    check("sync memcpy, thread-local capture, this thread",
          capture(lambda: s.aclrtMemcpy(dev, 8, host.ctypes.data, 8, sc.H2D), sc.CAPTURE_THREAD_LOCAL))
    check("pageable async copy", capture(lambda: s.aclrtMemcpyAsync(dev, 8, host.ctypes.data, 8, sc.H2D, a)))
    check("record an old-API event", capture(lambda: s.aclrtRecordEvent(plain, a)))
    check("wait on an event recorded outside", capture(lambda: s.aclrtStreamWaitEvent(a, outside)))

    def captured_event(fn):
        def body():
            e = hs.event()
            s.ok(s.aclrtRecordEvent(e, a))
            return fn(e)
        return capture(body)

    check("synchronize a captured event", captured_event(lambda e: s.aclrtSynchronizeEvent(e)))
    check("query a captured event", captured_event(lambda e: s.aclrtQueryEventStatus(e, byref(c_int()))))
    check("time a captured event", captured_event(lambda e: elapsed(s, e, e)[0]))
    check("the default stream joins", captured_event(lambda e: s.aclrtStreamWaitEvent(None, e)))

    def model_op(fn):
        def body():
            st = c_int()
            s.ok(s.aclmdlRICaptureGetInfo(a, byref(st), byref(mh)))
            return fn(mh.value)
        return capture(body)

    check("destroy the model being captured", model_op(lambda m: s.aclmdlRIDestroy(m)))
    check("run the model being captured", model_op(lambda m: s.aclmdlRIExecuteAsync(m, other)))
    check("run a model on the capturing stream",
          capture(lambda: s.aclmdlRIExecuteAsync(_finished_model(s, hs, other), a)))
    check("end a stream not captured", hs.end_capture(other)[0])

    def unjoined():
        e = hs.event(sc.EVENT_SYNC)
        s.ok(s.aclrtRecordEvent(e, a))
        s.ok(s.aclrtStreamWaitEvent(other, e))
        copy_async(s, dev, dev, 8, other)
        return hs.end_capture(a)[0]
    check("a forked stream not joined back", capture(unjoined))

    def end_on_fork():
        e = hs.event(sc.EVENT_SYNC)
        s.ok(s.aclrtRecordEvent(e, a))
        s.ok(s.aclrtStreamWaitEvent(other, e))
        rc = hs.end_capture(other)[0]
        j = hs.event(sc.EVENT_SYNC)
        s.ok(s.aclrtRecordEvent(j, other))
        s.ok(s.aclrtStreamWaitEvent(a, j))
        return rc
    check("end on the forked stream", capture(end_on_fork))

    def after_a_refusal():
        s.aclrtSynchronizeStream(a)
        st = c_int()
        s.ok(s.aclmdlRICaptureGetInfo(a, byref(st), None))
        return st.value, hs.end_capture(a)[0]
    check("status and end after a refused call", capture(after_a_refusal))
    return dict(seen)


def _finished_model(s, hs, stream):
    s.ok(s.aclmdlRICaptureBegin(stream, 0))
    return hs.end_capture(stream)[1]


def test_every_capture_refusal_has_its_cann_status(rt, hs, profile):
    s = rt
    before = s.counts()
    got = _refusals(s, hs, profile)
    newest = profile != "8.1.RC1"
    want = {
        "begin on the default stream": sc.RT_PARAM_INVALID,
        "begin with an unknown mode": sc.RT_PARAM_INVALID,
        "begin inside a capture": sc.RT_STREAM_CAPTURED,
        "synchronize the stream": sc.RT_STREAM_CAPTURED,
        "synchronize with a timeout": sc.RT_STREAM_CAPTURED,
        "query the stream": sc.RT_STREAM_CAPTURED,
        "destroy the stream": sc.RT_STREAM_CAPTURED,
        "synchronize the device": sc.RT_STREAM_CAPTURED,
        "sync memcpy": sc.RT_CAPTURE_MODE_NOT_SUPPORT,
        "sync memset": sc.RT_CAPTURE_MODE_NOT_SUPPORT,
        "sync memcpy, thread-local capture, this thread": sc.RT_CAPTURE_MODE_NOT_SUPPORT,
        "pageable async copy": sc.RT_PARAM_INVALID,
        "record an old-API event": sc.RT_FEATURE_NOT_SUPPORT,
        "wait on an event recorded outside": sc.RT_CAPTURE_DEPENDENCY,
        "synchronize a captured event": sc.RT_EVENT_CAPTURED,
        "query a captured event": sc.RT_EVENT_CAPTURED,
        "time a captured event": sc.RT_EVENT_CAPTURED,
        "the default stream joins": sc.RT_STREAM_CAPTURE_IMPLICIT,
        "destroy the model being captured": sc.RT_MODEL_CAPTURED,
        "run the model being captured": sc.RT_MODEL_CAPTURED,
        "run a model on the capturing stream": sc.RT_STREAM_CAPTURED,
        "end a stream not captured": sc.RT_STREAM_NOT_CAPTURED,
        "a forked stream not joined back": sc.RT_STREAM_UNJOINED,
        # newer runtimes name these; 8.1.RC1 has no code for them (the simulator's assumption)
        "end on the forked stream": sc.RT_STREAM_CAPTURE_UNMATCHED if newest else sc.RT_PARAM_INVALID,
        "status and end after a refused call":
            (sc.CAPTURE_STATUS_INVALIDATED, sc.RT_STREAM_CAPTURE_INVALIDATED) if newest
            else (sc.CAPTURE_STATUS_ACTIVE, 0),
    }
    assert got == want
    hs.close()
    assert {k: v for k, v in s.counts().items()} == before


def test_a_relaxed_thread_may_copy_during_a_global_capture(rt, hs, in_thread):
    s = rt
    a = hs.stream()
    dev, host = hs.dev([0]), np.full(1, 9, np.int64)
    s.ok(s.aclmdlRICaptureBegin(a, sc.CAPTURE_GLOBAL))
    try:
        def other_thread(mode):
            s.ok(s.aclrtSetDevice(0))
            try:
                m = c_int(mode)
                s.ok(s.aclmdlRICaptureThreadExchangeMode(byref(m)))
                assert m.value == sc.CAPTURE_GLOBAL  # every thread starts in GLOBAL
                return s.aclrtMemcpy(dev, 8, host.ctypes.data, 8, sc.H2D)
            finally:
                s.ok(s.aclrtResetDevice(0))
        assert in_thread(other_thread, sc.CAPTURE_GLOBAL) == sc.RT_CAPTURE_MODE_NOT_SUPPORT
        assert in_thread(other_thread, sc.CAPTURE_RELAXED) == 0
    finally:
        hs.end_capture(a)
    s.ok(s.aclrtMemcpy(dev, 8, host.ctypes.data, 8, sc.H2D))  # after the capture: allowed again


def test_a_thread_local_capture_does_not_bar_other_threads(rt, hs, in_thread):
    s = rt
    a = hs.stream()
    dev, host = hs.dev([0]), np.zeros(1, np.int64)
    s.ok(s.aclmdlRICaptureBegin(a, sc.CAPTURE_THREAD_LOCAL))
    try:
        def other_thread():
            s.ok(s.aclrtSetDevice(0))
            try:
                return s.aclrtMemcpy(dev, 8, host.ctypes.data, 8, sc.H2D)
            finally:
                s.ok(s.aclrtResetDevice(0))
        assert in_thread(other_thread) == 0
    finally:
        hs.end_capture(a)


def test_an_async_memset_is_ordered_on_its_stream_and_captured(rt, hs):
    s = rt
    a = hs.stream()
    x, buf = hs.dev([5]), hs.dev([7])
    copy_async(s, buf, x, 8, a)
    s.ok(s.aclrtMemsetAsync(buf, 8, 0, 8, a))      # after the copy, on the stream
    assert value(s, buf) == 7                      # nothing ran yet
    s.ok(s.aclrtSynchronizeStream(a))
    assert value(s, buf) == 0
    assert s.aclrtMemsetAsync(buf, 8, 0, 16, a) == sc.RT_PARAM_INVALID   # count > maxCount
    model = _capture(s, hs, a, lambda: s.ok(s.aclrtMemsetAsync(buf, 8, 1, 8, a)))
    set_value(s, buf, 9)
    s.ok(s.aclmdlRIExecuteAsync(model, a))
    s.ok(s.aclrtSynchronizeStream(a))
    assert value(s, buf) == 0x0101010101010101


def test_pinned_host_copies_are_captured(rt, hs):
    s = rt
    a = hs.stream()
    pinned = hs.pinned(8)
    dev = hs.dev([0])
    model = _capture(s, hs, a, lambda: copy_async(s, dev, pinned, 8, a, sc.H2D))
    for i in (3, 4):
        np.frombuffer((c_int * 2).from_address(pinned), np.int64)[0] = i
        s.ok(s.aclmdlRIExecuteAsync(model, a))
        s.ok(s.aclrtSynchronizeStream(a))
        assert value(s, dev) == i


def test_capture_under_both_profiles(profile_builds, run_script):
    """The profile-dependent answers, from each release's own build."""
    for version, libdir in profile_builds.items():
        newest = version != "8.1.RC1"
        run_script(f"""
            s = sc.Sim(os.environ["SIMDIR"])
            assert s.aclInit(None) == 0 and s.aclrtSetDevice(0) == 0
            a = c_void_p(); assert s.aclrtCreateStream(byref(a)) == 0
            assert s.aclmdlRICaptureBegin(a, 0) == 0
            assert s.aclrtSynchronizeStream(a) == sc.RT_STREAM_CAPTURED
            st = ctypes.c_int(); assert s.aclmdlRICaptureGetInfo(a, byref(st), None) == 0
            m = c_void_p(); rc = s.aclmdlRICaptureEnd(a, byref(m))
            if {newest}:
                assert (st.value, rc, m.value) == (sc.CAPTURE_STATUS_INVALIDATED, sc.RT_STREAM_CAPTURE_INVALIDATED, None)
            else:
                assert (st.value, rc) == (sc.CAPTURE_STATUS_ACTIVE, 0) and m.value
                assert s.aclmdlRIDestroy(m) == 0
            assert s.aclrtDestroyStream(a) == 0
            assert s.count("models") == 0 and s.count("streams") == 0
        """, env={"SIMDIR": str(libdir)})


# ---- fault injection at every new entry point -------------------------------------------

NEW_ENTRY_POINTS = ["aclrtMemsetAsync", "aclrtStreamQuery", "aclrtStreamWaitEvent", "aclrtCreateEvent", "aclrtCreateEventWithFlag",
                    "aclrtCreateEventExWithFlag", "aclrtDestroyEvent", "aclrtRecordEvent",
                    "aclrtQueryEventStatus", "aclrtSynchronizeEvent", "aclrtEventElapsedTime",
                    "aclmdlRICaptureBegin", "aclmdlRICaptureGetInfo", "aclmdlRICaptureEnd",
                    "aclmdlRICaptureThreadExchangeMode", "aclmdlRIExecuteAsync", "aclmdlRIDestroy"]


@pytest.mark.parametrize("fn", NEW_ENTRY_POINTS)
def test_fault_injection_reaches_each_new_entry_point(rt, hs, monkeypatch, fn):
    s = rt
    a = hs.stream()
    ev = hs.event()
    x, out = hs.dev([1]), hs.dev([0])
    s.ok(s.aclrtRecordEvent(ev, a))
    model = _capture(s, hs, a, lambda: copy_async(s, out, x, 8, a))
    s.ok(s.aclrtSynchronizeStream(a))
    h, st, ms, mode = c_void_p(), c_int(), c_float(), c_int(2)
    calls = {
        "aclrtMemsetAsync": lambda: s.aclrtMemsetAsync(out, 8, 0, 8, a),
        "aclrtStreamQuery": lambda: s.aclrtStreamQuery(a, byref(st)),
        "aclrtStreamWaitEvent": lambda: s.aclrtStreamWaitEvent(a, ev),
        "aclrtCreateEvent": lambda: s.aclrtCreateEvent(byref(h)),
        "aclrtCreateEventWithFlag": lambda: s.aclrtCreateEventWithFlag(byref(h), 1),
        "aclrtCreateEventExWithFlag": lambda: s.aclrtCreateEventExWithFlag(byref(h), 1),
        "aclrtDestroyEvent": lambda: s.aclrtDestroyEvent(ev),
        "aclrtRecordEvent": lambda: s.aclrtRecordEvent(ev, a),
        "aclrtQueryEventStatus": lambda: s.aclrtQueryEventStatus(ev, byref(st)),
        "aclrtSynchronizeEvent": lambda: s.aclrtSynchronizeEvent(ev),
        "aclrtEventElapsedTime": lambda: s.aclrtEventElapsedTime(byref(ms), ev, ev),
        "aclmdlRICaptureBegin": lambda: s.aclmdlRICaptureBegin(a, 0),
        "aclmdlRICaptureGetInfo": lambda: s.aclmdlRICaptureGetInfo(a, byref(st), None),
        "aclmdlRICaptureEnd": lambda: s.aclmdlRICaptureEnd(a, byref(h)),
        "aclmdlRICaptureThreadExchangeMode": lambda: s.aclmdlRICaptureThreadExchangeMode(byref(mode)),
        "aclmdlRIExecuteAsync": lambda: s.aclmdlRIExecuteAsync(model, a),
        "aclmdlRIDestroy": lambda: s.aclmdlRIDestroy(model),
    }
    before = s.counts()
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{fn}:1:507899")
    assert calls[fn]() == 507899
    assert f"injected fault: call #1 of {fn}" in s.err()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    assert s.counts() == before   # the injected failure created and destroyed nothing
    assert mode.value == 2        # nor wrote an output


# ---- the ABI: CANN 8.1.RC1's prototypes and values, typed out from acl/acl_rt.h,
# acl/acl_mdl.h and acl/error_codes/rt_error_codes.h -----------------------------------------

REAL_RUNTIME = """
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);
aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI);
aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);
aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode);
aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);
aclError aclmdlRIDestroy(aclmdlRI modelRI);
"""
REAL_VALUES = {
    "ACL_EVENT_SYNC": 0x1, "ACL_EVENT_CAPTURE_STREAM_PROGRESS": 0x2, "ACL_EVENT_TIME_LINE": 0x8,
    "ACL_EVENT_EXTERNAL": 0x20, "ACL_EVENT_RECORDED_STATUS_NOT_READY": 0, "ACL_EVENT_RECORDED_STATUS_COMPLETE": 1,
    "ACL_STREAM_STATUS_COMPLETE": 0, "ACL_STREAM_STATUS_NOT_READY": 1, "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL": 0,
    "ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL": 1, "ACL_MODEL_RI_CAPTURE_MODE_RELAXED": 2,
    "ACL_MODEL_RI_CAPTURE_STATUS_NONE": 0, "ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE": 1,
    "ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED": 2, "ACL_ERROR_RT_STREAM_CONTEXT": 107003,
    "ACL_ERROR_RT_MODEL_CONTEXT": 107004, "ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID": 107006,
    "ACL_ERROR_RT_CAPTURE_DEPENDENCY": 107024, "ACL_ERROR_RT_STREAM_UNJOINED": 107025,
    "ACL_ERROR_RT_MODEL_CAPTURED": 107026, "ACL_ERROR_RT_STREAM_CAPTURED": 107027,
    "ACL_ERROR_RT_EVENT_CAPTURED": 107028, "ACL_ERROR_RT_STREAM_NOT_CAPTURED": 107029,
    "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT": 107030, "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT": 107031,
    "ACL_ERROR_RT_FEATURE_NOT_SUPPORT": 207000, "ACL_ERROR_RT_INTERNAL_ERROR": 507000,
}


def test_the_simulator_declares_the_real_prototypes_and_values(tmp_path):
    import shutil
    import subprocess
    from .expected import native_build
    if shutil.which("cc") is None:
        pytest.skip("cc not installed")
    asserts = [f'_Static_assert({name} == {value}, "{name}");' for name, value in REAL_VALUES.items()]
    source = "\n".join(['#include "acl_abi.h"', REAL_RUNTIME, *asserts, "int main(void) { return 0; }", ""])
    path = tmp_path / "abi.c"

    def compiles(text):
        path.write_text(text)
        cmd = ["cc", "-x", "c", "-std=c11", "-fsyntax-only", "-Wall", "-Werror",
               f"-I{native_build.SRC}", f"-I{native_build.INCLUDE}", str(path)]
        return subprocess.run(cmd, capture_output=True, text=True)

    proc = compiles(source)
    assert proc.returncode == 0, proc.stderr
    # the check has teeth: a wrong parameter type or value does not compile
    assert compiles(source.replace("float *ms", "double *ms")).returncode != 0
    assert compiles(source.replace("== 107027", "== 107028")).returncode != 0
