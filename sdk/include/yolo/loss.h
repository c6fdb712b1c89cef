/* yolo/loss.h — loss primitives that task plugins share.
 *
 * Host loops over caller-owned float arrays, vectorised (16 floats at a
 * time, AVX-512/AVX2 picked at load time) because a task's loss runs on the
 * host between the forward and the backward graph, where the device waits
 * for it. Each element is computed in float, as PyTorch computes its float
 * losses; sums accumulate in double in a fixed order, so a result depends
 * only on the inputs (not on the CPU, the thread count or the alignment). */
#ifndef YOLO_LOSS_H
#define YOLO_LOSS_H

#include <stddef.h>

#include "yolo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Binary cross-entropy with logits (PyTorch's BCEWithLogitsLoss, reduction
 * "sum"): returns the sum over i < n of
 *     max(x[i], 0) - x[i] * t[i] + log(1 + exp(-|x[i]|)),
 * with every t[i] = 0 when t is NULL. When grad is not NULL it receives
 * gain * (sigmoid(x[i]) - t[i]), the gradient of gain * that sum; grad may
 * be x itself (each element is read before it is written), not otherwise
 * overlap it. n = 0 returns 0. Within 2e-7 of the exact value per element,
 * relative to max(1, the element's loss). */
YOLO_API double yolo_bce_with_logits(const float *x, const float *t, size_t n, float gain, float *grad);

#ifdef __cplusplus
}
#endif

#endif
