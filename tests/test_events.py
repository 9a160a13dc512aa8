"""aa.Event on both backends: record / synchronize / query / elapsed_time, the argument
errors (raised before any C call, the same on both backends), device time from the
simulator's clock, and a failed event sync flagging what the discarded work would write."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import errors

X = np.arange(24, dtype=np.float32).reshape(1, 2, 12)


def work(d, n=1):
    for _ in range(n):
        d = aa.upsample_nearest_exact1d(d, [24])
        d = aa.upsample_nearest_exact1d(d, [12])
    return d


def test_timing_events_measure_the_work_between_them(backend):
    d = aa.to_device(X)
    start, end = aa.Event(timing=True), aa.Event(timing=True)
    start.record()
    out = work(d, 3)
    end.record()
    ms = start.elapsed_time(end)   # waits for both
    assert isinstance(ms, float) and ms > 0
    assert end.query() and start.query()
    np.testing.assert_array_equal(out.numpy(), X)


def test_device_time_grows_with_the_work_and_is_repeatable(npu):
    d = aa.to_device(X)

    def timed(n):
        a, b = aa.Event(timing=True), aa.Event(timing=True)
        a.record()
        work(d, n)
        b.record()
        return a.elapsed_time(b)

    assert timed(4) > timed(2) > 0
    assert timed(3) == timed(3)   # the simulator's clock is deterministic


def test_never_recorded_and_untimed_events(backend):
    a, b = aa.Event(timing=True), aa.Event(timing=True)
    assert a.query()
    a.synchronize()   # nothing to wait for
    with pytest.raises(errors.AclRtInternalError, match="start event was never recorded"):
        a.elapsed_time(b)
    a.record()
    with pytest.raises(errors.AclRtInternalError, match="end event was never recorded"):
        a.elapsed_time(b)
    plain = aa.Event()
    plain.record()
    with pytest.raises(ValueError, match="timing=True"):
        a.elapsed_time(plain)
    with pytest.raises(TypeError, match="end: expected an ascend_aclnn.Event"):
        a.elapsed_time(3.0)
    with pytest.raises(TypeError, match="timing: expected a bool"):
        aa.Event(timing=1)
    with pytest.raises(TypeError, match="stream: expected an ascend_aclnn.Stream or None"):
        a.record(stream="s")


def test_a_closed_event_refuses_everything(backend):
    e = aa.Event(timing=True)
    e.record()
    e.close()
    e.close()   # idempotent
    for call in (e.record, e.synchronize, e.query):
        with pytest.raises(RuntimeError, match="the event is closed"):
            call()
    with pytest.raises(RuntimeError, match="the event is closed"):
        aa.Event(timing=True).elapsed_time(e)
    assert "closed" in repr(e)


def test_an_event_keeps_its_backend(npu):
    e = aa.Event()
    e.record()
    with aa.use_backend("numpy"):
        with pytest.raises(errors.DeviceMismatchError, match="recorded on the npu backend"):
            e.record()


def test_events_are_released_by_close_and_by_the_collector(npu, sim):
    before = sim.live("events")
    kept = aa.Event(timing=True)
    kept.record()
    dropped = aa.Event()
    dropped.record()
    assert sim.live("events") == before + 2
    del dropped
    gc.collect()
    assert sim.live("events") == before + 1
    kept.close()
    assert sim.live("events") == before


def test_a_failed_event_sync_flags_what_the_discarded_work_writes(npu, monkeypatch):
    d = aa.to_device(X)
    out = work(d)
    e = aa.Event()
    e.record()
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtSynchronizeEvent:1:507015")
    with pytest.raises(errors.AclRtAicoreExceptionError):
        e.synchronize()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    with pytest.raises(errors.AclRtAicoreExceptionError, match="discarded"):
        out.numpy()
    np.testing.assert_array_equal(work(d).numpy(), X)   # the runtime works as before


@pytest.mark.parametrize("fn", ["aclrtCreateEventExWithFlag", "aclrtRecordEvent", "aclrtQueryEventStatus",
                                "aclrtEventElapsedTime"])
def test_a_failing_event_call_raises_its_status_and_leaks_nothing(npu, monkeypatch, fn):
    a, b = aa.Event(timing=True), aa.Event(timing=True)
    if fn != "aclrtCreateEventExWithFlag":
        a.record()
        b.record()
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{fn}:1:507899")
    with pytest.raises(errors.AclRtDrvInternalError, match=fn):
        {"aclrtCreateEventExWithFlag": a.record, "aclrtRecordEvent": a.record, "aclrtQueryEventStatus": a.query,
         "aclrtEventElapsedTime": lambda: a.elapsed_time(b)}[fn]()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    a.record()
    assert a.query() in (True, False)


# ---- ascend_aclnn.testing.benchmark --------------------------------------------------------

def test_benchmark_reports_device_and_host_time_per_call(backend):
    from ascend_aclnn.testing import benchmark
    d = aa.to_device(X)
    report = benchmark(aa.upsample_nearest_exact1d, d, [24], warmup=2, repeat=15)
    assert report.backend == backend and len(report.device_ms) == len(report.host_ms) == 15
    assert 0 < report.device_p10_ms <= report.device_median_ms <= report.device_p90_ms
    assert report.host_median_ms > 0 and "calls" in str(report)


def test_benchmark_device_time_is_the_kernels_on_the_simulator(npu):
    from ascend_aclnn.testing import benchmark
    d = aa.to_device(np.zeros((4, 16, 1024), np.float32))
    small = benchmark(aa.upsample_nearest_exact1d, d, [1024], repeat=5)
    large = benchmark(aa.upsample_nearest_exact1d, d, [8192], repeat=5)
    # the simulator's clock: 3 us per kernel plus the bytes read and written at 1152 bytes/ns
    want_ms = (3000 + np.ceil((d.nbytes + 4 * 16 * 1024 * 4) / 1152)) / 1e6
    assert small.device_ms == pytest.approx((want_ms,) * 5, rel=1e-5)
    assert large.device_median_ms > small.device_median_ms


def test_benchmark_argument_errors(backend):
    from ascend_aclnn.testing import benchmark
    with pytest.raises(TypeError, match="fn: expected a callable"):
        benchmark(3)
    with pytest.raises(ValueError, match="repeat: expected an int >= 1"):
        benchmark(aa.synchronize, repeat=0)
    with pytest.raises(ValueError, match="warmup: expected an int >= 0"):
        benchmark(aa.synchronize, warmup=-1)


def test_an_event_recorded_in_a_capture_in_progress_cannot_be_waited_on_from_outside(backend):
    """CANN's 107028, before any C call, on both backends (the numpy backend had no such
    check, and the npu backend recorded such an event on the default stream, outside the capture)."""
    import threading
    e = aa.Event(timing=True)
    other = aa.Event(timing=True)
    other.record()
    seen = []

    def outside():
        with aa.use_backend(backend):
            for call in (e.synchronize, e.query, lambda: other.elapsed_time(e)):
                try:
                    call()
                    seen.append(None)
                except errors.AclnnError as exc:
                    seen.append(exc.status)

    g = aa.Graph()
    with aa.graph(g):
        e.record()
        t = threading.Thread(target=outside)
        t.start()
        t.join()
    assert seen == [107028] * 3
    e.record()
    e.synchronize()   # recorded outside a capture again: an ordinary event
    g.close()
