/*
 * aclnnop/aclnn_group_norm_swish.h - group normalisation followed by a swish activation.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_GROUP_NORM_SWISH_H
#define ACLSIM_ACLNNOP_GROUP_NORM_SWISH_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Generated from the op definition in CANN, hence the const outputs, the non-const
 * string attribute and the double attributes. */
ACLNN_API aclnnStatus aclnnGroupNormSwishGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma,
                                                        const aclTensor *beta, int64_t numGroups,
                                                        char *dataFormatOptional, double eps,
                                                        bool activateSwish, double swishScale,
                                                        const aclTensor *yOut, const aclTensor *meanOut,
                                                        const aclTensor *rstdOut, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGroupNormSwish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_GROUP_NORM_SWISH_H */
