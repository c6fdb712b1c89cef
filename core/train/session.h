/* What train, val and predict share: the merged configuration resolved into
 * a task, data, the typed settings (settings/settings.h), a backend and a
 * model. */
#ifndef YOLO_TRAIN_SESSION_H
#define YOLO_TRAIN_SESSION_H

#include "cli/cli.h"
#include "data/data_config.h"
#include "dist/dist.h"
#include "settings/settings.h"
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
    double model_bn_eps;       /* a checkpoint's batch norm eps and momentum (0: the yaml's defaults) */
    double model_bn_momentum;
    char run_dir[1024];
    int run_lock_fd;           /* > 0: the flock held on run_dir/.yolo-run.lock */
    yolo_settings set;         /* read once the configuration is merged */
    yolo_dist *dist;           /* borrowed: the ranks of a DDP run, NULL alone */
} yolo_session;

typedef struct yolo_session_options {
    /* false (predict): data is read only when data= is given; class names
     * then come from the checkpoint */
    bool need_data;
    /* the settings the mode reads (YOLO_SETTINGS_* bits; RUN always) */
    unsigned concerns;
    /* the model the run builds, when not the model key (a resumed or
     * fine-tuned checkpoint's model yaml): a yaml file is merged */
    const char *model;
    /* may be NULL: under DDP each rank takes its device from a device list
     * and, with threads=0, its share of the cores */
    yolo_dist *dist;
    /* val, predict, export: a checkpoint model= supplies imgsz, data and
     * single_cls where neither a cfg= file nor the command line gives them
     * (Ultralytics' Model keeps these of a checkpoint's train_args) */
    bool checkpoint_args;
} yolo_session_options;

/* Resolves task hooks, data and model yamls (merged into the config: the
 * last merges), then reads the settings and opens the backend. */
yolo_status yolo_session_open(const yolo_mode_context *ctx, yolo_session *s, const yolo_session_options *opt);
/* Builds the model named by `model` (a yaml; NULL: the task's default; from
 * s->model_yaml when a checkpoint gave one) for the data's nc, seeded; its
 * yaml was merged by yolo_session_open. Refuses a model whose last layer is
 * not one of the task's heads. */
yolo_status yolo_session_build_model(yolo_session *s, const char *model, yolo_model **out);
/* Ultralytics' grid size gs: max(the model's largest stride, 32); batch
 * shapes and image sizes are multiples of it. */
int yolo_model_grid_stride(const yolo_model *model);
/* train and val take one size: imgsz=[h, w] becomes max(h, w), saying
 * so in Ultralytics' words (predict and export letterbox to [h, w]). */
void yolo_session_square_imgsz(yolo_session *s);

/* imgsz against s->model's grid size: a P6 model (stride 64) refuses an
 * imgsz that is a multiple of 32 only, naming both (its graph could not
 * join the levels; Ultralytics rounds up with a warning). */
yolo_status yolo_session_check_imgsz(const yolo_session *s);
/* Creates the run directory, locks it and writes args.yaml into it. */
yolo_status yolo_session_make_run_dir(yolo_session *s);
/* Takes an exclusive flock on run_dir/.yolo-run.lock (holding this pid),
 * so a second run in the same directory (same name= with exist_ok=True, a
 * second resume) stops with an error naming the directory and the other
 * pid instead of corrupting last.ckpt and results.csv. */
yolo_status yolo_session_lock_run_dir(yolo_session *s);
void yolo_session_close(yolo_session *s);

#endif
