/* CPU kernels of batch normalization, split as in graph/ops.h into
 * statistics (BN_STATS), the affine normalization (BN_APPLY) and their
 * backward pieces.
 *
 * x is [N,C,H,W] or [N,C] (any trailing dims are flattened into one
 * "plane" of S elements). Per-channel sums are accumulated in double, each
 * channel by one thread in a fixed order, so results do not depend on the
 * number of threads. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels_norm_blocked.h"
#include "util/vec.h"

/* Elementwise plane loops run on 8-float vectors (GCC/Clang vector
 * extensions), built for AVX2 too and picked at run time
 * (VECTOR_DISPATCH_AVX2, util/vec.h; 8-float loops gain nothing from
 * AVX-512). Vector lanes and the scalar tail do the same IEEE operations in
 * the same order (no FMA contraction in ISO C mode), so an element's value
 * does not depend on the path or on the thread split. */

/* y = (x - mean) * k + b */
VECTOR_BODY void plane_affine_body(const float *restrict x, float *restrict y, int64_t s, float mean, float k,
                                   float b) {
    int64_t i = 0;
    for (; i + 8 <= s; i += 8) {
        v8f v;
        memcpy(&v, x + i, sizeof v);
        v = (v - V8(mean)) * V8(k) + V8(b);
        memcpy(y + i, &v, sizeof v);
    }
    for (; i < s; i++) y[i] = (x[i] - mean) * k + b;
}
VECTOR_DISPATCH_AVX2(void, plane_affine, (const float *restrict x, float *restrict y, int64_t s, float mean, float k,
                                          float b), (x, y, s, mean, k, b))

/* dx = dy * kd + (a + k * (x - mean)); dx may be dy (in place) */
VECTOR_BODY void plane_bwd_body(const float *restrict x, const float *dy, float *dx, int64_t s, float mean, float kd,
                                float a, float k) {
    int64_t i = 0;
    for (; i + 8 <= s; i += 8) {
        v8f vx, vd;
        memcpy(&vx, x + i, sizeof vx);
        memcpy(&vd, dy + i, sizeof vd);
        vd = vd * V8(kd) + (V8(a) + V8(k) * (vx - V8(mean)));
        memcpy(dx + i, &vd, sizeof vd);
    }
    for (; i < s; i++) dx[i] = dy[i] * kd + (a + k * (x[i] - mean));
}
VECTOR_DISPATCH_AVX2(void, plane_bwd, (const float *restrict x, const float *dy, float *dx, int64_t s, float mean,
                                       float kd, float a, float k), (x, dy, dx, s, mean, kd, a, k))

typedef struct bn_layout {
    int64_t n, c, s; /* batch, channels, elements per (n, c) plane */
} bn_layout;

static bn_layout layout_of(const yolo_tensor *x) {
    bn_layout l = {x->shape[0], x->ndim > 1 ? x->shape[1] : 1, 1};
    for (int i = 2; i < x->ndim; i++) l.s *= x->shape[i];
    return l;
}

/* Per-channel sums run in float over blocks of MOMENT_BLOCK elements (8
 * lanes of 32 terms each), and the blocks' sums are added in double: the
 * float adds run at four times the rate of the double ones (BN_STATS and
 * BN_BWD were bound by them), and a lane's 32 terms cost at most a few ulp
 * of their magnitude, as with float accumulation on a GPU. Blocks start at
 * multiples of MOMENT_BLOCK from the plane's start, so a plane's sums have
 * one order whichever pieces it is read in (WIDE_CHUNK is a multiple). */
enum { MOMENT_BLOCK = 256 };

/* v's 8 lanes added in double, in a fixed order. */
static inline __attribute__((always_inline)) double v8_total(const v8f *v) {
    double d[8] = {0};
    v8_add_to_doubles(v, d);
    return ((d[0] + d[4]) + (d[1] + d[5])) + ((d[2] + d[6]) + (d[3] + d[7]));
}

static int64_t block_end(int64_t b, int64_t s) { return s - b > MOMENT_BLOCK ? b + MOMENT_BLOCK : s; }

