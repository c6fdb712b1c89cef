/* yolo/detection.h — the detection building blocks every box-based task
 * shares (detect, segment, and third-party tasks such as pose or oriented
 * boxes): boxes and IoU, anchors and the DFL decode, the TaskAlignedAssigner,
 * the v8 detection loss, NMS, average precision, the evaluation settings and
 * the YOLOv8 Detect head's building blocks. They match Ultralytics v8
 * (make_anchors, dist2bbox, bbox_iou CIoU, TaskAlignedAssigner,
 * v8DetectionLoss with DFLoss, non_max_suppression, match_predictions,
 * ap_per_class/compute_ap, DetMetrics) number for number.
 *
 * A task that extends detection (Segment = Detect + masks, Pose = Detect +
 * keypoints) builds its head on yolo_det_head, runs yolo_det_criterion for
 * the box, class and DFL terms and reads the assignment it exposes (which
 * instance each anchor was given) for its own term, and validates with
 * yolo_nms_detect (which returns anchor indices, so per-anchor extras follow
 * their boxes) and the yolo_ap_* accumulator with its own IoU matrix.
 *
 * These live in their own library, libyolo-detection (CMake:
 * find_package(yolo COMPONENTS detection) -> yolo::detection; pkg-config:
 * yolo-detection), built on the other SDK headers like a plugin: libyolo
 * itself knows nothing of boxes. A task that includes this header links it.
 *
 * Everything but the head helpers works on caller-owned host float arrays:
 * no tensors, no trainer. Functions that can fail return a yolo_status and
 * set yolo_error(); none keeps a pointer to its arguments unless it says so.
 *
 * Layouts (A = the anchors of all levels, level by level, each level
 * row-major over (y, x) like Ultralytics' make_anchors):
 *   head   [B, C, A], C = 4*reg_max + nc: channels 0..4*reg_max-1 are the box
 *          distribution logits, side-major (l, t, r, b; reg_max bins each),
 *          then nc class logits: Ultralytics' cat([xi.view(B, no, -1)], 2).
 *   grad   the same layout as head.
 *   boxes  xyxy unless a name says otherwise; [n, 4] rows. */
#ifndef YOLO_DETECTION_H
#define YOLO_DETECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "yolo/config.h"
#include "yolo/data.h"
#include "yolo/error.h"
#include "yolo/model.h"
#include "yolo/plot.h"
#include "yolo/task.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libyolo-detection is built with -fvisibility=hidden: this marks what it
 * exports, which is exactly what this header declares. */
#if defined(__GNUC__)
#define YOLO_DETECTION_API __attribute__((visibility("default")))
#else
#define YOLO_DETECTION_API
#endif

/* ================================================================== */
/* Boxes                                                               */

YOLO_DETECTION_API void yolo_box_xywh_to_xyxy(const float *xywh, float *xyxy, size_t n);
YOLO_DETECTION_API void yolo_box_xyxy_to_xywh(const float *xyxy, float *xywh, size_t n);

/* Ultralytics' metrics box_iou: inter / (area1 + area2 - inter + 1e-7), in
 * float. out[i * nb + j] = IoU(a[i], b[j]). */
YOLO_DETECTION_API void yolo_box_iou_matrix(const float *a, int na, const float *b, int nb, float *out);

/* bbox_iou(..., xywh=False, CIoU=True) with eps 1e-7 on the heights, the
 * union and c^2. Symmetric in its arguments. */
YOLO_DETECTION_API double yolo_box_ciou(const double b1[4], const double b2[4]);

/* The same CIoU, plus its gradient with respect to b1 (xyxy) as autograd
 * sees it: alpha is a constant (computed under no_grad), min/max ties split
 * the gradient in half and clamp(0) passes it at exactly 0, as in torch.
 * grad_b1 may be NULL (then this is yolo_box_ciou). */
YOLO_DETECTION_API double yolo_box_ciou_grad(const double b1[4], const double b2[4], double grad_b1[4]);

/* Undo a letterbox: (box - pad) / gain, then clip to [0, width] x [0, height]
 * (Ultralytics' scale_boxes with explicit gain and padding). */
YOLO_DETECTION_API void yolo_box_unletterbox(float *xyxy, size_t n, float gain, float pad_x, float pad_y, float width, float height);

/* Batch-image xyxy pixels of image `image` -> that image's original pixels
 * (batch->meta: (x - pad) / ratio, clipped to the original size). Without
 * meta the batch image is the original (boxes are only clipped). Errors:
 * YOLO_ERR_ARG for a meta without a usable ratio or size. */
YOLO_DETECTION_API yolo_status yolo_box_to_original(const yolo_batch *batch, int image, float *xyxy, size_t n);
/* The same for n points (x, y pairs: polygons, keypoints), clamped to the
 * original image, whose size goes to *width, *height (may be NULL). */
YOLO_DETECTION_API yolo_status yolo_points_to_original(const yolo_batch *batch, int image, float *xy, size_t n, float *width,
                                    float *height);

/* ================================================================== */
/* Anchors and the DFL decode                                          */

/* Total anchors of the levels: sum of h[i] * w[i]. */
YOLO_DETECTION_API int yolo_det_anchor_count(int n_levels, const int *h, const int *w);

/* make_anchors(feats, strides, offset): xy [A, 2] cell centres in grid units
 * of their level ((x + offset, y + offset)), stride [A]. */
YOLO_DETECTION_API yolo_status yolo_det_make_anchors(int n_levels, const int *h, const int *w, const float *strides, float offset,
                                  float *xy, float *stride);

/* Softmax over one side's reg_max (<= 64) logits (read at logits[j * step])
 * and the expected bin: returns sum_j j * p_j; p (reg_max doubles) may be
 * NULL. reg_max 1 (YOLO26, no DFL): the logit itself, p[0] = 1. */
