/* Setting a training run up (trainer.h): the launch settings and the
 * ranks, the checkpoint it starts from, the session (every other setting
 * read once there), the model and its EMA, the run directory, datasets,
 * loader, optimizer, loss and validator. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/backend.h"
#include "plugin/plugin_loader.h"
#include "train/class_weights.h"
#include "train/trainer.h"
#include "util/cpu_isa.h"

/* Ultralytics' optimizer=auto, and the explicit choices that are built. */
static yolo_status choose_optimizer(yolo_optim_settings *o, int64_t n_train, int batch, int nc, yolo_optimizer_kind *kind) {
    const char *name = o->optimizer ? o->optimizer : "auto";
    if (strcasecmp(name, "auto") == 0) {
        int64_t per_epoch = (n_train + (batch > o->nbs ? batch : o->nbs) - 1) / (batch > o->nbs ? batch : o->nbs);
        /* Ultralytics 8.4: MuSGD past 10000 iterations (8.3 picked SGD there), and no bias warmup either way */
        if (per_epoch * o->epochs > 10000) {
            *kind = YOLO_OPTIMIZER_MUSGD;
            o->lr0 = 0.01;
        } else {
            *kind = YOLO_OPTIMIZER_ADAMW;
            o->lr0 = round(0.002 * 5.0 / (4.0 + nc) * 1e6) / 1e6;
        }
        o->momentum = 0.9;
        o->warmup_bias_lr = 0.0;
        printf("optimizer: 'optimizer=auto' found, determining best 'optimizer', 'lr0' and 'momentum' "
               "automatically...\n");
        return YOLO_OK;
    }
    if (!yolo_optimizer_kind_of(name, kind))
        return yolo_error(YOLO_ERR_CONFIG, "optimizer=%s: not built yet (built: auto, SGD, AdamW, MuSGD)", name);
    return YOLO_OK;
}

static yolo_status open_datasets(yolo_trainer *t) {
    const yolo_run_settings *run = &t->s.set.run;
    yolo_dataset_options dopt = {.threads = run->workers > 0 ? run->workers : 1};
    yolo_dataset_options train_opt = dopt;
    train_opt.fraction = t->s.set.loader.fraction;
    yolo_status st = yolo_dataset_open(&t->s.data, YOLO_SPLIT_TRAIN, &t->s.hooks->data, &train_opt, &t->train_set);
    if (!st) st = yolo_dataset_open(&t->s.data, t->s.set.val.split, &t->s.hooks->data, &dopt, &t->val_set);
    if (st) return st;
    char line[256];
    yolo_dataset_summary(t->train_set, line, sizeof line);
    printf("%s\n", line);
    yolo_dataset_summary(t->val_set, line, sizeof line);
    printf("%s\n", line);
    if (t->train_set->n == 0) return yolo_error(YOLO_ERR_FORMAT, "train: no usable images in data=%s", t->s.data.source);
    return YOLO_OK;
}

/* A fine-tune's transfer: Ultralytics' count, then what did not transfer
 * by name (the first few), NaN or Inf weights warned. */
static yolo_status transfer_weights(yolo_trainer *t) {
    size_t transferred = 0, total = 0;
    yolo_ckpt_report report;
    yolo_status st = yolo_checkpoint_transfer(t->ck, t->s.model, &transferred, &total, &report);
    if (st) return st;
    printf("Transferred %zu/%zu items from %s\n", transferred, total, t->weights_from);
    yolo_ckpt_report_print(&report, "Not transferred", stdout);
    if (report.n_nonfinite)
        fprintf(stderr, "WARNING: %zu tensor%s of %s hold%s NaN or Inf values: not transferred, left at %s "
                        "initialisation (listed above)\n", report.n_nonfinite, report.n_nonfinite == 1 ? "" : "s",
                t->weights_from, report.n_nonfinite == 1 ? "s" : "", report.n_nonfinite == 1 ? "its" : "their");
    return YOLO_OK;
}

/* A model of the run: where a checkpoint supplies the weights (fine-tune,
 * resume), a .pt named as its architecture is built without its own. */
static yolo_status build_model(yolo_trainer *t, const char *model, yolo_model **out) {
    return t->ck ? yolo_checkpoint_build_model(&t->s, model, out) : yolo_session_build_model(&t->s, model, out);
}

