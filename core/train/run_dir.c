/* The run directory of a training run (trainer.h): a new one or the
 * resumed run's, and what rank 0 writes into it: last.ckpt, best.ckpt,
 * epochN.ckpt with the results history they carry. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "train/stop.h"
#include "train/trainer.h"

/* <run> of <run>/weights/last.ckpt; false if the checkpoint is not in a weights folder. */
static bool run_dir_of(const char *ckpt, char *out, size_t size) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", ckpt);
    char *slash = strrchr(buf, '/');
    if (!slash) return false;
    *slash = '\0';
    const char *folder = strrchr(buf, '/');
    folder = folder ? folder + 1 : buf;
    if (strcmp(folder, "weights") != 0) return false;
    if (folder == buf) snprintf(out, size, ".");
    else {
        buf[folder - buf - 1] = '\0';
        snprintf(out, size, "%s", buf[0] ? buf : "/");
    }
    return true;
}

yolo_status yolo_trainer_make_run_dir(yolo_trainer *t) {
    yolo_status st = YOLO_OK;
    if (t->resuming && run_dir_of(t->ckpt_path, t->s.run_dir, sizeof t->s.run_dir)) {
        st = t->rank == 0 ? yolo_session_lock_run_dir(&t->s) : YOLO_OK;
        if (!st && t->rank == 0) st = yolo_config_save_args(t->s.cfg, t->s.run_dir);
    } else if (t->rank == 0)
        st = yolo_session_make_run_dir(&t->s);
    return yolo_dist_agree(t->dist, st, "creating the run directory");
}

yolo_status yolo_trainer_record_row(yolo_trainer *t, int epoch, const float *items, const yolo_val_result *r) {
    if (!t->history && !(t->history = yolo_meta_new_map())) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_meta *rows = yolo_meta_get_mut(t->history, "results");
    if (!rows && !(rows = yolo_meta_set_list(t->history, "results"))) return YOLO_ERR_NOMEM;
    yolo_meta *row = yolo_meta_append_map(rows);
    if (!row) return YOLO_ERR_NOMEM;
    const yolo_task_hooks *h = t->s.hooks;
    yolo_status st = yolo_meta_set_int(row, "epoch", epoch + 1);
    char key[128];
    for (int i = 0; i < h->n_loss_items && !st; i++) {
        snprintf(key, sizeof key, "train/%s", h->loss_names[i]);
        st = yolo_meta_set_float(row, key, items[i]);
    }
    for (int i = 0; i < h->n_metrics && !st; i++) st = yolo_meta_set_float(row, h->metric_names[i], r->metrics[i]);
    if (!st) st = yolo_meta_set_float(row, "fitness", r->fitness);
    return st;
}

/* The trainer's state for a checkpoint: `completed` epochs done (0-based
 * index of the last), the sampler at (s_epoch, s_batch). */
static yolo_train_state make_state(const yolo_trainer *t, int64_t completed, int64_t s_epoch, int64_t s_batch,
                                   bool finished) {
    int64_t nb = yolo_loader_num_batches(t->loader);
    yolo_train_state state = {.session = &t->s, .model = t->s.model, .ema = t->ema, .opt = t->opt,
                              .epoch = completed, .best_fitness = t->best_fitness,
                              .results = yolo_meta_get(t->history, "results"),
                              .sampler_epoch = s_epoch, .sampler_batch = s_batch,
                              .last_opt_step = t->last_opt_step, .best_epoch = t->best_epoch,
                              .lr0 = t->optim.lr0, .momentum = t->optim.momentum,
                              .warmup_bias_lr = t->optim.warmup_bias_lr,
                              /* a backward pass since the last optimizer step: its gradients are pending */
                              .grads = s_epoch * nb + s_batch - 1 > t->last_opt_step,
                              .finished = finished,
                              .best_half = t->half_best,
                              .n_loss_sums = s_batch > 0 ? t->s.hooks->n_loss_items : 0,
                              .loss_sums = t->loss_sums};
    return state;
}

static yolo_status weights_dir(const yolo_trainer *t, char *path, size_t size) {
    snprintf(path, size, "%s/weights", t->s.run_dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return yolo_error(YOLO_ERR_IO, "%s: cannot create (%s)", path, strerror(errno));
    return YOLO_OK;
}

yolo_status yolo_trainer_stop_mid_epoch(yolo_trainer *t, int epoch, int64_t next_batch) {
    char path[1200] = "";
    yolo_status st = yolo_trainer_settle_step(t);
    bool save = t->s.set.checkpoint.save;
    if (!st && save && t->rank == 0) {
        yolo_train_state state = make_state(t, epoch - 1, epoch, next_batch, false);
        st = weights_dir(t, path, sizeof path);
        snprintf(path, sizeof path, "%s/weights/last.ckpt", t->s.run_dir);
        if (!st) st = yolo_train_save_checkpoint(path, &state, false);
    }
    if (st) return st;
    if (t->rank > 0)
        return yolo_error(YOLO_ERR_INTERRUPTED, "training stopped at epoch %d, batch %lld (asked on some rank); rank 0 "
                          "writes last.ckpt", epoch + 1, (long long)next_batch);
    if (!save)
        return yolo_error(YOLO_ERR_INTERRUPTED, "training stopped by %s at epoch %d, batch %lld (save=false: no checkpoint written)",
                          yolo_stop_reason(), epoch + 1, (long long)next_batch);
    return yolo_error(YOLO_ERR_INTERRUPTED,
                      "training stopped by %s at epoch %d, batch %lld; %s saved: continue with 'yolo %s train resume "
                      "model=%s'",
                      yolo_stop_reason(), epoch + 1, (long long)next_batch, path, t->s.task->name, path);
}

yolo_status yolo_trainer_save_epoch(yolo_trainer *t, int epoch, bool is_best, bool finished) {
    const yolo_checkpoint_settings *c = &t->s.set.checkpoint;
    if (!c->save || t->rank > 0) return YOLO_OK;
    yolo_train_state state = make_state(t, epoch, epoch + 1, 0, finished);
    char path[1200];
    yolo_status st = weights_dir(t, path, sizeof path);
    snprintf(path, sizeof path, "%s/weights/last.ckpt", t->s.run_dir);
    if (!st) st = yolo_train_save_checkpoint(path, &state, false);
    if (!st && is_best) {
        snprintf(path, sizeof path, "%s/weights/best.ckpt", t->s.run_dir);
        st = yolo_train_save_checkpoint(path, &state, t->half_best);
    }
    if (!st && c->save_period > 0 && (epoch + 1) % c->save_period == 0) {
        snprintf(path, sizeof path, "%s/weights/epoch%d.ckpt", t->s.run_dir, epoch + 1);
        st = yolo_train_save_checkpoint(path, &state, false);
    }
    return st;
}
