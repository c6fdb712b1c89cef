/* amp's GEMMs on the cooperative-matrix core (shaders/gemm_coop.glsl):
 * YOLO_VK_COOPMAT=emulate on any device with fp16 arithmetic (lavapipe
 * included: the tiling, the fragments' offsets, split K and the epilogue
 * with plain arithmetic in place of the three matrix operations), and
 * YOLO_VK_COOPMAT=on where the device has VK_NV_cooperative_matrix (the
 * same cases on its matrix units; skipped, saying why, elsewhere).
 *
 * The shapes leave partial 64 x 64 blocks in both dimensions and K that is
 * not a multiple of 32, with bias, groups, stride, transposed and batched
 * matmuls, and weight gradients whose K is split on lavapipe. Each case is
 * checked forward and backward against the CPU in fp32 on fp16-exact
 * inputs (test_vulkan_amp_ops' tolerances), and against the shared-memory
 * _f16 kernels on raw inputs, every output and gradient: the same fp16
 * products summed in fp32, within 1e-5 of the largest value (the emulation
 * adds them in the same K order, so it is bit-identical wherever K is not
 * split differently; matrix units add in their own). The coop_dispatches counter
 * shows the cooperative-matrix kernels ran. A bad YOLO_VK_COOPMAT is
 * refused. */
#include <stdlib.h>

#include "vulkan_parity.h"

#define RED 1e-4
#define HALF_GRAD 2e-3
#define REORDERED 1e-5

static bool exact_inputs = true;

/* A parity input, rounded to fp16 in the graph unless raw inputs run. */
static yolo_tensor *in16(parity_case *c, int ndim, const int64_t *shape, float lo, float hi) {
    return parity_input_f16(c, ndim, shape, lo, hi, exact_inputs);
}

