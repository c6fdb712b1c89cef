/* Channel-blocked activation storage on the CPU backend (core/graph/blocked.c,
 * backend/cpu/kernels_norm_blocked.c): which values the planner blocks, and
 * that blocked graphs compute what plain ones do:
 * - eval (running statistics): outputs bit-identical;
 * - training: outputs, weight, gamma and beta gradients and running
 *   statistics within 1e-5 of their largest magnitude (batch norm's sums
 *   add in another order), bit-reproducible, and still right after the
 *   conv implementation is switched to im2col once planned (blocked
 *   operands stay oneDNN's);
 * - amp (where oneDNN has bf16): with bf16 BN+SiLU outputs, and with bf16
 *   conv outputs that batch norm reads (YOLO_BF16_ACTIVATIONS=all), within
 *   amp's tolerance of plain storage.
 * Each check runs with 8- and 16-channel blocks (nChw8c, AVX2's; nChw16c,
 * AVX-512's), whatever the ISA: oneDNN converts where its kernels want the
 * other, so both kernels' layouts are tested on any CPU. The planes are
 * 11 x 11, odd, so 8-channel blocks end on a half vector
 * (kernels_norm_blocked.c). Skips where the convolutions are not oneDNN's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/conv_common.h"
#include "graph/graph_internal.h"
#include "graph/node.h"
#include "test_util.h"

enum { N = 2, C = 16, H = 11, W = 11, OUT_C = 16, LAYERS = 6 };
#define X_COUNT (N * C * H * W)
#define OUT_COUNT (N * OUT_C * H * W)
#define OUT2_COUNT (N * OUT_C * 2 * H * 2 * W)

typedef struct params {
    yolo_tensor *w[LAYERS], *gamma[LAYERS], *beta[LAYERS], *rm[LAYERS], *rv[LAYERS];
} params;

/* conv k: [out, in, k, k] */
static const int64_t wshape[LAYERS][4] = {
    {2 * C, C, 3, 3}, {C, C, 3, 3}, {2 * C, 3 * C, 1, 1}, {OUT_C, 2 * C, 3, 3}, {OUT_C, 2 * C, 3, 3}, {OUT_C, 2 * C, 3, 3}};

static void make_params(yolo_backend *be, params *p) {
    for (int k = 0; k < LAYERS; k++) {
        int64_t c = wshape[k][0];
        p->w[k] = test_tensor_random(be, "w", 4, wshape[k], 100 + k, -0.3f, 0.3f, 1);
        p->gamma[k] = test_tensor_random(be, "gamma", 1, &c, 200 + k, 0.5f, 1.5f, 1);
        p->beta[k] = test_tensor_random(be, "beta", 1, &c, 300 + k, -0.5f, 0.5f, 1);
        p->rm[k] = test_tensor_random(be, "rm", 1, &c, 400 + k, -0.2f, 0.2f, 0);
        p->rv[k] = test_tensor_random(be, "rv", 1, &c, 500 + k, 0.5f, 1.5f, 0);
    }
}

static void free_params(params *p) {
    for (int k = 0; k < LAYERS; k++) {
        yolo_tensor_free(p->w[k]);
        yolo_tensor_free(p->gamma[k]);
        yolo_tensor_free(p->beta[k]);
        yolo_tensor_free(p->rm[k]);
        yolo_tensor_free(p->rv[k]);
    }
}

typedef struct net {
    yolo_graph *g;
    yolo_tensor *x, *out, *out2, *out3, *dy, *dy2, *dy3;
    yolo_tensor *y0, *c1, *cat, *y2, *c3, *up, *y5, *c5; /* values whose layout the test checks */
} net;

static yolo_tensor *cbs(yolo_graph *g, yolo_tensor *x, const params *p, int k, bool training, yolo_tensor **y) {
    yolo_conv2d_params cp = {.pad_h = (int)wshape[k][2] / 2, .pad_w = (int)wshape[k][3] / 2};
    yolo_tensor *conv = yolo_conv2d(g, x, p->w[k], NULL, &cp);
    if (y) *y = conv;
    return yolo_silu(g, yolo_batch_norm(g, conv, p->gamma[k], p->beta[k], p->rm[k], p->rv[k], training, 0.03f, 1e-3f));
}

