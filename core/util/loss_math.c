/* The loss primitives of yolo/loss.h. */
#include "yolo/loss.h"

#include "util/vec.h"

/* 8 lanes of BCE-with-logits: the loss terms and sigmoid(x) - t. */
static inline __attribute__((always_inline)) void bce8(const v8f *x, const v8f *t, v8f *loss, v8f *dx) {
    const v8i neg = (v8i)(*x < V8(0.0f));
    const v8f abs_neg = V8_SELECT(neg, *x, -*x); /* -|x| */
    v8f e, l;
    v8_exp(&abs_neg, &e); /* exp(-|x|) in (0, 1]: one exp serves both terms */
    v8_log1p_unit(&e, &l);
    /* max(x, 0) - x * t as one product: no cancellation when x is large and
     * t near 1 */
    *loss = V8_SELECT(neg, -*x * *t, *x * (V8(1.0f) - *t)) + l;
    *dx = V8_SELECT(neg, e, V8(1.0f)) / (V8(1.0f) + e) - *t;
}

/* The exported function calls the dispatched one (vec.h). */
VECTOR_BODY double bce_with_logits_body(const float *x, const float *t, size_t n, float gain, float *grad) {
    double acc[8] = {0};
    v8f vx, vt = V8(0.0f), loss, dx;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&vx, x + i, sizeof vx);
        if (t) memcpy(&vt, t + i, sizeof vt);
        bce8(&vx, &vt, &loss, &dx);
        v8_add_to_doubles(&loss, acc);
        if (grad) {
            dx *= V8(gain);
            memcpy(grad + i, &dx, sizeof dx);
        }
    }
    if (i < n) { /* the tail through the same lanes, padding's terms zeroed */
        const size_t rest = n - i;
        float px[8] = {0}, pt[8] = {0}, pl[8];
        memcpy(px, x + i, rest * sizeof(float));
        if (t) memcpy(pt, t + i, rest * sizeof(float));
        memcpy(&vx, px, sizeof vx);
        memcpy(&vt, pt, sizeof vt);
        bce8(&vx, &vt, &loss, &dx);
        memcpy(pl, &loss, sizeof pl);
        for (size_t k = rest; k < 8; k++) pl[k] = 0.0f;
        memcpy(&loss, pl, sizeof loss);
        v8_add_to_doubles(&loss, acc);
        if (grad) {
            dx *= V8(gain);
            memcpy(grad + i, &dx, rest * sizeof(float));
        }
    }
    double sum = 0;
    for (int k = 0; k < 4; k++) sum += acc[k] + acc[k + 4];
    return sum;
}
VECTOR_DISPATCH(double, bce_with_logits, (const float *x, const float *t, size_t n, float gain, float *grad),
                (x, t, n, gain, grad))

double yolo_bce_with_logits(const float *x, const float *t, size_t n, float gain, float *grad) {
    return bce_with_logits(x, t, n, gain, grad);
}
