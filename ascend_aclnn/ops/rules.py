"""Phase-1 checks stated once, as data: the binding runs them in Python and codegen
writes them out as C for the simulator (native/src/ops/generated/<source>_checks.h), so
the two cannot drift and a simulator kernel is its math only.

A description's ``check=Rules(...)`` lists its rules in the op_api's order. Each rule is a
condition built from the call's arguments (``dim(x, -1) + item(padding, 0) >= 0``, ...),
the argument a failure names and its messages: ``expected``/``got`` for the binding's
"<argument>: expected ..., got ..." and ``c_says``, the simulator's aclGetRecentErrMsg
text (a printf-free template: ``{cName.shape}``, ``{cName.shape[k]}``, ``{cName.ndim}``,
``{cName.format}`` (``{cName.format_number}``: the number alone), ``{cName.dtype}`` (name and number), ``{cName.dtype_name}``,
``{cName}`` for an int array, a double or an int/bool scalar, ``{cName[k]}`` and
``{cName.n}`` for an array's value k and length, and ``{name}`` for a value the rule's
``c_values`` computes). The condition is the rule; the messages only say it.

Arithmetic: + - * on ints are exact within +-2**125 and saturate beyond, in Python and C
alike; ``//`` and ``%`` are Python's (floor), ``tdiv``/``tmod`` C's (toward zero: what an
op_api's int64 ``/`` computes); ``u64``/``u64_mul`` wrap as size_t does. A zero divisor
gives 0 (a rule must refuse it first). tests/test_rules_arith.py compiles the C and holds
it to the Python.

A rule whose argument is an output the binding allocates (its shape and dtype come from
``infer``) is skipped, unless ``instead`` names the argument it was inferred from, which
is then named. The simulator always sees a given output. Format rules are the
simulator's only: the binding passes formats it chose itself. ``side`` keeps a rule to
one of the two (``require``).
"""
from __future__ import annotations

import re
import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from ..cann.constants import (ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR,
                              AclFormat)
from ..tensors import ACL_DTYPES, dtype_name
from .spec import Args, Checker, dtype_list

Env = Mapping[str, Any]
Number = Union[int, float, "Expr"]


# Integers are exact within +-2**125 and saturate beyond it, on both sides alike: every
# comparison against an int64 or uint64 quantity is then the true one, and the C (in
# __int128) never overflows. `bound` tracks how large a value can be (|v| <= 2**bound),
# so the C saturates only where a value can leave that range (a product of int64s).
SATURATE_BITS = 125
_SAT = 2**SATURATE_BITS
U64 = 2**64


def _sat(v: Any) -> Any:
    return v if isinstance(v, float) else max(-_SAT, min(_SAT, v))


def floor_div(a: int, b: int) -> int:
    """Python's //, and 0 for a zero divisor (a rule must refuse that case first; the total
    definition keeps the C free of undefined behaviour)."""
    return a // b if b else 0


def floor_mod(a: int, b: int) -> int:
    """Python's % (the sign of b), 0 for a zero divisor."""
    return a % b if b else 0


def trunc_div(a: int, b: int) -> int:
    """C's / on integers (toward zero), 0 for a zero divisor."""
    if not b:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_mod(a: int, b: int) -> int:
    """C's % on integers (the sign of a), 0 for a zero divisor."""
    return a - b * trunc_div(a, b) if b else 0


