"""The package's imports form layers: every module has a layer, no module imports one of
a higher layer, and there is no import cycle. Every import counts, the ones inside
functions too (a lazy import is still a dependency, and a cycle through one is still a
cycle: tools/bench.py <-> tools/cli.py was one)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ascend_aclnn"

# Lowest first. A module's layer is that of the longest prefix naming it; a module may
# import its own layer's modules and those below.
LAYERS: list[tuple[str, ...]] = [
    ("ascend_aclnn._version", "ascend_aclnn.errors", "ascend_aclnn.cann", "ascend_aclnn.formats"),  # statuses, CANN's C side, its layouts
    ("ascend_aclnn.backends.npu.runtime",),   # devices, streams, memory: what DeviceArray lives on
    ("ascend_aclnn.tensors",),
    ("ascend_aclnn.reference",),              # the golden model: NumPy only
    ("ascend_aclnn.ops",),                    # the descriptions
    ("ascend_aclnn.backends", "ascend_aclnn.cpu_reference"),  # running them: npu, numpy; any operator on CPU
    ("ascend_aclnn.api", "ascend_aclnn.plans", "ascend_aclnn.determinism", "ascend_aclnn.masks"),
    ("ascend_aclnn.functions", "ascend_aclnn.aclnn", "ascend_aclnn.device_formats"),  # the functions users call
    ("ascend_aclnn", "ascend_aclnn.testing", "ascend_aclnn.torch"),
    ("ascend_aclnn.tools",),
    # selftest: an item's vocabulary, the items (each its probe and judge), the runner and
    # report; the command line above them all
    ("ascend_aclnn.tools.selftest.item", "ascend_aclnn.tools.selftest.probing"),
    ("ascend_aclnn.tools.selftest.items",),
    ("ascend_aclnn.tools.selftest",),
    ("ascend_aclnn.tools.cli",),
    ("ascend_aclnn.__main__",),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules this one imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for t in targets:
            while t not in MODULES and "." in t:
                t = t.rpartition(".")[0]
            if t in MODULES and t != name:
                found.add(t)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def layer(name: str) -> int:
    best = max(((len(p), i) for i, prefixes in enumerate(LAYERS) for p in prefixes
                if name == p or name.startswith(p + ".")), default=None)
    assert best is not None, f"{name} has no layer: add it to LAYERS in tests/test_layers.py"
    return best[1]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_higher_layer(name):
    above = sorted(d for d in GRAPH[name] if layer(d) > layer(name))
    assert not above, f"{name} (layer {layer(name)}) imports {above} from higher layers"


def test_there_is_no_import_cycle():
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for d in sorted(GRAPH[name]):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(d):] + [name, d]))
            if d not in state:
                visit(d, path + [name])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [])


def test_the_checks_see_lazy_imports_and_cycles():
    """The parser finds an import inside a function (cli imports bench that way)."""
    assert "ascend_aclnn.tools.bench" in GRAPH["ascend_aclnn.tools.cli"]
    assert "ascend_aclnn.tools.cli" not in GRAPH["ascend_aclnn.tools.bench"]


# ---- operator knowledge lives on the descriptions ---------------------------------------------
# Every module of the library (the layers below the tools) is generic, except by layout:
# a family's namesakes (its modules in ops/, reference/, backends/numpy/, ...), what codegen
# writes from the descriptions, a module the descriptions name as theirs (torch.py holds each
# one's torch_function), and the tables of per-operator facts (TABLES). What an operator needs
# from generic code is a field of its description (e.g. on_launch), or, for an undescribed
# operator, a row of cann/raw_operators.py, read generically.
TABLES = {
    "ascend_aclnn.cann.raw_operators": "the facts about undescribed operators that generic code reads",
    "ascend_aclnn.cann.data_dependent": "the outputs whose shape only the run knows, by operator",
    "ascend_aclnn.cpu_reference.formulas": "hand formulas, one per operator",
    "ascend_aclnn.cpu_reference.data_dependent": "hand formulas of the data-dependent operators",
    "ascend_aclnn.cpu_reference.private_formats": "which operator takes which private format",
    "ascend_aclnn.cpu_reference.refusals": "what CANN refuses, by operator",
    "ascend_aclnn.cpu_reference.size_helpers": "what each of CANN's size helpers answers on the CPU",
    "ascend_aclnn.cpu_reference.npu_format_cast": "the CPU model of one operator, aclnnNpuFormatCast",
    "ascend_aclnn.device_formats": "format_cast's routes: CANN's own format operators, each with the "
                                   "conditions under which it casts exactly",
}


def _library_modules() -> list[str]:
    """The modules below the tools' layer (LAYERS above): the library a user imports."""
    tools = min(i for i, prefixes in enumerate(LAYERS) if "ascend_aclnn.tools" in prefixes)
    return sorted(n for n in MODULES if layer(n) < tools)


