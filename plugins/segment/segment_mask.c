/* segment_mask.c — rasterization, the mask loss, predicted masks, mask IoU
 * and mask outlines (see segment_mask.h). Formulas are Ultralytics'
 * (utils/loss.py v8SegmentationLoss.single_mask_loss, utils/ops.py
 * process_mask, crop_mask, masks2segments, utils/metrics.py mask_iou,
 * data/utils.py polygons2masks[_overlap]). */
#include "segment_mask.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/loss.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* ------------------------------------------------------------------ */
/* Targets                                                              */

/* Instance k's outline in mask pixels into buf (grown as needed). */
static int instance_outline(const yolo_instances *ins, int k, int mw, int mh, float **buf, int *cap) {
    int n = ins->poly_start ? ins->poly_start[k + 1] - ins->poly_start[k] : 0;
    int need = n >= 3 ? n : 4;
    if (need > *cap) {
        float *b = realloc(*buf, (size_t)need * 2 * sizeof(float));
        if (!b) return -1;
        *buf = b, *cap = need;
    }
    float *xy = *buf;
    if (n >= 3) {
        const float *src = ins->poly_xy + 2 * (size_t)ins->poly_start[k];
        for (int i = 0; i < n; i++) xy[2 * i] = src[2 * i] * (float)mw, xy[2 * i + 1] = src[2 * i + 1] * (float)mh;
        return n;
    }
    const float *b = ins->boxes + 4 * (size_t)k; /* no polygon: the box */
    float x1 = (b[0] - b[2] / 2) * (float)mw, x2 = (b[0] + b[2] / 2) * (float)mw;
    float y1 = (b[1] - b[3] / 2) * (float)mh, y2 = (b[1] + b[3] / 2) * (float)mh;
    float r[8] = {x1, y1, x2, y1, x2, y2, x1, y2};
    memcpy(xy, r, sizeof r);
    return 4;
}

typedef struct area_index {
    int64_t area;
    int index;
} area_index;

