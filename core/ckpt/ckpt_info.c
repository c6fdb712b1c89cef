/* meta.yaml of a checkpoint: the skeleton and the required-key check. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ckpt/ckpt_file.h"

#ifndef YOLO_VERSION
#error "YOLO_VERSION is defined by CMakeLists.txt"
#endif

const char *yolo_ckpt_member_name(yolo_ckpt_blob_id id) {
    switch (id) {
    case YOLO_CKPT_MODEL: return "model.safetensors";
    case YOLO_CKPT_EMA: return "ema.safetensors";
    case YOLO_CKPT_OPTIMIZER: return "optimizer.safetensors";
    default: return "?";
    }
}

yolo_status yolo_ckpt_meta_new(const yolo_ckpt_info *info, yolo_meta **out) {
    *out = NULL;
    if (!info || !info->task || !info->plugin_version)
        return yolo_error(YOLO_ERR_ARG, "checkpoint meta: info, task and plugin_version are required");
    if (info->optimizer_steps < 0 || info->ema_updates < 0 || info->sampler_batch < 0)
        return yolo_error(YOLO_ERR_ARG, "checkpoint meta: negative counter (optimizer_steps %lld, ema_updates %lld, sampler batch %lld)",
                          (long long)info->optimizer_steps, (long long)info->ema_updates, (long long)info->sampler_batch);
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    yolo_meta *m = yolo_meta_new_map();
    if (!m) return YOLO_ERR_NOMEM;
    yolo_status st = YOLO_OK;
    yolo_meta *sampler = NULL;
    if (!st) st = yolo_meta_set_int(m, "format_version", YOLO_CKPT_FORMAT_VERSION);
    if (!st) st = yolo_meta_set_str(m, "yolo_version", YOLO_VERSION);
    if (!st) st = yolo_meta_set_str(m, "date", date);
    if (!st) st = yolo_meta_set_str(m, "task", info->task);
    if (!st) st = yolo_meta_set_str(m, "plugin_version", info->plugin_version);
    if (!st) st = yolo_meta_set_int(m, "epoch", info->epoch);
    if (!st) st = yolo_meta_set_int(m, "optimizer_steps", info->optimizer_steps);
    if (!st) st = yolo_meta_set_int(m, "ema_updates", info->ema_updates);
    if (!st) st = yolo_meta_set_float(m, "best_fitness", info->best_fitness);
    if (!st) st = yolo_meta_set_int(m, "seed", info->seed);
    if (!st && !(sampler = yolo_meta_set_map(m, "sampler"))) st = YOLO_ERR_NOMEM;
    if (!st) st = yolo_meta_set_int(sampler, "epoch", info->sampler_epoch);
    if (!st) st = yolo_meta_set_int(sampler, "batch", info->sampler_batch);
    if (!st && !yolo_meta_set_map(m, "train_args")) st = YOLO_ERR_NOMEM;
    if (!st && !yolo_meta_set_list(m, "results")) st = YOLO_ERR_NOMEM;
    if (st) {
        yolo_meta_free(m);
        return yolo_error_context(st, "checkpoint meta");
    }
    *out = m;
    return YOLO_OK;
}

yolo_status yolo_ckpt_meta_check(const yolo_meta *meta, const char *what, yolo_ckpt_info *info) {
    yolo_ckpt_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    what = what ? what : "meta.yaml";
    if (yolo_meta_kind_of(meta) != YOLO_META_MAP) return yolo_error(YOLO_ERR_FORMAT, "%s: not a map", what);
    yolo_status st;
    if ((st = yolo_meta_get_int(meta, "format_version", what, &info->format_version))) return st;
    if (info->format_version > YOLO_CKPT_FORMAT_VERSION)
        return yolo_error(YOLO_ERR_FORMAT,
                          "%s: checkpoint format %lld was written by a newer yolo; this build (yolo %s) reads format %d",
                          what, (long long)info->format_version, YOLO_VERSION, YOLO_CKPT_FORMAT_VERSION);
    if (info->format_version < 1)
        return yolo_error(YOLO_ERR_FORMAT, "%s: invalid format_version %lld", what, (long long)info->format_version);
    if ((st = yolo_meta_get_str(meta, "yolo_version", what, &info->yolo_version))) return st;
    if ((st = yolo_meta_get_str(meta, "date", what, &info->date))) return st;
    if ((st = yolo_meta_get_str(meta, "task", what, &info->task))) return st;
    if ((st = yolo_meta_get_str(meta, "plugin_version", what, &info->plugin_version))) return st;
    if ((st = yolo_meta_get_int(meta, "epoch", what, &info->epoch))) return st;
    if ((st = yolo_meta_get_int(meta, "optimizer_steps", what, &info->optimizer_steps))) return st;
    if ((st = yolo_meta_get_int(meta, "ema_updates", what, &info->ema_updates))) return st;
    if (info->optimizer_steps < 0 || info->ema_updates < 0)
        return yolo_error(YOLO_ERR_FORMAT, "%s: negative optimizer_steps or ema_updates", what);
    const yolo_meta *bf = yolo_meta_get(meta, "best_fitness");
    if (bf && yolo_meta_kind_of(bf) == YOLO_META_NULL) info->best_fitness = NAN;
    else if ((st = yolo_meta_get_float(meta, "best_fitness", what, &info->best_fitness))) return st;
    if ((st = yolo_meta_get_int(meta, "seed", what, &info->seed))) return st;
    const yolo_meta *sampler, *args, *results;
    if ((st = yolo_meta_get_map(meta, "sampler", what, &sampler))) return st;
    char sub[512];
    snprintf(sub, sizeof sub, "%s: sampler", what);
    if ((st = yolo_meta_get_int(sampler, "epoch", sub, &info->sampler_epoch))) return st;
    if ((st = yolo_meta_get_int(sampler, "batch", sub, &info->sampler_batch))) return st;
    if (info->sampler_batch < 0) return yolo_error(YOLO_ERR_FORMAT, "%s: negative batch", sub);
    if ((st = yolo_meta_get_map(meta, "train_args", what, &args))) return st;
    if ((st = yolo_meta_get_list(meta, "results", what, &results))) return st;
    for (size_t i = 0; i < yolo_meta_size(results); i++)
        if (yolo_meta_kind_of(yolo_meta_at(results, i)) != YOLO_META_MAP)
            return yolo_error(YOLO_ERR_FORMAT, "%s: results[%zu] is %s, expected a map", what, i,
                              yolo_meta_kind_name(yolo_meta_kind_of(yolo_meta_at(results, i))));
    return YOLO_OK;
}
