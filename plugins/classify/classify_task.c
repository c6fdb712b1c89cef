/* classify_task.c — the classify task's hooks (yolo/task.h).
 *
 *   loss     Ultralytics' v8ClassificationLoss: F.cross_entropy(logits,
 *            cls, reduction="mean", label_smoothing=ε) over the head's
 *            training output [B, nc] (logits). Not multiplied by the batch
 *            size (unlike detect); the one logged item "loss" is that mean.
 *            The gradient into the logits is (softmax - q) / B with
 *            q = (1 - ε)·onehot + ε/nc.
 *            Validation loss: the head's eval output is softmax
 *            probabilities (val_loss_outputs = 0), so with grads NULL an
 *            output whose rows are probability distributions is read as
 *            p and the same cross-entropy is taken from log p (log p is
 *            exactly logit - logsumexp, so the value equals the logits'
 *            up to float rounding; p is floored at FLT_MIN). A second
 *            output of the same shape is taken as the logits, as
 *            Ultralytics' preds[1] of the eval tuple (softmax, logits).
 *   metrics  ClassificationValidator: the top min(nc, 5) classes of each
 *            image (a stable descending sort: ties go to the lower class
 *            index); top-1 and top-5 accuracy are the fractions of images
 *            whose class is first / among them (so top-5 = 1 when nc <= 5);
 *            fitness (top1 + top5) / 2; pack/merge move the three counters
 *            between ranks; Ultralytics' "classes top1_acc top5_acc" table.
 *   predict  Results.save_txt for classify: the top min(nc, 5) classes as
 *            "0.93 circle" lines, and a JSON object (top-1 class, name,
 *            confidence, and the top-5 list).
 *
 * Only sdk headers and the C library; errors through yolo_error. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/config.h>
#include <yolo/data.h>
#include <yolo/error.h>
#include <yolo/plot.h>
#include <yolo/task.h>

#include "classify_task.h"

#define CT_TOPK 5

/* ------------------------------------------------------------------ */
/* Configuration (a key the configuration lacks keeps the default)     */

static yolo_status cfg_float(const yolo_config *cfg, const char *key, double def, double *out) {
    *out = def;
    if (!cfg || !yolo_config_find_key(cfg, key) || yolo_config_is_null(cfg, key)) return YOLO_OK;
    return yolo_config_get_float(cfg, key, out);
}

/* ------------------------------------------------------------------ */
/* Shapes and labels                                                    */

/* t must be [batch->n, C] with C >= 1. */
static yolo_status check_scores(const char *hook, const yolo_batch *batch, const yolo_host_tensor *t, int index) {
    if (!t->data || t->ndim != 2 || t->shape[0] != batch->n || t->shape[1] < 1 || t->shape[1] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE, "classify %s: output %d must be [%d, nc], got ndim %d [%lld, %lld]", hook,
                          index, batch->n, t->ndim, (long long)(t->ndim > 0 ? t->shape[0] : 0),
                          (long long)(t->ndim > 1 ? t->shape[1] : 0));
    return YOLO_OK;
}

static yolo_status check_batch(const char *hook, const yolo_batch *batch, int n_outputs,
                               const yolo_host_tensor *outputs) {
    if (!batch || !outputs || n_outputs < 1)
        return yolo_error(YOLO_ERR_ARG, "classify %s: no batch or no outputs (%d)", hook, n_outputs);
    if (batch->n <= 0) return yolo_error(YOLO_ERR_ARG, "classify %s: a batch of %d images", hook, batch->n);
    return check_scores(hook, batch, &outputs[0], 0);
}

/* The class of each image, checked against nc. */
static yolo_status check_labels(const char *hook, const yolo_batch *batch, int nc) {
    if (!batch->image_class)
        return yolo_error(YOLO_ERR_ARG, "classify %s: the batch has no image classes (not an ImageFolder dataset?)",
                          hook);
    for (int i = 0; i < batch->n; i++)
        if (batch->image_class[i] < 0 || batch->image_class[i] >= nc)
            return yolo_error(YOLO_ERR_ARG, "classify %s: image %d of the batch has class %d, the model has %d classes",
                              hook, i, (int)batch->image_class[i], nc);
    return YOLO_OK;
}

