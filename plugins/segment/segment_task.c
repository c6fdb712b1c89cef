/* segment_task.c — the segment task's hooks (yolo/task.h), Ultralytics'
 * v8SegmentationLoss, SegmentationValidator and SegmentationPredictor.
 *
 * Head outputs (segment_head.c; nl levels, A anchors, nm prototypes):
 *   training  maps[0..nl-1] [B, 64 + nc, H_l, W_l], coefficients [B, nm, A],
 *             prototypes [B, nm, H/4, W/4]
 *   eval      [B, 4 + nc + nm, A] (boxes, scores, coefficients), then the
 *             training outputs (so val losses read them from index 1).
 *
 *   loss     detect's box/cls/dfl terms through yolo_det_criterion; the mask
 *            term per positive anchor: BCE of its coefficients . prototypes
 *            against its assigned instance's mask, cropped to the instance's
 *            box, mean over the mask, / normalized box area; summed over
 *            positives, / their number, times the `box` gain. loss = B *
 *            (box + seg + cls + dfl); gradients into the maps, the
 *            coefficients and the prototypes. Masks are the polygons
 *            rasterized at imgsz / mask_ratio (overlap_mask: one index mask
 *            per image, larger instances under smaller ones).
 *   metrics  box P/R/mAP as detect (original image space) and mask P/R/mAP
 *            from mask IoU at the prototype resolution of the batch image;
 *            fitness = box fitness + mask fitness.
 *   predict  masks upsampled to the batch image, the outline of each mask's
 *            largest component in the original image: YOLO-seg txt rows
 *            (cls x1 y1 ... normalized, [conf] with save_conf) and JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/config.h>
#include <yolo/detection.h>
#include <yolo/error.h>
#include <yolo/task.h>

#include "segment_mask.h"
#include "segment_task.h"

/* ------------------------------------------------------------------ */
/* Shared pieces                                                        */

static yolo_status mask_settings(const yolo_config *cfg, bool *overlap, int *ratio) {
    *overlap = true, *ratio = 4;
    if (cfg && yolo_config_find_key(cfg, "overlap_mask") && !yolo_config_is_null(cfg, "overlap_mask")) {
        yolo_status st = yolo_config_get_bool(cfg, "overlap_mask", overlap);
        if (st) return st;
    }
    if (cfg && yolo_config_find_key(cfg, "mask_ratio") && !yolo_config_is_null(cfg, "mask_ratio")) {
        int64_t r;
        yolo_status st = yolo_config_get_int(cfg, "mask_ratio", &r);
        if (st) return st;
        if (r < 1 || r > 64)
            return yolo_error(YOLO_ERR_CONFIG, "segment: mask_ratio=%lld, expected 1..64", (long long)r);
        *ratio = (int)r;
    }
    return YOLO_OK;
}

static yolo_status grow(void **buf, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap && *buf) return YOLO_OK;
    void *p = realloc(*buf, (need ? need : 1) * elem);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "segment: out of memory for %zu values", need);
    *buf = p, *cap = need;
    return YOLO_OK;
}

/* The target masks of one batch image at the prototype size mw x mh:
 * instances k0..k1-1 rasterized at (W / ratio, H / ratio), resized when
 * that differs. overlap: one index mask; else one 0/1 mask per instance. */
typedef struct mask_targets {
    bool overlap;
    int ratio;
    int32_t *masks, *raster;
    uint8_t *scratch;
    size_t masks_cap, raster_cap, scratch_cap;
} mask_targets;

static void targets_free(mask_targets *t) { free(t->masks), free(t->raster), free(t->scratch); }

