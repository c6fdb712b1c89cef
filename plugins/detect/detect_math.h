/* detect_math.h — the detect task's mathematics on host float arrays,
 * matching Ultralytics v8 (make_anchors, dist2bbox/bbox2dist, bbox_iou CIoU,
 * TaskAlignedAssigner, v8DetectionLoss with DFLoss, non_max_suppression,
 * match_predictions, ap_per_class/compute_ap, DetMetrics).
 *
 * Plain C on caller-owned arrays: no tensors, no trainer concepts, so the
 * trainer can download the head outputs, call the loss and upload the
 * gradient, and other tasks can reuse the pieces. Internal to the plugin
 * sources (sdk headers and the C library only).
 *
 * Shared with segment (to move to a common place when segment lands):
 * the box section (IoU, CIoU and its gradient), the anchor/DFL decode, the
 * assigner, NMS (it returns anchor indices so mask coefficients can follow
 * their boxes) and the whole AP section (match_predictions works on any IoU
 * matrix: box or mask). Segment's box terms are detect_loss_assigned as is.
 *
 * Layouts (A = sum over levels of H*W anchors, level by level, each level
 * row-major over (y, x) like Ultralytics' make_anchors):
 *   head   [B, C, A], C = 4*reg_max + nc: channels 0..4*reg_max-1 are the box
 *          distribution logits, side-major (l, t, r, b; reg_max bins each),
 *          then nc class logits. The same layout as Ultralytics'
 *          cat([xi.view(B, no, -1)], 2) of the per-level outputs.
 *   grad   same layout as head.
 *   boxes  xyxy unless a name says otherwise; [n, 4] rows. */
#ifndef YOLO_DETECT_MATH_H
#define YOLO_DETECT_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yolo/error.h>

/* Internal to the plugin: keep these out of the .so's exported symbols. */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ------------------------------------------------------------------ */
/* Boxes (box_ops.c)                                                   */

void box_xywh_to_xyxy(const float *xywh, float *xyxy, size_t n);
void box_xyxy_to_xywh(const float *xyxy, float *xywh, size_t n);

/* Ultralytics' metrics box_iou: inter / (area1 + area2 - inter + 1e-7), in
 * float. out[i * nb + j] = IoU(a[i], b[j]). */
void box_iou_matrix(const float *a, int na, const float *b, int nb, float *out);

/* bbox_iou(..., xywh=False, CIoU=True) with eps 1e-7 on the heights, the
 * union and c^2. Symmetric in its arguments. */
double box_ciou(const double b1[4], const double b2[4]);

/* The same CIoU, plus its gradient with respect to b1 (xyxy) as autograd
 * sees it: alpha is a constant (computed under no_grad), min/max ties split
 * the gradient in half and clamp(0) passes it at exactly 0, as in torch. */
double box_ciou_grad(const double b1[4], const double b2[4], double grad_b1[4]);

/* Undo a letterbox: (box - pad) / gain, then clip to [0, width] x [0, height]
 * (Ultralytics' scale_boxes with explicit gain and padding). */
void box_unletterbox(float *xyxy, size_t n, float gain, float pad_x, float pad_y, float width, float height);

/* ------------------------------------------------------------------ */
/* Anchors and the DFL decode (detect_decode.c)                        */

/* Total anchors of the levels: sum of h[i] * w[i]. */
int detect_anchor_count(int n_levels, const int *h, const int *w);

/* make_anchors(feats, strides, offset): xy [A, 2] cell centres in grid units
 * of their level ((x + offset, y + offset)), stride [A]. */
yolo_status detect_make_anchors(int n_levels, const int *h, const int *w, const float *strides, float offset,
                                float *xy, float *stride);

/* Softmax over one side's reg_max logits (read at logits[j * step]) and the
 * expected bin: returns sum_j j * p_j; p (reg_max doubles) may be NULL. */
double detect_dfl_expect(const float *logits, size_t step, int reg_max, double *p);

/* The four expected distances (l, t, r, b) of anchor a of one image's head
 * block [C, A]. p (4 * reg_max doubles) receives the softmaxes, or NULL. */
void detect_dfl_distances(const float *head_image, int n_anchors, int reg_max, int a, double dist[4],
                          double *p);

/* Ultralytics' inference output of Detect: out [B, 4 + nc, A] holds boxes as
 * xywh in input pixels (dist2bbox(xywh=True) * stride) and sigmoid scores. */
