"""The rules an aclnn header's comments state for each parameter, read mechanically.

CANN's headers document a first phase's parameters in the comment above its declaration::

    @param [in] self: npu device侧的aclTensor，数据类型支持FLOAT、FLOAT16、INT32，且数据类型需要与other
    构成互相推导关系，shape需要与other满足broadcast关系。
    @param [in] out: ...数据类型需要是self与other推导之后可转换的数据类型...

``rules(proto)`` reads the comment block just above ``proto``'s declaration in its header
(only a header's own text: nothing is shipped) and returns what it can read without guessing,
each as a ``Rule`` that names the parameter, the header file and line it came from:

- ``dtypes``: "数据类型支持A、B、C" with every word a dtype this module knows (FLOAT,
  FLOAT32, DT_FLOAT, BFLOAT16, BF16, INT8 ... COMPLEX128). A list with a category word
  (整型, 浮点, 复数: the op_api's real list is wider or narrower than the words, Add's includes
  BOOL and COMPLEX64) or with a word it does not know (the UNIT8 typos) is left out, as is
  a list under a product other than Atlas A2/A3 (the target: several headers give one list
  per SoC; several for A2/A3 are joined).
- ``same_dtype``: "数据类型(需要)与X(保持)一致/相同/一样", X another parameter.
- ``promotable``: "数据类型需要与X构成互相推导关系".
- ``promote_cast``: "数据类型需要是X与Y推导之后可转换的数据类型" / "是X可转换的数据类型".
- ``cast_to_promoted``: "数据类型需要可转换成X与Y推导后的数据类型" / "可转换成X的数据类型".
- ``broadcast``: "shape需要与X满足broadcast关系".
- ``same_shape``: "shape(需要)与X(保持)一致/相同".
- ``max_rank``: "不支持8维以上", "维度不大于8", "最多是8维".
- ``one_element``: "shape为(1,)", "shape为[1]", "(N,)或者(1,)": a one-element result is
  taken in a () or (1,) output alike (refusals.fit).
- ``choice``: "取值为"a"或"b"" (a string parameter); ``range``: "取值范围为[a, b]" or "[a, b)" with
  number bounds (a parameter passed by value).

Anything else in the comment is not read; the hand list (``refusals.HAND``) adds what the
headers do not state.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

# A dtype word of the headers -> the ACL name (constants.AclDataType without ACL_)
DTYPE_WORDS: dict[str, str] = {
    "FLOAT": "FLOAT", "FLOAT32": "FLOAT", "FP32": "FLOAT", "FLOAT16": "FLOAT16", "FP16": "FLOAT16",
    "HALF": "FLOAT16", "BFLOAT16": "BF16", "BF16": "BF16", "DOUBLE": "DOUBLE", "FLOAT64": "DOUBLE",
    "INT8": "INT8", "INT16": "INT16", "INT32": "INT32", "INT64": "INT64", "UINT8": "UINT8", "UINT16": "UINT16",
    "UINT32": "UINT32", "UINT64": "UINT64", "BOOL": "BOOL", "COMPLEX64": "COMPLEX64", "COMPLEX128": "COMPLEX128",
    "COMPLEX32": "COMPLEX32",
    # dtypes NumPy has no array for: known, so a list naming them is still complete
    "INT4": "INT4", "HIFLOAT8": "HIFLOAT8", "FLOAT8_E5M2": "FLOAT8_E5M2", "FLOAT8_E4M3FN": "FLOAT8_E4M3FN",
    "FLOAT8_E8M0": "FLOAT8_E8M0", "FLOAT4_E2M1": "FLOAT4_E2M1", "FLOAT4_E1M2": "FLOAT4_E1M2", "STRING": "STRING",
}
_CATEGORY = ("整型", "整数", "浮点", "复数", "布尔", "实数", "所有")


@dataclass(frozen=True)
class Rule:
    """One thing CANN refuses: ``kind`` (see the module docstring, and refusals' hand kinds),
    the parameter it is about, what it is checked against, and where it comes from."""
    kind: str
    param: str
    args: tuple[Any, ...] = ()
    source: str = ""
    status: int = 161002


_PARAM = re.compile(r"@param\s*\[\s*(in|out|in,\s*out|in/out)\s*\]\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:：]?", re.I)
_STOP = re.compile(r"@(?:return|brief|param)\b")
_NAME = r"`?([A-Za-z_][A-Za-z0-9_]*)`?"


def _comment_before(text: str, line: int) -> tuple[str, int]:
    """The text of the /** ... */ block that ends just before ``line`` (1-based; blank lines,
    macros and attributes between them allowed), its lines joined, and the block's first line."""
    lines = text.splitlines()
    i = min(line - 1, len(lines)) - 1
    while i >= 0 and "*/" not in lines[i]:
        s = lines[i].strip()
        if s.endswith(";") or s.endswith("}"):  # another declaration: no comment of its own
            return "", 0
        i -= 1
    if i < 0:
        return "", 0
    end = i
    while i >= 0 and "/*" not in lines[i]:
        i -= 1
    if i < 0:
        return "", 0
    body = []
    for raw in lines[i:end + 1]:
        s = raw.strip()
        s = re.sub(r"^/\*+|\*+/$", "", s).strip()
        s = re.sub(r"^\*+", "", s).strip()
        body.append(s)
    return "".join(body), i + 1


def _segments(comment: str) -> list[tuple[str, str]]:
    """(parameter, its text) per @param of a comment."""
    found = []
    marks = list(_PARAM.finditer(comment))
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(comment)
        stop = _STOP.search(comment, m.end(), end)
        found.append((m.group(2), comment[m.end():stop.start() if stop else end]))
    return found


_LIST = re.compile(r"数据类型(?:仅)?支持[:：]?\s*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[\u4e00-\u9fff]+|[、，,/\s]|.", re.S)
_PRODUCT = re.compile(r"Atlas[^:：，,。；]*?(?:产品|系列|A2|A3)[^:：，。；]*[:：]?")
_FILLER = {"类型", "数据类型", "和", "或", "以及", "及", "格式"}


def _dtype_list(text: str, at: int) -> Optional[tuple[str, ...]]:
    """The dtypes listed from ``at`` on; None when a word is not a known dtype."""
    got: list[str] = []
    for m in _WORD.finditer(text, at):
        w = m.group()
        if w in "、，,/ \t" and w:
            if w == "，" and got:  # "FLOAT、INT32，且..." ends at the comma before a word
                nxt = _WORD.match(text, m.end())
                if nxt is None or nxt.group().upper().removeprefix("DT_") not in DTYPE_WORDS:
                    break
            continue
        u = w.upper().removeprefix("DT_")
        if u in DTYPE_WORDS:
            got.append(DTYPE_WORDS[u])
            continue
        if any(c in w for c in _CATEGORY):
            return None
        if w in _FILLER or w.endswith("类型"):
            if w.endswith("类型") and w not in _FILLER and w != "数据类型":
                return None if got == [] else tuple(got)
            continue
        if re.fullmatch(r"[A-Z][A-Z0-9_]*", w):  # an upper-case word that is no dtype: UNIT8
            return None
        break
    return tuple(got) or None


def _targets_a2(text: str, at: int) -> bool:
    """Whether the list at ``at`` is for Atlas A2/A3 (or for no product in particular)."""
    before = [m for m in _PRODUCT.finditer(text, 0, at)]
    if not before:
        return True
    last = before[-1].group()
    return "A2" in last or "A3" in last


# A parameter's relation to others, as the comments phrase it: (rule kind, pattern whose
# groups name the others, whether a parameter naming itself is passed over), in the order
# the rules are listed.
_RELATIONS: tuple[tuple[str, re.Pattern[str], bool], ...] = tuple(
    (kind, re.compile(pattern), not_itself) for kind, pattern, not_itself in (
    ("same_dtype", r"数据类型(?:需要|必须|需)?(?:与|和)\s*(?:入参|出参)?\s*" + _NAME +
     r"\s*(?:的数据类型)?\s*(?:保持)?(?:一致|相同|一样)", True),
    ("promotable", r"数据类型需要与" + _NAME + r"构成(?:互相|相互)推导关系", False),
    ("promote_cast", r"数据类型需要是" + _NAME + r"(?:与" + _NAME + r")?推导之后可转换的数据类型", False),
    ("promote_cast", r"数据类型需要是" + _NAME + r"可转换的数据类型", False),
    ("cast_to_promoted", r"数据类型需要可转换成" + _NAME + r"(?:与" + _NAME + r")?推导后的数据类型", False),
    ("cast_to_promoted", r"数据类型需要可转换成" + _NAME + r"的数据类型", False),
    ("broadcast", r"shape需要与" + _NAME + r"满足\[?broadcast", False),
    ("same_shape", r"(?<!后的)shape(?:需要|必须)?(?:与|和)" + _NAME + r"(?:的shape)?(?:保持)?(?:一致|相同|一样)",
     True),
    ))


def parse_comment(comment: str, params: set[str], where: str) -> list[Rule]:
    """The rules of one declaration's comment; ``params``: its parameter names."""
    out: list[Rule] = []
    for name, text in _segments(comment):
        if name not in params:
            continue
        src = f"{where}, @param {name}"
        lists = [_dtype_list(text, m.end()) for m in _LIST.finditer(text) if _targets_a2(text, m.start())]
        if lists and all(lst is not None for lst in lists):
            out.append(Rule("dtypes", name, tuple(dict.fromkeys(d for lst in lists if lst for d in lst)), src))
        for kind, pattern, not_itself in _RELATIONS:
            for m in pattern.finditer(text):
                others = tuple(g for g in m.groups() if g)
                if all(o in params for o in others) and not (not_itself and name in others):
                    out.append(Rule(kind, name, others, src))
        mc = re.search(r"取值(?:范围)?(?:为|是)?[:：]?\s*((?:\"[^\"]*\"\s*(?:或|、|，|,)?\s*)+)", text)
        if mc:
            out.append(Rule("choice", name, tuple(re.findall(r'"([^"]*)"', mc.group(1))), src))
        mr = re.search(r"取值范围(?:为|是)?[:：]?\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*([\])])", text)
        if mr:
            hi = int(mr.group(2)) - (1 if mr.group(3) == ")" else 0)
            out.append(Rule("range", name, (int(mr.group(1)), hi), src))
        if re.search(r"shape\s*(?:为|是)?\s*[(\[]\s*1\s*,?\s*[)\]]|或者?(?:为)?\s*\(1,\)", text):
            out.append(Rule("one_element", name, (), src))
        if re.search(r"不支持\s*8维以上|维度不大于8|最多是8维|不超过8维", text):
            out.append(Rule("max_rank", name, (8,), src))
    return out


_cache: dict[tuple[str, int, str], tuple[Rule, ...]] = {}
_lock = threading.Lock()


def rules(proto: Any) -> tuple[Rule, ...]:
    """The rules the comment above ``proto``'s declaration states (() when its header is not
    a readable file: a prototype of a CPU reference, or no comment)."""
    header, line = str(getattr(proto, "header", "")), int(getattr(proto, "line", 0) or 0)
    key = (header, line, proto.name)
    found = _cache.get(key)
    if found is not None:
        return found
    path = Path(header)
    got: tuple[Rule, ...] = ()
    if line > 0 and path.is_file():
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        comment, first = _comment_before(text, line)
        if comment:
            got = tuple(parse_comment(comment, {p.name for p in proto.params}, f"{path.name}:{first}"))
    with _lock:
        _cache[key] = got
    return got


def reset() -> None:
    with _lock:
        _cache.clear()


__all__ = ["DTYPE_WORDS", "Rule", "parse_comment", "reset", "rules"]
