/* The segment plugin's task hooks (plugins/segment/segment_task.c), loaded
 * through the core's plugin registry and driven with hand-made host
 * tensors and batches:
 *   - the table: loss items (box, seg, cls, dfl), the 8 metric names;
 *   - the loss: B x (box + seg + cls + dfl), the mask term's gradient into
 *     the coefficients and the prototypes against central differences,
 *     overlap_mask on and off agreeing when instances do not overlap, the
 *     `box` gain scaling the mask term, shape errors;
 *   - the metrics: perfect boxes and masks give AP 0.995 for both kinds
 *     (fitness 2 x 0.995), the table with Box and Mask columns, pack/merge,
 *     a wrong mask lowers only the mask metrics;
 *   - predict: the YOLO-seg txt polygon and the JSON segments;
 *   - YOLO26-seg's loss (Segment26, end2end) against PyTorch: both
 *     branches' detection and mask terms and the semantic term, with every
 *     gradient (make_seg26_loss_fixture.py). */
#include "../plugins/segment/segment_mask.h"
#include "interop_util.h"
#include "plugin/plugin_loader.h"
#include "yolo/detection.h"
#include "test_util.h"
#include "yolo/config.h"
#include "yolo/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 3
#define CH (4 * 16 + NC)
#define IMG 64
#define NL 3
#define NM 2
#define PS 16 /* prototypes: 64 / 4 */

static const int level_hw[NL] = {8, 4, 2};
static const char *const names[NC] = {"circle", "square", "triangle"};
static const yolo_task_hooks *hooks;

static int n_anchors(void) {
    int a = 0;
    for (int l = 0; l < NL; l++) a += level_hw[l] * level_hw[l];
    return a;
}

/* ---- a hand-made batch: squares (as polygons) on 4 px boundaries ---- */

typedef struct test_batch {
    yolo_batch b;
    yolo_image_meta meta[2];
} test_batch;

static const float gt_px[3][4] = {{8, 16, 24, 32}, {36, 20, 56, 44}, {16, 12, 48, 52}}; /* xyxy batch pixels */
static const int gt_image[3] = {0, 0, 1}, gt_cls[3] = {0, 2, 1};

static void make_batch(test_batch *t, int only, bool with_meta) {
    memset(t, 0, sizeof *t);
    t->b.height = t->b.width = IMG;
    yolo_instances_init(&t->b.instances, 0, 0);
    t->b.batch_idx = calloc(4, sizeof(int32_t));
    t->b.n = only < 0 ? 2 : 1;
    /* image 0 is a 128 x 96 original letterboxed by 0.5 with 8 px bands */
    const yolo_image_meta m[2] = {{128, 96, 0.5f, 0.5f, 0.0f, 8.0f}, {64, 64, 1.0f, 1.0f, 0.0f, 0.0f}};
    if (with_meta) {
        t->b.meta = t->meta;
        for (int i = 0, k = 0; i < 2; i++)
            if (only < 0 || only == i) t->meta[k++] = m[i];
    }
    for (int k = 0; k < 3; k++) {
        if (only >= 0 && gt_image[k] != only) continue;
        const float *p = gt_px[k];
        float poly[8] = {p[0] / IMG, p[1] / IMG, p[2] / IMG, p[1] / IMG, p[2] / IMG, p[3] / IMG, p[0] / IMG, p[3] / IMG};
        t->b.batch_idx[t->b.instances.n] = only >= 0 ? 0 : gt_image[k];
        CHECK(yolo_instances_add(&t->b.instances, gt_cls[k], NULL, poly, 4, NULL) == YOLO_OK);
    }
}

static void free_batch(test_batch *t) {
    yolo_instances_free(&t->b.instances);
    free(t->b.batch_idx);
}

/* ---- training outputs: 3 maps, coefficients [B, NM, A], prototypes ---- */

typedef struct outputs {
    yolo_host_tensor t[NL + 2], g[NL + 2];
} outputs;

