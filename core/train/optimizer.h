/* The optimizer: Ultralytics' three parameter groups and their update graph.
 *
 * Groups (the order of lr/pg0..2): 0 biases (no decay), 1 weights (decay),
 * 2 batch-norm weights (no decay). A step is one graph run on the device:
 * the total gradient norm, the clipping factor (GRAD_CLIP_SCALE), SGD
 * (Nesterov momentum), AdamW or MuSGD on every trainable parameter, and
 * zeroed gradients. MuSGD (Ultralytics 8.4): the matrices and conv filters
 * (group 1) take Muon's orthogonalized step (muon.h) and then SGD's, with
 * factors 0.2 and 1.0 of the group's lr; the rest plain SGD; parameters of
 * yolo_musgd_boosted names run at 3x their group's lr. The host uploads the hyper-parameters and reads nothing back
 * before the update; the norm is read afterwards, when asked for. */
#ifndef YOLO_TRAIN_OPTIMIZER_H
#define YOLO_TRAIN_OPTIMIZER_H

#include "train/grad_scaler.h"
#include "yolo/model.h"

#define YOLO_PARAM_GROUPS 3

typedef enum yolo_optimizer_kind { YOLO_OPTIMIZER_SGD = 0, YOLO_OPTIMIZER_ADAMW, YOLO_OPTIMIZER_MUSGD } yolo_optimizer_kind;

/* "SGD", "AdamW", "MuSGD"; and back (any case): false for another name. */
const char *yolo_optimizer_name(yolo_optimizer_kind kind);
bool yolo_optimizer_kind_of(const char *name, yolo_optimizer_kind *kind);

typedef struct yolo_optimizer {
    yolo_optimizer_kind kind;
    yolo_backend *backend;
    int n_params;
    yolo_tensor **params;
    int *group;            /* [n_params] 0 bias, 1 decay, 2 norm */
    yolo_tensor **state_a; /* SGD momentum buffer, AdamW exp_avg, MuSGD momentum_buffer */
    yolo_tensor **state_b; /* AdamW exp_avg_sq, MuSGD's momentum_buffer_SGD (its Muon parameters) */
    bool *boosted;         /* [n_params] MuSGD: at 3x the group's lr */
    int group_count[YOLO_PARAM_GROUPS];
    /* host copies of the hyper-parameters, uploaded before each step */
    float lr[YOLO_PARAM_GROUPS];
    float initial_lr;      /* lr0 after `auto` */
    float momentum;        /* SGD momentum / AdamW beta1 */
    float weight_decay;    /* already scaled by batch * accumulate / nbs */
    int64_t steps;         /* optimizer steps taken */
    yolo_tensor *hyper[YOLO_PARAM_GROUPS];
    yolo_tensor *hyper_boosted[YOLO_PARAM_GROUPS]; /* MuSGD: the same at 3x lr */
    yolo_tensor *clip_hyper;  /* {max_norm, 1/loss_scale} (yolo_grad_clip_scale) */
    yolo_tensor *step_scale;  /* [1] the last step's grad_scale, 0 when the device skipped it (the EMA's gate) */
    yolo_tensor *norm_sq;     /* output of the update graph: sum of squared gradients */
    yolo_graph *update_graph; /* norm -> clip factor -> updates -> zeroed gradients */
    bool norm_unread;         /* the last step's norm_sq has not been checked yet */
    float unscale;            /* 1/loss_scale of the gradients (1 without loss scaling) */
    yolo_grad_scaler scaler;  /* amp with fp16 kernels: dynamic loss scaling (sets unscale) */
    bool last_skipped;        /* the last checked step had inf/NaN gradients and was skipped */
    bool prepared;            /* yolo_optimizer_prepare uploaded the next step's hyper-parameters */
} yolo_optimizer;

/* Collects the trainable parameters of `model` into the groups and creates
 * the optimizer state (zeros). */
yolo_status yolo_optimizer_create(yolo_model *model, yolo_optimizer_kind kind, float lr, float momentum,
                                  float weight_decay, yolo_optimizer **out);
/* The same for the tensors given (their role picks the group; a BUFFER or a
 * tensor without gradient is left out), on `backend`. */
yolo_status yolo_optimizer_create_for(yolo_backend *backend, int n, const yolo_model_tensor *tensors,
                                      yolo_optimizer_kind kind, float lr, float momentum, float weight_decay,
                                      yolo_optimizer **out);
void yolo_optimizer_free(yolo_optimizer *opt);

/* One step with the current lr[] and momentum: clip the total gradient norm
 * to max_norm (<= 0: no clipping), update, zero the gradients. *grad_norm
 * (may be NULL) receives the norm before clipping, read after the update.
 * A non-finite norm skips the update on the device (parameters and state
 * untouched) and zeroes the gradients; the host finds out when it reads the
 * norm (grad_norm given, or the next step or yolo_optimizer_check) and
 * returns YOLO_ERR_NUMERIC then, the skipped step not counted. */
yolo_status yolo_optimizer_step(yolo_optimizer *opt, float max_norm, double *grad_norm);

/* The first half of yolo_optimizer_step: reads the last step's norm if
 * unread (yolo_optimizer_check) and uploads the next step's hyper-
 * parameters (lr[], momentum, max_norm, the loss scale). Called before the
 * backward, while the device is idle, it leaves yolo_optimizer_step nothing
 * to upload (it then takes prepare's max_norm), so that the step is queued
 * right behind the backward without the host waiting for it;
 * yolo_optimizer_step prepares itself otherwise. */
yolo_status yolo_optimizer_prepare(yolo_optimizer *opt, float max_norm);

/* Reads the last step's gradient norm if not read yet: YOLO_ERR_NUMERIC if
 * it was not finite (that step was skipped). *grad_norm may be NULL. With
 * loss scaling on, a skipped step is no error: the scaler backs off, the
 * step is not counted, last_skipped says so. */
yolo_status yolo_optimizer_check(yolo_optimizer *opt, double *grad_norm);

/* "SGD(lr=0.01, momentum=0.937) with parameter groups 57 weight(decay=0.0), 64 weight(decay=0.0005), 63 bias(decay=0.0)" */
void yolo_optimizer_describe(const yolo_optimizer *opt, char *buf, size_t size);

#endif
