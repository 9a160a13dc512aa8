/*
 * aclnnop/aclnn_pad2d_backward.h - the gradient of aclnnReplicationPad2d.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_PAD2D_BACKWARD_H
#define ACLSIM_ACLNNOP_PAD2D_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CANN's header of this name also declares aclnnReflectionPad2dBackward, which the
 * simulator does not implement. Its phase 2 takes the stream as a const parameter. */
ACLNN_API aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                  const aclTensor *self,
                                                                  const aclIntArray *padding,
                                                                  aclTensor *gradInput, uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnReplicationPad2dBackward(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_PAD2D_BACKWARD_H */
