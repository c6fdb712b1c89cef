/* amp=True on Vulkan: the fp16-input GEMM kernels (conv forward, both conv
 * backwards, transposed conv, matmul; <shader>_f16 after a cast16 copy)
 * against the CPU backend in fp32, forward and backward.
 *
 * Inputs are made exact in fp16 inside the graph (cast to f16 and back, on
 * both backends), so the forward differs from fp32 only in summation order
 * (1e-4 relative, as the fp32 parity cases) and, on Vulkan, equals the fp32
 * kernels' output bit for bit (same tiles, same order, fp32 accumulation).
 * The backward rounds the incoming gradient to fp16 too: 2e-3 relative.
 * A control runs raw (not fp16-exact) inputs: there amp must differ from
 * the fp32 kernels (the fp16 path really runs) by at most 2e-3. Skips,
 * saying why, where the device has no 16-bit storage or fp16 arithmetic. */
#include "vulkan_parity.h"

#define RED 1e-4
#define HALF_GRAD 2e-3

static bool exact_inputs = true;

/* A parity input, rounded to fp16 in the graph unless raw inputs run. */
static yolo_tensor *in16(parity_case *c, int ndim, const int64_t *shape, float lo, float hi) {
    return parity_input_f16(c, ndim, shape, lo, hi, exact_inputs);
}

static yolo_tensor *b_conv3x3_bias(parity_case *c) {
    int64_t xs[4] = {2, 4, 9, 7}, ws[4] = {6, 4, 3, 3}, bs[1] = {6};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.5f, 0.5f), parity_input(c, 1, bs, -1, 1, true),
                       &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
}
static yolo_tensor *b_conv_s2_groups(parity_case *c) {
    int64_t xs[4] = {2, 4, 8, 9}, ws[4] = {6, 2, 3, 3};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.5f, 0.5f), NULL,
                       &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .groups = 2});
}
static yolo_tensor *b_conv_depthwise(parity_case *c) {
    int64_t xs[4] = {2, 6, 7, 7}, ws[4] = {6, 1, 3, 3};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.5f, 0.5f), NULL,
                       &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .groups = 6});
}
static yolo_tensor *b_conv1x1(parity_case *c) {
    int64_t xs[4] = {3, 5, 7, 7}, ws[4] = {8, 5, 1, 1};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.5f, 0.5f), NULL, &(yolo_conv2d_params){0});
}
/* the weight gradient's K = 4*20*20 = 1600 splits K on lavapipe (partials in scratch) */
static yolo_tensor *b_conv_split_k(parity_case *c) {
    int64_t xs[4] = {4, 8, 20, 20}, ws[4] = {12, 8, 3, 3};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.3f, 0.3f), NULL,
                       &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
}
static yolo_tensor *b_conv_transpose(parity_case *c) {
    int64_t xs[4] = {2, 4, 5, 6}, ws[4] = {4, 3, 2, 2}, bs[1] = {3};
    return yolo_conv_transpose2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.5f, 0.5f),
                                 parity_input(c, 1, bs, -1, 1, true), &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2});
}
static yolo_tensor *matmul_case(parity_case *c, bool ta, bool tb) {
    int64_t a[2] = {ta ? 37 : 29, ta ? 29 : 37}, b[2] = {tb ? 23 : 37, tb ? 37 : 23};
    return yolo_matmul(c->g, in16(c, 2, a, -1, 1), in16(c, 2, b, -1, 1), ta, tb);
}
static yolo_tensor *b_matmul(parity_case *c) { return matmul_case(c, false, false); }
static yolo_tensor *b_matmul_tatb(parity_case *c) { return matmul_case(c, true, true); }
static yolo_tensor *b_matmul_batched(parity_case *c) {
    int64_t a[3] = {3, 17, 21}, b[3] = {3, 17, 19};
    return yolo_matmul(c->g, in16(c, 3, a, -1, 1), in16(c, 3, b, -1, 1), true, false);
}

typedef struct amp_case {
    const char *name;
    parity_build build;
} amp_case;

