/* augment.h — augmentation of one sample: image and instances together.
 *
 * Every random choice for sample i in epoch e comes from the Philox stream
 * (seed, YOLO_RNG_AUGMENT, e, i); a partner's own augmentation from
 * (seed, purpose, e, i) with purpose YOLO_RNG_MIXUP_PARTNER (mixup),
 * YOLO_RNG_COPY_PASTE_PARTNER (copy_paste in mixup mode) or
 * YOLO_RNG_COPY_PASTE_MIXUP_PARTNER (the mixup partner's own copy_paste).
 * So the result is a pure function of (seed, epoch, sample, params)
 * whichever worker or rank computes it. Mosaic, mixup and copy_paste
 * partners are drawn from the epoch order within +-window positions of
 * the sample (the order is shared by all ranks), standing in
 * for Ultralytics' buffer of recently loaded images while staying pure. */
#ifndef YOLO_DATA_AUGMENT_H
#define YOLO_DATA_AUGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "yolo/data.h"

/* auto_augment: the classify training's policy (torchvision's, as
 * Ultralytics' classify_augmentations uses them); NONE: the hsv_* colour
 * jitter instead. */
typedef enum yolo_auto_augment {
    YOLO_AUTO_AUGMENT_NONE = 0,
    YOLO_AUTO_AUGMENT_RANDAUGMENT,
    YOLO_AUTO_AUGMENT_AUTOAUGMENT,
    YOLO_AUTO_AUGMENT_AUGMIX,
} yolo_auto_augment;

/* copy_paste_mode: where pasted instances come from. */
typedef enum yolo_copy_paste_mode {
    YOLO_COPY_PASTE_FLIP = 0, /* the sample's own mirror image, on the mosaic canvas before the perspective */
    YOLO_COPY_PASTE_MIXUP,    /* another sample, mosaicked and warped, after the perspective */
} yolo_copy_paste_mode;

/* Hyperparameters, named as Ultralytics' keys; the trainer fills them
 * from its config (yolo_augment_defaults gives Ultralytics' defaults). */
typedef struct yolo_augment_params {
    int imgsz;            /* 640: output side (train: square) */
    float hsv_h, hsv_s, hsv_v;  /* 0.015 0.7 0.4 */
    float degrees;        /* 0 */
    float translate;      /* 0.1 */
    float scale;          /* 0.5 */
    float shear;          /* 0 */
    float perspective;    /* 0 */
    float flipud;         /* 0 */
    float fliplr;         /* 0.5 */
    float bgr;            /* 0: probability that the channels are swapped RGB -> BGR (detect/segment/pose) */
    float mosaic;         /* 1.0 */
    float mixup;          /* 0 */
    float cutmix;         /* 0: probability of Ultralytics 8.3's CutMix (a region of a partner pasted) */
    float copy_paste;     /* 0: fraction of the eligible instances pasted (segment: needs polygons) */
    yolo_copy_paste_mode copy_paste_mode; /* flip */
    int close_mosaic;     /* 10: mosaic, mixup, cutmix and copy_paste off for the last N epochs */
    yolo_auto_augment auto_augment; /* randaugment: classify training */
    float erasing;        /* 0.4: classify random erasing */
    float crop_fraction;  /* 1.0: classify val crop */
    int mosaic_window;    /* 32: partner positions around the sample in the epoch order */
    int poly_resample;    /* 1000: points per polygon during augmentation (0: keep) */
} yolo_augment_params;

void yolo_augment_defaults(yolo_augment_params *p);

/* A loaded sample as the augmentations see it. */
typedef struct yolo_aug_tile {
    const yolo_image *image;        /* detect: resized so the long side is imgsz; classify: as decoded */
    const yolo_instances *labels;   /* normalized to the image */
    int orig_width, orig_height;    /* the file's size (EXIF applied) */
    int32_t image_class;
} yolo_aug_tile;

/* Where samples come from: acquire/release a tile (the loader's cache),
 * and the epoch order for drawing partners. */
typedef struct yolo_aug_source {
    void *ctx;
    yolo_status (*acquire)(void *ctx, int64_t index, yolo_aug_tile *tile);
    void (*release)(void *ctx, int64_t index);
    const int64_t *order;    /* epoch order, n entries */
    const int64_t *position; /* position[i]: where sample i sits in order */
    int64_t n;
} yolo_aug_source;

