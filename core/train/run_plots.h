/* The pictures of a run (plots=True), glued to the trainer and the
 * validator with one call each: labels.jpg and train_batch0..2.jpg at the
 * start of training, results.png at the end (all on the plot worker
 * thread), and at a plotted validation val_batch{0,1,2}_{labels,pred}.jpg
 * plus the task's metrics_plot (confusion matrices, curves). */
#ifndef YOLO_TRAIN_RUN_PLOTS_H
#define YOLO_TRAIN_RUN_PLOTS_H

#include <stdbool.h>
#include <stdio.h>

#include "data/dataset.h"
#include "draw/plots.h"
#include "yolo/plugin.h"
#include "yolo/task.h"

#define YOLO_PLOTTED_BATCHES 3

/* Whether a task's plugin has the picture hooks (ABI 1.1 and later). */
static inline const yolo_task_hooks *yolo_picture_hooks(const yolo_task *task) {
    return task && task->hooks && (task->abi.major > 1 || (task->abi.major == 1 && task->abi.minor >= 1)) ? task->hooks
                                                                                                           : NULL;
}

typedef struct yolo_run_plots {
    bool on;                     /* plots=True on the rank that writes the run folder */
    const char *run_dir;
    const yolo_task_context *tctx;
    yolo_plot_worker *worker;
    double seconds;              /* the time the calling thread spent on plots */
} yolo_run_plots;

/* on false: every call below does nothing. */
void yolo_run_plots_open(yolo_run_plots *p, bool on, const char *run_dir, const yolo_task_context *tctx);
/* labels.jpg of the training split (on the worker). */
void yolo_run_plots_labels(yolo_run_plots *p, const yolo_dataset *train);
/* train_batch<k>.jpg for global batch k < 3 (a snapshot drawn on the worker). */
void yolo_run_plots_train_batch(yolo_run_plots *p, const yolo_batch *batch, const yolo_dataset *ds, int64_t k);
/* results.png (on the worker). */
void yolo_run_plots_results(yolo_run_plots *p);
/* Waits for the worker and prints the plotting times to log, val_seconds /
 * val_cpu being the validation's pictures (drawn on this thread); log NULL
 * (a run that failed or stopped): drops the pictures not yet started. */
void yolo_run_plots_close(yolo_run_plots *p, FILE *log, double val_seconds, double val_cpu);

/* In a validation pass that plots (dir non-NULL): val_batch<k>_labels.jpg
 * and, with the task's draw_predictions, val_batch<k>_pred.jpg for k < 3
 * (drawn here: the outputs are the current batch's). */
yolo_status yolo_val_plot_batch(const char *dir, const yolo_task *task, void *metrics, const yolo_task_context *tctx,
                                const yolo_dataset *ds, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, int64_t k);

#endif
