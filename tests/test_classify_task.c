/* The classify plugin's task hooks (plugins/classify/classify_task.c),
 * loaded through the core's plugin registry and driven with hand-made
 * host tensors and batches:
 *   - the table: ImageFolder data, one loss item "loss", the validation
 *     loss from the eval output 0, Ultralytics' metric names;
 *   - the loss: PyTorch's F.cross_entropy(reduction="mean") on a hand
 *     case (with and without label_smoothing), the gradient against
 *     central differences, the validation path on softmax probabilities
 *     and on an eval tuple (softmax, logits) giving the same value, bad
 *     labels and shapes refused;
 *   - the metrics: top-1 / top-5 on hand-ranked rows (ties to the lower
 *     class, as a stable sort), top-5 = 1 when nc <= 5 (Ultralytics'
 *     n5 = min(nc, 5)), fitness (top1 + top5) / 2, the table, pack/merge;
 *   - predict: Results.save_txt lines "0.70 circle" for the top
 *     min(nc, 5) classes and the JSON object. */
#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "yolo/config.h"
#include "yolo/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const yolo_task_hooks *hooks;
static const char *const names3[3] = {"circle", "rectangle", "tri\"angle"};
static const char *const names7[7] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6"};

typedef struct test_batch {
    yolo_batch b;
    int32_t cls[16];
} test_batch;

static void make_batch(test_batch *t, int n, const int32_t *cls) {
    memset(t, 0, sizeof *t);
    t->b.n = n;
    t->b.width = t->b.height = 32;
    t->b.image_class = t->cls;
    memcpy(t->cls, cls, sizeof(int32_t) * (size_t)n);
}

static yolo_host_tensor host2(float *data, int64_t rows, int64_t cols) {
    yolo_host_tensor t = {.ndim = 2, .data = data};
    t.shape[0] = rows, t.shape[1] = cols;
    return t;
}

static void softmax_rows(const float *x, float *p, int rows, int nc) {
    for (int i = 0; i < rows; i++) {
        double m = x[i * nc], s = 0;
        for (int c = 1; c < nc; c++) m = fmax(m, x[i * nc + c]);
        for (int c = 0; c < nc; c++) s += exp(x[i * nc + c] - m);
        for (int c = 0; c < nc; c++) p[i * nc + c] = (float)(exp(x[i * nc + c] - m) / s);
    }
}

