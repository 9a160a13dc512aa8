"""Finding an operator's CPU reference and running a raw call on it (the numpy backend).

Lookup order for ``aclnnXxx`` (the first that fits the call's prototype wins):

1. a reference registered with ``register_reference`` (the user's own, overriding the rest);
2. an operator this package describes (``aa.upsample_nearest_exact1d``...): its NumPy
   reference, the raw call's parameters mapped onto the description's by their C names;
3. a hand formula (``formulas.FORMULAS``, NumPy);
4. the rows of the table derived from op-plugin (``table.rows``): a PyTorch aten op, each
   header parameter bound to an aten argument, a result, a literal or an ignored knob.

"Fits": the reference's own parameter list has the prototype's count, and each parameter
its kind and its output flag. One that does not is refused, with the reason, never
guessed; when nothing fits the call raises NotImplementedError with every reason.

A run converts the call's checked values back to Python ones (``_values``), calls the
reference, checks each result against the caller's written argument (a wrong shape or
list length is ACLNN_ERR_PARAM_INVALID naming that parameter, as CANN's own shape checks
report it), casts it into that argument in place, rounding once, and returns what the npu
path returns: the written arguments, a tuple when several, a list for a tensor list.
"""
from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import re
import threading
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np
from ..cann import data_dependent, headers
from ..cann.constants import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR
from ..errors import AclnnError
from ..ops import REGISTRY
from ..ops.spec import DataType, HostValue, IntArray, OpSpec, Output, Scalar, Tensor, TensorList
from . import private_formats as formats
from . import npu_format_cast
from ..tensors import ACL_DTYPES, DeviceArray, dtype_name
from . import _torch, fast

_BY_CODE = {int(code): dtype for dtype, code in ACL_DTYPES.items()}
_DESCRIBED: dict[str, OpSpec] = {spec.aclnn: spec for spec in REGISTRY}
TABLE_HEADER = "<CPU reference table, derived from op-plugin>"
FORMULA_HEADER = "<CPU reference hand formula>"
REGISTERED_HEADER = "<register_reference params>"
DESCRIBED_HEADER = "<ascend_aclnn's description>"
OWN_HEADERS = (TABLE_HEADER, FORMULA_HEADER, REGISTERED_HEADER, DESCRIBED_HEADER)


# ---------------------------------------------------------------------------------------------
# the sources (each imported on first use: import ascend_aclnn loads none of them)
# ---------------------------------------------------------------------------------------------

def _table() -> Any:
    """The table module (branch-local loader), or None when this build has no table."""
    return _optional("table")


def _formulas() -> Mapping[str, Any]:
    module = _optional("formulas")
    found: Mapping[str, Any] = module.FORMULAS if module is not None else {}
    dd = _optional("data_dependent")  # the operators of data-dependent output size; formulas.py's win
    return {**dd.FORMULAS, **found} if dd is not None else found


def _optional(name: str) -> Any:
    """A sibling module another part of the build provides, or None where it is absent."""
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{name}":
            raise
        return None


def table_rows(name: str) -> tuple[Any, ...]:
    """The generated table's rows for an operator (its hand tier included)."""
    t = _table()
    return tuple(t.rows(name)) if t is not None else ()


def registered_names() -> tuple[str, ...]:
    return tuple(_registered)


def formula_names() -> tuple[str, ...]:
    return tuple(_formulas())


def table_names() -> tuple[str, ...]:
    t = _table()
    return tuple(t.names()) if t is not None else ()


@dataclass(frozen=True)
class Registered:
    fn: Callable[..., Any]
    framework: str
    prototype: Optional[headers.Prototype]  # from register_reference(params=...), else None


_registered: dict[str, Registered] = {}
_generation = [0]  # bumped by every registration: cached resolutions are then stale
_lock = threading.Lock()


def register(name: str, fn: Optional[Callable[..., Any]], framework: str, params: Optional[str]) -> None:
    if framework not in ("numpy", "torch"):
        raise ValueError(f"framework: expected 'numpy' or 'torch', got {framework!r}")
    if fn is not None and not callable(fn):
        raise TypeError(f"fn: expected a function (or None to remove the registration), got {type(fn).__name__}")
    proto = prototype_from_text(name, params, REGISTERED_HEADER) if params is not None else None
    with _lock:
        if fn is None:
            _registered.pop(name, None)
        else:
            _registered[name] = Registered(fn, framework, proto)
        _generation[0] += 1


# ---------------------------------------------------------------------------------------------
# prototypes of references whose operator no installed header declares
# ---------------------------------------------------------------------------------------------

def prototype_from_text(name: str, params: str, header: str) -> headers.Prototype:
    """A C parameter list (without workspaceSize/executor) read as the header reader reads a
    declaration, so outputs follow the same rules. ValueError when it cannot be called."""
    if not isinstance(params, str):
        raise TypeError(f"params: expected the C parameter list as a str, got {type(params).__name__}")
    text = f"aclnnStatus {name}GetWorkspaceSize({params}{', ' if params.strip() else ''}" \
           "uint64_t *workspaceSize, aclOpExecutor **executor);"
    found = headers.parse_header_text(text, header).get(name)
    if found is None or not found.supported:
        why = found.unsupported if found is not None else "not a C parameter list"
        raise ValueError(f"params of {name}: {params!r}: {why}")
    return found