def _generic_modules() -> list[str]:
    from ascend_aclnn.ops import FAMILIES, REGISTRY
    from ascend_aclnn.ops.codegen import TARGET
    families = {f.__name__.rsplit(".", 1)[1] for f in FAMILIES}
    generated = {TARGET.resolve()}
    theirs = {"ascend_aclnn.torch"} if any(s.torch_function for s in REGISTRY) else set()
    return [n for n in _library_modules()
            if n.rpartition(".")[2] not in families and MODULES[n].resolve() not in generated
            and n not in theirs and not any(n == t or n.startswith(t + ".") for t in TABLES)]


def _code_words(path: Path) -> set[str]:
    """Identifiers and the words of string constants in the code, docstrings left out (a
    docstring's example names an operator without the code depending on it)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.update(w.strip("`'\"().,:;") for w in node.value.split())
    return words


ROOT = PACKAGE.parent


def _raw_operator_names() -> set[str]:
    """Every operator CANN's headers declare that the repository knows of: the CPU reference
    table's (with or without a row) and the simulator's operator headers' (size helpers too)."""
    import json
    import re
    table = json.loads((PACKAGE / "cpu_reference" / "table.json").read_text())
    names = {r["aclnn"] for r in table["rows"]} | set(table["unreferenced"]) | set(table["no_reference"])
    for header in (ROOT / "native" / "include").glob("*/*.h"):
        if header.parent.name != "aclnn":  # aclnn_base.h: the runtime's own functions
            names |= {m.removesuffix("GetWorkspaceSize")
                      for m in re.findall(r"\b(aclnn[A-Z][A-Za-z0-9_]*)\s*\(", header.read_text())}
    return names


def _operator_names() -> set[str]:
    from ascend_aclnn.ops import REGISTRY
    described = {n for s in REGISTRY for n in (s.name, s.aclnn, s.aclnn[len("aclnn"):], s.name.upper())}
    return described | _raw_operator_names()


@pytest.mark.parametrize("name", _generic_modules())
def test_no_generic_module_names_an_operator(name):
    named = sorted(_code_words(MODULES[name]) & _operator_names())
    assert not named, (f"{name} names operator(s) {', '.join(named)} in its code: put what the operator needs "
                       "on its description (ops/<family>.py), or for an undescribed one in a row of "
                       "cann/raw_operators.py, and read it generically")


def test_the_operator_name_check_can_see_a_name(tmp_path):
    """The check above finds an operator named in code, as launch.py once did for
    GroupNormSwishGrad's formula warning."""
    from ascend_aclnn.ops import REGISTRY
    spec = REGISTRY[0]
    source = f'HOOKED = "{spec.aclnn}"\ndef f(b):\n    """{spec.name} in a docstring is fine."""\n    return b.{spec.name}\n'
    path = tmp_path / "probe.py"
    path.write_text(source)
    found = _code_words(path) & _operator_names()
    assert found == {spec.aclnn, spec.name}
    # an undescribed operator too, from the CPU reference's table and from a simulator header
    raw = sorted(_raw_operator_names() - {s.aclnn for s in REGISTRY})
    path.write_text(f'ROUTE = "{raw[0]}: by name"\nif api == "aclnnCalculateMatmulWeightSizeV2":\n    pass\n')
    assert _code_words(path) & _operator_names() == {raw[0], "aclnnCalculateMatmulWeightSizeV2"}


def test_every_library_module_is_checked_or_exempt_by_a_stated_rule():
    """The generic set is the library less the stated exemptions: a module added anywhere
    (npu/, cpu_reference/, the top level) is checked without an edit here."""
    generic = set(_generic_modules())
    for name in _library_modules():
        if name not in generic:
            last = name.rpartition(".")[2]
            from ascend_aclnn.ops import FAMILIES
            assert (last in {f.__name__.rpartition(".")[2] for f in FAMILIES} or name == "ascend_aclnn.functions"
                    or name == "ascend_aclnn.torch" or any(name == t or name.startswith(t + ".") for t in TABLES)), name
    # what the first version of this check listed by hand, and what it missed
    assert {"ascend_aclnn.api", "ascend_aclnn.testing", "ascend_aclnn.determinism", "ascend_aclnn.aclnn",
            "ascend_aclnn.backends.npu.handles", "ascend_aclnn.cpu_reference.runner"} <= generic
