/* sampler.h — which samples each rank gets, batch by batch.
 *
 * Epoch e's order is one permutation keyed by (seed, YOLO_RNG_SHUFFLE, e),
 * the same on every rank. It is padded by repetition from its start to a
 * multiple of the world size (as torch's DistributedSampler), cut into
 * global batches of batch x world positions, and rank r takes the r-th
 * contiguous part of each. So ranks never share a position, their union
 * is the epoch, and world=2/batch=8 sees the same global batches as
 * world=1/batch=16. */
#ifndef YOLO_DATA_SAMPLER_H
#define YOLO_DATA_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "yolo/error.h"

typedef struct yolo_sampler {
    int64_t n;       /* dataset size */
    int batch;       /* per-rank batch */
    int rank, world;
    bool shuffle;
    bool drop_last;  /* drop a last global batch smaller than batch x world */
    uint64_t seed;
} yolo_sampler;

yolo_status yolo_sampler_check(const yolo_sampler *s);
/* order[n] for epoch e (identity without shuffle); position[n] its inverse (may be NULL). */
void yolo_sampler_order(const yolo_sampler *s, int epoch, int64_t *order, int64_t *position);
/* Batches per epoch on each rank (the same on every rank). */
int64_t yolo_sampler_batches(const yolo_sampler *s);
/* This rank's dataset indices of batch b; returns how many (<= batch). */
int yolo_sampler_batch(const yolo_sampler *s, const int64_t *order, int64_t b, int64_t *indices);

#endif
