"""Refusing on the CPU, before computing, what CANN's first phase refuses.

A raw call on the numpy backend runs a CPU reference (aten via torch, a hand formula...),
which computes far more than the NPU accepts: aten adds float32 into an int32 out by
truncating, where CANN's op_api refuses it (161002, "Promote dtype FLOAT can't be cast to
the desired output type INT32"). ``check(spec, values)`` runs before the reference and
raises what CANN would: ``AclnnParamInvalidError`` (161002) naming the parameter, the
message saying where the rule comes from.

The rules, for an operator, are the union of:

1. what its installed header's comment states (``header_rules``: per-parameter dtype lists,
   equal dtypes, promotion and castability, broadcast, equal shapes, the 8-dimension limit),
   read mechanically from the header the call was bound with;
2. a reviewed hand list (``HAND``) for what headers do not state, each rule with its source
   in CANN's open op_api code (hicann/ops-math, ops-nn) or the operator's documentation.

Rules are facts about CANN (lists of dtypes, limits), recorded with the file they come from;
no header or source text is copied. A rule is only as good as its source: where the header
and the op_api differ, the hand list follows the op_api of the Atlas A2/A3 (DAV_2201) branch,
the target, and says so.

Promotion is CANN's ``op::PromoteType`` (PyTorch's promoteTypes), castability opbase's
``CanCast``: no complex to real, no floating to integral, nothing but BOOL to BOOL.
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ..cann import data_dependent
from ..cann.constants import ACLNN_ERR_PARAM_INVALID
from ..errors import AclnnError
from ..tensors import ACL_DTYPES
from . import header_rules
from .header_rules import Rule

ACLNN_ERR_INNER_TILING_ERROR = 561002

# ---------------------------------------------------------------------------------------------
# dtypes by their ACL names
# ---------------------------------------------------------------------------------------------

_NAME_OF: dict[np.dtype[Any], str] = {d: c.name[len("ACL_"):] for d, c in ACL_DTYPES.items()}
FLOATS = ("FLOAT16", "BF16", "FLOAT", "DOUBLE")
INTS = ("INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64")
COMPLEX = ("COMPLEX64", "COMPLEX128")
_FLOAT_RANK = {"FLOAT16": 1, "BF16": 1, "FLOAT": 2, "DOUBLE": 3, "COMPLEX64": 2, "COMPLEX128": 3}
_INT_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64, "UINT8": 8}


def acl_name(value: Any) -> Optional[str]:
    """The ACL dtype name of an array, a dtype, or a scalar as the binding sends it
    (bool BOOL, int INT64, float DOUBLE, complex COMPLEX128, a NumPy scalar its own)."""
    if isinstance(value, bool):
        return "BOOL"
    if isinstance(value, int):
        return "INT64"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, complex):
        return "COMPLEX128"
    dtype = getattr(value, "dtype", value)
    try:
        return _NAME_OF.get(np.dtype(dtype))
    except TypeError:
        return None


def promote(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """op::PromoteType of two ACL dtypes; None where CANN has none (the unsigned types wider
    than 8 bits with any other type, an unknown dtype)."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if a == "BOOL":
        return b
    if b == "BOOL":
        return a
    if a in ("UINT16", "UINT32", "UINT64") or b in ("UINT16", "UINT32", "UINT64"):
        return None
    if a in COMPLEX or b in COMPLEX:
        rank = max(_FLOAT_RANK.get(a, 0) if a in FLOATS + COMPLEX else 0,
                   _FLOAT_RANK.get(b, 0) if b in FLOATS + COMPLEX else 0)
        return "COMPLEX128" if rank == 3 else "COMPLEX64"
    if a in FLOATS and b in FLOATS:
        ra, rb = _FLOAT_RANK[a], _FLOAT_RANK[b]
        return "FLOAT" if ra == rb else a if ra > rb else b
    if a in FLOATS:
        return a
    if b in FLOATS:
        return b
    if "UINT8" in (a, b):
        s = b if a == "UINT8" else a
        return "INT16" if s == "INT8" else s
    return a if _INT_BITS[a] >= _INT_BITS[b] else b


