/* time= (hours) with resume (issue 14). Ultralytics recomputes epochs after
 * every epoch from the mean epoch time and writes the count into
 * args.epochs, so a resumed run continues the schedule it was on; its clock
 * restarts at the resume. Here the clock is the test hook
 * YOLO_TEST_EPOCH_SECONDS=1000 (each epoch "takes" 1000 s): time=0.8
 * (2880 s) with epochs=10 trains ceil(2880 / 1000) = 3 epochs. The run's
 * epoch1.ckpt (save_period=1), resumed as another run's last.ckpt, must end
 * bit-identical to the uninterrupted run: same epochs, same learning-rate
 * schedule (a resume that fell back to epochs=10 for its first epoch would
 * change the weights). */
#include "resume_util.h"

static char dir[512];

static void fixture(void) {
    test_write_tiny_models(dir);
    for (int i = 0; i < 6; i++) test_write_tiny_sample(dir, i, 64, 48);
}

static bool log_has(const char *needle) {
    size_t len = 0;
    char *log = (char *)test_read_file(dir, "log.txt", &len);
    bool has = log && strstr(log, needle);
    if (!has) fprintf(stderr, "log.txt lacks '%s':\n%s\n", needle, log ? log : "(none)");
    free(log);
    return has;
}

int main(void) {
#ifndef YOLO_TEST_HOOKS
    return test_skip("the YOLO_TEST_EPOCH_SECONDS clock is compiled out (configure with -DYOLO_TEST_HOOKS=ON)");
#endif
    if (getenv("YOLO_SANITIZED")) return test_skip("end-to-end trainings: the Release run covers them");
    if (!test_temp_run_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    setenv("YOLO_TEST_EPOCH_SECONDS", "1000", 1);
    fixture();
    const char *common = "model=det.yaml data=boxes.yaml imgsz=64 batch=2 nbs=2 workers=1 device=cpu threads=2 "
                         "plots=False val=False seed=0";
    char args[1024];
    snprintf(args, sizeof args, "detect train %s epochs=10 time=0.8 save_period=1 project=runs name=full", common);
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "timed run exited %d (see %s/log.txt)", rc, dir);
    CHECK(log_has("training for 3 epochs"));
    double loss[16];
    char path[1200], cmd[2600];
    snprintf(path, sizeof path, "%s/runs/full/results.csv", dir);
    int rows = test_csv_column(path, "train/box_loss", loss, 16);
    CHECK_MSG(rows == 3, "time=0.8 at 1000 s an epoch: %d epochs trained", rows);
    /* the same run cut after its first epoch, then resumed */
    snprintf(cmd, sizeof cmd, "cd '%s/runs' && cp -r full cut && cp cut/weights/epoch1.ckpt cut/weights/last.ckpt", dir);
    CHECK(system(cmd) == 0);
    rc = test_run_yolo(dir, "detect train resume model=runs/cut/weights/last.ckpt");
    CHECK_MSG(rc == 0, "resume exited %d (see %s/log.txt)", rc, dir);
    CHECK(log_has("Resuming training for 3 epochs"));
    snprintf(path, sizeof path, "%s/runs/cut/results.csv", dir);
    rows = test_csv_column(path, "train/box_loss", loss, 16);
    CHECK_MSG(rows == 3, "resumed: %d results rows", rows);
    char a[1200], b[1200];
    snprintf(a, sizeof a, "%s/runs/full/weights/last.ckpt", dir);
    snprintf(b, sizeof b, "%s/runs/cut/weights/last.ckpt", dir);
    int bad = resume_compare_ckpts(a, b);
    CHECK_MSG(bad == 0, "resumed time= run: %d tensors or counters differ from the uninterrupted run", bad);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_result("test_train_time_resume");
}
