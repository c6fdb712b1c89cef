/* rng.h — Philox4x32-10 counter-based random streams.
 *
 * A stream is a pure function of its key (seed, purpose, epoch, index):
 * the 64-bit seed is the Philox key and (block, purpose, epoch, index) is
 * the 128-bit counter, so every key has its own 2^32 blocks of 4 words and
 * no draw depends on which thread, worker or rank asked first. Anything
 * random in the framework (augmentation, shuffling, weight init, dropout,
 * the synthetic dataset) takes its own purpose. */
#ifndef YOLO_DATA_RNG_H
#define YOLO_DATA_RNG_H

#include <stdint.h>

typedef enum yolo_rng_purpose {
    YOLO_RNG_AUGMENT = 1,        /* augmentation of sample i in epoch e */
    YOLO_RNG_SHUFFLE = 2,        /* the epoch permutation (index 0) */
    YOLO_RNG_INIT = 3,           /* weight initialisation (index = parameter number) */
    YOLO_RNG_MIXUP_PARTNER = 4,  /* the independent augmentation of a mixup partner */
    YOLO_RNG_SHAPES = 5,         /* the synthetic shapes dataset */
    YOLO_RNG_MULTISCALE = 6,     /* multi-scale image size per batch */
    YOLO_RNG_DROPOUT = 7,
    YOLO_RNG_COPY_PASTE_PARTNER = 8,        /* the independent augmentation of a copy_paste (mixup mode) partner */
    YOLO_RNG_COPY_PASTE_MIXUP_PARTNER = 9,  /* the same, for the mixup partner's own copy_paste */
    YOLO_RNG_CUTMIX_PARTNER = 10,           /* the independent augmentation of a CutMix partner */
    YOLO_RNG_COPY_PASTE_CUTMIX_PARTNER = 11, /* the CutMix partner's own copy_paste */
    YOLO_RNG_USER = 64,          /* first purpose free for plugins and tests */
} yolo_rng_purpose;

typedef struct yolo_rng {
    uint32_t key[2];
    uint32_t counter[4]; /* counter[0] counts blocks; [1..3] = purpose, epoch, index */
    uint32_t block[4];   /* the current output block */
    int used;            /* words of block consumed (4: draw a new block) */
} yolo_rng;

/* One Philox4x32-10 block: out = philox(counter, key). */
void yolo_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

/* The stream keyed by (seed, purpose, epoch, index). */
void yolo_rng_init(yolo_rng *rng, uint64_t seed, uint32_t purpose, uint32_t epoch, uint32_t index);

uint32_t yolo_rng_u32(yolo_rng *rng);
uint64_t yolo_rng_u64(yolo_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double yolo_rng_uniform(yolo_rng *rng);
/* Uniform in [lo, hi). */
double yolo_rng_range(yolo_rng *rng, double lo, double hi);
/* Uniform integer in [0, n), unbiased (n > 0). */
uint64_t yolo_rng_below(yolo_rng *rng, uint64_t n);
/* True with probability p (consumes one draw even when p is 0 or 1, so the
 * draws after it never shift with the probabilities). */
int yolo_rng_bernoulli(yolo_rng *rng, double p);
/* Standard normal (Box-Muller, two uniforms per call). */
double yolo_rng_normal(yolo_rng *rng);
/* Gamma(shape, 1), Marsaglia-Tsang; Beta(a, b) from two gammas. */
double yolo_rng_gamma(yolo_rng *rng, double shape);
double yolo_rng_beta(yolo_rng *rng, double a, double b);
/* Fisher-Yates permutation of 0..n-1 into perm. */
void yolo_rng_permutation(yolo_rng *rng, int64_t *perm, int64_t n);

#endif