def can_cast(src: Optional[str], dst: Optional[str]) -> bool:
    """opbase's CanCast."""
    if src is None or dst is None:
        return False
    if src in COMPLEX and dst not in COMPLEX:
        return False
    if src in FLOATS + COMPLEX and dst in INTS:
        return False
    return not (src != "BOOL" and dst == "BOOL")


def is_integral(name: Optional[str], with_bool: bool) -> bool:
    return name in INTS or (with_bool and name == "BOOL")


# ---------------------------------------------------------------------------------------------
# a call's values, by parameter
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Call:
    """What the rules look at: the operator, and each parameter's value by its C name (NumPy
    arrays, lists of them, Python or NumPy numbers, np.dtype, lists, str, None)."""
    op: str
    api: str
    values: Mapping[str, Any]

    def tensors(self, name: str) -> list[tuple[str, NDArray[Any]]]:
        """(label, array) of a tensor parameter, each item of a tensor list ("x[1]")."""
        v = self.values.get(name)
        if isinstance(v, list):
            return [(f"{name}[{i}]", a) for i, a in enumerate(v) if isinstance(a, np.ndarray)]
        return [(name, v)] if isinstance(v, np.ndarray) else []

    def dtype(self, name: str) -> Optional[str]:
        """The ACL dtype of a parameter: a tensor's, a scalar's, a dtype's; the promotion of a
        list's items (scalar lists: the first one's, as nnopbase packs them)."""
        v = self.values.get(name)
        if isinstance(v, list):
            items = [x for x in v if x is not None]
            if not items:
                return None
            if not isinstance(items[0], np.ndarray):
                return acl_name(items[0])
            found = acl_name(items[0])
            for a in items[1:]:
                found = promote(found, acl_name(a))
            return found
        return None if v is None else acl_name(v)


