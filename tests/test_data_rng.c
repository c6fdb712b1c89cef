/* Philox4x32-10 known-answer vectors (Random123 tests/kat_vectors) and the
 * stream keying: same key -> same stream, any key difference -> another. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/rng.h"
#include "test_util.h"

static void test_known_answers(void) {
    /* counter[4], key[2] -> expected[4], from Random123's kat_vectors. */
    static const uint32_t kat[3][10] = {
        {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
         0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int v = 0; v < 3; v++) {
        uint32_t out[4];
        yolo_philox4x32_10(kat[v], kat[v] + 4, out);
        for (int i = 0; i < 4; i++)
            CHECK_MSG(out[i] == kat[v][6 + i], "vector %d word %d: %08x != %08x", v, i, out[i],
                      kat[v][6 + i]);
    }
}

static void test_streams(void) {
    yolo_rng a, b;
    uint32_t first[5][8];
    /* The same key twice gives the same words. */
    yolo_rng_init(&a, 42, YOLO_RNG_AUGMENT, 3, 17);
    yolo_rng_init(&b, 42, YOLO_RNG_AUGMENT, 3, 17);
    for (int i = 0; i < 100; i++)
        CHECK(yolo_rng_u32(&a) == yolo_rng_u32(&b));
    /* Changing any one key part changes the stream. */
    const uint64_t seeds[5] = {42, 43, 42, 42, 42};
    const uint32_t purposes[5] = {YOLO_RNG_AUGMENT, YOLO_RNG_AUGMENT, YOLO_RNG_SHUFFLE,
                                  YOLO_RNG_AUGMENT, YOLO_RNG_AUGMENT};
    const uint32_t epochs[5] = {3, 3, 3, 4, 3}, idx[5] = {17, 17, 17, 17, 18};
    for (int s = 0; s < 5; s++) {
        yolo_rng_init(&a, seeds[s], purposes[s], epochs[s], idx[s]);
        for (int i = 0; i < 8; i++)
            first[s][i] = yolo_rng_u32(&a);
    }
    for (int s = 0; s < 5; s++)
        for (int t = s + 1; t < 5; t++)
            CHECK_MSG(memcmp(first[s], first[t], sizeof first[s]) != 0, "streams %d and %d equal", s, t);
    /* The first block of a stream is philox(counter=(0,purpose,epoch,index), key=seed). */
    uint32_t ctr[4] = {0, YOLO_RNG_AUGMENT, 3, 17}, key[2] = {42, 0}, out[4];
    yolo_philox4x32_10(ctr, key, out);
    CHECK(out[0] == first[0][0] && out[3] == first[0][3]);
}

static void test_distributions(void) {
    yolo_rng r;
    yolo_rng_init(&r, 7, YOLO_RNG_USER, 0, 0);
    double sum = 0, sum2 = 0;
    int counts[6] = {0};
    const int n = 60000;
    for (int i = 0; i < n; i++) {
        double u = yolo_rng_uniform(&r);
        CHECK(u >= 0 && u < 1);
        sum += u;
        counts[yolo_rng_below(&r, 6)]++;
        double g = yolo_rng_normal(&r);
        sum2 += g * g;
    }
    CHECK_MSG(fabs(sum / n - 0.5) < 0.01, "uniform mean %f", sum / n);
    CHECK_MSG(fabs(sum2 / n - 1.0) < 0.03, "normal variance %f", sum2 / n);
    for (int k = 0; k < 6; k++)
        CHECK_MSG(abs(counts[k] - n / 6) < n / 60, "below(6) bucket %d: %d", k, counts[k]);
    double bsum = 0;
    for (int i = 0; i < 4000; i++) {
        double x = yolo_rng_beta(&r, 32, 32);
        CHECK(x > 0 && x < 1);
        bsum += x;
    }
    CHECK_MSG(fabs(bsum / 4000 - 0.5) < 0.01, "beta(32,32) mean %f", bsum / 4000);
    /* A permutation holds every index once. */
    int64_t perm[1000];
    char seen[1000] = {0};
    yolo_rng_init(&r, 7, YOLO_RNG_SHUFFLE, 1, 0);
    yolo_rng_permutation(&r, perm, 1000);
    int moved = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK(perm[i] >= 0 && perm[i] < 1000 && !seen[perm[i]]);
        if (perm[i] >= 0 && perm[i] < 1000)
            seen[perm[i]] = 1;
        moved += perm[i] != i;
    }
    CHECK(moved > 900);
}

int main(void) {
    test_known_answers();
    test_streams();
    test_distributions();
    return test_result("test_data_rng");
}
