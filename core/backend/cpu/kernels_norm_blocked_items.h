/* The work items of kernels_norm_blocked.c on VEC_W-float vectors (8 or
 * 16): that file includes this one once per width, after its job structs.
 * A channel block of B channels is G = B / VEC_W vectors per position,
 * which follow each other, so vector v of a plane holds the channels of
 * group v % G; G is a constant argument (1 or 2) of each *_of function, so
 * the groups' vectors stay in registers. Not a header of its own: no
 * include guard, and VEC_W must be set. */
#ifndef VEC_W
#error "kernels_norm_blocked_items.h is included by kernels_norm_blocked.c with VEC_W set"
#endif

#define NB_CAT_(a, b) a##b
#define NB_CAT(a, b) NB_CAT_(a, b)
#define VF NB_CAT(NB_CAT(v, VEC_W), f)
#define VFN(name) NB_CAT(NB_CAT(v, VEC_W), NB_CAT(_, name)) /* v8_silu, ... */
#define WIDTH(name) NB_CAT(name, VEC_W)                      /* stats_item_of8, ... */

/* VEC_W values of x (f32, or bf16 widened) from element `at`. */
static inline __attribute__((always_inline)) void WIDTH(load_)(const void *x, bool bf16, int64_t at, VF *v) {
    if (bf16)
        VFN(from_bf16)((const uint16_t *)x + at, v);
    else
        memcpy(v, (const float *)x + at, sizeof *v);
}

/* A per-channel row's values for the block starting at channel c0, one
 * vector per group. */
static inline __attribute__((always_inline)) void WIDTH(groups_of)(const float *p, int64_t c0, int G, VF *v) {
    for (int g = 0; g < G; g++) memcpy(&v[g], p + c0 + g * VEC_W, sizeof v[g]);
}

static inline __attribute__((always_inline)) void WIDTH(stats_item_of)(const stats_job *j, int64_t item,
                                                                       const int G) {
    const int64_t b = item / j->sh.n, n = item % j->sh.n;
    const int64_t base = (n * j->sh.blocks + b) * j->sh.len;
    VF shift[2];
    WIDTH(groups_of)(j->shift, b * j->sh.block, G, shift);
    lane_sums *r = &j->part[item];
    memset(r, 0, sizeof *r);
    for (int64_t p = 0; p < j->sh.s; p += SUM_POSITIONS) {
        const int64_t end = p + SUM_POSITIONS < j->sh.s ? p + SUM_POSITIONS : j->sh.s;
        VF a[2] = {0}, q[2] = {0}, d;
        for (int64_t i = p; i < end; i++)
            for (int g = 0; g < G; g++) {
                WIDTH(load_)(j->x, j->bf16, base + (i * G + g) * VEC_W, &d);
                d -= shift[g];
                a[g] += d;
                q[g] += d * d;
            }
        for (int g = 0; g < G; g++) {
            VFN(add_to_doubles)(&a[g], r->a + g * VEC_W);
            VFN(add_to_doubles)(&q[g], r->b + g * VEC_W);
        }
    }
}

static inline __attribute__((always_inline)) void WIDTH(silu_item_of)(const silu_job *j, int64_t item, const int G) {
    const int block = j->sh.block;
    const int64_t c0 = (item % j->sh.blocks) * block;
    const int64_t base = item * j->sh.len; /* item = n * blocks + block */
    VF mean[2], k[2], beta[2], x, z, y;
    WIDTH(groups_of)(j->mean, c0, G, mean);
    WIDTH(groups_of)(j->beta, c0, G, beta);
    scale_of(j->gamma, j->var, j->eps, c0, block, (float *)k);
    float chunk[CHUNK_FLOATS]; /* a multiple of every block */
    for (int64_t at = 0; at < j->sh.len; at += CHUNK_FLOATS) {
        const int64_t len = j->sh.len - at < CHUNK_FLOATS ? j->sh.len - at : CHUNK_FLOATS;
        float *o = j->out_bf16 ? chunk : (float *)j->out + base + at;
        for (int64_t i = 0; i < len; i += block)
            for (int g = 0; g < G; g++) {
                WIDTH(load_)(j->x, j->x_bf16, base + at + i + g * VEC_W, &x);
                z = (x - mean[g]) * k[g] + beta[g];
                VFN(silu)(&z, NULL, &y);
                memcpy(o + i + g * VEC_W, &y, sizeof y);
            }
        /* a bf16 value is rounded a chunk at a time (kernels_elementwise.c says why) */
        if (j->out_bf16) yolo_bf16_round_row(chunk, (uint16_t *)j->out + base + at, len);
    }
}

