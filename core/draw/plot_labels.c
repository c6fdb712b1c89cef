/* labels.jpg (plots.h), the four panels of Ultralytics' plot_labels:
 * instances per class, the boxes drawn centred (first 500), and 2-D
 * histograms of box centres (x, y) and sizes (width, height). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "draw/chart.h"
#include "draw/plots.h"

#define LABELS_SIZE 1600
#define BINS 50

static const yolo_color hist_blue = {0x35, 0x71, 0xa1};

/* A 2-D histogram of (u, v) in [0, 1]^2 in the axes. */
static void draw_hist2d(yolo_canvas *c, const chart_axes *a, const int64_t *counts) {
    int64_t peak = 0;
    for (int i = 0; i < BINS * BINS; i++) peak = counts[i] > peak ? counts[i] : peak;
    double cw = (a->right - a->left) / BINS, ch = (a->bottom - a->top) / BINS;
    for (int v = 0; v < BINS && peak; v++)
        for (int u = 0; u < BINS; u++) {
            int64_t k = counts[v * BINS + u];
            if (!k) continue;
            double alpha = fmin(1.0, 0.15 + 0.85 * (double)k / (0.9 * (double)peak));
            yolo_draw_rect(c, a->left + u * cw, a->bottom - (v + 1) * ch, a->left + (u + 1) * cw, a->bottom - v * ch, 0,
                           hist_blue, alpha);
        }
}

static int bin_of(float x) {
    int b = (int)(x * BINS);
    return b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
}

yolo_status yolo_plot_labels(const yolo_dataset *ds, const char *const *names, int nc, const char *path) {
    if (nc < 1) return yolo_error(YOLO_ERR_ARG, "%s: %d classes", path, nc);
    int64_t *per_class = calloc((size_t)nc, sizeof *per_class);
    int64_t *centres = calloc(BINS * BINS, sizeof *centres), *sizes = calloc(BINS * BINS, sizeof *sizes);
    yolo_canvas *c = yolo_canvas_create(LABELS_SIZE, LABELS_SIZE, (yolo_color){255, 255, 255});
    if (!per_class || !centres || !sizes || !c) {
        free(per_class), free(centres), free(sizes);
        yolo_canvas_free(c);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", path);
    }
    const double half = LABELS_SIZE / 2.0;
    chart_axes boxes_area = {.left = half + 90, .top = 60, .right = LABELS_SIZE - 40, .bottom = half - 90, .font = 16};
    int drawn = 0;
    yolo_dataset_class_counts(ds, nc, per_class);
    for (int64_t i = 0; i < ds->n; i++) {
        const yolo_instances *in = &ds->samples[i].labels;
        for (int k = 0; k < in->n; k++) {
            const float *b = in->boxes + 4 * (size_t)k;
            centres[bin_of(b[1]) * BINS + bin_of(b[0])]++;
            sizes[bin_of(b[3]) * BINS + bin_of(b[2])]++;
            if (drawn++ >= 500) continue;
            double s = boxes_area.right - boxes_area.left, mx = (boxes_area.left + boxes_area.right) / 2,
                   my = (boxes_area.top + boxes_area.bottom) / 2;
            yolo_draw_rect(c, mx - b[2] * s / 2, my - b[3] * s / 2, mx + b[2] * s / 2, my + b[3] * s / 2, 1,
                           yolo_class_color(in->cls[k]), 1);
        }
    }
    yolo_draw_rect(c, boxes_area.left, boxes_area.top, boxes_area.right, boxes_area.bottom, 1, (yolo_color){0, 0, 0}, 1);
    /* instances per class */
    chart_axes bars = {.left = 110, .top = 60, .right = half - 40, .bottom = half - 90, .font = 16,
                       .xmin = -0.5, .xmax = nc - 0.5, .ymin = 0};
    int64_t most = 1;
    for (int k = 0; k < nc; k++) most = per_class[k] > most ? per_class[k] : most;
    bars.ymax = most * 1.05;
    double bw = (bars.right - bars.left) / nc;
    for (int k = 0; k < nc; k++) {
        double h = (double)per_class[k] / bars.ymax * (bars.bottom - bars.top);
        yolo_draw_rect(c, bars.left + (k + 0.1) * bw, bars.bottom - h, bars.left + (k + 0.9) * bw, bars.bottom, 0,
                       yolo_class_color(k), 1);
        if (nc < 30 && names && names[k]) {
            double w, th;
            yolo_text_extent(c, names[k], 14, &w, &th);
            yolo_draw_text(c, bars.left + (k + 0.5) * bw + th / 2, bars.bottom + 8 + w, names[k], 14,
                           (yolo_color){0, 0, 0}, 90);
        }
    }
    bars.hide_x_ticks = true; /* the class axis has names */
    chart_draw_axes(c, &bars, NULL, NULL, NULL);
    yolo_draw_text(c, bars.left - 90, (bars.top + bars.bottom) / 2 + 40, "instances", 20, (yolo_color){0, 0, 0}, 90);
    chart_axes xy = {.left = 110, .top = half + 60, .right = half - 40, .bottom = LABELS_SIZE - 90, .font = 16,
                     .xmin = 0, .xmax = 1, .ymin = 0, .ymax = 1};
    chart_axes wh = xy;
    wh.left += half, wh.right += half;
    draw_hist2d(c, &xy, centres);
    draw_hist2d(c, &wh, sizes);
    chart_draw_axes(c, &xy, NULL, "x", "y");
    chart_draw_axes(c, &wh, NULL, "width", "height");
    yolo_status st = yolo_canvas_save(c, path);
    yolo_canvas_free(c);
    free(per_class), free(centres), free(sizes);
    return st;
}
