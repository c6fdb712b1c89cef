/* The shared-permutation, disjoint-shard sampler (see sampler.h). */
#include "data/sampler.h"

#include "data/rng.h"

yolo_status yolo_sampler_check(const yolo_sampler *s) {
    if (s->n <= 0)
        return yolo_error(YOLO_ERR_ARG, "sampler: empty dataset");
    if (s->batch <= 0)
        return yolo_error(YOLO_ERR_ARG, "sampler: batch %d must be positive", s->batch);
    if (s->world <= 0 || s->rank < 0 || s->rank >= s->world)
        return yolo_error(YOLO_ERR_ARG, "sampler: rank %d of world %d", s->rank, s->world);
    return YOLO_OK;
}

void yolo_sampler_order(const yolo_sampler *s, int epoch, int64_t *order, int64_t *position) {
    if (s->shuffle) {
        yolo_rng rng;
        yolo_rng_init(&rng, s->seed, YOLO_RNG_SHUFFLE, (uint32_t)epoch, 0);
        yolo_rng_permutation(&rng, order, s->n);
    } else {
        for (int64_t i = 0; i < s->n; i++)
            order[i] = i;
    }
    if (position)
        for (int64_t i = 0; i < s->n; i++)
            position[order[i]] = i;
}

static int64_t padded_total(const yolo_sampler *s) { return (s->n + s->world - 1) / s->world * s->world; }

int64_t yolo_sampler_batches(const yolo_sampler *s) {
    int64_t total = padded_total(s), global = (int64_t)s->batch * s->world;
    return s->drop_last ? total / global : (total + global - 1) / global;
}

int yolo_sampler_batch(const yolo_sampler *s, const int64_t *order, int64_t b, int64_t *indices) {
    int64_t total = padded_total(s), global = (int64_t)s->batch * s->world;
    int64_t start = b * global;
    if (b < 0 || start >= total)
        return 0;
    int64_t len = total - start < global ? total - start : global; /* a multiple of world */
    int64_t part = len / s->world;
    int64_t first = start + s->rank * part;
    for (int64_t k = 0; k < part; k++) {
        int64_t p = first + k;
        indices[k] = order[p % s->n]; /* padding repeats the order from its start */
    }
    return (int)part;
}
