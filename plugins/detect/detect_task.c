/* detect_task.c — the detect task's hooks (yolo/task.h): the glue between
 * the core trainer and the detect mathematics of detect_math.h.
 *
 *   loss     the training-layout head maps [B, 4*16 + nc, H_l, W_l] are
 *            gathered into [B, C, A], the batch's instances become xyxy
 *            pixels of the batch image, v8DetectionLoss runs on the host
 *            and its gradient is scattered back to the per-level layout.
 *            loss = B * (box + cls + dfl); the logged items are the three
 *            gained terms (Ultralytics' loss_items).
 *   metrics  DetectionValidator: NMS of the eval output [B, 4 + nc, A]
 *            (conf 0.001 unless set, multi-label), predictions and gts
 *            scaled back to the original image, matched at IoU
 *            0.50:0.05:0.95 and accumulated; pack/merge move the
 *            accumulator between ranks as bytes; summarize gives P, R,
 *            mAP50, mAP50-95, the fitness and the Ultralytics table.
 *   predict  NMS with predict's settings (conf 0.25 unless set, agnostic_nms,
 *            classes), Ultralytics' txt lines (cls, normalized xywh of the
 *            original image, conf) and a JSON object of the detections.
 *
 * Only sdk headers and the C library; errors through yolo_error. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/config.h>
#include <yolo/data.h>
#include <yolo/error.h>
#include <yolo/model.h>
#include <yolo/task.h>

#include "detect_head.h"
#include "detect_math.h"
#include "detect_task.h"

#define DT_REG_MAX DETECT_REG_MAX
#define DT_MAX_LEVELS DETECT_MAX_LEVELS

/* ------------------------------------------------------------------ */
/* Configuration (a key the configuration lacks keeps the default)     */

static bool cfg_has(const yolo_config *cfg, const char *key) {
    return cfg && yolo_config_find_key(cfg, key) != NULL;
}

static yolo_status cfg_float(const yolo_config *cfg, const char *key, double def, double *out) {
    *out = def;
    if (!cfg_has(cfg, key) || yolo_config_is_null(cfg, key)) return YOLO_OK;
    return yolo_config_get_float(cfg, key, out);
}

static yolo_status cfg_int(const yolo_config *cfg, const char *key, int64_t def, int64_t *out) {
    *out = def;
    if (!cfg_has(cfg, key) || yolo_config_is_null(cfg, key)) return YOLO_OK;
    return yolo_config_get_int(cfg, key, out);
}

static yolo_status cfg_bool(const yolo_config *cfg, const char *key, bool def, bool *out) {
    *out = def;
    if (!cfg_has(cfg, key) || yolo_config_is_null(cfg, key)) return YOLO_OK;
    return yolo_config_get_bool(cfg, key, out);
}