@dataclass(frozen=True)
class Expr:
    """A value computed from the call's arguments, in Python (``py``) and in C (``c``:
    ints as __int128, saturated past +-2**125 as ``py`` is). ``kind``: "int", "u64" (an
    int known to lie in [0, 2**64)), "double" or "bool", which says how a message prints it."""
    py: Callable[[Env], Any]
    c: str
    bound: int = 64
    kind: str = "int"

    def _op(self, other: Number, sym: str, fn: Callable[[Any, Any], Any], c_fmt: str = "({a} {sym} {b})") -> "Expr":
        o = lift(other)
        return Expr(lambda e: fn(self.py(e), o.py(e)), c_fmt.format(a=self.c, sym=sym, b=o.c), kind="bool")

    def _is_double(self, o: "Expr") -> bool:
        return "double" in (self.kind, o.kind)

    def _arith(self, other: Number, sym: str, fn: Callable[[Any, Any], Any], bound: int) -> "Expr":
        o = lift(other)
        if self._is_double(o):
            return Expr(lambda e: fn(self.py(e), o.py(e)), f"({self.c} {sym} {o.c})", kind="double")
        if bound <= SATURATE_BITS:
            return Expr(lambda e: fn(self.py(e), o.py(e)), f"({self.c} {sym} {o.c})", bound)
        c = f"opc_mul_sat({self.c}, {o.c})" if sym == "*" else f"opc_sat({self.c} {sym} {o.c})"
        return Expr(lambda e: _sat(fn(self.py(e), o.py(e))), c, SATURATE_BITS)

    def _int_only(self, o: "Expr", what: str) -> None:
        if self._is_double(o):
            raise TypeError(f"{what} takes integers, got a double operand")

    def _divide(self, other: Number, fn: Callable[[int, int], int], helper: str, bound: Optional[int] = None) -> "Expr":
        o = lift(other)
        self._int_only(o, helper)
        return Expr(lambda e: fn(self.py(e), o.py(e)), f"{helper}({self.c}, {o.c})",
                    self.bound if bound is None else bound)

    def __add__(self, other: Number) -> "Expr":
        o = lift(other)
        return self._arith(o, "+", lambda a, b: a + b, max(self.bound, o.bound) + 1)

    def __radd__(self, other: Number) -> "Expr":
        return lift(other) + self

    def __sub__(self, other: Number) -> "Expr":
        o = lift(other)
        return self._arith(o, "-", lambda a, b: a - b, max(self.bound, o.bound) + 1)

    def __rsub__(self, other: Number) -> "Expr":
        return lift(other) - self

    def __neg__(self) -> "Expr":
        return lift(0) - self

    def __mul__(self, other: Number) -> "Expr":
        o = lift(other)
        return self._arith(o, "*", lambda a, b: a * b, self.bound + o.bound)

    def __rmul__(self, other: Number) -> "Expr":
        return lift(other) * self

    def __floordiv__(self, other: Number) -> "Expr":
        """Python's floor division (C's / differs on negatives: see trunc_div)."""
        return self._divide(other, floor_div, "opc_floordiv")

    def __rfloordiv__(self, other: Number) -> "Expr":
        return lift(other) // self

    def __mod__(self, other: Number) -> "Expr":
        """Python's % (the divisor's sign; C's % differs on negatives: see trunc_mod)."""
        o = lift(other)
        return self._divide(o, floor_mod, "opc_floormod", o.bound)

    def __truediv__(self, other: Number) -> "Expr":
        o = lift(other)
        return Expr(lambda e: self.py(e) / o.py(e), f"((double){self.c} / (double){o.c})", kind="double")

    def __rtruediv__(self, other: Number) -> "Expr":
        return lift(other) / self

    def __lt__(self, other: Number) -> "Expr":
        return self._op(other, "<", lambda a, b: a < b)

    def __le__(self, other: Number) -> "Expr":
        return self._op(other, "<=", lambda a, b: a <= b)

    def __gt__(self, other: Number) -> "Expr":
        return self._op(other, ">", lambda a, b: a > b)

    def __ge__(self, other: Number) -> "Expr":
        return self._op(other, ">=", lambda a, b: a >= b)

    def eq(self, other: Number) -> "Expr":
        return self._op(other, "==", lambda a, b: a == b)

    def ne(self, other: Number) -> "Expr":
        return self._op(other, "!=", lambda a, b: a != b)

    # Short-circuit on both sides: the right operand may index what the left one checks.
    def __and__(self, other: "Expr") -> "Expr":
        return Expr(lambda e: bool(self.py(e)) and bool(other.py(e)), f"({self.c} && {other.c})", kind="bool")

    def __or__(self, other: "Expr") -> "Expr":
        return Expr(lambda e: bool(self.py(e)) or bool(other.py(e)), f"({self.c} || {other.c})", kind="bool")

    def __invert__(self) -> "Expr":
        return Expr(lambda e: not self.py(e), f"(!{self.c})", kind="bool")


