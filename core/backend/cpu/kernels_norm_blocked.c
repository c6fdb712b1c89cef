/* Batch norm's fused ops on channel-blocked values (graph/blocked.c):
 * BN_STATS, BN_SILU and BN_BWD (with SiLU folded in or not) where x, dy and
 * dx are stored [N][C/B][H][W][B], B = 16 (AVX-512) or 8 (AVX2). One
 * 8-float vector (util/vec8.h) holds 8 channels of one position: the
 * block's G = B / 8 vectors of a position follow each other, so vector v
 * of a plane holds the channels of group v % G, and the per-channel
 * constants are G vectors, with no transposition.
 *
 * Every element gets the same float operations as in the plain kernels
 * (kernels_norm.c, kernels_elementwise.c): BN_SILU's values and BN_BWD's dx
 * for given sums are bit-identical to theirs. The per-channel sums add the
 * same terms in another order: in float over 16 positions per lane, then in
 * double per (channel block, image), then over the images in order. Work
 * items are (image, channel block) pairs, a pure function of the shape, so
 * results do not depend on the number of threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels_norm_blocked.h"
#include "graph/node.h"
#include "util/bf16_row.h"
#include "util/vec8.h"

enum { LANES = 8, MAX_GROUPS = 2, SUM_POSITIONS = 16, CHUNK_FLOATS = 512 };

typedef struct blocked_shape {
    int64_t n, blocks, s; /* images, channel blocks, positions per plane */
    int block, groups;    /* channels per block, B (8 or 16), and its 8-channel groups, G */
    int64_t len;          /* floats per plane, s * B */
} blocked_shape;

static blocked_shape shape_of(const yolo_tensor *x) {
    const int b = x->node->block;
    const int64_t s = x->shape[2] * x->shape[3];
    return (blocked_shape){x->shape[0], x->shape[1] / b, s, b, b / LANES, s * b};
}

/* 8 values of x (f32, or bf16 widened) from element `at`. */
static inline __attribute__((always_inline)) void load8(const void *x, bool bf16, int64_t at, v8f *v) {
    if (bf16)
        v8_from_bf16((const uint16_t *)x + at, v);
    else
        memcpy(v, (const float *)x + at, sizeof *v);
}

/* A per-channel row's values for the block starting at channel c0, one
 * vector per group. */
static inline __attribute__((always_inline)) void groups_of(const float *p, int64_t c0, int groups,
                                                            v8f v[MAX_GROUPS]) {
    for (int g = 0; g < groups; g++) memcpy(&v[g], p + c0 + g * LANES, sizeof v[g]);
}

/* Per-channel constants of one block: BN_SILU's scale k = gamma / sqrtf(var + eps). */
static void scale_of(const float *gamma, const float *var, float eps, int64_t c0, int block, v8f k[MAX_GROUPS]) {
    float kf[MAX_GROUPS * LANES];
    for (int l = 0; l < block; l++) kf[l] = gamma[c0 + l] / sqrtf(var[c0 + l] + eps);
    memcpy(k, kf, (size_t)block * sizeof(float));
}

/* Partial sums of one (block, image): per group, two vectors of doubles
 * per sum (lanes 0-3 and 4-7). */
typedef struct lane_sums {
    v4d a[MAX_GROUPS][2], b[MAX_GROUPS][2];
} lane_sums;

/* ---- BN_STATS ---- */

typedef struct stats_job {
    blocked_shape sh;
    const void *x;
    bool bf16;
    const float *shift; /* per channel: the channel's first sample */
    lane_sums *part;    /* [blocks][n] */
} stats_job;

