/* Batched host <-> backend copies (yolo_tensors_download_f32 / upload_f32,
 * the step's head outputs and their gradients):
 *   1. values round-trip on the CPU, on a Vulkan device with mapped memory
 *      and on its staging path (forced, as on a discrete GPU);
 *   2. each batch counts as one transfer in the traffic, its bytes summed;
 *      staged, it is one recorded command buffer (one queue submission);
 *      a batch larger than the staging buffer still arrives, copy by copy;
 *   3. tensors of two backends in one batch are refused by name; a tensor of
 *      another dtype is converted like yolo_tensor_download_f32 does.
 * The Vulkan parts skip (exit 77) without a device. */
#include <stdlib.h>
#include <string.h>

#include "vulkan_test_common.h"

enum { N = 3 };

static float value(int tensor, int64_t i) { return (float)(tensor * 1000003 + i) * 0.25f; }

/* Sizes: small, odd and (big) past the 8 MiB staging buffer in total. */
static uint64_t recordings(yolo_backend *be) {
    yolo_vulkan_stats s = {0};
    return yolo_vulkan_get_stats(be, &s) == YOLO_OK ? s.transfer_recordings : 0;
}

/* staged: a Vulkan device on its staging path, whose submissions are counted. */
static void round_trip(yolo_backend *be, bool big, bool staged, const char *label) {
    const int64_t sizes[N] = {big ? 1500000 : 4096, 3, big ? 1200000 : 70001};
    yolo_tensor *t[N];
    float *up[N], *down[N];
    size_t total = 0;
    for (int k = 0; k < N; k++) {
        t[k] = yolo_tensor_new(be, "batched", YOLO_F32, 1, &sizes[k], false);
        CHECK(t[k] != NULL);
        up[k] = malloc((size_t)sizes[k] * sizeof(float));
        down[k] = calloc((size_t)sizes[k], sizeof(float));
        for (int64_t i = 0; i < sizes[k]; i++) up[k][i] = value(k, i);
        total += (size_t)sizes[k] * sizeof(float);
    }
    yolo_backend_traffic before = be->traffic;
    uint64_t rec0 = staged ? recordings(be) : 0;
    CHECK_MSG(yolo_tensors_upload_f32(N, t, (const float *const *)up) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(yolo_tensors_download_f32(N, t, down) == YOLO_OK, "%s", yolo_last_error());
    if (staged) {
        uint64_t submits = recordings(be) - rec0;
        /* within the staging buffer: one submission each way; past it: one per copy */
        CHECK_MSG(submits == (big ? 2u * N : 2u), "%s: %llu submissions", label, (unsigned long long)submits);
    }
    CHECK(be->traffic.uploads == before.uploads + 1 && be->traffic.downloads == before.downloads + 1);
    CHECK(be->traffic.bytes_up == before.bytes_up + total && be->traffic.bytes_down == before.bytes_down + total);
    int wrong = 0;
    for (int k = 0; k < N; k++)
        for (int64_t i = 0; i < sizes[k]; i++) wrong += down[k][i] != up[k][i];
    CHECK_MSG(wrong == 0, "%s: %d values differ after the round trip", label, wrong);
    /* each tensor alone reads the same */
    float *one = malloc((size_t)sizes[2] * sizeof(float));
    CHECK(yolo_tensor_download_f32(t[2], one, sizes[2]) == YOLO_OK);
    CHECK(memcmp(one, up[2], (size_t)sizes[2] * sizeof(float)) == 0);
    free(one);
    printf("%s: %d tensors, %zu bytes each way in one transfer\n", label, N, total);
    for (int k = 0; k < N; k++) {
        yolo_tensor_free(t[k]);
        free(up[k]);
        free(down[k]);
    }
}

static void refusals(yolo_backend *a, yolo_backend *b) {
    int64_t n = 5;
    yolo_tensor *t[2] = {yolo_tensor_new(a, "on_a", YOLO_F32, 1, &n, false),
                         yolo_tensor_new(b, "on_b", YOLO_F32, 1, &n, false)};
    float x[5] = {0}, y[5] = {0};
    float *host[2] = {x, y};
    CHECK(yolo_tensors_download_f32(2, t, host) == YOLO_ERR_ARG);
    CHECK_MSG(test_error_mentions("on_b"), "message: %s", yolo_last_error());
    yolo_tensor_free(t[0]);
    yolo_tensor_free(t[1]);
}

static void other_dtype(yolo_backend *be) {
    int64_t n = 7;
    yolo_tensor *t[2] = {yolo_tensor_new(be, "f32", YOLO_F32, 1, &n, false),
                         yolo_tensor_new(be, "f16", YOLO_F16, 1, &n, false)};
    float a[7], b[7], ra[7], rb[7];
    for (int i = 0; i < 7; i++) a[i] = (float)i + 0.5f, b[i] = (float)(2 * i);
    const float *up[2] = {a, b};
    float *down[2] = {ra, rb};
    CHECK(yolo_tensors_upload_f32(2, t, up) == YOLO_OK);
    CHECK(yolo_tensors_download_f32(2, t, down) == YOLO_OK);
    CHECK(memcmp(a, ra, sizeof a) == 0 && memcmp(b, rb, sizeof b) == 0); /* small integers are exact in f16 */
    yolo_tensor_free(t[0]);
    yolo_tensor_free(t[1]);
}

int main(void) {
    yolo_backend *cpu = NULL, *vk = NULL;
    CHECK_MSG(yolo_backend_create("cpu", 1, &cpu) == YOLO_OK, "%s", yolo_last_error());
    round_trip(cpu, false, false, "cpu");
    other_dtype(cpu);
    int rc = vk_test_open("vulkan", &vk);
    if (rc) {
        yolo_backend_free(cpu);
        return rc == 77 && test_result("test_vulkan_batched_copy") == 0 ? 77 : 1;
    }
    round_trip(vk, false, false, "vulkan (mapped)");
    refusals(cpu, vk);
    yolo_backend_free(vk);
    setenv("YOLO_VK_FORCE_STAGING", "1", 1);
    if (vk_test_open("vulkan", &vk) == 0) {
        round_trip(vk, false, true, "vulkan (staged)");
        round_trip(vk, true, true, "vulkan (staged, past the staging buffer)");
        other_dtype(vk);
        yolo_backend_free(vk);
    }
    yolo_backend_free(cpu);
    return vk_test_finish("test_vulkan_batched_copy");
}
