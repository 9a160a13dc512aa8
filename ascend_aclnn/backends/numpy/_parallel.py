"""A small, bounded thread pool for the numpy backend's large elementwise passes.

NumPy releases the GIL inside its ufunc loops and copies, so independent slices of an
array (blocks of (n, c) planes, runs of rows) can be processed at once on several cores.
Every task writes a disjoint part of the output and does exactly the arithmetic the serial
loop would do, in the same order, so results never depend on the number of threads.

The thread count is ``ASCEND_ACLNN_REFERENCE_THREADS`` when set (1 = serial, in the
calling thread), else ``os.cpu_count()`` capped at MAX_THREADS. (The variable keeps the
name it had when these kernels were the reference.)
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

ENV = "ASCEND_ACLNN_REFERENCE_THREADS"
MAX_THREADS = 8
MIN_WORK = 1 << 18  # elements: below this, threads cost more than they save

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def threads() -> int:
    """How many threads a call may use (read on every call, so the variable can be changed
    at run time)."""
    value = os.environ.get(ENV, "").strip()
    if value:
        try:
            return max(1, min(int(value), 64))
        except ValueError:
            raise ValueError(f"{ENV} must be a positive integer, got {value!r}") from None
    return max(1, min(os.cpu_count() or 1, MAX_THREADS))


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


def _submit(pool: ThreadPoolExecutor, fn: Callable[[int, int], None], a: int, b: int) -> Future:
    """pool.submit, or the part run here when the pool no longer takes work (replaced by
    a change of the thread count, or shut down at interpreter exit): same result."""
    try:
        return pool.submit(fn, a, b)
    except RuntimeError:
        done: Future = Future()
        try:
            fn(a, b)
        except BaseException as e:
            done.set_exception(e)
        else:
            done.set_result(None)
        return done


def spans(count: int, work: int) -> list[tuple[int, int]]:
    """[start, stop) ranges covering range(count), one per thread (fewer when the total
    work, in elements, is too small to share)."""
    parts = min(threads(), count, max(1, work // MIN_WORK))
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


def parallel(count: int, work: int, fn: Callable[[int, int], None]) -> None:
    """Split range(count) (e.g. planes) over the threads by spans() and run fn on each."""
    run(fn, spans(count, work))
