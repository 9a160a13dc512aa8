"""The hand formulas for torch_npu custom operators (ascend_aclnn/cpu_reference/formulas.py).

Every expected value below is worked by hand from the operator's documented formula; the
comment beside it shows the arithmetic. Inputs are chosen so that the arithmetic is short
(rows whose mean square is a perfect square, softmax inputs that are logs of small integers).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ascend_aclnn.cann import headers
from ascend_aclnn.cpu_reference.formulas import FORMULAS
from ascend_aclnn.errors import AclnnParamInvalidError

F32 = np.float32
LN3 = math.log(3.0)


def close(actual: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    a = np.asarray(actual)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(a.astype(np.float64), e, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------------------------

def test_rms_norm_hand_case():
    x = np.array([[2, 2, 2, 2], [0, 3, 4, 0]], F32)
    y, rstd = FORMULAS["aclnnRmsNorm"].fn(x=x, gamma=np.array([1, 1, 1, 2], F32), epsilon=0.0)
    # row 0: mean(x^2) = 4 -> rstd 1/2; row 1: (9 + 16) / 4 = 6.25 -> rstd 1/2.5 = 0.4
    close(rstd, [[0.5], [0.4]])                         # keeps the normalised dim: (2, 1)
    close(y, [[1, 1, 1, 2], [0, 1.2, 1.6, 0]])         # x * rstd * gamma


def test_rms_norm_rstd_shape_follows_gamma_rank():
    # doc example: x (4, 1, 4096), gamma (4096,) -> rstd (4, 1, 1); gamma of rank 2 -> (4, 1, 1) too
    x = np.ones((4, 1, 8), F32)
    _, rstd = FORMULAS["aclnnRmsNorm"].fn(x=x, gamma=np.ones(8, F32), epsilon=0.0)
    assert rstd.shape == (4, 1, 1) and rstd.dtype == np.float32
    _, rstd2 = FORMULAS["aclnnRmsNorm"].fn(x=x, gamma=np.ones((1, 8), F32), epsilon=0.0)
    assert rstd2.shape == (4, 1, 1)


def test_rms_norm_epsilon_and_float16_input_computed_in_float32():
    # x = 1 everywhere, eps = 3: rstd = 1/sqrt(1 + 3) = 0.5
    y, rstd = FORMULAS["aclnnRmsNorm"].fn(x=np.ones((1, 4), np.float16), gamma=np.ones(4, np.float16), epsilon=3.0)
    close(rstd, [[0.5]])
    assert y.dtype == np.float32  # rounded once, by the runner's cast into yOut
    close(y, [[0.5] * 4])


def test_rms_norm_gamma_shape_refused_with_161002():
    with pytest.raises(AclnnParamInvalidError, match="gamma"):
        FORMULAS["aclnnRmsNorm"].fn(x=np.ones((2, 4), F32), gamma=np.ones(3, F32), epsilon=1e-6)


def test_add_rms_norm_hand_case():
    y, rstd, xo = FORMULAS["aclnnAddRmsNorm"].fn(
        x1=np.array([[0, 1, 4, 0]], F32), x2=np.array([[0, 2, 0, 0]], F32),
        gamma=np.array([1, 1, 1, 2], F32), epsilon=0.0)
    close(xo, [[0, 3, 4, 0]])             # x = x1 + x2
    close(rstd, [[0.4]])                  # (9 + 16) / 4 = 6.25 -> 1/2.5
    close(y, [[0, 1.2, 1.6, 0]])          # [0, 3, 4, 0] * 0.4 * [1, 1, 1, 2]


def test_gemma_rms_norm_adds_one_to_gamma():
    y, rstd = FORMULAS["aclnnGemmaRmsNorm"].fn(
        x=np.array([[0, 3, 4, 0]], F32), gamma=np.array([0, 1, -0.5, 0], F32), epsilon=0.0)
    close(rstd, [[0.4]])
    close(y, [[0, 2.4, 0.8, 0]])          # [0, 1.2, 1.6, 0] * (1 + gamma) = * [1, 2, 0.5, 1]


def test_deep_norm_hand_case():
    mean, rstd, y = FORMULAS["aclnnDeepNorm"].fn(
        x=np.array([[0, 1, 0, 1]], F32), gx=np.ones((1, 4), F32), beta=np.full(4, 0.5, F32),
        gamma=np.array([1, 2, 3, 4], F32), alpha=2.0, epsilon=0.0)
    # x' = 2x + gx = [1, 3, 1, 3]: mean 2, var 1 -> rstd 1
    close(mean, [[2.0]])
    close(rstd, [[1.0]])
    close(y, [[-0.5, 2.5, -2.5, 4.5]])    # [-1, 1, -1, 1] * gamma + 0.5


def test_add_layer_norm_hand_case_and_additional_output():
    args = dict(x1=np.ones((1, 4), F32), x2=np.array([[0, 2, 0, 2]], F32), gamma=np.full(4, 2, F32),
                beta=np.full(4, 1, F32), biasOptional=np.zeros(4, F32), epsilon=0.0)
    y, mean, rstd, xo = FORMULAS["aclnnAddLayerNorm"].fn(**args, additionalOutput=False)
    # x = [1, 3, 1, 3]: mean 2, var 1, rstd 1; y = [-1, 1, -1, 1] * 2 + 1
    close(y, [[-1, 3, -1, 3]])
    close(mean, [[2.0]])
    close(rstd, [[1.0]])
    assert xo is None                     # left alone unless additionalOutput
    *_, xo = FORMULAS["aclnnAddLayerNorm"].fn(**args, additionalOutput=True)
    close(xo, [[1, 3, 1, 3]])


def test_add_layer_norm_bias_is_added_before_the_norm():
    y, mean, _, _ = FORMULAS["aclnnAddLayerNorm"].fn(
        x1=np.zeros((1, 2), F32), x2=np.zeros((1, 2), F32), gamma=np.ones(2, F32), beta=np.zeros(2, F32),
        biasOptional=np.array([1, 3], F32), epsilon=0.0, additionalOutput=False)
    close(mean, [[2.0]])                  # x = bias = [1, 3]
    close(y, [[-1, 1]])


def test_add_rms_norm_quant_div_and_mul_modes():
    base = dict(x1=np.array([[0, 1, 4, 0]], F32), x2=np.array([[0, 2, 0, 0]], F32), gamma=np.ones(4, F32),
                scales2Optional=None, zeroPoints2Optional=None, axis=-1, epsilon=0.0)
    # y = RmsNorm([0, 3, 4, 0]) = [0, 1.2, 1.6, 0]
    y1, y2, xo = FORMULAS["aclnnAddRmsNormQuant"].fn(**base, scales1=np.full(4, 0.1, F32),
                                                     zeroPoints1Optional=None, divMode=True)
    assert y1.dtype == np.int8 and y2 is None
    np.testing.assert_array_equal(y1, [[0, 12, 16, 0]])      # y / 0.1
    close(xo, [[0, 3, 4, 0]])
    y1, _, _ = FORMULAS["aclnnAddRmsNormQuant"].fn(**base, scales1=np.full(4, 10, F32),
                                                   zeroPoints1Optional=np.ones(4, F32), divMode=False)
    np.testing.assert_array_equal(y1, [[1, 13, 17, 1]])      # y * 10 + 1


def test_add_rms_norm_quant_second_output_and_saturation():
    y1, y2, _ = FORMULAS["aclnnAddRmsNormQuant"].fn(
        x1=np.array([[0, 3, 4, 0]], F32), x2=np.zeros((1, 4), F32), gamma=np.ones(4, F32),
        scales1=np.full(4, 100, F32), scales2Optional=np.full(4, 1, F32), zeroPoints1Optional=None,
        zeroPoints2Optional=np.full(4, -0.5, F32), axis=-1, epsilon=0.0, divMode=False)
    np.testing.assert_array_equal(y1, [[0, 120, 127, 0]])    # 160 saturates to 127
    np.testing.assert_array_equal(y2, [[0, 1, 1, 0]])        # rint([-0.5, 0.7, 1.1, -0.5]) = [-0, 1, 1, -0]


# ---------------------------------------------------------------------------------------------
# Gated activations, rotary embedding
# ---------------------------------------------------------------------------------------------

SIG2 = 1 / (1 + math.exp(-2))             # 0.8807970779778823
GELU1, GELU2, GELU3 = 0.8413447460685429, 1.9544997361036416, 2.99595030585  # 0.5x(1+erf(x/sqrt2))
GELU1_TANH = 0.8411919906082768           # 0.5(1+tanh(sqrt(2/pi)(1+0.044715)))


def test_swi_glu_hand_case():
    out = FORMULAS["aclnnSwiGlu"].fn(x=np.array([[1, 2, 0, 3]], F32), dim=-1)
    # A = [1, 2], B = [0, 3]: A*sigmoid(A)*B = [0, 2*0.88080*3]
    close(out, [[0, 6 * SIG2]])


def test_swi_glu_other_dim_and_odd_size_refused():
    out = FORMULAS["aclnnSwiGlu"].fn(x=np.array([[2], [1]], F32), dim=0)
    close(out, [[2 * SIG2 * 1]])          # A = [[2]], B = [[1]]
    with pytest.raises(AclnnParamInvalidError, match="dim"):
        FORMULAS["aclnnSwiGlu"].fn(x=np.ones((1, 3), F32), dim=-1)


def test_ge_glu_v3_activate_left_and_right():
    x = np.array([[0, 1, 2, 3]], F32)     # A = [0, 1], B = [2, 3]
    out, g = FORMULAS["aclnnGeGluV3"].fn(self=x, dim=-1, approximate=0, activateLeft=True)
    close(g, [[0, GELU1]])
    close(out, [[0, 3 * GELU1]])          # Gelu(A) * B
    out, g = FORMULAS["aclnnGeGluV3"].fn(self=x, dim=-1, approximate=0, activateLeft=False)
    close(g, [[GELU2, GELU3]])
    close(out, [[0, GELU3]])              # A * Gelu(B) = [0*1.95450, 1*2.99595]
    out, g = FORMULAS["aclnnGeGluV3"].fn(self=x, dim=-1, approximate=1, activateLeft=True)
    close(g, [[0, GELU1_TANH]])


def test_gelu_mul_modes():
    x = np.array([[1, 5]], F32)
    close(FORMULAS["aclnnGeluMul"].fn(input=x, approximateOptional=None), [[5 * GELU1]])  # NULL is "none"
    close(FORMULAS["aclnnGeluMul"].fn(input=x, approximateOptional="none"), [[5 * GELU1]])
    close(FORMULAS["aclnnGeluMul"].fn(input=x, approximateOptional="tanh"), [[5 * GELU1_TANH]])
    with pytest.raises(AclnnParamInvalidError, match="approximateOptional"):
        FORMULAS["aclnnGeluMul"].fn(input=x, approximateOptional="erf")


def test_apply_rotary_pos_emb_hand_case():
    q = np.array([1, 2, 3, 4], F32).reshape(1, 1, 1, 4)
    k = np.array([1, 0, 0, 0], F32).reshape(1, 1, 1, 4)
    cos, sin = np.full((1, 1, 1, 4), 0.5, F32), np.ones((1, 1, 1, 4), F32)
    qn, kn = FORMULAS["aclnnApplyRotaryPosEmb"].fn(queryRef=q, keyRef=k, cos=cos, sin=sin, layout=1)
    # rotate_half(q) = [-3, -4, 1, 2]: q*0.5 + rot = [-2.5, -3, 2.5, 4]
    close(qn, np.array([-2.5, -3, 2.5, 4]).reshape(1, 1, 1, 4))
    # rotate_half(k) = [0, 0, 1, 0]: [0.5, 0, 1, 0]
    close(kn, np.array([0.5, 0, 1, 0]).reshape(1, 1, 1, 4))


# ---------------------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------------------

def test_dynamic_quant_hand_case():
    x = np.array([[-254, 127, 63.5, 0], [0, 0, 0, 0]], np.float16)
    y, scale = FORMULAS["aclnnDynamicQuant"].fn(x=x, smoothScalesOptional=None)
    close(scale, [2.0, 0.0])                       # rowmax|x| / 127 = 254 / 127; zero row -> 0
    assert y.dtype == np.int8 and scale.shape == (2,)
    np.testing.assert_array_equal(y, [[-127, 64, 32, 0], [0, 0, 0, 0]])  # x/2 = [-127, 63.5, 31.75, 0]


def test_dynamic_quant_smooth_scales_and_ties_to_even():
    y, scale = FORMULAS["aclnnDynamicQuant"].fn(x=np.array([[127, 62.5]], F32),
                                                 smoothScalesOptional=np.array([2, 2], F32))
    close(scale, [2.0])                            # input = [254, 125]; 254 / 127
    np.testing.assert_array_equal(y, [[127, 62]])  # 125 / 2 = 62.5 rounds to even


def test_ascend_quant_v3_axis_sqrt_and_round_modes():
    x = np.array([[1, 2], [3, 4]], F32)
    fn = FORMULAS["aclnnAscendQuantV3"].fn
    y = fn(x=x, scale=np.array([2, 0.5], F32), offset=np.array([1, 0], F32), sqrtMode=False,
           roundMode="round", dstType=2, axis=-1)
    np.testing.assert_array_equal(y, [[3, 1], [7, 2]])       # x*[2, .5] + [1, 0]
    y = fn(x=x, scale=np.array([1, 10], F32), offset=None, sqrtMode=False, roundMode="round", dstType=2, axis=0)
    np.testing.assert_array_equal(y, [[1, 2], [30, 40]])     # scale along rows
    y = fn(x=x, scale=np.array([3], F32), offset=None, sqrtMode=True, roundMode="round", dstType=2, axis=-1)
    np.testing.assert_array_equal(y, [[9, 18], [27, 36]])    # scale^2 = 9
    v = np.array([[0.7, -0.7, 2.5, 200]], F32)
    one = np.ones(1, F32)
    for mode, want in (("round", [1, -1, 2, 127]), ("floor", [0, -1, 2, 127]),
                       ("ceil", [1, 0, 3, 127]), ("trunc", [0, 0, 2, 127])):
        y = fn(x=v, scale=one, offset=None, sqrtMode=False, roundMode=mode, dstType=2, axis=-1)
        np.testing.assert_array_equal(y, [want], err_msg=mode)  # 200 saturates to 127
    with pytest.raises(NotImplementedError, match="dstType"):
        fn(x=x, scale=one, offset=None, sqrtMode=False, roundMode="round", dstType=3, axis=-1)
    with pytest.raises(AclnnParamInvalidError, match="roundMode"):
        fn(x=x, scale=one, offset=None, sqrtMode=False, roundMode="half", dstType=2, axis=-1)


def test_ascend_anti_quant_hand_case():
    x = np.array([[-1, 2]], np.int8)
    fn = FORMULAS["aclnnAscendAntiQuant"].fn
    y = fn(x=x, scale=np.array([0.5, 2], F32), offset=np.array([1, 1], F32), dstType=1, sqrtMode=False)
    close(y, [[0, 6]])                            # (x + 1) * [0.5, 2]
    y = fn(x=x, scale=np.array([0.5, 2], F32), offset=np.array([1, 1], F32), dstType=27, sqrtMode=True)
    close(y, [[0, 12]])                           # (x + 1) * [0.25, 4]


def test_weight_quant_batch_matmul_v2_per_channel_and_groups():
    fn = FORMULAS["aclnnWeightQuantBatchMatmulV2"].fn
    x = np.array([[1, 2]], np.float16)
    w = np.array([[1, 0], [0, 1]], np.int8)
    y = fn(x=x, weight=w, antiquantScale=np.array([2, 3], F32), antiquantOffsetOptional=np.array([1, 1], F32),
           quantScaleOptional=None, quantOffsetOptional=None, biasOptional=np.array([1, 1], F32),
           antiquantGroupSize=0)
    # (w + 1) * [2, 3] = [[4, 3], [2, 6]]; [1, 2] @ that = [8, 15]; + 1
    close(y, [[9, 16]])
    y = fn(x=x, weight=w, antiquantScale=np.array([[1, 1], [2, 2]], F32), antiquantOffsetOptional=None,
           quantScaleOptional=None, quantOffsetOptional=None, biasOptional=None, antiquantGroupSize=1)
    close(y, [[1, 4]])                            # groups of one row: [[1, 0], [0, 2]]
    with pytest.raises(NotImplementedError, match="quantScaleOptional"):
        fn(x=x, weight=w, antiquantScale=np.ones(2, F32), antiquantOffsetOptional=None,
           quantScaleOptional=np.ones(2, F32), quantOffsetOptional=None, biasOptional=None, antiquantGroupSize=0)


def test_cast_truncates_and_returns_the_target_dtype():
    out = FORMULAS["aclnnCast"].fn(self=np.array([1.7, -1.7, 2.0], F32), dtype=np.dtype(np.int32))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [1, -1, 2])
    assert FORMULAS["aclnnCast"].fn(self=np.ones(2, F32), dtype=np.dtype(np.float16)).dtype == np.float16


def test_scatter_nd_update_rows_and_elements():
    fn = FORMULAS["aclnnScatterNdUpdate"].fn
    var = np.zeros((3, 2), F32)
    out = fn(varRef=var, indices=np.array([[2], [0]]), updates=np.array([[1, 2], [3, 4]], F32))
    np.testing.assert_array_equal(out, [[3, 4], [0, 0], [1, 2]])
    assert not var.any()                          # a new array; the runner writes it back
    out = fn(varRef=var, indices=np.array([[1, 1]]), updates=np.array([9], F32))
    np.testing.assert_array_equal(out, [[0, 0], [0, 9], [0, 0]])
    with pytest.raises(AclnnParamInvalidError, match="indices"):
        fn(varRef=var, indices=np.array([[3]]), updates=np.zeros((1, 2), F32))


# ---------------------------------------------------------------------------------------------
# Mixture of experts
# ---------------------------------------------------------------------------------------------

def test_moe_gating_top_k_softmax_hand_case():
    x = np.log(np.array([[1, 2, 5], [4, 2, 2]], F32))
    y, idx, row = FORMULAS["aclnnMoeGatingTopKSoftmax"].fn(x=x, finishedOptional=None, k=2)
    # softmax rows: [1, 2, 5]/8 = [.125, .25, .625]; [4, 2, 2]/8 = [.5, .25, .25]
    close(y, [[0.625, 0.25], [0.5, 0.25]], rtol=1e-5)
    np.testing.assert_array_equal(idx, [[2, 1], [0, 1]])      # the tie (.25, .25) picks expert 1
    np.testing.assert_array_equal(row, [[0, 2], [1, 3]])      # arange(4).reshape(2, 2).T
    assert idx.dtype == np.int32 and row.dtype == np.int32
    _, idx, _ = FORMULAS["aclnnMoeGatingTopKSoftmax"].fn(x=x, finishedOptional=np.array([False, True]), k=2)
    np.testing.assert_array_equal(idx, [[2, 1], [3, 3]])      # finished row: expert count E = 3


def test_moe_init_routing_hand_case():
    x = np.array([[10], [20], [30]], F32)
    expert = np.array([[1, 0], [1, 2], [0, 2]], np.int32)
    row = np.array([[0, 3], [1, 4], [2, 5]], np.int32)          # j * rows + i
    ex, erow, eexp = FORMULAS["aclnnMoeInitRouting"].fn(x=x, rowIdx=row, expertIdx=expert, activeNum=3)
    # flattened (expert, row): (1,0) (0,3) (1,1) (2,4) (0,2) (2,5); sorted: (0,2) (0,3) (1,0) (1,1) (2,4) (2,5)
    np.testing.assert_array_equal(eexp, [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(erow, [2, 3, 0, 1, 4, 5])   # expandedRowIdx[sorted[i]] = i
    close(ex, [[30], [10], [10], [20], [20], [30]])           # x[sorted % 3] = x[2, 0, 0, 1, 1, 2]
    ex, _, _ = FORMULAS["aclnnMoeInitRouting"].fn(x=x, rowIdx=row, expertIdx=expert, activeNum=2)
    close(ex, [[30], [10], [10], [20]])                       # min(3, 2) * 2 rows kept


def test_moe_finalize_routing_hand_case():
    out = FORMULAS["aclnnMoeFinalizeRouting"].fn(
        expandedX=np.array([[30], [10], [10], [20], [20], [30]], F32), x1=np.array([[1], [2], [3]], F32),
        x2Optional=None, bias=np.array([[100], [200], [300]], F32),
        scales=np.array([[0.5, 0.5], [1, 0], [0.25, 0.75]], F32),
        expandedRowIdx=np.array([2, 3, 0, 1, 4, 5], np.int32),
        expandedExpertIdx=np.array([[1, 0], [1, 2], [0, 2]], np.int32))
    # row 0: 1 + .5*(eX[2]=10 + b[1]=200) + .5*(eX[1]=10 + b[0]=100) = 1 + 105 + 55
    # row 1: 2 + 1*(eX[3]=20 + 200) + 0*(...)                          = 222
    # row 2: 3 + .25*(eX[0]=30 + 100) + .75*(eX[5]=30 + 300)          = 3 + 32.5 + 247.5
    close(out, [[161], [222], [283]])


def test_moe_finalize_routing_adds_x2():
    out = FORMULAS["aclnnMoeFinalizeRouting"].fn(
        expandedX=np.zeros((2, 1), F32), x1=np.ones((2, 1), F32), x2Optional=np.full((2, 1), 4, F32),
        bias=np.zeros((1, 1), F32), scales=np.ones((2, 1), F32), expandedRowIdx=np.array([0, 1], np.int32),
        expandedExpertIdx=np.zeros((2, 1), np.int32))
    close(out, [[5], [5]])


def test_moe_compute_expert_tokens_cumulative_ends():
    fn = FORMULAS["aclnnMoeComputeExpertTokens"].fn
    out = fn(sortedExperts=np.array([0, 0, 1, 3], np.int32), numExperts=5)
    np.testing.assert_array_equal(out, [2, 3, 3, 4, 4])       # rows with expert <= i
    assert out.dtype == np.int32


# ---------------------------------------------------------------------------------------------
# FlashAttentionScore
# ---------------------------------------------------------------------------------------------

def fa(q: Any, k: Any, v: Any, layout: str = "BNSD", heads: int = 1, **kw: Any) -> Any:
    args: dict[str, Any] = dict(realShiftOptional=None, dropMaskOptional=None, paddingMaskOptional=None,
                                attenMaskOptional=None, prefixOptional=None, scaleValue=1.0, keepProb=1.0,
                                preTokens=2147483647, nextTokens=2147483647, innerPrecise=0, sparseMode=0)
    args.update(kw)
    return FORMULAS["aclnnFlashAttentionScore"].fn(query=np.asarray(q, F32), key=np.asarray(k, F32),
                                                   value=np.asarray(v, F32), headNum=heads, inputLayout=layout,
                                                   **args)


def test_flash_attention_score_hand_case():
    q = np.ones((1, 1, 1, 1))
    k = np.array([0, LN3]).reshape(1, 1, 2, 1)
    v = np.array([4, 8]).reshape(1, 1, 2, 1)
    mx, sm, so, out = fa(q, k, v)
    # scores [0, ln3] -> weights [1/4, 3/4] -> 4/4 + 3*8/4 = 7
    close(out, np.full((1, 1, 1, 1), 7.0), rtol=1e-5)
    close(mx, np.full((1, 1, 1, 8), LN3), rtol=1e-6)          # row max, repeated 8 times
    close(sm, np.full((1, 1, 1, 8), 4 / 3), rtol=1e-6)        # exp(-ln3) + exp(0)
    assert so is None


def test_flash_attention_score_mask_pse_scale_and_band():
    q = np.ones((1, 1, 1, 1))
    v = np.array([4, 8]).reshape(1, 1, 2, 1)
    _, _, _, out = fa(q, np.array([0, LN3]).reshape(1, 1, 2, 1), v, attenMaskOptional=np.array([[False, True]]))
    close(out, [[[[4.0]]]])                                   # only key 0 attended
    _, _, _, out = fa(q, np.zeros((1, 1, 2, 1)), v, realShiftOptional=np.array([LN3, 0], F32).reshape(1, 1, 1, 2))
    close(out, [[[[5.0]]]], rtol=1e-5)                        # weights [3/4, 1/4]: 3 + 2
    _, _, _, out = fa(q, np.array([0, LN3 / 2]).reshape(1, 1, 2, 1), v, scaleValue=2.0)
    close(out, [[[[7.0]]]], rtol=1e-5)                        # 2 * [0, ln3/2] = [0, ln3]
    qq = np.ones((1, 1, 2, 1))
    _, _, _, out = fa(qq, np.array([0, LN3]).reshape(1, 1, 2, 1), v, nextTokens=0)
    close(out, np.array([4.0, 7.0]).reshape(1, 1, 2, 1), rtol=1e-5)  # causal: row 0 sees key 0 only


def test_flash_attention_score_bsh_heads_and_gqa():
    q = np.array([1, 1]).reshape(1, 1, 2)                     # B=1, S=1, H=2 (N=2, D=1)
    k = np.array([[0, 0], [LN3, 0]]).reshape(1, 2, 2)
    v = np.array([[4, 1], [8, 3]]).reshape(1, 2, 2)
    _, _, _, out = fa(q, k, v, layout="BSH", heads=2)
    # head 0: weights [1/4, 3/4] -> 7; head 1: scores [0, 0] -> mean of [1, 3] = 2
    close(out, [[[7.0, 2.0]]], rtol=1e-5)
    q2 = np.array([1, 0]).reshape(1, 2, 1, 1)                 # 2 query heads share 1 KV head
    _, _, _, out = fa(q2, np.array([0, LN3]).reshape(1, 1, 2, 1), np.array([4, 8]).reshape(1, 1, 2, 1), heads=2)
    close(out, np.array([7.0, 6.0]).reshape(1, 2, 1, 1), rtol=1e-5)


def test_flash_attention_score_refuses_what_it_cannot_reproduce():
    one = np.ones((1, 1, 1, 1))
    with pytest.raises(NotImplementedError, match="dropout"):
        fa(one, one, one, keepProb=0.9)
    with pytest.raises(NotImplementedError, match="sparseMode"):
        fa(one, one, one, sparseMode=2)
    with pytest.raises(NotImplementedError, match="inputLayout"):
        fa(one, one, one, layout="TND")


# ---------------------------------------------------------------------------------------------
# Every formula: its prototype as the package's header reader sees it, and what it returns
# ---------------------------------------------------------------------------------------------

# The 8.1.RC1 headers' parameter kinds, copied by hand from each header ("!" marks a written
# parameter): an independent check of the params strings.
KINDS = {
    "aclnnFlashAttentionScore": "aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor aclIntArray "
                                "double double int64_t int64_t int64_t string int64_t int64_t "
                                "aclTensor! aclTensor! aclTensor! aclTensor!",
    "aclnnAddRmsNormQuant": "aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor int64_t double "
                            "bool aclTensor! aclTensor! aclTensor!",
    "aclnnAscendAntiQuant": "aclTensor aclTensor aclTensor int64_t bool aclTensor!",
    "aclnnCast": "aclTensor aclDataType aclTensor!",
    "aclnnScatterNdUpdate": "aclTensor! aclTensor aclTensor",
    "aclnnWeightQuantBatchMatmulV2": "aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor int32_t "
                                     "aclTensor!",
    "aclnnRmsNorm": "aclTensor aclTensor double aclTensor! aclTensor!",
    "aclnnAddRmsNorm": "aclTensor aclTensor aclTensor double aclTensor! aclTensor! aclTensor!",
    "aclnnGemmaRmsNorm": "aclTensor aclTensor double aclTensor! aclTensor!",
    "aclnnDeepNorm": "aclTensor aclTensor aclTensor aclTensor double double aclTensor! aclTensor! aclTensor!",
    "aclnnAddLayerNorm": "aclTensor aclTensor aclTensor aclTensor aclTensor double bool "
                         "aclTensor! aclTensor! aclTensor! aclTensor!",
    "aclnnSwiGlu": "aclTensor int64_t aclTensor!",
    "aclnnGeGluV3": "aclTensor int64_t int64_t bool aclTensor! aclTensor!",
    "aclnnGeluMul": "aclTensor string aclTensor!",
    "aclnnApplyRotaryPosEmb": "aclTensor! aclTensor! aclTensor aclTensor int64_t",
    "aclnnDynamicQuant": "aclTensor aclTensor aclTensor! aclTensor!",
    "aclnnAscendQuantV3": "aclTensor aclTensor aclTensor bool string int32_t int32_t aclTensor!",
    "aclnnMoeGatingTopKSoftmax": "aclTensor aclTensor int64_t aclTensor! aclTensor! aclTensor!",
    "aclnnMoeInitRouting": "aclTensor aclTensor aclTensor int64_t aclTensor! aclTensor! aclTensor!",
    "aclnnMoeFinalizeRouting": "aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor aclTensor!",
    "aclnnMoeComputeExpertTokens": "aclTensor int64_t aclTensor!",
}

# One valid call per formula (inputs only, by header name), and the shapes it must return
# (None: an output left alone).
CALLS: dict[str, tuple[dict[str, Any], tuple[Any, ...]]] = {
    "aclnnFlashAttentionScore": (
        dict(query=np.ones((2, 3, 4), F32), key=np.ones((2, 5, 4), F32), value=np.ones((2, 5, 4), F32),
             realShiftOptional=None, dropMaskOptional=None, paddingMaskOptional=None, attenMaskOptional=None,
             prefixOptional=None, scaleValue=0.5, keepProb=1.0, preTokens=65536, nextTokens=65536, headNum=2,
             inputLayout="BSH", innerPrecise=0, sparseMode=0),
        ((2, 2, 3, 8), (2, 2, 3, 8), None, (2, 3, 4))),
    "aclnnAddRmsNormQuant": (
        dict(x1=np.ones((2, 4), F32), x2=np.ones((2, 4), F32), gamma=np.ones(4, F32), scales1=np.ones(4, F32),
             scales2Optional=np.ones(4, F32), zeroPoints1Optional=None, zeroPoints2Optional=None, axis=-1,
             epsilon=1e-6, divMode=True),
        ((2, 4), (2, 4), (2, 4))),
    "aclnnAscendAntiQuant": (dict(x=np.ones((2, 4), np.int8), scale=np.ones(4, F32), offset=None, dstType=1,
                                  sqrtMode=False), ((2, 4),)),
    "aclnnCast": (dict(self=np.ones((2, 3), F32), dtype=np.dtype(np.int64)), ((2, 3),)),
    "aclnnScatterNdUpdate": (dict(varRef=np.zeros((3, 2), F32), indices=np.array([[1]]),
                                  updates=np.ones((1, 2), F32)), ((3, 2),)),
    "aclnnWeightQuantBatchMatmulV2": (
        dict(x=np.ones((3, 4), np.float16), weight=np.ones((4, 5), np.int8), antiquantScale=np.ones(5, F32),
             antiquantOffsetOptional=None, quantScaleOptional=None, quantOffsetOptional=None, biasOptional=None,
             antiquantGroupSize=0), ((3, 5),)),
    "aclnnRmsNorm": (dict(x=np.ones((2, 3, 4), F32), gamma=np.ones(4, F32), epsilon=1e-6), ((2, 3, 4), (2, 3, 1))),
    "aclnnAddRmsNorm": (dict(x1=np.ones((2, 4), F32), x2=np.ones((2, 4), F32), gamma=np.ones(4, F32),
                             epsilon=1e-6), ((2, 4), (2, 1), (2, 4))),
    "aclnnGemmaRmsNorm": (dict(x=np.ones((2, 4), F32), gamma=np.ones(4, F32), epsilon=1e-6), ((2, 4), (2, 1))),
    "aclnnDeepNorm": (dict(x=np.ones((2, 4), F32), gx=np.ones((2, 4), F32), beta=np.ones(4, F32),
                           gamma=np.ones(4, F32), alpha=0.5, epsilon=1e-6), ((2, 1), (2, 1), (2, 4))),
    "aclnnAddLayerNorm": (dict(x1=np.ones((2, 4), F32), x2=np.ones((2, 4), F32), gamma=np.ones(4, F32),
                               beta=np.ones(4, F32), biasOptional=None, epsilon=1e-5, additionalOutput=True),
                          ((2, 4), (2, 1), (2, 1), (2, 4))),
    "aclnnSwiGlu": (dict(x=np.ones((2, 6), F32), dim=-1), ((2, 3),)),
    "aclnnGeGluV3": (dict(self=np.ones((4, 3), F32), dim=0, approximate=1, activateLeft=False), ((2, 3), (2, 3))),
    "aclnnGeluMul": (dict(input=np.ones((2, 6), F32), approximateOptional="tanh"), ((2, 3),)),
    "aclnnApplyRotaryPosEmb": (dict(queryRef=np.ones((1, 2, 3, 4), F32), keyRef=np.ones((1, 2, 1, 4), F32),
                                    cos=np.ones((1, 2, 1, 4), F32), sin=np.ones((1, 2, 1, 4), F32), layout=1),
                               ((1, 2, 3, 4), (1, 2, 1, 4))),
    "aclnnDynamicQuant": (dict(x=np.ones((2, 3, 4), np.float16), smoothScalesOptional=None), ((2, 3, 4), (2, 3))),
    "aclnnAscendQuantV3": (dict(x=np.ones((2, 4), F32), scale=np.ones(4, F32), offset=None, sqrtMode=False,
                                roundMode="round", dstType=2, axis=-1), ((2, 4),)),
    "aclnnMoeGatingTopKSoftmax": (dict(x=np.ones((2, 3, 8), F32), finishedOptional=None, k=2),
                                  ((2, 3, 2), (2, 3, 2), (2, 3, 2))),
    "aclnnMoeInitRouting": (dict(x=np.ones((3, 4), F32), rowIdx=np.arange(6, dtype=np.int32).reshape(2, 3).T,
                                 expertIdx=np.zeros((3, 2), np.int32), activeNum=3), ((6, 4), (6,), (6,))),
    "aclnnMoeFinalizeRouting": (
        dict(expandedX=np.ones((6, 4), F32), x1=np.ones((3, 4), F32), x2Optional=None, bias=np.ones((2, 4), F32),
             scales=np.ones((3, 2), F32), expandedRowIdx=np.arange(6, dtype=np.int32),
             expandedExpertIdx=np.zeros((3, 2), np.int32)), ((3, 4),)),
    "aclnnMoeComputeExpertTokens": (dict(sortedExperts=np.array([0, 1, 1], np.int32), numExperts=3), ((3,),)),
}


def test_at_least_twenty_formulas_each_with_a_case():
    assert len(FORMULAS) >= 20
    assert set(FORMULAS) == set(KINDS) == set(CALLS)
    for name, f in FORMULAS.items():
        assert f.aclnn == name and f.doc and "hiascend.com" in f.doc and callable(f.fn)


def _declare(tmp_path: Any) -> Any:
    text = "".join(f"aclnnStatus {name}GetWorkspaceSize({f.params}, uint64_t *workspaceSize, "
                   f"aclOpExecutor **executor);\n" for name, f in FORMULAS.items())
    (tmp_path / "aclnn_formulas.h").write_text(text)
    return tmp_path


@pytest.fixture
def formula_headers(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(headers.ENV_VAR, str(_declare(tmp_path)))
    headers.reset()
    yield
    monkeypatch.delenv(headers.ENV_VAR)
    headers.reset()


@pytest.mark.parametrize("name", sorted(KINDS))
def test_params_parse_into_the_header_kinds(name: str, formula_headers: Any):
    proto = headers.prototype(name)
    assert proto.supported, proto.unsupported
    got = " ".join(p.kind + ("!" if p.is_output else "") for p in proto.params if p.kind)
    assert got == KINDS[name]
    assert len(proto.params) == len(KINDS[name].split())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_formula_takes_the_inputs_and_returns_the_written_parameters(name: str, formula_headers: Any):
    proto = headers.prototype(name)
    kwargs, shapes = CALLS[name]
    # inputs: every parameter not written, plus the in-place ones (read, then written)
    inputs = {p.name for p in proto.params if not p.is_output or p.inplace}
    assert set(kwargs) == inputs
    written = [p.name for p in proto.params if p.is_output]
    result = FORMULAS[name].fn(**kwargs)
    results = result if isinstance(result, tuple) else (result,)
    assert len(results) == len(written) == len(shapes), (written, results)
    for pname, got, want in zip(written, results, shapes):
        if want is None:
            assert got is None, pname
        else:
            assert np.shape(got) == want, (pname, np.shape(got), want)

