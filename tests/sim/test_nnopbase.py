"""The simulated nnopbase (libnnopbase.so): tensors, arrays and scalars; executors,
their phase 2 and the address setters; failures at execution time; fault injection.

The operator these tests launch is aclnnUpsampleNearestExact1d(Backward), the smallest
(its own checks and numerics are in test_upsample.py). Expected values are written out
by hand from CANN's headers and documentation; nothing here is produced by the code
under test.
"""
from __future__ import annotations

import ctypes
from ctypes import byref, c_bool, c_float, c_int, c_int64, c_uint64, c_void_p

import numpy as np
import pytest

from . import sim_ctypes as sc
from .expected import ACL_SYMBOLS, NNOPBASE_SYMBOLS, OP_SYMBOLS

NCL, ND = sc.FMT_NCL, sc.FMT_ND
F32, F16, BF16 = sc.ACL_FLOAT, sc.ACL_FLOAT16, sc.ACL_BF16
f16_bits = sc.f16_bits


# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# nnopbase: tensors, arrays, scalars
# ---------------------------------------------------------------------------------------------

# element sizes from CANN's aclDataType list
DTYPE_SIZES = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1,
               16: 8, 17: 16, 27: 2}


@pytest.mark.parametrize("dtype,itemsize", sorted(DTYPE_SIZES.items()))
def test_tensor_element_sizes(rt, res, dtype, itemsize):
    d = res.dev(nbytes=6 * itemsize)
    t = rt.tensor_raw([2, 3], dtype, d, fmt=ND)
    assert t, rt.err()
    rt.ok(rt.aclDestroyTensor(t))
    assert not rt.tensor_raw([7], dtype, d, fmt=ND)           # one element too many
    assert f"overrun by {itemsize} bytes" in rt.err()


def _create_case(rt, res, case):
    d = res.dev(nbytes=64)          # 16 float32
    host = np.zeros(64, np.uint8)
    dims = (c_int64 * 3)(1, 1, 4)
    if case == "viewDims NULL":
        return rt.aclCreateTensor(None, 3, F32, None, 0, NCL, dims, 3, d)
    if case == "storageDims NULL":
        return rt.aclCreateTensor(dims, 3, F32, None, 0, NCL, None, 3, d)
    args = dict(shape=[1, 1, 4], dtype=F32, data=d)
    args.update({
        "dtype 99": dict(dtype=99),
        "dtype undefined": dict(dtype=-1),
        "dtype string": dict(dtype=sc.ACL_STRING),
        "format 99": dict(fmt=99),
        "format undefined": dict(fmt=sc.FMT_UNDEFINED),
        "negative dim": dict(shape=[1, -1, 4], storage=[4]),
        "negative stride": dict(strides=[4, 4, -1]),
        "negative offset": dict(offset=-1),
        "host pointer": dict(data=host.ctypes.data),
        "unaligned": dict(data=d + 16),
        "view overrun": dict(shape=[1, 1, 20], storage=[16]),
        "offset overrun": dict(shape=[1, 1, 16], offset=1, storage=[16]),
        "stride overrun": dict(shape=[1, 1, 9], strides=[9, 9, 2], storage=[16]),
        "storage overrun": dict(storage=[17]),
        "freed": dict(data="freed"),
    }[case])
    if args["data"] == "freed":
        args["data"] = rt.malloc(64)
        rt.free(args["data"])
    data = args.pop("data")
    return rt.tensor_raw(args.pop("shape"), args.pop("dtype"), data, **args)


CREATE_CASES = {
    "viewDims NULL": "viewDims is NULL",
    "storageDims NULL": "storageDims is NULL",
    "dtype 99": "dataType 99",
    "dtype undefined": "dataType -1",
    "dtype string": "dataType 13",
    "format 99": "format 99",
    "format undefined": "format -1",
    "negative dim": "viewDims[1] = -1 is negative",
    "negative stride": "stride[2] = -1 is negative",
    "negative offset": "offset -1 is negative",
    "host pointer": "not device memory",
    "unaligned": "not 32-byte aligned",
    "view overrun": "overrun by 16 bytes",
    "offset overrun": "overrun by 4 bytes",
    "stride overrun": "overrun by 4 bytes",
    "storage overrun": "overrun by 4 bytes",
    "freed": "already freed",
}