static bool same_word(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
        char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

/* ------------------------------------------------------------------ */
/* Shapes                                                               */

static yolo_status check_map(const char *hook, const yolo_host_tensor *t, int i, int64_t batch, int64_t channels) {
    if (!t->data || t->ndim != 4 || t->shape[0] != batch || t->shape[1] != channels || t->shape[2] <= 0 ||
        t->shape[3] <= 0 || t->shape[2] > INT32_MAX || t->shape[3] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE,
                          "detect %s: output %d must be a map [%lld, %lld, H, W], got ndim %d [%lld, %lld, %lld, %lld]",
                          hook, i, (long long)batch, (long long)channels, t->ndim, (long long)t->shape[0],
                          (long long)(t->ndim > 1 ? t->shape[1] : 0), (long long)(t->ndim > 2 ? t->shape[2] : 0),
                          (long long)(t->ndim > 3 ? t->shape[3] : 0));
    return YOLO_OK;
}

/* The eval output t[0] = [B, 4 + nc, A]; *nc and *n_anchors from it. */
static yolo_status check_eval(const char *hook, const yolo_batch *batch, int n_outputs,
                              const yolo_host_tensor *outputs, int *nc, int *n_anchors) {
    if (!batch || n_outputs < 1 || !outputs)
        return yolo_error(YOLO_ERR_ARG, "detect %s: no batch or no outputs (%d)", hook, n_outputs);
    const yolo_host_tensor *t = &outputs[0];
    if (!t->data || t->ndim != 3 || t->shape[0] != batch->n || t->shape[1] < 5 || t->shape[1] > INT32_MAX ||
        t->shape[2] < 0 || t->shape[2] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE,
                          "detect %s: output 0 must be the decoded predictions [%d, 4 + nc, A], got ndim %d "
                          "[%lld, %lld, %lld]",
                          hook, batch->n, t->ndim, (long long)t->shape[0], (long long)(t->ndim > 1 ? t->shape[1] : 0),
                          (long long)(t->ndim > 2 ? t->shape[2] : 0));
    *nc = (int)t->shape[1] - 4;
    *n_anchors = (int)t->shape[2];
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

typedef struct loss_state {
    detect_loss_params p;
    int n_model_strides;
    int model_strides[DT_MAX_LEVELS];
    /* anchors of the last input size */
    int nl, h[DT_MAX_LEVELS], w[DT_MAX_LEVELS];
    float stride[DT_MAX_LEVELS];
    int n_anchors;
    float *anchor_xy, *anchor_stride;
    /* scratch */
    float *head, *grad;
    size_t head_cap, grad_cap;
    float *gt_boxes;
    int32_t *gt_cls;
    size_t gt_cap;
} loss_state;

static const char *const detect_loss_names[3] = {"box_loss", "cls_loss", "dfl_loss"};

static yolo_status detect_loss_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "detect loss_create: NULL state");
    *state = NULL;
    loss_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "detect loss_create: out of memory");
    s->p = detect_loss_default_params(ctx && ctx->nc > 0 ? ctx->nc : 1);
    const yolo_config *cfg = ctx ? ctx->cfg : NULL;
    double box, cls, dfl;
    yolo_status st = cfg_float(cfg, "box", s->p.box_gain, &box);
    if (!st) st = cfg_float(cfg, "cls", s->p.cls_gain, &cls);
    if (!st) st = cfg_float(cfg, "dfl", s->p.dfl_gain, &dfl);
    if (st) {
        free(s);
        return yolo_error_context(st, "detect loss");
    }
    s->p.box_gain = (float)box, s->p.cls_gain = (float)cls, s->p.dfl_gain = (float)dfl;
    if (ctx && ctx->model) {
        int n = yolo_model_strides(ctx->model, s->model_strides, DT_MAX_LEVELS);
        s->n_model_strides = n > DT_MAX_LEVELS ? 0 : n;
    }
    *state = s;
    return YOLO_OK;
}

static void detect_loss_destroy(void *state) {
    loss_state *s = state;
    if (!s) return;
    free(s->anchor_xy), free(s->anchor_stride), free(s->head), free(s->grad), free(s->gt_boxes), free(s->gt_cls);
    free(s);
}

/* Anchors for this input size (kept while the size stays the same). The
 * strides are the model's; without a model, the batch image's size over
 * each map's. */
static yolo_status loss_anchors(loss_state *s, const yolo_batch *batch, int nl, const int *h, const int *w) {
    float stride[DT_MAX_LEVELS];
    for (int l = 0; l < nl; l++)
        stride[l] = s->n_model_strides == nl ? (float)s->model_strides[l] : (float)batch->height / (float)h[l];
    bool same = s->anchor_xy && s->nl == nl;
    for (int l = 0; same && l < nl; l++) same = s->h[l] == h[l] && s->w[l] == w[l] && s->stride[l] == stride[l];
    if (same) return YOLO_OK;
    int64_t A = 0;
    for (int l = 0; l < nl; l++) A += (int64_t)h[l] * w[l];
    if (A > INT32_MAX / 64) return yolo_error(YOLO_ERR_SHAPE, "detect loss: %lld anchors is too many", (long long)A);
    float *xy = malloc((size_t)A * 2 * sizeof(float)), *st = malloc((size_t)A * sizeof(float));
    if (!xy || !st) {
        free(xy), free(st);
        return yolo_error(YOLO_ERR_NOMEM, "detect loss: out of memory for %lld anchors", (long long)A);
    }
    yolo_status rc = detect_make_anchors(nl, h, w, stride, 0.5f, xy, st);
    if (rc) {
        free(xy), free(st);
        return rc;
    }
    free(s->anchor_xy), free(s->anchor_stride);
    s->anchor_xy = xy, s->anchor_stride = st;
    s->nl = nl, s->n_anchors = (int)A;
    for (int l = 0; l < nl; l++) s->h[l] = h[l], s->w[l] = w[l], s->stride[l] = stride[l];
    return YOLO_OK;
}

