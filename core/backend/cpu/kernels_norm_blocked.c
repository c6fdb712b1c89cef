/* Batch norm's fused ops on channel-blocked values (graph/blocked.c):
 * BN_STATS, BN_SILU and BN_BWD (with SiLU folded in or not) where x, dy and
 * dx are stored [N][C/B][H][W][B], B = 16 (AVX-512) or 8 (AVX2). A plane of
 * one channel block is s * B contiguous floats, read 16 at a time: one
 * 16-float vector holds 16 / B positions' channels, lane l channel l % B,
 * so the per-channel constants are vectors (repeated per position) and no
 * transposition is needed. With B = 8 and an odd plane the last vector is
 * half full: its missing lanes are read as zeros and never written.
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
#include "util/vec16.h"

enum { LANES = 16, SUM_VECTORS = 16, CHUNK_VECTORS = 32 };

typedef struct blocked_shape {
    int64_t n, blocks, s; /* images, channel blocks, positions per plane */
    int block;            /* channels per block, B: 8 or 16 */
    int64_t len;          /* floats per plane, s * B */
    int64_t full;         /* whole 16-float vectors in a plane */
    int tail;             /* floats after them: 0, or 8 (8-channel blocks, odd plane) */
} blocked_shape;

static blocked_shape shape_of(const yolo_tensor *x) {
    const int b = x->node->block;
    const int64_t s = x->shape[2] * x->shape[3];
    return (blocked_shape){x->shape[0], x->shape[1] / b, s, b, s * b, s * b / LANES, (int)(s * b % LANES)};
}

/* The per-vector steps below take `valid`, the lanes that lie in the plane:
 * LANES (a constant, so the checks fold away) in the loops over whole
 * vectors, `tail` once after them. */

/* 16 values of x (f32, or bf16 widened) from element `at`; past `valid`, zeros. */
static inline __attribute__((always_inline)) void load16(const void *x, bool bf16, int64_t at, int valid, v16f *v) {
    if (valid == LANES) {
        if (bf16)
            v16_from_bf16((const uint16_t *)x + at, v);
        else
            memcpy(v, (const float *)x + at, sizeof *v);
        return;
    }
    float f[LANES] = {0};
    for (int l = 0; l < valid; l++)
        f[l] = bf16 ? yolo_bf16_to_f32(((const uint16_t *)x)[at + l]) : ((const float *)x)[at + l];
    memcpy(v, f, sizeof f);
}

static inline __attribute__((always_inline)) void store16(float *out, int64_t at, int valid, const v16f *v) {
    if (valid == LANES)
        memcpy(out + at, v, sizeof *v); /* a constant size: one vector store, no memcpy call */
    else
        memcpy(out + at, v, (size_t)valid * sizeof(float));
}

/* A per-channel row's values for the block starting at channel c0, lane l
 * holding channel c0 + l % B. */
static inline __attribute__((always_inline)) void lanes_of(const float *p, int64_t c0, int block, v16f *v) {
    float f[LANES];
    for (int l = 0; l < LANES; l += block) memcpy(f + l, p + c0, (size_t)block * sizeof(float));
    memcpy(v, f, sizeof f);
}

/* Per-channel constants of one block: BN_SILU's scale k = gamma / sqrtf(var + eps). */
static void scale_of(const float *gamma, const float *var, float eps, int64_t c0, int block, v16f *k) {
    float kf[LANES];
    for (int l = 0; l < LANES; l++) kf[l] = gamma[c0 + l % block] / sqrtf(var[c0 + l % block] + eps);
    memcpy(k, kf, sizeof kf);
}

/* Partial sums: two vectors of doubles per lane pair (lo: lanes 0-7, hi: 8-15). */
typedef struct lane_sums {
    v8d a_lo, a_hi, b_lo, b_hi;
} lane_sums;

/* ---- BN_STATS ---- */

typedef struct stats_job {
    blocked_shape sh;
    const void *x;
    bool bf16;
    const float *shift; /* per channel: the channel's first sample */
    lane_sums *part;    /* [blocks][n] */
} stats_job;

/* Lanes below `valid` all ones, the rest zero. */
static inline __attribute__((always_inline)) void lanes_below(int valid, v16i *mask) {
    const v16i lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const v16i bound = {valid, valid, valid, valid, valid, valid, valid, valid,
                        valid, valid, valid, valid, valid, valid, valid, valid};
    *mask = (v16i)V16U_MASK((v16u)lane, <, (v16u)bound);
}