yolo_status detect_decode_predictions(const float *head, int batch, int nc, int reg_max, int n_anchors,
                                      const float *anchor_xy, const float *anchor_stride, float *out);

/* Per-level outputs [B, C, h_l, w_l] <-> the concatenated [B, C, A]. */
void detect_levels_gather(const float *const *levels, int n_levels, const int *h, const int *w, int batch,
                          int channels, float *out);
void detect_levels_scatter(const float *in, int n_levels, const int *h, const int *w, int batch, int channels,
                           float *const *levels);

/* ------------------------------------------------------------------ */
/* TaskAlignedAssigner (tal_assigner.c)                                */

typedef struct tal_params {
    int topk;    /* 10 */
    float alpha; /* 0.5: power of the class score */
    float beta;  /* 6.0: power of the CIoU */
    float eps;   /* 1e-9 */
} tal_params;

tal_params tal_default_params(void);

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
yolo_status tal_assign(const tal_params *p, int n_anchors, int nc, const float *cls_logits,
                       const float *pred_boxes, const float *anchor_px, int n_gt, const int32_t *gt_cls,
                       const float *gt_boxes, int32_t *target_gt, float *target_score, int *n_fg);

/* ------------------------------------------------------------------ */
/* v8DetectionLoss (detect_loss.c)                                     */

typedef struct detect_loss_params {
    int nc;
    int reg_max;    /* 16 */
    float box_gain; /* 7.5 */
    float cls_gain; /* 0.5 */
    float dfl_gain; /* 1.5 */
    tal_params tal;
} detect_loss_params;

detect_loss_params detect_loss_default_params(int nc);

/* The batch's instances as Ultralytics' batch dict: image index, class and
 * box (xyxy in input-image pixels) per instance. Within an image the order
 * is kept (it breaks assigner ties as Ultralytics' padded rows do). */
typedef struct detect_gt_batch {
    int n;
    const int32_t *batch_idx;
    const int32_t *cls;
    const float *boxes;
} detect_gt_batch;

/* The assigner's output for the batch, per anchor [B * A]: the instance
 * index into detect_gt_batch (-1 = background) and the soft target score. */
typedef struct detect_assignment {
    int32_t *gt_index;
    float *score;
} detect_assignment;

typedef struct detect_loss_value {
    double total;            /* batch * (box + cls + dfl): what grad is the gradient of */
    double box, cls, dfl;    /* the gained components, without the batch factor (logged) */
    double target_score_sum; /* the normaliser, max(sum of soft targets, 1) */
    int n_fg;                /* foreground anchors in the batch */
} detect_loss_value;

/* Runs the assigner on every image of the batch. */
yolo_status detect_assign(const detect_loss_params *p, int batch, int n_anchors, const float *head,
                          const float *anchor_xy, const float *anchor_stride, const detect_gt_batch *gt,
                          detect_assignment *out);

/* The loss for a fixed assignment and its exact gradient with respect to
 * every head output (grad may be NULL). The assignment is a constant, as in
 * Ultralytics, so this is the function a finite-difference check can probe. */
yolo_status detect_loss_assigned(const detect_loss_params *p, int batch, int n_anchors, const float *head,
                                 const float *anchor_xy, const float *anchor_stride,
                                 const detect_gt_batch *gt, const detect_assignment *asg,
                                 detect_loss_value *out, float *grad);

/* detect_assign then detect_loss_assigned (scratch allocated inside). */
yolo_status detect_loss(const detect_loss_params *p, int batch, int n_anchors, const float *head,
                        const float *anchor_xy, const float *anchor_stride, const detect_gt_batch *gt,
                        detect_loss_value *out, float *grad);

/* ------------------------------------------------------------------ */
/* Non-maximum suppression (nms.c)                                     */

typedef struct nms_params {
    float conf;             /* candidates need a class score > conf (val 0.001, predict 0.25) */
    float iou;              /* suppress IoU > iou (0.7) */
    int max_det;            /* 300 */
    int max_nms;            /* 30000: boxes into NMS, highest scores first */
    float max_wh;           /* 7680: class offset that keeps classes apart */
    bool multi_label;       /* every class above conf is a candidate (val; only if nc > 1) */
    bool agnostic;          /* one NMS over all classes */
    const int32_t *classes; /* keep only these classes (NULL: all), filtered before NMS */
    int n_classes;
} nms_params;

