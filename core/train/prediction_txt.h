/* save_txt: the <run>/labels/<stem>.txt files of predict and val, each
 * holding one image's prediction text as the task's predict hook gives it
 * (Ultralytics' Results.save_txt lines: detect "cls cx cy w h", segment
 * "cls x1 y1 x2 y2 ...", normalized to the original image, with " conf"
 * under save_conf; classify "conf name" for the top 5). */
#ifndef YOLO_TRAIN_PREDICTION_TXT_H
#define YOLO_TRAIN_PREDICTION_TXT_H

#include <stddef.h>

#include "data/dataset.h"
#include "yolo/task.h"

/* <run_dir>/labels into dir, created if missing. */
yolo_status yolo_prediction_txt_dir(const char *run_dir, char *dir, size_t size);
/* Writes dir/<stem>.txt with `txt` (NULL: an empty file). */
yolo_status yolo_prediction_txt_write(const char *dir, const char *stem, const char *txt);
/* The file name of path without folder and extension. */
void yolo_path_stem(const char *path, char *out, size_t size);
/* Validation: every image of the batch through the task's predict hook
 * (metrics state, eval-mode outputs) into dir/<its dataset stem>.txt. */
yolo_status yolo_prediction_txt_batch(const char *dir, const yolo_task_hooks *hooks, void *metrics,
                                      const yolo_dataset *ds, const yolo_batch *batch, int n_outputs,
                                      const yolo_host_tensor *outputs);

#endif
