/* yolo/draw.h — drawing results onto images, and the charts of a run.
 *
 * A task draws its own predictions (boxes, masks, class text, keypoints)
 * through these calls, so a third-party task gets pictures (predict's
 * saved images, val_batch*_pred.jpg) without core changes. The core draws
 * with the same calls: labels of training batches, results.png, labels.jpg.
 * Anti-aliased lines, fills with alpha and text (DejaVu Sans) come from
 * cairo; PNG and JPEG files are written by the core's image codecs.
 *
 * Coordinates: a task draws in the pixels of the image its predictions
 * refer to (the original image, as yolo_box_to_original gives them). The
 * core places that image on the canvas with a transform (a mosaic tile, a
 * thumbnail): only positions are transformed, line widths and text sizes
 * are canvas pixels. Ultralytics' colours (Colors, Annotator.box_label)
 * and label style are the defaults. */
#ifndef YOLO_DRAW_H
#define YOLO_DRAW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "yolo/data.h"
#include "yolo/error.h"
#include "yolo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct yolo_color {
    uint8_t r, g, b;
} yolo_color;

/* Ultralytics' palette (20 colours, Colors()(i) in RGB), class i's colour. */
YOLO_API yolo_color yolo_class_color(int i);
/* Ultralytics' pose palette (20 colours), keypoint/limb colour i. */
YOLO_API yolo_color yolo_pose_color(int i);
/* The label text colour on a `background` (Annotator.get_txt_color: dark
 * text on the palette's light colours, white otherwise). */
YOLO_API yolo_color yolo_label_text_color(yolo_color background);

/* ---- canvas ---- */

typedef struct yolo_canvas yolo_canvas;

/* A canvas of width x height filled with `fill`; NULL with yolo_error set
 * when out of memory or the size is not in 1..32767. */
YOLO_API yolo_canvas *yolo_canvas_create(int width, int height, yolo_color fill);
/* A canvas holding a copy of image's pixels. */
YOLO_API yolo_canvas *yolo_canvas_from_image(const yolo_image *image);
YOLO_API void yolo_canvas_free(yolo_canvas *c);
YOLO_API int yolo_canvas_width(const yolo_canvas *c);
YOLO_API int yolo_canvas_height(const yolo_canvas *c);
/* The canvas's pixels as an RGB image (*out allocated; free with yolo_image_free). */
YOLO_API yolo_status yolo_canvas_to_image(yolo_canvas *c, yolo_image *out);
/* Writes the canvas as PNG or JPEG (quality 95) by the file's extension. */
YOLO_API yolo_status yolo_canvas_save(yolo_canvas *c, const char *path);
/* Copies image onto the canvas at (x, y) scaled to w x h pixels (bilinear). */
YOLO_API void yolo_canvas_draw_image(yolo_canvas *c, const yolo_image *image, double x, double y, double w, double h);

/* Drawing coordinates (x, y) land on canvas pixel (x*sx + tx, y*sy + ty);
 * the default is the identity. Drawing is clipped to `clip` (x, y, w, h in
 * canvas pixels; NULL: the whole canvas). */
YOLO_API void yolo_canvas_set_transform(yolo_canvas *c, double sx, double sy, double tx, double ty, const double clip[4]);
/* The scale a task may use to size what it draws (the mean of sx, sy). */
YOLO_API double yolo_canvas_scale(const yolo_canvas *c);

/* ---- primitives (positions in drawing coordinates, sizes in canvas pixels) ---- */

/* Opacity: 1 opaque; every primitive takes one. */
YOLO_API void yolo_draw_line(yolo_canvas *c, double x0, double y0, double x1, double y1, double width, yolo_color color,
                    double alpha);
/* A polyline through n (x, y) points; closed joins the last to the first. */
YOLO_API void yolo_draw_polyline(yolo_canvas *c, const float *xy, int n, bool closed, double width, yolo_color color,
                        double alpha);
/* Rectangle (x0, y0)-(x1, y1): an outline of `width` pixels centred on the
 * edges, or filled when width <= 0. */
YOLO_API void yolo_draw_rect(yolo_canvas *c, double x0, double y0, double x1, double y1, double width, yolo_color color,
                    double alpha);
/* The polygon of n (x, y) points, filled (even-odd). */
YOLO_API void yolo_draw_polygon_fill(yolo_canvas *c, const float *xy, int n, yolo_color color, double alpha);
YOLO_API void yolo_draw_circle(yolo_canvas *c, double x, double y, double radius, yolo_color color, double alpha);

/* Text of `size` canvas pixels (the font's em), left baseline at (x, y)
 * (a drawing position); `angle` in degrees counter-clockwise. */
YOLO_API void yolo_draw_text(yolo_canvas *c, double x, double y, const char *text, double size, yolo_color color,
                    double angle);
/* The extent of text at size: width, and height above the baseline (the
 * capital height), in canvas pixels. */
YOLO_API void yolo_text_extent(yolo_canvas *c, const char *text, double size, double *width, double *height);

