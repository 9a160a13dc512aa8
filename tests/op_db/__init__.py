"""Test data for each operator, in the manner of PyTorch's OpInfo: sample inputs, cases
computed by hand from the operator's documented math, error inputs with the status and
message the operator's first phase gives, linear forward/backward pairs, and chains of
operators on device-resident data. One module per operator family; the generic tests in
test_ops.py iterate over every operator in ascend_aclnn.ops.REGISTRY and require an
entry here.
"""
from __future__ import annotations

import importlib
import pkgutil

import numpy as np

from ascend_aclnn.ops import REGISTRY

from .common import Chain, ErrorCase, HandCase, Samples, Sample, random, tolerance  # noqa: F401

# One module per family (ascend_aclnn/ops/__init__.py defines the word), found by a scan;
# each may define OP_DB, ADJOINT_PAIRS and CHAINS, and none is required.
FAMILIES = tuple(importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
                 if m.name != "common")


def _from_description(spec) -> Samples:
    """An operator with no entry of its own is still tested everywhere op_db reaches: its
    description's example, for each of its first parameter's dtypes (hand cases and error
    inputs, which need a person, are what an entry adds)."""
    def samples(dtype, rng):
        args, kwargs = spec.example(rng, dtype)
        return [Sample(args, kwargs)]
    return Samples(spec.name, tuple(spec.params[0].dtypes), samples, [], [])


def _adjoint_from_description(spec):
    """make(rng) for a forward whose description says its backward is its adjoint: the
    forward's float32 example, the backward's arguments built as gradcheck builds them
    (the forward's own outputs, e.g. max-pool's mask, from the reference)."""
    def make(rng):
        args, kwargs = spec.example(rng, np.dtype(np.float32))
        bound = spec.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        fwd = {p.name: bound.arguments[p.name] for p in spec.params}
        y = spec.reference(*fwd.values())
        first = y[spec.backward.output] if isinstance(y, tuple) else y
        g = rng.standard_normal(first.shape).astype(first.dtype)
        b_args, b_kwargs = spec.backward.args(fwd, y, g)
        assert not b_kwargs and b_args[0] is g, spec.name
        values = list(fwd.values())
        return values[0], tuple(values[1:]), g, tuple(b_args[1:])
    return make


OP_DB: dict[str, Samples] = {name: info for f in FAMILIES for name, info in getattr(f, "OP_DB", {}).items()}
OP_DB.update({spec.name: _from_description(spec) for spec in REGISTRY if spec.name not in OP_DB})
# Linear pairs, <forward(x), g> == <x, backward(g)>, one per description whose backward's
# method is "adjoint": backward name -> (forward name, make(rng) -> (x, forward args after
# x, g, backward args after g)); a family's ADJOINT_PAIRS gives its own make.
_GIVEN = {name: pair for f in FAMILIES for name, pair in getattr(f, "ADJOINT_PAIRS", {}).items()}
ADJOINT_PAIRS = {spec.backward.name: _GIVEN.get(spec.backward.name) or (spec.name, _adjoint_from_description(spec))
                 for spec in REGISTRY if spec.backward is not None and spec.backward.method == "adjoint"}
CHAINS: list[Chain] = [c for f in FAMILIES for c in getattr(f, "CHAINS", [])]
