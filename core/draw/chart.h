/* Line charts on a canvas (canvas pixels, identity transform): axes with
 * "nice" ticks, a title, axis labels, lines and a legend — what results.png
 * and the metric curves are made of. */
#ifndef YOLO_DRAW_CHART_H
#define YOLO_DRAW_CHART_H

#include <stdbool.h>

#include "yolo/draw.h"

typedef struct chart_axes {
    double left, top, right, bottom;   /* the plot area, canvas pixels */
    double xmin, xmax, ymin, ymax;     /* the data range shown */
    double font;                       /* tick label size, pixels */
    bool hide_x_ticks;                 /* a category axis (bars) */
} chart_axes;

/* The range of n values (finite ones), widened by 5% each side like
 * matplotlib's margins; a flat or empty range gets +-0.5 (or +-5%). */
void chart_range(const double *v, int n, double *lo, double *hi);
/* Frame, ticks and their labels, title above, xlabel below, ylabel at
 * the left (rotated); NULL texts are left out. */
void chart_draw_axes(yolo_canvas *c, const chart_axes *a, const char *title, const char *xlabel, const char *ylabel);
/* The polyline of n points (NaN points break it), clipped to the axes;
 * dash > 0: dotted with that dash length; marker > 0: dots of that radius. */
void chart_draw_line(yolo_canvas *c, const chart_axes *a, const double *x, const double *y, int n, double width,
                     yolo_color color, double dash, double marker);
/* A legend box at (x, y) (top-left, canvas pixels): n entries of a short
 * line in colors[i] (widths[i]) and texts[i]. */
void chart_draw_legend(yolo_canvas *c, double x, double y, int n, const char *const *texts, const yolo_color *colors,
                       const double *widths, double font);
/* matplotlib's default colour cycle (tab10), entry i. */
yolo_color chart_cycle_color(int i);

#endif
