"""The prototypes of the operators and nnopbase functions added for calling any operator
from its header, against a table of the real CANN 8.1.RC1 prototypes typed out here from
its aclnnop/*.h and aclnn/acl_meta.h (parameter names, C types and const-ness, the
const of a by-value stream included): read from the installed headers, then compiled
against them as C and C++ (a conflicting redeclaration fails to compile)."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .expected import native_build, read_declarations

TAIL = [("uint64_t*", "workspaceSize"), ("aclOpExecutor**", "executor")]
PHASE2 = [("void*", "workspace"), ("uint64_t", "workspaceSize"), ("aclOpExecutor*", "executor"),
          ("aclrtStream", "stream")]
CONST_STREAM_PHASE2 = PHASE2[:3] + [("const aclrtStream", "stream")]

# header -> {function: [(C type, parameter name), ...]}, every one returning aclnnStatus
REAL_OPERATORS = {
    "aclnn_add.h": {
        "aclnnAddGetWorkspaceSize": [("const aclTensor*", "self"), ("const aclTensor*", "other"),
                                     ("const aclScalar*", "alpha"), ("aclTensor*", "out"), *TAIL],
        "aclnnAdd": PHASE2,
    },
    "aclnn_cat.h": {
        "aclnnCatGetWorkspaceSize": [("const aclTensorList*", "tensors"), ("int64_t", "dim"), ("aclTensor*", "out"),
                                     *TAIL],
        "aclnnCat": CONST_STREAM_PHASE2,
    },
    "aclnn_split_tensor.h": {
        "aclnnSplitTensorGetWorkspaceSize": [("const aclTensor*", "self"), ("uint64_t", "splitSections"),
                                             ("int64_t", "dim"), ("aclTensorList*", "out"), *TAIL],
        "aclnnSplitTensor": PHASE2,
    },
    "aclnn_foreach_mul_scalar_list.h": {
        "aclnnForeachMulScalarListGetWorkspaceSize": [("const aclTensorList*", "x"),
                                                      ("const aclScalarList*", "scalars"),
                                                      ("const aclTensorList*", "out"), *TAIL],
        "aclnnForeachMulScalarList": PHASE2,
    },
    "aclnn_reduce_sum.h": {
        "aclnnReduceSumGetWorkspaceSize": [("const aclTensor*", "self"), ("const aclIntArray*", "dims"),
                                           ("bool", "keepDims"), ("aclDataType", "dtype"), ("aclTensor*", "out"),
                                           *TAIL],
        "aclnnReduceSum": PHASE2,
    },
}

# aclnn/acl_meta.h: the list functions, and the constructors whose handles the operators take
REAL_NNOPBASE = {
    "aclCreateScalar": ("aclScalar*", [("void*", "value"), ("aclDataType", "dataType")]),
    "aclCreateFloatArray": ("aclFloatArray*", [("const float*", "value"), ("uint64_t", "size")]),
    "aclCreateBoolArray": ("aclBoolArray*", [("const bool*", "value"), ("uint64_t", "size")]),
    "aclCreateTensorList": ("aclTensorList*", [("const aclTensor* const*", "value"), ("uint64_t", "size")]),
    "aclCreateScalarList": ("aclScalarList*", [("const aclScalar* const*", "value"), ("uint64_t", "size")]),
    "aclDestroyTensorList": ("aclnnStatus", [("const aclTensorList*", "array")]),
    "aclDestroyScalarList": ("aclnnStatus", [("const aclScalarList*", "array")]),
    "aclGetTensorListSize": ("aclnnStatus", [("const aclTensorList*", "tensorList"), ("uint64_t*", "size")]),
    "aclGetScalarListSize": ("aclnnStatus", [("const aclScalarList*", "scalarList"), ("uint64_t*", "size")]),
}

# The vendor package's made-up operator, as its header documents it.
VENDOR_OPERATOR = {
    "aclnnCustomMaskedScaleGetWorkspaceSize": [
        ("const aclTensor*", "self"), ("const aclFloatArray*", "weights"), ("const aclBoolArray*", "mask"),
        ("const char*", "mode"), ("float", "scale"), ("int8_t", "exponent"), ("aclTensor*", "out"), *TAIL],
    "aclnnCustomMaskedScale": PHASE2,
}


def _c_decl(ret, name, params):
    return f"{ret} {name}({', '.join(f'{t} {n}' for t, n in params)});"


def test_registered_with_the_real_header_names():
    ops = native_build.operators()
    for header, functions in REAL_OPERATORS.items():
        op = min(functions, key=len)  # the phase-2 name
        assert ops[op] == header, op


@pytest.mark.parametrize("layout", ["cann8", "split"])
def test_installed_headers_are_the_real_prototypes(sim_builds, layout):
    for root in native_build.include_dirs(sim_builds[layout].parent, layout):
        for header, functions in REAL_OPERATORS.items():
            decls = read_declarations((root / "aclnnop" / header).read_text())
            assert decls == {name: ("aclnnStatus", params) for name, params in functions.items()}, (root, header)


def _abi_declarations(text):
    """name -> (return type, params) of the ACLSIM_API declarations of src/acl_abi.h."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    decls = {}
    for m in re.finditer(r"ACLSIM_API\s+([\w\s\*]+?)\s*\b(\w+)\(([^)]*)\);", text):
        params = []
        for p in filter(None, (p.strip() for p in m.group(3).split(","))):
            pm = re.fullmatch(r"(.*?)\s*(\w+)", p)
            ctype = re.sub(r"\s*\*", "*", " ".join(pm.group(1).split()))
            params.append((re.sub(r"\*(?=\w)", "* ", ctype), pm.group(2)))  # "const T* const*"
        decls[m.group(2)] = (re.sub(r"\s*\*", "*", " ".join(m.group(1).split())), params)
    return decls


