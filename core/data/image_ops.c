/* Resampling and pixel operations on 8-bit RGB images (see image.h).
 * Bilinear paths use 11-bit (resize) and 5-bit (warp) fixed point, as
 * OpenCV does, so results are exact integers independent of threads. */
#include "data/image.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void yolo_image_fill(yolo_image *image, uint8_t value) {
    memset(image->data, value, (size_t)image->width * image->height * 3);
}

void yolo_image_blit(const yolo_image *src, int sx, int sy, yolo_image *dst, int dx, int dy, int w, int h) {
    if (w <= 0 || h <= 0)
        return;
    for (int y = 0; y < h; y++)
        memcpy(dst->data + (((size_t)(dy + y) * dst->width) + dx) * 3,
               src->data + (((size_t)(sy + y) * src->width) + sx) * 3, (size_t)w * 3);
}

void yolo_image_flip_lr(yolo_image *image) {
    int w = image->width;
    for (int y = 0; y < image->height; y++) {
        uint8_t *row = image->data + (size_t)y * w * 3;
        for (int x = 0; x < w / 2; x++) {
            uint8_t *a = row + 3 * x, *b = row + 3 * (w - 1 - x);
            for (int c = 0; c < 3; c++) {
                uint8_t t = a[c];
                a[c] = b[c];
                b[c] = t;
            }
        }
    }
}

void yolo_image_flip_ud(yolo_image *image) {
    size_t stride = (size_t)image->width * 3;
    uint8_t *tmp = malloc(stride);
    if (!tmp)
        return;
    for (int y = 0; y < image->height / 2; y++) {
        uint8_t *a = image->data + y * stride, *b = image->data + (image->height - 1 - y) * stride;
        memcpy(tmp, a, stride);
        memcpy(a, b, stride);
        memcpy(b, tmp, stride);
    }
    free(tmp);
}

/* ---- resize ------------------------------------------------------------- */

#define RESIZE_BITS 11
#define RESIZE_ONE (1 << RESIZE_BITS)

static yolo_status resize_bilinear(const yolo_image *src, int dw, int dh, yolo_image *dst) {
    int sw = src->width, sh = src->height;
    int *xofs = malloc(sizeof(int) * dw);
    int *xalpha = malloc(sizeof(int) * dw);
    int *row0 = malloc(sizeof(int) * dw * 3), *row1 = malloc(sizeof(int) * dw * 3);
    if (!xofs || !xalpha || !row0 || !row1) {
        free(xofs), free(xalpha), free(row0), free(row1);
        return yolo_error(YOLO_ERR_NOMEM, "resize %dx%d", dw, dh);
    }
    double scale_x = (double)sw / dw, scale_y = (double)sh / dh;
    for (int x = 0; x < dw; x++) {
        double fx = (x + 0.5) * scale_x - 0.5;
        int x0 = (int)floor(fx);
        double a = fx - x0;
        if (x0 < 0) {
            x0 = 0;
            a = 0;
        }
        if (x0 >= sw - 1) {
            x0 = sw - 1;
            a = 0;
        }
        xofs[x] = x0;
        xalpha[x] = (int)lrint(a * RESIZE_ONE);
    }
    int cached0 = -1, cached1 = -1;
    for (int y = 0; y < dh; y++) {
        double fy = (y + 0.5) * scale_y - 0.5;
        int y0 = (int)floor(fy);
        double b = fy - y0;
        if (y0 < 0) {
            y0 = 0;
            b = 0;
        }
        if (y0 >= sh - 1) {
            y0 = sh - 1;
            b = 0;
        }
        int y1 = y0 + 1 < sh ? y0 + 1 : y0;
        int beta = (int)lrint(b * RESIZE_ONE);
        /* horizontal pass for the two source rows, reusing cached ones */
        int need[2] = {y0, y1};
        int *rows[2] = {row0, row1};
        if (cached0 == y1 && y1 != y0) { /* swap buffers: row0 already holds y1 */
            int *t = row0;
            row0 = row1;
            row1 = t;
            cached1 = cached0;
            cached0 = -1;
            rows[0] = row0;
            rows[1] = row1;
        }
        int cached[2] = {cached0, cached1};
        for (int r = 0; r < 2; r++) {
            if (cached[r] == need[r])
                continue;
            const uint8_t *s = src->data + (size_t)need[r] * sw * 3;
            int *o = rows[r];
            for (int x = 0; x < dw; x++) {
                const uint8_t *p = s + xofs[x] * 3;
                int a = xalpha[x];
                int nx = xofs[x] + 1 < sw ? 3 : 0;
                for (int c = 0; c < 3; c++)
                    o[3 * x + c] = p[c] * (RESIZE_ONE - a) + p[c + nx] * a;
            }
        }
        cached0 = y0;
        cached1 = y1;
        uint8_t *d = dst->data + (size_t)y * dw * 3;
        const int rnd = 1 << (2 * RESIZE_BITS - 1);
        for (int i = 0; i < dw * 3; i++)
            d[i] = (uint8_t)(((int64_t)row0[i] * (RESIZE_ONE - beta) + (int64_t)row1[i] * beta + rnd) >>
                             (2 * RESIZE_BITS));
    }
    free(xofs), free(xalpha), free(row0), free(row1);
    return YOLO_OK;
}

