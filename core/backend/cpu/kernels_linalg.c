/* CPU kernels of matmul (OpenBLAS sgemm; under amp, bf16 through oneDNN:
 * matmul_onednn.c), softmax / log-softmax with their backward, and the
 * full reductions sum / sum_squares (graph/ops.h).
 *
 * Softmax works on (outer, axis, inner) views: a task owns one outer row and
 * a block of inner positions, reducing along the axis for the whole block at
 * once so the inner loops stay contiguous for any axis. Full reductions sum
 * fixed-size blocks in double and combine the block sums in order, so the
 * result is the same for any thread count. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/matmul_onednn.h"
#include "util/vec.h"

/* ---- MATMUL: op(a) [M,K] x op(b) [K,N] -> [M,N], or one per batch index of 3-D operands ---- */

typedef struct matmul_job {
    const float *a, *b;
    float *c;
    int ta, tb;
    int64_t m, n, k, a_size, b_size, lda, ldb; /* a_size, b_size: elements per batch */
} matmul_job;

static void matmul_range(void *arg, int64_t begin, int64_t end) {
    const matmul_job *j = arg;
    for (int64_t i = begin; i < end; i++)
        cblas_sgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans, (int)j->m,
                    (int)j->n, (int)j->k, 1.0f, j->a + i * j->a_size, (int)j->lda, j->b + i * j->b_size, (int)j->ldb,
                    0.0f, j->c + i * j->m * j->n, (int)j->n);
}

static yolo_status matmul_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *a = out->node->src[0], *b = out->node->src[1];
    const int ta = out->node->iparams[0] != 0, tb = out->node->iparams[1] != 0;
    const int r = out->ndim - 2; /* 1 when batched */
    const int64_t batches = r ? out->shape[0] : 1;
    const int64_t a_rows = a->shape[r], a_cols = a->shape[r + 1], b_rows = b->shape[r], b_cols = b->shape[r + 1];
    const int64_t m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols, n = tb ? b_rows : b_cols;
    if (a->ndim != out->ndim || b->ndim != out->ndim || (r && (a->shape[0] != batches || b->shape[0] != batches)) ||
        m != out->shape[r] || n != out->shape[r + 1] || (tb ? b_cols : b_rows) != k)
        return yolo_error(YOLO_ERR_SHAPE,
                          "MATMUL: a [%lld,%lld]%s x b [%lld,%lld]%s (%lld batches) does not give out [%lld,%lld]",
                          (long long)a_rows, (long long)a_cols, ta ? "^T" : "", (long long)b_rows, (long long)b_cols,
                          tb ? "^T" : "", (long long)batches, (long long)out->shape[r], (long long)out->shape[r + 1]);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || a_cols > INT_MAX || b_cols > INT_MAX)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "MATMUL: dimensions [%lld,%lld,%lld] exceed the BLAS int range",
                          (long long)m, (long long)k, (long long)n);
    float *c = yolo_cpu_f32(out);
    if (m == 0 || n == 0 || batches == 0) return YOLO_OK;
    if (k == 0) { /* empty sum */
        memset(c, 0, (size_t)(batches * m * n) * sizeof(float));
        return YOLO_OK;
    }
    if (ctx && ctx->bf16) { /* amp on a CPU with bf16 hardware */
        const yolo_cpu_matmul mm = {yolo_cpu_f32(a), yolo_cpu_f32(b), c, ta, tb, batches, m, n, k, a_rows * a_cols,
                                    b_rows * b_cols};
        return yolo_matmul_onednn_bf16(ctx, &mm);
    }
    matmul_job j = {yolo_cpu_f32(a), yolo_cpu_f32(b), c, ta, tb, m, n, k, a_rows * a_cols, b_rows * b_cols, a_cols,
                    b_cols};
    if (batches > 1 && ctx && ctx->pool) {
        /* attention's many small products: one per pool thread, each single-threaded in OpenBLAS
         * (its own threads would synchronise for every tiny product) */
        if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
        yolo_parallel_for(ctx->pool, batches, matmul_range, &j);
        return YOLO_OK;
    }
    /* OpenBLAS runs its own threads: as many as the pool, never more (threads=). */
    if (ctx && ctx->threads > 0 && openblas_get_num_threads() != ctx->threads) openblas_set_num_threads(ctx->threads);
    const bool warm = ctx && yolo_thread_pool_warm(ctx->pool);
    if (warm) yolo_thread_pool_set_warm(ctx->pool, false); /* our workers must not spin on its cores */
    matmul_range(&j, 0, batches);
    if (warm) yolo_thread_pool_set_warm(ctx->pool, true);
    return YOLO_OK;
}

