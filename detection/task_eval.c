/* task_eval.c — the validator and predictor kit of a task that extends
 * Detect (yolo/detection.h, "A task that extends Detect"): per-image NMS
 * of the eval output, the batch's instances per image, the Box and
 * task-kind statistics and predict's txt/JSON streams. Segment and pose
 * bring only their own IoU (mask IoU, keypoint OKS) and their own text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"

yolo_status yolo_det_grow(const char *who, void **buf, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap && *buf) return YOLO_OK;
    void *p = realloc(*buf, (need ? need : 1) * elem);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for %zu values", who ? who : "detection", need);
    *buf = p, *cap = need ? need : 1;
    return YOLO_OK;
}

double yolo_round5(double x) { return round(x * 1e5) / 1e5; }

void yolo_write_json_numbers(FILE *f, const char *key, const float *v, int n, int stride) {
    fprintf(f, "\"%s\": [", key);
    for (int k = 0; k < n; k++) fprintf(f, "%s%.10g", k ? ", " : "", yolo_round5(v[(size_t)k * stride]));
    fprintf(f, "]");
}

yolo_status yolo_det_image_ranges(const char *who, const yolo_batch *batch, int32_t *first) {
    const int32_t *idx = batch->batch_idx;
    int n = batch->instances.n, k = 0;
    for (int b = 0; b <= batch->n; b++) {
        first[b] = k;
        while (b < batch->n && k < n && idx[k] == b) k++;
    }
    if (k != n)
        return yolo_error(YOLO_ERR_ARG, "%s: instance %d has image index %d (a batch of %d, sorted by image)", who, k,
                          (int)idx[k], batch->n);
    return YOLO_OK;
}

yolo_status yolo_det_eval_view_init(const char *who, const yolo_batch *batch, const yolo_host_tensor *t, int n_extra,
                                    yolo_det_eval_view *v) {
    v->n_extra = n_extra;
    v->pred = t ? t->data : NULL;
    return yolo_det_check_eval_output(who, batch, t, n_extra, &v->nc, &v->n_anchors);
}

const float *yolo_det_eval_view_extra(const yolo_det_eval_view *v, int image, const yolo_detection *d) {
    size_t C = 4 + (size_t)v->nc + (size_t)v->n_extra, A = (size_t)v->n_anchors;
    return v->pred + (size_t)image * C * A + (4 + (size_t)v->nc) * A + (size_t)d->anchor;
}

/* ---- predict's text ---- */

yolo_status yolo_prediction_text_open(const char *who, char **txt_buf, char **json_buf, FILE **txt, FILE **json) {
    free(*txt_buf), free(*json_buf);
    *txt_buf = *json_buf = NULL;
    /* open_memstream writes the size through this pointer until fclose (in
     * yolo_prediction_text_close): locals here were dead by then, and the
     * close wrote into a stack frame that no longer existed. initial-exec:
     * static TLS, not the dynamic block a dlopen'ed library's TLS gets by
     * default, which LeakSanitizer (GCC 12) misreads under glibc >= 2.35
     * and crashes on at exit ("Tracer caught signal 11") */
    static _Thread_local size_t txt_size __attribute__((tls_model("initial-exec")));
    static _Thread_local size_t json_size __attribute__((tls_model("initial-exec")));
    *txt = open_memstream(txt_buf, &txt_size);
    *json = open_memstream(json_buf, &json_size);
    if (!*txt || !*json) {
        if (*txt) fclose(*txt);
        if (*json) fclose(*json);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
    }
    fprintf(*json, "{\"detections\": [");
    return YOLO_OK;
}

yolo_status yolo_prediction_text_close(const char *who, yolo_status st, char **txt_buf, char **json_buf, FILE *txt,
                                       FILE *json, yolo_prediction_text *out) {
    fprintf(json, "]}");
    bool bad = ferror(txt) || ferror(json);
    bad |= fclose(txt) != 0;
    bad |= fclose(json) != 0;
    if (st) return st;
    if (bad || !*txt_buf || !*json_buf) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
    out->txt = *txt_buf;
    out->json = *json_buf;
    return YOLO_OK;
}

/* ---- the two-kind metrics state ---- */

void yolo_det_task_eval_free(yolo_det_task_eval *s) {
    if (!s) return;
    yolo_det_eval_free(&s->eval);
    yolo_ap_stats_free(&s->box), yolo_ap_stats_free(&s->own);
    free(s->dets), free(s->conf), free(s->pred_cls), free(s->correct), free(s->gt_boxes), free(s->gt_cls);
    free(s->image_first), free(s->iou), free(s->txt), free(s->json), free(s->drawn);
    yolo_confusion_free(&s->cm);
    memset(s, 0, sizeof *s);
}

