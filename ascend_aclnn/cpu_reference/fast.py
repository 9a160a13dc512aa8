"""A raw call's CPU reference planned once per signature: the per-call path of a table row.

Everything ``runner.run`` decides for a table row depends on the call's signature only: the
operator, the tensors' shapes, dtypes and strides, which are NULL, and the attribute
values. That is exactly what a validated binding (``ops.checked_calls.CheckedCall``, one
per signature) stands for, so the decisions are kept on it: the row and its aten op, the
aten arguments with the tensors left open, the refusals' verdict (``refusals.check`` reads
only shapes, dtypes and attribute values), and how results reach the caller. A later call
of that signature then only makes ``torch.from_numpy`` views of its arrays and calls aten:

- into the caller's arrays directly, through the op's ``out=`` overload, when each result
  has its output's dtype and shape (aten's meta function says so from the inputs' shapes
  and dtypes alone), no output shares memory with an input, and every tensor input is
  floating or complex (an integer input can be refused by its values mid-run, as a zero
  divisor or an index out of range, after part of ``out`` is written);
- else computed, then cast into the caller's arrays (``runner._deliver``: one rounding).

A signature is planned at its second run through the general path (a binding that is not
cached never comes back: no planning for it), and only when that run took the row the
general path tries first, kept its results at aten's precision, and had results of its
outputs' own shapes. Anything a plan does not cover (a DeviceArray in a private format, a
negative stride, a capture, a result of another shape, any exception in the planned call)
goes back to the general path, which answers as it always did. The one trace a plan can
leave: a floating call that aten refuses by its values mid-run (binary_cross_entropy's input
outside [0, 1], a Cholesky factorisation that fails) refuses as before, with part of ``out``
already written (the NPU, which refuses neither, writes all of it). A registration
(``register_reference``) makes every plan stale.
"""
from __future__ import annotations

import importlib
import keyword
import warnings
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..tensors import DeviceArray, bfloat16
from . import _torch

_Deliver = Callable[[Any, str, Any, Any], None]
# np.may_share_memory without its __array_function__ dispatch (a Python frame): a plan passes
# it only NumPy arrays, for which the two are the same function
_may_share_memory: Callable[[Any, Any], bool] = getattr(np.may_share_memory, "_implementation", np.may_share_memory)


class Seen:
    """A signature the general path ran once (planned at its next run), or one that cannot be
    planned (``final``): ``run`` leaves every call to the general path."""

    __slots__ = ("generation", "final")

    generation: int
    final: bool

    def __init__(self, generation: int, final: bool):
        self.generation = generation
        self.final = final

    def run(self, tensors: Sequence[Any]) -> Any:
        return NotImplemented


class _Open:
    """In an aten argument template: the tensor of this call's slot ``k``."""

    __slots__ = ("k",)

    k: int

    def __init__(self, k: int):
        self.k = k


def _none(host: Any) -> Any:
    return None


def _bf16_view(host: Any) -> Any:
    return _torch._torch.from_numpy(host.view(np.uint16)).view(_torch._torch.bfloat16)


