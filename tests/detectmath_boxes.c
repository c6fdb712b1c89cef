/* Box maths of the core detection API (yolo/detection.h): conversions, IoU, CIoU (values from the
 * published definition) and its gradient, anchors and the DFL decode. */
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"
#include "detectmath_util.h"

/* Expected values from the CIoU definition (Zheng et al. 2020, as written in
 * Ultralytics' bbox_iou with eps = 1e-7 on the heights, union and c^2),
 * evaluated in double with python3:
 *
 *   def ciou(b1, b2, eps=1e-7):
 *       w1, h1 = b1[2]-b1[0], b1[3]-b1[1]+eps
 *       w2, h2 = b2[2]-b2[0], b2[3]-b2[1]+eps
 *       inter = max(min(b1[2],b2[2])-max(b1[0],b2[0]),0)*max(min(b1[3],b2[3])-max(b1[1],b2[1]),0)
 *       iou = inter/(w1*h1 + w2*h2 - inter + eps)
 *       cw = max(b1[2],b2[2])-min(b1[0],b2[0]); ch = max(b1[3],b2[3])-min(b1[1],b2[1])
 *       rho2 = ((b2[0]+b2[2]-b1[0]-b1[2])**2 + (b2[1]+b2[3]-b1[1]-b1[3])**2)/4
 *       v = 4/math.pi**2*(math.atan(w2/h2)-math.atan(w1/h1))**2
 *       alpha = v/(v-iou+(1+eps))
 *       return iou-(rho2/(cw**2+ch**2+eps)+v*alpha)
 *
 * By hand for the first pair: IoU = 25/175 = 1/7, rho^2/c^2 = 50/450 = 1/9,
 * v = 0, so CIoU = 1/7 - 1/9 = 2/63 = 0.031746. For the disjoint pair:
 * IoU 0, rho^2/c^2 = 10.25/25 = 0.41, v = 4/pi^2 (atan 2 - pi/4)^2 = 0.041956,
 * alpha v = 0.0016895, CIoU = -0.4116895. The metrics IoU (box_iou, eps
 * only in the denominator) is listed beside. */
static const struct {
    double a[4], b[4], ciou, iou;
} known[] = {
    {{0, 0, 10, 10}, {5, 5, 15, 15}, 0.0317460300564374, 0.14285714277551},
    {{0, 0, 4, 2}, {1, 1, 3, 5}, 0.0178167749324118, 0.142857141836735},
    {{0, 0, 1, 1}, {2, 2, 4, 3}, -0.4116894592652, 0},
    {{1, 2, 3, 4}, {1, 2, 3, 4}, 0.999999875000016, 0.999999975000001},
    {{0, 0, 10, 10}, {2, 2, 6, 8}, 0.234678538044401, 0.23999999976},
    {{10, 20, 50, 40}, {15, 18, 45, 60}, 0.373406047556639, 0.410958904081441},
};

static void test_known_values(void) {
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        DM_NEAR(yolo_box_ciou(known[i].a, known[i].b), known[i].ciou, 1e-9);
        DM_NEAR(yolo_box_ciou(known[i].b, known[i].a), known[i].ciou, 1e-9); /* symmetric */
        float a[4], b[4], iou;
        for (int k = 0; k < 4; k++) a[k] = (float)known[i].a[k], b[k] = (float)known[i].b[k];
        yolo_box_iou_matrix(a, 1, b, 1, &iou);
        DM_NEAR(iou, known[i].iou, 1e-6);
    }
    /* A 2x3 matrix lands row-major [na, nb]. */
    float a[8] = {0, 0, 10, 10, 0, 0, 1, 1}, b[12] = {5, 5, 15, 15, 2, 2, 4, 3, 0, 0, 10, 10}, m[6];
    yolo_box_iou_matrix(a, 2, b, 3, m);
    DM_NEAR(m[0], 1.0 / 7, 1e-6);
    DM_NEAR(m[2], 1.0, 1e-6);
    DM_NEAR(m[4], 0.0, 1e-9);
    DM_NEAR(m[5], 0.01, 1e-6);
}

