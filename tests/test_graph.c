/* Graph engine: memory planning by liveness, poisoning of freed memory,
 * bit-identical repeated runs, gradient accumulation into parameters, and
 * error reporting of builders. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_test_util.h"

/* A small network with branches, a residual and a concat: the C2f pattern. */
typedef struct net {
    yolo_graph *g;
    yolo_tensor *x, *loss, *out;
} net;

static net build_net(yolo_backend *be, yolo_tensor *w1, yolo_tensor *w2, yolo_tensor *gamma, yolo_tensor *beta,
                     yolo_tensor *rm, yolo_tensor *rv, bool backward) {
    net n = {0};
    n.g = yolo_graph_new(be);
    int64_t xs[4] = {2, 4, 9, 7};
    n.x = yolo_graph_input(n.g, "x", YOLO_F32, 4, xs);
    yolo_tensor *a = yolo_conv2d(n.g, n.x, w1, NULL, &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
    a = yolo_silu(n.g, yolo_batch_norm(n.g, a, gamma, beta, rm, rv, true, 0.03f, 1e-3f));
    yolo_tensor *parts[2];
    yolo_chunk(n.g, a, 2, 1, parts);
    yolo_tensor *b = yolo_silu(n.g, yolo_conv2d(n.g, parts[1], w2, NULL, &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1}));
    b = yolo_add(n.g, b, parts[1]);
    yolo_tensor *cat_in[3] = {parts[0], parts[1], b};
    yolo_tensor *c = yolo_concat(n.g, 3, cat_in, 1);
    yolo_tensor *p = yolo_maxpool2d(n.g, c, 3, 1, 1);
    yolo_tensor *u = yolo_upsample_nearest(n.g, p, 2);
    n.out = yolo_mul(n.g, u, u);
    n.loss = yolo_mean(n.g, n.out);
    yolo_graph_mark_output(n.g, n.loss);
    yolo_graph_mark_output(n.g, n.out);
    if (backward) CHECK(yolo_graph_backward(n.g, n.loss) == YOLO_OK);
    return n;
}

typedef struct net_params {
    yolo_tensor *w1, *w2, *gamma, *beta, *rm, *rv;
} net_params;

/* The net planned with `env` set (the planner's fold, or all its fusion,
 * off) has one `op` node the default plan fused away, and gives the
 * default plan's loss and w1 gradient to the bit. */
static void same_bits_without(yolo_backend *be, const net_params *p, const float *x, const char *env, int op,
                              float loss, const float *grad) {
    yolo_tensor_zero(p->w1->grad);
    setenv(env, "1", 1);
    net n = build_net(be, p->w1, p->w2, p->gamma, p->beta, p->rm, p->rv, true);
    CHECK(yolo_graph_plan(n.g, NULL) == YOLO_OK);
    unsetenv(env);
    int count = 0;
    for (int i = 0; i < n.g->n_nodes; i++) count += n.g->nodes[i]->node->op == op;
    CHECK_MSG(count == 1, "%s: %d %s nodes", env, count, yolo_op_name(op));
    yolo_tensor_upload_f32(n.x, x, 2 * 4 * 9 * 7);
    float l = 0, g[4 * 4 * 9];
    CHECK(yolo_graph_run(n.g) == YOLO_OK);
    yolo_tensor_download_f32(n.loss, &l, 1);
    yolo_tensor_download_f32(p->w1->grad, g, 4 * 4 * 9);
    CHECK_MSG(memcmp(&loss, &l, sizeof l) == 0, "%s: loss %g vs %g", env, (double)l, (double)loss);
    CHECK_MSG(memcmp(grad, g, sizeof g) == 0, "%s: the gradient changed", env);
    yolo_graph_free(n.g);
}

