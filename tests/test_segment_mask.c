/* The segment plugin's mask mathematics (plugins/segment/segment_mask.c,
 * compiled in by tests/segment.cmake) on hand-made cases:
 *   - rasterization: polygons filled at pixel centres, the overlap index
 *     mask (largest first, so a smaller instance covers a larger one), the
 *     per-instance masks, a box for an instance without a polygon, nearest
 *     resizing;
 *   - the mask loss of one positive (Ultralytics' single_mask_loss): values
 *     worked out by hand, crop_mask's pixel rule, and its gradient with
 *     respect to the coefficients and the prototypes against central
 *     differences;
 *   - predicted masks, mask IoU and the outline of a mask;
 *   - Segment26's semantic targets (the class on top, with overlap; the
 *     smallest covering instance, first on ties, without) and its
 *     BCEDice term: a value worked out by hand and the gradient against
 *     central differences. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/segment/segment_mask.h"
#include "test_util.h"

static void square(float *xy, float x1, float y1, float x2, float y2) {
    float s[8] = {x1, y1, x2, y1, x2, y2, x1, y2};
    memcpy(xy, s, sizeof s);
}

static int count_value(const int32_t *m, size_t n, int32_t v) {
    int c = 0;
    for (size_t i = 0; i < n; i++) c += m[i] == v;
    return c;
}

static void test_rasterize(void) {
    /* 8 x 8 mask: instance 0 a small square (columns/rows 2..3), instance 1
     * a big one around it (1..6). */
    yolo_instances ins;
    yolo_instances_init(&ins, 0, 0);
    float small[8], big[8];
    square(small, 0.25f, 0.25f, 0.5f, 0.5f);
    square(big, 0.125f, 0.125f, 0.875f, 0.875f);
    CHECK(yolo_instances_add(&ins, 0, NULL, small, 4, NULL) == YOLO_OK);
    CHECK(yolo_instances_add(&ins, 1, NULL, big, 4, NULL) == YOLO_OK);
    int32_t index[2 * 64];
    uint8_t scratch[3 * 64];
    CHECK(seg_rasterize(&ins, 0, 2, 8, 8, true, index, scratch) == YOLO_OK);
    CHECK_MSG(count_value(index, 64, 1) == 4 && count_value(index, 64, 2) == 32 && count_value(index, 64, 0) == 28,
              "overlap: %d, %d, %d pixels of 1, 2, 0", count_value(index, 64, 1), count_value(index, 64, 2),
              count_value(index, 64, 0));
    CHECK(index[2 * 8 + 2] == 1 && index[3 * 8 + 3] == 1 && index[1 * 8 + 1] == 2 && index[6 * 8 + 6] == 2);
    CHECK(index[0] == 0 && index[7 * 8 + 7] == 0 && index[1 * 8 + 7] == 0);
    /* the order of the list does not matter: the smaller one is on top */
    yolo_instances swapped;
    yolo_instances_init(&swapped, 0, 0);
    CHECK(yolo_instances_add(&swapped, 1, NULL, big, 4, NULL) == YOLO_OK);
    CHECK(yolo_instances_add(&swapped, 0, NULL, small, 4, NULL) == YOLO_OK);
    CHECK(seg_rasterize(&swapped, 0, 2, 8, 8, true, index, scratch) == YOLO_OK);
    CHECK(count_value(index, 64, 2) == 4 && count_value(index, 64, 1) == 32 && index[2 * 8 + 2] == 2);
    /* one instance of a range: k0..k1 */
    CHECK(seg_rasterize(&swapped, 1, 2, 8, 8, true, index, scratch) == YOLO_OK);
    CHECK(count_value(index, 64, 1) == 4 && count_value(index, 64, 0) == 60);
    yolo_instances_free(&swapped);
    /* without overlap: one 0/1 mask per instance */
    CHECK(seg_rasterize(&ins, 0, 2, 8, 8, false, index, scratch) == YOLO_OK);
    CHECK(count_value(index, 64, 1) == 4 && count_value(index + 64, 64, 1) == 36);
    CHECK(index[64 + 2 * 8 + 2] == 1 && index[2 * 8 + 2] == 1 && index[1 * 8 + 1] == 0);
    yolo_instances_free(&ins);

    /* No polygon: the box (cx cy w h) is the outline. */
    yolo_instances boxes;
    yolo_instances_init(&boxes, 0, 0);
    float box[4] = {0.5f, 0.5f, 0.5f, 0.25f}; /* columns 2..5, rows 3..4 */
    CHECK(yolo_instances_add(&boxes, 0, box, NULL, 0, NULL) == YOLO_OK);
    CHECK(seg_rasterize(&boxes, 0, 1, 8, 8, true, index, scratch) == YOLO_OK);
    CHECK_MSG(count_value(index, 64, 1) == 8 && index[3 * 8 + 2] == 1 && index[4 * 8 + 5] == 1 && index[2 * 8 + 2] == 0,
              "box fallback: %d pixels", count_value(index, 64, 1));
    yolo_instances_free(&boxes);

    /* A triangle at 16 x 16: (0,0) (16,0) (0,16) holds the centres with
     * x + y + 1 < 16 strictly inside: 15 + 14 + ... + 1 = 120 pixels (the
     * centres on the hypotenuse x + y = 15 fall on the edge). */
    yolo_instances tri;
    yolo_instances_init(&tri, 0, 0);
    float t[6] = {0, 0, 1, 0, 0, 1};
    CHECK(yolo_instances_add(&tri, 2, NULL, t, 3, NULL) == YOLO_OK);
    int32_t big_index[256];
    uint8_t big_scratch[2 * 256];
    CHECK(seg_rasterize(&tri, 0, 1, 16, 16, true, big_index, big_scratch) == YOLO_OK);
    int inside = count_value(big_index, 256, 1);
    CHECK_MSG(inside >= 120 && inside <= 136, "triangle: %d pixels", inside);
    CHECK(big_index[0] == 1 && big_index[15] == 0 && big_index[15 * 16] == 0 && big_index[255] == 0);
    yolo_instances_free(&tri);

    /* Nearest resize 2x2 -> 4x4 and 4x4 -> 2x2. */
    int32_t src[4] = {1, 2, 3, 4}, up[16], down[4];
    seg_resize_nearest(src, 2, 2, up, 4, 4);
    CHECK(up[0] == 1 && up[1] == 1 && up[2] == 2 && up[3] == 2 && up[8] == 3 && up[15] == 4);
    seg_resize_nearest(up, 4, 4, down, 2, 2);
    CHECK(memcmp(down, src, sizeof src) == 0);
}

