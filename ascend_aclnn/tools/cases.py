"""Your own cases for ``python -m ascend_aclnn compare``: an operator on your shapes and
arguments, on the chosen backend and on the NumPy reference.

On the command line, for one function (one case per ``--dtypes`` entry)::

    compare --ops replication_pad2d --shape 8,64,56,56 --kwargs '{"padding": [3, 3, 3, 3]}'
    compare --ops upsample_nearest_exact1d --args '[{"tensor": [8, 64, 100]}, [256]]'

or many at once from a JSON file (``compare --cases FILE``): a list of cases (or an object
``{"cases": [...]}``), each an object with these fields::

    "op"      required: the function, e.g. "replication_pad2d"
    "dtype"   the dtype of the tensors (default: the function's first dtype, float32)
    "args"    a list: the first len(args) arguments, in the function's order
    "kwargs"  an object: arguments by name
    "name"    a label for the output line (default: #<n> <op>[<first tensor's shape>])

Every argument you do not give keeps the value of the function's example (its
description's ``example(rng, dtype)``, the small valid call ``compare`` runs by default),
then the parameter's default. So override only the pieces you need, and keep arguments
that depend on each other consistent (a new input shape usually needs new sizes too).
``--shape S`` is shorthand for giving the first argument as ``{"tensor": S}``.

An argument is passed as written (numbers, lists of ints, strings, true/false, null), except
these objects:

``{"tensor": [8, 64, 56, 56]}``
    a tensor of that shape filled with seeded random values. Optional fields:
    ``"fill"``: "randn" (default: standard normal; small integers for integer dtypes),
    "rand" (uniform in [low, high), default [0, 1)), "randint" (integers in [low, high),
    default [0, 10)), "arange" (0, 1, 2, ... in C order), "zeros", "ones", or "full" (with
    ``"value"``: a number or "nan", "inf", "-inf"); ``"low"``, ``"high"``; ``"dtype"``:
    this tensor's own dtype (default: the case's dtype when the parameter accepts it, else
    the parameter's first dtype, e.g. int8 for a max-pool mask).
``{"values": [[1, 2], [3, 4]]}``
    a tensor with exactly these values (optional ``"dtype"`` as above).

Either may also carry ``"format"`` (an aclFormat name, e.g. "FRACTAL_NZ", "NHWC") and, with
it, ``"storage_shape"`` (checked against what that format stores the shape as): an aclnn
operator's case (``"op": "aclnnMm"``) passes that tensor in that format (ops-test-kit's
``tensor_formats`` / ``tensor_storage_shapes``); a described function passes its own
format, which a case may only restate.
``{"output_of": {"op": ..., "args": [...], "kwargs": {...}}, "index": 1}``
    output ``index`` (default 0) of another call, computed on the NumPy reference: e.g.
    max_pool2d_with_mask's mask for its backward, group_norm_swish's mean and rstd for its
    grad. The inner call is a case too (example defaults apply; its dtype defaults to the
    outer case's).

Example file::

    [{"op": "replication_pad2d", "args": [{"tensor": [8, 64, 56, 56]}, [3, 3, 3, 3]]},
     {"op": "upsample_nearest_exact1d", "dtype": "float16",
      "args": [{"tensor": [8, 64, 100], "fill": "arange"}, [256]]},
     {"op": "max_pool2d_with_mask_backward", "kwargs": {
        "grad_output": {"tensor": [8, 64, 28, 28]}, "input": {"tensor": [8, 64, 56, 56]},
        "mask": {"output_of": {"op": "max_pool2d_with_mask",
                               "args": [{"tensor": [8, 64, 56, 56]}, [3, 3], [2, 2], [1, 1], [1, 1]]},
                 "index": 1},
        "kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1]}}]

Everything is checked before anything runs, with the checks the operator itself makes: a
bad case stops the command with one line naming the case and the field (exit status 2).
That includes a file nested more than 100 levels deep, an integer longer than Python reads,
and a number a tensor's dtype cannot hold as it is (``"values"``, ``"value"``, ``"low"`` and
``"high"``: an integer in range for integer dtypes, at most the largest finite value for
floating ones), which a cast would otherwise wrap or turn into inf.
"""
from __future__ import annotations

