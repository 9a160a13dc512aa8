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
``bind``. Each operator keeps at most ``CACHE_SIZE`` bindings (least recently used go
first); a binding holds no C handle and no array, so evicting or keeping one costs
nothing else.
"""
from __future__ import annotations

import inspect
import math
import threading
from collections import OrderedDict
from typing import Any, Optional

import numpy as np

from ..tensors import ACL_DTYPES, DeviceArray
from .spec import Args, IntArray, OpSpec, Scalar, Tensor, TensorArg

CACHE_SIZE = 512
TENSOR, INTS, DOUBLE, BOOL, INT64, STRING, OTHER = range(7)
_SCALAR_KINDS = {"double": DOUBLE, "bool": BOOL, "int64": INT64, "string": STRING}


def param_kind(p: Any) -> int:
    if isinstance(p, Tensor):
        return TENSOR
    if isinstance(p, IntArray):
        return INTS
    if isinstance(p, Scalar):
        return _SCALAR_KINDS[p.c_kind]
    return OTHER


class Bound:
    """One validated call layout of one operator. Holds no array and no C handle."""

    __slots__ = ("spec", "outputs", "required", "zero_fill", "template", "tensor_params", "formats",
                 "out_formats", "out_acl", "resident", "args_template", "given", "int_params", "out_nbytes",
                 "out_labels", "any_fill", "tensor_names")

    def __init__(self, spec: OpSpec, a: Args):
        self.spec = spec
        self.outputs = tuple((tuple(o.shape), np.dtype(o.dtype)) for o in a.outputs)
        self.given = tuple(bool(o.given) for o in a.outputs)
        self.out_acl = tuple(ACL_DTYPES.get(dt) for _, dt in self.outputs)
        self.required = tuple(spec.required(a))
        self.zero_fill = tuple(o.needs_zero_fill(a) for o in spec.outputs)
        self.resident = a.device_resident
        template, tensors, formats = [], [], []
        for i, p in enumerate(spec.params):
            v = a[p.name]
            if isinstance(p, Tensor):
                tensors.append(i)
                formats.append(int(p.acl_format))
                template.append(None)
            elif isinstance(v, str):
                template.append(v.encode())
            else:
                template.append(v)  # an int tuple (an aclIntArray's values), a scalar, or None
        self.template = tuple(template)
        self.int_params = tuple(i for i, p in enumerate(spec.params) if isinstance(p, IntArray))
        self.out_nbytes = tuple(math.prod(shape) * dt.itemsize for shape, dt in self.outputs)
        self.out_labels = tuple(spec.out_labels)
        self.any_fill = any(self.zero_fill)
        self.tensor_params = tuple(tensors)
        self.tensor_names = tuple(spec.params[i].name for i in self.tensor_params)
        self.formats = tuple(formats)
        self.out_formats = tuple(int(o.acl_format) for o in spec.outputs)
        # The converted arguments without the arrays, for the numpy backend's reference.
        t = Args((k, TensorArg(None, v.shape, v.dtype, v.given) if isinstance(v, TensorArg) else v)
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


class SpecCache:
    """Per operator: the parameter kinds, and the LRU of bindings by key."""

    def __init__(self, spec: OpSpec):
        self.spec = spec
        self.kinds = tuple(param_kind(p) for p in spec.params)
        self.names = tuple(p.name for p in spec.params)
        self.defaults = tuple(p.default for p in spec.params)
        self.single = len(spec.outputs) == 1
        self.entries: OrderedDict[tuple, Bound] = OrderedDict()
        self.lock = threading.Lock()
        self.cacheable = OTHER not in self.kinds

    def key(self, args: tuple, kwargs: dict) -> Optional[tuple]:
        """(key, tensors, out list) for a call, or None when it cannot be keyed (then the
        full bind decides). ``tensors``: the tensor arguments in parameter order."""
        if not self.cacheable:
            return None
        out = None
        if kwargs:
            if len(kwargs) != 1 or "out" not in kwargs:
                return None
            out = kwargs["out"]
        n = len(args)
        kinds = self.kinds
        if n != len(kinds):
            if n > len(kinds):
                return None
            if any(d is inspect.Parameter.empty for d in self.defaults[n:]):
                return None
            args = tuple(args) + self.defaults[n:]
        parts = []
        tensors = []
        for kind, v in zip(kinds, args):
            if kind == TENSOR:
                t = type(v)
                if t is DeviceArray:
                    parts.append((v.shape, v.dtype))
                elif t is np.ndarray:
                    parts.append((v.shape, v.dtype, v.strides))
                else:
                    return None
                tensors.append(v)
            elif kind == INTS:
                t = type(v)
                if t is not list and t is not tuple:
                    return None
                for x in v:
                    if type(x) is not int:
                        return None
                parts.append(tuple(v))
            elif kind == DOUBLE:
                t = type(v)
                if t is float:
                    if v == 0.0:
                        parts.append((0.0, math.copysign(1.0, v)))
                    elif v != v:
                        return None
                    else:
                        parts.append(v)
                elif t is int:
                    parts.append((0.0, 1.0) if v == 0 else v)
                else:
                    return None
            elif kind == BOOL:
                if type(v) is not bool:
                    return None
                parts.append(v)
            elif kind == INT64:
                if type(v) is not int:
                    return None
                parts.append(v)
            else:  # STRING
                if v is not None and type(v) is not str:
                    return None
                parts.append(v)
        if self.single:
            outs = [out]
        elif out is None:
            outs = [None] * len(self.spec.outputs)
        elif (type(out) is tuple or type(out) is list) and len(out) == len(self.spec.outputs):
            outs = list(out)
        else:
            return None
        for o in outs:
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
        return tuple(parts), tensors, outs

    def get(self, key: tuple) -> Optional[Bound]:
        b = self.entries.get(key)
        if b is not None:
            try:
                self.entries.move_to_end(key)
            except KeyError:  # evicted by another thread meanwhile: still valid
                pass
        return b

    def put(self, key: tuple, bound: Bound) -> None:
        with self.lock:
            self.entries[key] = bound
            while len(self.entries) > CACHE_SIZE:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_caches: dict[int, SpecCache] = {}
_caches_lock = threading.Lock()


def cache_for(spec: OpSpec) -> SpecCache:
    c = _caches.get(id(spec))
    if c is None or c.spec is not spec:
        with _caches_lock:
            c = _caches.get(id(spec))
            if c is None or c.spec is not spec:
                c = _caches[id(spec)] = SpecCache(spec)
    return c


def clear() -> None:
    """Forget every cached binding (they hold no resources; for tests and measurements)."""
    for c in list(_caches.values()):
        c.clear()