static double bce(double z, double t) { return fmax(z, 0) - z * t + log1p(exp(-fabs(z))); }

static void test_loss_values(void) {
    /* 4 x 4 mask, 1 prototype. Prototype 0: z = 0 everywhere, BCE = ln 2 on
     * each of the 4 cropped pixels; mean over 16 pixels, / area 0.25 -> ln 2. */
    int32_t mask[16] = {0};
    mask[1 * 4 + 1] = mask[1 * 4 + 2] = 3; /* instance value 3: 2 of the 4 cropped pixels */
    float proto[16] = {0}, coef = 2.0f, scratch[16];
    seg_mask_target t = {.mask = mask, .value = 3, .box = {1, 1, 3, 3}, .area = 0.25f};
    double v = seg_mask_term(1, &coef, 1, proto, 4, 4, &t, 1.0, NULL, NULL, scratch);
    /* per-pixel terms are float (yolo/loss.h): within 2e-7 of each */
    CHECK_MSG(fabs(v - log(2.0)) < 2e-7, "zero logits: %.15g, want ln 2", v);
    /* Prototype 1 everywhere, coefficient 2: z = 2 on the crop. */
    for (int i = 0; i < 16; i++) proto[i] = 1.0f;
    v = seg_mask_term(1, &coef, 1, proto, 4, 4, &t, 1.0, NULL, NULL, scratch);
    double want = (2 * bce(2, 1) + 2 * bce(2, 0)) / 16 / 0.25;
    CHECK_MSG(fabs(v - want) < 2e-7 * want, "z = 2: %.15g, want %.15g", v, want);
    /* crop_mask keeps columns x with x1 <= x < x2: [0.5, 2.5) is {1, 2},
     * like [1, 3); [1, 2.01) is {1, 2} too; [1.01, 3) only {2}. */
    seg_mask_target u = t;
    u.box[0] = 0.5f, u.box[1] = 0.5f, u.box[2] = 2.5f, u.box[3] = 2.5f;
    CHECK(seg_mask_term(1, &coef, 1, proto, 4, 4, &u, 1.0, NULL, NULL, scratch) == v);
    u.box[0] = 1.01f, u.box[1] = 1, u.box[2] = 3, u.box[3] = 3; /* columns {2}, rows {1, 2} */
    want = (bce(2, 1) + bce(2, 0)) / 16 / 0.25;
    double got = seg_mask_term(1, &coef, 1, proto, 4, 4, &u, 1.0, NULL, NULL, scratch);
    CHECK_MSG(fabs(got - want) < 2e-7 * want, "narrow crop: %.15g, want %.15g", got, want);
    /* The area normalizes: half the area, twice the term. */
    u = t, u.area = 0.125f;
    CHECK(fabs(seg_mask_term(1, &coef, 1, proto, 4, 4, &u, 1.0, NULL, NULL, scratch) - 2 * v) < 1e-12);
    /* An empty crop or a zero area adds nothing. */
    u = t, u.box[2] = u.box[0];
    CHECK(seg_mask_term(1, &coef, 1, proto, 4, 4, &u, 1.0, NULL, NULL, scratch) == 0);
    u = t, u.area = 0;
    CHECK(seg_mask_term(1, &coef, 1, proto, 4, 4, &u, 1.0, NULL, NULL, scratch) == 0);
    /* Coefficients with a stride (the head's [nm, A] layout): nm = 2,
     * prototype 0 all 1, prototype 1 all -1: z = c0 - c1. */
    float p2[32], c2[6] = {3.0f, 0, 0, 1.0f, 0, 0}; /* anchor 0 of 3: c0 = 3, c1 = 1 */
    for (int i = 0; i < 16; i++) p2[i] = 1.0f, p2[16 + i] = -1.0f;
    double w = seg_mask_term(2, c2, 3, p2, 4, 4, &t, 1.0, NULL, NULL, scratch);
    CHECK_MSG(fabs(w - v) < 1e-9, "strided coefficients: %.15g, want %.15g", w, v);
}

