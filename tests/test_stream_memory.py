"""Memory across streams (issue 29, item 2): a block that work queued on a stream still
uses is never handed out again before that work has run, whichever stream frees it, and
free() does not wait for that work.

free() records an event on each stream whose queued work uses the block; the allocator
hands the block out again only once those events have completed, which it asks CANN
(aclrtQueryEventStatus) when a request of that size misses its cache. The simulator's
streams are lazy queues (work runs at a sync, or as far as a query lets it progress), so
work queued on a side stream is still queued when the default stream's context frees the
array it reads, and a synchronous upload into a reused block lands before that work runs.
The race tests run with the ``device_lags`` fixture (the simulator's queries run nothing):
by default a query that answers "not ready" also runs the queue, so an allocator that
queried and then ignored the answer would find the work already done and race nothing
(test_a_query_that_runs_the_queue_hides_an_ignored_answer shows it).
Faults in the new call sites are in test_faults.py.
"""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.backends.npu import runtime
from ascend_aclnn.backends.npu import runtime as npu_runtime

X = np.arange(2 * 300, dtype=np.float32).reshape(1, 2, 300)  # 2400 bytes: a size class of its own here


def up(d):
    return aa.upsample_nearest_exact1d(d, [600])


def _allocator() -> runtime.Allocator:
    return runtime.current_device().allocator


def _clobbered_rounds(rounds: int, write: str) -> int:
    """Rounds in which the side stream's result was wrong. Each round starts from an empty
    cache, queues on a side stream a kernel that reads x, frees x from the default stream's
    context, then allocates an array of x's size and writes it: with an upload (a
    synchronous copy) or with a copy queued on the default stream, which is run before the
    side stream's work. If the new array got x's block, the side stream reads its values."""
    side = aa.Stream()
    minus = aa.to_device(np.full(X.shape, -7, np.float32))
    wrong = 0
    for i in range(rounds):
        aa.synchronize()
        aa.empty_cache()
        x = aa.to_device(X + i)
        with aa.stream(side):
            z = up(x)                  # queued on the side stream: reads x
        x.free()
        if write == "upload":
            new = aa.to_device(np.full(X.shape, -7, np.float32))
        else:
            new = aa.empty(X.shape).copy_(minus)
            aa.default_stream().synchronize()
        wrong += not np.array_equal(z.numpy(), np.repeat(X + i, 2, -1))
        np.testing.assert_array_equal(new.numpy(), np.full(X.shape, -7, np.float32))
        del z, new
    side.close()
    return wrong


@pytest.mark.simulator  # its lazy queues keep the side stream's work queued; an NPU may have run it
@pytest.mark.parametrize("write", ["upload", "queued"])
def test_a_block_freed_under_another_streams_queued_work_is_not_reused_before_it_ran(npu, write, device_lags):
    assert _clobbered_rounds(200, write) == 0


def _queried_then_ignored(dev, handle):
    """The allocator's event wait removed the realistic way: the event is queried (the
    simulator may let the device progress then), and the answer dropped."""
    _real_event_complete(dev, handle)
    return True


_real_event_complete = npu_runtime.event_complete


@pytest.mark.simulator
@pytest.mark.parametrize("complete", [lambda dev, handle: True, _queried_then_ignored], ids=["no-query", "ignored"])
@pytest.mark.parametrize("write", ["upload", "queued"])
def test_the_race_test_fails_when_the_allocator_ignores_the_events(npu, write, complete, monkeypatch, device_lags):
    """The test above can fail: with every event taken as complete, whether it was queried
    or not, the block is handed out at once and every round's result is the new array's
    values."""
    monkeypatch.setattr(npu_runtime, "event_complete", complete)
    assert _clobbered_rounds(50, write) == 50


@pytest.mark.simulator
def test_a_query_that_runs_the_queue_hides_an_ignored_answer(npu, monkeypatch):
    """Why the race tests need device_lags: by default the simulator's query runs the queue
    up to the event while it answers "not ready", so the same planted bug races nothing."""
    monkeypatch.setenv("ASCEND_SIM_QUERY_PROGRESS", "all")
    monkeypatch.setattr(npu_runtime, "event_complete", _queried_then_ignored)
    assert _clobbered_rounds(20, "upload") == 0


