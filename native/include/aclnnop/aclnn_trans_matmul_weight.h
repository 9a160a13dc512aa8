/*
 * aclnnop/aclnn_trans_matmul_weight.h - a matmul weight reformatted in place to
 * FRACTAL_NZ, and the element counts that reformat needs.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the CANN
 * 8.1.RC1 header of this name; nothing else is taken from it.
 *
 * The two size helpers are plain calls (no executor): they write the number of
 * elements a weight of that shape occupies once reformatted, which is more than
 * its own when its last two dims are not multiples of the fractal's.
 */
#ifndef ACLSIM_ACLNNOP_TRANS_MATMUL_WEIGHT_H
#define ACLSIM_ACLNNOP_TRANS_MATMUL_WEIGHT_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray *tensorShape, aclDataType dataType,
                                                       uint64_t *weightTensorSize);
ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray *tensorShape, uint64_t *weightTensorSize);
ACLNN_API aclnnStatus aclnnTransMatmulWeightGetWorkspaceSize(aclTensor *mmWeightRef, uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnTransMatmulWeight(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_TRANS_MATMUL_WEIGHT_H */
