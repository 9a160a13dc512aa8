"""aclnnNpuFormatCast (CANN 8.5.0 on) on both backends: the raw call and its size function
give the host codec's layout bit for bit for every pair the op_api's Atlas A2/A3 table holds
that a DeviceArray can express, refuse alike with CANN's statuses, and format_cast takes it
on the npu backend where the installed CANN has it (reporting so), else the older routes.

The npu backend runs against the default simulator build, whose release (9.2.0) has the
operator; tests/sim/test_npu_format_cast.py checks that an 8.1.RC1 build has neither the
symbols nor the header."""
from __future__ import annotations

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import device_formats as DF
from ascend_aclnn import formats as F
from conftest import run_python

import build as sim_build  # native/build.py (conftest puts native/ on the path)

# the default simulator build has the operator (9.2.0); an 8.1.RC1 default would not, and the
# npu expectations below say so instead of skipping
HAS = sim_build.in_profile("npu_format_cast.c")

PUBLIC_OF_RANK = {2: "ND", 3: "NCL", 4: "NCHW", 5: "NCDHW"}
# (logical shape, private format): each pair of the op_api's table a DeviceArray can hold, with
# dims that leave padding in every blocked axis
CASES = [((40, 24), "FRACTAL_NZ"), ((3, 17, 33), "FRACTAL_NZ"), ((2, 3, 17, 5), "FRACTAL_NZ"),
         ((2, 1, 2, 17, 40), "FRACTAL_NZ"), ((2, 1, 1, 1, 3, 17), "FRACTAL_NZ"),
         ((2, 20, 3, 5), "NC1HWC0"), ((18, 20, 3, 3), "FRACTAL_Z"),
         ((2, 20, 2, 3, 3), "NDC1HWC0"), ((18, 20, 2, 3, 3), "FRACTAL_Z_3D")]
# dtype, C0 of the cast (None: the dtype's 32 bytes; 16 and 8 for the 4-byte ones)
DTYPES = [(np.float16, None), (aa.bfloat16, None), (np.int8, None), (np.uint8, None),
          (np.float32, 8), (np.float32, 16), (np.int32, 8), (np.uint32, 16)]


