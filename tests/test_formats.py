"""The format codec (ascend_aclnn.formats) against CANN's layouts: the aclFormat values of
8.1.RC1's acl_base.h, the storage shapes of CANN's TransData cases, every element's place
by the golden's index formulas (written out here as loops, not taken from the package), and
round trips of random shapes and dtypes."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_aclnn as aa
from ascend_aclnn import formats as F
from ascend_aclnn.cann.constants import AclFormat

# CANN 8.1.RC1 include/acl/acl_base.h, enum aclFormat
ACL_BASE_H = {"NCHW": 0, "NHWC": 1, "ND": 2, "NC1HWC0": 3, "FRACTAL_Z": 4, "NC1HWC0_C04": 12, "HWCN": 16,
              "NDHWC": 27, "FRACTAL_NZ": 29, "NCDHW": 30, "NDC1HWC0": 32, "FRACTAL_Z_3D": 33, "NC": 35, "NCL": 47}


def test_format_values_are_those_of_acl_base_h():
    assert {f.name: int(f) for f in aa.Format} == ACL_BASE_H
    assert {m.name.replace("ACL_FORMAT_", "").replace("ACL_", ""): int(m) for m in AclFormat} == ACL_BASE_H


def test_formats_by_name_and_value():
    assert F.as_format("fractal_nz") is aa.Format.FRACTAL_NZ
    assert F.as_format(3) is aa.Format.NC1HWC0
    for bad in ("NZ", 5, True, None, 2.0):
        with pytest.raises(ValueError, match="format"):
            F.as_format(bad)


# CANN's TransData cases (hicann/ops-math conversion/trans_data/tests/st/arch35/ttk_kernel_trans_data_st.csv):
# (dtype, ND shape, FRACTAL_NZ shape). The golden flattens batch dims into one leading dim (a 2-D
# input gets a leading 1); torch_npu, and this package, keep them: compare the fractal dims and counts.
TRANSDATA_CASES = [
    (np.float16, (768, 64, 197), (768, 13, 4, 16, 16)),
    (np.float16, (17, 19, 1, 96, 5), (17, 19, 1, 1, 6, 16, 16)),
    (np.float32, (64, 48), (1, 3, 4, 16, 16)),
    (np.int8, (2, 32, 64), (2, 2, 2, 16, 32)),
    (np.float16, (6, 32, 48), (6, 3, 2, 16, 16)),
]


@pytest.mark.parametrize("dtype,shape,cann", TRANSDATA_CASES)
def test_nz_storage_shapes_of_cann_cases(dtype, shape, cann):
    ours = F.storage_shape("FRACTAL_NZ", shape, dtype)
    assert ours[-4:] == cann[-4:]
    assert np.prod(ours) == np.prod(cann)


def test_the_size_helpers_published_examples():
    # aclnnCalculateMatmulWeightSizeV2's documentation: (510, 510) 16-bit -> 262144, (510, 270) int8 -> 147456
    assert F.storage_size("FRACTAL_NZ", (510, 510), np.float16) == 262144
    assert F.storage_size("FRACTAL_NZ", (510, 270), np.int8) == 147456


def test_c0():
    assert F.c0_for(np.float16) == F.c0_for(aa.bfloat16) == 16
    assert F.c0_for(np.int8) == F.c0_for(np.uint8) == 32
    assert F.c0_for(np.float32) == 16 and F.c0_for(np.float32, 8) == 8
    with pytest.raises(ValueError, match="no private format"):
        F.c0_for(np.float64)
    with pytest.raises(ValueError, match="c0"):
        F.c0_for(np.float32, 0)


def _cd(a, b):
    return -(-a // b)


def reference_encode(x, fmt, c0):
    """Element by element, from the layout table of CANN's golden (zeros elsewhere)."""
    if fmt == "FRACTAL_NZ":
        x2 = x.reshape((1,) + x.shape) if x.ndim == 1 else x
        *batch, m, n = x2.shape
        s = np.zeros((*batch, _cd(n, c0), _cd(m, 16), 16, c0), x.dtype)
        for idx in itertools.product(*map(range, x2.shape)):
            *b, i, j = idx
            s[(*b, j // c0, i // 16, i % 16, j % c0)] = x2[idx]
        return s
    if fmt == "NC1HWC0":
        n, c, h, w = x.shape
        s = np.zeros((n, _cd(c, c0), h, w, c0), x.dtype)
        for a, b, i, j in itertools.product(range(n), range(c), range(h), range(w)):
            s[a, b // c0, i, j, b % c0] = x[a, b, i, j]
        return s
    if fmt == "FRACTAL_Z":
        n, c, h, w = x.shape
        s = np.zeros((_cd(c, c0) * h * w, _cd(n, 16), 16, c0), x.dtype)
        for a, b, i, j in itertools.product(range(n), range(c), range(h), range(w)):
            s[(b // c0 * h + i) * w + j, a // 16, a % 16, b % c0] = x[a, b, i, j]
        return s
    if fmt == "NDC1HWC0":
        n, c, d, h, w = x.shape
        s = np.zeros((n, d, _cd(c, c0), h, w, c0), x.dtype)
        for a, b, e, i, j in itertools.product(range(n), range(c), range(d), range(h), range(w)):
            s[a, e, b // c0, i, j, b % c0] = x[a, b, e, i, j]
        return s
    n, c, d, h, w = x.shape  # FRACTAL_Z_3D
    c1 = _cd(c, c0)
    s = np.zeros((d * c1 * h * w, _cd(n, 16), 16, c0), x.dtype)
    for a, b, e, i, j in itertools.product(range(n), range(c), range(d), range(h), range(w)):
        s[((e * c1 + b // c0) * h + i) * w + j, a // 16, a % 16, b % c0] = x[a, b, e, i, j]
    return s


CASES = [("FRACTAL_NZ", (40, 24)), ("FRACTAL_NZ", (2, 17, 33)), ("FRACTAL_NZ", (5,)), ("FRACTAL_NZ", (1, 2, 16, 32)),
         ("NC1HWC0", (2, 20, 3, 2)), ("FRACTAL_Z", (17, 20, 2, 3)), ("NDC1HWC0", (2, 35, 2, 2, 1)),
         ("FRACTAL_Z_3D", (18, 5, 2, 1, 3))]


@pytest.mark.parametrize("fmt,shape", CASES)
@pytest.mark.parametrize("dtype,c0", [(np.float16, None), (np.int8, None), (np.float32, None), (np.float32, 8),
                                      (aa.bfloat16, None)])
def test_every_element_where_cann_puts_it(fmt, shape, dtype, c0):
    x = (np.arange(np.prod(shape)) % 97 + 1).astype(dtype).reshape(shape)  # no zeros: padding is told apart
    want = reference_encode(x, fmt, F.c0_for(dtype, c0))
    got = F.encode(x, fmt, c0)
    assert got.shape == want.shape == F.storage_shape(fmt, shape, dtype, c0)
    assert got.dtype == x.dtype and got.flags.c_contiguous
    assert np.array_equal(got, want)
    assert np.array_equal(F.decode(got, fmt, shape, c0), x)


DTYPES = [np.float16, np.int8, np.uint8, np.float32, np.int32, aa.bfloat16, np.int16]


@st.composite
def arrays(draw):
    fmt = draw(st.sampled_from(sorted(f.name for f in F.PRIVATE)))
    rank = {"FRACTAL_NZ": draw(st.integers(1, 4)), "NC1HWC0": 4, "FRACTAL_Z": 4}.get(fmt, 5)
    shape = tuple(draw(st.lists(st.integers(0 if fmt == "FRACTAL_NZ" else 1, 40 if rank <= 2 else 9),
                                min_size=rank, max_size=rank)))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    c0 = draw(st.sampled_from([None, 8, 16])) if dtype.itemsize == 4 else None
    bits = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).integers(0, 256, int(np.prod(shape)) * dtype.itemsize,
                                                                         dtype=np.uint8)
    return fmt, bits.view(dtype).reshape(shape), c0


@settings(max_examples=300, deadline=None)
@given(arrays())
def test_round_trips_bit_for_bit_with_zero_padding(case):
    fmt, x, c0 = case  # arbitrary bits: NaNs of every payload included
    s = F.encode(x, fmt, c0)
    assert s.shape == F.storage_shape(fmt, x.shape, x.dtype, c0)
    back = F.decode(s, fmt, x.shape, c0)
    assert back.shape == x.shape and back.dtype == x.dtype
    assert back.tobytes() == x.tobytes()
    # everything not holding an element is zero
    assert np.count_nonzero(s.view(np.uint8)) == np.count_nonzero(x.view(np.uint8))


def test_refusals():
    with pytest.raises(ValueError, match="4-D"):
        F.encode(np.zeros((2, 3)), "NC1HWC0")
    with pytest.raises(ValueError, match="stored as"):
        F.decode(np.zeros((1, 2, 16, 16), np.float16), "FRACTAL_NZ", (40, 24))
    with pytest.raises(ValueError, match="no private format"):
        F.encode(np.zeros((2, 3), np.float64), "FRACTAL_NZ")
    assert F.storage_shape("NHWC", (1, 2, 3, 4), np.float16) == (1, 2, 3, 4)
