"""Threads and lifetimes (issue 11, section 3).

Threading model (runtime.py): any thread may call in; each makes the device current on
itself; all threads share the device's one in-order stream, whose lock makes a launch
(workspace, enqueue, keep-alive) and a sync atomic with respect to each other. So N
threads calling every operator at once, on NumPy arrays or on their own DeviceArrays,
must give exactly the serial results, with no leak and no deadlock.

Lifetimes: DeviceArrays alive at interpreter exit, collected or used after the runtime was
torn down, used after set_backend changed, used on another device: a clear error or a
clean free, never a crash or a message at exit (fresh interpreters for what needs one).
"""
from __future__ import annotations

import contextvars
import textwrap
import threading

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.ops import REGISTRY
from conftest import assert_no_leaks, run_python
from op_db import OP_DB, tolerance

THREADS = 8
REPEATS = 10
SAMPLES = 2  # op_db samples per operator and thread


def _host(result):
    return tuple(None if r is None else np.asarray(r) for r in (result if isinstance(result, tuple) else (result,)))


def _work(seed: int):
    """One thread's calls: every operator on two of its samples (the sample and dtype picked
    by the seed), once on NumPy arrays and once on this thread's own DeviceArrays, with the
    device results read only at the end."""
    done, pending = [], []
    for spec in REGISTRY:
        info = OP_DB[spec.name]
        dtype = info.dtypes[seed % len(info.dtypes)]
        samples = info.samples(dtype, np.random.default_rng(seed))
        for k in range(SAMPLES):
            s = samples[(seed + k) % len(samples)]
            f = getattr(aa, spec.name)
            done.append(_host(f(*s.args, **s.kwargs)))
            pending.append(f(*[aa.to_device(a) if isinstance(a, np.ndarray) else a for a in s.args], **s.kwargs))
    return done + [_host(p) for p in pending]


def _run_threads(n: int, churn: bool):
    """n threads run _work at once; with churn, one more thread keeps synchronising and
    emptying the caches meanwhile (dropping the workspace the others launch with)."""
    barrier = threading.Barrier(n + churn)
    results: dict[int, list] = {}
    failures: list[BaseException] = []
    stop = threading.Event()

    def target(seed):
        try:
            barrier.wait(timeout=30)
            results[seed] = _work(seed)
        except BaseException as exc:  # noqa: BLE001  reported by the main thread
            failures.append(exc)

    def churner():
        try:
            barrier.wait(timeout=30)
            while not stop.is_set():
                aa.synchronize()
                aa.empty_cache()
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(target, seed), daemon=True)
               for seed in range(n)]
    extra = [threading.Thread(target=contextvars.copy_context().run, args=(churner,), daemon=True)] if churn else []
    for t in threads + extra:
        t.start()
    for t in threads:
        t.join(timeout=120)
    stop.set()
    for t in extra:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads + extra), "a thread is stuck: deadlock"
    assert not failures, repr(failures[0])
    return results


def _same_bits(got, want, where):
    assert len(got) == len(want), where
    for i, (g, w) in enumerate(zip(got, want)):
        for j, (a, b) in enumerate(zip(g, w)):
            assert (a is None) == (b is None), (where, i, j)
            if a is not None:
                assert (a.shape, a.dtype) == (b.shape, b.dtype), (where, i, j)
                assert a.tobytes() == b.tobytes(), f"{where}: call {i} output {j} differs from the serial result"


def test_threads_call_every_operator_at_once_and_get_the_serial_results(backend, sim):
    serial = {seed: _work(seed) for seed in range(THREADS)}
    if backend == "npu":  # the serial npu results themselves are right: the reference's, at tolerance
        with aa.use_backend("numpy"):
            reference = _work(0)
        for i, (got, want) in enumerate(zip(serial[0], reference)):
            for a, b in zip(got, want):
                if b is not None:
                    np.testing.assert_allclose(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                                               b.astype(np.complex128 if b.dtype.kind == "c" else np.float64),
                                               err_msg=f"call {i}", **tolerance(b.dtype))
    for repeat in range(REPEATS):
        results = _run_threads(THREADS, churn=backend == "npu")
        for seed in range(THREADS):
            _same_bits(results[seed], serial[seed], f"repeat {repeat}, thread {seed}")
        if backend == "npu":
            assert_no_leaks(sim)


def test_threads_on_different_backends_at_once(sim):
    """use_backend is per thread (a context variable): a numpy thread and an npu thread
    side by side each stay on their own backend."""
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    seen: dict[str, set] = {"numpy": set(), "npu": set()}

    def loop(name):
        with aa.use_backend(name):
            for _ in range(50):
                d = aa.upsample_nearest_exact1d(aa.to_device(x), [7])
                seen[name].add(d.backend)
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(loop, n)) for n in seen]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert seen == {"numpy": {"numpy"}, "npu": {"npu"}}
    assert_no_leaks(sim)


