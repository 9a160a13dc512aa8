"""Validated bindings, cached: what checking a call's arguments established, reused by
every later call with the same shapes, dtypes, layouts and attribute values.

An operator's checks and its output inference read only the tensors' shapes, dtypes and
layouts (and whether an out= was given), and the attribute values (cf. the checks in
ascend_aclnn/ops). So a successful ``OpSpec.bind`` is summed up by a key made of exactly
those, and a later call with the same key needs no check but what can differ between two
arrays of the same description: whether a DeviceArray is still live and valid and on the
current device, and whether several out= arrays overlap.

Keys are built only from values whose type makes equality mean "converts to the same C
value": ndarray or DeviceArray tensors, lists/tuples of plain ints, float or int doubles
(0.0 and -0.0 kept apart, NaN never cached), bools, ints, str or None. Anything else (an
np.int64 attribute, a list for a tensor) takes the full ``bind`` every time, which gives
the same result.

The raw operators' kinds (ascend_aclnn.aclnn) are keyed the same way, each by what its
conversion reads:

- a nullable tensor (TENSOR_OR_NULL) as a tensor, or None for a NULL;
- a written tensor (WRITTEN): a DeviceArray by (shape, dtype), an ndarray by (shape, dtype,
  strides, writeable), None; a subclass (a masked array) is never keyed;
- a tensor list (TLIST, WLIST): a list or tuple whose items are keyed as tensors (written
  ones as WRITTEN); a nested list or a None item is never keyed;
- a nullable int array (INTS_OR_NULL): as INTS, or None;
- an aclScalar (SCALAR) by its type and value, since ``1``, ``1.0`` and ``True`` are equal
  in Python but become INT64, DOUBLE and BOOL: (bool, v), (int, v), (float, v) with a zero
  keyed with its sign and NaN never keyed; a NumPy scalar by (its type, its bytes); an
  ``ascend_aclnn.Scalar`` by (Scalar, dtype, its value's key); complex never keyed;
- an aclScalarList (SCALAR_LIST): a list or tuple of SCALAR keys;
- an aclFloatArray (FLOAT_ARRAY): a list or tuple of plain floats and ints (not bools),
  keyed by value: an int and a float that are equal convert to the same C float, zeros keyed
  with their sign, NaN never keyed;
- an aclBoolArray (BOOL_ARRAY): a list or tuple of plain bools;
- an aclDataType (DTYPE): a np.dtype, a type (np.float16, float, ...) or a str, keyed by
  (its type, itself); np.dtype() maps equal ones to one dtype;
- keyword arguments by the header's names (raw operators have no ``out=``).

Failed validations are never cached: their errors are always raised by ``bind``. Each
operator keeps at most ``CACHE_SIZE`` bindings (the oldest go
first); a binding holds no C handle and no array, so evicting or keeping one costs
nothing else.
"""
from __future__ import annotations

import inspect
import math
import struct
import threading
from collections import OrderedDict
from typing import Any, Callable, Optional

import numpy as np

from ..cann.constants import AclDataType
from ..tensors import ACL_DTYPES, DeviceArray, dtype_name
from .spec import (Args, Checker, DataType, HostValue, IntArray, OpSpec, Scalar, ScalarValue, Tensor, TensorArg,
                   TensorList, TensorListArg, format_for_rank, scalar_bytes)

CACHE_SIZE = 512
TENSOR, INTS, DOUBLE, BOOL, INT64, STRING, OTHER = range(7)
# The raw operators' kinds (see the module docstring).
(TENSOR_OR_NULL, WRITTEN, TLIST, WLIST, INTS_OR_NULL, SCALAR, SCALAR_LIST, FLOAT_ARRAY, BOOL_ARRAY,
 DTYPE) = range(7, 17)
_HOST_KINDS = {"aclScalar": SCALAR, "aclScalarList": SCALAR_LIST, "aclFloatArray": FLOAT_ARRAY,
               "aclBoolArray": BOOL_ARRAY}
