/* amp's bf16 activation storage on the CPU backend (core/graph/narrow.c):
 * the shared checks of narrowed_activations.h (which values the planner
 * narrows, bit-identical output and weight gradients without a residual
 * add, the add's rounding the only change, the bf16 kernels of the copy
 * ops, the memory it saves) and the host conversions. Skips where oneDNN
 * has no bf16 convolutions. */
#include <math.h>

#include "narrowed_activations.h"

static const narrow_kind bf16_kind = {"YOLO_BF16_ACTIVATIONS", YOLO_BF16, yolo_f32_to_bf16, yolo_bf16_to_f32, 2e-2,
                                      5e-2};

static void test_host_conversions(void) {
    const struct {
        float f;
        uint16_t b;
    } cases[] = {
        {1.0f, 0x3f80},
        {-2.0f, 0xc000},
        {1.00390625f, 0x3f80},  /* 1 + 2^-8: a tie, to even (down) */
        {1.01171875f, 0x3f82},  /* 1 + 3*2^-8: a tie, to even (up) */
        {1.0078125f, 0x3f81},   /* exact */
        {3.4e38f, 0x7f80},      /* rounds up into inf */
        {INFINITY, 0x7f80},
        {1e-40f, 0x0000},       /* denormal: zero, as VCVTNEPS2BF16 */
        {-1e-40f, 0x8000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_MSG(yolo_f32_to_bf16(cases[i].f) == cases[i].b, "%g -> 0x%04x, want 0x%04x", (double)cases[i].f,
                  yolo_f32_to_bf16(cases[i].f), cases[i].b);
    uint16_t nan = yolo_f32_to_bf16(NAN);
    CHECK(isnan(yolo_bf16_to_f32(nan)));
    CHECK(yolo_bf16_to_f32(0x3f80) == 1.0f && yolo_bf16_to_f32(0xc000) == -2.0f);
    CHECK(yolo_dtype_size(YOLO_BF16) == 2 && strcmp(yolo_dtype_name(YOLO_BF16), "bf16") == 0);
}

int main(void) {
    test_host_conversions();
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) return test_skip("no CPU backend");
    na_test_copy_kernels(be, &bf16_kind);
    if (!yolo_backend_set_amp(be, true)) {
        printf("amp on this CPU: %s\n", yolo_backend_precision(be));
        yolo_backend_free(be);
        if (test_failures) return test_result("test_bf16_activations");
        return test_skip("this CPU runs amp in fp32 (no AVX512-BF16 or AMX): no bf16 activations to test");
    }
    printf("amp: %s\n", yolo_backend_precision(be));
    na_test_graph_numerics(be, &bf16_kind, NULL);
    yolo_backend_free(be);
    return test_result("test_bf16_activations");
}
