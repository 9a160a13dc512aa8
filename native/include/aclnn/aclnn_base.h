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
typedef struct aclTensorList aclTensorList; /* destroying one destroys its tensors */
typedef struct aclScalarList aclScalarList; /* destroying one destroys its scalars */
typedef struct aclOpExecutor aclOpExecutor;

/* Element types, as aclCreateTensor and aclCreateScalar take them (and as
 * operators such as aclnnReduceSum take a result type). */
typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37
} aclDataType;

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_ACLNN_BASE_H */
