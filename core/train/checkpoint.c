/* Trainer state <-> checkpoint files (checkpoint.h). */
#include "train/checkpoint.h"

#include "nn/model_yaml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_tensors.h"
#include "interop/pt_model.h"

bool yolo_is_checkpoint_path(const char *model) {
    size_t n = model ? strlen(model) : 0;
    return (n > 5 && strcmp(model + n - 5, ".ckpt") == 0) || yolo_pt_is_path(model);
}

static yolo_status add_model(yolo_ckpt_tensors *ts, const yolo_model *m, yolo_dtype store) {
    for (int i = 0; i < yolo_model_tensor_count(m); i++) {
        yolo_status st = yolo_ckpt_tensors_add(ts, NULL, yolo_model_tensor_at(m, i)->tensor, store);
        if (st) return st;
    }
    return YOLO_OK;
}

static yolo_status add_optimizer(yolo_ckpt_tensors *ts, const yolo_optimizer *opt, bool grads) {
    for (int i = 0; i < opt->n_params; i++) {
        yolo_status st = yolo_ckpt_tensors_add(ts, NULL, opt->state_a[i], YOLO_F32);
        if (!st && opt->state_b[i]) st = yolo_ckpt_tensors_add(ts, NULL, opt->state_b[i], YOLO_F32);
        if (!st && grads) {
            char name[YOLO_NAME_MAX + 16];
            snprintf(name, sizeof name, "%s.grad", opt->params[i]->name);
            st = yolo_ckpt_tensors_add(ts, name, opt->params[i]->grad, YOLO_F32);
        }
        if (st) return st;
    }
    return YOLO_OK;
}

static yolo_status fill_resume(yolo_meta *meta, const yolo_train_state *s) {
    yolo_meta *r = yolo_meta_set_map(meta, "resume");
    if (!r) return YOLO_ERR_NOMEM;
    yolo_status st = yolo_meta_set_int(r, "last_opt_step", s->last_opt_step);
    if (!st) st = yolo_meta_set_int(r, "best_epoch", s->best_epoch);
    if (!st) st = yolo_meta_set_int(r, "batch", s->session->set.run.batch);
    if (!st) st = yolo_meta_set_str(r, "optimizer", yolo_optimizer_name(s->opt->kind));
    if (!st) st = yolo_meta_set_float(r, "lr0", s->lr0);
    if (!st) st = yolo_meta_set_float(r, "momentum", s->momentum);
    if (!st) st = yolo_meta_set_float(r, "warmup_bias_lr", s->warmup_bias_lr);
    if (!st) st = yolo_meta_set_float(r, "momentum_now", (double)s->opt->momentum);
    if (!st) st = yolo_meta_set_bool(r, "grads", s->grads);
    if (!st) st = yolo_meta_set_bool(r, "finished", s->finished);
    if (!st) st = yolo_meta_set_bool(r, "best_half", s->best_half);
    yolo_meta *sums = st ? NULL : yolo_meta_set_list(r, "loss_sums");
    if (!st && !sums) st = YOLO_ERR_NOMEM;
    for (int i = 0; !st && i < s->n_loss_sums; i++) st = yolo_meta_append_float(sums, s->loss_sums[i]);
    /* optional (readers without it ignore it; a checkpoint without it resumes at the initial scale) */
    const yolo_grad_scaler *scaler = &s->opt->scaler;
    yolo_meta *amp = st || !scaler->enabled ? NULL : yolo_meta_set_map(r, "amp_scaler");
    if (!st && scaler->enabled && !amp) st = YOLO_ERR_NOMEM;
    if (amp) st = yolo_meta_set_float(amp, "scale", (double)scaler->scale);
    if (amp && !st) st = yolo_meta_set_int(amp, "growth_tracker", scaler->growth_tracker);
    return st;
}