static yolo_status targets_image(mask_targets *t, const yolo_batch *batch, int k0, int k1, int mw, int mh) {
    int rw = batch->width / t->ratio, rh = batch->height / t->ratio;
    if (rw < 1) rw = 1;
    if (rh < 1) rh = 1;
    int n = k1 - k0, planes = t->overlap ? 1 : n;
    size_t hw = (size_t)mw * mh, rhw = (size_t)rw * rh;
    bool resize = rw != mw || rh != mh;
    yolo_status st = grow((void **)&t->masks, &t->masks_cap, (size_t)(planes > 0 ? planes : 1) * hw, sizeof(int32_t));
    if (!st) st = grow((void **)&t->scratch, &t->scratch_cap, (size_t)(n + 1) * rhw, 1);
    if (!st && resize)
        st = grow((void **)&t->raster, &t->raster_cap, (size_t)(planes > 0 ? planes : 1) * rhw, sizeof(int32_t));
    if (st) return st;
    int32_t *dst = resize ? t->raster : t->masks;
    st = seg_rasterize(&batch->instances, k0, k1, rw, rh, t->overlap, dst, t->scratch);
    if (st || !resize) return st;
    for (int p = 0; p < planes; p++) seg_resize_nearest(t->raster + p * rhw, rw, rh, t->masks + p * hw, mw, mh);
    return YOLO_OK;
}

/* t must have ndim dims equal to want[] (-1: any positive size). */
static yolo_status check_tensor(const char *who, const char *what, const yolo_host_tensor *t, int ndim,
                                const int64_t *want) {
    bool ok = t->data && t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = want[i] < 0 ? t->shape[i] > 0 && t->shape[i] <= INT32_MAX : t->shape[i] == want[i];
    if (ok) return YOLO_OK;
    char got[96] = "", exp[96] = "";
    size_t a = 0, b = 0;
    for (int i = 0; i < t->ndim && i < YOLO_MAX_DIMS && a < sizeof got; i++)
        a += (size_t)snprintf(got + a, sizeof got - a, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    for (int i = 0; i < ndim && b < sizeof exp; i++) {
        if (want[i] < 0) b += (size_t)snprintf(exp + b, sizeof exp - b, "%s_", i ? ", " : "");
        else b += (size_t)snprintf(exp + b, sizeof exp - b, "%s%lld", i ? ", " : "", (long long)want[i]);
    }
    return yolo_error(YOLO_ERR_SHAPE, "%s: the %s output is [%s], expected [%s]", who, what, got, exp);
}

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

typedef struct loss_state {
    yolo_det_criterion *crit;
    mask_targets targets;
    float *z;
    size_t z_cap;
    int32_t *image_first; /* first instance of each image [B + 1] */
    size_t first_cap;
} loss_state;

static const char *const segment_loss_names[4] = {"box_loss", "seg_loss", "cls_loss", "dfl_loss"};

static void segment_loss_destroy(void *state) {
    loss_state *s = state;
    if (!s) return;
    yolo_det_criterion_free(s->crit);
    targets_free(&s->targets);
    free(s->z), free(s->image_first);
    free(s);
}

static yolo_status segment_loss_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "segment loss_create: NULL state");
    *state = NULL;
    loss_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "segment loss_create: out of memory");
    yolo_status st = yolo_det_criterion_create(ctx, &s->crit);
    if (!st) st = mask_settings(ctx ? ctx->cfg : NULL, &s->targets.overlap, &s->targets.ratio);
    if (st) {
        segment_loss_destroy(s);
        return yolo_error_context(st, "segment loss");
    }
    *state = s;
    return YOLO_OK;
}

/* Instances are sorted by image: first[b] .. first[b + 1] are image b's. */
static yolo_status image_ranges(const yolo_batch *batch, int32_t **first, size_t *cap) {
    yolo_status st = grow((void **)first, cap, (size_t)batch->n + 1, sizeof(int32_t));
    if (st) return st;
    const int32_t *idx = batch->batch_idx;
    int n = batch->instances.n, k = 0;
    for (int b = 0; b <= batch->n; b++) {
        (*first)[b] = k;
        while (b < batch->n && k < n && idx[k] == b) k++;
    }
    if (k != n)
        return yolo_error(YOLO_ERR_ARG, "segment: the batch's %d instances are not sorted by image (index %d at %d)", n,
                          (int)idx[k], k);
    return YOLO_OK;
}