static void test_conversions(void) {
    float xywh[8] = {10, 20, 4, 6, 0.5f, 0.5f, 1, 1}, xyxy[8], back[8];
    yolo_box_xywh_to_xyxy(xywh, xyxy, 2);
    DM_NEAR(xyxy[0], 8, 0);
    DM_NEAR(xyxy[1], 17, 0);
    DM_NEAR(xyxy[2], 12, 0);
    DM_NEAR(xyxy[3], 23, 0);
    DM_NEAR(xyxy[4], 0, 0);
    DM_NEAR(xyxy[7], 1, 0);
    yolo_box_xyxy_to_xywh(xyxy, back, 2);
    for (int i = 0; i < 8; i++) DM_NEAR(back[i], xywh[i], 1e-6);

    /* Letterbox 640x480 -> 320x320: gain 0.5, pad y 40. */
    float box[4] = {10, 50, 330, 290};
    yolo_box_unletterbox(box, 1, 0.5f, 0, 40, 640, 480);
    DM_NEAR(box[0], 20, 1e-5);
    DM_NEAR(box[1], 20, 1e-5);
    DM_NEAR(box[2], 640, 1e-5);
    DM_NEAR(box[3], 480, 1e-5);

    /* Points of the same letterbox (polygons, keypoints): mapped and clipped; no meta: clipped only. */
    yolo_image_meta meta = {640, 480, 0.5f, 0.5f, 0, 40};
    yolo_batch batch = {.n = 1, .height = 320, .width = 320, .meta = &meta};
    float pts[6] = {10, 50, 330, 300, -4, 39}, W = 0, H = 0;
    DM_CHECK(yolo_points_to_original(&batch, 0, pts, 3, &W, &H) == YOLO_OK && W == 640 && H == 480, "size %gx%g",
             (double)W, (double)H);
    DM_NEAR(pts[0], 20, 1e-5);
    DM_NEAR(pts[1], 20, 1e-5);
    DM_NEAR(pts[2], 640, 1e-5);
    DM_NEAR(pts[3], 480, 1e-5);
    DM_NEAR(pts[4], 0, 0);
    DM_NEAR(pts[5], 0, 0);
    batch.meta = NULL;
    float raw[2] = {400, 12};
    DM_CHECK(yolo_points_to_original(&batch, 0, raw, 1, NULL, NULL) == YOLO_OK, "%s", yolo_last_error());
    DM_NEAR(raw[0], 320, 0);
    DM_NEAR(raw[1], 12, 0);
    meta.ratio_x = 0; /* a meta without a usable ratio is an error naming the image */
    batch.meta = &meta;
    DM_CHECK(yolo_points_to_original(&batch, 0, raw, 1, NULL, NULL) == YOLO_ERR_ARG &&
                 strstr(yolo_last_error(), "image 0"),
             "%s", yolo_last_error());
}

/* CIoU written out again, with alpha passed in: autograd treats alpha as a
 * constant, so finite differences must hold it fixed. Returns alpha(b1) too. */
static double ciou_alpha_fixed(const double *b1, const double *b2, double alpha_in, double *alpha_out) {
    const double eps = 1e-7, k = 4 / (3.14159265358979323846 * 3.14159265358979323846);
    double w1 = b1[2] - b1[0], h1 = b1[3] - b1[1] + eps, w2 = b2[2] - b2[0], h2 = b2[3] - b2[1] + eps;
    double inter =
        fmax(fmin(b1[2], b2[2]) - fmax(b1[0], b2[0]), 0) * fmax(fmin(b1[3], b2[3]) - fmax(b1[1], b2[1]), 0);
    double iou = inter / (w1 * h1 + w2 * h2 - inter + eps);
    double cw = fmax(b1[2], b2[2]) - fmin(b1[0], b2[0]), ch = fmax(b1[3], b2[3]) - fmin(b1[1], b2[1]);
    double sx = b2[0] + b2[2] - b1[0] - b1[2], sy = b2[1] + b2[3] - b1[1] - b1[3];
    double v = k * pow(atan(w2 / h2) - atan(w1 / h1), 2);
    if (alpha_out) *alpha_out = v / (v - iou + (1 + eps));
    return iou - ((sx * sx + sy * sy) / 4 / (cw * cw + ch * ch + eps) + v * alpha_in);
}

/* The analytic gradient against central differences, on random box pairs
 * (overlapping, disjoint and nested ones all occur). */
static void test_ciou_gradient(void) {
    uint64_t rng = 42;
    for (int trial = 0; trial < 300; trial++) {
        double b1[4], b2[4];
        for (int k = 0; k < 2; k++) {
            b1[k] = dm_uniform(&rng, 0, 10), b2[k] = dm_uniform(&rng, 0, 10);
            b1[k + 2] = b1[k] + dm_uniform(&rng, 0.5, 8), b2[k + 2] = b2[k] + dm_uniform(&rng, 0.5, 8);
        }
        double g[4], alpha;
        double c = yolo_box_ciou_grad(b1, b2, g);
        ciou_alpha_fixed(b1, b2, 0, &alpha);
        DM_NEAR(c, ciou_alpha_fixed(b1, b2, alpha, NULL), 1e-12);
        for (int k = 0; k < 4; k++) {
            const double h = 1e-6;
            double p[4], m[4];
            memcpy(p, b1, sizeof p), memcpy(m, b1, sizeof m);
            p[k] += h, m[k] -= h;
            double fd =
                (ciou_alpha_fixed(p, b2, alpha, NULL) - ciou_alpha_fixed(m, b2, alpha, NULL)) / (2 * h);
            DM_CHECK(fabs(fd - g[k]) <= 1e-6 * (1 + fabs(fd)), "trial %d coord %d: analytic %.9g, fd %.9g",
                     trial, k, g[k], fd);
        }
    }
}

