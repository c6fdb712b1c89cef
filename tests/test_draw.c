/* The drawing layer (yolo/draw.h, yolo/plot.h): pixels of boxes, labels
 * and masks, the palette, files that decode at their documented sizes, the
 * detection confusion matrix on a hand-made image, and the count text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "test_util.h"
#include "yolo/detection.h"
#include "yolo/draw.h"
#include "yolo/plot.h"

static const yolo_color grey = {114, 114, 114};

static const uint8_t *px(const yolo_image *im, int x, int y) { return im->data + 3 * ((size_t)y * im->width + x); }
static int near(const uint8_t *p, yolo_color c, int tol) {
    return abs(p[0] - c.r) <= tol && abs(p[1] - c.g) <= tol && abs(p[2] - c.b) <= tol;
}

static void test_palette(void) {
    yolo_color c0 = yolo_class_color(0), c1 = yolo_class_color(21);
    CHECK(c0.r == 0x04 && c0.g == 0x2A && c0.b == 0xFF); /* Ultralytics' first colour #042AFF */
    CHECK(c1.r == 0x0B && c1.g == 0xDB && c1.b == 0xEB); /* 21 % 20 = 1: #0BDBEB */
    yolo_color dark = yolo_label_text_color(c1), white = yolo_label_text_color(c0);
    CHECK(dark.r == 0x11 && dark.g == 0x1F && dark.b == 0x68);
    CHECK(white.r == 255 && white.g == 255 && white.b == 255);
    CHECK(yolo_draw_line_width(640, 480, 0) == 2 && yolo_draw_line_width(2000, 2000, 0) == 6);
    CHECK(yolo_draw_line_width(100, 100, 3.5) == 3.5);
}

/* A box's colour is on its edges and not inside; a label tab sits above it. */
static void test_box_pixels(void) {
    yolo_canvas *c = yolo_canvas_create(200, 160, grey);
    CHECK(c != NULL);
    if (!c) return;
    yolo_color color = yolo_class_color(6);
    float box[4] = {40, 60, 160, 140};
    yolo_draw_box_label(c, box, "person 0.91", color, 4);
    yolo_image im = {0};
    CHECK(yolo_canvas_to_image(c, &im) == YOLO_OK);
    CHECK(near(px(&im, 100, 60), color, 2) && near(px(&im, 100, 140), color, 2)); /* top, bottom edges */
    CHECK(near(px(&im, 40, 100), color, 2) && near(px(&im, 160, 100), color, 2)); /* left, right */
    int inside_changed = 0;
    for (int y = 64; y < 137; y++)
        for (int x = 44; x < 157; x++) inside_changed += !near(px(&im, x, y), grey, 0);
    CHECK_MSG(inside_changed == 0, "%d pixels inside the box changed", inside_changed);
    /* the label tab: box colour just above the top-left corner, with text pixels in it */
    CHECK(near(px(&im, 41, 55), color, 2));
    int text = 0;
    for (int y = 30; y < 58; y++)
        for (int x = 40; x < 140; x++) text += near(px(&im, x, y), yolo_label_text_color(color), 40);
    CHECK_MSG(text > 20, "%d label text pixels", text);
    yolo_image_free(&im);
    /* a box at the top edge: the tab goes inside the box */
    yolo_canvas_free(c);
    c = yolo_canvas_create(200, 160, grey);
    float top[4] = {10, 2, 120, 100};
    yolo_draw_box_label(c, top, "car", color, 2);
    CHECK(yolo_canvas_to_image(c, &im) == YOLO_OK);
    CHECK(near(px(&im, 30, 18), color, 2) && near(px(&im, 30, 24), grey, 0)); /* tab below the top edge */
    yolo_image_free(&im);
    yolo_canvas_free(c);
}

/* A mask fill changes only the pixels inside the mask (to the blend). */
static void test_mask_pixels(void) {
    const int W = 64, H = 48;
    uint8_t *mask = calloc((size_t)W * H, 1);
    for (int y = 10; y < 30; y++)
        for (int x = 5; x < 40; x++) mask[y * W + x] = (x - 5) + (y - 10) < 40; /* a clipped triangle */
    yolo_canvas *c = yolo_canvas_create(W, H, grey);
    yolo_color color = {255, 0, 0};
    yolo_draw_mask(c, mask, W, H, (const float[]){0, 0, (float)W, (float)H}, color, 0.5);
    yolo_image im = {0};
    CHECK(yolo_canvas_to_image(c, &im) == YOLO_OK);
    int wrong_in = 0, wrong_out = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *p = px(&im, x, y);
            if (mask[y * W + x]) wrong_in += !(abs(p[0] - 184) <= 2 && abs(p[1] - 57) <= 2 && abs(p[2] - 57) <= 2);
            else wrong_out += !near(p, grey, 0);
        }
    CHECK_MSG(wrong_in == 0 && wrong_out == 0, "%d mask pixels not blended, %d outside changed", wrong_in, wrong_out);
    yolo_image_free(&im);
    /* through a transform: a 2x mask on a 2x-scaled placement keeps inside/outside */
    yolo_canvas_set_transform(c, 0.5, 0.5, 0, 0, NULL);
    yolo_canvas_free(c);
    free(mask);
}

