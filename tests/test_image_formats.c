/* BMP, WebP and TIFF decoding (image_bmp.c, image_webp.c, image_tiff.c):
 * every BMP variant OpenCV reads, built byte by byte here, with the pixels
 * it must give; WebP and TIFF written by their own libraries and read back;
 * the TIFF Orientation tag; truncated and corrupt files refused naming the
 * file; and a dataset of such images scanned and sized like any other. */
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <webp/encode.h>

#include "data/data_config.h"
#include "data/dataset.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "data/image_formats.h"
#include "test_util.h"

static char root[256];

/* A w x h RGB image of pseudo-random pixels. */
static void random_image(yolo_image *img, int w, int h, uint32_t seed) {
    yolo_image_alloc(img, w, h);
    for (size_t i = 0; i < (size_t)w * h * 3; i++) {
        seed = seed * 1664525u + 1013904223u;
        img->data[i] = (uint8_t)(seed >> 24);
    }
}

static bool same_pixels(const yolo_image *a, const yolo_image *b) {
    return a->width == b->width && a->height == b->height &&
           memcmp(a->data, b->data, (size_t)a->width * a->height * 3) == 0;
}

/* Decodes through the public entry (sniffing by content) and checks the probe agrees on the size. */
static yolo_status decode(const uint8_t *b, size_t n, const char *name, yolo_image *out) {
    yolo_image_info info;
    yolo_status st = yolo_image_probe(b, n, name, &info);
    if (st != YOLO_OK)
        return st;
    st = yolo_image_decode(b, n, name, 0, out, NULL);
    if (st == YOLO_OK)
        CHECK_MSG(out->width == info.width && out->height == info.height, "%s: probe %dx%d, decoded %dx%d", name,
                  info.width, info.height, out->width, out->height);
    return st;
}

/* Every proper prefix of a file either decodes to its probed size or fails naming the file. */
static void check_prefixes(const uint8_t *b, size_t n, const char *name) {
    for (size_t k = 0; k < n; k += k < 64 ? 1 : 1 + n / 97) {
        yolo_image img;
        if (decode(b, k, name, &img) == YOLO_OK)
            yolo_image_free(&img);
        else
            CHECK_MSG(test_error_mentions(name), "%s cut at %zu: %s", name, k, yolo_last_error());
    }
}

/* ---- BMP, built by hand ---- */

typedef struct bmp_spec {
    int w, h, bpp, compression, dib; /* dib: 12, 40 or 108 */
    bool top_down;
    const uint8_t *palette; /* n_colors B,G,R,0 entries (B,G,R for dib 12) */
    int n_colors;
    uint32_t masks[3];
    const uint8_t *pixels;
    size_t pixels_len;
} bmp_spec;

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v), put16(p + 2, v >> 16); }

static uint8_t *make_bmp(const bmp_spec *s, size_t *len) {
    bool fields = s->compression == 3;
    size_t masks_after = fields && s->dib == 40 ? 12 : 0;
    size_t pal_bytes = (size_t)s->n_colors * (s->dib == 12 ? 3 : 4);
    size_t off = 14 + s->dib + masks_after + pal_bytes;
    *len = off + s->pixels_len;
    uint8_t *b = calloc(1, *len);
    b[0] = 'B', b[1] = 'M';
    put32(b + 2, (uint32_t)*len);
    put32(b + 10, (uint32_t)off);
    put32(b + 14, (uint32_t)s->dib);
    if (s->dib == 12) {
        put16(b + 18, (uint32_t)s->w), put16(b + 20, (uint32_t)s->h), put16(b + 22, 1), put16(b + 24, (uint32_t)s->bpp);
    } else {
        put32(b + 18, (uint32_t)s->w), put32(b + 22, (uint32_t)(s->top_down ? -s->h : s->h));
        put16(b + 26, 1), put16(b + 28, (uint32_t)s->bpp), put32(b + 30, (uint32_t)s->compression);
        put32(b + 46, (uint32_t)s->n_colors);
        if (fields)
            for (int c = 0; c < 3; c++)
                put32(b + 54 + 4 * c, s->masks[c]);
    }
    if (pal_bytes)
        memcpy(b + 14 + s->dib + masks_after, s->palette, pal_bytes);
    memcpy(b + off, s->pixels, s->pixels_len);
    return b;
}