/* x -> CBS -> two slices -> CBS on the second (+ that slice) -> concat of
 * the three -> pointwise CBS c3, read by three 3x3 CBS: output 1; output 2
 * after a nearest upsample; and c5, whose max pool (output 3) blocked
 * values cannot pass, so c5 stays plain. */
static net build(yolo_backend *be, const params *p, bool training) {
    net n = {0};
    n.g = yolo_graph_new(be);
    int64_t xs[4] = {N, C, H, W};
    n.x = yolo_graph_input(n.g, "x", YOLO_F32, 4, xs);
    n.c1 = cbs(n.g, n.x, p, 0, training, &n.y0);
    yolo_tensor *s0 = yolo_slice(n.g, n.c1, 1, 0, C), *s1 = yolo_slice(n.g, n.c1, 1, C, C);
    yolo_tensor *c2 = cbs(n.g, s1, p, 1, training, NULL);
    yolo_tensor *parts[3] = {s0, s1, yolo_add(n.g, s1, c2)};
    n.cat = yolo_concat(n.g, 3, parts, 1);
    n.c3 = cbs(n.g, n.cat, p, 2, training, &n.y2);
    n.out = cbs(n.g, n.c3, p, 3, training, NULL);
    n.up = yolo_upsample_nearest(n.g, n.c3, 2);
    n.out2 = cbs(n.g, n.up, p, 4, training, NULL);
    n.c5 = cbs(n.g, n.c3, p, 5, training, &n.y5);
    n.out3 = yolo_maxpool2d(n.g, n.c5, 3, 1, 1);
    CHECK(yolo_graph_mark_output(n.g, n.out) == YOLO_OK && yolo_graph_mark_output(n.g, n.out2) == YOLO_OK &&
          yolo_graph_mark_output(n.g, n.out3) == YOLO_OK);
    if (training) {
        yolo_tensor *outs[3] = {n.out, n.out2, n.out3}, *dys[3] = {NULL, NULL, NULL};
        CHECK(yolo_graph_backward_from(n.g, 3, outs, dys) == YOLO_OK);
        n.dy = dys[0], n.dy2 = dys[1], n.dy3 = dys[2];
    }
    CHECK_MSG(yolo_graph_status(n.g) == YOLO_OK, "build: %s", yolo_graph_error(n.g));
    return n;
}

typedef struct result {
    float out[OUT_COUNT], out2[OUT2_COUNT], out3[OUT_COUNT];
    float grad[LAYERS][2 * C * C * 9], dgamma[LAYERS][2 * C], dbeta[LAYERS][2 * C], rm[LAYERS][2 * C]; /* room for the largest weight */
    int blocked;
} result;

static void download_grads(const params *p, result *r) {
    for (int k = 0; k < LAYERS; k++) {
        CHECK(yolo_tensor_download_f32(p->w[k]->grad, r->grad[k], yolo_tensor_numel(p->w[k])) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(p->gamma[k]->grad, r->dgamma[k], wshape[k][0]) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(p->beta[k]->grad, r->dbeta[k], wshape[k][0]) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(p->rm[k], r->rm[k], wshape[k][0]) == YOLO_OK);
    }
}

/* One run; `block` is the channel block when the graph is planned (0:
 * plain); `im2col_after_plan` switches the conv implementation before running. */
