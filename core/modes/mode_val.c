/* `yolo val`: metrics of a trained model (model=best.ckpt) on a split of a
 * data yaml, with the task's per-class table. */
#include <stdio.h>
#include <string.h>

#include "cli/modes.h"
#include "data/dataset.h"
#include "modes/load_model.h"
#include "train/prediction_txt.h"
#include "train/validate.h"

yolo_status yolo_mode_val_run(const yolo_mode_context *ctx, yolo_val_outcome *out) {
    yolo_session s;
    yolo_session_options so = {.need_data = true, .concerns = YOLO_SETTINGS_VAL | YOLO_SETTINGS_PICTURES,
                               .checkpoint_args = true};
    yolo_status st = yolo_session_open(ctx, &s, &so);
    bool save_txt = false; /* labels/<stem>.txt per image, as Ultralytics' validators (save_conf adds conf) */
    if (!st) st = yolo_config_get_bool(s.cfg, "save_txt", &save_txt);
    bool verbose = true; /* the per-class rows (the task's) and the confusion matrix */
    if (!st) st = yolo_config_get_bool(s.cfg, "verbose", &verbose);
    bool rect = true;
    if (!st) st = yolo_session_eval_rect(&s, &rect);
    if (!st && s.set.run.autobatch > 0) { /* Ultralytics' validator fails on it too, later */
        char given[64] = "";
        yolo_config_format(s.cfg, "batch", given, sizeof given);
        st = yolo_error(YOLO_ERR_CONFIG, "batch=%s (%s): AutoBatch chooses training batches; val takes a batch of 1 "
                        "or more images (e.g. batch=16)", given, yolo_config_source(s.cfg, "batch"));
    }
    if (!st) yolo_session_square_imgsz(&s);
    if (!st) st = yolo_session_load_model(&s);
    if (!st) st = yolo_session_apply_half(&s);
    const yolo_run_settings *run = &s.set.run;
    yolo_dataset *ds = NULL;
    yolo_dataset_options dopt = {.threads = run->workers > 0 ? run->workers : 1};
    if (!st) st = yolo_session_make_run_dir(&s);
    if (!st && ctx->wrote) snprintf(ctx->wrote, ctx->wrote_size, "%s", s.run_dir);
    char labels_dir[1200];
    if (!st && save_txt) st = yolo_prediction_txt_dir(s.run_dir, labels_dir, sizeof labels_dir);
    if (!st) st = yolo_dataset_open(&s.data, s.set.val.split, &s.hooks->data, &dopt, &ds);
    if (!st) {
        char line[256];
        yolo_dataset_summary(ds, line, sizeof line);
        printf("%s\n", line);
        yolo_validator v;
        yolo_validator_init(&v, s.hooks, &s.tctx, ds, s.model, run->batch, run->workers, run->imgsz, (uint64_t)run->seed);
        v.task = s.task;
        v.print_confusion = verbose;
        v.plot_dir = s.set.pictures.plots ? s.run_dir : NULL;
        v.json_dir = s.set.pictures.save_json ? s.run_dir : NULL;
        v.txt_dir = save_txt ? labels_dir : NULL;
        v.rect = rect;
        v.losses = false;
        if (!rect) printf("rect=False: %dx%d letterboxed batches\n", run->imgsz, run->imgsz);
        yolo_val_result r;
        st = yolo_validator_run(&v, stdout, &r);
        yolo_validator_release(&v);
        if (!st) {
            printf("Speed: %.1f ms per image (%lld images in %.2f s on %s)\n",
                   r.images ? 1000.0 * r.seconds / (double)r.images : 0.0, (long long)r.images, r.seconds,
                   yolo_backend_name(s.backend));
            printf("Results saved to %s%s\n", s.run_dir, save_txt ? " (labels/: save_txt)" : "");
        }
        if (!st && out) {
            int n = s.hooks->n_metrics < 32 ? s.hooks->n_metrics : 32;
            *out = (yolo_val_outcome){.n = n, .names = s.hooks->metric_names, .fitness = r.fitness};
            memcpy(out->values, r.metrics, (size_t)n * sizeof *r.metrics);
        }
    }
    yolo_dataset_free(ds);
    yolo_session_close(&s);
    return st;
}

yolo_status yolo_mode_val(const yolo_mode_context *ctx) { return yolo_mode_val_run(ctx, NULL); }
