/* Geometry on instances (see instance_ops.h). */
#include "data/instance_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

static size_t kpt_stride(const yolo_instances *ins) {
    return (size_t)ins->kpt_count * (size_t)ins->kpt_dims;
}

static size_t kpt_total(const yolo_instances *ins) { return (size_t)ins->n * kpt_stride(ins); }

void yolo_ins_to_pixels(yolo_instances *ins, float width, float height) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        float cx = b[0] * width, cy = b[1] * height, w = b[2] * width, h = b[3] * height;
        b[0] = cx - 0.5f * w;
        b[1] = cy - 0.5f * h;
        b[2] = cx + 0.5f * w;
        b[3] = cy + 0.5f * h;
    }
    int np = yolo_instances_poly_points(ins);
    for (int i = 0; i < np; i++) {
        ins->poly_xy[2 * i] *= width;
        ins->poly_xy[2 * i + 1] *= height;
    }
    size_t nk = kpt_total(ins);
    for (size_t i = 0; ins->kpt_count && i < nk; i += (size_t)ins->kpt_dims) {
        ins->kpts[i] *= width;
        ins->kpts[i + 1] *= height;
    }
}

void yolo_ins_to_normalized(yolo_instances *ins, float width, float height) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        float x1 = b[0], y1 = b[1], x2 = b[2], y2 = b[3];
        b[0] = 0.5f * (x1 + x2) / width;
        b[1] = 0.5f * (y1 + y2) / height;
        b[2] = (x2 - x1) / width;
        b[3] = (y2 - y1) / height;
    }
    int np = yolo_instances_poly_points(ins);
    for (int i = 0; i < np; i++) {
        ins->poly_xy[2 * i] /= width;
        ins->poly_xy[2 * i + 1] /= height;
    }
    size_t nk = kpt_total(ins);
    for (size_t i = 0; ins->kpt_count && i < nk; i += (size_t)ins->kpt_dims) {
        ins->kpts[i] /= width;
        ins->kpts[i + 1] /= height;
    }
}

void yolo_ins_affine_axis(yolo_instances *ins, float sx, float sy, float dx, float dy) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        b[0] = b[0] * sx + dx;
        b[1] = b[1] * sy + dy;
        b[2] = b[2] * sx + dx;
        b[3] = b[3] * sy + dy;
    }
    int np = yolo_instances_poly_points(ins);
    for (int i = 0; i < np; i++) {
        ins->poly_xy[2 * i] = ins->poly_xy[2 * i] * sx + dx;
        ins->poly_xy[2 * i + 1] = ins->poly_xy[2 * i + 1] * sy + dy;
    }
    size_t nk = kpt_total(ins);
    for (size_t i = 0; ins->kpt_count && i < nk; i += (size_t)ins->kpt_dims) {
        ins->kpts[i] = ins->kpts[i] * sx + dx;
        ins->kpts[i + 1] = ins->kpts[i + 1] * sy + dy;
    }
}

void yolo_ins_flip_lr(yolo_instances *ins, float width, const int *flip_idx) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        float x1 = b[0];
        b[0] = width - b[2];
        b[2] = width - x1;
    }
    int np = yolo_instances_poly_points(ins);
    for (int i = 0; i < np; i++)
        ins->poly_xy[2 * i] = width - ins->poly_xy[2 * i];
    if (!ins->kpt_count)
        return;
    size_t stride = kpt_stride(ins), d = (size_t)ins->kpt_dims;
    float tmp[3 * 256];
    for (int k = 0; k < ins->n; k++) {
        float *kp = ins->kpts + k * stride;
        for (size_t i = 0; i < stride; i += d)
            kp[i] = width - kp[i];
        if (flip_idx && stride <= sizeof tmp / sizeof tmp[0]) {
            memcpy(tmp, kp, stride * sizeof(float));
            for (int j = 0; j < ins->kpt_count; j++)
                memcpy(kp + j * d, tmp + (size_t)flip_idx[j] * d, d * sizeof(float));
        }
    }
}

void yolo_ins_flip_ud(yolo_instances *ins, float height) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        float y1 = b[1];
        b[1] = height - b[3];
        b[3] = height - y1;
    }
    int np = yolo_instances_poly_points(ins);
    for (int i = 0; i < np; i++)
        ins->poly_xy[2 * i + 1] = height - ins->poly_xy[2 * i + 1];
    size_t nk = kpt_total(ins);
    for (size_t i = 0; ins->kpt_count && i < nk; i += (size_t)ins->kpt_dims)
        ins->kpts[i + 1] = height - ins->kpts[i + 1];
}

static void hide_outside_keypoints(yolo_instances *ins, float width, float height) {
    size_t nk = kpt_total(ins), d = (size_t)ins->kpt_dims;
    for (size_t i = 0; ins->kpt_count && i < nk; i += d) {
        float x = ins->kpts[i], y = ins->kpts[i + 1];
        if (x < 0 || y < 0 || x > width || y > height) {
            if (d >= 3)
                ins->kpts[i + 2] = 0;
            else
                ins->kpts[i] = ins->kpts[i + 1] = 0;
        }
    }
}

