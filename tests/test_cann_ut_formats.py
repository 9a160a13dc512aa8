"""CANN's own op_api unit-test cases that pass tensors in a format other than the one the
package passed before formats could be given (tests/fixtures/cann_ut/format_cases.json:
shapes, dtypes, formats and expected statuses transcribed from hicann/ops-nn, ops-math and
ops-cv), run as raw calls on both backends: each must end with the status CANN's test
expects (0, or the error code of phase 1). Cases not run say why in the fixture."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import ascend_aclnn as aa

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "cann_ut" / "format_cases.json"
CASES = json.loads(FIXTURE.read_text())["cases"]
RUN = [c for c in CASES if "skip" not in c]
PAIRS = [(b, c) for c in RUN for b in c.get("backends", ("numpy", "npu"))]


def _arg(a):
    if isinstance(a, dict) and "ints" in a:
        return list(a["ints"])
    if not isinstance(a, dict):
        return a  # a scalar, or None for a null pointer
    dtype = aa.bfloat16 if a["dtype"] == "bfloat16" else np.dtype(a["dtype"])
    shape = tuple(a["tensor"])
    values = np.ones(shape, np.float32) if np.dtype(dtype).kind in "fV" else np.zeros(shape, np.int64)
    if a.get("transposed_view"):  # the case's strides (1, rows): a transposed view of a contiguous array
        return np.ascontiguousarray(values.T).astype(dtype).T
    d = aa.to_device(values.astype(dtype), format=a["format"], c0=a.get("c0"))
    if "storage_shape" in a:
        assert d.storage_shape == tuple(a["storage_shape"]), (d.storage_shape, a["storage_shape"])
    return d


def _status(op: str, args: list) -> int:
    try:
        getattr(aa.aclnn, op[len("aclnn"):])(*[_arg(a) for a in args])
    except aa.AclnnError as exc:
        return exc.status
    aa.synchronize()
    return 0


def _release_under_test() -> str | None:
    """The CANN release the tests run against (the simulator's build, or a real install)."""
    from ascend_aclnn.ops.group_norm import _installed_release
    return _installed_release(os.environ.get("ASCEND_HOME_PATH"), os.environ.get("ASCEND_TOOLKIT_HOME"))[0]


def _skip_before(release: str, op: str) -> None:
    from ascend_aclnn.cann import version
    if version.at_least(_release_under_test(), release) is False:
        pytest.skip(f"{op} is in CANN {release} on; the CANN under test is {_release_under_test()}")


def _run_case(request, which, case):
    if "since" in case:
        _skip_before(case["since"], case["op"])
    request.getfixturevalue("numpy_backend" if which == "numpy" else "npu")
    for call in case["calls"]:
        assert _status(case["op"], call["args"]) == call["expected"], (case["source"], case["case"])


@pytest.mark.parametrize("which,case", [p for p in PAIRS if "soc" not in p[1]],
                         ids=[f"{b}-{c['case']}" for b, c in PAIRS if "soc" not in c])
def test_cann_ut_case_agrees(request, which, case):
    _run_case(request, which, case)


@pytest.mark.parametrize("which,case", [p for p in PAIRS if "soc" in p[1]],
                         ids=[f"{b}-{c['case']}" for b, c in PAIRS if "soc" in c])
def test_cann_ut_case_of_another_soc_agrees(request, monkeypatch, which, case):
    """The case's SoC, as both backends read it at each call: the simulator's aclrtGetSocName
    and the numpy backend's ASCEND_ACLNN_SOC_NAME."""
    monkeypatch.setenv("ASCEND_SIM_SOC_NAME", case["soc"])
    monkeypatch.setenv("ASCEND_ACLNN_SOC_NAME", case["soc"])
    _run_case(request, which, case)


def test_the_fixture_says_why_each_case_left_is_not_run():
    assert RUN and all(c["calls"] for c in RUN)
    for c in CASES:
        if "skip" in c:
            assert c["skip"].split(":")[0] in ("not expressible", "not runnable", "another SoC", "no expectation",
                                               "no format case"), c["case"]
            assert bool(c["calls"]) == c["skip"].startswith("not runnable") == bool(c.get("expressible")), c["case"]
        assert set(c.get("backends", ("numpy", "npu"))) <= {"numpy", "npu"} and ("backends" in c) == \
            ("backends_why" in c), c["case"]
        # a storage other than the case's is run only where the op_api compares counts and says so
        stored = [a for call in c["calls"] for a in call["args"] if isinstance(a, dict) and "case_storage_shape" in a]
        assert bool(stored) == ("expressed_as" in c), c["case"]
        assert all(np.prod(a["case_storage_shape"]) == np.prod(a["storage_shape"]) for a in stored), c["case"]


@pytest.mark.parametrize("op,args", [
    # CANN's case_NULLPTR (im2col, im2col_backward): the out pointer NULL, the rest well formed
    ("Im2col", (np.ones((1, 2, 2, 3), np.float16), [2, 2], [1, 1], [1, 1], [2, 2], None)),
    ("Im2colBackward", (np.ones((1, 60, 56), np.float32), [10, 12], [4, 5], [1, 1], [0, 0], [1, 1], None)),
    ("ReplicationPad2d", (np.ones((1, 1, 4, 3), np.float16), [2, 2, 2, 2], None)),
    ("MaxPool2dWithMask", (np.ones((1, 3, 2, 2), np.float32), [2, 2], [2, 2], [0, 0], [1, 1], False,
                           np.zeros((1, 3, 1, 1), np.float32), None))])
def test_a_null_output_of_a_described_operator_is_refused_on_both_backends(backend, op, args):
    """A raw call passes None as a NULL pointer, and the described operators' op_apis require
    every output pointer (161001): the numpy backend must not allocate one instead."""
    with pytest.raises(aa.AclnnError) as info:
        getattr(aa.aclnn, op)(*args)
    assert info.value.status == 161001


def _matmul_expected(a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    # summed in double, rounded to float32 and then to the dtype, as the simulator does; the
    # CPU reference (torch) rounds its own way, so it is compared with a tolerance
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("xs,ws,dtype,nz", [
    ((3, 5), (5, 4), np.float16, False),
    ((5,), (5, 4), np.float32, False),           # a 1-D self: a row, dropped from out
    ((3, 5), (5,), np.float32, False),           # a 1-D mat2: a column, dropped from out
    ((5,), (5,), np.float32, False),             # a dot product: a 0-d out
    ((2, 1, 3, 5), (4, 5, 6), np.float16, False),  # batch dims broadcast
    ((2, 3, 5), (5, 6), np.float32, False),
    ((7, 20), (20, 18), np.float16, True),       # an NZ mat2 (padding in k and n)
    ((2, 7, 20), (2, 20, 18), aa.bfloat16, True),  # a batched NZ mat2
    ((3, 9), (9, 10), np.float32, True),         # float32's C0 of 8
])
def test_matmul_computes_torch_matmul_on_both_backends(backend, xs, ws, dtype, nz):
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, xs).astype(dtype)
    b = rng.uniform(-2, 2, ws).astype(dtype)
    want = _matmul_expected(a, b, dtype)
    mat2 = aa.to_device(b, format="FRACTAL_NZ", c0=8 if dtype == np.float32 else None) if nz else aa.to_device(b)
    out = aa.empty(want.shape, dtype)
    got = aa.aclnn.Matmul(aa.to_device(a), mat2, out, 0).numpy()
    assert got.shape == want.shape
    if backend == "npu":
        assert np.array_equal(got.astype(np.float32), want.astype(np.float32))
    else:
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("xs,ws,outs,dtype", [
    ((2, 3, 5), (4, 5, 6), (4, 3, 6), np.float32),   # batch dims 2 and 4 do not broadcast
    ((3, 5), (4, 6), (3, 6), np.float32),            # k differs
    ((1, 1, 1, 1, 1, 1, 3, 5), (5, 6), (1, 1, 1, 1, 1, 1, 3, 6), np.float32),  # more than 6 dims
    ((), (5, 6), (6,), np.float32),  # a 0-d self
    ((3, 5), (5, 6), (3, 6), np.float64),  # a dtype outside FLOAT, FLOAT16, BF16
])
def test_matmul_refuses_what_its_op_api_refuses_on_both_backends(backend, xs, ws, outs, dtype):
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.Matmul(np.ones(xs, dtype), np.ones(ws, dtype), aa.empty(outs, dtype), 0)
    assert info.value.status == 161002


def test_the_tensors_of_the_cases_left_inexpressible_cannot_be_built_on_either_backend(backend):
    """What the fixture says of case_error_tensor_size (a negative dim) and case_8 / case_9
    (ACL_FORMAT_UNDEFINED): no script of the package can build those tensors, on either backend,
    so no call carries them to CANN; the refusal is a ValueError before any C call."""
    with pytest.raises(ValueError, match="non-negative"):
        aa.empty((0, -2, 2, 3), np.float32)
    for undefined in (-1, "UNDEFINED"):
        with pytest.raises(ValueError, match="format"):
            aa.to_device(np.ones((1, 1, 4, 3), np.float16), format=undefined)


@pytest.mark.parametrize("dtype,c0", [(np.float16, None), (aa.bfloat16, None), (np.float32, 8)])
def test_matmul_weight_nz_computes_the_product_on_both_backends(backend, dtype, c0):
    _skip_before("8.5.0", "aclnnMatmulWeightNz")
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (7, 40)).astype(dtype)
    b = rng.uniform(-2, 2, (40, 24)).astype(dtype)
    want = _matmul_expected(a, b, dtype)
    got = aa.aclnn.MatmulWeightNz(aa.to_device(a), aa.to_device(b, format="FRACTAL_NZ", c0=c0),
                                  aa.empty((7, 24), dtype), 1).numpy()
    if backend == "npu":
        assert np.array_equal(got.astype(np.float32), want.astype(np.float32))
    else:
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2)


