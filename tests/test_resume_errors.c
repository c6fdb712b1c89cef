/* Resume edge cases and graceful stops, on a detect run cut from
 * `shapes` (64 images, 8 batches an epoch):
 *   - SIGINT during training finishes the step, writes last.ckpt and exits
 *     130; resuming it (mid-epoch when the signal fell inside an epoch)
 *     ends bit-identical to the uninterrupted run;
 *   - SIGTERM exits 143 with last.ckpt written;
 *   - resuming a finished run without a larger epochs exits 2 saying so;
 *   - a checkpoint of another task is refused naming both tasks;
 *   - a best.ckpt (fp16 EMA only) cannot be resumed; a changed key that
 *     may not change on resume is refused;
 *   - resuming with epochs, batch and imgsz changed runs and reports each. */
#include "resume_util.h"

#define ARGS "data=%s/det/data.yaml imgsz=64 batch=8 epochs=2 workers=0 device=cpu threads=2 seed=0"

static void spawn_named(const char *dir, const char *name, pid_t *pid) {
    char args[1024], log[64];
    snprintf(args, sizeof args, "detect train " ARGS " name=%s", dir, name);
    snprintf(log, sizeof log, "%s.txt", name);
    *pid = resume_spawn(dir, args, log);
    CHECK(*pid > 0);
}

/* Runs yolo in dir (log.txt); the exit code. */
static int yolo(const char *dir, const char *args) { return test_run_yolo(dir, args); }

/* Rewrites a results.csv as it was before its time column: the second field of every line dropped. */
static void drop_time_column(const char *path) {
    char *text = test_read_text(path);
    FILE *f = text ? fopen(path, "w") : NULL;
    for (char *line = text; f && line && *line;) {
        char *end = strchr(line, '\n'), *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        if (!end || !c2 || c2 > end) break;
        fprintf(f, "%.*s%.*s", (int)(c1 - line), line, (int)(end + 1 - c2), c2);
        line = end + 1;
    }
    CHECK(f != NULL);
    if (f) fclose(f);
    free(text);
}