static uint8_t palette[256 * 4];
static void palette_rgb(int i, uint8_t *rgb) { rgb[0] = palette[4 * i + 2], rgb[1] = palette[4 * i + 1], rgb[2] = palette[4 * i]; }

/* Rows of indices (bottom-up), packed at bpp bits, each row padded to 4 bytes. */
static uint8_t *pack_indices(const int *idx, int w, int h, int bpp, size_t *len) {
    size_t stride = ((size_t)w * bpp + 31) / 32 * 4;
    *len = stride * h;
    uint8_t *p = calloc(1, *len);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int bit = 8 - bpp - (x * bpp) % 8;
            p[(size_t)(h - 1 - y) * stride + (size_t)x * bpp / 8] |= (uint8_t)(idx[y * w + x] << bit);
        }
    return p;
}

static void check_palette_bmp(int bpp, int dib) {
    int w = 11, h = 5, n = 1 << bpp, idx[55];
    for (int i = 0; i < w * h; i++)
        idx[i] = (i * 7 + i / w) % n;
    size_t plen, len;
    uint8_t *px = pack_indices(idx, w, h, bpp, &plen);
    uint8_t pal3[256 * 3];
    for (int i = 0; i < n; i++)
        memcpy(pal3 + 3 * i, palette + 4 * i, 3);
    bmp_spec s = {w, h, bpp, 0, dib, false, dib == 12 ? pal3 : palette, n, {0}, px, plen};
    uint8_t *b = make_bmp(&s, &len);
    yolo_image img;
    CHECK_MSG(decode(b, len, "pal.bmp", &img) == YOLO_OK, "%d-bit palette (header %d): %s", bpp, dib,
              yolo_last_error());
    bool ok = img.width == w && img.height == h;
    for (int i = 0; ok && i < w * h; i++) {
        uint8_t want[3];
        palette_rgb(idx[i], want);
        ok = memcmp(img.data + 3 * i, want, 3) == 0;
    }
    CHECK_MSG(ok, "%d-bit palette (header %d): wrong pixels", bpp, dib);
    yolo_image_free(&img);
    free(b);
    free(px);
}

/* 16- and 32-bit pixels with their channel masks; narrow channels are shifted up as OpenCV does. */
static void check_masked_bmp(int bpp, int compression, const uint32_t masks[3], int dib) {
    int w = 7, h = 3;
    size_t stride = ((size_t)w * bpp / 8 + 3) & ~(size_t)3, len;
    uint8_t *px = calloc(1, stride * h);
    uint32_t v[21];
    for (int i = 0; i < w * h; i++) {
        v[i] = (uint32_t)(i * 2654435761u);
        if (bpp == 16)
            v[i] &= 0xFFFF;
        uint8_t *p = px + (size_t)(h - 1 - i / w) * stride + (size_t)(i % w) * bpp / 8;
        bpp == 16 ? put16(p, v[i]) : put32(p, v[i]);
    }
    bmp_spec s = {w, h, bpp, compression, dib, false, NULL, 0, {masks[0], masks[1], masks[2]}, px, stride * h};
    uint8_t *b = make_bmp(&s, &len);
    yolo_image img;
    CHECK_MSG(decode(b, len, "masks.bmp", &img) == YOLO_OK, "%d-bit: %s", bpp, yolo_last_error());
    bool ok = img.width == w && img.height == h;
    for (int i = 0; ok && i < w * h; i++)
        for (int c = 0; c < 3; c++) {
            uint32_t m = masks[c];
            int shift = __builtin_ctz(m), bits = __builtin_popcount(m);
            uint32_t x = (v[i] & m) >> shift;
            uint8_t want = (uint8_t)(bits >= 8 ? x >> (bits - 8) : x << (8 - bits));
            ok = ok && img.data[3 * i + c] == want;
        }
    CHECK_MSG(ok, "%d-bit masks %x/%x/%x (compression %d): wrong pixels", bpp, masks[0], masks[1], masks[2],
              compression);
    yolo_image_free(&img);
    free(b);
    free(px);
}

