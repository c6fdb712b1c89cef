/* The canvas and drawing primitives of yolo/draw.h, on cairo: an RGB24
 * image surface, anti-aliased strokes, fills with alpha, DejaVu Sans text
 * through cairo's font selection (fontconfig), masks as alpha surfaces.
 * Files go out through the core's PNG/JPEG encoders (data/image.h). */
#include <cairo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "draw/canvas_internal.h"
#include "yolo/draw.h"

#define FONT_FAMILY "DejaVu Sans"
/* DejaVu Sans capital height per em, for text heights */
#define CAP_HEIGHT_PER_EM 0.729

struct yolo_canvas {
    cairo_surface_t *surface;
    cairo_t *cr;
    int width, height;
    double sx, sy, tx, ty; /* drawing -> canvas pixels */
    double clip[4];        /* x0, y0, x1, y1 */
};

static yolo_canvas *canvas_wrap(cairo_surface_t *surface, int width, int height) {
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surface);
        yolo_error(YOLO_ERR_NOMEM, "canvas %dx%d: %s", width, height, "cairo could not create the surface");
        return NULL;
    }
    yolo_canvas *c = calloc(1, sizeof *c);
    cairo_t *cr = cairo_create(surface);
    if (!c || cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        free(c);
        cairo_destroy(cr);
        cairo_surface_destroy(surface);
        yolo_error(YOLO_ERR_NOMEM, "canvas %dx%d: out of memory", width, height);
        return NULL;
    }
    c->surface = surface, c->cr = cr, c->width = width, c->height = height;
    c->sx = c->sy = 1.0;
    c->clip[2] = width, c->clip[3] = height;
    cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    return c;
}

static bool size_ok(int width, int height) { return width >= 1 && height >= 1 && width <= 32767 && height <= 32767; }

yolo_canvas *yolo_canvas_create(int width, int height, yolo_color fill) {
    if (!size_ok(width, height)) {
        yolo_error(YOLO_ERR_ARG, "canvas %dx%d: each side must be in 1..32767", width, height);
        return NULL;
    }
    yolo_canvas *c = canvas_wrap(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height), width, height);
    if (c) {
        cairo_set_source_rgb(c->cr, fill.r / 255.0, fill.g / 255.0, fill.b / 255.0);
        cairo_paint(c->cr);
    }
    return c;
}

/* An RGB24 surface holding image's pixels (the caller destroys it). */
static cairo_surface_t *surface_from_image(const yolo_image *image) {
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, image->width, image->height);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) return s;
    cairo_surface_flush(s);
    uint8_t *base = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < image->height; y++) {
        uint32_t *row = (uint32_t *)(void *)(base + (size_t)y * stride);
        const uint8_t *src = image->data + (size_t)y * image->width * 3;
        for (int x = 0; x < image->width; x++)
            row[x] = 0xff000000u | (uint32_t)src[3 * x] << 16 | (uint32_t)src[3 * x + 1] << 8 | src[3 * x + 2];
    }
    cairo_surface_mark_dirty(s);
    return s;
}

yolo_canvas *yolo_canvas_from_image(const yolo_image *image) {
    if (!image || !image->data || !size_ok(image->width, image->height)) {
        yolo_error(YOLO_ERR_ARG, "canvas from image: no image or a size out of 1..32767");
        return NULL;
    }
    return canvas_wrap(surface_from_image(image), image->width, image->height);
}

void yolo_canvas_free(yolo_canvas *c) {
    if (!c) return;
    cairo_destroy(c->cr);
    cairo_surface_destroy(c->surface);
    free(c);
}

int yolo_canvas_width(const yolo_canvas *c) { return c->width; }
int yolo_canvas_height(const yolo_canvas *c) { return c->height; }

yolo_status yolo_canvas_to_image(yolo_canvas *c, yolo_image *out) {
    yolo_status st = yolo_image_alloc(out, c->width, c->height);
    if (st) return st;
    cairo_surface_flush(c->surface);
    const uint8_t *base = cairo_image_surface_get_data(c->surface);
    int stride = cairo_image_surface_get_stride(c->surface);
    for (int y = 0; y < c->height; y++) {
        const uint32_t *row = (const uint32_t *)(const void *)(base + (size_t)y * stride);
        uint8_t *dst = out->data + (size_t)y * c->width * 3;
        for (int x = 0; x < c->width; x++) {
            dst[3 * x] = (uint8_t)(row[x] >> 16), dst[3 * x + 1] = (uint8_t)(row[x] >> 8), dst[3 * x + 2] = (uint8_t)row[x];
        }
    }
    return YOLO_OK;
}

