/* Convolution as im2col + OpenBLAS sgemm, per group, over chunks of images.
 *
 * A chunk of nb images is unfolded into col[K][nb*P] (K = C/g*kh*kw,
 * P = Ho*Wo) so that small feature maps still give one GEMM wide enough for
 * OpenBLAS to run near its peak; with nb == 1 the GEMM reads and writes the
 * tensors in place (and 1x1/stride 1/pad 0 needs no unfolding at all).
 * Unfold/fold and the gathers run on our pool; sgemm runs on OpenBLAS's
 * threads (set to ctx->threads) while our pool idles. Caveat: OpenBLAS's
 * idle workers spin ~0.1 s after each GEMM (OPENBLAS_THREAD_TIMEOUT, read
 * when OpenBLAS loads), competing with our pool's unfold work; that is part
 * of why this path lost to oneDNN (kernels_conv.c). Every sum is taken in a
 * fixed order: results are bit-identical run to run for a given thread
 * count. */
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/conv_common.h"

/* Columns per GEMM we aim for: below ~2k columns OpenBLAS loses efficiency
 * (measured on bench_conv), above it the gathers only cost bandwidth. */
#define IM2COL_TARGET_COLS 2048
/* Upper bound of the unfolded buffer (floats) before chunks shrink. */
#define IM2COL_MAX_COL_FLOATS ((int64_t)16 << 20)

static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static float *ws_col, *ws_tmp;
static size_t ws_col_cap, ws_tmp_cap;

static yolo_status ws_reserve(float **buf, size_t *cap, size_t floats) {
    if (floats <= *cap) return YOLO_OK;
    free(*buf);
    *buf = NULL;
    *cap = 0;
    size_t bytes = (floats * sizeof(float) + 63) & ~(size_t)63;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0) return YOLO_ERR_NOMEM;
    *buf = p;
    *cap = floats;
    return YOLO_OK;
}

void yolo_conv_im2col_release(void) {
    pthread_mutex_lock(&ws_lock);
    free(ws_col);
    free(ws_tmp);
    ws_col = ws_tmp = NULL;
    ws_col_cap = ws_tmp_cap = 0;
    pthread_mutex_unlock(&ws_lock);
}

/* What the pool's range functions need: one group of one chunk. */
typedef struct chunk_job {
    const yolo_conv_geom *g;
    int64_t cg, og, K, P, nb, ld; /* channels and outputs per group, rows, plane, images, ld = nb*P */
    int64_t c0, o0;               /* first input / output channel of the group */
    const float *x;               /* input of the chunk's first image (full NCHW tensor offset) */
    float *dx;                    /* bwd data: output of the chunk's first image */
    float *col;
    float *tmp;                   /* [og][ld] gathered dy / GEMM result */
    float *y;                     /* fwd: output of the chunk's first image */
    const float *dy;              /* dy of the chunk's first image */
    const float *bias;
} chunk_job;

/* col[(ci*kh+ki)*kw+kj][nl*P + oh*Wo + ow] = x[nl, c0+ci, ih, iw] (0 outside). */
static void im2col_range(void *arg, int64_t begin, int64_t end) {
    const chunk_job *j = arg;
    const yolo_conv_geom *g = j->g;
    for (int64_t i = begin; i < end; i++) {
        int64_t nl = i / j->cg, ci = i % j->cg;
        const float *src = j->x + (nl * g->c + j->c0 + ci) * g->h * g->w;
        for (int64_t ki = 0; ki < g->kh; ki++) {
            for (int64_t kj = 0; kj < g->kw; kj++) {
                float *dst = j->col + ((ci * g->kh + ki) * g->kw + kj) * j->ld + nl * j->P;
                int64_t iw0 = kj * g->dw - g->pw;
                /* Valid ow: 0 <= ow*sw + iw0 < W. */
                int64_t lo = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;
                int64_t hi = g->w - iw0 <= 0 ? 0 : (g->w - iw0 + g->sw - 1) / g->sw;
                if (hi > g->wo) hi = g->wo;
                if (lo > hi) lo = hi;
                for (int64_t oh = 0; oh < g->ho; oh++) {
                    float *row = dst + oh * g->wo;
                    int64_t ih = oh * g->sh - g->ph + ki * g->dh;
                    if (ih < 0 || ih >= g->h) {
                        memset(row, 0, (size_t)g->wo * sizeof(float));
                        continue;
                    }
                    const float *srow = src + ih * g->w + iw0;
                    if (lo > 0) memset(row, 0, (size_t)lo * sizeof(float));
                    if (g->sw == 1) {
                        if (hi > lo) memcpy(row + lo, srow + lo, (size_t)(hi - lo) * sizeof(float));
                    } else {
                        for (int64_t ow = lo; ow < hi; ow++) row[ow] = srow[ow * g->sw];
                    }
                    if (hi < g->wo) memset(row + hi, 0, (size_t)(g->wo - hi) * sizeof(float));
                }
            }
        }
    }
}

