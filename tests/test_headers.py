"""The header reader (ascend_aclnn.cann.headers) on the fixture headers of
tests/fixtures/headers/: every parameter kind and declaration style, the output rules,
unsupported and malformed declarations, the search order, laziness, and the ABI check."""
from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import time
from ctypes import POINTER, c_bool, c_char_p, c_double, c_float, c_int, c_int8, c_int16, c_int32, c_int64
from ctypes import c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from pathlib import Path

import pytest

from ascend_aclnn.cann import headers
from ascend_aclnn.cann.headers import HeaderDir, HeaderIndex, HeaderLookupError, UnsupportedPrototypeError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "headers"
BUILTIN = FIXTURES / "builtin" / "aclnnop"
ARCH = platform.machine()
TAIL = (POINTER(c_uint64), POINTER(c_void_p))


def index_of(*dirs: Path) -> HeaderIndex:
    return HeaderIndex.scan([HeaderDir(Path(d), f"dir{i}") for i, d in enumerate(dirs)])


@pytest.fixture(scope="module")
def builtin() -> HeaderIndex:
    return index_of(BUILTIN)


@pytest.fixture
def clean_env(monkeypatch):
    """No CANN, no custom package, no header path from the environment; the process-wide
    index forgotten before and after."""
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_OPP_PATH",
                headers.ENV_VAR):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("ascend_aclnn.cann.loader.DEFAULT_ROOTS", ())
    headers.reset()
    yield monkeypatch
    headers.reset()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def op_header(directory: Path, op: str, *params: str, file: str | None = None) -> Path:
    """A header declaring aclnn<op> with the given parameters (and the standard tail)."""
    decl = ", ".join(params + ("uint64_t *workspaceSize", "aclOpExecutor **executor"))
    return write(directory / (file or f"aclnn_{op.lower()}.h"),
                 f"ACLNN_API aclnnStatus aclnn{op}GetWorkspaceSize({decl});\n"
                 f"ACLNN_API aclnnStatus aclnn{op}(void *workspace, uint64_t workspaceSize, "
                 f"aclOpExecutor *executor, aclrtStream stream);\n")


# ---------------------------------------------------------------------------------------------
# parameter kinds and their ctypes
# ---------------------------------------------------------------------------------------------

EVERY_KIND = [  # (name, c_type, kind, ctype) of aclnnFixtureEveryKind, in header order
    ("self", "const aclTensor *", "aclTensor", c_void_p),
    ("tensors", "const aclTensorList *", "aclTensorList", c_void_p),
    ("alpha", "const aclScalar *", "aclScalar", c_void_p),
    ("scalars", "const aclScalarList *", "aclScalarList", c_void_p),
    ("sizes", "const aclIntArray *", "aclIntArray", c_void_p),
    ("scales", "const aclFloatArray *", "aclFloatArray", c_void_p),
    ("mask", "const aclBoolArray *", "aclBoolArray", c_void_p),
    ("dtype", "aclDataType", "aclDataType", c_int),
    ("mode", "const char *", "string", c_char_p),
    ("layoutOptional", "char *", "string", c_char_p),
    ("flag", "bool", "bool", c_bool),
    ("cubeMathType", "int8_t", "int8_t", c_int8),
    ("i16", "int16_t", "int16_t", c_int16),
    ("i32", "int32_t", "int32_t", c_int32),
    ("groups", "int", "int32_t", c_int),
    ("dim", "int64_t", "int64_t", c_int64),
    ("u8", "uint8_t", "uint8_t", c_uint8),
    ("u16", "uint16_t", "uint16_t", c_uint16),
    ("u32", "uint32_t", "uint32_t", c_uint32),
    ("count", "uint64_t", "uint64_t", c_uint64),
    ("lr", "float", "float", c_float),
    ("eps", "double", "double", c_double),
    ("constDim", "const int64_t", "int64_t", c_int64),
    ("constEps", "const double", "double", c_double),
    ("constFlag", "const bool", "bool", c_bool),
    ("constDtype", "const aclDataType", "aclDataType", c_int),
    ("constLr", "const float", "float", c_float),
    ("constI32", "const int32_t", "int32_t", c_int32),
    ("constI8", "const int8_t", "int8_t", c_int8),
    ("nonConstScalar", "aclScalar *", "aclScalar", c_void_p),
    ("nonConstSizes", "aclIntArray *", "aclIntArray", c_void_p),
    ("nonConstScales", "aclFloatArray *", "aclFloatArray", c_void_p),
    ("out", "aclTensor *", "aclTensor", c_void_p),
    ("outList", "aclTensorList *", "aclTensorList", c_void_p),
]