YOLO_DETECTION_API double yolo_det_dfl_expect(const float *logits, size_t step, int reg_max, double *p);

/* The four expected distances (l, t, r, b) of anchor a of one image's head
 * block [C, A]. p (4 * reg_max doubles) receives the softmaxes, or NULL. */
YOLO_DETECTION_API void yolo_det_dfl_distances(const float *head_image, int n_anchors, int reg_max, int a, double dist[4],
                            double *p);

/* Ultralytics' inference output of Detect: out [B, 4 + nc, A] holds boxes as
 * xywh in input pixels (dist2bbox(xywh=True) * stride) and sigmoid scores. */
YOLO_DETECTION_API yolo_status yolo_det_decode_predictions(const float *head, int batch, int nc, int reg_max, int n_anchors,
                                        const float *anchor_xy, const float *anchor_stride, float *out);

/* Per-level outputs [B, C, h_l, w_l] <-> the concatenated [B, C, A]. */
YOLO_DETECTION_API void yolo_det_levels_gather(const float *const *levels, int n_levels, const int *h, const int *w, int batch,
                            int channels, float *out);
YOLO_DETECTION_API void yolo_det_levels_scatter(const float *in, int n_levels, const int *h, const int *w, int batch, int channels,
                             float *const *levels);

/* ================================================================== */
/* TaskAlignedAssigner                                                 */

typedef struct yolo_tal_params {
    int topk;    /* 10 */
    float alpha; /* 0.5: power of the class score */
    float beta;  /* 6.0: power of the CIoU */
    float eps;   /* 1e-9 */
} yolo_tal_params;

YOLO_DETECTION_API yolo_tal_params yolo_tal_default_params(void);

/* Assigns the anchors of one image (no gradient, as Ultralytics).
 *   cls_logits  [nc, A] row-major class logits (row stride n_anchors): the
 *               class block of the head; sigmoid is applied inside.
 *   pred_boxes  [A, 4] predicted xyxy boxes in input pixels.
 *   anchor_px   [A, 2] anchor centres in input pixels.
 *   gt_cls [n_gt], gt_boxes [n_gt, 4] xyxy pixels. A gt whose coordinates
 *               sum to <= 0 is padding and is ignored, as Ultralytics' mask_gt.
 * Outputs per anchor: target_gt (index into the gts, -1 = background) and
 * target_score (the soft target of class gt_cls[target_gt]: the align metric
 * normalised by its gt's max metric times its gt's max IoU). Returns the
 * number of foreground anchors in *n_fg (may be NULL). */
YOLO_DETECTION_API yolo_status yolo_tal_assign(const yolo_tal_params *p, int n_anchors, int nc, const float *cls_logits,
                            const float *pred_boxes, const float *anchor_px, int n_gt, const int32_t *gt_cls,
                            const float *gt_boxes, int32_t *target_gt, float *target_score, int *n_fg);

/* ================================================================== */
/* v8DetectionLoss                                                     */
/*
 *   tss  = max(sum of the soft targets, 1)
 *   cls  = cls_gain * sum over anchors x classes of BCEWithLogits(x, t) / tss
 *   box  = box_gain * sum over positives of (1 - CIoU(pred, target)) * w / tss
 *   dfl  = dfl_gain * sum over positives of the DFL (mean of 4 sides) * w / tss
 *   loss = batch * (box + cls + dfl)
 * w the anchor's soft target, boxes in grid units, DFL targets clamped to
 * [0, reg_max - 1.01]. The assignment is a constant, as in Ultralytics. */

typedef struct yolo_det_loss_params {
    int nc;
    int reg_max;    /* 16 */
    float box_gain; /* 7.5 */
    float cls_gain; /* 0.5 */
    float dfl_gain; /* 1.5 */
    yolo_tal_params tal;
    /* DDP: the target-score sum is averaged over the ranks through
     * ranks->rank_mean when both are set (yolo/task.h); NULL alone */
    const struct yolo_task_context *ranks;
} yolo_det_loss_params;

YOLO_DETECTION_API yolo_det_loss_params yolo_det_loss_default_params(int nc);

/* The batch's instances as Ultralytics' batch dict: image index, class and
 * box (xyxy in input-image pixels) per instance. Within an image the order
 * is kept (it breaks assigner ties as Ultralytics' padded rows do). */
typedef struct yolo_det_gt_batch {
    int n;
    const int32_t *batch_idx;
    const int32_t *cls;
    const float *boxes;
} yolo_det_gt_batch;

/* The assigner's output for the batch, per anchor [B * A]: the instance
 * index into yolo_det_gt_batch (-1 = background) and the soft target score. */
typedef struct yolo_det_assignment {
    int32_t *gt_index;
    float *score;
} yolo_det_assignment;

typedef struct yolo_det_loss_value {
    double total;            /* batch * (box + cls + dfl): what grad is the gradient of */
    double box, cls, dfl;    /* the gained components, without the batch factor (logged) */
    double target_score_sum; /* the normaliser, max(sum of soft targets, 1) */
    int n_fg;                /* foreground anchors in the batch */
} yolo_det_loss_value;

/* The batch's instances (normalized cx cy w h) as xyxy pixels of the batch
 * image: boxes [n, 4] and cls [n], n = batch->instances.n, caller-owned
 * (Ultralytics' preprocess: xywh * size, then xywh2xyxy). */
YOLO_DETECTION_API yolo_status yolo_det_gt_from_batch(const yolo_batch *batch, float *boxes, int32_t *cls);

/* Runs the assigner on every image of the batch; out's arrays hold B * A. */
YOLO_DETECTION_API yolo_status yolo_det_assign(const yolo_det_loss_params *p, int batch, int n_anchors, const float *head,
                            const float *anchor_xy, const float *anchor_stride, const yolo_det_gt_batch *gt,
                            yolo_det_assignment *out);

