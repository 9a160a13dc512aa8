"""The CPU reference against the PyTorch installed here (issue 41, item 3): pyproject's torch
extra states a range, CI runs this file (with the other torch-dependent ones) at both ends of
it, and a table row whose aten op the installed torch lacks, or whose arguments it names
otherwise, fails with one message naming that torch, not torch's own AttributeError.
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.cpu_reference import _torch, runner
from ascend_aclnn.cpu_reference import table as T
from conftest import ROOT

torch = pytest.importorskip("torch")


def _extra_range() -> tuple[str, str]:
    """The torch extra's bounds as pyproject.toml states them (">=2.X", "<2.Y")."""
    text = (ROOT / "pyproject.toml").read_text()
    (spec,) = re.findall(r'^torch = \["torch([^"]+)"\]', text, re.M)
    low, high = spec.split(",")
    return low, high


def test_the_installed_torch_is_in_the_extras_range():
    low, high = _extra_range()
    assert low.startswith(">=") and high.startswith("<") and not high.startswith("<="), (low, high)
    assert _torch.SUPPORTED == f"{low},{high}"  # what the messages name is what pip is told
    assert _torch.supported(torch.__version__), f"torch {torch.__version__} is outside {low},{high}"
    assert not _torch.supported("2.12.1+cpu") and not _torch.supported("2.15.0") and _torch.supported("2.14.9")


@pytest.mark.parametrize("some", [True, False])
def test_qr_runs_on_every_supported_torch(numpy_backend, some):
    """aten::qr is gone from torch 2.14: aclnnQr's rows compute it as linalg_qr, which every
    supported torch has, reduced for some=True and complete for some=False (torch.qr's)."""
    a = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    k = 3 if some else 5
    q, r = np.empty((5, k), np.float32), np.empty((k, 3), np.float32)
    aa.aclnn.Qr(a, some, q, r)
    want_q, want_r = np.linalg.qr(a.astype(np.float64), mode="reduced" if some else "complete")
    np.testing.assert_allclose(q @ r, a, atol=1e-5)
    np.testing.assert_allclose(np.abs(r), np.abs(want_r), atol=1e-5)  # up to the signs of the rows
    np.testing.assert_allclose(q.T @ q, np.eye(k), atol=1e-5)


def _with_row(monkeypatch, name, **changes):
    """The table's rows of ``name`` changed as if the installed torch's aten differed."""
    rows = tuple(replace(r, **changes) for r in T.rows(name))
    monkeypatch.setattr(runner, "table_rows", lambda n: rows if n == name else T.rows(n))
    monkeypatch.setattr(runner, "_resolved", {})


def test_an_aten_op_missing_from_the_installed_torch_names_the_version(numpy_backend, monkeypatch):
    _with_row(monkeypatch, "aclnnAbs", aten="abs_gone_in_this_torch.default")
    x = np.array([-1.0, 2.0], np.float32)
    with pytest.raises(NotImplementedError) as info:
        aa.aclnn.Abs(x, np.empty_like(x))
    message = str(info.value)
    assert "aclnnAbs" in message and "aten::abs_gone_in_this_torch.default" in message, message
    assert f"torch {torch.__version__}" in message, message
    assert T.source()["torch"] in message and "please report it" in message, message  # a supported torch
    monkeypatch.setattr(torch, "__version__", "2.12.0+cpu")
    with pytest.raises(NotImplementedError, match=r'torch 2\.12\.0\+cpu does not have; install a supported torch: '
                                                  r'pip install "torch>=2\.13'):
        aa.aclnn.Abs(x, np.empty_like(x))


def test_an_aten_argument_the_installed_torch_renamed_names_the_version(numpy_backend, monkeypatch):
    (row,) = T.rows("aclnnAbs")
    params = tuple(replace(b, arg="input_renamed") if b.bind == "arg" else b for b in row.params)
    _with_row(monkeypatch, "aclnnAbs", params=params)
    x = np.array([-1.0, 2.0], np.float32)
    with pytest.raises(NotImplementedError) as info:
        aa.aclnn.Abs(x, np.empty_like(x))
    message = str(info.value)
    assert "aten::abs.default" in message and "'input_renamed'" in message, message
    assert f"torch {torch.__version__}" in message and "abs(Tensor self)" in message, message
