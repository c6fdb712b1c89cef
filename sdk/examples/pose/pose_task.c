/* pose_task.c — the pose task's hooks (yolo/task.h): Ultralytics'
 * v8PoseLoss, PoseValidator and PosePredictor, on the public SDK only.
 *
 * Head outputs (pose.c; nl levels, A anchors, nk = K * D):
 *   training  maps[0..nl-1] [B, 64 + nc, H_l, W_l], raw keypoints [B, nk, A]
 *   eval      [B, 4 + nc + nk, A] (boxes, scores, decoded keypoints in
 *             batch pixels), then the training outputs (val losses read
 *             them from index 1).
 *
 *   loss     detect's box/cls/dfl terms through yolo_det_criterion, then
 *            pose_kpt_loss (pose_loss.c) on the criterion's assignment:
 *            loss = B * (box + pose + kobj + cls + dfl), gains `box`, `cls`,
 *            `dfl` (core keys) and `pose` 12.0, `kobj` 1.0 (this task's keys).
 *   metrics  box P/R/mAP as detect (original image space) and pose P/R/mAP
 *            with OKS as the IoU (area = 0.53 * gt box area, sigmas COCO's
 *            for 17 keypoints, else 1/K); fitness = box + pose fitness.
 *   predict  YOLO-pose txt rows (cls cx cy w h then x y [v] per keypoint,
 *            normalized to the original image, [conf] with save_conf) and
 *            JSON with "keypoints": {"x", "y"[, "visible"]}. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/config.h>
#include <yolo/detection.h>
#include <yolo/error.h>
#include <yolo/task.h>

#include "pose_loss.h"
#include "pose_task.h"

static yolo_status grow(void **buf, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap && *buf) return YOLO_OK;
    void *p = realloc(*buf, (need ? need : 1) * elem);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "pose: out of memory for %zu values", need);
    *buf = p, *cap = need ? need : 1;
    return YOLO_OK;
}

static yolo_status read_gain(const yolo_config *cfg, const char *key, double fallback, double *out) {
    *out = fallback;
    if (cfg && yolo_config_find_key(cfg, key) && !yolo_config_is_null(cfg, key))
        return yolo_config_get_float(cfg, key, out);
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

typedef struct loss_state {
    yolo_det_criterion *crit;
    double pose_gain, kobj_gain;
    float *sigmas;
    int sigmas_k;
} loss_state;

static const char *const pose_loss_names[5] = {"box_loss", "pose_loss", "kobj_loss", "cls_loss", "dfl_loss"};

static void pose_loss_destroy(void *state) {
    loss_state *s = state;
    if (!s) return;
    yolo_det_criterion_free(s->crit);
    free(s->sigmas);
    free(s);
}

static yolo_status pose_loss_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "pose loss_create: NULL state");
    *state = NULL;
    loss_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "pose loss_create: out of memory");
    const yolo_config *cfg = ctx ? ctx->cfg : NULL;
    yolo_status st = yolo_det_criterion_create(ctx, &s->crit);
    if (!st) st = read_gain(cfg, "pose", 12.0, &s->pose_gain);
    if (!st) st = read_gain(cfg, "kobj", 1.0, &s->kobj_gain);
    if (st) {
        pose_loss_destroy(s);
        return yolo_error_context(st, "pose loss");
    }
    *state = s;
    return YOLO_OK;
}

static yolo_status pose_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                     const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                     float *items) {
    loss_state *s = state;
    const char *who = "pose loss_compute";
    if (!s || !batch || !outputs || !loss)
        return yolo_error(YOLO_ERR_ARG, "%s: NULL state, batch, outputs or loss", who);
    if (n_outputs < 2)
        return yolo_error(YOLO_ERR_ARG, "%s: %d outputs, expected the level maps and the keypoints", who, n_outputs);
    int nl = n_outputs - 1;
    int K = batch->instances.kpt_count, D = batch->instances.kpt_dims;
    const yolo_host_tensor *kt = &outputs[nl];
    if (K < 1 || (D != 2 && D != 3))
        return yolo_error(YOLO_ERR_CONFIG, "%s: the batch has no keypoints (the data yaml needs kpt_shape)", who);
    yolo_det_criterion_result r;
    yolo_status st = yolo_det_criterion_compute(s->crit, who, batch, nl, outputs, grads, &r);
    if (st) return st;
    int B = batch->n, A = r.n_anchors;
    if (kt->ndim != 3 || kt->shape[0] != B || kt->shape[1] != (int64_t)K * D || kt->shape[2] != A || !kt->data)
        return yolo_error(YOLO_ERR_SHAPE,
                          "%s: the keypoint output is not [%d, %d, %d] (model kpt_shape differs from the data "
                          "yaml's [%d, %d]?)",
                          who, B, K * D, A, K, D);
    if (grads && (grads[nl].ndim != 3 || memcmp(grads[nl].shape, kt->shape, sizeof kt->shape[0] * 3) ||
                  !grads[nl].data))
        return yolo_error(YOLO_ERR_SHAPE, "%s: the keypoint gradient differs in shape from its output", who);
    if (s->sigmas_k != K) {
        float *p = realloc(s->sigmas, sizeof(float) * (size_t)K);
        if (!p) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
        s->sigmas = p, s->sigmas_k = K;
        pose_kpt_sigmas(K, s->sigmas);
    }
    pose_kpt_loss_value v;
    st = pose_kpt_loss(B, A, K, D, kt->data, r.asg.gt_index, r.gt.boxes, batch->instances.kpts, (float)batch->width,
                       (float)batch->height, r.anchor_xy, r.anchor_stride, s->sigmas, s->pose_gain, s->kobj_gain, &v,
                       grads ? grads[nl].data : NULL);
    if (st) return yolo_error_context(st, "%s", who);
    if (!isfinite(v.kpt) || !isfinite(v.kobj))
        return yolo_error(YOLO_ERR_NUMERIC, "pose: the keypoint loss is %g, kobj %g", v.kpt, v.kobj);
    *loss = r.value.total + (double)B * (v.kpt + v.kobj);
    if (items)
        items[0] = (float)r.value.box, items[1] = (float)v.kpt, items[2] = (float)v.kobj,
        items[3] = (float)r.value.cls, items[4] = (float)r.value.dfl;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Metrics (and predict)                                                */