static int by_area_desc(const void *pa, const void *pb) {
    const area_index *a = pa, *b = pb;
    if (a->area != b->area) return a->area < b->area ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

yolo_status seg_rasterize(const yolo_instances *ins, int k0, int k1, int mw, int mh, bool overlap, int32_t *index,
                          uint8_t *scratch) {
    if (!ins || k0 < 0 || k1 > ins->n || k1 < k0 || mw <= 0 || mh <= 0 || !index || (k1 > k0 && !scratch))
        return yolo_error(YOLO_ERR_ARG, "segment: rasterizing instances %d..%d of %d at %dx%d", k0, k1,
                          ins ? ins->n : 0, mw, mh);
    size_t hw = (size_t)mw * mh;
    int n = k1 - k0;
    if (overlap) memset(index, 0, hw * sizeof(int32_t));
    if (n == 0) return YOLO_OK;
    float *xy = NULL;
    int cap = 0;
    area_index *order = malloc((size_t)n * sizeof *order);
    if (!order) return yolo_error(YOLO_ERR_NOMEM, "segment: out of memory rasterizing %d instances", n);
    for (int j = 0; j < n; j++) {
        uint8_t *m = scratch + (size_t)j * hw;
        memset(m, 0, hw);
        int np = instance_outline(ins, k0 + j, mw, mh, &xy, &cap);
        if (np < 0) {
            free(xy), free(order);
            return yolo_error(YOLO_ERR_NOMEM, "segment: out of memory rasterizing a polygon");
        }
        yolo_polygon_fill(xy, np, m, mw, mh, 1);
        int64_t area = 0;
        for (size_t p = 0; p < hw; p++) area += m[p];
        order[j] = (area_index){area, j};
        if (!overlap)
            for (size_t p = 0; p < hw; p++) index[(size_t)j * hw + p] = m[p];
    }
    if (overlap) {
        qsort(order, (size_t)n, sizeof *order, by_area_desc);
        for (int i = 0; i < n; i++) {
            int j = order[i].index;
            const uint8_t *m = scratch + (size_t)j * hw;
            for (size_t p = 0; p < hw; p++)
                if (m[p]) index[p] = j + 1;
        }
    }
    free(xy), free(order);
    return YOLO_OK;
}

void seg_resize_nearest(const int32_t *src, int sw, int sh, int32_t *dst, int dw, int dh) {
    for (int y = 0; y < dh; y++) {
        int sy = imin((int)((int64_t)y * sh / dh), sh - 1);
        for (int x = 0; x < dw; x++) {
            int sx = imin((int)((int64_t)x * sw / dw), sw - 1);
            dst[(size_t)y * dw + x] = src[(size_t)sy * sw + sx];
        }
    }
}

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

/* crop_mask's pixels: x1 <= x < x2 for integer x, clipped to the mask. */
static void crop_range(const float box[4], int mw, int mh, int *x0, int *x1, int *y0, int *y1) {
    *x0 = imax(0, (int)ceilf(box[0]));
    *x1 = imin(mw, (int)ceilf(box[2]));
    *y0 = imax(0, (int)ceilf(box[1]));
    *y1 = imin(mh, (int)ceilf(box[3]));
}

/* z over the crop into z[(y - y0) * cw + (x - x0)]. */
static void crop_logits(int nm, const float *coef, size_t cs, const float *proto, int mw, size_t hw, int x0, int x1,
                        int y0, int y1, float *z) {
    int cw = x1 - x0;
    memset(z, 0, (size_t)cw * (size_t)(y1 - y0) * sizeof(float));
    for (int k = 0; k < nm; k++) {
        float c = coef[(size_t)k * cs];
        const float *pk = proto + (size_t)k * hw;
        for (int y = y0; y < y1; y++) {
            const float *row = pk + (size_t)y * mw;
            float *zr = z + (size_t)(y - y0) * cw - x0;
            for (int x = x0; x < x1; x++) zr[x] += c * row[x];
        }
    }
}

double seg_mask_term(int nm, const float *coef, size_t coef_stride, const float *proto, int mh, int mw,
                     const seg_mask_target *t, double g_scale, float *grad_coef, float *grad_proto,
                     float *scratch) {
    int x0, x1, y0, y1;
    crop_range(t->box, mw, mh, &x0, &x1, &y0, &y1);
    if (x1 <= x0 || y1 <= y0 || !(t->area > 0)) return 0.0;
    size_t hw = (size_t)mw * mh;
    int cw = x1 - x0;
    float *z = scratch;
    crop_logits(nm, coef, coef_stride, proto, mw, hw, x0, x1, y0, y1, z);
    double sum = 0, norm = 1.0 / ((double)hw * t->area);
    bool grads = grad_coef || grad_proto;
    const float gain = (float)(g_scale * norm);
    float target[256]; /* one row's targets, a piece at a time */
    for (int y = y0; y < y1; y++) {
        float *zr = z + (size_t)(y - y0) * cw;
        const int32_t *mr = t->mask + (size_t)y * mw + x0;
        for (int x = 0; x < cw; x += 256) {
            const int n = cw - x < 256 ? cw - x : 256;
            for (int i = 0; i < n; i++) target[i] = mr[x + i] == t->value ? 1.0f : 0.0f;
            /* the gradient dz replaces z in the scratch */
            sum += yolo_bce_with_logits(zr + x, target, (size_t)n, gain, grads ? zr + x : NULL);
        }
    }
    if (!grads) return sum * norm;
    for (int k = 0; k < nm; k++) {
        const float *pk = proto + (size_t)k * hw;
        float *gk = grad_proto ? grad_proto + (size_t)k * hw : NULL;
        float c = coef[(size_t)k * coef_stride];
        double gc = 0;
        for (int y = y0; y < y1; y++) {
            const float *dz = z + (size_t)(y - y0) * cw - x0;
            const float *row = pk + (size_t)y * mw;
            float *grow = gk ? gk + (size_t)y * mw : NULL;
            for (int x = x0; x < x1; x++) {
                gc += (double)dz[x] * row[x];
                if (grow) grow[x] += dz[x] * c;
            }
        }
        if (grad_coef) grad_coef[(size_t)k * coef_stride] += (float)gc;
    }
    return sum * norm;
}

/* ------------------------------------------------------------------ */
/* The semantic loss                                                    */

void seg_semantic_classes(const int32_t *masks, bool overlap, int n, const int32_t *cls, size_t hw, int32_t *out,
                          int64_t *area) {
    if (overlap) {
        for (size_t p = 0; p < hw; p++) out[p] = masks[p] > 0 && masks[p] <= n ? cls[masks[p] - 1] : -1;
        return;
    }
    for (int j = 0; j < n; j++) {
        area[j] = 0;
        for (size_t p = 0; p < hw; p++) area[j] += masks[(size_t)j * hw + p] != 0;
    }
    for (size_t p = 0; p < hw; p++) {
        int best = -1;
        for (int j = 0; j < n; j++)
            if (masks[(size_t)j * hw + p] && (best < 0 || area[j] < area[best])) best = j;
        out[p] = best >= 0 ? cls[best] : -1;
    }
}

void seg_semantic_image(int nc, size_t hw, const float *pred, const int32_t *cls, double g_bce, double g_dice,
                        double *bce, double *dice, float *grad, float *scratch) {
    float *t = scratch, *s = scratch + hw;
    for (int c = 0; c < nc; c++) {
        const float *x = pred + (size_t)c * hw;
        for (size_t p = 0; p < hw; p++) t[p] = cls[p] == c ? 1.0f : 0.0f;
        *bce += yolo_bce_with_logits(x, t, hw, 1.0f, s); /* s = sigmoid(x) - t */
        double inter = 0, probs = 0, targets = 0;
        for (size_t p = 0; p < hw; p++) {
            s[p] += t[p];
            inter += (double)s[p] * t[p], probs += s[p], targets += t[p];
        }
        const double u = probs + targets + 1.0, d = (2.0 * inter + 1.0) / u;
        *dice += 1.0 - d;
        if (!grad) continue;
        /* d(1 - dice)/dx_p = -(2 t_p u - (2 I + 1)) / u^2 * s_p (1 - s_p) */
        float *g = grad + (size_t)c * hw;
        const float k1 = (float)(-2.0 * g_dice / u), k0 = (float)(g_dice * (2.0 * inter + 1.0) / (u * u));
        const float gb = (float)g_bce;
        for (size_t p = 0; p < hw; p++)
            g[p] = gb * (s[p] - t[p]) + (k1 * t[p] + k0) * s[p] * (1.0f - s[p]);
    }
}

/* ------------------------------------------------------------------ */
/* Predictions                                                          */

int seg_predict_mask(int nm, const float *coef, size_t coef_stride, const float *proto, int mh, int mw,
                     const float box[4], uint8_t *out) {
    size_t hw = (size_t)mw * mh;
    memset(out, 0, hw);
    int x0, x1, y0, y1;
    crop_range(box, mw, mh, &x0, &x1, &y0, &y1);
    if (x1 <= x0 || y1 <= y0) return 0;
    int count = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            float z = 0;
            for (int k = 0; k < nm; k++)
                z += coef[(size_t)k * coef_stride] * proto[(size_t)k * hw + (size_t)y * mw + x];
            out[(size_t)y * mw + x] = z > 0;
            count += z > 0;
        }
    return count;
}