static inline __attribute__((always_inline)) void WIDTH(bwd_sums_item_of)(const bwd_job *j, int64_t item,
                                                                          const int G) {
    const int64_t b = item / j->sh.n, n = item % j->sh.n;
    const int block = j->sh.block;
    const int64_t base = (n * j->sh.blocks + b) * j->sh.len;
    VF mean[2], k[2] = {0}, beta[2] = {0}, x, d, z;
    WIDTH(groups_of)(j->mean, b * block, G, mean);
    if (j->dy_silu) {
        WIDTH(groups_of)(j->beta, b * block, G, beta);
        scale_of(j->gamma, j->var, j->eps, b * block, block, (float *)k);
    }
    lane_sums *r = &j->part[item];
    memset(r, 0, sizeof *r);
    for (int64_t p = 0; p < j->sh.s; p += SUM_POSITIONS) {
        const int64_t end = p + SUM_POSITIONS < j->sh.s ? p + SUM_POSITIONS : j->sh.s;
        VF a[2] = {0}, q[2] = {0};
        for (int64_t i = p; i < end; i++)
            for (int g = 0; g < G; g++) {
                const int64_t at = base + (i * G + g) * VEC_W;
                WIDTH(load_)(j->x, j->x_bf16, at, &x);
                if (j->dy_silu) { /* SiLU's backward, z recomputed as BN_SILU does */
                    memcpy(&d, j->dy_silu + at, sizeof d);
                    z = (x - mean[g]) * k[g] + beta[g];
                    VFN(silu_bwd)(&z, &d, &d);
                    memcpy(j->dx + at, &d, sizeof d);
                } else {
                    memcpy(&d, j->dy + at, sizeof d);
                }
                a[g] += d;
                q[g] += d * (x - mean[g]);
            }
        for (int g = 0; g < G; g++) {
            VFN(add_to_doubles)(&a[g], r->a + g * VEC_W);
            VFN(add_to_doubles)(&q[g], r->b + g * VEC_W);
        }
    }
}

static inline __attribute__((always_inline)) void WIDTH(bwd_dx_item_of)(const bwd_job *j, int64_t item,
                                                                        const int G) {
    const int block = j->sh.block;
    const int64_t c0 = (item % j->sh.blocks) * block, c = j->sh.blocks * block;
    const int64_t base = item * j->sh.len; /* item = n * blocks + block */
    VF mean[2], kd[2], a[2], k[2], x, d;
    WIDTH(groups_of)(j->mean, c0, G, mean);
    WIDTH(groups_of)(j->coef, c0, G, kd);
    WIDTH(groups_of)(j->coef + c, c0, G, a);
    WIDTH(groups_of)(j->coef + 2 * c, c0, G, k);
    for (int64_t i = 0; i < j->sh.len; i += block)
        for (int g = 0; g < G; g++) {
            const int64_t at = base + i + g * VEC_W;
            WIDTH(load_)(j->x, j->x_bf16, at, &x);
            memcpy(&d, j->dy + at, sizeof d);
            d = d * kd[g] + (a[g] + k[g] * (x - mean[g]));
            memcpy(j->dx + at, &d, sizeof d);
        }
}

#undef NB_CAT_
#undef NB_CAT
#undef VF
#undef VFN
#undef WIDTH