@pytest.mark.parametrize("case", list(CREATE_CASES))
def test_create_tensor_rejects(rt, res, case):
    tensors = rt.count("tensors")
    assert not _create_case(rt, res, case)
    msg = rt.err()
    assert msg is not None and msg.startswith("aclCreateTensor: ")
    assert CREATE_CASES[case] in msg
    assert rt.count("tensors") == tensors


def test_tensor_getters(rt, res):
    d = res.dev(nbytes=4 * 2 * 3 * 4)
    t = res.tensor([2, 3, 4], F16, d, fmt=NCL, storage=[48])       # NULL strides: contiguous
    assert rt.get_dims(rt.aclGetViewShape, t) == [2, 3, 4]
    assert rt.get_dims(rt.aclGetViewStrides, t) == [12, 4, 1]
    assert rt.get_dims(rt.aclGetStorageShape, t) == [48]
    v = res.tensor([2, 2], BF16, d, strides=[1, 3], offset=5, fmt=ND, storage=[48])
    assert rt.get_dims(rt.aclGetViewStrides, v) == [1, 3]
    off, fmt, dt = c_int64(), c_int(), c_int()
    assert rt.aclGetViewOffset(v, byref(off)) == 0 and off.value == 5
    assert rt.aclGetFormat(v, byref(fmt)) == 0 and fmt.value == ND
    assert rt.aclGetDataType(v, byref(dt)) == 0 and dt.value == BF16
    arr, n = sc.I64P(), c_uint64()
    assert rt.aclGetViewShape(t, None, byref(n)) == sc.PARAM_NULLPTR
    assert rt.aclGetViewShape(None, byref(arr), byref(n)) == sc.PARAM_NULLPTR
    assert rt.aclGetViewOffset(t, None) == sc.PARAM_NULLPTR
    unbound = rt.tensor([3], F32, None, fmt=ND)                     # tensorData may be NULL
    rt.ok(rt.aclDestroyTensor(unbound))
    assert rt.aclGetFormat(unbound, byref(fmt)) == sc.INNER_NULLPTR
    assert "destroyed" in rt.err()


def test_destroy_rules(rt):
    for fn in (rt.aclDestroyTensor, rt.aclDestroyIntArray, rt.aclDestroyFloatArray,
               rt.aclDestroyBoolArray, rt.aclDestroyScalar):
        assert fn(None) == 0
    t = rt.tensor([1], F32, None, fmt=ND)
    a = rt.int_array([1, 2])
    assert rt.aclDestroyTensor(a) == sc.INNER                      # wrong type
    assert "aclIntArray" in rt.err()
    rt.ok(rt.aclDestroyIntArray(a))
    rt.ok(rt.aclDestroyTensor(t))
    assert rt.aclDestroyTensor(t) == sc.INNER                      # double destroy
    assert "already destroyed" in rt.err()
    assert rt.aclDestroyIntArray(a) == sc.INNER


def test_arrays_and_scalars(rt):
    base = rt.counts()
    vals = (c_int64 * 3)(4, 5, 6)
    a = rt.aclCreateIntArray(vals, 3)
    vals[0] = 99                                                    # values were copied
    n = c_uint64()
    assert rt.aclGetIntArraySize(a, byref(n)) == 0 and n.value == 3
    assert rt.aclGetIntArraySize(None, byref(n)) == sc.PARAM_NULLPTR
    assert not rt.aclCreateIntArray(None, 2)
    empty = rt.aclCreateIntArray(None, 0)
    assert empty
    fa = rt.aclCreateFloatArray((c_float * 2)(1.5, 2.5), 2)
    ba = rt.aclCreateBoolArray((c_bool * 2)(True, False), 2)
    assert not rt.aclCreateFloatArray(None, 1) and not rt.aclCreateBoolArray(None, 1)
    x = c_float(3.0)
    sc_ = rt.aclCreateScalar(ctypes.addressof(x), F32)
    assert not rt.aclCreateScalar(None, F32)
    assert not rt.aclCreateScalar(ctypes.addressof(x), 99)
    c = rt.counts()
    assert (c["int_arrays"] - base["int_arrays"], c["float_arrays"] - base["float_arrays"],
            c["bool_arrays"] - base["bool_arrays"], c["scalars"] - base["scalars"]) == (2, 1, 1, 1)
    rt.ok(rt.aclDestroyIntArray(a))
    rt.ok(rt.aclDestroyIntArray(empty))
    rt.ok(rt.aclDestroyFloatArray(fa))
    rt.ok(rt.aclDestroyBoolArray(ba))
    rt.ok(rt.aclDestroyScalar(sc_))
    assert rt.aclDestroyScalar(sc_) == sc.INNER
    assert rt.counts() == base
    assert rt.aclnnInit(None) == 0 and rt.aclnnFinalize() == 0