/* The loss for a fixed assignment and its exact gradient with respect to
 * every head output (grad may be NULL; it is written, not accumulated). The
 * function a finite-difference check can probe. */
YOLO_DETECTION_API yolo_status yolo_det_loss_assigned(const yolo_det_loss_params *p, int batch, int n_anchors, const float *head,
                                   const float *anchor_xy, const float *anchor_stride,
                                   const yolo_det_gt_batch *gt, const yolo_det_assignment *asg,
                                   yolo_det_loss_value *out, float *grad);

/* yolo_det_assign then yolo_det_loss_assigned (scratch allocated inside). */
YOLO_DETECTION_API yolo_status yolo_det_loss(const yolo_det_loss_params *p, int batch, int n_anchors, const float *head,
                          const float *anchor_xy, const float *anchor_stride, const yolo_det_gt_batch *gt,
                          yolo_det_loss_value *out, float *grad);

/* ---- the criterion: the detection loss of a head's level maps ----
 * What a task's loss_compute does for the Detect part of its head: checks
 * the maps, gathers them to [B, C, A], builds the anchors (cached while the
 * input size stays), turns the batch's instances into pixel boxes, assigns,
 * computes the loss and scatters its gradient back into the maps' layout.
 * Gains come from the configuration keys box, cls and dfl; strides from the
 * context's model (without one: batch height / map height). */
typedef struct yolo_det_criterion yolo_det_criterion;

/* Everything the last compute saw, owned by the criterion until the next
 * call: a task reads the assignment for its own per-anchor term. */
typedef struct yolo_det_criterion_result {
    yolo_det_loss_value value;
    int batch, nc, reg_max, n_anchors;
    const float *head;                       /* [B, 4*reg_max + nc, A] */
    const float *anchor_xy, *anchor_stride;  /* [A, 2] grid units, [A] */
    yolo_det_gt_batch gt;                    /* the instances, xyxy batch-image pixels */
    yolo_det_assignment asg;                 /* [B * A]: gt_index into gt, score */
} yolo_det_criterion_result;

/* A criterion for the context (its nc, model strides and gains; ctx may be
 * NULL: defaults). Free with yolo_det_criterion_free. */
YOLO_DETECTION_API yolo_status yolo_det_criterion_create(const yolo_task_context *ctx, yolo_det_criterion **out);
YOLO_DETECTION_API void yolo_det_criterion_free(yolo_det_criterion *c);
/* The loss parameters in use (the task may change them after create). */
YOLO_DETECTION_API yolo_det_loss_params *yolo_det_criterion_params(yolo_det_criterion *c);

/* maps[0..n_levels-1]: [B, 4*16 + nc, H_l, W_l] (Detect's training outputs).
 * grads (NULL: no gradient) receive dloss/dmaps, overwritten. `who` names
 * the caller in error messages ("detect loss_compute"). */
YOLO_DETECTION_API yolo_status yolo_det_criterion_compute(yolo_det_criterion *c, const char *who, const yolo_batch *batch,
                                       int n_levels, const yolo_host_tensor *maps, yolo_host_tensor *grads,
                                       yolo_det_criterion_result *out);

/* One branch of the last compute on its own (an end2end model's
 * one-to-many, then one-to-one; branch 0 alone otherwise), for a task that
 * adds a per-anchor term to each branch (Segment26's masks): its gathered
 * maps [B, C, A], assignment, unweighted value and weight in the total
 * (E2ELoss's o2m and o2o; 1 alone). Owned by the criterion until the next
 * compute. */
typedef struct yolo_det_criterion_branch {
    const float *head;
    yolo_det_assignment asg;
    yolo_det_loss_value value;
    double weight;
} yolo_det_criterion_branch;
/* The branches of the last compute (2 for an end2end model, else 1; 0
 * before any) and branch b of them. */
YOLO_DETECTION_API int yolo_det_criterion_branches(const yolo_det_criterion *c);
YOLO_DETECTION_API yolo_status yolo_det_criterion_branch_of(const yolo_det_criterion *c, int b,
                                                            yolo_det_criterion_branch *out);

/* ================================================================== */
/* Non-maximum suppression                                             */

typedef struct yolo_nms_params {
    float conf;             /* candidates need a class score > conf (val 0.001, predict 0.25) */
    float iou;              /* suppress IoU > iou (0.7) */
    int max_det;            /* 300 */
    int max_nms;            /* 30000: boxes into NMS, highest scores first */
    float max_wh;           /* 7680: class offset that keeps classes apart */
    bool multi_label;       /* every class above conf is a candidate (val; only if nc > 1) */
    bool agnostic;          /* one NMS over all classes */
    /* (in what was padding: the layout is unchanged) the model runs YOLO26's
     * one-to-one head: yolo_det_eval_init sets it, and the task kit
     * (yolo_det_task_eval_nms) selects with yolo_e2e_select instead of NMS */
    bool end2end;
    const int32_t *classes; /* keep only these classes (NULL: all), filtered before NMS */
    int n_classes;
} yolo_nms_params;

YOLO_DETECTION_API yolo_nms_params yolo_nms_default_params(void);

typedef struct yolo_detection {
    float box[4]; /* xyxy, input pixels */
    float score;
    int32_t cls;
    int32_t anchor; /* the anchor it came from: per-anchor extras (mask coefficients, keypoints) follow it */
} yolo_detection;

/* torchvision.ops.nms: greedy by score (stable for ties), suppressing
 * IoU > iou_thres. keep receives up to max_keep indices, best first. */
YOLO_DETECTION_API yolo_status yolo_nms_boxes(const float *boxes, const float *scores, int n, float iou_thres, int max_keep,
                           int *keep, int *n_keep);

