/* amp's narrowed activation storage (core/graph/narrow.c) on one backend:
 * which values the planner narrows, that the convolutions see exactly the
 * values their own conversion made before (so a graph without a residual
 * add keeps every bit of its output and weight gradients), that the add's
 * rounding is the only change, the memory it saves, and the narrow kernels
 * of the copy ops and the add. Header-only, shared by
 * test_bf16_activations (CPU, bf16) and test_vulkan_f16_activations
 * (Vulkan, f16). */
#ifndef YOLO_NARROWED_ACTIVATIONS_H
#define YOLO_NARROWED_ACTIVATIONS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "graph/graph_internal.h"
#include "test_util.h"

/* The backend's narrow dtype, its A/B switch and host conversions, and the
 * tolerance of the graph with the residual add against f32 storage. */
typedef struct narrow_kind {
    const char *env; /* "off" keeps amp's activations f32 */
    const char *on;  /* the value that narrows what the shared checks expect (the BN+SiLU outputs, the copies) */
    yolo_dtype dtype;
    uint16_t (*to)(float);
    float (*from)(uint16_t);
    double add_tol; /* of the largest magnitude (na_check_close) */
} narrow_kind;

/* the output planes, 48x48, pass 2048: the CPU's batch norm widens bf16 in chunks of that */
enum { NA_N = 2, NA_C = 4, NA_H = 24, NA_W = 24, NA_OUT_C = 6 };
#define NA_OUT_COUNT (NA_N * NA_OUT_C * (2 * NA_H) * (2 * NA_W))
#define NA_X_COUNT (NA_N * NA_C * NA_H * NA_W)

typedef struct na_params {
    yolo_tensor *w[3], *gamma[3], *beta[3], *rm[3], *rv[3];
} na_params;

typedef struct na_net {
    yolo_graph *g;
    yolo_tensor *x, *out, *dy;
    yolo_tensor *cat; /* the concat, to check its dtype */
} na_net;

typedef struct na_result {
    float out[NA_OUT_COUNT];
    float grad[3][NA_OUT_C * 3 * NA_C * 9]; /* room for the largest weight */
    size_t peak;
    int narrowed;
} na_result;

static inline yolo_tensor *na_conv_bn_silu(yolo_graph *g, yolo_tensor *x, const na_params *p, int k, int pad) {
    yolo_conv2d_params cp = {.pad_h = pad, .pad_w = pad};
    yolo_tensor *y = yolo_conv2d(g, x, p->w[k], NULL, &cp);
    return yolo_silu(g, yolo_batch_norm(g, y, p->gamma[k], p->beta[k], p->rm[k], p->rv[k], true, 0.03f, 1e-3f));
}

/* x -> CBS -> split (two slices) -> CBS on the second half (+ that half:
 * the residual add) -> concat of the three -> upsample x2 -> 1x1 CBS (the
 * output, whose gradient the host gives). */
static inline na_net na_build(yolo_backend *be, const na_params *p, bool with_add) {
    na_net n = {0};
    n.g = yolo_graph_new(be);
    int64_t xs[4] = {NA_N, NA_C, NA_H, NA_W};
    n.x = yolo_graph_input(n.g, "x", YOLO_F32, 4, xs);
    yolo_tensor *c1 = na_conv_bn_silu(n.g, n.x, p, 0, 1);
    yolo_tensor *s0 = yolo_slice(n.g, c1, 1, 0, NA_C), *s1 = yolo_slice(n.g, c1, 1, NA_C, NA_C);
    yolo_tensor *c2 = na_conv_bn_silu(n.g, s1, p, 1, 1);
    yolo_tensor *m = with_add ? yolo_add(n.g, s1, c2) : c2;
    yolo_tensor *parts[3] = {s0, s1, m};
    n.cat = yolo_concat(n.g, 3, parts, 1);
    yolo_tensor *u = yolo_upsample_nearest(n.g, n.cat, 2);
    n.out = na_conv_bn_silu(n.g, u, p, 2, 0);
    CHECK(yolo_graph_mark_output(n.g, n.out) == YOLO_OK);
    CHECK(yolo_graph_backward_from(n.g, 1, &n.out, &n.dy) == YOLO_OK);
    CHECK_MSG(yolo_graph_status(n.g) == YOLO_OK, "build: %s", yolo_graph_error(n.g));
    return n;
}