def test_free_does_not_wait_for_another_streams_queued_work(npu, sim):
    side = aa.Stream()
    x = aa.to_device(X)
    with aa.stream(side):
        z = up(x)
    queued, events = sim.live("pending_tasks"), sim.live("events")
    assert queued == 1
    x.free()
    assert x.is_freed
    assert sim.live("pending_tasks") == 2        # the kernel, and the event recorded behind it
    assert sim.live("events") == events + 1
    assert not side.query()
    np.testing.assert_array_equal(z.numpy(), np.repeat(X, 2, -1))
    side.close()


@pytest.mark.simulator  # the first poll finds the side stream's work still queued
def test_the_freed_block_is_reused_once_its_events_completed(npu, device_lags):
    aa.synchronize()
    aa.empty_cache()
    alloc = _allocator()
    side = aa.Stream()
    x = aa.to_device(X)
    ptr, size = x._buffer.ptr, x._buffer.nbytes
    with aa.stream(side):
        z = up(x)
    live, cached = alloc.live_bytes, alloc.cached_bytes
    x.free()
    assert (alloc.live_bytes, alloc.cached_bytes, alloc.pending_bytes) == (live - size, cached + size, size)
    early = aa.to_device(X * 3)                  # the event has not completed: a new block
    assert early._buffer.ptr != ptr
    side.synchronize()
    again = aa.to_device(X * 2)
    assert again._buffer.ptr == ptr              # the same block, once the side stream's work ran
    assert (alloc.live_bytes, alloc.cached_bytes, alloc.pending_bytes) == (live + size, cached, 0)
    np.testing.assert_array_equal(z.numpy(), np.repeat(X, 2, -1))
    np.testing.assert_array_equal(again.numpy(), X * 2)
    np.testing.assert_array_equal(early.numpy(), X * 3)
    side.close()


def test_events_go_only_to_the_streams_whose_queued_work_uses_the_block(npu, sim):
    """A busy stream that does not use the block gets no event and is not waited for; the
    default stream, where the array was made and read, gets one like any other user."""
    a, b, busy = aa.Stream(), aa.Stream(), aa.Stream()
    x, other = aa.to_device(X), aa.to_device(X + 1)
    with aa.stream(busy):
        w = up(other)
    with aa.stream(a):
        za = up(x)
    with aa.stream(b):
        zb = up(x)
    zd = up(x)                                   # the default stream
    events = sim.live("events")
    x.free()
    assert sim.live("events") == events + 3      # a, b and the default stream; not busy
    assert _allocator().events_out == 3
    assert not busy.query()
    for z in (za, zb, zd):
        np.testing.assert_array_equal(z.numpy(), np.repeat(X, 2, -1))
    np.testing.assert_array_equal(w.numpy(), np.repeat(X + 1, 2, -1))
    for s in (a, b, busy):
        s.close()


def test_a_queued_replay_of_a_closed_graph_is_a_user_of_the_block(npu, device_lags):
    """What a closed graph's captured launches use is held by its replays still queued:
    free() finds the block there and records an event on the replay's stream."""
    side = aa.Stream()
    x = aa.to_device(X)
    g = aa.Graph()
    with aa.graph(g):
        y = up(x)
    g.replay(side)
    g.close()
    x.free()
    clobber = [aa.to_device(np.full(X.shape, -7, np.float32)) for _ in range(3)]
    np.testing.assert_array_equal(y.numpy(), np.repeat(X, 2, -1))
    del clobber
    side.close()


def _on_side(side, x):
    with aa.use_backend("npu"), aa.stream(side):
        return up(x)


def test_free_inside_a_capture_records_on_the_other_streams_only(npu, sim, device_lags):
    """free() inside a capture: an array that queued work of another stream reads gets an
    event on that stream (never on the capturing one); an array the capture uses stays
    with the graph. The capture, its replay and the other stream's result are right."""
    side = aa.Stream()
    x, kept = aa.to_device(X), aa.to_device(X + 5)
    g = aa.Graph()
    events = sim.live("events")
    with aa.graph(g):                            # (its begin waits for every stream)
        # queued on side by another thread, outside the capture (this context's work on a
        # stream not forked into the capture is refused: the graph would miss it)
        got = []
        worker = threading.Thread(target=lambda: got.append(_on_side(side, x)))
        worker.start()
        worker.join()
        z = got[0]
        y = up(kept)
        x.free()
        kept.free()                              # the captured launch reads it: the graph keeps it
    assert sim.live("events") == events + 1 and not side.query()
    clobber = aa.to_device(np.full(X.shape, -7, np.float32))
    g.replay()
    np.testing.assert_array_equal(y.numpy(), np.repeat(X + 5, 2, -1))
    np.testing.assert_array_equal(z.numpy(), np.repeat(X, 2, -1))
    g.close()
    del clobber
    side.close()