/* YOLO26's selection instead of NMS, for one image of an end2end head's
 * output (yolo_model_end2end; the layout yolo_nms_detect reads):
 * Ultralytics' Detect.postprocess then non_max_suppression's end2end
 * branch. k = min(max_det, anchors); the k anchors of highest best-class
 * score, then the k highest of their k x nc (anchor, class) scores
 * (agnostic: each anchor's best class), best first; those with a score >
 * conf (and a wanted class) are kept. iou, max_nms, max_wh and multi_label
 * play no part. Ties go to the lower anchor (and class). */
YOLO_DETECTION_API yolo_status yolo_e2e_select(const float *pred, int nc, int n_anchors, const yolo_nms_params *p,
                                               yolo_detection *out, int *n_out);

/* non_max_suppression for one image: pred [4 + nc + extra, n_anchors] (xywh
 * boxes and scores, Detect's inference layout; extra channels ignored).
 * out holds at least p->max_det detections, sorted by score. */
YOLO_DETECTION_API yolo_status yolo_nms_detect(const float *pred, int nc, int n_anchors, const yolo_nms_params *p, yolo_detection *out,
                            int *n_out);

/* ================================================================== */
/* Average precision — for any IoU matrix (boxes, masks, keypoint OKS)  */

#define YOLO_AP_N_IOU 10

/* 0.50:0.05:0.95 as float, as torch.linspace(0.5, 0.95, 10). */
YOLO_DETECTION_API void yolo_ap_iou_thresholds(float thr[YOLO_AP_N_IOU]);

/* match_predictions: iou [n_gt, n_pred]; a pair qualifies with the same
 * class and IoU >= threshold; each prediction keeps its highest-IoU gt, then
 * each gt its lowest-index prediction. correct [n_pred, n_thr] gets 0/1. */
YOLO_DETECTION_API yolo_status yolo_ap_match_predictions(int n_pred, const int32_t *pred_cls, int n_gt, const int32_t *gt_cls,
                                      const float *iou, int n_thr, const float *thr, uint8_t *correct);

/* Per-prediction and per-target statistics over a whole val set, growable
 * and mergeable (across ranks: yolo_ap_stats_pack / _unpack_merge). */
typedef struct yolo_ap_stats {
    int n_iou;
    size_t n_pred, cap_pred;
    uint8_t *tp; /* [n_pred, n_iou] */
    float *conf;
    int32_t *pred_cls;
    size_t n_target, cap_target;
    int32_t *target_cls;
    size_t n_target_img, cap_target_img;
    int32_t *target_img; /* each image's distinct gt classes, concatenated */
    int64_t n_images;
} yolo_ap_stats;

YOLO_DETECTION_API void yolo_ap_stats_init(yolo_ap_stats *s, int n_iou);
YOLO_DETECTION_API void yolo_ap_stats_free(yolo_ap_stats *s);
YOLO_DETECTION_API void yolo_ap_stats_reset(yolo_ap_stats *s);
/* Appends one image: its predictions (tp [n_pred, n_iou]) and its gts. */
YOLO_DETECTION_API yolo_status yolo_ap_stats_add_image(yolo_ap_stats *s, int n_pred, const uint8_t *tp, const float *conf,
                                    const int32_t *pred_cls, int n_gt, const int32_t *gt_cls);
/* Appends all of src to dst (same n_iou). */
YOLO_DETECTION_API yolo_status yolo_ap_stats_merge(yolo_ap_stats *dst, const yolo_ap_stats *src);
/* The stats as bytes (malloc'd into *bytes; the caller frees), for the
 * metrics_pack hook. Packs may be concatenated. */
YOLO_DETECTION_API yolo_status yolo_ap_stats_pack(const yolo_ap_stats *s, void **bytes, size_t *size);
/* Appends the stats packed at the start of bytes[0..size) to dst. *used
 * receives the bytes read; with used NULL the pack must fill size exactly.
 * A malformed or truncated pack is YOLO_ERR_FORMAT. */
YOLO_DETECTION_API yolo_status yolo_ap_stats_unpack_merge(yolo_ap_stats *dst, const void *bytes, size_t size, size_t *used);

typedef struct yolo_ap_summary {
    int nc;
    int n_iou;
    int64_t n_images;
    int64_t n_instances;
    /* Means over the classes that have gts (Ultralytics' mp, mr, map50, map75, map). */
    double mp, mr, map50, map75, map;
    /* Per class [nc] (classes without gts: 0): */
    double *ap;             /* [nc, n_iou] */
    double *p, *r, *f1;     /* at the max mean-F1 confidence */
    int64_t *n_targets;     /* instances per class */
    int64_t *n_target_img;  /* images containing the class */
    double best_conf;       /* the confidence at which p, r, f1 are taken */
    /* The curves behind them (plugin ABI 1.1), for the classes with gts in
     * class order (curve_cls[n_curves]), over px [YOLO_AP_CURVE_POINTS]
     * (0..1): curves[(i * 4 + k) * YOLO_AP_CURVE_POINTS ...] is class i's
     * precision (k 0), recall (1) and F1 (2) over confidence, and its
     * precision over recall at IoU 0.5 (3). Empty when no prediction is a
     * true positive. */
    int n_curves;
    int32_t *curve_cls;
    double *px;
    double *curves;
} yolo_ap_summary;

#define YOLO_AP_CURVE_POINTS 1000

/* ap_per_class over the accumulated stats for classes 0..nc-1: AP by
 * compute_ap's 101-point interpolation and trapezoid rule, whose sentinels
 * cap a perfect class at 0.995 exactly as in Ultralytics. If no
 * prediction is a true positive at any threshold, the metrics are all 0
 * (Ultralytics skips process() then). Free with yolo_ap_summary_free. */
YOLO_DETECTION_API yolo_status yolo_ap_summarize(const yolo_ap_stats *s, int nc, yolo_ap_summary *out);
YOLO_DETECTION_API void yolo_ap_summary_free(yolo_ap_summary *out);

