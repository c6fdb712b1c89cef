/* End to end: the augmentation keys of issue 14 in short trainings of the
 * built binary on the built-in shapes data (tiny images, few epochs):
 *   - segment train with copy_paste=0.5 (flip mode, mosaic on, then
 *     closed for the last epoch) and with copy_paste_mode=mixup;
 *   - classify train with auto_augment=autoaugment, augmix and null (the
 *     hsv_* colour jitter); randaugment, the default, is test_train_classify's;
 *   - bad values refused before training, naming the value and the valid
 *     ones: auto_augment=trivialaugment, copy_paste_mode=paste,
 *     copy_paste=1.5; and copy_paste on a task without polygons (detect),
 *     a classify key on detect (erasing) and detect keys (mosaic) or hsv_*
 *     beside a policy on classify say they have no effect.
 * The augmentations' effects themselves are shown by
 * test_augment_copy_paste and test_augment_policies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static bool log_has(const char *dir, const char *a, const char *b) {
    char path[700];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = test_read_text(path);
    bool ok = log && strstr(log, a) && (!b || strstr(log, b));
    if (!ok) fprintf(stderr, "log (wanted '%s'%s%s):\n%s\n", a, b ? " and " : "", b ? b : "", log ? log : "(none)");
    free(log);
    return ok;
}

/* A training run: exit 0 and `epochs` finite rows of `column` in runs/<task>/<name>/results.csv. */
static void train(const char *dir, const char *task, const char *name, const char *args, int epochs,
                  const char *column) {
    char cmd[1200], csv[900];
    snprintf(cmd, sizeof cmd, "%s train data=shapes name=%s %s", task, name, args);
    int rc = test_run_yolo(dir, cmd);
    CHECK_MSG(rc == 0, "yolo %s exited %d (see %s/log.txt)", cmd, rc, dir);
    snprintf(csv, sizeof csv, "%s/runs/%s/%s/results.csv", dir, task, name);
    double v[16];
    int n = test_csv_column(csv, column, v, 16);
    CHECK_MSG(n == epochs, "%s: %d rows in %s", name, n, csv);
    for (int i = 0; i < n; i++) CHECK_MSG(isfinite(v[i]) && v[i] > 0, "%s: %s %g in epoch %d", name, column, v[i], i + 1);
    if (n > 0) printf("%s: %s %.3f -> %.3f\n", name, column, v[0], v[n - 1]);
}

static void refused(const char *dir, const char *args, const char *a, const char *b) {
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 1 || rc == 2, "yolo %s exited %d", args, rc);
    CHECK_MSG(log_has(dir, a, b), "yolo %s: the error does not name '%s'", args, a);
}

int main(void) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("training end to end takes minutes under ASan; the Release run covers it");
    char dir[512];
    if (!test_e2e_dir(dir, sizeof dir)) return test_skip("no temporary directory");

    const char *seg = "model=yolov8n-seg.yaml imgsz=64 batch=4 nbs=4 warmup_epochs=0 workers=2 plots=False";
    char args[600];
    snprintf(args, sizeof args, "%s epochs=2 close_mosaic=1 copy_paste=0.5", seg);
    train(dir, "segment", "flip", args, 2, "train/seg_loss");
    snprintf(args, sizeof args, "%s epochs=1 fraction=0.25 close_mosaic=0 copy_paste=0.5 copy_paste_mode=mixup", seg);
    train(dir, "segment", "mixup", args, 1, "train/seg_loss");

    const char *cls = "model=yolov8n-cls.yaml epochs=2 imgsz=32 batch=16 nbs=16 workers=2 warmup_epochs=0 plots=False";
    static const char *const policies[] = {"autoaugment", "augmix", "null"};
    static const char *const names[] = {"autoaugment", "augmix", "jitter"}; /* name=null would be the default name */
    for (int k = 0; k < 3; k++) {
        /* keys classify does not read are said (the jitter is hsv_*'s only without a policy) */
        snprintf(args, sizeof args, "%s auto_augment=%s hsv_h=0.02 mosaic=0.5", cls, policies[k]);
        train(dir, "classify", names[k], args, 2, "train/loss");
        CHECK(log_has(dir, "mosaic=0.5 (command line) has no effect: it is a detect/segment training augmentation",
                      NULL));
        char log_path[600];
        snprintf(log_path, sizeof log_path, "%s/log.txt", dir);
        char *log = test_read_text(log_path);
        bool hsv_warned = log && strstr(log, "hsv_h=0.02 (command line) has no effect");
        CHECK_MSG(hsv_warned == (k < 2), "auto_augment=%s: hsv_h warning %d", policies[k], hsv_warned);
        free(log);
    }

    refused(dir, "classify train data=shapes epochs=1 imgsz=32 auto_augment=trivialaugment", "trivialaugment",
            "randaugment");
    refused(dir, "segment train data=shapes epochs=1 imgsz=64 copy_paste_mode=paste", "paste", "mixup");
    refused(dir, "segment train data=shapes epochs=1 imgsz=64 copy_paste=1.5", "copy_paste", NULL);
    /* detect labels carry no polygons: said, not silently skipped */
    int rc = test_run_yolo(dir, "detect train data=shapes model=yolov8n.yaml epochs=1 imgsz=32 batch=8 fraction=0.1 "
                                "val=False plots=False workers=0 copy_paste=0.5 erasing=0.1 name=detect");
    CHECK_MSG(rc == 0, "detect train with copy_paste exited %d", rc);
    CHECK(log_has(dir, "copy_paste=0.5 has no effect", "erasing=0.1 (command line) has no effect: it is a classify"));

    int result = test_result("test_train_augment");
    if (result == 0) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    return result;
}
