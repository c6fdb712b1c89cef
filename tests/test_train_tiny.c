/* The training loop end to end at a size the ASan+UBSan pass of CI runs
 * (issue 14): detect, segment and classify each train 2 epochs on a
 * handful of 64x48 images at imgsz 64 with a tiny model yaml and two data
 * loader workers, then predict with the last checkpoint. Under the
 * sanitizers (YOLO_SANITIZED) any memory error or undefined behaviour in
 * the loop (loader threads, augmentation, the graph, the optimizer, EMA,
 * checkpoints, validation) aborts the run; the results must also be
 * complete: two rows of finite losses. Runs in every build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static char dir[512];

static void fixture(void) {
    test_write_tiny_models(dir);
    for (unsigned i = 0; i < 6; i++) {
        char rel[128];
        test_write_tiny_sample(dir, (int)i, 64, 48);
        snprintf(rel, sizeof rel, "classes/%s/%s/%u.jpg", i < 4 ? "train" : "val", i % 2 ? "cat" : "dog", i);
        test_write_jpeg(dir, rel, 64, 48, i);
    }
    test_write_jpeg(dir, "classes/train/cat/extra.jpg", 64, 48, 9);
    test_write_jpeg(dir, "classes/train/dog/extra.jpg", 64, 48, 8);
    test_write_jpeg(dir, "classes/val/dog/extra.jpg", 64, 48, 7);
    test_write_jpeg(dir, "classes/val/cat/extra.jpg", 64, 48, 6);
}

static void train_and_predict(const char *task, const char *model, const char *data, const char *loss_column) {
    char args[1024], path[1024];
    snprintf(args, sizeof args,
             "%s train model=%s data=%s epochs=2 imgsz=64 batch=2 nbs=2 workers=2 warmup_epochs=0 close_mosaic=1 "
             "project=runs name=%s",
             task, model, data, task);
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "yolo %s exited %d (see %s/log.txt)", args, rc, dir);
    if (rc) return;
    snprintf(path, sizeof path, "%s/runs/%s/results.csv", dir, task);
    double loss[8];
    int n = test_csv_column(path, loss_column, loss, 8);
    CHECK_MSG(n == 2, "%s: %d rows of %s", path, n, loss_column);
    for (int i = 0; i < n; i++) CHECK_MSG(isfinite(loss[i]) && loss[i] > 0, "%s: %s[%d] = %g", task, loss_column, i, loss[i]);
    snprintf(args, sizeof args, "%s predict model=runs/%s/weights/last.ckpt source=%s imgsz=64 project=runs name=%s-p",
             task, task, strcmp(task, "classify") ? "boxes/images" : "classes/val", task);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "yolo %s exited %d (see %s/log.txt)", args, rc, dir);
    printf("%s: 2 epochs, %s %.3f -> %.3f, predicted\n", task, loss_column, n == 2 ? loss[0] : NAN,
           n == 2 ? loss[1] : NAN);
}

int main(void) {
    if (!test_temp_run_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    fixture();
    train_and_predict("detect", "det.yaml", "boxes.yaml", "train/box_loss");
    train_and_predict("segment", "seg.yaml", "polys.yaml", "train/seg_loss");
    train_and_predict("classify", "cls.yaml", "classes", "train/loss");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_result("test_train_tiny");
}