static void set_shape(yolo_host_tensor *t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d) {
    t->ndim = ndim;
    t->shape[0] = a, t->shape[1] = b, t->shape[2] = c, t->shape[3] = d;
}

static size_t numel(const yolo_host_tensor *t) {
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
    return n;
}

static void make_outputs(outputs *o, int batch, uint64_t seed) {
    for (int l = 0; l < NL; l++) set_shape(&o->t[l], 4, batch, CH, level_hw[l], level_hw[l]);
    set_shape(&o->t[NL], 3, batch, NM, n_anchors(), 0);
    set_shape(&o->t[NL + 1], 4, batch, NM, PS, PS);
    for (int i = 0; i < NL + 2; i++) {
        o->g[i] = o->t[i];
        o->t[i].data = malloc(numel(&o->t[i]) * sizeof(float));
        o->g[i].data = calloc(numel(&o->t[i]), sizeof(float));
        test_fill_uniform(o->t[i].data, (int64_t)numel(&o->t[i]), seed + (uint64_t)i, -1.5f, 1.5f);
    }
}

static void free_outputs(outputs *o) {
    for (int i = 0; i < NL + 2; i++) free(o->t[i].data), free(o->g[i].data);
}

static double loss_of(void *state, const yolo_batch *b, outputs *o, float *items) {
    double loss = NAN;
    float scratch[YOLO_TASK_MAX_ITEMS];
    CHECK_MSG(hooks->loss_compute(state, b, NL + 2, o->t, NULL, &loss, items ? items : scratch) == YOLO_OK, "%s",
              yolo_last_error());
    return loss;
}