static yolo_status grow_floats(float **buf, size_t *cap, size_t need) {
    if (need <= *cap && *buf) return YOLO_OK;
    float *a = realloc(*buf, (need ? need : 1) * sizeof(float));
    if (!a) return yolo_error(YOLO_ERR_NOMEM, "detect loss: out of memory for %zu floats", need);
    *buf = a;
    *cap = need;
    return YOLO_OK;
}

/* The batch's instances as xyxy pixels of the batch image (Ultralytics'
 * preprocess: xywh * size, then xywh2xyxy). */
static yolo_status gt_from_batch(const yolo_batch *batch, float **boxes, int32_t **cls, size_t *cap,
                                 detect_gt_batch *gt) {
    const yolo_instances *ins = &batch->instances;
    int n = ins->n;
    if (n < 0 || (n > 0 && (!ins->cls || !ins->boxes || !batch->batch_idx)))
        return yolo_error(YOLO_ERR_ARG, "detect: the batch's %d instances lack their arrays", n);
    if ((size_t)n > *cap) {
        float *b = realloc(*boxes, (size_t)n * 4 * sizeof(float));
        if (!b) return yolo_error(YOLO_ERR_NOMEM, "detect: out of memory for %d instances", n);
        *boxes = b;
        int32_t *c = realloc(*cls, (size_t)n * sizeof(int32_t));
        if (!c) return yolo_error(YOLO_ERR_NOMEM, "detect: out of memory for %d instances", n);
        *cls = c;
        *cap = (size_t)n;
    }
    float W = (float)batch->width, H = (float)batch->height;
    for (int k = 0; k < n; k++) {
        const float *b = ins->boxes + 4 * (size_t)k;
        float xywh[4] = {b[0] * W, b[1] * H, b[2] * W, b[3] * H};
        box_xywh_to_xyxy(xywh, *boxes + 4 * (size_t)k, 1);
        (*cls)[k] = ins->cls[k];
    }
    gt->n = n;
    gt->batch_idx = batch->batch_idx;
    gt->cls = *cls;
    gt->boxes = *boxes;
    return YOLO_OK;
}

static yolo_status detect_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                       const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                       float *items) {
    loss_state *s = state;
    if (!s || !batch || !outputs || !loss)
        return yolo_error(YOLO_ERR_ARG, "detect loss_compute: NULL state, batch, outputs or loss");
    if (n_outputs < 1 || n_outputs > DT_MAX_LEVELS)
        return yolo_error(YOLO_ERR_ARG, "detect loss_compute: %d outputs, expected the head's 1..%d level maps",
                          n_outputs, DT_MAX_LEVELS);
    if (batch->n <= 0 || batch->width <= 0 || batch->height <= 0)
        return yolo_error(YOLO_ERR_ARG, "detect loss_compute: batch of %d images %dx%d", batch->n, batch->width,
                          batch->height);
    if (outputs[0].ndim != 4 || outputs[0].shape[1] < 4 * DT_REG_MAX + 1 || outputs[0].shape[1] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE,
                          "detect loss_compute: output 0 must be a map [%d, %d + nc, H, W], got ndim %d",
                          batch->n, 4 * DT_REG_MAX, outputs[0].ndim);
    int64_t B = batch->n, C = outputs[0].shape[1];
    int nl = n_outputs, h[DT_MAX_LEVELS], w[DT_MAX_LEVELS];
    const float *levels[DT_MAX_LEVELS];
    float *glevels[DT_MAX_LEVELS];
    for (int l = 0; l < nl; l++) {
        yolo_status st = check_map("loss_compute", &outputs[l], l, B, C);
        if (st) return st;
        if (grads) {
            st = check_map("loss_compute (gradient)", &grads[l], l, B, C);
            if (!st && (grads[l].shape[2] != outputs[l].shape[2] || grads[l].shape[3] != outputs[l].shape[3]))
                st = yolo_error(YOLO_ERR_SHAPE, "detect loss_compute: gradient %d is %lldx%lld, its output %lldx%lld",
                                l, (long long)grads[l].shape[2], (long long)grads[l].shape[3],
                                (long long)outputs[l].shape[2], (long long)outputs[l].shape[3]);
            if (st) return st;
            glevels[l] = grads[l].data;
        }
        h[l] = (int)outputs[l].shape[2], w[l] = (int)outputs[l].shape[3];
        levels[l] = outputs[l].data;
    }
    yolo_status st = loss_anchors(s, batch, nl, h, w);
    if (st) return st;
    int A = s->n_anchors;
    size_t need = (size_t)B * (size_t)C * (size_t)A;
    st = grow_floats(&s->head, &s->head_cap, need);
    if (!st && grads) st = grow_floats(&s->grad, &s->grad_cap, need);
    if (st) return st;
    detect_levels_gather(levels, nl, h, w, (int)B, (int)C, s->head);

    detect_gt_batch gt;
    st = gt_from_batch(batch, &s->gt_boxes, &s->gt_cls, &s->gt_cap, &gt);
    if (st) return st;

    detect_loss_params p = s->p;
    p.nc = (int)C - 4 * DT_REG_MAX;
    p.reg_max = DT_REG_MAX;
    detect_loss_value v;
    st = detect_loss(&p, (int)B, A, s->head, s->anchor_xy, s->anchor_stride, &gt, &v, grads ? s->grad : NULL);
    if (st) return st;
    if (grads) detect_levels_scatter(s->grad, nl, h, w, (int)B, (int)C, glevels);
    *loss = v.total;
    if (items) items[0] = (float)v.box, items[1] = (float)v.cls, items[2] = (float)v.dfl;
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
        if (!b->s) return yolo_error(YOLO_ERR_NOMEM, "detect predict: out of memory");
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
        if (n < 0) return yolo_error(YOLO_ERR_ARG, "detect predict: formatting failed");
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return YOLO_OK;
        }
        size_t c = b->cap * 2 > b->len + (size_t)n + 1 ? b->cap * 2 : b->len + (size_t)n + 1;
        char *s = realloc(b->s, c);
        if (!s) return yolo_error(YOLO_ERR_NOMEM, "detect predict: out of memory for %zu bytes", c);
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
/* Metrics (and predict)                                                */

