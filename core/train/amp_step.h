/* The optimizer step under fp16 loss scaling (grad_scaler.h), shared by the
 * trainer and the tests: the loss gradients are scaled before the
 * backward, the update graph skips a step with inf/NaN gradients on the
 * device, and the EMA update of a step waits until its inf check has been
 * read (a skipped step updates neither weights, optimizer state nor EMA).
 * Without loss scaling the EMA update follows the optimizer step at once. */
#ifndef YOLO_TRAIN_AMP_STEP_H
#define YOLO_TRAIN_AMP_STEP_H

#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"

/* After yolo_optimizer_step: the EMA update now, or pending its inf check. */
yolo_status yolo_amp_after_step(yolo_optimizer *opt, yolo_ema *ema, bool *ema_pending);
/* Reads the last step's gradient norm if unread (the inf check: the scaler
 * backs off or counts a good step) and runs its pending EMA update unless
 * the step was skipped. The trainer calls it before each forward (the EMA
 * averages the batch-norm buffers that the forward changes) and before
 * checkpoints and validation. */
yolo_status yolo_amp_settle(yolo_optimizer *opt, yolo_ema *ema, bool *ema_pending);
/* The loss gradients in mg->host_grad times the loss scale (loss scaling
 * on). Test hooks: YOLO_FORCE_INF_STEP=N puts an inf into them when
 * step == N. */
void yolo_amp_scale_loss_grads(const yolo_optimizer *opt, yolo_model_graph *mg, int64_t step);

#endif