typedef struct metrics_state {
    yolo_det_eval eval;
    yolo_ap_stats box, pose;
    yolo_detection *dets;
    float *gt_boxes, *iou, *conf, *sigmas, *kp;
    int32_t *gt_cls, *pred_cls, *image_first;
    uint8_t *correct;
    size_t gt_cap, gtc_cap, iou_cap, first_cap, kp_cap;
    int sigmas_k;
    char *txt, *json;
    yolo_drawn_object *drawn; /* draw_predictions' report */
    int *chain;               /* the skeleton of a non-COCO keypoint set: k -> k + 1 */
    size_t drawn_cap, chain_cap;
} metrics_state;

static const char *const pose_metric_names[8] = {
    "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)",
    "metrics/precision(P)", "metrics/recall(P)", "metrics/mAP50(P)", "metrics/mAP50-95(P)"};

static void pose_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    yolo_det_eval_free(&s->eval);
    yolo_ap_stats_free(&s->box), yolo_ap_stats_free(&s->pose);
    free(s->dets), free(s->gt_boxes), free(s->iou), free(s->conf), free(s->sigmas), free(s->kp);
    free(s->gt_cls), free(s->pred_cls), free(s->image_first), free(s->correct), free(s->txt), free(s->json);
    free(s->drawn), free(s->chain);
    free(s);
}

static yolo_status pose_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "pose metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "pose metrics_create: out of memory");
    yolo_ap_stats_init(&s->box, YOLO_AP_N_IOU);
    yolo_ap_stats_init(&s->pose, YOLO_AP_N_IOU);
    yolo_status st = yolo_det_eval_init(&s->eval, ctx, "pose metrics");
    if (!st) {
        size_t m = (size_t)s->eval.nms.max_det;
        s->dets = malloc(m * sizeof *s->dets);
        s->conf = malloc(m * sizeof(float));
        s->pred_cls = malloc(m * sizeof(int32_t));
        s->correct = malloc(m * YOLO_AP_N_IOU);
        if (!s->dets || !s->conf || !s->pred_cls || !s->correct)
            st = yolo_error(YOLO_ERR_NOMEM, "pose metrics_create: out of memory for %zu detections", m);
    }
    if (st) {
        pose_metrics_destroy(s);
        return yolo_error_context(st, "pose metrics");
    }
    *state = s;
    return YOLO_OK;
}

