/* CPU kernels of the elementwise ops: activations and their backward (also
 * fused behind batch norm's affine map), broadcasting add/sub/mul, scale,
 * cast and fill (contracts in graph/ops.h).
 *
 * Every loop here is embarrassingly parallel over output elements, so the
 * thread split cannot change results; small tensors run on the calling
 * thread because waking the pool costs more than the work. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels_norm_blocked.h"
#include "util/bf16_row.h"
#include "util/vec.h"

/* ---- unary and binary-same-shape f32 maps ---- */

typedef struct map_job {
    const float *x;  /* first source */
    const float *y;  /* second source (backward ops: dy) */
    float *out;
    float f;
} map_job;

/* Activations run on 8-float vectors with their own exp (util/vec.h).
 * Tails go through the same vector code on a padded copy, so an element's
 * value never depends on where a range starts. */
static inline __attribute__((always_inline)) void v8_sigmoid1(const v8f *x, const v8f *dy, v8f *o) {
    (void)dy;
    v8_sigmoid(x, o);
}

#define DEFINE_VMAP(name, vfn)                                                           \
    VECTOR_BODY void name##_range_body(void *arg, int64_t begin, int64_t end) { \
        const map_job *j = arg;                                                          \
        int64_t i = begin;                                                               \
        v8f x, y = V8(0.0f), o;                                                          \
        for (; i + 8 <= end; i += 8) {                                                   \
            memcpy(&x, j->x + i, sizeof x);                                              \
            if (j->y) memcpy(&y, j->y + i, sizeof y);                                    \
            vfn(&x, &y, &o);                                                             \
            memcpy(j->out + i, &o, sizeof o);                                            \
        }                                                                                \
        if (i < end) { /* the tail, zero-padded */                                      \
            const size_t bytes = (size_t)(end - i) * sizeof(float);                      \
            x = y = V8(0.0f);                                                            \
            memcpy(&x, j->x + i, bytes);                                                 \
            if (j->y) memcpy(&y, j->y + i, bytes);                                       \
            vfn(&x, &y, &o);                                                             \
            memcpy(j->out + i, &o, bytes);                                               \
        }                                                                                \
    }                                                                                    \
    VECTOR_DISPATCH(void, name##_range, (void *arg, int64_t begin, int64_t end), (arg, begin, end)) \
    static yolo_status name##_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {          \
        map_job j = {yolo_cpu_f32(out->node->src[0]), out->node->n_src > 1 ? yolo_cpu_f32(out->node->src[1]) : NULL, \
                     yolo_cpu_f32(out), 0.0f};                                           \
        yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), name##_range, &j);            \
        return YOLO_OK;                                                                  \
    }

DEFINE_VMAP(silu, v8_silu)
DEFINE_VMAP(silu_bwd, v8_silu_bwd)
DEFINE_VMAP(sigmoid, v8_sigmoid1)

/* ---- BN_SILU / BN_SILU_BWD: batch norm's affine map fused with SiLU ----
 * Per (n, c) plane of x viewed as [N, C, S]. z = (x - mean) * k + beta with
 * k = gamma / sqrtf(var + eps) in float, exactly as BN_APPLY computes it, so
 * the fused ops give the bits of BN_APPLY followed by SILU / SILU_BWD. */

typedef struct bn_silu_job {
    int64_t c, s;
    const void *x; /* f32, or bf16 for a narrowed conv output (x_bf16) */
    bool x_bf16, out_bf16;
    const float *dy, *mean, *var, *gamma, *beta;
    void *out; /* f32, or bf16 for BN_SILU's narrowed value (out_bf16) */
    float eps;
} bn_silu_job;

static int64_t planes_of(const yolo_tensor *x, int64_t *c, int64_t *s) {
    *c = x->ndim > 1 ? x->shape[1] : 1;
    *s = 1;
    for (int i = 2; i < x->ndim; i++) *s *= x->shape[i];
    return x->shape[0] * *c;
}

/* Reads n lanes of x (f32, or bf16 widened) from element `at` into v;
 * lanes past n: zero for bf16, unchanged for f32 (tails zero v first). */
static inline __attribute__((always_inline)) void load_x(const void *x, bool x_bf16, int64_t at, v8f *v, int64_t n) {
    if (x_bf16) {
        uint16_t h[8] = {0};
        memcpy(h, (const uint16_t *)x + at, (size_t)n * 2);
        v8_from_bf16(h, v);
    } else {
        memcpy(v, (const float *)x + at, (size_t)n * sizeof(float));
    }
}

