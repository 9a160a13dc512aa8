"""ReplicationPad2d tests that do not fit the op_db tables: the adjoint identity in
complex128 and with cropping/oversized pads, and the simulator's C-only checks (formats,
the op_api's NULL order, int64 overflow, empty tensors with no data, strided outputs)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import ascend_aclnn as aa
from conftest import ROOT, run_python


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape,padding", [((2, 3, 5, 4), [2, 3, 1, 4]), ((3, 1, 6), [9, 0, 0, 7]),
                                           ((1, 2, 4, 6), [-2, 1, 3, -1]), ((2, 1, 1, 1), [4, 4, 4, 4])])
def test_adjoint_identity(dtype, shape, padding, backend):
    """<pad(x), g> == <x, pad_backward(g)>: the backward is the forward's transpose, a real
    matrix, so the identity holds for the complex inner product too."""
    rng = np.random.default_rng(7)

    def rand(s):
        v = rng.standard_normal(s)
        return (v + 1j * rng.standard_normal(s) if np.dtype(dtype).kind == "c" else v).astype(dtype)

    x = rand(shape)
    y = aa.replication_pad2d(x, padding)
    g = rand(y.shape)
    gx = aa.replication_pad2d_backward(g, x, padding)
    lhs, rhs = np.vdot(g, y), np.vdot(gx, x)
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)), (lhs, rhs)


def test_backward_matches_a_scatter_add_written_here(backend):
    """Independent of both implementations: np.add.at over the forward's index map."""
    rng = np.random.default_rng(11)
    for shape, (left, right, top, bottom) in [((2, 3, 4, 5), (2, 1, 0, 3)), ((1, 1, 3), (-1, 4, 2, -2))]:
        h, w = shape[-2:]
        x = rng.standard_normal(shape)
        g = rng.standard_normal(shape[:-2] + (h + top + bottom, w + left + right))
        rows = np.clip(np.arange(g.shape[-2]) - top, 0, h - 1)
        cols = np.clip(np.arange(g.shape[-1]) - left, 0, w - 1)
        expected = np.zeros(shape)
        flat = (rows[:, None] * w + cols[None, :]).ravel()
        for lead in np.ndindex(shape[:-2]):
            np.add.at(expected[lead].reshape(-1), flat, g[lead].ravel())
        gx = aa.replication_pad2d_backward(g, x, [left, right, top, bottom])
        np.testing.assert_allclose(gx, expected, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(aa.replication_pad2d(x, [left, right, top, bottom]),
                                      x[..., rows[:, None], cols[None, :]])


SIM_SCRIPT = """
import importlib.util, os
from ctypes import byref, c_uint64, c_void_p
import numpy as np
spec = importlib.util.spec_from_file_location("sc", os.path.join(ROOT, "tests", "sim", "sim_ctypes.py"))
sc = importlib.util.module_from_spec(spec); spec.loader.exec_module(sc)
lib = os.path.join(PREFIX, "lib64")
s = sc.Sim(lib, "libopapi.so" if os.path.exists(os.path.join(lib, "libopapi.so")) else "libopapi_math.so")
s.ok(s.aclInit(None)); s.ok(s.aclrtSetDevice(0))
F32, F64, BF16, ND, NCHW, NC1HWC0 = sc.ACL_FLOAT, sc.ACL_DOUBLE, sc.ACL_BF16, sc.FMT_ND, sc.FMT_NCHW, 3
buffers, handles = [], []

def dev(nbytes):
    p = s.malloc(max(nbytes, 1)); buffers.append(p); return p

def T(shape, dtype=F32, fmt=ND, data=True, strides=None):
    n = int(np.prod(shape)) if strides is None else 1 + sum((d - 1) * st for d, st in zip(shape, strides))
    h = s.tensor(shape, dtype, dev(n * 8) if data else None, fmt=fmt, strides=strides)
    handles.append(("aclDestroyTensor", h)); return h

def A(values):
    h = s.int_array(values); handles.append(("aclDestroyIntArray", h)); return h

def fwd(x, pad, out):
    ws, ex = c_uint64(99), c_void_p()
    return s.aclnnReplicationPad2dGetWorkspaceSize(x, pad, out, byref(ws), byref(ex)), ws.value, ex.value

def bwd(g, x, pad, gi):
    ws, ex = c_uint64(99), c_void_p()
    return s.aclnnReplicationPad2dBackwardGetWorkspaceSize(g, x, pad, gi, byref(ws), byref(ex)), ws.value, ex.value

def expect(result, status, text):
    rc, msg = result[0], s.err()
    assert rc == status, (rc, msg)
    assert text in msg, msg

P = A([1, 1, 1, 1])
# NULLs in the op_api's order: the backward checks self before gradOutput
expect(bwd(None, None, P, T([1, 1, 3, 4])), 161001, "self is NULL")
expect(bwd(None, T([1, 1, 3, 4]), None, T([1, 1, 3, 4])), 161001, "gradOutput is NULL")
expect(fwd(None, None, None), 161001, "self is NULL")
# dtypes: gradInput is looked at first, then gradOutput, then self
expect(bwd(T([1, 1, 5, 6], sc.ACL_INT32), T([1, 1, 3, 4], sc.ACL_INT8), P, T([1, 1, 3, 4], sc.ACL_INT64)),
       161002, "gradInput dtype must be")
# formats: private layouts and unequal formats (the forward checks formats before dtypes)
expect(bwd(T([1, 1, 5, 6]), T([1, 1, 3, 4], fmt=NC1HWC0), P, T([1, 1, 3, 4], fmt=NC1HWC0)), 161002, "only supports ND")
expect(bwd(T([1, 1, 5, 6], fmt=NCHW), T([1, 1, 3, 4]), P, T([1, 1, 3, 4])), 161002, "must be equal")
expect(fwd(T([1, 1, 3, 4], sc.ACL_BOOL), P, T([1, 1, 5, 6], sc.ACL_BOOL, fmt=NCHW)), 161002, "format")
def accepted(result):  # phase 1 succeeds; the executor is destroyed unrun
    assert result[0] == 0, (result, s.err())
    s.ok(s.aclDestroyAclOpExecutor(result[2]))

accepted(fwd(T([1, 1, 3, 4], fmt=NCHW), P, T([1, 1, 5, 6], fmt=NCHW)))  # equal formats are fine
# pads whose sum overflows int64 are refused, not wrapped
big = A([2**62, 2**62, 0, 0])
expect(fwd(T([1, 1, 3, 4]), big, T([1, 1, 3, 4])), 161002, "out shape")
expect(bwd(T([1, 1, 3, 4]), T([1, 1, 3, 4]), big, T([1, 1, 3, 4])), 161002, "gradOutput shape")
# the bfloat16 rule is the backward's only; the forward takes any pad
accepted(bwd(T([1, 1, 3, 14], BF16), T([1, 1, 3, 4], BF16), A([8, 2, 0, 0]), T([1, 1, 3, 4], BF16)))
expect(bwd(T([1, 1, 4, 14], BF16), T([1, 1, 3, 4], BF16), A([8, 2, 1, 0]), T([1, 1, 3, 4], BF16)), 161002, "bf16")
accepted(fwd(T([1, 1, 3, 4], BF16), A([8, 2, 1, 0]), T([1, 1, 4, 14], BF16)))

def run(result):
    rc, ws, ex = result
    assert rc == 0 and ws == 0, (rc, ws, s.err())
    s.ok(s.aclnnReplicationPad2d(None, 0, ex, None) if run.fwd else s.aclnnReplicationPad2dBackward(None, 0, ex, None))
    s.ok(s.aclrtSynchronizeStream(None))

# N = 0 succeeds and runs nothing, even with no device memory behind the tensors
run.fwd = True; run(fwd(T([0, 2, 3, 4], data=False), P, T([0, 2, 5, 6], data=False)))
run.fwd = False; run(bwd(T([0, 2, 5, 6], data=False), T([0, 2, 3, 4], data=False), P, T([0, 2, 3, 4], data=False)))
# a 4-D input cropped to an empty gradOutput: success, gradInput left as it was (fresh
# simulated memory is 0xFF bytes, NaN): this is why the binding zero-fills it
gi_ptr = s.upload(np.full((1, 1, 2, 4), np.nan, np.float32)); buffers.append(gi_ptr)
gi = s.tensor([1, 1, 2, 4], F32, gi_ptr, fmt=ND); handles.append(("aclDestroyTensor", gi))
run(bwd(T([1, 1, 0, 4]), T([1, 1, 2, 4]), A([0, 0, -1, -1]), gi))
assert np.isnan(s.download(gi_ptr, 8, np.float32)).all()
# leading dims of gradOutput must match self's (simulator strictness)
expect(bwd(T([2, 1, 5, 6]), T([1, 1, 3, 4]), P, T([1, 1, 3, 4])), 161002, "leading dims")
# a strided out is written through its strides: out (1, 1, 3, 4) every other float
x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
xp = s.upload(x); buffers.append(xp)
xt = s.tensor([1, 1, 2, 2], F32, xp, fmt=ND); handles.append(("aclDestroyTensor", xt))
op = s.upload(np.full(24, -1, np.float32)); buffers.append(op)
ot = s.tensor([1, 1, 3, 4], F32, op, fmt=ND, strides=[24, 24, 8, 2]); handles.append(("aclDestroyTensor", ot))
run.fwd = True; run(fwd(xt, A([1, 1, 0, 1]), ot))
got = s.download(op, 24, np.float32)
assert got[0::2].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3], got
assert (got[1::2] == -1).all()
for fn, h in handles:
    s.ok(getattr(s, fn)(h))
for p in buffers:
    s.free(p)
assert all(v == 0 for v in s.counts().values()), s.counts()
s.ok(s.aclrtResetDevice(0)); s.ok(s.aclFinalize())
print("ok")
"""


def test_simulator_checks_a_c_caller_can_reach(sim):
    code = f"ROOT = {str(ROOT)!r}\nPREFIX = {str(sim.prefix)!r}\n" + textwrap.dedent(SIM_SCRIPT)
    proc = run_python(code, sim)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr
