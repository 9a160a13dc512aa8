/*
 * aclnnop/aclnn_split_tensor.h - one tensor cut into pieces of splitSections
 * along one dimension (the last piece may be shorter).
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_SPLIT_TENSOR_H
#define ACLSIM_ACLNNOP_SPLIT_TENSOR_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The outputs are a (non-const) aclTensorList the caller fills with tensors. */
ACLNN_API aclnnStatus aclnnSplitTensorGetWorkspaceSize(const aclTensor *self, uint64_t splitSections, int64_t dim,
                                                       aclTensorList *out, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSplitTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_SPLIT_TENSOR_H */
