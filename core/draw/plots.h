/* The core's run pictures (Ultralytics' file names): results.png from
 * results.csv, labels.jpg from the training labels, batch mosaics
 * (train_batchN.jpg, val_batchN_labels.jpg, val_batchN_pred.jpg), and a
 * worker thread that draws them off the training thread. */
#ifndef YOLO_DRAW_PLOTS_H
#define YOLO_DRAW_PLOTS_H

#include "data/dataset.h"
#include "yolo/draw.h"

/* run_dir/results.png: one chart per results.csv column (all but epoch)
 * over the epochs, the values with dots and a Gaussian-smoothed dotted
 * line (sigma 3, as Ultralytics' plot_results). 480 x 480 pixels per
 * chart, in 2 rows. */
yolo_status yolo_plot_results(const char *run_dir);

/* labels.jpg (Ultralytics' plot_labels): instances per class, box centres
 * (x, y) and sizes (w, h) as 2-D histograms, and the first 500 boxes drawn
 * centred. 1600 x 1600 pixels. */
yolo_status yolo_plot_labels(const yolo_dataset *ds, const char *const *names, int nc, const char *path);

/* Predictions drawn by the task on a mosaic tile: the canvas is set to
 * image `image`'s original pixels. */
typedef yolo_status (*yolo_plot_pred_fn)(void *ctx, const yolo_batch *batch, int image, yolo_canvas *canvas,
                                         double line_width);

/* A batch (its first 16 images) as Ultralytics' plot_images mosaic to
 * path: tiles column by column, file names (paths[i], may be NULL) at the
 * top-left, and either the batch's labels (pred NULL: boxes with class
 * names, polygon fills, keypoints, classify's class) or the predictions
 * that pred draws. The mosaic is ceil(sqrt(n)) tiles of the batch size
 * on a side, scaled down to at most 1920 pixels. */
yolo_status yolo_plot_batch(const yolo_batch *batch, const char *const *names, int nc, const char *const *paths,
                            yolo_plot_pred_fn pred, void *pred_ctx, const char *path);

/* A deep copy of a batch's first max_images images with their instances
 * and file names (for plotting after the loader has the batch back). */
typedef struct yolo_batch_snapshot {
    yolo_batch batch;
    char **paths;
} yolo_batch_snapshot;
yolo_status yolo_batch_snapshot_take(const yolo_batch *batch, const yolo_dataset *ds, int max_images,
                                     yolo_batch_snapshot **out);
void yolo_batch_snapshot_free(yolo_batch_snapshot *s);

/* A background thread running plot jobs in order. A job's failure is a
 * warning (a plot never stops a run). */
typedef struct yolo_plot_worker yolo_plot_worker;
typedef yolo_status (*yolo_plot_job_fn)(void *arg);
yolo_status yolo_plot_worker_start(yolo_plot_worker **out);
/* Queues fn(arg); free_fn(arg) runs after it (may be NULL). On a worker
 * that failed to start (NULL) the job runs here and now. */
void yolo_plot_worker_submit(yolo_plot_worker *w, yolo_plot_job_fn fn, void *arg, void (*free_fn)(void *));
/* Waits for the queued jobs (discard: drops those not started) and ends
 * the thread; *seconds and *cpu_seconds (may be NULL) get the wall and CPU
 * time the jobs took. */
void yolo_plot_worker_finish(yolo_plot_worker *w, bool discard, double *seconds, double *cpu_seconds);

#endif