/* Per destination index: the source indices it covers and their weights. */
typedef struct area_tab {
    int *start, *count;
    float *w; /* count[i] weights at w[offset[i]] */
    int *offset;
} area_tab;

static bool area_table(int src, int dst, area_tab *t) {
    double scale = (double)src / dst;
    int maxc = (int)ceil(scale) + 2;
    t->start = malloc(sizeof(int) * dst);
    t->count = malloc(sizeof(int) * dst);
    t->offset = malloc(sizeof(int) * dst);
    t->w = malloc(sizeof(float) * dst * maxc);
    if (!t->start || !t->count || !t->offset || !t->w)
        return false;
    for (int i = 0; i < dst; i++) {
        double f0 = i * scale, f1 = (i + 1) * scale;
        int s0 = (int)floor(f0), s1 = (int)ceil(f1);
        if (s1 > src)
            s1 = src;
        t->start[i] = s0;
        t->offset[i] = i * maxc;
        int c = 0;
        for (int s = s0; s < s1 && c < maxc; s++, c++) {
            double lo = s > f0 ? s : f0, hi = s + 1 < f1 ? s + 1 : f1;
            t->w[i * maxc + c] = (float)((hi - lo) / scale);
        }
        t->count[i] = c;
    }
    return true;
}

static void area_free(area_tab *t) { free(t->start), free(t->count), free(t->offset), free(t->w); }

