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

from typing import Any, Optional, Sequence, Union, overload

from numpy.typing import NDArray

from .api import call
from .ops import SPECS
from .tensors import ArrayLike, DeviceArray, SupportsDLPack, TensorLike
'''


def _docstring(spec: OpSpec) -> str:
    lines = []
    for line in spec.docstring().splitlines():
        indent = line[:len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, 92, initial_indent="    ", subsequent_indent="    " + indent) or [""]
    return '    """' + "\n".join(lines).lstrip() + '\n    """'


# The results come back in the kind of the tensors given: one overload per kind lets a type
# checker see np.ndarray for NumPy arrays (Python lists beside them or alone are NumPy too)
# and DeviceArray for DeviceArrays, as (parameter, out=, result) types. Torch tensors and
# other DLPack producers give torch tensors or NumPy arrays (tensors.results_like), which no
# annotation can say without importing torch: Any. NumPy arrays and DeviceArrays are DLPack
# producers too, so mixed kinds (DeviceArray results at run time) are Any as well.
KINDS = (("Union[NDArray[Any], Sequence[Any]]", "NDArray[Any]", "NDArray[Any]"),
         ("DeviceArray", "DeviceArray", "DeviceArray"),
         ("SupportsDLPack", "SupportsDLPack", "Any"))


def _signature_lines(spec: OpSpec, kind: str, out: str, result: str) -> list[str]:
    """The signature with TensorLike parameters as `kind`, TensorLike outs as `out` and
    ArrayLike results as `result`."""
    params = [f"    {p.name}: {p.type_hint.replace('TensorLike', kind)}"
              + ("" if p.default is inspect.Parameter.empty else f" = {p.default!r}") for p in spec.params]
    return [f"def {spec.name}(", *(p + "," for p in params), "    *,",
            f"    out: {spec.signature.parameters['out'].annotation.replace('TensorLike', out)} = None,",
            f") -> {spec.signature.return_annotation.replace('ArrayLike', result)}:"]


def render_function(spec: OpSpec) -> str:
    const = "_" + spec.name.upper()
    overloads: list[str] = []
    for kind, out, result in KINDS:
        lines = _signature_lines(spec, kind, out, result)
        overloads += ["@overload", *lines[:-1], lines[-1] + " ...", "", ""]
    return "\n".join([
        f'{const} = SPECS["{spec.name}"]', "", "", *overloads,
        *_signature_lines(spec, "TensorLike", "TensorLike", "ArrayLike"),
        _docstring(spec),
        # a local's annotation is never evaluated: typed for the checker, free at run time
        f"    result: {spec.signature.return_annotation} = call({const}, {', '.join(p.name for p in spec.params)}, out=out)",
        "    return result", ""])


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
