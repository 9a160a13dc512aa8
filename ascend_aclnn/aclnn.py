"""Any aclnn operator, called with its prototype read from the installed CANN headers.

    import ascend_aclnn as aa
    z = aa.aclnn.Add(x, y, 1.0, np.empty_like(x))            # aclnnAdd(self, other, alpha, out)
    z = aa.aclnn.Add(self=x, other=y, alpha=1.0, out=z)      # the header's names as keywords
    aa.aclnn.call("aclnnAdd", x, y, 1.0, z)                  # the same, by name
    aa.aclnn.prototype("aclnnAdd")                           # what was read, and from where
    aa.aclnn.names()                                         # every operator the headers declare

Parameters come in the header's order (without workspaceSize and executor), by position
or by the header's own names, whatever they are (a Python keyword gets a trailing "_":
``lambda_``). An operator the binding cannot call fails only its own lookup
(UnsupportedOperatorError, also an AttributeError, so that hasattr and help pass over it).
The operator's outputs are ordinary parameters: the caller passes them (NumPy arrays are
written in place, as with ``out=``; DeviceArrays stay on the device) and the call returns
them, the very objects given (torch tensors too), a tuple when there are several (a
written tensor list comes back as a list). A NumPy output is uploaded before the call, so
what the operator leaves unwritten keeps the caller's values, as a DeviceArray's memory
does. Which parameters are outputs is decided from the header (see
ascend_aclnn.cann.headers); ``prototype()`` shows the decision and ``operator(name,
outputs=(...))`` overrides it.

A call goes through the same runtime as the described operators: argument conversion
before any C call, the two-phase caller, the stream and its lock, caches (a call whose
arguments convert to the same C values as an earlier one's skips the conversion; see
ops/checked_calls.py), errors with aclGetRecentErrMsg's text, DeviceArray results without
a sync, plans (``aa.plan(aa.aclnn.Add, ...)``: a repeatable executor unless the call has
a tensor list, a NULL tensor or an in-place argument). Conversions, one per C parameter
kind: aclTensor (an array; None is NULL; a DeviceArray with a format of its own is passed
in it, a private one with its stored shape as the storage dims: docs/formats.md), aclTensorList (a list or tuple of arrays, no
None or nested list in it), aclScalar (a number: bool -> BOOL, int -> INT64, float ->
DOUBLE, complex -> COMPLEX128; a NumPy scalar keeps its dtype; ``aa.Scalar(value,
dtype)`` for any other, whose value is a number of a kind the dtype holds: bool < int <
float < complex), aclScalarList (a list, tuple or 1-D array of those), aclIntArray
/ aclFloatArray / aclBoolArray (sequences of ints, real numbers within float32's range,
bools), aclDataType (anything np.dtype takes, not None), char* (a str, UTF-8, no NUL;
None is NULL), bool, the C integer types and float/double (numbers in range; NaN passes).
Anything else is refused before any C call with ACLNN_ERR_PARAM_INVALID, naming the
parameter, its C type and what was given.

On the numpy backend a raw call runs the operator's CPU reference (ascend_aclnn.cpu_reference):
one given with ``register_reference(name, fn)``, else this package's NumPy reference when it
describes the operator (``aa.aclnn.UpsampleNearestExact1d`` runs
``aa.upsample_nearest_exact1d``'s), else a hand formula, else the PyTorch aten op that
op-plugin (the code torch_npu runs) implements with it, from a table shipped with the
package; ``reference(name)`` shows which, ``names(reference=True)`` lists them. Outputs are
checked against the reference's results (a wrong shape is ACLNN_ERR_PARAM_INVALID naming the
parameter) and written in place, as on the npu path. An operator no header declares still
runs there when its reference carries a parameter list (scripts run with no CANN at all).
"""
from __future__ import annotations

import importlib
import inspect
import keyword
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .api import call as _call_spec
from . import cpu_reference
from .cann import headers, raw_operators
from .errors import AclnnError
from .ops import REGISTRY
from .ops.spec import Args, Checker, DataType, HostValue, IntArray, OpSpec, Param
from .ops.spec import Scalar as ByValue
from .ops.spec import ScalarValue, Tensor, TensorList

__all__ = ["Scalar", "UnsupportedOperatorError", "add_headers", "call", "names", "operator", "prototype", "reference",
           "register_reference"]

Scalar = ScalarValue

_SCALAR_KINDS = {"bool": "bool", "int8_t": "int8", "int16_t": "int16", "int32_t": "int32", "int64_t": "int64",
                 "uint8_t": "uint8", "uint16_t": "uint16", "uint32_t": "uint32", "uint64_t": "uint64",
                 "float": "float", "double": "double", "string": "string"}
