/* `yolo train`: the task-agnostic training loop of DESIGN.md.
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/modes.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "train/checkpoint.h"
#include "dist/launch.h"
#include "graph/collective.h"
#include "train/ddp.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "train/run_plots.h"
#include "train/schedule.h"
#include "train/session.h"
#include "train/stop.h"
#include "train/train_log.h"
#include "train/validate.h"

typedef struct train_args {
    int epochs, patience, nbs, close_mosaic;
    double lr0, lrf, momentum, weight_decay, warmup_epochs, warmup_momentum, warmup_bias_lr;
    bool cos_lr, val, save, half_best;
    int save_period;
    const char *optimizer;
    const char *cache;
    const char *split;
} train_args;

static yolo_status read_args(const yolo_config *cfg, train_args *a) {
    yolo_status st = YOLO_OK;
    a->epochs = (int)yolo_cfg_int(cfg, "epochs", &st);
    a->patience = (int)yolo_cfg_int(cfg, "patience", &st);
    a->nbs = (int)yolo_cfg_int(cfg, "nbs", &st);
    a->close_mosaic = (int)yolo_cfg_int(cfg, "close_mosaic", &st);
    a->lr0 = yolo_cfg_float(cfg, "lr0", &st);
    a->lrf = yolo_cfg_float(cfg, "lrf", &st);
    a->momentum = yolo_cfg_float(cfg, "momentum", &st);
    a->weight_decay = yolo_cfg_float(cfg, "weight_decay", &st);
    a->warmup_epochs = yolo_cfg_float(cfg, "warmup_epochs", &st);
    a->warmup_momentum = yolo_cfg_float(cfg, "warmup_momentum", &st);
    a->warmup_bias_lr = yolo_cfg_float(cfg, "warmup_bias_lr", &st);
    a->cos_lr = yolo_cfg_bool(cfg, "cos_lr", &st);
    a->val = yolo_cfg_bool(cfg, "val", &st);
    a->save = yolo_cfg_bool(cfg, "save", &st);
    a->save_period = (int)yolo_cfg_int(cfg, "save_period", &st);
    /* best.ckpt stores the EMA in fp16 unless half=False is given explicitly */
    a->half_best = yolo_cfg_bool(cfg, "half", &st) || yolo_config_layer_of(cfg, "half") == YOLO_CONFIG_LAYER_DEFAULT;
    a->optimizer = yolo_cfg_string(cfg, "optimizer", &st);
    a->split = yolo_cfg_string(cfg, "split", &st);
    yolo_config_value cache = {0};
    if (!st) st = yolo_config_get(cfg, "cache", &cache);
    a->cache = cache.kind == YOLO_VALUE_STRING ? cache.s : (cache.kind == YOLO_VALUE_BOOL && cache.b ? "ram" : NULL);
    if (st) return st;
    if (a->epochs < 1) return yolo_error(YOLO_ERR_CONFIG, "epochs=%d: must be >= 1", a->epochs);
    if (a->nbs < 1) return yolo_error(YOLO_ERR_CONFIG, "nbs=%d: must be >= 1", a->nbs);
    if (a->cache && strcmp(a->cache, "ram") != 0)
        return yolo_error(YOLO_ERR_CONFIG, "cache=%s: only cache=ram (or true) is built", a->cache);
    return YOLO_OK;
}

void yolo_augment_from_config(const yolo_config *cfg, int imgsz, yolo_augment_params *p, yolo_status *st);
void yolo_augment_from_config(const yolo_config *cfg, int imgsz, yolo_augment_params *p, yolo_status *st) {
    yolo_augment_defaults(p);
    p->imgsz = imgsz;
    p->hsv_h = (float)yolo_cfg_float(cfg, "hsv_h", st);
    p->hsv_s = (float)yolo_cfg_float(cfg, "hsv_s", st);
    p->hsv_v = (float)yolo_cfg_float(cfg, "hsv_v", st);
    p->degrees = (float)yolo_cfg_float(cfg, "degrees", st);
    p->translate = (float)yolo_cfg_float(cfg, "translate", st);
    p->scale = (float)yolo_cfg_float(cfg, "scale", st);
    p->shear = (float)yolo_cfg_float(cfg, "shear", st);
    p->perspective = (float)yolo_cfg_float(cfg, "perspective", st);
    p->flipud = (float)yolo_cfg_float(cfg, "flipud", st);
    p->fliplr = (float)yolo_cfg_float(cfg, "fliplr", st);
    p->mosaic = (float)yolo_cfg_float(cfg, "mosaic", st);
    p->mixup = (float)yolo_cfg_float(cfg, "mixup", st);
    p->close_mosaic = (int)yolo_cfg_int(cfg, "close_mosaic", st);
    p->erasing = (float)yolo_cfg_float(cfg, "erasing", st);
    p->crop_fraction = (float)yolo_cfg_float(cfg, "crop_fraction", st);
}

