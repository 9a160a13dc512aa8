"""aclnn operator prototypes, read from the installed CANN headers.

Any aclnn operator, built-in or from a custom package, is described by its header::

    ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
        const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);

``prototype("aclnnAdd")`` returns that declaration as a ``Prototype``: its parameters in
header order (without the workspaceSize/executor tail), each with its C type, its kind (what
the caller must build for it) and whether it is an output, plus the ctypes argtypes of the
first phase.

Where headers are found, first declaration of a name wins (custom and vendor packages
override the built-ins, as their libraries do):

1. ``ASCEND_ACLNN_HEADERS``: directories (``os.pathsep``-separated). Works with no CANN
   installed, for reading prototypes.
2. Directories given to ``add_headers(path)`` at run time, in the order added.
3. The operator packages' header directories, in the loader's library order
   (``loader.operator_header_dirs``): custom packages (``$ASCEND_CUSTOM_OPP_PATH/*/op_api/include``),
   vendors (``$ASCEND_OPP_PATH/vendors/<name>/op_api/include``, config.ini's load_priority
   order), then the built-in ``aclnnop/`` directories of the CANN root in use:
   ``<root>/include/aclnnop``, ``<root>/<arch>-linux/include/aclnnop`` (CANN >= 8.5 installs
   there) and ``<root>/opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop`` (CANN 8.x).

Each directory is read with its ``level2/``, ``aclnnop/`` and ``aclnnop/level2/``
subdirectories (a custom package installs into ``op_api/include/aclnnop/`` too; CANN keeps a
``level2/`` copy of its headers, with 4 headers found only there in 8.1.RC1). A directory or
file reached twice (CANN links ``include/`` into the opp tree), or a file with the same bytes
as one already read (the ``level2/`` copies), is read once.

Lazy: nothing is read at import. The first lookup lists the directories and scans every
``*.h`` once for ``XxxGetWorkspaceSize(`` declarations, recording ``name -> (file, offset)``
(0.08-0.15 s for the 1033 headers of CANN 8.1.RC1, 607 of them distinct); a prototype is
parsed on first use and kept (all 771 of 8.1.RC1 in about 0.2 s). The index is built once
per process: ``add_headers`` and ``reset`` make the next lookup scan again. Reading is linear
in a file's size however many declarations it holds and whatever is malformed in it (a
generated package's header of thousands of declarations, a comment left open), and the last
file parsed is kept, so looking up its operators one by one reads it once.

The reader is a small hand-written one, not a C parser: it removes comments (one never
closed runs to the end of the file, as in C), string contents and preprocessor lines
(``#include``, ``#ifdef``, ``#warning``...), finds each ``NameGetWorkspaceSize (``
declaration, and reads its parameter list up to the matching parenthesis. Anything before
the name (``ACLNN_API``, ``__attribute__((...))``,
``ACL_DEPRECATED_MESSAGE("...")``, ``extern "C"``, ``[[...]]``) is skipped; the word just
before the name must be the return type, ``aclnnStatus``. Parameters may spell ``const`` on
either side and ``*`` anywhere (``const aclTensor *x``, ``aclTensor const* x``,
``aclTensor * const x``). A parameter whose type the binding cannot pass makes the
prototype *unsupported*, with the reason; a declaration that cannot be read at all is kept
as unsupported too (``Prototype.unsupported``), and a file that cannot be read is listed in
``HeaderIndex.skipped``. Nothing in a header makes a lookup raise anything but the errors
below.

Outputs. The C text has no in/out markers, so ``Param.is_output`` follows these rules, in
order, measured on the 771 operators of CANN 8.1.RC1 (``Param.output_reason`` says which one
applied). Only tensor and tensor-list parameters can be outputs.

1. ``non-const``: the pointee is not const (``aclTensor *out``, ``aclTensor *gradInput``,
   ``aclTensorList *out``). 686 parameters in 8.1.RC1; 135 of them (in 94 operators) have
   names that do not look like outputs, and all but 3 of those are outputs or updated in
   place (``gradInput``, ``indices``, ``runningMean``...). The 3 are inputs declared non-const
   (``aclnnInplaceAtan2``'s ``other``, ``aclnnBatchNormElemt``'s ``mean`` and ``invstd``).
2. ``name``: const, but named ``out``/``ref`` or ``...Out``/``...Ref`` (a trailing
   ``Optional`` ignored): generated headers declare every output const (``const aclTensor
   *yOut``), ``aclnnForeach*`` has ``const aclTensorList *out``, in-place operators
   ``const aclTensor *selfRef``. Except ``gradOut``, the gradient of an output, which is an
   input (17 parameters). 265 parameters; 2 inputs among them (``aclnnRingAttentionUpdate``'s
   ``prevAttnOut``/``curAttnOut``).
3. ``documented``: const with a plain name, but the comment above the declaration says
   ``@param [out] name`` (18 in 8.1.RC1: ``output``, ``y``, ``gradInput`` of the matmul
   collectives, FFN, GroupedMatmul, GeluBackward). ``@param [in]`` proves nothing: 314
   ``aclTensor *out`` parameters are documented ``[in]``.
4. ``inplace operator`` / ``last tensor``: an operator with no output yet gets one, its first
   tensor when it is an ``...Inplace...`` operator (``aclnnInplaceHardswish(const aclTensor
   *self)``, 6), else its last; and an operator whose outputs are not all in-place also has
   its last tensor as an output (aclnn puts outputs last: ``aclnnFusedInferAttentionScore``'s
   ``const aclTensor *softmaxLse`` after ``attentionOut``). 16 parameters; 1 is an input
   (``aclnnAdvanceStep``'s ``blockTables``, whose real outputs, updated in place, are declared
   const like its inputs and cannot be told apart).

So in 8.1.RC1: 985 outputs, 6 of them inputs in fact, and the in-place updates of
``aclnnAdvanceStep`` are missed. ``Param.inplace`` marks outputs that are also read
(``...Ref``, and rule 4's in-place first tensor).

What an input taken for an output costs. Rule 1 stays as it is: of the 135 non-const
tensors with plain names, 132 are outputs or updated in place, and nothing in the text
tells the 3 apart. Such an input (any of the 6) is still read right: a written NumPy
array is uploaded before the call as every written one is, and copied back after it
(unchanged, as the operator only reads it); the call also returns it among its results
(``operator(name, outputs=(...))`` names the real outputs instead). A plan rebinds a raw
operator's tensors with ``aclSetTensorAddr`` at their place among all the tensor
parameters, which does not depend on this decision (``aclSetOutputTensorAddr`` would count
such an input as an output, and point a generated operator's real output at its address).
"""
from __future__ import annotations

