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
    yolo_det_task_eval kit; /* first: Box and Pose statistics, NMS, the batch's gts (yolo/detection.h) */
    float *sigmas, *kp;
    size_t kp_cap;
    int sigmas_k;
    int *chain;      /* the skeleton of a non-COCO keypoint set: k -> k + 1 */
    size_t chain_cap;
} metrics_state;

static const char *const pose_metric_names[8] = {
    "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)",
    "metrics/precision(P)", "metrics/recall(P)", "metrics/mAP50(P)", "metrics/mAP50-95(P)"};

static void pose_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    yolo_det_task_eval_free(&s->kit);
    free(s->chain);
    free(s->sigmas), free(s->kp);
    free(s);
}

static yolo_status pose_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "pose metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "pose metrics_create: out of memory");
    yolo_status st = yolo_det_task_eval_init(&s->kit, ctx, "pose", "Pose");
    if (st) {
        pose_metrics_destroy(s);
        return st;
    }
    *state = s;
    return YOLO_OK;
}

/* The eval outputs: t[0] [B, 4 + nc + nk, A]; the last is the raw keypoints [B, nk, A]. */
typedef struct eval_view {
    yolo_det_eval_view det; /* first (the kit's IoU callback gets it): n_extra = nk keypoint channels */
    int K, D;
} eval_view;

static yolo_status eval_outputs(const char *who, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, eval_view *v) {
    if (!batch || !outputs || n_outputs < 3)
        return yolo_error(YOLO_ERR_ARG, "%s: no batch or %d outputs (the eval outputs of Pose are nl + 2)", who,
                          n_outputs);
    const yolo_host_tensor *raw = &outputs[n_outputs - 1];
    if (raw->ndim != 3 || raw->shape[1] < 2 || raw->shape[1] > 4096)
        return yolo_error(YOLO_ERR_SHAPE, "%s: the last output is not the keypoints [B, nk, A]", who);
    int nk = (int)raw->shape[1];
    /* the keypoint layout: the data's (val), else 3 dims when nk allows (predict) */
    if (batch->instances.kpt_count > 0 && batch->instances.kpt_count * batch->instances.kpt_dims == nk)
        v->K = batch->instances.kpt_count, v->D = batch->instances.kpt_dims;
    else if (batch->instances.kpt_count > 0)
        return yolo_error(YOLO_ERR_SHAPE, "%s: the model has %d keypoint channels, the data kpt_shape [%d, %d]", who,
                          nk, batch->instances.kpt_count, batch->instances.kpt_dims);
    else
        v->D = nk % 3 == 0 ? 3 : 2, v->K = nk / v->D;
    return yolo_det_eval_view_init(who, batch, &outputs[0], nk, &v->det);
}

/* Keypoint channel j (x, y or v of a point) of detection d in image i (batch pixels). */
static float det_kpt(const eval_view *v, int i, const yolo_detection *d, int j) {
    return yolo_det_eval_view_extra(&v->det, i, d)[(size_t)j * v->det.n_anchors];
}

