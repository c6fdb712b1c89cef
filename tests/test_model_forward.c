/* Model forwards on the CPU backend: the yaml's `activation:` changes what
 * Conv computes while an explicit per-layer activation keeps its own, BN
 * fusing preserves the eval output, and the heads produce well-formed
 * outputs (probabilities sum to 1, boxes decode inside the image). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "yolo/model.h"

static yolo_backend *be;

static yolo_model *load(const char *name, const char *text, uint64_t seed) {
    yolo_model_options opt = {.seed = seed};
    yolo_model *m = NULL;
    yolo_status st = text ? yolo_model_load_text(name, text, strlen(text), be, &opt, &m)
                          : yolo_model_load(name, be, &opt, &m);
    CHECK_MSG(!st, "%s: %s", name, yolo_last_error());
    return m;
}

/* Runs the model on `input` ([n,3,h,w]) and downloads output `which`
 * into a malloc'd buffer (*count values). */
static float *run(yolo_model *m, bool training, int n, int h, int w, const float *input, int which, int64_t *count,
                  int64_t *shape_out) {
    yolo_graph *g = yolo_graph_new(be);
    int64_t shape[4] = {n, 3, h, w};
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    float *data = NULL;
    yolo_graph_plan_info info;
    if (yolo_model_forward(m, g, x, training, &out) || which >= out.n || yolo_graph_mark_output(g, out.t[which]) ||
        yolo_graph_plan(g, &info) || yolo_tensor_upload_f32(x, input, (int64_t)n * 3 * h * w) || yolo_graph_run(g)) {
        CHECK_MSG(0, "forward: %s", yolo_last_error());
    } else {
        *count = yolo_tensor_numel(out.t[which]);
        if (shape_out)
            for (int i = 0; i < 4; i++) shape_out[i] = i < out.t[which]->ndim ? out.t[which]->shape[i] : 1;
        data = malloc(sizeof(float) * (size_t)*count);
        if (yolo_tensor_download_f32(out.t[which], data, *count)) {
            CHECK_MSG(0, "download: %s", yolo_last_error());
            free(data);
            data = NULL;
        }
    }
    yolo_graph_free(g);
    return data;
}

static const char conv_default[] = "nc: 2\nbackbone:\n  - [-1, 1, Conv, [8, 3, 1]]\n";
static const char conv_relu[] = "nc: 2\nactivation: nn.ReLU()\nbackbone:\n  - [-1, 1, Conv, [8, 3, 1]]\n";
static const char conv_relu_explicit_silu[] = "nc: 2\nactivation: nn.ReLU()\nbackbone:\n"
                                              "  - [-1, 1, Conv, [8, 3, 1, None, 1, 1, nn.SiLU()]]\n";

static void test_activation(void) {
    yolo_model *a = load("default.yaml", conv_default, 5), *b = load("relu.yaml", conv_relu, 5),
               *c = load("explicit.yaml", conv_relu_explicit_silu, 5);
    float input[3 * 16 * 16];
    test_fill_uniform(input, 3 * 16 * 16, 11, -1.0f, 1.0f);
    int64_t na = 0, nb = 0, nc = 0;
    float *ya = a ? run(a, false, 1, 16, 16, input, 0, &na, NULL) : NULL;
    float *yb = b ? run(b, false, 1, 16, 16, input, 0, &nb, NULL) : NULL;
    float *yc = c ? run(c, false, 1, 16, 16, input, 0, &nc, NULL) : NULL;
    if (ya && yb && yc) {
        CHECK(na == 8 * 16 * 16 && nb == na && nc == na);
        int negative_a = 0, negative_b = 0, differ = 0;
        double max_ac = 0;
        for (int64_t i = 0; i < na; i++) {
            negative_a += ya[i] < 0;
            negative_b += yb[i] < 0;
            differ += fabsf(ya[i] - yb[i]) > 1e-6f;
            max_ac = fmax(max_ac, fabs(ya[i] - yc[i]));
            /* same weights: ReLU(z) vs SiLU(z) = z*sigmoid(z) from the same z */
            if (yb[i] > 0) CHECK(fabsf(ya[i] - yb[i] / (1.0f + expf(-yb[i]))) < 1e-4f);
        }
        CHECK_MSG(negative_a > 0 && negative_b == 0 && differ > 0, "SiLU negatives %d, ReLU negatives %d, differ %d",
                  negative_a, negative_b, differ);
        CHECK_MSG(max_ac < 1e-6, "explicit nn.SiLU() under activation: nn.ReLU() differs from SiLU by %g", max_ac);
    }
    free(ya), free(yb), free(yc);
    yolo_model_free(a), yolo_model_free(b), yolo_model_free(c);
}