class RowPlan:
    """One signature of a table row, planned (see the module docstring). Immutable. ``run``:
    the call's result, as runner.run returns it, or NotImplemented, with nothing written, for
    the general path to run instead."""

    __slots__ = ("generation", "spec", "op", "out_op", "args", "kwargs", "positions", "keywords", "convert",
                 "inputs", "outs", "deliver", "returned", "deliver_fn", "run")

    generation: int
    spec: Any
    op: Any                                       # the functional call, and the out= one (or None): see _fastest
    out_op: Any
    args: tuple[Any, ...]                         # aten's positional arguments, None where a tensor goes
    kwargs: dict[str, Any]                        # its keyword arguments but the tensors
    positions: tuple[tuple[int, int], ...]        # (position, slot) of each tensor argument
    keywords: tuple[tuple[str, int], ...]         # (keyword, slot)
    inputs: tuple[int, ...]                       # the slots aten reads
    convert: tuple[Callable[[Any], Any], ...]     # per tensor slot: host array -> torch view (None: NULL, unused)
    outs: tuple[tuple[str, int], ...]             # out= mode: (aten out argument, slot) per result; () otherwise
    deliver: tuple[tuple[str, int, int], ...]     # (C name, slot, aten result) per written parameter with one
    returned: tuple[int, ...]                     # the slots of the written parameters, header order
    deliver_fn: _Deliver
    run: Callable[[Sequence[Any]], Any]

    def __init__(self, generation: int, spec: Any, op: Any, out_op: Any, args: list[Any], kwargs: dict[str, Any],
                 convert: tuple[Callable[[Any], Any], ...], outs: tuple[tuple[str, int], ...],
                 deliver: tuple[tuple[str, int, int], ...], returned: tuple[int, ...], deliver_fn: _Deliver):
        self.generation = generation
        self.spec = spec
        self.op = op
        self.out_op = out_op
        self.positions = tuple((n, v.k) for n, v in enumerate(args) if isinstance(v, _Open))
        self.keywords = tuple((name, v.k) for name, v in kwargs.items() if isinstance(v, _Open))
        self.args = tuple(None if isinstance(v, _Open) else v for v in args)
        self.kwargs = {name: v for name, v in kwargs.items() if not isinstance(v, _Open)}
        self.inputs = tuple(sorted({k for _, k in self.positions + self.keywords}))
        self.convert = convert
        self.outs = outs
        self.deliver = deliver
        self.returned = returned
        self.deliver_fn = deliver_fn
        self.run = self._compiled() or self._run

    def _compiled(self) -> Optional[Callable[[Sequence[Any]], Any]]:
        """``_run`` of an out= plan unrolled for its slots and arguments (as checked_calls'
        keys are): a call's Python work is then a few type checks and the views."""
        names = [name for name, _ in self.keywords] + list(self.kwargs) + [name for name, _ in self.outs]
        if not self.outs or not all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
            return None
        n = len(self.convert)
        scope: dict[str, Any] = {"ND": np.ndarray, "DA": DeviceArray, "NI": NotImplemented, "OP": self.out_op,
                                 "SHARE": _may_share_memory, "SLOW": self._run}
        lines = ["def run(tensors):"]
        if n:
            lines.append(f"    {''.join(f't{k}, ' for k in range(n))}= tensors")
        viewed = set(self.inputs) | {k for _, k in self.outs}
        for k in range(n):
            if k not in viewed:
                continue
            if self.convert[k] is _none:  # a NULL optional tensor (NULL in every call of the signature)
                lines += [f"    if t{k} is not None:", "        return NI", f"    v{k} = None"]
                continue
            lines += [f"    tt = type(t{k})",
                      "    if tt is ND:", f"        h{k} = t{k}",
                      f"    elif tt is DA and t{k}._storage is None:", f"        h{k} = t{k}._host",
                      "    else:", "        return NI"]
        lines.append("    try:")
        for k in sorted(viewed):
            if self.convert[k] is _none:
                continue
            scope[f"C{k}"] = self.convert[k]
            lines.append(f"        v{k} = C{k}(h{k})")
        lines += ["    except (ValueError, TypeError):", "        return NI"]
        shared = [f"SHARE(h{o}, h{i})" for _, o in self.outs for i in self.inputs if self.convert[i] is not _none]
        if shared:
            lines += [f"    if {' or '.join(shared)}:", "        return SLOW(tensors)"]
        call: list[str] = []
        positions = dict(self.positions)
        for m, v in enumerate(self.args):
            if m in positions:
                call.append(f"v{positions[m]}")
            else:
                scope[f"A{m}"] = v
                call.append(f"A{m}")
        for name, k in self.keywords:
            call.append(f"{name}=v{k}")
        for name, v in self.kwargs.items():
            scope[f"K_{name}"] = v
            call.append(f"{name}=K_{name}")
        for name, k in self.outs:
            call.append(f"{name}=v{k}")
        lines += ["    try:", f"        OP({', '.join(call)})", "    except Exception:", "        return NI"]
        for _, k in self.outs:
            lines += [f"    if v{k}.shape != h{k}.shape:", "        return NI"]
        got = [f"t{k}" for k in self.returned]
        lines.append(f"    return {got[0] if len(got) == 1 else '(' + ', '.join(got) + ',)'}")
        exec("\n".join(lines) + "\n", scope)
        run: Callable[[Sequence[Any]], Any] = scope["run"]
        return run

    def _run(self, tensors: Sequence[Any]) -> Any:
        try:
            hosts = [_host(t) for t in tensors]
        except LookupError:  # a private format: decoded by the general path
            return NotImplemented
        try:
            views = [c(h) for c, h in zip(self.convert, hosts)]
        except (ValueError, TypeError):  # a negative stride (from_numpy refuses it): the general path copies
            return NotImplemented
        args = list(self.args)
        for n, k in self.positions:
            args[n] = views[k]
        kwargs = dict(self.kwargs)
        for name, k in self.keywords:
            kwargs[name] = views[k]
        outs = self.outs
        if outs:
            for _, ko in outs:
                ho = hosts[ko]
                for ki in self.inputs:
                    hi = hosts[ki]
                    if hi is not None and _may_share_memory(ho, hi):
                        outs = ()  # an input written: computed first, then delivered
                        break
        if outs:
            for name, ko in outs:
                kwargs[name] = views[ko]
            try:
                self.out_op(*args, **kwargs)
            except Exception:  # the general path runs it again and answers (a refusal) as it does
                return NotImplemented
            for _, ko in outs:
                if views[ko].shape != hosts[ko].shape:  # resized by aten: the general path decides
                    return NotImplemented
        else:
            try:
                got = self.op(*args, **kwargs)
            except Exception:
                return NotImplemented
            results = list(got) if isinstance(got, tuple) else [got]
            for _, k, i in self.deliver:
                if hosts[k] is not None and results[i].shape != hosts[k].shape:
                    return NotImplemented
            for name, k, i in self.deliver:
                if hosts[k] is not None:
                    self.deliver_fn(self.spec, name, hosts[k], results[i])
        if len(self.returned) == 1:
            return tensors[self.returned[0]]
        return tuple(tensors[k] for k in self.returned)


