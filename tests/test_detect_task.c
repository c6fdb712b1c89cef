/* The detect plugin's task hooks (plugins/detect/detect_task.c), loaded
 * through the core's plugin registry and driven with hand-made host
 * tensors and batches:
 *   - the loss: finite, positive, B x (box + cls + dfl), the config's gain,
 *     value and gradient equal to yolo/detection.h's on a hand-built [B, C, A]
 *     layout, and the gradient (scattered back to the per-level maps)
 *     against central differences;
 *   - cls_pw's class weights (yolo_task_context.class_weights): each
 *     class's BCE terms scaled by its weight, in the loss and its gradient;
 *   - the metrics: perfect predictions on letterboxed images give
 *     Ultralytics' capped AP 0.995 at every threshold, P = R = 1; the
 *     table; pack/merge of two half states equals one state;
 *   - predict: Ultralytics' txt lines in the original image and the JSON
 *     object, with the conf, classes and agnostic settings. */
#include "yolo/detection.h"
#include "interop_util.h"
#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "yolo/config.h"
#include "yolo/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 3
#define REG 16
#define CH (4 * REG + NC)
#define IMG 64
#define NL 3

/* The loss runs on a 64 wide, 32 high batch: maps of strides 8, 16, 32. */
#define LOSS_H 32
static const int level_h[NL] = {4, 2, 1}, level_w[NL] = {8, 4, 2};
static const char *const names[NC] = {"circle", "square", "tri\"angle"};
static const yolo_task_hooks *hooks;

/* ---- hand-made batches ---- */

typedef struct gt_spec {
    int image;
    int cls;
    float box[4]; /* normalized cx cy w h of the batch image */
} gt_spec;

typedef struct test_batch {
    yolo_batch b;
    yolo_image_meta meta[4];
    int32_t cls[16], idx[16];
    float boxes[64];
} test_batch;

/* Images 0 and 1 of the full set: image 0 is a 128 x 96 original
 * letterboxed into 64 x 64 (ratio 0.5, 8 px bands top and bottom), image 1
 * a 64 x 64 original as is. `only` >= 0 keeps one image (renumbered 0). */
static const yolo_image_meta all_meta[2] = {{128, 96, 0.5f, 0.5f, 0.0f, 8.0f}, {64, 64, 1.0f, 1.0f, 0.0f, 0.0f}};
static const gt_spec all_gts[3] = {
    {0, 0, {0.25f, 0.5f, 0.25f, 0.25f}},
    {0, 2, {0.7f, 0.55f, 0.3f, 0.4f}},
    {1, 1, {0.5f, 0.45f, 0.5f, 0.6f}},
};

static void make_batch(test_batch *t, int only) {
    memset(t, 0, sizeof *t);
    t->b.height = t->b.width = IMG;
    t->b.meta = t->meta;
    t->b.batch_idx = t->idx;
    t->b.instances.cls = t->cls;
    t->b.instances.boxes = t->boxes;
    for (int i = 0; i < 2; i++)
        if (only < 0 || only == i) t->meta[t->b.n++] = all_meta[i];
    for (int k = 0; k < 3; k++) {
        if (only >= 0 && all_gts[k].image != only) continue;
        int n = t->b.instances.n++;
        t->cls[n] = all_gts[k].cls;
        t->idx[n] = only >= 0 ? 0 : all_gts[k].image;
        memcpy(t->boxes + 4 * n, all_gts[k].box, sizeof all_gts[k].box);
    }
}

/* ---- the loss ---- */

static int n_anchors(void) {
    int a = 0;
    for (int l = 0; l < NL; l++) a += level_h[l] * level_w[l];
    return a;
}

static void make_maps(yolo_host_tensor *t, int batch, float **data, uint64_t seed) {
    for (int l = 0; l < NL; l++) {
        t[l].ndim = 4;
        t[l].shape[0] = batch, t[l].shape[1] = CH, t[l].shape[2] = level_h[l], t[l].shape[3] = level_w[l];
        size_t n = (size_t)batch * CH * level_h[l] * level_w[l];
        data[l] = calloc(n, sizeof(float));
        t[l].data = data[l];
        if (seed) test_fill_uniform(data[l], (int64_t)n, seed + (uint64_t)l, -1.5f, 1.5f);
    }
}

static double loss_of(void *state, const yolo_batch *b, yolo_host_tensor *out) {
    double loss = NAN;
    float items[YOLO_TASK_MAX_ITEMS];
    yolo_status st = hooks->loss_compute(state, b, NL, out, NULL, &loss, items);
    CHECK_MSG(st == YOLO_OK, "%s", yolo_last_error());
    return loss;
}