static void *loss_state_with(const yolo_task_context *base, const char *smoothing) {
    yolo_config *cfg = NULL;
    CHECK(yolo_config_copy(base->cfg, &cfg) == YOLO_OK);
    if (smoothing) CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "label_smoothing", smoothing, "test") == YOLO_OK);
    yolo_task_context ctx = *base;
    ctx.cfg = cfg;
    void *state = NULL;
    CHECK_MSG(hooks->loss_create(&ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    yolo_config_free(cfg);
    return state;
}

/* ---- the loss ---- */

static void test_loss_values(const yolo_task_context *ctx) {
    /* torch: F.cross_entropy(tensor([[2., 1, 0], [-1, .5, 3]]), tensor([0, 1]))
     * = mean(0.40760596444438, 2.59567432941438) = 1.50164014692938;
     * with label_smoothing=0.1: 1.53497348026271. */
    float logits[6] = {2, 1, 0, -1, 0.5f, 3};
    test_batch tb;
    make_batch(&tb, 2, (const int32_t[]){0, 1});
    yolo_host_tensor out = host2(logits, 2, 3);
    const struct {
        const char *eps;
        double want;
    } cases[2] = {{NULL, 1.50164014692938}, {"0.1", 1.53497348026271}};
    for (int k = 0; k < 2; k++) {
        void *state = loss_state_with(ctx, cases[k].eps);
        if (!state) continue;
        float grad_data[6] = {0};
        yolo_host_tensor grad = host2(grad_data, 2, 3);
        double loss = NAN;
        float items[YOLO_TASK_MAX_ITEMS] = {0};
        CHECK_MSG(hooks->loss_compute(state, &tb.b, 1, &out, &grad, &loss, items) == YOLO_OK, "%s",
                  yolo_last_error());
        CHECK_MSG(fabs(loss - cases[k].want) < 1e-6, "eps %s: loss %.12g, want %.12g", cases[k].eps, loss,
                  cases[k].want);
        CHECK_MSG(fabs(items[0] - loss) < 1e-6, "item %g vs loss %g", items[0], loss);
        /* Each row of the gradient sums to 0 ((p - q) / B, both distributions). */
        for (int i = 0; i < 2; i++)
            CHECK_MSG(fabs(grad_data[3 * i] + grad_data[3 * i + 1] + grad_data[3 * i + 2]) < 1e-6, "row %d", i);

        /* The validation path: no gradient, the same value from the logits. */
        double again = NAN;
        CHECK(hooks->loss_compute(state, &tb.b, 1, &out, NULL, &again, items) == YOLO_OK);
        CHECK_MSG(again == loss, "%.17g vs %.17g", again, loss);
        /* ... from the eval output: softmax probabilities. */
        float probs[6];
        softmax_rows(logits, probs, 2, 3);
        yolo_host_tensor pt = host2(probs, 2, 3);
        CHECK(hooks->loss_compute(state, &tb.b, 1, &pt, NULL, &again, items) == YOLO_OK);
        CHECK_MSG(fabs(again - loss) < 1e-6, "from probabilities %.12g vs %.12g", again, loss);
        /* ... and from an eval tuple (softmax, logits): the logits. */
        yolo_host_tensor pair[2] = {pt, out};
        CHECK(hooks->loss_compute(state, &tb.b, 2, pair, NULL, &again, items) == YOLO_OK);
        CHECK_MSG(again == loss, "from the tuple %.17g vs %.17g", again, loss);
        hooks->loss_destroy(state);
    }
}

static void test_loss_gradient(const yolo_task_context *ctx) {
    enum { B = 4, NC = 7 };
    float x[B * NC], g[B * NC] = {0};
    test_fill_uniform(x, B * NC, 7, -3.0f, 3.0f);
    test_batch tb;
    make_batch(&tb, B, (const int32_t[]){0, 6, 3, 3});
    void *state = loss_state_with(ctx, "0.2");
    if (!state) return;
    yolo_host_tensor out = host2(x, B, NC), grad = host2(g, B, NC);
    double loss = NAN;
    float items[YOLO_TASK_MAX_ITEMS];
    CHECK(hooks->loss_compute(state, &tb.b, 1, &out, &grad, &loss, items) == YOLO_OK);
    CHECK_MSG(isfinite(loss) && loss > 0, "loss %g", loss);
    double worst = 0;
    for (int k = 0; k < B * NC; k++) {
        float keep = x[k];
        double lp, lm, h = 1e-2;
        x[k] = keep + (float)h;
        hooks->loss_compute(state, &tb.b, 1, &out, NULL, &lp, items);
        x[k] = keep - (float)h;
        hooks->loss_compute(state, &tb.b, 1, &out, NULL, &lm, items);
        x[k] = keep;
        double fd = (lp - lm) / (2 * h), err = fabs(fd - g[k]) / (1e-4 + 1e-2 * fabs(fd));
        worst = fmax(worst, err);
        CHECK_MSG(err <= 1, "d loss / d x[%d]: analytic %g, central differences %g", k, (double)g[k], fd);
    }
    printf("loss gradient vs central differences: worst scaled error %.3g\n", worst);

    /* Refused: a class out of range, a shape that is not [B, nc], no classes. */
    tb.cls[2] = NC;
    CHECK(hooks->loss_compute(state, &tb.b, 1, &out, &grad, &loss, items) == YOLO_ERR_ARG);
    CHECK(test_error_mentions("class 7"));
    tb.cls[2] = 3;
    yolo_host_tensor wrong = host2(x, B - 1, NC);
    CHECK(hooks->loss_compute(state, &tb.b, 1, &wrong, NULL, &loss, items) == YOLO_ERR_SHAPE);
    tb.b.image_class = NULL;
    CHECK(hooks->loss_compute(state, &tb.b, 1, &out, NULL, &loss, items) == YOLO_ERR_ARG);
    hooks->loss_destroy(state);

    /* label_smoothing out of [0, 1] is a config error. */
    yolo_config *cfg = NULL;
    CHECK(yolo_config_copy(ctx->cfg, &cfg) == YOLO_OK);
    if (yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "label_smoothing", "1.5", "test") == YOLO_OK) {
        yolo_task_context c = *ctx;
        c.cfg = cfg;
        void *s = NULL;
        CHECK(hooks->loss_create(&c, &s) != YOLO_OK && s == NULL);
    }
    yolo_config_free(cfg);
}

/* ---- the metrics ---- */

/* Seven classes; row i ranks its class (column cls[i]) at rank[i]. */
#define M_ROWS 6
static const int32_t m_cls[M_ROWS] = {0, 1, 2, 3, 4, 5};
/* ranks 0, 1, 4, 5, 6 and a tie: row 5's class 5 ties class 2 at the top
 * (class 2 sorts first, so rank 1: top-5 but not top-1). */