/* dx[nl, c0+ci] = sum over (ki,kj,oh,ow) of col rows; one thread per plane,
 * fixed order, so the sums are deterministic. */
static void col2im_range(void *arg, int64_t begin, int64_t end) {
    const chunk_job *j = arg;
    const yolo_conv_geom *g = j->g;
    for (int64_t i = begin; i < end; i++) {
        int64_t nl = i / j->cg, ci = i % j->cg;
        float *dst = j->dx + (nl * g->c + j->c0 + ci) * g->h * g->w;
        memset(dst, 0, (size_t)(g->h * g->w) * sizeof(float));
        for (int64_t ki = 0; ki < g->kh; ki++) {
            for (int64_t kj = 0; kj < g->kw; kj++) {
                const float *src = j->col + ((ci * g->kh + ki) * g->kw + kj) * j->ld + nl * j->P;
                int64_t iw0 = kj * g->dw - g->pw;
                int64_t lo = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;
                int64_t hi = g->w - iw0 <= 0 ? 0 : (g->w - iw0 + g->sw - 1) / g->sw;
                if (hi > g->wo) hi = g->wo;
                for (int64_t oh = 0; oh < g->ho; oh++) {
                    int64_t ih = oh * g->sh - g->ph + ki * g->dh;
                    if (ih < 0 || ih >= g->h) continue;
                    float *drow = dst + ih * g->w + iw0;
                    const float *srow = src + oh * g->wo;
                    if (g->sw == 1) {
                        for (int64_t ow = lo; ow < hi; ow++) drow[ow] += srow[ow];
                    } else {
                        for (int64_t ow = lo; ow < hi; ow++) drow[ow * g->sw] += srow[ow];
                    }
                }
            }
        }
    }
}

/* tmp[oc][nl*P + p] = dy[nl, o0+oc, p] */
static void gather_dy_range(void *arg, int64_t begin, int64_t end) {
    const chunk_job *j = arg;
    for (int64_t i = begin; i < end; i++) {
        int64_t nl = i / j->og, oc = i % j->og;
        memcpy(j->tmp + oc * j->ld + nl * j->P, j->dy + (nl * j->g->o + j->o0 + oc) * j->P,
               (size_t)j->P * sizeof(float));
    }
}

/* y[nl, o0+oc, p] = tmp[oc][nl*P + p] (+ bias) */
static void scatter_y_range(void *arg, int64_t begin, int64_t end) {
    const chunk_job *j = arg;
    for (int64_t i = begin; i < end; i++) {
        int64_t nl = i / j->og, oc = i % j->og;
        float *dst = j->y + (nl * j->g->o + j->o0 + oc) * j->P;
        const float *src = j->tmp + oc * j->ld + nl * j->P;
        if (j->bias) {
            float b = j->bias[j->o0 + oc];
            for (int64_t p = 0; p < j->P; p++) dst[p] = src[p] + b;
        } else {
            memcpy(dst, src, (size_t)j->P * sizeof(float));
        }
    }
}

/* Images per chunk: enough columns for an efficient GEMM, bounded memory. */
static int64_t chunk_images(const yolo_conv_geom *g, int64_t K, int64_t P) {
    int64_t nb = (IM2COL_TARGET_COLS + P - 1) / P;
    int64_t cap = IM2COL_MAX_COL_FLOATS / (K * P > 0 ? K * P : 1);
    if (nb > cap) nb = cap;
    if (nb > g->n) nb = g->n;
    if (nb < 1) nb = 1;
    int64_t chunks = (g->n + nb - 1) / nb;
    return (g->n + chunks - 1) / chunks; /* equal chunks: 8 images go 4+4, not 6+2 */
}

