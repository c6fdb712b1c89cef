/* pose_loss.c — see pose_loss.h. Ultralytics 8.x v8PoseLoss:
 *   pred x = raw_x * 2 + (anchor_x - 0.5), y likewise (grid units);
 *   gt x = kpt_x * width / stride;  area = box w * h / stride^2;
 *   mask = visibility != 0 (all ones when D = 2);
 *   e = d^2 / ((2 sigma)^2 * (area + 1e-9) * 2);
 *   kpt = mean over (fg, k) of K / (sum(mask) + 1e-9) * (1 - exp(-e)) * mask;
 *   kobj = mean over (fg, k) of BCEWithLogits(raw_v, mask). */
#include "pose_loss.h"

#include <math.h>
#include <string.h>

#include "yolo/loss.h"

void pose_kpt_sigmas(int K, float *sigmas) {
    static const float coco[17] = {.26f, .25f, .25f, .35f, .35f, .79f, .79f, .72f, .72f,
                                   .62f, .62f, 1.07f, 1.07f, .87f, .87f, .89f, .89f};
    for (int k = 0; k < K; k++) sigmas[k] = K == 17 ? coco[k] / 10.0f : 1.0f / (float)K;
}

yolo_status pose_kpt_loss(int B, int A, int K, int D, const float *raw, const int32_t *gt_index,
                          const float *gt_boxes, const float *gt_kpts, float width, float height,
                          const float *anchor_xy, const float *anchor_stride, const float *sigmas, double pose_gain,
                          double kobj_gain, pose_kpt_loss_value *out, float *grad) {
    if (B < 1 || A < 1 || K < 1 || (D != 2 && D != 3) || !raw || !gt_index || !out)
        return yolo_error(YOLO_ERR_ARG, "pose loss: B=%d A=%d K=%d D=%d", B, A, K, D);
    int nk = K * D;
    if (grad) memset(grad, 0, sizeof(float) * (size_t)B * (size_t)nk * (size_t)A);
    int n_fg = 0;
    for (int i = 0; i < B * A; i++) n_fg += gt_index[i] >= 0;
    out->kpt = out->kobj = 0;
    out->n_fg = n_fg;
    if (n_fg == 0) return YOLO_OK;
    double inv = 1.0 / ((double)n_fg * K), kpt = 0, kobj = 0;
    for (int b = 0; b < B; b++)
        for (int a = 0; a < A; a++) {
            int g = gt_index[b * A + a];
            if (g < 0) continue;
            double s = anchor_stride[a];
            const float *box = gt_boxes + 4 * (size_t)g, *gk = gt_kpts + (size_t)g * nk;
            double area = (box[2] - box[0]) / s * ((box[3] - box[1]) / s);
            int n_vis = 0;
            for (int k = 0; k < K; k++) n_vis += D == 2 || gk[k * D + 2] != 0;
            double factor = K / (n_vis + 1e-9);
            for (int k = 0; k < K; k++) {
                const float *r = raw + (size_t)b * nk * A + a;
                double rx = r[(size_t)(k * D) * A], ry = r[(size_t)(k * D + 1) * A];
                double px = rx * 2.0 + (anchor_xy[2 * a] - 0.5), py = ry * 2.0 + (anchor_xy[2 * a + 1] - 0.5);
                double gx = gk[k * D] * width / s, gy = gk[k * D + 1] * height / s;
                double mask = D == 2 || gk[k * D + 2] != 0 ? 1.0 : 0.0;
                double denom = (2.0 * sigmas[k]) * (2.0 * sigmas[k]) * (area + 1e-9) * 2.0;
                double e = ((px - gx) * (px - gx) + (py - gy) * (py - gy)) / denom, ex = exp(-e);
                kpt += factor * (1.0 - ex) * mask;
                if (grad && mask > 0) {
                    double c = B * pose_gain * inv * factor * ex / denom; /* d/d(d^2) */
                    grad[((size_t)b * nk + (size_t)(k * D)) * A + a] = (float)(c * 2.0 * (px - gx) * 2.0);
                    grad[((size_t)b * nk + (size_t)(k * D + 1)) * A + a] = (float)(c * 2.0 * (py - gy) * 2.0);
                }
                if (D == 3) { /* BCEWithLogits of the visibility logit against the mask (yolo/loss.h) */
                    const float t = (float)mask;
                    float *g = grad ? &grad[((size_t)b * nk + (size_t)(k * D + 2)) * A + a] : NULL;
                    kobj += yolo_bce_with_logits(&r[(size_t)(k * D + 2) * A], &t, 1, (float)(B * kobj_gain * inv), g);
                }
            }
        }
    out->kpt = pose_gain * kpt * inv;
    out->kobj = kobj_gain * kobj * inv;
    return YOLO_OK;
}