def test_int_array_values_are_copied_into_the_op(rt, res):
    """outputSize built from a buffer that is then overwritten: the op sees the old value."""
    x = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
    xt = res.tensor([1, 1, 3], F32, res.dev(x))
    ot = res.tensor([1, 1, 5], F32, res.dev(nbytes=20))
    buf = (c_int64 * 1)(5)
    osz = rt.aclCreateIntArray(buf, 1)
    res.arrays.append(osz)
    buf[0] = 6
    rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
    assert rc == 0, rt.err()
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


# ---------------------------------------------------------------------------------------------
# executors and phase 2
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def fwd_setup(rt, res):
    """A valid forward problem: self [1,1,3] = [1,2,3] -> out [1,1,5]."""
    x = np.array([[[1, 2, 3]]], np.float32)
    xp = res.dev(x)
    outp = res.dev(np.zeros(5, np.float32))
    ns = type("FwdSetup", (), {})()
    ns.xp, ns.outp = xp, outp
    ns.xt = res.tensor([1, 1, 3], F32, xp)
    ns.ot = res.tensor([1, 1, 5], F32, outp)
    ns.osz = res.ints([5])
    ns.expected = [1, 1, 2, 3, 3]
    return ns


def test_phase2_consumes_non_repeatable_executor(rt, res, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    rc, ws, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0 and ws == 0 and ex
    assert rt.count("executors") == execs + 1
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("executors") == execs              # freed by phase 2, before the sync
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.INNER_NULLPTR
    msg = rt.err()
    assert "is not live" in msg and "must not be run twice or destroyed" in msg
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER
    assert rt.aclSetAclOpExecutorRepeatable(ex) == sc.INNER
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected


def test_destroy_unrun_executor(rt, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    assert rt.aclDestroyAclOpExecutor(ex) == 0
    assert rt.count("executors") == execs
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER
    assert rt.aclDestroyAclOpExecutor(None) == sc.INNER_NULLPTR
    assert rt.aclSetAclOpExecutorRepeatable(None) == sc.INNER_NULLPTR
    assert rt.aclSetAclOpExecutorRepeatable(f.xt) == sc.INNER      # a tensor is not an executor
    assert rt.aclnnUpsampleNearestExact1d(None, 0, None, rt.stream) == sc.INNER_NULLPTR


def test_repeatable_executor(rt, res, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [1, 1, 2, 3, 3]
    # same executor, new input bytes at the same address
    new = np.array([7, 8, 9], np.float32)
    rt.ok(rt.aclrtMemcpy(f.xp, 12, new.ctypes.data, 12, sc.H2D))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("executors") == execs + 1                      # still live
    # destroying it while a launch is queued is fine: the launch keeps its payload
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert rt.count("executors") == execs
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [7, 7, 8, 9, 9]
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.INNER_NULLPTR


def test_repeatable_executor_rebinds_addresses(rt, res, fwd_setup):
    """aclSetInputTensorAddr / aclSetOutputTensorAddr / aclSetTensorAddr move a
    repeatable executor to new buffers; a launch already queued keeps its own."""
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))      # queued on the old buffers
    x2, out2 = res.dev(np.array([[[4, 5, 6]]], np.float32)), res.dev(np.zeros(5, np.float32))
    rt.ok(rt.aclSetInputTensorAddr(ex, 0, f.xt, x2))
    rt.ok(rt.aclSetOutputTensorAddr(ex, 0, f.ot, out2))
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    x3, out3 = res.dev(np.array([[[7, 8, 9]]], np.float32)), res.dev(np.zeros(5, np.float32))
    rt.ok(rt.aclSetTensorAddr(ex, 0, f.xt, x3))                        # index over all tensors:
    rt.ok(rt.aclSetTensorAddr(ex, 1, f.ot, out3))                      # input 0, then output 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [1, 1, 2, 3, 3]
    assert rt.download(out2, 5, np.float32).tolist() == [4, 4, 5, 6, 6]
    assert rt.download(out3, 5, np.float32).tolist() == [7, 7, 8, 9, 9]
    rt.ok(rt.aclDestroyAclOpExecutor(ex))


def test_address_setters_are_strict(rt, res, fwd_setup):
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    other = res.dev(np.zeros(3, np.float32))
    assert rt.aclSetInputTensorAddr(ex, 0, f.xt, other) == sc.PARAM_INVALID
    assert "not repeatable" in rt.err()
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    assert rt.aclSetInputTensorAddr(ex, 1, f.xt, other) == sc.PARAM_INVALID        # one input only
    msg = rt.err()
    assert "index 1 is out of range" in msg and "1 input tensors" in msg
    assert rt.aclSetOutputTensorAddr(ex, 1, f.ot, other) == sc.PARAM_INVALID
    assert rt.aclSetTensorAddr(ex, 2, f.ot, other) == sc.PARAM_INVALID
    assert rt.aclSetInputTensorAddr(ex, 0, f.ot, other) == sc.PARAM_INVALID        # the output is not input 0
    assert "is not the aclTensor the executor was built with" in rt.err()
    stranger = res.tensor([1, 1, 3], F32, other)
    assert rt.aclSetInputTensorAddr(ex, 0, stranger, other) == sc.PARAM_INVALID
    assert rt.aclSetInputTensorAddr(ex, 0, f.xt, other + 4) == sc.PARAM_INVALID    # not 32-byte aligned
    assert rt.aclSetInputTensorAddr(None, 0, f.xt, other) == sc.INNER_NULLPTR
    assert rt.aclSetInputTensorAddr(ex, 0, None, other) == sc.INNER_NULLPTR
    assert rt.aclSetInputTensorAddr(ex, 0, f.osz, other) == sc.INNER_NULLPTR      # an int array is no tensor
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    assert rt.aclSetInputTensorAddr(ex, 0, f.xt, other) == sc.INNER_NULLPTR
    assert "is not live" in rt.err()


def test_phase2_refuses_an_executor_whose_tensor_was_destroyed(rt, res):
    x = np.array([[[1, 2, 3]]], np.float32)
    xp, outp = res.dev(x), res.dev(nbytes=20)
    xt, ot = rt.tensor([1, 1, 3], F32, xp), rt.tensor([1, 1, 5], F32, outp)
    osz = rt.int_array([5])
    before = rt.counts()
    rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
    assert rc == 0
    rt.ok(rt.aclDestroyTensor(xt))
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.INNER_NULLPTR
    assert "was destroyed before this launch" in rt.err()
    after = rt.counts()            # the failed phase 2 still consumed the executor, queued nothing
    assert (after["executors"], after["pending_tasks"]) == (before["executors"], before["pending_tasks"])
    rt.ok(rt.aclDestroyTensor(ot))
    rt.ok(rt.aclDestroyIntArray(osz))


def test_launch_does_not_depend_on_user_objects(rt, res):
    """The binding destroys tensors/arrays right after phase 2, before the sync."""
    x = np.array([[[1, 2, 3]]], np.float32)
    xp, outp = res.dev(x), res.dev(nbytes=20)
    xt, ot = rt.tensor([1, 1, 3], F32, xp), rt.tensor([1, 1, 5], F32, outp)
    osz = rt.int_array([5])
    rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    for h in (xt, ot):
        rt.ok(rt.aclDestroyTensor(h))
    rt.ok(rt.aclDestroyIntArray(osz))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(outp, 5, np.float32).tolist() == [1, 1, 2, 3, 3]


def test_stream_ordering_with_op(rt, res, fwd_setup):
    """A D2H copy before the sync sees the old bytes; after the sync, the result."""
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("pending_tasks") >= 1
    assert rt.download(f.outp, 5, np.float32).tolist() == [0, 0, 0, 0, 0]
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected


def test_default_stream_launch(rt, fwd_setup):
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, None))
    rt.ok(rt.aclrtSynchronizeStream(None))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected


