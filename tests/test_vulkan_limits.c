/* The traps of lavapipe (Mesa 22.3) that the Vulkan backend works around,
 * each with a test:
 *  - llvmpipe silently ends a shader invocation after 65,535 loop
 *    iterations in total (wrong results, no error): a canary shows the
 *    limiter is still there, and reductions far longer than that (a sum of
 *    2M values, batch norm over 204,800 values per channel, a convolution's
 *    weight gradient over 51,200 pixels, a convolution whose K = 2,880
 *    walk exceeds the limit in one invocation, a 200,000-long softmax row, a
 *    matrix product with K = 100,000) still match the CPU backend;
 *  - maxStorageBufferRange is 128 MiB: an op on a 142 MiB tensor binds
 *    sub-ranges and still matches.
 * Shapes are as small as the traps allow (this runs on lavapipe, and under
 * ASan in CI). */
#include "vulkan_parity.h"

static void test_canary(yolo_backend *vk) {
    uint32_t ran = 0;
    CHECK(yolo_vulkan_loop_canary(vk, 30000, 100, &ran) == YOLO_OK);
    CHECK_MSG(ran == 30000, "30,000 iterations ran %u", ran);
    CHECK(yolo_vulkan_loop_canary(vk, 100000, 1000, &ran) == YOLO_OK);
    const bool llvmpipe = strstr(yolo_backend_name(vk), "llvmpipe") != NULL;
    printf("loop canary: 100,000 iterations in one invocation ran %u (%s)\n", ran,
           ran < 100000 ? "the loop limiter is active" : "no loop limiter");
    if (llvmpipe)
        CHECK_MSG(ran < 100000, "llvmpipe no longer stops long loops (ran %u): the loop budget can be raised", ran);
    else
        CHECK_MSG(ran == 100000, "a loop of 100,000 iterations ran %u", ran);
}

static yolo_tensor *b_long_sum(parity_case *c) {
    int64_t s[1] = {2000000};
    return yolo_sum(c->g, parity_input(c, 1, s, -1, 1, true));
}
static yolo_tensor *b_long_bn(parity_case *c) {
    int64_t xs[4] = {2, 2, 320, 320}, cs[1] = {2};
    yolo_tensor *x = parity_input(c, 4, xs, -2, 3, true);
    yolo_tensor *gamma = parity_input(c, 1, cs, 0.5f, 1.5f, true), *beta = parity_input(c, 1, cs, -1, 1, true);
    yolo_tensor *rm = parity_state(c, 1, cs, 0, 0), *rv = parity_state(c, 1, cs, 1, 1);
    return yolo_batch_norm(c->g, x, gamma, beta, rm, rv, true, 0.1f, 1e-3f);
}
static yolo_tensor *b_long_conv(parity_case *c) {
    int64_t xs[4] = {2, 4, 160, 160}, ws[4] = {4, 4, 3, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, NULL, &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
}
static yolo_tensor *b_deep_conv(parity_case *c) { /* K = 320*9: one GEMM tile walk past 65,535 iterations */
    int64_t xs[4] = {1, 320, 12, 12}, ws[4] = {64, 320, 3, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, false), *w = parity_input(c, 4, ws, -0.1f, 0.1f, false);
    return yolo_conv2d(c->g, x, w, NULL, &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
}
static yolo_tensor *b_long_softmax(parity_case *c) {
    int64_t s[2] = {1, 200000};
    return yolo_log_softmax(c->g, parity_input(c, 2, s, -5, 5, true), 1);
}
static yolo_tensor *b_long_matmul(parity_case *c) {
    int64_t a[2] = {2, 100000}, b[2] = {100000, 3};
    return yolo_matmul(c->g, parity_input(c, 2, a, -1, 1, true), parity_input(c, 2, b, -1, 1, true), false, false);
}
static yolo_tensor *b_huge_tensor(parity_case *c) { /* 142.6 MiB > maxStorageBufferRange on lavapipe */
    int64_t s[3] = {34, 1024, 1024};
    yolo_tensor *x = parity_input(c, 3, s, -4, 4, false);
    return yolo_sum(c->g, yolo_silu(c->g, x));
}

int main(void) {
    yolo_backend *vk = NULL, *cpu = NULL;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    CHECK(yolo_backend_create("cpu", 2, &cpu) == YOLO_OK);
    test_canary(vk);
    parity_check(cpu, vk, "sum of 2,000,000", b_long_sum, true, 1e-4, 1e-5, 1);
    parity_check(cpu, vk, "batch_norm, 204,800 per channel", b_long_bn, true, 1e-4, 5e-4, 1);
    parity_check(cpu, vk, "conv2d, dW over 51,200 pixels", b_long_conv, true, 1e-4, 2e-4, 1);
    parity_check(cpu, vk, "conv2d with K = 2,880", b_deep_conv, false, 1e-4, 0, 1);
    parity_check(cpu, vk, "log_softmax of a 200,000 row", b_long_softmax, true, 1e-5, 1e-4, 1);
    parity_check(cpu, vk, "matmul with K = 100,000", b_long_matmul, true, 1e-4, 1e-4, 1);
    parity_check(cpu, vk, "silu + sum of a 142.6 MiB tensor", b_huge_tensor, false, 1e-4, 0, 1);
    yolo_backend_free(cpu);
    yolo_backend_free(vk);
    return vk_test_finish("test_vulkan_limits");
}