def test_every_kind_with_its_ctype(builtin):
    proto = builtin.prototype("aclnnFixtureEveryKind")
    assert proto.supported and proto.phase2_declared
    assert [(p.name, p.c_type, p.kind) for p in proto.params] == [row[:3] for row in EVERY_KIND]
    assert {p.kind for p in proto.params} == set(headers.KINDS)
    assert proto.argtypes == tuple(row[3] for row in EVERY_KIND) + TAIL
    assert proto.param_argtypes == proto.argtypes[:-2]
    assert [p.ctype for p in proto.params] == [row[3] for row in EVERY_KIND]
    # the C types ctypes needs for them: pointers are 8 bytes, enums 4, bool 1
    assert ctypes.sizeof(headers.KIND_CTYPES["aclDataType"]) == 4 and ctypes.sizeof(c_bool) == 1
    assert proto.argtypes[-2:] == (headers.WORKSPACE_SIZE_ARGTYPE, headers.EXECUTOR_ARGTYPE)


def test_only_tensors_are_outputs_and_optional_hints(builtin):
    proto = builtin.prototype("aclnnFixtureEveryKind")
    assert [p.name for p in proto.outputs] == ["out", "outList"]
    assert [p.name for p in proto.params if p.optional_hint] == ["layoutOptional"]
    assert [p.name for p in proto.params if p.const][:2] == ["self", "tensors"]
    assert not any(p.const for p in proto.params if p.name.startswith("nonConst"))


# ---------------------------------------------------------------------------------------------
# declaration styles
# ---------------------------------------------------------------------------------------------

def test_what_is_a_declaration(builtin):
    syntax = str(BUILTIN / "aclnn_fixture_syntax.h")
    declared = sorted(n for n in builtin.names() if builtin.entries[n].path == Path(syntax))
    assert declared == sorted(["aclFixtureShort", "aclnnFixtureGenerated", "aclnnFixtureNoPhase2",
                               "aclnnFixtureOld", "aclnnFixtureOneLine", "aclnnFixtureSpacing",
                               "aclnnFixtureTwice", "aclnnFixtureUnnamed"])
    for name in ("aclnnFixtureInBlockComment", "aclnnFixtureInLineComment", "aclnnFixtureInMacro", "FixtureWrapper"):
        assert name not in builtin and builtin.get(name) is None
    assert all(builtin.get(n).supported for n in declared)


@pytest.mark.parametrize("name, params", [
    ("aclnnFixtureOneLine", [("self", "const aclTensor *"), ("out", "aclTensor *")]),
    ("aclnnFixtureOld", [("self", "const aclTensor *"), ("out", "aclTensor *")]),  # aclTensor const *, T * const
    ("aclnnFixtureSpacing", [("self", "const aclTensor *"), ("out", "aclTensor *")]),
    ("aclnnFixtureNoPhase2", [("self", "const aclTensor *"), ("out", "aclTensor *")]),
    ("aclnnFixtureTwice", [("first", "const aclTensor *"), ("out", "aclTensor *")]),
    ("aclFixtureShort", [("self", "const aclTensor *"), ("n", "int64_t"), ("out", "aclTensor *")]),
    ("aclnnFixtureUnnamed", [("arg0", "const aclTensor *"), ("arg1", "int64_t"), ("arg2", "int"),
                             ("arg3", "aclTensor *")]),
    ("aclnnFixtureGenerated", [("x", "const aclTensor *"), ("gammaOptional", "const aclTensor *"),
                               ("numGroups", "int64_t"), ("dataFormatOptional", "char *"), ("eps", "double"),
                               ("yOut", "const aclTensor *")]),
])
def test_declaration_styles(builtin, name, params):
    proto = builtin.prototype(name)
    assert proto.unsupported is None
    assert [(p.name, p.c_type) for p in proto.params] == params


def test_lines_phase2_and_origin(builtin):
    syntax = (BUILTIN / "aclnn_fixture_syntax.h").read_text().splitlines()
    for name in ("aclnnFixtureOneLine", "aclnnFixtureGenerated", "aclnnFixtureSpacing", "aclnnFixtureTwice"):
        proto = builtin.prototype(name)
        assert name + "GetWorkspaceSize" in syntax[proto.line - 1], name
        assert proto.header == str(BUILTIN / "aclnn_fixture_syntax.h") and proto.origin == "dir0"
    assert builtin.prototype("aclnnFixtureOld").phase2_declared  # const aclrtStream stream
    assert not builtin.prototype("aclnnFixtureNoPhase2").phase2_declared
    assert builtin.prototype("aclnnFixtureNoPhase2").supported  # the library will tell


def test_level2_subdirectory_and_duplicates(tmp_path):
    idx = index_of(BUILTIN)
    assert idx.prototype("aclnnFixtureLevel2Only").header == str(BUILTIN / "level2" / "aclnn_fixture_level2_only.h")
    # CANN's level2/ holds copies of the top-level headers: identical bytes are read once
    tree = tmp_path / "aclnnop"
    shutil.copytree(BUILTIN, tree)
    shutil.copy(tree / "aclnn_fixture_kinds.h", tree / "level2" / "aclnn_fixture_kinds.h")
    copy = index_of(tree)
    assert copy.duplicates == 1 and copy.files == idx.files and copy.shadowed == {}
    assert copy.names() == idx.names()