/* SiLU((x - mean) * k + b) of len elements of x from element `at`, into o. */
static inline __attribute__((always_inline)) void bn_silu_span(const void *x, bool x_bf16, int64_t at, float *o,
                                                               int64_t len, const v8f *mean, const v8f *k,
                                                               const v8f *b) {
    v8f vx, z, y;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
        load_x(x, x_bf16, at + i, &vx, 8);
        z = (vx - *mean) * *k + *b;
        v8_silu(&z, NULL, &y);
        memcpy(o + i, &y, sizeof y);
    }
    if (i < len) { /* the tail, zero-padded */
        vx = V8(0.0f);
        load_x(x, x_bf16, at + i, &vx, len - i);
        z = (vx - *mean) * *k + *b;
        v8_silu(&z, NULL, &y);
        memcpy(o + i, &y, (size_t)(len - i) * sizeof(float));
    }
}

/* A bf16 value is computed a chunk at a time in floats, then rounded as a
 * row: rounding each 16 in the same loop ran at half the speed (GCC spills
 * the exp's registers around the narrowing), and the row can use the
 * CPU's own bf16 conversion. */
enum { BN_SILU_CHUNK = 512 };

VECTOR_BODY void bn_silu_range_body(void *arg, int64_t begin, int64_t end) {
    const bn_silu_job *j = arg;
    const int64_t s = j->s;
    float chunk[BN_SILU_CHUNK];
    for (int64_t p = begin; p < end; p++) {
        const int64_t c = p % j->c;
        const float kf = j->gamma[c] / sqrtf(j->var[c] + j->eps);
        const v8f mean = V8(j->mean[c]), k = V8(kf), b = V8(j->beta[c]);
        if (!j->out_bf16) {
            bn_silu_span(j->x, j->x_bf16, p * s, (float *)j->out + p * s, s, &mean, &k, &b);
            continue;
        }
        for (int64_t at = 0; at < s; at += BN_SILU_CHUNK) {
            const int64_t len = s - at < BN_SILU_CHUNK ? s - at : BN_SILU_CHUNK;
            bn_silu_span(j->x, j->x_bf16, p * s + at, chunk, len, &mean, &k, &b);
            yolo_bf16_round_row(chunk, (uint16_t *)j->out + p * s + at, len);
        }
    }
}
VECTOR_DISPATCH(void, bn_silu_range, (void *arg, int64_t begin, int64_t end), (arg, begin, end))

/* One plane of BN_SILU_BWD (the same loop with dy, x's dtype a flag),
 * dispatched (vec.h) behind the exported wrapper. */
VECTOR_BODY void bn_silu_bwd_plane_body(const void *x, bool x_bf16, int64_t at, const float *dy, float *dz, int64_t s,
                                        float mean, float k, float b) {
    const v8f vm = V8(mean), vk = V8(k), vb = V8(b);
    v8f vx, z, d, o;
    int64_t i = 0;
    for (; i + 8 <= s; i += 8) {
        load_x(x, x_bf16, at + i, &vx, 8);
        memcpy(&d, dy + i, sizeof d);
        z = (vx - vm) * vk + vb;
        v8_silu_bwd(&z, &d, &o);
        memcpy(dz + i, &o, sizeof o);
    }
    if (i < s) { /* the tail, zero-padded */
        vx = d = V8(0.0f);
        load_x(x, x_bf16, at + i, &vx, s - i);
        memcpy(&d, dy + i, (size_t)(s - i) * sizeof(float));
        z = (vx - vm) * vk + vb;
        v8_silu_bwd(&z, &d, &o);
        memcpy(dz + i, &o, (size_t)(s - i) * sizeof(float));
    }
}
VECTOR_DISPATCH(void, bn_silu_bwd_plane,
                (const void *x, bool x_bf16, int64_t at, const float *dy, float *dz, int64_t s, float mean, float k,
                 float b),
                (x, x_bf16, at, dy, dz, s, mean, k, b))

void yolo_cpu_bn_silu_bwd_plane(const void *x, bool x_bf16, int64_t at, const float *dy, float *dz, int64_t s,
                                float mean, float k, float b) {
    bn_silu_bwd_plane(x, x_bf16, at, dy, dz, s, mean, k, b);
}

