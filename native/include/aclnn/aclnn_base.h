/*
 * aclnn/aclnn_base.h - the types every aclnnop/ operator header needs, for the
 * CANN CPU simulator (native/).
 *
 * Written for this project. In CANN this file (with aclnn/acl_meta.h and
 * acl/acl_base.h behind it) is C++ only; this one is plain C11 and C++, and
 * declares only the types: the opaque handles, aclnnStatus and aclrtStream.
 * Their names and definitions are CANN's facts; nothing else is taken from it.
 */
#ifndef ACLSIM_ACLNN_ACLNN_BASE_H
#define ACLSIM_ACLNN_ACLNN_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t aclnnStatus; /* 0 is success; the 16xxxx/36xxxx/56xxxx codes are errors */
typedef void *aclrtStream;   /* NULL: the calling thread's default stream */

/* Opaque handles, created and destroyed through libnnopbase.so. */
typedef struct aclTensor aclTensor;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclScalar aclScalar;
typedef struct aclOpExecutor aclOpExecutor;

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_ACLNN_BASE_H */
