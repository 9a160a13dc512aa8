"""The numpy backend's fast kernels give exactly what the plain forms give.

Their parts (bit-twiddled float16 casts, a thread pool, the upsample backward's
reshape-and-sum) are checked here against the slow, obvious form of the same arithmetic,
bit for bit, on the values where they could go wrong: every float16, the float32 values
around every float16 and every rounding midpoint, NaN payloads, signed zeros.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from ascend_aclnn.backends import numpy as numpy_backend
from ascend_aclnn.backends.numpy import _half, _parallel, upsample
from ascend_aclnn.reference._common import round_half_away


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def test_widen_is_numpys_cast_for_every_float16():
    h = np.arange(65536, dtype=np.uint16).view(np.float16)  # NaN payloads and -0.0 included
    np.testing.assert_array_equal(_bits(_half.widen(h)), _bits(h.astype(np.float32)))


def _narrow_candidates() -> np.ndarray:
    """Every float16 value as float32, the float32 values within 3 ulp of it and of every
    midpoint between neighbours (the ties), the whole subnormal/normal boundary, and random
    bit patterns (NaNs with all kinds of payloads among them)."""
    f = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32).astype(np.int64)
    mids = (f[:-1] + f[1:]) // 2
    parts = [f + d for d in range(-3, 4)] + [mids + d for d in range(-3, 4)]
    parts.append(np.arange(0x38000000 - 4096, 0x38800000 + 4096))
    parts.append(np.random.default_rng(0).integers(0, 2 ** 32, 1 << 20))
    return (np.concatenate(parts) % 2 ** 32).astype(np.uint32).view(np.float32)


def test_narrow_is_numpys_cast_around_every_float16():
    x = _narrow_candidates()
    with np.errstate(all="ignore"):
        expected = x.astype(np.float16)
    np.testing.assert_array_equal(_bits(_half.narrow(x)), _bits(expected))


def test_narrow_is_numpys_cast_on_blocks_of_one_range():
    """The same candidates sorted by magnitude, so that most of narrow's blocks hold only
    normals, only subnormals, or only values past 65504 (the clamps it skips where a block
    has no value needing them), in both the plain and the scaled form."""
    x = _narrow_candidates()
    x = x[np.argsort(x.view(np.uint32) & np.uint32(0x7fffffff), kind="stable")]
    with np.errstate(all="ignore"):
        expected = x.astype(np.float16)
    np.testing.assert_array_equal(_bits(_half.narrow(x, threaded=False)), _bits(expected))
    away = _half.narrow(x, threaded=False, ties_away=True)  # against the mixed blocks' result
    np.testing.assert_array_equal(_bits(away), _bits(_half.narrow(_narrow_candidates(), ties_away=True)[
        np.argsort(_narrow_candidates().view(np.uint32) & np.uint32(0x7fffffff), kind="stable")]))
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    h = np.sort(h[np.isfinite(h)].astype(np.float32)).astype(np.float16)  # -65504 .. 65504, in order
    scaled = np.empty(h.shape, np.int32)
    assert _half.widen_scaled(h, scaled)
    for lo in range(0, h.size, 4096):  # blocks of one range each
        part = slice(lo, lo + 4096)
        got = np.empty(h[part].shape, np.float16)
        a, t = (np.empty(got.shape, np.uint32) for _ in range(2))
        _half.narrow_scaled(scaled.view(np.float32)[part], got, a, t)
        np.testing.assert_array_equal(_bits(got), _bits(h[part]))


def test_narrow_and_widen_keep_shape_and_write_into_out():
    x = np.random.default_rng(1).standard_normal((3, 5, 7)).astype(np.float32)
    out = np.empty((3, 5, 7), np.float16)
    assert _half.narrow(x, out=out) is out
    np.testing.assert_array_equal(_bits(out), _bits(x.astype(np.float16)))
    w = _half.widen(out[:, ::2])  # a strided view
    assert w.shape == (3, 3, 7)
    np.testing.assert_array_equal(_bits(w), _bits(out[:, ::2].astype(np.float32)))
    with pytest.raises(ValueError, match="C-contiguous"):
        _half.narrow(x, out=np.empty((3, 5, 14), np.float16)[..., ::2])


def test_thread_count_follows_the_environment(monkeypatch):
    monkeypatch.setenv(_parallel.ENV, "1")
    assert _parallel.threads() == 1
    assert _parallel.spans(100, 10 ** 9) == [(0, 100)]
    monkeypatch.setenv(_parallel.ENV, "3")
    assert _parallel.threads() == 3
    assert _parallel.spans(100, 10 ** 9) == [(0, 34), (34, 68), (68, 100)]
    assert _parallel.spans(100, 10) == [(0, 100)]  # too little work to share
    assert _parallel.spans(0, 10 ** 9) == []
    monkeypatch.setenv(_parallel.ENV, "two")
    with pytest.raises(ValueError, match=_parallel.ENV):
        _parallel.threads()


def test_default_threads_follow_the_operator_and_the_load(monkeypatch):
    """Without the variable: a caller's min_work per thread (SERIAL: one thread), and one
    thread whenever the machine's other cores are busy; with it, every caller splits."""
    monkeypatch.delenv(_parallel.ENV, raising=False)
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_parallel, "_busy", lambda: False)
    assert _parallel.spans(100, 10 ** 9) == [(0, 50), (50, 100)]
    assert _parallel.spans(100, 10 ** 9, _parallel.SERIAL) == [(0, 100)]
    assert _parallel.spans(100, 3 * 1000, 1000) == [(0, 50), (50, 100)]
    assert _parallel.spans(100, 1999, 1000) == [(0, 100)]
    monkeypatch.setattr(_parallel, "_busy", lambda: True)
    assert _parallel.spans(100, 10 ** 9) == [(0, 100)]
    monkeypatch.setenv(_parallel.ENV, "2")  # the variable overrides both
    assert _parallel.spans(100, 10 ** 9, _parallel.SERIAL) == [(0, 50), (50, 100)]


