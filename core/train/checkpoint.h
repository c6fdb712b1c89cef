/* Training checkpoints (last.ckpt, best.ckpt) written from the trainer's
 * state, read back for an exact resume, and models rebuilt from a
 * checkpoint for val, predict and fine-tuning. The file format is
 * core/ckpt/.
 *
 * Beyond core/ckpt's required keys, a training checkpoint's meta.yaml
 * holds model_name, nc, names, results (one map per finished epoch) and a
 * `resume` map with what the trainer needs to continue bit-exactly:
 *   last_opt_step    the step index (ni) of the last optimizer step
 *   best_epoch       0-based epoch of best_fitness (-1: none)
 *   batch            the batch size the sampler position counts in
 *   optimizer        SGD | AdamW (as chosen, `auto` resolved)
 *   lr0, momentum, warmup_bias_lr   the hyper-parameters after `auto`
 *   momentum_now     the optimizer's current momentum (warmup ramps it)
 *   grads            whether optimizer.safetensors holds "<param>.grad":
 *                    gradients accumulated but not yet stepped
 *   loss_sums        the running loss sums of a partly trained epoch
 *   finished         the run ended (last epoch or early stop)
 *   best_half        best.ckpt is written in fp16 (half was not false)
 * The optimizer blob keys its moments "<param>.momentum_buffer" (SGD) or
 * "<param>.exp_avg" / "<param>.exp_avg_sq" (AdamW). */
#ifndef YOLO_TRAIN_CHECKPOINT_H
#define YOLO_TRAIN_CHECKPOINT_H

#include "ckpt/ckpt_file.h"
#include "ckpt/ckpt_tensors.h"
#include "train/ema.h"
#include "train/optimizer.h"
#include "train/session.h"
#include "yolo/task.h"

typedef struct yolo_train_state {
    const yolo_session *session;
    const yolo_model *model;    /* live weights (NULL: not saved) */
    const yolo_ema *ema;
    const yolo_optimizer *opt;  /* NULL: not saved */
    int64_t epoch;              /* last completed epoch (0-based, -1: none) */
    double best_fitness;
    const yolo_meta *results;   /* list of result rows (may be NULL) */
    /* the resume map (used when opt is saved) */
    int64_t sampler_epoch;      /* the next batch to train: epoch ... */
    int64_t sampler_batch;      /* ... and batch within it */
    int64_t last_opt_step;
    int64_t best_epoch;
    double lr0, momentum, warmup_bias_lr;
    bool grads;                 /* save the parameters' accumulated gradients */
    bool finished;
    bool best_half;
    int n_loss_sums;
    const double *loss_sums;
} yolo_train_state;

/* Writes `path` atomically. half: the EMA is stored in fp16 and nothing
 * else (best.ckpt); otherwise model, EMA and optimizer in f32 (last.ckpt). */
yolo_status yolo_train_save_checkpoint(const char *path, const yolo_train_state *state, bool half);

/* Whether `model` names a checkpoint (ends in .ckpt, or .pt/.pth: an
 * Ultralytics checkpoint, read through core/interop). */
bool yolo_is_checkpoint_path(const char *model);

/* Refuses a checkpoint of another task than `task`, naming both. */
yolo_status yolo_checkpoint_check_task(const yolo_ckpt *ck, const yolo_task *task);

/* The checkpoint's train args as a yaml text for
 * yolo_config_merge_yaml(..., YOLO_CONFIG_LAYER_CHECKPOINT, ...). *text is
 * malloc'd. */
yolo_status yolo_checkpoint_args_yaml(const yolo_ckpt *ck, char **text, size_t *len);
/* One train arg as stored (its args.yaml text), NULL if absent. */
const char *yolo_checkpoint_arg(const yolo_ckpt *ck, const char *key);
/* The checkpoint's imgsz, data and single_cls as defaults of cfg, as
 * Ultralytics' Model keeps them of a checkpoint (_reset_ckpt_args): set at
 * the checkpoint layer for the keys neither cfg= nor the command line gives
 * (val, predict and export of model=CKPT; a fine-tune from model=CKPT). */
void yolo_checkpoint_default_args(const yolo_ckpt *ck, yolo_config *cfg);

/* What last.ckpt holds for a resume beyond the tensors (see above). */
typedef struct yolo_resume_info {
    int64_t epoch, sampler_epoch, sampler_batch;
    int64_t optimizer_steps, ema_updates;
    int64_t last_opt_step, best_epoch, batch;
    double best_fitness;
    yolo_optimizer_kind optimizer;
    double lr0, momentum, warmup_bias_lr, momentum_now;
    bool grads, finished, best_half;
    int n_loss_sums;
    double loss_sums[YOLO_TASK_MAX_ITEMS];
    bool has_scaler;            /* resume.amp_scaler present (amp runs with loss scaling write it) */
    double scaler_scale;
    int64_t scaler_growth_tracker;
    const char *model_name;     /* points into the checkpoint */
    int64_t nc;
} yolo_resume_info;

/* Reads and checks the resume state of a last.ckpt (a best.ckpt or a
 * checkpoint without an optimizer cannot be resumed: said so). */
yolo_status yolo_checkpoint_resume_info(const yolo_ckpt *ck, yolo_resume_info *out);
/* Loads model, EMA (and its update count), optimizer state (and its step
 * count), and the pending gradients when info->grads (else the gradients
 * are zeroed). Strict: every tensor present with its shape, nothing more. */
yolo_status yolo_checkpoint_restore(const yolo_ckpt *ck, const yolo_resume_info *info, yolo_model *model,
                                    yolo_ema *ema, yolo_optimizer *opt);
/* Fine-tune: copies every tensor of `model` whose name and shape match the
 * checkpoint's weights (the EMA when it has one), NaN or Inf aside; counts
 * into *transferred of *total; report (may be NULL) names what was not
 * copied and why (ckpt/ckpt_tensors.h). Nothing matching is an error. */
yolo_status yolo_checkpoint_transfer(const yolo_ckpt *ck, yolo_model *model, size_t *transferred, size_t *total,
                                     yolo_ckpt_report *report);

/* Builds the model a checkpoint was trained with (its model yaml and class
 * count) on s->backend and loads its EMA weights (the weights that were
 * validated). Refuses a checkpoint of another task, naming both. */
/* s->model_yaml = the checkpoint's stored model yaml (NULL when it has
 * none), so yolo_session_build_model rebuilds exactly that architecture. */
yolo_status yolo_checkpoint_model_yaml(const yolo_ckpt *ck, yolo_session *s);
/* yolo_session_build_model for a model whose weights a checkpoint supplies
 * (fine-tune, resume, a .ckpt's val): where `model` is a .pt and no yaml
 * text was stored (a checkpoint made from a .pt, an older .ckpt), the .pt's
 * architecture alone, without loading its weights. */
yolo_status yolo_checkpoint_build_model(yolo_session *s, const char *model, yolo_model **out);
yolo_status yolo_model_from_checkpoint(yolo_session *s, const char *path, yolo_model **out);

#endif
