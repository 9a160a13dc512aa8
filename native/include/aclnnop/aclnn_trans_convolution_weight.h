/*
 * aclnnop/aclnn_trans_convolution_weight.h - the element count of a convolution
 * weight once stored as FRACTAL_Z.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * name and its parameter list (types and names) are those of the CANN 8.1.RC1
 * header of this name; nothing else is taken from it. That header also declares
 * aclnnTransConvolutionWeight, which the simulator does not model.
 *
 * A plain call (no executor), for Atlas inference products (Ascend310P) only:
 * on another SoC it refuses every well-formed call.
 */
#ifndef ACLSIM_ACLNNOP_TRANS_CONVOLUTION_WEIGHT_H
#define ACLSIM_ACLNNOP_TRANS_CONVOLUTION_WEIGHT_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCalculateConvolutionWeightSize(const aclIntArray *tensorShape, bool transposed,
                                                          int64_t groups, aclDataType dataType,
                                                          uint64_t *weightTensorSize);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_TRANS_CONVOLUTION_WEIGHT_H */