def lift(v: Number) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"a rule's constant must be an int or a float, got {v!r}")
    if isinstance(v, float):
        return Expr(lambda e: v, repr(float(v)), kind="double")
    if abs(v) > _SAT:
        raise ValueError(f"a rule's int constant must lie within +-2**{SATURATE_BITS}, got {v}")
    return Expr(lambda e: v, _c_int(v), max(v.bit_length(), 1))


def _c_int(v: int) -> str:
    """An int literal as __int128 C: C has no __int128 literal, and -2**63 is no int64 one."""
    if v < 0:
        return f"(-{_c_int(-v)})"
    if v < 2**63:
        return f"((__int128){v})"
    if v < U64:
        return f"((__int128){v}ULL)"
    return f"(((__int128){v >> 64}ULL << 64) + (__int128){v & (U64 - 1)}ULL)"


def tdiv(a: Number, b: Number) -> Expr:
    """C's truncating division a / b (toward zero), as an op_api computes it in int64."""
    return lift(a)._divide(b, trunc_div, "opc_truncdiv")


def tmod(a: Number, b: Number) -> Expr:
    """C's a % b (the sign of a)."""
    x, y = lift(a), lift(b)
    return x._divide(y, trunc_mod, "opc_truncmod", min(x.bound, y.bound))


def u64(a: Number) -> Expr:
    """a as a uint64_t (size_t) holds it: a mod 2**64, as an op_api's cast or size_t
    arithmetic wraps."""
    x = lift(a)
    x._int_only(x, "u64")
    return Expr(lambda e: x.py(e) % U64, f"((__int128)(uint64_t){x.c})", 64, "u64")


def u64_mul(a: Number, b: Number) -> Expr:
    """a * b in uint64_t (size_t) arithmetic: the product mod 2**64."""
    x, y = lift(a), lift(b)
    x._int_only(y, "u64_mul")
    return Expr(lambda e: (x.py(e) * y.py(e)) % U64, f"((__int128)((uint64_t){x.c} * (uint64_t){y.c}))", 64, "u64")


# Leaves. Arguments are named by their Python name; codegen spells them in C as
# T(<cName>) (an aclsim_tensor_desc), I(<cName>) (opc_ints) or D(<cName>) (double).
def ndim(t: str) -> Expr:
    return Expr(lambda e: e[t].ndim, f"((__int128)T({t}).ndim)", 63)


def dim(t: str, k: int) -> Expr:
    """Dim k of tensor t (negative: from the end). A rule on the rank must come first."""
    c = f"T({t}).shape[T({t}).ndim - {-k}]" if k < 0 else f"T({t}).shape[{k}]"
    return Expr(lambda e: e[t].shape[k], f"((__int128){c})", 63)


def length(p: str) -> Expr:
    return Expr(lambda e: len(e[p]), f"((__int128)I({p}).n)", 64, "u64")


def item(p: str, k: int) -> Expr:
    """Value k of int array p. A rule on its length must come first."""
    return Expr(lambda e: e[p][k], f"((__int128)I({p}).v[{k}])", 63)


def value(p: str) -> Expr:
    """A double parameter."""
    return Expr(lambda e: float(e[p]), f"D({p})", kind="double")


def scalar(p: str) -> Expr:
    """An int64 or bool scalar parameter (a bool as 0 or 1)."""
    return Expr(lambda e: int(e[p]), f"((__int128)S({p}))", 63)


def has_zero(t: str, start: int = 0) -> Expr:
    """Some dim of t from `start` on is 0."""
    return Expr(lambda e: 0 in e[t].shape[start:], f"opc_zero_from(&T({t}), {start})", kind="bool")


def any_empty(*ts: str) -> Expr:
    out = has_zero(ts[0])
    for t in ts[1:]:
        out = out | has_zero(t)
    return out


def same_dims(a: str, b: str, start: int, stop: int) -> Expr:
    """a and b agree on dims [start, stop) (negative stop: from the end; both ranks must
    have them: rank rules first)."""
    def py(e: Env) -> bool:
        return bool(e[a].shape[start:stop or None] == e[b].shape[start:stop or None])
    return Expr(py, f"opc_dims_agree(&T({a}), &T({b}), {start}, {stop})", kind="bool")