yolo_status yolo_conv_im2col(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g,
                             const void *a_in, const float *b, const float *bias, void *out_in) {
    const float *a = a_in; /* always f32 here: yolo_conv_run refuses bf16 x and y */
    float *out = out_in;
    int threads = ctx && ctx->threads > 0 ? ctx->threads : 1;
    int64_t cg = g->c / g->groups, og = g->o / g->groups;
    int64_t K = cg * g->kh * g->kw, P = g->ho * g->wo;
    int64_t nb = chunk_images(g, K, P);
    bool pointwise = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;

    pthread_mutex_lock(&ws_lock);
    yolo_status st = YOLO_OK;
    if (!(pointwise && nb == 1)) st = ws_reserve(&ws_col, &ws_col_cap, (size_t)(K * nb * P));
    if (st == YOLO_OK && nb > 1) st = ws_reserve(&ws_tmp, &ws_tmp_cap, (size_t)(og * nb * P));
    if (st != YOLO_OK) {
        pthread_mutex_unlock(&ws_lock);
        return yolo_error(st, "conv2d (im2col): cannot allocate %lld floats of workspace",
                          (long long)(K * nb * P + og * nb * P));
    }
    /* OpenBLAS's own threads do the GEMMs; ours idle meanwhile. */
    if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);

    const int64_t x_img = g->c * g->h * g->w, y_img = g->o * P;
    for (int64_t n0 = 0; n0 < g->n; n0 += nb) {
        int64_t cnb = g->n - n0 < nb ? g->n - n0 : nb;
        bool direct = cnb == 1; /* the GEMM can read/write the tensors in place */
        for (int64_t gi = 0; gi < g->groups; gi++) {
            chunk_job j = {.g = g, .cg = cg, .og = og, .K = K, .P = P, .nb = cnb, .ld = cnb * P,
                           .c0 = gi * cg, .o0 = gi * og, .col = ws_col, .tmp = ws_tmp, .bias = bias};
            if (pass == YOLO_CONV_FWD) {
                const float *w = b + gi * og * K;
                j.x = a + n0 * x_img;
                j.y = out + n0 * y_img;
                const float *colp = j.col;
                if (pointwise && direct)
                    colp = j.x + j.c0 * P;
                else
                    yolo_cpu_run_split(ctx, cnb * cg, im2col_range, &j);
                if (direct) {
                    float *yp = j.y + j.o0 * P;
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)og, (int)P, (int)K, 1.0f, w,
                                (int)K, colp, (int)P, 0.0f, yp, (int)P);
                    if (bias) yolo_conv_add_bias(ctx, yp, bias + j.o0, 1, og, P);
                } else {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)og, (int)j.ld, (int)K, 1.0f, w,
                                (int)K, colp, (int)j.ld, 0.0f, j.tmp, (int)j.ld);
                    yolo_cpu_run_split(ctx, cnb * og, scatter_y_range, &j);
                }
            } else if (pass == YOLO_CONV_BWD_DATA) {
                const float *w = b + gi * og * K;
                j.dy = a + n0 * y_img;
                j.dx = out + n0 * x_img;
                const float *dyp = j.dy + j.o0 * P;
                if (!direct) {
                    yolo_cpu_run_split(ctx, cnb * og, gather_dy_range, &j);
                    dyp = j.tmp;
                }
                float *colp = pointwise && direct ? j.dx + j.c0 * P : j.col;
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)j.ld, (int)og, 1.0f, w, (int)K,
                            dyp, (int)j.ld, 0.0f, colp, (int)j.ld);
                if (!(pointwise && direct)) yolo_cpu_run_split(ctx, cnb * cg, col2im_range, &j);
            } else {
                float *dw = out + gi * og * K;
                j.x = a + n0 * x_img;
                j.dy = b + n0 * y_img;
                const float *colp = j.col;
                if (pointwise && direct)
                    colp = j.x + j.c0 * P;
                else
                    yolo_cpu_run_split(ctx, cnb * cg, im2col_range, &j);
                const float *dyp = j.dy + j.o0 * P;
                if (!direct) {
                    yolo_cpu_run_split(ctx, cnb * og, gather_dy_range, &j);
                    dyp = j.tmp;
                }
                /* Chunks accumulate in order: deterministic. */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)og, (int)K, (int)j.ld, 1.0f, dyp,
                            (int)j.ld, colp, (int)j.ld, n0 == 0 ? 0.0f : 1.0f, dw, (int)K);
            }
        }
    }
    pthread_mutex_unlock(&ws_lock);
    return YOLO_OK;
}
