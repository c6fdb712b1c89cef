/* pose_loss.h — the keypoint terms of Ultralytics' v8PoseLoss, on the host,
 * for a fixed assignment (the Detect part's: yolo_det_criterion_result.asg).
 * Used by the loss hook (pose_task.c); checked by pose_check. */
#ifndef POSE_LOSS_H
#define POSE_LOSS_H

#include <stdint.h>

#include <yolo/error.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

typedef struct pose_kpt_loss_value {
    double kpt;  /* pose_gain * KeypointLoss (OKS-shaped), mean over fg anchors x keypoints */
    double kobj; /* kobj_gain * BCEWithLogits(visibility logit, gt visible), same mean (0 when D = 2) */
    int n_fg;    /* foreground anchors */
} pose_kpt_loss_value;

/* Ultralytics' sigmas: COCO's OKS_SIGMA for K = 17, else 1/K each. */
void pose_kpt_sigmas(int K, float *sigmas);

/* raw        [B, K*D, A] the head's training keypoint output
 * gt_index   [B*A] instance of each anchor (-1 background), as the assigner's
 * gt_boxes   [n, 4] xyxy batch-image pixels (yolo_det_gt_from_batch)
 * gt_kpts    [n, K*D] normalized (x, y[, visibility]) as in yolo_instances
 * width, height  the batch image size; anchor_xy [A, 2] cell centres (grid
 * units, offset 0.5) and anchor_stride [A] as yolo_det_make_anchors gives.
 * Keypoints are compared in grid units (pixels / stride), the area is the
 * box's in grid units, as Ultralytics does. grad (NULL: none) [B, K*D, A]
 * is written (not accumulated) with d(B * (kpt + kobj)) / d raw — the batch
 * factor of Ultralytics' loss.sum() * batch_size. */
yolo_status pose_kpt_loss(int B, int A, int K, int D, const float *raw, const int32_t *gt_index,
                          const float *gt_boxes, const float *gt_kpts, float width, float height,
                          const float *anchor_xy, const float *anchor_stride, const float *sigmas, double pose_gain,
                          double kobj_gain, pose_kpt_loss_value *out, float *grad);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