static yolo_status segment_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                        const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                        float *items) {
    loss_state *s = state;
    const char *who = "segment loss_compute";
    if (!s || !batch || !outputs || !loss)
        return yolo_error(YOLO_ERR_ARG, "%s: NULL state, batch, outputs or loss", who);
    if (n_outputs < 3)
        return yolo_error(YOLO_ERR_ARG, "%s: %d outputs, expected the level maps, the coefficients and the prototypes",
                          who, n_outputs);
    int nl = n_outputs - 2;
    yolo_det_criterion_result r;
    yolo_status st = yolo_det_criterion_compute(s->crit, who, batch, nl, outputs, grads, &r);
    if (st) return st;
    const yolo_host_tensor *mc = &outputs[nl], *proto = &outputs[nl + 1];
    int64_t B = batch->n, A = r.n_anchors;
    int64_t want_mc[3] = {B, -1, A};
    st = check_tensor(who, "coefficient", mc, 3, want_mc);
    int64_t want_proto[4] = {B, mc->shape[1], -1, -1};
    if (!st) st = check_tensor(who, "prototype", proto, 4, want_proto);
    if (!st && grads)
        for (int i = nl; i < nl + 2 && !st; i++)
            if (grads[i].ndim != outputs[i].ndim || memcmp(grads[i].shape, outputs[i].shape, sizeof grads[i].shape) ||
                !grads[i].data)
                st = yolo_error(YOLO_ERR_SHAPE, "%s: gradient %d differs in shape from its output", who, i);
    if (st) return st;
    int nm = (int)mc->shape[1], mh = (int)proto->shape[2], mw = (int)proto->shape[3];
    size_t hw = (size_t)mw * mh;
    st = grow((void **)&s->z, &s->z_cap, hw, sizeof(float));
    if (!st) st = image_ranges(batch, &s->image_first, &s->first_cap);
    if (st) return st;

    const yolo_det_loss_params *p = yolo_det_criterion_params(s->crit);
    int n_fg = r.value.n_fg;
    double fg = n_fg; /* the normaliser; under DDP the mean over ranks, as the box loss's (yolo/task.h) */
    if (p->ranks && p->ranks->rank_mean && p->ranks->world > 1 && (st = p->ranks->rank_mean(p->ranks, &fg, 1)))
        return st;
    double g_scale = fg > 0 ? (double)B * p->box_gain / fg : 0, seg_sum = 0;
    float W = (float)batch->width, H = (float)batch->height;
    for (int b = 0; b < B && n_fg > 0; b++) {
        int k0 = s->image_first[b], k1 = s->image_first[b + 1];
        const int32_t *gi = r.asg.gt_index + (size_t)b * A;
        bool any = false;
        for (int64_t a = 0; a < A && !any; a++) any = gi[a] >= 0;
        if (!any) continue;
        st = targets_image(&s->targets, batch, k0, k1, mw, mh);
        if (st) return st;
        const float *coef = mc->data + (size_t)b * nm * A, *pr = proto->data + (size_t)b * nm * hw;
        float *gcoef = grads ? grads[nl].data + (size_t)b * nm * A : NULL;
        float *gproto = grads ? grads[nl + 1].data + (size_t)b * nm * hw : NULL;
        for (int64_t a = 0; a < A; a++) {
            int g = gi[a];
            if (g < 0) continue;
            if (g < k0 || g >= k1)
                return yolo_error(YOLO_ERR_ARG, "%s: an anchor of image %d assigned to instance %d", who, b, g);
            const float *box = r.gt.boxes + 4 * (size_t)g;
            seg_mask_target t = {
                .mask = s->targets.overlap ? s->targets.masks : s->targets.masks + (size_t)(g - k0) * hw,
                .value = s->targets.overlap ? g - k0 + 1 : 1,
                .box = {box[0] * mw / W, box[1] * mh / H, box[2] * mw / W, box[3] * mh / H},
                .area = (box[2] - box[0]) / W * ((box[3] - box[1]) / H),
            };
            seg_sum += seg_mask_term(nm, coef + a, (size_t)A, pr, mh, mw, &t, g_scale, gcoef ? gcoef + a : NULL,
                                     gproto, s->z);
        }
    }
    double seg = fg > 0 ? p->box_gain * seg_sum / fg : 0;
    if (!isfinite(seg)) return yolo_error(YOLO_ERR_NUMERIC, "segment: the mask loss is %g", seg);
    *loss = r.value.total + (double)B * seg;
    if (items)
        items[0] = (float)r.value.box, items[1] = (float)seg, items[2] = (float)r.value.cls,
        items[3] = (float)r.value.dfl;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Metrics (and predict)                                                */

typedef struct metrics_state {
    yolo_det_eval eval;
    yolo_ap_stats box, mask;
    mask_targets targets;
    yolo_detection *dets;
    float *gt_boxes, *orig_boxes, *iou, *z;
    int32_t *gt_cls, *pred_cls, *image_first;
    uint8_t *pred_masks, *gt_masks, *correct;
    float *conf, *contour;
    size_t gt_cap, gtc_cap, pm_cap, gm_cap, iou_cap, z_cap, first_cap, contour_cap;
    char *txt, *json;
    yolo_confusion cm;        /* of the boxes, as Ultralytics' segment validator (this rank's share under DDP) */
    yolo_drawn_object *drawn; /* draw_predictions' report */
    uint8_t *draw_mask;       /* one mask at the drawn resolution */
    size_t draw_mask_cap;
} metrics_state;

static const char *const segment_metric_names[8] = {
    "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)",
    "metrics/precision(M)", "metrics/recall(M)", "metrics/mAP50(M)", "metrics/mAP50-95(M)"};

static void segment_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    yolo_det_eval_free(&s->eval);
    yolo_ap_stats_free(&s->box), yolo_ap_stats_free(&s->mask);
    targets_free(&s->targets);
    free(s->dets), free(s->gt_boxes), free(s->orig_boxes), free(s->iou), free(s->z), free(s->gt_cls);
    free(s->pred_cls), free(s->image_first), free(s->pred_masks), free(s->gt_masks), free(s->correct), free(s->conf);
    free(s->contour), free(s->txt), free(s->json), free(s->drawn), free(s->draw_mask);
    yolo_confusion_free(&s->cm);
    free(s);
}