/* Files decode at their documented sizes; the transform moves drawing. */
static void test_files(const char *dir) {
    char path[1024];
    yolo_canvas *c = yolo_canvas_create(120, 90, grey);
    yolo_canvas_set_transform(c, 2, 2, 10, 10, (const double[]){10, 10, 100, 70});
    yolo_draw_rect(c, 0, 0, 20, 20, 0, yolo_class_color(3), 1); /* canvas 10..50 */
    yolo_draw_text(c, 5, 25, "abc", 14, (yolo_color){0, 0, 0}, 0);
    snprintf(path, sizeof path, "%s/a.png", dir);
    CHECK(yolo_canvas_save(c, path) == YOLO_OK);
    snprintf(path, sizeof path, "%s/a.jpg", dir);
    CHECK(yolo_canvas_save(c, path) == YOLO_OK);
    yolo_canvas_free(c);
    yolo_image im = {0};
    snprintf(path, sizeof path, "%s/a.png", dir);
    CHECK(yolo_image_load_file(path, &im) == YOLO_OK && im.width == 120 && im.height == 90);
    if (im.data) CHECK(near(px(&im, 30, 30), yolo_class_color(3), 0) && near(px(&im, 55, 30), grey, 0));
    yolo_image_free(&im);
    snprintf(path, sizeof path, "%s/a.jpg", dir);
    CHECK(yolo_image_load_file(path, &im) == YOLO_OK && im.width == 120 && im.height == 90);
    yolo_image_free(&im);
}