def is_dtype(t: str, dtype: Any) -> Expr:
    d = np.dtype(dtype)
    return Expr(lambda e: e[t].dtype == d, f"(T({t}).dtype == {ACL_DTYPES[d].name})", kind="bool")


def numel(t: str) -> Expr:
    """t's element count (exact: no int64 product that wraps)."""
    return Expr(lambda e: _sat(math.prod(e[t].shape)), f"opc_numel_sat(&T({t}))", SATURATE_BITS)


def dtypes_equal(t: str, ref: str) -> Expr:
    return Expr(lambda e: e[t].dtype == e[ref].dtype, f"(T({t}).dtype == T({ref}).dtype)", kind="bool")


def contiguous(t: str) -> Expr:
    """The simulator's: t's view is C-contiguous. For side="simulator" rules only (the
    binding stages what it passes itself)."""
    def py(e: Env) -> bool:
        raise TypeError("contiguous() is a simulator-only condition: use it in a side='simulator' rule")
    return Expr(py, f"opc_is_contiguous(&T({t}))", kind="bool")


def where(cond: Expr, a: Number, b: Number) -> Expr:
    x, y = lift(a), lift(b)
    kind = "double" if x._is_double(y) else x.kind if x.kind == y.kind else "int"
    return Expr(lambda e: x.py(e) if cond.py(e) else y.py(e), f"({cond.c} ? {x.c} : {y.c})",
                max(x.bound, y.bound), kind)


@dataclass(frozen=True)
class Dims:
    """A computed shape: tensor ``lead``'s dims before ``stop`` (Python's shape[:stop];
    no lead: none), then ``tail``. ``py`` gives it as a tuple; codegen fills an int64_t
    array with it for a message (``c_values``)."""
    tail: tuple[Expr, ...]
    lead: str = ""
    stop: int = 0

    def py(self, e: Env) -> tuple[int, ...]:
        head = tuple(e[self.lead].shape[:self.stop]) if self.lead else ()
        return head + tuple(int(d.py(e)) for d in self.tail)

    def __add__(self, tail: Sequence[Number]) -> "Dims":
        return Dims(self.tail + tuple(lift(d) for d in tail), self.lead, self.stop)


def leading(t: str, stop: int) -> Dims:
    """t's dims before stop (negative: from its end), as Python's t.shape[:stop]."""
    return Dims((), t, stop)


def dims(*tail: Number) -> Dims:
    return Dims(tuple(lift(d) for d in tail))


def shape_is(t: str, shape: Dims) -> Expr:
    """t has exactly this shape (compared as Python ints: a dim past int64 matches nothing)."""
    k = len(shape.tail)
    head = f"opc_lead_is(&T({t}), &T({shape.lead}), {shape.stop}, {k})" if shape.lead else \
        f"(T({t}).ndim == {k})"
    tail = "".join(f" && ((__int128)T({t}).shape[T({t}).ndim - {k - i}] == {d.c})" for i, d in enumerate(shape.tail))
    return Expr(lambda e: tuple(e[t].shape) == shape.py(e), f"({head}{tail})", kind="bool")


def given(t: str) -> Expr:
    """Whether output t was passed (False: the binding allocates it from ``infer``). The
    simulator always sees a given output: 1 in C."""
    return Expr(lambda e: bool(e[t].given), "1", kind="bool")


Message = Union[str, Callable[[Env], str]]


def _say(m: Message, env: Env) -> str:
    return m(env) if callable(m) else m


@dataclass(frozen=True)
class Rule:
    """One phase-1 check. ``kind``: "require" (``holds`` must be true), "dtype" (the
    argument's dtype in ``dtypes``), "same_dtype" (that of ``ref``), "same_format" (C only),
    "format" (C only: in ``formats``; ``private=True``: not a device-private layout)."""
    kind: str
    blame: str
    holds: Optional[Expr] = None
    expected: Message = ""
    got: Message = ""
    c_says: str = ""
    status: int = ACLNN_ERR_PARAM_INVALID
    instead: Optional[str] = None
    dtypes: tuple[np.dtype[Any], ...] = ()
    ref: str = ""
    others: tuple[str, ...] = ()
    formats: tuple[AclFormat, ...] = ()
    side: str = "both"
    c_values: Mapping[str, Union[Expr, Dims]] = dataclasses.field(default_factory=dict)