/* Matches one image's detections to its gts by box IoU (all 10
 * thresholds) and appends the result to s. Boxes in the same space. */
YOLO_DETECTION_API yolo_status yolo_det_metrics_add_image(yolo_ap_stats *s, const yolo_detection *dets, int n_det, int n_gt,
                                       const int32_t *gt_cls, const float *gt_boxes);

/* 0.1 * mAP50 + 0.9 * mAP50-95 (Ultralytics' fitness of one kind). */
YOLO_DETECTION_API double yolo_det_fitness(const yolo_ap_summary *sum);

/* ---- validation pictures ---- */

/* Ultralytics' ConfusionMatrix.process_batch (detect) for one image:
 * detections with score > conf (0.25) are matched to gts at IoU > iou_thres
 * (0.45), each gt and each detection at most once, highest IoU first; a
 * matched pair counts (pred class, gt class), an unmatched gt (background,
 * gt class), an unmatched detection (pred class, background). m has a
 * background row (yolo_confusion_init(m, nc, 1)). Boxes in the same space. */
YOLO_DETECTION_API yolo_status yolo_det_confusion_add_image(yolo_confusion *m, const yolo_detection *dets, int n_det, int n_gt,
                                         const int32_t *gt_cls, const float *gt_boxes, float conf, float iou_thres);
#define YOLO_CONFUSION_CONF 0.25f
#define YOLO_CONFUSION_IOU 0.45f

/* dir/<prefix>P_curve.png, R_curve, F1_curve (over confidence; the mean
 * smoothed as Ultralytics' smooth(0.05), its best value in the legend) and
 * PR_curve (the mAP50 in the legend) from a summary's curves; prefix
 * "Box", "Mask", ... Nothing is written when the summary has no curves. */
YOLO_DETECTION_API yolo_status yolo_det_plot_curves(const yolo_ap_summary *sum, const char *prefix, const char *const *names, int nc,
                                 const char *dir);

/* ================================================================== */
/* Evaluation settings (validation and predict)                        */

typedef struct yolo_det_eval {
    bool predict;     /* mode=predict */
    bool per_class;   /* print per-class rows: verbose and not a training run's validation */
    bool single_cls;  /* every class is 0 */
    bool save_conf;   /* predict txt rows end with the confidence */
    yolo_nms_params nms; /* val: conf 0.001, multi-label; predict: conf 0.25, agnostic_nms, classes */
    int nc;           /* the context's classes (0: unknown) */
    char **names;     /* copies of the context's names [nc], or NULL */
    int32_t *classes; /* the classes filter (nms.classes points here) */
} yolo_det_eval;

/* The core keys the detection toolkit reads (yolo_det_eval_init and
 * the criterion's box, cls and dfl, and the class weights of cls_pw), for a
 * box task's task_keys_read (yolo/plugin.h). */
#define YOLO_DETECTION_KEYS_READ                                                                                 \
    "verbose", "single_cls", "conf", "iou", "max_det", "agnostic_nms", "classes", "save_conf", "box", "cls", "dfl", \
        "cls_pw"

/* Reads mode, conf, iou, max_det, verbose, single_cls, agnostic_nms,
 * classes and save_conf from ctx->cfg (a missing key keeps Ultralytics'
 * default) and copies nc and names. `who` prefixes error messages. */
YOLO_DETECTION_API yolo_status yolo_det_eval_init(yolo_det_eval *e, const yolo_task_context *ctx, const char *who);
YOLO_DETECTION_API void yolo_det_eval_free(yolo_det_eval *e);
/* Class c's name, or its number written into buf. */
YOLO_DETECTION_API const char *yolo_det_eval_class_name(const yolo_det_eval *e, int c, char *buf, size_t size);
/* The number of classes to summarize: the context's, else the largest
 * class in the stats + 1. */
YOLO_DETECTION_API int yolo_det_eval_nc(const yolo_det_eval *e, const yolo_ap_stats *s);

/* The eval output t = [B, 4 + nc + n_extra, A] of a batch of batch->n:
 * checks it and gives nc and A. */
YOLO_DETECTION_API yolo_status yolo_det_check_eval_output(const char *who, const yolo_batch *batch, const yolo_host_tensor *t,
                                       int n_extra, int *nc, int *n_anchors);

/* The validator table (DetectionValidator / SegmentationValidator print):
 * "Class Images Instances" then, per kind k, "<kinds[k]>(P R mAP50
 * mAP50-95)"; the "all" row; one row per class with gts when e->per_class,
 * nc > 1 and stats[0] has a true positive. sums[k] are the kinds' summaries
 * of the same val set. */
YOLO_DETECTION_API void yolo_det_print_table(FILE *f, const yolo_det_eval *e, const yolo_ap_stats *stats, int n_kinds,
                          const char *const *kinds, const yolo_ap_summary *sums);

/* Metrics of several kinds over one val set (Box, Mask, Pose, ...), kinds[0]
 * being the boxes — what a task that extends detect reports.
 * pack: the kinds' stats one after another (malloc'd bytes, the caller
 * frees); merge: the same layout from another rank, into kinds.
 * summarize: values[4k..4k+3] = P, R, mAP50, mAP50-95 of kind k (values may
 * be NULL), fitness = the sum of the kinds' detect fitness, and the
 * validator table with the kinds' names when table is non-NULL. `who`
 * names the task in errors. */
YOLO_DETECTION_API yolo_status yolo_ap_kinds_pack(const char *who, yolo_ap_stats *const *kinds, int n, void **bytes, size_t *size);
YOLO_DETECTION_API yolo_status yolo_ap_kinds_merge(const char *who, yolo_ap_stats *const *kinds, int n, const void *bytes, size_t size);
YOLO_DETECTION_API yolo_status yolo_ap_kinds_summarize(const char *who, const yolo_det_eval *e, yolo_ap_stats *const *kinds,
                                    const char *const *names, int n, double *values, double *fitness, FILE *table);

