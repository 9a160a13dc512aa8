"""The hand formulas (ascend_aclnn/cpu_reference/formulas/), the first round's and round 2's.

The first round's expected values are worked by hand from the operator's documented formula;
the comment beside each shows the arithmetic (round 2's section checks against PyTorch). Inputs are chosen so that the arithmetic is short
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


def test_gelu_is_the_tanh_form_its_kernel_computes():
    """8.1.RC1's TBE gelu and gelu_grad compute the tanh form, 3.6e-4 from the erf one at 1."""
    one = np.array([1.0], F32)
    close(FORMULAS["aclnnGelu"].fn(self=one), [GELU1_TANH])
    assert abs(float(FORMULAS["aclnnGelu"].fn(self=one)[0]) - GELU1) > 1e-4
    k = math.sqrt(2 / math.pi)
    t = math.tanh(k * 1.044715)
    slope = 0.5 * (1 + t) + 0.5 * (1 - t * t) * k * (1 + 3 * 0.044715)   # d/dx of the tanh form at 1
    close(FORMULAS["aclnnGeluBackward"].fn(gradOutput=np.array([2.0], F32), self=one), [2 * slope])


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
        fa(one, one, one, sparseMode=7)      # round 2 computes 0-6; 7 and 8 are variable-length bands
    with pytest.raises(NotImplementedError, match="inputLayout"):
        fa(one, one, one, layout="NSD")


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


def test_every_formula_has_a_case():
    """Each formula has a valid call with its output shapes (CALLS: the first round's, with
    hand-copied kinds; CALLS2: round 2's, whose kinds test_params_match_the_real_headers
    checks against CANN 8.1.RC1 itself)."""
    assert set(KINDS) == set(CALLS)
    assert set(FORMULAS) == set(CALLS) | set(CALLS2) and not set(CALLS) & set(CALLS2)
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



# ---------------------------------------------------------------------------------------------
# Round 2: each formula against an independent oracle (PyTorch's autograd and its CPU
# kernels, written from the operator's definition, never from the formula), then one valid
# call per new formula with its output shapes.
# ---------------------------------------------------------------------------------------------

def _t(a: Any, grad: bool = False) -> Any:
    torch = pytest.importorskip("torch")
    return torch.tensor(np.asarray(a, np.float64), requires_grad=grad)


def _np(t: Any) -> Any:
    return t.detach().numpy()


def fn(name: str) -> Any:
    return FORMULAS[name].fn


RNG = np.random.default_rng(37)


def rnd(*shape: int) -> Any:
    return RNG.standard_normal(shape)


def test_softmax_backwards_match_autograd():
    torch = pytest.importorskip("torch")
    x, g = _t(rnd(2, 3, 4), True), rnd(2, 3, 4)
    y = torch.softmax(x, 1)
    y.backward(_t(g))
    close(fn("aclnnSoftmaxBackward")(gradOutput=g, output=_np(y), dim=1), _np(x.grad), 1e-10, 1e-10)
    x2 = _t(rnd(2, 3, 4), True)
    ly = torch.log_softmax(x2, -1)
    ly.backward(_t(g))
    close(fn("aclnnLogSoftmaxBackward")(gradOutput=g, output=_np(ly), dim=-1), _np(x2.grad), 1e-10, 1e-10)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch_with_running_statistics(training: bool):
    torch = pytest.importorskip("torch")
    x, w, b = rnd(4, 3, 2, 2), rnd(3), rnd(3)
    rm, rv = rnd(3), np.abs(rnd(3)) + 0.5
    trm, trv = _t(rm), _t(rv)
    want = torch.nn.functional.batch_norm(_t(x), trm, trv, _t(w), _t(b), training, 0.1, 1e-5)
    got_rm, got_rv, y, save_mean, save_invstd = fn("aclnnBatchNorm")(
        input=x, weight=w, bias=b, runningMean=rm, runningVar=rv, training=training, momentum=0.1, eps=1e-5)
    close(y, _np(want), 1e-10, 1e-10)
    close(got_rm, _np(trm), 1e-12, 1e-12)        # torch updates the running stats in place
    close(got_rv, _np(trv), 1e-12, 1e-12)
    if training:
        close(save_mean, x.mean(axis=(0, 2, 3)), 1e-12, 1e-12)
        close(save_invstd, 1 / np.sqrt(x.var(axis=(0, 2, 3)) + 1e-5), 1e-10, 1e-10)
    else:
        assert save_mean is None and save_invstd is None   # left alone: the doc does not say


def test_batch_norm_sync_family_composes_to_the_batch_norm_backward():
    """Stats -> GatherStatsWithCounts (one device) -> ReduceBackward -> ElemtBackward gives
    torch's native_batch_norm_backward; Elemt gives the forward."""
    torch = pytest.importorskip("torch")
    x, w, b, g = rnd(4, 3, 5), rnd(3), rnd(3), rnd(4, 3, 5)
    mean, invstd = fn("aclnnBatchNormStats")(input=x, eps=1e-5)
    rm, rv, mean_all, invstd_all = fn("aclnnBatchNormGatherStatsWithCounts")(
        input=x, mean=mean[None], invstd=invstd[None], runningMean=np.zeros(3), runningVar=np.ones(3),
        momentum=0.1, eps=1e-5, counts=np.array([20.0]))
    close(mean_all, mean, 1e-12, 1e-12)
    close(invstd_all, invstd, 1e-9, 1e-9)
    close(rv, 0.9 + 0.1 * x.var(axis=(0, 2)) * 20 / 19, 1e-10, 1e-10)
    _, _, y = fn("aclnnBatchNormElemt")(input=x, weight=w, bias=b, mean=mean, invstd=invstd, eps=1e-5)
    close(y, _np(torch.nn.functional.batch_norm(_t(x), None, None, _t(w), _t(b), True, 0.1, 1e-5)), 1e-9, 1e-9)
    sum_dy, sum_dy_xmu, gw, gb = fn("aclnnBatchNormReduceBackward")(
        gradOut=g, input=x, mean=mean, invstd=invstd, weight=w, inputG=True, weightG=True, biasG=True)
    _, gi = fn("aclnnBatchNormElemtBackward")(gradOut=g, input=x, mean=mean, invstd=invstd, weight=w, sumDy=sum_dy,
                                              sumDyXmu=sum_dy_xmu, counter=np.array([20.0]))
    want = torch.ops.aten.native_batch_norm_backward(_t(g), _t(x), _t(w), None, None, _t(mean), _t(invstd), True,
                                                     1e-5, [True, True, True])
    close(gi, _np(want[0]), 1e-9, 1e-9)
    close(gw, _np(want[1]), 1e-9, 1e-9)
    close(gb, _np(want[2]), 1e-9, 1e-9)


def test_rms_norm_grad_swi_glu_grad_and_ge_glu_backwards_match_autograd():
    torch = pytest.importorskip("torch")
    x, gam, dy = _t(rnd(2, 3, 4), True), _t(rnd(4), True), rnd(2, 3, 4)
    rstd = torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)
    (x * rstd * gam).backward(_t(dy))
    dx, dg = fn("aclnnRmsNormGrad")(dy=dy, x=_np(x), rstd=_np(rstd), gamma=_np(gam))
    close(dx, _np(x.grad), 1e-5, 1e-5)
    close(dg, _np(gam.grad), 1e-5, 1e-5)
    z, gy = _t(rnd(3, 8), True), rnd(3, 4)
    a, b2 = z.chunk(2, -1)
    (torch.nn.functional.silu(a) * b2).backward(_t(gy))
    close(fn("aclnnSwiGluGrad")(yGrad=gy, x=_np(z), dim=-1), _np(z.grad), 1e-5, 1e-5)
    for approximate, mode in ((0, "none"), (1, "tanh")):
        z2 = _t(rnd(3, 8), True)
        a2, b3 = z2.chunk(2, -1)
        (a2 * torch.nn.functional.gelu(b3, approximate=mode)).backward(_t(gy))
        got = fn("aclnnGeGluBackward")(gradOutput=gy, self=_np(z2), gelu=None, dim=-1, approximate=approximate)
        close(got, _np(z2.grad), 1e-5, 1e-5)