def prototype_from_row(row: Any) -> headers.Prototype:
    params = []
    for b in row.params:
        reason = ("inplace operator" if b.bind == "arg+result" else "table") if b.is_output else ""
        params.append(headers.Param(b.name, b.c_type, b.kind, bool(b.is_output),
                                    b.name.endswith("Optional") and len(b.name) > 8,
                                    b.c_type.startswith("const"), reason))
    return headers.Prototype(row.aclnn, tuple(params), TABLE_HEADER, 0)


_C_TYPES = {"aclTensor": "const aclTensor *", "aclIntArray": "const aclIntArray *", "string": "char *",
            "aclDataType": "aclDataType", "aclTensorList": "const aclTensorList *"}


def prototype_from_description(spec: OpSpec) -> headers.Prototype:
    """The parameter list of an operator this package describes, in header order (its
    parameters, then its outputs), for when no installed header declares it."""
    params = []
    for p in spec.params + spec.outputs:
        out = isinstance(p, Output)
        kind = _kind_of(p)
        c_type = "aclTensor *" if out else _C_TYPES.get(kind, f"const {kind} *" if kind.startswith("acl") else kind)
        params.append(headers.Param(p.c_name, c_type, kind, out, p.c_name.endswith("Optional"),
                                    c_type.startswith("const"), "non-const" if out else ""))
    return headers.Prototype(spec.aclnn, tuple(params), DESCRIBED_HEADER, 0)


def own_prototype(name: str) -> Optional[headers.Prototype]:
    """The prototype a reference carries, for an operator no installed header declares:
    register_reference's params, else the package's description, else the formula's, else
    the first table row's."""
    reg = _registered.get(name)
    if reg is not None and reg.prototype is not None:
        return reg.prototype
    return own_prototype_without_registration(name)


def plan_is_current(generation: int) -> bool:
    """Whether a plan made under registration ``generation`` may run now: nothing registered
    since, and no capture under way (a captured call is recorded, not run)."""
    return generation == _generation[0] and _capture.get() is None


def own_prototype_without_registration(name: str) -> Optional[headers.Prototype]:
    spec = _DESCRIBED.get(name)
    if spec is not None:
        return prototype_from_description(spec)
    formula = _formulas().get(name)
    if formula is not None:
        return prototype_from_text(name, formula.params, FORMULA_HEADER)
    if name == npu_format_cast.OPERATOR:  # no reference: the numpy backend's format hook runs it (run())
        return prototype_from_text(name, npu_format_cast.PARAMS, npu_format_cast.HEADER)
    # a row whose parameters came from op-plugin's call alone must meet a header first
    rows = [r for r in table_rows(name) if getattr(r, "from_header", True)]
    return prototype_from_row(rows[0]) if rows else None


# ---------------------------------------------------------------------------------------------
# resolution
# ---------------------------------------------------------------------------------------------

Shape = tuple[tuple[str, str, bool], ...]  # (name, kind, written) per parameter


@dataclass(frozen=True)
class Reference:
    """What runs an operator on the CPU. ``source``: "registered", "described", "formula" or
    "table"; ``tier`` (tiers.py): "registered", "described", a formula's "formula" or
    "sampled", or the table's "strict", "relaxed" or "hand" (a reviewed hand row): strict when
    every row is, else hand when one is, else relaxed. ``checks``: what that tier is checked by."""
    name: str
    source: str
    tier: str
    framework: str                     # "numpy" or "torch"
    prototype: headers.Prototype       # the parameters it is called with
    doc: str = ""
    rows: tuple[Any, ...] = ()         # the table's rows (several: told apart by literals)
    fn: Optional[Callable[..., Any]] = field(default=None, repr=False)
    described: Optional[OpSpec] = field(default=None, repr=False)
    refused: tuple[str, ...] = ()      # references that did not fit, each with why
    stats: Optional[Callable[..., Any]] = field(default=None, repr=False)  # a sampled formula's statistics

    @property
    def checks(self) -> str:
        """The checks this reference's tier gets (tiers.CHECKS)."""
        from .tiers import checks_for
        return checks_for(self.tier)

    @property
    def aten(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.aten for r in self.rows))

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(e for r in self.rows for e in r.evidence)

    def __str__(self) -> str:
        p = self.prototype
        lines = [f"{self.name}: CPU reference from {_SOURCE_TEXT[self.source]} (tier {self.tier}, "
                 f"runs on {'PyTorch' if self.framework == 'torch' else 'NumPy'})"]
        if self.doc:
            lines.append(f"  {self.doc}")
        from .tiers import TIER_TEXT
        if self.tier in TIER_TEXT:
            lines.append(f"  tier {self.tier}: {TIER_TEXT[self.tier]}")
            lines.append(f"  checks: {self.checks}")
        for row in self.rows:
            fixed = ", ".join(f"{k}={v!r}" for k, v in row.fixed.items())
            lines.append(f"  torch.ops.aten.{row.aten}" + (f" with {fixed}" if fixed else "") +
                         f" ({row.tier}; op-plugin: {', '.join(row.evidence)})")
            for b in row.params:
                lines.append(f"    {b.name} ({b.c_type}): {_binding_text(b)}")
        lines.append(f"  parameters read from {p.header}" + (f", line {p.line}" if p.line else ""))
        lines += [f"  refused: {r}" for r in self.refused]
        return "\n".join(lines)