@pytest.fixture
def bwd_fp16_setup(rt, res):
    """Backward fp16: gradOutput [1,2,2] -> out [1,2,4]; workspace = 1*2*4*4 = 32 bytes."""
    g = f16_bits([[[1, 2], [3, 4]]])
    ns = type("BwdSetup", (), {})()
    ns.gt = res.tensor([1, 2, 2], F16, res.dev(g))
    ns.outp = res.dev(nbytes=16)
    ns.ot = res.tensor([1, 2, 4], F16, ns.outp)
    ns.osz, ns.isz = res.ints([2]), res.ints([1, 2, 4])
    return ns


def _bwd_exec(rt, b):
    rc, ws, ex = rt.bwd_prepare(b.gt, b.osz, b.isz, 0.0, b.ot)
    assert rc == 0, rt.err()
    assert ws == 32
    return ws, ex


def test_phase2_workspace_checks(rt, res, bwd_fp16_setup):
    b = bwd_fp16_setup
    execs, pending = rt.count("executors"), rt.count("pending_tasks")
    run = rt.aclnnUpsampleNearestExact1dBackward
    wsp = res.dev(nbytes=32)

    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 31, ex, rt.stream) == sc.PARAM_INVALID
    assert "smaller than the 32 bytes" in rt.err()
    assert rt.count("executors") == execs          # consumed even though it failed
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER

    ws, ex = _bwd_exec(rt, b)
    assert run(None, 32, ex, rt.stream) == sc.PARAM_NULLPTR
    assert "workspace is NULL" in rt.err()

    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 64, ex, rt.stream) == sc.PARAM_INVALID      # allocation holds 32 bytes only
    assert "overruns the allocation" in rt.err()

    gone = rt.malloc(32)
    rt.free(gone)
    ws, ex = _bwd_exec(rt, b)
    assert run(gone, 32, ex, rt.stream) == sc.PARAM_INVALID
    assert "already freed" in rt.err()

    host = np.zeros(32, np.uint8)
    ws, ex = _bwd_exec(rt, b)
    assert run(host.ctypes.data, 32, ex, rt.stream) == sc.PARAM_INVALID
    assert "not device memory" in rt.err()
    assert rt.count("executors") == execs
    assert rt.count("pending_tasks") == pending                  # nothing was queued


