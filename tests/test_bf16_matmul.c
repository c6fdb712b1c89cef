/* MATMUL under amp on the CPU backend (core/backend/cpu/matmul_onednn.c):
 * oneDNN's bf16 product, forward and backward (the gradients are MATMULs
 * too), against the fp32 kernel (OpenBLAS) of amp=False, for every
 * transpose, batched products (whole products per slot), single ones (row
 * blocks per slot, with a remainder), one row, and a Linear-sized K.
 *
 * On bf16-exact inputs every product is exact and the sums are fp32, so amp
 * matches fp32 to summation order (1e-5 of the largest value; the incoming
 * gradient r of the backward is rounded to bf16 by amp, so gradients get
 * bf16's 2^-8); on raw inputs amp must differ from fp32 (the bf16 path ran)
 * by at most bf16's rounding. Runs are bit-identical. Then 300 shapes in a
 * row, past the primitive cache's limit (it is cleared and refilled), each
 * against a double-precision reference. Skips where the CPU has no bf16
 * hardware. */
#include "backend/cpu/conv_common.h"
#include "backend/cpu/matmul_onednn.h"
#include "vulkan_parity.h"

#define SUM_ORDER 1e-5
#define BF16_ROUNDING 2e-2

static bool exact_inputs = true;

/* A random input, its values rounded to bf16 unless raw inputs run. */
static yolo_tensor *in_bf16(parity_case *c, int ndim, const int64_t *shape) {
    yolo_tensor *x = parity_input(c, ndim, shape, -1, 1, true);
    const int64_t n = yolo_tensor_numel(x);
    float *v = malloc((size_t)n * sizeof *v);
    if (exact_inputs && v && yolo_tensor_download_f32(x, v, n) == YOLO_OK) {
        for (int64_t i = 0; i < n; i++) v[i] = yolo_bf16_to_f32(yolo_f32_to_bf16(v[i]));
        CHECK(yolo_tensor_upload_f32(x, v, n) == YOLO_OK);
    }
    free(v);
    return x;
}

static yolo_tensor *mm2(parity_case *c, int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
    int64_t a[2] = {ta ? k : m, ta ? m : k}, b[2] = {tb ? n : k, tb ? k : n};
    return yolo_matmul(c->g, in_bf16(c, 2, a), in_bf16(c, 2, b), ta, tb);
}
static yolo_tensor *b_plain(parity_case *c) { return mm2(c, 71, 45, 100, false, false); }
static yolo_tensor *b_ta(parity_case *c) { return mm2(c, 71, 45, 100, true, false); }
static yolo_tensor *b_tb(parity_case *c) { return mm2(c, 71, 45, 100, false, true); }
static yolo_tensor *b_tatb(parity_case *c) { return mm2(c, 71, 45, 100, true, true); }
static yolo_tensor *b_one_row(parity_case *c) { return mm2(c, 1, 33, 17, false, true); }
static yolo_tensor *b_linear(parity_case *c) { return mm2(c, 8, 1280, 40, false, true); } /* x [8,1280] W^T */
static yolo_tensor *b_batched(parity_case *c) {
    int64_t a[3] = {6, 40, 33}, b[3] = {6, 33, 70};
    return yolo_matmul(c->g, in_bf16(c, 3, a), in_bf16(c, 3, b), false, false);
}
static yolo_tensor *b_batched_ta(parity_case *c) { /* attention's q^T k */
    int64_t a[3] = {4, 16, 50}, b[3] = {4, 16, 50};
    return yolo_matmul(c->g, in_bf16(c, 3, a), in_bf16(c, 3, b), true, false);
}
static yolo_tensor *b_batch_of_one(parity_case *c) {
    int64_t a[3] = {1, 37, 20}, b[3] = {1, 20, 9};
    return yolo_matmul(c->g, in_bf16(c, 3, a), in_bf16(c, 3, b), false, false);
}

