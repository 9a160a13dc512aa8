/*
 * aclnnop/aclnn_nonzero.h - the indices of self's non-zero elements, one row of
 * self's rank per element, in row-major order.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter list (types and names) are those of the CANN 8.1.RC1
 * header of this name; nothing else is taken from it.
 *
 * out is allocated at the largest size the result can take, (numel(self),
 * rank(self)); after the run (synchronise the stream first) aclGetViewShape(out)
 * reports the real shape (count, rank(self)), whose values fill out's memory from
 * its start.
 */
#ifndef ACLSIM_ACLNNOP_NONZERO_H
#define ACLSIM_ACLNNOP_NONZERO_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The parameter comments follow the form of CANN's own headers, which the binding reads.
 * @param [in] self: device侧的aclTensor，数据类型支持FLOAT、FLOAT16、DOUBLE、INT32、INT64、INT16、INT8、UINT8、BOOL、BFLOAT16，维度不大于8。
 * @param [in] out: device侧的aclTensor，数据类型支持INT64。
 * @param [out] workspaceSize: 返回workspace大小。
 * @param [out] executor: 返回op执行器。
 */
ACLNN_API aclnnStatus aclnnNonzeroGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnNonzero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_NONZERO_H */
