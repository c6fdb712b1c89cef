/* Canvas-pixel drawing (no transform) for the core's own layouts: label
 * tabs, chart axes, mosaic borders. */
#ifndef YOLO_DRAW_CANVAS_INTERNAL_H
#define YOLO_DRAW_CANVAS_INTERNAL_H

#include "yolo/draw.h"

/* A drawing position in canvas pixels. */
double canvas_raw_x(const yolo_canvas *c, double x);
double canvas_raw_y(const yolo_canvas *c, double y);
/* The clip rectangle as x0, y0, x1, y1 (the whole canvas without one). */
void canvas_raw_bounds(const yolo_canvas *c, double bounds[4]);
void canvas_raw_rect(yolo_canvas *c, double x0, double y0, double x1, double y1, yolo_color color);
void canvas_raw_text(yolo_canvas *c, double x, double y, const char *text, double size, yolo_color color);

#endif
