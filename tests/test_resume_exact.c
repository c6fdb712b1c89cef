/* Exact resume (issue 8): a 4-epoch run on `shapes`, SIGKILLed during
 * epoch 3 and resumed from its last.ckpt, ends bit-identical to the
 * uninterrupted 4-epoch run: model, EMA and optimizer tensors, the step
 * and update counters, and results.csv. Same device (cpu), same threads,
 * deterministic.
 *
 * The task is a parameter: every task in `cases` whose plugin has
 * training hooks (plugins/<task>/plugin.c sets `.hooks`) is run; the
 * others are reported as skipped. */
#include "resume_util.h"

typedef struct task_case {
    const char *task;
    const char *args; /* data and size, small enough for seconds per epoch */
} task_case;

static const task_case cases[] = {
    {"detect", "data=shapes imgsz=64 batch=8"},
    {"classify", "data=shapes imgsz=32 batch=8"},
    {"segment", "data=shapes imgsz=64 batch=8"},
};

#define COMMON "epochs=4 workers=0 device=cpu threads=2 deterministic=true seed=0"

static void run_case(const char *dir, const task_case *c) {
    char args[1024], path[1200], full[1200], killed[1200], csv[1200];
    double t0 = resume_now();
    /* 1. uninterrupted */
    snprintf(args, sizeof args, "%s train %s " COMMON " name=full", c->task, c->args);
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "%s: uninterrupted run exited %d (see %s/log.txt)", c->task, rc, dir);
    if (rc != 0) return;
    snprintf(full, sizeof full, "%s/runs/%s/full/weights/last.ckpt", dir, c->task);

    /* 2. the same run, SIGKILLed in epoch 3: once epoch 2's results row and last.ckpt are written */
    snprintf(args, sizeof args, "%s train %s " COMMON " name=killed", c->task, c->args);
    char log[64];
    snprintf(log, sizeof log, "%s-killed.txt", c->task);
    pid_t pid = resume_spawn(dir, args, log);
    CHECK(pid > 0);
    if (pid <= 0) return;
    snprintf(csv, sizeof csv, "%s/runs/%s/killed/results.csv", dir, c->task);
    snprintf(killed, sizeof killed, "%s/runs/%s/killed/weights/last.ckpt", dir, c->task);
    snprintf(path, sizeof path, "%s.tmp", killed);
    int code = -1;
    bool ended = false;
    for (;;) {
        if ((ended = resume_ended(pid, &code))) break;
        if (resume_csv_rows(csv) >= 2 && !resume_exists(path) && resume_mtime(killed) >= resume_mtime(csv)) break;
        resume_sleep_ms(20);
    }
    if (!ended) {
        resume_sleep_ms(300); /* into epoch 3's steps */
        kill(pid, SIGKILL);
        code = resume_wait(pid);
    }
    CHECK_MSG(!ended, "%s: the run ended (exit %d) before it could be killed (see %s/%s)", c->task, code, dir, log);
    CHECK_MSG(code == 128 + SIGKILL, "%s: killed run: status %d", c->task, code);
    long long sampler_batch = 0;
    long long epoch = resume_ckpt_epoch(killed, &sampler_batch);
    printf("%s: killed with last.ckpt at epoch %lld (%d results rows)\n", c->task, epoch + 1, resume_csv_rows(csv));
    CHECK_MSG(epoch == 1 || epoch == 2, "%s: last.ckpt of the killed run: epoch %lld", c->task, epoch);

    /* 3. resume */
    snprintf(args, sizeof args, "%s train resume model=runs/%s/killed/weights/last.ckpt", c->task, c->task);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "%s: resume exited %d (see %s/log.txt)", c->task, rc, dir);
    if (rc != 0) return;
    CHECK(resume_file_mentions(dir, "log.txt", "Resuming training from"));

    /* 4. the same end */
    int diff = resume_compare_ckpts(full, killed);
    CHECK_MSG(diff == 0, "%s: resumed last.ckpt differs from the uninterrupted run's in %d tensors/counters", c->task,
              diff);
    char full_csv[1200];
    snprintf(full_csv, sizeof full_csv, "%s/runs/%s/full/results.csv", dir, c->task);
    CHECK_MSG(resume_csv_rows(csv) == 4, "%s: resumed results.csv has %d rows", c->task, resume_csv_rows(csv));
    CHECK_MSG(resume_same_file(full_csv, csv), "%s: results.csv differs:\n  %s\n  %s", c->task, full_csv, csv);
    printf("%s: resumed run bit-identical to the uninterrupted one (%.0f s)\n", c->task, resume_now() - t0);
}

int main(void) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("three 4-epoch trainings per task take minutes under sanitizers; the Release run covers it");
    char dir[512];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    char env[600];
    snprintf(env, sizeof env, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", env, 1);
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (!resume_plugin_has_hooks(cases[i].task)) {
            printf("%s: skipped: plugins/%s/plugin.c has no training hooks (.hooks) yet\n", cases[i].task,
                   cases[i].task);
            continue;
        }
        run_case(dir, &cases[i]);
        ran++;
    }
    if (ran == 0) return test_skip("no task plugin with training hooks");
    return test_result("test_resume_exact");
}
