"""Use and destroy of every runtime object under threads (issue 35, item 1).

For each object (stream, event, graph, plan and the executor a plan holds) and each of its
uses, one thread loops the use while the main thread closes the object. A use that starts
after the close must raise the documented error (RuntimeError "... is closed"; a plan's
ValueError), a use already past its checks may finish; nothing else may happen: on the npu
backend the simulator answers a destroyed handle with 107000 "not a live model/event/
stream", which would reach the caller as an AclnnError, and a launch queued on a destroyed
stream would leak what it keeps alive (the npu fixture's leak check).
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable

import numpy as np
import pytest

import ascend_aclnn as aa

X = np.arange(24, dtype=np.float32).reshape(1, 2, 12)
TRIALS = 12


class Case:
    """What one trial needs: ``obj`` to close, ``use`` looped by the thread (inside
    ``ctx`` when given: a stream made current once), the expected error."""

    def __init__(self, obj: Any, use: Callable[[], Any], close: Callable[[], None],
                 error: type = RuntimeError, match: str = "closed", ctx: Any = None, cleanup: Any = ()):
        self.obj, self.use, self.close, self.error, self.match = obj, use, close, error, match
        self.ctx, self.cleanup = ctx, cleanup


def _graph_on(x):
    g = aa.Graph()
    with aa.graph(g):
        aa.upsample_nearest_exact1d(x, [24])
    return g


def _stream_case(use: str) -> Callable[[], Case]:
    def make() -> Case:
        x = aa.to_device(X)
        s = aa.Stream()
        other = aa.Stream()
        e = aa.Event()
        e.record()
        close = s.close
        if use == "launch":
            return Case(s, lambda: aa.upsample_nearest_exact1d(x, [24]), close, ctx=s, cleanup=[other])
        if use == "copy_":
            y = aa.to_device(X * 2)
            return Case(s, lambda: x.copy_(y), close, ctx=s, cleanup=[other])
        if use == "plan":
            p = aa.plan(aa.upsample_nearest_exact1d, x, [24])
            return Case(s, p, close, ctx=s, cleanup=[other, p])
        if use == "synchronize":
            return Case(s, s.synchronize, close, cleanup=[other])
        if use == "query":
            return Case(s, s.query, close, cleanup=[other])
        if use == "wait_event":
            return Case(s, lambda: s.wait_event(e), close, cleanup=[other])
        if use == "wait_stream":
            return Case(s, lambda: s.wait_stream(other), close, cleanup=[other])
        if use == "waited_by":
            return Case(s, lambda: other.wait_stream(s), close, cleanup=[other])
        if use == "event_record":
            return Case(s, lambda: e.record(s), close, cleanup=[other])
        if use == "graph_replay":
            g = _graph_on(x)
            return Case(s, lambda: g.replay(s), close, cleanup=[other, g])
        raise AssertionError(use)
    return make


def _event_case(use: str) -> Callable[[], Case]:
    def make() -> Case:
        s = aa.Stream()
        e = aa.Event(timing=True)
        e.record(s)
        end = aa.Event(timing=True)
        end.record(s)
        close = e.close
        uses = {"record": lambda: e.record(s), "waited_on": lambda: s.wait_event(e), "synchronize": e.synchronize,
                "query": e.query, "elapsed_time": lambda: e.elapsed_time(end),
                "elapsed_time_as_end": lambda: end.elapsed_time(e)}
        return Case(e, uses[use], close, cleanup=[end, s])
    return make


def _graph_case(use: str) -> Callable[[], Case]:
    def make() -> Case:
        x = aa.to_device(X)
        g = _graph_on(x)
        s = aa.Stream()
        if use == "replay":
            return Case(g, g.replay, g.close, cleanup=[s])
        return Case(g, lambda: g.replay(s), g.close, cleanup=[s])
    return make


def _plan_case(use: str) -> Callable[[], Case]:
    def make() -> Case:
        x = aa.to_device(X)
        if use == "raw":  # a raw operator's executor (aclSetTensorAddr rebinding)
            y, out = aa.to_device(X), aa.empty(X.shape)
            p = aa.plan(aa.aclnn.Add, x, y, 1.0, out)
            x2 = aa.to_device(X + 1)
            flip = [x, x2]
            return Case(p, lambda: p(flip.reverse() or flip[0], y, 1.0, out), p.close, ValueError, "is closed")
        p = aa.plan(aa.upsample_nearest_exact1d, x, [24])
        x2 = aa.to_device(X + 1)
        flip = [x, x2]  # alternate inputs: every run rebinds the executor's addresses
        return Case(p, lambda: p(flip.reverse() or flip[0], [24]), p.close, ValueError, "is closed")
    return make


CASES = {f"stream-{u}": _stream_case(u) for u in ("launch", "copy_", "plan", "synchronize", "query", "wait_event",
                                                   "wait_stream", "waited_by", "event_record", "graph_replay")}
CASES.update({f"event-{u}": _event_case(u) for u in ("record", "waited_on", "synchronize", "query",
                                                      "elapsed_time", "elapsed_time_as_end")})
CASES.update({f"graph-{u}": _graph_case(u) for u in ("replay", "replay_on_stream")})
CASES.update({f"plan-{u}": _plan_case(u) for u in ("described", "raw")})


@pytest.fixture
def fine_switching():
    """Switch threads as often as the interpreter allows, so the races are hit."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _trial(case: Case, backend: str, warmup: int) -> tuple[list[BaseException], int, int]:
    """The thread loops case.use; the main thread closes case.obj after ``warmup`` uses,
    then lets the thread run until it has seen the close refused a few times."""
    wrong: list[BaseException] = []
    refused_after = [0]
    uses = [0]
    closing = threading.Event()  # set before close() is called
    closed = threading.Event()   # set once it returned
    stop = threading.Event()

    def loop() -> None:
        with aa.use_backend(backend):
            with aa.stream(case.ctx) if case.ctx is not None else _null():
                while not stop.is_set():
                    was_closed = closed.is_set()
                    try:
                        case.use()
                    except case.error as exc:
                        if case.match not in str(exc):
                            wrong.append(exc)
                            return
                        if not closing.is_set():
                            wrong.append(AssertionError(f"refused before the close: {exc}"))
                            return
                        if was_closed:
                            refused_after[0] += 1
                            if refused_after[0] >= 3:
                                return
                    except BaseException as exc:  # noqa: BLE001 - the test's verdict
                        wrong.append(exc)
                        return
                    else:
                        if was_closed:
                            wrong.append(AssertionError("a use that began after close() returned ran"))
                            return
                    uses[0] += 1

    t = threading.Thread(target=loop)
    t.start()
    while uses[0] < warmup and t.is_alive():
        pass
    closing.set()
    case.close()
    closed.set()
    t.join(30)
    stop.set()
    t.join(30)
    assert not t.is_alive(), "the using thread hangs"
    return wrong, refused_after[0], uses[0]


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def _close(obj: Any) -> None:
    obj.close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_use_and_destroy_are_exclusive(backend, fine_switching, name):
    problems = []
    for trial in range(TRIALS):
        case = CASES[name]()
        try:
            wrong, refused, _ = _trial(case, backend, warmup=1 + trial % 4)
        finally:
            for o in case.cleanup:
                _close(o)
        problems += [f"trial {trial}: {type(e).__name__}: {e}" for e in wrong]
        if not wrong:
            assert refused >= 1, f"trial {trial}: no use after close() was refused"
    assert not problems, "\n".join(problems[:5])
