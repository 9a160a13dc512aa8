"""The numpy backend's fast kernels give the plain reference's results, bit for bit.

The operator descriptions name the plain functions of ascend_aclnn/reference/ (the golden
model); the numpy backend runs faster kernels of the same arithmetic. Here both run on
every op_db sample of every dtype, on the same samples salted with special values (NaN
payloads, signalling NaNs, infinities, signed zeros, subnormals, the extremes), on the
hand cases, and on large shapes that reach the thread pool and the blocked paths (with
the real block sizes, and with every block size shrunk), with NumPy's warnings as errors;
the raw bytes of every output must be equal, NaN payloads and signed zeros included.
Where an order of summation differed, the fast kernel was made to add in the reference's
order.

One allowance, and only one: when two NaNs meet in an addition, IEEE 754 does not say
whose payload the result carries, and NumPy's loops differ (a contiguous SIMD loop, a
strided scalar loop and ufunc.at put the operands in different orders; compilers treat
the addition as commutative). So an output element of a summing operator that is NaN on
both sides, and whose sum met two or more non-finite terms (two NaNs, or a NaN and the
NaN that +inf + -inf makes), may differ in its NaN bits. Every other bit is compared:
one NaN term propagates its payload deterministically, and is checked.
tests/test_fuzz.py does the same on every fuzzed call the numpy backend accepts.
"""
from __future__ import annotations

import inspect
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn import reference
from ascend_aclnn.backends import numpy as numpy_backend
from ascend_aclnn.backends.numpy import _parallel, group_norm, im2col, max_pool, pad, upsample
from ascend_aclnn.ops import REGISTRY
from op_db import OP_DB

OPS = sorted(OP_DB)
DTYPE_CASES = [(op, np.dtype(dt)) for op in OPS for dt in OP_DB[op].dtypes]
BF16 = np.dtype(ml_dtypes.bfloat16)

# Neither side may print a NumPy warning on these valid calls (special values included):
# the npu backend prints none.
pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(autouse=True)
def two_threads(monkeypatch):
    """Both kernels under the thread pool (the large cases split their work)."""
    monkeypatch.setenv(_parallel.ENV, "2")


def _is_float(dtype) -> bool:
    """Floating or complex, bfloat16 included (whose NumPy kind is "V")."""
    return dtype.kind in "fc" or dtype == BF16


def raw(result) -> list:
    """Every output as (dtype, shape, bytes): equal raw bytes are equal bits."""
    outputs = result if isinstance(result, tuple) else (result,)
    return [None if r is None else (np.asarray(r).dtype, np.shape(r), np.ascontiguousarray(r).tobytes())
            for r in outputs]


def assert_same_bits(fast, plain, what: str, nan_meetings=None) -> None:
    """Equal raw bytes; nan_meetings (per element of the first output, see nan_meetings())
    lifts the payload comparison where both are NaN and two non-finite terms met."""
    fast, plain = raw(fast), raw(plain)
    assert len(fast) == len(plain), what
    for i, (f, p) in enumerate(zip(fast, plain)):
        if f is None or p is None:
            assert f is p, f"{what}: output {i} is None on one side only"
            continue
        assert f[:2] == p[:2], f"{what}: output {i} dtype/shape {f[:2]} (fast) vs {p[:2]} (plain)"
        if f[2] != p[2]:
            a = np.frombuffer(f[2], np.uint8).reshape(-1, f[0].itemsize)
            b = np.frombuffer(p[2], np.uint8).reshape(-1, f[0].itemsize)
            differs = (a != b).any(axis=1)
            if i == 0 and nan_meetings is not None:
                with np.errstate(invalid="ignore"):  # isnan of a signalling NaN
                    both_nan = np.isnan(np.frombuffer(f[2], f[0])) & np.isnan(np.frombuffer(p[2], p[0]))
                differs &= ~(both_nan & (nan_meetings.reshape(-1) >= 2))
            where = np.flatnonzero(differs)
            if where.size == 0:
                continue
            first = np.unravel_index(where[0], f[1]) if f[1] else ()
            raise AssertionError(
                f"{what}: output {i} differs in {where.size} of {a.shape[0]} elements, first at {first}: "
                f"fast {np.frombuffer(f[2], f[0]).reshape(f[1])[first]!r} ({a[where[0]].tobytes().hex()}), "
                f"plain {np.frombuffer(p[2], p[0]).reshape(p[1])[first]!r} ({b[where[0]].tobytes().hex()})")


