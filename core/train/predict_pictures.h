/* What `predict` shows (save, show_labels, show_conf, show_boxes,
 * line_width, retina_masks, save_crop): each source image with its results
 * drawn by the task, saved under the run folder by its output stem (the
 * file's stem, made unique by the caller) and extension, each detection cropped into
 * crops/<class>/, and Ultralytics' per-image line and speed summary. */
#ifndef YOLO_TRAIN_PREDICT_PICTURES_H
#define YOLO_TRAIN_PREDICT_PICTURES_H

#include <stdio.h>

#include "settings/settings.h"
#include "yolo/config.h"
#include "yolo/plugin.h"
#include "yolo/task.h"

typedef struct yolo_predict_pictures {
    const yolo_task_hooks *hooks; /* the task's picture hooks (NULL: an older plugin) */
    const yolo_task_context *tctx;
    const char *run_dir;
    bool save, save_crop;
    bool labels, show_conf, boxes, retina_masks;
    double line_width;            /* <= 0: from each image's size */
    double seconds[3];            /* preprocess, inference, postprocess totals */
    int64_t images;
    int batch, height, width;     /* the last inference shape */
} yolo_predict_pictures;

yolo_status yolo_predict_pictures_open(yolo_predict_pictures *p, const yolo_task *task, const yolo_task_context *tctx,
                                       const yolo_picture_settings *set, const char *run_dir);
/* After the task's predict for image i of the batch, file k of n (source
 * `path`, decoded `image`): draws, saves, crops per the keys and prints the
 * image line with its inference time. */
yolo_status yolo_predict_pictures_image(yolo_predict_pictures *p, void *state, const yolo_batch *batch, int i,
                                        int n_outputs, const yolo_host_tensor *outputs, const yolo_image *image,
                                        const char *path, const char *out_stem, int64_t k, int64_t n,
                                        const double times[3]);
/* "Speed: ... per image at shape (n, 3, h, w)". */
void yolo_predict_pictures_close(yolo_predict_pictures *p, FILE *out);

#endif
