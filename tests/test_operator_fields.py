"""Generic code reads what an operator needs from its description's fields, not its name:
determinism's warning from ``generated_api``; gradcheck's extra point and its note from
``Backward.also_at`` and ``Backward.kernel_note``."""
from __future__ import annotations

import types
import warnings

import numpy as np

from ascend_aclnn import determinism, testing
from ascend_aclnn.ops import REGISTRY


def test_the_late_switch_warning_names_the_operators_with_generated_apis(monkeypatch):
    from ascend_aclnn.backends.npu import launch
    monkeypatch.setattr(launch, "used_operators", lambda: {"aclnnSomething"})
    monkeypatch.setattr(determinism, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        determinism._warn_if_too_late(types.SimpleNamespace(release="8.1.RC1"))
    text = str(caught[0].message)
    generated = {s.name for s in REGISTRY if s.generated_api}
    assert generated and all(n in text for n in generated), text
    assert not any(s.name in text for s in REGISTRY if not s.generated_api and s.name not in "".join(generated)), text


def test_gradcheck_reads_the_extra_point_and_the_note_from_the_description(monkeypatch):
    """A pair whose description asks for a second point and explains failures: the report has
    the second point's checks, and the note when every failing point is explained (a
    failure the description does not explain gets none), for any operator."""
    def float_attribute(p: testing.GradPair) -> tuple[dict, str] | None:
        """The pair's example call, bound, and its first float attribute (the second point moves it)."""
        args, kwargs = REGISTRY[p.forward].example(np.random.default_rng(0), np.dtype(np.float32))
        bound = testing._bind(p.forward, testing._function(p.forward), args, kwargs)
        name = next((k for k, v in bound.items() if isinstance(v, float)), None)
        return (bound, name) if name is not None else None

    pair, (bound, name) = next((p, found) for p in testing.GRAD_PAIRS.values()
                               if p.method == "finite-difference" and (found := float_attribute(p)) is not None)
    right = testing._function(pair.backward)

    def wrong(*a, **k):
        out = right(*a, **k)
        return tuple(o * np.float32(1.5) for o in out) if isinstance(out, tuple) else out * np.float32(1.5)

    for explains_base in (True, False):
        seen: list[float] = []

        def note(a, release):
            seen.append(a[name])
            return f"differs at {a[name]:g}" if explains_base or a[name] == 3.5 else None
        monkeypatch.setitem(testing.GRAD_PAIRS, pair.forward,
                            testing.GradPair(pair.forward, pair.backward, pair.method, pair.backward_args,
                                             pair.inputs, pair.output, pair.refuse, {name: 3.5}, note))
        r = testing.gradcheck(pair.forward, backward=wrong)
        assert any(what.endswith(f"at {name}=3.5") for what, _, _ in r.checks), r
        assert not r.passed and seen == [bound[name], 3.5], (seen, r)
        want = f"differs at {bound[name]:g}; differs at 3.5" if explains_base else ""
        assert r.note == want, r
