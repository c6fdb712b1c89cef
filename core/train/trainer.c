/* `yolo train`: the task-agnostic training loop of DESIGN.md.
 *
 * Per batch: images -> forward -> the task's loss on the host (value and
 * gradient into the head outputs) -> backward (gradients accumulate) ->
 * every `accumulate` batches: clip to norm 10, optimizer step, EMA update.
 * Per epoch: validation with the EMA weights, results.csv, best fitness,
 * patience. Schedules, groups and EMA follow Ultralytics (parity-facts §6). */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/modes.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "train/checkpoint.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "train/schedule.h"
#include "train/session.h"
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
    yolo_meta_free(t->history);
    if (t->validator_ready) yolo_validator_release(&t->validator);
    if (t->loss_state) t->s.hooks->loss_destroy(t->loss_state);
    yolo_graph_cache_clear(&t->graphs);
    yolo_ema_free(t->ema);
    yolo_optimizer_free(t->opt);
    yolo_loader_free(t->loader);
    yolo_dataset_free(t->train_set);
    yolo_dataset_free(t->val_set);
    yolo_session_close(&t->s);
}

static yolo_status setup(trainer *t, const yolo_mode_context *ctx) {
    yolo_status st = yolo_session_open(ctx, &t->s, true);
    if (!st) st = read_args(t->s.cfg, &t->a);
    const char *model = NULL;
    if (!st) model = yolo_cfg_string(t->s.cfg, "model", &st);
    if (!st) st = yolo_session_build_model(&t->s, model, &t->s.model);
    if (st) return st;
    t->s.tctx.model = t->s.model;
    yolo_model *ema_model = NULL;
    st = yolo_session_build_model(&t->s, model, &ema_model);
    if (!st) st = yolo_ema_create(t->s.model, ema_model, &t->ema);
    if (!st) st = yolo_session_make_run_dir(&t->s);
    if (!st) st = open_datasets(t);
    if (st) return st;

    yolo_loader_options lo = {.batch = t->s.batch, .workers = t->s.workers, .world = 1, .seed = t->s.seed,
                              .augment = true, .shuffle = true, .epochs = t->a.epochs,
                              .cache_ram = t->a.cache != NULL};
    yolo_augment_from_config(t->s.cfg, t->s.imgsz, &lo.aug, &st);
    if (!st) st = yolo_loader_create(t->train_set, &lo, &t->loader);
    if (st) return st;

    yolo_optimizer_kind kind = YOLO_OPTIMIZER_SGD;
    st = choose_optimizer(&t->a, t->train_set->n, t->s.batch, t->s.data.nc, &kind);
    int accumulate = (int)fmax(round((double)t->a.nbs / t->s.batch), 1.0);
    double wd = t->a.weight_decay * t->s.batch * accumulate / t->a.nbs;
    if (!st) st = yolo_optimizer_create(t->s.model, kind, (float)t->a.lr0, (float)t->a.momentum, (float)wd, &t->opt);
    if (st) return st;
    char desc[256];
    yolo_optimizer_describe(t->opt, desc, sizeof desc);
    printf("optimizer: %s\n", desc);

    t->graphs.model = t->s.model;
    t->graphs.training = true;
    st = t->s.hooks->loss_create(&t->s.tctx, &t->loss_state);
    if (st) return st;
    yolo_validator_init(&t->validator, t->s.hooks, &t->s.tctx, t->val_set, t->ema->ema, t->s.batch * 2,
                        t->s.workers, t->s.imgsz, t->s.seed);
    t->validator_ready = true;
    return yolo_results_csv_open(&t->csv, t->s.run_dir, t->s.hooks);
}

static double memory_gb(const trainer *t) { return (double)yolo_backend_peak_bytes(t->s.backend) / 1e9; }