_SCALAR_KINDS = {"double": DOUBLE, "float": DOUBLE, "bool": BOOL, "int8": INT64, "int16": INT64, "int32": INT64,
                 "int64": INT64, "uint8": INT64, "uint16": INT64, "uint32": INT64, "uint64": INT64, "string": STRING}


def param_kind(p: Any) -> int:
    if isinstance(p, Tensor):
        if p.written:
            return WRITTEN if p.nullable else OTHER
        return TENSOR_OR_NULL if p.nullable else TENSOR
    if isinstance(p, TensorList):
        return (WLIST if p.written else TLIST) if p.nullable else OTHER
    if isinstance(p, IntArray):
        return INTS_OR_NULL if p.nullable else INTS
    if isinstance(p, Scalar):
        return _SCALAR_KINDS[p.c_kind]
    if isinstance(p, HostValue):
        return _HOST_KINDS[p.c_kind] if p.nullable else OTHER
    if isinstance(p, DataType):
        return DTYPE
    return OTHER


class CheckedCall:
    """One validated call layout of one operator. Holds no array and no C handle."""

    __slots__ = ("spec", "outputs", "required", "zero_fill", "template", "tensor_params", "formats",
                 "out_formats", "out_acl", "resident", "args_template", "given", "int_params", "out_nbytes",
                 "out_labels", "any_fill", "tensor_names", "tensor_shapes", "tensor_dtypes", "written", "reads",
                 "lists", "host_params", "plain", "lean", "any_written", "cpu_plan")

    spec: OpSpec
    outputs: tuple[tuple[tuple[int, ...], np.dtype[Any]], ...]  # (shape, dtype) of each output
    given: tuple[bool, ...]               # per output: passed as out=
    out_acl: tuple[Optional[AclDataType], ...]
    required: tuple[bool, ...]            # per output: computed (an optional output may not be)
    zero_fill: tuple[bool, ...]
    resident: bool                        # every tensor a DeviceArray
    written: tuple[bool, ...]             # per tensor parameter: written in place
    reads: tuple[bool, ...]
    lists: tuple[bool, ...]               # per tensor parameter: an aclTensorList
    any_written: bool
    host_params: tuple[tuple[int, Any], ...]  # (parameter index, its HostValue description)
    plain: bool
    lean: bool
    template: tuple[Any, ...]             # the C arguments, None where a tensor goes
    int_params: tuple[int, ...]
    out_nbytes: tuple[int, ...]
    out_labels: tuple[str, ...]
    any_fill: bool
    tensor_params: tuple[int, ...]        # indices of the tensor parameters
    tensor_names: tuple[str, ...]
    tensor_shapes: tuple[tuple[int, ...], ...]
    tensor_dtypes: tuple[np.dtype[Any], ...]
    formats: tuple[int, ...]
    out_formats: tuple[int, ...]
    args_template: Args
    cpu_plan: Any                         # a raw operator's CPU reference, planned for this signature (cpu_reference/fast.py)

    def __init__(self, spec: OpSpec, a: Args):
        self.spec = spec
        self.cpu_plan = None
        self.outputs = tuple((tuple(o.shape), np.dtype(o.dtype)) for o in a.outputs)
        self.given = tuple(bool(o.given) for o in a.outputs)
        self.out_acl = tuple(ACL_DTYPES.get(dt) for _, dt in self.outputs)
        self.required = tuple(spec.required(a))
        self.zero_fill = tuple(o.needs_zero_fill(a) for o in spec.outputs)
        self.resident = a.device_resident
        template: list[Any] = []
        tensors: list[int] = []
        formats: list[int] = []
        host: list[tuple[int, Any]] = []
        for i, p in enumerate(spec.params):
            v = a[p.name]
            if isinstance(p, (Tensor, TensorList)):
                tensors.append(i)
                if p.acl_format is not None:
                    formats.append(int(p.acl_format))
                else:  # by rank; -1 for a list: each element by its own rank
                    formats.append(format_for_rank(v.ndim) if isinstance(v, TensorArg) else -1)
                template.append(None)
            elif isinstance(v, str):
                template.append(v.encode())
            else:
                if isinstance(p, HostValue) and v is not None:
                    host.append((i, p))
                template.append(v)  # an int tuple (an aclIntArray's values), a scalar, a host value, or None
        params = [spec.params[i] for i in tensors]
        self.written = tuple(bool(getattr(p, "written", False)) for p in params)
        self.reads = tuple(bool(getattr(p, "read", True)) for p in params)
        self.lists = tuple(isinstance(p, TensorList) for p in params)
        self.any_written = any(self.written)
        self.host_params = tuple(host)
        self.plain = not (any(self.written) or any(self.lists) or host)
        # launch_resident may take it: nothing to zero-fill, and (with DeviceArray tensors)
        # the results stay on the device
        # the results stay on the device. A raw operator's written tensors qualify too (they
        # are DeviceArrays there, written in place); tensor lists and host values do not.
        self.lean = not (any(self.lists) or host) and not any(o.needs_zero_fill(a) for o in spec.outputs) \
            and (bool(spec.outputs) or any(self.written))
        self.template = tuple(template)
        self.int_params = tuple(i for i, p in enumerate(spec.params) if isinstance(p, IntArray))
        self.out_nbytes = tuple(math.prod(shape) * dt.itemsize for shape, dt in self.outputs)
        self.out_labels = tuple(spec.out_labels)
        self.any_fill = any(self.zero_fill)
        self.tensor_params = tuple(tensors)
        self.tensor_names = tuple(spec.params[i].name for i in self.tensor_params)
        # (a None is only reachable unchecked, by tests that let CANN see a NULL)
        self.tensor_shapes = tuple(tuple(a[n].shape) if isinstance(a[n], TensorArg) else () for n in self.tensor_names)
        self.tensor_dtypes = tuple(np.dtype(a[n].dtype if isinstance(a[n], TensorArg) else np.float32)
                                   for n in self.tensor_names)
        self.formats = tuple(formats)
        self.out_formats = tuple(int(o.acl_format or 0) for o in spec.outputs)  # outputs always have one
        # The converted arguments without the arrays, for the numpy backend's reference.
        t = Args(((k, TensorArg(None, v.shape, v.dtype, v.given) if isinstance(v, TensorArg)
                   else None if isinstance(v, TensorListArg) else v) for k, v in a.items()),
                 [TensorArg(None, o.shape, o.dtype, o.given) for o in a.outputs])
        self.args_template = t

    def args(self, tensors: list[Any], outs: list[Any]) -> Args:
        """Args for the numpy backend: the cached conversion with this call's arrays."""
        a = Args(self.args_template)
        names = self.spec.params
        for i, v in zip(self.tensor_params, tensors):
            name = names[i].name
            t = a[name]
            a[name] = TensorArg(v, t.shape, t.dtype, True)
        a.outputs = [TensorArg(v, t.shape, t.dtype, t.given) for v, t in zip(outs, a.outputs)]
        return a