static inline __attribute__((always_inline)) void stats_step(const stats_job *j, int64_t at, int valid,
                                                             const v16f *shift, v16f *a, v16f *q) {
    v16f d;
    load16(j->x, j->bf16, at, valid, &d);
    d -= *shift;
    if (valid < LANES) { /* the shift is not a sample */
        v16i in_plane;
        lanes_below(valid, &in_plane);
        d = V16_SELECT(in_plane, d, V16(0.0f));
    }
    *a += d;
    *q += d * d;
}

VECTOR_BODY void stats_item_body(const stats_job *j, int64_t item) {
    const int64_t b = item / j->sh.n, n = item % j->sh.n;
    const int64_t base = (n * j->sh.blocks + b) * j->sh.len;
    v16f shift, a, q;
    lanes_of(j->shift, b * j->sh.block, j->sh.block, &shift);
    lane_sums r = {0};
    for (int64_t p = 0; p < j->sh.full; p += SUM_VECTORS) {
        const int64_t end = p + SUM_VECTORS < j->sh.full ? p + SUM_VECTORS : j->sh.full;
        a = q = V16(0.0f);
        for (int64_t i = p; i < end; i++) stats_step(j, base + i * LANES, LANES, &shift, &a, &q);
        v16_add_to_v8d(&a, &r.a_lo, &r.a_hi);
        v16_add_to_v8d(&q, &r.b_lo, &r.b_hi);
    }
    if (j->sh.tail) {
        a = q = V16(0.0f);
        stats_step(j, base + j->sh.full * LANES, j->sh.tail, &shift, &a, &q);
        v16_add_to_v8d(&a, &r.a_lo, &r.a_hi);
        v16_add_to_v8d(&q, &r.b_lo, &r.b_hi);
    }
    j->part[item] = r;
}
VECTOR_DISPATCH(void, stats_item, (const stats_job *j, int64_t item), (j, item))

static void stats_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) stats_item(arg, i);
}

/* Channel ch's double sums over all images, in image order: its lane of
 * its block's partial sums, or (8-channel blocks) its two lanes, l and l + 8. */
