/* Ultralytics' annotations on a canvas (yolo/draw.h): the colour palettes
 * of ultralytics/utils/plotting.py `Colors`, Annotator.box_label's box and
 * label tab, keypoints with their skeleton, and the per-image count text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas_internal.h"
#include "yolo/draw.h"

static const uint32_t palette[20] = {0x042AFF, 0x0BDBEB, 0xF3F3F3, 0x00DFB7, 0x111F68, 0xFF6FDD, 0xFF444F,
                                     0xCCED00, 0x00F344, 0xBD00FF, 0x00B4FF, 0xDD00BA, 0x00FFFF, 0x26C000,
                                     0x01FFB3, 0x7D24FF, 0x7B0068, 0xFF1B6C, 0xFC6D2F, 0xA2FF0B};
/* The palette colours Annotator.get_txt_color writes dark text on. */
static const uint32_t dark_text_on[9] = {0x0BDBEB, 0xF3F3F3, 0x00DFB7, 0xFF6FDD, 0xCCED00,
                                         0x00F344, 0x00FFFF, 0x01FFB3, 0xA2FF0B};
static const uint8_t pose_palette[20][3] = {
    {255, 128, 0},   {255, 153, 51},  {255, 178, 102}, {230, 230, 0},   {255, 153, 255},
    {153, 204, 255}, {255, 102, 255}, {255, 51, 255},  {102, 178, 255}, {51, 153, 255},
    {255, 153, 153}, {255, 102, 102}, {255, 51, 51},   {153, 255, 153}, {102, 255, 102},
    {51, 255, 51},   {0, 255, 0},     {0, 0, 255},     {255, 0, 0},     {255, 255, 255}};

