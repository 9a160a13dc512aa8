/*
 * aclnn_custom_masked_scale.h - the operator of the simulator's custom vendor
 * package (build.py installs it as <prefix>/opp/vendors/<name>/op_api/include/,
 * beside op_api/lib/libcust_opapi.so).
 *
 * A made-up operator, written for the CANN CPU simulator (native/): no CANN
 * release has it. Its prototype exists to exercise the parameter kinds no real
 * operator of the simulator takes: an aclFloatArray, an aclBoolArray, a
 * const char * string, a float and an int8_t. Over the last dimension c of self
 * (FLOAT, FLOAT16 or BF16, 1-D to 8-D), with C = self's last size:
 *
 *   t = self * weights[c]   where mask[c], if mode is "mul"
 *   t = self + weights[c]   where mask[c], if mode is "add"
 *   t = self                where !mask[c]
 *   out = (t * scale) * 2^exponent
 *
 * each step in fp32, rounded once to out's dtype (self's). weights and mask hold
 * C values; out has self's shape and dtype. Statuses: 161001 for a NULL self,
 * weights, mask, mode or out (in that order); 561103 for a handle that is not
 * live; 161002 for any other misuse.
 */
#ifndef ACLSIM_VENDOR_ACLNN_CUSTOM_MASKED_SCALE_H
#define ACLSIM_VENDOR_ACLNN_CUSTOM_MASKED_SCALE_H

#include "aclnn/aclnn_base.h"

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The parameter comments below follow the form of CANN's own headers (the
 * "@param [in] name: ... 数据类型支持A、B ..." lines), which the binding reads to
 * refuse on the numpy backend what this operator refuses.
 * @param [in] self: device侧的aclTensor，数据类型支持FLOAT、FLOAT16、BFLOAT16，维度不大于8。
 * @param [in] weights: host侧的aclFloatArray，长度为self最后一维的大小。
 * @param [in] mask: host侧的aclBoolArray，长度为self最后一维的大小。
 * @param [in] mode: 字符串，取值为"mul"或"add"。
 * @param [in] scale: 缩放系数。
 * @param [in] exponent: 2的幂次。
 * @param [out] out: device侧的aclTensor，数据类型支持FLOAT、FLOAT16、BFLOAT16，数据类型与self一致，shape与self一致。
 * @param [out] workspaceSize: 返回workspace大小。
 * @param [out] executor: 返回op执行器。
 */
ACLNN_API aclnnStatus aclnnCustomMaskedScaleGetWorkspaceSize(const aclTensor *self, const aclFloatArray *weights,
                                                             const aclBoolArray *mask, const char *mode, float scale,
                                                             int8_t exponent, aclTensor *out, uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCustomMaskedScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_VENDOR_ACLNN_CUSTOM_MASKED_SCALE_H */