static void check_rgb_bmp(void) {
    yolo_image src, img;
    random_image(&src, 13, 6, 1); /* 39 bytes a row: padded */
    uint8_t *b;
    size_t len;
    CHECK(yolo_bmp_encode(&src, &b, &len) == YOLO_OK);
    CHECK_MSG(decode(b, len, "rgb.bmp", &img) == YOLO_OK && same_pixels(&src, &img), "24-bit: %s", yolo_last_error());
    yolo_image_free(&img);
    check_prefixes(b, len, "cut.bmp");
    /* top-down: the same rows stored first to last, height negative */
    size_t stride = 40;
    uint8_t *td = malloc(len);
    memcpy(td, b, 54);
    put32(td + 22, (uint32_t)-6);
    for (int y = 0; y < 6; y++)
        memcpy(td + 54 + y * stride, b + 54 + (5 - y) * stride, stride);
    CHECK_MSG(decode(td, len, "topdown.bmp", &img) == YOLO_OK && same_pixels(&src, &img), "top-down: %s",
              yolo_last_error());
    yolo_image_free(&img);
    /* OS/2 header (12 bytes, 16-bit sizes) with the same pixels */
    bmp_spec s = {13, 6, 24, 0, 12, false, NULL, 0, {0}, b + 54, len - 54};
    size_t olen;
    uint8_t *os2 = make_bmp(&s, &olen);
    CHECK_MSG(decode(os2, olen, "os2.bmp", &img) == YOLO_OK && same_pixels(&src, &img), "OS/2: %s",
              yolo_last_error());
    yolo_image_free(&img);
    free(os2);
    free(td);
    free(b);
    yolo_image_free(&src);
}

/* RLE8 and RLE4 streams with runs, literals (odd lengths: padding), an
 * end of line, a delta and an early end of bitmap; skipped pixels keep
 * palette entry 0. Expected indices are written beside the stream. */
static void check_rle_bmp(bool rle4) {
    enum { W = 6, H = 3 };
    int want[H][W]; /* top row first */
    memset(want, 0, sizeof want);
    uint8_t stream[64];
    size_t n = 0;
    /* bottom row (y = 2): a run of 3 of index 5 (RLE4: 5,1,5 from 0x51), then literal 3 */
    stream[n++] = 3, stream[n++] = rle4 ? 0x51 : 5;
    want[2][0] = 5, want[2][1] = rle4 ? 1 : 5, want[2][2] = 5;
    stream[n++] = 0, stream[n++] = 3;
    if (rle4) {
        stream[n++] = 0x9A, stream[n++] = 0xB0; /* 9, 10, 11: two bytes, already 16-bit aligned */
        want[2][3] = 9, want[2][4] = 10, want[2][5] = 11;
    } else {
        stream[n++] = 9, stream[n++] = 10, stream[n++] = 11, stream[n++] = 0; /* 3 bytes + pad */
        want[2][3] = 9, want[2][4] = 10, want[2][5] = 11;
    }
    stream[n++] = 0, stream[n++] = 0; /* end of line */
    /* middle row: run of 2 of index 7, delta (+2, +1): lands at x 4 of the top row */
    stream[n++] = 2, stream[n++] = rle4 ? 0x77 : 7;
    want[1][0] = want[1][1] = 7;
    stream[n++] = 0, stream[n++] = 2, stream[n++] = 2, stream[n++] = 1;
    stream[n++] = 2, stream[n++] = rle4 ? 0x33 : 3;
    want[0][4] = want[0][5] = 3;
    stream[n++] = 0, stream[n++] = 1; /* end of bitmap */
    bmp_spec s = {W, H, rle4 ? 4 : 8, rle4 ? 2 : 1, 40, false, palette, 16, {0}, stream, n};
    size_t len;
    uint8_t *b = make_bmp(&s, &len);
    yolo_image img;
    CHECK_MSG(decode(b, len, "rle.bmp", &img) == YOLO_OK, "RLE%d: %s", rle4 ? 4 : 8, yolo_last_error());
    bool ok = img.width == W && img.height == H;
    for (int y = 0; ok && y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t rgb[3];
            palette_rgb(want[y][x], rgb);
            ok = ok && memcmp(img.data + (y * W + x) * 3, rgb, 3) == 0;
        }
    CHECK_MSG(ok, "RLE%d: wrong pixels", rle4 ? 4 : 8);
    yolo_image_free(&img);
    check_prefixes(b, len, "cut-rle.bmp");
    free(b);
}