import os
import re
import threading
from bisect import bisect_left
from ctypes import POINTER, c_bool, c_char_p, c_double, c_float, c_int, c_int8, c_int16, c_int32, c_int64
from ctypes import c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence

from .loader import HeaderDir, operator_header_dirs  # the one list of package locations

ENV_VAR = "ASCEND_ACLNN_HEADERS"
SUBDIRS = ("", "level2", "aclnnop", "aclnnop/level2")  # read in each header directory, in this order


class HeaderLookupError(LookupError):
    """No header in the search path declares this operator."""


class UnsupportedPrototypeError(TypeError):
    """The operator is declared, but not in a form the binding can call (its reason says why)."""


# ---------------------------------------------------------------------------------------------
# Parameter kinds
# ---------------------------------------------------------------------------------------------

# kind -> ctypes type of the argument. Opaque handles are passed as void pointers; enums as
# the C int they are (4 bytes).
KIND_CTYPES: dict[str, object] = {
    "aclTensor": c_void_p, "aclTensorList": c_void_p, "aclScalar": c_void_p,
    "aclScalarList": c_void_p, "aclIntArray": c_void_p, "aclFloatArray": c_void_p,
    "aclBoolArray": c_void_p,
    "aclDataType": c_int,
    "string": c_char_p,
    "bool": c_bool,
    "int8_t": c_int8, "int16_t": c_int16, "int32_t": c_int32, "int64_t": c_int64,
    "uint8_t": c_uint8, "uint16_t": c_uint16, "uint32_t": c_uint32, "uint64_t": c_uint64,
    "float": c_float, "double": c_double,
}
KINDS = tuple(KIND_CTYPES)
HANDLE_KINDS = frozenset(k for k, t in KIND_CTYPES.items() if t is c_void_p)
TENSOR_KINDS = frozenset({"aclTensor", "aclTensorList"})

# (base type, pointer depth) -> kind. ``int`` is int32_t on every target CANN supports.
_KIND_OF: dict[tuple[str, int], str] = {(k, 1): k for k in HANDLE_KINDS}
_KIND_OF.update({("char", 1): "string", ("aclDataType", 0): "aclDataType", ("bool", 0): "bool",
                 ("int", 0): "int32_t", ("float", 0): "float", ("double", 0): "double"})
_KIND_OF.update({(t, 0): t for t in ("int8_t", "int16_t", "int32_t", "int64_t",
                                     "uint8_t", "uint16_t", "uint32_t", "uint64_t")})

WORKSPACE_SIZE_ARGTYPE = POINTER(c_uint64)
EXECUTOR_ARGTYPE = POINTER(c_void_p)
TAIL_ARGTYPES = (WORKSPACE_SIZE_ARGTYPE, EXECUTOR_ARGTYPE)
_TAIL_TYPES = (("uint64_t", 1), ("aclOpExecutor", 2))
# Phase 2: (void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream).
_PHASE2_TYPES = (("void", 1), ("uint64_t", 0), ("aclOpExecutor", 1), ("aclrtStream", 0))
_PHASE2_TEXT = "(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)"
_RETURN_TYPES = ("aclnnStatus",)

_C_KEYWORD_TYPES = frozenset({"void", "char", "short", "int", "long", "float", "double", "signed",
                              "unsigned", "bool", "_Bool"})
_QUALIFIERS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__", "struct",
                         "enum", "class", "register"})


def looks_like_output_name(name: str) -> bool:
    """``out``, ``...Out``, ``ref``, ``...Ref`` (a trailing ``Optional`` ignored)."""
    if name.endswith("Optional") and len(name) > len("Optional"):
        name = name[:-len("Optional")]
    return name in ("out", "ref") or name.endswith(("Out", "Ref"))