class Refused(Exception):
    """A rule refused the call: (parameter label, detail, status)."""

    def __init__(self, label: str, detail: str, status: int = ACLNN_ERR_PARAM_INVALID) -> None:
        super().__init__(detail)
        self.label: str = label
        self.detail: str = detail
        self.status: int = status


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> Optional[tuple[int, ...]]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _apply(rule: Rule, call: Call) -> None:
    """Raise Refused when ``call`` breaks ``rule``."""
    k, p = rule.kind, rule.param
    if k == "dtypes":
        allowed = set(rule.args)
        items = call.tensors(p)
        v = call.values.get(p)
        # tensors, tensor lists' items and an aclDataType; not an aclScalar: the binding sends a
        # Python float as DOUBLE, as op-plugin does, and the op_api converts it (a header's list
        # there names the dtypes it computes in)
        items_dt: list[tuple[str, Optional[str]]] = [(label, acl_name(a)) for label, a in items]
        if isinstance(v, np.dtype):
            items_dt = [(p, acl_name(v))]
        for label, name in items_dt:
            if name is not None and name not in allowed:
                raise Refused(label, f"dtype {name} is not supported: expected one of {', '.join(rule.args)}")
    elif k == "same_dtype":
        (other,) = rule.args
        mine, theirs = call.tensors(p), call.tensors(other)
        if mine and theirs:  # two lists: item by item (out[i] as x[i]); else each as the other's first
            pairs = zip(mine, theirs) if isinstance(call.values.get(p), list) and \
                isinstance(call.values.get(other), list) else ((m, theirs[0]) for m in mine)
            for (label, a), (olabel, b) in pairs:
                if acl_name(a) != acl_name(b):
                    raise Refused(label, f"dtype {acl_name(a)} must be {olabel}'s, {acl_name(b)}")
    elif k == "same_list_dtype":  # every item of a list of one dtype
        items = call.tensors(p)
        for label, a in items[1:]:
            if acl_name(a) != acl_name(items[0][1]):
                raise Refused(label, f"dtype {acl_name(a)} must be {items[0][0]}'s, {acl_name(items[0][1])}",
                              rule.status)
    elif k == "promotable":
        da, db = call.dtype(p), call.dtype(rule.args[0])
        if da is not None and db is not None and promote(da, db) is None:
            raise Refused(p, f"dtype {da} and {rule.args[0]}'s dtype {db} cannot be promoted to a common dtype")
    elif k == "promote_cast":  # p (an output) must be reachable from the promotion of args
        got = [call.dtype(o) for o in rule.args]
        if any(g is None for g in got) or not call.tensors(p):
            return
        promoted = got[0]
        for g in got[1:]:
            promoted = promote(promoted, g)
        if promoted is None:
            raise Refused(p, f"the dtypes of {' and '.join(rule.args)} ({', '.join(str(g) for g in got)}) cannot be "
                             "promoted")
        for label, a in call.tensors(p):
            if not can_cast(promoted, acl_name(a)):
                raise Refused(label, f"dtype {acl_name(a)} cannot hold the result: the promoted dtype "
                                     f"{promoted} of {' and '.join(rule.args)} cannot be cast to it")
    elif k == "cast_to_promoted":  # p (a scalar, an input) must cast to the promotion of args
        own = call.dtype(p)
        got = [call.dtype(o) for o in rule.args]
        if own is None or any(g is None for g in got):
            return
        promoted = got[0]
        for g in got[1:]:
            promoted = promote(promoted, g)
        if promoted is None:
            return
        scalar = not isinstance(call.values.get(p), (np.ndarray, list))
        # a scalar into a BOOL promotion: the op_api takes any integral one (Add's alpha)
        ok = is_integral(own, True) if promoted == "BOOL" and scalar else can_cast(own, promoted)
        if not ok:
            raise Refused(p, f"dtype {own} cannot be cast to the promoted dtype {promoted}")
    elif k == "broadcast":
        shapes = [a.shape for _, a in call.tensors(p) + call.tensors(rule.args[0])]
        if len(shapes) == 2 and _broadcast(shapes) is None:
            raise Refused(p, f"shape {shapes[0]} and {rule.args[0]}'s shape {shapes[1]} cannot broadcast")
    elif k == "broadcast_out":  # p's shape must be the broadcast of args' shapes
        shapes = [a.shape for o in rule.args for _, a in call.tensors(o)]
        mine = call.tensors(p)
        if len(shapes) == len(rule.args) and mine:
            want = _broadcast(shapes)
            if want is not None and tuple(mine[0][1].shape) != want:
                raise Refused(p, f"shape must be the broadcast shape {want} of {' and '.join(rule.args)}, got "
                                 f"{tuple(mine[0][1].shape)}")
    elif k == "same_shape":
        mine, theirs = call.tensors(p), call.tensors(rule.args[0])
        if mine and theirs and mine[0][1].shape != theirs[0][1].shape:
            raise Refused(p, f"shape {mine[0][1].shape} must be {rule.args[0]}'s, {theirs[0][1].shape}")
    elif k == "max_rank":
        for label, a in call.tensors(p):
            if a.ndim > rule.args[0]:
                raise Refused(label, f"has {a.ndim} dimensions, more than the {rule.args[0]} supported", rule.status)
    elif k == "min_rank":
        for label, a in call.tensors(p):
            if a.ndim < rule.args[0]:
                raise Refused(label, f"has {a.ndim} dimensions, fewer than the {rule.args[0]} required", rule.status)
    elif k == "choice":
        v = call.values.get(p)
        if isinstance(v, str) and v not in rule.args:
            raise Refused(p, f"{v!r} is not one of {', '.join(repr(a) for a in rule.args)}")
    elif k == "range":
        v = call.values.get(p)
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) \
                and not rule.args[0] <= v <= rule.args[1]:
            raise Refused(p, f"{v} is out of range: expected [{rule.args[0]}, {rule.args[1]}]")
    elif k == "one_element":  # not a refusal: refusals.fit reads it
        return
    elif k == "check":  # a hand rule's own function: None, or (label, detail)
        fn: Callable[[Call], Optional[tuple[str, str]]] = rule.args[0]
        found = fn(call)
        if found is not None:
            raise Refused(found[0], found[1], rule.status)
    else:
        raise ValueError(f"unknown rule kind {k!r}")


