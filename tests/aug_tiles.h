/* An in-memory augmentation source for the augmentation tests: tile i is
 * images[i] with its normalized labels, in the order 0..n-1 (MAX_TILES at
 * most). */
#ifndef YOLO_TEST_AUG_TILES_H
#define YOLO_TEST_AUG_TILES_H

#include "data/augment.h"
#include "data/image.h"

#define AUG_TILES_MAX 8

typedef struct aug_tiles {
    yolo_image images[AUG_TILES_MAX];
    yolo_instances labels[AUG_TILES_MAX]; /* normalized */
    int64_t order[AUG_TILES_MAX], position[AUG_TILES_MAX];
    int n;
} aug_tiles;

static inline yolo_status aug_tiles_acquire(void *ctx, int64_t i, yolo_aug_tile *t) {
    aug_tiles *f = ctx;
    t->image = &f->images[i];
    t->labels = &f->labels[i];
    t->orig_width = f->images[i].width, t->orig_height = f->images[i].height, t->image_class = -1;
    return YOLO_OK;
}

static inline void aug_tiles_release(void *ctx, int64_t i) { (void)ctx, (void)i; }

/* The source over the tiles (set n and each tile first). */
static inline yolo_aug_source aug_tiles_source(aug_tiles *f) {
    for (int t = 0; t < f->n; t++) f->order[t] = f->position[t] = t;
    return (yolo_aug_source){f, aug_tiles_acquire, aug_tiles_release, f->order, f->position, f->n};
}

static inline void aug_tiles_free(aug_tiles *f) {
    for (int t = 0; t < f->n; t++) yolo_image_free(&f->images[t]), yolo_instances_free(&f->labels[t]);
}

#endif
