/* Where a run starts from (trainer.h): the checkpoint it resumes (its args
 * merged, its position restored) or fine-tunes from, or fresh weights. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/modes.h"
#include "dist/launch.h"
#include "interop/pt_import.h"
#include "train/trainer.h"

static bool is_regular_file(const char *path, double *mtime) {
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
    if (mtime) *mtime = (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec * 1e-9;
    return true;
}

/* The newest <project>/<name>/weights/last.ckpt (a bare `resume`, as Ultralytics). */
static bool newest_last_ckpt(const char *project, const char *task, char *out, size_t size) {
    char dir[512];
    if (project) snprintf(dir, sizeof dir, "%s", project);
    else snprintf(dir, sizeof dir, "runs/%s", task);
    DIR *d = opendir(dir);
    if (!d) return false;
    double best = -1.0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        double mtime = 0;
        if (strlen(dir) + strlen(e->d_name) + 32 > sizeof path) continue;
        snprintf(path, sizeof path, "%s/%s/weights/last.ckpt", dir, e->d_name);
        if (is_regular_file(path, &mtime) && mtime > best) {
            best = mtime;
            snprintf(out, size, "%s", path);
        }
    }
    closedir(d);
    return best >= 0.0;
}

/* The checkpoint to resume from: resume=PATH, or resume with model=x.ckpt,
 * or (model not given) the newest last.ckpt of the project. "" when not
 * resuming. */
static yolo_status resume_path(const yolo_mode_context *ctx, const yolo_launch_settings *l, char *out, size_t size) {
    out[0] = '\0';
    const yolo_config_value *v = &l->resume;
    if (v->kind == YOLO_VALUE_STRING && v->s && v->s[0]) {
        if (!yolo_is_checkpoint_path(v->s))
            return yolo_error(YOLO_ERR_CONFIG, "resume=%s (%s): not a checkpoint; give resume=<run>/weights/last.ckpt",
                              v->s, yolo_config_source(ctx->config, "resume"));
        snprintf(out, size, "%s", v->s);
        return YOLO_OK;
    }
    if (v->kind != YOLO_VALUE_BOOL || !v->b) return YOLO_OK;
    const char *model = l->model;
    if (model && yolo_is_checkpoint_path(model)) {
        snprintf(out, size, "%s", model);
        return YOLO_OK;
    }
    if (model && yolo_config_layer_of(ctx->config, "model") > YOLO_CONFIG_LAYER_TASK)
        return yolo_error(YOLO_ERR_CONFIG, "resume: model=%s (%s) is not a checkpoint; give model=<run>/weights/last.ckpt",
                          model, yolo_config_source(ctx->config, "model"));
    if (!newest_last_ckpt(l->project, ctx->task->name, out, size))
        return yolo_error(YOLO_ERR_CONFIG,
                          "resume: no checkpoint given (model=<run>/weights/last.ckpt or resume=PATH) and no "
                          "runs/%s/*/weights/last.ckpt found",
                          ctx->task->name);
    return YOLO_OK;
}

/* Reads the checkpoint and merges its train args (resumable keys may be
 * overridden from the command line, others must agree). */
static yolo_status resume_config(yolo_trainer *t, const yolo_mode_context *ctx) {
    const char *path = t->ckpt_path;
    yolo_status st = yolo_ddp_read_checkpoint(t->dist, path, &t->ck);
    if (!st) st = yolo_checkpoint_check_task(t->ck, ctx->task);
    if (!st) st = yolo_checkpoint_resume_info(t->ck, &t->ri);
    char *text = NULL;
    size_t len = 0;
    if (!st) st = yolo_checkpoint_args_yaml(t->ck, &text, &len);
    if (!st) st = yolo_config_merge_yaml(ctx->config, YOLO_CONFIG_LAYER_CHECKPOINT, text, len, path, YOLO_CONFIG_RESUME);
    free(text);
    t->resuming = st == YOLO_OK;
    return st;
}

