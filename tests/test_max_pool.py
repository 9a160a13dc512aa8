"""MaxPool2dWithMask specifics that the generic op_db suite does not cover: the mask's
bytes against an independently computed argmax, the PyTorch-index helpers, the
backward as a scatter-add, the simulator's fidelity (it leaves the tail unwritten),
bad masks at kernel time, fault injection, and the split library layout.

Expected values come from tests/op_db/max_pool.py's brute force (every window offset
stacked, np.argmax) and hand-written byte layouts, never from the code under test.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import bfloat16
from ascend_aclnn.backends.npu import launch as npu_backend
from ascend_aclnn.ops import REGISTRY
from conftest import LAYOUT, run_python, shared_build
from op_db.max_pool import CONFIGS, brute_force, mask_bytes, out_len, pair

DTYPES = [np.float32, np.float16, bfloat16]
POOLING = [(shape, k, s, p, ceil, ties) for shape, k, s, p, ceil, ties in CONFIGS
           if pair(k) != (1, 1) and shape[0] != 0]


def _args(k, s, p):
    kernel, padding = pair(k), pair(p)
    return kernel, (pair(s) if s else kernel), padding


def _input(shape, dtype, rng, ties=False):
    if ties:
        return rng.integers(0, 3, shape).astype(np.float32).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def _prefix(mask, count):
    return np.asarray(mask).reshape(-1).view(np.uint8)[:4 * count].view("<i4")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("config", POOLING, ids=lambda c: f"{c[0]}-k{c[1]}-s{c[2]}-p{c[3]}-ceil{c[4]}")
def test_mask_prefix_is_the_flat_argmax_and_the_tail_is_zero(config, dtype, backend):
    shape, k, s, p, ceil, ties = config
    kernel, stride, padding = _args(k, s, p)
    x = _input(shape, dtype, np.random.default_rng(11), ties)
    out, mask = aa.max_pool2d_with_mask(x, k, s, p, [1, 1], ceil)
    want_out, want_idx = brute_force(x, kernel, stride, padding, ceil)
    assert out.dtype == np.dtype(dtype) and out.shape == want_out.shape
    np.testing.assert_array_equal(out.astype(np.float32), want_out)
    ho, wo = want_out.shape[-2:]
    assert mask.dtype == np.int8
    assert mask.shape == shape[:-2] + (kernel[0] * kernel[1], (math.ceil(ho * wo / 16) + 1) * 32)
    np.testing.assert_array_equal(_prefix(mask, want_idx.size), want_idx.reshape(-1))
    assert not mask.reshape(-1).view(np.uint8)[4 * want_idx.size:].any(), "the tail must be zero"
    np.testing.assert_array_equal(mask, mask_bytes(want_idx, kernel))


def test_one_by_one_kernel_writes_the_npus_bitmask(backend):
    """(2, 17, 6, 5), k=1, s=(1, 2), ceil: Ho*Wo = 6*3 = 18 positions, two groups of 16
    channels per image: rows 0-3 of the mask (N*ceil(C/16) = 4) start with
    ceil(18/16)*32 = 64 bytes of 0xFF."""
    x = _input((2, 17, 6, 5), np.float32, np.random.default_rng(2))
    out, mask = aa.max_pool2d_with_mask(x, [1], [1, 2], [0], [1], True)
    np.testing.assert_array_equal(out, x[..., ::2])
    assert mask.shape == (2, 17, 1, (2 + 1) * 32)
    rows = mask.reshape(-1, 96)
    assert (rows[:4, :64] == -1).all() and not rows[:4, 64:].any() and not rows[4:].any()
    with pytest.raises(ValueError, match="1x1 kernel"):
        aa.mask_to_indices(mask, out.shape)


def test_stride_conventions(backend):
    """An empty stride is the kernel; length-1 arrays apply to both axes."""
    x = _input((2, 3, 10, 9), np.float32, np.random.default_rng(3))
    full = aa.max_pool2d_with_mask(x, [3, 3], [3, 3], [1, 1], [1, 1], False)
    for args in (([3], [], [1], [1]), ([3, 3], [], [1, 1], [1, 1]), ([3], [3], [1], [1])):
        for a, b in zip(aa.max_pool2d_with_mask(x, *args, False), full):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("size,k,s,p", [(h, k, s, p) for h in (1, 2, 5, 6, 7, 10) for k in (1, 2, 3, 4)
                                         for s in (1, 2, 3) for p in range(k // 2 + 1) if h + 2 * p >= k])
def test_ceil_mode_sizes_and_the_last_window(size, k, s, p, numpy_backend):
    """Output size against the independent formula, and ceil mode's correction: the last
    window always starts inside the input or its left padding, never in the right one."""
    x = np.arange(size, dtype=np.float32).reshape(1, 1, 1, size)
    for ceil in (False, True):
        out, mask = aa.max_pool2d_with_mask(x, [1, k], [1, s], [0, p], [1], ceil)
        wo = out_len(size, k, s, p, ceil)
        assert out.shape == (1, 1, 1, wo)
        assert (wo - 1) * s - p < size
        if k > 1:  # increasing input: each window's max is its last in-bounds position
            last = np.minimum(np.arange(wo) * s - p + k - 1, size - 1)
            np.testing.assert_array_equal(_prefix(mask, wo), last)
    assert out_len(size, k, s, p, True) - out_len(size, k, s, p, False) in (0, 1)


def test_helpers_round_trip_and_match_pytorch_indices():
    rng = np.random.default_rng(4)
    for shape, k, s, p, ceil, ties in POOLING:
        kernel, stride, padding = _args(k, s, p)
        x = _input(shape, np.float32, rng, ties)
        _, torch_indices = brute_force(x, kernel, stride, padding, ceil)  # what torch returns
        mask = aa.indices_to_mask(torch_indices, k)
        np.testing.assert_array_equal(mask, mask_bytes(torch_indices, kernel))
        back = aa.mask_to_indices(mask, torch_indices.shape)
        assert back.dtype == np.int64
        np.testing.assert_array_equal(back, torch_indices)
        with aa.use_backend("numpy"):
            out, fwd_mask = aa.max_pool2d_with_mask(x, k, s, p, [1], ceil)
        np.testing.assert_array_equal(aa.mask_to_indices(fwd_mask, out.shape), torch_indices)
        np.testing.assert_array_equal(aa.indices_to_mask(aa.mask_to_indices(fwd_mask, out.shape), k), fwd_mask)


def test_helpers_by_hand():
    # torch.max_pool2d_with_indices of [[1, 2], [3, 4]] with k=2 gives index 3 (value 4).
    idx = np.array([[[[3]]]])
    mask = aa.indices_to_mask(idx, [2, 2])
    assert mask.shape == (1, 1, 4, 64)
    assert list(mask.reshape(-1)[:8]) == [3, 0, 0, 0, 0, 0, 0, 0] and not mask.reshape(-1)[4:].any()
    big = aa.indices_to_mask(np.array([[[70000]]]), [3])  # 3-D, 70000 = 0x00011170
    assert big.shape == (1, 9, 64)
    assert list(big.reshape(-1).view(np.uint8)[:4]) == [0x70, 0x11, 0x01, 0x00]
    assert aa.mask_to_indices(big, (1, 1, 1)).tolist() == [[[70000]]]


def test_helper_errors():
    mask = aa.indices_to_mask(np.zeros((1, 2, 3, 3), np.int64), [3])
    with pytest.raises(ValueError, match="int8"):
        aa.mask_to_indices(mask.view(np.uint8), (1, 2, 3, 3))
    with pytest.raises(ValueError, match="has shape"):
        aa.mask_to_indices(mask, (1, 2, 5, 5))
    with pytest.raises(ValueError, match="output's shape"):
        aa.mask_to_indices(mask, (2, 3))
    with pytest.raises(ValueError, match=r"\[0, 2\*\*31\)"):
        aa.indices_to_mask(np.full((1, 1, 2, 2), -1), [2])
    with pytest.raises(ValueError, match="integer indices"):
        aa.indices_to_mask(np.zeros((1, 1, 2, 2)), [2])
    with pytest.raises(ValueError, match="kernel_size"):
        aa.indices_to_mask(np.zeros((1, 1, 2, 2), np.int64), [2, 2, 2])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_backward_is_a_scatter_add_through_the_indices(dtype, backend):
    """grad_input[n, c].flat[idx] += grad_output, checked against a float64 bincount per
    plane, rounded once to the dtype (overlapping 3x3/1 windows: up to 9 terms per input)."""
    rng = np.random.default_rng(5)
    for shape, k, s, p, ceil in [((2, 3, 9, 8), [3], [1], [1], False), ((3, 7, 6), [2, 3], [1, 2], [1], True),
                                 ((1, 2, 11, 11), [4], [3], [2], True)]:
        kernel, stride, padding = _args(k, s, p)
        x = _input(shape, dtype, rng, ties=True)
        _, idx = brute_force(x, kernel, stride, padding, ceil)
        g = _input(idx.shape, dtype, rng)
        gi = aa.max_pool2d_with_mask_backward(g, x, mask_bytes(idx, kernel), k, s, p, [1], ceil)
        assert gi.dtype == np.dtype(dtype) and gi.shape == x.shape
        h, w = shape[-2:]
        want = np.stack([np.bincount(i.reshape(-1), weights=gg.reshape(-1), minlength=h * w)
                         for i, gg in zip(idx.reshape(-1, idx.shape[-2] * idx.shape[-1]),
                                          g.astype(np.float64).reshape(-1, idx.shape[-2] * idx.shape[-1]))])
        want = want.reshape(shape).astype(dtype)  # summed exactly enough, rounded once
        tol = {np.dtype(np.float32): 1e-6, np.dtype(np.float16): 2**-10, bfloat16: 2**-7}[np.dtype(dtype)]
        np.testing.assert_allclose(gi.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_device_chaining_keeps_the_mask_on_the_device(npu):
    x = _input((2, 3, 9, 8), np.float32, np.random.default_rng(6))
    dx = aa.to_device(x)
    out, mask = aa.max_pool2d_with_mask(dx, [3], [2], [1], [1], False)
    assert isinstance(out, aa.DeviceArray) and isinstance(mask, aa.DeviceArray)
    assert mask.backend == "npu" and mask.dtype == np.int8
    g = aa.to_device(np.ones(out.shape, np.float32))
    gi = aa.max_pool2d_with_mask_backward(g, dx, mask, [3], [2], [1], [1], False)
    assert isinstance(gi, aa.DeviceArray)
    _, idx = brute_force(x, (3, 3), (2, 2), (1, 1), False)
    want = np.zeros(x.size)
    np.add.at(want, (idx + np.arange(6).reshape(2, 3, 1, 1) * 72).reshape(-1), 1.0)
    np.testing.assert_array_equal(gi.numpy(), want.reshape(x.shape).astype(np.float32))
    np.testing.assert_array_equal(aa.mask_to_indices(mask, out.shape), idx)  # DeviceArrays convert


def test_binding_zero_fills_a_dirty_device_mask(npu):
    """The NPU never writes the tail: the binding clears it first, also in a given out=."""
    x = _input((1, 2, 6, 6), np.float32, np.random.default_rng(8))
    dirty = aa.to_device(np.full((1, 2, 9, 64), 5, np.int8))
    _, mask = aa.max_pool2d_with_mask(x, [3], [2], [1], [1], False, out=(None, dirty))
    assert mask is dirty
    assert not mask.numpy().reshape(-1)[4 * 18:].any()


def test_simulator_leaves_the_tail_unwritten(npu):
    """Fidelity: run the operator without the binding's zero fill. Fresh simulated device
    memory holds 0xFF, and the kernel writes only the int32 prefix."""
    spec = REGISTRY["max_pool2d_with_mask"]
    raw = dataclasses.replace(spec, outputs=(spec.outputs[0], dataclasses.replace(spec.outputs[1], zero_fill=False)))
    x = _input((1, 2, 6, 6), np.float32, np.random.default_rng(9))
    a = raw.bind((x, [3], [2], [1], [1], False), {})
    _, mask = npu_backend.run(raw, a)
    _, idx = brute_force(x, (3, 3), (2, 2), (1, 1), False)
    np.testing.assert_array_equal(_prefix(mask, idx.size), idx.reshape(-1))
    assert (mask.reshape(-1)[4 * idx.size:] == -1).all(), "the simulator must not write the tail"


def test_a_mask_naming_positions_outside_the_input_fails_when_the_kernel_runs(backend):
    x = np.zeros((1, 1, 4, 4), np.float32)
    g = np.ones((1, 1, 2, 2), np.float32)
    for bad in (16, -1):
        mask = mask_bytes(np.array([[[[0, 1], [bad, 2]]]]), (2, 2))
        # The same error on both backends (the long fuzz found them apart): the kernel faults
        # and the sync reports it; the numpy backend says why, the simulator through CANN's text.
        why = f"index {bad}, outside the 4x4 input plane" if backend == "numpy" else f"mask value {bad} .* outside"
        with pytest.raises(aa.errors.AclRtAicoreExceptionError, match=why) as info:
            aa.max_pool2d_with_mask_backward(g, x, mask, [2], [2], [0], [1], False)
        assert (info.value.status, info.value.api) == (507015, "aclrtSynchronizeStream")
        d = aa.max_pool2d_with_mask_backward(aa.to_device(g), x, mask, [2], [2], [0], [1], False) \
            if backend == "npu" else None
        if d is not None:  # device-resident: the fault surfaces when the result is read
            with pytest.raises(aa.errors.AclRtAicoreExceptionError):
                d.numpy()
    # the next call still works
    good = mask_bytes(np.array([[[[0, 3], [8, 15]]]]), (2, 2))
    gi = aa.max_pool2d_with_mask_backward(g, x, good, [2], [2], [0], [1], False)
    assert gi.reshape(-1)[[0, 3, 8, 15]].tolist() == [1, 1, 1, 1] and gi.sum() == 4


def test_nan_and_minus_inf_inputs_do_not_crash(backend):
    """Unsupported on the NPU; the reference (and the simulator) return PyTorch's CPU
    results: every window of an all-NaN input gives NaN at its last in-bounds position,
    of an all -inf input -inf at its first."""
    h, w = 9, 8
    for fill, pick_last in ((np.nan, True), (-np.inf, False)):
        x = np.full((2, 3, h, w), fill, np.float32)
        out, mask = aa.max_pool2d_with_mask(x, [3], [2], [1], [1], True)
        ho, wo = out.shape[-2:]
        assert (np.isnan(out) if pick_last else out == -np.inf).all()
        oh, ow = np.meshgrid(np.arange(ho), np.arange(wo), indexing="ij")
        if pick_last:
            ih, iw = np.minimum(oh * 2 - 1 + 2, h - 1), np.minimum(ow * 2 - 1 + 2, w - 1)
        else:
            ih, iw = np.maximum(oh * 2 - 1, 0), np.maximum(ow * 2 - 1, 0)
        want = np.broadcast_to(ih * w + iw, out.shape)
        np.testing.assert_array_equal(aa.mask_to_indices(mask, out.shape), want)


def test_fault_injection_on_both_phases(npu, monkeypatch):
    x = _input((1, 2, 6, 6), np.float32, np.random.default_rng(10))
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnMaxPool2dWithMaskGetWorkspaceSize:1:561103")
    with pytest.raises(aa.AclnnError) as info:
        aa.max_pool2d_with_mask(x, [3], [2], [1], [1], False)
    assert info.value.status == 561103
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnMaxPool2dWithMaskBackward:1:561002")
    out, mask = aa.max_pool2d_with_mask(x, [3], [2], [1], [1], False)
    with pytest.raises(aa.AclnnError) as info:
        aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, [3], [2], [1], [1], False)
    assert info.value.status == 561002 and info.value.api == "aclnnMaxPool2dWithMaskBackward"
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, [3], [2], [1], [1], False)


def test_operators_resolve_from_the_nn_library(npu):
    from ascend_aclnn.cann.loader import get_cann
    aa.max_pool2d_with_mask(np.ones((1, 1, 4, 4), np.float32), [2], [2], [0], [1], False)
    source = get_cann().operator_sources["aclnnMaxPool2dWithMask"]
    assert source.endswith({"cann8": "/libopapi.so", "split": "/libopapi_nn.so"}[LAYOUT])


def test_split_layout_runs_both_operators_from_libopapi_nn(tmp_path, sim):
    """CANN >= 8.5 puts pooling in libopapi_nn.so: build that layout and run there."""
    prefix = shared_build("split").parent
    code = """
import numpy as np, ascend_aclnn as aa
from ascend_aclnn.cann.loader import get_cann
aa.set_backend("npu")
x = np.arange(12, dtype=np.float32).reshape(1, 1, 4, 3)
out, mask = aa.max_pool2d_with_mask(x, [2], [2], [0], [1], False)
gi = aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, [2], [2], [0], [1], False)
src = get_cann().operator_sources
print(out.ravel().tolist(), aa.mask_to_indices(mask, out.shape).ravel().tolist(), gi.ravel().tolist())
print(sorted({v.rsplit('/', 1)[1] for k, v in src.items() if 'MaxPool' in k}))
"""
    result = run_python(code, ASCEND_HOME_PATH=str(prefix))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # windows rows 0-1 / 2-3, cols 0-1: maxima 4 (index 4) and 10 (index 10)
    assert lines[0] == "[4.0, 10.0] [4, 10] " + str([0.0] * 4 + [1.0] + [0.0] * 5 + [1.0, 0.0])
    assert lines[1] == "['libopapi_nn.so']"
