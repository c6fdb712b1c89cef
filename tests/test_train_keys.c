/* The train/predict keys of issue 14, each shown by a run with and without
 * it (the built-in shapes detect data, imgsz 32, one epoch):
 *   fraction=0.25  trains on round(n / 4) of the n train images;
 *                  (with freeze=3, in one run)
 *   freeze=3       fine-tuning leaves layers 0-2 bit-identical (weights and
 *                  batch-norm running statistics, model and EMA), while an
 *                  unfrozen layer changes;
 *   time=1e-6      stops after the first epoch of epochs=5 (one results row);
 *   profile=True   prints the per-op timing table;
 *   save=False save_txt=False  predict writes nothing; save_txt=True writes
 *                  labels/, save=True predictions.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckpt/ckpt_file.h"
#include "test_util.h"

/* The log of the last yolo run in dir. */
static char *last_log(const char *dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    return test_read_text(path);
}

/* "train: N images" of the last run's log (-1: none). */
static long train_images(const char *dir) {
    char *log = last_log(dir);
    const char *at = log ? strstr(log, "train: ") : NULL;
    long n = at ? strtol(at + 7, NULL, 10) : -1;
    free(log);
    return n;
}

static bool exists(const char *dir, const char *rel) {
    char path[1200];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return stat(path, &sb) == 0;
}

static bool same_tensor(const yolo_ckpt *a, yolo_ckpt_blob_id ia, const yolo_ckpt *b, yolo_ckpt_blob_id ib,
                        const char *name) {
    const yolo_st_tensor *x = yolo_ckpt_get_tensor(a, ia, name), *y = yolo_ckpt_get_tensor(b, ib, name);
    CHECK_MSG(x && y, "tensor %s missing", name);
    return x && y && x->nbytes == y->nbytes && memcmp(x->data, y->data, x->nbytes) == 0;
}

static void check_freeze(const char *dir) {
    char a_path[700], b_path[700];
    snprintf(a_path, sizeof a_path, "%s/runs/detect/train/weights/last.ckpt", dir);
    snprintf(b_path, sizeof b_path, "%s/runs/detect/frozen/weights/last.ckpt", dir);
    yolo_ckpt *a = NULL, *b = NULL;
    CHECK_MSG(yolo_ckpt_read(a_path, &a) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(yolo_ckpt_read(b_path, &b) == YOLO_OK, "%s", yolo_last_error());
    if (!a || !b) goto done;
    /* fine-tuning loads A's EMA into the model (and its EMA copy) */
    static const char *const frozen[] = {"model.0.conv.weight", "model.0.bn.weight",       "model.0.bn.bias",
                                         "model.0.bn.running_mean", "model.0.bn.running_var", "model.1.conv.weight",
                                         "model.2.cv1.conv.weight", "model.2.cv1.bn.running_var"};
    for (size_t i = 0; i < sizeof frozen / sizeof *frozen; i++) {
        CHECK_MSG(same_tensor(a, YOLO_CKPT_EMA, b, YOLO_CKPT_MODEL, frozen[i]), "freeze=3: model %s changed", frozen[i]);
        CHECK_MSG(same_tensor(a, YOLO_CKPT_EMA, b, YOLO_CKPT_EMA, frozen[i]), "freeze=3: EMA %s changed", frozen[i]);
    }
    CHECK_MSG(!same_tensor(a, YOLO_CKPT_EMA, b, YOLO_CKPT_MODEL, "model.3.conv.weight"), "freeze=3: layer 3 did not train");
    CHECK_MSG(!same_tensor(a, YOLO_CKPT_EMA, b, YOLO_CKPT_MODEL, "model.3.bn.running_mean"),
              "freeze=3: layer 3's batch-norm statistics did not move");
done:
    yolo_ckpt_free(a);
    yolo_ckpt_free(b);
}

int main(void) {
    if (getenv("YOLO_SANITIZED")) return test_skip("end-to-end trainings take minutes under ASan; the Release run covers them");
    char dir[512];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    char env[600];
    snprintf(env, sizeof env, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", env, 1);
    const char *base = "detect train data=shapes model=yolov8n.yaml imgsz=32 batch=16 workers=1 val=False";
    char args[1400];

    snprintf(args, sizeof args, "%s epochs=1 name=train", base);
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "baseline train exited %d (see %s/log.txt)", rc, dir);
    long all = train_images(dir);
    CHECK_MSG(all > 8, "baseline: %ld train images", all);

    /* fraction and freeze in one (fine-tuning) run, to keep the test short */
    snprintf(args, sizeof args,
             "%s epochs=1 name=frozen fraction=0.25 freeze=3 model=runs/detect/train/weights/last.ckpt", base);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "fraction=0.25 freeze=3 exited %d (see %s/log.txt)", rc, dir);
    long quarter = train_images(dir);
    CHECK_MSG(quarter == (all + 2) / 4 || quarter == all / 4, "fraction=0.25: %ld of %ld images", quarter, all);
    char *log = last_log(dir);
    CHECK_MSG(log && strstr(log, "Freezing layer 'model.0.conv.weight'") && strstr(log, "Freezing layer 'model.22.dfl"),
              "freeze=3 log: %s", log ? log : "(none)");
    free(log);
    if (rc == 0) check_freeze(dir);

    snprintf(args, sizeof args, "%s epochs=5 name=timed time=0.000001 fraction=0.25", base);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "time= exited %d (see %s/log.txt)", rc, dir);
    char csv[700];
    double loss[8];
    snprintf(csv, sizeof csv, "%s/runs/detect/timed/results.csv", dir);
    int rows = test_csv_column(csv, "train/box_loss", loss, 8);
    CHECK_MSG(rows == 1, "time=0.000001 epochs=5: %d epochs trained", rows);
    log = last_log(dir);
    CHECK_MSG(log && strstr(log, "training for 1 epochs"), "time= log: %s", log ? log : "(none)");
    free(log);

    /* predict: nothing written without save/save_txt; profile prints the table */
    snprintf(args, sizeof args,
             "detect predict model=runs/detect/train/weights/last.ckpt source=%s/shapes-v1/images/val imgsz=32 "
             "save=False save_txt=False profile=True name=quiet",
             env);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "predict save=False exited %d (see %s/log.txt)", rc, dir);
    CHECK_MSG(!exists(dir, "runs/detect/quiet"), "save=False save_txt=False made runs/detect/quiet");
    log = last_log(dir);
    CHECK_MSG(log && strstr(log, "profile=True: time per op") && strstr(log, "CONV2D"), "profile log: %s",
              log ? log : "(none)");
    free(log);
    snprintf(args, sizeof args,
             "detect predict model=runs/detect/train/weights/last.ckpt source=%s/shapes-v1/images/val imgsz=32 "
             "save=False save_txt=True name=txt",
             env);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "predict save_txt=True exited %d (see %s/log.txt)", rc, dir);
    CHECK(exists(dir, "runs/detect/txt/labels") && !exists(dir, "runs/detect/txt/predictions.json"));
    snprintf(args, sizeof args,
             "detect predict model=runs/detect/train/weights/last.ckpt source=%s/shapes-v1/images/val imgsz=32 "
             "name=json",
             env);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "predict exited %d (see %s/log.txt)", rc, dir);
    CHECK(!exists(dir, "runs/detect/json/labels") && exists(dir, "runs/detect/json/predictions.json"));

    return test_result("test_train_keys");
}