def test_arrays_freed_and_read_by_other_threads_than_their_makers(npu, sim):
    """A DeviceArray made by one thread, with its producing work still queued, is read by a
    second and freed by a third, while a fourth keeps launching."""
    x = np.arange(30, dtype=np.float32).reshape(1, 3, 10)
    want = aa.upsample_nearest_exact1d(x, [15])
    for _ in range(20):
        made = []
        stop = threading.Event()
        t_make = threading.Thread(target=lambda: made.extend(
            aa.upsample_nearest_exact1d(aa.to_device(x), [15]) for _ in range(10)))
        t_make.start()
        t_make.join()
        got = []
        t_read = threading.Thread(target=lambda: got.extend(m.numpy() for m in made[:5]))
        t_free = threading.Thread(target=lambda: [m.free() for m in made[5:]])

        def busy():
            while not stop.is_set():
                aa.upsample_nearest_exact1d(aa.to_device(x), [15])
        t_busy = threading.Thread(target=busy)
        for t in (t_busy, t_read, t_free):
            t.start()
        for t in (t_read, t_free):
            t.join(timeout=60)
        stop.set()
        t_busy.join(timeout=60)
        assert all(np.array_equal(g, want) for g in got) and len(got) == 5
        assert all(m.is_freed for m in made[5:])
    del made
    assert_no_leaks(sim)


def test_arrays_after_teardown_give_a_clear_error(npu, sim):
    """Teardown (what interpreter exit does) releases the device; a DeviceArray that outlived
    it is reported as released, not passed to CANN as a dangling pointer."""
    from ascend_aclnn.backends.npu import runtime
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    d = aa.to_device(x)
    y = aa.upsample_nearest_exact1d(d, [5])  # queued at teardown
    runtime.get_runtime().teardown()
    for attempt in (d.numpy, y.numpy, lambda: aa.upsample_nearest_exact1d(d, [5]),
                    lambda: aa.upsample_nearest_exact1d(x, [5], out=y), lambda: aa.to_device(d)):
        with pytest.raises(ValueError, match="released when the runtime was torn down"):
            attempt()
    assert "freed" in repr(d)
    d.free()
    del y  # collected after teardown: silent
    np.testing.assert_array_equal(aa.upsample_nearest_exact1d(x, [5]), [[[0, 0, 1, 2, 2], [3, 3, 4, 5, 5]]])


LIFETIMES = textwrap.dedent("""
    import gc, sys, threading, numpy as np, ascend_aclnn as aa
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    want = [[[0, 0, 1, 2, 2], [3, 3, 4, 5, 5]]]

    def expect(tag, exc_type, fn, text):
        try:
            fn()
        except exc_type as e:
            assert text in str(e), (tag, str(e))
            print(tag, "refused")
        else:
            print(tag, "NOT refused")

    # another device
    aa.set_device(1)
    d1 = aa.to_device(x)
    y1 = aa.upsample_nearest_exact1d(d1, [5])          # queued on npu:1
    o1 = aa.empty((1, 2, 5))
    aa.set_device(0)
    d0 = aa.to_device(x)
    expect("input on npu:1", aa.DeviceMismatchError, lambda: aa.upsample_nearest_exact1d(d1, [5]), "input: this DeviceArray lives on npu:1")
    expect("out on npu:1", aa.DeviceMismatchError, lambda: aa.upsample_nearest_exact1d(d0, [5], out=o1), "out: this DeviceArray lives on npu:1")
    expect("to_device of npu:1", aa.DeviceMismatchError, lambda: aa.to_device(d1), "array: this DeviceArray lives on npu:1")
    print("read npu:1 from npu:0", y1.numpy().tolist() == want)
    d1.free()                                           # freed while npu:0 is current
    print("npu:0 still", aa.upsample_nearest_exact1d(d0, [5]).numpy().tolist() == want)

    # after set_backend changed
    aa.set_backend("numpy")
    expect("npu array on numpy", aa.DeviceMismatchError, lambda: aa.upsample_nearest_exact1d(d0, [5]), "lives on the npu backend")
    print("npu array read under numpy", d0.numpy().tolist() == x.tolist())
    h = aa.to_device(x)
    aa.set_backend("npu")
    expect("numpy array on npu", aa.DeviceMismatchError, lambda: aa.upsample_nearest_exact1d(h, [5]), "lives on the numpy backend")
    expect("numpy array as out on npu", aa.DeviceMismatchError, lambda: aa.upsample_nearest_exact1d(x, [3], out=h), "out: this DeviceArray lives on the numpy backend")
    h.free()

    # alive at exit: module globals, a cycle, a dead thread's result, queued work on both devices
    keep = [aa.upsample_nearest_exact1d(aa.to_device(x), [5]) for _ in range(3)]
    class Node: pass
    a, b = Node(), Node(); a.peer, b.peer, a.arr = b, a, aa.to_device(x)
    t = threading.Thread(target=lambda: keep.append(aa.upsample_nearest_exact1d(aa.to_device(x), [7])))
    t.start(); t.join()
    aa.set_device(1); keep.append(aa.upsample_nearest_exact1d(aa.to_device(x), [9])); aa.set_device(0)
    del a, b

    # a daemon thread still launching while the interpreter exits
    started = threading.Event()
    def spin():
        n = 0
        while True:
            aa.upsample_nearest_exact1d(aa.to_device(x), [5]); aa.upsample_nearest_exact1d(x, [5])
            n += 1
            if n == 5:
                started.set()
    threading.Thread(target=spin, daemon=True).start()
    started.wait()
    print("exiting")
""")


