/* image.h — decoding, encoding and resampling of 8-bit RGB images. */
#ifndef YOLO_DATA_IMAGE_H
#define YOLO_DATA_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/data.h"

typedef enum yolo_image_format {
    YOLO_IMAGE_UNKNOWN = 0,
    YOLO_IMAGE_JPEG,
    YOLO_IMAGE_PNG,
    YOLO_IMAGE_BMP,  /* decoders: image_formats.h */
    YOLO_IMAGE_WEBP,
    YOLO_IMAGE_TIFF,
} yolo_image_format;

typedef struct yolo_image_info {
    int width, height;      /* after EXIF orientation */
    yolo_image_format format;
    int orientation;        /* EXIF (JPEG) or Orientation tag (TIFF) 1..8 (1: none) */
    bool truncated;         /* JPEG without EOI or PNG without IEND */
} yolo_image_info;

/* The largest image decoded: Pillow's DecompressionBombError limit (twice
 * Image.MAX_IMAGE_PIXELS), so what Ultralytics refuses is refused here too,
 * from the header, before anything is allocated (a tiny PNG can declare
 * 20000x20000). */
#define YOLO_IMAGE_MAX_PIXELS 178956970LL

/* OK when width x height is a positive size within YOLO_IMAGE_MAX_PIXELS;
 * else YOLO_ERR_FORMAT naming `name` and the size. */
yolo_status yolo_image_check_size(int64_t width, int64_t height, const char *name);

/* "JPEG (libjpeg-turbo 2.1.5), PNG (libpng 1.6.39), BMP, WebP (libwebp
 * 1.2.4), TIFF (libtiff 4.5.0)": the formats decoded and with what. */
void yolo_image_formats_describe(char *buf, size_t size);

/* Reads the header only. Errors (YOLO_ERR_FORMAT) name `name`. */
yolo_status yolo_image_probe(const uint8_t *bytes, size_t len, const char *name, yolo_image_info *info);

/* Decodes JPEG, PNG, BMP, WebP or TIFF (by content, not by name) to RGB
 * with the orientation applied; grey and palette are
 * expanded, alpha is dropped (as OpenCV's imread does). A truncated JPEG
 * whose decoder only warns is accepted and *repaired is set (may be NULL).
 * min_long_side > 0 lets the JPEG decoder scale down by 1/2, 1/4 or 1/8
 * in the DCT while the long side stays >= min_long_side (much faster for
 * big photos); 0 decodes at full size. */
yolo_status yolo_image_decode(const uint8_t *bytes, size_t len, const char *name, int min_long_side,
                              yolo_image *out, bool *repaired);

/* Reads a whole file and decodes it. */
yolo_status yolo_image_load_file(const char *path, yolo_image *out);

/* Encoders (for the synthetic dataset and test fixtures); *out is malloc'd.
 * encode_pixels takes 1 (grey), 3 (RGB) or 4 (RGBA, PNG only) channels. */
yolo_status yolo_image_encode_pixels(const uint8_t *pixels, int width, int height, int channels,
                                     yolo_image_format format, int quality, uint8_t **out, size_t *len);
yolo_status yolo_image_encode_jpeg(const yolo_image *image, int quality, uint8_t **out, size_t *len);
yolo_status yolo_image_encode_png(const yolo_image *image, uint8_t **out, size_t *len);
/* Encodes by the file's extension (.jpg/.jpeg/.png) and writes it. */
yolo_status yolo_image_save(const yolo_image *image, const char *path);

yolo_status yolo_image_alloc(yolo_image *image, int width, int height);
/* Applies an EXIF orientation (2..8) to a decoded image, in place. */
yolo_status yolo_image_orient(yolo_image *image, int orientation);

/* Resizes src to dst_w x dst_h into *dst (allocated): bilinear with
 * half-pixel centres (cv2.INTER_LINEAR), or pixel-area averaging when
 * `area` and shrinking (cv2.INTER_AREA). */
yolo_status yolo_image_resize(const yolo_image *src, int dst_w, int dst_h, bool area, yolo_image *dst);

/* Fills the whole image with one grey value. */
void yolo_image_fill(yolo_image *image, uint8_t value);

/* Copies the w x h block at (sx, sy) of src to (dx, dy) of dst (no clipping). */
void yolo_image_blit(const yolo_image *src, int sx, int sy, yolo_image *dst, int dx, int dy, int w, int h);

/* dst = warp of src by the 3x3 matrix m (dst = m * src, inverted inside),
 * bilinear, border YOLO_PAD_VALUE; projective when m[6] or m[7] != 0.
 * dst must be allocated to its output size. */
yolo_status yolo_image_warp(const yolo_image *src, const double m[9], yolo_image *dst);

void yolo_image_flip_lr(yolo_image *image);
void yolo_image_flip_ud(yolo_image *image);

/* OpenCV-style HSV jitter with gains r (each in [-1,1] x hsv_*):
 * H' = (H + 180 r_h) mod 180, S' = clip(S (1 + r_s)), V' = clip(V (1 + r_v)). */
void yolo_image_hsv(yolo_image *image, const float r[3]);

/* dst = round(a*lambda + b*(1-lambda)) (same sizes). */
void yolo_image_blend(yolo_image *a, const yolo_image *b, float lambda);

#endif