/* The train args as a map of their args.yaml texts, plus what rebuilding the model needs. */
static yolo_status fill_meta(yolo_meta *meta, const yolo_train_state *s, bool half) {
    const yolo_session *ss = s->session;
    yolo_meta *args = yolo_meta_get_mut(meta, "train_args");
    yolo_status st = YOLO_OK;
    for (int i = 0; i < yolo_config_key_count(ss->cfg) && !st; i++) {
        const char *key = yolo_config_key_at(ss->cfg, i)->name;
        char value[1024];
        st = yolo_config_format(ss->cfg, key, value, sizeof value);
        if (!st) st = yolo_meta_set_str(args, key, value);
    }
    if (!st) st = yolo_meta_set_str(meta, "model_name", ss->model_name);
    /* the yaml itself, so the checkpoint builds without the file it came from */
    const char *yaml = yolo_model_yaml_text(s->ema->ema);
    if (!st && yaml) st = yolo_meta_set_str(meta, "model_yaml", yaml);
    double eps, momentum; /* what the yaml cannot say (a fine-tuned classify .pt's 1e-5 / 0.1) */
    yolo_model_bn_constants(s->ema->ema, &eps, &momentum);
    if (!st) st = yolo_meta_set_float(meta, "bn_eps", eps);
    if (!st) st = yolo_meta_set_float(meta, "bn_momentum", momentum);
    if (!st) st = yolo_meta_set_int(meta, "nc", ss->data.nc);
    yolo_meta *names = st ? NULL : yolo_meta_set_list(meta, "names");
    for (int i = 0; names && i < ss->data.nc && !st; i++) st = yolo_meta_append_str(names, ss->data.names[i]);
    if (!st && s->results) st = yolo_meta_set_copy(meta, "results", s->results);
    if (!st && !half && s->opt) st = fill_resume(meta, s);
    return st;
}

yolo_status yolo_train_save_checkpoint(const char *path, const yolo_train_state *s, bool half) {
    yolo_ckpt_info info = {.task = s->session->task->name,
                           .plugin_version = s->session->task->version ? s->session->task->version : "",
                           .epoch = s->epoch,
                           .optimizer_steps = s->opt ? s->opt->steps : 0,
                           .ema_updates = s->ema->updates,
                           .best_fitness = s->best_fitness,
                           .seed = s->session->set.run.seed,
                           .sampler_epoch = s->sampler_epoch,
                           .sampler_batch = s->sampler_batch};
    yolo_meta *meta = NULL;
    yolo_ckpt_tensors model = {0}, ema = {0}, opt = {0};
    yolo_status st = yolo_ckpt_meta_new(&info, &meta);
    if (!st) st = fill_meta(meta, s, half);
    if (!st) st = add_model(&ema, s->ema->ema, half ? YOLO_F16 : YOLO_F32);
    if (!st && !half && s->model) st = add_model(&model, s->model, YOLO_F32);
    if (!st && !half && s->opt) st = add_optimizer(&opt, s->opt, s->grads);
    if (!st) {
        yolo_ckpt_contents c = {.meta = meta};
        c.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&ema);
        if (!half && s->model) c.blobs[YOLO_CKPT_MODEL] = yolo_ckpt_tensors_blob(&model);
        if (!half && s->opt) c.blobs[YOLO_CKPT_OPTIMIZER] = yolo_ckpt_tensors_blob(&opt);
        st = yolo_ckpt_write(path, &c);
    }
    yolo_ckpt_tensors_free(&model);
    yolo_ckpt_tensors_free(&ema);
    yolo_ckpt_tensors_free(&opt);
    yolo_meta_free(meta);
    return st;
}

yolo_status yolo_checkpoint_check_task(const yolo_ckpt *ck, const yolo_task *task) {
    const yolo_ckpt_info *info = yolo_ckpt_get_info(ck);
    if (strcmp(info->task, task->name) == 0) return YOLO_OK;
    return yolo_error(YOLO_ERR_CONFIG,
                      "%s is a checkpoint of task '%s' (plugin version %s), not of task '%s'; give --task %s to use it",
                      yolo_ckpt_path(ck), info->task, info->plugin_version, task->name, info->task);
}

static void meta_what(const yolo_ckpt *ck, char *what, size_t size) {
    snprintf(what, size, "meta.yaml of %s", yolo_ckpt_path(ck));
}

const char *yolo_checkpoint_arg(const yolo_ckpt *ck, const char *key) {
    const yolo_meta *args = yolo_meta_get(yolo_ckpt_meta(ck), "train_args");
    return yolo_meta_str(yolo_meta_get(args, key));
}