def test_busy_is_a_load_average_of_the_cpu_count_less_a_half(monkeypatch):
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_parallel.os, "getloadavg", lambda: (1.6, 0.0, 0.0))
    assert _parallel._busy()
    monkeypatch.setattr(_parallel.os, "getloadavg", lambda: (1.2, 9.0, 9.0))  # the last minute only
    assert not _parallel._busy()

    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr(_parallel.os, "getloadavg", unavailable)
    assert not _parallel._busy()


def test_parallel_runs_every_part_and_raises_the_first_error(monkeypatch):
    monkeypatch.setenv(_parallel.ENV, "2")
    seen = []
    _parallel.run(lambda a, b: seen.append((a, b)), [(0, 5), (5, 9), (9, 12)])
    assert sorted(seen) == [(0, 5), (5, 9), (9, 12)]

    def fail(a, b):
        if a == 5:
            raise RuntimeError("part 5")

    with pytest.raises(RuntimeError, match="part 5"):
        _parallel.run(fail, [(0, 5), (5, 9)])


def _gathered(g: np.ndarray, l_out: int, l_in: int, scales: float) -> np.ndarray:
    """The plain form: force the gather path (no periodic plan)."""
    plan = upsample._periodic_runs
    try:
        upsample._periodic_runs = lambda edges: None
        return upsample.upsample_nearest_exact1d_backward(g, [l_out], [g.shape[0], g.shape[1], l_in], scales)
    finally:
        upsample._periodic_runs = plan


@pytest.mark.parametrize("threads", ["1", "2"])
def test_upsample_backward_reshape_sum_equals_the_gather(threads, monkeypatch):
    """Integer and repeating non-integer ratios, downsampling, scales that drop gradient,
    blocks of rows, -0.0 intervals (the sum starts from +0.0), NaN and inf, all dtypes."""
    monkeypatch.setenv(_parallel.ENV, threads)
    monkeypatch.setattr(upsample, "BLOCK", 1 << 12)  # several blocks of rows per thread
    monkeypatch.setattr(_parallel, "MIN_WORK", 1)
    rng = np.random.default_rng(2)
    periodic = 0
    for (l_in, l_out), scales in itertools.product(
            [(32, 125), (64, 256), (16, 16), (13, 7), (100, 33), (7, 13), (48, 1000)], [0.0, 0.5, 3.5]):
        g = rng.standard_normal((5, 7, l_out)).astype(np.float32)
        g[0, 0, ::2] = -0.0
        g[1, 1] = -0.0
        g[2, 2, 3] = np.nan
        g[3, 3, 1] = np.inf
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            gd = g.astype(dtype)
            fast = upsample.upsample_nearest_exact1d_backward(gd, [l_out], [5, 7, l_in], scales)
            np.testing.assert_array_equal(_bits(fast), _bits(_gathered(gd, l_out, l_in, scales)))
        s = np.float32(scales) if scales > 0 else np.float32(l_out) / np.float32(l_in)
        edges = np.minimum(np.ceil(np.arange(l_in + 1, dtype=np.float32) * s - np.float32(0.5)),
                           np.float32(l_out)).astype(np.int64)
        periodic += upsample._periodic_runs(edges) is not None
    assert periodic >= 10  # the fast path was really taken


