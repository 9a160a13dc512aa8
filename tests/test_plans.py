"""Plans (ascend_aclnn.plan): one operator call prepared once and run many times.

On the npu backend a plan runs phase 1 once, makes the executor repeatable and rebinds
only the addresses that changed; the simulator is strict about all of it (repeatable
executors, setter indices, the tensors an executor was built with, destroyed handles),
and the ``npu`` fixture's leak check covers executors, handles and device memory.
"""
from __future__ import annotations

import contextvars
import gc
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import ascend_aclnn as aa
from conftest import run_python
from op_db import OP_DB

OPS = sorted(OP_DB)
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def fn(op):
    return getattr(aa, op)


def host(result) -> tuple:
    result = result if isinstance(result, tuple) else (result,)
    return tuple(None if r is None else np.asarray(r) for r in result)


def assert_identical(actual, expected):
    actual, expected = host(actual), host(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if e is None:
            assert a is None
            continue
        assert (a.dtype, a.shape) == (e.dtype, e.shape)
        np.testing.assert_array_equal(a.view(np.uint8), e.view(np.uint8))  # bit for bit


def _changed(args: tuple) -> tuple:
    """New arrays of the same shapes and dtypes: float tensors doubled (rstd stays > 0),
    integer ones (the max-pool mask) copied."""
    return tuple((v * 2).astype(v.dtype) if isinstance(v, np.ndarray) and v.dtype.kind in "fV" or
                 (isinstance(v, np.ndarray) and v.dtype == aa.bfloat16) else
                 (v.copy() if isinstance(v, np.ndarray) else v) for v in args)


def _on_device(args: tuple) -> tuple:
    return tuple(aa.to_device(v) if isinstance(v, np.ndarray) else v for v in args)


@pytest.mark.parametrize("op", OPS)
def test_plans_equal_ordinary_calls(op, backend):
    """Every sample of every function and dtype: p() on the planned arrays, p(...) on new
    NumPy arrays and on DeviceArrays, all bit for bit equal to the ordinary call."""
    info = OP_DB[op]
    for dtype in info.dtypes:
        for sample in info.samples(np.dtype(dtype), np.random.default_rng(0)):
            args, kwargs = sample.args, sample.kwargs
            expected = fn(op)(*args, **kwargs)
            with aa.plan(fn(op), *args, **kwargs) as p:
                assert p.repeatable == (backend == "npu" and not p.spec.not_repeatable)
                assert_identical(p(), expected)
                assert_identical(p(), expected)  # twice: the executor was not consumed
                new = _changed(args)
                assert_identical(p(*new, **kwargs), fn(op)(*new, **kwargs))
                on_device = _on_device(new)
                result = p(*on_device, **kwargs)
                assert all(isinstance(r, aa.DeviceArray) for r in (result if isinstance(result, tuple)
                                                                    else (result,)) if r is not None)
                assert_identical(result, fn(op)(*new, **kwargs))
                assert_identical(p(*args, **kwargs), expected)  # back to NumPy arrays
            del on_device, result


def test_rerun_uploads_the_current_contents(backend):
    x = X.copy()
    p = aa.plan(aa.upsample_nearest_exact1d, x, [9])
    first = p()
    x *= 3
    np.testing.assert_array_equal(p(), first * 3)
    p.close()


def test_numpy_in_device_out_chain_keeps_each_runs_input(npu, sim):
    """NumPy inputs go into a buffer the plan owns; a run whose launch is still queued (a
    DeviceArray out=) must not see the next run's upload."""
    outs = [aa.empty((2, 3, 9)) for _ in range(3)]
    p = aa.plan(aa.upsample_nearest_exact1d, X, [9])
    for i, o in enumerate(outs):
        assert p(X * (i + 1), [9], out=o) is o
    assert sim.live("pending_tasks") == 3  # nothing waited
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o.numpy(), aa.upsample_nearest_exact1d(X * (i + 1), [9]))
    p.close()


