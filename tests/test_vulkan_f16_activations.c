/* amp's f16 activation storage on Vulkan (core/graph/narrow.c with
 * YOLO_F16; bn_eltwise_f16, binary_f16, upsample_f16, the copies, and the
 * conv kernels reading an f16 x without their cast16 copy):
 * - the capability follows amp and YOLO_F16_ACTIVATIONS=off;
 * - the shared checks of narrowed_activations.h: which values are narrowed,
 *   output and weight gradients bit-identical to f32 storage under amp
 *   without the residual add, within 5e-3 of the largest with it, exact
 *   copy kernels and add, poisoned and repeated runs identical;
 * - a conv on an f16 x skips the cast16 copies of x (two dispatches fewer)
 *   and keeps every bit;
 * - the narrowed graph against the CPU backend in fp32 (fp16 GEMM inputs:
 *   outputs and weight gradients within 5e-3 of their largest magnitude);
 * - f16 where no kernel takes it is refused, naming op and dtypes.
 * Skips, saying why, without a Vulkan device or without fp16 support. */
#include "narrowed_activations.h"
#include "vulkan_test_common.h"

/* With the add, narrow storage rounds the sum once more (half an f16 ulp,
 * 2^-11 relative) before the next conv: outputs and weight gradients
 * within ADD_TOL of their largest magnitude of f32 storage. bf16 (8 bits
 * fewer) takes 3e-2 in test_bf16_activations. Measured on lavapipe: 9.6e-4. */
#define ADD_TOL 5e-3
/* fp16 GEMM inputs against fp32 everywhere, of the largest magnitude
 * (measured on lavapipe: 9.5e-4) */
#define CPU_TOL 5e-3

static const narrow_kind f16_kind = {"YOLO_F16_ACTIVATIONS", "on", YOLO_F16, yolo_f32_to_f16, yolo_f16_to_f32,
                                     ADD_TOL};

static void test_capability(yolo_backend *vk) {
    CHECK(yolo_backend_supports(vk, YOLO_BACKEND_CAP_F16_ACTIVATIONS));
    CHECK(!yolo_backend_supports(vk, YOLO_BACKEND_CAP_BF16_ACTIVATIONS));
    CHECK_MSG(strstr(yolo_backend_precision(vk), "activations between convolutions"), "precision: %s",
              yolo_backend_precision(vk));
    setenv("YOLO_F16_ACTIVATIONS", "off", 1);
    CHECK(!yolo_backend_supports(vk, YOLO_BACKEND_CAP_F16_ACTIVATIONS));
    unsetenv("YOLO_F16_ACTIVATIONS");
    yolo_backend_set_amp(vk, false);
    CHECK(!yolo_backend_supports(vk, YOLO_BACKEND_CAP_F16_ACTIVATIONS));
    yolo_backend_set_amp(vk, true);
}

typedef struct conv_run {
    float y[2 * 6 * 7 * 9], dw[6 * 4 * 3 * 3];
    uint64_t dispatches;
} conv_run;

/* y = conv3x3(x, w) and dw from a given dy, x f32 or f16 (as the planner
 * narrows it: the conv builders take f32), x's values exact in f16. */
static void conv_on(yolo_backend *vk, yolo_tensor *w, bool x_f16, conv_run *out) {
    int64_t xs[4] = {2, 4, 7, 9};
    float x[2 * 4 * 7 * 9], dy[2 * 6 * 7 * 9];
    test_fill_uniform(x, 504, 31, -2.0f, 2.0f);
    for (int i = 0; i < 504; i++) x[i] = yolo_f16_to_f32(yolo_f32_to_f16(x[i]));
    test_fill_uniform(dy, 756, 32, -1.0f, 1.0f);
    yolo_graph *g = yolo_graph_new(vk);
    yolo_tensor *xt = yolo_graph_input(g, "x", YOLO_F32, 4, xs);
    yolo_tensor *y = yolo_conv2d(g, xt, w, NULL, &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1}), *dyt = NULL;
    CHECK(yolo_graph_mark_output(g, y) == YOLO_OK);
    CHECK(yolo_graph_backward_from(g, 1, &y, &dyt) == YOLO_OK);
    if (x_f16) xt->dtype = YOLO_F16;
    setenv("YOLO_F16_ACTIVATIONS", "off", 1); /* the graph's own dtypes only */
    CHECK(yolo_graph_plan(g, NULL) == YOLO_OK);
    unsetenv("YOLO_F16_ACTIVATIONS");
    CHECK(yolo_tensor_upload_f32(xt, x, 504) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(dyt, dy, 756) == YOLO_OK);
    CHECK(yolo_tensor_zero(w->grad) == YOLO_OK);
    yolo_vulkan_stats before, after;
    CHECK(yolo_vulkan_get_stats(vk, &before) == YOLO_OK);
    CHECK_MSG(yolo_graph_run(g) == YOLO_OK, "conv on an %s x: %s", x_f16 ? "f16" : "f32", yolo_last_error());
    CHECK(yolo_vulkan_get_stats(vk, &after) == YOLO_OK);
    out->dispatches = after.dispatches - before.dispatches;
    CHECK(yolo_tensor_download_f32(y, out->y, 756) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(w->grad, out->dw, 216) == YOLO_OK);
    yolo_graph_free(g);
}

