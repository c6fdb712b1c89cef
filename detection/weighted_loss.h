/* The detection loss with Ultralytics' cls_pw class weights (detect_loss.c),
 * inside the detection library: the criterion runs it with the task
 * context's weights (yolo_task_context.class_weights). */
#ifndef YOLO_DET_WEIGHTED_LOSS_H
#define YOLO_DET_WEIGHTED_LOSS_H

#include "yolo/detection.h"

/* yolo_det_loss_assigned with class c's BCE terms (loss and gradient)
 * multiplied by class_weights[c], as Ultralytics' v8DetectionLoss does
 * (bce_loss *= class_weights, then sum / target-score sum); NULL: all 1,
 * the same bits as yolo_det_loss_assigned. */
yolo_status yolo_det_loss_assigned_weighted(const yolo_det_loss_params *p, const float *class_weights, int batch,
                                            int n_anchors, const float *head, const float *anchor_xy,
                                            const float *anchor_stride, const yolo_det_gt_batch *gt,
                                            const yolo_det_assignment *asg, yolo_det_loss_value *out, float *grad);

#endif
