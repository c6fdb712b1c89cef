/* yolo/data.h — images, instances, batches and the label-parsing hook.
 *
 * The core indexes datasets, decodes images and augments images together
 * with their instances and collates them into a yolo_batch; a task plugin
 * only says which instance kinds it needs (yolo_data_spec) and optionally
 * parses its own label files into instances. Its loss, metrics and predict
 * hooks (yolo/task.h) read the batch as it is.
 *
 * Coordinates are normalized to [0,1] by the width and height of the image
 * they belong to: label files, parsed instances and batches alike. */
#ifndef YOLO_DATA_H
#define YOLO_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "yolo/export.h"
#include "yolo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The grey used for padding (letterbox, mosaic canvas, warp borders). */
#define YOLO_PAD_VALUE 114

/* An 8-bit RGB image, rows top to bottom, pixels interleaved (HWC). */
typedef struct yolo_image {
    int width;
    int height;
    uint8_t *data; /* width * height * 3 bytes, malloc'd; free with yolo_image_free */
} yolo_image;

YOLO_API void yolo_image_free(yolo_image *image);

/* ---- instances ---------------------------------------------------------- */

/* Which instance kinds a task needs (a bit set). */
enum {
    YOLO_NEED_BOXES = 1u << 0,       /* detect: class + box */
    YOLO_NEED_POLYGONS = 1u << 1,    /* segment: class + polygon (box derived from it) */
    YOLO_NEED_KEYPOINTS = 1u << 2,   /* pose: class + box + kpt_shape keypoints */
    YOLO_NEED_IMAGE_CLASS = 1u << 3, /* classify: one class per image, ImageFolder layout */
};

/* The objects of one image (or of a whole batch), as parallel arrays.
 * Instance k has class cls[k] and box boxes[4k..4k+3] = (cx, cy, w, h).
 * Polygons, when present (poly_start != NULL), are instance k's points
 * poly_xy[2*poly_start[k] .. 2*poly_start[k+1]) as (x, y) pairs; an
 * instance may have 0 points. Keypoints, when kpt_count > 0, are
 * kpts[k*kpt_count*kpt_dims ...] as (x, y[, visibility]) per point; a
 * keypoint outside the image has visibility 0 (or x = y = 0 when dims=2). */
typedef struct yolo_instances {
    int n;
    int32_t *cls;
    float *boxes;
    int32_t *poly_start; /* n + 1 entries, or NULL: no polygons */
    float *poly_xy;
    int kpt_count;       /* keypoints per instance, 0: none */
    int kpt_dims;        /* 2 (x y) or 3 (x y visibility) */
    float *kpts;
    /* allocation sizes (internal) */
    int cap, poly_cap;
} yolo_instances;

/* Starts empty; kpt_count/kpt_dims fix the keypoint layout (0, 0: none). */
YOLO_API void yolo_instances_init(yolo_instances *ins, int kpt_count, int kpt_dims);
YOLO_API void yolo_instances_free(yolo_instances *ins);
/* Empties without freeing (keeps the keypoint layout). */
YOLO_API void yolo_instances_clear(yolo_instances *ins);
/* Total polygon points of all instances (0 without polygons). */
YOLO_API int yolo_instances_poly_points(const yolo_instances *ins);

/* Appends one instance. box (cx, cy, w, h) may be NULL when n_points >= 3:
 * the box is then the polygon's extent. poly_xy (2*n_points floats) may be
 * NULL with n_points 0. kpts (kpt_count*kpt_dims floats) is required iff
 * the layout has keypoints. Copies everything. */
YOLO_API yolo_status yolo_instances_add(yolo_instances *ins, int32_t cls, const float box[4],
                               const float *poly_xy, int n_points, const float *kpts);
/* Appends all of src's instances (same keypoint layout). */
YOLO_API yolo_status yolo_instances_append(yolo_instances *dst, const yolo_instances *src);

/* ---- label parsing hook --------------------------------------------------- */

/* What the parser knows about the dataset. */
typedef struct yolo_label_context {
    const char *path;  /* the label file, for messages */
    int nc;            /* number of classes: class ids must be in [0, nc) */
    unsigned needs;    /* YOLO_NEED_* of the task */
    int kpt_count;     /* from the data yaml's kpt_shape (0: none) */
    int kpt_dims;
    float tolerance;   /* coordinates in [-tol, 1+tol] are clamped; beyond is an error */
} yolo_label_context;

/* Repairs a parser made to a file that is otherwise usable. */
typedef struct yolo_label_repairs {
    int count;          /* rows repaired or removed (duplicates, clamped coordinates) */
    char message[256];  /* the first repair, e.g. "line 3: duplicate row removed" */
} yolo_label_repairs;