_HOST_KINDS = ("aclScalar", "aclScalarList", "aclFloatArray", "aclBoolArray")
_DESCRIBED = {spec.aclnn: spec.name for spec in REGISTRY}
_operators: dict[tuple[str, Optional[tuple[str, ...]]], "RawOperator"] = {}
_lock = threading.Lock()


def names(reference: bool = False) -> list[str]:
    """Every operator the installed (and added) headers declare: full names, sorted; where
    no header declares any (no CANN installed), every operator with a CPU reference.
    ``reference=True``: every operator with a CPU reference that fits its declaration
    (or, where no header declares it, with its own parameter list): what runs on the numpy
    backend."""
    if reference:
        return cpu_reference.names()
    declared = headers.names()
    # no CANN (no header declares anything): what is callable here is what has a CPU reference
    return declared if declared else cpu_reference.names()


def register_reference(name: str, fn: Optional[Callable[..., Any]], *, framework: str = "numpy",
                       params: Optional[str] = None) -> None:
    """Give ``aclnnXxx`` a CPU reference of your own (or override the shipped one); ``fn=None``
    removes it. See ascend_aclnn.cpu_reference.register_reference."""
    cpu_reference.register_reference(name, fn, framework=framework, params=params)


register_reference.__doc__ = cpu_reference.register_reference.__doc__  # help() shows the whole contract


def reference(name: str) -> cpu_reference.Reference:
    """What runs ``aclnnXxx`` on the CPU: its source (registered, described, hand formula or
    the op-plugin table), tier, aten op, per-parameter bindings, evidence. LookupError,
    saying why, when there is none."""
    return cpu_reference.reference(_full_name(name))


def prototype(name: str) -> headers.Prototype:
    """The prototype of ``aclnnXxx`` (or ``Xxx``) as read from its header: ``.name``,
    ``.params`` (name, C type, kind, is_output), ``.header``, ``.argtypes``. For an operator
    no header declares, the parameter list its CPU reference carries (``.header`` says
    which: ``<CPU reference table, derived from op-plugin>``...)."""
    return _prototype(_full_name(name))


def add_headers(path: Any) -> None:
    """Read operator prototypes from another directory too (a custom operator under
    development); searched before the installed ones."""
    headers.add_headers(path)
    with _lock:
        _operators.clear()


def operator(name: str, outputs: Optional[Sequence[str]] = None) -> "RawOperator":
    """The callable for ``aclnnXxx``. ``outputs``: the names of the parameters the operator
    writes, when the header's declaration does not say it right."""
    key = (_full_name(name), None if outputs is None else tuple(outputs))
    op = _operators.get(key)
    if op is None or _stale(op):
        with _lock:
            op = _operators.get(key)
            if op is None or _stale(op):
                _operators.pop(key, None)
                generation = cpu_reference.runner._generation[0]  # read before the prototype it vouches for
                op = RawOperator(_prototype(key[0]), key[1])
                op.generation = generation
                _operators[key] = op
    return op


def _stale(op: "RawOperator") -> bool:
    """An operator whose parameters came from a CPU reference (no header declares it) is read
    again after a registration: register_reference may have changed or removed them."""
    return op.prototype.header in cpu_reference.runner.OWN_HEADERS and \
        op.generation != cpu_reference.runner._generation[0]


def _prototype(name: str) -> headers.Prototype:
    """The installed header's declaration, else the parameter list of the operator's CPU
    reference (so a script runs on the numpy backend with no CANN installed)."""
    try:
        return headers.prototype(name)
    except headers.HeaderLookupError as exc:
        own = cpu_reference.runner.own_prototype(name)
        if own is None:
            raise headers.HeaderLookupError(cpu_reference.runner.not_found(name, str(exc))) from None
        return own