/* The model (fine-tuned weights transferred) and its EMA copy. */
static yolo_status build_models(yolo_trainer *t) {
    const char *model = t->model_yaml[0] ? t->model_yaml : NULL;
    yolo_status st = build_model(t, model, &t->s.model);
    if (!st && t->weights_from[0]) st = transfer_weights(t);
    if (!st) st = yolo_trainer_apply_freeze(t->s.model, &t->s.set.optim.freeze);
    yolo_session_square_imgsz(&t->s);
    if (!st) st = yolo_session_check_imgsz(&t->s);
    if (st) return st;
    t->s.tctx.model = t->s.model;
    yolo_model *ema_model = NULL;
    st = build_model(t, model, &ema_model);
    if (!st) st = yolo_ema_create(t->s.model, ema_model, &t->ema);
    return st;
}

static yolo_status create_loader(yolo_trainer *t) {
    const yolo_settings *set = &t->s.set;
    /* keys the task has no use for are said, not silently skipped (Ultralytics skips them without a word) */
    unsigned needs = t->s.hooks->data.needs;
    if (t->rank == 0 && set->loader.augment.copy_paste > 0 && !(needs & YOLO_NEED_POLYGONS))
        fprintf(stderr, "WARNING: copy_paste=%g has no effect: it pastes instance polygons, and this task's labels "
                        "have none\n", set->loader.augment.copy_paste);
    /* the detect family (boxes) and classify (image classes) augment with different keys */
    static const char *const box_only[] = {"mosaic", "mixup", "cutmix", "degrees", "translate", "shear",
                                           "perspective", "bgr", "close_mosaic"};
    static const char *const classify_only[] = {"auto_augment", "erasing", "crop_fraction"};
    static const char *const colour[] = {"hsv_h", "hsv_s", "hsv_v"};
    bool classify = (needs & YOLO_NEED_IMAGE_CLASS) != 0;
    if (t->rank == 0 && classify)
        yolo_settings_warn_no_effect(t->s.cfg, box_only, (int)(sizeof box_only / sizeof *box_only),
                                     "it is a detect/segment training augmentation", stderr);
    if (t->rank == 0 && !classify)
        yolo_settings_warn_no_effect(t->s.cfg, classify_only, (int)(sizeof classify_only / sizeof *classify_only),
                                     "it is a classify augmentation", stderr);
    if (t->rank == 0 && classify && set->loader.augment.auto_augment != YOLO_AUTO_AUGMENT_NONE)
        yolo_settings_warn_no_effect(t->s.cfg, colour, 3,
                                     "classify applies the hsv_* colour jitter only with auto_augment=null (a policy "
                                     "replaces it, as in Ultralytics)", stderr);
    yolo_loader_options lo = {.batch = set->run.batch / t->world, .workers = set->run.workers, .rank = t->rank,
                              .world = t->world, .seed = (uint64_t)set->run.seed,
                              .augment = true, .shuffle = true, .epochs = set->optim.epochs,
                              .cache_ram = set->loader.cache_ram, .aug = set->loader.augment,
                              .rect = set->loader.rect, .multi_scale = set->loader.multi_scale,
                              .stride = yolo_model_grid_stride(t->s.model)};
    if (classify && (lo.rect || lo.multi_scale > 0)) { /* Ultralytics' classify trainer reads neither */
        const char *key = lo.rect ? "rect" : "multi_scale";
        char value[64] = "true";
        if (yolo_config_format(t->s.cfg, key, value, sizeof value) != YOLO_OK) yolo_error_clear();
        return yolo_error(YOLO_ERR_CONFIG, "%s=%s (%s): not for the classify task (its batches are imgsz crops)", key,
                          value, yolo_config_source(t->s.cfg, key));
    }
    if (lo.rect && t->world > 1) { /* as Ultralytics' trainer before it launches DDP */
        fprintf(stderr, "WARNING: 'rect=True' is incompatible with Multi-GPU training, setting 'rect=False'\n");
        lo.rect = false;
    }
    if (lo.rect) { /* as Ultralytics' build_dataloader */
        fprintf(stderr, "WARNING: 'rect=True' is incompatible with DataLoader shuffle, setting shuffle=False\n");
        lo.shuffle = false;
        if (lo.aug.copy_paste > 0) /* Ultralytics pastes on the letterboxed image; here rect batches have none */
            fprintf(stderr, "WARNING: copy_paste=%g has no effect with rect=True (rect batches have no mosaic, mixup "
                            "or copy_paste here)\n", (double)lo.aug.copy_paste);
    }
    return yolo_loader_create(t->train_set, &lo, &t->loader);
}