def test_only_changed_addresses_are_rebound(npu, monkeypatch):
    from ascend_aclnn.cann.loader import get_cann
    d1, d2 = aa.to_device(X), aa.to_device(X + 1)
    out = aa.empty((2, 3, 9))
    calls = []
    functions = get_cann()._functions  # the bound C functions: record the two setters' calls
    for name, tag in (("aclSetInputTensorAddr", "in"), ("aclSetOutputTensorAddr", "out")):
        real = get_cann().function(name)
        monkeypatch.setitem(functions, name, lambda *a, real=real, tag=tag: calls.append((tag, a[1])) or real(*a))
    p = aa.plan(aa.upsample_nearest_exact1d, d1, [9], out=out)
    p()
    p(d1, [9], out=out)
    assert calls == []
    p(d2, [9], out=out)
    assert calls == [("in", 0)]
    np.testing.assert_array_equal(out.numpy(), aa.upsample_nearest_exact1d(X + 1, [9]))
    calls.clear()
    out2 = aa.empty((2, 3, 9))
    p(d2, [9], out=out2)
    assert calls == [("out", 0)]
    np.testing.assert_array_equal(out2.numpy(), out.numpy())
    p.close()


def test_aliased_out_gives_the_unaliased_result(backend):
    d = aa.to_device(np.arange(8, dtype=np.float32).reshape(1, 1, 8))
    p = aa.plan(aa.upsample_nearest_exact1d, d, [8], 2.0, out=d)
    assert p() is d
    np.testing.assert_array_equal(d.numpy(), [[[0, 0, 1, 1, 2, 2, 3, 3]]])
    p.close()


def test_numpy_out_and_required_flags(backend):
    info = OP_DB["group_norm_swish_grad"]
    args = info.samples(np.dtype(np.float32), np.random.default_rng(1))[0].args
    shapes = [r.shape for r in host(aa.group_norm_swish_grad(*args))]
    dx = np.zeros(shapes[0], np.float32)
    untouched = np.full(shapes[1], 7, np.float32)
    p = aa.plan(aa.group_norm_swish_grad, *args, dgamma_is_require=False, out=(dx, untouched, None))
    result = p()
    assert result[0] is dx and result[1] is None
    assert (untouched == 7).all()  # an out= for an output not computed is never written
    assert_identical(result, aa.group_norm_swish_grad(*args, dgamma_is_require=False))
    p.close()


def test_mismatches_name_the_argument(backend):
    p = aa.plan(aa.upsample_nearest_exact1d, X, [9])
    with pytest.raises(aa.PlanMismatchError, match=r"input: .*shape \(2, 3, 4\).*got shape \(2, 3, 5\)"):
        p(np.zeros((2, 3, 5), np.float32), [9])
    with pytest.raises(aa.PlanMismatchError, match="input: .*dtype float32.*dtype float16"):
        p(X.astype(np.float16), [9])
    with pytest.raises(aa.PlanMismatchError, match=r"output_size: .*\[9\], got \[10\]"):
        p(X, [10])
    with pytest.raises(aa.PlanMismatchError, match="scales: .*0.0, got 2.0"):
        p(X, [9], 2.0)
    with pytest.raises(aa.PlanMismatchError, match="out: .*shape"):
        p(X, [9], out=np.zeros((2, 3, 8), np.float32))
    with pytest.raises(aa.AclnnParamInvalidError, match="output_size: expected an int or a sequence of ints"):
        p(X, [9.0])  # what the ordinary call says
    with pytest.raises(TypeError, match="unexpected keyword"):
        p(X, [9], size=3)
    np.testing.assert_array_equal(p(X, np.array([9])), aa.upsample_nearest_exact1d(X, [9]))  # converted equal
    p.close()


def test_use_after_close_and_context_manager(backend):
    with aa.plan(aa.upsample_nearest_exact1d, X, [9]) as p:
        p()
    assert p.closed
    with pytest.raises(ValueError, match="closed"):
        p()
    p.close()  # twice is fine
    assert "closed" in repr(p)


def test_invalid_arguments_fail_at_plan_time(backend):
    with pytest.raises(aa.AclnnParamInvalidError, match="scales"):
        aa.plan(aa.upsample_nearest_exact1d_backward, X, [4], [2, 3, 4], -1.0)
    with pytest.raises(TypeError, match="operator function"):
        aa.plan(np.add, X)


def test_collected_with_queued_work(npu, sim):
    d = aa.to_device(X)
    p = aa.plan(aa.upsample_nearest_exact1d, d, [9])
    y = p()
    assert sim.live("executors") == 1 and sim.live("pending_tasks") == 1
    del p
    gc.collect()
    # the executor outlives the plan until the sync that runs its queued launch
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d(X, [9]))
    assert sim.live("executors") == 0


