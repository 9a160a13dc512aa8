"""ascend_aclnn/ops/rules.py: phase-1 checks stated once, run by the binding and written
out as the simulator's C (the replay test in test_ops.py holds the two to one answer)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ascend_aclnn as aa
from ascend_aclnn.ops import REGISTRY
from ascend_aclnn.ops.rules import Rules, c_function, dim, item, ndim, require


def test_a_rule_on_an_allocated_output_names_what_it_was_inferred_from():
    """out is allocated from input_size, so its N, C disagreeing with grad_output is
    input_size's fault; a given out is named itself."""
    g = np.zeros((2, 3, 13), np.float32)
    with aa.use_backend("numpy"), pytest.raises(aa.AclnnError) as info:
        aa.upsample_nearest_exact1d_backward(g, [13], [1, 3, 6])
    assert info.value.argument == "input_size"
    with aa.use_backend("numpy"), pytest.raises(aa.AclnnError) as info:
        aa.upsample_nearest_exact1d_backward(g, [13], [1, 3, 6], out=np.zeros((1, 3, 6), np.float32))
    assert info.value.argument == "out"


def test_sums_past_int64_compare_as_python_ints():
    """Pads whose sum overflows int64 are refused by the arithmetic, not wrapped into a
    match (the C side computes in __int128)."""
    spec = REGISTRY["replication_pad2d"]
    text = c_function(spec)
    assert "(__int128)" in text
    with aa.use_backend("numpy"), pytest.raises(aa.AclnnError) as info:
        aa.replication_pad2d(np.zeros((1, 1, 3, 4), np.float32), [2**62, 2**62, 0, 0],
                             out=np.zeros((1, 1, 3, 4), np.float32))
    assert info.value.argument == "out"


def test_and_short_circuits_in_python_as_in_c():
    """The right operand may index what the left one checks (C's && does not evaluate it)."""
    short = ndim("x").eq(4) & dim("x", 3).eq(0)
    assert short.py({"x": np.zeros((2,))}) is False
    assert "&&" in short.c
    assert (item("p", 0) > 0).py({"p": (1,)}) is True


def test_a_message_field_naming_nothing_is_refused():
    spec = dataclasses.replace(REGISTRY["replication_pad2d"],
                               check=Rules(require(ndim("input") > 0, "input", "x", "y", "{nosuch.shape} is wrong")))
    with pytest.raises(ValueError, match="nosuch"):
        c_function(spec)


def test_finite_differences_take_a_backward_with_one_output():
    """A finite-difference pair whose backward returns one array (the trial's
    GeluBackward) is checked on that array, not on its rows taken as the gradients of
    several inputs."""
    from ascend_aclnn import testing
    pair = testing.GradPair("square", "square_backward", "finite-difference",
                            lambda a, y, g: ((g, a["x"]), {}), inputs=("x",))
    x = np.random.default_rng(0).standard_normal((3, 4))
    good = testing._finite_difference(pair, lambda x: x * x, lambda g, x: 2 * g * x, {"x": x},
                                      np.random.default_rng(1), testing.FD_TOL)
    assert [name for name, _, _ in good.checks] == ["dx"] and good.passed, good
    bad = testing._finite_difference(pair, lambda x: x * x, lambda g, x: 3 * g * x, {"x": x},
                                     np.random.default_rng(1), testing.FD_TOL)
    assert not bad.passed


def test_every_description_states_its_checks_as_rules_and_its_c_source_uses_them():
    """One statement of each check: no description keeps a hand-written check function,
    and the simulator source of each includes its generated checks and calls them."""
    from ascend_aclnn.ops import codegen
    sources = codegen._native_ops()
    assert sources is not None
    hand = [s.name for s in REGISTRY if not isinstance(s.check, Rules)]
    assert not hand, f"described with a check function, not rules.Rules: {hand}"
    for source, entry in sources.items():
        described = [s for s in REGISTRY if s.aclnn in entry.operators]
        if not described:
            continue
        text = (codegen.ROOT / "native" / "src" / "ops" / source).read_text()
        header = f"generated/{source[:-2]}_checks.h"
        assert f'#include "{header}"' in text, f"{source} does not include {header}"
        for spec in described:
            assert f"{spec.aclnn}_checks(" in text, f"{source} does not call {spec.aclnn}_checks"
