/* instance_ops.h — geometry on instances during augmentation.
 *
 * Augmentation works in pixels with boxes as corners (x1, y1, x2, y2);
 * instances are converted from the normalized (cx, cy, w, h) of yolo/data.h
 * on the way in and back on the way out. */
#ifndef YOLO_DATA_INSTANCE_OPS_H
#define YOLO_DATA_INSTANCE_OPS_H

#include <stdbool.h>

#include "yolo/data.h"

/* normalized cxcywh -> pixel xyxy (and polygon/keypoint scaling). */
void yolo_ins_to_pixels(yolo_instances *ins, float width, float height);
/* pixel xyxy -> normalized cxcywh. */
void yolo_ins_to_normalized(yolo_instances *ins, float width, float height);

/* x' = x * sx + dx, y' = y * sy + dy on boxes, polygons and keypoints
 * (pixel xyxy form; keeps x1 <= x2 when sx, sy > 0). */
void yolo_ins_affine_axis(yolo_instances *ins, float sx, float sy, float dx, float dy);

/* Mirror in a width x height image (pixel xyxy form); keypoints are
 * re-ordered by flip_idx when given (left/right pairs). */
void yolo_ins_flip_lr(yolo_instances *ins, float width, const int *flip_idx);
void yolo_ins_flip_ud(yolo_instances *ins, float height);

/* Clips boxes and polygon points to [0,w] x [0,h]; keypoints outside get
 * visibility 0 (or 0,0 without a visibility column). */
void yolo_ins_clip(yolo_instances *ins, float width, float height);

/* Ultralytics' bbox_ioa(box1, box2)[i, j] for one pair of pixel xyxy boxes:
 * their intersection over b's area (eps 1e-7). */
float yolo_box_ioa(const float *a, const float *b);
/* Keeps instances k with keep[k]; compacts all arrays. */
void yolo_ins_filter(yolo_instances *ins, const bool *keep);

/* Removes instances whose box has zero width or height. */
void yolo_ins_remove_empty(yolo_instances *ins);

/* Resamples every polygon with >= 1 point to exactly n points, evenly by
 * arc length along the closed outline. */
yolo_status yolo_ins_resample_polygons(yolo_instances *ins, int n);

/* Applies the 3x3 matrix m (row-major, projective when m[6] or m[7] != 0)
 * to instances in an output of width x height: boxes from their 4
 * transformed corners, or from the polygon points inside the image when
 * the instance has a polygon (then points are clipped to that box);
 * keypoints transformed, those outside marked invisible. Ends clipped. */
void yolo_ins_transform(yolo_instances *ins, const double m[9], float width, float height);

/* Ultralytics' box_candidates: keep[k] iff new box k is wider and taller
 * than 2 px, its area is > area_thr of old box k times (scale^2 folded in
 * by the caller), and its aspect ratio < 100. */
void yolo_ins_box_candidates(const float *old_xyxy, const yolo_instances *ins, float area_thr,
                             bool *keep);

#endif
