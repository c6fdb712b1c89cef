/* The batch slices' shared weight conversion (backend/cpu/conv_onednn.c,
 * plan_weight_parts): with 2 threads each slice converts one part of the
 * weights into a copy all slices read, instead of converting all of them.
 * For 3x3 and pointwise convolutions, channel counts on and off the blocks
 * of oneDNN's weights (16 channels on AVX-512, 8 on AVX2: the ISA that runs,
 * which YOLO_CPU_ISA caps),
 * a grouped convolution and an uneven batch split, in fp32 and (where
 * oneDNN has bf16) amp: outputs and all gradients are bit-identical with
 * and without the parts, and the parts did run. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/conv_common.h"
#include "test_util.h"
#include "util/cpu_isa.h"

typedef struct conv_case {
    const char *name;
    int n, c, o, k, groups, hw;
} conv_case;

static const conv_case cases[] = {
    {"3x3 32->32", 4, 32, 32, 3, 1, 10},    {"pointwise 32->48", 4, 32, 48, 1, 1, 12},
    {"3x3 16->40 (padded)", 4, 16, 40, 3, 1, 8}, {"3x3 groups 2", 4, 32, 32, 3, 2, 8},
    {"3x3 48->64, batch 3", 3, 48, 64, 3, 1, 9},
};

enum { MAX_VALUES = 4 * 64 * 12 * 12 };

typedef struct conv_result {
    float y[MAX_VALUES], dx[MAX_VALUES], dw[64 * 48 * 9];
} conv_result;

/* x -> conv -> y (an output) with the host's dy: y, x's and w's gradients. */
static void run(yolo_backend *be, const conv_case *cc, conv_result *r) {
    yolo_graph *g = yolo_graph_new(be);
    int64_t xs[4] = {cc->n, cc->c, cc->hw, cc->hw}, ws[4] = {cc->o, cc->c / cc->groups, cc->k, cc->k};
    yolo_tensor *x = test_tensor_random(be, "x", 4, xs, 7, -1.0f, 1.0f, 1);
    yolo_tensor *w = test_tensor_random(be, "w", 4, ws, 8, -0.3f, 0.3f, 1);
    yolo_conv2d_params cp = {.pad_h = cc->k / 2, .pad_w = cc->k / 2, .groups = cc->groups};
    yolo_tensor *y = yolo_conv2d(g, x, w, NULL, &cp), *dy = NULL;
    CHECK(y && yolo_graph_mark_output(g, y) == YOLO_OK);
    CHECK(yolo_graph_backward_from(g, 1, &y, &dy) == YOLO_OK);
    CHECK_MSG(yolo_graph_plan(g, NULL) == YOLO_OK, "%s: plan: %s", cc->name, yolo_last_error());
    const int64_t ny = yolo_tensor_numel(y), nx = yolo_tensor_numel(x), nw = yolo_tensor_numel(w);
    float *d = malloc((size_t)ny * sizeof *d);
    test_fill_uniform(d, ny, 9, -1.0f, 1.0f);
    CHECK(yolo_tensor_upload_f32(dy, d, ny) == YOLO_OK);
    free(d);
    CHECK_MSG(yolo_graph_run(g) == YOLO_OK, "%s: run: %s", cc->name, yolo_last_error());
    memset(r, 0, sizeof *r);
    CHECK(yolo_tensor_download_f32(y, r->y, ny) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(x->grad, r->dx, nx) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(w->grad, r->dw, nw) == YOLO_OK);
    yolo_graph_free(g);
    yolo_tensor_free(x);
    yolo_tensor_free(w);
}

/* The output-channel block of oneDNN's weights on the ISA that runs: 16 on
 * an AVX-512 ISA (avx512_core and up), 8 below (AVX2 and SSE4.1). */
static int weight_block(void) { return strncmp(yolo_cpu_isa_onednn(), "avx512_core", 11) == 0 ? 16 : 8; }

static void check_cases(yolo_backend *be, const char *mode) {
    static conv_result with, without;
    const int block = weight_block();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const conv_case *cc = &cases[i];
        yolo_conv_onednn_allow_weight_parts(false);
        run(be, cc, &without);
        yolo_conv_onednn_allow_weight_parts(true);
        const uint64_t before = yolo_conv_onednn_shared_weight_conversions();
        run(be, cc, &with);
        const uint64_t shared = yolo_conv_onednn_shared_weight_conversions() - before;
        CHECK_MSG(memcmp(&with, &without, sizeof with) == 0, "%s, %s: results differ with shared weights", mode,
                  cc->name);
        /* forward and backward data convert weights; a padded or grouped layout does not split */
        const bool splits = cc->o % block == 0 && cc->groups == 1;
        CHECK_MSG(splits ? shared == 2 : shared == 0, "%s, %s: %llu shared conversions", mode, cc->name,
                  (unsigned long long)shared);
        printf("%s, %-22s shared conversions %llu, bit-identical (oneDNN %s, block %d)\n", mode, cc->name,
               (unsigned long long)shared, yolo_cpu_isa_onednn(), block);
    }
}

int main(void) {
    if (yolo_conv_current_impl() != YOLO_CONV_IMPL_ONEDNN)
        return test_skip("the convolutions run im2col here (YOLO_CONV_IMPL): no oneDNN weight conversions");
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) return test_skip("no CPU backend");
    check_cases(be, "fp32");
    if (yolo_backend_set_amp(be, true))
        check_cases(be, "amp");
    else
        printf("amp: this CPU runs fp32 (%s)\n", yolo_backend_precision(be));
    yolo_backend_free(be);
    return test_result("test_conv_weight_parts");
}