/* ---- SOFTMAX, LOG_SOFTMAX and their backward ---- */

#define SOFTMAX_BLOCK 64 /* inner positions handled together */

typedef struct softmax_job {
    int op;
    int64_t outer, len, inner, blocks;
    const float *x;  /* forward: x; backward: y */
    const float *dy; /* backward only */
    float *out;
} softmax_job;

static void softmax_range(void *arg, int64_t begin, int64_t end) {
    const softmax_job *j = arg;
    const int64_t len = j->len, inner = j->inner;
    float m[SOFTMAX_BLOCK];
    double s[SOFTMAX_BLOCK];
    for (int64_t t = begin; t < end; t++) {
        const int64_t o = t / j->blocks;
        const int64_t i0 = (t % j->blocks) * SOFTMAX_BLOCK;
        const int64_t nb = inner - i0 < SOFTMAX_BLOCK ? inner - i0 : SOFTMAX_BLOCK;
        const int64_t base = o * len * inner + i0;
        const float *x = j->x + base;
        const float *dy = j->dy ? j->dy + base : NULL;
        float *y = j->out + base;
        for (int64_t i = 0; i < nb; i++) s[i] = 0.0;
        switch (j->op) {
        case YOLO_OP_SOFTMAX:
        case YOLO_OP_LOG_SOFTMAX:
            for (int64_t i = 0; i < nb; i++) m[i] = -INFINITY;
            for (int64_t l = 0; l < len; l++)
                for (int64_t i = 0; i < nb; i++) m[i] = x[l * inner + i] > m[i] ? x[l * inner + i] : m[i];
            if (j->op == YOLO_OP_SOFTMAX) {
                for (int64_t l = 0; l < len; l++)
                    for (int64_t i = 0; i < nb; i++) {
                        const float e = expf(x[l * inner + i] - m[i]);
                        y[l * inner + i] = e;
                        s[i] += e;
                    }
                for (int64_t i = 0; i < nb; i++) s[i] = 1.0 / s[i];
                for (int64_t l = 0; l < len; l++)
                    for (int64_t i = 0; i < nb; i++) y[l * inner + i] = (float)(y[l * inner + i] * s[i]);
            } else {
                for (int64_t l = 0; l < len; l++)
                    for (int64_t i = 0; i < nb; i++) s[i] += expf(x[l * inner + i] - m[i]);
                for (int64_t i = 0; i < nb; i++) m[i] += (float)log(s[i]); /* log-sum-exp */
                for (int64_t l = 0; l < len; l++)
                    for (int64_t i = 0; i < nb; i++) y[l * inner + i] = x[l * inner + i] - m[i];
            }
            break;
        case YOLO_OP_SOFTMAX_BWD: /* y*(dy - sum(dy*y)) */
            for (int64_t l = 0; l < len; l++)
                for (int64_t i = 0; i < nb; i++) s[i] += (double)dy[l * inner + i] * x[l * inner + i];
            for (int64_t l = 0; l < len; l++)
                for (int64_t i = 0; i < nb; i++)
                    y[l * inner + i] = x[l * inner + i] * (dy[l * inner + i] - (float)s[i]);
            break;
        default: /* LOG_SOFTMAX_BWD: dy - exp(y)*sum(dy) */
            for (int64_t l = 0; l < len; l++)
                for (int64_t i = 0; i < nb; i++) s[i] += dy[l * inner + i];
            for (int64_t l = 0; l < len; l++)
                for (int64_t i = 0; i < nb; i++)
                    y[l * inner + i] = dy[l * inner + i] - expf(x[l * inner + i]) * (float)s[i];
            break;
        }
    }
}