/* forward M 40, N 143, K 180; weight gradient M 40, N 180, K 286 (data gradient: 20 rows, plain tiles) */
static yolo_tensor *b_conv_bias(parity_case *c) {
    int64_t xs[4] = {2, 20, 11, 13}, ws[4] = {40, 20, 3, 3}, bs[1] = {40};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.3f, 0.3f), parity_input(c, 1, bs, -1, 1, true),
                       &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
}
/* groups 2: forward M 35, N 81, K 324; data M 36, N 81, K 315; weight M 35, N 324, K 162 */
static yolo_tensor *b_conv_groups(parity_case *c) {
    int64_t xs[4] = {2, 72, 9, 9}, ws[4] = {70, 36, 3, 3};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.3f, 0.3f), NULL,
                       &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1, .groups = 2});
}
/* stride 2: forward M 48, N 72, K 360; data M 40, N 306, K 432 */
static yolo_tensor *b_conv_stride(parity_case *c) {
    int64_t xs[4] = {2, 40, 17, 18}, ws[4] = {48, 40, 3, 3};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.3f, 0.3f), NULL,
                       &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1});
}
/* weight gradient K = 4 * 24 * 24 = 2304: split into slices on lavapipe */
static yolo_tensor *b_conv_split_k(parity_case *c) {
    int64_t xs[4] = {4, 48, 24, 24}, ws[4] = {40, 48, 3, 3};
    return yolo_conv2d(c->g, in16(c, 4, xs, -1, 1), in16(c, 4, ws, -0.2f, 0.2f), NULL,
                       &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
}
static yolo_tensor *matmul_case(parity_case *c, bool ta, bool tb) {
    int64_t a[2] = {ta ? 45 : 70, ta ? 70 : 45}, b[2] = {tb ? 100 : 45, tb ? 45 : 100};
    return yolo_matmul(c->g, in16(c, 2, a, -1, 1), in16(c, 2, b, -1, 1), ta, tb);
}
static yolo_tensor *b_matmul(parity_case *c) { return matmul_case(c, false, false); }
static yolo_tensor *b_matmul_tatb(parity_case *c) { return matmul_case(c, true, true); }
static yolo_tensor *b_matmul_batched(parity_case *c) {
    int64_t a[3] = {3, 40, 33}, b[3] = {3, 33, 70};
    return yolo_matmul(c->g, in16(c, 3, a, -1, 1), in16(c, 3, b, -1, 1), false, false);
}

static const struct {
    const char *name;
    parity_build build;
} cases[] = {
    {"conv2d 3x3 + bias [2,20,11,13]", b_conv_bias},
    {"conv2d groups 2 [2,72,9,9]", b_conv_groups},
    {"conv2d stride 2 [2,40,17,18]", b_conv_stride},
    {"conv2d split K [4,48,24,24]", b_conv_split_k},
    {"matmul [70,45]x[45,100]", b_matmul},
    {"matmul ta tb", b_matmul_tatb},
    {"matmul batched [3,40,33]x[3,33,70]", b_matmul_batched},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static uint64_t coop_dispatches(yolo_backend *be) {
    yolo_vulkan_stats st;
    return yolo_vulkan_get_stats(be, &st) == YOLO_OK ? st.coop_dispatches : 0;
}

/* A Vulkan backend with amp on, opened with YOLO_VK_COOPMAT=mode (NULL: unset). */
static yolo_backend *open_amp(const char *mode) {
    if (mode)
        setenv("YOLO_VK_COOPMAT", mode, 1);
    else
        unsetenv("YOLO_VK_COOPMAT");
    yolo_backend *be = NULL;
    if (vk_test_open("vulkan", &be) != 0) return NULL;
    unsetenv("YOLO_VK_COOPMAT");
    yolo_backend_set_amp(be, true);
    printf("  YOLO_VK_COOPMAT=%s: %s\n", mode ? mode : "(unset)", yolo_backend_precision(be));
    return be;
}

/* Every case against the CPU and against the plain fp16 kernels. */
static void check_mode(yolo_backend *cpu, yolo_backend *plain, yolo_backend *coop, const char *mode) {
    printf("YOLO_VK_COOPMAT=%s, fp16-exact inputs, against the CPU in fp32:\n", mode);
    for (size_t i = 0; i < N_CASES; i++) {
        const uint64_t before = coop_dispatches(coop);
        exact_inputs = true;
        parity_check(cpu, coop, cases[i].name, cases[i].build, true, RED, HALF_GRAD, 1);
        CHECK_MSG(coop_dispatches(coop) > before, "%s: no GEMM ran on the cooperative-matrix kernels", cases[i].name);
    }
    printf("YOLO_VK_COOPMAT=%s, raw inputs, against the shared-memory fp16 kernels (all outputs and gradients):\n",
           mode);
    for (size_t i = 0; i < N_CASES; i++) {
        parity_result a, b;
        exact_inputs = false;
        parity_run_one(plain, cases[i].build, 777 + i, true, 1, &a);
        parity_run_one(coop, cases[i].build, 777 + i, true, 1, &b);
        CHECK_MSG(a.ok && b.ok && a.n == b.n, "%s: runs failed or differ in what they produce", cases[i].name);
        double worst = 0.0;
        for (int k = 0; a.ok && b.ok && k < a.n && k < b.n; k++) {
            double maxabs = 0.0, diff = 0.0;
            for (int64_t e = 0; e < a.counts[k]; e++) {
                maxabs = fmax(maxabs, fabs(a.values[k][e]));
                diff = fmax(diff, fabs((double)a.values[k][e] - b.values[k][e]));
            }
            const double rel = diff / (maxabs + 1e-30);
            CHECK_MSG(rel <= REORDERED, "%s: %s differs from the fp16 kernels by %.3g of its largest value",
                      cases[i].name, a.what[k], rel);
            worst = fmax(worst, rel);
        }
        printf("  %-36s worst difference %.2e of the largest value\n", cases[i].name, worst);
        parity_free(&a);
        parity_free(&b);
    }
}

int main(void) {
    setenv("YOLO_VK_COOPMAT", "bogus", 1);
    yolo_backend *bad = NULL;
    yolo_status st = yolo_backend_create("vulkan", 0, &bad);
    unsetenv("YOLO_VK_COOPMAT");
    if (st == YOLO_ERR_BACKEND && strstr(yolo_last_error(), "unavailable")) {
        return test_skip(yolo_last_error());
    }
    CHECK_MSG(st == YOLO_ERR_ARG && bad == NULL && strstr(yolo_last_error(), "YOLO_VK_COOPMAT=bogus"),
              "a bad YOLO_VK_COOPMAT is refused naming it (status %d: %s)", st, yolo_last_error());
    yolo_backend_free(bad);

    yolo_backend *plain = open_amp(NULL);
    if (!plain) return test_result("test_vulkan_coop");
    if (!yolo_backend_supports(plain, YOLO_BACKEND_CAP_LOSS_SCALING)) {
        yolo_backend_free(plain);
        return test_skip("the device runs amp in fp32 (no 16-bit storage or fp16 arithmetic): no fp16 kernels");
    }
    yolo_backend *cpu = NULL;
    CHECK(yolo_backend_create("cpu", 2, &cpu) == YOLO_OK);

    yolo_backend *emulated = open_amp("emulate");
    CHECK(emulated && strstr(yolo_backend_precision(emulated), "emulated"));
    if (cpu && emulated) check_mode(cpu, plain, emulated, "emulate");
    yolo_backend_free(emulated);

    yolo_backend *device = open_amp("on");
    if (device && strstr(yolo_backend_precision(device), "on cooperative matrices")) {
        check_mode(cpu, plain, device, "on");
    } else if (device) {
        CHECK(strstr(yolo_backend_precision(device), "YOLO_VK_COOPMAT=on, but"));
        printf("SKIP the device's cooperative matrices: %s\n", yolo_backend_precision(device));
    }
    yolo_backend_free(device);
    yolo_backend_free(plain);
    yolo_backend_free(cpu);
    return vk_test_finish("test_vulkan_coop");
}
