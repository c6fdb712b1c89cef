/* detect_task.c — the detect task's hooks (yolo/task.h): the glue between
 * the core trainer and the core's detection building blocks
 * (yolo/detection.h).
 *
 *   loss     the training-layout head maps [B, 4*16 + nc, H_l, W_l] go through
 *            yolo_det_criterion (gather, anchors, TaskAlignedAssigner,
 *            v8DetectionLoss, gradient scattered back). loss = B * (box +
 *            cls + dfl); the logged items are the three gained terms
 *            (Ultralytics' loss_items).
 *   metrics  DetectionValidator: NMS of the eval output [B, 4 + nc, A]
 *            (conf 0.001 unless set, multi-label; a YOLO26 model running
 *            its end2end head: its top-k selection), predictions and gts
 *            scaled back to the original image, matched at IoU
 *            0.50:0.05:0.95 and accumulated; pack/merge move the
 *            accumulator between ranks as bytes; summarize gives P, R,
 *            mAP50, mAP50-95, the fitness and the Ultralytics table.
 *   predict  NMS with predict's settings (conf 0.25 unless set, agnostic_nms,
 *            classes), Ultralytics' txt lines (cls, normalized xywh of the
 *            original image, conf with save_conf) and a JSON object of the detections.
 *
 * Only sdk headers and the C library; errors through yolo_error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/detection.h>
#include <yolo/error.h>
#include <yolo/task.h>

#include "detect_task.h"

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

static const char *const detect_loss_names[3] = {"box_loss", "cls_loss", "dfl_loss"};

static yolo_status detect_loss_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "detect loss_create: NULL state");
    *state = NULL;
    yolo_det_criterion *c = NULL;
    yolo_status st = yolo_det_criterion_create(ctx, &c);
    if (st) return yolo_error_context(st, "detect loss");
    *state = c;
    return YOLO_OK;
}

static void detect_loss_destroy(void *state) { yolo_det_criterion_free(state); }

static yolo_status detect_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                       const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                       float *items) {
    if (!state || !batch || !outputs || !loss)
        return yolo_error(YOLO_ERR_ARG, "detect loss_compute: NULL state, batch, outputs or loss");
    yolo_det_criterion_result r;
    yolo_status st = yolo_det_criterion_compute(state, "detect loss_compute", batch, n_outputs, outputs, grads, &r);
    if (st) return st;
    *loss = r.value.total;
    if (items) items[0] = (float)r.value.box, items[1] = (float)r.value.cls, items[2] = (float)r.value.dfl;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Metrics (and predict)                                                */

typedef struct metrics_state {
    yolo_det_eval eval;
    yolo_ap_stats stats;
    yolo_detection *dets;
    float *gt_boxes;
    int32_t *gt_cls;
    int gt_cap;
    char *txt, *json;
    yolo_confusion cm;        /* Ultralytics' ConfusionMatrix at conf 0.25, IoU 0.45 (val only) */
    yolo_drawn_object *drawn; /* draw_predictions' report, max_det of them */
    bool end2end;             /* YOLO26's one-to-one head: selected without NMS (yolo_e2e_select) */
} metrics_state;

static const char *const detect_metric_names[4] = {"metrics/precision(B)", "metrics/recall(B)",
                                                   "metrics/mAP50(B)", "metrics/mAP50-95(B)"};

static void detect_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    yolo_det_eval_free(&s->eval);
    free(s->dets), free(s->gt_boxes), free(s->gt_cls), free(s->txt), free(s->json), free(s->drawn);
    yolo_ap_stats_free(&s->stats);
    yolo_confusion_free(&s->cm);
    free(s);
}

static yolo_status detect_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "detect metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "detect metrics_create: out of memory");
    yolo_ap_stats_init(&s->stats, YOLO_AP_N_IOU);
    s->end2end = ctx && ctx->model && yolo_model_end2end(ctx->model);
    yolo_status st = yolo_det_eval_init(&s->eval, ctx, "detect metrics");
    if (st) {
        detect_metrics_destroy(s);
        return st;
    }
    s->dets = malloc((size_t)s->eval.nms.max_det * sizeof(yolo_detection));
    s->drawn = malloc((size_t)s->eval.nms.max_det * sizeof *s->drawn);
    int max_det = s->eval.nms.max_det;
    if (s->eval.nc > 0) st = yolo_confusion_init(&s->cm, s->eval.nc, 1);
    if (st || !s->dets || !s->drawn) {
        detect_metrics_destroy(s);
        return yolo_error(YOLO_ERR_NOMEM, "detect metrics_create: out of memory for %d detections", max_det);
    }
    *state = s;
    return YOLO_OK;
}

/* NMS (an end2end head: its top-k selection) of image `image` of the eval
 * output, boxes in original pixels. */
