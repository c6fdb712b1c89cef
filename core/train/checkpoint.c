/* Trainer state <-> checkpoint files (checkpoint.h). */
#include "train/checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_tensors.h"

bool yolo_is_checkpoint_path(const char *model) {
    size_t n = model ? strlen(model) : 0;
    return n > 5 && strcmp(model + n - 5, ".ckpt") == 0;
}

static yolo_status add_model(yolo_ckpt_tensors *ts, const yolo_model *m, yolo_dtype store) {
    for (int i = 0; i < yolo_model_tensor_count(m); i++) {
        yolo_status st = yolo_ckpt_tensors_add(ts, NULL, yolo_model_tensor_at(m, i)->tensor, store);
        if (st) return st;
    }
    return YOLO_OK;
}

static yolo_status add_optimizer(yolo_ckpt_tensors *ts, const yolo_optimizer *opt) {
    for (int i = 0; i < opt->n_params; i++) {
        yolo_status st = yolo_ckpt_tensors_add(ts, NULL, opt->state_a[i], YOLO_F32);
        if (!st && opt->state_b[i]) st = yolo_ckpt_tensors_add(ts, NULL, opt->state_b[i], YOLO_F32);
        if (st) return st;
    }
    return YOLO_OK;
}

/* The train args as a map of their args.yaml texts, plus what rebuilding the model needs. */
static yolo_status fill_meta(yolo_meta *meta, const yolo_train_state *s) {
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
    if (!st) st = yolo_meta_set_int(meta, "nc", ss->data.nc);
    yolo_meta *names = st ? NULL : yolo_meta_set_list(meta, "names");
    for (int i = 0; names && i < ss->data.nc && !st; i++) st = yolo_meta_append_str(names, ss->data.names[i]);
    if (!st && s->results) st = yolo_meta_set_copy(meta, "results", s->results);
    return st;
}

yolo_status yolo_train_save_checkpoint(const char *path, const yolo_train_state *s, bool half) {
    yolo_ckpt_info info = {.task = s->session->task->name,
                           .plugin_version = s->session->task->version ? s->session->task->version : "",
                           .epoch = s->epoch,
                           .optimizer_steps = s->opt ? s->opt->steps : 0,
                           .ema_updates = s->ema->updates,
                           .best_fitness = s->best_fitness,
                           .seed = (int64_t)s->session->seed,
                           .sampler_epoch = s->epoch + 1,
                           .sampler_batch = 0};
    yolo_meta *meta = NULL;
    yolo_ckpt_tensors model = {0}, ema = {0}, opt = {0};
    yolo_status st = yolo_ckpt_meta_new(&info, &meta);
    if (!st) st = fill_meta(meta, s);
    if (!st) st = add_model(&ema, s->ema->ema, half ? YOLO_F16 : YOLO_F32);
    if (!st && !half && s->model) st = add_model(&model, s->model, YOLO_F32);
    if (!st && !half && s->opt) st = add_optimizer(&opt, s->opt);
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

yolo_status yolo_model_from_checkpoint(yolo_session *s, const char *path, yolo_model **out) {
    *out = NULL;
    yolo_ckpt *ck = NULL;
    yolo_status st = yolo_ckpt_read(path, &ck);
    if (st) return st;
    const yolo_ckpt_info *info = yolo_ckpt_get_info(ck);
    const yolo_meta *meta = yolo_ckpt_meta(ck);
    char what[1200];
    snprintf(what, sizeof what, "meta.yaml of %s", path);
    const char *model_name = NULL;
    int64_t nc = 0;
    if (strcmp(info->task, s->task->name) != 0)
        st = yolo_error(YOLO_ERR_ARG, "%s is a checkpoint of task '%s', not of task '%s'", path, info->task,
                        s->task->name);
    if (!st) st = yolo_meta_get_str(meta, "model_name", what, &model_name);
    if (!st) st = yolo_meta_get_int(meta, "nc", what, &nc);
    if (!st && s->data_loaded && nc != s->data.nc)
        st = yolo_error(YOLO_ERR_ARG, "%s was trained for %lld classes; data=%s has %d", path, (long long)nc,
                        s->data.source, s->data.nc);
    const yolo_st_file *blob = st ? NULL : yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA);
    if (!st && !blob) st = yolo_error(YOLO_ERR_FORMAT, "%s holds no EMA weights (ema.safetensors)", path);
    yolo_model *model = NULL;
    if (!st) {
        const yolo_task *tasks[1] = {s->task};
        yolo_model_options opt = {.tasks = tasks, .n_tasks = 1, .nc = (int)nc, .seed = s->seed};
        st = yolo_model_load(model_name, s->backend, &opt, &model);
    }
    if (!st) {
        int n = yolo_model_tensor_count(model);
        yolo_tensor **tensors = malloc(sizeof *tensors * (size_t)(n ? n : 1));
        if (!tensors) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        for (int i = 0; tensors && i < n; i++) tensors[i] = yolo_model_tensor_at(model, i)->tensor;
        char blob_what[1200];
        snprintf(blob_what, sizeof blob_what, "ema.safetensors of %s", path);
        if (!st) st = yolo_ckpt_load_all(blob, tensors, NULL, (size_t)n, blob_what);
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