# ---------------------------------------------------------------------------------------------
# the hand list: what the headers do not state
# ---------------------------------------------------------------------------------------------

def _dims_in_range(param: str, dims: str, allow_dup: bool = False) -> Callable[[Call], Optional[tuple[str, str]]]:
    def check(call: Call) -> Optional[tuple[str, str]]:
        t = call.tensors(param)
        d = call.values.get(dims)
        if not t or d is None:
            return None
        n = max(t[0][1].ndim, 1)
        seen: set[int] = set()
        for i, v in enumerate(d if isinstance(d, list) else [d]):
            v = int(v)
            if not -n <= v < n:
                return f"{dims}[{i}]" if isinstance(d, list) else dims, f"{v} must be in [{-n}, {n - 1}] ({param} " \
                                                                         f"has {t[0][1].ndim} dimensions)"
            if v % n in seen and not allow_dup:
                return dims, f"dimension {v % n} appears more than once"
            seen.add(v % n)
        return None
    return check


def _cat_shapes(call: Call) -> Optional[tuple[str, str]]:
    items = [(label, a) for label, a in call.tensors("tensors") if not (a.ndim == 1 and a.shape[0] == 0)]
    if not items:
        return None
    first = items[0][1]
    dim = int(call.values.get("dim", 0))
    n = first.ndim
    if not -n <= dim < n:  # a 0-D first tensor has no dim at all
        return "dim", f"{dim} is out of range for {items[0][0]}, which has {n} dimensions"
    dim %= max(n, 1)
    for label, a in items[1:]:
        if a.ndim != n:
            return label, f"has {a.ndim} dimensions, {items[0][0]} has {n}"
        for d in range(n):
            if d != dim and a.shape[d] != first.shape[d]:
                return label, f"dimension {d} is {a.shape[d]}, {items[0][0]}'s is {first.shape[d]} (only dim may differ)"
    return None


def _reduce_sum_out(call: Call) -> Optional[tuple[str, str]]:
    dt, out = call.values.get("dtype"), call.tensors("out")
    if dt is not None and out and acl_name(out[0][1]) != acl_name(dt):
        return "out", f"dtype {acl_name(out[0][1])} must be dtype's, {acl_name(dt)}"
    return None


def _split_sections(call: Call) -> Optional[tuple[str, str]]:
    t = call.tensors("self")
    if not t or t[0][1].ndim < 1:
        return ("self", "must have at least 1 dimension, got 0") if t else None
    dim, sections = int(call.values.get("dim", 0)), int(call.values.get("splitSections", 0))
    n = t[0][1].ndim
    if not -n <= dim < n:
        return "dim", f"{dim} must be in [{-n}, {n})"
    size = t[0][1].shape[dim % n]
    if size != 0 and sections == 0:
        return "splitSections", f"must not be 0 when self's size along dim ({size}) is not"
    if size == 0 and sections != 0:
        return "splitSections", f"must be 0 when self's size along dim is 0, got {sections}"
    return None


def _foreach_scalars(call: Call) -> Optional[tuple[str, str]]:
    xs, scalars = call.tensors("x"), call.values.get("scalars") or []
    if not xs or not scalars:
        return None
    first = acl_name(scalars[0])
    got = "FLOAT" if first == "DOUBLE" else first
    want = "INT64" if acl_name(xs[0][1]) == "INT32" else "FLOAT"
    if got != want:
        return "scalars", f"dtype {first} (its first scalar's) does not go with x's dtype {acl_name(xs[0][1])}: " \
                          "FLOAT16, FLOAT and BF16 take FLOAT (or DOUBLE) scalars, INT32 takes INT64"
    return None