def remember(b: Any, generation: int, ran: list[Any], tensors: Sequence[Any], vals: Sequence[Any],
             results: Sequence[Any], deliver_fn: _Deliver, aten_call: Callable[..., Any]) -> None:
    """After a successful general run of a table row: note the signature, or plan it at its
    second run (``b.cpu_plan``). ``ran``: what runner._run_rows reports; ``results``: per
    written parameter, what it delivered."""
    current = b.cpu_plan
    if current is None or current.generation != generation:
        b.cpu_plan = Seen(generation, final=False)
        return
    if type(current) is not Seen or current.final:
        return
    plan: Any = None
    try:
        plan = _plan(b, generation, ran, tensors, vals, results, deliver_fn, aten_call)
    except Exception:  # anything unforeseen in planning leaves the signature to the general path
        plan = None
    b.cpu_plan = plan if plan is not None else Seen(generation, final=True)


def _host(t: Any) -> Any:
    """The NumPy array a planned call reads and writes for ``t``; LookupError for a tensor
    the general path must handle (a private format)."""
    if type(t) is np.ndarray or t is None:
        return t
    if type(t) is DeviceArray and t._storage is None:
        return t._host
    raise LookupError  # not plannable


def _plan(b: Any, generation: int, ran: list[Any], tensors: Sequence[Any], vals: Sequence[Any],
          results: Sequence[Any], deliver_fn: _Deliver, aten_call: Callable[..., Any]) -> Optional[RowPlan]:
    from ..cann import data_dependent
    from . import private_formats
    spec = b.spec
    row, first, op, widened = ran
    if not first or widened or any(b.lists) or data_dependent.outputs(spec.aclnn) \
            or not private_formats.plain_on_cpu(spec.aclnn):
        return None
    try:
        hosts = [_host(t) for t in tensors]
    except LookupError:
        return None
    torch = _torch._torch
    schema = {a.name: str(a.real_type) for a in op._schema.arguments}
    slot = {i: k for k, i in enumerate(b.tensor_params)}  # header parameter index -> tensor slot
    marks: dict[int, Any] = {}
    written: list[tuple[str, int, Optional[int]]] = []
    for i, (bnd, p) in enumerate(zip(row.params, spec.params)):
        if i not in slot:
            continue
        if getattr(p, "written", False):
            if bnd.bind not in ("result", "ignored"):
                return None  # read and written (in place): the general path
            written.append((p.c_name, slot[i], bnd.result))
        elif bnd.bind == "arg":
            if schema.get(bnd.arg) not in ("Tensor", "Optional[Tensor]"):
                return None
            marks[i] = _Open(slot[i])
    _, args, kwargs = aten_call(row, vals, marks)
    opened = {v.k for v in list(args) + list(kwargs.values()) if isinstance(v, _Open)}
    convert: list[Callable[[Any], Any]] = []
    for k, h in enumerate(hosts):
        if h is None:
            convert.append(_none)
        elif h.dtype == bfloat16:
            convert.append(_bf16_view)
        else:
            convert.append(torch.from_numpy)
    deliver = tuple((name, k, r) for name, k, r in written if r is not None)
    for (name, k, r), got in zip(written, results):
        if r is None:
            continue
        if not _torch.is_tensor(got) or (hosts[k] is not None and tuple(got.shape) != hosts[k].shape):
            return None  # a result of another shape (refusals.fit): the general path
    # aten's meta function, on meta tensors of the call's shapes and dtypes: what the planned
    # calls can be checked against without computing anything
    metas = {k: torch.empty(hosts[k].shape, dtype=_torch.torch_dtype(hosts[k].dtype), device="meta")
             for k in range(len(hosts)) if hosts[k] is not None}

    def on_meta(v: Any) -> Any:
        if isinstance(v, _Open):
            return metas.get(v.k)
        return torch.empty_like(v, device="meta") if _torch.is_tensor(v) else v

    meta_args = [on_meta(v) for v in args]
    meta_kwargs = {name: on_meta(v) for name, v in kwargs.items()}
    outs = _out_mode(op, meta_args, meta_kwargs, hosts, written, results, opened)
    out_call = None
    if outs is not None:
        out_call = _fastest(outs[0], meta_args, {**meta_kwargs, **{name: metas[k] for name, k in outs[1]}})
    else:  # slots only delivered need no view
        convert = [c if k in opened else _none for k, c in enumerate(convert)]
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning,
                            module=__name__)  # inputs are only read (as in _torch)
    return RowPlan(generation, spec, _fastest(op, meta_args, meta_kwargs), out_call, list(args), dict(kwargs),
                   tuple(convert), outs[1] if outs is not None else (), deliver, tuple(k for _, k, _ in written),
                   deliver_fn)