def call(name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``aa.aclnn.call("aclnnAdd", ...)`` is ``aa.aclnn.Add(...)``."""
    return operator(name)(*args, **kwargs)


class UnsupportedOperatorError(headers.UnsupportedPrototypeError, AttributeError):
    """``ascend_aclnn.aclnn.Xxx`` of an operator declared in a form the binding cannot call:
    an UnsupportedPrototypeError that is also an AttributeError, so that ``hasattr``,
    ``getattr(..., default)``, ``dir``/``inspect.getmembers`` and ``help`` pass over it
    while the lookup itself still says why."""


def __getattr__(name: str) -> Any:
    if name.startswith("_") or not name[:1].isupper():
        raise AttributeError(f"module 'ascend_aclnn.aclnn' has no attribute {name!r}" + _camel_hint(name))
    full = "aclnn" + name
    if full in SIZE_HELPERS:  # plain functions of CANN (no executor): SizeHelper
        return SizeHelper(full)
    bound = raw_operators.facts(full).binding
    if bound:  # another plain function, bound by hand
        module, attribute = bound.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), attribute)()
    op = _operators.get((full, None))  # operator(name)'s answer when it has one: this runs on every call
    if op is not None and not _stale(op):
        return op
    try:
        try:
            return operator(name)
        except headers.HeaderLookupError as exc:
            if headers.find("acl" + name) is not None or cpu_reference.runner.own_prototype("acl" + name) is not None:
                # aclRfft1D, aclStft: declared without "nn"
                return operator("acl" + name)
            raise AttributeError(str(exc)) from None
    except headers.UnsupportedPrototypeError as exc:
        raise UnsupportedOperatorError(str(exc)) from None


def _camel_hint(name: str) -> str:
    """Operators are named as in CANN (``Add``, ``UpsampleNearestExact1d``): a snake_case
    name gets the one it spells, when that operator is known here."""
    if name.startswith("_") or not name.replace("_", "").isalnum():
        return ""
    camel = "".join(w[:1].upper() + w[1:] for w in name.split("_"))
    full = "aclnn" + camel
    try:
        known = headers.find(full) is not None or cpu_reference.runner.own_prototype(full) is not None
    except Exception:  # an unreadable search path: no hint rather than another error
        return ""
    if not known:
        return ""
    hint = f"; operators are named as in CANN: did you mean ascend_aclnn.aclnn.{camel}?"
    spec = _DESCRIBED.get(full)
    return hint + (f" (or ascend_aclnn.{spec}, its described form)" if spec is not None else "")


def __dir__() -> list[str]:
    """The module's names and every operator the headers declare (``Add``, ``Cat``...)."""
    try:
        ops = [n[len("aclnn"):] if n.startswith("aclnn") else n[len("acl"):] for n in names()]
    except Exception:  # an unreadable search path: the module's own names still list
        ops = []
    return sorted(set(globals()) | set(ops))


def _full_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected an operator name, a str such as 'aclnnXxx' or 'Xxx', got {name!r}")
    # A name starting with "acl" is already a full one: CANN 8.1 declares aclRfft1D and aclStft
    # without the aclnn prefix
    return name if name.startswith("acl") else "aclnn" + name


def _python_names(c_names: Sequence[str]) -> list[str]:
    """The keyword for each C parameter: its own name, with "_" added to a Python keyword
    (``from`` -> ``from_``) and again until it differs from the other parameters' names."""
    taken = set(c_names)
    names = []
    for c in c_names:
        name = c
        if keyword.iskeyword(c):
            name = c + "_"
            while name in taken:
                name += "_"
            taken.add(name)
        names.append(name)
    return names


def _param(p: Any, name: str, written: bool) -> Param:
    """The conversion for one C parameter of a prototype, called ``name`` in Python."""
    kind = p.kind
    doc = f"{p.c_type} {p.name}"
    if kind == "aclTensor":
        # A written parameter named ...Ref is updated in place (the operator reads it too).
        return Tensor(name, p.name, doc, nullable=True, acl_format=None, written=written,
                      read=not written or p.inplace)
    if kind == "aclTensorList":
        return TensorList(name, p.name, doc, nullable=True, written=written, read=not written or p.inplace)
    if kind == "aclIntArray":
        return IntArray(name, p.name, doc, nullable=True)
    if kind in _HOST_KINDS:
        return HostValue(name, p.name, doc, nullable=True, c_kind=kind)
    if kind == "aclDataType":
        return DataType(name, p.name, doc)
    if kind in _SCALAR_KINDS:
        return ByValue(name, p.name, doc, c_kind=_SCALAR_KINDS[kind])
    raise headers.UnsupportedPrototypeError(f"parameter {p.name} of C type {p.c_type!r} has no conversion")


def _no_check(a: Args, check: Checker) -> None:
    """Raw operators: only the kinds of the arguments are checked here; CANN's op_api checks
    the rest (dtypes, shapes, formats) in phase 1 and returns its status and message."""


@dataclass(frozen=True)
class RawSpec(OpSpec):
    """The description of a raw operator: an OpSpec whose conversion errors also name each
    parameter's C type (``alpha (const aclScalar *): expected a number ...``), and whose
    signature returns what it writes."""
    c_types: tuple[tuple[str, str], ...] = ()  # (Python name, C type as declared) per parameter
    returns: str = "Any"
    prototype: Optional[headers.Prototype] = None  # what the parameters were read from

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "signature", self.signature.replace(return_annotation=self.returns))

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Args:
        try:
            return super().bind(args, kwargs)
        except AclnnError as exc:
            if exc.argument is None or exc.recent is not None:
                raise
            base = exc.argument.split("[", 1)[0]
            c_type = dict(self.c_types).get(base)
            if c_type is None:
                raise
            raise AclnnError(exc.status, exc.api, exc.detail, None, f"{exc.argument} ({c_type})") from None