/* Random BN statistics and affine parameters so that fusing has work to do. */
static void randomize_bn(yolo_model *m) {
    for (int i = 0; i < yolo_model_tensor_count(m); i++) {
        yolo_tensor *t = yolo_model_tensor_at(m, i)->tensor;
        const char *name = t->name;
        size_t len = strlen(name);
        if (len < 8 || !strstr(name, ".bn.")) continue;
        int64_t n = yolo_tensor_numel(t);
        float *v = malloc(sizeof(float) * (size_t)n);
        bool var = strstr(name, "running_var") != NULL, gamma = !strcmp(name + len - 7, ".weight");
        test_fill_uniform(v, n, (uint64_t)i * 7919u, var || gamma ? 0.5f : -0.2f, var || gamma ? 1.5f : 0.2f);
        yolo_tensor_upload_f32(t, v, n);
        free(v);
    }
}

static void test_fuse_and_heads(void) {
    const yolo_task *task;
    if (yolo_plugin_load_task("detect", &task) || yolo_plugin_load_task("segment", &task) ||
        yolo_plugin_load_task("classify", &task)) {
        CHECK_MSG(0, "plugins: %s", yolo_last_error());
        return;
    }
    float *input = malloc(sizeof(float) * 2 * 3 * 64 * 64);
    test_fill_uniform(input, 2 * 3 * 64 * 64, 3, 0.0f, 1.0f);
    /* detect: eval output before and after fusing */
    yolo_model *m = load("yolov8n.yaml", NULL, 0);
    if (m) {
        randomize_bn(m);
        int64_t n0 = 0, n1 = 0, shape[4];
        float *y0 = run(m, false, 2, 64, 64, input, 0, &n0, shape);
        CHECK(shape[0] == 2 && shape[1] == 84 && shape[2] == 84);
        CHECK_MSG(!yolo_model_fuse(m), "%s", yolo_last_error());
        float *y1 = run(m, false, 2, 64, 64, input, 0, &n1, NULL);
        if (y0 && y1 && n0 == n1) {
            CHECK_MSG(test_max_rel_error(y1, y0, n0, 1e-3, 1e-3) <= 1, "fused output differs (max rel %g)",
                      test_max_rel_error(y1, y0, n0, 1e-3, 1e-3));
            /* boxes: centres inside the 64x64 image, positive sizes; scores in (0, 1) */
            int bad = 0;
            for (int64_t a = 0; a < 84; a++) {
                float cx = y0[0 * 84 + a], cy = y0[1 * 84 + a], bw = y0[2 * 84 + a], sc = y0[4 * 84 + a];
                bad += !(cx > -32 && cx < 96 && cy > -32 && cy < 96 && bw > 0 && sc > 0 && sc < 1);
            }
            CHECK_MSG(bad == 0, "%d anchors decode to implausible boxes", bad);
        }
        free(y0), free(y1);
        yolo_model_free(m);
    }
    /* segment: training outputs and the eval concatenation */
    m = load("yolov8n-seg.yaml", NULL, 0);
    if (m) {
        int64_t n = 0, shape[4];
        float *p = run(m, true, 2, 64, 64, input, 4, &n, shape); /* prototypes */
        CHECK(shape[0] == 2 && shape[1] == 32 && shape[2] == 16 && shape[3] == 16);
        free(p);
        float *y = run(m, false, 2, 64, 64, input, 0, &n, shape);
        CHECK(shape[1] == 4 + 80 + 32 && shape[2] == 84);
        free(y);
        yolo_model_free(m);
    }
    /* classify: eval probabilities sum to 1 */
    m = load("yolov8n-cls.yaml", NULL, 0);
    if (m) {
        int64_t n = 0;
        float *y = run(m, false, 2, 64, 64, input, 0, &n, NULL);
        if (y && n == 2000) {
            double s0 = 0, s1 = 0;
            for (int i = 0; i < 1000; i++) s0 += y[i], s1 += y[1000 + i];
            CHECK_MSG(fabs(s0 - 1) < 1e-4 && fabs(s1 - 1) < 1e-4, "softmax sums %g %g", s0, s1);
        }
        free(y);
        float *logits = run(m, true, 2, 64, 64, input, 0, &n, NULL);
        CHECK(logits && n == 2000);
        free(logits);
        yolo_model_free(m);
    }
    free(input);
}