def test_deep_norm_and_add_layer_norm_grads_match_autograd():
    torch = pytest.importorskip("torch")
    x, gx, gam, beta, dy = _t(rnd(3, 4), True), _t(rnd(3, 4), True), _t(rnd(4), True), _t(rnd(4), True), rnd(3, 4)
    xp = 0.7 * x + gx
    mean = xp.mean(-1, keepdim=True)
    rstd = torch.rsqrt(xp.var(-1, unbiased=False, keepdim=True) + 1e-5)
    ((xp - mean) * rstd * gam + beta).backward(_t(dy))
    dx, dgx, dbeta, dgamma = fn("aclnnDeepNormGrad")(dy=dy, x=_np(x), gx=_np(gx), gamma=_np(gam), mean=_np(mean),
                                                     rstd=_np(rstd), alpha=0.7)
    for got, want in ((dx, x.grad), (dgx, gx.grad), (dbeta, beta.grad), (dgamma, gam.grad)):
        close(got, _np(want), 1e-4, 1e-4)


def _attention(q: Any, k: Any, v: Any, mask: Any, scale: float) -> Any:
    """Masked attention written out in torch, per (B, N, S, D)."""
    torch = pytest.importorskip("torch")
    s = scale * q @ k.transpose(-1, -2)
    s = s.masked_fill(torch.as_tensor(mask), float("-inf"))
    return torch.softmax(s, -1) @ v


@pytest.mark.parametrize("mode", [2, 3, 4])
def test_flash_attention_sparse_modes_match_their_masks(mode: int):
    q, k, v = rnd(1, 2, 3, 4), rnd(1, 2, 5, 4), rnd(1, 2, 5, 4)
    i, j = np.arange(3)[:, None], np.arange(5)[None, :]
    mask = {2: j > i, 3: j > i + 2, 4: (j > i + 2 + 1) | (j < i + 2 - 1)}[mode]
    compressed = np.triu(np.ones((2048, 2048), bool), 1)    # what CANN asks for; the mode decides
    _, _, _, out = fa(q, k, v, scaleValue=0.5, sparseMode=mode, preTokens=1, nextTokens=1,
                      attenMaskOptional=compressed)
    close(out, _np(_attention(_t(q), _t(k), _t(v), mask, 0.5)), 1e-5, 1e-5)


def test_flash_attention_layouts_agree_and_tnd_cuts_batches():
    q, k, v = rnd(2, 2, 3, 4), rnd(2, 2, 3, 4), rnd(2, 2, 3, 4)
    _, _, _, bnsd = fa(q, k, v, heads=2, scaleValue=0.5, sparseMode=2, layout="BNSD")
    _, _, _, bsnd = fa(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3), heads=2,
                       scaleValue=0.5, sparseMode=2, layout="BSND")
    close(bsnd.transpose(0, 2, 1, 3), bnsd)
    bsh = lambda t: t.transpose(0, 2, 1, 3).reshape(2, 3, 8)  # noqa: E731
    _, _, _, out_bsh = fa(bsh(q), bsh(k), bsh(v), heads=2, scaleValue=0.5, sparseMode=2, layout="BSH")
    close(out_bsh, bsh(bnsd))
    tnd = lambda t: t.transpose(0, 2, 1, 3).reshape(6, 2, 4)  # noqa: E731  both batches of 3 tokens
    mx, _, _, out_tnd = fn("aclnnFlashAttentionVarLenScore")(
        query=tnd(q), key=tnd(k), value=tnd(v), realShiftOptional=None, dropMaskOptional=None,
        paddingMaskOptional=None, attenMaskOptional=None, prefixOptional=None, actualSeqQLenOptional=[3, 6],
        actualSeqKvLenOptional=[3, 6], scaleValue=0.5, keepProb=1.0, preTokens=65536, nextTokens=65536, headNum=2,
        inputLayout="TND", innerPrecise=0, sparseMode=2)
    close(out_tnd, tnd(bnsd))
    assert mx.shape == (6, 2, 8)


def test_flash_attention_grad_matches_autograd_with_gqa_and_pse():
    torch = pytest.importorskip("torch")
    q, k, v = _t(rnd(1, 4, 3, 2), True), _t(rnd(1, 2, 3, 2), True), _t(rnd(1, 2, 3, 2), True)
    pse, dy = _t(rnd(1, 4, 3, 3), True), rnd(1, 4, 3, 2)
    i, j = np.arange(3)[:, None], np.arange(3)[None, :]
    s = 0.5 * (q @ k.repeat_interleave(2, 1).transpose(-1, -2) + pse)
    s = s.masked_fill(torch.as_tensor(j > i), float("-inf"))
    (torch.softmax(s, -1) @ v.repeat_interleave(2, 1)).backward(_t(dy))
    dq, dk, dv, dpse = fn("aclnnFlashAttentionScoreGrad")(
        query=_np(q), keyIn=_np(k), value=_np(v), dy=dy, pseShiftOptional=_np(pse), dropMaskOptional=None,
        paddingMaskOptional=None, attenMaskOptional=None, softmaxMaxOptional=None, softmaxSumOptional=None,
        softmaxInOptional=None, attentionInOptional=None, prefixOptional=None, scaleValue=0.5, keepProb=1.0,
        preTokens=65536, nextTokens=65536, headNum=4, inputLayout="BNSD", innerPrecise=0, sparseMode=2)
    for got, want in ((dq, q.grad), (dk, k.grad), (dv, v.grad), (dpse, pse.grad)):
        close(got, _np(want), 1e-5, 1e-5)


def test_inference_attention_family_matches_masked_attention():
    q, k, v = rnd(2, 2, 1, 4), rnd(2, 2, 5, 4), rnd(2, 2, 5, 4)
    # IFA: actualSeqLengths are the valid cache lengths: batch 0 sees 3 keys, batch 1 all 5
    got = fn("aclnnIncreFlashAttention")(query=q, key=[k], value=[v], pseShift=None, attenMask=None,
                                         actualSeqLengths=[3, 5], numHeads=2, scaleValue=0.5, inputLayout="BNSD",
                                         numKeyValueHeads=2)
    mask = np.zeros((2, 1, 1, 5), bool)
    mask[0, ..., 3:] = True
    close(got, _np(_attention(_t(q), _t(k), _t(v), mask, 0.5)), 1e-5, 1e-5)
    q2 = rnd(1, 2, 4, 4)
    k2, v2 = rnd(1, 2, 4, 4), rnd(1, 2, 4, 4)
    causal = np.triu(np.ones((4, 4), bool), 1)
    pfa = fn("aclnnPromptFlashAttention")(query=q2, key=k2, value=v2, pseShift=None, attenMask=causal[None, None],
                                          actualSeqLengths=None, numHeads=2, scaleValue=0.5, preTokens=65536,
                                          nextTokens=65536, inputLayout="BNSD", numKeyValueHeads=0)
    want = _np(_attention(_t(q2), _t(k2), _t(v2), causal, 0.5))
    close(pfa, want, 1e-5, 1e-5)
    fia_args = {n: None for n in ("pseShift", "actualSeqLengths", "actualSeqLengthsKv", "deqScale1", "quantScale1",
                                  "deqScale2", "quantScale2", "quantOffset2", "antiquantScale", "antiquantOffset",
                                  "blockTable", "queryPaddingSize", "kvPaddingSize")}
    out, lse = fn("aclnnFusedInferAttentionScore")(
        query=q2, key=[k2], value=[v2], attenMask=causal, numHeads=2, scaleValue=0.5, preTokens=65536,
        nextTokens=65536, inputLayout="BNSD", numKeyValueHeads=2, sparseMode=0, innerPrecise=0, blockSize=0,
        antiquantMode=0, softmaxLseFlag=True, **fia_args)
    close(out, want, 1e-5, 1e-5)
    s = 0.5 * q2 @ k2.transpose(0, 1, 3, 2)
    s = np.where(causal, -np.inf, s)
    close(lse, np.log(np.exp(s).sum(-1, keepdims=True)), 1e-5, 1e-5)


