/*
 * im2col_common.h - the geometry shared by aclnnIm2col (math library) and
 * aclnnIm2colBackward (cv library): two sources because the split layout puts
 * them in different libraries. Their phase-1 checks are generated
 * (generated/im2col{,_backward}_checks.h, from ascend_aclnn/ops/im2col.py).
 */
#ifndef ACLSIM_IM2COL_COMMON_H
#define ACLSIM_IM2COL_COMMON_H

#include "op_common.h"

typedef struct {
    int64_t k[2], d[2], p[2], s[2]; /* (H, W) each */
    int64_t ho, wo;                 /* block counts */
    int64_t n, c, h, w;             /* the image's sizes (n = 1 unbatched) */
} im2col_geometry;

/* The geometry of checked arrays, block counts and a 3-D (C, H, W) or 4-D (N, C, H, W) image. */
static inline im2col_geometry im2col_plan(const opc_ints *k, const opc_ints *d, const opc_ints *p,
                                          const opc_ints *s, int64_t ho, int64_t wo,
                                          const aclsim_tensor_desc *image)
{
    const int batched = image->ndim == 4;
    im2col_geometry geo = {.ho = ho, .wo = wo, .n = batched ? image->shape[0] : 1, .c = image->shape[batched],
                           .h = image->shape[batched + 1], .w = image->shape[batched + 2]};
    for (int a = 0; a < 2; a++) {
        geo.k[a] = k->v[a];
        geo.d[a] = d->v[a];
        geo.p[a] = p->v[a];
        geo.s[a] = s->v[a];
    }
    return geo;
}

/* Element offset of (n, row, col) in a 2-D (R, L) or 3-D (N, R, L) view. */
static inline int64_t cols_at(const aclsim_tensor_desc *t, int64_t n, int64_t row, int64_t col)
{
    const int64_t *st = t->strides;
    int64_t e = t->offset;
    if (t->ndim == 3) e += n * *st++;
    return e + row * st[0] + col * st[1];
}

#endif /* ACLSIM_IM2COL_COMMON_H */
