/* Helpers of the Vulkan tests (header-only: every test_*.c is its own program).
 *
 * vk_test_open skips the test (exit code 77, reason printed) only where no
 * Vulkan device exists at all; any other failure to open one fails. Tests
 * end with vk_test_finish, which fails on any message of the validation
 * layer (tests/vulkan.cmake turns it on when it is installed). */
#ifndef YOLO_VULKAN_TEST_COMMON_H
#define YOLO_VULKAN_TEST_COMMON_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/vulkan/vulkan_stats.h"
#include "test_util.h"

/* 0 on success, 77 to skip, 1 on failure. */
static inline int vk_test_open(const char *device, yolo_backend **out) {
    *out = NULL;
    yolo_status st = yolo_backend_create(device, 0, out);
    if (st == YOLO_OK) {
        printf("backend %s%s\n", yolo_backend_name(*out),
               yolo_vulkan_validating(*out) ? " (validation layer on)" : "");
        return 0;
    }
    if (st == YOLO_ERR_BACKEND && strstr(yolo_last_error(), "unavailable")) {
        test_skip(yolo_last_error());
        return 77;
    }
    fprintf(stderr, "opening %s failed: %s\n", device, yolo_last_error());
    return 1;
}

static inline int vk_test_finish(const char *name) {
    const uint64_t messages = yolo_vulkan_validation_messages();
    CHECK_MSG(messages == 0, "the validation layer reported %llu message(s)", (unsigned long long)messages);
    return test_result(name);
}

/* Max |a-b| / (atol + rtol*|b|) over n values (<= 1: within tolerance), with
 * the index of the worst element in *at. */
static inline double vk_test_worst(const float *a, const float *b, int64_t n, double atol, double rtol,
                                   int64_t *at) {
    double worst = 0.0;
    *at = 0;
    for (int64_t i = 0; i < n; i++) {
        const double diff = fabs((double)a[i] - (double)b[i]);
        double e = a[i] == b[i] ? 0.0 : diff / (atol + rtol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i]) || isnan(e)) e = INFINITY;
        if (e > worst) {
            worst = e;
            *at = i;
        }
    }
    return worst;
}

#endif
