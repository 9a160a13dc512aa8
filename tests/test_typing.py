"""Types as a user's type checker sees them, and the package's own.

The operators are overloaded so that NumPy arrays in give np.ndarray out (tuples of them
for several outputs) and DeviceArrays in give DeviceArray; the user's script below must
check clean under mypy --strict and pyright strict except for the one assignment that is
wrong on purpose (so each test can fail both ways). The package itself must check clean
under mypy --strict, and pyright --verifytypes must find every exported symbol typed.
mypy and pyright are in the test extra, so these always run.
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

USER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import ascend_aclnn as aa

    x = np.random.rand(2, 3, 5).astype(np.float32)
    y = aa.upsample_nearest_exact1d(x, [8])
    print(y.mean())                                   # np.ndarray, not a Union
    out, mask = aa.max_pool2d_with_mask(np.ones((1, 2, 8, 8), np.float32), 3, 2, 1)
    print(out.mean(), mask.shape)
    cols = aa.im2col(np.ones((1, 2, 8, 8), np.float32), 3, padding=1)
    print(cols.sum())
    d = aa.to_device(x)
    e = aa.upsample_nearest_exact1d(d, [8])
    print(e.numpy().mean())                           # a DeviceArray
    f = aa.upsample_nearest_exact1d(d, [8], out=aa.empty((2, 3, 8), np.float32))
    f.free()
    dx, dgamma, dbeta = aa.group_norm_swish_grad(
        np.ones((2, 4, 3), np.float32), np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
        np.ones((2, 4, 3), np.float32), np.ones(4, np.float32), np.ones(4, np.float32), 2)
    print(dx.shape, dgamma.sum(), dbeta.sum())        # the flags' defaults: all three there
    _, no_dgamma, dbeta2 = aa.group_norm_swish_grad(
        np.ones((2, 4, 3), np.float32), np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
        np.ones((2, 4, 3), np.float32), np.ones(4, np.float32), np.ones(4, np.float32), 2, dgamma_is_require=False)
    print(no_dgamma is None, dbeta2.sum())
    y16, mean, rstd = aa.group_norm_swish(np.ones((2, 4, 3), np.float16), [1.0] * 4, [0.0] * 4, 2)
    print(y16.mean(), mean.sum())                     # lists beside NumPy: NumPy
    wrong: aa.DeviceArray = aa.upsample_nearest_exact1d(x, [8])
""")


def _mypy_errors(tmp_path, name, text):
    """mypy --strict's error lines for a user's script (the package found as it is imported)."""
    script = tmp_path / name
    script.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=dict(os.environ, MYPYPATH=str(ROOT)))
    return [line for line in result.stdout.splitlines() if ": error:" in line], result.stdout + result.stderr


def test_a_users_script_type_checks_under_mypy_strict(tmp_path):
    errors, output = _mypy_errors(tmp_path, "use.py", USER_SCRIPT)
    wrong_line = USER_SCRIPT.splitlines().index(
        "wrong: aa.DeviceArray = aa.upsample_nearest_exact1d(x, [8])") + 1
    assert len(errors) == 1, output
    assert f"use.py:{wrong_line}: error: Incompatible types in assignment" in errors[0], errors
    assert 'variable has type "DeviceArray"' in errors[0], errors


def test_the_package_is_mypy_strict_clean(tmp_path):
    # cwd=ROOT: pyproject.toml's [tool.mypy] (torch optional) applies, as for a developer
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
         str(ROOT / "ascend_aclnn")],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0 and "Success: no issues found" in result.stdout, result.stdout + result.stderr


def test_a_users_script_type_checks_under_pyright_strict(tmp_path):
    (tmp_path / "use.py").write_text(USER_SCRIPT)
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    result = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "use.py"], capture_output=True,
                            text=True, timeout=600, cwd=tmp_path, env=_pyright_env())
    errors = [d for d in json.loads(result.stdout)["generalDiagnostics"] if d["severity"] == "error"]
    wrong_line = USER_SCRIPT.splitlines().index(
        "wrong: aa.DeviceArray = aa.upsample_nearest_exact1d(x, [8])")  # pyright counts lines from 0
    assert [(d["range"]["start"]["line"], d["rule"]) for d in errors] == [(wrong_line, "reportAssignmentType")], errors