int main(void) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("several trainings take minutes under sanitizers; the Release run covers it");
    char dir[512], path[1200];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    snprintf(path, sizeof path, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", path, 1);
    snprintf(path, sizeof path, "%s/det", dir);
    CHECK(resume_shapes_subset(path, 64, 16, 0));
    if (test_failures) return test_result("test_resume_errors");
    double t0 = resume_now();

    /* a: uninterrupted; b: SIGINT after epoch 1's checkpoint; c: SIGTERM once training runs */
    pid_t a = 0, b = 0, c = 0;
    spawn_named(dir, "a", &a);
    spawn_named(dir, "b", &b);
    spawn_named(dir, "c", &c);
    if (a <= 0 || b <= 0 || c <= 0) return test_result("test_resume_errors");
    char b_csv[1200], b_last[1200], b_tmp[1200], c_last[1200];
    snprintf(b_csv, sizeof b_csv, "%s/runs/detect/b/results.csv", dir);
    snprintf(b_last, sizeof b_last, "%s/runs/detect/b/weights/last.ckpt", dir);
    snprintf(b_tmp, sizeof b_tmp, "%s/runs/detect/b/weights/last.ckpt.tmp", dir);
    snprintf(c_last, sizeof c_last, "%s/runs/detect/c/weights/last.ckpt", dir);
    int a_rc = -1000, b_rc = -1000, c_rc = -1000;
    bool b_sent = false, c_sent = false;
    while (a_rc == -1000 || b_rc == -1000 || c_rc == -1000) {
        if (a_rc == -1000) resume_ended(a, &a_rc);
        if (b_rc == -1000 && resume_ended(b, &b_rc) && !b_sent)
            CHECK_MSG(false, "b ended (exit %d) before SIGINT was sent (see %s/b.txt)", b_rc, dir);
        if (c_rc == -1000 && resume_ended(c, &c_rc) && !c_sent)
            CHECK_MSG(false, "c ended (exit %d) before SIGTERM was sent (see %s/c.txt)", c_rc, dir);
        if (!b_sent && b_rc == -1000 && resume_csv_rows(b_csv) >= 1 && !resume_exists(b_tmp) &&
            resume_mtime(b_last) >= resume_mtime(b_csv)) {
            /* into epoch 2: a tenth of epoch 1's time (training and
             * validation, the csv's time column) after its checkpoint; a
             * fixed 400 ms outlasted all of epoch 2 once steps got faster */
            double t1 = 0;
            int ms = test_csv_column(b_csv, "time", &t1, 1) == 1 ? (int)(t1 * 100.0) : 100;
            resume_sleep_ms(ms < 10 ? 10 : ms > 400 ? 400 : ms);
            kill(b, SIGINT);
            b_sent = true;
        }
        if (!c_sent && c_rc == -1000 && resume_file_mentions(dir, "c.txt", "Starting training")) {
            kill(c, SIGTERM);
            c_sent = true;
        }
        resume_sleep_ms(20);
    }
    CHECK_MSG(a_rc == 0, "a exited %d (see %s/a.txt)", a_rc, dir);
    CHECK_MSG(b_rc == 130, "SIGINT: exit %d, expected 130 (see %s/b.txt)", b_rc, dir);
    CHECK_MSG(c_rc == 143, "SIGTERM: exit %d, expected 143 (see %s/c.txt)", c_rc, dir);
    char a_copy[1200];
    snprintf(path, sizeof path, "%s/runs/detect/a/weights/last.ckpt", dir);
    snprintf(a_copy, sizeof a_copy, "%s/a-epoch2.ckpt", dir);
    CHECK(resume_copy_file(path, a_copy, 0)); /* a is extended below */
    CHECK(resume_file_mentions(dir, "b.txt", "training stopped by SIGINT"));
    CHECK(resume_file_mentions(dir, "c.txt", "training stopped by SIGTERM"));
    long long b_batch = -1, c_batch = -1;
    long long b_epoch = resume_ckpt_epoch(b_last, &b_batch), c_epoch = resume_ckpt_epoch(c_last, &c_batch);
    CHECK_MSG(b_epoch >= 0, "b: last.ckpt after SIGINT: epoch %lld", b_epoch);
    CHECK_MSG(c_epoch >= -1, "c: last.ckpt after SIGTERM unreadable");
    printf("SIGINT: exit %d, last.ckpt at epoch %lld batch %lld; SIGTERM: exit %d, last.ckpt at epoch %lld batch %lld\n",
           b_rc, b_epoch + 1, b_batch, c_rc, c_epoch + 1, c_batch);

    /* resume b (in the background) while a's checks run */
    pid_t rb = resume_spawn(dir, "detect train resume model=runs/detect/b/weights/last.ckpt", "b-resumed.txt");
    CHECK(rb > 0);

    /* a finished run: resume without a larger epochs */
    int rc = yolo(dir, "detect train resume model=runs/detect/a/weights/last.ckpt");
    CHECK_MSG(rc == 2, "finished run resumed: exit %d, expected 2", rc);
    CHECK(resume_file_mentions(dir, "log.txt", "training already finished"));
    CHECK(resume_file_mentions(dir, "log.txt", "larger epochs"));
    /* another task's checkpoint */
    rc = yolo(dir, "segment train resume model=runs/detect/a/weights/last.ckpt");
    CHECK_MSG(rc != 0, "a detect checkpoint resumed as segment: exit %d", rc);
    CHECK(resume_file_mentions(dir, "log.txt", "task 'detect'"));
    CHECK(resume_file_mentions(dir, "log.txt", "task 'segment'"));
    /* best.ckpt holds the fp16 EMA only */
    rc = yolo(dir, "detect train resume=runs/detect/a/weights/best.ckpt epochs=3");
    CHECK_MSG(rc == 2, "best.ckpt resumed: exit %d, expected 2", rc);
    CHECK(resume_file_mentions(dir, "log.txt", "cannot be resumed"));
    /* a key that may not change on resume */
    rc = yolo(dir, "detect train resume model=runs/detect/a/weights/last.ckpt epochs=3 lr0=0.02");
    CHECK_MSG(rc == 2, "lr0 changed on resume: exit %d, expected 2", rc);
    CHECK(resume_file_mentions(dir, "log.txt", "cannot change on resume"));
    /* a results.csv written before its time column (epoch,train/...) keeps its rows on resume */
    snprintf(path, sizeof path, "%s/runs/detect/a/results.csv", dir);
    drop_time_column(path);
    /* extend with another batch and image size */
    rc = yolo(dir, "detect train resume model=runs/detect/a/weights/last.ckpt epochs=3 batch=16 imgsz=96");
    CHECK_MSG(rc == 0, "resume with epochs=3 batch=16 imgsz=96: exit %d (see %s/log.txt)", rc, dir);
    CHECK(resume_file_mentions(dir, "log.txt", "Resuming with batch 16 (was 8)"));
    CHECK(resume_file_mentions(dir, "log.txt", "Resuming with imgsz 96 (was 64)"));
    CHECK(resume_file_mentions(dir, "log.txt", "Resuming with epochs 3 (was 2)"));
    CHECK(resume_file_mentions(dir, "log.txt", "schedule is recomputed"));
    snprintf(path, sizeof path, "%s/runs/detect/a/results.csv", dir);
    CHECK_MSG(resume_csv_rows(path) == 3, "extended run: results.csv has %d rows", resume_csv_rows(path));
    CHECK(resume_file_mentions(dir, "runs/detect/a/results.csv", "epoch,time,train/box_loss") &&
          resume_file_mentions(dir, "runs/detect/a/results.csv", "\n1,,") &&
          resume_file_mentions(dir, "runs/detect/a/results.csv", "\n2,,"));
    snprintf(path, sizeof path, "%s/runs/detect/a2", dir);
    CHECK_MSG(!resume_exists(path), "resume made a new run directory %s", path);

    /* b resumed ends where a ended (a's last.ckpt as it was before the extension) */
    int rb_rc = rb > 0 ? resume_wait(rb) : -1;
    CHECK_MSG(rb_rc == 0, "resume after SIGINT: exit %d (see %s/b-resumed.txt)", rb_rc, dir);
    if (rb_rc == 0) {
        int diff = resume_compare_ckpts(a_copy, b_last);
        CHECK_MSG(diff == 0, "SIGINT + resume differs from the uninterrupted run in %d tensors/counters", diff);
        if (diff == 0) printf("SIGINT + resume: bit-identical to the uninterrupted run\n");
    }
    printf("%.0f s\n", resume_now() - t0);
    return test_result("test_resume_errors");
}
