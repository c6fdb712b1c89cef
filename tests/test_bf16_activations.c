/* amp's bf16 activation storage on the CPU backend (core/graph/narrow.c):
 * the shared checks of narrowed_activations.h with YOLO_BF16_ACTIVATIONS=silu
 * (which values the planner narrows, bit-identical output and weight
 * gradients without a residual add, the add's rounding the only change, the
 * bf16 kernels of the copy ops, the memory it saves), then =all (the conv
 * outputs that batch norm reads too: reproducible, close to f32 storage,
 * less memory), that the image's convolution stays fp32 under amp, and the
 * host conversions. Skips where oneDNN has no bf16
 * convolutions. */
#include "narrowed_activations.h"

/* outputs and weight gradients within 3% of their largest magnitude of
 * f32 storage (measured on AVX512-BF16: at most 1.7%) */
static const narrow_kind bf16_kind = {"YOLO_BF16_ACTIVATIONS", "silu", YOLO_BF16, yolo_f32_to_bf16, yolo_bf16_to_f32,
                                      3e-2};

/* all: the three conv outputs too; batch norm reads rounded values */
static void test_conv_outputs(yolo_backend *be) {
    na_params p;
    na_make_params(be, &p);
    static na_result f32, silu, f32_add, all, all_again, all_poisoned, all_add;
    na_run(be, &bf16_kind, &p, false, "off", false, &f32);
    na_run(be, &bf16_kind, &p, false, "silu", false, &silu);
    na_run(be, &bf16_kind, &p, true, "off", false, &f32_add);
    na_run(be, &bf16_kind, &p, false, "all", false, &all);
    na_run(be, &bf16_kind, &p, false, "all", false, &all_again);
    na_run(be, &bf16_kind, &p, false, "all", true, &all_poisoned);
    na_run(be, &bf16_kind, &p, true, "all", false, &all_add);
    CHECK_MSG(all.narrowed == 9 && all_add.narrowed == 10, "all: narrowed %d values, %d with the add", all.narrowed,
              all_add.narrowed);
    CHECK_MSG(all.peak < silu.peak, "all: %zu bytes of activations, silu %zu", all.peak, silu.peak);
    printf("activations: all %zu bytes\n", all.peak);
    CHECK(test_differing_bits(all.out, all_again.out, NA_OUT_COUNT) == 0 &&
          test_differing_bits(all.out, all_poisoned.out, NA_OUT_COUNT) == 0);
    for (int k = 0; k < 3; k++) {
        int64_t nw = yolo_tensor_numel(p.w[k]);
        CHECK_MSG(test_differing_bits(all.grad[k], all_again.grad[k], nw) == 0 &&
                      test_differing_bits(all.grad[k], all_poisoned.grad[k], nw) == 0,
                  "all: weight %d gradient not reproducible", k);
    }
    CHECK_MSG(test_differing_bits(all.out, f32.out, NA_OUT_COUNT) > 0, "rounded conv outputs changed nothing");
    na_check_close("all", &all, &f32, &p, bf16_kind.add_tol);
    na_check_close("all, with the add", &all_add, &f32_add, &p, bf16_kind.add_tol);
    na_free_params(&p);
}

/* The image's convolution (x a CAST of the u8 input) runs fp32 under amp:
 * its output and weight gradient are bit for bit those of amp=False, while
 * a convolution reading its output runs bf16 (differs). */
enum { IM_N = 2, IM_H = 20, IM_W = 20, IM_O = 16 };
#define IM_OUT_COUNT (IM_N * IM_O * IM_H * IM_W)

