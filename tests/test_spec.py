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
    ((X, [1], 2), {"swish": 1}, "swish: expected a bool"),
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
    assert str(TOY.signature) == ("(x: 'ArrayLike', sizes: 'Sequence[int]', groups: 'int', "
                                  "layout: 'Optional[str]' = None, eps: 'float' = 1e-05, swish: 'bool' = True, "
                                  "*, out: 'Optional[ArrayLike]' = None) -> 'ArrayLike'")
    doc = TOY.docstring()
    assert "aclnnToyGetWorkspaceSize + aclnnToy" in doc and "aclnn parameter ``dataFormatOptional``" in doc


def test_broadcast_inputs(backend):
    x = np.broadcast_to(np.arange(4, dtype=np.float32), (2, 3, 4))
    assert x.strides[0] == 0
    np.testing.assert_array_equal(ascend_aclnn.upsample_nearest_exact1d(x, [7]),
                                  ascend_aclnn.upsample_nearest_exact1d(np.ascontiguousarray(x), [7]))
    np.testing.assert_array_equal(ascend_aclnn.upsample_nearest_exact1d_backward(x, [4], [2, 3, 2]),
                                  ascend_aclnn.upsample_nearest_exact1d_backward(np.ascontiguousarray(x), [4], [2, 3, 2]))
