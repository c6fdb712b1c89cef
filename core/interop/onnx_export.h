/* onnx_export.h — a model's inference graph as an ONNX file.
 *
 * The exporter traces the model: it builds the eval-mode forward graph for
 * one input shape (with batch norm already folded into the convolutions
 * when the caller fused the model) and writes every op on the path to the
 * exported outputs as ONNX nodes, the persistent tensors (weights, anchors,
 * strides) as initializers. So the file computes exactly what our forward
 * computes, head decoding included: detect [B, 4+nc, anchors] (xywh in
 * pixels, class probabilities), segment that plus the mask prototypes
 * [B, 32, H/4, W/4], classify softmax [B, nc] — Ultralytics' ONNX layout,
 * input "images", outputs "output0" (and "output1").
 *
 * Exported outputs: the head's first output, plus its last output when
 * that is a 4-D map finer than every level the head reads (a mask
 * prototype), as Ultralytics exports segmentation.
 *
 * Shapes are static (the traced batch and size), or with `dynamic` the
 * batch, height and width are symbolic ("batch", "height", "width"; the
 * outputs' "anchors", "mask_height", "mask_width") and the graph computes
 * its reshape targets and anchors from the input's Shape (onnx_dynamic.c).
 * An op without an ONNX form here is an error naming it. */
#ifndef YOLO_INTEROP_ONNX_EXPORT_H
#define YOLO_INTEROP_ONNX_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "yolo/model.h"

typedef struct yolo_onnx_kv {
    const char *key, *value;
} yolo_onnx_kv;

typedef struct yolo_onnx_options {
    int batch, height, width;
    int opset;                   /* 12..17 */
    bool dynamic;                /* batch, height, width symbolic (onnx_dynamic.c) */
    const yolo_onnx_kv *metadata; /* metadata_props, in order */
    int n_metadata;
    const char *producer_version;
    /* > 0: the model runs end2end (YOLO26): output0 is Detect.postprocess's
     * [B, end2end_k, 6] of the decoded output (onnx_end2end.c) */
    int end2end_k;
} yolo_onnx_options;

#define YOLO_ONNX_OPSET_MIN 12
#define YOLO_ONNX_OPSET_MAX 17

/* Writes `path`; *n_outputs (may be NULL) gets the number of outputs. */
yolo_status yolo_onnx_export(yolo_model *model, const yolo_onnx_options *opt, const char *path, int *n_outputs);

#endif
