/* amp=True on Vulkan through the CLI: loss-scaler state in last.ckpt and
 * exact resume. A tiny detect model trains 3 epochs (2 batches each) on 8
 * images cut from `shapes` with device=vulkan amp=True, an inf forced into
 * the loss gradients of batch 2 (YOLO_FORCE_INF_STEP=1, test hooks):
 *   - the run says how many steps it skipped (N >= 1: the forced one, and
 *     any whose scaled gradients overflowed fp16 on their own, as the
 *     first steps at 2^16 may, with PyTorch's GradScaler too); its
 *     last.ckpt has resume.amp_scaler {scale 2^16 / 2^N, growth_tracker <=
 *     6 - N} and 6 - N optimizer steps and EMA updates for 6 batches;
 *   - a second run, SIGKILLed after epoch 1 and resumed from its last.ckpt,
 *     ends bit-identical to the first (model, EMA, optimizer tensors,
 *     counters) with the same scaler state;
 *   - an fp32 run's last.ckpt (the format before loss scaling) reads with
 *     no amp_scaler record: a resume starts at the initial scale.
 * Skips where no Vulkan device has fp16 kernels. Not named test_vulkan_*:
 * the validation layer would slow the three runs (test_vulkan_amp_ops runs
 * the kernels under it). */
#include <math.h>

#include "resume_util.h"
#include "train/checkpoint.h"
#include "train_test_util.h"

#define COMMON                                                                                                         \
    "detect train model=det.yaml data=det/data.yaml imgsz=64 batch=4 nbs=4 epochs=3 workers=0 warmup_epochs=0 "      \
    "close_mosaic=0 deterministic=true seed=0 plots=False"

