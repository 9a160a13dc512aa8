"""How an operator is described.

One ``OpSpec`` per aclnn operator: its aclnn name and its parameters' kinds, in C order.
That one description gives the C prototype of the first phase, the Python signature and
docstring, the argument conversion and validation (identical on every backend), and the
list of operators the tests iterate over.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional, Sequence

import numpy as np

from ..cann.constants import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclFormat
from ..cann.prototypes import SCALAR_CTYPES, handle
from ..errors import AclnnError
from ..tensors import ACL_DTYPES, ArrayLike, DeviceArray, acl_dtype_problem, dtype_name, may_overlap, size_problem


def describe(value: Any) -> str:
    """How a given value reads in an error message."""
    if isinstance(value, (np.ndarray, DeviceArray)):
        return f"{type(value).__name__} of shape {tuple(value.shape)} and dtype {dtype_name(value.dtype)}"
    text = repr(value)  # a message line, not a dump: a tuple of arrays or a long list is cut
    return f"{type(value).__name__} {text if len(text) <= 120 else text[:100] + ' ... ' + text[-15:]}"


def dtype_list(dtypes: Sequence[np.dtype]) -> str:
    names = [dtype_name(d) for d in dtypes]
    if not names:
        return "any dtype"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class Checker:
    """Raises the error the operator's first phase would return, before any C call."""

    def __init__(self, api: str):
        self.api = api

    def fail(self, argument: str, detail: str, status: int = ACLNN_ERR_PARAM_INVALID) -> None:
        raise AclnnError(status, self.api, detail, argument=argument)

    def mismatch(self, argument: str, expected: str, got: str, status: int = ACLNN_ERR_PARAM_INVALID) -> None:
        self.fail(argument, f"expected {expected}, got {got}", status)

    def dtype(self, argument: str, t: "TensorArg", allowed: Sequence[np.dtype]) -> None:
        """The op_api's dtype-list check."""
        if t.dtype not in allowed:
            self.mismatch(argument, f"dtype {dtype_list(allowed)}", dtype_name(t.dtype))

    def same_dtype(self, argument: str, t: "TensorArg", of: str, reference: "TensorArg") -> None:
        """The op_api's check that a tensor has the dtype of another."""
        if t.dtype != reference.dtype:
            self.mismatch(argument, f"dtype {dtype_name(reference.dtype)} (the dtype of {of})", dtype_name(t.dtype))


class TensorArg(NamedTuple):
    """A tensor argument after conversion: the user's object plus its metadata.
    ``given`` is False for an output the binding will allocate itself."""
    value: Optional[ArrayLike]
    shape: tuple[int, ...]
    dtype: np.dtype
    given: bool = True

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Param:
    name: str
    c_name: str
    doc: str = ""

    # Plain class attributes, not dataclass fields: kinds override them.
    pointer = False          # a NULL here is ACLNN_ERR_PARAM_NULLPTR
    default = inspect.Parameter.empty
    type_hint = "Any"        # source text, for signatures and the generated operators module

    @property
    def ctype(self) -> Any:
        return handle

    def convert(self, value: Any, check: Checker) -> Any:
        return value

    def kind_doc(self) -> str:
        return ""


# np.asarray drops a masked array's mask: computing on the masked-out values would be a
# silently wrong answer (and an out= would keep its old mask over the new values).
_MASKED = ("expected a NumPy array or DeviceArray, got a numpy.ma.MaskedArray, whose mask the operator "
           "would ignore; pass x.filled(value) (or x.data to use the masked-out values too)")