def test_symlinked_directories_are_read_once(tmp_path):
    (tmp_path / "include").symlink_to(BUILTIN.parent)
    idx = index_of(tmp_path / "include" / "aclnnop", BUILTIN, tmp_path / "include")
    assert idx.files == index_of(BUILTIN).files
    assert idx.prototype("aclnnFixtureOneLine").origin == "dir0"


def test_crlf_line_endings(tmp_path):
    text = (BUILTIN / "aclnn_fixture_syntax.h").read_text().replace("\n", "\r\n")
    (tmp_path / "crlf.h").write_bytes(text.encode())
    a, b = index_of(tmp_path).all(), index_of(BUILTIN).all()
    for name, proto in a.items():
        assert proto.params == b[name].params and proto.line == b[name].line, name


def test_declaration_text_parses_back_to_the_same_prototype(builtin):
    for name, proto in builtin.all().items():
        text = proto.declaration()
        assert text.startswith(f"aclnnStatus {proto.phase1_name}(") and text.endswith(
            f"aclnnStatus {name}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);")
        again = headers.parse_header_text(text)[name]
        assert [(p.name, p.c_type, p.kind) for p in again.params] == \
            [(p.name, p.c_type, p.kind) for p in proto.params], name
        assert again.phase2_declared
    text = builtin.prototype("aclnnFixtureOneLine").declaration().splitlines()
    assert text[:2] == ["aclnnStatus aclnnFixtureOneLineGetWorkspaceSize(const aclTensor *self, aclTensor *out,",
                        "    uint64_t *workspaceSize, aclOpExecutor **executor);"]
    long = builtin.prototype("aclnnFixtureEveryKind").declaration().splitlines()
    assert len(long) > 5 and all(len(line) <= 100 for line in long[:-1])


def test_clean_keeps_offsets_and_lines():
    text = '/* a\n b */ int x; // c\n#define Y \\\n  z\nchar *s = "q(//)";\n'
    cleaned = headers.clean(text)
    assert len(cleaned) == len(text) and cleaned.count("\n") == text.count("\n")
    assert "a" not in cleaned[:10] and "#" not in cleaned and "//" not in cleaned and '"     "' in cleaned
    assert "int x;" in cleaned and "char *s" in cleaned


# ---------------------------------------------------------------------------------------------
# outputs
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, outputs", [
    ("aclnnFixtureOuts", {"gradInput": "non-const", "yOut": "name", "meanOutOptional": "name", "out": "name",
                          "indices": "non-const"}),
    ("aclnnInplaceFixtureRef", {"selfRef": "name"}),
    ("aclnnInplaceFixtureNoRef", {"self": "inplace operator"}),
    ("aclnnFixtureLastTensor", {"y": "last tensor"}),
    ("aclnnFixtureTrailing", {"attentionOut": "name", "softmaxLse": "last tensor"}),
    ("aclnnFixtureDocumented", {"output": "documented", "gatherOut": "name"}),
    ("aclnnFixtureForeach", {"out": "name"}),
    ("aclnnFixtureListOut", {"y": "non-const"}),
    ("aclnnFixtureGeneratedRef", {"yRef": "non-const"}),
    ("aclnnFixtureNonConstInput", {"selfRef": "non-const", "other": "non-const"}),  # a known false positive
    ("aclnnFixtureNoTensor", {}),
    ("aclnnFixtureGenerated", {"yOut": "name"}),
])
def test_output_rules(builtin, name, outputs):
    proto = builtin.prototype(name)
    assert {p.name: p.output_reason for p in proto.outputs} == outputs
    assert all(p.output_reason == "" for p in proto.inputs)
    assert len(proto.inputs) + len(proto.outputs) == len(proto.params)


def test_grad_out_is_an_input_and_inplace_outputs(builtin):
    outs = builtin.prototype("aclnnFixtureOuts")
    assert {p.name for p in outs.inputs} == {"self", "gradOut", "weightOptional"}
    assert not any(p.inplace for p in outs.params)
    assert [p.name for p in builtin.prototype("aclnnInplaceFixtureRef").params if p.inplace] == ["selfRef"]
    assert [p.name for p in builtin.prototype("aclnnInplaceFixtureNoRef").params if p.inplace] == ["self"]
    assert [p.name for p in builtin.prototype("aclnnFixtureGeneratedRef").params if p.inplace] == ["yRef"]
    assert headers.looks_like_output_name("maxGradNormOptionalRef")
    assert headers.looks_like_output_name("meanOutOptional") and headers.looks_like_output_name("ref")
    assert not headers.looks_like_output_name("output") and not headers.looks_like_output_name("Optional")