/* The reference the hook should reproduce, built here without its glue:
 * [B, C, A] by hand, anchors at strides 8/16/32, gts as xyxy pixels. */
typedef struct loss_reference {
    int A;
    float *head, *xy, *stride;
    float gt_boxes[64];
    yolo_det_gt_batch gt;
    yolo_det_loss_params p;
} loss_reference;

static size_t ref_index(int l, int b, int c, int y, int x, int A) {
    int off = 0;
    for (int k = 0; k < l; k++) off += level_h[k] * level_w[k];
    return ((size_t)b * CH + c) * A + off + y * level_w[l] + x;
}

static void reference_init(loss_reference *r, const test_batch *tb, float *const *maps, float box_gain) {
    r->A = n_anchors();
    r->head = malloc((size_t)2 * CH * r->A * sizeof(float));
    r->xy = malloc((size_t)r->A * 2 * sizeof(float));
    r->stride = malloc((size_t)r->A * sizeof(float));
    for (int l = 0; l < NL; l++) {
        int nh = level_h[l], nw = level_w[l];
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < CH; c++)
                for (int y = 0; y < nh; y++)
                    for (int x = 0; x < nw; x++)
                        r->head[ref_index(l, b, c, y, x, r->A)] = maps[l][(((size_t)b * CH + c) * nh + y) * nw + x];
    }
    const float strides[NL] = {8, 16, 32};
    CHECK(yolo_det_make_anchors(NL, level_h, level_w, strides, 0.5f, r->xy, r->stride) == YOLO_OK);
    for (int k = 0; k < tb->b.instances.n; k++) {
        const float *n = tb->boxes + 4 * k;
        float cx = n[0] * IMG, cy = n[1] * LOSS_H, w = n[2] * IMG, hh = n[3] * LOSS_H;
        float *o = r->gt_boxes + 4 * k;
        o[0] = cx - w / 2, o[1] = cy - hh / 2, o[2] = cx + w / 2, o[3] = cy + hh / 2;
    }
    r->gt = (yolo_det_gt_batch){tb->b.instances.n, tb->idx, tb->cls, r->gt_boxes};
    r->p = yolo_det_loss_default_params(NC);
    r->p.box_gain = box_gain;
}

static void reference_free(loss_reference *r) { free(r->head), free(r->xy), free(r->stride); }