@pytest.mark.parametrize("amsgrad,maximize", [(False, False), (True, True)])
def test_apply_adam_w_v2_is_one_torch_adamw_step(amsgrad: bool, maximize: bool):
    torch = pytest.importorskip("torch")
    var, m, v, g = rnd(5), rnd(5), np.abs(rnd(5)), rnd(5)
    mx = np.abs(rnd(5))
    p = torch.nn.Parameter(_t(var))
    opt = torch.optim.AdamW([p], lr=0.01, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1, amsgrad=amsgrad,
                            maximize=maximize)
    opt.state[p] = {"step": torch.tensor(2.0), "exp_avg": _t(m), "exp_avg_sq": _t(v)}
    if amsgrad:
        opt.state[p]["max_exp_avg_sq"] = _t(mx)
    p.grad = _t(g)
    opt.step()
    got = fn("aclnnApplyAdamWV2")(varRef=var, mRef=m, vRef=v, maxGradNormOptionalRef=mx if amsgrad else None,
                                  grad=g, step=np.array([3.0]), lr=0.01, beta1=0.9, beta2=0.99, weightDecay=0.1,
                                  eps=1e-8, amsgrad=amsgrad, maximize=maximize)
    close(got[0], _np(p), 1e-12, 1e-12)
    close(got[1], _np(opt.state[p]["exp_avg"]), 1e-12, 1e-12)
    close(got[2], _np(opt.state[p]["exp_avg_sq"]), 1e-12, 1e-12)


def test_grouped_matmul_splits_rows_by_cumulative_ends_and_counts():
    x, w1, w2 = rnd(5, 3), rnd(3, 2), rnd(3, 2)
    (y,) = fn("aclnnGroupedMatmulV2")(x=[x], weight=[w1, w2], biasOptional=None, scaleOptional=None,
                                      offsetOptional=None, antiquantScaleOptional=None, antiquantOffsetOptional=None,
                                      groupListOptional=[2, 5], splitItem=3, groupType=0)
    close(y, np.concatenate([x[:2] @ w1, x[2:] @ w2]), 1e-6, 1e-6)
    out, _, _ = fn("aclnnGroupedMatmulV4")(
        x=[x], weight=[np.stack([w1, w2])], biasOptional=None, scaleOptional=None, offsetOptional=None,
        antiquantScaleOptional=None, antiquantOffsetOptional=None, perTokenScaleOptional=None,
        groupListOptional=np.array([2, 3]), activationInputOptional=None, activationQuantScaleOptional=None,
        activationQuantOffsetOptional=None, splitItem=0, groupType=0, groupListType=1, actType=0)
    close(out[0], x[:2] @ w1, 1e-6, 1e-6)
    close(out[1], x[2:] @ w2, 1e-6, 1e-6)


def test_cross_entropy_loss_and_grad_match_torch():
    torch = pytest.importorskip("torch")
    x, t, w = _t(rnd(4, 5), True), np.array([1, 4, -100, 0]), np.abs(rnd(5)) + 0.1
    loss = torch.nn.functional.cross_entropy(x, torch.tensor(t), weight=_t(w), ignore_index=-100,
                                             label_smoothing=0.2)
    loss.backward()
    got, logp, _, _ = fn("aclnnCrossEntropyLoss")(input=_np(x), target=t, weightOptional=w, reductionOptional="mean",
                                                  ignoreIndex=-100, labelSmoothing=0.2, lseSquareScaleForZloss=0.0,
                                                  returnZloss=False)
    close(got, _np(loss), 1e-5, 1e-5)
    grad = fn("aclnnCrossEntropyLossGrad")(gradLoss=np.array(1.0), logProb=logp, target=t, weightOptional=w,
                                           gradZlossOptional=None, lseForZlossOptional=None, reductionOptional="mean",
                                           ignoreIndex=-100, labelSmoothing=0.2, lseSquareScaleForZloss=0.0)
    close(grad, _np(x.grad), 1e-5, 1e-5)


def test_loss_and_padding_backwards_match_autograd():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, t, w, pw = _t(rnd(3, 4), True), _t(RNG.random((3, 4)), True), np.abs(rnd(4)), np.abs(rnd(4))
    loss = F.binary_cross_entropy_with_logits(x, t, weight=_t(w), pos_weight=_t(pw), reduction="mean")
    loss.backward()
    args = dict(gradOutput=np.array(1.0), self=_np(x), target=_np(t), weightOptional=w, posWeightOptional=pw,
                reduction=1)
    close(fn("aclnnBinaryCrossEntropyWithLogitsBackward")(**args), _np(x.grad), 1e-6, 1e-6)
    close(fn("aclnnBinaryCrossEntropyWithLogitsTargetBackward")(**args), _np(t.grad), 1e-6, 1e-6)
    xp, g = _t(rnd(1, 2, 3, 4), True), rnd(1, 2, 6, 7)
    F.pad(xp, (1, 2, 2, 1), mode="circular").backward(_t(g))
    close(fn("aclnnCircularPad2dBackward")(gradOutput=g, self=_np(xp), padding=[1, 2, 2, 1]), _np(xp.grad))
    xs, ws, gs = _t(rnd(2, 3, 4), True), _t(np.abs(rnd(3)) * 0.3, True), rnd(2, 3, 4)
    F.prelu(xs, ws).backward(_t(gs))
    gi, gw = fn("aclnnPreluBackward")(gradOutput=gs, self=_np(xs), weight=_np(ws))
    close(gi, _np(xs.grad))
    close(gw, _np(ws.grad))


def test_pooling_resampling_and_norms_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rnd(1, 2, 7, 6)
    want = F.max_pool2d(_t(x), (3, 2), stride=2, padding=1, dilation=1, ceil_mode=True)
    got = fn("aclnnMaxPool")(self=x, kernelShape=[3, 2], strides=[2, 2], autoPad=0, pads=[1, 1, 1, 1],
                             dilations=[1, 1], ceilMode=1)
    close(got, _np(want))
    close(fn("aclnnUpsampleNearest2dV2")(self=x, outputSize=[10, 13], scalesH=0.0, scalesW=0.0),
          _np(F.interpolate(_t(x), size=(10, 13), mode="nearest")))
    y, mean, var = fn("aclnnInstanceNorm")(x=x, gamma=np.ones(2), beta=np.zeros(2), dataFormat="NCHW", eps=1e-5)
    close(y, _np(F.instance_norm(_t(x), eps=1e-5)), 1e-5, 1e-5)
    assert mean.shape == var.shape == (1, 2, 1, 1)
    out, m2, r2 = fn("aclnnGroupNormSilu")(self=x, gamma=np.ones(2), beta=np.zeros(2), group=2, eps=1e-5)
    close(out, _np(F.silu(F.group_norm(_t(x), 2, eps=1e-5))), 1e-5, 1e-5)
    assert m2.shape == r2.shape == (1, 2)
    idx = np.array([[2, 0, 1]])
    close(fn("aclnnOneHot")(self=idx, numClasses=4, onValue=np.array([5.0]), offValue=np.array([-1.0]), axis=-1),
          np.where(_np(F.one_hot(torch.tensor(idx), 4)) == 1, 5.0, -1.0))
    a, b, c = rnd(3, 2), rnd(4, 3), rnd(2, 4)
    close(fn("aclnnGemm")(A=a, B=b, C=c, alpha=2.0, beta=0.5, transA=1, transB=1, cubeMathType=0),
          2 * a.T @ b.T + 0.5 * c, 1e-5, 1e-5)


def test_quant_matmul_accumulates_exactly_and_reads_packed_scales():
    x1 = np.array([[127, -128], [3, 4]], np.int8)
    x2 = np.array([[127, 1], [-128, 2]], np.int8)
    acc = x1.astype(np.int64) @ x2.astype(np.int64)            # 127*127 + 128*128 = 32513 ...
    close(fn("aclnnQuantMatmul")(x1=x1, x2=x2, bias=np.array([1, 2], np.int32), deqScale=0.5), (acc + [1, 2]) * 0.5)
    packed = np.array([np.float32(0.25).view(np.uint32)], np.int64)  # float32 bits in the low 32 bits
    close(fn("aclnnQuantMatmulV3")(x1=x1, x2=x2, scale=packed, offset=None, bias=None, transposeX1=False,
                                   transposeX2=False), acc * 0.25)


