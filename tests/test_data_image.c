/* Image decoding: EXIF orientation (all 8), grey and RGBA conversion,
 * truncated and corrupt files, resizing and DCT-scaled decoding. */
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "test_util.h"

/* A w x h image with quadrants red (TL), green (TR), blue (BL), white (BR). */
static void quadrants(yolo_image *img, int w, int h) {
    yolo_image_alloc(img, w, h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = img->data + ((size_t)y * w + x) * 3;
            bool right = x >= w / 2, bottom = y >= h / 2;
            p[0] = (!right || bottom) && !(bottom && !right) ? 255 : 0;
            p[1] = right ? 255 : 0;
            p[2] = bottom ? 255 : 0;
            if (!right && !bottom)
                p[0] = 255, p[1] = 0, p[2] = 0;
            if (right && !bottom)
                p[0] = 0, p[1] = 255, p[2] = 0;
            if (!right && bottom)
                p[0] = 0, p[1] = 0, p[2] = 255;
            if (right && bottom)
                p[0] = p[1] = p[2] = 255;
        }
}

/* Inserts an APP1 Exif segment (big-endian TIFF, IFD0 with one orientation tag) after SOI. */
static uint8_t *with_exif(const uint8_t *jpeg, size_t len, int orientation, size_t *out_len) {
    uint8_t app1[] = {0xFF, 0xE1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0,
                      'M', 'M', 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,     /* TIFF header, IFD at 8 */
                      0x00, 0x01,                                       /* one entry */
                      0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01,   /* orientation, SHORT, count 1 */
                      0x00, (uint8_t)orientation, 0x00, 0x00,           /* value */
                      0x00, 0x00, 0x00, 0x00};                          /* next IFD */
    *out_len = len + sizeof app1;
    uint8_t *out = malloc(*out_len);
    memcpy(out, jpeg, 2);
    memcpy(out + 2, app1, sizeof app1);
    memcpy(out + 2 + sizeof app1, jpeg + 2, len - 2);
    return out;
}

enum { RED, GREEN, BLUE, WHITE };

static int colour_at(const yolo_image *img, int x, int y) {
    const uint8_t *p = img->data + ((size_t)y * img->width + x) * 3;
    if (p[0] > 200 && p[1] > 200 && p[2] > 200)
        return WHITE;
    if (p[0] > 200)
        return RED;
    if (p[1] > 200)
        return GREEN;
    if (p[2] > 200)
        return BLUE;
    return -1;
}

static void test_exif_orientation(void) {
    yolo_image src;
    quadrants(&src, 64, 32);
    uint8_t *jpeg;
    size_t len;
    CHECK(yolo_image_encode_jpeg(&src, 95, &jpeg, &len) == YOLO_OK);
    /* where the source's TL (red) and TR (green) corners end up: 0 TL, 1 TR, 2 BL, 3 BR */
    static const int red_at[9] = {0, 0, 1, 3, 2, 0, 1, 3, 2};
    static const int green_at[9] = {0, 1, 0, 2, 3, 2, 3, 1, 0};
    for (int o = 1; o <= 8; o++) {
        size_t elen;
        uint8_t *e = with_exif(jpeg, len, o, &elen);
        yolo_image_info info;
        CHECK(yolo_image_probe(e, elen, "exif.jpg", &info) == YOLO_OK);
        CHECK_MSG(info.orientation == o, "orientation %d read as %d", o, info.orientation);
        int ew = o >= 5 ? 32 : 64, eh = o >= 5 ? 64 : 32;
        CHECK_MSG(info.width == ew && info.height == eh, "orientation %d: probe %dx%d", o, info.width, info.height);
        yolo_image img;
        CHECK(yolo_image_decode(e, elen, "exif.jpg", 0, &img, NULL) == YOLO_OK);
        CHECK_MSG(img.width == ew && img.height == eh, "orientation %d: decoded %dx%d", o, img.width, img.height);
        int cx[4] = {4, ew - 5, 4, ew - 5}, cy[4] = {4, 4, eh - 5, eh - 5};
        CHECK_MSG(colour_at(&img, cx[red_at[o]], cy[red_at[o]]) == RED, "orientation %d: red corner", o);
        CHECK_MSG(colour_at(&img, cx[green_at[o]], cy[green_at[o]]) == GREEN, "orientation %d: green corner", o);
        yolo_image_free(&img);
        free(e);
    }
    free(jpeg);
    yolo_image_free(&src);
}