def _foreach_tiling(call: Call) -> Optional[tuple[str, str]]:
    xs, outs, scalars = call.tensors("x"), call.tensors("out"), call.values.get("scalars") or []
    if call.values.get("out") is None:  # no out given (compare's probe for the result shapes)
        return None
    if len(outs) != len(xs):
        return "out", f"holds {len(outs)} tensors, x {len(xs)}"
    if len(scalars) != len(xs):
        return "scalars", f"holds {len(scalars)} scalars, x {len(xs)} tensors"
    for (label, x), (olabel, o) in zip(xs, outs):
        if acl_name(o) != acl_name(xs[0][1]):
            return olabel, f"dtype {acl_name(o)} must be x's, {acl_name(xs[0][1])}"
        if o.shape != x.shape and o.size < x.size:
            return olabel, f"{o.shape} has fewer elements than {label} {x.shape}"
    return None


def _foreach_nonempty(call: Call) -> Optional[tuple[str, str]]:
    return ("x", "holds no tensor") if isinstance(call.values.get("x"), list) and not call.values["x"] else None


def _largest_out(rows_first: bool) -> Callable[[Call], Optional[tuple[str, str]]]:
    """Nonzero's out: allocated at the largest result, (numel, rank) (V2: (rank, numel))."""
    def check(call: Call) -> Optional[tuple[str, str]]:
        x, out = call.tensors("self"), call.tensors("out")
        if not x or not out or x[0][1].size == 0 or out[0][1].size == 0:
            return None
        a, o = x[0][1], out[0][1]
        want = (a.size, a.ndim) if rows_first else (a.ndim, a.size)
        big = 0 if rows_first else 1
        if o.ndim != 2 or o.shape[1 - big] != want[1 - big] or o.shape[big] < want[big]:
            return "out", f"shape must be {want} (the largest result: the real one is known only after the run), " \
                          f"got {o.shape}"
        return None
    return check


_MATH = "hicann/ops-math"
_ADD = f"{_MATH} math/add/op_api/aclnn_add.cpp, CheckParams (the DAV_2201 list)"
_CAT = f"{_MATH} conversion/concat_d op_api aclnn_cat.cpp, CheckParams"
_RSUM = f"{_MATH} math/reduce_sum op_api aclnn_reduce_sum.cpp, CheckParams"
_SPLIT = f"{_MATH} conversion/split_v op_api aclnn_split_tensor.cpp, CheckParams"
_FOREACH = "hicann/ops-nn foreach/foreach_mul_scalar_list: the op definition's dtypes and the foreach tiling"
_NONZERO = ("the aclnnNonzero documentation (hicann/ops-nn index/non_zero): out is allocated at the largest output "
            "size")
_NONZERO_API = "hicann/ops-nn index/non_zero/op_api/aclnn_nonzero_v2.cpp, CheckDtypeValid: out INT64"
_MATMUL = "hicann/ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_matmul.cpp, CheckInputParams (the DAV_2201 list)"
_MM = "hicann/ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_mm.cpp, CheckParams (the DAV_2201 list)"
_CUBE = ("FLOAT", "FLOAT16", "BF16")
_REAL_ALL = ("FLOAT", "INT32", "INT64", "FLOAT16", "INT16", "INT8", "UINT8", "DOUBLE", "BOOL", "BF16",
             "COMPLEX64", "COMPLEX128")