typedef struct yolo_aug_output {
    yolo_image image;          /* imgsz x imgsz (owned) */
    yolo_instances instances;  /* normalized to image (owned) */
    yolo_image_meta meta;
    yolo_aug_record record;
    int32_t image_class;
} yolo_aug_output;

/* Detect/segment/pose. augment=false: letterbox only (validation).
 * mosaic_on=false after close_mosaic. flip_idx for keypoints (may be NULL).
 * out->instances must be initialised with the dataset's keypoint layout. */
yolo_status yolo_augment_detect(const yolo_augment_params *p, bool augment, bool mosaic_on, uint64_t seed, int epoch,
                                int64_t index, const int *flip_idx, const yolo_aug_source *src, yolo_aug_output *out);

/* Rect training (rect=True): the sample letterboxed into its batch's
 * out_w x out_h, then the random perspective, HSV and flips at that size;
 * no mosaic or mixup (Ultralytics turns both off for rect datasets). The
 * draws are those of yolo_augment_detect with mosaic off. */
yolo_status yolo_augment_detect_rect(const yolo_augment_params *p, uint64_t seed, int epoch, int64_t index,
                                     const int *flip_idx, const yolo_aug_source *src, int out_w, int out_h,
                                     yolo_aug_output *out);

/* Validation letterbox into out_w x out_h (square imgsz, or a rect batch
 * shape): fit without upscaling, centred, padded with YOLO_PAD_VALUE. */
yolo_status yolo_augment_letterbox(const yolo_augment_params *p, int epoch, int64_t index, const yolo_aug_source *src,
                                   int out_w, int out_h, yolo_aug_output *out);

/* Classify: random resized crop, flips, the auto_augment policy (or,
 * without one, HSV), erasing (train), or resize the short side + centre
 * crop (val). */
yolo_status yolo_augment_classify(const yolo_augment_params *p, bool augment, uint64_t seed, int epoch, int64_t index,
                                  const yolo_aug_source *src, yolo_aug_output *out);

struct yolo_rng;

/* The HSV jitter: gains r_h, r_s, r_v ~ U(-1, 1) x hsv_* drawn from rng
 * into gain[3], applied when any hsv_* is non-zero. */
void yolo_augment_hsv(const yolo_augment_params *p, struct yolo_rng *rng, yolo_image *img, float gain[3]);

/* Copy-paste (Ultralytics' CopyPaste) on img and its instances (pixel
 * xyxy, polygons required: an image without any is left as it is): the
 * instances of src_ins (src_img's, same size) whose boxes overlap each of
 * ins' by an intersection over ins' box area below 0.30, least overlapping
 * first, round(p * their count) of them, are appended to ins and src_img's
 * pixels inside their polygons copied onto img. src_img NULL: flip mode,
 * the source is img's own horizontal mirror. *pasted (may be NULL): how
 * many were pasted. Draws nothing. */
yolo_status yolo_copy_paste(float p, yolo_image *img, yolo_instances *ins, const yolo_image *src_img,
                            const yolo_instances *src_ins, int *pasted);

/* CutMix (Ultralytics 8.3's CutMix._mix_transform) on img and its
 * instances (pixel xyxy) from a partner of the same size (from, from_ins:
 * already mosaicked and warped, as Ultralytics' pre_transform leaves it).
 * Draws three candidate regions from rng (side sqrt(1 - lambda) of the
 * image's, lambda ~ Beta(1, 1), centre uniform) and keeps one, drawn among
 * those that overlap none of img's boxes; the partner's pixels in it are
 * copied over img, and its instances that overlap it by an intersection
 * over their box area >= 0.1 (0.01 when img's instances have polygons) are
 * appended, clipped to it. Nothing changes when no region is free or no
 * partner instance overlaps it; *applied says whether it did. */
yolo_status yolo_cutmix(struct yolo_rng *rng, yolo_image *img, yolo_instances *ins, const yolo_image *from,
                        const yolo_instances *from_ins, bool *applied);

/* The random perspective step alone (exposed for tests): warps `image`
 * (instances in pixel xyxy form) to out_w x out_h drawing from `rng`,
 * then clips and filters instances. */
yolo_status yolo_augment_perspective(const yolo_augment_params *p, struct yolo_rng *rng, yolo_image *image,
                                     yolo_instances *ins, int out_w, int out_h, yolo_aug_record *rec);

#endif