import inspect
import json
import math
import sys
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # annotations only: the functions import the package's parts where they use them
    from ..ops.spec import OpSpec, Param

FILLS = ("randn", "rand", "randint", "arange", "zeros", "ones", "full")
CASE_FIELDS = ("op", "dtype", "args", "kwargs", "name")
TENSOR_FIELDS = ("tensor", "fill", "dtype", "low", "high", "value", "format", "storage_shape")
FORMAT_FIELDS = ("format", "storage_shape")  # ops-test-kit's tensor_formats / tensor_storage_shapes, per tensor
SPECIALS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
# Levels of JSON nesting a case file may have: 8 levels of output_of (3 or 4 levels each) and
# values of NumPy's most dimensions (64) fit; more is not a case, and the reader's recursion
# (json's own, then the parser's) would end in a RecursionError.
MAX_DEPTH = 100
MESSAGE_LIMIT = 300  # characters of a message: a value echoed back may be a file's worth


class CaseError(ValueError):
    """A case that cannot run: ``field`` is where (e.g. ``args[0].fill``), ``str()`` why (at
    most MESSAGE_LIMIT characters: what it quotes of the input is cut in the middle)."""

    def __init__(self, field_: str, message: str):
        if len(message) > MESSAGE_LIMIT:
            message = message[:MESSAGE_LIMIT - 60] + " ... " + message[-55:]
        super().__init__(message)
        self.field = field_


# ---- the parsed form ---------------------------------------------------------------------------

@dataclass
class TensorValue:
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fill: str = "randn"
    low: Optional[float] = None
    high: Optional[float] = None
    value: Optional[float] = None
    values: Optional[NDArray[Any]] = None  # explicit data ({"values": ...})
    format: Optional[int] = None  # an aclFormat the tensor is given in ("format")
    c0: Optional[int] = None      # a private format's C0 (from "storage_shape"; else the dtype's default)


@dataclass
class OutputOf:
    case: "UserCase"
    index: int
    where: str = ""  # the field it was given in, for errors


@dataclass
class UserCase:
    """One parsed, checked case. ``build(rng)`` makes its arguments."""
    spec: OpSpec
    dtype: np.dtype[Any]
    given: dict[str, Any]           # parameter name -> parsed value (TensorValue, OutputOf, plain, lists)
    name: Optional[str] = None
    number: int = 0                 # 1-based position in the file (0: from the command line)
    first_shape: Optional[tuple[int, ...]] = field(default=None)

    @property
    def op(self) -> str:
        return self.spec.name

    def label(self) -> str:
        if self.name:
            return self.name
        shape = "" if self.first_shape is None else "[" + ",".join(map(str, self.first_shape)) + "]"
        return f"#{self.number} {self.op}{shape}" if self.number else f"{self.op}{shape}"

    def build(self, rng: np.random.Generator, placeholder: bool = False) -> tuple[Any, ...]:
        """The positional arguments: the example's, overridden by the case's. With
        ``placeholder`` tensors are zeros (no random numbers) and another call's output is
        only shaped, not computed: enough for the operator's argument checks."""
        values: dict[str, Any] = {}
        if self.spec.example is not None:
            ex_args, ex_kwargs = self.spec.example(rng, self.dtype)
            values.update(zip((p.name for p in self.spec.params), ex_args))
            values.update(ex_kwargs)
        for name, v in self.given.items():
            values[name] = _materialise(v, rng, placeholder)
        args = []
        for p in self.spec.params:
            if p.name in values:
                args.append(values[p.name])
            elif p.default is not inspect.Parameter.empty:
                args.append(p.default)
            else:
                raise CaseError(p.name, f"missing argument {p.name!r}: {self.op} has no example to take it from")
        return tuple(args)


def _materialise(v: Any, rng: np.random.Generator, placeholder: bool) -> Any:
    if isinstance(v, TensorValue):
        return make_tensor(v, rng, placeholder)
    if isinstance(v, OutputOf):
        return _output_of(v, rng, placeholder)
    if isinstance(v, list):
        return [_materialise(x, rng, placeholder) for x in v]
    return v