static void test_loss_gradient(void) {
    enum { NM = 4, MH = 6, MW = 8, HW = MH * MW, STRIDE = 3 };
    float coef[NM * STRIDE], proto[NM * HW], scratch[HW];
    test_fill_uniform(coef, NM * STRIDE, 7, -1.0f, 1.0f);
    test_fill_uniform(proto, NM * HW, 8, -1.5f, 1.5f);
    int32_t mask[HW];
    for (int i = 0; i < HW; i++) mask[i] = (i * 7) % 3 == 0 ? 2 : 1;
    seg_mask_target t = {.mask = mask, .value = 2, .box = {1.3f, 0.6f, 6.2f, 5.0f}, .area = 0.3f};
    const double scale = 2.5;
    float gc[NM * STRIDE] = {0}, gp[NM * HW] = {0};
    (void)seg_mask_term(NM, coef, STRIDE, proto, MH, MW, &t, scale, gc, gp, scratch);
    int checked = 0, bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        float *x = pass ? proto : coef, *g = pass ? gp : gc;
        int n = pass ? NM * HW : NM * STRIDE;
        for (int i = 0; i < n; i++) {
            if (!pass && i % STRIDE) { /* other anchors: untouched */
                bad += g[i] != 0;
                continue;
            }
            float x0 = x[i], h = 1e-2f;
            x[i] = x0 + h;
            double lp = seg_mask_term(NM, coef, STRIDE, proto, MH, MW, &t, 1.0, NULL, NULL, scratch);
            x[i] = x0 - h;
            double lm = seg_mask_term(NM, coef, STRIDE, proto, MH, MW, &t, 1.0, NULL, NULL, scratch);
            x[i] = x0;
            double fd = scale * (lp - lm) / (2.0 * h);
            if (fabs(fd - g[i]) > 2e-4 + 2e-3 * fabs(fd)) {
                if (bad++ < 5) fprintf(stderr, "%s %d: grad %.8g, fd %.8g\n", pass ? "proto" : "coef", i, g[i], fd);
            }
            checked++;
        }
    }
    CHECK_MSG(bad == 0, "%d of %d gradient entries differ from central differences", bad, checked);
    /* Prototype pixels outside the crop get no gradient. */
    CHECK(gp[0] == 0 && gp[HW - 1] == 0);
}