static void *loss_state(yolo_config *cfg, const yolo_task_context *base) {
    yolo_task_context ctx = *base;
    ctx.cfg = cfg;
    void *state = NULL;
    CHECK_MSG(hooks->loss_create(&ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    return state;
}

static void test_loss(const yolo_config *base_cfg, const yolo_task_context *ctx) {
    yolo_config *cfg = NULL;
    CHECK(yolo_config_copy(base_cfg, &cfg) == YOLO_OK);
    void *state = loss_state(cfg, ctx);
    if (!state) return;
    test_batch tb;
    make_batch(&tb, -1, false);
    outputs o;
    make_outputs(&o, 2, 21);
    double loss = NAN;
    float items[YOLO_TASK_MAX_ITEMS] = {0};
    CHECK_MSG(hooks->loss_compute(state, &tb.b, NL + 2, o.t, o.g, &loss, items) == YOLO_OK, "%s", yolo_last_error());
    double sum = (double)items[0] + items[1] + items[2] + items[3];
    CHECK_MSG(isfinite(loss) && items[1] > 0 && fabs(loss - 2 * sum) < 1e-5 * loss, "loss %g, items %g %g %g %g", loss,
              items[0], items[1], items[2], items[3]);
    CHECK(fabs(loss_of(state, &tb.b, &o, NULL) - loss) < 1e-12 * loss);

    /* The mask term's gradient: the largest entries of the coefficients and
     * of the prototypes of each image, against central differences (the
     * assignment depends on the maps only, which stay fixed). */
    int checked = 0;
    for (int which = NL; which < NL + 2; which++) {
        size_t n = numel(&o.t[which]), per = n / 2;
        for (int b = 0; b < 2; b++) {
            for (int pick = 0; pick < 3; pick++) {
                size_t best = b * per;
                double bestv = -1;
                for (size_t i = b * per; i < (b + 1) * per; i++) {
                    double v = fabs(o.g[which].data[i]) * (1.0 + 0.01 * (double)((i * 2654435761u + pick) % 97));
                    if (v > bestv && (pick == 0 || fabs(o.g[which].data[i]) > 0)) bestv = v, best = i;
                }
                float *x = &o.t[which].data[best], x0 = *x, h = 1e-2f;
                *x = x0 + h;
                double lp = loss_of(state, &tb.b, &o, NULL);
                *x = x0 - h;
                double lm = loss_of(state, &tb.b, &o, NULL);
                *x = x0;
                double fd = (lp - lm) / (2.0 * h), g = o.g[which].data[best];
                CHECK_MSG(fabs(fd - g) <= 1e-3 + 2e-3 * fabs(g), "%s image %d entry %zu: grad %.8g, fd %.8g",
                          which == NL ? "coefficient" : "prototype", b, best, g, fd);
                checked++;
            }
        }
    }
    CHECK(checked == 12);

    /* No overlap among these instances: one index mask or one mask per
     * instance give the same loss. The mask term scales with `box`. */
    yolo_config *cfg2 = NULL;
    CHECK(yolo_config_copy(base_cfg, &cfg2) == YOLO_OK);
    CHECK(yolo_config_set(cfg2, YOLO_CONFIG_LAYER_CLI, "overlap_mask", "false", "test") == YOLO_OK);
    void *s2 = loss_state(cfg2, ctx);
    float items2[YOLO_TASK_MAX_ITEMS] = {0};
    if (s2) {
        double l2 = loss_of(s2, &tb.b, &o, items2);
        CHECK_MSG(fabs(l2 - loss) < 1e-9 * loss && items2[1] == items[1], "overlap_mask=false: %.12g vs %.12g", l2, loss);
        hooks->loss_destroy(s2);
    }
    CHECK(yolo_config_set(cfg2, YOLO_CONFIG_LAYER_CLI, "overlap_mask", "true", "test") == YOLO_OK);
    CHECK(yolo_config_set(cfg2, YOLO_CONFIG_LAYER_CLI, "box", "15.0", "test") == YOLO_OK);
    s2 = loss_state(cfg2, ctx);
    if (s2) {
        (void)loss_of(s2, &tb.b, &o, items2);
        CHECK_MSG(fabs(items2[1] - 2 * items[1]) < 1e-5 * items[1] && fabs(items2[0] - 2 * items[0]) < 1e-5 * items[0],
                  "box=15: seg %g (was %g)", items2[1], items[1]);
        hooks->loss_destroy(s2);
    }
    yolo_config_free(cfg2);

    /* Errors, not crashes: prototypes of another batch size, too few outputs. */
    o.t[NL + 1].shape[0] = 3;
    CHECK(hooks->loss_compute(state, &tb.b, NL + 2, o.t, NULL, &loss, items) == YOLO_ERR_SHAPE);
    o.t[NL + 1].shape[0] = 2;
    o.t[NL].shape[2] = 5;
    CHECK(hooks->loss_compute(state, &tb.b, NL + 2, o.t, NULL, &loss, items) == YOLO_ERR_SHAPE);
    o.t[NL].shape[2] = n_anchors();
    CHECK(hooks->loss_compute(state, &tb.b, 2, o.t, NULL, &loss, items) != YOLO_OK);
    hooks->loss_destroy(state);
    free_outputs(&o);
    free_batch(&tb);
    yolo_config_free(cfg);
}

/* ---- metrics and predict ---- */

/* Eval outputs: t[0] [n, 4 + NC + 1, A] with each gt predicted exactly by
 * one anchor (coefficient 1), then 4 unused tensors, then prototypes of 1
 * everywhere: every predicted mask is its box, the gt's square. */
typedef struct eval_outputs {
    yolo_host_tensor t[NL + 3];
    float *pred, *proto;
} eval_outputs;

static void perfect(eval_outputs *e, const test_batch *tb, bool wrong_mask) {
    int A = n_anchors(), C = 4 + NC + 1, n = tb->b.n;
    e->pred = calloc((size_t)n * C * A, sizeof(float));
    e->proto = malloc((size_t)n * PS * PS * sizeof(float));
    for (int i = 0; i < n * PS * PS; i++) e->proto[i] = 1.0f;
    for (int k = 0; k < tb->b.instances.n; k++) {
        float *img = e->pred + (size_t)tb->b.batch_idx[k] * C * A;
        int a = 5 + 7 * k;
        const float *b = tb->b.instances.boxes + 4 * k;
        for (int j = 0; j < 4; j++) img[(size_t)j * A + a] = b[j] * IMG;
        img[(size_t)(4 + tb->b.instances.cls[k]) * A + a] = 0.9f - 0.1f * (float)k;
        img[(size_t)(4 + NC) * A + a] = wrong_mask && k == 0 ? -1.0f : 1.0f;
    }
    e->t[0].ndim = 3;
    e->t[0].shape[0] = n, e->t[0].shape[1] = C, e->t[0].shape[2] = A;
    e->t[0].data = e->pred;
    for (int i = 1; i < NL + 2; i++) e->t[i] = e->t[0]; /* maps and coefficients: not read */
    set_shape(&e->t[NL + 2], 4, n, 1, PS, PS);
    e->t[NL + 2].data = e->proto;
}

static void *metrics_over(const yolo_task_context *ctx, int only, bool wrong_mask) {
    void *state = NULL;
    CHECK_MSG(hooks->metrics_create(ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    test_batch tb;
    make_batch(&tb, only, true);
    eval_outputs e;
    perfect(&e, &tb, wrong_mask);
    if (state) CHECK_MSG(hooks->metrics_update(state, &tb.b, NL + 3, e.t) == YOLO_OK, "%s", yolo_last_error());
    free(e.pred), free(e.proto);
    free_batch(&tb);
    return state;
}

static char *summarize(void *state, double *values, double *fitness) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK_MSG(hooks->metrics_summarize(state, values, fitness, f) == YOLO_OK, "%s", yolo_last_error());
    fclose(f);
    return text;
}

static void test_metrics(const yolo_task_context *ctx, const yolo_task_context *val_ctx) {
    void *all = metrics_over(ctx, -1, false);
    if (!all) return;
    double v[8], fit;
    char *table = summarize(all, v, &fit);
    for (int k = 0; k < 2; k++)
        CHECK_MSG(fabs(v[4 * k] - 1) < 1e-9 && fabs(v[4 * k + 1] - 1) < 1e-9 && fabs(v[4 * k + 2] - 0.995) < 1e-9 &&
                      fabs(v[4 * k + 3] - 0.995) < 1e-9,
                  "%s: P %g R %g mAP50 %g mAP50-95 %g", k ? "mask" : "box", v[4 * k], v[4 * k + 1], v[4 * k + 2],
                  v[4 * k + 3]);
    CHECK_MSG(fabs(fit - 2 * 0.995) < 1e-9, "fitness %g", fit);
    CHECK_MSG(strstr(table, "Box(P") && strstr(table, "Mask(P") && strstr(table, "                   all          2"),
              "%s", table);
    free(table);

    /* Two half states merged equal one; val mode adds per-class rows. */
    void *a = metrics_over(val_ctx, 0, false), *b = metrics_over(val_ctx, 1, false);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_MSG(hooks->metrics_pack(b, &bytes, &size) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(hooks->metrics_merge(a, bytes, size) == YOLO_OK, "%s", yolo_last_error());
    CHECK(hooks->metrics_merge(a, bytes, size - 1) == YOLO_ERR_FORMAT);
    CHECK(hooks->metrics_merge(a, "garbage", 7) == YOLO_ERR_FORMAT);
    free(bytes);
    double w[8], wfit;
    table = summarize(a, w, &wfit);
    for (int i = 0; i < 8; i++) CHECK_MSG(w[i] == v[i], "merged metric %d: %.17g vs %.17g", i, w[i], v[i]);
    CHECK(wfit == fit);
    CHECK_MSG(strstr(table, "                circle          1          1          1          1      0.995      0.995"
                            "          1          1      0.995      0.995\n"),
              "%s", table);
    free(table);
    hooks->metrics_destroy(a);
    hooks->metrics_destroy(b);

    /* A wrong mask (coefficient -1: empty) for one gt: box metrics stay,
     * mask metrics drop. */
    void *bad = metrics_over(ctx, -1, true);
    table = summarize(bad, w, &wfit);
    CHECK_MSG(w[2] == v[2] && w[3] == v[3] && w[6] < 0.9 && wfit < fit, "box mAP50 %g, mask mAP50 %g", w[2], w[6]);
    free(table);
    /* a wrongly shaped eval output is an error */
    test_batch tb;
    make_batch(&tb, -1, true);
    eval_outputs e;
    perfect(&e, &tb, false);
    e.t[NL + 2].shape[0] = 3;
    CHECK(hooks->metrics_update(bad, &tb.b, NL + 3, e.t) == YOLO_ERR_SHAPE);
    CHECK(hooks->metrics_update(bad, &tb.b, 1, e.t) == YOLO_ERR_ARG);
    /* the inference forward's form, the rows then the prototypes, is read */
    e.t[NL + 2].shape[0] = 2;
    yolo_host_tensor two[2] = {e.t[0], e.t[NL + 2]};
    CHECK_MSG(hooks->metrics_update(bad, &tb.b, 2, two) == YOLO_OK, "%s", yolo_last_error());
    free(e.pred), free(e.proto);
    free_batch(&tb);
    hooks->metrics_destroy(bad);
    hooks->metrics_destroy(all);
}

static void predict_image(yolo_config *cfg, const yolo_task_context *base, int image, const char *want_txt,
                          const char *const *json_has) {
    yolo_task_context ctx = *base;
    ctx.cfg = cfg;
    void *state = NULL;
    CHECK_MSG(hooks->metrics_create(&ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    if (!state) return;
    test_batch tb;
    make_batch(&tb, -1, true);
    eval_outputs e;
    perfect(&e, &tb, false);
    tb.b.instances.n = 0; /* predict batches carry no labels */
    yolo_prediction_text text = {0};
    CHECK_MSG(hooks->predict(state, &tb.b, image, NL + 3, e.t, &text) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(text.txt && strcmp(text.txt, want_txt) == 0, "txt:\n%s\nwant:\n%s", text.txt, want_txt);
    for (int i = 0; json_has[i]; i++)
        CHECK_MSG(text.json && strstr(text.json, json_has[i]), "json lacks %s: %s", json_has[i], text.json);
    CHECK(hooks->predict(state, &tb.b, 2, NL + 3, e.t, &text) == YOLO_ERR_ARG);
    free(e.pred), free(e.proto);
    tb.b.instances.n = 3;
    free_batch(&tb);
    hooks->metrics_destroy(state);
}

static void test_predict(const yolo_config *base_cfg, const yolo_task_context *ctx) {
    yolo_config *cfg = NULL;
    CHECK(yolo_config_copy(base_cfg, &cfg) == YOLO_OK);
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "mode", "predict", "test") == YOLO_OK);
    /* Image 1 (64 x 64, its own original): gt (16, 12, 48, 52) is the crop
     * (4, 3, 12, 13) of the 16 x 16 prototypes; upsampled 4x (bilinear,
     * then > 0) it covers columns 14..49 and rows 10..53 of the image. */
    predict_image(cfg, ctx, 1, "1 0.21875 0.15625 0.765625 0.15625 0.765625 0.828125 0.21875 0.828125\n",
                  (const char *const[]){"\"class\": 1, \"name\": \"square\", \"confidence\": 0.7, \"box\": [16, 12, 48, 52]",
                                        "\"segments\": {\"x\": [14, 49, 49, 14], \"y\": [10, 10, 53, 53]}", NULL});
    /* Image 0 is letterboxed (ratio 0.5, 8 px bands) from 128 x 96: gt 0
     * (8, 16, 24, 32) covers columns 6..25 and rows 14..33 of the batch,
     * (12, 12) .. (50, 50) of the original. save_conf adds the confidence. */
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "save_conf", "true", "test") == YOLO_OK);
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "classes", "[0]", "test") == YOLO_OK);
    predict_image(cfg, ctx, 0, "0 0.09375 0.125 0.390625 0.125 0.390625 0.520833 0.09375 0.520833 0.9\n",
                  (const char *const[]){"\"box\": [16, 16, 48, 48]", "\"x\": [12, 50, 50, 12]", NULL});
    yolo_config_free(cfg);
}

static void test_table(void) {
    CHECK(hooks->data.needs & YOLO_NEED_POLYGONS);
    /* Ultralytics 8.4's five (sem_loss: Segment26's semantic term, 0 for the other heads) */
    CHECK(hooks->n_loss_items == 5 && strcmp(hooks->loss_names[0], "box_loss") == 0 &&
          strcmp(hooks->loss_names[1], "seg_loss") == 0 && strcmp(hooks->loss_names[2], "cls_loss") == 0 &&
          strcmp(hooks->loss_names[3], "dfl_loss") == 0 && strcmp(hooks->loss_names[4], "sem_loss") == 0);
    CHECK(hooks->val_loss_outputs == 1);
    const char *want[8] = {"metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)",
                           "metrics/precision(M)", "metrics/recall(M)", "metrics/mAP50(M)", "metrics/mAP50-95(M)"};
    CHECK(hooks->n_metrics == 8);
    for (int i = 0; i < 8 && hooks->n_metrics == 8; i++) CHECK(strcmp(hooks->metric_names[i], want[i]) == 0);
}

/* YOLO26-seg's E2ELoss(v8SegmentationLoss) against make_seg26_loss_fixture.py
 * (Ultralytics 8.4's definitions in float64 torch, gradients by autograd):
 * a 64 x 64 batch of two images with overlapping instances and one under
 * 8 px, at epoch 30 of 100; nm 4, prototypes 16 x 16, semantic logits 8 x 8.
 * The instances are boxes on the mask grid, so the rasterized targets are
 * exactly the fixture's masks (checked first). Also: a model's head of one
 * branch given two coefficient outputs is refused. */
static void test_seg26_loss(yolo_config *cfg) {
    const char *src = getenv("YOLO_SOURCE_DIR");
    if (!src) {
        printf("skipped the YOLO26-seg loss fixture: YOLO_SOURCE_DIR is not set (run through ctest)\n");
        return;
    }
    enum { HM, HO, MM, MO, PR, SS, GT, MK, VAL, N_IN = 6, N_FILES = 15 };
    static const char *const files[N_FILES] = {"head_o2m", "head_o2o", "mc_o2m", "mc_o2o", "proto", "semseg", "gt",
                                               "masks", "values", "grad_head_o2m", "grad_head_o2o", "grad_mc_o2m",
                                               "grad_mc_o2o", "grad_proto", "grad_semseg"};
    float *f[N_FILES] = {0};
    int64_t count[N_FILES], shape[N_FILES][8];
    int ndim[N_FILES];
    bool ok = true;
    for (int i = 0; i < N_FILES; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/tests/fixtures/seg26-loss.%s.npy", src, files[i]);
        f[i] = npy_read_f32(path, &ndim[i], shape[i], &count[i]);
        CHECK_MSG(f[i] != NULL, "cannot read %s", path);
        ok = ok && f[i];
    }
    yolo_backend *be = NULL;
    yolo_model *m = NULL;
    yolo_model_options opt = {.nc = NC, .seed = 1};
    if (!ok || yolo_backend_create("cpu", 1, &be) || yolo_model_load("yolo26n-seg.yaml", be, &opt, &m)) {
        CHECK_MSG(0, "yolo26n-seg.yaml: %s", yolo_last_error());
        goto done;
    }
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "epochs", "100", "test") == YOLO_OK);
    yolo_task_context ctx = {.cfg = cfg, .model = m, .nc = NC, .names = names, .imgsz = IMG, .world = 1};
    /* the evaluation selects as YOLO26 does while the model runs end2end (the task kit's NMS reads it) */
    for (int e2e = 0; e2e <= 1; e2e++) { /* ending end2end, as loaded */
        yolo_det_eval ev;
        yolo_model_set_end2end(m, e2e);
        CHECK_MSG(!yolo_det_eval_init(&ev, &ctx, "test") && ev.nms.end2end == (e2e == 1), "end2end %d: %s", e2e,
                  yolo_last_error());
        yolo_det_eval_free(&ev);
    }
    const int B = 2, C = 4 + NC, A = 84, n_gt = (int)(count[GT] / 6), nm = (int)shape[MM][1];
    int32_t cls[8], idx[8];
    float boxes[32];
    for (int i = 0; i < n_gt && i < 8; i++) {
        idx[i] = (int32_t)f[GT][6 * i], cls[i] = (int32_t)f[GT][6 * i + 1];
        memcpy(boxes + 4 * i, f[GT] + 6 * i + 2, 4 * sizeof(float));
    }
    yolo_batch batch = {.n = B, .height = IMG, .width = IMG, .batch_idx = idx, .epoch = (int32_t)f[VAL][0]};
    yolo_instances_init(&batch.instances, 0, 0);
    batch.instances.n = n_gt, batch.instances.cls = cls, batch.instances.boxes = boxes; /* boxes: no polygons */
    /* the fixture's overlap masks are what the plugin rasterizes: its masks at 16 x 16 against the loss's */
    for (int b = 0, k = 0; b < B; b++) {
        int k1 = k;
        while (k1 < n_gt && idx[k1] == b) k1++;
        int32_t raster[PS * PS];
        uint8_t scratch[8 * PS * PS];
        CHECK(!seg_rasterize(&batch.instances, k, k1, PS, PS, true, raster, scratch));
        int differ = 0;
        for (int p = 0; p < PS * PS; p++) differ += raster[p] != (int32_t)f[MK][b * PS * PS + p];
        CHECK_MSG(differ == 0, "image %d: %d mask pixels differ from the fixture's", b, differ);
        k = k1;
    }
    /* outputs: 6 level maps, 2 coefficient tensors, the semantic logits, the prototypes */
    yolo_host_tensor out[10], grads[10];
    float *buf[10] = {0}, *gbuf[10] = {0};
    const int hw[3] = {8, 4, 2};
    int h[3], w[3];
    for (int l = 0; l < 6; l++) {
        h[l % 3] = w[l % 3] = hw[l % 3];
        size_t n = (size_t)B * C * hw[l % 3] * hw[l % 3];
        buf[l] = calloc(n, sizeof(float)), gbuf[l] = calloc(n, sizeof(float));
        out[l] = (yolo_host_tensor){4, {B, C, hw[l % 3], hw[l % 3]}, buf[l]};
        grads[l] = (yolo_host_tensor){4, {B, C, hw[l % 3], hw[l % 3]}, gbuf[l]};
    }
    yolo_det_levels_scatter(f[HM], 3, h, w, B, C, buf);
    yolo_det_levels_scatter(f[HO], 3, h, w, B, C, buf + 3);
    const int src_of[4] = {MM, MO, SS, PR};
    for (int k = 0; k < 4; k++) {
        const int i = src_of[k];
        out[6 + k] = (yolo_host_tensor){ndim[i], {0}, f[i]};
        memcpy(out[6 + k].shape, shape[i], sizeof(int64_t) * (size_t)ndim[i]);
        gbuf[6 + k] = calloc((size_t)count[i], sizeof(float));
        grads[6 + k] = out[6 + k];
        grads[6 + k].data = gbuf[6 + k];
    }
    void *state = NULL;
    double loss = 0;
    float items[YOLO_TASK_MAX_ITEMS];
    CHECK_MSG(!hooks->loss_create(&ctx, &state), "%s", yolo_last_error());
    CHECK_MSG(state && !hooks->loss_compute(state, &batch, 10, out, grads, &loss, items), "%s", yolo_last_error());
    const double ref = f[VAL][2];
    printf("YOLO26-seg E2ELoss: total %.7g (PyTorch %.7g); one-to-one box %.6g seg %.6g cls %.6g dfl %.6g sem %.6g "
           "(PyTorch %.6g %.6g %.6g %.6g %.6g)\n", loss, ref, items[0], items[1], items[2], items[3], items[4],
           f[VAL][3], f[VAL][4], f[VAL][5], f[VAL][6], f[VAL][7]);
    CHECK_MSG(fabs(loss - ref) <= 1e-5 * fabs(ref), "total %.8g, PyTorch %.8g", loss, ref);
    for (int k = 0; k < 5; k++)
        CHECK_MSG(fabsf(items[k] - f[VAL][3 + k]) <= 1e-5f * fabsf(f[VAL][3 + k]) + 1e-7f, "item %d: %.8g, PyTorch %.8g",
                  k, items[k], f[VAL][3 + k]);
    for (int b = 0; b < 2; b++) { /* the maps' gradients gathered back to [B, C, A] */
        float *g = malloc(sizeof(float) * (size_t)B * C * A);
        yolo_det_levels_gather((const float *const *)(gbuf + 3 * b), 3, h, w, B, C, g);
        double diff = interop_rel_diff(g, f[9 + b], (int64_t)B * C * A);
        printf("YOLO26-seg E2ELoss: d total / d %s: max |ours - autograd| / max |autograd| = %.3g\n", files[9 + b],
               diff);
        CHECK_MSG(diff <= 1e-5, "%s: relative difference %.3g", files[9 + b], diff);
        free(g);
    }
    for (int k = 0; k < 4; k++) { /* coefficients (each branch), semantic logits, prototypes */
        const int i = src_of[k], gi = 9 + i;
        double diff = interop_rel_diff(gbuf[6 + k], f[gi], count[i]);
        printf("YOLO26-seg E2ELoss: d total / d %s: max |ours - autograd| / max |autograd| = %.3g\n", files[i], diff);
        CHECK_MSG(diff <= 1e-5, "%s: relative difference %.3g", files[gi], diff);
    }
    /* an end2end head's loss given one coefficient output: refused, naming both counts */
    yolo_host_tensor one[9] = {out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[8], out[9]};
    CHECK_MSG(state && hooks->loss_compute(state, &batch, 9, one, NULL, &loss, items) == YOLO_ERR_ARG &&
                  test_error_mentions("1 mask coefficient outputs for a head of 2 branches"),
              "%s", yolo_last_error());
    double gmax = 0;
    for (int64_t i = 0; i < count[SS]; i++) gmax = fmax(gmax, fabs(f[9 + SS][i]));
    CHECK_MSG(gmax > 1e-4 && nm == 4, "the semantic logits' gradient is %g (nm %d)", gmax, nm);
    if (state) hooks->loss_destroy(state);
    for (int l = 0; l < 10; l++) free(buf[l]), free(gbuf[l]); /* buf[6..9]: NULL (the fixture's arrays) */
