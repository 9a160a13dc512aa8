/*
 * aclnnop/aclnn_im2col.h - sliding blocks of an image as columns (PyTorch's unfold).
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_IM2COL_H
#define ACLSIM_ACLNNOP_IM2COL_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arrays are (H, W) pairs in PyTorch's order: kernelSize, dilation, padding, stride.
 * out is declared const, as in CANN. */
ACLNN_API aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                                const aclIntArray *dilation, const aclIntArray *padding,
                                                const aclIntArray *stride, const aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_IM2COL_H */