static yolo_status image_detections(metrics_state *s, const yolo_batch *batch, const yolo_host_tensor *pred, int nc,
                                    int n_anchors, int image, int *n_det) {
    const float *p = pred->data + (size_t)image * (size_t)(4 + nc) * (size_t)n_anchors;
    yolo_status st = s->end2end ? yolo_e2e_select(p, nc, n_anchors, &s->eval.nms, s->dets, n_det)
                                : yolo_nms_detect(p, nc, n_anchors, &s->eval.nms, s->dets, n_det);
    for (int i = 0; i < *n_det && !st; i++) st = yolo_box_to_original(batch, image, s->dets[i].box, 1);
    return st ? yolo_error_context(st, "detect") : YOLO_OK;
}

static yolo_status detect_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                         const yolo_host_tensor *outputs) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "detect metrics_update: NULL state");
    if (!batch || n_outputs < 1 || !outputs)
        return yolo_error(YOLO_ERR_ARG, "detect metrics_update: no batch or no outputs (%d)", n_outputs);
    int nc, A;
    yolo_status st = yolo_det_check_eval_output("detect metrics_update", batch, &outputs[0], 0, &nc, &A);
    if (st) return st;
    int n = batch->instances.n;
    if (n > s->gt_cap) {
        float *b = realloc(s->gt_boxes, (size_t)n * 4 * sizeof(float));
        if (b) s->gt_boxes = b;
        int32_t *c = realloc(s->gt_cls, (size_t)n * sizeof(int32_t));
        if (c) s->gt_cls = c;
        if (!b || !c) return yolo_error(YOLO_ERR_NOMEM, "detect: out of memory for %d instances", n);
        s->gt_cap = n;
    }
    st = yolo_det_gt_from_batch(batch, s->gt_boxes, s->gt_cls);
    if (st) return yolo_error_context(st, "detect metrics_update");
    /* Instances of no image in the batch are an error, not silently dropped. */
    const int32_t *idx = batch->batch_idx;
    for (int j = 0; j < n; j++)
        if (idx[j] < 0 || idx[j] >= batch->n || (j > 0 && idx[j] < idx[j - 1]))
            return yolo_error(YOLO_ERR_ARG,
                              "detect metrics_update: instance %d has image index %d (a batch of %d, sorted)", j,
                              (int)idx[j], batch->n);
    /* Each image's gts (instances are sorted by image) go back to its
     * original image, as its predictions do. */
    int k = 0;
    for (int i = 0; i < batch->n; i++) {
        int n_det;
        st = image_detections(s, batch, &outputs[0], nc, A, i, &n_det);
        if (st) return st;
        if (s->eval.single_cls)
            for (int d = 0; d < n_det; d++) s->dets[d].cls = 0;
        int k0 = k;
        while (k < n && idx[k] == i) k++;
        float *gb = s->gt_boxes + 4 * (size_t)k0;
        int32_t *gc = s->gt_cls + k0;
        st = yolo_box_to_original(batch, i, gb, (size_t)(k - k0));
        if (st) return yolo_error_context(st, "detect");
        if (s->eval.single_cls)
            for (int j = 0; j < k - k0; j++) gc[j] = 0;
        st = yolo_det_metrics_add_image(&s->stats, s->dets, n_det, k - k0, gc, gb);
        if (!st && s->cm.counts)
            st = yolo_det_confusion_add_image(&s->cm, s->dets, n_det, k - k0, gc, gb, YOLO_CONFUSION_CONF,
                                              YOLO_CONFUSION_IOU);
        if (st) return st;
    }
    return YOLO_OK;
}

static yolo_status detect_metrics_pack(void *state, void **bytes, size_t *size) {
    metrics_state *s = state;
    if (!s || !bytes || !size) return yolo_error(YOLO_ERR_ARG, "detect metrics_pack: NULL argument");
    void *stats = NULL;
    size_t n = 0;
    yolo_status st = yolo_ap_stats_pack(&s->stats, &stats, &n);
    if (st) return st;
    char *out = NULL;
    FILE *f = open_memstream(&out, size);
    if (!f) st = yolo_error(YOLO_ERR_NOMEM, "detect metrics_pack: out of memory");
    if (!st && fwrite(stats, 1, n, f) != n) st = yolo_error(YOLO_ERR_NOMEM, "detect metrics_pack: out of memory");
    if (!st && s->cm.counts) st = yolo_confusion_pack(&s->cm, f);
    if (f && fclose(f) != 0 && !st) st = yolo_error(YOLO_ERR_NOMEM, "detect metrics_pack: out of memory");
    free(stats);
    if (st) free(out);
    else *bytes = out;
    return st;
}

static yolo_status detect_metrics_merge(void *state, const void *bytes, size_t size) {
    metrics_state *s = state;
    if (!s || (!bytes && size)) return yolo_error(YOLO_ERR_ARG, "detect metrics_merge: NULL argument");
    size_t used = 0;
    yolo_status st = yolo_ap_stats_unpack_merge(&s->stats, bytes, size, &used);
    if (!st && s->cm.counts) st = yolo_confusion_unpack_merge(&s->cm, (const uint8_t *)bytes + used, size - used, &used);
    return st ? yolo_error_context(st, "detect") : YOLO_OK;
}

