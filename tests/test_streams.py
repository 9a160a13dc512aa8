"""aa.Stream, aa.current_stream / default_stream, ``with aa.stream(s)``, and what the
runtime promises across streams: ordering only through events (a missing wait is a race
the simulator shows), .numpy() waiting for the array's last writer, and memory never
reused under another stream's queued work, whichever stream frees it."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import errors

X = np.arange(24, dtype=np.float32).reshape(1, 2, 12)
UP = np.repeat(X, 2, axis=-1)


def up(d):
    return aa.upsample_nearest_exact1d(d, [24])


def test_the_current_stream_is_context_local(backend):
    default = aa.default_stream()
    assert aa.current_stream() == default == aa.default_stream(0)
    s = aa.Stream()
    assert s != default and s == s and len({s, s, default}) == 2
    with aa.stream(s) as entered:
        assert entered is s and aa.current_stream() == s
        seen = []
        t = threading.Thread(target=lambda: seen.append(aa.current_stream()))
        with aa.use_backend(backend):
            t.start()
            t.join()
        with aa.stream(None):
            assert aa.current_stream() == s
    assert aa.current_stream() == default
    assert "default stream" in repr(default) and "closed" not in repr(s)
    s.close()


def test_a_script_runs_unchanged_on_both_backends(backend):
    x = aa.to_device(X)
    side = aa.Stream()
    start, end = aa.Event(timing=True), aa.Event(timing=True)
    start.record()
    with aa.stream(side):
        side.wait_stream(aa.default_stream())
        y = up(x)
        done = aa.Event()
        done.record()
    aa.current_stream().wait_event(done)
    z = aa.upsample_nearest_exact1d(y, [12])
    end.record()
    np.testing.assert_array_equal(z.numpy(), X)
    g = aa.Graph()
    with aa.graph(g):
        w = aa.upsample_nearest_exact1d(z, [24])
    z.copy_(X + 1)                     # on the current stream: the replay on side must wait for it
    side.wait_stream(aa.current_stream())
    g.replay(side)
    np.testing.assert_array_equal(w.numpy(), np.repeat(X + 1, 2, -1))
    g.close()
    assert start.elapsed_time(end) >= 0
    side.synchronize()
    assert side.query() and end.query()
    side.close()


def test_a_missing_wait_is_the_callers_race_and_a_wait_orders_it(npu):
    producer, consumer = aa.Stream(), aa.Stream()
    x = aa.to_device(X)
    for wait in (False, True):
        wrong = 0
        for _ in range(200):
            with aa.stream(producer):
                y = up(x)
            with aa.stream(consumer):
                if wait:
                    consumer.wait_stream(producer)
                z = aa.upsample_nearest_exact1d(y, [12])
            wrong += not np.array_equal(z.numpy(), X)   # waits for z's writer only: the consumer
            producer.synchronize()
        assert wrong == (0 if wait else 200), (wait, wrong)
    producer.close()
    consumer.close()


def test_reading_an_array_waits_for_its_last_writer(npu):
    s = aa.Stream()
    x = aa.to_device(X)
    with aa.stream(s):
        y = up(x)
    np.testing.assert_array_equal(y.numpy(), UP)   # read from the default stream's context
    s.close()


@pytest.mark.parametrize("how", ["free", "del"])
def test_a_block_is_not_reused_under_another_streams_queued_work(npu, how, device_lags):
    s = aa.Stream()
    x = aa.to_device(X)
    y = up(x)
    y.numpy()
    with aa.stream(s):
        z = aa.upsample_nearest_exact1d(y, [12])   # queued on s, reads y
    if how == "free":
        y.free()                                    # from the default stream's context
    else:
        del y
        gc.collect()
    clobber = [aa.to_device(np.full(UP.shape, -7, np.float32)) for _ in range(4)]  # same size as y
    np.testing.assert_array_equal(z.numpy(), X)
    del clobber
    s.close()


def test_plans_run_on_the_current_stream(npu):
    s = aa.Stream()
    x = aa.to_device(X)
    out = aa.empty(UP.shape)
    p = aa.plan(aa.upsample_nearest_exact1d, x, [24], out=out)
    with aa.stream(s):
        p(x, [24], out=out)
        assert not s.query()        # queued on s, not on the default stream
    np.testing.assert_array_equal(out.numpy(), UP)
    p.close()
    s.close()


def test_stream_lifetime_and_misuse(npu, sim):
    before = sim.live("streams")
    s = aa.Stream()
    kept = aa.Stream()
    assert sim.live("streams") == before + 2
    s.close()
    s.close()  # idempotent
    assert sim.live("streams") == before + 1 and "closed" in repr(s)
    for call in (s.synchronize, s.query, lambda: s.wait_stream(kept), lambda: kept.wait_stream(s)):
        with pytest.raises(RuntimeError, match="the stream is closed"):
            call()
    with pytest.raises(RuntimeError, match="the stream is closed"):
        with aa.stream(s):
            pass
    del kept
    gc.collect()
    assert sim.live("streams") == before
    with pytest.raises(ValueError, match="default stream cannot be closed"):
        aa.default_stream().close()
    with pytest.raises(ValueError, match="device: expected None or a non-negative int"):
        aa.Stream(device=-1)
    with pytest.raises(errors.AclRtInvalidDeviceidError):
        aa.Stream(device=7)


def test_argument_errors_on_both_backends(backend):
    s = aa.Stream()
    with pytest.raises(TypeError, match="stream: expected an ascend_aclnn.Stream or None"):
        with aa.stream("s"):
            pass
    with pytest.raises(TypeError, match="event: expected an ascend_aclnn.Event"):
        s.wait_event(s)
    with pytest.raises(TypeError, match="other: expected an ascend_aclnn.Stream"):
        s.wait_stream(aa.Event())
    with pytest.raises(TypeError, match="stream: expected an ascend_aclnn.Stream or None"):
        aa.Event().record(stream=3)
    s.wait_event(aa.Event())   # never recorded: nothing to wait for
    s.close()


def test_a_stream_keeps_its_backend(npu):
    s = aa.Stream()
    with aa.use_backend("numpy"):
        with pytest.raises(errors.DeviceMismatchError, match="belongs to the npu backend"):
            with aa.stream(s):
                pass
    s.close()


def test_threads_each_on_their_own_stream(npu):
    x = aa.to_device(X)
    errors_seen, results = [], {}

    def worker(i):
        try:
            with aa.use_backend("npu"):
                s = aa.Stream()
                with aa.stream(s):
                    out = None
                    for _ in range(50):
                        out = aa.upsample_nearest_exact1d(aa.upsample_nearest_exact1d(x, [24]), [12])
                    results[i] = (out.numpy(), aa.current_stream() == s)
                s.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors_seen.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors_seen, errors_seen
    for got, on_own_stream in results.values():
        np.testing.assert_array_equal(got, X)
        assert on_own_stream
    assert aa.current_stream() == aa.default_stream()


def test_exit_with_live_streams_events_and_graphs_is_clean(sim):
    from conftest import run_python
    proc = run_python("""