typedef struct metrics_state {
    int nc;       /* classes of the summary (the context's) */
    int n_names;
    char **names; /* copies of the context's names */
    bool predict, per_class, single_cls;
    nms_params nms;
    int32_t *classes;
    ap_stats stats;
    detection *dets;
    float *gt_boxes;
    int32_t *gt_cls;
    size_t gt_cap;
    text_buf txt, json;
} metrics_state;

static const char *const detect_metric_names[4] = {"metrics/precision(B)", "metrics/recall(B)",
                                                   "metrics/mAP50(B)", "metrics/mAP50-95(B)"};

static void detect_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    for (int i = 0; i < s->n_names; i++) free(s->names[i]);
    free(s->names), free(s->classes), free(s->dets), free(s->gt_boxes), free(s->gt_cls);
    free(s->txt.s), free(s->json.s);
    ap_stats_free(&s->stats);
    free(s);
}

static yolo_status metrics_settings(metrics_state *s, const yolo_config *cfg) {
    const char *mode = "val";
    if (cfg_has(cfg, "mode") && !yolo_config_is_null(cfg, "mode")) {
        yolo_status st = yolo_config_get_string(cfg, "mode", &mode);
        if (st) return st;
        if (!mode) mode = "val";
    }
    s->predict = same_word(mode, "predict");
    double conf, iou;
    int64_t max_det;
    bool verbose, agnostic;
    yolo_status st = cfg_float(cfg, "conf", s->predict ? 0.25 : 0.001, &conf);
    if (!st) st = cfg_float(cfg, "iou", 0.7, &iou);
    if (!st) st = cfg_int(cfg, "max_det", 300, &max_det);
    if (!st) st = cfg_bool(cfg, "verbose", true, &verbose);
    if (!st) st = cfg_bool(cfg, "single_cls", false, &s->single_cls);
    if (!st) st = cfg_bool(cfg, "agnostic_nms", false, &agnostic);
    if (st) return st;
    if (max_det < 1 || max_det > 1000000)
        return yolo_error(YOLO_ERR_CONFIG, "detect: max_det=%lld, expected 1..1000000", (long long)max_det);
    s->nms = nms_default_params();
    s->nms.conf = (float)conf;
    s->nms.iou = (float)iou;
    s->nms.max_det = (int)max_det;
    if (s->predict) {
        /* Ultralytics' DetectionPredictor: single-label, agnostic_nms, classes. */
        s->nms.multi_label = false;
        s->nms.agnostic = agnostic;
        if (cfg_has(cfg, "classes") && !yolo_config_is_null(cfg, "classes")) {
            const int64_t *items;
            int n;
            st = yolo_config_get_int_list(cfg, "classes", &items, &n);
            if (st) return st;
            s->classes = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
            if (!s->classes) return yolo_error(YOLO_ERR_NOMEM, "detect: out of memory");
            for (int i = 0; i < n; i++) s->classes[i] = (int32_t)items[i];
            s->nms.classes = s->classes;
            s->nms.n_classes = n;
        }
    } else {
        /* DetectionValidator: multi-label (when nc > 1), agnostic with single_cls. */
        s->nms.multi_label = true;
        s->nms.agnostic = s->single_cls || agnostic;
    }
    /* Per-class rows as the validator prints them: verbose, and not the
     * per-epoch validation of a training run. */
    s->per_class = verbose && !same_word(mode, "train");
    return YOLO_OK;
}

static yolo_status detect_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "detect metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "detect metrics_create: out of memory");
    ap_stats_init(&s->stats, AP_N_IOU);
    s->nc = ctx && ctx->nc > 0 ? ctx->nc : 0;
    yolo_status st = metrics_settings(s, ctx ? ctx->cfg : NULL);
    if (st) {
        detect_metrics_destroy(s);
        return yolo_error_context(st, "detect metrics");
    }
    s->dets = malloc((size_t)s->nms.max_det * sizeof(detection));
    if (!s->dets) {
        detect_metrics_destroy(s);
        return yolo_error(YOLO_ERR_NOMEM, "detect metrics_create: out of memory for %d detections", s->nms.max_det);
    }
    if (ctx && ctx->names && s->nc > 0) {
        s->names = calloc((size_t)s->nc, sizeof(char *));
        if (!s->names) {
            detect_metrics_destroy(s);
            return yolo_error(YOLO_ERR_NOMEM, "detect metrics_create: out of memory");
        }
        s->n_names = s->nc;
        for (int c = 0; c < s->nc; c++) {
            const char *name = ctx->names[c] ? ctx->names[c] : "";
            s->names[c] = malloc(strlen(name) + 1);
            if (!s->names[c]) {
                detect_metrics_destroy(s);
                return yolo_error(YOLO_ERR_NOMEM, "detect metrics_create: out of memory");
            }
            strcpy(s->names[c], name);
        }
    }
    *state = s;
    return YOLO_OK;
}

/* Batch-image xyxy boxes -> the original image's (Ultralytics' scale_boxes
 * with the batch's ratio and padding, clipped). Without meta the batch
 * image is the original. */
static yolo_status to_original(const yolo_batch *batch, int image, float *xyxy, size_t n) {
    if (!batch->meta) {
        box_unletterbox(xyxy, n, 1.0f, 0.0f, 0.0f, (float)batch->width, (float)batch->height);
        return YOLO_OK;
    }
    const yolo_image_meta *m = &batch->meta[image];
    if (!(m->ratio_x > 0) || !(m->ratio_y > 0) || m->orig_width <= 0 || m->orig_height <= 0)
        return yolo_error(YOLO_ERR_ARG, "detect: image %d of the batch has ratio %g x %g, original %dx%d", image,
                          (double)m->ratio_x, (double)m->ratio_y, m->orig_width, m->orig_height);
    float W = (float)m->orig_width, H = (float)m->orig_height;
    if (m->ratio_x == m->ratio_y) {
        box_unletterbox(xyxy, n, m->ratio_x, m->pad_x, m->pad_y, W, H);
        return YOLO_OK;
    }
    for (size_t i = 0; i < n; i++) {
        float *b = xyxy + 4 * i;
        for (int k = 0; k < 4; k++) {
            float v = k % 2 == 0 ? (b[k] - m->pad_x) / m->ratio_x : (b[k] - m->pad_y) / m->ratio_y;
            float hi = k % 2 == 0 ? W : H;
            b[k] = v < 0 ? 0 : (v > hi ? hi : v);
        }
    }
    return YOLO_OK;
}

/* NMS of image `image` of the eval output, boxes in original pixels. */
static yolo_status image_detections(metrics_state *s, const yolo_batch *batch, const yolo_host_tensor *pred, int nc,
                                    int n_anchors, int image, int *n_det) {
    const float *p = pred->data + (size_t)image * (size_t)(4 + nc) * (size_t)n_anchors;
    yolo_status st = nms_detect(p, nc, n_anchors, &s->nms, s->dets, n_det);
    if (st) return st;
    for (int i = 0; i < *n_det && !st; i++) st = to_original(batch, image, s->dets[i].box, 1);
    return st;
}

static yolo_status detect_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                         const yolo_host_tensor *outputs) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "detect metrics_update: NULL state");
    int nc, A;
    yolo_status st = check_eval("metrics_update", batch, n_outputs, outputs, &nc, &A);
    if (st) return st;
    detect_gt_batch all;
    st = gt_from_batch(batch, &s->gt_boxes, &s->gt_cls, &s->gt_cap, &all);
    if (st) return st;
    /* Instances of no image in the batch are an error, not silently dropped. */
    for (int j = 0; j < all.n; j++)
        if (all.batch_idx[j] < 0 || all.batch_idx[j] >= batch->n || (j > 0 && all.batch_idx[j] < all.batch_idx[j - 1]))
            return yolo_error(YOLO_ERR_ARG,
                              "detect metrics_update: instance %d has image index %d (a batch of %d, sorted)", j,
                              (int)all.batch_idx[j], batch->n);
    /* gt_from_batch gave xyxy pixels of the batch image; each image's gts
     * (instances are sorted by image) go back to its original image. */
    int k = 0;
    for (int i = 0; i < batch->n; i++) {
        int n_det;
        st = image_detections(s, batch, &outputs[0], nc, A, i, &n_det);
        if (st) return st;
        if (s->single_cls)
            for (int d = 0; d < n_det; d++) s->dets[d].cls = 0;
        int k0 = k;
        while (k < all.n && all.batch_idx[k] == i) k++;
        float *gb = s->gt_boxes + 4 * (size_t)k0;
        int32_t *gc = s->gt_cls + k0;
        st = to_original(batch, i, gb, (size_t)(k - k0));
        if (st) return st;
        if (s->single_cls)
            for (int j = 0; j < k - k0; j++) gc[j] = 0;
        st = detect_metrics_add_image(&s->stats, s->dets, n_det, k - k0, gc, gb);
        if (st) return st;
    }
    return YOLO_OK;
}

/* pack/merge: a little header, then the accumulator's arrays. */
#define DT_PACK_MAGIC 0x314d4459u /* "YDM1" */

typedef struct pack_header {
    uint32_t magic;
    int32_t n_iou;
    int64_t n_images;
    uint64_t n_pred, n_target, n_target_img;
} pack_header;

static yolo_status detect_metrics_pack(void *state, void **bytes, size_t *size) {
    metrics_state *s = state;
    if (!s || !bytes || !size) return yolo_error(YOLO_ERR_ARG, "detect metrics_pack: NULL argument");
    const ap_stats *a = &s->stats;
    pack_header h = {DT_PACK_MAGIC, a->n_iou, a->n_images, a->n_pred, a->n_target, a->n_target_img};
    size_t n = sizeof h + a->n_pred * (size_t)a->n_iou + a->n_pred * (sizeof(float) + sizeof(int32_t)) +
               (a->n_target + a->n_target_img) * sizeof(int32_t);
    unsigned char *out = malloc(n), *p = out;
    if (!out) return yolo_error(YOLO_ERR_NOMEM, "detect metrics_pack: out of memory for %zu bytes", n);
    memcpy(p, &h, sizeof h), p += sizeof h;
    if (a->n_pred) {
        memcpy(p, a->tp, a->n_pred * (size_t)a->n_iou), p += a->n_pred * (size_t)a->n_iou;
        memcpy(p, a->conf, a->n_pred * sizeof(float)), p += a->n_pred * sizeof(float);
        memcpy(p, a->pred_cls, a->n_pred * sizeof(int32_t)), p += a->n_pred * sizeof(int32_t);
    }
    if (a->n_target) memcpy(p, a->target_cls, a->n_target * sizeof(int32_t)), p += a->n_target * sizeof(int32_t);
    if (a->n_target_img) memcpy(p, a->target_img, a->n_target_img * sizeof(int32_t));
    *bytes = out;
    *size = n;
    return YOLO_OK;
}