def test_moe_token_permute_and_unpermute_follow_the_megatron_definition():
    """permute: tokens.index_select(0, argsort(indices.flatten(), stable) // k); unpermute puts
    each row back at its sorted index and sums the k copies weighted by probs."""
    torch = pytest.importorskip("torch")
    tokens, idx = rnd(4, 3), np.array([[2, 0], [1, 2], [0, 0], [1, 2]])
    perm, order = fn("aclnnMoeTokenPermute")(tokens=tokens, indices=idx, numOutTokens=0, paddedMode=False)
    want_order = torch.argsort(torch.tensor(idx).flatten(), stable=True)
    close(order, want_order.numpy())
    close(perm, tokens[want_order.numpy() // 2])
    probs = RNG.random((4, 2))
    back = fn("aclnnMoeTokenUnpermute")(permutedTokens=perm, sortedIndices=order, probsOptional=probs,
                                        paddedMode=False, restoreShapeOptional=None)
    close(back, tokens * probs.sum(axis=1, keepdims=True), 1e-6, 1e-6)   # every token went to k experts


# ---- the sampled tier ---------------------------------------------------------------------------

from ascend_aclnn.cpu_reference.formulas import sampled  # noqa: E402


def _checks(name: str, inputs: dict[str, Any]) -> list[Any]:
    got = FORMULAS[name].fn(**inputs)
    outs = list(got) if isinstance(got, tuple) else [got]
    assert FORMULAS[name].stats is not None
    return list(FORMULAS[name].stats(inputs, outs))


def test_gen_mask_has_the_npu_layout_and_do_mask_reads_it():
    mask = fn("aclnnDropoutGenMaskV2")(shape=[3, 100], prob=0.25, seed=7, offset=0, probDataType=np.dtype(F32))
    assert mask.dtype == np.uint8 and mask.shape == (48,)   # align(300, 128) / 8 = 384 / 8
    assert all(c.passed for c in _checks("aclnnDropoutGenMaskV2", dict(shape=[3, 100], prob=0.25, seed=7, offset=0,
                                                                       probDataType=np.dtype(F32))))
    x = rnd(3, 100)
    out = fn("aclnnDropoutDoMask")(self=x, mask=mask, prob=0.25)
    keep = np.unpackbits(mask, bitorder="little")[:300].reshape(3, 100).astype(bool)  # bit i of byte j: 8j+i
    close(out, np.where(keep, x / 0.75, 0.0))
    again = fn("aclnnDropoutGenMaskV2")(shape=[3, 100], prob=0.25, seed=7, offset=0, probDataType=np.dtype(F32))
    assert np.array_equal(mask, again)                                  # seeded: repeatable on a CPU


def test_sampled_statistics_fail_on_a_wrong_output():
    """The checks are not vacuous: an all-kept mask for prob 0.5, a normal draw off by one
    sigma, and a permutation with a repeat each fail their statistic."""
    n_checks = sampled._gen_mask_stats({"shape": [4096], "prob": 0.5}, [sampled.pack_bits(np.ones(4096, bool))])
    assert not all(c.passed for c in n_checks)
    z = np.random.default_rng(1).standard_normal(10000) + 1.0
    assert not all(c.passed for c in sampled._normal_stats({"mean": 0.0, "std": np.ones(10000)}, [z]))
    assert not all(c.passed for c in sampled._randperm_stats({"n": 4}, [np.array([0, 1, 1, 3])]))


@pytest.mark.parametrize("name,inputs", [
    ("aclnnDropout", dict(input=np.ones((64, 64)), p=0.3, train=True, seed=1, offset=2)),
    ("aclnnMultinomial", dict(self=np.array([[1.0, 0.0, 3.0], [0.0, 1.0, 1.0]]), numsamples=2000, replacement=True,
                              seed=3, offset=0)),
    ("aclnnMultinomial", dict(self=np.array([[1.0, 2.0, 3.0, 0.5]]), numsamples=3, replacement=False, seed=3,
                              offset=0)),
    ("aclnnBernoulliTensor", dict(self=np.zeros((50, 50)), prob=np.full((50, 50), 0.2), seed=5, offset=0)),
    ("aclnnNormalTensorTensor", dict(mean=np.full((100, 100), 3.0), std=np.full((100, 100), 2.0), seed=0, offset=0)),
    ("aclnnInplaceUniform", {"selfRef": np.zeros((100, 100)), "from": -1.0, "to": 3.0, "seed": 0, "offset": 0}),
    ("aclnnInplaceRandom", {"selfRef": np.zeros((100, 100)), "from": 2, "to": 9, "seed": 0, "offset": 0}),
    ("aclnnRandperm", dict(n=1000, seed=4, offset=0)),
    ("aclnnRReluWithNoise", dict(self=rnd(40, 40), noise=np.zeros((40, 40)), lower=0.1, upper=0.3, training=True,
                                 seed=0, offset=0)),
])
def test_sampled_formulas_pass_their_own_statistics(name: str, inputs: dict[str, Any]):
    checks = _checks(name, inputs)
    assert checks and all(c.passed for c in checks), [c for c in checks if not c.passed]
    assert FORMULAS[name].tier == "sampled"


# ---- every round-2 formula: one valid call and its output shapes -----------------------------------

_ATT = dict(realShiftOptional=None, dropMaskOptional=None, paddingMaskOptional=None, attenMaskOptional=None,
            prefixOptional=None, scaleValue=0.5, keepProb=1.0, preTokens=65536, nextTokens=65536, headNum=2,
            inputLayout="BSH", innerPrecise=0, sparseMode=0)
_ATTG = dict(pseShiftOptional=None, dropMaskOptional=None, paddingMaskOptional=None, attenMaskOptional=None,
             softmaxMaxOptional=None, softmaxSumOptional=None, softmaxInOptional=None, attentionInOptional=None,
             prefixOptional=None, scaleValue=0.5, keepProb=1.0, preTokens=65536, nextTokens=65536, headNum=2,
             inputLayout="BSH", innerPrecise=0, sparseMode=0)
_QKV = dict(query=np.ones((2, 3, 4), F32), key=np.ones((2, 5, 4), F32), value=np.ones((2, 5, 4), F32))
_QKVG = dict(query=np.ones((2, 3, 4), F32), keyIn=np.ones((2, 3, 4), F32), value=np.ones((2, 3, 4), F32),
             dy=np.ones((2, 3, 4), F32))
_TND = dict(query=np.ones((5, 2, 2), F32), key=np.ones((5, 2, 2), F32), value=np.ones((5, 2, 2), F32))
_GMM = dict(biasOptional=None, scaleOptional=None, offsetOptional=None, antiquantScaleOptional=None,
            antiquantOffsetOptional=None)
_FIA = dict(pseShift=None, attenMask=None, actualSeqLengths=None, actualSeqLengthsKv=None, deqScale1=None,
            quantScale1=None, deqScale2=None, quantScale2=None, quantOffset2=None, antiquantScale=None,
            antiquantOffset=None, blockTable=None, queryPaddingSize=None, kvPaddingSize=None, numHeads=2,
            scaleValue=0.5, preTokens=65536, nextTokens=65536, inputLayout="BSH", numKeyValueHeads=2, sparseMode=0,
            innerPrecise=0, blockSize=0, antiquantMode=0, softmaxLseFlag=True)
_FIA2 = {**{k + "Optional": v for k, v in _FIA.items() if v is None},
         **{k: v for k, v in _FIA.items() if v is not None}, "keyAntiquantScaleOptional": None,
         "keyAntiquantOffsetOptional": None, "valueAntiquantScaleOptional": None, "valueAntiquantOffsetOptional": None,
         "keySharedPrefixOptional": None, "valueSharedPrefixOptional": None, "actualSharedPrefixLenOptional": None,
         "keyAntiquantMode": 0, "valueAntiquantMode": 0}
_FIA2 = {("pseShiftOptional" if k == "pseShiftOptional" else k): v for k, v in _FIA2.items()}
_IFA = dict(pseShift=None, attenMask=None, actualSeqLengths=None, numHeads=2, scaleValue=0.5, inputLayout="BSH",
            numKeyValueHeads=2)
_IFAQ = dict(dequantScale1=None, quantScale1=None, dequantScale2=None, quantScale2=None, quantOffset2=None)
_PFAQ = dict(actualSeqLengthsKv=None, deqScale1=None, quantScale1=None, deqScale2=None, quantScale2=None,
             quantOffset2=None)
_PFA = dict(pseShift=None, attenMask=None, actualSeqLengths=None, numHeads=2, scaleValue=0.5, preTokens=65536,
            nextTokens=65536, inputLayout="BSH", numKeyValueHeads=2)
_X = np.ones((2, 3, 4, 4), F32)
_B = (2, 3, 4, 4)

CALLS2: dict[str, tuple[dict[str, Any], tuple[Any, ...]]] = {
    "aclnnGelu": (dict(self=_X), (_B,)),
    "aclnnGeluBackward": (dict(gradOutput=_X, self=_X), (_B,)),
    "aclnnFlashAttentionScore": (dict(**_QKV, **_ATT), ((2, 2, 3, 8), (2, 2, 3, 8), None, (2, 3, 4))),
    "aclnnFlashAttentionScoreV2": (dict(**_QKV, **_ATT, qStartIdxOptional=None, kvStartIdxOptional=None, pseType=1),
                                   ((2, 2, 3, 8), (2, 2, 3, 8), None, (2, 3, 4))),
    "aclnnFlashAttentionVarLenScore": (dict(**_TND, **{**_ATT, "inputLayout": "TND"}, actualSeqQLenOptional=[2, 5],
                                            actualSeqKvLenOptional=[2, 5]), ((5, 2, 8), (5, 2, 8), None, (5, 2, 2))),
    "aclnnFlashAttentionVarLenScoreV2": (dict(**_TND, **{**_ATT, "inputLayout": "TND"}, actualSeqQLenOptional=[2, 5],
                                              actualSeqKvLenOptional=[2, 5], qStartIdxOptional=None,
                                              kvStartIdxOptional=None, pseType=1),
                                         ((5, 2, 8), (5, 2, 8), None, (5, 2, 2))),
    "aclnnFlashAttentionScoreGrad": (dict(**_QKVG, **_ATTG), ((2, 3, 4), (2, 3, 4), (2, 3, 4), None)),
    "aclnnFlashAttentionScoreGradV2": (dict(**_QKVG, **_ATTG, qStartIdxOptional=None, kvStartIdxOptional=None,
                                            pseType=1), ((2, 3, 4), (2, 3, 4), (2, 3, 4), None)),
    "aclnnFlashAttentionUnpaddingScoreGrad": (
        dict(query=_TND["query"], keyIn=_TND["key"], value=_TND["value"], dy=np.ones((5, 2, 2), F32),
             **{**_ATTG, "inputLayout": "TND"}, actualSeqQLenOptional=[2, 5], actualSeqKvLenOptional=[2, 5]),
        ((5, 2, 2), (5, 2, 2), (5, 2, 2), None)),
    "aclnnFlashAttentionUnpaddingScoreGradV2": (
        dict(query=_TND["query"], keyIn=_TND["key"], value=_TND["value"], dy=np.ones((5, 2, 2), F32),
             **{**_ATTG, "inputLayout": "TND"}, actualSeqQLenOptional=[2, 5], actualSeqKvLenOptional=[2, 5],
             qStartIdxOptional=None, kvStartIdxOptional=None, pseType=0), ((5, 2, 2), (5, 2, 2), (5, 2, 2), None)),
    "aclnnPromptFlashAttention": (dict(**_QKV, **_PFA), ((2, 3, 4),)),
    "aclnnPromptFlashAttentionV2": (dict(**_QKV, **_PFA, **_PFAQ, sparseMode=0), ((2, 3, 4),)),
    "aclnnPromptFlashAttentionV3": (dict(**_QKV, **_PFA, **_PFAQ, sparseMode=0, innerPrecise=0), ((2, 3, 4),)),
    "aclnnIncreFlashAttention": (dict(query=np.ones((2, 1, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                      value=[np.ones((2, 5, 4), F32)], **_IFA), ((2, 1, 4),)),
    "aclnnIncreFlashAttentionV2": (dict(query=np.ones((2, 1, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                        value=[np.ones((2, 5, 4), F32)], **_IFA, **_IFAQ), ((2, 1, 4),)),
    "aclnnIncreFlashAttentionV3": (dict(query=np.ones((2, 1, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                        value=[np.ones((2, 5, 4), F32)], **_IFA, **_IFAQ, antiquantScale=None,
                                        antiquantOffset=None, blocktable=None, blockSize=0, innerPrecise=0),
                                   ((2, 1, 4),)),
    "aclnnIncreFlashAttentionV4": (dict(query=np.ones((2, 1, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                        value=[np.ones((2, 5, 4), F32)], **_IFA, **_IFAQ, antiquantScale=None,
                                        antiquantOffset=None, blocktable=None, kvPaddingSize=None, blockSize=0,
                                        innerPrecise=0), ((2, 1, 4),)),
    "aclnnFusedInferAttentionScore": (dict(query=np.ones((2, 3, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                           value=[np.ones((2, 5, 4), F32)], **_FIA), ((2, 3, 4), (2, 2, 3, 1))),
    "aclnnFusedInferAttentionScoreV2": (dict(query=np.ones((2, 3, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                             value=[np.ones((2, 5, 4), F32)], **_FIA2), ((2, 3, 4), (2, 2, 3, 1))),
    "aclnnFusedInferAttentionScoreV3": (dict(query=np.ones((2, 3, 4), F32), key=[np.ones((2, 5, 4), F32)],
                                             value=[np.ones((2, 5, 4), F32)], **_FIA2, queryRopeOptional=None,
                                             keyRopeOptional=None, keyRopeAntiquantScaleOptional=None),
                                        ((2, 3, 4), (2, 2, 3, 1))),
    "aclnnSoftmaxBackward": (dict(gradOutput=_X, output=_X, dim=1), (_B,)),
    "aclnnLogSoftmaxBackward": (dict(gradOutput=_X, output=_X, dim=1), (_B,)),
    "aclnnBatchNorm": (dict(input=_X, weight=None, bias=None, runningMean=np.zeros(3), runningVar=np.ones(3),
                            training=True, momentum=0.1, eps=1e-5), ((3,), (3,), _B, (3,), (3,))),
    "aclnnBatchNormStats": (dict(input=_X, eps=1e-5), ((3,), (3,))),
    "aclnnBatchNormElemt": (dict(input=_X, weight=None, bias=None, mean=np.zeros(3), invstd=np.ones(3), eps=1e-5),
                            (None, None, _B)),
    "aclnnBatchNormElemtBackward": (dict(gradOut=_X, input=_X, mean=np.zeros(3), invstd=np.ones(3), weight=None,
                                         sumDy=np.ones(3), sumDyXmu=np.ones(3), counter=np.array([32.0])),
                                    (None, _B)),
    "aclnnBatchNormGatherStatsWithCounts": (dict(input=_X, mean=np.zeros((2, 3)), invstd=np.ones((2, 3)),
                                                 runningMean=None, runningVar=None, momentum=0.1, eps=1e-5,
                                                 counts=np.array([16.0, 16.0])), (None, None, (3,), (3,))),
    "aclnnBatchNormReduceBackward": (dict(gradOut=_X, input=_X, mean=np.zeros(3), invstd=np.ones(3), weight=None,
                                          inputG=True, weightG=False, biasG=True), ((3,), (3,), None, (3,))),
    "aclnnRmsNormGrad": (dict(dy=np.ones((2, 4)), x=np.ones((2, 4)), rstd=np.ones((2, 1)), gamma=np.ones(4)),
                         ((2, 4), (4,))),
    "aclnnSwiGluGrad": (dict(yGrad=np.ones((2, 3)), x=np.ones((2, 6)), dim=-1), ((2, 6),)),
    "aclnnGeGlu": (dict(self=np.ones((2, 6)), dim=-1, approximate=1), ((2, 3), (2, 3))),
    "aclnnGeGluBackward": (dict(gradOutput=np.ones((2, 3)), self=np.ones((2, 6)), gelu=np.ones((2, 3)), dim=-1,
                                approximate=0), ((2, 6),)),
    "aclnnGeGluV3Backward": (dict(gradOutput=np.ones((2, 3)), self=np.ones((2, 6)), gelu=np.ones((2, 3)), dim=-1,
                                  approximate=0, activateLeft=True), ((2, 6),)),
    "aclnnDeepNormGrad": (dict(dy=np.ones((2, 4)), x=np.ones((2, 4)), gx=np.ones((2, 4)), gamma=np.ones(4),
                               mean=np.ones((2, 1)), rstd=np.ones((2, 1)), alpha=0.5), ((2, 4), (2, 4), (4,), (4,))),
    "aclnnAddLayerNormGrad": (dict(dy=np.ones((2, 4)), x1=np.ones((2, 4)), x2=np.ones((2, 4)), rstd=np.ones((2, 1)),
                                   mean=np.ones((2, 1)), gamma=np.ones(4), dsumOptional=None), ((2, 4), (4,), (4,))),
    "aclnnInstanceNorm": (dict(x=_X, gamma=np.ones(3), beta=np.zeros(3), dataFormat="NCHW", eps=1e-5),
                          (_B, (2, 3, 1, 1), (2, 3, 1, 1))),
    "aclnnGemm": (dict(A=np.ones((2, 3)), B=np.ones((3, 4)), C=np.ones((2, 4)), alpha=1.0, beta=1.0, transA=0,
                       transB=0, cubeMathType=0), ((2, 4),)),
    "aclnnOneHot": (dict(self=np.array([0, 2]), numClasses=3, onValue=np.array([1]), offValue=np.array([0]), axis=-1),
                    ((2, 3),)),
    "aclnnEqual": (dict(self=_X, other=_X), ((1,),)),
    "aclnnInplaceFillDiagonal": (dict(selfRef=np.zeros((5, 3)), fillValue=1.0, wrap=True), ((5, 3),)),
    "aclnnMaxN": (dict(tensors=[_X, _X]), (_B,)),
    "aclnnMinN": (dict(tensors=[_X, _X]), (_B,)),
    "aclnnSum": (dict(tensors=[_X, _X]), (_B,)),
    "aclnnReduceLogSum": (dict(data=_X, axes=[1], keepDims=False, noopWithEmptyAxes=False), ((2, 4, 4),)),
    "aclnnMeanV2": (dict(self=_X, dim=[], keepDim=False, noopWithEmptyAxes=False), ((),)),
    "aclnnMaxV2": (dict(self=_X, dims=[0, 1], keepDims=True, noopWithEmptyDims=False), ((1, 1, 4, 4),)),
    "aclnnSwish": (dict(self=_X, betaOptional=None), (_B,)),
    "aclnnSwishBackward": (dict(gradOutput=_X, self=_X, betaOptional=2.0), (_B,)),
    "aclnnShrink": (dict(self=_X, lambd=0.5, bias=0.1), (_B,)),
    "aclnnFlatten": (dict(self=_X, axis=2), ((6, 16),)),
    "aclnnGlobalAveragePool": (dict(self=_X), ((2, 3, 1, 1),)),
    "aclnnGlobalMaxPool": (dict(self=_X), ((2, 3, 1, 1),)),
    "aclnnFatreluMul": (dict(input=np.ones((2, 6)), threshold=np.array([0.5])), ((2, 3),)),
    "aclnnSeluBackward": (dict(gradOutput=_X, result=_X), (_B,)),
    "aclnnL1LossBackward": (dict(gradOutput=np.array(1.0), self=_X, target=_X, reduction=1), (_B,)),
    "aclnnKlDivBackward": (dict(gradOutput=np.array(1.0), self=_X, target=_X, reduction=2, logTarget=True), (_B,)),
    "aclnnGatherV2": (dict(self=_X, dim=1, index=np.array([[0, 2]])), ((2, 1, 2, 4, 4),)),
    "aclnnGatherNd": (dict(self=_X, indices=np.array([[0, 1], [1, 2]]), negativeIndexSupport=False), ((2, 4, 4),)),
    "aclnnScatterNd": (dict(data=_X, indices=np.array([[0, 1]]), updates=np.ones((1, 4, 4))), (_B,)),
    "aclnnSliceV2": (dict(self=_X, starts=[1], ends=[4], axes=[2], steps=[2]), ((2, 3, 2, 4),)),
    "aclnnScale": (dict(x=_X, scale=np.ones(3), bias=None, axis=1, numAxes=1, scaleFromBlob=False), (_B,)),
    "aclnnReal": (dict(self=np.ones((2, 3), np.complex64)), ((2, 3),)),
    "aclnnScaledMaskedSoftmax": (dict(x=_X, mask=None, scale=0.5, fixedTriuMask=True), (_B,)),
    "aclnnScaledMaskedSoftmaxBackward": (dict(gradOutput=_X, y=_X, mask=np.zeros(_B, bool), scale=0.5,
                                              fixTriuMask=False), (_B,)),
    "aclnnCrossEntropyLoss": (dict(input=np.ones((2, 3)), target=np.array([0, 2]), weightOptional=None,
                                   reductionOptional="none", ignoreIndex=-100, labelSmoothing=0.0,
                                   lseSquareScaleForZloss=0.0, returnZloss=False), ((2,), (2, 3), None, None)),
    "aclnnCrossEntropyLossGrad": (dict(gradLoss=np.ones(2), logProb=np.zeros((2, 3)), target=np.array([0, 2]),
                                       weightOptional=None, gradZlossOptional=None, lseForZlossOptional=None,
                                       reductionOptional="none", ignoreIndex=-100, labelSmoothing=0.1,
                                       lseSquareScaleForZloss=0.0), ((2, 3),)),
    "aclnnIndexCopy": (dict(selfRef=_X, dim=1, index=np.array([2]), source=np.zeros((2, 1, 4, 4)), outRef=_X),
                       (None, _B)),
    "aclnnInplaceAtan2": (dict(selfRef=_X, other=_X), (_B, None)),
    "aclnnNLLLoss2dBackward": (dict(gradOutput=np.array(1.0), self=_X, target=np.zeros((2, 4, 4), np.int64),
                                    weight=None, reduction=1, ignoreIndex=-100, totalWeight=np.array(32.0)),
                               (None, _B)),
    "aclnnPreluBackward": (dict(gradOutput=_X, self=_X, weight=np.ones(3)), (_B, (3,))),
    "aclnnForeachRoundOffNumber": (dict(x=[_X, _X], roundMode=np.array([2])), None),
    "aclnnFakeQuantPerTensorAffineCachemask": (dict(self=_X, scale=np.array([0.1]), zeroPoint=np.array([0]),
                                                    fakeQuantEnbled=1.0, quantMin=-128, quantMax=127), (_B, _B)),
    "aclnnAminmax": (dict(self=_X, dim=[1], keepDim=False), ((2, 4, 4), (2, 4, 4))),
    "aclnnMaxUnpool2dBackward": (dict(gradOutput=np.ones((2, 3, 8, 8)), self=_X, indices=np.zeros(_B, np.int64),
                                      outputSize=[8, 8]), (_B,)),
    "aclnnMaxUnpool3dBackward": (dict(gradOutput=np.ones((1, 2, 4, 4, 4)), self=np.ones((1, 2, 2, 2, 2)),
                                      indices=np.zeros((1, 2, 2, 2, 2), np.int64), outputSize=[4, 4, 4],
                                      stride=[2, 2, 2], padding=[0, 0, 0]), ((1, 2, 2, 2, 2),)),
    "aclnnBinaryCrossEntropyWithLogitsBackward": (dict(gradOutput=_X, self=_X, target=_X, weightOptional=None,
                                                       posWeightOptional=None, reduction=0), (_B,)),
    "aclnnBinaryCrossEntropyWithLogitsTargetBackward": (dict(gradOutput=_X, self=_X, target=_X, weightOptional=None,
                                                             posWeightOptional=None, reduction=0), (_B,)),
    "aclnnCircularPad2dBackward": (dict(gradOutput=np.ones((2, 3, 6, 6)), self=_X, padding=[1, 1, 1, 1]), (_B,)),
    "aclnnCircularPad3dBackward": (dict(gradOutput=np.ones((2, 5, 6, 6)), self=_X, padding=[1, 1, 1, 1, 1, 1]),
                                   (_B,)),
    "aclnnGroupedBiasAddGrad": (dict(gradY=np.ones((5, 4)), groupIdxOptional=np.array([2, 5])), ((2, 4),)),
    "aclnnGroupedBiasAddGradV2": (dict(gradY=np.ones((5, 4)), groupIdxOptional=np.array([2, 3]), groupIdxType=1),
                                  ((2, 4),)),
    "aclnnGroupNormSilu": (dict(self=_X, gamma=None, beta=None, group=3, eps=1e-5), (_B, (2, 3), (2, 3))),
    "aclnnGroupNormSiluV2": (dict(self=_X, gamma=None, beta=None, group=1, eps=1e-5, activateSilu=False),
                             (_B, (2, 1), (2, 1))),
    "aclnnUpsampleNearest1dV2": (dict(self=np.ones((2, 3, 4)), outputSize=[8], scaleL=2.0), ((2, 3, 8),)),
    "aclnnUpsampleNearest2dV2": (dict(self=_X, outputSize=[8, 2], scalesH=2.0, scalesW=0.5), ((2, 3, 8, 2),)),
    "aclnnMaxPool": (dict(self=_X, kernelShape=[2, 2], strides=[2, 2], autoPad=0, pads=[0, 0, 0, 0], dilations=[],
                          ceilMode=0), ((2, 3, 2, 2),)),
    "aclnnMoeFinalizeRoutingV2": (dict(expandedX=np.ones((6, 4)), expandedRowIdx=np.arange(6), x1Optional=None,
                                       x2Optional=None, biasOptional=None, scalesOptional=np.ones((3, 2)),
                                       expertIdxOptional=None, dropPadMode=0), ((3, 4),)),
    "aclnnRopeWithSinCosCache": (dict(positions=np.array([0, 1]), queryIn=np.ones((2, 8)), keyIn=np.ones((2, 4)),
                                      cosSinCache=np.ones((4, 2)), mropeSection=None, headSize=4, isNeoxStyle=True),
                                 ((2, 8), (2, 4))),
    "aclnnApplyAdamWV2": (dict(varRef=np.ones(3), mRef=np.zeros(3), vRef=np.zeros(3), maxGradNormOptionalRef=None,
                               grad=np.ones(3), step=np.array([1.0]), lr=0.1, beta1=0.9, beta2=0.999,
                               weightDecay=0.0, eps=1e-8, amsgrad=False, maximize=False), ((3,), (3,), (3,), None)),
    "aclnnApplyFusedEmaAdam": (dict(grad=np.ones(3), varRef=np.ones(3), mRef=np.zeros(3), vRef=np.zeros(3),
                                    sRef=np.ones(3), step=np.array([1]), lr=0.1, emaDecay=0.9, beta1=0.9, beta2=0.999,
                                    eps=1e-8, mode=1, biasCorrection=True, weightDecay=0.01),
                               ((3,), (3,), (3,), (3,))),
    "aclnnGroupedMatmul": (dict(x=[np.ones((5, 3))], weight=[np.ones((3, 2)), np.ones((3, 2))], **_GMM,
                                groupListOptional=[2, 5], splitItem=0), None),
    "aclnnGroupedMatmulV2": (dict(x=[np.ones((2, 3)), np.ones((4, 3))], weight=[np.ones((3, 2)), np.ones((3, 5))],
                                  **_GMM, groupListOptional=None, splitItem=0, groupType=-1), None),
    "aclnnGroupedMatmulV3": (dict(x=[np.ones((5, 3))], weight=[np.ones((2, 3, 2))], **_GMM,
                                  groupListOptional=np.array([2, 5]), splitItem=2, groupType=0), None),
    "aclnnGroupedMatmulV4": (dict(x=[np.ones((5, 3))], weight=[np.ones((3, 2)), np.ones((3, 2))], **_GMM,
                                  perTokenScaleOptional=None, groupListOptional=np.array([2, 3]),
                                  activationInputOptional=None, activationQuantScaleOptional=None,
                                  activationQuantOffsetOptional=None, splitItem=3, groupType=0, groupListType=1,
                                  actType=0), None),
    "aclnnQuantMatmul": (dict(x1=np.ones((2, 3), np.int8), x2=np.ones((3, 4), np.int8), bias=None, deqScale=0.5),
                         ((2, 4),)),
    "aclnnQuantMatmulV2": (dict(x1=np.ones((2, 3), np.int8), x2=np.ones((4, 3), np.int8), bias=None,
                                deqScale=np.ones(4, F32), adjX1=False, adjX2=True), ((2, 4),)),
    "aclnnQuantMatmulV3": (dict(x1=np.ones((2, 3), np.int8), x2=np.ones((3, 4), np.int8), scale=np.ones(1, F32),
                                offset=None, bias=None, transposeX1=False, transposeX2=False), ((2, 4),)),
    "aclnnQuantMatmulV4": (dict(x1=np.ones((2, 3), np.int8), x2=np.ones((3, 4), np.int8), scale=np.ones(4, F32),
                                offset=None, pertokenScaleOptional=np.ones(2, F32), bias=np.ones(4, np.int32),
                                transposeX1=False, transposeX2=False), ((2, 4),)),
    "aclnnWeightQuantBatchMatmul": (dict(x1=np.ones((2, 3)), x2=np.ones((3, 4), np.int8), diagonalMatrix=None,
                                         deqOffset=None, deqScale=None, addOffset=None, mulScale=None, bias=None,
                                         transposeX1=False, transposeX2=False, antiquantScale=0.5,
                                         antiquantOffset=1.0), ((2, 4),)),
    "aclnnWeightQuantBatchMatmulV3": (dict(x=np.ones((3, 4), np.float16), weight=np.ones((4, 5), np.int8),
                                           antiquantScale=np.ones(5, F32), antiquantOffsetOptional=None,
                                           quantScaleOptional=None, quantOffsetOptional=None, biasOptional=None,
                                           antiquantGroupSize=0, innerPrecise=0), ((3, 5),)),
    "aclnnAscendQuant": (dict(x=np.ones((2, 4)), scale=np.ones(4), offset=None, sqrtMode=False, roundMode="round",
                              dstType=2), ((2, 4),)),
    "aclnnQuantize": (dict(x=np.ones((2, 4)), scales=np.ones(4), zeroPoints=None, dtype=np.dtype(np.int8), axis=1),
                      ((2, 4),)),
    "aclnnAddRmsNormDynamicQuant": (dict(x1=np.ones((2, 4)), x2=np.ones((2, 4)), gamma=np.ones(4),
                                         smoothScale1Optional=None, smoothScale2Optional=None, epsilon=1e-6),
                                    ((2, 4), None, (2, 4), (2,), None)),
    "aclnnMoeGatingTopKSoftmaxV2": (dict(x=np.ones((3, 8)), finishedOptional=None, k=2, renorm=0,
                                         outputSoftmaxResultFlag=True), ((3, 2), (3, 2), (3, 8))),
    "aclnnMoeTokenPermute": (dict(tokens=np.ones((3, 4)), indices=np.zeros((3, 2), np.int64), numOutTokens=0,
                                  paddedMode=False), ((6, 4), (6,))),
    "aclnnMoeTokenUnpermute": (dict(permutedTokens=np.ones((6, 4)), sortedIndices=np.arange(6), probsOptional=None,
                                    paddedMode=False, restoreShapeOptional=None), ((6, 4),)),
    "aclnnDropoutGenMask": (dict(shape=[10], prob=0.5, seed=0, offset=0), ((16,),)),
    "aclnnDropoutGenMaskV2": (dict(shape=[200], prob=0.5, seed=0, offset=0, probDataType=np.dtype(F32)), ((32,),)),
    "aclnnDropout": (dict(input=_X, p=0.5, train=True, seed=0, offset=0), (_B, (16,))),
    "aclnnDropoutDoMask": (dict(self=_X, mask=np.full(16, 255, np.uint8), prob=0.5), (_B,)),
    "aclnnDropoutBackward": (dict(gradOutput=_X, mask=np.full(16, 255, np.uint8), scale=2.0), (_B,)),
    "aclnnMultinomial": (dict(self=np.ones((2, 4)), numsamples=3, replacement=False, seed=0, offset=0), ((2, 3),)),
    "aclnnBernoulli": (dict(self=_X, prob=0.5, seed=0, offset=0), (_B,)),
    "aclnnBernoulliTensor": (dict(self=_X, prob=np.full(_B, 0.5), seed=0, offset=0), (_B,)),
    "aclnnInplaceBernoulli": (dict(selfRef=_X, prob=0.5, seed=0, offset=0), (_B,)),
    "aclnnInplaceBernoulliTensor": (dict(selfRef=_X, prob=np.full(_B, 0.5), seed=0, offset=0), (_B,)),
    "aclnnNormalFloatTensor": (dict(mean=0.0, std=np.ones(_B), seed=0, offset=0), (_B,)),
    "aclnnNormalTensorFloat": (dict(mean=np.ones(_B), std=1.0, seed=0, offset=0), (_B,)),
    "aclnnNormalTensorTensor": (dict(mean=np.ones(_B), std=np.ones((4,)), seed=0, offset=0), (_B,)),
    "aclnnInplaceNormal": (dict(selfRef=_X, mean=0.0, std=1.0, seed=0, offset=0), (_B,)),
    "aclnnInplaceUniform": ({"selfRef": _X, "from": 0.0, "to": 1.0, "seed": 0, "offset": 0}, (_B,)),
    "aclnnInplaceRandom": ({"selfRef": _X, "from": 0, "to": 10, "seed": 0, "offset": 0}, (_B,)),
    "aclnnRandperm": (dict(n=7, seed=0, offset=0), ((7,),)),
    "aclnnRReluWithNoise": (dict(self=_X, noise=_X, lower=0.1, upper=0.3, training=False, seed=0, offset=0), (_B,)),
    "aclnnInplaceRReluWithNoise": (dict(self=_X, noise=_X, lower=0.1, upper=0.3, training=True, seed=0, offset=0),
                                   (_B,)),
}
del CALLS2["aclnnFlashAttentionScore"]   # the first round's CALLS has it


@pytest.mark.parametrize("name", sorted(CALLS2))
def test_round2_formula_takes_its_inputs_and_returns_each_written_parameter(name: str):
    kwargs, shapes = CALLS2[name]
    got = FORMULAS[name].fn(**kwargs)
    results = got if isinstance(got, tuple) else (got,)
    if shapes is None:  # a tensor list: a list of arrays
        assert isinstance(results[0], list) and results[0] and all(np.ndim(r) >= 1 for r in results[0])
        return
    assert len(results) == len(shapes)
    for got_one, want in zip(results, shapes):
        if want is None:
            assert got_one is None
        else:
            assert np.shape(got_one) == want


CANN81_HEADERS_ENV = "ASCEND_ACLNN_CANN81_HEADERS"


def test_params_match_the_real_headers(monkeypatch: pytest.MonkeyPatch):
    """Developer check: every formula's parameter list has the kinds and outputs the real CANN
    8.1.RC1 header declares (set ASCEND_ACLNN_CANN81_HEADERS to its aclnnop directory)."""
    import os
    from ascend_aclnn.cpu_reference import runner
    where = os.environ.get(CANN81_HEADERS_ENV)
    if not where or not os.path.isdir(where):
        pytest.skip(f"developer check: set {CANN81_HEADERS_ENV} to CANN 8.1.RC1's aclnnop header directory")
    monkeypatch.setenv(headers.ENV_VAR, where)
    headers.reset()
    try:
        problems = []
        for name, f in FORMULAS.items():
            real = headers.find(name)
            own = runner.prototype_from_text(name, f.params, runner.FORMULA_HEADER)
            why = "not declared" if real is None else runner.misfit(runner._shape_of(real), runner._shape_of(own))
            if why:
                problems.append(f"{name}: {why}")
        assert not problems, problems
    finally:
        monkeypatch.delenv(headers.ENV_VAR)
        headers.reset()


# ---- compare checks a sampled operator by statistics ---------------------------------------------

def _compare(*argv: str) -> tuple[int, str]:
    import io
    from ascend_aclnn.tools import cli
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["compare", *argv, "--backend", "numpy", "--no-progress"], out, err)
    return code, out.getvalue() + err.getvalue()


GEN_MASK = ["--op", "aclnnDropoutGenMaskV2", "--kwargs",
            '{"shape": [4096], "prob": 0.3, "seed": 1, "offset": 0, "probDataType": "float32"}']


def test_compare_checks_a_sampled_operator_by_its_statistics_not_its_values():
    code, out = _compare(*GEN_MASK)
    assert code == 0 and "PASS" in out and "mask density (kept fraction)" in out, out


def test_compare_fails_a_sampled_operator_whose_statistics_are_wrong(monkeypatch: pytest.MonkeyPatch):
    """A sampler keeping every element (density 1 for prob 0.3) fails, though a value-by-value
    comparison against itself would pass."""
    from dataclasses import replace
    from ascend_aclnn.cpu_reference import runner
    from ascend_aclnn.cpu_reference.formulas import sampled as S
    wrong = replace(FORMULAS["aclnnDropoutGenMaskV2"],
                    fn=lambda shape, prob, seed, offset, probDataType: S.pack_bits(np.ones(int(np.prod(shape)), bool)))
    monkeypatch.setitem(FORMULAS, "aclnnDropoutGenMaskV2", wrong)  # type: ignore[index]
    runner._generation[0] += 1  # the cached resolutions are stale (and again after the patch is undone)
    try:
        code, out = _compare(*GEN_MASK)
    finally:
        runner._generation[0] += 1
    assert code == 1 and "FAIL" in out and "mask density" in out, out


def test_reference_reports_the_tier_and_its_checks():
    import ascend_aclnn as aa
    ref = aa.aclnn.reference("DropoutGenMaskV2")
    assert ref.tier == "sampled" and "never values" in ref.checks
    assert "cannot match an NPU's bit for bit" in str(ref) and "checks: " in str(ref)
    soft = aa.aclnn.reference("SoftmaxBackward")
    assert soft.tier == "formula" and "precision standard" in soft.checks and "tier formula" in str(soft)


# ---- every formula through the numpy backend's raw call (the runner), not just its function -----

def _outputs_for(name: str, results: tuple[Any, ...], skip: Any = ()) -> dict[str, Any]:
    """Output arrays shaped like the formula's results (a left-alone output gets a zero array
    of its own parameter's... nothing to size it by: such calls are skipped)."""
    from ascend_aclnn.cpu_reference import runner
    proto = runner.prototype_from_text(name, FORMULAS[name].params, runner.FORMULA_HEADER)
    written = [p for p in proto.params if p.is_output]
    out: dict[str, Any] = {}
    for p, r in zip(written, results):
        if p.inplace or p.name in skip:
            continue
        if r is None:
            out[p.name] = None
        elif isinstance(r, list):
            out[p.name] = [np.zeros(np.shape(e), np.asarray(e).dtype) for e in r]
        else:
            out[p.name] = np.zeros(np.shape(r), np.asarray(r).dtype)
    return out


@pytest.mark.parametrize("name", sorted(set(CALLS2) | set(CALLS)))
def test_every_formula_runs_as_a_raw_call_on_the_numpy_backend(name: str, numpy_backend: Any):
    import ascend_aclnn as aa
    kwargs, _ = CALLS2.get(name) or CALLS[name]
    got = FORMULAS[name].fn(**{k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
                               for k, v in kwargs.items()})
    results = got if isinstance(got, tuple) else (got,)
    outs = _outputs_for(name, results, set(kwargs))  # a written parameter the operator reads is given
    import keyword
    args = {k + ("_" if keyword.iskeyword(k) else ""): (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
            for k, v in kwargs.items()}
    try:
        getattr(aa.aclnn, name[len("aclnn"):])(**args, **outs)
    except AclnnParamInvalidError as exc:  # an output the formula leaves alone, passed as NULL
        pytest.fail(f"{name}: {exc}")
    from ascend_aclnn.cpu_reference import runner
    proto = runner.prototype_from_text(name, FORMULAS[name].params, runner.FORMULA_HEADER)
    by_name = dict(zip([p.name for p in proto.params if p.is_output], results))
    for pname, arr in outs.items():
        r = by_name[pname]
        if arr is not None and r is not None and not isinstance(arr, list) and FORMULAS[name].tier == "formula":
            np.testing.assert_allclose(np.asarray(arr, np.float64), np.asarray(r, np.float64).reshape(arr.shape),
                                       rtol=1e-3, atol=1e-3, err_msg=pname)