def make_tensor(t: TensorValue, rng: np.random.Generator, placeholder: bool = False) -> NDArray[Any]:
    if t.values is not None:
        return t.values.astype(t.dtype)
    if placeholder or t.fill == "zeros":
        return np.zeros(t.shape, t.dtype)
    kind = t.dtype.kind
    if t.fill == "ones":
        return np.ones(t.shape, t.dtype)
    if t.fill == "full":
        return np.full(t.shape, t.value, np.float64 if kind in "fcV" else None).astype(t.dtype)
    if t.fill == "arange":
        return np.arange(math.prod(t.shape), dtype=np.float64).reshape(t.shape).astype(t.dtype)
    integer = kind in "biu"
    if t.fill == "randint" or (integer and t.fill in ("randn", "rand")):
        if kind == "b":
            return rng.integers(0, 2, t.shape).astype(t.dtype)
        default = (0, 10) if t.fill != "randn" else ((0, 4) if kind == "u" else (-3, 4))
        low = int(t.low) if t.low is not None else default[0]
        high = int(t.high) if t.high is not None else default[1]
        return rng.integers(low, high, t.shape).astype(t.dtype)
    if t.fill == "rand":
        lo = 0.0 if t.low is None else float(t.low)
        hi = 1.0 if t.high is None else float(t.high)
        data: NDArray[Any] = rng.uniform(lo, hi, t.shape)
        if kind == "c":
            data = data + 1j * rng.uniform(lo, hi, t.shape)
        return data.astype(t.dtype)
    data = rng.standard_normal(t.shape, dtype=np.float32)
    if kind == "c":
        data = data + 1j * rng.standard_normal(t.shape, dtype=np.float32)
    return data.astype(t.dtype)


def _output_of(v: OutputOf, rng: np.random.Generator, placeholder: bool) -> Any:
    from ..api import call
    from ..backends import use_backend
    from ..errors import AclnnError
    case = v.case
    args = case.build(rng, placeholder)
    if placeholder:  # its shape and dtype, from the operator's own inference
        try:
            bound = case.spec.bind(args, {})
        except AclnnError as exc:
            raise CaseError(f"{v.where}.output_of", f"{exc.argument or 'an argument'} refused by {case.op}: "
                                                    f"{exc.detail or str(exc).splitlines()[0]}") from None
        except TypeError as exc:
            raise CaseError(f"{v.where}.output_of", str(exc)) from None
        out = bound.outputs[v.index]
        return np.zeros(out.shape, out.dtype)
    with use_backend("numpy"):
        result = call(case.spec, *args)
    result = result if isinstance(result, tuple) else (result,)
    return result[v.index]


# ---- parsing and checking ----------------------------------------------------------------------

def _dtype(name: Any, where: str, allowed: Optional[Sequence[np.dtype[Any]]] = None) -> np.dtype[Any]:
    from ..tensors import ACL_DTYPES, dtype_name
    choices = list(allowed) if allowed is not None else list(ACL_DTYPES)
    names = [dtype_name(d) for d in choices]
    if not isinstance(name, str) or name not in names:
        raise CaseError(where, f"expected one of {', '.join(names)}, got {name!r}")
    return np.dtype(choices[names.index(name)])


def _number(v: Any, where: str, allow_special: bool = False) -> float:
    if allow_special and isinstance(v, str) and v.lower() in SPECIALS:
        return SPECIALS[v.lower()]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        extra = ' or "nan", "inf", "-inf"' if allow_special else ""
        raise CaseError(where, f"expected a number{extra}, got {v!r}")
    return v


def _shape(v: Any, where: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v):
        raise CaseError(where, f"expected a shape, a list of integers >= 0 such as [8, 64, 56, 56], got {v!r}")
    return tuple(v)


