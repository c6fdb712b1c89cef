/* image_formats.h — the decoders for the image formats besides JPEG and PNG
 * (Ultralytics' IMG_FORMATS that OpenCV reads): BMP (image_bmp.c), WebP
 * (image_webp.c, libwebp) and TIFF (image_tiff.c, libtiff). image_codec.c
 * sniffs the format and dispatches here.
 *
 * probe fills width/height as stored and *orientation (1..8, 1 where the
 * format has none); decode returns RGB in storage order, so the caller
 * applies the orientation as it does JPEG's EXIF one. Errors name `name`. */
#ifndef YOLO_DATA_IMAGE_FORMATS_H
#define YOLO_DATA_IMAGE_FORMATS_H
#include "data/image.h"

yolo_status yolo_bmp_probe(const uint8_t *bytes, size_t len, const char *name, int *width, int *height);
yolo_status yolo_bmp_decode(const uint8_t *bytes, size_t len, const char *name, yolo_image *out);
/* An uncompressed 24-bit bottom-up BMP of an RGB image (test fixtures). */
yolo_status yolo_bmp_encode(const yolo_image *image, uint8_t **out, size_t *len);

yolo_status yolo_webp_probe(const uint8_t *bytes, size_t len, const char *name, int *width, int *height);
yolo_status yolo_webp_decode(const uint8_t *bytes, size_t len, const char *name, yolo_image *out);

/* The libraries' versions, for `yolo checks` ("1.2.4"). */
void yolo_webp_version(char *buf, size_t size);
void yolo_tiff_version(char *buf, size_t size);

yolo_status yolo_tiff_probe(const uint8_t *bytes, size_t len, const char *name, int *width, int *height,
                            int *orientation);
yolo_status yolo_tiff_decode(const uint8_t *bytes, size_t len, const char *name, yolo_image *out);
#endif