def test_collected_on_another_thread(npu, sim):
    box = {"p": aa.plan(aa.upsample_nearest_exact1d, aa.to_device(X), [9])}
    box["p"]()

    def drop():
        box.clear()
        gc.collect()
    t = threading.Thread(target=contextvars.copy_context().run, args=(drop,))
    t.start()
    t.join()
    aa.synchronize()
    assert sim.live("executors") == 0


def test_threads_share_a_plan(backend):
    p = aa.plan(aa.upsample_nearest_exact1d, X, [9])
    expected = {i: aa.upsample_nearest_exact1d(X + i, [9]) for i in range(6)}
    failures = []

    def work(i):
        try:
            for _ in range(20):
                r = p(X + i, [9]) if i % 2 else p(aa.to_device(X + i), [9]).numpy()
                np.testing.assert_array_equal(r, expected[i])
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(work, i)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]
    p.close()


def test_the_max_pool_pair_is_never_made_repeatable(npu, sim, monkeypatch):
    """Their op_api gives the kernel a raw copy of the mask's address that the address setters
    cannot rebind: no repeatable executor is requested (so none can silently read an old
    mask); each run is an ordinary call, and the reason says why."""
    from ascend_aclnn.cann.loader import get_cann
    calls = []
    real = get_cann().function("aclSetAclOpExecutorRepeatable")
    monkeypatch.setitem(get_cann()._functions, "aclSetAclOpExecutorRepeatable",
                        lambda ex: calls.append(ex) or real(ex))
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    out, mask = aa.max_pool2d_with_mask(x, [2, 2], [2, 2], [0, 0], [1, 1])
    for fn_, args in ((aa.max_pool2d_with_mask, (x, [2, 2], [2, 2], [0, 0], [1, 1])),
                      (aa.max_pool2d_with_mask_backward, (out, x, mask, [2, 2], [2, 2], [0, 0], [1, 1]))):
        with aa.plan(fn_, *args) as p:
            assert not p.repeatable and "raw copy of the mask's address" in p.fallback_reason
            assert_identical(p(), fn_(*args))
    assert calls == []


def test_fallback_when_the_executor_cannot_repeat(npu, sim, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclSetAclOpExecutorRepeatable:1:561103")
    p = aa.plan(aa.upsample_nearest_exact1d, X, [9])
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    assert p.repeatable is False
    assert "aclSetAclOpExecutorRepeatable" in p.fallback_reason and "561103" in p.fallback_reason
    assert "ordinary calls" in repr(p)
    assert sim.live("executors") == 0  # the unrun executor was destroyed
    np.testing.assert_array_equal(p(), aa.upsample_nearest_exact1d(X, [9]))
    y = p(aa.to_device(X + 1), [9])
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d(X + 1, [9]))
    with pytest.raises(aa.PlanMismatchError):
        p(X, [8])
    p.close()


def test_phase2_failure_leaves_the_plan_usable(npu, monkeypatch):
    p = aa.plan(aa.upsample_nearest_exact1d, X, [9])
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1d:1:361001")
    with pytest.raises(aa.AclnnError) as info:
        p()
    assert info.value.status == 361001
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    np.testing.assert_array_equal(p(), aa.upsample_nearest_exact1d(X, [9]))  # repeatable: not consumed
    p.close()


def test_freed_device_array_is_refused(npu):
    d = aa.to_device(X)
    p = aa.plan(aa.upsample_nearest_exact1d, d, [9])
    d.free()
    with pytest.raises(ValueError, match="freed"):
        p()
    p.close()


def test_plan_alive_at_exit_is_silent(sim):
    code = textwrap.dedent("""
        import numpy as np, ascend_aclnn as aa
        x = np.ones((1, 2, 3), np.float32)
        p = aa.plan(aa.upsample_nearest_exact1d, aa.to_device(x), [5])
        y = p()                      # queued, never synchronised
        q = aa.plan(aa.upsample_nearest_exact1d, x, [7])
        q()
        print("ok", p.repeatable, q.repeatable)
    """)
    result = run_python(code, sim)
    assert result.returncode == 0, result.stderr
    assert "ok True True" in result.stdout and result.stderr == ""