def _tensor_dtype(obj: dict[str, Any], where: str, param: Param, case_dtype: np.dtype[Any]) -> np.dtype[Any]:
    if "dtype" in obj:
        return _dtype(obj["dtype"], f"{where}.dtype")
    allowed: list[np.dtype[Any]] = [np.dtype(d) for d in (getattr(param, "dtypes", ()) or ())]
    if not allowed or case_dtype in allowed:
        return case_dtype
    return allowed[0]


def _parse_value(v: Any, where: str, param: Param, case_dtype: np.dtype[Any], depth: int) -> Any:
    if isinstance(v, list):
        return [_parse_value(x, f"{where}[{i}]", param, case_dtype, depth) for i, x in enumerate(v)]
    if not isinstance(v, dict):
        return v  # passed as written
    if "output_of" in v:
        extra = sorted(set(v) - {"output_of", "index"})
        if extra:
            raise CaseError(f"{where}.{extra[0]}", 'unknown field; an output_of object has "output_of" and "index"')
        if depth >= 8:
            raise CaseError(f"{where}.output_of", "nested too deeply (at most 8 levels)")
        inner = parse_case(v["output_of"], f"{where}.output_of", default_dtype=case_dtype, depth=depth + 1,
                           allow_name=False)
        index = v.get("index", 0)
        count = len(inner.spec.outputs)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise CaseError(f"{where}.index", f"expected an output index of {inner.op}, 0 to {count - 1} "
                                              f"({', '.join(o.name for o in inner.spec.outputs)}), got {index!r}")
        return OutputOf(inner, index, where)
    if "values" in v:
        extra = sorted(set(v) - {"values", "dtype", *FORMAT_FIELDS})
        if extra:
            raise CaseError(f"{where}.{extra[0]}", 'unknown field; a values object has "values", "dtype", "format" '
                                                   'and "storage_shape"')
        dt = _tensor_dtype(v, where, param, case_dtype)
        stack, leaves = [v["values"]], []
        while stack:  # every leaf a number (no bool, no string NumPy would convert), in dt's range
            x = stack.pop()
            if isinstance(x, list):
                stack.extend(x)
            elif isinstance(x, bool) or not isinstance(x, (int, float)):
                raise CaseError(f"{where}.values", f"expected a (nested) list of numbers of a regular shape, got "
                                                   f"{_kind(x)} in it")
            else:
                leaves.append(x)
        for x in leaves:
            _representable(x, dt, f"{where}.values")
        try:
            data = np.asarray(v["values"], dtype=np.float64 if dt.kind != "c" else np.complex128)
        except (TypeError, ValueError, OverflowError):
            raise CaseError(f"{where}.values", "expected a (nested) list of numbers of a regular shape") from None
        return _with_format(TensorValue(tuple(data.shape), dt, fill="values", values=data), v, where)
    if "tensor" not in v:
        raise CaseError(where, 'expected an argument value; the objects understood are {"tensor": shape, ...}, '
                               '{"values": [...]} and {"output_of": {...}, "index": n}, got an object with '
                               f"fields {', '.join(map(repr, v)) or 'none'}")
    extra = sorted(set(v) - set(TENSOR_FIELDS))
    if extra:
        raise CaseError(f"{where}.{extra[0]}", f"unknown field; a tensor has {', '.join(TENSOR_FIELDS)}")
    shape = _shape(v["tensor"], f"{where}.tensor")
    fill = v.get("fill", "randn")
    if fill not in FILLS:
        raise CaseError(f"{where}.fill", f"expected one of {', '.join(FILLS)}, got {fill!r}")
    dt = _tensor_dtype(v, where, param, case_dtype)
    t = TensorValue(shape, dt, fill)
    if "value" in v:
        if fill != "full":
            raise CaseError(f"{where}.value", f'only for "fill": "full" (this tensor\'s fill is {fill!r})')
        t.value = _number(v["value"], f"{where}.value", allow_special=True)
        if not math.isfinite(t.value) and dt.kind not in "fcV":
            raise CaseError(f"{where}.value", f"{v['value']!r} needs a floating-point dtype, not {dt.name}")
        if math.isfinite(t.value):
            _representable(t.value, dt, f"{where}.value")
    elif fill == "full":
        raise CaseError(f"{where}.value", 'required with "fill": "full"')
    for key in ("low", "high"):
        if key in v:
            if fill not in ("rand", "randint"):
                raise CaseError(f"{where}.{key}", f'only for "fill": "rand" or "randint" (this tensor\'s fill '
                                                  f"is {fill!r})")
            setattr(t, key, _number(v[key], f"{where}.{key}"))
    if fill == "randint":
        for key in ("low", "high"):
            value = getattr(t, key)
            if value is not None and value != int(value):
                raise CaseError(f"{where}.{key}", f"expected an integer for randint, got {value!r}")
    low = t.low if t.low is not None else (0.0 if fill == "rand" else 0)
    high = t.high if t.high is not None else (1.0 if fill == "rand" else 10)
    if fill in ("rand", "randint") and not low < high:
        raise CaseError(f"{where}.high", f"expected high > low, got low {low!r}, high {high!r}")
    if fill in ("rand", "randint") and dt.kind != "b":
        _fill_range(fill, low, high, dt, where)
    return _with_format(t, v, where)