/* One detection as the members of predict's JSON object, without the braces:
 * "class": c, "name": "...", "confidence": x, "box": [x1, y1, x2, y2]
 * (numbers rounded to 5 decimals as Python's round). A task appends its own
 * members ("segments", "keypoints") before closing the object. */
YOLO_DETECTION_API void yolo_det_write_json(FILE *f, const yolo_det_eval *e, const yolo_detection *d);
/* Draws one detection (box in drawing coordinates) as predict shows it:
 * the box with Ultralytics' "name conf" label per opt (show_boxes,
 * show_labels, show_conf); appends it to objects[*n] when objects is
 * non-NULL. */
YOLO_DETECTION_API void yolo_det_draw_detection(yolo_canvas *c, const yolo_det_eval *e, const yolo_detection *d,
                                                const yolo_draw_options *opt, yolo_drawn_object *objects, int *n);
/* A JSON string literal (quotes and escapes) of text. */
YOLO_DETECTION_API void yolo_write_json_string(FILE *f, const char *text);

/* ================================================================== */
/* A task that extends Detect: its validator and predictor kit          */
/*
 * What segment, pose and the like share around their own IoU and their own
 * text: the eval output read as boxes, scores and n_extra per-anchor
 * channels, per-image NMS, the batch's instances per image, the Box and
 * task-kind statistics, and predict's txt/JSON text. The task's metrics
 * state starts with a yolo_det_task_eval (its first member), so the kit's
 * pack/merge/summarize are its hooks as they are; its metrics_update reads
 * its eval view (a struct starting with a yolo_det_eval_view) and calls
 * yolo_det_task_eval_update with its IoU function.
 */

/* Grows *buf (realloc, contents kept) to hold need elements of elem bytes;
 * *cap counts elements. `who` names the caller in the error. */
YOLO_DETECTION_API yolo_status yolo_det_grow(const char *who, void **buf, size_t *cap, size_t need, size_t elem);

/* Python's round(x, 5): coordinates as Ultralytics writes them in JSON. */
YOLO_DETECTION_API double yolo_round5(double x);
/* `"key": [v[0], v[stride], ...]` (n values, each yolo_round5'ed). */
YOLO_DETECTION_API void yolo_write_json_numbers(FILE *f, const char *key, const float *v, int n, int stride);

/* first[0..batch->n]: image b's instances are first[b] .. first[b + 1] - 1
 * (batch->batch_idx sorted by image; an instance of no image of the batch,
 * or an unsorted one, is YOLO_ERR_ARG naming `who`). */
YOLO_DETECTION_API yolo_status yolo_det_image_ranges(const char *who, const yolo_batch *batch, int32_t *first);

/* A task's per-image loss work in parallel, as the detection loss's own:
 * fn(arg, b) for b in [0, batch) on up to YOLO_LOSS_THREADS (default: the
 * online cores) threads. Each call must touch only image b's slots (its
 * gradient rows, its partial sums), which the caller adds in image order:
 * results then do not depend on the thread count. On failure: the status
 * and message of the lowest failing image. */
typedef yolo_status (*yolo_det_image_fn)(void *arg, int b);
YOLO_DETECTION_API yolo_status yolo_det_for_each_image(int batch, yolo_det_image_fn fn, void *arg);

/* The eval output t[0] = [B, 4 + nc + n_extra, A]. */
typedef struct yolo_det_eval_view {
    const float *pred;
    int nc, n_extra, n_anchors;
} yolo_det_eval_view;

/* Checks t (yolo_det_check_eval_output) and fills v. */
YOLO_DETECTION_API yolo_status yolo_det_eval_view_init(const char *who, const yolo_batch *batch,
                                                       const yolo_host_tensor *t, int n_extra, yolo_det_eval_view *v);
/* Extra channel 0 of detection d in image i; channel j is at [j * v->n_anchors]. */
YOLO_DETECTION_API const float *yolo_det_eval_view_extra(const yolo_det_eval_view *v, int image,
                                                         const yolo_detection *d);

/* Predict's text: txt and JSON memory streams into *txt_buf and *json_buf
 * (their previous text freed), the JSON opened with {"detections": [. */
YOLO_DETECTION_API yolo_status yolo_prediction_text_open(const char *who, char **txt_buf, char **json_buf, FILE **txt,
                                                         FILE **json);
/* Closes the JSON (]}), both streams, and on success (st == YOLO_OK) points
 * out at the text; returns st, or YOLO_ERR_NOMEM when a stream failed. */
YOLO_DETECTION_API yolo_status yolo_prediction_text_close(const char *who, yolo_status st, char **txt_buf,
                                                          char **json_buf, FILE *txt, FILE *json,
                                                          yolo_prediction_text *out);

/* The metrics (and predict) state of a task with two kinds: Box and its own. */
typedef struct yolo_det_task_eval {
    const char *task; /* "segment": names the task in errors */
    const char *kind; /* "Mask": its kind in the validator table */
    yolo_det_eval eval;
    yolo_ap_stats box, own;
    yolo_detection *dets;      /* [max_det]: the current image's detections, batch pixels */
    float *conf;               /* [max_det] */
    int32_t *pred_cls;         /* [max_det] */
    uint8_t *correct;          /* [max_det, YOLO_AP_N_IOU] */
    float *gt_boxes;           /* the batch's instances, xyxy batch pixels */
    int32_t *gt_cls, *image_first;
    float *iou;                /* [n_gt, n_det] of the current image: the task's IoU */
    size_t gt_cap, gtc_cap, first_cap, iou_cap;
    char *txt, *json;          /* predict's text */
    yolo_confusion cm;         /* of the boxes at conf 0.25, IoU 0.45 (this rank's share under DDP) */
    yolo_drawn_object *drawn;  /* [max_det]: a draw_predictions hook's report */
} yolo_det_task_eval;

