/* CPU kernels of the spatial ops: nearest upsampling and max pooling, with
 * their backward (contracts in graph/ops.h). Work is split over (n, c)
 * planes or rows; every output element is written by one thread in a fixed
 * order, so results do not depend on the thread count. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"
#include "util/vec.h"

#define PARALLEL_MIN_ELEMENTS 32768

static void run_ranges(yolo_cpu_context *ctx, int64_t n, int64_t work, yolo_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (!ctx || !ctx->pool || work < PARALLEL_MIN_ELEMENTS)
        fn(arg, 0, n);
    else
        yolo_parallel_for(ctx->pool, n, fn, arg);
}

/* ---- UPSAMPLE_NEAREST and its backward ---- */

typedef struct upsample_job {
    const void *src; /* forward: f32, or bf16 (amp's activations); backward: f32 */
    void *dst;
    int64_t h, w; /* the small (input of forward) size */
    int64_t f;
    size_t elem;  /* blocked forward: bytes of an element (a position's channel block) */
    int block;    /* blocked: channels per block, 8 or 16 */
} upsample_job;

/* Forward, per input row r = (plane, h): one widened row written f times.
 * A copy, so it is written once per element type. */
#define DEFINE_UPSAMPLE(name, T)                                                       \
    static void name(void *arg, int64_t begin, int64_t end) {                          \
        const upsample_job *j = arg;                                                   \
        const int64_t w = j->w, f = j->f, wo = w * f;                                  \
        for (int64_t r = begin; r < end; r++) {                                        \
            const T *restrict x = (const T *)j->src + r * w;                           \
            T *restrict y = (T *)j->dst + r * f * wo; /* output rows r*f .. r*f+f-1 */ \
            for (int64_t i = 0; i < w; i++)                                            \
                for (int64_t k = 0; k < f; k++) y[i * f + k] = x[i];                   \
            for (int64_t k = 1; k < f; k++) memcpy(y + k * wo, y, (size_t)wo * sizeof(T)); \
        }                                                                              \
    }
DEFINE_UPSAMPLE(upsample_range, float)
DEFINE_UPSAMPLE(upsample_bf16_range, uint16_t)

/* Backward, per output row r: each element sums its f*f block (rows outer). */
static void upsample_bwd_range(void *arg, int64_t begin, int64_t end) {
    const upsample_job *j = arg;
    const int64_t w = j->w, f = j->f, wo = w * f;
    for (int64_t r = begin; r < end; r++) {
        const float *dy = (const float *)j->src + r * f * wo;
        float *restrict dx = (float *)j->dst + r * w;
        for (int64_t i = 0; i < w; i++) {
            float acc = 0.0f;
            for (int64_t a = 0; a < f; a++)
                for (int64_t b = 0; b < f; b++) acc += dy[a * wo + i * f + b];
            dx[i] = acc;
        }
    }
}

/* Channel-blocked values (graph/blocked.c): an element is a position's B
 * channels, [N][C/B][H][W][B] with B = 8 or 16, so rows are (n, channel
 * block, h) and the copies move B values at a time; the backward adds each
 * lane's f*f terms in the plain kernel's order (same bits), 8 lanes to a
 * vector. */

static void upsample_blocked_range(void *arg, int64_t begin, int64_t end) {
    const upsample_job *j = arg;
    const int64_t w = j->w, f = j->f, wo = w * f;
    const size_t eb = j->elem;
    for (int64_t r = begin; r < end; r++) {
        const char *x = (const char *)j->src + (size_t)(r * w) * eb;
        char *y = (char *)j->dst + (size_t)(r * f * wo) * eb;
        for (int64_t i = 0; i < w; i++)
            for (int64_t k = 0; k < f; k++) memcpy(y + (size_t)(i * f + k) * eb, x + (size_t)i * eb, eb);
        for (int64_t k = 1; k < f; k++) memcpy(y + (size_t)(k * wo) * eb, y, (size_t)wo * eb);
    }
}

VECTOR_BODY void upsample_bwd_blocked_range_body(void *arg, int64_t begin, int64_t end) {
    const upsample_job *j = arg;
    const int64_t w = j->w, f = j->f, wo = w * f;
    const int lanes = j->block;
    for (int64_t r = begin; r < end; r++) {
        const float *dy = (const float *)j->src + r * f * wo * lanes;
        float *dx = (float *)j->dst + r * w * lanes;
        for (int64_t i = 0; i < w; i++)
            for (int h = 0; h < lanes; h += 8) {
                v8f acc = {0}, d;
                for (int64_t a = 0; a < f; a++)
                    for (int64_t b = 0; b < f; b++) {
                        memcpy(&d, dy + (a * wo + i * f + b) * lanes + h, sizeof d);
                        acc += d;
                    }
                memcpy(dx + i * lanes + h, &acc, sizeof acc);
            }
    }
}
VECTOR_DISPATCH(void, upsample_bwd_blocked_range, (void *arg, int64_t begin, int64_t end), (arg, begin, end))

