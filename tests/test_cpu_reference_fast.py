"""A raw call's CPU reference planned per signature (cpu_reference/fast.py): the planned
calls compute what the general path computes, write the caller's arrays without a copy of
the result, and leave everything they do not cover to the general path."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.cpu_reference import _torch, runner
from ascend_aclnn.errors import AclnnError
from ascend_aclnn.ops import checked_calls
from ascend_aclnn.tensors import bfloat16

torch = pytest.importorskip("torch")  # the table's rows run on PyTorch (an optional extra)

pytestmark = pytest.mark.usefixtures("numpy_backend")
RNG = np.random.default_rng(40)
f32, f16 = np.float32, np.float16


def _arrays(shape, dtype=f32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture
def writes(monkeypatch):
    """Counts the results cast or copied into a caller's array after the reference computed
    them (runner._deliver's _torch.write): what a call writing aten's out= makes none of."""
    count = [0]
    real = _torch.write

    def counting(dst, result):
        count[0] += 1
        return real(dst, result)

    monkeypatch.setattr(_torch, "write", counting)
    return count


def _calls(shape):
    a, b = _arrays(shape), _arrays(shape)
    out, red = np.empty(shape, f32), np.empty(shape[:1], f32)
    m1, m2, mo = _arrays((16, 8)), _arrays((8, 12)), np.empty((16, 12), f32)
    return {
        "Add": (aa.aclnn.Add, (a, b, 1.5, out), a + np.float32(1.5) * b),
        "Mul": (aa.aclnn.Mul, (a, b, out), a * b),
        "Softmax": (aa.aclnn.Softmax, (a, -1, out),
                    np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)),
        "ReduceSum": (aa.aclnn.ReduceSum, (a, [-1], False, f32, red), a.sum(-1)),
        "Mm": (aa.aclnn.Mm, (m1, m2, mo, 0), m1 @ m2),
    }


@pytest.mark.parametrize("name", ["Add", "Mul", "Softmax", "ReduceSum", "Mm"])
def test_a_repeated_signature_writes_aten_results_into_the_callers_array_directly(name, writes):
    op, args, want = _calls((10, 100))[name]
    for _ in range(3):  # the second run through the general path plans the signature
        op(*args)
    out = args[-2] if name == "Mm" else args[-1]
    out[...] = np.nan
    before = writes[0]
    got = op(*args)
    assert got is out
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert writes[0] == before, "the result was computed elsewhere and copied into out"


def test_a_plan_of_a_raw_operator_runs_the_planned_signature(writes):
    a, b, out = _arrays((4, 5)), _arrays((4, 5)), np.empty((4, 5), f32)
    p = aa.plan(aa.aclnn.Add, a, b, 1.0, out)
    try:
        for _ in range(3):
            p()
        before = writes[0]
        out[...] = 0
        assert p() is out
        np.testing.assert_array_equal(out, a + b)
        b2 = _arrays((4, 5))
        assert p(a, b2, 1.0, out) is out
        np.testing.assert_array_equal(out, a + b2)
        assert writes[0] == before
    finally:
        p.close()


def _twice(op, make):
    """The result of a call through the general path (a fresh signature cache) and of the
    same call once planned, on equal fresh arguments each time."""
    checked_calls.clear()
    first = op(*make())
    op(*make())
    planned = op(*make())
    return first, planned


def _same(first, planned):
    for f, p in zip(first if isinstance(first, tuple) else (first,), planned if isinstance(planned, tuple) else (planned,)):
        assert f.dtype == p.dtype and f.shape == p.shape
        np.testing.assert_array_equal(f.view(np.uint8), p.view(np.uint8))  # bit for bit


def _args(*arrays, then=()):
    return lambda: tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in arrays) + tuple(then)


@pytest.mark.parametrize("case", [
    "float16 out of float32 inputs", "bfloat16", "broadcast", "transposed input", "reversed input",
    "out is an input", "int32", "float16 softmax"])
def test_a_planned_call_computes_what_the_general_path_computes(case):
    a, b = _arrays((6, 7)), _arrays((6, 7))
    if case == "float16 out of float32 inputs":
        op, make = aa.aclnn.Add, _args(a, b, 0.5, np.empty((6, 7), f16))
    elif case == "bfloat16":
        op, make = aa.aclnn.Add, _args(a.astype(bfloat16), b.astype(bfloat16), 1.0, np.empty((6, 7), bfloat16))
    elif case == "broadcast":
        op, make = aa.aclnn.Mul, _args(a, b[:1], np.empty((6, 7), f32))
    elif case == "transposed input":
        op, make = aa.aclnn.Mul, lambda: (a.T, b.T.copy(), np.empty((7, 6), f32))
    elif case == "reversed input":  # a negative stride: torch's view cannot take it
        op, make = aa.aclnn.Add, lambda: (a[::-1], b, 1.0, np.empty((6, 7), f32))
    elif case == "out is an input":
        def make():
            x = a.copy()
            return x, b, 2.0, x
        op = aa.aclnn.Add
    elif case == "int32":
        op, make = aa.aclnn.Add, _args((a * 10).astype(np.int32), (b * 10).astype(np.int32), 3,
                                       np.empty((6, 7), np.int32))
    else:
        op, make = aa.aclnn.Softmax, _args(a.astype(f16), -1, np.empty((6, 7), f16))
    first, planned = _twice(op, make)
    _same(first, planned)
    if case == "out is an input":
        np.testing.assert_allclose(planned, a + 2 * b, rtol=1e-6)


def test_a_refusal_by_the_values_is_the_general_paths_and_leaves_out_alone():
    """index_select refuses an index out of range only when it reads it: the signature is
    planned on valid indices, and the planned call refuses as an unplanned one does."""
    x = _arrays((5, 3))
    good, bad = np.array([0, 4, 2], np.int64), np.array([0, 9, 2], np.int64)
    out = np.empty((3, 3), f32)
    for _ in range(3):
        aa.aclnn.IndexSelect(x, 0, good, out)
    np.testing.assert_array_equal(out, x[[0, 4, 2]])
    out[...] = 7
    with pytest.raises(AclnnError) as planned:
        aa.aclnn.IndexSelect(x, 0, bad, out)
    np.testing.assert_array_equal(out, 7)
    checked_calls.clear()
    with pytest.raises(AclnnError) as general:
        aa.aclnn.IndexSelect(x, 0, bad, out)
    assert (planned.value.status, str(planned.value)) == (general.value.status, str(general.value))


def test_a_registration_makes_a_planned_signature_run_the_new_reference():
    a, b, out = _arrays((3, 4)), _arrays((3, 4)), np.empty((3, 4), f32)
    for _ in range(3):
        aa.aclnn.Add(a, b, 1.0, out)
    try:
        aa.aclnn.register_reference("aclnnAdd", lambda self, other, alpha: self - other)
        aa.aclnn.Add(a, b, 1.0, out)
        np.testing.assert_array_equal(out, a - b)
    finally:
        aa.aclnn.register_reference("aclnnAdd", None)
    for _ in range(3):
        aa.aclnn.Add(a, b, 1.0, out)
        np.testing.assert_array_equal(out, a + b)


def test_capturing_records_a_planned_signatures_results():
    a, b, out = _arrays((3, 4)), _arrays((3, 4)), np.empty((3, 4), f32)
    for _ in range(3):
        aa.aclnn.Mul(a, b, out)
    with runner.capturing() as found:
        aa.aclnn.Mul(a, b, out)
    assert list(found) == [2]
    np.testing.assert_array_equal(found[2], a * b)


def test_device_arrays_of_a_planned_signature_and_a_private_format_among_them():
    """A DeviceArray's binding key is its shape and dtype: a FRACTAL_NZ one shares the key of
    an ND one, and is decoded by the general path."""
    m1, m2 = _arrays((32, 16), f16), _arrays((16, 32), f16)
    want = (m1.astype(f32) @ m2.astype(f32)).astype(f16)
    nd = aa.to_device(m2)
    out = aa.empty((32, 32), f16)
    for _ in range(3):
        aa.aclnn.Mm(m1, nd, out, 0)
    np.testing.assert_allclose(out.numpy().astype(f32), want.astype(f32), rtol=2e-3, atol=2e-2)
    nz = aa.to_device(m2, "FRACTAL_NZ")
    out2 = aa.empty((32, 32), f16)
    aa.aclnn.Mm(m1, nz, out2, 0)
    np.testing.assert_array_equal(out2.numpy(), out.numpy())


def test_planned_calls_from_several_threads_each_get_their_own_result():
    errors: list[BaseException] = []
    base = _arrays((8, 9))
    for _ in range(3):
        aa.aclnn.Add(base, base, 1.0, np.empty((8, 9), f32))

    def work(k):
        try:
            with aa.use_backend("numpy"):
                a, b, out = base + k, base * k, np.empty((8, 9), f32)
                for _ in range(200):
                    aa.aclnn.Add(a, b, 1.0, out)
                    np.testing.assert_array_equal(out, a + b)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("name", ["Add", "Mul", "Softmax", "ReduceSum", "Mm", "Matmul"])
def test_a_planned_call_runs_the_aten_operators_the_general_path_runs(name):
    """A planned call may reach aten through torch's Python binding of the row's op and its
    out= form: the aten operators it dispatches are the general path's (by packet: add.out
    for add.Tensor), in the same order, but for the general path's copy into out."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Reached(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.packets = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket not in (torch.ops.aten.lift_fresh, torch.ops.aten.copy_):  # from_numpy; out
                self.packets.append(func.overloadpacket)
            return func(*args, **(kwargs or {}))

    m1, m2, mo = _arrays((16, 8)), _arrays((8, 12)), np.empty((16, 12), f32)
    op, args, _ = _calls((10, 100))[name] if name != "Matmul" else (aa.aclnn.Matmul, (m1, m2, mo, 0), None)
    checked_calls.clear()
    with Reached() as general:
        op(*args)
    op(*args)
    with Reached() as planned:
        op(*args)
    assert general.packets and planned.packets == general.packets


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_a_cast_into_a_float16_out_allocates_no_array_of_its_own(dtype):
    """aten's float64 (or int32) result into a float16 out: NumPy's cast, straight into out,
    rounding once; no float16 temporary to copy from. tracemalloc sees NumPy's buffers."""
    import tracemalloc
    n = 1 << 18
    a, b = (RNG.standard_normal(n) * 300).astype(dtype), (RNG.standard_normal(n) * 300).astype(dtype)
    out = np.empty(n, f16)
    for _ in range(3):
        aa.aclnn.Add(a, b, 1, out)
    want = (a.astype(np.float64) + b.astype(np.float64)).astype(f16)  # one rounding (exact sums)
    out[...] = 0
    tracemalloc.start()
    try:
        aa.aclnn.Add(a, b, 1, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, want)
    assert peak < out.nbytes // 2, f"{peak} bytes traced: a temporary of out's size"