static void test_predict_iou_contour(void) {
    /* Predicted mask: z = coef . proto cropped, > 0. */
    float proto[64], coef = 1.0f;
    for (int i = 0; i < 64; i++) proto[i] = (i % 8) < 4 ? 1.0f : -1.0f; /* left half positive */
    uint8_t pm[64];
    float box[4] = {2, 2, 6, 6};
    int n = seg_predict_mask(1, &coef, 1, proto, 8, 8, box, pm);
    CHECK_MSG(n == 8 && pm[2 * 8 + 2] && pm[5 * 8 + 3] && !pm[2 * 8 + 4] && !pm[1 * 8 + 2], "predicted %d pixels", n);
    /* Upsampled 2x (bilinear, align_corners=False, then > 0): the positive
     * logits of columns 2..3 reach columns 3..7 of 16 (0 beside them at
     * column 1, -1 at column 4), rows 2..5 reach rows 3..12: 50 pixels. */
    float z[64];
    uint8_t up[256];
    seg_predict_mask_upsampled(1, &coef, 1, proto, 8, 8, box, 16, 16, z, up);
    int count = 0;
    for (int i = 0; i < 256; i++) count += up[i];
    CHECK_MSG(up[4 * 16 + 4] && up[12 * 16 + 7] && up[3 * 16 + 3] && !up[4 * 16 + 8] && !up[2 * 16 + 4] &&
                  !up[13 * 16 + 4] && !up[4 * 16 + 2] && count == 50,
              "upsampled: %d pixels", count);

    /* mask_iou: gt 4 pixels, prediction 6, 2 shared: 2 / 8. */
    uint8_t gt[2 * 16] = {0}, pred[2 * 16] = {0};
    gt[0] = gt[1] = gt[4] = gt[5] = 1;
    pred[1] = pred[5] = pred[2] = pred[6] = pred[3] = pred[7] = 1;
    memcpy(pred + 16, gt, 16); /* prediction 1 equals gt 0 */
    float iou[4];
    seg_mask_iou(gt, 2, pred, 2, 16, iou); /* gt 1 is empty */
    CHECK_MSG(fabs(iou[0] - 0.25f) < 1e-6 && fabs(iou[1] - 1.0f) < 1e-6 && iou[2] == 0 && iou[3] == 0,
              "iou %g %g %g %g", iou[0], iou[1], iou[2], iou[3]);

    /* Outline of a 3 x 3 square (columns and rows 2..4): its 4 corners,
     * clockwise from the top left; a second, smaller component is ignored. */
    uint8_t m[64] = {0};
    for (int y = 2; y <= 4; y++)
        for (int x = 2; x <= 4; x++) m[y * 8 + x] = 1;
    m[7 * 8 + 7] = 1;
    float xy[2 * 64];
    int np = seg_mask_contour(m, 8, 8, xy, 64);
    float want[8] = {2, 2, 4, 2, 4, 4, 2, 4};
    CHECK_MSG(np == 4 && memcmp(xy, want, sizeof want) == 0, "square outline: %d points (%g,%g) (%g,%g) ...", np, xy[0],
              xy[1], xy[2], xy[3]);
    /* An L shape (columns 1..2 of rows 1..5, columns 3..5 of rows 4..5):
     * the inner corner is a diagonal step, so 7 points as cv2 gives them.
     * A single pixel: 1 point. Empty: 0. */
    memset(m, 0, sizeof m);
    for (int y = 1; y <= 5; y++) m[y * 8 + 1] = m[y * 8 + 2] = 1;
    for (int x = 3; x <= 5; x++) m[4 * 8 + x] = m[5 * 8 + x] = 1;
    np = seg_mask_contour(m, 8, 8, xy, 64);
    float want_l[14] = {1, 1, 2, 1, 2, 3, 3, 4, 5, 4, 5, 5, 1, 5};
    CHECK_MSG(np == 7 && memcmp(xy, want_l, sizeof want_l) == 0, "L outline: %d points", np);
    memset(m, 0, sizeof m);
    m[3 * 8 + 3] = 1;
    CHECK(seg_mask_contour(m, 8, 8, xy, 64) == 1 && xy[0] == 3 && xy[1] == 3);
    memset(m, 0, sizeof m);
    CHECK(seg_mask_contour(m, 8, 8, xy, 64) == 0);
}