/* sum(p[i] - shift) and sum((p[i] - shift)^2) over one plane. */
VECTOR_BODY void plane_moments_body(const float *p, int64_t s, float shift, double *sum, double *sumsq) {
    const v8f sh = V8(shift);
    for (int64_t b = 0; b < s; b += MOMENT_BLOCK) {
        const int64_t end = block_end(b, s);
        v8f a = V8(0.0f), q = V8(0.0f), d;
        int64_t i = b;
        for (; i + 8 <= end; i += 8) {
            memcpy(&d, p + i, sizeof d);
            d -= sh;
            a += d;
            q += d * d;
        }
        if (i < end) { /* the tail, padded with the shift: zeros after it */
            d = sh;
            memcpy(&d, p + i, (size_t)(end - i) * sizeof(float));
            d -= sh;
            a += d;
            q += d * d;
        }
        *sum += v8_total(&a);
        *sumsq += v8_total(&q);
    }
}
VECTOR_DISPATCH(void, plane_moments, (const float *p, int64_t s, float shift, double *sum, double *sumsq),
                (p, s, shift, sum, sumsq))

/* sum(dy) and sum(dy * (x - mean)) over one plane. */
VECTOR_BODY void plane_dy_moments_body(const float *x, const float *dy, int64_t s, float mean, double *sdy,
                                       double *sdyx) {
    const v8f m = V8(mean);
    for (int64_t b = 0; b < s; b += MOMENT_BLOCK) {
        const int64_t end = block_end(b, s);
        v8f a = V8(0.0f), q = V8(0.0f), vx, vd;
        int64_t i = b;
        for (; i + 8 <= end; i += 8) {
            memcpy(&vx, x + i, sizeof vx);
            memcpy(&vd, dy + i, sizeof vd);
            a += vd;
            q += vd * (vx - m);
        }
        if (i < end) { /* the tail, zero-padded */
            vx = vd = V8(0.0f);
            memcpy(&vx, x + i, (size_t)(end - i) * sizeof(float));
            memcpy(&vd, dy + i, (size_t)(end - i) * sizeof(float));
            a += vd;
            q += vd * (vx - m);
        }
        *sdy += v8_total(&a);
        *sdyx += v8_total(&q);
    }
}
VECTOR_DISPATCH(void, plane_dy_moments, (const float *x, const float *dy, int64_t s, float mean, double *sdy,
                                         double *sdyx), (x, dy, s, mean, sdy, sdyx))

/* ---- Planes in pieces; bf16 x: amp's narrowed conv outputs (graph/narrow.c) ----
 * The per-channel loops walk a plane a piece of WIDE_CHUNK elements at a
 * time, small enough for the first-level cache: BN_BWD's fused SiLU writes
 * a piece of dz that its sums read back at once. A bf16 x goes through the
 * f32 loops a piece at a time, widened on the stack (exact: bf16 is an
 * f32's top half). */
#define WIDE_CHUNK 2048

typedef struct bn_input {
    const void *data;
    bool bf16;
} bn_input;

static bn_input bn_input_of(const yolo_tensor *x) { return (bn_input){yolo_cpu_data(x), x->dtype == YOLO_BF16}; }

static float input_at(bn_input x, int64_t i) {
    return x.bf16 ? yolo_bf16_to_f32(((const uint16_t *)x.data)[i]) : ((const float *)x.data)[i];
}

/* Elements in the next piece of a plane with `rest` elements left. */
static int64_t piece_len(int64_t rest) { return rest > WIDE_CHUNK ? WIDE_CHUNK : rest; }

/* Widens n bf16 into floats, 8 at a time (n is at most a chunk). */
VECTOR_BODY void widen_bf16_body(const uint16_t *h, int64_t n, float *out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f v;
        v8_from_bf16(h + i, &v);
        memcpy(out + i, &v, sizeof v);
    }
    for (; i < n; i++) {
        const uint32_t u = (uint32_t)h[i] << 16;
        memcpy(&out[i], &u, sizeof u);
    }
}
VECTOR_DISPATCH(void, widen_bf16, (const uint16_t *h, int64_t n, float *out), (h, n, out))

/* Elements [at, at+n) of x as floats: in place for f32, else widened into buf. */
static const float *input_floats(bn_input x, int64_t at, int64_t n, float *buf) {
    if (!x.bf16) return (const float *)x.data + at;
    widen_bf16((const uint16_t *)x.data + at, n, buf);
    return buf;
}

/* ---- BN_STATS: src x, (running_mean, running_var) -> [2,C] mean, biased var ---- */

typedef struct stats_job {
    bn_layout l;
    bn_input x;
    float *mean, *var;
} stats_job;