class RawOperator:
    """One aclnn operator called through its header prototype (see the module docstring).
    ``.prototype`` is what was read; ``.spec`` the description plans and the caller use."""

    def __init__(self, proto: headers.Prototype, outputs: Optional[tuple[str, ...]] = None):
        proto.require_supported()
        given = set(outputs) if outputs is not None else None
        if given is not None:
            unknown = given - {p.name for p in proto.params}
            if unknown:
                raise ValueError(f"outputs: {proto.name} has no parameter(s) {sorted(unknown)}; its parameters are "
                                 f"{[p.name for p in proto.params]}")
        params = tuple(_param(p, name, p.name in given if given is not None else bool(p.is_output))
                       for p, name in zip(proto.params, _python_names([p.name for p in proto.params])))
        if not any(getattr(p, "written", False) for p in params):
            raise headers.UnsupportedPrototypeError(
                f"{proto.name}: no parameter is an output (declared non-const, or named out/...Out/...Ref); name "
                f"them with ascend_aclnn.aclnn.operator({proto.name!r}, outputs=(...))")
        self.prototype: headers.Prototype = proto
        self.generation: int = cpu_reference.runner._generation[0]  # the registrations it was made under
        described = _DESCRIBED.get(proto.name)
        written = [p for p in params if getattr(p, "written", False)]
        hints = ["list[ArrayLike]" if isinstance(p, TensorList) else "ArrayLike" for p in written]
        self.spec: RawSpec = RawSpec(
            name=proto.name, aclnn=proto.name,
            summary=f"{proto.name}, called through its prototype in {proto.header}.",
            params=params, outputs=(), infer=lambda a: (), check=_no_check, reference=None,
            notes=(f"ascend_aclnn.{described} describes this operator and runs on both backends." if described else
                   "On the numpy backend it runs its CPU reference: ascend_aclnn.aclnn.reference(name) says which."),
            c_types=tuple((param.name, c.c_type) for param, c in zip(params, proto.params)), prototype=proto,
            returns=hints[0] if len(hints) == 1 else f"tuple[{', '.join(hints)}]")
        self.__name__: str = proto.name[len("aclnn"):]
        self.__qualname__ = self.__name__
        self.__signature__: inspect.Signature = self.spec.signature
        self.__doc__ = self._doc()

    def _doc(self) -> str:
        p = self.prototype
        lines = [f"{p.name}: read from {p.header}" + (f", line {p.line}" if getattr(p, "line", None) else "") + ".",
                 "", p.declaration(), "", "Parameters (header order; outputs are passed and returned):"]
        for param, c in zip(self.spec.params, p.params):
            role = "  -> written, returned" if getattr(param, "written", False) else ""
            lines.append(f"  {param.name}: {c.c_type}{role}")
        described = _DESCRIBED.get(p.name)
        lines += ["", "On the numpy backend: its CPU reference (ascend_aclnn.aclnn.reference shows which)." + (
            f" ascend_aclnn.{described} describes this operator and runs on both backends." if described else "")]
        return "\n".join(lines)

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # positional-only: "self" is a common C name
        return _call_spec(self.spec, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<aclnn operator {self.prototype.name} from {self.prototype.header}>"


# ---- the size helpers (plain functions, no executor) --------------------------------------------

SIZE_HELPERS = tuple(n for n, f in raw_operators.FACTS.items() if f.size_helper is not None)

def _shape_arg(api: str, tensorShape: Any) -> list[int]:
    from .cann.constants import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR
    if tensorShape is None:
        raise AclnnError(ACLNN_ERR_PARAM_NULLPTR, api, "tensorShape is NULL", argument="tensorShape")
    try:
        if isinstance(tensorShape, (str, bytes)) or not all(isinstance(d, (int, np.integer)) for d in tensorShape) \
                or any(isinstance(d, (bool, np.bool_)) for d in tensorShape):
            raise TypeError
        return [int(d) for d in tensorShape]
    except TypeError:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, f"expected a sequence of ints, got {tensorShape!r}",
                         argument="tensorShape (const aclIntArray *)") from None


