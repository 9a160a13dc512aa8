"""The attention family: FlashAttentionScore (forward, backward, variable length), and the
inference operators PromptFlashAttention, IncreFlashAttention and FusedInferAttentionScore.

One core computes every member, per batch, in float32, on (N, S, D) blocks:
scores = scale * (pse + Q K^T) for the training family (its doc's formula) and
scale * Q K^T + pse for the inference family (theirs); masked positions are removed
before the softmax; out = softmax(scores) V. K/V with fewer heads than Q (GQA) are shared
by consecutive query heads.

Layouts: BSH, SBH, BSND, BNSD, and TND (tokens of every batch concatenated, cut by the
cumulative actualSeqQLen/actualSeqKvLen lists; the variable-length operators), plus the
inference family's BNSD_BSND (BNSD in, BSND out).

Sparse modes (sparseMode, the docs' table; i is the query row, j the key column, S1/S2
the batch's query/key lengths):
  0 preTokens/nextTokens band around the diagonal (j - i > nextTokens or i - j > preTokens
    masked), and attenMask where given (True masks);
  1 attenMask as given, no band;
  2 causal aligned top-left (j > i masked);
  3 causal aligned bottom-right (j > i + S2 - S1 masked);
  4 the band aligned bottom-right (j > i + S2 - S1 + nextTokens or
    j < i + S2 - S1 - preTokens masked);
  5, 6 prefix: bottom-right causal, except the first prefix[b] keys, always visible.
For modes 2 to 6 the attenMask the caller passes is the compressed (2048, 2048) pattern
CANN requires; the mask is computed from the mode, not read from it. Modes 7 and 8
(variable-length band combinations) are refused, as are dropout (keepProb < 1: the NPU's
random mask), paddingMask, and the quantised and paged (blockTable) inference modes.
A row whose every key is masked is undefined in the docs; here the training family gives
NaN, and the inference family 0 (its docs say such rows are output as 0).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ._common import _DOC, Array, Formula, _f, _f32, _invalid

__all__ = ["FORMULAS"]

_LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")


def _blocks(op: str, t: Array, layout: str, heads: Optional[int], cum: Optional[Sequence[int]],
            name: str) -> list[Array]:
    """One (N, S, D) block per batch, from the layout."""
    if layout == "TND":
        if cum is None:
            raise _invalid(op, "actualSeqQLenOptional", "expected the cumulative sequence lengths for layout TND")
        if t.ndim != 3:
            raise _invalid(op, name, f"expected (T, N, D) for layout TND, got {t.shape}")
        ends = [int(c) for c in cum]
        if any(b < a for a, b in zip([0] + ends, ends)) or (ends and ends[-1] > t.shape[0]):
            raise _invalid(op, name, f"expected non-decreasing cumulative lengths within T {t.shape[0]}, got {ends}")
        return [t[a:b].transpose(1, 0, 2) for a, b in zip([0] + ends, ends)]
    if t.ndim != (3 if layout in ("BSH", "SBH") else 4):
        raise _invalid(op, name, f"expected a {3 if layout in ('BSH', 'SBH') else 4}-D tensor for layout {layout}, "
                                 f"got {t.shape}")
    if layout == "BNSD":
        return list(t)
    if layout == "BSND":
        return list(t.transpose(0, 2, 1, 3))
    bsh = t if layout == "BSH" else t.transpose(1, 0, 2)
    assert heads is not None
    if heads <= 0 or bsh.shape[-1] % heads:
        raise _invalid(op, name, f"H {bsh.shape[-1]} is not a multiple of the head count {heads}")
    return list(bsh.reshape(bsh.shape[0], bsh.shape[1], heads, -1).transpose(0, 2, 1, 3))


def _unblocks(blocks: list[Array], layout: str) -> Array:
    """The (N, S, D) blocks back in the layout."""
    if layout == "TND":
        return np.concatenate([b.transpose(1, 0, 2) for b in blocks], axis=0) if blocks else np.zeros((0,))
    bnsd = np.stack(blocks)
    if layout == "BNSD":
        return bnsd
    if layout == "BSND":
        return bnsd.transpose(0, 2, 1, 3)
    b, n, s, d = bnsd.shape
    bsh = bnsd.transpose(0, 2, 1, 3).reshape(b, s, n * d)
    return bsh if layout == "BSH" else bsh.transpose(1, 0, 2)


def _kv_heads(op: str, layout: str, key: Array, d: int, given: Optional[int] = None) -> Optional[int]:
    if layout not in ("BSH", "SBH"):
        return None
    if given:
        return given
    if key.shape[-1] % d:
        raise _invalid(op, "key", f"H {key.shape[-1]} is not a multiple of D {d}")
    return int(key.shape[-1]) // d


def _band_mask(mode: int, s1: int, s2: int, pre: int, nxt: int, prefix: Optional[int]) -> Optional[Array]:
    """True where the mode masks a position, or None when it masks nothing by itself."""
    i, j = np.arange(s1)[:, None], np.arange(s2)[None, :]
    shift = s2 - s1
    if mode == 0:
        return (j - i > nxt) | (i - j > pre)
    if mode == 1:
        return None
    if mode == 2:
        return j > i
    if mode == 3:
        return j > i + shift
    if mode == 4:
        return (j > i + shift + nxt) | (j < i + shift - pre)
    assert mode in (5, 6)
    return (j > i + shift) & (j >= (prefix or 0))


def _check_mode(op: str, mode: int) -> None:
    if mode in (7, 8):
        raise NotImplementedError(f"aclnn{op}: sparseMode {mode} (a variable-length band combination) is not "
                                  f"supported by the CPU reference")
    if mode not in range(7):
        raise _invalid(op, "sparseMode", f"expected 0 to 8, got {mode}")


def _atten_for(atten: Optional[Array], b: int, batches: int) -> Optional[Array]:
    """The batch's slice of an attenMask of shape (S1, S2), (B, 1|N, S1, S2) or (B, S1, S2)."""
    if atten is None:
        return None
    m = np.asarray(atten).astype(bool)
    out: Array = m
    if m.ndim >= 3 and m.shape[0] == batches and batches > 1:
        out = m[b]
    elif m.ndim == 4 and m.shape[0] == 1:
        out = m[0]
    return out