def test_a_floating_call_refused_by_its_values_mid_run_refuses_as_an_unplanned_one():
    """binary_cross_entropy checks its input's values while it writes out (the documented trace
    a plan can leave: part of out written); the refusal itself is the general path's."""
    x, t = np.full((4, 100), 0.5, f32), np.full((4, 100), 0.25, f32)
    out = np.empty_like(x)
    for _ in range(3):
        aa.aclnn.BinaryCrossEntropy(x, t, None, 0, out)
    bad = x.copy()
    bad[-1, -1] = 2.0
    with pytest.raises(AclnnError) as planned:
        aa.aclnn.BinaryCrossEntropy(bad, t, None, 0, out)
    checked_calls.clear()
    with pytest.raises(AclnnError) as general:
        aa.aclnn.BinaryCrossEntropy(bad, t, None, 0, out)
    assert (planned.value.status, str(planned.value)) == (general.value.status, str(general.value))
    aa.aclnn.BinaryCrossEntropy(x, t, None, 0, out)
    np.testing.assert_allclose(out, -np.log(np.float32(0.5)), rtol=1e-6)


def _planned_add():
    a, b, out = _arrays((3, 4)), _arrays((3, 4)), np.empty((3, 4), f32)
    for _ in range(3):  # planned at the second run
        aa.aclnn.Add(a, b, 1.0, out)
    return a, b, out