static void test_anchors_and_decode(void) {
    int h[2] = {2, 1}, w[2] = {3, 2};
    float strides[2] = {8, 16};
    int A = yolo_det_anchor_count(2, h, w);
    DM_CHECK(A == 8, "A = %d", A);
    float xy[16], st[8];
    DM_CHECK(yolo_det_make_anchors(2, h, w, strides, 0.5f, xy, st) == YOLO_OK, "make_anchors");
    /* Level 0 row-major over (y, x), then level 1. */
    const float want[16] = {0.5f, 0.5f, 1.5f, 0.5f, 2.5f, 0.5f, 0.5f, 1.5f,
                            1.5f, 1.5f, 2.5f, 1.5f, 0.5f, 0.5f, 1.5f, 0.5f};
    for (int i = 0; i < 16; i++) DM_NEAR(xy[i], want[i], 0);
    DM_NEAR(st[5], 8, 0);
    DM_NEAR(st[6], 16, 0);
    int bad_h[1] = {0};
    DM_CHECK(yolo_det_make_anchors(1, bad_h, w, strides, 0.5f, xy, st) == YOLO_ERR_ARG, "bad level");

    /* DFL: equal logits -> the mean bin 7.5; a dominant bin -> that bin. */
    float z[16] = {0};
    DM_NEAR(yolo_det_dfl_expect(z, 1, 16, NULL), 7.5, 1e-12);
    z[3] = 40;
    DM_NEAR(yolo_det_dfl_expect(z, 1, 16, NULL), 3, 1e-12);
    /* Two bins of equal weight -> their midpoint. */
    memset(z, 0, sizeof z);
    z[4] = z[5] = 60;
    DM_NEAR(yolo_det_dfl_expect(z, 1, 16, NULL), 4.5, 1e-12);

    /* A one-image head [64 + 2, A] with distances (1, 2, 3, 4) at anchor 6
     * (level 1, cell (0, 0), stride 16, centre (0.5, 0.5)). */
    const int R = 16, nc = 2, C = 4 * R + nc;
    float *head = calloc((size_t)C * A, sizeof(float)), *out = calloc((size_t)(4 + nc) * A, sizeof(float));
    int dist[4] = {1, 2, 3, 4};
    for (int k = 0; k < 4; k++) head[(k * R + dist[k]) * A + 6] = 50;
    head[(4 * R + 1) * A + 6] = 2.0f;
    DM_CHECK(yolo_det_decode_predictions(head, 1, nc, R, A, xy, st, out) == YOLO_OK, "decode");
    /* x1 = 0.5 - 1, y1 = 0.5 - 2, x2 = 0.5 + 3, y2 = 0.5 + 4 grid -> xywh * 16. */
    DM_NEAR(out[0 * A + 6], (-0.5 + 3.5) / 2 * 16, 1e-3);
    DM_NEAR(out[1 * A + 6], (-1.5 + 4.5) / 2 * 16, 1e-3);
    DM_NEAR(out[2 * A + 6], 4 * 16, 1e-3);
    DM_NEAR(out[3 * A + 6], 6 * 16, 1e-3);
    DM_NEAR(out[5 * A + 6], 1 / (1 + exp(-2.0)), 1e-6);
    DM_NEAR(out[4 * A + 6], 0.5, 1e-7);
    free(head), free(out);

    /* Levels [B, C, h, w] <-> [B, C, A] round trip. */
    const int B = 2, Cc = 3;
    float l0[2 * 3 * 6], l1[2 * 3 * 2], cat[2 * 3 * 8], r0[36], r1[12];
    for (int i = 0; i < 36; i++) l0[i] = (float)i;
    for (int i = 0; i < 12; i++) l1[i] = 100.0f + i;
    const float *lv[2] = {l0, l1};
    yolo_det_levels_gather(lv, 2, h, w, B, Cc, cat);
    DM_NEAR(cat[0 * 8 + 6], 100, 0); /* (b0, c0) anchors 6, 7 come from level 1 */
    DM_NEAR(cat[1 * 8 + 0], 6, 0);   /* (b0, c1) anchor 0 = l0[(0*3+1)*6] */
    float *rv[2] = {r0, r1};
    yolo_det_levels_scatter(cat, 2, h, w, B, Cc, rv);
    DM_CHECK(memcmp(r0, l0, sizeof l0) == 0 && memcmp(r1, l1, sizeof l1) == 0, "levels round trip");
}

int main(void) {
    test_known_values();
    test_conversions();
    test_ciou_gradient();
    test_anchors_and_decode();
    return dm_result("detectmath_boxes");
}
