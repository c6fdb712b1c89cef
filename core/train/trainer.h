/* `yolo train`: the task-agnostic trainer of DESIGN.md, split by concern:
 *
 *   trainer_setup.c  the session, model, EMA, loader, optimizer, loss and
 *                    validator of a run (settings read once, session.h)
 *   resume.c         which checkpoint a run continues or starts from, its
 *                    args merged, its position restored
 *   run_dir.c        the run directory, last/best/epochN checkpoints and the
 *                    results history they carry
 *   trainer_dist.c   DDP: the communicator, rank 0's weights to every rank,
 *                    the per-batch reductions, sync_bn
 *   train_loop.c     the epochs: forward, loss, backward, accumulation,
 *                    optimizer and EMA steps, validation, patience, stop,
 *                    time (epochs recomputed from the mean epoch time)
 *   freeze.c         the frozen layers (freeze)
 *   autobatch.c      batch=-1: the batch for the device's memory
 *
 * Per batch: images -> forward -> the task's loss on the host (value and
 * gradient into the head outputs) -> backward (gradients accumulate) ->
 * every `accumulate` batches: clip to norm 10, optimizer step, EMA update.
 * Per epoch: validation with the EMA weights, results.csv, best fitness,
 * patience, last.ckpt (and best.ckpt). Schedules, groups and EMA follow
 * Ultralytics (parity-facts §6).
 *
 * Checkpoints (DESIGN.md "Checkpoints and resume", parity-facts §8-§9):
 *   resume      `yolo train resume model=<run>/weights/last.ckpt` or
 *               resume=PATH continues that run in <run>, bit-exactly: the
 *               args come from the checkpoint (device, batch, imgsz,
 *               workers, threads and epochs may change), and model, EMA,
 *               optimizer, step counters, pending gradients, best fitness,
 *               history and the sampler position (even mid-epoch) are
 *               restored. A larger epochs extends the schedule.
 *   fine-tune   model=x.ckpt without resume (or pretrained=x.ckpt): the
 *               tensors matching by name and shape are loaded, the rest
 *               (a head for another nc) stay fresh; new run, epoch 0.
 *   stop        SIGINT/SIGTERM finish the current step, write last.ckpt and
 *               return YOLO_ERR_INTERRUPTED (stop.h).
 *
 * DDP (train/ddp.h): under an MPI launcher every rank runs this loop on its
 * part of each global batch; gradients are summed over the ranks before
 * each optimizer step, the logged loss items and the stop request are
 * reduced every batch (so all ranks stop at the same batch), validation is
 * sharded, and rank 0 alone prints, writes the run directory, results.csv
 * and checkpoints. A checkpoint to resume or fine-tune from is read by
 * rank 0 and sent to the others. */
#ifndef YOLO_TRAIN_TRAINER_H
#define YOLO_TRAIN_TRAINER_H

#include <stdio.h>

#include "cli/cli.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "graph/collective.h"
#include "settings/settings.h"
#include "train/checkpoint.h"
#include "train/ddp.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "train/run_plots.h"
#include "train/session.h"
#include "train/train_log.h"
#include "train/validate.h"

typedef struct yolo_shape_count {
    int n, h, w;
    int64_t batches;
} yolo_shape_count;

typedef struct yolo_trainer {
    yolo_session s;              /* s.set: the settings, read once */
    const struct yolo_callbacks *callbacks; /* the host API's events (host/callbacks.h), NULL from the CLI */
    yolo_launch_settings launch; /* read before the checkpoint merge */
    /* the optimizer settings as used: `auto` resolved, or the resumed run's */
    yolo_optim_settings optim;
    bool half_best;              /* best.ckpt in fp16 (the resumed run's choice) */
    yolo_dataset *train_set, *val_set;
    yolo_loader *loader;
    yolo_optimizer *opt;
    yolo_ema *ema;
    yolo_graph_cache graphs;
    void *loss_state;
    float *class_weights;        /* cls_pw > 0: [nc], given to the task context (class_weights.h) */
    yolo_validator validator;
    bool validator_ready;
    yolo_results_csv csv;
    yolo_meta *history; /* results rows for the checkpoints */
    /* the checkpoint resumed or fine-tuned from */
    yolo_ckpt *ck;
    char ckpt_path[1024];     /* the checkpoint resumed ("": none) */
    char weights_from[1024];  /* the checkpoint fine-tuned from ("": none) */
    char model_yaml[1024];    /* the model built ("": the task's default) */
    bool resuming;
    yolo_resume_info ri;
    /* loop state, saved in last.ckpt */
    int start_epoch;
    int64_t first_batch;
    int64_t last_opt_step;
    double best_fitness;
    int best_epoch;
    double loss_sums[YOLO_TASK_MAX_ITEMS]; /* of the epoch being trained */
    /* DDP */
    yolo_dist *dist;
    int rank, world;
    int quiet_stdout;      /* rank > 0: the real stdout, replaced by /dev/null (-1: not muted) */
    yolo_ddp_buckets buckets;
    yolo_graph_collective sync_bn; /* sync_bn=True: batch-norm statistics over the ranks */
    bool stop_agreed;      /* some rank was asked to stop (reduced with every batch) */
    double allreduce_seconds;  /* gradient all-reduce time (its device copies), and the optimizer steps it served */
    double allreduce_copy_seconds;
    int64_t allreduce_steps;
    FILE *step_log;        /* YOLO_STEP_LOG=FILE: every batch's loss items (rank 0; tests compare runs) */
    bool ema_pending;      /* the last optimizer step's EMA update is queued, not counted until its inf check */
    yolo_run_plots plots;  /* plots=True: the run's pictures (rank 0) */
    /* the batch shapes trained on (n, h, w) and how many batches each, for
     * the summary (rect and multi_scale give several); the first 32 kept */
    yolo_shape_count shapes[32];
    int n_shapes;
    bool shapes_more;      /* more distinct shapes than kept */
} yolo_trainer;