/* One image of the batch, as the task's IoU function sees it. */
typedef struct yolo_det_task_image {
    int image, first, n_gt, n_det; /* instances first .. first + n_gt - 1; detections s->dets[0 .. n_det - 1] */
    float *gt_boxes;               /* [n_gt, 4] batch pixels */
    int32_t *gt_cls;               /* [n_gt] (0 with single_cls) */
} yolo_det_task_image;

/* The task's IoU of one image (called when it has gts and detections):
 * writes s->iou[g * img->n_det + d] for each gt g and detection d. state is
 * the task's metrics state (the kit first); view is the one given to
 * yolo_det_task_eval_update (the task's view, which starts with it). */
typedef yolo_status (*yolo_det_task_iou_fn)(void *state, const yolo_det_eval_view *view, const yolo_batch *batch,
                                            const yolo_det_task_image *img);

/* Settings from ctx (yolo_det_eval_init) and buffers for max_det
 * detections. task and kind are borrowed (string literals). */
YOLO_DETECTION_API yolo_status yolo_det_task_eval_init(yolo_det_task_eval *s, const yolo_task_context *ctx,
                                                       const char *task, const char *kind);
YOLO_DETECTION_API void yolo_det_task_eval_free(yolo_det_task_eval *s);
/* NMS (yolo_e2e_select where eval.nms.end2end) of image i of v into
 * s->dets (classes 0 with single_cls). */
YOLO_DETECTION_API yolo_status yolo_det_task_eval_nms(yolo_det_task_eval *s, const yolo_det_eval_view *v, int image,
                                                      int *n_det);
/* metrics_update of the batch: for each image NMS, the task's IoU against
 * its instances, matching into the task's kind, and the boxes (in the
 * original image) into Box. state: the task's metrics state, kit first. */
YOLO_DETECTION_API yolo_status yolo_det_task_eval_update(void *state, const yolo_batch *batch,
                                                         const yolo_det_eval_view *view, yolo_det_task_iou_fn iou);
/* predict's start: checks image, runs its NMS (*n_det detections in
 * s->dets, batch pixels) and opens the text (yolo_prediction_text_open). */
YOLO_DETECTION_API yolo_status yolo_det_task_eval_predict_begin(yolo_det_task_eval *s, const char *who,
                                                                const yolo_batch *batch, int image,
                                                                const yolo_det_eval_view *view, int *n_det,
                                                                FILE **txt, FILE **json);
/* The hooks metrics_pack, metrics_merge and metrics_summarize themselves
 * (state: the task's metrics state, kit first; values: Box P R mAP50
 * mAP50-95 then the kind's; fitness: their sum). */
YOLO_DETECTION_API yolo_status yolo_det_task_eval_pack(void *state, void **bytes, size_t *size);
YOLO_DETECTION_API yolo_status yolo_det_task_eval_merge(void *state, const void *bytes, size_t size);
YOLO_DETECTION_API yolo_status yolo_det_task_eval_summarize(void *state, double *values, double *fitness,
                                                            FILE *table);
/* The metrics_plot hook itself: the confusion matrix of the boxes (printed
 * to table, plotted into dir) and the Box and kind curves into dir. */
YOLO_DETECTION_API yolo_status yolo_det_task_eval_plot(void *state, const char *dir, FILE *table);

/* ================================================================== */
/* The YOLOv8 Detect head (graph side)                                 */
/*
 * Detect's forward outputs:
 *   training: t[0..nl-1] = per level cat(box, cls) maps [N, 4*reg_max + nc, H_i, W_i];
 *             with end2end (YOLO26) t[nl..2nl-1] the one-to-one branch's maps,
 *             computed from detached features (its loss trains only itself)
 *   eval:     t[0] = [N, 4 + nc, A] decoded boxes (xywh in pixels) and class
 *             probabilities, of the one-to-one branch when the model runs
 *             end2end (yolo_model_end2end); then the raw maps as in training.
 * reg_max (the yaml's, yolo_module_reg_max) is 16 (DFL) or, YOLO26's, 1: the
 * four box channels are the distances themselves.
 * A head that extends Detect keeps a yolo_det_head in its module state and
 * appends its own outputs after these. */

#define YOLO_DET_MAX_LEVELS 6
#define YOLO_DET_REG_MAX 16

typedef struct yolo_det_anchor_cache {
    int64_t hw[YOLO_DET_MAX_LEVELS][2];
    yolo_backend *backend;
    float offset;         /* added to each cell's x and y */
    yolo_tensor *anchors; /* [2, A]: x then y of each anchor (cell + offset), in grid units */
    yolo_tensor *strides; /* [1, A] */
} yolo_det_anchor_cache;

/* One level of a Detect-style branch (Detect's cv2 and cv3, Segment's and
 * Pose's cv4): Conv(c_in, c, 3), Conv(c, c, 3), nn.Conv2d(c, c_out, 1); or,
 * with depthwise (the class branch of current heads, Ultralytics'
 * legacy=False, YOLO11): DWConv(c_in, c_in, 3) + Conv(c_in, c, 1), then
 * DWConv(c, c, 3) + Conv(c, c, 1), then the nn.Conv2d. */
typedef struct yolo_det_branch {
    yolo_conv_block conv[2];
    yolo_conv_layer pred;
    bool depthwise;
    yolo_conv_block dw[2]; /* depthwise only: before conv[0] and conv[1] */
} yolo_det_branch;