yolo_status yolo_det_task_eval_init(yolo_det_task_eval *s, const yolo_task_context *ctx, const char *task,
                                    const char *kind) {
    memset(s, 0, sizeof *s);
    s->task = task ? task : "detection";
    s->kind = kind;
    yolo_ap_stats_init(&s->box, YOLO_AP_N_IOU);
    yolo_ap_stats_init(&s->own, YOLO_AP_N_IOU);
    char who[64];
    snprintf(who, sizeof who, "%s metrics", s->task);
    yolo_status st = yolo_det_eval_init(&s->eval, ctx, who);
    if (!st) {
        size_t m = (size_t)s->eval.nms.max_det;
        s->dets = malloc(m * sizeof *s->dets);
        s->conf = malloc(m * sizeof(float));
        s->pred_cls = malloc(m * sizeof(int32_t));
        s->correct = malloc(m * YOLO_AP_N_IOU);
        s->drawn = malloc(m * sizeof *s->drawn);
        if (s->eval.nc > 0) st = yolo_confusion_init(&s->cm, s->eval.nc, 1);
        if (!st && (!s->dets || !s->conf || !s->pred_cls || !s->correct || !s->drawn))
            st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for %zu detections", who, m);
    }
    if (st) {
        const char *name = s->task;
        yolo_det_task_eval_free(s);
        return yolo_error_context(st, "%s metrics", name);
    }
    return YOLO_OK;
}

/* The batch's instances as pixel boxes and their images' ranges. */
static yolo_status task_eval_batch(yolo_det_task_eval *s, const yolo_batch *batch) {
    int n = batch->instances.n;
    size_t rows = (size_t)(n > 0 ? n : 1);
    yolo_status st = yolo_det_grow(s->task, (void **)&s->gt_boxes, &s->gt_cap, rows * 4, sizeof(float));
    if (!st) st = yolo_det_grow(s->task, (void **)&s->gt_cls, &s->gtc_cap, rows, sizeof(int32_t));
    if (!st) st = yolo_det_grow(s->task, (void **)&s->image_first, &s->first_cap, (size_t)batch->n + 1, sizeof(int32_t));
    if (!st) st = yolo_det_image_ranges(s->task, batch, s->image_first);
    if (!st) st = yolo_det_gt_from_batch(batch, s->gt_boxes, s->gt_cls);
    return st;
}

yolo_status yolo_det_task_eval_nms(yolo_det_task_eval *s, const yolo_det_eval_view *v, int image, int *n_det) {
    size_t C = 4 + (size_t)v->nc + (size_t)v->n_extra;
    const float *pred = v->pred + (size_t)image * C * (size_t)v->n_anchors;
    yolo_status st = s->eval.nms.end2end ? yolo_e2e_select(pred, v->nc, v->n_anchors, &s->eval.nms, s->dets, n_det)
                                : yolo_nms_detect(pred, v->nc, v->n_anchors, &s->eval.nms, s->dets, n_det);
    if (!st && s->eval.single_cls)
        for (int d = 0; d < *n_det; d++) s->dets[d].cls = 0;
    return st;
}

/* NMS of image i, its gts, conf and pred_cls filled, s->iou sized n_gt x n_det. */
static yolo_status task_eval_image(yolo_det_task_eval *s, const yolo_det_eval_view *v, int image,
                                   yolo_det_task_image *img) {
    int k0 = s->image_first[image];
    img->image = image, img->first = k0, img->n_gt = s->image_first[image + 1] - k0;
    img->gt_boxes = s->gt_boxes + 4 * (size_t)k0;
    img->gt_cls = s->gt_cls + k0;
    yolo_status st = yolo_det_task_eval_nms(s, v, image, &img->n_det);
    if (st) return st;
    if (s->eval.single_cls)
        for (int j = 0; j < img->n_gt; j++) img->gt_cls[j] = 0;
    for (int d = 0; d < img->n_det; d++) s->conf[d] = s->dets[d].score, s->pred_cls[d] = s->dets[d].cls;
    if (img->n_det > 0) memset(s->correct, 0, (size_t)img->n_det * YOLO_AP_N_IOU);
    return yolo_det_grow(s->task, (void **)&s->iou, &s->iou_cap, (size_t)img->n_gt * (size_t)img->n_det,
                         sizeof(float));
}

/* Matches s->iou into the task's kind; then the boxes, in the original
 * image, into Box. */