/* One forward and backward with kind->env set to `policy` ("off": f32
 * storage). */
static inline void na_run(yolo_backend *be, const narrow_kind *kind, const na_params *p, bool with_add,
                          const char *policy, bool poison, na_result *r) {
    const bool narrow = strcmp(policy, "off") != 0;
    setenv(kind->env, policy, 1);
    na_net n = na_build(be, p, with_add);
    yolo_graph_set_poison(n.g, poison);
    yolo_graph_plan_info info = {0};
    CHECK(yolo_graph_plan(n.g, &info) == YOLO_OK);
    unsetenv(kind->env);
    r->peak = info.peak_bytes;
    r->narrowed = n.g->narrowed;
    CHECK_MSG(n.out->dtype == YOLO_F32, "a graph output stays f32");
    CHECK_MSG(n.cat->dtype == (narrow ? kind->dtype : YOLO_F32), "concat is %s", yolo_dtype_name(n.cat->dtype));
    float x[NA_X_COUNT], dy[NA_OUT_COUNT];
    test_fill_uniform(x, NA_X_COUNT, 11, -2.0f, 2.0f);
    test_fill_uniform(dy, NA_OUT_COUNT, 12, -1.0f, 1.0f);
    for (int k = 0; k < 3; k++) yolo_tensor_zero(p->w[k]->grad);
    CHECK(yolo_tensor_upload_f32(n.x, x, NA_X_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(n.dy, dy, NA_OUT_COUNT) == YOLO_OK);
    yolo_status st = yolo_graph_run(n.g);
    CHECK_MSG(st == YOLO_OK, "run: %s", yolo_last_error());
    CHECK(yolo_tensor_download_f32(n.out, r->out, NA_OUT_COUNT) == YOLO_OK);
    for (int k = 0; k < 3; k++)
        CHECK(yolo_tensor_download_f32(p->w[k]->grad, r->grad[k], yolo_tensor_numel(p->w[k])) == YOLO_OK);
    yolo_graph_free(n.g);
}

/* The same seeded values on every backend. */
static inline void na_make_params(yolo_backend *be, na_params *p) {
    int64_t ws[3][4] = {{2 * NA_C, NA_C, 3, 3}, {NA_C, NA_C, 3, 3}, {NA_OUT_C, 3 * NA_C, 1, 1}};
    int64_t cs[3] = {2 * NA_C, NA_C, NA_OUT_C};
    for (int k = 0; k < 3; k++) {
        p->w[k] = test_tensor_random(be, "w", 4, ws[k], 100 + k, -0.4f, 0.4f, 1);
        p->gamma[k] = test_tensor_random(be, "gamma", 1, &cs[k], 200 + k, 0.5f, 1.5f, 1);
        p->beta[k] = test_tensor_random(be, "beta", 1, &cs[k], 300 + k, -0.5f, 0.5f, 1);
        p->rm[k] = yolo_tensor_new(be, "rm", YOLO_F32, 1, &cs[k], false);
        p->rv[k] = yolo_tensor_new(be, "rv", YOLO_F32, 1, &cs[k], false);
    }
}

static inline void na_free_params(na_params *p) {
    for (int k = 0; k < 3; k++) {
        yolo_tensor_free(p->w[k]);
        yolo_tensor_free(p->gamma[k]);
        yolo_tensor_free(p->beta[k]);
        yolo_tensor_free(p->rm[k]);
        yolo_tensor_free(p->rv[k]);
    }
}

/* Outputs and weight gradients within tol of their largest magnitude of
 * the f32-storage run. */
static inline void na_check_close(const char *what, const na_result *got, const na_result *want, const na_params *p,
                                  double tol) {
    double e = test_scaled_error(got->out, want->out, NA_OUT_COUNT);
    CHECK_MSG(e <= tol, "%s: outputs differ by %.3g of their largest", what, e);
    double worst = e;
    for (int k = 0; k < 3; k++) {
        double eg = test_scaled_error(got->grad[k], want->grad[k], yolo_tensor_numel(p->w[k]));
        CHECK_MSG(eg <= tol, "%s: weight %d gradients differ by %.3g of their largest", what, k, eg);
        worst = fmax(worst, eg);
    }
    printf("%s: outputs and weight gradients within %.2g of their largest magnitude of f32 storage (tolerance %.0e)\n",
           what, worst, tol);
}

/* With amp on: narrow storage (kind->on) against f32 storage, with and
 * without the residual add; repeat and poisoned runs. The narrowed run
 * without the add goes to *narrowed_out when given. */
static inline void na_test_graph_numerics(yolo_backend *be, const narrow_kind *kind, na_result *narrowed_out) {
    na_params p;
    na_make_params(be, &p);
    static na_result f32, nar, nar_again, poisoned, f32_add, nar_add;
    const char *dt = yolo_dtype_name(kind->dtype);
    na_run(be, kind, &p, false, "off", false, &f32);
    na_run(be, kind, &p, false, kind->on, false, &nar);
    na_run(be, kind, &p, false, kind->on, false, &nar_again);
    na_run(be, kind, &p, false, kind->on, true, &poisoned);
    /* narrowed: c1's SiLU, the two slices, c2's SiLU, the concat, the upsample */
    CHECK_MSG(f32.narrowed == 0 && nar.narrowed == 6, "narrowed %d and %d values", f32.narrowed, nar.narrowed);
    CHECK_MSG(nar.peak < f32.peak, "%s storage: %zu bytes of activations, f32 %zu", dt, nar.peak, f32.peak);
    printf("activations: f32 %zu bytes, %s storage %zu bytes\n", f32.peak, dt, nar.peak);
    /* no add: the convolutions read the values their own conversion made */
    CHECK_MSG(test_differing_bits(f32.out, nar.out, NA_OUT_COUNT) == 0, "%d outputs differ",
              test_differing_bits(f32.out, nar.out, NA_OUT_COUNT));
    for (int k = 0; k < 3; k++) {
        int64_t nw = yolo_tensor_numel(p.w[k]);
        CHECK_MSG(test_differing_bits(f32.grad[k], nar.grad[k], nw) == 0, "weight %d: %d gradients differ", k,
                  test_differing_bits(f32.grad[k], nar.grad[k], nw));
        CHECK(test_differing_bits(nar.grad[k], nar_again.grad[k], nw) == 0);
        CHECK_MSG(test_differing_bits(nar.grad[k], poisoned.grad[k], nw) == 0, "poisoned run: weight %d differs", k);
    }
    CHECK(test_differing_bits(nar.out, nar_again.out, NA_OUT_COUNT) == 0);
    CHECK(test_differing_bits(nar.out, poisoned.out, NA_OUT_COUNT) == 0);
    if (narrowed_out) *narrowed_out = nar;

    /* with the residual add: the add's rounding is the one change */
    na_run(be, kind, &p, true, "off", false, &f32_add);
    na_run(be, kind, &p, true, kind->on, false, &nar_add);
    CHECK_MSG(nar_add.narrowed == 7, "narrowed %d values with the add", nar_add.narrowed);
    CHECK_MSG(test_differing_bits(f32_add.out, nar_add.out, NA_OUT_COUNT) > 0, "the add's rounding changed nothing");
    char what[48];
    snprintf(what, sizeof what, "%s, with the add", kind->on);
    na_check_close(what, &nar_add, &f32_add, &p, kind->add_tol);
    na_free_params(&p);
}

/* The narrow kernels of the copy ops and the add, on narrow graph inputs
 * (exact: copies move the bits, the add rounds the f32 sum once), and a
 * mixed-dtype concat refused with its name. */
static inline void na_test_copy_kernels(yolo_backend *be, const narrow_kind *kind) {
    const yolo_dtype dt = kind->dtype;
    yolo_graph *g = yolo_graph_new(be);
    int64_t s[4] = {1, 3, 2, 5};
    yolo_tensor *a = yolo_graph_input(g, "a", dt, 4, s), *b = yolo_graph_input(g, "b", dt, 4, s);
    yolo_tensor *parts[2] = {a, b};
    yolo_tensor *cat = yolo_concat(g, 2, parts, 1);
    yolo_tensor *sl = yolo_slice(g, cat, 1, 2, 3);
    /* the builders of upsample and add take f32: nodes made by hand, as the
     * planner's narrowing would leave them */
    int64_t us[4] = {1, 3, 4, 10};
    yolo_tensor *up = yolo_graph_node(g, YOLO_OP_UPSAMPLE_NEAREST, dt, 4, us, 1, &sl);
    if (up) up->node->iparams[0] = 2;
    yolo_tensor *src[2] = {a, b};
    yolo_tensor *sum = yolo_graph_node(g, YOLO_OP_ADD, dt, 4, s, 2, src);
    yolo_tensor *outs[4] = {cat, sl, up, sum};
    for (int i = 0; i < 4; i++) CHECK(outs[i] && yolo_graph_mark_output(g, outs[i]) == YOLO_OK);
    CHECK_MSG(cat && sl && up && cat->dtype == dt && sl->dtype == dt && up->dtype == dt, "copies keep the %s dtype",
              yolo_dtype_name(dt));
    float va[30], vb[30];
    test_fill_uniform(va, 30, 21, -3.0f, 3.0f);
    test_fill_uniform(vb, 30, 22, -3.0f, 3.0f);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(a, va, 30) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(b, vb, 30) == YOLO_OK);
    CHECK_MSG(yolo_graph_run(g) == YOLO_OK, "copy kernels: %s", yolo_last_error());
    float got_cat[60], got_sl[30], got_up[120], got_sum[30];
    CHECK(yolo_tensor_download_f32(cat, got_cat, 60) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(sl, got_sl, 30) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(up, got_up, 120) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(sum, got_sum, 30) == YOLO_OK);
    int bad_cat = 0, bad_sl = 0, bad_up = 0, bad_sum = 0;
    for (int c = 0; c < 6; c++)
        for (int i = 0; i < 10; i++) {
            float want = kind->from(kind->to(c < 3 ? va[c * 10 + i] : vb[(c - 3) * 10 + i]));
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
        float sa = kind->from(kind->to(va[i])), sb = kind->from(kind->to(vb[i]));
        bad_sum += got_sum[i] != kind->from(kind->to(sa + sb));
    }
    CHECK_MSG(!bad_cat && !bad_sl && !bad_up && !bad_sum, "wrong values: concat %d, slice %d, upsample %d, add %d",
              bad_cat, bad_sl, bad_up, bad_sum);
    yolo_graph_free(g);

    /* a mixed-dtype concat is refused with its name, not misread */
    g = yolo_graph_new(be);
    yolo_tensor *f = yolo_graph_input(g, "f", YOLO_F32, 4, s), *h = yolo_graph_input(g, "h", dt, 4, s);
    yolo_tensor *mixed_src[2] = {f, h};
    int64_t ms[4] = {1, 6, 2, 5};
    yolo_tensor *mixed = yolo_graph_node(g, YOLO_OP_CONCAT, YOLO_F32, 4, ms, 2, mixed_src);
    mixed->node->iparams[0] = 1;
    CHECK(yolo_graph_mark_output(g, mixed) == YOLO_OK);
    CHECK(yolo_graph_run(g) == YOLO_ERR_SHAPE);
    char want[32];
    snprintf(want, sizeof want, "source 1 is %s", yolo_dtype_name(dt));
    CHECK_MSG(test_error_mentions(want), "error was: %s", yolo_last_error());
    yolo_graph_free(g);
}

#endif