static yolo_status upsample_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const int backward = out->node->op == YOLO_OP_UPSAMPLE_NEAREST_BWD;
    const yolo_tensor *small = backward ? out : out->node->src[0];
    const int64_t f = out->node->iparams[0];
    if (f < 1)
        return yolo_error(YOLO_ERR_ARG, "%s: factor %lld must be >= 1", yolo_op_name(out->node->op), (long long)f);
    if (out->dtype != out->node->src[0]->dtype || (backward && out->dtype != YOLO_F32) ||
        (out->dtype != YOLO_F32 && out->dtype != YOLO_BF16))
        return yolo_error(YOLO_ERR_SHAPE, "%s '%s': %s -> %s is not supported (f32, or bf16 forward)",
                          yolo_op_name(out->node->op), out->name, yolo_dtype_name(out->node->src[0]->dtype),
                          yolo_dtype_name(out->dtype));
    const int block = out->node->block;
    upsample_job j = {yolo_cpu_data(out->node->src[0]), yolo_cpu_data(out), small->shape[2], small->shape[3], f,
                      (size_t)block * yolo_dtype_size(out->dtype), block};
    if (block) {
        const int64_t rows = small->shape[0] * small->shape[1] / block * j.h;
        run_ranges(ctx, rows, rows * j.w * f * f * block, backward ? upsample_bwd_blocked_range : upsample_blocked_range,
                   &j);
        return YOLO_OK;
    }
    const int64_t rows = small->shape[0] * small->shape[1] * j.h;
    yolo_range_fn fn = backward ? upsample_bwd_range : out->dtype == YOLO_BF16 ? upsample_bf16_range : upsample_range;
    run_ranges(ctx, rows, rows * j.w * f * f, fn, &j);
    return YOLO_OK;
}

/* ---- MAXPOOL2D ---- */

typedef struct pool_job {
    const float *x, *dy;
    float *out;
    int64_t h, w, ho, wo;
    int k, s, p;
} pool_job;

/* Rows up to this width use the separable path (a stack row buffer). */
#define POOL_ROW_MAX 4096

/* Valid window [lo, hi) along one axis for output index o. */
static inline void window(int64_t o, int k, int s, int p, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t a = o * s - p, b = a + k;
    *lo = a < 0 ? 0 : a;
    *hi = b > size ? size : b;
}

/* Forward, per output row r = (plane, oh). max is exact, so taking it over
 * the window's rows first and then along the row equals the direct k*k max
 * at 2k instead of k*k comparisons. */
static void maxpool_range(void *arg, int64_t begin, int64_t end) {
    const pool_job *j = arg;
    float rowmax[POOL_ROW_MAX];
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->ho, oh = r % j->ho;
        const float *x = j->x + plane * j->h * j->w;
        float *restrict y = j->out + r * j->wo;
        int64_t h0, h1;
        window(oh, j->k, j->s, j->p, j->h, &h0, &h1);
        if (h1 <= h0) { /* the window holds only padding */
            for (int64_t ow = 0; ow < j->wo; ow++) y[ow] = -INFINITY;
            continue;
        }
        if (j->w <= POOL_ROW_MAX) {
            memcpy(rowmax, x + h0 * j->w, (size_t)j->w * sizeof(float));
            for (int64_t hh = h0 + 1; hh < h1; hh++) {
                const float *restrict row = x + hh * j->w;
                for (int64_t i = 0; i < j->w; i++) rowmax[i] = row[i] > rowmax[i] ? row[i] : rowmax[i];
            }
            for (int64_t ow = 0; ow < j->wo; ow++) {
                int64_t w0, w1;
                window(ow, j->k, j->s, j->p, j->w, &w0, &w1);
                float m = -INFINITY;
                for (int64_t i = w0; i < w1; i++) m = rowmax[i] > m ? rowmax[i] : m;
                y[ow] = m;
            }
        } else {
            for (int64_t ow = 0; ow < j->wo; ow++) {
                int64_t w0, w1;
                window(ow, j->k, j->s, j->p, j->w, &w0, &w1);
                float m = -INFINITY;
                for (int64_t hh = h0; hh < h1; hh++)
                    for (int64_t i = w0; i < w1; i++) m = x[hh * j->w + i] > m ? x[hh * j->w + i] : m;
                y[ow] = m;
            }
        }
    }
}

/* Backward, per (n, c) plane: each window's gradient goes to its first
 * maximum in row-major order (strict > keeps the lowest index on ties);
 * overlapping windows accumulate in output order.
 *
 * Separable form (planes up to POOL_BWD_ROWS_MAX input rows x output
 * columns): per input row and output column, the row window's first maximum
 * ignoring NaN (start -inf, strict >); then per output, starting from the
 * window's first element, the first row whose maximum is strictly greater
 * wins. That is the direct scan's answer: when the first element is NaN
 * nothing is greater than it; otherwise NaN never wins a strict >, and the
 * row-major first maximum is the first row holding the maximum, at that
 * row's first occurrence. 2k instead of k*k comparisons. */
#define POOL_BWD_ROWS_MAX (1 << 20)