static void stats_range(void *arg, int64_t begin, int64_t end) {
    const stats_job *j = arg;
    const bn_layout l = j->l;
    const double count = (double)(l.n * l.s);
    float buf[WIDE_CHUNK];
    for (int64_t c = begin; c < end; c++) {
        /* Shifting by one sample of the channel keeps the one-pass variance
         * accurate when |mean| >> std. */
        const float shift = input_at(j->x, c * l.s);
        double sum = 0, sumsq = 0;
        for (int64_t n = 0; n < l.n; n++) {
            const int64_t at = (n * l.c + c) * l.s;
            for (int64_t i = 0, len; i < l.s; i += len) {
                len = piece_len(l.s - i);
                plane_moments(input_floats(j->x, at + i, len, buf), len, shift, &sum, &sumsq);
            }
        }
        const double m = sum / count;
        double v = sumsq / count - m * m;
        if (v < 0) v = 0;
        j->mean[c] = (float)(shift + m);
        j->var[c] = (float)v;
    }
}

static yolo_status bn_stats_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    stats_job j = {layout_of(x), bn_input_of(x), NULL, NULL};
    j.mean = yolo_cpu_f32(out);
    j.var = j.mean + j.l.c;
    if (j.l.n * j.l.s == 0)
        return yolo_error(YOLO_ERR_SHAPE, "BN_STATS: no elements per channel in x of shape [%lld,%lld,...]",
                          (long long)x->shape[0], (long long)j.l.c);
    if (x->node->block) {
        yolo_status st = yolo_cpu_bn_stats_blocked(ctx, x, j.mean, j.var);
        if (st != YOLO_OK) return st;
    } else {
        yolo_cpu_run_ranges(ctx, j.l.c, j.l.n * j.l.c * j.l.s, stats_range, &j);
    }
    if (out->node->iparams[0] && out->node->n_src >= 3) {
        float *rm = yolo_cpu_f32(out->node->src[1]), *rv = yolo_cpu_f32(out->node->src[2]);
        const double m = out->node->fparams[0];
        const double count = (double)(j.l.n * j.l.s);
        const double unbias = count > 1 ? count / (count - 1) : 1.0;
        for (int64_t c = 0; c < j.l.c; c++) {
            rm[c] = (float)((1 - m) * rm[c] + m * j.mean[c]);
            rv[c] = (float)((1 - m) * rv[c] + m * j.var[c] * unbias);
        }
    }
    return YOLO_OK;
}

/* ---- BN_APPLY: src x, mean, var, gamma, beta -> gamma*(x-mean)/sqrt(var+eps)+beta ---- */

typedef struct plane_job {
    bn_layout l;
    bn_input xin; /* x of BN_BWD and BN_APPLY_BWD_PARAMS (channel_param_grads), which may be bf16 */
    const float *x, *dy;
    const float *dy_silu; /* BN_BWD with SiLU folded in: SiLU's output gradient (dy is then its dz) */
    const float *mean, *var, *gamma, *beta;
    const float *dmean, *dvar;
    float *out;
    float eps;
} plane_job;

static void apply_range(void *arg, int64_t begin, int64_t end) {
    const plane_job *j = arg;
    const int64_t s = j->l.s;
    for (int64_t p = begin; p < end; p++) {
        const int64_t c = p % j->l.c;
        const float mean = j->mean[c];
        const float k = j->gamma[c] / sqrtf(j->var[c] + j->eps);
        const float b = j->beta[c];
        plane_affine(j->x + p * s, j->out + p * s, s, mean, k, b);
    }
}

static yolo_status bn_apply_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    plane_job j = {0};
    j.l = layout_of(x);
    j.x = yolo_cpu_f32(x);
    j.mean = yolo_cpu_f32(out->node->src[1]);
    j.var = yolo_cpu_f32(out->node->src[2]);
    j.gamma = yolo_cpu_f32(out->node->src[3]);
    j.beta = yolo_cpu_f32(out->node->src[4]);
    j.out = yolo_cpu_f32(out);
    j.eps = out->node->fparams[0];
    yolo_cpu_run_ranges(ctx, j.l.n * j.l.c, j.l.n * j.l.c * j.l.s, apply_range, &j);
    return YOLO_OK;
}