static yolo_status detect_metrics_merge(void *state, const void *bytes, size_t size) {
    metrics_state *s = state;
    if (!s || (!bytes && size)) return yolo_error(YOLO_ERR_ARG, "detect metrics_merge: NULL argument");
    pack_header h;
    if (size < sizeof h) return yolo_error(YOLO_ERR_FORMAT, "detect metrics_merge: %zu bytes is no packed state", size);
    memcpy(&h, bytes, sizeof h);
    if (h.magic != DT_PACK_MAGIC || h.n_iou != s->stats.n_iou || h.n_images < 0)
        return yolo_error(YOLO_ERR_FORMAT, "detect metrics_merge: not a detect metrics state (magic %08x, %d IoU "
                          "thresholds, want %d)", (unsigned)h.magic, (int)h.n_iou, s->stats.n_iou);
    size_t body = size - sizeof h;
    size_t per_pred = (size_t)h.n_iou + sizeof(float) + sizeof(int32_t);
    if (h.n_pred > body / per_pred || h.n_target > body / 4 || h.n_target_img > body / 4 ||
        h.n_pred * per_pred + (h.n_target + h.n_target_img) * 4 != body)
        return yolo_error(YOLO_ERR_FORMAT,
                          "detect metrics_merge: %zu bytes do not hold %llu predictions and %llu + %llu targets", size,
                          (unsigned long long)h.n_pred, (unsigned long long)h.n_target,
                          (unsigned long long)h.n_target_img);
    ap_stats src;
    ap_stats_init(&src, h.n_iou);
    src.n_pred = src.cap_pred = h.n_pred;
    src.n_target = src.cap_target = h.n_target;
    src.n_target_img = src.cap_target_img = h.n_target_img;
    src.n_images = h.n_images;
    src.tp = malloc(h.n_pred * (size_t)h.n_iou + 1);
    src.conf = malloc(h.n_pred * sizeof(float) + 1);
    src.pred_cls = malloc(h.n_pred * sizeof(int32_t) + 1);
    src.target_cls = malloc(h.n_target * sizeof(int32_t) + 1);
    src.target_img = malloc(h.n_target_img * sizeof(int32_t) + 1);
    yolo_status st = YOLO_OK;
    if (!src.tp || !src.conf || !src.pred_cls || !src.target_cls || !src.target_img) {
        st = yolo_error(YOLO_ERR_NOMEM, "detect metrics_merge: out of memory for %zu bytes", size);
    } else {
        const unsigned char *p = (const unsigned char *)bytes + sizeof h;
        memcpy(src.tp, p, h.n_pred * (size_t)h.n_iou), p += h.n_pred * (size_t)h.n_iou;
        memcpy(src.conf, p, h.n_pred * sizeof(float)), p += h.n_pred * sizeof(float);
        memcpy(src.pred_cls, p, h.n_pred * sizeof(int32_t)), p += h.n_pred * sizeof(int32_t);
        memcpy(src.target_cls, p, h.n_target * sizeof(int32_t)), p += h.n_target * sizeof(int32_t);
        memcpy(src.target_img, p, h.n_target_img * sizeof(int32_t));
        st = ap_stats_merge(&s->stats, &src);
    }
    ap_stats_free(&src);
    return st;
}

static const char *class_name(const metrics_state *s, int c, char *buf, size_t size) {
    if (c >= 0 && c < s->n_names && s->names[c]) return s->names[c];
    snprintf(buf, size, "%d", c);
    return buf;
}

