/* box_ops.c — box conversions, IoU, CIoU and the CIoU gradient.
 *
 * Formulas are those of Ultralytics' bbox_iou / box_iou (utils/metrics.py)
 * including where the 1e-7 epsilons sit, so values agree with training runs
 * there; the CIoU gradient reproduces what autograd computes for that
 * expression (alpha under no_grad). */
#include <math.h>

#include "yolo/detection.h"

#define CIOU_EPS 1e-7
#define CIOU_PI  3.14159265358979323846

void yolo_box_xywh_to_xyxy(const float *xywh, float *xyxy, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float *s = xywh + 4 * i;
        float cx = s[0], cy = s[1], hw = s[2] / 2, hh = s[3] / 2;
        float *d = xyxy + 4 * i;
        d[0] = cx - hw;
        d[1] = cy - hh;
        d[2] = cx + hw;
        d[3] = cy + hh;
    }
}

void yolo_box_xyxy_to_xywh(const float *xyxy, float *xywh, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float *s = xyxy + 4 * i;
        float x1 = s[0], y1 = s[1], x2 = s[2], y2 = s[3];
        float *d = xywh + 4 * i;
        d[0] = (x1 + x2) / 2;
        d[1] = (y1 + y2) / 2;
        d[2] = x2 - x1;
        d[3] = y2 - y1;
    }
}

void yolo_box_iou_matrix(const float *a, int na, const float *b, int nb, float *out) {
    for (int i = 0; i < na; i++) {
        const float *p = a + 4 * i;
        float area_a = (p[2] - p[0]) * (p[3] - p[1]);
        for (int j = 0; j < nb; j++) {
            const float *q = b + 4 * j;
            float iw = fminf(p[2], q[2]) - fmaxf(p[0], q[0]);
            float ih = fminf(p[3], q[3]) - fmaxf(p[1], q[1]);
            float inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
            float area_b = (q[2] - q[0]) * (q[3] - q[1]);
            out[(size_t)i * nb + j] = inter / (area_a + area_b - inter + 1e-7f);
        }
    }
}

/* d min(a, b) / da and d max(a, b) / da as torch.minimum/maximum backward:
 * a tie gives each side half the gradient. */
static double dmin_da(double a, double b) { return a < b ? 1.0 : (a == b ? 0.5 : 0.0); }
static double dmax_da(double a, double b) { return a > b ? 1.0 : (a == b ? 0.5 : 0.0); }

double yolo_box_ciou_grad(const double b1[4], const double b2[4], double g[4]) {
    const double eps = CIOU_EPS;
    double w1 = b1[2] - b1[0], h1 = b1[3] - b1[1] + eps;
    double w2 = b2[2] - b2[0], h2 = b2[3] - b2[1] + eps;

    double ix = fmin(b1[2], b2[2]) - fmax(b1[0], b2[0]);
    double iy = fmin(b1[3], b2[3]) - fmax(b1[1], b2[1]);
    double ixc = ix > 0 ? ix : 0, iyc = iy > 0 ? iy : 0;
    double inter = ixc * iyc;
    double uni = w1 * h1 + w2 * h2 - inter + eps;
    double iou = inter / uni;

    double cw = fmax(b1[2], b2[2]) - fmin(b1[0], b2[0]);
    double ch = fmax(b1[3], b2[3]) - fmin(b1[1], b2[1]);
    double c2 = cw * cw + ch * ch + eps;
    double sx = b2[0] + b2[2] - b1[0] - b1[2];
    double sy = b2[1] + b2[3] - b1[1] - b1[3];
    double rho2 = (sx * sx + sy * sy) / 4;

    const double k = 4.0 / (CIOU_PI * CIOU_PI);
    double dang = atan(w2 / h2) - atan(w1 / h1);
    double v = k * dang * dang;
    double alpha = v / (v - iou + (1 + eps));
    double ciou = iou - (rho2 / c2 + v * alpha);
    if (!g) return ciou;

    /* Intersection: clamp(0) passes the gradient at >= 0 (torch's rule). */
    double gx = ix >= 0 ? iyc : 0, gy = iy >= 0 ? ixc : 0;
    double dinter[4] = {-gx * dmax_da(b1[0], b2[0]), -gy * dmax_da(b1[1], b2[1]), gx * dmin_da(b1[2], b2[2]),
                        gy * dmin_da(b1[3], b2[3])};
    double darea[4] = {-h1, -w1, h1, w1};
    /* Enclosing box diagonal and centre distance. */
    double dc2[4] = {-2 * cw * dmin_da(b1[0], b2[0]), -2 * ch * dmin_da(b1[1], b2[1]),
                     2 * cw * dmax_da(b1[2], b2[2]), 2 * ch * dmax_da(b1[3], b2[3])};
    double drho2[4] = {-sx / 2, -sy / 2, -sx / 2, -sy / 2};
    /* Aspect term through atan(w1 / h1); alpha stays constant. */
    double r2 = w1 * w1 + h1 * h1;
    double dv_da1 = -2 * k * dang;
    double dv_dw1 = dv_da1 * h1 / r2, dv_dh1 = dv_da1 * -w1 / r2;
    double dv[4] = {-dv_dw1, -dv_dh1, dv_dw1, dv_dh1};

    for (int i = 0; i < 4; i++) {
        double diou = dinter[i] / uni - iou * (darea[i] - dinter[i]) / uni;
        double drc = drho2[i] / c2 - rho2 * dc2[i] / (c2 * c2);
        g[i] = diou - drc - alpha * dv[i];
    }
    return ciou;
}

double yolo_box_ciou(const double b1[4], const double b2[4]) { return yolo_box_ciou_grad(b1, b2, NULL); }

void yolo_box_unletterbox(float *xyxy, size_t n, float gain, float pad_x, float pad_y, float width, float height) {
    for (size_t i = 0; i < n; i++) {
        float *b = xyxy + 4 * i;
        for (int k = 0; k < 4; k++) {
            float v = (b[k] - (k % 2 == 0 ? pad_x : pad_y)) / gain;
            float hi = k % 2 == 0 ? width : height;
            b[k] = v < 0 ? 0 : (v > hi ? hi : v);
        }
    }
}
