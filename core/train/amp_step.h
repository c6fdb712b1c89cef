/* The optimizer step and its EMA update as the trainer runs them, shared
 * with the tests and bench_train, with or without fp16 loss scaling: the
 * loss gradients are scaled before the backward (loss scaling on), the
 * update graph skips a step with inf/NaN gradients on the device and the
 * EMA graph, gated on the step's grad_scale (optimizer step_scale), skips
 * it too, so both are queued back to back and the host reads nothing in
 * between (a skipped step updates neither weights, optimizer state nor
 * EMA). The host learns of a skip later, when it reads the gradient norm
 * at a point where it waits for the device anyway (after the next
 * forward's download); only then does it count the EMA update, so the EMA
 * decay of the next step (0.9999 * (1 - exp(-updates / 2000))) and the
 * count in a checkpoint stay exact. */
#ifndef YOLO_TRAIN_AMP_STEP_H
#define YOLO_TRAIN_AMP_STEP_H

#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"

/* Before the backward of a step that ends in an optimizer step, while the
 * device is idle: settles the previous step (yolo_amp_settle) and uploads
 * the EMA decay of the next update and the optimizer's hyper-parameters
 * (yolo_optimizer_prepare with max_norm). */
yolo_status yolo_amp_prepare(yolo_optimizer *opt, yolo_ema *ema, float max_norm, bool *ema_pending);
/* After the backward: queues the optimizer step and then the gated EMA
 * update; *ema_pending says the update is not counted yet. Prepared before
 * the backward, the host waits for nothing here (YOLOv8n on lavapipe: the
 * step's graph waits went from 3 to 2, the forward's download and the next
 * batch's upload); unprepared, it prepares first, and the first upload
 * waits for the backward. */
yolo_status yolo_amp_step(yolo_optimizer *opt, yolo_ema *ema, float max_norm, bool *ema_pending);
/* Reads the last step's gradient norm if unread (the inf check: the scaler
 * backs off or counts a good step) and counts its pending EMA update unless
 * the step was skipped. With loss scaling the trainer calls it after each
 * forward (the scale of the next loss gradients depends on it), and always
 * before checkpoints and validation. */
yolo_status yolo_amp_settle(yolo_optimizer *opt, yolo_ema *ema, bool *ema_pending);
/* The loss gradients in mg->host_grad times the loss scale (loss scaling
 * on). Test hooks: YOLO_FORCE_INF_STEP=N puts an inf into them when
 * step == N. */
void yolo_amp_scale_loss_grads(const yolo_optimizer *opt, yolo_model_graph *mg, int64_t step);

#endif
