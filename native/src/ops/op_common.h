/*
 * op_common.h - helpers compiled into every simulator op library (hidden:
 * op libraries export nothing but their aclnn entry points).
 */
#ifndef ACLSIM_OP_COMMON_H
#define ACLSIM_OP_COMMON_H

#include "../sim_internal.h"

#include <stdint.h>

/* ---- numeric conversions (round to nearest even; inf preserved) ----
 * NaN follows the host reference bit for bit (NumPy for fp16, ml_dtypes for bf16):
 * fp16 <- fp32 keeps the sign and the top 10 payload bits (0x7C01 if they are all 0);
 * bf16 <- fp32 gives the quiet NaN 0x7FC0 with the sign kept; widening keeps every bit. */
float opc_half_to_float(uint16_t h);
uint16_t opc_float_to_half(float f);
float opc_bf16_to_float(uint16_t b);
uint16_t opc_float_to_bf16(float f);
/* Load/store one ACL_FLOAT, ACL_FLOAT16 or ACL_BF16 element (any alignment). */
float opc_load_float(const unsigned char *p, int32_t dtype);
void opc_store_float(unsigned char *p, int32_t dtype, float v);

/* ---- messages ---- */
/* Set "api: <message>" as the recent error and return status. */
int opc_fail(int status, const char *api, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "[2, 3, 4]" (first ACLSIM_MAX_DIMS entries) into a caller buffer. */
const char *opc_shape_str(const aclsim_tensor_desc *t, char *buf, size_t len);

/* ---- phase-1 argument access (lock held) ---- */
/* 0, or ACLNN_ERR_INNER_NULLPTR with a message if the handle is not live. */
int opc_get_tensor(const char *api, const char *name, const aclTensor *handle, aclsim_tensor_desc *desc);
int opc_get_int_array(const char *api, const char *name, const aclIntArray *handle,
                      const int64_t **values, uint64_t *size);

/* ---- the end of every phase 1 ---- */
/* Copy the op's state (state_size bytes) into a new executor over `descs`
 * (inputs in C order, then the `noutputs` outputs), and report it with its
 * workspace size; ACLNN_ERR_INNER_CREATE_EXECUTOR with a message on failure. */
aclnnStatus opc_finish_phase1(const char *api, const char *op, const void *state, size_t state_size,
                              uint64_t workspace_size, const aclsim_tensor_desc *descs, int ntensors,
                              int noutputs, aclsim_kernel_fn kernel, uint64_t *workspaceSize,
                              aclOpExecutor **executor);

/* ---- tensor geometry ---- */
int opc_is_contiguous(const aclsim_tensor_desc *t);
/* Same shape/dtype, row-major strides, offset 0, no address. */
aclsim_tensor_desc opc_contiguous_like(const aclsim_tensor_desc *t);
/* Bytes a view spans from its data address (offset included). */
uint64_t opc_view_bytes(const aclsim_tensor_desc *t);
/* Element (i0, i1, i2) of a 3-D view whose data address maps to base. */
static inline unsigned char *opc_elem3(unsigned char *base, const aclsim_tensor_desc *t, size_t itemsize,
                                       int64_t i0, int64_t i1, int64_t i2)
{
    int64_t e = t->offset + i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2];
    return base + (uint64_t)e * itemsize;
}

/* ---- kernel-time device access (re-validated at every launch) ---- */
/* Host view of a tensor's bytes, or NULL with "<op>: tensor '<name>' ..." set. */
unsigned char *opc_map_tensor(const aclsim_launch *launch, const aclsim_tensor_desc *t);
/* Host view of workspace bytes [offset, offset+bytes), or NULL with a message. */
unsigned char *opc_map_workspace(const aclsim_launch *launch, uint64_t offset, uint64_t bytes,
                                 const char *purpose);
/* Copy a strided view (host base of its data address) into contiguous dst. */
void opc_gather(const aclsim_tensor_desc *t, const unsigned char *base, unsigned char *dst);

#endif /* ACLSIM_OP_COMMON_H */