SIDES = ("both", "binding", "simulator")


def require(holds: Expr, blame: str, expected: Message, got: Message, c_says: str,
            instead: Optional[str] = None, *, status: int = ACLNN_ERR_PARAM_INVALID, side: str = "both",
            c_values: Optional[Mapping[str, Union[Expr, Dims]]] = None) -> Rule:
    """``side``: "binding" (not in the simulator: a refusal of the binding's own that C
    does not need, e.g. about an output it allocates) or "simulator" (its strictness the
    binding's checks imply, or C's own overflow guards). ``c_values``: values c_says names
    as ``{name}``, computed from the arguments (an Expr, or a Dims printed as [a, b])."""
    if side not in SIDES:
        raise ValueError(f"side: expected one of {SIDES}, got {side!r}")
    return Rule("require", blame, holds, expected, got, c_says, status, instead=instead, side=side,
                c_values=dict(c_values or {}))


def dtype_in(t: str, dtypes: Sequence[Any], instead: Optional[str] = None) -> Rule:
    """The op_api's dtype-list check."""
    return Rule("dtype", t, dtypes=tuple(np.dtype(d) for d in dtypes), instead=instead)


def same_dtype(t: str, ref: str) -> Rule:
    """The op_api's check that t has ref's dtype."""
    return Rule("same_dtype", t, ref=ref)


def same_format(t: str, *others: str, c_says: str = "") -> Rule:
    """The simulator's: every tensor named has t's view format (the binding passes equal ones).
    Without c_says, each pair is refused with op_common's message naming both formats."""
    return Rule("same_format", t, others=others, c_says=c_says)


def format_in(t: str, formats: Sequence[AclFormat], c_says: str) -> Rule:
    return Rule("format", t, formats=tuple(formats), c_says=c_says)


def public_format(*ts: str, c_says: str) -> Rule:
    """The simulator's: no device-private storage layout (NC1HWC0, FRACTAL_NZ, ...)."""
    return Rule("format", ts[0], others=ts[1:], c_says=c_says, formats=())


@dataclass(frozen=True)
class FirstChecks:
    """Where an op_api checks some pointers before the others: it NULL-checks ``null`` (C
    names, in order), checks that ``live`` are live handles and runs its first ``rules``
    rules, and only then checks the remaining pointers (``Rules.null_order``)."""
    null: tuple[str, ...]
    live: tuple[str, ...]
    rules: int


class Rules:
    """An operator's phase-1 checks (``OpSpec.check``): run here, written out as C by
    codegen. ``null_order``: the C names in the order the op_api checks its pointers for
    NULL, when that is not C order. ``exports``: values the rules compute that the kernel
    needs too (block counts, ...), written out as ``<aclnn>_<name>(const <aclnn>_args *)``
    so that the C states them once as well."""

    def __init__(self, *rules: Rule, null_order: tuple[str, ...] = (), exports: Optional[Mapping[str, Expr]] = None,
                 first: Optional[FirstChecks] = None):
        self.rules = rules
        self.first = first
        self.null_order = null_order
        self.exports: dict[str, Expr] = dict(exports or {})
        self.outputs: dict[str, str] = {}  # output name -> its label in messages

    def attach(self, spec: Any) -> None:
        """Called by the OpSpec that holds these rules: its outputs' names and labels."""
        self.outputs = {o.name: label for o, label in zip(spec.outputs, spec.out_labels)}

    def __call__(self, a: Args, check: Checker) -> None:
        env: dict[str, Any] = dict(a)
        env.update(zip(self.outputs, a.outputs))
        outputs = self.outputs
        for r in self.rules:
            if r.kind in ("same_format", "format") or r.side == "simulator":
                continue  # the binding chose the formats: they hold
            name = r.blame
            if name in outputs and not env[name].given:
                if r.instead is None:
                    continue
                name = r.instead
            label = outputs.get(name, name)
            if r.kind == "dtype":
                if env[r.blame].dtype not in r.dtypes:
                    check.mismatch(label, f"dtype {dtype_list(r.dtypes)}", dtype_name(env[r.blame].dtype))
            elif r.kind == "same_dtype":
                check.same_dtype(label, env[r.blame], outputs.get(r.ref, r.ref), env[r.ref])
            elif r.holds is not None and not r.holds.py(env):
                check.fail(label, f"expected {_say(r.expected, env)}, got {_say(r.got, env)}", r.status)