nms_params nms_default_params(void);

typedef struct detection {
    float box[4]; /* xyxy, input pixels */
    float score;
    int32_t cls;
    int32_t anchor; /* the anchor it came from (segment reads its mask coefficients) */
} detection;

/* torchvision.ops.nms: greedy by score (stable for ties), suppressing
 * IoU > iou_thres. keep receives up to max_keep indices, best first. */
yolo_status nms_boxes(const float *boxes, const float *scores, int n, float iou_thres, int max_keep,
                      int *keep, int *n_keep);

/* non_max_suppression for one image: pred [4 + nc + extra, n_anchors] (xywh
 * boxes and scores, Detect's inference layout; extra channels ignored).
 * out holds at least p->max_det detections, sorted by score. */
yolo_status nms_detect(const float *pred, int nc, int n_anchors, const nms_params *p, detection *out,
                       int *n_out);

/* ------------------------------------------------------------------ */
/* Average precision (ap_metrics.c) — shared by box and mask metrics    */

#define AP_N_IOU 10

/* 0.50:0.05:0.95 as float, as torch.linspace(0.5, 0.95, 10). */
void ap_iou_thresholds(float thr[AP_N_IOU]);

/* match_predictions: iou [n_gt, n_pred]; a pair qualifies with the same
 * class and IoU >= threshold; each prediction keeps its highest-IoU gt, then
 * each gt its lowest-index prediction. correct [n_pred, n_thr] gets 0/1. */
yolo_status ap_match_predictions(int n_pred, const int32_t *pred_cls, int n_gt, const int32_t *gt_cls,
                                 const float *iou, int n_thr, const float *thr, uint8_t *correct);

/* Per-prediction and per-target statistics over a whole val set, growable
 * and mergeable. Across ranks: gather each rank's arrays, wrap them in an
 * ap_stats view (capacities = counts) and ap_stats_merge it into rank 0's. */
typedef struct ap_stats {
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
} ap_stats;

void ap_stats_init(ap_stats *s, int n_iou);
void ap_stats_free(ap_stats *s);
void ap_stats_reset(ap_stats *s);
/* Appends one image: its predictions (tp [n_pred, n_iou]) and its gts. */
yolo_status ap_stats_add_image(ap_stats *s, int n_pred, const uint8_t *tp, const float *conf,
                               const int32_t *pred_cls, int n_gt, const int32_t *gt_cls);
/* Appends all of src to dst (same n_iou). */
yolo_status ap_stats_merge(ap_stats *dst, const ap_stats *src);

typedef struct ap_summary {
    int nc;
    int n_iou;
    int64_t n_images;
    int64_t n_instances;
    /* Means over the classes that have gts (Ultralytics' mp, mr, map50, map75, map). */
    double mp, mr, map50, map75, map;
    /* Per class [nc] (classes without gts: 0): */
    double *ap;            /* [nc, n_iou] */
    double *p, *r, *f1;    /* at the max mean-F1 confidence */
    int64_t *n_targets;    /* instances per class */
    int64_t *n_target_img; /* images containing the class */
    double best_conf;      /* the confidence at which p, r, f1 are taken */
} ap_summary;

/* ap_per_class over the accumulated stats for classes 0..nc-1: AP by
 * compute_ap's 101-point interpolation and trapezoid rule, whose sentinels
 * cap a perfect class at 0.995 exactly as in Ultralytics. If no
 * prediction is a true positive at any threshold, the metrics are all 0
 * (Ultralytics skips process() then). Free with ap_summary_free. */
yolo_status ap_summarize(const ap_stats *s, int nc, ap_summary *out);
void ap_summary_free(ap_summary *out);

/* ------------------------------------------------------------------ */
/* Detect metrics glue (detect_metrics.c)                              */

/* Matches one image's detections to its gts (box IoU, all 10 thresholds)
 * and appends the result to s. Boxes in the same space (original image). */
yolo_status detect_metrics_add_image(ap_stats *s, const detection *dets, int n_det, int n_gt,
                                     const int32_t *gt_cls, const float *gt_boxes);

/* 0.1 * mAP50 + 0.9 * mAP50-95. */
double detect_fitness(const ap_summary *sum);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
