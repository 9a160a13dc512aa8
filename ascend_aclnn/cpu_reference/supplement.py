"""Rows written by hand, in the table's format, for operators the CANN simulator implements
that the generated table cannot hold: op-plugin calls them only with computed arguments (a
filtered tensor list, a dtype chosen in C++), or not at all. Each computation is trivial
and reads the same through the aten op, as the evidence lines say. Consulted after the
generated table, so a row there wins.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class Binding:  # the fields of table.Binding
    name: str
    c_type: str
    kind: str
    is_output: bool
    bind: str
    arg: Optional[str] = None
    result: Optional[int] = None
    value: Any = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class Row:  # the fields of table.Row
    aclnn: str
    aten: str
    params: tuple[Binding, ...]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    tier: str = "relaxed"
    evidence: tuple[str, ...] = ()
    in_cann_8_1_rc1: bool = True
    from_header: bool = True


def _in(name: str, arg: str, c_type: str = "const aclTensor *", kind: str = "aclTensor") -> Binding:
    return Binding(name, c_type, kind, False, "arg", arg=arg)


def _out(name: str = "out", c_type: str = "aclTensor *", kind: str = "aclTensor", result: int = 0) -> Binding:
    return Binding(name, c_type, kind, True, "result", result=result)


ROWS: dict[str, tuple[Row, ...]] = {
    # tensor_list is the inputs without the empty 1-D ones, which torch.cat skips too; dim is wrapped
    "aclnnCat": (Row("aclnnCat", "cat.default", (
        _in("tensors", "tensors", "const aclTensorList *", "aclTensorList"), _in("dim", "dim", "int64_t", "int64_t"),
        _out()), evidence=("op_plugin/ops/opapi/CatKernelNpuOpApi.cpp:118 (hand: tensor_list filtered)",)),),
    # res_type is the dtype asked for (else out's): the header's dtype is aten's dtype
    "aclnnReduceSum": (Row("aclnnReduceSum", "sum.dim_IntList", (
        _in("self", "self"), _in("dims", "dim", "const aclIntArray *", "aclIntArray"),
        _in("keepDims", "keepdim", "bool", "bool"), _in("dtype", "dtype", "aclDataType", "aclDataType"), _out()),
        evidence=("op_plugin/utils/custom_functions/opapi/SumKernelNpuOpApi.cpp:34 (hand: res_type)",)),),
    # tensors1/scalars are the arguments, copied into lists
    "aclnnForeachMulScalarList": (Row("aclnnForeachMulScalarList", "_foreach_mul.ScalarList", (
        _in("x", "self", "const aclTensorList *", "aclTensorList"),
        _in("scalars", "scalars", "const aclScalarList *", "aclScalarList"),
        _out("out", "const aclTensorList *", "aclTensorList")),
        evidence=("op_plugin/ops/opapi/ForeachMulKernelNpuOpApi.cpp:105 (hand: list copies)",)),),
    # not called by op-plugin: splitSections is the size of each piece, torch.split's split_size
    "aclnnSplitTensor": (Row("aclnnSplitTensor", "split.Tensor", (
        _in("self", "self"), _in("splitSections", "split_size", "uint64_t", "uint64_t"),
        _in("dim", "dim", "int64_t", "int64_t"), _out("out", "aclTensorList *", "aclTensorList")),
        evidence=("hand: the header's splitSections (no op-plugin call)",)),),
}