yolo_status yolo_trainer_find_resume(yolo_trainer *t, const yolo_mode_context *ctx) {
    yolo_status st = YOLO_OK;
    if (t->rank == 0) st = resume_path(ctx, &t->launch, t->ckpt_path, sizeof t->ckpt_path); /* the newest run is rank 0's */
    if (!st && yolo_pt_is_path(t->ckpt_path))
        st = yolo_error(YOLO_ERR_UNSUPPORTED,
                        "resume from %s: an Ultralytics .pt is not resumed here (its optimizer moments, schedule "
                        "position and data order are Ultralytics' and cannot be continued exactly); fine-tune from "
                        "it instead: yolo train model=%s (without resume)",
                        t->ckpt_path, t->ckpt_path);
    st = yolo_dist_agree(t->dist, st, "finding the checkpoint to resume");
    if (!st) st = yolo_ddp_share_string(t->dist, t->ckpt_path, sizeof t->ckpt_path, "broadcast(resume path)");
    if (!st && t->ckpt_path[0]) st = resume_config(t, ctx);
    return st;
}

/* Fine-tune: the checkpoint's architecture, rebuilt for this data's nc. */
static yolo_status open_finetune(yolo_trainer *t, const yolo_task *task, const char *path, const char **model_name) {
    yolo_status st = yolo_ddp_read_checkpoint(t->dist, path, &t->ck);
    if (!st) st = yolo_checkpoint_check_task(t->ck, task);
    char what[1200];
    snprintf(what, sizeof what, "meta.yaml of %s", path);
    if (!st) st = yolo_meta_get_str(yolo_ckpt_meta(t->ck), "model_name", what, model_name);
    return st;
}

static void copy_name(char *out, size_t size, const char *name) { snprintf(out, size, "%s", name ? name : ""); }

yolo_status yolo_trainer_model_source(yolo_trainer *t, const yolo_task *task) {
    t->weights_from[0] = '\0';
    if (t->resuming) {
        copy_name(t->model_yaml, sizeof t->model_yaml, t->ri.model_name);
        return YOLO_OK;
    }
    /* not resuming: no checkpoint was merged since the launch settings were read */
    copy_name(t->model_yaml, sizeof t->model_yaml, t->launch.model);
    if (!yolo_is_checkpoint_path(t->launch.model)) return YOLO_OK;
    copy_name(t->weights_from, sizeof t->weights_from, t->launch.model);
    const char *model = NULL;
    yolo_status st = open_finetune(t, task, t->weights_from, &model);
    copy_name(t->model_yaml, sizeof t->model_yaml, model);
    return st;
}

yolo_status yolo_trainer_open_pretrained(yolo_trainer *t) {
    const yolo_config_value *pre = &t->s.set.checkpoint.pretrained;
    if (t->resuming || t->ck || pre->kind != YOLO_VALUE_STRING || !yolo_is_checkpoint_path(pre->s)) return YOLO_OK;
    copy_name(t->weights_from, sizeof t->weights_from, pre->s);
    yolo_status st = yolo_ddp_read_checkpoint(t->dist, pre->s, &t->ck);
    if (!st) st = yolo_checkpoint_check_task(t->ck, t->s.task);
    return st;
}

/* The epochs asked for against the checkpoint's: a finished run needs a
 * larger epochs; a different one re-plans the schedule (said so). */
static yolo_status check_resume_epochs(yolo_trainer *t) {
    int epochs = t->s.set.optim.epochs;
    const char *was_text = yolo_checkpoint_arg(t->ck, "epochs");
    int was = was_text ? atoi(was_text) : epochs;
    const yolo_resume_info *ri = &t->ri;
    int64_t done = ri->sampler_epoch; /* whole epochs trained */
    bool finished = ri->finished || (ri->sampler_batch == 0 && done >= was);
    const char *path = yolo_ckpt_path(t->ck);
    if (finished && epochs <= was)
        return yolo_error(YOLO_ERR_CONFIG,
                          "%s: training already finished (%lld of epochs=%d%s); nothing to resume. Give a larger "
                          "epochs= to train on (e.g. resume epochs=%d), or fine-tune from it with model=%s "
                          "without resume",
                          path, (long long)done, was, done < was ? ", stopped early" : "", was + 10, path);
    if (epochs <= done)
        return yolo_error(YOLO_ERR_CONFIG, "epochs=%d (%s): %s has already trained %lld epochs", epochs,
                          yolo_config_source(t->s.cfg, "epochs"), path, (long long)done);
    if (epochs != was)
        printf("Resuming with epochs %d (was %d): the learning-rate schedule is recomputed for %d epochs from epoch "
               "%lld on\n",
               epochs, was, epochs, (long long)done + 1);
    return YOLO_OK;
}