/* PyTorch's area_pixel_compute_source_index (align_corners=False) and the
 * two taps of a linear interpolation. */
static void linear_taps(int dst, int in, int out, int *i0, int *i1, float *l1) {
    float src = ((float)dst + 0.5f) * ((float)in / (float)out) - 0.5f;
    if (src < 0) src = 0;
    *i0 = imin((int)src, in - 1);
    *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
    *l1 = src - (float)*i0;
}

void seg_predict_mask_upsampled(int nm, const float *coef, size_t coef_stride, const float *proto, int mh, int mw,
                                const float box[4], int ow, int oh, float *z, uint8_t *out) {
    size_t hw = (size_t)mw * mh;
    memset(z, 0, hw * sizeof(float));
    int x0, x1, y0, y1;
    crop_range(box, mw, mh, &x0, &x1, &y0, &y1);
    if (x1 > x0 && y1 > y0)
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                float v = 0;
                for (int k = 0; k < nm; k++)
                    v += coef[(size_t)k * coef_stride] * proto[(size_t)k * hw + (size_t)y * mw + x];
                z[(size_t)y * mw + x] = v;
            }
    for (int y = 0; y < oh; y++) {
        int ya, yb;
        float ly;
        linear_taps(y, mh, oh, &ya, &yb, &ly);
        for (int x = 0; x < ow; x++) {
            int xa, xb;
            float lx;
            linear_taps(x, mw, ow, &xa, &xb, &lx);
            float top = z[(size_t)ya * mw + xa] * (1 - lx) + z[(size_t)ya * mw + xb] * lx;
            float bot = z[(size_t)yb * mw + xa] * (1 - lx) + z[(size_t)yb * mw + xb] * lx;
            out[(size_t)y * ow + x] = top * (1 - ly) + bot * ly > 0;
        }
    }
}

void seg_mask_iou(const uint8_t *gt, int n_gt, const uint8_t *pred, int n_pred, size_t hw, float *iou) {
    int64_t *pa = malloc((size_t)(n_pred > 0 ? n_pred : 1) * sizeof *pa);
    for (int p = 0; p < n_pred; p++) {
        int64_t a = 0;
        for (size_t i = 0; i < hw; i++) a += pred[(size_t)p * hw + i];
        if (pa) pa[p] = a;
    }
    for (int g = 0; g < n_gt; g++) {
        const uint8_t *m = gt + (size_t)g * hw;
        int64_t ga = 0;
        for (size_t i = 0; i < hw; i++) ga += m[i];
        for (int p = 0; p < n_pred; p++) {
            const uint8_t *q = pred + (size_t)p * hw;
            int64_t inter = 0, qa = 0;
            for (size_t i = 0; i < hw; i++) inter += m[i] & q[i];
            if (pa) qa = pa[p];
            else
                for (size_t i = 0; i < hw; i++) qa += q[i];
            iou[(size_t)g * n_pred + p] = (float)((double)inter / ((double)(ga + qa - inter) + 1e-7));
        }
    }
    free(pa);
}