def _core(q: Array, k: Array, v: Array, scale: float, pse: Optional[Array], masked: Optional[Array],
          pse_in_scale: bool) -> tuple[Array, Array, Array, Array]:
    """Per-batch attention: q (N, S1, D), k/v (Nkv, S2, D). Returns (out, max, sum, P) with
    max/sum of shape (N, S1, 1): the row max of the scores and the sum of exp(s - max)."""
    n, nkv = q.shape[0], k.shape[0]
    if nkv == 0 or n % nkv or k.shape[-1] != q.shape[-1] or v.shape[:2] != k.shape[:2]:
        raise _invalid("FlashAttentionScore", "key", f"expected key/value with a head count dividing {n} and head "
                                                     f"dim {q.shape[-1]}, got key {k.shape}, value {v.shape}")
    g = n // nkv
    k, v = np.repeat(k, g, axis=0), np.repeat(v, g, axis=0)
    s: Array = q @ k.transpose(0, 2, 1)
    if pse is not None:
        s = np.float32(scale) * (s + pse) if pse_in_scale else np.float32(scale) * s + pse
    else:
        s = np.float32(scale) * s
    if masked is not None:
        s = np.where(np.broadcast_to(masked, s.shape), np.float32(-np.inf), s)
    with np.errstate(invalid="ignore"):
        mx = s.max(axis=-1, keepdims=True)
        z = np.exp(s - mx)
        sm = z.sum(axis=-1, keepdims=True)
        p = z / sm
        out = p @ v
    return out.astype(np.float32), mx.astype(np.float32), sm.astype(np.float32), p.astype(np.float32)


def _pse_for(pse: Optional[Array], b: int, batches: int) -> Optional[Array]:
    if pse is None:
        return None
    p = _f32(pse)
    out: Array = (p[b] if p.shape[0] == batches else p[0]) if p.ndim == 4 else p
    return out


class _Setup:
    """The call's blocks and per-batch masks, shared by the forward and the backward."""

    def __init__(self, op: str, query: Array, key: Array, value: Array, pse: Optional[Array], atten: Optional[Array],
                 prefix: Optional[Sequence[int]], seq_q: Optional[Sequence[int]], seq_kv: Optional[Sequence[int]],
                 pre: int, nxt: int, heads: int, layout: str, mode: int, kv_heads: Optional[int] = None) -> None:
        if layout not in _LAYOUTS:
            raise NotImplementedError(f"aclnn{op}: inputLayout {layout!r}: the CPU reference takes "
                                      f"{', '.join(_LAYOUTS)}")
        if heads <= 0:
            raise _invalid(op, "headNum", f"expected > 0, got {heads}")
        _check_mode(op, mode)
        if layout == "TND" and pse is not None:
            raise NotImplementedError(f"aclnn{op}: a pse with layout TND is not supported by the CPU reference")
        self.layout = layout
        self.q = _blocks(op, _f32(query), layout, heads, seq_q, "query")
        d = self.q[0].shape[-1] if self.q else 1
        nkv = _kv_heads(op, layout, np.asarray(key), d, kv_heads)
        self.k = _blocks(op, _f32(key), layout, nkv, seq_kv if seq_kv is not None else seq_q, "key")
        self.v = _blocks(op, _f32(value), layout, nkv, seq_kv if seq_kv is not None else seq_q, "value")
        if not len(self.q) == len(self.k) == len(self.v):
            raise _invalid(op, "key", f"expected {len(self.q)} batches of key/value, got {len(self.k)}")
        batches = len(self.q)
        if mode in (5, 6) and (prefix is None or len(prefix) < batches):
            raise _invalid(op, "prefixOptional", f"expected one prefix length per batch ({batches}) for sparseMode "
                                                 f"{mode}, got {prefix}")
        self.pse = [_pse_for(pse, b, batches) for b in range(batches)]
        self.masks: list[Optional[Array]] = []
        for b in range(batches):
            s1, s2 = self.q[b].shape[1], self.k[b].shape[1]
            m = _band_mask(mode, s1, s2, pre, nxt, int(prefix[b]) if mode in (5, 6) and prefix else None)
            if mode in (0, 1):
                a = _atten_for(atten, b, batches)
                if a is not None:
                    a = a[..., :s1, :s2]
                    m = a if m is None else (m | a)
            self.masks.append(m)


def _fa_forward(op: str, query: Array, key: Array, value: Array, realShiftOptional: Optional[Array],
                dropMaskOptional: Optional[Array], paddingMaskOptional: Optional[Array],
                attenMaskOptional: Optional[Array], prefixOptional: Optional[Sequence[int]],
                seq_q: Optional[Sequence[int]], seq_kv: Optional[Sequence[int]], scaleValue: float,
                keepProb: float, preTokens: int, nextTokens: int, headNum: int, inputLayout: str,
                sparseMode: int, pse_in_scale: bool = True) -> tuple[Array, Array, None, Array]:
    if keepProb != 1.0 or dropMaskOptional is not None:
        raise NotImplementedError(f"aclnn{op}: dropout (keepProb < 1 or dropMaskOptional) draws the NPU's random "
                                  "mask, which a CPU reference cannot reproduce")
    if paddingMaskOptional is not None:
        raise NotImplementedError(f"aclnn{op}: paddingMaskOptional is not supported by the CPU reference")
    st = _Setup(op, query, key, value, realShiftOptional, attenMaskOptional, prefixOptional, seq_q, seq_kv,
                preTokens, nextTokens, headNum, inputLayout, sparseMode)
    outs, mxs, sms = [], [], []
    for b in range(len(st.q)):
        o, mx, sm, _ = _core(st.q[b], st.k[b], st.v[b], scaleValue, st.pse[b], st.masks[b], pse_in_scale)
        outs.append(o)
        mxs.append(np.tile(mx, (1, 1, 8)))
        sms.append(np.tile(sm, (1, 1, 8)))
    if inputLayout == "TND":  # (T, N, 8)
        mx_all = np.concatenate([m.transpose(1, 0, 2) for m in mxs], axis=0)
        sm_all = np.concatenate([m.transpose(1, 0, 2) for m in sms], axis=0)
    else:  # (B, N, S1, 8)
        mx_all, sm_all = np.stack(mxs), np.stack(sms)
    return mx_all, sm_all, None, _unblocks(outs, inputLayout)