# ---------------------------------------------------------------------------------------
# C
# ---------------------------------------------------------------------------------------

_FIELD = re.compile(r"\{(\w+)(?:\.(\w+))?(?:\[(\d+)\])?\}")


# (kind, attribute) of a c_says field -> (its printf argument, its conversion).
_FIELDS: dict[tuple[Optional[str], Optional[str]], tuple[str, str]] = {("tensor", "shape"): ("opc_shape(&T({n}))", "%s"),
           ("tensor", "ndim"): ("T({n}).ndim", '%" PRId64 "'),
           ("tensor", "format"): ("aclsim_format_name(T({n}).format), (int)T({n}).format", "%s (%d)"),
           ("tensor", "format_number"): ("(int)T({n}).format", "%d"),
           ("tensor", "dtype"): ("aclsim_dtype_name(T({n}).dtype), (int)T({n}).dtype", "%s (%d)"),
           ("tensor", "dtype_name"): ("aclsim_dtype_name(T({n}).dtype)", "%s"),
           ("ints", None): ("opc_dims(I({n}).v, (int64_t)I({n}).n)", "%s"),
           ("ints", "n"): ("I({n}).n", '%" PRIu64 "'),
           ("double", None): ("D({n})", "%g"),
           ("int", None): ("S({n})", '%" PRId64 "'),
           ("bool", None): ("(int)S({n})", "%d")}


def _c_message(template: str, kinds: Mapping[str, str],
               values: Optional[Mapping[str, Union[Expr, Dims]]] = None) -> tuple[str, list[str]]:
    """A c_says template as a printf format and its arguments (``values``: its computed
    fields, already spelt in C; a Dims one as the name of the array codegen fills)."""
    args: list[str] = []
    values = values or {}

    def field_(m: "re.Match[str]") -> str:
        name, attr, index = m.group(1), m.group(2), m.group(3)
        if name in values and attr is None and index is None:
            v = values[name]
            if isinstance(v, Dims):
                args.append(f"opc_dims(dims_{name}, n_{name})")
                return "%s"
            conv = {"u64": ("(uint64_t)", '%" PRIu64 "'), "double": ("(double)", "%g"),
                    "bool": ("(int)", "%d")}.get(v.kind, ("(int64_t)", '%" PRId64 "'))
            args.append(f"{conv[0]}{v.c}")
            return conv[1]
        kind = kinds.get(name)
        if index is not None and (kind, attr) in (("tensor", "shape"), ("ints", None)):
            args.append(f"T({name}).shape[{index}]" if kind == "tensor" else f"I({name}).v[{index}]")
            return '%" PRId64 "'
        found = _FIELDS.get((kind, attr))
        if found is not None:
            args.append(found[0].format(n=name))
            return found[1]
        raise ValueError(f"c_says field {m.group(0)} names no tensor, int array, scalar or computed value")
    text = _FIELD.sub(field_, template.replace("%", "%%"))
    return text, args


_KINDS = {"Tensor": "tensor", "Output": "tensor", "IntArray": "ints"}
_SCALAR_KINDS = {"double": "double", "int64": "int", "bool": "bool", "string": "string"}
_CTYPES = {"tensor": "aclsim_tensor_desc", "ints": "opc_ints", "double": "double", "int": "int64_t", "bool": "bool"}
_STORED_BY_VALUE = ("double", "int", "bool")