HAND: dict[str, tuple[Rule, ...]] = {
    "aclnnAdd": (
        Rule("dtypes", "self", _REAL_ALL, _ADD), Rule("dtypes", "other", _REAL_ALL, _ADD),
        Rule("promotable", "self", ("other",), _ADD),
        Rule("cast_to_promoted", "alpha", ("self", "other"), _ADD),
        Rule("promote_cast", "out", ("self", "other"), _ADD),
        Rule("max_rank", "self", (8,), _ADD), Rule("max_rank", "other", (8,), _ADD),
        Rule("broadcast", "self", ("other",), _ADD),
        Rule("broadcast_out", "out", ("self", "other"), _ADD)),
    "aclnnCat": (
        Rule("dtypes", "tensors", _REAL_ALL[:-1], _CAT), Rule("dtypes", "out", _REAL_ALL[:-1], _CAT),
        Rule("check", "tensors", (lambda c: ("tensors", f"the promoted dtype {c.dtype('tensors')} is not supported")
                                  if c.dtype("tensors") == "COMPLEX128" else None,), _CAT),
        Rule("promote_cast", "out", ("tensors",), _CAT),
        Rule("check", "tensors", (lambda c: next(((lb, f"has {a.ndim} dimensions, more than the 8 supported")
                                                  for lb, a in c.tensors("tensors")[:1] if a.ndim > 8), None),), _CAT),
        Rule("check", "dim", (_cat_shapes,), _CAT)),
    "aclnnReduceSum": (
        Rule("dtypes", "self", _REAL_ALL, _RSUM), Rule("dtypes", "out", _REAL_ALL, _RSUM),
        Rule("dtypes", "dtype", _REAL_ALL, _RSUM), Rule("check", "out", (_reduce_sum_out,), _RSUM),
        Rule("max_rank", "self", (8,), _RSUM), Rule("check", "dims", (_dims_in_range("self", "dims"),), _RSUM)),
    "aclnnSplitTensor": (
        Rule("dtypes", "self", _REAL_ALL, _SPLIT), Rule("dtypes", "out", _REAL_ALL, _SPLIT),
        Rule("same_list_dtype", "out", (), _SPLIT),
        Rule("max_rank", "self", (8,), _SPLIT), Rule("check", "splitSections", (_split_sections,), _SPLIT),
        Rule("max_rank", "out", (8,), _SPLIT)),
    "aclnnForeachMulScalarList": (
        Rule("check", "x", (_foreach_nonempty,), _FOREACH),
        Rule("dtypes", "x", ("FLOAT16", "FLOAT", "BF16", "INT32"), _FOREACH),
        Rule("check", "scalars", (_foreach_scalars,), _FOREACH),
        Rule("dtypes", "out", ("FLOAT16", "FLOAT", "BF16", "INT32"), _FOREACH),
        Rule("same_dtype", "out", ("x",), _FOREACH),
        Rule("check", "out", (_foreach_tiling,), _FOREACH, ACLNN_ERR_INNER_TILING_ERROR),
        Rule("max_rank", "x", (8,), _FOREACH, ACLNN_ERR_INNER_TILING_ERROR),
        Rule("same_list_dtype", "x", (), _FOREACH, ACLNN_ERR_INNER_TILING_ERROR)),
    "aclnnMatmul": (
        *(Rule("dtypes", p, _CUBE, _MATMUL) for p in ("self", "mat2", "out")),
        *(r for p in ("self", "mat2") for r in (Rule("max_rank", p, (6,), _MATMUL), Rule("min_rank", p, (1,), _MATMUL)))),
    "aclnnMm": (
        *(Rule("dtypes", p, _CUBE, _MM) for p in ("self", "mat2", "out")),
        *(r for p in ("self", "mat2") for r in (Rule("max_rank", p, (2,), _MM), Rule("min_rank", p, (2,), _MM)))),
    "aclnnNonzero": (Rule("dtypes", "out", ("INT64",), _NONZERO_API), Rule("check", "out", (_largest_out(True),),
                                                                              _NONZERO)),
    "aclnnNonzeroV2": (Rule("dtypes", "out", ("INT64",), _NONZERO_API), Rule("check", "out", (_largest_out(False),),
                                                                                _NONZERO)),
}


# ---------------------------------------------------------------------------------------------
# outputs CANN takes in more than one shape
# ---------------------------------------------------------------------------------------------