/* Parses one label file's text (not NUL-terminated; len bytes) into `out`
 * (empty on entry, layout set by the core). Returns YOLO_OK, or
 * YOLO_ERR_FORMAT with yolo_error() naming the line and the value when
 * the file is unusable (class >= nc, coordinate out of range, malformed
 * row): the core then skips the image with one warning and counts it.
 * An empty text is a background image. */
typedef yolo_status (*yolo_label_parse_fn)(const yolo_label_context *ctx, const char *text,
                                           size_t len, yolo_instances *out,
                                           yolo_label_repairs *repairs);

/* The core's parser for YOLO txt labels: rows `cls cx cy w h` (boxes),
 * `cls x1 y1 ... xn yn` (polygons, n >= 3), or with keypoints
 * `cls cx cy w h` + kpt_count * kpt_dims values. Duplicate rows are
 * removed (a repair). Polygons are kept only when ctx->needs has
 * YOLO_NEED_POLYGONS; a box row in a polygon task gets the box's corners. */
YOLO_API yolo_status yolo_label_parse_yolo(const yolo_label_context *ctx, const char *text, size_t len,
                                  yolo_instances *out, yolo_label_repairs *repairs);

/* What a task tells the core about its data. */
typedef struct yolo_data_spec {
    unsigned needs;                   /* YOLO_NEED_* */
    yolo_label_parse_fn parse_labels; /* NULL: yolo_label_parse_yolo */
    const char *label_format;         /* names the parser's format+version for the label
                                         cache key, e.g. "yolo-v1"; NULL: "yolo-v1" */
} yolo_data_spec;

/* ---- batches -------------------------------------------------------------- */

/* The random choices made for one image of a batch: a pure function of
 * (seed, epoch, sample index). Zero/false where the step was off. */
typedef struct yolo_aug_record {
    int64_t sample;             /* dataset index */
    int32_t epoch;
    uint8_t mosaic;             /* 1: 4-image mosaic */
    uint8_t flip_lr, flip_ud;
    uint8_t mixup;
    int64_t mosaic_partners[3]; /* dataset indices of the other 3 tiles */
    float mosaic_center[2];     /* xc, yc on the 2s x 2s canvas */
    float degrees, scale, shear_x, shear_y, perspective_x, perspective_y;
    float translate_x, translate_y; /* output pixels */
    float hsv_gain[3];          /* r_h, r_s, r_v in [-1,1] x hsv_{h,s,v} */
    uint8_t cutmix;             /* 1: a CutMix region pasted (in the struct's former padding) */
    int64_t mixup_partner;
    float mixup_lambda;         /* weight of this sample's image */
    float crop[4];              /* classify: random resized crop x, y, w, h (source pixels) */
    int32_t copy_pasted;        /* instances added by copy_paste (in the struct's former tail padding) */
} yolo_aug_record;

/* Where an image sits in the batch image, for mapping predictions back to
 * the original image: original = (batch - pad) / ratio. Validation images
 * (letterboxed) have the real mapping; augmented training images, which
 * have none, are their own original (ratio 1, pad 0, size imgsz). */
typedef struct yolo_image_meta {
    int orig_width, orig_height;
    float ratio_x, ratio_y;  /* batch pixels per original pixel */
    float pad_x, pad_y;      /* left / top padding in batch pixels */
} yolo_image_meta;

/* A collated batch. Images are uint8 (not float) so host->device copies
 * are 4x smaller; the trainer (or yolo_batch_images_to_float) turns them
 * into float as pixel/255, optionally normalized by mean/std. */
typedef struct yolo_batch {
    int n;                 /* images in this (per-rank) batch */
    int height, width;     /* every image is 3 x height x width */
    uint8_t *images;       /* n * 3 * height * width bytes, NCHW, RGB */
    int64_t *sample_index; /* [n] dataset index of each image */
    int32_t *image_class;  /* [n] classify label, -1 for other tasks */
    yolo_image_meta *meta; /* [n] */
    yolo_aug_record *aug;  /* [n] */
    yolo_instances instances; /* all images' instances, normalized to width/height */
    int32_t *batch_idx;    /* [instances.n] image of each instance (sorted ascending) */
    int32_t epoch;
    int64_t batch_number;  /* position of this batch within its epoch on this rank */
} yolo_batch;

/* out[n*3*h*w] = (pixel/255 - mean[c]) / std[c]; mean/std NULL: 0 and 1
 * (the Ultralytics convention for every task). */
YOLO_API void yolo_batch_images_to_float(const yolo_batch *batch, float *out, const float mean[3],
                                const float std[3]);

/* Fills polygon xy (n points, coordinates in mask pixels, pixel centres at
 * +0.5) into an 8-bit width x height mask with `value`, even-odd rule;
 * e.g. for segmentation targets: scale normalized points by the mask size. */
YOLO_API void yolo_polygon_fill(const float *xy, int n, uint8_t *mask, int width, int height,
                       uint8_t value);

#ifdef __cplusplus
}
#endif
#endif
