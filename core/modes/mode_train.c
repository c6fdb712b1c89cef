/* `yolo train`: the trainer (train/trainer.h) set up, run and closed. */
#include "cli/modes.h"
#include "train/trainer.h"

yolo_status yolo_mode_train(const yolo_mode_context *ctx) {
    yolo_trainer t;
    yolo_status st = yolo_trainer_open(&t, ctx);
    if (!st) st = yolo_trainer_run(&t);
    /* also after a cancel or a failure: last.ckpt may be there */
    if (ctx->wrote) snprintf(ctx->wrote, ctx->wrote_size, "%s", t.s.run_dir);
    yolo_trainer_close(&t);
    return st;
}
