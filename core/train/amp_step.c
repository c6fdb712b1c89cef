/* The optimizer step and its EMA update, with or without loss scaling (see amp_step.h). */
#include "train/amp_step.h"

#include <math.h>
#include <stdlib.h>

yolo_status yolo_amp_prepare(yolo_optimizer *opt, yolo_ema *ema, float max_norm, bool *ema_pending) {
    /* the previous step's outcome first: the decay below follows the count */
    yolo_status st = yolo_amp_settle(opt, ema, ema_pending);
    if (!st && ema->gate != opt->step_scale) st = yolo_ema_gate(ema, opt->step_scale);
    if (!st) st = yolo_ema_prepare(ema);
    if (!st) st = yolo_optimizer_prepare(opt, max_norm);
    return st;
}

yolo_status yolo_amp_step(yolo_optimizer *opt, yolo_ema *ema, float max_norm, bool *ema_pending) {
    /* not prepared before the backward: the first upload waits for it */
    yolo_status st = opt->prepared ? YOLO_OK : yolo_amp_prepare(opt, ema, max_norm, ema_pending);
    if (!st) st = yolo_optimizer_step(opt, max_norm, NULL);
    if (!st) st = yolo_ema_run(ema);
    if (!st) *ema_pending = true;
    return st;
}

yolo_status yolo_amp_settle(yolo_optimizer *opt, yolo_ema *ema, bool *ema_pending) {
    yolo_status st = yolo_optimizer_check(opt, NULL);
    if (st || !*ema_pending) return st;
    *ema_pending = false;
    if (!opt->last_skipped) ema->updates++; /* else the device left the EMA as it was */
    return YOLO_OK;
}

void yolo_amp_scale_loss_grads(const yolo_optimizer *opt, yolo_model_graph *mg, int64_t step) {
    if (!opt->scaler.enabled) return;
    for (int k = 0; k < mg->out.n; k++)
        yolo_grad_scaler_scale(&opt->scaler, mg->host_grad[k].data, (size_t)yolo_tensor_numel(mg->out.t[k]));
#ifdef YOLO_TEST_HOOKS
    const char *force = getenv("YOLO_FORCE_INF_STEP");
    if (force && *force && atoll(force) == step && mg->out.n > 0) mg->host_grad[0].data[0] = INFINITY;
#else
    (void)step;
#endif
}
