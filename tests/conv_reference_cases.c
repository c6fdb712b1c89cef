/* The CPU convolution kernels (CONV2D, CONV2D_BWD_DATA, CONV2D_BWD_WEIGHT,
 * CONV_TRANSPOSE2D) against naive reference loops, on both implementations
 * (oneDNN and im2col + sgemm), over odd sizes, 1x1/2x2/3x3/5x5 kernels,
 * strides, paddings, dilation, groups and depthwise, batch 1 and 3; plus
 * run-to-run bit-identity and shape errors. Kernels are called directly on
 * hand-built tensors: this is a kernel test, independent of the graph. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/conv_common.h"
#include "op_reference.h"
#include "test_util.h"

typedef struct cfg {
    int n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, g;
} cfg;

static const cfg configs[] = {
    /* n  c   h   w   o  kh kw sh sw ph pw dh dw g */
    {1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1},     /* odd sizes, 3x3 */
    {3, 4, 11, 10, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1},   /* 1x1 */
    {3, 6, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1},     /* stride 2 */
    {1, 5, 13, 12, 7, 5, 5, 1, 1, 2, 2, 1, 1, 1},   /* 5x5 pad 2 */
    {3, 4, 10, 11, 6, 3, 3, 1, 1, 2, 2, 2, 2, 1},   /* dilation 2 */
    {3, 4, 9, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2},     /* groups 2 */
    {3, 8, 9, 10, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8},    /* depthwise */
    {1, 16, 8, 7, 16, 3, 3, 2, 2, 1, 1, 1, 1, 16},  /* depthwise stride 2 */
    {3, 16, 12, 12, 16, 1, 1, 2, 2, 0, 0, 1, 1, 1}, /* 1x1 stride 2 on even size: drops the last row */
    {1, 3, 17, 17, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1},  /* a YOLO stem */
    {3, 32, 10, 10, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1}, /* blocked layouts */
    {1, 7, 6, 5, 9, 5, 5, 2, 2, 0, 0, 1, 1, 1},     /* 5x5 stride 2 pad 0 */
    {1, 4, 9, 8, 4, 3, 1, 2, 1, 1, 0, 1, 2, 1},     /* different h/w parameters */
    {3, 64, 5, 5, 32, 3, 3, 1, 1, 0, 0, 1, 1, 1},   /* pad 0, tiny plane */
    {3, 8, 11, 11, 12, 5, 5, 2, 2, 2, 2, 1, 1, 4},  /* groups 4, 5x5 stride 2 */
    {1, 4, 8, 8, 4, 2, 2, 2, 2, 0, 0, 1, 1, 1},     /* 2x2 stride 2 */
    {3, 5, 7, 7, 3, 3, 3, 1, 1, 0, 0, 2, 2, 1},     /* dilation 2, pad 0 */
    {3, 24, 13, 13, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1}, /* 1x1, several images per GEMM */
};

/* Transposed convolutions: x [n, c, h, w], w [c, o/g, kh, kw] -> out [n, o, ...]. */
static const cfg transposed[] = {
    {3, 8, 5, 6, 4, 2, 2, 2, 2, 0, 0, 1, 1, 1}, /* the Segment proto upsampler */
    {1, 16, 7, 7, 16, 2, 2, 2, 2, 0, 0, 1, 1, 1},
    {3, 8, 5, 6, 4, 2, 2, 2, 2, 0, 0, 1, 1, 2}, /* groups 2 */
    {1, 6, 4, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1}, /* 3x3 stride 2 pad 1 */
};

static int failures;

#undef CHECK
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
        }                                                                 \
    } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float frand(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) * (2.0 / 16777216.0) - 1.0);
}

/* A tensor on a private host buffer, enough for the kernels. */
typedef struct host_tensor {
    yolo_tensor t;
    struct yolo_buffer buf;
    struct yolo_node node;
    yolo_tensor *src[3];
} host_tensor;

static host_tensor *ht_new(const char *name, int64_t a, int64_t b, int64_t c, int64_t d, int ndim) {
    host_tensor *h = calloc(1, sizeof *h);
    int64_t dims[4] = {a, b, c, d};
    h->t.dtype = YOLO_F32;
    h->t.ndim = ndim;
    int64_t n = 1;
    for (int i = 0; i < YOLO_MAX_DIMS; i++) {
        h->t.shape[i] = i < ndim ? dims[i] : 1;
        n *= h->t.shape[i];
    }
    snprintf(h->t.name, sizeof h->t.name, "%s", name);
    h->buf.size = (size_t)n * sizeof(float);
    h->buf.data = calloc((size_t)n, sizeof(float));
    h->t.buffer = &h->buf;
    h->t.node = &h->node;
    h->node.src = h->src;
    return h;
}

