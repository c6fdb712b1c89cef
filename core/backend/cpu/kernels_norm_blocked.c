/* Batch norm's fused ops on channel-blocked values (graph/blocked.c):
 * BN_STATS, BN_SILU and BN_BWD (with SiLU folded in or not) where x, dy and
 * dx are stored [N][C/B][H][W][B], B = 16 (AVX-512) or 8 (AVX2). A vector
 * holds channels of one position, so the per-channel constants are vectors
 * and no transposition is needed: 8-float vectors (one AVX2 register), a
 * block being one or two of them, and for AVX-512's 16-channel blocks one
 * 16-float vector in the AVX-512 build (util/vec.h says why the width
 * follows the ISA). The loops are kernels_norm_blocked_items.h, once per
 * width.
 *
 * Every element gets the same float operations as in the plain kernels
 * (kernels_norm.c, kernels_elementwise.c): BN_SILU's values and BN_BWD's dx
 * for given sums are bit-identical to theirs, at either width. The
 * per-channel sums add the same terms in another order: in float over 16
 * positions per lane, then in double per (channel block, image), then over
 * the images in order; the same order at either width. Work items are
 * (image, channel block) pairs, a pure function of the shape, so results
 * do not depend on the number of threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels_norm_blocked.h"
#include "graph/node.h"
#include "util/bf16_row.h"
#include "util/vec.h"

enum { MAX_BLOCK = 16, SUM_POSITIONS = 16, CHUNK_FLOATS = 512 };

typedef struct blocked_shape {
    int64_t n, blocks, s; /* images, channel blocks, positions per plane */
    int block;            /* channels per block, B: 8 or 16 */
    int64_t len;          /* floats per plane, s * B */
} blocked_shape;

static blocked_shape shape_of(const yolo_tensor *x) {
    const int b = x->node->block;
    const int64_t s = x->shape[2] * x->shape[3];
    return (blocked_shape){x->shape[0], x->shape[1] / b, s, b, s * b};
}

/* BN_SILU's scale k = gamma / sqrtf(var + eps) of the block's channels from c0. */
static void scale_of(const float *gamma, const float *var, float eps, int64_t c0, int block, float *k) {
    for (int l = 0; l < block; l++) k[l] = gamma[c0 + l] / sqrtf(var[c0 + l] + eps);
}

/* Partial sums of one (block, image), per channel of the block. */
typedef struct lane_sums {
    double a[MAX_BLOCK], b[MAX_BLOCK];
} lane_sums;

typedef struct stats_job {
    blocked_shape sh;
    const void *x;
    bool bf16;
    const float *shift; /* per channel: the channel's first sample */
    lane_sums *part;    /* [blocks][n] */
} stats_job;

typedef struct silu_job {
    blocked_shape sh;
    const void *x;
    bool x_bf16, out_bf16;
    const float *mean, *var, *gamma, *beta;
    float eps;
    void *out;
} silu_job;

typedef struct bwd_job {
    blocked_shape sh;
    const void *x;
    bool x_bf16;
    const float *mean, *var, *gamma, *beta;
    const float *dy_silu; /* SiLU folded in: SiLU's output gradient; its dz goes into dx's slot */
    const float *dy;      /* batch norm's output gradient (dz when folded: dx's slot) */
    float *dx;
    float eps;
    lane_sums *part;      /* [blocks][n]: sum(dy), sum(dy * (x - mean)) */
    const float *coef;    /* [3][C]: kd, a, k of dx = dy * kd + (a + k * (x - mean)) */
} bwd_job;

#define VEC_W 8
#include "backend/cpu/kernels_norm_blocked_items.h"
#undef VEC_W
#define VEC_W 16
#include "backend/cpu/kernels_norm_blocked_items.h"
#undef VEC_W

/* A range of items on 8-float vectors (a block as 1 or 2 of them, constant
 * counts), and in the AVX-512 build a 16-channel block as one 16-float
 * vector; dispatched once per range. */
