"""Writes what is generated from the operator descriptions: ascend_aclnn/functions.py and,
in a source tree, the generated parts of README.md (the function table),
docs/npu-differences.md (the per-operator entries), native/README.md (the simulator's
operator table, from native/build.py's SOURCES) and the simulator's phase-1 checks
(native/src/ops/generated/<source>_checks.h, from each description's rules.Rules).

    python -m ascend_aclnn.ops.codegen           # rewrite them
    python -m ascend_aclnn.ops.codegen --check   # exit 1 naming any that is stale (a test runs this)

functions.py is generated rather than built at import time so that IDEs and type checkers
see real signatures and docstrings; the descriptions in ascend_aclnn/ops stay the one
source. In those documents only the text between a pair of markers
``<!-- generated: KEY ... -->`` / ``<!-- end generated: KEY -->`` is written.
"""
from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import textwrap
from pathlib import Path
import itertools
from typing import Any, Callable, Optional

from . import REGISTRY
from .rules import Rules, c_header
from .spec import OpSpec, Tensor
from ..tensors import dtype_name

TARGET = Path(__file__).resolve().parent.parent / "functions.py"
ROOT = TARGET.parent.parent  # the source tree, when this is one
README = ROOT / "README.md"
NATIVE_README = ROOT / "native" / "README.md"
NPU_DIFFERENCES = ROOT / "docs" / "npu-differences.md"

