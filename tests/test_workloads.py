"""The aclnn calls of three real workloads, replayed on the numpy backend against aten.

tests/fixtures/workloads/*.json lists, per workload, the aclnn operators torch_npu calls for
one step (each file's "derived" says how the list was made: the aten operators of the step,
mapped through op-plugin's source), with small shapes, dtypes and attributes. Every call must
run on the numpy backend (no CANN, no headers) and agree with an aten expression of what the
operator computes, written here independently of the package (ORACLES); a random operator
(check "sampled") is checked by the statistics its documentation implies.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import ascend_aclnn as aa

torch = pytest.importorskip("torch", reason="the oracles are aten operators (PyTorch CPU)")
F = torch.nn.functional
A = torch.ops.aten

WORKLOADS = sorted((Path(__file__).parent / "fixtures" / "workloads").glob("*.json"))
_DT = {"f32": np.float32, "i64": np.int64, "i8": np.int8, "u8": np.uint8, "bool": np.bool_}


def _tensor(spec: str, rng: np.random.Generator) -> Any:
    """'f32[2,3]' random normal; 'pos:' positive; 'ones:'; 'empty:' an output; 'i64[2]<10'
    indices below 10; 'tensor:0.9' a one-element float32 tensor; 'val:2.0' a 0-d one;
    'triu:bool[S,S]' a causal mask; 'softmax:'/'logsoftmax:' the forward's output;
    'genmask:P:N' a DropoutGenMaskV2 mask; 'maxpoolmask:' MaxPool2dWithMask's mask of a
    random input."""
    head, _, rest = spec.partition(":") if ":" in spec and not spec.startswith(("f32", "i64", "i8", "u8", "bool")) \
        else ("", "", spec)
    if head == "tensor":
        return np.array([float(rest)], np.float32)
    if head == "val":
        return np.array(float(rest), np.float32)
    if head == "genmask":
        p, n = rest.split(":")
        mask = np.empty(-(-int(n) // 128) * 16, np.uint8)
        return aa.aclnn.DropoutGenMaskV2(shape=[int(n)], prob=float(p), seed=3, offset=0,
                                         probDataType=np.dtype(np.float32), out=mask)
    m = re.fullmatch(r"(\w+)\[([\d,]*)\](?:<(\d+))?", rest)
    assert m, spec
    kind, dims, bound = m.group(1), m.group(2), m.group(3)
    shape = tuple(int(d) for d in dims.split(",") if d)
    dtype = _DT[kind]
    if head == "empty":
        return np.zeros(shape, dtype)
    if head == "triu":
        return np.triu(np.ones(shape, bool), 1)
    if bound is not None:
        return rng.integers(0, int(bound), shape).astype(dtype)
    x = np.asarray(rng.standard_normal(shape), dtype)
    if head == "pos":
        return np.asarray(np.abs(x) + 0.5, dtype)
    if head == "ones":
        return np.ones(shape, dtype)
    if head == "softmax":
        return torch.softmax(torch.from_numpy(x), -1).numpy()
    if head == "logsoftmax":
        return torch.log_softmax(torch.from_numpy(x), 1).numpy()
    if head == "maxpoolmask":
        mask = np.zeros((shape[0], shape[1], 9, 64), np.int8)
        aa.aclnn.MaxPool2dWithMask(self=x, kernelSize=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1],
                                   ceilMode=False, out=np.zeros((shape[0], shape[1], 4, 4), np.float32),
                                   indices=mask)
        return mask
    assert head == "", spec
    return x


_SPEC = re.compile(r"^(\w+:)?(f32|i64|i8|u8|bool)\[|^(tensor|val|genmask):")


def _value(v: Any, rng: np.random.Generator) -> Any:
    if isinstance(v, str) and v.startswith("dtype:"):
        return np.dtype(v[len("dtype:"):])
    if isinstance(v, str) and _SPEC.match(v):
        return _tensor(v, rng)
    if isinstance(v, list) and v and isinstance(v[0], str):
        return [_tensor(e, rng) for e in v]
    return v


def _t(a: Any) -> Any:
    return torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a


def _lt(a: list[Any]) -> list[Any]:
    return [_t(x) for x in a]


def _rm(self: Any, dim: Any = None) -> Any:
    return torch.cat([self, self])


def _maxpool(a: dict[str, Any]) -> dict[str, Any]:
    out, _ = A.max_pool2d_with_indices(_t(a["self"]), a["kernelSize"], a["stride"], a["padding"], a["dilation"],
                                       a["ceilMode"])
    return {"out": out}


def _maxpool_backward(a: dict[str, Any]) -> dict[str, Any]:
    # the mask's window maxima, read back as aten's indices by the package's documented converter
    idx = aa.masks.mask_to_indices(a["indices"], (2, 4, 4, 4))
    g = A.max_pool2d_with_indices_backward(_t(a["gradOutput"]), _t(a["self"]), a["kernelSize"], a["stride"],
                                           a["padding"], a["dilation"], a["ceilMode"], torch.from_numpy(idx))
    return {"gradInput": g}


def _batch_norm(a: dict[str, Any]) -> dict[str, Any]:
    rm, rv = _t(a["runningMean"]).clone(), _t(a["runningVar"]).clone()
    out, mean, invstd = A.native_batch_norm(_t(a["input"]), _t(a["weight"]), _t(a["bias"]), rm, rv, a["training"],
                                            a["momentum"], a["eps"])
    return {"output": out, "saveMean": mean, "saveInvstd": invstd, "runningMean": rm, "runningVar": rv}


def _fa(a: dict[str, Any]) -> dict[str, Any]:
    layout, n = a["inputLayout"], a["headNum"]

    def bnsd(x: Any) -> Any:
        x = _t(x)
        return x if layout == "BNSD" else x.reshape(x.shape[0], x.shape[1], n, -1).transpose(1, 2)
    q, k, v = bnsd(a["query"]), bnsd(a["key"]), bnsd(a["value"])
    out = F.scaled_dot_product_attention(q, k, v, is_causal=a["sparseMode"] == 2, scale=a["scaleValue"])
    if layout == "BSH":
        out = out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)
    return {"attentionOutOut": out}


def _rms_norm(a: dict[str, Any]) -> dict[str, Any]:
    x = _t(a["x"])
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a["epsilon"])
    return {"yOut": x * rstd * _t(a["gamma"]), "rstdOut": rstd}


def _adamw(a: dict[str, Any]) -> dict[str, Any]:
    p = torch.nn.Parameter(_t(a["varRef"]).clone())
    opt = torch.optim.AdamW([p], lr=a["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"],
                            weight_decay=a["weightDecay"])
    step = float(a["step"])
    opt.state[p] = {"step": torch.tensor(step - 1), "exp_avg": _t(a["mRef"]).clone(),
                    "exp_avg_sq": _t(a["vRef"]).clone()}
    p.grad = _t(a["grad"])
    opt.step()
    return {"varRef": p.detach(), "mRef": opt.state[p]["exp_avg"], "vRef": opt.state[p]["exp_avg_sq"]}


def _scalar(a: Any) -> float:
    return float(np.asarray(a).reshape(-1)[0])


# What each operator computes, as aten (written from the operator's documented semantics and
# op-plugin's mapping, not from the package's table or formulas): inputs by header name, the
# expected outputs by header name.
ORACLES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "aclnnConvolution": lambda a: {"output": F.conv2d(_t(a["input"]), _t(a["weight"]), _t(a["bias"]), a["stride"],
                                                      a["padding"], a["dilation"], a["groups"])},
    "aclnnBatchNorm": _batch_norm,
    "aclnnInplaceRelu": lambda a: {"selfRef": torch.relu(_t(a["selfRef"]))},
    "aclnnMaxPool2dWithMask": _maxpool,
    "aclnnInplaceAdd": lambda a: {"selfRef": _t(a["selfRef"]) + a["alpha"] * _t(a["other"])},
    "aclnnAdaptiveAvgPool2d": lambda a: {"out": F.adaptive_avg_pool2d(_t(a["self"]), a["outputSize"])},
    "aclnnAddmm": lambda a: {"out": torch.addmm(_t(a["self"]), _t(a["mat1"]), _t(a["mat2"]), beta=a["beta"],
                                                alpha=a["alpha"])},
    "aclnnLogSoftmax": lambda a: {"out": torch.log_softmax(_t(a["self"]), a["dim"])},
    "aclnnNLLLoss": lambda a: {"out": F.nll_loss(_t(a["self"]), _t(a["target"]), _t(a["weight"]))},
    "aclnnNLLLossBackward": lambda a: {"out": A.nll_loss_backward(_t(a["gradOutput"]), _t(a["self"]), _t(a["target"]),
                                                                  _t(a["weight"]), a["reduction"], a["ignoreIndex"],
                                                                  _t(a["totalWeight"]))},
    "aclnnLogSoftmaxBackward": lambda a: {"out": A._log_softmax_backward_data(_t(a["gradOutput"]), _t(a["output"]),
                                                                              a["dim"], torch.float32)},
    "aclnnMm": lambda a: {"out": _t(a["self"]) @ _t(a["mat2"])},
    "aclnnReduceSum": lambda a: {"out": _t(a["self"]).sum(a["dims"], keepdim=a["keepDims"])},
    "aclnnAdaptiveAvgPool2dBackward": lambda a: {"out": A._adaptive_avg_pool2d_backward(_t(a["gradOutput"]),
                                                                                        _t(a["self"]))},
    "aclnnThresholdBackward": lambda a: {"out": A.threshold_backward(_t(a["gradOutput"]), _t(a["self"]),
                                                                     a["threshold"])},
    "aclnnBatchNormBackward": lambda a: dict(zip(("gradInput", "gradWeight", "gradBias"), A.native_batch_norm_backward(
        _t(a["gradOut"]), _t(a["input"]), _t(a["weight"]), _t(a["runningMean"]), _t(a["runningVar"]),
        _t(a["saveMean"]), _t(a["saveInvstd"]), a["training"], a["eps"], a["outputMask"]))),
    "aclnnConvolutionBackward": lambda a: dict(zip(("gradInput", "gradWeight"), A.convolution_backward(
        _t(a["gradOutput"]), _t(a["input"]), _t(a["weight"]), None, a["stride"], a["padding"], a["dilation"],
        a["transposed"], a["outputPadding"], a["groups"], a["outputMask"])[:2])),
    "aclnnMaxPool2dWithMaskBackward": _maxpool_backward,
    "aclnnInplaceCopy": lambda a: {"selfRef": _t(a["src"])},
    "aclnnForeachAddList": lambda a: {"out": torch._foreach_add(_lt(a["x1"]), _lt(a["x2"]), alpha=_scalar(a["alpha"]))},
    "aclnnForeachMulScalar": lambda a: {"out": torch._foreach_mul(_lt(a["x"]), _scalar(a["scalar"]))},
    "aclnnBatchMatMul": lambda a: {"out": torch.bmm(_t(a["self"]), _t(a["mat2"]))},
    "aclnnDivs": lambda a: {"out": _t(a["self"]) / a["other"]},
    "aclnnSoftmax": lambda a: {"out": torch.softmax(_t(a["self"]), a["dim"])},
    "aclnnDropoutDoMask": lambda a: {"out": _t(a["self"]) * torch.from_numpy(
        np.unpackbits(a["mask"], bitorder="little")[:a["self"].size].reshape(a["self"].shape).astype(np.float32))
        / (1 - a["prob"])},
    "aclnnAdd": lambda a: {"out": _t(a["self"]) + a["alpha"] * _t(a["other"])},
    "aclnnLayerNorm": lambda a: dict(zip(("out", "meanOutOptional", "rstdOutOptional"), A.native_layer_norm(
        _t(a["input"]), a["normalizedShape"], _t(a["weightOptional"]), _t(a["biasOptional"]), a["eps"]))),
    # The tanh form: aclnnGelu's kernels compute it (8.1.RC1's TBE gelu and gelu_grad), as the CPU reference does.
    "aclnnGelu": lambda a: {"out": F.gelu(_t(a["self"]), approximate="tanh")},
    "aclnnGeluBackward": lambda a: {"gradInput": A.gelu_backward(_t(a["gradOutput"]), _t(a["self"]),
                                                                 approximate="tanh")},
    "aclnnLayerNormBackward": lambda a: dict(zip(("gradInputOut", "gradWeightOut", "gradBiasOut"),
                                                 A.native_layer_norm_backward(
        _t(a["gradOut"]), _t(a["input"]), a["normalizedShape"], _t(a["mean"]), _t(a["rstd"]), _t(a["weightOptional"]),
        _t(a["biasOptional"]), a["outputMask"]))),
    "aclnnSoftmaxBackward": lambda a: {"out": A._softmax_backward_data(_t(a["gradOutput"]), _t(a["output"]), a["dim"],
                                                                       torch.float32)},
    "aclnnForeachNorm": lambda a: {"out": torch._foreach_norm(_lt(a["x"]), a["scalar"])},
    "aclnnStack": lambda a: {"out": torch.stack(_lt(a["tensors"]), a["dim"])},
    "aclnnLinalgVectorNorm": lambda a: {"out": torch.linalg.vector_norm(_t(a["self"]), a["ord"])},
    "aclnnAdds": lambda a: {"out": _t(a["self"]) + a["alpha"] * a["other"]},
    "aclnnReciprocal": lambda a: {"out": torch.reciprocal(_t(a["self"]))},
    "aclnnMuls": lambda a: {"out": _t(a["self"]) * a["other"]},
    "aclnnClamp": lambda a: {"out": torch.clamp(_t(a["self"]), a["clipValueMin"], a["clipValueMax"])},
    "aclnnForeachLerpScalar": lambda a: {"out": torch._foreach_lerp(_lt(a["x1"]), _lt(a["x2"]), a["weight"])},
    "aclnnForeachAddcmulScalar": lambda a: {"out": torch._foreach_addcmul(_lt(a["x1"]), _lt(a["x2"]), _lt(a["x3"]),
                                                                          _scalar(a["scalar"]))},
    "aclnnForeachSqrt": lambda a: {"out": torch._foreach_sqrt(_lt(a["x"]))},
    "aclnnForeachDivScalar": lambda a: {"out": torch._foreach_div(_lt(a["x"]), _scalar(a["scalar"]))},
    "aclnnForeachAddScalar": lambda a: {"out": torch._foreach_add(_lt(a["x"]), _scalar(a["scalar"]))},
    "aclnnForeachAddcdivScalar": lambda a: {"out": torch._foreach_addcdiv(_lt(a["x1"]), _lt(a["x2"]), _lt(a["x3"]),
                                                                          _scalar(a["scalar"]))},
    "aclnnApplyAdamWV2": _adamw,
    "aclnnEmbedding": lambda a: {"out": F.embedding(_t(a["indices"]), _t(a["weight"]))},
    "aclnnPowTensorScalar": lambda a: {"out": _t(a["self"]) ** a["exponent"]},
    "aclnnMean": lambda a: {"out": _t(a["self"]).mean(a["dim"], keepdim=a["keepDim"])},
    "aclnnRsqrt": lambda a: {"out": torch.rsqrt(_t(a["self"]))},
    "aclnnMul": lambda a: {"out": _t(a["self"]) * _t(a["other"])},
    "aclnnMatmul": lambda a: {"out": _t(a["self"]) @ _t(a["mat2"])},
    "aclnnNeg": lambda a: {"out": -_t(a["self"])},
    "aclnnCat": lambda a: {"out": torch.cat(_lt(a["tensors"]), a["dim"])},
    "aclnnFlashAttentionScore": _fa,
    "aclnnSilu": lambda a: {"out": F.silu(_t(a["self"]))},
    "aclnnTopk": lambda a: dict(zip(("valuesOut", "indicesOut"), torch.topk(_t(a["self"]), a["k"], a["dim"],
                                                                           a["largest"], a["sorted"]))),
    "aclnnGather": lambda a: {"out": torch.gather(_t(a["self"]), a["dim"], _t(a["index"]))},
    "aclnnRmsNorm": _rms_norm,
    "aclnnSwiGlu": lambda a: {"out": F.silu(_t(a["x"]).chunk(2, a["dim"])[0]) * _t(a["x"]).chunk(2, a["dim"])[1]},
}


def _calls() -> list[Any]:
    found = []
    for path in WORKLOADS:
        data = json.loads(path.read_text())
        for i, call in enumerate(data["calls"]):
            found.append(pytest.param(data, call, id=f"{path.stem}-{i}-{call['op'][5:]}-{call['role']}"))
    return found


def test_the_three_workloads_are_recorded():
    names = [json.loads(p.read_text())["workload"] for p in WORKLOADS]
    assert len(names) == 3 and all(json.loads(p.read_text())["derived"] for p in WORKLOADS), names
    ops = {c["op"] for p in WORKLOADS for c in json.loads(p.read_text())["calls"]}
    assert {"aclnnConvolution", "aclnnConvolutionBackward", "aclnnBatchNorm", "aclnnBatchNormBackward",
            "aclnnSoftmaxBackward", "aclnnLogSoftmaxBackward", "aclnnApplyAdamWV2", "aclnnDropoutGenMaskV2",
            "aclnnDropoutDoMask", "aclnnMultinomial", "aclnnFlashAttentionScore"} <= ops


@pytest.mark.parametrize("workload,call", _calls())
def test_every_recorded_call_runs_on_the_numpy_backend_and_agrees_with_aten(numpy_backend, workload: Any,
                                                                           call: dict[str, Any]):
    rng = np.random.default_rng(abs(hash(call["role"])) % 2**32)
    args = {k: _value(v, rng) for k, v in call["args"].items()}
    before = {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else
                  [np.array(e, copy=True) for e in v] if isinstance(v, list) and v and isinstance(v[0], np.ndarray)
                  else v) for k, v in args.items()}
    op = getattr(aa.aclnn, call["op"][len("aclnn"):])
    op(**args)  # every output and in-place argument is written in place
    ref = aa.aclnn.reference(call["op"])
    if call.get("check") == "sampled":
        assert ref.tier == "sampled" and ref.stats is not None
        inputs = {k: v for k, v in before.items() if k in _inputs(call["op"])}
        outs = [args[p.name] for p in ref.prototype.params if p.is_output and not p.inplace]
        checks = ref.stats(inputs, outs)
        assert checks and all(c.passed for c in checks), checks
        return
    expected = ORACLES[call["op"]](before)
    assert expected
    for name, want in expected.items():
        got = args[name]
        if isinstance(want, (list, tuple)):
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g, np.float64), w.detach().double().numpy(), rtol=2e-4,
                                           atol=2e-5, err_msg=f"{call['op']} {name}")
        else:
            np.testing.assert_allclose(np.asarray(got, np.float64), want.detach().double().numpy().reshape(
                np.shape(got)), rtol=2e-4, atol=2e-5, err_msg=f"{call['op']} {name}")


def _inputs(op: str) -> set[str]:
    ref = aa.aclnn.reference(op)
    return {p.name for p in ref.prototype.params if not p.is_output or p.inplace}