class CheckedCallCache:
    """Per operator: the parameter kinds, and the bindings by key (at most CACHE_SIZE, oldest evicted first)."""

    def __init__(self, spec: OpSpec):
        self.spec: OpSpec = spec
        self.kinds: tuple[int, ...] = tuple(param_kind(p) for p in spec.params)
        self.names: tuple[str, ...] = tuple(p.name for p in spec.params)
        self.defaults: tuple[Any, ...] = tuple(p.default for p in spec.params)
        self.single: bool = len(spec.outputs) == 1
        self.entries: OrderedDict[tuple[Any, ...], CheckedCall] = OrderedDict()
        self.lock: threading.Lock = threading.Lock()
        self.cacheable: bool = OTHER not in self.kinds
        if self.cacheable:
            tails = {n: tuple(self.defaults[n:]) for n in range(len(self.kinds))
                     if all(d is not inspect.Parameter.empty for d in self.defaults[n:])}
            scope = {"DA": DeviceArray, "ND": np.ndarray, "copysign": math.copysign, "TAILS": tails,
                     "multi_out": _multi_out, "NOUT": len(spec.outputs), "BYNAME": _by_name(self.names),
                     "TLIST_KEY": lambda v: _tensor_list_key(v, False), "WLIST_KEY": lambda v: _tensor_list_key(v, True),
                     "SCALAR_KEY": _scalar_key, "SCALAR_LIST_KEY": _scalar_list_key, "FLOAT_ARRAY_KEY": _float_array_key,
                     "BOOL_ARRAY_KEY": _bool_array_key, "DTYPE_KEY": _dtype_key}
            exec(_key_source(self.kinds, self.single, raw=not spec.outputs), scope)
            self.key = scope["key"]  # type: ignore[method-assign]

    def key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[tuple[Any, ...]]:
        """(key, tensors, outs) for a call, or None when it cannot be keyed (then the full
        bind decides). ``tensors``: the tensor arguments in parameter order; ``outs``: one
        entry per output (None when not given). Replaced per operator by a generated
        function of the same meaning (_key_source), with the loop over parameters unrolled."""
        return None

    def get(self, key: tuple[Any, ...]) -> Optional[CheckedCall]:
        """The binding cached under key, if any."""
        # No reordering on a hit (it costs as much as the lookup): the oldest layout goes
        # first when the cache is full, and one evicted while in use is simply checked again.
        return self.entries.get(key)

    def put(self, key: tuple[Any, ...], bound: CheckedCall) -> None:
        """Cache a binding, evicting the oldest past CACHE_SIZE."""
        with self.lock:
            self.entries[key] = bound
            while len(self.entries) > CACHE_SIZE:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


