/* yolo_bce_with_logits (yolo/loss.h) against a double-precision reference:
 * the stated per-element bound over logits from -100 to 100 (the tiny
 * log1p terms of confident backgrounds included), soft targets, every tail
 * length, a NULL target, the gradient written in place, and sums that do
 * not depend on where the array starts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "yolo/loss.h"

static double ref_loss(double x, double t) { return fmax(x, 0) - x * t + log1p(exp(-fabs(x))); }
static double ref_grad(double x, double t) { return 1 / (1 + exp(-x)) - t; }

/* Every element's loss and gradient within the bound, one call per element
 * (the tail path) and all at once (the vector path). */
static void test_elements(void) {
    enum { N = 4001 };
    float *x = malloc(N * sizeof(float)), *t = malloc(N * sizeof(float)), *g = malloc(N * sizeof(float));
    uint64_t rng = 7;
    for (int i = 0; i < N; i++) {
        x[i] = -100.0f + 200.0f * i / (N - 1); /* an even sweep, 0 included */
        t[i] = i % 3 == 0 ? 0.0f : test_uniform(&rng, 0, 1);
    }
    x[1] = -1e-30f, x[2] = 1e-6f, x[3] = -17.3f, x[4] = 88.5f, x[5] = -88.5f;
    double worst = 0, worst_g = 0, total = 0;
    for (int i = 0; i < N; i++) {
        float gi;
        double l = yolo_bce_with_logits(x + i, t + i, 1, 1.0f, &gi), r = ref_loss(x[i], t[i]);
        double err = fabs(l - r) / fmax(1, fabs(r)), err_g = fabs(gi - ref_grad(x[i], t[i]));
        worst = fmax(worst, err), worst_g = fmax(worst_g, err_g);
        CHECK_MSG(err <= 2e-7 && err_g <= 2e-7, "x %g t %g: loss %.9g want %.9g, gradient %.9g want %.9g", x[i], t[i],
                  l, r, gi, ref_grad(x[i], t[i]));
        total += r;
    }
    /* confident backgrounds: log1p of tiny exps kept to float precision */
    float xb = -15.0f, gb;
    double lb = yolo_bce_with_logits(&xb, NULL, 1, 1.0f, &gb);
    CHECK_MSG(fabs(lb - ref_loss(-15, 0)) <= 1e-7 * ref_loss(-15, 0), "x -15: %.9g want %.9g", lb, ref_loss(-15, 0));
    double all = yolo_bce_with_logits(x, t, N, 0.5f, g);
    CHECK_MSG(fabs(all - total) <= 2e-7 * total, "sum %.12g, reference %.12g", all, total);
    for (int i = 0; i < N; i++) CHECK(fabs(g[i] - 0.5 * ref_grad(x[i], t[i])) <= 1e-7);
    printf("worst per-element error: loss %.2g, gradient %.2g\n", worst, worst_g);
    free(x), free(t), free(g);
}

/* Tails of every length, a NULL target meaning zeros, grad in place, and a
 * sum that depends only on the values, not on their address. */
static void test_layouts(void) {
    enum { N = 53 };
    float x[N + 1], zeros[N] = {0}, g1[N], g2[N];
    test_fill_uniform(x, N + 1, 3, -6, 6);
    for (int n = 0; n <= N; n++) {
        double a = yolo_bce_with_logits(x, NULL, (size_t)n, 2.0f, g1);
        double b = yolo_bce_with_logits(x, zeros, (size_t)n, 2.0f, g2);
        CHECK_MSG(a == b && memcmp(g1, g2, (size_t)n * sizeof(float)) == 0, "n %d: NULL target differs from zeros", n);
        double r = 0;
        for (int i = 0; i < n; i++) r += ref_loss(x[i], 0);
        CHECK_MSG(fabs(a - r) <= 2e-7 * fmax(1, r), "n %d: %.9g want %.9g", n, a, r);
    }
    CHECK(yolo_bce_with_logits(x, NULL, 0, 1.0f, NULL) == 0);
    /* the same values one float further on: the same sum and gradients */
    float shifted[N + 1];
    memcpy(shifted + 1, x, N * sizeof(float));
    double here = yolo_bce_with_logits(x, NULL, N, 1.0f, g1), there = yolo_bce_with_logits(shifted + 1, NULL, N, 1.0f, g2);
    CHECK_MSG(here == there && memcmp(g1, g2, sizeof g1) == 0, "sum %.17g at one address, %.17g at another", here,
              there);
    /* in place: the gradient replaces the logits */
    float inplace[N];
    memcpy(inplace, x, sizeof inplace);
    double s = yolo_bce_with_logits(inplace, NULL, N, 1.0f, inplace);
    CHECK(s == here && memcmp(inplace, g1, sizeof inplace) == 0);
}

int main(void) {
    test_elements();
    test_layouts();
    return test_result("test_loss_math");
}