def test_simulator_declares_the_real_nnopbase_prototypes():
    decls = _abi_declarations((native_build.SRC / "acl_abi.h").read_text())
    for name, proto in REAL_NNOPBASE.items():
        assert decls[name] == proto, name


def test_vendor_header_declares_its_documented_prototype(sim_builds):
    root = native_build.vendor_root(sim_builds["cann8"].parent, native_build.DEFAULT_VENDOR) / "include"
    decls = read_declarations((root / "aclnn_custom_masked_scale.h").read_text())
    assert decls == {name: ("aclnnStatus", params) for name, params in VENDOR_OPERATOR.items()}


def _compile(compiler, source, includes, tmp_path):
    lang = ["-x", "c", "-std=c11"] if compiler == "cc" else ["-x", "c++", "-std=c++11"]
    path = tmp_path / "protos.src"
    path.write_text(source)
    cmd = [compiler, *lang, "-fsyntax-only", "-Wall", "-Werror", *(f"-I{d}" for d in includes), str(path)]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.mark.parametrize("compiler", ["cc", "c++"])
def test_real_prototypes_compile_against_the_installed_headers(sim_builds, tmp_path, compiler):
    """Each real prototype redeclared after the installed header: any difference in a type
    or the const of a pointed-to type is a conflicting declaration."""
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    prefix = sim_builds["cann8"].parent
    includes = [f'#include "aclnnop/{header}"' for header in REAL_OPERATORS]
    protos = [_c_decl("aclnnStatus", name, params)
              for functions in REAL_OPERATORS.values() for name, params in functions.items()]
    wrap = (['extern "C" {'], ["}"]) if compiler == "c++" else ([], [])
    source = "\n".join([*includes, *wrap[0], *protos, *wrap[1], "int main(void) { return 0; }", ""])
    proc = _compile(compiler, source, [prefix / "include"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    # the check has teeth: one const dropped from a pointed-to type is an error
    bad = source.replace("const aclTensorList* tensors", "aclTensorList* tensors")
    assert bad != source
    assert _compile(compiler, bad, [prefix / "include"], tmp_path).returncode != 0


@pytest.mark.parametrize("compiler", ["cc", "c++"])
def test_real_nnopbase_prototypes_compile_against_the_simulator(tmp_path, compiler):
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    protos = [_c_decl(ret, name, params) for name, (ret, params) in REAL_NNOPBASE.items()]
    wrap = (['extern "C" {'], ["}"]) if compiler == "c++" else ([], [])
    source = "\n".join(['#include "acl_abi.h"', *wrap[0], *protos, *wrap[1], "int main(void) { return 0; }", ""])
    includes = [native_build.SRC, native_build.INCLUDE]
    proc = _compile(compiler, source, includes, tmp_path)
    assert proc.returncode == 0, proc.stderr
    bad = source.replace("const aclTensor* const* value", "aclTensor* const* value")
    assert _compile(compiler, bad, includes, tmp_path).returncode != 0


def test_vendor_header_compiles_alone(sim_builds, tmp_path):
    """As a custom package's header is used: its op_api/include directory and <prefix>/include
    on the path, as C and C++."""
    prefix = sim_builds["cann8"].parent
    root = native_build.vendor_root(prefix, native_build.DEFAULT_VENDOR) / "include"
    protos = [_c_decl("aclnnStatus", name, params) for name, params in VENDOR_OPERATOR.items()]
    for compiler in ("cc", "c++"):
        if shutil.which(compiler) is None:
            continue
        wrap = (['extern "C" {'], ["}"]) if compiler == "c++" else ([], [])
        source = "\n".join(['#include "aclnn_custom_masked_scale.h"', *wrap[0], *protos, *wrap[1],
                           "int main(void) { return 0; }", ""])
        proc = _compile(compiler, source, [root, prefix / "include"], tmp_path)
        assert proc.returncode == 0, (compiler, proc.stderr)
