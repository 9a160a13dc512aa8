#!/usr/bin/env python3
"""Generate ascend_aclnn/cpu_reference/table.json (and NOTICE.op-plugin) from a pinned op-plugin commit.

A developer tool, not part of the wheel. It reads op-plugin (Ascend/op-plugin, BSD-3-Clause: the
code torch_npu runs) in reverse: a call ``EXEC_NPU_CMD(aclnnAdd, self, other, alpha, result)``
inside the C++ function implementing ``add.Tensor`` says that ``aclnnAdd`` computes
``torch.ops.aten.add.Tensor(self, other, alpha=alpha)``.

Requirements (developer machine only):
- Python >= 3.9 with PyYAML (``pip install pyyaml``) and this repository importable (its header
  reader, ``ascend_aclnn.cann.headers``, reads the CANN headers).
- git, and op-plugin as a git directory or a work tree (``--op-plugin``), at the pinned commit
  (``--commit``, default ``PINNED_COMMIT``). Files are read with ``git show``/``git ls-tree``
  from the commit, so a bare mirror is enough.
- The aclnnop headers of CANN 8.1.RC1 in a directory (``--headers``), for the parameter names,
  kinds and outputs. They are read, never copied: extract them yourself, e.g. with
  ``git archive``, outside the repository.
- Optionally ``--newer-headers DIR`` (repeatable): headers of newer CANN releases, consulted for
  operators 8.1.RC1 lacks. Without one, such a row records what op-plugin's call shows (parameter
  names from the aten arguments, kinds from their aten types) and the runtime checks it against
  the installed header before it is used.
- torch (CPU is enough): each row's aten overload is resolved against the installed torch's
  schema (op-plugin's yaml serves several torch versions and spells some arguments otherwise),
  and functional siblings missing from the yaml are looked up there. The output depends on the
  op-plugin commit, the headers and the torch version, which the table records.

Usage::

    python devtools/gen_cpu_reference.py --op-plugin /path/to/op-plugin[.git] \
        --headers /tmp/cann81/aclnnop [--check] [--report]

``--check`` regenerates in memory and compares with the committed files byte for byte.
``--report`` prints the counts (rows by tier, operators of 8.1.RC1 covered, call sites dropped
by reason) to stderr.

What is read
- ``op_plugin/config/op_plugin_functions.yaml``: the aten schemas op-plugin implements, and the
  ``gen_opapi: exec:`` entries the code generator turns into calls (torchnpugen/struct rules: no
  argument list means the schema's arguments in native order, then the results;
  ``structured_inherit`` reuses another entry's exec, an in-place variant passing ``self`` as the
  out argument; ``new_params`` are C++ expressions).
- ``op_plugin/ops/opapi/*.cpp`` and ``op_plugin/utils/custom_functions/opapi/*.cpp``: each
  ``EXEC_NPU_CMD``-family call, inside the function it is written in. A helper (a function that is
  no aten schema) is followed from its callers, in the same file first, up to three levels.

How a call becomes a row
- Each argument is classified: ``param`` (a parameter of the aten function, or a trivial
  conversion of one: a copy, ``value_or``, ``value_or_else``, ``.data()``/``.c_str()``);
  ``result`` (a tensor the function allocates and returns, or its out argument); ``literal``; or
  ``computed``. A parameter reassigned before the call is computed.
- strict: every argument is param, result or literal, the call is in no loop, and the enclosing
  function is an official aten schema. relaxed: the same, except that computed arguments are
  bound when the header parameter's name (camelCase to snake_case, ``Optional``/``Out``/``Ref``
  dropped) names the aten argument the expression is computed from, and aclnn-only knobs
  (``cubeMathType``...) are ignored with the reason; value-changing expressions (arithmetic,
  negation, reductions of a list...) are never bound.
- The aten overload recorded is the functional one: an out= or in-place function maps to its
  functional sibling (same name, same non-out arguments), its out tensor to the sibling's
  results, the in-place ``self`` to ``arg+result``.
- ``fixed``: aten arguments the call does not forward, at their schema default or at the value
  a condition around the call selects (``if (approximate == "none")``). A call selected by a
  condition on a non-forwarded argument that cannot be read as such an equality is dropped, as
  is one leaving a required aten argument unbound.
- Each row is checked against its schema (every bound argument exists, kinds match the aten
  types, result indices exist, every required argument bound or fixed) and against the header:
  the argument count equals the header's, an output parameter is bound to a result and a result
  to an output.
- Rows are merged when equal but for their evidence; the output is sorted and formatted stably,
  so regenerating from the same commit and headers reproduces it byte for byte.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

REPO_ROOT = Path(__file__).resolve().parents[1]
PINNED_COMMIT = "517f2e7d"  # Ascend/op-plugin master, as studied
OUT_DIR = REPO_ROOT / "ascend_aclnn" / "cpu_reference"
TABLE_PATH = OUT_DIR / "table.json"
NOTICE_PATH = OUT_DIR / "NOTICE.op-plugin"
YAML_PATH = "op_plugin/config/op_plugin_functions.yaml"
CPP_DIRS = ("op_plugin/ops/opapi/", "op_plugin/utils/custom_functions/opapi/")
FORMAT_VERSION = 1

# macro -> number of arguments between the operator name and its parameters
EXEC_MACROS = {"EXEC_NPU_CMD": 0, "EXEC_NPU_CMD_EXT": 0, "EXEC_NPU_CMD_SYNC": 0,
               "EXEC_NPU_NO_FORMAT_CHECK_CMD": 0, "EXEC_UPDATE_NPU_NO_FORMAT_CHECK_CMD": 2}

# Header parameters the CPU has no use for: NPU precision or scheduling modes.
IGNORED_KNOBS = {
    "cubeMathType": "NPU cube-unit precision mode (HF32/FP16 down-conversion); the CPU computes at the dtype's own precision",
}

# Operators whose tensors follow another convention than the aten op op-plugin calls them for.
SEMANTIC_GAPS = {
    "aclnnMaxPool2dWithMask": "its second output is the NPU's bit mask of the window maxima, where aten returns indices",
    "aclnnMaxPool2dWithMaskBackward": "it reads the NPU's bit mask where aten reads indices",
}

# Required aten arguments that an aclnn call never needs because the out tensor carries them,
# at the value that keeps the aten op's result in the input's dtype (the runner casts into the
# caller's out, rounding once).
REQUIRED_DEFAULTS = {"half_to_float": False}

HAND_ROWS_PATH = REPO_ROOT / "devtools" / "hand_rows.py"
TIER_ORDER = {"strict": 0, "relaxed": 1, "hand": 2}

# Conversions a hand row may bind beyond kinds_for_type: value-preserving, and done by the
# runner from the aten argument's type alone (header kind -> aten base types).
_C_NUMBERS = ("int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
              "float", "double")
HAND_CONVERSIONS = {
    **{k: frozenset({"Scalar"}) for k in _C_NUMBERS},       # a C number as a Scalar
    "aclScalar": frozenset({"int", "SymInt", "float", "Tensor"}),  # its value; a 0-d tensor for Tensor
    "aclTensor": frozenset({"Scalar"}),                      # a one-element tensor's value
    "aclIntArray": frozenset({"Tensor"}),                    # a 1-D int64 index tensor
}


# ------------------------------------------------------------------------------------------
# Reading op-plugin
# ------------------------------------------------------------------------------------------

class Source:
    """op-plugin's files at one commit, read through git (a bare mirror or a work tree)."""

    def __init__(self, path: Path, commit: str) -> None:
        self.path = path
        out = self._git("rev-parse", "--verify", commit + "^{commit}")
        self.commit = out.strip()

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")

    def read(self, path: str) -> str:
        return self._git("show", f"{self.commit}:{path}")

    def list(self, folder: str) -> list[str]:
        out = self._git("ls-tree", "--name-only", self.commit, folder)
        return sorted(out.split())


# ------------------------------------------------------------------------------------------
# aten schemas
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Arg:
    name: str
    type: str            # without alias annotations: "Tensor", "Tensor?", "int[2]", "Scalar"
    default: Optional[str]
    kwarg_only: bool
    mutable: bool        # Tensor(a!)

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Schema:
    name: str            # "add"
    overload: str        # "Tensor", "" for the default overload
    args: tuple[Arg, ...]
    returns: tuple[str, ...]   # return types
    text: str
    section: str         # yaml section: official / custom / ...
    line: int

    @property
    def full(self) -> str:
        return f"{self.name}.{self.overload or 'default'}"

    @property
    def out_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.kwarg_only and a.mutable)

    @property
    def kind(self) -> str:
        if self.out_args:
            return "out"
        if self.name.endswith("_") and not self.name.endswith("__") and self.args and self.args[0].mutable:
            return "inplace"
        if self.name.startswith("__i") and self.args and self.args[0].mutable:
            return "inplace"
        return "functional"

    @property
    def cpp_name(self) -> str:
        return self.name + "_out" if self.kind == "out" else self.name

    def native_order(self) -> list[Arg]:
        """Arguments as op-plugin's C++ signature lists them: out arguments last."""
        outs = self.out_args
        return [a for a in self.args if a not in outs] + list(outs)


_ALIAS = re.compile(r"\([a-z0-9]+!?(?: -> \*)?\)")


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, start = [], 0, 0
    quote = ""
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
            continue
        if c in "\"'":
            quote = c
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _split_arrow(text: str) -> tuple[str, str]:
    """Arguments and returns at the top-level "->" (an alias set "(a -> *)" has one inside)."""
    depth = 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and text.startswith("->", i):
            return text[:i], text[i + 2:]
    return text, ""