void yolo_checkpoint_default_args(const yolo_ckpt *ck, yolo_config *cfg) {
    char source[1200];
    snprintf(source, sizeof source, "the train args of %s", yolo_ckpt_path(ck));
    static const char *const keys[] = {"imgsz", "data", "single_cls"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = yolo_checkpoint_arg(ck, keys[i]);
        if (!v || !v[0] || strcmp(v, "null") == 0 || yolo_config_layer_of(cfg, keys[i]) > YOLO_CONFIG_LAYER_TASK)
            continue;
        if (yolo_config_set(cfg, YOLO_CONFIG_LAYER_CHECKPOINT, keys[i], v, source) != YOLO_OK)
            yolo_error_clear(); /* a value this build refuses: the default stays */
    }
}

yolo_status yolo_checkpoint_args_yaml(const yolo_ckpt *ck, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    char what[1200];
    meta_what(ck, what, sizeof what);
    const yolo_meta *args = NULL;
    yolo_status st = yolo_meta_get_map(yolo_ckpt_meta(ck), "train_args", what, &args);
    if (st) return st;
    size_t cap = 256, n = 0;
    char *buf = malloc(cap);
    if (!buf) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    buf[0] = '\0';
    for (size_t i = 0; i < yolo_meta_size(args); i++) {
        const char *key = yolo_meta_key_at(args, i);
        const char *value = yolo_meta_str(yolo_meta_at(args, i));
        if (!value) {
            free(buf);
            return yolo_error(YOLO_ERR_FORMAT, "%s: train_args: '%s' is %s, expected a string (its args.yaml text)",
                              what, key, yolo_meta_kind_name(yolo_meta_kind_of(yolo_meta_at(args, i))));
        }
        size_t need = strlen(key) + strlen(value) + 4;
        if (n + need >= cap) {
            while (n + need >= cap) cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                return yolo_error(YOLO_ERR_NOMEM, "out of memory");
            }
            buf = grown;
        }
        n += (size_t)snprintf(buf + n, cap - n, "%s: %s\n", key, value);
    }
    *text = buf;
    *len = n;
    return YOLO_OK;
}

