/* segment_mask.h — the segment task's own mathematics on host arrays:
 * polygon rasterization into target masks, the per-instance mask loss of
 * Ultralytics' v8SegmentationLoss with its gradient, predicted masks
 * (process_mask), mask IoU and the polygon of a mask (masks2segments).
 * Everything box-related is the core's (yolo/detection.h).
 *
 * Masks are row-major [mh, mw] at the prototype resolution; boxes given to
 * these functions are xyxy in mask pixels unless a name says otherwise.
 * Internal to the plugin (hidden symbols); tests compile this file. */
#ifndef YOLO_SEGMENT_MASK_H
#define YOLO_SEGMENT_MASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yolo/data.h>
#include <yolo/error.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ---- targets ---- */

/* Rasterizes instances k0..k1-1 of `ins` (normalized polygons of a W x H
 * image; an instance without points is its box) at mw x mh:
 *   overlap  index[mh*mw] = j + 1 where instance k0 + j is on top, 0 for
 *            background; instances are drawn largest pixel area first, so a
 *            smaller one covers a larger one (Ultralytics'
 *            polygons2masks_overlap, without reordering the instances).
 *   else     index[j*mh*mw ...] = 1 inside instance k0 + j, 0 elsewhere
 *            ((k1 - k0) masks, Ultralytics' polygons2masks).
 * scratch: (k1 - k0 + 1) * mh * mw bytes. */
yolo_status seg_rasterize(const yolo_instances *ins, int k0, int k1, int mw, int mh, bool overlap, int32_t *index,
                          uint8_t *scratch);

/* Nearest resampling of a [sh, sw] int mask to [dh, dw] (F.interpolate
 * mode="nearest": src = floor(dst * s / d)). */
void seg_resize_nearest(const int32_t *src, int sw, int sh, int32_t *dst, int dw, int dh);

/* ---- loss ---- */

/* The target of one positive anchor. */
typedef struct seg_mask_target {
    const int32_t *mask; /* [mh * mw]: the instance's pixels are mask == value */
    int32_t value;
    float box[4];        /* the assigned gt box in mask pixels (the crop) */
    float area;          /* the gt box's area normalized by the image's (w * h / (W * H)) */
} seg_mask_target;

/* single_mask_loss for one positive: z = sum_k coef[k * coef_stride] *
 * proto[k * mh*mw + p]; BCE-with-logits against the target, zero outside
 * the crop (pixel columns x1 <= x < x2, rows y1 <= y < y2), mean over all
 * mh*mw pixels, / area. Returns that term (0 for an empty crop or area).
 * When grad_coef / grad_proto are not NULL, g_scale * d(term) is added to
 * them (same layouts as coef and proto). scratch: mh * mw floats. */
double seg_mask_term(int nm, const float *coef, size_t coef_stride, const float *proto, int mh, int mw,
                     const seg_mask_target *t, double g_scale, float *grad_coef, float *grad_proto,
                     float *scratch);

/* ---- the auxiliary semantic loss (Segment26) ---- */

/* The class of each pixel of one image at the mask raster (hw pixels),
 * from seg_rasterize's masks of its n instances of classes cls[0..n-1]:
 * overlap: the instance on top (index v > 0: cls[v - 1]); else the
 * covering instance of fewest pixels, the first on ties (Ultralytics'
 * Format sem_masks). -1 where no instance is: no class there.
 * area: n values of scratch (unused with overlap). */
void seg_semantic_classes(const int32_t *masks, bool overlap, int n, const int32_t *cls, size_t hw, int32_t *out,
                          int64_t *area);

/* One image's part of Ultralytics' BCEDiceLoss(0.5, 0.5) (Dice smooth 1)
 * on semantic logits pred [nc][hw] against the one-hot of cls [hw] (-1:
 * all zero): adds the image's BCE sum over its nc * hw elements to *bce
 * and its sum over channels of 1 - dice_c to *dice. When grad is not NULL
 * it receives (overwritten) g_bce * d(BCE sum) + g_dice * d(Dice sum).
 * scratch: 2 * hw floats. */
void seg_semantic_image(int nc, size_t hw, const float *pred, const int32_t *cls, double g_bce, double g_dice,
                        double *bce, double *dice, float *grad, float *scratch);

/* ---- predictions ---- */

/* process_mask at the prototype resolution: out[mh*mw] = 1 where the
 * cropped z > 0 (sigmoid > 0.5), box in mask pixels. Returns the pixel count. */
int seg_predict_mask(int nm, const float *coef, size_t coef_stride, const float *proto, int mh, int mw,
                     const float box[4], uint8_t *out);

/* The cropped logits (0 outside the box) at the prototype resolution,
 * bilinearly upsampled (align_corners=False) to ow x oh and thresholded at
 * 0: process_mask(upsample=True). box in mask pixels. */
void seg_predict_mask_upsampled(int nm, const float *coef, size_t coef_stride, const float *proto, int mh, int mw,
                                const float box[4], int ow, int oh, float *logits_scratch, uint8_t *out);

/* mask_iou: iou[g * n_pred + p] = |gt_g & pred_p| / (|gt_g| + |pred_p| -
 * |gt_g & pred_p| + 1e-7) over masks of hw pixels each (0/1 bytes). */
void seg_mask_iou(const uint8_t *gt, int n_gt, const uint8_t *pred, int n_pred, size_t hw, float *iou);

/* The outline of the largest 8-connected component of a 0/1 mask
 * [h, w] by boundary following (the pixels of its outer border, clockwise,
 * straight runs reduced to their ends as cv2's CHAIN_APPROX_SIMPLE).
 * xy receives up to max_points (x, y) pixel coordinates; returns the point
 * count (0: empty mask), -1 when out of memory. */
int seg_mask_contour(const uint8_t *mask, int w, int h, float *xy, int max_points);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