/* SOFTMAX and SOFTMAX_BWD along the last axis (inner 1: attention's rows
 * over the keys), 8 positions at a time with util/vec.h's exp: the
 * blocked loop above runs such rows one scalar expf at a time. Each row is
 * one thread's, and a row's sums run in a fixed lane order, so results do
 * not depend on the thread count. */
static inline __attribute__((always_inline)) double v8_sum(const v8f *v) {
    double s = 0.0;
    for (int k = 0; k < 8; k++) s += (*v)[k];
    return s;
}

VECTOR_BODY void softmax_rows_range_body(void *arg, int64_t begin, int64_t end) {
    const softmax_job *j = arg;
    const int64_t len = j->len, full = len & ~(int64_t)7;
    const size_t tail = (size_t)(len - full) * sizeof(float);
    for (int64_t t = begin; t < end; t++) {
        const float *x = j->x + t * len;
        float *y = j->out + t * len;
        v8f a, b, acc = V8(0.0f);
        if (j->op == YOLO_OP_SOFTMAX_BWD) { /* y*(dy - sum(dy*y)), x holding y */
            const float *dy = j->dy + t * len;
            for (int64_t l = 0; l < len; l += 8) {
                a = b = V8(0.0f);
                memcpy(&a, x + l, l < full ? sizeof a : tail);
                memcpy(&b, dy + l, l < full ? sizeof b : tail);
                acc += a * b;
            }
            const v8f dot = V8((float)v8_sum(&acc));
            for (int64_t l = 0; l < len; l += 8) {
                memcpy(&a, x + l, l < full ? sizeof a : tail);
                memcpy(&b, dy + l, l < full ? sizeof b : tail);
                const v8f o = a * (b - dot);
                memcpy(y + l, &o, l < full ? sizeof o : tail);
            }
            continue;
        }
        v8f vm = V8(-INFINITY);
        for (int64_t l = 0; l < len; l += 8) {
            a = V8(-INFINITY);
            memcpy(&a, x + l, l < full ? sizeof a : tail);
            vm = V8_SELECT((v8i)(a > vm), a, vm);
        }
        float m = vm[0];
        for (int k = 1; k < 8; k++) m = vm[k] > m ? vm[k] : m;
        const v8f vmax = V8(m);
        for (int64_t l = 0; l < len; l += 8) {
            a = V8(m);
            memcpy(&a, x + l, l < full ? sizeof a : tail);
            const v8f d = a - vmax;
            v8_exp(&d, &b);
            if (l >= full) /* lanes past the row hold e^0: leave them out of the sum */
                for (int k = (int)(len - full); k < 8; k++) b[k] = 0.0f;
            acc += b;
            memcpy(y + l, &b, l < full ? sizeof b : tail);
        }
        const v8f inv = V8((float)(1.0 / v8_sum(&acc)));
        for (int64_t l = 0; l < len; l += 8) {
            memcpy(&a, y + l, l < full ? sizeof a : tail);
            a *= inv;
            memcpy(y + l, &a, l < full ? sizeof a : tail);
        }
    }
}
VECTOR_DISPATCH(void, softmax_rows_range, (void *arg, int64_t begin, int64_t end), (arg, begin, end))

