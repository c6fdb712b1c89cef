/* The optimizer step under fp16 loss scaling (see amp_step.h). */
#include "train/amp_step.h"

#include <math.h>
#include <stdlib.h>

yolo_status yolo_amp_after_step(yolo_optimizer *opt, yolo_ema *ema, bool *ema_pending) {
    if (!opt->scaler.enabled) return yolo_ema_step(ema);
    *ema_pending = true;
    return YOLO_OK;
}

yolo_status yolo_amp_settle(yolo_optimizer *opt, yolo_ema *ema, bool *ema_pending) {
    yolo_status st = yolo_optimizer_check(opt, NULL);
    if (st || !*ema_pending) return st;
    *ema_pending = false;
    return opt->last_skipped ? YOLO_OK : yolo_ema_step(ema);
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
