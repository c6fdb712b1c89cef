/* `yolo info model=yolov8n.yaml`: the layer table and Ultralytics'
 * model.info() summary, unfused and fused, at imgsz (640 by default).
 * A yaml name that neither a file nor the task's plugin provides is looked
 * up in every plugin found (`yolo info model=yolov8n-cls.yaml` works
 * without naming the task). */
#include <stdio.h>

#include <stdlib.h>

#include "cli/modes.h"
#include "plugin/plugin_loader.h"
#include "settings/settings.h"
#include "yolo/model.h"

yolo_status yolo_mode_info(const yolo_mode_context *ctx) {
    /* the run settings as given, unchecked: info only counts, any size will do */
    yolo_settings set;
    yolo_status st = yolo_settings_fill(ctx->config, YOLO_SETTINGS_RUN, &set);
    if (st) return st;
    const char *model = set.run.model;
    if (!model) model = ctx->task ? ctx->task->default_model : NULL;
    if (!model) return yolo_error(YOLO_ERR_CONFIG, "info: no model= given and the task has no default model");
    int64_t imgsz = set.run.imgsz < 32 ? 640 : set.run.imgsz, seed = set.run.seed;
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
    if (!st) st = yolo_model_print_summary(m, (int)imgsz, stdout);
    if (!st) st = yolo_model_fuse(m);
    if (!st) st = yolo_model_print_summary(m, (int)imgsz, stdout);
    yolo_model_free(m);
    yolo_backend_free(be);
    return st;
}