static void ht_free(host_tensor *h) {
    if (!h) return;
    free(h->buf.data);
    free(h);
}

static float *F(host_tensor *h) { return (float *)h->buf.data; }
static int64_t NUMEL(host_tensor *h) { return (int64_t)(h->buf.size / sizeof(float)); }

static void fill_random(host_tensor *h) {
    for (int64_t i = 0; i < NUMEL(h); i++) F(h)[i] = frand();
}

static void set_conv(host_tensor *node, int op, const cfg *c, int n_src, host_tensor *s0, host_tensor *s1,
                     host_tensor *s2) {
    node->node.op = op;
    node->node.n_src = n_src;
    node->src[0] = &s0->t;
    node->src[1] = &s1->t;
    node->src[2] = s2 ? &s2->t : NULL;
    int32_t ip[7] = {c->sh, c->sw, c->ph, c->pw, c->dh, c->dw, c->g};
    memcpy(node->node.iparams, ip, sizeof ip);
}

static int64_t out_size(int64_t in, int k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

/* Reference sums in double, with the sum of |terms| for the tolerance. */
typedef struct ref {
    double *val, *mag;
} ref;

static ref ref_new(int64_t n) {
    ref r = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
    return r;
}
static void ref_free(ref r) {
    free(r.val);
    free(r.mag);
}

/* Loops over every (n, o, oh, ow, ci, ki, kj) tap of the conv with input
 * [n,c,h,w] and output [n,o,ho,wo]; which = 0 fwd, 1 bwd data, 2 bwd weight. */
static void reference(const cfg *c, int64_t ho, int64_t wo, const float *x, const float *w, const float *dy,
                      ref r, int which) {
    int64_t cg = c->c / c->g, og = c->o / c->g;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t o = 0; o < c->o; o++)
            for (int64_t oh = 0; oh < ho; oh++)
                for (int64_t ow = 0; ow < wo; ow++)
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ki = 0; ki < c->kh; ki++)
                            for (int64_t kj = 0; kj < c->kw; kj++) {
                                int64_t ih = oh * c->sh - c->ph + ki * c->dh, iw = ow * c->sw - c->pw + kj * c->dw;
                                if (ih < 0 || ih >= c->h || iw < 0 || iw >= c->w) continue;
                                int64_t cin = (o / og) * cg + ci;
                                int64_t xi = ((n * c->c + cin) * c->h + ih) * c->w + iw;
                                int64_t wi = ((o * cg + ci) * c->kh + ki) * c->kw + kj;
                                int64_t yi = ((n * c->o + o) * ho + oh) * wo + ow;
                                double t;
                                int64_t at;
                                if (which == 0) t = (double)x[xi] * w[wi], at = yi;
                                else if (which == 1) t = (double)dy[yi] * w[wi], at = xi;
                                else t = (double)x[xi] * dy[yi], at = wi;
                                r.val[at] += t;
                                r.mag[at] += fabs(t);
                            }
}

/* Error allowed per unit of sum |terms|: fp32 sums, or bf16 inputs (8
 * significant bits: each product within 2^-8 of the exact one). */
static double rel_tol = 1e-5;

static void compare(const char *what, const char *impl, int idx, const float *got, ref r, const float *bias,
                    int64_t n, int64_t channels, int64_t plane) {
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        double want = r.val[i], mag = r.mag[i];
        if (bias) {
            double b = bias[(i / plane) % channels];
            want += b;
            mag += fabs(b);
        }
        double err = fabs((double)got[i] - want);
        if (!(err <= rel_tol * mag + 1e-6)) {
            CHECK(0, "%s [%s] config %d: element %lld = %.7g, reference %.7g (|terms| %.3g)", what, impl, idx,
                  (long long)i, got[i], want, mag);
            bad++;
        }
    }
}

static yolo_status run_twice(yolo_cpu_context *ctx, host_tensor *node, const char *what, const char *impl, int idx) {
    yolo_cpu_kernel k = yolo_cpu_conv_kernel(node->node.op);
    yolo_status st = k(ctx, &node->t);
    if (st != YOLO_OK) {
        CHECK(0, "%s [%s] config %d: %s", what, impl, idx, yolo_last_error());
        return st;
    }
    size_t bytes = node->buf.size;
    float *first = malloc(bytes);
    memcpy(first, node->buf.data, bytes);
    memset(node->buf.data, 0x7f, bytes); /* the kernel must overwrite, not accumulate */
    st = k(ctx, &node->t);
    CHECK(st == YOLO_OK && memcmp(first, node->buf.data, bytes) == 0, "%s [%s] config %d: second run differs",
          what, impl, idx);
    free(first);
    return st;
}