/* The resumable keys that changed ("Resuming with batch 8 (was 16)"). */
static void report_resume_changes(const yolo_trainer *t) {
    static const char *const keys[] = {"batch", "imgsz", "device", "workers", "threads", "world"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *was = yolo_checkpoint_arg(t->ck, keys[i]);
        char now[256];
        if (!was || yolo_config_format(t->s.cfg, keys[i], now, sizeof now) != YOLO_OK) continue;
        if (strcmp(was, now) != 0) printf("Resuming with %s %s (was %s)\n", keys[i], now, was);
    }
}

yolo_status yolo_trainer_check_resume(yolo_trainer *t) {
    printf("Resuming training from %s: epoch %lld, batch %lld (optimizer steps %lld, EMA updates %lld)\n",
           t->ckpt_path, (long long)t->ri.sampler_epoch + 1, (long long)t->ri.sampler_batch,
           (long long)t->ri.optimizer_steps, (long long)t->ri.ema_updates);
    report_resume_changes(t);
    yolo_status st = check_resume_epochs(t);
    fflush(stdout); /* before an error goes to stderr */
    if (!st && t->ri.nc != t->s.data.nc)
        st = yolo_error(YOLO_ERR_CONFIG, "%s was trained for %lld classes; data=%s has %d", t->ckpt_path,
                        (long long)t->ri.nc, t->s.data.source, t->s.data.nc);
    return st;
}

yolo_status yolo_trainer_restore_position(yolo_trainer *t) {
    const yolo_meta *rows = yolo_meta_get(yolo_ckpt_meta(t->ck), "results");
    if (!(t->history = yolo_meta_new_map())) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_status st = YOLO_OK;
    if (rows && (st = yolo_meta_set_copy(t->history, "results", rows))) return st;
    int kept = 0, want = (int)yolo_meta_size(rows);
    st = t->rank == 0 ? yolo_results_csv_resume(&t->csv, t->s.run_dir, t->s.hooks, want, &kept) : YOLO_OK;
    if (st) return st;
    if (kept < want && t->rank == 0) printf("%s had %d of the checkpoint's %d rows; it continues from there\n", t->csv.path, kept, want);
    t->start_epoch = (int)t->ri.sampler_epoch;
    t->first_batch = t->ri.sampler_batch;
    t->last_opt_step = t->ri.last_opt_step;
    t->best_fitness = t->ri.best_fitness;
    t->best_epoch = (int)t->ri.best_epoch;
    for (int i = 0; i < t->ri.n_loss_sums && i < YOLO_TASK_MAX_ITEMS; i++) t->loss_sums[i] = t->ri.loss_sums[i];
    int batch = t->s.set.run.batch;
    if (t->ri.batch != batch) {
        /* the position counted in batches of the old size: continue at the same sample (rounded down) */
        int64_t nb = yolo_loader_num_batches(t->loader);
        t->first_batch = t->first_batch * t->ri.batch / batch;
        if (t->first_batch > nb) t->first_batch = nb;
        t->last_opt_step = nb * t->start_epoch + t->first_batch - 1;
        if (t->ri.sampler_batch > 0)
            printf("Resuming mid-epoch at batch %lld of %lld (batch %lld of size %lld before)\n",
                   (long long)t->first_batch, (long long)nb, (long long)t->ri.sampler_batch, (long long)t->ri.batch);
    }
    return YOLO_OK;
}

yolo_status yolo_train_launch_world(const yolo_mode_context *ctx, int *world) {
    yolo_status st = yolo_dist_requested_world(ctx->config, world);
    bool given = yolo_config_layer_of(ctx->config, "world") > YOLO_CONFIG_LAYER_TASK ||
                 yolo_config_layer_of(ctx->config, "device") > YOLO_CONFIG_LAYER_TASK;
    yolo_launch_settings launch;
    char path[1024] = "";
    if (st || given || yolo_settings_fill_launch(ctx->config, &launch) != YOLO_OK ||
        resume_path(ctx, &launch, path, sizeof path) != YOLO_OK || !path[0]) {
        yolo_error_clear(); /* a bad resume path is reported by the trainer itself */
        return st;
    }
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read_meta(path, &ck) == YOLO_OK) { /* resume on the ranks the run had */
        const char *w = yolo_checkpoint_arg(ck, "world"), *device = yolo_checkpoint_arg(ck, "device");
        *world = yolo_dist_world_of(w ? atoi(w) : 1, device && strcmp(device, "null") ? device : NULL);
    }
    yolo_ckpt_free(ck);
    yolo_error_clear();
    return YOLO_OK;
}
