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
the same result. Failed validations are never cached: their errors are always raised by
``bind``. Each operator keeps at most ``CACHE_SIZE`` bindings (the oldest go
first); a binding holds no C handle and no array, so evicting or keeping one costs
nothing else.
"""
from __future__ import annotations

import inspect
import math
import struct
import threading
from collections import OrderedDict
from typing import Any, Optional

import numpy as np

from ..tensors import ACL_DTYPES, DeviceArray
from .spec import Args, HostValue, format_for_rank, IntArray, OpSpec, Scalar, Tensor, TensorArg, TensorList, TensorListArg

CACHE_SIZE = 512
TENSOR, INTS, DOUBLE, BOOL, INT64, STRING, OTHER = range(7)
_SCALAR_KINDS = {"double": DOUBLE, "float": DOUBLE, "bool": BOOL, "int8": INT64, "int16": INT64, "int32": INT64,
                 "int64": INT64, "uint8": INT64, "uint16": INT64, "uint32": INT64, "uint64": INT64, "string": STRING}


def param_kind(p: Any) -> int:
    if isinstance(p, Tensor):
        return OTHER if p.nullable or p.written else TENSOR
    if isinstance(p, IntArray):
        return INTS
    if isinstance(p, Scalar):
        return _SCALAR_KINDS[p.c_kind]
    return OTHER


class CheckedCall:
    """One validated call layout of one operator. Holds no array and no C handle."""

    __slots__ = ("spec", "outputs", "required", "zero_fill", "template", "tensor_params", "formats",
                 "out_formats", "out_acl", "resident", "args_template", "given", "int_params", "out_nbytes",
                 "out_labels", "any_fill", "tensor_names", "tensor_shapes", "tensor_dtypes", "written", "reads",
                 "lists", "host_params", "plain", "lean")

    def __init__(self, spec: OpSpec, a: Args):
        self.spec = spec
        self.outputs = tuple((tuple(o.shape), np.dtype(o.dtype)) for o in a.outputs)
        self.given = tuple(bool(o.given) for o in a.outputs)
        self.out_acl = tuple(ACL_DTYPES.get(dt) for _, dt in self.outputs)
        self.required = tuple(spec.required(a))
        self.zero_fill = tuple(o.needs_zero_fill(a) for o in spec.outputs)
        self.resident = a.device_resident
        template, tensors, formats, host = [], [], [], []
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
        self.host_params = tuple(host)
        self.plain = not (any(self.written) or any(self.lists) or host)
        # launch_resident may take it: nothing to zero-fill, and (with DeviceArray tensors)
        # the results stay on the device
        self.lean = self.plain and not any(o.needs_zero_fill(a) for o in spec.outputs) and bool(spec.outputs)
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
        self.out_formats = tuple(int(o.acl_format) for o in spec.outputs)
        # The converted arguments without the arrays, for the numpy backend's reference.
        t = Args((k, TensorArg(None, v.shape, v.dtype, v.given) if isinstance(v, TensorArg)
                  else None if isinstance(v, TensorListArg) else v)
                 for k, v in a.items() if k != "outputs")
        t["outputs"] = [TensorArg(None, o.shape, o.dtype, o.given) for o in a.outputs]
        self.args_template = t

    def args(self, tensors: list, outs: list) -> Args:
        """Args for the numpy backend: the cached conversion with this call's arrays."""
        a = Args(self.args_template)
        names = self.spec.params
        for i, v in zip(self.tensor_params, tensors):
            name = names[i].name
            t = a[name]
            a[name] = TensorArg(v, t.shape, t.dtype, True)
        a["outputs"] = [TensorArg(v, t.shape, t.dtype, t.given) for v, t in zip(outs, a["outputs"])]
        return a