def _copy(v):
    """Arrays (and tuples of them, as out= takes) copied, so that each run writes into its
    own out= and keeps its own results."""
    if isinstance(v, np.ndarray):
        return v.copy()
    return tuple(_copy(u) for u in v) if isinstance(v, tuple) else v


# The summing operators: each output element is a sum of terms of the first argument
# (linear in it), so running the reference on a 0/1 indicator of the non-finite terms
# counts the non-finite terms each sum meets.
SUMMING = ("upsample_nearest_exact1d_backward", "replication_pad2d_backward", "max_pool2d_with_mask_backward",
           "im2col_backward")


def nan_meetings(op: str, args, kwargs=None):
    """Per element of the output of a summing operator: how many non-finite terms its sum
    meets (None for the other operators, whose NaN bits are compared everywhere)."""
    g = args[0]
    if op not in SUMMING or not isinstance(g, np.ndarray) or not _is_float(g.dtype):
        return None
    with np.errstate(invalid="ignore"):
        indicator = (~np.isfinite(g)).astype(g.dtype)  # 0 and 1 are exact in every dtype
    with ascend_aclnn.use_backend("numpy"), numpy_backend.plain_reference():
        counts = getattr(ascend_aclnn, op)(indicator, *args[1:], **{k: _copy(v) for k, v in (kwargs or {}).items()})
    return np.abs(np.asarray(counts)).astype(np.float64)


def both(op: str, args, kwargs=None):
    """(fast, plain) results of the public function on the numpy backend."""
    f = getattr(ascend_aclnn, op)
    kwargs = kwargs or {}
    with ascend_aclnn.use_backend("numpy"):
        fast = _copy(f(*args, **{k: _copy(v) for k, v in kwargs.items()}))
        with numpy_backend.plain_reference():
            plain = _copy(f(*args, **{k: _copy(v) for k, v in kwargs.items()}))
    return fast, plain


# ---- the table ---------------------------------------------------------------------------

def test_every_fast_kernel_stands_for_a_reference_function_with_its_signature():
    assert set(numpy_backend.FAST_KERNELS) <= set(reference.__all__)  # a new operator may have no fast kernel
    for name, fast in numpy_backend.FAST_KERNELS.items():
        plain = getattr(reference, name)
        assert [p.name for p in inspect.signature(fast).parameters.values()] == \
            [p.name for p in inspect.signature(plain).parameters.values()], name


def test_descriptions_name_the_plain_functions_and_the_backend_runs_the_fast_ones():
    for spec in REGISTRY:
        assert spec.reference is getattr(reference, spec.name), spec.name
        assert numpy_backend.kernel(spec) is numpy_backend.FAST_KERNELS.get(spec.name, spec.reference)
        with numpy_backend.plain_reference():
            assert numpy_backend.kernel(spec) is spec.reference


def test_an_operator_without_a_fast_kernel_runs_its_reference():
    spec = SimpleNamespace(reference=lambda x: x)  # e.g. a description in a test or a new operator
    assert numpy_backend.kernel(spec) is spec.reference