void yolo_ins_clip(yolo_instances *ins, float width, float height) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        b[0] = clampf(b[0], 0, width);
        b[1] = clampf(b[1], 0, height);
        b[2] = clampf(b[2], 0, width);
        b[3] = clampf(b[3], 0, height);
    }
    int np = yolo_instances_poly_points(ins);
    for (int i = 0; i < np; i++) {
        ins->poly_xy[2 * i] = clampf(ins->poly_xy[2 * i], 0, width);
        ins->poly_xy[2 * i + 1] = clampf(ins->poly_xy[2 * i + 1], 0, height);
    }
    hide_outside_keypoints(ins, width, height);
}

float yolo_box_ioa(const float *a, const float *b) {
    float iw = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), ih = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
    float inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
    return inter / ((b[2] - b[0]) * (b[3] - b[1]) + 1e-7f);
}

void yolo_ins_filter(yolo_instances *ins, const bool *keep) {
    size_t stride = kpt_stride(ins);
    int out = 0, pout = 0;
    for (int k = 0; k < ins->n; k++) {
        if (!keep[k])
            continue;
        ins->cls[out] = ins->cls[k];
        memmove(ins->boxes + 4 * out, ins->boxes + 4 * k, 4 * sizeof(float));
        if (stride)
            memmove(ins->kpts + out * stride, ins->kpts + k * stride, stride * sizeof(float));
        if (ins->poly_start) {
            int p0 = ins->poly_start[k], np = ins->poly_start[k + 1] - p0;
            memmove(ins->poly_xy + 2 * (size_t)pout, ins->poly_xy + 2 * (size_t)p0,
                    (size_t)np * 2 * sizeof(float));
            ins->poly_start[out] = pout;
            pout += np;
        }
        out++;
    }
    ins->n = out;
    if (ins->poly_start)
        ins->poly_start[out] = pout;
}

void yolo_ins_remove_empty(yolo_instances *ins) {
    if (ins->n == 0)
        return;
    bool keep_small[64] = {0};
    bool *keep = ins->n <= 64 ? keep_small : malloc((size_t)ins->n);
    if (!keep)
        return;
    for (int k = 0; k < ins->n; k++) {
        const float *b = ins->boxes + 4 * k;
        keep[k] = b[2] > b[0] && b[3] > b[1];
    }
    yolo_ins_filter(ins, keep);
    if (keep != keep_small)
        free(keep);
}

/* Points per edge: proportional to its length, at least 1 (its start
 * vertex), summing to n. */
static void edge_counts(const float *xy, int m, int n, int *count) {
    double perimeter = 0, len[4096];
    bool big = m > 4096;
    for (int i = 0; i < m; i++) {
        int j = (i + 1) % m;
        double l = hypot(xy[2 * j] - xy[2 * i], xy[2 * j + 1] - xy[2 * i + 1]);
        if (!big)
            len[i] = l;
        perimeter += l;
    }
    int used = 0;
    for (int i = 0; i < m; i++) {
        double l = big ? 0 : len[i];
        int k = perimeter > 0 && !big ? 1 + (int)floor((n - m) * l / perimeter) : 1;
        count[i] = k;
        used += k;
    }
    /* hand out what rounding left to the longest edges first (stable: lowest index) */
    while (used < n) {
        int best = 0;
        double best_gap = -1;
        for (int i = 0; i < m; i++) {
            double l = big ? 1 : len[i];
            double gap = l / count[i];
            if (gap > best_gap)
                best_gap = gap, best = i;
        }
        count[best]++;
        used++;
    }
}