static void run(yolo_backend *be, params *p, bool training, int block, bool im2col_after_plan, result *r) {
    /* the same running statistics before every run */
    for (int k = 0; k < LAYERS; k++) {
        int64_t c = wshape[k][0];
        float rm[2 * C], rv[2 * C];
        test_fill_uniform(rm, c, 400 + k, -0.2f, 0.2f);
        test_fill_uniform(rv, c, 500 + k, 0.5f, 1.5f);
        CHECK(yolo_tensor_upload_f32(p->rm[k], rm, c) == YOLO_OK && yolo_tensor_upload_f32(p->rv[k], rv, c) == YOLO_OK);
        yolo_tensor_zero(p->w[k]->grad);
        yolo_tensor_zero(p->gamma[k]->grad);
        yolo_tensor_zero(p->beta[k]->grad);
    }
    yolo_conv_onednn_set_channel_block(block);
    net n = build(be, p, training);
    yolo_graph_plan_info info = {0};
    CHECK_MSG(yolo_graph_plan(n.g, &info) == YOLO_OK, "plan: %s", yolo_last_error());
    yolo_conv_onednn_set_channel_block(-1);
    r->blocked = n.g->blocked;
    if (block) { /* the values between convolutions, batch norm and the copies; not the boundaries */
        CHECK_MSG(n.y0->node->block == block && n.c1->node->block == block && n.cat->node->block == block &&
                      n.y2->node->block == block && n.c3->node->block == block && n.up->node->block == block,
                  "block %d: conv output %d, BN+SiLU value %d, concat %d, pointwise conv output %d and its BN+SiLU %d, "
                  "upsample %d", block, n.y0->node->block, n.c1->node->block, n.cat->node->block,
                  n.y2->node->block, n.c3->node->block, n.up->node->block);
        CHECK_MSG(!n.x->node->block && !n.out->node->block && !n.out2->node->block && !n.out3->node->block,
                  "an input or output is blocked");
        CHECK_MSG(!n.y5->node->block && !n.c5->node->block, "the CBS the max pool reads is blocked");
    }
    float x[X_COUNT];
    test_fill_uniform(x, X_COUNT, 11, -2.0f, 2.0f);
    CHECK(yolo_tensor_upload_f32(n.x, x, X_COUNT) == YOLO_OK);
    if (training) {
        static float dy[OUT_COUNT], dy2[OUT2_COUNT], dy3[OUT_COUNT];
        test_fill_uniform(dy, OUT_COUNT, 12, -1.0f, 1.0f);
        test_fill_uniform(dy2, OUT2_COUNT, 13, -1.0f, 1.0f);
        test_fill_uniform(dy3, OUT_COUNT, 14, -1.0f, 1.0f);
        CHECK(yolo_tensor_upload_f32(n.dy, dy, OUT_COUNT) == YOLO_OK);
        CHECK(yolo_tensor_upload_f32(n.dy2, dy2, OUT2_COUNT) == YOLO_OK);
        CHECK(yolo_tensor_upload_f32(n.dy3, dy3, OUT_COUNT) == YOLO_OK);
    }
    if (im2col_after_plan) yolo_conv_set_impl(YOLO_CONV_IMPL_IM2COL);
    yolo_status st = yolo_graph_run(n.g);
    yolo_conv_set_impl(YOLO_CONV_IMPL_DEFAULT);
    CHECK_MSG(st == YOLO_OK, "run: %s", yolo_last_error());
    CHECK(yolo_tensor_download_f32(n.out, r->out, OUT_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(n.out2, r->out2, OUT2_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(n.out3, r->out3, OUT_COUNT) == YOLO_OK);
    if (training) download_grads(p, r);
    yolo_graph_free(n.g);
}

static bool same_bits(const result *a, const result *b, bool training) {
    if (test_differing_bits(a->out, b->out, OUT_COUNT) || test_differing_bits(a->out2, b->out2, OUT2_COUNT) ||
        test_differing_bits(a->out3, b->out3, OUT_COUNT))
        return false;
    if (!training) return true;
    return memcmp(a->grad, b->grad, sizeof a->grad) == 0 && memcmp(a->dgamma, b->dgamma, sizeof a->dgamma) == 0 &&
           memcmp(a->dbeta, b->dbeta, sizeof a->dbeta) == 0 && memcmp(a->rm, b->rm, sizeof a->rm) == 0;
}

static double worst_error(const result *got, const result *want) {
    double e = fmax(test_scaled_error(got->out, want->out, OUT_COUNT), test_scaled_error(got->out2, want->out2, OUT2_COUNT));
    e = fmax(e, test_scaled_error(got->out3, want->out3, OUT_COUNT));
    for (int k = 0; k < LAYERS; k++) {
        int64_t c = wshape[k][0], nw = c * wshape[k][1] * wshape[k][2] * wshape[k][3];
        e = fmax(e, test_scaled_error(got->grad[k], want->grad[k], nw));
        e = fmax(e, test_scaled_error(got->dgamma[k], want->dgamma[k], c));
        e = fmax(e, test_scaled_error(got->dbeta[k], want->dbeta[k], c));
        e = fmax(e, test_scaled_error(got->rm[k], want->rm[k], c));
    }
    return e;
}

static void test_eval(yolo_backend *be, params *p, int block) {
    static result plain, blocked;
    run(be, p, false, 0, false, &plain);
    run(be, p, false, block, false, &blocked);
    CHECK_MSG(plain.blocked == 0 && blocked.blocked > 0, "eval: blocked %d and %d values", plain.blocked,
              blocked.blocked);
    CHECK_MSG(same_bits(&blocked, &plain, false), "eval: %d and %d outputs differ from plain storage",
              test_differing_bits(blocked.out, plain.out, OUT_COUNT), test_differing_bits(blocked.out2, plain.out2, OUT2_COUNT));
    printf("eval, block %d: %d values blocked, outputs bit-identical to plain storage\n", block, blocked.blocked);
}

static void test_training(yolo_backend *be, params *p, int block) {
    static result plain, blocked, again, im2col;
    run(be, p, true, 0, false, &plain);
    run(be, p, true, block, false, &blocked);
    run(be, p, true, block, false, &again);
    run(be, p, true, block, true, &im2col);
    CHECK_MSG(plain.blocked == 0 && blocked.blocked > 0, "training: blocked %d and %d values", plain.blocked,
              blocked.blocked);
    double e = worst_error(&blocked, &plain);
    CHECK_MSG(e <= 1e-5, "training: blocked storage differs from plain by %.3g of the largest magnitude", e);
    CHECK_MSG(same_bits(&blocked, &again, true), "training: a second blocked run differs");
    /* the convolutions with plain operands now run im2col (other sums); blocked ones stay oneDNN's */
    double ei = worst_error(&im2col, &blocked);
    CHECK_MSG(ei <= 1e-5, "training: switched to im2col once planned, %.3g from the blocked run", ei);
    printf("training, block %d: %d values blocked; outputs, gradients and running means within %.2g of plain "
           "storage (tolerance 1e-5); reproducible\n", block, blocked.blocked, e);
}

/* amp: both bf16 storage policies, blocked against plain */
static void test_amp(yolo_backend *be, params *p, int block) {
    if (!yolo_backend_set_amp(be, true)) {
        printf("amp: this CPU runs fp32 (%s): no bf16 blocked values to test\n", yolo_backend_precision(be));
        return;
    }
    static const char *policies[2] = {"silu", "all"};
    for (int k = 0; k < 2; k++) {
        static result plain, blocked;
        setenv("YOLO_BF16_ACTIVATIONS", policies[k], 1);
        run(be, p, true, 0, false, &plain);
        run(be, p, true, block, false, &blocked);
        unsetenv("YOLO_BF16_ACTIVATIONS");
        double e = worst_error(&blocked, &plain);
        /* bf16 rounding of values whose batch statistics moved by an ulp */
        CHECK_MSG(blocked.blocked > 0 && e <= 3e-2, "amp (%s), block %d: %d blocked, %.3g from plain storage",
                  policies[k], block, blocked.blocked, e);
        printf("amp (bf16 activations %s), block %d: blocked within %.2g of plain storage (tolerance 3e-2)\n",
               policies[k], block, e);
    }
    yolo_backend_set_amp(be, false);
}

int main(void) {
    if (yolo_conv_current_impl() != YOLO_CONV_IMPL_ONEDNN)
        return test_skip("the convolutions here are not oneDNN's (YOLO_CONV_IMPL): nothing is stored blocked");
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) return test_skip("no CPU backend");
    const int isa_block = yolo_conv_onednn_channel_block();
    CHECK_MSG(yolo_backend_channel_block(be) == isa_block, "the backend blocks by %d, oneDNN's convolutions by %d",
              yolo_backend_channel_block(be), isa_block);
    printf("oneDNN's convolutions here block by %d channels\n", isa_block);
    params p;
    make_params(be, &p);
    static const int blocks[2] = {8, 16};
    for (int k = 0; k < 2; k++) {
        test_eval(be, &p, blocks[k]);
        test_training(be, &p, blocks[k]);
        test_amp(be, &p, blocks[k]);
    }
    yolo_conv_set_impl(YOLO_CONV_IMPL_IM2COL);
    CHECK_MSG(yolo_backend_channel_block(be) == 0, "im2col plans blocked values");
    yolo_conv_set_impl(YOLO_CONV_IMPL_DEFAULT);
    free_params(&p);
    yolo_backend_free(be);
    return test_result("test_blocked_activations");
}
