/* fuzz_mutate.h — the byte mutator the plain fuzz drivers share (any
 * compiler; libFuzzer brings its own). Deterministic for a given seed. */
#ifndef YOLO_FUZZ_MUTATE_H
#define YOLO_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_input {
    uint8_t *data;
    size_t size;
} fuzz_input;

void fuzz_seed(uint64_t seed);
uint64_t fuzz_rand(void);

/* Mutates buf[0, size) in place (capacity cap) with 1-6 edits: bit flips,
 * random and token bytes, inserts, deletes, truncation, interesting
 * little-endian integers, rewritten decimal numbers, copied chunks, and
 * splices from `pool` (may be empty). Returns the new size. */
size_t fuzz_mutate(uint8_t *buf, size_t size, size_t cap, const fuzz_input *pool, int n_pool);

#endif