/* ---- BN_APPLY_BWD_PARAMS: src x, mean, var, gamma, dy -> [4,C] dgamma, dbeta, dmean, dvar ----
 * With r = 1/sqrt(var+eps): dgamma = r*sum(dy*(x-mean)), dbeta = sum(dy),
 * dmean = -gamma*r*sum(dy), dvar = -gamma*r^3/2 * sum(dy*(x-mean)). */

/* Channel c's dgamma, dbeta, dmean, dvar into rows[0..3 * l.c + c] (rows of
 * [4,C]). BN_BWD with SiLU folded in (j->dy_silu) first writes each piece
 * of dy, SiLU's dz, into j->dy, which is its output: the sums then read
 * the piece from cache. */
static void channel_param_grads(const plane_job *j, int64_t c, float *rows) {
    const bn_layout l = j->l;
    const float mean = j->mean[c];
    const float k = j->gamma[c] / sqrtf(j->var[c] + j->eps); /* BN_SILU's scale */
    double sdy = 0, sdyx = 0;
    float buf[WIDE_CHUNK];
    for (int64_t n = 0; n < l.n; n++) {
        const int64_t at = (n * l.c + c) * l.s;
        for (int64_t i = 0, len; i < l.s; i += len) {
            len = piece_len(l.s - i);
            if (j->dy_silu)
                yolo_cpu_bn_silu_bwd_plane(j->xin.data, j->xin.bf16, at + i, j->dy_silu + at + i, j->out + at + i,
                                           len, mean, k, j->beta[c]);
            plane_dy_moments(input_floats(j->xin, at + i, len, buf), j->dy + at + i, len, mean, &sdy, &sdyx);
        }
    }
    const double r = 1.0 / sqrt((double)j->var[c] + j->eps);
    const double g = j->gamma[c];
    rows[c] = (float)(r * sdyx);
    rows[l.c + c] = (float)sdy;
    rows[2 * l.c + c] = (float)(-g * r * sdy);
    rows[3 * l.c + c] = (float)(-0.5 * g * r * r * r * sdyx);
}

static void apply_bwd_params_range(void *arg, int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; c++) channel_param_grads(arg, c, ((const plane_job *)arg)->out);
}

static yolo_status bn_apply_bwd_params_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    plane_job j = {0};
    j.l = layout_of(x);
    j.xin = bn_input_of(x);
    j.mean = yolo_cpu_f32(out->node->src[1]);
    j.var = yolo_cpu_f32(out->node->src[2]);
    j.gamma = yolo_cpu_f32(out->node->src[3]);
    j.dy = yolo_cpu_f32(out->node->src[4]);
    j.out = yolo_cpu_f32(out);
    j.eps = out->node->fparams[0];
    yolo_cpu_run_ranges(ctx, j.l.c, j.l.n * j.l.c * j.l.s, apply_bwd_params_range, &j);
    return YOLO_OK;
}

/* ---- BN_APPLY_BWD_DATA: src var, gamma, dy -> dy*gamma/sqrt(var+eps) ---- */

static void apply_bwd_data_range(void *arg, int64_t begin, int64_t end) {
    const plane_job *j = arg;
    const int64_t s = j->l.s;
    for (int64_t p = begin; p < end; p++) {
        const int64_t c = p % j->l.c;
        const float k = j->gamma[c] / sqrtf(j->var[c] + j->eps);
        const float *restrict dy = j->dy + p * s;
        float *restrict dx = j->out + p * s;
        for (int64_t i = 0; i < s; i++) dx[i] = dy[i] * k;
    }
}

static yolo_status bn_apply_bwd_data_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    plane_job j = {0};
    j.l = layout_of(out);
    j.var = yolo_cpu_f32(out->node->src[0]);
    j.gamma = yolo_cpu_f32(out->node->src[1]);
    j.dy = yolo_cpu_f32(out->node->src[2]);
    j.out = yolo_cpu_f32(out);
    j.eps = out->node->fparams[0];
    yolo_cpu_run_ranges(ctx, j.l.n * j.l.c, j.l.n * j.l.c * j.l.s, apply_bwd_data_range, &j);
    return YOLO_OK;
}

/* ---- BN_STATS_BWD: src x, stats[2,C], dstats[2,C] -> dmean/M + dvar*2*(x-mean)/M ---- */

