/* `yolo val`: metrics of a trained model (model=best.ckpt) on a split of a
 * data yaml, with the task's per-class table. */
#include <stdio.h>
#include <string.h>

#include "cli/modes.h"
#include "data/dataset.h"
#include "train/checkpoint.h"
#include "train/session.h"
#include "train/validate.h"

/* A checkpoint's model, or a yaml's freshly initialised one (said so). */
yolo_status yolo_session_load_model(yolo_session *s);
yolo_status yolo_session_load_model(yolo_session *s) {
    yolo_status st = YOLO_OK;
    const char *model = yolo_cfg_string(s->cfg, "model", &st);
    if (st) return st;
    if (yolo_is_checkpoint_path(model)) st = yolo_model_from_checkpoint(s, model, &s->model);
    else {
        st = yolo_session_build_model(s, model, &s->model);
        if (!st) printf("WARNING: model=%s is a model yaml: its weights are untrained\n", s->model_name);
    }
    s->tctx.model = s->model;
    return st;
}

yolo_status yolo_mode_val(const yolo_mode_context *ctx) {
    yolo_session s;
    yolo_status st = yolo_session_open(ctx, &s, true, NULL);
    if (!st) st = yolo_session_load_model(&s);
    const char *split_name = NULL;
    if (!st) split_name = yolo_cfg_string(s.cfg, "split", &st);
    yolo_split split = YOLO_SPLIT_VAL;
    if (split_name && strcmp(split_name, "train") == 0) split = YOLO_SPLIT_TRAIN;
    if (split_name && strcmp(split_name, "test") == 0) split = YOLO_SPLIT_TEST;
    yolo_dataset *ds = NULL;
    yolo_dataset_options dopt = {.threads = s.workers > 0 ? s.workers : 1};
    if (!st) st = yolo_session_make_run_dir(&s);
    if (!st) st = yolo_dataset_open(&s.data, split, &s.hooks->data, &dopt, &ds);
    if (!st) {
        char line[256];
        yolo_dataset_summary(ds, line, sizeof line);
        printf("%s\n", line);
        yolo_validator v;
        yolo_validator_init(&v, s.hooks, &s.tctx, ds, s.model, s.batch, s.workers, s.imgsz, s.seed);
        bool plots = yolo_cfg_bool(s.cfg, "plots", &st), save_json = yolo_cfg_bool(s.cfg, "save_json", &st);
        v.task = s.task;
        v.print_confusion = true;
        v.plot_dir = plots ? s.run_dir : NULL;
        v.json_dir = save_json ? s.run_dir : NULL;
        yolo_val_result r;
        if (!st) st = yolo_validator_run(&v, stdout, &r);
        yolo_validator_release(&v);
        if (!st) {
            printf("Speed: %.1f ms per image (%lld images in %.2f s on %s)\n",
                   r.images ? 1000.0 * r.seconds / (double)r.images : 0.0, (long long)r.images, r.seconds,
                   yolo_backend_name(s.backend));
            printf("Results saved to %s\n", s.run_dir);
        }
    }
    yolo_dataset_free(ds);
    yolo_session_close(&s);
    return st;
}