/* The run set up (every rank agrees it is, or fails), ready to train. */
yolo_status yolo_trainer_open(yolo_trainer *t, const yolo_mode_context *ctx);
/* Trains from the start position to the last epoch, then the final validation. */
yolo_status yolo_trainer_run(yolo_trainer *t);
void yolo_trainer_close(yolo_trainer *t);

/* ---- between the trainer's files ---- */

/* resume.c */
/* Rank 0 finds the checkpoint to resume (none: ""), every rank merges its
 * args into the configuration. */
yolo_status yolo_trainer_find_resume(yolo_trainer *t, const yolo_mode_context *ctx);
/* The model yaml to build (t->model_yaml): the resumed run's, a fine-tuned
 * checkpoint's (read into t->ck, its path in t->weights_from) or the model
 * key's. */
yolo_status yolo_trainer_model_source(yolo_trainer *t, const yolo_task *task);
/* Resuming, after the settings are read: says what changes, checks epochs and nc. */
yolo_status yolo_trainer_check_resume(yolo_trainer *t);
/* pretrained=x.ckpt (not resuming or fine-tuning): read into t->ck, its
 * path in t->weights_from. */
yolo_status yolo_trainer_open_pretrained(yolo_trainer *t);
/* The resumed run's position, history, best fitness and loss sums. */
yolo_status yolo_trainer_restore_position(yolo_trainer *t);

/* train_loop.c */
/* Reads the last optimizer step's gradient norm if unread (the scaler's
 * inf check) and, with loss scaling, runs that step's EMA update unless
 * the step was skipped. Before the next scaled backward and before
 * anything reads the counters or the EMA (checkpoints, validation). */
yolo_status yolo_trainer_settle_step(yolo_trainer *t);

/* run_dir.c */
/* The resumed run's directory (args.yaml rewritten) or a new one. */
yolo_status yolo_trainer_make_run_dir(yolo_trainer *t);
/* One results row kept for the checkpoints' history. */
yolo_status yolo_trainer_record_row(yolo_trainer *t, int epoch, const float *items, const yolo_val_result *r);
/* last.ckpt (and best.ckpt, epochN.ckpt) after `epoch` (rank 0, save=true). */
yolo_status yolo_trainer_save_epoch(yolo_trainer *t, int epoch, bool is_best, bool finished);
/* Stopped by a signal mid-epoch: last.ckpt at the next batch; the error says how to resume. */
yolo_status yolo_trainer_stop_mid_epoch(yolo_trainer *t, int epoch, int64_t next_batch);

/* autobatch.c */
/* batch=-1, 0 or a fraction: chooses the batch (set.run.batch and the
 * configuration's batch, which args.yaml and checkpoints carry) from the
 * planned training graph and the device's memory; 16 on a backend in host
 * memory, as Ultralytics on a CPU. After the model and EMA exist, before
 * the loader, optimizer and run directory. */
yolo_status yolo_trainer_autobatch(yolo_trainer *t);

/* freeze.c */
/* freeze: the frozen layers' parameters (and always DFL's) get
 * requires_grad=false; call before the optimizer, EMA and graphs exist. */
yolo_status yolo_trainer_apply_freeze(yolo_model *model, const yolo_config_value *freeze);

/* trainer_dist.c */
/* The communicator (a world of one without a launcher); ranks other than
 * 0 print nothing on stdout (their errors still reach stderr). */
yolo_status yolo_trainer_open_dist(yolo_trainer *t, const yolo_config *cfg);
/* sync_bn=True over several ranks, where the backend can all-reduce mid-graph. */
yolo_status yolo_trainer_setup_sync_bn(yolo_trainer *t);
/* Every rank starts from rank 0's weights (model and EMA). */
yolo_status yolo_trainer_start_ranks(yolo_trainer *t);
/* After every batch: loss items averaged and loss summed over the ranks,
 * and whether any rank was asked to stop. */
yolo_status yolo_trainer_reduce_step(yolo_trainer *t, double *loss, float *items);
/* Between epochs: whether any rank was asked to stop. */
yolo_status yolo_trainer_agree_stop(yolo_trainer *t);
/* Restores stdout and closes the communicator. */
void yolo_trainer_close_dist(yolo_trainer *t);

#endif