def flash_attention_score(query: Array, key: Array, value: Array, realShiftOptional: Optional[Array],
                          dropMaskOptional: Optional[Array], paddingMaskOptional: Optional[Array],
                          attenMaskOptional: Optional[Array], prefixOptional: Optional[Sequence[int]],
                          scaleValue: float, keepProb: float, preTokens: int, nextTokens: int, headNum: int,
                          inputLayout: str, innerPrecise: int, sparseMode: int
                          ) -> tuple[Array, Array, None, Array]:
    """Softmax(Mask(scale * (pse + Q K^T))) V, forward: returns (softmaxMaxOut, softmaxSumOut,
    softmaxOutOut (left alone), attentionOutOut). softmaxMax/Sum: the row max and the sum of
    exp(s - max), float32, (B, N, S1, 8) with the value repeated along the last dim as the
    doc's layout has it. innerPrecise (a precision knob) is ignored."""
    return _fa_forward("FlashAttentionScore", query, key, value, realShiftOptional, dropMaskOptional,
                       paddingMaskOptional, attenMaskOptional, prefixOptional, None, None, scaleValue, keepProb,
                       preTokens, nextTokens, headNum, inputLayout, sparseMode)


def flash_attention_var_len_score(query: Array, key: Array, value: Array, realShiftOptional: Optional[Array],
                                  dropMaskOptional: Optional[Array], paddingMaskOptional: Optional[Array],
                                  attenMaskOptional: Optional[Array], prefixOptional: Optional[Sequence[int]],
                                  actualSeqQLenOptional: Optional[Sequence[int]],
                                  actualSeqKvLenOptional: Optional[Sequence[int]], scaleValue: float,
                                  keepProb: float, preTokens: int, nextTokens: int, headNum: int, inputLayout: str,
                                  innerPrecise: int, sparseMode: int) -> tuple[Array, Array, None, Array]:
    """FlashAttentionScore over layout TND: the batches cut from T by the cumulative
    actualSeqQLen/actualSeqKvLen; softmaxMax/Sum of shape (T, N, 8)."""
    return _fa_forward("FlashAttentionVarLenScore", query, key, value, realShiftOptional, dropMaskOptional,
                       paddingMaskOptional, attenMaskOptional, prefixOptional, actualSeqQLenOptional,
                       actualSeqKvLenOptional, scaleValue, keepProb, preTokens, nextTokens, headNum, inputLayout,
                       sparseMode)


def _fa_backward(op: str, query: Array, keyIn: Array, value: Array, dy: Array, pse: Optional[Array],
                 drop: Optional[Array], padding: Optional[Array], atten: Optional[Array],
                 prefix: Optional[Sequence[int]], seq_q: Optional[Sequence[int]], seq_kv: Optional[Sequence[int]],
                 scale: float, keepProb: float, pre: int, nxt: int, heads: int, layout: str, mode: int,
                 pse_in_scale: bool = True) -> tuple[Array, Array, Array, Optional[Array]]:
    if keepProb != 1.0 or drop is not None:
        raise NotImplementedError(f"aclnn{op}: dropout (keepProb < 1 or dropMaskOptional) is not supported by the "
                                  "CPU reference")
    if padding is not None:
        raise NotImplementedError(f"aclnn{op}: paddingMaskOptional is not supported by the CPU reference")
    st = _Setup(op, query, keyIn, value, pse, atten, prefix, seq_q, seq_kv, pre, nxt, heads, layout, mode)
    dys = _blocks(op, _f32(dy), layout, heads, seq_q, "dy")
    dqs, dks, dvs, dpses = [], [], [], []
    for b in range(len(st.q)):
        q, k, v = st.q[b], st.k[b], st.v[b]
        o, _, _, p = _core(q, k, v, scale, st.pse[b], st.masks[b], pse_in_scale)
        g = q.shape[0] // k.shape[0]
        kr, vr = np.repeat(k, g, axis=0), np.repeat(v, g, axis=0)
        do = dys[b]
        p = np.nan_to_num(p)  # a fully masked row contributes nothing
        dv = p.transpose(0, 2, 1) @ do
        dp = do @ vr.transpose(0, 2, 1)
        dl = p * (dp - np.sum(do * np.nan_to_num(o), axis=-1, keepdims=True))
        dq = np.float32(scale) * dl @ kr
        dk = np.float32(scale) * dl.transpose(0, 2, 1) @ q
        nkv = k.shape[0]
        dks.append(dk.reshape(nkv, g, *dk.shape[1:]).sum(axis=1))
        dvs.append(dv.reshape(nkv, g, *dv.shape[1:]).sum(axis=1))
        dqs.append(dq)
        dpses.append(np.float32(scale) * dl if pse_in_scale else dl)
    dpse: Optional[Array] = None
    if pse is not None:
        full = np.stack(dpses)
        shape = np.shape(pse)
        if len(shape) == 4:  # sum over the dims the pse was broadcast along
            axes = tuple(i for i in range(4) if shape[i] == 1 and full.shape[i] != 1)
            dpse = full.sum(axis=axes, keepdims=True)
        else:
            dpse = full.sum(axis=0).reshape(shape) if full.ndim - len(shape) == 1 else full
    return _unblocks(dqs, layout), _unblocks(dks, layout), _unblocks(dvs, layout), dpse


def flash_attention_score_grad(query: Array, keyIn: Array, value: Array, dy: Array, pseShiftOptional: Optional[Array],
                               dropMaskOptional: Optional[Array], paddingMaskOptional: Optional[Array],
                               attenMaskOptional: Optional[Array], softmaxMaxOptional: Optional[Array],
                               softmaxSumOptional: Optional[Array], softmaxInOptional: Optional[Array],
                               attentionInOptional: Optional[Array], prefixOptional: Optional[Sequence[int]],
                               scaleValue: float, keepProb: float, preTokens: int, nextTokens: int, headNum: int,
                               inputLayout: str, innerPrecise: int, sparseMode: int
                               ) -> tuple[Array, Array, Array, Optional[Array]]:
    """Backward of FlashAttentionScore: with P the softmax and L = scale*(pse + QK^T), dV =
    P^T dy, dL = P * (dy V^T - rowsum(dy * O)), dQ = scale dL K, dK = scale dL^T Q, dpse =
    scale dL (summed over pse's broadcast dims; left alone without a pse). The forward's
    saved softmaxMax/Sum/attentionIn only spare the kernel work: the reference recomputes
    them from Q, K, V. Returns (dqOut, dkOut, dvOut, dpseOut)."""
    return _fa_backward("FlashAttentionScoreGrad", query, keyIn, value, dy, pseShiftOptional, dropMaskOptional,
                        paddingMaskOptional, attenMaskOptional, prefixOptional, None, None, scaleValue, keepProb,
                        preTokens, nextTokens, headNum, inputLayout, sparseMode)


