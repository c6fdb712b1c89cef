/* End to end: `yolo classify train data=shapes` for a short run, then
 * `classify val` and `classify predict` with its best.ckpt.
 *
 * The built-in shapes classification split has 3 balanced classes (64
 * train and 16 val images each, 64 px), so chance top-1 is 1/3 and an
 * untrained model scores exactly 1/3 (it gives every image the same
 * class). The run below (EPOCHS epochs at 32 px, no random erasing) must
 *   - lower the training loss: the last epoch's below 0.8 x the first's
 *     (the first epoch starts near ln 3 = 1.0986);
 *   - raise top-1 above 0.5 at the best epoch and above chance at the
 *     last: 24 or more right out of 48 has a probability of about 1 % for
 *     a guesser (binomial, p = 1/3); the run measures above it by the
 *     margins below; the README's >= 0.9 needs a longer run (150 epochs
 *     at 64 px).
 *   - report top-5 = 1 every epoch (Ultralytics' n5 = min(nc, 5) = 3).
 * The run is bit-reproducible at a fixed seed, thread count and oneDNN
 * ISA; another ISA sums convolutions in another order and acts like
 * another seed. Spread measured on 2 threads (AMD EPYC, AVX-512; and the
 * same with ONEDNN_MAX_CPU_ISA=AVX2 for an AVX2 CPU's numerics), seeds
 * 0..2 x {AVX-512, AVX2} = 6 runs, yolov8n-cls (the test runs seed 0):
 *   last/first loss  0.721 .. 0.770 (mean 0.754, sd 0.021)  check < 0.8:
 *                    margin 0.030 over the worst, mean + 2.2 sd
 *   best top-1       0.542 .. 0.667 (mean 0.608, sd 0.053)  check > 0.5:
 *                    margin 0.042 (2 of 48) under the worst, mean - 2.0 sd
 *   last top-1       0.500 .. 0.667 (mean 0.580, sd 0.058)  check > 0.4:
 *                    margin 0.100 (5 of 48) under the worst, mean - 3.1 sd
 * (13 to 18 s of CPU per training run). Thresholds unchanged: they hold
 * on all 6 runs, by the thin margins above.
 * argv[1] names another model yaml (tests/model_families.cmake:
 * yolo11n-cls.yaml, yolo12n-cls.yaml). Their last stages attend over 2x2
 * and 1x1 positions at 32 px and learn slowly and unevenly in this run;
 * measured (seeds x ISAs as above):
 *   yolo12n-cls at 32 px (seed 0 x 2 ISAs, and a Zen 3 AVX2 CPU's seed 0):
 *     last/first loss 0.919 .. 0.939, best top-1 0.479 .. 0.5625 here and
 *     0.4375 on the Zen 3 CPU, last 0.458 .. 0.479;
 *   yolo12n-cls at 64 px (seeds 0..1 x 2 ISAs), 50 epochs, lr0=0.004: best
 *     top-1 0.48 .. 0.58, no better; yolo11n-cls at 64 px (seeds 0..3 x 2
 *     ISAs): best 0.396 .. 0.688, one run never learning (loss 1.10).
 * No accuracy threshold on these 48 images both holds on every CPU and
 * shows more than learning itself, so for them the checks are that it
 * learns at all: the loss below 0.97x the first epoch's (margin 0.031
 * over the worst, 0.939), the best top-1 at least 18 of 48 (0.375: a
 * model giving every image one class, as an untrained or broken one does,
 * scores 16; 3 images under the lowest measured, 21 on the Zen 3) and the
 * last above 16 of 48 (5 images under the lowest measured). Their
 * accuracy is the detect and segment families' end-to-end tests' and the
 * module gradient tests' to show (test_modules_families). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define EPOCHS 30

int main(int argc, char **argv) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("training end to end takes minutes under ASan; the Release run covers it");
    char dir[512];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    char env[600];
    snprintf(env, sizeof env, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", env, 1);
    char args[1400];
    snprintf(args, sizeof args,
             "classify train data=shapes model=%s epochs=%d imgsz=32 batch=16 nbs=16 workers=2 "
             "warmup_epochs=1 erasing=0 scale=0.3 flipud=0.5",
             argc > 1 ? argv[1] : "yolov8n-cls.yaml", EPOCHS); /* argv[1]: tests/model_families.cmake */
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "yolo classify train exited %d (see %s/log.txt)", rc, dir);
    char csv[700];
    snprintf(csv, sizeof csv, "%s/runs/classify/train/results.csv", dir);
    double loss[64], top1[64], top5[64], vloss[64];
    int n = test_csv_column(csv, "train/loss", loss, 64);
    CHECK_MSG(n == EPOCHS, "results.csv has %d rows", n);
    CHECK(test_csv_column(csv, "metrics/accuracy_top1", top1, 64) == n);
    CHECK(test_csv_column(csv, "metrics/accuracy_top5", top5, 64) == n);
    CHECK(test_csv_column(csv, "val/loss", vloss, 64) == n);
    if (n == EPOCHS) {
        double best = 0;
        for (int i = 0; i < n; i++) {
            best = fmax(best, top1[i]);
            CHECK_MSG(top5[i] == 1.0, "epoch %d: top-5 %g with 3 classes", i + 1, top5[i]);
            CHECK_MSG(isfinite(vloss[i]) && vloss[i] > 0, "epoch %d: val/loss %g", i + 1, vloss[i]);
        }
        CHECK_MSG(loss[0] > 0.9 && loss[0] < 2.0, "first epoch's loss %g (ln 3 = 1.0986 at the start)", loss[0]);
        /* see the file comment */
        const bool attends = argc > 1 && (strstr(argv[1], "yolo11") || strstr(argv[1], "yolo12"));
        CHECK_MSG(loss[n - 1] < (attends ? 0.97 : 0.8) * loss[0], "loss %g -> %g", loss[0], loss[n - 1]);
        CHECK_MSG(best > (attends ? 0.37 : 0.5), "best top-1 %g", best);
        CHECK_MSG(top1[n - 1] > (attends ? 0.34 : 0.4), "last top-1 %g", top1[n - 1]);
        printf("loss %.3f -> %.3f, top-1 %.3f -> %.3f (best %.3f), val loss %.3f -> %.3f\n", loss[0], loss[n - 1],
               top1[0], top1[n - 1], best, vloss[0], vloss[n - 1]);
    }

    /* classify val with best.ckpt: the Ultralytics table. */
    rc = test_run_yolo(dir, "classify val model=runs/classify/train/weights/best.ckpt data=shapes imgsz=32");
    CHECK_MSG(rc == 0, "yolo classify val exited %d (see %s/log.txt)", rc, dir);
    char path[1200];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = test_read_text(path);
    CHECK_MSG(log && strstr(log, "               classes   top1_acc   top5_acc\n                   all"),
              "val log:\n%s", log ? log : "(none)");
    free(log);

    /* cls_pw (Ultralytics 8.4) weights the box tasks' classification loss: refused here, naming the task */
    rc = test_run_yolo(dir, "classify train data=shapes imgsz=32 epochs=1 cls_pw=0.5 name=cls_pw");
    log = test_read_text(path);
    CHECK_MSG(rc == 2 && log && strstr(log, "cls_pw=0.5 (command line): task 'classify' takes no class weights"),
              "classify cls_pw=0.5: exit %d, log:\n%s", rc, log ? log : "(none)");
    free(log);

    /* classify predict on the val circles: three "0.93 circle" lines per image. */
    snprintf(args, sizeof args,
             "classify predict model=runs/classify/train/weights/best.ckpt source=%s/shapes-v1/classify/val/circle "
             "imgsz=32 save_txt=True",
             env);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "yolo classify predict exited %d (see %s/log.txt)", rc, dir);
    snprintf(path, sizeof path, "%s/runs/classify/predict/labels/000000.txt", dir);
    char *txt = test_read_text(path);
    CHECK_MSG(txt != NULL, "no %s", path);
    if (txt) {
        int lines = 0;
        double sum = 0, prev = 2;
        char name[64];
        double p;
        for (const char *s = txt; *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s)) {
            CHECK_MSG(sscanf(s, "%lf %63s", &p, name) == 2, "line: %s", s);
            CHECK_MSG(strcmp(name, "circle") == 0 || strcmp(name, "rectangle") == 0 || strcmp(name, "triangle") == 0,
                      "class name %s", name);
            CHECK_MSG(p <= prev, "not in descending order:\n%s", txt);
            prev = p, sum += p, lines++;
        }
        CHECK_MSG(lines == 3 && fabs(sum - 1) < 0.02, "%d lines, probabilities sum to %g:\n%s", lines, sum, txt);
        free(txt);
    }
    snprintf(path, sizeof path, "%s/runs/classify/predict/predictions.json", dir);
    char *json = test_read_text(path);
    CHECK_MSG(json && strstr(json, "\"top5\": [{\"class\": "), "predictions.json: %s", json ? json : "(none)");
    free(json);
    int result = test_result("test_train_classify");
    if (result == 0) { /* kept for inspection when a check failed */
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    return result;
}
