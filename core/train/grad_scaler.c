/* Dynamic loss scaling (see grad_scaler.h): PyTorch's _amp_update_scale_. */
#include "train/grad_scaler.h"

#include <math.h>

void yolo_grad_scaler_init(yolo_grad_scaler *s, bool enabled) {
    s->enabled = enabled;
    s->scale = enabled ? YOLO_GRAD_SCALER_INIT_SCALE : 1.0f;
    s->growth_tracker = 0;
    s->skipped = 0;
}

void yolo_grad_scaler_update(yolo_grad_scaler *s, bool found_inf) {
    if (!s->enabled) return;
    if (found_inf) {
        s->scale *= 0.5f;
        s->growth_tracker = 0;
        s->skipped++;
        return;
    }
    int64_t successful = s->growth_tracker + 1;
    if (successful == YOLO_GRAD_SCALER_GROWTH_INTERVAL) {
        float grown = s->scale * 2.0f;
        if (isfinite(grown)) s->scale = grown;
        s->growth_tracker = 0;
    } else {
        s->growth_tracker = successful;
    }
}

void yolo_grad_scaler_scale(const yolo_grad_scaler *s, float *grad, size_t n) {
    if (!s->enabled || s->scale == 1.0f) return;
    for (size_t i = 0; i < n; i++) grad[i] *= s->scale;
}