def test_lifetimes_across_devices_backends_and_exit(sim):
    for run in range(3):  # the daemon thread races the exit: a few times
        result = run_python(LIFETIMES, sim, ASCEND_ACLNN_BACKEND="npu", ASCEND_SIM_DEVICE_COUNT="2")
        assert result.returncode == 0 and result.stderr == "", result.stdout + result.stderr
        assert result.stdout.splitlines() == [
            "input on npu:1 refused", "out on npu:1 refused", "to_device of npu:1 refused",
            "read npu:1 from npu:0 True", "npu:0 still True",
            "npu array on numpy refused", "npu array read under numpy True",
            "numpy array on npu refused", "numpy array as out on npu refused", "exiting"], result.stdout


EXIT_RACE = textwrap.dedent("""
    import threading, numpy as np, ascend_aclnn as aa
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    big = np.random.default_rng(0).standard_normal((8, 64, 40, 40)).astype(np.float32)
    started = []

    def looping(fn):
        ev = threading.Event(); started.append(ev)
        def run():
            n = 0
            while True:
                fn()
                n += 1
                if n == 3:
                    ev.set()
        threading.Thread(target=run, daemon=True).start()

    def numpy_call():
        with aa.use_backend("numpy"):  # large enough for the reference's thread pool
            aa.replication_pad2d(big, [3, 3, 3, 3])

    looping(lambda: aa.upsample_nearest_exact1d(aa.to_device(x), [5]).numpy())
    looping(lambda: aa.upsample_nearest_exact1d(x, [5]))
    p = aa.plan(aa.upsample_nearest_exact1d, aa.to_device(x), [5])
    looping(lambda: p())
    q = aa.plan(aa.upsample_nearest_exact1d, x, [5])
    looping(lambda: q(x, [5]))
    looping(numpy_call)
    for ev in started:
        ev.wait()
    print("exiting")
""")


def test_exit_with_daemon_threads_calling_is_silent(sim):
    """Daemon threads in ordinary calls, plan runs and large numpy-backend calls while the
    interpreter exits: exit waits for the calls in flight, parks later ones, tears down,
    and prints nothing. (Before the call gate, plans failed 19 of 20 such exits and the
    reference's pool 14 of 20.)"""
    for _ in range(4):
        result = run_python(EXIT_RACE, sim, ASCEND_ACLNN_BACKEND="npu", ASCEND_ACLNN_REFERENCE_THREADS="2")
        assert (result.returncode, result.stdout, result.stderr) == (0, "exiting\n", ""), result.stderr[-3000:]


def test_no_npu_call_after_exit_teardown(sim):
    """An atexit handler that runs after the binding's teardown gets a clear error; the
    runtime is not initialised again."""
    code = textwrap.dedent("""
        import atexit, numpy as np
        def late():
            try:
                aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [3])
            except RuntimeError as e:
                print("refused:", e)
        atexit.register(late)  # registered before the binding's handler: runs after it
        import ascend_aclnn as aa
        aa.upsample_nearest_exact1d(np.ones((1, 1, 2), np.float32), [3])
    """)
    result = run_python(code, sim, ASCEND_ACLNN_BACKEND="npu")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.startswith("refused: the npu runtime was shut down at interpreter exit"), result.stdout


EXIT_RUNTIME_RACE = textwrap.dedent("""
    import threading, numpy as np, ascend_aclnn as aa
    x = aa.to_device(np.arange(6, dtype=np.float32).reshape(1, 2, 3))
    s = aa.Stream()
    g = aa.Graph()
    with aa.graph(g):
        y = aa.upsample_nearest_exact1d(x, [5])
    e, timed = aa.Event(), aa.Event(timing=True)
    started = []

    def looping(fn):
        ev = threading.Event(); started.append(ev)
        def run():
            n = 0
            while True:
                fn()
                n += 1
                if n == 3:
                    ev.set()
        threading.Thread(target=run, daemon=True).start()

    looping(lambda: g.replay(s))
    looping(lambda: g.replay())
    looping(lambda: e.record(s))
    looping(lambda: (timed.record(), timed.query(), s.wait_event(e)))
    looping(lambda: s.query())
    for ev in started:
        ev.wait()
    print("exiting")
""")


def test_exit_with_daemon_threads_replaying_and_recording_is_silent(sim):
    """Daemon threads replaying graphs and recording, waiting on and querying events and
    streams while the interpreter exits: the gate closes before any graph, event or stream
    is destroyed (their collectors' exit hooks ran first and printed a traceback naming a
    destroyed handle, 8 of 8 runs), so exit waits for the calls in flight, parks later ones,
    tears down and prints nothing."""
    for run in range(8):
        result = run_python(EXIT_RUNTIME_RACE, sim, ASCEND_ACLNN_BACKEND="npu")
        assert (result.returncode, result.stdout, result.stderr) == (0, "exiting\n", ""), \
            f"run {run}: " + result.stderr[-3000:]