def parse_schema(text: str, section: str = "", line: int = 0) -> Schema:
    # "Tensor(a -> *) self" (split's views): the alias set alone matters, not its "->"
    head, ret = _split_arrow(re.sub(r"\(([a-z0-9]+!?) -> \*\)", r"(\1)", text))
    head = head.strip()
    name_part, _, arg_text = head.partition("(")
    arg_text = arg_text[:arg_text.rindex(")")]
    name, _, overload = name_part.partition(".")
    args = []
    kw = False
    for piece in _split_top(arg_text):
        if piece == "*":
            kw = True
            continue
        decl, eq, default = piece.partition("=")
        mutable = "!" in decl.split()[0]
        decl = _ALIAS.sub("", decl).strip()
        typ, _, aname = decl.rpartition(" ")
        args.append(Arg(aname.strip(), typ.strip(), default.strip() if eq else None, kw, mutable))
    ret = ret.strip()
    if ret.startswith("(") and ret.endswith(")"):
        rets = [_ALIAS.sub("", r).split()[0] for r in _split_top(ret[1:-1])]
    else:
        rets = [_ALIAS.sub("", ret).split()[0]] if ret and ret != "()" else []
    return Schema(name.strip(), overload.strip(), tuple(args), tuple(rets), text, section, line)


def schema_default(arg: Arg) -> tuple[bool, Any]:
    """(expressible, value) of an argument's default, as the runner passes it to torch."""
    d = arg.default
    if d is None:
        return False, None
    base = arg.type.rstrip("?")
    if d == "None":
        return True, None
    if d in ("True", "False"):
        return True, d == "True"
    if len(d) >= 2 and d[0] == d[-1] and d[0] in "'\"":
        return True, d[1:-1]
    m = re.fullmatch(r"(int|SymInt|float|bool)\[(\d*)\]", base)
    if m:
        if d.startswith("["):
            items = [x.strip() for x in d[1:-1].split(",") if x.strip()]
            try:
                return True, [_number(x) for x in items]
            except ValueError:
                return False, None
        try:
            value = _number(d)
        except ValueError:
            return False, None
        return (True, [value] * int(m.group(2))) if m.group(2) else (False, None)
    try:
        value = _number(d)
    except ValueError:
        return False, None   # enum-like defaults (Mean, contiguous_format): torch applies them
    if base in ("float",) and isinstance(value, int):
        value = float(value)
    return True, value


def _number(text: str) -> Any:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("inf", "-inf", "nan"):
        return float(text)
    return float(text)


# aten type -> header kinds it may be passed as, unchanged in value
def kinds_for_type(typ: str) -> frozenset[str]:
    base = typ.rstrip("?")
    if base == "Tensor":
        return frozenset({"aclTensor"})
    if base in ("Tensor[]", "Tensor?[]", "ITensorListRef"):
        return frozenset({"aclTensorList"})
    if base == "Scalar":
        return frozenset({"aclScalar"})
    if base == "Scalar[]":
        return frozenset({"aclScalarList"})
    if re.fullmatch(r"(int|SymInt)\[\d*\]", base):
        return frozenset({"aclIntArray"})
    if re.fullmatch(r"float\[\d*\]", base):
        return frozenset({"aclFloatArray"})
    if re.fullmatch(r"bool\[\d*\]", base):
        return frozenset({"aclBoolArray"})
    if base == "ScalarType":
        return frozenset({"aclDataType"})
    if base == "bool":
        return frozenset({"bool"})
    if base in ("int", "SymInt"):
        return frozenset({"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
                          "uint64_t", "float", "double"})
    if base == "float":
        return frozenset({"float", "double"})
    if base in ("str", "c10::string_view"):
        return frozenset({"string"})
    return frozenset()


def return_kinds(typ: str) -> frozenset[str]:
    base = typ.rstrip("?")
    if base == "Tensor":
        return frozenset({"aclTensor"})
    if base == "Tensor[]":
        return frozenset({"aclTensorList"})
    return frozenset()


# kind -> C type written for a row whose operator no header declares
def c_type_for_kind(kind: str, is_output: bool) -> str:
    if kind in ("aclTensor", "aclTensorList"):
        return f"{'' if is_output else 'const '}{kind} *"
    if kind.startswith("acl") and kind != "aclDataType":
        return f"const {kind} *"
    if kind == "string":
        return "char *"
    return kind


def kind_for_type(typ: str) -> Optional[str]:
    order = ("aclTensor", "aclTensorList", "aclScalar", "aclScalarList", "aclIntArray", "aclFloatArray",
             "aclBoolArray", "aclDataType", "bool", "int64_t", "double", "string")
    kinds = kinds_for_type(typ)
    for k in order:
        if k in kinds:
            return k
    return None


class Schemas:
    """The aten schemas of op-plugin's yaml, by name, overload and C++ name."""

    def __init__(self, yaml_text: str) -> None:
        import yaml  # the developer's PyYAML

        data = yaml.safe_load(yaml_text)
        lines = yaml_text.splitlines()
        func_lines: dict[str, list[int]] = defaultdict(list)
        for i, line in enumerate(lines, 1):
            m = re.match(r"\s*-\s*func:\s*(.*?)\s*$", line)
            if m:
                func_lines[_unquote(m.group(1))].append(i)
        self.exec_lines: dict[int, int] = {}
        for i, line in enumerate(lines, 1):
            if re.match(r"\s*exec:", line) or re.match(r"\s*structured_inherit:", line):
                start = max((f for fs in func_lines.values() for f in fs if f < i), default=0)
                self.exec_lines.setdefault(start, i)
        self.entries: list[tuple[Schema, dict[str, Any]]] = []
        seen: Counter[str] = Counter()
        for section in ("official", "custom", "symint", "quant", "autograd"):
            for e in data.get(section) or []:
                if not isinstance(e, dict) or "func" not in e:
                    continue
                text = e["func"]
                n = seen[text]
                seen[text] += 1
                line = func_lines[text][n] if n < len(func_lines[text]) else 0
                self.entries.append((parse_schema(text, section, line), e))
        self.official = [s for s, _ in self.entries if s.section == "official"]
        self.by_full: dict[str, list[Schema]] = defaultdict(list)
        self.by_cpp: dict[str, list[Schema]] = defaultdict(list)
        self.by_name: dict[str, list[Schema]] = defaultdict(list)
        for s, _ in self.entries:
            if s.section not in ("official", "custom"):
                continue
            self.by_full[s.full].append(s)
            self.by_cpp[s.cpp_name].append(s)
            self.by_name[s.name].append(s)
        self._torch_cache: dict[str, list[Schema]] = {}
        self._torch_full: dict[str, Schema] = {}
        self.symint_names = {parse_schema(e["func"]).name + ("_out" if "out" in parse_schema(e["func"]).overload else "")
                             for s, e in self.entries if s.section == "symint"}

    def torch_schemas(self, name: str) -> list[Schema]:
        """aten schemas of the installed torch for a base name (those op-plugin's yaml lacks)."""
        if name in self._torch_cache:
            return self._torch_cache[name]
        out: list[Schema] = []
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            for fs in torch._C._jit_get_schemas_for_operator("aten::" + name):
                text = str(fs)
                if not text.startswith("aten::") or "Tensor" not in text:
                    continue
                sch = parse_schema(text[len("aten::"):], "official", 0)
                self._torch_full[sch.full] = sch
                if sch.full not in self.by_full:
                    out.append(sch)
        self._torch_cache[name] = out
        return out

    def installed(self, full: str) -> Optional[Schema]:
        """The installed torch's schema of an overload ("add.Tensor")."""
        name, _, overload = full.partition(".")
        self.torch_schemas(name)
        return self._torch_full.get(full)

    def functional(self, s: Schema) -> Optional[tuple[Schema, dict[str, str]]]:
        """The functional sibling of an out= or in-place schema (itself when functional), with
        the map from this schema's argument names to the sibling's."""
        if s.kind == "functional":
            return s, {a.name: a.name for a in s.args}
        if s.name.startswith("__i"):
            base = "__" + s.name[3:]
        elif s.kind == "inplace":
            base = s.name[:-1]
        else:
            base = s.name
        want = [a for a in s.args if a not in s.out_args]
        cands = [c for c in self.by_name.get(base, []) if c.section == s.section] + self.torch_schemas(base)
        scored = []
        for c in cands:
            if c.kind != "functional" or len(c.args) < len(want):
                continue
            if any(_type_key(x.type) != _type_key(y.type) for x, y in zip(want, c.args)):
                continue
            extra = c.args[len(want):]
            if any(x.required or x.name not in ("dtype", "layout", "device", "pin_memory") for x in extra):
                continue
            if s.kind == "out" and len(c.returns) != len(s.out_args):
                continue
            same_names = all(x.name == y.name for x, y in zip(want, c.args))
            ov = s.overload
            same_overload = c.overload == ov or (s.kind == "out" and ov.endswith("_out") and c.overload == ov[:-4])
            scored.append((not same_names, not same_overload, bool(extra), c.full, c))
        if not scored:
            return None
        scored.sort(key=lambda t: t[:4])
        best = scored[0]
        if len(scored) > 1 and scored[1][:3] == best[:3] and scored[1][3] != best[3]:
            return None   # two siblings equally plausible: refuse to guess
        c = best[4]
        return c, {x.name: y.name for x, y in zip(want, c.args)}


def _type_key(t: str) -> str:
    """Types compared as the runner passes values: SymInt is int, int[3] is int[]."""
    return re.sub(r"\[\d+\]", "[]", t.replace("SymInt", "int").replace(" ", ""))


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


# ------------------------------------------------------------------------------------------
# Symbolic values of call arguments
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Val:
    kind: str                     # "param" | "result" | "literal" | "computed"
    name: str = ""                # param: aten argument; result: local's id
    value: Any = None             # literal
    expr: str = ""                # computed: the expression
    refs: tuple[str, ...] = ()    # computed: the aten arguments it reads
    via: tuple[str, ...] = ()     # computed: the expressions of the computed locals it derives from,
                                  # so `k = x[0]; ks = {k, k}` is seen as value-changing at `ks`


def _refs(vals: Iterable[Val]) -> tuple[str, ...]:
    out: set[str] = set()
    for v in vals:
        if v.kind == "param":
            out.add(v.name)
        elif v.kind == "computed":
            out.update(v.refs)
    return tuple(sorted(out))


