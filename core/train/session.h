/* What train, val and predict share: the merged configuration resolved into
 * a task, a backend, data and a model, and small typed config readers. */
#ifndef YOLO_TRAIN_SESSION_H
#define YOLO_TRAIN_SESSION_H

#include "cli/cli.h"
#include "data/data_config.h"
#include "dist/dist.h"
#include "yolo/config.h"
#include "yolo/model.h"
#include "yolo/plugin.h"
#include "yolo/task.h"

typedef struct yolo_session {
    yolo_config *cfg;          /* borrowed from the mode context */
    const yolo_task *task;
    const yolo_task_hooks *hooks;
    yolo_backend *backend;
    yolo_data_config data;
    bool data_loaded;
    yolo_model *model;
    yolo_task_context tctx;
    char **names;              /* class names from a checkpoint (when no data) */
    int n_names;
    char model_name[1024];     /* what the model was built from */
    char *model_yaml;          /* a checkpoint's stored yaml text: built from it, not from model_name's file */
    char run_dir[1024];
    int run_lock_fd;           /* > 0: the flock held on run_dir/.yolo-run.lock */
    int imgsz;
    int batch;
    int workers;
    uint64_t seed;
    yolo_dist *dist;           /* borrowed: the ranks of a DDP run, NULL alone */
} yolo_session;

/* Resolves task hooks, data (merging its yaml into the config) and backend.
 * need_data false (predict): data is read only when data= is given; class
 * names then come from the checkpoint. */
/* dist (may be NULL): under DDP each rank takes its device from a device
 * list and, with threads=0, its share of the cores. */
yolo_status yolo_session_open(const yolo_mode_context *ctx, yolo_session *s, bool need_data, yolo_dist *dist);
/* Builds the model named by `model` (a yaml; from s->model_yaml when a
 * checkpoint gave one) for the data's nc, seeded; refuses a model whose
 * last layer is not one of the task's heads. */
yolo_status yolo_session_build_model(yolo_session *s, const char *model, yolo_model **out);
/* Creates the run directory, locks it and writes args.yaml into it. */
yolo_status yolo_session_make_run_dir(yolo_session *s);
/* Takes an exclusive flock on run_dir/.yolo-run.lock (holding this pid),
 * so a second run in the same directory (same name= with exist_ok=True, a
 * second resume) stops with an error naming the directory and the other
 * pid instead of corrupting last.ckpt and results.csv. */
yolo_status yolo_session_lock_run_dir(yolo_session *s);
void yolo_session_close(yolo_session *s);

/* Typed config reads for keys default.yaml defines (an error names the key). */
int64_t yolo_cfg_int(const yolo_config *cfg, const char *key, yolo_status *st);
double yolo_cfg_float(const yolo_config *cfg, const char *key, yolo_status *st);
bool yolo_cfg_bool(const yolo_config *cfg, const char *key, yolo_status *st);
/* NULL when null. */
const char *yolo_cfg_string(const yolo_config *cfg, const char *key, yolo_status *st);

#endif
