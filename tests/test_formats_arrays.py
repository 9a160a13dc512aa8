"""Formats of DeviceArrays on both backends: to_device / empty with a format, format, shape,
storage_shape, storage(), numpy(); format_cast and its route; raw calls with private arrays
(Mm with an NZ mat2 equals Mm with the ND one); the CPU reference's decode/encode and its
refusals; described operators refuse private arrays."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import device_formats as DF
from ascend_aclnn import formats as F

PRIVATE_CASES = [("FRACTAL_NZ", (40, 24)), ("FRACTAL_NZ", (3, 17, 33)), ("NC1HWC0", (2, 20, 3, 2)),
                 ("FRACTAL_Z", (17, 20, 2, 3)), ("NDC1HWC0", (2, 35, 2, 2, 1)), ("FRACTAL_Z_3D", (18, 5, 2, 1, 3))]
DTYPES = [np.float16, aa.bfloat16, np.int8, np.float32, np.int32, np.uint8]


def _values(shape, dtype, seed=0):
    bits = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    x = bits.view(dtype).reshape(shape)
    if np.dtype(dtype).kind == "f" or dtype == aa.bfloat16:
        # kept bit exact; no NaN for ==. The 0 in x's own dtype: NumPy 1.26 cannot promote bfloat16 with int
        x = np.where(np.isfinite(x.astype(np.float32)), x, np.zeros((), dtype)).astype(dtype)
    return x


@pytest.mark.parametrize("fmt,shape", PRIVATE_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_format_cast_round_trips_bit_for_bit(backend, fmt, shape, dtype):
    x = _values(shape, dtype)
    d = aa.to_device(x)
    p = aa.format_cast(d, fmt)
    assert p.format == aa.Format[fmt] and p.shape == shape and p.dtype == np.dtype(dtype)
    assert p.storage_shape == F.storage_shape(fmt, shape, dtype)
    assert p.nbytes == int(np.prod(p.storage_shape)) * np.dtype(dtype).itemsize
    stored = p.storage()
    assert stored.tobytes() == F.encode(x, fmt).tobytes()  # CANN's layout, padding zeros
    assert p.numpy().tobytes() == x.tobytes()
    back = aa.format_cast(p, "ND")
    assert back.format == aa.Format.ND and back.storage_shape == shape
    assert back.numpy().tobytes() == x.tobytes()
    assert aa.format_cast(p, fmt) is p  # already so


@pytest.mark.parametrize("fmt,shape", PRIVATE_CASES[:3])
def test_to_device_and_empty_with_a_format(backend, fmt, shape):
    x = _values(shape, np.float16, 1)
    d = aa.to_device(x, format=fmt)
    assert d.format == aa.Format[fmt] and d.shape == shape
    assert np.array_equal(d.storage(), F.encode(x, fmt))
    assert np.array_equal(np.asarray(d), x)
    e = aa.empty(shape, np.float16, format=aa.Format[fmt])
    assert e.format == aa.Format[fmt] and e.storage_shape == F.storage_shape(fmt, shape, np.float16)
    c = d.copy()
    assert c.format == d.format and np.array_equal(c.numpy(), x)
    f32 = d.astype(np.float32)
    assert f32.format == d.format and f32.storage_shape == F.storage_shape(fmt, shape, np.float32)
    assert np.array_equal(f32.numpy(), x.astype(np.float32))
    with pytest.raises(ValueError, match="private format"):
        d.reshape(-1)
    assert fmt in repr(d)


def test_float32_c0_is_explicit(backend):
    x = _values((20, 9), np.float32)
    d = aa.to_device(x, format="FRACTAL_NZ", c0=8)
    assert d.storage_shape == (2, 2, 16, 8)
    assert np.array_equal(d.numpy(), x)
    assert aa.to_device(x, format="FRACTAL_NZ").storage_shape == (1, 2, 16, 16)


def test_public_formats_tag_the_array(backend):
    x = _values((2, 3, 4, 5), np.float32)
    d = aa.to_device(x, format="NHWC")
    assert d.format == aa.Format.NHWC and d.storage_shape == d.shape
    assert np.array_equal(d.numpy(), x)
    r = aa.format_cast(d, "NCHW")
    assert r.format == aa.Format.NCHW and np.array_equal(r.numpy(), x)
    assert aa.format_cast_route(d, "NCHW").startswith("relabel")
    ncl = aa.to_device(x, format="NCL")  # a tag of another rank is passed as given, as aclCreateTensor takes it
    assert ncl.format == aa.Format.NCL and ncl.shape == x.shape and np.array_equal(ncl.numpy(), x)
    with pytest.raises(ValueError, match="format"):
        aa.to_device(x, format="NZ")
    with pytest.raises(ValueError, match="4-D"):
        aa.empty((2, 3), np.float16, format="NC1HWC0")
    with pytest.raises(ValueError, match="no private format"):
        aa.to_device(np.zeros((2, 3)), format="FRACTAL_NZ")  # float64
    assert aa.to_device(x).format == aa.Format.ND


def test_the_route_is_reported(backend):
    import build as sim_build  # native/build.py: whether the simulated release has aclnnNpuFormatCast
    w = aa.to_device(_values((40, 24), np.float16))
    route = aa.format_cast_route(w, "FRACTAL_NZ")
    device = DF.ROUTE_HOST
    if backend == "npu":  # CANN's own cast where the simulated release has one, else TransMatmulWeight (8.1.RC1)
        device = DF.ROUTE_NPU_FORMAT_CAST if sim_build.in_profile("npu_format_cast.c") else DF.ROUTE_TRANS_MATMUL_WEIGHT
    assert route == device
    assert aa.format_cast_route(w, "ND") == DF.ROUTE_NONE
    others = DF.ROUTE_NPU_FORMAT_CAST if device == DF.ROUTE_NPU_FORMAT_CAST else DF.ROUTE_HOST
    assert aa.format_cast_route(aa.to_device(_values((40, 24), np.float32)), "FRACTAL_NZ") == others
    assert aa.format_cast_route(aa.to_device(_values((2, 20, 3, 2), np.float16)), "NC1HWC0") == others


@pytest.mark.parametrize("dtype", [np.float16, aa.bfloat16])
@pytest.mark.parametrize("k,n", [(40, 24), (32, 48), (17, 130)])
def test_mm_with_an_nz_weight_equals_mm_with_the_nd_one(backend, dtype, k, n):
    x = (np.random.default_rng(k).standard_normal((5, k)) * 2).astype(dtype)
    w = (np.random.default_rng(n).standard_normal((k, n)) * 2).astype(dtype)
    y = aa.aclnn.Mm(aa.to_device(x), aa.to_device(w), aa.empty((5, n), dtype), 0).numpy()
    nz = aa.format_cast(aa.to_device(w), "FRACTAL_NZ")
    assert nz.format == aa.Format.FRACTAL_NZ
    y_nz = aa.aclnn.Mm(aa.to_device(x), nz, aa.empty((5, n), dtype), 0).numpy()
    assert y_nz.tobytes() == y.tobytes()
    want = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=2e-2, atol=0.3)


def test_trans_matmul_weight_on_both_backends(backend):
    w = _values((40, 24), np.float16, 5)
    d = aa.to_device(w)
    assert aa.aclnn.TransMatmulWeight(d) is d
    assert d.format == aa.Format.FRACTAL_NZ and d.storage_shape == (2, 3, 16, 16)
    assert np.array_equal(d.numpy(), w)
    assert np.array_equal(d.storage(), F.encode(w, "FRACTAL_NZ"))
    with pytest.raises(aa.AclnnError) as info:  # its storage is no longer ND
        aa.aclnn.TransMatmulWeight(d)
    assert info.value.status == 161002


def test_mm_refusals_with_private_arrays(backend):
    x = aa.to_device(np.ones((2, 40), np.float16))
    w1 = aa.format_cast(aa.to_device(np.ones((40, 1), np.float16)), "FRACTAL_NZ")
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.Mm(x, w1, aa.empty((2, 1), np.float16), 0)
    assert info.value.status == 161002
    xnz = aa.format_cast(aa.to_device(np.ones((2, 40), np.float16)), "FRACTAL_NZ")
    w = aa.to_device(np.ones((40, 24), np.float16))
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.Mm(xnz, w, aa.empty((2, 24), np.float16), 0)
    assert info.value.status == 161002


def test_described_operators_refuse_private_arrays(backend):
    x = aa.format_cast(aa.to_device(np.ones((2, 3, 16), np.float16)), "FRACTAL_NZ")
    for _ in range(2):  # the checked call's cached path too
        with pytest.raises(aa.AclnnError, match="format_cast") as info:
            aa.upsample_nearest_exact1d(x, output_size=[32])
        assert info.value.status == 161002


def _doc_example():
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "formats.md").read_text()
    block = re.search(r"```python\n(.*?)```", doc, re.S)
    assert block is not None
    return block.group(1), (root / "README.md").read_text()


def test_the_documented_example_runs_and_the_readme_shows_it(backend, capsys):
    code, readme = _doc_example()
    assert code in readme  # one example, in both places
    exec(compile(code, "docs/formats.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "FRACTAL_NZ (40, 24) (2, 3, 16, 16)"
    assert printed[1] == aa.format_cast_route(aa.to_device(np.zeros((40, 24), np.float16)), "FRACTAL_NZ")


def test_described_operators_refuse_another_public_format_and_take_their_own(backend):
    x = np.ones((1, 2, 4, 4), np.float32)
    nhwc = aa.to_device(x, format="NHWC")
    with pytest.raises(aa.AclnnError, match="expected an array in ND") as info:  # the pad passes ND
        aa.replication_pad2d(nhwc, [1, 1, 1, 1])
    assert info.value.status == 161002
    nd = aa.to_device(x, format="ND")  # the format the operator passes: accepted
    assert np.array_equal(aa.replication_pad2d(nd, [1, 1, 1, 1]).numpy(), np.ones((1, 2, 6, 6), np.float32))
    out = aa.empty((1, 2, 6, 6), np.float32, format="NHWC")
    with pytest.raises(aa.AclnnError, match="expected an array in ND"):
        aa.replication_pad2d(aa.to_device(x), [1, 1, 1, 1], out=out)
    with pytest.raises(aa.AclnnError, match="expected an array in NCHW"):  # the max pool passes NCHW
        aa.max_pool2d_with_mask(nhwc, [2, 2], [2, 2], [0, 0], [1, 1])
    out, _ = aa.max_pool2d_with_mask(aa.to_device(x, format="NCHW"), [2, 2], [2, 2], [0, 0], [1, 1])
    assert np.array_equal(out.numpy(), np.ones((1, 2, 2, 2), np.float32))


def test_raw_calls_pass_a_public_tag(npu):
    """ReplicationPad2d's op_api wants self and out in one format: an NHWC-tagged self with an
    untagged 4-D out (passed as NCHW, by rank) reaches it as two formats."""
    x = aa.to_device(np.ones((1, 2, 4, 4), np.float32), format="NHWC")
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.ReplicationPad2d(x, [1, 1, 1, 1], aa.empty((1, 2, 6, 6), np.float32))
    assert info.value.status == 161002 and "format" in str(info.value)
    out = aa.empty((1, 2, 6, 6), np.float32, format="NHWC")
    aa.aclnn.ReplicationPad2d(x, [1, 1, 1, 1], out)
    assert np.array_equal(out.numpy(), np.ones((1, 2, 6, 6), np.float32))


def test_plans_with_formatted_arrays_run_as_ordinary_calls(npu):
    x = aa.to_device(np.ones((2, 40), np.float16))
    w = aa.format_cast(aa.to_device(np.ones((40, 24), np.float16)), "FRACTAL_NZ")
    with aa.plan(aa.aclnn.Mm, x, w, aa.empty((2, 24), np.float16), 0) as p:
        assert p.fallback_reason and "format" in p.fallback_reason
        assert np.array_equal(p().numpy(), np.full((2, 24), 40, np.float16))
    with aa.plan(aa.aclnn.Mm, x, aa.to_device(np.ones((40, 24), np.float16)), aa.empty((2, 24), np.float16), 0) as p:
        with pytest.raises(aa.PlanMismatchError, match="FRACTAL_NZ"):
            p(x, w, aa.empty((2, 24), np.float16), 0)


def test_an_in_place_storage_past_its_block_is_refused_before_the_kernel(npu, monkeypatch):
    """Without the size helper's count (an older CANN), the binding cannot move the weight
    first: the storage CANN set in phase 1 is read back, and phase 2 never runs."""
    from ascend_aclnn.backends.npu import handles
    monkeypatch.setattr(handles, "_reformatted_count", lambda cann, t, counter: None)
    w = (np.arange(40 * 24) % 7).astype(np.float16).reshape(40, 24)
    d = aa.to_device(w)
    with pytest.raises(aa.AclnnError, match="would write 3072 bytes") as info:
        aa.aclnn.TransMatmulWeight(d)
    assert info.value.status == 161002 and info.value.argument == "mmWeightRef"
    aa.synchronize()  # nothing was launched: no fault
    assert d.format == aa.Format.ND and np.array_equal(d.numpy(), w)


@pytest.mark.parametrize("shape,dtype,want", [
    ([510, 510], np.float16, 262144), ([510, 270], np.int8, 147456),  # the helper's published examples
    ([3, 40, 24], aa.bfloat16, 3 * 48 * 32), ([40, 24], np.float32, 48 * 32), ([2, 2, 17, 33], np.int8, 4 * 32 * 64)])
def test_the_size_helpers_through_aa_aclnn(backend, shape, dtype, want):
    assert aa.aclnn.CalculateMatmulWeightSizeV2(shape, dtype) == want
    assert aa.aclnn.CalculateMatmulWeightSize(shape[-2:]) == int(np.prod([-(-d // 16) * 16 for d in shape[-2:]]))
    for bad in ([8], [2, 0, 16], [1] * 7):
        with pytest.raises(aa.AclnnError) as info:
            aa.aclnn.CalculateMatmulWeightSizeV2(bad, dtype)
        assert info.value.status == 161002
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.CalculateMatmulWeightSizeV2(None, dtype)
    assert info.value.status == 161001
    for bad in ("4024", [40, 24.0], [40, True]):  # not a sequence of ints: refused, not read digit by digit
        with pytest.raises(aa.AclnnError) as info:
            aa.aclnn.CalculateMatmulWeightSizeV2(bad, dtype)
        assert info.value.status == 161002, bad


def test_a_private_array_is_not_exported_as_its_storage(numpy_backend):
    d = aa.to_device(np.ones((40, 24), np.float16), format="FRACTAL_NZ")
    with pytest.raises(BufferError, match="FRACTAL_NZ"):
        np.from_dlpack(d)
    assert np.asarray(d).shape == (40, 24)


@pytest.mark.parametrize("release,most", [("8.1.RC1", 3), ("9.2.0", 6)])
def test_the_numpy_backend_follows_the_releases_rank_limit(numpy_backend, monkeypatch, release, most):
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", release)
    ok = aa.to_device(np.ones((1,) * (most - 2) + (16, 16), np.float16))
    aa.aclnn.TransMatmulWeight(ok)
    assert ok.format == aa.Format.FRACTAL_NZ
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.TransMatmulWeight(aa.to_device(np.ones((1,) * (most - 1) + (16, 16), np.float16)))
    assert info.value.status == 161002
    assert aa.aclnn.CalculateMatmulWeightSize([1] * (most - 2) + [16, 16]) == 256
    with pytest.raises(aa.AclnnError):
        aa.aclnn.CalculateMatmulWeightSize([1] * (most - 1) + [16, 16])


def test_a_float32_nz_weight_needs_the_matmul_c0_on_both_backends(backend):
    """aclnnMm's weight-NZ path lays a float32 weight out with C0 = 8; one stored with
    torch_npu's default 16 is refused alike on both backends."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((3, 20)).astype(np.float32), rng.standard_normal((20, 9)).astype(np.float32)
    y = aa.aclnn.Mm(aa.to_device(x), aa.to_device(w), aa.empty((3, 9), np.float32), 0).numpy()
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.Mm(aa.to_device(x), aa.to_device(w, format="FRACTAL_NZ"), aa.empty((3, 9), np.float32), 0)
    assert info.value.status == 161002
    nz8 = aa.to_device(w, format="FRACTAL_NZ", c0=8)
    assert nz8.storage_shape == (2, 2, 16, 8)
    y8 = aa.aclnn.Mm(aa.to_device(x), nz8, aa.empty((3, 9), np.float32), 0).numpy()
    assert y8.tobytes() == y.tobytes()


