/* Fuzzing the image decoders (yolo_image_probe, yolo_image_decode: PNG via
 * libpng, JPEG via libturbojpeg, the EXIF orientation reader, BMP (our own
 * parser), WebP via libwebp, TIFF via libtiff). The first
 * byte picks min_long_side (0, 8, 16 or 640: the DCT downscaling path);
 * the rest is the file. A decoded image must have the probed size (at
 * min_long_side 0) within YOLO_IMAGE_MAX_PIXELS, and every pixel is read.
 * Images the probe finds larger than 4 Mpixel (but within the limit) are
 * not decoded: they cost time, not coverage. Corpus: fuzz/corpus/image, each
 * seed a 0 byte (min_long_side 0) and then the image file. */
#include <stdint.h>
#include <string.h>

#include "data/image.h"
#include "fuzz_check.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const int min_sides[4] = {0, 8, 16, 640};
    int min_long_side = min_sides[data[0] & 3];
    size--;
    uint8_t *bytes = malloc(size ? size : 1); /* exact size: ASan sees any over-read */
    memcpy(bytes, data + 1, size);
    yolo_image_info info;
    bool probed = yolo_image_probe(bytes, size, "fuzz.img", &info) == YOLO_OK;
    if (probed) FUZZ_INVARIANT(yolo_image_check_size(info.width, info.height, "probe") == YOLO_OK);
    if (probed && (int64_t)info.width * info.height > (1 << 22)) {
        free(bytes);
        return 0;
    }
    yolo_image img;
    bool repaired = false;
    if (yolo_image_decode(bytes, size, "fuzz.img", min_long_side, &img, &repaired) == YOLO_OK) {
        FUZZ_INVARIANT(img.data && yolo_image_check_size(img.width, img.height, "decoded") == YOLO_OK);
        if (probed && min_long_side == 0) FUZZ_INVARIANT(img.width == info.width && img.height == info.height);
        uint64_t s = 0;
        for (size_t i = 0; i < (size_t)img.width * img.height * 3; i++) s += img.data[i];
        sink += s;
        yolo_image_free(&img);
    } else {
        FUZZ_INVARIANT(img.data == NULL && strstr(yolo_last_error(), "fuzz.img"));
    }
    free(bytes);
    return 0;
}