static void test_planning_and_runs(yolo_backend *be) {
    int64_t s1[4] = {4, 4, 3, 3}, s2[4] = {2, 2, 3, 3}, sc[1] = {4};
    yolo_tensor *w1 = test_tensor_random(be, "w1", 4, s1, 1, -0.5f, 0.5f, 1);
    yolo_tensor *w2 = test_tensor_random(be, "w2", 4, s2, 2, -0.5f, 0.5f, 1);
    yolo_tensor *gamma = test_tensor_random(be, "gamma", 1, sc, 3, 0.5f, 1.5f, 1);
    yolo_tensor *beta = test_tensor_random(be, "beta", 1, sc, 4, -0.5f, 0.5f, 1);
    yolo_tensor *rm = yolo_tensor_new(be, "rm", YOLO_F32, 1, sc, false);
    yolo_tensor *rv = yolo_tensor_new(be, "rv", YOLO_F32, 1, sc, false);
    float ones[4] = {1, 1, 1, 1};
    yolo_tensor_upload_f32(rv, ones, 4);

    float x[2 * 4 * 9 * 7];
    test_fill_uniform(x, 2 * 4 * 9 * 7, 5, -1.0f, 1.0f);

    net plain = build_net(be, w1, w2, gamma, beta, rm, rv, true);
    yolo_graph_plan_info info;
    CHECK(yolo_graph_plan(plain.g, &info) == YOLO_OK);
    CHECK_MSG(info.peak_bytes < info.naive_bytes, "peak %zu should be below naive %zu", info.peak_bytes,
              info.naive_bytes);
    printf("planned %d nodes: peak %zu bytes (without reuse %zu)\n", info.n_nodes, info.peak_bytes, info.naive_bytes);
    test_check_no_live_overlap(plain.g);

    yolo_tensor_upload_f32(plain.x, x, 2 * 4 * 9 * 7);
    float loss1 = 0, loss2 = 0;
    CHECK(yolo_graph_run(plain.g) == YOLO_OK);
    yolo_tensor_download_f32(plain.loss, &loss1, 1);
    float g1[4 * 4 * 9];
    yolo_tensor_download_f32(w1->grad, g1, 4 * 4 * 9);

    /* a second run is bit-identical and accumulates the gradient again */
    CHECK(yolo_graph_run(plain.g) == YOLO_OK);
    yolo_tensor_download_f32(plain.loss, &loss2, 1);
    CHECK(memcmp(&loss1, &loss2, sizeof loss1) == 0);
    float g2[4 * 4 * 9];
    yolo_tensor_download_f32(w1->grad, g2, 4 * 4 * 9);
    int doubled = 1;
    for (int i = 0; i < 4 * 4 * 9; i++)
        if (g2[i] != 2.0f * g1[i]) doubled = 0;
    CHECK_MSG(doubled, "a second backward run must accumulate exactly the same gradient");
    CHECK(isfinite(loss1) && loss1 > 0.0f);

    /* the same graph with every dead buffer poisoned gives the same loss */
    yolo_tensor_zero(w1->grad);
    net poisoned = build_net(be, w1, w2, gamma, beta, rm, rv, true);
    yolo_graph_set_poison(poisoned.g, true);
    CHECK(yolo_graph_plan(poisoned.g, NULL) == YOLO_OK);
    yolo_tensor_upload_f32(poisoned.x, x, 2 * 4 * 9 * 7);
    float loss3 = 0;
    CHECK(yolo_graph_run(poisoned.g) == YOLO_OK);
    yolo_tensor_download_f32(poisoned.loss, &loss3, 1);
    float g3[4 * 4 * 9];
    yolo_tensor_download_f32(w1->grad, g3, 4 * 4 * 9);
    CHECK_MSG(memcmp(&loss1, &loss3, sizeof loss1) == 0, "poisoned run: loss %g vs %g", (double)loss3, (double)loss1);
    CHECK_MSG(memcmp(g1, g3, sizeof g1) == 0, "poisoned run changed the gradient");

    /* The planner fused batch norm + SiLU (BN_SILU, BN_SILU_BWD, the latter
     * folded into BN_BWD on the CPU) and autograd batch norm's backward
     * (BN_BWD) and the chunk's gradient (no SLICE_BWD); with the planner's
     * fold or all its fusion off the loss and the gradient keep their bits. */
    int fused[YOLO_OP_COUNT] = {0}, folded = 0;
    for (int i = 0; i < plain.g->n_nodes; i++) {
        fused[plain.g->nodes[i]->node->op]++;
        folded += plain.g->nodes[i]->node->op == YOLO_OP_BN_BWD && plain.g->nodes[i]->node->n_src == 5;
    }
    CHECK_MSG(folded == 1, "BN_SILU_BWD folded into %d BN_BWD nodes", folded);
    CHECK_MSG(fused[YOLO_OP_BN_SILU] == 1 && fused[YOLO_OP_BN_SILU_BWD] == 0 && fused[YOLO_OP_BN_BWD] == 1 &&
                  fused[YOLO_OP_BN_APPLY] == 0 && fused[YOLO_OP_SLICE_BWD] == 0 && fused[YOLO_OP_BN_STATS_BWD] == 0,
              "fused graph: BN_SILU %d, BN_SILU_BWD %d, BN_BWD %d, BN_APPLY %d, SLICE_BWD %d, BN_STATS_BWD %d",
              fused[YOLO_OP_BN_SILU], fused[YOLO_OP_BN_SILU_BWD], fused[YOLO_OP_BN_BWD], fused[YOLO_OP_BN_APPLY],
              fused[YOLO_OP_SLICE_BWD], fused[YOLO_OP_BN_STATS_BWD]);
    same_bits_without(be, &(net_params){w1, w2, gamma, beta, rm, rv}, x, "YOLO_GRAPH_NO_FOLD", YOLO_OP_BN_SILU_BWD,
                      loss1, g1);
    same_bits_without(be, &(net_params){w1, w2, gamma, beta, rm, rv}, x, "YOLO_GRAPH_NO_FUSION", YOLO_OP_BN_APPLY,
                      loss1, g1);

    yolo_graph_free(plain.g);
    yolo_graph_free(poisoned.g);
    yolo_tensor *all[] = {w1, w2, gamma, beta, rm, rv};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) yolo_tensor_free(all[i]);
}