static inline __attribute__((always_inline)) void stats_item_of(const stats_job *j, int64_t item, const int G) {
    const int64_t b = item / j->sh.n, n = item % j->sh.n;
    const int64_t base = (n * j->sh.blocks + b) * j->sh.len;
    v8f shift[MAX_GROUPS];
    groups_of(j->shift, b * j->sh.block, G, shift);
    lane_sums r = {0};
    for (int64_t p = 0; p < j->sh.s; p += SUM_POSITIONS) {
        const int64_t end = p + SUM_POSITIONS < j->sh.s ? p + SUM_POSITIONS : j->sh.s;
        v8f a[MAX_GROUPS] = {0}, q[MAX_GROUPS] = {0}, d;
        for (int64_t i = p; i < end; i++)
            for (int g = 0; g < G; g++) {
                load8(j->x, j->bf16, base + (i * G + g) * LANES, &d);
                d -= shift[g];
                a[g] += d;
                q[g] += d * d;
            }
        for (int g = 0; g < G; g++) {
            v8_add_to_v4d(&a[g], &r.a[g][0], &r.a[g][1]);
            v8_add_to_v4d(&q[g], &r.b[g][0], &r.b[g][1]);
        }
    }
    j->part[item] = r;
}
VECTOR_BODY void stats_item_body(const stats_job *j, int64_t item) {
    if (j->sh.groups == 1) /* constant group counts: the groups' vectors stay in registers */
        stats_item_of(j, item, 1);
    else
        stats_item_of(j, item, 2);
}
VECTOR_DISPATCH(void, stats_item, (const stats_job *j, int64_t item), (j, item))

static void stats_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) stats_item(arg, i);
}

/* Channel ch's double sums over all images, in image order: its lane of
 * its group's partial sums. */
static void total(const lane_sums *part, const blocked_shape *sh, int64_t ch, double *a, double *q) {
    const int64_t b = ch / sh->block;
    const int l = (int)(ch % sh->block), g = l / LANES, h = l % LANES / 4, k = l % 4;
    *a = *q = 0;
    for (int64_t n = 0; n < sh->n; n++) {
        const lane_sums *r = &part[b * sh->n + n];
        *a += r->a[g][h][k];
        *q += r->b[g][h][k];
    }
}

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
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, stats_range, &j);
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

typedef struct silu_job {
    blocked_shape sh;
    const void *x;
    bool x_bf16, out_bf16;
    const float *mean, *var, *gamma, *beta;
    float eps;
    void *out;
} silu_job;

static inline __attribute__((always_inline)) void silu_item_of(const silu_job *j, int64_t item, const int G) {
    const int block = j->sh.block;
    const int64_t c0 = (item % j->sh.blocks) * block;
    const int64_t base = item * j->sh.len; /* item = n * blocks + block */
    v8f mean[MAX_GROUPS], k[MAX_GROUPS], beta[MAX_GROUPS], x, z, y;
    groups_of(j->mean, c0, G, mean);
    groups_of(j->beta, c0, G, beta);
    scale_of(j->gamma, j->var, j->eps, c0, block, k);
    float chunk[CHUNK_FLOATS]; /* a multiple of every block */
    for (int64_t at = 0; at < j->sh.len; at += CHUNK_FLOATS) {
        const int64_t len = j->sh.len - at < CHUNK_FLOATS ? j->sh.len - at : CHUNK_FLOATS;
        float *o = j->out_bf16 ? chunk : (float *)j->out + base + at;
        for (int64_t i = 0; i < len; i += block)
            for (int g = 0; g < G; g++) {
                load8(j->x, j->x_bf16, base + at + i + g * LANES, &x);
                z = (x - mean[g]) * k[g] + beta[g];
                v8_silu(&z, NULL, &y);
                memcpy(o + i + g * LANES, &y, sizeof y);
            }
        /* a bf16 value is rounded a chunk at a time (kernels_elementwise.c says why) */
        if (j->out_bf16) yolo_bf16_round_row(chunk, (uint16_t *)j->out + base + at, len);
    }
}
VECTOR_BODY void silu_item_body(const silu_job *j, int64_t item) {
    if (j->sh.groups == 1) /* constant group counts: the groups' vectors stay in registers */
        silu_item_of(j, item, 1);
    else
        silu_item_of(j, item, 2);
}
VECTOR_DISPATCH(void, silu_item, (const silu_job *j, int64_t item), (j, item))

static void silu_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) silu_item(arg, i);
}

void yolo_cpu_bn_silu_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, const float *mean, const float *var,
                              const float *gamma, const float *beta, float eps, yolo_tensor *out) {
    silu_job j = {shape_of(x), yolo_cpu_data(x), x->dtype == YOLO_BF16, out->dtype == YOLO_BF16,
                  mean, var, gamma, beta, eps, yolo_cpu_data(out)};
    const int64_t items = j.sh.n * j.sh.blocks;
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, silu_range, &j);
}

/* ---- BN_BWD ---- */

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