/* A translucent fill of the pixels where mask != 0. The mask (mask_w x
 * mask_h bytes, row-major) covers the rectangle place = (x, y, w, h) in
 * drawing coordinates, scaled bilinearly (so a low-resolution mask gets
 * smooth edges). */
YOLO_API void yolo_draw_mask(yolo_canvas *c, const uint8_t *mask, int mask_w, int mask_h, const float place[4],
                    yolo_color color, double alpha);

/* ---- Ultralytics' annotations ---- */

/* The line width Ultralytics picks for an image of width x height
 * (max(round((w + h) / 2 * 0.003), 2)); line_width > 0 overrides it. */
YOLO_API double yolo_draw_line_width(int width, int height, double line_width);

/* Annotator.box_label: the box (xyxy, drawing coordinates) as an outline
 * of line_width canvas pixels, and when label is non-NULL the label on a
 * filled tab of the box's colour above the box's top-left corner (inside
 * it when there is no room above; shifted left at the right edge), its
 * capitals 22 * line_width / 3 pixels high (cv2's Hershey font at
 * Ultralytics' fontScale line_width / 3), in yolo_label_text_color. */
YOLO_API void yolo_draw_box_label(yolo_canvas *c, const float xyxy[4], const char *label, yolo_color color,
                         double line_width);
/* The same label tab alone, its top-left at the drawing position (x, y). */
YOLO_API void yolo_draw_label_at(yolo_canvas *c, double x, double y, const char *label, yolo_color color, double line_width);
/* A label tab's height in canvas pixels (to stack tabs). */
YOLO_API double yolo_draw_label_height(double line_width);

/* Keypoints (n points of dims 2 or 3, drawing coordinates; a point with
 * visibility < 0.5 or at (0, 0) is not drawn) as filled circles in the pose
 * palette colour kpt_color[k] (NULL: class colour `color`), and limbs
 * skeleton[2j], skeleton[2j+1] (0-based point indices, n_limbs pairs)
 * as lines in limb_color[j] (NULL: `color`). radius and width in pixels. */
YOLO_API void yolo_draw_keypoints(yolo_canvas *c, const float *kpts, int n, int dims, const int *skeleton, int n_limbs,
                         const int *kpt_color, const int *limb_color, yolo_color color, double radius,
                         double width);

/* ---- what predict asks a task to draw (yolo_task_hooks.draw_predictions) ---- */

typedef struct yolo_draw_options {
    float conf;         /* draw predictions with confidence >= conf */
    bool labels;        /* show_labels: the class name on each object */
    bool show_conf;     /* show_conf: the confidence after the name */
    bool boxes;         /* show_boxes: the box outlines */
    double line_width;  /* canvas pixels (already resolved by the core) */
    bool retina_masks;  /* masks at the resolution of the image drawn on */
    bool compact;       /* a small mosaic tile: the essentials only (classify: top-1, not top-5) */
    bool report_only;   /* draw nothing, only report the objects (val's save_json) */
} yolo_draw_options;

/* One drawn object, for save_crop and the per-image summary line. */
typedef struct yolo_drawn_object {
    int32_t cls;
    float conf;
    float box[4]; /* xyxy in the original image's pixels */
} yolo_drawn_object;

/* What a draw_predictions hook reports. Both are owned by the task until
 * its next call. summary: predict's per-image text ("2 persons, 1 bus",
 * "cat 0.91, dog 0.05"); NULL: the core counts the objects' classes. */
typedef struct yolo_drawn_result {
    int n;
    const yolo_drawn_object *objects;
    const char *summary;
} yolo_drawn_result;

/* One object as predict draws it (yolo_det_draw_detection, the host API's
 * yolo_result_plot): its box xyxy (drawing coordinates) as an outline in
 * class cls's palette colour with Ultralytics' label "name 0.87" ("name"
 * without opt->show_conf, no label without opt->labels); nothing without
 * opt->boxes or with opt->report_only. */
YOLO_API void yolo_draw_object(yolo_canvas *c, const float xyxy[4], int cls, const char *name, float conf,
                               const yolo_draw_options *opt);
/* Classify's top-k list (Results.plot of probs): k label tabs "name 0.87"
 * ("name" without opt->show_conf), tab j in class cls[j]'s colour, stacked
 * down from the drawing position (x, y); the first alone with
 * opt->compact; nothing without opt->labels or with opt->report_only. */
YOLO_API void yolo_draw_top_classes(yolo_canvas *c, double x, double y, int k, const int *cls,
                                    const char *const *names, const float *probs, const yolo_draw_options *opt);

/* "2 persons, 1 bus" from n objects' classes (Ultralytics' verbose
 * counts: classes in ascending order, an `s` for more than one), or
 * "(no detections)"; written into buf. names may be NULL (numbers). */
YOLO_API void yolo_draw_count_summary(const yolo_drawn_object *objects, int n, const char *const *names, int nc, char *buf,
                             size_t size);

#ifdef __cplusplus
}
#endif
#endif
