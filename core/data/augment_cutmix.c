/* CutMix (see augment.h), as Ultralytics 8.3's CutMix: beta 1.0, three
 * candidate regions, the partner's instances kept by their overlap with the
 * chosen region and clipped to it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/image.h"
#include "data/instance_ops.h"
#include "data/rng.h"

#define CUTMIX_AREAS 3
#define CUTMIX_BETA 1.0

/* _rand_bbox: a region of side sqrt(1 - lambda) around a uniform centre,
 * clipped to the image (Python's // and int() on non-negative values). */
static void rand_region(yolo_rng *rng, int w, int h, float region[4]) {
    double lambda = yolo_rng_beta(rng, CUTMIX_BETA, CUTMIX_BETA);
    double cut_ratio = sqrt(1.0 - lambda);
    int cut_w = (int)(w * cut_ratio), cut_h = (int)(h * cut_ratio);
    int cx = (int)yolo_rng_below(rng, (uint64_t)w), cy = (int)yolo_rng_below(rng, (uint64_t)h);
    int x1 = cx - cut_w / 2, y1 = cy - cut_h / 2, x2 = cx + cut_w / 2, y2 = cy + cut_h / 2;
    region[0] = (float)(x1 < 0 ? 0 : x1 > w ? w : x1);
    region[1] = (float)(y1 < 0 ? 0 : y1 > h ? h : y1);
    region[2] = (float)(x2 < 0 ? 0 : x2 > w ? w : x2);
    region[3] = (float)(y2 < 0 ? 0 : y2 > h ? h : y2);
}

/* Copies from's pixels in [x1, x2) x [y1, y2) onto img (same size). */
static void paste_region(yolo_image *img, const yolo_image *from, int x1, int y1, int x2, int y2) {
    size_t row = (size_t)img->width * 3;
    for (int y = y1; y < y2; y++)
        memcpy(img->data + (size_t)y * row + (size_t)x1 * 3, from->data + (size_t)y * row + (size_t)x1 * 3,
               (size_t)(x2 - x1) * 3);
}

yolo_status yolo_cutmix(yolo_rng *rng, yolo_image *img, yolo_instances *ins, const yolo_image *from,
                        const yolo_instances *from_ins, bool *applied) {
    *applied = false;
    if (from->width != img->width || from->height != img->height)
        return yolo_error(YOLO_ERR_ARG, "cutmix: partner %dx%d for an image of %dx%d", from->width, from->height,
                          img->width, img->height);
    float regions[CUTMIX_AREAS][4];
    int free_regions[CUTMIX_AREAS], n_free = 0;
    for (int a = 0; a < CUTMIX_AREAS; a++) {
        rand_region(rng, img->width, img->height, regions[a]);
        float overlap = 0; /* ioa1.sum(axis=1) */
        for (int j = 0; j < ins->n; j++) overlap += yolo_box_ioa(regions[a], ins->boxes + 4 * j);
        if (overlap <= 0) free_regions[n_free++] = a;
    }
    if (n_free == 0) return YOLO_OK;
    const float *region = regions[free_regions[yolo_rng_below(rng, (uint64_t)n_free)]];
    float min_ioa = ins->n > 0 && yolo_instances_poly_points(ins) > 0 ? 0.01f : 0.1f;
    yolo_instances kept;
    yolo_instances_init(&kept, from_ins->kpt_count, from_ins->kpt_dims);
    yolo_status st = yolo_instances_append(&kept, from_ins);
    bool *keep = malloc(sizeof(bool) * (size_t)(from_ins->n > 0 ? from_ins->n : 1));
    if (!st && !keep) st = yolo_error(YOLO_ERR_NOMEM, "cutmix: %d instances", from_ins->n);
    int n_keep = 0;
    for (int j = 0; !st && j < from_ins->n; j++) {
        keep[j] = yolo_box_ioa(region, from_ins->boxes + 4 * j) >= min_ioa;
        n_keep += keep[j];
    }
    if (!st && n_keep > 0) {
        yolo_ins_filter(&kept, keep);
        int x1 = (int)region[0], y1 = (int)region[1], x2 = (int)region[2], y2 = (int)region[3];
        paste_region(img, from, x1, y1, x2, y2);
        /* Instances.add_padding(-x1, -y1), clip(x2 - x1, y2 - y1), add_padding(x1, y1) */
        yolo_ins_affine_axis(&kept, 1.0f, 1.0f, (float)-x1, (float)-y1);
        yolo_ins_clip(&kept, (float)(x2 - x1), (float)(y2 - y1));
        yolo_ins_affine_axis(&kept, 1.0f, 1.0f, (float)x1, (float)y1);
        st = yolo_instances_append(ins, &kept);
        *applied = st == YOLO_OK;
    }
    free(keep);
    yolo_instances_free(&kept);
    return st;
}