static yolo_status segment_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "segment metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "segment metrics_create: out of memory");
    yolo_ap_stats_init(&s->box, YOLO_AP_N_IOU);
    yolo_ap_stats_init(&s->mask, YOLO_AP_N_IOU);
    yolo_status st = yolo_det_eval_init(&s->eval, ctx, "segment metrics");
    if (!st) st = mask_settings(ctx ? ctx->cfg : NULL, &s->targets.overlap, &s->targets.ratio);
    if (!st) {
        size_t m = (size_t)s->eval.nms.max_det;
        s->dets = malloc(m * sizeof *s->dets);
        s->orig_boxes = malloc(m * 4 * sizeof(float));
        s->conf = malloc(m * sizeof(float));
        s->pred_cls = malloc(m * sizeof(int32_t));
        s->correct = malloc(m * YOLO_AP_N_IOU);
        s->drawn = malloc(m * sizeof *s->drawn);
        if (s->eval.nc > 0) st = yolo_confusion_init(&s->cm, s->eval.nc, 1);
        if (!st && (!s->dets || !s->orig_boxes || !s->conf || !s->pred_cls || !s->correct || !s->drawn))
            st = yolo_error(YOLO_ERR_NOMEM, "segment metrics_create: out of memory for %zu detections", m);
    }
    if (st) {
        segment_metrics_destroy(s);
        return yolo_error_context(st, "segment metrics");
    }
    *state = s;
    return YOLO_OK;
}