def tensor_values(spec: OpSpec, b: "CheckedCall", a: Args) -> list[Any]:
    """The caller's objects for a call's tensor parameters (None for a NULL, a list for an
    aclTensorList), in the order of ``b.tensor_params``."""
    values = []
    for i in b.tensor_params:
        v = a[spec.params[i].name]
        values.append(None if v is None else v.value)
    return values


def identity(kind: int, value: Any) -> Any:
    """A converted argument as plans compare them: a tensor by (shape, dtype), an int
    array by its values, a double by its bits (so NaN is NaN and -0.0 is not 0.0), the rest
    by value. The raw kinds: a tensor list by its tensors' (shape, dtype), host values by
    the bytes C receives (shown as the user wrote them), None for a NULL."""
    if kind == TENSOR:
        return (tuple(value.shape), np.dtype(value.dtype))
    if kind == DOUBLE:
        return struct.unpack("<q", struct.pack("<d", value))[0]
    if kind == INTS and value is not None:
        return tuple(value)
    if value is None:
        return None
    if kind in (TENSOR_OR_NULL, WRITTEN):
        return (tuple(value.shape), np.dtype(value.dtype))
    if kind in (TLIST, WLIST):
        return tuple((tuple(t.shape), np.dtype(t.dtype)) for t in value.items)
    if kind == INTS_OR_NULL:
        return tuple(value)
    if kind == SCALAR:
        return _Shown(value, _scalar_text(value))
    if kind == SCALAR_LIST:
        return _Shown(value, "[" + ", ".join(_scalar_text(v) for v in value) + "]")
    if kind == FLOAT_ARRAY:  # the float32 bytes C receives
        with np.errstate(all="ignore"):
            return _Shown(np.array(value, np.float32).tobytes(), repr(list(value)))
    if kind == DTYPE:
        return _Shown(value, _DTYPE_NAMES.get(value, str(value)))
    return value


def identity_of_key(kind: int, part: Any) -> Any:
    """identity() of an argument from its part of a call's key (see _key_source)."""
    if kind == TENSOR:
        return (part[0], part[1])
    if kind == DOUBLE:
        value = math.copysign(0.0, part[1]) if isinstance(part, tuple) else float(part)
        return struct.unpack("<q", struct.pack("<d", value))[0]
    if part is None or kind not in _FROM_KEY:
        return part
    return _FROM_KEY[kind](part)