def test_upsample_backward_plan_for_the_benchmark_ratios():
    def plan(l_in, l_out):
        s = np.float32(l_out) / np.float32(l_in)
        edges = np.minimum(np.ceil(np.arange(l_in + 1, dtype=np.float32) * s - np.float32(0.5)),
                           np.float32(l_out)).astype(np.int64)
        return upsample._periodic_runs(edges)
    assert plan(1024, 4096) == (1, 4, [(0, 1, 4, 0)])  # one reshape
    p, q, runs = plan(1024, 4000)  # 4000/1024 = 125/32
    assert (p, q) == (32, 125) and {k for *_, k, _ in runs} == {3, 4}


def test_upsample_backward_fill_copies_fill_the_slots_one_by_one_would():
    """_fill_pad merges runs into longer copies: every slot gets the value a copy per input
    and interval position would give it, and the slots no interval reaches stay +0.0."""
    checked = 0
    for l_in, l_out in [(32, 125), (1024, 4000), (1024, 3000), (1024, 1100), (1024, 5000), (64, 100), (48, 1000),
                        (96, 97), (10, 35)]:
        s = np.float32(l_out) / np.float32(l_in)
        edges = np.minimum(np.ceil(np.arange(l_in + 1, dtype=np.float32) * s - np.float32(0.5)),
                           np.float32(l_out)).astype(np.int64)
        plan = upsample._periodic_runs(edges)
        if plan is None:
            continue
        p, _, runs = plan
        k_max = max(k for *_, k, _ in runs)
        g = np.arange(1, 3 * l_out + 1, dtype=np.float32).reshape(3, l_out)  # every value distinct, none 0
        fast = np.zeros((3, l_in // p, p, k_max), np.float32)
        upsample._fill_pad(g, fast, plan)
        want = np.zeros((3, l_in, k_max), np.float32)
        for i in range(l_in):
            for j in range(edges[i + 1] - edges[i]):
                want[:, i, j] = g[:, edges[i] + j]
        np.testing.assert_array_equal(fast.reshape(3, l_in, k_max), want, err_msg=f"{l_in} -> {l_out}")
        checked += 1
    assert checked >= 6


def test_narrow_ties_away_is_the_round_half_away_form():
    """The grad kernel's CAST_ROUND (the reference's round_half_away: NumPy's cast, then
    ties moved away from zero) on the same values, including every subnormal-range tie."""
    x = np.concatenate([_narrow_candidates(), np.arange(0, 0x38800000, 97, dtype=np.uint32).view(np.float32)])
    with np.errstate(all="ignore"):
        expected = round_half_away(x, np.float16)
    got = _half.narrow(x, ties_away=True)
    np.testing.assert_array_equal(_bits(got), _bits(expected))
    assert (_bits(got) != _bits(_half.narrow(x))).any()  # the two roundings do differ


def test_grad_bfloat16_store_is_the_round_half_away_form():
    """The grad kernel's in-place bfloat16 rounding of its float32 results against the
    reference's round_half_away: the float32 values around every bfloat16 and every
    midpoint (ties, the carry into infinity, subnormals), both signs, and random bit
    patterns (NaNs with every kind of payload, signalling ones among them)."""
    from ascend_aclnn.backends.numpy.group_norm import _bfloat16_half_away
    b = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)  # every bfloat16, as float32 bits
    parts = [(b.astype(np.int64) + d) % 2 ** 32 for d in (-2, -1, 0, 1, 2, 0x7fff, 0x8000, 0x8001)]
    parts.append(np.random.default_rng(3).integers(0, 2 ** 32, 1 << 20))
    x = np.concatenate(parts).astype(np.uint32).view(np.float32)
    expected = round_half_away(x, ml_dtypes.bfloat16)
    got = np.empty(x.shape, ml_dtypes.bfloat16)
    _bfloat16_half_away(x.copy(), got)
    np.testing.assert_array_equal(_bits(got), _bits(expected))


def _same_bits(a, b):
    a, b = (a, b) if isinstance(a, tuple) else ((a,), (b,))
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        if u is not None:
            assert u.dtype == v.dtype and u.shape == v.shape
            np.testing.assert_array_equal(_bits(u), _bits(v))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_threaded_families_give_the_serial_results(dtype, monkeypatch):
    """Splitting planes, samples or rows over threads changes no bit of any result."""
    from types import SimpleNamespace
    from ascend_aclnn.backends.numpy import group_norm
    R = SimpleNamespace(**numpy_backend.FAST_KERNELS)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 8, 10, 12)).astype(dtype)
    gamma, beta = (rng.standard_normal(8).astype(dtype) for _ in range(2))
    _, mask = R.max_pool2d_with_mask(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
    g_pool = rng.standard_normal((3, 8, 5, 6)).astype(dtype)
    wide = rng.standard_normal((4, 16, 1024)).astype(dtype)  # > 2**16 outputs: threaded
    calls = [
        lambda: R.upsample_nearest_exact1d(wide, [1100], 0.0),
        lambda: R.replication_pad2d(x, [2, 1, 3, 2]),
        lambda: R.replication_pad2d_backward(rng.standard_normal((3, 8, 15, 15)).astype(dtype), x, [2, 1, 3, 2]),
        lambda: R.max_pool2d_with_mask(x, [3, 3], [2, 2], [1, 1], [1, 1], False),
        lambda: R.max_pool2d_with_mask_backward(g_pool, x, mask, [3, 3], [2, 2], [1, 1], [1, 1], False),
        lambda: R.group_norm_swish(x, gamma, beta, 4, 0, 1e-5, True, 1.1),
        lambda: R.group_norm_swish_grad(x[::-1], *R.group_norm_swish(x, gamma, beta, 4, 0, 1e-5, True, 1.1)[1:],
                                        x, gamma, beta, 4, 0, 1.1, True, True),
    ]
    monkeypatch.setattr(group_norm, "BLOCK", 8 * 120)  # one sample per block: three blocks
    monkeypatch.setenv(_parallel.ENV, "1")
    serial = []
    for call in calls:
        rng = np.random.default_rng(4)
        serial.append(call())
    monkeypatch.setenv(_parallel.ENV, "3")
    monkeypatch.setattr(_parallel, "MIN_WORK", 1)
    for call, expected in zip(calls, serial):
        rng = np.random.default_rng(4)
        _same_bits(call(), expected)


PAD_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.float16, ml_dtypes.bfloat16, np.float32, np.int32,
              np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", PAD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_pad_forward_word_runs_equal_the_reference(dtype, monkeypatch):
    """The pad forward moves bits only: rows as one item each, each side's edge run as one
    machine word (pads whose runs make 1, 2, 4 or 8 bytes) or column by column; every pad
    width from 0 to 9 on either side, one-wide and one-high planes, non-contiguous inputs
    and several blocks per thread, against the plain gather, bit for bit (special values
    included: NaN payloads and signalling NaNs are moved, never converted)."""
    from ascend_aclnn import reference
    from ascend_aclnn.backends.numpy import pad
    rng = np.random.default_rng(7)
    monkeypatch.setattr(pad, "BLOCK_BYTES", 256)
    monkeypatch.setattr(_parallel, "MIN_WORK", 1)
    monkeypatch.setenv(_parallel.ENV, "2")
    raw = rng.integers(0, 256, (3, 4, 7, 13 * np.dtype(dtype).itemsize), dtype=np.uint8)
    full = raw.view(np.uint8).view(dtype) if np.dtype(dtype) != np.bool_ else raw.astype(bool)
    inputs = [full, full[:, :, :, ::2], full[..., :1], full[..., :1, :], full[:, 1:3, 2:, 1:-1], full[0]]
    for x in inputs:
        for pads in [(0, 0, 0, 0), (3, 3, 3, 3), (1, 2, 0, 5), (2, 1, 4, 0), (4, 7, 1, 1), (9, 0, 2, 3),
                     (5, 6, 0, 0), (0, 3, 1, 0), (7, 8, 9, 6)]:
            got = pad.replication_pad2d(x, pads)
            want = reference.replication_pad2d(x, pads)
            assert got.dtype == want.dtype and got.shape == want.shape, (x.shape, pads)
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{x.shape} {x.strides} {pads}")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_max_pool_backward_blocks_equal_the_reference(dtype, monkeypatch):
    """The backward's blocks of planes (sums reused per thread), its float16 rounding of
    only the named sums (outputs fewer than half the positions) or of every sum, with
    special values (sums past float16's range, signed zeros, subnormals, infinities, NaN),
    against the plain scatter-add, bit for bit."""
    from ascend_aclnn import reference
    from ascend_aclnn.backends.numpy import max_pool
    monkeypatch.setattr(max_pool, "BACK_BLOCK", 200)
    monkeypatch.setattr(_parallel, "MIN_WORK", 1)
    monkeypatch.setenv(_parallel.ENV, "2")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 5, 13, 11)).astype(np.float32).astype(dtype)
    for k, s, p in [(3, 2, 1), (2, 1, 0), (3, 1, 1), (2, 2, 0), (3, 3, 1)]:
        pool = ([k, k], [s, s], [p, p], [1, 1], False)
        _, mask = reference.max_pool2d_with_mask(x, *pool)
        ho, wo = reference.max_pool.pool_out_size(13, k, s, p, False), reference.max_pool.pool_out_size(11, k, s, p, False)
        g = rng.standard_normal((3, 5, ho, wo)).astype(np.float32)
        g = g.astype(dtype)
        specials = np.array([65504, -0.0, 1e-7, 60000, np.inf, -np.inf, np.nan], np.float32).astype(dtype)
        g.reshape(-1)[::5] = specials[np.arange(g.reshape(-1)[::5].size) % specials.size]
        got = max_pool.max_pool2d_with_mask_backward(g, x, mask, *pool)
        want = reference.max_pool2d_with_mask_backward(g, x, mask, *pool)
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"k={k} s={s} p={p}")


