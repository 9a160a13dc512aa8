/*
 * aclnnop/aclnn_im2col_backward.h - columns summed back into an image (PyTorch's fold).
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_IM2COL_BACKWARD_H
#define ACLSIM_ACLNNOP_IM2COL_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* inputSize is the image's (H, W); the other arrays are as for aclnnIm2col. */
ACLNN_API aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                        const aclIntArray *inputSize,
                                                        const aclIntArray *kernelSize,
                                                        const aclIntArray *dilation,
                                                        const aclIntArray *padding, const aclIntArray *stride,
                                                        aclTensor *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_IM2COL_BACKWARD_H */