def flash_attention_unpadding_score_grad(query: Array, keyIn: Array, value: Array, dy: Array,
                                         pseShiftOptional: Optional[Array], dropMaskOptional: Optional[Array],
                                         paddingMaskOptional: Optional[Array], attenMaskOptional: Optional[Array],
                                         softmaxMaxOptional: Optional[Array], softmaxSumOptional: Optional[Array],
                                         softmaxInOptional: Optional[Array], attentionInOptional: Optional[Array],
                                         prefixOptional: Optional[Sequence[int]],
                                         actualSeqQLenOptional: Optional[Sequence[int]],
                                         actualSeqKvLenOptional: Optional[Sequence[int]], scaleValue: float,
                                         keepProb: float, preTokens: int, nextTokens: int, headNum: int,
                                         inputLayout: str, innerPrecise: int, sparseMode: int
                                         ) -> tuple[Array, Array, Array, Optional[Array]]:
    """Backward of FlashAttentionVarLenScore (layout TND)."""
    return _fa_backward("FlashAttentionUnpaddingScoreGrad", query, keyIn, value, dy, pseShiftOptional,
                        dropMaskOptional, paddingMaskOptional, attenMaskOptional, prefixOptional,
                        actualSeqQLenOptional, actualSeqKvLenOptional, scaleValue, keepProb, preTokens, nextTokens,
                        headNum, inputLayout, sparseMode)


def _pse_type(op: str, pseType: int, qStart: Any, kvStart: Any) -> bool:
    """V2's pseType: 1 adds the pse before the scale (V1's formula), 0 after it; 2 and 3 (an
    ALiBi pse the kernel generates) and the start indices that place it are refused."""
    if pseType in (2, 3) or not _none_or_empty(qStart) or not _none_or_empty(kvStart):
        raise NotImplementedError(f"aclnn{op}: pseType {pseType} / qStartIdx / kvStartIdx (a pse generated by the "
                                  f"kernel) are not supported by the CPU reference")
    if pseType not in (0, 1):
        raise _invalid(op, "pseType", f"expected 0 to 3, got {pseType}")
    return pseType == 1


def _none_or_empty(v: Any) -> bool:
    return v is None or (isinstance(v, (list, tuple)) and len(v) == 0)


def flash_attention_score_v2(query: Array, key: Array, value: Array, realShiftOptional: Optional[Array],
                             dropMaskOptional: Optional[Array], paddingMaskOptional: Optional[Array],
                             attenMaskOptional: Optional[Array], prefixOptional: Optional[Sequence[int]],
                             qStartIdxOptional: Any, kvStartIdxOptional: Any, scaleValue: float, keepProb: float,
                             preTokens: int, nextTokens: int, headNum: int, inputLayout: str, innerPrecise: int,
                             sparseMode: int, pseType: int) -> tuple[Array, Array, None, Array]:
    """FlashAttentionScore with pseType: 1 is V1's scale * (pse + QK^T), 0 is scale * QK^T + pse."""
    inside = _pse_type("FlashAttentionScoreV2", pseType, qStartIdxOptional, kvStartIdxOptional)
    return _fa_forward("FlashAttentionScoreV2", query, key, value, realShiftOptional, dropMaskOptional,
                       paddingMaskOptional, attenMaskOptional, prefixOptional, None, None, scaleValue, keepProb,
                       preTokens, nextTokens, headNum, inputLayout, sparseMode, inside)


def flash_attention_var_len_score_v2(query: Array, key: Array, value: Array, realShiftOptional: Optional[Array],
                                     dropMaskOptional: Optional[Array], paddingMaskOptional: Optional[Array],
                                     attenMaskOptional: Optional[Array], prefixOptional: Optional[Sequence[int]],
                                     actualSeqQLenOptional: Optional[Sequence[int]],
                                     actualSeqKvLenOptional: Optional[Sequence[int]], qStartIdxOptional: Any,
                                     kvStartIdxOptional: Any, scaleValue: float, keepProb: float, preTokens: int,
                                     nextTokens: int, headNum: int, inputLayout: str, innerPrecise: int,
                                     sparseMode: int, pseType: int) -> tuple[Array, Array, None, Array]:
    """FlashAttentionVarLenScore with pseType."""
    inside = _pse_type("FlashAttentionVarLenScoreV2", pseType, qStartIdxOptional, kvStartIdxOptional)
    return _fa_forward("FlashAttentionVarLenScoreV2", query, key, value, realShiftOptional, dropMaskOptional,
                       paddingMaskOptional, attenMaskOptional, prefixOptional, actualSeqQLenOptional,
                       actualSeqKvLenOptional, scaleValue, keepProb, preTokens, nextTokens, headNum, inputLayout,
                       sparseMode, inside)


def flash_attention_score_grad_v2(query: Array, keyIn: Array, value: Array, dy: Array,
                                  pseShiftOptional: Optional[Array], dropMaskOptional: Optional[Array],
                                  paddingMaskOptional: Optional[Array], attenMaskOptional: Optional[Array],
                                  softmaxMaxOptional: Optional[Array], softmaxSumOptional: Optional[Array],
                                  softmaxInOptional: Optional[Array], attentionInOptional: Optional[Array],
                                  prefixOptional: Optional[Sequence[int]], qStartIdxOptional: Any,
                                  kvStartIdxOptional: Any, scaleValue: float, keepProb: float, preTokens: int,
                                  nextTokens: int, headNum: int, inputLayout: str, innerPrecise: int,
                                  sparseMode: int, pseType: int) -> tuple[Array, Array, Array, Optional[Array]]:
    """FlashAttentionScoreGrad with pseType (dpse = dL, unscaled, for pseType 0)."""
    inside = _pse_type("FlashAttentionScoreGradV2", pseType, qStartIdxOptional, kvStartIdxOptional)
    return _fa_backward("FlashAttentionScoreGradV2", query, keyIn, value, dy, pseShiftOptional, dropMaskOptional,
                        paddingMaskOptional, attenMaskOptional, prefixOptional, None, None, scaleValue, keepProb,
                        preTokens, nextTokens, headNum, inputLayout, sparseMode, inside)