static yolo_status detect_metrics_summarize(void *state, double *values, double *fitness, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "detect metrics_summarize: NULL state");
    int nc = s->nc;
    if (nc <= 0) { /* no class count from the context: the largest class seen */
        nc = 1;
        for (size_t i = 0; i < s->stats.n_target; i++)
            if (s->stats.target_cls[i] >= nc) nc = s->stats.target_cls[i] + 1;
    }
    ap_summary sum;
    yolo_status st = ap_summarize(&s->stats, nc, &sum);
    if (st) return yolo_error_context(st, "detect metrics");
    if (values) values[0] = sum.mp, values[1] = sum.mr, values[2] = sum.map50, values[3] = sum.map;
    if (fitness) *fitness = detect_fitness(&sum);
    if (table) {
        /* DetectionValidator.get_desc and print_results. */
        fprintf(table, "%22s%11s%11s%11s%11s%11s%11s\n", "Class", "Images", "Instances", "Box(P", "R", "mAP50",
                "mAP50-95)");
        fprintf(table, "%22s%11lld%11lld%11.3g%11.3g%11.3g%11.3g\n", "all", (long long)sum.n_images,
                (long long)sum.n_instances, sum.mp, sum.mr, sum.map50, sum.map);
        if (sum.n_instances == 0)
            fprintf(table, "WARNING no labels found in val set, can not compute metrics without labels\n");
        bool any_tp = false;
        for (size_t i = 0; i < s->stats.n_pred * (size_t)s->stats.n_iou && !any_tp; i++) any_tp = s->stats.tp[i];
        if (s->per_class && nc > 1 && any_tp) {
            for (int c = 0; c < nc; c++) {
                if (sum.n_targets[c] == 0) continue;
                double ap = 0;
                for (int t = 0; t < sum.n_iou; t++) ap += sum.ap[(size_t)c * sum.n_iou + t];
                ap /= sum.n_iou;
                char buf[32];
                fprintf(table, "%22s%11lld%11lld%11.3g%11.3g%11.3g%11.3g\n", class_name(s, c, buf, sizeof buf),
                        (long long)sum.n_target_img[c], (long long)sum.n_targets[c], sum.p[c], sum.r[c],
                        sum.ap[(size_t)c * sum.n_iou], ap);
            }
        }
    }
    ap_summary_free(&sum);
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

static yolo_status detect_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                  const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    metrics_state *s = state;
    if (!s || !out) return yolo_error(YOLO_ERR_ARG, "detect predict: NULL state or output");
    int nc, A;
    yolo_status st = check_eval("predict", batch, n_outputs, outputs, &nc, &A);
    if (st) return st;
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "detect predict: image %d of a batch of %d", image, batch->n);
    int n_det;
    st = image_detections(s, batch, &outputs[0], nc, A, image, &n_det);
    if (!st) st = tb_reset(&s->txt);
    if (!st) st = tb_reset(&s->json);
    if (st) return st;
    float W = batch->meta ? (float)batch->meta[image].orig_width : (float)batch->width;
    float H = batch->meta ? (float)batch->meta[image].orig_height : (float)batch->height;
    st = tb_printf(&s->json, "{\"detections\": [");
    for (int i = 0; i < n_det && !st; i++) {
        const detection *d = &s->dets[i];
        /* Results.save_txt: class, xywhn of the original image, conf ("%g"). */
        float xywh[4];
        box_xyxy_to_xywh(d->box, xywh, 1);
        st = tb_printf(&s->txt, "%d %g %g %g %g %g\n", (int)d->cls, (double)(xywh[0] / W), (double)(xywh[1] / H),
                       (double)(xywh[2] / W), (double)(xywh[3] / H), (double)d->score);
        char buf[32];
        if (!st) st = tb_printf(&s->json, "%s{\"class\": %d, \"name\": ", i ? ", " : "", (int)d->cls);
        if (!st) st = tb_json_string(&s->json, class_name(s, d->cls, buf, sizeof buf));
        if (!st)
            st = tb_printf(&s->json, ", \"confidence\": %.10g, \"box\": [%.10g, %.10g, %.10g, %.10g]}",
                           round5(d->score), round5(d->box[0]), round5(d->box[1]), round5(d->box[2]),
                           round5(d->box[3]));
    }
    if (!st) st = tb_printf(&s->json, "]}");
    if (st) return st;
    out->txt = s->txt.s;
    out->json = s->json.s;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */

const yolo_task_hooks detect_task_hooks = {
    .data = {.needs = YOLO_NEED_BOXES, .parse_labels = NULL, .label_format = NULL},
    .n_loss_items = 3,
    .loss_names = detect_loss_names,
    .loss_create = detect_loss_create,
    .loss_destroy = detect_loss_destroy,
    .loss_compute = detect_loss_compute,
    .val_loss_outputs = 1,
    .n_metrics = 4,
    .metric_names = detect_metric_names,
    .metrics_create = detect_metrics_create,
    .metrics_destroy = detect_metrics_destroy,
    .metrics_update = detect_metrics_update,
    .metrics_pack = detect_metrics_pack,
    .metrics_merge = detect_metrics_merge,
    .metrics_summarize = detect_metrics_summarize,
    .predict = detect_predict,
};
