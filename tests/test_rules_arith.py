"""The rules' integer arithmetic (ascend_aclnn/ops/rules.py): each kind of expression's
Python value and the value of the C codegen writes for it (native/src/ops/opc_arith.h,
compiled here alone) agree, over edge values: negatives, zero, the int64 extremes."""
from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from ascend_aclnn.ops.rules import Expr, floor_div, floor_mod, item, lift, tdiv, tmod, trunc_div, trunc_mod, u64, \
    u64_mul, where

ROOT = Path(__file__).resolve().parent.parent
I64_MIN, I64_MAX = -2**63, 2**63 - 1
EDGES = (I64_MIN, I64_MIN + 1, -2**32, -7, -2, -1, 0, 1, 2, 3, 7, 2**32, I64_MAX - 1, I64_MAX)
A, B, C = (item("p", k) for k in range(3))

# name -> the expression; every kind the rules compute with, and chains that leave int128
# when computed naively (a product of three int64s).
EXPRESSIONS: dict[str, Expr] = {
    "add": A + B, "sub": A - B, "neg": -A, "radd": 5 + A, "rsub": 5 - A, "mul": A * B,
    "mul3": A * B * C, "mul3_add": A * B * C + A * B * C, "mul_sub": A * B - B * C,
    "floordiv": A // B, "floormod": A % B, "tdiv": tdiv(A, B), "tmod": tmod(A, B),
    "floordiv_of_product": (A * B * C) // B, "tdiv_of_sum": tdiv(A + B + C, B),
    "u64": u64(A), "u64_sum": u64(A + B), "u64_mul": u64_mul(A, B), "u64_mul_neg": u64_mul(A - B, C),
    "big_const": A * B + lift(2**100), "neg_big_const": A - lift(-2**100 - 12345),
    "where": where(A < B, A * C, B // C),
    "cmp_product": (A * B * C > A * B) | (A % B).eq(tmod(A, B)),
    "int64_limits": (A >= lift(I64_MIN)) & (A - lift(I64_MIN) < lift(2**64)) & (B <= lift(I64_MAX)),
}


def _c_program(cases: list[tuple[int, int, int]]) -> str:
    rows = ",\n".join("{" + ", ".join(_c_int64(v) for v in case) + "}" for case in cases)
    prints = "\n".join(f'        print128({e.c}); putchar(\'{" " if i + 1 < len(EXPRESSIONS) else chr(10)}\');'
                       .replace(chr(10), "\\n") for i, e in enumerate(EXPRESSIONS.values()))
    return f"""#include <stdint.h>
#include <stdio.h>
#include "opc_arith.h"
typedef struct {{ uint64_t n; int64_t v[3]; }} ints;
#define I(name) name
static void print128(__int128 v)
{{
    char buf[64];
    int i = 63, neg = v < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    buf[i] = 0;
    do {{ buf[--i] = (char)('0' + (int)(u % 10)); u /= 10; }} while (u);
    if (neg) buf[--i] = '-';
    fputs(buf + i, stdout);
}}
static const int64_t cases[][3] = {{
{rows}
}};
int main(void)
{{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {{
        ints p = {{3, {{cases[k][0], cases[k][1], cases[k][2]}}}};
{prints}
    }}
    return 0;
}}
"""


def _c_int64(v: int) -> str:
    return "INT64_MIN" if v == I64_MIN else f"{v}LL"


def _as_int(v: object) -> int:
    return int(v)  # bools compare as 0/1, as C prints them


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_python_and_c_compute_every_expression_alike(tmp_path):
    cases = list(itertools.product(EDGES, repeat=3))
    src = tmp_path / "arith.c"
    src.write_text(_c_program(cases))
    exe = tmp_path / "arith"
    subprocess.run(["cc", "-std=gnu11", "-O1", "-Wall", "-Werror", "-fsanitize=undefined",
                    "-fno-sanitize-recover=all", "-I", str(ROOT / "native/src/ops"), str(src), "-o", str(exe)],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    assert len(out) == len(cases)
    names = list(EXPRESSIONS)
    for case, line in zip(cases, out):
        env = {"p": case}
        got_c = [int(v) for v in line.split()]
        got_py = [_as_int(e.py(env)) for e in EXPRESSIONS.values()]
        for name, c_value, py_value in zip(names, got_c, got_py):
            assert c_value == py_value, f"{name} at p = {case}: C {c_value}, Python {py_value}"


def test_divisions_say_which_rounding():
    """Python's // and % round toward -inf; C's toward zero: both are offered, named."""
    assert (floor_div(-7, 2), floor_mod(-7, 2)) == (-4, 1)
    assert (trunc_div(-7, 2), trunc_mod(-7, 2)) == (-3, -1)
    assert (floor_div(7, -2), trunc_div(7, -2), floor_mod(7, -2), trunc_mod(7, -2)) == (-4, -3, -1, 1)
    assert floor_div(5, 0) == trunc_div(5, 0) == floor_mod(5, 0) == trunc_mod(5, 0) == 0


def test_values_within_int128_are_exact_and_beyond_saturate():
    env = {"p": (2**62 - 1, 2**62 + 3, I64_MAX)}
    assert (A * B).py(env) == (2**62 - 1) * (2**62 + 3)  # exact: below 2**125 no saturation
    assert (A * B * C).py(env) == 2**125  # saturated, as the C is
    assert (-(A * B * C)).py(env) == -2**125
    assert "opc_mul_sat" in (A * B * C).c and "opc_mul_sat" not in (A + B + C).c


def test_a_double_operand_is_refused_where_only_integers_make_sense():
    with pytest.raises(TypeError):
        A // lift(2.0)
    with pytest.raises(TypeError):
        u64(lift(1.5))
