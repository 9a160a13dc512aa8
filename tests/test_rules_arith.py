"""The rules' integer arithmetic (ascend_aclnn/ops/rules.py): each kind of expression's
Python value and the value of the C codegen writes for it (native/src/ops/opc_arith.h,
compiled here alone) agree, over edge values: negatives, zero, the int64 extremes."""
from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ascend_aclnn.ops.rules import (Expr, dim, dims, dtypes_equal, floor_div, floor_mod, has_zero, is_dtype, item,
                                    leading, lift, ndim, numel, same_dims, scalar, shape_is, tdiv, tmod, trunc_div,
                                    trunc_mod, u64, u64_mul, where)

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


PRINT128 = """static void print128(__int128 v)
{
    char buf[64];
    int i = 63, neg = v < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    buf[i] = 0;
    do { buf[--i] = (char)('0' + (int)(u % 10)); u /= 10; } while (u);
    if (neg) buf[--i] = '-';
    fputs(buf + i, stdout);
}
"""


def _c_program(cases: list[tuple[int, int, int]]) -> str:
    rows = ",\n".join("{" + ", ".join(_c_int64(v) for v in case) + "}" for case in cases)
    prints = "\n".join(f'        print128({e.c}); putchar(\'{" " if i + 1 < len(EXPRESSIONS) else chr(10)}\');'
                       .replace(chr(10), "\\n") for i, e in enumerate(EXPRESSIONS.values()))
    return f"""#include <stdint.h>
#include <stdio.h>
#include "opc_arith.h"
typedef struct {{ uint64_t n; int64_t v[3]; }} ints;
#define I(name) name
{PRINT128}static const int64_t cases[][3] = {{
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


# ---- the expression kinds on tensors and scalars ------------------------------------------------

class _Tensor:
    """What a rule reads of a tensor argument (a TensorArg's shape, dtype, given)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.given = tuple(shape), np.dtype(dtype), True

    @property
    def ndim(self):
        return len(self.shape)


X_DIMS = (0, 1, 3, 2**31, 2**62)
TENSOR_EXPRESSIONS: dict[str, Expr] = {
    "ndim": ndim("x") + ndim("y"), "dim_last": dim("x", -1) * 3, "scalar": scalar("g") * scalar("g") - 1,
    "numel": numel("y"), "numel_div": numel("y") // where(dim("y", 0).eq(0), 1, dim("y", 0)),
    "dtypes_equal": dtypes_equal("x", "y"), "is_dtype": is_dtype("y", np.float16),
    "has_zero": has_zero("x", 1), "same_dims": same_dims("x", "y", 0, -1),
    "shape_is_lead": shape_is("y", leading("x", -1) + (dim("x", -1) * scalar("g"),)),
    "shape_is_plain": shape_is("y", dims(scalar("g"), dim("x", 0) // 2)),
    "shape_is_lead_pos": shape_is("y", leading("x", 1) + (3,)),
}


def _tensor_cases() -> list[tuple[tuple[int, ...], tuple[int, ...], int, str, str]]:
    rng = np.random.default_rng(0)
    cases = []
    for _ in range(400):
        xr, yr = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        x = tuple(int(rng.choice(X_DIMS)) for _ in range(xr))
        y = tuple(int(rng.choice(X_DIMS)) for _ in range(yr))
        if rng.random() < 0.3:  # the shapes the shape rules accept, and near misses
            y = x[:-1] + (min(x[-1] * 3, I64_MAX),) if rng.random() < 0.5 else x[:1] + (3,)
        g = int(rng.choice((I64_MIN, -3, 0, 3, 2**40, I64_MAX)))  # 3: y's last dim is x's times g
        cases.append((x, y, g, str(rng.choice(["float32", "float16"])), str(rng.choice(["float32", "float16"]))))
    return cases


def _tensor_program(cases) -> str:
    acl = {"float32": "ACL_FLOAT", "float16": "ACL_FLOAT16"}

    def desc(shape, dtype):
        dims_ = ", ".join(f"{d}LL" for d in shape) or "0"
        return f"{{.dtype = {acl[dtype]}, .ndim = {len(shape)}, .shape = {{{dims_}}}}}"
    rows = ",\n".join(f"    {{{desc(x, xd)}, {desc(y, yd)}, {_c_int64(g)}}}" for x, y, g, xd, yd in cases)
    prints = "".join(f"        print128({e.c}); putchar(' ');\n" for e in TENSOR_EXPRESSIONS.values())
    return f"""#include "op_common.h"
#include <stdio.h>
#define T(name) c->name
#define S(name) c->name
typedef struct {{ aclsim_tensor_desc x, y; int64_t g; }} tcase;
static const tcase cases[] = {{
{rows}
}};
{PRINT128}int main(void)
{{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {{
        const tcase *c = &cases[k];
{prints}        putchar('\\n');
    }}
    return 0;
}}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_python_and_c_read_tensors_alike(tmp_path):
    """Shapes, ranks, element counts, dtypes and computed shapes, through op_common.c's
    helpers (linked alone)."""
    cases = _tensor_cases()
    src = tmp_path / "tensors.c"
    src.write_text(_tensor_program(cases))
    exe = tmp_path / "tensors"
    native = ROOT / "native"
    # op_common.c's load-time check of the other simulator libraries is no constructor here,
    # so that the unused functions, and the symbols they need, are dropped at link time.
    subprocess.run(["cc", "-std=gnu11", "-O0", "-w", "-Dconstructor=unused", "-ffunction-sections",
                    "-fdata-sections", "-fsanitize=undefined", "-fno-sanitize-recover=all",
                    f"-I{native / 'src'}", f"-I{native / 'src/ops'}", f"-I{native / 'include'}",
                    str(src), str(native / "src/ops/op_common.c"), "-o", str(exe), "-Wl,--gc-sections"],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    assert len(out) == len(cases)
    for (x, y, g, xd, yd), line in zip(cases, out):
        env = {"x": _Tensor(x, xd), "y": _Tensor(y, yd), "g": g}
        for name, c_value, e in zip(TENSOR_EXPRESSIONS, line.split(), TENSOR_EXPRESSIONS.values()):
            assert int(c_value) == int(e.py(env)), f"{name} at x={x}, y={y}, g={g}: C {c_value}, Python {e.py(env)}"