/* The eval outputs: t[0] [B, 4 + nc + nk, A]; the last is the raw keypoints [B, nk, A]. */
typedef struct eval_view {
    const float *pred;
    int nc, nk, K, D, A;
} eval_view;

static yolo_status eval_outputs(const char *who, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, eval_view *v) {
    if (!batch || !outputs || n_outputs < 3)
        return yolo_error(YOLO_ERR_ARG, "%s: no batch or %d outputs (the eval outputs of Pose are nl + 2)", who,
                          n_outputs);
    const yolo_host_tensor *raw = &outputs[n_outputs - 1];
    if (raw->ndim != 3 || raw->shape[1] < 2 || raw->shape[1] > 4096)
        return yolo_error(YOLO_ERR_SHAPE, "%s: the last output is not the keypoints [B, nk, A]", who);
    v->nk = (int)raw->shape[1];
    /* the keypoint layout: the data's (val), else 3 dims when nk allows (predict) */
    if (batch->instances.kpt_count > 0 && batch->instances.kpt_count * batch->instances.kpt_dims == v->nk)
        v->K = batch->instances.kpt_count, v->D = batch->instances.kpt_dims;
    else if (batch->instances.kpt_count > 0)
        return yolo_error(YOLO_ERR_SHAPE, "%s: the model has %d keypoint channels, the data kpt_shape [%d, %d]", who,
                          v->nk, batch->instances.kpt_count, batch->instances.kpt_dims);
    else
        v->D = v->nk % 3 == 0 ? 3 : 2, v->K = v->nk / v->D;
    yolo_status st = yolo_det_check_eval_output(who, batch, &outputs[0], v->nk, &v->nc, &v->A);
    v->pred = outputs[0].data;
    return st;
}

static yolo_status image_nms(metrics_state *s, const eval_view *v, int i, int *n_det) {
    size_t C = 4 + (size_t)v->nc + v->nk;
    yolo_status st = yolo_nms_detect(v->pred + (size_t)i * C * v->A, v->nc, v->A, &s->eval.nms, s->dets, n_det);
    if (!st && s->eval.single_cls)
        for (int d = 0; d < *n_det; d++) s->dets[d].cls = 0;
    return st;
}

/* Keypoint channel j (x, y or v of a point) of detection d in image i (batch pixels). */
static float det_kpt(const eval_view *v, int i, const yolo_detection *d, int j) {
    size_t C = 4 + (size_t)v->nc + v->nk;
    return v->pred[(size_t)i * C * v->A + (4 + (size_t)v->nc + (size_t)j) * v->A + (size_t)d->anchor];
}

static yolo_status image_ranges(const yolo_batch *batch, int32_t **first, size_t *cap) {
    yolo_status st = grow((void **)first, cap, (size_t)batch->n + 1, sizeof(int32_t));
    if (st) return st;
    const int32_t *idx = batch->batch_idx;
    int n = batch->instances.n, k = 0;
    for (int b = 0; b <= batch->n; b++) {
        (*first)[b] = k;
        while (b < batch->n && k < n && idx[k] == b) k++;
    }
    if (k != n) return yolo_error(YOLO_ERR_ARG, "pose: the batch's %d instances are not sorted by image", n);
    return YOLO_OK;
}

