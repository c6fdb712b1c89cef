/* Per-image work of the detection loss spread over threads (per_image.c). */
#ifndef YOLO_DET_PER_IMAGE_H
#define YOLO_DET_PER_IMAGE_H

#include "yolo/error.h"

/* Computes image `b`'s part; must touch nothing another image's call does. */
typedef yolo_status (*yolo_det_image_fn)(void *arg, int b);

/* Calls fn for b in [0, batch) on up to YOLO_LOSS_THREADS (default: the
 * online cores) threads. Images are independent, so the results do not
 * depend on the thread count. On failure: the status and message of the
 * lowest failing image. */
yolo_status yolo_det_for_each_image(int batch, yolo_det_image_fn fn, void *arg);

#endif
