"""aa.Graph / aa.graph(g) / replay / close, and DeviceArray.copy_, on both backends: replay
equal to eager for every described operator and a raw one over many replays with new
inputs, every refusal inside a capture (raised before any C call, the capture abandoned
cleanly), plans captured, what a closed graph's queued replays keep, and flat live counters
over many capture/replay cycles."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import errors
from ascend_aclnn.tools.bench import all_cases

X = np.arange(24, dtype=np.float32).reshape(1, 2, 12)
CASES = {c.op: c for c in all_cases() if c.size == "small"}


def on_device(v):
    if isinstance(v, np.ndarray):
        return aa.to_device(v)
    if isinstance(v, (list, tuple)) and any(isinstance(x, np.ndarray) for x in v):
        return type(v)(on_device(x) for x in v)
    return v


def feed(static, new):
    """copy_ each new host array into its static DeviceArray."""
    if isinstance(static, aa.DeviceArray):
        static.copy_(new)
    elif isinstance(static, (list, tuple)):
        for s, n in zip(static, new):
            feed(s, n)


def host(v):
    if isinstance(v, aa.DeviceArray):
        return v.numpy()
    if isinstance(v, (list, tuple)):
        return [host(x) for x in v]
    return v


@pytest.mark.parametrize("op", sorted(CASES))
def test_replay_equals_eager_for_every_described_operator(backend, op):
    case = CASES[op]
    fn = getattr(aa, op)
    dtype = np.float32
    args, kwargs = case.make(np.random.default_rng(0), np.dtype(dtype))
    static = [on_device(a) for a in args]
    skw = {k: on_device(v) for k, v in kwargs.items()}
    g = aa.Graph()
    with aa.graph(g):
        captured = fn(*static, **skw)
    for seed in range(1, 6):
        new_args, new_kwargs = case.make(np.random.default_rng(seed), np.dtype(dtype))
        for s, n in zip(static, new_args):
            feed(s, n)
        for k in skw:
            feed(skw[k], new_kwargs[k])
        g.replay()
        replayed = host(captured)
        eager = host(fn(*[on_device(a) for a in new_args], **{k: on_device(v) for k, v in new_kwargs.items()}))
        for r, e in zip(replayed if isinstance(replayed, list) else [replayed],
                        eager if isinstance(eager, list) else [eager]):
            np.testing.assert_array_equal(r, e)
    g.close()


def test_a_raw_operator_replays_with_new_inputs(npu):
    rng = np.random.default_rng(1)
    x, y = aa.to_device(rng.standard_normal((4, 8)).astype(np.float32)), aa.to_device(np.ones((4, 8), np.float32))
    out = aa.empty((4, 8))
    g = aa.Graph()
    with aa.graph(g):
        aa.aclnn.Add(x, y, 0.5, out)
    for _ in range(20):
        a, b = rng.standard_normal((2, 4, 8)).astype(np.float32)
        x.copy_(a)
        y.copy_(aa.to_device(b))   # from a DeviceArray too
        g.replay()
        np.testing.assert_array_equal(out.numpy(), (a + np.float32(0.5) * b).astype(np.float32))
    g.close()


def test_a_plan_can_be_captured(backend):
    x = aa.to_device(X)
    out = aa.empty(np.repeat(X, 2, -1).shape)
    p = aa.plan(aa.upsample_nearest_exact1d, x, [24], out=out)
    g = aa.Graph()
    with aa.graph(g):
        p(x, [24], out=out)
    x.copy_(X * 3)
    g.replay()
    np.testing.assert_array_equal(out.numpy(), np.repeat(X * 3, 2, -1))
    g.close()
    p.close()


def test_replay_on_another_stream_and_close_before_it_ran(backend):
    x = aa.to_device(X)
    g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(x, [24])
    s = aa.Stream()
    g.replay(s)
    g.close()                        # the queued replay keeps what it uses
    np.testing.assert_array_equal(y.numpy(), np.repeat(X, 2, -1))   # waits for s, y's writer
    with pytest.raises(RuntimeError, match="the graph is closed"):
        g.replay()
    s.close()


def test_a_closed_graphs_workspace_outlives_its_queued_replays(npu):
    """Every replay runs on the workspace the launches were captured with: closing the graph
    must not return it to the cache while a replay queued on another stream has not run,
    or a new array of its size is written over by the replay's accumulators (it was: the
    first of three uploads of the workspace's size read back the replay's values)."""
    l_in = 100
    grad = aa.to_device(np.ones((2, 3, 2 * l_in), np.float16))  # fp16 backward: an fp32 workspace
    aa.synchronize()
    aa.empty_cache()
    g = aa.Graph()
    with aa.graph(g):
        r = aa.upsample_nearest_exact1d_backward(grad, [2 * l_in], [2, 3, l_in])
    nbytes = 2 * 3 * l_in * 4
    side = aa.Stream()
    g.replay(side)
    g.close()
    uploads = [aa.to_device(np.full(nbytes // 4, 5, np.float32)) for _ in range(3)]
    np.testing.assert_array_equal(r.numpy(), np.full((2, 3, l_in), 2, np.float16))
    for u in uploads:
        assert (u.numpy() == 5).all()
    side.close()


REFUSED = {
    ".numpy()": lambda x, y: y.numpy(),
    "to_device": lambda x, y: aa.to_device(X),
    "synchronize": lambda x, y: aa.synchronize(),
    "empty_cache": lambda x, y: aa.empty_cache(),
    "NumPy input": lambda x, y: aa.upsample_nearest_exact1d(X, [24]),
    "NumPy out=": lambda x, y: aa.upsample_nearest_exact1d(x, [24], out=np.empty((1, 2, 24), np.float32)),
    "stream synchronize": lambda x, y: aa.current_stream().synchronize(),
    "stream query": lambda x, y: aa.current_stream().query(),
    "event synchronize": lambda x, y: aa.Event().synchronize(),
    "event query": lambda x, y: aa.Event().query(),
    "copy_ from NumPy": lambda x, y: x.copy_(X),
    "a nested capture": lambda x, y: aa.graph(aa.Graph()).__enter__(),
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_what_needs_the_host_is_refused_and_the_capture_abandoned(backend, what):
    x = aa.to_device(X)
    g = aa.Graph()
    with pytest.raises(errors.AclRtStreamCapturedError, match="captur"):
        with aa.graph(g):
            y = aa.upsample_nearest_exact1d(x, [24])
            REFUSED[what](x, y)
    assert "failed" in repr(g)
    with pytest.raises(RuntimeError, match="the graph is failed"):
        g.replay()
    # the runtime works as before
    np.testing.assert_array_equal(aa.upsample_nearest_exact1d(x, [24]).numpy(), np.repeat(X, 2, -1))
    aa.synchronize()
    g.close()


def test_graph_misuse(backend):
    g = aa.Graph()
    with pytest.raises(TypeError, match="expected an ascend_aclnn.Graph"):
        with aa.graph("g"):
            pass
    with pytest.raises(RuntimeError, match="the graph is new, not captured"):
        g.replay()
    with aa.graph(g):
        with pytest.raises(RuntimeError, match="being captured"):
            g.close()
    with pytest.raises(RuntimeError, match="a graph captures once"):
        with aa.graph(g):
            pass
    with pytest.raises(TypeError, match="stream: expected an ascend_aclnn.Stream"):
        g.replay(stream=1)
    g.replay()   # an empty graph replays nothing
    g.close()
    g.close()


def test_live_counters_stay_flat_over_many_capture_and_replay_cycles(npu, sim):
    x = aa.to_device(X)
    warm = aa.Graph()
    with aa.graph(warm):
        aa.upsample_nearest_exact1d(x, [24])
    warm.close()
    aa.synchronize()
    gc.collect()
    before = sim.leaks()
    for i in range(1000):
        g = aa.Graph()
        with aa.graph(g):
            y = aa.upsample_nearest_exact1d(x, [24])
        g.replay()
        if i % 100 == 0:
            np.testing.assert_array_equal(y.numpy(), np.repeat(X, 2, -1))
        g.close()
        del g, y
    aa.synchronize()
    gc.collect()
    after = sim.leaks()
    assert after.get("models", 0) == 0 and after == before


def test_a_graph_collected_without_close_releases_its_model(npu, sim):
    x = aa.to_device(X)
    g = aa.Graph()
    with aa.graph(g):
        aa.upsample_nearest_exact1d(x, [24])
    assert sim.live("models") == 1
    del g
    gc.collect()
    assert sim.live("models") == 0


def test_copy_argument_errors(backend):
    d = aa.to_device(X)
    with pytest.raises(ValueError, match="src: expected shape"):
        d.copy_(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="src: expected shape"):
        d.copy_(X.astype(np.float64))
    with pytest.raises(TypeError, match="src: expected a NumPy array or a DeviceArray"):
        d.copy_([1, 2])
    assert d.copy_(X + 1) is d
    np.testing.assert_array_equal(d.numpy(), X + 1)


def test_a_forked_child_cannot_capture_on_the_npu_but_can_on_numpy(npu):
    import os
    aa.to_device(X)   # the parent's runtime is in use
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        code = 1
        try:
            try:
                with aa.graph(aa.Graph()):
                    pass
            except RuntimeError as exc:
                if "forked child" in str(exc):
                    with aa.use_backend("numpy"):
                        g = aa.Graph()
                        d = aa.to_device(X)
                        with aa.graph(g):
                            y = aa.upsample_nearest_exact1d(d, [24])
                        g.replay()
                        code = 0 if np.array_equal(y.numpy(), np.repeat(X, 2, -1)) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


FAULTS = {
    "aclmdlRICaptureBegin": ("begin", errors.AclRtDrvInternalError),
    "aclmdlRICaptureEnd": ("end", errors.AclRtDrvInternalError),
    "aclmdlRIExecuteAsync": ("replay", errors.AclRtDrvInternalError),
    "aclrtMemsetAsync": ("zero-filled output in a capture", errors.AclRtDrvInternalError),
    "aclrtStreamWaitEvent": ("wait_event", errors.AclRtDrvInternalError),
    "aclrtStreamQuery": ("query", errors.AclRtDrvInternalError),
    "aclrtCreateStream": ("Stream()", errors.AclRtDrvInternalError),
}


@pytest.mark.parametrize("fn", sorted(FAULTS))
def test_a_failing_new_c_call_raises_its_status_and_the_runtime_recovers(npu, sim, monkeypatch, fn):
    x = aa.to_device(X)
    g = aa.Graph()
    if fn in ("aclmdlRIExecuteAsync",):
        with aa.graph(g):
            aa.upsample_nearest_exact1d(x, [24])
    s = aa.Stream()
    e = aa.Event()
    e.record()
    actions = {
        "aclmdlRICaptureBegin": lambda: aa.graph(g).__enter__(),
        "aclmdlRIExecuteAsync": g.replay,
        "aclrtStreamWaitEvent": lambda: s.wait_event(e),
        "aclrtStreamQuery": s.query,
        "aclrtCreateStream": aa.Stream,
    }

    def end_fails():
        with aa.graph(g):
            aa.upsample_nearest_exact1d(x, [24])

    pool_in = aa.to_device(np.ones((1, 1, 4, 4), np.float32))

    def memset_fails():
        with aa.graph(g):
            aa.max_pool2d_with_mask(pool_in, [2, 2], [2, 2], [0, 0], [1, 1])
    actions["aclmdlRICaptureEnd"] = end_fails
    if fn == "aclrtMemsetAsync":
        monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMemsetAsync:1:507899")
        with pytest.raises(FAULTS[fn][1]):
            memset_fails()
    else:
        monkeypatch.setenv("ASCEND_SIM_FAULT", f"{fn}:1:507899")
        with pytest.raises(FAULTS[fn][1], match=fn):
            actions[fn]()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    # the runtime works as before, and a new graph captures and replays
    g2 = aa.Graph()
    with aa.graph(g2):
        y = aa.upsample_nearest_exact1d(x, [24])
    g2.replay()
    np.testing.assert_array_equal(y.numpy(), np.repeat(X, 2, -1))
    for obj in (g, g2, s, e):
        obj.close()


# ---- every kind of call docs/runtime.md lists, captured on both backends (issue 35, items 4, 5, 7)

def _kinds():
    """name -> make(x): (capture, expected): ``capture()`` makes the captured calls reading the
    static input x and returns the arrays to read after a replay; ``expected(xh)`` what they
    hold for x's contents xh. Anything a kind needs besides x is made before the capture."""
    up = lambda h: np.repeat(h, 2, -1)  # noqa: E731  upsample_nearest_exact1d(h, [24])
    ones = np.ones(X.shape, np.float32)

    def described(x):
        return (lambda: [aa.upsample_nearest_exact1d(x, [24])]), lambda h: [up(h)]

    def described_out(x):
        out = aa.empty((1, 2, 24))
        return (lambda: [aa.upsample_nearest_exact1d(x, [24], out=out)]), lambda h: [up(h)]

    def described_into_its_input(x):  # out= one of the inputs: a temporary and a device copy
        c = aa.to_device(X)
        return (lambda: [c.copy_(x), aa.upsample_nearest_exact1d(c, [12], out=c)][1:]), lambda h: [h]

    def raw(x):
        y, out = aa.to_device(ones), aa.empty(X.shape)
        return (lambda: [aa.aclnn.Add(x, y, 0.5, out)]), lambda h: [h + np.float32(0.5)]

    def raw_in_place(x):
        y = aa.to_device(ones)
        c = aa.to_device(X)

        def capture():
            c.copy_(x)
            aa.aclnn.Add(c, y, 1.0, c)
            return [c]
        return capture, lambda h: [h + 1]

    def plan_described(x):
        out = aa.empty((1, 2, 24))
        p = aa.plan(aa.upsample_nearest_exact1d, x, [24], out=out)
        return (lambda: [p(x, [24], out=out)]), lambda h: [up(h)]

    def plan_raw(x):
        y, out = aa.to_device(ones), aa.empty(X.shape)
        p = aa.plan(aa.aclnn.Add, x, y, 2.0, out)
        return (lambda: [p()]), lambda h: [h + 2]

    def copy_into(x):
        dst = aa.to_device(np.zeros(X.shape, np.float32))
        return (lambda: [dst.copy_(x)]), lambda h: [h]

    def copy(x):
        return (lambda: [x.copy()]), lambda h: [h]

    def chain(x):  # each kind feeding the next
        y = aa.to_device(ones)

        def capture():
            a = aa.upsample_nearest_exact1d(x, [24])
            b = aa.empty(a.shape)
            aa.aclnn.Add(a, aa.upsample_nearest_exact1d(y, [24]), 1.0, b)
            return [b.copy()]
        return capture, lambda h: [up(h) + 1]

    return {f.__name__: f for f in (described, described_out, described_into_its_input, raw, raw_in_place,
                                     plan_described, plan_raw, copy_into, copy, chain)}


