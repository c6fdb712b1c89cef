/* Dynamic loss scaling for fp16 mixed precision, as PyTorch's
 * torch.amp.GradScaler with its defaults (init_scale 2^16, growth 2,
 * backoff 0.5, growth_interval 2000).
 *
 * The trainer multiplies the loss gradients it uploads by `scale` (a power
 * of two: exact in fp32), the optimizer's update graph divides the
 * gradients by it inside the clipping factor (clip after unscale, as
 * Ultralytics' optimizer_step) and skips the update on the device when the
 * gradients hold an inf or NaN (GRAD_CLIP_SCALE gives 0). The host learns
 * of the skip when it next reads the gradient norm, after the next
 * forward's download (the update finished long before: no extra wait), and
 * then updates the scale here. */
#ifndef YOLO_TRAIN_GRAD_SCALER_H
#define YOLO_TRAIN_GRAD_SCALER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define YOLO_GRAD_SCALER_INIT_SCALE 65536.0f
#define YOLO_GRAD_SCALER_GROWTH_INTERVAL 2000

typedef struct yolo_grad_scaler {
    bool enabled;
    float scale;            /* the loss scale (float32, as PyTorch's _scale) */
    int64_t growth_tracker; /* consecutive steps with finite gradients since the scale last changed */
    int64_t skipped;        /* steps skipped in this process (for the summary line) */
} yolo_grad_scaler;

/* Scale 2^16, tracker 0; disabled: scale 1 and the update does nothing. */
void yolo_grad_scaler_init(yolo_grad_scaler *s, bool enabled);
/* After an optimizer step: found_inf halves the scale and resets the
 * tracker; otherwise the tracker counts up and at the growth interval the
 * scale doubles (if the doubled scale is finite) and the tracker resets. */
void yolo_grad_scaler_update(yolo_grad_scaler *s, bool found_inf);
/* grad[0..n) *= scale when enabled. */
void yolo_grad_scaler_scale(const yolo_grad_scaler *s, float *grad, size_t n);

#endif
