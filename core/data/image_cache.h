/* image_cache.h — decoded sample images shared by the loader's workers.
 *
 * Entries are the images as Ultralytics' load_image returns them: resized
 * bilinearly so the long side is imgsz, or as decoded when imgsz is 0
 * (classification). With `exact` (validation) a JPEG is decoded at full
 * size first, as cv2.imread does, so the pixels are Ultralytics' own;
 * without it (training) libjpeg's DCT-domain downscaling (1/2 .. 1/8)
 * first brings it near imgsz: faster, close, not bit-identical (a 320 px
 * shapes image decoded at 1/2 moves yolo11n-shapes' val mAP50-95 by 0.005). A pinned entry (acquired,
 * not yet released) is never evicted; unpinned ones go least recently used
 * first. capacity < 0 keeps everything (cache=ram). An image that fails to
 * decode now (changed since indexing) becomes a grey image without labels,
 * with one warning, so training goes on and stays deterministic. */
#ifndef YOLO_DATA_IMAGE_CACHE_H
#define YOLO_DATA_IMAGE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "data/dataset.h"

typedef struct yolo_image_cache yolo_image_cache;

yolo_status yolo_image_cache_create(const yolo_dataset *ds, int imgsz, bool exact, int64_t capacity,
                                    yolo_image_cache **out);
void yolo_image_cache_free(yolo_image_cache *cache);

/* Pins sample i's image; *failed is set when it could not be decoded. */
yolo_status yolo_image_cache_acquire(yolo_image_cache *cache, int64_t i, const yolo_image **image, bool *failed);
void yolo_image_cache_release(yolo_image_cache *cache, int64_t i);
int64_t yolo_image_cache_decodes(const yolo_image_cache *cache);

/* Ultralytics' load_image size: long side imgsz, ceil, capped. */
void yolo_load_size(int w0, int h0, int imgsz, int *w, int *h);

#endif
