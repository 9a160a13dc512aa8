/*
 * aclnnop/aclnn_upsample_nearest_exact1d.h - nearest-exact upsampling of the last axis of an (N, C, L) tensor.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_UPSAMPLE_NEAREST_EXACT1D_H
#define ACLSIM_ACLNNOP_UPSAMPLE_NEAREST_EXACT1D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* self and out are (N, C, L) and (N, C, outputSize[0]); scales 0 derives the
 * ratio from the sizes. */
ACLNN_API aclnnStatus aclnnUpsampleNearestExact1dGetWorkspaceSize(const aclTensor *self,
                                                                const aclIntArray *outputSize, double scales,
                                                                aclTensor *out, uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnUpsampleNearestExact1d(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_UPSAMPLE_NEAREST_EXACT1D_H */