/* The confusion matrix of one hand-made image (Ultralytics' process_batch). */
static void test_confusion(const char *dir) {
    yolo_confusion m;
    CHECK(yolo_confusion_init(&m, 3, 1) == YOLO_OK);
    float gt[4 * 4] = {0, 0, 10, 10, 20, 20, 30, 30, 40, 40, 50, 50, 60, 60, 70, 70};
    int32_t gc[4] = {0, 1, 2, 2};
    yolo_detection d[6] = {
        {{0, 0, 10, 10}, 0.9f, 0, 0},     /* gt 0, right class */
        {{0, 0, 10, 9}, 0.8f, 0, 1},      /* a duplicate of gt 0: background prediction */
        {{20, 20, 30, 31}, 0.7f, 2, 2},   /* gt 1 (class 1) predicted as class 2 */
        {{40, 40, 50, 50}, 0.2f, 2, 3},   /* gt 2 but under conf 0.25: ignored, gt 2 missed */
        {{90, 90, 99, 99}, 0.6f, 1, 4},   /* nothing there: background prediction */
        {{60, 60, 66, 66}, 0.5f, 2, 5},   /* gt 3 at IoU 0.36 < 0.45: missed, and a background prediction */
    };
    CHECK(yolo_det_confusion_add_image(&m, d, 6, 4, gc, gt, YOLO_CONFUSION_CONF, YOLO_CONFUSION_IOU) == YOLO_OK);
    /* expected counts[p * 4 + t], background = 3 */
    int64_t want[16] = {0};
    want[0 * 4 + 0] = 1; /* class 0 right */
    want[0 * 4 + 3] = 1; /* duplicate */
    want[2 * 4 + 1] = 1; /* 1 seen as 2 */
    want[3 * 4 + 2] = 2; /* two class-2 gts missed */
    want[1 * 4 + 3] = 1; /* class 1 on background */
    want[2 * 4 + 3] = 1; /* class 2 on background */
    for (int i = 0; i < 16; i++) CHECK_MSG(m.counts[i] == want[i], "cell %d: %lld, expected %lld", i, (long long)m.counts[i], (long long)want[i]);
    /* an image without gts: every confident detection is background */
    CHECK(yolo_det_confusion_add_image(&m, d, 6, 0, NULL, NULL, 0.25f, 0.45f) == YOLO_OK);
    CHECK(m.counts[0 * 4 + 3] == 3 && m.counts[2 * 4 + 3] == 3 && m.counts[1 * 4 + 3] == 2);
    CHECK(yolo_confusion_plot(&m, (const char *const[]){"a", "b", "c"}, dir) == YOLO_OK);
    char path[1024];
    yolo_image im = {0};
    snprintf(path, sizeof path, "%s/confusion_matrix_normalized.png", dir);
    CHECK(yolo_image_load_file(path, &im) == YOLO_OK && im.width == 1600 && im.height == 1200);
    yolo_image_free(&im);
    /* printed: a row per predicted class and background, a column per true one */
    char text[4096] = "";
    FILE *f = tmpfile();
    yolo_confusion_print(&m, (const char *const[]){"a", "b", "c"}, f);
    rewind(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    CHECK_MSG(strstr(text, "Confusion matrix (rows: predicted, columns: true)") &&
                  strstr(text, "\n               a          1          0          0          3\n") &&
                  strstr(text, "\n      background          0          0          2          0\n"),
              "printed:\n%s", text);
    yolo_confusion_free(&m);
    /* COCO's 80 classes and background: one line instead of 81 rows of 81 cells */
    CHECK(yolo_confusion_init(&m, 80, 1) == YOLO_OK);
    f = tmpfile();
    yolo_confusion_print(&m, NULL, f);
    rewind(f);
    got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    CHECK_MSG(strcmp(text, "Confusion matrix: 81 x 81, too wide to print here; plots=True draws it "
                           "(confusion_matrix.png)\n") == 0,
              "printed:\n%s", text);
    yolo_confusion_free(&m);
}

static void test_curves(const char *dir) {
    double x[100], y[200], mean[100];
    for (int i = 0; i < 100; i++) x[i] = i / 99.0, y[i] = 1 - x[i] * x[i], y[100 + i] = 1 - x[i], mean[i] = (y[i] + y[100 + i]) / 2;
    char path[1024];
    snprintf(path, sizeof path, "%s/BoxPR_curve.png", dir);
    yolo_curve_plot p = {.path = path, .xlabel = "Recall", .ylabel = "Precision", .n_points = 100, .px = x,
                         .n_curves = 2, .py = y, .class_ids = (const int[]){0, 1},
                         .curve_values = (const double[]){0.9, 0.5}, .names = (const char *const[]){"cat", "dog"},
                         .nc = 2, .mean = mean, .mean_label = "all classes 0.700 mAP@0.5"};
    CHECK(yolo_plot_curves(&p) == YOLO_OK);
    yolo_image im = {0};
    CHECK(yolo_image_load_file(path, &im) == YOLO_OK && im.width == 1350 && im.height == 900);
    yolo_image_free(&im);
}

/* The four Box curves from an AP accumulator, at their sizes, with the
 * per-class curves behind them (recall 1 for a class found whole). */
static void test_det_curves(const char *dir) {
    yolo_ap_stats st;
    yolo_ap_stats_init(&st, YOLO_AP_N_IOU);
    uint8_t tp[3 * YOLO_AP_N_IOU];
    memset(tp, 1, sizeof tp);
    memset(tp + 2 * YOLO_AP_N_IOU, 0, YOLO_AP_N_IOU); /* the third prediction is wrong */
    CHECK(yolo_ap_stats_add_image(&st, 3, tp, (const float[]){0.9f, 0.8f, 0.3f}, (const int32_t[]){0, 1, 1}, 2,
                                  (const int32_t[]){0, 1}) == YOLO_OK);
    yolo_ap_summary sum;
    CHECK(yolo_ap_summarize(&st, 2, &sum) == YOLO_OK);
    CHECK(sum.n_curves == 2 && sum.curve_cls[0] == 0 && sum.curve_cls[1] == 1);
    if (sum.n_curves == 2) {
        const double *r0 = sum.curves + 1 * YOLO_AP_CURVE_POINTS; /* class 0 recall over confidence */
        CHECK(fabs(r0[0] - 1.0) < 1e-9 && r0[YOLO_AP_CURVE_POINTS - 1] == 0.0);
        const double *pr1 = sum.curves + (4 + 3) * YOLO_AP_CURVE_POINTS; /* class 1 precision at recall 0 */
        CHECK(fabs(pr1[0] - 1.0) < 1e-9);
    }
    CHECK(yolo_det_plot_curves(&sum, "Box", (const char *const[]){"cat", "dog"}, 2, dir) == YOLO_OK);
    static const char *const files[4] = {"BoxPR_curve.png", "BoxF1_curve.png", "BoxP_curve.png", "BoxR_curve.png"};
    for (int k = 0; k < 4; k++) {
        char path[1024];
        yolo_image im = {0};
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        CHECK_MSG(yolo_image_load_file(path, &im) == YOLO_OK && im.width == 1350 && im.height == 900, "%s", files[k]);
        yolo_image_free(&im);
    }
    yolo_ap_summary_free(&sum);
    yolo_ap_stats_free(&st);
}

static void test_summary(void) {
    yolo_drawn_object o[4] = {{1, 0.9f, {0}}, {0, 0.8f, {0}}, {1, 0.7f, {0}}, {5, 0.5f, {0}}};
    char buf[128];
    yolo_draw_count_summary(o, 4, (const char *const[]){"person", "bus"}, 2, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "1 person, 2 buss, 1 5") == 0, "%s", buf); /* Ultralytics' plain 's' */
    yolo_draw_count_summary(o, 0, NULL, 0, buf, sizeof buf);
    CHECK(strcmp(buf, "(no detections)") == 0);
}

int main(void) {
    char dir[512];
    test_temp_dir(dir, sizeof dir);
    test_palette();
    test_box_pixels();
    test_mask_pixels();
    test_files(dir);
    test_confusion(dir);
    test_curves(dir);
    test_det_curves(dir);
    test_summary();
    return test_result("test_draw");
}