_SOURCE_TEXT = {"registered": "register_reference", "described": "this package's NumPy reference",
                "formula": "a hand formula", "table": "the table derived from op-plugin"}


def _binding_text(b: Any) -> str:
    if b.bind == "arg":
        return f"aten argument {b.arg}"
    if b.bind == "result":
        return f"aten result {b.result}"
    if b.bind == "arg+result":
        return f"aten argument {b.arg}, then written with result {b.result}"
    if b.bind == "literal":
        return f"must be {b.value!r} (the value op-plugin passes)"
    return f"ignored on the CPU ({b.reason})"


def _shape_of(proto: headers.Prototype, written: Optional[Sequence[bool]] = None) -> Shape:
    flags = written if written is not None else [p.is_output for p in proto.params]
    return tuple((p.name, str(p.kind), bool(w)) for p, w in zip(proto.params, flags))


def misfit(want: Shape, have: Shape) -> Optional[str]:
    """Why a reference's parameters (``have``) cannot serve a prototype's (``want``), or None."""
    if len(want) != len(have):
        return f"it has {len(have)} parameters, the header {len(want)}"
    for i, ((wn, wk, wo), (hn, hk, ho)) in enumerate(zip(want, have)):
        if wk != hk:
            return f"parameter {i} ({wn}) is {wk} in the header, {hk} ({hn}) in the reference"
        if wo != ho:
            role = "an output" if wo else "an input"
            return f"parameter {i} ({wn}) is {role} in the call, not in the reference"
    return None


def _kind_of(p: Any) -> str:
    if isinstance(p, Tensor):
        return "aclTensor"
    if isinstance(p, TensorList):
        return "aclTensorList"
    if isinstance(p, IntArray):
        return "aclIntArray"
    if isinstance(p, HostValue):
        return p.c_kind
    if isinstance(p, DataType):
        return "aclDataType"
    if isinstance(p, Scalar):
        return {"string": "string", "bool": "bool", "float": "float", "double": "double"}.get(p.c_kind,
                                                                                            p.c_kind + "_t")
    return type(p).__name__


def resolve(name: str, proto: Optional[headers.Prototype],
            written: Optional[Sequence[bool]] = None) -> tuple[Optional[Reference], list[str]]:
    """The reference for an operator called through ``proto`` (its written flags possibly
    overridden by ``written``), and the reasons each other candidate was refused. With
    ``proto`` None (no header declares it), each reference's own parameter list serves."""
    refused: list[str] = []
    want = _shape_of(proto, written) if proto is not None else None

    def fits(what: str, own: headers.Prototype, shape: Optional[Shape] = None) -> bool:
        if want is None:
            return True
        why = misfit(want, shape if shape is not None else _shape_of(own))
        if why:
            refused.append(f"{what}: {why}")
        return why is None

    reg = _registered.get(name)
    if reg is not None:
        own = reg.prototype or proto or own_prototype_without_registration(name)
        if own is None:
            refused.append("register_reference: no header declares it and no params= were given")
        elif fits("register_reference", own):
            return Reference(name, "registered", "registered", reg.framework, proto or own,
                             doc=f"{getattr(reg.fn, '__module__', '?')}.{getattr(reg.fn, '__qualname__', reg.fn)}",
                             fn=reg.fn, refused=tuple(refused)), refused
    spec = _DESCRIBED.get(name)
    if spec is not None and fits(f"ascend_aclnn.{spec.name}", prototype_from_description(spec)):
        return Reference(name, "described", "described", "numpy", proto or prototype_from_description(spec),
                         doc=f"ascend_aclnn.{spec.name}: {spec.summary}", described=spec,
                         refused=tuple(refused)), refused
    formula = _formulas().get(name)
    if formula is not None:
        own = prototype_from_text(name, formula.params, FORMULA_HEADER)
        if fits("the hand formula", own):
            return Reference(name, "formula", getattr(formula, "tier", "formula"), "numpy", proto or own,
                             doc=formula.doc, fn=formula.fn, refused=tuple(refused),
                             stats=getattr(formula, "stats", None)), refused
    rows = [r for r in table_rows(name) if (want is not None or getattr(r, "from_header", True))
            and fits(f"the table row for aten {r.aten}", prototype_from_row(r))]
    if rows:
        tiers = {r.tier for r in rows}  # strict only when every row is; a hand row among them says so
        tier = "strict" if tiers == {"strict"} else "hand" if "hand" in tiers else "relaxed"
        return Reference(name, "table", tier, "torch", proto or prototype_from_row(rows[0]), rows=tuple(rows),
                         refused=tuple(refused)), refused
    return None, refused


NO_ROW = ("none registered, no hand formula, and no row in the table derived from op-plugin (the code torch_npu "
          "runs calls it with computed arguments only, or only for a torch_npu custom op that torch has no CPU "
          "kernel for, or not at all)")