static void test_loss(const yolo_config *base_cfg, const yolo_task_context *base_ctx) {
    /* A gain other than the default, to see the key read. */
    yolo_config *cfg = NULL;
    CHECK(yolo_config_copy(base_cfg, &cfg) == YOLO_OK);
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "box", "5.0", "test") == YOLO_OK);
    yolo_task_context ctx = *base_ctx;
    ctx.cfg = cfg;

    test_batch tb;
    make_batch(&tb, -1);
    tb.b.height = LOSS_H;
    yolo_host_tensor out[NL], grad[NL];
    float *od[NL], *gd[NL];
    make_maps(out, 2, od, 11);
    make_maps(grad, 2, gd, 0);
    void *state = NULL;
    CHECK_MSG(hooks->loss_create(&ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    if (!state) return;
    double loss = NAN;
    float items[YOLO_TASK_MAX_ITEMS];
    yolo_status st = hooks->loss_compute(state, &tb.b, NL, out, grad, &loss, items);
    CHECK_MSG(st == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(isfinite(loss) && loss > 0, "loss %g", loss);
    for (int i = 0; i < 3; i++) CHECK_MSG(isfinite(items[i]) && items[i] > 0, "item %d = %g", i, items[i]);
    CHECK_MSG(fabs(loss - 2 * ((double)items[0] + items[1] + items[2])) < 1e-4 * loss, "loss %g vs items", loss);

    /* The validation path (no gradient) gives the same value. */
    double again = loss_of(state, &tb.b, out);
    CHECK_MSG(again == loss, "%.17g vs %.17g", again, loss);

    /* The same value and gradient as the mathematics on the hand-built layout. */
    loss_reference r;
    reference_init(&r, &tb, od, 5.0f);
    int A = r.A;
    float *rgrad = malloc((size_t)2 * CH * A * sizeof(float));
    yolo_det_loss_value rv;
    CHECK_MSG(yolo_det_loss(&r.p, 2, A, r.head, r.xy, r.stride, &r.gt, &rv, rgrad) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(rv.total == loss && (float)rv.box == items[0] && (float)rv.cls == items[1] && (float)rv.dfl == items[2],
              "reference %.17g (%g %g %g), hook %.17g (%g %g %g)", rv.total, rv.box, rv.cls, rv.dfl, loss, items[0],
              items[1], items[2]);
    CHECK_MSG(rv.n_fg > 3, "%d foreground anchors", rv.n_fg);
    int mismatches = 0;
    for (int l = 0; l < NL; l++) {
        int nh = level_h[l], nw = level_w[l];
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < CH; c++)
                for (int y = 0; y < nh; y++)
                    for (int x = 0; x < nw; x++)
                        mismatches +=
                            gd[l][(((size_t)b * CH + c) * nh + y) * nw + x] != rgrad[ref_index(l, b, c, y, x, A)];
    }
    CHECK_MSG(mismatches == 0, "%d gradient entries differ from the reference", mismatches);

    /* Central differences, step 1e-3.
     * (1) Through the hook, on class logits the assigner never reads (image
     *     0 has classes 0 and 2, image 1 class 1; the assigner reads only the
     *     score of a gt's own class): the largest such gradient per level.
     * (2) Box logits move the assignment (the soft targets follow the
     *     CIoU), which Ultralytics holds constant: the largest box gradient
     *     per level against differences of the mathematics with the
     *     assignment of the unperturbed outputs held fixed. */
    yolo_det_assignment asg = {malloc((size_t)2 * A * sizeof(int32_t)), malloc((size_t)2 * A * sizeof(float))};
    CHECK(yolo_det_assign(&r.p, 2, A, r.head, r.xy, r.stride, &r.gt, &asg) == YOLO_OK);
    int n_checked = 0;
    for (int l = 0; l < NL; l++) {
        int nw = level_w[l];
        size_t hw = (size_t)level_h[l] * nw, total = 2 * CH * hw;
        for (int kind = 0; kind < 2; kind++) {
            size_t best = 0;
            double bestv = 0;
            for (size_t i = 0; i < total; i++) {
                int b = (int)(i / (CH * hw)), c = (int)((i / hw) % CH);
                bool ok = kind == 0 ? (c >= 4 * REG && (b == 0 ? c - 4 * REG == 1 : c - 4 * REG != 1)) : c < 4 * REG;
                if (ok && fabs(gd[l][i]) > bestv) bestv = fabs(gd[l][i]), best = i;
            }
            if (bestv == 0) continue; /* kind 1: no positive anchor on this level */
            int b = (int)(best / (CH * hw)), c = (int)((best / hw) % CH);
            int y = (int)(best % hw) / nw, x = (int)(best % hw) % nw;
            float *hook_x = &od[l][best], *ref_x = &r.head[ref_index(l, b, c, y, x, A)];
            float x0 = *hook_x, step = 1e-3f, xs[2];
            double ls[2];
            for (int side = 0; side < 2; side++) {
                float v = side == 0 ? x0 + step : x0 - step;
                xs[side] = v;
                if (kind == 0) {
                    *hook_x = v;
                    ls[side] = loss_of(state, &tb.b, out);
                } else {
                    *ref_x = v;
                    CHECK(yolo_det_loss_assigned(&r.p, 2, A, r.head, r.xy, r.stride, &r.gt, &asg, &rv, NULL) == YOLO_OK);
                    ls[side] = rv.total;
                }
            }
            *hook_x = x0, *ref_x = x0;
            double fd = (ls[0] - ls[1]) / ((double)xs[0] - xs[1]), g = gd[l][best];
            CHECK_MSG(fabs(fd - g) <= 1e-4 + 1e-3 * fabs(g),
                      "level %d image %d channel %d (%d, %d): grad %.8g, fd %.8g",
                      l, b, c, y, x, g, fd);
            n_checked++;
        }
    }
    CHECK_MSG(n_checked >= 5, "only %d entries checked", n_checked);
    free(asg.gt_index), free(asg.score), free(rgrad);
    reference_free(&r);

    /* Errors, not crashes: a wrong channel count, a bad class, no outputs. */
    out[1].shape[1] = CH + 1;
    CHECK(hooks->loss_compute(state, &tb.b, NL, out, NULL, &loss, items) == YOLO_ERR_SHAPE);
    out[1].shape[1] = CH;
    tb.cls[0] = NC;
    CHECK(hooks->loss_compute(state, &tb.b, NL, out, NULL, &loss, items) != YOLO_OK);
    tb.cls[0] = 0;
    CHECK(hooks->loss_compute(state, &tb.b, 0, out, NULL, &loss, items) != YOLO_OK);

    hooks->loss_destroy(state);
    for (int l = 0; l < NL; l++) free(od[l]), free(gd[l]);
    yolo_config_free(cfg);
}

/* One loss and gradient through the hook with the given class weights (NULL: none). */
static double weighted_loss(const yolo_task_context *base_ctx, const float *weights, const test_batch *tb,
                            yolo_host_tensor *out, yolo_host_tensor *grad, float *items) {
    yolo_task_context ctx = *base_ctx;
    ctx.class_weights = weights;
    void *state = NULL;
    double loss = NAN;
    CHECK_MSG(hooks->loss_create(&ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    if (!state) return loss;
    for (int l = 0; l < NL; l++) memset(grad[l].data, 0, (size_t)2 * CH * level_h[l] * level_w[l] * sizeof(float));
    CHECK_MSG(hooks->loss_compute(state, &tb->b, NL, out, grad, &loss, items) == YOLO_OK, "%s", yolo_last_error());
    hooks->loss_destroy(state);
    return loss;
}

/* cls_pw: weights scale each class's BCE terms and nothing else. All 2:
 * the cls item and the class rows' gradient double exactly, box and dfl
 * keep their bits. Uneven weights: the cls item is the weighted sum of the
 * classes' own terms (one-hot weights), and a class logit's gradient
 * matches central differences of the weighted loss. */
static void test_class_weights(const yolo_task_context *ctx) {
    test_batch tb;
    make_batch(&tb, -1);
    tb.b.height = LOSS_H;
    yolo_host_tensor out[NL], g0[NL], g1[NL];
    float *od[NL], *gd0[NL], *gd1[NL];
    make_maps(out, 2, od, 11);
    make_maps(g0, 2, gd0, 0);
    make_maps(g1, 2, gd1, 0);
    float plain[YOLO_TASK_MAX_ITEMS], twice[YOLO_TASK_MAX_ITEMS];
    weighted_loss(ctx, NULL, &tb, out, g0, plain);
    static const float twos[NC] = {2, 2, 2};
    weighted_loss(ctx, twos, &tb, out, g1, twice);
    CHECK_MSG(twice[1] == 2 * plain[1] && twice[0] == plain[0] && twice[2] == plain[2],
              "weights 2: items %g %g %g, without %g %g %g", twice[0], twice[1], twice[2], plain[0], plain[1], plain[2]);
    int wrong = 0;
    for (int l = 0; l < NL; l++) {
        size_t hw = (size_t)level_h[l] * level_w[l];
        for (size_t i = 0; i < 2 * CH * hw; i++) {
            bool cls_row = (int)((i / hw) % CH) >= 4 * REG;
            wrong += gd1[l][i] != (cls_row ? 2 * gd0[l][i] : gd0[l][i]);
        }
    }
    CHECK_MSG(wrong == 0, "weights 2: %d gradient entries not doubled on class rows / kept on box rows", wrong);

    static const float uneven[NC] = {2.5f, 0.25f, 0.75f};
    float items[YOLO_TASK_MAX_ITEMS], one_hot_cls = 0;
    for (int c = 0; c < NC; c++) {
        float w[NC] = {0, 0, 0};
        w[c] = 1;
        weighted_loss(ctx, w, &tb, out, g1, items);
        one_hot_cls += uneven[c] * items[1];
    }
    weighted_loss(ctx, uneven, &tb, out, g1, items);
    CHECK_MSG(fabsf(items[1] - one_hot_cls) <= 1e-5f * one_hot_cls, "uneven weights: cls %.8g, sum of classes %.8g",
              items[1], one_hot_cls);
    /* the largest class-logit gradient of level 0 against central differences */
    size_t hw = (size_t)level_h[0] * level_w[0], best = 0;
    for (size_t i = 0; i < 2 * CH * hw; i++)
        if ((int)((i / hw) % CH) >= 4 * REG && fabsf(gd1[0][i]) > fabsf(gd1[0][best])) best = i;
    const float x0 = od[0][best], xs[2] = {x0 + 1e-3f, x0 - 1e-3f};
    double ls[2];
    for (int side = 0; side < 2; side++) {
        od[0][best] = xs[side];
        ls[side] = weighted_loss(ctx, uneven, &tb, out, g0, items);
    }
    od[0][best] = x0;
    double fd = (ls[0] - ls[1]) / ((double)xs[0] - xs[1]), g = gd1[0][best];
    CHECK_MSG(g != 0 && fabs(fd - g) <= 1e-4 + 1e-3 * fabs(g), "uneven weights: grad %.8g, fd %.8g", g, fd);
    /* weights for 4 classes, a head of 3: an error, not a read past them */
    yolo_task_context four = *ctx;
    four.nc = NC + 1;
    four.class_weights = (const float[]){1, 1, 1, 1};
    void *state = NULL;
    double loss;
    CHECK_MSG(hooks->loss_create(&four, &state) == YOLO_OK, "%s", yolo_last_error());
    if (state) {
        yolo_status st = hooks->loss_compute(state, &tb.b, NL, out, NULL, &loss, items);
        CHECK_MSG(st == YOLO_ERR_SHAPE && strstr(yolo_last_error(), "class weights"), "%d: %s", st, yolo_last_error());
        hooks->loss_destroy(state);
    }
    for (int l = 0; l < NL; l++) free(od[l]), free(gd0[l]), free(gd1[l]);
}

/* ---- metrics and predict ---- */

/* Eval output [n, 4 + nc, A]: each gt of the batch predicted exactly by
 * one anchor (xywh batch pixels) with score `score - 0.1 * k`; every other
 * anchor scores 0. extra_low adds a prediction of score 0.2 elsewhere. */
static float *perfect_predictions(const test_batch *t, yolo_host_tensor *out, bool extra_low) {
    int A = n_anchors(), C = 4 + NC;
    float *p = calloc((size_t)t->b.n * C * A, sizeof(float));
    for (int k = 0; k < t->b.instances.n; k++) {
        float *img = p + (size_t)t->idx[k] * C * A;
        int a = 5 + 7 * k;
        for (int j = 0; j < 4; j++) img[(size_t)j * A + a] = t->boxes[4 * k + j] * IMG;
        img[(size_t)(4 + t->cls[k]) * A + a] = 0.9f - 0.1f * (float)k;
    }
    if (extra_low) {
        int a = 30;
        float box[4] = {40, 40, 10, 10};
        for (int j = 0; j < 4; j++) p[(size_t)j * A + a] = box[j];
        p[(size_t)(4 + 1) * A + a] = 0.2f;
    }
    out->ndim = 3;
    out->shape[0] = t->b.n, out->shape[1] = C, out->shape[2] = A;
    out->data = p;
    return p;
}

static void *metrics_over(const yolo_task_context *ctx, int only) {
    void *state = NULL;
    CHECK_MSG(hooks->metrics_create(ctx, &state) == YOLO_OK, "%s", yolo_last_error());
    test_batch tb;
    make_batch(&tb, only);
    yolo_host_tensor out;
    float *p = perfect_predictions(&tb, &out, false);
    if (state) CHECK_MSG(hooks->metrics_update(state, &tb.b, 1, &out) == YOLO_OK, "%s", yolo_last_error());
    free(p);
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
    /* Everything perfect: AP 0.995 at every threshold (the letterbox undone
     * on both sides), P = R = 1. */
    void *all = metrics_over(ctx, -1);
    if (!all) return;
    double v[4], fit;
    char *table = summarize(all, v, &fit);
    CHECK_MSG(fabs(v[0] - 1) < 1e-9 && fabs(v[1] - 1) < 1e-9, "P %g R %g", v[0], v[1]);
    CHECK_MSG(fabs(v[2] - 0.995) < 1e-9 && fabs(v[3] - 0.995) < 1e-9, "mAP50 %.12g mAP50-95 %.12g", v[2], v[3]);
    CHECK_MSG(fabs(fit - 0.995) < 1e-9, "fitness %g", fit);
    char want[256];
    snprintf(want, sizeof want, "%22s%11s%11s%11s%11s%11s%11s\n%22s%11d%11d%11.3g%11.3g%11.3g%11.3g\n", "Class",
             "Images", "Instances", "Box(P", "R", "mAP50", "mAP50-95)", "all", 2, 3, 1.0, 1.0, 0.995, 0.995);
    CHECK_MSG(strcmp(table, want) == 0, "training-mode table (no per-class rows):\n%s", table);
    free(table);

    /* Two half states, one packed and merged into the other, equal one
     * state; the val mode adds the per-class rows. */
    void *a = metrics_over(val_ctx, 0), *b = metrics_over(val_ctx, 1);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_MSG(hooks->metrics_pack(b, &bytes, &size) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(hooks->metrics_merge(a, bytes, size) == YOLO_OK, "%s", yolo_last_error());
    CHECK(hooks->metrics_merge(a, bytes, size - 1) == YOLO_ERR_FORMAT);
    CHECK(hooks->metrics_merge(a, "garbage", 7) == YOLO_ERR_FORMAT);
    free(bytes);
    double w[4], wfit;
    table = summarize(a, w, &wfit);
    for (int i = 0; i < 4; i++) CHECK_MSG(w[i] == v[i], "merged metric %d: %.17g vs %.17g", i, w[i], v[i]);
    CHECK(wfit == fit);
    CHECK_MSG(strstr(table, "                circle          1          1          1          1"
                            "      0.995      0.995\n"),
              "%s", table);
    CHECK_MSG(strstr(table, "             tri\"angle          1          1"), "%s", table);
    free(table);
    hooks->metrics_destroy(a);
    hooks->metrics_destroy(b);

    /* A prediction of the wrong class lowers the result. */
    test_batch tb;
    make_batch(&tb, -1);
    yolo_host_tensor out;
    float *p = perfect_predictions(&tb, &out, false);
    int A = n_anchors();
    p[(size_t)(4 + 2) * A + 5] = 0.9f, p[(size_t)4 * A + 5] = 0; /* gt 0 (circle) predicted as class 2 */
    void *bad = NULL;
    CHECK(hooks->metrics_create(ctx, &bad) == YOLO_OK);
    CHECK_MSG(hooks->metrics_update(bad, &tb.b, 1, &out) == YOLO_OK, "%s", yolo_last_error());
    table = summarize(bad, w, &wfit);
    CHECK_MSG(w[2] < 0.9 && wfit < fit, "mAP50 %g with a wrong class", w[2]);
    free(table);
    /* a wrongly shaped eval output is an error */
    out.shape[0] = 3;
    CHECK(hooks->metrics_update(bad, &tb.b, 1, &out) == YOLO_ERR_SHAPE);
    hooks->metrics_destroy(bad);
    free(p);
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
    make_batch(&tb, -1);
    tb.b.instances.n = 0; /* predict batches carry no labels */
    test_batch gts;
    make_batch(&gts, -1);
    yolo_host_tensor out;
    float *p = perfect_predictions(&gts, &out, true);
    yolo_prediction_text text = {0};
    CHECK_MSG(hooks->predict(state, &tb.b, image, 1, &out, &text) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(text.txt && strcmp(text.txt, want_txt) == 0, "txt:\n%s\nwant:\n%s", text.txt, want_txt);
    for (int i = 0; json_has[i]; i++)
        CHECK_MSG(text.json && strstr(text.json, json_has[i]), "json lacks %s: %s", json_has[i], text.json);
    CHECK(hooks->predict(state, &tb.b, 2, 1, &out, &text) == YOLO_ERR_ARG);
    free(p);
    hooks->metrics_destroy(state);
}

static void test_predict(const yolo_config *base_cfg, const yolo_task_context *ctx) {
    yolo_config *cfg = NULL;
    CHECK(yolo_config_copy(base_cfg, &cfg) == YOLO_OK);
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "mode", "predict", "test") == YOLO_OK);
    /* without save_conf the rows end at the box (Ultralytics' Results.save_txt) */
    predict_image(cfg, ctx, 1, "1 0.5 0.45 0.5 0.6\n", (const char *const[]){"\"name\": \"square\"", NULL});
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "save_conf", "true", "test") == YOLO_OK);
    /* Image 0 (128 x 96 letterboxed by 0.5 with 8 px bands): gt 0 is the
     * batch box (16, 32, 16, 16) xywh -> original xyxy (16, 32, 48, 64);
     * gt 1 is (44.8, 35.2, 19.2, 25.6) -> (70.4, 28.8, 108.8, 80).
     * The 0.2 prediction is under predict's conf 0.25. */
    predict_image(cfg, ctx, 0, "0 0.25 0.5 0.25 0.333333 0.9\n2 0.7 0.566667 0.3 0.533333 0.8\n",
                  (const char *const[]){"{\"detections\": [{\"class\": 0, \"name\": \"circle\", \"confidence\": 0.9, "
                                        "\"box\": [16, 32, 48, 64]}, {\"class\": 2, \"name\": \"tri\\\"angle\"",
                                        "28.8, 108.8, 80]}]}", NULL});
    /* Image 1 and the classes filter. */
    predict_image(cfg, ctx, 1, "1 0.5 0.45 0.5 0.6 0.7\n", (const char *const[]){"\"name\": \"square\"", NULL});
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "classes", "[2]", "test") == YOLO_OK);
    predict_image(cfg, ctx, 0, "2 0.7 0.566667 0.3 0.533333 0.8\n", (const char *const[]){"\"class\": 2", NULL});
    predict_image(cfg, ctx, 1, "", (const char *const[]){"{\"detections\": []}", NULL});
    /* conf lowered: the 0.2 prediction (class 1, 35..45 batch px) appears. */
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "classes", "null", "test") == YOLO_OK);
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "conf", "0.1", "test") == YOLO_OK);
    predict_image(cfg, ctx, 0,
                  "0 0.25 0.5 0.25 0.333333 0.9\n2 0.7 0.566667 0.3 0.533333 0.8\n"
                  "1 0.625 0.666667 0.15625 0.208333 0.2\n",
                  (const char *const[]){"\"confidence\": 0.2", NULL});
    yolo_config_free(cfg);
}