static void test_channels(void) {
    const int w = 24, h = 16;
    uint8_t grey[24 * 16], rgba[24 * 16 * 4];
    for (int i = 0; i < w * h; i++) {
        grey[i] = (uint8_t)(i * 7);
        rgba[4 * i] = 10, rgba[4 * i + 1] = 20, rgba[4 * i + 2] = 30, rgba[4 * i + 3] = (uint8_t)(i % 2 ? 0 : 255);
    }
    uint8_t *bytes;
    size_t len;
    yolo_image img;
    /* grey PNG -> RGB with equal channels, exact */
    CHECK(yolo_image_encode_pixels(grey, w, h, 1, YOLO_IMAGE_PNG, 0, &bytes, &len) == YOLO_OK);
    CHECK(yolo_image_decode(bytes, len, "grey.png", 0, &img, NULL) == YOLO_OK);
    bool ok = img.width == w && img.height == h;
    for (int i = 0; ok && i < w * h; i++)
        ok = img.data[3 * i] == grey[i] && img.data[3 * i + 1] == grey[i] && img.data[3 * i + 2] == grey[i];
    CHECK_MSG(ok, "grey PNG expanded to RGB");
    yolo_image_free(&img);
    free(bytes);
    /* RGBA PNG -> alpha dropped, colour kept even where alpha is 0 (as cv2.imread) */
    CHECK(yolo_image_encode_pixels(rgba, w, h, 4, YOLO_IMAGE_PNG, 0, &bytes, &len) == YOLO_OK);
    CHECK(yolo_image_decode(bytes, len, "rgba.png", 0, &img, NULL) == YOLO_OK);
    ok = img.width == w;
    for (int i = 0; ok && i < w * h; i++)
        ok = img.data[3 * i] == 10 && img.data[3 * i + 1] == 20 && img.data[3 * i + 2] == 30;
    CHECK_MSG(ok, "RGBA PNG: alpha dropped");
    yolo_image_free(&img);
    free(bytes);
    /* grey JPEG -> RGB with equal channels */
    CHECK(yolo_image_encode_pixels(grey, w, h, 1, YOLO_IMAGE_JPEG, 95, &bytes, &len) == YOLO_OK);
    CHECK(yolo_image_decode(bytes, len, "grey.jpg", 0, &img, NULL) == YOLO_OK);
    ok = img.width == w;
    for (int i = 0; ok && i < w * h; i++)
        ok = img.data[3 * i] == img.data[3 * i + 1] && img.data[3 * i + 1] == img.data[3 * i + 2];
    CHECK_MSG(ok, "grey JPEG expanded to RGB");
    yolo_image_free(&img);
    free(bytes);
}