static void test_semantic_classes(void) {
    /* 4 pixels; instances 0 (class 2, 3 px), 1 (class 0, 2 px), 2 (class 1, 2 px) */
    const int32_t cls[3] = {2, 0, 1};
    const int32_t index[4] = {0, 1, 2, 3}; /* overlap: the instance on top, +1 */
    int32_t out[4];
    seg_semantic_classes(index, true, 3, cls, 4, out, NULL);
    CHECK(out[0] == -1 && out[1] == 2 && out[2] == 0 && out[3] == 1);
    /* without overlap: pixel 1 covered by 0 and 1 (1 smaller), pixel 2 by 1 and 2 (same size: the first, 1),
     * pixel 3 by 0 and 2 (2 smaller), pixel 0 by none */
    const int32_t planes[12] = {0, 1, 1, 1, /* instance 0 */ 0, 1, 1, 0, /* 1 */ 0, 0, 1, 1 /* 2 */};
    int64_t area[3];
    seg_semantic_classes(planes, false, 3, cls, 4, out, area);
    CHECK_MSG(out[0] == -1 && out[1] == 0 && out[2] == 0 && out[3] == 1, "%d %d %d %d", out[0], out[1], out[2],
              out[3]);
}

/* BCEDice's per-image sums: at logits 0 every BCE term is ln 2, and a
 * channel whose target is empty has Dice 1 - 1 / (hw / 2 + 1); the
 * gradient against central differences of g_bce * BCE + g_dice * Dice. */
static void test_semantic_loss(void) {
    enum { NC = 2, HW = 6 };
    const int32_t cls[HW] = {0, 0, -1, 1, -1, 0};
    float x[NC * HW] = {0}, grad[NC * HW], scratch[2 * HW];
    double bce = 0, dice = 0;
    seg_semantic_image(NC, HW, x, cls, 0, 0, &bce, &dice, NULL, scratch);
    /* channel 0: I = 3 * 0.5, S = 3, T = 3 -> 1 - 4 / 7; channel 1: I = 0.5, S = 3, T = 1 -> 1 - 2 / 5 */
    const double want_dice = (1 - 4.0 / 7.0) + (1 - 2.0 / 5.0);
    CHECK_MSG(fabs(bce - NC * HW * log(2.0)) < 1e-6 && fabs(dice - want_dice) < 1e-6, "bce %.12g dice %.12g", bce,
              dice);
    for (int i = 0; i < NC * HW; i++) x[i] = (float)(0.9 * sin(1.7 * i + 0.3));
    const double gb = 0.3, gd = 1.7;
    bce = dice = 0;
    seg_semantic_image(NC, HW, x, cls, gb, gd, &bce, &dice, grad, scratch);
    double worst = 0;
    for (int i = 0; i < NC * HW; i++) {
        const float keep = x[i], h = 1e-3f;
        double f[2];
        for (int k = 0; k < 2; k++) {
            double b = 0, d = 0;
            x[i] = keep + (k ? -h : h);
            seg_semantic_image(NC, HW, x, cls, 0, 0, &b, &d, NULL, scratch);
            f[k] = gb * b + gd * d;
        }
        x[i] = keep;
        const double num = (f[0] - f[1]) / (2.0 * (double)h);
        worst = fmax(worst, fabs(num - grad[i]) / fmax(1.0, fabs(num)));
    }
    CHECK_MSG(worst < 1e-4, "semantic gradient: %.3g off central differences", worst);
}

int main(void) {
    test_rasterize();
    test_loss_values();
    test_semantic_classes();
    test_semantic_loss();
    test_loss_gradient();
    test_predict_iou_contour();
    return test_result("test_segment_mask");
}