#define BLOCKED_ITEM(name, job)                                                         \
    VECTOR_BODY void name##_range_body(void *arg, int64_t begin, int64_t end) {         \
        const job *j = arg;                                                             \
        for (int64_t i = begin; i < end; i++)                                           \
            if (j->sh.block == 8)                                                       \
                name##_of8(j, i, 1);                                                    \
            else                                                                        \
                name##_of8(j, i, 2);                                                    \
    }                                                                                   \
    VECTOR_BODY void name##_range_wide(void *arg, int64_t begin, int64_t end) {         \
        const job *j = arg;                                                             \
        for (int64_t i = begin; i < end; i++)                                           \
            if (j->sh.block == 16)                                                      \
                name##_of16(j, i, 1);                                                   \
            else                                                                        \
                name##_of8(j, i, 1);                                                    \
    }                                                                                   \
    VECTOR_DISPATCH_WIDE(void, name##_range, (void *arg, int64_t begin, int64_t end), (arg, begin, end))

BLOCKED_ITEM(stats_item, stats_job)
BLOCKED_ITEM(silu_item, silu_job)
BLOCKED_ITEM(bwd_sums_item, bwd_job)
BLOCKED_ITEM(bwd_dx_item, bwd_job)

/* Channel ch's double sums over all images, in image order. */
static void total(const lane_sums *part, const blocked_shape *sh, int64_t ch, double *a, double *q) {
    const int64_t b = ch / sh->block;
    const int l = (int)(ch % sh->block);
    *a = *q = 0;
    for (int64_t n = 0; n < sh->n; n++) {
        *a += part[b * sh->n + n].a[l];
        *q += part[b * sh->n + n].b[l];
    }
}

/* ---- BN_STATS ---- */

yolo_status yolo_cpu_bn_stats_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, float *mean, float *var) {
    stats_job j = {shape_of(x), yolo_cpu_data(x), x->dtype == YOLO_BF16, NULL, NULL};
    const int64_t c = x->shape[1], items = j.sh.blocks * j.sh.n;
    float *shift = malloc((size_t)c * sizeof *shift);
    j.part = malloc((size_t)items * sizeof *j.part);
    if (!shift || !j.part) {
        free(shift);
        free(j.part);
        return yolo_error(YOLO_ERR_NOMEM, "BN_STATS: no memory for the partial sums of %lld channels", (long long)c);
    }
    /* The shift keeps the one-pass variance accurate when |mean| >> std:
     * the channel's first sample, as in the plain kernel. */
    for (int64_t ch = 0; ch < c; ch++) {
        const int64_t at = (ch / j.sh.block) * j.sh.len + ch % j.sh.block;
        shift[ch] = j.bf16 ? yolo_bf16_to_f32(((const uint16_t *)j.x)[at]) : ((const float *)j.x)[at];
    }
    j.shift = shift;
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, stats_item_range, &j);
    const double count = (double)(j.sh.n * j.sh.s);
    for (int64_t ch = 0; ch < c; ch++) {
        double sum, sumsq;
        total(j.part, &j.sh, ch, &sum, &sumsq);
        const double m = sum / count;
        double v = sumsq / count - m * m;
        if (v < 0) v = 0;
        mean[ch] = (float)(shift[ch] + m);
        var[ch] = (float)v;
    }
    free(shift);
    free(j.part);
    return YOLO_OK;
}

/* ---- BN_SILU ---- */

void yolo_cpu_bn_silu_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, const float *mean, const float *var,
                              const float *gamma, const float *beta, float eps, yolo_tensor *out) {
    silu_job j = {shape_of(x), yolo_cpu_data(x), x->dtype == YOLO_BF16, out->dtype == YOLO_BF16,
                  mean, var, gamma, beta, eps, yolo_cpu_data(out)};
    const int64_t items = j.sh.n * j.sh.blocks;
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, silu_item_range, &j);
}

/* ---- BN_BWD ---- */

yolo_status yolo_cpu_bn_bwd_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, const float *mean, const float *var,
                                    const float *gamma, const float *beta, const float *dy, bool silu_folded,
                                    float eps, float *out) {
    bwd_job j = {shape_of(x), yolo_cpu_data(x), x->dtype == YOLO_BF16, mean, var, gamma, beta,
                 silu_folded ? dy : NULL, silu_folded ? out : dy, out, eps, NULL, NULL};
    const int64_t c = x->shape[1], items = j.sh.blocks * j.sh.n, numel = yolo_tensor_numel(x);
    float *coef = malloc((size_t)(3 * c) * sizeof *coef);
    j.part = malloc((size_t)items * sizeof *j.part);
    if (!coef || !j.part) {
        free(coef);
        free(j.part);
        return yolo_error(YOLO_ERR_NOMEM, "BN_BWD: no memory for the partial sums of %lld channels", (long long)c);
    }
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, bwd_sums_item_range, &j);
    /* The rows dgamma, dbeta, dmean, dvar, then dx's coefficients, with the
     * plain kernel's float and double operations. */
    float *dgamma = out + numel, *dbeta = dgamma + c, *dmean = dgamma + 2 * c, *dvar = dgamma + 3 * c;
    const float inv_m = (float)(1.0 / (double)(j.sh.n * j.sh.s));
    for (int64_t ch = 0; ch < c; ch++) {
        double sdy, sdyx;
        total(j.part, &j.sh, ch, &sdy, &sdyx);
        const double r = 1.0 / sqrt((double)var[ch] + eps);
        const double g = gamma[ch];
        dgamma[ch] = (float)(r * sdyx);
        dbeta[ch] = (float)sdy;
        dmean[ch] = (float)(-g * r * sdy);
        dvar[ch] = (float)(-0.5 * g * r * r * r * sdyx);
        coef[ch] = gamma[ch] / sqrtf(var[ch] + eps);
        coef[c + ch] = dmean[ch] * inv_m;
        coef[2 * c + ch] = 2.0f * dvar[ch] * inv_m;
    }
    j.coef = coef;
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, bwd_dx_item_range, &j);
    free(coef);
    free(j.part);
    return YOLO_OK;
}