class CheckedCallCache:
    """Per operator: the parameter kinds, and the bindings by key (at most CACHE_SIZE, oldest evicted first)."""

    def __init__(self, spec: OpSpec):
        self.spec = spec
        self.kinds = tuple(param_kind(p) for p in spec.params)
        self.names = tuple(p.name for p in spec.params)
        self.defaults = tuple(p.default for p in spec.params)
        self.single = len(spec.outputs) == 1
        self.entries: OrderedDict[tuple, CheckedCall] = OrderedDict()
        self.lock = threading.Lock()
        self.cacheable = OTHER not in self.kinds
        if self.cacheable:
            tails = {n: tuple(self.defaults[n:]) for n in range(len(self.kinds))
                     if all(d is not inspect.Parameter.empty for d in self.defaults[n:])}
            scope = {"DA": DeviceArray, "ND": np.ndarray, "copysign": math.copysign, "TAILS": tails,
                     "multi_out": _multi_out, "NOUT": len(spec.outputs)}
            exec(_key_source(self.kinds, self.single), scope)
            self.key = scope["key"]  # type: ignore[method-assign]

    def key(self, args: tuple, kwargs: dict) -> Optional[tuple]:
        """(key, tensors, outs) for a call, or None when it cannot be keyed (then the full
        bind decides). ``tensors``: the tensor arguments in parameter order; ``outs``: one
        entry per output (None when not given). Replaced per operator by a generated
        function of the same meaning (_key_source), with the loop over parameters unrolled."""
        return None

    def get(self, key: tuple) -> Optional[CheckedCall]:
        # No reordering on a hit (it costs as much as the lookup): the oldest layout goes
        # first when the cache is full, and one evicted while in use is simply checked again.
        return self.entries.get(key)

    def put(self, key: tuple, bound: CheckedCall) -> None:
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
    by value."""
    if kind == TENSOR:
        return (tuple(value.shape), np.dtype(value.dtype))
    if kind == DOUBLE:
        return struct.unpack("<q", struct.pack("<d", value))[0]
    if kind == INTS and value is not None:
        return tuple(value)
    return value


def identity_of_key(kind: int, part: Any) -> Any:
    """identity() of an argument from its part of a call's key (see _key_source)."""
    if kind == TENSOR:
        return (part[0], part[1])
    if kind == DOUBLE:
        value = math.copysign(0.0, part[1]) if isinstance(part, tuple) else float(part)
        return struct.unpack("<q", struct.pack("<d", value))[0]
    return part


_caches: dict[int, CheckedCallCache] = {}
_caches_lock = threading.Lock()


def _key_source(kinds: tuple, single: bool) -> str:
    """The source of CheckedCallCache.key for one operator's parameter kinds (see its docstring,
    and the module's for which values can be keyed)."""
    n = len(kinds)
    names = [f"a{i}" for i in range(n)]
    lines = ["def key(args, kwargs):",
             "    out = None",
             "    if kwargs:",
             "        if len(kwargs) != 1 or 'out' not in kwargs:",
             "            return None",
             "        out = kwargs['out']",
             f"    if len(args) != {n}:",
             "        tail = TAILS.get(len(args))",
             "        if tail is None:",
             "            return None",
             "        args = tuple(args) + tail",
             f"    {', '.join(names)}, = args"]
    tensors = []
    for i, kind in enumerate(kinds):
        a, k = f"a{i}", f"k{i}"
        if kind == TENSOR:
            tensors.append(a)
            lines += [f"    t = type({a})",
                      "    if t is DA:",
                      f"        {k} = ({a}.shape, {a}.dtype)",
                      "    elif t is ND:",
                      f"        {k} = ({a}.shape, {a}.dtype, {a}.strides)",
                      "    else:",
                      "        return None"]
        elif kind == INTS:
            lines += [f"    t = type({a})",
                      "    if t is not list and t is not tuple:",
                      "        return None",
                      f"    for x in {a}:",
                      "        if type(x) is not int:",
                      "            return None",
                      f"    {k} = tuple({a})"]
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
        else:  # STRING
            lines += [f"    if {a} is not None and type({a}) is not str:", "        return None", f"    {k} = {a}"]
    keys = ", ".join(f"k{i}" for i in range(n))
    if single:
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


def _multi_out(out: Any, count: int) -> Optional[tuple]:
    """(key parts, outs) for the out= of an operator with several outputs, or None."""
    if out is None:
        return (None,) * count, [None] * count
    if (type(out) is not tuple and type(out) is not list) or len(out) != count:
        return None
    parts = []
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