static yolo_color from_hex(uint32_t h) { return (yolo_color){(uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h}; }
static uint32_t to_hex(yolo_color c) { return (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b; }

yolo_color yolo_class_color(int i) {
    int k = i % 20;
    return from_hex(palette[k < 0 ? k + 20 : k]);
}

yolo_color yolo_pose_color(int i) {
    int k = i % 20;
    if (k < 0) k += 20;
    return (yolo_color){pose_palette[k][0], pose_palette[k][1], pose_palette[k][2]};
}

yolo_color yolo_label_text_color(yolo_color background) {
    for (size_t i = 0; i < sizeof dark_text_on / sizeof *dark_text_on; i++)
        if (to_hex(background) == dark_text_on[i]) return from_hex(0x111F68);
    return (yolo_color){255, 255, 255};
}

double yolo_draw_line_width(int width, int height, double line_width) {
    if (line_width > 0) return line_width;
    return fmax(round((width + height) / 2.0 * 0.003), 2.0);
}

/* The label font's em for a line width: a capital height of 22 * lw / 3
 * pixels, like cv2's Hershey font at Ultralytics' fontScale lw / 3. */
static double label_font_size(double line_width) { return 22.0 * line_width / 3.0 / 0.729; }

/* The label tab with its top-left at canvas pixel (x, y). */
static void label_tab(yolo_canvas *c, double x, double y, const char *label, yolo_color color, double line_width) {
    if (!label || !*label) return;
    double size = label_font_size(line_width), w, h;
    yolo_text_extent(c, label, size, &w, &h);
    double pad = fmax(2.0, line_width);
    canvas_raw_rect(c, x, y, x + w + pad, y + h + 2 * pad, color);
    canvas_raw_text(c, x + pad / 2, y + h + pad, label, size, yolo_label_text_color(color));
}

void yolo_draw_label_at(yolo_canvas *c, double x, double y, const char *label, yolo_color color, double line_width) {
    label_tab(c, canvas_raw_x(c, x), canvas_raw_y(c, y), label, color, line_width);
}

double yolo_draw_label_height(double line_width) { return 22.0 * line_width / 3.0 + 2 * fmax(2.0, line_width); }

void yolo_draw_box_label(yolo_canvas *c, const float xyxy[4], const char *label, yolo_color color,
                         double line_width) {
    yolo_draw_rect(c, xyxy[0], xyxy[1], xyxy[2], xyxy[3], line_width, color, 1.0);
    if (!label || !*label) return;
    double bounds[4];
    canvas_raw_bounds(c, bounds);
    double x = canvas_raw_x(c, fmin(xyxy[0], xyxy[2])), y = canvas_raw_y(c, fmin(xyxy[1], xyxy[3]));
    double size = label_font_size(line_width), w, h;
    yolo_text_extent(c, label, size, &w, &h);
    double pad = fmax(2.0, line_width), tab_w = w + pad, tab_h = h + 2 * pad;
    x -= line_width / 2, y -= line_width / 2; /* the tab sits on the outline's outer corner */
    bool outside = y - bounds[1] >= tab_h;   /* room above the box */
    if (x > bounds[2] - tab_w) x = bounds[2] - tab_w;
    if (x < bounds[0]) x = bounds[0];
    label_tab(c, x, outside ? y - tab_h : y, label, color, line_width);
}

void yolo_draw_object(yolo_canvas *c, const float xyxy[4], int cls, const char *name, float conf,
                      const yolo_draw_options *opt) {
    if (!c || !xyxy || !opt || !opt->boxes || opt->report_only) return;
    char number[16], label[160];
    if (!name) snprintf(number, sizeof number, "%d", cls), name = number;
    if (opt->show_conf) snprintf(label, sizeof label, "%s %.2f", name, (double)conf);
    else snprintf(label, sizeof label, "%s", name);
    yolo_draw_box_label(c, xyxy, opt->labels ? label : NULL, yolo_class_color(cls), opt->line_width);
}

void yolo_draw_top_classes(yolo_canvas *c, double x, double y, int k, const int *cls, const char *const *names,
                           const float *probs, const yolo_draw_options *opt) {
    if (!c || !cls || !opt || !opt->labels || opt->report_only) return;
    double step = yolo_draw_label_height(opt->line_width) / yolo_canvas_scale(c) * 1.1; /* canvas -> drawing */
    for (int j = 0; j < k && (j == 0 || !opt->compact); j++) {
        char number[16], label[160];
        const char *name = names ? names[j] : NULL;
        if (!name) snprintf(number, sizeof number, "%d", cls[j]), name = number;
        if (opt->show_conf && probs) snprintf(label, sizeof label, "%s %.2f", name, (double)probs[j]);
        else snprintf(label, sizeof label, "%s", name);
        yolo_draw_label_at(c, x, y + j * step, label, yolo_class_color(cls[j]), opt->line_width);
    }
}

void yolo_draw_keypoints(yolo_canvas *c, const float *kpts, int n, int dims, const int *skeleton, int n_limbs,
                         const int *kpt_color, const int *limb_color, yolo_color color, double radius,
                         double width) {
    if (!kpts || n < 1 || (dims != 2 && dims != 3)) return;
#define KPT_VISIBLE(k) (!(kpts[(k) * dims] == 0 && kpts[(k) * dims + 1] == 0) && (dims == 2 || kpts[(k) * dims + 2] >= 0.5f))
    for (int j = 0; skeleton && j < n_limbs; j++) {
        int a = skeleton[2 * j], b = skeleton[2 * j + 1];
        if (a < 0 || b < 0 || a >= n || b >= n || !KPT_VISIBLE(a) || !KPT_VISIBLE(b)) continue;
        yolo_draw_line(c, kpts[a * dims], kpts[a * dims + 1], kpts[b * dims], kpts[b * dims + 1], width,
                       limb_color ? yolo_pose_color(limb_color[j]) : color, 1.0);
    }
    for (int k = 0; k < n; k++)
        if (KPT_VISIBLE(k))
            yolo_draw_circle(c, kpts[k * dims], kpts[k * dims + 1], radius,
                             kpt_color ? yolo_pose_color(kpt_color[k]) : color, 1.0);
#undef KPT_VISIBLE
}

void yolo_draw_count_summary(const yolo_drawn_object *objects, int n, const char *const *names, int nc, char *buf,
                             size_t size) {
    if (!size) return;
    buf[0] = '\0';
    size_t used = 0;
    int lowest = -1; /* classes in ascending order, each once */
    for (;;) {
        int next = -1, count = 0;
        for (int i = 0; i < n; i++)
            if (objects[i].cls > lowest && (next < 0 || objects[i].cls < next)) next = objects[i].cls;
        if (next < 0) break;
        for (int i = 0; i < n; i++) count += objects[i].cls == next;
        char number[16];
        snprintf(number, sizeof number, "%d", next);
        const char *name = names && next < nc && names[next] ? names[next] : number;
        int k = snprintf(buf + used, size - used, "%s%d %s%s", used ? ", " : "", count, name, count > 1 ? "s" : "");
        if (k < 0 || (size_t)k >= size - used) break;
        used += (size_t)k;
        lowest = next;
    }
    if (!used) snprintf(buf, size, "(no detections)");
}
