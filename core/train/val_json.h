/* save_json=True in val: <run>/predictions.json in the COCO results format
 * Ultralytics writes (DetectionValidator.pred_to_json): one object per
 * prediction, {"image_id", "category_id", "bbox" [x, y, w, h] rounded to 3
 * decimals, "score" rounded to 5}; image_id is the file stem, as a number
 * when it is one. category_id is the class index (no COCO 80 -> 91 map).
 * The predictions come from the task's draw_predictions hook in report
 * mode, so every box task gets it; a task without boxes writes []. */
#ifndef YOLO_TRAIN_VAL_JSON_H
#define YOLO_TRAIN_VAL_JSON_H

#include <stdio.h>

#include "data/dataset.h"
#include "yolo/plugin.h"
#include "yolo/task.h"

typedef struct yolo_val_json {
    FILE *f;
    char path[1100];
    int64_t written;
    const yolo_task_hooks *hooks;
    yolo_canvas *canvas; /* a 1 x 1 canvas: report mode draws nothing */
} yolo_val_json;

yolo_status yolo_val_json_open(yolo_val_json *j, const yolo_task *task, const char *run_dir);
yolo_status yolo_val_json_add(yolo_val_json *j, void *metrics, const yolo_dataset *ds, const yolo_batch *batch,
                              int n_outputs, const yolo_host_tensor *outputs);
yolo_status yolo_val_json_close(yolo_val_json *j);

#endif