def flash_attention_unpadding_score_grad_v2(query: Array, keyIn: Array, value: Array, dy: Array,
                                            pseShiftOptional: Optional[Array], dropMaskOptional: Optional[Array],
                                            paddingMaskOptional: Optional[Array], attenMaskOptional: Optional[Array],
                                            softmaxMaxOptional: Optional[Array], softmaxSumOptional: Optional[Array],
                                            softmaxInOptional: Optional[Array], attentionInOptional: Optional[Array],
                                            prefixOptional: Optional[Sequence[int]],
                                            actualSeqQLenOptional: Optional[Sequence[int]],
                                            actualSeqKvLenOptional: Optional[Sequence[int]], qStartIdxOptional: Any,
                                            kvStartIdxOptional: Any, scaleValue: float, keepProb: float,
                                            preTokens: int, nextTokens: int, headNum: int, inputLayout: str,
                                            innerPrecise: int, sparseMode: int, pseType: int
                                            ) -> tuple[Array, Array, Array, Optional[Array]]:
    """FlashAttentionUnpaddingScoreGrad with pseType."""
    inside = _pse_type("FlashAttentionUnpaddingScoreGradV2", pseType, qStartIdxOptional, kvStartIdxOptional)
    return _fa_backward("FlashAttentionUnpaddingScoreGradV2", query, keyIn, value, dy, pseShiftOptional,
                        dropMaskOptional, paddingMaskOptional, attenMaskOptional, prefixOptional,
                        actualSeqQLenOptional, actualSeqKvLenOptional, scaleValue, keepProb, preTokens, nextTokens,
                        headNum, inputLayout, sparseMode, inside)


# ---------------------------------------------------------------------------------------------
# Inference: PromptFlashAttention, IncreFlashAttention, FusedInferAttentionScore
# ---------------------------------------------------------------------------------------------

def _refuse_set(op: str, **given: Any) -> None:
    for name, v in given.items():
        if v is not None:
            raise NotImplementedError(f"aclnn{op}: {name} (quantised, paged or padded attention) is not supported by "
                                      f"the CPU reference")


def _infer(op: str, query: Array, key: Any, value: Any, pse: Optional[Array], atten: Optional[Array],
           seq_q: Optional[Sequence[int]], seq_kv: Optional[Sequence[int]], heads: int, scale: float, pre: int,
           nxt: int, layout: str, kv_heads: int, mode: int, lse: bool = False) -> tuple[Array, Optional[Array]]:
    """The inference family's forward. key/value: a tensor, or a list with one tensor for every
    batch or one per batch. actualSeqLengths (seq_q): valid query rows per batch, those after
    them are output as 0; actualSeqLengthsKv (seq_kv): valid keys per batch, the rest masked."""
    out_layout = layout
    if layout == "BNSD_BSND":
        layout, out_layout = "BNSD", "BSND"
    if layout == "TND":
        raise NotImplementedError(f"aclnn{op}: inputLayout TND is not supported by the CPU reference here")
    keys = list(key) if isinstance(key, (list, tuple)) else [key]
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    k = keys[0] if len(keys) == 1 else np.concatenate([np.asarray(t) for t in keys], axis=0)
    v = vals[0] if len(vals) == 1 else np.concatenate([np.asarray(t) for t in vals], axis=0)
    if heads <= 0:
        raise _invalid(op, "numHeads", f"expected > 0, got {heads}")
    if kv_heads < 0 or (kv_heads and heads % kv_heads):
        raise _invalid(op, "numKeyValueHeads", f"expected a divisor of numHeads {heads} (or 0), got {kv_heads}")
    st = _Setup(op, query, k, v, pse, None, None, None, None, pre, nxt, heads, layout, mode, kv_heads or heads)
    batches = len(st.q)
    outs, lses = [], []
    for b in range(batches):
        q = st.q[b]
        s1, s2 = q.shape[1], st.k[b].shape[1]
        m = st.masks[b]
        a = _atten_for(atten, b, batches)
        if a is not None and mode in (0, 1):
            a = a[..., :s1, :s2] if a.ndim >= 2 and a.shape[-2] >= s1 else a[..., :s2]
            m = a if m is None else (m | a)
        if seq_kv is not None and len(seq_kv) > b:
            cut = np.arange(s2) >= int(seq_kv[b])
            m = cut[None, :] if m is None else (m | cut)
        pse_b = st.pse[b]
        o, mx, sm, _ = _core(q, st.k[b], st.v[b], scale, pse_b, m, False)
        o = np.nan_to_num(o)
        if seq_q is not None and len(seq_q) > b:
            o[:, int(seq_q[b]):, :] = 0
        outs.append(o)
        with np.errstate(divide="ignore", invalid="ignore"):
            lses.append(mx + np.log(sm))
    lse_out = np.stack(lses).astype(np.float32) if lse else None
    return _unblocks(outs, out_layout), lse_out


def prompt_flash_attention(query: Array, key: Array, value: Array, pseShift: Optional[Array],
                           attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]], numHeads: int,
                           scaleValue: float, preTokens: int, nextTokens: int, inputLayout: str,
                           numKeyValueHeads: int) -> Array:
    """softmax(scale * Q K^T + pse, masked by attenMask and the preTokens/nextTokens band) V;
    rows of a batch past actualSeqLengths[b] are 0."""
    out, _ = _infer("PromptFlashAttention", query, key, value, pseShift, attenMask, actualSeqLengths, None,
                    numHeads, scaleValue, preTokens, nextTokens, inputLayout, numKeyValueHeads, 0)
    return out


def prompt_flash_attention_v3(query: Array, key: Array, value: Array, pseShift: Optional[Array],
                              attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]],
                              actualSeqLengthsKv: Optional[Sequence[int]], deqScale1: Optional[Array],
                              quantScale1: Optional[Array], deqScale2: Optional[Array], quantScale2: Optional[Array],
                              quantOffset2: Optional[Array], numHeads: int, scaleValue: float, preTokens: int,
                              nextTokens: int, inputLayout: str, numKeyValueHeads: int, sparseMode: int,
                              innerPrecise: int = 0) -> Array:
    """PromptFlashAttention with key lengths and sparse modes; the quantised modes are refused."""
    _refuse_set("PromptFlashAttention", deqScale1=deqScale1, quantScale1=quantScale1, deqScale2=deqScale2,
                quantScale2=quantScale2, quantOffset2=quantOffset2)
    out, _ = _infer("PromptFlashAttention", query, key, value, pseShift, attenMask, actualSeqLengths,
                    actualSeqLengthsKv, numHeads, scaleValue, preTokens, nextTokens, inputLayout, numKeyValueHeads,
                    sparseMode)
    return out