/* The resumed run's optimizer (`auto` resolved as it was), or this run's choice. */
static yolo_status create_optimizer(yolo_trainer *t) {
    yolo_optimizer_kind kind = YOLO_OPTIMIZER_SGD;
    yolo_optim_settings *o = &t->optim;
    int batch = t->s.set.run.batch;
    yolo_status st = YOLO_OK;
    if (t->resuming) {
        kind = t->ri.optimizer;
        o->lr0 = t->ri.lr0;
        o->momentum = t->ri.momentum;
        o->warmup_bias_lr = t->ri.warmup_bias_lr;
        t->half_best = t->ri.best_half; /* `half` now comes from the checkpoint layer */
    } else {
        st = choose_optimizer(o, t->train_set->n, batch, t->s.data.nc, &kind);
    }
    int accumulate = (int)fmax(round((double)o->nbs / batch), 1.0);
    double wd = o->weight_decay * batch * accumulate / o->nbs;
    if (!st) st = yolo_optimizer_create(t->s.model, kind, (float)o->lr0, (float)o->momentum, (float)wd, &t->opt);
    if (st) return st;
    yolo_grad_scaler_init(&t->opt->scaler, yolo_backend_supports(t->s.backend, YOLO_BACKEND_CAP_LOSS_SCALING));
    char desc[256];
    yolo_optimizer_describe(t->opt, desc, sizeof desc);
    printf("optimizer: %s\n", desc);
    if (t->resuming) st = yolo_checkpoint_restore(t->ck, &t->ri, t->s.model, t->ema, t->opt);
    return st;
}

/* cls_pw > 0 asks a task whose loss applies class weights: one that lists
 * "cls_pw" among the keys it reads (yolo/plugin.h). Checked before any
 * dataset is opened. */
static yolo_status check_cls_pw(const yolo_trainer *t) {
    if (t->s.set.optim.cls_pw == 0) return YOLO_OK;
    int n = 0;
    const char *const *read = yolo_plugin_task_keys_read(t->s.task, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(read[i], "cls_pw") == 0) return YOLO_OK;
    return yolo_error(YOLO_ERR_CONFIG, "cls_pw=%g (%s): task '%s' takes no class weights (Ultralytics weights the "
                      "box tasks' classification loss: detect, segment); leave cls_pw=0",
                      t->s.set.optim.cls_pw, yolo_config_source(t->s.cfg, "cls_pw"), t->s.task->name);
}

/* cls_pw's class weights from the training labels, in the task context the
 * loss and the validator are created with (train/class_weights.h). */
static yolo_status set_class_weights(yolo_trainer *t) {
    const double power = t->s.set.optim.cls_pw;
    const int nc = t->s.tctx.nc;
    if (power == 0 || nc < 1) return YOLO_OK;
    int64_t *counts = malloc((size_t)nc * sizeof *counts);
    t->class_weights = malloc((size_t)nc * sizeof *t->class_weights);
    if (!counts || !t->class_weights) {
        free(counts);
        return yolo_error(YOLO_ERR_NOMEM, "class weights: out of memory for %d classes", nc);
    }
    yolo_dataset_class_counts(t->train_set, nc, counts);
    yolo_status st = yolo_class_weights_from_counts(counts, nc, power, t->class_weights);
    free(counts);
    if (st) return st;
    if (t->rank == 0) yolo_class_weights_print(t->class_weights, nc, stdout);
    t->s.tctx.class_weights = t->class_weights;
    return YOLO_OK;
}