def test_reference_imports_nothing_from_the_package_above():
    import ast
    import pathlib
    for path in pathlib.Path(reference.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{path.name} imports from above reference/: {ast.unparse(node)}"
                assert node.level == 1 or \
                    node.module in ("__future__", "typing", "numpy", "numpy.typing", "ml_dtypes"), \
                    f"{path.name}: {ast.unparse(node)}"
            elif isinstance(node, ast.Import):
                # importlib and pkgutil: reference/__init__ finds its family modules by a scan
                assert all(a.name in ("math", "numpy", "ml_dtypes", "importlib", "pkgutil") for a in node.names), \
                    f"{path.name}: {ast.unparse(node)}"


# ---- op_db samples, salted samples, hand cases ------------------------------------------

@pytest.mark.parametrize("op,dtype", DTYPE_CASES, ids=[f"{o}-{d.name}" for o, d in DTYPE_CASES])
def test_fast_equals_plain_on_every_sample(op, dtype):
    for i, sample in enumerate(OP_DB[op].samples(dtype, np.random.default_rng(0))):
        fast, plain = both(op, sample.args, sample.kwargs)
        assert_same_bits(fast, plain, f"{op} {dtype.name} sample {i}")


# float32 bit patterns: quiet NaNs with payloads and either sign, signalling NaNs, the
# infinities, signed zeros, float32 and float16 subnormals, values past float16's range,
# and float32's extremes.
SPECIAL_BITS = np.array([0x7fc00000, 0xffc00000, 0x7fc12345, 0xffe00001, 0x7f800001, 0x7fa00000, 0xff812345,
                         0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x80400000, 0x33800000,
                         0xb3c00000, 0x477ff000, 0x7f7fffff, 0xff7fffff], np.uint32)


def _salted(value, rng):
    """A float array with about a quarter of its elements replaced by special values
    (cast from float32 as NumPy and ml_dtypes cast: payloads as those casts keep them)."""
    if not isinstance(value, np.ndarray) or not _is_float(value.dtype) or value.size == 0:
        return value
    special = SPECIAL_BITS.view(np.float32)
    with np.errstate(all="ignore"):
        special = special.astype(value.dtype)
    if value.dtype == np.float16:  # float16's own signalling NaN and payloads, which no cast makes
        special = np.concatenate([special, np.array([0x7c01, 0xfd55, 0x7e01], np.uint16).view(np.float16)])
    if value.dtype == BF16:
        special = np.concatenate([special, np.array([0x7f81, 0xffa5, 0x7fc1], np.uint16).view(BF16)])
    out = value.copy()
    flat = out.reshape(-1)
    where = rng.random(flat.size) < 0.25
    flat[where] = special[rng.integers(0, special.size, int(where.sum()))]
    return out


@pytest.mark.parametrize("op,dtype", DTYPE_CASES, ids=[f"{o}-{d.name}" for o, d in DTYPE_CASES])
def test_fast_equals_plain_with_special_values(op, dtype):
    rng = np.random.default_rng(1)
    for i, sample in enumerate(OP_DB[op].samples(dtype, np.random.default_rng(0))):
        args = tuple(_salted(a, rng) for a in sample.args)
        fast, plain = both(op, args, sample.kwargs)
        assert_same_bits(fast, plain, f"{op} {dtype.name} salted sample {i}", nan_meetings(op, args, sample.kwargs))


HAND_CASES = [(op, c) for op in OPS for c in OP_DB[op].hand_cases]


@pytest.mark.parametrize("op,case", HAND_CASES, ids=[f"{o}-{c.id}" for o, c in HAND_CASES])
def test_fast_equals_plain_on_the_hand_cases(op, case):
    fast, plain = both(op, case.args, case.kwargs)
    assert_same_bits(fast, plain, f"{op} {case.id}")


# ---- large shapes: the thread pool and the blocked paths --------------------------------

def _randn(rng, shape, dtype):
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype)


def _pool_mask(x, *pool):
    with ascend_aclnn.use_backend("numpy"), numpy_backend.plain_reference():
        return ascend_aclnn.max_pool2d_with_mask(x, *pool)[1]


def _gn_stats(x, gamma, beta, groups):
    with ascend_aclnn.use_backend("numpy"), numpy_backend.plain_reference():
        return ascend_aclnn.group_norm_swish(x, gamma, beta, groups)[1:]