def _pyright_env() -> dict[str, str]:
    """pyright finds the package in the source tree (installed or not), and the Python of
    this test run (the first on PATH) for NumPy and the rest."""
    return dict(os.environ, PYTHONPATH=str(ROOT),
                PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def _torch_importable() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


TORCH_USER_SCRIPT = textwrap.dedent("""
    import torch
    import ascend_aclnn as aa
    import ascend_aclnn.torch as aat

    t = torch.ones(1, 2, 4, 4)
    p: torch.Tensor = aa.replication_pad2d(t, [1, 1, 1, 1])   # a torch tensor in: Any out
    y = aat.replication_pad2d(t.requires_grad_(), [1, 1, 1, 1])
    print(y.sum().item())
    out, mask = aat.max_pool2d_with_mask(t, 2)
    print(p.shape, out.shape, mask.dtype)
    wrong: int = aat.im2col(t, 3, padding=1)
    aa.replication_pad2d(3.0, [1, 1, 1, 1])                     # a number is not a tensor
""")


@pytest.mark.skipif(not _torch_importable(), reason="torch is not installed here (CI's first environment has it)")
def test_a_torch_users_script_type_checks(tmp_path):
    errors, output = _mypy_errors(tmp_path, "use_torch.py", TORCH_USER_SCRIPT)
    lines = TORCH_USER_SCRIPT.splitlines()
    wrong = lines.index("wrong: int = aat.im2col(t, 3, padding=1)") + 1
    number = next(i for i, line in enumerate(lines) if line.endswith("# a number is not a tensor")) + 1
    assert len(errors) == 2, output
    assert f"use_torch.py:{wrong}: error: Incompatible types in assignment" in errors[0], errors
    assert 'expression has type "Tensor"' in errors[0], errors  # aat's functions say torch.Tensor
    assert f"use_torch.py:{number}: error: No overload variant" in errors[1], errors


def test_pyright_sees_every_exported_symbol_typed(tmp_path):
    """pyright --verifytypes over the package: every exported symbol's type is known. torch
    is optional: without it, the autograd Functions' base class cannot be known, and those
    eight classes are the only exception."""
    result = subprocess.run([sys.executable, "-m", "pyright", "--verifytypes", "ascend_aclnn", "--ignoreexternal",
                             "--outputjson"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                            env=_pyright_env())
    report = json.loads(result.stdout)
    assert not report["generalDiagnostics"], report["generalDiagnostics"]
    completeness = report["typeCompleteness"]
    assert completeness["packageRootDirectory"] == str(ROOT / "ascend_aclnn"), completeness["packageRootDirectory"]
    unknown = sorted(s["name"] for s in completeness["symbols"] if not s["isTypeKnown"])
    assert completeness["exportedSymbolCounts"]["withKnownType"] > 1000
    if _torch_importable():
        assert unknown == [] and completeness["completenessScore"] == 1, unknown
    else:
        functions = ("GroupNormSwish", "Im2col", "Im2colBackward", "MaxPool2dWithMask", "ReplicationPad2d",
                     "ReplicationPad2dBackward", "UpsampleNearestExact1d", "UpsampleNearestExact1dBackward")
        assert unknown == [f"ascend_aclnn.torch.{f}" for f in functions], unknown


# Each call's result as both checkers must see it (NDArray stands for np.ndarray of any
# shape and dtype): dx is always there, dgamma/dbeta are None or Optional by their flags,
# and a plan's runs are typed as the planned call.
RESOLVED_SCRIPT = textwrap.dedent("""
    import numpy as np
    import ascend_aclnn as aa

    x, m, g = np.ones((2, 4, 3), np.float32), np.ones((2, 2), np.float32), np.ones(4, np.float32)
    d = aa.to_device(x)
    flag: bool = bool(len(x))
    reveal_type(aa.group_norm_swish_grad(x, m, m, x, g, g, 2))
    reveal_type(aa.group_norm_swish_grad(x, m, m, x, [1.0] * 4, [0.0] * 4, 2))
    reveal_type(aa.group_norm_swish_grad(x, m, m, x, g, g, 2, dgamma_is_require=False))
    reveal_type(aa.group_norm_swish_grad(x, m, m, x, g, g, 2, dgamma_is_require=False, dbeta_is_require=False))
    reveal_type(aa.group_norm_swish_grad(x, m, m, x, g, g, 2, "NCHW", 1.0, True, flag))
    reveal_type(aa.group_norm_swish_grad(d, d, d, d, d, d, 2))
    reveal_type(aa.group_norm_swish_grad(d, d, d, d, d, d, 2, dbeta_is_require=False))
    reveal_type(aa.plan(aa.group_norm_swish_grad, x, m, m, x, g, g, 2)())
    reveal_type(aa.plan(aa.group_norm_swish_grad, d, d, d, d, d, d, 2, dgamma_is_require=flag)())
    reveal_type(aa.plan(aa.upsample_nearest_exact1d, x, [8])(x, [8]))
    reveal_type(aa.plan("im2col", x, 3)())
""")
RESOLVED = [
    "tuple[NDArray, NDArray, NDArray]",
    "tuple[NDArray, NDArray, NDArray]",
    "tuple[NDArray, None, NDArray]",
    "tuple[NDArray, None, None]",
    "tuple[NDArray, NDArray | None, NDArray | None]",
    "tuple[DeviceArray, DeviceArray, DeviceArray]",
    "tuple[DeviceArray, DeviceArray, None]",
    "tuple[NDArray, NDArray, NDArray]",
    "tuple[DeviceArray, DeviceArray | None, DeviceArray | None]",
    "NDArray",
    "Any",
]


def _short(text: str) -> str:
    for long in ("numpy.ndarray[tuple[Any, ...], numpy.dtype[Any]]", "ndarray[tuple[Any, ...], dtype[Any]]",
                 "numpy.ndarray[Any, numpy.dtype[Any]]", "ndarray[Any, dtype[Any]]"):  # NumPy 1.26's stubs
        text = text.replace(long, "NDArray")
    return text.replace("ascend_aclnn.tensors.DeviceArray", "DeviceArray")


def test_mypy_and_pyright_resolve_the_same_precise_overloads(tmp_path):
    (tmp_path / "resolved.py").write_text(RESOLVED_SCRIPT)
    _, output = _mypy_errors(tmp_path, "resolved.py", RESOLVED_SCRIPT)
    mypy = [_short(line.split('Revealed type is "', 1)[1].rstrip('"')) for line in output.splitlines()
            if "Revealed type is" in line]
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    result = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "resolved.py"], capture_output=True,
                            text=True, timeout=600, cwd=tmp_path, env=_pyright_env())
    pyright = [_short(d["message"].split('is "', 1)[1].rstrip('"')) for d in json.loads(result.stdout)
               ["generalDiagnostics"] if d["severity"] == "information" and d["message"].startswith("Type of")]
    assert mypy == RESOLVED, output
    assert pyright == RESOLVED, result.stdout


