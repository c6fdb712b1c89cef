/* Exact resume: a 4-epoch run on `shapes`, SIGKILLed during
 * epoch 3 and resumed from its last.ckpt, ends bit-identical to the
 * uninterrupted 4-epoch run: model, EMA and optimizer tensors, the step
 * and update counters, and results.csv. Same device (cpu), same threads,
 * deterministic.
 *
 * The task is a parameter: every task in `cases` whose plugin has
 * training hooks (plugins/<task>/plugin.c sets `.hooks`) is run; the
 * others are reported as skipped. To keep the test short the data is cut
 * from `shapes` (64 images, 8 batches an epoch), and the tasks' runs go
 * side by side. */
#include "resume_util.h"

typedef struct task_case {
    const char *task;
    const char *label; /* names its runs (runs/<task>/<label>-full, -killed) and logs */
    const char *data;  /* folder under the test dir (made below) */
    const char *args;
} task_case;

static const task_case cases[] = {
    {"detect", "detect", "det/data.yaml", "imgsz=64 batch=8"},
    {"classify", "classify", "cls", "imgsz=32 batch=8"},
    {"segment", "segment", "det/data.yaml", "imgsz=64 batch=8"},
    /* YOLO26: its loss weights follow the epoch, and its one-to-one branch trains beside the other; with
     * Ultralytics 8.4's MuSGD (two momentum buffers per matrix) */
    {"detect", "yolo26", "det/data.yaml", "imgsz=64 batch=8 model=yolo26n.yaml optimizer=MuSGD"},
};
#define N_CASES (int)(sizeof cases / sizeof *cases)

#define COMMON "epochs=4 workers=0 device=cpu threads=2 deterministic=true seed=0"

typedef struct run {
    const task_case *c;
    bool active;
    pid_t full, killed, resumed;
    int full_rc, killed_rc, resumed_rc; /* -1000: running */
    int stage;                          /* 0 training, 1 killed (resuming), 2 done */
    char csv[1200], last[1200], tmp[1200];
    double t0;
} run;

static void start(const char *dir, run *r) {
    char args[2048], log[64];
    r->t0 = resume_now();
    snprintf(args, sizeof args, "%s train data=%s/%s %s " COMMON " name=%s-full", r->c->task, dir, r->c->data,
             r->c->args, r->c->label);
    snprintf(log, sizeof log, "%s-full.txt", r->c->label);
    r->full = resume_spawn(dir, args, log);
    snprintf(args, sizeof args, "%s train data=%s/%s %s " COMMON " name=%s-killed", r->c->task, dir, r->c->data,
             r->c->args, r->c->label);
    snprintf(log, sizeof log, "%s-killed.txt", r->c->label);
    r->killed = resume_spawn(dir, args, log);
    r->full_rc = r->killed_rc = r->resumed_rc = -1000;
    snprintf(r->csv, sizeof r->csv, "%s/runs/%s/%s-killed/results.csv", dir, r->c->task, r->c->label);
    snprintf(r->last, sizeof r->last, "%s/runs/%s/%s-killed/weights/last.ckpt", dir, r->c->task, r->c->label);
    snprintf(r->tmp, sizeof r->tmp, "%s/runs/%s/%s-killed/weights/last.ckpt.tmp", dir, r->c->task, r->c->label);
    CHECK(r->full > 0 && r->killed > 0);
}