def why_no_row(name: str) -> str:
    """Why nothing serves an operator: the generator's recorded reason when the table's loader
    offers one (``table.why_missing``), else the general causes. An operator the table has a
    row for lacks a header, not a row: the row's parameters came from op-plugin's call alone
    and wait for a header to be checked against."""
    waiting = [r for r in table_rows(name) if not getattr(r, "from_header", True)]
    if waiting:
        atens = ", ".join(dict.fromkeys(f"torch.ops.aten.{r.aten}" for r in waiting))
        return (f"the table derived from op-plugin has a row for it ({atens}), but its parameters come from "
                f"op-plugin's call alone and no installed header declares {name} to check them against (install "
                f"CANN's headers, or give their directory to ascend_aclnn.aclnn.add_headers)")
    t = _table()
    why_missing = getattr(t, "why_missing", None) if t is not None else None
    why = why_missing(name) if why_missing is not None else None
    if not why:
        return NO_ROW
    return f"none registered, no hand formula, and no row in the table derived from op-plugin ({why})"


def missing(name: str, refused: Sequence[str]) -> str:
    """Why an operator has no CPU reference, and what to use instead."""
    text = f"{name} has no CPU reference for the numpy backend"
    if refused:
        text += ": " + "; ".join(f"{r} (refused)" for r in refused)
    else:
        text += ": " + why_no_row(name)
    spec = _DESCRIBED.get(name)
    if spec is not None:
        text += f". ascend_aclnn.{spec.name} describes this operator and runs on both backends"
    return text + ". Run it on the npu backend, or give one with ascend_aclnn.aclnn.register_reference."


def not_found(name: str, header_text: str) -> str:
    """An operator neither an installed header nor a CPU reference knows: the reference's side
    first (on a CPU machine that is the answer), the header search (the fix on an NPU host),
    and the known names close to it."""
    text = (f"{name} has no CPU reference for the numpy backend: {why_no_row(name)}. Nor can the npu backend call "
            f"it here: {header_text.rstrip('.')}. A reference of your own: ascend_aclnn.aclnn.register_reference("
            f"{name!r}, fn, params=...).")
    near = near_names(name)
    if near:
        text += " Did you mean " + ", ".join(
            n + (f" (ascend_aclnn.{_DESCRIBED[n].name})" if n in _DESCRIBED else "") for n in near) + "?"
    return text