# Chained calls (issue 41, item 2): every output of every operator, NumPy and DeviceArray,
# fed to every other operator, as the README's Use block feeds y to the backward. Both
# checkers must type each call as they type it on fresh arrays, and refuse a wrong target.
_VALUES = {"Sequence[int]": "[1, 1]", "Union[int, Sequence[int]]": "[1, 1]", "int": "1"}


def _call(spec, tensor: str) -> str:
    args = [tensor if p.type_hint == "TensorLike" else _VALUES[p.type_hint]
            for p in spec.params if p.default is inspect.Parameter.empty]
    return f"aa.{spec.name}({', '.join(args)})"


def _chained_script() -> tuple[str, list[str]]:
    from ascend_aclnn.ops import REGISTRY
    lines = ["import numpy as np", "import ascend_aclnn as aa", "",
             "x = np.ones((2, 4, 4, 4), np.float32)", "d = aa.to_device(x)"]
    expected = []
    for fresh, kind in (("x", "NDArray"), ("d", "DeviceArray")):
        for source in REGISTRY:
            n = len(source.outputs)
            for i in range(n):
                r = f"r{len(lines)}"  # a variable of its own: a checker keeps a name's first type
                lines.append(f"{r} = {_call(source, fresh)}" + (f"[{i}]" if n > 1 else ""))
                for target in REGISTRY:
                    lines.append(f"reveal_type({_call(target, r)})")
                    m = len(target.outputs)
                    expected.append(kind if m == 1 else f"tuple[{', '.join([kind] * m)}]")
    # the README's own chain, through NumPy's functions on a result
    lines += ["out, mask = aa.max_pool2d_with_mask(x, 3, 2, 1)",
              "reveal_type(aa.max_pool2d_with_mask_backward(np.ones_like(out), x, mask, 3, 2, 1))",
              "wrong: int = aa.upsample_nearest_exact1d_backward(aa.upsample_nearest_exact1d(x, [8]), [8], [2, 4, 16])"]
    expected.append("NDArray")
    return "\n".join(lines) + "\n", expected


def test_chained_calls_resolve_to_arrays_under_both_checkers(tmp_path):
    script, expected = _chained_script()
    wrong = script.splitlines().index(next(line for line in script.splitlines() if line.startswith("wrong:")))
    errors, output = _mypy_errors(tmp_path, "chained.py", script)
    mypy = [_short(line.split('Revealed type is "', 1)[1].rstrip('"')) for line in output.splitlines()
            if "Revealed type is" in line]
    assert mypy == expected, [(i, t) for i, t in enumerate(mypy) if t != expected[i]][:5]
    assert len(errors) == 1 and f"chained.py:{wrong + 1}: error: Incompatible types" in errors[0], errors
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    result = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "chained.py"], capture_output=True,
                            text=True, timeout=600, cwd=tmp_path, env=_pyright_env())
    diagnostics = json.loads(result.stdout)["generalDiagnostics"]
    pyright = [_short(d["message"].split('is "', 1)[1].rstrip('"')) for d in diagnostics
               if d["severity"] == "information" and d["message"].startswith("Type of")]
    assert pyright == expected, [(i, t) for i, t in enumerate(pyright) if t != expected[i]][:5]
    assert [d["range"]["start"]["line"] for d in diagnostics if d["severity"] == "error"] == [wrong], diagnostics
