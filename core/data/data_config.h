/* data_config.h — what `data=` names: a data yaml (Ultralytics format), a
 * folder, an archive, or the built-in `shapes`, resolved to file lists.
 *
 * Path rules: a relative `path` is taken from the yaml's folder, then from
 * $YOLO_DATASETS_DIR, then from the working directory; `path` may name an
 * archive (or `X` may be missing while `X.zip` exists). `train`/`val`/
 * `test` (a folder, a .txt list of images, an image, or a list of those)
 * resolve against `path`, then against the yaml's folder. */
#ifndef YOLO_DATA_CONFIG_H
#define YOLO_DATA_CONFIG_H

#include <stdbool.h>

#include "data/vfs.h"
#include "yolo/data.h"

/* The most classes a data yaml may declare (ImageNet-21k has 21841); a
 * bound so a typo in `nc` is an error, not a runaway allocation. */
#define YOLO_DATA_MAX_CLASSES 65536

typedef enum yolo_split { YOLO_SPLIT_TRAIN = 0, YOLO_SPLIT_VAL, YOLO_SPLIT_TEST, YOLO_SPLIT_COUNT } yolo_split;

typedef struct yolo_data_config {
    char *source;          /* the data= value as given */
    char *yaml_path;       /* the yaml read, NULL if none */
    yolo_vfs *vfs;         /* folders or an archive (owned) */
    char *root;            /* dataset root: a folder, or a member prefix inside the archive */
    char **split_paths[YOLO_SPLIT_COUNT]; /* resolved entries per split */
    int n_split_paths[YOLO_SPLIT_COUNT];
    char **names;          /* nc class names */
    int nc;
    int kpt_count, kpt_dims; /* kpt_shape, 0 0 when absent */
    int *flip_idx;         /* kpt_count entries or NULL */
    bool image_folder;     /* classification: split/class/image layout */
    char **class_dirs;     /* image_folder: the nc class folder names, sorted (class i = class_dirs[i]) */
} yolo_data_config;

/* Resolves `data` for a task that needs `needs` (YOLO_NEED_*). */
yolo_status yolo_data_config_load(const char *data, unsigned needs, yolo_data_config *out);
void yolo_data_config_free(yolo_data_config *cfg);
const char *yolo_split_name(yolo_split split);

#endif
