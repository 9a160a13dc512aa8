"""Helpers for the tests of the operators that take lists, scalars and any numeric dtype
(test_add, test_list_ops, test_reduce_sum, test_vendor): NumPy arrays in and out of device
tensors of every dtype, and tracking of what a test creates, lists included (a list owns
its tensors: destroying it destroys them, so they are not destroyed again).
"""
from __future__ import annotations

import ctypes
from ctypes import byref, c_bool, c_float, c_int64, c_uint64, c_void_p

import ml_dtypes
import numpy as np

from . import sim_ctypes as sc

# aclDataType values
FLOAT, FLOAT16, INT8, INT32, UINT8, INT16, UINT16, UINT32, INT64, UINT64 = 0, 1, 2, 3, 4, 6, 7, 8, 9, 10
DOUBLE, BOOL, STRING, COMPLEX64, COMPLEX128, BF16, INT4, UINT1, COMPLEX32 = 11, 12, 13, 16, 17, 27, 29, 30, 33
HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT8_E8M0 = 34, 35, 36, 37
ND, NCHW, FRACTAL_NZ, NC1HWC0 = 2, 0, 29, 3
TILING_ERROR = 561002

NP = {FLOAT: np.float32, FLOAT16: np.float16, INT8: np.int8, INT32: np.int32, UINT8: np.uint8,
      INT16: np.int16, UINT16: np.uint16, UINT32: np.uint32, INT64: np.int64, UINT64: np.uint64,
      DOUBLE: np.float64, BOOL: np.bool_, COMPLEX64: np.complex64, COMPLEX128: np.complex128,
      BF16: ml_dtypes.bfloat16, FLOAT8_E5M2: ml_dtypes.float8_e5m2, FLOAT8_E4M3FN: ml_dtypes.float8_e4m3fn}
ACL = {np.dtype(v): k for k, v in NP.items()}
NAMES = {FLOAT: "ACL_FLOAT", FLOAT16: "ACL_FLOAT16", BF16: "ACL_BF16", INT32: "ACL_INT32", INT64: "ACL_INT64",
         DOUBLE: "ACL_DOUBLE", BOOL: "ACL_BOOL", INT8: "ACL_INT8", UINT8: "ACL_UINT8", INT16: "ACL_INT16",
         COMPLEX64: "ACL_COMPLEX64", COMPLEX128: "ACL_COMPLEX128"}


def contiguous_strides(shape):
    return sc.contiguous_strides(list(shape))


