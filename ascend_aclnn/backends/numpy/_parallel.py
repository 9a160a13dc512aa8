"""A small, bounded thread pool for the numpy backend's large elementwise passes.

NumPy releases the GIL inside its ufunc loops and copies, so independent slices of an
array (blocks of (n, c) planes, runs of rows) can be processed at once on several cores.
Every task writes a disjoint part of the output and does exactly the arithmetic the serial
loop would do, in the same order, so results never depend on the number of threads.

The thread count is ``ASCEND_ACLNN_REFERENCE_THREADS`` when set (1 = serial, in the
calling thread; every call with at least MIN_WORK elements per thread is split), else the
default below. (The variable keeps the name it had when these kernels were the reference.)

The default, measured with ``python -m ascend_aclnn bench --sizes large`` on a 2-vCPU
machine that other jobs share (the large rows, 1 thread against 2, side by side):

* Per operator, a caller gives the work per thread below which it runs serially
  (``min_work``): the data-movement kernels that are one pass at the copy floor and the
  kernels whose two-thread time was no better than one (upsample both ways, max pool
  both ways) pass SERIAL; the pad kernels, whose two threads were 1.1-1.9x faster on an
  idle machine, and any caller that gives nothing, split above MIN_WORK.
* Whatever the operator, one thread when the machine's other cores are busy (the
  1-minute load average at least the CPU count less one half, our own thread
  included): a second thread then waits for a core the scheduler gives to another
  process, and the call waits for it. Measured at load 3-5: two threads 0.14-0.85x of
  one on every large row of these kernels, against 1.0-1.9x at load below 1.5.

Results never depend on the thread count, only the time does.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

ENV = "ASCEND_ACLNN_REFERENCE_THREADS"
MAX_THREADS = 8
MIN_WORK = 1 << 18  # elements per thread: below this, threads cost more than they save
SERIAL = None  # a caller's min_work: one thread unless the environment variable says otherwise
BUSY_MARGIN = 0.5  # one thread when the load average is at least cpu_count - BUSY_MARGIN

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _configured() -> int | None:
    """The environment variable's thread count, or None when it is not set."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    try:
        return max(1, min(int(value), 64))
    except ValueError:
        raise ValueError(f"{ENV} must be a positive integer, got {value!r}") from None


def threads() -> int:
    """How many threads a call may use (read on every call, so the variable can be changed
    at run time): the variable, else the CPU count up to MAX_THREADS (which spans() then
    narrows by the caller's min_work and the machine's load)."""
    configured = _configured()
    return configured if configured is not None else max(1, min(os.cpu_count() or 1, MAX_THREADS))


def _busy() -> bool:
    """Whether the machine's other cores are taken (the default then runs serially)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return False
    return load >= (os.cpu_count() or 1) - BUSY_MARGIN


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != n:
            if _pool is not None:
                _pool.shutdown(wait=False)  # a call still submitting to it runs its parts itself
            _pool, _pool_size = ThreadPoolExecutor(n, thread_name_prefix="aclnn-ref"), n
        return _pool


def _forget_pool() -> None:
    """In a forked child: the parent's pool came without its worker threads."""
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _submit(pool: ThreadPoolExecutor, fn: Callable[[int, int], None], a: int, b: int) -> Future[None]:
    """pool.submit, or the part run here when the pool no longer takes work (replaced by
    a change of the thread count, or shut down at interpreter exit): same result."""
    try:
        return pool.submit(fn, a, b)
    except RuntimeError:
        done: Future[None] = Future()
        try:
            fn(a, b)
        except BaseException as e:
            done.set_exception(e)
        else:
            done.set_result(None)
        return done


def spans(count: int, work: int, min_work: int | None = MIN_WORK) -> list[tuple[int, int]]:
    """[start, stop) ranges covering range(count), one per thread (fewer when the total
    work, in elements, is too small to share). With the environment variable set, every
    caller splits above MIN_WORK elements per thread; by default, above the caller's
    min_work (SERIAL: never), and only while the machine is not busy."""
    configured = _configured()
    if configured is not None:
        parts = min(configured, count, max(1, work // MIN_WORK))
    elif min_work is SERIAL or work < 2 * min_work or _busy():
        parts = 1
    else:
        parts = min(threads(), count, max(1, work // min_work))
    step = -(-count // max(parts, 1)) if count else 0
    return [(i, min(i + step, count)) for i in range(0, count, step)] if count else []


def run(fn: Callable[[int, int], None], parts: Sequence[tuple[int, int]]) -> None:
    """fn(start, stop) for every part: in this thread when there is one part (or one
    thread), else on the pool; the first exception is raised here after all finish. The
    pool's threads run under the caller's np.errstate (a thread does not inherit it), so
    arithmetic the caller meant to overflow stays as silent there as here."""
    if len(parts) <= 1 or threads() == 1:
        for a, b in parts:
            fn(a, b)
        return
    pool = _executor(threads())
    caller = np.geterr()

    def task(a: int, b: int) -> None:
        with np.errstate(**caller):
            fn(a, b)

    futures = [_submit(pool, task, a, b) for a, b in parts[1:]]
    error = None
    try:
        fn(*parts[0])  # the calling thread takes the first part itself
    except BaseException as e:  # still wait for the others: they write the same output
        error = e
    for f in futures:
        try:
            f.result()
        except BaseException as e:
            error = error or e
    if error is not None:
        raise error


def parallel(count: int, work: int, fn: Callable[[int, int], None], min_work: int | None = MIN_WORK) -> None:
    """Split range(count) (e.g. planes) over the threads by spans() and run fn on each."""
    run(fn, spans(count, work, min_work))