static inline __attribute__((always_inline)) void bwd_sums_item_of(const bwd_job *j, int64_t item, const int G) {
    const int64_t b = item / j->sh.n, n = item % j->sh.n;
    const int block = j->sh.block;
    const int64_t base = (n * j->sh.blocks + b) * j->sh.len;
    v8f mean[MAX_GROUPS], k[MAX_GROUPS] = {0}, beta[MAX_GROUPS] = {0}, x, d, z;
    groups_of(j->mean, b * block, G, mean);
    if (j->dy_silu) {
        groups_of(j->beta, b * block, G, beta);
        scale_of(j->gamma, j->var, j->eps, b * block, block, k);
    }
    lane_sums r = {0};
    for (int64_t p = 0; p < j->sh.s; p += SUM_POSITIONS) {
        const int64_t end = p + SUM_POSITIONS < j->sh.s ? p + SUM_POSITIONS : j->sh.s;
        v8f a[MAX_GROUPS] = {0}, q[MAX_GROUPS] = {0};
        for (int64_t i = p; i < end; i++)
            for (int g = 0; g < G; g++) {
                const int64_t at = base + (i * G + g) * LANES;
                load8(j->x, j->x_bf16, at, &x);
                if (j->dy_silu) { /* SiLU's backward, z recomputed as BN_SILU does */
                    memcpy(&d, j->dy_silu + at, sizeof d);
                    z = (x - mean[g]) * k[g] + beta[g];
                    v8_silu_bwd(&z, &d, &d);
                    memcpy(j->dx + at, &d, sizeof d);
                } else {
                    memcpy(&d, j->dy + at, sizeof d);
                }
                a[g] += d;
                q[g] += d * (x - mean[g]);
            }
        for (int g = 0; g < G; g++) {
            v8_add_to_v4d(&a[g], &r.a[g][0], &r.a[g][1]);
            v8_add_to_v4d(&q[g], &r.b[g][0], &r.b[g][1]);
        }
    }
    j->part[item] = r;
}
VECTOR_BODY void bwd_sums_item_body(const bwd_job *j, int64_t item) {
    if (j->sh.groups == 1) /* constant group counts: the groups' vectors stay in registers */
        bwd_sums_item_of(j, item, 1);
    else
        bwd_sums_item_of(j, item, 2);
}
VECTOR_DISPATCH(void, bwd_sums_item, (const bwd_job *j, int64_t item), (j, item))

static void bwd_sums_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) bwd_sums_item(arg, i);
}

static inline __attribute__((always_inline)) void bwd_dx_item_of(const bwd_job *j, int64_t item, const int G) {
    const int block = j->sh.block;
    const int64_t c0 = (item % j->sh.blocks) * block, c = j->sh.blocks * block;
    const int64_t base = item * j->sh.len; /* item = n * blocks + block */
    v8f mean[MAX_GROUPS], kd[MAX_GROUPS], a[MAX_GROUPS], k[MAX_GROUPS], x, d;
    groups_of(j->mean, c0, G, mean);
    groups_of(j->coef, c0, G, kd);
    groups_of(j->coef + c, c0, G, a);
    groups_of(j->coef + 2 * c, c0, G, k);
    for (int64_t i = 0; i < j->sh.len; i += block)
        for (int g = 0; g < G; g++) {
            const int64_t at = base + i + g * LANES;
            load8(j->x, j->x_bf16, at, &x);
            memcpy(&d, j->dy + at, sizeof d);
            d = d * kd[g] + (a[g] + k[g] * (x - mean[g]));
            memcpy(j->dx + at, &d, sizeof d);
        }
}
VECTOR_BODY void bwd_dx_item_body(const bwd_job *j, int64_t item) {
    if (j->sh.groups == 1) /* constant group counts: the groups' vectors stay in registers */
        bwd_dx_item_of(j, item, 1);
    else
        bwd_dx_item_of(j, item, 2);
}
VECTOR_DISPATCH(void, bwd_dx_item, (const bwd_job *j, int64_t item), (j, item))

static void bwd_dx_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) bwd_dx_item(arg, i);
}

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
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, bwd_sums_range, &j);
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
    yolo_cpu_run_ranges(ctx, items, items * j.sh.len, bwd_dx_range, &j);
    free(coef);
    free(j.part);
    return YOLO_OK;
}
