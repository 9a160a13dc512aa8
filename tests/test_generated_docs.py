"""The generated text (ascend_aclnn/ops/codegen.py): functions.py and the documents' parts
between markers (README.md, docs/npu-differences.md, native/README.md) follow the
descriptions and native/build.py's SOURCES, and a stale copy of any of them fails."""
from __future__ import annotations

import pytest

from ascend_aclnn.ops import REGISTRY, codegen


def test_every_generated_file_is_current():
    assert codegen.main(["--check"]) == 0, "run: python -m ascend_aclnn.ops.codegen"
    assert set(codegen.outputs()) == {codegen.TARGET, codegen.README, codegen.NPU_DIFFERENCES, codegen.NATIVE_README}


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
