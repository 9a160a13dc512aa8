/*
 * aclnnop/aclnn_upsample_nearest_exact1d_backward.h - the gradient of aclnnUpsampleNearestExact1d.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_UPSAMPLE_NEAREST_EXACT1D_BACKWARD_H
#define ACLSIM_ACLNNOP_UPSAMPLE_NEAREST_EXACT1D_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gradOutput is (N, C, outputSize[0]); out has the shape inputSize = (N, C, L). In CANN
 * this header is generated and writes the visibility attribute out in full. */
ACLNN_API aclnnStatus aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclIntArray *outputSize, const aclIntArray *inputSize, double scales,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnUpsampleNearestExact1dBackward(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_UPSAMPLE_NEAREST_EXACT1D_BACKWARD_H */