def test_matmul_weight_nz_refuses_a_float32_weight_stored_with_another_c0_on_both_backends(backend):
    """CANN compares only the element count of mat2's storage and then reads it with C0 8: a
    float32 weight stored with C0 16 (torch_npu's) would be misread, so both backends refuse it."""
    _skip_before("8.5.0", "aclnnMatmulWeightNz")
    b = aa.to_device(np.ones((32, 32), np.float32), format="FRACTAL_NZ", c0=16)
    with pytest.raises(aa.AclnnError) as info:
        aa.aclnn.MatmulWeightNz(aa.to_device(np.ones((4, 32), np.float32)), b, aa.empty((4, 32), np.float32), 1)
    assert info.value.status == 161002


def test_matmul_weight_nz_is_in_the_9_2_0_build_only():
    """8.1.RC1's aclnn_matmul.h declares aclnnMatmul alone; hicann/ops-nn's (8.5.0 on) adds
    aclnnMatmulWeightNz: a build of each release exports and declares what its release has."""
    from conftest import shared_build
    for release, present in (("8.1.RC1", False), ("9.2.0", True)):
        lib = shared_build("cann8", release)
        header = (lib.parent / "include" / "aclnnop" / "aclnn_matmul.h").read_text()
        assert ("aclnnMatmulGetWorkspaceSize(" in header) and \
            ("aclnnMatmulWeightNzGetWorkspaceSize(" in header) == present, release
        assert (b"aclnnMatmulWeightNzGetWorkspaceSize" in (lib / "libopapi.so").read_bytes()) == present, release
