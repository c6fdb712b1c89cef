/* Training output: the per-epoch progress bar (a terminal) or plain lines
 * (a log file), and results.csv with Ultralytics' column names. */
#ifndef YOLO_TRAIN_LOG_H
#define YOLO_TRAIN_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "yolo/task.h"

typedef struct yolo_progress {
    FILE *out;
    bool tty;
    int epoch, epochs;
    int64_t total;        /* batches in the epoch */
    int n_items;
    const char *const *item_names;
    double start;
    double last_print;
} yolo_progress;

void yolo_progress_header(FILE *out, int n_items, const char *const *item_names);
void yolo_progress_begin(yolo_progress *p, FILE *out, int epoch, int epochs, int64_t total, int n_items,
                         const char *const *item_names);
/* After batch `done` (1-based): mean loss items so far, instances and size of the batch. */
void yolo_progress_update(yolo_progress *p, int64_t done, const float *items, int instances, int size,
                          double memory_gb);
void yolo_progress_end(yolo_progress *p);

/* results.csv: writes the header on the first row. */
typedef struct yolo_results_csv {
    char path[1100];
    int n_loss, n_metrics;
    const char *const *loss_names;
    const char *const *metric_names;
} yolo_results_csv;

yolo_status yolo_results_csv_open(yolo_results_csv *r, const char *run_dir, const yolo_task_hooks *hooks);
/* Resuming a run: keeps the header and the first `rows` rows of the run's
 * results.csv (rows written after the checkpoint are dropped); a missing
 * file or one with another header starts again from its header. *kept:
 * the rows kept. */
yolo_status yolo_results_csv_resume(yolo_results_csv *r, const char *run_dir, const yolo_task_hooks *hooks, int rows,
                                    int *kept);
/* One row: the epoch (0-based, written 1-based), the seconds this process
 * has trained (Ultralytics' time column; wall time, so the one column that
 * differs between equal runs), the losses, metrics and learning rates. */
yolo_status yolo_results_csv_append(yolo_results_csv *r, int epoch, double seconds, const float *train_items,
                                    const double *metrics, const float *val_items, const float *lr);

double yolo_seconds_now(void);
/* CPU time of the calling thread. */
double yolo_thread_cpu_seconds(void);

#endif