@dataclass(frozen=True)
class Param:
    """One parameter of an operator's first phase, as declared."""

    name: str
    c_type: str                  # normalised C type: "const aclTensor *", "int64_t", "char *"
    kind: str | None          # one of KINDS; None when the binding cannot pass this type
    is_output: bool              # a tensor (list) the operator writes (see the module docstring)
    optional_hint: bool = False  # the name ends in "Optional": the header allows NULL
    const: bool = False          # the pointee (or, for a value, the value) is declared const
    output_reason: str = ""      # why is_output: "non-const", "name", "documented", "inplace operator",
                                 # "last tensor" (see the module docstring); "" for inputs

    @property
    def inplace(self) -> bool:
        """An output that is also read: named ...Ref (``selfRef``, ``yRef``), or the first tensor of
        an Inplace operator that names none (``aclnnInplaceHardswish(const aclTensor *self)``)."""
        base = _strip_optional(self.name)
        return self.is_output and (base == "ref" or base.endswith("Ref") or self.output_reason == "inplace operator")

    @property
    def ctype(self) -> Any:
        """The ctypes type of this argument."""
        if self.kind is None:
            raise UnsupportedPrototypeError(f"parameter {self.name}: type {self.c_type} has no ctypes mapping")
        return KIND_CTYPES[self.kind]

    def declaration(self) -> str:
        return self.c_type + ("" if self.c_type.endswith("*") else " ") + self.name


def _strip_optional(name: str) -> str:
    return name[:-len("Optional")] if name.endswith("Optional") and len(name) > 8 else name


@dataclass(frozen=True)
class Prototype:
    """An operator's two-phase prototype, read from a header."""

    name: str                    # "aclnnAdd": the phase-2 symbol; phase 1 is name + "GetWorkspaceSize"
    params: tuple[Param, ...]    # phase 1's parameters, header order, without the tail
    header: str                  # the file it was read from
    line: int                    # line of the phase-1 name in that file
    unsupported: str | None = None  # why the binding cannot call it; None when it can
    phase2_declared: bool = True       # its header also declares name(...), phase 2
    origin: str = ""             # the search-path entry the header came from

    @property
    def phase1_name(self) -> str:
        return self.name + "GetWorkspaceSize"

    @property
    def supported(self) -> bool:
        return self.unsupported is None

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.is_output)

    @property
    def outputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.is_output)

    @property
    def param_argtypes(self) -> tuple[Any, ...]:
        """ctypes argtypes of ``params`` (no tail)."""
        self.require_supported()
        return tuple(p.ctype for p in self.params)

    @property
    def argtypes(self) -> tuple[Any, ...]:
        """ctypes argtypes of phase 1, ``(..., POINTER(c_uint64), POINTER(c_void_p))``."""
        return self.param_argtypes + TAIL_ARGTYPES

    def require_supported(self) -> "Prototype":
        if self.unsupported is not None:
            raise UnsupportedPrototypeError(f"{self.phase1_name} ({self.header}:{self.line}) cannot be called "
                                            f"through this binding: {self.unsupported}")
        return self

    def __repr__(self) -> str:
        # One readable line (the generated dataclass repr nests every Param): the C
        # parameters, which are written, and where it was read.
        params = ", ".join(p.declaration() + (" [out]" if p.is_output else "") for p in self.params)
        where = f"{self.header}:{self.line}" if self.line else self.header
        return (f"<Prototype {self.name}({params}) from {where}"
                + (f"; unsupported: {self.unsupported}" if self.unsupported else "") + ">")

    def declaration(self) -> str:
        """The C prototypes of both phases, as text for ``help()``."""
        params = [p.declaration() for p in self.params] + ["uint64_t *workspaceSize", "aclOpExecutor **executor"]
        lines, line = [], f"aclnnStatus {self.phase1_name}("
        for i, p in enumerate(params):
            piece = p + (");" if i == len(params) - 1 else ",")
            if len(line) + 1 + len(piece) > 100 and not line.endswith("("):
                lines.append(line)
                line = "    " + piece
            else:
                line += ("" if line.endswith("(") else " ") + piece
        lines.append(line)
        return "\n".join(lines) + f"\naclnnStatus {self.name}{_PHASE2_TEXT};"


# ---------------------------------------------------------------------------------------------
# Reading a header
# ---------------------------------------------------------------------------------------------

# Comments, string and character literals, and preprocessor lines (with continuations and
# comments inside them), in one left-to-right pass so that "//" in a string or "/*" in a
# line comment are what they are. A "/*" never closed, in a preprocessor line too, runs to
# the end of the file, as in C: matched once, not retried (to the end of the file each
# time) at every later "/*", which made a header of "#define A /*" lines quadratic.
_BLOCK = r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"  # a closed block comment, without backtracking
# In a preprocessor line, what may hold a "/*" that opens nothing: a line comment (continued
# by a backslash-newline, as C splices lines first), a string or a character literal.
_IN_LINE = r"""//(?:\\\r?\n|[^\n])*|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?"""
_LEX = re.compile(rf"""
      {_BLOCK} | /\*.*\Z                                   # block comment (or one left open)
    | //[^\n]*                                           # line comment
    | "(?:\\.|[^"\\\n])*"?                               # string literal
    | '(?:\\.|[^'\\\n])*'?                               # character literal
    | ^[ \t]*\#(?:\\\r?\n|{_BLOCK}|/\*.*\Z|{_IN_LINE}|[^\n])*  # preprocessor line (a comment in it may span lines)
""", re.S | re.M | re.X)
_PHASE1 = re.compile(r"GetWorkspaceSize\s*\(")
_PUNCT = re.compile(r"[();{}]")
_IDENT_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z", re.A)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S", re.A)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z", re.A)


def _blank(match: re.Match[str]) -> str:
    text = match.group()
    if text[0] in "\"'":  # keep the quotes, blank the contents
        return text[0] + " " * (len(text) - 2) + text[-1] if len(text) >= 2 else " "
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(part) for part in text.split("\n"))


def clean(text: str) -> str:
    """The text with comments, string contents and preprocessor lines blanked out; the same
    length and line breaks, so offsets and line numbers still match the file."""
    return _LEX.sub(_blank, text)


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