/* The eval outputs: t[0] [B, 4 + nc + nm, A] and the prototypes (last). */
typedef struct eval_view {
    const float *pred, *proto;
    int nc, nm, A, mh, mw;
} eval_view;

static yolo_status eval_outputs(const char *who, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, eval_view *v) {
    if (!batch || !outputs || n_outputs < 4)
        return yolo_error(YOLO_ERR_ARG, "%s: no batch or %d outputs (the eval outputs of Segment are nl + 3)", who,
                          n_outputs);
    const yolo_host_tensor *proto = &outputs[n_outputs - 1];
    int64_t want[4] = {batch->n, -1, -1, -1};
    yolo_status st = check_tensor(who, "prototype", proto, 4, want);
    if (st) return st;
    v->nm = (int)proto->shape[1], v->mh = (int)proto->shape[2], v->mw = (int)proto->shape[3];
    st = yolo_det_check_eval_output(who, batch, &outputs[0], v->nm, &v->nc, &v->A);
    v->pred = outputs[0].data;
    v->proto = proto->data;
    return st;
}

/* NMS of image i (boxes in batch pixels); single_cls maps classes to 0. */
static yolo_status image_nms(metrics_state *s, const eval_view *v, int i, int *n_det) {
    size_t C = 4 + (size_t)v->nc + v->nm;
    yolo_status st = yolo_nms_detect(v->pred + (size_t)i * C * v->A, v->nc, v->A, &s->eval.nms, s->dets, n_det);
    if (!st && s->eval.single_cls)
        for (int d = 0; d < *n_det; d++) s->dets[d].cls = 0;
    return st;
}

/* Detection d's mask coefficients in image i: t[0] channels 4 + nc .. */
static const float *det_coef(const eval_view *v, int i, const yolo_detection *d) {
    size_t C = 4 + (size_t)v->nc + v->nm;
    return v->pred + (size_t)i * C * v->A + (4 + (size_t)v->nc) * v->A + d->anchor;
}

static void box_to_mask(const yolo_batch *batch, const eval_view *v, const float *box, float *out) {
    float sx = (float)v->mw / (float)batch->width, sy = (float)v->mh / (float)batch->height;
    out[0] = box[0] * sx, out[1] = box[1] * sy, out[2] = box[2] * sx, out[3] = box[3] * sy;
}

