/* A dead rank: rank 1 of a two-rank run is SIGKILLed in its
 * second epoch; the run ends non-zero within dist_timeout + 10 s and rank
 * 0 names the collective it waited in and the rank that did not arrive.
 * (The re-launch tells mpirun not to kill the other ranks when one dies,
 * so rank 0 reaches its deadline and reports, then ends the job.) */
#include <mpi.h>

#include "ddp_util.h"
#include "resume_util.h"

#define TIMEOUT 5

int main(void) {
    if (getenv("YOLO_SANITIZED")) return test_skip("a two-rank training takes minutes under sanitizers");
    char dir[512], path[700], tag[64], args[1024], csv[1200];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    snprintf(path, sizeof path, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", path, 1);
    snprintf(tag, sizeof tag, "name=fault%d", (int)getpid());
    snprintf(args, sizeof args,
             "detect train data=shapes imgsz=64 batch=16 epochs=50 workers=1 threads=1 world=2 dist_timeout=%d %s",
             TIMEOUT, tag);
    pid_t pid = resume_spawn(dir, args, "log.txt");
    snprintf(csv, sizeof csv, "%s/runs/detect/fault%d/results.csv", dir, (int)getpid());
    int rc = -1000;
    double t0 = resume_now();
    while (!resume_ended(pid, &rc) && resume_csv_rows(csv) < 1 && resume_now() - t0 < 300) resume_sleep_ms(20);
    CHECK_MSG(rc == -1000, "the run ended (exit %d) before a rank could be killed (see %s/log.txt)", rc, dir);
    if (rc != -1000) return test_result("test_ddp_fault");
    resume_sleep_ms(500); /* into epoch 2 */
    pid_t victim = -1;
    CHECK_MSG(ddp_pids(tag, 1, &victim, 1) == 1, "no rank-1 process found");
    if (victim <= 0) {
        kill(pid, SIGTERM);
        resume_wait(pid);
        return test_result("test_ddp_fault");
    }
    kill(victim, SIGKILL);
    double killed = resume_now();
    while (!resume_ended(pid, &rc) && resume_now() - killed < TIMEOUT + 30) resume_sleep_ms(20);
    double took = resume_now() - killed;
    if (rc == -1000) {
        kill(pid, SIGKILL);
        rc = resume_wait(pid);
    }
    printf("rank 1 (pid %d) SIGKILLed: the run exited %d after %.1f s\n", (int)victim, rc, took);
    CHECK_MSG(rc != 0 && took <= TIMEOUT + 10, "exit %d after %.1f s (dist_timeout=%d)", rc, took, TIMEOUT);
#ifndef OMPI_MAJOR_VERSION
    /* MPICH's hydra ends the whole job as soon as a rank dies: no hang, but no message from rank 0 */
    return test_result("test_ddp_fault");
#endif
    CHECK_MSG(resume_file_mentions(dir, "log.txt", "did not arrive") &&
                  resume_file_mentions(dir, "log.txt", "on rank 0 of 2 timed out") &&
                  (resume_file_mentions(dir, "log.txt", ": rank 1 (last seen at") ||
                   resume_file_mentions(dir, "log.txt", ": rank 1 (arrived, then stopped answering)")),
              "rank 0's message naming the collective and rank 1 is missing (see %s/log.txt)", dir);
    return test_result("test_ddp_fault");
}