def _large_cases(dtype, rng):
    """(label, op, args): each large enough to be split over two threads (more than
    2 * MIN_WORK elements), with several of the kernel's blocks per thread."""
    x = _randn(rng, (4, 32, 96, 90), dtype)  # 1.1M elements
    pool = ([3, 3], [2, 2], [1, 1], [1, 1], True)
    g_pool = _randn(rng, (4, 32, 49, 46), dtype)
    x_gn = _randn(rng, (12, 32, 48, 48), dtype)
    gamma_gn, beta_gn = _randn(rng, 32, dtype), _randn(rng, 32, dtype)
    return [
        ("upsample integer ratio", "upsample_nearest_exact1d", (_randn(rng, (8, 64, 512), dtype), [2048])),
        ("upsample 125/32", "upsample_nearest_exact1d", (_randn(rng, (8, 64, 512), dtype), [2000])),
        ("upsample back integer ratio", "upsample_nearest_exact1d_backward",
         (_randn(rng, (8, 64, 2048), dtype), [2048], [8, 64, 512])),
        ("upsample back 125/32", "upsample_nearest_exact1d_backward",
         (_randn(rng, (8, 64, 2000), dtype), [2000], [8, 64, 512])),
        ("upsample back, no period (one thread)", "upsample_nearest_exact1d_backward",
         (_randn(rng, (8, 64, 1999), dtype), [1999], [8, 64, 523])),
        ("pad", "replication_pad2d", (x, [3, 2, 4, 1])),
        ("pad, wide edges and crop", "replication_pad2d", (x, [20, -3, -2, 17])),
        ("pad back", "replication_pad2d_backward", (_randn(rng, (4, 32, 101, 95), dtype), x, [3, 2, 4, 1])),
        ("max pool", "max_pool2d_with_mask", (x,) + pool),
        ("max pool 1x1 (one thread: a strided copy)", "max_pool2d_with_mask", (x, [1, 1], [2, 3], [0], [1], False)),
        ("max pool back", "max_pool2d_with_mask_backward", (g_pool, x, _pool_mask(x, *pool)) + pool),
        ("im2col", "im2col", (x, [3, 3], [1, 1], [1, 1], [1, 1])),
        ("im2col strided", "im2col", (x, [2, 3], [2, 1], [1, 0], [2, 3])),
        ("im2col back stride 1", "im2col_backward",
         (_randn(rng, (2, 32 * 9, 96 * 90), dtype), [96, 90], [3, 3], [1, 1], [1, 1], [1, 1])),
        ("im2col back strided", "im2col_backward",
         (_randn(rng, (4, 32 * 6, 48 * 30), dtype), [96, 90], [2, 3], [1, 1], [0, 0], [2, 3])),
        ("group norm", "group_norm_swish", (x_gn, gamma_gn, beta_gn, 8, "NCHW", 1e-5, True, 1.3)),
        ("group norm grad", "group_norm_swish_grad",
         (_randn(rng, x_gn.shape, dtype), *_gn_stats(x_gn, gamma_gn, beta_gn, 8), x_gn, gamma_gn, beta_gn, 8,
          "NCHW", 1.3, True, True)),
    ]


LARGE_DTYPES = [np.dtype(np.float32), np.dtype(np.float16), BF16]


# im2col's kernels, and the upsample backward's gather form, run their blocks on one thread
THREADED = ("upsample", "replication", "max_pool", "group_norm")


@pytest.mark.parametrize("dtype", LARGE_DTYPES, ids=[d.name for d in LARGE_DTYPES])
def test_fast_equals_plain_on_large_shapes(dtype, monkeypatch):
    parts = []
    run = _parallel.run

    def counting(fn, spans):
        parts.append(len(spans))
        run(fn, spans)

    monkeypatch.setattr(_parallel, "run", counting)
    for label, op, args in _large_cases(dtype, np.random.default_rng(5)):
        parts.clear()
        fast, plain = both(op, args)
        assert_same_bits(fast, plain, f"{label} {dtype.name}")
        if op.startswith(THREADED) and "one thread" not in label:
            assert max(parts, default=0) == 2, f"{label}: the fast kernel did not use both threads"


@pytest.mark.parametrize("dtype", LARGE_DTYPES, ids=[d.name for d in LARGE_DTYPES])
def test_fast_equals_plain_with_many_small_blocks(dtype, monkeypatch):
    """The same with every block size shrunk, so each thread runs many blocks, and
    several thread counts: block and thread boundaries change no bit."""
    for module, name, value in [(upsample, "BLOCK", 1 << 11), (pad, "BLOCK_BYTES", 1 << 12),
                                (max_pool, "POOL_BLOCK", 1 << 12), (im2col, "BLOCK_BYTES", 1 << 12),
                                (group_norm, "BLOCK", 1 << 10), (_parallel, "MIN_WORK", 1 << 10)]:
        monkeypatch.setattr(module, name, value)
    for threads in ("1", "3"):
        monkeypatch.setenv(_parallel.ENV, threads)
        for label, op, args in _large_cases(dtype, np.random.default_rng(6)):
            fast, plain = both(op, args)
            assert_same_bits(fast, plain, f"{label} {dtype.name} threads={threads}")