static yolo_status segment_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                          const yolo_host_tensor *outputs) {
    metrics_state *s = state;
    const char *who = "segment metrics_update";
    if (!s) return yolo_error(YOLO_ERR_ARG, "%s: NULL state", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (st) return st;
    int n = batch->instances.n;
    size_t hw = (size_t)v.mw * v.mh, max_det = (size_t)s->eval.nms.max_det;
    st = grow((void **)&s->gt_boxes, &s->gt_cap, (size_t)(n > 0 ? n : 1) * 4, sizeof(float));
    if (!st) st = grow((void **)&s->gt_cls, &s->gtc_cap, (size_t)(n > 0 ? n : 1), sizeof(int32_t));
    if (!st) st = grow((void **)&s->pred_masks, &s->pm_cap, max_det * hw, 1);
    if (!st) st = image_ranges(batch, &s->image_first, &s->first_cap);
    if (!st) st = yolo_det_gt_from_batch(batch, s->gt_boxes, s->gt_cls);
    if (st) return yolo_error_context(st, "%s", who);
    float thr[YOLO_AP_N_IOU];
    yolo_ap_iou_thresholds(thr);
    for (int i = 0; i < batch->n; i++) {
        int k0 = s->image_first[i], k1 = s->image_first[i + 1], n_gt = k1 - k0, n_det;
        st = image_nms(s, &v, i, &n_det);
        if (st) return st;
        float *gb = s->gt_boxes + 4 * (size_t)k0;
        int32_t *gc = s->gt_cls + k0;
        if (s->eval.single_cls)
            for (int j = 0; j < n_gt; j++) gc[j] = 0;
        /* masks at the prototype resolution of the batch image */
        const float *proto = v.proto + (size_t)i * v.nm * hw;
        for (int d = 0; d < n_det; d++) {
            float mb[4];
            box_to_mask(batch, &v, s->dets[d].box, mb);
            seg_predict_mask(v.nm, det_coef(&v, i, &s->dets[d]), (size_t)v.A, proto, v.mh, v.mw, mb,
                             s->pred_masks + (size_t)d * hw);
            s->conf[d] = s->dets[d].score;
            s->pred_cls[d] = s->dets[d].cls;
        }
        if (n_det > 0) memset(s->correct, 0, (size_t)n_det * YOLO_AP_N_IOU);
        if (n_gt > 0 && n_det > 0) {
            st = targets_image(&s->targets, batch, k0, k1, v.mw, v.mh);
            if (!st) st = grow((void **)&s->gt_masks, &s->gm_cap, (size_t)n_gt * hw, 1);
            if (!st) st = grow((void **)&s->iou, &s->iou_cap, (size_t)n_gt * n_det, sizeof(float));
            if (st) return st;
            for (int j = 0; j < n_gt; j++)
                for (size_t p = 0; p < hw; p++)
                    s->gt_masks[(size_t)j * hw + p] = s->targets.overlap ? s->targets.masks[p] == j + 1
                                                                          : s->targets.masks[(size_t)j * hw + p] != 0;
            seg_mask_iou(s->gt_masks, n_gt, s->pred_masks, n_det, hw, s->iou);
            st = yolo_ap_match_predictions(n_det, s->pred_cls, n_gt, gc, s->iou, YOLO_AP_N_IOU, thr, s->correct);
            if (st) return st;
        }
        st = yolo_ap_stats_add_image(&s->mask, n_det, s->correct, s->conf, s->pred_cls, n_gt, gc);
        /* boxes: detect's statistics in the original image */
        for (int d = 0; d < n_det && !st; d++) st = yolo_box_to_original(batch, i, s->dets[d].box, 1);
        if (!st) st = yolo_box_to_original(batch, i, gb, (size_t)n_gt);
        if (!st) st = yolo_det_metrics_add_image(&s->box, s->dets, n_det, n_gt, gc, gb);
        if (!st && s->cm.counts)
            st = yolo_det_confusion_add_image(&s->cm, s->dets, n_det, n_gt, gc, gb, YOLO_CONFUSION_CONF,
                                              YOLO_CONFUSION_IOU);
        if (st) return yolo_error_context(st, "%s", who);
    }
    return YOLO_OK;
}

/* Box and Mask statistics, through the core's multi-kind helpers. */
static yolo_status segment_metrics_pack(void *state, void **bytes, size_t *size) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "segment metrics_pack: NULL state");
    return yolo_ap_kinds_pack("segment", (yolo_ap_stats *const[]){&s->box, &s->mask}, 2, bytes, size);
}

static yolo_status segment_metrics_merge(void *state, const void *bytes, size_t size) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "segment metrics_merge: NULL state");
    return yolo_ap_kinds_merge("segment", (yolo_ap_stats *const[]){&s->box, &s->mask}, 2, bytes, size);
}

static yolo_status segment_metrics_summarize(void *state, double *values, double *fitness, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "segment metrics_summarize: NULL state");
    return yolo_ap_kinds_summarize("segment", &s->eval, (yolo_ap_stats *const[]){&s->box, &s->mask},
                                   (const char *const[]){"Box", "Mask"}, 2, values, fitness, table);
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

/* JSON coordinates to 5 decimals, as Ultralytics writes them. */
static double round5(double x) { return round(x * 1e5) / 1e5; }