yolo_status yolo_canvas_save(yolo_canvas *c, const char *path) {
    yolo_image image = {0};
    yolo_status st = yolo_canvas_to_image(c, &image);
    if (!st) st = yolo_image_save(&image, path);
    yolo_image_free(&image);
    return st;
}

void yolo_canvas_draw_image(yolo_canvas *c, const yolo_image *image, double x, double y, double w, double h) {
    if (!image || !image->data || image->width < 1 || image->height < 1 || w <= 0 || h <= 0) return;
    cairo_surface_t *s = surface_from_image(image);
    if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = c->cr;
        cairo_save(cr);
        cairo_rectangle(cr, x, y, w, h);
        cairo_clip(cr);
        cairo_translate(cr, x, y);
        cairo_scale(cr, w / image->width, h / image->height);
        cairo_set_source_surface(cr, s, 0, 0);
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD);
        cairo_paint(cr);
        cairo_restore(cr);
    }
    cairo_surface_destroy(s);
}

void yolo_canvas_set_transform(yolo_canvas *c, double sx, double sy, double tx, double ty, const double clip[4]) {
    c->sx = sx, c->sy = sy, c->tx = tx, c->ty = ty;
    cairo_reset_clip(c->cr);
    c->clip[0] = 0, c->clip[1] = 0, c->clip[2] = c->width, c->clip[3] = c->height;
    if (clip) {
        c->clip[0] = clip[0], c->clip[1] = clip[1], c->clip[2] = clip[0] + clip[2], c->clip[3] = clip[1] + clip[3];
        cairo_rectangle(c->cr, clip[0], clip[1], clip[2], clip[3]);
        cairo_clip(c->cr);
    }
}

double yolo_canvas_scale(const yolo_canvas *c) { return 0.5 * (fabs(c->sx) + fabs(c->sy)); }

static double cx(const yolo_canvas *c, double x) { return x * c->sx + c->tx; }
static double cy(const yolo_canvas *c, double y) { return y * c->sy + c->ty; }

static void set_color(cairo_t *cr, yolo_color color, double alpha) {
    cairo_set_source_rgba(cr, color.r / 255.0, color.g / 255.0, color.b / 255.0, alpha);
}

void yolo_draw_line(yolo_canvas *c, double x0, double y0, double x1, double y1, double width, yolo_color color,
                    double alpha) {
    cairo_t *cr = c->cr;
    cairo_move_to(cr, cx(c, x0), cy(c, y0));
    cairo_line_to(cr, cx(c, x1), cy(c, y1));
    cairo_set_line_width(cr, width);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    set_color(cr, color, alpha);
    cairo_stroke(cr);
}

void yolo_draw_polyline(yolo_canvas *c, const float *xy, int n, bool closed, double width, yolo_color color,
                        double alpha) {
    if (n < 2) return;
    cairo_t *cr = c->cr;
    cairo_move_to(cr, cx(c, xy[0]), cy(c, xy[1]));
    for (int i = 1; i < n; i++) cairo_line_to(cr, cx(c, xy[2 * i]), cy(c, xy[2 * i + 1]));
    if (closed) cairo_close_path(cr);
    cairo_set_line_width(cr, width);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    set_color(cr, color, alpha);
    cairo_stroke(cr);
}

void yolo_draw_rect(yolo_canvas *c, double x0, double y0, double x1, double y1, double width, yolo_color color,
                    double alpha) {
    cairo_t *cr = c->cr;
    double ax = cx(c, x0), ay = cy(c, y0), bx = cx(c, x1), by = cy(c, y1);
    cairo_rectangle(cr, fmin(ax, bx), fmin(ay, by), fabs(bx - ax), fabs(by - ay));
    set_color(cr, color, alpha);
    if (width <= 0) {
        cairo_fill(cr);
        return;
    }
    cairo_set_line_width(cr, width);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
    cairo_stroke(cr);
}

void yolo_draw_polygon_fill(yolo_canvas *c, const float *xy, int n, yolo_color color, double alpha) {
    if (n < 3) return;
    cairo_t *cr = c->cr;
    cairo_move_to(cr, cx(c, xy[0]), cy(c, xy[1]));
    for (int i = 1; i < n; i++) cairo_line_to(cr, cx(c, xy[2 * i]), cy(c, xy[2 * i + 1]));
    cairo_close_path(cr);
    cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD);
    set_color(cr, color, alpha);
    cairo_fill(cr);
}