/* Ultralytics' optimizer=auto, and the explicit choices that are built. */
static yolo_status choose_optimizer(train_args *a, int64_t n_train, int batch, int nc, yolo_optimizer_kind *kind) {
    const char *name = a->optimizer ? a->optimizer : "auto";
    if (strcasecmp(name, "auto") == 0) {
        int64_t per_epoch = (n_train + (batch > a->nbs ? batch : a->nbs) - 1) / (batch > a->nbs ? batch : a->nbs);
        if (per_epoch * a->epochs > 10000) {
            *kind = YOLO_OPTIMIZER_SGD;
            a->lr0 = 0.01;
            a->momentum = 0.9;
        } else {
            *kind = YOLO_OPTIMIZER_ADAMW;
            a->lr0 = round(0.002 * 5.0 / (4.0 + nc) * 1e6) / 1e6;
            a->momentum = 0.9;
            a->warmup_bias_lr = 0.0;
        }
        printf("optimizer: 'optimizer=auto' found, determining best 'optimizer', 'lr0' and 'momentum' "
               "automatically...\n");
        return YOLO_OK;
    }
    if (strcasecmp(name, "SGD") == 0) *kind = YOLO_OPTIMIZER_SGD;
    else if (strcasecmp(name, "AdamW") == 0) *kind = YOLO_OPTIMIZER_ADAMW;
    else return yolo_error(YOLO_ERR_CONFIG, "optimizer=%s: not built yet (built: auto, SGD, AdamW)", name);
    return YOLO_OK;
}

typedef struct trainer {
    yolo_session s;
    train_args a;
    yolo_dataset *train_set, *val_set;
    yolo_loader *loader;
    yolo_optimizer *opt;
    yolo_ema *ema;
    yolo_graph_cache graphs;
    void *loss_state;
    yolo_validator validator;
    bool validator_ready;
    yolo_results_csv csv;
    yolo_meta *history; /* results rows for the checkpoints */
    /* the checkpoint resumed or fine-tuned from */
    yolo_ckpt *ck;
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
    yolo_run_plots plots;  /* plots=True: the run's pictures (rank 0) */
} trainer;

static yolo_status open_datasets(trainer *t) {
    yolo_dataset_options dopt = {.threads = t->s.workers > 0 ? t->s.workers : 1};
    yolo_split val_split = YOLO_SPLIT_VAL;
    if (t->a.split && strcmp(t->a.split, "test") == 0) val_split = YOLO_SPLIT_TEST;
    if (t->a.split && strcmp(t->a.split, "train") == 0) val_split = YOLO_SPLIT_TRAIN;
    yolo_status st = yolo_dataset_open(&t->s.data, YOLO_SPLIT_TRAIN, &t->s.hooks->data, &dopt, &t->train_set);
    if (!st) st = yolo_dataset_open(&t->s.data, val_split, &t->s.hooks->data, &dopt, &t->val_set);
    if (st) return st;
    char line[256];
    yolo_dataset_summary(t->train_set, line, sizeof line);
    printf("%s\n", line);
    yolo_dataset_summary(t->val_set, line, sizeof line);
    printf("%s\n", line);
    if (t->train_set->n == 0) return yolo_error(YOLO_ERR_FORMAT, "train: no usable images in data=%s", t->s.data.source);
    return YOLO_OK;
}

static void trainer_close(trainer *t) {
    yolo_run_plots_close(&t->plots, NULL, 0, 0);
    if (t->step_log) fclose(t->step_log);
    yolo_ddp_buckets_free(&t->buckets);
    yolo_meta_free(t->history);
    if (t->validator_ready) yolo_validator_release(&t->validator);
    if (t->loss_state) t->s.hooks->loss_destroy(t->loss_state);
    yolo_graph_cache_clear(&t->graphs);
    yolo_ema_free(t->ema);
    yolo_optimizer_free(t->opt);
    yolo_loader_free(t->loader);
    yolo_dataset_free(t->train_set);
    yolo_dataset_free(t->val_set);
    yolo_ckpt_free(t->ck);
    yolo_session_close(&t->s);
    yolo_dist_close(t->dist);
    if (t->quiet_stdout >= 0) {
        fflush(stdout);
        dup2(t->quiet_stdout, STDOUT_FILENO);
        close(t->quiet_stdout);
    }
}

