/* yolo/plot.h — the validation charts a task writes into the run folder
 * (yolo_task_hooks.metrics_plot): the confusion matrix and metric curves
 * over confidence, drawn like Ultralytics' ConfusionMatrix.plot and
 * plot_pr_curve / plot_mc_curve, with Ultralytics' file names. */
#ifndef YOLO_PLOT_H
#define YOLO_PLOT_H

#include <stdint.h>
#include <stdio.h>

#include "yolo/error.h"
#include "yolo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- confusion matrix ---- */

/* counts[p * n + t]: predictions of class p whose truth is class t, for n
 * classes (nc, plus a last "background" class for detection: a prediction
 * with no matching truth is (p, background), a missed truth (background, t)). */
typedef struct yolo_confusion {
    int n;
    int nc;           /* real classes: n - 1 with a background row/column, else n */
    int64_t *counts;  /* [n * n] */
} yolo_confusion;

/* n = nc + 1 when background, else nc. */
YOLO_API yolo_status yolo_confusion_init(yolo_confusion *m, int nc, int background);
YOLO_API void yolo_confusion_free(yolo_confusion *m);
YOLO_API void yolo_confusion_add(yolo_confusion *m, int predicted, int truth);
/* The counts as bytes appended to a metrics pack / read back from one. */
YOLO_API yolo_status yolo_confusion_pack(const yolo_confusion *m, FILE *out);
YOLO_API yolo_status yolo_confusion_unpack_merge(yolo_confusion *m, const void *bytes, size_t size, size_t *used);
/* Prints the matrix (rows: predicted, columns: true), names [nc]
 * ("background" appended for detection). A matrix of more than
 * YOLO_CONFUSION_PRINT_MAX rows (COCO's 81) is too wide for a log: one line
 * says so and where the picture is (confusion_matrix.png with plots=True). */
#define YOLO_CONFUSION_PRINT_MAX 21
YOLO_API void yolo_confusion_print(const yolo_confusion *m, const char *const *names, FILE *f);
/* dir/confusion_matrix.png and dir/confusion_matrix_normalized.png
 * (columns normalized to sum 1, cells < 0.005 left blank), 1600 x 1200. */
YOLO_API yolo_status yolo_confusion_plot(const yolo_confusion *m, const char *const *names, const char *dir);

/* ---- curves over confidence (or recall) ---- */

/* n_curves curves of n_points y values over the same x (px); curve i is
 * class class_ids[i] (names[class_ids[i]] in the legend when there are
 * fewer than 21 curves). The thick mean curve's legend is mean_label
 * ("all classes 0.912 mAP@0.5", "all classes 0.85 at 0.412"). Written to
 * path, 1350 x 900 pixels. */
typedef struct yolo_curve_plot {
    const char *path;
    const char *xlabel, *ylabel;
    int n_points;
    const double *px;        /* [n_points] */
    int n_curves;
    const double *py;        /* [n_curves * n_points] */
    const int *class_ids;    /* [n_curves] */
    const double *curve_values; /* [n_curves] or NULL: a number after each class name (AP@0.5 of a PR curve) */
    const char *const *names;
    int nc;
    const double *mean;      /* [n_points] */
    const char *mean_label;
} yolo_curve_plot;

YOLO_API yolo_status yolo_plot_curves(const yolo_curve_plot *p);

#ifdef __cplusplus
}
#endif
#endif