@pytest.mark.parametrize("shape,groups,want", [
    ([2, 4, 8, 8], 1, 16384),               # the helper's documented example: FRACTAL_Z (64, 1, 16, 16)
    ([17, 20, 3, 3], 1, 2 * 9 * 32 * 16),   # C1 = 2, N padded to 32
    ([32, 1, 3, 3], 32, 2 * 9 * 16 * 16),   # depthwise: groups merged 16 at a time, 2 of them
    ([3, 0, 2, 2], 1, 0)])
def test_the_convolution_weight_size_on_an_inference_soc(backend, monkeypatch, shape, groups, want):
    """aclnnCalculateConvolutionWeightSize on an Ascend310P, which the simulator is told by
    ASCEND_SIM_SOC_NAME and the numpy backend by ASCEND_ACLNN_SOC_NAME."""
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "Ascend310P3")
    monkeypatch.setenv("ASCEND_ACLNN_SOC_NAME", "Ascend310P3")
    assert aa.aclnn.CalculateConvolutionWeightSize(shape, False, groups, np.float16) == want


def test_the_convolution_weight_size_refusals_on_both_backends(backend, monkeypatch):
    monkeypatch.delenv("ASCEND_SIM_SOC_NAME", raising=False)
    monkeypatch.delenv("ASCEND_ACLNN_SOC_NAME", raising=False)
    with pytest.raises(aa.AclnnError, match="Ascend310P") as info:  # an Atlas A2: only inference products have it
        aa.aclnn.CalculateConvolutionWeightSize([2, 4, 8, 8], False, 1, np.float16)
    assert info.value.status == 161002
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.CalculateConvolutionWeightSize(None, False, 1, np.float16)
    assert info.value.status == 161001
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", "Ascend310P3")
    monkeypatch.setenv("ASCEND_ACLNN_SOC_NAME", "Ascend310P3")
    for args, status in [(([2, 4, 8], False, 1, np.float16), 161002), (([2, 4, 8, 8], True, 1, np.float16), 161002),
                         (([2, 4, 8, 8], False, 0, np.float16), 161002),
                         (([2, 4, 8, 8], False, 1, np.float32), 161002),
                         (([2, -4, 8, 8], False, 1, np.float16), 161002),
                         (([2, 4, 8, 8], False, 65536, np.float16), 561103)]:
        with pytest.raises(aa.AclnnError) as info:
            aa.aclnn.CalculateConvolutionWeightSize(*args)
        assert info.value.status == status, args
    for bad in [("2448", False, 1, np.float16), ([2, 4, 8, 8], 1, 1, np.float16),
                ([2, 4, 8, 8], False, 1.5, np.float16), ([2, 4, 8, 8], False, 1, "nope")]:
        with pytest.raises(aa.AclnnError) as info:  # refused before any C call, alike on both backends
            aa.aclnn.CalculateConvolutionWeightSize(*bad)
        assert info.value.status == 161002, bad
    with pytest.raises(TypeError, match="transposed, groups, dataType"):
        aa.aclnn.CalculateConvolutionWeightSize([2, 4, 8, 8], False, 1)


