/* model_size.h — how large a model yaml's model is, known before building
 * it (core/nn/model_size.c), so that a yaml cannot make the builder
 * allocate without end: `scales:` multiples that multiply channels and
 * repeats, or rows that ask for tens of thousands of channels. */
#ifndef YOLO_NN_MODEL_SIZE_H
#define YOLO_NN_MODEL_SIZE_H

#include "nn/model_yaml.h"

/* The most parameters (and buffers) a model may have: YOLOv8x-p6, the
 * largest Ultralytics detector, has 97 million; a billion is 4 GB of f32
 * weights (8 GB with gradients). The estimate below refuses a yaml past it
 * before building; module_api.c's yolo_module_param counts the exact
 * parameters as they are made and refuses the one that would pass it
 * (modules whose size the estimate does not know: plugins' heads). */
#define YOLO_MODEL_MAX_PARAMS 1000000000LL

/* The most bytes one image's layer outputs may take in f32 at the
 * default imgsz (640), a rough measure of what a forward keeps for the
 * backward: YOLOv8x-p2 takes 0.31 GB, YOLOv8x and YOLOv10x 0.18 GB,
 * YOLO11x 0.25 GB. Past 4 GiB (a few layers of thousands of channels at
 * full resolution, which hold few parameters) a yaml asks for more memory
 * than a batch of 16 could have. Measured on the stride probe's shapes
 * after the build (model_build.c): the yaml alone does not say which
 * module downsamples. */
#define YOLO_MODEL_MAX_ACTIVATION_BYTES (4.0 * (1 << 30))
#define YOLO_MODEL_DEFAULT_IMGSZ 640

/* The scale a model is built at (model_build.c's select_scale): a
 * `scales:` entry, YOLOv5's multiples, or 1, 1 and no channel cap. */
typedef struct model_size {
    double params;      /* estimated parameters */
    int largest_row;    /* the row estimated to hold most */
    double largest;     /* its estimate */
} model_size;

/* The parameters the spec's rows would build at `scale` with nc classes
 * and ch input channels, estimated as Ultralytics' parse_model sizes a
 * row: its repeats times depth (rounded, at least 1), its output channels
 * from the first argument (an int or nc) as min(c, max_channels) * width
 * rounded up to 8 (nc itself unscaled), and every repeat counted as a 3x3
 * convolution from the row's input channels to its output channels.
 * Rows with several inputs count only when that argument is nc (the
 * heads); they and rows with no channel argument (Concat, Upsample) pass
 * their input channels on. Within 0.6 to 4 times the real count for every
 * yaml shipped (YOLOv5xu: 2.6e8 for 9.7e7); its job is to catch the yaml
 * that asks for thousands of times too much. */
void model_size_estimate(const model_spec *spec, const model_scale *scale, int nc, int ch, model_size *out);

/* YOLO_OK, or an error naming the yaml, and the scale (its key under
 * `scales:`, or depth_multiple/width_multiple, with its values) or else
 * the largest row, when the estimate passes YOLO_MODEL_MAX_PARAMS. */
yolo_status model_size_check(const model_spec *spec, const model_scale *scale, int nc, int ch);

/* YOLO_OK, or an error naming the yaml and its largest layer when the
 * layers' outputs (bytes[i] for layer i, one image at the default imgsz)
 * take more than YOLO_MODEL_MAX_ACTIVATION_BYTES together. */
yolo_status model_activation_check(const model_spec *spec, const double *bytes, int n_layers);

#endif