static void image_conv_run(yolo_backend *be, bool amp, yolo_tensor *w1, yolo_tensor *w2, float *out1, float *out2,
                           float *grad1) {
    CHECK(yolo_backend_set_amp(be, amp) == amp);
    yolo_graph *g = yolo_graph_new(be);
    int64_t is[4] = {IM_N, 3, IM_H, IM_W};
    yolo_tensor *images = yolo_graph_input(g, "images", YOLO_U8, 4, is);
    yolo_conv2d_params cp = {.pad_h = 1, .pad_w = 1};
    yolo_tensor *y1 = yolo_conv2d(g, yolo_cast(g, images, YOLO_F32, 1.0f / 255.0f), w1, NULL, &cp);
    yolo_tensor *y2 = yolo_conv2d(g, y1, w2, NULL, &cp);
    yolo_tensor *outs[2] = {y1, y2}, *dys[2] = {NULL, NULL};
    CHECK(yolo_graph_mark_output(g, y1) == YOLO_OK && yolo_graph_mark_output(g, y2) == YOLO_OK);
    /* y1's weight gradient from y1's own dy only: y2's is zero */
    CHECK(yolo_graph_backward_from(g, 2, outs, dys) == YOLO_OK);
    yolo_graph_plan_info info = {0};
    CHECK_MSG(yolo_graph_plan(g, &info) == YOLO_OK, "plan: %s", yolo_last_error());
    static uint8_t pixels[IM_N * 3 * IM_H * IM_W];
    for (size_t i = 0; i < sizeof pixels; i++) pixels[i] = (uint8_t)(i * 37 + i / 7);
    static float dy1[IM_OUT_COUNT], dy2[IM_OUT_COUNT];
    test_fill_uniform(dy1, IM_OUT_COUNT, 21, -1.0f, 1.0f);
    CHECK(yolo_tensor_upload(images, pixels, sizeof pixels) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(dys[0], dy1, IM_OUT_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_upload_f32(dys[1], dy2, IM_OUT_COUNT) == YOLO_OK);
    yolo_tensor_zero(w1->grad);
    CHECK_MSG(yolo_graph_run(g) == YOLO_OK, "run: %s", yolo_last_error());
    CHECK(yolo_tensor_download_f32(y1, out1, IM_OUT_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(y2, out2, IM_OUT_COUNT) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(w1->grad, grad1, yolo_tensor_numel(w1)) == YOLO_OK);
    yolo_graph_free(g);
}

static void test_image_conv_fp32(yolo_backend *be) {
    int64_t s1[4] = {IM_O, 3, 3, 3}, s2[4] = {IM_O, IM_O, 3, 3};
    yolo_tensor *w1 = test_tensor_random(be, "w1", 4, s1, 31, -0.5f, 0.5f, 1);
    yolo_tensor *w2 = test_tensor_random(be, "w2", 4, s2, 32, -0.2f, 0.2f, 1);
    static float out1[2][IM_OUT_COUNT], out2[2][IM_OUT_COUNT], grad1[2][IM_O * 27];
    image_conv_run(be, false, w1, w2, out1[0], out2[0], grad1[0]);
    image_conv_run(be, true, w1, w2, out1[1], out2[1], grad1[1]);
    CHECK_MSG(test_differing_bits(out1[0], out1[1], IM_OUT_COUNT) == 0, "the image's conv output changed under amp");
    CHECK_MSG(test_differing_bits(grad1[0], grad1[1], IM_O * 27) == 0, "the image's conv weight gradient changed under amp");
    CHECK_MSG(test_differing_bits(out2[0], out2[1], IM_OUT_COUNT) > 0, "the next conv did not run bf16 under amp");
    yolo_tensor_free(w1);
    yolo_tensor_free(w2);
}

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
    /* amp=bf16 (Ultralytics 8.4) is amp=True here; amp=fp16 runs fp32 and says why */
    bool bf16 = yolo_backend_set_amp_format(be, YOLO_AMP_BF16);
    CHECK_MSG(bf16 || strstr(yolo_backend_precision(be), "amp=bf16"), "%s", yolo_backend_precision(be));
    CHECK_MSG(!yolo_backend_set_amp_format(be, YOLO_AMP_FP16) && strstr(yolo_backend_precision(be), "amp=fp16") &&
                  strstr(yolo_backend_precision(be), "bf16"),
              "amp=fp16 on the CPU: %s", yolo_backend_precision(be));
    CHECK(!yolo_backend_set_amp_format(be, YOLO_AMP_OFF) && strstr(yolo_backend_precision(be), "amp=False"));
    CHECK_MSG(yolo_backend_set_amp(be, true) == bf16, "amp=True and amp=bf16 differ on the CPU");
    if (!yolo_backend_set_amp(be, true)) {
        printf("amp on this CPU: %s\n", yolo_backend_precision(be));
        yolo_backend_free(be);
        if (test_failures) return test_result("test_bf16_activations");
        return test_skip("this CPU runs amp in fp32 (no AVX512-BF16 or AMX): no bf16 activations to test");
    }
    printf("amp: %s\n", yolo_backend_precision(be));
    na_test_graph_numerics(be, &bf16_kind, NULL);
    test_conv_outputs(be);
    test_image_conv_fp32(be);
    yolo_backend_free(be);
    return test_result("test_bf16_activations");
}
