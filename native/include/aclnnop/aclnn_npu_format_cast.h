/*
 * aclnnop/aclnn_npu_format_cast.h - a tensor copied into another data format
 * (ND and the public layouts to and from FRACTAL_NZ, NC1HWC0, FRACTAL_Z,
 * NDC1HWC0, FRACTAL_Z_3D), and the storage shape and format such a copy has.
 *
 * Written for the CANN CPU simulator (native/). The file name, the function
 * names and the parameter lists (types and names) are those of the header of
 * this name in hicann/ops-math (conversion/npu_format_cast/op_host/op_api,
 * first in its v8.5.0 tag; the same prototypes through master); nothing else
 * is taken from it. CANN 8.1.RC1 has no such header: build.py installs this
 * one, and builds the operator, only for a profile of 8.5.0 or later.
 *
 * The size function is a plain call (no executor): on success it writes a new
 * array of *dstShapeSize dims at *dstShape, which the caller frees (free()).
 */
#ifndef ACLSIM_ACLNNOP_NPU_FORMAT_CAST_H
#define ACLSIM_ACLNNOP_NPU_FORMAT_CAST_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNpuFormatCastGetWorkspaceSize(const aclTensor *srcTensor, aclTensor *dstTensor,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnNpuFormatCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                         aclrtStream stream);
ACLNN_API aclnnStatus aclnnNpuFormatCastCalculateSizeAndFormat(const aclTensor *srcTensor, const int dstFormat,
                                                               int additionalDtype, int64_t **dstShape,
                                                               uint64_t *dstShapeSize, int *actualFormat);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNNOP_NPU_FORMAT_CAST_H */