KINDS = _kinds()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_of_call_is_captured_and_replayed(backend, kind):
    """On the numpy backend raw operators and plans of them were refused in a capture ("has
    no NumPy form") and device copies were not replayed (a replay gave capture-time data)."""
    x = aa.to_device(X)
    capture, expected = KINDS[kind](x)
    g = aa.Graph()
    with aa.graph(g):
        outs = capture()
    for seed in range(1, 4):
        new = np.random.default_rng(seed).standard_normal(X.shape).astype(np.float32)
        x.copy_(new)
        g.replay()
        for got, want in zip(outs, expected(new)):
            np.testing.assert_array_equal(got.numpy(), want)
    g.close()


def test_a_replay_after_the_captured_arrays_were_freed_uses_the_graphs_hold(backend):
    """The graph holds the arrays its calls read and write, as documented: freeing the
    caller's arrays leaves their memory to the graph (on the numpy backend the replay raised
    AttributeError)."""
    src = aa.to_device(np.ones(X.shape, np.float32))
    x = aa.to_device(X)
    y = aa.to_device(np.ones(X.shape, np.float32))
    out = aa.empty(X.shape)
    g = aa.Graph()
    with aa.graph(g):
        x.copy_(src)
        aa.aclnn.Add(x, y, 1.0, out)
        r = aa.upsample_nearest_exact1d(out, [24])
    src.copy_(np.full(X.shape, 7, np.float32))
    for a in (x, y, out):
        a.free()
    g.replay()
    np.testing.assert_array_equal(r.numpy(), np.full((1, 2, 24), 8, np.float32))
    g.close()