static void maxpool_bwd_separable(const pool_job *j, const float *x, const float *dy, float *dx, float *rv,
                                  int32_t *ri) {
    for (int64_t hh = 0; hh < j->h; hh++) {
        const float *xr = x + hh * j->w;
        for (int64_t ow = 0; ow < j->wo; ow++) {
            int64_t w0, w1;
            window(ow, j->k, j->s, j->p, j->w, &w0, &w1);
            float m = -INFINITY;
            int32_t at = -1;
            for (int64_t i = w0; i < w1; i++)
                if (xr[i] > m) {
                    m = xr[i];
                    at = (int32_t)i;
                }
            rv[hh * j->wo + ow] = m;
            ri[hh * j->wo + ow] = at;
        }
    }
    for (int64_t oh = 0; oh < j->ho; oh++) {
        int64_t h0, h1;
        window(oh, j->k, j->s, j->p, j->h, &h0, &h1);
        for (int64_t ow = 0; ow < j->wo; ow++) {
            int64_t w0, w1;
            window(ow, j->k, j->s, j->p, j->w, &w0, &w1);
            if (h1 <= h0 || w1 <= w0) continue;
            int64_t best = h0 * j->w + w0;
            float bv = x[best];
            if (!isnan(bv))
                for (int64_t hh = h0; hh < h1; hh++) {
                    const int64_t r = hh * j->wo + ow;
                    if (ri[r] >= 0 && rv[r] > bv) {
                        bv = rv[r];
                        best = hh * j->w + ri[r];
                    }
                }
            dx[best] += dy[oh * j->wo + ow];
        }
    }
}

static void maxpool_bwd_range(void *arg, int64_t begin, int64_t end) {
    const pool_job *j = arg;
    const int64_t hw = j->h * j->w, rows = j->h * j->wo;
    float *rv = NULL;
    int32_t *ri = NULL;
    if (rows <= POOL_BWD_ROWS_MAX && j->w <= INT32_MAX) {
        rv = malloc((size_t)rows * sizeof *rv);
        ri = malloc((size_t)rows * sizeof *ri);
        if (!rv || !ri) { /* out of memory: the direct scan needs none */
            free(rv);
            free(ri);
            rv = NULL;
            ri = NULL;
        }
    }
    for (int64_t plane = begin; plane < end; plane++) {
        const float *x = j->x + plane * hw;
        const float *dy = j->dy + plane * j->ho * j->wo;
        float *dx = j->out + plane * hw;
        memset(dx, 0, (size_t)hw * sizeof(float));
        if (rv) {
            maxpool_bwd_separable(j, x, dy, dx, rv, ri);
            continue;
        }
        for (int64_t oh = 0; oh < j->ho; oh++) {
            int64_t h0, h1;
            window(oh, j->k, j->s, j->p, j->h, &h0, &h1);
            for (int64_t ow = 0; ow < j->wo; ow++) {
                int64_t w0, w1;
                window(ow, j->k, j->s, j->p, j->w, &w0, &w1);
                if (h1 <= h0 || w1 <= w0) continue;
                int64_t best = h0 * j->w + w0;
                for (int64_t hh = h0; hh < h1; hh++)
                    for (int64_t i = w0; i < w1; i++)
                        if (x[hh * j->w + i] > x[best]) best = hh * j->w + i;
                dx[best] += dy[oh * j->wo + ow];
            }
        }
    }
    free(rv);
    free(ri);
}

static yolo_status maxpool_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const int backward = out->node->op == YOLO_OP_MAXPOOL2D_BWD;
    const yolo_tensor *x = out->node->src[0];
    const yolo_tensor *y = backward ? out->node->src[1] : out; /* a tensor of the pooled shape */
    pool_job j = {0};
    j.x = yolo_cpu_f32(x);
    j.dy = backward ? yolo_cpu_f32(out->node->src[1]) : NULL;
    j.out = yolo_cpu_f32(out);
    j.h = x->shape[2];
    j.w = x->shape[3];
    j.ho = y->shape[2];
    j.wo = y->shape[3];
    j.k = out->node->iparams[0];
    j.s = out->node->iparams[1];
    j.p = out->node->iparams[2];
    if (j.k < 1 || j.s < 1 || j.p < 0)
        return yolo_error(YOLO_ERR_ARG, "%s: kernel %d, stride %d, pad %d are invalid", yolo_op_name(out->node->op), j.k,
                          j.s, j.p);
    const int64_t planes = x->shape[0] * x->shape[1];
    const int64_t work = planes * j.ho * j.wo * j.k * (backward ? j.k : 2);
    if (backward)
        run_ranges(ctx, planes, work, maxpool_bwd_range, &j);
    else
        run_ranges(ctx, planes * j.ho, work, maxpool_range, &j);
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_spatial_kernel(int op) {
    switch (op) {
    case YOLO_OP_UPSAMPLE_NEAREST:
    case YOLO_OP_UPSAMPLE_NEAREST_BWD: return upsample_kernel;
    case YOLO_OP_MAXPOOL2D:
    case YOLO_OP_MAXPOOL2D_BWD: return maxpool_kernel;
    default: return NULL;
    }
}
