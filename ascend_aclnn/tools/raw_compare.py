"""``compare --op aclnnXxx``: any aclnn operator with a CPU reference, on the chosen backend
against that reference (ascend_aclnn.cpu_reference), under the same precision standard as
the described functions.

A raw operator has no example arguments and no shape inference, so a case gives every
input parameter, in header order (``--args``, ``"args"``) or by the header's names
(``--kwargs``, ``"kwargs"``); ``--shape S`` gives the first tensor parameter. Values are
written as for the described functions' cases (``{"tensor": shape, ...}``, ``{"values":
...}``, numbers, lists, strings, null for a NULL pointer). A dtype (aclDataType) is its
name, ``"float32"``. Outputs may be given as tensors too (their shape and dtype are then
the caller's, as on the NPU); an output not given is allocated from the CPU reference's
result (its shape and dtype), which therefore runs first. Every written parameter is
compared, pre-filled with the same zeros on both sides. A tensor given with a
``"format"`` (and optionally its ``"storage_shape"``) is passed to each side as a
DeviceArray in that format (``to_device(x, format=...)``), and compared as logical arrays.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import numpy as np

from .cases import CaseError, TensorValue, _parse_value, seeded

__all__ = ["RawCase", "is_raw_name", "parse_raw_case", "raw_job_parts", "raw_values"]

RAW_FIELDS = ("op", "dtype", "args", "kwargs", "name")


def is_raw_name(op: Any) -> bool:
    """An aclnn operator's name ("aclnnSoftmax"; "aclRfft1D"), not a function's ("softmax")."""
    return isinstance(op, str) and op.startswith("acl")


@dataclass
class RawCase:
    operator: Any                    # ascend_aclnn.aclnn.RawOperator
    dtype: np.dtype[Any]
    given: dict[str, Any]            # Python parameter name -> parsed value
    name: Optional[str] = None
    number: int = 0

    @property
    def op(self) -> str:
        return str(self.operator.prototype.name)

    def label(self) -> str:
        if self.name:
            return self.name
        first = next((v for v in self.given.values() if isinstance(v, TensorValue)), None)
        shape = "" if first is None else "[" + ",".join(map(str, first.shape)) + "]"
        return f"#{self.number} {self.op}{shape}" if self.number else f"{self.op}{shape}"

    def written(self) -> list[int]:
        return [i for i, p in enumerate(self.operator.spec.params) if getattr(p, "written", False)]

    def inputs(self, rng: np.random.Generator, placeholder: bool = False) -> list[Any]:
        """One value per parameter; an output not given is None (allocated later)."""
        from .cases import _materialise
        return [_materialise(self.given[p.name], rng, placeholder) if p.name in self.given else None
                for p in self.operator.spec.params]


def _dtype_value(v: Any, where: str) -> Any:
    from ..tensors import ACL_DTYPES, dtype_name
    names = {dtype_name(d): np.dtype(d) for d in ACL_DTYPES}
    if not isinstance(v, str) or v not in names:
        raise CaseError(where, f"expected a dtype name ({', '.join(names)}), got {v!r}")
    return names[v]


def parse_raw_case(obj: Any, dtype_name_: Optional[str] = None, number: int = 0) -> RawCase:
    """A case of an aclnn operator (see the module docstring), checked field by field."""
    from .. import aclnn
    from ..cann import headers
    from ..ops.spec import DataType, Tensor, TensorList
    if not isinstance(obj, dict):
        raise CaseError("", f"expected an object with {', '.join(RAW_FIELDS)}")
    extra = [k for k in obj if k not in RAW_FIELDS]
    if extra:
        raise CaseError(str(extra[0]), f"unknown field; a case has {', '.join(RAW_FIELDS)}")
    op = obj.get("op")
    if not isinstance(op, str) or not is_raw_name(op):
        raise CaseError("op", f"expected an aclnn operator's name such as 'aclnnSoftmax', got {op!r}")
    try:
        operator = aclnn.operator(op)
    except (headers.HeaderLookupError, headers.UnsupportedPrototypeError, TypeError, ValueError) as exc:
        raise CaseError("op", str(exc)) from None
    from ..cpu_reference import runner
    ref, refused = runner.resolved_for(operator.spec)
    if ref is None:  # nothing to compare with: the case cannot run
        raise CaseError("op", runner.missing(operator.prototype.name, refused))
    from ..cpu_reference import _torch
    if ref.framework == "torch" and not _torch.available():  # refused before any work, not a failed case
        raise CaseError("op", f"{operator.prototype.name}'s CPU reference runs on PyTorch, which is not installed: "
                              f"{_torch.INSTALL}")
    dtype = _dtype_value(obj.get("dtype", dtype_name_ or "float32"), "dtype")
    params = operator.spec.params
    by_name = {p.name: p for p in params}
    args, kwargs = obj.get("args", []), obj.get("kwargs", {})
    if not isinstance(args, list):
        raise CaseError("args", "expected a list of arguments in the header's order")
    if len(args) > len(params):
        raise CaseError("args", f"{operator.prototype.name} takes {len(params)} parameters "
                                f"({', '.join(p.name for p in params)}), got {len(args)}")
    if not isinstance(kwargs, dict):
        raise CaseError("kwargs", "expected an object of parameters by the header's names")
    pairs = [(p.name, v, f"args[{i}]") for i, (p, v) in enumerate(zip(params, args))]
    for key, v in kwargs.items():
        if key not in by_name:
            raise CaseError(f"kwargs.{key}", f"{operator.prototype.name} has no parameter {key!r}; its parameters "
                                             f"are {', '.join(by_name)}")
        if any(key == n for n, _, _ in pairs):
            raise CaseError(f"kwargs.{key}", f"{key!r} is also given in args")
        pairs.append((key, v, f"kwargs.{key}"))
    given: dict[str, Any] = {}
    for key, v, where in pairs:
        p = by_name[key]
        if isinstance(p, DataType):
            given[key] = _dtype_value(v, where)
            continue
        parsed = _parse_value(v, where, p, dtype, 0)
        if getattr(p, "written", False) and parsed is not None and not isinstance(p, (Tensor, TensorList)):
            raise CaseError(where, "expected a tensor")
        given[key] = parsed
    missing = [p.name for p in params if p.name not in given and not getattr(p, "written", False)]
    if missing:
        raise CaseError("args", f"{operator.prototype.name} has no example to take arguments from: give "
                                f"{', '.join(missing)} (null for a NULL pointer)")
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise CaseError("name", "expected a string")
    case = RawCase(operator, dtype, given, name, number)
    _check(case, {key: where for key, _, where in pairs})
    return case


def _check(case: RawCase, where_of: dict[str, str]) -> None:
    """The conversion checks of every parameter, on placeholder tensors (nothing runs); an
    error names where the value was given (args[2] (alpha (const aclScalar *)))."""
    from ..errors import AclnnError
    values = case.inputs(seeded(0, "check"), placeholder=True)
    try:
        case.operator.spec.bind(tuple(values), {})
    except AclnnError as exc:
        arg = exc.argument or ""
        where = where_of.get(arg.split(" ", 1)[0].split("[", 1)[0])
        field = f"{where} ({arg})" if where else arg or "args"
        raise CaseError(field, f"refused: {exc.detail or str(exc).splitlines()[0]}") from None
    except TypeError as exc:
        raise CaseError("args", str(exc)) from None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with np.errstate(all="ignore"):
        yield


def _copy(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, list):
        return [_copy(e) for e in v]
    return v


def _host(v: Any) -> Any:
    from ..tensors import DeviceArray
    if isinstance(v, DeviceArray):
        return v.numpy()
    if isinstance(v, list):
        return [_host(e) for e in v]
    return np.asarray(v)


@dataclass
class StatCheck:
    """A sampled operator's statistic on one backend's output, in place of a golden value:
    compare reports it as a row that passes when |observed - expected| <= tolerance."""
    check: Any  # formulas.sampled.Check

    def report(self) -> Any:
        from ..testing import CompareReport, Tolerance
        c = self.check
        err = abs(c.observed - c.expected)
        return CompareReport(bool(c.passed), "statistic", (), 1, int(c.passed), err,
                             err / abs(c.expected) if c.expected else err, None, c.observed, c.expected,
                             Tolerance(0.0, c.tolerance, c.tolerance),
                             None if c.passed else f"{c.label}: {c.observed:.6g}, expected {c.expected:.6g} "
                                                   f"+- {c.tolerance:.3g} (a sampled operator: checked by statistics)")


def raw_values(case: RawCase, rng: np.random.Generator) -> list[Any]:
    """One value per parameter, in header order; an output the case does not give is allocated
    (zeros) from the CPU reference's result, which runs first: a raw operator has no shape
    inference."""
    from ..api import call
    from ..backends import use_backend
    from ..cpu_reference import runner
    values = case.inputs(rng)
    written = case.written()
    if any(values[i] is None for i in written):
        with use_backend("numpy"), runner.capturing() as results, _quiet():
            call(case.operator.spec, *_copy(values))
        for i in written:
            if values[i] is None and results.get(i) is not None:
                values[i] = _zeros_like(results[i])
    return values


def raw_job_parts(case: RawCase, seed: int, *labels: str) -> Callable[[str], list[tuple[str, Any, Any]]]:
    """The job: given a backend, (output name, actual, golden) for each written parameter; for
    a sampled operator (tier "sampled": values cannot match an NPU's bit for bit), (statistic,
    observed, StatCheck) for each statistic of the backend's outputs instead."""
    from ..api import call
    from ..backends import use_backend
    from ..cpu_reference import runner
    spec = case.operator.spec

    def execute(backend: str) -> list[tuple[str, Any, Any]]:
        values = raw_values(case, seeded(seed, *labels))
        written = case.written()
        ref, _ = runner.resolved_for(spec)
        if ref is not None and ref.tier == "sampled" and ref.stats is not None:
            return _sampled(ref, spec, values, written, backend)
        with use_backend("numpy"), _quiet():
            golden = _as_list(call(spec, *_placed(case, _copy(values))), len(written))
        with use_backend(backend):
            actual = _as_list(call(spec, *_placed(case, _copy(values))), len(written))
        found = []
        for k, i in enumerate(written):
            name = spec.params[i].name
            a, g = actual[k], golden[k]
            if a is None or g is None:
                continue
            if isinstance(g, list):
                found += [(f"{name}[{j}]", _host(x), _host(y)) for j, (x, y) in enumerate(zip(a, g))]
            else:
                found.append((name, _host(a), _host(g)))
        return found
    return execute


