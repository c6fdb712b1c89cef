/* Exponential moving average of a model's weights (Ultralytics' ModelEMA):
 * after each optimizer step, u += 1, d = 0.9999 * (1 - exp(-u / 2000)), and
 * every tensor of the EMA model (parameters and batch-norm buffers) becomes
 * d * ema + (1 - d) * model, on the device (frozen tensors excepted: they
 * stay as they are). Validation and checkpoints use the EMA model. */
#ifndef YOLO_TRAIN_EMA_H
#define YOLO_TRAIN_EMA_H

#include "yolo/model.h"

typedef struct yolo_ema {
    yolo_model *ema;    /* same architecture, owned */
    yolo_model *source; /* the trained model, borrowed */
    int64_t updates;
    yolo_tensor *hyper; /* [1] decay */
    yolo_graph *graph;
    yolo_tensor *gate;  /* the optimizer's step_scale the updates follow (NULL: none) */
} yolo_ema;

/* ema_model is a freshly built model of the same yaml (owned by the EMA
 * from here on); its tensors are set to the source model's. */
yolo_status yolo_ema_create(yolo_model *source, yolo_model *ema_model, yolo_ema **out);
void yolo_ema_free(yolo_ema *ema);
/* One EMA update after an optimizer step, counted (an EMA without gate). */
yolo_status yolo_ema_step(yolo_ema *ema);
/* Rebuilds the EMA graph so that every update follows step_scale [1] (the
 * optimizer's, see optimizer.h): 0 leaves the EMA as it is, on the device.
 * The caller then counts the updates (train/amp_step.h). */
yolo_status yolo_ema_gate(yolo_ema *ema, yolo_tensor *step_scale);
/* The decay of update `updates + 1` into the EMA's hyper tensor: uploaded
 * before the optimizer step is queued, it leaves nothing for the host to
 * wait on between the step and yolo_ema_run. */
yolo_status yolo_ema_prepare(yolo_ema *ema);
/* Queues the EMA graph with the prepared decay (counts nothing). */
yolo_status yolo_ema_run(yolo_ema *ema);
double yolo_ema_decay(int64_t updates);

/* Copies every tensor of `from` into the same-named tensor of `to`. */
yolo_status yolo_model_copy_tensors(const yolo_model *from, yolo_model *to);

#endif