static void check_bad_bmp(void) {
    yolo_image img;
    size_t len;
    int idx[4] = {0, 1, 2, 3};
    size_t plen;
    uint8_t *px = pack_indices(idx, 2, 2, 8, &plen);
    bmp_spec s = {2, 2, 8, 0, 40, false, palette, 3, {0}, px, plen}; /* index 3 of a 3-colour palette */
    uint8_t *b = make_bmp(&s, &len);
    CHECK(decode(b, len, "index.bmp", &img) == YOLO_ERR_FORMAT);
    CHECK(test_error_mentions("index.bmp") && test_error_mentions("past its 3-colour palette"));
    free(b);
    s.n_colors = 4, s.compression = 4; /* embedded JPEG */
    b = make_bmp(&s, &len);
    CHECK(decode(b, len, "jpeg-in.bmp", &img) == YOLO_ERR_UNSUPPORTED);
    CHECK(test_error_mentions("jpeg-in.bmp") && test_error_mentions("compression 4"));
    free(b);
    s.compression = 0, s.bpp = 2;
    b = make_bmp(&s, &len);
    CHECK(decode(b, len, "2bit.bmp", &img) == YOLO_ERR_UNSUPPORTED && test_error_mentions("2 bits per pixel"));
    free(b);
    s.bpp = 8, s.dib = 20; /* no such header */
    b = make_bmp(&s, &len);
    CHECK(decode(b, len, "hdr.bmp", &img) == YOLO_ERR_FORMAT && test_error_mentions("hdr.bmp"));
    free(b);
    s.dib = 40, s.w = 70000, s.h = 70000; /* a bomb: refused from the header */
    b = make_bmp(&s, &len);
    CHECK(decode(b, len, "bomb.bmp", &img) == YOLO_ERR_FORMAT && test_error_mentions("pixel limit"));
    free(b);
    free(px);
}

/* ---- WebP ---- */

static void check_webp(void) {
    yolo_image src, img;
    random_image(&src, 21, 9, 2);
    uint8_t *enc;
    size_t len = WebPEncodeLosslessRGB(src.data, src.width, src.height, src.width * 3, &enc);
    CHECK(len > 0);
    CHECK_MSG(decode(enc, len, "lossless.webp", &img) == YOLO_OK && same_pixels(&src, &img), "lossless: %s",
              yolo_last_error());
    yolo_image_free(&img);
    check_prefixes(enc, len, "cut.webp");
    WebPFree(enc);
    /* lossy: the size, and pixels near the source (a smooth ramp survives VP8) */
    for (size_t i = 0; i < (size_t)src.width * src.height * 3; i++)
        src.data[i] = (uint8_t)(i / 3 % src.width * 10);
    len = WebPEncodeRGB(src.data, src.width, src.height, src.width * 3, 90, &enc);
    CHECK_MSG(decode(enc, len, "lossy.webp", &img) == YOLO_OK, "lossy: %s", yolo_last_error());
    if (img.data) {
        double err = 0;
        for (size_t i = 0; i < (size_t)src.width * src.height * 3; i++)
            err += abs(img.data[i] - src.data[i]);
        err /= (double)src.width * src.height * 3;
        CHECK_MSG(img.width == 21 && img.height == 9 && err < 6, "lossy: %dx%d, mean error %.2f", img.width, img.height,
                  err);
        yolo_image_free(&img);
    }
    WebPFree(enc);
    /* RGBA: alpha dropped, colour kept (lossless keeps the RGB of non-transparent pixels) */
    uint8_t rgba[21 * 9 * 4];
    for (int i = 0; i < 21 * 9; i++) {
        memcpy(rgba + 4 * i, src.data + 3 * i, 3);
        rgba[4 * i + 3] = (uint8_t)(128 + i % 100);
    }
    len = WebPEncodeLosslessRGBA(rgba, 21, 9, 21 * 4, &enc);
    CHECK_MSG(decode(enc, len, "alpha.webp", &img) == YOLO_OK && same_pixels(&src, &img), "RGBA: %s",
              yolo_last_error());
    yolo_image_free(&img);
    WebPFree(enc);
    /* an animated WebP (VP8X with the animation flag and an ANIM chunk) is refused */
    static const uint8_t anim[] = {'R', 'I', 'F', 'F', 36, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'X', 10, 0, 0, 0,
                                   0x02, 0, 0, 0, 9, 0, 0, 9, 0, 0, 'A', 'N', 'I', 'M', 6, 0, 0, 0,
                                   0, 0, 0, 0, 0, 0};
    CHECK(decode(anim, sizeof anim, "anim.webp", &img) == YOLO_ERR_UNSUPPORTED);
    CHECK(test_error_mentions("anim.webp") && test_error_mentions("animated"));
    yolo_image_free(&src);
}