import numpy as np, ascend_aclnn as aa
with aa.use_backend("npu"):
    x = aa.to_device(np.ones((1, 2, 4), np.float32))
    s = aa.Stream()
    e = aa.Event(timing=True)
    g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(x, [8])
    with aa.stream(s):
        g.replay()
        e.record()
    print("queued")
""", sim)
    assert proc.returncode == 0 and proc.stdout.strip() == "queued", proc.stderr
    assert proc.stderr == ""


def test_streams_and_events_of_another_device(sim):
    from conftest import run_python
    proc = run_python("""
import numpy as np, ascend_aclnn as aa
from ascend_aclnn import errors
with aa.use_backend("npu"):
    s1 = aa.Stream(device=1)
    assert s1.device == 1 and s1 != aa.default_stream(1)
    try:
        with aa.stream(s1):
            pass
        raise SystemExit("no error")
    except errors.DeviceMismatchError as exc:
        assert "set_device(1)" in str(exc), exc
    e = aa.Event()
    e.record()                       # on npu:0
    try:
        s1.wait_event(e)
        raise SystemExit("no error")
    except errors.AclRtStreamContextError as exc:
        assert "npu:0" in str(exc), exc
    g = aa.Graph()
    with aa.graph(g):
        pass
    try:
        g.replay(s1)
        raise SystemExit("no error")
    except errors.DeviceMismatchError:
        pass
    aa.set_device(1)
    with aa.stream(s1):
        y = aa.upsample_nearest_exact1d(aa.to_device(np.ones((1, 1, 2), np.float32)), [4])
    assert y.device == 1 and (y.numpy() == 1).all()
    print("ok")
""", sim, ASCEND_SIM_DEVICE_COUNT="2")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