static void test_conv(yolo_cpu_context *ctx, const char *impl, int idx, const cfg *c) {
    int64_t ho = out_size(c->h, c->kh, c->sh, c->ph, c->dh), wo = out_size(c->w, c->kw, c->sw, c->pw, c->dw);
    host_tensor *x = ht_new("x", c->n, c->c, c->h, c->w, 4), *w = ht_new("w", c->o, c->c / c->g, c->kh, c->kw, 4);
    host_tensor *b = ht_new("b", c->o, 1, 1, 1, 1), *dy = ht_new("dy", c->n, c->o, ho, wo, 4);
    host_tensor *y = ht_new("y", c->n, c->o, ho, wo, 4), *dx = ht_new("dx", c->n, c->c, c->h, c->w, 4);
    host_tensor *dw = ht_new("dw", c->o, c->c / c->g, c->kh, c->kw, 4);
    fill_random(x), fill_random(w), fill_random(b), fill_random(dy);

    for (int with_bias = 0; with_bias < 2; with_bias++) {
        set_conv(y, YOLO_OP_CONV2D, c, with_bias ? 3 : 2, x, w, with_bias ? b : NULL);
        if (run_twice(ctx, y, "conv2d", impl, idx) == YOLO_OK) {
            ref r = ref_new(NUMEL(y));
            reference(c, ho, wo, F(x), F(w), NULL, r, 0);
            compare(with_bias ? "conv2d+bias" : "conv2d", impl, idx, F(y), r, with_bias ? F(b) : NULL, NUMEL(y),
                    c->o, ho * wo);
            ref_free(r);
        }
    }
    set_conv(dx, YOLO_OP_CONV2D_BWD_DATA, c, 2, dy, w, NULL);
    if (run_twice(ctx, dx, "conv2d_bwd_data", impl, idx) == YOLO_OK) {
        ref r = ref_new(NUMEL(dx));
        reference(c, ho, wo, NULL, F(w), F(dy), r, 1);
        compare("conv2d_bwd_data", impl, idx, F(dx), r, NULL, NUMEL(dx), 1, 1);
        ref_free(r);
    }
    set_conv(dw, YOLO_OP_CONV2D_BWD_WEIGHT, c, 2, x, dy, NULL);
    if (run_twice(ctx, dw, "conv2d_bwd_weight", impl, idx) == YOLO_OK) {
        ref r = ref_new(NUMEL(dw));
        reference(c, ho, wo, F(x), NULL, F(dy), r, 2);
        compare("conv2d_bwd_weight", impl, idx, F(dw), r, NULL, NUMEL(dw), 1, 1);
        ref_free(r);
    }
    ht_free(x), ht_free(w), ht_free(b), ht_free(dy), ht_free(y), ht_free(dx), ht_free(dw);
}

/* ConvTranspose2d(x) = the data gradient of the conv from out to x, + bias. */
static void test_transposed(yolo_cpu_context *ctx, const char *impl, int idx, const cfg *t) {
    int64_t ho = (t->h - 1) * t->sh - 2 * t->ph + t->dh * (t->kh - 1) + 1;
    int64_t wo = (t->w - 1) * t->sw - 2 * t->pw + t->dw * (t->kw - 1) + 1;
    host_tensor *x = ht_new("x", t->n, t->c, t->h, t->w, 4), *w = ht_new("w", t->c, t->o / t->g, t->kh, t->kw, 4);
    host_tensor *b = ht_new("b", t->o, 1, 1, 1, 1), *y = ht_new("y", t->n, t->o, ho, wo, 4);
    fill_random(x), fill_random(w), fill_random(b);
    set_conv(y, YOLO_OP_CONV_TRANSPOSE2D, t, 3, x, w, b);
    if (run_twice(ctx, y, "conv_transpose2d", impl, idx) == YOLO_OK) {
        /* The conv whose input is y [n,o,ho,wo] and output x [n,c,h,w]. */
        cfg c = *t;
        c.c = t->o, c.h = (int)ho, c.w = (int)wo, c.o = t->c;
        ref r = ref_new(NUMEL(y));
        reference(&c, t->h, t->w, NULL, F(w), F(x), r, 1);
        compare("conv_transpose2d", impl, idx, F(y), r, F(b), NUMEL(y), t->o, ho * wo);
        ref_free(r);
    }
    ht_free(x), ht_free(w), ht_free(b), ht_free(y);
}

