"""The simulator's schedule under the test's control (issue 36): ASCEND_SIM_QUERY_PROGRESS
bounds what a query lets the device run, and aclsimDeviceStep moves the device by a given
number of tasks, so queued work can stay pending while the host goes on."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import ascend_aclnn as aa

X = np.arange(24, dtype=np.float32).reshape(1, 2, 12)

pytestmark = pytest.mark.simulator


@pytest.fixture
def step(sim):
    fn = sim.lib.aclsimDeviceStep
    fn.restype, fn.argtypes = ctypes.c_int64, [ctypes.c_int32, ctypes.c_int64]
    return fn


def _queue(s: aa.Stream, n: int):
    """n kernels queued on s (one task each), and the result they end in."""
    d = aa.to_device(X)
    with aa.stream(s):
        for _ in range(n):
            d = aa.upsample_nearest_exact1d(d, [12])
    return d


@pytest.mark.parametrize("progress, per_query", [("0", 0), ("1", 1), ("2", 2), ("all", 4), ("", 4)])
def test_a_query_runs_at_most_what_the_variable_allows(npu, sim, monkeypatch, progress, per_query):
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", progress)
    s = aa.Stream()
    aa.synchronize()
    out = _queue(s, 4)
    queued = sim.live("pending_tasks")
    assert queued == 4
    assert not s.query()                          # answered before the device moves
    assert sim.live("pending_tasks") == queued - per_query
    if per_query == 0:
        for _ in range(50):                       # the host polls; the device does not move
            assert not s.query()
        assert sim.live("pending_tasks") == queued
    np.testing.assert_array_equal(out.numpy(), X)  # a sync runs everything
    assert s.query()
    s.close()


def test_an_event_query_stops_at_its_record_and_obeys_the_variable(npu, sim, monkeypatch):
    s = aa.Stream()
    aa.synchronize()
    e = aa.Event()
    d = _queue(s, 2)
    e.record(s)
    d = _queue(s, 2)                               # (its upload runs at once: not a stream task)
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", "0")
    assert not e.query() and not e.query()
    assert sim.live("pending_tasks") == 5           # two kernels, the record, two kernels
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", "all")
    assert not e.query()                            # then the stream runs up to the record only
    assert sim.live("pending_tasks") == 2
    assert e.query()
    np.testing.assert_array_equal(d.numpy(), X)
    s.close()
    e.close()


def test_device_step_runs_the_given_number_of_tasks_interleaved(npu, sim, step, monkeypatch):
    """Newest stream first, one task at a time, as aclrtSynchronizeDevice interleaves them."""
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", "0")
    aa.synchronize()
    a, b = aa.Stream(), aa.Stream()
    ra, rb = _queue(a, 3), _queue(b, 3)
    assert sim.live("pending_tasks") == 6
    assert step(0, 0) == 0 and sim.live("pending_tasks") == 6
    assert step(0, 1) == 1                          # b's first task: b is the newer stream
    assert not a.query() and not b.query()
    assert step(0, 3) == 3                          # a, b, a
    assert sim.live("pending_tasks") == 2
    assert step(0, 100) == 2                        # what is left; nothing more to run
    assert step(0, 100) == 0
    assert a.query() and b.query()
    np.testing.assert_array_equal(ra.numpy(), X)
    np.testing.assert_array_equal(rb.numpy(), X)
    a.close()
    b.close()


def test_device_step_refuses_a_device_that_is_not_there_or_a_negative_count(npu, step):
    aa.synchronize()
    assert step(0, -1) == -1
    assert step(-1, 1) == -1
    assert step(1, 1) == -1                          # the default device count is 1
    assert step(64, 1) == -1



def test_elapsed_time_waits_for_both_events_on_two_streams(npu, monkeypatch):
    """'both are synchronised first': start recorded behind queued work on one stream, end on
    another; elapsed_time waits for each record (the device does not move on its own)."""
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", "0")
    aa.synchronize()
    a, b = aa.Stream(), aa.Stream()
    start, end = aa.Event(timing=True), aa.Event(timing=True)
    r = _queue(a, 2)
    start.record(a)
    end.record(b)
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and start.query() and end.query()
    np.testing.assert_array_equal(r.numpy(), X)
    a.close()
    b.close()
