/*
 * custom_masked_scale.c - aclnnCustomMaskedScale, the made-up operator of the
 * simulator's custom vendor package (libcust_opapi.so; see
 * include/vendor/aclnn_custom_masked_scale.h for what it computes).
 *
 * Phase 1: NULL self, weights, mask, mode, out (161001); handles not live
 * (561103); then 161002 for: self's dtype (FLOAT, FLOAT16, BF16), out's dtype
 * (self's), self's rank (1 to 8), weights' and mask's lengths (self's last
 * size), mode ("mul" or "add"), out's shape (self's). An empty self runs
 * nothing. Strided self and out are read and written in place; every result is
 * computed before out is written, so they may overlap.
 */
#define _GNU_SOURCE
#include "../op_values.h"
#include "vendor/aclnn_custom_masked_scale.h"

typedef struct {
    int64_t channels;   /* self's last size */
    int add;            /* mode "add" (else "mul") */
    float scale;
    int exponent;
    /* then `channels` floats (weights), then `channels` bytes (mask) */
    float weights[];
} cms_state;

static int kernel(const void *state, const aclsim_tensor_desc *t, int nt, const aclsim_launch *l)
{
    (void)nt;
    const cms_state *st = state;
    const unsigned char *mask = (const unsigned char *)(st->weights + st->channels);
    const aclsim_tensor_desc *x = &t[0], *y = &t[1];
    unsigned char *xp, *yp;
    if (opc_map_tensors(l, &xp, x, &yp, y, NULL)) return 1;
    const size_t sz = aclsim_dtype_size(x->dtype);
    const int64_t count = opc_numel(x);
    float *result = malloc((size_t)count * sizeof *result);
    if (result == NULL) return opc_fail(1, l->op_name, "out of host memory");
    for (int64_t k = 0; k < count; k++) {
        const int64_t ch = k % st->channels;
        float v = opc_load_float(xp + (uint64_t)opv_offset(x, k) * sz, x->dtype);
        if (mask[ch]) v = st->add ? v + st->weights[ch] : v * st->weights[ch];
        result[k] = ldexpf(v * st->scale, st->exponent);
    }
    for (int64_t k = 0; k < count; k++) opc_store_float(yp + (uint64_t)opv_offset(y, k) * sz, y->dtype, result[k]);
    free(result);
    return 0;
}

static aclnnStatus prepare(const opc_call *c, const aclTensor *self, const aclFloatArray *weights,
                           const aclBoolArray *mask, const char *mode, float scale, int8_t exponent, aclTensor *out)
{
    const char *api = c->api;
    aclsim_tensor_desc x, y;
    const float *wv = NULL;
    const bool *mv = NULL;
    uint64_t wn = 0, mn = 0;
    const opc_arg args[] = {OPC_TENSOR(self, &x), {"weights", weights, NULL, NULL}, {"mask", mask, NULL, NULL},
                            {"mode", mode, NULL, NULL}, OPC_TENSOR(out, &y)};
    int rc = opc_require(api, args, 5, NULL);
    if (!rc) rc = opv_describe(api, "self", self, &x);
    if (!rc && aclsim_float_array_values(weights, &wv, &wn) != 0)
        rc = opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "weights %p is not a live aclFloatArray: it is %s",
                      (const void *)weights, aclsim_handle_describe(weights));
    if (!rc && aclsim_bool_array_values(mask, &mv, &mn) != 0)
        rc = opc_fail(ACLNN_ERR_INNER_NULLPTR, api, "mask %p is not a live aclBoolArray: it is %s",
                      (const void *)mask, aclsim_handle_describe(mask));
    if (!rc) rc = opv_describe(api, "out", out, &y);
    if (!rc) rc = opc_check_dtype(api, &x, &OPC_FLOATS);
    if (!rc) rc = opc_check_same_dtype(api, &y, &x);
    if (rc) return rc;
    if (x.ndim < 1 || x.ndim > 8)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "self must be 1-D to 8-D, got %" PRId64 "-D", x.ndim);
    const int64_t channels = x.shape[x.ndim - 1];
    if (wn != (uint64_t)channels || mn != (uint64_t)channels)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "weights (%" PRIu64 " values) and mask (%" PRIu64 " values) "
                        "must both hold self's last size, %" PRId64, wn, mn, channels);
    int add = strcmp(mode, "add") == 0;
    if (!add && strcmp(mode, "mul") != 0)
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "mode must be \"mul\" or \"add\", got \"%.64s\"", mode);
    if (!opc_same_shape(&y, &x))
        return opc_fail(ACLNN_ERR_PARAM_INVALID, api, "out shape must be self's %s, got %s", opc_shape(&x),
                        opc_shape(&y));

    aclsim_tensor_desc descs[2] = {x, y};
    if (opc_numel(&x) == 0) {
        cms_state empty = {0};
        return opc_finish(c, &empty, sizeof empty, 0, descs, 2, 1, opc_noop_kernel);
    }
    size_t size = sizeof(cms_state) + (size_t)channels * (sizeof(float) + 1);
    cms_state *st = calloc(1, size);
    if (st == NULL) return opc_fail(ACLNN_ERR_INNER, api, "out of host memory");
    st->channels = channels;
    st->add = add;
    st->scale = scale;
    st->exponent = exponent;
    memcpy(st->weights, wv, (size_t)channels * sizeof(float));
    unsigned char *m = (unsigned char *)(st->weights + channels);
    for (int64_t i = 0; i < channels; i++) m[i] = mv[i] ? 1 : 0;
    rc = opc_finish(c, st, size, 0, descs, 2, 1, kernel);
    free(st);
    return rc;
}

OPC_ENTRY_POINTS(aclnnCustomMaskedScale, prepare,
                 (const aclTensor *self, const aclFloatArray *weights, const aclBoolArray *mask, const char *mode,
                  float scale, int8_t exponent, aclTensor *out),
                 (self, weights, mask, mode, scale, exponent, out))