# ---- side streams inside a capture (issue 35, item 6) -----------------------------------------

def test_inside_a_capture_the_current_stream_is_the_capture_stream(backend):
    """As torch's: it was the default stream, so work forked from it escaped the graph."""
    g = aa.Graph()
    with aa.graph(g):
        cur = aa.current_stream()
        assert cur != aa.default_stream() and cur == aa.current_stream()
        with pytest.raises(RuntimeError, match="capture stream"):
            cur.close()
    assert aa.current_stream() == aa.default_stream()
    with pytest.raises(RuntimeError, match="capture has ended"):
        aa.Event().record(cur)
    with pytest.raises(RuntimeError, match="capture has ended"):
        with aa.stream(cur):
            pass
    g.close()


def test_work_forked_onto_a_side_stream_and_joined_back_is_captured(backend):
    """torch's side-stream pattern inside a capture: the side work is in the graph (it ran
    once, eagerly, outside it, and replays read stale data)."""
    x = aa.to_device(X)
    side = aa.Stream()
    g = aa.Graph()
    with aa.graph(g):
        side.wait_stream(aa.current_stream())          # fork
        with aa.stream(side):
            a = aa.upsample_nearest_exact1d(x, [24])
            a2 = a.copy()
        b = aa.upsample_nearest_exact1d(x, [36])       # meanwhile, on the capture stream
        aa.current_stream().wait_stream(side)          # join
        c = aa.empty(a.shape)
        aa.aclnn.Add(a2, a, 1.0, c)                    # reads the side stream's results
    for seed in range(1, 4):
        new = np.random.default_rng(seed).standard_normal(X.shape).astype(np.float32)
        x.copy_(new)
        g.replay()
        np.testing.assert_array_equal(a.numpy(), np.repeat(new, 2, -1))
        np.testing.assert_array_equal(b.numpy(), np.repeat(new, 3, -1))
        np.testing.assert_array_equal(c.numpy(), 2 * np.repeat(new, 2, -1))
    # the side stream is an ordinary stream again
    with aa.stream(side):
        d = aa.upsample_nearest_exact1d(x, [24])
    side.synchronize()
    np.testing.assert_array_equal(d.numpy(), a.numpy())
    g.close()
    side.close()