def _gmm(w, x):
    y = aa.empty((x.shape[0], w.shape[-1]), np.float16)
    return aa.aclnn.GroupedMatmulV2([aa.to_device(x)], [w], None, None, None, None, None, None, 3, -1, [y])


def test_grouped_matmul_refuses_an_unaligned_nz_weight_in_its_list(numpy_backend):
    """aclnn_grouped_matmul.cpp (A2/A3): an NZ weight's K and N divisible by 16 (16-bit), K by 16
    and N by 32 (int8), else 161002. The weights come in a tensor list: each member is checked.
    (The simulator does not model GroupedMatmul.)"""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 48)).astype(np.float16)
    w = rng.standard_normal((48, 32)).astype(np.float16)
    want = _gmm(aa.to_device(w), x)[0].numpy()
    got = _gmm(aa.to_device(w, format="FRACTAL_NZ"), x)[0].numpy()
    assert np.array_equal(got, want)  # aligned: decoded and computed as the ND weight
    for shape, dtype in [((40, 32), np.float16), ((48, 24), np.float16), ((48, 48), np.int8)]:
        bad = aa.to_device(np.ones(shape, dtype), format="FRACTAL_NZ")
        with pytest.raises(aa.AclnnError, match="divisible") as info:
            _gmm(bad, np.ones((5, shape[0]), np.float16))
        assert info.value.status == 161002, (shape, dtype)