HEADER = '''"""The operator functions.

GENERATED from the descriptions in ascend_aclnn/ops by `python -m ascend_aclnn.ops.codegen`;
do not edit by hand.
"""
from __future__ import annotations

from typing import Any, Literal, Optional, Sequence, Union, overload

from numpy.typing import NDArray

from .api import call
from .ops import REGISTRY
from .tensors import ArrayLike, DeviceArray, SupportsDLPack, TensorLike

# A NumPy result. An alias without parameters: mypy takes an argument whose type shows an
# Any (NDArray[Any]) as matching the DLPack overload too and gives Any; through this alias
# a result fed to the next call resolves as a fresh array does, as pyright resolves it.
NDArrayResult = NDArray[Any]
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
KINDS = (("Union[NDArray[Any], Sequence[Any]]", "NDArray[Any]", "NDArrayResult"),
         ("DeviceArray", "DeviceArray", "DeviceArray"),
         ("SupportsDLPack", "SupportsDLPack", "Any"))


def _flags(spec: OpSpec) -> list[str]:
    """The bool parameters that can leave an output out (its ``required_by``), in order."""
    return list(dict.fromkeys(o.required_by for o in spec.outputs if o.required_by))


def _result_type(spec: OpSpec, result: str, pinned: dict[str, bool]) -> str:
    """The return annotation with each output as ``result``: None where its flag is pinned
    False, Optional where its flag is a plain bool, else always there."""
    items = []
    for o in spec.outputs:
        if o.required_by is None or pinned.get(o.required_by) is True:
            items.append(result)
        elif pinned.get(o.required_by) is False:
            items.append("None")
        else:
            items.append(f"Optional[{result}]")
    return items[0] if len(items) == 1 else f"tuple[{', '.join(items)}]"


def _signature_lines(spec: OpSpec, kind: str, out: str, result: str,
                     pinned: Optional[dict[str, bool]] = None) -> list[str]:
    """The signature with TensorLike parameters as `kind`, TensorLike outs as `out` and
    ArrayLike results as `result`. ``pinned``: flags typed Literal[True] (keeping their
    default True) or Literal[False] (then keyword-only and required, so that a call leaving
    the flag out never matches it: overloads must not overlap with different results)."""
    pinned = pinned or {}
    params: list[str] = []
    keyword_only: list[str] = []
    for p in spec.params:
        hint = p.type_hint.replace("TensorLike", kind)
        default = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
        if pinned.get(p.name) is True:
            hint = "Literal[True]"
        elif p.name in pinned:
            keyword_only.append(f"    {p.name}: Literal[False]")
            continue
        (keyword_only if keyword_only else params).append(f"    {p.name}: {hint}{default}")
    returns = (_result_type(spec, result, pinned) if spec.outputs
               else spec.signature.return_annotation.replace("ArrayLike", result))
    return [f"def {spec.name}(", *(p + "," for p in params), "    *,", *(p + "," for p in keyword_only),
            f"    out: {spec.signature.parameters['out'].annotation.replace('TensorLike', out)} = None,",
            f") -> {returns}:"]


def _pinnings(spec: OpSpec, kind: str) -> list[Optional[dict[str, bool]]]:
    """The overloads of one kind of tensors: every flag True (the defaults) with every
    output there; then each combination with a flag False, that output None; then plain
    bools. Torch tensors' results are Any, where None says nothing more."""
    flags = _flags(spec)
    if not flags or kind == "SupportsDLPack":
        return [None]
    combos = [dict(zip(flags, values)) for values in itertools.product((True, False), repeat=len(flags))]
    return [*combos, None]


def render_function(spec: OpSpec) -> str:
    const = "_" + spec.name.upper()
    overloads: list[str] = []
    for kind, out, result in KINDS:
        for pinned in _pinnings(spec, kind):
            lines = _signature_lines(spec, kind, out, result, pinned)
            overloads += ["@overload", *lines[:-1], lines[-1] + " ...", "", ""]
    return "\n".join([
        f'{const} = REGISTRY["{spec.name}"]', "", "", *overloads,
        *_signature_lines(spec, "TensorLike", "TensorLike", "ArrayLike"),
        _docstring(spec),
        # a local's annotation is never evaluated: typed for the checker, free at run time
        f"    result: {spec.signature.return_annotation} = call({const}, {', '.join(p.name for p in spec.params)}, out=out)",
        "    return result", ""])


def render() -> str:
    names = ", ".join(f'"{s.name}"' for s in REGISTRY)
    return HEADER + "".join("\n\n" + render_function(s) for s in REGISTRY) + f"\n\n__all__ = [{names}]\n"


# ---- the documents ----------------------------------------------------------------------------

def _signature_text(spec: OpSpec) -> str:
    params = [p.name + ("" if p.default is inspect.Parameter.empty else f"={p.default!r}") for p in spec.params]
    text = f"`{spec.name}({', '.join(params)})`"
    return text + (f" -> `({', '.join(o.name for o in spec.outputs)})`" if len(spec.outputs) > 1 else "")


def _dtypes_text(spec: OpSpec) -> str:
    """The first tensor's dtypes, then any other tensor whose dtypes differ."""
    tensors = [p for p in spec.params + spec.outputs if isinstance(p, Tensor)]
    if not tensors:
        return ""
    first = tensors[0].dtypes
    text = ", ".join(dtype_name(d) for d in first)
    others = [f"{t.name} {', '.join(dtype_name(d) for d in t.dtypes)}" for t in tensors[1:]
              if t.dtypes and set(t.dtypes) != set(first)]
    return text + (f" ({'; '.join(others)})" if others else "")


def readme_functions() -> str:
    rows = ["| function | aclnn | dtypes | backward |", "|---|---|---|---|"]
    for s in REGISTRY:
        back = f"`{s.backward.name}`" if s.backward else ("(is one)" if _is_backward(s) else "none")
        rows.append(f"| {_signature_text(s)} | {s.aclnn} | {_dtypes_text(s)} | {back} |")
    return "\n".join(rows)


def _is_backward(spec: OpSpec) -> bool:
    return any(s.backward is not None and s.backward.name == spec.name for s in REGISTRY)


def readme_npu_differs() -> str:
    entries = []
    for s in REGISTRY:
        text = f"- **{s.name}** ({s.aclnn}). {s.notes or 'Nothing known.'}"
        if s.selftest:
            text += " `selftest` items: " + ", ".join(s.selftest) + "."
        entries.append("\n".join(textwrap.wrap(text, 90, subsequent_indent="  ", break_on_hyphens=False)))
    return "\n".join(entries)


def _native_ops() -> Optional[Any]:
    """native/build.py's SOURCES, when this is a source tree."""
    path = ROOT / "native" / "build.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_aclsim_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SOURCES


def native_operators() -> str:
    ops = _native_ops()
    assert ops is not None, "native/build.py: outputs() writes the READMEs only in a source tree"
    described = {s.aclnn: s.name for s in REGISTRY}
    rows = ["| source (`src/ops/`) | library of the split layout | operator | header (`include/aclnnop/`) "
            "| described as |", "|---|---|---|---|---|"]
    for source, src in ops.items():
        for op, header in src.operators.items():
            kind = " (generated API)" if src.generated else ""
            if op in getattr(src, "since", {}):
                kind += f" (CANN {src.since[op]} on)"
            rows.append(f"| `{source}` | `libopapi_{src.domain}.so` | {op}{kind} | `{header}` | "
                        f"{'`' + described[op] + '`' if op in described else '`aa.aclnn` only'} |")
    return "\n".join(rows)


GENERATED: dict[Path, dict[str, Callable[[], str]]] = {
    README: {"functions": readme_functions},
    NPU_DIFFERENCES: {"npu-differs": readme_npu_differs},
    NATIVE_README: {"operators": native_operators},
}


def fill(text: str, key: str, body: str, where: str) -> str:
    """text with the part between KEY's markers replaced by body."""
    pattern = re.compile(rf"(<!-- generated: {re.escape(key)}\b[^>]*-->\n)(.*?)(<!-- end generated: "
                         rf"{re.escape(key)} -->)", re.S)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"{where}: expected one pair of markers for {key!r}")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text)


GENERATED_C = ROOT / "native" / "src" / "ops" / "generated"


def c_checks() -> dict[Path, str]:
    """native/src/ops/generated/<source>_checks.h for each simulator source (native/build.py's
    SOURCES) defining an operator whose description states its checks as rules.Rules; the
    source includes it, so its phase 1 is the description's checks."""
    sources = _native_ops() or {}
    rules = {s.aclnn: s for s in REGISTRY if isinstance(s.check, Rules)}
    found: dict[Path, str] = {}
    for source, entry in sources.items():
        specs = [rules[op] for op in entry.operators if op in rules]
        if specs:
            found[GENERATED_C / (Path(source).stem + "_checks.h")] = c_header(source, specs)
    return found


def outputs() -> dict[Path, str]:
    """Every generated file's expected text (the READMEs and the simulator's checks only in
    a source tree)."""
    expected = {TARGET: render()}
    expected.update(c_checks())
    for path, parts in GENERATED.items():
        if path.is_file() and (ROOT / "native" / "build.py").is_file():
            text = path.read_text()
            for key, make in parts.items():
                text = fill(text, key, make(), str(path))
            expected[path] = text
    return expected


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(
        prog="python -m ascend_aclnn.ops.codegen",
        description="Rewrite what is generated from the operator descriptions: ascend_aclnn/functions.py and, in a "
                    "source tree, the generated parts of README.md, docs/npu-differences.md and native/README.md "
                    "and the simulator's phase-1 checks (native/src/ops/generated/).")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each generated file that is stale")
    args = parser.parse_args(argv)  # --help or an unknown option exits here, before anything is written
    expected = outputs()
    if args.check:
        stale = [path for path, text in expected.items() if not path.is_file() or path.read_text() != text]
        stale += sorted(set(GENERATED_C.glob("*_checks.h")) - set(expected))  # left from a removed operator
        for path in stale:
            print(f"{path} is stale: run python -m ascend_aclnn.ops.codegen", file=sys.stderr)
        return 1 if stale else 0
    for path in set(GENERATED_C.glob("*_checks.h")) - set(expected):
        path.unlink()
    for path, text in expected.items():
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