static const char *det_model = "nc: 3\nbackbone:\n  - [-1, 1, Conv, [8, 3, 2]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                               "  - [-1, 1, C2f, [16, True]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                               "  - [-1, 1, Conv, [16, 3, 2]]\nhead:\n  - [[2, 3, 4], 1, Detect, [nc]]\n";

/* resume.amp_scaler of a last.ckpt (has = false when absent). */
static bool scaler_of(const char *path, yolo_resume_info *ri) {
    yolo_ckpt *ck = NULL;
    bool ok = yolo_ckpt_read(path, &ck) == YOLO_OK && yolo_checkpoint_resume_info(ck, ri) == YOLO_OK;
    CHECK_MSG(ok, "%s: %s", path, yolo_last_error());
    yolo_ckpt_free(ck);
    return ok;
}

static int run_sync(const char *dir, const char *args, const char *log) {
    pid_t pid = resume_spawn(dir, args, log);
    return pid > 0 ? resume_wait(pid) : -1;
}

int main(void) {
    int probe = test_vulkan_amp_probe();
    if (probe) return probe;
#ifndef YOLO_TEST_HOOKS
    return test_skip("built without YOLO_TEST_HOOKS: the forced inf needs YOLO_FORCE_INF_STEP");
#else
    if (getenv("YOLO_SANITIZED")) return test_skip("three Vulkan trainings under sanitizers: the Release run covers it");
    char dir[512], path[1200], full[1200], killed[1200], csv[1200], tmp[1200];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    resume_fmt(path, sizeof path, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", path, 1);
    resume_fmt(path, sizeof path, "%s/det", dir);
    CHECK(resume_shapes_subset(path, 8, 4, 0));
    test_write_text(dir, "det.yaml", det_model);
    if (test_failures) return test_result("test_amp_vulkan_resume");

    /* the format before loss scaling: an fp32 run (CPU, fast) */
    int rc = run_sync(dir, COMMON " device=cpu threads=2 epochs=1 name=fp32", "fp32.txt");
    CHECK_MSG(rc == 0, "fp32 run exited %d (see %s/fp32.txt)", rc, dir);
    yolo_resume_info ri;
    resume_fmt(path, sizeof path, "%s/runs/detect/fp32/weights/last.ckpt", dir);
    if (rc == 0 && scaler_of(path, &ri)) CHECK_MSG(!ri.has_scaler, "an fp32 last.ckpt holds an amp_scaler record");

    setenv("YOLO_FORCE_INF_STEP", "1", 1);
    pid_t a = resume_spawn(dir, COMMON " device=vulkan amp=True name=full", "full.txt");
    pid_t b = resume_spawn(dir, COMMON " device=vulkan amp=True name=killed", "killed.txt");
    CHECK(a > 0 && b > 0);
    resume_fmt(csv, sizeof csv, "%s/runs/detect/killed/results.csv", dir);
    resume_fmt(killed, sizeof killed, "%s/runs/detect/killed/weights/last.ckpt", dir);
    resume_fmt(tmp, sizeof tmp, "%s/runs/detect/killed/weights/last.ckpt.tmp", dir);
    int b_rc = -1000;
    while (b > 0 && !resume_ended(b, &b_rc)) {
        if (resume_csv_rows(csv) >= 1 && !resume_exists(tmp) && resume_mtime(killed) >= resume_mtime(csv)) {
            kill(b, SIGKILL);
            b_rc = resume_wait(b);
            break;
        }
        resume_sleep_ms(10);
    }
    long long batch = 0, epoch = resume_ckpt_epoch(killed, &batch);
    printf("killed run: status %d, last.ckpt after epoch %lld\n", b_rc, epoch + 1);
    CHECK_MSG(b_rc == 128 + SIGKILL && (epoch == 0 || epoch == 1),
              "the second run ended (status %d, epoch %lld) before it could be killed after epoch 1", b_rc, epoch);
    rc = run_sync(dir, "detect train resume model=runs/detect/killed/weights/last.ckpt", "resumed.txt");
    CHECK_MSG(rc == 0, "resume exited %d (see %s/resumed.txt)", rc, dir);
    int a_rc = a > 0 ? resume_wait(a) : -1;
    CHECK_MSG(a_rc == 0, "uninterrupted run exited %d (see %s/full.txt)", a_rc, dir);
    unsetenv("YOLO_FORCE_INF_STEP");
    if (test_failures) return test_result("test_amp_vulkan_resume");

    double scale = 0;
    long long skipped = -1;
    resume_fmt(path, sizeof path, "%s/full.txt", dir);
    FILE *log = fopen(path, "r");
    char line[1024];
    while (log && fgets(line, sizeof line, log))
        if (sscanf(line, "AMP: loss scale %lf, %lld optimizer steps skipped", &scale, &skipped) == 2) break;
    if (log) fclose(log);
    printf("uninterrupted run: loss scale %g, %lld steps skipped\n", scale, skipped);
    CHECK_MSG(skipped >= 1 && skipped < 6 && scale == ldexp(1.0, 16 - (int)skipped),
              "%s: no or a wrong 'AMP: loss scale' line (scale %g, %lld skipped)", path, scale, skipped);
    resume_fmt(full, sizeof full, "%s/runs/detect/full/weights/last.ckpt", dir);
    yolo_resume_info rf, rk;
    if (scaler_of(full, &rf) && scaler_of(killed, &rk)) {
        printf("last.ckpt: amp_scaler scale %g growth_tracker %lld, %lld optimizer steps, %lld EMA updates; resumed: "
               "scale %g growth_tracker %lld\n", rf.scaler_scale, (long long)rf.scaler_growth_tracker,
               (long long)rf.optimizer_steps, (long long)rf.ema_updates, rk.scaler_scale,
               (long long)rk.scaler_growth_tracker);
        CHECK(rf.has_scaler && rf.scaler_scale == scale && rf.scaler_growth_tracker <= 6 - skipped);
        CHECK(rf.optimizer_steps == 6 - skipped && rf.ema_updates == 6 - skipped);
        CHECK(rk.has_scaler && rk.scaler_scale == rf.scaler_scale &&
              rk.scaler_growth_tracker == rf.scaler_growth_tracker);
    }
    int diff = resume_compare_ckpts(full, killed);
    CHECK_MSG(diff == 0, "the resumed last.ckpt differs from the uninterrupted run's in %d tensors/counters", diff);
    if (diff == 0) printf("the resumed amp run is bit-identical to the uninterrupted one\n");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_result("test_amp_vulkan_resume");
#endif
}
