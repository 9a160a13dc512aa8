"""Test data for each operator, in the manner of PyTorch's OpInfo: sample inputs, cases
computed by hand from the operator's documented math, error inputs with the status and
message the operator's first phase gives, linear forward/backward pairs, and chains of
operators on device-resident data. One module per operator family; the generic tests in
test_ops.py iterate over every operator in ascend_aclnn.ops.REGISTRY and require an
entry here.
"""
from __future__ import annotations

from . import group_norm, im2col, max_pool, pad, upsample
from ascend_aclnn.ops import REGISTRY

from .common import Chain, ErrorCase, HandCase, OpInfo, Sample, random, tolerance  # noqa: F401

FAMILIES = (upsample, pad, max_pool, im2col, group_norm)

def _from_description(spec) -> OpInfo:
    """An operator with no entry of its own is still tested everywhere op_db reaches: its
    description's example, for each of its first parameter's dtypes (hand cases and error
    inputs, which need a person, are what an entry adds)."""
    def samples(dtype, rng):
        args, kwargs = spec.example(rng, dtype)
        return [Sample(args, kwargs)]
    return OpInfo(spec.name, tuple(spec.params[0].dtypes), samples, [], [])


OP_DB: dict[str, OpInfo] = {name: info for f in FAMILIES for name, info in f.OP_DB.items()}
OP_DB.update({spec.name: _from_description(spec) for spec in REGISTRY if spec.name not in OP_DB})
# Linear pairs, <forward(x), g> == <x, backward(g)>: backward name -> (forward name,
# make(rng) -> (x, forward args after x, g, backward args after g)).
ADJOINT_PAIRS = {name: pair for f in FAMILIES for name, pair in f.ADJOINT_PAIRS.items()}
CHAINS: list[Chain] = [c for f in FAMILIES for c in f.CHAINS]
