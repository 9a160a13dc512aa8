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
# A family's own modules (its namesakes in ops/, reference/ and backends/numpy/) may name its
# operators; so may the generated and per-operator layers above the runtime (functions.py,
# torch.py, masks.py, testing.py, the tools) and the CPU reference's table. The layers that run
# any operator must not: what an operator needs there is a field of its description (e.g.
# on_launch), called generically.
GENERIC_PACKAGES = ("ascend_aclnn.cann", "ascend_aclnn.backends", "ascend_aclnn.ops", "ascend_aclnn.reference")
GENERIC_MODULES = ("ascend_aclnn.api", "ascend_aclnn.aclnn", "ascend_aclnn.plans", "ascend_aclnn.streams",
                   "ascend_aclnn.tensors", "ascend_aclnn.errors")


def _generic_modules() -> list[str]:
    from ascend_aclnn.ops import FAMILIES
    families = {f.__name__.rsplit(".", 1)[1] for f in FAMILIES}
    return sorted(n for n in MODULES
                  if n in GENERIC_MODULES
                  or (n.startswith(GENERIC_PACKAGES) and n.rsplit(".", 1)[1] not in families))


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


def _operator_names() -> set[str]:
    from ascend_aclnn.ops import REGISTRY
    return {n for s in REGISTRY for n in (s.name, s.aclnn, s.aclnn[len("aclnn"):], s.name.upper())}


@pytest.mark.parametrize("name", _generic_modules())
def test_no_generic_module_names_an_operator(name):
    named = sorted(_code_words(MODULES[name]) & _operator_names())
    assert not named, (f"{name} names operator(s) {', '.join(named)} in its code: put what the operator needs "
                       "on its description (ops/<family>.py) and call it generically")


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