/* Every row a probability distribution (entries in [0, 1], sum 1). */
static bool rows_are_probabilities(const float *x, int64_t rows, int64_t nc) {
    for (int64_t i = 0; i < rows; i++) {
        double sum = 0;
        for (int64_t c = 0; c < nc; c++) {
            float v = x[i * nc + c];
            if (!(v >= 0.0f && v <= 1.0f)) return false;
            sum += v;
        }
        if (fabs(sum - 1.0) > 1e-3) return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

typedef struct loss_state {
    double label_smoothing;
} loss_state;

static const char *const classify_loss_names[1] = {"loss"};

static yolo_status classify_loss_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "classify loss_create: NULL state");
    *state = NULL;
    double eps;
    yolo_status st = cfg_float(ctx ? ctx->cfg : NULL, "label_smoothing", 0.0, &eps);
    if (st) return yolo_error_context(st, "classify loss");
    if (!(eps >= 0.0 && eps <= 1.0))
        return yolo_error(YOLO_ERR_CONFIG, "classify loss: label_smoothing=%g, expected 0..1", eps);
    double dropout;
    st = cfg_float(ctx ? ctx->cfg : NULL, "dropout", 0.0, &dropout);
    if (st) return yolo_error_context(st, "classify loss");
    if (dropout != 0.0) /* the engine has no dropout op yet: refuse rather than ignore the key */
        return yolo_error(YOLO_ERR_UNSUPPORTED, "dropout=%g: dropout is not built yet (use dropout=0)", dropout);
    loss_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "classify loss_create: out of memory");
    s->label_smoothing = eps;
    *state = s;
    return YOLO_OK;
}

static void classify_loss_destroy(void *state) { free(state); }

static yolo_status classify_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                         const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                         float *items) {
    loss_state *s = state;
    if (!s || !loss) return yolo_error(YOLO_ERR_ARG, "classify loss_compute: NULL state or loss");
    yolo_status st = check_batch("loss_compute", batch, n_outputs, outputs);
    if (st) return st;
    /* The logits: output 0, or output 1 of an eval tuple (softmax, logits). */
    int which = 0;
    if (n_outputs >= 2 && outputs[1].data && outputs[1].ndim == 2 && outputs[1].shape[0] == outputs[0].shape[0] &&
        outputs[1].shape[1] == outputs[0].shape[1])
        which = 1;
    const yolo_host_tensor *x = &outputs[which];
    int64_t B = x->shape[0], nc = x->shape[1];
    st = check_labels("loss_compute", batch, (int)nc);
    if (st) return st;
    float *g = NULL;
    if (grads) {
        const yolo_host_tensor *gt = &grads[which];
        if (!gt->data || gt->ndim != 2 || gt->shape[0] != B || gt->shape[1] != nc)
            return yolo_error(YOLO_ERR_SHAPE, "classify loss_compute: gradient %d must be [%lld, %lld]", which,
                              (long long)B, (long long)nc);
        g = gt->data;
    }
    /* Eval-mode probabilities (validation loss): only without a gradient. */
    bool probs = !grads && which == 0 && rows_are_probabilities(x->data, B, nc);
    double eps = s->label_smoothing, off = eps / (double)nc, total = 0;
    for (int64_t i = 0; i < B; i++) {
        const float *row = x->data + i * nc;
        int t = batch->image_class[i];
        double lse = 0;
        if (!probs) { /* log p_c = x_c - logsumexp(x) */
            double m = row[0];
            for (int64_t c = 1; c < nc; c++) m = row[c] > m ? row[c] : m;
            double sum = 0;
            for (int64_t c = 0; c < nc; c++) sum += exp((double)row[c] - m);
            lse = m + log(sum);
        }
        double li = 0;
        for (int64_t c = 0; c < nc; c++) {
            double lp = probs ? log(fmax((double)row[c], (double)FLT_MIN)) : (double)row[c] - lse;
            double q = (c == t ? 1.0 - eps : 0.0) + off;
            li -= q * lp;
            if (g) g[i * nc + c] = (float)((exp(lp) - q) / (double)B);
        }
        total += li;
    }
    *loss = total / (double)B;
    if (items) items[0] = (float)*loss;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Text buffers                                                         */

typedef struct text_buf {
    char *s;
    size_t len, cap;
} text_buf;

static yolo_status tb_reset(text_buf *b) {
    if (!b->s) {
        b->s = malloc(256);
        if (!b->s) return yolo_error(YOLO_ERR_NOMEM, "classify predict: out of memory");
        b->cap = 256;
    }
    b->len = 0;
    b->s[0] = '\0';
    return YOLO_OK;
}

__attribute__((format(printf, 2, 3))) static yolo_status tb_printf(text_buf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) return yolo_error(YOLO_ERR_ARG, "classify predict: formatting failed");
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return YOLO_OK;
        }
        size_t c = b->cap * 2 > b->len + (size_t)n + 1 ? b->cap * 2 : b->len + (size_t)n + 1;
        char *s = realloc(b->s, c);
        if (!s) return yolo_error(YOLO_ERR_NOMEM, "classify predict: out of memory for %zu bytes", c);
        b->s = s, b->cap = c;
    }
}