static yolo_status pose_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                       const yolo_host_tensor *outputs) {
    metrics_state *s = state;
    const char *who = "pose metrics_update";
    if (!s) return yolo_error(YOLO_ERR_ARG, "%s: NULL state", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (st) return st;
    int n = batch->instances.n, K = v.K, D = v.D;
    if (n > 0 && !batch->instances.kpts)
        return yolo_error(YOLO_ERR_CONFIG, "%s: the labels have no keypoints (the data yaml needs kpt_shape)", who);
    st = grow((void **)&s->gt_boxes, &s->gt_cap, (size_t)(n > 0 ? n : 1) * 4, sizeof(float));
    if (!st) st = grow((void **)&s->gt_cls, &s->gtc_cap, (size_t)(n > 0 ? n : 1), sizeof(int32_t));
    if (!st) st = image_ranges(batch, &s->image_first, &s->first_cap);
    if (!st) st = yolo_det_gt_from_batch(batch, s->gt_boxes, s->gt_cls);
    if (!st && s->sigmas_k != K) {
        float *p = realloc(s->sigmas, sizeof(float) * (size_t)K);
        if (!p) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
        else s->sigmas = p, s->sigmas_k = K, pose_kpt_sigmas(K, p);
    }
    if (st) return yolo_error_context(st, "%s", who);
    float thr[YOLO_AP_N_IOU];
    yolo_ap_iou_thresholds(thr);
    float W = (float)batch->width, H = (float)batch->height;
    for (int i = 0; i < batch->n; i++) {
        int k0 = s->image_first[i], k1 = s->image_first[i + 1], n_gt = k1 - k0, n_det;
        st = image_nms(s, &v, i, &n_det);
        if (st) return st;
        float *gb = s->gt_boxes + 4 * (size_t)k0;
        int32_t *gc = s->gt_cls + k0;
        if (s->eval.single_cls)
            for (int j = 0; j < n_gt; j++) gc[j] = 0;
        for (int d = 0; d < n_det; d++) s->conf[d] = s->dets[d].score, s->pred_cls[d] = s->dets[d].cls;
        if (n_det > 0) memset(s->correct, 0, (size_t)n_det * YOLO_AP_N_IOU);
        if (n_gt > 0 && n_det > 0) {
            st = grow((void **)&s->iou, &s->iou_cap, (size_t)n_gt * n_det, sizeof(float));
            if (st) return st;
            /* kpt_iou: OKS in batch pixels, area = 0.53 * gt box area */
            for (int g = 0; g < n_gt; g++) {
                const float *box = gb + 4 * (size_t)g;
                const float *gk = batch->instances.kpts + (size_t)(k0 + g) * K * D;
                double area = 0.53 * (box[2] - box[0]) * (box[3] - box[1]);
                for (int d = 0; d < n_det; d++) {
                    double num = 0, den = 0;
                    for (int k = 0; k < K; k++) {
                        double m = D == 2 || gk[k * D + 2] != 0 ? 1.0 : 0.0;
                        double dx = det_kpt(&v, i, &s->dets[d], k * D) - gk[k * D] * W;
                        double dy = det_kpt(&v, i, &s->dets[d], k * D + 1) - gk[k * D + 1] * H;
                        double sg = 2.0 * s->sigmas[k];
                        double e = (dx * dx + dy * dy) / (sg * sg * (area + 1e-7) * 2.0);
                        num += exp(-e) * m, den += m;
                    }
                    s->iou[(size_t)g * n_det + d] = (float)(num / (den + 1e-7));
                }
            }
            st = yolo_ap_match_predictions(n_det, s->pred_cls, n_gt, gc, s->iou, YOLO_AP_N_IOU, thr, s->correct);
            if (st) return st;
        }
        st = yolo_ap_stats_add_image(&s->pose, n_det, s->correct, s->conf, s->pred_cls, n_gt, gc);
        /* boxes: detect's statistics in the original image */
        for (int d = 0; d < n_det && !st; d++) st = yolo_box_to_original(batch, i, s->dets[d].box, 1);
        if (!st) st = yolo_box_to_original(batch, i, gb, (size_t)n_gt);
        if (!st) st = yolo_det_metrics_add_image(&s->box, s->dets, n_det, n_gt, gc, gb);
        if (st) return yolo_error_context(st, "%s", who);
    }
    return YOLO_OK;
}

/* Box and Pose statistics, through the core's multi-kind helpers. */
static yolo_status pose_metrics_pack(void *state, void **bytes, size_t *size) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "pose metrics_pack: NULL state");
    return yolo_ap_kinds_pack("pose", (yolo_ap_stats *const[]){&s->box, &s->pose}, 2, bytes, size);
}

static yolo_status pose_metrics_merge(void *state, const void *bytes, size_t size) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "pose metrics_merge: NULL state");
    return yolo_ap_kinds_merge("pose", (yolo_ap_stats *const[]){&s->box, &s->pose}, 2, bytes, size);
}

static yolo_status pose_metrics_summarize(void *state, double *values, double *fitness, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "pose metrics_summarize: NULL state");
    return yolo_ap_kinds_summarize("pose", &s->eval, (yolo_ap_stats *const[]){&s->box, &s->pose},
                                   (const char *const[]){"Box", "Pose"}, 2, values, fitness, table);
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

