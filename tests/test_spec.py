"""The operator-description framework itself: parameter kinds, C prototypes, binding.

A toy operator uses every kind, including those no current operator needs yet (bool,
int64 and string come with GroupNormSwish), so their conversions are pinned down now.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import ascend_aclnn
from ascend_aclnn.cann.prototypes import handle
from ascend_aclnn.ops.spec import Double, IntArray, OpSpec, Output, Scalar, Tensor

TOY = OpSpec(
    name="toy", aclnn="aclnnToy", summary="A toy operator.",
    params=(Tensor("x", "self", "input", dtypes=(np.dtype(np.float32),)),
            IntArray("sizes", "sizes"),
            Scalar("groups", "numGroups", c_kind="int64"),
            Scalar("layout", "dataFormatOptional", c_kind="string", default=None),
            Double("eps", "eps", 1e-5),
            Scalar("swish", "activateSwish", c_kind="bool", default=True)),
    outputs=(Output("y", "yOut", "output"),),
    infer=lambda a: [(a.x.shape, a.x.dtype)],
    check=lambda a, check: None,
    reference=lambda *args: None,
)
X = np.zeros((2, 3), np.float32)


def test_c_prototype_follows_the_parameter_kinds():
    assert TOY.c_argtypes == (handle, handle, ctypes.c_int64, ctypes.c_char_p, ctypes.c_double, ctypes.c_bool, handle)
    assert TOY.phase1_name == "aclnnToyGetWorkspaceSize"


def test_conversions():
    a = TOY.bind((X, np.array([1, 2]), np.int64(4)), {"eps": 1, "swish": np.bool_(False)})
    assert (a.sizes, a.groups, a.layout, a.eps, a.swish) == ((1, 2), 4, None, 1.0, False)
    assert type(a.eps) is float and type(a.swish) is bool
    assert a.outputs[0].shape == (2, 3) and not a.outputs[0].given


@pytest.mark.parametrize("args,kwargs,argument", [
    ((X, [1], 2.5), {}, "groups: expected an int64"),
    ((X, [1], True), {}, "groups: expected an int64"),
    ((X, [1], 2**63), {}, "groups: expected an int64"),
    ((X, [1], 2, b"NCHW"), {}, "layout: expected a str or None"),
    ((X, [1], 2), {"swish": 2}, "swish: expected a bool"),
    ((X, [1], 2), {"eps": None}, "eps: expected a real number"),
    ((X, [True], 2), {}, "sizes: expected a sequence of ints"),
    ((X, [2**64], 2), {}, "sizes: expected int64 values"),
    ((X, 3, 2), {}, "sizes: expected a sequence of ints"),
    ((X, [1], 2), {"out": [0.0]}, "out: expected a NumPy array or DeviceArray"),
])
def test_wrong_python_types_are_parameter_errors(args, kwargs, argument):
    with pytest.raises(ascend_aclnn.AclnnParamInvalidError, match=argument) as info:
        TOY.bind(args, kwargs)
    assert info.value.status == 161002 and info.value.api == "aclnnToyGetWorkspaceSize"


@pytest.mark.parametrize("args,kwargs,message", [
    ((X, [1], 2, None, 1e-5, True, 9), {}, "takes 6 positional arguments but 7 were given"),
    ((X, [1], 2), {"bogus": 1}, "unexpected keyword argument 'bogus'"),
    ((X, [1], 2), {"sizes": [1]}, "multiple values for argument 'sizes'"),
    ((X, [1]), {}, "missing required argument 'groups'"),
])
def test_call_shape_errors_are_type_errors(args, kwargs, message):
    with pytest.raises(TypeError, match=message):
        TOY.bind(args, kwargs)


def test_signature_and_docstring():
    assert str(TOY.signature) == ("(x: 'TensorLike', sizes: 'Sequence[int]', groups: 'int', "
                                  "layout: 'Optional[str]' = None, eps: 'float' = 1e-05, swish: 'bool' = True, "
                                  "*, out: 'Optional[TensorLike]' = None) -> 'ArrayLike'")
    doc = TOY.docstring()
    assert "aclnnToyGetWorkspaceSize + aclnnToy" in doc and "aclnn parameter ``dataFormatOptional``" in doc


def test_broadcast_inputs(backend):
    x = np.broadcast_to(np.arange(4, dtype=np.float32), (2, 3, 4))
    assert x.strides[0] == 0
    np.testing.assert_array_equal(ascend_aclnn.upsample_nearest_exact1d(x, [7]),
                                  ascend_aclnn.upsample_nearest_exact1d(np.ascontiguousarray(x), [7]))
    np.testing.assert_array_equal(ascend_aclnn.upsample_nearest_exact1d_backward(x, [4], [2, 3, 2]),
                                  ascend_aclnn.upsample_nearest_exact1d_backward(np.ascontiguousarray(x), [4], [2, 3, 2]))


# Several outputs, one of them optional, and an input that must be contiguous.
PAIR = OpSpec(
    name="pair", aclnn="aclnnPair", summary="A toy operator with two outputs.",
    params=(Tensor("x", "self", "input", dtypes=(np.dtype(np.float32),)),
            Tensor("mask", "mask", "raw bytes", dtypes=(np.dtype(np.int8),), contiguous=True),
            Scalar("want_b", "bIsRequire", c_kind="bool", default=True)),
    outputs=(Output("a", "aOut", "first"), Output("b", "bOut", "second", required_by="want_b")),
    infer=lambda a: [(a.x.shape, a.x.dtype), ((2,), a.x.dtype)],
    check=lambda a, check: None,
    reference=lambda x, mask, want_b: (x, np.zeros(2, np.float32)),
)
MASK = np.zeros(4, np.int8)


def test_several_outputs_bind_and_annotate():
    assert str(PAIR.signature).endswith(
        "*, out: 'Optional[tuple[Optional[TensorLike], ...]]' = None) -> "
        "'tuple[ArrayLike, Optional[ArrayLike]]'")  # only the output a flag can leave out is Optional
    assert "None when want_b is False" in PAIR.docstring()
    a = PAIR.bind((X, MASK), {"out": (None, np.zeros(2, np.float32))})
    assert [o.given for o in a.outputs] == [False, True] and PAIR.required(a) == [True, True]
    with pytest.raises(ascend_aclnn.AclnnParamInvalidError, match=r"out\[1\] \(b\): expected shape \(2,\), got shape \(3,\)"):
        PAIR.bind((X, MASK), {"out": (None, np.zeros(3, np.float32))})
    with pytest.raises(ascend_aclnn.AclnnParamInvalidError, match="out: expected a tuple of 2 arrays"):
        PAIR.bind((X, MASK), {"out": np.zeros(2, np.float32)})


def test_an_output_not_required_gets_scratch_memory():
    user_b = np.full(2, 7.0, np.float32)
    a = PAIR.bind((X, MASK, False), {"out": (None, user_b)})
    assert PAIR.required(a) == [True, False]
    assert a.outputs[1].value is None and not a.outputs[1].given  # the user's array is never handed to C


def test_contiguous_only_input_refuses_a_view():
    with pytest.raises(ascend_aclnn.AclnnParamInvalidError, match=r"mask: expected a C-contiguous array .* strides \(2,\)"):
        PAIR.bind((X, np.zeros(8, np.int8)[::2]), {})
    assert PAIR.bind((X, MASK), {}).mask.value is MASK