static yolo_status task_eval_add(yolo_det_task_eval *s, const yolo_batch *batch, const yolo_det_task_image *img) {
    int n_gt = img->n_gt, n_det = img->n_det, i = img->image;
    yolo_status st = YOLO_OK;
    if (n_gt > 0 && n_det > 0) {
        float thr[YOLO_AP_N_IOU];
        yolo_ap_iou_thresholds(thr);
        st = yolo_ap_match_predictions(n_det, s->pred_cls, n_gt, img->gt_cls, s->iou, YOLO_AP_N_IOU, thr, s->correct);
    }
    if (!st) st = yolo_ap_stats_add_image(&s->own, n_det, s->correct, s->conf, s->pred_cls, n_gt, img->gt_cls);
    for (int d = 0; d < n_det && !st; d++) st = yolo_box_to_original(batch, i, s->dets[d].box, 1);
    if (!st) st = yolo_box_to_original(batch, i, img->gt_boxes, (size_t)n_gt);
    if (!st) st = yolo_det_metrics_add_image(&s->box, s->dets, n_det, n_gt, img->gt_cls, img->gt_boxes);
    if (!st && s->cm.counts) /* Ultralytics' confusion matrix is of the boxes */
        st = yolo_det_confusion_add_image(&s->cm, s->dets, n_det, n_gt, img->gt_cls, img->gt_boxes, YOLO_CONFUSION_CONF,
                                          YOLO_CONFUSION_IOU);
    return st;
}

yolo_status yolo_det_task_eval_update(void *state, const yolo_batch *batch, const yolo_det_eval_view *view,
                                      yolo_det_task_iou_fn iou) {
    yolo_det_task_eval *s = state;
    if (!s || !batch || !view || !iou) return yolo_error(YOLO_ERR_ARG, "metrics_update: NULL state, batch or view");
    yolo_status st = task_eval_batch(s, batch);
    for (int i = 0; i < batch->n && !st; i++) {
        yolo_det_task_image img;
        st = task_eval_image(s, view, i, &img);
        if (!st && img.n_gt > 0 && img.n_det > 0) st = iou(state, view, batch, &img);
        if (!st) st = task_eval_add(s, batch, &img);
    }
    return st ? yolo_error_context(st, "%s metrics_update", s->task) : YOLO_OK;
}

yolo_status yolo_det_task_eval_predict_begin(yolo_det_task_eval *s, const char *who, const yolo_batch *batch,
                                             int image, const yolo_det_eval_view *view, int *n_det, FILE **txt,
                                             FILE **json) {
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch of %d", who, image, batch->n);
    yolo_status st = yolo_det_task_eval_nms(s, view, image, n_det);
    return st ? st : yolo_prediction_text_open(who, &s->txt, &s->json, txt, json);
}

yolo_status yolo_det_task_eval_pack(void *state, void **bytes, size_t *size) {
    yolo_det_task_eval *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "metrics_pack: NULL state");
    return yolo_ap_kinds_pack(s->task, (yolo_ap_stats *const[]){&s->box, &s->own}, 2, bytes, size);
}

yolo_status yolo_det_task_eval_merge(void *state, const void *bytes, size_t size) {
    yolo_det_task_eval *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "metrics_merge: NULL state");
    return yolo_ap_kinds_merge(s->task, (yolo_ap_stats *const[]){&s->box, &s->own}, 2, bytes, size);
}

yolo_status yolo_det_task_eval_summarize(void *state, double *values, double *fitness, FILE *table) {
    yolo_det_task_eval *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "metrics_summarize: NULL state");
    return yolo_ap_kinds_summarize(s->task, &s->eval, (yolo_ap_stats *const[]){&s->box, &s->own},
                                   (const char *const[]){"Box", s->kind}, 2, values, fitness, table);
}

yolo_status yolo_det_task_eval_plot(void *state, const char *dir, FILE *table) {
    yolo_det_task_eval *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "metrics_plot: NULL state");
    if (!s->cm.counts) return YOLO_OK; /* no class count known: nothing to plot */
    const char *const *names = (const char *const *)s->eval.names;
    if (table) yolo_confusion_print(&s->cm, names, table);
    if (!dir) return YOLO_OK;
    yolo_status st = yolo_confusion_plot(&s->cm, names, dir);
    yolo_ap_stats *kinds[2] = {&s->box, &s->own};
    const char *prefix[2] = {"Box", s->kind ? s->kind : "Own"};
    for (int k = 0; k < 2 && !st; k++) {
        yolo_ap_summary sum;
        st = yolo_ap_summarize(kinds[k], yolo_det_eval_nc(&s->eval, kinds[k]), &sum);
        if (!st) st = yolo_det_plot_curves(&sum, prefix[k], names, s->eval.nc, dir);
        if (!st) yolo_ap_summary_free(&sum);
    }
    return st ? yolo_error_context(st, "%s plots", s->task) : YOLO_OK;
}
