/* amp's bf16 activation storage on the CPU backend (core/graph/narrow.c):
 * which values the planner narrows, that the convolutions see exactly the
 * bf16 values they saw before (so a graph without a residual add keeps every
 * bit of its output and weight gradients), that the add's rounding is the
 * only change, the bf16 kernels of the copy ops, the memory it saves, and
 * the host conversions. Skips where oneDNN has no bf16 convolutions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "graph/graph_internal.h"
#include "test_util.h"

enum { N = 2, C = 4, H = 24, W = 24, OUT_C = 6 }; /* the output planes, 48x48, pass 2048: batch norm widens bf16 in chunks of that */
#define OUT_COUNT (N * OUT_C * (2 * H) * (2 * W))
#define X_COUNT (N * C * H * W)

typedef struct params {
    yolo_tensor *w[3], *gamma[3], *beta[3], *rm[3], *rv[3];
} params;

typedef struct net {
    yolo_graph *g;
    yolo_tensor *x, *out, *dy;
    yolo_tensor *cat; /* the concat, to check its dtype */
} net;

static yolo_tensor *conv_bn_silu(yolo_graph *g, yolo_tensor *x, const params *p, int k, int pad) {
    yolo_conv2d_params cp = {.pad_h = pad, .pad_w = pad};
    yolo_tensor *y = yolo_conv2d(g, x, p->w[k], NULL, &cp);
    return yolo_silu(g, yolo_batch_norm(g, y, p->gamma[k], p->beta[k], p->rm[k], p->rv[k], true, 0.03f, 1e-3f));
}

/* x -> CBS -> split (two slices) -> CBS on the second half (+ that half:
 * the residual add) -> concat of the three -> upsample x2 -> 1x1 CBS (the
 * output, whose gradient the host gives). */
static net build(yolo_backend *be, const params *p, bool with_add) {
    net n = {0};
    n.g = yolo_graph_new(be);
    int64_t xs[4] = {N, C, H, W};
    n.x = yolo_graph_input(n.g, "x", YOLO_F32, 4, xs);
    yolo_tensor *c1 = conv_bn_silu(n.g, n.x, p, 0, 1);
    yolo_tensor *s0 = yolo_slice(n.g, c1, 1, 0, C), *s1 = yolo_slice(n.g, c1, 1, C, C);
    yolo_tensor *c2 = conv_bn_silu(n.g, s1, p, 1, 1);
    yolo_tensor *m = with_add ? yolo_add(n.g, s1, c2) : c2;
    yolo_tensor *parts[3] = {s0, s1, m};
    n.cat = yolo_concat(n.g, 3, parts, 1);
    yolo_tensor *u = yolo_upsample_nearest(n.g, n.cat, 2);
    n.out = conv_bn_silu(n.g, u, p, 2, 0);
    CHECK(yolo_graph_mark_output(n.g, n.out) == YOLO_OK);
    CHECK(yolo_graph_backward_from(n.g, 1, &n.out, &n.dy) == YOLO_OK);
    CHECK_MSG(yolo_graph_status(n.g) == YOLO_OK, "build: %s", yolo_graph_error(n.g));
    return n;
}

typedef struct result {
    float out[OUT_COUNT];
    float grad[3][OUT_C * 3 * C * 9]; /* room for the largest weight */
    size_t peak;
    int narrowed;
} result;

