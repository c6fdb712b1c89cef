/* Atomic checkpoint writes: 50 child processes overwrite last.ckpt and are
 * SIGKILLed by the writer's test hook (YOLO_CKPT_CRASH_AT) at random write
 * points; after each, the file at the final path loads and holds exactly
 * the old or the new contents (the new ones once the rename happened). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test_ckpt_util.h"
#include "test_util.h"

#define RUNS 50
#define SCALE 300 /* first tensor 4800x3x3x3: blobs of ~0.5 MB */

#ifndef YOLO_TEST_HOOKS
int main(void) {
    return test_skip("the checkpoint writer's crash hook is compiled out (configure with -DYOLO_TEST_HOOKS=ON)");
}
#else

static int load_version(const char *path, int *version, ckpt_sample *expect_old, ckpt_sample *expect_new) {
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read(path, &ck) != YOLO_OK) {
        fprintf(stderr, "%s does not load: %s\n", path, yolo_last_error());
        return -1;
    }
    int64_t epoch = yolo_ckpt_get_info(ck)->epoch;
    int ok = 0;
    if (epoch == *version) ok = ckpt_same_as_sample(ck, expect_old);
    else if (epoch == *version + 1) ok = ckpt_same_as_sample(ck, expect_new), *version += ok;
    yolo_ckpt_free(ck);
    if (!ok) fprintf(stderr, "%s holds epoch %lld with unexpected contents\n", path, (long long)epoch);
    return ok ? 0 : -1;
}

int main(void) {
    char dir[512], path[600], tmp[700];
    if (ckpt_tmpdir(dir, sizeof dir) != 0) return test_skip("cannot create a temporary folder");
    snprintf(path, sizeof path, "%s/last.ckpt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unsetenv("YOLO_CKPT_CRASH_AT");

    int version = 0;
    ckpt_sample cur;
    CHECK(ckpt_sample_build(&cur, version, SCALE) == 0);
    CHECK(yolo_ckpt_write(path, &cur.contents) == YOLO_OK);
    int points = yolo_ckpt_write_points();
    printf("a write passes %d points\n", points);
    CHECK(points > 20);

    uint64_t rng = 0x5eed;
    int crashed = 0, completed = 0, advanced = 0;
    for (int run = 0; run < RUNS && test_failures == 0; run++) {
        /* Some fixed points (first, around the rename, past the end), the rest random. */
        int k = run == 0 ? 1 : run == 1 ? points - 2 : run == 2 ? points - 1 : run == 3 ? points + 1
                                                      : 1 + (int)(ckpt_sample_rng(&rng) % (uint64_t)(points + 1));
        ckpt_sample next;
        CHECK(ckpt_sample_build(&next, version + 1, SCALE) == 0);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            char v[16];
            snprintf(v, sizeof v, "%d", k);
            setenv("YOLO_CKPT_CRASH_AT", v, 1);
            _exit(yolo_ckpt_write(path, &next.contents) == YOLO_OK ? 0 : 3);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        bool done = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        CHECK_MSG(killed == (k <= points) && done == (k > points), "run %d, point %d of %d: status 0x%x", run, k, points,
                  status);
        crashed += killed;
        completed += done;
        int before = version;
        CHECK_MSG(load_version(path, &version, &cur, &next) == 0, "run %d, crash at point %d of %d", run, k, points);
        /* Old contents until the rename (point points-2 is just before it), new ones after. */
        bool expect_new = k >= points - 1;
        CHECK_MSG((version == before + 1) == expect_new, "run %d, point %d of %d: %s contents", run, k, points,
                  version == before ? "old" : "new");
        if (version != before) {
            advanced++;
            ckpt_sample_free(&cur);
            CHECK(ckpt_sample_build(&cur, version, SCALE) == 0); /* (a sample points into itself: no struct copy) */
        }
        ckpt_sample_free(&next);
        /* A leftover partial temp file is refused cleanly, never loaded. */
        if (killed && k < points - 4 && access(tmp, F_OK) == 0) {
            yolo_ckpt *ck = NULL;
            yolo_status st = yolo_ckpt_read(tmp, &ck);
            CHECK_MSG(st == YOLO_ERR_FORMAT && test_error_mentions(tmp), "partial %s: status %d: %s", tmp, (int)st,
                      yolo_last_error());
            yolo_ckpt_free(ck);
        }
    }
    printf("%d runs: %d killed mid-write, %d completed, %d left the new file\n", RUNS, crashed, completed, advanced);
    ckpt_sample_free(&cur);
    ckpt_rmdir(dir);
    return test_result("test_ckpt_atomic");
}
#endif
