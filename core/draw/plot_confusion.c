/* The confusion matrix (yolo/plot.h): counts, their pack for DDP, the
 * printed table and Ultralytics' two heatmaps (ConfusionMatrix.plot:
 * Blues, counts or column-normalized fractions, cells under 0.005 blank,
 * "True" across, "Predicted" down, a background row and column for
 * detection). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "draw/chart.h"
#include "yolo/plot.h"

#define CM_W 1600
#define CM_H 1200

yolo_status yolo_confusion_init(yolo_confusion *m, int nc, int background) {
    memset(m, 0, sizeof *m);
    if (nc < 1) return yolo_error(YOLO_ERR_ARG, "confusion matrix: %d classes", nc);
    m->nc = nc;
    m->n = nc + (background ? 1 : 0);
    m->counts = calloc((size_t)m->n * m->n, sizeof *m->counts);
    return m->counts ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "confusion matrix of %d classes: out of memory", nc);
}

void yolo_confusion_free(yolo_confusion *m) {
    free(m->counts);
    memset(m, 0, sizeof *m);
}

void yolo_confusion_add(yolo_confusion *m, int predicted, int truth) {
    if (m->counts && predicted >= 0 && predicted < m->n && truth >= 0 && truth < m->n)
        m->counts[(size_t)predicted * m->n + truth]++;
}

yolo_status yolo_confusion_pack(const yolo_confusion *m, FILE *out) {
    int32_t n = m->n;
    fwrite(&n, sizeof n, 1, out);
    fwrite(m->counts, sizeof *m->counts, (size_t)n * n, out);
    return ferror(out) ? yolo_error(YOLO_ERR_NOMEM, "confusion matrix pack: write failed") : YOLO_OK;
}

yolo_status yolo_confusion_unpack_merge(yolo_confusion *m, const void *bytes, size_t size, size_t *used) {
    int32_t n;
    if (size < sizeof n) return yolo_error(YOLO_ERR_FORMAT, "confusion matrix pack: %zu bytes, truncated", size);
    memcpy(&n, bytes, sizeof n);
    size_t need = sizeof n + (size_t)n * n * sizeof(int64_t);
    if (n != m->n || size < need)
        return yolo_error(YOLO_ERR_FORMAT, "confusion matrix pack: %d classes in %zu bytes, expected %d", (int)n,
                          size, m->n);
    const uint8_t *p = (const uint8_t *)bytes + sizeof n;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        int64_t v;
        memcpy(&v, p + i * sizeof v, sizeof v);
        m->counts[i] += v;
    }
    if (used) *used = need;
    return YOLO_OK;
}

static const char *class_name(const yolo_confusion *m, const char *const *names, int k, char *buf, size_t size) {
    if (k == m->nc) return "background";
    if (names && names[k]) return names[k];
    snprintf(buf, size, "%d", k);
    return buf;
}

void yolo_confusion_print(const yolo_confusion *m, const char *const *names, FILE *f) {
    char buf[16];
    if (m->n > YOLO_CONFUSION_PRINT_MAX) {
        fprintf(f, "Confusion matrix: %d x %d, too wide to print here; plots=True draws it (confusion_matrix.png)\n",
                m->n, m->n);
        return;
    }
    fprintf(f, "Confusion matrix (rows: predicted, columns: true)\n%16s", "");
    for (int t = 0; t < m->n; t++) fprintf(f, " %10.10s", class_name(m, names, t, buf, sizeof buf));
    fputc('\n', f);
    for (int p = 0; p < m->n; p++) {
        fprintf(f, "%16.16s", class_name(m, names, p, buf, sizeof buf));
        for (int t = 0; t < m->n; t++) fprintf(f, " %10lld", (long long)m->counts[(size_t)p * m->n + t]);
        fputc('\n', f);
    }
}

/* matplotlib's Blues at v in [0, 1]. */
static yolo_color blues(double v) {
    static const uint8_t stops[9][3] = {{247, 251, 255}, {222, 235, 247}, {198, 219, 239}, {158, 202, 225}, {107, 174, 214},
                                        {66, 146, 198},  {33, 113, 181},  {8, 81, 156},    {8, 48, 107}};
    v = fmin(fmax(v, 0), 1) * 8;
    int i = v >= 8 ? 7 : (int)v;
    double t = v - i;
    yolo_color c;
    c.r = (uint8_t)lround(stops[i][0] + t * (stops[i + 1][0] - stops[i][0]));
    c.g = (uint8_t)lround(stops[i][1] + t * (stops[i + 1][1] - stops[i][1]));
    c.b = (uint8_t)lround(stops[i][2] + t * (stops[i + 1][2] - stops[i][2]));
    return c;
}

