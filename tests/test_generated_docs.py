"""The generated text (ascend_aclnn/ops/codegen.py): functions.py and the documents' parts
between markers (README.md, docs/npu-differences.md, native/README.md) follow the
descriptions and native/build.py's SOURCES, and a stale copy of any of them fails."""
from __future__ import annotations

import re

import pytest

from ascend_aclnn.ops import REGISTRY, codegen


def test_every_generated_file_is_current():
    assert codegen.main(["--check"]) == 0, "run: python -m ascend_aclnn.ops.codegen"
    checks = codegen.c_checks()
    assert checks, "no description states its checks as rules.Rules"
    assert set(codegen.outputs()) == {codegen.TARGET, codegen.README, codegen.NPU_DIFFERENCES, codegen.NATIVE_README, *checks}


def test_a_stale_or_orphaned_check_header_is_found_and_rewritten(tmp_path, monkeypatch, capsys):
    """A generated C check header edited by hand, or left behind by an operator no longer
    described with rules, fails --check; a run rewrites or removes it."""
    expected = codegen.c_checks()
    monkeypatch.setattr(codegen, "GENERATED_C", tmp_path)
    monkeypatch.setattr(codegen, "c_checks", lambda: {tmp_path / p.name: t for p, t in expected.items()})
    first = tmp_path / sorted(expected)[0].name
    for path, text in expected.items():
        (tmp_path / path.name).write_text(text)
    first.write_text(first.read_text().replace("return 0;", "return 1;", 1))
    orphan = tmp_path / "gone_checks.h"
    orphan.write_text("/* an operator described no more */\n")
    assert codegen.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"{first} is stale" in err and f"{orphan} is stale" in err
    assert codegen.main([]) == 0
    assert first.read_text() == expected[sorted(expected)[0]] and not orphan.exists()
    assert codegen.main(["--check"]) == 0


def test_each_simulator_source_runs_its_generated_checks():
    """A generated header its source does not include, or whose check function it never
    calls, would leave the simulator checking by hand (or not at all) with --check green."""
    for path, text in codegen.c_checks().items():
        source = (path.parent.parent / path.name.replace("_checks.h", ".c")).read_text()
        assert f'#include "generated/{path.name}"' in source, path.name
        for function in re.findall(r"^static int (\w+_checks)\(", text, re.M):
            assert f"{function}(" in source, (path.name, function)


@pytest.mark.parametrize("path,key", [(p, k) for p, parts in codegen.GENERATED.items() for k in parts])
def test_a_stale_part_is_found_and_rewritten(path, key, tmp_path, monkeypatch, capsys):
    """An edit by hand inside the markers (a row dropped) makes --check fail naming the
    file; a run rewrites it."""
    text = path.read_text()
    begin = text.index(f"<!-- generated: {key}")
    row = text.index("\n", text.index("\n", begin) + 1)  # the generated text's first line ends here
    stale = text[:row] + text[text.index("\n", row + 1):]
    assert stale != text
    copy = tmp_path / path.name
    copy.write_text(stale)
    monkeypatch.setitem(codegen.GENERATED, copy, codegen.GENERATED[path])
    monkeypatch.delitem(codegen.GENERATED, path)
    assert codegen.main(["--check"]) == 1
    assert f"{copy} is stale" in capsys.readouterr().err
    assert codegen.main([]) == 0 and copy.read_text() == text


def test_the_readme_lists_every_operator_and_the_docs_its_notes():
    text, notes = codegen.README.read_text(), codegen.NPU_DIFFERENCES.read_text()
    for spec in REGISTRY:
        assert f"| {spec.aclnn} |" in text, spec.name
        assert f"- **{spec.name}** ({spec.aclnn})." in notes, spec.name
    native = codegen.NATIVE_README.read_text()
    for spec in REGISTRY:
        assert f"| {spec.aclnn} " in native, spec.name


def test_markers_must_come_in_one_pair():
    with pytest.raises(ValueError, match="expected one pair of markers for 'functions'"):
        codegen.fill("no markers here", "functions", "", "README.md")


def test_help_prints_usage_instead_of_running_the_generator(monkeypatch, capsys):
    """Issue 41, item 12: --help (and an unknown option) never writes a file."""
    written = []
    monkeypatch.setattr(codegen, "outputs", lambda: written.append("ran") or {})
    with pytest.raises(SystemExit) as exit_info:
        codegen.main(["--help"])
    assert exit_info.value.code == 0 and "--check" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        codegen.main(["--chek"])
    assert exit_info.value.code == 2
    assert written == []
