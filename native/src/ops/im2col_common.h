/*
 * im2col_common.h - the geometry and the array checks shared by aclnnIm2col
 * (math library) and aclnnIm2colBackward (cv library): two sources because the
 * split layout puts them in different libraries.
 */
#ifndef ACLSIM_IM2COL_COMMON_H
#define ACLSIM_IM2COL_COMMON_H

#include "op_common.h"

#include <inttypes.h>

typedef struct {
    int64_t k[2], d[2], p[2], s[2]; /* (H, W) each */
    int64_t ho, wo;                 /* block counts */
    int64_t n, c, h, w;             /* the image's sizes (n = 1 unbatched) */
} im2col_geometry;

/* The image's sizes from a 3-D (C, H, W) or 4-D (N, C, H, W) shape. */
static inline void im2col_image(im2col_geometry *geo, const aclsim_tensor_desc *image)
{
    const int batched = image->ndim == 4;
    geo->n = batched ? image->shape[0] : 1;
    geo->c = image->shape[batched];
    geo->h = image->shape[batched + 1];
    geo->w = image->shape[batched + 2];
}

/* Element offset of (n, row, col) in a 2-D (R, L) or 3-D (N, R, L) view. */
static inline int64_t cols_at(const aclsim_tensor_desc *t, int64_t n, int64_t row, int64_t col)
{
    const int64_t *st = t->strides;
    int64_t e = t->offset;
    if (t->ndim == 3) e += n * *st++;
    return e + row * st[0] + col * st[1];
}

/* The array checks of both op_apis, in their order: every array has 2 elements
 * (H, W); kernelSize, stride, dilation >= 1 and padding >= 0. Then, simulator
 * strictness: the op_api computes block counts in int64, where a padded extent
 * (size + 2*padding) or a kernel extent (dilation*(kernel-1)+1) past INT64_MAX
 * overflows; both are refused with 161002 (size: the image's H, W).
 * arrays: the op's aclIntArray parameters in C order, ending with kernelSize,
 * dilation, padding, stride; fills geo's k, d, p, s. */
static inline int im2col_check_arrays(const char *api, const opc_arg *arrays, int n, const int64_t *size,
                                      im2col_geometry *geo)
{
    for (int i = 0; i < n; i++)
        if (arrays[i].ints->n != 2)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must have 2 elements (H, W), got %" PRIu64,
                            arrays[i].name, arrays[i].ints->n);
    const opc_arg *k = &arrays[n - 4], *d = k + 1, *p = k + 2, *s = k + 3;
    const opc_arg *order[4] = {k, s, d, p};
    for (int j = 0; j < 4; j++) {
        const int64_t *v = order[j]->ints->v, low = order[j] == p ? 0 : 1;
        if (v[0] < low || v[1] < low)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "%s must be >= %" PRId64 ", got (%" PRId64 ", %" PRId64 ")",
                            order[j]->name, low, v[0], v[1]);
    }
    for (int a = 0; a < 2; a++) {
        geo->k[a] = k->ints->v[a];
        geo->d[a] = d->ints->v[a];
        geo->p[a] = p->ints->v[a];
        geo->s[a] = s->ints->v[a];
        if ((__int128)geo->d[a] * (geo->k[a] - 1) + 1 > INT64_MAX)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "kernelSize %" PRId64 " with dilation %" PRId64
                            " spans more than INT64_MAX on axis %d", geo->k[a], geo->d[a], a);
        if ((__int128)size[a] + 2 * (__int128)geo->p[a] > INT64_MAX)
            return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "padding %" PRId64 " on axis %d makes the padded "
                            "size %" PRId64 " + 2*padding overflow int64", geo->p[a], a, size[a]);
    }
    return 0;
}

#endif /* ACLSIM_IM2COL_COMMON_H */