@dataclass(frozen=True)
class Tensor(Param):
    """An input aclTensor. ``acl_format`` is the format the official examples pass.
    ``contiguous``: the kernel reads the raw storage, so a strided view would be read
    wrongly on the NPU; such an argument must be C-contiguous (a DeviceArray always is)."""
    dtypes: tuple = ()
    acl_format: AclFormat = AclFormat.ACL_FORMAT_ND
    contiguous: bool = False
    pointer = True
    type_hint = "ArrayLike"

    def convert(self, value: Any, check: Checker) -> TensorArg:
        if not isinstance(value, DeviceArray):
            if isinstance(value, np.ma.MaskedArray):
                check.fail(self.name, _MASKED)
            try:
                value = np.asarray(value)
            except Exception:
                check.fail(self.name, f"expected a NumPy array or DeviceArray, got {describe(value)}")
            if value.dtype == object:
                check.fail(self.name, f"expected a numeric array, got an object array from {type(value).__name__} "
                                      "(object (|O) has no ACL data type)")
        if value.dtype not in ACL_DTYPES:
            check.fail(self.name, acl_dtype_problem(value.dtype))
        if not isinstance(value, DeviceArray):
            if self.contiguous and not value.flags.c_contiguous:
                check.fail(self.name, "expected a C-contiguous array (the operator reads its raw bytes), "
                                      f"got a strided view with strides {value.strides}")
        return TensorArg(value, tuple(value.shape), np.dtype(value.dtype))

    def kind_doc(self) -> str:
        layout = ", C-contiguous" if self.contiguous else ""
        return f"tensor ({dtype_list(self.dtypes)}; passed as {self.acl_format.name}{layout})"


@dataclass(frozen=True)
class Output(Tensor):
    """An output aclTensor: allocated by the binding, or given with ``out=``.

    ``required_by``: the name of a bool parameter; when it is False the output is not
    computed and is returned as None. The C call still gets a tensor (the op_api requires
    the pointer), a scratch one, so an ``out=`` array for it is never touched.
    ``zero_fill``: the NPU leaves part of this output unwritten (a padding tail, or all of
    it for an empty input); the binding zero-fills it first so results are reproducible.
    True, or a predicate on the call's Args for the calls that need it.
    """
    required_by: Optional[str] = None
    zero_fill: Any = False  # bool, or Callable[[Args], bool]

    def needs_zero_fill(self, a: "Args") -> bool:
        return bool(self.zero_fill(a) if callable(self.zero_fill) else self.zero_fill)

    def convert(self, value: Any, check: Checker, label: str = "out") -> TensorArg:
        if not isinstance(value, (np.ndarray, DeviceArray)):
            check.fail(label, f"expected a NumPy array or DeviceArray to write into, got {describe(value)}")
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            check.fail(label, "expected a writeable array, got a read-only one")
        if isinstance(value, np.ma.MaskedArray):
            check.fail(label, _MASKED)
        if value.dtype not in ACL_DTYPES:
            check.fail(label, acl_dtype_problem(value.dtype))
        return TensorArg(value, tuple(value.shape), np.dtype(value.dtype))


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@dataclass(frozen=True)
class IntArray(Param):
    """An aclIntArray (int64 values)."""
    pointer = True
    type_hint = "Sequence[int]"

    def convert(self, value: Any, check: Checker) -> tuple[int, ...]:
        if isinstance(value, np.ndarray) and value.ndim == 1 and np.issubdtype(value.dtype, np.integer):
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or not all(_is_int(v) for v in value):
            check.fail(self.name, f"expected a sequence of ints, got {describe(value)}")
        ints = tuple(int(v) for v in value)
        if any(not -2**63 <= v < 2**63 for v in ints):
            check.fail(self.name, f"expected int64 values, got {ints}")
        return ints

    def kind_doc(self) -> str:
        return "sequence of int (aclIntArray)"


@dataclass(frozen=True)
class Scalar(Param):
    """A by-value C parameter: double, bool, int64 or string (char*, None allowed)."""
    c_kind: str = "double"
    default: Any = inspect.Parameter.empty

    @property
    def ctype(self) -> Any:
        return SCALAR_CTYPES[self.c_kind]

    @property
    def type_hint(self) -> str:  # type: ignore[override]
        return {"double": "float", "bool": "bool", "int64": "int", "string": "Optional[str]"}[self.c_kind]

    def convert(self, value: Any, check: Checker) -> Any:
        kind = self.c_kind
        if kind == "double" and isinstance(value, (int, float, np.integer, np.floating)) \
                and not isinstance(value, (bool, np.bool_)):
            try:
                return float(value)
            except OverflowError:  # an int past float64's range
                check.fail(self.name, f"expected a real number within the range of a C double, got an int "
                                      f"of {len(str(abs(value)))} digits")
        if kind == "bool" and isinstance(value, (bool, np.bool_)):
            return bool(value)
        if kind == "int64" and _is_int(value) and -2**63 <= value < 2**63:
            return int(value)
        if kind == "string" and (value is None or isinstance(value, str)):
            if value is not None:
                try:
                    value.encode("utf-8")  # what C receives
                except UnicodeEncodeError as exc:
                    check.fail(self.name, f"expected a str that UTF-8 can encode, got one with "
                                          f"{value[exc.start:exc.end]!a} at position {exc.start} ({exc.reason})")
            return value
        expected = {"double": "a real number", "bool": "a bool", "int64": "an int64",
                    "string": "a str or None"}[kind]
        check.fail(self.name, f"expected {expected}, got {describe(value)}")

    def kind_doc(self) -> str:
        return f"{self.c_kind} ({self.c_name})"