static yolo_status detect_metrics_summarize(void *state, double *values, double *fitness, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "detect metrics_summarize: NULL state");
    yolo_ap_summary sum;
    yolo_status st = yolo_ap_summarize(&s->stats, yolo_det_eval_nc(&s->eval, &s->stats), &sum);
    if (st) return yolo_error_context(st, "detect metrics");
    if (values) values[0] = sum.mp, values[1] = sum.mr, values[2] = sum.map50, values[3] = sum.map;
    if (fitness) *fitness = yolo_det_fitness(&sum);
    if (table) yolo_det_print_table(table, &s->eval, &s->stats, 1, (const char *const[]){"Box"}, &sum);
    yolo_ap_summary_free(&sum);
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

static yolo_status detect_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                  const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    metrics_state *s = state;
    if (!s || !out) return yolo_error(YOLO_ERR_ARG, "detect predict: NULL state or output");
    if (!batch || n_outputs < 1 || !outputs)
        return yolo_error(YOLO_ERR_ARG, "detect predict: no batch or no outputs (%d)", n_outputs);
    int nc, A;
    yolo_status st = yolo_det_check_eval_output("detect predict", batch, &outputs[0], 0, &nc, &A);
    if (st) return st;
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "detect predict: image %d of a batch of %d", image, batch->n);
    int n_det;
    st = image_detections(s, batch, &outputs[0], nc, A, image, &n_det);
    if (st) return st;
    FILE *txt, *json;
    st = yolo_prediction_text_open("detect predict", &s->txt, &s->json, &txt, &json);
    if (st) return st;
    float W = batch->meta ? (float)batch->meta[image].orig_width : (float)batch->width;
    float H = batch->meta ? (float)batch->meta[image].orig_height : (float)batch->height;
    for (int i = 0; i < n_det; i++) {
        const yolo_detection *d = &s->dets[i];
        /* Results.save_txt: class, xywhn of the original image ("%g"), conf with save_conf. */
        float xywh[4];
        yolo_box_xyxy_to_xywh(d->box, xywh, 1);
        fprintf(txt, "%d %g %g %g %g", (int)d->cls, (double)(xywh[0] / W), (double)(xywh[1] / H),
                (double)(xywh[2] / W), (double)(xywh[3] / H));
        if (s->eval.save_conf) fprintf(txt, " %g", (double)d->score);
        fputc('\n', txt);
        fprintf(json, "%s{", i ? ", " : "");
        yolo_det_write_json(json, &s->eval, d);
        fprintf(json, "}");
    }
    return yolo_prediction_text_close("detect predict", YOLO_OK, &s->txt, &s->json, txt, json, out);
}

/* ------------------------------------------------------------------ */
/* Pictures                                                             */

static yolo_status detect_draw_predictions(void *state, const yolo_batch *batch, int image, int n_outputs,
                                           const yolo_host_tensor *outputs, const yolo_draw_options *opt,
                                           yolo_canvas *canvas, yolo_drawn_result *out) {
    metrics_state *s = state;
    if (!s || !opt || !canvas || !out) return yolo_error(YOLO_ERR_ARG, "detect draw_predictions: NULL argument");
    if (!batch || n_outputs < 1 || !outputs || image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "detect draw_predictions: no outputs or image %d of a batch", image);
    int nc, A, n_det;
    yolo_status st = yolo_det_check_eval_output("detect draw_predictions", batch, &outputs[0], 0, &nc, &A);
    if (!st) st = image_detections(s, batch, &outputs[0], nc, A, image, &n_det);
    if (st) return st;
    *out = (yolo_drawn_result){0};
    for (int i = n_det - 1; i >= 0; i--) /* the most confident drawn last, on top */
        if (s->dets[i].score >= opt->conf) yolo_det_draw_detection(canvas, &s->eval, &s->dets[i], opt, s->drawn, &out->n);
    out->objects = s->drawn;
    return YOLO_OK;
}

static yolo_status detect_metrics_plot(void *state, const char *dir, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "detect metrics_plot: NULL state");
    if (!s->cm.counts) return YOLO_OK; /* no class count known: nothing to plot */
    const char *const *names = (const char *const *)s->eval.names;
    if (table) yolo_confusion_print(&s->cm, names, table);
    if (!dir) return YOLO_OK;
    yolo_status st = yolo_confusion_plot(&s->cm, names, dir);
    yolo_ap_summary sum;
    if (!st) st = yolo_ap_summarize(&s->stats, yolo_det_eval_nc(&s->eval, &s->stats), &sum);
    if (st) return yolo_error_context(st, "detect plots");
    st = yolo_det_plot_curves(&sum, "Box", names, s->eval.nc, dir);
    yolo_ap_summary_free(&sum);
    return st;
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
    .draw_predictions = detect_draw_predictions,
    .metrics_plot = detect_metrics_plot,
};