static bool is_regular_file(const char *path, double *mtime) {
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
    if (mtime) *mtime = (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec * 1e-9;
    return true;
}

/* The newest <project>/<name>/weights/last.ckpt (a bare `resume`, as Ultralytics). */
static bool newest_last_ckpt(const yolo_config *cfg, const char *task, char *out, size_t size) {
    yolo_status st = YOLO_OK;
    const char *project = yolo_cfg_string(cfg, "project", &st);
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
static yolo_status resume_path(const yolo_mode_context *ctx, char *out, size_t size) {
    out[0] = '\0';
    yolo_config_value v = {0};
    yolo_status st = yolo_config_get(ctx->config, "resume", &v);
    if (st) return st;
    if (v.kind == YOLO_VALUE_STRING && v.s && v.s[0]) {
        if (!yolo_is_checkpoint_path(v.s))
            return yolo_error(YOLO_ERR_CONFIG, "resume=%s (%s): not a checkpoint; give resume=<run>/weights/last.ckpt",
                              v.s, yolo_config_source(ctx->config, "resume"));
        snprintf(out, size, "%s", v.s);
        return YOLO_OK;
    }
    if (v.kind != YOLO_VALUE_BOOL || !v.b) return YOLO_OK;
    const char *model = yolo_cfg_string(ctx->config, "model", &st);
    if (st) return st;
    if (model && yolo_is_checkpoint_path(model)) {
        snprintf(out, size, "%s", model);
        return YOLO_OK;
    }
    if (model && yolo_config_layer_of(ctx->config, "model") > YOLO_CONFIG_LAYER_TASK)
        return yolo_error(YOLO_ERR_CONFIG, "resume: model=%s (%s) is not a checkpoint; give model=<run>/weights/last.ckpt",
                          model, yolo_config_source(ctx->config, "model"));
    if (!newest_last_ckpt(ctx->config, ctx->task->name, out, size))
        return yolo_error(YOLO_ERR_CONFIG,
                          "resume: no checkpoint given (model=<run>/weights/last.ckpt or resume=PATH) and no "
                          "runs/%s/*/weights/last.ckpt found",
                          ctx->task->name);
    return YOLO_OK;
}

/* Reads the checkpoint and merges its train args (resumable keys may be
 * overridden from the command line, others must agree). */
static yolo_status resume_config(trainer *t, const yolo_mode_context *ctx, const char *path) {
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

/* The epochs asked for against the checkpoint's: a finished run needs a
 * larger epochs; a different one re-plans the schedule (said so). */
static yolo_status check_resume_epochs(trainer *t) {
    const char *was_text = yolo_checkpoint_arg(t->ck, "epochs");
    int was = was_text ? atoi(was_text) : t->a.epochs;
    const yolo_resume_info *ri = &t->ri;
    int64_t done = ri->sampler_epoch; /* whole epochs trained */
    bool finished = ri->finished || (ri->sampler_batch == 0 && done >= was);
    const char *path = yolo_ckpt_path(t->ck);
    if (finished && t->a.epochs <= was)
        return yolo_error(YOLO_ERR_CONFIG,
                          "%s: training already finished (%lld of epochs=%d%s); nothing to resume. Give a larger "
                          "epochs= to train on (e.g. resume epochs=%d), or fine-tune from it with model=%s "
                          "without resume",
                          path, (long long)done, was, done < was ? ", stopped early" : "", was + 10, path);
    if (t->a.epochs <= done)
        return yolo_error(YOLO_ERR_CONFIG, "epochs=%d (%s): %s has already trained %lld epochs", t->a.epochs,
                          yolo_config_source(t->s.cfg, "epochs"), path, (long long)done);
    if (t->a.epochs != was)
        printf("Resuming with epochs %d (was %d): the learning-rate schedule is recomputed for %d epochs from epoch "
               "%lld on\n",
               t->a.epochs, was, t->a.epochs, (long long)done + 1);
    return YOLO_OK;
}

/* The resumable keys that changed ("Resuming with batch 8 (was 16)"). */
static void report_resume_changes(const trainer *t) {
    static const char *const keys[] = {"batch", "imgsz", "device", "workers", "threads", "world"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *was = yolo_checkpoint_arg(t->ck, keys[i]);
        char now[256];
        if (!was || yolo_config_format(t->s.cfg, keys[i], now, sizeof now) != YOLO_OK) continue;
        if (strcmp(was, now) != 0) printf("Resuming with %s %s (was %s)\n", keys[i], now, was);
    }
}

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

/* Fine-tune: the checkpoint's architecture, rebuilt for this data's nc. */
static yolo_status open_finetune(trainer *t, const char *path, const char **model_name) {
    yolo_status st = yolo_ddp_read_checkpoint(t->dist, path, &t->ck);
    if (!st) st = yolo_checkpoint_check_task(t->ck, t->s.task);
    char what[1200];
    snprintf(what, sizeof what, "meta.yaml of %s", path);
    if (!st) st = yolo_meta_get_str(yolo_ckpt_meta(t->ck), "model_name", what, model_name);
    return st;
}

static yolo_status transfer_weights(trainer *t, const char *path) {
    size_t transferred = 0, total = 0;
    yolo_status st = yolo_checkpoint_transfer(t->ck, t->s.model, &transferred, &total);
    if (!st) printf("Transferred %zu/%zu items from %s\n", transferred, total, path);
    return st;
}

static yolo_status sync_bn_allreduce(void *dist, double *data, int64_t n, const char *what) {
    return yolo_dist_allreduce_f64(dist, data, n, YOLO_DIST_SUM, what);
}

/* DDP: the communicator (a world of one without a launcher); ranks other
 * than 0 print nothing on stdout (their errors still reach stderr). */
static yolo_status open_dist(trainer *t, const yolo_mode_context *ctx) {
    yolo_config_value timeout = {0}, world = {0};
    yolo_status st = yolo_config_get(ctx->config, "dist_timeout", &timeout);
    if (!st) st = yolo_config_get(ctx->config, "world", &world);
    if (!st) st = yolo_dist_open(timeout.kind == YOLO_VALUE_FLOAT ? timeout.f : 300.0, &t->dist);
    if (st) return st;
    t->rank = yolo_dist_rank(t->dist);
    t->world = yolo_dist_world(t->dist);
    if (world.kind == YOLO_VALUE_INT && world.i > 1 && world.i != t->world)
        return yolo_error(YOLO_ERR_CONFIG, "world=%lld (%s) but the launcher started %d ranks", (long long)world.i,
                          yolo_config_source(ctx->config, "world"), t->world);
    if (t->rank > 0) {
        fflush(stdout);
        int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        t->quiet_stdout = null_fd >= 0 ? dup(STDOUT_FILENO) : -1;
        if (t->quiet_stdout >= 0) dup2(null_fd, STDOUT_FILENO);
        if (null_fd >= 0) close(null_fd);
    }
    if (t->world > 1)
        printf("DDP: %d ranks (%s), dist_timeout=%gs\n", t->world, yolo_dist_env_detect().launcher,
               timeout.kind == YOLO_VALUE_FLOAT ? timeout.f : 300.0);
    return YOLO_OK;
}

static yolo_status setup(trainer *t, const yolo_mode_context *ctx) {
    t->last_opt_step = -1;
    t->best_fitness = -1.0;
    t->best_epoch = -1;
    char ckpt_path[1024] = "";
    yolo_status st = open_dist(t, ctx);
    if (st) return st;
    if (t->rank == 0) st = resume_path(ctx, ckpt_path, sizeof ckpt_path); /* the newest run is rank 0's */
    st = yolo_dist_agree(t->dist, st, "finding the checkpoint to resume");
    if (!st) st = yolo_ddp_share_string(t->dist, ckpt_path, sizeof ckpt_path, "broadcast(resume path)");
    if (!st && ckpt_path[0]) st = resume_config(t, ctx, ckpt_path);
    if (!st) st = yolo_session_open(ctx, &t->s, true, t->dist);
    if (!st) st = read_args(t->s.cfg, &t->a);
    if (!st && t->s.batch % t->world)
        st = yolo_error(YOLO_ERR_CONFIG, "batch=%d (%s) is the global batch: it must be a multiple of the %d ranks",
                        t->s.batch, yolo_config_source(t->s.cfg, "batch"), t->world);
    if (st) return st;
    const char *model = yolo_cfg_string(t->s.cfg, "model", &st);
    const char *finetune = NULL; /* the checkpoint weights are transferred from */
    if (t->resuming) {
        printf("Resuming training from %s: epoch %lld, batch %lld (optimizer steps %lld, EMA updates %lld)\n",
               ckpt_path, (long long)t->ri.sampler_epoch + 1, (long long)t->ri.sampler_batch,
               (long long)t->ri.optimizer_steps, (long long)t->ri.ema_updates);
        report_resume_changes(t);
        st = check_resume_epochs(t);
        fflush(stdout); /* before an error goes to stderr */
        model = t->ri.model_name;
        if (!st && t->ri.nc != t->s.data.nc)
            st = yolo_error(YOLO_ERR_CONFIG, "%s was trained for %lld classes; data=%s has %d", ckpt_path,
                            (long long)t->ri.nc, t->s.data.source, t->s.data.nc);
    } else if (yolo_is_checkpoint_path(model)) {
        finetune = model;
        st = open_finetune(t, model, &model);
    } else {
        yolo_config_value pre = {0};
        if (yolo_config_get(t->s.cfg, "pretrained", &pre) == YOLO_OK && pre.kind == YOLO_VALUE_STRING &&
            yolo_is_checkpoint_path(pre.s)) {
            finetune = pre.s;
            st = yolo_ddp_read_checkpoint(t->dist, pre.s, &t->ck);
            if (!st) st = yolo_checkpoint_check_task(t->ck, t->s.task);
        }
    }
    if (!st) st = yolo_session_build_model(&t->s, model, &t->s.model);
    if (!st && finetune) st = transfer_weights(t, finetune);
    if (st) return st;
    t->s.tctx.model = t->s.model;
    yolo_model *ema_model = NULL;
    st = yolo_session_build_model(&t->s, model, &ema_model);
    if (!st) st = yolo_ema_create(t->s.model, ema_model, &t->ema);
    if (st) return st;
    if (t->resuming && run_dir_of(ckpt_path, t->s.run_dir, sizeof t->s.run_dir))
        st = t->rank == 0 ? yolo_config_save_args(t->s.cfg, t->s.run_dir) : YOLO_OK;
    else if (t->rank == 0)
        st = yolo_session_make_run_dir(&t->s);
    st = yolo_dist_agree(t->dist, st, "creating the run directory");
    if (!st) st = open_datasets(t);
    if (st) return st;

    yolo_loader_options lo = {.batch = t->s.batch / t->world, .workers = t->s.workers, .rank = t->rank,
                              .world = t->world, .seed = t->s.seed,
                              .augment = true, .shuffle = true, .epochs = t->a.epochs,
                              .cache_ram = t->a.cache != NULL};
    yolo_augment_from_config(t->s.cfg, t->s.imgsz, &lo.aug, &st);
    if (!st) st = yolo_loader_create(t->train_set, &lo, &t->loader);
    if (st) return st;

    yolo_optimizer_kind kind = YOLO_OPTIMIZER_SGD;
    if (t->resuming) { /* the run's optimizer, `auto` resolved as it was */
        kind = t->ri.optimizer;
        t->a.lr0 = t->ri.lr0;
        t->a.momentum = t->ri.momentum;
        t->a.warmup_bias_lr = t->ri.warmup_bias_lr;
        t->a.half_best = t->ri.best_half; /* `half` now comes from the checkpoint layer */
    } else {
        st = choose_optimizer(&t->a, t->train_set->n, t->s.batch, t->s.data.nc, &kind);
    }
    int accumulate = (int)fmax(round((double)t->a.nbs / t->s.batch), 1.0);
    double wd = t->a.weight_decay * t->s.batch * accumulate / t->a.nbs;
    if (!st) st = yolo_optimizer_create(t->s.model, kind, (float)t->a.lr0, (float)t->a.momentum, (float)wd, &t->opt);
    if (st) return st;
    char desc[256];
    yolo_optimizer_describe(t->opt, desc, sizeof desc);
    printf("optimizer: %s\n", desc);
    if (t->resuming) st = yolo_checkpoint_restore(t->ck, &t->ri, t->s.model, t->ema, t->opt);
    if (st) return st;

    t->graphs.model = t->s.model;
    t->graphs.training = true;
    bool sync_bn = yolo_cfg_bool(t->s.cfg, "sync_bn", &st);
    if (!st && sync_bn && t->world > 1) {
        if (strncmp(yolo_backend_name(t->s.backend), "cpu", 3) != 0)
            return yolo_error(YOLO_ERR_UNSUPPORTED, "sync_bn=True (%s): synchronised batch norm runs on the CPU backend "
                              "only (a recorded %s command buffer cannot all-reduce mid-graph); train with sync_bn=False",
                              yolo_config_source(t->s.cfg, "sync_bn"), yolo_backend_name(t->s.backend));
        t->sync_bn = (yolo_graph_collective){t->world, sync_bn_allreduce, t->dist};
        t->graphs.collective = &t->sync_bn;
    }
    if (st) return st;
    if (t->world > 1) {
        t->s.tctx.rank_mean = yolo_ddp_rank_mean;
        t->s.tctx.dist = t->dist;
    }
    st = t->s.hooks->loss_create(&t->s.tctx, &t->loss_state);
    if (st) return st;
    yolo_validator_init(&t->validator, t->s.hooks, &t->s.tctx, t->val_set, t->ema->ema, t->s.batch * 2,
                        t->s.workers, t->s.imgsz, t->s.seed);
    t->validator_ready = true;
    t->validator.dist = t->dist;
    t->validator.task = t->s.task;
    bool plots = yolo_cfg_bool(t->s.cfg, "plots", &st);
    if (st) return st;
    yolo_run_plots_open(&t->plots, plots && t->rank == 0, t->s.run_dir, &t->s.tctx);
    if (!t->resuming) yolo_run_plots_labels(&t->plots, t->train_set);
    const char *step_log = getenv("YOLO_STEP_LOG");
    if (step_log && *step_log && t->rank == 0 && !(t->step_log = fopen(step_log, "a")))
        return yolo_error(YOLO_ERR_IO, "YOLO_STEP_LOG=%s: cannot open (%s)", step_log, strerror(errno));
    if (!t->resuming) return t->rank == 0 ? yolo_results_csv_open(&t->csv, t->s.run_dir, t->s.hooks) : YOLO_OK;

    /* the position, history and best fitness of the resumed run */
    const yolo_meta *rows = yolo_meta_get(yolo_ckpt_meta(t->ck), "results");
    if (!(t->history = yolo_meta_new_map())) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
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
    if (t->ri.batch != t->s.batch) {
        /* the position counted in batches of the old size: continue at the same sample (rounded down) */
        int64_t nb = yolo_loader_num_batches(t->loader);
        t->first_batch = t->first_batch * t->ri.batch / t->s.batch;
        if (t->first_batch > nb) t->first_batch = nb;
        t->last_opt_step = nb * t->start_epoch + t->first_batch - 1;
        if (t->ri.sampler_batch > 0)
            printf("Resuming mid-epoch at batch %lld of %lld (batch %lld of size %lld before)\n",
                   (long long)t->first_batch, (long long)nb, (long long)t->ri.sampler_batch, (long long)t->ri.batch);
    }
    return YOLO_OK;
}

static double memory_gb(const trainer *t) { return (double)yolo_backend_peak_bytes(t->s.backend) / 1e9; }

/* The trainer's state for a checkpoint: `completed` epochs done (0-based
 * index of the last), the sampler at (s_epoch, s_batch). */
static yolo_train_state make_state(const trainer *t, int64_t completed, int64_t s_epoch, int64_t s_batch,
                                   bool finished) {
    int64_t nb = yolo_loader_num_batches(t->loader);
    yolo_train_state state = {.session = &t->s, .model = t->s.model, .ema = t->ema, .opt = t->opt,
                              .epoch = completed, .best_fitness = t->best_fitness,
                              .results = yolo_meta_get(t->history, "results"),
                              .sampler_epoch = s_epoch, .sampler_batch = s_batch,
                              .last_opt_step = t->last_opt_step, .best_epoch = t->best_epoch,
                              .lr0 = t->a.lr0, .momentum = t->a.momentum, .warmup_bias_lr = t->a.warmup_bias_lr,
                              /* a backward pass since the last optimizer step: its gradients are pending */
                              .grads = s_epoch * nb + s_batch - 1 > t->last_opt_step,
                              .finished = finished,
                              .best_half = t->a.half_best,
                              .n_loss_sums = s_batch > 0 ? t->s.hooks->n_loss_items : 0,
                              .loss_sums = t->loss_sums};
    return state;
}

static yolo_status weights_dir(const trainer *t, char *path, size_t size) {
    snprintf(path, size, "%s/weights", t->s.run_dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return yolo_error(YOLO_ERR_IO, "%s: cannot create (%s)", path, strerror(errno));
    return YOLO_OK;
}

/* Stopped by a signal mid-epoch: last.ckpt at the next batch. */
static yolo_status stop_mid_epoch(trainer *t, int epoch, int64_t next_batch) {
    char path[1200] = "";
    yolo_status st = YOLO_OK;
    if (t->a.save && t->rank == 0) {
        yolo_train_state state = make_state(t, epoch - 1, epoch, next_batch, false);
        st = weights_dir(t, path, sizeof path);
        snprintf(path, sizeof path, "%s/weights/last.ckpt", t->s.run_dir);
        if (!st) st = yolo_train_save_checkpoint(path, &state, false);
    }
    if (st) return st;
    int sig = yolo_stop_signal();
    if (t->rank > 0)
        return yolo_error(YOLO_ERR_INTERRUPTED, "training stopped at epoch %d, batch %lld (asked on some rank); rank 0 "
                          "writes last.ckpt", epoch + 1, (long long)next_batch);
    if (!t->a.save)
        return yolo_error(YOLO_ERR_INTERRUPTED, "training stopped by %s at epoch %d, batch %lld (save=false: no checkpoint written)",
                          yolo_stop_signal_name(sig), epoch + 1, (long long)next_batch);
    return yolo_error(YOLO_ERR_INTERRUPTED,
                      "training stopped by %s at epoch %d, batch %lld; %s saved: continue with 'yolo %s train resume "
                      "model=%s'",
                      yolo_stop_signal_name(sig), epoch + 1, (long long)next_batch, path, t->s.task->name, path);
}

/* After every batch: the loss items averaged over the ranks (each rank's
 * items are its share's: their mean is the global batch's), the loss
 * summed (a NaN anywhere stops every rank) and whether any rank was asked
 * to stop. Alone: only the stop request is read. */
static yolo_status reduce_step(trainer *t, double *loss, float *items) {
    t->stop_agreed = yolo_stop_requested();
    if (t->world == 1) return YOLO_OK;
    int n = t->s.hooks->n_loss_items;
    double v[YOLO_TASK_MAX_ITEMS + 2];
    for (int k = 0; k < n; k++) v[k] = items[k];
    v[n] = *loss;
    v[n + 1] = t->stop_agreed;
    yolo_status st = yolo_dist_allreduce_f64(t->dist, v, n + 2, YOLO_DIST_SUM, "allreduce(loss items)");
    for (int k = 0; k < n; k++) items[k] = (float)(v[k] / t->world);
    *loss = v[n];
    t->stop_agreed = v[n + 1] > 0;
    return st;
}

/* Whether any rank was asked to stop (between epochs). */
static yolo_status agree_stop(trainer *t) {
    double v = yolo_stop_requested();
    yolo_status st = yolo_dist_allreduce_f64(t->dist, &v, 1, YOLO_DIST_SUM, "allreduce(stop request)");
    t->stop_agreed = v > 0;
    return st;
}

/* One epoch from batch `first`; mean loss items into items. */
static yolo_status train_epoch(trainer *t, int epoch, int64_t first, float *items) {
    const yolo_task_hooks *h = t->s.hooks;
    int64_t nb = yolo_loader_num_batches(t->loader);
    int64_t nw = t->a.warmup_epochs > 0 ? (int64_t)fmax(round(t->a.warmup_epochs * nb), 100.0) : -1;
    double lf = yolo_lr_factor(epoch, t->a.epochs, t->a.lrf, t->a.cos_lr);
    double nbs_over_batch = (double)t->a.nbs / t->s.batch;
    int accumulate = (int)fmax(round(nbs_over_batch), 1.0);
    for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++) t->opt->lr[gi] = (float)(t->opt->initial_lr * lf);
    yolo_status st = yolo_loader_start_epoch(t->loader, epoch, first);
    if (st) return st;
    if (first == 0) memset(t->loss_sums, 0, sizeof t->loss_sums);
    if (epoch == t->a.epochs - t->a.close_mosaic && t->a.close_mosaic > 0) printf("Closing dataloader mosaic\n");
    yolo_progress_header(stdout, h->n_loss_items, h->loss_names);
    yolo_progress bar;
    yolo_progress_begin(&bar, stdout, epoch, t->a.epochs, nb, h->n_loss_items, h->loss_names);
    double *sums = t->loss_sums;
    for (int64_t k = 0; k < h->n_loss_items; k++) items[k] = first > 0 ? (float)(sums[k] / (double)first) : 0.0f;
    for (int64_t i = first;; i++) {
        if (i < nb && i > first && t->stop_agreed) {
            yolo_progress_end(&bar);
            return stop_mid_epoch(t, epoch, i);
        }
        yolo_batch *batch = NULL;
        st = yolo_loader_next(t->loader, &batch);
        if (st || !batch) break;
        int64_t ni = i + nb * epoch;
        if (ni <= nw) { /* warmup: lr, momentum and accumulation ramp up */
            accumulate = (int)fmax(round(yolo_interp((double)ni, 0, (double)nw, 1.0, nbs_over_batch)), 1.0);
            for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++)
                t->opt->lr[gi] = (float)yolo_interp((double)ni, 0, (double)nw, gi == 0 ? t->a.warmup_bias_lr : 0.0,
                                                    t->opt->initial_lr * lf);
            if (t->opt->kind == YOLO_OPTIMIZER_SGD)
                t->opt->momentum = (float)yolo_interp((double)ni, 0, (double)nw, t->a.warmup_momentum, t->a.momentum);
        }
        yolo_model_graph *mg = NULL;
        st = yolo_graph_cache_get(&t->graphs, batch, &mg);
        if (!st) st = yolo_model_graph_forward(mg, batch);
        double loss = 0;
        float step_items[YOLO_TASK_MAX_ITEMS] = {0};
        if (!st) {
            for (int k = 0; k < mg->out.n; k++)
                memset(mg->host_grad[k].data, 0, (size_t)yolo_tensor_numel(mg->out.t[k]) * sizeof(float));
            st = h->loss_compute(t->loss_state, batch, mg->out.n, mg->host_out, mg->host_grad, &loss, step_items);
        }
        if (!st) st = yolo_model_graph_backward(mg);
        if (!st) st = reduce_step(t, &loss, step_items);
        if (!st && !isfinite(loss))
            st = yolo_error(YOLO_ERR_NUMERIC, "the loss is %g at epoch %d, batch %lld (step %lld): training stopped",
                            loss, epoch + 1, (long long)i + 1, (long long)ni);
        if (!st && ni - t->last_opt_step >= accumulate) {
            st = yolo_ddp_allreduce_grads(t->dist, t->opt, &t->buckets);
            t->allreduce_seconds += t->buckets.seconds;
            t->allreduce_copy_seconds += t->buckets.copy_seconds;
            t->allreduce_steps++;
            if (!st) st = yolo_optimizer_step(t->opt, 10.0f, NULL);
            if (!st) st = yolo_ema_step(t->ema);
            t->last_opt_step = ni;
        }
        int instances = batch->instances.n > 0 ? batch->instances.n : batch->n;
        int size = batch->width;
        yolo_run_plots_train_batch(&t->plots, batch, t->train_set, ni);
        yolo_loader_release(t->loader, batch);
        if (st) break;
        if (t->step_log) {
            fprintf(t->step_log, "%d %lld", epoch + 1, (long long)i + 1);
            for (int k = 0; k < h->n_loss_items; k++) fprintf(t->step_log, " %.9g", step_items[k]);
            fputc('\n', t->step_log);
        }
        float means[YOLO_TASK_MAX_ITEMS];
        for (int k = 0; k < h->n_loss_items; k++) {
            sums[k] += step_items[k];
            means[k] = (float)(sums[k] / (double)(i + 1));
        }
        memcpy(items, means, sizeof(float) * (size_t)h->n_loss_items);
        yolo_progress_update(&bar, i + 1, means, instances, size, memory_gb(t));
    }
    yolo_progress_end(&bar);
    return st;
}

/* One results row kept for the checkpoints' history. */
static yolo_status record_row(trainer *t, int epoch, const float *items, const yolo_val_result *r) {
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

static yolo_status save_checkpoints(trainer *t, int epoch, bool is_best, bool finished) {
    if (!t->a.save || t->rank > 0) return YOLO_OK;
    yolo_train_state state = make_state(t, epoch, epoch + 1, 0, finished);
    char path[1200];
    yolo_status st = weights_dir(t, path, sizeof path);
    snprintf(path, sizeof path, "%s/weights/last.ckpt", t->s.run_dir);
    if (!st) st = yolo_train_save_checkpoint(path, &state, false);
    if (!st && is_best) {
        snprintf(path, sizeof path, "%s/weights/best.ckpt", t->s.run_dir);
        st = yolo_train_save_checkpoint(path, &state, t->a.half_best);
    }
    if (!st && t->a.save_period > 0 && (epoch + 1) % t->a.save_period == 0) {
        snprintf(path, sizeof path, "%s/weights/epoch%d.ckpt", t->s.run_dir, epoch + 1);
        st = yolo_train_save_checkpoint(path, &state, false);
    }
    return st;
}

static void print_metrics_line(const yolo_task_hooks *h, const yolo_val_result *r) {
    printf("val: %lld images in %.1fs:", (long long)r->images, r->seconds);
    for (int i = 0; i < h->n_metrics; i++) printf(" %s=%.4f", h->metric_names[i], r->metrics[i]);
    printf(" fitness=%.4f\n", r->fitness);
}

static yolo_status train(trainer *t) {
    const yolo_task_hooks *h = t->s.hooks;
    printf("Image sizes %d train, %d val\nUsing %d dataloader workers on %s\nLogging results to %s\n"
           "%s training for %d epochs...\n",
           t->s.imgsz, t->s.imgsz, t->s.workers, yolo_backend_name(t->s.backend), t->s.run_dir,
           t->resuming ? "Resuming" : "Starting", t->a.epochs);
    fflush(stdout);
    double t0 = yolo_seconds_now();
    yolo_status st = YOLO_OK;
    int epoch;
    for (epoch = t->start_epoch; epoch < t->a.epochs && !st; epoch++) {
        float items[YOLO_TASK_MAX_ITEMS] = {0};
        st = train_epoch(t, epoch, epoch == t->start_epoch ? t->first_batch : 0, items);
        if (st) break;
        bool final = epoch + 1 == t->a.epochs;
        yolo_val_result r = {0};
        if (t->a.val || final) {
            st = yolo_validator_run(&t->validator, NULL, &r);
            if (st) break;
            print_metrics_line(h, &r);
        }
        if (t->rank == 0) st = yolo_results_csv_append(&t->csv, epoch, items, r.metrics, r.losses, t->opt->lr);
        bool is_best = r.fitness >= t->best_fitness;
        if (is_best) {
            t->best_fitness = r.fitness;
            t->best_epoch = epoch;
        }
        bool stop_early = t->a.patience > 0 && epoch - t->best_epoch >= t->a.patience;
        if (!st) st = record_row(t, epoch, items, &r);
        if (!st) st = save_checkpoints(t, epoch, is_best, final || stop_early);
        st = yolo_dist_agree(t->dist, st, "saving checkpoints");
        if (!st) st = agree_stop(t);
        if (st) break;
        if (t->stop_agreed) {
            int sig = yolo_stop_signal();
            return yolo_error(YOLO_ERR_INTERRUPTED,
                              "training stopped by %s after epoch %d%s%s%s", yolo_stop_signal_name(sig), epoch + 1,
                              t->a.save ? "; continue with 'yolo train resume model=" : " (save=false: no checkpoint)",
                              t->a.save ? t->s.run_dir : "", t->a.save ? "/weights/last.ckpt'" : "");
        }
        if (stop_early) {
            printf("Stopping training early as no improvement observed in last %d epochs. Best results observed at "
                   "epoch %d.\n",
                   t->a.patience, t->best_epoch + 1);
            epoch++;
            break;
        }
    }
    if (st) return st;
    double took = yolo_seconds_now() - t0;
    printf("\n%d epochs completed in %.3f hours.\n", epoch - t->start_epoch, took / 3600.0);
    if (t->world > 1 && t->allreduce_steps > 0)
        printf("DDP: gradient all-reduce %.1f ms per optimizer step (%.1f ms of it copying to and from the device; "
               "the rest is the reduction and waiting for the slowest rank), %lld steps, %.1f%% of the training "
               "time\n",
               1e3 * t->allreduce_seconds / (double)t->allreduce_steps,
               1e3 * t->allreduce_copy_seconds / (double)t->allreduce_steps, (long long)t->allreduce_steps,
               100.0 * t->allreduce_seconds / took);
    /* The final table: the last EMA weights, validated once more with the per-class table. */
    yolo_val_result final = {0};
    printf("Validating (final EMA weights)...\n");
    if (t->plots.on) t->validator.plot_dir = t->s.run_dir;
    st = yolo_validator_run(&t->validator, stdout, &final);
    if (st) return st;
    yolo_run_plots_results(&t->plots);
    yolo_run_plots_close(&t->plots, stdout, t->validator.plot_seconds, t->validator.plot_cpu_seconds);
    printf("Best fitness %.4f at epoch %d. Results saved to %s\n", t->best_fitness, t->best_epoch + 1, t->s.run_dir);
    return YOLO_OK;
}

yolo_status yolo_train_launch_world(const yolo_mode_context *ctx, int *world) {
    yolo_status st = yolo_dist_requested_world(ctx->config, world);
    bool given = yolo_config_layer_of(ctx->config, "world") > YOLO_CONFIG_LAYER_TASK ||
                 yolo_config_layer_of(ctx->config, "device") > YOLO_CONFIG_LAYER_TASK;
    char path[1024] = "";
    if (st || given || resume_path(ctx, path, sizeof path) != YOLO_OK || !path[0]) {
        yolo_error_clear(); /* a bad resume path is reported by the trainer itself */
        return st;
    }
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read(path, &ck) == YOLO_OK) { /* resume on the ranks the run had */
        const char *w = yolo_checkpoint_arg(ck, "world"), *device = yolo_checkpoint_arg(ck, "device");
        *world = yolo_dist_world_of(w ? atoi(w) : 1, device && strcmp(device, "null") ? device : NULL);
    }
    yolo_ckpt_free(ck);
    yolo_error_clear();
    return YOLO_OK;
}

/* DDP: every rank starts from rank 0's weights (model and EMA). */
static yolo_status start_ranks(trainer *t) {
    if (t->world == 1) return YOLO_OK;
    yolo_status st = YOLO_OK;
    double bucket_mb = yolo_cfg_float(t->s.cfg, "dist_bucket_mb", &st);
    t->buckets.bucket = (int64_t)(bucket_mb * 1024 * 1024 / sizeof(float));
    if (!st) st = yolo_ddp_broadcast_model(t->dist, t->s.model, "broadcast(model)");
    if (!st) st = yolo_ddp_broadcast_model(t->dist, t->ema->ema, "broadcast(EMA)");
    return st;
}

yolo_status yolo_mode_train(const yolo_mode_context *ctx) {
    trainer t;
    memset(&t, 0, sizeof t);
    t.quiet_stdout = -1;
    t.world = 1;
    yolo_status st = setup(&t, ctx);
    if (t.world > 1) st = yolo_dist_agree(t.dist, st, "setting up training");
    if (!st) st = start_ranks(&t);
    if (!st) {
        yolo_stop_install();
        st = train(&t);
        yolo_stop_uninstall();
    }
    trainer_close(&t);
    return st;
}