def _sampled(ref: Any, spec: Any, values: list[Any], written: list[int], backend: str) -> list[tuple[str, Any, Any]]:
    """Run a sampled operator on the backend (outputs shaped by a CPU run first) and check the
    statistics its formula names."""
    from ..api import call
    from ..backends import use_backend
    from ..cpu_reference import runner
    spec_params = ref.prototype.params
    if any(values[i] is None for i in written):
        with use_backend("numpy"), runner.capturing() as results, _quiet():
            call(spec, *_copy(values))
        for i in written:
            if values[i] is None and results.get(i) is not None:
                values[i] = _zeros_like(results[i])
    inputs = {p.name: _plain(v) for p, v in zip(spec_params, values) if not p.is_output or p.inplace}
    with use_backend(backend):
        got = _as_list(call(spec, *_copy(values)), len(written))
    checks = ref.stats(inputs, [None if g is None else _host(g) for g in got])
    return [(c.label, np.asarray([c.observed]), StatCheck(c)) for c in checks]


def _plain(v: Any) -> Any:
    """An input as the formula's statistics read it (host arrays, lists, numbers)."""
    if isinstance(v, list):
        return [_plain(e) for e in v]
    return _host(v) if hasattr(v, "shape") else v


def _placed(case: RawCase, values: list[Any]) -> list[Any]:
    """The values with each tensor the case gives a format to on the active backend, in it."""
    from ..api import to_device
    out = list(values)
    for i, p in enumerate(case.operator.spec.params):
        t = case.given.get(p.name)
        if isinstance(t, TensorValue) and t.format is not None and isinstance(out[i], np.ndarray):
            out[i] = to_device(out[i], format=t.format, c0=t.c0)
    return out


def _zeros_like(result: Any) -> Any:
    if isinstance(result, list):
        return [_zeros_like(r) for r in result]
    return np.zeros(result.shape, result.dtype)


def _as_list(got: Any, count: int) -> list[Any]:
    return list(got) if count > 1 else [got]