def test_a_thousand_free_and_alloc_cycles_leave_no_event_or_block(npu, sim):
    side = aa.Stream()
    aa.synchronize()
    aa.empty_cache()
    gc.collect()
    before = sim.leaks()
    most_events = most_blocks = 0
    for i in range(1000):
        x = aa.to_device(X)
        with aa.stream(side):
            z = up(x)
        x.free()
        y = aa.empty(X.shape)
        most_events = max(most_events, sim.live("events"))
        most_blocks = max(most_blocks, sim.live("device_allocations"))
        if i % 10 == 0:                          # the side stream's outputs go at its sync
            np.testing.assert_array_equal(z.numpy(), np.repeat(X, 2, -1))
        del y, z
    assert most_events <= 4 and most_blocks <= 16, (most_events, most_blocks)
    side.synchronize()
    aa.empty_cache()
    alloc = _allocator()
    assert (alloc.events_out, alloc.pending_bytes, alloc.cached_bytes) == (0, 0, 0)
    assert sim.leaks() == before
    side.close()


@pytest.mark.simulator  # the last free() finds the side stream's work still queued
def test_at_the_event_bound_free_collects_the_completed_ones_or_waits(npu, sim, monkeypatch):
    """Blocks of sizes nobody asks for again are never polled by alloc. At the bound of
    events out, free() first collects the blocks whose events completed; when none has, it
    waits for the streams instead (the rule before events) and returns the block at once."""
    monkeypatch.setattr(runtime, "MAX_FREE_EVENTS", 4)
    side = aa.Stream()
    alloc = _allocator()
    aa.synchronize()
    aa.empty_cache()
    results = []

    def free_after_side_reads(n):                # one size class per n: no alloc polls them
        x = aa.to_device(np.full((1, 1, 1000 * n), n, np.float32))
        with aa.stream(side):
            results.append((n, up(x)))
        size = x._buffer.nbytes
        x.free()
        return size

    sizes = [free_after_side_reads(n) for n in range(1, 5)]
    assert (alloc.events_out, alloc.pending_bytes) == (4, sum(sizes))
    side.synchronize()
    fifth = free_after_side_reads(5)              # at the bound: the four completed ones are collected
    assert (alloc.events_out, alloc.pending_bytes) == (1, fifth)
    more = [free_after_side_reads(n) for n in range(6, 9)]
    assert (alloc.events_out, alloc.pending_bytes) == (4, fifth + sum(more))
    cached = alloc.cached_bytes
    last = free_after_side_reads(9)               # none completed: waits for the side stream
    assert side.query()
    assert (alloc.events_out, alloc.pending_bytes, alloc.cached_bytes) == (4, fifth + sum(more), cached + last)
    for n, z in results:
        np.testing.assert_array_equal(z.numpy(), np.full((1, 1, 600), n, np.float32))
    side.close()


def test_the_same_script_gives_the_same_results_on_both_backends(backend, device_lags):
    side = aa.Stream()
    x = aa.to_device(X)
    with aa.stream(side):
        z = up(x)
    x.free()
    assert x.is_freed
    new = aa.to_device(np.full(X.shape, -7, np.float32))
    side.synchronize()
    np.testing.assert_array_equal(z.numpy(), np.repeat(X, 2, -1))
    np.testing.assert_array_equal(new.numpy(), np.full(X.shape, -7, np.float32))
    with pytest.raises(ValueError, match="has been freed"):
        x.numpy()
    side.close()


def test_threads_freeing_under_each_others_streams_get_the_right_results(npu, device_lags):
    """Four threads, each on a stream of its own, free arrays their own queued work reads and
    allocate arrays of the same size at once: every block any of them frees waits for the
    events of its own stream while the others poll the shared cache."""
    import threading
    failures: list[BaseException] = []
    wrong: list[int] = []

    def worker(k: int) -> None:
        try:
            with aa.use_backend("npu"):
                s = aa.Stream()
                pending = []
                for i in range(50):
                    x = aa.to_device(X + 1000 * k + i)
                    with aa.stream(s):
                        pending.append((i, up(x)))
                    x.free()
                    aa.to_device(np.full(X.shape, -7, np.float32))  # same size: polls the shared cache
                    if i % 10 == 9:
                        wrong.extend(j for j, z in pending if not np.array_equal(z.numpy(),
                                                                                 np.repeat(X + 1000 * k + j, 2, -1)))
                        pending.clear()
                s.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    assert wrong == []


