/* The Ultralytics DDP scenarios, on two CPU ranks
 * (`world=2`, re-launched under mpirun), for detect, segment and classify:
 *   kill     a 3-class run is SIGKILLed (every process) once rank 0 has
 *            written epoch 1's last.ckpt;
 *   1        a new run on another nc from that last.ckpt without resume
 *            fine-tunes from epoch 1 (the head is fresh, the rest
 *            transferred);
 *   2        `resume` continues the killed run to its last epoch, on the
 *            two ranks the run had (re-launched from the checkpoint's args);
 *   3        `resume batch=4 world=2` (was 8) continues a copy of it (a
 *            world given on the command line wins: the global batch makes a
 *            run resumable on any number of ranks).
 * Rank 0 reads each checkpoint and sends it to the other rank. */
#include "ddp_util.h"
#include "resume_util.h"

typedef struct task_case {
    const char *task, *data3, *data_other, *args;
    int other_nc;
} task_case;

static const task_case cases[] = {
    {"detect", "det3/data.yaml", "det5/data.yaml", "imgsz=64", 5},
    {"segment", "det3/data.yaml", "det5/data.yaml", "imgsz=64", 5},
    {"classify", "cls3", "cls2", "imgsz=32", 2},
};

#define COMMON "epochs=4 batch=8 workers=1 threads=1 world=2 val=true"

static void copy_tree(const char *from, const char *to) {
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", from, to);
    CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
}