# How far before a declared name its return type and attributes are looked for, when the
# statement is longer (no ; { } for that long): real declarations have a few words there
# (150 characters at most in 8.1.RC1), and a blanked doc comment before them is spaces (its
# 771 read the same with or without the bound). Without it, a long run of declarations with
# no statement end between them is re-read from its start for each: quadratic.
_SPEC_WINDOW = 1024
_CHUNK = 4096


def _last_stop(text: str, start: int, end: int) -> int:
    """Offset of the last ; { or } in text[start:end], -1 if none."""
    return max(text.rfind(";", start, end), text.rfind("{", start, end), text.rfind("}", start, end))


def _is_ident_char(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9")


class _Text:
    """One header's cleaned text (``clean``) and its raw text, with the positions lookups
    need, each found in one pass over the file when first needed (line breaks, statement
    ends, matching parentheses, ``name(`` occurrences, ``@param [out]`` tags). A lookup is
    then a search within one chunk of the text or a dictionary access, so reading a file is
    linear in its size however many declarations it holds: searching the text back or
    forward from each declaration made a generated header of 20,000 declarations take
    minutes."""

    __slots__ = ("cleaned", "raw", "_lines", "_stops", "_closing", "_calls", "_documented")
    cleaned: str
    raw: Optional[str]

    def __init__(self, cleaned: str, raw: str | None = None):
        self.cleaned = cleaned
        self.raw = raw  # the text before cleaning, for the doc comments (rule 3); None: no comments
        # Per chunk of _CHUNK characters: the line its start is on, and the last ; { } before
        # it. A lookup searches within its own chunk only (C speed, bounded), and building
        # the tables costs a few C calls per chunk, less than listing every position.
        self._lines: list[int] | None = None
        self._stops: list[int] | None = None
        self._closing: dict[int, tuple[int, str]] | None = None
        self._calls: dict[str, list[tuple[int, int]]] | None = None
        self._documented: dict[str, list[tuple[int, int]]] | None = None

    @classmethod
    def of(cls, raw: str) -> "_Text":
        return cls(clean(raw), raw)

    def line(self, offset: int) -> int:
        """The 1-based line of an offset."""
        text = self.cleaned
        if self._lines is None:
            lines, line = [], 1
            for start in range(0, len(text) + 1, _CHUNK):
                lines.append(line)
                line += text.count("\n", start, start + _CHUNK)
            self._lines = lines
        block = offset // _CHUNK
        return self._lines[block] + text.count("\n", block * _CHUNK, offset)

    def statement_start(self, pos: int) -> int:
        """Just after the last ; { or } before pos (0 if none)."""
        text = self.cleaned
        if self._stops is None:
            stops, last = [], -1
            for start in range(0, len(text) + 1, _CHUNK):
                stops.append(last)
                last = max(last, _last_stop(text, start, start + _CHUNK))
            self._stops = stops
        block = pos // _CHUNK
        return max(self._stops[block], _last_stop(text, block * _CHUNK, pos)) + 1

    def specifiers(self, pos: int) -> str:
        """The text before a name at pos that holds its return type: from the statement's
        start, or at most _SPEC_WINDOW characters back, from a line start (not inside a word)."""
        start = self.statement_start(pos)
        if pos - start > _SPEC_WINDOW:
            line_start = self.cleaned.find("\n", pos - _SPEC_WINDOW, pos)
            start = line_start + 1 if line_start >= 0 else pos - _SPEC_WINDOW
        return self.cleaned[start:pos]

    def param_list(self, open_paren: int) -> tuple[str | None, str]:
        """(text between the parenthesis at open_paren and its match, "") or (None, why it
        could not be read): a ; { } or the end of the file before the match."""
        if self._closing is None:
            self._closing = {}
        found = self._closing.get(open_paren)
        if found is None:
            found = self._match(open_paren)
        end, why = found
        return (self.cleaned[open_paren + 1:end], "") if end >= 0 else (None, why)

    def _match(self, open_paren: int) -> tuple[int, str]:
        """Scan forward from open_paren to its match, recording every parenthesis opened on
        the way; one recorded by an earlier scan is jumped over (to its match) or ends this
        one (unclosed, for the same reason), so no text is scanned twice."""
        text, known = self.cleaned, self._closing
        assert known is not None
        stack: list[int] = []
        pos = open_paren
        while True:
            m = _PUNCT.search(text, pos)
            if m is None:
                result = (-1, "parameter list not closed before the end of the file")
                break
            c, at = m.group(), m.start()
            pos = at + 1
            if c == "(":
                seen = known.get(at)
                if seen is None:
                    stack.append(at)
                elif seen[0] < 0:
                    result = seen
                    break
                else:
                    pos = seen[0] + 1
            elif c == ")":
                known[stack.pop()] = (at, "")
                if not stack:
                    return known[open_paren]
            else:
                result = (-1, f"parameter list not closed before {c!r} at line {self.line(at)}")
                break
        for unclosed in stack:
            known[unclosed] = result
        return result

    def calls(self, name: str) -> list[tuple[int, int]]:
        """(offset of name, offset of its parenthesis) of each ``name (`` in the text, in order."""
        if self._calls is None:  # from each "(" back to its name: far fewer than the identifiers
            calls: dict[str, list[tuple[int, int]]] = {}
            text = self.cleaned
            for m in re.finditer(r"\(", text):
                end = paren = m.start()
                while end and text[end - 1] in " \t\r\n\f\v":
                    end -= 1
                start = end
                while start and _is_ident_char(text[start - 1]):
                    start -= 1
                if start < end and not text[start].isdigit():
                    calls.setdefault(text[start:end], []).append((start, paren))
            self._calls = calls
        return self._calls.get(name, [])

    def documented_output(self, name: str, start: int, end: int) -> bool:
        """Whether the raw text between start and end says ``@param [out] name``."""
        if self.raw is None:
            return False
        if self._documented is None:
            documented: dict[str, list[tuple[int, int]]] = {}
            for m in _DOC_OUT.finditer(self.raw):
                documented.setdefault(m.group(1), []).append((m.start(), m.end()))
            self._documented = documented
        spans = self._documented.get(name, [])
        i = bisect_left(spans, (start, -1))
        return i < len(spans) and spans[i][1] <= end


def _skip_balanced(tokens: list[str], i: int) -> int:
    """Index after the bracket group opening at tokens[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[tokens[i]]]
    i += 1
    while i < len(tokens) and stack:
        t = tokens[i]
        if t in pairs:
            stack.append(pairs[t])
        elif t == stack[-1]:
            stack.pop()
        i += 1
    return i


def _specifier_words(text: str) -> list[str]:
    """The words before a declared name, without attributes and macro calls: the tokens of
    ``ACLNN_API __attribute__((x)) ACL_DEPRECATED_MESSAGE("m") aclnnStatus`` give
    ``["ACLNN_API", "aclnnStatus"]``. A non-word token (``*``, ``=``, ``return``...) is kept."""
    tokens = _TOKEN.findall(text)
    words: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "[" and i + 1 < len(tokens) and tokens[i + 1] == "[":  # [[attribute]]
            i = _skip_balanced(tokens, i)
        elif t == "(":  # the arguments of a macro or __attribute__: drop them with their name
            if words and _IDENT.match(words[-1]):
                words.pop()
            i = _skip_balanced(tokens, i)
        elif t == '"':  # extern "C" (contents already blanked)
            i += 1
        else:
            words.append(t)
            i += 1
    return words


def _return_type(spec: str) -> str | None:
    """The return type in the text before a declared name, None when it is no declaration
    (a call, an expression). Trailing ALL_CAPS words are visibility macros, not the type."""
    words = _specifier_words(spec)
    while words and re.fullmatch(r"[A-Z][A-Z0-9_]*", words[-1]):
        words.pop()
    while words and words[-1] in ("extern", "static", "inline", "__inline", "__inline__"):
        words.pop()
    if not words:
        return None
    last = words[-1]
    if last == "*":
        return "pointer"
    if not _IDENT.match(last) or last in ("return", "else", "case", "goto", "sizeof", "typedef"):
        return None
    return last


def _split_params(text: str) -> list[str]:
    if not any(c in text for c in "([{<"):
        parts = text.split(",")
    else:  # commas inside brackets (attributes, templates) do not separate parameters
        parts, depth, start = [], 0, 0
        for i, c in enumerate(text):
            if c in "([{<":
                depth += 1
            elif c in ")]}>":
                depth -= 1
            elif c == "," and depth == 0:
                parts.append(text[start:i])
                start = i + 1
        parts.append(text[start:])
    parts = [" ".join(p.split()) for p in parts]
    if parts == [""] or parts == ["void"]:
        return []
    return parts


@dataclass(frozen=True)
class _CParam:
    """One parameter's declaration, taken apart."""

    text: str
    name: str | None
    base: str             # "aclTensor", "int64_t", "unsigned int"
    stars: int
    pointee_const: bool   # const before the first * (or on a value)
    c_type: str
    problem: str | None = None


def _parse_param(text: str) -> _CParam:
    raw = text
    problem = None
    if "=" in text:  # a C++ default argument does not change the ABI
        text = text.split("=", 1)[0].strip()
    tokens = _TOKEN.findall(text)
    # drop attributes: __attribute__((...)), [[...]], and macro calls such as ALIGNED(8)
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "[" and i + 1 < len(tokens) and tokens[i + 1] == "[":
            i = _skip_balanced(tokens, i)
            continue
        if t == "(":
            if kept and _IDENT.match(kept[-1]) and kept[-1].startswith("__"):
                kept.pop()
                i = _skip_balanced(tokens, i)
                continue
            pointer_name = re.match(r"\(\s*\*\s*([A-Za-z_][A-Za-z0-9_]*)", text[text.find("("):], re.A)
            return _CParam(raw, pointer_name.group(1) if pointer_name else None, "", 0, False, " ".join(raw.split()),
                           "a function pointer or parenthesised declarator")
        kept.append(t)
        i += 1
    tokens = kept
    if not tokens:
        return _CParam(raw, None, "", 0, False, raw, "an empty parameter")
    if "..." in raw or tokens[0] == ".":
        return _CParam(raw, None, "...", 0, False, raw, "a variable argument list (...)")
    stars, pointee_const, seen_star, base_words, idents_after = 0, False, False, [], []
    for t in tokens:
        if t == "*":
            stars += 1
            seen_star = True
        elif t in ("&", "&&"):
            problem = problem or "a C++ reference"
        elif t in ("[", "]"):
            problem = problem or "an array parameter"
        elif t == "const":
            if not seen_star:
                pointee_const = True
        elif t in _QUALIFIERS:
            continue
        elif _IDENT.match(t):
            if seen_star:
                idents_after.append(t)
            else:
                base_words.append(t)
        else:
            problem = problem or f"an unexpected token {t!r}"
    name = None
    if idents_after:
        name = idents_after[-1]
        if len(idents_after) > 1:
            problem = problem or f"unexpected words {' '.join(idents_after[:-1])!r} after '*'"
    elif len(base_words) >= 2 and base_words[-1] not in _C_KEYWORD_TYPES:
        name = base_words.pop()  # "int64_t dim"; a lone "int64_t" or "unsigned int" is unnamed
    base = " ".join(base_words)
    if not base:
        problem = problem or "no type"
    c_type = ("const " if pointee_const else "") + base + (" " + "*" * stars if stars else "")
    return _CParam(raw, name, base, stars, pointee_const, c_type, problem)


def _make_param(cp: _CParam, index: int) -> tuple[Param, str | None]:
    """The Param, and why its type is unsupported (None if it is fine)."""
    name = cp.name or f"arg{index}"
    if cp.problem:
        return Param(name, cp.c_type, None, False, False, cp.pointee_const), \
            f"parameter {index} ({cp.text!r}) is {cp.problem}"
    kind = _KIND_OF.get((cp.base, cp.stars))
    if kind is None:
        return Param(name, cp.c_type, None, False, False, cp.pointee_const), \
            f"parameter {index} ({cp.text!r}) has type {cp.c_type!r}, which the binding cannot pass " \
            f"(not one of headers.KINDS)"
    reason = ""
    if kind in TENSOR_KINDS:
        if not cp.pointee_const:
            reason = "non-const"
        elif looks_like_output_name(name) and name != "gradOut":
            reason = "name"
    return Param(name, cp.c_type, kind, bool(reason), name.endswith("Optional") and len(name) > 8,
                 cp.pointee_const, reason), None


_DOC_OUT = re.compile(r"@param\s*\[\s*out\s*\]\s*([A-Za-z_][A-Za-z0-9_]*)", re.I | re.A)


def _classify_outputs(params: list[Param], name: str, documented: Callable[[str], bool]) -> list[Param]:
    """Rules 3 and 4 of the module docstring, over the whole parameter list; ``documented(p)``
    says whether the comment above the declaration tags p ``@param [out]``."""
    params = [replace(p, is_output=True, output_reason="documented")
              if p.kind in TENSOR_KINDS and not p.is_output and documented(p.name) else p for p in params]
    tensors = [i for i, p in enumerate(params) if p.kind in TENSOR_KINDS]
    if not tensors:
        return params
    outputs = [p for p in params if p.is_output]
    last = tensors[-1]
    if not outputs:
        i, why = (tensors[0], "inplace operator") if "Inplace" in name else (last, "last tensor")
        params[i] = replace(params[i], is_output=True, output_reason=why)
    elif "Inplace" not in name and not params[last].is_output and any(not p.inplace for p in outputs):
        params[last] = replace(params[last], is_output=True, output_reason="last tensor")
    return params


def parse_declaration(cleaned: str | _Text, name_offset: int, name: str, header: str = "<text>",
                      origin: str = "", phase2: str | None = None, raw: str | None = None) -> Prototype:
    """The Prototype declared at ``name_offset`` of cleaned header text (``clean(text)``),
    where ``name + "GetWorkspaceSize"`` starts. Never raises for a malformed declaration:
    the Prototype says why it is unsupported. ``phase2`` is the text of the phase-2
    parameter list when the same header declares it, else None. Reading many declarations
    of one text, pass the same ``_Text`` (cleaned and raw) to each: its positions are found once."""
    doc = cleaned if isinstance(cleaned, _Text) else _Text(cleaned, raw)
    line = doc.line(name_offset)
    open_paren = doc.cleaned.index("(", name_offset)
    problems: list[str] = []
    ret = _return_type(doc.specifiers(name_offset))
    if ret not in _RETURN_TYPES:
        problems.append(f"it returns {ret or 'nothing recognisable'}, not aclnnStatus")
    text, why = doc.param_list(open_paren)
    params: list[Param] = []
    if text is None:
        problems.append(why)
    else:
        cparams = [_parse_param(p) for p in _split_params(text)]
        tail = [(cp.base, cp.stars) for cp in cparams[-2:]]
        if tail != list(_TAIL_TYPES) or any(cp.problem for cp in cparams[-2:]):
            problems.append("its parameters do not end with (uint64_t *workspaceSize, aclOpExecutor **executor)")
            while cparams and (cparams[-1].base, cparams[-1].stars) in _TAIL_TYPES:
                cparams = cparams[:-1]  # a partial tail: not parameters of the operator
        else:
            cparams = cparams[:-2]
        for i, cp in enumerate(cparams):
            param, problem = _make_param(cp, i)
            params.append(param)
            if problem:
                problems.append(problem)
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                problems.append(f"two parameters are named {p.name}")
            seen.add(p.name)
    phase2_declared = phase2 is not None
    if phase2 is not None:
        types = [(cp.base, cp.stars) for cp in map(_parse_param, _split_params(phase2))]
        if types != list(_PHASE2_TYPES):
            problems.append(f"its second phase {name}({' '.join(phase2.split())}) is not {name}{_PHASE2_TEXT}")
    # The comments just before the declaration (between it and the previous one), for @param [out].
    start = doc.statement_start(name_offset)
    params = _classify_outputs(params, name, lambda p: doc.documented_output(p, start, name_offset))
    return Prototype(name, tuple(params), header, line, "; ".join(problems) or None, phase2_declared, origin)


def parse_header_text(text: str, header: str = "<text>", origin: str = "") -> dict[str, Prototype]:
    """Every operator declared in one header's text, first declaration of a name kept."""
    doc = _Text.of(text)
    out: dict[str, Prototype] = {}
    for name, offset in _phase1_decls(doc):
        if name not in out:
            out[name] = parse_declaration(doc, offset, name, header, origin, _phase2_params(doc, name))
    return out


def _phase1_decls(doc: _Text) -> Iterator[tuple[str, int]]:
    """(name, offset) of each phase-1 declaration: ``NameGetWorkspaceSize (`` preceded by a
    return type (calls and expressions are not declarations)."""
    cleaned = doc.cleaned
    for m in _PHASE1.finditer(cleaned):
        end = m.start()
        ident = _IDENT_BEFORE.search(cleaned, max(0, end - 256), end)
        if ident is None:
            continue
        start = ident.start()
        if _return_type(doc.specifiers(start)) is not None:
            yield ident.group(), start


def _phase2_params(doc: _Text, name: str) -> str | None:
    """The parameter text of the first declaration of ``name(...)`` in the text, None if
    there is none."""
    for at, paren in doc.calls(name):
        if _return_type(doc.specifiers(at)) is not None:
            text, _ = doc.param_list(paren)
            return text if text is not None else "<unreadable>"
    return None


# ---------------------------------------------------------------------------------------------
# The index
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Entry:
    path: Path
    offset: int
    origin: str


@dataclass
class HeaderIndex:
    """Every operator declared in a list of header directories (first declaration wins)."""

    dirs: tuple[HeaderDir, ...]
    entries: dict[str, _Entry] = field(default_factory=dict)
    shadowed: dict[str, list[str]] = field(default_factory=dict)  # name -> later declarations ignored
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why it was not read)
    files: int = 0               # headers read
    duplicates: int = 0          # headers skipped because an identical one was read before
    scan_seconds: float = 0.0
    _parsed: dict[str, Prototype] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _last: tuple[tuple[Any, ...], _Text] | None = field(default=None, repr=False)  # see _text

    @classmethod
    def scan(cls, dirs: Iterable[HeaderDir]) -> "HeaderIndex":
        import time
        t0 = time.perf_counter()
        index = cls(tuple(dirs))
        seen_contents: set[tuple[int, int]] = set()
        for path, origin in index._files():
            try:
                data = path.read_bytes()
            except OSError as exc:
                index.skipped.append((str(path), f"could not be read: {exc}"))
                continue
            if b"GetWorkspaceSize" not in data:
                continue
            key = (len(data), hash(data))
            if key in seen_contents:  # CANN's level2/ copies: the same bytes declare the same names
                index.duplicates += 1
                continue
            seen_contents.add(key)
            index.files += 1
            doc = _Text(clean(data.decode("utf-8", "replace")))
            for name, offset in _phase1_decls(doc):
                entry = index.entries.get(name)
                if entry is None:
                    index.entries[name] = _Entry(path, offset, origin)
                elif entry.path != path:
                    index.shadowed.setdefault(name, []).append(f"{path}:{doc.line(offset)}")
        index.scan_seconds = time.perf_counter() - t0
        return index

    def _files(self) -> Iterator[tuple[Path, str]]:
        seen_dirs: set[tuple[int, int]] = set()  # (st_dev, st_ino): a linked directory is read once
        seen_files: set[tuple[int, int]] = set()
        for hd in self.dirs:
            for sub in SUBDIRS:
                d = hd.path / sub if sub else hd.path
                try:
                    st = os.stat(d)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if key in seen_dirs:
                    continue
                seen_dirs.add(key)
                try:
                    entries = sorted((e for e in os.scandir(d) if e.name.endswith(".h")), key=lambda e: e.name)
                except OSError as exc:
                    self.skipped.append((str(d), f"could not be listed: {exc}"))
                    continue
                for e in entries:
                    try:
                        st = e.stat()
                        if not e.is_file():
                            continue
                    except OSError as exc:
                        self.skipped.append((e.path, f"could not be read: {exc}"))
                        continue
                    fkey = (st.st_dev, st.st_ino)
                    if fkey in seen_files:
                        continue
                    seen_files.add(fkey)
                    yield Path(e.path), hd.origin

    # -- lookups ------------------------------------------------------------------------------

    def names(self) -> list[str]:
        return sorted(self.entries)

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: str) -> Prototype | None:
        """The Prototype of ``name`` (parsed now if it was not yet), None if not declared."""
        proto = self._parsed.get(name)
        if proto is not None:
            return proto
        entry = self.entries.get(name)
        if entry is None:
            return None
        with self._lock:
            proto = self._parsed.get(name)
            if proto is None:
                proto = self._parse(name, entry)
                self._parsed[name] = proto
        return proto

    def _text(self, path: Path) -> _Text:
        """The header's text (called under self._lock). The last file read is kept, keyed
        by its stat, so looking up operator after operator of one large generated header
        reads and cleans it once, not once per operator."""
        st = os.stat(path)
        key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        self._last = None
        doc = _Text.of(_read(path))
        self._last = (key, doc)
        return doc

    def _parse(self, name: str, entry: _Entry) -> Prototype:
        try:
            doc = self._text(entry.path)
            if not doc.cleaned.startswith(name + "GetWorkspaceSize", entry.offset):
                raise ValueError("the file changed since it was indexed")
        except (OSError, ValueError) as exc:
            return Prototype(name, (), str(entry.path), 0, f"its header could not be read again: {exc}",
                             False, entry.origin)
        return parse_declaration(doc, entry.offset, name, str(entry.path), entry.origin, _phase2_params(doc, name))

    def prototype(self, name: str) -> Prototype:
        """The Prototype of ``name``; raises HeaderLookupError saying where it looked."""
        proto = self.get(name)
        if proto is None:
            raise HeaderLookupError(self.not_found_message(name))
        return proto

    def not_found_message(self, name: str) -> str:
        looked = [f"{hd.path} ({hd.origin})" for hd in self.dirs if hd.path.is_dir()]
        where = "; ".join(looked) if looked else "no header directory exists (set " + ENV_VAR + \
            " or source CANN's set_env.sh)"
        return (f"no header declares {name}GetWorkspaceSize. Searched {self.files} headers in: {where}")

    def all(self) -> dict[str, Prototype]:
        """Every prototype, parsed (the unsupported ones included); each header read once."""
        by_file: dict[Path, list[str]] = {}
        for name, entry in self.entries.items():
            if name not in self._parsed:
                by_file.setdefault(entry.path, []).append(name)
        for todo in by_file.values():
            with self._lock:  # _parse reads each file once (its last-file cache)
                for name in todo:
                    if name not in self._parsed:
                        self._parsed[name] = self._parse(name, self.entries[name])
        return {name: self._parsed[name] for name in self.names()}


