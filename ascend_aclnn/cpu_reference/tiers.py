"""The tiers of CPU references, and the checks each one gets (``reference(name)``, ``info``).

A tier says how far a CPU result can be trusted, and what ``compare`` does with it:

- strict, relaxed, hand: a row of the table derived from op-plugin; the aten op runs on
  PyTorch. strict: every argument passes through unchanged; relaxed: some are bound by
  name; hand: a reviewed entry of devtools/hand_rows.py.
- formula: a NumPy formula written from CANN's documentation (formulas/).
- sampled: a random operator; its formula draws from the documented distribution with a
  seeded NumPy generator, so its values cannot match an NPU's bit for bit.
- described: an operator this package describes (its own NumPy reference and checks).
- registered: a reference given with register_reference.
"""
from __future__ import annotations

__all__ = ["TIERS", "TIER_TEXT", "CHECKS", "checks_for"]

TIERS = ("strict", "relaxed", "hand", "formula", "sampled", "described", "registered")

TIER_TEXT = {
    "strict": "op-plugin's call passes every argument through to the aten op",
    "relaxed": "op-plugin's call, some arguments bound by their header names",
    "hand": "a reviewed hand row (devtools/hand_rows.py) binding the header to an aten op",
    "formula": "a NumPy formula written from CANN's documentation of the operator",
    "sampled": "a random operator: the documented distribution, drawn with a seeded NumPy generator; values cannot "
               "match an NPU's bit for bit",
    "described": "this package's own description of the operator and its NumPy reference",
    "registered": "your own reference, given with register_reference",
}

CHECKS = {
    "strict": "the header's parameter kinds and outputs; each output's shape, cast once into the caller's dtype; "
              "tests run the row against the aten op on OpInfo samples; compare checks values under the precision "
              "standard",
    "relaxed": "as strict",
    "hand": "as strict, plus the generator's review of the entry (header names, aten schema, evidence line)",
    "formula": "the header's parameter kinds and outputs; each output's shape; tests check hand-worked values and an "
               "independent oracle (PyTorch autograd where one exists); compare checks values under the precision "
               "standard",
    "sampled": "the header's parameter kinds and outputs; each output's shape; compare checks the operator's "
               "statistics (mask density, moments, value ranges, exact invariants), never values",
    "described": "the description's own argument checks (dtypes, shapes, attributes) on both backends; compare checks "
                 "values under the precision standard",
    "registered": "the header's parameter kinds and outputs; each output's shape; compare checks values under the "
                  "precision standard",
}


def checks_for(tier: str) -> str:
    return CHECKS.get(tier, "")
