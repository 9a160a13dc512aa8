"""PyTorch CPU tensors as operator arguments (issue 19, item 5). torch stays optional: this
module is skipped, with the reason, where it cannot be imported.

Rule under test: results come back in the kind of the inputs. A call given a torch tensor
(and no DeviceArray) returns torch tensors; an out= comes back as the very object given;
a DeviceArray anywhere keeps the results on the device. Conversions are NumPy views of the
tensors' memory (bfloat16 through an int16 view). requires_grad and non-CPU tensors are
refused with a one-line reason."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (CI installs torch CPU for these tests)")

import ascend_aclnn as aa  # noqa: E402
from ascend_aclnn.ops.pad import FORWARD_DTYPES  # noqa: E402
from ascend_aclnn.tensors import host_view  # noqa: E402

X = np.arange(30, dtype=np.float32).reshape(2, 3, 5)


def _torch_of(a: np.ndarray):
    if a.dtype == aa.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _numpy_of(t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(aa.bfloat16)
    return t.numpy()


def _detail(exc: BaseException) -> str:
    return str(exc).splitlines()[-1]


@pytest.mark.parametrize("dtype", FORWARD_DTYPES, ids=lambda d: aa.tensors.dtype_name(d))
def test_every_dtype_goes_in_and_comes_back_as_a_tensor(dtype, backend):
    x = (np.arange(2 * 3 * 4 * 5) % 100).reshape(2, 3, 4, 5).astype(dtype)
    want = aa.replication_pad2d(x, [1, 2, 0, 1])
    got = aa.replication_pad2d(_torch_of(x), [1, 2, 0, 1])
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
    np.testing.assert_array_equal(_numpy_of(got), want)
    assert _numpy_of(got).dtype == want.dtype


def test_float32_no_longer_comes_back_as_numpy(backend):
    y = aa.upsample_nearest_exact1d(torch.from_numpy(X), [8])
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d(X, [8]))


def test_bfloat16_is_viewed_without_a_copy():
    t = torch.randn(2, 3, 5).bfloat16()
    v = host_view(t)
    assert v.dtype == aa.bfloat16 and v.ctypes.data == t.data_ptr()
    np.testing.assert_array_equal(v.astype(np.float32), t.float().numpy())
    s = torch.randn(4, 6)[:, ::2]  # strided: still a view
    assert host_view(s).ctypes.data == s.data_ptr() and host_view(s).strides == (24, 8)


def test_several_outputs_come_back_as_tensors(backend):
    out, mask = aa.max_pool2d_with_mask(torch.randn(1, 2, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1])
    assert isinstance(out, torch.Tensor) and isinstance(mask, torch.Tensor) and mask.dtype == torch.int8
    dx = aa.max_pool2d_with_mask_backward(torch.ones_like(out), torch.randn(1, 2, 6, 6), mask,
                                          [2, 2], [2, 2], [0, 0], [1, 1])
    assert isinstance(dx, torch.Tensor)


@pytest.mark.parametrize("make_out", [
    lambda: torch.empty(2, 3, 8),
    lambda: torch.empty(8, 3, 2).permute(2, 1, 0),  # non-contiguous
    lambda: torch.empty(2, 3, 8, dtype=torch.bfloat16),
], ids=["contiguous", "permuted", "bfloat16"])
def test_out_is_written_in_place_and_returned_as_given(make_out, backend):
    out = make_out()
    x = torch.from_numpy(X).to(out.dtype)
    r = aa.upsample_nearest_exact1d(x, [8], out=out)
    assert r is out
    np.testing.assert_array_equal(_numpy_of(out).astype(np.float32),
                                  aa.upsample_nearest_exact1d(_numpy_of(x), [8]).astype(np.float32))


def test_a_numpy_input_with_a_torch_out_returns_the_tensor(backend):
    out = torch.empty(2, 3, 8)
    assert aa.upsample_nearest_exact1d(X, [8], out=out) is out


def test_a_device_array_keeps_results_on_the_device(backend):
    d = aa.to_device(torch.from_numpy(X))
    y = aa.upsample_nearest_exact1d_backward(d, [5], [2, 3, 5])
    assert isinstance(y, aa.DeviceArray)
    np.testing.assert_array_equal(y.numpy(), aa.upsample_nearest_exact1d_backward(X, [5], [2, 3, 5]))


def test_to_device_takes_every_tensor_dtype(backend):
    t = torch.randn(3, 4).bfloat16()
    d = aa.to_device(t)
    assert d.dtype == aa.bfloat16
    np.testing.assert_array_equal(d.numpy(), _numpy_of(t))


def test_requires_grad_is_refused_with_a_one_line_hint(backend):
    x = torch.randn(2, 3, 5, requires_grad=True)
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.upsample_nearest_exact1d(x, [8])
    detail = _detail(info.value)
    assert detail.startswith("  input: expected a tensor that does not require grad") and "x.detach()" in detail
    assert "tensor(" not in str(info.value)  # no dump of the values
    with pytest.raises(TypeError, match=r"array: .*x\.detach\(\)"):
        aa.to_device(x)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"out: expected a tensor that does not require grad"):
        aa.upsample_nearest_exact1d(X, [8], out=torch.empty(2, 3, 8, requires_grad=True))


def test_a_tensor_off_the_cpu_is_refused_with_a_one_line_reason(backend):
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.upsample_nearest_exact1d(torch.empty(2, 3, 5, device="meta"), [8])
    assert _detail(info.value) == "  input: expected a CPU tensor, got one on meta: this binding reads host memory " \
                                  "only; pass x.cpu()"


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")  # torch's own, making the complex32 tensor
def test_tensors_that_cannot_be_read_or_written_say_why(backend):
    cases = [
        (lambda: aa.upsample_nearest_exact1d(torch.randn(2, 3, 5).to_sparse(), [8]), "to_dense()"),
        (lambda: aa.replication_pad2d(torch.ones(1, 1, 2, 2, dtype=torch.complex32), [1, 1, 1, 1]),
         "torch.complex32 has no ACL data type"),
        (lambda: aa.upsample_nearest_exact1d(X, [8], out=torch.empty(2, 3, 1).expand(2, 3, 8)), "expanded"),
        (lambda: aa.replication_pad2d(np.ones((1, 1, 2, 2), np.complex64), [0, 0, 0, 0],
                                      out=torch.empty(1, 1, 2, 2, dtype=torch.complex64).conj()), "resolve_conj"),
    ]
    for attempt, words in cases:
        with pytest.raises(aa.AclnnParamInvalidError) as info:
            attempt()
        assert words in _detail(info.value)


def test_a_lazily_conjugated_input_is_read_with_its_values(backend):
    z = torch.complex(torch.randn(1, 1, 2, 3), torch.randn(1, 1, 2, 3))
    got = aa.replication_pad2d(z.conj(), [1, 0, 0, 1])
    np.testing.assert_array_equal(got.numpy(), aa.replication_pad2d(np.conj(z.numpy()), [1, 0, 0, 1]))


def test_a_tensor_in_the_wrong_place_is_described_not_dumped(backend):
    with pytest.raises(aa.AclnnParamInvalidError) as info:
        aa.upsample_nearest_exact1d(X, torch.tensor([8, 9]))
    assert "torch.Tensor of shape (2,) and dtype torch.int64 on cpu" in _detail(info.value)


def test_results_share_memory_with_numpy_and_read_with_from_dlpack(backend):
    y = aa.upsample_nearest_exact1d(torch.from_numpy(X), [8])
    np.testing.assert_array_equal(np.from_dlpack(y), y.numpy())
    yb = aa.upsample_nearest_exact1d(torch.from_numpy(X).bfloat16(), [8])
    assert torch.equal(torch.from_dlpack(yb), yb)


def test_the_mask_helpers_take_and_give_tensors(backend):
    x = torch.randn(2, 3, 8, 8)
    out, mask = aa.max_pool2d_with_mask(x, 3, 2, 1)
    idx = aa.mask_to_indices(mask, out.shape)  # a torch.Size is a shape
    want_out, want_idx = torch.nn.functional.max_pool2d_with_indices(x, 3, 2, 1)
    assert isinstance(idx, torch.Tensor) and idx.dtype == torch.int64
    assert torch.equal(idx, want_idx) and torch.equal(out, want_out)
    back = aa.indices_to_mask(want_idx, [3, 3])
    assert isinstance(back, torch.Tensor) and torch.equal(back, mask)
    with pytest.raises(TypeError, match=r"pass its \.shape"):
        aa.mask_to_indices(mask, out)
    with pytest.raises(aa.AclnnParamInvalidError, match=r"indices_to_mask\(indices, kernel_size\)"):
        aa.max_pool2d_with_mask_backward(torch.ones_like(out), x, want_idx, 3, 2, 1)


# Results in the caller's kind at every depth (issue 26, 7): a raw operator's written tensor
# list, of torch tensors, comes back as those tensors, as a single written tensor does.

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
def test_a_written_tensor_list_of_tensors_comes_back_as_those_tensors(npu, dtype):
    x = torch.arange(12).reshape(4, 3).to(dtype)
    parts = [torch.empty(2, 3, dtype=dtype), torch.empty(2, 3, dtype=dtype)]
    got = aa.aclnn.SplitTensor(x, 2, 0, parts)
    assert type(got) is list and len(got) == 2 and all(g is p for g, p in zip(got, parts))
    assert torch.equal(torch.cat(got), x)
    got = aa.aclnn.SplitTensor(_numpy_of(x), 2, 0, tuple(parts))  # a tuple given: the same objects back
    assert all(g is p for g, p in zip(got, parts))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_foreach_results_are_the_given_tensors(npu, dtype):
    xs = [torch.arange(6).reshape(2, 3).to(dtype), torch.ones(4, dtype=dtype)]
    outs = [torch.empty(2, 3, dtype=dtype), torch.empty(4, dtype=dtype)]
    got = aa.aclnn.ForeachMulScalarList(xs, [2.0, 3.0], outs)
    assert type(got) is list and all(g is o for g, o in zip(got, outs))
    assert torch.equal(got[0], xs[0] * 2) and torch.equal(got[1], xs[1] * 3)
    mixed = [np.empty((2, 3), _numpy_of(xs[0]).dtype), outs[1]]  # a NumPy item stays NumPy
    got = aa.aclnn.ForeachMulScalarList(xs, [2.0, 3.0], mixed)
    assert got[0] is mixed[0] and got[1] is outs[1]


def test_a_single_written_tensor_and_a_list_come_back_alike(npu):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = torch.empty(2, 3)
    assert aa.aclnn.Add(x, x, 1.0, out) is out
    op = aa.aclnn.operator("Add", outputs=("self", "out"))
    a = x.clone()
    got = op(a, x, 1.0, out)
    assert type(got) is tuple and got[0] is a and got[1] is out


def test_results_like_reaches_every_depth():
    """The rule itself, on any nesting of tuples and lists: a view of a given tensor becomes
    that tensor, a new NumPy result a torch tensor, anything else stays."""
    from ascend_aclnn.tensors import record_foreign, foreign_recorded, results_like
    given = [torch.zeros(2), torch.zeros(3, dtype=torch.bfloat16), torch.zeros(1)]
    token = record_foreign()
    views = [host_view(t, writable=True) for t in given]
    converted = foreign_recorded(token)
    new = np.arange(3, dtype=np.float32)
    d = object()
    got = results_like((views[0], [views[1], new, (views[2], d)], [[views[0]]]), converted)
    assert got[0] is given[0]
    assert type(got[1]) is list and got[1][0] is given[1]
    assert isinstance(got[1][1], torch.Tensor) and got[1][1].tolist() == [0.0, 1.0, 2.0]
    assert type(got[1][2]) is tuple and got[1][2][0] is given[2] and got[1][2][1] is d
    assert got[2][0][0] is given[0]
    assert results_like([views[1]], converted)[0] is given[1]


def test_a_numpy_out_beside_torch_inputs_comes_back_as_given(backend):
    out = np.empty((2, 3, 8), np.float32)
    assert aa.upsample_nearest_exact1d(torch.from_numpy(X), [8], out=out) is out
    np.testing.assert_array_equal(out, aa.upsample_nearest_exact1d(X, [8]))


def test_plans_give_results_in_the_kind_they_were_given(backend):
    """A plan made or run with torch tensors returns torch tensors, its out= and written
    arguments the very tensors given (a tensor list's too), as ordinary calls do."""
    x = torch.from_numpy(X)
    with aa.plan(aa.upsample_nearest_exact1d, x, [8]) as p:
        for got in (p(), p(x * 2, [8])):
            assert isinstance(got, torch.Tensor)
        np.testing.assert_array_equal(got.numpy(), aa.upsample_nearest_exact1d(X * 2, [8]))
        out = torch.empty(2, 3, 8)
        assert p(x, [8], out=out) is out
        assert isinstance(p(X, [8]), np.ndarray)  # a NumPy run of the same plan: NumPy
    out = torch.empty(2, 3, 8, dtype=torch.bfloat16)
    with aa.plan(aa.upsample_nearest_exact1d, x.bfloat16(), [8], out=out) as p:
        assert p() is out
        out2 = torch.empty(2, 3, 8, dtype=torch.bfloat16)
        assert p(x.bfloat16(), [8], out=out2) is out2


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_plans_of_raw_operators_return_the_given_tensors(npu, dtype):
    x = torch.arange(6).reshape(2, 3).to(dtype)
    out = torch.empty(2, 3, dtype=dtype)
    with aa.plan(aa.aclnn.Add, x, x, 1.0, out) as p:
        assert p() is out and p(x, x, 1.0, out) is out and torch.equal(out, 2 * x)
    parts = [torch.empty(1, 3, dtype=dtype), torch.empty(1, 3, dtype=dtype)]
    with aa.plan(aa.aclnn.SplitTensor, x, 1, 0, parts) as p:
        for got in (p(), p(x, 1, 0, parts)):
            assert type(got) is list and all(g is q for g, q in zip(got, parts))
        assert torch.equal(torch.cat(parts), x)