static void test_builder_errors(yolo_backend *be) {
    yolo_graph *g = yolo_graph_new(be);
    int64_t sa[2] = {2, 3}, sb[2] = {4, 5};
    yolo_tensor *a = yolo_graph_input(g, "a", YOLO_F32, 2, sa);
    yolo_tensor *b = yolo_graph_input(g, "b", YOLO_F32, 2, sb);
    CHECK(yolo_add(g, a, b) == NULL);
    CHECK(yolo_graph_status(g) == YOLO_ERR_SHAPE);
    CHECK_MSG(strstr(yolo_graph_error(g), "add") && strstr(yolo_graph_error(g), "f32[2,3]") &&
                  strstr(yolo_graph_error(g), "f32[4,5]"),
              "message was: %s", yolo_graph_error(g));
    /* later builders given NULL keep the first message */
    CHECK(yolo_silu(g, NULL) == NULL);
    CHECK(strstr(yolo_graph_error(g), "add") != NULL);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_ERR_SHAPE);
    yolo_graph_free(g);

    g = yolo_graph_new(be);
    int64_t sx[4] = {1, 3, 8, 8}, sw[4] = {4, 5, 3, 3};
    yolo_tensor *x = yolo_graph_input(g, "x", YOLO_F32, 4, sx);
    yolo_tensor *w = yolo_tensor_new(be, "w", YOLO_F32, 4, sw, true);
    CHECK(yolo_conv2d(g, x, w, NULL, NULL) == NULL);
    CHECK_MSG(strstr(yolo_graph_error(g), "conv2d") && strstr(yolo_graph_error(g), "f32[1,3,8,8]") &&
                  strstr(yolo_graph_error(g), "f32[4,5,3,3]"),
              "message was: %s", yolo_graph_error(g));
    yolo_graph_free(g);
    yolo_tensor_free(w);

    /* uploading the wrong number of bytes is refused, naming the tensor */
    g = yolo_graph_new(be);
    yolo_tensor *in = yolo_graph_input(g, "images", YOLO_F32, 2, sa);
    yolo_tensor *out = yolo_scale(g, in, 2.0f);
    yolo_graph_mark_output(g, out);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_OK);
    float data[7] = {0};
    CHECK(yolo_tensor_upload(in, data, sizeof data) == YOLO_ERR_SHAPE);
    CHECK(test_error_mentions("images"));
    yolo_graph_free(g);
}