void yolo_draw_circle(yolo_canvas *c, double x, double y, double radius, yolo_color color, double alpha) {
    cairo_t *cr = c->cr;
    cairo_new_sub_path(cr);
    cairo_arc(cr, cx(c, x), cy(c, y), radius, 0, 2 * M_PI);
    set_color(cr, color, alpha);
    cairo_fill(cr);
}

void yolo_draw_text(yolo_canvas *c, double x, double y, const char *text, double size, yolo_color color,
                    double angle) {
    if (!text || !*text || size <= 0) return;
    cairo_t *cr = c->cr;
    cairo_save(cr);
    cairo_set_font_size(cr, size);
    cairo_move_to(cr, cx(c, x), cy(c, y));
    if (angle != 0) cairo_rotate(cr, -angle * M_PI / 180.0);
    set_color(cr, color, 1.0);
    cairo_show_text(cr, text);
    cairo_new_path(cr);
    cairo_restore(cr);
}

void yolo_text_extent(yolo_canvas *c, const char *text, double size, double *width, double *height) {
    cairo_text_extents_t e = {0};
    cairo_save(c->cr);
    cairo_set_font_size(c->cr, size);
    if (text && *text) cairo_text_extents(c->cr, text, &e);
    cairo_restore(c->cr);
    if (width) *width = e.x_advance;
    if (height) *height = size * CAP_HEIGHT_PER_EM;
}

void yolo_draw_mask(yolo_canvas *c, const uint8_t *mask, int mask_w, int mask_h, const float place[4],
                    yolo_color color, double alpha) {
    if (!mask || mask_w < 1 || mask_h < 1 || place[2] <= 0 || place[3] <= 0) return;
    cairo_surface_t *a8 = cairo_image_surface_create(CAIRO_FORMAT_A8, mask_w, mask_h);
    if (cairo_surface_status(a8) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(a8);
        return;
    }
    cairo_surface_flush(a8);
    uint8_t *base = cairo_image_surface_get_data(a8);
    int stride = cairo_image_surface_get_stride(a8);
    for (int y = 0; y < mask_h; y++)
        for (int x = 0; x < mask_w; x++) base[(size_t)y * stride + x] = mask[(size_t)y * mask_w + x] ? 255 : 0;
    cairo_surface_mark_dirty(a8);
    cairo_pattern_t *pattern = cairo_pattern_create_for_surface(a8);
    /* canvas pixel X -> mask pixel u = ((X - tx) / sx - place.x) * mask_w / place.w */
    double kx = mask_w / (place[2] * c->sx), ky = mask_h / (place[3] * c->sy);
    cairo_matrix_t m;
    cairo_matrix_init(&m, kx, 0, 0, ky, -(c->tx / c->sx + place[0]) * mask_w / place[2],
                      -(c->ty / c->sy + place[1]) * mask_h / place[3]);
    cairo_pattern_set_matrix(pattern, &m);
    cairo_pattern_set_filter(pattern, CAIRO_FILTER_BILINEAR);
    set_color(c->cr, color, alpha);
    cairo_mask(c->cr, pattern);
    cairo_pattern_destroy(pattern);
    cairo_surface_destroy(a8);
}

double canvas_raw_x(const yolo_canvas *c, double x) { return cx(c, x); }
double canvas_raw_y(const yolo_canvas *c, double y) { return cy(c, y); }
void canvas_raw_bounds(const yolo_canvas *c, double bounds[4]) { memcpy(bounds, c->clip, sizeof c->clip); }

void canvas_raw_rect(yolo_canvas *c, double x0, double y0, double x1, double y1, yolo_color color) {
    cairo_rectangle(c->cr, x0, y0, x1 - x0, y1 - y0);
    set_color(c->cr, color, 1.0);
    cairo_fill(c->cr);
}

void canvas_raw_text(yolo_canvas *c, double x, double y, const char *text, double size, yolo_color color) {
    double sx = c->sx, sy = c->sy, tx = c->tx, ty = c->ty;
    c->sx = c->sy = 1, c->tx = c->ty = 0;
    yolo_draw_text(c, x, y, text, size, color, 0);
    c->sx = sx, c->sy = sy, c->tx = tx, c->ty = ty;
}