def incre_flash_attention(query: Array, key: Sequence[Array], value: Sequence[Array], pseShift: Optional[Array],
                          attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]], numHeads: int,
                          scaleValue: float, inputLayout: str, numKeyValueHeads: int) -> Array:
    """Decoding step: one (or a few) query rows against the KV cache; actualSeqLengths are the
    valid cache lengths per batch (keys after them are masked). attenMask True masks a key."""
    out, _ = _infer("IncreFlashAttention", query, key, value, pseShift, attenMask, None, actualSeqLengths,
                    numHeads, scaleValue, 2147483647, 2147483647, inputLayout, numKeyValueHeads, 0)
    return out


def incre_flash_attention_v4(query: Array, key: Sequence[Array], value: Sequence[Array], pseShift: Optional[Array],
                             attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]],
                             dequantScale1: Optional[Array], quantScale1: Optional[Array],
                             dequantScale2: Optional[Array], quantScale2: Optional[Array],
                             quantOffset2: Optional[Array], antiquantScale: Optional[Array],
                             antiquantOffset: Optional[Array], blocktable: Optional[Array],
                             kvPaddingSize: Optional[Array], numHeads: int, scaleValue: float, inputLayout: str,
                             numKeyValueHeads: int, blockSize: int, innerPrecise: int) -> Array:
    """IncreFlashAttention; the quantised, paged (blocktable) and padded modes are refused."""
    _refuse_set("IncreFlashAttention", dequantScale1=dequantScale1, quantScale1=quantScale1,
                dequantScale2=dequantScale2, quantScale2=quantScale2, quantOffset2=quantOffset2,
                antiquantScale=antiquantScale, antiquantOffset=antiquantOffset, blocktable=blocktable,
                kvPaddingSize=kvPaddingSize)
    return incre_flash_attention(query, key, value, pseShift, attenMask, actualSeqLengths, numHeads, scaleValue,
                                 inputLayout, numKeyValueHeads)


def fused_infer_attention_score(query: Array, key: Sequence[Array], value: Sequence[Array], pseShift: Optional[Array],
                                attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]],
                                actualSeqLengthsKv: Optional[Sequence[int]], deqScale1: Optional[Array],
                                quantScale1: Optional[Array], deqScale2: Optional[Array],
                                quantScale2: Optional[Array], quantOffset2: Optional[Array],
                                antiquantScale: Optional[Array], antiquantOffset: Optional[Array],
                                blockTable: Optional[Array], queryPaddingSize: Optional[Array],
                                kvPaddingSize: Optional[Array], numHeads: int, scaleValue: float, preTokens: int,
                                nextTokens: int, inputLayout: str, numKeyValueHeads: int, sparseMode: int,
                                innerPrecise: int, blockSize: int, antiquantMode: int, softmaxLseFlag: bool
                                ) -> tuple[Array, Optional[Array]]:
    """Prompt or decode attention in one operator: returns (attentionOut, softmaxLse), the
    latter log(sum(exp(s))) per row, float32 (B, N, S1, 1), written only when softmaxLseFlag."""
    _refuse_set("FusedInferAttentionScore", deqScale1=deqScale1, quantScale1=quantScale1, deqScale2=deqScale2,
                quantScale2=quantScale2, quantOffset2=quantOffset2, antiquantScale=antiquantScale,
                antiquantOffset=antiquantOffset, blockTable=blockTable, queryPaddingSize=queryPaddingSize,
                kvPaddingSize=kvPaddingSize)
    return _infer("FusedInferAttentionScore", query, key, value, pseShift, attenMask, actualSeqLengths,
                  actualSeqLengthsKv, numHeads, scaleValue, preTokens, nextTokens, inputLayout, numKeyValueHeads,
                  sparseMode, softmaxLseFlag)


def fused_infer_attention_score_v2(query: Array, key: Sequence[Array], value: Sequence[Array],
                                   pseShiftOptional: Optional[Array], attenMaskOptional: Optional[Array],
                                   actualSeqLengthsOptional: Optional[Sequence[int]],
                                   actualSeqLengthsKvOptional: Optional[Sequence[int]], *quant_and_rest: Any,
                                   **named: Any) -> tuple[Array, Optional[Array]]:
    """FusedInferAttentionScore plus per-key/value antiquant, a shared prefix and (V3) rope
    parts of q/k: those are refused; the rest is V1's computation."""
    refused = {k: v for k, v in named.items() if k.endswith("Optional") and k not in (
        "pseShiftOptional", "attenMaskOptional", "actualSeqLengthsOptional", "actualSeqLengthsKvOptional")}
    _refuse_set("FusedInferAttentionScore", **refused)
    for name in ("keyAntiquantMode", "valueAntiquantMode", "antiquantMode"):
        if named.get(name, 0) not in (0, None):
            raise NotImplementedError(f"aclnnFusedInferAttentionScore: {name} {named[name]} is not supported by the "
                                      f"CPU reference")
    return _infer("FusedInferAttentionScore", query, key, value, pseShiftOptional, attenMaskOptional,
                  actualSeqLengthsOptional, actualSeqLengthsKvOptional, named["numHeads"], named["scaleValue"],
                  named["preTokens"], named["nextTokens"], named["inputLayout"], named["numKeyValueHeads"],
                  named["sparseMode"], named["softmaxLseFlag"])


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

_FA = ("const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional, "
       "const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, "
       "const aclIntArray *prefixOptional, ")
_FA_OUT = ("double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, "
           "char *inputLayout, int64_t innerPrecise, int64_t sparseMode, const aclTensor *softmaxMaxOut, "
           "const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut")
_FAG = ("const aclTensor *query, const aclTensor *keyIn, const aclTensor *value, const aclTensor *dy, "
        "const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, "
        "const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional, "
        "const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional, const aclIntArray *prefixOptional, ")
_FAG_OUT = ("double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, "
            "char *inputLayout, int64_t innerPrecise, int64_t sparseMode, const aclTensor *dqOut, "
            "const aclTensor *dkOut, const aclTensor *dvOut, const aclTensor *dpseOut")