static yolo_status resize_area(const yolo_image *src, int dw, int dh, yolo_image *dst) {
    int sw = src->width, sh = src->height;
    area_tab tx = {0}, ty = {0};
    float *hrow = malloc(sizeof(float) * dw * 3), *acc = malloc(sizeof(float) * dw * 3);
    if (!area_table(sw, dw, &tx) || !area_table(sh, dh, &ty) || !hrow || !acc) {
        area_free(&tx), area_free(&ty), free(hrow), free(acc);
        return yolo_error(YOLO_ERR_NOMEM, "resize %dx%d", dw, dh);
    }
    for (int y = 0; y < dh; y++) {
        memset(acc, 0, sizeof(float) * dw * 3);
        for (int k = 0; k < ty.count[y]; k++) {
            const uint8_t *s = src->data + (size_t)(ty.start[y] + k) * sw * 3;
            float wy = ty.w[ty.offset[y] + k];
            for (int x = 0; x < dw; x++) {
                float r = 0, g = 0, b = 0;
                const float *wx = tx.w + tx.offset[x];
                const uint8_t *p = s + (size_t)tx.start[x] * 3;
                for (int j = 0; j < tx.count[x]; j++) {
                    r += p[3 * j] * wx[j];
                    g += p[3 * j + 1] * wx[j];
                    b += p[3 * j + 2] * wx[j];
                }
                hrow[3 * x] = r, hrow[3 * x + 1] = g, hrow[3 * x + 2] = b;
            }
            for (int i = 0; i < dw * 3; i++)
                acc[i] += hrow[i] * wy;
        }
        uint8_t *d = dst->data + (size_t)y * dw * 3;
        for (int i = 0; i < dw * 3; i++) {
            float v = acc[i] + 0.5f;
            d[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    area_free(&tx), area_free(&ty), free(hrow), free(acc);
    return YOLO_OK;
}

yolo_status yolo_image_resize(const yolo_image *src, int dw, int dh, bool area, yolo_image *dst) {
    if (dw <= 0 || dh <= 0)
        return yolo_error(YOLO_ERR_ARG, "resize to %dx%d", dw, dh);
    yolo_status st = yolo_image_alloc(dst, dw, dh);
    if (st != YOLO_OK)
        return st;
    if (dw == src->width && dh == src->height) {
        memcpy(dst->data, src->data, (size_t)dw * dh * 3);
        return YOLO_OK;
    }
    if (area && dw <= src->width && dh <= src->height)
        st = resize_area(src, dw, dh, dst);
    else
        st = resize_bilinear(src, dw, dh, dst);
    if (st != YOLO_OK)
        yolo_image_free(dst);
    return st;
}

/* ---- warp --------------------------------------------------------------- */

static bool invert3(const double m[9], double inv[9]) {
    double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7], i = m[8];
    double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    double det = a * A + b * B + c * C;
    if (fabs(det) < 1e-15)
        return false;
    double r = 1.0 / det;
    inv[0] = A * r, inv[1] = -(b * i - c * h) * r, inv[2] = (b * f - c * e) * r;
    inv[3] = B * r, inv[4] = (a * i - c * g) * r, inv[5] = -(a * f - c * d) * r;
    inv[6] = C * r, inv[7] = -(a * h - b * g) * r, inv[8] = (a * e - b * d) * r;
    return true;
}

#define WARP_BITS 5
#define WARP_ONE (1 << WARP_BITS)

/* One output pixel from fixed-point source coordinates (1/32 px). */
static void warp_pixel(const yolo_image *src, int64_t X, int64_t Y, uint8_t *out) {
    int x0 = (int)(X >> WARP_BITS), y0 = (int)(Y >> WARP_BITS);
    int fx = (int)(X & (WARP_ONE - 1)), fy = (int)(Y & (WARP_ONE - 1));
    int w = src->width, h = src->height;
    const int pad = YOLO_PAD_VALUE;
    if (x0 >= 0 && y0 >= 0 && x0 < w - 1 && y0 < h - 1) {
        const uint8_t *p = src->data + ((size_t)y0 * w + x0) * 3;
        const uint8_t *q = p + (size_t)w * 3;
        int w00 = (WARP_ONE - fx) * (WARP_ONE - fy), w01 = fx * (WARP_ONE - fy);
        int w10 = (WARP_ONE - fx) * fy, w11 = fx * fy;
        for (int c = 0; c < 3; c++)
            out[c] = (uint8_t)((p[c] * w00 + p[c + 3] * w01 + q[c] * w10 + q[c + 3] * w11 + 512) >> 10);
        return;
    }
    if (x0 < -1 || y0 < -1 || x0 >= w || y0 >= h) {
        out[0] = out[1] = out[2] = pad;
        return;
    }
    /* border: each tap outside the image reads the pad value */
    int wts[4] = {(WARP_ONE - fx) * (WARP_ONE - fy), fx * (WARP_ONE - fy), (WARP_ONE - fx) * fy, fx * fy};
    int xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
    int acc[3] = {512, 512, 512};
    for (int t = 0; t < 4; t++) {
        bool in = xs[t] >= 0 && ys[t] >= 0 && xs[t] < w && ys[t] < h;
        const uint8_t *p = in ? src->data + ((size_t)ys[t] * w + xs[t]) * 3 : NULL;
        for (int c = 0; c < 3; c++)
            acc[c] += (in ? p[c] : pad) * wts[t];
    }
    for (int c = 0; c < 3; c++)
        out[c] = (uint8_t)(acc[c] >> 10);
}

yolo_status yolo_image_warp(const yolo_image *src, const double m[9], yolo_image *dst) {
    double inv[9];
    if (!invert3(m, inv))
        return yolo_error(YOLO_ERR_ARG, "warp: singular matrix");
    int dw = dst->width, dh = dst->height;
    bool projective = m[6] != 0 || m[7] != 0;
    if (!projective) {
        /* affine: src = inv * dst with rows scaled by 1/inv[8] */
        double a = inv[0] / inv[8], b = inv[1] / inv[8], c = inv[2] / inv[8];
        double d = inv[3] / inv[8], e = inv[4] / inv[8], f = inv[5] / inv[8];
        int64_t *ax = malloc(sizeof(int64_t) * dw), *dx = malloc(sizeof(int64_t) * dw);
        if (!ax || !dx) {
            free(ax), free(dx);
            return yolo_error(YOLO_ERR_NOMEM, "warp %dx%d", dw, dh);
        }
        for (int x = 0; x < dw; x++) {
            ax[x] = llrint(a * x * WARP_ONE);
            dx[x] = llrint(d * x * WARP_ONE);
        }
        const int sw = src->width, sh = src->height;
        const size_t stride = (size_t)sw * 3;
        for (int y = 0; y < dh; y++) {
            int64_t X0 = llrint((b * y + c) * WARP_ONE), Y0 = llrint((e * y + f) * WARP_ONE);
            uint8_t *restrict o = dst->data + (size_t)y * dw * 3;
            for (int x = 0; x < dw; x++) {
                int64_t X = X0 + ax[x], Y = Y0 + dx[x];
                int x0 = (int)(X >> WARP_BITS), y0 = (int)(Y >> WARP_BITS);
                if ((unsigned)x0 < (unsigned)(sw - 1) && (unsigned)y0 < (unsigned)(sh - 1)) {
                    /* interior: all four taps inside */
                    int fx = (int)(X & (WARP_ONE - 1)), fy = (int)(Y & (WARP_ONE - 1));
                    const uint8_t *restrict p = src->data + (size_t)y0 * stride + (size_t)x0 * 3;
                    const uint8_t *restrict q = p + stride;
                    int w00 = (WARP_ONE - fx) * (WARP_ONE - fy), w01 = fx * (WARP_ONE - fy);
                    int w10 = (WARP_ONE - fx) * fy, w11 = fx * fy;
                    o[3 * x] = (uint8_t)((p[0] * w00 + p[3] * w01 + q[0] * w10 + q[3] * w11 + 512) >> 10);
                    o[3 * x + 1] = (uint8_t)((p[1] * w00 + p[4] * w01 + q[1] * w10 + q[4] * w11 + 512) >> 10);
                    o[3 * x + 2] = (uint8_t)((p[2] * w00 + p[5] * w01 + q[2] * w10 + q[5] * w11 + 512) >> 10);
                } else {
                    warp_pixel(src, X, Y, o + 3 * x);
                }
            }
        }
        free(ax), free(dx);
        return YOLO_OK;
    }
    for (int y = 0; y < dh; y++) {
        uint8_t *o = dst->data + (size_t)y * dw * 3;
        for (int x = 0; x < dw; x++) {
            double z = inv[6] * x + inv[7] * y + inv[8];
            z = z != 0 ? 1.0 / z : 0;
            double sx = (inv[0] * x + inv[1] * y + inv[2]) * z, sy = (inv[3] * x + inv[4] * y + inv[5]) * z;
            /* far outside: clamp before the fixed-point conversion */
            sx = sx < -1e6 ? -1e6 : sx > 1e6 ? 1e6 : sx;
            sy = sy < -1e6 ? -1e6 : sy > 1e6 ? 1e6 : sy;
            warp_pixel(src, (int64_t)floor(sx * WARP_ONE + 0.5), (int64_t)floor(sy * WARP_ONE + 0.5), o + 3 * x);
        }
    }
    return YOLO_OK;
}

/* ---- colour ------------------------------------------------------------- */

#define HSV_SHIFT 12

/* Tables shared by all threads, built once: the forward divisions of
 * OpenCV's RGB->HSV, and integer products for HSV->RGB
 * (mul255[a][b] = round(a*b/255), frac30[s][f] = round(s*f/30)). */
static int sdiv[256], hdiv[256];
static uint8_t mul255[256][256], frac30[256][31];
static pthread_once_t hsv_once = PTHREAD_ONCE_INIT;

static void hsv_tables(void) {
    for (int i = 1; i < 256; i++) {
        sdiv[i] = (int)lrint((255 << HSV_SHIFT) / (double)i);
        hdiv[i] = (int)lrint((180 << HSV_SHIFT) / (6.0 * i));
    }
    for (int a = 0; a < 256; a++) {
        for (int b = 0; b < 256; b++)
            mul255[a][b] = (uint8_t)((a * b + 127) / 255);
        for (int f = 0; f <= 30; f++)
            frac30[a][f] = (uint8_t)((a * f + 15) / 30);
    }
}

void yolo_image_hsv(yolo_image *image, const float r[3]) {
    pthread_once(&hsv_once, hsv_tables);
    uint8_t lut_h[256], lut_s[256], lut_v[256];
    for (int x = 0; x < 256; x++) {
        /* (x + 180 r_h) mod 180, then the uint8 cast truncates as numpy's astype */
        double h = fmod(x + r[0] * 180.0, 180.0);
        if (h < 0)
            h += 180.0;
        lut_h[x] = (uint8_t)(h >= 180.0 ? 0 : h);
        double s = x * (1.0 + r[1]), v = x * (1.0 + r[2]);
        lut_s[x] = (uint8_t)(s < 0 ? 0 : s > 255 ? 255 : s);
        lut_v[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    /* per hue after the LUT: its 60-degree sector and position in it */
    uint8_t sector_of[256], frac_of[256];
    for (int x = 0; x < 256; x++) {
        int h = lut_h[x];
        sector_of[x] = (uint8_t)(h / 30);
        frac_of[x] = (uint8_t)(h % 30);
    }
    /* (r, g, b) sources among {v, p, q, t} per sector, as OpenCV's sector table */
    static const uint8_t pick[6][3] = {{0, 3, 1}, {2, 0, 1}, {1, 0, 3}, {1, 2, 0}, {3, 1, 0}, {0, 1, 2}};
    size_t n = (size_t)image->width * image->height;
    uint8_t *p = image->data;
    for (size_t i = 0; i < n; i++, p += 3) {
        /* RGB -> HSV (OpenCV's 8-bit integer path, H in [0,180]), branch-free */
        int R = p[0], G = p[1], B = p[2];
        int v = R > G ? R : G;
        v = v > B ? v : B;
        int vmin = R < G ? R : G;
        vmin = vmin < B ? vmin : B;
        int diff = v - vmin;
        int s = (diff * sdiv[v] + (1 << (HSV_SHIFT - 1))) >> HSV_SHIFT;
        int vr = -(v == R), vg = -(v == G) & ~vr;
        int h = (vr & (G - B)) + (vg & (B - R + 2 * diff)) + (~vr & ~vg & (R - G + 4 * diff));
        h = (h * hdiv[diff] + (1 << (HSV_SHIFT - 1))) >> HSV_SHIFT;
        h += (h >> 31) & 180;
        int hx = h;
        s = lut_s[s];
        v = lut_v[v];
        /* HSV -> RGB with integer products (s == 0 gives v, v, v through the tables) */
        int f = frac_of[hx];
        uint8_t vals[4] = {(uint8_t)v, mul255[v][255 - s], mul255[v][255 - frac30[s][f]], mul255[v][255 - frac30[s][30 - f]]};
        const uint8_t *k = pick[sector_of[hx]];
        p[0] = vals[k[0]];
        p[1] = vals[k[1]];
        p[2] = vals[k[2]];
    }
}

void yolo_image_blend(yolo_image *a, const yolo_image *b, float lambda) {
    size_t n = (size_t)a->width * a->height * 3;
    for (size_t i = 0; i < n; i++) {
        float v = a->data[i] * lambda + b->data[i] * (1.0f - lambda);
        a->data[i] = (uint8_t)v; /* truncation, as numpy's astype(uint8) */
    }
}