def test_phase2_stream_checks(rt, res, bwd_fp16_setup):
    b = bwd_fp16_setup
    run = rt.aclnnUpsampleNearestExact1dBackward
    wsp = res.dev(nbytes=32)
    s2 = c_void_p()
    rt.ok(rt.aclrtCreateStream(byref(s2)))
    rt.ok(rt.aclrtDestroyStream(s2.value))
    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 32, ex, s2.value) == sc.RUNTIME_ERROR
    assert "not a live stream" in rt.err()
    ws, ex = _bwd_exec(rt, b)
    assert run(wsp, 32, ex, b.gt) == sc.RUNTIME_ERROR           # a tensor handle as stream
    # and the success path still works
    ws, ex = _bwd_exec(rt, b)
    rt.ok(run(wsp, 32, ex, rt.stream))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))


def test_phase2_device_mismatch(rt, res, monkeypatch, in_thread):
    monkeypatch.setenv("ASCEND_SIM_DEVICE_COUNT", "2")

    def body():
        rt.ok(rt.aclrtSetDevice(1))
        xp = rt.upload(np.array([1, 2, 3], np.float32))           # on device 1
        outp = rt.malloc(20)
        rt.ok(rt.aclrtSetDevice(0))
        st = c_void_p()
        rt.ok(rt.aclrtCreateStream(byref(st)))                     # on device 0
        xt, ot = rt.tensor([1, 1, 3], F32, xp), rt.tensor([1, 1, 5], F32, outp)
        osz = rt.int_array([5])
        try:
            rc, _, ex = rt.fwd_prepare(xt, osz, 0.0, ot)
            assert rc == 0
            assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, st.value) == sc.RUNTIME_ERROR
            msg = rt.err()
            assert "on device 1" in msg and "device 0" in msg
        finally:
            for h in (xt, ot):
                rt.aclDestroyTensor(h)
            rt.aclDestroyIntArray(osz)
            rt.aclrtDestroyStream(st.value)
            rt.free(xp)
            rt.free(outp)
            rt.aclrtResetDevice(0)
            rt.aclrtResetDevice(1)

    in_thread(body)