_VARLEN = "const aclIntArray *actualSeqQLenOptional, const aclIntArray *actualSeqKvLenOptional, "
_QUANT = ("const aclTensor *deqScale1, const aclTensor *quantScale1, const aclTensor *deqScale2, "
          "const aclTensor *quantScale2, const aclTensor *quantOffset2, ")


def _pfa_v2(query: Array, key: Array, value: Array, pseShift: Optional[Array], attenMask: Optional[Array],
            actualSeqLengths: Optional[Sequence[int]], actualSeqLengthsKv: Optional[Sequence[int]],
            deqScale1: Optional[Array], quantScale1: Optional[Array], deqScale2: Optional[Array],
            quantScale2: Optional[Array], quantOffset2: Optional[Array], numHeads: int, scaleValue: float,
            preTokens: int, nextTokens: int, inputLayout: str, numKeyValueHeads: int, sparseMode: int) -> Array:
    return prompt_flash_attention_v3(query, key, value, pseShift, attenMask, actualSeqLengths, actualSeqLengthsKv,
                                     deqScale1, quantScale1, deqScale2, quantScale2, quantOffset2, numHeads,
                                     scaleValue, preTokens, nextTokens, inputLayout, numKeyValueHeads, sparseMode)


_IFA_QUANT = ("const aclTensor *dequantScale1, const aclTensor *quantScale1, const aclTensor *dequantScale2, "
              "const aclTensor *quantScale2, const aclTensor *quantOffset2, ")


def _ifa_v2(query: Array, key: Sequence[Array], value: Sequence[Array], pseShift: Optional[Array],
            attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]], dequantScale1: Optional[Array],
            quantScale1: Optional[Array], dequantScale2: Optional[Array], quantScale2: Optional[Array],
            quantOffset2: Optional[Array], numHeads: int, scaleValue: float, inputLayout: str,
            numKeyValueHeads: int) -> Array:
    return incre_flash_attention_v4(query, key, value, pseShift, attenMask, actualSeqLengths, dequantScale1,
                                    quantScale1, dequantScale2, quantScale2, quantOffset2, None, None, None, None,
                                    numHeads, scaleValue, inputLayout, numKeyValueHeads, 0, 0)


def _ifa_v3(query: Array, key: Sequence[Array], value: Sequence[Array], pseShift: Optional[Array],
            attenMask: Optional[Array], actualSeqLengths: Optional[Sequence[int]], dequantScale1: Optional[Array],
            quantScale1: Optional[Array], dequantScale2: Optional[Array], quantScale2: Optional[Array],
            quantOffset2: Optional[Array], antiquantScale: Optional[Array], antiquantOffset: Optional[Array],
            blocktable: Optional[Array], numHeads: int, scaleValue: float, inputLayout: str, numKeyValueHeads: int,
            blockSize: int, innerPrecise: int) -> Array:
    return incre_flash_attention_v4(query, key, value, pseShift, attenMask, actualSeqLengths, dequantScale1,
                                    quantScale1, dequantScale2, quantScale2, quantOffset2, antiquantScale,
                                    antiquantOffset, blocktable, None, numHeads, scaleValue, inputLayout,
                                    numKeyValueHeads, blockSize, innerPrecise)


_IFA_HEAD = ("const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift, "
             "const aclTensor *attenMask, const aclIntArray *actualSeqLengths, ")
_IFA_TAIL = "int64_t numHeads, double scaleValue, char *inputLayout, int64_t numKeyValueHeads, "
_PFA_HEAD = ("const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *pseShift, "
             "const aclTensor *attenMask, const aclIntArray *actualSeqLengths, ")
_PFA_TAIL = ("int64_t numHeads, double scaleValue, int64_t preTokens, int64_t nextTokens, char *inputLayout, "
             "int64_t numKeyValueHeads, ")


_FIA_V2 = ("const aclTensor *query, const aclTensorList *key, const aclTensorList *value, "
           "const aclTensor *pseShiftOptional, const aclTensor *attenMaskOptional, "
           "const aclIntArray *actualSeqLengthsOptional, const aclIntArray *actualSeqLengthsKvOptional, "
           "const aclTensor *deqScale1Optional, const aclTensor *quantScale1Optional, "
           "const aclTensor *deqScale2Optional, const aclTensor *quantScale2Optional, "
           "const aclTensor *quantOffset2Optional, const aclTensor *antiquantScaleOptional, "
           "const aclTensor *antiquantOffsetOptional, const aclTensor *blockTableOptional, "
           "const aclTensor *queryPaddingSizeOptional, const aclTensor *kvPaddingSizeOptional, "
           "const aclTensor *keyAntiquantScaleOptional, const aclTensor *keyAntiquantOffsetOptional, "
           "const aclTensor *valueAntiquantScaleOptional, const aclTensor *valueAntiquantOffsetOptional, "
           "const aclTensor *keySharedPrefixOptional, const aclTensor *valueSharedPrefixOptional, "
           "const aclIntArray *actualSharedPrefixLenOptional, @ROPE@int64_t numHeads, double scaleValue, "
           "int64_t preTokens, int64_t nextTokens, char *inputLayout, int64_t numKeyValueHeads, int64_t sparseMode, "
           "int64_t innerPrecise, int64_t blockSize, int64_t antiquantMode, bool softmaxLseFlag, "
           "int64_t keyAntiquantMode, int64_t valueAntiquantMode, const aclTensor *attentionOut, "
           "const aclTensor *softmaxLse")


def _fia_keywords(**named: Any) -> tuple[Array, Optional[Array]]:
    """The runner passes every input by its header name; V2 and V3 differ only in optional
    tensors, all refused when given."""
    return fused_infer_attention_score_v2(named.pop("query"), named.pop("key"), named.pop("value"),
                                          named.pop("pseShiftOptional"), named.pop("attenMaskOptional"),
                                          named.pop("actualSeqLengthsOptional"),
                                          named.pop("actualSeqLengthsKvOptional"), **named)


def _doc(what: str, page: str) -> str:
    return f"{what}; {_DOC}{page}.md"