def c_function(spec: Any) -> str:
    """The C of spec's Rules: a struct of its resolved arguments and a function that checks
    the pointers (NULL, then live) and runs the rules in order, returning 0 or the status."""
    rules: Rules = spec.check
    params = list(spec.params) + list(spec.outputs)
    by_py = {p.name: p for p in params}
    kinds: dict[str, str] = {}
    for p in params:
        kind = type(p).__name__
        kinds[p.c_name] = _KINDS.get(kind, "")
        if kind in ("Scalar", "Double"):
            kinds[p.c_name] = _SCALAR_KINDS.get(getattr(p, "c_kind", ""), "")
        if not kinds[p.c_name]:
            raise ValueError(f"{spec.name}: rules cannot yet take a {kind} parameter ({p.name})")

    def c(text: str) -> str:  # T(name) with a Python name -> the C struct member
        def sub(m: "re.Match[str]") -> str:
            name = m.group(2)
            p = by_py.get(name)
            return f"a->{p.c_name if p is not None else name}"
        return re.sub(r"\b([TIDS])\((\w+)\)", sub, text)

    op = spec.aclnn
    lines = [f"/* {op}: its arguments after phase 1's pointer checks. */", "typedef struct {"]
    for p in params:
        if kinds[p.c_name] in _CTYPES:
            lines.append(f"    {_CTYPES[kinds[p.c_name]]} {p.c_name};")
    lines.append(f"}} {op}_args;")
    for i, r in enumerate(rules.rules):
        if r.kind == "dtype":
            names = ", ".join(ACL_DTYPES[d].name for d in r.dtypes)
            lines.append(f"static const opc_dtypes {op}_dtypes_{i} = {{{len(r.dtypes)}, {{{names}}}, NULL}};")
    sig = ", ".join([*(_c_param(p, kinds[p.c_name]) for p in params)])
    lines += ["", f"static int {op}_checks(const char *api, {sig}, {op}_args *a)", "{"]
    order = f"OPC_ORDER({', '.join(repr(n).replace(chr(39), chr(34)) for n in rules.null_order)})" \
        if rules.null_order else "NULL"
    arg_items = [f"{{\"{p.c_name}\", {p.c_name}, &a->{p.c_name}, NULL}}" if kinds[p.c_name] == "tensor"
                 else f"{{\"{p.c_name}\", {p.c_name}, NULL, &a->{p.c_name}}}"
                 for p in params if kinds[p.c_name] in ("tensor", "ints")]
    for p in params:
        if kinds[p.c_name] in _STORED_BY_VALUE:
            lines.append(f"    a->{p.c_name} = {p.c_name};")
        elif kinds[p.c_name] == "string":
            lines.append(f"    (void){p.c_name}; /* no rule reads it */")
    lines.append(f"    const opc_arg args[] = {{{', '.join(arg_items)}}};")
    first = rules.first
    if first is not None:  # some pointers, and the rules on them, before the others
        c_order = [p.c_name for p in params if kinds[p.c_name] in ("tensor", "ints")]
        quoted = ", ".join(f'"{n}"' for n in first.null)
        lines.append(f"    int rc = opc_require(api, args, {len(arg_items)}, OPC_ORDER({quoted}));")
        lines += [f"    if (!rc) rc = opc_resolve(api, &args[{c_order.index(n)}], 1);" for n in first.live]
        lines.append("    if (rc) return rc;")
    else:
        lines += [f"    int rc = opc_args(api, args, {len(arg_items)}, {order});", "    if (rc) return rc;"]
    for i, r in enumerate(rules.rules):
        if first is not None and i == first.rules:
            lines.append(f"    if ((rc = opc_args(api, args, {len(arg_items)}, {order}))) return rc;")
        if r.side == "binding":
            continue
        t = f"a->{by_py[r.blame].c_name}"
        if r.kind == "dtype":
            lines.append(f"    if ((rc = opc_check_dtype(api, &{t}, &{op}_dtypes_{i}))) return rc;")
        elif r.kind == "same_dtype":
            lines.append(f"    if ((rc = opc_check_same_dtype(api, &{t}, &a->{by_py[r.ref].c_name}))) return rc;")
        elif r.kind == "same_format" and not r.c_says:  # op_common's message, naming both formats
            for o in r.others:
                lines.append(f"    if ((rc = opc_check_same_format(api, &{t}, &a->{by_py[o].c_name}))) return rc;")
        else:
            if r.kind == "same_format":
                cond = " && ".join(f"a->{by_py[o].c_name}.format == {t}.format" for o in r.others)
            elif r.kind == "format" and not r.formats:
                cond = " && ".join(f"!opc_is_private_format(a->{by_py[o].c_name}.format)"
                                   for o in (r.blame, *r.others))
            elif r.kind == "format":
                cond = "(" + " || ".join(f"{t}.format == {f.name}" for f in r.formats) + ")"
            else:
                assert r.holds is not None
                cond = c(r.holds.c)
            spelt = {k: (v if isinstance(v, Dims) else dataclasses.replace(v, c=c(v.c))) for k, v in r.c_values.items()}
            fmt, fargs = _c_message(r.c_says, kinds, spelt)
            fail = (f"return opc_fail({_status_name(r.status)}, api, \"{fmt}\""
                    + "".join(", " + _c_names(x, by_py) for x in fargs) + ");")
            arrays = [(k, v) for k, v in r.c_values.items() if isinstance(v, Dims)]
            lines.append(f"    if (!({cond}))" + (" {" if arrays else ""))
            for k, v in arrays:
                lead = f"opc_lead(dims_{k}, &a->{by_py[v.lead].c_name}, {v.stop})" if v.lead else "0"
                lines.append(f"        int64_t dims_{k}[ACLSIM_MAX_DIMS + {len(v.tail)}], n_{k} = {lead};")
                lines += [f"        dims_{k}[n_{k}++] = (int64_t){c(d.c)};" for d in v.tail]
            lines.append(f"        {fail}")
            if arrays:
                lines.append("    }")
    lines += ["    return 0;", "}"]
    for name, value_ in rules.exports.items():
        ctype = {"double": "double", "u64": "uint64_t", "bool": "int"}.get(value_.kind, "int64_t")
        lines += ["", f"static inline {ctype} {op}_{name}(const {op}_args *a) {{ return ({ctype}){c(value_.c)}; }}"]
    return "\n".join(lines)


