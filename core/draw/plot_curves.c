/* yolo_plot_curves (yolo/plot.h): Ultralytics' plot_pr_curve and
 * plot_mc_curve — thin per-class curves (named in the legend below 21
 * classes, grey above), the thick blue mean curve, axes 0..1. */
#include <stdio.h>
#include <stdlib.h>

#include "draw/chart.h"
#include "yolo/plot.h"

#define CURVE_W 1350
#define CURVE_H 900

yolo_status yolo_plot_curves(const yolo_curve_plot *p) {
    if (!p || !p->path || !p->px || p->n_points < 2 || (p->n_curves > 0 && (!p->py || !p->class_ids)))
        return yolo_error(YOLO_ERR_ARG, "plot curves %s: no points or no curves", p && p->path ? p->path : "");
    yolo_canvas *c = yolo_canvas_create(CURVE_W, CURVE_H, (yolo_color){255, 255, 255});
    if (!c) return yolo_error_context(YOLO_ERR_NOMEM, "%s", p->path);
    chart_axes a = {.left = 110, .top = 60, .right = CURVE_W * 0.66, .bottom = CURVE_H - 110,
                    .xmin = 0, .xmax = 1, .ymin = 0, .ymax = 1.0, .font = 20};
    /* Ultralytics' titles: "Precision-Recall Curve", "<ylabel>-Confidence Curve" */
    char title[128];
    snprintf(title, sizeof title, "%s-%s Curve", p->ylabel, p->xlabel);
    chart_draw_axes(c, &a, title, p->xlabel, p->ylabel);
    bool named = p->n_curves < 21;
    int n_legend = 0;
    const char **texts = calloc((size_t)p->n_curves + 1, sizeof *texts);
    char *text_buf = calloc((size_t)p->n_curves + 1, 160);
    yolo_color *colors = calloc((size_t)p->n_curves + 1, sizeof *colors);
    double *widths = calloc((size_t)p->n_curves + 1, sizeof *widths);
    if (!texts || !text_buf || !colors || !widths) {
        free(texts), free(text_buf), free(colors), free(widths);
        yolo_canvas_free(c);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p->path);
    }
    for (int i = 0; i < p->n_curves; i++) {
        yolo_color color = named ? chart_cycle_color(i) : (yolo_color){128, 128, 128};
        chart_draw_line(c, &a, p->px, p->py + (size_t)i * p->n_points, p->n_points, named ? 1.5 : 1, color, 0, 0);
        if (!named) continue;
        int k = p->class_ids[i];
        char *t = text_buf + 160 * (size_t)n_legend, number[16];
        snprintf(number, sizeof number, "%d", k);
        const char *name = p->names && k >= 0 && k < p->nc && p->names[k] ? p->names[k] : number;
        if (p->curve_values) snprintf(t, 160, "%s %.3f", name, p->curve_values[i]);
        else snprintf(t, 160, "%s", name);
        texts[n_legend] = t, colors[n_legend] = color, widths[n_legend++] = 1.5;
    }
    if (p->mean) {
        yolo_color blue = {0, 0, 255};
        chart_draw_line(c, &a, p->px, p->mean, p->n_points, 4, blue, 0, 0);
        texts[n_legend] = p->mean_label ? p->mean_label : "all classes";
        colors[n_legend] = blue, widths[n_legend++] = 4;
    }
    chart_draw_legend(c, a.right + 25, a.top, n_legend, texts, colors, widths, 17);
    yolo_status st = yolo_canvas_save(c, p->path);
    free(texts), free(text_buf), free(colors), free(widths);
    yolo_canvas_free(c);
    return st;
}