FORMULAS: Mapping[str, Formula] = dict([
    _f("aclnnFlashAttentionScore", _FA + _FA_OUT, flash_attention_score,
       _doc("Softmax(Mask(scale*(pse + Q K^T))) V, forward, sparse modes 0-6, no dropout",
            "aclnnFlashAttentionScore")),
    _f("aclnnFlashAttentionVarLenScore", _FA + _VARLEN + _FA_OUT, flash_attention_var_len_score,
       _doc("FlashAttentionScore over TND, batches cut by cumulative lengths", "aclnnFlashAttentionVarLenScore")),
    _f("aclnnFlashAttentionScoreGrad", _FAG + _FAG_OUT, flash_attention_score_grad,
       _doc("dQ, dK, dV, dpse of FlashAttentionScore, recomputed from Q, K, V", "aclnnFlashAttentionScoreGrad")),
    _f("aclnnFlashAttentionUnpaddingScoreGrad", _FAG + _VARLEN + _FAG_OUT, flash_attention_unpadding_score_grad,
       _doc("backward of FlashAttentionVarLenScore (TND)", "aclnnFlashAttentionUnpaddingScoreGrad")),
    _f("aclnnPromptFlashAttention", _PFA_HEAD + _PFA_TAIL + "const aclTensor *attentionOut",
       prompt_flash_attention, _doc("softmax(scale*QK^T + pse, masked) V for the prompt",
                                    "aclnnPromptFlashAttention")),
    _f("aclnnPromptFlashAttentionV2",
       _PFA_HEAD + "const aclIntArray *actualSeqLengthsKv, " + _QUANT + _PFA_TAIL
       + "int64_t sparseMode, const aclTensor *attentionOut",
       _pfa_v2, _doc("PromptFlashAttention with key lengths and sparse modes", "aclnnPromptFlashAttentionV2")),
    _f("aclnnPromptFlashAttentionV3",
       _PFA_HEAD + "const aclIntArray *actualSeqLengthsKv, " + _QUANT + _PFA_TAIL
       + "int64_t sparseMode, int64_t innerPrecise, const aclTensor *attentionOut",
       prompt_flash_attention_v3, _doc("PromptFlashAttentionV2 with innerPrecise", "aclnnPromptFlashAttentionV3")),
    _f("aclnnIncreFlashAttention", _IFA_HEAD + _IFA_TAIL + "const aclTensor *attentionOut",
       incre_flash_attention, _doc("decode attention against the KV cache", "aclnnIncreFlashAttention")),
    _f("aclnnIncreFlashAttentionV2", _IFA_HEAD + _IFA_QUANT + _IFA_TAIL + "const aclTensor *attentionOut",
       _ifa_v2, _doc("IncreFlashAttention (quantised modes refused)", "aclnnIncreFlashAttentionV2")),
    _f("aclnnIncreFlashAttentionV3",
       _IFA_HEAD + _IFA_QUANT + "const aclTensor *antiquantScale, const aclTensor *antiquantOffset, "
       "const aclTensor *blocktable, " + _IFA_TAIL + "int64_t blockSize, int64_t innerPrecise, "
       "const aclTensor *attentionOut",
       _ifa_v3, _doc("IncreFlashAttention (quantised and paged modes refused)", "aclnnIncreFlashAttentionV3")),
    _f("aclnnIncreFlashAttentionV4",
       _IFA_HEAD + _IFA_QUANT + "const aclTensor *antiquantScale, const aclTensor *antiquantOffset, "
       "const aclTensor *blocktable, const aclTensor *kvPaddingSize, " + _IFA_TAIL
       + "int64_t blockSize, int64_t innerPrecise, const aclTensor *attentionOut",
       incre_flash_attention_v4, _doc("IncreFlashAttention (quantised, paged, padded modes refused)",
                                      "aclnnIncreFlashAttentionV4")),
    _f("aclnnFusedInferAttentionScore",
       "const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift, "
       "const aclTensor *attenMask, const aclIntArray *actualSeqLengths, const aclIntArray *actualSeqLengthsKv, "
       + _QUANT + "const aclTensor *antiquantScale, const aclTensor *antiquantOffset, const aclTensor *blockTable, "
       "const aclTensor *queryPaddingSize, const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue, "
       "int64_t preTokens, int64_t nextTokens, char *inputLayout, int64_t numKeyValueHeads, int64_t sparseMode, "
       "int64_t innerPrecise, int64_t blockSize, int64_t antiquantMode, bool softmaxLseFlag, "
       "const aclTensor *attentionOut, const aclTensor *softmaxLse",
       fused_infer_attention_score, _doc("prompt or decode attention, with softmaxLse",
                                         "aclnnFusedInferAttentionScore")),
    _f("aclnnFlashAttentionScoreV2",
       _FA + "const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, "
       + _FA_OUT.replace("int64_t sparseMode, ", "int64_t sparseMode, int64_t pseType, "),
       flash_attention_score_v2, _doc("FlashAttentionScore with pseType 0/1", "aclnnFlashAttentionScoreV2")),
    _f("aclnnFlashAttentionVarLenScoreV2",
       _FA + _VARLEN + "const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, "
       + _FA_OUT.replace("int64_t sparseMode, ", "int64_t sparseMode, int64_t pseType, "),
       flash_attention_var_len_score_v2, _doc("FlashAttentionVarLenScore with pseType 0/1",
                                              "aclnnFlashAttentionVarLenScoreV2")),
    _f("aclnnFlashAttentionScoreGradV2",
       _FAG + "const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, "
       + _FAG_OUT.replace("int64_t sparseMode, ", "int64_t sparseMode, int64_t pseType, "),
       flash_attention_score_grad_v2, _doc("FlashAttentionScoreGrad with pseType 0/1",
                                           "aclnnFlashAttentionScoreGradV2")),
    _f("aclnnFlashAttentionUnpaddingScoreGradV2",
       _FAG + _VARLEN + "const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, "
       + _FAG_OUT.replace("int64_t sparseMode, ", "int64_t sparseMode, int64_t pseType, "),
       flash_attention_unpadding_score_grad_v2, _doc("FlashAttentionUnpaddingScoreGrad with pseType 0/1",
                                                     "aclnnFlashAttentionUnpaddingScoreGradV2")),
    _f("aclnnFusedInferAttentionScoreV2", _FIA_V2.replace("@ROPE@", ""), _fia_keywords,
       _doc("FusedInferAttentionScore (antiquant, shared prefix refused)", "aclnnFusedInferAttentionScoreV2")),
    _f("aclnnFusedInferAttentionScoreV3",
       _FIA_V2.replace("@ROPE@", "const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, "
                                 "const aclTensor *keyRopeAntiquantScaleOptional, "),
       _fia_keywords, _doc("FusedInferAttentionScore (antiquant, shared prefix, rope refused)",
                           "aclnnFusedInferAttentionScoreV3")),
])