static void bn_silu_bwd_range(void *arg, int64_t begin, int64_t end) {
    const bn_silu_job *j = arg;
    for (int64_t p = begin; p < end; p++) {
        const int64_t c = p % j->c;
        const float k = j->gamma[c] / sqrtf(j->var[c] + j->eps);
        yolo_cpu_bn_silu_bwd_plane(j->x, j->x_bf16, p * j->s, j->dy + p * j->s, (float *)j->out + p * j->s, j->s,
                                   j->mean[c], k, j->beta[c]);
    }
}

static yolo_status bn_silu_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const bool backward = out->node->op == YOLO_OP_BN_SILU_BWD;
    bn_silu_job j = {0};
    const int64_t planes = planes_of(out->node->src[0], &j.c, &j.s);
    j.x = yolo_cpu_data(out->node->src[0]);
    j.mean = yolo_cpu_f32(out->node->src[1]);
    j.var = yolo_cpu_f32(out->node->src[2]);
    j.gamma = yolo_cpu_f32(out->node->src[3]);
    j.beta = yolo_cpu_f32(out->node->src[4]);
    j.dy = backward ? yolo_cpu_f32(out->node->src[5]) : NULL;
    j.out = yolo_cpu_data(out);
    j.eps = out->node->fparams[0];
    const bool x16 = out->node->src[0]->dtype == YOLO_BF16, out16 = out->dtype == YOLO_BF16;
    if (backward && out16)
        return yolo_error(YOLO_ERR_SHAPE, "BN_SILU_BWD '%s': a gradient is f32, not bf16", out->name);
    j.x_bf16 = x16, j.out_bf16 = out16;
    if (out->node->src[0]->node->block) {
        if (backward) /* graph/blocked.c never blocks BN_SILU_BWD's values */
            return yolo_error(YOLO_ERR_SHAPE, "BN_SILU_BWD '%s': x is channel-blocked, which it does not read", out->name);
        yolo_cpu_bn_silu_blocked(ctx, out->node->src[0], j.mean, j.var, j.gamma, j.beta, j.eps, out);
        return YOLO_OK;
    }
    yolo_range_fn fn = backward ? bn_silu_bwd_range : bn_silu_range;
    yolo_cpu_run_ranges(ctx, planes, planes * j.s, fn, &j);
    return YOLO_OK;
}

/* Scalar maps: `expr` over x[i] (and y[i], f). */
#define DEFINE_MAP(name, expr)                                              \
    static void name##_range(void *arg, int64_t begin, int64_t end) {       \
        const map_job *j = arg;                                             \
        const float *restrict x = j->x;                                     \
        const float *restrict y = j->y;                                     \
        float *restrict o = j->out;                                         \
        const float f = j->f;                                               \
        (void)y;                                                            \
        (void)f;                                                            \
        for (int64_t i = begin; i < end; i++) o[i] = (expr);                \
    }                                                                       \
    static yolo_status name##_kernel(yolo_cpu_context *ctx, yolo_tensor *out) { \
        map_job j = {yolo_cpu_f32(out->node->src[0]),                             \
                     out->node->n_src > 1 ? yolo_cpu_f32(out->node->src[1]) : NULL,     \
                     yolo_cpu_f32(out), out->node->fparams[0]};                   \
        yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), name##_range, &j);     \
        return YOLO_OK;                                                     \
    }

DEFINE_MAP(relu, x[i] > 0.0f ? x[i] : 0.0f)
/* PyTorch's hardswish and hardswish_backward, operation for operation */
DEFINE_MAP(hardswish, x[i] * fminf(fmaxf(x[i] + 3.0f, 0.0f), 6.0f) / 6.0f)
DEFINE_MAP(hardswish_bwd, x[i] < -3.0f ? 0.0f : x[i] <= 3.0f ? y[i] * (x[i] / 3.0f + 0.5f) : y[i])
DEFINE_MAP(relu_bwd, x[i] > 0.0f ? y[i] : 0.0f)
DEFINE_MAP(sigmoid_bwd, y[i] * x[i] * (1.0f - x[i]))
DEFINE_MAP(scale, x[i] * f)

/* ---- broadcasting add / sub / mul ----
 * Source shapes are right-aligned against the output's. Dimensions of size 1
 * in the output are dropped and neighbours with the same broadcast pattern
 * are merged, so equal shapes become one flat loop and a per-channel operand
 * ([1,C,1,1] or [C,1,1] against [N,C,H,W]) an inner loop of H*W with a
 * constant operand. */

typedef struct binary_job {
    int op;
    int nd;
    int64_t dim[YOLO_MAX_DIMS];
    int64_t stride_a[YOLO_MAX_DIMS]; /* in elements; 0 where broadcast */
    int64_t stride_b[YOLO_MAX_DIMS];
    const float *a, *b;
    float *out;
} binary_job;