def test_a_planned_signature_in_a_graph_capture_is_refused_as_an_unplanned_one():
    """A planned call skips the layers between the binding and the reference: what they
    refuse (host arrays in a capture) must still be refused, before anything is written."""
    a, b, out = _planned_add()
    out[...] = 7
    g = aa.Graph()
    try:
        with pytest.raises(AclnnError, match="NumPy inputs or outputs"):
            with aa.graph(g):
                aa.aclnn.Add(a, b, 1.0, out)
    finally:
        g.close()
    assert (out == 7).all()


def test_a_planned_signature_on_a_closed_current_stream_is_refused():
    a, b, out = _planned_add()
    s = aa.Stream()
    with aa.stream(s):
        s.close()
        out[...] = 7
        with pytest.raises(RuntimeError, match="closed"):
            aa.aclnn.Add(a, b, 1.0, out)
    assert (out == 7).all()


def test_a_freed_device_array_in_a_planned_signature_is_refused_by_name():
    a, out = _arrays((3, 4)), aa.empty((3, 4), f32)
    b = aa.to_device(_arrays((3, 4)))
    for _ in range(3):
        aa.aclnn.Add(a, b, 1.0, out)
    b.free()
    with pytest.raises(Exception, match="other"):  # the header's name of b
        aa.aclnn.Add(a, b, 1.0, out)