/* A training forward + backward through the whole detect model: every
 * trainable parameter gets a finite gradient, BN running statistics move,
 * the frozen DFL weight has no gradient. */
static void test_backward(void) {
    yolo_model *m = load("yolov8n.yaml", NULL, 0);
    if (!m) return;
    yolo_graph *g = yolo_graph_new(be);
    int64_t shape[4] = {2, 3, 64, 64};
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    yolo_graph_plan_info info;
    float *input = malloc(sizeof(float) * 2 * 3 * 64 * 64);
    test_fill_uniform(input, 2 * 3 * 64 * 64, 9, 0.0f, 1.0f);
    yolo_tensor *loss = NULL;
    if (!yolo_model_forward(m, g, x, true, &out)) {
        for (int i = 0; i < out.n; i++) {
            yolo_tensor *l = yolo_sum_squares(g, out.t[i]);
            loss = loss ? yolo_add(g, loss, l) : l;
        }
    }
    if (!loss || yolo_graph_mark_output(g, loss) || yolo_graph_backward(g, loss) || yolo_graph_plan(g, &info) ||
        yolo_tensor_upload_f32(x, input, 2 * 3 * 64 * 64) || yolo_graph_run(g)) {
        CHECK_MSG(0, "training step: %s", yolo_last_error());
    } else {
        int zero = 0, nonfinite = 0, frozen_with_grad = 0;
        for (int i = 0; i < yolo_model_tensor_count(m); i++) {
            const yolo_model_tensor *t = yolo_model_tensor_at(m, i);
            if (!t->tensor->requires_grad) {
                frozen_with_grad += t->role != YOLO_PARAM_BUFFER && strstr(t->tensor->name, "dfl") == NULL;
                continue;
            }
            int64_t n = yolo_tensor_numel(t->tensor);
            float *gr = malloc(sizeof(float) * (size_t)n);
            yolo_tensor_download_f32(t->tensor->grad, gr, n);
            double norm = 0;
            for (int64_t k = 0; k < n; k++) norm += (double)gr[k] * gr[k];
            zero += norm == 0;
            nonfinite += !isfinite(norm);
            free(gr);
        }
        CHECK_MSG(zero == 0 && nonfinite == 0 && frozen_with_grad == 0, "%d zero, %d non-finite gradients, %d frozen",
                  zero, nonfinite, frozen_with_grad);
        float rm[16];
        yolo_tensor_download_f32(yolo_model_find_tensor(m, "model.0.bn.running_mean"), rm, 16);
        int moved = 0;
        for (int k = 0; k < 16; k++) moved += rm[k] != 0.0f;
        CHECK_MSG(moved > 0, "BN running mean did not move in training mode");
    }
    free(input);
    yolo_graph_free(g);
    yolo_model_free(m);
}

int main(void) {
    if (yolo_backend_create("cpu", 1, &be)) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    test_activation();
    test_fuse_and_heads();
    test_backward();
    yolo_backend_free(be);
    return test_result("test_model_forward");
}