static void test_shape_errors(yolo_cpu_context *ctx) {
    cfg c = {1, 4, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    host_tensor *x = ht_new("x", 1, 4, 8, 8, 4), *w = ht_new("w", 6, 3, 3, 3, 4); /* C/g should be 4 */
    host_tensor *y = ht_new("y", 1, 6, 8, 8, 4), *y2 = ht_new("y", 1, 6, 7, 8, 4);
    host_tensor *w2 = ht_new("w", 6, 4, 3, 3, 4);
    set_conv(y, YOLO_OP_CONV2D, &c, 2, x, w, NULL);
    yolo_status st = yolo_cpu_conv_kernel(YOLO_OP_CONV2D)(ctx, &y->t);
    CHECK(st == YOLO_ERR_SHAPE && strstr(yolo_last_error(), "CONV2D") && strstr(yolo_last_error(), "[6,3,3,3]"),
          "bad weight: status %d, message '%s'", st, yolo_last_error());
    set_conv(y2, YOLO_OP_CONV2D, &c, 2, x, w2, NULL);
    st = yolo_cpu_conv_kernel(YOLO_OP_CONV2D)(ctx, &y2->t);
    CHECK(st == YOLO_ERR_SHAPE, "bad output size: status %d", st);
    c.g = 3;
    set_conv(y, YOLO_OP_CONV2D, &c, 2, x, w2, NULL);
    st = yolo_cpu_conv_kernel(YOLO_OP_CONV2D)(ctx, &y->t);
    CHECK(st == YOLO_ERR_SHAPE, "groups not dividing channels: status %d", st);
    CHECK(yolo_cpu_conv_kernel(YOLO_OP_SILU) == NULL, "conv kernel lookup answers for SILU");
    ht_free(x), ht_free(w), ht_free(y), ht_free(y2), ht_free(w2);
}

/* The same results whatever the implementation's thread count? Not required
 * (only run to run), but both thread counts must match the reference. */
static void run_all(yolo_cpu_context *ctx, yolo_conv_impl impl) {
    const char *name = yolo_conv_impl_name(impl);
    char label[32];
    snprintf(label, sizeof label, "%s%s/%dt", name, ctx->bf16 ? "-bf16" : "", ctx->threads);
    yolo_conv_set_impl(impl);
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) test_conv(ctx, label, (int)i, &configs[i]);
    for (size_t i = 0; i < sizeof transposed / sizeof transposed[0]; i++)
        test_transposed(ctx, label, (int)i, &transposed[i]);
}

/* Both implementations, 1, 2 and 3 threads (kernels called directly on
 * their own thread pools: no backend). */
static void conv_all(void) {
    yolo_conv_impl impls[2] = {YOLO_CONV_IMPL_ONEDNN, YOLO_CONV_IMPL_IM2COL};
    /* 2 and 3 threads split batch 3 unevenly or image by image; 1 thread and
     * batch 1 take the single-primitive path. */
    int thread_counts[3] = {2, 1, 3};
    for (int t = 0; t < 3; t++) {
        yolo_cpu_context ctx = {NULL, thread_counts[t], false};
        if (yolo_thread_pool_create(ctx.threads, &ctx.pool) != YOLO_OK) {
            CHECK(0, "thread pool: %s", yolo_last_error());
            return;
        }
        for (int i = 0; i < 2; i++) run_all(&ctx, impls[i]);
        /* amp: oneDNN on bf16 copies of the inputs, f32 out, run to run
         * identical too (run_twice). */
        char why[128];
        if (yolo_conv_onednn_bf16_available(why, sizeof why)) {
            ctx.bf16 = true;
            rel_tol = 8e-3;
            run_all(&ctx, YOLO_CONV_IMPL_ONEDNN);
            ctx.bf16 = false;
            rel_tol = 1e-5;
        } else if (t == 0) {
            printf("bf16 convolutions not tested: %s\n", why);
        }
        if (t == 0) test_shape_errors(&ctx);
        yolo_thread_pool_free(ctx.pool);
    }
    yolo_conv_set_impl(YOLO_CONV_IMPL_DEFAULT);
    yolo_conv_release_caches();
    test_failures += failures;
    printf("conv reference: %zu configs + %zu transposed, both implementations, 1, 2 and 3 threads: %d failures\n",
           sizeof configs / sizeof configs[0], sizeof transposed / sizeof transposed[0], failures);
}

static const op_reference_case cases[] = {
    {"conv", conv_all, {YOLO_OP_CONV2D, YOLO_OP_CONV2D_BWD_DATA, YOLO_OP_CONV2D_BWD_WEIGHT, YOLO_OP_CONV_TRANSPOSE2D}},
};
const op_reference_suite op_reference_conv = {"test_conv_reference", cases, (int)(sizeof cases / sizeof cases[0]), NULL};