def test_scaled_float16_sums_round_as_the_casts_do():
    """widen_scaled then narrow_scaled (the float16 upsample backward's sums) give the
    float16 of the float32 sum: every float16 value alone, and sums of two and of four
    random float16 values (ties, subnormal results, results past 65504 among them), each
    against NumPy's casts of the unscaled float32 sum; infinities and NaN are refused."""
    every = np.arange(65536, dtype=np.uint16).view(np.float16)
    finite = every[np.isfinite(every)]
    assert not _half.widen_scaled(every, np.empty(every.shape, np.int32))
    rng = np.random.default_rng(5)
    picks = [finite[None, :]] + [finite[rng.integers(0, finite.size, (k, 1 << 18))] for k in (2, 4)]
    small = finite[np.abs(finite.astype(np.float32)) < 2.0 ** -10]  # subnormal sums
    picks.append(small[rng.integers(0, small.size, (3, 1 << 16))])
    for terms in picks:
        scaled = np.empty(terms.shape, np.int32)
        assert _half.widen_scaled(terms, scaled)
        s = scaled.view(np.float32)
        total_scaled, total = s[0].copy(), terms[0].astype(np.float32)
        for j in range(1, terms.shape[0]):
            total_scaled += s[j]
            total += terms[j].astype(np.float32)
        total_scaled += np.float32(0)
        total += np.float32(0)
        got = np.empty(total.shape, np.float16)
        a, t = np.empty(total.shape, np.uint32), np.empty(total.shape, np.uint32)
        _half.narrow_scaled(total_scaled, got, a, t)
        with np.errstate(over="ignore"):
            want = total.astype(np.float16)
        np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.float16, ml_dtypes.bfloat16, np.float32,
                                   np.int64, np.complex64], ids=lambda d: np.dtype(d).name)
