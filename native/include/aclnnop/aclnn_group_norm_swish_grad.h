/*
 * aclnnop/aclnn_group_norm_swish_grad.h - the gradient of aclnnGroupNormSwish.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_GROUP_NORM_SWISH_GRAD_H
#define ACLSIM_ACLNNOP_GROUP_NORM_SWISH_GRAD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Generated in CANN, like aclnn_group_norm_swish.h. All nine tensors share one dtype. */
ACLNN_API aclnnStatus aclnnGroupNormSwishGradGetWorkspaceSize(
    const aclTensor *dy, const aclTensor *mean, const aclTensor *rstd, const aclTensor *x,
    const aclTensor *gamma, const aclTensor *beta, int64_t numGroups, char *dataFormatOptional,
    double swishScale, bool dgammaIsRequire, bool dbetaIsRequire, const aclTensor *dxOut,
    const aclTensor *dgammaOut, const aclTensor *dbetaOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGroupNormSwishGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_GROUP_NORM_SWISH_GRAD_H */
