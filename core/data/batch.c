/* Batch helpers of yolo/data.h. */
#include "yolo/data.h"

void yolo_batch_images_to_float(const yolo_batch *batch, float *out, const float mean[3],
                                const float std[3]) {
    size_t plane = (size_t)batch->height * (size_t)batch->width;
    float scale[3], shift[3];
    for (int c = 0; c < 3; c++) {
        float m = mean ? mean[c] : 0.0f, s = std ? std[c] : 1.0f;
        scale[c] = 1.0f / (255.0f * s);
        shift[c] = -m / s;
    }
    for (int i = 0; i < batch->n; i++)
        for (int c = 0; c < 3; c++) {
            const uint8_t *src = batch->images + ((size_t)i * 3 + c) * plane;
            float *dst = out + ((size_t)i * 3 + c) * plane;
            for (size_t p = 0; p < plane; p++)
                dst[p] = src[p] * scale[c] + shift[c];
        }
}
