"""Raw calls of every operator the simulator implements, generated over dtypes, shapes and
attributes, run on both backends: which one accepts and which one refuses (issue 37, item 5).

``calls()`` yields (operator, label, make) where make() returns fresh arguments (outputs
included) for one run; ``run_both()`` runs each on the numpy backend and on the npu backend
(the simulator) and returns one Outcome per call. Run as a script against a built simulator
(``ASCEND_HOME_PATH``) to print the counts:

    PYTHONPATH=$PWD:$PWD/tests ASCEND_HOME_PATH=/tmp/sim python tests/side_by_side.py [-v]
"""
from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
I8, I16, I32, I64, U8, BOOL = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_))
C64 = np.dtype(np.complex64)
REAL = (F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL)
SIM_ONLY = "not computed by the simulator", "is not one the simulator", "nnopbase would pack"  # capability gaps

Make = Callable[[], tuple[Any, ...]]


def arr(shape: tuple[int, ...], dtype: np.dtype, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.integers(-3, 4, size=shape)
    if dtype == BOOL:
        return (v > 0).astype(BOOL)
    if dtype.kind == "u":
        v = np.abs(v)
    return v.astype(dtype)


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.zeros(shape, dtype)


def masked_scale(self: Any, weights: Any, mask: Any, mode: Any, scale: Any, exponent: Any) -> Any:
    """The vendor operator's documented computation (its header), for register_reference; it
    refuses what the header says in words no rule reads (weights and mask hold self's last
    size), as a user's reference does."""
    from ascend_aclnn.errors import AclnnError
    c = self.shape[-1] if self.ndim else 0
    for name, v in (("weights", weights), ("mask", mask)):
        if self.ndim == 0 or len(v) != c:
            raise AclnnError(161002, "aclnnCustomMaskedScaleGetWorkspaceSize", f"{name} must hold {c} values",
                             argument=name)
    v = self.astype(np.float32)
    w, m = np.asarray(weights, np.float32), np.asarray(mask, bool)
    t = np.where(m, v * w if mode == "mul" else v + w, v)
    with np.errstate(all="ignore"):
        return np.ldexp(t * np.float32(scale), exponent).astype(np.float32)


def _promote(a: np.dtype, b: np.dtype) -> Optional[np.dtype]:
    import torch
    from ascend_aclnn.cpu_reference import _torch
    try:
        t = torch.promote_types(_torch.torch_dtype(a), _torch.torch_dtype(b))
    except Exception:
        return None
    return np.dtype(ml_dtypes.bfloat16) if t == torch.bfloat16 else np.dtype(str(t).replace("torch.", ""))


def calls() -> Iterator[tuple[str, str, Make]]:
    import ascend_aclnn as aa
    # ---- Add: every pair of real dtypes, out at the promoted dtype and at a few others
    for a, b in itertools.product(REAL, REAL):
        p = _promote(a, b)
        for o in dict.fromkeys([p, F32, I32, BOOL]):
            if o is None:
                continue
            yield "Add", f"{a}+{b}->{o}", (lambda a=a, b=b, o=o: (arr((2, 3), a), arr((3,), b, 1), 1, empty((2, 3), o)))
    for d in (F32, I32, BOOL, F16):
        for alpha in (1, 2.5, True, np.float16(2), aa.Scalar(2, np.float32), 1j):
            yield "Add", f"alpha {alpha!r} on {d}", (lambda d=d, alpha=alpha: (arr((4,), d), arr((4,), d), alpha,
                                                                                 empty((4,), d)))
    for shapes, out in ((((2, 3), (2,)), (2, 3)), (((2, 3), (3,)), (3, 3)), (((2, 1), (1, 3)), (2, 3)),
                        (((1,) * 9, (1,)), (1,) * 9), (((2, 3), (3,)), (1, 2, 3)), (((), (3,)), (3,)),
                        (((0, 3), (3,)), (0, 3)), (((2, 3), (3,)), ())):
        yield "Add", f"shapes {shapes}->{out}", (lambda s=shapes, o=out: (arr(s[0], F32), arr(s[1], F32), 1,
                                                                          empty(o, F32)))
    for a, b in itertools.product((C64, F32, I32, np.dtype(np.uint16), np.dtype(np.uint32)), repeat=2):
        for o in dict.fromkeys([_promote(a, b), C64, F32]):
            if o is not None:
                yield "Add", f"{a}+{b}->{o}", (lambda a=a, b=b, o=o: (arr((3,), a), arr((3,), b, 1), 1, empty((3,), o)))
    for shapes, out in ((((), ()), ()), (((), ()), (1,)), (((1,), ()), ()), (((1,), (1,)), (1,))):
        yield "Add", f"0-D {shapes}->{out}", (lambda s=shapes, o=out: (arr(s[0], F32), arr(s[1], F32), 1,
                                                                       empty(o, F32)))
    yield "Add", "strided", lambda: (arr((4, 6), F32)[::2, ::3], arr((2,), F32), 1, empty((2, 2), F32))
    # ---- Cat
    for a, b in itertools.product(REAL, REAL):
        p = _promote(a, b)
        for o in dict.fromkeys([p, F32, I8, BOOL]):
            if o is None:
                continue
            yield "Cat", f"[{a},{b}]->{o}", (lambda a=a, b=b, o=o: ([arr((2, 3), a), arr((1, 3), b)], 0,
                                                                   empty((3, 3), o)))
    for shapes, dim, out in ((((2, 3), (2, 3)), 2, (4, 3)), (((2, 3), (2, 3)), -3, (4, 3)), (((2, 3), (3,)), 0, (5, 3)),
                             (((2, 3), (2, 4)), 0, (4, 3)), (((2, 3), (2, 4)), 1, (2, 7)), (((2, 3), (2, 3)), 0, (4, 4)),
                             (((1,) * 9, (1,) * 9), 0, (2,) + (1,) * 8), (((0,), (2, 3)), 0, (2, 3)),
                             (((2, 3), (2, 3)), 0, (24,)), (((2, 3), (2, 3)), -1, (2, 6))):
        yield "Cat", f"shapes {shapes} dim {dim}->{out}", (lambda s=shapes, d=dim, o=out: (
            [arr(x, F32) for x in s], d, empty(o, F32)))
    for a, b in ((C64, F32), (C64, C64), (F32, np.dtype(np.uint16))):
        for o in (C64, F32):
            yield "Cat", f"[{a},{b}]->{o}", (lambda a=a, b=b, o=o: ([arr((2,), a), arr((1,), b)], 0, empty((3,), o)))
    yield "Cat", "three, one empty 1-D", lambda: ([arr((2, 3), F32), arr((0,), F32), arr((1, 3), F32)], 0,
                                                  empty((3, 3), F32))
    yield "Cat", "0-D", lambda: ([arr((), F32), arr((), F32)], 0, empty((2,), F32))
    yield "Cat", "an empty uint16 dropped", lambda: ([arr((0,), np.dtype(np.uint16)), arr((2,), F32)], 0,
                                                     empty((2,), F32))
    yield "Cat", "only empty tensors, any out", lambda: ([arr((0,), F32)], 0, empty((3,), I32))
    # ---- ReduceSum
    for a in REAL:
        for dt in dict.fromkeys([a, F32, I64, F64, BOOL]):
            for o in dict.fromkeys([dt, F32]):
                yield "ReduceSum", f"{a} as {dt}->{o}", (lambda a=a, dt=dt, o=o: (arr((2, 3), a), [1], False, dt,
                                                                                 empty((2,), o)))
    for shape, dims, keep, out in (((2, 3), [2], False, (2,)), ((2, 3), [-3], False, (3,)), ((2, 3), [0, 0], False, (3,)),
                                   ((2, 3), [0, -2], False, (3,)), ((2, 3), [], False, ()), ((2, 3), [], True, (1, 1)),
                                   ((2, 3), [1], True, (2,)), ((2, 3), [1], True, (2, 1)), ((), [0], False, ()),
                                   ((), [], False, (1,)), ((2, 3), [0, 1], False, (1,)), ((1,) * 9, [0], False, (1,) * 8),
                                   ((0, 3), [0], False, (3,)), ((0, 3), [0], False, (5,))):
        yield "ReduceSum", f"{shape} dims {dims} keep {keep}->{out}", (lambda s=shape, d=dims, k=keep, o=out: (
            arr(s, F32), d, k, F32, empty(o, F32)))
    for a, dt in ((C64, C64), (F32, C64), (np.dtype(np.uint16), F32), (F32, np.dtype(np.uint16))):
        yield "ReduceSum", f"{a} as {dt}", (lambda a=a, dt=dt: (arr((2, 3), a), [0], False, dt, empty((3,), dt)))
    yield "ReduceSum", "-2 and 1 twice", lambda: (arr((2, 3), F32), [-1, 1], False, F32, empty((2,), F32))
    yield "ReduceSum", "strided", lambda: (arr((4, 6), F32)[::2, ::2], [1], True, F32, empty((2, 1), F32))
    # ---- SplitTensor
    for a in REAL:
        for o in dict.fromkeys([a, F32, I32, BOOL]):
            yield "SplitTensor", f"{a}->{o}", (lambda a=a, o=o: (arr((5, 2), a), 2, 0,
                                                                 [empty((2, 2), o), empty((2, 2), o), empty((1, 2), o)]))
    yield "SplitTensor", "out dtypes differ", lambda: (arr((4,), F32), 2, 0, [empty((2,), F32), empty((2,), F64)])
    for shape, sec, dim, outs in (((4, 2), 2, 2, [(2, 2), (2, 2)]), ((4, 2), 2, -3, [(2, 2), (2, 2)]),
                                  ((4, 2), 0, 0, [(4, 2)]), ((0, 2), 0, 0, [(0, 2)]), ((0, 2), 1, 0, [(0, 2)]),
                                  ((4, 2), 2, 0, [(2, 2)]), ((4, 2), 2, 0, [(2, 2), (2, 3)]), ((), 1, 0, [()]),
                                  ((4, 2), 9, 0, [(4, 2)]), ((4, 2), 3, 0, [(3, 2), (1, 2), (5,)]),
                                  ((4, 2), 2, 1, [(4, 2)]), ((4, 2), 2, 0, [])):
        yield "SplitTensor", f"{shape} by {sec} on {dim}->{outs}", (lambda s=shape, c=sec, d=dim, o=outs: (
            arr(s, F32), c, d, [empty(x, F32) for x in o]))
    # ---- ForeachMulScalarList
    for a in REAL + (F64,):
        for scalar in (2, 0.5, np.float32(0.5), np.int32(2)):
            for o in dict.fromkeys([a, F32]):
                yield "ForeachMulScalarList", f"{a}*{scalar!r}->{o}", (lambda a=a, s=scalar, o=o: (
                    [arr((2, 3), a), arr((4,), a)], [s, s], [empty((2, 3), o), empty((4,), o)]))
    for label, make in (
            ("mixed x dtypes", lambda: ([arr((2,), F32), arr((2,), F16)], [1.0, 1.0], [empty((2,), F32), empty((2,), F16)])),
            ("fewer scalars", lambda: ([arr((2,), F32), arr((2,), F32)], [1.0], [empty((2,), F32), empty((2,), F32)])),
            ("fewer outs", lambda: ([arr((2,), F32), arr((2,), F32)], [1.0, 1.0], [empty((2,), F32)])),
            ("small out", lambda: ([arr((2, 3), F32)], [1.0], [empty((5,), F32)])),
            ("larger out", lambda: ([arr((2, 3), F32)], [1.0], [empty((7,), F32)])),
            ("empty lists", lambda: ([], [], [])),
            ("9-D", lambda: ([arr((1,) * 9, F32)], [1.0], [empty((1,) * 9, F32)]))):
        yield "ForeachMulScalarList", label, make
    # ---- Nonzero (a data-dependent output: out at the largest size)
    for a in REAL + (np.dtype(np.uint16), C64):
        for o in (I64, I32):
            yield "Nonzero", f"{a}->{o}", (lambda a=a, o=o: (arr((2, 3), a), empty((6, 2), o)))
    for shape, out in (((2, 3), (5, 2)), ((2, 3), (7, 2)), ((2, 3), (6, 3)), ((2, 3), (12,)), ((0, 3), (0, 2)),
                       ((4,), (4, 1)), ((1,) * 9, (1, 9)), ((2, 2, 2), (8, 3))):
        yield "Nonzero", f"{shape}->{out}", (lambda s=shape, o=out: (arr(s, F32), empty(o, I64)))
    # ---- the vendor operator (a reference registered by the test: its header's rules apply)
    for a in REAL:
        for o in dict.fromkeys([a, F32, F16]):
            yield "CustomMaskedScale", f"{a}->{o}", (lambda a=a, o=o: (arr((2, 3), a), [1.0] * 3, [True] * 3, "mul",
                                                                      1.0, 0, empty((2, 3), o)))
    for label, make in (
            ("weights short", lambda: (arr((2, 3), F32), [1.0] * 2, [True] * 3, "mul", 1.0, 0, empty((2, 3), F32))),
            ("mask long", lambda: (arr((2, 3), F32), [1.0] * 3, [True] * 4, "mul", 1.0, 0, empty((2, 3), F32))),
            ("mode add", lambda: (arr((2, 3), F32), [1.0] * 3, [True] * 3, "add", 1.0, 0, empty((2, 3), F32))),
            ("mode bad", lambda: (arr((2, 3), F32), [1.0] * 3, [True] * 3, "div", 1.0, 0, empty((2, 3), F32))),
            ("0-D", lambda: (arr((), F32), [], [], "mul", 1.0, 0, empty((), F32))),
            ("9-D", lambda: (arr((1,) * 9, F32), [1.0], [True], "mul", 1.0, 0, empty((1,) * 9, F32))),
            ("out shape", lambda: (arr((2, 3), F32), [1.0] * 3, [True] * 3, "mul", 1.0, 0, empty((3, 2), F32))),
            ("exponent", lambda: (arr((2, 3), F32), [1.0] * 3, [True] * 3, "mul", 1.0, -128, empty((2, 3), F32)))):
        yield "CustomMaskedScale", label, make


def described_calls() -> Iterator[tuple[str, str, Make]]:
    """The operators this package describes (the simulator implements them too), called raw:
    each one's first sample with every tensor in each real dtype, and with only its outputs
    in another dtype."""
    from ascend_aclnn.ops import REGISTRY
    from op_db import OP_DB
    rng = np.random.default_rng(0)
    for name in sorted(OP_DB):
        spec, info = REGISTRY[name], OP_DB[name]
        sample = next(iter(info.samples(info.dtypes[0], rng)))
        bound = spec._bind_arguments(sample.args, sample.kwargs)
        shapes = spec.infer(spec.bind(sample.args, sample.kwargs))
        base = [bound[p.name] for p in spec.params]

        def make(dt: Optional[np.dtype], out_dt: Optional[np.dtype], base: list[Any] = base,
                 shapes: Any = shapes) -> tuple[Any, ...]:
            ins = [a.astype(dt) if dt is not None and isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                   for a in base]
            outs = [np.zeros(s, out_dt if out_dt is not None else (dt if dt is not None and np.dtype(d).kind == "f" else d))
                    for s, d in shapes]
            return tuple(ins) + tuple(outs)
        op = spec.aclnn[len("aclnn"):]
        for dt in REAL:
            yield op, f"{name} in {dt}", (lambda dt=dt, make=make: make(dt, None))
        for out_dt in (F16, F64, I32):
            yield op, f"{name} outputs {out_dt}", (lambda o=out_dt, make=make: make(None, o))


@dataclass(frozen=True)
class Outcome:
    op: str
    label: str
    numpy: str     # "ok" or "ErrorClass status: message"
    npu: str

    @staticmethod
    def accepted(text: str) -> bool:
        return text == "ok"

    @property
    def mismatch(self) -> bool:
        return self.accepted(self.numpy) != self.accepted(self.npu)

    @property
    def simulator_gap(self) -> bool:
        """The simulator refuses what it does not compute (CANN computes it): not a check."""
        return any(s in self.npu for s in SIM_ONLY)


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
    from ascend_aclnn.errors import AclnnError
    try:
        fn(*args)
    except AclnnError as exc:
        return f"{type(exc).__name__} {exc.status}: {exc.recent or exc.detail}"
    except Exception as exc:  # noqa: BLE001 - every refusal is an outcome here
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return "ok"


def run_both(selected: Optional[set[str]] = None) -> list[Outcome]:
    import ascend_aclnn as aa
    aa.aclnn.register_reference("aclnnCustomMaskedScale", masked_scale)
    try:
        found = []
        for op, label, make in itertools.chain(calls(), described_calls()):
            if selected is not None and op not in selected:
                continue
            fn = getattr(aa.aclnn, op)
            with aa.use_backend("numpy"):
                on_numpy = _outcome(fn, make())
            with aa.use_backend("npu"):
                on_npu = _outcome(fn, make())
            found.append(Outcome(op, label, on_numpy, on_npu))
        return found
    finally:
        aa.aclnn.register_reference("aclnnCustomMaskedScale", None)


def summary(found: list[Outcome]) -> str:
    lines = []
    for op in dict.fromkeys(o.op for o in found):
        mine = [o for o in found if o.op == op]
        bad = [o for o in mine if o.mismatch and not o.simulator_gap]
        lines.append(f"{op}: {len(mine)} calls, {len(bad)} accepted by one backend and refused by the other "
                     f"({sum(o.mismatch and o.simulator_gap for o in mine)} more where the simulator does not compute "
                     "what CANN does)")
    bad = [o for o in found if o.mismatch and not o.simulator_gap]
    lines.append(f"total: {len(found)} calls, {len(bad)} mismatches "
                 f"(numpy accepts, npu refuses: {sum(Outcome.accepted(o.numpy) for o in bad)}; "
                 f"numpy refuses, npu accepts: {sum(Outcome.accepted(o.npu) for o in bad)})")
    return "\n".join(lines)


if __name__ == "__main__":
    found = run_both(set(a for a in sys.argv[1:] if not a.startswith("-")) or None)
    if "-v" in sys.argv:
        for o in found:
            if o.mismatch:
                print(f"{o.op} {o.label}\n    numpy: {o.numpy}\n    npu:   {o.npu}")
    print(summary(found))