/* yolo_accumulate: dst += x into a persistent tensor; a graph node or another shape is refused. */
static void test_accumulate(yolo_backend *be) {
    int64_t s3[1] = {3}, s4[1] = {4};
    yolo_tensor *dst = yolo_tensor_new(be, "dst", YOLO_F32, 1, s3, false);
    float init[3] = {1, 2, 3}, add[3] = {0.5f, -2, 10}, got[3] = {0};
    CHECK(dst && yolo_tensor_upload_f32(dst, init, 3) == YOLO_OK);
    yolo_graph *g = yolo_graph_new(be);
    yolo_tensor *x = yolo_graph_input(g, "x", YOLO_F32, 1, s3);
    CHECK(yolo_accumulate(g, dst, x) != NULL);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_OK && yolo_tensor_upload_f32(x, add, 3) == YOLO_OK);
    CHECK(yolo_graph_run(g) == YOLO_OK && yolo_graph_run(g) == YOLO_OK); /* twice: 1 + 2 * 0.5, ... */
    CHECK(yolo_tensor_download_f32(dst, got, 3) == YOLO_OK && got[0] == 2 && got[1] == -2 && got[2] == 23);
    yolo_graph_free(g);
    g = yolo_graph_new(be);
    x = yolo_graph_input(g, "x", YOLO_F32, 1, s4);
    CHECK(yolo_accumulate(g, dst, x) == NULL && yolo_graph_status(g) == YOLO_ERR_SHAPE);
    CHECK_MSG(strstr(yolo_graph_error(g), "accumulate") && strstr(yolo_graph_error(g), "f32[4]") &&
                  strstr(yolo_graph_error(g), "'dst'"),
              "message was: %s", yolo_graph_error(g));
    yolo_graph_free(g);
    g = yolo_graph_new(be);
    x = yolo_graph_input(g, "x", YOLO_F32, 1, s3);
    CHECK(yolo_accumulate(g, yolo_scale(g, x, 2.0f), x) == NULL && yolo_graph_status(g) == YOLO_ERR_ARG);
    yolo_graph_free(g);
    yolo_tensor_free(dst);
}

/* An input added after other nodes (a loss weight, a learning rate) is
 * uploaded before the run: no earlier node's buffer may share its bytes.
 * Regression: the planner placed it by its position in the node order, so
 * the scaled copies below overwrote it with their own values. */
static void test_late_input(yolo_backend *be) {
    enum { LEN = 256 };
    int64_t s[1] = {LEN};
    yolo_graph *g = yolo_graph_new(be);
    yolo_tensor *x = yolo_graph_input(g, "x", YOLO_F32, 1, s);
    yolo_tensor *h = yolo_scale(g, x, 2.0f);
    for (int i = 0; i < 4; i++) h = yolo_scale(g, yolo_relu(g, h), 1.0f); /* dead buffers to reuse */
    yolo_tensor *late = yolo_graph_input(g, "late", YOLO_F32, 1, s);
    yolo_tensor *loss = yolo_sum(g, yolo_mul(g, h, late));
    CHECK(yolo_graph_mark_output(g, loss) == YOLO_OK);
    yolo_graph_set_poison(g, true);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_OK);
    test_check_no_live_overlap(g);
    float xv[LEN], wv[LEN], got = 0;
    double want = 0;
    for (int i = 0; i < LEN; i++) {
        xv[i] = (float)(i % 7) * 0.25f;
        wv[i] = (float)(i % 5) - 2.0f;
        want += 2.0 * xv[i] * wv[i];
    }
    CHECK(yolo_tensor_upload_f32(x, xv, LEN) == YOLO_OK && yolo_tensor_upload_f32(late, wv, LEN) == YOLO_OK);
    CHECK(yolo_graph_run(g) == YOLO_OK && yolo_tensor_download_f32(loss, &got, 1) == YOLO_OK);
    CHECK_MSG(fabs(got - want) <= 1e-4 * fabs(want), "late input: loss %g, want %g", (double)got, want);
    yolo_graph_free(g);
}

static void test_f16_conversion(void) {
    const float values[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.33325195f};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        CHECK_MSG(yolo_f16_to_f32(yolo_f32_to_f16(values[i])) == values[i], "f16 round trip of %g", (double)values[i]);
    CHECK(yolo_f32_to_f16(1e6f) == 0x7c00); /* overflow to inf */
    CHECK(yolo_f32_to_f16(1.0f + 1.0f / 4096.0f) == 0x3c00); /* ties to even */
}

int main(void) {
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    test_f16_conversion();
    test_builder_errors(be);
    test_accumulate(be);
    test_planning_and_runs(be);
    test_late_input(be);
    yolo_backend_free(be);
    return test_result("test_graph");
}
