/* The validation layer sees what the barriers prevent: with the test hook
 * YOLO_VK_TEST_SKIP_BARRIERS the Vulkan backend records a chain of
 * dependent dispatches without its compute-to-compute barriers, and the
 * synchronization validation must report hazards. Shows that the silence
 * every other Vulkan test requires (vk_test_finish) means something. Needs
 * the test hooks (-DYOLO_TEST_HOOKS=ON) and the Khronos validation layer
 * (tests/vulkan.cmake sets YOLO_VK_VALIDATE=1 where it is installed). */
#include <stdlib.h>

#include "vulkan_test_common.h"

int main(void) {
#ifndef YOLO_TEST_HOOKS
    return test_skip("YOLO_VK_TEST_SKIP_BARRIERS is compiled out (configure with -DYOLO_TEST_HOOKS=ON)");
#else
    const char *validate = getenv("YOLO_VK_VALIDATE");
    if (!validate || strcmp(validate, "1") != 0)
        return test_skip("YOLO_VK_VALIDATE is not 1 (the Khronos validation layer is not installed)");
    setenv("YOLO_VK_TEST_SKIP_BARRIERS", "1", 1);
    yolo_backend *vk = NULL;
    const int open = vk_test_open("vulkan", &vk);
    if (open) return open;
    if (!yolo_vulkan_validating(vk)) {
        yolo_backend_free(vk);
        return test_skip("the validation layer did not load");
    }
    /* Each op reads the previous one's output: every dispatch after the first needs a barrier. */
    const int64_t shape[2] = {64, 257};
    yolo_graph *g = yolo_graph_new(vk);
    yolo_tensor *x = yolo_graph_input(g, "x", YOLO_F32, 2, shape);
    yolo_tensor *h = yolo_silu(g, x);
    h = yolo_add(g, h, h);
    h = yolo_sigmoid(g, h);
    h = yolo_mul(g, h, x);
    yolo_graph_mark_output(g, h);
    CHECK_MSG(yolo_graph_plan(g, NULL) == YOLO_OK, "plan: %s", yolo_last_error());
    const int64_t n = shape[0] * shape[1];
    float *data = malloc(sizeof(float) * (size_t)n);
    test_fill_uniform(data, n, 11, -2.0f, 2.0f);
    CHECK(yolo_tensor_upload_f32(x, data, n) == YOLO_OK);
    CHECK_MSG(yolo_graph_run(g) == YOLO_OK, "run: %s", yolo_last_error());
    CHECK(yolo_tensor_download_f32(h, data, n) == YOLO_OK);
    free(data);
    yolo_graph_free(g);
    yolo_backend_free(vk);
    const uint64_t messages = yolo_vulkan_validation_messages();
    printf("without barriers the validation layer reported %llu message(s)\n", (unsigned long long)messages);
    CHECK_MSG(messages > 0, "no hazard reported for dispatches recorded without barriers");
    return test_result("test_vulkan_hazards");
#endif
}