def test_a_plan_run_of_a_planned_signature_in_a_capture_is_refused():
    a, b, out = _arrays((3, 4)), _arrays((3, 4)), np.empty((3, 4), f32)
    p = aa.plan(aa.aclnn.Add, a, b, 1.0, out)
    g = aa.Graph()
    try:
        for _ in range(3):
            p()
        with pytest.raises(AclnnError, match="NumPy inputs or outputs"):
            with aa.graph(g):
                p()
    finally:
        g.close()
        p.close()


def test_a_composite_aten_op_is_called_through_torchs_binding_when_it_decomposes_alike():
    """matmul dispatches mm, not matmul: its binding is seen to reach the same aten calls as
    the overload (so a planned Matmul does not pay for torch.ops' argument parsing), while a
    binding that would reach another overload (torch.add with a Scalar second operand:
    add.Scalar rather than add.Tensor) is not taken for the overload."""
    from ascend_aclnn.cpu_reference import fast
    _torch.torch_module("the test")
    meta = [torch.empty((4, 3), device="meta"), torch.empty((3, 5), device="meta")]
    assert fast._fastest(torch.ops.aten.matmul.default, meta, {}) is torch._C._VariableFunctions.matmul
    assert fast._fastest(torch.ops.aten.matmul.out, meta, {"out": torch.empty((4, 5), device="meta")}) \
        is torch._C._VariableFunctions.matmul
    x = torch.empty((4, 3), device="meta")
    assert fast._fastest(torch.ops.aten.add.Tensor, [x, x], {"alpha": 2}) is torch._C._VariableFunctions.add
    assert fast._fastest(torch.ops.aten.add.Scalar, [x, 2.0], {}) is not torch._C._VariableFunctions.add
