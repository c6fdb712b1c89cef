/* results.png (plots.h): every results.csv column over the epochs, with
 * the Gaussian-smoothed line of Ultralytics' plot_results
 * (scipy.ndimage.gaussian_filter1d, sigma 3, mode reflect, truncate 4). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/chart.h"
#include "draw/plots.h"

#define CELL 480
#define MAX_COLUMNS 64
#define MAX_ROWS 100000

/* gaussian_filter1d(y, 3) with scipy's 'reflect' borders (d c b a | a b c d). */
static void smooth(const double *y, int n, double *out) {
    const double sigma = 3;
    const int radius = (int)(4 * sigma + 0.5);
    double w[2 * 13 + 1], sum = 0;
    for (int k = -radius; k <= radius; k++) sum += w[k + radius] = exp(-0.5 * k * k / (sigma * sigma));
    for (int i = 0; i < n; i++) {
        double acc = 0;
        for (int k = -radius; k <= radius; k++) {
            int j = i + k, period = 2 * n;
            j = ((j % period) + period) % period;
            if (j >= n) j = period - 1 - j;
            acc += w[k + radius] * y[j];
        }
        out[i] = acc / sum;
    }
}

typedef struct csv_table {
    int n_cols, n_rows;
    char names[MAX_COLUMNS][64];
    double *v; /* [n_rows, n_cols] */
} csv_table;

static yolo_status read_csv(const char *path, csv_table *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) return yolo_error(YOLO_ERR_IO, "%s: cannot read", path);
    char line[8192];
    yolo_status st = YOLO_OK;
    if (!fgets(line, sizeof line, f)) st = yolo_error(YOLO_ERR_FORMAT, "%s: empty", path);
    for (char *tok = st ? NULL : strtok(line, ",\r\n"); tok && t->n_cols < MAX_COLUMNS; tok = strtok(NULL, ",\r\n")) {
        while (*tok == ' ') tok++;
        snprintf(t->names[t->n_cols++], sizeof t->names[0], "%s", tok);
    }
    int cap = 0;
    while (!st && fgets(line, sizeof line, f) && t->n_rows < MAX_ROWS) {
        if (t->n_rows == cap) {
            cap = cap ? 2 * cap : 64;
            double *v = realloc(t->v, (size_t)cap * t->n_cols * sizeof *v);
            if (!v) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", path);
            else t->v = v;
        }
        if (st) break;
        double *row = t->v + (size_t)t->n_rows * t->n_cols;
        char *p = line;
        for (int c = 0; c < t->n_cols; c++) {
            char *end;
            row[c] = strtod(p, &end);
            if (end == p) row[c] = NAN;
            p = strchr(end, ',');
            if (!p) {
                for (int r = c + 1; r < t->n_cols; r++) row[r] = NAN;
                break;
            }
            p++;
        }
        t->n_rows++;
    }
    fclose(f);
    if (!st && (t->n_cols < 3 || t->n_rows < 1)) st = yolo_error(YOLO_ERR_FORMAT, "%s: no epochs to plot", path);
    if (st) free(t->v), t->v = NULL;
    return st;
}

yolo_status yolo_plot_results(const char *run_dir) {
    char path[2048];
    snprintf(path, sizeof path, "%s/results.csv", run_dir);
    csv_table t;
    yolo_status st = read_csv(path, &t);
    if (st) return st;
    /* a chart per column after the epoch, but the time (as Ultralytics' plot_results) */
    int col[MAX_COLUMNS], charts = 0;
    for (int k = 1; k < t.n_cols; k++)
        if (strcmp(t.names[k], "time") != 0) col[charts++] = k;
    int rows = charts > 1 ? 2 : 1, cols = (charts + rows - 1) / rows;
    yolo_canvas *c = yolo_canvas_create(cols * CELL, rows * CELL, (yolo_color){255, 255, 255});
    double *x = malloc((size_t)t.n_rows * sizeof *x), *y = malloc((size_t)t.n_rows * sizeof *y),
           *ys = malloc((size_t)t.n_rows * sizeof *ys);
    if (!c || !x || !y || !ys) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", path);
    for (int k = 0; !st && k < charts; k++) {
        for (int r = 0; r < t.n_rows; r++) x[r] = t.v[(size_t)r * t.n_cols], y[r] = t.v[(size_t)r * t.n_cols + col[k]];
        smooth(y, t.n_rows, ys);
        double ox = (k % cols) * CELL, oy = (k / cols) * CELL;
        chart_axes a = {.left = ox + 70, .top = oy + 40, .right = ox + CELL - 15, .bottom = oy + CELL - 45, .font = 15};
        chart_range(x, t.n_rows, &a.xmin, &a.xmax);
        chart_range(y, t.n_rows, &a.ymin, &a.ymax);
        chart_draw_axes(c, &a, t.names[col[k]], NULL, NULL);
        yolo_color blue = chart_cycle_color(0), orange = chart_cycle_color(1);
        chart_draw_line(c, &a, x, y, t.n_rows, 2, blue, 0, t.n_rows < 200 ? 3.5 : 0);
        if (t.n_rows > 1) chart_draw_line(c, &a, x, ys, t.n_rows, 2, orange, 2, 0);
        if (k == 0)
            chart_draw_legend(c, a.right - 130, a.top + 8, 2, (const char *const[]){"results", "smooth"},
                              (const yolo_color[]){blue, orange}, NULL, 14);
    }
    snprintf(path, sizeof path, "%s/results.png", run_dir);
    if (!st) st = yolo_canvas_save(c, path);
    yolo_canvas_free(c);
    free(x), free(y), free(ys), free(t.v);
    return st;
}