/* One epoch; mean loss items into items. */
static yolo_status train_epoch(trainer *t, int epoch, int64_t *last_opt_step, float *items) {
    const yolo_task_hooks *h = t->s.hooks;
    int64_t nb = yolo_loader_num_batches(t->loader);
    int64_t nw = t->a.warmup_epochs > 0 ? (int64_t)fmax(round(t->a.warmup_epochs * nb), 100.0) : -1;
    double lf = yolo_lr_factor(epoch, t->a.epochs, t->a.lrf, t->a.cos_lr);
    double nbs_over_batch = (double)t->a.nbs / t->s.batch;
    int accumulate = (int)fmax(round(nbs_over_batch), 1.0);
    for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++) t->opt->lr[gi] = (float)(t->opt->initial_lr * lf);
    yolo_status st = yolo_loader_start_epoch(t->loader, epoch, 0);
    if (st) return st;
    if (epoch == t->a.epochs - t->a.close_mosaic && t->a.close_mosaic > 0) printf("Closing dataloader mosaic\n");
    yolo_progress_header(stdout, h->n_loss_items, h->loss_names);
    yolo_progress bar;
    yolo_progress_begin(&bar, stdout, epoch, t->a.epochs, nb, h->n_loss_items, h->loss_names);
    double sums[YOLO_TASK_MAX_ITEMS] = {0};
    for (int64_t i = 0;; i++) {
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
        if (!st && !isfinite(loss))
            st = yolo_error(YOLO_ERR_NUMERIC, "the loss is %g at epoch %d, batch %lld (step %lld): training stopped",
                            loss, epoch + 1, (long long)i + 1, (long long)ni);
        if (!st) st = yolo_model_graph_backward(mg);
        if (!st && ni - *last_opt_step >= accumulate) {
            st = yolo_optimizer_step(t->opt, 10.0f, NULL);
            if (!st) st = yolo_ema_step(t->ema);
            *last_opt_step = ni;
        }
        int instances = batch->instances.n > 0 ? batch->instances.n : batch->n;
        int size = batch->width;
        yolo_loader_release(t->loader, batch);
        if (st) break;
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

static yolo_status save_checkpoints(trainer *t, int epoch, double best_fitness, bool is_best) {
    if (!t->a.save) return YOLO_OK;
    yolo_train_state state = {.session = &t->s, .model = t->s.model, .ema = t->ema, .opt = t->opt,
                              .epoch = epoch, .best_fitness = best_fitness,
                              .results = yolo_meta_get(t->history, "results")};
    char path[1200];
    snprintf(path, sizeof path, "%s/weights", t->s.run_dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return yolo_error(YOLO_ERR_IO, "%s: cannot create (%s)", path, strerror(errno));
    snprintf(path, sizeof path, "%s/weights/last.ckpt", t->s.run_dir);
    yolo_status st = yolo_train_save_checkpoint(path, &state, false);
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
           "Starting training for %d epochs...\n",
           t->s.imgsz, t->s.imgsz, t->s.workers, yolo_backend_name(t->s.backend), t->s.run_dir, t->a.epochs);
    double best_fitness = -1.0;
    int best_epoch = -1;
    int64_t last_opt_step = -1;
    yolo_val_result best = {0}, last = {0};
    double t0 = yolo_seconds_now();
    yolo_status st = YOLO_OK;
    int epoch;
    for (epoch = 0; epoch < t->a.epochs && !st; epoch++) {
        float items[YOLO_TASK_MAX_ITEMS] = {0};
        st = train_epoch(t, epoch, &last_opt_step, items);
        if (st) break;
        bool final = epoch + 1 == t->a.epochs;
        yolo_val_result r = {0};
        if (t->a.val || final) {
            st = yolo_validator_run(&t->validator, NULL, &r);
            if (st) break;
            print_metrics_line(h, &r);
        }
        last = r;
        st = yolo_results_csv_append(&t->csv, epoch, items, r.metrics, r.losses, t->opt->lr);
        bool is_best = r.fitness >= best_fitness;
        if (is_best) {
            best_fitness = r.fitness;
            best_epoch = epoch;
            best = r;
        }
        if (!st) st = record_row(t, epoch, items, &r);
        if (!st) st = save_checkpoints(t, epoch, best_fitness, is_best);
        if (st) break;
        if (t->a.patience > 0 && epoch - best_epoch >= t->a.patience) {
            printf("Stopping training early as no improvement observed in last %d epochs. Best results observed at "
                   "epoch %d.\n",
                   t->a.patience, best_epoch + 1);
            epoch++;
            break;
        }
    }
    if (st) return st;
    printf("\n%d epochs completed in %.3f hours.\n", epoch, (yolo_seconds_now() - t0) / 3600.0);
    /* The final table: the last EMA weights, validated once more with the per-class table. */
    yolo_val_result final = {0};
    printf("Validating (final EMA weights)...\n");
    st = yolo_validator_run(&t->validator, stdout, &final);
    if (st) return st;
    (void)best;
    (void)last;
    printf("Best fitness %.4f at epoch %d. Results saved to %s\n", best_fitness, best_epoch + 1, t->s.run_dir);
    return YOLO_OK;
}

yolo_status yolo_mode_train(const yolo_mode_context *ctx) {
    trainer t;
    memset(&t, 0, sizeof t);
    yolo_status st = setup(&t, ctx);
    if (!st) st = train(&t);
    trainer_close(&t);
    return st;
}
