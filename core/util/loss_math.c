/* The loss primitives of yolo/loss.h. */
#include "yolo/loss.h"

#include "util/vec16.h"

/* 16 lanes of BCE-with-logits: the loss terms and sigmoid(x) - t. */
static inline __attribute__((always_inline)) void bce16(const v16f *x, const v16f *t, v16f *loss, v16f *dx) {
    const v16i neg = V16_MASK(*x, <, V16(0.0f));
    const v16f abs_neg = V16_SELECT(neg, *x, -*x); /* -|x| */
    v16f e, l;
    v16_exp(&abs_neg, &e); /* exp(-|x|) in (0, 1]: one exp serves both terms */
    v16_log1p_unit(&e, &l);
    /* max(x, 0) - x * t as one product: no cancellation when x is large and
     * t near 1 */
    *loss = V16_SELECT(neg, -*x * *t, *x * (V16(1.0f) - *t)) + l;
    *dx = V16_SELECT(neg, e, V16(1.0f)) / (V16(1.0f) + e) - *t;
}

/* The exported function calls the dispatched one (vec16.h). */
VECTOR_BODY double bce_with_logits_body(const float *x, const float *t, size_t n, float gain, float *grad) {
    v8d lo = {0}, hi = {0};
    v16f vx, vt = V16(0.0f), loss, dx;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        memcpy(&vx, x + i, sizeof vx);
        if (t) memcpy(&vt, t + i, sizeof vt);
        bce16(&vx, &vt, &loss, &dx);
        v16_add_to_v8d(&loss, &lo, &hi);
        if (grad) {
            dx *= V16(gain);
            memcpy(grad + i, &dx, sizeof dx);
        }
    }
    if (i < n) { /* the tail through the same lanes, padding's terms zeroed */
        const size_t rest = n - i;
        float px[16] = {0}, pt[16] = {0}, pl[16];
        memcpy(px, x + i, rest * sizeof(float));
        if (t) memcpy(pt, t + i, rest * sizeof(float));
        memcpy(&vx, px, sizeof vx);
        memcpy(&vt, pt, sizeof vt);
        bce16(&vx, &vt, &loss, &dx);
        memcpy(pl, &loss, sizeof pl);
        for (size_t k = rest; k < 16; k++) pl[k] = 0.0f;
        memcpy(&loss, pl, sizeof loss);
        v16_add_to_v8d(&loss, &lo, &hi);
        if (grad) {
            dx *= V16(gain);
            memcpy(grad + i, &dx, rest * sizeof(float));
        }
    }
    lo += hi;
    double sum = 0;
    for (int k = 0; k < 8; k++) sum += lo[k];
    return sum;
}
VECTOR_DISPATCH(double, bce_with_logits, (const float *x, const float *t, size_t n, float gain, float *grad),
                (x, t, n, gain, grad))

double yolo_bce_with_logits(const float *x, const float *t, size_t n, float gain, float *grad) {
    return bce_with_logits(x, t, n, gain, grad);
}
