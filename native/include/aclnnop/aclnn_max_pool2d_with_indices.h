/*
 * aclnnop/aclnn_max_pool2d_with_indices.h - 2-D max pooling that also writes the NPU's int8 mask.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_MAX_POOL2D_WITH_INDICES_H
#define ACLSIM_ACLNNOP_MAX_POOL2D_WITH_INDICES_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* indices is the mask: int8, ([N,] C, kH*kW, (ceil(Ho*Wo/16) + 1) * 32). CANN's header of
 * this name also declares aclnnMaxPool2dWithIndices, which the simulator does not implement. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithMaskGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                                           const aclIntArray *stride, const aclIntArray *padding,
                                                           const aclIntArray *dilation, bool ceilMode,
                                                           aclTensor *out, aclTensor *indices,
                                                           uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMaxPool2dWithMask(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_MAX_POOL2D_WITH_INDICES_H */