_CHECK_REDUCE = ("aclnn_kernels/common/op_error_check.h CheckReduceOutShape (ops-nn) or CheckShapeAndScalarSame "
                 "(ops-math): the result's shape, or one element each")
# Operators whose op_api compares its result with out through CheckReduceOutShape or
# CheckShapeAndScalarSame (equal shapes, or one element each), or ViewCopies a reduced result
# into out without a shape check: a one-element result goes into a () or (1,) out alike.
ONE_ELEMENT: dict[str, str] = {
    **{op: f"the op_api of {op[5:]} (hicann/ops-math, ops-nn): {_CHECK_REDUCE}" for op in (
        "aclnnReduceSum", "aclnnMean", "aclnnArgMax", "aclnnCat", "aclnnStack", "aclnnSplitTensor",
        "aclnnSplitWithSize", "aclnnPermute", "aclnnAny", "aclnnAminmax", "aclnnTopk", "aclnnMedian")},
    "aclnnKlDiv": f"hicann/ops-nn loss/kl_div op_api aclnn_kl_div.cpp: {_CHECK_REDUCE}",
    "aclnnSmoothL1Loss": "hicann/ops-nn loss/smooth_l1_loss op_api aclnn_smooth_l1_loss.cpp: the result's shape is "
                         "checked for reduction none only; a reduced one is ViewCopied into out",
    "aclnnBinaryCrossEntropy": "issue 37's check against CANN's documentation: a reduced out of () or (1,)",
    "aclnnNLLLoss": "aclnn_nll_loss.h (8.1.RC1): out's shape is (N,) or (1,), totalWeightOut's (1,)",
    "aclnnForeachNorm": "issue 37's check against CANN's documentation: each out tensor () or (1,)",
}
# Foreach operators whose tiling takes an out tensor of x's shape or of at least as many
# elements, written densely from its start (the simulator's foreach_mul_scalar_list.c, after the
# ops-nn foreach tiling's check).
LARGER_OUT = {"aclnnForeachMulScalarList": "hicann/ops-nn foreach tiling: out[i] of x[i]'s shape or with at "
                                           "least as many elements, written densely from its start"}


# Operators whose first phase fills out with zeros, whatever its shape, when an input is empty.
ZERO_WHEN_EMPTY = {"aclnnReduceSum": (f"{_RSUM}: an empty self fills out with zeros (FillScalar), whatever its "
                                      "shape", "self")}


def fit(spec: Any, name: str, result: Any, out: NDArray[Any]) -> Optional[tuple[NDArray[Any], Any]]:
    """What to write, and where, when a result's shape differs from ``out``'s and CANN takes
    that out anyway: (the view of out to write, the result reshaped to it); None when CANN
    refuses the shape."""
    op = spec.aclnn
    base = name.split("[", 1)[0]
    shape = tuple(result.shape)
    n = int(np.prod(shape, dtype=np.int64))
    call = _current.get()
    if call is not None and call.op == op and op in _BEFORE and _BEFORE[op](call) is None and n == 0:
        return out.reshape(-1)[:0], result  # nothing left to run: out left alone, unchecked
    if call is not None and call.op == op and op in ZERO_WHEN_EMPTY and call.values.get(base) is out:
        param = ZERO_WHEN_EMPTY[op][1]
        if any(a.size == 0 for _, a in call.tensors(param)):
            return out, np.zeros(out.shape, out.dtype)
    if n == 1 and out.size == 1:
        source = ONE_ELEMENT.get(op) or _header_says_one(spec, base)
        if source:
            return out, result.reshape(out.shape)
    if base in data_dependent.outputs(op) and out.size >= n and out.flags.c_contiguous:
        return out.reshape(-1)[:n].reshape(shape), result  # the largest-size out, filled from its start
    if op in LARGER_OUT and out.size >= n and out.flags.c_contiguous:
        return out.reshape(-1)[:n].reshape(shape), result
    return None


