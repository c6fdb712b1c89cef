/* Validation: the eval-mode model over a split, the task's metrics and
 * (where the task has them) validation losses. Used after every training
 * epoch (with the EMA weights) and by `yolo val`. */
#ifndef YOLO_TRAIN_VALIDATE_H
#define YOLO_TRAIN_VALIDATE_H

#include <stdio.h>

#include "data/dataset.h"
#include "dist/dist.h"
#include "train/model_graph.h"
#include "yolo/plugin.h"
#include "yolo/task.h"

typedef struct yolo_val_result {
    double metrics[32];      /* hooks->n_metrics values */
    double fitness;
    float losses[YOLO_TASK_MAX_ITEMS]; /* mean validation loss items (0 where none) */
    double seconds;
    int64_t images;
} yolo_val_result;

typedef struct yolo_validator {
    const yolo_task_hooks *hooks;
    yolo_task_context tctx;
    const yolo_dataset *dataset;
    yolo_graph_cache graphs;
    int batch, workers, imgsz;
    uint64_t seed;
    bool rect;       /* rect batches (init: true, as Ultralytics' trainer and Model.val); false: imgsz squares */
    yolo_dist *dist; /* DDP (set after init): batches dealt round-robin to the ranks, metrics
                        merged on rank 0 and the results given to every rank; NULL: all here */
    /* pictures (set after init): plot_dir non-NULL makes the next run write
     * val_batch*.jpg and the task's charts there (rank 0); print_confusion
     * prints the task's confusion matrix to the table. task: for its hooks. */
    const yolo_task *task;
    const char *plot_dir;
    bool print_confusion;
    const char *json_dir;  /* save_json: predictions.json there (rank 0's images) */
    const char *txt_dir;   /* save_txt: <stem>.txt per image there (train/prediction_txt.h; each rank its own) */
    double plot_seconds, plot_cpu_seconds; /* wall and CPU time spent drawing pictures, over all runs */
    /* validation losses (init: true, as the trainer logs them); `yolo val`
     * sets false, as Ultralytics' standalone validator computes none: its
     * graphs are then inference graphs (yolo_model_forward_inference) */
    bool losses;
} yolo_validator;

/* model: the model to evaluate (its graphs are cached in the validator). */
void yolo_validator_init(yolo_validator *v, const yolo_task_hooks *hooks, const yolo_task_context *tctx,
                         const yolo_dataset *dataset, yolo_model *model, int batch, int workers, int imgsz,
                         uint64_t seed);
void yolo_validator_release(yolo_validator *v);

/* Runs one pass; `table` (may be NULL, used on rank 0) receives the task's
 * metrics table. Under DDP every rank calls it and gets the same result. */
yolo_status yolo_validator_run(yolo_validator *v, FILE *table, yolo_val_result *out);

#endif
