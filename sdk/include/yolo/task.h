/* yolo/task.h — what a task plugin does in training, validation and
 * prediction. The core runs the loop (data, forward, backward, optimizer,
 * EMA, checkpoints, logging, DDP); the task supplies the hooks below, in
 * its yolo_task table (yolo/plugin.h, field `hooks`).
 *
 * Model outputs reach the hooks as host copies (yolo_host_tensor): the
 * core downloads the head's outputs after the forward pass, the task
 * computes its loss and the gradient with respect to those outputs, and
 * the core uploads the gradient and runs the backward pass. */
#ifndef YOLO_TASK_H
#define YOLO_TASK_H

#include <stdio.h>

#include "yolo/config.h"
#include "yolo/data.h"
#include "yolo/draw.h"
#include "yolo/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define YOLO_TASK_MAX_ITEMS 8

/* A host copy of one model output (f32, row-major). */
typedef struct yolo_host_tensor {
    int ndim;
    int64_t shape[YOLO_MAX_DIMS];
    float *data;
} yolo_host_tensor;

/* What a hook may know about the run. Everything is borrowed. */
typedef struct yolo_task_context {
    const yolo_config *cfg;   /* the merged configuration (the task's keys included) */
    const yolo_model *model;  /* the model being trained or evaluated */
    int nc;                   /* number of classes */
    const char *const *names; /* class names [nc] */
    int imgsz;                /* square input size */
    int world, rank;          /* DDP world (1 alone) and this rank */
    /* DDP (plugin ABI 0.2): replaces values[n] by their mean over the ranks;
     * NULL alone and outside training. Under DDP every rank computes its
     * loss on its share of the global batch and the core SUMS the ranks'
     * gradients; a loss normalised by a batch-wide sum (Detect's target-score
     * sum) passes that sum through rank_mean so that the summed gradients
     * equal one rank's gradient on the whole global batch. Only
     * loss_compute may call it, the same number of times on every rank. */
    yolo_status (*rank_mean)(const struct yolo_task_context *ctx, double *values, int n);
    void *dist;               /* the core's communicator, for rank_mean */
    /* Plugin ABI 1.3: Ultralytics' cls_pw class weights [nc], by which the
     * classification loss multiplies each class's BCE terms: (1 / the
     * class's instances in the training labels)^cls_pw, scaled to mean 1
     * (a class without instances counts 1). NULL when cls_pw is 0 and
     * outside training. The core gives them only to a task that lists
     * "cls_pw" in its task_keys_read (yolo/plugin.h) and refuses cls_pw > 0
     * for any other. */
    const float *class_weights;
} yolo_task_context;

/* One image's prediction as text, owned by the task until the next call:
 * `txt` the result file (Ultralytics' save_txt format), `json` one JSON
 * object (no trailing comma). */
typedef struct yolo_prediction_text {
    const char *txt;
    const char *json;
} yolo_prediction_text;

typedef struct yolo_task_hooks {
    /* Data: which instance kinds the task needs and its label parser. */
    yolo_data_spec data;

    /* ---- loss ----
     * loss_names: the logged components ("box_loss", ...), n_loss_items of them. */
    int n_loss_items;
    const char *const *loss_names;
    yolo_status (*loss_create)(const yolo_task_context *ctx, void **state);
    void (*loss_destroy)(void *state);
    /* outputs: the training-mode outputs of the model for `batch`. Sets
     * *loss (the value whose gradient is taken) and items[n_loss_items]
     * (per-image means, logged); when grads is non-NULL, grads[i] (same
     * shapes as outputs[i], zeroed by the caller) receives dloss/doutputs[i]. */
    yolo_status (*loss_compute)(void *state, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                float *items);

    /* Validation losses: loss_compute (grads NULL) is called on the
     * eval-mode outputs starting at this index, which must have the
     * training layout (Detect's eval outputs 1..nl are its raw maps).
     * -1: the task reports no validation loss. */
    int val_loss_outputs;

    /* ---- validation metrics ----
     * metric_names: results.csv columns ("metrics/mAP50(B)", ...). */
    int n_metrics;
    const char *const *metric_names;
    yolo_status (*metrics_create)(const yolo_task_context *ctx, void **state);
    void (*metrics_destroy)(void *state);
    /* outputs: the eval-mode outputs of the model for `batch`. */
    yolo_status (*metrics_update)(void *state, const yolo_batch *batch, int n_outputs,
                                  const yolo_host_tensor *outputs);
    /* Reduction across ranks: pack this rank's state into bytes (malloc'd,
     * the caller frees) and merge another rank's bytes into a state. */
    yolo_status (*metrics_pack)(void *state, void **bytes, size_t *size);
    yolo_status (*metrics_merge)(void *state, const void *bytes, size_t size);
    /* values[n_metrics] and the fitness that picks best.ckpt; prints the
     * per-class table to `table` when non-NULL. */
    yolo_status (*metrics_summarize)(void *state, double *values, double *fitness, FILE *table);

    /* ---- prediction ----
     * Eval-mode outputs of one batch; image i of the batch; fills *out. */
    yolo_status (*predict)(void *state, const yolo_batch *batch, int image, int n_outputs,
                           const yolo_host_tensor *outputs, yolo_prediction_text *out);
    /* predict reuses the metrics state (NMS settings come from conf, iou,
     * max_det of the context's configuration). */

    /* ---- pictures (plugin ABI 1.1: the core reads these two only from
     * plugins built for 1.1 or later; either may be NULL) ----
     * draw_predictions: image `image`'s predictions (eval-mode outputs of
     * `batch`, state from metrics_create) drawn with yolo/draw.h onto
     * canvas in that image's ORIGINAL pixels (the core sets the canvas
     * transform: predict's saved image, a val_batch*_pred.jpg tile),
     * following opt; out lists what was drawn. */
    yolo_status (*draw_predictions)(void *state, const yolo_batch *batch, int image, int n_outputs,
                                    const yolo_host_tensor *outputs, const yolo_draw_options *opt,
                                    yolo_canvas *canvas, yolo_drawn_result *out);
    /* metrics_plot: after metrics_summarize (rank 0): the task's charts
     * into dir when dir is non-NULL (confusion_matrix*.png, the metric
     * curves; yolo/plot.h), and the confusion matrix printed to table when
     * table is non-NULL. */
    yolo_status (*metrics_plot)(void *state, const char *dir, FILE *table);

    /* ---- instance masks (plugin ABI 1.6: read from plugins built for 1.6
     * or later; may be NULL) ----
     * predict_masks: the masks of image `image`'s predictions (eval-mode
     * outputs of `batch`, state from metrics_create), one per detection in
     * NMS order (most confident first: draw_predictions' objects in
     * reverse), each batch->width x batch->height bytes, 1 inside, 0
     * outside, at the batch's (letterboxed) resolution, as Ultralytics'
     * Results.masks.data. *masks is owned by the task until its next call.
     * The host API (yolo/yolo.h) returns them with the boxes. */
    yolo_status (*predict_masks)(void *state, const yolo_batch *batch, int image, int n_outputs,
                                 const yolo_host_tensor *outputs, int *n, const uint8_t **masks);
} yolo_task_hooks;

#ifdef __cplusplus
}
#endif
#endif