/* kpt_iou of image img: OKS in batch pixels, area = 0.53 * gt box area, into s->kit.iou. */
static yolo_status image_oks(void *state, const yolo_det_eval_view *view, const yolo_batch *batch,
                             const yolo_det_task_image *img) {
    metrics_state *s = state;
    const eval_view *v = (const eval_view *)view;
    int K = v->K, D = v->D, n_det = img->n_det;
    float W = (float)batch->width, H = (float)batch->height;
    for (int g = 0; g < img->n_gt; g++) {
        const float *box = img->gt_boxes + 4 * (size_t)g;
        const float *gk = batch->instances.kpts + (size_t)(img->first + g) * K * D;
        double area = 0.53 * (box[2] - box[0]) * (box[3] - box[1]);
        for (int d = 0; d < n_det; d++) {
            double num = 0, den = 0;
            for (int k = 0; k < K; k++) {
                double m = D == 2 || gk[k * D + 2] != 0 ? 1.0 : 0.0;
                double dx = det_kpt(v, img->image, &s->kit.dets[d], k * D) - gk[k * D] * W;
                double dy = det_kpt(v, img->image, &s->kit.dets[d], k * D + 1) - gk[k * D + 1] * H;
                double sg = 2.0 * s->sigmas[k];
                double e = (dx * dx + dy * dy) / (sg * sg * (area + 1e-7) * 2.0);
                num += exp(-e) * m, den += m;
            }
            s->kit.iou[(size_t)g * n_det + d] = (float)(num / (den + 1e-7));
        }
    }
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
    if (batch->instances.n > 0 && !batch->instances.kpts)
        return yolo_error(YOLO_ERR_CONFIG, "%s: the labels have no keypoints (the data yaml needs kpt_shape)", who);
    if (s->sigmas_k != v.K) {
        float *p = realloc(s->sigmas, sizeof(float) * (size_t)v.K);
        if (!p) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
        s->sigmas = p, s->sigmas_k = v.K, pose_kpt_sigmas(v.K, p);
    }
    return yolo_det_task_eval_update(s, batch, &v.det, image_oks);
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

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
    int n_det, K = v.K, D = v.D;
    FILE *txt, *json;
    st = yolo_det_grow(who, (void **)&s->kp, &s->kp_cap, (size_t)K * 3, sizeof(float));
    if (!st) st = yolo_det_task_eval_predict_begin(&s->kit, who, batch, image, &v.det, &n_det, &txt, &json);
    if (st) return st;
    for (int d = 0; d < n_det && !st; d++) {
        yolo_detection det = s->kit.dets[d];
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
        if (s->kit.eval.save_conf) fprintf(txt, " %g", (double)det.score);
        fprintf(txt, "\n");
        fprintf(json, "%s{", d ? ", " : "");
        yolo_det_write_json(json, &s->kit.eval, &det);
        fprintf(json, ", \"keypoints\": {");
        yolo_write_json_numbers(json, "x", s->kp, K, 3);
        fprintf(json, ", ");
        yolo_write_json_numbers(json, "y", s->kp + 1, K, 3);
        if (D == 3) {
            fprintf(json, ", ");
            yolo_write_json_numbers(json, "visible", s->kp + 2, K, 3);
        }
        fprintf(json, "}}");
    }
    return yolo_prediction_text_close(who, st, &s->kit.txt, &s->kit.json, txt, json, out);
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
    if (!st) st = yolo_det_task_eval_nms(&s->kit, &v.det, image, &n_det);
    if (!st) st = yolo_det_grow(who, (void **)&s->kp, &s->kp_cap, (size_t)K * 3, sizeof(float));
    if (!st) st = yolo_det_grow(who, (void **)&s->chain, &s->chain_cap, 2 * (size_t)K + 2, sizeof *s->chain);
    if (st) return st;
    for (int k = 0; k < K; k++) s->chain[2 * k] = k, s->chain[2 * k + 1] = (k + 1) % K;
    bool coco = K == 17;
    *out = (yolo_drawn_result){0};
    for (int d = n_det - 1; d >= 0 && !st; d--) {
        yolo_detection det = s->kit.dets[d];
        if (det.score < opt->conf) continue;
        float OW = 0, OH = 0;
        st = keypoints_to_original(s, batch, &v, image, &det, &OW, &OH);
        if (st) break;
        yolo_det_draw_detection(canvas, &s->kit.eval, &det, opt, s->kit.drawn, &out->n);
        if (!opt->report_only)
            yolo_draw_keypoints(canvas, s->kp, K, 3, coco ? coco_skeleton : s->chain, coco ? 19 : (K > 2 ? K : K - 1),
                                coco ? coco_kpt_color : NULL, coco ? coco_limb_color : NULL, yolo_class_color(det.cls),
                                opt->line_width * 1.5 + 1, fmax(1.0, ceil(opt->line_width / 2)));
    }
    out->objects = s->kit.drawn;
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
    .metrics_pack = yolo_det_task_eval_pack, /* metrics_state starts with the kit */
    .metrics_merge = yolo_det_task_eval_merge,
    .metrics_summarize = yolo_det_task_eval_summarize,
    .predict = pose_predict,
    .draw_predictions = pose_draw_predictions,
    .metrics_plot = yolo_det_task_eval_plot,
};