def test_a_loop_of_repeated_arguments_is_checked_every_run(npu):
    """A plan run remembers its last arguments to skip the key when a loop passes the same
    DeviceArrays and equal int lists; a list changed in place, a float where ints go, another
    array or a freed one must still be caught as on the first run."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    d, o = aa.to_device(x), aa.empty((2, 3, 9), np.float32)
    with aa.plan(aa.upsample_nearest_exact1d, d, [9], out=o) as p:
        sizes = [9]
        for _ in range(3):
            assert p(d, sizes, out=o) is o
        np.testing.assert_array_equal(o.numpy(), aa.upsample_nearest_exact1d(x, [9]))
        sizes[0] = 10  # the same list object, now another size
        with pytest.raises(aa.PlanMismatchError, match="output_size"):
            p(d, sizes, out=o)
        assert p(d, [9], out=o) is o
        with pytest.raises(aa.AclnnParamInvalidError, match="output_size"):
            p(d, [9.0], out=o)
        assert p(d, (9,), out=o) is o  # a tuple is its own key, matched like the list
        d2 = aa.to_device(x + 1)
        p(d2, [9], out=o)
        np.testing.assert_array_equal(o.numpy(), aa.upsample_nearest_exact1d(x + 1, [9]))
        assert p(d2, [9], out=o) is o
        d2.free()
        with pytest.raises(ValueError, match="input"):
            p(d2, [9], out=o)
        o2 = aa.empty((2, 3, 9), np.float32)
        assert p(d, [9], out=o2) is o2
        np.testing.assert_array_equal(o2.numpy(), aa.upsample_nearest_exact1d(x, [9]))


# ---------------------------------------------------------------------------------------------
# an input declared non-const (issue 26): rebound at its place among all tensor parameters
# ---------------------------------------------------------------------------------------------

NONCONST = Path(__file__).resolve().parent / "fixtures" / "headers" / "nonconst"


@pytest.fixture
def nonconst_add():
    from ascend_aclnn import aclnn
    from ascend_aclnn.cann import headers
    aclnn.add_headers(NONCONST)
    yield aclnn.Add
    headers.reset()
    aclnn._operators.clear()


def test_an_input_declared_non_const_is_rebound_where_it_is(npu, nonconst_add):
    """``other`` is an input the header declares non-const, so the binding counts it as
    written: input 0 (self), then other and out. The address setters must not be told it is
    output 0 (that is out's place: the simulator refuses it, 161002; a generated operator
    would rebind out's address): each slot is rebound by its place among all the tensors."""
    add = nonconst_add
    assert [(p.name, p.is_output) for p in add.prototype.params] == [("self", False), ("other", True),
                                                                     ("alpha", False), ("out", True)]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    d, e, o = aa.to_device(x), aa.to_device(x + 1), aa.empty((2, 3))
    with aa.plan(add, d, e, 2.0, o) as p:
        assert p.repeatable, p.fallback_reason
        assert p()[1] is o and np.array_equal(o.numpy(), x + 2 * (x + 1))
        for k in range(3):  # every slot at a new address each time
            d2, e2, o2 = aa.to_device(x * k), aa.to_device(x + k), aa.empty((2, 3))
            got = p(d2, e2, 2.0, o2)
            assert got[0] is e2 and got[1] is o2
            assert np.array_equal(o2.numpy(), x * k + 2 * (x + k)) and np.array_equal(e2.numpy(), x + k)
        e3, o3 = np.full((2, 3), 3, np.float32), np.empty((2, 3), np.float32)  # NumPy: the plan's own buffers
        got = p(x, e3, 2.0, o3)
        assert got[0] is e3 and got[1] is o3 and np.array_equal(o3, x + 6) and np.array_equal(e3, np.full((2, 3), 3))


def test_raw_plans_rebind_every_slot_through_aclSetTensorAddr(npu, nonconst_add, monkeypatch):
    """Only the slots whose address changed, each at its C position among the tensors."""
    from ascend_aclnn.cann.loader import get_cann
    calls = []
    functions = get_cann()._functions
    for name in ("aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr"):
        real = get_cann().function(name)
        monkeypatch.setitem(functions, name, lambda *a, real=real, name=name: calls.append((name, a[1])) or real(*a))
    x = np.ones((2, 3), np.float32)
    d, e, o = aa.to_device(x), aa.to_device(x), aa.empty((2, 3))
    with aa.plan(nonconst_add, d, e, 1.0, o) as p:
        p(d, e, 1.0, o)
        assert calls == []
        e2 = aa.to_device(x)
        p(d, e2, 1.0, o)
        assert calls == [("aclSetTensorAddr", 1)]
        calls.clear()
        p(aa.to_device(x), e2, 1.0, aa.empty((2, 3)))
        assert calls == [("aclSetTensorAddr", 0), ("aclSetTensorAddr", 2)]
