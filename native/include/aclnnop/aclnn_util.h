/*
 * aclnnop/aclnn_util.h - ACLNN_API, the mark of an exported aclnn function
 * (CANN's name for it, written for this project).
 */
#ifndef ACLSIM_ACLNNOP_ACLNN_UTIL_H
#define ACLSIM_ACLNNOP_ACLNN_UTIL_H

#define ACLNN_API __attribute__((visibility("default")))

#endif /* ACLSIM_ACLNNOP_ACLNN_UTIL_H */