def test_upsample_forward_integer_ratio_words_equal_the_reference(dtype, monkeypatch):
    """The forward at an integer ratio moves bits only (each element times 0x0101... into a
    word of ratio elements, where such a word exists; a gather otherwise): ratios 2, 3, 4,
    8 and non-integer ones, scales given or not, strided inputs, every bit pattern (NaN
    payloads and signalling NaNs included), against the plain gather."""
    from ascend_aclnn import reference
    monkeypatch.setattr(_parallel, "MIN_WORK", 1)
    monkeypatch.setenv(_parallel.ENV, "2")
    rng = np.random.default_rng(9)
    size = np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, (16, 34, 128 * 2 * size), dtype=np.uint8)  # outputs past the small-call form
    full = raw.astype(bool) if np.dtype(dtype) == np.bool_ else raw.view(dtype)
    for x in (full[..., :128], full[:, :, ::2], full[:, 1:, 3:]):
        l_in = x.shape[-1]
        for l_out, scales in [(2 * l_in, 0.0), (3 * l_in, 0.0), (4 * l_in, 0.0), (8 * l_in, 0.0), (4 * l_in, 4.0),
                              (4 * l_in - 3, 0.0), (l_in + 5, 0.0), (l_in // 2, 0.0)]:
            got = numpy_backend.FAST_KERNELS["upsample_nearest_exact1d"](x, [l_out], scales)
            want = reference.upsample_nearest_exact1d(x, [l_out], scales)
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{x.shape} -> {l_out}, scales {scales}")