# ---------------------------------------------------------------------------------------------
# unsupported and malformed declarations
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, reason", [
    ("aclnnFixtureUnknownType", "parameter 1 ('aclFormat format') has type 'aclFormat', which the binding cannot pass"),
    ("aclnnFixtureLong", "type 'long'"),
    ("aclnnFixtureUnsigned", "type 'unsigned int'"),
    ("aclnnFixtureVoidPointer", "type 'void *'"),
    ("aclnnFixtureIntPointer", "type 'const int64_t *'"),
    ("aclnnFixtureArray", "is an array parameter"),
    ("aclnnFixtureFunctionPointer", "is a function pointer"),
    ("aclnnFixtureReference", "is a C++ reference"),
    ("aclnnFixtureTensorArray", "type 'aclTensor **'"),
    ("aclnnFixtureVarargs", "a variable argument list"),
    ("aclnnFixtureBadTail", "do not end with (uint64_t *workspaceSize, aclOpExecutor **executor)"),
    ("aclnnFixtureReturnsInt", "it returns int32_t, not aclnnStatus"),
    ("aclnnFixtureSameNames", "two parameters are named x"),
    ("aclnnFixtureBadPhase2", "its second phase aclnnFixtureBadPhase2(void *workspace, aclOpExecutor *executor, "
                              "aclrtStream stream) is not"),
    ("aclnnFixtureTwoReasons", "'aclFormat'"),
])
def test_unsupported_prototypes_say_why(name, reason):
    idx = index_of(FIXTURES / "unsupported")
    proto = idx.prototype(name)  # kept in the index: found, with the reason
    assert not proto.supported and reason in proto.unsupported
    with pytest.raises(UnsupportedPrototypeError, match="cannot be called through this binding") as info:
        proto.argtypes
    assert reason in str(info.value) and f"aclnn_fixture_unsupported.h:{proto.line}" in str(info.value)
    assert isinstance(info.value, TypeError)
    with pytest.raises(UnsupportedPrototypeError):
        proto.require_supported()
    assert name in proto.declaration()  # still printable for help()


def test_unsupported_details():
    idx = index_of(FIXTURES / "unsupported")
    two = idx.prototype("aclnnFixtureTwoReasons").unsupported
    assert "'aclFormat'" in two and "'HcclComm'" in two
    fp = idx.prototype("aclnnFixtureFunctionPointer").params[0]
    assert fp.name == "callback" and fp.kind is None
    with pytest.raises(UnsupportedPrototypeError):
        fp.ctype
    tail = idx.prototype("aclnnFixtureBadTail")
    assert [p.name for p in tail.params] == ["self", "out"]  # a partial tail is not a parameter
    assert len(idx) == 15 and all(not p.supported for p in idx.all().values())


def test_malformed_headers_never_crash(tmp_path):
    tree = tmp_path / "h"
    shutil.copytree(FIXTURES / "malformed", tree)
    (tree / "binary.h").write_bytes(b"\x7fELF\x00\xff\xfe GetWorkspaceSize( \x00\x80")
    (tree / "dangling.h").symlink_to(tmp_path / "nowhere.h")
    (tree / "a_directory.h").mkdir()
    (tree / "latin1.h").write_bytes("/* caf\xe9 */ ACLNN_API aclnnStatus aclnnFixtureLatin1GetWorkspaceSize("
                                    "const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, "
                                    "aclOpExecutor **executor);".encode("latin-1"))
    idx = index_of(tree)
    assert [why for _, why in idx.skipped] and all("could not be read" in why for _, why in idx.skipped)
    assert [Path(p).name for p, _ in idx.skipped] == ["dangling.h"]
    reasons = {n: p.unsupported for n, p in idx.all().items()}
    assert reasons == {
        "aclnnFixtureUnclosed": "parameter list not closed before ';' at line 2",
        "aclnnFixtureStrayBrace": "parameter list not closed before '{' at line 7",
        "aclnnFixtureAtEndOfFile": "parameter list not closed before the end of the file",
        "aclnnFixtureAfterBroken": None,
        "aclnnFixtureLatin1": None,
    }
    assert "aclnnFixtureInOpenComment" not in idx


def test_a_header_changed_after_indexing(tmp_path):
    path = op_header(tmp_path, "Changing", "const aclTensor *self", "aclTensor *out")
    idx = index_of(tmp_path)
    path.write_text("/* now something else entirely, longer than before */\n" + path.read_text())
    proto = idx.prototype("aclnnChanging")
    assert not proto.supported and "could not be read again" in proto.unsupported
    path.unlink()
    idx2 = index_of(tmp_path)
    assert len(idx2) == 0 and idx2.get("aclnnChanging") is None


# ---------------------------------------------------------------------------------------------
# the search path
# ---------------------------------------------------------------------------------------------

def fake_cann(tmp_path: Path, layout: str) -> Path:
    """A CANN root holding libascendcl.so and aclnnBuiltin in its built-in header directory."""
    root = tmp_path / "cann"
    write(root / "lib64" / "libascendcl.so", "")
    sub = {"include": "include/aclnnop", "arch": f"{ARCH}-linux/include/aclnnop",
           "opp": "opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop"}[layout]
    op_header(root / sub, "Builtin", "const aclTensor *self", "aclTensor *out")
    op_header(root / sub, "Shared", "const aclTensor *builtin", "aclTensor *out")
    return root


@pytest.mark.parametrize("layout", ["include", "arch", "opp"])
def test_builtin_headers_of_each_layout(clean_env, tmp_path, layout):
    root = fake_cann(tmp_path, layout)
    clean_env.setenv("ASCEND_HOME_PATH", str(root))
    proto = headers.prototype("aclnnBuiltin")
    assert proto.origin == f"built-in {root}" and [p.name for p in proto.params] == ["self", "out"]