yolo_status yolo_ins_resample_polygons(yolo_instances *ins, int n) {
    if (!ins->poly_start || n <= 0)
        return YOLO_OK;
    /* every instance ends with max(n, its vertex count) points: the original
     * vertices are kept, so extents (boxes) do not change */
    size_t total = 0;
    for (int k = 0; k < ins->n; k++) {
        int m = ins->poly_start[k + 1] - ins->poly_start[k];
        total += m == 0 ? 0 : (size_t)(m > n ? m : n);
    }
    float *out = malloc((total + 1) * 2 * sizeof(float));
    int32_t *start = malloc(((size_t)(ins->cap > ins->n ? ins->cap : ins->n) + 1) * sizeof(int32_t));
    int *count = NULL;
    int max_m = 0;
    for (int k = 0; k < ins->n; k++) {
        int m = ins->poly_start[k + 1] - ins->poly_start[k];
        max_m = m > max_m ? m : max_m;
    }
    count = malloc(sizeof(int) * ((size_t)max_m + 1));
    if (!out || !start || !count) {
        free(out), free(start), free(count);
        return yolo_error(YOLO_ERR_NOMEM, "resampling %d polygons", ins->n);
    }
    int pos = 0;
    for (int k = 0; k < ins->n; k++) {
        start[k] = pos;
        int p0 = ins->poly_start[k], m = ins->poly_start[k + 1] - p0;
        const float *xy = ins->poly_xy + 2 * (size_t)p0;
        if (m == 0)
            continue;
        if (m >= n) {
            memcpy(out + 2 * (size_t)pos, xy, sizeof(float) * 2 * (size_t)m);
            pos += m;
            continue;
        }
        edge_counts(xy, m, n, count);
        for (int i = 0; i < m; i++) {
            int j = (i + 1) % m;
            for (int s = 0; s < count[i]; s++) {
                float t = (float)s / count[i];
                out[2 * (size_t)pos] = xy[2 * i] + t * (xy[2 * j] - xy[2 * i]);
                out[2 * (size_t)pos + 1] = xy[2 * i + 1] + t * (xy[2 * j + 1] - xy[2 * i + 1]);
                pos++;
            }
        }
    }
    start[ins->n] = pos;
    free(count);
    free(ins->poly_xy);
    free(ins->poly_start);
    ins->poly_xy = out;
    ins->poly_start = start;
    ins->poly_cap = (int)total + 1;
    return YOLO_OK;
}

static inline void apply_m(const double m[9], double x, double y, double *ox, double *oy) {
    double z = m[6] * x + m[7] * y + m[8];
    if (z == 0)
        z = 1e-12;
    *ox = (m[0] * x + m[1] * y + m[2]) / z;
    *oy = (m[3] * x + m[4] * y + m[5]) / z;
}

void yolo_ins_transform(yolo_instances *ins, const double m[9], float width, float height) {
    for (int k = 0; k < ins->n; k++) {
        float *b = ins->boxes + 4 * k;
        int p0 = ins->poly_start ? ins->poly_start[k] : 0;
        int np = ins->poly_start ? ins->poly_start[k + 1] - p0 : 0;
        if (np > 0) {
            float *xy = ins->poly_xy + 2 * (size_t)p0;
            double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
            for (int i = 0; i < np; i++) {
                double x, y;
                apply_m(m, xy[2 * i], xy[2 * i + 1], &x, &y);
                xy[2 * i] = (float)x;
                xy[2 * i + 1] = (float)y;
                /* segment2box: the extent of the points inside the image */
                if (x >= 0 && y >= 0 && x <= width && y <= height) {
                    x0 = x < x0 ? x : x0;
                    y0 = y < y0 ? y : y0;
                    x1 = x > x1 ? x : x1;
                    y1 = y > y1 ? y : y1;
                }
            }
            if (x0 > x1) {
                b[0] = b[1] = b[2] = b[3] = 0;
            } else {
                b[0] = (float)x0;
                b[1] = (float)y0;
                b[2] = (float)x1;
                b[3] = (float)y1;
            }
            for (int i = 0; i < np; i++) {
                xy[2 * i] = clampf(xy[2 * i], b[0], b[2]);
                xy[2 * i + 1] = clampf(xy[2 * i + 1], b[1], b[3]);
            }
        } else {
            double cx[4] = {b[0], b[2], b[2], b[0]}, cy[4] = {b[1], b[1], b[3], b[3]};
            double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
            for (int i = 0; i < 4; i++) {
                double x, y;
                apply_m(m, cx[i], cy[i], &x, &y);
                x0 = x < x0 ? x : x0;
                y0 = y < y0 ? y : y0;
                x1 = x > x1 ? x : x1;
                y1 = y > y1 ? y : y1;
            }
            b[0] = (float)x0;
            b[1] = (float)y0;
            b[2] = (float)x1;
            b[3] = (float)y1;
        }
    }
    size_t nk = kpt_total(ins);
    for (size_t i = 0; ins->kpt_count && i < nk; i += (size_t)ins->kpt_dims) {
        double x, y;
        apply_m(m, ins->kpts[i], ins->kpts[i + 1], &x, &y);
        ins->kpts[i] = (float)x;
        ins->kpts[i + 1] = (float)y;
    }
    yolo_ins_clip(ins, width, height);
}

void yolo_ins_box_candidates(const float *old_xyxy, const yolo_instances *ins, float area_thr,
                             bool *keep) {
    const float eps = 1e-16f;
    for (int k = 0; k < ins->n; k++) {
        const float *a = old_xyxy + 4 * k, *b = ins->boxes + 4 * k;
        float w1 = a[2] - a[0], h1 = a[3] - a[1];
        float w2 = b[2] - b[0], h2 = b[3] - b[1];
        float ar = fmaxf(w2 / (h2 + eps), h2 / (w2 + eps));
        keep[k] = w2 > 2 && h2 > 2 && w2 * h2 / (w1 * h1 + eps) > area_thr && ar < 100;
    }
}