def _via(vals: Iterable[Val]) -> tuple[str, ...]:
    """Every expression the computed values among `vals` were derived through."""
    out: set[str] = set()
    for v in vals:
        if v.kind == "computed":
            out.add(v.expr)
            out.update(v.via)
    return tuple(sorted(out))


# ------------------------------------------------------------------------------------------
# C++ reading: a small structural scanner, not a parser
# ------------------------------------------------------------------------------------------

_CPP_LEX = re.compile(r"""/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|^[ \t]*\#(?:\\\n|[^\n])*""",
                      re.S | re.M)


def strip_cpp(text: str) -> str:
    """Comments and preprocessor lines blanked, string contents kept (they are literals we read);
    same length and line breaks as the input."""
    def blank(m: re.Match[str]) -> str:
        t = m.group()
        if t[0] in "\"'":
            return t
        return re.sub(r"[^\n]", " ", t)
    return _CPP_LEX.sub(blank, text)


def mask_strings(text: str) -> str:
    """String contents replaced by spaces, so brackets inside strings do not count."""
    return re.sub(r'"(?:\\.|[^"\\\n])*"', lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)


def match_close(masked: str, i: int) -> int:
    """Index of the bracket closing the one at masked[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[masked[i]]]
    j = i + 1
    while j < len(masked):
        c = masked[j]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if c != stack[-1]:
                return -1
            stack.pop()
            if not stack:
                return j
        j += 1
    return -1


@dataclass
class CppParam:
    name: str
    type: str


@dataclass
class CppFunc:
    file: str
    name: str
    params: list[CppParam]
    body_start: int       # offset of the body's "{"
    body_end: int         # offset of its "}"
    static: bool
    namespace: str


_FUNC_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\($")
_KEYWORDS = {"if", "for", "while", "switch", "return", "catch", "sizeof", "decltype", "static_assert"}


def find_functions(file: str, text: str, masked: str) -> list[CppFunc]:
    """Function definitions at namespace level."""
    funcs = []
    ns_stack: list[str] = []
    i = 0
    n = len(masked)
    brace_kind: list[str] = []
    while i < n:
        c = masked[i]
        if c == "{":
            before = masked[max(0, i - 300):i]
            m = re.search(r"namespace\s*([A-Za-z_][\w:]*)?\s*$", before)
            if m or re.search(r'extern\s*"[^"]*"\s*$', before):
                brace_kind.append("ns")
                ns_stack.append(m.group(1) or "" if m else "")
                i += 1
                continue
            # a function body: ") [const] [noexcept] [override] {"
            m2 = re.search(r"\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?$", before)
            end = match_close(masked, i)
            if end < 0:
                break
            if m2 and all(k == "ns" for k in brace_kind):
                close = i - len(before) + m2.start()
                # find the matching "("
                depth, j = 0, close
                while j >= 0:
                    if masked[j] == ")":
                        depth += 1
                    elif masked[j] == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    j -= 1
                head = masked[max(0, j - 200):j + 1]
                hm = _FUNC_HEAD.search(head)
                if hm and hm.group(1) not in _KEYWORDS:
                    stmt_start = max(masked.rfind(";", 0, j), masked.rfind("}", 0, j), masked.rfind("{", 0, j)) + 1
                    decl = masked[stmt_start:j]
                    params = parse_cpp_params(text[j + 1:close])
                    funcs.append(CppFunc(file, hm.group(1), params, i, end,
                                         bool(re.search(r"\bstatic\b", decl)), "::".join(ns_stack)))
            i = end + 1
            continue
        if c == "}":
            if brace_kind:
                brace_kind.pop()
                ns_stack.pop()
        i += 1
    return funcs


def parse_cpp_params(text: str) -> list[CppParam]:
    out = []
    for piece in _split_top(mask_strings(text)):
        piece = piece.split("=")[0].strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\[\s*\])?$", piece)
        if not m:
            continue
        out.append(CppParam(m.group(1), piece[:m.start()].strip()))
    return out


@dataclass
class Site:
    """One aclnn call, as reached from an aten function."""
    aclnn: str
    args: list[Val]
    conds: list[tuple[str, bool, dict[str, Val]]]    # (condition, taken, env at the test)
    in_loop: bool
    evidence: str
    entry: CppFunc
    macro: str = "EXEC_NPU_CMD"


_LITERAL_NUM = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?[fFlLuU]*")
_RESULT_ALLOC = re.compile(r"(?:^|::|\b)(apply_tensor\w*|empty\w*|apply_tensor_without_format|empty_like|"
                           r"empty_with_format|unsafe_empty_workspace)\s*\(")


class Evaluator:
    """Follows an aten function's body (and the helpers it calls) in order, giving each aclnn call
    its arguments' symbolic values."""

    def __init__(self, text: str, file: str, helpers: dict[str, list[CppFunc]],
                 global_helpers: dict[str, list[CppFunc]], texts: dict[str, tuple[str, str]]) -> None:
        self.file = file
        self.helpers = helpers
        self.global_helpers = global_helpers
        self.texts = texts
        self.sites: list[Site] = []
        self.counter = 0
        self.entry: Optional[CppFunc] = None
        self.result_index: dict[str, int] = {}

    def run(self, func: CppFunc, schema_names: list[str]) -> tuple[list[Site], list[Val]]:
        """schema_names: the aten argument each C++ parameter is, position by position (op-plugin
        names out arguments freely: ``result`` for ``out``)."""
        self.entry = func
        env = {p.name: Val("param", n) for p, n in zip(func.params, schema_names)}
        returns: list[Val] = []
        self.body(func, env, [], False, 0, returns)
        return self.sites, returns

    # -- statements ---------------------------------------------------------------------------
    def body(self, func: CppFunc, env: dict[str, Val], conds: list[Any], loop: bool, depth: int,
             returns: list[Val]) -> None:
        text, masked = self.texts[func.file]
        self.block(text, masked, func.body_start + 1, func.body_end, func, env, conds, loop, depth, returns)

    def block(self, text: str, masked: str, start: int, end: int, func: CppFunc, env: dict[str, Val],
              conds: list[Any], loop: bool, depth: int, returns: list[Val]) -> None:
        conds = list(conds)
        i = start
        while i < end:
            while i < end and masked[i] in " \t\n\r;":
                i += 1
            if i >= end:
                break
            i, always_returns, cond_info = self.statement(text, masked, i, end, func, env, conds, loop, depth, returns)
            if cond_info is not None and always_returns:
                # an if without else that returns: the rest runs only when its condition is false
                conds.append((cond_info[0], False, dict(env)))

    def statement(self, text: str, masked: str, i: int, end: int, func: CppFunc, env: dict[str, Val],
                  conds: list[Any], loop: bool, depth: int, returns: list[Val]) -> tuple[int, bool, Any]:
        m = re.match(r"(if|for|while|switch|else|do|try)\b", masked[i:end])
        if masked[i] == "{":
            close = match_close(masked, i)
            inner = dict(env)
            r: list[Val] = []
            self.block(text, masked, i + 1, close, func, inner, conds, loop, depth, returns)
            self._merge(env, inner)
            return close + 1, self._block_returns(masked, i + 1, close), None
        if m and m.group(1) == "if":
            p = masked.index("(", i)
            q = match_close(masked, p)
            cond = " ".join(text[p + 1:q].split())
            j = q + 1
            env_then = dict(env)
            j2, ret_then, _ = self.statement(text, masked, self._skip_ws(masked, j), end, func, env_then,
                                             conds + [(cond, True, dict(env))], loop, depth, returns)
            k = self._skip_ws(masked, j2)
            if re.match(r"else\b", masked[k:end]):
                env_else = dict(env)
                k2, ret_else, _ = self.statement(text, masked, self._skip_ws(masked, k + 4), end, func, env_else,
                                                 conds + [(cond, False, dict(env))], loop, depth, returns)
                self._merge(env, env_then, env_else)
                return k2, ret_then and ret_else, None
            self._merge(env, env_then)
            return j2, ret_then, (cond, ret_then)
        if m and m.group(1) in ("for", "while", "switch"):
            p = masked.index("(", i)
            q = match_close(masked, p)
            inner = dict(env)
            j, _, _ = self.statement(text, masked, self._skip_ws(masked, q + 1), end, func, inner,
                                     conds + ([("<switch " + text[p + 1:q] + ">", True, dict(env))]
                                              if m.group(1) == "switch" else []),
                                     loop or m.group(1) != "switch", depth, returns)
            self._merge(env, inner)
            return j, False, None
        if m and m.group(1) in ("do", "try"):
            j, _, _ = self.statement(text, masked, self._skip_ws(masked, i + 2 + (m.group(1) == "try")), end, func,
                                     env, conds, loop or m.group(1) == "do", depth, returns)
            k = self._skip_ws(masked, j)
            mm = re.match(r"(while\s*\(|catch\s*\()", masked[k:end])
            while mm:
                p = masked.index("(", k)
                q = match_close(masked, p)
                k = self._skip_ws(masked, q + 1)
                if mm.group(1).startswith("catch"):
                    k, _, _ = self.statement(text, masked, k, end, func, dict(env), conds, loop, depth, returns)
                    k = self._skip_ws(masked, k)
                    mm = re.match(r"catch\s*\(", masked[k:end])
                else:
                    mm = None
            return k, False, None
        # a plain statement, up to ";" at depth 0
        j = i
        while j < end:
            c = masked[j]
            if c in "([{":
                j = match_close(masked, j)
                if j < 0:
                    return end, False, None
            elif c == ";":
                break
            j += 1
        stmt = text[i:j]
        mstmt = masked[i:j]
        is_return = self.simple(stmt, mstmt, i, func, env, conds, loop, depth, returns)
        return j + 1, is_return, None

    @staticmethod
    def _skip_ws(masked: str, i: int) -> int:
        while i < len(masked) and masked[i] in " \t\r\n":
            i += 1
        return i

    @staticmethod
    def _block_returns(masked: str, start: int, close: int) -> bool:
        body = masked[start:close].rstrip()
        stmts = [s for s in re.split(r"[;}]", body) if s.strip()]
        return bool(stmts) and (stmts[-1].strip().startswith(("return", "throw", "TORCH_CHECK(false"))
                                or stmts[-1].strip().startswith("AT_ERROR"))

    @staticmethod
    def _merge(env: dict[str, Val], *branches: dict[str, Val]) -> None:
        for name in list(env):
            vals = {b.get(name, env[name]) for b in branches}
            if len(branches) == 1:
                vals.add(env[name])
            if len(vals) == 1:
                # every path leaves the same value (both arms of an if/else assigned it alike)
                env[name] = vals.pop()
            else:
                env[name] = Val("computed", expr=f"<{name} after a branch>", refs=_refs(vals), via=_via(vals))

    # -- one simple statement -----------------------------------------------------------------------
    def simple(self, stmt: str, mstmt: str, offset: int, func: CppFunc, env: dict[str, Val], conds: list[Any],
               loop: bool, depth: int, returns: list[Val]) -> bool:
        s = stmt.strip()
        ms = mstmt.strip()
        lead = len(stmt) - len(stmt.lstrip())
        if ms.startswith("return"):
            expr = s[6:].strip()
            tm = re.fullmatch(r"(?:std::)?(?:tie|make_tuple|forward_as_tuple|tuple\s*<.*?>)\s*\((.*)\)", expr, re.S)
            if tm and depth == 0:
                for k, part in enumerate(_split_top(tm.group(1))):
                    part = re.sub(r"^std::move\s*\((.*)\)$", r"\1", part)
                    pv = self.eval(part, func, env, conds, loop, depth, None)
                    if pv.kind == "result":
                        self.result_index.setdefault(pv.name, k)
                return True
            v = self.eval(expr, func, env, conds, loop, depth, offset + lead + 6) if expr else None
            if v is not None:
                returns.append(v)
                if depth == 0 and v.kind == "result":
                    self.result_index.setdefault(v.name, 0)
            return True
        if ms.startswith(("throw", "AT_ERROR")) or re.match(r"TORCH_CHECK\s*\(\s*false", ms):
            return True
        # EXEC calls anywhere in the statement
        for m in re.finditer(r"\b(EXEC_[A-Z_]+)\s*\(", ms):
            macro = m.group(1)
            if macro not in EXEC_MACROS:
                continue
            p = m.end() - 1
            q = match_close(ms, p)
            parts = _split_top(s[p + 1:q])
            if not parts:
                continue
            aclnn = parts[0]
            args = parts[1 + EXEC_MACROS[macro]:]
            text_all, _ = self.texts[func.file]
            line = text_all.count("\n", 0, offset + lead + m.start()) + 1
            vals = [self.eval(a, func, env, conds, loop, depth, None) for a in args]
            self.sites.append(Site(aclnn, vals, list(conds), loop, f"{func.file}:{line}", self.entry,  # type: ignore[arg-type]
                                   macro))
        if re.search(r"\bEXEC_", ms):
            return False
        # declarations and assignments
        m = re.match(r"(?:(?:const|static|constexpr)\s+)*([A-Za-z_][\w:<>,\s\*&]*?[\s\*&>])([A-Za-z_]\w*)\s*"
                     r"(=|\(|\{)(.*)$", s, re.S)
        am = re.match(r"([A-Za-z_]\w*)\s*=(?!=)(.*)$", s, re.S)
        if am and am.group(1) in env and not re.match(r"(auto|const)\b", s):
            name = am.group(1)
            new = self.eval(am.group(2), func, env, conds, loop, depth, None)
            env[name] = Val("computed", expr=am.group(2).strip(), refs=_refs([env[name]]) if env[name].kind == "param"
                            else (), via=_via([env[name], new]))
            return False
        if m and not re.match(r"(return|delete|new|throw)\b", s):
            typ, name, op, rest = m.group(1).strip(), m.group(2), m.group(3), m.group(4).strip()
            if op in "({":
                rest = rest[:-1] if rest.endswith(")" if op == "(" else "}") else rest
            v = self.eval(rest, func, env, conds, loop, depth, None)
            if op in "({" and len(_split_top(rest)) != 1:
                v = Val("computed", expr=s, refs=_refs([v]), via=_via([v]))
            if op in "({" and re.search(r"\b(IntArrayRef|SmallVector|vector|ArrayRef|Scalar)\b", typ):
                # at::IntArrayRef dims(dim) wraps one int into a list: a new value
                v = Val("computed", expr=s, refs=_refs([v]), via=_via([v]))
            env[name] = v
            return False
        m2 = re.match(r"([A-Za-z_][\w:<>,\*&\s]*?[\s\*&>])([A-Za-z_]\w*)$", s)
        if m2 and not re.match(r"(return|break|continue)\b", s):
            env[m2.group(2)] = Val("computed", expr=s)
            return False
        self.eval(s, func, env, conds, loop, depth, None)
        # a mutating call on a local (out.resize_, x.copy_) does not change what it is
        return False

    # -- expressions -----------------------------------------------------------------------------
    def eval(self, expr: str, func: CppFunc, env: dict[str, Val], conds: list[Any], loop: bool, depth: int,
             _offset: Optional[int]) -> Val:
        e = expr.strip()
        while e.startswith("(") and match_close(mask_strings(e), 0) == len(e) - 1:
            e = e[1:-1].strip()
        # helper calls inside the expression: follow them (their aclnn calls count)
        value_of_helper = self.follow_helpers(e, func, env, conds, loop, depth)
        if value_of_helper is not None:
            return value_of_helper
        if re.fullmatch(r"[A-Za-z_]\w*", e):
            if e in env:
                return env[e]
            if e in ("true", "false"):
                return Val("literal", value=e == "true")
            if e in ("nullptr", "NULL"):
                return Val("literal", value=None)
            return Val("computed", expr=e)
        if _LITERAL_NUM.fullmatch(e):
            t = e.rstrip("fFlLuU")
            return Val("literal", value=float(t) if re.search(r"[.eE]", t) else int(t))
        if re.fullmatch(r'"(?:\\.|[^"\\])*"', e):
            return Val("literal", value=bytes(e[1:-1], "utf-8").decode("unicode_escape"))
        if e in ("c10::nullopt", "std::nullopt", "at::Tensor()", "at::Tensor{}", "c10::optional<at::Tensor>()"):
            return Val("literal", value=None)
        m = re.fullmatch(r"(?:c10::|std::)?value_or_else\s*\(\s*([A-Za-z_]\w*)\s*,.*\)", e, re.S)
        if m and m.group(1) in env:
            return env[m.group(1)]
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*\.\s*(?:value_or\s*\(.*\)|value\s*\(\s*\)|data\s*\(\s*\)|c_str\s*\(\s*\))", e, re.S)
        if m and m.group(1) in env:
            return env[m.group(1)]
        m = re.fullmatch(r"const_cast\s*<\s*char\s*\*\s*>\s*\(\s*([A-Za-z_]\w*)\s*\.\s*(?:data|c_str)\s*\(\s*\)\s*\)", e)
        if m and m.group(1) in env:
            return env[m.group(1)]
        # value-preserving forms of one parameter that still are not the parameter itself: the
        # relaxed tier may bind them by the header's name
        m = re.fullmatch(r"(?:at::)?maybe_wrap_dim\s*\(\s*([A-Za-z_]\w*)\s*,.*\)", e, re.S)
        if m and env.get(m.group(1), Val("computed")).kind == "param":
            return Val("computed", expr=f"wrapped {m.group(1)}", refs=(env[m.group(1)].name,))
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*\.\s*has_value\s*\(\s*\)\s*\?\s*\1\s*\.\s*value\s*\(\s*\)\s*:.*", e, re.S)
        if m and env.get(m.group(1), Val("computed")).kind == "param":
            return Val("computed", expr=f"{m.group(1)} or what the out tensor implies",
                       refs=(env[m.group(1)].name,))
        if _RESULT_ALLOC.search(mask_strings(e)) and not re.search(r"\?", e):
            self.counter += 1
            return Val("result", name=f"r{self.counter}", expr=e)
        ids = set(re.findall(r"\b([A-Za-z_]\w*)\b", mask_strings(e)))
        read = [env[i] for i in ids if i in env]
        return Val("computed", expr=e, refs=_refs(read), via=_via(read))

    def follow_helpers(self, e: str, func: CppFunc, env: dict[str, Val], conds: list[Any], loop: bool,
                       depth: int) -> Optional[Val]:
        me = mask_strings(e)
        result: Optional[Val] = None
        whole = False
        for m in re.finditer(r"(?<![\w.>:])(?:op_api::)?([A-Za-z_]\w*)\s*\(", me):
            name = m.group(1)
            cands = self.helpers.get(name) or self.global_helpers.get(name) or []
            if not cands or depth >= 3:
                continue
            p = m.end() - 1
            q = match_close(me, p)
            if q < 0:
                continue
            args = _split_top(e[p + 1:q])
            cands = [c for c in cands if len(c.params) == len(args)]
            if len(cands) != 1:
                continue
            h = cands[0]
            if h is func:
                continue
            henv = {hp.name: self.eval(a, func, env, conds, loop, depth + 1, None) for hp, a in zip(h.params, args)}
            hreturns: list[Val] = []
            self.body(h, henv, conds, loop, depth + 1, hreturns)
            if m.start() == 0 and q == len(me) - 1:
                whole = True
                # a helper returning its parameter or a tensor it allocated passes it on
                kinds = {(v.kind, v.name) for v in hreturns}
                params = {v.name for v in hreturns if v.kind == "param"}
                if len(params) == 1 and all(v.kind == "param" or "copy_scalar_to_device" in v.expr for v in hreturns) \
                        and len(kinds) > 1:
                    # the parameter, or (a CPU 0-d tensor) its value copied to the device
                    p = next(iter(params))
                    return Val("computed", expr=f"{p} on the device", refs=(p,))
                result = hreturns[0] if len(kinds) == 1 and hreturns[0].kind in ("param", "result") else \
                    Val("computed", expr=e, refs=_refs(hreturns), via=_via(hreturns))
        return result if whole else None