def _status_of(fn, *args):
    try:
        fn(*args)
    except aa.AclnnError as exc:
        return exc.status
    return 0


def test_raw_calls_of_described_operators_check_formats_alike_on_both_backends(backend):
    """The format rules the described operators' op_apis apply to what a raw call passes (a
    tag, else the format of the rank): the numpy backend refuses what the NPU refuses, and
    never computes a channel-last layout as channel-first."""
    f32 = np.float32
    x4, x3 = np.ones((1, 2, 4, 4), f32), np.ones((2, 3, 4), f32)
    t = aa.to_device
    nhwc = t(x4, format="NHWC")
    pad, padb = aa.aclnn.ReplicationPad2d, aa.aclnn.ReplicationPad2dBackward
    assert _status_of(pad, nhwc, [1, 1, 1, 1], aa.empty((1, 2, 6, 6), f32)) == 161002  # NHWC self, NCHW out
    assert _status_of(pad, nhwc, [1, 1, 1, 1], aa.empty((1, 2, 6, 6), f32, format="NHWC")) == 0
    assert _status_of(padb, None, nhwc, [1, 1, 1, 1], aa.empty((1, 2, 4, 4), f32)) == 161001  # NULL before formats
    g = t(np.ones((1, 2, 6, 6), f32), format="NHWC")
    assert _status_of(padb, g, nhwc, [1, 1, 1, 1], aa.empty((1, 2, 4, 4), f32)) == 161002
    assert _status_of(padb, g, nhwc, [1, 1, 1, 1], aa.empty((1, 2, 4, 4), f32, format="NHWC")) == 0
    up = aa.aclnn.UpsampleNearestExact1d
    assert _status_of(up, t(x3, format="ND"), [8], 0.0, aa.empty((2, 3, 8), f32, format="ND")) == 0
    assert _status_of(up, t(x3, format="NCHW"), [8], 0.0, aa.empty((2, 3, 8), f32)) == 161002  # neither NCL nor ND
    upb = aa.aclnn.UpsampleNearestExact1dBackward
    assert _status_of(upb, t(np.ones((2, 3, 8), f32), format="ND"), [8], [2, 3, 4], 0.0,
                      aa.empty((2, 3, 4), f32)) == 161002  # ND gradOutput, NCL out
    mp = aa.aclnn.MaxPool2dWithMask
    mask = (1, 2, 4, 64)
    assert _status_of(mp, t(x4, format="NCHW"), [2, 2], [2, 2], [0, 0], [1, 1], False, aa.empty((1, 2, 2, 2), f32),
                      aa.empty(mask, np.int8)) == 0
    assert _status_of(mp, t(x4, format="NCHW"), [2, 2], [2, 2], [0, 0], [1, 1], False,
                      aa.empty((1, 2, 2, 2), f32, format="ND"), aa.empty(mask, np.int8)) == 161002
    assert _status_of(mp, nhwc, [2, 2], [2, 2], [0, 0], [1, 1], False, aa.empty((1, 2, 2, 2), f32, format="NHWC"),
                      aa.empty(mask, np.int8, format="NHWC")) == 161002  # channel-last: not modelled