/* A JSON string literal. */
static yolo_status tb_json_string(text_buf *b, const char *text) {
    yolo_status st = tb_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)text; !st && *p; p++) {
        if (*p == '"' || *p == '\\')
            st = tb_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            st = tb_printf(b, "\\u%04x", *p);
        else
            st = tb_printf(b, "%c", *p);
    }
    return st ? st : tb_printf(b, "\"");
}

/* A number as Python prints round(x, 5). */
static double round5(double x) { return round(x * 1e5) / 1e5; }

/* ------------------------------------------------------------------ */
/* Top-k                                                                */

/* Where class t ranks in a stable descending sort of row[nc]: the classes
 * scoring higher, plus the equal ones of a lower index. NaN ranks last. */
static int64_t class_rank(const float *row, int64_t nc, int t) {
    float v = row[t];
    if (isnan(v)) return nc;
    int64_t r = 0;
    for (int64_t c = 0; c < nc; c++) r += row[c] > v || (row[c] == v && c < t);
    return r;
}

/* The k best classes of row[nc], best first (stable: ties keep class
 * order; NaN scores come last). */
static void top_classes(const float *row, int64_t nc, int k, int *out) {
    int n = 0;
    for (int64_t c = 0; c < nc; c++) {
        float v = isnan(row[c]) ? -INFINITY : row[c];
        /* insert c after every kept class scoring >= v (stability) */
        int pos = n;
        while (pos > 0) {
            float w = isnan(row[out[pos - 1]]) ? -INFINITY : row[out[pos - 1]];
            if (w >= v) break;
            pos--;
        }
        if (pos >= k) continue;
        int last = n < k ? n : k - 1;
        for (int j = last; j > pos; j--) out[j] = out[j - 1];
        out[pos] = (int)c;
        if (n < k) n++;
    }
}

/* ------------------------------------------------------------------ */
/* Metrics (and predict)                                                */

typedef struct metrics_state {
    int nc; /* classes (the context's; 0: from the first output) */
    int n_names;
    char **names; /* copies of the context's names */
    int64_t n_images, n_top1, n_top5;
    text_buf txt, json;
    yolo_confusion cm; /* predicted top-1 x true class (this rank's share under DDP) */
    yolo_drawn_object drawn[1];
    char summary[512];
} metrics_state;

static const char *const classify_metric_names[2] = {"metrics/accuracy_top1", "metrics/accuracy_top5"};