/* One look at a run; true when it needs nothing more. */
static bool step(const char *dir, run *r) {
    if (r->full_rc == -1000) resume_ended(r->full, &r->full_rc);
    if (r->stage == 0) {
        if (resume_ended(r->killed, &r->killed_rc)) {
            CHECK_MSG(false, "%s: the run ended (exit %d) before it could be killed (see %s/%s-killed.txt)",
                      r->c->label, r->killed_rc, dir, r->c->label);
            r->stage = 2;
        } else if (resume_csv_rows(r->csv) >= 2 && !resume_exists(r->tmp) &&
                   resume_mtime(r->last) >= resume_mtime(r->csv)) {
            /* epoch 2's results row and last.ckpt are written: kill it inside epoch 3 */
            resume_sleep_ms(300);
            kill(r->killed, SIGKILL);
            r->killed_rc = resume_wait(r->killed);
            CHECK_MSG(r->killed_rc == 128 + SIGKILL, "%s: killed run: status %d", r->c->label, r->killed_rc);
            long long batch = 0, epoch = resume_ckpt_epoch(r->last, &batch);
            printf("%s: SIGKILLed with last.ckpt at epoch %lld (%d results rows)\n", r->c->label, epoch + 1,
                   resume_csv_rows(r->csv));
            CHECK_MSG(epoch == 1 || epoch == 2, "%s: last.ckpt of the killed run: epoch %lld", r->c->label, epoch);
            char args[1024], log[64];
            snprintf(args, sizeof args, "%s train resume model=runs/%s/%s-killed/weights/last.ckpt", r->c->task,
                     r->c->task, r->c->label);
            snprintf(log, sizeof log, "%s-resumed.txt", r->c->label);
            r->resumed = resume_spawn(dir, args, log);
            CHECK(r->resumed > 0);
            r->stage = r->resumed > 0 ? 1 : 2;
        }
    } else if (r->stage == 1 && resume_ended(r->resumed, &r->resumed_rc)) {
        r->stage = 2;
    }
    return r->stage == 2 && r->full_rc != -1000;
}

static void check(const char *dir, const run *r) {
    const char *task = r->c->label;
    CHECK_MSG(r->full_rc == 0, "%s: uninterrupted run exited %d (see %s/%s-full.txt)", task, r->full_rc, dir, task);
    CHECK_MSG(r->resumed_rc == 0, "%s: resume exited %d (see %s/%s-resumed.txt)", task, r->resumed_rc, dir, task);
    if (r->full_rc != 0 || r->resumed_rc != 0) return;
    char log[64], full[1200], full_csv[1200];
    snprintf(log, sizeof log, "%s-resumed.txt", task);
    CHECK(resume_file_mentions(dir, log, "Resuming training from"));
    snprintf(full, sizeof full, "%s/runs/%s/%s-full/weights/last.ckpt", dir, r->c->task, task);
    snprintf(full_csv, sizeof full_csv, "%s/runs/%s/%s-full/results.csv", dir, r->c->task, task);
    int diff = resume_compare_ckpts(full, r->last);
    CHECK_MSG(diff == 0, "%s: resumed last.ckpt differs from the uninterrupted run's in %d tensors/counters", task,
              diff);
    CHECK_MSG(resume_csv_rows(r->csv) == 4, "%s: resumed results.csv has %d rows", task, resume_csv_rows(r->csv));
    CHECK_MSG(resume_same_results(full_csv, r->csv), "%s: results.csv differs:\n  %s\n  %s", task, full_csv, r->csv);
    if (diff == 0) printf("%s: the resumed run is bit-identical to the uninterrupted one\n", task);
}

int main(void) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("three 4-epoch trainings per task take minutes under sanitizers; the Release run covers it");
    char dir[512], path[700];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    snprintf(path, sizeof path, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", path, 1);
    snprintf(path, sizeof path, "%s/det", dir);
    CHECK(resume_shapes_subset(path, 64, 16, 0));
    snprintf(path, sizeof path, "%s/cls", dir);
    CHECK(resume_shapes_classify_subset(path, 22, 6));
    if (test_failures) return test_result("test_resume_exact");

    run runs[N_CASES];
    memset(runs, 0, sizeof runs);
    int active = 0;
    for (int i = 0; i < N_CASES; i++) {
        runs[i].c = &cases[i];
        if (!resume_plugin_has_hooks(cases[i].task)) {
            printf("%s: skipped: plugins/%s/plugin.c has no training hooks (.hooks) yet\n", cases[i].task,
                   cases[i].task);
            continue;
        }
        runs[i].active = true;
        start(dir, &runs[i]);
        active++;
    }
    if (active == 0) return test_skip("no task plugin with training hooks");
    double t0 = resume_now();
    for (bool done = false; !done;) {
        done = true;
        for (int i = 0; i < N_CASES; i++)
            if (runs[i].active && !step(dir, &runs[i])) done = false;
        if (!done) resume_sleep_ms(20);
    }
    for (int i = 0; i < N_CASES; i++)
        if (runs[i].active) check(dir, &runs[i]);
    printf("%d task(s) in %.0f s\n", active, resume_now() - t0);
    return test_result("test_resume_exact");
}
