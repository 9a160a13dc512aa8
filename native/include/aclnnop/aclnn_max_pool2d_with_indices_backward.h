/*
 * aclnnop/aclnn_max_pool2d_with_indices_backward.h - the gradient of aclnnMaxPool2dWithMask.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_MAX_POOL2D_WITH_INDICES_BACKWARD_H
#define ACLSIM_ACLNNOP_MAX_POOL2D_WITH_INDICES_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* indices is the forward's mask. CANN's header of this name also declares
 * aclnnMaxPool2dWithIndicesBackward, which the simulator does not implement. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMaxPool2dWithMaskBackward(void *workspace, uint64_t workspaceSize,
                                                   aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_MAX_POOL2D_WITH_INDICES_BACKWARD_H */
