/* shapes.h — the built-in synthetic dataset `data=shapes`.
 *
 * Coloured circles, rectangles and triangles on textured backgrounds,
 * generated deterministically (Philox, fixed seed) on first use into
 * $YOLO_CACHE_DIR/shapes-v1 (default ~/.cache/yolo):
 *   shapes.yaml                 detect/segment: path, train, val, names
 *   images/{train,val}/N.jpg      320 x 320, 1-4 shapes each (some images empty)
 *   labels/{train,val}/N.txt      polygon rows `cls x1 y1 ...` (triangle corners,
 *                               rectangle corners, 24-gon circles), so boxes
 *                               and masks both follow
 *   classify/{train,val}/<class>/N.jpg  64 x 64, one shape each
 * Generation writes into a temporary folder renamed at the end, so
 * concurrent first uses (ranks, tests) are safe. */
#ifndef YOLO_DATA_SHAPES_H
#define YOLO_DATA_SHAPES_H

#include <stdbool.h>

#include "yolo/error.h"

#define YOLO_SHAPES_NC 3

typedef struct yolo_shapes_options {
    int n_train, n_val;         /* detection images: 128, 32 */
    int imgsz;                  /* 320 */
    int cls_train, cls_val;     /* classification images per class: 64, 16 */
    int cls_imgsz;              /* 64 */
} yolo_shapes_options;

void yolo_shapes_default_options(yolo_shapes_options *opt);

/* Makes sure the dataset exists under `dir` (generated when missing);
 * returns malloc'd paths to its yaml and its classification root. */
yolo_status yolo_shapes_generate(const char *dir, const yolo_shapes_options *opt);
/* The default location: <cache dir>/shapes-v1, generated on first use. */
yolo_status yolo_shapes_ensure(char **yaml_path, char **classify_root);

#endif
