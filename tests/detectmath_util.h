/* Checks and random numbers for the detect-math tests (tests/detectmath_*.c),
 * which test the core detection API (yolo/detection.h) through libyolo. */
#ifndef DETECTMATH_UTIL_H
#define DETECTMATH_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int dm_failures;

#define DM_CHECK(cond, ...)                                                          \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            dm_failures++;                                                           \
        }                                                                            \
    } while (0)

/* |got - want| <= tol (absolute). */
#define DM_NEAR(got, want, tol)                                                                     \
    DM_CHECK(fabs((double)(got) - (double)(want)) <= (tol), "got %.12g, want %.12g", (double)(got), \
             (double)(want))

static inline int dm_result(const char *name) {
    if (dm_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, dm_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* splitmix64: a fixed, seedable stream so failures reproduce. */
static inline uint64_t dm_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline double dm_uniform(uint64_t *s, double lo, double hi) {
    return lo + (hi - lo) * (double)(dm_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