/* The training graphs, the task's loss, the validator (EMA weights) and the step log. */
static yolo_status create_loss_and_validator(yolo_trainer *t) {
    const yolo_run_settings *run = &t->s.set.run;
    t->graphs.model = t->s.model;
    t->graphs.training = true;
    yolo_status st = yolo_trainer_setup_sync_bn(t);
    if (st) return st;
    if (t->world > 1) {
        t->s.tctx.rank_mean = yolo_ddp_rank_mean;
        t->s.tctx.dist = t->dist;
    }
    st = set_class_weights(t);
    if (!st) st = t->s.hooks->loss_create(&t->s.tctx, &t->loss_state);
    if (st) return st;
    yolo_validator_init(&t->validator, t->s.hooks, &t->s.tctx, t->val_set, t->ema->ema, run->batch * 2, run->workers,
                        run->imgsz, (uint64_t)run->seed);
    t->validator_ready = true;
    t->validator.dist = t->dist;
    t->validator.task = t->s.task;
    yolo_run_plots_open(&t->plots, t->s.set.pictures.plots && t->rank == 0, t->s.run_dir, &t->s.tctx);
    if (!t->resuming) yolo_run_plots_labels(&t->plots, t->train_set);
    const char *step_log = getenv("YOLO_STEP_LOG");
    if (step_log && *step_log && t->rank == 0 && !(t->step_log = fopen(step_log, "a")))
        return yolo_error(YOLO_ERR_IO, "YOLO_STEP_LOG=%s: cannot open (%s)", step_log, strerror(errno));
    return YOLO_OK;
}

static yolo_status setup(yolo_trainer *t, const yolo_mode_context *ctx) {
    yolo_status st = yolo_settings_fill_launch(ctx->config, &t->launch);
    if (!st) st = yolo_trainer_open_dist(t, ctx->config);
    if (!st) st = yolo_trainer_find_resume(t, ctx);
    if (!st) st = yolo_trainer_model_source(t, ctx->task);
    if (!st && t->ck && !t->resuming) yolo_checkpoint_default_args(t->ck, ctx->config); /* fine-tuning from model= */
    yolo_session_options so = {.need_data = true, .concerns = YOLO_SETTINGS_TRAIN,
                               .model = t->model_yaml[0] ? t->model_yaml : NULL, .dist = t->dist};
    if (!st) st = yolo_session_open(ctx, &t->s, &so);
    /* resumed or fine-tuned: the model is built from the yaml the checkpoint carries */
    if (!st && t->ck) st = yolo_checkpoint_model_yaml(t->ck, &t->s);
    if (st) return st;
    const yolo_settings *set = &t->s.set;
    yolo_backend_set_amp_format(t->s.backend, set->run.amp); /* training and its validation */
    char isa[512];
    yolo_cpu_isa_describe(isa, sizeof isa); /* the ISA that runs (YOLO_CPU_ISA caps it) */
    printf("%s\nAMP: %s\n", isa, yolo_backend_precision(t->s.backend));
    if (set->run.batch % t->world)
        return yolo_error(YOLO_ERR_CONFIG, "batch=%d (%s) is the global batch: it must be a multiple of the %d ranks",
                          set->run.batch, yolo_config_source(t->s.cfg, "batch"), t->world);
    t->optim = set->optim;
    t->half_best = set->checkpoint.half_best;
    st = check_cls_pw(t);
    if (!st) st = t->resuming ? yolo_trainer_check_resume(t) : yolo_trainer_open_pretrained(t);
    if (!st) st = build_models(t);
    if (!st && set->run.autobatch > 0) st = yolo_trainer_autobatch(t);
    if (!st) st = yolo_trainer_make_run_dir(t);
    if (!st) st = open_datasets(t);
    if (!st) st = create_loader(t);
    if (!st) st = create_optimizer(t);
    if (!st) st = create_loss_and_validator(t);
    if (st) return st;
    if (!t->resuming) return t->rank == 0 ? yolo_results_csv_open(&t->csv, t->s.run_dir, t->s.hooks) : YOLO_OK;
    return yolo_trainer_restore_position(t);
}

yolo_status yolo_trainer_open(yolo_trainer *t, const yolo_mode_context *ctx) {
    memset(t, 0, sizeof *t);
    t->quiet_stdout = -1;
    t->world = 1;
    t->last_opt_step = -1;
    t->best_fitness = -1.0;
    t->best_epoch = -1;
    t->callbacks = ctx->callbacks;
    yolo_status st = setup(t, ctx);
    if (t->world > 1) st = yolo_dist_agree(t->dist, st, "setting up training");
    if (!st) st = yolo_trainer_start_ranks(t);
    return st;
}

void yolo_trainer_close(yolo_trainer *t) {
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
    free(t->class_weights);
    yolo_session_close(&t->s);
    yolo_trainer_close_dist(t);
}