# ---------------------------------------------------------------------------------------------
# faults at execution time
# ---------------------------------------------------------------------------------------------

def test_freed_input_before_sync_is_an_aicore_exception(rt, res, fwd_setup):
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    sentinel = np.array([42], np.float32)
    rt.ok(rt.aclrtMemcpyAsync(f.outp, 4, sentinel.ctypes.data, 4, sc.H2D, rt.stream))
    assert rt.count("pending_tasks") == 2
    rt.free(f.xp)
    res.forget_ptr(f.xp)
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    msg = rt.err()
    assert "aclnnUpsampleNearestExact1d" in msg and "'self'" in msg
    assert hex(f.xp) in msg and "already freed" in msg
    assert rt.count("pending_tasks") == 0              # the rest of the queue was discarded
    assert rt.download(f.outp, 5, np.float32).tolist() == [0] * 5
    assert rt.aclrtSynchronizeStream(rt.stream) == 0   # the stream is usable again


def test_freed_workspace_before_sync(rt, res, bwd_fp16_setup):
    b = bwd_fp16_setup
    ws, ex = _bwd_exec(rt, b)
    wsp = rt.malloc(ws)
    rt.ok(rt.aclnnUpsampleNearestExact1dBackward(wsp, ws, ex, rt.stream))
    rt.free(wsp)
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    msg = rt.err()
    assert "aclnnUpsampleNearestExact1dBackward" in msg and "workspace" in msg


def test_async_copy_to_freed_memory_fails_the_sync(rt):
    d = rt.malloc(16)
    src = np.zeros(4, np.float32)
    rt.ok(rt.aclrtMemcpyAsync(d, 16, src.ctypes.data, 16, sc.H2D, rt.stream))
    rt.free(d)
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION
    assert "aclrtMemcpyAsync" in rt.err()


# ---------------------------------------------------------------------------------------------
# fault injection
# ---------------------------------------------------------------------------------------------

def test_fault_injection_malloc(rt, monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMalloc:2:207001")
    p = c_void_p()
    a = rt.malloc(8)
    assert rt.aclrtMalloc(byref(p), 8, 0) == sc.RT_MEMORY_ALLOCATION
    assert "injected fault" in rt.err()
    b = rt.malloc(8)                                          # 3rd call is fine
    # a new value restarts the call counters
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtMalloc:1:107000,aclrtFree:2:207002")
    assert rt.aclrtMalloc(byref(p), 8, 0) == sc.RT_PARAM_INVALID
    rt.free(a)
    assert rt.aclrtFree(b) == sc.RT_MEMORY_FREE
    assert "call #2 of aclrtFree" in rt.err()
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    rt.free(b)                                                # the fault did not free it


def test_fault_injection_phase1_and_pointer_functions(rt, res, monkeypatch, fwd_setup):
    f = fwd_setup
    execs = rt.count("executors")
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1dGetWorkspaceSize:1:561002")
    rc, ws, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert (rc, ws, ex) == (561002, 12345, 0xDEAD0)             # nothing written
    assert rt.count("executors") == execs
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)         # 2nd call works
    assert rc == 0
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclCreateTensor:1:1, aclCreateIntArray:1:1")
    assert not rt.tensor_raw([1], F32, None, fmt=ND)
    assert "aclCreateTensor" in rt.err()
    assert not rt.aclCreateIntArray((c_int64 * 1)(1), 1)
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclrtSynchronizeStream:1:507015")
    assert rt.aclrtSynchronizeStream(rt.stream) == sc.RT_AICORE_EXCEPTION