def test_level2_of_a_cann_8_5_layout(clean_env, tmp_path):
    root = tmp_path / "cann"
    write(root / f"{ARCH}-linux" / "lib64" / "libascendcl.so", "")
    op_header(root / f"{ARCH}-linux/include/aclnnop/level2", "Deprecated", "const aclTensor *self", "aclTensor *out")
    write(root / f"{ARCH}-linux/include/aclnnop/level2/aclnn_warned.h",
          '#warning "This file is scheduled to be deprecated in June 2027, and will be replaced"\n'
          "ACLNN_API aclnnStatus aclnnWarnedGetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
          "    uint64_t *workspaceSize, aclOpExecutor **executor);\n")
    clean_env.setenv("ASCEND_HOME_PATH", str(root))
    assert headers.prototype("aclnnDeprecated").supported and headers.prototype("aclnnWarned").supported


def test_search_order_and_overriding(clean_env, tmp_path):
    root = fake_cann(tmp_path, "opp")
    opp = root / "opp"
    write(opp / "vendors" / "config.ini", "load_priority=v2,v1\n")
    op_header(opp / "vendors/v1/op_api/include", "Shared", "const aclTensor *v1", "aclTensor *out")
    op_header(opp / "vendors/v1/op_api/include", "VendorOnly", "const aclTensor *v1", "aclTensor *out")
    op_header(opp / "vendors/v2/op_api/include/aclnnop", "VendorOnly", "const aclTensor *v2", "aclTensor *out")
    custom = tmp_path / "custom"
    op_header(custom / "op_api/include", "Shared", "const aclTensor *custom", "aclTensor *out")
    added, env_dir = tmp_path / "added", tmp_path / "env"
    op_header(added, "Shared", "const aclTensor *added", "aclTensor *out")
    op_header(env_dir, "Shared", "const aclTensor *env", "aclTensor *out")
    clean_env.setenv("ASCEND_HOME_PATH", str(root))
    clean_env.setenv("ASCEND_CUSTOM_OPP_PATH", str(custom))

    def first_param(name="aclnnShared"):
        return headers.prototype(name).params[0].name

    assert first_param() == "custom" and first_param("aclnnVendorOnly") == "v2"
    assert headers.prototype("aclnnVendorOnly").origin == "vendor v2"
    idx = headers.get_index()
    assert [Path(s).parent.name for s in idx.shadowed["aclnnShared"]] == ["include", "aclnnop"]
    headers.add_headers(added)
    assert first_param() == "added" and headers.prototype("aclnnShared").origin == "add_headers"
    clean_env.setenv(headers.ENV_VAR, os.pathsep.join([str(tmp_path / "missing"), str(env_dir)]))
    headers.add_headers(added)  # already there: no duplicate, but the index is rebuilt
    assert first_param() == "env" and headers.prototype("aclnnShared").origin == headers.ENV_VAR
    assert [d.origin for d in headers.header_dirs()][:6] == [
        headers.ENV_VAR, headers.ENV_VAR, "add_headers", f"custom {custom}", "vendor v2", "vendor v1"]
    assert headers.header_dirs()[-1].origin == f"built-in {root}"
    assert first_param("aclnnBuiltin") == "self"


def test_add_headers_refuses_what_is_not_a_directory(clean_env, tmp_path):
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        headers.add_headers(tmp_path / "missing")
    with pytest.raises(NotADirectoryError):
        headers.add_headers(BUILTIN / "aclnn_util.h")


def test_environment_variable_without_cann(clean_env):
    clean_env.setenv(headers.ENV_VAR, str(BUILTIN))
    assert headers.prototype("aclnnFixtureOneLine").header == str(BUILTIN / "aclnn_fixture_syntax.h")
    assert headers.prototype("FixtureOneLine") is headers.prototype("aclnnFixtureOneLine")  # short names
    assert headers.find("aclnnNoSuchOperator") is None
    assert "aclnnFixtureEveryKind" in headers.names()
    with pytest.raises(HeaderLookupError, match="no header declares aclnnNoSuchOperatorGetWorkspaceSize") as info:
        headers.prototype("aclnnNoSuchOperator")
    assert str(BUILTIN) in str(info.value) and isinstance(info.value, LookupError)


def test_nothing_to_search(clean_env):
    assert headers.names() == []
    with pytest.raises(HeaderLookupError, match="no header directory exists"):
        headers.prototype("aclnnAdd")


def test_the_index_is_kept_until_reset(clean_env, tmp_path):
    op_header(tmp_path, "First", "const aclTensor *self", "aclTensor *out")
    clean_env.setenv(headers.ENV_VAR, str(tmp_path))
    first = headers.get_index()
    assert headers.get_index() is first and "aclnnFirst" in headers.names()
    op_header(tmp_path, "Second", "const aclTensor *self", "aclTensor *out")
    assert headers.find("aclnnSecond") is None  # scanned once per process
    headers.reset()
    assert headers.find("aclnnSecond") is not None