class _Shown:
    """A plan's identity of a host value: compared by ``value``, shown as ``text``."""

    __slots__ = ("value", "text")

    def __init__(self, value: Any, text: str):
        self.value, self.text = value, text

    def __eq__(self, other: Any) -> bool:
        return type(other) is _Shown and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return self.text


_NP_OF_ACL = {int(acl): dt for dt, acl in ACL_DTYPES.items()}
_DTYPE_NAMES = {int(acl): dtype_name(dt) for dt, acl in ACL_DTYPES.items()}


def _scalar_text(converted: tuple[Any, ...]) -> str:
    """An aclScalar's converted (ACL dtype, bytes) as a value and its dtype."""
    acl, raw = converted
    dt = _NP_OF_ACL.get(acl)
    if dt is None:
        return repr(converted)
    return f"{np.frombuffer(raw, dt)[0].item()!r} ({dtype_name(dt)})"


class _Unconvertible:
    """The identity of a keyed value that does not convert (never equal to a planned one)."""

    def __init__(self, original: Any):
        self.original = original

    def __eq__(self, other: Any) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.original)


def _scalar_of_key(part: tuple[Any, ...]) -> Any:
    """The value an aclScalar key part was made from (see _scalar_key)."""
    t = part[0]
    if t is ScalarValue:
        return ScalarValue(_scalar_of_key(part[2]), part[1])
    if t is float or t is int or t is bool:
        return part[1]
    return np.frombuffer(part[1], dtype=t)[0]


def _converted(convert: Any, part: Any, original: Any) -> Any:
    """``convert(part)``, or, for a value no call has validated (it differs from the planned
    one, which converted), an identity equal to nothing that shows ``original(part)``."""
    try:
        return convert(part)
    except Exception:
        try:
            shown = original(part)
        except Exception:
            shown = part
        return _Unconvertible(shown)


def _scalar_identity(part: tuple[Any, ...]) -> Any:
    return identity(SCALAR, scalar_bytes(_scalar_of_key(part), _CHECK, ""))


def _scalar_list_identity(part: tuple[Any, ...]) -> Any:
    return identity(SCALAR_LIST, tuple(scalar_bytes(_scalar_of_key(p), _CHECK, "") for p in part))


_CHECK = Checker("plan")
_FROM_KEY: dict[Any, Callable[[Any], Any]] = {
    TENSOR_OR_NULL: lambda part: (part[0], part[1]),
    WRITTEN: lambda part: (part[0], part[1]),
    TLIST: lambda part: tuple((p[0], p[1]) for p in part),
    WLIST: lambda part: tuple((p[0], p[1]) for p in part),
    SCALAR: lambda part: _converted(_scalar_identity, part, _scalar_of_key),
    SCALAR_LIST: lambda part: _converted(_scalar_list_identity, part, lambda q: [_scalar_of_key(p) for p in q]),
    FLOAT_ARRAY: lambda part: identity(FLOAT_ARRAY, tuple(p[0] if type(p) is tuple else float(p) for p in part)),
    DTYPE: lambda part: _converted(lambda q: identity(DTYPE, DataType("", "").convert(q[1], _CHECK)), part,
                                   lambda q: q[1]),
}


# Key parts of the raw operators' host values (see the module docstring): None when the
# value cannot be keyed (the full bind then decides).

def _scalar_key(v: Any) -> Optional[tuple[Any, ...]]:
    t = type(v)
    if t is float:
        if v != v:
            return None
        return (float, v, math.copysign(1.0, v)) if v == 0.0 else (float, v)
    if t is int or t is bool:
        return (t, v)
    if isinstance(v, np.generic):
        return (t, v.tobytes())
    if t is ScalarValue:
        inner = _scalar_key(v.value)
        return None if inner is None else (ScalarValue, v.dtype, inner)
    return None


def _scalar_list_key(v: Any) -> Optional[tuple[Any, ...]]:
    t = type(v)
    if t is not list and t is not tuple:
        return None
    parts: list[Any] = []
    for x in v:
        k = _scalar_key(x)
        if k is None:
            return None
        parts.append(k)
    return tuple(parts)


