/* Training checkpoints (last.ckpt, best.ckpt) written from the trainer's
 * state, and models rebuilt from a checkpoint for val, predict and
 * fine-tuning. The file format is core/ckpt/. */
#ifndef YOLO_TRAIN_CHECKPOINT_H
#define YOLO_TRAIN_CHECKPOINT_H

#include "ckpt/ckpt_file.h"
#include "train/ema.h"
#include "train/optimizer.h"
#include "train/session.h"

typedef struct yolo_train_state {
    const yolo_session *session;
    const yolo_model *model;    /* live weights (NULL: not saved) */
    const yolo_ema *ema;
    const yolo_optimizer *opt;  /* NULL: not saved */
    int64_t epoch;              /* last completed epoch (0-based) */
    double best_fitness;
    const yolo_meta *results;   /* list of result rows (may be NULL) */
} yolo_train_state;

/* Writes `path` atomically. half: the EMA is stored in fp16 and nothing
 * else (best.ckpt); otherwise model, EMA and optimizer in f32 (last.ckpt). */
yolo_status yolo_train_save_checkpoint(const char *path, const yolo_train_state *state, bool half);

/* Whether `model` names a checkpoint (ends in .ckpt). */
bool yolo_is_checkpoint_path(const char *model);

/* Builds the model a checkpoint was trained with (its model yaml and class
 * count) on s->backend and loads its EMA weights (the weights that were
 * validated). Refuses a checkpoint of another task, naming both. */
yolo_status yolo_model_from_checkpoint(yolo_session *s, const char *path, yolo_model **out);

#endif
