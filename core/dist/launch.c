/* Re-launching under mpirun and the per-rank device (launch.h). */
#include "dist/launch.h"

#include "backend/backend.h"

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "vulkan:0,1" -> kind "vulkan", entries "0","1"; returns the count (1 for a plain device). */
static int device_entries(const char *device, char *kind, size_t kind_size, const char **list) {
    const char *colon = strchr(device, ':');
    const char *entries = colon ? colon + 1 : device;
    if (!strchr(entries, ',')) return 1;
    if (colon) snprintf(kind, kind_size, "%.*s", (int)(colon - device), device);
    else snprintf(kind, kind_size, "vulkan");
    *list = entries;
    int n = 1;
    for (const char *p = entries; *p; p++) n += *p == ',';
    return n;
}

yolo_status yolo_dist_check_device(const char *device) {
    char kind[32] = "";
    const char *list = NULL;
    if (!device || device_entries(device, kind, sizeof kind, &list) == 1) return yolo_backend_check_device(device);
    /* a list: one rank per entry, each a Vulkan device's index */
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        char one[64];
        snprintf(one, sizeof one, "%s:%.*s", kind, (int)(len < 40 ? len : 40), p);
        if (strcmp(kind, "vulkan") != 0 || len == 0 || len >= 40 || yolo_backend_check_device(one) != YOLO_OK) {
            yolo_error_clear();
            return yolo_error(YOLO_ERR_ARG, "device=%s: '%.*s' is no GPU index; a list starts one DDP rank per GPU: "
                              "device=0,1 or vulkan:0,1 (for N ranks on the CPU: device=cpu world=N)", device,
                              (int)(len < 64 ? len : 64), p);
        }
        p += len;
        if (!*p) return YOLO_OK;
    }
}

int yolo_dist_world_of(int world, const char *device) {
    char kind[32];
    const char *list = NULL;
    int devices = device && *device ? device_entries(device, kind, sizeof kind, &list) : 1;
    return world > 1 ? world : devices;
}

yolo_status yolo_dist_requested_world(const yolo_config *cfg, int *world) {
    yolo_config_value w = {0}, dev = {0};
    yolo_status st = yolo_config_get(cfg, "world", &w);
    if (!st) st = yolo_config_get(cfg, "device", &dev);
    if (st) return st;
    int from_world = w.kind == YOLO_VALUE_INT ? (int)w.i : 1;
    char kind[32];
    const char *list = NULL;
    int devices = dev.kind == YOLO_VALUE_STRING && dev.s ? device_entries(dev.s, kind, sizeof kind, &list) : 1;
    *world = from_world > 1 ? from_world : devices;
    if (devices > 1 && from_world > 1 && from_world != devices)
        return yolo_error(YOLO_ERR_CONFIG, "world=%d (%s) but device=%s (%s) names %d devices: give one rank per device",
                          from_world, yolo_config_source(cfg, "world"), dev.s, yolo_config_source(cfg, "device"),
                          devices);
    return YOLO_OK;
}

yolo_status yolo_dist_rank_device(const char *device, int local_rank, int local_world, char *out, size_t size) {
    char kind[32];
    const char *list = NULL;
    int n = device ? device_entries(device, kind, sizeof kind, &list) : 1;
    if (n == 1) {
        snprintf(out, size, "%s", device ? device : "");
        return YOLO_OK;
    }
    if (local_world > n)
        return yolo_error(YOLO_ERR_CONFIG, "device=%s: %d ranks on this machine but %d devices listed", device,
                          local_world, n);
    const char *p = list;
    for (int i = 0; i < local_rank; i++) p = strchr(p, ',') + 1;
    size_t len = strcspn(p, ",");
    snprintf(out, size, "%s:%.*s", kind, (int)len, p);
    return YOLO_OK;
}

/* Rank 0's recorded exit code, else the first recorded, else 0; its
 * reason (the rank's last error line) into why. */
static int recorded_exit_code(const char *path, int np, char *why, size_t why_size) {
    FILE *f = fopen(path, "r");
    char line[2048];
    int code = 0, from = -1;
    while (f && fgets(line, sizeof line, f)) {
        int rank, c, at = 0;
        if (sscanf(line, "%d %d %n", &rank, &c, &at) < 2 || c == 0 || (code && (from == 0 || rank != 0))) continue;
        code = c;
        from = rank;
        line[strcspn(line, "\n")] = '\0';
        snprintf(why, why_size, "rank %d of %d: %s", rank, np, at ? line + at : "(no reason recorded)");
    }
    if (f) fclose(f);
    return code;
}