def test_injected_phase2_fault_consumes_like_a_real_failure(rt, res, monkeypatch, fwd_setup):
    """An injected phase-2 failure is a phase-2 failure: a non-repeatable executor is gone,
    a repeatable one stays live."""
    f = fwd_setup
    execs = rt.count("executors")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1d:1:361001")
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.RUNTIME_ERROR
    assert rt.count("executors") == execs
    assert rt.aclDestroyAclOpExecutor(ex) == sc.INNER
    monkeypatch.setenv("ASCEND_SIM_FAULT", "aclnnUpsampleNearestExact1d:1:361001,x:1:1")
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    rt.ok(rt.aclSetAclOpExecutorRepeatable(ex))
    assert rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream) == sc.RUNTIME_ERROR
    assert rt.count("executors") == execs + 1
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))   # 2nd call runs
    rt.ok(rt.aclDestroyAclOpExecutor(ex))
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == f.expected
    assert rt.count("pending_tasks") == 0


@pytest.mark.parametrize("sync", ["aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
                                  "aclrtSynchronizeDevice"])
def test_injected_sync_fault_discards_queued_work(rt, res, monkeypatch, fwd_setup, sync):
    """Like a real failed sync: the queued work is gone, nothing stale runs later."""
    f = fwd_setup
    rc, _, ex = rt.fwd_prepare(f.xt, f.osz, 0.0, f.ot)
    assert rc == 0
    rt.ok(rt.aclnnUpsampleNearestExact1d(None, 0, ex, rt.stream))
    assert rt.count("pending_tasks") == 1
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{sync}:1:507015")
    args = {"aclrtSynchronizeStream": (rt.stream,), "aclrtSynchronizeStreamWithTimeout": (rt.stream, -1),
            "aclrtSynchronizeDevice": ()}[sync]
    assert getattr(rt, sync)(*args) == sc.RT_AICORE_EXCEPTION
    assert rt.count("pending_tasks") == 0
    monkeypatch.delenv("ASCEND_SIM_FAULT")
    rt.ok(rt.aclrtSynchronizeStream(rt.stream))
    assert rt.download(f.outp, 5, np.float32).tolist() == [0] * 5    # the kernel never ran


def test_fault_spec_malformed_entries_are_ignored(rt, monkeypatch, capfd):
    monkeypatch.setenv("ASCEND_SIM_FAULT", "garbage,aclrtMalloc:0:1,aclrtMalloc:x:1,aclrtFree:1:207002")
    a = rt.malloc(8)
    assert "malformed ASCEND_SIM_FAULT" in capfd.readouterr().err
    assert rt.aclrtFree(a) == sc.RT_MEMORY_FREE
    rt.free(a)


REAL_SYMBOLS = sorted((ACL_SYMBOLS - {"aclsimLiveCount", "aclsimLaunchDeterministic", "aclsimDeviceStep"}) | NNOPBASE_SYMBOLS
                      | OP_SYMBOLS)


@pytest.mark.parametrize("name", REAL_SYMBOLS)
def test_every_exported_function_is_a_fault_point(rt, monkeypatch, name):
    """The fault fires at entry, before any argument is looked at (NULL/0 arguments)."""
    fn = getattr(rt, name)
    monkeypatch.setenv("ASCEND_SIM_FAULT", f"{name}:1:987654")
    def zero(t):  # 0 for integers, 0.0 for double, NULL for every pointer
        code = getattr(t, "_type_", None)
        return 0.0 if code == "d" else 0 if isinstance(code, str) and code in "bBhHiIlLqQ" else None

    args = [zero(t) for t in fn.argtypes]
    result = fn(*args)
    if fn.restype in (c_void_p, ctypes.c_char_p):
        assert result is None                     # pointer-returning functions give NULL
    else:
        assert result == 987654
    assert rt.err() == f"injected fault: call #1 of {name} fails with 987654 (ASCEND_SIM_FAULT)"
    monkeypatch.delenv("ASCEND_SIM_FAULT")