def near_names(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` known operator names (declared, described, with a formula, a row or a
    registration) spelled like ``name``, closest first; the "aclnn" prefix and case aside."""
    try:
        declared = headers.names()
    except Exception:  # an unreadable search path: the references' names still count
        declared = []
    known = set(declared) | set(_DESCRIBED) | set(registered_names()) | set(formula_names()) | set(table_names())
    known.discard(name)
    by_key: dict[str, str] = {}
    for k in sorted(known):
        by_key.setdefault(_bare(k), k)
    return [by_key[k] for k in difflib.get_close_matches(_bare(name), list(by_key), n=n, cutoff=0.75)]


def _bare(name: str) -> str:
    return (name[len("aclnn"):] if name.startswith("aclnn") else name[len("acl"):] if name.startswith("acl")
            else name).lower()


_resolved: dict[int, tuple[int, Any, Optional[Reference], list[str]]] = {}


def resolved_for(spec: Any) -> tuple[Optional[Reference], list[str]]:
    """resolve() for a raw operator's description, cached until the next registration."""
    entry = _resolved.get(id(spec))
    gen = _generation[0]
    if entry is None or entry[0] != gen or entry[1] is not spec:
        proto = spec.prototype
        written = [bool(getattr(p, "written", False)) for p in spec.params]
        ref, refused = resolve(spec.aclnn, proto, written)
        entry = (gen, spec, ref, refused)
        _resolved[id(spec)] = entry
    return entry[2], entry[3]


# ---------------------------------------------------------------------------------------------
# running a call
# ---------------------------------------------------------------------------------------------

def _host(v: Any) -> Any:
    if isinstance(v, DeviceArray):
        return v._host if v._storage is None else formats.logical_host(v)  # a private format: decoded
    return v


def _scalar(value: tuple[int, bytes]) -> Any:
    """An aclScalar's (ACL dtype, bytes) as a number: a Python one for the default dtypes
    (bool, int64, float64, complex128), else a NumPy scalar keeping its dtype."""
    dtype = _BY_CODE[value[0]]
    v = np.frombuffer(value[1], dtype, 1)[0]
    return v.item() if dtype in (np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float64),
                                 np.dtype(np.complex128)) else v


def values(b: Any, tensors: Sequence[Any]) -> list[Any]:
    """One Python value per header parameter, as the references take them: NumPy arrays
    (a DeviceArray's host array), lists of them, numbers, lists, np.dtype, str, None."""
    spec = b.spec
    t = dict(zip(b.tensor_params, tensors))
    out: list[Any] = []
    for i, p in enumerate(spec.params):
        v = t[i] if i in t else b.args_template[p.name]
        if v is None:
            out.append(None)
        elif isinstance(p, TensorList):
            out.append([_host(e) for e in v])
        elif isinstance(p, Tensor):
            out.append(_host(v))
        elif isinstance(p, HostValue):
            kind = p.c_kind
            if kind == "aclScalar":
                out.append(_scalar(v))
            elif kind == "aclScalarList":
                out.append([_scalar(s) for s in v])
            elif kind == "aclFloatArray":  # what C receives: float32 values
                out.append([float(np.float32(f)) for f in v])
            else:
                out.append(list(v))
        elif isinstance(p, IntArray):
            out.append(list(v))
        elif isinstance(p, DataType):
            out.append(_BY_CODE[int(v)])
        elif isinstance(p, Scalar) and p.c_kind == "float":
            out.append(float(np.float32(v)))
        else:
            out.append(v)
    return out


def run(b: Any, tensors: Sequence[Any]) -> Any:
    """Run a checked raw call (api.run_bound on the numpy backend)."""
    spec = b.spec
    t = dict(zip(b.tensor_params, tensors))
    generation = _generation[0]
    planned = b.cpu_plan  # this signature's decisions, made once (fast.py)
    if planned is not None and planned.generation == generation and _capture.get() is None:
        done = planned.run(tensors)
        if done is not NotImplemented:
            return done
    formats.check_cpu_call(spec, tensors, b.tensor_names)  # private formats: the consumers' refusals
    done = formats.trans_matmul_weight_on_cpu(spec, tensors)
    if done is NotImplemented:  # aclnnNpuFormatCast: its op_api's checks, then the layout, on the stored arrays
        done = npu_format_cast.run_on_cpu(spec, tensors)
    if done is not NotImplemented:
        return done
    vals = values(b, tensors)
    done = formats.matmul_weight_nz_on_cpu(spec, vals, tensors)
    if done is not NotImplemented:
        return done
    ref, refused = resolved_for(spec)
    if ref is None:
        raise NotImplementedError(missing(spec.aclnn, refused))
    if ref.source != "described":  # a described operator checks as CANN does itself
        from . import refusals
        refusals.check(spec, vals)  # what CANN's first phase refuses, refused before computing
    written = [i for i, p in enumerate(spec.params) if getattr(p, "written", False)]
    callers = [t.get(i) for i in written]  # the caller's objects, returned as given
    capture = _capture.get()
    if ref.source == "described":
        assert ref.described is not None
        results = _run_described(ref.described, spec, vals, written)
    else:
        ran: list[Any] = []
        results = _run_rows(ref, spec, vals, ran) if ref.source == "table" else \
            _run_function(ref, spec, vals, written)
        _refuse_null_outputs(spec, vals, written, results)
        for i, r in zip(written, results):
            _deliver(spec, spec.params[i].c_name, vals[i], r)
        if ran and capture is None:
            fast.remember(b, generation, ran, tensors, vals, results, _deliver, _aten_call)
    for i in written:  # a private-format output: its logical result encoded into its storage
        if isinstance(t.get(i), DeviceArray) and t[i]._storage is not None:
            formats.store_logical(t[i], vals[i])
    if capture is not None:
        capture.update((i, _as_numpy(r)) for i, r in zip(written, results))
    delivered = [list(c) if isinstance(spec.params[i], TensorList) and c is not None else c
                 for i, c in zip(written, callers)]
    cut = data_dependent.outputs(spec.aclnn)  # returned cut to the real shape, as the npu backend does
    if cut:
        delivered = [data_dependent.cut(c, tuple(r.shape)) if spec.params[i].c_name in cut and c is not None
                     and r is not None else c for i, c, r in zip(written, delivered, results)]
    return delivered[0] if len(delivered) == 1 else tuple(delivered)


def _refuse_null_outputs(spec: Any, vals: Sequence[Any], written: Sequence[int], results: Sequence[Any]) -> None:
    """An output the operator computes (its reference returns it) passed as NULL: the op_api's
    null check of its out tensor (161001), before any result is delivered. One it leaves
    alone (an outputMask's False, an output the reference does not produce) may be NULL; so
    may every output of a capturing run (the tools finding output shapes from the reference)."""
    if _capture.get() is not None:
        return
    for i, r in zip(written, results):
        if vals[i] is None and r is not None:
            name = spec.params[i].c_name
            raise AclnnError(ACLNN_ERR_PARAM_NULLPTR, spec.phase1_name,
                             f"{name} is NULL, an output the operator writes", argument=name)


_capture: ContextVar[Optional[dict[int, Any]]] = ContextVar("_capture", default=None)


@contextlib.contextmanager
def capturing() -> Iterator[dict[int, Any]]:
    """Within it, a raw call on the numpy backend also records the reference's results, by the
    written parameter's index, as NumPy arrays (lists for a tensor list; None for an output it
    leaves alone): compare allocates the outputs a user did not shape from them."""
    found: dict[int, Any] = {}
    token = _capture.set(found)
    try:
        yield found
    finally:
        _capture.reset(token)


def _as_numpy(result: Any) -> Any:
    if result is None:
        return None
    if isinstance(result, (list, tuple)):
        return [_as_numpy(r) for r in result]
    if _torch.is_tensor(result):
        return _torch.to_numpy(result)
    return np.asarray(result)


def _fail(spec: Any, name: str, detail: str) -> AclnnError:
    return AclnnError(ACLNN_ERR_PARAM_INVALID, spec.phase1_name, detail, argument=name)


def _deliver(spec: Any, name: str, out: Any, result: Any) -> None:
    """Check one result against the caller's written argument and cast it in, in place."""
    if out is None or result is None:  # a NULL output, or one the reference leaves alone
        return
    if isinstance(out, list):
        if not isinstance(result, (list, tuple)):
            raise TypeError(f"{spec.aclnn}'s CPU reference returned {type(result).__name__} for the tensor list "
                            f"{name}; expected a list of arrays")
        if len(result) > len(out):  # more tensors than results: the rest are left alone, as the NPU does
            raise _fail(spec, name, f"expected at least {len(result)} tensors (the CPU reference's result count), "
                                    f"got {len(out)}")
        for k, (o, r) in enumerate(zip(out, result)):
            _deliver(spec, f"{name}[{k}]", o, r)
        return
    shape = tuple(r for r in (result.shape if hasattr(result, "shape") else np.shape(result)))
    if shape != tuple(out.shape):
        from . import refusals  # an out of another shape CANN takes: () for (1,), a larger foreach out
        fitted = refusals.fit(spec, name, result, out) if isinstance(out, np.ndarray) else None
        if fitted is None:
            raise _fail(spec, name, f"expected shape {shape} (the shape of the CPU reference's result), "
                                    f"got shape {tuple(out.shape)}")
        out, result = fitted
    if _torch.is_tensor(result):
        problem = _torch.write(out, result)
        if problem:
            raise _fail(spec, name, f"expected {problem}")
        return
    r = np.asarray(result)
    if r.dtype.kind == "c" and out.dtype.kind != "c":
        raise _fail(spec, name, f"expected a complex array: the result is {dtype_name(r.dtype)} (its imaginary "
                                f"part would be lost), got {dtype_name(out.dtype)}")
    _torch.cast_into(out, r)


def _read_only(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        view = v.view()
        view.flags.writeable = False
        return view
    if isinstance(v, list):
        return [_read_only(e) for e in v]
    return v


def _run_function(ref: Reference, spec: Any, vals: list[Any], written: list[int]) -> list[Any]:
    """A NumPy (or torch) function called with the INPUT parameters as keywords."""
    torch_fw = ref.framework == "torch"
    if torch_fw:
        _torch.torch_module(spec.aclnn)
    kwargs: dict[str, Any] = {}
    assert ref.fn is not None
    try:  # a parameter the header declares written but the operator also reads (BatchNorm's
        # non-const runningMean, updated in place): passed to a function that names it
        named = {n for n, q in inspect.signature(ref.fn).parameters.items()
                 if q.kind in (q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY)}
    except (TypeError, ValueError):
        named = set()
    for i, p in enumerate(spec.params):
        if getattr(p, "written", False) and not getattr(p, "read", True) and p.c_name not in named:
            continue  # write-only: an output, not an input of the function
        v = vals[i]
        kwargs[p.c_name] = _torch_value(v) if torch_fw else _read_only(v)
    assert ref.fn is not None
    got = ref.fn(**kwargs)
    if len(written) == 1:
        if isinstance(got, tuple) and len(got) == 1:
            got = got[0]
        return [got]
    if not isinstance(got, (tuple, list)) or len(got) != len(written):
        names = [spec.params[i].c_name for i in written]
        raise TypeError(f"{spec.aclnn}'s CPU reference ({ref.doc}) returned {_count(got)}; expected a tuple of "
                        f"{len(written)}, one per written parameter ({', '.join(names)})")
    return list(got)


def _count(v: Any) -> str:
    return f"a {type(v).__name__} of {len(v)}" if isinstance(v, (tuple, list)) else f"one {type(v).__name__}"


def _torch_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return _torch.to_torch(v)
    if isinstance(v, list):
        return [_torch_value(e) for e in v]
    if isinstance(v, np.dtype):
        return _torch.torch_dtype(v)
    return v


def _run_described(described: OpSpec, spec: Any, vals: list[Any], written: list[int]) -> list[Any]:
    """A raw call of an operator this package describes: its own checks and NumPy reference,
    the header's parameters matched to the description's by C name."""
    from ..backends import numpy as numpy_backend
    by_c = {p.c_name: v for p, v in zip(spec.params, vals)}
    kwargs = {p.name: by_c[p.c_name] for p in described.params}
    outs = [by_c[o.c_name] for o in described.outputs]
    for o, v in zip(described.outputs, outs):  # their op_apis null-check every output first; out=None allocates
        if v is None:
            raise AclnnError(ACLNN_ERR_PARAM_NULLPTR, spec.phase1_name, f"{o.c_name} is NULL", argument=o.c_name)
    labels = dict(zip(described.out_labels, (o.c_name for o in described.outputs)))
    kwargs["out"] = outs[0] if len(outs) == 1 else tuple(outs)
    try:
        a = described.bind((), kwargs)
    except AclnnError as exc:  # name the header's output parameter, not the description's out=
        if exc.argument in labels:
            raise AclnnError(exc.status, exc.api, exc.detail, exc.recent, labels[exc.argument]) from None
        raise
    got = numpy_backend.run(described, a)
    return list(got) if isinstance(got, tuple) else [got]


# ---- table rows ------------------------------------------------------------------------------

def _literal_matches(expected: Any, given: Any) -> bool:
    if isinstance(given, np.dtype):
        try:
            return bool(np.dtype(expected) == given)
        except TypeError:
            return False
    if isinstance(given, np.generic):
        given = given.item()
    if isinstance(expected, list) or isinstance(given, list):
        return list(expected or []) == list(given or []) if expected is not None and given is not None \
            else expected is given
    return bool(expected == given) if expected is not None else given is None


def candidate_rows(ref: Reference, vals: Sequence[Any]) -> list[Any]:
    """The rows whose literals the call's values equal, best first; NotImplementedError
    naming what the rows cover when none does."""
    found = [row for row in ref.rows
             if all(_literal_matches(b.value, v) for b, v in zip(row.params, vals) if b.bind == "literal")]
    if found:
        return found
    covered = "; ".join(", ".join(f"{b.name} = {b.value!r}" for b in row.params if b.bind == "literal") +
                        f" ({row.aten})" for row in ref.rows)
    given = ", ".join(f"{b.name} = {v!r}" for b, v in zip(ref.rows[0].params, vals) if b.bind == "literal")
    raise NotImplementedError(f"{ref.name}: the CPU reference covers only the values op-plugin passes: {covered}; "
                              f"got {given}")


def choose_row(ref: Reference, vals: Sequence[Any]) -> Any:
    """The first row whose literals the call's values equal (the one a call runs when its
    aten op accepts the call; else the next such row is tried)."""
    return candidate_rows(ref, vals)[0]


def _aten_value(value: Any, type_text: str) -> Any:
    """A reference-side value as the aten argument's schema type takes it."""
    if value is None:
        return None
    base = type_text[len("Optional["):-1] if type_text.startswith("Optional[") else type_text
    if base == "Tensor":
        if isinstance(value, np.ndarray):
            return _torch.to_torch(value)
        return _torch.scalar_tensor(value.item() if isinstance(value, np.generic) else value)
    if base.startswith("List[") and "Tensor" in base:
        return [None if v is None else _torch.to_torch(v) for v in value]
    if base == "ScalarType":
        return _torch.torch_dtype(value)
    if base == "number":  # a bool as the int it is: aten refuses a bool alpha for a non-bool result, CANN not
        value = value.item() if isinstance(value, (np.generic, np.ndarray)) else value
        return int(value) if isinstance(value, bool) else value
    if base == "List[number]":
        return [v.item() if isinstance(v, np.generic) else v for v in value]
    if base in ("int", "SymInt"):
        return int(value)
    if base in ("float",):
        return float(value)
    if base == "bool":
        return bool(value)
    return value


def _aten_call(row: Any, vals: Sequence[Any],
               marks: Optional[Mapping[int, Any]] = None) -> tuple[Any, list[Any], dict[str, Any]]:
    """The row's aten op (as the installed torch has it) and its arguments for the call's values.
    ``marks``: by header parameter index, a value passed as it is instead of the converted one
    (fast.py's placeholders for the tensors a per-signature template leaves open)."""
    op = _torch.aten_op(row.aclnn, row)
    schema = {a.name: a for a in op._schema.arguments}
    given: dict[str, Any] = {}
    for i, (b, v) in enumerate(zip(row.params, vals)):
        if b.bind in ("arg", "arg+result"):
            given[b.arg] = marks[i] if marks is not None and i in marks else \
                _aten_value(v, str(schema[b.arg].real_type))
    for k, v in row.fixed.items():
        given[k] = _aten_value(v, str(schema[k].real_type))
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for a in op._schema.arguments:  # positional in schema order while they are given, then keywords
        if a.name not in given:
            continue
        if not a.kwarg_only and len(args) == _position(op, a.name):
            args.append(given[a.name])
        else:
            kwargs[a.name] = given[a.name]
    return op, args, kwargs


# What torch raises for a call its kernel refuses (shapes, dims, dtypes, values)
_TORCH_REFUSALS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError, OverflowError)


# torch's words for a dtype its CPU kernel lacks ("cholesky_cpu" not implemented for 'Half';
# linalg.inv: Low precision dtypes not supported)
_CPU_LACKS = re.compile(r"not implemented for '|dtypes? not supported")


def _refusal(spec: Any, row: Any, exc: BaseException) -> Exception:
    """torch's refusal as the operator's: ACLNN_ERR_PARAM_INVALID from phase 1, as CANN's op_api
    reports what it refuses; NotImplementedError when torch's CPU kernel lacks what the NPU may
    have (a dtype), which is not the operator refusing."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if _CPU_LACKS.search(text):
        return NotImplementedError(f"{spec.aclnn}'s CPU reference (torch.ops.aten.{row.aten}) cannot run this call "
                                   f"on the CPU: {text}")
    return AclnnError(ACLNN_ERR_PARAM_INVALID, spec.phase1_name,
                      f"refused by the CPU reference (torch.ops.aten.{row.aten}): {text}")


def _run_rows(ref: Reference, spec: Any, vals: list[Any], ran: Optional[list[Any]] = None) -> list[Any]:
    """The written parameters' results of a table row's aten op. ``ran``: receives (the row
    that ran, whether it was the first candidate, its aten op, whether the device precision
    took a second run), what fast.py plans a signature from."""
    torch = _torch.torch_module(spec.aclnn)
    # rows no literal tells apart are alternatives (Sign: sign, then sgn for complex input): the
    # first whose aten op accepts the call runs; when none does, the first one's refusal is the answer
    refused: Optional[tuple[Any, BaseException]] = None
    for row in candidate_rows(ref, vals):
        op, args, kwargs = _aten_call(row, vals)
        try:
            out = op(*args, **kwargs)
        except AclnnError:
            raise
        except _TORCH_REFUSALS as exc:
            refused = refused or (row, exc)
            continue
        break
    else:
        assert refused is not None
        raise _refusal(spec, *refused) from None
    results = list(out) if isinstance(out, tuple) else [out]
    written = [b for b, p in zip(row.params, spec.params) if getattr(p, "written", False)]
    keep = {b.result for b in written if b.bind in ("result", "arg+result")}
    wider = _device_precision(torch, op, args, kwargs, [r if i in keep else None for i, r in enumerate(results)])
    if wider:  # computed again from the inputs at the precision the device keeps
        wide = max(wider.values(), key=lambda d: d.itemsize)
        try:
            again = op(*[_widen(torch, v, wide) for v in args], **{k: _widen(torch, v, wide) for k, v in kwargs.items()})
        except _TORCH_REFUSALS as exc:
            raise _refusal(spec, row, exc) from None
        again_results = list(again) if isinstance(again, tuple) else [again]
        for i, dtype in wider.items():
            results[i] = again_results[i].to(dtype)
    if ran is not None:
        ran[:] = [row, refused is None, op, bool(wider)]
    return [results[b.result] if b.bind in ("result", "arg+result") else None for b in written]


# CANN's op_api promotes the inputs, computes in the promoted type and casts the result into
# each output: aten's CPU result, cast into the caller's array, is that. The exception is a
# result that torch's device kernels keep wider than its inputs (LayerNorm's float32 mean and
# rstd for float16 input: the accumulation type, as op-plugin allocates them for the NPU) where
# the CPU kernel returns it rounded to float16. aten's meta function states the device rule;
# such results are computed again from the inputs cast to that dtype.

def _is_half(torch: Any, value: Any) -> bool:
    return _torch.is_tensor(value) and value.dtype in (torch.float16, torch.bfloat16)


def _on_meta(torch: Any, value: Any) -> Any:
    if _torch.is_tensor(value):
        return torch.empty_like(value, device="meta")
    if isinstance(value, list):
        return [_on_meta(torch, v) for v in value]
    return value


def _device_precision(torch: Any, op: Any, args: list[Any], kwargs: dict[str, Any],
                      results: list[Any]) -> dict[int, Any]:
    """By result index, the floating dtype torch's device kernels give a result that the CPU
    kernel returned narrower, in float16/bfloat16; {} when none (or the op has no meta function)."""
    if not any(_is_half(torch, r) for r in results):
        return {}
    try:
        meta = op(*[_on_meta(torch, v) for v in args], **{k: _on_meta(torch, v) for k, v in kwargs.items()})
    except Exception:  # no meta function (data-dependent shapes...): the CPU's result stands
        return {}
    metas = list(meta) if isinstance(meta, tuple) else [meta]
    return {i: m.dtype for i, (r, m) in enumerate(zip(results, metas)) if _is_half(torch, r) and
            _torch.is_tensor(m) and m.is_floating_point() and m.dtype.itemsize > r.dtype.itemsize}


def _widen(torch: Any, value: Any, dtype: Any) -> Any:
    if _torch.is_tensor(value) and value.is_floating_point() and value.dtype != dtype:
        return value.to(dtype)
    if isinstance(value, list):
        return [_widen(torch, v, dtype) for v in value]
    return value


def _position(op: Any, name: str) -> int:
    return [a.name for a in op._schema.arguments].index(name)


def check_signature(name: str, fn: Callable[..., Any], proto: headers.Prototype) -> None:
    """A registered function must accept the operator's input parameters as keywords."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: checked when called
        return
    inputs = {p.name: None for p in proto.params if not p.is_output or p.inplace}
    outputs = [p.name for p in proto.params if p.is_output]
    try:
        sig.bind(**inputs)
    except TypeError as exc:
        raise TypeError(f"register_reference({name!r}): a CPU reference takes its inputs and returns its outputs: "
                        f"the function must take the operator's input parameters as keywords "
                        f"({', '.join(inputs) or 'none'}), as {proto.header} declares them, and return its outputs "
                        f"({', '.join(outputs) or 'none'}) instead of taking them: {exc}") from None


__all__ = ["Reference", "candidate_rows", "capturing", "check_signature", "choose_row", "missing", "near_names", "not_found", "own_prototype", "register",
           "resolve", "run", "table_names", "table_rows", "values", "why_no_row"]