def _values(shape, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 40
    return x.astype(dtype)


def _c0(dtype, c0):
    return c0 if c0 is not None else 32 // np.dtype(dtype).itemsize


def _skip_npu_without_it(backend):
    # both backends follow the installed simulator's release; the absence itself is tested below
    # (test_the_numpy_backend_follows_the_release, test_an_8_1_install_has_neither...) and in tests/sim
    if not HAS:
        pytest.skip(f"the simulator is built as a release without aclnnNpuFormatCast (ASCEND_SIM_CANN_VERSION), "
                    f"which the {backend} backend follows")


@pytest.mark.parametrize("dtype,c0", DTYPES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("shape,fmt", CASES, ids=str)
def test_raw_casts_both_ways_equal_the_host_codec(backend, shape, fmt, dtype, c0):
    _skip_npu_without_it(backend)
    x = _values(shape, dtype, len(shape))
    k = _c0(dtype, c0)
    src = aa.to_device(x)  # untagged: passed with its rank's public format, as every raw call passes it
    dst = aa.empty(shape, dtype, format=fmt, c0=k)
    assert aa.aclnn.NpuFormatCast(src, dst) is dst
    want = F.encode(x, fmt, k)
    assert dst.storage().tobytes() == want.tobytes()  # padding zeros included
    back = aa.empty(shape, dtype)
    if np.dtype(dtype).itemsize == 4 and k == 16:
        # reading C0 16 takes TransDataSpecial, which the op_api picks only for a destination of 16 elements
        with pytest.raises(aa.AclnnError) as info:
            aa.aclnn.NpuFormatCast(dst, back)
        assert info.value.status == 161002
        return
    aa.aclnn.NpuFormatCast(dst, back)
    assert back.numpy().tobytes() == x.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_a_4_byte_cast_to_16_elements_reads_c0_16(backend, dtype):
    """The one reverse cast TransDataSpecial serves: a destination of 16 elements."""
    _skip_npu_without_it(backend)
    x = _values((2, 8), dtype)
    nz = aa.empty((2, 8), dtype, format="FRACTAL_NZ", c0=16)
    aa.aclnn.NpuFormatCast(aa.to_device(x), nz)
    back = aa.empty((2, 8), dtype)
    aa.aclnn.NpuFormatCast(nz, back)
    assert back.numpy().tobytes() == x.tobytes()


def _status(call):
    with pytest.raises(aa.AclnnError) as info:
        call()
    return info.value.status


def test_refusals_have_cann_statuses(backend):
    _skip_npu_without_it(backend)
    x = _values((40, 24), np.float16)
    src, nz = aa.to_device(x), aa.empty((40, 24), np.float16, format="FRACTAL_NZ")
    cast = aa.aclnn.NpuFormatCast
    assert _status(lambda: cast(None, nz)) == 561103  # the op_api's CHECK_RET(..., ACLNN_ERR_INNER_NULLPTR)
    assert _status(lambda: cast(src, None)) == 561103
    assert _status(lambda: cast(aa.to_device(x.astype(np.float64)), nz)) == 161002  # dtype outside its list
    assert _status(lambda: cast(aa.to_device(x.astype(np.int16)), aa.empty((40, 24), np.int16,
                                                                            format="FRACTAL_NZ"))) == 161002
    assert _status(lambda: cast(src, aa.empty((40, 24), aa.bfloat16, format="FRACTAL_NZ"))) == 161002  # dtypes differ
    assert _status(lambda: cast(src, aa.empty((40, 24), np.float16, format="FRACTAL_NZ", c0=8))) == 161002
    assert _status(lambda: cast(src, aa.empty((24, 40), np.float16, format="FRACTAL_NZ"))) == 161002  # views differ
    one = aa.to_device(x[0])
    assert _status(lambda: cast(one, aa.empty((24,), np.float16, format="FRACTAL_NZ"))) == 161002  # 1-D: not modelled
    # a pair outside the table: CANN's phase 1 returns 0 without an executor, its phase 2 refuses that
    assert _status(lambda: cast(src, aa.empty((40, 24), np.float16, format="NCHW"))) == 561103
    assert _status(lambda: cast(nz, aa.empty((40, 24), np.float16, format="FRACTAL_NZ"))) == 561103  # NZ to NZ


@pytest.mark.parametrize("soc,status", [("Ascend310P3", 161002), ("Ascend950PR", 161002), ("Ascend910_9391", 0)])
def test_the_soc_decides(backend, monkeypatch, soc, status):
    """The simulator reads ASCEND_SIM_SOC_NAME, the numpy backend ASCEND_ACLNN_SOC_NAME: an A2/A3
    runs it, Atlas inference products are refused (the op_api's SoC check), Ascend950 (its
    other branches, not modelled) too."""
    _skip_npu_without_it(backend)
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", soc)
    monkeypatch.setenv("ASCEND_ACLNN_SOC_NAME", soc)
    d, nz = aa.to_device(_values((40, 24), np.float16)), aa.empty((40, 24), np.float16, format="FRACTAL_NZ")
    if status:
        assert _status(lambda: aa.aclnn.NpuFormatCast(d, nz)) == status
        assert _status(lambda: aa.aclnn.NpuFormatCastCalculateSizeAndFormat(d, "FRACTAL_NZ")) == status
    else:
        aa.aclnn.NpuFormatCast(d, nz)
        assert aa.aclnn.NpuFormatCastCalculateSizeAndFormat(d, "FRACTAL_NZ") == ((2, 3, 16, 16), aa.Format.FRACTAL_NZ)


def test_the_size_function(backend):
    _skip_npu_without_it(backend)
    size = aa.aclnn.NpuFormatCastCalculateSizeAndFormat
    w = aa.to_device(_values((40, 24), np.float16))
    assert size(w, "FRACTAL_NZ") == ((2, 3, 16, 16), aa.Format.FRACTAL_NZ)
    assert size(w, aa.Format.FRACTAL_NZ, np.int8) == ((1, 3, 16, 32), aa.Format.FRACTAL_NZ)  # C0 of additionalDtype
    assert size(aa.to_device(_values((3, 40, 24), np.float32)), 29) == ((3, 3, 3, 16, 8), aa.Format.FRACTAL_NZ)
    img = aa.to_device(_values((2, 20, 3, 5), np.float16))
    assert size(img, "NC1HWC0") == ((2, 2, 3, 5, 16), aa.Format.NC1HWC0)
    assert size(img, "FRACTAL_Z") == ((2 * 3 * 5, 1, 16, 16), aa.Format.FRACTAL_Z)
    assert size(img, "FRACTAL_NZ") == ((2, 20, 1, 1, 16, 16), aa.Format.FRACTAL_NZ)  # NCHW: same dtype only
    vol = aa.to_device(_values((2, 20, 2, 3, 3), np.int8))
    assert size(vol, "NDC1HWC0") == ((2, 2, 1, 3, 3, 32), aa.Format.NDC1HWC0)
    assert size(vol, "FRACTAL_Z_3D") == ((2 * 3 * 3, 1, 16, 32), aa.Format.FRACTAL_Z_3D)
    nz = aa.format_cast(w, "FRACTAL_NZ")
    assert size(nz, "ND") == ((40, 24), aa.Format.ND)
    five = aa.format_cast(img, "NC1HWC0")
    assert size(five, "NCHW") == ((2, 20, 3, 5), aa.Format.NCHW)
    assert size(five, "NHWC") == ((2, 5, 20, 3), aa.Format.NHWC)  # the op_api's order: dims 0, 3, 1, 2
    assert _status(lambda: size(None, "FRACTAL_NZ")) == 161002
    assert _status(lambda: size(w, "NC1HWC0")) == 361001  # an unsupported transformation
    assert _status(lambda: size(img, "FRACTAL_NZ", np.int8)) == 361001  # NCHW to NZ needs additionalDtype -1
    assert _status(lambda: size(aa.to_device(np.zeros((0, 24), np.float16)), "FRACTAL_NZ")) == 361001  # fallback
    assert _status(lambda: size(aa.to_device(np.zeros((4,), np.float16)), "FRACTAL_NZ")) == 161002  # 1-D
    assert _status(lambda: size(aa.to_device(np.zeros((4, 4), np.float64)), "FRACTAL_NZ")) == 161002
    with pytest.raises(TypeError, match="srcTensor"):
        size(np.zeros((4, 4), np.float16), "FRACTAL_NZ")


@pytest.mark.parametrize("shape,fmt", CASES, ids=str)
def test_format_cast_takes_cann_s_cast_and_says_so(backend, shape, fmt):
    x = _values(shape, np.float16, 3)
    d = aa.to_device(x)
    route = aa.format_cast_route(d, fmt)
    want = DF.ROUTE_HOST
    if backend == "npu":
        want = DF.ROUTE_NPU_FORMAT_CAST if HAS else \
            DF.ROUTE_TRANS_MATMUL_WEIGHT if fmt == "FRACTAL_NZ" and len(shape) <= 3 else DF.ROUTE_HOST
    assert route == want
    y = aa.format_cast(d, fmt)
    assert y.format == aa.Format[fmt] and y.storage().tobytes() == F.encode(x, fmt).tobytes()
    public = PUBLIC_OF_RANK.get(len(shape), "ND")
    assert aa.format_cast_route(y, public) == (DF.ROUTE_NPU_FORMAT_CAST if backend == "npu" and HAS else DF.ROUTE_HOST)
    back = aa.format_cast(y, public)
    assert back.format == aa.Format[public] and back.numpy().tobytes() == x.tobytes()


def test_format_cast_keeps_the_host_route_where_cann_s_cast_does_not_fit(backend):
    """A 4-byte array stored with C0 16 reads back with C0 8 through the op_api (TransDataSpecial
    only for 16 elements), a float64 has no private format there, a 1-D array no NZ rank:
    these go through the host, exactly."""
    x = _values((40, 24), np.float32)
    nz16 = aa.format_cast(aa.to_device(x), "FRACTAL_NZ")  # torch_npu's default C0 16
    assert nz16.storage_shape == (2, 3, 16, 16)
    assert aa.format_cast_route(nz16, "ND") == DF.ROUTE_HOST
    assert aa.format_cast(nz16, "ND").numpy().tobytes() == x.tobytes()
    one = aa.to_device(_values((24,), np.float16))
    assert aa.format_cast_route(one, "FRACTAL_NZ") == DF.ROUTE_HOST
    assert aa.format_cast(one, "FRACTAL_NZ").storage().tobytes() == F.encode(one.numpy(), "FRACTAL_NZ").tobytes()


def test_the_documented_example_runs(backend):
    import re
    from pathlib import Path
    _skip_npu_without_it(backend)
    doc = (Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text()
    section = doc[doc.index("## CANN's own format cast"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None and "NpuFormatCast(src, dst)" in code.group(1)
    exec(compile(code.group(1), "docs/formats.md", "exec"), {})


def test_mm_takes_a_weight_cast_by_cann(backend):
    x, w = _values((5, 40), np.float16, 1), _values((40, 24), np.float16, 2)
    nz = aa.format_cast(aa.to_device(w), "FRACTAL_NZ")
    y_nz = aa.aclnn.Mm(aa.to_device(x), nz, aa.empty((5, 24), np.float16), 0).numpy()
    y = aa.aclnn.Mm(aa.to_device(x), aa.to_device(w), aa.empty((5, 24), np.float16), 0).numpy()
    assert y_nz.tobytes() == y.tobytes()


@pytest.mark.parametrize("release", ["8.1.RC1", "9.2.0"])
def test_the_numpy_backend_follows_the_release(numpy_backend, monkeypatch, release):
    monkeypatch.setenv("ASCEND_ACLNN_CANN_VERSION", release)
    d, nz = aa.to_device(_values((40, 24), np.float16)), aa.empty((40, 24), np.float16, format="FRACTAL_NZ")
    if release == "8.1.RC1":  # as the npu backend refuses them where CANN lacks them
        with pytest.raises(aa.CannLoadError, match="first in CANN 8.5.0"):
            aa.aclnn.NpuFormatCast(d, nz)
        assert _status(lambda: aa.aclnn.NpuFormatCastCalculateSizeAndFormat(d, "FRACTAL_NZ")) == 561003
        assert aa.format_cast(d, "FRACTAL_NZ").storage().tobytes() == F.encode(d.numpy(), "FRACTAL_NZ").tobytes()
    else:
        aa.aclnn.NpuFormatCast(d, nz)
        assert nz.numpy().tobytes() == d.numpy().tobytes()


def test_an_8_1_install_has_neither_and_format_cast_still_works(sim):
    """Against a simulator built as CANN 8.1.RC1: no header, no symbol; the raw call fails as for
    any operator the install lacks, the size function with 561003, and format_cast goes through
    aclnnTransMatmulWeight (ND to NZ) or the host, exactly."""
    from conftest import shared_build
    prefix = shared_build("cann8", cann_version="8.1.RC1").parent
    p = run_python("""
import numpy as np, ascend_aclnn as aa
from ascend_aclnn import device_formats as DF, formats as F
aa.set_backend("npu")
x = (np.random.default_rng(0).standard_normal((40, 24)) * 9).astype(np.float16)
d = aa.to_device(x)
try:
    aa.aclnn.NpuFormatCast(d, aa.empty((40, 24), np.float16, format="FRACTAL_NZ"))
    print("cast ran")
except aa.CannLoadError:
    print("cast missing")
try:
    aa.aclnn.NpuFormatCastCalculateSizeAndFormat(d, "FRACTAL_NZ")
except aa.AclnnError as e:
    print("size", e.status)
assert aa.format_cast_route(d, "FRACTAL_NZ") == DF.ROUTE_TRANS_MATMUL_WEIGHT
nz = aa.format_cast(d, "FRACTAL_NZ")
assert nz.storage().tobytes() == F.encode(x, "FRACTAL_NZ").tobytes()
img = (np.random.default_rng(1).standard_normal((2, 20, 3, 5)) * 9).astype(np.float16)
assert aa.format_cast_route(aa.to_device(img), "NC1HWC0") == DF.ROUTE_HOST
five = aa.format_cast(aa.to_device(img), "NC1HWC0")
assert five.storage().tobytes() == F.encode(img, "NC1HWC0").tobytes()
assert aa.format_cast_route(five, "NCHW") == DF.ROUTE_HOST
assert aa.format_cast(five, "NCHW").numpy().tobytes() == img.tobytes()
print("routes ok")
""", sim, ASCEND_HOME_PATH=str(prefix))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["cast", "missing", "size", "561003", "routes", "ok"], p.stdout


def test_the_numpy_backend_needs_no_cann_for_it():
    """With no CANN installed (no header declares it) the numpy backend still has the operator,
    from its CPU model's parameter list, as a script from an Atlas host expects."""
    p = run_python("""
import numpy as np, ascend_aclnn as aa
from ascend_aclnn import formats as F
aa.set_backend("numpy")
x = np.arange(40 * 24, dtype=np.float16).reshape(40, 24)
nz = aa.empty((40, 24), np.float16, format="FRACTAL_NZ")
aa.aclnn.NpuFormatCast(aa.to_device(x), nz)
assert nz.storage().tobytes() == F.encode(x, "FRACTAL_NZ").tobytes()
print(aa.aclnn.prototype("NpuFormatCast").header)
""", None, ASCEND_ACLNN_CANN_VERSION=None)
    assert p.returncode == 0, p.stderr
    assert "CPU model" in p.stdout