static void metric_rows(float *p) {
    static const float rows[M_ROWS][7] = {
        {0.70f, 0.10f, 0.05f, 0.05f, 0.04f, 0.03f, 0.03f}, /* class 0 first */
        {0.50f, 0.30f, 0.10f, 0.05f, 0.02f, 0.02f, 0.01f}, /* class 1 second */
        {0.20f, 0.20f, 0.10f, 0.20f, 0.20f, 0.05f, 0.05f}, /* class 2: four above it -> rank 4 (top-5) */
        {0.20f, 0.20f, 0.20f, 0.02f, 0.20f, 0.10f, 0.08f}, /* class 3: rank 6 */
        {0.15f, 0.15f, 0.15f, 0.15f, 0.05f, 0.20f, 0.15f}, /* class 4: rank 6 (below all) */
        {0.00f, 0.00f, 0.40f, 0.00f, 0.00f, 0.40f, 0.20f}, /* class 5 ties class 2: rank 1 */
    };
    memcpy(p, rows, sizeof rows);
}

static void *metrics_for(const yolo_task_context *ctx) {
    void *state = NULL;
    CHECK_MSG(hooks->metrics_create(ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    return state;
}

static void update_rows(void *state, int from, int to) {
    float p[M_ROWS * 7];
    metric_rows(p);
    test_batch tb;
    make_batch(&tb, to - from, m_cls + from);
    yolo_host_tensor out = host2(p + from * 7, to - from, 7);
    CHECK_MSG(hooks->metrics_update(state, &tb.b, 1, &out) == YOLO_OK, "%s", yolo_last_error());
}

static void test_metrics(const yolo_task_context *ctx3) {
    yolo_task_context ctx = *ctx3;
    ctx.nc = 7, ctx.names = names7;
    void *all = metrics_for(&ctx);
    if (!all) return;
    update_rows(all, 0, M_ROWS);
    double v[2] = {0}, fit = 0;
    char table[512] = {0};
    FILE *f = fmemopen(table, sizeof table - 1, "w");
    CHECK(hooks->metrics_summarize(all, v, &fit, f) == YOLO_OK);
    fclose(f);
    /* top-1: rows 0 (1 of 6); top-5: rows 0, 1, 2, 5 (4 of 6). */
    CHECK_MSG(fabs(v[0] - 1.0 / 6) < 1e-12 && fabs(v[1] - 4.0 / 6) < 1e-12, "top1 %g top5 %g", v[0], v[1]);
    CHECK_MSG(fabs(fit - (v[0] + v[1]) / 2) < 1e-12, "fitness %g", fit);
    const char *want = "               classes   top1_acc   top5_acc\n"
                       "                   all      0.167      0.667\n";
    CHECK_MSG(strcmp(table, want) == 0, "table:\n%s\nwant:\n%s", table, want);

    /* pack/merge: rows 0-2 and 3-5 in two states, merged, equal one state. */
    void *a = metrics_for(&ctx), *b = metrics_for(&ctx);
    if (a && b) {
        update_rows(a, 0, 3);
        update_rows(b, 3, M_ROWS);
        void *bytes = NULL;
        size_t size = 0;
        CHECK(hooks->metrics_pack(b, &bytes, &size) == YOLO_OK && bytes && size > 0);
        CHECK(hooks->metrics_merge(a, bytes, size) == YOLO_OK);
        double w[2], wf;
        CHECK(hooks->metrics_summarize(a, w, &wf, NULL) == YOLO_OK);
        CHECK_MSG(w[0] == v[0] && w[1] == v[1] && wf == fit, "merged %g %g %g", w[0], w[1], wf);
        /* Not a packed state: refused. */
        CHECK(hooks->metrics_merge(a, bytes, size - 1) == YOLO_ERR_FORMAT);
        memset(bytes, 0x5a, size);
        CHECK(hooks->metrics_merge(a, bytes, size) == YOLO_ERR_FORMAT);
        free(bytes);
    }
    hooks->metrics_destroy(a);
    hooks->metrics_destroy(b);

    /* The dataset's nc must be the model's; a class out of range is refused. */
    float p[M_ROWS * 7];
    metric_rows(p);
    test_batch tb;
    make_batch(&tb, 2, (const int32_t[]){0, 7});
    yolo_host_tensor out = host2(p, 2, 7);
    CHECK(hooks->metrics_update(all, &tb.b, 1, &out) == YOLO_ERR_ARG);
    out.shape[1] = 6;
    tb.cls[1] = 1;
    CHECK(hooks->metrics_update(all, &tb.b, 1, &out) == YOLO_ERR_SHAPE);
    hooks->metrics_destroy(all);

    /* Three classes: n5 = 3, so top-5 is 1 whatever the scores. */
    void *three = metrics_for(ctx3);
    if (three) {
        float q[9] = {0.1f, 0.2f, 0.7f, 0.6f, 0.3f, 0.1f, 0.2f, 0.5f, 0.3f};
        make_batch(&tb, 3, (const int32_t[]){0, 0, 1});
        out = host2(q, 3, 3);
        CHECK(hooks->metrics_update(three, &tb.b, 1, &out) == YOLO_OK);
        CHECK(hooks->metrics_summarize(three, v, &fit, NULL) == YOLO_OK);
        CHECK_MSG(fabs(v[0] - 2.0 / 3) < 1e-12 && v[1] == 1.0 && fabs(fit - 5.0 / 6) < 1e-12, "nc 3: %g %g %g", v[0],
                  v[1], fit);
        hooks->metrics_destroy(three);
    }

    /* No images: zeros, not NaN. */
    void *none = metrics_for(ctx3);
    if (none) {
        CHECK(hooks->metrics_summarize(none, v, &fit, NULL) == YOLO_OK);
        CHECK(v[0] == 0 && v[1] == 0 && fit == 0);
        hooks->metrics_destroy(none);
    }
}

/* ---- predict ---- */

static void predict_row(const yolo_task_context *ctx, float *row, int nc, const char *want_txt,
                        const char *const *json_has) {
    void *state = metrics_for(ctx);
    if (!state) return;
    /* image 1 of a two-image batch with no labels (predict's batches) */
    float data[2 * 8] = {0};
    memcpy(data + nc, row, sizeof(float) * (size_t)nc);
    test_batch tb;
    make_batch(&tb, 2, (const int32_t[]){-1, -1});
    yolo_host_tensor out = host2(data, 2, nc);
    yolo_prediction_text text = {0};
    CHECK_MSG(hooks->predict(state, &tb.b, 1, 1, &out, &text) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(text.txt && strcmp(text.txt, want_txt) == 0, "txt:\n%s\nwant:\n%s", text.txt, want_txt);
    for (int i = 0; json_has[i]; i++)
        CHECK_MSG(text.json && strstr(text.json, json_has[i]), "json lacks %s: %s", json_has[i], text.json);
    CHECK(hooks->predict(state, &tb.b, 2, 1, &out, &text) == YOLO_ERR_ARG);
    hooks->metrics_destroy(state);
}

static void test_predict(const yolo_task_context *ctx3) {
    predict_row(ctx3, (float[]){0.2f, 0.7f, 0.1f}, 3, "0.70 rectangle\n0.20 circle\n0.10 tri\"angle\n",
                (const char *const[]){"{\"class\": 1, \"name\": \"rectangle\", \"confidence\": 0.7, \"top5\": [",
                                      "{\"class\": 2, \"name\": \"tri\\\"angle\", \"confidence\": 0.1}]}", NULL});
    /* Seven classes: five lines, ties in class order. */
    yolo_task_context ctx = *ctx3;
    ctx.nc = 7, ctx.names = names7;
    predict_row(&ctx, (float[]){0.05f, 0.3f, 0.05f, 0.3f, 0.1f, 0.15f, 0.05f}, 7,
                "0.30 c1\n0.30 c3\n0.15 c5\n0.10 c4\n0.05 c0\n",
                (const char *const[]){"{\"class\": 1, \"name\": \"c1\", \"confidence\": 0.3,",
                                      "{\"class\": 0, \"name\": \"c0\", \"confidence\": 0.05}]}", NULL});
}

static void test_table(void) {
    CHECK(hooks->data.needs == YOLO_NEED_IMAGE_CLASS && hooks->data.parse_labels == NULL);
    CHECK(hooks->n_loss_items == 1 && strcmp(hooks->loss_names[0], "loss") == 0);
    CHECK(hooks->val_loss_outputs == 0);
    CHECK(hooks->n_metrics == 2 && strcmp(hooks->metric_names[0], "metrics/accuracy_top1") == 0 &&
          strcmp(hooks->metric_names[1], "metrics/accuracy_top5") == 0);
    CHECK(hooks->loss_create && hooks->loss_destroy && hooks->loss_compute && hooks->metrics_create &&
          hooks->metrics_destroy && hooks->metrics_update && hooks->metrics_pack && hooks->metrics_merge &&
          hooks->metrics_summarize && hooks->predict);
}

int main(void) {
    const yolo_task *task = NULL;
    if (yolo_plugin_load_task("classify", &task) != YOLO_OK) {
        fprintf(stderr, "loading the classify plugin: %s\n", yolo_last_error());
        return 1;
    }
    hooks = task->hooks;
    if (!hooks) {
        fprintf(stderr, "the classify plugin has no hooks\n");
        return 1;
    }
    test_table();
    yolo_config *cfg = NULL;
    if (yolo_config_new(&cfg) != YOLO_OK) {
        fprintf(stderr, "config: %s\n", yolo_last_error());
        return 1;
    }
    yolo_task_context ctx = {.cfg = cfg, .model = NULL, .nc = 3, .names = names3, .imgsz = 32, .world = 1, .rank = 0};
    test_loss_values(&ctx);
    test_loss_gradient(&ctx);
    test_metrics(&ctx);
    test_predict(&ctx);
    yolo_config_free(cfg);
    return test_result("test_classify_task");
}
