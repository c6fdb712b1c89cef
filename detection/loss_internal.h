/* The detection loss and assigner with the options the public structs do
 * not carry (inside the detection library; the criterion uses them):
 * Ultralytics' cls_pw class weights, and Ultralytics 8.4's YOLO26 parts:
 * reg_max 1 (boxes as raw distances, an L1 term in DFL's place), the
 * assigner's topk2 (the one-to-one branch's single positive per object) and
 * STAL (small objects' candidate region widened). Public entry points run
 * them with NULL options: the same bits as before these existed. */
#ifndef YOLO_DET_LOSS_INTERNAL_H
#define YOLO_DET_LOSS_INTERNAL_H

#include "yolo/detection.h"

typedef struct det_assign_options {
    /* > 0: after the conflicts, each gt keeps only its topk2 best positives
     * by align metric (8.4's TaskAlignedAssigner topk2; one-to-one: topk 7, topk2 1) */
    int topk2;
    /* STAL (8.4's select_candidates_in_gts): a gt side shorter than stal_min
     * pixels (stride[0]) counts as stal_size (stride[1]) wide, about its
     * centre, for the anchor-inside test only; 0: off */
    float stal_min, stal_size;
} det_assign_options;

typedef struct det_loss_options {
    const float *class_weights; /* [nc]: class c's BCE terms times it (cls_pw); NULL: all 1 */
    /* the batch image's size: reg_max 1's L1 term compares distances as fractions of it */
    float image_w, image_h;
} det_loss_options;

/* yolo_tal_assign with options (NULL: none). */
yolo_status det_tal_assign(const yolo_tal_params *p, const det_assign_options *o, int n_anchors, int nc,
                           const float *cls_logits, const float *pred_boxes, const float *anchor_px, int n_gt,
                           const int32_t *gt_cls, const float *gt_boxes, int32_t *target_gt, float *target_score,
                           int *n_fg);

/* yolo_det_assign with options; reg_max 1 allowed (raw distances). */
yolo_status det_assign(const yolo_det_loss_params *p, const det_assign_options *o, int batch, int n_anchors,
                       const float *head, const float *anchor_xy, const float *anchor_stride,
                       const yolo_det_gt_batch *gt, yolo_det_assignment *out);

/* yolo_det_loss_assigned with options. reg_max 1 needs o's image size:
 * dfl = dfl_gain * sum over positives of mean over 4 sides of
 * |(pred - target distance) * stride / image side| * w / tss, target
 * distances unclamped (Ultralytics 8.4's BboxLoss without DFL). */
yolo_status det_loss_assigned(const yolo_det_loss_params *p, const det_loss_options *o, int batch, int n_anchors,
                              const float *head, const float *anchor_xy, const float *anchor_stride,
                              const yolo_det_gt_batch *gt, const yolo_det_assignment *asg, yolo_det_loss_value *out,
                              float *grad);

#endif