static void classify_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    for (int i = 0; i < s->n_names; i++) free(s->names[i]);
    free(s->names), free(s->txt.s), free(s->json.s);
    yolo_confusion_free(&s->cm);
    free(s);
}

static yolo_status classify_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "classify metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "classify metrics_create: out of memory");
    s->nc = ctx && ctx->nc > 0 ? ctx->nc : 0;
    if (ctx && ctx->names && s->nc > 0) {
        s->names = calloc((size_t)s->nc, sizeof(char *));
        if (!s->names) {
            classify_metrics_destroy(s);
            return yolo_error(YOLO_ERR_NOMEM, "classify metrics_create: out of memory");
        }
        s->n_names = s->nc;
        for (int c = 0; c < s->nc; c++) {
            const char *name = ctx->names[c] ? ctx->names[c] : "";
            s->names[c] = malloc(strlen(name) + 1);
            if (!s->names[c]) {
                classify_metrics_destroy(s);
                return yolo_error(YOLO_ERR_NOMEM, "classify metrics_create: out of memory");
            }
            strcpy(s->names[c], name);
        }
    }
    if (s->nc > 0 && yolo_confusion_init(&s->cm, s->nc, 0) != YOLO_OK) {
        classify_metrics_destroy(s);
        return yolo_error(YOLO_ERR_NOMEM, "classify metrics_create: out of memory");
    }
    *state = s;
    return YOLO_OK;
}

/* The number of classes of the scores [B, C]: the context's, which must
 * equal C; without one, C. */
static yolo_status scores_classes(metrics_state *s, const char *hook, const yolo_host_tensor *t, int64_t *nc) {
    *nc = t->shape[1];
    if (s->nc > 0 && *nc != s->nc)
        return yolo_error(YOLO_ERR_SHAPE, "classify %s: the model outputs %lld classes, the dataset has %d", hook,
                          (long long)*nc, s->nc);
    return YOLO_OK;
}

static yolo_status classify_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                           const yolo_host_tensor *outputs) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "classify metrics_update: NULL state");
    yolo_status st = check_batch("metrics_update", batch, n_outputs, outputs);
    int64_t nc = 0;
    if (!st) st = scores_classes(s, "metrics_update", &outputs[0], &nc);
    if (!st) st = check_labels("metrics_update", batch, (int)nc);
    if (st) return st;
    int64_t k = nc < CT_TOPK ? nc : CT_TOPK; /* Ultralytics: n5 = min(len(names), 5) */
    for (int i = 0; i < batch->n; i++) {
        int64_t r = class_rank(outputs[0].data + (int64_t)i * nc, nc, batch->image_class[i]);
        s->n_images++;
        s->n_top1 += r == 0;
        s->n_top5 += r < k;
        int top1;
        top_classes(outputs[0].data + (int64_t)i * nc, nc, 1, &top1);
        yolo_confusion_add(&s->cm, top1, batch->image_class[i]);
    }
    return YOLO_OK;
}

/* pack/merge: a magic number and the three counters. */
#define CT_PACK_MAGIC 0x314d4359u /* "YCM1" */

typedef struct pack_state {
    uint32_t magic;
    uint32_t reserved;
    int64_t n_images, n_top1, n_top5;
} pack_state;

static yolo_status classify_metrics_pack(void *state, void **bytes, size_t *size) {
    metrics_state *s = state;
    if (!s || !bytes || !size) return yolo_error(YOLO_ERR_ARG, "classify metrics_pack: NULL argument");
    pack_state *p = malloc(sizeof *p);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "classify metrics_pack: out of memory");
    *p = (pack_state){CT_PACK_MAGIC, 0, s->n_images, s->n_top1, s->n_top5};
    *bytes = p;
    *size = sizeof *p;
    return YOLO_OK;
}