def _out_mode(op: Any, meta_args: Sequence[Any], meta_kwargs: dict[str, Any], hosts: Sequence[Any],
              written: Sequence[tuple[str, int, Optional[int]]], results: Sequence[Any],
              opened: set[int]) -> Optional[tuple[Any, tuple[tuple[str, int], ...]]]:
    """(the out= overload, (its out argument, slot) per aten result) when the results can be
    written into the caller's arrays directly, else None (see the module docstring)."""
    n = len(op._schema.returns)
    by_result = {r: (k, got) for (_, k, r), got in zip(written, results) if r is not None}
    if sorted(by_result) != list(range(n)) or len(by_result) != len([w for w in written if w[2] is not None]):
        return None
    for k, got in by_result.values():
        h = hosts[k]
        if h is None or got.dtype != _torch.torch_dtype(h.dtype):
            return None
    for k in opened:
        h = hosts[k]
        if h is not None and not (h.dtype.kind in "fc" or h.dtype == bfloat16):
            return None
    out_op = _out_overload(op)
    if out_op is None:
        return None
    try:  # the result's shape and dtype must follow from the inputs' own (no data-dependent shape)
        meta = op(*meta_args, **meta_kwargs)
    except Exception:  # no meta function: the shape may depend on the data
        return None
    metas = list(meta) if isinstance(meta, tuple) else [meta]
    for r, (k, got) in by_result.items():
        m = metas[r]
        if not _torch.is_tensor(m) or tuple(m.shape) != hosts[k].shape or m.dtype != got.dtype:
            return None
    names = [a.name for a in out_op._schema.arguments if a.is_out]
    return out_op, tuple((names[r], by_result[r][0]) for r in range(n))