static void test_table(void) {
    CHECK(hooks->data.needs == YOLO_NEED_BOXES && hooks->data.parse_labels == NULL);
    CHECK(hooks->n_loss_items == 3 && strcmp(hooks->loss_names[0], "box_loss") == 0 &&
          strcmp(hooks->loss_names[1], "cls_loss") == 0 && strcmp(hooks->loss_names[2], "dfl_loss") == 0);
    CHECK(hooks->val_loss_outputs == 1);
    CHECK(hooks->n_metrics == 4 && strcmp(hooks->metric_names[0], "metrics/precision(B)") == 0 &&
          strcmp(hooks->metric_names[1], "metrics/recall(B)") == 0 &&
          strcmp(hooks->metric_names[2], "metrics/mAP50(B)") == 0 &&
          strcmp(hooks->metric_names[3], "metrics/mAP50-95(B)") == 0);
}

/* The E2ELoss against make_e2e_loss_fixture.py's (Ultralytics 8.4's
 * definitions in float64 torch, gradients by autograd): both branches of an
 * end2end model, yolo26n (reg_max 1, the `fixture` e2e-loss) or yolov10n
 * (DFL, e2e-loss-dfl), on a 64 x 64 batch of two images with a box under
 * 8 px (STAL) and overlapping boxes, at epoch 30 of 100. */
