/* detect_decode.c — anchor points, the DFL decode (softmax over reg_max bins
 * -> expected distance -> box) and the level layout helpers.
 *
 * Matches Ultralytics' make_anchors, DFL and dist2bbox; the distances are in
 * grid units of the anchor's level, boxes in pixels after * stride. */
#include <math.h>
#include <string.h>

#include "yolo/detection.h"

int yolo_det_anchor_count(int n_levels, const int *h, const int *w) {
    int n = 0;
    for (int l = 0; l < n_levels; l++) n += h[l] * w[l];
    return n;
}

yolo_status yolo_det_make_anchors(int n_levels, const int *h, const int *w, const float *strides, float offset,
                                float *xy, float *stride) {
    if (n_levels <= 0 || !h || !w || !strides || !xy || !stride)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_make_anchors: %d levels or a NULL array", n_levels);
    int a = 0;
    for (int l = 0; l < n_levels; l++) {
        if (h[l] <= 0 || w[l] <= 0 || !(strides[l] > 0))
            return yolo_error(YOLO_ERR_ARG, "yolo_det_make_anchors: level %d is %dx%d with stride %g", l, h[l],
                              w[l], (double)strides[l]);
        for (int y = 0; y < h[l]; y++) {
            for (int x = 0; x < w[l]; x++, a++) {
                xy[2 * a] = (float)x + offset;
                xy[2 * a + 1] = (float)y + offset;
                stride[a] = strides[l];
            }
        }
    }
    return YOLO_OK;
}

double yolo_det_dfl_expect(const float *logits, size_t step, int reg_max, double *p) {
    if (reg_max == 1) { /* YOLO26: no DFL, the channel is the distance */
        if (p) p[0] = 1.0;
        return logits[0];
    }
    double mx = logits[0];
    for (int j = 1; j < reg_max; j++) mx = fmax(mx, logits[j * step]);
    double e[64], sum = 0;
    double *q = p ? p : e; /* reg_max <= 64 is checked by the callers' params */
    for (int j = 0; j < reg_max; j++) {
        q[j] = exp(logits[j * step] - mx);
        sum += q[j];
    }
    double d = 0;
    for (int j = 0; j < reg_max; j++) {
        q[j] /= sum;
        d += j * q[j];
    }
    return d;
}

void yolo_det_dfl_distances(const float *head_image, int n_anchors, int reg_max, int a, double dist[4],
                          double *p) {
    for (int k = 0; k < 4; k++)
        dist[k] = yolo_det_dfl_expect(head_image + (size_t)k * reg_max * n_anchors + a, (size_t)n_anchors,
                                    reg_max, p ? p + k * reg_max : NULL);
}

yolo_status yolo_det_decode_predictions(const float *head, int batch, int nc, int reg_max, int n_anchors,
                                      const float *anchor_xy, const float *anchor_stride, float *out) {
    if (!head || !anchor_xy || !anchor_stride || !out || batch <= 0 || nc <= 0 || n_anchors <= 0 ||
        reg_max < 1 || reg_max > 64)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_decode_predictions: batch %d, nc %d, reg_max %d, anchors %d",
                          batch, nc, reg_max, n_anchors);
    size_t C = 4 * (size_t)reg_max + nc, A = (size_t)n_anchors;
    for (int b = 0; b < batch; b++) {
        const float *hi = head + b * C * A;
        float *o = out + b * (4 + (size_t)nc) * A;
        for (size_t a = 0; a < A; a++) {
            double d[4];
            yolo_det_dfl_distances(hi, n_anchors, reg_max, (int)a, d, NULL);
            double ax = anchor_xy[2 * a], ay = anchor_xy[2 * a + 1], s = anchor_stride[a];
            double x1 = ax - d[0], y1 = ay - d[1], x2 = ax + d[2], y2 = ay + d[3];
            o[0 * A + a] = (float)((x1 + x2) / 2 * s);
            o[1 * A + a] = (float)((y1 + y2) / 2 * s);
            o[2 * A + a] = (float)((x2 - x1) * s);
            o[3 * A + a] = (float)((y2 - y1) * s);
        }
        for (int c = 0; c < nc; c++) {
            const float *x = hi + (4 * (size_t)reg_max + c) * A;
            float *y = o + (4 + (size_t)c) * A;
            for (size_t a = 0; a < A; a++) y[a] = (float)(1.0 / (1.0 + exp(-(double)x[a])));
        }
    }
    return YOLO_OK;
}

void yolo_det_levels_gather(const float *const *levels, int n_levels, const int *h, const int *w, int batch,
                          int channels, float *out) {
    size_t A = (size_t)yolo_det_anchor_count(n_levels, h, w);
    size_t off = 0;
    for (int l = 0; l < n_levels; l++) {
        size_t hw = (size_t)h[l] * w[l];
        for (size_t bc = 0; bc < (size_t)batch * channels; bc++)
            memcpy(out + bc * A + off, levels[l] + bc * hw, hw * sizeof(float));
        off += hw;
    }
}

void yolo_det_levels_scatter(const float *in, int n_levels, const int *h, const int *w, int batch, int channels,
                           float *const *levels) {
    size_t A = (size_t)yolo_det_anchor_count(n_levels, h, w);
    size_t off = 0;
    for (int l = 0; l < n_levels; l++) {
        size_t hw = (size_t)h[l] * w[l];
        for (size_t bc = 0; bc < (size_t)batch * channels; bc++)
            memcpy(levels[l] + bc * hw, in + bc * A + off, hw * sizeof(float));
        off += hw;
    }
}