def _dtype_arg(api: str, dataType: Any) -> tuple[np.dtype[Any], int]:
    from .cann.constants import ACLNN_ERR_PARAM_INVALID
    from .tensors import ACL_DTYPES
    if dataType is None:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, "expected a dtype", argument="dataType")
    try:
        dt = np.dtype(dataType)
        return dt, int(ACL_DTYPES[dt])
    except (TypeError, KeyError):
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, f"expected a dtype with an ACL data type, got {dataType!r}",
                         argument="dataType (aclDataType)") from None


def _int_arg(api: str, name: str, value: Any, kind: type) -> Any:
    from .cann.constants import ACLNN_ERR_PARAM_INVALID
    if kind is bool and isinstance(value, (bool, np.bool_)):
        return bool(value)
    if kind is int and isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        if -2 ** 63 <= int(value) < 2 ** 63:
            return int(value)
    raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, f"expected {'a bool' if kind is bool else 'an int64'}, got "
                     f"{value!r}", argument=name)


class SizeHelper:
    """CANN's plain size helpers (no executor), through ``aa.aclnn``:
    ``CalculateMatmulWeightSize(tensorShape)`` and ``CalculateMatmulWeightSizeV2(tensorShape,
    dataType)``, the elements a matmul weight occupies once stored as FRACTAL_NZ (the last two
    dims aligned to 16 and 16 for float16/bfloat16, else to 16 and 32; V1 counts as float16);
    ``CalculateConvolutionWeightSize(tensorShape, transposed, groups, dataType)``, the elements
    an NCHW float16 conv weight occupies as FRACTAL_Z (Atlas inference products only). On the
    npu backend the installed CANN's own function answers (its status as an AclnnError); on the
    numpy backend the op_api's formula and refusals (161001 for None; 161002 otherwise)."""

    name: str
    __name__: str

    def __init__(self, name: str):
        self.name = name
        self.__name__ = name[len("aclnn"):]
        self.__qualname__ = self.__name__

    def __repr__(self) -> str:
        return f"<aclnn size helper {self.name}>"

    def __call__(self, tensorShape: Any, *args: Any) -> int:
        import ctypes
        from .backends import get_backend
        api = self.name
        params = raw_operators.facts(api).size_helper or ()
        if len(args) != len(params):
            raise TypeError(f"{self.__name__}() takes {len(params) + 1} arguments (tensorShape"
                            f"{''.join(', ' + name for name, _ in params)}), got {len(args) + 1}")
        dims = _shape_arg(api, tensorShape)
        values: list[Any] = []
        c_args: list[Any] = []
        argtypes: list[Any] = []
        for (name, c_type), value in zip(params, args):
            if c_type == "aclDataType":
                dt, code = _dtype_arg(api, value)
                values.append(dt)
                c_args.append(code)
                argtypes.append(ctypes.c_int)
            else:
                kind = bool if c_type == "bool" else int
                v = _int_arg(api, f"{name} ({c_type})", value, kind)
                values.append(v)
                c_args.append(v)
                argtypes.append(ctypes.c_bool if kind is bool else ctypes.c_int64)
        if get_backend() == "npu":
            return self._on_cann(dims, c_args, argtypes)
        from .cpu_reference.size_helpers import FORMULAS
        return FORMULAS[api](api, dims, *values)

    def _on_cann(self, dims: list[int], c_args: list[Any], argtypes: list[Any]) -> int:
        import ctypes
        from .backends.npu import runtime
        from .cann.loader import get_cann
        cann = get_cann()
        fn = cann.op_function(self.name, ctypes.c_int32,
                              (ctypes.c_void_p, *argtypes, ctypes.POINTER(ctypes.c_uint64)))
        if fn is None:
            raise AclnnError(561003, self.name, "the installed CANN's operator libraries do not export it")
        arr = cann.function("aclCreateIntArray")((ctypes.c_int64 * max(len(dims), 1))(*dims), len(dims))
        if not arr:
            raise AclnnError(561103, "aclCreateIntArray", f"returned NULL for {dims}")
        out = ctypes.c_uint64(0)
        try:
            status = fn(arr, *c_args, ctypes.byref(out))
        finally:
            cann.function("aclDestroyIntArray")(arr)
        runtime.check(cann, status, self.name)
        return int(out.value)