def test_exit_and_teardown_with_blocks_waiting_for_their_events_are_clean(sim):
    from conftest import run_python
    proc = run_python("""
import numpy as np, ascend_aclnn as aa
from ascend_aclnn.backends.npu import runtime
with aa.use_backend("npu"):
    for teardown in (True, False):
        s = aa.Stream()
        x = aa.to_device(np.ones((1, 2, 300), np.float32))
        with aa.stream(s):
            y = aa.upsample_nearest_exact1d(x, [600])
        x.free()
        alloc = runtime.current_device().allocator
        assert alloc.events_out == 1 and alloc.pending_bytes > 0
        if teardown:
            runtime.get_runtime().teardown()
            print("torn down", alloc.events_out, alloc.pending_bytes, alloc._idle_events, alloc._freed)
print("exiting")
""", sim)
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["torn down 0 0 [] {}", "exiting"]


@pytest.mark.simulator  # the side stream's work stays queued while the allocator polls
def test_a_poll_queries_one_event_per_busy_stream(npu, monkeypatch, device_lags):
    """'once one of its events is not ready the later ones on it are not queried: a poll
    costs a query per ready block and per busy stream': five blocks of one size wait on
    events of one busy stream; an alloc of that size asks once, then, the stream done,
    once per block."""
    aa.synchronize()
    aa.empty_cache()
    side = aa.Stream()
    asked = []

    def counting(dev, handle):
        asked.append(handle)
        return _real_event_complete(dev, handle)

    monkeypatch.setattr(npu_runtime, "event_complete", counting)
    results = []
    for i in range(5):
        x = aa.to_device(X + i)
        with aa.stream(side):
            results.append(up(x))
        x.free()
    assert _allocator().events_out == 5
    asked.clear()                                # (each upload above polled the blocks before it)
    new = aa.to_device(X)                        # misses the cache: one poll of the five
    assert len(asked) == 1
    side.synchronize()
    asked.clear()
    again = aa.to_device(X)                      # every event complete: each asked once
    assert len(asked) == 5 and _allocator().events_out == 0
    for i, z in enumerate(results):
        np.testing.assert_array_equal(z.numpy(), np.repeat(X + i, 2, -1))
    del new, again
    side.close()


@pytest.mark.simulator  # the first launch stays queued while the second replaces its workspace
def test_a_replaced_workspace_stays_with_the_stream_until_its_sync(npu, device_lags):
    """'Whatever a launched operator touches (inputs, outputs, a replaced workspace) is kept
    alive by its stream until the stream is synchronised': a launch needing a larger
    workspace does not hand the old one, which a queued kernel still uses, to the next
    allocation of its size; the stream's sync does."""
    aa.synchronize()
    aa.empty_cache()
    s = aa.Stream()
    small = aa.to_device(np.ones((2, 3, 16), np.float16))   # fp16 backward: an fp32 workspace
    large = aa.to_device(np.ones((4, 8, 64), np.float16))
    with aa.stream(s):
        r1 = aa.upsample_nearest_exact1d_backward(small, [16], [2, 3, 8])
        old = s._rt._workspace
        ptr, size = old.ptr, old.nbytes
        del old
        r2 = aa.upsample_nearest_exact1d_backward(large, [64], [4, 8, 32])
        assert s._rt._workspace.nbytes > size                  # grown: the old one replaced
    early = [aa.to_device(np.zeros(size // 4, np.float32)) for _ in range(3)]
    assert ptr not in [e._buffer.ptr for e in early]
    s.synchronize()
    later = [aa.to_device(np.zeros(size // 4, np.float32)) for _ in range(3)]
    assert ptr in [e._buffer.ptr for e in later]
    np.testing.assert_array_equal(r1.numpy(), np.full((2, 3, 8), 2, np.float16))
    np.testing.assert_array_equal(r2.numpy(), np.full((4, 8, 32), 2, np.float16))
    del early, later
    s.close()