# torch's Python bindings, by namespace: torch.add is torch._C._VariableFunctions.add
_BINDINGS = ("_VariableFunctions", "_nn", "_linalg", "_special", "_fft")


def _fastest(op: Any, meta_args: Sequence[Any], meta_kwargs: dict[str, Any]) -> Any:
    """What calls the aten overload ``op`` fastest with these arguments: torch's own Python
    binding of its name (torch.add parses its arguments in a third of the time
    torch.ops.aten.add.out takes) when a call of it on the meta arguments is seen to dispatch
    the very aten calls ``op`` dispatches (``op`` itself first, or, for a composite op such
    as matmul, the same decomposition, argument for argument), else the overload's C
    function."""
    torch = _torch._torch
    direct = getattr(op, "_op", op)  # OpOverload.__call__ is one more Python frame
    try:  # (private, but stable since torch 1.13; without it the C function serves)
        mode: Any = importlib.import_module("torch.utils._python_dispatch").TorchDispatchMode
    except (ImportError, AttributeError):
        return direct
    reached: list[Any] = []

    def seen(v: Any) -> Any:
        if _torch.is_tensor(v):
            return ("tensor", tuple(v.shape), v.dtype, tuple(v.stride()))
        if isinstance(v, (list, tuple)):
            return tuple(seen(x) for x in v)
        return (type(v), repr(v))

    def dispatch(self: Any, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        reached.append((func, seen(args), tuple(sorted((k, seen(v)) for k, v in (kwargs or {}).items()))))
        return func(*args, **(kwargs or {}))

    recording: Any = type("Reached", (mode,), {"__torch_dispatch__": dispatch})
    try:
        with recording():
            op(*meta_args, **meta_kwargs)
    except Exception:  # no meta function: the C function serves
        return direct
    want = list(reached)
    if not want:
        return direct
    name = op._schema.name.split("::")[-1]
    for space in _BINDINGS:
        fn = getattr(getattr(torch._C, space, None), name, None)
        if fn is None:
            continue
        reached.clear()
        try:
            with recording():
                fn(*meta_args, **meta_kwargs)
        except Exception:  # another signature, or no meta function: not this one
            continue
        if reached == want:
            return fn
    return direct


def _out_overload(op: Any) -> Any:
    """The overload of ``op``'s packet that takes the same arguments plus one out= tensor per
    result (add.Tensor -> add.out, sum.dim_IntList -> sum.IntList_out), or None."""
    schema = op._schema
    want = [(a.name, str(a.real_type)) for a in schema.arguments]
    packet = op.overloadpacket
    for name in packet.overloads():
        candidate = getattr(packet, name)
        s = candidate._schema
        outs = [a for a in s.arguments if a.is_out]
        if len(outs) != len(schema.returns) or not outs:
            continue
        if [(a.name, str(a.real_type)) for a in s.arguments if not a.is_out] == want:
            return candidate
    return None