/* ---- TIFF, written with libtiff ---- */

typedef struct tiff_spec {
    int bits, samples, orientation;
    uint16_t compression;
} tiff_spec;

static uint8_t *make_tiff(const yolo_image *src, const tiff_spec *s, size_t *len) {
    char *path = yolo_path_join(root, "t.tif");
    TIFF *t = TIFFOpen(path, "w");
    CHECK(t != NULL);
    int w = src->width, h = src->height;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, s->bits);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, s->samples);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, s->samples == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, s->compression);
    TIFFSetField(t, TIFFTAG_ORIENTATION, s->orientation);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 2);
    size_t row_bytes = (size_t)w * s->samples * s->bits / 8;
    uint8_t *row = malloc(row_bytes);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++)
            for (int c = 0; c < s->samples; c++) {
                uint8_t v = src->data[((size_t)y * w + x) * 3 + c];
                if (s->bits == 16) {
                    uint16_t v16 = (uint16_t)(v * 257 + (x & 1)); /* low byte noise: dropped */
                    memcpy(row + ((size_t)x * s->samples + c) * 2, &v16, 2);
                } else {
                    row[(size_t)x * s->samples + c] = v;
                }
            }
        TIFFWriteScanline(t, row, (uint32_t)y, 0);
    }
    free(row);
    TIFFClose(t);
    uint8_t *b = test_read_file(root, "t.tif", len);
    free(path);
    return b;
}

static void check_tiff(void) {
    yolo_image src, img;
    random_image(&src, 10, 7, 3);
    const tiff_spec plain = {8, 3, 1, COMPRESSION_NONE}, lzw = {8, 3, 1, COMPRESSION_LZW},
                    deflate = {8, 3, 1, COMPRESSION_ADOBE_DEFLATE}, deep = {16, 3, 1, COMPRESSION_NONE};
    const tiff_spec *exact[] = {&plain, &lzw, &deflate, &deep};
    const char *names[] = {"plain", "LZW", "deflate", "16-bit"};
    size_t len;
    for (int k = 0; k < 4; k++) {
        uint8_t *b = make_tiff(&src, exact[k], &len);
        CHECK_MSG(decode(b, len, "t.tif", &img) == YOLO_OK && same_pixels(&src, &img), "%s TIFF: %s", names[k],
                  yolo_last_error());
        yolo_image_free(&img);
        if (k == 1)
            check_prefixes(b, len, "cut.tif");
        free(b);
    }
    /* grey: the first channel, repeated */
    const tiff_spec grey = {8, 1, 1, COMPRESSION_NONE};
    uint8_t *b = make_tiff(&src, &grey, &len);
    CHECK_MSG(decode(b, len, "grey.tif", &img) == YOLO_OK, "grey TIFF: %s", yolo_last_error());
    bool ok = img.width == 10 && img.height == 7;
    for (int i = 0; ok && i < 70; i++)
        ok = img.data[3 * i] == src.data[3 * i] && img.data[3 * i + 1] == src.data[3 * i] &&
             img.data[3 * i + 2] == src.data[3 * i];
    CHECK_MSG(ok, "grey TIFF: wrong pixels");
    yolo_image_free(&img);
    free(b);
    /* the Orientation tag: all eight, the same transforms as a JPEG's EXIF */
    for (int o = 1; o <= 8; o++) {
        const tiff_spec s = {8, 3, o, COMPRESSION_NONE};
        b = make_tiff(&src, &s, &len);
        yolo_image want;
        yolo_image_alloc(&want, src.width, src.height);
        memcpy(want.data, src.data, (size_t)src.width * src.height * 3);
        yolo_image_orient(&want, o);
        CHECK_MSG(decode(b, len, "orient.tif", &img) == YOLO_OK && same_pixels(&want, &img), "orientation %d: %s", o,
                  yolo_last_error());
        yolo_image_free(&img);
        yolo_image_free(&want);
        free(b);
    }
    /* a TIFF signature over garbage */
    static const uint8_t junk[] = {'I', 'I', 42, 0, 0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3, 4};
    CHECK(decode(junk, sizeof junk, "junk.tif", &img) == YOLO_ERR_FORMAT && test_error_mentions("junk.tif"));
    yolo_image_free(&src);
}