yolo_status yolo_checkpoint_resume_info(const yolo_ckpt *ck, yolo_resume_info *out) {
    memset(out, 0, sizeof *out);
    const yolo_ckpt_info *info = yolo_ckpt_get_info(ck);
    const yolo_meta *meta = yolo_ckpt_meta(ck);
    char what[1200];
    meta_what(ck, what, sizeof what);
    out->epoch = info->epoch;
    out->sampler_epoch = info->sampler_epoch;
    out->sampler_batch = info->sampler_batch;
    out->optimizer_steps = info->optimizer_steps;
    out->ema_updates = info->ema_updates;
    out->best_fitness = info->best_fitness;
    const yolo_meta *r = yolo_meta_get(meta, "resume");
    if (!r || !yolo_ckpt_get_blob(ck, YOLO_CKPT_OPTIMIZER) || !yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL))
        return yolo_error(YOLO_ERR_CONFIG,
                          "%s holds no training state (optimizer, live weights): it cannot be resumed; resume from "
                          "weights/last.ckpt, or fine-tune from it with model=%s without resume",
                          yolo_ckpt_path(ck), yolo_ckpt_path(ck));
    snprintf(what, sizeof what, "meta.yaml of %s: resume", yolo_ckpt_path(ck));
    const char *opt = NULL;
    const yolo_meta *sums = NULL;
    yolo_status st = yolo_meta_get_int(r, "last_opt_step", what, &out->last_opt_step);
    if (!st) st = yolo_meta_get_int(r, "best_epoch", what, &out->best_epoch);
    if (!st) st = yolo_meta_get_int(r, "batch", what, &out->batch);
    if (!st) st = yolo_meta_get_str(r, "optimizer", what, &opt);
    if (!st) st = yolo_meta_get_float(r, "lr0", what, &out->lr0);
    if (!st) st = yolo_meta_get_float(r, "momentum", what, &out->momentum);
    if (!st) st = yolo_meta_get_float(r, "warmup_bias_lr", what, &out->warmup_bias_lr);
    if (!st) st = yolo_meta_get_float(r, "momentum_now", what, &out->momentum_now);
    if (!st) st = yolo_meta_get_bool(r, "grads", what, &out->grads);
    if (!st) st = yolo_meta_get_bool(r, "finished", what, &out->finished);
    if (!st) st = yolo_meta_get_bool(r, "best_half", what, &out->best_half);
    if (!st) st = yolo_meta_get_list(r, "loss_sums", what, &sums);
    const yolo_meta *amp = st ? NULL : yolo_meta_get(r, "amp_scaler"); /* optional: written by amp runs */
    if (amp) {
        char sub[1300];
        snprintf(sub, sizeof sub, "%s: amp_scaler", what);
        out->has_scaler = true;
        st = yolo_meta_get_float(amp, "scale", sub, &out->scaler_scale);
        if (!st) st = yolo_meta_get_int(amp, "growth_tracker", sub, &out->scaler_growth_tracker);
        if (!st && (!(out->scaler_scale > 0) || !isfinite(out->scaler_scale) || out->scaler_growth_tracker < 0))
            st = yolo_error(YOLO_ERR_FORMAT, "%s: scale %g and growth_tracker %lld (expected > 0 and >= 0)", sub,
                            out->scaler_scale, (long long)out->scaler_growth_tracker);
    }
    if (st) return st;
    if (!yolo_optimizer_kind_of(opt, &out->optimizer))
        return yolo_error(YOLO_ERR_FORMAT, "%s: optimizer '%s' is not built (built: SGD, AdamW, MuSGD)", what, opt);
    if (yolo_meta_size(sums) > YOLO_TASK_MAX_ITEMS)
        return yolo_error(YOLO_ERR_FORMAT, "%s: loss_sums has %zu items (at most %d)", what, yolo_meta_size(sums),
                          YOLO_TASK_MAX_ITEMS);
    out->n_loss_sums = (int)yolo_meta_size(sums);
    for (int i = 0; i < out->n_loss_sums; i++) {
        const yolo_meta *v = yolo_meta_at(sums, (size_t)i);
        if (yolo_meta_kind_of(v) != YOLO_META_FLOAT && yolo_meta_kind_of(v) != YOLO_META_INT)
            return yolo_error(YOLO_ERR_FORMAT, "%s: loss_sums[%d] is %s, expected a number", what, i,
                              yolo_meta_kind_name(yolo_meta_kind_of(v)));
        out->loss_sums[i] = yolo_meta_float(v);
    }
    meta_what(ck, what, sizeof what);
    if (!st) st = yolo_meta_get_str(meta, "model_name", what, &out->model_name);
    if (!st) st = yolo_meta_get_int(meta, "nc", what, &out->nc);
    if (st) return st;
    if (out->sampler_epoch < 0 || out->sampler_batch < 0 || out->batch < 1 || out->last_opt_step < -1)
        return yolo_error(YOLO_ERR_FORMAT, "%s: invalid position (sampler epoch %lld batch %lld, batch size %lld, "
                          "last optimizer step %lld)", what, (long long)out->sampler_epoch,
                          (long long)out->sampler_batch, (long long)out->batch, (long long)out->last_opt_step);
    return YOLO_OK;
}

/* The tensors of a model, in order (malloc'd). */
static yolo_tensor **model_tensors(const yolo_model *m, size_t *n) {
    *n = (size_t)yolo_model_tensor_count(m);
    yolo_tensor **t = malloc(sizeof *t * (*n ? *n : 1));
    for (size_t i = 0; t && i < *n; i++) t[i] = yolo_model_tensor_at(m, (int)i)->tensor;
    return t;
}

