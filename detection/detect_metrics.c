/* detect_metrics.c — the box-specific glue of DetectionValidator around the
 * shared AP machinery: box IoU matrix -> match_predictions -> accumulate;
 * and detect's fitness. */
#include <stdlib.h>

#include "yolo/detection.h"

yolo_status yolo_det_metrics_add_image(yolo_ap_stats *s, const yolo_detection *dets, int n_det, int n_gt,
                                     const int32_t *gt_cls, const float *gt_boxes) {
    if (!s || n_det < 0 || n_gt < 0 || (n_det > 0 && !dets) || (n_gt > 0 && (!gt_cls || !gt_boxes)))
        return yolo_error(YOLO_ERR_ARG, "yolo_det_metrics_add_image: bad arguments (%d detections, %d gts)",
                          n_det, n_gt);
    if (s->n_iou != YOLO_AP_N_IOU)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_metrics_add_image: accumulator has %d IoU thresholds, not %d",
                          s->n_iou, YOLO_AP_N_IOU);
    size_t nd = n_det > 0 ? (size_t)n_det : 1, ng = n_gt > 0 ? (size_t)n_gt : 1;
    float *boxes = malloc(nd * 4 * sizeof(float)), *conf = malloc(nd * sizeof(float));
    int32_t *cls = malloc(nd * sizeof(int32_t));
    float *iou = malloc(nd * ng * sizeof(float));
    uint8_t *correct = malloc(nd * YOLO_AP_N_IOU);
    yolo_status st;
    if (!boxes || !conf || !cls || !iou || !correct) {
        st = yolo_error(YOLO_ERR_NOMEM, "yolo_det_metrics_add_image: out of memory for %d x %d", n_det, n_gt);
        goto done;
    }
    for (int i = 0; i < n_det; i++) {
        for (int k = 0; k < 4; k++) boxes[4 * i + k] = dets[i].box[k];
        conf[i] = dets[i].score;
        cls[i] = dets[i].cls;
    }
    float thr[YOLO_AP_N_IOU];
    yolo_ap_iou_thresholds(thr);
    yolo_box_iou_matrix(gt_boxes, n_gt, boxes, n_det, iou); /* [n_gt, n_det] as the validator */
    st = yolo_ap_match_predictions(n_det, cls, n_gt, gt_cls, iou, YOLO_AP_N_IOU, thr, correct);
    if (!st) st = yolo_ap_stats_add_image(s, n_det, correct, conf, cls, n_gt, gt_cls);
done:
    free(boxes), free(conf), free(cls), free(iou), free(correct);
    return st;
}

double yolo_det_fitness(const yolo_ap_summary *sum) { return 0.1 * sum->map50 + 0.9 * sum->map; }