/* ------------------------------------------------------------------ */
/* Outlines                                                             */

/* Clockwise on screen (y down), starting west. */
static const int DX[8] = {-1, -1, 0, 1, 1, 1, 0, -1};
static const int DY[8] = {0, -1, -1, -1, 0, 1, 1, 1};

static int dir_of(int dx, int dy) {
    for (int d = 0; d < 8; d++)
        if (DX[d] == dx && DY[d] == dy) return d;
    return 0;
}

/* Labels the 8-connected components; returns the label (>= 1) of the
 * largest and its first pixel in raster order, 0 if the mask is empty,
 * -1 when out of memory. */
static int largest_component(const uint8_t *mask, int w, int h, int32_t *label, int *start) {
    size_t hw = (size_t)w * h;
    memset(label, 0, hw * sizeof(int32_t));
    int32_t *stack = malloc(hw * sizeof(int32_t));
    if (!stack) return -1;
    int next = 0, best = 0;
    int64_t best_size = 0;
    for (size_t s = 0; s < hw; s++) {
        if (!mask[s] || label[s]) continue;
        next++;
        int64_t size = 0;
        size_t top = 0;
        stack[top++] = (int32_t)s;
        label[s] = next;
        while (top) {
            int32_t p = stack[--top];
            size++;
            int px = p % w, py = p / w;
            for (int d = 0; d < 8; d++) {
                int nx = px + DX[d], ny = py + DY[d];
                if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
                size_t q = (size_t)ny * w + nx;
                if (mask[q] && !label[q]) label[q] = next, stack[top++] = (int32_t)q;
            }
        }
        if (size > best_size) best_size = size, best = next, *start = (int)s;
    }
    free(stack);
    return best;
}

int seg_mask_contour(const uint8_t *mask, int w, int h, float *xy, int max_points) {
    if (w <= 0 || h <= 0) return 0;
    size_t hw = (size_t)w * h;
    int32_t *label = malloc(hw * sizeof(int32_t));
    if (!label) return -1;
    int start = 0;
    int L = largest_component(mask, w, h, label, &start);
    if (L <= 0) {
        free(label);
        return L;
    }
    size_t cap = 4 * hw + 8;
    int *pts = malloc(cap * sizeof(int));
    if (!pts) {
        free(label);
        return -1;
    }
#define IN(x, y) ((x) >= 0 && (y) >= 0 && (x) < w && (y) < h && label[(size_t)(y) * w + (x)] == L)
    /* Moore-neighbour tracing: the start is the component's first pixel in
     * raster order, entered from the west (its west neighbour is outside). */
    size_t n = 0;
    int cx = start % w, cy = start / w, bdir = 0, first_next = -1;
    pts[n++] = start;
    for (size_t iter = 0; iter < cap; iter++) {
        int found = -1;
        for (int i = 1; i <= 8; i++) {
            int d = (bdir + i) % 8;
            if (IN(cx + DX[d], cy + DY[d])) {
                found = i;
                break;
            }
        }
        if (found < 0) break; /* a single pixel */
        int d = (bdir + found) % 8, bd = (bdir + found - 1) % 8;
        int nx = cx + DX[d], ny = cy + DY[d];
        int bx = cx + DX[bd], by = cy + DY[bd];
        int np = ny * w + nx;
        if (first_next < 0)
            first_next = np;
        else if (cy * w + cx == start && np == first_next)
            break;
        bdir = dir_of(bx - nx, by - ny);
        cx = nx, cy = ny;
        if (n < cap) pts[n++] = np;
    }
#undef IN
    if (n > 1 && pts[n - 1] == start) n--;
    /* CHAIN_APPROX_SIMPLE: keep the points where the direction changes. */
    int out = 0;
    for (size_t i = 0; i < n; i++) {
        int p = pts[i], a = pts[(i + n - 1) % n], b = pts[(i + 1) % n];
        int dx1 = p % w - a % w, dy1 = p / w - a / w, dx2 = b % w - p % w, dy2 = b / w - p / w;
        if (n > 2 && dx1 == dx2 && dy1 == dy2) continue;
        if (out < max_points) xy[2 * out] = (float)(p % w), xy[2 * out + 1] = (float)(p / w);
        out++;
    }
    free(pts), free(label);
    return out < max_points ? out : max_points;
}