yolo_status yolo_checkpoint_restore(const yolo_ckpt *ck, const yolo_resume_info *info, yolo_model *model,
                                    yolo_ema *ema, yolo_optimizer *opt) {
    /* pending gradients carry the loss scale of the run that saved them (amp_scaler present) */
    if (info->grads && info->has_scaler != opt->scaler.enabled)
        return yolo_error(YOLO_ERR_CONFIG,
                          "%s was saved mid-accumulation with gradients %s the loss scale, but this run %s loss "
                          "scaling (amp with fp16 kernels on its device): resume it on a device that %s, or from a "
                          "checkpoint saved at an epoch's end", yolo_ckpt_path(ck), info->has_scaler ? "times" : "without",
                          opt->scaler.enabled ? "uses" : "has no", info->has_scaler ? "runs amp in fp16" : "does not");
    size_t n = 0;
    yolo_tensor **t = model_tensors(model, &n);
    if (!t) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_status st = yolo_ckpt_restore(ck, YOLO_CKPT_MODEL, t, NULL, n);
    free(t);
    if (st) return st;
    if (!(t = model_tensors(ema->ema, &n))) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    st = yolo_ckpt_restore(ck, YOLO_CKPT_EMA, t, NULL, n);
    free(t);
    if (st) return st;
    /* optimizer: moments, then the pending gradients */
    size_t per = (opt->kind == YOLO_OPTIMIZER_SGD ? 1u : 2u) + (info->grads ? 1u : 0u); /* at most */
    size_t count = (size_t)opt->n_params * per;
    yolo_tensor **ot = calloc(count ? count : 1, sizeof *ot);
    char **names = calloc(count ? count : 1, sizeof *names);
    if (!ot || !names) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (int i = 0; !st && i < opt->n_params; i++) {
        ot[k] = opt->state_a[i];
        names[k++] = strdup(opt->state_a[i]->name);
        if (opt->state_b[i]) {
            ot[k] = opt->state_b[i];
            names[k++] = strdup(opt->state_b[i]->name);
        }
        if (info->grads) {
            char name[YOLO_NAME_MAX + 16];
            snprintf(name, sizeof name, "%s.grad", opt->params[i]->name);
            ot[k] = opt->params[i]->grad;
            names[k++] = strdup(name);
        }
    }
    for (size_t i = 0; !st && i < k; i++)
        if (!names[i]) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    if (!st) st = yolo_ckpt_restore(ck, YOLO_CKPT_OPTIMIZER, ot, (const char *const *)names, k);
    for (size_t i = 0; names && i < k; i++) free(names[i]);
    free(names);
    free(ot);
    for (int i = 0; !st && !info->grads && i < opt->n_params; i++) st = yolo_tensor_zero(opt->params[i]->grad);
    if (st) return st;
    opt->steps = info->optimizer_steps;
    opt->momentum = (float)info->momentum_now;
    if (info->has_scaler && opt->scaler.enabled) { /* else the run resumes without fp16 (or from an older file) */
        opt->scaler.scale = (float)info->scaler_scale;
        opt->scaler.growth_tracker = info->scaler_growth_tracker;
    }
    ema->updates = info->ema_updates;
    return YOLO_OK;
}

yolo_status yolo_checkpoint_transfer(const yolo_ckpt *ck, yolo_model *model, size_t *transferred, size_t *total,
                                     yolo_ckpt_report *report) {
    size_t n = 0;
    yolo_tensor **t = model_tensors(model, &n);
    if (!t) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_status st = yolo_ckpt_transfer_report(ck, yolo_ckpt_weights_member(ck), t, n, transferred, report);
    free(t);
    *total = n;
    if (!st) yolo_pt_count_as_ultralytics(ck, model, transferred, total);
    return st;
}

yolo_status yolo_checkpoint_model_yaml(const yolo_ckpt *ck, yolo_session *s) {
    const yolo_meta *yaml = yolo_meta_get(yolo_ckpt_meta(ck), "model_yaml");
    const char *text = yaml ? yolo_meta_str(yaml) : NULL;
    if (yaml && !text) return yolo_error(YOLO_ERR_FORMAT, "meta.yaml of %s: model_yaml is not a text", yolo_ckpt_path(ck));
    free(s->model_yaml);
    s->model_yaml = text ? strdup(text) : NULL; /* absent in older checkpoints: built from model_name */
    if (text && !s->model_yaml) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    /* absent in older checkpoints too: the defaults they were trained with */
    s->model_bn_eps = s->model_bn_momentum = 0;
    const yolo_meta *meta = yolo_ckpt_meta(ck);
    if (!yolo_meta_get(meta, "bn_eps")) return YOLO_OK;
    char what[1100];
    snprintf(what, sizeof what, "meta.yaml of %s", yolo_ckpt_path(ck));
    double eps = 0, momentum = -1;
    yolo_status st = yolo_meta_get_float(meta, "bn_eps", what, &eps);
    if (!st) st = yolo_meta_get_float(meta, "bn_momentum", what, &momentum);
    if (!st && !(eps > 0 && eps < 1 && momentum >= 0 && momentum <= 1))
        st = yolo_error(YOLO_ERR_FORMAT, "%s: bn_eps %g / bn_momentum %g: expected eps in (0, 1) and momentum in "
                        "[0, 1]", what, eps, momentum);
    if (st) return st;
    s->model_bn_eps = eps;
    s->model_bn_momentum = momentum;
    return YOLO_OK;
}

