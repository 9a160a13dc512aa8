"""The package's import contract: which part may import which.

Bottom up: cann (loading, prototypes, constants, errors) -> backends/npu/runtime -> tensors
-> reference (stands alone) -> ops (descriptions) -> backends -> public API -> tools. Read
from the source (every import statement, including those inside functions), so a lazy
import cannot hide a dependency; and every imported module or name must exist (the
tools, which may import any layer, are checked for that)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ascend_aclnn"

# module prefix (dotted, relative to the package) -> package parts it may import.
ALLOWED: dict[str, set[str]] = {
    "_version": set(),
    "formats": set(),  # the layouts: NumPy only
    "reference": {"reference"},
    "errors": {"cann.constants"},
    "cann": {"cann", "errors"},
    "backends.npu.runtime": {"cann", "errors"},
    "tensors": {"cann", "errors", "backends.npu.runtime", "formats"},
    "ops": {"ops", "cann", "errors", "tensors", "reference"},
    "backends.npu": {"backends.npu", "cann", "errors", "tensors", "ops", "formats"},
    "backends.numpy": {"backends.numpy", "backends.npu.runtime", "cann", "errors", "tensors", "ops", "reference"},
    # the choice of backend also reads the loader (a failed load under ASCEND_HOME_PATH warns)
    "backends": {"backends.npu.runtime", "cann", "errors"},
    # CPU references of raw operators: above the descriptions and the numpy backend, below the public API
    "cpu_reference": {"cpu_reference", "cann", "errors", "tensors", "ops", "reference", "backends.numpy", "formats"},
}
# The public surface and the tools may import any lower part; only the tools (and the
# entry point) may import the tools.
PUBLIC = {"api", "plans", "functions", "masks", "determinism", "testing", "aclnn", "device_formats", "torch", "streams",
          "__init__"}


def _modules() -> list[tuple[str, Path]]:
    return sorted((".".join(p.relative_to(PACKAGE).with_suffix("").parts), p) for p in PACKAGE.rglob("*.py"))


def _imports(path: Path, module: str) -> set[str]:
    """The package modules (dotted, relative to the package) that path imports."""
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target] if node.module else [".".join(base + [a.name]) for a in node.names]
            elif node.module and node.module.startswith("ascend_aclnn"):
                names = [node.module[len("ascend_aclnn."):] if node.module != "ascend_aclnn" else ""]
            else:
                continue
            found.update(n.strip(".") for n in names)
        elif isinstance(node, ast.Import):
            found.update(a.name[len("ascend_aclnn."):] for a in node.names if a.name.startswith("ascend_aclnn."))
    return found


def _rule(module: str) -> set[str] | None:
    for prefix in sorted(ALLOWED, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return ALLOWED[prefix]
    return None


def _inside(name: str, allowed: set[str]) -> bool:
    return any(name == a or name.startswith(a + ".") or (a.startswith(name + ".") and name) for a in allowed)


def _imported_names(path: Path, module: str) -> set[str]:
    """Each package name an import statement of path binds: a module, or a name taken
    from one (``from ..cann import loader`` -> cann.loader)."""
    names = set()
    package = module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] + ([node.module] if node.module else [])
            elif node.module and node.module.startswith("ascend_aclnn"):
                base = node.module.split(".")[1:]
            else:
                continue
            names |= {".".join(base + [a.name]) for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Import):
            names |= {a.name[len("ascend_aclnn."):] for a in node.names if a.name.startswith("ascend_aclnn.")}
    return names


def _missing(name: str) -> bool:
    """Whether an imported package name is neither a module of the package nor a name its
    parent module (or package) binds at top level."""
    if not name:
        return False
    parts = name.split(".")
    target = PACKAGE.joinpath(*parts)
    if target.with_suffix(".py").is_file() or (target / "__init__.py").is_file():
        return False
    parent = PACKAGE.joinpath(*parts[:-1])
    source = parent.with_suffix(".py") if parent.with_suffix(".py").is_file() else parent / "__init__.py"
    if not source.is_file():
        return True
    tree = ast.parse(source.read_text())
    bound = {t.id for n in tree.body if isinstance(n, ast.Assign) for target in n.targets
             for t in ast.walk(target) if isinstance(t, ast.Name)}
    bound |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    bound |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    bound |= {a.asname or a.name for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return parts[-1] not in bound


@pytest.mark.parametrize("module,path", _modules(), ids=[m for m, _ in _modules()])
def test_imports_follow_the_layers(module, path):
    imported = _imports(path, module)
    # Every import names something that exists: a lazy import (inside a function, as the
    # tools' are) fails only when that path runs.
    missing = sorted(n for n in _imported_names(path, module) if _missing(n))
    assert not missing, f"{module} imports what the package does not have: {missing}"
    if module.startswith("tools.") or module in ("tools", "__main__"):
        # the top layer: it may import any part of the package (checked to exist above)
        assert rule_for_tools_is_top(module)
        return
    assert not any(n == "tools" or n.startswith("tools.") for n in imported), \
        f"{module} imports the command-line tools"
    rule = _rule(module)
    if rule is None:
        assert module.split(".")[0] in PUBLIC, f"{module}: no layer rule; add it to ALLOWED or PUBLIC"
        return
    wrong = sorted(n for n in imported if n and not _inside(n, rule))
    assert not wrong, f"{module} may import only {sorted(rule)}, but imports {wrong}"


def rule_for_tools_is_top(module: str) -> bool:
    """No layer rule may cover the tools: they sit above every layer."""
    return _rule(module) is None and not any(module.startswith(p) for p in PUBLIC)


def test_the_reference_imports_nothing_from_the_package():
    for path in (PACKAGE / "reference").rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        outside = {n for n in _imports(path, module) if not n.startswith("reference")}
        assert not outside, f"{module} imports {outside}"


def test_no_module_reaches_into_another_modules_private_names():
    """``module._name`` across modules (a module's own privates are fine; the package's
    classes keep their underscored attributes for the package's own use)."""
    offenders = []
    for module, path in _modules():
        tree = ast.parse(path.read_text())
        aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                   for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.value.id[:1].islower() and node.attr.startswith("_") and not node.attr.startswith("__"):
                offenders.append(f"{module}: {node.value.id}.{node.attr}")
    assert offenders == []


def test_the_fast_tier_names_test_files_that_exist():
    """-m quick selects by file name (conftest.QUICK): a renamed file would leave the tier
    silently."""
    from conftest import QUICK
    tests = Path(__file__).resolve().parent
    assert QUICK and [name for name in QUICK if not (tests / name).is_file()] == []