static yolo_status segment_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                   const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    metrics_state *s = state;
    const char *who = "segment predict";
    if (!s || !out) return yolo_error(YOLO_ERR_ARG, "%s: NULL state or output", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (st) return st;
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch of %d", who, image, batch->n);
    int n_det, W = batch->width, H = batch->height;
    size_t hw = (size_t)v.mw * v.mh, whole = (size_t)W * H;
    st = image_nms(s, &v, image, &n_det);
    if (!st) st = grow((void **)&s->z, &s->z_cap, hw, sizeof(float));
    if (!st) st = grow((void **)&s->pred_masks, &s->pm_cap, whole, 1);
    if (!st) st = grow((void **)&s->contour, &s->contour_cap, 2 * whole + 16, sizeof(float));
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
    const float *proto = v.proto + (size_t)image * v.nm * hw;
    fprintf(json, "{\"detections\": [");
    for (int d = 0; d < n_det && !st; d++) {
        yolo_detection det = s->dets[d];
        float mb[4];
        box_to_mask(batch, &v, det.box, mb);
        seg_predict_mask_upsampled(v.nm, det_coef(&v, image, &det), (size_t)v.A, proto, v.mh, v.mw, mb, W, H, s->z,
                                   s->pred_masks);
        int np = seg_mask_contour(s->pred_masks, W, H, s->contour, (int)(s->contour_cap / 2));
        if (np < 0) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory tracing a mask", who);
        st = st ? st : yolo_box_to_original(batch, image, det.box, 1);
        if (st) break;
        float OW = 0, OH = 0;
        st = yolo_points_to_original(batch, image, s->contour, np > 0 ? (size_t)np : 0, &OW, &OH);
        if (st) break;
        if (np > 0) { /* a YOLO-seg label row: class, normalized polygon, [conf] */
            fprintf(txt, "%d", (int)det.cls);
            for (int k = 0; k < np; k++)
                fprintf(txt, " %g %g", (double)(s->contour[2 * k] / OW), (double)(s->contour[2 * k + 1] / OH));
            if (s->eval.save_conf) fprintf(txt, " %g", (double)det.score);
            fprintf(txt, "\n");
        }
        fprintf(json, "%s{", d ? ", " : "");
        yolo_det_write_json(json, &s->eval, &det);
        fprintf(json, ", \"segments\": {\"x\": [");
        for (int k = 0; k < np; k++) fprintf(json, "%s%.10g", k ? ", " : "", round5(s->contour[2 * k]));
        fprintf(json, "], \"y\": [");
        for (int k = 0; k < np; k++) fprintf(json, "%s%.10g", k ? ", " : "", round5(s->contour[2 * k + 1]));
        fprintf(json, "]}}");
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

/* ------------------------------------------------------------------ */
/* Pictures                                                             */

/* Detection d's mask over the batch image: at the batch resolution, or at
 * the original image's scale (retina_masks), placed in original pixels. */
static yolo_status draw_mask(metrics_state *s, const yolo_batch *batch, const eval_view *v, int image,
                             const yolo_detection *d, const yolo_draw_options *opt, yolo_canvas *canvas) {
    const yolo_image_meta *m = batch->meta ? &batch->meta[image] : NULL;
    float rx = m ? m->ratio_x : 1, ry = m ? m->ratio_y : 1, px = m ? m->pad_x : 0, py = m ? m->pad_y : 0;
    int W = batch->width, H = batch->height, ow = W, oh = H;
    if (opt->retina_masks && rx > 0 && ry > 0) ow = (int)lroundf(W / rx), oh = (int)lroundf(H / ry);
    size_t hw = (size_t)v->mw * v->mh;
    yolo_status st = grow((void **)&s->draw_mask, &s->draw_mask_cap, (size_t)ow * oh, 1);
    if (!st) st = grow((void **)&s->z, &s->z_cap, hw, sizeof(float));
    if (st) return st;
    float mb[4];
    box_to_mask(batch, v, d->box, mb);
    seg_predict_mask_upsampled(v->nm, det_coef(v, image, d), (size_t)v->A, v->proto + (size_t)image * v->nm * hw, v->mh,
                               v->mw, mb, ow, oh, s->z, s->draw_mask);
    float place[4] = {-px / rx, -py / ry, W / rx, H / ry};
    yolo_draw_mask(canvas, s->draw_mask, ow, oh, place, yolo_class_color(d->cls), 0.5);
    return YOLO_OK;
}

static yolo_status segment_draw_predictions(void *state, const yolo_batch *batch, int image, int n_outputs,
                                            const yolo_host_tensor *outputs, const yolo_draw_options *opt,
                                            yolo_canvas *canvas, yolo_drawn_result *out) {
    metrics_state *s = state;
    const char *who = "segment draw_predictions";
    if (!s || !opt || !canvas || !out) return yolo_error(YOLO_ERR_ARG, "%s: NULL argument", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (!st && (image < 0 || image >= batch->n)) st = yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch of %d", who, image, batch->n);
    int n_det = 0;
    if (!st) st = image_nms(s, &v, image, &n_det);
    *out = (yolo_drawn_result){0};
    for (int d = n_det - 1; d >= 0 && !st; d--) /* masks first, the most confident on top */
        if (s->dets[d].score >= opt->conf && !opt->report_only) st = draw_mask(s, batch, &v, image, &s->dets[d], opt, canvas);
    for (int d = n_det - 1; d >= 0 && !st; d--) {
        if (s->dets[d].score < opt->conf) continue;
        yolo_detection det = s->dets[d];
        st = yolo_box_to_original(batch, image, det.box, 1);
        if (!st) yolo_det_draw_detection(canvas, &s->eval, &det, opt, s->drawn, &out->n);
    }
    out->objects = s->drawn;
    return st;
}

static yolo_status segment_metrics_plot(void *state, const char *dir, FILE *table) {
    metrics_state *s = state;
    if (!s) return yolo_error(YOLO_ERR_ARG, "segment metrics_plot: NULL state");
    if (!s->cm.counts) return YOLO_OK;
    const char *const *names = (const char *const *)s->eval.names;
    if (table) yolo_confusion_print(&s->cm, names, table);
    if (!dir) return YOLO_OK;
    yolo_status st = yolo_confusion_plot(&s->cm, names, dir);
    yolo_ap_stats *kinds[2] = {&s->box, &s->mask};
    const char *prefix[2] = {"Box", "Mask"};
    for (int k = 0; k < 2 && !st; k++) {
        yolo_ap_summary sum;
        st = yolo_ap_summarize(kinds[k], yolo_det_eval_nc(&s->eval, kinds[k]), &sum);
        if (!st) st = yolo_det_plot_curves(&sum, prefix[k], names, s->eval.nc, dir);
        if (!st) yolo_ap_summary_free(&sum);
    }
    return st ? yolo_error_context(st, "segment plots") : YOLO_OK;
}

const yolo_task_hooks segment_task_hooks = {
    .data = {.needs = YOLO_NEED_BOXES | YOLO_NEED_POLYGONS, .parse_labels = NULL, .label_format = NULL},
    .n_loss_items = 4,
    .loss_names = segment_loss_names,
    .loss_create = segment_loss_create,
    .loss_destroy = segment_loss_destroy,
    .loss_compute = segment_loss_compute,
    .val_loss_outputs = 1,
    .n_metrics = 8,
    .metric_names = segment_metric_names,
    .metrics_create = segment_metrics_create,
    .metrics_destroy = segment_metrics_destroy,
    .metrics_update = segment_metrics_update,
    .metrics_pack = segment_metrics_pack,
    .metrics_merge = segment_metrics_merge,
    .metrics_summarize = segment_metrics_summarize,
    .predict = segment_predict,
    .draw_predictions = segment_draw_predictions,
    .metrics_plot = segment_metrics_plot,
};