yolo_status yolo_checkpoint_build_model(yolo_session *s, const char *model, yolo_model **out) {
    if (s->model_yaml || !model || !yolo_pt_is_path(model)) return yolo_session_build_model(s, model, out);
    /* not yolo_model_load, which loads the .pt's weights by the exact rule (refusing another nc, a damaged
     * tensor) before the checkpoint's rule could; the head's task was checked as the checkpoint's */
    snprintf(s->model_name, sizeof s->model_name, "%s", model);
    const yolo_task *tasks[1] = {s->task};
    yolo_model_options opt = {.tasks = tasks, .n_tasks = 1, .nc = s->data.nc, .seed = (uint64_t)s->set.run.seed};
    return yolo_pt_model_load_architecture(model, s->backend, &opt, out);
}

yolo_status yolo_model_from_checkpoint(yolo_session *s, const char *path, yolo_model **out) {
    *out = NULL;
    yolo_ckpt *ck = NULL;
    /* a .pt's model is built from the file itself, weights and all (its
     * checkpoint view names it as the model): its meta is all that is read here */
    const bool pt = yolo_pt_is_path(path);
    yolo_status st = pt ? yolo_ckpt_read_meta(path, &ck) : yolo_ckpt_read(path, &ck);
    if (st) return st;
    const yolo_meta *meta = yolo_ckpt_meta(ck);
    char what[1200];
    snprintf(what, sizeof what, "meta.yaml of %s", path);
    const char *model_name = NULL;
    int64_t nc = 0;
    st = yolo_checkpoint_check_task(ck, s->task);
    if (!st) st = yolo_meta_get_str(meta, "model_name", what, &model_name);
    if (!st) st = yolo_meta_get_int(meta, "nc", what, &nc);
    if (!st && s->data_loaded && nc != s->data.nc)
        st = yolo_error(YOLO_ERR_ARG, "%s was trained for %lld classes; data=%s has %d", path, (long long)nc,
                        s->data.source, s->data.nc);
    const yolo_st_file *blob = st ? NULL : yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA);
    if (!st && !blob && !pt) st = yolo_error(YOLO_ERR_FORMAT, "%s holds no EMA weights (ema.safetensors)", path);
    yolo_model *model = NULL;
    if (!st) st = yolo_checkpoint_model_yaml(ck, s);
    if (!st) {
        int data_nc = s->data.nc;
        s->data.nc = (int)nc; /* the checkpoint's classes */
        /* a .pt loads its own weights, exactly; a .ckpt's model takes them from the EMA below */
        st = pt ? yolo_session_build_model(s, model_name, &model) : yolo_checkpoint_build_model(s, model_name, &model);
        s->data.nc = data_nc;
    }
    if (!st && !pt) {
        size_t n = 0;
        yolo_tensor **tensors = model_tensors(model, &n);
        if (!tensors) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        char blob_what[1200];
        snprintf(blob_what, sizeof blob_what, "ema.safetensors of %s", path);
        if (!st) st = yolo_ckpt_load_weights(blob, tensors, n, blob_what);
        free(tensors);
    }
    if (!st) snprintf(s->model_name, sizeof s->model_name, "%s", model_name);
    const yolo_meta *names = NULL;
    if (!st && !s->data_loaded && yolo_meta_get_list(meta, "names", what, &names) == YOLO_OK) {
        /* no data=: the class names and count come from the checkpoint */
        s->names = calloc(yolo_meta_size(names) + 1, sizeof *s->names);
        for (size_t i = 0; s->names && i < yolo_meta_size(names); i++) {
            const char *name = yolo_meta_str(yolo_meta_at(names, i));
            s->names[s->n_names++] = strdup(name ? name : "");
        }
        s->tctx.nc = (int)nc;
        s->tctx.names = (const char *const *)s->names;
    }
    yolo_ckpt_free(ck);
    if (st) {
        yolo_model_free(model);
        return st;
    }
    *out = model;
    return YOLO_OK;
}