static void test_bad_files(void) {
    yolo_image src, img;
    quadrants(&src, 64, 64);
    uint64_t state = 1; /* noise, so entropy-coded data dominates the file */
    for (int i = 0; i < 64 * 64 * 3; i++)
        src.data[i] = (uint8_t)(src.data[i] / 2 + (int)test_uniform(&state, 0, 100));
    uint8_t *jpeg, *png;
    size_t jlen, plen;
    CHECK(yolo_image_encode_jpeg(&src, 90, &jpeg, &jlen) == YOLO_OK);
    CHECK(yolo_image_encode_png(&src, &png, &plen) == YOLO_OK);
    yolo_image_info info;
    /* a truncated JPEG: probe says so, decode restores it with a warning */
    CHECK(yolo_image_probe(jpeg, jlen * 2 / 3, "cut.jpg", &info) == YOLO_OK && info.truncated);
    bool repaired = false;
    CHECK(yolo_image_decode(jpeg, jlen * 2 / 3, "cut.jpg", 0, &img, &repaired) == YOLO_OK);
    CHECK(repaired);
    yolo_image_free(&img);
    /* a truncated PNG fails to decode, naming the file */
    CHECK(yolo_image_probe(png, plen - 20, "cut.png", &info) == YOLO_OK && info.truncated);
    CHECK(yolo_image_decode(png, plen - 20, "cut.png", 0, &img, NULL) == YOLO_ERR_FORMAT);
    CHECK(test_error_mentions("cut.png"));
    /* garbage, and a BMP signature over garbage */
    const uint8_t junk[] = "this is not an image at all";
    CHECK(yolo_image_probe(junk, sizeof junk, "junk.jpg", &info) == YOLO_ERR_FORMAT);
    CHECK(test_error_mentions("junk.jpg"));
    const uint8_t bmp[16] = {'B', 'M', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    CHECK(yolo_image_probe(bmp, sizeof bmp, "x.bmp", &info) == YOLO_ERR_FORMAT && test_error_mentions("x.bmp"));
    /* a tables-only JPEG (DQT, no frame): libjpeg-turbo's header call succeeds and sets no size; an
     * error naming the file, never a size read from uninitialised memory (found by fuzzing) */
    uint8_t tables[2 + 4 + 1 + 64 + 2] = {0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00};
    for (int i = 0; i < 64; i++) tables[7 + i] = 1;
    tables[71] = 0xFF, tables[72] = 0xD9;
    CHECK(yolo_image_probe(tables, sizeof tables, "tables.jpg", &info) == YOLO_ERR_FORMAT &&
          test_error_mentions("tables.jpg"));
    CHECK(yolo_image_decode(tables, sizeof tables, "tables.jpg", 0, &img, NULL) == YOLO_ERR_FORMAT &&
          test_error_mentions("tables.jpg"));
    /* a JPEG whose header is damaged */
    uint8_t *bad = malloc(jlen);
    memcpy(bad, jpeg, jlen);
    memset(bad + 2, 0x00, 40);
    CHECK(yolo_image_decode(bad, jlen, "bad.jpg", 0, &img, NULL) != YOLO_OK);
    free(bad);
    free(jpeg);
    free(png);
    yolo_image_free(&src);
}

static void test_resize_and_scaled_decode(void) {
    yolo_image src, dst;
    quadrants(&src, 400, 200);
    /* bilinear and area resizes keep the quadrant layout */
    for (int area = 0; area < 2; area++) {
        CHECK(yolo_image_resize(&src, 100, 50, area, &dst) == YOLO_OK);
        CHECK(colour_at(&dst, 5, 5) == RED && colour_at(&dst, 94, 5) == GREEN && colour_at(&dst, 5, 44) == BLUE &&
              colour_at(&dst, 94, 44) == WHITE);
        yolo_image_free(&dst);
    }
    /* a constant image stays constant under both */
    yolo_image flat;
    yolo_image_alloc(&flat, 37, 23);
    yolo_image_fill(&flat, 77);
    CHECK(yolo_image_resize(&flat, 16, 11, true, &dst) == YOLO_OK);
    bool ok = true;
    for (int i = 0; i < 16 * 11 * 3; i++)
        ok = ok && dst.data[i] == 77;
    CHECK_MSG(ok, "area resize of a flat image");
    yolo_image_free(&dst);
    CHECK(yolo_image_resize(&flat, 80, 61, false, &dst) == YOLO_OK);
    ok = true;
    for (int i = 0; i < 80 * 61 * 3; i++)
        ok = ok && dst.data[i] == 77;
    CHECK_MSG(ok, "bilinear resize of a flat image");
    yolo_image_free(&dst);
    yolo_image_free(&flat);
    /* DCT-scaled decode: long side stays >= the request */
    uint8_t *jpeg;
    size_t len;
    CHECK(yolo_image_encode_jpeg(&src, 90, &jpeg, &len) == YOLO_OK);
    CHECK(yolo_image_decode(jpeg, len, "big.jpg", 100, &dst, NULL) == YOLO_OK);
    CHECK_MSG(dst.width == 100 && dst.height == 50, "scaled decode %dx%d", dst.width, dst.height);
    yolo_image_free(&dst);
    CHECK(yolo_image_decode(jpeg, len, "big.jpg", 150, &dst, NULL) == YOLO_OK);
    CHECK_MSG(dst.width == 200 && dst.height == 100, "scaled decode %dx%d", dst.width, dst.height);
    yolo_image_free(&dst);
    free(jpeg);
    yolo_image_free(&src);
}

static void test_hsv(void) {
    yolo_image img;
    yolo_image_alloc(&img, 16, 16);
    for (int i = 0; i < 256; i++)
        img.data[3 * i] = (uint8_t)i, img.data[3 * i + 1] = (uint8_t)(255 - i), img.data[3 * i + 2] = (uint8_t)(i * 3);
    yolo_image copy;
    yolo_image_alloc(&copy, 16, 16);
    memcpy(copy.data, img.data, 16 * 16 * 3);
    /* zero gains: a round trip through HSV changes pixels by at most a few levels */
    const float zero[3] = {0, 0, 0};
    yolo_image_hsv(&img, zero);
    int worst = 0;
    for (int i = 0; i < 16 * 16 * 3; i++) {
        int d = abs(img.data[i] - copy.data[i]);
        worst = d > worst ? d : worst;
    }
    CHECK_MSG(worst <= 4, "HSV round trip off by %d", worst);
    /* value gain -1 makes everything black; saturation -1 makes it grey */
    const float dark[3] = {0, 0, -1};
    yolo_image_hsv(&img, dark);
    bool black = true;
    for (int i = 0; i < 16 * 16 * 3; i++)
        black = black && img.data[i] == 0;
    CHECK(black);
    memcpy(img.data, copy.data, 16 * 16 * 3);
    const float grey[3] = {0, -1, 0};
    yolo_image_hsv(&img, grey);
    bool greys = true;
    for (int i = 0; i < 256; i++)
        greys = greys && img.data[3 * i] == img.data[3 * i + 1] && img.data[3 * i + 1] == img.data[3 * i + 2];
    CHECK(greys);
    yolo_image_free(&img);
    yolo_image_free(&copy);
}

int main(void) {
    test_exif_orientation();
    test_channels();
    test_bad_files();
    test_resize_and_scaled_decode();
    test_hsv();
    return test_result("test_data_image");
}
