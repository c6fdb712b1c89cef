/* The auto-augment image operations with PIL's arithmetic (see image_enhance.h). */
#include "data/image_enhance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"

static size_t pixel_count(const yolo_image *img) { return (size_t)img->width * (size_t)img->height; }

static inline int clip_index(int v, int n) { return v < 0 ? 0 : v < n ? v : n - 1; }

/* PIL's bilinear_filter32RGB: false outside the source (the fill applies). */
static bool sample_bilinear(const yolo_image *src, double xin, double yin, uint8_t out[3]) {
    int W = src->width, H = src->height;
    if (xin < 0.0 || xin >= W || yin < 0.0 || yin >= H)
        return false;
    xin -= 0.5, yin -= 0.5;
    int x = (int)floor(xin), y = (int)floor(yin);
    double dx = xin - x, dy = yin - y;
    const uint8_t *r0 = src->data + (size_t)clip_index(y, H) * W * 3;
    const uint8_t *r1 = y + 1 >= 0 && y + 1 < H ? src->data + (size_t)(y + 1) * W * 3 : NULL;
    int x0 = clip_index(x, W) * 3, x1 = clip_index(x + 1, W) * 3;
    for (int c = 0; c < 3; c++) {
        double v1 = r0[x0 + c] + (r0[x1 + c] - r0[x0 + c]) * dx;
        double v2 = r1 ? r1[x0 + c] + (r1[x1 + c] - r1[x0 + c]) * dx : v1;
        out[c] = (uint8_t)(v1 + (v2 - v1) * dy);
    }
    return true;
}

yolo_status yolo_enhance_affine(yolo_image *img, const double a[6]) {
    yolo_image out;
    yolo_status st = yolo_image_alloc(&out, img->width, img->height);
    if (st != YOLO_OK)
        return st;
    for (int y = 0; y < img->height; y++) {
        for (int x = 0; x < img->width; x++) {
            double xc = x + 0.5, yc = y + 0.5;
            uint8_t *px = out.data + ((size_t)y * img->width + x) * 3;
            if (!sample_bilinear(img, a[0] * xc + a[1] * yc + a[2], a[3] * xc + a[4] * yc + a[5], px))
                px[0] = px[1] = px[2] = 0;
        }
    }
    yolo_image_free(img);
    *img = out;
    return YOLO_OK;
}

yolo_status yolo_enhance_shear(yolo_image *img, double mx, double my) {
    /* torchvision's inverse matrix for a shear of atan(m) degrees on one
     * axis about the corner: [1, mx, 0; my, 1, 0] (one of mx, my is 0) */
    const double inv[6] = {1, mx, 0, my, 1, 0};
    return yolo_enhance_affine(img, inv);
}

yolo_status yolo_enhance_translate(yolo_image *img, int dx, int dy) {
    const double inv[6] = {1, 0, -(double)dx, 0, 1, -(double)dy};
    return yolo_enhance_affine(img, inv);
}

/* PIL's Image.rotate: a copy at multiples of 360, else the inverse
 * rotation about (w/2, h/2), its terms rounded to 15 decimals as PIL does. */
yolo_status yolo_enhance_rotate(yolo_image *img, double degrees) {
    if (fmod(degrees, 360.0) == 0.0)
        return YOLO_OK;
    double r = -degrees * M_PI / 180.0, cx = img->width / 2.0, cy = img->height / 2.0;
    double c = round(cos(r) * 1e15) / 1e15, s = round(sin(r) * 1e15) / 1e15;
    double inv[6] = {c, s, 0, -s, c, 0};
    inv[2] = inv[0] * -cx + inv[1] * -cy + cx;
    inv[5] = inv[3] * -cx + inv[4] * -cy + cy;
    return yolo_enhance_affine(img, inv);
}

