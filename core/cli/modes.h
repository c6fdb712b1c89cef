/* The mode functions the CLI dispatches to, defined in core/modes/ (train,
 * val, predict, info); see yolo_mode_context in cli/cli.h. */
#ifndef YOLO_CLI_MODES_H
#define YOLO_CLI_MODES_H

#include "cli/cli.h"

yolo_status yolo_mode_train(const yolo_mode_context *ctx);
yolo_status yolo_mode_val(const yolo_mode_context *ctx);
yolo_status yolo_mode_predict(const yolo_mode_context *ctx);
/* val keeping what it measured (the host API's yolo_run): names[n] are the
 * task's results.csv columns (owned by the plugin), values[n] and fitness
 * their numbers. yolo_mode_val is this with the outcome dropped. */
typedef struct yolo_val_outcome {
    int n;
    const char *const *names;
    double values[32];
    double fitness;
} yolo_val_outcome;
yolo_status yolo_mode_val_run(const yolo_mode_context *ctx, yolo_val_outcome *out);
yolo_status yolo_mode_info(const yolo_mode_context *ctx);
yolo_status yolo_mode_export(const yolo_mode_context *ctx); /* core/interop/mode_export.c */

/* The ranks `train` runs on: world= / device= of the command line, else,
 * when resuming, the world the checkpoint's run had (core/train/resume.c). */
yolo_status yolo_train_launch_world(const yolo_mode_context *ctx, int *world);

#endif
