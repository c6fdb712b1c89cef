/* What `yolo predict` and the host API (yolo/yolo.h) share on the way into
 * the model: the files a source= names, and the letterbox / centre crop
 * that turns decoded images into a batch. One code path, so an image
 * predicted through the API gives what the CLI writes for it. */
#ifndef YOLO_MODES_PREDICT_INPUT_H
#define YOLO_MODES_PREDICT_INPUT_H

#include "data/vfs.h"
#include "train/session.h"
#include "yolo/data.h"

/* batch= in predict: images per forward pass (Ultralytics' LoadImages batch). */
#define YOLO_PREDICT_BATCH_MAX 256

/* The image files of source= (a file, a folder, an archive or a glob
 * pattern), read through vfs. Errors name source=; a URL, stream, camera,
 * screen or video is refused saying it is not built. */
typedef struct yolo_predict_sources {
    yolo_vfs *vfs;
    char **files;
    int64_t n_files;
} yolo_predict_sources;

yolo_status yolo_predict_sources_list(yolo_predict_sources *p, const char *source);
/* Reads and decodes file k (RGB). */
yolo_status yolo_predict_sources_decode(const yolo_predict_sources *p, int64_t k, yolo_image *out);
void yolo_predict_sources_free(yolo_predict_sources *p);

/* A batch of decoded images as the model takes them: image-level tasks
 * (YOLO_NEED_IMAGE_CLASS) a centre crop of imgsz, the others letterboxed to
 * imgsz [h, w], padded only to a multiple of `stride` when all n images
 * share one size (stride 0: to the full imgsz). which[i]: the sample index
 * of image i. Free with yolo_predict_input_free. */
typedef struct yolo_predict_input {
    yolo_batch batch;
    int32_t cls[YOLO_PREDICT_BATCH_MAX];
    yolo_aug_record aug[YOLO_PREDICT_BATCH_MAX];
    yolo_image_meta meta[YOLO_PREDICT_BATCH_MAX];
} yolo_predict_input;

yolo_status yolo_predict_input_fill(yolo_predict_input *in, const yolo_session *s, int stride,
                                    const yolo_image *images, int64_t *which, int n);
void yolo_predict_input_free(yolo_predict_input *in);

/* imgsz=[h, w] with h != w is refused for image-level tasks (a centre crop is square). */
yolo_status yolo_predict_check_imgsz(const yolo_session *s);

#endif
