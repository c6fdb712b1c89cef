/* The YOLOv8 Detect head (Ultralytics ultralytics/nn/modules/head.py,
 * Detect with the original v8 class branch), shared by the segment plugin
 * (plugins/segment compiles detect_head.c into its own .so).
 *
 * Outputs of its forward:
 *   training: t[0..nl-1] = per level cat(box, cls) maps [N, 4*reg_max + nc, H_i, W_i]
 *   eval:     t[0] = [N, 4 + nc, A] decoded boxes (xywh in pixels) and class
 *             probabilities over the A anchors of all levels; t[1..nl] the
 *             raw maps as in training. */
#ifndef YOLO_DETECT_HEAD_H
#define YOLO_DETECT_HEAD_H

#include "yolo/model.h"

#define DETECT_MAX_LEVELS 6
#define DETECT_REG_MAX 16

#if defined(__GNUC__)
#define DETECT_HIDDEN __attribute__((visibility("hidden")))
#else
#define DETECT_HIDDEN
#endif

typedef struct detect_anchor_cache {
    int64_t hw[DETECT_MAX_LEVELS][2];
    yolo_backend *backend;
    yolo_tensor *anchors; /* [2, A]: x then y of each anchor centre, in grid units */
    yolo_tensor *strides; /* [1, A] */
} detect_anchor_cache;

typedef struct detect_head {
    int nc, nl, reg_max, no; /* no = nc + 4*reg_max outputs per anchor */
    int c2, c3;              /* box and class branch widths */
    int ch[DETECT_MAX_LEVELS];
    int stride[DETECT_MAX_LEVELS];
    yolo_conv_block box_conv[DETECT_MAX_LEVELS][2];
    yolo_conv_layer box_pred[DETECT_MAX_LEVELS];
    yolo_conv_block cls_conv[DETECT_MAX_LEVELS][2];
    yolo_conv_layer cls_pred[DETECT_MAX_LEVELS];
    yolo_conv_layer dfl; /* fixed 1x1 conv 16 -> 1 with weights 0..15, no gradient */
    detect_anchor_cache *cache;
    int n_cache;
} detect_head;

/* Creates the branches (cv2 = box, cv3 = class) and the DFL conv for nl
 * inputs of ch[i] channels. */
DETECT_HIDDEN yolo_status detect_head_init(yolo_module_ctx *ctx, detect_head *h, int nc, int nl, const int *ch);
/* Strides from the probe, then Ultralytics' bias_init: box 1.0, class
 * log(5 / nc / (640 / stride)^2). */
DETECT_HIDDEN yolo_status detect_head_finalize(yolo_module_ctx *ctx, detect_head *h);
/* Raw per-level maps into raw[0..nl-1]. */
DETECT_HIDDEN yolo_status detect_head_raw(const yolo_forward_ctx *f, detect_head *h, int n_in, yolo_tensor *const *in,
                                          yolo_tensor **raw);
/* The eval decode of the raw maps: [N, 4 + nc, A]. */
DETECT_HIDDEN yolo_tensor *detect_head_decode(const yolo_forward_ctx *f, detect_head *h, yolo_tensor *const *raw);
/* Reshapes each [N, C, H, W] to [N, C, H*W] and concatenates along the last axis. */
DETECT_HIDDEN yolo_tensor *detect_flatten_levels(yolo_graph *g, int nl, yolo_tensor *const *maps);
DETECT_HIDDEN void detect_head_release(detect_head *h);
DETECT_HIDDEN yolo_status detect_read_channels(yolo_module_ctx *ctx, int *nl, int *ch);

extern DETECT_HIDDEN const yolo_module_type detect_module_type;

#endif
