/* The ONNX form of YOLO26's end2end output (onnx_end2end.c). */
#ifndef YOLO_INTEROP_ONNX_END2END_H
#define YOLO_INTEROP_ONNX_END2END_H

#include "interop/onnx_writer.h"

/* Appends Detect.postprocess: pred (the name of the decoded one-to-one
 * output [B, 4 + nc + extra, A], xywh) -> out [B, k, 6 + extra] rows x1
 * y1 x2 y2 score class, then the anchor's extra channels, best first. */
void ox_end2end_postprocess(writer *w, const char *pred, int nc, int extra, int64_t k, const char *out);

#endif