def Double(name: str, c_name: str, default: Any = inspect.Parameter.empty, doc: str = "") -> Scalar:
    return Scalar(name, c_name, doc, c_kind="double", default=default)


class Args(dict):
    """Converted arguments by Python name, plus ``outputs`` (TensorArg each)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def device_resident(self) -> bool:
        """True when any tensor argument is a DeviceArray: then results stay on the device."""
        return any(isinstance(v, TensorArg) and isinstance(v.value, DeviceArray) for v in self.values()) \
            or any(isinstance(o.value, DeviceArray) for o in self["outputs"])


@dataclass(frozen=True)
class OpSpec:
    name: str                      # Python name: the aclnn name in snake_case
    aclnn: str                     # e.g. "aclnnUpsampleNearestExact1d"
    summary: str
    params: tuple[Param, ...]      # inputs, in C order
    outputs: tuple[Output, ...]    # outputs, in C order (after the inputs in every op so far)
    infer: Callable[[Args], Sequence[tuple[tuple[int, ...], np.dtype]]]
    check: Callable[[Args, Checker], None]
    reference: Callable[..., Any]
    notes: str = ""
    # example(rng, dtype) -> (args, kwargs): small valid random arguments whose first
    # tensor has the given dtype (one of the first parameter's dtypes). Drives the
    # command-line tools (compare, bench) and is checked by the tests.
    example: Optional[Callable[[np.random.Generator, np.dtype], tuple[tuple, dict]]] = None
    # Why CANN cannot rerun this operator's executor with rebound addresses (its op_api gives
    # the kernel a raw copy of an address that aclSet*TensorAddr cannot reach), or "": plans
    # then run it as ordinary calls from the start.
    not_repeatable: str = ""
    signature: inspect.Signature = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        params = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default,
                                    annotation=p.type_hint) for p in self.params]
        single = len(self.outputs) == 1
        out_hint = "Optional[ArrayLike]" if single else "Optional[tuple[Optional[ArrayLike], ...]]"
        params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=out_hint))
        item = "Optional[ArrayLike]" if any(o.required_by for o in self.outputs) else "ArrayLike"
        ret = item if single else f"tuple[{', '.join([item] * len(self.outputs))}]"
        object.__setattr__(self, "signature", inspect.Signature(params, return_annotation=ret))
        names = {p.name for p in self.params}
        for o in self.outputs:
            assert o.required_by is None or o.required_by in names, (self.name, o.required_by)

    def required(self, a: "Args") -> list[bool]:
        """Which outputs the caller asked for (all, unless a ``required_by`` flag is False)."""
        return [o.required_by is None or bool(a[o.required_by]) for o in self.outputs]

    def _bind_arguments(self, args: tuple, kwargs: dict) -> dict:
        """Python's own call rules for this signature (inspect.Signature.bind costs ~10 us)."""
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise TypeError(f"{self.name}{self.signature}: takes {len(names)} positional arguments "
                            f"but {len(args)} were given")
        raw = dict(zip(names, args))
        raw["out"] = None
        for key, value in kwargs.items():
            if key not in raw and key not in names:
                raise TypeError(f"{self.name}{self.signature}: unexpected keyword argument {key!r}")
            if key in raw and key != "out":
                raise TypeError(f"{self.name}{self.signature}: multiple values for argument {key!r}")
            raw[key] = value
        for p in self.params[len(args):]:
            if p.name not in raw:
                if p.default is inspect.Parameter.empty:
                    raise TypeError(f"{self.name}{self.signature}: missing required argument {p.name!r}")
                raw[p.name] = p.default
        return raw

    @property
    def phase1_name(self) -> str:
        return self.aclnn + "GetWorkspaceSize"

    @property
    def c_argtypes(self) -> tuple:
        """First-phase argtypes without the (workspaceSize, executor) tail."""
        return tuple(p.ctype for p in self.params + self.outputs)

    def bind(self, args: tuple, kwargs: dict) -> Args:
        """Convert and validate a call's arguments exactly as the operator's first phase
        would, raising its status before any C call."""
        raw = self._bind_arguments(args, kwargs)
        check = Checker(self.phase1_name)
        for p in self.params:
            if p.pointer and raw[p.name] is None:
                check.fail(p.name, f"expected {p.kind_doc()}, got None", ACLNN_ERR_PARAM_NULLPTR)
        a = Args((p.name, p.convert(raw[p.name], check)) for p in self.params)
        given = raw["out"]
        if given is not None and len(self.outputs) > 1:
            if not isinstance(given, (tuple, list)) or len(given) != len(self.outputs):
                check.fail("out", f"expected a tuple of {len(self.outputs)} arrays (None for one to "
                                  f"allocate), got {describe(given)}")
        given_each = (given,) if len(self.outputs) == 1 else tuple(given or (None,) * len(self.outputs))
        inferred = self.infer(a)
        required = self.required(a)
        # An output that is not required gets scratch memory: the user's out= stays untouched.
        labels = self.out_labels
        a["outputs"] = [TensorArg(None, tuple(shape), np.dtype(dtype), given=False) if g is None or not req
                        else o.convert(g, check, label)
                        for o, g, req, label, (shape, dtype)
                        in zip(self.outputs, given_each, required, labels, inferred)]
        self.check(a, check)
        for o, label, (shape, dtype) in zip(a["outputs"], labels, inferred):
            # Not op_api checks. A size past int64 would wrap in C (size_t, int64 dims), and
            # a wrongly shaped buffer would let the kernel write out of bounds.
            problem = size_problem(shape, np.dtype(dtype).itemsize)
            if problem is not None:
                check.fail(label, f"expected {problem}")
            if o.shape != tuple(shape):
                check.mismatch(label, f"shape {tuple(shape)}", f"shape {o.shape}")
        given_outs = [(o.value, label) for o, label in zip(a["outputs"], labels) if o.given] \
            if len(labels) > 1 else ()
        for i, (first, first_label) in enumerate(given_outs):
            for second, second_label in given_outs[i + 1:]:
                if may_overlap(first, second):  # each kernel output would overwrite the other
                    check.fail(second_label, f"expected memory separate from {first_label}, got an array "
                                             "that shares memory with it")
        return a

    @property
    def out_labels(self) -> list[str]:
        """How error messages name each output: "out", or "out[i] (name)" for several."""
        if len(self.outputs) == 1:
            return ["out"]
        return [f"out[{i}] ({o.name})" for i, o in enumerate(self.outputs)]

    def docstring(self) -> str:
        lines = [self.summary, "", f"Calls {self.phase1_name} + {self.aclnn}.", "", "Parameters", "----------"]
        for p in self.params:
            default = "" if p.default is inspect.Parameter.empty else f", default {p.default!r}"
            lines.append(f"{p.name} : {p.kind_doc()}{default}")
            lines.append(f"    {p.doc} (aclnn parameter ``{p.c_name}``)")
        lines += ["out : optional, " + ", ".join(f"{o.name} {o.kind_doc()}" for o in self.outputs),
                  "    Arrays to write the result into; otherwise they are allocated.",
                  "", "Returns", "-------"]
        lines += [f"{o.name} : {o.doc}" + (f"; None when {o.required_by} is False" if o.required_by else "")
                  for o in self.outputs]
        lines += ["    NumPy arrays for NumPy inputs; DeviceArrays (not synchronised) when any "
                  "input is a DeviceArray.", "", "Raises", "------",
                  "AclnnParamNullptrError (161001), AclnnParamInvalidError (161002)",
                  "    Before any C call, on both backends, for the inputs the operator rejects.",
                  "AclnnError", "    When CANN itself fails (message includes aclGetRecentErrMsg)."]
        if self.notes:
            lines += ["", "Notes", "-----", self.notes]
        return "\n".join(lines)