static const struct {
    const char *name;
    parity_build build;
} cases[] = {
    {"[71,45]x[45,100]", b_plain},        {"ta", b_ta},
    {"tb", b_tb},                         {"ta tb", b_tatb},
    {"one row [1,33]x[17,33]^T", b_one_row}, {"Linear [8,1280]x[40,1280]^T", b_linear},
    {"batched [6,40,33]x[6,33,70]", b_batched}, {"batched ta [4,16,50]^T x [4,16,50]", b_batched_ta},
    {"batch of one [1,37,20]x[1,20,9]", b_batch_of_one},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* max|a - b| / max|b| over n values; *same: bit-identical. */
static double rel_diff(const float *a, const float *b, int64_t n, bool *same) {
    double maxabs = 0.0, diff = 0.0;
    for (int64_t i = 0; i < n; i++) {
        maxabs = fmax(maxabs, fabs(b[i]));
        diff = fmax(diff, fabs((double)a[i] - b[i]));
    }
    *same = memcmp(a, b, (size_t)n * sizeof(float)) == 0;
    return diff / (maxabs + 1e-30);
}

/* The worst rel_diff over what runs from `first` on produced (0: the output, then the input gradients). */
static double worst_from(const parity_result *a, const parity_result *b, int first, bool *all_same) {
    double worst = 0.0;
    *all_same = true;
    for (int k = first; k < a->n && k < b->n; k++) {
        bool same;
        worst = fmax(worst, rel_diff(a->values[k], b->values[k], a->counts[k], &same));
        *all_same = *all_same && same;
    }
    return worst;
}

/* Two products [m,7] x [7,5] (one per slot) for m = 1..300 straight
 * through the kernel (no pool): one cache entry per m, past the cache's
 * 256, so it is cleared and refilled on the way. */
static void test_many_shapes(void) {
    yolo_cpu_context ctx = {.threads = 2, .bf16 = true};
    enum { K = 7, N = 5, M_MAX = 300, B = 2 };
    static float a[B * M_MAX * K], b[B * K * N], c[B * M_MAX * N];
    for (int i = 0; i < B * M_MAX * K; i++) a[i] = (float)((i * 37) % 17 - 8) / 8.0f; /* bf16-exact */
    for (int i = 0; i < B * K * N; i++) b[i] = (float)((i * 11) % 13 - 6) / 4.0f;
    int bad = 0;
    for (int m = 1; m <= M_MAX && !bad; m++) {
        const yolo_cpu_matmul mm = {a, b, c, false, false, B, m, N, K, m * K, K * N};
        if (yolo_matmul_onednn_bf16(&ctx, &mm) != YOLO_OK) {
            CHECK_MSG(0, "m %d: %s", m, yolo_last_error());
            return;
        }
        for (int p = 0; p < B && !bad; p++)
            for (int i = 0; i < m && !bad; i++)
                for (int j = 0; j < N; j++) {
                    double ref = 0;
                    for (int k = 0; k < K; k++) ref += (double)a[p * m * K + i * K + k] * b[p * K * N + k * N + j];
                    if (c[(p * m + i) * N + j] != (float)ref) { /* eighths times quarters, 7 terms: exact */
                        CHECK_MSG(0, "m %d: c[%d][%d][%d] = %.9g, expected %.9g", m, p, i, j, c[(p * m + i) * N + j],
                                  ref);
                        bad = 1;
                        break;
                    }
                }
    }
    printf("  %d shapes of 2 products through the kernel: exact\n", M_MAX);
}

int main(void) {
    char why[128];
    if (!yolo_conv_onednn_bf16_available(why, sizeof why))
        return test_skip("this CPU runs amp in fp32 (no AVX512-BF16 or AMX): no bf16 matmul to test");
    yolo_backend *amp = NULL, *fp32 = NULL;
    CHECK(yolo_backend_create("cpu", 2, &amp) == YOLO_OK && yolo_backend_create("cpu", 2, &fp32) == YOLO_OK);
    if (test_failures) return test_result("test_bf16_matmul");
    CHECK(yolo_backend_set_amp(amp, true));
    CHECK_MSG(strstr(yolo_backend_precision(amp), "matmuls"), "the precision line names the matmuls: %s",
              yolo_backend_precision(amp));
    printf("amp: %s\n", yolo_backend_precision(amp));
    for (size_t i = 0; i < N_CASES; i++) {
        parity_result f, a, again, raw_f, raw_a;
        bool same;
        exact_inputs = true;
        parity_run_one(fp32, cases[i].build, 99 + i, true, 1, &f);
        parity_run_one(amp, cases[i].build, 99 + i, true, 1, &a);
        parity_run_one(amp, cases[i].build, 99 + i, true, 1, &again);
        CHECK_MSG(f.ok && a.ok && again.ok && f.n == a.n && a.n == again.n && a.n == 3, "%s: runs failed",
                  cases[i].name);
        const double out = rel_diff(a.values[0], f.values[0], a.counts[0], &same);
        const double grads = worst_from(&a, &f, 1, &same);
        CHECK_MSG(out <= SUM_ORDER, "%s: bf16-exact inputs: output differs from fp32 by %.3g", cases[i].name, out);
        CHECK_MSG(grads <= BF16_ROUNDING, "%s: bf16-exact inputs: gradients differ from fp32 by %.3g", cases[i].name,
                  grads);
        worst_from(&a, &again, 0, &same);
        CHECK_MSG(same, "%s: two amp runs differ", cases[i].name);

        exact_inputs = false;
        parity_run_one(fp32, cases[i].build, 99 + i, true, 1, &raw_f);
        parity_run_one(amp, cases[i].build, 99 + i, true, 1, &raw_a);
        const double raw = worst_from(&raw_a, &raw_f, 0, &same);
        CHECK_MSG(!same && raw <= BF16_ROUNDING, "%s: raw inputs: amp %s fp32 (%.3g)", cases[i].name,
                  same ? "equals (the bf16 path did not run?)" : "too far from", raw);
        printf("  %-36s exact inputs: output %.1e, gradients %.1e; raw inputs %.1e (of the largest value)\n",
               cases[i].name, out, grads, raw);
        parity_free(&f);
        parity_free(&a);
        parity_free(&again);
        parity_free(&raw_f);
        parity_free(&raw_a);
    }
    test_many_shapes();
    yolo_backend_free(amp);
    yolo_backend_free(fp32);
    return test_result("test_bf16_matmul");
}