/* PIL's ImagingBlend(degenerate, img, f): truncating, clipped when extrapolating. */
static inline uint8_t blend(uint8_t degenerate, uint8_t value, float f) {
    float v = (float)degenerate + f * (float)((int)value - (int)degenerate);
    if (f >= 0 && f <= 1)
        return (uint8_t)v;
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

/* PIL's RGB -> L: (r 19595 + g 38470 + b 7471 + 0x8000) >> 16. */
static inline uint8_t luma(const uint8_t *px) {
    return (uint8_t)(((uint32_t)px[0] * 19595u + (uint32_t)px[1] * 38470u + (uint32_t)px[2] * 7471u + 0x8000u) >> 16);
}

void yolo_enhance_brightness(yolo_image *img, float f) {
    for (size_t i = 0; i < pixel_count(img) * 3; i++)
        img->data[i] = blend(0, img->data[i], f);
}

void yolo_enhance_color(yolo_image *img, float f) {
    for (size_t i = 0; i < pixel_count(img); i++) {
        uint8_t *px = img->data + 3 * i, grey = luma(px);
        for (int c = 0; c < 3; c++)
            px[c] = blend(grey, px[c], f);
    }
}

void yolo_enhance_contrast(yolo_image *img, float f) {
    double sum = 0;
    size_t n = pixel_count(img);
    for (size_t i = 0; i < n; i++)
        sum += luma(img->data + 3 * i);
    uint8_t mean = (uint8_t)(int)(sum / (double)(n ? n : 1) + 0.5); /* int(ImageStat mean + 0.5) */
    for (size_t i = 0; i < n * 3; i++)
        img->data[i] = blend(mean, img->data[i], f);
}

yolo_status yolo_enhance_sharpness(yolo_image *img, float f) {
    int W = img->width, H = img->height;
    uint8_t *smooth = malloc(pixel_count(img) * 3);
    if (!smooth)
        return yolo_error(YOLO_ERR_NOMEM, "sharpness: %dx%d image", W, H);
    /* ImageFilter.SMOOTH: [1 1 1; 1 5 1; 1 1 1] / 13 rounded half up; the
     * border rows and columns are copied, as PIL's 3x3 filter does */
    memcpy(smooth, img->data, pixel_count(img) * 3);
    const float k_side = 1.0f / 13.0f, k_mid = 5.0f / 13.0f;
    for (int y = 1; y < H - 1; y++) {
        for (int x = 1; x < W - 1; x++) {
            for (int c = 0; c < 3; c++) {
                float ss = 0;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++)
                        ss += img->data[((size_t)(y + dy) * W + x + dx) * 3 + c] * (dx || dy ? k_side : k_mid);
                smooth[((size_t)y * W + x) * 3 + c] = ss <= 0 ? 0 : ss >= 255 ? 255 : (uint8_t)(ss + 0.5f);
            }
        }
    }
    for (size_t i = 0; i < pixel_count(img) * 3; i++)
        img->data[i] = blend(smooth[i], img->data[i], f);
    free(smooth);
    return YOLO_OK;
}

/* Each channel through the table `make` builds from its histogram. */
static void per_channel_lut(yolo_image *img, void (*make)(const uint32_t hist[256], uint8_t lut[256])) {
    uint32_t hist[3][256] = {{0}};
    uint8_t lut[3][256];
    for (size_t i = 0; i < pixel_count(img); i++)
        for (int c = 0; c < 3; c++)
            hist[c][img->data[3 * i + c]]++;
    for (int c = 0; c < 3; c++)
        make(hist[c], lut[c]);
    for (size_t i = 0; i < pixel_count(img); i++)
        for (int c = 0; c < 3; c++)
            img->data[3 * i + c] = lut[c][img->data[3 * i + c]];
}

void yolo_enhance_posterize(yolo_image *img, int bits) {
    bits = bits < 0 ? 0 : bits > 8 ? 8 : bits;
    uint8_t mask = (uint8_t)~((1u << (8 - bits)) - 1u);
    for (size_t i = 0; i < pixel_count(img) * 3; i++)
        img->data[i] &= mask;
}

void yolo_enhance_solarize(yolo_image *img, double threshold) {
    for (size_t i = 0; i < pixel_count(img) * 3; i++)
        if (img->data[i] >= threshold)
            img->data[i] = (uint8_t)(255 - img->data[i]);
}

/* ImageOps.autocontrast: [min, max] stretched to [0, 255], truncated. */
static void autocontrast_lut(const uint32_t hist[256], uint8_t lut[256]) {
    int lo = 0, hi = 255;
    while (lo < 256 && !hist[lo])
        lo++;
    while (hi >= 0 && !hist[hi])
        hi--;
    double scale = hi > lo ? 255.0 / (hi - lo) : 1, offset = hi > lo ? -lo * scale : 0;
    for (int v = 0; v < 256; v++) {
        int m = (int)(v * scale + offset);
        lut[v] = (uint8_t)(m < 0 ? 0 : m > 255 ? 255 : m);
    }
}

void yolo_enhance_autocontrast(yolo_image *img) { per_channel_lut(img, autocontrast_lut); }

/* ImageOps.equalize: step = (the non-zero bins' sum but the last one's) // 255. */
static void equalize_lut(const uint32_t hist[256], uint8_t lut[256]) {
    uint64_t total = 0, last = 0;
    int used = 0;
    for (int v = 0; v < 256; v++)
        if (hist[v])
            total += hist[v], last = hist[v], used++;
    uint64_t step = used > 1 ? (total - last) / 255 : 0, n = step / 2;
    for (int v = 0; v < 256; v++) {
        uint64_t m = step ? n / step : (uint64_t)v;
        lut[v] = (uint8_t)(m > 255 ? 255 : m);
        n += hist[v];
    }
}

void yolo_enhance_equalize(yolo_image *img) { per_channel_lut(img, equalize_lut); }

void yolo_enhance_invert(yolo_image *img) {
    for (size_t i = 0; i < pixel_count(img) * 3; i++)
        img->data[i] = (uint8_t)(255 - img->data[i]);
}