static void test_conv_reads_f16(yolo_backend *vk) {
    int64_t ws[4] = {6, 4, 3, 3};
    yolo_tensor *w = test_tensor_random(vk, "w", 4, ws, 33, -0.5f, 0.5f, 1);
    static conv_run wide, narrow;
    conv_on(vk, w, false, &wide);
    conv_on(vk, w, true, &narrow);
    CHECK_MSG(narrow.dispatches + 2 == wide.dispatches, "dispatches: f32 x %llu, f16 x %llu (want two cast16 fewer)",
              (unsigned long long)wide.dispatches, (unsigned long long)narrow.dispatches);
    CHECK_MSG(test_differing_bits(wide.y, narrow.y, 756) == 0 && test_differing_bits(wide.dw, narrow.dw, 216) == 0,
              "conv on an f16 x: %d outputs, %d weight gradients differ", test_differing_bits(wide.y, narrow.y, 756),
              test_differing_bits(wide.dw, narrow.dw, 216));
    yolo_tensor_free(w);
}

/* The narrowed graph (no add) against the CPU backend in fp32. */
static void test_cpu_parity(const na_result *vk) {
    yolo_backend *cpu = NULL;
    CHECK(yolo_backend_create("cpu", 2, &cpu) == YOLO_OK);
    if (!cpu) return;
    na_params p;
    na_make_params(cpu, &p);
    static na_result ref;
    na_run(cpu, &f16_kind, &p, false, "off", false, &ref);
    na_check_close("against the CPU in fp32", vk, &ref, &p, CPU_TOL);
    na_free_params(&p);
    yolo_backend_free(cpu);
}

/* An f16 operand of an op without an f16 kernel: refused before recording. */
static void refused(yolo_backend *vk, int op, yolo_dtype in, yolo_dtype out, const char *want) {
    yolo_graph *g = yolo_graph_new(vk);
    int64_t s[4] = {1, 2, 4, 4}, us[4] = {1, 2, 8, 8};
    yolo_tensor *h = yolo_graph_input(g, "h", in, 4, s);
    yolo_tensor *t = yolo_graph_node(g, op, out, 4, op == YOLO_OP_UPSAMPLE_NEAREST ? us : s, 1, &h);
    if (op == YOLO_OP_UPSAMPLE_NEAREST) t->node->iparams[0] = 2;
    CHECK(yolo_graph_mark_output(g, t) == YOLO_OK);
    CHECK(yolo_graph_run(g) == YOLO_ERR_UNSUPPORTED);
    CHECK_MSG(test_error_mentions(yolo_op_name(op)) && test_error_mentions(want), "%s: error was: %s",
              yolo_op_name(op), yolo_last_error());
    yolo_graph_free(g);
}

static void test_refusals(yolo_backend *vk) {
    refused(vk, YOLO_OP_SILU, YOLO_F16, YOLO_F16, "sources f16; output f16");
    refused(vk, YOLO_OP_UPSAMPLE_NEAREST, YOLO_F16, YOLO_F32, "sources f16; output f32");
    refused(vk, YOLO_OP_SIGMOID, YOLO_BF16, YOLO_F32, "sources bf16; output f32");
}

int main(void) {
    yolo_backend *vk = NULL;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    if (!yolo_backend_set_amp(vk, true)) {
        printf("amp on %s: %s\n", yolo_backend_name(vk), yolo_backend_precision(vk));
        yolo_backend_free(vk);
        return test_skip("the device runs amp in fp32 (no 16-bit storage or fp16 arithmetic): no f16 activations");
    }
    printf("amp: %s\n", yolo_backend_precision(vk));
    test_capability(vk);
    na_test_copy_kernels(vk, &f16_kind);
    test_conv_reads_f16(vk);
    static na_result narrowed;
    na_test_graph_numerics(vk, &f16_kind, &narrowed);
    test_cpu_parity(&narrowed);
    test_refusals(vk);
    yolo_backend_free(vk);
    return vk_test_finish("test_vulkan_f16_activations");
}
