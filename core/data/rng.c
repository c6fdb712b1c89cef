/* Philox4x32-10 (Salmon et al., SC'11; Random123) and distributions on it. */
#include "data/rng.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline void philox_round(uint32_t ctr[4], const uint32_t key[2]) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * ctr[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * ctr[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t out0 = hi1 ^ ctr[1] ^ key[0];
    uint32_t out2 = hi0 ^ ctr[3] ^ key[1];
    ctr[0] = out0;
    ctr[1] = lo1;
    ctr[2] = out2;
    ctr[3] = lo0;
}

void yolo_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k[0] += PHILOX_W0;
            k[1] += PHILOX_W1;
        }
        philox_round(c, k);
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
}

void yolo_rng_init(yolo_rng *rng, uint64_t seed, uint32_t purpose, uint32_t epoch, uint32_t index) {
    rng->key[0] = (uint32_t)seed;
    rng->key[1] = (uint32_t)(seed >> 32);
    rng->counter[0] = 0;
    rng->counter[1] = purpose;
    rng->counter[2] = epoch;
    rng->counter[3] = index;
    rng->used = 4;
}

uint32_t yolo_rng_u32(yolo_rng *rng) {
    if (rng->used >= 4) {
        yolo_philox4x32_10(rng->counter, rng->key, rng->block);
        rng->counter[0]++;
        rng->used = 0;
    }
    return rng->block[rng->used++];
}

uint64_t yolo_rng_u64(yolo_rng *rng) {
    uint64_t hi = yolo_rng_u32(rng);
    return (hi << 32) | yolo_rng_u32(rng);
}

double yolo_rng_uniform(yolo_rng *rng) {
    return (double)(yolo_rng_u64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

double yolo_rng_range(yolo_rng *rng, double lo, double hi) {
    return lo + (hi - lo) * yolo_rng_uniform(rng);
}

uint64_t yolo_rng_below(yolo_rng *rng, uint64_t n) {
    if (n <= 1)
        return 0;
    /* Rejection on the top of the range keeps it unbiased. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t x;
    do {
        x = yolo_rng_u64(rng);
    } while (x >= limit);
    return x % n;
}

int yolo_rng_bernoulli(yolo_rng *rng, double p) { return yolo_rng_uniform(rng) < p; }

double yolo_rng_normal(yolo_rng *rng) {
    double u1 = 1.0 - yolo_rng_uniform(rng); /* (0, 1] keeps log finite */
    double u2 = yolo_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double yolo_rng_gamma(yolo_rng *rng, double shape) {
    if (shape < 1.0) {
        double u = yolo_rng_uniform(rng);
        return yolo_rng_gamma(rng, shape + 1.0) * pow(1.0 - u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = yolo_rng_normal(rng);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = 1.0 - yolo_rng_uniform(rng);
        if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v;
    }
}

double yolo_rng_beta(yolo_rng *rng, double a, double b) {
    double x = yolo_rng_gamma(rng, a);
    double y = yolo_rng_gamma(rng, b);
    return x / (x + y);
}

void yolo_rng_permutation(yolo_rng *rng, int64_t *perm, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)yolo_rng_below(rng, (uint64_t)i + 1);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