static void test_e2e_loss(yolo_config *cfg, const char *model, const char *fixture, int reg_max) {
    const char *src = getenv("YOLO_SOURCE_DIR");
    if (!src) {
        printf("skipped the %s loss fixture: YOLO_SOURCE_DIR is not set (run through ctest)\n", model);
        return;
    }
    static const char *const files[7] = {"head_o2m", "head_o2o", "gt", "values", "grad_o2m", "grad_o2o", NULL};
    float *f[6] = {0};
    int64_t count[6], shape[8];
    int ndim;
    for (int i = 0; i < 6; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/tests/fixtures/%s.%s.npy", src, fixture, files[i]);
        f[i] = npy_read_f32(path, &ndim, shape, &count[i]);
        CHECK_MSG(f[i] != NULL, "cannot read %s", path);
    }
    yolo_backend *be = NULL;
    yolo_model *m = NULL;
    yolo_model_options opt = {.nc = NC, .seed = 1};
    if (!f[5] || yolo_backend_create("cpu", 1, &be) || yolo_model_load(model, be, &opt, &m)) {
        CHECK_MSG(0, "%s: %s", model, yolo_last_error());
        goto done;
    }
    CHECK_MSG(yolo_model_reg_max(m) == reg_max && yolo_model_end2end(m), "%s: reg_max %d, end2end %d", model,
              yolo_model_reg_max(m), yolo_model_end2end(m));
    CHECK(yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "epochs", "100", "test") == YOLO_OK);
    yolo_task_context ctx = {.cfg = cfg, .model = m, .nc = NC, .names = names, .imgsz = 64, .world = 1};
    const int B = 2, C = 4 * reg_max + NC, A = 84, hw[3][2] = {{8, 8}, {4, 4}, {2, 2}}, n_gt = (int)(count[2] / 6);
    int32_t cls[8], idx[8];
    float boxes[32];
    for (int i = 0; i < n_gt && i < 8; i++) {
        idx[i] = (int32_t)f[2][6 * i], cls[i] = (int32_t)f[2][6 * i + 1];
        memcpy(boxes + 4 * i, f[2] + 6 * i + 2, 4 * sizeof(float));
    }
    yolo_batch batch = {.n = B, .height = 64, .width = 64, .batch_idx = idx, .epoch = (int32_t)f[3][0]};
    batch.instances.n = n_gt, batch.instances.cls = cls, batch.instances.boxes = boxes;
    /* the maps of both branches, and their gradients */
    yolo_host_tensor maps[6], grads[6];
    float *level[6], *glevel[6];
    int h[3], w[3];
    for (int l = 0; l < 6; l++) {
        h[l % 3] = hw[l % 3][0], w[l % 3] = hw[l % 3][1];
        size_t n = (size_t)B * C * hw[l % 3][0] * hw[l % 3][1];
        level[l] = calloc(n, sizeof(float)), glevel[l] = calloc(n, sizeof(float));
        maps[l] = (yolo_host_tensor){4, {B, C, hw[l % 3][0], hw[l % 3][1]}, level[l]};
        grads[l] = (yolo_host_tensor){4, {B, C, hw[l % 3][0], hw[l % 3][1]}, glevel[l]};
    }
    yolo_det_levels_scatter(f[0], 3, h, w, B, C, level);
    yolo_det_levels_scatter(f[1], 3, h, w, B, C, level + 3);
    void *state = NULL;
    double loss = 0;
    float items[YOLO_TASK_MAX_ITEMS];
    CHECK_MSG(!hooks->loss_create(&ctx, &state), "%s", yolo_last_error());
    /* an end2end model's loss takes both branches' maps: the one-to-many ones alone are refused */
    CHECK_MSG(state && hooks->loss_compute(state, &batch, 3, maps, grads, &loss, items) == YOLO_ERR_ARG &&
                  test_error_mentions("one-to-many, then one-to-one"),
              "3 maps to an end2end loss: %s", yolo_last_error());
    CHECK_MSG(state && !hooks->loss_compute(state, &batch, 6, maps, grads, &loss, items), "%s", yolo_last_error());
    const double ref = f[3][2];
    printf("%s E2ELoss: total %.7g (PyTorch %.7g); one-to-one box %.6g cls %.6g dfl %.6g (PyTorch %.6g %.6g %.6g)\n",
           model, loss, ref, items[0], items[1], items[2], f[3][3], f[3][4], f[3][5]);
    CHECK_MSG(fabs(loss - ref) <= 1e-5 * fabs(ref), "E2ELoss total %.8g, PyTorch %.8g", loss, ref);
    for (int k = 0; k < 3; k++)
        CHECK_MSG(fabsf(items[k] - f[3][3 + k]) <= 1e-5f * fabsf(f[3][3 + k]) + 1e-7f, "item %d: %.8g, PyTorch %.8g", k,
                  items[k], f[3][3 + k]);
    for (int b = 0; b < 2; b++) { /* gradients gathered back to [B, C, A] */
        float *g = malloc(sizeof(float) * (size_t)B * C * A);
        const float *const *gl = (const float *const *)(glevel + 3 * b);
        yolo_det_levels_gather(gl, 3, h, w, B, C, g);
        double diff = interop_rel_diff(g, f[4 + b], (int64_t)B * C * A);
        printf("%s E2ELoss: d total / d %s head: max |ours - autograd| / max |autograd| = %.3g\n", model,
               b ? "one-to-one" : "one-to-many", diff);
        CHECK_MSG(diff <= 1e-5, "%s gradient: relative difference %.3g", b ? "one-to-one" : "one-to-many", diff);
        free(g);
    }
    hooks->loss_destroy(state);
    for (int l = 0; l < 6; l++) free(level[l]), free(glevel[l]);
done:
    yolo_model_free(m);
    yolo_backend_free(be);
    for (int i = 0; i < 6; i++) free(f[i]);
}

int main(void) {
    const yolo_task *task = NULL;
    if (yolo_plugin_load_task("detect", &task) != YOLO_OK) {
        fprintf(stderr, "loading the detect plugin: %s\n", yolo_last_error());
        return 1;
    }
    hooks = task->hooks;
    if (!hooks) {
        fprintf(stderr, "the detect plugin has no hooks\n");
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
    test_class_weights(&ctx);
    test_metrics(&ctx, &val_ctx);
    test_predict(cfg, &ctx);
    test_e2e_loss(cfg, "yolo26n.yaml", "e2e-loss", 1);
    test_e2e_loss(cfg, "yolov10n.yaml", "e2e-loss-dfl", YOLO_DET_REG_MAX);
    yolo_config_free(val_cfg);
    yolo_config_free(cfg);
    return test_result("test_detect_task");
}