LAZY = textwrap.dedent("""
    import json, sys
    opened = []
    def hook(event, args):
        if event in ("open", "os.scandir", "os.listdir") and args and str(args[0]).endswith((".h", "aclnnop")):
            opened.append(str(args[0]))
    sys.addaudithook(hook)
    import ascend_aclnn
    from ascend_aclnn.cann import headers
    at_import = list(opened)
    index_before = headers._index
    proto = headers.prototype("aclnnFixtureOneLine")
    print(json.dumps({"at_import": at_import, "index_before": index_before is None, "after": len(opened),
                      "params": [p.name for p in proto.params]}))
""")


def test_nothing_is_read_at_import(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.update({headers.ENV_VAR: str(BUILTIN), "ASCEND_HOME_PATH": str(tmp_path / "no-cann"),
                "PYTHONPATH": os.pathsep.join([str(ROOT)] + env.get("PYTHONPATH", "").split(os.pathsep))})
    out = subprocess.run([sys.executable, "-c", LAZY], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {"at_import": [], "index_before": True, "after": result["after"], "params": ["self", "out"]}
    assert result["after"] > 3


def test_scan_time_is_linear(tmp_path):
    """Headers each with a long comment and two declarations (CANN 8.1.RC1 has about 600
    distinct ones): scanning four times as many costs about four times the CPU time, never
    the square of it. A ratio of CPU times, not a wall-clock bound: other jobs on the
    machine change both sides alike."""
    doc = "/**\n" + " * @param [in] self: a tensor, described at length in the real headers.\n" * 40 + " */\n"
    sizes = {}
    for n in (250, 1000):
        root = tmp_path / str(n)
        for i in range(n):
            write(root / f"aclnn_op{i}.h", doc + op_header(tmp_path / "tmp", f"Op{i}", "const aclTensor *self",
                                                           "aclTensor *out").read_text())
        shutil.rmtree(tmp_path / "tmp")
        idx = index_of(root)
        assert len(idx) == n and idx.files == n
        assert 0 < idx.scan_seconds  # what info reports: measured, not made up
        sizes[n] = _cpu_seconds(lambda: index_of(root))
    ratio = sizes[1000] / sizes[250]
    assert ratio < 8, f"4x the headers took {ratio:.1f}x the CPU time ({sizes})"


def _cpu_seconds(work, repeat: int = 3) -> float:
    """The least CPU time of a few runs: CPU time, not wall-clock, so other jobs on the
    machine change it little; the least, so one slow run does not count."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return max(best, 1e-6)


def _read_everything(directory: Path, last: str) -> None:
    idx = index_of(directory)   # the scan (what the first lookup pays)
    idx.prototype(last)         # one lookup, parsed alone
    idx.all()                   # and every declaration


def _declarations(n: int) -> str:
    """One generated header declaring n operators, as CANN lays them out."""
    doc = "/**\n * @brief op {i}\n * @param [in] self: input\n * @param [out] out: output\n */\n"
    one = (doc + "ACLNN_API aclnnStatus aclnnGen{i}GetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
           "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
           "ACLNN_API aclnnStatus aclnnGen{i}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,\n"
           "    aclrtStream stream);\n\n")
    return ('#ifndef GEN_H\n#define GEN_H\n#include "aclnn/aclnn_base.h"\n#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
            + "".join(one.format(i=i) for i in range(n)) + "#ifdef __cplusplus\n}\n#endif\n#endif\n")


GOOD = ("ACLNN_API aclnnStatus aclnnGoodGetWorkspaceSize(const aclTensor *self, aclTensor *out, "
        "uint64_t *workspaceSize, aclOpExecutor **executor);\n")
# Malformed line patterns, each repeated n and 4n times after one good declaration: (the line,
# n, whether each line declares an operator, and whether those are callable). n is larger where
# the reader is fast, so that the time measured is well above the timer's noise.
MALFORMED_LINES = {
    # the first /* opens a comment to the end of the file: nothing after it is declared
    "unclosed comment in a #define": ("#define A /*\n", 2000, False, False),
    "unclosed comment in an #if": ("#if 0 /* x\n", 2000, False, False),
    # declared (each line starts a declaration), but each parameter list runs into the end of the file
    "declarations never closed": ("aclnnStatus aclnnOpen{i}GetWorkspaceSize(const aclTensor *self,\n",
                                  500, True, False),
    # complete declarations with no ; between them: the reader needs none
    "no statement ends": ("aclnnStatus aclnnNoEnd{i}GetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize, "
                          "aclOpExecutor **executor)\n", 500, True, True),
    # calls inside one unclosed call: no declarations
    "one long call": ("f(aclnnCall{i}GetWorkspaceSize(x), ", 500, False, False),
}


def test_many_declarations_in_one_header_are_read_in_linear_time(tmp_path):
    """Issue 26, defect 5: one header of 5,000 declarations took 14 s (20,000: 199 s), as
    each declaration searched the text back to the file's start for the statement's start,
    counted lines from the start, and searched its phase 2 from the start. The time of 4x
    the declarations must stay near 4x (quadratic would be 16x)."""
    n = 1000
    for size in (n, 4 * n):
        write(tmp_path / str(size) / "gen.h", _declarations(size))
    idx = index_of(tmp_path / str(n))
    assert len(idx) == n and idx.prototype(f"aclnnGen{n - 1}").supported
    assert idx.prototype(f"aclnnGen{n - 1}").line == 13 + 10 * (n - 1) and idx.prototype("aclnnGen7").phase2_declared
    small = _cpu_seconds(lambda: _read_everything(tmp_path / str(n), f"aclnnGen{n - 1}"))
    large = _cpu_seconds(lambda: _read_everything(tmp_path / str(4 * n), f"aclnnGen{4 * n - 1}"))
    assert large / small < 8, (small, large)


@pytest.mark.parametrize("pattern", list(MALFORMED_LINES), ids=list(MALFORMED_LINES))
def test_a_malformed_header_is_read_in_linear_time(tmp_path, pattern):
    """Issue 26, defect 5: a ~100 KB header of ``#define A /*`` lines made the first lookup
    take 43 s (the lexer tried to close the comment at each ``/*``, to the end of the file).
    Each malformed pattern, 4x repeated, must cost near 4x."""
    line, n, declares, callable_ = MALFORMED_LINES[pattern]
    for size in (n, 4 * n):
        write(tmp_path / str(size) / "bad.h", GOOD + "".join(line.format(i=i) for i in range(size)))
    idx = index_of(tmp_path / str(n))
    assert idx.prototype("aclnnGood").supported  # what comes before the damage is read
    others = [p for name, p in idx.all().items() if name != "aclnnGood"]
    assert len(others) == (n if declares else 0) and all(p.supported == callable_ for p in others)
    small = _cpu_seconds(lambda: _read_everything(tmp_path / str(n), "aclnnGood"))
    large = _cpu_seconds(lambda: _read_everything(tmp_path / str(4 * n), "aclnnGood"))
    assert large / small < 8, (small, large)


def test_a_comment_left_open_in_a_preprocessor_line_runs_to_the_end_of_the_file(tmp_path):
    """As in C: ``/*`` on a ``#define`` line opens a comment that the line's end does not
    close, so what follows it is comment text, up to ``*/`` or the end of the file."""
    text = ("#define A /* spans\n lines */ 1\n" + GOOD.replace("Good", "Before")
            + "#define B /* never closed\n" + GOOD.replace("Good", "After"))
    assert list(headers.parse_header_text(text)) == ["aclnnBefore"]
    assert headers.clean(text).count("\n") == text.count("\n") and len(headers.clean(text)) == len(text)


# ---------------------------------------------------------------------------------------------
# the ABI check (info --check-abi)
# ---------------------------------------------------------------------------------------------

T, A = c_void_p, c_void_p  # aclTensor *, aclIntArray *
# The first-phase argtypes (no tail) of the described operators whose prototypes the fixture
# header ten/ re-types from CANN's: what the headers say, held against the binding's own
# descriptions below (an operator described later is simply not in the fixture).
FIXTURE_ARGTYPES = {
    "aclnnUpsampleNearestExact1d": (T, A, c_double, T),
    "aclnnUpsampleNearestExact1dBackward": (T, A, A, c_double, T),
    "aclnnReplicationPad2d": (T, A, T),
    "aclnnReplicationPad2dBackward": (T, T, A, T),
    "aclnnMaxPool2dWithMask": (T, A, A, A, A, c_bool, T, T),
    "aclnnMaxPool2dWithMaskBackward": (T, T, T, A, A, A, A, c_bool, T),
    "aclnnIm2col": (T, A, A, A, A, T),
    "aclnnIm2colBackward": (T, A, A, A, A, A, T),
    "aclnnGroupNormSwish": (T, T, T, c_int64, c_char_p, c_double, c_bool, c_double, T, T, T),
    "aclnnGroupNormSwishGrad": (T, T, T, T, T, T, c_int64, c_char_p, c_double, c_bool, c_bool, T, T, T),
}


def test_the_descriptions_give_the_fixture_headers_argtypes():
    """The fixture's table is the descriptions' ABI as the headers state it: each described
    operator it holds passes the same argtypes (a table that drifted from the binding would
    test the ABI check on argtypes nothing passes)."""
    from ascend_aclnn.ops import REGISTRY
    ours = {spec.aclnn: tuple(spec.c_argtypes) for spec in REGISTRY if spec.aclnn in FIXTURE_ARGTYPES}
    assert ours and ours == {name: FIXTURE_ARGTYPES[name] for name in ours}
    assert set(FIXTURE_ARGTYPES) <= {spec.aclnn for spec in REGISTRY}


def test_check_abi_of_the_described_operators():
    idx = index_of(FIXTURES / "ten")
    assert headers.check_abi(FIXTURE_ARGTYPES, idx) == {name: [] for name in FIXTURE_ARGTYPES}
    with_tail = {name: argtypes + TAIL for name, argtypes in FIXTURE_ARGTYPES.items()}
    assert headers.check_abi(with_tail, idx) == {name: [] for name in FIXTURE_ARGTYPES}
    outputs = {name: [p.name for p in idx.prototype(name).outputs] for name in FIXTURE_ARGTYPES}
    assert outputs["aclnnMaxPool2dWithMask"] == ["out", "indices"]
    assert outputs["aclnnIm2col"] == ["out"]  # declared const
    assert outputs["aclnnGroupNormSwishGrad"] == ["dxOut", "dgammaOut", "dbetaOut"]


def test_check_abi_names_what_differs():
    idx = index_of(FIXTURES / "ten", FIXTURES / "unsupported")
    wrong = dict(FIXTURE_ARGTYPES)
    wrong["aclnnGroupNormSwish"] = FIXTURE_ARGTYPES["aclnnGroupNormSwish"][:5] + (c_float,) + FIXTURE_ARGTYPES["aclnnGroupNormSwish"][6:]
    wrong["aclnnIm2col"] = FIXTURE_ARGTYPES["aclnnIm2col"][:-1]
    wrong["aclnnGone"] = (T,)
    wrong["aclnnFixtureLong"] = (c_int64, T)
    report = headers.check_abi(wrong, idx)
    assert report["aclnnGroupNormSwish"] == ["parameter 5 (double eps): expected c_float, the header gives c_double"]
    assert report["aclnnIm2col"][0].startswith("5 parameters expected, the header declares 6")
    assert report["aclnnGone"][0].startswith("no header declares aclnnGoneGetWorkspaceSize")
    assert report["aclnnFixtureLong"][0].startswith("the header's prototype is unsupported: parameter 0")
    assert [name for name, diffs in report.items() if diffs] == [
        "aclnnIm2col", "aclnnGroupNormSwish", "aclnnGone", "aclnnFixtureLong"]
    tail = headers.compare_argtypes(idx.prototype("aclnnReplicationPad2d"), (T, A, T, POINTER(c_int64), TAIL[1]))
    assert tail == ["parameter 3 (uint64_t *workspaceSize): expected LP_c_long, the header gives LP_c_ulong"]


def test_operators_declared_without_the_nn_prefix(clean_env, tmp_path):
    """CANN 8.1 declares two operators as aclRfft1D and aclStft (acl_rfft1d.h, acl_stft.h):
    names() lists them as declared, and aa.aclnn finds them by that name or without "acl"."""
    import ascend_aclnn as aa
    (tmp_path / "acl_fixture_fft.h").write_text(
        '#include "aclnn/aclnn_base.h"\n'
        '#ifdef __cplusplus\nextern "C" {\n#endif\n'
        'aclnnStatus aclFixtureFft1DGetWorkspaceSize(const aclTensor* self, int64_t n, int64_t dim,\n'
        '    int64_t norm, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);\n'
        'aclnnStatus aclFixtureFft1D(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,\n'
        '    aclrtStream stream);\n'
        '#ifdef __cplusplus\n}\n#endif\n')
    clean_env.setenv(headers.ENV_VAR, str(tmp_path))
    assert headers.names() == ["aclFixtureFft1D"]
    proto = aa.aclnn.prototype("aclFixtureFft1D")
    assert proto.name == "aclFixtureFft1D" and [p.name for p in proto.outputs] == ["out"]
    assert aa.aclnn.FixtureFft1D.prototype is proto
    assert aa.aclnn.operator("aclFixtureFft1D") is aa.aclnn.FixtureFft1D
    assert "FixtureFft1D" in dir(aa.aclnn)


def test_operators_of_one_header_looked_up_one_by_one_read_it_once(tmp_path, monkeypatch):
    """The last header parsed is kept (keyed by its stat), so a loop over a generated
    package's operators does not read and clean its whole header once per operator; a
    header changed since is read again."""
    path = write(tmp_path / "gen.h", _declarations(50))
    idx = index_of(tmp_path)
    reads: list[Path] = []
    real_read = headers._read
    monkeypatch.setattr(headers, "_read", lambda p: reads.append(p) or real_read(p))
    for i in range(25):
        assert idx.prototype(f"aclnnGen{i}").supported
    assert reads == [path]
    path.write_text(_declarations(50) + "\n")  # the same declarations at the same offsets, another size
    for i in range(25, 50):
        assert idx.prototype(f"aclnnGen{i}").supported
    assert reads == [path, path]


@pytest.mark.parametrize("line", [
    "#define LINE_COMMENT 1 // not a block: /* here\n",
    '#define TEXT "/*"\n',
    "#define CHAR '/' /* closed */ '*'\n",
    "#pragma message(\"a /* in a string\")\n",
])
def test_an_open_comment_mark_inside_a_preprocessor_line_comment_or_string_is_text(line):
    """Only a real ``/*`` in a preprocessor line opens a comment running past it: one in a
    line comment or a string literal is text, and what follows the line is read."""
    text = line + GOOD.replace("Good", "After")
    assert list(headers.parse_header_text(text)) == ["aclnnAfter"]