static const amp_case cases[] = {
    {"conv2d 3x3 + bias [2,4,9,7]", b_conv3x3_bias},
    {"conv2d stride 2 groups 2 [2,4,8,9]", b_conv_s2_groups},
    {"conv2d depthwise [2,6,7,7]", b_conv_depthwise},
    {"conv2d 1x1 [3,5,7,7]", b_conv1x1},
    {"conv2d split K [4,8,20,20]", b_conv_split_k},
    {"conv_transpose2d [2,4,5,6]", b_conv_transpose},
    {"matmul [29,37]x[37,23]", b_matmul},
    {"matmul ta tb", b_matmul_tatb},
    {"matmul batched ta [3,17,21]", b_matmul_batched},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* Largest |a-b| / max|b| over the outputs (0: bit-identical when *same). */
static double compare_outputs(const parity_result *a, const parity_result *b, bool *same) {
    double worst = 0.0, maxabs = 0.0;
    *same = a->ok && b->ok && a->n > 0 && a->counts[0] == b->counts[0];
    for (int64_t i = 0; *same && i < a->counts[0]; i++) maxabs = fmax(maxabs, fabs(b->values[0][i]));
    for (int64_t i = 0; a->ok && b->ok && a->n > 0 && i < a->counts[0]; i++) {
        if (memcmp(&a->values[0][i], &b->values[0][i], 4) != 0) *same = false;
        worst = fmax(worst, fabs((double)a->values[0][i] - b->values[0][i]) / (maxabs + 1e-30));
    }
    return worst;
}

int main(void) {
    yolo_backend *cpu = NULL, *vk = NULL, *vk32 = NULL;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    if (!yolo_backend_set_amp(vk, true)) {
        printf("amp on %s: %s\n", yolo_backend_name(vk), yolo_backend_precision(vk));
        yolo_backend_free(vk);
        return test_skip("the device runs amp in fp32 (no 16-bit storage or fp16 arithmetic): no fp16 kernels");
    }
    CHECK(yolo_backend_supports(vk, YOLO_BACKEND_CAP_LOSS_SCALING));
    /* amp=fp16 (Ultralytics 8.4) is amp=True here; amp=bf16 runs fp32 and says why */
    CHECK_MSG(!yolo_backend_set_amp_format(vk, YOLO_AMP_BF16) && strstr(yolo_backend_precision(vk), "amp=bf16") &&
                  strstr(yolo_backend_precision(vk), "fp16"),
              "amp=bf16 on Vulkan: %s", yolo_backend_precision(vk));
    CHECK(yolo_backend_set_amp_format(vk, YOLO_AMP_FP16));
    CHECK(yolo_backend_create("cpu", 2, &cpu) == YOLO_OK);
    CHECK(vk_test_open("vulkan", &vk32) == 0);
    if (test_failures) return test_result("test_vulkan_amp_ops");
    printf("amp on %s: %s\n", yolo_backend_name(vk), yolo_backend_precision(vk));
    printf("fp16-exact inputs, amp against the CPU in fp32:\n");
    for (size_t i = 0; i < N_CASES; i++) parity_check(cpu, vk, cases[i].name, cases[i].build, true, RED, HALF_GRAD, 1);

    printf("forward, amp against Vulkan fp32 kernels (fp16-exact inputs: identical; raw inputs: fp16 rounding):\n");
    for (size_t i = 0; i < N_CASES; i++) {
        parity_result a, b;
        bool same;
        exact_inputs = true;
        parity_run_one(vk32, cases[i].build, 4242 + i, false, 1, &a);
        parity_run_one(vk, cases[i].build, 4242 + i, false, 1, &b);
        double exact = compare_outputs(&a, &b, &same);
        CHECK_MSG(same, "%s: fp16-exact inputs: amp differs from fp32 by %.3g (expected bit-identical)", cases[i].name,
                  exact);
        parity_free(&a);
        parity_free(&b);
        exact_inputs = false;
        parity_run_one(vk32, cases[i].build, 4242 + i, false, 1, &a);
        parity_run_one(vk, cases[i].build, 4242 + i, false, 1, &b);
        double raw = compare_outputs(&a, &b, &same);
        printf("  %-36s exact inputs: %s; raw inputs: %.2e of the largest output\n", cases[i].name,
               exact == 0.0 ? "bit-identical" : "DIFFERENT", raw);
        CHECK_MSG(!same && raw <= HALF_GRAD, "%s: raw inputs: amp %s fp32 (%.3g)", cases[i].name,
                  same ? "equals (the fp16 path did not run?)" : "too far from", raw);
        parity_free(&a);
        parity_free(&b);
    }
    yolo_backend_free(vk32);
    yolo_backend_free(vk);
    yolo_backend_free(cpu);
    return vk_test_finish("test_vulkan_amp_ops");
}
