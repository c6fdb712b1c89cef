/* dataset.h — one split of a dataset, indexed and checked.
 *
 * Opening a split lists its images, reads and checks every image header
 * and label file (through the task's parse hook), and keeps the usable
 * samples with their instances. Bad input is never fatal and never used
 * silently: a corrupt/unsupported/tiny image or an unusable label file
 * skips the image, a repairable one (truncated JPEG that still decodes,
 * duplicate rows, zero-size boxes) is repaired; either way one warning per
 * file, and counts in the summary line. The result is cached (label_cache.h). */
#ifndef YOLO_DATA_DATASET_H
#define YOLO_DATA_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include "data/data_config.h"
#include "yolo/data.h"

typedef struct yolo_sample {
    char *path;            /* image path in the dataset's vfs */
    int width, height;     /* as decoded (EXIF orientation applied) */
    int32_t image_class;   /* image-folder class, -1 otherwise */
    yolo_instances labels; /* normalized; empty for a background */
} yolo_sample;

typedef struct yolo_dataset_stats {
    int64_t images;      /* usable images (backgrounds included) */
    int64_t backgrounds; /* usable images without instances */
    int64_t corrupt;     /* skipped: bad image or unusable labels */
    int64_t repaired;    /* used after a repair */
    int64_t instances;
} yolo_dataset_stats;

typedef struct yolo_dataset_options {
    int threads;     /* indexing threads, <= 0: 2 */
    bool no_cache;   /* neither read nor write the label cache */
    float tolerance; /* coordinate tolerance, <= 0: 0.01 */
    double fraction; /* in (0,1): only the first round(n * fraction) images (the fraction key); else all */
} yolo_dataset_options;

typedef struct yolo_dataset {
    const yolo_data_config *cfg; /* borrowed: outlives the dataset */
    yolo_split split;
    yolo_data_spec spec;
    yolo_sample *samples;
    int64_t n;
    int kpt_count, kpt_dims;     /* instance keypoint layout (0 unless the task needs keypoints) */
    float tolerance;             /* label coordinates in [-tol, 1+tol] are clamped */
    yolo_dataset_stats stats;
    char *cache_path;            /* where the label cache lives */
    bool from_cache;             /* this open read the cache */
} yolo_dataset;

yolo_status yolo_dataset_open(const yolo_data_config *cfg, yolo_split split, const yolo_data_spec *spec,
                              const yolo_dataset_options *opt, yolo_dataset **out);
void yolo_dataset_free(yolo_dataset *ds);

/* "train: 128 images, 2 backgrounds, 0 corrupt" (+ ", N repaired" if any). */
void yolo_dataset_summary(const yolo_dataset *ds, char *buf, size_t size);

/* counts[nc]: the instances of each class (and images of each image-folder
 * class); labels outside [0, nc) are not counted. */
void yolo_dataset_class_counts(const yolo_dataset *ds, int nc, int64_t *counts);

/* Decodes sample i (see yolo_image_decode for min_long_side). */
yolo_status yolo_dataset_read_image(const yolo_dataset *ds, int64_t i, int min_long_side, yolo_image *out);

#endif
