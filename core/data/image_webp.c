/* WebP decoding through libwebp: lossy, lossless and with alpha (dropped, as
 * OpenCV's imread drops it). An animated WebP is refused, as OpenCV refuses
 * it. WebP's EXIF orientation is not applied: OpenCV does not apply it. */
#include <stdio.h>
#include <stdlib.h>
#include <webp/decode.h>

#include "data/image_formats.h"

static yolo_status features(const uint8_t *bytes, size_t len, const char *name, WebPBitstreamFeatures *f) {
    VP8StatusCode rc = WebPGetFeatures(bytes, len, f);
    if (rc == VP8_STATUS_NOT_ENOUGH_DATA)
        return yolo_error(YOLO_ERR_FORMAT, "%s: truncated WebP header", name);
    if (rc != VP8_STATUS_OK)
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt WebP header (libwebp status %d)", name, (int)rc);
    if (f->has_animation)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: animated WebP not supported (one still image per file)", name);
    return yolo_image_check_size(f->width, f->height, name);
}

void yolo_webp_version(char *buf, size_t size) {
    int v = WebPGetDecoderVersion(); /* 0xMMmmpp */
    snprintf(buf, size, "%d.%d.%d", v >> 16 & 255, v >> 8 & 255, v & 255);
}

yolo_status yolo_webp_probe(const uint8_t *bytes, size_t len, const char *name, int *width, int *height) {
    WebPBitstreamFeatures f;
    yolo_status st = features(bytes, len, name, &f);
    if (st != YOLO_OK)
        return st;
    *width = f.width;
    *height = f.height;
    return YOLO_OK;
}

yolo_status yolo_webp_decode(const uint8_t *bytes, size_t len, const char *name, yolo_image *out) {
    WebPBitstreamFeatures f;
    yolo_status st = features(bytes, len, name, &f);
    if (st != YOLO_OK)
        return st;
    if ((st = yolo_image_alloc(out, f.width, f.height)) != YOLO_OK)
        return st;
    size_t stride = (size_t)f.width * 3;
    if (!WebPDecodeRGBInto(bytes, len, out->data, stride * f.height, (int)stride)) {
        yolo_image_free(out);
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt or truncated WebP data", name);
    }
    return YOLO_OK;
}
