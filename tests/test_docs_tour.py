"""The README is a tour (issue 38, item 5): short enough to read in ten minutes, its code
runs, its test command is the one CI runs, and every relative link of the documents
(README, CONTRIBUTING, docs/, native/README) reaches an existing file and heading. The
reference material lives in docs/; docs/environment.md lists every variable the package
and the test harness read."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
MAX_README_LINES = 400
DOCUMENTS = [README, ROOT / "CONTRIBUTING.md", ROOT / "native" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def test_the_readme_is_short():
    lines = len(README.read_text().splitlines())
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines, more than {MAX_README_LINES}: reference material goes in docs/")
    assert _blocks(README.read_text(), "python"), "the README shows no Python: the tour needs its examples"


@pytest.mark.parametrize("index", range(len(_blocks(README.read_text(), "python"))))
def test_every_python_block_of_the_readme_runs(index, backend, capsys):
    code = _blocks(README.read_text(), "python")[index]
    namespace: dict[str, object] = {"__name__": f"README block {index}"}
    exec(compile(code, f"README.md, python block {index}", "exec"), namespace)
    namespace.clear()  # the block's arrays, streams and graphs go now, before the leak check


def test_ci_runs_the_readmes_test_command():
    """.ci/run's main environment runs the README's test command, byte for byte."""
    commands = _blocks(_section(README.read_text(), "The two commands"), "sh")
    tests = [c.strip() for c in commands if "pytest" in c and "pip install" in c]
    assert len(tests) == 1, commands
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert tests[0] in ci_lines, f"{tests[0]!r} is not a line of .ci/run"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for match in re.finditer(r"^#{1,6} (.+)$", FENCE.sub("", path.read_text()), re.M):
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    return [m.group(1) for m in re.finditer(r"\]\(([^)\s]+)\)", FENCE.sub("", path.read_text()))
            if not re.match(r"[a-z]+:", m.group(1))]


def test_the_link_checker_knows_githubs_anchors():
    assert _slug("Any aclnn operator: `aa.aclnn`") == "any-aclnn-operator-aaaclnn"
    assert _slug("Adding an operator: the simulator's side") == "adding-an-operator-the-simulators-side"
    assert _slug("Streams, events and graphs") == "streams-events-and-graphs"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    broken = []
    for link in _links(path):
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{link}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{link}: no heading with anchor #{anchor} in {file.name}")
    assert broken == [], broken


def _variables_read(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        names |= set(re.findall(r"[\"'](ASCEND_[A-Z0-9_]*[A-Z0-9])[\"']", path.read_text()))
    return names


def test_every_environment_variable_is_documented():
    """Every ASCEND_* name the package or the test harness (conftest) quotes is in
    docs/environment.md; the simulator's own ASCEND_SIM_* are listed in native/README.md,
    which the document points at."""
    doc = (ROOT / "docs" / "environment.md").read_text()
    sources = [p for p in (ROOT / "ascend_aclnn").rglob("*.py") if "_native" not in p.parts]
    read = _variables_read(sources + [ROOT / "tests" / "conftest.py"])
    assert {"ASCEND_ACLNN_BACKEND", "ASCEND_HOME_PATH"} <= read  # the scan finds names at all
    native = (ROOT / "native" / "README.md").read_text()
    missing = sorted(v for v in read if f"`{v}`" not in doc and not (v.startswith("ASCEND_SIM_") and v in native))
    assert missing == [], f"docs/environment.md does not list {missing}"


def test_the_swish_grad_messages_point_at_a_document_that_has_the_entry():
    """The warning and gradcheck's note name where to read about the formula: a file of the
    source tree holding group_norm_swish_grad's entry (the help() the message also names
    holds it in any install)."""
    from ascend_aclnn.ops.group_norm import README_SECTION
    named = re.findall(r"\b([\w/-]+\.md)\b", README_SECTION)
    assert named, f"{README_SECTION!r} names no document"
    for doc in named:
        assert (ROOT / doc).is_file(), f"{README_SECTION!r} names {doc}, which does not exist"
        assert "- **group_norm_swish_grad** (aclnnGroupNormSwishGrad)." in (ROOT / doc).read_text(), doc


def test_the_readme_points_at_every_document():
    """A page of docs/ nothing links from the README is a page no newcomer finds."""
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(README)}
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert unlinked == [], f"README.md links no {unlinked}"