def _with_format(t: TensorValue, v: dict[str, Any], where: str) -> TensorValue:
    """t with the tensor object's "format" (an aclFormat name or value) and "storage_shape"
    (which must be what that format stores t's shape as), checked."""
    if "format" not in v:
        if "storage_shape" in v:
            raise CaseError(f"{where}.storage_shape", 'only with "format"')
        return t
    from .. import formats
    from ..tensors import tag_problem
    try:
        fmt = formats.as_format(v["format"], f"{where}.format")
    except ValueError as exc:
        field_, _, detail = str(exc).partition(": ")
        raise CaseError(field_, detail) from None
    problem = tag_problem(fmt, t.shape)
    if problem is not None:
        raise CaseError(f"{where}.format", problem)
    if fmt in formats.PRIVATE:
        try:
            formats.c0_for(t.dtype)
        except ValueError as exc:
            raise CaseError(f"{where}.format", str(exc).partition(": ")[2]) from None
    if "storage_shape" in v:
        stored = _shape(v["storage_shape"], f"{where}.storage_shape")
        c0 = stored[-1] if fmt in formats.PRIVATE and t.dtype.itemsize == 4 and stored else None
        want = formats.storage_shape(fmt, t.shape, t.dtype, c0)
        if stored != want:
            raise CaseError(f"{where}.storage_shape", f"{fmt.name} stores a {t.dtype.name} tensor of shape "
                                                      f"{list(t.shape)} as {list(want)}, got {list(stored)}")
        t.c0 = c0
    t.format = int(fmt)
    return t

def _float_max(dt: np.dtype[Any]) -> float:
    if dt.kind in "fc":
        return float(np.finfo(dt).max)
    import ml_dtypes  # bfloat16 (kind "V"): NumPy's finfo does not know it
    return float(ml_dtypes.finfo(dt).max)  # type: ignore[no-untyped-call]


def _representable(x: float, dt: np.dtype[Any], where: str) -> None:
    """A finite number the dtype holds as it is: an integer in range for integer dtypes (a
    cast would wrap it or drop its fraction), at most the largest finite value for floating
    ones (a cast would make it inf)."""
    from ..tensors import dtype_name
    if dt.kind in "biu":
        low, high = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        if not (isinstance(x, int) or (math.isfinite(x) and x == int(x))):
            raise CaseError(where, f"expected integers for {dtype_name(dt)}, got {_kind(x)}")
        if not low <= x <= high:
            raise CaseError(where, f"{_kind(x)} is out of the range of {dtype_name(dt)} ({low} to {high})")
    elif (isinstance(x, int) or math.isfinite(x)) and abs(x) > _float_max(dt):
        raise CaseError(where, f"{_kind(x)} is beyond the largest {dtype_name(dt)} ({_float_max(dt):.6g})")