def _unjoined(side, x):
    side.wait_stream(aa.current_stream())
    with aa.stream(side):
        aa.upsample_nearest_exact1d(x, [24])


def _unjoined_after_join(side, x):  # joined, then more work: its last task is not the join
    side.wait_stream(aa.current_stream())
    aa.current_stream().wait_stream(side)
    with aa.stream(side):
        aa.upsample_nearest_exact1d(x, [24])


def _side_not_forked(side, x):
    with aa.stream(side):
        aa.upsample_nearest_exact1d(x, [24])


def _default_stream_work(side, x):
    with aa.stream(aa.default_stream()):
        aa.upsample_nearest_exact1d(x, [24])


def _default_stream_joins(side, x):
    e = aa.Event()
    e.record()
    aa.default_stream().wait_event(e)


def _wait_on_work_outside(side, x):
    e = aa.Event()
    e.record(side)          # side is not in the capture
    aa.current_stream().wait_event(e)


def _copy_on_a_side_stream_not_forked(side, x):
    with aa.stream(side):
        x.copy()


FORK_MISUSE = {
    "a forked stream not joined back": (_unjoined, errors.AclnnError, 107025),
    "a forked stream with work after its join": (_unjoined_after_join, errors.AclnnError, 107025),
    "work on a stream not forked in": (_side_not_forked, errors.AclnnError, 107029),
    "a copy on a stream not forked in": (_copy_on_a_side_stream_not_forked, errors.AclnnError, 107029),
    "work on the default stream": (_default_stream_work, errors.AclnnError, 107031),
    "the default stream waits on a captured event": (_default_stream_joins, errors.AclnnError, 107031),
    "the capture waits on work outside it": (_wait_on_work_outside, errors.AclnnError, 107024),
}


@pytest.mark.parametrize("what", sorted(FORK_MISUSE))
def test_work_that_would_escape_the_graph_fails_the_capture_with_canns_status(backend, what):
    """Never a graph that silently omits work: CANN's capture status, the same on both
    backends, raised by the binding before CANN would see it; the capture is abandoned and
    the runtime (the side stream too) works as before."""
    fn, cls, status = FORK_MISUSE[what]
    x = aa.to_device(X)
    side = aa.Stream()
    g = aa.Graph()
    with pytest.raises(cls) as info:
        with aa.graph(g):
            aa.upsample_nearest_exact1d(x, [24])
            fn(side, x)
    assert info.value.status == status, info.value
    assert "failed" in repr(g)
    with aa.stream(side):
        y = aa.upsample_nearest_exact1d(x, [24])
    side.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.repeat(X, 2, -1))
    aa.synchronize()
    g.close()
    side.close()
