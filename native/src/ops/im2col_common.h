/*
 * im2col_common.h - the geometry shared by aclnnIm2col (math library) and
 * aclnnIm2colBackward (cv library): two sources because the split layout puts
 * them in different libraries.
 */
#ifndef ACLSIM_IM2COL_COMMON_H
#define ACLSIM_IM2COL_COMMON_H

#include "op_common.h"

#include <inttypes.h>

typedef struct {
    int64_t k[2], d[2], p[2], s[2]; /* (H, W) each */
    int64_t ho, wo;
    int empty; /* nothing to write (the backward leaves out as it is) */
} im2col_geometry;

static inline int is_float_type(int32_t dt) { return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16; }

/* Element offset of (n, c, h, w) in a 3-D (C, H, W) or 4-D (N, C, H, W) view. */
static inline int64_t image_at(const aclsim_tensor_desc *t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    const int64_t *st = t->strides;
    int64_t e = t->offset;
    if (t->ndim == 4) e += n * *st++;
    return e + c * st[0] + h * st[1] + w * st[2];
}

/* Element offset of (n, row, col) in a 2-D (R, L) or 3-D (N, R, L) view. */
static inline int64_t cols_at(const aclsim_tensor_desc *t, int64_t n, int64_t row, int64_t col)
{
    const int64_t *st = t->strides;
    int64_t e = t->offset;
    if (t->ndim == 3) e += n * *st++;
    return e + row * st[0] + col * st[1];
}

/* Simulator strictness: the op_api computes block counts in int64, where a padded
 * extent (size + 2*padding) or a kernel extent (dilation*(kernel-1)+1) past
 * INT64_MAX overflows; refuse both with 161002. k, d, p are (H, W) pairs. */
static inline int im2col_extent_fails(const char *api, const int64_t size[2], const int64_t k[2],
                                      const int64_t d[2], const int64_t p[2], int *rc)
{
    for (int a = 0; a < 2; a++) {
        if ((__int128)d[a] * (k[a] - 1) + 1 > INT64_MAX) {
            *rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize %" PRId64 " with dilation %" PRId64
                           " spans more than INT64_MAX on axis %d", k[a], d[a], a);
            return 1;
        }
        if ((__int128)size[a] + 2 * (__int128)p[a] > INT64_MAX) {
            *rc = opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %" PRId64 " on axis %d makes the padded "
                           "size %" PRId64 " + 2*padding overflow int64", p[a], a, size[a]);
            return 1;
        }
    }
    return 0;
}

#endif /* ACLSIM_IM2COL_COMMON_H */