def _fill_range(fill: str, low: float, high: float, dt: np.dtype[Any], where: str) -> None:
    """low and high of a random fill, such that the draw and its cast to dt cannot fail or
    overflow: integer draws are int64 (high exclusive), uniform ones float64."""
    integers = fill == "randint" or dt.kind in "iu"
    for key, x in (("low", low), ("high", high)):
        if not math.isfinite(x):
            raise CaseError(f"{where}.{key}", f"expected a finite number, got {x!r}")
        if integers and not -2**63 <= x <= 2**63:
            raise CaseError(f"{where}.{key}", f"{_kind(x)} is out of the int64 range of random integers")
    if not integers and not math.isfinite(high - low):
        raise CaseError(f"{where}.high", f"high - low ({high!r} - {low!r}) exceeds the float64 range")
    _representable(low, dt, f"{where}.low")
    _representable(math.ceil(high) - 1 if integers else high, dt, f"{where}.high")


def parse_case(obj: Any, where: str = "", default_dtype: Optional[np.dtype[Any]] = None, depth: int = 0,
               allow_name: bool = True, number: int = 0) -> UserCase:
    """A case object (see the module docstring), checked field by field. ``where`` prefixes
    the field names in errors (e.g. ``args[2].output_of``)."""
    from ..ops import REGISTRY
    from .options import op_dtypes

    def at(name: str) -> str:
        return f"{where}.{name}" if where else name
    if not isinstance(obj, dict):
        raise CaseError(where, f"expected an object with {', '.join(CASE_FIELDS)}, got {_kind(obj)}")
    fields = CASE_FIELDS if allow_name else tuple(f for f in CASE_FIELDS if f != "name")
    extra = [k for k in obj if k not in fields]
    if extra:
        raise CaseError(at(str(extra[0])), f"unknown field; a case has {', '.join(fields)}")
    if "op" not in obj:
        raise CaseError(at("op"), "required: the function to run")
    op = obj["op"]
    if not isinstance(op, str) or op not in REGISTRY:
        raise CaseError(at("op"), f"unknown function {op!r}; choose from {', '.join(REGISTRY.names())}")
    spec = REGISTRY[op]
    supported = op_dtypes(spec)
    if "dtype" in obj:
        dtype = _dtype(obj["dtype"], at("dtype"), supported)
    elif default_dtype is not None and np.dtype(default_dtype) in supported:
        dtype = np.dtype(default_dtype)
    else:
        dtype = supported[0] if supported else np.dtype(np.float32)
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise CaseError(at("name"), f"expected a string, got {_kind(name)}")
    params = spec.params
    args = obj.get("args", [])
    if not isinstance(args, list):
        raise CaseError(at("args"), f"expected a list of arguments, got {_kind(args)}")
    if len(args) > len(params):
        raise CaseError(at("args"), f"{op} takes {len(params)} arguments ({', '.join(p.name for p in params)}), "
                                    f"got {len(args)}")
    kwargs = obj.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise CaseError(at("kwargs"), f"expected an object of arguments by name, got {_kind(kwargs)}")
    by_name = {p.name: p for p in params}
    given: dict[str, Any] = {}
    for i, (p, v) in enumerate(zip(params, args)):
        given[p.name] = _parse_value(v, at(f"args[{i}]"), p, dtype, depth)
    for key, v in kwargs.items():
        if key not in by_name:
            raise CaseError(at(f"kwargs.{key}"), f"{op} has no parameter {key!r}; its parameters are "
                                                 f"{', '.join(by_name)}" + (" (outputs are compared, not given)"
                                                                             if key == "out" else ""))
        if key in given:
            raise CaseError(at(f"kwargs.{key}"), f"{key!r} is also given in args (position "
                                                 f"{list(by_name).index(key)})")
        given[key] = _parse_value(v, at(f"kwargs.{key}"), by_name[key], dtype, depth)
    first = next((v for v in given.values() if isinstance(v, TensorValue)), None)
    first_name = params[0].name
    first_shape = given[first_name].shape if isinstance(given.get(first_name), TensorValue) else (
        first.shape if first is not None else None)
    for key, v in given.items():  # a described function passes its own format: a case may only restate it
        if isinstance(v, TensorValue) and v.format is not None:
            from ..formats import Format
            from ..ops.spec import format_for_rank
            fixed = getattr(by_name[key], "acl_format", None)
            passes = int(fixed) if fixed is not None else format_for_rank(len(v.shape))
            if v.format != passes:
                pos = [p.name for p in params[:len(args)]]
                raise CaseError(at(f"args[{pos.index(key)}]" if key in pos else f"kwargs.{key}"), f"{op} passes {key} as {Format(passes).name}, the case says "
                                         f"{Format(v.format).name}; give an aclnn operator's case "
                                         "(\"op\": \"aclnnXxx\") to call with other formats")
    case = UserCase(spec, dtype, given, name, number, first_shape)
    missing = [p.name for p in params if p.name not in given and p.default is inspect.Parameter.empty]
    if spec.example is None and missing:
        raise CaseError(at("args"), f"{op} has no example to take arguments from: give {', '.join(missing)}")
    return case


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), f"a number ({v!r})" if isinstance(v, (int, float)) else type(v).__name__)