# ---------------------------------------------------------------------------------------------
# The process-wide search path and index
# ---------------------------------------------------------------------------------------------

_added: list[Path] = []
_index: HeaderIndex | None = None
_index_lock = threading.Lock()


def env_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    return [Path(p) for p in environ.get(ENV_VAR, "").split(os.pathsep) if p]


def header_dirs(environ: Mapping[str, str] = os.environ) -> list[HeaderDir]:
    """The search path, in order (see the module docstring). Directories need not exist."""
    dirs = [HeaderDir(p, ENV_VAR) for p in env_dirs(environ)]
    dirs += [HeaderDir(p, "add_headers") for p in _added]
    return dirs + operator_header_dirs(environ)


def add_headers(path: Any) -> None:
    """Search ``path`` (a directory of headers) after ASCEND_ACLNN_HEADERS and before the
    installed packages; the next lookup scans again."""
    global _index
    p = Path(path)
    if not p.is_dir():
        raise NotADirectoryError(f"add_headers: {p} is not a directory")
    with _index_lock:
        if p not in _added:
            _added.append(p)
        _index = None


def reset() -> None:
    """Forget the index and the added directories (the environment is read again on the next
    lookup)."""
    global _index
    with _index_lock:
        _added.clear()
        _index = None


def get_index() -> HeaderIndex:
    """The process-wide index, scanned on first use."""
    global _index
    index = _index
    if index is None:
        with _index_lock:
            if _index is None:
                _index = HeaderIndex.scan(header_dirs())
            index = _index
    return index


