/*
 * aclnnop/aclnn_foreach_mul_scalar_list.h - out[i] = x[i] * scalars[i] for each
 * tensor of a list.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNNOP_FOREACH_MUL_SCALAR_LIST_H
#define ACLSIM_ACLNNOP_FOREACH_MUL_SCALAR_LIST_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Generated from the op definition in CANN (no op_api source), hence the const
 * output list. */
ACLNN_API aclnnStatus aclnnForeachMulScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars,
                                                                const aclTensorList *out, uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnForeachMulScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_FOREACH_MUL_SCALAR_LIST_H */
