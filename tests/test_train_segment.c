/* End to end: `yolo segment train data=shapes` for a short run of the
 * built binary. The losses (box, seg, cls) must fall and the mask mAP50
 * must rise from the untrained model's 0 (its scores sit at the bias prior
 * and, early on, the eval-mode batch norm statistics are still the initial
 * ones) to well above chance: 0.05 after 5 epochs of 32 batches of 4 at
 * 96 px, where runs on this machine reach about 0.3, so the test is not
 * flaky. About a minute on 2 cores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

int main(int argc, char **argv) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("training end to end takes minutes under ASan; the Release run covers it");
    char dir[512];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    char env[600];
    snprintf(env, sizeof env, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", env, 1);
    char args[600]; /* argv[1]: another model yaml (tests/model_families.cmake) */
    snprintf(args, sizeof args,
             "segment train data=shapes model=%s epochs=5 imgsz=96 batch=4 nbs=4 warmup_epochs=0 workers=2 "
             "close_mosaic=2",
             argc > 1 ? argv[1] : "yolov8n-seg.yaml");
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "yolo segment train exited %d (see %s/log.txt)", rc, dir);
    char csv[700];
    snprintf(csv, sizeof csv, "%s/runs/segment/train/results.csv", dir);
    double box[64], seg[64], cls[64], map50m[64], map50b[64];
    int n = test_csv_column(csv, "train/box_loss", box, 64);
    CHECK_MSG(n == 5, "results.csv has %d rows", n);
    CHECK(test_csv_column(csv, "train/seg_loss", seg, 64) == n);
    CHECK(test_csv_column(csv, "train/cls_loss", cls, 64) == n);
    CHECK(test_csv_column(csv, "metrics/mAP50(M)", map50m, 64) == n);
    CHECK(test_csv_column(csv, "metrics/mAP50(B)", map50b, 64) == n);
    double tmp[64], sem[64];
    CHECK(test_csv_column(csv, "val/seg_loss", tmp, 64) == n);
    /* Ultralytics 8.4's sem_loss column: Segment26's semantic term, falling; 0 for the other heads */
    const bool proto26 = argc > 1 && strstr(argv[1], "yolo26");
    CHECK(test_csv_column(csv, "train/sem_loss", sem, 64) == n);
    if (n == 5)
        CHECK_MSG(proto26 ? sem[0] > 0 && sem[n - 1] < 0.9 * sem[0] : sem[0] == 0 && sem[n - 1] == 0,
                  "sem loss %g -> %g", sem[0], sem[n - 1]);
    CHECK(test_csv_column(csv, "val/sem_loss", tmp, 64) == n && tmp[n - 1] == 0);
    CHECK(test_csv_column(csv, "metrics/mAP50-95(M)", tmp, 64) == n);
    if (n == 5) {
        CHECK_MSG(box[n - 1] < box[0], "box loss %g -> %g", box[0], box[n - 1]);
        CHECK_MSG(seg[n - 1] < 0.9 * seg[0], "seg loss %g -> %g", seg[0], seg[n - 1]);
        CHECK_MSG(cls[n - 1] < 0.9 * cls[0], "cls loss %g -> %g", cls[0], cls[n - 1]);
        /* the best epoch: five epochs at 96 px swing from epoch to epoch (validation runs in Ultralytics'
         * rectangular batches, 96 px images padded to 128) */
        double best = map50m[0];
        for (int e = 1; e < n; e++) best = map50m[e] > best ? map50m[e] : best;
        CHECK_MSG(best > 0.05 && map50m[n - 1] > map50m[0], "mask mAP50 %g -> %g (best %g)", map50m[0], map50m[n - 1],
                  best);
        printf("box loss %.3f -> %.3f, seg loss %.3f -> %.3f, cls loss %.3f -> %.3f, mAP50(B) %.3f -> %.3f, "
               "mAP50(M) %.3f -> %.3f\n",
               box[0], box[n - 1], seg[0], seg[n - 1], cls[0], cls[n - 1], map50b[0], map50b[n - 1], map50m[0],
               map50m[n - 1]);
    }
    /* plots=True: the mask curves beside the box curves, and a mosaic of predicted masks */
    static const char *const pictures[4] = {"MaskPR_curve.png", "BoxPR_curve.png", "val_batch0_pred.jpg", "confusion_matrix.png"};
    for (int k = 0; k < 4 && rc == 0; k++) {
        char path[800];
        snprintf(path, sizeof path, "%s/runs/segment/train/%s", dir, pictures[k]);
        CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
    }
    return test_result("test_train_segment");
}