static yolo_status plot_one(const yolo_confusion *m, const char *const *names, bool normalize, const char *path) {
    int n = m->n;
    double *v = malloc((size_t)n * n * sizeof *v);
    yolo_canvas *c = v ? yolo_canvas_create(CM_W, CM_H, (yolo_color){255, 255, 255}) : NULL;
    if (!c) {
        free(v);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", path);
    }
    double vmax = 0;
    for (int t = 0; t < n; t++) {
        double col = 0;
        for (int p = 0; p < n; p++) col += (double)m->counts[(size_t)p * n + t];
        for (int p = 0; p < n; p++) {
            double x = (double)m->counts[(size_t)p * n + t] / (normalize ? col + 1e-9 : 1.0);
            v[(size_t)p * n + t] = x < 0.005 ? NAN : x;
            if (x >= 0.005) vmax = fmax(vmax, x);
        }
    }
    double left = 260, top = 90, right = CM_W - 200, bottom = CM_H - 230;
    double cw = (right - left) / n, ch = (bottom - top) / n;
    yolo_color dark = {38, 38, 38}, white = {255, 255, 255};
    double cell_font = fmin(fmin(cw, ch) * 0.32, 22), tick_font = fmin(fmax(fmin(cw, ch) * 0.6, 8), 18);
    for (int p = 0; p < n; p++)
        for (int t = 0; t < n; t++) {
            double x = v[(size_t)p * n + t];
            if (isnan(x)) continue;
            double k = vmax > 0 ? x / vmax : 0;
            yolo_draw_rect(c, left + t * cw, top + p * ch, left + (t + 1) * cw, top + (p + 1) * ch, 0, blues(k), 1);
            if (n >= 30) continue;
            char text[32];
            snprintf(text, sizeof text, normalize ? "%.2f" : "%.0f", x);
            double w, h;
            yolo_text_extent(c, text, cell_font, &w, &h);
            yolo_draw_text(c, left + (t + 0.5) * cw - w / 2, top + (p + 0.5) * ch + h / 2, text, cell_font,
                           k > 0.5 ? white : dark, 0);
        }
    yolo_draw_rect(c, left, top, right, bottom, 1, dark, 1);
    char buf[16];
    for (int k = 0; k < n && n < 99; k++) { /* tick labels: names across (rotated) and down */
        const char *name = class_name(m, names, k, buf, sizeof buf);
        double w, h;
        yolo_text_extent(c, name, tick_font, &w, &h);
        yolo_draw_text(c, left + (k + 0.5) * cw + h / 2, bottom + 8 + w, name, tick_font, dark, 90);
        yolo_draw_text(c, left - 8 - w, top + (k + 0.5) * ch + h / 2, name, tick_font, dark, 0);
    }
    double w, h;
    const char *title = normalize ? "Confusion Matrix Normalized" : "Confusion Matrix";
    yolo_text_extent(c, title, 28, &w, &h);
    yolo_draw_text(c, (left + right - w) / 2, top - 30, title, 28, dark, 0);
    yolo_text_extent(c, "True", 24, &w, &h);
    yolo_draw_text(c, (left + right - w) / 2, CM_H - 25, "True", 24, dark, 0);
    yolo_text_extent(c, "Predicted", 24, &w, &h);
    yolo_draw_text(c, 40, (top + bottom + w) / 2, "Predicted", 24, dark, 90);
    /* colour bar */
    double bx = right + 40, bw = 36;
    for (int i = 0; i < 200; i++)
        yolo_draw_rect(c, bx, bottom - (i + 1) * (bottom - top) / 200, bx + bw, bottom - i * (bottom - top) / 200 + 0.5,
                       0, blues(i / 199.0), 1);
    yolo_draw_rect(c, bx, top, bx + bw, bottom, 1, dark, 1);
    for (int i = 0; i <= 4; i++) {
        char text[32];
        snprintf(text, sizeof text, normalize || vmax < 10 ? "%.2f" : "%.0f", vmax * i / 4);
        yolo_draw_text(c, bx + bw + 8, bottom - i * (bottom - top) / 4 + 7, text, 18, dark, 0);
    }
    yolo_status st = yolo_canvas_save(c, path);
    yolo_canvas_free(c);
    free(v);
    return st;
}

yolo_status yolo_confusion_plot(const yolo_confusion *m, const char *const *names, const char *dir) {
    char path[2048];
    snprintf(path, sizeof path, "%s/confusion_matrix.png", dir);
    yolo_status st = plot_one(m, names, false, path);
    snprintf(path, sizeof path, "%s/confusion_matrix_normalized.png", dir);
    if (!st) st = plot_one(m, names, true, path);
    return st;
}