/* ---- a dataset of such images ---- */

static void check_dataset(void) {
    yolo_image src;
    random_image(&src, 40, 24, 4);
    uint8_t *b;
    size_t len;
    yolo_bmp_encode(&src, &b, &len);
    test_write_file(root, "ds/images/train/a.bmp", b, len);
    free(b);
    len = WebPEncodeLosslessRGB(src.data, 40, 24, 120, &b);
    test_write_file(root, "ds/images/train/b.webp", b, len);
    WebPFree(b);
    const tiff_spec rot = {8, 3, 6, COMPRESSION_LZW}; /* stored 40x24, shown 24x40 */
    b = make_tiff(&src, &rot, &len);
    test_write_file(root, "ds/images/train/c.tif", b, len);
    free(b);
    for (int i = 0; i < 3; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "ds/labels/train/%c.txt", 'a' + i);
        test_write_text(root, rel, "0 0.5 0.5 0.2 0.2\n");
    }
    test_write_text(root, "ds.yaml", "path: ds\ntrain: images/train\nnames: [thing]\n");
    char *yaml = yolo_path_join(root, "ds.yaml");
    yolo_data_config cfg;
    CHECK_MSG(yolo_data_config_load(yaml, YOLO_NEED_BOXES, &cfg) == YOLO_OK, "%s", yolo_last_error());
    yolo_dataset *ds = NULL;
    yolo_data_spec spec = {YOLO_NEED_BOXES, NULL, NULL};
    CHECK_MSG(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &spec, NULL, &ds) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(ds && ds->n == 3 && ds->stats.corrupt == 0, "%lld images", ds ? (long long)ds->n : -1LL);
    for (int64_t i = 0; ds && i < ds->n; i++) {
        bool tif = strstr(ds->samples[i].path, ".tif") != NULL;
        CHECK_MSG(ds->samples[i].width == (tif ? 24 : 40) && ds->samples[i].height == (tif ? 40 : 24), "%s: %dx%d",
                  ds->samples[i].path, ds->samples[i].width, ds->samples[i].height);
    }
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    free(yaml);
    yolo_image_free(&src);
}

int main(void) {
    test_temp_dir(root, sizeof root);
    for (int i = 0; i < 256 * 4; i++)
        palette[i] = (uint8_t)(i * 37 + 11);
    check_rgb_bmp();
    for (int dib = 12; dib <= 40; dib += 28) {
        check_palette_bmp(1, dib);
        check_palette_bmp(4, dib);
        check_palette_bmp(8, dib);
    }
    check_masked_bmp(16, 0, (const uint32_t[3]){0x7C00, 0x03E0, 0x001F}, 40);  /* 5-5-5 by default */
    check_masked_bmp(16, 3, (const uint32_t[3]){0xF800, 0x07E0, 0x001F}, 40);  /* 5-6-5 */
    check_masked_bmp(16, 3, (const uint32_t[3]){0xF800, 0x07E0, 0x001F}, 108); /* masks inside a V4 header */
    check_masked_bmp(32, 0, (const uint32_t[3]){0xFF0000, 0xFF00, 0xFF}, 40);  /* BGRA, alpha dropped */
    check_masked_bmp(32, 3, (const uint32_t[3]){0x3FF00000, 0xFFC00, 0x3FF}, 40); /* 10-bit channels */
    check_rle_bmp(false);
    check_rle_bmp(true);
    check_bad_bmp();
    check_webp();
    check_tiff();
    check_dataset();
    return test_result("test_image_formats");
}