static void scenario(const char *dir, const task_case *c) {
    const char *t = c->task;
    char args[2048], log[64], csv[1200], last[1200];
    double t0 = resume_now();

    /* killed (every process of the run: yolo, mpirun, both ranks) once epoch 1's last.ckpt is written */
    char tag[64], tmp[1300];
    snprintf(tag, sizeof tag, "name=base%d", (int)getpid());
    snprintf(args, sizeof args, "%s train data=%s/%s %s " COMMON " %s", t, dir, c->data3, c->args, tag);
    snprintf(log, sizeof log, "%s-base.txt", t);
    pid_t pid = resume_spawn(dir, args, log);
    snprintf(csv, sizeof csv, "%s/runs/%s/base%d/results.csv", dir, t, (int)getpid());
    snprintf(last, sizeof last, "%s/runs/%s/base%d/weights/last.ckpt", dir, t, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", last);
    int rc = -1000;
    while (!resume_ended(pid, &rc) &&
           !(resume_csv_rows(csv) >= 1 && !resume_exists(tmp) && resume_mtime(last) >= resume_mtime(csv)))
        resume_sleep_ms(10);
    if (rc == -1000) {
        pid_t all[8];
        int n = ddp_pids(tag, -1, all, 8);
        for (int i = 0; i < n; i++) kill(all[i], SIGKILL);
        rc = resume_wait(pid);
    }
    long long batch = -1, epoch = resume_ckpt_epoch(last, &batch);
    printf("%s: killed (exit %d); last.ckpt after epoch %lld, sampler batch %lld\n", t, rc, epoch + 1, batch);
    CHECK_MSG(rc == 128 + SIGKILL, "%s: the base run should have been killed (exit %d, see %s/%s)", t, rc, dir, log);
    CHECK_MSG(epoch >= 0 && epoch <= 2, "%s: last.ckpt of the killed run: epoch %lld", t, epoch);
    snprintf(log, sizeof log, "%s-base.txt", t);
    CHECK(resume_file_mentions(dir, log, "DDP: 2 ranks"));
    char from[1200], to[1200];
    snprintf(from, sizeof from, "%s/runs/%s/base%d", dir, t, (int)getpid());
    snprintf(to, sizeof to, "%s/runs/%s/copy", dir, t);
    copy_tree(from, to);

    /* 1: another nc, no resume: a new run from epoch 1 */
    snprintf(args, sizeof args,
             "%s train model=%s data=%s/%s %s epochs=1 batch=8 workers=1 threads=1 world=2 name=tuned", t, last, dir,
             c->data_other, c->args);
    snprintf(log, sizeof log, "%s-tuned.txt", t);
    rc = resume_wait(resume_spawn(dir, args, log));
    CHECK_MSG(rc == 0, "%s: fine-tune exited %d (see %s/%s)", t, rc, dir, log);
    CHECK_MSG(resume_file_mentions(dir, log, "Transferred") && !resume_file_mentions(dir, log, "Resuming"),
              "%s: the fine-tune did not transfer weights into a new run (see %s/%s)", t, dir, log);
    snprintf(csv, sizeof csv, "%s/runs/%s/tuned/results.csv", dir, t);
    double epochs[4] = {0};
    CHECK_MSG(test_csv_column(csv, "epoch", epochs, 4) == 1 && epochs[0] == 1.0, "%s: %s: expected one row, epoch 1",
              t, csv);
    char tuned[1200];
    snprintf(tuned, sizeof tuned, "%s/runs/%s/tuned/weights/last.ckpt", dir, t);
    yolo_ckpt *ck = NULL;
    CHECK_MSG(yolo_ckpt_read(tuned, &ck) == YOLO_OK, "%s: %s", tuned, yolo_last_error());
    if (ck) {
        int64_t nc = 0;
        CHECK(yolo_meta_get_int(yolo_ckpt_meta(ck), "nc", "meta.yaml", &nc) == YOLO_OK && nc == c->other_nc);
        yolo_ckpt_free(ck);
    }

    /* 2: resume continues to the last epoch */
    snprintf(args, sizeof args, "%s train resume model=%s", t, last); /* on the checkpoint's 2 ranks */
    snprintf(log, sizeof log, "%s-resumed.txt", t);
    rc = resume_wait(resume_spawn(dir, args, log));
    CHECK_MSG(rc == 0, "%s: resume exited %d (see %s/%s)", t, rc, dir, log);
    CHECK(resume_file_mentions(dir, log, "Resuming training from") && resume_file_mentions(dir, log, "DDP: 2 ranks"));
    snprintf(csv, sizeof csv, "%s/runs/%s/base%d/results.csv", dir, t, (int)getpid());
    CHECK_MSG(resume_csv_rows(csv) == 4, "%s: resumed run has %d results rows, expected 4", t, resume_csv_rows(csv));

    /* 3: resume with another batch */
    snprintf(args, sizeof args, "%s train resume model=runs/%s/copy/weights/last.ckpt batch=4 world=2", t, t);
    snprintf(log, sizeof log, "%s-rebatched.txt", t);
    rc = resume_wait(resume_spawn(dir, args, log));
    CHECK_MSG(rc == 0, "%s: resume batch=4 exited %d (see %s/%s)", t, rc, dir, log);
    CHECK(resume_file_mentions(dir, log, "Resuming with batch 4 (was 8)") && resume_file_mentions(dir, log, "DDP: 2 ranks"));
    snprintf(csv, sizeof csv, "%s/runs/%s/copy/results.csv", dir, t);
    CHECK_MSG(resume_csv_rows(csv) == 4, "%s: resumed copy has %d results rows, expected 4", t, resume_csv_rows(csv));
    printf("%s: scenarios done in %.0f s\n", t, resume_now() - t0);
}

int main(void) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("twelve two-rank trainings take minutes under sanitizers; the Release run covers them");
    char dir[512], path[700];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    snprintf(path, sizeof path, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", path, 1);
    snprintf(path, sizeof path, "%s/det3", dir);
    CHECK(resume_shapes_subset(path, 32, 8, 0));
    snprintf(path, sizeof path, "%s/det5", dir);
    CHECK(resume_shapes_subset(path, 32, 8, 5));
    snprintf(path, sizeof path, "%s/cls3", dir);
    CHECK(resume_shapes_classify_classes(path, 12, 4, 3));
    snprintf(path, sizeof path, "%s/cls2", dir);
    CHECK(resume_shapes_classify_classes(path, 12, 4, 2));
    if (test_failures) return test_result("test_ddp_resume");
    /* the global batch must split evenly: every rank says so, the launcher passes the exit code on */
    char args[1024];
    snprintf(args, sizeof args, "detect train data=%s/det3/data.yaml imgsz=64 batch=7 epochs=1 world=2", dir);
    int rc = resume_wait(resume_spawn(dir, args, "odd-batch.txt"));
    CHECK_MSG(rc == 2 && resume_file_mentions(dir, "odd-batch.txt", "batch=7 (command line) is the global batch: it "
                                                                     "must be a multiple of the 2 ranks"),
              "batch=7 world=2: exit %d (see %s/odd-batch.txt)", rc, dir);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (!resume_plugin_has_hooks(cases[i].task)) {
            printf("%s: skipped: no training hooks\n", cases[i].task);
            continue;
        }
        scenario(dir, &cases[i]);
    }
    return test_result("test_ddp_resume");
}