def _float_array_key(v: Any) -> Optional[tuple[Any, ...]]:
    t = type(v)
    if t is not list and t is not tuple:
        return None
    parts: list[Any] = []
    for x in v:
        t = type(x)
        if t is not float and t is not int:
            return None
        if x == 0:
            parts.append((math.copysign(0.0, x) if t is float else 0.0, math.copysign(1.0, x) if t is float else 1.0))
        elif x != x:
            return None
        else:
            parts.append(x)
    return tuple(parts)


def _bool_array_key(v: Any) -> Optional[tuple[Any, ...]]:
    t = type(v)
    if t is not list and t is not tuple:
        return None
    for x in v:
        if type(x) is not bool:
            return None
    return tuple(v)


def _dtype_key(v: Any) -> Optional[tuple[Any, ...]]:
    t = type(v)
    if t is str or t is type or isinstance(v, np.dtype):
        return (t, v)
    return None


def _tensor_list_key(v: Any, written: bool) -> Optional[tuple[Any, ...]]:
    t = type(v)
    if t is not list and t is not tuple:
        return None
    parts: list[Any] = []
    for x in v:
        t = type(x)
        if t is DeviceArray:
            parts.append((x.shape, x.dtype))
        elif t is np.ndarray:
            parts.append((x.shape, x.dtype, x.strides, x.flags.writeable) if written else (x.shape, x.dtype, x.strides))
        else:
            return None
    return tuple(parts)