static void stats_bwd_range(void *arg, int64_t begin, int64_t end) {
    const plane_job *j = arg;
    const bn_layout l = j->l;
    const float inv_m = (float)(1.0 / (double)(l.n * l.s));
    for (int64_t p = begin; p < end; p++) {
        const int64_t c = p % l.c;
        const float mean = j->mean[c];
        const float a = j->dmean[c] * inv_m;
        const float k = 2.0f * j->dvar[c] * inv_m;
        const float *restrict x = j->x + p * l.s;
        float *restrict dx = j->out + p * l.s;
        for (int64_t i = 0; i < l.s; i++) dx[i] = a + k * (x[i] - mean);
    }
}

static yolo_status bn_stats_bwd_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    plane_job j = {0};
    j.l = layout_of(x);
    j.x = yolo_cpu_f32(x);
    j.mean = yolo_cpu_f32(out->node->src[1]);
    j.dmean = yolo_cpu_f32(out->node->src[2]);
    j.dvar = j.dmean + j.l.c;
    j.out = yolo_cpu_f32(out);
    yolo_cpu_run_ranges(ctx, j.l.n * j.l.c, j.l.n * j.l.c * j.l.s, stats_bwd_range, &j);
    return YOLO_OK;
}

/* ---- BN_BWD: src x, stats, gamma, dy -> [dx..., dgamma, dbeta, dmean, dvar] ----
 * Per channel: the sums of BN_APPLY_BWD_PARAMS (with SiLU folded in, its
 * dz computed piece by piece just before them), its four values (the same
 * float results), then dx plane by plane with BN_APPLY_BWD_DATA +
 * BN_STATS_BWD's float operations. */

static void bwd_range(void *arg, int64_t begin, int64_t end) {
    const plane_job *j = arg;
    const bn_layout l = j->l;
    const int64_t numel = l.n * l.c * l.s;
    float *dgamma = j->out + numel, *dmean = dgamma + 2 * l.c, *dvar = dgamma + 3 * l.c; /* rows of [4,C] */
    const float inv_m = (float)(1.0 / (double)(l.n * l.s));
    for (int64_t c = begin; c < end; c++) {
        channel_param_grads(j, c, dgamma);
        const float mean = j->mean[c];
        const float kd = j->gamma[c] / sqrtf(j->var[c] + j->eps);
        const float a = dmean[c] * inv_m;
        const float k = 2.0f * dvar[c] * inv_m;
        float buf[WIDE_CHUNK];
        for (int64_t n = 0; n < l.n; n++) {
            const int64_t at = (n * l.c + c) * l.s;
            for (int64_t i = 0, len; i < l.s; i += len) {
                len = piece_len(l.s - i);
                plane_bwd(input_floats(j->xin, at + i, len, buf), j->dy + at + i, j->out + at + i, len, mean, kd, a, k);
            }
        }
    }
}

static yolo_status bn_bwd_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    plane_job j = {0};
    j.l = layout_of(x);
    j.xin = bn_input_of(x);
    j.mean = yolo_cpu_f32(out->node->src[1]);
    j.var = j.mean + j.l.c;
    j.gamma = yolo_cpu_f32(out->node->src[2]);
    j.dy = yolo_cpu_f32(out->node->src[3]);
    j.out = yolo_cpu_f32(out);
    j.eps = out->node->fparams[0];
    if (x->node->block)
        return yolo_cpu_bn_bwd_blocked(ctx, x, j.mean, j.var, j.gamma,
                                       out->node->n_src == 5 ? yolo_cpu_f32(out->node->src[4]) : NULL, j.dy,
                                       out->node->n_src == 5, j.eps, j.out);
    if (out->node->n_src == 5) { /* SiLU folded in: the sums and dx read the dz it writes into dx's slot */
        j.beta = yolo_cpu_f32(out->node->src[4]);
        j.dy_silu = j.dy;
        j.dy = j.out;
    }
    yolo_cpu_run_ranges(ctx, j.l.c, j.l.n * j.l.c * j.l.s, bwd_range, &j);
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_norm_kernel(int op) {
    switch (op) {
    case YOLO_OP_BN_STATS: return bn_stats_kernel;
    case YOLO_OP_BN_APPLY: return bn_apply_kernel;
    case YOLO_OP_BN_APPLY_BWD_PARAMS: return bn_apply_bwd_params_kernel;
    case YOLO_OP_BN_APPLY_BWD_DATA: return bn_apply_bwd_data_kernel;
    case YOLO_OP_BN_STATS_BWD: return bn_stats_bwd_kernel;
    case YOLO_OP_BN_BWD: return bn_bwd_kernel;
    default: return NULL;
    }
}
