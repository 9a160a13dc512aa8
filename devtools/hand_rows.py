"""Rows of the CPU reference table written by hand (tier "hand"), merged by gen_cpu_reference.py.

For CANN 8.1.RC1 operators the generator cannot derive mechanically, but whose aten equivalent
is plain: op-plugin calls them with computed arguments that keep their value (a ``dim`` wrapped
into a list, a CPU scalar copied to the device, a mode string turned into a code), or does not
call them at all and the operator's header documentation names the computation (Argsort,
Digamma, circular padding...). Each entry is reviewed by a person: it says which aten overload
computes the operator, how every header parameter binds, the evidence, and why it is right.

An entry:

- ``aclnn``: the operator; the 8.1.RC1 header must declare it (the generator takes the
  parameters' C types, kinds and output flags from there and refuses a mismatch).
- ``aten``: the functional overload, ``"name.overload"`` (``"name.default"`` for the default).
- ``bind``: one item per header parameter, in header order, keyed by the header's name:
  ``arg("self")`` (aten argument), ``res(0)`` (aten result), ``inplace("self", 0)`` (read as an
  argument, written with a result), ``lit(value)`` (the row holds only for this value: a mode
  code selecting the aten call, with the matching aten argument in ``fixed``), ``ignored(why)``.
- ``fixed``: aten arguments not bound, at the value the row holds for (defaults need not be
  listed; the generator fills every unbound argument that has one).
- ``evidence``: op-plugin ``path:line`` of the call (the generator checks the line names the
  operator), or ``"header"``: the operator's 8.1.RC1 header documents the computation (the
  generator records the header file and the line declaring the operator).
- ``why``: the reviewer's reason, one or two lines. Not shipped; kept here for review.

Value conversions a binding may rely on beyond the contract's kind-for-type list (the runner
converts by the aten argument's type, so no format extension is needed): a C number into a
``Scalar``; an ``aclScalar`` into an ``int``, a ``float`` or a 0-d ``Tensor``; a one-element
``aclTensor`` into a ``Scalar`` (its value); an ``aclIntArray`` into a 1-D int64 index ``Tensor``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Union

Bind = Mapping[str, Any]


def arg(name: str) -> Bind:
    return {"bind": "arg", "arg": name}


def res(index: int) -> Bind:
    return {"bind": "result", "result": index}


def inplace(name: str, index: int = 0) -> Bind:
    return {"bind": "arg+result", "arg": name, "result": index}


def lit(value: Union[None, bool, int, float, str]) -> Bind:
    return {"bind": "literal", "value": value}


def ignored(reason: str) -> Bind:
    return {"bind": "ignored", "reason": reason}


CUBE = ignored("NPU cube-unit precision mode (HF32/FP16 down-conversion); the CPU computes at the dtype's own "
               "precision")


@dataclass(frozen=True)
class HandRow:
    aclnn: str
    aten: str
    bind: Mapping[str, Bind]
    evidence: tuple[str, ...]
    why: str
    fixed: Mapping[str, Any] = field(default_factory=dict)


OPAPI = "op_plugin/ops/opapi/"


def _unary(aclnn: str, aten: str, why: str, x: str = "self", out: str = "out") -> HandRow:
    return HandRow(aclnn, aten, {x: arg("self"), out: res(0)}, ("header",), why)


def _inplace_unary(aclnn: str, aten: str, why: str) -> HandRow:
    return HandRow(aclnn, aten, {"selfRef": inplace("self")}, ("header",), why)


HAND_ROWS: tuple[HandRow, ...] = (
    # ---- op-plugin calls these with computed arguments that keep their value --------------------
    HandRow("aclnnAll", "all.dims", {"self": arg("self"), "dim": arg("dim"), "keepdim": arg("keepdim"),
                                     "out": res(0)},
            (OPAPI + "AllKernelNpuOpApi.cpp:72",),
            "all.dim wraps its one dim into the list aclnnAll takes; all.dims takes that list as is"),
    HandRow("aclnnAny", "any.dims", {"self": arg("self"), "dim": arg("dim"), "keepdim": arg("keepdim"),
                                     "out": res(0)},
            (OPAPI + "AnyKernelNpuOpApi.cpp:71",),
            "any.dim wraps its one dim into the list aclnnAny takes; any.dims takes that list as is"),
    HandRow("aclnnArgMax", "argmax.default", {"self": arg("self"), "dim": arg("dim"), "keepdim": arg("keepdim"),
                                              "out": res(0)},
            (OPAPI + "ArgmaxKernelNpuOpApi.cpp:45",),
            "op-plugin flattens self when dim is None; with a dim it passes it through"),
    HandRow("aclnnArgMin", "argmin.default", {"self": arg("self"), "dim": arg("dim"), "keepdim": arg("keepdim"),
                                              "out": res(0)},
            (OPAPI + "ArgminKernelNpuOpApi.cpp:56",),
            "as ArgMax: self is flattened only when dim is None"),
    HandRow("aclnnBatchMatMul", "matmul.default", {"self": arg("self"), "mat2": arg("other"), "out": res(0),
                                                   "cubeMathType": CUBE},
            (OPAPI + "BmmKernelNpuOpApi.cpp:275",),
            "the batch dim broadcasts: bmm sizes the result max(self.size(0), mat2.size(0)) and passes an expanded "
            "[b,m,k] back as [1,m,k] (maybe_restore_broadcast), so aten's bmm (equal batches only) is too narrow; "
            "matmul of 3-D tensors is bmm with a broadcast batch. The 8.1.RC1 header has no prose on it"),
    HandRow("aclnnCumsum", "cumsum.default", {"self": arg("self"), "dim": arg("dim"), "dtype": arg("dtype"),
                                              "out": res(0)},
            (OPAPI + "CumsumKernelNpuOpApi.cpp:67",),
            "the header documents dtype as the accumulation and output dtype, as aten's cumsum dtype="),
    HandRow("aclnnProd", "prod.default", {"self": arg("self"), "dtype": arg("dtype"), "out": res(0)},
            (OPAPI + "ProdKernelNpuOpApi.cpp:75",),
            "op-plugin passes dtype (self's when None): aten prod's dtype= casts before reducing"),
    HandRow("aclnnStd", "std.correction", {"self": arg("self"), "dim": arg("dim"), "correction": arg("correction"),
                                           "keepdim": arg("keepdim"), "out": res(0)},
            (OPAPI + "StdKernelNpuOpApi.cpp:66",),
            "dim None becomes every dim (aten: the same reduction); correction is the integer Bessel term"),
    HandRow("aclnnStdMeanCorrection", "std_mean.correction",
            {"self": arg("self"), "dim": arg("dim"), "correction": arg("correction"), "keepdim": arg("keepdim"),
             "stdOut": res(0), "meanOut": res(1)},
            (OPAPI + "StdMeanKernelNpuOpApi.cpp:44",),
            "as Std, with the mean as second output (aten returns (std, mean) in that order)"),
    HandRow("aclnnVarCorrection", "var.correction",
            {"self": arg("self"), "dim": arg("dim"), "correction": arg("correction"), "keepdim": arg("keepdim"),
             "out": res(0)},
            (OPAPI + "VarKernelNpuOpApi.cpp:68",),
            "dim None becomes every dim; correction passed through"),
    HandRow("aclnnVarMean", "var_mean.correction",
            {"self": arg("self"), "dim": arg("dim"), "correction": arg("correction"), "keepdim": arg("keepdim"),
             "varOut": res(0), "meanOut": res(1)},
            (OPAPI + "VarKernelNpuOpApi.cpp:91",),
            "as VarCorrection, with the mean second (aten returns (var, mean))"),
    HandRow("aclnnNorm", "norm.ScalarOpt_dim", {"self": arg("self"), "pScalar": arg("p"), "dim": arg("dim"),
                                                "keepdim": arg("keepdim"), "out": res(0)},
            (OPAPI + "NormKernelNpuOpApi.cpp:66",),
            "op-plugin turns p None into 2 and passes a Scalar; aten's norm with that p over dim"),
    HandRow("aclnnReduceNansum", "nansum.default",
            {"self": arg("self"), "dim": arg("dim"), "keepDim": arg("keepdim"), "dtype": arg("dtype"),
             "out": res(0)},
            (OPAPI + "NansumKernelNpuOpApi.cpp:68",),
            "dim None becomes every dim; the rest passes through"),
    HandRow("aclnnDivMod", "div.Tensor_mode",
            {"self": arg("self"), "other": arg("other"), "mode": lit(0), "out": res(0)},
            (OPAPI + "DivKernelNpuOpApi.cpp:178",), "mode 0: no rounding_mode (true division), DivKernel line 96",
            fixed={"rounding_mode": None}),
    HandRow("aclnnDivMod", "div.Tensor_mode",
            {"self": arg("self"), "other": arg("other"), "mode": lit(1), "out": res(0)},
            (OPAPI + "DivKernelNpuOpApi.cpp:178",), "MODE_TRUNC = 1 for rounding_mode 'trunc' (DivKernel line 22)",
            fixed={"rounding_mode": "trunc"}),
    HandRow("aclnnDivMod", "div.Tensor_mode",
            {"self": arg("self"), "other": arg("other"), "mode": lit(2), "out": res(0)},
            (OPAPI + "DivKernelNpuOpApi.cpp:178",), "MODE_FLOOR = 2 for rounding_mode 'floor' (DivKernel line 23)",
            fixed={"rounding_mode": "floor"}),
    HandRow("aclnnDivMods", "div.Scalar_mode",
            {"self": arg("self"), "other": arg("other"), "mode": lit(0), "out": res(0)},
            (OPAPI + "DivKernelNpuOpApi.cpp:176",), "a 0-d CPU other becomes an aclScalar; mode 0: true division",
            fixed={"rounding_mode": None}),
    HandRow("aclnnDivMods", "div.Scalar_mode",
            {"self": arg("self"), "other": arg("other"), "mode": lit(1), "out": res(0)},
            (OPAPI + "DivKernelNpuOpApi.cpp:176",), "mode 1: 'trunc'", fixed={"rounding_mode": "trunc"}),
    HandRow("aclnnDivMods", "div.Scalar_mode",
            {"self": arg("self"), "other": arg("other"), "mode": lit(2), "out": res(0)},
            (OPAPI + "DivKernelNpuOpApi.cpp:176",), "mode 2: 'floor'", fixed={"rounding_mode": "floor"}),
    HandRow("aclnnInplaceDivMod", "div.Tensor_mode",
            {"selfRef": inplace("self"), "other": arg("other"), "mode": lit(1)},
            (OPAPI + "DivKernelNpuOpApi.cpp:201",), "div_ with rounding_mode 'trunc' (mode 1)",
            fixed={"rounding_mode": "trunc"}),
    HandRow("aclnnInplaceDivMod", "div.Tensor_mode",
            {"selfRef": inplace("self"), "other": arg("other"), "mode": lit(2)},
            (OPAPI + "DivKernelNpuOpApi.cpp:201",), "div_ with rounding_mode 'floor' (mode 2)",
            fixed={"rounding_mode": "floor"}),
    HandRow("aclnnInplaceDivMods", "div.Scalar_mode",
            {"selfRef": inplace("self"), "other": arg("other"), "mode": lit(1)},
            (OPAPI + "DivKernelNpuOpApi.cpp:199",), "div_ by a CPU scalar, rounding_mode 'trunc' (mode 1)",
            fixed={"rounding_mode": "trunc"}),
    HandRow("aclnnInplaceDivMods", "div.Scalar_mode",
            {"selfRef": inplace("self"), "other": arg("other"), "mode": lit(2)},
            (OPAPI + "DivKernelNpuOpApi.cpp:199",), "div_ by a CPU scalar, rounding_mode 'floor' (mode 2)",
            fixed={"rounding_mode": "floor"}),
    HandRow("aclnnGeluV2", "gelu.default", {"x": arg("self"), "approximate": lit(0), "y": res(0)},
            (OPAPI + "GeluOutKernelNpuOpApi.cpp:29",), "npu_gelu_approximate_mode: 'none' -> 0",
            fixed={"approximate": "none"}),
    HandRow("aclnnGeluV2", "gelu.default", {"x": arg("self"), "approximate": lit(1), "y": res(0)},
            (OPAPI + "GeluOutKernelNpuOpApi.cpp:29",), "npu_gelu_approximate_mode: 'tanh' -> 1",
            fixed={"approximate": "tanh"}),
    HandRow("aclnnLinalgQr", "linalg_qr.default", {"self": arg("A"), "mode": lit(0), "Q": res(0), "R": res(1)},
            (OPAPI + "LinalgQrKernelNpuOpApi.cpp:104",), "get_mode: 'reduced' -> 0", fixed={"mode": "reduced"}),
    HandRow("aclnnLinalgQr", "linalg_qr.default", {"self": arg("A"), "mode": lit(1), "Q": res(0), "R": res(1)},
            (OPAPI + "LinalgQrKernelNpuOpApi.cpp:104",), "get_mode: 'complete' -> 1", fixed={"mode": "complete"}),
    HandRow("aclnnNanToNum", "nan_to_num.default",
            {"self": arg("self"), "nan": arg("nan"), "posinf": arg("posinf"), "neginf": arg("neginf"),
             "out": res(0)},
            (OPAPI + "NanToNumKernelNpuOpApi.cpp:103",),
            "op-plugin only fills posinf/neginf None with the dtype's extremes; given values pass through"),
    HandRow("aclnnInplaceNanToNum", "nan_to_num.default",
            {"selfRef": inplace("self"), "nan": arg("nan"), "posinf": arg("posinf"), "neginf": arg("neginf")},
            (OPAPI + "NanToNumKernelNpuOpApi.cpp:119",), "in-place form of NanToNum"),
    HandRow("aclnnHistc", "histc.default", {"self": arg("self"), "bins": arg("bins"), "min": arg("min"),
                                            "max": arg("max"), "out": res(0)},
            (OPAPI + "HistcKernelNpuOpApi.cpp:58",),
            "op-plugin replaces min == max == 0 by the data's range, which aten's histc does itself"),
    HandRow("aclnnPdist", "_pdist_forward.default", {"self": arg("self"), "p": arg("p"), "out": res(0)},
            (OPAPI + "PdistKernelNpuOpApi.cpp:38",), "p converted from double to float; nothing else"),
    HandRow("aclnnSearchSorted", "searchsorted.Tensor",
            {"sortedSequence": arg("sorted_sequence"), "self": arg("self"), "outInt32": arg("out_int32"),
             "right": arg("right"), "sorter": arg("sorter"), "out": res(0)},
            ("op_plugin/config/op_plugin_functions.yaml:4559",),
            "right is computed as right || side == 'right'; side stays at its default None here"),
    HandRow("aclnnSearchSorteds", "searchsorted.Scalar",
            {"sortedSequence": arg("sorted_sequence"), "self": arg("self"), "outInt32": arg("out_int32"),
             "right": arg("right"), "sorter": arg("sorter"), "out": res(0)},
            ("op_plugin/config/op_plugin_functions.yaml:4547",), "as SearchSorted, with a scalar self"),
    HandRow("aclnnSWhere", "where.self", {"condition": arg("condition"), "self": arg("self"),
                                          "other": arg("other"), "out": res(0)},
            (OPAPI + "WhereKernelNpuOpApi.cpp:89",), "condition is only cast to bool (cond_cp)"),
    HandRow("aclnnLayerNorm", "native_layer_norm.default",
            {"input": arg("input"), "normalizedShape": arg("normalized_shape"), "weightOptional": arg("weight"),
             "biasOptional": arg("bias"), "eps": arg("eps"), "out": res(0), "meanOutOptional": res(1),
             "rstdOutOptional": res(2)},
            (OPAPI + "LayerNormKernelNpuOpApi.cpp:98",),
            "op-plugin substitutes ones/zeros for an undefined weight/bias, which is what None means to aten"),
    HandRow("aclnnLayerNormBackward", "native_layer_norm_backward.default",
            {"gradOut": arg("grad_out"), "input": arg("input"), "normalizedShape": arg("normalized_shape"),
             "mean": arg("mean"), "rstd": arg("rstd"), "weightOptional": arg("weight"),
             "biasOptional": arg("bias"), "outputMask": arg("output_mask"), "gradInputOut": res(0),
             "gradWeightOut": res(1), "gradBiasOut": res(2)},
            (OPAPI + "LayerNormBackwardKernelNpuOpApi.cpp:76",),
            "mean/rstd are only reshaped to the header's layout, which is aten's own [batch..., 1...]"),
    HandRow("aclnnNLLLoss", "nll_loss_forward.default",
            {"self": arg("self"), "target": arg("target"), "weight": arg("weight"), "reduction": arg("reduction"),
             "ignoreIndex": arg("ignore_index"), "out": res(0), "totalWeightOut": res(1)},
            (OPAPI + "NLLLossKernelNpuOpApi.cpp:29",),
            "op-plugin passes ones for an undefined weight; aten's None weight is all ones"),
    HandRow("aclnnNLLLoss2d", "nll_loss2d_forward.default",
            {"self": arg("self"), "target": arg("target"), "weight": arg("weight"), "reduction": arg("reduction"),
             "ignoreIndex": arg("ignore_index"), "out": res(0), "totalWeightOut": res(1)},
            (OPAPI + "NLLLoss2dKernelNpuOpApi.cpp:58",),
            "as NLLLoss: op-plugin passes ones (one per class) for an undefined weight, aten's None weight"),
    HandRow("aclnnNLLLossBackward", "nll_loss_backward.default",
            {"gradOutput": arg("grad_output"), "self": arg("self"), "target": arg("target"), "weight": arg("weight"),
             "reduction": arg("reduction"), "ignoreIndex": arg("ignore_index"), "totalWeight": arg("total_weight"),
             "out": res(0)},
            (OPAPI + "NLLLossBackwardKernelNpuOpApi.cpp:37",),
            "as NLLLoss: ones for an undefined weight are aten's None weight"),
    HandRow("aclnnRepeatInterleaveTensor", "repeat_interleave.Tensor",
            {"repeats": arg("repeats"), "outputSize": arg("output_size"), "out": res(0)},
            (OPAPI + "RepeatInterLeaveKernelNpuOpApi.cpp:242",),
            "op-plugin passes output_size, else the sum of repeats; the header requires outputSize to be that sum"),
    HandRow("aclnnRepeatInterleaveWithDim", "repeat_interleave.self_Tensor",
            {"self": arg("self"), "repeats": arg("repeats"), "dim": arg("dim"), "outputSize": arg("output_size"),
             "out": res(0)},
            (OPAPI + "RepeatInterLeaveKernelNpuOpApi.cpp:137",),
            "outputSize is the length along dim that the repeats give; aten's output_size is that length"),
    HandRow("aclnnRepeatInterleaveIntWithDim", "repeat_interleave.self_int",
            {"self": arg("self"), "repeats": arg("repeats"), "dim": arg("dim"), "outputSize": arg("output_size"),
             "out": res(0)},
            (OPAPI + "RepeatInterLeaveKernelNpuOpApi.cpp:105",), "as RepeatInterleaveWithDim, with an int repeats"),
    HandRow("aclnnCummax", "cummax.default", {"self": arg("self"), "dim": arg("dim"), "valuesOut": res(0),
                                              "indicesOut": res(1)},
            (OPAPI + "CummaxKernelNpuOpApi.cpp:28",),
            "_cummax_helper writes cummax's values and indices into the tensors it is given"),
    HandRow("aclnnCummin", "cummin.default", {"self": arg("self"), "dim": arg("dim"), "valuesOut": res(0),
                                              "indicesOut": res(1)},
            (OPAPI + "CumminKernelNpuOpApi.cpp:27",), "as Cummax"),
    HandRow("aclnnIndexFillTensor", "index_fill.int_Scalar",
            {"self": arg("self"), "dim": arg("dim"), "index": arg("index"), "value": arg("value"), "out": res(0)},
            (OPAPI + "IndexFillKernelNpuOpApi.cpp:128",),
            "op-plugin copies the index tensor's values into the int array; aten takes them as a tensor"),
    HandRow("aclnnInplaceIndexFillTensor", "index_fill.int_Scalar",
            {"selfRef": inplace("self"), "dim": arg("dim"), "index": arg("index"), "value": arg("value")},
            (OPAPI + "IndexFillKernelNpuOpApi.cpp:106",), "in-place form of IndexFillTensor"),
    HandRow("aclnnForeachAddList", "_foreach_add.List",
            {"x1": arg("self"), "x2": arg("other"), "alpha": arg("alpha"), "out": res(0)},
            (OPAPI + "ForeachAddKernelNpuOpApi.cpp:40",), "alpha is copied to the device as a one-element tensor"),
    HandRow("aclnnForeachSubList", "_foreach_sub.List",
            {"x1": arg("self"), "x2": arg("other"), "alpha": arg("alpha"), "out": res(0)},
            (OPAPI + "ForeachSubKernelNpuOpApi.cpp:43",), "as ForeachAddList"),
    HandRow("aclnnForeachAddScalar", "_foreach_add.Scalar", {"x": arg("self"), "scalar": arg("scalar"),
                                                             "out": res(0)},
            (OPAPI + "ForeachAddScalarKernelNpuOpApi.cpp:34",), "the scalar copied to the device, value kept"),
    HandRow("aclnnForeachSubScalar", "_foreach_sub.Scalar", {"x": arg("self"), "scalar": arg("scalar"),
                                                             "out": res(0)},
            (OPAPI + "ForeachSubScalarInplaceKernelOpApi.cpp:36",), "the scalar copied to the device"),
    HandRow("aclnnForeachMulScalar", "_foreach_mul.Scalar", {"x": arg("self"), "scalar": arg("scalar"),
                                                             "out": res(0)},
            (OPAPI + "ForeachMulScalarKernelOpApi.cpp:61",), "the scalar copied to the device"),
    HandRow("aclnnForeachDivScalar", "_foreach_div.Scalar", {"x": arg("self"), "scalar": arg("scalar"),
                                                             "out": res(0)},
            (OPAPI + "ForeachDivKernelNpuOpApi.cpp:59",), "the scalar copied to the device"),
    HandRow("aclnnForeachPowScalar", "_foreach_pow.Scalar", {"x": arg("self"), "scalar": arg("exponent"),
                                                             "out": res(0)},
            (OPAPI + "ForeachPowScalarKernelNpuOpApi.cpp:60",), "the exponent copied to the device"),
    HandRow("aclnnForeachAddcdivScalar", "_foreach_addcdiv.Scalar",
            {"x1": arg("self"), "x2": arg("tensor1"), "x3": arg("tensor2"), "scalar": arg("value"), "out": res(0)},
            (OPAPI + "ForeachAddcdivScalarKernelNpuOpApi.cpp:45",), "value copied to the device"),
    HandRow("aclnnForeachAddcdivScalarV2", "_foreach_addcdiv.Scalar",
            {"x1": arg("self"), "x2": arg("tensor1"), "x3": arg("tensor2"), "scalar": arg("value"), "out": res(0)},
            (OPAPI + "ForeachAddcdivScalarKernelNpuOpApi.cpp:83",),
            "value as an aclScalar (adaptToDouble only widens it); lists longer than 50 are cut into calls"),
    HandRow("aclnnForeachPowScalarV2", "_foreach_pow.Scalar", {"x": arg("self"), "scalar": arg("exponent"),
                                                               "out": res(0)},
            (OPAPI + "ForeachPowScalarKernelNpuOpApi.cpp:82",), "the exponent as an aclScalar"),
    HandRow("aclnnForeachPowScalarAndTensor", "_foreach_pow.ScalarAndTensor",
            {"scalar": arg("self"), "x": arg("exponent"), "out": res(0)},
            (OPAPI + "ForeachPowScalarAndTensorKernelNpuOpApi.cpp:38",), "scalar ** each tensor"),
    HandRow("aclnnForeachDivScalarList", "_foreach_div.ScalarList",
            {"x": arg("self"), "scalars": arg("scalars"), "out": res(0)},
            (OPAPI + "ForeachDivKernelNpuOpApi.cpp:104",), "one scalar per tensor, passed through"),
    HandRow("aclnnForeachMulScalarList", "_foreach_mul.ScalarList",
            {"x": arg("self"), "scalars": arg("scalars"), "out": res(0)},
            (OPAPI + "ForeachMulKernelNpuOpApi.cpp:105",), "one scalar per tensor"),
    HandRow("aclnnForeachSubScalarList", "_foreach_sub.ScalarList",
            {"x": arg("self"), "scalars": arg("scalars"), "out": res(0)},
            (OPAPI + "ForeachSubKernelNpuOpApi.cpp:145",), "one scalar per tensor"),
    HandRow("aclnnForeachNorm", "_foreach_norm.Scalar", {"x": arg("self"), "scalar": arg("ord"), "out": res(0)},
            (OPAPI + "ForeachNormKernelOpApi.cpp:76",), "the order as an aclScalar; one norm per tensor"),
    HandRow("aclnnForeachRoundOffNumberV2", "_foreach_floor.default",
            {"x": arg("self"), "roundMode": lit(2), "out": res(0)},
            (OPAPI + "ForeachRoundOffNumberKernelNpuOpApi.cpp:83",), "ROUND_MODE_FLOOR = 2"),
    HandRow("aclnnForeachRoundOffNumberV2", "_foreach_ceil.default",
            {"x": arg("self"), "roundMode": lit(3), "out": res(0)},
            (OPAPI + "ForeachRoundOffNumberKernelNpuOpApi.cpp:83",), "ROUND_MODE_CEIL = 3"),
    HandRow("aclnnForeachRoundOffNumberV2", "_foreach_round.default",
            {"x": arg("self"), "roundMode": lit(1), "out": res(0)},
            (OPAPI + "ForeachRoundOffNumberKernelNpuOpApi.cpp:83",), "ROUND_MODE_ROUND = 1 (half to even, as aten)"),
    HandRow("aclnnForeachRoundOffNumberV2", "_foreach_trunc.default",
            {"x": arg("self"), "roundMode": lit(5), "out": res(0)},
            (OPAPI + "ForeachRoundOffNumberKernelNpuOpApi.cpp:83",), "ROUND_MODE_TRUNC = 5"),
    HandRow("aclnnForeachRoundOffNumberV2", "_foreach_frac.default",
            {"x": arg("self"), "roundMode": lit(7), "out": res(0)},
            (OPAPI + "ForeachRoundOffNumberKernelNpuOpApi.cpp:83",), "ROUND_MODE_FRAC = 7"),

    # ---- round 2: the CNN training step and other operators real models call -------------------
    HandRow("aclnnConvolution", "convolution.default",
            {"input": arg("input"), "weight": arg("weight"), "bias": arg("bias"), "stride": arg("stride"),
             "padding": arg("padding"), "dilation": arg("dilation"), "transposed": arg("transposed"),
             "outputPadding": arg("output_padding"), "groups": arg("groups"), "output": res(0),
             "cubeMathType": CUBE},
            (OPAPI + "ConvolutionKernelNpuOpApi.cpp:344",),
            "op-plugin only expands stride/padding/dilation/output_padding to one value per spatial dim (aten's "
            "convolution expands a single value the same way) and sizes the output from them"),
    HandRow("aclnnConvolutionBackward", "convolution_backward.default",
            {"gradOutput": arg("grad_output"), "input": arg("input"), "weight": arg("weight"),
             "biasSizes": arg("bias_sizes"), "stride": arg("stride"), "padding": arg("padding"),
             "dilation": arg("dilation"), "transposed": arg("transposed"), "outputPadding": arg("output_padding"),
             "groups": arg("groups"), "outputMask": arg("output_mask"), "cubeMathType": CUBE,
             "gradInput": res(0), "gradWeight": res(1), "gradBias": res(2)},
            (OPAPI + "ConvolutionBackwardKernelNpuOpApi.cpp:148",),
            "as Convolution: the lists are expanded per spatial dim; bias_sizes is passed as given and only checked "
            "when the bias gradient is asked for; the gradients aten leaves undefined under output_mask are left "
            "alone"),
    HandRow("aclnnBatchNormBackward", "native_batch_norm_backward.default",
            {"gradOut": arg("grad_out"), "input": arg("input"), "weight": arg("weight"),
             "runningMean": arg("running_mean"), "runningVar": arg("running_var"), "saveMean": arg("save_mean"),
             "saveInvstd": arg("save_invstd"), "training": arg("train"), "eps": arg("eps"),
             "outputMask": arg("output_mask"), "gradInput": res(0), "gradWeight": res(1), "gradBias": res(2)},
            (OPAPI + "BatchNormBackwardKernelNpuOpApi.cpp:63",),
            "every argument passes through; op-plugin allocates each gradient only when output_mask asks for it "
            "(float32 weight/bias gradients: the runner recomputes a wider output at its precision)"),
    HandRow("aclnnGroupNormBackward", "native_group_norm_backward.default",
            {"gradOut": arg("grad_out"), "input": arg("input"), "mean": arg("mean"), "rstd": arg("rstd"),
             "gamma": arg("weight"), "N": arg("N"), "C": arg("C"), "HxW": arg("HxW"), "group": arg("group"),
             "outputMask": arg("output_mask"), "gradInput": res(0), "gradGammaOut": res(1), "gradBetaOut": res(2)},
            (OPAPI + "GroupNormBackwardKernelNpuOpApi.cpp:51",),
            "op-plugin passes ones for an undefined gamma, which is what aten's None weight means"),
    HandRow("aclnnCumprod", "cumprod.default",
            {"input": arg("self"), "dim": arg("dim"), "dtype": arg("dtype"), "out": res(0)},
            ("op_plugin/config/op_plugin_functions.yaml:1908",),
            "dim is wrapped into an aclScalar (dim_scalar), dtype is the output's (dst_type): aten's dim and dtype"),
    HandRow("aclnnInplaceCumprod", "cumprod.default", {"input": inplace("self"), "dim": arg("dim")},
            ("header",), "cumulative product along dim, written into input (its dtype)"),
    HandRow("aclnnIndex", "index.Tensor",
            {"self": arg("self"), "indices": arg("indices"), "out": res(0)},
            (OPAPI + "IndexKernelNpuOpApi.cpp:40",),
            "op-plugin turns boolean masks into their nonzero int indices before the call (indices_tensor_list); "
            "aten's index does the same expansion itself, so the selected elements agree"),
    HandRow("aclnnIndexPutImpl", "_index_put_impl.default",
            {"selfRef": inplace("self"), "indices": arg("indices"), "values": arg("values"),
             "accumulate": arg("accumulate"), "unsafe": arg("unsafe")},
            (OPAPI + "IndexPutKernelNpuOpApi.cpp:163",),
            "as Index: boolean masks become int indices first, which aten's _index_put_impl does itself; "
            "accumulate adds at repeated indices"),
    HandRow("aclnnBincount", "bincount.default",
            {"self": arg("self"), "weights": arg("weights"), "minlength": arg("minlength"), "out": res(0)},
            (OPAPI + "BincountKernelNpuOpApi.cpp:55",),
            "op-plugin only sizes out (max(self) + 1, at least minlength), as aten's bincount does"),
    HandRow("aclnnRepeatInterleave", "repeat_interleave.self_Tensor",
            {"self": arg("self"), "repeats": arg("repeats"), "outputSize": arg("output_size"), "out": res(0)},
            (OPAPI + "RepeatInterLeaveKernelNpuOpApi.cpp:139",),
            "the dim-less branch: self flattened, each element repeated; outputSize is the flattened length, "
            "aten's output_size"),
    HandRow("aclnnRepeatInterleaveInt", "repeat_interleave.self_int",
            {"self": arg("self"), "repeats": arg("repeats"), "outputSize": arg("output_size"), "out": res(0)},
            (OPAPI + "RepeatInterLeaveKernelNpuOpApi.cpp:107",), "as RepeatInterleave, with an int repeats"),
    HandRow("aclnnEmbeddingBag", "_embedding_bag.default",
            {"weight": arg("weight"), "indices": arg("indices"), "offsets": arg("offsets"),
             "scaleGradByFreq": arg("scale_grad_by_freq"), "mode": arg("mode"), "sparse": arg("sparse"),
             "perSampleWeights": arg("per_sample_weights"), "includeLastOffset": arg("include_last_offset"),
             "paddingIdx": arg("padding_idx"), "output": res(0), "offset2bag": res(1), "bagSize": res(2),
             "maxIndices": res(3)},
            (OPAPI + "EmbeddingBagNpuOpApi.cpp:114",),
            "op-plugin sizes offset2bag/bag_size/max_indices by mode before the call; the values are aten's "
            "(mode 0 sum, 1 mean, 2 max)"),
    HandRow("aclnnAvgPool2d", "avg_pool2d.default",
            {"self": arg("self"), "kernelSize": arg("kernel_size"), "strides": arg("stride"),
             "paddings": arg("padding"), "ceilMode": arg("ceil_mode"), "countIncludePad": arg("count_include_pad"),
             "divisorOverride": lit(0), "cubeMathType": CUBE, "out": res(0)},
            (OPAPI + "AvgPool2dKernelNpuOpApi.cpp:41",),
            "op-plugin passes divisor_override.value_or(0): 0 is 'no override', aten's None",
            fixed={"divisor_override": None}),
    HandRow("aclnnAvgPool3d", "avg_pool3d.default",
            {"self": arg("self"), "kernelSize": arg("kernel_size"), "stride": arg("stride"),
             "padding": arg("padding"), "ceilMode": arg("ceil_mode"), "countIncludePad": arg("count_include_pad"),
             "divisorOverride": lit(0), "out": res(0)},
            (OPAPI + "AvgPool3dKernelNpuOpApi.cpp:45",),
            "as AvgPool2d: divisorOverride 0 is aten's None", fixed={"divisor_override": None}),
    HandRow("aclnnScatter", "scatter.reduce",
            {"self": arg("self"), "dim": arg("dim"), "index": arg("index"), "src": arg("src"), "reduce": lit(1),
             "out": res(0)},
            (OPAPI + "ScatterKernelNpuOpApi.cpp:60",), "get_reduce: 'add' -> 1", fixed={"reduce": "add"}),
    HandRow("aclnnScatter", "scatter.reduce",
            {"self": arg("self"), "dim": arg("dim"), "index": arg("index"), "src": arg("src"), "reduce": lit(2),
             "out": res(0)},
            (OPAPI + "ScatterKernelNpuOpApi.cpp:60",), "get_reduce: 'multiply' -> 2", fixed={"reduce": "multiply"}),
    HandRow("aclnnScatterValue", "scatter.value_reduce",
            {"self": arg("self"), "dim": arg("dim"), "index": arg("index"), "value": arg("value"), "reduce": lit(1),
             "out": res(0)},
            (OPAPI + "ScatterKernelNpuOpApi.cpp:87",), "get_reduce: 'add' -> 1", fixed={"reduce": "add"}),
    HandRow("aclnnScatterValue", "scatter.value_reduce",
            {"self": arg("self"), "dim": arg("dim"), "index": arg("index"), "value": arg("value"), "reduce": lit(2),
             "out": res(0)},
            (OPAPI + "ScatterKernelNpuOpApi.cpp:87",), "get_reduce: 'multiply' -> 2", fixed={"reduce": "multiply"}),
    HandRow("aclnnInplaceScatter", "scatter.reduce",
            {"selfRef": inplace("self"), "dim": arg("dim"), "index": arg("index"), "src": arg("src"),
             "reduce": lit(1)},
            ("header",), "reduce 1 (add), as Scatter's code, in place", fixed={"reduce": "add"}),
    HandRow("aclnnInplaceScatter", "scatter.reduce",
            {"selfRef": inplace("self"), "dim": arg("dim"), "index": arg("index"), "src": arg("src"),
             "reduce": lit(2)},
            ("header",), "reduce 2 (multiply), as Scatter's code, in place", fixed={"reduce": "multiply"}),
    HandRow("aclnnInplaceScatterValue", "scatter.value_reduce",
            {"selfRef": inplace("self"), "dim": arg("dim"), "index": arg("index"), "value": arg("value"),
             "reduce": lit(1)},
            ("header",), "reduce 1 (add), in place", fixed={"reduce": "add"}),
    HandRow("aclnnInplaceScatterValue", "scatter.value_reduce",
            {"selfRef": inplace("self"), "dim": arg("dim"), "index": arg("index"), "value": arg("value"),
             "reduce": lit(2)},
            ("header",), "reduce 2 (multiply), in place", fixed={"reduce": "multiply"}),
    HandRow("aclnnForeachAddcdivList", "_foreach_addcdiv.Tensor",
            {"x1": arg("self"), "x2": arg("tensor1"), "x3": arg("tensor2"), "scalars": arg("scalars"),
             "out": res(0)},
            ("header",), "x1[i] + scalars[i] * x2[i] / x3[i], one scalar per tensor held in a 1-D tensor"),
    HandRow("aclnnForeachAddcmulList", "_foreach_addcmul.Tensor",
            {"x1": arg("self"), "x2": arg("tensor1"), "x3": arg("tensor2"), "scalars": arg("scalars"),
             "out": res(0)},
            ("header",), "x1[i] + scalars[i] * x2[i] * x3[i], one scalar per tensor held in a 1-D tensor"),
    HandRow("aclnnLayerNormWithImplMode", "native_layer_norm.default",
            {"input": arg("input"), "normalizedShape": arg("normalized_shape"), "weightOptional": arg("weight"),
             "biasOptional": arg("bias"), "eps": arg("eps"), "out": res(0), "meanOutOptional": res(1),
             "rstdOutOptional": res(2),
             "implMode": ignored("the kernel's speed/precision mode; the CPU computes at full precision")},
            ("header",), "aclnnLayerNorm with an implementation mode; the same computation"),

    # ---- op-plugin does not call these; the 8.1.RC1 header documents the computation -----------
    HandRow("aclnnArgsort", "argsort.default", {"self": arg("self"), "dim": arg("dim"),
                                                "descending": arg("descending"), "out": res(0)},
            ("header",), "indices that sort self along dim; ties may order differently on the NPU"),
    HandRow("aclnnDiag", "diag.default", {"self": arg("self"), "diagonal": arg("diagonal"), "out": res(0)},
            ("header",), "1-D in: a matrix with it on the diagonal-th diagonal; 2-D in: that diagonal"),
    HandRow("aclnnDiagFlat", "diagflat.default", {"self": arg("self"), "diagonal": arg("offset"), "out": res(0)},
            ("header",), "self flattened onto the diagonal-th diagonal of a square matrix"),
    _unary("aclnnDigamma", "digamma.default", "psi(x), the derivative of lgamma"),
    _unary("aclnnLgamma", "lgamma.default", "log |Gamma(x)|"),
    _unary("aclnnLogSigmoid", "log_sigmoid.default", "log(1 / (1 + exp(-x)))"),
    _unary("aclnnLogdet", "logdet.default", "log det of each matrix (nan for a negative det)"),
    _unary("aclnnIsInf", "isinf.default", "x is +inf or -inf", x="x"),
    _unary("aclnnSelu", "selu.default", "scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with SELU's constants"),
    _inplace_unary("aclnnInplaceSelu", "selu.default", "in-place Selu"),
    _inplace_unary("aclnnInplaceCeil", "ceil.default", "in-place Ceil"),
    _inplace_unary("aclnnInplaceNeg", "neg.default", "in-place Neg"),
    _inplace_unary("aclnnInplaceRound", "round.default", "in-place Round (half to even, as aten)"),
    _inplace_unary("aclnnInplaceTrunc", "trunc.default", "in-place Trunc"),
    _inplace_unary("aclnnInplaceOne", "ones_like.default", "fills selfRef with ones, keeping its dtype"),
    HandRow("aclnnMean", "mean.dim", {"self": arg("self"), "dim": arg("dim"), "keepDim": arg("keepdim"),
                                      "dtype": arg("dtype"), "out": res(0)},
            ("header",), "mean over dim, computed in dtype"),
    HandRow("aclnnVar", "var.dim", {"self": arg("self"), "dim": arg("dim"), "unbiased": arg("unbiased"),
                                    "keepdim": arg("keepdim"), "out": res(0)},
            ("header",), "variance over dim, Bessel-corrected when unbiased"),
    HandRow("aclnnSlice", "slice.Tensor", {"self": arg("self"), "dim": arg("dim"), "start": arg("start"),
                                           "end": arg("end"), "step": arg("step"), "out": res(0)},
            ("header",), "self[start:end:step] along dim, copied into out"),
    HandRow("aclnnPermute", "permute.default", {"self": arg("self"), "dims": arg("dims"), "out": res(0)},
            ("header",), "self with its dims reordered, copied into out"),
    HandRow("aclnnExpand", "expand.default", {"self": arg("self"), "size": arg("size"), "out": res(0)},
            ("header",), "self broadcast to size, copied into out"),
    HandRow("aclnnGer", "ger.default", {"self": arg("self"), "vec2": arg("vec2"), "out": res(0)},
            ("header",), "outer product of two vectors"),
    HandRow("aclnnEinsum", "einsum.default", {"tensors": arg("tensors"), "equation": arg("equation"),
                                              "output": res(0)},
            ("header",), "Einstein summation of tensors by equation"),
    HandRow("aclnnCat", "cat.default", {"tensors": arg("tensors"), "dim": arg("dim"), "out": res(0)},
            ("header",), "tensors joined along dim"),
    HandRow("aclnnSplitTensor", "split.Tensor", {"self": arg("self"), "splitSections": arg("split_size"),
                                                 "dim": arg("dim"), "out": res(0)},
            ("header",), "self cut along dim into pieces of splitSections (the last may be shorter)"),
    HandRow("aclnnCircularPad2d", "pad.default", {"self": arg("self"), "padding": arg("pad"), "out": res(0)},
            ("header",), "the last two dims padded by wrapping around (padding: left, right, top, bottom)",
            fixed={"mode": "circular"}),
    HandRow("aclnnCircularPad3d", "pad.default", {"self": arg("self"), "padding": arg("pad"), "out": res(0)},
            ("header",), "the last three dims padded by wrapping around", fixed={"mode": "circular"}),
    HandRow("aclnnInplaceAddbmm", "addbmm.default",
            {"selfRef": inplace("self"), "batch1": arg("batch1"), "batch2": arg("batch2"), "beta": arg("beta"),
             "alpha": arg("alpha"), "cubeMathType": CUBE},
            ("header",), "beta * self + alpha * sum of batch1[i] @ batch2[i], in place"),
    HandRow("aclnnInplaceBaddbmm", "baddbmm.default",
            {"selfRef": inplace("self"), "batch1": arg("batch1"), "batch2": arg("batch2"), "beta": arg("beta"),
             "alpha": arg("alpha"), "cubeMathType": CUBE},
            ("header",), "beta * self + alpha * batch1 @ batch2, in place"),
    HandRow("aclnnInplaceBitwiseOrScalar", "bitwise_or.Scalar", {"selfRef": inplace("self"), "other": arg("other")},
            ("header",), "self | other, in place"),
    HandRow("aclnnInplaceBitwiseOrTensor", "bitwise_or.Tensor", {"selfRef": inplace("self"), "other": arg("other")},
            ("header",), "self | other, in place"),
    HandRow("aclnnInplaceCopy", "copy.default", {"selfRef": inplace("self"), "src": arg("src")},
            ("header",), "src broadcast and cast into selfRef"),
    HandRow("aclnnInplaceXLogYTensor", "xlogy.Tensor", {"selfRef": inplace("self"), "other": arg("other")},
            ("header",), "self * log(other) (0 where self is 0), in place"),
    HandRow("aclnnForeachAddcmulScalarV2", "_foreach_addcmul.Scalar",
            {"x1": arg("self"), "x2": arg("tensor1"), "x3": arg("tensor2"), "scalar": arg("value"), "out": res(0)},
            ("header",), "x1 + scalar * x2 * x3 per tensor"),
    HandRow("aclnnForeachAddcmulScalar", "_foreach_addcmul.Scalar",
            {"x1": arg("self"), "x2": arg("tensor1"), "x3": arg("tensor2"), "scalar": arg("value"), "out": res(0)},
            ("header",), "as ForeachAddcmulScalarV2, the scalar as a one-element tensor"),
    HandRow("aclnnForeachMaximumScalarV2", "_foreach_maximum.Scalar",
            {"x": arg("self"), "scalar": arg("scalar"), "out": res(0)},
            ("header",), "max(x, scalar) per tensor"),
    HandRow("aclnnForeachMaximumScalar", "_foreach_maximum.Scalar",
            {"x": arg("self"), "scalar": arg("scalar"), "out": res(0)},
            ("header",), "as ForeachMaximumScalarV2, the scalar as a one-element tensor"),
    HandRow("aclnnForeachMaximumScalarList", "_foreach_maximum.ScalarList",
            {"x": arg("self"), "scalars": arg("scalars"), "out": res(0)},
            ("header",), "max(x[i], scalars[i])"),
    HandRow("aclnnForeachMinimumScalarV2", "_foreach_minimum.Scalar",
            {"x": arg("self"), "scalar": arg("scalar"), "out": res(0)},
            ("header",), "min(x, scalar) per tensor"),
    HandRow("aclnnForeachMinimumScalar", "_foreach_minimum.Scalar",
            {"x": arg("self"), "scalar": arg("scalar"), "out": res(0)},
            ("header",), "as ForeachMinimumScalarV2, the scalar as a one-element tensor"),
    HandRow("aclnnForeachMinimumScalarList", "_foreach_minimum.ScalarList",
            {"x": arg("self"), "scalars": arg("scalars"), "out": res(0)},
            ("header",), "min(x[i], scalars[i])"),
    HandRow("aclnnCumsumV2", "cumsum.default",
            {"self": arg("self"), "dim": arg("dim"), "exclusive": lit(False), "reverse": lit(False), "out": res(0)},
            ("header",), "inclusive forward cumsum; the exclusive and reverse variants have no aten op"),
    HandRow("aclnnMseLossOut", "mse_loss.default", {"self": arg("self"), "target": arg("target"),
                                                    "reduction": arg("reduction"), "out": res(0)},
            ("header",), "(self - target)^2, reduced by the code aten uses (0 none, 1 mean, 2 sum)"),
    HandRow("aclnnPdistForward", "_pdist_forward.default", {"self": arg("self"), "pScalar": arg("p"),
                                                            "out": res(0)},
            ("header",), "p-norm distance between each pair of rows"),
    # torch.qr(some) is linalg_qr's reduced/complete mode; aten::qr itself is gone from torch 2.14
    HandRow("aclnnQr", "linalg_qr.default", {"self": arg("A"), "some": lit(True), "Q": res(0), "R": res(1)},
            ("header",), "QR decomposition, reduced when some", fixed={"mode": "reduced"}),
    HandRow("aclnnQr", "linalg_qr.default", {"self": arg("A"), "some": lit(False), "Q": res(0), "R": res(1)},
            ("header",), "QR decomposition, complete when not some", fixed={"mode": "complete"}),
)


# ---- why the rest have no CPU reference ------------------------------------------------------
# Every CANN 8.1.RC1 operator with no row, no hand formula and no description of this package
# is listed here with its reason, reviewed by hand; the generator copies the map into
# table.json ("no_reference"), table.why_missing returns it first, and a test fails for an
# operator without a reference that is missing here.

_MC2 = ("it needs an HCCL communication group (an MC2 operator fusing a collective with its compute): a "
        "single CPU process has no group to reduce, gather or dispatch across")
_PRIVATE = ("it reads or writes the NPU's private data format (the FRACTAL_NZ weight layout, compressed or packed "
            "weights, or the packed uint64 quantisation parameters), whose bytes this package does not model")
_DATA_DEPENDENT = ("op-plugin cuts its output to a shape the NPU reports: the output's size is known only after the "
                   "run (a maximum-size buffer, then the real shape read back)")
_NOT_YET = ("no formula written yet: a fused or domain-specific torch_npu operator (quantised, MoE, vision or "
            "sequence kernels) whose documentation has not been turned into one")

NO_REFERENCE: Mapping[str, str] = {
    **{f"aclnn{n}": _MC2 for n in (
        "AllGatherMatmul", "AlltoAllAllGatherBatchMatMul", "BatchMatMulReduceScatterAlltoAll",
        "GroupedMatMulAllReduce", "InplaceMatmulAllReduceAddRmsNorm", "InplaceQuantMatmulAllReduceAddRmsNorm",
        "InplaceWeightQuantMatmulAllReduceAddRmsNorm", "MatmulAllReduce", "MatmulAllReduceAddRmsNorm",
        "MatmulAllReduceV2", "MatmulReduceScatter", "MoeDistributeCombine", "MoeDistributeDispatch",
        "QuantMatmulAllReduce", "QuantMatmulAllReduceAddRmsNorm", "QuantMatmulAllReduceV2", "QuantMatmulAllReduceV3",
        "WeightQuantMatmulAllReduce", "WeightQuantMatmulAllReduceAddRmsNorm")},
    **{f"aclnn{n}": _PRIVATE for n in (
        "TransMatmulWeight", "TransConvolutionWeight", "GroupedMatmulFinalizeRoutingWeightNz", "QuantMatmulWeightNz",
        "MatmulCompressDequant", "ConvertWeightToINT4Pack", "TransQuantParamV2")},
    **{f"aclnn{n}": _DATA_DEPENDENT for n in (
        "MaskedSelect", "Nonzero", "NonzeroV2", "Unique", "Unique2", "UniqueConsecutive", "UniqueDim",
        "NonMaxSuppression")},
    "aclnnNormalFloatFloat": ("its output's shape comes only from the out tensor, and a formula receives the inputs "
                              "only: give one with register_reference"),
    "aclnnSilentCheck": "a device health monitor (silent data corruption statistics of the NPU): nothing to compute",
    "aclnnSilentCheckV2": "a device health monitor (silent data corruption statistics of the NPU): nothing to compute",
    "aclnnPrecisionCompare": "an NPU self-test comparing two buffers on the device: nothing a CPU result would mean",
    "aclRfft1D": "an FFT whose output layout (the NPU's real-FFT packing) the documentation does not fix",
    "aclStft": "an FFT whose output layout (the NPU's real-FFT packing) the documentation does not fix",
    **{f"aclnn{n}": _NOT_YET for n in (
        "AddLora", "AdvanceStep", "BackgroundReplace", "BatchMatmulQuant", "BidirectionLSTM", "BidirectionLSTMV2",
        "BlendImagesCustom", "ChamferDistanceBackward", "DequantBias", "DequantRopeQuantKvcache",
        "DequantSwigluQuant", "DynamicQuantV2", "FFN", "FFNV2", "FFNV3", "FlatQuant", "GroupQuant",
        "GroupedMatmulAdd", "GroupedMatmulSwigluQuant", "InplaceQuantScatter", "InplaceScatterUpdate", "Iou",
        "MaskedSoftmaxWithRelPosBias", "MlaProlog", "MoeFinalizeRoutingV2Grad", "MoeInitRoutingQuant",
        "MoeInitRoutingQuantV2", "MoeInitRoutingV2", "MoeInitRoutingV2Grad", "MoeTokenPermuteGrad",
        "MoeTokenUnpermuteGrad", "MrgbaCustom",
        "MultiScaleDeformableAttentionGrad", "MultiScaleDeformableAttnFunction", "QuantGroupedMatmulDequant",
        "QuantMatmulDequant", "Resize", "RingAttentionUpdate", "RoiAlign", "RoiAlignV2", "RoiAlignV2Backward",
        "SignBitsPack", "SignBitsUnpack", "Sinkhorn", "StridedSliceAssignV2", "SwiGluQuant",
        "SwinAttentionScoreQuant", "SwinTransformerLnQkvQuant")},
}