class Env:
    """What one test creates, released at its end (close()) whether it passed or not."""

    def __init__(self, s):
        self.s = s
        self.ptrs, self.tensors, self.lists, self.scalar_lists, self.scalars, self.arrays = [], [], [], [], [], []
        self.execs = []

    # ---- device tensors ---------------------------------------------------------------
    def tensor(self, arr, dtype=None, fmt=ND, strides=None, offset=0, shape=None, pad=0):
        """A device tensor holding arr (dtype: its aclDataType, default from arr's). With
        strides/offset/shape, arr is the storage and the tensor a view of it. Returns
        (handle, device pointer)."""
        arr = np.array(arr, order="C")  # (np.ascontiguousarray would make a 0-D array 1-D)
        dtype = ACL[arr.dtype] if dtype is None else dtype
        ptr = self.s.upload(arr.reshape(-1).view(np.uint8), arr.nbytes + pad) if arr.size or pad else None
        if ptr is not None:
            self.ptrs.append(ptr)
        shape = list(arr.shape) if shape is None else list(shape)
        h = self.s.tensor(shape, dtype, ptr, strides=strides, offset=offset, fmt=fmt,
                          storage=[arr.size] if strides is not None or offset else None)
        self.tensors.append(h)
        return h, ptr

    def empty(self, shape, dtype, fmt=ND, fill=0xFF):
        """A device tensor of that shape filled with byte `fill` (0xFF: NaN for floats)."""
        nbytes = int(np.prod(shape, dtype=np.int64)) * sc.ITEMSIZE.get(dtype, np.dtype(NP[dtype]).itemsize)
        ptr = None
        if nbytes:
            ptr = self.s.malloc(nbytes)
            self.ptrs.append(ptr)
            fillb = np.full(nbytes, fill, np.uint8)
            self.s.ok(self.s.aclrtMemcpy(ptr, nbytes, fillb.ctypes.data, nbytes, sc.H2D), "fill")
        h = self.s.tensor(list(shape), dtype, ptr, fmt=fmt)
        self.tensors.append(h)
        return h, ptr

    def read(self, ptr, shape, dtype, strides=None, offset=0):
        """The tensor's elements as an array of that shape (a strided view read from its
        storage when strides are given)."""
        npdt = np.dtype(NP[dtype])
        shape = list(shape)
        if strides is None:
            n = int(np.prod(shape, dtype=np.int64))
            if n == 0:
                return np.zeros(shape, npdt)
            return self.s.download(ptr, n * npdt.itemsize, np.uint8, offset * npdt.itemsize).view(npdt).reshape(shape)
        span = offset + sum((d - 1) * st for d, st in zip(shape, strides)) + 1
        store = self.s.download(ptr, span * npdt.itemsize, np.uint8).view(npdt)
        return np.lib.stride_tricks.as_strided(store[offset:], shape, [st * npdt.itemsize for st in strides]).copy()

    def drop_tensor(self, h):
        self.tensors.remove(h)

    # ---- lists, scalars, arrays ----------------------------------------------------------
    def tensor_list(self, handles):
        """aclCreateTensorList of the handles (None for NULL); they belong to the list from now."""
        arr = (c_void_p * max(len(handles), 1))(*handles)
        h = self.s.aclCreateTensorList(arr, len(handles))
        if not h:
            raise sc.SimError(f"aclCreateTensorList failed: {self.s.err()}")
        for t in handles:
            if t in self.tensors:
                self.tensors.remove(t)
        self.lists.append(h)
        return h

    def scalar(self, value, dtype):
        """aclCreateScalar of value stored as dtype's NumPy type."""
        buf = np.array([value], dtype=NP[dtype])
        h = self.s.aclCreateScalar(buf.ctypes.data, dtype)
        if not h:
            raise sc.SimError(f"aclCreateScalar failed: {self.s.err()}")
        self.scalars.append(h)
        return h

    def scalar_list(self, handles):
        arr = (c_void_p * max(len(handles), 1))(*handles)
        h = self.s.aclCreateScalarList(arr, len(handles))
        if not h:
            raise sc.SimError(f"aclCreateScalarList failed: {self.s.err()}")
        for t in handles:
            if t in self.scalars:
                self.scalars.remove(t)
        self.scalar_lists.append(h)
        return h

    def int_array(self, values):
        h = self.s.int_array(list(values))
        self.arrays.append(("aclDestroyIntArray", h))
        return h

    def float_array(self, values):
        vals = (c_float * max(len(values), 1))(*values)
        h = self.s.aclCreateFloatArray(vals, len(values))
        assert h, self.s.err()
        self.arrays.append(("aclDestroyFloatArray", h))
        return h

    def bool_array(self, values):
        vals = (c_bool * max(len(values), 1))(*values)
        h = self.s.aclCreateBoolArray(vals, len(values))
        assert h, self.s.err()
        self.arrays.append(("aclDestroyBoolArray", h))
        return h

    # ---- operators -------------------------------------------------------------------
    def phase1(self, op, *args):
        return self.s.phase1(op, *args)

    def run(self, op, *args, fn=None):
        """Both phases and a sync; the phase-1 status (or raises on a later failure)."""
        rc, ws, ex = self.s.phase1(op, *args) if fn is None else _phase1(fn, args)
        if rc:
            return rc
        wsp = None
        if ws:
            wsp = self.s.malloc(ws)
            self.ptrs.append(wsp)
        phase2 = getattr(self.s, op) if fn is None else fn[1]
        self.s.ok(phase2(wsp, ws, ex, self.s.stream), op)
        self.s.ok(self.s.aclrtSynchronizeStream(self.s.stream), "aclrtSynchronizeStream")
        return 0

    def close(self):
        s = self.s
        for h in self.lists:
            s.aclDestroyTensorList(h)
        for h in self.scalar_lists:
            s.aclDestroyScalarList(h)
        for h in self.tensors:
            s.aclDestroyTensor(h)
        for h in self.scalars:
            s.aclDestroyScalar(h)
        for destroy, h in self.arrays:
            getattr(s, destroy)(h)
        for e in self.execs:
            s.aclDestroyAclOpExecutor(e)
        s.aclrtSynchronizeStream(s.stream)
        for p in self.ptrs:
            s.aclrtFree(p)
        self.__init__(s)
        s.drain()


def _phase1(fns, args):
    ws, ex = c_uint64(12345), c_void_p(0xDEAD0)
    rc = fns[0](*args, byref(ws), byref(ex))
    return rc, ws.value, ex.value


def bf16(values):
    return np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16)


__all__ = ["Env", "NP", "ACL", "bf16", "contiguous_strides", "c_int64", "ctypes"]