static yolo_status softmax_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    int axis = out->node->iparams[0];
    if (axis < 0) axis += out->ndim;
    if (axis < 0 || axis >= out->ndim)
        return yolo_error(YOLO_ERR_ARG, "%s: axis %d out of range for a %d-d tensor", yolo_op_name(out->node->op),
                          out->node->iparams[0], out->ndim);
    softmax_job j = {out->node->op, 1, out->shape[axis], 1, 0, yolo_cpu_f32(out->node->src[0]), NULL, yolo_cpu_f32(out)};
    for (int i = 0; i < axis; i++) j.outer *= out->shape[i];
    for (int i = axis + 1; i < out->ndim; i++) j.inner *= out->shape[i];
    if (out->node->op == YOLO_OP_SOFTMAX_BWD || out->node->op == YOLO_OP_LOG_SOFTMAX_BWD) j.dy = yolo_cpu_f32(out->node->src[1]);
    j.blocks = (j.inner + SOFTMAX_BLOCK - 1) / SOFTMAX_BLOCK;
    if (j.len == 0) return YOLO_OK;
    if (j.inner == 1 && (j.op == YOLO_OP_SOFTMAX || j.op == YOLO_OP_SOFTMAX_BWD)) {
        yolo_cpu_run_ranges(ctx, j.outer, yolo_tensor_numel(out) * 4, softmax_rows_range, &j);
        return YOLO_OK;
    }
    yolo_cpu_run_ranges(ctx, j.outer * j.blocks, yolo_tensor_numel(out) * 4, softmax_range, &j);
    return YOLO_OK;
}

/* ---- SUM, SUM_SQUARES: all elements -> [1] ---- */

#define REDUCE_BLOCK 8192 /* elements per partial sum; fixed, unlike the thread count */

typedef struct reduce_job {
    const float *x;
    int64_t n;
    int squares;
    double *partial;
} reduce_job;

static void reduce_range(void *arg, int64_t begin, int64_t end) {
    const reduce_job *j = arg;
    for (int64_t b = begin; b < end; b++) {
        const int64_t i0 = b * REDUCE_BLOCK;
        const int64_t i1 = i0 + REDUCE_BLOCK < j->n ? i0 + REDUCE_BLOCK : j->n;
        const float *x = j->x;
        double a[4] = {0, 0, 0, 0};
        int64_t i = i0;
        if (j->squares) {
            for (; i + 3 < i1; i += 4)
                for (int k = 0; k < 4; k++) a[k] += (double)x[i + k] * x[i + k];
            for (; i < i1; i++) a[0] += (double)x[i] * x[i];
        } else {
            for (; i + 3 < i1; i += 4)
                for (int k = 0; k < 4; k++) a[k] += x[i + k];
            for (; i < i1; i++) a[0] += x[i];
        }
        j->partial[b] = (a[0] + a[1]) + (a[2] + a[3]);
    }
}

static yolo_status reduce_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    reduce_job j = {yolo_cpu_f32(x), yolo_tensor_numel(x), out->node->op == YOLO_OP_SUM_SQUARES, NULL};
    const int64_t blocks = (j.n + REDUCE_BLOCK - 1) / REDUCE_BLOCK;
    double stack_partial[256];
    j.partial = stack_partial;
    if (blocks > 256) {
        j.partial = malloc((size_t)blocks * sizeof(double));
        if (!j.partial)
            return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for %lld partial sums of %lld elements",
                              yolo_op_name(out->node->op), (long long)blocks, (long long)j.n);
    }
    yolo_cpu_run_ranges(ctx, blocks, j.n, reduce_range, &j);
    double total = 0;
    for (int64_t b = 0; b < blocks; b++) total += j.partial[b];
    yolo_cpu_f32(out)[0] = (float)total;
    if (j.partial != stack_partial) free(j.partial);
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_linalg_kernel(int op) {
    switch (op) {
    case YOLO_OP_MATMUL: return matmul_kernel;
    case YOLO_OP_SOFTMAX:
    case YOLO_OP_SOFTMAX_BWD:
    case YOLO_OP_LOG_SOFTMAX:
    case YOLO_OP_LOG_SOFTMAX_BWD: return softmax_kernel;
    case YOLO_OP_SUM:
    case YOLO_OP_SUM_SQUARES: return reduce_kernel;
    default: return NULL;
    }
}