def _full_name(name: str, index: HeaderIndex) -> str:
    if name in index or name.startswith("acl"):
        return name
    return "aclnn" + name


def find(name: str) -> Prototype | None:
    """The Prototype of an operator ("aclnnAdd", or "Add"), None when no header declares it."""
    index = get_index()
    return index.get(_full_name(name, index))


def prototype(name: str) -> Prototype:
    """The Prototype of an operator ("aclnnAdd", or "Add"). Raises HeaderLookupError when no
    header declares it; check ``.unsupported`` (or call ``.require_supported()``) before
    calling it."""
    index = get_index()
    return index.prototype(_full_name(name, index))


def names() -> list[str]:
    """Every operator declared in the search path, sorted."""
    return get_index().names()


# ---------------------------------------------------------------------------------------------
# Comparing with a binding's own argtypes (info --check-abi)
# ---------------------------------------------------------------------------------------------

def _ctype_name(t: Any) -> str:
    return getattr(t, "__name__", repr(t))


def compare_argtypes(proto: Prototype, expected: Sequence[Any]) -> list[str]:
    """How ``expected`` (ctypes argtypes of phase 1, with or without the workspaceSize/executor
    tail) differs from the prototype in the headers; [] when they agree."""
    if proto.unsupported is not None:
        return [f"the header's prototype is unsupported: {proto.unsupported}"]
    actual = proto.argtypes if len(expected) == len(proto.argtypes) else proto.param_argtypes
    if len(expected) != len(actual):
        return [f"{len(expected)} parameters expected, the header declares {len(proto.params)} "
                f"(+ workspaceSize, executor): {proto.phase1_name}("
                + ", ".join(p.declaration() for p in proto.params) + ", ...)"]
    diffs = []
    for i, (want, have) in enumerate(zip(expected, actual)):
        if want is not have and want != have:
            decl = proto.params[i].declaration() if i < len(proto.params) else \
                ("uint64_t *workspaceSize", "aclOpExecutor **executor")[i - len(proto.params)]
            diffs.append(f"parameter {i} ({decl}): expected {_ctype_name(want)}, the header gives {_ctype_name(have)}")
    return diffs


def check_abi(expected: Mapping[str, Sequence[Any]], index: HeaderIndex | None = None) -> dict[str, list[str]]:
    """For each operator name -> expected argtypes, the differences from the headers ([] when
    equal). An operator no header declares gets one difference saying so."""
    index = index or get_index()
    report: dict[str, list[str]] = {}
    for name, argtypes in expected.items():
        proto = index.get(_full_name(name, index))
        report[name] = [index.not_found_message(name)] if proto is None else compare_argtypes(proto, argtypes)
    return report