def check(case: UserCase, rng: np.random.Generator) -> None:
    """Run the operator's own argument checks on placeholder tensors (no computation):
    raises CaseError with the argument the operator refuses."""
    from ..errors import AclnnError
    try:
        args = case.build(rng, placeholder=True)
    except CaseError:
        raise
    except (MemoryError, ValueError, OverflowError) as exc:
        raise CaseError("args", f"cannot make the tensors: {type(exc).__name__}: {exc}") from None
    try:
        case.spec.bind(args, {})
    except AclnnError as exc:
        from ..tensors import dtype_name
        raise CaseError(exc.argument or "args", f"refused by {case.op} ({dtype_name(case.dtype)}): "
                                                f"{exc.detail or str(exc).splitlines()[0]}") from None
    except TypeError as exc:
        raise CaseError("args", str(exc)) from None


def seeded(seed: int, *labels: str) -> np.random.Generator:
    """A generator for one case: the same inputs whatever else runs."""
    return np.random.default_rng([seed] + [zlib.crc32(label.encode()) for label in labels])


def loads(text: str) -> Any:
    """JSON text as cases take it; CaseError("", why) when it is not JSON, holds an integer
    of more digits than Python reads, or nests deeper than MAX_DEPTH (json's own recursion,
    and the parser's after it, would raise RecursionError)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise CaseError("", f"nested too deeply (at most {MAX_DEPTH} levels of lists and objects)") from None
    except ValueError:  # an integer longer than sys.get_int_max_str_digits() (Python >= 3.11)
        limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
        raise CaseError("", f"an integer has more digits than Python reads ({limit})") from None
    stack = [(data, 1)]
    while stack:  # iterative: the depth is what is being checked
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            if depth > MAX_DEPTH:
                raise CaseError("", f"nested too deeply (at most {MAX_DEPTH} levels of lists and objects)")
            stack.extend((x, depth + 1) for x in (value.values() if isinstance(value, dict) else value))
    return data


def load_file(path: str) -> list[Any]:
    """The case objects of a file (a list, or {"cases": [...]}); CaseError("", why) when it
    cannot be read as such."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise CaseError("", f"cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CaseError("", f"not UTF-8 text: {exc}") from None
    data = loads(text)
    if isinstance(data, dict) and set(data) == {"cases"}:
        data = data["cases"]
    if not isinstance(data, list):
        raise CaseError("", 'expected a list of cases (or {"cases": [...]}), got ' + _kind(data))
    if not data:
        raise CaseError("", "no cases in it")
    return data


def command_line_file(path: str, prog: str) -> tuple[str, list[tuple[int, Any, str]]]:
    """--cases FILE as a command (compare, bench) reads it: the option as its messages name
    it, and each case object with its number and the head of its messages ("case 3 (add)").
    A file load_file refuses is a usage error."""
    from .options import refuse
    option = f"--cases {path}"
    try:
        objects = load_file(path)
    except CaseError as exc:
        raise refuse(prog, option, str(exc)) from None
    entries = []
    for number, obj in enumerate(objects, 1):
        op = obj.get("op") if isinstance(obj, dict) else None
        entries.append((number, obj, f"case {number}" + (f" ({op})" if isinstance(op, str) else "")))
    return option, entries