static yolo_status classify_metrics_merge(void *state, const void *bytes, size_t size) {
    metrics_state *s = state;
    if (!s || !bytes) return yolo_error(YOLO_ERR_ARG, "classify metrics_merge: NULL argument");
    pack_state p;
    if (size != sizeof p) return yolo_error(YOLO_ERR_FORMAT, "classify metrics_merge: %zu bytes, expected %zu", size,
                                            sizeof p);
    memcpy(&p, bytes, sizeof p);
    if (p.magic != CT_PACK_MAGIC || p.n_images < 0 || p.n_top1 < 0 || p.n_top1 > p.n_top5 || p.n_top5 > p.n_images)
        return yolo_error(YOLO_ERR_FORMAT,
                          "classify metrics_merge: not a classify metrics state (magic %08x, %lld images, top-1 %lld, "
                          "top-5 %lld)",
                          (unsigned)p.magic, (long long)p.n_images, (long long)p.n_top1, (long long)p.n_top5);
    s->n_images += p.n_images;
    s->n_top1 += p.n_top1;
    s->n_top5 += p.n_top5;
    return YOLO_OK;
}

static yolo_status classify_metrics_summarize(void *state, double *values, double *fitness, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "classify metrics_summarize: NULL state");
    double top1 = s->n_images ? (double)s->n_top1 / (double)s->n_images : 0.0;
    double top5 = s->n_images ? (double)s->n_top5 / (double)s->n_images : 0.0;
    if (values) values[0] = top1, values[1] = top5;
    if (fitness) *fitness = (top1 + top5) / 2.0;
    if (table) {
        /* ClassificationValidator.get_desc and print_results. */
        fprintf(table, "%22s%11s%11s\n", "classes", "top1_acc", "top5_acc");
        fprintf(table, "%22s%11.3g%11.3g\n", "all", top1, top5);
        if (s->n_images == 0) fprintf(table, "WARNING no images in the val set, can not compute metrics\n");
    }
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

static const char *class_name(const metrics_state *s, int c, char *buf, size_t size) {
    if (c >= 0 && c < s->n_names && s->names[c]) return s->names[c];
    snprintf(buf, size, "%d", c);
    return buf;
}

static yolo_status classify_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                    const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    metrics_state *s = state;
    if (!s || !out) return yolo_error(YOLO_ERR_ARG, "classify predict: NULL state or output");
    yolo_status st = check_batch("predict", batch, n_outputs, outputs);
    int64_t nc = 0;
    if (!st) st = scores_classes(s, "predict", &outputs[0], &nc);
    if (st) return st;
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "classify predict: image %d of a batch of %d", image, batch->n);
    const float *p = outputs[0].data + (int64_t)image * nc;
    int k = nc < CT_TOPK ? (int)nc : CT_TOPK, top[CT_TOPK];
    top_classes(p, nc, k, top);
    st = tb_reset(&s->txt);
    if (!st) st = tb_reset(&s->json);
    char buf[32];
    /* Results.save_txt (classify): f"{prob:.2f} {name}" for probs.top5. */
    for (int j = 0; j < k && !st; j++)
        st = tb_printf(&s->txt, "%.2f %s\n", (double)p[top[j]], class_name(s, top[j], buf, sizeof buf));
    /* Results.summary (classify): the top-1 name, class and confidence; plus the top-5 list. */
    if (!st) st = tb_printf(&s->json, "{\"class\": %d, \"name\": ", top[0]);
    if (!st) st = tb_json_string(&s->json, class_name(s, top[0], buf, sizeof buf));
    if (!st) st = tb_printf(&s->json, ", \"confidence\": %.10g, \"top5\": [", round5(p[top[0]]));
    for (int j = 0; j < k && !st; j++) {
        st = tb_printf(&s->json, "%s{\"class\": %d, \"name\": ", j ? ", " : "", top[j]);
        if (!st) st = tb_json_string(&s->json, class_name(s, top[j], buf, sizeof buf));
        if (!st) st = tb_printf(&s->json, ", \"confidence\": %.10g}", round5(p[top[j]]));
    }
    if (!st) st = tb_printf(&s->json, "]}");
    if (st) return st;
    out->txt = s->txt.s;
    out->json = s->json.s;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */

/* Results.plot for classify: the top-5 classes with their probabilities
 * stacked at the top-left (top-1 alone on a mosaic tile). */
static yolo_status classify_draw_predictions(void *state, const yolo_batch *batch, int image, int n_outputs,
                                             const yolo_host_tensor *outputs, const yolo_draw_options *opt,
                                             yolo_canvas *canvas, yolo_drawn_result *out) {
    metrics_state *s = state;
    if (!s || !opt || !canvas || !out) return yolo_error(YOLO_ERR_ARG, "classify draw_predictions: NULL argument");
    yolo_status st = check_batch("draw_predictions", batch, n_outputs, outputs);
    int64_t nc = 0;
    if (!st) st = scores_classes(s, "draw_predictions", &outputs[0], &nc);
    if (!st && (image < 0 || image >= batch->n))
        st = yolo_error(YOLO_ERR_ARG, "classify draw_predictions: image %d of a batch of %d", image, batch->n);
    if (st) return st;
    const float *p = outputs[0].data + (int64_t)image * nc;
    int k = nc < CT_TOPK ? (int)nc : CT_TOPK, top[CT_TOPK];
    top_classes(p, nc, k, top);
    /* the visible top-left of the (centre-cropped) input, in original pixels */
    const yolo_image_meta *m = batch->meta ? &batch->meta[image] : NULL;
    double rx = m && m->ratio_x > 0 ? m->ratio_x : 1, ry = m && m->ratio_y > 0 ? m->ratio_y : 1;
    double margin = 0.03 * batch->height;
    double x = (margin - (m ? m->pad_x : 0)) / rx, y = (margin - (m ? m->pad_y : 0)) / ry;
    size_t used = 0;
    s->summary[0] = '\0';
    char bufs[CT_TOPK][32];
    const char *names[CT_TOPK];
    float probs[CT_TOPK];
    for (int j = 0; j < k; j++) {
        names[j] = class_name(s, top[j], bufs[j], sizeof bufs[j]);
        probs[j] = p[top[j]];
        if (used < sizeof s->summary)
            used += (size_t)snprintf(s->summary + used, sizeof s->summary - used, "%s%s %.2f", j ? ", " : "", names[j],
                                     (double)probs[j]);
    }
    yolo_draw_top_classes(canvas, x, y, k, top, names, probs, opt);
    s->drawn[0] = (yolo_drawn_object){top[0], p[top[0]], {0, 0, 0, 0}};
    *out = (yolo_drawn_result){0, s->drawn, s->summary}; /* no boxes: nothing to crop */
    return YOLO_OK;
}

static yolo_status classify_metrics_plot(void *state, const char *dir, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "classify metrics_plot: NULL state");
    if (!s->cm.counts) return YOLO_OK;
    if (table) yolo_confusion_print(&s->cm, (const char *const *)s->names, table);
    return dir ? yolo_confusion_plot(&s->cm, (const char *const *)s->names, dir) : YOLO_OK;
}

const yolo_task_hooks classify_task_hooks = {
    .data = {.needs = YOLO_NEED_IMAGE_CLASS, .parse_labels = NULL, .label_format = NULL},
    .n_loss_items = 1,
    .loss_names = classify_loss_names,
    .loss_create = classify_loss_create,
    .loss_destroy = classify_loss_destroy,
    .loss_compute = classify_loss_compute,
    .val_loss_outputs = 0,
    .n_metrics = 2,
    .metric_names = classify_metric_names,
    .metrics_create = classify_metrics_create,
    .metrics_destroy = classify_metrics_destroy,
    .metrics_update = classify_metrics_update,
    .metrics_pack = classify_metrics_pack,
    .metrics_merge = classify_metrics_merge,
    .metrics_summarize = classify_metrics_summarize,
    .predict = classify_predict,
    .draw_predictions = classify_draw_predictions,
    .metrics_plot = classify_metrics_plot,
};