static void binary_plan(binary_job *j, const yolo_tensor *a, const yolo_tensor *b, const yolo_tensor *out) {
    int64_t dim[YOLO_MAX_DIMS];
    int bc_a[YOLO_MAX_DIMS], bc_b[YOLO_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < out->ndim; i++) {
        int64_t od = out->shape[i];
        if (od == 1) continue;
        int ia = i - (out->ndim - a->ndim), ib = i - (out->ndim - b->ndim);
        int64_t ad = ia >= 0 ? a->shape[ia] : 1, bd = ib >= 0 ? b->shape[ib] : 1;
        int fa = ad != od, fb = bd != od;
        if (nd > 0 && bc_a[nd - 1] == fa && bc_b[nd - 1] == fb) {
            dim[nd - 1] *= od; /* same pattern: merge with the previous dim */
        } else {
            dim[nd] = od;
            bc_a[nd] = fa;
            bc_b[nd] = fb;
            nd++;
        }
    }
    if (nd == 0) { /* a single element */
        dim[0] = 1;
        bc_a[0] = bc_b[0] = 0;
        nd = 1;
    }
    int64_t sa = 1, sb = 1;
    for (int d = nd - 1; d >= 0; d--) {
        j->dim[d] = dim[d];
        j->stride_a[d] = bc_a[d] ? 0 : sa;
        j->stride_b[d] = bc_b[d] ? 0 : sb;
        if (!bc_a[d]) sa *= dim[d];
        if (!bc_b[d]) sb *= dim[d];
    }
    j->nd = nd;
}

/* One contiguous run of the innermost dimension, specialised on whether
 * each operand advances (stride 1) or stays (stride 0). */
#define BINARY_RUN(OPER)                                                              \
    do {                                                                              \
        if (sa && sb)                                                                 \
            for (int64_t k = 0; k < len; k++) o[k] = pa[k] OPER pb[k];                \
        else if (sa) {                                                                \
            const float vb = pb[0];                                                   \
            for (int64_t k = 0; k < len; k++) o[k] = pa[k] OPER vb;                   \
        } else if (sb) {                                                              \
            const float va = pa[0];                                                   \
            for (int64_t k = 0; k < len; k++) o[k] = va OPER pb[k];                   \
        } else {                                                                      \
            const float v = pa[0] OPER pb[0];                                         \
            for (int64_t k = 0; k < len; k++) o[k] = v;                               \
        }                                                                             \
    } while (0)

static void binary_range(void *arg, int64_t begin, int64_t end) {
    const binary_job *j = arg;
    const int nd = j->nd, last = nd - 1;
    int64_t idx[YOLO_MAX_DIMS];
    int64_t rem = begin;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % j->dim[d];
        rem /= j->dim[d];
    }
    const int sa = j->stride_a[last] != 0, sb = j->stride_b[last] != 0;
    int64_t i = begin;
    while (i < end) {
        int64_t off_a = 0, off_b = 0;
        for (int d = 0; d < nd; d++) {
            off_a += idx[d] * j->stride_a[d];
            off_b += idx[d] * j->stride_b[d];
        }
        int64_t len = j->dim[last] - idx[last];
        if (len > end - i) len = end - i;
        const float *restrict pa = j->a + off_a;
        const float *restrict pb = j->b + off_b;
        float *restrict o = j->out + i;
        switch (j->op) {
        case YOLO_OP_ADD: BINARY_RUN(+); break;
        case YOLO_OP_SUB: BINARY_RUN(-); break;
        default: BINARY_RUN(*); break;
        }
        i += len;
        idx[last] += len;
        for (int d = last; d > 0 && idx[d] == j->dim[d]; d--) { /* carry */
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

/* ADD of two same-shape bf16 values (amp's residual add, graph/narrow.c):
 * the f32 sum of the widened operands, rounded to bf16. */
typedef struct add_bf16_job {
    const uint16_t *a, *b;
    uint16_t *out;
} add_bf16_job;

VECTOR_BODY void add_bf16_range_body(void *arg, int64_t begin, int64_t end) {
    const add_bf16_job *j = arg;
    v8f x, y, o;
    int64_t i = begin;
    for (; i + 8 <= end; i += 8) {
        v8_from_bf16(j->a + i, &x);
        v8_from_bf16(j->b + i, &y);
        o = x + y;
        v8_to_bf16(&o, j->out + i);
    }
    if (i < end) { /* the tail, zero-padded */
        uint16_t pa[8] = {0}, pb[8] = {0}, po[8];
        memcpy(pa, j->a + i, (size_t)(end - i) * 2);
        memcpy(pb, j->b + i, (size_t)(end - i) * 2);
        v8_from_bf16(pa, &x);
        v8_from_bf16(pb, &y);
        o = x + y;
        v8_to_bf16(&o, po);
        memcpy(j->out + i, po, (size_t)(end - i) * 2);
    }
}
VECTOR_DISPATCH(void, add_bf16_range, (void *arg, int64_t begin, int64_t end), (arg, begin, end))

static yolo_status binary_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *a = out->node->src[0], *b = out->node->src[1];
    if (out->dtype == YOLO_BF16 || a->dtype == YOLO_BF16 || b->dtype == YOLO_BF16) {
        if (out->node->op != YOLO_OP_ADD || a->dtype != YOLO_BF16 || b->dtype != YOLO_BF16 ||
            out->dtype != YOLO_BF16 || !yolo_tensor_same_shape(a, out) || !yolo_tensor_same_shape(b, out))
            return yolo_error(YOLO_ERR_SHAPE, "%s '%s': bf16 runs only as an ADD of two same-shape bf16 tensors",
                              yolo_op_name(out->node->op), out->name);
        add_bf16_job k = {yolo_cpu_data(a), yolo_cpu_data(b), yolo_cpu_data(out)};
        yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), add_bf16_range, &k);
        return YOLO_OK;
    }
    binary_job j;
    j.op = out->node->op;
    binary_plan(&j, a, b, out);
    j.a = yolo_cpu_f32(a);
    j.b = yolo_cpu_f32(b);
    j.out = yolo_cpu_f32(out);
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), binary_range, &j);
    return YOLO_OK;
}