def _by_name(names: tuple[Any, ...]) -> Any:
    """A raw operator's call with keyword arguments (the header's names) as positional
    arguments, or None when they are not exactly the remaining parameters."""
    def fill(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[tuple[Any, ...]]:
        rest = names[len(args):]
        if len(rest) != len(kwargs):
            return None
        try:
            return tuple(args) + tuple(kwargs[n] for n in rest)
        except KeyError:
            return None
    return fill


_caches: dict[int, CheckedCallCache] = {}
_caches_lock = threading.Lock()


def _key_source(kinds: tuple[Any, ...], single: bool, raw: bool = False) -> str:
    """The source of CheckedCallCache.key for one operator's parameter kinds (see its docstring,
    and the module's for which values can be keyed). ``raw``: an operator without ``out=``
    (ascend_aclnn.aclnn), whose keyword arguments are its parameters' names."""
    n = len(kinds)
    names = [f"a{i}" for i in range(n)]
    if raw:
        lines = ["def key(args, kwargs):",
                 "    if kwargs:",
                 "        args = BYNAME(args, kwargs)",
                 "        if args is None:",
                 "            return None"]
    else:
        lines = ["def key(args, kwargs):",
                 "    out = None",
                 "    if kwargs:",
                 "        if len(kwargs) != 1 or 'out' not in kwargs:",
                 "            return None",
                 "        out = kwargs['out']"]
    lines += [f"    if len(args) != {n}:",
              "        tail = TAILS.get(len(args))",
              "        if tail is None:",
              "            return None",
              "        args = tuple(args) + tail",
              f"    {', '.join(names)}, = args"]
    tensors = []
    for i, kind in enumerate(kinds):
        a, k = f"a{i}", f"k{i}"
        if kind in (TENSOR, TENSOR_OR_NULL, WRITTEN):
            tensors.append(a)
            nd = {TENSOR: f"({a}.shape, {a}.dtype, {a}.strides)",
                  TENSOR_OR_NULL: f"({a}.shape, {a}.dtype, {a}.strides)",
                  WRITTEN: f"({a}.shape, {a}.dtype, {a}.strides, {a}.flags.writeable)"}[kind]
            lines += [f"    t = type({a})",
                      "    if t is DA:",
                      f"        {k} = ({a}.shape, {a}.dtype)",
                      "    elif t is ND:",
                      f"        {k} = {nd}"]
            if kind != TENSOR:
                lines += [f"    elif {a} is None:", f"        {k} = None"]
            lines += ["    else:",
                      "        return None"]
        elif kind in (INTS, INTS_OR_NULL):
            lines += [f"    t = type({a})",
                      "    if t is list or t is tuple:",
                      f"        for x in {a}:",
                      "            if type(x) is not int:",
                      "                return None",
                      f"        {k} = tuple({a})"]
            if kind == INTS_OR_NULL:
                lines += [f"    elif {a} is None:", f"        {k} = None"]
            lines += ["    else:",
                      "        return None"]
        elif kind == DOUBLE:
            lines += [f"    t = type({a})",
                      "    if t is float:",
                      f"        if {a} == 0.0:",
                      f"            {k} = (0.0, copysign(1.0, {a}))",
                      f"        elif {a} != {a}:",
                      "            return None",
                      "        else:",
                      f"            {k} = {a}",
                      "    elif t is int:",
                      f"        {k} = (0.0, 1.0) if {a} == 0 else {a}",
                      "    else:",
                      "        return None"]
        elif kind == BOOL:
            lines += [f"    if type({a}) is not bool:", "        return None", f"    {k} = {a}"]
        elif kind == INT64:
            lines += [f"    if type({a}) is not int:", "        return None", f"    {k} = {a}"]
        elif kind == STRING:
            lines += [f"    if {a} is not None and type({a}) is not str:", "        return None", f"    {k} = {a}"]
        elif kind == DTYPE:
            lines += [f"    {k} = DTYPE_KEY({a})", f"    if {k} is None:", "        return None"]
        else:  # nullable handles keyed by a helper: tensor lists and host values
            if kind in (TLIST, WLIST):
                tensors.append(a)
            helper = {TLIST: "TLIST_KEY", WLIST: "WLIST_KEY", SCALAR: "SCALAR_KEY", SCALAR_LIST: "SCALAR_LIST_KEY",
                      FLOAT_ARRAY: "FLOAT_ARRAY_KEY", BOOL_ARRAY: "BOOL_ARRAY_KEY"}[kind]
            lines += [f"    if {a} is None:",
                      f"        {k} = None",
                      "    else:",
                      f"        {k} = {helper}({a})",
                      f"        if {k} is None:",
                      "            return None"]
    keys = ", ".join(f"k{i}" for i in range(n))
    if raw:
        lines += [f"    return ({keys},), [{', '.join(tensors)}], []"]
    elif single:
        lines += ["    if out is None:",
                  "        ko = None",
                  "    else:",
                  "        t = type(out)",
                  "        if t is DA:",
                  "            ko = (out.shape, out.dtype)",
                  "        elif t is ND:",
                  "            ko = (out.shape, out.dtype, out.flags.writeable)",
                  "        else:",
                  "            return None",
                  f"    return ({keys}, ko), [{', '.join(tensors)}], [out]"]
    else:
        lines += ["    m = multi_out(out, NOUT)",
                  "    if m is None:",
                  "        return None",
                  f"    return ({keys},) + m[0], [{', '.join(tensors)}], m[1]"]
    return "\n".join(lines) + "\n"


def _multi_out(out: Any, count: int) -> Optional[tuple[Any, ...]]:
    """(key parts, outs) for the out= of an operator with several outputs, or None."""
    if out is None:
        return (None,) * count, [None] * count
    if (type(out) is not tuple and type(out) is not list) or len(out) != count:
        return None
    parts: list[Any] = []
    for o in out:
        if o is None:
            parts.append(None)
        else:
            t = type(o)
            if t is DeviceArray:
                parts.append((o.shape, o.dtype))
            elif t is np.ndarray:
                parts.append((o.shape, o.dtype, o.flags.writeable))
            else:
                return None
    return tuple(parts), list(out)


def cache_for(spec: OpSpec) -> CheckedCallCache:
    """The operator's binding cache, made on first use (one per description)."""
    c = _caches.get(id(spec))
    if c is None or c.spec is not spec:
        with _caches_lock:
            c = _caches.get(id(spec))
            if c is None or c.spec is not spec:
                c = _caches[id(spec)] = CheckedCallCache(spec)
    return c


def clear() -> None:
    """Forget every cached binding (they hold no resources; for tests and measurements)."""
    for c in list(_caches.values()):
        c.clear()