# ------------------------------------------------------------------------------------------
# Calls from the yaml's gen_opapi entries
# ------------------------------------------------------------------------------------------

@dataclass
class YamlCall:
    schema: Schema
    aclnn: str
    args: list[Val]
    evidence: list[str]


def yaml_calls(schemas: Schemas) -> tuple[list[YamlCall], Counter[str]]:
    dropped: Counter[str] = Counter()
    by_opname = {s.text.split("(")[0]: (s, e) for s, e in schemas.entries if s.section in ("official", "custom")}
    calls = []
    for s, e in schemas.entries:
        g = e.get("gen_opapi")
        if s.section not in ("official", "custom") or not isinstance(g, dict) or not e.get("op_api"):
            continue
        ev = [f"{YAML_PATH}:{schemas.exec_lines.get(s.line, s.line)}"]
        inherit = g.get("structured_inherit")
        self_as_out = False
        if inherit is not None:
            base = by_opname.get(inherit)
            if base is None:
                dropped["structured_inherit names no entry"] += 1
                continue
            if s.kind == "inplace":
                self_as_out = True   # delegates to the out function with self as out
            g = base[1].get("gen_opapi") or {}
            ev.append(f"{YAML_PATH}:{schemas.exec_lines.get(base[0].line, base[0].line)}")
            src_schema = base[0] if self_as_out else s
        else:
            src_schema = s
        exec_text = g.get("exec")
        if not exec_text:
            dropped["gen_opapi without exec"] += 1
            continue
        parts = [p.strip() for p in str(exec_text).split(",")]
        aclnn, names = parts[0], parts[1:]
        new_params = {str(k): str(v) for k, v in (g.get("new_params") or {}).items()}
        if not names:
            names = [a.name for a in src_schema.native_order()]
            if src_schema.kind == "functional":
                res = [k for k in g if k not in ("exec", "new_params", "structured_inherit", "cpu_scalar_h2d",
                                                 "cpu_scalar_op", "integral_identity_tensor")]
                names += res
        # results of a functional entry: the gen_opapi keys that are not options, in order
        result_names = [k for k in g if k not in ("exec", "new_params", "structured_inherit", "cpu_scalar_h2d",
                                                  "cpu_scalar_op", "integral_identity_tensor")]
        arg_names = {a.name for a in src_schema.args}
        out_names = [a.name for a in src_schema.out_args]
        vals = []
        for n in names:
            if n in new_params:
                expr = new_params[n]
                v = _yaml_expr(expr, arg_names)
            elif self_as_out and n in out_names:
                v = Val("param", "self")
            elif n in arg_names:
                v = Val("param", n)
            elif src_schema.kind == "functional" and n in result_names:
                v = Val("result", name=f"ret{result_names.index(n)}")
            else:
                v = _yaml_expr(n, arg_names)
            vals.append(v)
        calls.append(YamlCall(s if not self_as_out else s, aclnn, vals, ev))
    return calls, dropped


