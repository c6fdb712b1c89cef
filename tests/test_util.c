#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int test_failures = 0;

int test_result(const char *name) {
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

int test_skip(const char *why) {
    printf("SKIPPED: %s\n", why);
    return 77;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float test_uniform(uint64_t *state, float lo, float hi) {
    double u = (double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

void test_fill_uniform(float *data, int64_t n, uint64_t seed, float lo, float hi) {
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) data[i] = test_uniform(&state, lo, hi);
}

yolo_tensor *test_tensor_random(yolo_backend *be, const char *name, int ndim, const int64_t *shape, uint64_t seed,
                                float lo, float hi, int requires_grad) {
    yolo_tensor *t = yolo_tensor_new(be, name, YOLO_F32, ndim, shape, requires_grad != 0);
    if (!t) return NULL;
    int64_t n = yolo_tensor_numel(t);
    float *data = malloc((size_t)n * sizeof *data);
    test_fill_uniform(data, n, seed, lo, hi);
    yolo_tensor_upload_f32(t, data, n);
    free(data);
    return t;
}

double test_max_rel_error(const float *a, const float *b, int64_t n, double atol, double rtol) {
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (atol + rtol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i])) e = INFINITY;
        if (e > worst) worst = e;
    }
    return worst;
}

int test_error_mentions(const char *needle) { return strstr(yolo_last_error(), needle) != NULL; }