/* JSON coordinates to 5 decimals, as Ultralytics writes them. */
static double round5(double x) { return round(x * 1e5) / 1e5; }

/* Detection det's keypoints into s->kp as (x, y, visibility) in the
 * original image, and its box too; the original size to *OW, *OH. */
static yolo_status keypoints_to_original(metrics_state *s, const yolo_batch *batch, const eval_view *v, int image,
                                         yolo_detection *det, float *OW, float *OH) {
    int K = v->K, D = v->D;
    yolo_status st = YOLO_OK;
    for (int k = 0; k < K && !st; k++) {
        float xy[2] = {det_kpt(v, image, det, k * D), det_kpt(v, image, det, k * D + 1)};
        st = yolo_points_to_original(batch, image, xy, 1, OW, OH);
        s->kp[3 * k] = xy[0], s->kp[3 * k + 1] = xy[1];
        s->kp[3 * k + 2] = D == 3 ? det_kpt(v, image, det, k * D + 2) : 1.0f;
    }
    return st ? st : yolo_box_to_original(batch, image, det->box, 1);
}

static yolo_status pose_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    metrics_state *s = state;
    const char *who = "pose predict";
    if (!s || !out) return yolo_error(YOLO_ERR_ARG, "%s: NULL state or output", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (st) return st;
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch of %d", who, image, batch->n);
    int n_det, K = v.K, D = v.D;
    st = image_nms(s, &v, image, &n_det);
    if (!st) st = grow((void **)&s->kp, &s->kp_cap, (size_t)K * 3, sizeof(float));
    if (st) return st;
    free(s->txt), free(s->json);
    s->txt = s->json = NULL;
    size_t txt_size, json_size;
    FILE *txt = open_memstream(&s->txt, &txt_size), *json = open_memstream(&s->json, &json_size);
    if (!txt || !json) {
        if (txt) fclose(txt);
        if (json) fclose(json);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
    }
    fprintf(json, "{\"detections\": [");
    for (int d = 0; d < n_det && !st; d++) {
        yolo_detection det = s->dets[d];
        float OW = 0, OH = 0;
        st = keypoints_to_original(s, batch, &v, image, &det, &OW, &OH);
        if (st) break;
        /* a YOLO-pose label row: class, normalized xywh, x y [v] per keypoint, [conf] */
        fprintf(txt, "%d %g %g %g %g", (int)det.cls, (double)((det.box[0] + det.box[2]) / 2 / OW),
                (double)((det.box[1] + det.box[3]) / 2 / OH), (double)((det.box[2] - det.box[0]) / OW),
                (double)((det.box[3] - det.box[1]) / OH));
        for (int k = 0; k < K; k++) {
            fprintf(txt, " %g %g", (double)(s->kp[3 * k] / OW), (double)(s->kp[3 * k + 1] / OH));
            if (D == 3) fprintf(txt, " %g", (double)s->kp[3 * k + 2]);
        }
        if (s->eval.save_conf) fprintf(txt, " %g", (double)det.score);
        fprintf(txt, "\n");
        fprintf(json, "%s{", d ? ", " : "");
        yolo_det_write_json(json, &s->eval, &det);
        fprintf(json, ", \"keypoints\": {\"x\": [");
        for (int k = 0; k < K; k++) fprintf(json, "%s%.10g", k ? ", " : "", round5(s->kp[3 * k]));
        fprintf(json, "], \"y\": [");
        for (int k = 0; k < K; k++) fprintf(json, "%s%.10g", k ? ", " : "", round5(s->kp[3 * k + 1]));
        fprintf(json, "]");
        if (D == 3) {
            fprintf(json, ", \"visible\": [");
            for (int k = 0; k < K; k++) fprintf(json, "%s%.10g", k ? ", " : "", round5(s->kp[3 * k + 2]));
            fprintf(json, "]");
        }
        fprintf(json, "}}");
    }
    fprintf(json, "]}");
    bool bad = ferror(txt) || ferror(json);
    bad |= fclose(txt) != 0;
    bad |= fclose(json) != 0;
    if (st) return st;
    if (bad || !s->txt || !s->json) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
    out->txt = s->txt;
    out->json = s->json;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */

/* Ultralytics' COCO-pose skeleton (0-based) and its palette indices. */
static const int coco_skeleton[19 * 2] = {15, 13, 13, 11, 16, 14, 14, 12, 11, 12, 5, 11, 6, 12, 5, 6, 5, 7, 6, 8,
                                          7, 9, 8, 10, 1, 2, 0, 1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 6};
static const int coco_limb_color[19] = {9, 9, 9, 9, 7, 7, 7, 0, 0, 0, 0, 0, 16, 16, 16, 16, 16, 16, 16};
static const int coco_kpt_color[17] = {16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9};

/* Boxes with labels, then keypoints: COCO's skeleton for 17 keypoints,
 * otherwise each keypoint joined to the next (the shapes' corners). */
static yolo_status pose_draw_predictions(void *state, const yolo_batch *batch, int image, int n_outputs,
                                         const yolo_host_tensor *outputs, const yolo_draw_options *opt,
                                         yolo_canvas *canvas, yolo_drawn_result *out) {
    metrics_state *s = state;
    const char *who = "pose draw_predictions";
    if (!s || !opt || !canvas || !out) return yolo_error(YOLO_ERR_ARG, "%s: NULL argument", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (!st && (image < 0 || image >= batch->n)) st = yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch", who, image);
    int n_det = 0, K = v.K;
    if (!st) st = image_nms(s, &v, image, &n_det);
    if (!st) st = grow((void **)&s->kp, &s->kp_cap, (size_t)K * 3, sizeof(float));
    if (!st) st = grow((void **)&s->drawn, &s->drawn_cap, (size_t)n_det + 1, sizeof *s->drawn);
    if (!st) st = grow((void **)&s->chain, &s->chain_cap, 2 * (size_t)K + 2, sizeof *s->chain);
    if (st) return st;
    for (int k = 0; k < K; k++) s->chain[2 * k] = k, s->chain[2 * k + 1] = (k + 1) % K;
    bool coco = K == 17;
    *out = (yolo_drawn_result){0};
    for (int d = n_det - 1; d >= 0 && !st; d--) {
        yolo_detection det = s->dets[d];
        if (det.score < opt->conf) continue;
        float OW = 0, OH = 0;
        st = keypoints_to_original(s, batch, &v, image, &det, &OW, &OH);
        if (st) break;
        yolo_det_draw_detection(canvas, &s->eval, &det, opt, s->drawn, &out->n);
        yolo_draw_keypoints(canvas, s->kp, K, 3, coco ? coco_skeleton : s->chain, coco ? 19 : (K > 2 ? K : K - 1),
                            coco ? coco_kpt_color : NULL, coco ? coco_limb_color : NULL, yolo_class_color(det.cls),
                            opt->line_width * 1.5 + 1, fmax(1.0, ceil(opt->line_width / 2)));
    }
    out->objects = s->drawn;
    return st;
}

const yolo_config_key pose_config_keys[2] = {
    {"pose", YOLO_CONFIG_FLOAT, YOLO_CONFIG_MIN | YOLO_CONFIG_TRAIN | YOLO_CONFIG_VAL, 0, 0, NULL, "12.0",
     "pose task: keypoint (OKS) loss gain"},
    {"kobj", YOLO_CONFIG_FLOAT, YOLO_CONFIG_MIN | YOLO_CONFIG_TRAIN | YOLO_CONFIG_VAL, 0, 0, NULL, "1.0",
     "pose task: keypoint visibility loss gain"},
};

const yolo_task_hooks pose_task_hooks = {
    .data = {.needs = YOLO_NEED_BOXES | YOLO_NEED_KEYPOINTS, .parse_labels = NULL, .label_format = NULL},
    .n_loss_items = 5,
    .loss_names = pose_loss_names,
    .loss_create = pose_loss_create,
    .loss_destroy = pose_loss_destroy,
    .loss_compute = pose_loss_compute,
    .val_loss_outputs = 1,
    .n_metrics = 8,
    .metric_names = pose_metric_names,
    .metrics_create = pose_metrics_create,
    .metrics_destroy = pose_metrics_destroy,
    .metrics_update = pose_metrics_update,
    .metrics_pack = pose_metrics_pack,
    .metrics_merge = pose_metrics_merge,
    .metrics_summarize = pose_metrics_summarize,
    .predict = pose_predict,
    .draw_predictions = pose_draw_predictions,
};