static pid_t launcher_pid;
static void forward_term(int sig) {
    if (launcher_pid > 0) kill(launcher_pid, sig);
}

int yolo_dist_relaunch(int argc, char **argv, int np, char *why, size_t why_size) {
    if (why_size) why[0] = '\0';
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) snprintf(exe, sizeof exe, "%s", argv[0]);
    else exe[len] = '\0';
    char np_text[16], grace[32];
    snprintf(np_text, sizeof np_text, "%d", np);
    /* after mpirun's SIGTERM (Ctrl-C, or the job ending) ranks get 3 s to stop at a batch and save last.ckpt;
     * mpirun waits this twice while it ends a job, so it stays short */
    snprintf(grace, sizeof grace, "3");
    char **args = calloc((size_t)argc + 16, sizeof *args);
    if (!args) {
        yolo_error(YOLO_ERR_NOMEM, "out of memory");
        return -1;
    }
    int k = 0;
    /* the launcher of the MPI this library was built with (another MPI's may be first in PATH) */
    const char *launcher = access(YOLO_MPIEXEC, X_OK) == 0 ? YOLO_MPIEXEC : "mpiexec";
#ifdef OMPI_MAJOR_VERSION
    args[k++] = (char *)launcher;
    if (geteuid() == 0) args[k++] = "--allow-run-as-root";
    args[k++] = "--oversubscribe";
    args[k++] = "--bind-to";
    args[k++] = "none";
    /* a rank that dies must not make mpirun kill the others at once: they
     * reach their deadline, report the missing rank and MPI_Abort */
    args[k++] = "--mca";
    args[k++] = "orte_abort_on_non_zero_status";
    args[k++] = "0";
    args[k++] = "--mca";
    args[k++] = "odls_base_sigkill_timeout";
    args[k++] = grace;
    args[k++] = "-np";
#else
    args[k++] = (char *)launcher;
    args[k++] = "-n";
#endif
    args[k++] = np_text;
    args[k++] = exe;
    for (int i = 1; i < argc; i++) args[k++] = argv[i];
    /* the ranks record failing exit codes here (mpirun does not pass them on without aborting the others) */
    char status_path[] = "/tmp/yolo-dist-status-XXXXXX";
    int status_fd = mkstemp(status_path);
    if (status_fd < 0) {
        yolo_error(YOLO_ERR_IO, "cannot create a status file in /tmp: %s", strerror(errno));
        free(args);
        return -1;
    }
    close(status_fd);
    setenv(YOLO_DIST_STATUS_ENV, status_path, 1);
    fprintf(stderr, "yolo: launching %d ranks:", np);
    for (int i = 0; i < k; i++) fprintf(stderr, " %s", args[i]);
    fprintf(stderr, "\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        yolo_error(YOLO_ERR_DIST, "cannot fork to run %s: %s", args[0], strerror(errno));
        free(args);
        unlink(status_path);
        return -1;
    }
    if (pid == 0) {
        execvp(args[0], args);
        fprintf(stderr, "yolo: cannot run %s (%s): install Open MPI (openmpi-bin) or MPICH, or start the ranks "
                        "yourself with mpirun -np %d\n", args[0], strerror(errno), np);
        _exit(127);
    }
    free(args);
    /* Ctrl-C reaches the ranks directly (same process group); SIGTERM is passed on */
    launcher_pid = pid;
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_term}, old_int, old_term;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGTERM, &fwd, &old_term);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    launcher_pid = 0;
    unsetenv(YOLO_DIST_STATUS_ENV);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    int recorded = recorded_exit_code(status_path, np, why, why_size);
    unlink(status_path);
    if (!recorded && code)
        snprintf(why, why_size, "%s ended with exit code %d and no rank recorded a reason (see the output above)",
                 launcher, code);
    return recorded ? recorded : code;
}

void yolo_dist_record_exit(int rank, int code, const char *why) {
    const char *path = getenv(YOLO_DIST_STATUS_ENV);
    if (!path || !*path || code == 0) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%d %d ", rank, code);
    for (const char *p = why ? why : ""; *p; p++) fputc(*p == '\n' ? ' ' : *p, f); /* one line per rank */
    fputc('\n', f);
    fclose(f);
}