static void total(const lane_sums *part, const blocked_shape *sh, int64_t ch, double *a, double *q) {
    const int64_t b = ch / sh->block;
    const int l = (int)(ch % sh->block);
    *a = *q = 0;
    for (int64_t n = 0; n < sh->n; n++) {
        const lane_sums *r = &part[b * sh->n + n];
        if (sh->block == 16) {
            *a += l < 8 ? r->a_lo[l] : r->a_hi[l - 8];
            *q += l < 8 ? r->b_lo[l] : r->b_hi[l - 8];
        } else {
            *a += r->a_lo[l] + r->a_hi[l];
            *q += r->b_lo[l] + r->b_hi[l];
        }
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

VECTOR_BODY void silu_item_body(const silu_job *j, int64_t item) {
    const int block = j->sh.block;
    const int64_t b = (item % j->sh.blocks) * block;
    const int64_t base = item * j->sh.len; /* item = n * blocks + block */
    v16f mean, k, beta, x, z, y;
    lanes_of(j->mean, b, block, &mean);
    lanes_of(j->beta, b, block, &beta);
    scale_of(j->gamma, j->var, j->eps, b, block, &k);
    float chunk[CHUNK_VECTORS * LANES];
    for (int64_t at = 0; at < j->sh.len; at += CHUNK_VECTORS * LANES) {
        const int64_t floats = j->sh.len - at < CHUNK_VECTORS * LANES ? j->sh.len - at : CHUNK_VECTORS * LANES;
        const int64_t whole = floats / LANES;
        const int tail = (int)(floats % LANES);
        float *o = j->out_bf16 ? chunk : (float *)j->out + base + at;
        for (int64_t i = 0; i < whole; i++) {
            load16(j->x, j->x_bf16, base + at + i * LANES, LANES, &x);
            z = (x - mean) * k + beta;
            v16_silu(&z, NULL, &y);
            store16(o, i * LANES, LANES, &y);
        }
        if (tail) {
            load16(j->x, j->x_bf16, base + at + whole * LANES, tail, &x);
            z = (x - mean) * k + beta;
            v16_silu(&z, NULL, &y);
            store16(o, whole * LANES, tail, &y);
        }
        /* a bf16 value is rounded a chunk at a time (kernels_elementwise.c says why) */
        if (j->out_bf16) yolo_bf16_round_row(chunk, (uint16_t *)j->out + base + at, floats);
    }
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

/* A half vector's missing lanes read x = dy = 0, so they add zeros. */
static inline __attribute__((always_inline)) void bwd_sums_step(const bwd_job *j, int64_t at, int valid,
                                                                const v16f *mean, const v16f *k, const v16f *beta,
                                                                v16f *a, v16f *q) {
    v16f x, d, z;
    load16(j->x, j->x_bf16, at, valid, &x);
    if (j->dy_silu) { /* SiLU's backward, z recomputed as BN_SILU does */
        load16(j->dy_silu, false, at, valid, &d);
        z = (x - *mean) * *k + *beta;
        v16_silu_bwd(&z, &d, &d);
        store16(j->dx, at, valid, &d);
    } else {
        load16(j->dy, false, at, valid, &d);
    }
    *a += d;
    *q += d * (x - *mean);
}

VECTOR_BODY void bwd_sums_item_body(const bwd_job *j, int64_t item) {
    const int64_t b = item / j->sh.n, n = item % j->sh.n;
    const int block = j->sh.block;
    const int64_t base = (n * j->sh.blocks + b) * j->sh.len;
    v16f mean, k = V16(0.0f), beta = V16(0.0f), a, q;
    lanes_of(j->mean, b * block, block, &mean);
    if (j->dy_silu) {
        lanes_of(j->beta, b * block, block, &beta);
        scale_of(j->gamma, j->var, j->eps, b * block, block, &k);
    }
    lane_sums r = {0};
    for (int64_t p = 0; p < j->sh.full; p += SUM_VECTORS) {
        const int64_t end = p + SUM_VECTORS < j->sh.full ? p + SUM_VECTORS : j->sh.full;
        a = q = V16(0.0f);
        for (int64_t i = p; i < end; i++) bwd_sums_step(j, base + i * LANES, LANES, &mean, &k, &beta, &a, &q);
        v16_add_to_v8d(&a, &r.a_lo, &r.a_hi);
        v16_add_to_v8d(&q, &r.b_lo, &r.b_hi);
    }
    if (j->sh.tail) {
        a = q = V16(0.0f);
        bwd_sums_step(j, base + j->sh.full * LANES, j->sh.tail, &mean, &k, &beta, &a, &q);
        v16_add_to_v8d(&a, &r.a_lo, &r.a_hi);
        v16_add_to_v8d(&q, &r.b_lo, &r.b_hi);
    }
    j->part[item] = r;
}
VECTOR_DISPATCH(void, bwd_sums_item, (const bwd_job *j, int64_t item), (j, item))

static void bwd_sums_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) bwd_sums_item(arg, i);
}

static inline __attribute__((always_inline)) void bwd_dx_step(const bwd_job *j, int64_t at, int valid,
                                                              const v16f *mean, const v16f *kd, const v16f *a,
                                                              const v16f *k) {
    v16f x, d;
    load16(j->x, j->x_bf16, at, valid, &x);
    load16(j->dy, false, at, valid, &d);
    d = d * *kd + (*a + *k * (x - *mean));
    store16(j->dx, at, valid, &d);
}

VECTOR_BODY void bwd_dx_item_body(const bwd_job *j, int64_t item) {
    const int block = j->sh.block;
    const int64_t c0 = (item % j->sh.blocks) * block, c = j->sh.blocks * block;
    const int64_t base = item * j->sh.len; /* item = n * blocks + block */
    v16f mean, kd, a, k;
    lanes_of(j->mean, c0, block, &mean);
    lanes_of(j->coef, c0, block, &kd);
    lanes_of(j->coef + c, c0, block, &a);
    lanes_of(j->coef + 2 * c, c0, block, &k);
    for (int64_t i = 0; i < j->sh.full; i++) bwd_dx_step(j, base + i * LANES, LANES, &mean, &kd, &a, &k);
    if (j->sh.tail) bwd_dx_step(j, base + j->sh.full * LANES, j->sh.tail, &mean, &kd, &a, &k);
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