/* ---- cast ---- */

/* IEEE binary16 conversions, round to nearest even (F. Giesen's method). */
static inline uint16_t half_from_float(float value) {
    uint32_t u;
    memcpy(&u, &value, 4);
    const uint32_t sign = u & 0x80000000u;
    u ^= sign;
    uint16_t h;
    if (u >= (127u + 16u) << 23) { /* overflow to inf, or inf/nan */
        h = u > (255u << 23) ? 0x7e00 : 0x7c00;
    } else if (u < (113u << 23)) { /* subnormal or zero: let the FPU round */
        const uint32_t magic_u = 126u << 23;
        float v, magic;
        memcpy(&v, &u, 4);
        memcpy(&magic, &magic_u, 4);
        v += magic;
        memcpy(&u, &v, 4);
        h = (uint16_t)(u - magic_u);
    } else {
        const uint32_t mant_odd = (u >> 13) & 1;
        u += ((uint32_t)(15 - 127) << 23) + 0xfff + mant_odd;
        h = (uint16_t)(u >> 13);
    }
    return (uint16_t)(h | (sign >> 16));
}

static inline float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        const float v = (float)mant * (1.0f / 16777216.0f); /* mant * 2^-24 */
        return sign ? -v : v;
    } else {
        u = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Integer targets round to nearest even and saturate; NaN becomes 0. */
static inline uint8_t u8_from_double(double v) {
    if (!(v > 0.0)) return 0;
    if (v >= 255.0) return 255;
    return (uint8_t)nearbyint(v);
}

static inline int32_t i32_from_double(double v) {
    if (v != v) return 0;
    if (v <= -2147483648.0) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    return (int32_t)nearbyint(v);
}

typedef struct cast_job {
    const void *src;
    void *dst;
    yolo_dtype from, to;
    double factor;
} cast_job;

static inline double load_as_double(const void *p, yolo_dtype dt, int64_t i) {
    switch (dt) {
    case YOLO_F32: return ((const float *)p)[i];
    case YOLO_F16: return half_to_float(((const uint16_t *)p)[i]);
    case YOLO_BF16: return yolo_bf16_to_f32(((const uint16_t *)p)[i]);
    case YOLO_I32: return ((const int32_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

/* The product of two floats is exact in double, so rounding once to the
 * target type gives the correctly rounded x*factor for every pair. */
static void cast_range(void *arg, int64_t begin, int64_t end) {
    const cast_job *j = arg;
    const double f = j->factor;
    if (j->from == YOLO_U8 && j->to == YOLO_F32) { /* image input: the hot path */
        const uint8_t *restrict s = j->src;
        float *restrict d = j->dst;
        const float ff = (float)f;
        for (int64_t i = begin; i < end; i++) d[i] = (float)s[i] * ff;
        return;
    }
    switch (j->to) {
    case YOLO_F32: {
        float *restrict d = j->dst;
        for (int64_t i = begin; i < end; i++) d[i] = (float)(load_as_double(j->src, j->from, i) * f);
        break;
    }
    case YOLO_F16: {
        uint16_t *restrict d = j->dst;
        /* Rounds to f32, then to f16: the double rounding can only differ
         * from a single rounding on exact f16 ties, and never when f == 1. */
        for (int64_t i = begin; i < end; i++) d[i] = half_from_float((float)(load_as_double(j->src, j->from, i) * f));
        break;
    }
    case YOLO_BF16: {
        uint16_t *restrict d = j->dst;
        /* Rounds to f32, then to bf16 (as YOLO_F16 above) */
        for (int64_t i = begin; i < end; i++) d[i] = yolo_f32_to_bf16((float)(load_as_double(j->src, j->from, i) * f));
        break;
    }
    case YOLO_I32: {
        int32_t *restrict d = j->dst;
        for (int64_t i = begin; i < end; i++) d[i] = i32_from_double(load_as_double(j->src, j->from, i) * f);
        break;
    }
    default: {
        uint8_t *restrict d = j->dst;
        for (int64_t i = begin; i < end; i++) d[i] = u8_from_double(load_as_double(j->src, j->from, i) * f);
        break;
    }
    }
}

static yolo_status cast_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    if (x->dtype >= YOLO_DTYPE_COUNT || out->dtype >= YOLO_DTYPE_COUNT)
        return yolo_error(YOLO_ERR_ARG, "CAST: unknown dtype (%d -> %d)", (int)x->dtype, (int)out->dtype);
    cast_job j = {yolo_cpu_data(x), yolo_cpu_data(out), x->dtype, out->dtype, (double)out->node->fparams[0]};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), cast_range, &j);
    return YOLO_OK;
}

/* ---- fill ---- */

typedef struct fill_job {
    void *dst;
    yolo_dtype dtype;
    float value;
} fill_job;

static void fill_range(void *arg, int64_t begin, int64_t end) {
    const fill_job *j = arg;
    switch (j->dtype) {
    case YOLO_F32: {
        float *d = j->dst;
        for (int64_t i = begin; i < end; i++) d[i] = j->value;
        break;
    }
    case YOLO_F16: {
        uint16_t *d = j->dst;
        const uint16_t h = half_from_float(j->value);
        for (int64_t i = begin; i < end; i++) d[i] = h;
        break;
    }
    case YOLO_BF16: {
        uint16_t *d = j->dst;
        const uint16_t h = yolo_f32_to_bf16(j->value);
        for (int64_t i = begin; i < end; i++) d[i] = h;
        break;
    }
    case YOLO_I32: {
        int32_t *d = j->dst;
        const int32_t v = i32_from_double(j->value);
        for (int64_t i = begin; i < end; i++) d[i] = v;
        break;
    }
    default: {
        uint8_t *d = j->dst;
        memset(d + begin, u8_from_double(j->value), (size_t)(end - begin));
        break;
    }
    }
}

static yolo_status fill_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    fill_job j = {yolo_cpu_data(out), out->dtype, out->node->fparams[0]};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), fill_range, &j);
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_elementwise_kernel(int op) {
    switch (op) {
    case YOLO_OP_SILU: return silu_kernel;
    case YOLO_OP_SILU_BWD: return silu_bwd_kernel;
    case YOLO_OP_BN_SILU:
    case YOLO_OP_BN_SILU_BWD: return bn_silu_kernel;
    case YOLO_OP_RELU: return relu_kernel;
    case YOLO_OP_RELU_BWD: return relu_bwd_kernel;
    case YOLO_OP_SIGMOID: return sigmoid_kernel;
    case YOLO_OP_SIGMOID_BWD: return sigmoid_bwd_kernel;
    case YOLO_OP_HARDSWISH: return hardswish_kernel;
    case YOLO_OP_HARDSWISH_BWD: return hardswish_bwd_kernel;
    case YOLO_OP_ADD:
    case YOLO_OP_SUB:
    case YOLO_OP_MUL: return binary_kernel;
    case YOLO_OP_SCALE:
    case YOLO_OP_DETACH: return scale_kernel;
    case YOLO_OP_CAST: return cast_kernel;
    case YOLO_OP_FILL: return fill_kernel;
    default: return NULL;
    }
}
