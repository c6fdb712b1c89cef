/* `yolo info model=yolov8n.yaml`: the layer table and Ultralytics'
 * model.info() summary, unfused and fused, at imgsz (640 by default).
 * A yaml name that neither a file nor the task's plugin provides is looked
 * up in every plugin found (`yolo info model=yolov8n-cls.yaml` works
 * without naming the task). */
#include <stdio.h>

#include <stdlib.h>

#include "cli/modes.h"
#include "data/fsutil.h"
#include "modes/load_model.h"
#include "plugin/plugin_loader.h"
#include "settings/settings.h"
#include "train/checkpoint.h"
#include "yolo/model.h"

/* The two summaries of a built model, unfused and fused. */
static yolo_status print_summaries(yolo_model *m, int imgsz) {
    yolo_status st = yolo_model_print_summary(m, imgsz, stdout);
    if (!st) st = yolo_model_fuse(m);
    if (!st) st = yolo_model_print_summary(m, imgsz, stdout);
    return st;
}

/* A .ckpt: its model as val and predict build it (its stored yaml, its
 * EMA weights loaded exactly), so info counts what they would run. */
static yolo_status checkpoint_info(const yolo_mode_context *ctx, int imgsz) {
    yolo_session s;
    yolo_session_options so = {.need_data = false, .concerns = 0};
    yolo_status st = yolo_session_open(ctx, &s, &so);
    if (st) return st;
    st = yolo_session_load_model(&s);
    if (!st) st = print_summaries(s.model, imgsz);
    yolo_session_close(&s);
    return st;
}

yolo_status yolo_mode_info(const yolo_mode_context *ctx) {
    /* the run settings as given, unchecked: info only counts, any size will do */
    yolo_settings set;
    yolo_status st = yolo_settings_fill(ctx->config, YOLO_SETTINGS_RUN, &set);
    if (st) return st;
    const char *model = set.run.model;
    if (!model) model = ctx->task ? ctx->task->default_model : NULL;
    if (!model) return yolo_error(YOLO_ERR_CONFIG, "info: no model= given and the task has no default model");
    int64_t imgsz = set.run.imgsz < 32 ? 640 : set.run.imgsz, seed = set.run.seed;
    if (yolo_path_has_ext(model, ".ckpt")) return checkpoint_info(ctx, (int)imgsz);
    yolo_backend *be = NULL;
    st = yolo_backend_create("cpu", 1, &be); /* counting runs nothing */
    if (st) return st;
    const yolo_task *tasks[1] = {ctx->task};
    yolo_model_options opt = {.tasks = tasks, .n_tasks = ctx->task ? 1 : 0, .seed = (uint64_t)seed, .log = stdout};
    yolo_model *m = NULL;
    st = yolo_model_load(model, be, &opt, &m);
    if (st == YOLO_ERR_IO) {
        /* not a file and not the task's: load every plugin found (their
         * yamls and heads join the registry) and try once more */
        yolo_plugin_found *found = NULL;
        int n = 0;
        if (yolo_plugin_scan(&found, &n) == YOLO_OK) {
            free(found);
            st = yolo_model_load(model, be, &opt, &m);
        }
    }
    if (!st) st = print_summaries(m, (int)imgsz);
    yolo_model_free(m);
    yolo_backend_free(be);
    return st;
}