def _c_names(text: str, by_py: Mapping[str, Any]) -> str:
    """T(cName) fields of a c_says template (already C names) -> struct members."""
    return re.sub(r"\b[TIDS]\((\w+)\)", lambda m: f"a->{m.group(1)}", text)


def _status_name(status: int) -> str:
    return {ACLNN_ERR_PARAM_INVALID: "ACLNN_ERR_PARAM_INVALID", ACLNN_ERR_PARAM_NULLPTR: "ACLNN_ERR_PARAM_NULLPTR",
            ACLNN_ERR_INNER_TILING_ERROR: "ACLNN_ERR_INNER_TILING_ERROR"}.get(status, str(status))


def _c_param(p: Any, kind: str) -> str:
    if kind == "tensor":  # const: the checks only read it (and some headers declare an output const)
        return f"const aclTensor *{p.c_name}"
    if kind == "ints":
        return f"const aclIntArray *{p.c_name}"
    if kind == "string":
        return f"const char *{p.c_name}"
    return f"{_CTYPES[kind]} {p.c_name}"


def c_header(source: str, specs: Sequence[Any]) -> str:
    body = "\n\n".join(c_function(s) for s in specs)
    guard = "ACLSIM_GENERATED_" + re.sub(r"\W", "_", source).upper()
    return (f"/* GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;\n"
            f" * do not edit by hand. The phase-1 checks of {source}'s described operators,\n"
            f" * in the op_api's order (ascend_aclnn/ops/rules.py). */\n"
            f"#ifndef {guard}\n#define {guard}\n\n#include \"../op_common.h\"\n#include <inttypes.h>\n\n"
            f"{body}\n\n#endif\n")


__all__ = ["Dims", "Expr", "Rule", "Rules", "any_empty", "c_header", "contiguous", "dim", "dims", "dtype_in",
           "dtypes_equal", "FirstChecks", "floor_div",
           "floor_mod", "format_in", "given", "has_zero", "is_dtype", "item", "leading", "length", "lift", "ndim", "numel",
           "public_format", "require", "same_dims", "same_dtype", "same_format", "scalar", "shape_is", "tdiv",
           "tmod", "trunc_div", "trunc_mod", "u64", "u64_mul", "value", "where"]