def _yaml_expr(expr: str, arg_names: set[str]) -> Val:
    e = expr.strip()
    if e in ("true", "false"):
        return Val("literal", value=e == "true")
    if _LITERAL_NUM.fullmatch(e):
        t = e.rstrip("fFlLuU")
        return Val("literal", value=float(t) if re.search(r"[.eE]", t) else int(t))
    if re.fullmatch(r'"(?:\\.|[^"\\])*"', e):
        return Val("literal", value=e[1:-1])
    if e in ("nullptr", "c10::nullopt", "at::Tensor()"):
        return Val("literal", value=None)
    ids = set(re.findall(r"\b([A-Za-z_]\w*)\b", e))
    return Val("computed", expr=e, refs=tuple(sorted(ids & arg_names)))


# ------------------------------------------------------------------------------------------
# Rows
# ------------------------------------------------------------------------------------------

@dataclass
class HeaderParam:
    name: str
    c_type: str
    kind: str
    is_output: bool


def header_params(proto: Any) -> Optional[list[HeaderParam]]:
    if proto is None or proto.unsupported is not None:
        return None
    return [HeaderParam(p.name, p.c_type, p.kind, p.is_output) for p in proto.params]


def _norm(name: str) -> str:
    for suffix in ("Optional", "Out", "Ref"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[:-len(suffix)]
    if name in ("out", "ref"):
        return name
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _loose(name: str) -> str:
    return _norm(name).replace("_", "")


# Expression shapes that change a value: such a computed argument is never bound by name.
_VALUE_CHANGING = re.compile(r"(?<![-<>=!&|])[-+*/%](?![->=])|[\w)\]]\s*\[|\bstd::(?:abs|max|min)\b|\bsize\s*\(|\.sum\b|\bnegative\b|"
                             r"\bneg\b|\breciprocal\b|\.t\s*\(|transpose|permute|view|reshape|\bunsqueeze\b|\bsqueeze\b|"
                             r"\bsqrt\b|\bpow\b|\bexp\b|\blog\b|\bstatic_cast\s*<\s*(?:int|bool)")


def keeps_value(v: Val) -> bool:
    """No step from the aten argument to this computed value looks value-changing: not the
    expression passed, nor any local it was derived through (`k = x[0]; ks = {k, k}`)."""
    return not any(_VALUE_CHANGING.search(x) for x in (v.expr, *v.via))


class Builder:
    def __init__(self, schemas: Schemas, headers: Any, newer: Any) -> None:
        self.schemas = schemas
        self.headers = headers
        self.newer = newer
        self.rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.dropped: Counter[str] = Counter()
        self.dropped_ops: dict[str, Counter[str]] = defaultdict(Counter)
        self.details: list[tuple[str, str, str, str]] = []
        self.current = ""

    def drop(self, aclnn: str, reason: str, detail: str = "") -> None:
        self.dropped[reason] += 1
        self.dropped_ops[aclnn][reason] += 1
        self.details.append((aclnn, reason, detail, self.current))

    def add(self, aclnn: str, schema: Schema, args: list[Val], conds: list[Any], in_loop: bool,
            evidence: list[str], result_of: dict[str, int], macro: str = "EXEC_NPU_CMD") -> None:
        """One call site: aclnn(args) inside the function implementing `schema`."""
        self.current = f"{schema.full} {evidence[0]}"
        if not aclnn.startswith("aclnn"):
            return self.drop(aclnn, "operator name is not a literal aclnn name")
        if schema.section != "official":
            return self.drop(aclnn, "torch_npu custom op (no aten CPU kernel)")
        if in_loop:
            return self.drop(aclnn, "call inside a loop")
        if macro == "EXEC_NPU_CMD_SYNC":
            # the out tensor is allocated at its largest size and cut to the shape the operator
            # reports (aclGetViewShape): aten's data-dependent result has another shape
            return self.drop(aclnn, "output shape read back after a synchronous call")
        if aclnn in SEMANTIC_GAPS:
            return self.drop(aclnn, "known semantic gap: " + SEMANTIC_GAPS[aclnn])
        sib = self.schemas.functional(schema)
        if sib is None:
            return self.drop(aclnn, "no functional sibling of an out=/in-place schema")
        target, rename = sib
        # the installed torch's schema of that overload is what the runner calls: op-plugin's yaml
        # serves several torch versions and may spell arguments otherwise (tensors -> self)
        installed = self.schemas.installed(target.full)
        if installed is None:
            return self.drop(aclnn, "aten overload not in the torch the generator ran with")
        if len(installed.args) < len(target.args) or \
                any(x.required for x in installed.args[len(target.args):]) or \
                any(_type_key(x.type) != _type_key(y.type) for x, y in zip(target.args, installed.args)):
            return self.drop(aclnn, "aten overload's arguments differ in the torch the generator ran with")
        to_installed = {x.name: y.name for x, y in zip(target.args, installed.args)}
        rename = {k: to_installed[v] for k, v in rename.items()}
        target = installed
        in81 = self.headers.get(aclnn)
        hparams = header_params(in81)
        if in81 is not None and hparams is None:
            return self.drop(aclnn, "8.1.RC1 header not callable by the binding")
        if hparams is None and self.newer is not None:
            hparams = header_params(self.newer.get(aclnn))
        from_header = hparams is not None
        if hparams is not None and len(hparams) != len(args):
            return self.drop(aclnn, "argument count differs from the header")
        if schema.kind == "inplace" and any(a.mutable for a in schema.args[1:]):
            return self.drop(aclnn, "in-place schema that also writes other arguments")
        out_args = [a.name for a in schema.out_args]
        tgt_args = {a.name: a for a in target.args}
        # without a header, the in-place self passed twice is read by the first and written by the last
        self_at = [i for i, v in enumerate(args) if schema.kind == "inplace" and v.kind == "param"
                   and v.name == schema.args[0].name]
        read_only_self = set(self_at[:-1]) if hparams is None and len(self_at) > 1 else set()
        bindings: list[dict[str, Any]] = []
        forwarded: set[str] = set()
        tier = "strict"
        used_results: set[int] = set()
        for i, v in enumerate(args):
            hp = hparams[i] if hparams is not None else None
            b: dict[str, Any] = {}
            kind = hp.kind if hp else None
            if v.kind == "param" and v.name in out_args:
                v = Val("result", name="out:" + v.name)
            if v.kind == "param":
                if v.name not in rename:
                    return self.drop(aclnn, "argument is no argument of the functional schema")
                a = tgt_args[rename[v.name]]
                v = Val("param", a.name)
                if schema.kind == "inplace" and a.name == target.args[0].name and i not in read_only_self \
                        and (hp is None or hp.is_output):
                    b = {"bind": "arg+result", "arg": v.name, "result": 0}
                    rk = return_kinds(target.returns[0]) if target.returns else frozenset()
                    if kind is None:
                        kind = next(iter(sorted(rk)), None)
                        if kind is None or kind not in kinds_for_type(a.type):
                            return self.drop(aclnn, "aten type has no header kind")
                    elif kind not in rk:
                        return self.drop(aclnn, "header kind differs from the aten type")
                    used_results.add(0)
                else:
                    if hp is not None and hp.is_output:
                        return self.drop(aclnn, "an aten input is passed where the header has an output")
                    b = {"bind": "arg", "arg": v.name}
                    if kind is None:
                        kind = kind_for_type(a.type)
                        if kind is None:
                            return self.drop(aclnn, "aten type has no header kind")
                    elif kind not in kinds_for_type(a.type):
                        return self.drop(aclnn, "header kind differs from the aten type")
                forwarded.add(v.name)
            elif v.kind == "result":
                if v.name.startswith("out:"):
                    idx = out_args.index(v.name[4:])
                elif v.name in result_of:
                    idx = result_of[v.name]
                else:
                    return self.drop(aclnn, "output tensor is not a returned result")
                if idx >= len(target.returns):
                    return self.drop(aclnn, "result index beyond the aten returns")
                rk = return_kinds(target.returns[idx])
                if kind is None:
                    kind = next(iter(sorted(rk)), None)
                    if kind is None:
                        return self.drop(aclnn, "aten return type has no header kind")
                elif kind not in rk:
                    return self.drop(aclnn, "header kind differs from the aten return type")
                if hp is not None and not hp.is_output:
                    return self.drop(aclnn, "a result is passed where the header has an input")
                if idx in used_results:
                    return self.drop(aclnn, "one result written by two parameters")
                used_results.add(idx)
                b = {"bind": "result", "result": idx}
            elif v.kind == "literal":
                if hp is not None and hp.is_output:
                    return self.drop(aclnn, "a literal is passed where the header has an output")
                lit = v.value
                if kind is None:
                    kind = _literal_kind(lit)
                    if kind is None:
                        return self.drop(aclnn, "literal whose kind the call does not show")
                elif not _literal_fits(lit, kind):
                    return self.drop(aclnn, "literal does not fit the header kind")
                b = {"bind": "literal", "value": lit}
            else:
                # computed: relaxed binding by the header's name, or an ignored knob
                if hp is None:
                    return self.drop(aclnn, "computed argument (no header to bind it by name)")
                if hp.name in IGNORED_KNOBS:
                    b = {"bind": "ignored", "reason": IGNORED_KNOBS[hp.name]}
                    tier = "relaxed"
                elif hp.is_output:
                    return self.drop(aclnn, "computed output tensor", hp.name)
                else:
                    target_arg = None
                    for cand in target.args:
                        if cand.name in out_args:
                            continue
                        if _loose(cand.name) == _loose(hp.name):
                            target_arg = cand
                    if target_arg is None or tuple(sorted({rename.get(r, r) for r in v.refs})) != (target_arg.name,):
                        return self.drop(aclnn, "computed argument", hp.name)
                    if not keeps_value(v):
                        return self.drop(aclnn, "computed argument (value-changing expression)", hp.name)
                    if hp.kind not in kinds_for_type(target_arg.type):
                        return self.drop(aclnn, "computed argument (kind differs from the aten type)", hp.name)
                    b = {"bind": "arg", "arg": target_arg.name}
                    forwarded.add(target_arg.name)
                    tier = "relaxed"
            if hp is not None:
                b = {"name": hp.name, "c_type": hp.c_type, "kind": hp.kind, "is_output": hp.is_output, **b}
            else:
                is_out = b["bind"] in ("result", "arg+result")
                nm = b.get("arg") or (target_args_name(target, b["result"]) if b["bind"] == "result" else f"arg{i}")
                b = {"name": nm, "c_type": c_type_for_kind(kind, is_out), "kind": kind, "is_output": is_out, **b}
            bindings.append(b)
        # the in-place self passed both as the input and as the out (an in-place function that
        # delegates to its out= form): the output is a plain result, as in the functional call
        plain = {b["arg"] for b in bindings if b["bind"] == "arg"}
        for b in bindings:
            if b["bind"] == "arg+result" and b["arg"] in plain:
                del b["arg"]
                b["bind"] = "result"
        inputs = [b["arg"] for b in bindings if b["bind"] in ("arg", "arg+result")]
        if len(inputs) != len(set(inputs)):
            # aclnnEye(n, n, out) for eye(n): the row would hold only for equal values
            return self.drop(aclnn, "two parameters bound to one aten argument")
        if not any(b["bind"] in ("result", "arg+result") for b in bindings):
            return self.drop(aclnn, "no output bound to a result")
        if sorted(used_results) != list(range(len(used_results))):
            return self.drop(aclnn, "results bound are not the first ones")
        # fixed: the arguments not forwarded
        fixed: dict[str, Any] = {}
        cond_values, bad_cond = self.condition_values(conds, forwarded, target, rename)
        if bad_cond:
            return self.drop(aclnn, "selected by a condition on a non-forwarded argument")
        for a in target.args:
            if a.name in forwarded:
                continue
            if a.name in cond_values:
                fixed[a.name] = cond_values[a.name]
                continue
            ok, val = schema_default(a)
            if ok:
                fixed[a.name] = val
            elif a.required and a.name in REQUIRED_DEFAULTS:
                fixed[a.name] = REQUIRED_DEFAULTS[a.name]
            elif a.required:
                return self.drop(aclnn, "required aten argument not forwarded")
        # the bound arguments and the fixed ones must not conflict with the literal bindings
        key = (aclnn, target.full, json.dumps(bindings, sort_keys=True), json.dumps(fixed, sort_keys=True))
        row = self.rows.get(key)
        if row is None:
            row = {"aclnn": aclnn, "aten": target.full, "params": bindings, "fixed": fixed, "tier": tier,
                   "evidence": [], "in_cann_8_1_rc1": in81 is not None, "header": from_header}
            self.rows[key] = row
        if tier == "strict":
            row["tier"] = "strict"
        for e in evidence:
            if e not in row["evidence"]:
                row["evidence"].append(e)
        return None

    def condition_values(self, conds: list[Any], forwarded: set[str], target: Schema,
                         rename: dict[str, str]) -> tuple[dict[str, Any], bool]:
        """Values of non-forwarded aten arguments that the conditions around the call select;
        True when a condition reads such an argument in a way this cannot express."""
        values: dict[str, Any] = {}
        names = {a.name for a in target.args}
        for cond, taken, env in conds:
            params = {k: v for k, v in env.items()}
            ids = set(re.findall(r"\b([A-Za-z_]\w*)\b", mask_strings(cond)))
            reads = set()
            for i in ids:
                v = params.get(i)
                if v is None:
                    continue
                if v.kind == "param":
                    reads.add((i, rename.get(v.name, v.name)))
                elif v.kind == "computed":
                    reads.update((i, rename.get(r, r)) for r in v.refs)
            hidden = {(i, p) for i, p in reads if p not in forwarded and p in names}
            if not hidden:
                continue
            if len(hidden) != 1:
                return values, True
            (local, p), = hidden
            if params.get(local, Val("computed")).kind != "param":
                return values, True
            c = cond.strip()
            m = re.fullmatch(rf"{local}\s*(==|!=)\s*(\"[^\"]*\"|-?\d+|true|false)", c) or \
                re.fullmatch(rf"(\"[^\"]*\"|-?\d+|true|false)\s*(==|!=)\s*{local}", c)
            if m:
                op, lit = (m.group(1), m.group(2)) if m.group(1) in ("==", "!=") else (m.group(2), m.group(1))
                litv = _yaml_expr(lit, set()).value
                if (op == "==") == taken:
                    values[p] = litv
                    continue
                return values, True
            m = re.fullmatch(rf"(!?)\s*{local}\s*\.\s*has_value\s*\(\s*\)", c)
            if m and ((m.group(1) == "!") == taken):
                values[p] = None
                continue
            m = re.fullmatch(rf"(!?)\s*{local}", c)
            if m:
                values[p] = (m.group(1) != "!") == taken
                continue
            return values, True
        return values, False


def target_args_name(target: Schema, idx: int) -> str:
    return "out" if idx == 0 else f"out{idx}"


def _literal_kind(v: Any) -> Optional[str]:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64_t"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    return None


def _literal_fits(v: Any, kind: str) -> bool:
    if v is None:
        return kind in ("aclTensor", "aclTensorList", "aclScalar", "aclIntArray", "aclFloatArray",
                        "aclBoolArray", "aclScalarList", "string")
    if isinstance(v, bool):
        return kind == "bool"
    if isinstance(v, int):
        return kind in ("int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
                        "float", "double", "aclDataType") or (kind == "bool" and v in (0, 1))
    if isinstance(v, float):
        return kind in ("float", "double")
    if isinstance(v, str):
        return kind == "string"
    return False


# ------------------------------------------------------------------------------------------
# C++ side: entry functions matched to schemas
# ------------------------------------------------------------------------------------------

_CPP_BASE = (("Dimname", "Dimname"), ("SymInt", "int"), ("IntArrayRef", "int"), ("int64_t", "int"),
             ("double", "float"), ("Scalar", "Scalar"), ("string", "str"), ("bool", "bool"))
_SCHEMA_BASE = {"Dimname": "Dimname", "int": "int", "SymInt": "int", "float": "float", "Scalar": "Scalar",
                "str": "str", "bool": "bool", "ScalarType": "ScalarType"}


def _base_of_cpp(t: str) -> Optional[str]:
    """The value category of a non-tensor C++ parameter type, list and optional ignored; None
    when not known. ScalarType is read before Scalar, which it contains."""
    if "ScalarType" in t:
        return "ScalarType"
    return next((base for word, base in _CPP_BASE if word in t), None)


def _cpp_type_fits(cpp_type: str, schema_type: str) -> bool:
    """False only when both sides are known value types of different categories: int64_t dim is
    not Dimname dim, which is all that tells gather.default's C++ function from gather.dimname's."""
    if "Tensor" in cpp_type or "Tensor" in schema_type:
        return True
    mine = _base_of_cpp(cpp_type)
    theirs = _SCHEMA_BASE.get(re.sub(r"\[\d*\]|\?", "", schema_type))
    return mine is None or theirs is None or mine == theirs


def match_schema(func: CppFunc, schemas: Schemas) -> Optional[Schema]:
    name = func.name[:-len("_symint")] if func.name.endswith("_symint") else func.name
    cands = schemas.by_cpp.get(name, [])
    if not cands:
        return None
    pnames = [p.name for p in func.params]
    def tensorish(t: str) -> bool:
        return "Tensor" in t
    by_names = [c for c in cands if len(c.args) == len(pnames) and
                all(a.name == n for a, n in zip(c.native_order(), pnames) if a not in c.out_args)]
    uniq = {c.text: c for c in by_names}
    if len(uniq) == 1:
        return next(iter(uniq.values()))
    pool = list(uniq.values()) if uniq else [c for c in cands if len(c.args) == len(pnames)]
    by_types = [c for c in pool if all(tensorish(a.type) == tensorish(p.type)
                                       and (("List" in p.type or "[]" in a.type) == ("[]" in a.type and "Tensor" in a.type or "List" in p.type) or not tensorish(a.type))
                                       for a, p in zip(c.native_order(), func.params))]
    by_types = [c for c in by_types if all(_cpp_type_fits(p.type, a.type) for a, p in zip(c.native_order(), func.params))]
    uniq2 = {c.text: c for c in by_types}
    # schemas with the same argument list in different torch versions are one
    fulls = {c.full for c in uniq2.values()}
    if len(fulls) == 1:
        return sorted(uniq2.values(), key=lambda c: c.line)[0]
    return None


def cpp_rows(src: Source, schemas: Schemas, builder: Builder) -> Counter[str]:
    stats: Counter[str] = Counter()
    files = [f for d in CPP_DIRS for f in src.list(d) if f.endswith(".cpp")]
    texts: dict[str, tuple[str, str]] = {}
    funcs_by_file: dict[str, list[CppFunc]] = {}
    for f in files:
        text = strip_cpp(src.read(f))
        masked = mask_strings(text)
        texts[f] = (text, masked)
        funcs_by_file[f] = find_functions(f, text, masked)
    global_helpers: dict[str, list[CppFunc]] = defaultdict(list)
    entries: list[tuple[CppFunc, Schema]] = []
    for f in files:
        for fn in funcs_by_file[f]:
            sch = None if fn.static else match_schema(fn, schemas)
            if sch is not None and fn.namespace.startswith("op_api"):
                entries.append((fn, sch))
            else:
                global_helpers[fn.name].append(fn)
    for fn, sch in entries:
        f = fn.file
        local = defaultdict(list)
        for h in funcs_by_file[f]:
            if h is not fn and not any(h is e for e, _ in entries):
                local[h.name].append(h)
        ev = Evaluator(texts[f][0], f, local, {k: v for k, v in global_helpers.items() if k not in local}, texts)
        sites, returns = ev.run(fn, [a.name for a in sch.native_order()])
        result_of = dict(ev.result_index)
        for s in sites:
            stats["call sites"] += 1
            builder.add(s.aclnn, sch, s.args, s.conds, s.in_loop, [s.evidence], result_of, s.macro)
    return stats


# ------------------------------------------------------------------------------------------
# Hand rows (devtools/hand_rows.py): checked as strictly as derived ones, then merged
# ------------------------------------------------------------------------------------------

def _hand_module(path: Path = HAND_ROWS_PATH) -> Any:
    import importlib.util
    spec = importlib.util.spec_from_file_location("_hand_rows", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses resolve the module's annotations through it
    spec.loader.exec_module(module)
    return module


def load_hand_rows(path: Path = HAND_ROWS_PATH) -> tuple[Any, ...]:
    return tuple(_hand_module(path).HAND_ROWS)


def load_no_reference(path: Path = HAND_ROWS_PATH) -> dict[str, str]:
    """The reviewed reasons of the 8.1.RC1 operators left without any CPU reference."""
    return dict(getattr(_hand_module(path), "NO_REFERENCE", {}))


def _hand_fits(kind: str, aten_type: str) -> bool:
    base = re.sub(r"\[\d*\]", "[]", aten_type.rstrip("?"))
    return kind in kinds_for_type(aten_type) or base in HAND_CONVERSIONS.get(kind, frozenset())


def hand_rows(entries: Iterable[Any], src: Source, schemas: Schemas, headers: Any,
              derived: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each hand entry as a table row, or SystemExit naming the entry and what is wrong: a hand row
    is reviewed once, so any mismatch with the header, the aten schema or the evidence must stop
    the build rather than drop the row quietly."""
    have: dict[str, set[str]] = {}
    for r in derived:  # each derived row's literal values: a hand row may add another code only
        have.setdefault(r["aclnn"], set()).add(_literals(r["params"]))
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for e in entries:
        try:
            out.append(_hand_row(e, src, schemas, headers, have, seen))
        except _HandError as exc:
            problems.append(f"devtools/hand_rows.py {e.aclnn} -> {e.aten}: {exc}")
    if problems:
        raise SystemExit("\n".join(problems))
    return out


class _HandError(Exception):
    pass


def _literals(params: Iterable[Mapping[str, Any]]) -> str:
    return json.dumps(sorted([p["name"], p["value"]] for p in params if p["bind"] == "literal"), sort_keys=True)


def _hand_row(e: Any, src: Source, schemas: Schemas, headers: Any, have: Mapping[str, set[str]],
              seen: set[str]) -> dict[str, Any]:
    if True:
        def fail(why: str) -> None:
            raise _HandError(why)

        # a hand row may only add a mode code the derived rows do not cover (Scatter's reduce 1
        # and 2 beside op-plugin's reduce 0), never restate or replace one
        mine = _literals({"name": k, **v} for k, v in e.bind.items())
        if e.aclnn in have and (mine == _literals([]) or mine in have[e.aclnn]):
            fail("the generator already derives a row for this operator (with these literals); remove the "
                 "hand entry")
        proto = headers.get(e.aclnn)
        hparams = header_params(proto)
        if hparams is None:
            fail("no callable declaration in the CANN 8.1.RC1 headers")
        assert hparams is not None and proto is not None
        if [h.name for h in hparams] != list(e.bind):
            fail(f"bind names {list(e.bind)} differ from the header's {[h.name for h in hparams]}")
        target = schemas.installed(e.aten if "." in e.aten else e.aten + ".default")
        if target is None:
            fail("no such aten overload in the installed torch")
        assert target is not None
        if target.kind != "functional":
            fail("the aten overload must be the functional one")
        args = {a.name: a for a in target.args}
        bindings: list[dict[str, Any]] = []
        bound: set[str] = set()
        results: set[int] = set()
        for h in hparams:
            b = dict(e.bind[h.name])
            kind = b["bind"]
            if kind in ("arg", "arg+result"):
                a = args.get(b["arg"])
                if a is None or b["arg"] in bound:
                    fail(f"{h.name}: {b['arg']!r} is no unbound argument of {target.full}")
                assert a is not None
                bound.add(a.name)
                if not _hand_fits(h.kind, a.type):
                    fail(f"{h.name}: a {h.kind} cannot be passed as aten's {a.type} {a.name}")
            if kind in ("result", "arg+result"):
                idx = b["result"]
                if not h.is_output:
                    fail(f"{h.name} is an input in the header, bound to result {idx}")
                if idx >= len(target.returns) or idx in results or h.kind not in return_kinds(target.returns[idx]):
                    fail(f"{h.name}: result {idx} is not a free {h.kind} result of {target.full}")
                results.add(idx)
            elif h.is_output:
                fail(f"{h.name} is an output in the header; bind it to a result")
            if kind == "literal" and not _literal_fits(b["value"], h.kind) and not (
                    h.kind == "aclScalar" and type(b["value"]) in (int, float)):  # compared by value
                fail(f"{h.name}: literal {b['value']!r} does not fit {h.kind}")
            if kind not in ("arg", "result", "arg+result", "literal", "ignored"):
                fail(f"{h.name}: unknown binding {kind!r}")
            bindings.append({"name": h.name, "c_type": h.c_type, "kind": h.kind, "is_output": h.is_output, **b})
        if sorted(results) != list(range(len(results))) or not results:
            fail("the results bound must be the first ones, and at least one")
        fixed: dict[str, Any] = {}
        for a in target.args:
            if a.name in bound:
                continue
            if a.name in e.fixed:
                fixed[a.name] = e.fixed[a.name]
                continue
            ok, val = schema_default(a)
            if ok:
                fixed[a.name] = val
            elif a.required:
                fail(f"required aten argument {a.name} is neither bound nor fixed")
        for k in e.fixed:
            if k not in args or k in bound:
                fail(f"fixed {k!r} is no unbound argument of {target.full}")
        evidence = []
        for ev in e.evidence:
            if ev == "header":
                evidence.append(f"aclnnop/{Path(proto.header).name}:{proto.line}")
                continue
            path, _, line = ev.rpartition(":")
            lines = src.read(path).splitlines()
            if not line.isdigit() or not 0 < int(line) <= len(lines) or e.aclnn not in lines[int(line) - 1]:
                fail(f"evidence {ev} does not name {e.aclnn} on that line")
            evidence.append(ev)
        key = json.dumps([e.aclnn, bindings], sort_keys=True)
        if key in seen:
            fail("two hand rows with the same bindings")
        seen.add(key)
        return {"aclnn": e.aclnn, "aten": target.full, "params": bindings, "fixed": fixed, "tier": "hand",
                "evidence": evidence, "in_cann_8_1_rc1": True, "header": True}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op-plugin", required=True, type=Path, help="op-plugin git directory or work tree")
    ap.add_argument("--commit", default=PINNED_COMMIT)
    ap.add_argument("--headers", required=True, type=Path, help="CANN 8.1.RC1 aclnnop header directory")
    ap.add_argument("--newer-headers", action="append", type=Path, default=[])
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    table, notice, report = generate(args.op_plugin, args.commit, args.headers, args.newer_headers)
    if args.report:
        print(report, file=sys.stderr)
    if args.check:
        ok = (args.out / "table.json").read_bytes() == table.encode() and \
             (args.out / "NOTICE.op-plugin").read_bytes() == notice.encode()
        print("reproduced byte for byte" if ok else "DIFFERS from the committed table", file=sys.stderr)
        return 0 if ok else 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.json").write_bytes(table.encode())
    (args.out / "NOTICE.op-plugin").write_bytes(notice.encode())
    return 0


def _header_index(dirs: list[Path]) -> Any:
    sys.path.insert(0, str(REPO_ROOT))
    from ascend_aclnn.cann import headers as H
    from ascend_aclnn.cann.loader import HeaderDir  # noqa: F401
    os.environ[H.ENV_VAR] = os.pathsep.join(str(d) for d in dirs)
    return H.HeaderIndex.scan(H.header_dirs({H.ENV_VAR: os.environ[H.ENV_VAR]}))


def generate(op_plugin: Path, commit: str, headers: Path, newer: list[Path]) -> tuple[str, str, str]:
    src = Source(op_plugin, commit)
    schemas = Schemas(src.read(YAML_PATH))
    h81 = _header_index([headers])
    if len(h81) == 0:
        raise SystemExit(f"no aclnn header found under {headers}")
    hnew = _header_index(newer) if newer else None
    builder = Builder(schemas, h81, hnew)
    ycalls, ydropped = yaml_calls(schemas)
    for c in ycalls:
        result_of = {f"ret{i}": i for i in range(len(c.schema.returns))}
        builder.add(c.aclnn, c.schema, c.args, [], False, c.evidence, result_of)
    cstats = cpp_rows(src, schemas, builder)
    derived = list(builder.rows.values())
    hand = hand_rows(load_hand_rows(), src, schemas, h81, derived)
    rows = sorted(derived + hand, key=_row_key)
    for r in rows:
        r["evidence"] = sorted(r["evidence"], key=_evidence_key)
    names81 = set(h81.names())
    covered = {r["aclnn"] for r in rows if r["in_cann_8_1_rc1"]}
    license_text = src.read("LICENSE").replace("\r\n", "\n")
    header = {
        "format": FORMAT_VERSION,
        "source": {
            "repository": "Ascend/op-plugin",
            "commit": src.commit,
            "licence": "BSD-3-Clause",
            "notice": "NOTICE.op-plugin",
            "files": [YAML_PATH] + list(CPP_DIRS),
            "generator": "devtools/gen_cpu_reference.py",
            "torch": _torch_version(),
        },
        "headers": {"cann": "8.1.RC1", "operators": len(names81), "with_row": len(covered & names81)},
        "counts": {"rows": len(rows), "strict": sum(r["tier"] == "strict" for r in rows),
                   "relaxed": sum(r["tier"] == "relaxed" for r in rows),
                   "hand": sum(r["tier"] == "hand" for r in rows),
                   "operators": len({r["aclnn"] for r in rows})},
    }
    unreferenced = {op: why_unreferenced(builder, op) for op in sorted(names81 - covered)}
    no_reference = load_no_reference()
    stray = sorted(op for op in no_reference if op not in unreferenced)
    if stray:
        raise SystemExit(f"devtools/hand_rows.py NO_REFERENCE: {', '.join(stray)} have a row or are not 8.1.RC1 "
                         "operators")
    table = _dump(header, rows, unreferenced, dict(sorted(no_reference.items())))
    notice = ("ascend_aclnn/cpu_reference/table.json is derived from Ascend/op-plugin\n"
              f"commit {src.commit}:\n"
              "the aten schemas and aclnn calls of op_plugin/config/op_plugin_functions.yaml and\n"
              "op_plugin/ops/opapi/*.cpp. op-plugin is distributed under the following licence,\n"
              "reproduced from its LICENSE file at that commit.\n\n"
              + "-" * 72 + "\n\n" + license_text.rstrip("\n") + "\n")
    report = _report(builder, rows, names81, covered, cstats, ydropped, len(ycalls))
    return table, notice, report


def _torch_version() -> Optional[str]:
    try:
        import torch
    except ImportError:
        return None
    return str(torch.__version__)


def _row_key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["aclnn"], TIER_ORDER[r["tier"]], -len(r["evidence"]), r["aten"], json.dumps(r["params"], sort_keys=True),
            json.dumps(r["fixed"], sort_keys=True))


def _evidence_key(e: str) -> tuple[str, int]:
    f, _, line = e.rpartition(":")
    return (f, int(line))


# Why the call sites of an operator were dropped, as a clause for the runner's message
# "... no row in the table derived from op-plugin (<clause>)".
_CUSTOM = "torch_npu custom op (no aten CPU kernel)"
_CLAUSES = {
    _CUSTOM: "only torch_npu custom operators call it",
    "call inside a loop": "op-plugin calls it only inside a loop (a list cut into chunks)",
    "output shape read back after a synchronous call": "op-plugin cuts its output to a shape the NPU reports",
    "operator name is not a literal aclnn name": "op-plugin names it through a variable",
    "an aten input is passed where the header has an output": "op-plugin passes an aten input where the header has an output",
    "output tensor is not a returned result": "op-plugin writes an output its aten function does not return",
    "no functional sibling of an out=/in-place schema": "its aten function, in-place or out=, has no functional form",
    "required aten argument not forwarded": "op-plugin does not forward a required aten argument",
    "in-place schema that also writes other arguments": "its in-place aten function also writes other arguments",
}


def why_unreferenced(builder: Builder, op: str) -> str:
    """One clause for an 8.1.RC1 operator without a row: what happened to op-plugin's calls of it."""
    reasons = builder.dropped_ops.get(op)
    if not reasons:
        return "op-plugin never calls it from an aten function"
    computed = sorted({d for a, r, d, _ in builder.details if a == op and r.startswith("computed") and d})
    clauses: list[str] = []
    for reason in sorted(reasons, key=lambda r: (r == _CUSTOM, r)):
        if reason.startswith("computed"):
            c = "op-plugin computes its arguments" + (": " + ", ".join(computed) if computed else "")
        elif reason.startswith("known semantic gap: "):
            c = reason[len("known semantic gap: "):]
        else:
            c = _CLAUSES.get(reason, "op-plugin's call does not map onto aten: " + reason)
        if c not in clauses:
            clauses.append(c)
    if clauses[-1] == _CLAUSES[_CUSTOM] and len(clauses) > 1:
        clauses[-1] = "the rest are torch_npu custom operators"
    return "; ".join(clauses)


def _dump(header: dict[str, Any], rows: list[dict[str, Any]], unreferenced: dict[str, str],
          no_reference: dict[str, str]) -> str:
    """One row per line: diffs stay readable, and the bytes depend only on the content."""
    out = ["{"]
    for k, v in header.items():
        out.append(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True, ensure_ascii=True)},")
    out.append('  "rows": [')
    for i, r in enumerate(rows):
        r = {k: v for k, v in r.items() if k != "header"} | {"header": r["header"]}
        out.append("    " + json.dumps(r, sort_keys=True, ensure_ascii=True) + ("," if i < len(rows) - 1 else ""))
    out.append("  ],")
    out.append('  "unreferenced": {')
    for i, (op, why) in enumerate(unreferenced.items()):
        out.append(f"    {json.dumps(op)}: {json.dumps(why, ensure_ascii=True)}" + ("," if i < len(unreferenced) - 1 else ""))
    out.append("  },")
    out.append('  "no_reference": {')
    for i, (op, why) in enumerate(no_reference.items()):
        out.append(f"    {json.dumps(op)}: {json.dumps(why, ensure_ascii=True)}" + ("," if i < len(no_reference) - 1 else ""))
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _report(builder: Builder, rows: list[dict[str, Any]], names81: set[str], covered: set[str],
            cstats: Counter[str], ydropped: Counter[str], ycalls: int) -> str:
    lines = [f"yaml calls: {ycalls}; C++ call sites reached from aten functions: {cstats['call sites']}",
             f"rows: {len(rows)} (strict {sum(r['tier'] == 'strict' for r in rows)}, "
             f"relaxed {sum(r['tier'] == 'relaxed' for r in rows)}, hand {sum(r['tier'] == 'hand' for r in rows)})",
             f"operators with a row: {len({r['aclnn'] for r in rows})}; of 8.1.RC1's {len(names81)}: {len(covered & names81)}"]
    strict_ops = {r["aclnn"] for r in rows if r["tier"] == "strict"} & names81
    relaxed_ops = {r["aclnn"] for r in rows if r["tier"] == "relaxed"} & names81 - strict_ops
    lines.append(f"8.1.RC1 operators with a strict row: {len(strict_ops)}; relaxed only: {len(relaxed_ops)}; "
                 f"hand only: {len(covered & names81) - len(strict_ops) - len(relaxed_ops)}")
    lines.append("call sites dropped, by reason:")
    for reason, n in builder.dropped.most_common():
        lines.append(f"  {n:5d}  {reason}")
    no_row = {op for op in builder.dropped_ops if op in names81 and op not in covered}
    by_reason: Counter[str] = Counter()
    for op in no_row:
        for reason in builder.dropped_ops[op]:
            by_reason[reason] += 1
    lines.append(f"8.1.RC1 operators op-plugin calls but without a row: {len(no_row)}; reasons (an operator may have several):")
    for reason, n in by_reason.most_common():
        lines.append(f"  {n:5d}  {reason}")
    for k, n in ydropped.items():
        lines.append(f"yaml entries skipped: {n} {k}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