done:
    yolo_model_free(m);
    yolo_backend_free(be);
    for (int i = 0; i < N_FILES; i++) free(f[i]);
}

int main(void) {
    const yolo_task *task = NULL;
    if (yolo_plugin_load_task("segment", &task) != YOLO_OK) {
        fprintf(stderr, "loading the segment plugin: %s\n", yolo_last_error());
        return 1;
    }
    hooks = task->hooks;
    if (!hooks) {
        fprintf(stderr, "the segment plugin has no hooks\n");
        return 1;
    }
    test_table();
    yolo_config *cfg = NULL, *val_cfg = NULL;
    if (yolo_config_new(&cfg) != YOLO_OK || yolo_config_copy(cfg, &val_cfg) != YOLO_OK) {
        fprintf(stderr, "config: %s\n", yolo_last_error());
        return 1;
    }
    CHECK(yolo_config_set(val_cfg, YOLO_CONFIG_LAYER_CLI, "mode", "val", "test") == YOLO_OK);
    yolo_task_context ctx = {.cfg = cfg, .model = NULL, .nc = NC, .names = names, .imgsz = IMG, .world = 1, .rank = 0};
    yolo_task_context val_ctx = ctx;
    val_ctx.cfg = val_cfg;
    test_loss(cfg, &ctx);
    test_metrics(&ctx, &val_ctx);
    test_predict(cfg, &ctx);
    test_seg26_loss(cfg);
    yolo_config_free(val_cfg);
    yolo_config_free(cfg);
    return test_result("test_segment_task");
}
