/* Line charts (chart.h): axes, ticks, lines and legends in canvas pixels. */
#include "draw/chart.h"

#include <math.h>
#include <stdio.h>

#include "draw/canvas_internal.h"

static const yolo_color black = {0, 0, 0};

yolo_color chart_cycle_color(int i) {
    static const uint32_t tab10[10] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                       0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
    uint32_t h = tab10[(i % 10 + 10) % 10];
    return (yolo_color){(uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h};
}

void chart_range(const double *v, int n, double *lo, double *hi) {
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) a = fmin(a, v[i]), b = fmax(b, v[i]);
    if (!(a <= b)) a = 0, b = 1;
    double span = b - a;
    if (span <= 0) span = a != 0 ? fabs(a) * 0.1 : 1.0, a -= span / 2, b += span / 2;
    *lo = a - 0.05 * (b - a), *hi = b + 0.05 * (b - a);
}

/* A tick step of 1, 2 or 5 x 10^k giving about `want` ticks over span. */
static double tick_step(double span, int want) {
    double raw = span / want, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

static double map_x(const chart_axes *a, double x) { return a->left + (x - a->xmin) / (a->xmax - a->xmin) * (a->right - a->left); }
static double map_y(const chart_axes *a, double y) { return a->bottom - (y - a->ymin) / (a->ymax - a->ymin) * (a->bottom - a->top); }

static void tick_label(double v, double step, char *buf, size_t size) {
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) < step * 1e-6) v = 0;
    snprintf(buf, size, "%.*f", decimals > 6 ? 6 : decimals, v);
}

static void draw_ticks(yolo_canvas *c, const chart_axes *a, bool vertical) {
    double lo = vertical ? a->ymin : a->xmin, hi = vertical ? a->ymax : a->xmax;
    int want = vertical ? 5 : (a->right - a->left) / a->font > 25 ? 6 : 4;
    double step = tick_step(hi - lo, want), tick = a->font * 0.35;
    for (double v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
        char text[32];
        double w, h;
        tick_label(v, step, text, sizeof text);
        yolo_text_extent(c, text, a->font, &w, &h);
        if (vertical) {
            double y = map_y(a, v);
            yolo_draw_line(c, a->left - tick, y, a->left, y, 1, black, 1);
            yolo_draw_text(c, a->left - tick - w - 3, y + h / 2, text, a->font, black, 0);
        } else {
            double x = map_x(a, v);
            yolo_draw_line(c, x, a->bottom, x, a->bottom + tick, 1, black, 1);
            yolo_draw_text(c, x - w / 2, a->bottom + tick + h + 3, text, a->font, black, 0);
        }
    }
}

void chart_draw_axes(yolo_canvas *c, const chart_axes *a, const char *title, const char *xlabel, const char *ylabel) {
    yolo_draw_rect(c, a->left, a->top, a->right, a->bottom, 1, black, 1);
    if (!a->hide_x_ticks) draw_ticks(c, a, false);
    draw_ticks(c, a, true);
    double w, h, big = a->font * 1.2;
    if (title) {
        yolo_text_extent(c, title, big, &w, &h);
        yolo_draw_text(c, (a->left + a->right - w) / 2, a->top - h * 0.8, title, big, black, 0);
    }
    if (xlabel) {
        yolo_text_extent(c, xlabel, a->font * 1.1, &w, &h);
        yolo_draw_text(c, (a->left + a->right - w) / 2, a->bottom + a->font * 3.2, xlabel, a->font * 1.1, black, 0);
    }
    if (ylabel) {
        yolo_text_extent(c, ylabel, a->font * 1.1, &w, &h);
        yolo_draw_text(c, a->left - a->font * 4.0, (a->top + a->bottom + w) / 2, ylabel, a->font * 1.1, black, 90);
    }
}

void chart_draw_line(yolo_canvas *c, const chart_axes *a, const double *x, const double *y, int n, double width,
                     yolo_color color, double dash, double marker) {
    double clip[4] = {a->left, a->top, a->right - a->left, a->bottom - a->top};
    yolo_canvas_set_transform(c, 1, 1, 0, 0, clip);
    for (int i = 1; i < n; i++) {
        if (!isfinite(y[i - 1]) || !isfinite(y[i])) continue;
        double x0 = map_x(a, x[i - 1]), y0 = map_y(a, y[i - 1]), x1 = map_x(a, x[i]), y1 = map_y(a, y[i]);
        if (dash <= 0) {
            yolo_draw_line(c, x0, y0, x1, y1, width, color, 1);
            continue;
        }
        double len = hypot(x1 - x0, y1 - y0); /* dots along the segment */
        for (double s = 0; s < len; s += 2 * dash) {
            double e = fmin(s + dash, len);
            yolo_draw_line(c, x0 + (x1 - x0) * s / len, y0 + (y1 - y0) * s / len, x0 + (x1 - x0) * e / len,
                           y0 + (y1 - y0) * e / len, width, color, 1);
        }
    }
    for (int i = 0; marker > 0 && i < n; i++)
        if (isfinite(y[i])) yolo_draw_circle(c, map_x(a, x[i]), map_y(a, y[i]), marker, color, 1);
    yolo_canvas_set_transform(c, 1, 1, 0, 0, NULL);
}

void chart_draw_legend(yolo_canvas *c, double x, double y, int n, const char *const *texts, const yolo_color *colors,
                       const double *widths, double font) {
    double wmax = 0, w, h, row = font * 1.45, sample = font * 2.2;
    for (int i = 0; i < n; i++) {
        yolo_text_extent(c, texts[i], font, &w, &h);
        wmax = fmax(wmax, w);
    }
    if (n < 1) return;
    double box_w = sample + wmax + font * 1.6, box_h = row * n + font * 0.6;
    yolo_draw_rect(c, x, y, x + box_w, y + box_h, 0, (yolo_color){255, 255, 255}, 0.8);
    yolo_draw_rect(c, x, y, x + box_w, y + box_h, 1, (yolo_color){204, 204, 204}, 1);
    for (int i = 0; i < n; i++) {
        double cy = y + font * 0.3 + row * (i + 0.5);
        yolo_draw_line(c, x + font * 0.5, cy, x + font * 0.5 + sample, cy, widths ? widths[i] : 2, colors[i], 1);
        yolo_draw_text(c, x + sample + font, cy + font * 0.36, texts[i], font, black, 0);
    }
}
