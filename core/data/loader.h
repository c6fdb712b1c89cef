/* loader.h — batches for the trainer: sampled, augmented, collated.
 *
 * `workers` threads each build whole batches (batch b by whichever worker
 * claims it) into a bounded ring of `prefetch` batches that the trainer
 * takes in order; with workers = 0 the calling thread builds them. Since
 * every sample's augmentation is a pure function of (seed, epoch, index),
 * the batches are bit-identical for any number of workers, and a rank's
 * batches depend on the world size only through which samples it gets.
 *
 * Decoded images go through a shared cache: with cache_ram every image is
 * kept once decoded (resized so its long side is imgsz, as Ultralytics'
 * cache=ram); otherwise an LRU sized to the samples in flight plus the
 * mosaic window, so a mosaic partner is usually decoded once.
 *
 * Every batch's images share one size (batch->height x batch->width):
 * imgsz x imgsz, except rect batches and multi_scale sizes. */
#ifndef YOLO_DATA_LOADER_H
#define YOLO_DATA_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "data/augment.h"
#include "data/dataset.h"
#include "yolo/data.h"

typedef struct yolo_loader_options {
    int batch;             /* per-rank batch size */
    int workers;           /* 0: build batches in the calling thread */
    int rank, world;       /* DDP rank and world size (0, 1 alone) */
    uint64_t seed;
    bool augment;          /* training augmentation (else letterbox / centre crop) */
    bool shuffle;
    bool drop_last;
    bool cache_ram;        /* cache=ram */
    int prefetch;          /* batches in the ring, <= 0: 2 per worker (at least 2) */
    int epochs;            /* total epochs, for close_mosaic (<= 0: never closes) */
    int cache_images;      /* LRU entries, <= 0: sized automatically */
    bool rect;             /* rect batches (needs shuffle off; ignored for classify): images in
                              aspect-ratio order, each batch at its own shape,
                              ceil(shape * imgsz / stride + pad) * stride as Ultralytics, pad 0.5
                              for validation (letterbox only) and 0.0 with augment (training:
                              letterbox, perspective, HSV, flips; no mosaic or mixup) */
    double multi_scale;    /* training, > 0: every batch resized (bilinear) to a random size in
                              about [1 - f, 1 + f] x imgsz, stride multiples (not for classify) */
    int stride;            /* the model's largest stride for rect and multi-scale shapes, <= 0: 32 */
    int deal_rank, deal_world; /* validation under DDP: the batches of a 1-rank loader dealt
                              round-robin, batch b to rank b % deal_world, so every image counts
                              exactly once (rank/world shards pad); deal_world <= 1: all batches */
    yolo_augment_params aug;
} yolo_loader_options;

typedef struct yolo_loader yolo_loader;

/* The dataset must outlive the loader. */
yolo_status yolo_loader_create(const yolo_dataset *ds, const yolo_loader_options *opt, yolo_loader **out);
void yolo_loader_free(yolo_loader *loader);

/* Starts epoch `epoch` at batch `first_batch` (0, or where a resumed run
 * stopped); call it before the first yolo_loader_next of every epoch.
 * Batches of a previous epoch not taken are dropped. */
yolo_status yolo_loader_start_epoch(yolo_loader *loader, int epoch, int64_t first_batch);
/* Batches per epoch on this rank. */
int64_t yolo_loader_num_batches(const yolo_loader *loader);
/* The total epochs changed (time=): close_mosaic counts from the new end. */
void yolo_loader_set_epochs(yolo_loader *loader, int epochs);
/* Whether mosaic is on in this epoch (off for the last close_mosaic epochs). */
bool yolo_loader_mosaic_on(const yolo_loader *loader, int epoch);

/* The next batch of the epoch, in order; *out = NULL after the last one.
 * The batch belongs to the caller until yolo_loader_release. */
yolo_status yolo_loader_next(yolo_loader *loader, yolo_batch **out);
void yolo_loader_release(yolo_loader *loader, yolo_batch *batch);

/* Images decoded so far (tests and benchmarks: cache effectiveness). */
int64_t yolo_loader_decodes(const yolo_loader *loader);

#endif
