"""A described operator's call as a C caller would make it: for comparing the binding's
refusals with the simulated op_api's, which sees only C values.

``c_form`` returns the arguments the two-phase caller takes (``launch.run``), with none of
the binding's checks, or None when some value has no C form at all (a str where a tensor
goes, a float in an int array, None for a double, an int past int64: Python type errors
the binding refuses and C cannot even express). Outputs are the caller's (NumPy ones) or
allocated from the shapes ``spec.infer`` gives; when inference fails, None as well: a
made-up output would let the simulator refuse the output instead of the argument. An
output NumPy cannot make (too large, or empty with a dimension past NumPy's limit) is
None too: this harness passes only arrays.
"""
from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

import ascend_aclnn
from ascend_aclnn.backends.npu import launch
from ascend_aclnn.ops.spec import Args, IntArray, OpSpec, Scalar, Tensor, TensorArg
from ascend_aclnn.tensors import ACL_DTYPES

_INT64 = (-2**63, 2**63)


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _tensor(v: Any) -> Any:
    if v is None:
        return None  # NULL
    if type(v) is not np.ndarray or v.dtype not in ACL_DTYPES:
        return NotImplemented
    return TensorArg(v, v.shape, v.dtype)


def _int_array(v: Any) -> Any:
    if v is None:
        return None
    if not isinstance(v, (list, tuple)) or not all(_is_int(x) and _INT64[0] <= x < _INT64[1] for x in v):
        return NotImplemented
    return tuple(int(x) for x in v)


def _scalar(p: Scalar, v: Any) -> Any:
    kind = p.c_kind
    if kind in ("double", "float"):
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
            try:
                return float(v)
            except OverflowError:
                return NotImplemented
        return NotImplemented
    if kind == "bool":
        return bool(v) if isinstance(v, (bool, np.bool_)) or (_is_int(v) and v in (0, 1)) else NotImplemented
    if kind == "string":
        if v is None:
            return None
        if not isinstance(v, str) or "\0" in v:
            return NotImplemented
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return NotImplemented
        return v
    if _is_int(v) and _INT64[0] <= v < _INT64[1]:  # int64 (the only integer kind described operators have)
        return int(v)
    return NotImplemented


def c_form(spec: OpSpec, args: tuple, kwargs: dict, out: Any = None) -> Optional[Args]:
    """The call's C arguments (see the module docstring), or None when it has none."""
    bound = spec.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    a = Args()
    for p in spec.params:
        v = bound.arguments[p.name]
        if isinstance(p, Tensor):
            c = _tensor(v)
        elif isinstance(p, IntArray):
            c = _int_array(v)
        elif isinstance(p, Scalar):
            c = _scalar(p, v)
        else:
            raise AssertionError(f"{spec.name}.{p.name}: a parameter kind c_form does not know ({type(p).__name__})")
        if c is NotImplemented:
            return None
        a[p.name] = c
    given = out if out is not None else bound.arguments.get("out")
    given = (given,) if len(spec.outputs) == 1 else (given or (None,) * len(spec.outputs))
    if any(g is None for g in given):
        try:
            inferred = list(spec.infer(a))
        except Exception:  # noqa: BLE001  an argument inference needs is malformed: no C form
            return None
    outs = []
    for i, g in enumerate(given):
        if g is None:
            shape, dtype = inferred[i]
            if shape is None or any(d < 0 for d in shape) or int(np.prod(shape, dtype=object)) > 1 << 24:
                return None
            try:
                g = np.zeros(shape, dtype)
            except ValueError:  # an empty output with a dimension past what NumPy can make
                return None
        if type(g) is not np.ndarray or not g.flags.writeable or g.dtype not in ACL_DTYPES:
            return None
        outs.append(TensorArg(g, g.shape, g.dtype))
    a.outputs = outs
    return a


def simulator_status(spec: OpSpec, args: tuple, kwargs: dict, out: Any = None) -> Any:
    """The status the simulator's phase 1 returns for the call's C arguments alone, with none
    of the binding's checks ("accepted" when it runs the call), or None when the call has no
    C form."""
    a = c_form(spec, tuple(args), kwargs, out)
    if a is None:
        return None
    with ascend_aclnn.use_backend("npu"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            launch.run(spec, a)
        except ascend_aclnn.AclnnError as exc:
            assert exc.api == spec.phase1_name, str(exc)
            return exc.status
    return "accepted"