typedef struct yolo_det_head {
    int nc, nl, reg_max, no; /* no = nc + 4*reg_max outputs per anchor */
    int c2, c3;              /* box and class branch widths */
    int ch[YOLO_DET_MAX_LEVELS];
    int stride[YOLO_DET_MAX_LEVELS];
    yolo_det_branch box[YOLO_DET_MAX_LEVELS]; /* cv2 */
    yolo_det_branch cls[YOLO_DET_MAX_LEVELS]; /* cv3 */
    yolo_conv_layer dfl; /* fixed 1x1 conv 16 -> 1 with weights 0..15, no gradient (reg_max > 1) */
    yolo_det_anchor_cache *cache;
    int n_cache;
} yolo_det_head;

/* Ultralytics 8.4's end2end branch (YOLO26): one2one_cv2 and one2one_cv3,
 * copies of the head's box and class branches (its own type, so that
 * yolo_det_head keeps its layout for the plugins that embed it). */
typedef struct yolo_det_one2one {
    yolo_det_branch box[YOLO_DET_MAX_LEVELS];
    yolo_det_branch cls[YOLO_DET_MAX_LEVELS];
} yolo_det_one2one;

/* The `from` inputs of the layer: their number (1..YOLO_DET_MAX_LEVELS, an
 * error naming the yaml line otherwise) and channels. */
YOLO_DETECTION_API yolo_status yolo_det_read_channels(yolo_module_ctx *ctx, int *nl, int *ch);
/* "64, 128, 256": the channel list for yolo_module_set_args_text. */
YOLO_DETECTION_API void yolo_det_channels_text(int nl, const int *ch, char *buf, size_t size);
/* The branch of each of the nl levels (ch[i] input channels, width c,
 * c_out outputs), its parameters named "<name>.<i>.0" .. "<name>.<i>.2"
 * as in Ultralytics' state dict, created level by level. */
YOLO_DETECTION_API yolo_status yolo_det_branches_init(yolo_module_ctx *ctx, yolo_det_branch *b, const char *name,
                                                      int nl, const int *ch, int c, int c_out);
/* The same in the depthwise form, named "<name>.<i>.0.0" (DWConv), ".0.1",
 * ".1.0", ".1.1", ".2" as Ultralytics' current Detect.cv3. */
YOLO_DETECTION_API yolo_status yolo_det_dw_branches_init(yolo_module_ctx *ctx, yolo_det_branch *b, const char *name,
                                                         int nl, const int *ch, int c, int c_out);
/* One level's branch on x; NULL (the graph's status set) on error. */
YOLO_DETECTION_API yolo_tensor *yolo_det_branch_forward(const yolo_forward_ctx *f, const yolo_det_branch *b,
                                                        yolo_tensor *x);
/* Creates the branches (cv2 = box, cv3 = class, Ultralytics' state-dict
 * names under the module prefix) and the DFL conv for nl inputs of ch[i]
 * channels; the class branch is depthwise unless yolo_module_legacy_heads
 * (a YOLO11 model's heads). h lives in the module state. */
YOLO_DETECTION_API yolo_status yolo_det_head_init(yolo_module_ctx *ctx, yolo_det_head *h, int nc, int nl, const int *ch);
/* From the module's finalize: the strides from the probe, then Ultralytics'
 * bias_init (box 1.0 under DFL, where a constant over the bins cancels, and
 * 8.4's 2.0 at reg_max 1; class log(5 / nc / (640 / stride)^2)). */
YOLO_DETECTION_API yolo_status yolo_det_head_finalize(yolo_module_ctx *ctx, yolo_det_head *h);
/* The end2end branch of a head built by yolo_det_head_init (call right
 * after it: its parameters follow the head's in the state dict), and its
 * bias_init after yolo_det_head_finalize. */
YOLO_DETECTION_API yolo_status yolo_det_one2one_init(yolo_module_ctx *ctx, const yolo_det_head *h, yolo_det_one2one *o);
YOLO_DETECTION_API yolo_status yolo_det_one2one_finalize(const yolo_det_head *h, yolo_det_one2one *o);
/* The raw per-level maps into raw[0..nl-1]. */
YOLO_DETECTION_API yolo_status yolo_det_head_raw(const yolo_forward_ctx *f, yolo_det_head *h, int n_in, yolo_tensor *const *in,
                              yolo_tensor **raw);
/* The end2end branch's raw maps, from detached inputs when training (its
 * loss trains only itself), as Ultralytics' Detect. */
YOLO_DETECTION_API yolo_status yolo_det_one2one_raw(const yolo_forward_ctx *f, const yolo_det_head *h,
                                                    const yolo_det_one2one *o, int n_in, yolo_tensor *const *in,
                                                    yolo_tensor **raw);
/* The eval decode of the raw maps: [N, 4 + nc, A]; NULL on error (set). */
YOLO_DETECTION_API yolo_tensor *yolo_det_head_decode(const yolo_forward_ctx *f, yolo_det_head *h, yolo_tensor *const *raw);
/* The anchor tensors for the level sizes of raw on the graph's backend,
 * built once per sizes, backend and offset and cached in h: offset 0.5 gives
 * Detect's anchor centres, 0 Pose's cells (Ultralytics' anchors - 0.5).
 * NULL (the error set) when they cannot be created. */
YOLO_DETECTION_API yolo_det_anchor_cache *yolo_det_head_anchors(yolo_det_head *h, yolo_graph *g,
                                                                yolo_tensor *const *raw, float offset);
/* Reshapes each [N, C, H, W] to [N, C, H*W] and concatenates along the last
 * axis: [N, C, A] in anchor order (e.g. per-anchor mask coefficients). */
YOLO_DETECTION_API yolo_tensor *yolo_det_flatten_levels(yolo_graph *g, int nl, yolo_tensor *const *maps);
/* From the module's destroy: frees the cached anchor tensors. */
YOLO_DETECTION_API void yolo_det_head_release(yolo_det_head *h);

#ifdef __cplusplus
}
#endif
#endif