_current: ContextVar[Optional[Call]] = ContextVar("_current", default=None)


def _header_says_one(spec: Any, param: str) -> Optional[str]:
    proto = getattr(spec, "prototype", None)
    if proto is None:
        return None
    for r in header_rules.rules(proto):
        if r.kind == "one_element" and r.param == param:
            return r.source
    return None


def _cat_call(call: Call) -> Optional[Call]:
    """Cat drops its 1-D tensors of shape [0] before any check, and with none left succeeds
    with nothing checked (out not even read): the rules see what is left, or nothing."""
    items = call.values.get("tensors")
    if not isinstance(items, list):
        return call
    kept = [a for a in items if not (isinstance(a, np.ndarray) and a.shape == (0,))]
    return Call(call.op, call.api, {**call.values, "tensors": kept}) if kept else None


# What an operator's first phase does before its checks, as the rules must see the call.
_BEFORE: dict[str, Callable[[Call], Optional[Call]]] = {"aclnnCat": _cat_call}


# Where an 8.1.RC1 header's list is narrower than what CANN takes (its documentation and op_api
# list more for Atlas A2/A3): the dtypes added to the header's list.
HEADER_WIDER: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    **{op: {p: (("BOOL", "BF16"), f"the {op} documentation (hicann/ops-math): the Atlas A2/A3 list adds BOOL and "
                                  "BFLOAT16 to the header's") for p in ("self", "other")}
       for op in ("aclnnLeScalar", "aclnnLtScalar", "aclnnGeScalar", "aclnnGtScalar")},
    "aclnnAll": {"self": (("FLOAT", "FLOAT16", "UINT8", "INT8", "INT16", "INT32", "INT64", "BOOL", "DOUBLE", "BF16"),
                          "hicann/ops-math aclnn_all.cpp CheckDtypeValid (the 910B list: self is cast to BOOL)")}}


def _from_header(proto: Any) -> tuple[Rule, ...]:
    """The header's rules this module enforces. A header's dtype list for an output is left
    out: op_apis check an output by what the result can be cast into (CanCast), and the
    8.1.RC1 lists there are incomplete (LeScalar's out list has no BOOL, its one real dtype)."""
    outputs = {p.name for p in proto.params if p.is_output and not p.inplace}
    wider = HEADER_WIDER.get(proto.name, {})
    found = []
    for r in header_rules.rules(proto):
        if r.kind == "dtypes" and r.param in outputs:
            continue
        if r.kind == "dtypes" and r.param in wider:
            extra, source = wider[r.param]
            r = Rule(r.kind, r.param, tuple(dict.fromkeys(r.args + extra)), f"{r.source}, widened by {source}")
        found.append(r)
    return tuple(found)


def rules_for(spec: Any) -> tuple[Rule, ...]:
    """The rules of a raw operator's description: the hand list's, then its header's."""
    proto = getattr(spec, "prototype", None)
    return HAND.get(spec.aclnn, ()) + (_from_header(proto) if proto is not None else ())


def check(spec: Any, values: Sequence[Any]) -> None:
    """Refuse a raw call CANN would refuse (AclnnError naming the parameter, 161002 unless
    the rule says another status), before the CPU reference computes anything."""
    rules = rules_for(spec)
    call = Call(spec.aclnn, spec.phase1_name, {p.c_name: v for p, v in zip(spec.params, values)})
    _current.set(call)  # for fit(), later in the same run
    before = _BEFORE.get(spec.aclnn)
    seen = before(call) if before is not None else call
    if seen is None:
        return
    for rule in rules:
        try:
            _apply(rule, seen)
        except Refused as why:
            raise AclnnError(why.status, spec.phase1_name, f"{why.label} {why.detail} (CANN refuses it: "
                             f"{rule.source})", argument=why.label) from None


__all__ = ["Call", "HAND", "LARGER_OUT", "ONE_ELEMENT", "Rule", "acl_name", "can_cast", "check", "fit", "promote",
           "rules_for"]