/* policy: YOLO_BF16_ACTIVATIONS (off, silu, all) */
static void run(yolo_backend *be, const params *p, bool with_add, const char *policy, bool poison, result *r) {
    const bool narrow = strcmp(policy, "off") != 0;
    setenv("YOLO_BF16_ACTIVATIONS", policy, 1);
    net n = build(be, p, with_add);
    yolo_graph_set_poison(n.g, poison);
    yolo_graph_plan_info info = {0};
    CHECK(yolo_graph_plan(n.g, &info) == YOLO_OK);
    unsetenv("YOLO_BF16_ACTIVATIONS");
    r->peak = info.peak_bytes;
    r->narrowed = n.g->narrowed;
    CHECK_MSG(n.out->dtype == YOLO_F32, "a graph output stays f32");
    CHECK_MSG(n.cat->dtype == (narrow ? YOLO_BF16 : YOLO_F32), "concat is %s", yolo_dtype_name(n.cat->dtype));
    float x[X_COUNT], dy[OUT_COUNT];
    test_fill_uniform(x, X_COUNT, 11, -2.0f, 2.0f);
    test_fill_uniform(dy, OUT_COUNT, 12, -1.0f, 1.0f);
    for (int k = 0; k < 3; k++) yolo_tensor_zero(p->w[k]->grad);
    CHECK(yolo_tensor_upload_f32(n.x, x, X_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(n.dy, dy, OUT_COUNT) == YOLO_OK);
    yolo_status st = yolo_graph_run(n.g);
    CHECK_MSG(st == YOLO_OK, "run: %s", yolo_last_error());
    CHECK(yolo_tensor_download_f32(n.out, r->out, OUT_COUNT) == YOLO_OK);
    for (int k = 0; k < 3; k++)
        CHECK(yolo_tensor_download_f32(p->w[k]->grad, r->grad[k], yolo_tensor_numel(p->w[k])) == YOLO_OK);
    yolo_graph_free(n.g);
}

static void make_params(yolo_backend *be, params *p) {
    int64_t ws[3][4] = {{2 * C, C, 3, 3}, {C, C, 3, 3}, {OUT_C, 3 * C, 1, 1}};
    int64_t cs[3] = {2 * C, C, OUT_C};
    for (int k = 0; k < 3; k++) {
        p->w[k] = test_tensor_random(be, "w", 4, ws[k], 100 + k, -0.4f, 0.4f, 1);
        p->gamma[k] = test_tensor_random(be, "gamma", 1, &cs[k], 200 + k, 0.5f, 1.5f, 1);
        p->beta[k] = test_tensor_random(be, "beta", 1, &cs[k], 300 + k, -0.5f, 0.5f, 1);
        p->rm[k] = yolo_tensor_new(be, "rm", YOLO_F32, 1, &cs[k], false);
        p->rv[k] = yolo_tensor_new(be, "rv", YOLO_F32, 1, &cs[k], false);
    }
}

static void free_params(params *p) {
    for (int k = 0; k < 3; k++) {
        yolo_tensor_free(p->w[k]);
        yolo_tensor_free(p->gamma[k]);
        yolo_tensor_free(p->beta[k]);
        yolo_tensor_free(p->rm[k]);
        yolo_tensor_free(p->rv[k]);
    }
}

static int differing(const float *a, const float *b, int64_t n) {
    int d = 0;
    for (int64_t i = 0; i < n; i++) d += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return d;
}

/* max |got - want| over max |want|: bf16's relative step is 2^-8, and batch
 * norm's backward subtracts channel means, so single small gradients move
 * by more than that relative to themselves but not relative to the largest. */
static double scaled_error(const float *got, const float *want, int64_t n) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs((double)got[i] - want[i]));
        scale = fmax(scale, fabs((double)want[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

/* Outputs and weight gradients within 3% of their largest magnitude of the
 * f32-storage run (measured on AVX512-BF16: at most 1.7%). */
static void check_close(const char *what, const result *got, const result *want, const params *p) {
    double e = scaled_error(got->out, want->out, OUT_COUNT);
    CHECK_MSG(e <= 3e-2, "%s: outputs differ by %.3g of their largest", what, e);
    double worst = e;
    for (int k = 0; k < 3; k++) {
        double eg = scaled_error(got->grad[k], want->grad[k], yolo_tensor_numel(p->w[k]));
        CHECK_MSG(eg <= 3e-2, "%s: weight %d gradients differ by %.3g of their largest", what, k, eg);
        worst = fmax(worst, eg);
    }
    printf("%s: outputs and weight gradients within %.2g of their largest magnitude of f32 storage\n", what, worst);
}

static void test_graph_numerics(yolo_backend *be) {
    params p;
    make_params(be, &p);
    static result f32, bf16, bf16_again, poisoned, f32_add, bf16_add, all, all_again, all_poisoned, all_add;
    run(be, &p, false, "off", false, &f32);
    run(be, &p, false, "silu", false, &bf16);
    run(be, &p, false, "silu", false, &bf16_again);
    run(be, &p, false, "silu", true, &poisoned);
    /* silu: c1's SiLU, the two slices, c2's SiLU, the concat, the upsample */
    CHECK_MSG(f32.narrowed == 0 && bf16.narrowed == 6, "narrowed %d and %d values", f32.narrowed, bf16.narrowed);
    CHECK_MSG(bf16.peak < f32.peak, "bf16 storage: %zu bytes of activations, f32 %zu", bf16.peak, f32.peak);
    printf("activations: f32 %zu bytes, bf16 storage %zu bytes\n", f32.peak, bf16.peak);
    /* no add: the convolutions read the bf16 values their own conversion made */
    CHECK_MSG(differing(f32.out, bf16.out, OUT_COUNT) == 0, "%d outputs differ", differing(f32.out, bf16.out, OUT_COUNT));
    for (int k = 0; k < 3; k++) {
        int64_t nw = yolo_tensor_numel(p.w[k]);
        CHECK_MSG(differing(f32.grad[k], bf16.grad[k], nw) == 0, "weight %d: %d gradients differ", k,
                  differing(f32.grad[k], bf16.grad[k], nw));
        CHECK(differing(bf16.grad[k], bf16_again.grad[k], nw) == 0);
        CHECK_MSG(differing(bf16.grad[k], poisoned.grad[k], nw) == 0, "poisoned run: weight %d differs", k);
    }
    CHECK(differing(bf16.out, bf16_again.out, OUT_COUNT) == 0);
    CHECK(differing(bf16.out, poisoned.out, OUT_COUNT) == 0);

    /* with the residual add: the add's bf16 rounding is the one change */
    run(be, &p, true, "off", false, &f32_add);
    run(be, &p, true, "silu", false, &bf16_add);
    CHECK_MSG(bf16_add.narrowed == 7, "narrowed %d values with the add", bf16_add.narrowed);
    CHECK_MSG(differing(f32_add.out, bf16_add.out, OUT_COUNT) > 0, "the add's rounding changed nothing");
    check_close("silu, with the add", &bf16_add, &f32_add, &p);

    /* all: the three conv outputs too; batch norm reads rounded values */
    run(be, &p, false, "all", false, &all);
    run(be, &p, false, "all", false, &all_again);
    run(be, &p, false, "all", true, &all_poisoned);
    run(be, &p, true, "all", false, &all_add);
    CHECK_MSG(all.narrowed == 9 && all_add.narrowed == 10, "all: narrowed %d values, %d with the add", all.narrowed,
              all_add.narrowed);
    CHECK_MSG(all.peak < bf16.peak, "all: %zu bytes of activations, silu %zu", all.peak, bf16.peak);
    printf("activations: all %zu bytes\n", all.peak);
    CHECK(differing(all.out, all_again.out, OUT_COUNT) == 0 && differing(all.out, all_poisoned.out, OUT_COUNT) == 0);
    for (int k = 0; k < 3; k++) {
        int64_t nw = yolo_tensor_numel(p.w[k]);
        CHECK_MSG(differing(all.grad[k], all_again.grad[k], nw) == 0 &&
                      differing(all.grad[k], all_poisoned.grad[k], nw) == 0,
                  "all: weight %d gradient not reproducible", k);
    }
    CHECK_MSG(differing(all.out, f32.out, OUT_COUNT) > 0, "rounded conv outputs changed nothing");
    check_close("all", &all, &f32, &p);
    check_close("all, with the add", &all_add, &f32_add, &p);
    free_params(&p);
}

/* The bf16 kernels of the copy ops and the add, on bf16 graph inputs. */
static void test_copy_kernels(yolo_backend *be) {
    yolo_graph *g = yolo_graph_new(be);
    int64_t s[4] = {1, 3, 2, 5};
    yolo_tensor *a = yolo_graph_input(g, "a", YOLO_BF16, 4, s), *b = yolo_graph_input(g, "b", YOLO_BF16, 4, s);
    yolo_tensor *parts[2] = {a, b};
    yolo_tensor *cat = yolo_concat(g, 2, parts, 1);
    yolo_tensor *sl = yolo_slice(g, cat, 1, 2, 3);
    /* the builders of upsample and add take f32: nodes made by hand, as the
     * planner's narrowing would leave them */
    int64_t us[4] = {1, 3, 4, 10};
    yolo_tensor *up = yolo_graph_node(g, YOLO_OP_UPSAMPLE_NEAREST, YOLO_BF16, 4, us, 1, &sl);
    if (up) up->node->iparams[0] = 2;
    yolo_tensor *src[2] = {a, b};
    yolo_tensor *sum = yolo_graph_node(g, YOLO_OP_ADD, YOLO_BF16, 4, s, 2, src);
    yolo_tensor *outs[4] = {cat, sl, up, sum};
    for (int i = 0; i < 4; i++) CHECK(outs[i] && yolo_graph_mark_output(g, outs[i]) == YOLO_OK);
    CHECK_MSG(cat && sl && up && cat->dtype == YOLO_BF16 && sl->dtype == YOLO_BF16 && up->dtype == YOLO_BF16,
              "copies keep the bf16 dtype");
    float va[30], vb[30];
    test_fill_uniform(va, 30, 21, -3.0f, 3.0f);
    test_fill_uniform(vb, 30, 22, -3.0f, 3.0f);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(a, va, 30) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(b, vb, 30) == YOLO_OK);
    CHECK(yolo_graph_run(g) == YOLO_OK);
    float got_cat[60], got_sl[30], got_up[120], got_sum[30];
    CHECK(yolo_tensor_download_f32(cat, got_cat, 60) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(sl, got_sl, 30) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(up, got_up, 120) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(sum, got_sum, 30) == YOLO_OK);
    int bad_cat = 0, bad_sl = 0, bad_up = 0, bad_sum = 0;
    for (int c = 0; c < 6; c++)
        for (int i = 0; i < 10; i++) {
            float want = yolo_bf16_to_f32(yolo_f32_to_bf16(c < 3 ? va[c * 10 + i] : vb[(c - 3) * 10 + i]));
            bad_cat += got_cat[c * 10 + i] != want;
            if (c >= 2 && c < 5) {
                bad_sl += got_sl[(c - 2) * 10 + i] != want;
                for (int dy = 0; dy < 2; dy++)
                    for (int dx = 0; dx < 2; dx++) {
                        int y = i / 5, x = i % 5;
                        bad_up += got_up[(c - 2) * 40 + (2 * y + dy) * 10 + 2 * x + dx] != want;
                    }
            }
        }
    for (int i = 0; i < 30; i++) {
        float sa = yolo_bf16_to_f32(yolo_f32_to_bf16(va[i])), sb = yolo_bf16_to_f32(yolo_f32_to_bf16(vb[i]));
        bad_sum += got_sum[i] != yolo_bf16_to_f32(yolo_f32_to_bf16(sa + sb));
    }
    CHECK_MSG(!bad_cat && !bad_sl && !bad_up && !bad_sum, "wrong values: concat %d, slice %d, upsample %d, add %d",
              bad_cat, bad_sl, bad_up, bad_sum);
    yolo_graph_free(g);

    /* a mixed-dtype concat is refused with its name, not misread */
    g = yolo_graph_new(be);
    yolo_tensor *f = yolo_graph_input(g, "f", YOLO_F32, 4, s), *h = yolo_graph_input(g, "h", YOLO_BF16, 4, s);
    yolo_tensor *mixed_src[2] = {f, h};
    int64_t ms[4] = {1, 6, 2, 5};
    yolo_tensor *mixed = yolo_graph_node(g, YOLO_OP_CONCAT, YOLO_F32, 4, ms, 2, mixed_src);
    mixed->node->iparams[0] = 1;
    CHECK(yolo_graph_mark_output(g, mixed) == YOLO_OK);
    CHECK(yolo_graph_run(g) == YOLO_ERR_SHAPE);
    CHECK_MSG(test_error_mentions("source 1 is bf16"), "error was: %s", yolo_last_error());
    yolo_graph_free(g);
}

static void test_host_conversions(void) {
    const struct {
        float f;
        uint16_t b;
    } cases[] = {
        {1.0f, 0x3f80},
        {-2.0f, 0xc000},
        {1.00390625f, 0x3f80},  /* 1 + 2^-8: a tie, to even (down) */
        {1.01171875f, 0x3f82},  /* 1 + 3*2^-8: a tie, to even (up) */
        {1.0078125f, 0x3f81},   /* exact */
        {3.4e38f, 0x7f80},      /* rounds up into inf */
        {INFINITY, 0x7f80},
        {1e-40f, 0x0000},       /* denormal: zero, as VCVTNEPS2BF16 */
        {-1e-40f, 0x8000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_MSG(yolo_f32_to_bf16(cases[i].f) == cases[i].b, "%g -> 0x%04x, want 0x%04x", (double)cases[i].f,
                  yolo_f32_to_bf16(cases[i].f), cases[i].b);
    uint16_t nan = yolo_f32_to_bf16(NAN);
    CHECK(isnan(yolo_bf16_to_f32(nan)));
    CHECK(yolo_bf16_to_f32(0x3f80) == 1.0f && yolo_bf16_to_f32(0xc000) == -2.0f);
    CHECK(yolo_dtype_size(YOLO_BF16) == 2 && strcmp(yolo_dtype_name(YOLO_BF16), "bf16") == 0);
}

int main(void) {
    test_host_conversions();
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) return test_skip("no CPU backend");
    test_copy_kernels(be);
    if (!yolo_backend_set_amp(be, true)) {
        printf("amp on this CPU: %s\n", yolo_backend_precision(be));
        yolo_backend_free(be);
        if (test_failures) return test_result("test_bf16_activations");
        return test_skip("this CPU runs amp in fp32 (no AVX512-BF16 or AMX): no bf16 activations to test");
    }
    printf("amp: %s\n", yolo_backend_precision(be));
    test_graph_numerics(be);
    yolo_backend_free(be);
    return test_result("test_bf16_activations");
}
