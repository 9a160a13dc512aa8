"""Docstrings say what happens: every exception an operator's docstring names exists, and
every exception an operator raises for its error inputs is named in its docstring."""
from __future__ import annotations

import builtins
import re

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn import errors
from op_db import OP_DB

OPS = sorted(OP_DB)


def _named(doc: str) -> set[str]:
    return set(re.findall(r"\b([A-Z][A-Za-z]*Error)\b", doc))


@pytest.mark.parametrize("op", OPS)
def test_every_named_exception_exists(op):
    for name in _named(getattr(aa, op).__doc__):
        assert hasattr(errors, name) or hasattr(builtins, name), f"{op}'s docstring names {name}, which does not exist"


@pytest.mark.parametrize("op", OPS)
def test_every_raised_exception_is_named(op, backend):
    doc = getattr(aa, op).__doc__
    for case in OP_DB[op].error_cases:
        with pytest.raises(Exception) as info:
            getattr(aa, op)(*case.args, **case.kwargs)
        raised = type(info.value).__name__
        assert raised in doc, f"{op} raises {raised} for {case.id}, which its docstring does not name"


def test_the_max_pool_backward_kernel_fault_is_the_class_its_docstring_names(numpy_backend):
    x = np.zeros((1, 1, 4, 4), np.float32)
    out, mask = aa.max_pool2d_with_mask(x, [2, 2], [2, 2], [0, 0], [1, 1])
    mask.view(np.int32)[:out.size] = 10 ** 6  # past the input plane
    with pytest.raises(errors.AclRtAicoreExceptionError):
        aa.max_pool2d_with_mask_backward(out, x, mask, [2, 2], [2, 2], [0, 0], [1, 1])
    doc = " ".join(aa.max_pool2d_with_mask_backward.__doc__.split())
    sentence = next(s for s in doc.split(". ") if "numpy backend" in s and "fault" in s)
    assert _named(sentence) == {"AclRtAicoreExceptionError"}, sentence
