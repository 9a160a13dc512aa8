"""Writes ascend_aclnn/operators.py from the operator descriptions.

    python -m ascend_aclnn.ops.codegen           # rewrite the file
    python -m ascend_aclnn.ops.codegen --check   # exit 1 if it is stale (a test runs this)

Generated rather than built at import time so that IDEs and type checkers see real
signatures and docstrings; the descriptions in ascend_aclnn/ops stay the one source.
"""
from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path

from . import REGISTRY
from .spec import OpSpec

TARGET = Path(__file__).resolve().parent.parent / "operators.py"

HEADER = '''"""The operator functions.

GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
do not edit by hand.
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

from .api import call
from .ops import SPECS
from .tensors import ArrayLike
'''


def _docstring(spec: OpSpec) -> str:
    lines = []
    for line in spec.docstring().splitlines():
        indent = line[:len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, 92, initial_indent="    ", subsequent_indent="    " + indent) or [""]
    return '    """' + "\n".join(lines).lstrip() + '\n    """'


def render_function(spec: OpSpec) -> str:
    params = [f"    {p.name}: {p.type_hint}" + ("" if p.default is inspect.Parameter.empty else f" = {p.default!r}")
              for p in spec.params]
    const = "_" + spec.name.upper()
    return "\n".join([
        f'{const} = SPECS["{spec.name}"]', "", "",
        f"def {spec.name}(", *(p + "," for p in params), "    *,",
        f"    out: {spec.signature.parameters['out'].annotation} = None,",
        f") -> {spec.signature.return_annotation}:",
        _docstring(spec),
        f"    return call({const}, {', '.join(p.name for p in spec.params)}, out=out)", ""])


def render() -> str:
    names = ", ".join(f'"{s.name}"' for s in REGISTRY)
    return HEADER + "".join("\n\n" + render_function(s) for s in REGISTRY) + f"\n\n__all__ = [{names}]\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if TARGET.read_text() != text:
            print(f"{TARGET} is stale: run python -m ascend_aclnn.ops.codegen", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
